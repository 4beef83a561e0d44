/* variants.c: the one path from a benchmark's variants to its table row
 * and record points: every row of a point measured together (samples
 * interleaved, one reps figure unless the rows' costs differ by more than
 * BB_SHARE_FIT_SPREAD times; rows declared alone first, on their own), the
 * tallies agreed, the columns, ratios, status cell and
 * standard quantities written once (one record point per row, or one for
 * the point when its rows are merged). */
#include "config.h"
#include "runner-int.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *const scope_call = "call/max-rank";

bb_row_t *bb_run_add_row(bb_run_t *run, int variant, int policy, const char *label,
                         const char *legend)
{
    const bb_bench_desc_t *d = run->desc;
    if (variant < 0 || variant >= d->nvariants || run->nrows >= BB_RUN_ROWS_MAX)
        bb_run_usage(run, "too many rows at each point (at most %d)", (int)BB_RUN_ROWS_MAX);
    bb_row_t *row = &run->rows[run->nrows++];
    memset(row, 0, sizeof *row);
    row->index = run->nrows - 1;
    row->variant = variant;
    row->policy = policy;
    snprintf(row->label, sizeof row->label, "%s", label ? label : d->variants[variant].name);
    snprintf(row->legend, sizeof row->legend, "%s",
             legend ? legend : d->variants[variant].differs);
    row->parts = d->variants[variant].parts | 1u;
    row->absent = d->variants[variant].absent;
    return row;
}

int bb_run_rows(const bb_run_t *run) { return run->nrows; }
bb_row_t *bb_run_row(bb_run_t *run, int r) { return &run->rows[r]; }

double bb_row_median(const bb_row_t *row, int p)
{
    return bb_measure_part_at_median(&row->m, p);
}

void bb_run_lent(bb_run_t *run) { run->lent++; }
void bb_run_returned(bb_run_t *run) { run->returned++; }

/* ---- measurement --------------------------------------------------------- */

typedef struct row_arg {
    bb_run_t *run;
    void *state;
    bb_row_t *row;
} row_arg_t;

static bb_status_t row_call(void *arg, double *parts, double *counts)
{
    row_arg_t *a = arg;
    const bb_variant_t *v = &a->run->desc->variants[a->row->variant];
    return v->call(a->run, a->state, a->row, parts, counts);
}

static bb_status_t row_block_end(void *arg, int64_t calls, int64_t sample)
{
    row_arg_t *a = arg;
    return a->run->desc->block_end(a->run, a->state, a->row, calls, sample);
}

/* Collective.  The facts that decide status and checks, MAX over ranks:
 * the tally's fields below, RSS, and the refusing rank, the lowest whose own
 * preflight refused (size - rank under MAX), else the refusal's own. */
static const size_t agreed_fields[] = {
    offsetof(bb_tally_t, refused_calls), offsetof(bb_tally_t, wrong),
    offsetof(bb_tally_t, tracked_peak), offsetof(bb_tally_t, max_inflight),
    offsetof(bb_tally_t, payload_bytes), offsetof(bb_tally_t, p2p),
    offsetof(bb_tally_t, rss_peak)
};
enum { A_FIELDS = sizeof agreed_fields / sizeof agreed_fields[0], A_N = A_FIELDS + 1 };

static int64_t *tally_field(bb_tally_t *t, int f)
{
    return (int64_t *)(void *)((char *)t + agreed_fields[f]);
}

