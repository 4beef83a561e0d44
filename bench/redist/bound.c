/* bound.c: the machine's lower bound for a redistribution, measured in the
 * run: ping-pongs between the two codes' first ranks, an agreement, local
 * memory copies and every rank copying at once (the host's limit). */
#include "config.h"
#include "redist.h"
#include "private/redist-tags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages above this are sent in pieces: no INT_MAX count limit. */
#define BB_PING_PIECE ((int64_t)1 << 30)

struct bb_rd_probe {
    MPI_Comm comm;
    int me, size, a, z;
    int64_t remote_bytes, memory_bytes, host_bytes, host_chunk;
    int ranks_per_host_max;
    char *s, *d;            /* max(remote, memory, host_chunk) bytes each */
    int64_t round;
};

/* Link rank 0 and the engine's first rank (MDI: the driver's size; intra
 * mode, where every rank is in both codes: rank 1). */
static void bb_probe_pair(bb_redist_link_t *link, int size, int *a, int *z)
{
    int mdi = !(bb_redist_link_is_driver(link) && bb_redist_link_is_engine(link));
    *a = 0;
    *z = mdi ? bb_redist_link_code_size(link, 0) : (size > 1 ? 1 : 0);
}

/* One round trip between a and z of count items of type at offset off of
 * the probe's buffers (a sends first). */
