/* topo.c: provenance of a run: the MPI runtime, timer and environment, and
 * the machine (hwloc) with each rank's host and binding.  Also the process
 * memory figures (RSS) used by the memory quantities.
 *
 * hwloc failures never abort a run: the affected fields become null with a
 * reason, because a benchmark without a topology is still a benchmark. */
#include "config.h"
#include "private/bbtext.h"
#include "bench.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

/* Per-rank data gathered to rank 0: fixed size and pointer-free, so one
 * MPI_Gather of bytes carries it (every rank runs the same binary). */
#define BB_CPUSET_LEN 256
#define BB_REASON_LEN 96
typedef struct bb_rank_info {
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    char cpuset[BB_CPUSET_LEN];  /* "" when unknown (reason says why) */
    char reason[BB_REASON_LEN];  /* why cpuset/cores are unknown, or "" */
    char boot_id[40];            /* the kernel's boot id, "" unknown */
    char bound_to[16];           /* "core", ... (bb_binding_name), "" unknown */
    int32_t cpuset_truncated;
    int32_t bound;               /* 1, 0, or -1 unknown */
    int32_t cores, pus;          /* hwloc counts of this host, -1 unknown */
    int32_t threads;             /* OMP_NUM_THREADS or 1 */
} bb_rank_info_t;

/* What rank 0 broadcasts so that every rank has bb_topology_info_t. */
enum {
    BB_TI_STATUS, BB_TI_HOSTS, BB_TI_MAX_PER_HOST, BB_TI_CORES, BB_TI_PUS,
    BB_TI_THREADS, BB_TI_OVERSUB, BB_TI_MACHINES, BB_TI_MAX_PER_MACHINE,
    BB_TI_FIELDS
};

/* ------------------------------------------------------------------------ */
/* Runtime                                                                  */
/* ------------------------------------------------------------------------ */

static int bb_env_selected(const char *name, size_t namelen)
{
    static const char suffix[] = "_NUM_THREADS";
    size_t sl = sizeof suffix - 1;
    return strncmp(name, "MPIR_CVAR_", 10) == 0 || strncmp(name, "UCX_", 4) == 0
           || (namelen >= sl && memcmp(name + namelen - sl, suffix, sl) == 0);
}

static int bb_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The variables that change how MPI and threads behave, sorted by name so
 * that two records of the same setup compare equal. */
static cJSON *bb_env_json(void)
{
    cJSON *env = cJSON_CreateObject();
    size_t n = 0, k = 0;
    if (env == NULL)
        return NULL;
    for (char **e = environ; e != NULL && *e != NULL; e++)
        n++;
    const char **sel = calloc(n ? n : 1, sizeof *sel);
    if (sel == NULL) {
        cJSON_Delete(env);
        return NULL;
    }
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (eq != NULL && bb_env_selected(*e, (size_t)(eq - *e)))
            sel[k++] = *e;
    }
    qsort(sel, k, sizeof *sel, bb_cmp_str);
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(sel[i], '=');
        size_t nl = (size_t)(eq - sel[i]);
        /* A name that is not UTF-8 is no variable MPI, UCX or a runtime
         * reads, and two such names would become the same member once the
         * record is made UTF-8.  Values are kept (made UTF-8 on writing). */
        if (bb_utf8_invalid_at(sel[i], nl) < nl)
            continue;
        char *name = malloc(nl + 1);
        if (name == NULL)
            continue;
        memcpy(name, sel[i], nl);
        name[nl] = '\0';
        /* The launcher's rule (launcher.c): a secret-looking name keeps
         * its name only. */
        cJSON_AddItemToObject(env, name, cJSON_CreateString(bb_name_is_secret(name, nl)
                                                                ? BB_REDACTED : eq + 1));
        free(name);
    }
    free(sel);
    return env;
}

static void bb_trim_right(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'
                     || s[n - 1] == '\r'))
        s[--n] = '\0';
}

/* The cost of one clock read: the best of five runs of 1000 reads back to
 * back (what a part within a few reads of zero is noted against). */
static double clock_read_s(void)
{
    double best = -1.0;
    for (int t = 0; t < 5; t++) {
        double t0 = bb_time_now(), t1 = t0;
        for (int i = 0; i < 1000; i++)
            t1 = bb_time_now();
        double per = (t1 - t0) / 1000.0;
        if (best < 0.0 || per < best)
            best = per;
    }
    return best;
}

