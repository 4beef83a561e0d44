/* report.c: the comparison of two record sets into a bbench.compare/1 report:
 * pairs, provenance warnings, the machines' speed, the summary and the exit
 * code.  Part of bbench-compare's comparison (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Provenance compared field by field.  Not here: what differs between any
 * two runs (command, created_utc, the launcher line with its output path,
 * load averages, the kernel rate: the machine-speed check reads those) and
 * the revision (shown in the summary lines). */
static const char *const bb_provenance_fields[] = {
    "runtime.mpi_library", "runtime.mpi_standard",
    "runtime.thread_level_requested", "runtime.thread_level_provided",
    "runtime.timer.source", "runtime.env", "runtime.launcher.name",
    "runtime.launcher.binding.policy",
    "topology.oversubscribed", "topology.threads_per_rank",
    "topology.machine", "source.build", "system.cpu_model", "system.kernel",
    "system.os", NULL};

static void bb_warn_add(cJSON *warnings, const char *field, const cJSON *bv,
                        const cJSON *cv, const bb_set_record_t *b,
                        const bb_set_record_t *c)
{
    /* One warning per distinct difference, however many record pairs
     * share it (a sweep repeats the same provenance in every record). */
    cJSON *w;
    cJSON_ArrayForEach(w, warnings) {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(w, "field")->valuestring, field) == 0 &&
            bb_json_equal(cJSON_GetObjectItemCaseSensitive(w, "base"), bv) &&
            bb_json_equal(cJSON_GetObjectItemCaseSensitive(w, "candidate"), cv)) {
            cJSON *pairs = cJSON_GetObjectItemCaseSensitive(w, "record_pairs");
            cJSON_SetNumberValue(pairs, pairs->valuedouble + 1);
            return;
        }
    }
    w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "field", field);
    cJSON_AddItemToObject(w, "base", bv ? cJSON_Duplicate(bv, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(w, "candidate", cv ? cJSON_Duplicate(cv, 1) : cJSON_CreateNull());
    cJSON_AddStringToObject(w, "base_file", b->path);
    cJSON_AddStringToObject(w, "candidate_file", c->path);
    cJSON_AddNumberToObject(w, "record_pairs", 1);
    cJSON_AddItemToArray(warnings, w);
}

/* Down to the members that differ: objects member by member (both sides'
 * names), anything else (strings, numbers, arrays) as one value.  depth
 * bounds the walk over hostile nesting. */
static void bb_warn_diff(cJSON *warnings, const char *field, const cJSON *bv,
                         const cJSON *cv, const bb_set_record_t *b,
                         const bb_set_record_t *c, int depth)
{
    if (bb_json_equal(bv, cv))
        return;
    if (depth < 4 && cJSON_IsObject(bv) && cJSON_IsObject(cv)) {
        for (int side = 0; side < 2; side++) {
            const cJSON *e;
            const cJSON *from = side ? cv : bv;
            cJSON_ArrayForEach(e, from) {
                if (side == 1 && cJSON_GetObjectItemCaseSensitive(bv, e->string) != NULL)
                    continue;
                if (bb_has_control(e->string))
                    continue;
                bb_buf_t nb = {0};
                bb_buf_printf(&nb, "%s.%s", field, e->string);
                char *name = bb_buf_take(&nb);
                if (name == NULL)
                    continue;
                bb_warn_diff(warnings, name, cJSON_GetObjectItemCaseSensitive(bv, e->string),
                             cJSON_GetObjectItemCaseSensitive(cv, e->string), b, c, depth + 1);
                free(name);
            }
        }
        return;
    }
    /* Arrays of one length (caches, hosts): element by element. */
    if (depth < 4 && cJSON_IsArray(bv) && cJSON_IsArray(cv) &&
        cJSON_GetArraySize(bv) == cJSON_GetArraySize(cv) && cJSON_GetArraySize(bv) <= 64) {
        int k = 0;
        for (const cJSON *x = bv->child, *y = cv->child; x && y; x = x->next, y = y->next) {
            bb_buf_t nb = {0};
            bb_buf_printf(&nb, "%s[%d]", field, k++);
            char *name = bb_buf_take(&nb);
            if (name == NULL)
                continue;
            bb_warn_diff(warnings, name, x, y, b, c, depth + 1);
            free(name);
        }
        return;
    }
    bb_warn_add(warnings, field, bv, cv, b, c);
}

static void bb_warn_provenance(const bb_set_record_t *b, const bb_set_record_t *c,
                               cJSON *warnings)
{
    for (size_t i = 0; bb_provenance_fields[i]; i++) {
        const char *field = bb_provenance_fields[i];
        const cJSON *bv = bb_json_path(b->doc, field);
        const cJSON *cv = bb_json_path(c->doc, field);
        /* A field an older record lacks is not a difference of machines. */
        if (bv == NULL || cv == NULL)
            continue;
        bb_warn_diff(warnings, field, bv, cv, b, c, 0);
    }
}

/* Add the string to the array unless it is there already. */
static void bb_add_distinct(cJSON *array, const char *text)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, array)
        if (strcmp(e->valuestring, text) == 0)
            return;
    if (cJSON_GetArraySize(array) < 64)
        cJSON_AddItemToArray(array, cJSON_CreateString(text));
}