static void agree_tallies(bb_run_t *run)
{
    int64_t local[BB_RUN_ROWS_MAX * A_N], max[BB_RUN_ROWS_MAX * A_N];
    int size = bb_run_size(run), rank = bb_run_rank(run);
    int64_t rss = bb_rss_peak_bytes();
    for (int r = 0; r < run->nrows; r++) {
        bb_tally_t *t = &run->rows[r].local;
        t->rss_peak = rss;
        for (int f = 0; f < A_FIELDS; f++)
            local[r * A_N + f] = *tally_field(t, f);
        local[r * A_N + A_FIELDS] = t->local_refusals > 0 ? size - rank : 0;
    }
    if (bb_agree_max(bb_run_comm(run), local, run->nrows * A_N, max) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce of counters failed");
    for (int r = 0; r < run->nrows; r++) {
        bb_tally_t *t = &run->rows[r].agreed;
        *t = run->rows[r].local;
        for (int f = 0; f < A_FIELDS; f++)
            *tally_field(t, f) = max[r * A_N + f];
        if (max[r * A_N + A_FIELDS] > 0)
            t->refusal.rank = (int)(size - max[r * A_N + A_FIELDS]);
    }
}

/* ---- the table ------------------------------------------------------------ */

/* The reference row of ratio k of row r, or -1. */
static int ratio_ref(const bb_run_t *run, const void *state, int r, int k)
{
    const bb_bench_desc_t *d = run->desc;
    const bb_row_t *row = &run->rows[r];
    const bb_ratio_t *ratio = &d->variants[row->variant].ratios[k];
    for (int q = 0; q < run->nrows; q++)
        if (run->rows[q].variant == ratio->to
            && (d->ratio_match == NULL || d->ratio_match(state, row, &run->rows[q])))
            return q;
    return -1;
}

/* Can the run's rows have intervals of the median (enough samples)? */
static int run_intervals(const bb_run_t *run)
{
    int64_t most = run->settings.until_rel > 0.0 ? run->settings.max_samples
                                                 : run->settings.samples;
    return bb_stats_ci_order((size_t)most, run->settings.confidence, NULL) > 0;
}

/* Were two rows measured in one interleaved set (sample k of both in
 * round k)?  Rows measured alone were not. */
static int rows_paired(const bb_run_t *run, const bb_row_t *a, const bb_row_t *b)
{
    unsigned alone = run->desc->alone;
    return !((alone >> a->variant) & 1u) && !((alone >> b->variant) & 1u)
           && a->m.samples == b->m.samples && a->m.samples > 0;
}

/* One ratio of two rows' wholes (bb_ratio_figure), with what the runner
 * adds: the canary's marked rounds left out, and with rounds in several
 * canary modes a figure per mode, the table's the mode with the most. */
typedef struct ratio_fig {
    bb_ratio_figure_t r;  /* the figure shown */
    bb_paired_t all;      /* when paired: every round */
    int64_t dropped;      /* rounds the canary marked (a switch inside) */
    int modes;            /* canary modes of the set's unmarked rounds */
    int mode;             /* the mode the figure is from: the most rounds */
    double mode_level[BB_CANARY_MODES_MAX];
    bb_paired_t by_mode[BB_CANARY_MODES_MAX];
    int implausible;      /* a containing row's interval wholly below 1 */
} ratio_fig_t;

static void ratio_figure(const bb_run_t *run, const bb_row_t *a, const bb_row_t *b,
                         int contains, ratio_fig_t *f)
{
    double level = run->settings.confidence;
    memset(f, 0, sizeof *f);
    const double *sa = bb_measure_part(&a->m, 0), *sb = bb_measure_part(&b->m, 0);
    size_t n = (size_t)a->m.samples;
    unsigned char *drop = malloc(n + 1), *only = malloc(n + 1);
    int *mode = malloc((n + 1) * sizeof *mode);
    int paired = rows_paired(run, a, b) && drop != NULL && only != NULL && mode != NULL;
    if (paired) {
        f->dropped = bb_measure_canary_switches(&a->m, drop);
        f->modes = bb_measure_canary_modes(&a->m, drop, mode, f->mode_level);
        paired = f->modes > 0 && bb_stats_paired(sa, sb, NULL, n, level, &f->all) == BB_OK;
    }
    /* The ratio of two rows can itself depend on the machine's mode (a copy
     * costs a larger share of a call when the path is fast): each mode gets
     * its paired figure. */
    int64_t most = -1;
    for (int m = 0; paired && m < f->modes; m++) {
        int64_t count = 0;
        for (size_t k = 0; k < n; k++) {
            only[k] = (unsigned char)(mode[k] != m);
            count += mode[k] == m;
        }
        paired = bb_stats_paired(sa, sb, only, n, level, &f->by_mode[m]) == BB_OK;
        if (count > most) {
            most = count;
            f->mode = m;
        }
    }
    if (paired && bb_measure_round_mask(a->m.canary, a->m.samples, only) < 0)
        paired = 0;
    bb_ratio_figure(sa, n, bb_row_median(a, 0), sb, (size_t)b->m.samples, bb_row_median(b, 0),
                    !paired, paired ? only : NULL, level, &f->r);
    f->implausible = contains && !isnan(f->r.high) && f->r.high < 1.0;
    free(drop);
    free(only);
    free(mode);
}

/* The table's cell of a ratio: bb_ratio_text's, and '~' when the rounds
 * fell in several canary modes (the figure is the mode with the most). */
static void ratio_cell(bb_table_t *t, const ratio_fig_t *f)
{
    char cell[48];
    bb_ratio_figure_text(&f->r, cell, sizeof cell - 1);
    if (f->r.paired && f->modes > 1)
        strcat(cell, "~");
    bb_table_text(t, cell);
}

static cJSON *ratio_json(const bb_run_t *run, const bb_row_t *a, const bb_row_t *b,
                         const ratio_fig_t *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "of", a->label);
    cJSON_AddStringToObject(o, "to", b->label);
    cJSON_AddNumberToObject(o, "of_medians", f->r.of_medians);
    cJSON *p = cJSON_CreateNull();
    if (f->r.paired) {
        cJSON_Delete(p);
        p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "median", f->r.pair.median);
        cJSON_AddNumberToObject(p, "rounds", (double)f->r.pair.rounds);
        cJSON_AddItemToObject(p, "ci", bb_interval_json(&f->r.pair.ci));
        cJSON_AddNumberToObject(p, "rounds_dropped", (double)f->dropped);
        cJSON_AddStringToObject(p, "meaning", "median over rounds k of of.samples[k] / "
                                "to.samples[k] (both rows' sample k taken in round k), "
                                "without the rounds whose canaries differ by more than the "
                                "switch factor (pairing.canary); with rounds in several "
                                "canary modes, over the mode with the most rounds (by_mode "
                                "has each)");
        if (f->modes > 1) {
            cJSON *bm = cJSON_CreateArray();
            for (int m = 0; m < f->modes; m++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "canary_s", f->mode_level[m]);
                cJSON_AddNumberToObject(e, "median", f->by_mode[m].median);
                cJSON_AddNumberToObject(e, "rounds", (double)f->by_mode[m].rounds);
                cJSON_AddItemToObject(e, "ci", bb_interval_json(&f->by_mode[m].ci));
                cJSON_AddBoolToObject(e, "resolved", f->by_mode[m].resolved);
                cJSON_AddBoolToObject(e, "shown", m == f->mode);
                cJSON_AddItemToArray(bm, e);
            }
            cJSON_AddItemToObject(p, "by_mode", bm);
        }
        if (f->dropped > 0 || f->modes > 1) {
            cJSON *all = cJSON_CreateObject();
            cJSON_AddNumberToObject(all, "median", f->all.median);
            cJSON_AddNumberToObject(all, "rounds", (double)f->all.rounds);
            cJSON_AddItemToObject(all, "ci", bb_interval_json(&f->all.ci));
            cJSON_AddItemToObject(p, "every_round", all);
        }
    }
    cJSON_AddItemToObject(o, "paired", p);
    if (!f->r.paired)
        cJSON_AddStringToObject(o, "paired_reason", run->desc->alone
                                ? "a row measured alone, not in rounds with the other"
                                : "the rows' sample counts differ");
    cJSON_AddItemToObject(o, "interval", bb_ratio_figure_interval_json(&f->r));
    cJSON_AddStringToObject(o, "interval_from", f->r.paired ? "paired"
                            : "conservative: of.ci.low / to.ci.high, of.ci.high / to.ci.low");
    cJSON_AddNumberToObject(o, "level", f->r.level);
    cJSON_AddBoolToObject(o, "resolved", f->r.resolved);
    cJSON_AddBoolToObject(o, "moved", f->r.moved);
    cJSON_AddBoolToObject(o, "implausible", f->implausible);
    return o;
}

