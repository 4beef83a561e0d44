/* runner.c: the descriptor-driven main of every measuring benchmark. */
#include "config.h"
#include "runner-int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The benchmark's state while the run lives.  Usage errors and --help end
 * the process from inside the run (every rank exits alike); the state is
 * then still reachable from here, not leaked, which is what LeakSanitizer
 * must see. */
static void *volatile live_state;  /* volatile: a store no compiler drops */

bb_bench_t *bb_run_bench(bb_run_t *run) { return run->bench; }
bb_world_t *bb_run_world(bb_run_t *run) { return bb_bench_world(run->bench); }
MPI_Comm bb_run_comm(const bb_run_t *run) { return bb_bench_comm(run->bench); }
int bb_run_rank(const bb_run_t *run) { return bb_bench_rank(run->bench); }
int bb_run_size(const bb_run_t *run) { return bb_bench_size(run->bench); }
const bb_measure_settings_t *bb_run_settings(const bb_run_t *run) { return &run->settings; }
bb_table_t *bb_run_table(bb_run_t *run) { return run->table; }
int bb_run_full(const bb_run_t *run) { return run->full; }

void bb_run_format_refusal(const bb_refusal_t *refusal, char *buf, size_t len)
{
    char who[32] = "";
    if (refusal->rank >= 0)
        snprintf(who, sizeof who, ":rank%d", refusal->rank);
    snprintf(buf, len, "refused:%s:seq%lld%s", bb_stage_name(refusal->stage),
             (long long)refusal->sequence, who);
}
int bb_run_full_sweep(const bb_run_t *run) { return run->full_sweep; }
cJSON *bb_run_excluded_quantity(const bb_run_t *run, const bb_measure_result_t *m)
{
    if (run->settings.timing != BB_TIMING_WINDOW || m->excluded == NULL)
        return NULL;
    cJSON *per = cJSON_CreateArray();
    int64_t total = 0;
    for (int64_t k = 0; k < m->samples; k++) {
        total += m->excluded[k];
        cJSON_AddItemToArray(per, cJSON_CreateNumber((double)m->excluded[k]));
    }
    cJSON *q = bb_quantity_value((double)total, "count", "point/any-rank");
    if (q == NULL) {
        cJSON_Delete(per);
        return NULL;
    }
    cJSON_AddItemToObject(q, "per_sample", per);
    cJSON_AddFalseToObject(q, "deterministic");  /* late calls depend on load */
    return q;
}

const char *bb_run_parts_words(const bb_run_t *run)
{
    return run->settings.rank_stat == BB_RANK_STAT_MEAN
           ? "the same calls, the mean over ranks"
           : "the same calls on the same rank, the one with the slowest whole";
}

const char *bb_run_rank_stat_words(const bb_run_t *run)
{
    return run->settings.rank_stat == BB_RANK_STAT_MEAN ? "rank mean" : "rank maximum";
}

/* The message of a printf-style call into buf (a char array). */
#define RUN_FORMAT(buf, fmt)                      \
    do {                                          \
        va_list ap_;                              \
        va_start(ap_, fmt);                       \
        vsnprintf(buf, sizeof buf, fmt, ap_);     \
        va_end(ap_);                              \
    } while (0)

void bb_run_usage(bb_run_t *run, const char *fmt, ...)
{
    char msg[1024];
    RUN_FORMAT(msg, fmt);
    bb_bench_usage(run->bench, "%s", msg);
}

