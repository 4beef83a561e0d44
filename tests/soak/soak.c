/* soak: many sum phases and transfer tickets on one pair of phase objects,
 * reporting RSS and tracked bytes at the start and at the end.
 *
 *   mpiexec -n 2 soak [SUM_PHASES [TICKETS]]     (defaults 100000 and 10000)
 *
 * Not part of make check (scripts/soak.sh runs it).  Exit 1 if any result is
 * wrong, tracked bytes differ between start and end, or RSS grew by more
 * than 4 MiB after the warm-up. */
#include "config.h"
#include "runner/runner.h"
#include "runtime/bench.h"  /* bb_rss_current_bytes */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SUM_COUNT = 64, TRANSFER_BYTES = 4096 };

typedef struct soak_state {
    double values[SUM_COUNT];
    unsigned char bytes[TRANSFER_BYTES];
    int64_t wrong;
} soak_state_t;

static int sum_prepare(void *arg, const double **data_out, int64_t *len_out)
{
    soak_state_t *s = arg;
    *data_out = s->values;
    *len_out = SUM_COUNT;
    return 0;
}

static int bytes_prepare(void *arg, const void **data_out, int64_t *len_out)
{
    soak_state_t *s = arg;
    *data_out = s->bytes;
    *len_out = TRANSFER_BYTES;
    return 0;
}

static int bytes_consume(void *arg, const void *data, int64_t nbytes, void **value_out)
{
    soak_state_t *s = arg;
    *value_out = NULL;
    if (nbytes != TRANSFER_BYTES || memcmp(data, s->bytes, TRANSFER_BYTES) != 0)
        s->wrong++;
    return 0;
}

static int no_compute(void *arg, int64_t index)
{
    (void)arg;
    (void)index;
    return 0;
}

static int64_t parse_count(const char *text, int64_t fallback)
{
    int64_t v = fallback;
    char err[128];
    if (text != NULL && bb_cli_parse_size(text, 1, INT32_MAX, &v, err, sizeof err) != BB_OK) {
        fprintf(stderr, "soak: %s\n", err);
        exit(BB_EXIT_USAGE);
    }
    return v;
}

/* Rank maxima of RSS and tracked bytes, printed by rank 0. */
static void report(MPI_Comm comm, int rank, const char *when, int64_t rss,
                   int64_t tracked_sum, int64_t tracked_transfer, int64_t out[3])
{
    int64_t local[3] = { rss, tracked_sum, tracked_transfer };
    MPI_Allreduce(local, out, 3, MPI_INT64_T, MPI_MAX, comm);
    if (rank == 0)
        printf("%-13s rss %lld bytes, tracked sum %lld bytes, tracked transfer %lld bytes "
               "(rank maxima)\n", when, (long long)out[0], (long long)out[1],
               (long long)out[2]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int64_t sums = parse_count(argc > 1 ? argv[1] : NULL, 100000);
    int64_t tickets = parse_count(argc > 2 ? argv[2] : NULL, 10000);
    bb_world_t *world;
    bb_sum_phase_t *sum;
    bb_transfer_phase_t *transfer;
    if (bb_world_bind(MPI_COMM_WORLD, &world) != BB_OK
        || bb_sum_phase_create(world, &sum) != BB_OK
        || bb_transfer_phase_create(world, &transfer) != BB_OK) {
        fprintf(stderr, "soak: set-up failed\n");
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    }
    MPI_Comm comm = bb_world_comm(world);
    int rank = bb_world_rank(world), ranks = bb_world_size(world);
    soak_state_t s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < SUM_COUNT; i++)
        s.values[i] = (double)(i + rank);
    for (int i = 0; i < TRANSFER_BYTES; i++)
        s.bytes[i] = (unsigned char)(i * 7 + 3);
    bb_sum_provider_t sp = { sum_prepare, NULL, &s };
    bb_sum_contract_t sc = { 1, 1, SUM_COUNT, SUM_COUNT };
    bb_transfer_provider_t tp = { bytes_prepare, NULL, &s };
    bb_transfer_consumer_t tc = { bytes_consume, NULL, &s };
    bb_transfer_compute_t tk = { no_compute, &s };
    bb_transfer_contract_t tcon = { 2, 1, 0, ranks - 1, TRANSFER_BYTES, TRANSFER_BYTES, 1 };
    /* Each loop is measured from the end of its first 1% (allocator and
     * MPI connection warm-up) to its end. */
    int64_t start[3] = { 0 }, end[3], tstart[3] = { 0 }, tend[3];
    int64_t warmup = sums / 100 > 0 ? sums / 100 : 1;
    int64_t twarmup = tickets / 100 > 0 ? tickets / 100 : 1;
    double t0 = bb_time_now();

    for (int64_t i = 0; i < sums; i++) {
        if (i == warmup)
            report(comm, rank, "start", bb_rss_current_bytes(), bb_sum_phase_tracked_live(sum),
                   bb_transfer_phase_tracked_live(transfer), start);
        double *r = NULL;
        bb_status_t st = bb_sum_phase_run(sum, &sp, &sc, &r, NULL);
        if (st != BB_OK) {
            fprintf(stderr, "soak: sum phase %lld: %s\n", (long long)i, bb_status_string(st));
            MPI_Abort(comm, BB_EXIT_FATAL);
        }
        for (int k = 0; k < SUM_COUNT; k++)
            if (r[k] != (double)ranks * k + (double)ranks * (ranks - 1) / 2.0)
                s.wrong++;
        bb_free(r);
    }
    report(comm, rank, "sums end", bb_rss_current_bytes(), bb_sum_phase_tracked_live(sum),
           bb_transfer_phase_tracked_live(transfer), end);
    for (int64_t i = 0; i < tickets; i++) {
        if (i == twarmup)
            report(comm, rank, "tickets start", bb_rss_current_bytes(),
                   bb_sum_phase_tracked_live(sum), bb_transfer_phase_tracked_live(transfer),
                   tstart);
        void *value = NULL;
        bb_status_t st = bb_transfer_phase_run(transfer, &tp, &tc, &tk, &tcon, &value, NULL);
        if (st != BB_OK) {
            fprintf(stderr, "soak: ticket %lld: %s\n", (long long)i, bb_status_string(st));
            MPI_Abort(comm, BB_EXIT_FATAL);
        }
    }
    report(comm, rank, "tickets end", bb_rss_current_bytes(), bb_sum_phase_tracked_live(sum),
           bb_transfer_phase_tracked_live(transfer), tend);
    int64_t wrong = 0;
    MPI_Allreduce(&s.wrong, &wrong, 1, MPI_INT64_T, MPI_MAX, comm);
    int bad = wrong != 0 || end[1] != start[1] || tend[2] != tstart[2]
              || end[0] - start[0] > 4 * 1024 * 1024 || tend[0] - tstart[0] > 4 * 1024 * 1024;
    if (rank == 0)
        printf("soak: %lld sum phases and %lld transfer tickets on %d ranks in %.1f s: "
               "rss %+lld bytes over the sums, %+lld over the tickets, %lld wrong results: "
               "%s\n", (long long)sums, (long long)tickets, ranks, bb_time_now() - t0,
               (long long)(end[0] - start[0]), (long long)(tend[0] - tstart[0]),
               (long long)wrong, bad ? "FAILED" : "ok");
    if (bb_transfer_phase_close(transfer) != BB_OK || bb_sum_phase_destroy(sum) != BB_OK)
        bad = 1;
    bb_world_release(world);
    MPI_Finalize();
    return bad ? BB_EXIT_FAILURE : BB_EXIT_OK;
}
