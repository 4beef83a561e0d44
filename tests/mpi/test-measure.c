/* test-measure: the measurement engine's bookkeeping at any rank count
 * (not its speed).  A fake call adds a known time, so what the engine
 * computes from it is exact: the calls it makes, the reductions and barriers
 * it issues (counted by the interposer it is linked with), the reps a budget
 * chooses, the slowest rank's parts and the counts' rank maxima, window
 * timing's records, and its errors. */
#include "config.h"
#include "runner/measure.h"
#include "fault.h"
#include "check.h"

#include <math.h>
#include <string.h>

typedef struct fake {
    int rank, size;
    int64_t calls;
    int64_t fail_at;          /* > 0: this call returns BB_ERR_VALIDATION */
    int64_t blocks_ended;
    int64_t samples_seen;     /* the samples' indices, 1-based, as decimal digits */
    int id;                   /* logged at each block end, when log is set */
    double busy_s;            /* real wall time per call; 0: 1 us */
    int64_t overrun_at;       /* > 0: on the last rank this call lasts overrun_s
                                 and adds 1 s to part 0 (a call to leave out) */
    double overrun_s;
    int *log, *nlog;
} fake_t;

/* Rank r's call "takes" (r + 1) us in part 0 and (size - r) x 0.1 us in part
 * 1: the whole is slowest on the last rank, the part largest on rank 0, so a
 * part reduced on its own would not be the slowest rank's. */
static bb_status_t fake_call(void *arg, double *parts, double *counts)
{
    fake_t *f = arg;
    f->calls++;
    if (f->fail_at > 0 && f->calls == f->fail_at)
        return BB_ERR_VALIDATION;
    /* Real wall time, at least 1 us, for the engine to size blocks by. */
    int outlier = f->overrun_at > 0 && f->calls == f->overrun_at && f->rank == f->size - 1;
    double t0 = bb_time_now(), busy = outlier ? f->overrun_s : f->busy_s > 0.0 ? f->busy_s : 1e-6;
    while (bb_time_now() - t0 < busy) {
    }
    parts[0] += (f->rank + 1) * 1e-6 + (outlier ? 1.0 : 0.0);
    parts[1] += (f->size - f->rank) * 1e-7;
    counts[0] += 2.0;
    return BB_OK;
}

static bb_status_t fake_block_end(void *arg, int64_t calls, int64_t sample)
{
    fake_t *f = arg;
    (void)calls;
    /* The samples' blocks come last, in order. */
    if (sample >= 0)
        f->samples_seen = f->samples_seen * 10 + sample + 1;
    f->blocks_ended++;
    if (f->log != NULL && *f->nlog < 64)
        f->log[(*f->nlog)++] = f->id;
    return BB_OK;
}

/* Warm-up until steady: a call whose time depends on the block it is in.
 * Blocks before the warm-up blocks: the first call and 2 warm-up calls
 * (reps given, no probe). */
enum { BLOCKS_BEFORE_WARM = 3 };

typedef struct settling {
    fake_t f;
    const double *factor;     /* per warm-up block; 1 after */
    int nfactor;
    int alternate;            /* 1: 1 and 2 us in turn, never steady */
} settling_t;

static bb_status_t settling_call(void *arg, double *parts, double *counts)
{
    settling_t *g = arg;
    int64_t b = g->f.blocks_ended - BLOCKS_BEFORE_WARM;
    double factor = g->alternate ? (double)(1 + g->f.blocks_ended % 2)
                    : b >= 0 && b < g->nfactor ? g->factor[b] : 1.0;
    g->f.calls++;
    parts[0] += factor * 1e-6;
    counts[0] += 1.0;
    return BB_OK;
}

