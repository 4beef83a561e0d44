/* render.c: the report as text or Markdown (summary first, then only what
 * changed) or JSON.  Part of bbench-compare's comparison (compare.h);
 * MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Engineering units, three significant digits, one unit for the cell. */
static void bb_format_timing(const cJSON *side, char *buf, size_t len)
{
    double m = cJSON_GetObjectItemCaseSensitive(side, "median")->valuedouble;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(side, "range");
    double lo = cJSON_GetArrayItem(r, 0)->valuedouble;
    double hi = cJSON_GetArrayItem(r, 1)->valuedouble;
    double scale;
    const char *unit = bb_seconds_unit(m, &scale);
    snprintf(buf, len, "%.3g [%.3g, %.3g] %s", m * scale, lo * scale,
             hi * scale, unit);
}

/* A value for a text line, cut short so a long MPI library string does not
 * swamp the report. */
static void bb_format_value(const cJSON *v, char *buf, size_t len)
{
    bb_buf_t b = {0};
    if (v == NULL || cJSON_IsNull(v))
        bb_buf_puts(&b, "null");
    else
        bb_plain(&b, v);
    char *s = bb_buf_take(&b);
    if (s == NULL) {
        snprintf(buf, len, "?");
        return;
    }
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    if (strlen(s) > 60)
        snprintf(buf, len, "%.*s...", bb_utf8_cut(s, 57), s);
    else
        snprintf(buf, len, "%s", s);
    free(s);
}

static size_t bb_summary_get(const cJSON *report, const char *name)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "summary");
    return (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, name));
}

/* A provenance value for a line: strings quoted as JSON (escapes for
 * control characters, so a line stays a line), others canonical.  A long
 * string is shown around its first difference from other, between "...",
 * never cut inside a UTF-8 sequence or an escape. */
static void bb_format_provenance(const cJSON *v, const cJSON *other, bb_buf_t *out)
{
    if (v == NULL) {
        bb_buf_puts(out, "(absent)");
        return;
    }
    if (!cJSON_IsString(v)) {
        bb_buf_t b = {0};
        bb_canon(&b, v);
        char *t = bb_buf_take(&b);
        if (t == NULL) {
            out->failed = 1;
            return;
        }
        /* Never cut inside JSON: a long array or object is named by its
         * size (the JSON report holds it whole). */
        if (strlen(t) > 160)
            bb_buf_printf(out, "(%s of %d %s, %zu characters; in --format json)",
                          cJSON_IsArray(v) ? "an array" : "an object", cJSON_GetArraySize(v),
                          cJSON_IsArray(v) ? "items" : "members", strlen(t));
        else
            bb_buf_puts(out, t);
        free(t);
        return;
    }
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n <= 100) {
        bb_canon_string(out, s);
        return;
    }
    const char *o = cJSON_IsString(other) ? other->valuestring : "";
    size_t k = 0;
    while (s[k] && s[k] == o[k])
        k++;
    size_t start = k > 30 ? k - 30 : 0;
    while (start > 0 && ((unsigned char)s[start] & 0xC0) == 0x80)
        start--;
    size_t len = (size_t)bb_utf8_cut(s + start, 70);
    char *piece = malloc(len + 1);
    if (piece == NULL) {
        out->failed = 1;
        return;
    }
    memcpy(piece, s + start, len);
    piece[len] = '\0';
    bb_buf_puts(out, start > 0 ? "\"..." : "\"");
    bb_buf_t q = {0};
    bb_canon_string(&q, piece);
    char *qs = bb_buf_take(&q);
    if (qs == NULL)
        out->failed = 1;
    else
        bb_buf_add(out, qs + 1, strlen(qs) - 2);  /* without its quotes */
    free(qs);
    free(piece);
    bb_buf_printf(out, "%s\" (%zu characters, differ from character %zu)",
                  start + len < n ? "..." : "", n, k + 1);
}

/* The short label where there is one (the varying parameters only). */
static const char *bb_pair_label(const cJSON *p)
{
    const char *s = bb_get_str(p, "short_label");
    return *s ? s : bb_get_str(p, "label");
}

static void bb_list_strings(bb_buf_t *out, const cJSON *array, const char *none)
{
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, array)
        bb_buf_printf(out, "%s%s", k++ ? ", " : "", e->valuestring);
    if (k == 0)
        bb_buf_puts(out, none);
}

