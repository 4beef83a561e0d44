/* tests/check-mpi.h: how every MPI C test starts: MPI at FUNNELED, the rank
 * prefixed to failures (check.h), the world bound.  Include it once, in the
 * test program's only source file. */
#ifndef BB_TESTS_CHECK_MPI_H
#define BB_TESTS_CHECK_MPI_H

#include "check.h"
#include "bbench.h"

#include <mpi.h>

/* Collective.  MPI_Init_thread, this rank and the size, and the bound world
 * (the caller releases it); a world that cannot be bound aborts the job
 * with exit 3. */
static inline bb_world_t *check_mpi_start(int *argc, char ***argv, int *rank_out,
                                          int *size_out)
{
    int provided;
    bb_world_t *world = NULL;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, rank_out);
    MPI_Comm_size(MPI_COMM_WORLD, size_out);
    check_rank = *rank_out;
    if (bb_world_bind(MPI_COMM_WORLD, &world) != BB_OK) {
        fprintf(stderr, "rank %d: cannot bind the world\n", *rank_out);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return world;
}

#endif /* BB_TESTS_CHECK_MPI_H */