/* ---- the point's key ------------------------------------------------------- */

static void key_columns(bb_run_t *run)
{
    for (const bb_key_t *k = run->desc->keys; k != NULL && k->column != NULL; k++)
        bb_table_column(run->table, k->column, k->unit, k->legend, k->width);
}

static void key_cells(bb_run_t *run, void *state)
{
    const bb_bench_desc_t *d = run->desc;
    for (int k = 0; d->keys != NULL && d->keys[k].column != NULL; k++) {
        bb_key_value_t v = {0};
        d->key_value(run, state, k, &v);
        if (v.missing)
            bb_table_missing(run->table);
        else if (d->keys[k].kind == BB_KEY_TEXT)
            bb_table_text(run->table, v.text);
        else if (d->keys[k].kind == BB_KEY_NUMBER)
            bb_table_number(run->table, v.number, 1);
        else
            bb_table_integer(run->table, v.integer);
    }
}

static void key_parameters(bb_run_t *run, void *state, cJSON *params)
{
    const bb_bench_desc_t *d = run->desc;
    for (int k = 0; d->keys != NULL && d->keys[k].column != NULL; k++) {
        const bb_key_t *key = &d->keys[k];
        bb_key_value_t v = {0};
        if (key->param == NULL)
            continue;
        d->key_value(run, state, k, &v);
        if (v.missing)
            continue;
        if (key->kind == BB_KEY_TEXT)
            cJSON_AddStringToObject(params, key->param, v.text);
        else
            cJSON_AddNumberToObject(params, key->param,
                                    key->kind == BB_KEY_NUMBER ? v.number : (double)v.integer);
    }
}

/* How every figure of the table was taken: the same words in every
 * benchmark of variants. */
static void times_note(bb_run_t *run)
{
    const bb_bench_desc_t *d = run->desc;
    int alone = 0;
    for (int r = 0; r < run->nrows; r++)
        alone |= (d->alone >> run->rows[r].variant) & 1u;
    const char *fixed = run->settings.reps > 0 ? "the reps given"
                        : d->share == BB_SHARE_FIRST ? "one reps figure, the leading row's"
                        : d->share == BB_SHARE_MIN ? "one reps figure, the fewest any row fits "
                                                     "to the budget"
                        : NULL;
    char reps[160];
    if (fixed != NULL)
        snprintf(reps, sizeof reps, "%s", fixed);
    else
        snprintf(reps, sizeof reps, "one reps figure, the fewest any row fits to the budget, "
                 "unless a row fits more than %dx the fewest: then each row its own "
                 "(measurement.reps)", BB_SHARE_FIT_SPREAD);
    char samples[96];
    if (run->settings.until_rel > 0.0)
        snprintf(samples, sizeof samples, "%lld to %lld samples a point (--until-ci %g)",
                 (long long)run->settings.samples, (long long)run->settings.max_samples,
                 run->settings.until_rel);
    else
        snprintf(samples, sizeof samples, "%lld samples a point",
                 (long long)run->settings.samples);
    bb_table_note(run->table, "times: microseconds per call; %s, each the "
                  "mean over a block of calls, the %s; the rows' samples interleaved (sample "
                  "k of every row before sample k + 1: one round) with %s%s",
                  samples, bb_run_rank_stat_words(run), reps,
                  alone ? " (rows measured alone before the others: their own)" : "");
}

