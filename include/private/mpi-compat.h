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

/*
 * Work-arounds for SimGrid SMPI (configure --with-smpi defines BB_SMPI; see
 * doc/simulate.md).  Compiled only in that build; an ordinary build calls
 * MPI directly.
 *
 * bb_mpi_is_thread_main: SMPI 3.32's MPI_Is_thread_main answers true on
 * rank 0 only, though every rank calls it from the one context that called
 * MPI_Init_thread (tried with a small program).  A simulated rank's code
 * runs in that context only, so the caller is its main thread.
 *
 * bb_mpi_query_thread: SMPI 3.32 answers MPI_THREAD_SINGLE to a request for
 * MPI_THREAD_FUNNELED (it supports no threads calling MPI).  bbench asks
 * only for FUNNELED (one thread makes every MPI call), which a simulated
 * process satisfies, so SINGLE is read as FUNNELED.  A request for
 * MULTIPLE (asynchronous progress) thus gets FUNNELED, which the records
 * already report as no asynchronous progress.
 * BB_SMPI_THREAD_NOTE says so in the record (runtime.simulated).
 */
#ifdef BB_SMPI
#define BB_SMPI_THREAD_NOTE "SMPI answers MPI_THREAD_SINGLE to MPI_THREAD_FUNNELED and " \
    "MPI_Is_thread_main true on rank 0 only; the SMPI build reads SINGLE as FUNNELED " \
    "and each simulated rank's caller as its main thread (include/private/mpi-compat.h)"
static inline int bb_mpi_is_thread_main(int *flag)
{
    *flag = 1;
    return MPI_SUCCESS;
}
static inline int bb_mpi_query_thread(int *level)
{
    int rc = MPI_Query_thread(level);
    if (rc == MPI_SUCCESS && *level == MPI_THREAD_SINGLE)
        *level = MPI_THREAD_FUNNELED;
    return rc;
}
#else
#define bb_mpi_is_thread_main MPI_Is_thread_main
#define bb_mpi_query_thread MPI_Query_thread
#endif

#endif
