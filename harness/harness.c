/* harness.c: what every bbench executable shares: MPI start-up, usage and
 * fatal exits, the output check, provenance capture and the final write.
 * Rank 0 does all printing. */
#include "config.h"
#include "common.h"
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

struct bb_bench {
    const char *name;
    bb_world_t *world;
    bb_record_t *record;
    int rank, size;
    int thread_requested;
    char *output;             /* NULL: no record file */
    bb_topology_info_t topology;
    bb_table_t *table;        /* stdout's table, NULL: plain lines */
    bb_format_t format;       /* the table's, kept after it ends */
};

bb_bench_t *bb_bench_init(int *argc, char ***argv, const char *name,
                          const char *benchmark)
{
    /* MPICH makes asynchronous progress only with MPI_THREAD_MULTIPLE, so
     * ask for it exactly when the user asked for asynchronous progress. */
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    int requested = (async != NULL && strcmp(async, "1") == 0)
                        ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
    int provided = 0;
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
    bench->thread_requested = requested;
    bb_status_t st = bb_world_bind(MPI_COMM_WORLD, &bench->world);
    if (st != BB_OK) {
        fprintf(stderr, "%s: cannot bind MPI_COMM_WORLD: %s (thread level %s)\n",
                name, bb_status_string(st), bb_thread_level_name(provided));
        MPI_Abort(MPI_COMM_WORLD, BB_EXIT_FATAL);
    }
    bench->rank = bb_world_rank(bench->world);
    bench->size = bb_world_size(bench->world);
    st = bb_record_create(benchmark, *argc, *argv, &bench->record);
    if (st != BB_OK)
        bb_bench_fatal(bench, "cannot create the record: %s", bb_status_string(st));
    return bench;
}

bb_world_t *bb_bench_world(bb_bench_t *bench) { return bench->world; }
int bb_bench_rank(const bb_bench_t *bench) { return bench->rank; }
int bb_bench_size(const bb_bench_t *bench) { return bench->size; }
MPI_Comm bb_bench_comm(const bb_bench_t *bench) { return bb_world_comm(bench->world); }
bb_record_t *bb_bench_record(bb_bench_t *bench) { return bench->record; }
const bb_topology_info_t *bb_bench_topology(const bb_bench_t *bench) { return &bench->topology; }

static void bench_free(bb_bench_t *bench)
{
    bb_record_free(bench->record);
    bb_world_release(bench->world);
    free(bench->output);
    free(bench);
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

void bb_bench_set_table(bb_bench_t *bench, bb_table_t *table)
{
    bench->table = table;
    if (table != NULL)
        bench->format = bb_table_format(table);
}

/* A header line on rank 0: a note of the table while it lives (table and
 * json); else "# text" on stdout in table format, a line on stderr in csv
 * and json (stdout holds their document alone). */
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
    if (bench->table != NULL && bench->format != BB_FORMAT_CSV)
        bb_table_note(bench->table, "%s", text);
    else if (bench->format == BB_FORMAT_TABLE)
        printf("# %s\n", text);
    else
        fprintf(stderr, "%s: %s\n", bench->name, text);
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* System and launcher provenance (rank 0; unknown is null with a reason)   */
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

static void bb_add_string_or_null(cJSON *o, const char *name, const char *value,
                                  const char *reason)
{
    if (value != NULL && *value) {
        cJSON_AddStringToObject(o, name, value);
        return;
    }
    char key[64];
    cJSON_AddNullToObject(o, name);
    snprintf(key, sizeof key, "%s_reason", name);
    cJSON_AddStringToObject(o, key, reason);
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
    bb_add_string_or_null(sys, "cpu_model", model,
                          "/proc/cpuinfo is unreadable or has no model name");
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(sys, "kernel", u.release);
        cJSON_AddStringToObject(sys, "arch", u.machine);
    } else {
        bb_add_string_or_null(sys, "kernel", NULL, "uname failed");
    }
    const char *os = NULL;
    if (bb_read_small("/etc/os-release", text, sizeof text, NULL) == 0)
        os = bb_text_field(text, "PRETTY_NAME", '=', value, sizeof value);
    bb_add_string_or_null(sys, "os", os, "/etc/os-release is unreadable or has no PRETTY_NAME");
    cJSON *load = cJSON_AddObjectToObject(sys, "load_average");
    cJSON_AddItemToObject(load, "before", bb_load_average());
    cJSON_AddNullToObject(load, "after");  /* set when the run ends */
    cJSON_AddStringToObject(load, "note", "1, 5 and 15 minute averages of /proc/loadavg "
                            "on rank 0's host, before and after the benchmark");
    cJSON_AddItemToObject(sys, "kernel_rate", bb_kernel_rate());
    return sys;
}

/* A process's command line as an array of strings, or NULL. */
static cJSON *bb_cmdline(long pid)
{
    static char buf[65536];
    char path[64];
    size_t n = 0;
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    if (bb_read_small(path, buf, sizeof buf, &n) != 0 || n == 0)
        return NULL;
    cJSON *argv = cJSON_CreateArray();
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        cJSON_AddItemToArray(argv, cJSON_CreateString(buf + i));
    return argv;
}

