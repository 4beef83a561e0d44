/*
 * bench.h: one program's MPI lifetime and what the record says about it
 * (not installed): the bench object (bench.c), the
 * provenance and topology (topo.c), simulated runs (simulated.c), the
 * launcher (launcher.c), the progress engine (progress.c) and the finalize
 * guard (finalize.c).  Conventions are those of <bbench.h>.
 */
#ifndef BB_RUNTIME_BENCH_H
#define BB_RUNTIME_BENCH_H

#include "bbench.h"
#include "record/bbrecord.h"
#include "common/cli.h"

/* ------------------------------------------------------------------------ */
/* Provenance and topology (topo.c)                                         */
/* ------------------------------------------------------------------------ */

typedef struct bb_topology_info {
    int ranks;
    int hosts;
    int max_ranks_per_host;
    int cores_per_host;      /* hwloc cores of rank 0's host, -1 unknown */
    int pus_per_host;        /* -1 unknown */
    int threads_per_rank;    /* OMP_NUM_THREADS if set, else 1 */
    int oversubscribed;      /* some machine runs more ranks than it has cores
                                or than the PUs of the union of its ranks'
                                cpusets (pinning), whichever is fewer */
    /* Hosts that share one kernel (same boot id: containers, network
     * namespaces) share its cores: oversubscription is judged per machine. */
    int machines;
    int max_ranks_per_machine;
} bb_topology_info_t;

/* Collective over the world.  Builds the "runtime" and "topology" members
 * (MPI standard and library, thread levels, timer, environment; hwloc
 * machine summary and per-rank host, cpuset and binding).  On rank 0,
 * *runtime_out and *topology_out are new cJSON objects (caller owns); on
 * other ranks they are set to NULL.  info_out is filled on every rank. */
bb_status_t bb_provenance_capture(bb_world_t *world, int thread_requested,
                                  cJSON **runtime_out, cJSON **topology_out,
                                  bb_topology_info_t *info_out);

/* Local.  RSS high-water mark of this process in bytes (getrusage), or -1. */
int64_t bb_rss_peak_bytes(void);
/* Local.  Current RSS in bytes (/proc/self/statm), or -1. */
int64_t bb_rss_current_bytes(void);

/* ------------------------------------------------------------------------ */
/* Simulated runs (simulated.c): SimGrid SMPI builds, configure --with-smpi  */
/* ------------------------------------------------------------------------ */

/* 1 in an SMPI build, else 0. */
int bb_simulated(void);
/* Rank 0.  Adds runtime.simulated (null with a reason in an ordinary
 * build); in an SMPI build also replaces runtime.launcher by null. */
void bb_simulated_runtime(cJSON *runtime);
/* Every rank (topology NULL but on rank 0).  In an SMPI build: the
 * topology of the platform, without the simulating host's hwloc, cpusets
 * or oversubscription verdict; nothing in an ordinary build. */
void bb_simulated_topology(cJSON *topology, bb_topology_info_t *info);
/* Rank 0, before the record is written.  In an SMPI build the points'
 * memory.rss_* become null with a reason; nothing in an ordinary build. */
void bb_simulated_points(cJSON *record);


/* ------------------------------------------------------------------------ */
/* The bench object (bench.c): what every executable shares                  */
/* ------------------------------------------------------------------------ */

/* One executable's run: MPI, the world, the record, the output path.
 * Only rank 0 prints; the runtime prints nothing on other ranks. */
typedef struct bb_bench bb_bench_t;

/* Initializes MPI (MPI_Init_thread requesting MPI_THREAD_FUNNELED, or
 * MPI_THREAD_MULTIPLE when MPIR_CVAR_ASYNC_PROGRESS=1 asks for a progress
 * thread), binds MPI_COMM_WORLD and creates the record for benchmark
 * ("sum", ...).  name is the program name used in messages ("bbench-sum").
 * A bad BB_FINALIZE_TIMEOUT on any rank is a usage error (exit 2, every
 * rank).  Failure here is fatal: message on stderr and exit 3. */
bb_bench_t *bb_bench_init(int *argc, char ***argv, const char *name,
                          const char *benchmark);

/* Finalizes MPI after draining the traffic that MPI_Finalize could wait on
 * forever across hosts (finalize.c; see doc/hosts.md, "Shutdown across hosts").
 * Collective over MPI_COMM_WORLD, like MPI_Finalize; does nothing when MPI
 * is not initialized or already finalized.  Returns MPI_Finalize's code. */
int bb_finalize(void);

/* The exit code a rank leaves with if bb_finalize's watchdog has to end a
 * stuck MPI_Finalize; set it just before bb_finalize. */