/* A row's parts shown as columns of their own (bb_variant_t.shown). */
static void shown_columns(bb_run_t *run, const bb_row_t *row)
{
    const bb_bench_desc_t *d = run->desc;
    char name[96], legend[256];
    for (int p = 1; p < d->nparts; p++) {
        if (!(d->variants[row->variant].shown & (1u << p)))
            continue;
        const char *dot = strrchr(d->part_names[p], '.');
        snprintf(name, sizeof name, "%s_%s", row->label, dot ? dot + 1 : d->part_names[p]);
        snprintf(legend, sizeof legend, "the %s part of %s_us in its median sample (%s)",
                 dot ? dot + 1 : d->part_names[p], row->label, bb_run_parts_words(run));
        bb_table_column(run->table, name, "us", legend, 10);
    }
}

/* The columns of a table of one line per row. */
static void long_columns(bb_run_t *run, void *state)
{
    const bb_bench_desc_t *d = run->desc;
    const bb_long_table_t *lt = d->long_table;
    bb_table_t *t = run->table;
    bb_table_column(t, lt->label_column, NULL, lt->label_legend, lt->label_width);
    if (lt->tag_column != NULL)
        bb_table_column(t, lt->tag_column, NULL, lt->tag_legend, lt->tag_width);
    bb_table_time_columns(t, lt->time_column, lt->time_legend, run->full);
    if (run_intervals(run))
        bb_table_ci_columns(t, lt->time_column, run->settings.confidence);
    if (d->row_columns != NULL)
        d->row_columns(run, state, NULL);
    if (d->point_columns != NULL)
        d->point_columns(run, state);
    bb_table_column(t, "status", NULL, lt->status_legend, 0);
}

void bb_variants_columns(bb_run_t *run, void *state)
{
    const bb_bench_desc_t *d = run->desc;
    bb_table_t *t = run->table;
    char name[128], legend[640];
    if (run->nrows == 0)
        return;  /* the benchmark's own point (desc->point) this run */
    times_note(run);
    key_columns(run);
    if (d->long_table != NULL) {
        long_columns(run, state);
        return;
    }
    for (int r = 0; r < run->nrows; r++) {
        const bb_row_t *row = &run->rows[r];
        bb_columns_t c = d->variants[row->variant].columns;
        if (c == BB_COLUMNS_TIMES || (c == BB_COLUMNS_MEDIAN_FULL && run->full)) {
            bb_table_time_columns(t, row->label, row->legend, run->full);
            if (run_intervals(run))
                bb_table_ci_columns(t, row->label, run->settings.confidence);
        } else
            bb_table_column(t, row->label, "us", row->legend, 10);
        shown_columns(run, row);
        if (d->row_columns != NULL)
            d->row_columns(run, state, row);
    }
    for (int r = 0; r < run->nrows; r++) {
        const bb_row_t *row = &run->rows[r];
        const bb_variant_t *v = &d->variants[row->variant];
        for (int k = 0; k < BB_RUN_RATIOS_MAX && v->ratios[k].suffix != NULL; k++) {
            int ref = ratio_ref(run, state, r, k);
            if (ref < 0)
                continue;
            if (v->ratios[k].plain != NULL && strcmp(row->label, v->name) == 0)
                snprintf(name, sizeof name, "%s", v->ratios[k].plain);
            else
                snprintf(name, sizeof name, "%s%s", row->label, v->ratios[k].suffix);
            snprintf(legend, sizeof legend, "%s / %s: the median over rounds of the "
                     "per-round ratio (rows paired by round), else the ratio of the "
                     "medians; ? not resolved (its interval at level %g holds 1.0, or "
                     "too few samples for one); ! the ratio of the medians lies outside "
                     "the paired interval (the machine moved during the run); ~ the rounds "
                     "fell in several canary modes, the figure is the mode with the most "
                     "(the record has each); - on a refused row", row->label,
                     run->rows[ref].label,
                     run->settings.confidence);
            bb_table_column(t, name, NULL, legend, 6);
        }
    }
    if (d->point_columns != NULL)
        d->point_columns(run, state);
    bb_table_column(t, "status", NULL, "ok, refused:STAGE:seqS:rankR (the first refusal: "
                    "its stage, sequence and the lowest rank whose own preflight refused; "
                    "a contract refusal names no rank), or payload-mismatch", 6);
}