char *bb_run_read_input(bb_run_t *run, const char *opt, const char *path, size_t max_bytes,
                        size_t *len_out)
{
    /* Rank 0's verdict and length first, then the bytes: every rank takes
     * the same branch. */
    long long head[2] = {0, 0}; /* errno (or -1: too long), length */
    char *text = NULL;
    if (bb_run_rank(run) == 0) {
        FILE *fp = fopen(path, "r");
        if (fp == NULL) {
            head[0] = errno ? errno : EIO;
        } else {
            text = malloc(max_bytes + 1);
            if (text == NULL)
                bb_run_fatal(run, "%s: out of memory", opt);
            size_t n = fread(text, 1, max_bytes, fp);
            if (ferror(fp))
                head[0] = errno ? errno : EIO;
            else if (n == max_bytes && fgetc(fp) != EOF)
                head[0] = -1;
            head[1] = (long long)n;
            fclose(fp);
        }
    }
    if (MPI_Bcast(head, 2, MPI_LONG_LONG, 0, bb_run_comm(run)) != MPI_SUCCESS)
        bb_run_fatal(run, "%s: MPI_Bcast failed while sharing '%s'", opt, path);
    if (head[0] != 0) {
        free(text);
        if (head[0] < 0)
            bb_run_usage(run, "%s: '%s' on rank 0 is longer than %zu bytes", opt, path,
                         max_bytes);
        bb_run_usage(run, "%s: rank 0 cannot read '%s': %s (rank 0 reads it for every rank)",
                     opt, path, strerror((int)head[0]));
    }
    size_t len = (size_t)head[1];
    if (bb_run_rank(run) != 0 && (text = malloc(len + 1)) == NULL)
        bb_run_fatal(run, "%s: out of memory", opt);
    if (len > 0 && MPI_Bcast(text, (int)len, MPI_CHAR, 0, bb_run_comm(run)) != MPI_SUCCESS)
        bb_run_fatal(run, "%s: MPI_Bcast failed while sharing '%s'", opt, path);
    text[len] = '\0';
    *len_out = len;
    return text;
}

void bb_run_fatal(bb_run_t *run, const char *fmt, ...)
{
    char msg[1024];
    RUN_FORMAT(msg, fmt);
    bb_bench_fatal(run->bench, "%s", msg);
}

void bb_run_note(bb_run_t *run, const char *fmt, ...)
{
    char msg[1024];
    RUN_FORMAT(msg, fmt);
    bb_bench_progress(run->bench, "%s", msg);
}

/* The run summary's bookkeeping of one measurement. */
static void run_account(bb_run_t *run, const bb_measure_result_t *r)
{
    if (run->measurements == 0 || r->samples < run->samples_min)
        run->samples_min = r->samples;
    if (r->samples > run->samples_max)
        run->samples_max = r->samples;
    run->until_unmet += r->until_met == 0;
    if (run->measurements++ == 0 || r->reps < run->reps_min)
        run->reps_min = r->reps;
    if (r->reps > run->reps_max)
        run->reps_max = r->reps;
    run->calls += r->calls;
    run->primers += r->primers;
    run->warm_blocks += r->warm_blocks;
    run->unsteady += run->settings.steady_max > 0 && !r->steady;
    run->windows_missed += r->windows_missed;
    run->calls_overrun += r->calls_overrun;
    run->window_retries += r->window_retries;
    for (int64_t k = 0; r->excluded != NULL && k < r->samples; k++)
        run->calls_excluded += r->excluded[k];
    if (r->window_s > run->window_max_s)
        run->window_max_s = r->window_s;
    if (r->offset_spread_s > run->offset_spread_max_s)
        run->offset_spread_max_s = r->offset_spread_s;
    if (r->offset_error_s > run->offset_error_max_s)
        run->offset_error_max_s = r->offset_error_s;
}

/* The canaries of one set (its first result holds them): kept for the
 * run's modes, and its rounds that straddled a switch counted. */
