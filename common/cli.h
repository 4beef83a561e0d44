/*
 * cli.h: parsers of option values (sizes, lists, ranges, seconds, ranks),
 * MPI-free (common/), so that bbench-compare can use them
 * without linking the runner (it compiles common/cli.c itself).
 */
#ifndef BB_CLI_H
#define BB_CLI_H

#include <stddef.h>
#include <stdint.h>
#include "bbench/status.h"

/* ------------------------------------------------------------------------ */
/* Option parsing (cli.c): sizes, lists, ranges                             */
/* ------------------------------------------------------------------------ */

/* Sizes: a nonnegative integer with an optional binary suffix, K/Ki = 2^10,
 * M/Mi = 2^20, G/Gi = 2^30 (case-insensitive), or an exact decimal exponent
 * such as 1e6.  Lists: comma-separated items, each a size or a range
 * LO:HI[:STEP] where STEP is xF (multiply, default x2) or +D (add); a range
 * includes LO and every step <= HI.  A multiplying range from 0 goes 0, 1,
 * F, F^2, ...  A value must be whole (1.5K = 1536; 1.5 and 1e-3 are
 * refused).  At most 4096 values per list, each at most once (a repeated
 * value, "8,8" or "1:8,8", is BB_ERR_PARSE naming it).  Messages quote at
 * most 24 characters of each piece of the text ("..." marks the cut), so
 * that they fit 256 bytes. */
typedef struct bb_size_list {
    int64_t *values;  /* caller owns (bb_size_list_clear) */
    size_t n;
} bb_size_list_t;

/* Local.  On failure, err (errlen bytes) says why; BB_ERR_PARSE. */
bb_status_t bb_cli_parse_size(const char *text, int64_t min, int64_t max,
                              int64_t *value_out, char *err, size_t errlen);
bb_status_t bb_cli_parse_size_list(const char *text, int64_t min, int64_t max,
                                   bb_size_list_t *list_out, char *err,
                                   size_t errlen);
void bb_size_list_clear(bb_size_list_t *list);

/* Local.  A finite decimal double in [min, max] (strtod, whole string).
 * Hexadecimal ("0x1p-10"), inf and nan are refused, as sizes refuse them,
 * and so is a nonzero text that underflows ("1e-400"). */
bb_status_t bb_cli_parse_double(const char *text, double min, double max,
                                double *value_out, char *err, size_t errlen);

/* Local.  "R:REST": a rank in [0, ranks) and a pointer into text after ':'
 * (REST must not be empty).  A bare "R" is accepted with *rest_out "". */
bb_status_t bb_cli_parse_rank_prefix(const char *text, int ranks, int *rank_out,
                                     const char **rest_out, char *err,
                                     size_t errlen);

/* Local.  "R:SECONDS": a rank in [0, ranks) (bb_cli_parse_rank_prefix) and
 * a finite number of seconds in [0, max_s] (bb_cli_parse_double).  Both
 * outputs are written only on BB_OK; err says why not. */
bb_status_t bb_cli_parse_rank_seconds(const char *text, int ranks, double max_s,
                                      int *rank_out, double *seconds_out,
                                      char *err, size_t errlen);

/* Human size for tables: "64K", "1M", "8". Writes at most len bytes. */
void bb_cli_format_size(int64_t value, char *buf, size_t len);

#endif /* BB_CLI_H */