void bb_finalize_expect_exit(int code);

/* Local.  BB_FINALIZE_TIMEOUT in seconds: unset or empty, the default (5);
 * a number in [0, 3600] (0: no guard); anything else BB_ERR_PARSE with err
 * saying so.  bb_bench_init refuses a bad value on every rank (exit 2). */
bb_status_t bb_finalize_timeout(double *limit_out, char *err, size_t errlen);

/* Local.  The finalize guard's state for the record: {"active": true,
 * "timeout_s"} when bb_finalize will put the relay in, else {"active":
 * false, "reason"} (no PMI_FD: not Hydra's PMI-1; BB_FINALIZE_TIMEOUT=0). */
cJSON *bb_finalize_guard_json(void);

/* ------------------------------------------------------------------------ */
/* The launcher (launcher.c): what the record says about how ranks started  */
/* ------------------------------------------------------------------------ */

/* What replaces a value that may be secret. */
#define BB_REDACTED "<redacted>"

/* Local.  1 when a name (len bytes) contains KEY, TOKEN, SECRET, PASSWORD,
 * PASSWD, CREDENTIAL or AUTH, in any case. */
int bb_name_is_secret(const char *name, size_t len);

/* Local.  A launcher's command line argv[0..argc) as a JSON array, values
 * redacted (the values of -genv/-env NAME VALUE, -x NAME=VALUE, srun
 * --export=..., every NAME=VALUE argument, options and MCA parameters with
 * secret-looking names) and cut with markers when long (each argument to
 * 4096 bytes, the whole to 65536, the end kept).  *capture_out: a new
 * object saying so (the rule, counts of redacted values, arguments and
 * bytes cut).  NULL (and *capture_out NULL) when out of memory. */
cJSON *bb_launcher_command_json(const char *const *argv, size_t argc,
                                cJSON **capture_out);

/* Local.  The variables of env (NAME=VALUE strings, NULL-terminated) of the
 * launcher families PMI_, PMIX_, OMPI_, HYDRA_, SLURM_ and MPI_LOCAL, secret
 * names' values redacted; *capture_out a new object naming the families,
 * the rule and the count redacted. */
cJSON *bb_launcher_env_json(const char *const *env, cJSON **capture_out);

/* Local, MPI-free.  Whether this process, alone in its MPI_COMM_WORLD
 * (world_size 1), was started as one of several by a launcher of another
 * MPI, or by srun without the plugin its MPI needs: each such process runs
 * as a singleton and measures nothing of what was asked.  env holds
 * NAME=VALUE strings (NULL-terminated); the launcher's own count is read
 * from OMPI_COMM_WORLD_SIZE (Open MPI's launchers), PMI_SIZE (PMI-1 ones,
 * MPICH's Hydra), else SLURM_STEP_NUM_TASKS (a Slurm step, not the batch
 * script's).  Returns 1 and says what to do in msg (and *leader_out 1 on the
 * process the launcher numbers 0), else 0.  mpi_library: "mpich",
 * "openmpi" or "other", the MPI this program is built with. */
int bb_launcher_singleton_check(const char *const *env, int world_size,
                                const char *mpi_library, char *msg, size_t len,
                                int *leader_out);

/* Local, MPI-free.  Whether Open MPI's TCP BTL can carry this job's
 * messages, so that its progress thread (btl_tcp_progress_thread) could
 * move them outside MPI calls: not under another pml than ob1, nor with tcp
 * excluded, nor on one host where shared memory is allowed.  pml and btl:
 * OMPI_MCA_pml and OMPI_MCA_btl (NULL: unset).  why: the reason, either
 * way. */
int bb_ompi_tcp_carries(int hosts, const char *pml, const char *btl, char *why, size_t len);

/* Rank 0.  runtime.launcher: the nearest parent process that is a launcher
 * (its command line via bb_launcher_command_json, or null with a reason),
 * its variables, the binding the ranks have (from topology's per_rank
 * cpusets, not from the launcher's defaults) and the finalize guard. */
cJSON *bb_launcher_json(const cJSON *topology);

/* ------------------------------------------------------------------------ */
/* Progress (progress.c): how this run's MPI library moves data             */
/* ------------------------------------------------------------------------ */

/* The library that runs, from MPI_Get_library_version. */
typedef enum bb_mpi_library {
    BB_MPI_MPICH = 0,
    BB_MPI_OPEN_MPI,
    BB_MPI_OTHER
} bb_mpi_library_t;

typedef struct bb_progress {
    bb_mpi_library_t library;
    int threads[2];          /* threads per process now, min and max over ranks;
                                -1 unknown */
    int threads_before[2];   /* the same before MPI_Init; -1 unknown */
} bb_progress_t;