static void bb_add_number_or_null(cJSON *o, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, name, v);
    else
        cJSON_AddNullToObject(o, name);
}

/* One side of the report: its records, the revisions and hosts they were
 * made on, and what the records say of the machine's speed. */
static cJSON *bb_set_summary(const bb_record_set_t *set)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", set->path);
    cJSON_AddNumberToObject(o, "records", (double)set->n);
    cJSON_AddNumberToObject(o, "points", (double)set->points);
    cJSON *skipped = cJSON_AddArrayToObject(o, "skipped");
    for (size_t i = 0; i < set->nskipped; i++)
        cJSON_AddItemToArray(skipped, cJSON_CreateString(set->skipped[i]));
    cJSON *revs = cJSON_AddArrayToObject(o, "revisions");
    cJSON *hosts = cJSON_AddArrayToObject(o, "hosts");
    double *rate = calloc(set->n ? set->n : 1, sizeof *rate);
    double load = (double)NAN, timer = (double)NAN, pus = (double)NAN;
    for (size_t i = 0; i < set->n; i++) {
        const cJSON *doc = set->records[i].doc;
        const cJSON *git = bb_json_path(doc, "source.git");
        char rev[96];
        if (cJSON_IsString(git) && !bb_has_control(git->valuestring)) {
            size_t gl = strlen(git->valuestring);
            int dirty = cJSON_IsTrue(bb_json_path(doc, "source.git_dirty")) &&
                        !(gl > 6 && strcmp(git->valuestring + gl - 6, "-dirty") == 0);
            snprintf(rev, sizeof rev, "%.*s%s", bb_utf8_cut(git->valuestring, 64),
                     git->valuestring, dirty ? "-dirty" : "");
        } else {
            snprintf(rev, sizeof rev, "unknown");
        }
        bb_add_distinct(revs, rev);
        const cJSON *h;
        cJSON_ArrayForEach(h, bb_json_path(doc, "topology.per_host")) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "host"));
            if (name != NULL && !bb_has_control(name) && strlen(name) < 256)
                bb_add_distinct(hosts, name);
        }
        if (rate != NULL)
            rate[i] = cJSON_GetNumberValue(bb_json_path(doc, "system.kernel_rate.value"));
        static const char *const loads[] = {"system.load_average.before",
                                            "system.load_average.after"};
        for (int k = 0; k < 2; k++) {
            double l = cJSON_GetNumberValue(cJSON_GetArrayItem(bb_json_path(doc, loads[k]), 0));
            if (isfinite(l) && !(l <= load))
                load = l;
        }
        double r = cJSON_GetNumberValue(bb_json_path(doc, "runtime.timer.resolution_s"));
        if (isfinite(r) && !(r <= timer))
            timer = r;
        double p = cJSON_GetNumberValue(bb_json_path(doc, "topology.machine.pus"));
        if (isfinite(p) && p > 0)
            pus = p;
    }
    cJSON *m = cJSON_AddObjectToObject(o, "machine");
    bb_add_number_or_null(m, "kernel_rate_per_s", rate ? bb_median_of(rate, set->n) : (double)NAN);
    bb_add_number_or_null(m, "load_average_max", load);
    bb_add_number_or_null(m, "timer_resolution_s", timer);
    bb_add_number_or_null(m, "pus", pus);
    free(rate);
    return o;
}

/* Did base and candidate run on visibly different machines?  From the
 * records: the MPI-free kernel's rate the runner measures before every run
 * and overlap's compute kernel (time per iteration, matched points), the
 * load average, the timer's resolution.  Each check found in both sides is
 * listed; warning true where they differ enough to colour every timing. */
#define BB_SPEED_FACTOR 1.5

static void bb_speed_check(cJSON *list, const char *what, double b, double c,
                           double factor, const char *unit)
{
    if (!isfinite(b) || !isfinite(c) || b <= 0 || c <= 0)
        return;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "check", what);
    cJSON_AddNumberToObject(e, "base", b);
    cJSON_AddNumberToObject(e, "candidate", c);
    cJSON_AddStringToObject(e, "unit", unit);
    cJSON_AddNumberToObject(e, "ratio", c / b);
    cJSON_AddBoolToObject(e, "warning", c / b > factor || b / c > factor);
    cJSON_AddItemToArray(list, e);
}

