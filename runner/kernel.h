/* kernel.h: the compute kernel the benchmarks run between polls (kernel.c):
 * the loop itself and its calibration, and the runner's one policy for it.
 * Private (not installed); collective rules as in runner.h. */
#ifndef BB_RUNNER_KERNEL_H
#define BB_RUNNER_KERNEL_H

#include "bbench.h"

typedef struct bb_run bb_run_t;

/* The compute kernel every overlap measurement uses: an MPI-free,
 * cache-resident floating-point loop, independent of any payload.  Its rate
 * is calibrated once per process. */
typedef struct bb_compute {
    double iters_per_s;      /* calibrated rate (fastest of the trials) */
    double slowest_iters_per_s; /* slowest trial: the calibration's spread */
    int trials;
    double trial_s;          /* minimum duration of one trial */
    double calibration_s;    /* wall time the calibration took */
} bb_compute_t;

/* Local, MPI-free.  Runs trials >= 1 trials of at least trial_s > 0 seconds
 * each and keeps the fastest rate. */
bb_status_t bb_compute_calibrate(int trials, double trial_s,
                                 bb_compute_t *compute_out);

/* Local.  Iterations that take about seconds (>= 0) at the calibrated rate;
 * 0 for 0 seconds. */
int64_t bb_compute_iterations(const bb_compute_t *compute, double seconds);

/* Local, MPI-free.  Runs the kernel for iterations and returns a value that
 * depends on every iteration (accumulate it somewhere the compiler cannot
 * discard, so the work is not optimized away). */
double bb_compute_run(int64_t iterations);

/* The compute kernel of every benchmark that computes between polls: an
 * MPI-free, cache-resident floating-point loop (bb_compute_run).  One
 * policy: every rank calibrates (fastest of BB_KERNEL_TRIALS trials of
 * BB_KERNEL_TRIAL_S), and the slowest rank's rate sets the iterations, so
 * that no rank's batch is short. */
enum { BB_KERNEL_TRIALS = 10 };
#define BB_KERNEL_TRIAL_S 0.002
#define BB_KERNEL_DESCRIPTION "MPI-free cache-resident floating-point loop; " \
    "iterations from the slowest rank's calibrated rate"

typedef struct bb_run_kernel {
    bb_compute_t local;        /* this rank's calibration */
    double slowest_rate;       /* iterations per second, minimum over ranks */
    double fastest_rate;       /* maximum over ranks */
    double batch_s;            /* the batch duration asked for */
    int64_t iterations;        /* per batch, at slowest_rate */
    double batch_measured_s;   /* one batch measured after calibration: the
                                  mean of 100, rank maximum */
    double sink;               /* keeps the check's work observable */
} bb_run_kernel_t;

/* Collective.  Calibrates the kernel for batches of batch_s seconds. */
void bb_run_kernel_calibrate(bb_run_t *run, double batch_s, bb_run_kernel_t *kernel_out);

/* From setup.  The calibration as a table note and (rank 0) the record's
 * run.compute_kernel, the one place every benchmark writes them. */
void bb_run_kernel_record(bb_run_t *run, const bb_run_kernel_t *kernel);

/* Local.  Iterations that take about seconds at the agreed (slowest) rate. */
int64_t bb_run_kernel_iterations(const bb_run_kernel_t *kernel, double seconds);

#endif /* BB_RUNNER_KERNEL_H */
