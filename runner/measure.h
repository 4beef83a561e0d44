/*
 * measure.h: the one measurement engine of every bbench benchmark.
 *
 * A variant is one operation timed per call (the protocol, or a reference
 * that differs from it in one thing).  For each point the engine makes:
 *   1. one cold first call, kept apart (its own block of one);
 *   2. `warmup` calls, one block each, discarded;
 *   3. when reps is 0, one probe call; the fastest rank-maximum wall time
 *      of it and the warm-up calls (the whole call, with any untimed work
 *      inside it) chooses the calls per sample that fit `budget_s`, clamped
 *      to [1, BB_MEASURE_REPS_CAP] (with window timing, the windows that
 *      fit it: a windowed call lasts its window);
 *   4. `samples` blocks of reps calls; in a set of several variants, each
 *      sample block after BB_MEASURE_PRIMER_CALLS untimed calls of its own
 *      variant (a block of their own, discarded), so that what the previous
 *      variant left behind (a trimmed heap, MPI's temporaries freed or
 *      cached, its closing reductions) is paid outside the sample: a row's
 *      figure is its own, whichever rows run beside it.
 * A block's per-call means are reduced over the communicator after the
 * block, outside the timed region: by default a sample is the slowest
 * rank's (the critical path of the collective operation), with that rank's
 * parts; with rank_stat BB_RANK_STAT_MEAN it is the mean over ranks.
 *
 * How the calls of a block start (bb_timing_t):
 *   block    back to back, as an application calls them;
 *   barrier  an MPI_Barrier before each call, outside its timing, so each
 *            call is timed alone (OSU's loop; its raw figure compares with
 *            osu_allreduce at the same bytes and datatype);
 *   window   every rank starts call k at the same instant, start + k x W on
 *            clocks synchronized at the start of the measurement (ReproMPI's
 *            scheme: the offset to rank 0 from the fastest of several
 *            ping-pongs); a rank that arrives after its instant counts a
 *            missed window and calls at once.  Late and overrunning calls
 *            are flagged and left out (BB_WINDOW_DROP_MAX below).  W is settings->window_s, or
 *            when 0 twice the slowest warm call (wall time) plus 10 us.  The first call,
 *            warm-up and probe start after barriers.
 *
 * Times are seconds, counts are per-call means.  Nothing here prints.
 */
#ifndef BB_MEASURE_H
#define BB_MEASURE_H

#include "bbench.h"
#include "record/bbrecord.h"
#include "common/cli.h"

/* ------------------------------------------------------------------------ */
/* Cross-rank statistics (reduce.c)                                         */
/* ------------------------------------------------------------------------ */

/* Collective.  Element-wise MAX of n doubles across comm (the rank maximum
 * of a block's per-call means).  Returns the MPI error code. */
int bb_stats_reduce_max(MPI_Comm comm, const double *local, int n,
                        double *max_out);

/* Collective.  The parts of a whole from one rank: local[0] is this rank's
 * whole (a time), local[1..n-1] its parts; out[0..n-1] receives the values
 * of the rank whose whole is largest (the lowest such rank on a tie: the
 * critical path), and *rank_out (may be NULL) that rank.  Unlike a maximum
 * per element, parts taken so never add up to more than their whole.  out
 * may be local.  Returns the MPI error code. */
int bb_stats_reduce_critical(MPI_Comm comm, const double *local, int n, double *out,
                             int *rank_out);

/* How a sample is taken across ranks (--rank-stat): the slowest rank's
 * whole with its own parts (the collective's critical path, the default),
 * or the mean over ranks of each (what osu_allreduce prints without -f). */
typedef enum bb_rank_stat {
    BB_RANK_STAT_MAX = 0,
    BB_RANK_STAT_MEAN
} bb_rank_stat_t;

/* Static name of a rank statistic ("max", "mean"). */
const char *bb_rank_stat_name(bb_rank_stat_t stat);

/* Collective.  As bb_stats_reduce_critical for BB_RANK_STAT_MAX; for
 * BB_RANK_STAT_MEAN out[i] is the mean over ranks of local[i] (parts so
 * taken still add up to at most their whole) and *rank_out is -1. */
int bb_stats_reduce_rank(MPI_Comm comm, bb_rank_stat_t stat, const double *local, int n,
                         double *out, int *rank_out);


