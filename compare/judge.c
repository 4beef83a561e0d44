/* judge.c: judging one matched pair: contract quantities and declarations as
 * the base declares them, the regression rule on every timing, candidates the
 * rule cannot judge.  Part of bbench-compare's comparison (compare.h);
 * MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The interval of the median of one side of a timing (j 0: none).  A record
 * that states its interval (ci) is read at the level it chose, from its
 * samples (the validator held the recorded bounds to them, within
 * rounding), or as recorded when it keeps no samples; ci null says the
 * samples were too few for that level.  A record from before intervals gets
 * one at BB_CONFIDENCE_DEFAULT from its samples, so that old baselines are
 * judged by the same rule as new candidates. */
static void bb_side_interval(const cJSON *q, bb_interval_t *ci)
{
    *ci = (bb_interval_t){.level = BB_CONFIDENCE_DEFAULT, .low = (double)NAN,
                          .high = (double)NAN};
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(q, "ci");
    if (cJSON_IsNull(rec))
        return;
    const cJSON *level = cJSON_GetObjectItemCaseSensitive(rec, "level");
    if (cJSON_IsObject(rec) && cJSON_IsNumber(level))
        ci->level = level->valuedouble;
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(q, "samples");
    size_t n = cJSON_IsArray(samples) ? (size_t)cJSON_GetArraySize(samples) : 0;
    if (n == 0) {
        const cJSON *low = cJSON_GetObjectItemCaseSensitive(rec, "low");
        const cJSON *high = cJSON_GetObjectItemCaseSensitive(rec, "high");
        const cJSON *cov = cJSON_GetObjectItemCaseSensitive(rec, "coverage");
        const cJSON *order = cJSON_GetObjectItemCaseSensitive(rec, "order");
        if (cJSON_IsNumber(low) && cJSON_IsNumber(high) && low->valuedouble <= high->valuedouble) {
            ci->low = low->valuedouble;
            ci->high = high->valuedouble;
            ci->coverage = cJSON_IsNumber(cov) ? cov->valuedouble : ci->level;
            ci->j = cJSON_IsNumber(order) && order->valuedouble >= 1.0
                        ? (size_t)order->valuedouble : 1;
        }
        return;
    }
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return;  /* no interval: judged by the rule without one */
    size_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, samples) v[k++] = e->valuedouble;
    bb_interval_t got;
    if (bb_stats_ci(v, n, ci->level, &got) == BB_OK)
        *ci = got;
    free(v);
}

static cJSON *bb_timing_side(const cJSON *q, const bb_interval_t *ci)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *range = cJSON_GetObjectItemCaseSensitive(q, "range");
    cJSON_AddNumberToObject(o, "median",
                            cJSON_GetObjectItemCaseSensitive(q, "median")->valuedouble);
    cJSON *r = cJSON_AddArrayToObject(o, "range");
    cJSON_AddItemToArray(r, cJSON_CreateNumber(cJSON_GetArrayItem(range, 0)->valuedouble));
    cJSON_AddItemToArray(r, cJSON_CreateNumber(cJSON_GetArrayItem(range, 1)->valuedouble));
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(q, "samples");
    if (cJSON_IsArray(samples))
        cJSON_AddNumberToObject(o, "samples", cJSON_GetArraySize(samples));
    cJSON *c = bb_interval_json(ci);
    if (c != NULL)
        cJSON_AddItemToObject(o, "ci", c);
    return o;
}

/* "intervals of the median overlap (base [a, b] us, candidate [c, d] us at
 * 95%)": the reason names both intervals, in the unit of the base median,
 * so that a reader sees how far apart they would have had to be. */