static cJSON *bb_runtime_json(int requested, int provided)
{
    cJSON *rt = cJSON_CreateObject();
    if (rt == NULL)
        return NULL;
    int major = 0, minor = 0, len = 0;
    char std[32];
    MPI_Get_version(&major, &minor);
    snprintf(std, sizeof std, "%d.%d", major, minor);
    cJSON_AddStringToObject(rt, "mpi_standard", std);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    lib[0] = '\0';
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
        lib[len < 0 ? 0 : (len > MPI_MAX_LIBRARY_VERSION_STRING
                               ? MPI_MAX_LIBRARY_VERSION_STRING : len)] = '\0';
        bb_trim_right(lib);
        cJSON_AddStringToObject(rt, "mpi_library", lib);
    } else {
        cJSON_AddNullToObject(rt, "mpi_library");
        cJSON_AddStringToObject(rt, "mpi_library_reason",
                                "MPI_Get_library_version failed");
    }
    cJSON_AddStringToObject(rt, "thread_level_requested",
                            bb_thread_level_name(requested));
    cJSON_AddStringToObject(rt, "thread_level_provided",
                            bb_thread_level_name(provided));

    cJSON *timer = cJSON_CreateObject();
    if (timer != NULL) {
        cJSON_AddStringToObject(timer, "source", "clock_gettime(CLOCK_MONOTONIC)");
        double res = bb_time_resolution();
        if (res > 0.0)
            cJSON_AddNumberToObject(timer, "resolution_s", res);
        else
            cJSON_AddNullToObject(timer, "resolution_s");
        /* Each rank reads its own clock; times are compared only as
         * per-rank durations, a sample's taken from its slowest rank. */
        cJSON_AddFalseToObject(timer, "is_global");
        cJSON_AddNumberToObject(timer, "mpi_wtick", MPI_Wtick());
        cJSON_AddNumberToObject(timer, "read_s", clock_read_s());
        cJSON_AddItemToObject(rt, "timer", timer);
    }
    cJSON_AddItemToObject(rt, "env", bb_env_json());
    return rt;
}

/* ------------------------------------------------------------------------ */
/* Topology                                                                 */
/* ------------------------------------------------------------------------ */

static int32_t bb_threads_per_rank(void)
{
    const char *s = getenv("OMP_NUM_THREADS");
    if (s == NULL || *s < '0' || *s > '9')
        return 1;
    /* A nested list such as "4,2" gives the outer level first. */
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || v < 1 || v > INT32_MAX || (*end != '\0' && *end != ','))
        return 1;
    return (int32_t)v;
}

