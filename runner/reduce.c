/* reduce.c: the cross-rank reduction of timings (the MPI half of the
 * statistics; the record library holds the MPI-free half). */
#include "config.h"
#include "measure.h"

#include <string.h>

int bb_stats_reduce_max(MPI_Comm comm, const double *local, int n,
                        double *max_out)
{
    if (n < 0 || (n > 0 && (local == NULL || max_out == NULL)))
        return MPI_ERR_ARG;
    /* MPI forbids aliased buffers; reducing in place is a natural use. */
    const void *send = (local == max_out) ? MPI_IN_PLACE : (const void *)local;
    return MPI_Allreduce(send, max_out, n, MPI_DOUBLE, MPI_MAX, comm);
}

int bb_stats_reduce_critical(MPI_Comm comm, const double *local, int n, double *out,
                             int *rank_out)
{
    if (n < 1 || local == NULL || out == NULL)
        return MPI_ERR_ARG;
    struct { double whole; int rank; } mine = { local[0], 0 }, slowest;
    MPI_Comm_rank(comm, &mine.rank);
    int rc = MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (slowest.rank == mine.rank && out != local)
        memcpy(out, local, (size_t)n * sizeof *out);
    rc = MPI_Bcast(out, n, MPI_DOUBLE, slowest.rank, comm);
    if (rc == MPI_SUCCESS && rank_out != NULL)
        *rank_out = slowest.rank;
    return rc;
}

const char *bb_rank_stat_name(bb_rank_stat_t stat)
{
    return stat == BB_RANK_STAT_MEAN ? "mean" : "max";
}

int bb_stats_reduce_rank(MPI_Comm comm, bb_rank_stat_t stat, const double *local, int n,
                         double *out, int *rank_out)
{
    if (stat != BB_RANK_STAT_MEAN)
        return bb_stats_reduce_critical(comm, local, n, out, rank_out);
    if (n < 1 || local == NULL || out == NULL)
        return MPI_ERR_ARG;
    int size, rc = MPI_Allreduce(local == out ? MPI_IN_PLACE : (const void *)local, out, n,
                                 MPI_DOUBLE, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < n; i++)
        out[i] /= (double)size;
    if (rank_out != NULL)
        *rank_out = -1;
    return MPI_SUCCESS;
}
