/* overlap.c: the overlap figures of merit (pure functions of measured
 * times), the figures of one point with their record quantities, and the calibrated compute kernel that bbench-overlap runs between
 * posting and finishing communication.  No MPI here. */
#include "config.h"
#include "private/bbtext.h"
#include "figures.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A valid time: finite and nonnegative. */
static int bb_overlap_time_ok(double t) { return isfinite(t) && t >= 0.0; }

static void bb_overlap_set_undefined(bb_overlap_figure_t *out,
                                     const char *reason)
{
    out->defined = 0;
    out->value = 0.0;
    out->raw = 0.0;
    out->clamped = 0;
    out->reason = reason;
}

/* Clamp raw into [lo, hi] (hi may be INFINITY: no upper bound). */
static void bb_overlap_set(bb_overlap_figure_t *out, double raw, double lo,
                           double hi)
{
    double v = raw;
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    out->defined = 1;
    out->raw = raw;
    out->value = v;
    out->clamped = (v != raw);
    out->reason = NULL;
}

bb_status_t bb_overlap_ratio(double t_comm, double t_compute,
                             double t_overlapped, bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_comm)
        || !bb_overlap_time_ok(t_compute) || !bb_overlap_time_ok(t_overlapped))
        return BB_ERR_ARG;
    if (t_compute == 0.0) {
        bb_overlap_set_undefined(out, "no compute (t_compute = 0): nothing to overlap with");
        return BB_OK;
    }
    if (t_comm == 0.0) {
        bb_overlap_set_undefined(out, "no communication (t_comm = 0): nothing to hide");
        return BB_OK;
    }
    double shorter = t_comm < t_compute ? t_comm : t_compute;
    bb_overlap_set(out, (t_comm + t_compute - t_overlapped) / shorter, 0.0, 1.0);
    return BB_OK;
}

bb_status_t bb_overlap_osu(double t_total, double t_compute_in, double t_pure,
                           bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_total)
        || !bb_overlap_time_ok(t_compute_in) || !bb_overlap_time_ok(t_pure))
        return BB_ERR_ARG;
    if (t_pure == 0.0) {
        bb_overlap_set_undefined(out, "no communication (t_pure = 0): OSU divides by it");
        return BB_OK;
    }
    /* OSU bounds the percentage below by 0 and not above. */
    bb_overlap_set(out, 1.0 - (t_total - t_compute_in) / t_pure, 0.0, INFINITY);
    return BB_OK;
}

bb_status_t bb_overlap_imb(double t_pure, double t_cpu, double t_ovrl,
                           bb_overlap_imb_variant_t variant,
                           bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_pure) || !bb_overlap_time_ok(t_cpu)
        || !bb_overlap_time_ok(t_ovrl)
        || (variant != BB_OVERLAP_IMB_DOC && variant != BB_OVERLAP_IMB_CODE))
        return BB_ERR_ARG;
    double denominator = variant == BB_OVERLAP_IMB_DOC
                             ? (t_pure < t_cpu ? t_pure : t_cpu)
                             : (t_pure > t_cpu ? t_pure : t_cpu);
    if (denominator == 0.0) {
        bb_overlap_set_undefined(out, t_cpu == 0.0
                                          ? "no compute (t_cpu = 0): nothing to overlap with"
                                          : "no communication (t_pure = 0): nothing to hide");
        return BB_OK;
    }
    bb_overlap_set(out, (t_pure + t_cpu - t_ovrl) / denominator, 0.0, 1.0);
    return BB_OK;
}

bb_status_t bb_overlap_speedup(double t_immediate, double t_polled,
                               bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_immediate)
        || !bb_overlap_time_ok(t_polled))
        return BB_ERR_ARG;
    if (t_polled == 0.0) {
        bb_overlap_set_undefined(out, "t_polled = 0: below the timer");
        return BB_OK;
    }
    bb_overlap_set(out, t_immediate / t_polled, 0.0, INFINITY);
    return BB_OK;
}

