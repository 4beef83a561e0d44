/* check-overlap-record FILE [ASYNC [SOME]]: reads a bbench-overlap record with
 * bb_record_read and checks that every point carries every quantity, with
 * the right unit, at least three samples for timings, values where they are
 * defined and null with a reason where they are not (no batches), the
 * iterations of the one kernel policy (the slowest rank's rate), and that
 * the run records its progress conditions.  A check counts as passed only
 * when none of its conditions failed.  ASYNC, when given, is the value
 * MPIR_CVAR_ASYNC_PROGRESS must have in the record ("unset": null); a
 * third argument lifts the check that all three kinds were measured.
 * Serial: MPI is not initialized (bb_record_read is local). */
#include "config.h"
#include "runner.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failed, passed;

static void fail(const char *where, const char *what)
{
    failed++;
    printf("FAIL %s: %s\n", where, what);
}

/* A check passes only when nothing failed since it began (failed was at):
 * a point passes only when every check of its own passed. */
static void count_pass(int at)
{
    if (failed == at)
        passed++;
}

static const cJSON *get(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int is_num(const cJSON *o) { return cJSON_IsNumber(o) && isfinite(o->valuedouble); }

static const char *const timings[] = {
    "overlap.t_comm", "overlap.t_compute", "overlap.t_immediate", "overlap.t_polled",
    "overlap.t_polled.compute", "overlap.t_polled.progress", "overlap.t_unpolled",
    "overlap.t_unpolled.compute", NULL
};
/* Figures that need compute; overlap.osu does not (it divides by t_comm). */
static const char *const figures_need_compute[] = {
    "overlap", "overlap.unpolled", "overlap.imb", "overlap.compute_slowdown", NULL
};
static const char *const figures_always[] = {
    "overlap.osu", "overlap.imb_code", "overlap.speedup", NULL
};

static void check_timing(const cJSON *q, const char *where)
{
    int at = failed;
    const cJSON *unit = get(q, "unit"), *samples = get(q, "samples");
    const cJSON *range = get(q, "range");
    if (!cJSON_IsString(unit) || strcmp(unit->valuestring, "s") != 0)
        fail(where, "unit is not s");
    if (!is_num(get(q, "value")) || get(q, "value")->valuedouble < 0.0)
        fail(where, "value is not a nonnegative number");
    if (!cJSON_IsArray(samples) || cJSON_GetArraySize(samples) < 3)
        fail(where, "fewer than 3 samples");
    if (!is_num(get(q, "median")) || !cJSON_IsArray(range)
        || cJSON_GetArraySize(range) != 2)
        fail(where, "median or range missing");
    else if (cJSON_GetArrayItem(range, 0)->valuedouble > get(q, "median")->valuedouble
             || get(q, "median")->valuedouble > cJSON_GetArrayItem(range, 1)->valuedouble)
        fail(where, "median outside its range");
    count_pass(at);
}

static void check_figure(const cJSON *q, const char *where, int defined)
{
    int at = failed;
    const cJSON *unit = get(q, "unit"), *value = get(q, "value");
    if (!cJSON_IsString(unit) || strcmp(unit->valuestring, "ratio") != 0)
        fail(where, "unit is not ratio");
    if (defined) {
        if (!is_num(value) || value->valuedouble < 0.0)
            fail(where, "value is not a nonnegative number");
        if (!cJSON_IsArray(get(q, "samples")) || cJSON_GetArraySize(get(q, "samples")) < 3)
            fail(where, "fewer than 3 samples");
    } else {
        const cJSON *reason = get(q, "reason");
        if (!cJSON_IsNull(value))
            fail(where, "value is not null although undefined");
        if (!cJSON_IsString(reason) || reason->valuestring[0] == '\0')
            fail(where, "null without a reason");
    }
    count_pass(at);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: check-overlap-record FILE [ASYNC]\n");
        return 2;
    }
    char err[512], where[256];
    cJSON *doc = NULL;
    if (bb_record_read(argv[1], &doc, err, sizeof err) != BB_OK) {
        printf("FAIL bb_record_read: %s\n", err);
        return 1;
    }
    const cJSON *bench = get(doc, "benchmark");
    if (!cJSON_IsString(bench) || strcmp(bench->valuestring, "overlap") != 0)
        fail("benchmark", "not \"overlap\"");

    /* Progress conditions. */
    const cJSON *pc = get(doc, "progress");
    if (!cJSON_IsObject(pc)) {
        fail("progress", "missing");
    } else {
        const cJSON *a = get(pc, "MPIR_CVAR_ASYNC_PROGRESS");
        if (!cJSON_IsObject(a))
            fail("progress.MPIR_CVAR_ASYNC_PROGRESS", "missing");
        else if (argc > 2 && strcmp(argv[2], "unset") == 0) {
            if (!cJSON_IsNull(get(a, "value")) || !cJSON_IsString(get(a, "reason")))
                fail("progress.MPIR_CVAR_ASYNC_PROGRESS", "not null with a reason");
        } else if (argc > 2) {
            if (!cJSON_IsString(get(a, "value"))
                || strcmp(get(a, "value")->valuestring, argv[2]) != 0)
                fail("progress.MPIR_CVAR_ASYNC_PROGRESS", "not the launch value");
        }
        if (!cJSON_IsString(get(pc, "thread_level_provided")))
            fail("progress.thread_level_provided", "missing");
        if (!is_num(get(pc, "ranks_per_core")) && !cJSON_IsNull(get(pc, "ranks_per_core")))
            fail("progress.ranks_per_core", "missing");
    }
    const cJSON *kernel = get(get(doc, "run"), "compute_kernel");
    const cJSON *slowest = get(kernel, "iterations_per_s_slowest_rank");
    if (!cJSON_IsObject(kernel) || !is_num(get(kernel, "iterations_per_s_rank0"))
        || !is_num(slowest))
        fail("run.compute_kernel", "missing");
    else if (!cJSON_IsString(get(kernel, "kernel"))
             || strcmp(get(kernel, "kernel")->valuestring,
                       "bb_compute_run: " BB_KERNEL_DESCRIPTION) != 0)
        fail("run.compute_kernel.kernel", "not the one kernel description");
    if (!cJSON_IsString(get(get(doc, "formulas"), "overlap")))
        fail("formulas.overlap", "missing");

    const cJSON *points = get(doc, "points");
    int kinds_seen[3] = {0, 0, 0};
    int npoints = 0;
    const cJSON *pt;
    cJSON_ArrayForEach(pt, points) {
        const cJSON *par = get(pt, "parameters"), *q = get(pt, "quantities");
        const cJSON *kind = get(par, "kind"), *batches = get(par, "batches");
        int at = failed;
        snprintf(where, sizeof where, "points[%d]", npoints);
        npoints++;
        if (!cJSON_IsString(kind) || !is_num(batches) || !is_num(get(par, "bytes"))) {
            fail(where, "parameters kind, bytes, batches missing");
            continue;
        }
        if (strcmp(kind->valuestring, "transfer") == 0) kinds_seen[0] = 1;
        else if (strcmp(kind->valuestring, "isend") == 0) kinds_seen[1] = 1;
        else if (strcmp(kind->valuestring, "iallreduce") == 0) kinds_seen[2] = 1;
        else fail(where, "unknown kind");
        if (!cJSON_IsString(get(pt, "status")) || strcmp(get(pt, "status")->valuestring, "ok"))
            fail(where, "status is not ok");
        const cJSON *per_batch = get(q, "compute.per_batch");
        if (!cJSON_IsObject(per_batch) || !is_num(get(per_batch, "value")))
            fail(where, "compute.per_batch missing");
        int with_compute = batches->valuedouble > 0 && cJSON_IsObject(per_batch)
                           && is_num(get(per_batch, "value"))
                           && get(per_batch, "value")->valuedouble > 0;
        char qwhere[512];
        for (int i = 0; timings[i]; i++) {
            snprintf(qwhere, sizeof qwhere, "%s.%s", where, timings[i]);
            if (!cJSON_IsObject(get(q, timings[i])))
                fail(qwhere, "missing");
            else
                check_timing(get(q, timings[i]), qwhere);
        }
        for (int i = 0; figures_need_compute[i]; i++) {
            snprintf(qwhere, sizeof qwhere, "%s.%s", where, figures_need_compute[i]);
            if (!cJSON_IsObject(get(q, figures_need_compute[i])))
                fail(qwhere, "missing");
            else
                check_figure(get(q, figures_need_compute[i]), qwhere, with_compute);
        }
        for (int i = 0; figures_always[i]; i++) {
            snprintf(qwhere, sizeof qwhere, "%s.%s", where, figures_always[i]);
            if (!cJSON_IsObject(get(q, figures_always[i])))
                fail(qwhere, "missing");
            else
                check_figure(get(q, figures_always[i]), qwhere, 1);
        }
        snprintf(qwhere, sizeof qwhere, "%s.completed_during_batches", where);
        if (!cJSON_IsObject(get(q, "completed_during_batches")))
            fail(qwhere, "missing");
        else
            check_figure(get(q, "completed_during_batches"), qwhere,
                         batches->valuedouble > 0);
        /* Bounds that hold by construction. */
        const cJSON *ov = get(get(q, "overlap"), "value");
        if (is_num(ov) && (ov->valuedouble < 0.0 || ov->valuedouble > 1.0))
            fail(where, "overlap outside [0, 1]");
        const cJSON *tp = get(q, "overlap.t_polled"), *tc = get(q, "overlap.t_polled.compute");
        const cJSON *tps = get(tp, "samples"), *tcs = get(tc, "samples");
        for (int s = 0; s < cJSON_GetArraySize(tps) && s < cJSON_GetArraySize(tcs); s++)
            if (cJSON_GetArrayItem(tcs, s)->valuedouble
                > cJSON_GetArrayItem(tps, s)->valuedouble)
                fail(where, "compute inside t_polled exceeds t_polled");
        if (!is_num(get(get(q, "communication.payload"), "value")))
            fail(where, "communication.payload missing");
        /* The one kernel policy: every rank runs the iterations that last
         * compute.per_batch at the slowest rank's calibrated rate. */
        const cJSON *iters = get(get(q, "compute.iterations_per_batch"), "value");
        if (with_compute && is_num(slowest)
            && (!is_num(iters)
                || iters->valuedouble
                       != (double)llround(get(per_batch, "value")->valuedouble
                                          * slowest->valuedouble)))
            fail(where, "compute.iterations_per_batch is not compute.per_batch at the "
                 "slowest rank's rate");
        count_pass(at);
    }
    if (npoints == 0)
        fail("points", "none");
    int want_kinds = argc > 3 ? 0 : 1;  /* all three unless told otherwise */
    if (want_kinds && !(kinds_seen[0] && kinds_seen[1] && kinds_seen[2]))
        fail("points", "not every kind measured");
    cJSON_Delete(doc);
    printf("check-overlap-record: %d points, %d checks passed, %d failed\n", npoints,
           passed, failed);
    return failed == 0 ? 0 : 1;
}
