/* figures.h: bbench-overlap's figures of merit (figures.c): how much of
 * the communication the computation hid, by three definitions, from the
 * times a point measured.  Private to bench/overlap; conventions are those
 * of <bbench.h>. */
#ifndef BB_OVERLAP_FIGURES_H
#define BB_OVERLAP_FIGURES_H

#include "bbench.h"
#include "record/bbrecord.h"
#include "runner/table.h"

/* ------------------------------------------------------------------------ */
/* Overlap (overlap.c): figures of merit and the compute kernel             */
/* ------------------------------------------------------------------------ */

/* The formulas, as stored in records and printed by --help.  All inputs are
 * seconds; every figure is a ratio (1 = 100 %). */
#define BB_OVERLAP_FORMULA \
    "max(0, min(1, (t_comm + t_compute - t_polled) / min(t_comm, t_compute)))"
#define BB_OVERLAP_OSU_FORMULA \
    "max(0, 1 - (t_total - t_compute_in) / t_pure)"
#define BB_OVERLAP_IMB_FORMULA \
    "max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)))"
#define BB_OVERLAP_IMB_CODE_FORMULA \
    "max(0, min(1, (t_pure + t_cpu - t_ovrl) / max(t_pure, t_cpu)))"
#define BB_OVERLAP_SPEEDUP_FORMULA "t_immediate / t_polled"
#define BB_OVERLAP_SLOWDOWN_FORMULA "t_compute_in_polled / t_compute"

/* A derived figure: a value, or undefined with a static reason. */
typedef struct bb_overlap_figure {
    int defined;        /* 1: value holds the figure; 0: see reason */
    double value;       /* 0 when undefined (never report it as such) */
    double raw;         /* the value before clamping (0 when undefined) */
    int clamped;        /* 1: raw lay outside the figure's bounds */
    const char *reason; /* static; NULL when defined */
} bb_overlap_figure_t;

/* Local, pure.  Every function returns BB_ERR_ARG (figure untouched) for a
 * NULL output, a negative or non-finite time, or an impossible count; a
 * zero denominator is not an error but an undefined figure. */

/* bbench's headline: BB_OVERLAP_FORMULA with t_overlapped = t_polled.
 * 1: the shorter of communication and compute was hidden entirely; 0: the
 * overlapped run took as long as both run one after the other (or longer).
 * Undefined when min(t_comm, t_compute) == 0. */
bb_status_t bb_overlap_ratio(double t_comm, double t_compute,
                             double t_overlapped, bb_overlap_figure_t *out);

/* OSU-style (osu_iallreduce): 1 - (t_total - t_compute_in) / t_pure,
 * bounded below by 0 only, as OSU does (it can exceed 1 when t_total <
 * t_compute_in).  Undefined when t_pure == 0. */
bb_status_t bb_overlap_osu(double t_total, double t_compute_in, double t_pure,
                           bb_overlap_figure_t *out);

/* IMB-NBC style.  BB_OVERLAP_IMB_DOC is the formula of the IMB user guide
 * (denominator min(t_pure, t_cpu)); BB_OVERLAP_IMB_CODE the one IMB's
 * source computes for IMB-NBC (denominator max(t_pure, t_cpu)).  Clamped to
 * [0, 1].  Undefined when the denominator is 0. */
typedef enum bb_overlap_imb_variant {
    BB_OVERLAP_IMB_DOC = 0,
    BB_OVERLAP_IMB_CODE = 1
} bb_overlap_imb_variant_t;
bb_status_t bb_overlap_imb(double t_pure, double t_cpu, double t_ovrl,
                           bb_overlap_imb_variant_t variant,
                           bb_overlap_figure_t *out);

/* t_immediate / t_polled (> 1: overlapping paid off).  Undefined when
 * t_polled == 0. */
bb_status_t bb_overlap_speedup(double t_immediate, double t_polled,
                               bb_overlap_figure_t *out);