/* One line per shown row, then the point's own lines. */
static void long_lines(bb_run_t *run, void *state)
{
    const bb_bench_desc_t *d = run->desc;
    const bb_long_table_t *lt = d->long_table;
    bb_table_t *t = run->table;
    for (int r = 0; r < run->nrows; r++) {
        const bb_row_t *row = &run->rows[r];
        if (d->hidden & (1u << row->variant))
            continue;
        key_cells(run, state);
        bb_table_text(t, row->label);
        if (lt->tag_column != NULL)
            bb_table_text(t, lt->row_tag(run, state, row));
        if (row->off != NULL) {  /* '-' for every figure, and why */
            bb_table_missing_to_last(t);
            bb_table_text(t, "not-measured");
            bb_table_row_end(t);
            bb_table_note(t, "%s: not measured at this point: %s", row->label, row->off);
            continue;
        }
        bb_table_time_cells(t, bb_measure_part(&row->m, 0), (size_t)row->m.samples,
                            row->m.reps, run->full);
        if (run_intervals(run))
            bb_table_ci_cells(t, bb_measure_part(&row->m, 0), (size_t)row->m.samples,
                              run->settings.confidence);
        if (d->row_cells != NULL)
            d->row_cells(run, state, row);
        const char *own = lt->row_status != NULL ? lt->row_status(run, state, row) : NULL;
        char status[96];
        if (own != NULL)
            snprintf(status, sizeof status, "%s", own);
        else if (row->agreed.refused_calls > 0)
            bb_run_format_refusal(&row->agreed.refusal, status, sizeof status);
        else
            snprintf(status, sizeof status, "%s%s",
                     row->agreed.wrong > 0 ? "payload-mismatch" : "ok",
                     row->m.until_met == 0 ? ":ci>" : "");
        bb_table_text(t, status);
        bb_table_row_end(t);
    }
    for (int r = 0; r < run->nrows && lt->hidden_figure != NULL; r++) {
        const bb_row_t *row = &run->rows[r];
        if (!(d->hidden & (1u << row->variant)))
            continue;
        key_cells(run, state);
        bb_table_text(t, d->variants[row->variant].name);
        bb_table_number(t, lt->hidden_figure(run, state, row) * 1e6, 1);
        bb_table_missing_to_last(t);
        bb_table_text(t, "ok");
        bb_table_row_end(t);
    }
    if (lt->point_lines != NULL)
        lt->point_lines(run, state);
}

static void table_row(bb_run_t *run, void *state)
{
    const bb_bench_desc_t *d = run->desc;
    bb_table_t *t = run->table;
    const bb_row_t *refused = NULL, *implausible = NULL;
    int mismatch = 0, unmet = 0;
    key_cells(run, state);
    for (int r = 0; r < run->nrows; r++) {
        const bb_row_t *row = &run->rows[r];
        bb_columns_t c = d->variants[row->variant].columns;
        if (c == BB_COLUMNS_TIMES || (c == BB_COLUMNS_MEDIAN_FULL && run->full)) {
            bb_table_time_cells(t, bb_measure_part(&row->m, 0), (size_t)row->m.samples,
                                row->m.reps, run->full);
            if (run_intervals(run))
                bb_table_ci_cells(t, bb_measure_part(&row->m, 0), (size_t)row->m.samples,
                                  run->settings.confidence);
        } else
            bb_table_number(t, bb_row_median(row, 0) * 1e6, 2);
        for (int p = 1; p < d->nparts; p++)
            if (d->variants[row->variant].shown & (1u << p)) {
                if (row->parts & (1u << p))
                    bb_table_number(t, bb_row_median(row, p) * 1e6, 2);
                else
                    bb_table_missing(t);
            }
        if (d->row_cells != NULL)
            d->row_cells(run, state, row);
        if (refused == NULL && row->agreed.refused_calls > 0)
            refused = row;
        mismatch |= row->agreed.wrong > 0;
        unmet |= row->m.until_met == 0;
    }
    for (int r = 0; r < run->nrows; r++) {
        const bb_row_t *row = &run->rows[r];
        const bb_ratio_t *ratios = d->variants[row->variant].ratios;
        for (int k = 0; k < BB_RUN_RATIOS_MAX && ratios[k].suffix != NULL; k++) {
            int ref = ratio_ref(run, state, r, k);
            if (ref < 0)
                continue;
            if (row->agreed.refused_calls > 0 || run->rows[ref].agreed.refused_calls > 0) {
                bb_table_missing(t);
                continue;
            }
            ratio_fig_t f;
            ratio_figure(run, row, &run->rows[ref], ratios[k].contains, &f);
            ratio_cell(t, &f);
            run->implausible += f.implausible;
            if (f.implausible && implausible == NULL)
                implausible = row;
        }
    }
    if (d->point_cells != NULL)
        d->point_cells(run, state);
    char status[96];
    if (refused != NULL)
        bb_run_format_refusal(&refused->agreed.refusal, status, sizeof status);
    else if (implausible != NULL)
        snprintf(status, sizeof status, "implausible:%s", implausible->label);
    else
        snprintf(status, sizeof status, "%s%s", mismatch ? "payload-mismatch" : "ok",
                 unmet ? ":ci>" : "");
    bb_table_text(t, status);
    bb_table_row_end(t);
}

/* ---- the record ----------------------------------------------------------- */

/* The part that directly holds timed part j ("a" for "a.b"; elapsed for a
 * part under no other). */
static int part_parent(const bb_bench_desc_t *d, unsigned parts, int j)
{
    int parent = 0;
    size_t best = 0;
    for (int k = 1; k < d->nparts; k++) {
        size_t len = strlen(d->part_names[k]);
        if (k != j && (parts & (1u << k)) && len > best
            && strncmp(d->part_names[j], d->part_names[k], len) == 0
            && d->part_names[j][len] == '.') {
            parent = k;
            best = len;
        }
    }
    return parent;
}