static int bb_round_trip(bb_rd_probe_t *p, int64_t off, int count, MPI_Datatype type)
{
    int rc;
    if (p->me == p->a) {
        rc = MPI_Send(p->s + off, count, type, p->z, BB_TAG_BOUND_PING, p->comm);
        return rc != MPI_SUCCESS ? rc : MPI_Recv(p->d + off, count, type, p->z,
                                                 BB_TAG_BOUND_PING, p->comm, MPI_STATUS_IGNORE);
    }
    rc = MPI_Recv(p->d + off, count, type, p->a, BB_TAG_BOUND_PING, p->comm, MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS ? rc : MPI_Send(p->s + off, count, type, p->a, BB_TAG_BOUND_PING,
                                             p->comm);
}

/* cnt >= 2 bytes as one non-contiguous datatype: its two halves, the second
 * first (the same bytes, not one contiguous block). */
static int bb_split_type(int cnt, MPI_Datatype *out)
{
    int h = cnt / 2, len[2] = {cnt - h, h};
    MPI_Aint at[2] = {h, 0};
    int rc = MPI_Type_create_hindexed(2, len, at, MPI_BYTE, out);
    return rc != MPI_SUCCESS ? rc : MPI_Type_commit(out);
}

/* Local to a and z.  The one-way time of bytes from a to z: a's round trip
 * / 2, in pieces of at most 1 GiB; 0 on z and elsewhere.  An untimed 1-byte
 * round trip comes first, so that the timed one starts with both ranks in
 * it: neither one's late arrival (a barrier's exit skew) is timed, which a
 * redistribution pays once, not once per part of the bound.  split: each
 * piece as one non-contiguous datatype, not one contiguous block: MPI
 * libraries move the two by different protocols (Open MPI's shared memory:
 * single copy for a contiguous message above its eager limit, copy-in
 * copy-out fragments otherwise), the methods' messages are of both kinds,
 * and the bound must be no slower than either. */
static int bb_ping(bb_rd_probe_t *p, int64_t bytes, int split, double *one_way)
{
    int rc = MPI_SUCCESS;
    *one_way = 0;
    if (p->a == p->z || bytes <= 0 || (p->me != p->a && p->me != p->z))
        return rc;
    MPI_Datatype piece = MPI_DATATYPE_NULL, tail = MPI_DATATYPE_NULL;
    int64_t last = bytes % BB_PING_PIECE;
    if (split && bytes >= BB_PING_PIECE)
        rc = bb_split_type((int)BB_PING_PIECE, &piece);
    if (split && last >= 2 && rc == MPI_SUCCESS)
        rc = bb_split_type((int)last, &tail);
    if (rc == MPI_SUCCESS)
        rc = bb_round_trip(p, 0, 1, MPI_BYTE);
    double t = bb_time_now();
    for (int64_t off = 0; off < bytes && rc == MPI_SUCCESS; off += BB_PING_PIECE) {
        int cnt = (int)(bytes - off < BB_PING_PIECE ? bytes - off : BB_PING_PIECE);
        MPI_Datatype type = cnt == BB_PING_PIECE ? piece : tail;
        rc = type != MPI_DATATYPE_NULL ? bb_round_trip(p, off, 1, type)
                                       : bb_round_trip(p, off, cnt, MPI_BYTE);
    }
    if (p->me == p->a)
        *one_way = (bb_time_now() - t) / 2;
    if (piece != MPI_DATATYPE_NULL)
        MPI_Type_free(&piece);
    if (tail != MPI_DATATYPE_NULL)
        MPI_Type_free(&tail);
    return rc;
}

static double bb_copy(bb_rd_probe_t *p, int64_t bytes)
{
    if (bytes <= 0)
        return 0;
    double t = bb_time_now();
    memcpy(p->d, p->s, (size_t)bytes);
    t = bb_time_now() - t;
    /* keep the copy live */
    p->s[p->round % bytes] ^= p->d[(p->round * 7) % bytes];
    p->round++;
    return t;
}

bb_status_t bb_rd_probe_create(bb_redist_link_t *link, int64_t remote_bytes,
                               int64_t memory_bytes, int64_t host_bytes,
                               bb_rd_probe_t **probe_out)
{
    if (link == NULL)
        return BB_ERR_ARG;
    bb_rd_probe_t *p = calloc(1, sizeof *p);
    int bad = probe_out == NULL || remote_bytes < 0 || memory_bytes < 0 || host_bytes < 0;
    MPI_Comm comm = bb_redist_link_comm(link);
    int me = 0, size = 1;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        free(p);
        return BB_ERR_MPI;
    }
    /* ranks per host: a shared-memory split of the link */
    MPI_Comm node = MPI_COMM_NULL;
    int on_node = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node)
            != MPI_SUCCESS || MPI_Comm_size(node, &on_node) != MPI_SUCCESS) {
        free(p);
        return BB_ERR_MPI;
    }
    MPI_Comm_free(&node);
    if (bad) {
        remote_bytes = memory_bytes = host_bytes = 0;
    }
    int64_t chunk = size > 0 ? host_bytes / size : 0;
    int64_t big = remote_bytes;
    if (memory_bytes > big)
        big = memory_bytes;
    if (chunk > big)
        big = chunk;
    char *s = p ? malloc((size_t)(big > 0 ? big : 1)) : NULL;
    char *d = p ? malloc((size_t)(big > 0 ? big : 1)) : NULL;
    int64_t mine[7] = {bad, p == NULL || s == NULL || d == NULL, remote_bytes, -remote_bytes,
                       host_bytes, -host_bytes, on_node},
            any[7];
    if (bb_agree_max(comm, mine, 7, any) != MPI_SUCCESS) {
        free(s); free(d); free(p);
        return BB_ERR_MPI;
    }
    if (any[0] != 0 || any[2] != -any[3] || any[4] != -any[5] || any[1] != 0) {
        free(s); free(d); free(p);
        return any[1] != 0 && any[0] == 0 ? BB_ERR_NOMEM : BB_ERR_ARG;
    }
    memset(s, 1, (size_t)(big > 0 ? big : 1));
    memset(d, 0, (size_t)(big > 0 ? big : 1));
    p->comm = comm;
    p->me = me;
    p->size = size;
    bb_probe_pair(link, size, &p->a, &p->z);
    p->remote_bytes = remote_bytes;
    p->memory_bytes = memory_bytes;
    p->host_bytes = host_bytes;
    p->host_chunk = chunk;
    p->ranks_per_host_max = (int)any[6];
    p->s = s;
    p->d = d;
    *probe_out = p;
    return BB_OK;
}

/* A side whose mean contiguous run is shorter than this many bytes must be
 * gathered through memory (packed, by hand or by MPI) before the network:
 * the bound counts that copy. */