static void bb_overlap_reason(const bb_interval_t *b, const bb_interval_t *c, double median,
                              char *buf, size_t len)
{
    double scale;
    const char *unit = bb_seconds_unit(median, &scale);
    if (b->level == c->level)
        snprintf(buf, len, "intervals of the median overlap (base [%.3g, %.3g] %s, "
                 "candidate [%.3g, %.3g] %s at %.3g%%)", b->low * scale, b->high * scale,
                 unit, c->low * scale, c->high * scale, unit, 100.0 * b->level);
    else
        snprintf(buf, len, "intervals of the median overlap (base [%.3g, %.3g] %s at "
                 "%.3g%%, candidate [%.3g, %.3g] %s at %.3g%%)", b->low * scale,
                 b->high * scale, unit, 100.0 * b->level, c->low * scale,
                 c->high * scale, unit, 100.0 * c->level);
}

static void bb_add_contract(cJSON *changes, const char *name, const cJSON *base,
                            const cJSON *cand, const char *unit,
                            bb_pair_tally_t *tally)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddItemToObject(c, "base", base ? cJSON_Duplicate(base, 1) : cJSON_CreateString("(absent)"));
    cJSON_AddItemToObject(c, "candidate", cand ? cJSON_Duplicate(cand, 1) : cJSON_CreateString("(absent)"));
    if (unit)
        cJSON_AddStringToObject(c, "unit", unit);
    cJSON_AddItemToArray(changes, c);
    tally->contract++;
}

/* The declaration of a quantity: whether it is a contract and what it is
 * a value of.  Both are fixed by the code, never by a run, so a difference
 * is a contract change; members a side does not state (an older record)
 * are not compared. */
static const char *const bb_declaration_members[] = {"deterministic", "scope", NULL};

static void bb_judge_declarations(const cJSON *bq, const cJSON *cq, const char *prefix,
                                  cJSON *changes, bb_pair_tally_t *tally)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, bq) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(cq, q->string);
        if (o == NULL)
            continue;
        for (size_t m = 0; bb_declaration_members[m] != NULL; m++) {
            const cJSON *bd = cJSON_GetObjectItemCaseSensitive(q, bb_declaration_members[m]);
            const cJSON *cd = cJSON_GetObjectItemCaseSensitive(o, bb_declaration_members[m]);
            if (bd == NULL || cd == NULL || bb_json_equal(bd, cd))
                continue;
            bb_buf_t nb = {0};
            bb_buf_printf(&nb, "%s%s.%s", prefix, q->string, bb_declaration_members[m]);
            char *name = bb_buf_take(&nb);
            if (name != NULL)
                bb_add_contract(changes, name, bd, cd, NULL, tally);
            free(name);
        }
    }
}

/* Contract quantities of one quantities object (prefix "" or "first_call."),
 * as the base declares them: the candidate under test cannot exempt a
 * quantity by declaring it a measurement (that is a declaration change,
 * bb_judge_declarations).  A contract the candidate lost, or one it adds,
 * is a change too. */
static void bb_judge_deterministic(const cJSON *bq, const cJSON *cq,
                                   const char *prefix, cJSON *changes,
                                   bb_pair_tally_t *tally)
{
    for (int side = 0; side < 2; side++) {
        const cJSON *from = side ? cq : bq, *other = side ? bq : cq;
        const cJSON *q;
        cJSON_ArrayForEach(q, from) {
            if (bb_quantity_kind(q->string, q) != BB_Q_DETERMINISTIC)
                continue;
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(other, q->string);
            if (side == 1 && o != NULL)
                continue;  /* both have it: the base's declaration rules */
            bb_buf_t nb = {0};
            bb_buf_printf(&nb, "%s%s", prefix, q->string);
            char *name = bb_buf_take(&nb);
            if (name == NULL)
                continue;
            const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "unit"));
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, "value");
            if (o == NULL) {
                bb_add_contract(changes, name, side ? NULL : v, side ? v : NULL,
                                unit, tally);
            } else {
                const char *ounit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "unit"));
                const cJSON *ov = cJSON_GetObjectItemCaseSensitive(o, "value");
                if (!bb_json_equal(v, ov) || ounit == NULL || strcmp(unit, ounit) != 0)
                    bb_add_contract(changes, name, v, ov, unit, tally);
            }
            free(name);
        }
    }
}