static void steady_case(const char *what, const double *factor, int nfactor, int alternate,
                        int64_t want_blocks, int want_steady)
{
    settling_t g = { .factor = factor, .nfactor = nfactor, .alternate = alternate };
    bb_measure_settings_t s = { .samples = 3, .reps = 4, .warmup = 2, .steady_max = 6 };
    bb_measure_variant_t v = { .nparts = 1, .ncounts = 1, .call = settling_call,
                               .block_end = fake_block_end, .arg = &g };
    bb_measure_result_t r;
    CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v, &r) == BB_OK);
    CHECK_MSG(r.warm_blocks == want_blocks && r.steady == want_steady,
              "%s: %lld warm-up blocks, steady %d; want %lld, %d", what,
              (long long)r.warm_blocks, r.steady, (long long)want_blocks, want_steady);
    /* Warm-up blocks of half a sample (2 calls), counted in calls. */
    CHECK_MSG(r.calls == 1 + 2 + 2 * want_blocks + 3 * 4 && g.f.calls == r.calls,
              "%s: %lld calls, %lld made", what, (long long)r.calls, (long long)g.f.calls);
    CHECK(g.f.blocks_ended == BLOCKS_BEFORE_WARM + want_blocks + 3);
    bb_measure_result_clear(&r);
}

typedef struct counted {
    long allreduce, barrier, bcast;
} counted_t;

static counted_t counted_now(void)
{
    return (counted_t){ bbfault_calls("MPI_Allreduce"), bbfault_calls("MPI_Barrier"),
                        bbfault_calls("MPI_Bcast") };
}

