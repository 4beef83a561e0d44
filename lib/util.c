/* util.c: status names, clock, memory and the fatal retention list. */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *bb_status_string(bb_status_t status)
{
    switch (status) {
    case BB_OK: return "ok";
    case BB_REFUSED: return "collective refusal";
    case BB_ERR_ARG: return "invalid argument";
    case BB_ERR_THREAD: return "called from a thread that does not own MPI";
    case BB_ERR_REENTRY: return "reentrant call from a callback";
    case BB_ERR_STATE: return "object in the wrong state for this call";
    case BB_ERR_POISONED: return "poisoned by an earlier MPI error";
    case BB_ERR_MPI: return "MPI error (object poisoned)";
    case BB_ERR_NOMEM: return "out of memory";
    case BB_ERR_IO: return "I/O error";
    case BB_ERR_PARSE: return "parse error";
    case BB_ERR_VALIDATION: return "validation failed";
    }
    return "unknown status";
}

const char *bb_version(void) { return PACKAGE_VERSION; }

void bb_free(void *ptr) { free(ptr); }

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

const char *bb_stage_name(bb_stage_t stage)
{
    switch (stage) {
    case BB_STAGE_NONE: return "none";
    case BB_STAGE_PREFLIGHT: return "preflight";
    case BB_STAGE_COMPUTE: return "compute";
    case BB_STAGE_CONSUMER: return "consumer";
    case BB_STAGE_RECEIPT: return "receipt";
    case BB_STAGE_CONTRACT: return "contract";
    case BB_STAGE_TRANSPORT: return "transport";
    }
    return "unknown";
}

void bb_errorf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* A message that did not fit says so rather than ending mid-word. */
    if (n >= 0 && (size_t)n >= errlen && errlen > 4)
        memcpy(err + errlen - 4, "...", 4);
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