/* The verdict on one timing: regression, improvement or within noise, and
 * why.  With at least BB_MW_MIN_SAMPLES samples a side a move beyond the
 * tolerance must also be significant (Mann-Whitney p < 0.05); with fewer,
 * the ranges must not overlap.  Where both sides have an interval of the
 * median, those must be apart too: the test answers whether the samples
 * differ anywhere, a wide tail or one outlier included, while the rule is
 * about the median, and intervals that overlap leave both medians possible.
 * Where a side has none (too few samples), the test or the ranges alone
 * decide and the timing is counted unresolved.  Every figure is reported. */
static void bb_judge_timings(const cJSON *bq, const cJSON *cq, double tol,
                             const char *withhold, cJSON *timings, bb_pair_tally_t *tally)
{
    const cJSON *q;
    cJSON_ArrayForEach(q, bq) {
        bb_qkind_t bk = bb_quantity_kind(q->string, q);
        if (bk != BB_Q_TIMING && bk != BB_Q_TIMING_NULL)
            continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(cq, q->string);
        bb_qkind_t ck = o ? bb_quantity_kind(q->string, o) : BB_Q_OTHER;
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", q->string);
        const char *verdict, *reason = NULL;
        char why[256];
        if (bk == BB_Q_TIMING && ck == BB_Q_TIMING) {
            double bm = cJSON_GetObjectItemCaseSensitive(q, "median")->valuedouble;
            double cm = cJSON_GetObjectItemCaseSensitive(o, "median")->valuedouble;
            const cJSON *br = cJSON_GetObjectItemCaseSensitive(q, "range");
            const cJSON *cr = cJSON_GetObjectItemCaseSensitive(o, "range");
            double blo = cJSON_GetArrayItem(br, 0)->valuedouble;
            double bhi = cJSON_GetArrayItem(br, 1)->valuedouble;
            double clo = cJSON_GetArrayItem(cr, 0)->valuedouble;
            double chi = cJSON_GetArrayItem(cr, 1)->valuedouble;
            bb_interval_t bci, cci;
            bb_side_interval(q, &bci);
            bb_side_interval(o, &cci);
            cJSON_AddItemToObject(t, "base", bb_timing_side(q, &bci));
            cJSON_AddItemToObject(t, "candidate", bb_timing_side(o, &cci));
            if (bm > 0)
                cJSON_AddNumberToObject(t, "ratio", cm / bm);
            else
                cJSON_AddNullToObject(t, "ratio");
            int slower = cm > bm * (1.0 + tol), faster = bm > cm * (1.0 + tol);
            int disjoint = slower ? clo > bhi : faster ? blo > chi
                                              : (clo > bhi || blo > chi);
            cJSON_AddBoolToObject(t, "ranges_disjoint", disjoint);
            int resolved = bci.j > 0 && cci.j > 0;
            int apart = resolved && (slower ? cci.low > bci.high
                                     : faster ? bci.low > cci.high
                                              : (cci.low > bci.high || bci.low > cci.high));
            if (resolved)
                cJSON_AddBoolToObject(t, "intervals_apart", apart);
            const cJSON *bs = cJSON_GetObjectItemCaseSensitive(q, "samples");
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "samples");
            double p = -1.0, u = 0.0;
            if (cJSON_GetArraySize(bs) >= BB_MW_MIN_SAMPLES &&
                cJSON_GetArraySize(cs) >= BB_MW_MIN_SAMPLES)
                p = bb_mann_whitney(bs, cs, &u);
            if (p >= 0.0) {
                cJSON *mw = cJSON_AddObjectToObject(t, "mann_whitney");
                cJSON_AddNumberToObject(mw, "u", u);
                cJSON_AddNumberToObject(mw, "p", p);
                cJSON_AddNumberToObject(mw, "alpha", BB_MW_ALPHA);
            }
            int significant = p >= 0.0 ? p < BB_MW_ALPHA : disjoint;
            if (withhold != NULL) {
                verdict = "withheld";
                reason = withhold;
                tally->withheld++;
            } else {
                /* Judged: whether the intervals had their say. */
                cJSON_AddBoolToObject(t, "unresolved", !resolved);
                if (!resolved)
                    tally->unresolved++;
                if ((slower || faster) && significant && (apart || !resolved)) {
                    verdict = slower ? "regression" : "improvement";
                    if (slower)
                        tally->regressions++;
                    else
                        tally->improvements++;
                } else {
                    verdict = "within noise";
                    tally->noise++;
                    if (!slower && !faster)
                        reason = "under tolerance";
                    else if (significant) {
                        /* The test or the ranges called it; the medians'
                         * intervals do not. */
                        bb_overlap_reason(&bci, &cci, bm, why, sizeof why);
                        reason = why;
                    } else if (p >= 0.0) {
                        snprintf(why, sizeof why, "Mann-Whitney p = %.2g >= %.2g", p,
                                 BB_MW_ALPHA);
                        reason = why;
                    } else
                        reason = "ranges overlap";
                }
            }
        } else {
            verdict = "unmeasured";  /* null or absent on one side: not judged */
            reason = bk == BB_Q_TIMING_NULL ? "null in the base" : "null in the candidate";
            tally->unmeasured++;
        }
        cJSON_AddStringToObject(t, "verdict", verdict);
        if (reason)
            cJSON_AddStringToObject(t, "reason", reason);
        cJSON_AddItemToArray(timings, t);
    }
}