static void canary_account(bb_run_t *run, const bb_measure_result_t *r)
{
    if (bb_run_rank(run) != 0 || r->canary == NULL)
        return;
    run->canary_cost_s += r->canary_cost_s;
    for (int64_t k = 0; k <= r->samples; k++) {
        if (!(r->canary[k] > 0.0))
            continue;
        if (run->canary_n == run->canary_cap) {
            size_t cap = run->canary_cap ? 2 * run->canary_cap : 256;
            double *grown = realloc(run->canary_values, cap * sizeof *grown);
            if (grown == NULL)
                return;
            run->canary_values = grown;
            run->canary_cap = cap;
        }
        run->canary_values[run->canary_n++] = r->canary[k];
    }
    unsigned char stack[256], *drop = r->samples <= 256 ? stack : malloc((size_t)r->samples);
    if (drop != NULL) {
        run->canary_marked += bb_measure_canary_switches(r, drop);
        run->canary_rounds += r->samples;
    }
    if (drop != stack)
        free(drop);
}

void bb_run_measure(bb_run_t *run, const char *what, const bb_measure_variant_t *variant,
                    bb_measure_result_t *result_out)
{
    bb_status_t st = bb_measure_run(bb_run_comm(run), &run->settings, variant, result_out);
    if (st != BB_OK)
        bb_run_fatal(run, "%s: %s", what, bb_status_string(st));
    run_account(run, result_out);
    canary_account(run, result_out);
}

void bb_run_measure_set(bb_run_t *run, const char *what,
                        const bb_measure_variant_t *variants, int nvariants,
                        bb_share_t share, bb_measure_result_t *results_out)
{
    bb_status_t st = bb_measure_run_set(bb_run_comm(run), &run->settings, variants,
                                        nvariants, share, results_out);
    if (st != BB_OK)
        bb_run_fatal(run, "%s: %s", what, bb_status_string(st));
    for (int v = 0; v < nvariants; v++)
        run_account(run, &results_out[v]);
    canary_account(run, &results_out[0]);
}

