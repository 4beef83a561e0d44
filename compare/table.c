/* table.c: a table of strings rendered aligned or as Markdown (the report's
 * own, not the benchmarks' runner/table.c).  Part of bbench-compare's
 * comparison (compare.h); MPI-free. */
#include "config.h"
#include "private/bbtext.h"
#include "record/bbrecord.h"
#include "compare.h"

#include <stdlib.h>
#include <string.h>

void bb_report_table_add(bb_report_table_t *t, const char *const *cols, int span)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **v = realloc(t->cells, cap * t->ncols * sizeof *v);
        if (v == NULL) {
            t->failed = 1;
            return;
        }
        t->cells = v;
        unsigned char *f = realloc(t->span, cap);
        if (f == NULL) {
            t->failed = 1;
            return;
        }
        t->span = f;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] =
            bb_strdup(cols[c] && (!span || c == 0) ? cols[c] : "");
    t->span[t->nrows] = (unsigned char)span;
    t->nrows++;
}

void bb_report_table_row(bb_report_table_t *t, const char *const *cols)
{
    bb_report_table_add(t, cols, 0);
}

void bb_report_table_render(const bb_report_table_t *t, int markdown, bb_buf_t *out)
{
    if (t->failed) {
        out->failed = 1;
        return;
    }
    size_t *w = calloc(t->ncols, sizeof *w);
    if (w == NULL) {
        out->failed = 1;
        return;
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols && !t->span[r]; c++) {
            const char *s = t->cells[r * t->ncols + c];
            size_t n = s ? strlen(s) : 0;
            if (n > w[c])
                w[c] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        if (t->span[r]) {
            bb_buf_printf(out, "%s\n", t->cells[r * t->ncols] ? t->cells[r * t->ncols] : "");
            continue;
        }
        if (markdown)
            bb_buf_puts(out, "| ");
        else if (t->indent)
            bb_buf_puts(out, t->indent);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            s = s ? s : "";
            int last = c + 1 == t->ncols;
            if (markdown)
                bb_buf_printf(out, "%-*s |%s", (int)w[c], s, last ? "" : " ");
            else if (last)
                bb_buf_puts(out, s);
            else
                bb_buf_printf(out, "%-*s  ", (int)w[c], s);
        }
        bb_buf_puts(out, "\n");
        if (markdown && r == 0) {
            bb_buf_puts(out, "|");
            for (size_t c = 0; c < t->ncols; c++) {
                for (size_t k = 0; k < w[c] + 2; k++)
                    bb_buf_puts(out, "-");
                bb_buf_puts(out, "|");
            }
            bb_buf_puts(out, "\n");
        }
    }
    free(w);
}

void bb_report_table_free(bb_report_table_t *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t->span);
}
