/* redist-private.h: what the redistribution's files share inside libbbench
 * (not installed, nothing exported): the link, the exchange plans, the plan,
 * and the steps one file calls in another.
 *
 *   redist-link.c      the link between two codes
 *   redist-xplan.c     exchange plans: who sends which slots to whom
 *   redist-plan.c      plan create, map updates, auto's trial, destroy
 *   redist-execute.c   one message: admission and the methods' exchanges
 *   redist-traffic.c   what a plan moves and holds
 *
 * Words: a "run" is a contiguous run of local slots; executing a plan is an
 * "execution" (bb_exec_*). */
#ifndef BB_REDIST_PRIVATE_H
#define BB_REDIST_PRIVATE_H

#include "internal.h"
#include "private/redist-tags.h"

#include <stddef.h>
#include <stdint.h>

/* Doubles per MPI call in the root methods' whole-array steps (Reduce,
 * the root-to-root message, Bcast): 2^30, so that N * components may pass
 * INT_MAX (Gatherv/Scatterv count elements, at most INT32_MAX). */
#define BB_ROOT_CHUNK ((int64_t)1 << 30)

/* ---- the link (redist-link.c) ------------------------------------------- */

struct bb_redist_link {
    bb_world_t *world;      /* borrowed */
    bb_redist_mode_t mode;
    MPI_Comm comm;          /* duplicate of the world: the inter-code channel */
    MPI_Comm code;          /* this rank's code (MPI_Comm_split) */
    int rank, size;
    int driver_first, driver_n, engine_first, engine_n;
    int is_driver, is_engine;
    int64_t plans;          /* plans alive: destroy refuses while > 0 */
    const char *found_by;   /* "split", "appnum" or "role" (static) */
};

/* ---- exchange plans (redist-xplan.c) ------------------------------------ */

/* How a plan's exchange moves each peer's slots (bb_xplan_build). */
enum {
    BB_XPLAN_TYPES = 1,  /* indexed slot datatypes (direct, sparse, pack-mpi) */
    BB_XPLAN_RUNS = 2,   /* run lists and element staging (pack: memcpy loop) */
    BB_XPLAN_PACKED = 4, /* MPI_PACKED staging (pack-mpi) */
    BB_XPLAN_PEER_RUNS = 8 /* with RUNS: the runs split at peers, each peer's
                              first run, the self part's copy runs (overlap) */
};
/* A private outcome of bb_xplan_build (MPI codes are >= 0): the plan is
 * over a limit of an MPI call's int arguments (an argument error). */
#define BB_RC_TOO_LARGE (-2)
/* The handshake's bytes as an eager message carries them to each peer: the
 * nine fields and their complements (bb_agree_split), a multiple of 8 so
 * that the payload after it stays aligned for doubles. */
#define BB_XPLAN_HEADER_BYTES ((int)(2 * BB_REDIST_FIELDS * sizeof(int64_t)))

typedef struct bb_xplan {
    MPI_Comm comm;          /* borrowed */
    int p, me, built, how;
    int nsend, nrecv;       /* local slots sent / received, self included */
    int *scount, *sdispl, *rcount, *rdispl;  /* per peer, in elements */
    int *spos, *rpos;       /* local slots, grouped by peer, message order */
    MPI_Datatype *stype, *rtype;  /* indexed types per peer (direct, sparse) */
    int *wcount_s, *wcount_r, *wdispl;
    MPI_Datatype *wtype_s, *wtype_r;
    int *srun, *rrun;       /* pack: runs as (first local slot, length) pairs
                               over the whole message order */
    int nsrun, nrrun;
    int *srunat, *rrunat;   /* overlap: peer d's runs are [at[d], at[d + 1]) */
    int *crun, ncrun;       /* overlap: the self part as (sent slot, received
                               slot, length) triples, contiguous on both sides */
    int *sbytes, *sbdispl, *rbytes, *rbdispl;  /* pack-mpi: per peer, bytes */
    char *pbuf, *ubuf;      /* pack staging (elements or MPI_PACKED bytes) */
    int64_t pbytes, ubytes;
    /* the eager layout of the same staging (RUNS, PACKED): each peer's part
     * is the handshake's header (hbytes: BB_XPLAN_HEADER_BYTES, or its
     * MPI_Pack_size for PACKED), then its payload; per peer, in bytes */
    int hbytes;
    int *ecount_s, *edispl_s, *ecount_r, *edispl_r;
    MPI_Request *reqs;
    MPI_Status *stats;
    int64_t sruns, rruns;   /* contiguous runs of the per-peer slot lists */
    int64_t type_bytes;     /* the arrays given to MPI_Type_indexed */
} bb_xplan_t;