static void run_case(const char *what, bb_timing_t timing, int64_t reps, double budget_s,
                     int size)
{
    fake_t f = { .rank = 0, .size = size };
    MPI_Comm_rank(MPI_COMM_WORLD, &f.rank);
    bb_measure_settings_t s = { .samples = 3, .reps = reps, .budget_s = budget_s,
                                .warmup = 2, .timing = timing };
    bb_measure_variant_t v = { .nparts = 2, .ncounts = 1, .call = fake_call,
                               .block_end = fake_block_end, .arg = &f };
    bb_measure_result_t r;
    counted_t before = counted_now();
    bb_status_t st = bb_measure_run(MPI_COMM_WORLD, &s, &v, &r);
    counted_t after = counted_now();
    CHECK_MSG(st == BB_OK, "%s: status %s", what, bb_status_string(st));
    if (st != BB_OK)
        return;
    /* The budget is spent on whole calls: reps from the probe's wall time. */
    CHECK((reps > 0) == (r.probe_wall_s == 0.0));
    CHECK(r.warm_wall_s > 0.0 && bbfault_same_everywhere((int64_t)(r.warm_wall_s * 1e12)));
    int64_t want_reps = reps;
    if (reps == 0) {
        /* A windowed call lasts its window (the first, before retakes
         * doubled it): the budget holds windows. */
        double each = timing == BB_TIMING_WINDOW ? r.window_s / pow(2.0, (double)r.window_retries)
                                                 : r.probe_wall_s;
        double fit = budget_s / each;
        want_reps = fit < BB_MEASURE_REPS_CAP ? (int64_t)fit : BB_MEASURE_REPS_CAP;
        if (want_reps < 1)
            want_reps = 1;
    }
    int64_t probe = reps > 0 ? 0 : 1;
    int64_t blocks = 1 + 2 + probe + 3;
    CHECK_MSG(r.reps == want_reps, "%s: reps %lld, want %lld", what, (long long)r.reps,
              (long long)want_reps);
    CHECK(r.reps_from == (reps > 0 ? BB_REPS_GIVEN : BB_REPS_BUDGET));
    /* Window timing may take a sample block again (its retakes counted). */
    int64_t retakes = r.window_retries;
    CHECK(timing == BB_TIMING_WINDOW || retakes == 0);
    CHECK(retakes <= 3 * BB_WINDOW_RETRIES);
    CHECK_MSG(r.calls == 1 + 2 + probe + (3 + retakes) * want_reps && f.calls == r.calls,
              "%s: %lld calls recorded, %lld made", what, (long long)r.calls,
              (long long)f.calls);
    CHECK_MSG(f.blocks_ended == blocks + retakes, "%s: block_end %lld times", what,
              (long long)f.blocks_ended);
    CHECK_MSG(f.samples_seen == 123, "%s: the sample blocks were %lld", what,
              (long long)f.samples_seen);
    /* Every part from the rank with the slowest whole (the last), exactly,
     * though rank 0's part 1 is larger; counts are rank maxima. */
    for (int k = 0; k < 3; k++) {
        CHECK(fabs(bb_measure_part(&r, 0)[k] - size * 1e-6) < 1e-12);
        CHECK_MSG(fabs(bb_measure_part(&r, 1)[k] - 1e-7) < 1e-12, "%s: part 1 %g, want the "
                  "slowest rank's 1e-7", what, bb_measure_part(&r, 1)[k]);
        CHECK(bb_measure_part(&r, 1)[k] <= bb_measure_part(&r, 0)[k]);
        CHECK(r.critical[k] == size - 1);
        CHECK(fabs(bb_measure_count(&r, 0)[k] - 2.0) < 1e-12);
    }
    CHECK(fabs(bb_measure_part_at_median(&r, 1) - 1e-7) < 1e-12);
    CHECK(bb_measure_part_at_median(&r, 0) == bb_stats_median(bb_measure_part(&r, 0), 3));
    CHECK(fabs(r.first[0] - size * 1e-6) < 1e-12 && fabs(r.first[1] - 1e-7) < 1e-12);
    /* Per block a MAX reduction (counts, wall), a MAXLOC (the slowest rank)
     * and that rank's broadcast of its parts; window timing adds the clock
     * exchange's reduction and the missed-window sum. */
    /* Window timing: the clock exchange's and the end's flag sums, and per
     * sample block (retakes too) the flags' MAX. */
    long want_allreduce = 2 * (long)(blocks + retakes)
                        + (timing == BB_TIMING_WINDOW ? 2 + 3 + (long)retakes : 0);
    CHECK_MSG(after.allreduce - before.allreduce == want_allreduce,
              "%s: %ld MPI_Allreduce, want %ld", what, after.allreduce - before.allreduce,
              want_allreduce);
    long want_barrier = timing == BB_TIMING_BARRIER ? (long)r.calls
                      : timing == BB_TIMING_WINDOW ? (long)(1 + 2 + probe) : 0;
    CHECK_MSG(after.barrier - before.barrier == want_barrier,
              "%s: %ld MPI_Barrier, want %ld", what, after.barrier - before.barrier,
              want_barrier);
    long want_bcast = (long)(blocks + retakes)
                      + (timing == BB_TIMING_WINDOW ? 3 + (long)retakes : 0);
    CHECK_MSG(after.bcast - before.bcast == want_bcast, "%s: %ld MPI_Bcast, want %ld", what,
              after.bcast - before.bcast, want_bcast);
    if (timing == BB_TIMING_WINDOW) {
        /* W from the slowest warm call's wall time: 2 x that + 10 us, doubled
         * by each retake (under load: late calls). */
        CHECK_MSG(fabs(r.window_s - ldexp(2.0 * r.warm_wall_s + 1e-5, (int)retakes)) < 1e-15,
                  "%s: window %g after %lld retakes", what, r.window_s, (long long)retakes);
        CHECK(r.windows_missed >= 0 && r.windows_missed <= (3 + retakes) * r.reps * size);
        CHECK(r.calls_overrun >= 0);
        for (int k = 0; k < 3; k++)
            CHECK(r.excluded[k] >= 0 && r.excluded[k] <= r.reps);
        CHECK(isfinite(r.offset_spread_s) && r.offset_spread_s >= 0.0);
        CHECK(isfinite(r.offset_error_s) && r.offset_error_s >= 0.0);
        CHECK(bbfault_same_everywhere(r.windows_missed));
    } else {
        CHECK(r.window_s == 0.0 && r.windows_missed == 0);
    }
    CHECK(bbfault_same_everywhere(r.reps));
    bb_measure_result_clear(&r);
    CHECK(r.parts == NULL && r.first == NULL);
}

/* A call whose whole alternates between 1 us and 100 us, call by call: an
 * interval of the median that never narrows. */
static bb_status_t wild_call(void *arg, double *parts, double *counts)
{
    fake_t *f = arg;
    f->calls++;
    parts[0] += f->calls % 2 ? 1e-6 : 1e-4;
    parts[1] += 1e-7;
    counts[0] += 1.0;
    return BB_OK;
}

