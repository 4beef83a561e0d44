/* bench.c: what every bbench executable shares: MPI start-up, usage and
 * fatal exits, the output check, provenance capture and the final write.
 * Rank 0 does all printing. */
#include "config.h"
#include "private/bbtext.h"
#include "bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

extern char **environ;

struct bb_bench {
    const char *name;
    bb_world_t *world;
    bb_record_t *record;
    int rank, size;
    int thread_requested;
    int threads_before_init;  /* this process's threads before MPI_Init, -1 unknown */
    char *output;             /* NULL: no record file */
    bb_topology_info_t topology;
    bb_bench_note_fn *note;   /* where header lines go (the runner's table) */
    void *note_arg;
    int plain_stdout;         /* without note: "# text" on stdout, else stderr */
    int quiet;                /* -q: no header lines on stderr */
};

/* Collective.  A bad BB_FINALIZE_TIMEOUT on any rank is a usage error on
 * every rank, named by rank 0 (the lowest rank that has it sends its text).
 * An MPI_Allgather, not an MPI_Allreduce: the fault tests count the
 * reductions and broadcasts of a run, and this one adds none when the
 * value is good. */
static void bench_check_finalize_timeout(bb_bench_t *bench)
{
    char err[256] = "";
    double limit = 0.0;
    int bad = bb_finalize_timeout(&limit, err, sizeof err) != BB_OK;
    int *all = calloc((size_t)bench->size, sizeof *all);
    MPI_Comm comm = bb_bench_comm(bench);
    if (all == NULL)
        bb_bench_fatal(bench, "out of memory while checking BB_FINALIZE_TIMEOUT");
    if (MPI_Allgather(&bad, 1, MPI_INT, all, 1, MPI_INT, comm) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI_Allgather failed while checking BB_FINALIZE_TIMEOUT");
    int first = 0;
    while (first < bench->size && !all[first])
        first++;
    free(all);
    if (first == bench->size)
        return;
    if (MPI_Bcast(err, (int)sizeof err, MPI_CHAR, first, comm) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI_Bcast failed while checking BB_FINALIZE_TIMEOUT");
    err[sizeof err - 1] = '\0';
    if (first == 0)
        bb_bench_usage(bench, "%s", err);
    bb_bench_usage(bench, "rank %d: %s", first, err);
}

/* The MPI this program is built with, for the singleton check's advice. */
static const char *bench_mpi_library(void)
{
#if defined(OMPI_MAJOR_VERSION)
    return "openmpi";
#elif defined(MPICH_VERSION)
    return "mpich";
#else
    return "other";
#endif
}

/* A launcher that started several processes of which each is a singleton
 * (another MPI's mpiexec, srun without the MPI's plugin) would have every
 * one run the whole job alone and write the same output: a usage error
 * (exit 2) on each, said once, by the process the launcher numbers 0. */
static void bench_refuse_singletons(bb_bench_t *bench)
{
    char why[512];
    int leader = 0;
    if (!bb_launcher_singleton_check((const char *const *)environ, bench->size,
                                     bench_mpi_library(), why, sizeof why, &leader))
        return;
    if (leader)
        fprintf(stderr, "%s: %s\n", bench->name, why);
    bb_world_release(bench->world);
    free(bench);
    bb_finalize_expect_exit(BB_EXIT_USAGE);
    bb_finalize();
    exit(BB_EXIT_USAGE);
}

bb_bench_t *bb_bench_init(int *argc, char ***argv, const char *name,
                          const char *benchmark)
{
    /* MPICH makes asynchronous progress only with MPI_THREAD_MULTIPLE, so
     * ask for it exactly when the user asked for asynchronous progress. */
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    int requested = (async != NULL && strcmp(async, "1") == 0)
                        ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
    int provided = 0;
    int threads_before = bb_process_threads();
    if (MPI_Init_thread(argc, argv, requested, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: MPI_Init_thread failed\n", name);
        exit(BB_EXIT_FATAL);
    }
    bb_bench_t *bench = calloc(1, sizeof *bench);
    if (bench == NULL) {
        fprintf(stderr, "%s: out of memory\n", name);
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    }
    bench->name = name;
    bench->plain_stdout = 1;  /* table format until the runner says */
    bench->thread_requested = requested;
    bench->threads_before_init = threads_before;
    bb_status_t st = bb_world_bind(MPI_COMM_WORLD, &bench->world);
    if (st != BB_OK) {
        fprintf(stderr, "%s: cannot bind MPI_COMM_WORLD: %s (thread level %s)\n",
                name, bb_status_string(st), bb_thread_level_name(provided));
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    }
    bench->rank = bb_world_rank(bench->world);
    bench->size = bb_world_size(bench->world);
    bench_refuse_singletons(bench);
    st = bb_record_create(benchmark, *argc, *argv, &bench->record);
    if (st != BB_OK)
        bb_bench_fatal(bench, "cannot create the record: %s", bb_status_string(st));
    bench_check_finalize_timeout(bench);
    return bench;
}

bb_world_t *bb_bench_world(bb_bench_t *bench) { return bench->world; }
int bb_bench_rank(const bb_bench_t *bench) { return bench->rank; }
int bb_bench_size(const bb_bench_t *bench) { return bench->size; }
MPI_Comm bb_bench_comm(const bb_bench_t *bench) { return bb_world_comm(bench->world); }
bb_record_t *bb_bench_record(bb_bench_t *bench) { return bench->record; }
const bb_topology_info_t *bb_bench_topology(const bb_bench_t *bench) { return &bench->topology; }
int bb_bench_thread_requested(const bb_bench_t *bench) { return bench->thread_requested; }
int bb_bench_threads_before_init(const bb_bench_t *bench) { return bench->threads_before_init; }

static void bench_free(bb_bench_t *bench)
{
    bb_record_free(bench->record);
    bb_world_release(bench->world);
    free(bench->output);
    free(bench);
}

void bb_bench_progress_ctx(bb_bench_t *bench, bb_progress_ctx_t *ctx_out)
{
    *ctx_out = (bb_progress_ctx_t){
        .comm = bb_bench_comm(bench),
        .topology = bb_bench_topology(bench),
        .thread_provided = bb_world_thread_level(bb_bench_world(bench)),
        .thread_requested = bb_bench_thread_requested(bench),
        .threads_before_init = bb_bench_threads_before_init(bench),
    };
}

void bb_bench_usage(bb_bench_t *bench, const char *fmt, ...)
{
    if (bench->rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", bench->name);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\nTry '%s --help' for more information.\n", bench->name);
        va_end(ap);
    }
    bench_free(bench);
    bb_finalize_expect_exit(BB_EXIT_USAGE);
    bb_finalize();
    exit(BB_EXIT_USAGE);
}

void bb_bench_exit_text(bb_bench_t *bench, const char *text)
{
    if (bench->rank == 0)
        fputs(text, stdout);
    bench_free(bench);
    bb_finalize_expect_exit(BB_EXIT_OK);
    bb_finalize();
    exit(BB_EXIT_OK);
}

/* Where a fatal error was caught, for tests: the launcher may end before it
 * relays this rank's stderr, a file survives the abort. */
static void fatal_verdict(const char *name, int rank, const char *msg)
{
    const char *path = getenv("BB_FATAL_VERDICT");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return;
    fprintf(f, "%s: rank %d: fatal: %s\n", name, rank, msg);
    fclose(f);
}

void bb_bench_fatal(bb_bench_t *bench, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: fatal: %s\n", bench->name, bench->rank, msg);
    fflush(stderr);
    fatal_verdict(bench->name, bench->rank, msg);
    MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    exit(BB_EXIT_FATAL);  /* not reached with a conforming MPI */
}

void bb_bench_set_output(bb_bench_t *bench, const char *path)
{
    /* Rank 0 decides; the verdict travels so every rank exits together. */
    char err[512] = "";
    int bad = 0;
    if (path != NULL && bench->rank == 0)
        bad = bb_record_check_path(path, err, sizeof err) != BB_OK;
    if (MPI_Bcast(&bad, 1, MPI_INT, 0, bb_bench_comm(bench)) != MPI_SUCCESS)
        bb_bench_fatal(bench, "MPI_Bcast failed while checking --output");
    if (bad)
        bb_bench_usage(bench, "--output %s: %s", path, err);
    free(bench->output);
    bench->output = path ? strdup(path) : NULL;
}

void bb_bench_set_quiet(bb_bench_t *bench, int quiet)
{
    bench->quiet = quiet;
}

void bb_bench_set_notes(bb_bench_t *bench, bb_bench_note_fn *note, void *arg,
                        int plain_stdout)
{
    bench->note = note;
    bench->note_arg = arg;
    bench->plain_stdout = plain_stdout;
}

/* A header line on rank 0: to the note sink while one is set (the runner's
 * table in table and json format); else "# text" on stdout in table format,
 * a line on stderr in csv and json (stdout holds their document alone),
 * none with -q. */
__attribute__((format(printf, 2, 3)))
static void bench_header(bb_bench_t *bench, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (bench->rank != 0)
        return;
    if (bench->note != NULL)
        bench->note(bench->note_arg, text);
    else if (bench->plain_stdout)
        printf("# %s\n", text);
    else if (!bench->quiet)
        fprintf(stderr, "%s: %s\n", bench->name, text);
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* System provenance (rank 0; unknown is null with a reason); the launcher */
/* is launcher.c's                                                          */
/* ------------------------------------------------------------------------ */

/* A small text file into buf (NUL-terminated); 0 on success.  /proc files
 * have no size, so read until the end or the buffer is full. */
static int bb_read_small(const char *path, char *buf, size_t len, size_t *n_out)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n_out)
        *n_out = n;
    return 0;
}


/* The value of "key<sep>value" on a line of text (first match), trimmed
 * of spaces and double quotes, into out. */
static const char *bb_text_field(const char *text, const char *key, char sep,
                                 char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, key, kl) != 0)
            continue;
        const char *p = line + kl;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != sep)
            continue;
        p++;
        while (*p == ' ' || *p == '"')
            p++;
        size_t n = strcspn(p, "\n");
        while (n > 0 && (p[n - 1] == '"' || p[n - 1] == ' '))
            n--;
        if (n >= len)
            n = len - 1;
        memcpy(out, p, n);
        out[n] = '\0';
        return out;
    }
    return NULL;
}