static cJSON *bb_machine_check(const cJSON *bside, const cJSON *cside,
                               double compute_ratio)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *bm = cJSON_GetObjectItemCaseSensitive(bside, "machine");
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(cside, "machine");
#define BB_M(side, name) cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(side, name))
    bb_speed_check(list, "kernel rate", BB_M(bm, "kernel_rate_per_s"),
                   BB_M(cm, "kernel_rate_per_s"), BB_SPEED_FACTOR, "1/s");
    if (isfinite(compute_ratio))
        bb_speed_check(list, "overlap compute time per iteration", 1.0, compute_ratio,
                       BB_SPEED_FACTOR, "ratio");
    bb_speed_check(list, "timer resolution", BB_M(bm, "timer_resolution_s"),
                   BB_M(cm, "timer_resolution_s"), 10.0, "s");
    double bl = BB_M(bm, "load_average_max"), cl = BB_M(cm, "load_average_max");
    double pus = BB_M(cm, "pus");
    if (isfinite(bl) != isfinite(cl)) {
        /* One side says its load (an older record does not): a loaded
         * machine alone is worth a warning. */
        double per = isfinite(pus) && pus > 0 ? pus : 1.0;
        double l = isfinite(bl) ? bl : cl;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "check", "load average (1 min, max)");
        bb_add_number_or_null(e, "base", bl);
        bb_add_number_or_null(e, "candidate", cl);
        cJSON_AddStringToObject(e, "unit", "runnable");
        cJSON_AddBoolToObject(e, "warning", l / per >= 0.75);
        cJSON_AddItemToArray(list, e);
    }
    if (isfinite(bl) && isfinite(cl)) {
        /* Load per processing unit: a difference of half a PU's worth of
         * runnable processes is a visibly different machine. */
        double per = isfinite(pus) && pus > 0 ? pus : 1.0;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "check", "load average (1 min, max)");
        cJSON_AddNumberToObject(e, "base", bl);
        cJSON_AddNumberToObject(e, "candidate", cl);
        cJSON_AddStringToObject(e, "unit", "runnable");
        cJSON_AddBoolToObject(e, "warning", fabs(cl - bl) / per >= 0.5 &&
                                                (cl / per >= 0.75 || bl / per >= 0.75));
        cJSON_AddItemToArray(list, e);
    }
#undef BB_M
    return list;
}

/* overlap's compute kernel runs without MPI: its time per iteration in a
 * matched pair compares the machines, not the code under test. */
static double bb_compute_per_iteration(const cJSON *point)
{
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(point, "quantities");
    const cJSON *pb = cJSON_GetObjectItemCaseSensitive(qs, "compute.per_batch");
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(qs, "compute.iterations_per_batch");
    double s = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pb, "value"));
    double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "value"));
    return isfinite(s) && isfinite(n) && s > 0 && n > 0 ? s / n : (double)NAN;
}

