/* bbench-example.c: libbbench from a user's program.  One bounded sum phase
 * (every rank contributes four values) and one transfer ticket (the last
 * rank sends a short message to rank 0, which checks it), each bounded by
 * its contract.  Build it against an installed libbbench:
 *
 *   mpicc bbench-example.c $(pkg-config --cflags --libs bbench) -o example
 *   mpiexec -n 2 ./example
 *
 * Exit 0 when both phases published their result, 1 otherwise. */
#include <bbench.h>
#include <stdio.h>
#include <string.h>

#define EXAMPLE_COUNT 4
static const char example_text[] = "bounded hello";

/* Sum provider: this rank's contribution, rank + i. */
typedef struct example_sum {
    double values[EXAMPLE_COUNT];
} example_sum_t;

static int example_sum_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    example_sum_t *s = arg;
    *data_out = s->values;
    *len_out = EXAMPLE_COUNT;
    return 0;
}

/* Transfer provider (source rank) and consumer (destination rank). */
static int example_send_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    (void)arg;
    *data_out = example_text;
    *len_out = (int64_t)sizeof example_text;
    return 0;
}

static int example_receive(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    int *matched = arg;
    /* The consumer may refuse: a wrong payload becomes a refusal on every rank. */
    *matched = nbytes == (int64_t)sizeof example_text
               && memcmp(data, example_text, sizeof example_text) == 0;
    *value_out = NULL;
    return *matched ? 0 : 1;
}

static int example_sum_run(bb_world_t *world, int rank, int ranks)
{
    bb_sum_phase_t *phase = NULL;
    example_sum_t mine;
    for (int i = 0; i < EXAMPLE_COUNT; i++)
        mine.values[i] = rank + i;
    bb_sum_provider_t provider = { example_sum_prepare, NULL, &mine };
    bb_sum_contract_t contract = { 1, 0, EXAMPLE_COUNT, EXAMPLE_COUNT };
    double *sum = NULL;
    bb_sum_metrics_t m;
    bb_status_t st = bb_sum_phase_create(world, &phase);
    if (st != BB_OK)
        return st;
    st = bb_sum_phase_run(phase, &provider, &contract, &sum, &m);
    if (st == BB_OK && rank == 0) {
        /* sum over ranks of (r + i) = ranks*(ranks-1)/2 + ranks*i */
        int right = 1;
        for (int i = 0; i < EXAMPLE_COUNT; i++)
            right &= sum[i] == ranks * (ranks - 1) / 2.0 + ranks * i;
        printf("sum: %s, %d values, sum[%d] = %g, %.1f us\n", right ? "ok" : "WRONG",
               EXAMPLE_COUNT, EXAMPLE_COUNT - 1, sum[EXAMPLE_COUNT - 1], m.total_s * 1e6);
        if (!right)
            st = BB_ERR_VALIDATION;
    }
    bb_free(sum);
    if (st == BB_ERR_MPI || st == BB_ERR_POISONED)
        return st; /* a poisoned phase stays retained: the caller aborts */
    bb_sum_phase_destroy(phase);
    return st;
}

static int example_transfer_run(bb_world_t *world, int rank, int ranks)
{
    bb_transfer_phase_t *phase = NULL;
    bb_status_t st = bb_transfer_phase_create(world, &phase);
    if (st != BB_OK)
        return st;
    int matched = 0;
    bb_transfer_provider_t provider = { example_send_prepare, NULL, NULL };
    bb_transfer_consumer_t consumer = { example_receive, NULL, &matched };
    bb_transfer_contract_t contract = {
        .phase_id = 2, .epoch = 0, .source = ranks - 1, .destination = 0,
        .nbytes = (int64_t)sizeof example_text, .max_bytes = 64, .batches = 0
    };
    bb_transfer_ticket_t ticket;
    bb_transfer_metrics_t m;
    st = bb_transfer_phase_begin(phase, &provider, &contract, &ticket, &m);
    if (st == BB_OK) {
        /* Work of one's own would go here, with progress polls between. */
        int complete = 0;
        bb_transfer_ticket_progress(&ticket, &complete);
        st = bb_transfer_ticket_finish(&ticket, &consumer, BB_TRANSFER_LOCAL_OK, NULL, &m);
    }
    if (st == BB_OK && rank == 0)
        printf("transfer: ok, %lld bytes from rank %d, %s, %.1f us\n",
               (long long)contract.nbytes, ranks - 1, matched ? "payload checked" : "?",
               m.total_s * 1e6);
    if (st == BB_ERR_MPI || st == BB_ERR_POISONED)
        return st;
    bb_transfer_phase_close(phase);
    return st;
}

int main(int argc, char **argv)
{
    int provided = 0, rank = 0, ranks = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    bb_world_t *world = NULL;
    bb_status_t st = bb_world_bind(MPI_COMM_WORLD, &world);
    if (st == BB_OK)
        st = example_sum_run(world, rank, ranks);
    if (st == BB_OK)
        st = example_transfer_run(world, rank, ranks);
    if (st == BB_ERR_MPI || st == BB_ERR_POISONED) {
        fprintf(stderr, "bbench-example: %s\n", bb_status_string(st));
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    }
    if (rank == 0)
        printf("bbench-example: libbbench %s: %s\n", bb_version(), bb_status_string(st));
    bb_world_release(world);
    MPI_Finalize();
    return st == BB_OK ? 0 : 1;
}