static long bb_parent_of(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (bb_read_small(path, buf, sizeof buf, NULL) != 0)
        return -1;
    /* "pid (comm) state ppid": comm may hold spaces, so after the last ')'. */
    const char *p = strrchr(buf, ')');
    long ppid = -1;
    if (p == NULL || sscanf(p + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

static const char *bb_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int bb_is_launcher(const char *name)
{
    static const char *const launchers[] = {"mpiexec", "mpirun", "srun", "orterun",
                                            "prterun", "aprun", NULL};
    for (size_t i = 0; launchers[i]; i++) {
        size_t n = strlen(launchers[i]);
        if (strncmp(name, launchers[i], n) == 0 && (name[n] == '\0' || name[n] == '.'))
            return 1;
    }
    return 0;
}

/* The launcher: its command line (from /proc of the nearest parent that is
 * one), what it told the ranks in the environment (PMI_*, HYDRA_*,
 * MPI_LOCAL*), and the binding policy where it can be known. */
static cJSON *bb_launcher_json(void)
{
    cJSON *l = cJSON_CreateObject();
    extern char **environ;
    cJSON *env = cJSON_CreateObject();
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "PMI_", 4) != 0 && strncmp(*e, "HYDRA_", 6) != 0 &&
            strncmp(*e, "MPI_LOCAL", 9) != 0 && strncmp(*e, "SLURM_STEP", 10) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        char name[128];
        if (eq == NULL || (size_t)(eq - *e) >= sizeof name)
            continue;
        memcpy(name, *e, (size_t)(eq - *e));
        name[eq - *e] = '\0';
        if (!cJSON_HasObjectItem(env, name))
            cJSON_AddStringToObject(env, name, eq + 1);
    }
    int proxy = 0;
    cJSON *cmd = NULL;
    const char *name = NULL;
    long pid = (long)getppid();
    char why[320] = "no launcher among the parent processes (a singleton, or the "
                    "launcher runs on another host)";
    for (int depth = 0; depth < 4 && pid > 1; depth++) {
        cJSON *argv = bb_cmdline(pid);
        const char *a0 = argv ? cJSON_GetStringValue(cJSON_GetArrayItem(argv, 0)) : NULL;
        if (a0 == NULL) {
            cJSON_Delete(argv);
            if (depth == 0)
                snprintf(why, sizeof why, "/proc/%ld/cmdline of the parent is unreadable", pid);
            break;
        }
        const char *base = bb_base_name(a0);
        if (strcmp(base, "hydra_pmi_proxy") == 0)
            proxy = 1;
        if (bb_is_launcher(base)) {
            cmd = argv;
            name = base;
            break;
        }
        cJSON_Delete(argv);
        pid = bb_parent_of(pid);
    }
    if (name == NULL && proxy)
        snprintf(why, sizeof why, "the ranks run under hydra_pmi_proxy whose launcher "
                 "is not a parent on this host");
    cJSON_AddStringToObject(l, "name", name ? name : proxy ? "hydra" : "none found");
    if (cmd != NULL)
        cJSON_AddItemToObject(l, "command", cmd);
    else
        bb_add_string_or_null(l, "command", NULL, why);
    cJSON_AddItemToObject(l, "env", env);
    /* Binding: hydra's -bind-to on its command line; hydra binds nothing
     * unless told (HYDRA_USER_PROVIDED_BINDING says it was told). */
    cJSON *b = cJSON_AddObjectToObject(l, "binding");
    const char *policy = NULL;
    const cJSON *a;
    cJSON_ArrayForEach(a, cmd) {
        const char *s = a->valuestring;
        if (strcmp(s, "-bind-to") == 0 || strcmp(s, "--bind-to") == 0 ||
            strcmp(s, "-binding") == 0) {
            policy = a->next ? a->next->valuestring : NULL;
            break;
        }
        if (strncmp(s, "--bind-to=", 10) == 0) {
            policy = s + 10;
            break;
        }
    }
    int told = getenv("HYDRA_USER_PROVIDED_BINDING") != NULL;
    if (policy != NULL) {
        cJSON_AddStringToObject(b, "policy", policy);
        cJSON_AddStringToObject(b, "source", "the launcher's command line");
    } else if ((proxy || (name && strncmp(name, "mpiexec", 7) == 0)) && !told) {
        cJSON_AddStringToObject(b, "policy", "none");
        cJSON_AddStringToObject(b, "source", "hydra's default (no -bind-to given)");
    } else {
        bb_add_string_or_null(b, "policy", NULL, told
            ? "the launcher was given a binding (HYDRA_USER_PROVIDED_BINDING) that its "
              "command line does not show"
            : "the launcher does not expose its binding policy");
    }
    cJSON_AddStringToObject(b, "per_rank", "topology.per_rank: each rank's cpuset and "
                            "whether it is bound");
    return l;
}

void bb_bench_capture(bb_bench_t *bench)
{
    cJSON *runtime = NULL, *topology = NULL;
    bb_status_t st = bb_provenance_capture(bench->world, bench->thread_requested,
                                           &runtime, &topology, &bench->topology);
    if (st != BB_OK)
        bb_bench_fatal(bench, "provenance capture failed: %s", bb_status_string(st));
    if (bench->rank != 0)
        return;
    cJSON_AddItemToObject(runtime, "launcher", bb_launcher_json());
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
