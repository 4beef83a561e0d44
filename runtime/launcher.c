/* launcher.c: what a record says about how the ranks were started: the
 * launcher's command line (secrets redacted, cut with a marker when long),
 * the variables the launcher set (secrets redacted by the same rule), the
 * binding the ranks actually have, and the finalize guard's state.
 *
 * Records are committed and uploaded as CI artifacts, so nothing a user
 * may have passed as a secret reaches them: a value given on the
 * launcher's command line is replaced by BB_REDACTED whether or not its
 * name looks secret, because the name says nothing reliable. */
#include "config.h"
#include "private/bbtext.h"
#include "bench.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* The longest argument and command kept (bytes of text): what a reader can
 * use of a command line is its options, not a megabyte of one value. */
#define BB_COMMAND_ARG_MAX 4096
#define BB_COMMAND_MAX 65536
/* /proc/PID/cmdline is read whole up to this (Linux allows far less). */
#define BB_CMDLINE_READ_MAX (64 << 20)

const char *const bb_redaction_rule =
    "replaced by " BB_REDACTED ": the value of -genv/-env NAME VALUE (Hydra), of "
    "-x NAME=VALUE (Open MPI), of srun --export=NAME=VALUE, of every NAME=VALUE "
    "argument, of an option or MCA parameter whose name contains KEY, TOKEN, "
    "SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH, and of an environment "
    "variable with such a name; -genvlist/-envlist name variables and are kept";

static const char *const bb_secret_words[] = {"KEY", "TOKEN", "SECRET", "PASSWORD",
                                              "PASSWD", "CREDENTIAL", "AUTH", NULL};

