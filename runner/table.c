/* table.c: one benchmark table in table, csv or json format. */
#include "config.h"
#include "table.h"

#include "record/bbrecord.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Enough for bbench-sum with every policy (24 protocol rows of four columns
 * and ten references). */
enum { TABLE_COLUMNS_MAX = 256, TABLE_CELL_MAX = 64 };

typedef struct column {
    char *name, *unit, *legend, *header;
    int width;
} column_t;

struct bb_table {
    bb_format_t format;
    FILE *out;
    int print;
    int header_done;
    int ncolumns, ncells;
    column_t columns[TABLE_COLUMNS_MAX];
    char cells[TABLE_COLUMNS_MAX][TABLE_CELL_MAX];
    int quoted[TABLE_COLUMNS_MAX];   /* csv: the cell needs quotes */
    cJSON *notes, *rows, *row;       /* json */
};

static const char *const format_names[] = { "table", "csv", "json" };

int bb_format_parse(const char *text)
{
    for (int i = 0; i < 3; i++)
        if (text != NULL && strcmp(text, format_names[i]) == 0)
            return i;
    return -1;
}

const char *bb_format_name(bb_format_t format)
{
    return (unsigned)format < 3u ? format_names[format] : "?";
}

static char *copy(const char *s)
{
    return s == NULL ? NULL : strdup(s);
}

bb_table_t *bb_table_create(bb_format_t format, FILE *out, int print)
{
    bb_table_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->format = format;
    t->out = out;
    t->print = print;
    if (format == BB_FORMAT_JSON) {
        t->notes = cJSON_CreateArray();
        t->rows = cJSON_CreateArray();
        if (t->notes == NULL || t->rows == NULL) {
            cJSON_Delete(t->notes);
            cJSON_Delete(t->rows);
            free(t);
            return NULL;
        }
    }
    return t;
}

bb_format_t bb_table_format(const bb_table_t *table)
{
    return table->format;
}

static void print_json(bb_table_t *t)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *cols = cJSON_AddArrayToObject(doc, "columns");
    for (int i = 0; i < t->ncolumns && cols != NULL; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", t->columns[i].header);
        if (t->columns[i].unit != NULL)
            cJSON_AddStringToObject(c, "unit", t->columns[i].unit);
        else
            cJSON_AddNullToObject(c, "unit");
        if (t->columns[i].legend != NULL)
            cJSON_AddStringToObject(c, "legend", t->columns[i].legend);
        cJSON_AddItemToArray(cols, c);
    }
    cJSON_AddItemToObject(doc, "notes", t->notes);
    cJSON_AddItemToObject(doc, "rows", t->rows);
    t->notes = t->rows = NULL;
    char *text = cJSON_Print(doc);
    if (text != NULL) {
        fprintf(t->out, "%s\n", text);
        fflush(t->out);
    }
    free(text);
    cJSON_Delete(doc);
}

void bb_table_destroy(bb_table_t *table)
{
    if (table == NULL)
        return;
    if (table->format == BB_FORMAT_JSON && table->print)
        print_json(table);
    cJSON_Delete(table->notes);
    cJSON_Delete(table->rows);
    cJSON_Delete(table->row);
    for (int i = 0; i < table->ncolumns; i++) {
        free(table->columns[i].name);
        free(table->columns[i].unit);
        free(table->columns[i].legend);
        free(table->columns[i].header);
    }
    free(table);
}

void bb_table_note(bb_table_t *table, const char *fmt, ...)
{
    if (!table->print || table->format == BB_FORMAT_CSV)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (table->format == BB_FORMAT_JSON)
        cJSON_AddItemToArray(table->notes, cJSON_CreateString(text));
    else
        fprintf(table->out, "# %s\n", text);
}

