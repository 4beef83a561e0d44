/* overlap.c: the overlap figures of merit (pure functions of measured
 * times) and the calibrated compute kernel that bbench-overlap runs between
 * posting and finishing communication.  No MPI here. */
#include "config.h"
#include "common.h"
#include "harness.h"

#include <math.h>
#include <stddef.h>

/* A valid time: finite and nonnegative. */
static int bb_overlap_time_ok(double t) { return isfinite(t) && t >= 0.0; }

static void bb_overlap_set_undefined(bb_overlap_figure_t *out,
                                     const char *reason)
{
    out->defined = 0;
    out->value = 0.0;
    out->raw = 0.0;
    out->clamped = 0;
    out->reason = reason;
}

/* Clamp raw into [lo, hi] (hi may be INFINITY: no upper bound). */
static void bb_overlap_set(bb_overlap_figure_t *out, double raw, double lo,
                           double hi)
{
    double v = raw;
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    out->defined = 1;
    out->raw = raw;
    out->value = v;
    out->clamped = (v != raw);
    out->reason = NULL;
}

bb_status_t bb_overlap_ratio(double t_comm, double t_compute,
                             double t_overlapped, bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_comm)
        || !bb_overlap_time_ok(t_compute) || !bb_overlap_time_ok(t_overlapped))
        return BB_ERR_ARG;
    if (t_compute == 0.0) {
        bb_overlap_set_undefined(out, "no compute (t_compute = 0): nothing to overlap with");
        return BB_OK;
    }
    if (t_comm == 0.0) {
        bb_overlap_set_undefined(out, "no communication (t_comm = 0): nothing to hide");
        return BB_OK;
    }
    double shorter = t_comm < t_compute ? t_comm : t_compute;
    bb_overlap_set(out, (t_comm + t_compute - t_overlapped) / shorter, 0.0, 1.0);
    return BB_OK;
}

bb_status_t bb_overlap_osu(double t_total, double t_compute_in, double t_pure,
                           bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_total)
        || !bb_overlap_time_ok(t_compute_in) || !bb_overlap_time_ok(t_pure))
        return BB_ERR_ARG;
    if (t_pure == 0.0) {
        bb_overlap_set_undefined(out, "no communication (t_pure = 0): OSU divides by it");
        return BB_OK;
    }
    /* OSU bounds the percentage below by 0 and not above. */
    bb_overlap_set(out, 1.0 - (t_total - t_compute_in) / t_pure, 0.0, INFINITY);
    return BB_OK;
}

bb_status_t bb_overlap_imb(double t_pure, double t_cpu, double t_ovrl,
                           bb_overlap_imb_variant_t variant,
                           bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_pure) || !bb_overlap_time_ok(t_cpu)
        || !bb_overlap_time_ok(t_ovrl)
        || (variant != BB_OVERLAP_IMB_DOC && variant != BB_OVERLAP_IMB_CODE))
        return BB_ERR_ARG;
    double denominator = variant == BB_OVERLAP_IMB_DOC
                             ? (t_pure < t_cpu ? t_pure : t_cpu)
                             : (t_pure > t_cpu ? t_pure : t_cpu);
    if (denominator == 0.0) {
        bb_overlap_set_undefined(out, t_cpu == 0.0
                                          ? "no compute (t_cpu = 0): nothing to overlap with"
                                          : "no communication (t_pure = 0): nothing to hide");
        return BB_OK;
    }
    bb_overlap_set(out, (t_pure + t_cpu - t_ovrl) / denominator, 0.0, 1.0);
    return BB_OK;
}

bb_status_t bb_overlap_speedup(double t_immediate, double t_polled,
                               bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_immediate)
        || !bb_overlap_time_ok(t_polled))
        return BB_ERR_ARG;
    if (t_polled == 0.0) {
        bb_overlap_set_undefined(out, "t_polled = 0: below the timer");
        return BB_OK;
    }
    bb_overlap_set(out, t_immediate / t_polled, 0.0, INFINITY);
    return BB_OK;
}