/* The parts that part i directly holds, NULL-terminated in inc; their
 * number. */
static int part_includes(const bb_bench_desc_t *d, const bb_row_t *row, int i,
                         const char *inc[BB_RUN_PARTS_MAX + 1])
{
    int n = 0;
    for (int j = 1; j < d->nparts && n < BB_RUN_PARTS_MAX; j++)
        if (j != i && (row->parts & (1u << j)) && part_parent(d, row->parts, j) == i)
            inc[n++] = d->part_names[j];
    inc[n] = NULL;
    return n;
}

/* The cold first call's part i, with what it includes. */
static cJSON *part_first(const bb_bench_desc_t *d, const bb_row_t *row, int i)
{
    const char *inc[BB_RUN_PARTS_MAX + 1];
    part_includes(d, row, i, inc);
    return bb_quantity_includes(bb_quantity_value(row->m.first[i], "s",
                                                  bb_measure_scope(&row->m)), inc);
}

/* A timing quantity of part i with what it includes. */
static cJSON *part_timing(const bb_bench_desc_t *d, const bb_row_t *row, int i)
{
    const char *inc[BB_RUN_PARTS_MAX + 1];
    int n = part_includes(d, row, i, inc);
    cJSON *q = bb_quantity_timing(bb_measure_part(&row->m, i), (size_t)row->m.samples,
                                  bb_measure_scope(&row->m), n > 0 ? inc : NULL);
    if (q != NULL && i > 0)
        cJSON_AddNumberToObject(q, "at_whole_median", bb_measure_part_at_median(&row->m, i));
    return q;
}

/* Minor page faults per call of a row's samples (or of its cold first
 * call): the process's, so a fresh buffer's pages, a trimmed heap grown
 * again and MPI's temporaries all count; null where getrusage failed. */
static cJSON *faults_quantity(const bb_measure_result_t *m, int first)
{
    const double *v = first ? &m->first[m->nparts + m->ncounts + 1] : m->faults;
    size_t n = first ? 1 : (size_t)m->samples;
    cJSON *q = NULL;
    for (size_t k = 0; k < n; k++)
        if (v[k] < 0.0)
            q = bb_quantity_null("count", "call/max-rank", "getrusage failed");
    if (q == NULL)
        q = first ? bb_quantity_value(v[0], "count", "call/max-rank")
                  : bb_quantity_samples(v, n, "count", "call/max-rank", NULL);
    /* A measurement even as one value: it depends on what ran before. */
    if (q != NULL)
        cJSON_AddBoolToObject(q, "deterministic", 0);
    return q;
}

/* The calls a sample block of this row timed: fitted to the budget (it
 * follows the probe's speed and, under BB_SHARE_FIT, the rows beside it) or
 * given by --reps, a setting; never a contract of the code. */
static cJSON *reps_quantity(const bb_measure_result_t *m)
{
    cJSON *q = bb_quantity_value((double)m->reps, "count", "point");
    if (q != NULL)
        cJSON_AddBoolToObject(q, "deterministic", 0);
    return q;
}

/* The canaries of a set (rank 0's): before each round and after the last,
 * and the rounds they mark. */
static cJSON *canary_json(const bb_run_t *run, const bb_measure_result_t *m)
{
    if (run->settings.canary_calls == 0 || bb_run_size(run) < 2)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *v = cJSON_CreateArray(), *marked = cJSON_CreateArray();
    for (int64_t k = 0; k <= m->samples; k++)
        cJSON_AddItemToArray(v, m->canary[k] > 0.0 ? cJSON_CreateNumber(m->canary[k])
                                                   : cJSON_CreateNull());
    unsigned char stack[256], *drop = m->samples <= 256 ? stack : malloc((size_t)m->samples);
    for (int64_t k = 0; drop != NULL && bb_measure_canary_switches(m, drop) > 0
                        && k < m->samples; k++)
        if (drop[k])
            cJSON_AddItemToArray(marked, cJSON_CreateNumber((double)k));
    if (drop != stack)
        free(drop);
    cJSON_AddItemToObject(o, "values_s", v);
    cJSON_AddItemToObject(o, "rounds_marked", marked);
    cJSON_AddNumberToObject(o, "switch_factor", BB_CANARY_SWITCH);
    return o;
}

/* What a record point says of its rounds: the set its samples were taken
 * in (sample k of every point of one set in round k), the stopping rule's
 * verdict, and the ratios of its rows with their intervals. */
