/* util.c: the clock and the fatal retention list. */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <time.h>

double bb_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bb_time_resolution(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return -1.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bb_time_sleep(double seconds)
{
    /* Sleep in chunks that time_t surely holds: a larger value (or +inf)
     * must not overflow the conversion and return at once. */
    const double chunk = 1e9;  /* about 31 years */
    while (seconds > 0.0) {
        double part = seconds > chunk ? chunk : seconds;
        struct timespec ts;
        ts.tv_sec = (time_t)part;
        ts.tv_nsec = (long)((part - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec > 999999999L)
            ts.tv_nsec = 999999999L;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        seconds -= part;  /* +inf stays +inf: for ever */
    }
}

/* The fatal list.  Only the MPI owner thread ever touches it (every phase
 * checks the owner before any MPI call), so it needs no lock. */
static bb_poison_node_t *bb_poisoned_head;
static size_t bb_poisoned_n;

void bb_poison_retain(bb_poison_node_t *node, bb_poison_kind_t kind, void *object)
{
    node->kind = kind;
    node->object = object;
    node->next = bb_poisoned_head;
    bb_poisoned_head = node;
    bb_poisoned_n++;
}

size_t bb_poisoned_count(void) { return bb_poisoned_n; }
