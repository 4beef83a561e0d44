/* tests/mpi/check-redist.h: what the redistribution tests share, on top of
 * check-mpi.h.  Include it once, in the test program's only source file. */
#ifndef BB_TESTS_CHECK_REDIST_H
#define BB_TESTS_CHECK_REDIST_H

#include "../check-mpi.h"
#include "bench/redist/redist.h"

#include <stdio.h>

/* Local.  This rank's map of layout spec for N = n at epoch in the driver's
 * (engine 0) or the engine's (engine 1) code of l; NULL when this rank is
 * not in that code.  A spec that does not parse or fit aborts the job with
 * exit 3: the test's own tables are wrong. */
static inline bb_map_t *check_code_map(bb_redist_link_t *l, int engine, const char *spec,
                                       int64_t n, int64_t epoch)
{
    if (!(engine ? bb_redist_link_is_engine(l) : bb_redist_link_is_driver(l)))
        return NULL;
    bb_layout_t lay;
    bb_map_t *m = NULL;
    if (bb_layout_parse(spec, &lay, NULL, 0) != BB_OK
        || bb_layout_map(&lay, n, bb_redist_link_code_rank(l, engine),
                         bb_redist_link_code_size(l, engine), epoch, &m) != BB_OK) {
        fprintf(stderr, "rank %d: cannot build layout %s\n", check_rank, spec);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return m;
}

#endif /* BB_TESTS_CHECK_REDIST_H */
