/* candidate.c: a redistribution method measured at one point of
 * bbench-redist: its plans (setup timed apart, once per plan), the message
 * kernel (filled and checked outside its timing), and what its table line
 * and record point hold beyond the runner's times. */
#include "config.h"
#include "redist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bb_setup_names[BB_SETUP_PARTS] = {
    "setup.total", "setup.validate", "setup.map_transfer", "setup.plan_build", "setup.trial"
};
static const char *const bb_setup_includes[] = {
    "setup.validate", "setup.map_transfer", "setup.plan_build", NULL
};

bb_redist_plan_t *bb_rd_point_plan(const bb_rd_point_t *pt, bb_redist_method_t method,
                                   bb_redist_setup_t *setup_out)
{
    bb_redist_plan_t *plan = NULL;
    bb_status_t st = bb_redist_plan_create(pt->link, method, pt->command, pt->element_bytes,
                                           pt->dmap, pt->emap, &plan, setup_out);
    if (st == BB_REFUSED)
        bb_run_fatal(pt->run, "the generated maps were refused (a generator bug)");
    if (st != BB_OK)
        bb_run_fatal(pt->run, "plan for %s: %s", bb_redist_method_name(method),
                     bb_status_string(st));
    return plan;
}

/* Whether a setup part is in c's record: the trial only for auto. */
static int bb_setup_recorded(const bb_rd_candidate_t *c, int part)
{
    return part != BB_SETUP_TRIAL || c->method == BB_REDIST_AUTO;
}

/* One plan's setup, its parts from the rank with the slowest total (or the
 * rank means), appended to the candidate's samples; trial_s: auto's trial
 * on this rank (0 for the other methods). */