/* The 1, 5 and 15 minute load averages, or null. */
static cJSON *bb_load_average(void)
{
    char buf[256];
    double l[3];
    if (bb_read_small("/proc/loadavg", buf, sizeof buf, NULL) != 0 ||
        sscanf(buf, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3)
        return cJSON_CreateNull();
    return cJSON_CreateDoubleArray(l, 3);
}

/* The rate of an MPI-free kernel (dependent multiply-adds, best of three),
 * so that comparison can tell a slower machine from slower code. */
#define BB_KERNEL_ITERS (1 << 20)
static cJSON *bb_kernel_rate(void)
{
    double best = 0.0;
    volatile double sink = 0.0;
    for (int k = 0; k < 3; k++) {
        double x = 1.0 + 1e-9 * k;
        double t0 = MPI_Wtime();
        for (int i = 0; i < BB_KERNEL_ITERS; i++)
            x = x * 0.999999999 + 1e-9;
        double dt = MPI_Wtime() - t0;
        sink += x;
        if (dt > 0.0 && (best == 0.0 || dt < best))
            best = dt;
    }
    (void)sink;
    cJSON *q = best > 0.0
                   ? bb_quantity_value((double)BB_KERNEL_ITERS / best, "1/s", "run/rank")
                   : bb_quantity_null("1/s", "run/rank", "the timer did not advance");
    cJSON_AddStringToObject(q, "kernel", "2^20 dependent double multiply-adds on rank 0 "
                            "before the benchmark, best of 3 (iterations per second)");
    cJSON_AddFalseToObject(q, "deterministic");
    return q;
}

static cJSON *bb_system_json(void)
{
    cJSON *sys = cJSON_CreateObject();
    static char text[65536];
    char value[256];
    const char *model = NULL;
    if (bb_read_small("/proc/cpuinfo", text, sizeof text, NULL) == 0)
        model = bb_text_field(text, "model name", ':', value, sizeof value);
    bb_json_add_or_null(sys, "cpu_model", model,
                          "/proc/cpuinfo is unreadable or has no model name");
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(sys, "kernel", u.release);
        cJSON_AddStringToObject(sys, "arch", u.machine);
    } else {
        bb_json_add_or_null(sys, "kernel", NULL, "uname failed");
    }
    const char *os = NULL;
    if (bb_read_small("/etc/os-release", text, sizeof text, NULL) == 0)
        os = bb_text_field(text, "PRETTY_NAME", '=', value, sizeof value);
    bb_json_add_or_null(sys, "os", os, "/etc/os-release is unreadable or has no PRETTY_NAME");
    cJSON *load = cJSON_AddObjectToObject(sys, "load_average");
    cJSON_AddItemToObject(load, "before", bb_load_average());
    cJSON_AddNullToObject(load, "after");  /* set when the run ends */
    cJSON_AddStringToObject(load, "note", "1, 5 and 15 minute averages of /proc/loadavg "
                            "on rank 0's host, before and after the benchmark");
    cJSON_AddItemToObject(sys, "kernel_rate", bb_kernel_rate());
    return sys;
}