/* Collective over comm: x so that slot i of the sender map (sidx, sn)
 * reaches the slot of the receiver map (ridx, rn) holding the same global
 * index, through the directory of [0, n) on comm ranks [dir_first,
 * dir_first + dir_count).  Returns an MPI error code, MPI_ERR_NO_MEM or
 * BB_RC_TOO_LARGE (agreed), or MPI_ERR_INTERN (inconsistent maps; the
 * caller agrees on the outcome). */
int bb_xplan_build(bb_xplan_t *x, MPI_Comm comm, int64_t n, const int64_t *sidx, int64_t sn,
                   const int64_t *ridx, int64_t rn, int dir_first, int dir_count, int how,
                   MPI_Datatype elem, int ncomp);
/* Collective over comm: the same x as bb_xplan_build between two regular
 * maps, from their agreed shapes alone (no index crosses; collective only
 * for pack-mpi's sizes, local otherwise: the caller agrees the outcome, an
 * MPI error or MPI_ERR_NO_MEM): the sender shape ss's rank c is link
 * rank s_first + c, this rank's is s_me (-1: not a sender); likewise rs,
 * r_first, r_me.  The caller must have agreed the shapes on every rank. */
int bb_xplan_build_shapes(bb_xplan_t *x, MPI_Comm comm, const bb_regular_t *ss, int s_first,
                          int s_me, const bb_regular_t *rs, int r_first, int r_me, int how,
                          MPI_Datatype elem, int ncomp);
void bb_xplan_free(bb_xplan_t *x);
/* Local.  The indexed slot datatypes of every peer of a built x. */
int bb_xplan_types(bb_xplan_t *x, MPI_Datatype elem);
/* Local.  Overlap's runs of a built x: srun and rrun split at peers with
 * each peer's first run, and the self part's copy runs.  0, or
 * MPI_ERR_NO_MEM. */
int bb_xplan_peer_runs(bb_xplan_t *x);
/* Local.  What auto's winner does not need of an x built for every
 * candidate: drop_runs the run lists (overlap's too) and staging (direct,
 * sparse won); drop_types the slot datatypes (pack, overlap won); drop
 * peer_runs overlap's split (pack won: its runs in message order serve
 * pack's loop as well). */
void bb_xplan_drop_runs(bb_xplan_t *x);
void bb_xplan_drop_types(bb_xplan_t *x, MPI_Datatype elem);
void bb_xplan_drop_peer_runs(bb_xplan_t *x);
/* The number of contiguous runs in the slot list pos[0..n). */
int64_t bb_slot_runs_count(const int *pos, int n);

/* ---- plans (redist-plan.c) ---------------------------------------------- */

/* Root-gatherv: a code root's copy of its code's maps. */
typedef struct bb_gather {
    int *counts, *displs;   /* per code rank */
    int64_t *idx;           /* all maps, code-rank order */
    int64_t total;
} bb_gather_t;

/* auto's trial: its candidates, each executed BB_TRIAL_REPS times in turn
 * on the plan's first successful executions (round 1); those whose agreed
 * median is within BB_TRIAL_CLOSE_PCT % of the least then run BB_TRIAL_MORE
 * times more each, in turn (round 2), and the least median of all of a
 * contender's runs wins. */
enum { BB_TRIAL_CANDIDATES = 4, BB_TRIAL_REPS = 3,
       BB_TRIAL_RUNS = BB_TRIAL_CANDIDATES * BB_TRIAL_REPS,
       BB_TRIAL_MORE = 4, BB_TRIAL_CLOSE_PCT = 25,
       BB_TRIAL_MAX = BB_TRIAL_RUNS + BB_TRIAL_CANDIDATES * BB_TRIAL_MORE };

