/*
 * table.h: the rows a benchmark prints on stdout, in the format the user
 * chose (--format table|csv|json).
 *
 * A benchmark declares its columns once (name, unit, a legend text), then
 * gives each row's cells in column order.  The table owns the layout:
 *   table  aligned columns; a header "name_unit"; '#' lines before it for
 *          notes and a legend of every column that has one; cells never hold
 *          spaces (a space in a text cell is written '_'); "-" for a cell
 *          that was not measured.
 *   csv    the header line and one line per row (RFC 4180 quoting where a
 *          cell needs it), an empty field for not measured; no notes.
 *   json   one document when the table ends: {"columns": [{"name","unit",
 *          "legend"}], "notes": [...], "rows": [{name: value}]}, null for
 *          not measured.
 * Only rank 0 prints; every call is local and cheap on other ranks.
 * Strings passed in are copied.  Numbers are in the column's unit: the
 * caller scales (seconds * 1e6 for "us").
 */
#ifndef BB_TABLE_H
#define BB_TABLE_H

#include <stdint.h>
#include <stdio.h>

typedef enum bb_format {
    BB_FORMAT_TABLE = 0,
    BB_FORMAT_CSV,
    BB_FORMAT_JSON
} bb_format_t;

/* "table", "csv", "json"; -1 for anything else. */
int bb_format_parse(const char *text);
const char *bb_format_name(bb_format_t format);

typedef struct bb_table bb_table_t;

/* A table printing to out when print is nonzero (rank 0), else silent.
 * NULL when out of memory. */
bb_table_t *bb_table_create(bb_format_t format, FILE *out, int print);
/* Ends the table (json prints its document here) and frees it. */
void bb_table_destroy(bb_table_t *table);
bb_format_t bb_table_format(const bb_table_t *table);

/* A line before the header: "# text" in table format, an entry of "notes"
 * in json, nothing in csv. */
void bb_table_note(bb_table_t *table, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Declares the next column, before the first row.  name: unique, no
 * spaces; unit: "us", "B", "GB/s", ... or NULL (the header is then name
 * alone, else name_unit); legend: what the column means, or NULL; width:
 * the least width in table format (0: the header's). */
void bb_table_column(bb_table_t *table, const char *name, const char *unit,
                     const char *legend, int width);

/* The current row's next cell. */
void bb_table_text(bb_table_t *table, const char *text);
void bb_table_number(bb_table_t *table, double value, int decimals);
void bb_table_integer(bb_table_t *table, int64_t value);
/* Not measured (or not meaningful: a ratio on a refused row). */
void bb_table_missing(bb_table_t *table);
/* Missing cells up to the last column (a line that fills only its first
 * columns and its last). */
void bb_table_missing_to_last(bb_table_t *table);
/* Ends the row: table and csv print it at once (with the header first). */
void bb_table_row_end(bb_table_t *table);

/* The columns of one timed quantity, the same in every benchmark:
 * prefix_us (median), prefix_min_us, prefix_max_us and, when full
 * (-f/--full), prefix_mean_us and prefix_calls (calls timed: samples x reps
 * per sample).  Times are per call, in microseconds. */
void bb_table_time_columns(bb_table_t *table, const char *prefix, const char *legend,
                           int full);
/* Their cells from n samples in seconds per call; n == 0 or samples NULL:
 * every cell missing. */
void bb_table_time_cells(bb_table_t *table, const double *samples_s, size_t n,
                         int64_t reps, int full);

/* The interval of the median of one timed quantity: prefix_ci_lo_us and
 * prefix_ci_hi_us (bb_stats_ci at level; '-' where the samples are too few). */
void bb_table_ci_columns(bb_table_t *table, const char *prefix, double level);
void bb_table_ci_cells(bb_table_t *table, const double *samples_s, size_t n, double level);

#endif