bb_status_t bb_overlap_slowdown(double t_compute_inside, double t_compute,
                                bb_overlap_figure_t *out)
{
    if (out == NULL || !bb_overlap_time_ok(t_compute_inside)
        || !bb_overlap_time_ok(t_compute))
        return BB_ERR_ARG;
    if (t_compute == 0.0) {
        bb_overlap_set_undefined(out, "no compute (t_compute = 0)");
        return BB_OK;
    }
    bb_overlap_set(out, t_compute_inside / t_compute, 0.0, INFINITY);
    return BB_OK;
}

bb_status_t bb_overlap_fraction(int64_t completed, int64_t samples,
                                bb_overlap_figure_t *out)
{
    if (out == NULL || samples < 0 || completed < 0 || completed > samples)
        return BB_ERR_ARG;
    if (samples == 0) {
        bb_overlap_set_undefined(out, "no samples");
        return BB_OK;
    }
    bb_overlap_set(out, (double)completed / (double)samples, 0.0, 1.0);
    return BB_OK;
}

/* ---- compute kernel ---------------------------------------------------- */

/* Eight independent multiply-add chains on registers: no memory traffic
 * that could compete with the payload, no dependence on any buffer, and a
 * result the compiler cannot compute in closed form without reassociating
 * (which it may not do without -ffast-math).  The factor below 1 keeps the
 * values bounded for any iteration count. */
double bb_compute_run(int64_t iterations)
{
    double a0 = 1.0, a1 = 1.1, a2 = 1.2, a3 = 1.3;
    double a4 = 1.4, a5 = 1.5, a6 = 1.6, a7 = 1.7;
    const double f = 0.9999999, g = 1e-7;
    for (int64_t i = 0; i < iterations; i++) {
        a0 = a0 * f + g; a1 = a1 * f + g; a2 = a2 * f + g; a3 = a3 * f + g;
        a4 = a4 * f + g; a5 = a5 * f + g; a6 = a6 * f + g; a7 = a7 * f + g;
    }
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

bb_status_t bb_compute_calibrate(int trials, double trial_s,
                                 bb_compute_t *compute_out)
{
    if (compute_out == NULL || trials < 1 || !(trial_s > 0.0)
        || !isfinite(trial_s))
        return BB_ERR_ARG;
    volatile double sink = 0.0;
    double start = bb_time_now();
    double fastest = 0.0, slowest = INFINITY;
    for (int t = 0; t < trials; t++) {
        /* Grow the count until one run lasts trial_s, so the clock's
         * resolution and the call overhead do not matter. */
        int64_t n = 1024;
        double elapsed = 0.0;
        for (;;) {
            double t0 = bb_time_now();
            sink += bb_compute_run(n);
            elapsed = bb_time_now() - t0;
            if (elapsed >= trial_s || n > INT64_MAX / 4)
                break;
            /* Aim a little past the target from the measured rate. */
            double grow = elapsed > 0.0 ? 1.2 * trial_s / elapsed : 16.0;
            if (grow < 2.0)
                grow = 2.0;
            if (grow > 16.0)
                grow = 16.0;
            n = (int64_t)((double)n * grow);
        }
        double rate = (double)n / elapsed;
        if (rate > fastest)
            fastest = rate;
        if (rate < slowest)
            slowest = rate;
    }
    (void)sink;
    compute_out->iters_per_s = fastest;
    compute_out->slowest_iters_per_s = slowest;
    compute_out->trials = trials;
    compute_out->trial_s = trial_s;
    compute_out->calibration_s = bb_time_now() - start;
    return BB_OK;
}

int64_t bb_compute_iterations(const bb_compute_t *compute, double seconds)
{
    if (compute == NULL || !(seconds > 0.0) || !(compute->iters_per_s > 0.0))
        return 0;
    double n = seconds * compute->iters_per_s;
    if (n >= (double)INT64_MAX)
        return INT64_MAX;
    return (int64_t)llround(n);
}