static void point_rounds(bb_run_t *run, void *state, int from, int to, cJSON *point)
{
    const bb_bench_desc_t *d = run->desc;
    const bb_row_t *row = &run->rows[from];
    cJSON *pairing = cJSON_CreateNull();
    if (!((d->alone >> row->variant) & 1u)) {
        cJSON_Delete(pairing);
        pairing = cJSON_CreateObject();
        cJSON_AddNumberToObject(pairing, "set", (double)run->point_index);
        cJSON_AddNumberToObject(pairing, "rounds", (double)row->m.samples);
        cJSON_AddStringToObject(pairing, "meaning", "sample k of every point of this set "
                                "was taken in round k (rows interleaved)");
        cJSON_AddItemToObject(pairing, "canary", canary_json(run, &row->m));
    }
    cJSON_AddItemToObject(point, "pairing", pairing);
    if (run->settings.until_rel > 0.0) {
        cJSON *st = cJSON_CreateObject();
        cJSON_AddBoolToObject(st, "met", row->m.until_met == 1);
        cJSON_AddNumberToObject(st, "samples", (double)row->m.samples);
        cJSON_AddItemToObject(st, "widest_half_width_rel",
                              isnan(row->m.until_widest)
                                  ? cJSON_CreateNull()
                                  : cJSON_CreateNumber(row->m.until_widest));
        cJSON_AddItemToObject(point, "stopping", st);
    }
    cJSON *ratios = cJSON_CreateObject();
    char name[128];
    for (int r = from; r < to; r++) {
        const bb_row_t *w = &run->rows[r];
        const bb_variant_t *v = &d->variants[w->variant];
        for (int k = 0; k < BB_RUN_RATIOS_MAX && v->ratios[k].suffix != NULL; k++) {
            int ref = ratio_ref(run, state, r, k);
            if (ref < 0 || w->agreed.refused_calls > 0
                || run->rows[ref].agreed.refused_calls > 0 || run->rows[ref].off != NULL)
                continue;
            ratio_fig_t f;
            ratio_figure(run, w, &run->rows[ref], v->ratios[k].contains, &f);
            if (v->ratios[k].plain != NULL && strcmp(w->label, v->name) == 0)
                snprintf(name, sizeof name, "%s", v->ratios[k].plain);
            else
                snprintf(name, sizeof name, "%s%s", w->label, v->ratios[k].suffix);
            cJSON_AddItemToObject(ratios, name, ratio_json(run, w, &run->rows[ref], &f));
        }
    }
    if (ratios->child != NULL)
        cJSON_AddItemToObject(point, "ratios", ratios);
    else
        cJSON_Delete(ratios);
}

/* Record point of rows [from, to): one row, or every row of a merged
 * point (the whole call of each under its variant's name). */
static void record_rows(bb_run_t *run, void *state, int from, int to)
{
    const bb_bench_desc_t *d = run->desc;
    const bb_row_t *row = &run->rows[from], *refused = NULL;
    int payload = 0;
    cJSON *q = cJSON_CreateObject(), *first = cJSON_CreateObject();
    for (int r = from; r < to; r++) {
        const bb_row_t *w = &run->rows[r];
        const bb_variant_t *v = &d->variants[w->variant];
        if (refused == NULL && w->agreed.refused_calls > 0)
            refused = w;
        payload |= v->payload;
        for (int i = 0; i < d->nparts; i++) {
            const char *name = i == 0 && d->merged ? v->name : d->part_names[i];
            if (!(w->parts & (1u << i))) {
                if (!d->merged)  /* a merged point's other rows time it */
                    bb_quantities_add(q, name, bb_quantity_null("s", scope_call, w->absent));
                continue;
            }
            bb_quantities_add(q, name, part_timing(d, w, i));
            bb_quantities_add(first, name, part_first(d, w, i));
        }
        if (!d->merged) {
            bb_quantities_add(q, "window.calls_excluded", bb_run_excluded_quantity(run, &w->m));
            bb_quantities_add(q, "memory.minor_faults", faults_quantity(&w->m, 0));
            bb_quantities_add(q, "measurement.reps", reps_quantity(&w->m));
            bb_quantities_add(first, "memory.minor_faults", faults_quantity(&w->m, 1));
        }
    }
    bb_quantities_add(q, "communication.payload",
                      !payload ? bb_quantity_null("byte", "call/rank", row->absent)
                      : refused ? bb_quantity_null("byte", "call/rank",
                                                   "refused: no payload was posted")
                      : bb_quantity_value((double)run->payload_bytes, "byte", "call/rank"));
    bb_quantities_add(q, "memory.rss_peak",
                      bb_quantity_value((double)row->agreed.rss_peak, "byte", "run/max-rank"));
    bb_quantities_add_unobservable(q);
    const bb_row_t *own = d->merged ? NULL : row;
    cJSON *census = d->quantities != NULL ? d->quantities(run, state, own, q) : NULL;
    if (d->first_call != NULL)
        d->first_call(run, state, own, first);
    cJSON *params = cJSON_CreateObject();
    key_parameters(run, state, params);
    if (d->parameters != NULL)
        d->parameters(run, state, own, params);
    if (!d->merged)
        cJSON_AddStringToObject(params, d->mode_key ? d->mode_key : "mode",
                                d->variants[row->variant].name);
    bb_record_t *rec = bb_bench_record(run->bench);
    bb_record_add_point(rec, params, refused ? "refused" : "ok",
                        refused ? &refused->agreed.refusal : NULL, first, q);
    cJSON *points = cJSON_GetObjectItemCaseSensitive(bb_record_json(rec), "points");
    cJSON *last = cJSON_GetArrayItem(points, cJSON_GetArraySize(points) - 1);
    if (census != NULL && (last == NULL || !cJSON_AddItemToObject(last, "census", census)))
        cJSON_Delete(census);
    if (last != NULL)
        point_rounds(run, state, from, to, last);
    if (last != NULL && d->point_added != NULL)
        d->point_added(run, state, own, last);
}