int bb_run_check_released(bb_run_t *run, const char *what, int64_t prepared,
                          int64_t released)
{
    int64_t unreleased = prepared - released, worst = 0;
    if (bb_agree_max(bb_run_comm(run), &unreleased, 1, &worst) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce failed while counting %s", what);
    if (worst == 0)
        return BB_EXIT_OK;
    bb_run_note(run, "error: %lld %s not released exactly once", (long long)worst, what);
    return BB_EXIT_FAILURE;
}

/* ---- the run ------------------------------------------------------------- */

static cJSON *number_or_null(double v, int known)
{
    return known ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* The record's run section: how every sample was taken (the settings and
 * what the engine chose), and the note every range needs. */
cJSON *bb_run_section(bb_run_t *run)
{
    if (bb_run_rank(run) != 0)
        return NULL;
    cJSON *root = bb_record_json(bb_bench_record(run->bench));
    cJSON *section = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (!cJSON_IsObject(section)) {
        section = cJSON_CreateObject();
        bb_record_set(bb_bench_record(run->bench), "run", section);
    }
    return section;
}

void bb_run_record_set(bb_run_t *run, const char *name, cJSON *item)
{
    if (bb_run_rank(run) != 0) {
        cJSON_Delete(item);
        return;
    }
    bb_record_set(bb_bench_record(run->bench), name, item);
}

void bb_run_observe_progress(bb_run_t *run)
{
    bb_progress_ctx_t ctx;
    bb_progress_t progress;
    bb_bench_progress_ctx(run->bench, &ctx);
    if (bb_progress_observe(&ctx, &progress) != BB_OK)
        bb_run_fatal(run, "MPI_Allreduce of the progress observation failed");
    if (bb_run_rank(run) != 0)
        return;
    char note[512];
    bb_progress_note(&ctx, &progress, note, sizeof note);
    bb_table_note(run->table, "%s", note);
    bb_record_set(bb_bench_record(run->bench), "progress", bb_progress_json(&ctx, &progress));
}

/* The stopping rule as the record states it. */
static cJSON *stopping_json(const bb_run_t *run)
{
    const bb_measure_settings_t *s = &run->settings;
    cJSON *o = cJSON_CreateObject();
    if (s->until_rel > 0.0) {
        cJSON_AddStringToObject(o, "rule", "until-ci");
        cJSON_AddNumberToObject(o, "until_ci", s->until_rel);
        cJSON_AddStringToObject(o, "meaning", "rounds of samples (every row of a point) "
                                "past --samples until each row's interval of the median "
                                "has a half-width of at most until_ci x its median, or "
                                "max_samples rounds; decided on every rank alike");
        cJSON_AddNumberToObject(o, "min_samples", (double)s->samples);
        cJSON_AddNumberToObject(o, "max_samples", (double)s->max_samples);
        cJSON_AddNumberToObject(o, "measurements_unmet", (double)run->until_unmet);
    } else {
        cJSON_AddStringToObject(o, "rule", "fixed");
        cJSON_AddStringToObject(o, "meaning", "--samples rounds a point");
    }
    cJSON_AddItemToObject(o, "samples_min", number_or_null((double)run->samples_min,
                                                           run->measurements > 0));
    cJSON_AddItemToObject(o, "samples_max", number_or_null((double)run->samples_max,
                                                           run->measurements > 0));
    return o;
}

/* The table's word on intervals and the stopping rule. */
static void intervals_note(bb_run_t *run)
{
    const bb_measure_settings_t *s = &run->settings;
    if (run->measurements == 0 || run->table == NULL)
        return;
    char why[200];
    int64_t most = s->until_rel > 0.0 ? s->max_samples : s->samples;
    if (bb_stats_ci_order((size_t)most, s->confidence, NULL) == 0) {
        bb_interval_reason((size_t)most, s->confidence, why, sizeof why);
        bb_table_note(run->table, "intervals of the median: none (%s); ratios are not "
                      "resolved ('?')", why);
    }
    if (s->until_rel > 0.0)
        bb_table_note(run->table, "--until-ci %g: %lld to %lld samples a row (at most %lld); "
                      "%lld of %lld measurements did not meet it (marked ci>)",
                      s->until_rel, (long long)run->samples_min, (long long)run->samples_max,
                      (long long)s->max_samples, (long long)run->until_unmet,
                      (long long)run->measurements);
}

/* Is name listed in the includes of another quantity of the point? */
static int is_part(const cJSON *quantities, const char *name)
{
    const cJSON *q, *inc;
    cJSON_ArrayForEach(q, quantities)
        cJSON_ArrayForEach(inc, cJSON_GetObjectItemCaseSensitive(q, "includes"))
            if (cJSON_IsString(inc) && strcmp(inc->valuestring, name) == 0)
                return 1;
    return 0;
}

/* Time quantisation (bb_stats_quantum) over every timing sample of the
 * record: on an oversubscribed host a rank that waits for the core waits
 * for a scheduler slice, and the figures become multiples of it. */
static void add_quantisation(bb_run_t *run, cJSON *section)
{
    cJSON *root = bb_record_json(bb_bench_record(run->bench));
    const cJSON *topo = cJSON_GetObjectItemCaseSensitive(root, "topology");
    int over = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(topo, "oversubscribed"));
    size_t n = 0, cap = 0;
    double *v = NULL;
    const cJSON *point, *q, *e;
    cJSON_ArrayForEach(point, cJSON_GetObjectItemCaseSensitive(root, "points"))
        cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(point, "quantities")) {
            const cJSON *unit = cJSON_GetObjectItemCaseSensitive(q, "unit");
            if (!cJSON_IsString(unit) || strcmp(unit->valuestring, "s") != 0
                || is_part(cJSON_GetObjectItemCaseSensitive(point, "quantities"), q->string))
                continue;  /* wholes only: a part is a share of a quantised call */
            cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(q, "samples")) {
                if (n == cap) {
                    double *grown = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
                    if (grown == NULL)
                        goto free_samples;
                    v = grown;
                }
                v[n++] = e->valuedouble;
            }
        }
    bb_quantum_t qt;
    if (bb_stats_quantum(v, n, BB_QUANTUM_MIN_STEP_S, &qt) != BB_OK)
        goto free_samples;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "step_s", number_or_null(qt.step, qt.step > 0.0));
    cJSON_AddNumberToObject(o, "samples_considered", (double)qt.considered);
    cJSON_AddNumberToObject(o, "samples_fitting", (double)qt.fitting);
    cJSON_AddNumberToObject(o, "multiples", (double)qt.multiples);
    cJSON_AddBoolToObject(o, "oversubscribed", over);
    cJSON_AddStringToObject(o, "rule", "samples of the wholes at or above min_step_s: a "
                            "step when 90% of them lie within 5% of the step from one of "
                            "its multiples 1..16, two multiples or more seen");
    cJSON_AddNumberToObject(o, "min_step_s", BB_QUANTUM_MIN_STEP_S);
    cJSON_AddItemToObject(section, "quantisation", o);
    if (qt.step > 0.0 && run->table != NULL)
        bb_table_note(run->table, "times quantised: %zu of %zu samples of 1 ms or more sit at "
                      "multiples of %.2f ms%s: no ratio claim beyond what the intervals "
                      "resolve", qt.fitting, qt.considered, qt.step * 1e3,
                      over ? " (oversubscribed: the scheduler's slices)" : "");
