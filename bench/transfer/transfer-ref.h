/*
 * transfer-ref.h: what bbench-transfer measures and reports beside the
 * phase itself: the timed parts and counts of one call, the payload
 * fixture the phase is driven with, the raw references (a stream, a
 * ping-pong, the ping-pong with the phase's agreements, the agreements and
 * the admission alone) on the same fixture work, and the census of the
 * phase's counted bytes and request credit (census.c).
 *
 * Private to bench/transfer, not installed.  The prefix bb_xfer_ keeps these
 * apart from the library's bb_transfer_.
 */
#ifndef BB_TRANSFER_REF_H
#define BB_TRANSFER_REF_H

#include "runner/runner.h"

/* Per-call timings accumulated over one block, in this order (the
 * benchmark's part names follow it). */
enum { BB_XFER_T_ELAPSED, BB_XFER_T_PREPARE, BB_XFER_T_ADMISSION, BB_XFER_T_POST,
       BB_XFER_T_COMPUTE, BB_XFER_T_PROGRESS, BB_XFER_T_WAIT, BB_XFER_T_WAIT_PAYLOAD,
       BB_XFER_T_WAIT_RECEIPT, BB_XFER_T_STATUS, BB_XFER_T_CONSUMER, BB_XFER_T_TERMINAL,
       BB_XFER_T_N };
/* Per-call counts, meaned over a block like the timings. */
enum { BB_XFER_C_BATCHES, BB_XFER_C_POLLS, BB_XFER_C_COMPLETED, BB_XFER_C_N };

/* Adds one call's metrics (its status st) to its parts t[BB_XFER_T_N],
 * its counts cnt[BB_XFER_C_N] and what the row's calls saw. */
void bb_xfer_metrics_add(const bb_transfer_metrics_t *m, bb_status_t st, double *t,
                         double *cnt, bb_tally_t *tally);


/* The ticket API driven here: begin, the batches with a poll after each,
 * finish.  Compute is timed here, as the phase cannot see it. */
bb_status_t bb_xfer_ticket_call(bb_transfer_phase_t *phase, bb_xfer_fixture_t *fx,
                                const bb_transfer_contract_t *c, bb_transfer_metrics_t *m);

/* ------------------------------------------------------------------------ */
/* The references */

typedef enum bb_xfer_ref_kind {
    BB_XFER_REF_STREAM = 0,   /* Isend/Irecv, no agreement, no receipt */
    BB_XFER_REF_PINGPONG,     /* the stream with a 16-byte receipt back */
    BB_XFER_REF_ROUNDS,       /* the ping-pong with the phase's agreements */
    BB_XFER_REF_AGREEMENTS,   /* the admission and two MAX, no payload */
    BB_XFER_REF_ADMISSION     /* the admission alone */
} bb_xfer_ref_kind_t;

/* The references' buffers and the point's agreement objects, one pair per
 * row that makes agreements. */
typedef struct bb_xfer_ref {
    bb_run_t *run;
    int rank, source, destination;
    int64_t corrupt_byte;     /* -1: none */
    unsigned char *send, *recv;
    int64_t seq;              /* the next call's sequence */
    bb_xfer_fixture_t *fx;    /* the compute kernel (and its sink) */
    int64_t phase_id, nbytes, cap, batches;  /* the point being measured */
    bb_agreement_t *admissions[BB_RUN_ROWS_MAX], *maxes[BB_RUN_ROWS_MAX];
} bb_xfer_ref_t;

/* Local: both buffers of max_bytes, every page touched (a failure is
 * bb_run_fatal). */
void bb_xfer_ref_setup(bb_run_t *run, bb_xfer_ref_t *ref, int64_t max_bytes);
void bb_xfer_ref_free(bb_xfer_ref_t *ref);

/* Collective.  Row r's agreements as the phase holds them under attr: the
 * nine-field admission and the one-field MAX.  Made per point, as the
 * phase's are, so that a persistent request is made at the point's first
 * call in both. */
void bb_xfer_ref_agreements_create(bb_xfer_ref_t *ref, int r, const bb_phase_attr_t *attr);
/* Collective: every row's agreements freed (none is active: each call
 * waited). */
void bb_xfer_ref_agreements_destroy(bb_xfer_ref_t *ref, int rows);

/* Collective.  One call of kind on row: its parts added to t, its counts to
 * cnt, its check failures to row->local.wrong. */
void bb_xfer_ref_call(bb_xfer_ref_t *ref, bb_xfer_ref_kind_t kind, bb_row_t *row, double *t,
                      double *cnt);

