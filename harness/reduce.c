/* reduce.c: the cross-rank reduction of timings (the MPI half of the
 * statistics; the record library holds the MPI-free half). */
#include "config.h"
#include "harness.h"

int bb_stats_reduce_max(MPI_Comm comm, const double *local, int n,
                        double *max_out)
{
    if (n < 0 || (n > 0 && (local == NULL || max_out == NULL)))
        return MPI_ERR_ARG;
    /* MPI forbids aliased buffers; reducing in place is a natural use. */
    const void *send = (local == max_out) ? MPI_IN_PLACE : (const void *)local;
    return MPI_Allreduce(send, max_out, n, MPI_DOUBLE, MPI_MAX, comm);
}
