/* row-part.c: a timed part of a row as a table column (row-part.h). */
#include "config.h"
#include "row-part.h"

#include <stdio.h>

void bb_row_part_column(bb_run_t *run, const bb_row_t *row, const char *suffix,
                        const char *part_name)
{
    char name[96], legend[256];
    snprintf(name, sizeof name, "%s_%s", row->label, suffix);
    snprintf(legend, sizeof legend, "the %s part of %s_us in its median sample (%s)",
             part_name, row->label, bb_run_parts_words(run));
    bb_table_column(bb_run_table(run), name, "us", legend, 10);
}

void bb_row_part_cell(bb_run_t *run, const bb_row_t *row, int p)
{
    if (!(row->parts & (1u << p)))
        bb_table_missing(bb_run_table(run));
    else
        bb_table_number(bb_run_table(run), bb_row_median(row, p) * 1e6, 2);
}