static void bb_format_moved(bb_buf_t *out, const char *item, const cJSON *p,
                            const cJSON *tm)
{
    const char *verdict = bb_get_str(tm, "verdict");
    char bcell[96], ccell[96];
    bb_format_timing(cJSON_GetObjectItemCaseSensitive(tm, "base"), bcell, sizeof bcell);
    bb_format_timing(cJSON_GetObjectItemCaseSensitive(tm, "candidate"), ccell, sizeof ccell);
    const cJSON *mw = cJSON_GetObjectItemCaseSensitive(tm, "mann_whitney");
    char why[64];
    if (mw != NULL)
        snprintf(why, sizeof why, "Mann-Whitney p = %.2g",
                 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(mw, "p")));
    else
        snprintf(why, sizeof why, "ranges disjoint");
    /* A verdict the intervals of the median did not check says so on its
     * line: the reviewer weighs it with that in mind. */
    int unresolved = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tm, "unresolved"));
    bb_buf_printf(out, "%s%s %s: %s: %s -> %s (x%.3f, %s%s)%s\n", item,
                  verdict[0] == 'r' ? "REGRESSION" : "improvement",
                  bb_pair_label(p), bb_get_str(tm, "name"), bcell, ccell,
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(tm, "ratio")), why,
                  unresolved ? "" : ", intervals of the median apart",
                  unresolved ? " unresolved (no interval of the median on a side)" : "");
}

/* Lines of regressions (and of improvements) in the default report: a
 * screen holds the summary, the warnings and these. */
#define BB_MOVED_LINES 10