/* hwloc summary of this host: counts and caches (rank 0 builds the JSON). */
static cJSON *bb_machine_json(hwloc_topology_t topo)
{
    cJSON *m = cJSON_CreateObject();
    if (m == NULL)
        return NULL;
    cJSON_AddNumberToObject(m, "packages",
                            hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
    cJSON_AddNumberToObject(m, "numa",
                            hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
    cJSON_AddNumberToObject(m, "cores",
                            hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    cJSON_AddNumberToObject(m, "pus",
                            hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));

    static const hwloc_obj_type_t cache_types[] = {
        HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE,
        HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE,
        HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE
    };
    cJSON *caches = cJSON_CreateArray();
    for (size_t i = 0; caches != NULL && i < sizeof cache_types / sizeof cache_types[0];
         i++) {
        int n = hwloc_get_nbobjs_by_type(topo, cache_types[i]);
        hwloc_obj_t obj = n > 0 ? hwloc_get_obj_by_type(topo, cache_types[i], 0)
                                : NULL;
        if (obj == NULL || obj->attr == NULL)
            continue;
        cJSON *c = cJSON_CreateObject();
        if (c == NULL)
            continue;
        cJSON_AddNumberToObject(c, "level", obj->attr->cache.depth);
        const char *kind = obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION
                               ? "instruction"
                               : obj->attr->cache.type == HWLOC_OBJ_CACHE_DATA
                                     ? "data" : "unified";
        cJSON_AddStringToObject(c, "type", kind);
        cJSON_AddNumberToObject(c, "size", (double)obj->attr->cache.size);
        cJSON_AddNumberToObject(c, "linesize", obj->attr->cache.linesize);
        cJSON_AddNumberToObject(c, "count", n);
        cJSON_AddItemToArray(caches, c);
    }
    cJSON_AddItemToObject(m, "caches", caches);

    char ver[32];
    unsigned api = hwloc_get_api_version();
    snprintf(ver, sizeof ver, "%u.%u.%u", (api >> 16) & 0xff, (api >> 8) & 0xff,
             api & 0xff);
    cJSON_AddStringToObject(m, "hwloc_api_version", ver);
    return m;
}

/* What a binding is in the launchers' words: "none" when set holds every
 * allowed PU, else the kind of one object whose cpuset is exactly set
 * (core before hwthread: on a machine without SMT both are the same),
 * else "cpuset". */
static const char *bb_binding_name(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                                   int bound)
{
    static const struct {
        hwloc_obj_type_t type;
        const char *name;
    } kinds[] = {{HWLOC_OBJ_CORE, "core"}, {HWLOC_OBJ_PU, "hwthread"},
                 {HWLOC_OBJ_PACKAGE, "package"}, {HWLOC_OBJ_NUMANODE, "numa"}};
    if (!bound)
        return "none";
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        hwloc_obj_t obj = NULL;
        while ((obj = hwloc_get_next_obj_by_type(topo, kinds[k].type, obj)) != NULL)
            if (obj->cpuset != NULL && hwloc_bitmap_isequal(obj->cpuset, set))
                return kinds[k].name;
    }
    return "cpuset";
}

/* Fill this rank's binding and counts; on hwloc failure the reason. */
static void bb_local_hwloc(hwloc_topology_t topo, int loaded, bb_rank_info_t *me)
{
    me->bound = -1;
    me->cores = me->pus = -1;
    if (!loaded) {
        snprintf(me->reason, sizeof me->reason, "hwloc topology load failed");
        return;
    }
    me->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    me->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (me->cores < 1)
        me->cores = -1;
    if (me->pus < 1)
        me->pus = -1;

    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL) {
        snprintf(me->reason, sizeof me->reason, "hwloc_bitmap_alloc failed");
        return;
    }
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0) {
        snprintf(me->reason, sizeof me->reason, "hwloc_get_cpubind: %s",
                 strerror(errno));
        goto free_set;
    }
    char *list = NULL;
    if (hwloc_bitmap_list_asprintf(&list, set) < 0 || list == NULL) {
        snprintf(me->reason, sizeof me->reason, "hwloc_bitmap_list_asprintf failed");
        goto free_set;
    }
    size_t n = strlen(list);
    me->cpuset_truncated = n >= sizeof me->cpuset;
    memcpy(me->cpuset, list, me->cpuset_truncated ? sizeof me->cpuset - 1 : n);
    me->cpuset[me->cpuset_truncated ? sizeof me->cpuset - 1 : n] = '\0';
    free(list);
    /* Bound: the process may run on fewer PUs than the machine allows. */
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    me->bound = (allowed != NULL && !hwloc_bitmap_isincluded(allowed, set)) ? 1 : 0;
    snprintf(me->bound_to, sizeof me->bound_to, "%s", bb_binding_name(topo, set, me->bound));
free_set:
    hwloc_bitmap_free(set);
}

/* The machine of a rank: its kernel's boot id, or its host name when the
 * boot id is unknown. */
static const char *bb_machine_key(const bb_rank_info_t *r)
{
    return r->boot_id[0] != '\0' ? r->boot_id : r->host;
}

/* Rank 0: the ranks of the machine of rank `first` can run at once on at
 * most this many places: its cores, or fewer when the ranks are pinned to
 * fewer PUs (the union of their cpusets).  -1 when the cores are unknown.
 * A rank whose cpuset is unknown or truncated leaves the core count. */
static int bb_machine_slots(const bb_rank_info_t *all, int size, int first)
{
    int cores = all[first].cores;
    if (cores < 1)
        return -1;
    const char *key = bb_machine_key(&all[first]);
    hwloc_bitmap_t uni = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    int slots = cores, known = uni != NULL && one != NULL;
    for (int r = 0; known && r < size; r++) {
        if (strcmp(bb_machine_key(&all[r]), key) != 0)
            continue;
        if (all[r].cpuset[0] == '\0' || all[r].cpuset_truncated
            || hwloc_bitmap_list_sscanf(one, all[r].cpuset) != 0)
            known = 0;
        else
            hwloc_bitmap_or(uni, uni, one);
    }
    if (known) {
        int pus = hwloc_bitmap_weight(uni);
        if (pus >= 1 && pus < slots)
            slots = pus;
    }
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(uni);
    return slots;
}