bb_status_t bb_compare_sets(const bb_record_set_t *base,
                            const bb_record_set_t *cand,
                            const bb_compare_options_t *options,
                            cJSON **report_out,
                            bb_compare_summary_t *summary_out, char *err,
                            size_t errlen)
{
    if (base == NULL || cand == NULL || options == NULL || report_out == NULL ||
        !(options->tolerance >= 0.0) || !isfinite(options->tolerance) ||
        (options->n_ignore > 0 && options->ignore_parameters == NULL))
        return BB_ERR_ARG;
    double tolerance = options->tolerance;
    bb_point_ref_t *bp = NULL, *cp = NULL;
    bb_status_t st = bb_points_collect(base, options, &bp, err, errlen);
    if (st != BB_OK)
        return st;
    st = bb_points_collect(cand, options, &cp, err, errlen);
    if (st != BB_OK)
        goto free_base;

    cJSON *report = cJSON_CreateObject();
    if (report == NULL) {
        st = BB_ERR_NOMEM;
        goto free_cand;
    }
    cJSON_AddStringToObject(report, "schema", "bbench.compare/1");
    cJSON_AddItemToObject(report, "base", bb_set_summary(base));
    cJSON_AddItemToObject(report, "candidate", bb_set_summary(cand));
    cJSON_AddNumberToObject(report, "tolerance", tolerance);
    cJSON_AddStringToObject(report, "rule", BB_COMPARE_RULE);
    /* Base points the candidate lacks: a candidate must not pass by
     * dropping what it would fail on. */
    cJSON_AddStringToObject(report, "lost_points",
                            options->report_only ? "reported (--report)"
                            : options->allow_missing ? "accepted (--allow-missing)"
                                                     : "fail");
    cJSON *summary = cJSON_AddObjectToObject(report, "summary");
    cJSON *pairs = cJSON_AddArrayToObject(report, "points");
    cJSON *unmatched = cJSON_AddArrayToObject(report, "unmatched");
    cJSON *groups = cJSON_AddArrayToObject(report, "unmatched_groups");
    cJSON *warnings = cJSON_AddArrayToObject(report, "warnings");

    /* Record pairs already checked for provenance. */
    size_t ncells = base->n * cand->n;
    unsigned char *seen = calloc(ncells > 0 ? ncells : 1, 1);
    if (seen == NULL) {
        cJSON_Delete(report);
        st = BB_ERR_NOMEM;
        goto free_cand;
    }

    bb_compare_summary_t s = {0};
    bb_pair_tally_t tally = {0};
    /* Candidate/base ratios of overlap's compute time per iteration. */
    size_t ncompute = 0;
    double *compute = calloc(base->points + 1, sizeof *compute);
    size_t i = 0, j = 0, nb = base->points, nc = cand->points;
    while (i < nb || j < nc) {
        int c = i >= nb ? 1 : j >= nc ? -1 : strcmp(bp[i].key, cp[j].key);
        if (c < 0) {
            bb_add_unmatched(unmatched, groups, "base", &bp[i++]);
            s.unmatched_base++;
        } else if (c > 0) {
            bb_add_unmatched(unmatched, groups, "candidate", &cp[j++]);
            s.unmatched_candidate++;
        } else {
            st = bb_check_pair(&bp[i], &cp[j], err, errlen);
            if (st != BB_OK) {
                free(compute);
                free(seen);
                cJSON_Delete(report);
                goto free_cand;
            }
            cJSON_AddItemToArray(pairs, bb_judge_pair(&bp[i], &cp[j], tolerance, options->time_oversubscribed,
                                                       &tally));
            size_t cell = bp[i].record_index * cand->n + cp[j].record_index;
            if (!seen[cell]) {
                seen[cell] = 1;
                bb_warn_provenance(bp[i].record, cp[j].record, warnings);
            }
            double bt = bb_compute_per_iteration(bp[i].point);
            double ct = bb_compute_per_iteration(cp[j].point);
            if (compute != NULL && isfinite(bt) && isfinite(ct))
                compute[ncompute++] = ct / bt;
            s.matched++;
            i++;
            j++;
        }
    }
    free(seen);
    bb_short_labels(pairs);
    cJSON_AddItemToObject(report, "machine_check",
                          bb_machine_check(cJSON_GetObjectItemCaseSensitive(report, "base"),
                                           cJSON_GetObjectItemCaseSensitive(report, "candidate"),
                                           compute ? bb_median_of(compute, ncompute) : (double)NAN));
    free(compute);
    s.regressions = tally.regressions;
    s.improvements = tally.improvements;
    s.contract_changes = tally.contract;
    s.within_noise = tally.noise;
    s.unmeasured = tally.unmeasured;
    s.withheld = tally.withheld;
    s.unresolved = tally.unresolved;
    s.warnings = (size_t)cJSON_GetArraySize(warnings);
    s.skipped = base->nskipped + cand->nskipped;
    s.lost_failing = options->report_only || options->allow_missing ? 0 : s.unmatched_base;

    cJSON_AddNumberToObject(summary, "matched", (double)s.matched);
    cJSON_AddNumberToObject(summary, "unmatched_base", (double)s.unmatched_base);
    cJSON_AddNumberToObject(summary, "unmatched_candidate", (double)s.unmatched_candidate);
    cJSON_AddNumberToObject(summary, "regressions", (double)s.regressions);
    cJSON_AddNumberToObject(summary, "improvements", (double)s.improvements);
    cJSON_AddNumberToObject(summary, "within_noise", (double)s.within_noise);
    cJSON_AddNumberToObject(summary, "unresolved", (double)s.unresolved);
    cJSON_AddNumberToObject(summary, "unmeasured", (double)s.unmeasured);
    cJSON_AddNumberToObject(summary, "withheld", (double)s.withheld);
    cJSON_AddNumberToObject(summary, "contract_changes", (double)s.contract_changes);
    cJSON_AddNumberToObject(summary, "warnings", (double)s.warnings);
    cJSON_AddNumberToObject(summary, "skipped", (double)s.skipped);
    cJSON_AddNumberToObject(summary, "lost_failing", (double)s.lost_failing);

    *report_out = report;
    if (summary_out)
        *summary_out = s;
    st = BB_OK;
free_cand:
    bb_points_free(cp, cand->points);
free_base:
    bb_points_free(bp, base->points);
    if (st == BB_ERR_NOMEM)
        bb_errorf(err, errlen, "out of memory");
    return st;
}

int bb_compare_exit_code(const bb_compare_summary_t *s, int report_only)
{
    if (s->matched == 0)
        return BB_EXIT_USAGE;
    if (s->contract_changes > 0 || s->lost_failing > 0)
        return BB_EXIT_FAILURE;
    if (s->regressions > 0 && !report_only)
        return BB_EXIT_FAILURE;
    return BB_EXIT_OK;
}