/* Window timing (ReproMPI's rule): a call that starts after its window
 * began, or ends after it closed, is flagged on its rank; a call flagged on
 * any rank is left out of every rank's sample.  A sample block that leaves
 * out more than this fraction of its calls is taken again with the window
 * doubled, at most BB_WINDOW_RETRIES times (then kept as it is; a block
 * with every call flagged keeps them all). */
#define BB_WINDOW_DROP_MAX 0.25
enum { BB_WINDOW_RETRIES = 3 };

/* The one cap on calls per sample chosen from a budget. */
enum { BB_MEASURE_REPS_CAP = 100000 };

/* Untimed calls of a variant before each of its sample blocks in a set of
 * several: under SMPI (exact figures) one left part of the skew of the
 * previous block's closing reductions in the first timed call (raw
 * Allreduce at 64 ranks: 21.002 us at --reps 5 against 20.277 at 50); two
 * reach the calls' own steady skew (20.197 at both, and at 16 and 256). */
enum { BB_MEASURE_PRIMER_CALLS = 2 };

/* How reps was chosen. */
typedef enum bb_reps_source {
    BB_REPS_GIVEN = 0,   /* --reps */
    BB_REPS_BUDGET       /* from --budget and the probe call */
} bb_reps_source_t;

typedef enum bb_timing {
    BB_TIMING_BLOCK = 0,
    BB_TIMING_BARRIER,
    BB_TIMING_WINDOW
} bb_timing_t;

/* Static name of a timing method ("block", "barrier", "window"). */
const char *bb_timing_name(bb_timing_t timing);

/* Warm-up until steady: after the warm-up calls and the probe, blocks of
 * half a sample's calls (at least one) are timed and dropped until two
 * consecutive blocks' wholes (the slowest rank's per-call mean) differ by at
 * most this fraction of the earlier one, or steady_max blocks were made. */
#define BB_MEASURE_STEADY_TOLERANCE 0.05

typedef struct bb_measure_settings {
    int64_t samples;     /* samples per point, >= 1 */
    int64_t reps;        /* calls per sample; 0: chosen from budget_s */
    double budget_s;     /* target duration of one sample when reps is 0 */
    int64_t warmup;      /* calls after the first call, before sampling */
    int64_t steady_max;  /* warm-up blocks until steady: at most this many
                            (0: none); see BB_MEASURE_STEADY_TOLERANCE */
    bb_timing_t timing;  /* how the calls of a block start */
    double window_s;     /* window timing: W; 0 chooses it */
    bb_rank_stat_t rank_stat; /* how a sample's parts are taken across ranks */
    /* The stopping rule (--until-ci): 0 takes `samples` rounds; above 0,
     * rounds go on past `samples` until the interval of the median of every
     * variant's whole (at `confidence`) has a half-width of at most
     * until_rel x its median, or max_samples rounds were taken.  The
     * decision is collective (any rank's "more" wins), so every rank takes
     * as many. */
    double until_rel;
    int64_t max_samples;  /* >= samples when until_rel > 0 */
    double confidence;    /* level of the intervals, in (0, 1) */
    /* The canary (--canary): before the first round and after each, this
     * many 8-byte round trips between ranks 0 and 1 (blocks of
     * BB_CANARY_BLOCK, the fastest block's half round trip kept), so that a
     * round whose path between the ranks changed speed can be told; 0: none. */
    int64_t canary_calls;
} bb_measure_settings_t;

/* Round trips per canary block, and the tag its messages carry (no
 * benchmark message is in flight between blocks). */
enum { BB_CANARY_BLOCK = 8, BB_CANARY_TAG = 0x6263 };
/* A round straddled a switch when its two canaries differ by more than
 * this factor: this machine's two modes sit 3x or more apart, the jitter of
 * one mode's fastest block well within 1.5x (doc/protocol.md). */
#define BB_CANARY_SWITCH 1.5

/* One call of a variant.  It ADDS the seconds of each timed part to
 * parts[0..nparts-1] (parts[0] is the whole call, "elapsed") and its counts
 * to counts[0..ncounts-1]; checks of the result belong outside the timed
 * parts.  A status other than BB_OK or BB_REFUSED stops the measurement and
 * is returned by bb_measure_run. */
typedef bb_status_t (*bb_measure_call_fn)(void *arg, double *parts, double *counts);

/* Optional.  Called on every rank after each block, outside the timing, with
 * the block's number of calls and the sample it is (0 .. samples - 1), or -1
 * for a block that is no sample (the first call, warm-up, probe, warm-up
 * until steady): where a variant reduces per-call facts across ranks
 * (collective calls are allowed here). */