/* A matched pair the rule cannot judge honestly is unusable input: the
 * candidate would otherwise pass as "unmeasured" or unjudged.  A quantity in
 * both with different units (ms against s), and a base timing (median and
 * range) that the candidate lacks or gives as a plain value; a candidate
 * timing that is null with its reason is not measured, and is shown so. */
static bb_status_t bb_check_pair_member(const bb_point_ref_t *b,
                                        const bb_point_ref_t *c,
                                        const char *member, int timings,
                                        char *err, size_t errlen)
{
    const cJSON *bq = cJSON_GetObjectItemCaseSensitive(b->point, member);
    const cJSON *cq = cJSON_GetObjectItemCaseSensitive(c->point, member);
    const cJSON *q, *from = cJSON_IsObject(bq) ? bq : NULL;
    cJSON_ArrayForEach(q, from) {
        const cJSON *o = cJSON_IsObject(cq)
                             ? cJSON_GetObjectItemCaseSensitive(cq, q->string) : NULL;
        bb_qkind_t bk = bb_quantity_kind(q->string, q);
        if (o == NULL) {
            if (timings && bk == BB_Q_TIMING) {
                bb_errorf(err, errlen, "%s: points[%d].%s.%s: missing; the base "
                          "(%s: points[%d]) has this timing", c->record->path,
                          c->index, member, q->string, b->record->path, b->index);
                return BB_ERR_PARSE;
            }
            continue;
        }
        const char *bu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "unit"));
        const char *cu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "unit"));
        if (bu != NULL && cu != NULL && strcmp(bu, cu) != 0) {
            bb_errorf(err, errlen, "%s: points[%d].%s.%s: unit \"%.16s\" where the "
                      "base (%s: points[%d]) has \"%.16s\"", c->record->path,
                      c->index, member, q->string, cu, b->record->path, b->index, bu);
            return BB_ERR_PARSE;
        }
        bb_qkind_t ck = bb_quantity_kind(q->string, o);
        if (timings && bk == BB_Q_TIMING && ck != BB_Q_TIMING && ck != BB_Q_TIMING_NULL) {
            bb_errorf(err, errlen, "%s: points[%d].%s.%s: a value without median "
                      "and range [min, max]; the base (%s: points[%d]) has them",
                      c->record->path, c->index, member, q->string,
                      b->record->path, b->index);
            return BB_ERR_PARSE;
        }
    }
    return BB_OK;
}