enum { BB_FRAGMENTED_RUN_BYTES = 256 };

bb_status_t bb_rd_probe_for_traffic(bb_redist_link_t *link, const bb_redist_traffic_t *direct,
                                    int64_t element_bytes, bb_rd_probe_t **probe_out)
{
    const bb_redist_traffic_t *t = direct;
    int64_t remote = t->max_in_bytes > t->max_out_bytes ? t->max_in_bytes : t->max_out_bytes;
    /* the memory the busiest rank must copy besides the network: its local
     * part, and a fragmented side (short runs) gathered or scattered */
    int64_t memory = t->max_self_bytes;
    if (t->send_mean_run_elements >= 0
        && t->send_mean_run_elements * (double)element_bytes < BB_FRAGMENTED_RUN_BYTES
        && t->max_out_bytes > memory)
        memory = t->max_out_bytes;
    if (t->recv_mean_run_elements >= 0
        && t->recv_mean_run_elements * (double)element_bytes < BB_FRAGMENTED_RUN_BYTES
        && t->max_in_bytes > memory)
        memory = t->max_in_bytes;
    return bb_rd_probe_create(link, remote, memory, t->moved_bytes, probe_out);
}

void bb_rd_probe_free(bb_rd_probe_t *probe)
{
    if (probe == NULL)
        return;
    free(probe->s);
    free(probe->d);
    free(probe);
}

/* Each part of a call is the best of a few tries: on a loaded machine one
 * descheduled rank would otherwise lift the bound above what a method
 * achieves (the small parts are cheap to repeat; large copies twice). */
enum { BB_PROBE_TRIES_SMALL = 5, BB_PROBE_TRIES_LARGE = 2 };

