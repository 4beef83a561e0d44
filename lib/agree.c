/* agree.c: fixed-field agreement, shared by every phase.
 * Agreement on a field means its MIN equals its MAX over all live
 * participants; this is ordinary collective reduction, not fault-tolerant
 * consensus. */
#include "config.h"
#include "internal.h"

int bb_agree_minmax(MPI_Comm comm, const int64_t *local, int n,
                    int64_t *min_out, int64_t *max_out)
{
    int rc = MPI_Allreduce(local, min_out, n, MPI_INT64_T, MPI_MIN, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Allreduce(local, max_out, n, MPI_INT64_T, MPI_MAX, comm);
}

int bb_agree_max(MPI_Comm comm, const int64_t *local, int n, int64_t *max_out)
{
    return MPI_Allreduce(local, max_out, n, MPI_INT64_T, MPI_MAX, comm);
}

int bb_agree_fields_equal(const int64_t *min, const int64_t *max, int first,
                          int count)
{
    for (int i = first; i < first + count; i++)
        if (min[i] != max[i])
            return 0;
    return 1;
}
