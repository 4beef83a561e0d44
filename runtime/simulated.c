/* simulated.c: what a record says about simulation (doc/simulate.md).
 *
 * An ordinary build measures real hosts: runtime.simulated is null with a
 * reason.  An SMPI build (configure --with-smpi, BB_SMPI) runs every rank
 * as a simulated process inside one SimGrid process on this host, so the
 * parts of the record that describe the hosts would describe the
 * simulator instead: they are replaced here, on rank 0, before the record
 * is written.
 *  - runtime.simulated: the simulator and its version, the platform file
 *    and its SHA-256 and the SMPI configuration (given by bbench-smpirun in
 *    BB_SMPI_PLATFORM, BB_SMPI_PLATFORM_SHA256, BB_SMPI_CONFIG: smpirun
 *    passes them to the simulator, not to the program), the platform's host
 *    count (SimGrid's own API) and the work-arounds the build applies;
 *  - topology: the hosts are the platform's (MPI_Get_processor_name names
 *    the simulated host), each its own machine with the platform's cores;
 *    no hwloc summary, cpusets, binding or oversubscription verdict;
 *  - runtime.launcher: null (smpirun is not an MPI launcher of processes);
 *  - memory.rss_*: null (the resident set is the simulator's, all ranks).
 * The "system" member still describes the host that ran the simulation,
 * which runtime.simulated says. */
#include "config.h"
#include "bench.h"
#include "private/mpi-compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BB_SMPI
#include <simgrid/host.h>
#include <simgrid/version.h>
#endif

int bb_simulated(void)
{
#ifdef BB_SMPI
    return 1;
#else
    return 0;
#endif
}

#ifndef BB_SMPI

void bb_simulated_runtime(cJSON *runtime)
{
    cJSON_AddNullToObject(runtime, "simulated");
    cJSON_AddStringToObject(runtime, "simulated_reason",
                            "not simulated: measured on the hosts in topology");
}

void bb_simulated_topology(cJSON *topology, bb_topology_info_t *info)
{
    (void)topology;
    (void)info;
}

void bb_simulated_points(cJSON *record)
{
    (void)record;
}

#else

/* BB_SMPI_CONFIG: the --cfg=NAME:VALUE words, space-separated; NULL when
 * unset (not launched by bbench-smpirun). */
static cJSON *simulated_config(void)
{
    const char *p = getenv("BB_SMPI_CONFIG");
    if (p == NULL)
        return NULL;
    cJSON *list = cJSON_CreateArray();
    while (list != NULL) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        char *word = malloc(n + 1);
        if (word == NULL)
            break;
        memcpy(word, p, n);
        word[n] = '\0';
        cJSON_AddItemToArray(list, cJSON_CreateString(word));
        free(word);
        p += n;
    }
    return list;
}

void bb_simulated_runtime(cJSON *runtime)
{
    cJSON *sim = cJSON_CreateObject();
    if (sim == NULL)
        return;
    int major = 0, minor = 0, patch = 0;
    char version[64];
    sg_version_get(&major, &minor, &patch);
    snprintf(version, sizeof version, "%d.%d.%d", major, minor, patch);
    cJSON_AddStringToObject(sim, "simulator", "SimGrid SMPI");
    cJSON_AddStringToObject(sim, "version", version);
    cJSON_AddStringToObject(sim, "built_with", BB_SMPI_VERSION_STRING);

    const char *why = "launched without bbench-smpirun: smpirun gives the platform and "
                      "configuration to the simulator, not to the program";
    const char *file = getenv("BB_SMPI_PLATFORM");
    const char *sha = getenv("BB_SMPI_PLATFORM_SHA256");
    cJSON *pf = cJSON_AddObjectToObject(sim, "platform");
    if (pf != NULL) {
        bb_json_add_or_null(pf, "file", file, why);
        bb_json_add_or_null(pf, "sha256", sha, why);
        cJSON_AddNumberToObject(pf, "hosts", (double)sg_host_count());
    }
    cJSON *cfg = simulated_config();
    if (cfg != NULL) {
        cJSON_AddItemToObject(sim, "configuration", cfg);
    } else {
        cJSON_AddNullToObject(sim, "configuration");
        cJSON_AddStringToObject(sim, "configuration_reason", why);
    }
    cJSON_AddStringToObject(sim, "timer", "simulated time: SMPI replaces clock_gettime "
                            "and MPI_Wtime in the programs");
    cJSON_AddStringToObject(sim, "work_arounds", BB_SMPI_THREAD_NOTE);
    cJSON_AddStringToObject(sim, "system", "the member system describes the host that "
                            "ran the simulation, not the platform");
    cJSON_AddItemToObject(runtime, "simulated", sim);

    cJSON_DeleteItemFromObjectCaseSensitive(runtime, "launcher");
    cJSON_AddNullToObject(runtime, "launcher");
    cJSON_AddStringToObject(runtime, "launcher_reason",
                            "simulated: smpirun runs every rank in one process of this host");
}