void bb_bench_capture(bb_bench_t *bench)
{
    cJSON *runtime = NULL, *topology = NULL;
    bb_status_t st = bb_provenance_capture(bench->world, bench->thread_requested,
                                           &runtime, &topology, &bench->topology);
    if (st != BB_OK)
        bb_bench_fatal(bench, "provenance capture failed: %s", bb_status_string(st));
    bb_simulated_topology(topology, &bench->topology);
    if (bench->rank != 0)
        return;
    cJSON_AddItemToObject(runtime, "launcher", bb_launcher_json(topology));
    /* A preloaded library can change what is timed (the test suite's
     * yielding shim turns polling into sched_yield): rank 0's, as given. */
    const char *preload = getenv("LD_PRELOAD");
    if (preload != NULL && preload[0] != '\0')
        cJSON_AddStringToObject(runtime, "preload", preload);
    else
        cJSON_AddNullToObject(runtime, "preload");
    bb_simulated_runtime(runtime);
    bb_record_set(bench->record, "runtime", runtime);
    bb_record_set(bench->record, "topology", topology);
    bb_record_set(bench->record, "system", bb_system_json());
    const bb_topology_info_t *t = &bench->topology;
    char over[160] = ": not oversubscribed";
    if (t->oversubscribed)
        snprintf(over, sizeof over, ": OVERSUBSCRIBED, %d ranks on a %s of %d cores; "
                 "timings include time-sharing", t->max_ranks_per_machine,
                 t->machines < t->hosts ? "machine (shared by hosts)" : "host",
                 t->cores_per_host);
    if (bb_simulated())
        bench_header(bench, "%s %s: %d rank%s on %d simulated host%s (SimGrid SMPI; "
                     "%d core%s on rank 0's host of the platform; the record's "
                     "runtime.simulated)", bench->name, bb_version(), t->ranks,
                     t->ranks == 1 ? "" : "s", t->hosts, t->hosts == 1 ? "" : "s",
                     t->cores_per_host, t->cores_per_host == 1 ? "" : "s");
    else
        bench_header(bench, "%s %s: %d rank%s on %d host%s (%d cores, %d PUs on rank 0's "
                     "host)%s", bench->name, bb_version(), t->ranks, t->ranks == 1 ? "" : "s",
                     t->hosts, t->hosts == 1 ? "" : "s", t->cores_per_host, t->pus_per_host,
                     over);
    bench_header(bench, "thread level %s requested, %s provided",
                 bb_thread_level_name(bench->thread_requested),
                 bb_thread_level_name(bb_world_thread_level(bench->world)));
}