bb_status_t bb_overlap_slowdown(double t_compute_inside, double t_compute,
                                bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_compute_inside)
        || !bb_overlap_time_ok(t_compute))
        return BB_ERR_ARG;
    if (t_compute == 0.0) {
        bb_overlap_set_undefined(out, "no compute (t_compute = 0)");
        return BB_OK;
    }
    bb_overlap_set(out, t_compute_inside / t_compute, 0.0, INFINITY);
    return BB_OK;
}

bb_status_t bb_overlap_fraction(int64_t completed, int64_t samples,
                                bb_overlap_figure_t *out)
{
    if (out == NULL || samples < 0 || completed < 0 || completed > samples)
        return BB_ERR_ARG;
    if (samples == 0) {
        bb_overlap_set_undefined(out, "no samples");
        return BB_OK;
    }
    bb_overlap_set(out, (double)completed / (double)samples, 0.0, 1.0);
    return BB_OK;
}

/* ---- the figures of one point ------------------------------------------ */

static const char *const set_names[BB_OVERLAP_F_N] = {
    "overlap", "overlap.unpolled", "overlap.osu", "overlap.imb", "overlap.imb_code",
    "overlap.speedup", "overlap.compute_slowdown"
};
static const char *const set_formulas[BB_OVERLAP_F_N] = {
    BB_OVERLAP_FORMULA, BB_OVERLAP_FORMULA " with t_polled := t_unpolled",
    BB_OVERLAP_OSU_FORMULA, BB_OVERLAP_IMB_FORMULA, BB_OVERLAP_IMB_CODE_FORMULA,
    BB_OVERLAP_SPEEDUP_FORMULA, BB_OVERLAP_SLOWDOWN_FORMULA
};
static const char *const set_scopes[BB_OVERLAP_F_N] = {
    "call/max-rank", "call/max-rank", "call/mean-rank", "call/rank-of-max-t_ovrl",
    "call/rank-of-max-t_ovrl", "call/max-rank", "call/max-rank"
};
static const char *const set_notes[BB_OVERLAP_F_N] = {
    "bbench's headline: t_comm and t_compute measured alone, t_polled with one "
    "progress poll after each batch, every time the slowest rank's per sample",
    "the same formula on the run without polls: the difference to 'overlap' is "
    "what the polls bought",
    "OSU osu_iallreduce style (osu_util_mpi.c, print_stats_nbc): t_total = "
    "t_unpolled (OSU calls no MPI_Test by default), t_compute_in = the compute "
    "inside that run (OSU subtracts its Test time), t_pure = t_comm, each the "
    "mean over ranks, not the maximum; no upper clamp; OSU calibrates the compute "
    "to t_pure, which only --compute auto reproduces",
    "IMB-NBC style, the user guide's formula (denominator min): t_ovrl = "
    "t_unpolled (Ixxx, IMB_cpu_exploit, MPI_Wait), t_cpu = the compute inside "
    "that run, t_pure = t_comm, all taken from the rank with the largest t_ovrl",
    "IMB-NBC style as IMB's source computes it (src_c/IMB_output.c, NBC branch: "
    "denominator max(t_pure, t_cpu), disagreeing with the guide); same inputs as "
    "overlap.imb",
    "the same work done post-wait-then-compute over post-compute-poll-finish: "
    "above 1 the overlap paid off in the full boundary",
    "compute batch time inside t_polled over compute alone: above 1 the "
    "communication slowed the compute down (shared cores, memory, progress)"
};
#define IN_PEER "overlap.t_comm", "overlap.t_unpolled", "overlap.t_unpolled.compute"
static const char *const set_inputs[BB_OVERLAP_F_N][4] = {
    { "overlap.t_comm", "overlap.t_compute", "overlap.t_polled", NULL },
    { "overlap.t_comm", "overlap.t_compute", "overlap.t_unpolled", NULL },
    { IN_PEER, NULL }, { IN_PEER, NULL }, { IN_PEER, NULL },
    { "overlap.t_immediate", "overlap.t_polled", NULL },
    { "overlap.t_polled.compute", "overlap.t_compute", NULL }
};

cJSON *bb_overlap_formulas(void)
{
    cJSON *f = cJSON_CreateObject();
    for (int k = 0; k < BB_OVERLAP_F_N; k++)
        if (k != BB_OVERLAP_F_UNPOLLED)  /* overlap's, on other inputs */
            cJSON_AddStringToObject(f, set_names[k], set_formulas[k]);
    return f;
}