bb_status_t bb_check_pair(const bb_point_ref_t *b, const bb_point_ref_t *c,
                                 char *err, size_t errlen)
{
    const char *bs = cJSON_GetObjectItemCaseSensitive(b->point, "status")->valuestring;
    const char *cs = cJSON_GetObjectItemCaseSensitive(c->point, "status")->valuestring;
    /* Only ok points are timed; a status change is a contract change. */
    if (strcmp(bs, "ok") != 0 || strcmp(cs, "ok") != 0)
        return BB_OK;
    bb_status_t st = bb_check_pair_member(b, c, "quantities", 1, err, errlen);
    if (st == BB_OK)
        st = bb_check_pair_member(b, c, "first_call", 0, err, errlen);
    return st;
}

/* The MPI library's family a record was measured under ("MPICH", "Open
 * MPI", else the first word of runtime.mpi_library; NULL when absent or
 * simulated): versions of one library compare, two libraries do not. */
static const char *bb_mpi_family(const cJSON *doc, char *buf, size_t len)
{
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(doc, "runtime");
    const char *lib = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rt, "mpi_library"));
    if (lib == NULL || cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(rt, "simulated")))
        return NULL;
    if (strncmp(lib, "MPICH", 5) == 0)
        return "MPICH";
    if (strstr(lib, "Open MPI") != NULL)
        return "Open MPI";
    size_t n = strcspn(lib, " \t\n:");
    if (n == 0)
        return NULL;
    snprintf(buf, len, "%.*s", (int)(n < 32 ? n : 32), lib);
    return buf;
}

/* Does the record say its ranks time-shared cores? (topology.oversubscribed
 * true; null or absent: not said) */
static int oversubscribed(const cJSON *doc)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "topology");
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "oversubscribed"));
}

/* The canary's dominant mode (the mode with the most values) of a record's
 * run, in seconds; 0 when the record has no canary. */
static double canary_mode(const cJSON *doc)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
    const cJSON *modes = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(run, "canary"), "mode_values");
    double best = 0.0, most = 0.0;
    const cJSON *m;
    cJSON_ArrayForEach(m, modes) {
        const cJSON *med = cJSON_GetObjectItemCaseSensitive(m, "median_s");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "values");
        if (cJSON_IsNumber(med) && cJSON_IsNumber(n) && med->valuedouble > 0.0
            && n->valuedouble > most) {
            most = n->valuedouble;
            best = med->valuedouble;
        }
    }
    return best;
}

