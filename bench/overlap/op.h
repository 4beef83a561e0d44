/* op.h: bbench-overlap's operation, one per kind on the same
 * buffers: the transfer phase's ticket (begin, progress, finish), raw
 * MPI_Isend/MPI_Irecv, raw MPI_Iallreduce.  Private (not installed). */
#ifndef BB_OVERLAP_OP_H
#define BB_OVERLAP_OP_H

#include "runner/runner.h"


enum { BB_OVERLAP_TRANSFER, BB_OVERLAP_ISEND, BB_OVERLAP_IALLREDUCE, BB_OVERLAP_KINDS };

typedef struct bb_overlap_op {
    bb_run_t *run;                   /* fatal errors */
    MPI_Comm comm;
    int rank, source, destination;
    int kind;                        /* BB_OVERLAP_* */
    int64_t bytes, phase_id;         /* the point's */
    bb_xfer_fixture_t *fx;           /* sampled: lends send, checks three bytes */
    unsigned char *send, *recv;      /* the same buffers for every kind (borrowed;
                                        send is the fixture's) */
    bb_transfer_phase_t *phase;      /* BB_OVERLAP_TRANSFER's (borrowed) */
    bb_transfer_ticket_t ticket;
    MPI_Request req;
    bb_refusal_t refusal;            /* the last refusal */
} bb_overlap_op_t;

/* Collective for the kind.  Posts the operation with declared batches
 * (transfer); BB_REFUSED with op->refusal; MPI errors are fatal. */
bb_status_t bb_overlap_op_post(bb_overlap_op_t *op, int64_t declared);
/* One poll.  Returns 1 once this rank's payload is complete, and 1 for a
 * rank that posts no payload request (it never holds the figure back). */
int bb_overlap_op_poll(bb_overlap_op_t *op);
/* Completes the operation; BB_REFUSED with op->refusal. */
bb_status_t bb_overlap_op_finish(bb_overlap_op_t *op);

#endif
