/* internal.h: declarations shared by libbbench's files (not installed, not
 * exported). */
#ifndef BB_INTERNAL_H
#define BB_INTERNAL_H

#include "bbench.h"
#include "private/hooks.h"
#include "private/bbtext.h"
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

/* How a creation compares one attribute's codes (see bb_attr_agree). */
typedef enum bb_attr_rule {
    BB_ATTR_RULE_VALID = 0,     /* validity only: -1 on some ranks differs */
    BB_ATTR_RULE_EQUAL,         /* the same code on every rank */
    BB_ATTR_RULE_IF_PERSISTENT  /* the same when every rank's requests are
                                   persistent, else validity only */
} bb_attr_rule_t;

/* The codes of attr (NULL: the defaults): each policy's enum value, -1 when
 * out of range; FIELDS is fields (-1 outside [1, 64]).  1 iff every code is
 * valid. */
int bb_attr_codes(const bb_phase_attr_t *attr, int fields, int64_t code_out[BB_ATTR_COUNT]);

/* Collective over comm: one MPI_Allreduce, whatever the codes.  Agrees
 * code[] under rule[] and this rank's local status (BB_OK, or why it cannot
 * make its object).  The same result on every rank: BB_REFUSED when an
 * attribute differs, else the largest local status, else BB_ERR_ARG when an
 * attribute is invalid everywhere, else BB_OK; BB_ERR_MPI (this rank only)
 * when the reduction fails.  *out (may be NULL) is written on every return. */
bb_status_t bb_attr_agree(MPI_Comm comm, const int64_t code[BB_ATTR_COUNT],
                          const bb_attr_rule_t rule[BB_ATTR_COUNT], bb_status_t local,
                          bb_attr_refusal_t *out);

/* What an agreement object serves: its staging is made for these alone.
 * BB_AGREE_DIRECT: the caller hands the object its own arrays, the same at
 * every call (the phases' control arrays), and spec's MIN and MAX and the
 * MAX reduce them directly: no staging, nothing copied.  A persistent
 * request is made for the first call's arrays; a call that hands others is
 * refused (MPI_ERR_ARG).  Fused and fused-op still stage [x, ~x]. */
enum { BB_AGREE_MINMAX = 1, BB_AGREE_MAX = 2, BB_AGREE_DIRECT = 4 };

/* Local.  The fused agreement's halves (bb_agree_minmax_fused): local[n]
 * and its complements ~x into both[2n], so that one MIN over them gives MIN
 * and ~MAX; join reads MIN and MAX back from the reduced both[2n]. */
void bb_agree_split(const int64_t *local, int n, int64_t *both);
void bb_agree_join(const int64_t *reduced, int n, int64_t *min_out, int64_t *max_out);

/* Local: an agreement object without the creation's agreement (the phases
 * agree their policies once, themselves), serving ops (BB_AGREE_*).  The
 * policies must be valid. */
bb_status_t bb_agreement_make(MPI_Comm comm, int n, bb_admission_t admission,
                              bb_requests_t requests, unsigned ops,
                              bb_agreement_t **agreement_out);

/* Local: the bytes of its staging, every one of which its collectives are
 * handed: for min/max 24n (spec) or 32n (fused, fused-op), 16n for max;
 * direct, 0 for spec's min/max (BB_AGREE_STAGING_BYTES) and for max; 0 for
 * NULL. */
int64_t bb_agreement_bytes(const bb_agreement_t *agreement);

/* A map's storage (redist-map.c); plans copy and read maps directly. */
struct bb_map {
    int64_t n, count, epoch;
    int64_t *idx;
    bb_map_shape_t shape;   /* NONE: indices only */
    int64_t block;          /* BLOCK_CYCLIC: elements per block */
    int rank, size;         /* the holder's claimed place: trusted only
                               after the plan's agreement */
    bb_map_grid_t grid;     /* BLOCK_CYCLIC_2D */
};

/* A regular distribution of [0, n) over size ranks (a map's descriptor
 * without the rank): the closed forms of redist-map.c. */
typedef struct bb_regular {
    bb_map_shape_t kind;    /* BLOCK_CYCLIC, STD or BLOCK_CYCLIC_2D */
    int64_t n, block;
    int size;
    bb_map_grid_t grid;     /* BLOCK_CYCLIC_2D (size = pr * pc) */
} bb_regular_t;
/* Local.  The rank owning g (0 <= g < n). */
int bb_regular_owner(const bb_regular_t *sh, int64_t g);
/* Local.  The end (exclusive) of the owner's contiguous stretch of global
 * indices that contains g (0 <= g < n). */
int64_t bb_regular_end(const bb_regular_t *sh, int64_t g);
/* Local.  How many of rank r's indices are below x (0 <= x <= n): the
 * local slot of x when r holds it. */
int64_t bb_regular_below(const bb_regular_t *sh, int r, int64_t x);
/* Local.  The smallest index >= x that rank r holds, n if none. */
int64_t bb_regular_next_own(const bb_regular_t *sh, int r, int64_t x);
/* One run: `len` consecutive local slots from `first` whose elements the
 * other distribution's rank `peer` holds. */
typedef struct bb_regular_run {
    int peer;
    int first, len;
} bb_regular_run_t;
/* Local.  The runs of rank me of mine (local slots in increasing global
 * order) by their holder in other: maximal, in slot order, so each peer's
 * runs in order are exactly its slot list's contiguous runs.  Writes up to
 * cap runs to out (out may be NULL to count); returns the number of runs.
 * O(runs + stretches of other that meet me's indices), no per-element
 * work for blocks longer than one element. */
int64_t bb_regular_runs(const bb_regular_t *mine, int me, const bb_regular_t *other,
                      bb_regular_run_t *out, int64_t cap);
/* Local.  The shape of map (1) and the rank it claims, or 0 for a map
 * without a descriptor. */
int bb_map_shape_get(const bb_map_t *map, bb_regular_t *shape_out, int *rank_out);
/* A new copy of map, or NULL (map NULL or no memory). */
bb_map_t *bb_map_copy(const bb_map_t *map);
/* Counting sort of n items by destination (stable): order_out[j] is the
 * j-th item in destination order, count and displ per destination; cursor
 * is scratch of p ints. */
void bb_bucket(const int *dest, int64_t n, int p, int *count, int *displ,
               int *cursor, int *order_out);


#endif