void bb_bench_progress(bb_bench_t *bench, const char *fmt, ...)
{
    if (bench->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", bench->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

int bb_bench_finish(bb_bench_t *bench, int exit_code)
{
    int code = exit_code;
    if (bench->rank == 0) {
        cJSON *load = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(bb_record_json(bench->record), "system"),
            "load_average");
        if (load != NULL)
            cJSON_ReplaceItemInObjectCaseSensitive(load, "after", bb_load_average());
    }
    if (bench->rank == 0)
        bb_simulated_points(bb_record_json(bench->record));
    if (bench->rank == 0 && bench->output != NULL) {
        char err[512] = "";
        if (bb_record_write(bench->record, bench->output, err, sizeof err) != BB_OK) {
            fprintf(stderr, "%s: cannot write the record %s: %s\n", bench->name,
                    bench->output, err);
            if (code == BB_EXIT_OK)
                code = BB_EXIT_FAILURE;
        } else {
            bench_header(bench, "record written to %s", bench->output);
        }
    }
    /* The table on stdout is the other half of the output: a run whose
     * table was lost (a full disk, >/dev/full) must not exit 0. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (bench->rank == 0)
            fprintf(stderr, "%s: the table on stdout was not fully written\n",
                    bench->name);
        if (code == BB_EXIT_OK)
            code = BB_EXIT_FAILURE;
    }
    /* Every rank leaves with the same code. */
    MPI_Bcast(&code, 1, MPI_INT, 0, bb_bench_comm(bench));
    bench_free(bench);
    bb_finalize_expect_exit(code);
    bb_finalize();
    return code;
}