struct bb_redist_plan {
    bb_poison_node_t poison;
    bb_redist_link_t *link;          /* borrowed */
    bb_redist_method_t method;
    int command;                     /* '>' or '<' */
    int64_t n, eb;
    int ncomp;
    MPI_Datatype elem;
    int sender, receiver;            /* this rank's roles in the command */
    int s_first, s_n, r_first, r_n;  /* the two codes, link ranks */
    MPI_Comm scomm, rcomm;           /* the codes' communicators (borrowed) */
    bb_map_t *dmap;                  /* the driver map (driver ranks) */
    bb_map_t *emap;                  /* the engine map now (engine ranks) */
    bb_map_t *eknown;                /* the engine map the cross part was built
                                        for (engine ranks) */
    int64_t driver_epoch, engine_known; /* learned at the last map transfer */
    bb_xplan_t x1, x2, xfix;         /* cross, receiver-internal, epoch fixup */
    double *tmp, *tmp2;              /* two-step / fixup staging */
    double *full;                    /* root methods: a whole array */
    double *gbuf;                    /* root-gatherv: code-order staging */
    bb_gather_t sg, rg;              /* root-gatherv: gathered maps on roots */
    int64_t tmp_n, tmp2_n, full_n, gbuf_n;  /* their sizes, elements */
    bb_redist_method_t chosen;       /* what executes: auto's choice, else method */
    char reason[256];                /* why (bb_redist_plan_choice_reason) */
    int trial_done;                  /* auto: trial executions made */
    int trial_len;                   /* auto: the trial's executions as known
                                        now: round 1's, then with round 2's */
    int trial_agreed;                /* executions whose MAX is in trial_mx */
    unsigned char trial_cand[BB_TRIAL_MAX]; /* candidate of each execution */
    double trial_s[BB_TRIAL_MAX];    /* auto: this rank's payload times */
    double trial_mx[BB_TRIAL_MAX];   /* their MAX over the link's ranks */
    double trial_fake[BB_TRIAL_MAX]; /* test hook: reported instead */
    int trial_nfake;
    int64_t root_chunk;              /* doubles per MPI call of the root
                                        methods' whole-array steps */
    int64_t sequence;
    int poisoned, in_call;
};

const bb_map_t *bb_plan_send_map(const bb_redist_plan_t *pl);
const bb_map_t *bb_plan_recv_map(const bb_redist_plan_t *pl);
/* Does the cross-code part depend on the engine map (so that a change of it
 * is an epoch mismatch for the other code)? */
int bb_plan_cross_uses_engine(const bb_redist_plan_t *pl);
/* Local.  BB_OK, or why pl may not be used now (NULL, another thread,
 * poisoned). */
bb_status_t bb_plan_usable(const bb_redist_plan_t *pl);
/* Marks pl poisoned and retains it (never freed: MPI may hold it). */
void bb_plan_poison(bb_redist_plan_t *pl);
/* Collective over the link: the cross-code part (the map transfer) with the
 * maps held now; learn_epochs: also agree on both epochs. */
int bb_plan_build_cross(bb_redist_plan_t *pl, int learn_epochs);
/* Collective over the link (redist-execute.c): bb_redist_plan_update_maps,
 * the message handshake presenting BB_REDIST_UPDATE, then the cross part. */
bb_status_t bb_exec_update(bb_redist_plan_t *pl, bb_redist_metrics_t *metrics_out);
/* Collective over the link: the parts inside each code rebuilt from the
 * plan's maps (after the driver's map changed); an MPI code. */
int bb_plan_rebuild_internal(bb_redist_plan_t *pl);
/* Local.  auto: (re)starts the trial (the cross part was rebuilt). */
void bb_plan_trial_start(bb_redist_plan_t *pl);
/* Collective over the link, after each successful payload of an auto plan
 * in its trial: records payload_s; at the last execution of a round agrees
 * its times (one MPI_Allreduce MAX), then either sets up round 2 or
 * chooses and drops what the winner does not need.  Returns an MPI error
 * code (the caller poisons). */
int bb_plan_trial_step(bb_redist_plan_t *pl, double payload_s);
/* Collective over comm: a local outcome combined into one on every rank. */
bb_status_t bb_plan_agree_status(MPI_Comm comm, bb_status_t local);
/* The status of an outcome of bb_xplan_build and the plan's builders. */
bb_status_t bb_plan_status_from_rc(int rc);

/* ---- one element of ncomp doubles --------------------------------------- */

static inline void bb_copy_elem(double *dst, int di, const double *src, int si, int ncomp)
{
    switch (ncomp) {
    case 1:
        dst[di] = src[si];
        break;
    case 3:
        dst[3 * (size_t)di] = src[3 * (size_t)si];
        dst[3 * (size_t)di + 1] = src[3 * (size_t)si + 1];
        dst[3 * (size_t)di + 2] = src[3 * (size_t)si + 2];
        break;
    default:
        for (int c = 0; c < ncomp; c++)
            dst[(size_t)ncomp * di + c] = src[(size_t)ncomp * si + c];
    }
}

#endif