static void bb_setup_push(bb_rd_candidate_t *c, const bb_redist_setup_t *su, double trial_s)
{
    const bb_rd_point_t *pt = c->pt;
    double local[BB_SETUP_PARTS] = {su->total_s, su->validate_s, su->map_transfer_s,
                                    su->plan_build_s, trial_s};
    double agreed[BB_SETUP_PARTS];
    if (bb_stats_reduce_rank(pt->comm, pt->rank_stat, local, BB_SETUP_PARTS, agreed, NULL)
            != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Allreduce of setup times failed");
    if (c->nsetup == c->setup_cap) {
        c->setup_cap = c->setup_cap ? 2 * c->setup_cap : 8;
        for (int i = 0; i < BB_SETUP_PARTS; i++) {
            c->setup[i] = realloc(c->setup[i], c->setup_cap * sizeof(double));
            if (c->setup[i] == NULL)
                bb_run_fatal(pt->run, "out of memory");
        }
    }
    for (int i = 0; i < BB_SETUP_PARTS; i++)
        c->setup[i][c->nsetup] = agreed[i];
    c->nsetup++;
}

/* One message's buffers filled (send: message k's values, recv: the
 * sentinel), the ranks lined up, the message made; its time in *elapsed. */
static bb_status_t bb_message_run(bb_rd_candidate_t *c, int64_t k, bb_redist_metrics_t *m,
                                  double *elapsed)
{
    const bb_rd_point_t *pt = c->pt;
    int64_t eb = pt->element_bytes;
    bb_rd_buffers_t *b = &c->b;
    if (b->sm)
        bb_rd_fill(b->sm, eb, k, b->send);
    if (b->rm)
        bb_rd_fill_sentinel(bb_map_count(b->rm), eb, b->recv);
    bb_redist_contract_t contract = {pt->command, pt->n, eb, pt->n};
    if (MPI_Barrier(pt->comm) != MPI_SUCCESS)
        bb_run_fatal(pt->run, "MPI_Barrier failed");
    double t0 = bb_time_now();
    bb_status_t st = bb_redist_plan_execute(c->plan, &contract, b->send, b->recv, m);
    *elapsed = bb_time_now() - t0;
    return st;
}

/* auto's trial on c's plan (its buffers got): every trial message made and
 * checked (fatal when refused, failed or wrong: the contracts are right);
 * this rank's time in them, the fills and checks outside it. */
static double bb_trial(bb_rd_candidate_t *c)
{
    const bb_rd_point_t *pt = c->pt;
    double spent = 0;
    while (bb_redist_plan_trial_left(c->plan) > 0) {
        int64_t k = c->k++;
        bb_redist_metrics_t m;
        double elapsed;
        bb_status_t st = bb_message_run(c, k, &m, &elapsed);
        if (st != BB_OK)
            bb_run_fatal(pt->run, "auto's trial %c: %s", pt->command, bb_status_string(st));
        spent += elapsed;
        bb_rd_check_t ck;
        st = bb_rd_check(pt->comm, c->b.rm, pt->n, pt->element_bytes, k, c->b.recv, &ck);
        if (st == BB_ERR_VALIDATION)
            bb_run_fatal(pt->run, "auto's trial %c N=%lld message %lld: %lld wrong slots",
                         pt->command, (long long)pt->n, (long long)k,
                         (long long)ck.bad_slots);
        if (st != BB_OK)
            bb_run_fatal(pt->run, "check: %s", bb_status_string(st));
    }
    return spent;
}

/* A new plan of c's method with its buffers in c (auto's trial run), its
 * setup pushed. */
static void bb_plan_with_setup(bb_rd_candidate_t *c)
{
    const bb_rd_point_t *pt = c->pt;
    bb_redist_setup_t su;
    c->plan = bb_rd_point_plan(pt, c->method, &su);
    bb_rd_buffers_get(pt->run, c->plan, pt->element_bytes, &c->b);
    bb_setup_push(c, &su, c->method == BB_REDIST_AUTO ? bb_trial(c) : 0.0);
}

void bb_rd_candidate_prepare(bb_rd_candidate_t *c, const bb_rd_point_t *pt,
                             bb_redist_method_t method, int64_t setup_samples)
{
    bb_rd_candidate_clear(c);
    c->pt = pt;
    c->method = method;
    bb_plan_with_setup(c);
    for (int i = 0; i < BB_SETUP_PARTS; i++)
        c->first_setup[i] = c->setup[i][0];
    for (int64_t s = 1; s < setup_samples; s++) {
        bb_rd_buffers_free(&c->b);
        bb_redist_plan_destroy(c->plan);
        bb_plan_with_setup(c);
    }
    if (bb_redist_plan_traffic(c->plan, &c->traffic) != BB_OK)
        bb_run_fatal(pt->run, "traffic: MPI error");
    const char *why = bb_redist_plan_choice_reason(c->plan);
    snprintf(c->choice, sizeof c->choice, "%s", why ? why : "");
    c->setup_median = bb_stats_median(c->setup[BB_SETUP_TOTAL], c->nsetup);
}

/* One message: prepared and checked outside the timing. */
static void bb_message(bb_rd_candidate_t *c, bb_tally_t *tally, double *t)
{
    const bb_rd_point_t *pt = c->pt;
    int64_t eb = pt->element_bytes, k = c->k++;
    bb_rd_buffers_t *b = &c->b;
    bb_redist_metrics_t m;
    double elapsed;
    bb_status_t st = bb_message_run(c, k, &m, &elapsed);
    if (st == BB_REFUSED) {
        tally->refused_calls++;
        return;
    }
    if (st != BB_OK)
        bb_run_fatal(pt->run, "%s %c: %s", bb_redist_method_name(c->method), pt->command,
                     bb_status_string(st));
    t[BB_MESSAGE_ELAPSED] += elapsed;
    t[BB_MESSAGE_ADMISSION] += m.admission_s;
    t[BB_MESSAGE_PAYLOAD] += m.payload_s;
    bb_rd_check_t ck;
    bb_rd_test_corrupt(bb_redist_method_name(c->method), b->rm, b->recv);
    st = bb_rd_check(pt->comm, b->rm, pt->n, eb, k, b->recv, &ck);
    if (st == BB_ERR_VALIDATION) {
        if (tally->wrong++ == 0)
            bb_run_note(pt->run, "error: %s %c N=%lld message %lld: %lld wrong "
                        "slots (first element %lld), checksum %s",
                        bb_redist_method_name(c->method), pt->command, (long long)pt->n,
                        (long long)k, (long long)ck.bad_slots,
                        (long long)ck.first_bad_index, ck.checksum_ok ? "right" : "wrong");
    } else if (st != BB_OK) {
        bb_run_fatal(pt->run, "check: %s", bb_status_string(st));
    }
}

void bb_rd_candidate_message(bb_rd_candidate_t *c, bb_tally_t *tally, double *parts)
{
    const bb_rd_point_t *pt = c->pt;
    if (pt->messages_per_plan > 0 && c->on_plan >= pt->messages_per_plan) {
        bb_rd_buffers_free(&c->b);
        bb_redist_plan_destroy(c->plan);
        bb_plan_with_setup(c);
        c->plans_rebuilt++;
        c->plans_other += bb_redist_plan_chosen(c->plan) != c->traffic.chosen;
        c->on_plan = 0;
    }
    bb_message(c, tally, parts);
    c->on_plan++;
}

void bb_rd_candidate_release(bb_rd_candidate_t *c, const bb_measure_result_t *m)
{
    c->samples = bb_measure_part(m, BB_MESSAGE_ELAPSED);
    c->nsamples = m->samples > 0 ? (size_t)m->samples : 0;
    c->canary = m->canary;
    c->median = bb_stats_median(c->samples, c->nsamples);
    bb_rd_buffers_free(&c->b);
    bb_redist_plan_destroy(c->plan);
    c->plan = NULL;
}

void bb_rd_candidate_clear(bb_rd_candidate_t *c)
{
    bb_rd_buffers_free(&c->b);
    bb_redist_plan_destroy(c->plan);
    for (int i = 0; i < BB_SETUP_PARTS; i++)
        free(c->setup[i]);
    memset(c, 0, sizeof *c);
}

int64_t bb_rd_break_even(const bb_rd_candidate_t *c, const bb_rd_candidate_t *root,
                         const char **why)
{
    *why = NULL;
    if (root == NULL) {
        *why = "root was not measured (--methods)";
        return 0;
    }
    if (c == root) {
        *why = "root is the reference";
        return 0;
    }
    if (!(c->median < root->median)) {
        *why = "never pays: its message is not faster than root's";
        return 0;
    }
    double k = (c->setup_median - root->setup_median) / (root->median - c->median);
    return k < 0 ? 1 : (int64_t)floor(k) + 1;
}

/* ---- a ratio of two figures of one point ----------------------------------------- */

/* The rounds a paired ratio of the point leaves out, or NULL for none
 * (caller frees). */
static unsigned char *round_mask(const double *canary, size_t n)
{
    unsigned char *drop = canary != NULL && n > 0 ? malloc(n) : NULL;
    if (drop != NULL && bb_measure_round_mask(canary, (int64_t)n, drop) < 0) {
        free(drop);
        drop = NULL;
    }
    return drop;
}

void bb_rd_ratio(const double *a, size_t na, double a_median, const double *b, size_t nb,
                 double b_median, const double *canary, double level, bb_ratio_figure_t *r)
{
    unsigned char *drop = round_mask(canary, na);
    bb_ratio_figure(a, na, a_median, b, nb, b_median, 0, drop, level, r);
    free(drop);
}

cJSON *bb_rd_ratio_quantity(const bb_ratio_figure_t *r, const double *a, const double *b,
                            size_t n, const double *canary, const char *scope)
{
    cJSON *q = NULL;
    if (r->paired) {
        /* the rounds bb_stats_paired used: not left out, both finite, b_k > 0 */
        size_t used = (size_t)r->pair.rounds, m = 0;
        double *v = malloc((used > 0 ? used : 1) * sizeof *v);
        unsigned char *drop = round_mask(canary, n);
        for (size_t k = 0; v != NULL && k < n && m < used; k++)
            if ((drop == NULL || !drop[k]) && isfinite(a[k]) && isfinite(b[k]) && b[k] > 0)
                v[m++] = a[k] / b[k];
        free(drop);
        q = v != NULL ? bb_quantity_samples(v, m, "ratio", scope, NULL) : NULL;
        free(v);
        if (q != NULL) {
            /* value stays the ratio of the medians; median is the paired one */
            cJSON_ReplaceItemInObjectCaseSensitive(q, "value",
                                                   cJSON_CreateNumber(r->of_medians));
            cJSON_AddNumberToObject(q, "rounds", (double)r->pair.rounds);
            cJSON_AddStringToObject(q, "meaning", "value: the ratio of the medians; samples: "
                                    "the per-round ratios (both figures' sample k taken in "
                                    "round k), median and ci theirs: the paired figure");
        }
    }
    if (q == NULL) {
        q = bb_quantity_value(r->of_medians, "ratio", scope);
        if (q == NULL)
            return NULL;
        cJSON_AddNullToObject(q, "rounds");
    }
    cJSON_AddItemToObject(q, "interval", bb_ratio_figure_interval_json(r));
    cJSON_AddStringToObject(q, "interval_from", r->paired ? "paired"
                            : "conservative: of the two figures' intervals of the median "
                              "(their samples not taken in the same rounds)");
    cJSON_AddNumberToObject(q, "level", r->level);
    cJSON_AddBoolToObject(q, "resolved", r->resolved);
    cJSON_AddBoolToObject(q, "moved", r->moved);
    return q;
}

void bb_rd_ratio_marks(double level, char *buf, size_t len)
{
    size_t n = 1;
    while (n < 10000 && bb_stats_ci_order(n, level, NULL) == 0)
        n++;
    snprintf(buf, len, "paired over the point's rounds (the median of the per-round ratios, "
             "sample k of each figure taken in round k); '?': its %g%% interval holds 1.0 or "
             "there is none (under %zu rounds), '!': the ratio of the medians lies outside "
             "that interval", level * 100, n);
}

/* c's message over d's, or root's over c's. */
static void bb_cand_ratio(const bb_rd_candidate_t *a, const bb_rd_candidate_t *b,
                          bb_ratio_figure_t *r)
{
    bb_rd_ratio(a->samples, a->nsamples, a->median, b->samples, b->nsamples, b->median,
                a->canary, a->pt->confidence, r);
}

/* ---- the table line ----------------------------------------------------------- */

void bb_rd_candidate_columns(bb_table_t *t, const char *rank_stat_words)
{
    char setup_legend[128];
    bb_table_column(t, "payload", "us", "median of the payload phase alone (medians of "
                    "parts do not add up to msg_us)", 0);
    bb_table_column(t, "hs", "us", "median of the handshake alone (the recv_dist flag and "
                    "the admission, one Allreduce; eager methods: no collective, their "
                    "headers staged and MIN-reduced locally around the exchange)", 0);
    bb_table_column(t, "hs_share", NULL, "hs_us / msg_us: the handshake's part of a "
                    "message", 0);
    snprintf(setup_legend, sizeof setup_legend, "median plan setup (validation, map "
             "transfer, build), %s", rank_stat_words);
    bb_table_column(t, "setup", "us", setup_legend, 0);
    bb_table_column(t, "setup_msgs", NULL, "setup_us / msg_us: the setup in this method's "
                    "messages, measured in the same run", 0);
    bb_table_column(t, "root_x", NULL, "root's msg_us / this msg_us (> 1: faster than root), "
                    BB_REDIST_RATIO_MARKS, 0);
    bb_table_column(t, "breakeven", NULL, "messages K from which setup + K messages cost less "
                    "than root's ('-': root itself, or its message is not faster: never pays)",
                    0);
    bb_table_column(t, "srun_el", NULL, "send side: mean elements per contiguous run "
                    "(all ranks)", 0);
    bb_table_column(t, "rrun_el", NULL, "receive side: mean elements per contiguous run", 0);
    bb_table_column(t, "sruns", NULL, "send side: contiguous runs on the busiest rank", 0);
    bb_table_column(t, "rruns", NULL, "receive side: contiguous runs on the busiest rank", 0);
    bb_table_column(t, "plan", "B", "bytes the plan holds, max over ranks (library-counted; "
                    "MPI's datatype storage not counted)", 0);
    bb_table_column(t, "msgmem", "B", "temporary bytes one message allocates, max over ranks",
                    0);
    bb_table_column(t, "eff", NULL, "bound / msg_us ('-' where the bound failed)", 0);
}

/* A side's mean contiguous run (or, as_count, the busiest rank's runs);
 * '-' where no slot runs on that side. */
static void bb_runs_cell(bb_table_t *t, double mean, int64_t count, int as_count)
{
    if (mean < 0)
        bb_table_missing(t);
    else if (as_count)
        bb_table_integer(t, count);
    else
        bb_table_number(t, mean, 1);
}

void bb_rd_candidate_cells(bb_table_t *t, const bb_rd_candidate_t *c,
                           const bb_rd_candidate_t *root, double payload_median,
                           double handshake_median, int failed,
                           const bb_rd_bound_t *bound)
{
    const bb_redist_traffic_t *tr = &c->traffic;
    bb_table_number(t, payload_median * 1e6, 1);
    bb_table_number(t, handshake_median * 1e6, 1);
    if (c->median > 0)
        bb_table_number(t, handshake_median / c->median, 2);
    else
        bb_table_missing(t);
    bb_table_number(t, c->setup_median * 1e6, 1);
    if (c->median > 0)
        bb_table_number(t, c->setup_median / c->median, 1);
    else
        bb_table_missing(t);
    if (root == c && c->median > 0 && !failed) {
        bb_table_number(t, 1.0, 2);  /* root itself: exactly 1 */
    } else if (root && c->median > 0 && !failed) {
        bb_ratio_figure_t x;
        char cell[48];
        bb_cand_ratio(root, c, &x);
        bb_ratio_figure_text(&x, cell, sizeof cell);
        bb_table_text(t, cell);
    } else {
        bb_table_missing(t);
    }
    const char *why;
    int64_t k = bb_rd_break_even(c, root, &why);
    if (why || failed)
        bb_table_missing(t);
    else
        bb_table_integer(t, k);
    bb_runs_cell(t, tr->send_mean_run_elements, 0, 0);
    bb_runs_cell(t, tr->recv_mean_run_elements, 0, 0);
    bb_runs_cell(t, tr->send_mean_run_elements, tr->send_runs_max, 1);
    bb_runs_cell(t, tr->recv_mean_run_elements, tr->recv_runs_max, 1);
    bb_table_integer(t, tr->plan_bytes_max);
    bb_table_integer(t, tr->message_bytes_max);
    if (!failed && !bb_rd_bound_failed(c, bound) && c->median > 0 && bound->bound_s > 0)
        bb_table_number(t, bound->bound_s / c->median, 3);
    else
        bb_table_missing(t);
}

int bb_rd_bound_failed(const bb_rd_candidate_t *c, const bb_rd_bound_t *bound)
{
    return c->median > 0 && bound->bound_s > c->median;
}

void bb_rd_median_quantities(cJSON *q, double median, const double *samples,
                             size_t nsamples, const bb_rd_candidate_t *root,
                             const bb_rd_bound_t *bound, const char *scope)
{
    cJSON *x;
    if (!(root && median > 0)) {
        x = bb_quantity_null("ratio", scope, root ? "no time measured" : "root was not measured");
    } else if (samples == root->samples) {
        x = bb_quantity_value(root->median / median, "ratio", scope); /* root itself: 1 */
    } else {
        bb_ratio_figure_t r;
        bb_rd_ratio(root->samples, root->nsamples, root->median, samples, nsamples,
                    median, root->canary, root->pt->confidence, &r);
        x = bb_rd_ratio_quantity(&r, root->samples, samples, root->nsamples, root->canary,
                                 scope);
    }
    bb_quantities_add(q, "ratio.root", x);
    bb_quantities_add(q, "efficiency",
                      bound->off ? bb_quantity_null("ratio", scope, BB_REDIST_BOUND_OFF)
                      : !(median > 0 && bound->bound_s > 0)
                          ? bb_quantity_null("ratio", scope, "nothing to move: the bound "
                                             "is zero")
                      : bound->bound_s > median
                          ? bb_quantity_null("ratio", scope, "bound failure: the bound is "
                                             "above the measured median (a bound that "
                                             "does not hold, not a result)")
                          : bb_quantity_value(bound->bound_s / median, "ratio", scope));
}

/* ---- the record point ---------------------------------------------------------- */

void bb_rd_candidate_first(cJSON *first, const bb_rd_candidate_t *c,
                           const char *plan_scope)
{
    for (int i = 0; i < BB_SETUP_PARTS; i++)
        if (bb_setup_recorded(c, i))
            bb_quantities_add(first, bb_setup_names[i],
                              bb_quantity_includes(bb_quantity_value(c->first_setup[i], "s",
                                                                     plan_scope),
                                                   i == BB_SETUP_TOTAL ? bb_setup_includes
                                                                       : NULL));
}

void bb_rd_candidate_quantities(cJSON *q, const bb_rd_candidate_t *c,
                                const bb_rd_candidate_t *root,
                                const bb_redist_traffic_t *direct,
                                const bb_rd_bound_t *bound,
                                const bb_measure_result_t *probe, const bb_row_t *row,
                                const char *plan_scope)
{
    int64_t per_plan = c->pt->messages_per_plan;
    const char *scope = bb_measure_scope(&row->m);
    for (int i = 0; i < BB_SETUP_PARTS; i++)
        if (bb_setup_recorded(c, i))
            bb_quantities_add(q, bb_setup_names[i],
                              bb_quantity_timing(c->setup[i], c->nsetup, plan_scope,
                                                 i == BB_SETUP_TOTAL ? bb_setup_includes : NULL));
    bb_quantities_add(q, "elapsed.amortized",
                      per_plan > 0
                          ? bb_quantity_value(c->median + c->setup_median / (double)per_plan,
                                              "s", scope)
                          : bb_quantity_null("s", scope, "one plan serves every message "
                                             "(--messages 0): see amortize.break_even_messages"));
    const char *why;
    int64_t k = bb_rd_break_even(c, root, &why);
    bb_quantities_add(q, "amortize.break_even_messages",
                      why ? bb_quantity_null("count", "plan", why)
                          : bb_quantity_value((double)k, "count", "plan"));
    /* A duration is never negative: a method slower than root saves
     * nothing (ratio.root says by how much it is slower). */
    bb_quantities_add(q, "amortize.saving_per_message",
                      root && root != c && root->median >= c->median
                          ? bb_quantity_value(root->median - c->median, "s", scope)
                          : bb_quantity_null("s", scope,
                                             !root ? "root was not measured"
                                             : root == c ? "root is the reference"
                                             : "slower than root: no saving (see ratio.root)"));
    /* the plan's bytes over all ranks (not the runner's per rank) */
    bb_quantities_add(q, "communication.payload",
                      bb_quantity_value((double)c->traffic.payload_bytes, "byte",
                                        "call/all-ranks"));
    bb_rd_traffic_quantities(q, direct, &c->traffic, scope);
    /* How many messages were checked follows the reps (and so the budget and
     * the machine's speed): a measurement, never a contract. */
    cJSON *checked = bb_quantity_value((double)(row->m.calls - row->agreed.refused_calls),
                                       "count", "run/rank");
    cJSON_AddFalseToObject(checked, "deterministic");
    bb_quantities_add(q, "redist.messages_checked", checked);
    bb_rd_bound_quantities(q, bound, probe ? bb_measure_part(probe, BB_PROBE_TOTAL) : NULL,
                           probe ? (size_t)probe->samples : 0, scope);
    bb_rd_median_quantities(q, c->median, c->samples, c->nsamples, root, bound, scope);
    bb_quantities_add(q, "redist.wrong_messages",
                      bb_quantity_value((double)row->agreed.wrong, "count", "run/all-ranks"));
    /* auto's choice follows its trial, a measurement: what its plan holds
     * and moves is then one too.  The break-even count follows times
     * everywhere. */
    cJSON *item;
    cJSON_ArrayForEach(item, q) {
        if (c->method == BB_REDIST_AUTO ||
            strcmp(item->string, "amortize.break_even_messages") == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(item, "deterministic");
            cJSON_AddBoolToObject(item, "deterministic", 0);
        }
    }
}

/* ---- the point's notes ----------------------------------------------------------- */

static const bb_rd_candidate_t *bb_find(const bb_rd_candidate_t *c, int n,
                                        bb_redist_method_t method)
{
    for (int i = 0; i < n; i++)
        if (c[i].method == method)
            return &c[i];
    return NULL;
}

void bb_rd_candidates_note(bb_table_t *t, const bb_rd_candidate_t *c, int n, int best,
                           const bb_rd_bound_t *bound, const char *from,
                           const char *to)
{
    const bb_rd_candidate_t *root = bb_find(c, n, BB_REDIST_ROOT),
                                *pack = bb_find(c, n, BB_REDIST_PACK),
                                *direct = bb_find(c, n, BB_REDIST_DIRECT),
                                *pmpi = bb_find(c, n, BB_REDIST_PACK_MPI),
                                *aut = bb_find(c, n, BB_REDIST_AUTO),
                                *ovl = bb_find(c, n, BB_REDIST_OVERLAP);
    char dt[192] = "", ov[96] = "", fig[48];
    bb_ratio_figure_t r;
    if (pack && pack->median > 0 && ovl) { /* one exchange overlapped, the same hand loop */
        bb_cand_ratio(ovl, pack, &r);
        bb_ratio_figure_text(&r, fig, sizeof fig);
        snprintf(ov, sizeof ov, "; overlapped vs pack: overlap/pack %s", fig);
    }
    if (pack && pack->median > 0 && (direct || pmpi)) {
        int len = snprintf(dt, sizeof dt, "; datatype vs hand pack:");
        if (direct) {
            bb_cand_ratio(direct, pack, &r);
            bb_ratio_figure_text(&r, fig, sizeof fig);
            len += snprintf(dt + len, sizeof dt - (size_t)len, " direct/pack %s", fig);
        }
        if (pmpi) {
            bb_cand_ratio(pmpi, pack, &r);
            bb_ratio_figure_text(&r, fig, sizeof fig);
            snprintf(dt + len, sizeof dt - (size_t)len, " pack-mpi/pack %s", fig);
        }
    }
    if (best >= 0) {
        const bb_rd_candidate_t *b = &c[best];
        const bb_rd_point_t *pt = b->pt;
        /* the fragmentation of a plan that maps both layouts: direct's, else
         * the first such method run here (the root methods map neither) */
        const bb_rd_candidate_t *fr = direct;
        for (int i = 0; fr == NULL && i < n; i++)
            if (c[i].traffic.send_mean_run_elements >= 0
                || c[i].traffic.recv_mean_run_elements >= 0)
                fr = &c[i];
        double eb = (double)pt->element_bytes;
        char root_x[64] = "", frag[160] = "";
        if (root != NULL && root != b && b->median > 0) { /* without root, no ratio to it */
            bb_cand_ratio(root, b, &r);
            bb_ratio_figure_text(&r, fig, sizeof fig);
            snprintf(root_x, sizeof root_x, ", root_x %s", fig);
        } else if (root == b && b->median > 0) {
            snprintf(root_x, sizeof root_x, ", root_x 1.00");
        }
        if (fr != NULL) {
            const bb_redist_traffic_t *tr = &fr->traffic;
            snprintf(frag, sizeof frag, "; fragmentation (%s plan): send runs %.1f el = %.0f B "
                     "mean, %lld on the busiest rank; recv runs %.1f el = %.0f B mean, %lld",
                     bb_redist_method_name(fr->method), tr->send_mean_run_elements,
                     tr->send_mean_run_elements * eb, (long long)tr->send_runs_max,
                     tr->recv_mean_run_elements, tr->recv_mean_run_elements * eb,
                     (long long)tr->recv_runs_max);
        }
        bb_table_note(t, "N=%lld '%c' %s->%s: fastest %s (%.1f us%s)%s%s%s",
                      (long long)pt->n, pt->command, from, to,
                      bb_redist_method_name(b->method), b->median * 1e6, root_x, frag, dt, ov);
    }
    if (aut) {
        char other[96] = "";
        if (aut->plans_other > 0) /* each rebuilt plan ran its own trial */
            snprintf(other, sizeof other, "; %lld of %lld rebuilt plans chose another method",
                     (long long)aut->plans_other, (long long)aut->plans_rebuilt);
        bb_table_note(t, "  auto ran %s: %s%s%s", bb_redist_method_name(aut->traffic.chosen),
                      aut->choice, other, best >= 0 && c[best].median > 0
                          ? (aut->median <= 1.1 * c[best].median ? " (within 10% of "
                             "the fastest)" : " (more than 10% slower than the fastest)")
                          : "");
    }
    bb_rd_bound_note(t, bound);
    for (int i = 0; i < n; i++)
        if (bb_rd_bound_failed(&c[i], bound))
            bb_table_note(t, "  BOUND FAILURE: %s's median %.1f us is below the bound %.1f us: "
                          "the bound does not hold here (efficiency not reported)",
                          bb_redist_method_name(c[i].method), c[i].median * 1e6,
                          bound->bound_s * 1e6);
}

void bb_rd_candidates_ratios(const bb_rd_candidate_t *c, int n, int failed_mask,
                             char *buf, size_t len)
{
    const bb_rd_candidate_t *root = bb_find(c, n, BB_REDIST_ROOT);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        int w;
        if (c[i].method == BB_REDIST_ROOT)
            continue;
        if (root && c[i].median > 0 && !(failed_mask & (1 << i))) {
            bb_ratio_figure_t r;
            char fig[48];
            bb_cand_ratio(root, &c[i], &r);
            bb_ratio_figure_text(&r, fig, sizeof fig);
            w = snprintf(buf + used, len - used, " %s %s", bb_redist_method_name(c[i].method),
                         fig);
        } else
            w = snprintf(buf + used, len - used, " %s -", bb_redist_method_name(c[i].method));
        if (w < 0)
            break;
        used += (size_t)w;
    }
}