/* The stopping rule (--until-ci): a steady call stops at the first round
 * with an interval (6 at 0.95), one that never settles at max_samples,
 * and every rank takes as many rounds, even with the last rank 2 ms a call
 * slower than the others. */
static void until_case(const char *what, bb_measure_call_fn call, int slow_last,
                       int64_t want_samples, int want_met)
{
    fake_t f = { .rank = 0 };
    MPI_Comm_rank(MPI_COMM_WORLD, &f.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &f.size);
    if (slow_last && f.rank == f.size - 1)
        f.busy_s = 2e-3;
    fake_t g = f;  /* the second row's own call count */
    bb_measure_settings_t s = { .samples = 3, .reps = 1, .warmup = 1, .until_rel = 0.05,
                                .max_samples = 12, .confidence = 0.95 };
    bb_measure_variant_t v[2] = {
        { .nparts = 2, .ncounts = 1, .call = call, .arg = &f },
        { .nparts = 2, .ncounts = 1, .call = fake_call, .arg = &g } };
    bb_measure_result_t r[2];
    CHECK_MSG(bb_measure_run_set(MPI_COMM_WORLD, &s, v, 2, BB_SHARE_FIRST, r) == BB_OK,
              "%s: run", what);
    CHECK_MSG(r[0].samples == want_samples && r[1].samples == want_samples
              && r[0].until_met == want_met && r[1].until_met == want_met,
              "%s: %lld and %lld samples, met %d; want %lld, %d", what,
              (long long)r[0].samples, (long long)r[1].samples, r[0].until_met,
              (long long)want_samples, want_met);
    CHECK_MSG(bbfault_same_everywhere(r[0].samples), "%s: samples differ between ranks",
              what);
    /* Packed to the rounds taken: part 1 of sample k right after part 0. */
    const double *p1 = bb_measure_part(&r[1], 1);
    CHECK_MSG(p1[0] > 0.0 && p1[r[1].samples - 1] > 0.0 && bb_measure_part(&r[1], 0)[0] > 0.0,
              "%s: part 1 not packed", what);
    bb_measure_result_clear(&r[0]);
    bb_measure_result_clear(&r[1]);
    /* A bad rule is refused before any call. */
    s.max_samples = 2;
    CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v[1], &r[0]) == BB_ERR_ARG);
}

/* The canary's marks and modes, on canaries as a run could take them: a
 * switch to the slow mode inside round 2 and back inside round 5. */
static void canary_case(void)
{
    double canary[9] = { 0.18e-6, 0.18e-6, 0.18e-6, 0.67e-6, 0.68e-6, 0.66e-6, 0.18e-6,
                         0.18e-6, 0.17e-6 };
    bb_measure_result_t r = { .samples = 8, .canary = canary };
    unsigned char drop[8];
    int mode[8];
    double level[BB_CANARY_MODES_MAX];
    CHECK(bb_measure_canary_switches(&r, drop) == 2);
    CHECK(drop[2] && drop[5] && !drop[0] && !drop[3] && !drop[7]);
    CHECK(bb_measure_canary_modes(&r, drop, mode, level) == 2);
    CHECK_MSG(mode[0] == 0 && mode[1] == 0 && mode[2] == -1 && mode[3] == 1 && mode[4] == 1
              && mode[5] == -1 && mode[6] == 0 && mode[7] == 0,
              "modes %d %d %d %d %d %d %d %d", mode[0], mode[1], mode[2], mode[3], mode[4],
              mode[5], mode[6], mode[7]);
    CHECK(level[0] > 0.17e-6 && level[0] < 0.19e-6 && level[1] > 0.66e-6 && level[1] < 0.68e-6);
    /* A paired figure keeps the fast mode's 4 rounds (the most), not the
     * marked rounds nor the slow mode's 2. */
    unsigned char keep[8];
    CHECK(bb_measure_round_mask(canary, 8, keep) == 2);
    CHECK_MSG(!keep[0] && !keep[1] && keep[2] && keep[3] && keep[4] && keep[5] && !keep[6]
              && !keep[7], "mask %d%d%d%d%d%d%d%d", keep[0], keep[1], keep[2], keep[3],
              keep[4], keep[5], keep[6], keep[7]);
    /* No canaries: nothing marked, one mode. */
    for (int k = 0; k < 9; k++)
        canary[k] = (double)NAN;
    CHECK(bb_measure_canary_switches(&r, drop) == 0);
    CHECK(bb_measure_canary_modes(&r, drop, mode, NULL) == 1 && mode[0] == 0 && mode[7] == 0);
    CHECK(bb_measure_round_mask(NULL, 8, keep) == 1 && !keep[0] && !keep[7]);
}