/* Local.  Threads of this process now (/proc/self/status), or -1. */
int bb_process_threads(void);

/* What the progress observations read of the run (bb_bench_progress_ctx
 * fills it), so that progress.c needs nothing of the bench object. */
typedef struct bb_progress_ctx {
    MPI_Comm comm;                       /* the world's */
    const bb_topology_info_t *topology;  /* NULL but on rank 0 */
    int thread_provided, thread_requested;
    int threads_before_init;             /* this process's; -1 unknown */
} bb_progress_ctx_t;

/* Collective.  The library and the threads of every rank. */
bb_status_t bb_progress_observe(const bb_progress_ctx_t *ctx, bb_progress_t *out);

/* Rank 0.  One line for the table: the library and its progress setting
 * (MPIR_CVAR_ASYNC_PROGRESS under MPICH, btl_tcp_progress_thread under Open
 * MPI), thread level, ranks per core, threads per process. */
void bb_progress_note(const bb_progress_ctx_t *ctx, const bb_progress_t *p, char *buf,
                      size_t len);

/* Rank 0.  The record's "progress" member: the library, its progress
 * setting and an explanation that holds for it (for another library: that
 * none is known), thread levels, ranks per core and the observed threads. */
cJSON *bb_progress_json(const bb_progress_ctx_t *ctx, const bb_progress_t *p);


bb_world_t *bb_bench_world(bb_bench_t *bench);
int bb_bench_rank(const bb_bench_t *bench);
int bb_bench_size(const bb_bench_t *bench);
MPI_Comm bb_bench_comm(const bb_bench_t *bench);
bb_record_t *bb_bench_record(bb_bench_t *bench);
const bb_topology_info_t *bb_bench_topology(const bb_bench_t *bench);
/* The thread level asked of MPI_Init_thread, and this process's threads
 * just before it (-1 unknown). */
int bb_bench_thread_requested(const bb_bench_t *bench);
int bb_bench_threads_before_init(const bb_bench_t *bench);
/* Local.  What bb_progress_observe, _note and _json read of this run. */
void bb_bench_progress_ctx(bb_bench_t *bench, bb_progress_ctx_t *ctx_out);

/* Usage error: rank 0 prints "NAME: message" and "Try 'NAME --help'." on
 * stderr; every rank finalizes MPI and exits 2.  Call it on every rank
 * (each rank parses the same argv, so each finds the same error). */
void bb_bench_usage(bb_bench_t *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Rank 0 prints text to stdout, every rank finalizes and exits 0 (--help,
 * --version). */
void bb_bench_exit_text(bb_bench_t *bench, const char *text)
    __attribute__((noreturn));

/* Fatal error (MPI error, poisoned phase): this rank prints the message on
 * stderr and calls MPI_Abort(MPI_COMM_WORLD, 3).  No record is written. */
void bb_bench_fatal(bb_bench_t *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Collective.  Remember path (may be NULL: no record file) and have rank 0
 * check, before any measurement, that a record can be written there; every
 * rank learns the answer and a bad path is a usage error (exit 2). */
void bb_bench_set_output(bb_bench_t *bench, const char *path);

/* Local.  quiet != 0 (-q): the header lines that would go to stderr (csv
 * and json formats) are not printed; errors still are. */
void bb_bench_set_quiet(bb_bench_t *bench, int quiet);

/* Collective.  Capture provenance and topology into the record and print
 * the header lines on rank 0 (ranks, hosts, cores, oversubscription). */
void bb_bench_capture(bb_bench_t *bench);

/* Local.  Where the header lines and "record written" go on rank 0: to
 * note(arg, text) while note is not NULL (the runner passes its table, in
 * table and json format, so that stdout holds the table alone); else "# text"
 * on stdout when plain_stdout, a line on stderr otherwise (csv, json).  The
 * bench starts with no sink and plain_stdout 1 (table format). */
typedef void bb_bench_note_fn(void *arg, const char *text);
void bb_bench_set_notes(bb_bench_t *bench, bb_bench_note_fn *note, void *arg,
                        int plain_stdout);

/* Rank 0 prints a progress line on stderr (long sweeps). */
void bb_bench_progress(bb_bench_t *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Collective.  Writes the record (rank 0, atomically, if an output path was
 * set), frees everything, finalizes MPI and returns exit_code for main().
 * A write failure turns the exit code into 1 with a message. */
int bb_bench_finish(bb_bench_t *bench, int exit_code);


#endif /* BB_RUNTIME_BENCH_H */