static void replace_null(cJSON *o, const char *name, const char *reason_name,
                         const char *reason)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, name);
    cJSON_AddNullToObject(o, name);
    if (reason_name != NULL) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, reason_name);
        cJSON_AddStringToObject(o, reason_name, reason);
    }
}

/* Rank 0 (topology non-NULL) rewrites the member; every rank its info. */
void bb_simulated_topology(cJSON *topology, bb_topology_info_t *info)
{
    const char *host_why = "simulated: hwloc would describe the host that runs the "
                           "simulation, not the platform's";
    info->oversubscribed = 0;
    info->machines = info->hosts;
    info->max_ranks_per_machine = info->max_ranks_per_host;
    sg_host_t self = sg_host_self();
    info->cores_per_host = self != NULL ? sg_host_core_count(self) : -1;
    info->pus_per_host = -1;
    if (topology == NULL)
        return;
    replace_null(topology, "oversubscribed", "oversubscribed_reason",
                 "simulated: each simulated host runs its ranks on the platform's cores");
    replace_null(topology, "ranks_per_core", NULL, NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(topology, "machines",
                                           cJSON_CreateNumber(info->hosts));
    cJSON_ReplaceItemInObjectCaseSensitive(topology, "max_ranks_per_machine",
                                           cJSON_CreateNumber(info->max_ranks_per_host));
    replace_null(topology, "machine", "machine_reason", host_why);
    int m = 0;
    cJSON *h;
    cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(topology, "per_host")) {
        cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "host");
        sg_host_t sh = cJSON_IsString(name) ? sg_host_by_name(name->valuestring) : NULL;
        cJSON_ReplaceItemInObjectCaseSensitive(h, "machine", cJSON_CreateNumber(m++));
        if (sh != NULL)
            cJSON_ReplaceItemInObjectCaseSensitive(h, "cores",
                                                   cJSON_CreateNumber(sg_host_core_count(sh)));
        else
            replace_null(h, "cores", NULL, NULL);
        replace_null(h, "pus", NULL, NULL);
    }
    cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(topology, "per_rank")) {
        replace_null(r, "cpuset", "reason", host_why);
        replace_null(r, "bound", NULL, NULL);
        cJSON_DeleteItemFromObjectCaseSensitive(r, "bound_to");
        cJSON_DeleteItemFromObjectCaseSensitive(r, "cpuset_truncated");
    }
}

static void null_rss(cJSON *quantities)
{
    cJSON *q;
    cJSON_ArrayForEach(q, quantities) {
        if (q->string == NULL || strncmp(q->string, "memory.rss", 10) != 0)
            continue;
        replace_null(q, "value", "reason",
                     "simulated: the resident set is the simulator's, all ranks in one "
                     "process");
        cJSON_DeleteItemFromObjectCaseSensitive(q, "samples");
        cJSON_DeleteItemFromObjectCaseSensitive(q, "median");
        cJSON_DeleteItemFromObjectCaseSensitive(q, "range");
    }
}

void bb_simulated_points(cJSON *record)
{
    cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(record, "points")) {
        null_rss(cJSON_GetObjectItemCaseSensitive(p, "quantities"));
        null_rss(cJSON_GetObjectItemCaseSensitive(p, "first_call"));
    }
}

#endif