int main(int argc, char **argv)
{
    int size, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    check_rank = rank;

    canary_case();
    until_case("--until-ci 0.05, steady calls", fake_call, 0, 6, 1);
    until_case("--until-ci 0.05, the last rank 2 ms slower", fake_call, 1, 6, 1);
    until_case("--until-ci 0.05, 1 and 100 us in turn", wild_call, 0, 12, 0);
    run_case("block, --reps 5", BB_TIMING_BLOCK, 5, 0.0, size);
    run_case("block, budget 1 ms", BB_TIMING_BLOCK, 0, 1e-3, size);
    run_case("block, budget at the cap", BB_TIMING_BLOCK, 0, 3600.0, size);
    run_case("barrier, --reps 4", BB_TIMING_BARRIER, 4, 0.0, size);
    run_case("window, --reps 4", BB_TIMING_WINDOW, 4, 0.0, size);
    run_case("window, budget 0.2 ms", BB_TIMING_WINDOW, 0, 2e-4, size);

    /* Warm-up until steady: two blocks that agree end it, slower blocks
     * before them prolong it, and the cap ends one that never settles. */
    {
        static const double flat[] = { 1.0 }, settling[] = { 4.0, 2.0, 1.0 },
                            near[] = { 1.04 };
        steady_case("steady at once", flat, 1, 0, 2, 1);
        steady_case("4, 2, 1, 1 us", settling, 3, 0, 4, 1);
        steady_case("1.04 then 1 us: within 5%", near, 1, 0, 2, 1);
        steady_case("1 and 2 us in turn", NULL, 0, 1, 6, 0);
    }
    /* --rank-stat mean: every part the mean over ranks, from the same blocks
     * (rank r's whole (r + 1) us and part (size - r) x 0.1 us: means (size + 1)
     * / 2 us and (size + 1) / 2 x 0.1 us), counts still rank maxima; per block
     * one MAX (counts, wall) and one SUM, no broadcast. */
    {
        fake_t f = { .rank = rank, .size = size };
        bb_measure_settings_t s = { .samples = 3, .reps = 2, .warmup = 1,
                                    .rank_stat = BB_RANK_STAT_MEAN };
        bb_measure_variant_t v = { .nparts = 2, .ncounts = 1, .call = fake_call, .arg = &f };
        bb_measure_result_t r;
        counted_t before = counted_now();
        CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v, &r) == BB_OK);
        counted_t after = counted_now();
        double whole = 0.5 * (size + 1) * 1e-6, part = 0.5 * (size + 1) * 1e-7;
        for (int k = 0; k < 3; k++) {
            CHECK_MSG(fabs(bb_measure_part(&r, 0)[k] - whole) < 1e-12, "mean: whole %g, want %g",
                      bb_measure_part(&r, 0)[k], whole);
            CHECK(fabs(bb_measure_part(&r, 1)[k] - part) < 1e-12);
            CHECK(r.critical[k] == -1);
            CHECK(fabs(bb_measure_count(&r, 0)[k] - 2.0) < 1e-12);
        }
        CHECK(fabs(r.first[0] - whole) < 1e-12 && fabs(r.first[1] - part) < 1e-12);
        long blocks = 1 + 1 + 3;
        CHECK_MSG(after.allreduce - before.allreduce == 2 * blocks && after.bcast == before.bcast,
                  "mean: %ld MPI_Allreduce, %ld MPI_Bcast; want %ld, 0",
                  after.allreduce - before.allreduce, after.bcast - before.bcast, 2 * blocks);
        bb_measure_result_clear(&r);
        CHECK(strcmp(bb_rank_stat_name(BB_RANK_STAT_MEAN), "mean") == 0
              && strcmp(bb_rank_stat_name(BB_RANK_STAT_MAX), "max") == 0);
    }
    /* Window timing leaves out a call that overruns its window (the last
     * rank's 2nd call of sample 1, 5 ms in 2 ms windows, adding 1 s) and the
     * two late calls after it: 3 of 4 is more than BB_WINDOW_DROP_MAX, so
     * the block is taken again in 4 ms windows.  Every sample stays exact. */
    {
        fake_t f = { .rank = rank, .size = size, .overrun_at = 1 + 4 + 2, .overrun_s = 5e-3 };
        bb_measure_settings_t s = { .samples = 3, .reps = 4, .warmup = 0,
                                    .timing = BB_TIMING_WINDOW, .window_s = 2e-3 };
        bb_measure_variant_t v = { .nparts = 2, .ncounts = 1, .call = fake_call, .arg = &f };
        bb_measure_result_t r;
        CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v, &r) == BB_OK);
        for (int k = 0; k < 3; k++)
            CHECK_MSG(fabs(bb_measure_part(&r, 0)[k] - size * 1e-6) < 1e-12,
                      "window: sample %d is %g s: the overrun call was kept", k,
                      bb_measure_part(&r, 0)[k]);
        CHECK_MSG(r.window_retries >= 1 && r.window_s >= 4e-3, "window: %lld retakes, W %g",
                  (long long)r.window_retries, r.window_s);
        CHECK(r.calls_overrun >= 1 && r.windows_missed >= 2);
        CHECK(r.calls == 1 + (3 + r.window_retries) * 4 && f.calls == r.calls);
        CHECK(bbfault_same_everywhere(r.window_retries)
              && bbfault_same_everywhere(r.excluded[1]));
        bb_measure_result_clear(&r);
    }
    /* A given window is used as given. */
    {
        fake_t f = { .rank = rank, .size = size };
        bb_measure_settings_t s = { .samples = 3, .reps = 2, .warmup = 0,
                                    .timing = BB_TIMING_WINDOW, .window_s = 1e-3 };
        bb_measure_variant_t v = { .nparts = 2, .ncounts = 1, .call = fake_call, .arg = &f };
        bb_measure_result_t r;
        CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v, &r) == BB_OK);
        CHECK(r.window_s == ldexp(1e-3, (int)r.window_retries));  /* doubled by retakes */
        bb_measure_result_clear(&r);
    }
    /* A call's error stops the measurement on every rank and is returned. */
    {
        fake_t f = { .rank = rank, .size = size, .fail_at = 4 };
        bb_measure_settings_t s = { .samples = 3, .reps = 5, .warmup = 2 };
        bb_measure_variant_t v = { .nparts = 2, .ncounts = 1, .call = fake_call, .arg = &f };
        bb_measure_result_t r = {0};
        CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v, &r) == BB_ERR_VALIDATION);
        CHECK(f.calls == 4 && r.parts == NULL);
    }
    /* Bad settings: BB_ERR_ARG, and no MPI call. */
    {
        fake_t f = { .rank = rank, .size = size };
        bb_measure_variant_t v = { .nparts = 1, .call = fake_call, .arg = &f };
        bb_measure_settings_t bad[] = {
            { .samples = 0, .reps = 1 }, { .samples = 3, .reps = -1 },
            { .samples = 3, .reps = 0, .budget_s = 0.0 },
            { .samples = 3, .reps = 1, .warmup = -1 },
            { .samples = 3, .reps = 1, .timing = (bb_timing_t)7 },
            { .samples = 3, .reps = 1, .window_s = -1.0 },
            { .samples = 3, .reps = 1, .steady_max = -1 },
            { .samples = 3, .reps = 1, .rank_stat = (bb_rank_stat_t)2 },
        };
        counted_t before = counted_now();
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            bb_measure_result_t r;
            CHECK_MSG(bb_measure_run(MPI_COMM_WORLD, &bad[i], &v, &r) == BB_ERR_ARG,
                      "bad settings %zu accepted", i);
        }
        bb_measure_variant_t no_parts = { .nparts = 0, .call = fake_call, .arg = &f };
        bb_measure_result_t r;
        CHECK(bb_measure_run(MPI_COMM_WORLD, &bad[0], &no_parts, &r) == BB_ERR_ARG);
        counted_t after = counted_now();
        CHECK(after.allreduce == before.allreduce && f.calls == 0);
    }
    /* One stalled call does not choose reps: the probe (call 4, after the
     * first and two warm-up calls) stalls 20 ms on the last rank; reps are
     * fitted to the fastest of the warm-up calls and the probe, about 1 us
     * (was: 1e-3 / 20e-3, one call per sample). */
    {
        fake_t f = { .rank = rank, .size = size, .overrun_at = 4, .overrun_s = 20e-3 };
        bb_measure_settings_t s = { .samples = 3, .reps = 0, .budget_s = 1e-3, .warmup = 2 };
        bb_measure_variant_t v = { .nparts = 2, .ncounts = 1, .call = fake_call, .arg = &f };
        bb_measure_result_t r;
        CHECK(bb_measure_run(MPI_COMM_WORLD, &s, &v, &r) == BB_OK);
        CHECK_MSG(r.reps >= 20 && r.probe_wall_s < 1e-3,
                  "a stalled probe: reps %lld, chosen by %g s", (long long)r.reps,
                  r.probe_wall_s);
        bb_measure_result_clear(&r);
    }
    /* A set: samples interleaved (each block_end sees the variants in turn),
     * reps shared from the first variant, each result its own. */
    {
        int order[64], norder = 0;
        fake_t f[2] = { { .rank = rank, .size = size, .id = 0, .log = order, .nlog = &norder },
                        { .rank = rank, .size = size, .id = 1, .log = order, .nlog = &norder } };
        bb_measure_settings_t s = { .samples = 3, .reps = 0, .budget_s = 1e-3, .warmup = 1 };
        bb_measure_variant_t v[2];
        for (int i = 0; i < 2; i++)
            v[i] = (bb_measure_variant_t){ .nparts = 2, .ncounts = 1, .call = fake_call,
                                           .block_end = fake_block_end, .arg = &f[i] };
        bb_measure_result_t r[2];
        CHECK(bb_measure_run_set(MPI_COMM_WORLD, &s, v, 2, BB_SHARE_FIRST, r) == BB_OK);
        int64_t reps = r[0].reps;
        CHECK(reps >= 1 && r[1].reps == reps && r[0].probe_wall_s > 0.0);
        CHECK(r[1].reps_from == BB_REPS_BUDGET);
        /* Variant 0: first, warm-up, probe; variant 1: no probe of its own;
         * each sample block after two untimed calls of its own (primers,
         * ended as a block of their own, told -1). */
        CHECK(r[0].calls == 9 + 3 * reps && r[1].calls == 8 + 3 * reps);
        CHECK(r[0].primers == 6 && r[1].primers == 6);
        CHECK(f[0].blocks_ended == 9 && f[1].blocks_ended == 8);
        for (int k = 0; k < 3; k++) {
            CHECK(fabs(r[1].local_parts[k] - (rank + 1) * 1e-6) < 1e-12);
            CHECK(fabs(bb_measure_part(&r[1], 0)[k] - size * 1e-6) < 1e-12);
        }
        /* 3 + 2 preparation blocks, then the samples alternate 0, 1, 0, 1, 0,
         * 1, each primed by its own variant. */
        static const int want[] = { 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1 };
        CHECK(norder == 17 && memcmp(order, want, sizeof want) == 0);
        bb_measure_result_clear(&r[0]);
        bb_measure_result_clear(&r[1]);
        CHECK(bb_measure_run_set(MPI_COMM_WORLD, &s, v, 0, BB_SHARE_FIRST, r) == BB_ERR_ARG);
        CHECK(bb_measure_run_set(MPI_COMM_WORLD, &s, v, 2, (bb_share_t)4, r) == BB_ERR_ARG);
    }
    /* BB_SHARE_MIN: each variant probes, and the fewest reps (the slower
     * variant's fit to the budget) serve both. */
    {
        fake_t f[2] = { { .rank = rank, .size = size },
                        { .rank = rank, .size = size, .busy_s = 20e-6 } };
        bb_measure_settings_t s = { .samples = 3, .reps = 0, .budget_s = 1e-3, .warmup = 1 };
        bb_measure_variant_t v[2];
        for (int i = 0; i < 2; i++)
            v[i] = (bb_measure_variant_t){ .nparts = 2, .ncounts = 1, .call = fake_call,
                                           .arg = &f[i] };
        bb_measure_result_t r[2];
        CHECK(bb_measure_run_set(MPI_COMM_WORLD, &s, v, 2, BB_SHARE_MIN, r) == BB_OK);
        int64_t fit[2];
        for (int i = 0; i < 2; i++) {
            double x = s.budget_s / r[i].probe_wall_s;
            fit[i] = x < BB_MEASURE_REPS_CAP ? (int64_t)x : BB_MEASURE_REPS_CAP;
            fit[i] = fit[i] < 1 ? 1 : fit[i];
        }
        int64_t want = fit[0] < fit[1] ? fit[0] : fit[1];
        CHECK(r[0].probe_wall_s > 0.0 && r[1].probe_wall_s > 0.0);
        CHECK_MSG(r[0].reps == want && r[1].reps == want, "min: reps %lld and %lld, want %lld",
                  (long long)r[0].reps, (long long)r[1].reps, (long long)want);
        CHECK(r[0].calls == 9 + 3 * want && r[1].calls == 9 + 3 * want);
        CHECK(f[0].calls == r[0].calls && f[1].calls == r[1].calls);
        bb_measure_result_clear(&r[0]);
        bb_measure_result_clear(&r[1]);
    }
    /* BB_SHARE_FIT: rows within 10x of each other share the fewest reps
     * (the dearer row's sample fits the budget); a row 1000x cheaper than
     * the other keeps its own, at least 10x as many (under BB_SHARE_FIRST
     * or MIN it had two calls a sample).  Wall-time spins of 2 and 4 ms,
     * and 2 us; each fit is the fastest of the warm-up calls and the probe,
     * so one preempted call cannot move the verdict. */
    {
        const double busy[3][2] = { { 2e-3, 4e-3 }, { 2e-6, 4e-3 }, { 4e-3, 2e-6 } };
        for (int c = 0; c < 3; c++) {
            fake_t f[2] = { { .rank = rank, .size = size, .busy_s = busy[c][0] },
                            { .rank = rank, .size = size, .busy_s = busy[c][1] } };
            bb_measure_settings_t s = { .samples = 3, .reps = 0, .budget_s = 10e-3,
                                        .warmup = 2 };
            bb_measure_variant_t v[2];
            for (int i = 0; i < 2; i++)
                v[i] = (bb_measure_variant_t){ .nparts = 2, .ncounts = 1, .call = fake_call,
                                               .arg = &f[i] };
            bb_measure_result_t r[2];
            CHECK(bb_measure_run_set(MPI_COMM_WORLD, &s, v, 2, BB_SHARE_FIT, r) == BB_OK);
            int dear = busy[c][0] > busy[c][1] ? 0 : 1;
            if (c == 0)
                CHECK_MSG(r[0].reps == r[1].reps && r[1].reps >= 1 && r[1].reps <= 2,
                          "fit, 2 and 4 ms: reps %lld and %lld, want one figure <= 2",
                          (long long)r[0].reps, (long long)r[1].reps);
            else
                CHECK_MSG(r[dear].reps <= 2 && r[1 - dear].reps >= 10 * r[dear].reps,
                          "fit, 2 us beside 4 ms: reps %lld and %lld, want the cheap "
                          "row's own", (long long)r[1 - dear].reps, (long long)r[dear].reps);
            CHECK(r[0].probe_wall_s > 0.0 && r[1].probe_wall_s > 0.0);
            bb_measure_result_clear(&r[0]);
            bb_measure_result_clear(&r[1]);
        }
    }
    CHECK(strcmp(bb_timing_name(BB_TIMING_WINDOW), "window") == 0);

    int ok = bbfault_all_true(failed == 0) && !bbfault_all_true(passed == 0);
    printf("rank %d: test-measure: %d passed, %d failed\n", rank, passed, failed);
    MPI_Finalize();
    return ok ? 0 : 1;
}
