/* overlap-op.c: bbench-overlap's operation of each kind (overlap-op.h). */
#include "config.h"
#include "overlap-op.h"

static int bb_op_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    bb_overlap_op_t *c = arg;
    *data_out = c->send;
    *len_out = c->bytes;
    bb_run_lent(c->run);
    return 0;
}

static void bb_op_release(void *arg, const void *data)
{
    bb_overlap_op_t *c = arg;
    (void)data;
    bb_run_returned(c->run);
}

/* A cheap payload check (first, middle, last byte): a wrong transfer is a
 * failure, not a number; the full check belongs to bbench-transfer. */
static int bb_op_consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    bb_overlap_op_t *c = arg;
    const unsigned char *d = data;
    *value_out = NULL;
    if (nbytes > 0) {
        int64_t at[3] = { 0, nbytes / 2, nbytes - 1 };
        for (int i = 0; i < 3; i++)
            if (d[at[i]] != bb_payload_byte(0, at[i])) {
                c->wrong++;
                return 1;
            }
    }
    return 0;
}

bb_status_t bb_overlap_op_post(bb_overlap_op_t *c, int64_t declared)
{
    int rc = MPI_SUCCESS;
    c->req = MPI_REQUEST_NULL;
    switch (c->kind) {
    case BB_OVERLAP_TRANSFER: {
        bb_transfer_contract_t contract = {
            .phase_id = c->phase_id, .epoch = 1, .source = c->source,
            .destination = c->destination, .nbytes = c->bytes,
            .max_bytes = c->bytes, .batches = declared
        };
        bb_transfer_metrics_t m;
        bb_status_t st = bb_transfer_phase_begin(c->phase, &c->provider, &contract,
                                                 &c->ticket, &m);
        if (st == BB_REFUSED)
            c->refusal = m.refusal;
        else if (st != BB_OK)
            bb_run_fatal(c->run, "transfer begin: %s", bb_status_string(st));
        return st;
    }
    case BB_OVERLAP_ISEND:
        if (c->rank == c->source)
            rc = MPI_Isend(c->send, (int)c->bytes, MPI_BYTE, c->destination, 7,
                           c->comm, &c->req);
        else if (c->rank == c->destination)
            rc = MPI_Irecv(c->recv, (int)c->bytes, MPI_BYTE, c->source, 7, c->comm,
                           &c->req);
        break;
    case BB_OVERLAP_IALLREDUCE:
        rc = MPI_Iallreduce(c->send, c->recv, (int)(c->bytes / 8), MPI_DOUBLE, MPI_SUM,
                            c->comm, &c->req);
        break;
    }
    if (rc != MPI_SUCCESS)
        bb_run_fatal(c->run, "posting the %s failed",
                     c->kind == BB_OVERLAP_ISEND ? "MPI_Isend/MPI_Irecv" : "MPI_Iallreduce");
    return BB_OK;
}

int bb_overlap_op_poll(bb_overlap_op_t *c)
{
    int done = 0;
    if (c->kind == BB_OVERLAP_TRANSFER) {
        bb_status_t st = bb_transfer_ticket_progress(&c->ticket, &done);
        if (st != BB_OK)
            bb_run_fatal(c->run, "transfer progress: %s", bb_status_string(st));
        if (c->rank != c->source && c->rank != c->destination)
            done = 1;
        return done;
    }
    if (c->req == MPI_REQUEST_NULL)
        return 1;
    if (MPI_Test(&c->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(c->run, "MPI_Test failed");
    return done;
}

bb_status_t bb_overlap_op_finish(bb_overlap_op_t *c)
{
    if (c->kind == BB_OVERLAP_TRANSFER) {
        bb_transfer_metrics_t m;
        void *value = NULL;
        bb_status_t st = bb_transfer_ticket_finish(&c->ticket, &c->consumer,
                                                   BB_TRANSFER_LOCAL_OK, &value, &m);
        if (st == BB_REFUSED)
            c->refusal = m.refusal;
        else if (st != BB_OK)
            bb_run_fatal(c->run, "transfer finish: %s", bb_status_string(st));
        return st;
    }
    if (MPI_Wait(&c->req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        bb_run_fatal(c->run, "MPI_Wait failed");
    return BB_OK;
}

void bb_overlap_op_init(bb_overlap_op_t *op)
{
    op->provider = (bb_transfer_provider_t){ .prepare = bb_op_prepare, .release = bb_op_release,
                                             .arg = op };
    op->consumer = (bb_transfer_consumer_t){ .consume = bb_op_consume, .discard = NULL,
                                             .arg = op };
}