void bb_table_column(bb_table_t *table, const char *name, const char *unit,
                     const char *legend, int width)
{
    if (table->ncolumns >= TABLE_COLUMNS_MAX || table->header_done) {
        /* A programming error: said once, and the table stays consistent. */
        fprintf(stderr, "bbench: table: column '%s' dropped (%s)\n", name,
                table->header_done ? "after the header" : "too many columns");
        return;
    }
    column_t *c = &table->columns[table->ncolumns++];
    c->name = copy(name);
    c->unit = copy(unit);
    c->legend = copy(legend);
    size_t n = strlen(name) + (unit ? strlen(unit) + 1 : 0) + 1;
    c->header = malloc(n);
    if (c->header != NULL)
        snprintf(c->header, n, unit ? "%s_%s" : "%s", name, unit ? unit : "");
    int hw = c->header ? (int)strlen(c->header) : 0;
    c->width = width > hw ? width : hw;
}

/* The current cell, NULL when the row is full. */
static char *next_cell(bb_table_t *t)
{
    if (t->ncells >= t->ncolumns || t->ncells >= TABLE_COLUMNS_MAX)
        return NULL;
    t->quoted[t->ncells] = 0;
    return t->cells[t->ncells++];
}

static void json_cell(bb_table_t *t, cJSON *value)
{
    if (t->row == NULL)
        t->row = cJSON_CreateObject();
    const char *name = t->columns[t->ncells - 1].header;
    if (t->row != NULL && name != NULL)
        cJSON_AddItemToObject(t->row, name, value);
    else
        cJSON_Delete(value);
}

void bb_table_text(bb_table_t *table, const char *text)
{
    char *cell = next_cell(table);
    if (cell == NULL || !table->print)
        return;
    if (table->format == BB_FORMAT_JSON) {
        json_cell(table, cJSON_CreateString(text));
        return;
    }
    snprintf(cell, TABLE_CELL_MAX, "%s", text);
    for (char *p = cell; *p; p++) {
        if (*p == ' ' && table->format == BB_FORMAT_TABLE)
            *p = '_';
        if (*p == ',' || *p == '"' || *p == ' ')
            table->quoted[table->ncells - 1] = 1;
    }
}

void bb_table_number(bb_table_t *table, double value, int decimals)
{
    if (!isfinite(value)) {
        bb_table_missing(table);
        return;
    }
    char *cell = next_cell(table);
    if (cell == NULL || !table->print)
        return;
    if (table->format == BB_FORMAT_JSON)
        json_cell(table, cJSON_CreateNumber(value));
    else
        snprintf(cell, TABLE_CELL_MAX, "%.*f", decimals, value);
}

void bb_table_integer(bb_table_t *table, int64_t value)
{
    char *cell = next_cell(table);
    if (cell == NULL || !table->print)
        return;
    if (table->format == BB_FORMAT_JSON)
        json_cell(table, cJSON_CreateNumber((double)value));
    else
        snprintf(cell, TABLE_CELL_MAX, "%" PRId64, value);
}

void bb_table_missing(bb_table_t *table)
{
    char *cell = next_cell(table);
    if (cell == NULL || !table->print)
        return;
    if (table->format == BB_FORMAT_JSON)
        json_cell(table, cJSON_CreateNull());
    else
        snprintf(cell, TABLE_CELL_MAX, "%s", table->format == BB_FORMAT_CSV ? "" : "-");
}

void bb_table_missing_to_last(bb_table_t *table)
{
    while (table->ncells < table->ncolumns - 1 && table->ncells < TABLE_COLUMNS_MAX)
        bb_table_missing(table);
}

static void print_header(bb_table_t *t)
{
    if (t->format == BB_FORMAT_TABLE) {
        for (int i = 0; i < t->ncolumns; i++)
            if (t->columns[i].legend != NULL)
                fprintf(t->out, "# %s: %s\n", t->columns[i].header, t->columns[i].legend);
    }
    for (int i = 0; i < t->ncolumns; i++) {
        const char *h = t->columns[i].header ? t->columns[i].header : "?";
        if (t->format == BB_FORMAT_CSV)
            fprintf(t->out, "%s%s", i ? "," : "", h);
        else
            fprintf(t->out, "%s%*s", i ? " " : "", t->columns[i].width, h);
    }
    fputc('\n', t->out);
}

