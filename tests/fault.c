/* fault.c: a PMPI interposer for fault-injection tests (never installed).
 *
 * Preloaded with LD_PRELOAD.  BB_FAULT=NAME:N[,NAME:N...] makes the N-th call
 * (1-based) of MPI function NAME fail with MPI_ERR_OTHER, without calling the
 * real function, on the world ranks listed in BB_FAULT_RANK (comma list;
 * default: every rank).  Calls with no fault pass straight to PMPI_.
 * bbfault_arm does the same from inside the process, counted from now (the
 * Python tier's conformance test calls it and bbfault_calls through ctypes).
 * Test programs link this file directly to count calls (fault.h). */
#include "config.h"
#include "fault.h"
#include "private/mpi-compat.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_IALLREDUCE, F_ALLREDUCE, F_TEST, F_WAIT, F_ISEND, F_IRECV, F_ALLTOALLW,
       F_BARRIER, F_BCAST, F_ALLREDUCE_INIT, F_START, F_REQUEST_FREE, F_SEND, F_RECV,
       F_ALLTOALLV, F_N };
static const char *const fault_names[F_N] = {
    "MPI_Iallreduce", "MPI_Allreduce", "MPI_Test", "MPI_Wait",
    "MPI_Isend", "MPI_Irecv", "MPI_Alltoallw", "MPI_Barrier", "MPI_Bcast",
    "MPI_Allreduce_init", "MPI_Start", "MPI_Request_free", "MPI_Send", "MPI_Recv",
    "MPI_Alltoallv"
};
static long fault_at[F_N];    /* 0: never */
static long fault_calls[F_N];
static int fault_ready;

static int rank_selected(void)
{
    const char *ranks = getenv("BB_FAULT_RANK");
    int me = 0;
    if (ranks == NULL || *ranks == '\0')
        return 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (const char *p = ranks; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p)
            return 0;
        if (r == me)
            return 1;
        p = (*end == ',') ? end + 1 : end;
    }
    return 0;
}

static void fault_setup(void)
{
    fault_ready = 1;
    const char *spec = getenv("BB_FAULT");
    if (spec == NULL || !rank_selected())
        return;
    char *copy = strdup(spec);
    for (char *item = strtok(copy, ","); item; item = strtok(NULL, ",")) {
        char *colon = strchr(item, ':');
        long n = 1;
        if (colon) {
            *colon = '\0';
            n = strtol(colon + 1, NULL, 10);
        }
        for (int i = 0; i < F_N; i++)
            if (strcmp(item, fault_names[i]) == 0)
                fault_at[i] = n;
    }
    free(copy);
}

/* 1 if this call of function f must fail. */
static int fault_hit(int f)
{
    if (!fault_ready)
        fault_setup();
    fault_calls[f]++;
    if (fault_at[f] > 0 && fault_calls[f] == fault_at[f]) {
        fprintf(stderr, "bbfault: injecting failure into %s call %ld\n",
                fault_names[f], fault_calls[f]);
        return 1;
    }
    return 0;
}

int bbfault_arm(const char *name, long n)
{
    if (!fault_ready)
        fault_setup();
    for (int i = 0; i < F_N; i++)
        if (strcmp(name, fault_names[i]) == 0) {
            fault_at[i] = n > 0 ? fault_calls[i] + n : 0;
            return 0;
        }
    return -1;
}

long bbfault_calls(const char *name)
{
    for (int i = 0; i < F_N; i++)
        if (strcmp(name, fault_names[i]) == 0)
            return fault_calls[i];
    return -1;
}

bbfault_collectives_t bbfault_collectives(void)
{
    return (bbfault_collectives_t){ fault_calls[F_ALLREDUCE], fault_calls[F_ALLREDUCE_INIT],
                                    fault_calls[F_START], fault_calls[F_REQUEST_FREE] };
}

bbfault_collectives_t bbfault_collectives_since(bbfault_collectives_t before)
{
    bbfault_collectives_t now = bbfault_collectives();
    return (bbfault_collectives_t){ now.allreduce - before.allreduce, now.init - before.init,
                                    now.start - before.start,
                                    now.request_free - before.request_free };
}

