/* internal.h: declarations shared by the library's files, not installed. */
#ifndef BB_INTERNAL_H
#define BB_INTERNAL_H

#include "bbench.h"
#include <pthread.h>

struct bb_world {
    MPI_Comm comm;      /* borrowed */
    int rank, size;
    int thread_level;
    pthread_t owner;    /* the thread that bound the world (MPI main thread) */
};

/* Kinds of objects the fatal list can hold. */
typedef enum bb_poison_kind {
    BB_POISON_SUM = 1,
    BB_POISON_TRANSFER,
    BB_POISON_REDIST
} bb_poison_kind_t;

/* Keep obj reachable forever after an MPI error (fatal-path retention: the
 * request, buffers and communicator it holds must not be freed while MPI may
 * still touch them).  Never fails: the list node lives inside the object's
 * caller-supplied storage. */
typedef struct bb_poison_node {
    struct bb_poison_node *next;
    bb_poison_kind_t kind;
    void *object;
} bb_poison_node_t;
void bb_poison_retain(bb_poison_node_t *node, bb_poison_kind_t kind, void *object);

/* snprintf into err if err is not NULL. */
void bb_errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The exit code a rank leaves with if bb_finalize's watchdog has to end a
 * stuck MPI_Finalize (finalize.c); set it just before bb_finalize. */
void bb_finalize_expect_exit(int code);

#endif