bb_status_t bb_rd_probe_call(void *arg, double *parts, double *counts)
{
    bb_rd_probe_t *p = arg;
    (void)counts;
    double t0 = bb_time_now(), t;
    int64_t in[18] = {0}, out[18];
    double best[BB_PROBE_PARTS];
    for (int i = 0; i < BB_PROBE_PARTS; i++)
        best[i] = INFINITY;
    for (int r = 0; r < BB_PROBE_TRIES_SMALL; r++) {
        double one = 0;
        /* an untimed agreement first, so that no rank's late arrival is
         * timed (see bb_ping) */
        if (MPI_Barrier(p->comm) != MPI_SUCCESS
            || MPI_Allreduce(in, out, 18, MPI_INT64_T, MPI_MAX, p->comm) != MPI_SUCCESS)
            return BB_ERR_MPI;
        t = bb_time_now();
        if (MPI_Allreduce(in, out, 18, MPI_INT64_T, MPI_MAX, p->comm) != MPI_SUCCESS)
            return BB_ERR_MPI;
        t = bb_time_now() - t;
        best[BB_PROBE_AGREE] = fmin(best[BB_PROBE_AGREE], t);
        if (MPI_Barrier(p->comm) != MPI_SUCCESS || bb_ping(p, 1, 0, &one) != MPI_SUCCESS)
            return BB_ERR_MPI;
        best[BB_PROBE_LATENCY] = fmin(best[BB_PROBE_LATENCY], one);
    }
    int tries = p->remote_bytes + p->memory_bytes + p->host_chunk < (1 << 20)
                    ? BB_PROBE_TRIES_SMALL : BB_PROBE_TRIES_LARGE;
    for (int r = 0; r < tries; r++) {
        double one = 0, split = 0;
        if (MPI_Barrier(p->comm) != MPI_SUCCESS
            || bb_ping(p, p->remote_bytes, 0, &one) != MPI_SUCCESS
            || MPI_Barrier(p->comm) != MPI_SUCCESS
            || bb_ping(p, p->remote_bytes, 1, &split) != MPI_SUCCESS)
            return BB_ERR_MPI;
        best[BB_PROBE_P2P] = fmin(best[BB_PROBE_P2P], fmin(one, split));
        best[BB_PROBE_MEMORY] = fmin(best[BB_PROBE_MEMORY],
                                     p->me == p->a ? bb_copy(p, p->memory_bytes) : 0.0);
        /* every rank at once: what the ranks sharing a host copy together */
        if (p->ranks_per_host_max > 1) {
            if (MPI_Barrier(p->comm) != MPI_SUCCESS)
                return BB_ERR_MPI;
            best[BB_PROBE_HOST] = fmin(best[BB_PROBE_HOST], bb_copy(p, p->host_chunk));
        } else {
            best[BB_PROBE_HOST] = 0;
        }
    }
    /* Each part is timed on the rank that does it (the ping on p2p_ranks[0],
     * the copy on rank a), the others hold 0: every rank takes the part's
     * maximum, so that the engine's sample (the parts of the rank with the
     * slowest whole) holds each part whichever rank that is. */
    if (MPI_Allreduce(MPI_IN_PLACE, &best[BB_PROBE_AGREE], BB_PROBE_PARTS - BB_PROBE_AGREE,
                      MPI_DOUBLE, MPI_MAX, p->comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    for (int i = BB_PROBE_AGREE; i < BB_PROBE_PARTS; i++)
        parts[i] += best[i];
    parts[BB_PROBE_TOTAL] += bb_time_now() - t0;
    return BB_OK;
}

static double bb_best(const double *x, size_t n)
{
    double b = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (x[i] < b)
            b = x[i];
    return n > 0 ? b : 0;
}

void bb_rd_probe_bound(const bb_rd_probe_t *p, const double *const parts[],
                       size_t samples, bb_rd_bound_t *out)
{
    bb_rd_bound_t b;
    memset(&b, 0, sizeof b);
    b.p2p_ranks[0] = p->a;
    b.p2p_ranks[1] = p->z;
    b.p2p_bytes = p->remote_bytes;
    b.memcpy_bytes = p->memory_bytes;
    b.host_bytes = p->host_bytes;
    b.ranks_per_host_max = p->ranks_per_host_max;
    b.agree_s = bb_best(parts[BB_PROBE_AGREE], samples);
    b.latency_s = bb_best(parts[BB_PROBE_LATENCY], samples);
    b.p2p_s = bb_best(parts[BB_PROBE_P2P], samples);
    b.memcpy_s = bb_best(parts[BB_PROBE_MEMORY], samples);
    b.host_s = bb_best(parts[BB_PROBE_HOST], samples);
    b.p2p_bandwidth = b.p2p_s > 0 ? (double)b.p2p_bytes / b.p2p_s : 0.0;
    b.memcpy_bandwidth = b.memcpy_s > 0 ? (double)b.memcpy_bytes / b.memcpy_s : 0.0;
    double data = b.latency_s;
    if (b.p2p_s > data)
        data = b.p2p_s;
    if (b.memcpy_s > data)
        data = b.memcpy_s;
    if (b.host_s > data)
        data = b.host_s;
    /* An eager message carries its handshake inside its exchange, so the
     * least a message costs is its data; agree is what a method that agrees
     * apart pays on top (reported beside, not added). */
    b.bound_s = data;
    *out = b;
}

/* The older, simpler bound (max of a ping-pong and a memcpy, best of reps),
 * kept for the library's misuse tests: arguments agreed alike. */
bb_status_t bb_rd_link_bound(bb_redist_link_t *link, int64_t remote_bytes,
                             int64_t local_bytes, int reps, bb_rd_bound_t *out)
{
    if (link == NULL)
        return BB_ERR_ARG;
    int bad = out == NULL || remote_bytes < 0 || local_bytes < 0 || reps < 1;
    if (bad)
        remote_bytes = local_bytes = 0;
    MPI_Comm comm = bb_redist_link_comm(link);
    int64_t mine[4] = {bad, reps, -(int64_t)reps, 0}, any[4];
    if (bb_agree_max(comm, mine, 4, any) != MPI_SUCCESS)
        return BB_ERR_MPI;
    if (any[0] != 0 || any[1] != -any[2])
        return BB_ERR_ARG;
    bb_rd_probe_t *p = NULL;
    bb_status_t st = bb_rd_probe_create(link, remote_bytes, local_bytes, 0, &p);
    if (st != BB_OK)
        return st;
    double best_p2p = INFINITY, best_copy = INFINITY;
    int rc = MPI_SUCCESS;
    for (int r = 0; r <= reps && rc == MPI_SUCCESS; r++) {
        double one = 0, c = 0;
        if ((rc = MPI_Barrier(comm)) != MPI_SUCCESS)
            break;
        rc = bb_ping(p, remote_bytes, 0, &one);
        if (p->me == p->a)
            c = bb_copy(p, local_bytes);
        if (r > 0 && one < best_p2p) /* the first round warms the path */
            best_p2p = one;
        if (r > 0 && c < best_copy)
            best_copy = c;
    }
    double res[2] = {best_p2p, best_copy};
    int a = p->a, z = p->z;
    bb_rd_probe_free(p);
    if (rc != MPI_SUCCESS || MPI_Bcast(res, 2, MPI_DOUBLE, a, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    bb_rd_bound_t b;
    memset(&b, 0, sizeof b);
    b.p2p_ranks[0] = a;
    b.p2p_ranks[1] = z;
    b.p2p_bytes = remote_bytes;
    b.memcpy_bytes = local_bytes;
    b.p2p_s = res[0];
    b.memcpy_s = res[1];
    b.p2p_bandwidth = res[0] > 0 ? (double)remote_bytes / res[0] : 0.0;
    b.memcpy_bandwidth = res[1] > 0 ? (double)local_bytes / res[1] : 0.0;
    b.bound_s = res[0] > res[1] ? res[0] : res[1];
    *out = b;
    return BB_OK;
}

/* ---- the bound in the record and the table ---------------------------------- */

void bb_rd_bound_quantities(cJSON *q, const bb_rd_bound_t *bound,
                            const double *probe_total, size_t samples, const char *scope)
{
    int pair = bound->p2p_ranks[0] != bound->p2p_ranks[1];
    if (bound->off) {
        static const char *const names[] = {"bound.agree", "bound.latency", "bound.p2p",
                                            "bound.memcpy", "bound.host", "bound.probe",
                                            "bound"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            bb_quantities_add(q, names[i], bb_quantity_null("s", scope, BB_REDIST_BOUND_OFF));
        bb_quantities_add(q, "bound.p2p_bytes", bb_quantity_null("byte", scope,
                                                                 BB_REDIST_BOUND_OFF));
        bb_quantities_add(q, "bound.memcpy_bytes", bb_quantity_null("byte", scope,
                                                                    BB_REDIST_BOUND_OFF));
        return;
    }
    bb_quantities_add(q, "bound.agree", bb_quantity_value(bound->agree_s, "s", "run/link"));
    bb_quantities_add(q, "bound.latency",
                      pair ? bb_quantity_value(bound->latency_s, "s", "run/pair")
                           : bb_quantity_null("s", "run/pair", "one rank: no message"));
    bb_quantities_add(q, "bound.p2p",
                      bound->p2p_bytes > 0 && pair
                          ? bb_quantity_value(bound->p2p_s, "s", "run/pair")
                          : bb_quantity_null("s", "run/pair", "no bytes change rank"));
    bb_quantities_add(q, "bound.p2p_bytes",
                      bb_quantity_value((double)bound->p2p_bytes, "byte", scope));
    bb_quantities_add(q, "bound.memcpy",
                      bound->memcpy_bytes > 0
                          ? bb_quantity_value(bound->memcpy_s, "s", "run/rank")
                          : bb_quantity_null("s", "run/rank", "nothing to copy locally or "
                                             "to pack"));
    bb_quantities_add(q, "bound.memcpy_bytes",
                      bb_quantity_value((double)bound->memcpy_bytes, "byte", scope));
    bb_quantities_add(q, "bound.host",
                      bound->ranks_per_host_max > 1 && bound->host_bytes > 0
                          ? bb_quantity_value(bound->host_s, "s", "run/host")
                          : bb_quantity_null("s", "run/host",
                                             bound->ranks_per_host_max > 1
                                                 ? "no bytes change owner"
                                                 : "one link rank per host: the network "
                                                   "ping-pong is the limit"));
    bb_quantities_add(q, "bound.probe", bb_quantity_timing(probe_total, samples, scope, NULL));
    bb_quantities_add(q, "bound", bb_quantity_value(bound->bound_s, "s", scope));
}

void bb_rd_bound_note(bb_table_t *table, const bb_rd_bound_t *bound)
{
    if (bound->off) {
        bb_table_note(table, "  bound: %s", BB_REDIST_BOUND_OFF);
        return;
    }
    char host[96] = "not measured: one link rank per host", mem[96] =
        "none: no local part and no fragmented side", p2p[96] = "none: nothing changes rank";
    if (bound->ranks_per_host_max > 1 && bound->host_bytes > 0)
        snprintf(host, sizeof host, "%.1f us for %lld B over %d ranks/host", bound->host_s * 1e6,
                 (long long)bound->host_bytes, bound->ranks_per_host_max);
    if (bound->memcpy_bytes > 0)
        snprintf(mem, sizeof mem, "%.1f us for %lld B", bound->memcpy_s * 1e6,
                 (long long)bound->memcpy_bytes);
    if (bound->p2p_bytes > 0 && bound->p2p_ranks[0] != bound->p2p_ranks[1])
        snprintf(p2p, sizeof p2p, "%.1f us for %lld B", bound->p2p_s * 1e6,
                 (long long)bound->p2p_bytes);
    bb_table_note(table, "  bound %.1f us = max(latency %.1f, p2p %s, memory %s, host %s); "
                  "agree %.1f us more for a method that is not eager", bound->bound_s * 1e6,
                  bound->latency_s * 1e6, p2p, mem, host, bound->agree_s * 1e6);
}

static cJSON *runs_mean(double v)
{
    return v >= 0 ? bb_quantity_value(v, "count", "call/all-ranks")
                  : bb_quantity_null("count", "call/all-ranks",
                                     "no slot runs on this side: the root methods move "
                                     "whole arrays and pick elements one by one, or N = 0");
}

void bb_rd_traffic_quantities(cJSON *q, const bb_redist_traffic_t *direct,
                              const bb_redist_traffic_t *t, const char *scope)
{
    bb_quantities_add(q, "redist.bytes_changing_owner",
                      bb_quantity_value((double)direct->moved_bytes, "byte", "call/all-ranks"));
    bb_quantities_add(q, "redist.bytes_moved",
                      bb_quantity_value((double)t->moved_bytes, "byte", "call/all-ranks"));
    bb_quantities_add(q, "redist.max_in_bytes",
                      bb_quantity_value((double)t->max_in_bytes, "byte", scope));
    bb_quantities_add(q, "redist.max_out_bytes",
                      bb_quantity_value((double)t->max_out_bytes, "byte", scope));
    bb_quantities_add(q, "redist.max_local_copy_bytes",
                      bb_quantity_value((double)t->max_self_bytes, "byte", scope));
    bb_quantities_add(q, "redist.peers_mean",
                      bb_quantity_value(t->mean_peers, "count", "call/mean-rank"));
    bb_quantities_add(q, "redist.peers_max",
                      bb_quantity_value((double)t->max_peers, "count", scope));
    bb_quantities_add(q, "redist.send_mean_run_elements", runs_mean(t->send_mean_run_elements));
    bb_quantities_add(q, "redist.recv_mean_run_elements", runs_mean(t->recv_mean_run_elements));
    bb_quantities_add(q, "redist.send_runs_max",
                      bb_quantity_value((double)t->send_runs_max, "count", scope));
    bb_quantities_add(q, "redist.recv_runs_max",
                      bb_quantity_value((double)t->recv_runs_max, "count", scope));
    bb_quantities_add(q, "redist.steps", bb_quantity_value((double)t->steps, "count", "call"));
    bb_quantities_add(q, "memory.plan_bytes_max",
                      bb_quantity_value((double)t->plan_bytes_max, "byte", "plan/max-rank"));
    bb_quantities_add(q, "memory.message_bytes_max",
                      bb_quantity_value((double)t->message_bytes_max, "byte", scope));
}
