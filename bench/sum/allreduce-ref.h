/*
 * allreduce-ref.h: the plain MPI_Allreduce references of a reduction
 * benchmark (bbench-sum), each differing from a blocking MPI_Allreduce on
 * warm buffers in one thing (nonblocking, persistent, a copy of the
 * contribution first, fresh buffers), on typed buffers of integer values
 * whose sum is exact in every type, so that every result is checked.
 */
#ifndef BB_ALLREDUCE_REF_H
#define BB_ALLREDUCE_REF_H

#include "runner/runner.h"

/* -T/--type: the references' datatype. */
typedef enum bb_reduce_type {
    BB_REDUCE_DOUBLE = 0, BB_REDUCE_FLOAT, BB_REDUCE_INT, BB_REDUCE_TYPES
} bb_reduce_type_t;

const char *bb_reduce_type_name(bb_reduce_type_t type);  /* "mpi_double" */
int64_t bb_reduce_type_bytes(bb_reduce_type_t type);
/* One of mpi_double, mpi_float, mpi_int (else bb_run_usage naming opt). */
bb_reduce_type_t bb_reduce_type_parse(bb_run_t *run, const char *opt, const char *value);

/* Element i of rank's contribution: an integer below 2^24 (exact in every
 * type).  The number of elements of result (count of type) that differ from
 * the exact sum over ranks. */
double bb_allreduce_ref_value(int64_t i, int rank);
int64_t bb_allreduce_ref_errors(const void *result, bb_reduce_type_t type, int64_t count,
                                int ranks);

/* The sum phase's provider: this rank's values (bb_allreduce_ref_value) as
 * doubles, lent through the runner's count; fail makes it refuse, delay_s
 * sleeps in prepare. */
typedef struct bb_allreduce_fixture {
    double *data;             /* [max_count + 1] */
    int64_t len;              /* elements lent at the next prepare */
    int fail;
    double delay_s;
    bb_run_t *run;
    bb_sum_provider_t provider;  /* the phase's callbacks, on this fixture */
} bb_allreduce_fixture_t;

/* Local (a failure is bb_run_fatal). */
void bb_allreduce_fixture_setup(bb_run_t *run, bb_allreduce_fixture_t *fixture,
                                int64_t max_count, int fail, double delay_s);
void bb_allreduce_fixture_free(bb_allreduce_fixture_t *fixture);

typedef enum bb_allreduce_kind {
    BB_ALLREDUCE_RAW = 0,     /* MPI_Allreduce on warm buffers */
    BB_ALLREDUCE_NB,          /* MPI_Iallreduce, one MPI_Test, MPI_Wait */
    BB_ALLREDUCE_PERSISTENT,  /* MPI_Start of the point's request, Test, Wait */
    BB_ALLREDUCE_COPY,        /* the contribution copied first, then raw */
    BB_ALLREDUCE_FRESH,       /* both buffers allocated, filled, freed */
    BB_ALLREDUCE_USER_OP      /* raw under a user-defined SUM (MPI_Op_create)
                                 instead of the built-in MPI_SUM */
} bb_allreduce_kind_t;

/* The references' buffers and the point's persistent request. */
typedef struct bb_allreduce_ref {
    bb_reduce_type_t type;
    int64_t count;            /* elements of type at the point */
    void *send, *recv, *copy;
    MPI_Request persistent;   /* made per point when asked */
    MPI_Op user_sum;          /* the user-defined SUM of the type */
} bb_allreduce_ref_t;

/* Local: buffers for max_bytes per rank, send filled with this rank's
 * values, and the user-defined SUM (a failure is bb_run_fatal). */
void bb_allreduce_ref_setup(bb_run_t *run, bb_allreduce_ref_t *ref, bb_reduce_type_t type,
                            int64_t max_bytes);
/* Collective when persistent: the point's bytes, and the persistent request
 * made outside the timing. */
void bb_allreduce_ref_point(bb_run_t *run, bb_allreduce_ref_t *ref, int64_t bytes,
                            int persistent);
void bb_allreduce_ref_point_end(bb_allreduce_ref_t *ref);
void bb_allreduce_ref_free(bb_allreduce_ref_t *ref);

/* Collective.  One call of kind: its seconds added to *elapsed (the fresh
 * kind's check excluded); returns the wrong values of its result.  An MPI
 * error is bb_run_fatal naming label. */
int64_t bb_allreduce_ref_call(bb_run_t *run, bb_allreduce_ref_t *ref, bb_allreduce_kind_t kind,
                              const char *label, double *elapsed);

/* A reference row's census quantities: communication.max_inflight and
 * memory.tracked_live null, saying why (blocking: the raw mode). */
void bb_allreduce_ref_quantities(cJSON *q, const char *name, int blocking);

#endif