int bbfault_same_everywhere(int64_t v)
{
    int64_t lo, hi;
    PMPI_Allreduce(&v, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&v, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

int bbfault_all_true(int v)
{
    int lo;
    PMPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return lo;
}

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                   MPI_Comm c, MPI_Request *req)
{
    return fault_hit(F_IALLREDUCE) ? MPI_ERR_OTHER
                                   : PMPI_Iallreduce(s, r, n, t, op, c, req);
}

/* The buffers handed to MPI_Allreduce and MPI_Allreduce_init in any type
 * but MPI_DOUBLE (the agreements', not a sum's payload), as byte ranges. */
enum { SEEN_MAX = 64 };
static struct { const char *lo, *hi; } seen[SEEN_MAX];
static int nseen, seen_lost;

static void seen_add(const void *buf, int n, MPI_Datatype t)
{
    int size = 0;
    if (buf == NULL || buf == MPI_IN_PLACE || t == MPI_DOUBLE || n <= 0
        || PMPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
        return;
    const char *lo = buf, *hi = lo + (size_t)n * (size_t)size;
    for (int i = 0; i < nseen; i++)
        if (seen[i].lo == lo && seen[i].hi == hi)
            return;
    if (nseen == SEEN_MAX) {
        seen_lost = 1;
        return;
    }
    seen[nseen].lo = lo;
    seen[nseen].hi = hi;
    nseen++;
}

void bbfault_buffers_reset(void)
{
    nseen = seen_lost = 0;
}

int64_t bbfault_buffer_bytes(void)
{
    if (seen_lost)
        return -1;
    /* The union of the ranges: sort by start (few), then sweep. */
    for (int i = 1; i < nseen; i++)
        for (int j = i; j > 0 && seen[j - 1].lo > seen[j].lo; j--) {
            const char *lo = seen[j].lo, *hi = seen[j].hi;
            seen[j] = seen[j - 1];
            seen[j - 1].lo = lo;
            seen[j - 1].hi = hi;
        }
    int64_t bytes = 0;
    const char *end = NULL;
    for (int i = 0; i < nseen; i++) {
        const char *lo = end != NULL && seen[i].lo < end ? end : seen[i].lo;
        if (seen[i].hi > lo)
            bytes += seen[i].hi - lo;
        if (end == NULL || seen[i].hi > end)
            end = seen[i].hi;
    }
    return bytes;
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                  MPI_Comm c)
{
    seen_add(s, n, t);
    seen_add(r, n, t);
    return fault_hit(F_ALLREDUCE) ? MPI_ERR_OTHER : PMPI_Allreduce(s, r, n, t, op, c);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    return fault_hit(F_TEST) ? MPI_ERR_OTHER : PMPI_Test(req, flag, st);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    return fault_hit(F_WAIT) ? MPI_ERR_OTHER : PMPI_Wait(req, st);
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int dest, int tag,
              MPI_Comm c, MPI_Request *req)
{
    return fault_hit(F_ISEND) ? MPI_ERR_OTHER : PMPI_Isend(b, n, t, dest, tag, c, req);
}

int MPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c,
              MPI_Request *req)
{
    return fault_hit(F_IRECV) ? MPI_ERR_OTHER : PMPI_Irecv(b, n, t, src, tag, c, req);
}

int MPI_Alltoallw(const void *sb, const int sc[], const int sd[],
                  const MPI_Datatype st[], void *rb, const int rc[],
                  const int rd[], const MPI_Datatype rt[], MPI_Comm c)
{
    return fault_hit(F_ALLTOALLW) ? MPI_ERR_OTHER
                                  : PMPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c);
}

int MPI_Alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st,
                  void *rb, const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c)
{
    return fault_hit(F_ALLTOALLV) ? MPI_ERR_OTHER
                                  : PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, c);
}

int MPI_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{
    return fault_hit(F_SEND) ? MPI_ERR_OTHER : PMPI_Send(b, n, t, dest, tag, c);
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *st)
{
    return fault_hit(F_RECV) ? MPI_ERR_OTHER : PMPI_Recv(b, n, t, src, tag, c, st);
}

int MPI_Barrier(MPI_Comm c)
{
    return fault_hit(F_BARRIER) ? MPI_ERR_OTHER : PMPI_Barrier(c);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    return fault_hit(F_BCAST) ? MPI_ERR_OTHER : PMPI_Bcast(b, n, t, root, c);
}

#ifdef BB_HAVE_PERSISTENT_COLLECTIVES
/* MPI_Allreduce_init, or the name this MPI gives it (include/private/mpi-compat.h). */
int bb_mpi_allreduce_init(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                          MPI_Info info, MPI_Request *req)
{
    seen_add(s, n, t);
    seen_add(r, n, t);
    return fault_hit(F_ALLREDUCE_INIT) ? MPI_ERR_OTHER
                                       : bb_pmpi_allreduce_init(s, r, n, t, op, c, info, req);
}
#endif

int MPI_Start(MPI_Request *req)
{
    return fault_hit(F_START) ? MPI_ERR_OTHER : PMPI_Start(req);
}

int MPI_Request_free(MPI_Request *req)
{
    return fault_hit(F_REQUEST_FREE) ? MPI_ERR_OTHER : PMPI_Request_free(req);
}
