/* progress.c: how the MPI library of this run makes progress, explained
 * for the library it is (MPICH's variables mean nothing to Open MPI), with
 * the evidence bbench can observe: the threads each process has, before
 * and after MPI_Init. */
#include "config.h"
#include "private/bbtext.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bb_process_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "Threads:", 8) == 0) {
            char *end = NULL;
            long v = strtol(line + 8, &end, 10);
            if (end != line + 8 && v > 0 && v < 1000000)
                n = (int)v;
        }
    fclose(f);
    return n;
}

/* The library from MPI_Get_library_version's text, not from the headers
 * compiled against: the library that runs is the one that progresses. */
static bb_mpi_library_t bb_mpi_library(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS)
        return BB_MPI_OTHER;
    lib[len < 0 ? 0 : len > MPI_MAX_LIBRARY_VERSION_STRING
                          ? MPI_MAX_LIBRARY_VERSION_STRING : len] = '\0';
    if (strncmp(lib, "MPICH", 5) == 0)
        return BB_MPI_MPICH;
    if (strstr(lib, "Open MPI") != NULL)
        return BB_MPI_OPEN_MPI;
    return BB_MPI_OTHER;
}

static const char *const bb_library_names[] = {"MPICH", "Open MPI", "other"};

bb_status_t bb_progress_observe(const bb_progress_ctx_t *ctx, bb_progress_t *out)
{
    MPI_Comm comm = ctx->comm;
    int mine[2] = {ctx->threads_before_init, bb_process_threads()};
    int low[2], high[2];
    if (MPI_Allreduce(mine, low, 2, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS
        || MPI_Allreduce(mine, high, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return BB_ERR_MPI;
    out->library = bb_mpi_library();
    /* A rank that could not read /proc counts as unknown for all. */
    out->threads_before[0] = low[0] > 0 ? low[0] : -1;
    out->threads_before[1] = low[0] > 0 ? high[0] : -1;
    out->threads[0] = low[1] > 0 ? low[1] : -1;
    out->threads[1] = low[1] > 0 ? high[1] : -1;
    return BB_OK;
}

void bb_progress_note(const bb_progress_ctx_t *ctx, const bb_progress_t *p, char *buf,
                      size_t len)
{
    const bb_topology_info_t *topo = ctx->topology;
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    const char *tcp = getenv("OMPI_MCA_btl_tcp_progress_thread");
    char setting[192];
    if (p->library == BB_MPI_MPICH)
        snprintf(setting, sizeof setting, "MPICH, MPIR_CVAR_ASYNC_PROGRESS=%s",
                 async ? async : "(unset)");
    else if (p->library == BB_MPI_OPEN_MPI) {
        char why[256];
        int carries = bb_ompi_tcp_carries(topo->hosts, getenv("OMPI_MCA_pml"),
                                          getenv("OMPI_MCA_btl"), why, sizeof why);
        snprintf(setting, sizeof setting, "Open MPI (no asynchronous progress thread; "
                 "btl_tcp_progress_thread=%s%s)", tcp ? tcp : "(unset)",
                 tcp == NULL || strcmp(tcp, "0") == 0 ? ""
                 : carries ? ": TCP may carry messages" : ": TCP carries none here");
    }
    else
        snprintf(setting, sizeof setting, "MPI library not known to bbench");
    char per_core[48] = "ranks per core unknown";
    if (topo->cores_per_host > 0)
        snprintf(per_core, sizeof per_core, "%.2f ranks per core",
                 (double)topo->max_ranks_per_host / topo->cores_per_host);
    snprintf(buf, len, "%s, thread level provided %s, %s, %d..%d threads per process "
             "(%d..%d before MPI_Init)", setting,
             bb_thread_level_name(ctx->thread_provided), per_core,
             p->threads[0], p->threads[1], p->threads_before[0], p->threads_before[1]);
}

/* MPICH: the variable, and whether the thread it asks for could start. */
static void bb_progress_mpich(cJSON *pc, int provided)
{
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    int on = async != NULL && strcmp(async, "1") == 0;
    cJSON_AddBoolToObject(pc, "async_progress_possible", on && provided == MPI_THREAD_MULTIPLE);
    cJSON_AddStringToObject(pc, "explanation", "MPICH makes asynchronous progress only with "
                            "MPIR_CVAR_ASYNC_PROGRESS=1 and MPI_THREAD_MULTIPLE: it then "
                            "starts one progress thread per process (one thread more than "
                            "without); otherwise data moves only inside MPI calls (the "
                            "polls)");
    if (on && provided != MPI_THREAD_MULTIPLE)
        cJSON_AddStringToObject(pc, "warning", "MPIR_CVAR_ASYNC_PROGRESS=1 but the thread "
                                "level provided is not MPI_THREAD_MULTIPLE: MPICH starts "
                                "no progress thread");
}

/* Whether a component list of Open MPI's (an MCA value: "a,b" includes,
 * "^a,b" excludes) lets component name be used. */
static int bb_mca_allows(const char *list, const char *name)
{
    if (list == NULL || *list == '\0')
        return 1;
    int exclude = *list == '^';
    const char *p = list + exclude;
    size_t n = strlen(name);
    int listed = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            listed = 1;
        p += len + (p[len] == ',');
    }
    return exclude ? !listed : listed;
}

int bb_ompi_tcp_carries(int hosts, const char *pml, const char *btl, char *why, size_t len)
{
    if (pml != NULL && *pml != '\0' && !bb_mca_allows(pml, "ob1")) {
        snprintf(why, len, "pml %s: messages go through it, not through ob1's BTLs "
                 "(the TCP BTL's thread moves nothing)", pml);
        return 0;
    }
    if (!bb_mca_allows(btl, "tcp")) {
        snprintf(why, len, "btl %s: the TCP BTL is not used", btl);
        return 0;
    }
    int shm = bb_mca_allows(btl, "vader") || bb_mca_allows(btl, "sm");
    if (hosts <= 1 && shm) {
        snprintf(why, len, "one host: ob1 moves messages between its ranks through shared "
                 "memory (vader), not TCP%s", pml == NULL || *pml == '\0'
                 ? ", or pml ucx takes them where it is chosen" : "");
        return 0;
    }
    snprintf(why, len, "%s: ob1 may carry messages over the TCP BTL (unless another pml, "
             "such as ucx, is chosen at run time)",
             hosts > 1 ? "ranks on more than one host" : "shared memory excluded by btl");
    return 1;
}

/* Open MPI: no progress thread for MPI messages; its threads are the
 * runtime's.  The TCP transport's own thread is the one exception, and
 * only where TCP carries the messages. */
static void bb_progress_open_mpi(cJSON *pc, int hosts)
{
    const char *tcp = getenv("OMPI_MCA_btl_tcp_progress_thread");
    int on = tcp != NULL && strcmp(tcp, "0") != 0;
    char why[256];
    int carries = bb_ompi_tcp_carries(hosts, getenv("OMPI_MCA_pml"), getenv("OMPI_MCA_btl"),
                                      why, sizeof why);
    cJSON_AddBoolToObject(pc, "async_progress_possible", on && carries);
    if (!on)
        cJSON_AddStringToObject(pc, "async_progress_possible_reason",
                                "btl_tcp_progress_thread is not set: no thread moves "
                                "messages outside MPI calls");
    else
        cJSON_AddStringToObject(pc, "async_progress_possible_reason", why);
    cJSON_AddStringToObject(pc, "explanation", "Open MPI has no asynchronous progress "
                            "thread for MPI messages (ompi_info: \"OMPI progress: no\"): "
                            "data moves only inside MPI calls (the polls), except through "
                            "the TCP BTL's own thread when btl_tcp_progress_thread is set "
                            "and TCP carries the messages. "
                            "The threads its MPI_Init starts are the runtime's (PMIx, "
                            "event loop for the launcher's messages), not message "
                            "progress; MPIR_CVAR_ASYNC_PROGRESS is MPICH's and not read");
    cJSON *v = cJSON_AddObjectToObject(pc, "btl_tcp_progress_thread");
    bb_json_add_or_null(v, "value", tcp, "OMPI_MCA_btl_tcp_progress_thread is not set: "
                        "Open MPI's default (0, no thread)");
}

cJSON *bb_progress_json(const bb_progress_ctx_t *ctx, const bb_progress_t *p)
{
    const bb_topology_info_t *topo = ctx->topology;
    int provided = ctx->thread_provided;
    cJSON *pc = cJSON_CreateObject();
    if (pc == NULL)
        return NULL;
    cJSON_AddStringToObject(pc, "library", bb_library_names[p->library]);
    /* Kept under every library so that records compare member by member;
     * the reason says whose variable it is. */
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    cJSON *aq = cJSON_AddObjectToObject(pc, "MPIR_CVAR_ASYNC_PROGRESS");
    if (async != NULL) {
        cJSON_AddStringToObject(aq, "value", async);
        cJSON_AddNullToObject(aq, "reason");
        if (p->library != BB_MPI_MPICH)
            cJSON_AddStringToObject(aq, "note", "MPICH's variable: this library does "
                                    "not read it");
    } else {
        cJSON_AddNullToObject(aq, "value");
        cJSON_AddStringToObject(aq, "reason", p->library == BB_MPI_MPICH
                                ? "MPIR_CVAR_ASYNC_PROGRESS is not set in the environment: "
                                  "MPICH's default (no progress thread)"
                                : "MPIR_CVAR_ASYNC_PROGRESS is not set (MPICH's variable; "
                                  "this library does not read it)");
    }
    cJSON_AddStringToObject(pc, "thread_level_requested",
                            bb_thread_level_name(ctx->thread_requested));
    cJSON_AddStringToObject(pc, "thread_level_provided", bb_thread_level_name(provided));
    if (p->library == BB_MPI_MPICH)
        bb_progress_mpich(pc, provided);
    else if (p->library == BB_MPI_OPEN_MPI)
        bb_progress_open_mpi(pc, topo->hosts);
    else {
        cJSON_AddNullToObject(pc, "async_progress_possible");
        cJSON_AddStringToObject(pc, "async_progress_possible_reason", "bbench does not "
                                "know how this MPI library makes progress");
    }
    if (topo->cores_per_host > 0)
        cJSON_AddNumberToObject(pc, "ranks_per_core",
                                (double)topo->max_ranks_per_host / topo->cores_per_host);
    else
        cJSON_AddNullToObject(pc, "ranks_per_core");
    cJSON_AddNumberToObject(pc, "max_ranks_per_host", topo->max_ranks_per_host);
    cJSON_AddNumberToObject(pc, "cores_per_host", topo->cores_per_host);
    cJSON_AddBoolToObject(pc, "oversubscribed", topo->oversubscribed);
    cJSON *t = cJSON_AddObjectToObject(pc, "process_threads");
    if (p->threads[0] > 0) {
        cJSON_AddNumberToObject(t, "min_rank", p->threads[0]);
        cJSON_AddNumberToObject(t, "max_rank", p->threads[1]);
        if (p->threads_before[0] > 0) {
            cJSON_AddNumberToObject(t, "before_init_min_rank", p->threads_before[0]);
            cJSON_AddNumberToObject(t, "before_init_max_rank", p->threads_before[1]);
        }
        cJSON_AddStringToObject(t, "source", p->library == BB_MPI_MPICH
            ? "/proc/self/status Threads before and after MPI initialization, idle helper "
              "threads included: an MPICH progress thread is one more than without it"
            : p->library == BB_MPI_OPEN_MPI
            ? "/proc/self/status Threads before and after MPI initialization, idle helper "
              "threads included: Open MPI's are its runtime's, none progresses messages "
              "unless btl_tcp_progress_thread is set"
            : "/proc/self/status Threads before and after MPI initialization, idle helper "
              "threads included: what they do is not known");
        if (topo->cores_per_host > 0)
            /* All threads, idle ones included: an upper bound on the busy
             * threads per core. */
            cJSON_AddNumberToObject(pc, "threads_per_core",
                                    (double)topo->max_ranks_per_host * p->threads[1]
                                        / (double)topo->cores_per_host);
    } else {
        cJSON_AddNullToObject(t, "value");
        cJSON_AddStringToObject(t, "reason", "/proc/self/status unreadable on some rank");
    }
    cJSON_AddStringToObject(pc, "note", "an asynchronous progress thread needs a core: "
                            "with a rank per core or more it competes with the compute "
                            "(see overlap.compute_slowdown)");
    return pc;
}