/* Compute slowdown under communication: compute time measured inside the
 * polled run over compute alone.  Undefined when t_compute == 0. */
bb_status_t bb_overlap_slowdown(double t_compute_inside, double t_compute,
                                bb_overlap_figure_t *out);

/* Fraction of samples in which the payload completed during the batches:
 * completed / samples, 0 <= completed <= samples.  Undefined for 0 samples. */
bb_status_t bb_overlap_fraction(int64_t completed, int64_t samples,
                                bb_overlap_figure_t *out);

/* The figures of one overlap point, each per sample, from the point's
 * per-sample times in seconds (samples values each). */
enum { BB_OVERLAP_RANK_COMM, BB_OVERLAP_RANK_UNPOLLED, BB_OVERLAP_RANK_UNPOLLED_COMPUTE,
       BB_OVERLAP_RANK_N };
typedef struct bb_overlap_times {
    int64_t samples;
    int compute_none;  /* no compute asked for: the figures that need it are
                          undefined, not a quotient of timer noise */
    /* Rank maxima (bbench's figures). */
    const double *comm, *compute, *immediate, *polled, *polled_compute, *unpolled;
    /* Every rank's own per-call means, [ranks][BB_OVERLAP_RANK_N][samples]:
     * their means are OSU's inputs, the rank with the largest t_unpolled
     * gives IMB's (its t_ovrl). */
    int ranks;
    const double *per_rank;
    /* The polled calls: reps a sample, completed[s] of them seen complete
     * on every rank during the batches (none ran without batches). */
    int64_t reps, batches;
    const int64_t *completed;
} bb_overlap_times_t;

/* The figures, in the record's order. */
enum { BB_OVERLAP_F_OVERLAP, BB_OVERLAP_F_UNPOLLED, BB_OVERLAP_F_OSU, BB_OVERLAP_F_IMB,
       BB_OVERLAP_F_IMB_CODE, BB_OVERLAP_F_SPEEDUP, BB_OVERLAP_F_SLOWDOWN, BB_OVERLAP_F_N };

typedef struct bb_overlap_set {
    int64_t samples, reps;
    bb_overlap_figure_t *f[BB_OVERLAP_F_N];  /* [samples] each */
    /* Of overlap and overlap.unpolled: how far the figure could move within
     * the sample ranges of its times, (range(t_comm) + range(t_overlapped))
     * / min(median t_comm, median t_compute); above 1 the ranges alone allow
     * any value in [0, 1].  NAN when undefined. */
    double uncertainty[2];
    bb_overlap_figure_t done;  /* completed_during_batches over the samples */
    int64_t done_calls;
    double *done_samples;      /* [samples] */
} bb_overlap_set_t;

/* Local.  Every figure of every sample; BB_ERR_NOMEM or BB_ERR_ARG (set
 * zeroed).  The caller frees with bb_overlap_set_free. */
bb_status_t bb_overlap_set_compute(const bb_overlap_times_t *times, bb_overlap_set_t *set_out);
void bb_overlap_set_free(bb_overlap_set_t *set);
/* Local.  Every figure and completed_during_batches as a ratio quantity of
 * q under its record name ("overlap", "overlap.osu", ...) with formula,
 * inputs and note; null with null_reason when that is not NULL (nothing
 * measured), else null with the first undefined sample's reason. */
void bb_overlap_set_quantities(const bb_overlap_set_t *set, const char *null_reason, cJSON *q);
/* Rank 0.  The figures' table columns (medians over the samples, - where
 * undefined), and a point's cells (all - when !measured). */
void bb_overlap_set_columns(bb_table_t *table);
/* The formulas by figure name (the record's "formulas"), caller owns. */
cJSON *bb_overlap_formulas(void);
void bb_overlap_set_cells(bb_table_t *table, const bb_overlap_set_t *set, int measured);

#endif /* BB_OVERLAP_FIGURES_H */