static void bb_render_text(const cJSON *report, int markdown, int all_timings,
                           bb_buf_t *out)
{
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(report, "base");
    const cJSON *cand = cJSON_GetObjectItemCaseSensitive(report, "candidate");
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(report, "points");
    double tol = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(report, "tolerance"));
    const char *item = markdown ? "- " : "  ";
    const char *h0 = markdown ? "\n**" : "\n", *h1 = markdown ? "**\n" : "\n";
    const cJSON *p, *tm;

    /* 1. The summary: counts, then which revision and machine is which. */
    size_t overlap = 0, under = 0, pvalue = 0, intervals = 0;
    cJSON_ArrayForEach(p, pairs) {
        cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
            const char *r = bb_get_str(tm, "reason");
            if (strcmp(bb_get_str(tm, "verdict"), "within noise") != 0)
                continue;
            if (strcmp(r, "ranges overlap") == 0)
                overlap++;
            else if (strcmp(r, "under tolerance") == 0)
                under++;
            else if (strncmp(r, "intervals ", 10) == 0)
                intervals++;
            else
                pvalue++;
        }
    }
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(report, "machine_check");
    size_t machine_warnings = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, mc)
        machine_warnings += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "warning"));
    size_t nc = bb_summary_get(report, "contract_changes");
    char skipped[64] = "", withheld[128] = "";
    if (bb_summary_get(report, "withheld") > 0)
        snprintf(withheld, sizeof withheld, ", %zu withheld (timings not judged: two MPI "
                 "libraries, canaries in two modes, or oversubscribed; each says which)",
                 bb_summary_get(report, "withheld"));
    if (bb_summary_get(report, "skipped") > 0)
        snprintf(skipped, sizeof skipped, ", %zu files skipped (not records)",
                 bb_summary_get(report, "skipped"));
    bb_buf_printf(out,
                  "%ssummary: %zu points matched, %zu timing regressions, %zu "
                  "improvements, %zu within noise (%zu ranges overlap, %zu under "
                  "tolerance, %zu p >= 0.05, %zu intervals overlap), %zu unresolved "
                  "(no interval of the median on a side), %zu unmeasured, %zu "
                  "contract changes, "
                  "%zu unmatched (base %zu, candidate %zu), %zu warnings, %zu machine "
                  "warnings%s%s%s\n",
                  markdown ? "**" : "", bb_summary_get(report, "matched"),
                  bb_summary_get(report, "regressions"),
                  bb_summary_get(report, "improvements"),
                  bb_summary_get(report, "within_noise"), overlap, under, pvalue,
                  intervals, bb_summary_get(report, "unresolved"),
                  bb_summary_get(report, "unmeasured"), nc,
                  bb_summary_get(report, "unmatched_base") +
                      bb_summary_get(report, "unmatched_candidate"),
                  bb_summary_get(report, "unmatched_base"),
                  bb_summary_get(report, "unmatched_candidate"),
                  bb_summary_get(report, "warnings"), machine_warnings, withheld, skipped,
                  markdown ? "**\n" : "");
    const cJSON *sides[2] = {base, cand};
    const char *names[2] = {"base:     ", "candidate:"};
    for (int k = 0; k < 2; k++) {
        double nr = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sides[k], "records"));
        double np = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sides[k], "points"));
        bb_buf_printf(out, "%s%s %s (%g record%s, %g point%s); git ", item, names[k],
                      bb_get_str(sides[k], "path"), nr, nr == 1 ? "" : "s", np,
                      np == 1 ? "" : "s");
        bb_list_strings(out, cJSON_GetObjectItemCaseSensitive(sides[k], "revisions"), "unknown");
        bb_buf_puts(out, "; host ");
        bb_list_strings(out, cJSON_GetObjectItemCaseSensitive(sides[k], "hosts"), "unknown");
        bb_buf_puts(out, "\n");
    }
    bb_buf_printf(out, "%srule (t = %.3g): %s\n", item, tol, bb_get_str(report, "rule"));

    /* 2. Skipped files, the machines, provenance: what colours every number. */
    for (int k = 0; k < 2; k++) {
        const cJSON *sk;
        cJSON_ArrayForEach(sk, cJSON_GetObjectItemCaseSensitive(sides[k], "skipped"))
            bb_buf_printf(out, "%sSKIPPED (not a record) %s\n", item, sk->valuestring);
    }
    if (cJSON_GetArraySize(mc) > 0) {
        bb_buf_printf(out, "%smachine speed (from the records):%s", h0, h1);
        cJSON_ArrayForEach(e, mc) {
            int warn = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "warning"));
            const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(e, "ratio");
            double bv = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "base"));
            double cv = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "candidate"));
            bb_buf_printf(out, "%s%s%s: ", item, warn ? "WARNING " : "",
                          bb_get_str(e, "check"));
            if (strcmp(bb_get_str(e, "unit"), "ratio") == 0)
                bb_buf_printf(out, "candidate/base x%.2f (median of the matched points)", cv);
            else if (bb_buf_puts(out, "base "), isfinite(bv))
                bb_buf_printf(out, "%.3g", bv);
            else
                bb_buf_puts(out, "not recorded");
            if (strcmp(bb_get_str(e, "unit"), "ratio") == 0)
                ;
            else if (isfinite(cv))
                bb_buf_printf(out, ", candidate %.3g %s", cv, bb_get_str(e, "unit"));
            else
                bb_buf_printf(out, ", candidate not recorded (%s)", bb_get_str(e, "unit"));
            if (cJSON_IsNumber(ratio) && strcmp(bb_get_str(e, "unit"), "ratio") != 0)
                bb_buf_printf(out, " (x%.2f)", ratio->valuedouble);
            bb_buf_puts(out, !warn ? "\n"
                             : cJSON_IsNumber(ratio)
                                 ? ": base and candidate ran on visibly different "
                                   "machines; timings are not comparable\n"
                                 : ": a loaded machine; timings include time-sharing\n");
        }
    }
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(report, "warnings");
    if (cJSON_GetArraySize(wl) > 0) {
        bb_buf_printf(out, "%sprovenance differences (numbers may not be comparable):%s",
                      h0, h1);
        const cJSON *w;
        cJSON_ArrayForEach(w, wl) {
            const cJSON *bv = cJSON_GetObjectItemCaseSensitive(w, "base");
            const cJSON *cv = cJSON_GetObjectItemCaseSensitive(w, "candidate");
            bb_buf_printf(out, "%sWARNING %s: base ", item, bb_get_str(w, "field"));
            bb_format_provenance(bv, cv, out);
            bb_buf_puts(out, " candidate ");
            bb_format_provenance(cv, bv, out);
            double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "record_pairs"));
            bb_buf_printf(out, " (%g record pair%s)\n", n, n == 1 ? "" : "s");
        }
    }

    /* 3. What changed: contract changes, regressions, improvements, each once. */
    if (nc) {
        bb_buf_printf(out, "%scontract changes (deterministic quantities or status differ):%s",
                      h0, h1);
        cJSON_ArrayForEach(p, pairs) {
            const cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "contract_changes")) {
                char bv[80], cv[80];
                const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "unit"));
                bb_format_value(cJSON_GetObjectItemCaseSensitive(c, "base"), bv, sizeof bv);
                bb_format_value(cJSON_GetObjectItemCaseSensitive(c, "candidate"), cv, sizeof cv);
                bb_buf_printf(out, "%sCONTRACT CHANGE %s: %s: base %s%s%s, candidate %s%s%s\n",
                              item, bb_get_str(p, "label"), bb_get_str(c, "name"),
                              bv, unit ? " " : "", unit ? unit : "", cv,
                              unit ? " " : "", unit ? unit : "");
            }
        }
    }
    static const char *const moved[2] = {"regression", "improvement"};
    static const char *const moved_title[2] = {"regressions", "improvements"};
    /* One line per point (its elapsed, else its first timing that moved,
     * with the count of the others), at most BB_MOVED_LINES of them unless
     * --all: every timing that moved, one line each. */
    for (int k = 0; k < 2; k++) {
        size_t total = bb_summary_get(report, moved_title[k]);
        if (total == 0)
            continue;
        bb_buf_printf(out, "%s%s (rule above)%s:%s", h0, moved_title[k],
                      all_timings ? "" : ", one line per point", h1);
        size_t lines = 0, points = 0;
        cJSON_ArrayForEach(p, pairs) {
            const cJSON *lead = NULL;
            size_t n = 0;
            cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
                if (strcmp(bb_get_str(tm, "verdict"), moved[k]) != 0)
                    continue;
                n++;
                if (all_timings)
                    bb_format_moved(out, item, p, tm);
                else if (lead == NULL || strcmp(bb_get_str(tm, "name"), "elapsed") == 0)
                    lead = lead && strcmp(bb_get_str(lead, "name"), "elapsed") == 0 ? lead : tm;
            }
            if (n == 0 || all_timings)
                continue;
            points++;
            if (lines >= BB_MOVED_LINES)
                continue;
            lines++;
            bb_format_moved(out, item, p, lead);
            if (n > 1) {
                /* Before the line's newline: "(+N more timings)". */
                out->len--;
                bb_buf_printf(out, " +%zu more timing%s\n", n - 1, n == 2 ? "" : "s");
            }
        }
        if (points > lines)
            bb_buf_printf(out, "%s... and %zu more point%s (%zu %s in all; --all or "
                          "--details FILE lists them)\n", item, points - lines,
                          points - lines == 1 ? "" : "s", total, moved_title[k]);
    }

    /* 4. Lost points: base points the candidate lacks, named one by one
     * (at most BB_MOVED_LINES; --all lists every unmatched point below). */
    size_t lost = bb_summary_get(report, "unmatched_base");
    if (lost > 0) {
        const char *how = bb_get_str(report, "lost_points");
        bb_buf_printf(out, "%slost points (in the base, not in the candidate; %s):%s", h0,
                      strcmp(how, "fail") == 0 ? "they fail, --allow-missing accepts them"
                                               : how, h1);
        size_t shown = 0;
        const cJSON *u;
        cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(report, "unmatched")) {
            if (strcmp(bb_get_str(u, "side"), "base") != 0 || shown == BB_MOVED_LINES)
                continue;
            shown++;
            bb_buf_printf(out, "%sLOST %s (%s: points[%g])\n", item, bb_get_str(u, "label"),
                          bb_get_str(u, "file"),
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "index")));
        }
        if (lost > shown)
            bb_buf_printf(out, "%s... and %zu more lost point%s (--all lists them)\n", item,
                          lost - shown, lost - shown == 1 ? "" : "s");
    }

    /* 5. Unmatched points, one line per benchmark and rank count. */
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(report, "unmatched_groups");
    if (cJSON_GetArraySize(groups) > 0) {
        bb_buf_printf(out, "%sunmatched points (by benchmark and rank count):%s", h0, h1);
        const cJSON *g;
        cJSON_ArrayForEach(g, groups) {
            double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "points"));
            double hosts = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "hosts"));
            bb_buf_printf(out, "%s%s only: %s n=%g", item, bb_get_str(g, "side"),
                          bb_get_str(g, "benchmark"),
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "ranks")));
            if (hosts != 1)
                bb_buf_printf(out, " hosts=%g", hosts);
            bb_buf_printf(out, ": %g point%s\n", n, n == 1 ? "" : "s");
        }
    }

    /* 6. With --all, every timing of every matched point. */
    if (!all_timings)
        return;
    bb_buf_printf(out, "%sall timings:%s", h0, h1);
    bb_report_table_t t = {.ncols = markdown ? 5 : 4, .indent = "  "};
    const char *hdr[5] = {"point", "timing", "base median [min, max]",
                          "candidate median [min, max]", "ratio  verdict"};
    if (markdown)
        hdr[4] = "ratio, verdict";
    bb_report_table_row(&t, markdown ? hdr : hdr + 1);
    cJSON_ArrayForEach(p, pairs) {
        const char *label = bb_get_str(p, "label");
        int shown = 0;
        cJSON_ArrayForEach(tm, cJSON_GetObjectItemCaseSensitive(p, "timings")) {
            const char *verdict = bb_get_str(tm, "verdict");
            const char *reason = bb_get_str(tm, "reason");
            char bcell[96] = "-", ccell[96] = "-", vcell[320];
            const cJSON *bs = cJSON_GetObjectItemCaseSensitive(tm, "base");
            const cJSON *cs = cJSON_GetObjectItemCaseSensitive(tm, "candidate");
            const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(tm, "ratio");
            if (bs)
                bb_format_timing(bs, bcell, sizeof bcell);
            if (cs)
                bb_format_timing(cs, ccell, sizeof ccell);
            int up = strcmp(verdict, "regression") == 0;
            /* Moved without the intervals' say: marked, as on its line. */
            if (!*reason && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tm, "unresolved")))
                reason = "unresolved";
            if (cJSON_IsNumber(ratio))
                snprintf(vcell, sizeof vcell, "%.3f  %s%s%s%s", ratio->valuedouble,
                         up ? "REGRESSION" : verdict, *reason ? " (" : "", reason,
                         *reason ? ")" : "");
            else
                snprintf(vcell, sizeof vcell, "-  %s%s%s%s", verdict, *reason ? " (" : "",
                         reason, *reason ? ")" : "");
            const char *row[5] = {shown ? "" : label, bb_get_str(tm, "name"), bcell, ccell,
                                  vcell};
            if (!markdown && !shown)
                bb_report_table_add(&t, row, 1);
            bb_report_table_row(&t, markdown ? row : row + 1);
            shown = 1;
        }
        if (!shown) {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "status");
            char scell[64];
            snprintf(scell, sizeof scell, "status %s / %s", bb_get_str(st, "base"),
                     bb_get_str(st, "candidate"));
            const char *row[5] = {label, "-", scell, "", bb_get_str(p, "verdict")};
            if (!markdown)
                bb_report_table_add(&t, row, 1);
            bb_report_table_row(&t, markdown ? row : row + 1);
        }
    }
    if (t.nrows > 1)
        bb_report_table_render(&t, markdown, out);
    else
        bb_buf_puts(out, "no matched points\n");
    bb_report_table_free(&t);
    const cJSON *um = cJSON_GetObjectItemCaseSensitive(report, "unmatched");
    if (cJSON_GetArraySize(um) > 0) {
        bb_buf_printf(out, "%sall unmatched points:%s", h0, h1);
        const cJSON *u;
        cJSON_ArrayForEach(u, um)
            bb_buf_printf(out, "%s%s only: %s (%s: points[%g])\n", item,
                          bb_get_str(u, "side"), bb_get_str(u, "label"),
                          bb_get_str(u, "file"),
                          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "index")));
    }
}

char *bb_compare_render(const cJSON *report, bb_compare_format_t format,
                        int all_timings)
{
    if (report == NULL)
        return NULL;
    if (format == BB_COMPARE_JSON) {
        char *raw = cJSON_Print(report);
        /* File names need not be UTF-8; the report must be. */
        char *s = raw ? bb_json_text_utf8(raw) : NULL;
        cJSON_free(raw);
        if (s == NULL)
            return NULL;
        /* Hand back memory free() can release, with a final newline. */
        bb_buf_t b = {0};
        bb_buf_puts(&b, s);
        bb_buf_puts(&b, "\n");
        free(s);
        return bb_buf_take(&b);
    }
    bb_buf_t b = {0};
    bb_render_text(report, format == BB_COMPARE_MARKDOWN, all_timings, &b);
    return bb_buf_take(&b);
}
