/* agree.c: fixed-field agreement, shared by every phase.
 * Agreement on a field means its MIN equals its MAX over all live
 * participants; this is ordinary collective reduction, not fault-tolerant
 * consensus. */
#include "config.h"
#include "internal.h"

#include <stdlib.h>

int bb_agree_minmax(MPI_Comm comm, const int64_t *local, int n,
                    int64_t *min_out, int64_t *max_out)
{
    int rc = MPI_Allreduce(local, min_out, n, MPI_INT64_T, MPI_MIN, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Allreduce(local, max_out, n, MPI_INT64_T, MPI_MAX, comm);
}

int bb_agree_minmax_fused(MPI_Comm comm, const int64_t *local, int n,
                          int64_t *min_out, int64_t *max_out)
{
    /* [x, ~x] under one MIN: ~x = -x - 1 reverses the order and, unlike -x,
     * is defined for every int64 (INT64_MIN included), so min(~x) = ~max(x)
     * exactly. */
    int64_t stack[4 * 8] = {0};  /* up to 8 fields without an allocation */
    if (n < 0)
        return MPI_ERR_ARG;
    int64_t *both = n <= 8 ? stack : malloc(4 * (size_t)n * sizeof *both);
    if (both == NULL)
        return MPI_ERR_ARG;
    int64_t *reduced = both + 2 * n;
    for (int i = 0; i < n; i++) {
        both[i] = local[i];
        both[n + i] = ~local[i];
    }
    int rc = MPI_Allreduce(both, reduced, 2 * n, MPI_INT64_T, MPI_MIN, comm);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++) {
            min_out[i] = reduced[i];
            max_out[i] = ~reduced[n + i];
        }
    if (both != stack)
        free(both);
    return rc;
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