/* Rank 0: hosts, ranks per host and oversubscription from the gathered
 * per-rank data.  Hosts are identified by processor name; oversubscription
 * is judged per machine (hosts with one boot id share one set of cores),
 * machine_of[h] numbering each host's machine from 0. */
static void bb_count_hosts(const bb_rank_info_t *all, int size, int *first_of,
                           int *ranks_on, int *machine_of, int64_t *ti)
{
    int hosts = 0, max_per = 0, oversub = 0, unknown = 0, threads = 1;
    for (int r = 0; r < size; r++) {
        int h = 0;
        for (; h < hosts; h++)
            if (strcmp(all[first_of[h]].host, all[r].host) == 0)
                break;
        if (h == hosts) {
            first_of[hosts] = r;
            ranks_on[hosts] = 0;
            hosts++;
        }
        ranks_on[h]++;
        if (all[r].threads > threads)
            threads = all[r].threads;
    }
    int machines = 0, max_per_machine = 0;
    for (int h = 0; h < hosts; h++) {
        if (ranks_on[h] > max_per)
            max_per = ranks_on[h];
        int m = 0;
        for (; m < h; m++)
            if (strcmp(bb_machine_key(&all[first_of[m]]),
                       bb_machine_key(&all[first_of[h]])) == 0)
                break;
        machine_of[h] = m < h ? machine_of[m] : machines++;
    }
    for (int m = 0; m < machines; m++) {
        int ranks = 0, first = -1;
        for (int h = 0; h < hosts; h++) {
            if (machine_of[h] != m)
                continue;
            ranks += ranks_on[h];
            if (first < 0)
                first = first_of[h];
        }
        int cores = first >= 0 ? bb_machine_slots(all, size, first) : -1;
        if (ranks > max_per_machine)
            max_per_machine = ranks;
        if (cores < 1)
            unknown = 1;
        else if (ranks > cores)
            oversub = 1;
    }
    ti[BB_TI_HOSTS] = hosts;
    ti[BB_TI_MAX_PER_HOST] = max_per;
    ti[BB_TI_CORES] = all[0].cores;
    ti[BB_TI_PUS] = all[0].pus;
    ti[BB_TI_THREADS] = threads;
    ti[BB_TI_MACHINES] = machines;
    ti[BB_TI_MAX_PER_MACHINE] = max_per_machine;
    /* -1: some machine's core count is unknown and none is known to be
     * oversubscribed. */
    ti[BB_TI_OVERSUB] = oversub ? 1 : (unknown ? -1 : 0);
}

