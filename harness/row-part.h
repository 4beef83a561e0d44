/* row-part.h: a timed part of a row as a table column of its own (the
 * median of the part, beside the row's whole), for any benchmark of
 * variants. */
#ifndef BB_ROW_PART_H
#define BB_ROW_PART_H

#include "runner.h"

/* Rank 0, from row_columns.  The column "<label>_<suffix>" (us) of part
 * part_name of row, with its legend. */
void bb_row_part_column(bb_run_t *run, const bb_row_t *row, const char *suffix,
                        const char *part_name);
/* Rank 0, from row_cells.  Its cell: the median of part p in us, or a
 * missing cell when the row does not time it (an untimed phase). */
void bb_row_part_cell(bb_run_t *run, const bb_row_t *row, int p);

#endif
