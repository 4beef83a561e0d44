/* yield.c: preloaded into the test launches that put more ranks than cores
 * (tests/lib.sh bb_mpirun; never installed).
 *
 * An MPI rank waiting for a message polls its progress engine without end;
 * on a core shared with a rank it waits for, it polls until the scheduler's
 * slice runs out (milliseconds a collective, doc/testing.md).  UCX-based MPIs
 * (MPICH's ch4:ucx, Open MPI's pml ucx) poll through ucp_worker_progress:
 * this wrapper calls it and, after BB_YIELD_POLLS (default 64) calls in a row
 * that found nothing, gives the core away once (sched_yield).  It changes
 * when a rank runs, never what it computes: the tests' checks are the same.
 * A process that never calls ucp_worker_progress is untouched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>

typedef unsigned (*bb_progress_fn_t)(void *worker);

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static bb_progress_fn_t real;
    static long polls = -1;
    static _Thread_local long idle;
    if (!real) {
        real = (bb_progress_fn_t)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (!real)
            abort(); /* only ever called by a process that has UCX loaded */
    }
    if (polls < 0) {
        const char *s = getenv("BB_YIELD_POLLS");
        long p = s ? strtol(s, NULL, 10) : 64;
        polls = p > 0 ? p : 64;
    }
    unsigned events = real(worker);
    if (events) {
        idle = 0;
    } else if (++idle >= polls) {
        idle = 0;
        sched_yield();
    }
    return events;
}