free_samples:
    free(v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The canary's modes: its values sorted and cut where one is more than
 * BB_CANARY_SWITCH times the one before; a cluster of at least 5% of the
 * values (and two) is a mode, anything smaller a stray. */
static void add_canary(bb_run_t *run, cJSON *section)
{
    const bb_measure_settings_t *s = &run->settings;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", "8-byte round trips (MPI_Send, MPI_Recv) between ranks 0 "
                            "and 1 before each round and after the last; the fastest block's "
                            "half round trip");
    cJSON_AddNumberToObject(o, "calls", (double)s->canary_calls);
    cJSON_AddNumberToObject(o, "block", BB_CANARY_BLOCK);
    cJSON_AddNumberToObject(o, "switch_factor", BB_CANARY_SWITCH);
    if (s->canary_calls == 0 || bb_run_size(run) < 2 || run->canary_n == 0) {
        cJSON_AddNullToObject(o, "modes");
        cJSON_AddStringToObject(o, "reason", s->canary_calls == 0 ? "--canary none"
                                : bb_run_size(run) < 2 ? "one rank: no path between ranks"
                                : "no round measured");
        cJSON_AddItemToObject(section, "canary", o);
        return;
    }
    size_t n = run->canary_n;
    double *v = run->canary_values;
    qsort(v, n, sizeof *v, cmp_double);
    cJSON *modes = cJSON_CreateArray();
    size_t strays = 0, from = 0, least = n / 20 > 2 ? n / 20 : 2;
    int count = 0;
    char words[256] = "";
    for (size_t i = 1; i <= n; i++) {
        if (i < n && v[i] <= BB_CANARY_SWITCH * v[i - 1])
            continue;
        size_t len = i - from;
        if (len >= least || (n < 2 * least && len == n)) {
            double med = bb_stats_median(v + from, len);
            cJSON *m = cJSON_CreateObject();
            cJSON_AddNumberToObject(m, "median_s", med);
            cJSON_AddNumberToObject(m, "values", (double)len);
            cJSON_AddItemToArray(modes, m);
            size_t used = strlen(words);
            snprintf(words + used, sizeof words - used, "%s%.2f us (%zu)", count ? ", " : "",
                     med * 1e6, len);
            count++;
        } else
            strays += len;
        from = i;
    }
    cJSON_AddNumberToObject(o, "values", (double)n);
    cJSON_AddNumberToObject(o, "modes", count);
    cJSON_AddItemToObject(o, "mode_values", modes);
    cJSON_AddNumberToObject(o, "strays", (double)strays);
    cJSON_AddNumberToObject(o, "rounds", (double)run->canary_rounds);
    cJSON_AddNumberToObject(o, "rounds_marked", (double)run->canary_marked);
    cJSON_AddNumberToObject(o, "cost_s", run->canary_cost_s);
    cJSON_AddNumberToObject(o, "points_s", bb_time_now() - run->start_s);
    cJSON_AddNumberToObject(o, "cost_share", run->canary_cost_s / (bb_time_now() - run->start_s));
    cJSON_AddItemToObject(section, "canary", o);
    if (run->table != NULL && (count > 1 || run->canary_marked > 0))
        bb_table_note(run->table, "canary: %d modes of the path between ranks 0 and 1 (%s); "
                      "%lld of %lld rounds straddled a switch and are left out of the paired "
                      "ratios", count, words, (long long)run->canary_marked,
                      (long long)run->canary_rounds);
}