/* Median, min and max of n samples (NAN when they cannot be summarized). */
static bb_summary_t set_summary(const double *v, int64_t n)
{
    bb_summary_t sum;
    if (bb_stats_summarize(v, (size_t)n, &sum) != BB_OK)
        sum.median = sum.min = sum.max = (double)NAN;
    return sum;
}

/* OSU's inputs, the rank means, and IMB's, the values of the rank with the
 * largest t_unpolled: [BB_OVERLAP_RANK_N][samples] each. */
static void set_peer_times(const bb_overlap_times_t *t, double *mean, double *imb)
{
    int64_t S = t->samples, N = BB_OVERLAP_RANK_N;
    const double *all = t->per_rank;
    for (int64_t s = 0; s < S; s++) {
        int64_t best = 0;
        for (int64_t r = 0; r < t->ranks; r++) {
            for (int64_t g = 0; g < N; g++)
                mean[g * S + s] += all[(r * N + g) * S + s] / (double)t->ranks;
            if (all[(r * N + BB_OVERLAP_RANK_UNPOLLED) * S + s]
                > all[(best * N + BB_OVERLAP_RANK_UNPOLLED) * S + s])
                best = r;
        }
        for (int64_t g = 0; g < N; g++)
            imb[g * S + s] = all[(best * N + g) * S + s];
    }
}

bb_status_t bb_overlap_set_compute(const bb_overlap_times_t *t, bb_overlap_set_t *set_out)
{
    bb_overlap_set_t *fs = set_out;
    if (fs == NULL)
        return BB_ERR_ARG;
    memset(fs, 0, sizeof *fs);
    if (t == NULL || t->samples < 1 || t->ranks < 1 || t->reps < 1)
        return BB_ERR_ARG;
    int64_t S = t->samples;
    fs->samples = S;
    fs->reps = t->reps;
    double *mean = calloc((size_t)(2 * BB_OVERLAP_RANK_N * S), sizeof *mean);
    double *imb = mean + BB_OVERLAP_RANK_N * S;
    int ok = mean != NULL
             && (fs->done_samples = calloc((size_t)S, sizeof *fs->done_samples)) != NULL;
    for (int f = 0; ok && f < BB_OVERLAP_F_N; f++)
        ok = (fs->f[f] = calloc((size_t)S, sizeof(bb_overlap_figure_t))) != NULL;
    bb_status_t st = ok ? BB_OK : BB_ERR_NOMEM;
    if (ok)
        set_peer_times(t, mean, imb);
    int none = t->compute_none;
    const double *m_comm = &mean[BB_OVERLAP_RANK_COMM * S];
    const double *m_unp = &mean[BB_OVERLAP_RANK_UNPOLLED * S];
    const double *m_unpc = &mean[BB_OVERLAP_RANK_UNPOLLED_COMPUTE * S];
    const double *i_comm = &imb[BB_OVERLAP_RANK_COMM * S];
    const double *i_unp = &imb[BB_OVERLAP_RANK_UNPOLLED * S];
    const double *i_unpc = &imb[BB_OVERLAP_RANK_UNPOLLED_COMPUTE * S];
    for (int64_t s = 0; s < S && st == BB_OK; s++) {
        /* No compute asked for: an exact zero, so that the figures say
         * "undefined" rather than divide by the timer noise of an empty loop. */
        double tk = none ? 0.0 : t->compute[s];
        bb_overlap_figure_t **f = fs->f;
        if (bb_overlap_ratio(t->comm[s], tk, t->polled[s], &f[BB_OVERLAP_F_OVERLAP][s])
            || bb_overlap_ratio(t->comm[s], tk, t->unpolled[s], &f[BB_OVERLAP_F_UNPOLLED][s])
            || bb_overlap_osu(m_unp[s], none ? 0.0 : m_unpc[s], m_comm[s],
                              &f[BB_OVERLAP_F_OSU][s])
            || bb_overlap_imb(i_comm[s], none ? 0.0 : i_unpc[s], i_unp[s],
                              BB_OVERLAP_IMB_DOC, &f[BB_OVERLAP_F_IMB][s])
            || bb_overlap_imb(i_comm[s], none ? 0.0 : i_unpc[s], i_unp[s],
                              BB_OVERLAP_IMB_CODE, &f[BB_OVERLAP_F_IMB_CODE][s])
            || bb_overlap_speedup(t->immediate[s], t->polled[s], &f[BB_OVERLAP_F_SPEEDUP][s])
            || bb_overlap_slowdown(none ? 0.0 : t->polled_compute[s], tk,
                                   &f[BB_OVERLAP_F_SLOWDOWN][s]))
            st = BB_ERR_ARG;
        fs->done_calls += t->completed[s];
        fs->done_samples[s] = (double)t->completed[s] / (double)t->reps;
    }
    free(mean);
    if (st == BB_OK && t->batches == 0)
        fs->done = (bb_overlap_figure_t){ .reason = "no batches: no poll ran" };
    else if (st == BB_OK)
        st = bb_overlap_fraction(fs->done_calls, t->reps * S, &fs->done);
    bb_summary_t comm = set_summary(t->comm, S), comp = set_summary(t->compute, S);
    double shorter = comm.median < comp.median ? comm.median : comp.median;
    const double *over[2] = { t->polled, t->unpolled };
    for (int k = 0; k < 2; k++) {
        bb_summary_t o = set_summary(over[k], S);
        /* t_compute is an input of the formula too: its range counts (a
         * clamped 1.00 with t_polled below t_compute was "not noisy"). */
        fs->uncertainty[k] = none || !(shorter > 0.0)
                                 ? (double)NAN
                                 : ((comm.max - comm.min) + (comp.max - comp.min)
                                    + (o.max - o.min)) / shorter;
    }
    if (st != BB_OK)
        bb_overlap_set_free(fs);
    return st;
}