/* ------------------------------------------------------------------------ */
/* What a row reports beside the runner's figures */

/* A row's counts into q: phase.batches_executed and phase.polls (null,
 * saying row->absent, on a row that moves no payload, payload 0), and
 * completed_during_batches (null also when no rank posted a payload request
 * or a call was refused). */
void bb_xfer_count_quantities(const bb_row_t *row, int payload, cJSON *q);

/* The descriptor's row_columns and row_cells: a protocol row's (variant 0's)
 * two columns after the runner's, its agreements' part of the whole and its
 * completion fraction, and their cells at a point; nothing for other rows. */
void bb_xfer_row_columns(bb_run_t *run, void *state, const bb_row_t *row);
void bb_xfer_row_cells(bb_run_t *run, void *state, const bb_row_t *row);

/* --mismatch-rank's field (bb_mismatch_t) changed in contract c (the
 * fixture presents nbytes, the phase the next sequence), on a link of size
 * ranks. */
void bb_xfer_mismatch(bb_transfer_phase_t *phase, int field, int size,
                      bb_transfer_contract_t *c, bb_xfer_fixture_t *fx);

/* The label suffixes of bb_policy_label that need a note, as bits. */
enum { BB_XFER_SUFFIX_RETAINED = 1u, BB_XFER_SUFFIX_FUSED = 2u, BB_XFER_SUFFIX_FUSED_OP = 4u,
       BB_XFER_SUFFIX_PERSISTENT = 8u };
/* The suffixes a row under attr carries (-retained on the protocol's alone:
 * the references have no payload buffer of the phase's). */
unsigned bb_xfer_policy_suffixes(const bb_phase_attr_t *attr, int protocol);
/* What each suffix in suffixes means, once, as table notes. */
void bb_xfer_policy_notes(bb_table_t *t, unsigned suffixes);

/* ------------------------------------------------------------------------ */
/* The census (census.c): each rank's counted bytes and request
 * credit, gathered on rank 0. */

enum { BB_XFER_K_ROLE, BB_XFER_K_TRACKED, BB_XFER_K_INFLIGHT, BB_XFER_K_PAYLOAD,
       BB_XFER_K_BETWEEN, BB_XFER_K_N };

typedef struct bb_xfer_census {
    int64_t *per_rank;        /* rank 0: [size][BB_XFER_K_N] */
    int over_bound;           /* some rank exceeded its bound or its credit */
    int64_t bound_payload;    /* the payload bytes a data rank may hold */
    int64_t control;          /* the control bytes every rank holds during a
                                 ticket (BB_TRANSFER_TRACKED_CONTROL_BYTES) */
    int64_t worst[4][BB_XFER_K_N];  /* by role: the largest tracked/inflight seen */
} bb_xfer_census_t;

/* A point's census of every row and the largest over points. */
typedef struct bb_xfer_census_set {
    bb_xfer_census_t row[BB_RUN_ROWS_MAX];  /* protocol rows, this point */
    bb_xfer_census_t all;     /* rank 0: the largest over points */
    int have;                 /* rank 0: some point had a census */
} bb_xfer_census_set_t;

/* Rank r's role (bb_transfer_role_t) between source and destination. */
int bb_xfer_role(int r, int source, int destination);

/* Collective.  The census of a protocol row under attr, this rank's tally
 * and tracked_between (the phase's bytes between tickets); a data rank may
 * hold bound_payload bytes of payload. */
void bb_xfer_census_gather(const bb_xfer_ref_t *ref, const bb_tally_t *tally,
                           const bb_phase_attr_t *attr, int64_t tracked_between,
                           int64_t bound_payload, bb_xfer_census_t *cs_out);

/* Rank 0: a row's census quantities (communication.max_inflight,
 * memory.tracked_live, memory.tracked_between_calls) into q; returns the
 * record's census member.  cs NULL (a reference, or a rank but 0): the
 * first two null, max_inflight saying absent; returns NULL. */
cJSON *bb_xfer_census_quantities(const bb_xfer_census_t *cs, int size, int retained,
                                 const char *absent, cJSON *q);

/* Rank 0: every row's census of the point at nbytes against its bound (one
 * over it: an error note and BB_EXIT_FAILURE, else BB_EXIT_OK), the
 * largest kept.  Every rank: the point's census memory freed. */
int bb_xfer_census_check(bb_run_t *run, int64_t nbytes, bb_xfer_census_set_t *set);

/* Rank 0, after some point had a census: the table's note of the largest
 * over points. */
void bb_xfer_census_note(bb_run_t *run, const bb_xfer_census_set_t *set, int source,
                         int destination);

#endif