static void add_run_settings(bb_run_t *run)
{
    cJSON *section = bb_run_section(run);
    if (section == NULL)
        return;
    const bb_measure_settings_t *s = &run->settings;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "samples", (double)s->samples);
    cJSON_AddItemToObject(m, "reps", number_or_null((double)s->reps, s->reps > 0));
    cJSON_AddStringToObject(m, "reps_chosen_by", s->reps > 0 ? "--reps" : "--budget");
    cJSON_AddItemToObject(m, "budget_s", number_or_null(s->budget_s, s->reps == 0));
    cJSON_AddNumberToObject(m, "reps_cap", BB_MEASURE_REPS_CAP);
    cJSON_AddNumberToObject(m, "warmup", (double)s->warmup);
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "blocks_max", (double)s->steady_max);
    cJSON_AddNumberToObject(st, "tolerance", BB_MEASURE_STEADY_TOLERANCE);
    cJSON_AddStringToObject(st, "block_calls", "half a sample's reps, at least 1");
    cJSON_AddNumberToObject(st, "blocks", (double)run->warm_blocks);
    cJSON_AddNumberToObject(st, "unsteady", (double)run->unsteady);
    cJSON_AddItemToObject(m, "warmup_until_steady", st);
    cJSON_AddStringToObject(m, "timing", bb_timing_name(s->timing));
    cJSON_AddStringToObject(m, "rank_stat", bb_rank_stat_name(s->rank_stat));
    cJSON_AddNumberToObject(m, "confidence", s->confidence);
    cJSON_AddNumberToObject(m, "ratios_implausible", (double)run->implausible);
    cJSON_AddItemToObject(m, "stopping", stopping_json(run));
    cJSON_AddNumberToObject(m, "measurements", (double)run->measurements);
    cJSON_AddItemToObject(m, "reps_min", number_or_null((double)run->reps_min,
                                                        run->measurements > 0));
    cJSON_AddItemToObject(m, "reps_max", number_or_null((double)run->reps_max,
                                                        run->measurements > 0));
    cJSON_AddNumberToObject(m, "calls", (double)run->calls);
    cJSON_AddNumberToObject(m, "primer_calls", (double)run->primers);
    cJSON_AddStringToObject(m, "primer", "with several rows a point, two untimed calls of a "
                            "row before each of its sample blocks, so that what the previous "
                            "row left (a trimmed heap, MPI's temporaries, the skew of the "
                            "engine's closing reductions) is not timed");
    if (s->timing == BB_TIMING_WINDOW) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddItemToObject(w, "window_s_given", number_or_null(s->window_s,
                                                                  s->window_s > 0.0));
        cJSON_AddNumberToObject(w, "window_s_max", run->window_max_s);
        cJSON_AddNumberToObject(w, "windows_missed", (double)run->windows_missed);
        cJSON_AddNumberToObject(w, "calls_overrun", (double)run->calls_overrun);
        cJSON_AddNumberToObject(w, "calls_excluded", (double)run->calls_excluded);
        cJSON_AddNumberToObject(w, "samples_retaken", (double)run->window_retries);
        cJSON_AddNumberToObject(w, "drop_max", BB_WINDOW_DROP_MAX);
        cJSON_AddNumberToObject(w, "retries_max", BB_WINDOW_RETRIES);
        cJSON_AddNumberToObject(w, "clock_offset_spread_s_max", run->offset_spread_max_s);
        cJSON_AddNumberToObject(w, "clock_offset_error_s_max", run->offset_error_max_s);
        cJSON_AddItemToObject(m, "window", w);
    }
    cJSON_AddItemToObject(section, "measurement", m);
    cJSON_AddItemToObject(section, "allocator", bb_malloc_json(run->malloc_policy));
    /* The table's closing line: how many calls each sample timed. */
    char steady[160] = "";
    if (s->steady_max > 0)
        snprintf(steady, sizeof steady, " and until steady (%lld blocks in all; %lld of %lld "
                 "measurements not steady after %lld)", (long long)run->warm_blocks,
                 (long long)run->unsteady, (long long)run->measurements,
                 (long long)s->steady_max);
    /* Named only when not the default, so the default's tables keep their lines. */
    const char *stat = s->rank_stat == BB_RANK_STAT_MEAN
                       ? "; each sample the mean over ranks (--rank-stat mean)" : "";
    if (run->measurements > 0 && run->table != NULL) {
        if (s->reps > 0)
            bb_table_note(run->table, "reps per sample: %lld (--reps); warmup %d%s; timing %s%s",
                          (long long)s->reps, (int)s->warmup, steady, bb_timing_name(s->timing),
                          stat);
        else
            bb_table_note(run->table, "reps per sample: %lld to %lld (chosen by --budget %g s "
                          "a sample); warmup %lld%s; timing %s%s", (long long)run->reps_min,
                          (long long)run->reps_max, s->budget_s, (long long)s->warmup,
                          steady, bb_timing_name(s->timing), stat);
    }
    /* Only when not the library's default, so the default's tables keep
     * their lines; the record always says. */
    if (run->measurements > 0 && run->table != NULL && bb_malloc_tuned(run->malloc_policy))
        bb_table_note(run->table, "allocator: --malloc %s%s (the record's run.allocator "
                      "says which thresholds and MALLOC_* variables were in effect)",
                      bb_malloc_name(run->malloc_policy),
                      run->malloc_policy == BB_MALLOC_NO_TRIM
                          ? ": the heap top never trimmed, up to 32 MiB from the heap"
                          : " and the environment's allocator variables");
    intervals_note(run);
    add_quantisation(run, section);
    add_canary(run, section);
    if (!cJSON_HasObjectItem(section, "range_note"))
        cJSON_AddStringToObject(section, "range_note",
                                "with n samples the [min, max] range covers the median "
                                "with probability 1 - 2^(1-n): 75% for n = 3");
}