static cJSON *bb_topology_json(const bb_rank_info_t *all, int size,
                               const int *first_of, const int *ranks_on,
                               const int *machine_of, const int64_t *ti, cJSON *machine,
                               const char *machine_reason)
{
    cJSON *t = cJSON_CreateObject();
    if (t == NULL) {
        cJSON_Delete(machine);
        return NULL;
    }
    int hosts = (int)ti[BB_TI_HOSTS];
    cJSON_AddNumberToObject(t, "ranks", size);
    cJSON_AddNumberToObject(t, "hosts", hosts);
    cJSON_AddNumberToObject(t, "threads_per_rank", (double)ti[BB_TI_THREADS]);
    cJSON_AddNumberToObject(t, "max_ranks_per_host", (double)ti[BB_TI_MAX_PER_HOST]);
    cJSON_AddNumberToObject(t, "machines", (double)ti[BB_TI_MACHINES]);
    cJSON_AddNumberToObject(t, "max_ranks_per_machine", (double)ti[BB_TI_MAX_PER_MACHINE]);

    /* The busiest machine relative to the places its ranks may use. */
    double per_core = -1.0;
    for (int m = 0; m < (int)ti[BB_TI_MACHINES]; m++) {
        int ranks = 0, first = -1;
        for (int h = 0; h < hosts; h++) {
            if (machine_of[h] == m) {
                ranks += ranks_on[h];
                if (first < 0)
                    first = first_of[h];
            }
        }
        int cores = first >= 0 ? bb_machine_slots(all, size, first) : -1;
        if (cores >= 1 && (double)ranks / cores > per_core)
            per_core = (double)ranks / cores;
    }
    if (ti[BB_TI_OVERSUB] < 0) {
        cJSON_AddNullToObject(t, "oversubscribed");
        cJSON_AddStringToObject(t, "oversubscribed_reason",
                                "hwloc core count unknown on some machine");
        cJSON_AddNullToObject(t, "ranks_per_core");
    } else {
        cJSON_AddBoolToObject(t, "oversubscribed", ti[BB_TI_OVERSUB] != 0);
        cJSON_AddNumberToObject(t, "ranks_per_core", per_core);
    }

    if (machine != NULL) {
        cJSON_AddItemToObject(t, "machine", machine);
    } else {
        cJSON_AddNullToObject(t, "machine");
        cJSON_AddStringToObject(t, "machine_reason", machine_reason);
    }

    cJSON *ph = cJSON_CreateArray();
    for (int h = 0; ph != NULL && h < hosts; h++) {
        const bb_rank_info_t *f = &all[first_of[h]];
        cJSON *o = cJSON_CreateObject();
        if (o == NULL)
            continue;
        cJSON_AddStringToObject(o, "host", f->host);
        cJSON_AddNumberToObject(o, "machine", machine_of[h]);
        cJSON_AddNumberToObject(o, "ranks", ranks_on[h]);
        if (f->cores >= 1)
            cJSON_AddNumberToObject(o, "cores", f->cores);
        else
            cJSON_AddNullToObject(o, "cores");
        if (f->pus >= 1)
            cJSON_AddNumberToObject(o, "pus", f->pus);
        else
            cJSON_AddNullToObject(o, "pus");
        cJSON_AddItemToArray(ph, o);
    }
    cJSON_AddItemToObject(t, "per_host", ph);

    cJSON *pr = cJSON_CreateArray();
    for (int r = 0; pr != NULL && r < size; r++) {
        const bb_rank_info_t *a = &all[r];
        cJSON *o = cJSON_CreateObject();
        if (o == NULL)
            continue;
        cJSON_AddNumberToObject(o, "rank", r);
        cJSON_AddStringToObject(o, "host", a->host);
        if (a->cpuset[0] != '\0') {
            cJSON_AddStringToObject(o, "cpuset", a->cpuset);
            if (a->cpuset_truncated)
                cJSON_AddTrueToObject(o, "cpuset_truncated");
        } else {
            cJSON_AddNullToObject(o, "cpuset");
        }
        if (a->bound >= 0)
            cJSON_AddBoolToObject(o, "bound", a->bound);
        else
            cJSON_AddNullToObject(o, "bound");
        if (a->bound_to[0] != '\0')
            cJSON_AddStringToObject(o, "bound_to", a->bound_to);
        if (a->reason[0] != '\0')
            cJSON_AddStringToObject(o, "reason", a->reason);
        cJSON_AddItemToArray(pr, o);
    }
    cJSON_AddItemToObject(t, "per_rank", pr);
    return t;
}

