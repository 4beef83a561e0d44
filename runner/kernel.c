/* kernel.c: the compute kernel every benchmark that computes between polls
 * runs (bbench-transfer's batches, bbench-overlap's computation): an
 * MPI-free loop, its calibration, and the runner's policy that every rank
 * runs the slowest rank's iterations and the record says so once. */
#include "config.h"
#include "runner-int.h"

#include <math.h>
#include <stdlib.h>

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

/* ---- the compute kernel ------------------------------------------------ */

void bb_run_kernel_calibrate(bb_run_t *run, double batch_s, bb_run_kernel_t *kernel_out)
{
    bb_run_kernel_t k = { .batch_s = batch_s };
    if (bb_compute_calibrate(BB_KERNEL_TRIALS, BB_KERNEL_TRIAL_S, &k.local) != BB_OK)
        bb_run_fatal(run, "compute kernel calibration failed");
    double rates[2] = { -k.local.iters_per_s, k.local.iters_per_s }, max[2];
    if (bb_stats_reduce_max(bb_run_comm(run), rates, 2, max) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce of the kernel calibration failed");
    k.slowest_rate = -max[0];
    k.fastest_rate = max[1];
    k.iterations = bb_run_kernel_iterations(&k, batch_s);
    /* What one batch then takes: the mean of 100, the slowest rank's. */
    double t0 = bb_time_now();
    for (int i = 0; i < 100; i++)
        k.sink += bb_compute_run(k.iterations);
    double mean = (bb_time_now() - t0) / 100.0;
    if (bb_stats_reduce_max(bb_run_comm(run), &mean, 1, &k.batch_measured_s) != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce of the kernel check failed");
    *kernel_out = k;
}

void bb_run_kernel_record(bb_run_t *run, const bb_run_kernel_t *kernel)
{
    char batch[160] = "";
    if (kernel->batch_s > 0.0)
        snprintf(batch, sizeof batch, "; %.3g s per batch = %lld iterations (a batch measured "
                 "%.3g s)", kernel->batch_s, (long long)kernel->iterations,
                 kernel->batch_measured_s);
    bb_table_note(run->table, "compute kernel: %.4g iterations/s calibrated, the slowest "
                  "rank's (ranks %.4g..%.4g)%s", kernel->slowest_rate, kernel->slowest_rate,
                  kernel->fastest_rate, batch);
    cJSON *section = bb_run_section(run);
    if (section == NULL)
        return;
    cJSON *k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "kernel", "bb_compute_run: " BB_KERNEL_DESCRIPTION);
    cJSON_AddNumberToObject(k, "iterations_per_s_rank0", kernel->local.iters_per_s);
    cJSON_AddNumberToObject(k, "iterations_per_s_slowest_rank", kernel->slowest_rate);
    cJSON_AddNumberToObject(k, "iterations_per_s_fastest_rank", kernel->fastest_rate);
    cJSON_AddNumberToObject(k, "rank0_slowest_trial_iterations_per_s",
                            kernel->local.slowest_iters_per_s);
    cJSON_AddNumberToObject(k, "trials", kernel->local.trials);
    cJSON_AddNumberToObject(k, "trial_s", kernel->local.trial_s);
    cJSON_AddNumberToObject(k, "calibration_s", kernel->local.calibration_s);
    if (kernel->batch_s > 0.0) {  /* else the batches are chosen per point */
        cJSON_AddNumberToObject(k, "requested_s_per_batch", kernel->batch_s);
        cJSON_AddNumberToObject(k, "iterations_per_batch", (double)kernel->iterations);
        cJSON_AddNumberToObject(k, "measured_batch_s_max_rank", kernel->batch_measured_s);
        cJSON_AddStringToObject(k, "measured_batch_note", "mean of 100 batches right "
                                "after calibration, maximum over ranks");
    }
    bb_quantities_add(section, "compute_kernel", k);
}

int64_t bb_run_kernel_iterations(const bb_run_kernel_t *kernel, double seconds)
{
    bb_compute_t agreed = kernel->local;
    agreed.iters_per_s = kernel->slowest_rate;
    return bb_compute_iterations(&agreed, seconds);
}