void bb_run_use(bb_run_t *run, const bb_bench_desc_t *workload)
{
    const bb_bench_desc_t program = *run->desc;
    run->workload = *workload;
    bb_bench_desc_t *d = &run->workload;
    d->program = program.program;
    d->benchmark = program.benchmark;
    d->summary = program.summary;
    d->notes = program.notes;
    d->options = program.options;
    d->state_size = program.state_size;
    d->settings = program.settings;
    d->defaults = program.defaults;
    d->parse = program.parse;
    d->validate = program.validate;
    d->setup = program.setup;
    d->label = program.label;
    d->finish = program.finish;
    d->teardown = program.teardown;
    run->desc = d;
}

/* The bench's note sink: a header line as a note of the table. */
static void run_table_note(void *arg, const char *text)
{
    bb_table_note(arg, "%s", text);
}

int bb_run_main(const bb_bench_desc_t *desc, int argc, char **argv)
{
    bb_run_t run = { .desc = desc, .settings = bb_run_default_settings(desc) };
    run.bench = bb_bench_init(&argc, &argv, desc->program, desc->benchmark);
    void *state = calloc(1, desc->state_size ? desc->state_size : 1);
    if (state == NULL)
        bb_run_fatal(&run, "out of memory");
    live_state = state;
    if (desc->defaults != NULL)
        desc->defaults(state);
    bb_run_parse_options(&run, state, argc, argv);
    bb_record_set_confidence(bb_bench_record(run.bench), run.settings.confidence);
    size_t points = desc->validate(&run, state);
    desc = run.desc;  /* bb_run_use may have chosen a workload */
    if (points > BB_RUN_POINTS_MAX)
        bb_run_usage(&run, "%zu points (the product of the swept lists) exceed the limit "
                     "of %d: sweep fewer values", points, (int)BB_RUN_POINTS_MAX);
    if (run.message_size != NULL && run.message_note[0] == '\0')
        bb_run_usage(&run, "--message-size: %s has no message sizes", desc->program);
    bb_bench_set_output(run.bench, run.output);
    run.table = bb_table_create(run.format, stdout, bb_run_rank(&run) == 0);
    if (run.table == NULL)
        bb_run_fatal(&run, "out of memory");
    /* The bench's header lines become the table's notes (stdout holds the
     * table alone); in csv they go to stderr. */
    bb_bench_set_notes(run.bench, run.format != BB_FORMAT_CSV ? run_table_note : NULL,
                       run.table, run.format == BB_FORMAT_TABLE);
    bb_bench_capture(run.bench);
    if (run.message_note[0] != '\0')
        bb_table_note(run.table, "%s", run.message_note);
    if (desc->setup != NULL)
        desc->setup(&run, state);
    if (desc->variants != NULL)
        bb_variants_columns(&run, state);

    int code = BB_EXIT_OK;
    double start = bb_time_now();
    run.start_s = start;
    for (size_t i = 0; i < points; i++) {
        if (!run.quiet) {
            char label[256] = "";
            char left[64] = "";
            if (desc->label != NULL)
                desc->label(state, i, label, sizeof label);
            if (i > 0)
                snprintf(left, sizeof left, ", about %.1f s left",
                         (bb_time_now() - start) / (double)i * (double)(points - i));
            bb_bench_progress(run.bench, "point %zu/%zu: %s%s", i + 1, points, label, left);
        }
        /* a benchmark of variants may measure some runs its own way */
        int rows = desc->variants != NULL && (run.nrows > 0 || desc->point == NULL);
        if ((rows ? bb_variants_point(&run, state, i) : desc->point(&run, state, i))
                != BB_EXIT_OK)
            code = BB_EXIT_FAILURE;
    }
    if (desc->finish != NULL && desc->finish(&run, state) != BB_EXIT_OK)
        code = BB_EXIT_FAILURE;
    if (bb_run_check_released(&run, "provider arrays", run.lent, run.returned) != BB_EXIT_OK)
        code = BB_EXIT_FAILURE;
    cJSON *section = bb_run_section(&run);
    if (section != NULL && ((desc->variants != NULL && !desc->no_provider) || run.lent > 0)) {
        cJSON_AddNumberToObject(section, "provider_arrays_prepared", (double)run.lent);
        cJSON_AddNumberToObject(section, "provider_arrays_released", (double)run.returned);
    }
    bb_variants_modes(&run);
    add_run_settings(&run);
    bb_bench_set_notes(run.bench, NULL, NULL, run.format == BB_FORMAT_TABLE);
    bb_table_destroy(run.table);  /* json prints its document here */
    run.table = NULL;
    if (desc->teardown != NULL)
        desc->teardown(state);
    free(state);
    free(run.canary_values);
    live_state = NULL;
    /* A failure one rank alone saw fails the run on every rank. */
    int64_t mine = code, worst = code;
    if (bb_agree_max(bb_run_comm(&run), &mine, 1, &worst) != MPI_SUCCESS)
        bb_run_fatal(&run, "MPI_Allreduce of the exit codes failed");
    return bb_bench_finish(run.bench, (int)worst);
}