void bb_overlap_set_free(bb_overlap_set_t *set)
{
    for (int f = 0; set != NULL && f < BB_OVERLAP_F_N; f++) {
        free(set->f[f]);
        set->f[f] = NULL;
    }
    if (set != NULL) {
        free(set->done_samples);
        set->done_samples = NULL;
    }
}

/* The values of figure f (caller frees), or NULL with the first undefined
 * sample's reason. */
static double *set_values(const bb_overlap_set_t *set, int f, const char **reason_out,
                          int64_t *clamped_out)
{
    double *v = set->f[f] ? malloc((size_t)set->samples * sizeof *v) : NULL;
    *reason_out = v == NULL ? "not measured" : NULL;
    *clamped_out = 0;
    for (int64_t s = 0; v != NULL && s < set->samples; s++) {
        if (!set->f[f][s].defined) {
            *reason_out = set->f[f][s].reason;
            free(v);
            return NULL;
        }
        v[s] = set->f[f][s].value;
        *clamped_out += set->f[f][s].clamped;
    }
    return v;
}

static double set_median(const bb_overlap_set_t *set, int f)
{
    const char *reason;
    int64_t clamped;
    double *v = set_values(set, f, &reason, &clamped);
    double m = v != NULL ? bb_stats_median(v, (size_t)set->samples) : (double)NAN;
    free(v);
    return m;
}