void bb_variants_modes(bb_run_t *run)
{
    const bb_bench_desc_t *d = run->desc;
    cJSON *section = bb_run_section(run);
    if (section == NULL || d->variants == NULL || run->nrows == 0)
        return;
    cJSON *modes = cJSON_CreateObject();
    for (int v = 0; v < d->nvariants; v++)
        for (int r = 0; r < run->nrows && !(d->hidden & (1u << v)); r++)
            if (run->rows[r].variant == v) {
                cJSON_AddStringToObject(modes, d->variants[v].name, d->variants[v].differs);
                break;
            }
    cJSON_AddItemToObject(section, "modes", modes);
}

/* ---- one point ------------------------------------------------------------ */

int bb_variants_point(bb_run_t *run, void *state, size_t i)
{
    const bb_bench_desc_t *d = run->desc;
    bb_measure_variant_t mv[BB_RUN_ROWS_MAX], sv[BB_RUN_ROWS_MAX];
    bb_measure_result_t res[BB_RUN_ROWS_MAX];
    row_arg_t args[BB_RUN_ROWS_MAX];
    int set[BB_RUN_ROWS_MAX], n = 0;
    memset(res, 0, sizeof res);
    for (int r = 0; r < run->nrows; r++)
        run->rows[r].off = NULL;
    run->point_index = (int64_t)i;
    run->payload_bytes = d->point_begin != NULL ? d->point_begin(run, state, i) : 0;
    for (int r = 0; r < run->nrows; r++) {
        bb_row_t *row = &run->rows[r];
        memset(&row->local, 0, sizeof row->local);
        row->local.refusal.rank = -1;
        int nparts = (d->hidden & (1u << row->variant)) && d->hidden_nparts > d->nparts
                     ? d->hidden_nparts : d->nparts;
        args[r] = (row_arg_t){ run, state, row };
        mv[r] = (bb_measure_variant_t){ .nparts = nparts,
                                        .ncounts = d->ncounts,
                                        .call = row_call, .arg = &args[r],
                                        .block_end = d->block_end ? row_block_end : NULL };
    }
    /* The rows measured alone, each with its own reps; then the others as
     * one interleaved set, the leading rows first. */
    for (int r = 0; r < run->nrows; r++)
        if ((d->alone & (1u << run->rows[r].variant)) && run->rows[r].off == NULL)
            bb_run_measure(run, run->rows[r].label, &mv[r], &run->rows[r].m);
    if (d->point_ready != NULL)
        d->point_ready(run, state);
    for (int lead = 1; lead >= 0; lead--)
        for (int r = 0; r < run->nrows; r++) {
            unsigned bit = 1u << run->rows[r].variant;
            if (!(d->alone & bit) && ((d->lead & bit) != 0) == lead && run->rows[r].off == NULL)
                sv[n] = mv[r], set[n++] = r;
        }
    if (n > 0)
        bb_run_measure_set(run, d->benchmark, sv, n,
                           d->share != BB_SHARE_NONE ? d->share : BB_SHARE_FIT, res);
    for (int k = 0; k < n; k++)
        run->rows[set[k]].m = res[k];
    if (d->point_end != NULL)
        d->point_end(run, state);
    agree_tallies(run);
    if (bb_run_rank(run) == 0) {
        if (d->long_table != NULL)
            long_lines(run, state);
        else
            table_row(run, state);
        int step = d->merged ? run->nrows : 1;  /* rows per record point */
        for (int r = 0; r < run->nrows; r += step)
            if (!(d->hidden & (1u << run->rows[r].variant)) && run->rows[r].off == NULL)
                record_rows(run, state, r, r + step);
    }
    int code = BB_EXIT_OK;
    char point[256] = "";
    if (d->label != NULL)
        d->label(state, i, point, sizeof point);
    else
        snprintf(point, sizeof point, "point %zu", i + 1);
    int asked = d->refusal_asked != NULL && d->refusal_asked(state);
    for (int r = 0; r < run->nrows; r++) {
        const bb_row_t *row = &run->rows[r];
        if (row->agreed.refused_calls > 0 && !asked) {
            bb_run_note(run, "error: %s %s refused (%s) without a refusal being asked for",
                        row->label, point, bb_stage_name(row->agreed.refusal.stage));
            code = BB_EXIT_FAILURE;
        }
        if (row->agreed.wrong > 0) {
            bb_run_note(run, "error: %s %s: payload check failed (%lld wrong values on "
                        "the worst rank)", row->label, point,
                        (long long)row->agreed.wrong);
            code = BB_EXIT_FAILURE;
        }
    }
    if (d->point_check != NULL && d->point_check(run, state) != BB_EXIT_OK)
        code = BB_EXIT_FAILURE;
    for (int r = 0; r < run->nrows; r++)
        bb_measure_result_clear(&run->rows[r].m);
    return code;
}