typedef bb_status_t (*bb_measure_block_fn)(void *arg, int64_t calls, int64_t sample);

typedef struct bb_measure_variant {
    int nparts;                    /* >= 1 */
    int ncounts;                   /* >= 0 */
    bb_measure_call_fn call;
    bb_measure_block_fn block_end; /* may be NULL */
    void *arg;                     /* borrowed, passed to both */
} bb_measure_variant_t;

/* What one measurement produced, identical on every rank. */
typedef struct bb_measure_result {
    int nparts, ncounts;
    bb_rank_stat_t rank_stat;  /* how the parts were taken across ranks */
    int64_t samples;
    int64_t reps;              /* calls per sample */
    bb_reps_source_t reps_from;
    int64_t calls;             /* every call made: first + warmup + probe + warm
                                  blocks + primers + samples x reps */
    int64_t primers;           /* untimed calls before sample blocks (a set of
                                  several variants: BB_MEASURE_PRIMER_CALLS
                                  per sample) */
    int64_t warm_blocks;       /* warm-up blocks made (0 with steady_max 0) */
    int steady;                /* 1: the last two warm-up blocks agreed; 0: the
                                  cap came first (or steady_max is 0) */
    double *first;             /* [nparts + ncounts + 2] the cold first call: as a
                                  sample, then its wall time and minor faults */
    double *parts;             /* part p of sample s at parts[p * samples + s]: every
                                  part of a sample from the rank with the slowest
                                  whole (critical[s]), or with rank_stat mean every
                                  part's mean over ranks; either way disjoint parts
                                  add up to at most their whole */
    double *local_parts;       /* the same, this rank's own per-call means (not
                                  reduced: they differ between ranks) */
    double *counts;            /* count c of sample s at counts[c * samples + s] */
    int *critical;             /* [samples] the rank whose parts sample s holds:
                                  the one with the slowest whole (parts[0]); -1
                                  with rank_stat mean */
    double probe_wall_s;       /* what chose reps: the fastest wall time of the
                                  warm-up calls and the probe call, each a rank
                                  maximum (0 when reps was given); with window
                                  timing the window chose (reps = budget / W) */
    double warm_wall_s;        /* the slowest warm call's wall time, rank maximum */
    /* Window timing only (0 otherwise): */
    double window_s;           /* W of the last sample (doubled by each retake) */
    int64_t windows_missed;    /* sample calls that started late, summed over ranks */
    double offset_spread_s;    /* max - min of the clock offsets to rank 0 */
    double offset_error_s;     /* half the slowest rank's best ping-pong: the
                                  offsets' uncertainty */
    int64_t *excluded;         /* [samples] calls left out of sample k: flagged on
                                  some rank (late or overrun); 0 without windows */
    int64_t calls_overrun;     /* calls of the sample and warm-up blocks that
                                  ended after their window, summed over ranks
                                  (late starts: windows_missed; a call can be
                                  both) */
    int64_t window_retries;    /* sample blocks taken again in a doubled window */
    int until_met;             /* the stopping rule: 1 met (every variant of the
                                  set), 0 not met at max_samples; -1 no rule */
    double until_widest;       /* the widest half-width / median of the set's
                                  variants at the last round (NaN: no interval) */
    double *canary;            /* [samples + 1] rank 0: the canary before round k
                                  and, last, after the last round (seconds, the
                                  half round trip); NaN elsewhere or without one */
    double canary_cost_s;      /* rank 0: wall time the set's canaries took */
    double *faults;            /* [samples] minor page faults per call of sample k,
                                  the process's (every thread), maximum over
                                  ranks; -1 where getrusage failed */
} bb_measure_result_t;

/* Collective over comm.  Measures variant with settings into *result_out
 * (caller owns: bb_measure_result_clear).  BB_ERR_ARG for bad settings,
 * BB_ERR_NOMEM, BB_ERR_MPI when a reduction fails, or what a call returned. */
bb_status_t bb_measure_run(MPI_Comm comm, const bb_measure_settings_t *settings,
                           const bb_measure_variant_t *variant,
                           bb_measure_result_t *result_out);

/* How a set's variants share their reps (bb_measure_run_set). */
typedef enum bb_share {
    BB_SHARE_NONE = 0,
    BB_SHARE_FIRST,
    BB_SHARE_MIN,
    BB_SHARE_FIT
} bb_share_t;

