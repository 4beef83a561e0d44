/*
 * hooks.h: demonstration and test hooks of libbbench, not API and not
 * installed.  The shared library does not export them (BB_HOOK is hidden
 * visibility under the library's -fvisibility=hidden): bbench's own
 * programs and the tests link the static libbbench-core, where they
 * resolve, so that the programs can offer their demonstration options and
 * the tests can provoke divergences and look inside.
 */
#ifndef BBENCH_HOOKS_H
#define BBENCH_HOOKS_H

#include "bbench.h"

/* Not exported from libbbench.so; linked from libbbench-core only. */
#define BB_HOOK

#ifdef __cplusplus
extern "C" {
#endif

/* Local.  Number of objects (any phase kind) retained in the library's
 * fatal list after an MPI error.  They are never freed. */
BB_HOOK size_t bb_poisoned_count(void);

/* Demonstration and test hooks, local.  set_sequence makes this rank present
 * another sequence (a divergence); set_post_delay sleeps this rank between
 * admission and posting the payload. */
BB_HOOK void bb_sum_phase_set_sequence(bb_sum_phase_t *phase, int64_t sequence);
BB_HOOK void bb_sum_phase_set_post_delay(bb_sum_phase_t *phase, double seconds);

/* Benchmark reference, collective: a fixed-shape phase's combined reduction
 * alone, on its buffers as the last call left them (no provider, no copy,
 * no fields written, no verdict), per call or persistent as the phase
 * makes it.  *result_out is the phase's receive buffer (lent).  Returns the
 * MPI error code; MPI_ERR_ARG for a phase that is not fixed-shape, busy or
 * poisoned; a failed reduction poisons the phase. */
BB_HOOK int bb_sum_phase_combined_raw(bb_sum_phase_t *phase, const double **result_out);

/* Local.  Phases (this process) that hold a posted ticket: the module-level
 * registry that keeps them reachable until they retire.  Poisoned phases
 * never retire. */
BB_HOOK size_t bb_transfer_live_count(void);

/* Demonstration and test hooks, local, on this rank only.
 * set_sequence: present another sequence next (a divergence).
 * set_post_delay: sleep between admission and posting.
 * set_corrupt_byte: on the destination, flip one bit of payload byte
 *   offset (if < nbytes) after completion, before consumption, on every
 *   later ticket; -1 turns it off.
 * set_receipt_fault: the destination sends a wrong receipt on every later
 *   ticket: 1 a wrong generation (sequence), 2 a wrong status code;
 *   0 turns it off. */
BB_HOOK void bb_transfer_phase_set_sequence(bb_transfer_phase_t *phase,
                                              int64_t sequence);
BB_HOOK void bb_transfer_phase_set_post_delay(bb_transfer_phase_t *phase,
                                                double seconds);
BB_HOOK void bb_transfer_phase_set_corrupt_byte(bb_transfer_phase_t *phase,
                                                  int64_t offset);
BB_HOOK void bb_transfer_phase_set_receipt_fault(bb_transfer_phase_t *phase, int kind);

/* Test hook, local, on this rank: the root methods move their whole array
 * (Reduce, the root-to-root message, Bcast) in pieces of at most `doubles`
 * (1 .. 2^30; anything else: 2^30, the default), so that small N exercise
 * the pieces that N * components > INT_MAX needs.  Set it alike on every
 * rank of the link, before a message. */
BB_HOOK void bb_redist_plan_set_root_chunk(bb_redist_plan_t *plan, int64_t doubles);

/* Test hook, local, on this rank: auto's trial reports seconds[k] (k <
 * count, at most 28, both rounds) for its k-th execution instead of the
 * time this rank measured, on every trial of the plan (a rebuilt cross part
 * restarts it); NULL or count 0 turns it off.  Different values on
 * different ranks show that the choice follows the agreed MAX alone. */
BB_HOOK void bb_redist_plan_set_trial_times(bb_redist_plan_t *plan, const double *seconds,
                                              int count);

#ifdef __cplusplus
}
#endif
#endif /* BBENCH_HOOKS_H */
