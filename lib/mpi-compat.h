/*
 * mpi-compat.h: the MPI calls bbench makes that MPI libraries do not all
 * name alike (private).  configure's feature tests (m4/bb_mpi_features.m4)
 * say which exists; this header maps bbench's name onto it.
 *
 * bb_mpi_allreduce_init: MPI 4's MPI_Allreduce_init (MPICH 4), else Open MPI
 * 4.1's MPIX_Allreduce_init from mpi-ext.h (same arguments).  Without
 * either (BB_HAVE_PERSISTENT_COLLECTIVES undefined) the programs refuse the
 * persistent requests policy before any call; should the library be asked
 * all the same, the call fails with MPI_ERR_UNSUPPORTED_OPERATION.
 * bb_pmpi_allreduce_init is its profiling name, for interposers.
 */
#ifndef BB_MPI_COMPAT_H
#define BB_MPI_COMPAT_H

#include <mpi.h>

#if defined(BB_HAVE_MPI_ALLREDUCE_INIT)
#define bb_mpi_allreduce_init MPI_Allreduce_init
#define bb_pmpi_allreduce_init PMPI_Allreduce_init
#elif defined(BB_HAVE_MPIX_ALLREDUCE_INIT)
#include <mpi-ext.h>
#define bb_mpi_allreduce_init MPIX_Allreduce_init
#define bb_pmpi_allreduce_init PMPIX_Allreduce_init
#else
#define BB_ALLREDUCE_INIT_NAME "MPI_Allreduce_init (not in this MPI)"
static inline int bb_mpi_allreduce_unsupported(MPI_Request *request)
{
    *request = MPI_REQUEST_NULL;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
#define bb_mpi_allreduce_init(send, recv, count, type, op, comm, info, request) \
    bb_mpi_allreduce_unsupported(request)
#endif

#endif