void bb_overlap_set_quantities(const bb_overlap_set_t *set, const char *null_reason, cJSON *q)
{
    for (int f = 0; f < BB_OVERLAP_F_N; f++) {
        const char *reason = null_reason;
        int64_t clamped = 0;
        double *v = reason == NULL ? set_values(set, f, &reason, &clamped) : NULL;
        cJSON *fq;
        if (v == NULL) {
            fq = bb_quantity_null("ratio", set_scopes[f], reason);
        } else {
            fq = bb_quantity_timing(v, (size_t)set->samples, set_scopes[f], NULL);
            cJSON_ReplaceItemInObjectCaseSensitive(fq, "unit", cJSON_CreateString("ratio"));
            cJSON_AddNumberToObject(fq, "clamped_samples", (double)clamped);
        }
        free(v);
        cJSON_AddStringToObject(fq, "formula", set_formulas[f]);
        cJSON *in = cJSON_AddArrayToObject(fq, "inputs");
        for (int i = 0; set_inputs[f][i] != NULL; i++)
            cJSON_AddItemToArray(in, cJSON_CreateString(set_inputs[f][i]));
        cJSON_AddStringToObject(fq, "note", set_notes[f]);
        double u = f <= BB_OVERLAP_F_UNPOLLED ? set->uncertainty[f] : (double)NAN;
        if (null_reason == NULL && !isnan(u)) {
            cJSON_AddNumberToObject(fq, "uncertainty", u);
            cJSON_AddBoolToObject(fq, "noise_dominated", u > 1.0);
            cJSON_AddStringToObject(fq, "uncertainty_formula",
                                    "(range(t_comm) + range(t_compute) + "
                                    "range(t_overlapped)) / "
                                    "min(median t_comm, median t_compute): above 1 the "
                                    "sample ranges alone allow any value in [0, 1]");
        }
        bb_quantities_add(q, set_names[f], fq);
    }
    cJSON *d;
    if (null_reason == NULL && set->done.defined) {
        d = bb_quantity_value(set->done.value, "ratio", "run/all-ranks");
        cJSON_AddNumberToObject(d, "calls", (double)(set->reps * set->samples));
        cJSON_AddNumberToObject(d, "completed_calls", (double)set->done_calls);
        cJSON_AddItemToObject(d, "samples",
                              cJSON_CreateDoubleArray(set->done_samples, (int)set->samples));
    } else {
        d = bb_quantity_null("ratio", "run/all-ranks",
                             null_reason ? null_reason : set->done.reason);
    }
    cJSON_AddStringToObject(d, "note", "fraction of polled calls in which a progress "
                            "poll saw the payload complete on every data rank before "
                            "finish: local observation only, it does not prove a "
                            "faster call, asynchronous progress or remote consumption");
    bb_quantities_add(q, "completed_during_batches", d);
}

/* The figures in column order, their names and legends. */
static const int set_cols[] = { BB_OVERLAP_F_OVERLAP, BB_OVERLAP_F_UNPOLLED, BB_OVERLAP_F_OSU,
                                BB_OVERLAP_F_IMB, BB_OVERLAP_F_SPEEDUP };
static const char *const set_col_names[] = { "overlap", "unpolled", "osu", "imb", "speedup" };
static const char *const set_col_legends[] = {
    "overlap = " BB_OVERLAP_FORMULA " (t_polled; the slowest rank's)",
    "the same from t_unpolled (no poll between batches)",
    "OSU's overlap = " BB_OVERLAP_OSU_FORMULA " (rank means)",
    "IMB's overlap = " BB_OVERLAP_IMB_FORMULA " (the rank with the largest t_unpolled)",
    "speedup = " BB_OVERLAP_SPEEDUP_FORMULA
};
enum { SET_COLS = sizeof set_cols / sizeof set_cols[0] };

void bb_overlap_set_columns(bb_table_t *t)
{
    for (int k = 0; k < SET_COLS; k++)
        bb_table_column(t, set_col_names[k], NULL, set_col_legends[k], 7);
    bb_table_column(t, "done", NULL, "fraction of polled calls whose payload every rank "
                    "saw complete during the batches (proves nothing alone)", 5);
    bb_table_column(t, "slowdown", NULL, "compute slowdown = " BB_OVERLAP_SLOWDOWN_FORMULA,
                    7);
    bb_table_column(t, "noisy", NULL, "overlap, unpolled, both or no: the figures whose "
                    "sample ranges alone allow any value in [0, 1] (uncertainty above 1)", 5);
}

void bb_overlap_set_cells(bb_table_t *t, const bb_overlap_set_t *set, int measured)
{
    const double none = (double)NAN;
    for (int k = 0; k < SET_COLS; k++)
        bb_table_number(t, measured ? set_median(set, set_cols[k]) : none, 2);
    bb_table_number(t, measured && set->done.defined ? set->done.value : none, 2);
    bb_table_number(t, measured ? set_median(set, BB_OVERLAP_F_SLOWDOWN) : none, 2);
    int a = set->uncertainty[0] > 1.0, b = set->uncertainty[1] > 1.0;
    if (measured)
        bb_table_text(t, a && b ? "both" : a ? "overlap" : b ? "unpolled" : "no");
    else
        bb_table_missing(t);
}