/* BB_SHARE_FIT: rows whose fitted reps differ by more than this factor
 * (their costs by as much) each keep their own. */
enum { BB_SHARE_FIT_SPREAD = 10 };

/* Collective.  Several variants of one point, their sample blocks
 * interleaved: sample k of every variant before sample k + 1 of any, so that
 * a drift in the machine's speed shows in all of them alike.  Each
 * variant's first call, warm-up and (reps 0) probe come first, variant by
 * variant.  share (bb_share_t): BB_SHARE_NONE, each variant its own reps;
 * BB_SHARE_FIRST, the reps of variants[0] (given or probed) serve every
 * variant, so that every column is a mean over as many calls; BB_SHARE_MIN,
 * every variant probes and the fewest reps serve all (each sample then fits
 * the budget on the slowest variant too: for variants whose times differ
 * by orders of magnitude); BB_SHARE_FIT, every variant probes: the fewest
 * serve all while the most any variant fits is within BB_SHARE_FIT_SPREAD
 * times the fewest, else each variant keeps its own (a cheap row beside a
 * dear one is then timed over as many calls as alone, not over two).
 * results_out[nvariants]: caller owns each (bb_measure_result_clear).
 * Errors as bb_measure_run; on error no result is left to clear. */
bb_status_t bb_measure_run_set(MPI_Comm comm, const bb_measure_settings_t *settings,
                               const bb_measure_variant_t *variants, int nvariants,
                               bb_share_t share, bb_measure_result_t *results_out);

/* The samples of part p (borrowed, result->samples values). */
const double *bb_measure_part(const bb_measure_result_t *result, int p);
/* Part p of the median sample of the whole (parts[0]); with an even number
 * of samples the mean of the two middle samples' parts, so that part p is
 * read from the same samples as the whole's median (0 with no samples). */
double bb_measure_part_at_median(const bb_measure_result_t *result, int p);
/* The record's scope of a timing of this result: "call/max-rank" (the
 * slowest rank's) or "call/mean-rank" (the mean over ranks). */
const char *bb_measure_scope(const bb_measure_result_t *result);
/* The samples of count c (borrowed, rank maxima under either statistic). */
const double *bb_measure_count(const bb_measure_result_t *result, int c);

/* Local (rank 0's canaries).  drop_out[k] = 1 for each round k whose
 * canaries before and after differ by more than BB_CANARY_SWITCH (a switch
 * of the path's speed inside the round); the number of such rounds.  0 and
 * nothing marked without canaries. */
int64_t bb_measure_canary_switches(const bb_measure_result_t *result,
                                   unsigned char *drop_out);

/* Local (rank 0's canaries).  The canary mode of each round: the rounds
 * not marked in drop whose canaries' mean level is known are sorted by it
 * and cut where a level exceeds the one before by BB_CANARY_SWITCH; mode 0
 * is the fastest.  mode_out[k] (samples of them) gets round k's mode, -1
 * for a marked round; level_out[m] (may be NULL; BB_CANARY_MODES_MAX of
 * them) the median level of mode m.  Returns the number of modes: 1 when
 * there are no canaries (every unmarked round mode 0), at most
 * BB_CANARY_MODES_MAX (slower levels join the last).  -1 out of memory. */
enum { BB_CANARY_MODES_MAX = 4 };
int bb_measure_canary_modes(const bb_measure_result_t *result, const unsigned char *drop,
                            int *mode_out, double *level_out);

/* Local (rank 0's canaries).  The rounds a paired figure of a set leaves
 * out: drop_out[k] = 1 for a round the canary marked
 * (bb_measure_canary_switches) or one in another canary mode than the mode
 * with the most rounds (bb_measure_canary_modes; the fastest on a tie).
 * canary: the set's [rounds + 1] canaries (a result's), NULL for none.
 * Returns the number of modes (1 without canaries), -1 out of memory. */
int bb_measure_round_mask(const double *canary, int64_t rounds, unsigned char *drop_out);

/* Local.  Frees what a result holds and zeroes it; NULL or a zeroed result
 * is fine. */
void bb_measure_result_clear(bb_measure_result_t *result);

/* Collective.  The calls per sample that fit budget_s from one call's time
 * on each rank (the rank maximum decides); identical on every rank, in
 * [1, cap].  BB_ERR_MPI when the reduction fails. */
bb_status_t bb_measure_reps_for_budget(MPI_Comm comm, double call_s, double budget_s,
                                       int64_t cap, int64_t *reps_out);

#endif