cJSON *bb_judge_pair(const bb_point_ref_t *b, const bb_point_ref_t *c,
                     double tol, int time_oversubscribed, bb_pair_tally_t *tally)
{
    cJSON *pair = cJSON_CreateObject();
    cJSON_AddStringToObject(pair, "label", b->label);
    cJSON_AddStringToObject(pair, "benchmark", b->record->benchmark);
    cJSON_AddNumberToObject(pair, "ranks", (double)b->record->ranks);
    cJSON_AddItemToObject(pair, "parameters",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(b->point, "parameters"), 1));
    cJSON_AddStringToObject(pair, "base_file", b->record->path);
    cJSON_AddNumberToObject(pair, "base_index", b->index);
    cJSON_AddStringToObject(pair, "candidate_file", c->record->path);
    cJSON_AddNumberToObject(pair, "candidate_index", c->index);

    const char *bs = cJSON_GetObjectItemCaseSensitive(b->point, "status")->valuestring;
    const char *cs = cJSON_GetObjectItemCaseSensitive(c->point, "status")->valuestring;
    cJSON *status = cJSON_AddObjectToObject(pair, "status");
    cJSON_AddStringToObject(status, "base", bs);
    cJSON_AddStringToObject(status, "candidate", cs);

    cJSON *timings = cJSON_AddArrayToObject(pair, "timings");
    cJSON *changes = cJSON_AddArrayToObject(pair, "contract_changes");
    bb_pair_tally_t t = {0};
    /* The vocabulary defines what every quantity name means
     * (doc/protocol.md): a record with another one is another contract. */
    const cJSON *bv = cJSON_GetObjectItemCaseSensitive(b->record->doc, "vocabulary");
    const cJSON *cv = cJSON_GetObjectItemCaseSensitive(c->record->doc, "vocabulary");
    if (!bb_json_equal(bv, cv))
        bb_add_contract(changes, "vocabulary", bv, cv, NULL, &t);
    if (strcmp(bs, cs) != 0) {
        bb_add_contract(changes, "status", cJSON_GetObjectItemCaseSensitive(b->point, "status"),
                        cJSON_GetObjectItemCaseSensitive(c->point, "status"), NULL, &t);
    } else {
        const cJSON *br = cJSON_GetObjectItemCaseSensitive(b->point, "refusal");
        const cJSON *cr = cJSON_GetObjectItemCaseSensitive(c->point, "refusal");
        if (!bb_json_equal(br, cr))
            bb_add_contract(changes, "refusal", br, cr, NULL, &t);
        const cJSON *bq = cJSON_GetObjectItemCaseSensitive(b->point, "quantities");
        const cJSON *cq = cJSON_GetObjectItemCaseSensitive(c->point, "quantities");
        const cJSON *bf = cJSON_GetObjectItemCaseSensitive(b->point, "first_call");
        const cJSON *cf = cJSON_GetObjectItemCaseSensitive(c->point, "first_call");
        bb_judge_declarations(bq, cq, "", changes, &t);
        bb_judge_declarations(bf, cf, "first_call.", changes, &t);
        bb_judge_deterministic(bq, cq, "", changes, &t);
        bb_judge_deterministic(bf, cf, "first_call.", changes, &t);
        /* Timings measured under two MPI libraries differ by the library:
         * no verdict on them, whatever the figures (contracts still hold). */
        char bbuf[40], cbuf[40], withhold[160];
        const char *bfam = bb_mpi_family(b->record->doc, bbuf, sizeof bbuf);
        const char *cfam = bb_mpi_family(c->record->doc, cbuf, sizeof cbuf);
        int other_mpi = bfam != NULL && cfam != NULL && strcmp(bfam, cfam) != 0;
        /* Oversubscribed ranks time-share cores: a collective waits on a
         * descheduled rank for scheduler slices, so a timing there says
         * more about the scheduler than about the code. */
        int bo = oversubscribed(b->record->doc), co = oversubscribed(c->record->doc);
        const char *why = NULL;
        /* Two records whose paths between ranks ran at different speeds
         * (their canaries' main modes apart) differ by the machine's mode,
         * not by the code. */
        double bm = canary_mode(b->record->doc), cm = canary_mode(c->record->doc);
        int other_mode = bm > 0.0 && cm > 0.0
                         && fmax(bm, cm) > BB_COMPARE_CANARY_FACTOR * fmin(bm, cm);
        if (other_mpi) {
            snprintf(withhold, sizeof withhold, "measured under two MPI libraries (%s "
                     "against %s): not judged", bfam, cfam);
            why = withhold;
        } else if (other_mode) {
            snprintf(withhold, sizeof withhold, "canaries in different modes (base %.3g us, "
                     "candidate %.3g us between ranks 0 and 1): the machine, not the code; "
                     "not judged", bm * 1e6, cm * 1e6);
            why = withhold;
        } else if ((bo || co) && !time_oversubscribed) {
            snprintf(withhold, sizeof withhold, "oversubscribed (%s): timings include "
                     "time-sharing; not judged without --time-oversubscribed",
                     bo && co ? "both" : bo ? "base" : "candidate");
            why = withhold;
        }
        if (strcmp(bs, "ok") == 0)
            bb_judge_timings(bq, cq, tol, why, timings, &t);
    }
    const char *verdict = t.contract ? "contract change"
                          : t.regressions ? "regression"
                          : t.improvements ? "improvement"
                          : t.withheld ? "timings withheld" : "within noise";
    cJSON_AddStringToObject(pair, "verdict", verdict);
    tally->regressions += t.regressions;
    tally->improvements += t.improvements;
    tally->contract += t.contract;
    tally->noise += t.noise;
    tally->unmeasured += t.unmeasured;
    tally->withheld += t.withheld;
    tally->unresolved += t.unresolved;
    return pair;
}
