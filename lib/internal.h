/* internal.h: declarations shared by libbbench's files (not installed, not
 * exported). */
#ifndef BB_INTERNAL_H
#define BB_INTERNAL_H

#include "bbench.h"
#include "bbench-hooks.h"
#include "common.h"
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

/* A map's storage (redist-map.c); plans copy and read maps directly. */
struct bb_map {
    int64_t n, count, epoch;
    int64_t *idx;
};
/* A new copy of map, or NULL (map NULL or no memory). */
bb_map_t *bb_map_copy(const bb_map_t *map);
/* Counting sort of n items by destination (stable): order_out[j] is the
 * j-th item in destination order, count and displ per destination; cursor
 * is scratch of p ints. */
void bb_bucket(const int *dest, int64_t n, int p, int *count, int *displ,
               int *cursor, int *order_out);


#endif