void bb_table_row_end(bb_table_t *table)
{
    if (!table->print) {
        table->ncells = 0;
        return;
    }
    if (table->format == BB_FORMAT_JSON) {
        if (table->row != NULL)
            cJSON_AddItemToArray(table->rows, table->row);
        table->row = NULL;
        table->ncells = 0;
        return;
    }
    if (!table->header_done) {
        print_header(table);
        table->header_done = 1;
    }
    for (int i = 0; i < table->ncolumns; i++) {
        const char *cell = i < table->ncells ? table->cells[i]
                         : table->format == BB_FORMAT_CSV ? "" : "-";
        if (table->format == BB_FORMAT_CSV) {
            if (i)
                fputc(',', table->out);
            if (i < table->ncells && table->quoted[i]) {
                fputc('"', table->out);
                for (const char *p = cell; *p; p++) {
                    if (*p == '"')
                        fputc('"', table->out);
                    fputc(*p, table->out);
                }
                fputc('"', table->out);
            } else {
                fputs(cell, table->out);
            }
        } else {
            fprintf(table->out, "%s%*s", i ? " " : "", table->columns[i].width, cell);
        }
    }
    fputc('\n', table->out);
    fflush(table->out);
    table->ncells = 0;
}

void bb_table_time_columns(bb_table_t *table, const char *prefix, const char *legend,
                           int full)
{
    static const char *const parts[] = { "", "_min", "_max", "_mean" };
    char name[128];
    for (int i = 0; i < (full ? 4 : 3); i++) {
        snprintf(name, sizeof name, "%s%s", prefix, parts[i]);
        bb_table_column(table, name, "us", i == 0 ? legend : NULL, 10);
    }
    if (full) {
        snprintf(name, sizeof name, "%s_calls", prefix);
        bb_table_column(table, name, NULL, NULL, 8);
    }
}

void bb_table_time_cells(bb_table_t *table, const double *samples_s, size_t n,
                         int64_t reps, int full)
{
    bb_summary_t sm;
    int ok = samples_s != NULL && n > 0 && bb_stats_summarize(samples_s, n, &sm) == BB_OK;
    double mean = 0.0;
    for (size_t i = 0; ok && i < n; i++)
        mean += samples_s[i] / (double)n;
    const double none = (double)NAN;
    double v[4] = { ok ? sm.median : none, ok ? sm.min : none, ok ? sm.max : none,
                    ok ? mean : none };
    for (int i = 0; i < (full ? 4 : 3); i++)
        bb_table_number(table, v[i] * 1e6, 2);
    if (full) {
        if (ok && reps > 0)
            bb_table_integer(table, (int64_t)n * reps);
        else
            bb_table_missing(table);
    }
}

void bb_table_ci_columns(bb_table_t *table, const char *prefix, double level)
{
    char name[128], legend[256];
    snprintf(name, sizeof name, "%s_ci_lo", prefix);
    snprintf(legend, sizeof legend, "%s_ci_lo_us, _ci_hi_us: the interval of the median of "
             "%s_us at level %g, x(j) and x(n+1-j) of its sorted samples (- with too few)",
             prefix, prefix, level);
    bb_table_column(table, name, "us", legend, 0);
    snprintf(name, sizeof name, "%s_ci_hi", prefix);
    bb_table_column(table, name, "us", NULL, 0);
}

void bb_table_ci_cells(bb_table_t *table, const double *samples_s, size_t n, double level)
{
    bb_interval_t ci;
    if (samples_s != NULL && n > 0 && bb_stats_ci(samples_s, n, level, &ci) == BB_OK
        && ci.j > 0) {
        bb_table_number(table, ci.low * 1e6, 2);
        bb_table_number(table, ci.high * 1e6, 2);
    } else {
        bb_table_missing(table);
        bb_table_missing(table);
    }
}
