/*
 * policy.h: the protocol policies a benchmark measures side by side
 * (--buffers, --admission, --requests, and for the sum phase --metrics), for
 * bbench-sum and bbench-transfer.
 *
 * Each option takes a comma list of the library's policy names (or both /
 * all); the policies measured are every combination asked for, in the order
 * of bb_policy_list.  Labels name a combination by what differs from the
 * defaults: "protocol", "protocol-retained-fused-op-persistent".
 */
#ifndef BB_POLICY_H
#define BB_POLICY_H

#include "runner.h"

/* The three options' keys, above any benchmark's own. */
enum { BB_OPT_BUFFERS = BB_OPT_LONG + 200, BB_OPT_ADMISSION, BB_OPT_REQUESTS,
       BB_OPT_METRICS, BB_OPT_SHAPE, BB_OPT_MISMATCH };

/* --mismatch-rank R:FIELD, one table for every phase: the contract field
 * that rank R presents differently.  A phase accepts the fields it has. */
typedef enum bb_mismatch {
    BB_MISMATCH_NONE = 0, BB_MISMATCH_PHASE_ID, BB_MISMATCH_EPOCH, BB_MISMATCH_SOURCE,
    BB_MISMATCH_DESTINATION, BB_MISMATCH_COUNT, BB_MISMATCH_NBYTES, BB_MISMATCH_CAP,
    BB_MISMATCH_BATCHES, BB_MISMATCH_SEQUENCE, BB_MISMATCH_N
} bb_mismatch_t;
#define BB_MISMATCH_BIT(f) (1u << BB_MISMATCH_##f)
#define BB_MISMATCH_OPTION(fields)                                                    \
    {"mismatch-rank", BB_OPT_MISMATCH, "R:FIELD", "rank R presents another " fields}
/* "R:FIELD" with FIELD one of the fields in mask (BB_MISMATCH_BIT): the
 * field, R into rank_out; anything else is a usage error. */
bb_mismatch_t bb_mismatch_parse(bb_run_t *run, const char *value, unsigned mask,
                                int *rank_out);

/* The three rows of an option table (what a call or a ticket is, for the
 * help text: "call" or "ticket"). */
#define BB_POLICY_OPTIONS(per)                                                           \
    {"buffers", BB_OPT_BUFFERS, "LIST", "the protocol's payload buffers: fresh (per " per \
                                        ",\nthe default), retained (kept between " per "s)" \
                                        "\nor both; borrowed (the sum phase only: the\n" \
                                        "provider's own array, no copy)"},                 \
    {"admission", BB_OPT_ADMISSION, "LIST", "the admission: spec (MIN then MAX, the\n"      \
                                            "default), fused (one MIN over fields and\n"    \
                                            "complements), fused-op (the same as one\n"     \
                                            "element under a user MIN); both (spec,fused)\n" \
                                            "or all"},                                     \
    {"requests", BB_OPT_REQUESTS, "LIST", "the protocol's collectives: per-call (the\n"     \
                                          "default) or persistent (MPI_Allreduce_init\n"   \
                                          "once, MPI_Start per " per "), or both"}

/* The option rows of --metrics and --shape (the sum phase's only). */
#define BB_POLICY_SHAPE_OPTION                                                        \
    {"shape", BB_OPT_SHAPE, "LIST", "the sum phase's shape: free (agreement, then\n"     \
                                    "payload: the default) or fixed (count and cap\n"   \
                                    "agreed at creation, one combined reduction per\n" \
                                    "call; the admission does not apply), or both"}

#define BB_POLICY_METRICS_OPTION                                                      \
    {"metrics", BB_OPT_METRICS, "LIST", "the phase's own metrics: timed (every part, the\n" \
                                        "default) or untimed (no clock read inside the\n" \
                                        "phase: elapsed only), or both"}

/* Free shape: 3 buffers x 3 admissions x 2 requests x 2 metrics; fixed
 * shape: fresh or retained x 2 requests x 2 metrics (no admission). */
enum { BB_POLICY_MAX = 3 * 3 * 2 * 2 + 2 * 2 * 2 };

/* What was asked for: bit v of each mask is the policy value v. */
typedef struct bb_policy_choice {
    unsigned buffers, admission, requests, metrics, shape;
    int sum;  /* set by the sum benchmark: borrowed buffers and --shape apply */
} bb_policy_choice_t;

/* The defaults: one policy, the seed's (every value 0). */
void bb_policy_defaults(bb_policy_choice_t *choice);

/* One of the three options (a bad value is bb_run_usage).  Returns 1 when
 * key was one of them, 0 otherwise. */
int bb_policy_parse(bb_run_t *run, int key, const char *value, bb_policy_choice_t *choice);

/* 1 when anything but the defaults was asked for. */
int bb_policy_given(const bb_policy_choice_t *choice);

/* Every combination asked for into out[BB_POLICY_MAX]: buffers varies
 * fastest, then admission, requests, metrics, shape (the defaults first;
 * a fixed shape takes admission spec, unused, and never borrowed buffers;
 * its shape_count and shape_cap are left 0 for the benchmark's point).
 * Returns how many. */
int bb_policy_list(const bb_policy_choice_t *choice, bb_phase_attr_t *out);

/* base, then "-retained" or "-borrowed", "-fixed", "-fused" or "-fused-op",
 * "-persistent", "-untimed" for what differs from the defaults. */
void bb_policy_label(const char *base, const bb_phase_attr_t *attr, char *buf, size_t len);

/* "buffers fresh, admission spec, requests per-call". */
void bb_policy_describe(const bb_phase_attr_t *attr, char *buf, size_t len);
/* A row's legend: what its variant differs in, then its policy
 * ("buffers ..., admission ..., requests ..."; without buffers: from the
 * admission on). */
void bb_policy_legend(const char *differs, const bb_phase_attr_t *attr, int with_buffers,
                      char *buf, size_t len);

/* The record parameters "buffers", "admission" (free shape only) and
 * "requests" into params, and "metrics" for an untimed phase; with_buffers 0
 * leaves buffers out (a reference that has none). */
void bb_policy_parameters(cJSON *params, const bb_phase_attr_t *attr, int with_buffers);

#endif