bb_status_t bb_provenance_capture(bb_world_t *world, int thread_requested,
                                  cJSON **runtime_out, cJSON **topology_out,
                                  bb_topology_info_t *info_out)
{
    if (world == NULL || info_out == NULL)
        return BB_ERR_ARG;
    bb_status_t st = bb_world_check_owner(world);
    if (st != BB_OK)
        return st;
    if (runtime_out != NULL)
        *runtime_out = NULL;
    if (topology_out != NULL)
        *topology_out = NULL;

    MPI_Comm comm = bb_world_comm(world);
    int rank = bb_world_rank(world), size = bb_world_size(world);
    bb_rank_info_t me;
    bb_rank_info_t *all = NULL;
    int *first_of = NULL, *ranks_on = NULL, *machine_of = NULL;
    int64_t ti[BB_TI_FIELDS] = {0};
    cJSON *machine = NULL;
    const char *machine_reason = "hwloc topology could not be loaded";

    memset(&me, 0, sizeof me);
    int len = 0;
    if (MPI_Get_processor_name(me.host, &len) != MPI_SUCCESS || len <= 0)
        snprintf(me.host, sizeof me.host, "unknown");
    me.host[sizeof me.host - 1] = '\0';
    me.threads = bb_threads_per_rank();
    /* Network or UTS namespaces make several hosts of one kernel. */
    FILE *boot = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (boot != NULL) {
        if (fgets(me.boot_id, sizeof me.boot_id, boot) == NULL)
            me.boot_id[0] = '\0';
        me.boot_id[strcspn(me.boot_id, "\n")] = '\0';
        fclose(boot);
    }

    hwloc_topology_t topo;
    int have_topo = hwloc_topology_init(&topo) == 0;
    int loaded = have_topo && hwloc_topology_load(topo) == 0;
    bb_local_hwloc(topo, loaded, &me);
    if (rank == 0 && loaded) {
        machine = bb_machine_json(topo);
        if (machine == NULL)
            machine_reason = "out of memory building the machine summary";
    }
    if (have_topo)
        hwloc_topology_destroy(topo);

    /* Rank 0 says whether it could allocate the gather buffers, so that
     * nobody enters a gather that rank 0 cannot receive. */
    int ready = 1;
    if (rank == 0) {
        all = calloc((size_t)size, sizeof *all);
        first_of = calloc((size_t)size, sizeof *first_of);
        ranks_on = calloc((size_t)size, sizeof *ranks_on);
        machine_of = calloc((size_t)size, sizeof *machine_of);
        ready = all != NULL && first_of != NULL && ranks_on != NULL && machine_of != NULL;
    }
    if (MPI_Bcast(&ready, 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
        st = BB_ERR_MPI;
        goto free_all;
    }
    if (!ready) {
        st = BB_ERR_NOMEM;
        goto free_all;
    }
    if (MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE,
                   0, comm) != MPI_SUCCESS) {
        st = BB_ERR_MPI;
        goto free_all;
    }
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            /* Terminate strings whatever the peer sent. */
            all[r].host[sizeof all[r].host - 1] = '\0';
            all[r].cpuset[sizeof all[r].cpuset - 1] = '\0';
            all[r].reason[sizeof all[r].reason - 1] = '\0';
            all[r].boot_id[sizeof all[r].boot_id - 1] = '\0';
            all[r].bound_to[sizeof all[r].bound_to - 1] = '\0';
        }
        bb_count_hosts(all, size, first_of, ranks_on, machine_of, ti);
        ti[BB_TI_STATUS] = BB_OK;
    }
    if (MPI_Bcast(ti, BB_TI_FIELDS, MPI_INT64_T, 0, comm) != MPI_SUCCESS) {
        st = BB_ERR_MPI;
        goto free_all;
    }

    info_out->ranks = size;
    info_out->hosts = (int)ti[BB_TI_HOSTS];
    info_out->max_ranks_per_host = (int)ti[BB_TI_MAX_PER_HOST];
    info_out->cores_per_host = (int)ti[BB_TI_CORES];
    info_out->pus_per_host = (int)ti[BB_TI_PUS];
    info_out->threads_per_rank = (int)ti[BB_TI_THREADS];
    info_out->oversubscribed = ti[BB_TI_OVERSUB] > 0;
    info_out->machines = (int)ti[BB_TI_MACHINES];
    info_out->max_ranks_per_machine = (int)ti[BB_TI_MAX_PER_MACHINE];

    if (rank == 0) {
        cJSON *rt = runtime_out ? bb_runtime_json(thread_requested,
                                                  bb_world_thread_level(world))
                                : NULL;
        cJSON *tp = NULL;
        if (topology_out != NULL) {
            tp = bb_topology_json(all, size, first_of, ranks_on, machine_of, ti, machine,
                                  machine_reason);
            machine = NULL; /* owned by tp, or freed */
        }
        if ((runtime_out != NULL && rt == NULL)
            || (topology_out != NULL && tp == NULL)) {
            cJSON_Delete(rt);
            cJSON_Delete(tp);
            st = BB_ERR_NOMEM;
            goto free_all;
        }
        if (runtime_out != NULL)
            *runtime_out = rt;
        if (topology_out != NULL)
            *topology_out = tp;
    }
    st = BB_OK;

free_all:
    cJSON_Delete(machine);
    free(machine_of);
    free(ranks_on);
    free(first_of);
    free(all);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

int64_t bb_rss_peak_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0)
        return -1;
    return (int64_t)ru.ru_maxrss * 1024; /* Linux reports KiB */
}

int64_t bb_rss_current_bytes(void)
{
    char line[128];
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    if (got == NULL)
        return -1;
    /* "size resident shared ..." in pages: the second field. */
    char *end = NULL;
    errno = 0;
    (void)strtoll(line, &end, 10);
    if (errno != 0 || end == line)
        return -1;
    char *p = end;
    errno = 0;
    long long resident = strtoll(p, &end, 10);
    long page = sysconf(_SC_PAGESIZE);
    if (errno != 0 || end == p || resident < 0 || page <= 0)
        return -1;
    return (int64_t)resident * page;
}
