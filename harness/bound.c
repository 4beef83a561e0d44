/* bound.c: the machine's lower bound for a redistribution, measured in the
 * run: a ping-pong between the two codes' first ranks and a local memcpy. */
#include "config.h"
#include "harness.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A tag of its own on the link communicator, apart from the protocol's. */
enum { BB_TAG_PING = 53 };

/* The lower bound of this machine                                          */
/* ------------------------------------------------------------------------ */

bb_status_t bb_redist_link_bound(bb_redist_link_t *link, int64_t remote_bytes,
                                 int64_t local_bytes, int reps, bb_redist_bound_t *out)
{
    if (link == NULL)
        return BB_ERR_ARG;
    /* Bad arguments (or remote_bytes and reps that differ: the ping-pong
     * must match) are agreed below, with the allocation, so no rank waits. */
    int bad = out == NULL || remote_bytes < 0 || local_bytes < 0 || reps < 1
              || remote_bytes > INT_MAX;
    if (bad)
        remote_bytes = local_bytes = 0;
    bb_redist_bound_t b;
    memset(&b, 0, sizeof b);
    MPI_Comm comm = bb_redist_link_comm(link);
    int me = 0, size = 0;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return BB_ERR_MPI;
    /* Link rank 0 and the engine's first rank (MDI: the driver's size;
     * intra mode, where every rank is in both codes: rank 1). */
    int mdi = !(bb_redist_link_is_driver(link) && bb_redist_link_is_engine(link));
    int a = 0, z = mdi ? bb_redist_link_code_size(link, 0) : 1;
    b.p2p_ranks[0] = a;
    b.p2p_ranks[1] = z;
    b.p2p_bytes = remote_bytes;
    b.memcpy_bytes = local_bytes;
    int64_t big = remote_bytes > local_bytes ? remote_bytes : local_bytes;
    char *s = malloc((size_t)(big > 0 ? big : 1)), *d = malloc((size_t)(big > 0 ? big : 1));
    int64_t nomem = s == NULL || d == NULL;
    int64_t mine[6] = {bad, nomem, remote_bytes, -remote_bytes, reps, -(int64_t)reps},
            any[6];
    if (bb_agree_max(comm, mine, 6, any) != MPI_SUCCESS) {
        free(s); free(d);
        return BB_ERR_MPI;
    }
    if (any[0] != 0 || any[2] != -any[3] || any[4] != -any[5]) {
        free(s); free(d);
        return BB_ERR_ARG;
    }
    if (any[1] != 0) {
        free(s); free(d);
        return BB_ERR_NOMEM;
    }
    memset(s, 1, (size_t)(big > 0 ? big : 1));
    memset(d, 0, (size_t)(big > 0 ? big : 1));
    double res[2] = {0, 0};
    int rc = MPI_SUCCESS;
    if (size > 1 && remote_bytes > 0) {
        int cnt = (int)remote_bytes;
        double best = INFINITY;
        for (int r = 0; r <= reps && rc == MPI_SUCCESS; r++) {
            if ((rc = MPI_Barrier(comm)) != MPI_SUCCESS)
                break;
            double t = bb_time_now();
            if (me == a) {
                rc = MPI_Send(s, cnt, MPI_BYTE, z, BB_TAG_PING, comm);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Recv(d, cnt, MPI_BYTE, z, BB_TAG_PING, comm, MPI_STATUS_IGNORE);
            } else if (me == z) {
                rc = MPI_Recv(d, cnt, MPI_BYTE, a, BB_TAG_PING, comm, MPI_STATUS_IGNORE);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Send(s, cnt, MPI_BYTE, a, BB_TAG_PING, comm);
            }
            t = (bb_time_now() - t) / 2;
            if (r > 0 && t < best) /* the first round warms the path */
                best = t;
        }
        res[0] = best;
    }
    if (rc == MPI_SUCCESS && me == a && local_bytes > 0) {
        double best = INFINITY;
        for (int r = 0; r <= reps; r++) {
            double t = bb_time_now();
            memcpy(d, s, (size_t)local_bytes);
            t = bb_time_now() - t;
            s[r % local_bytes] ^= d[(r * 7) % local_bytes]; /* keep the copy live */
            if (r > 0 && t < best)
                best = t;
        }
        res[1] = best;
    }
    free(s);
    free(d);
    if (rc != MPI_SUCCESS || MPI_Bcast(res, 2, MPI_DOUBLE, a, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    b.p2p_s = res[0];
    b.memcpy_s = res[1];
    b.p2p_bandwidth = res[0] > 0 ? (double)remote_bytes / res[0] : 0.0;
    b.memcpy_bandwidth = res[1] > 0 ? (double)local_bytes / res[1] : 0.0;
    b.bound_s = res[0] > res[1] ? res[0] : res[1];
    *out = b;
    return BB_OK;
}