int bb_name_is_secret(const char *name, size_t len)
{
    for (size_t w = 0; bb_secret_words[w] != NULL; w++) {
        size_t wl = strlen(bb_secret_words[w]);
        for (size_t i = 0; i + wl <= len; i++) {
            size_t k = 0;
            while (k < wl && toupper((unsigned char)name[i + k]) == bb_secret_words[w][k])
                k++;
            if (k == wl)
                return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

/* A command line being rewritten: one malloc'ed string per argument. */
typedef struct bb_args {
    char **v;
    size_t n;
    int64_t redacted;
} bb_args_t;

/* NAME of "NAME=VALUE" is a variable name (letters, digits, '_', '.'; not
 * an option): the length of NAME, or 0. */
static size_t bb_assignment_name(const char *s)
{
    size_t i = 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.')
        i++;
    return s[i] == '=' ? i : 0;
}

/* Replace the text of args->v[i] from byte `from` on with the marker. */
static void bb_args_redact_from(bb_args_t *args, size_t i, size_t from)
{
    char *old = args->v[i];
    if (strcmp(old + from, BB_REDACTED) == 0)
        return;
    char *s = malloc(from + sizeof BB_REDACTED);
    if (s == NULL) {
        old[from] = '\0';  /* out of memory: drop the value rather than keep it */
    } else {
        memcpy(s, old, from);
        memcpy(s + from, BB_REDACTED, sizeof BB_REDACTED);
        free(old);
        args->v[i] = s;
    }
    args->redacted++;
}

/* A list "A=1,B,C=3" (srun --export, a -genvlist given values): every value
 * after a name's '=' up to the next ',' is redacted.  start: where the list
 * begins in args->v[i]. */
static void bb_args_redact_list(bb_args_t *args, size_t i, size_t start)
{
    const char *s = args->v[i];
    if (strchr(s + start, '=') == NULL)
        return;
    size_t cap = strlen(s) * (sizeof BB_REDACTED) + 1, o = start, k = start;
    char *out = malloc(cap);
    if (out == NULL) {
        bb_args_redact_from(args, i, start);
        return;
    }
    memcpy(out, s, start);
    while (s[k] != '\0') {
        size_t item = strcspn(s + k, ",");
        const char *eq = memchr(s + k, '=', item);
        size_t keep = eq ? (size_t)(eq - (s + k)) + 1 : item;
        memcpy(out + o, s + k, keep);
        o += keep;
        if (eq != NULL) {
            memcpy(out + o, BB_REDACTED, sizeof BB_REDACTED - 1);
            o += sizeof BB_REDACTED - 1;
            args->redacted++;
        }
        k += item;
        if (s[k] == ',')
            out[o++] = s[k++];
    }
    out[o] = '\0';
    free(args->v[i]);
    args->v[i] = out;
}

/* An option's name without its dashes and "=value": "--api-key=x" -> "api-key". */
static const char *bb_option_name(const char *s, size_t *len_out)
{
    while (*s == '-')
        s++;
    *len_out = strcspn(s, "=");
    return s;
}

static int bb_is_option(const char *s, const char *const *names)
{
    for (size_t k = 0; names[k] != NULL; k++)
        if (strcmp(s, names[k]) == 0)
            return 1;
    return 0;
}

/* Redact args in place by bb_redaction_rule.  Launcher options are looked
 * for everywhere, not only before the program: an MPMD command line
 * (A : B) has options after the first program, and no bbench program has
 * an option of these names that takes a value. */
static void bb_args_redact(bb_args_t *args)
{
    static const char *const env_pair[] = {"-genv", "-env", "--genv", "--env", NULL};
    static const char *const env_list[] = {"-genvlist", "-envlist", "--genvlist",
                                           "--envlist", NULL};
    static const char *const export_one[] = {"-x", NULL};
    static const char *const mca[] = {"-mca", "--mca", "-gmca", "--gmca", NULL};
    for (size_t i = 1; i < args->n; i++) {
        const char *a = args->v[i];
        size_t nl;
        if (bb_is_option(a, env_pair) && i + 1 < args->n) {
            /* -genv NAME VALUE, or NAME=VALUE in one word. */
            const char *eq = strchr(args->v[i + 1], '=');
            if (eq != NULL) {
                bb_args_redact_from(args, i + 1, (size_t)(eq - args->v[i + 1]) + 1);
                i += 1;
            } else if (i + 2 < args->n) {
                bb_args_redact_from(args, i + 2, 0);
                i += 2;
            }
        } else if (bb_is_option(a, env_list) && i + 1 < args->n) {
            bb_args_redact_list(args, i + 1, 0);
            i += 1;
        } else if (bb_is_option(a, export_one) && i + 1 < args->n) {
            /* -x NAME=VALUE: the value may hold commas; -x NAME is kept. */
            const char *eq = strchr(args->v[i + 1], '=');
            if (eq != NULL)
                bb_args_redact_from(args, i + 1, (size_t)(eq - args->v[i + 1]) + 1);
            i += 1;
        } else if (strncmp(a, "--export=", 9) == 0) {
            bb_args_redact_list(args, i, 9);
        } else if (strcmp(a, "--export") == 0 && i + 1 < args->n) {
            bb_args_redact_list(args, i + 1, 0);
            i += 1;
        } else if (bb_is_option(a, mca) && i + 2 < args->n) {
            if (bb_name_is_secret(args->v[i + 1], strlen(args->v[i + 1])))
                bb_args_redact_from(args, i + 2, 0);
            i += 2;
        } else if (a[0] == '-') {
            /* --password=x, or --password x when x is no option. */
            const char *name = bb_option_name(a, &nl);
            if (!bb_name_is_secret(name, nl))
                continue;
            if (name[nl] == '=')
                bb_args_redact_from(args, i, (size_t)(name - a) + nl + 1);
            else if (i + 1 < args->n && args->v[i + 1][0] != '-')
                bb_args_redact_from(args, ++i, 0);
        } else if ((nl = bb_assignment_name(a)) > 0) {
            bb_args_redact_from(args, i, nl + 1);
        }
    }
}

/* Cut args->v[i] to at most max bytes of text (at a UTF-8 boundary), the
 * marker in the kept part; the bytes of it not kept are added to
 * *bytes_cut. */
static void bb_args_cut_one(bb_args_t *args, size_t i, size_t max, int64_t *bytes_cut)
{
    size_t len = strlen(args->v[i]);
    if (len <= max)
        return;
    char marker[64];
    int ml = snprintf(marker, sizeof marker, "<cut: %zu bytes>", len);
    size_t keep = max > (size_t)ml ? max - (size_t)ml : 0;
    while (keep > 0 && ((unsigned char)args->v[i][keep] & 0xC0) == 0x80)
        keep--;
    memcpy(args->v[i] + keep, marker, (size_t)ml + 1);
    *bytes_cut += (int64_t)(len - keep);
}

/* The command as JSON, every argument at most BB_COMMAND_ARG_MAX bytes and
 * the whole at most BB_COMMAND_MAX: the launcher's name, then as many
 * arguments from the end (the program and its options) and from the start
 * (the launcher's options) as fit, one marker where the middle was. */
static cJSON *bb_args_json(bb_args_t *args, int64_t *arguments_cut, int64_t *bytes_cut)
{
    *arguments_cut = 0;
    *bytes_cut = 0;
    size_t total = 0;
    for (size_t i = 0; i < args->n; i++) {
        bb_args_cut_one(args, i, BB_COMMAND_ARG_MAX, bytes_cut);
        total += strlen(args->v[i]);
    }
    cJSON *cmd = cJSON_CreateArray();
    if (cmd == NULL || args->n == 0)
        return cmd;
    size_t head = args->n, tail = args->n;  /* [1, head) and [tail, n) kept */
    if (total > BB_COMMAND_MAX) {
        /* The end first (three quarters), then the start, then the end
         * again with what is left. */
        size_t room = BB_COMMAND_MAX - strlen(args->v[0]) - 64, used = 0;
        while (tail > 1 && used + strlen(args->v[tail - 1]) <= room / 4 * 3)
            used += strlen(args->v[--tail]);
        head = 1;
        while (head < tail && used + strlen(args->v[head]) <= room)
            used += strlen(args->v[head++]);
        while (tail > head && used + strlen(args->v[tail - 1]) <= room)
            used += strlen(args->v[--tail]);
    }
    for (size_t i = 0; i < args->n; i++) {
        if (i == head && head < tail) {
            char marker[96];
            int64_t bytes = 0;
            for (size_t k = head; k < tail; k++)
                bytes += (int64_t)strlen(args->v[k]);
            *arguments_cut = (int64_t)(tail - head);
            *bytes_cut += bytes;
            snprintf(marker, sizeof marker, "<cut: %lld arguments, %lld bytes>",
                     (long long)(tail - head), (long long)bytes);
            cJSON_AddItemToArray(cmd, cJSON_CreateString(marker));
            i = tail - 1;
            continue;
        }
        cJSON_AddItemToArray(cmd, cJSON_CreateString(args->v[i]));
    }
    return cmd;
}

cJSON *bb_launcher_command_json(const char *const *argv, size_t argc, cJSON **capture_out)
{
    bb_args_t args = {calloc(argc ? argc : 1, sizeof(char *)), 0, 0};
    cJSON *cmd = NULL;
    *capture_out = NULL;
    if (args.v == NULL)
        return NULL;
    for (; args.n < argc; args.n++)
        if ((args.v[args.n] = strdup(argv[args.n])) == NULL)
            goto free_args;
    bb_args_redact(&args);
    int64_t arguments_cut = 0, bytes_cut = 0;
    cmd = bb_args_json(&args, &arguments_cut, &bytes_cut);
    cJSON *cap = cJSON_CreateObject();
    if (cmd == NULL || cap == NULL) {
        cJSON_Delete(cmd);
        cJSON_Delete(cap);
        cmd = NULL;
        goto free_args;
    }
    cJSON_AddStringToObject(cap, "redaction", bb_redaction_rule);
    cJSON_AddNumberToObject(cap, "redacted", (double)args.redacted);
    cJSON_AddNumberToObject(cap, "arguments_cut", (double)arguments_cut);
    cJSON_AddNumberToObject(cap, "bytes_cut", (double)bytes_cut);
    cJSON_AddStringToObject(cap, "limits", "each argument at most 4096 bytes, the "
                            "command at most 65536: a longer argument keeps its start "
                            "and ends in <cut: N bytes>; arguments that do not fit are "
                            "replaced, in the middle, by <cut: K arguments, B bytes>, so "
                            "the program and its options (the end) are kept");
    *capture_out = cap;
free_args:
    for (size_t i = 0; i < args.n; i++)
        free(args.v[i]);
    free(args.v);
    return cmd;
}

/* A process's command line, whole: NUL-separated arguments into a new
 * vector (caller frees *buf_out and the vector), or NULL. */
static const char **bb_cmdline_read(long pid, char **buf_out, size_t *argc_out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    *buf_out = NULL;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap >= BB_CMDLINE_READ_MAX)
            break;
        char *bigger = realloc(buf, cap * 2 + 1);
        if (bigger == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf == NULL || n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    size_t argc = 0;
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        argc++;
    const char **argv = calloc(argc, sizeof *argv);
    if (argv == NULL) {
        free(buf);
        return NULL;
    }
    argc = 0;
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    *buf_out = buf;
    *argc_out = argc;
    return argv;
}

/* ------------------------------------------------------------------------ */
/* The launcher                                                             */
/* ------------------------------------------------------------------------ */

static long bb_parent_of(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
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

static const char *bb_env_get(const char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env[i] != NULL; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
            return env[i] + n + 1;
    return NULL;
}

/* A launcher's number: a decimal of at least min (0 or 1) that fits an
 * int (a step id: a long), else -1. */
static long bb_env_number(const char *const *env, const char *name, long min, long max)
{
    const char *v = bb_env_get(env, name);
    if (v == NULL || *v < '0' || *v > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < min || n > max)
        return -1;
    return n;
}

int bb_launcher_singleton_check(const char *const *env, int world_size,
                                const char *mpi_library, char *msg, size_t len,
                                int *leader_out)
{
    *leader_out = 0;
    if (world_size != 1)
        return 0;
    const char *size_var = NULL, *rank_var = NULL, *launcher = NULL;
    long n = -1;
    /* The count of the MPI's own launcher is read first: a parent job of the
     * other launcher leaves its variables behind (a stale
     * OMPI_COMM_WORLD_SIZE around mpiexec.mpich -n 1, whose PMI_SIZE=1 is
     * the one that counts). */
    static const char *const families[2][3] = {
        {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "Open MPI's launcher"},
        {"PMI_SIZE", "PMI_RANK", "a PMI launcher (MPICH's Hydra)"},
    };
    int first = strcmp(mpi_library, "mpich") == 0 ? 1 : 0;
    for (int k = 0; k < 2 && size_var == NULL; k++) {
        const char *const *fam = families[k == 0 ? first : 1 - first];
        if ((n = bb_env_number(env, fam[0], 1, INT_MAX)) > 0) {
            size_var = fam[0];
            rank_var = fam[1];
            launcher = fam[2];
        }
    }
    if (size_var == NULL) {
        /* The batch script of an allocation is no step: it has no step id,
         * or one of Slurm's reserved ones (batch, extern, interactive). */
        long step = bb_env_number(env, "SLURM_STEP_ID", 0, 0xffffffffL);
        if (step >= 0 && step < 0xfffffff0L &&
            (n = bb_env_number(env, "SLURM_STEP_NUM_TASKS", 1, INT_MAX)) > 0) {
            size_var = "SLURM_STEP_NUM_TASKS";
            rank_var = "SLURM_PROCID";
            launcher = "srun";
        }
    }
    if (size_var == NULL || n <= 1)
        return 0;
    const char *rank = bb_env_get(env, rank_var);
    *leader_out = rank == NULL || strcmp(rank, "0") == 0;
    const char *fix;
    if (strcmp(launcher, "srun") == 0)
        fix = strcmp(mpi_library, "mpich") == 0 ? "srun --mpi=pmi2 (MPICH)"
              : strcmp(mpi_library, "openmpi") == 0 ? "srun --mpi=pmix (Open MPI)"
              : "srun --mpi=TYPE with the plugin this MPI uses (srun --mpi=list)";
    else
        fix = strcmp(mpi_library, "mpich") == 0 ? "MPICH's launcher (mpiexec.mpich)"
              : strcmp(mpi_library, "openmpi") == 0 ? "Open MPI's launcher (mpiexec.openmpi)"
              : "the launcher of the MPI this program is built with";
    snprintf(msg, len, "%s started %ld processes (%s=%ld) but each is alone in its "
             "MPI_COMM_WORLD: the launcher does not speak to this program's MPI (%s), "
             "so every process would run as a singleton; launch with %s",
             launcher, n, size_var, n, mpi_library, fix);
    return 1;
}

/* The variable families launchers set for their ranks. */
static const char *const bb_launcher_families[] = {"PMI_", "PMIX_", "OMPI_", "HYDRA_",
                                                   "SLURM_", "MPI_LOCAL", NULL};

/* Launcher variables that carry a key without saying so in their name:
 * Open MPI's per-job key, which PSM transports use to tell jobs apart. */
static int bb_env_is_job_key(const char *name)
{
    return strcmp(name, "OMPI_MCA_orte_precondition_transports") == 0;
}

cJSON *bb_launcher_env_json(const char *const *env, cJSON **capture_out)
{
    cJSON *out = cJSON_CreateObject();
    int64_t redacted = 0;
    for (const char *const *e = env; out != NULL && e && *e; e++) {
        size_t f = 0;
        while (bb_launcher_families[f] != NULL
               && strncmp(*e, bb_launcher_families[f], strlen(bb_launcher_families[f])) != 0)
            f++;
        const char *eq = strchr(*e, '=');
        char name[256];
        if (bb_launcher_families[f] == NULL || eq == NULL
            || (size_t)(eq - *e) >= sizeof name
            || bb_utf8_invalid_at(*e, (size_t)(eq - *e)) < (size_t)(eq - *e))
            continue;
        memcpy(name, *e, (size_t)(eq - *e));
        name[eq - *e] = '\0';
        if (cJSON_HasObjectItem(out, name))
            continue;
        int secret = bb_name_is_secret(name, strlen(name)) || bb_env_is_job_key(name);
        redacted += secret;
        cJSON_AddStringToObject(out, name, secret ? BB_REDACTED : eq + 1);
    }
    cJSON *cap = cJSON_CreateObject();
    if (cap != NULL) {
        cJSON *fam = cJSON_AddArrayToObject(cap, "families");
        for (size_t f = 0; bb_launcher_families[f] != NULL; f++)
            cJSON_AddItemToArray(fam, cJSON_CreateString(bb_launcher_families[f]));
        cJSON_AddStringToObject(cap, "redaction", "a variable whose name contains KEY, "
                                "TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH, and "
                                "Open MPI's job key OMPI_MCA_orte_precondition_transports, "
                                "has its value replaced by " BB_REDACTED);
        cJSON_AddNumberToObject(cap, "redacted", (double)redacted);
    }
    *capture_out = cap;
    return out;
}

/* The binding the ranks have, from their cpusets (topology.per_rank): what
 * one object of hwloc each rank's cpuset is ("core", ...), the same for all
 * ranks, else "mixed"; "none" when no rank is bound.  requested: the
 * launcher's option when its command line shows one. */
static cJSON *bb_binding_json(const cJSON *topology, const cJSON *cmd)
{
    cJSON *b = cJSON_CreateObject();
    const char *requested = NULL;
    const cJSON *a;
    cJSON_ArrayForEach(a, cmd) {
        const char *s = a->valuestring;
        if ((strcmp(s, "-bind-to") == 0 || strcmp(s, "--bind-to") == 0
             || strcmp(s, "-binding") == 0) && a->next != NULL) {
            requested = a->next->valuestring;
            break;
        }
        if (strncmp(s, "--bind-to=", 10) == 0) {
            requested = s + 10;
            break;
        }
    }
    const cJSON *per_rank = cJSON_GetObjectItemCaseSensitive(topology, "per_rank");
    const char *policy = NULL, *why = NULL;
    int ranks = 0, bound = 0;
    cJSON_ArrayForEach(a, per_rank) {
        const cJSON *is = cJSON_GetObjectItemCaseSensitive(a, "bound");
        const char *to = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "bound_to"));
        if (!cJSON_IsBool(is) || to == NULL) {
            why = "a rank's cpuset is unknown (topology.per_rank says why)";
            break;
        }
        ranks++;
        bound += cJSON_IsTrue(is);
        if (policy == NULL)
            policy = to;
        else if (strcmp(policy, to) != 0)
            policy = "mixed";
    }
    if (why == NULL && ranks == 0)
        why = "no rank's cpuset was gathered";
    if (why == NULL && bound == 0)
        policy = "none";
    if (why != NULL) {
        bb_json_add_or_null(b, "policy", NULL, why);
    } else {
        cJSON_AddStringToObject(b, "policy", policy);
        cJSON_AddNumberToObject(b, "ranks_bound", bound);
    }
    cJSON_AddStringToObject(b, "source", "the ranks' cpusets after MPI_Init (hwloc): "
                            "core, hwthread, package or numa when a cpuset is exactly one "
                            "such object, cpuset otherwise, none when it is every PU "
                            "allowed, mixed when ranks differ");
    if (requested != NULL)
        cJSON_AddStringToObject(b, "requested", requested);
    cJSON_AddStringToObject(b, "per_rank", "topology.per_rank: each rank's cpuset, whether "
                            "it is bound and to what");
    return b;
}

cJSON *bb_launcher_json(const cJSON *topology)
{
    cJSON *l = cJSON_CreateObject();
    if (l == NULL)
        return NULL;
    int proxy = 0, stepd = 0;
    cJSON *cmd = NULL, *capture = NULL;
    char *name = NULL;
    long pid = (long)getppid();
    char why[320] = "no launcher among the parent processes (a singleton, or the "
                    "launcher runs on another host)";
    for (int depth = 0; depth < 4 && pid > 1; depth++) {
        char *buf = NULL;
        size_t argc = 0;
        const char **argv = bb_cmdline_read(pid, &buf, &argc);
        if (argv == NULL) {
            if (depth == 0)
                snprintf(why, sizeof why, "/proc/%ld/cmdline of the parent is unreadable", pid);
            break;
        }
        const char *base = bb_base_name(argv[0]);
        if (strcmp(base, "hydra_pmi_proxy") == 0)
            proxy = 1;
        /* srun's ranks are children of the step's daemon ("slurmstepd: [J.S]"). */
        if (strncmp(base, "slurmstepd", 10) == 0)
            stepd = 1;
        if (bb_is_launcher(base)) {
            name = strdup(base);
            cmd = bb_launcher_command_json(argv, argc, &capture);
        }
        free(argv);
        free(buf);
        if (name != NULL)
            break;
        pid = bb_parent_of(pid);
    }
    if (name == NULL && proxy)
        snprintf(why, sizeof why, "the ranks run under hydra_pmi_proxy whose launcher "
                 "is not a parent on this host");
    if (name == NULL && stepd)
        snprintf(why, sizeof why, "srun started the ranks through slurmstepd: its command "
                 "line stays on the host that submitted the step");
    cJSON_AddStringToObject(l, "name", name ? name : proxy ? "hydra" : stepd ? "srun"
                            : "none found");
    free(name);
    if (cmd != NULL) {
        cJSON_AddItemToObject(l, "command", cmd);
        cJSON_AddItemToObject(l, "command_capture", capture);
    } else {
        bb_json_add_or_null(l, "command", NULL, why);
    }
    cJSON *env_capture = NULL;
    cJSON_AddItemToObject(l, "env", bb_launcher_env_json((const char *const *)environ, &env_capture));
    cJSON_AddItemToObject(l, "env_capture", env_capture);
    cJSON_AddItemToObject(l, "binding", bb_binding_json(topology, cmd));
    cJSON_AddItemToObject(l, "finalize_guard", bb_finalize_guard_json());
    return l;
}
