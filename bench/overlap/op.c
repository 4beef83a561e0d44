/* op.c: bbench-overlap's operation of each kind (op.h). */
#include "config.h"
#include "op.h"

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
        c->fx->nbytes = c->bytes;
        bb_status_t st = bb_transfer_phase_begin(c->phase, &c->fx->provider, &contract,
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
        bb_status_t st = bb_transfer_ticket_finish(&c->ticket, &c->fx->consumer,
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
