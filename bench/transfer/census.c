/* census.c: the census of bbench-transfer's protocol rows: each
 * rank's counted bytes and request credit, gathered on rank 0 and held
 * against the bound the library documents. */
#include "config.h"
#include "transfer-ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bb_xfer_role(int r, int source, int destination)
{
    if (r == source && r == destination)
        return BB_TRANSFER_ROLE_SAME_RANK;
    if (r == source)
        return BB_TRANSFER_ROLE_SOURCE;
    if (r == destination)
        return BB_TRANSFER_ROLE_DESTINATION;
    return BB_TRANSFER_ROLE_NONE;
}

/* Fresh buffers: a data rank holds its control bytes (232 spec, the
 * document's census; 520 fused and fused-op) + nbytes during a ticket and
 * nothing between, any other rank its control bytes; retained:
 * those + the largest cap presented (its buffer's capacity) during one and
 * at most that cap between. */
void bb_xfer_census_gather(const bb_xfer_ref_t *ref, const bb_tally_t *tally,
                           const bb_phase_attr_t *attr, int64_t tracked_between,
                           int64_t bound_payload, bb_xfer_census_t *cs_out)
{
    bb_xfer_census_t *cs = cs_out;
    int retained = attr->buffers == BB_BUFFERS_RETAINED;
    int size = bb_run_size(ref->run);
    int64_t mine[BB_XFER_K_N] = { bb_xfer_role(ref->rank, ref->source, ref->destination),
                                  tally->tracked_peak, tally->max_inflight,
                                  tally->payload_bytes, tracked_between };
    memset(cs, 0, sizeof *cs);
    cs->bound_payload = bound_payload;
    cs->control = BB_TRANSFER_TRACKED_CONTROL_BYTES(attr->admission);
    if (ref->rank == 0
        && (cs->per_rank = calloc((size_t)size * BB_XFER_K_N, sizeof(int64_t))) == NULL)
        bb_run_fatal(ref->run, "out of memory");
    if (MPI_Gather(mine, BB_XFER_K_N, MPI_INT64_T, cs->per_rank, BB_XFER_K_N, MPI_INT64_T, 0,
                   bb_run_comm(ref->run)) != MPI_SUCCESS)
        bb_run_fatal(ref->run, "MPI_Gather of the census failed");
    if (ref->rank != 0)
        return;
    for (int q = 0; q < size; q++) {
        const int64_t *k = cs->per_rank + (size_t)q * BB_XFER_K_N;
        int role = (int)k[BB_XFER_K_ROLE];
        int64_t payload = role != BB_TRANSFER_ROLE_NONE ? cs->bound_payload : 0;
        int credit = role == BB_TRANSFER_ROLE_SOURCE ? 2
                     : role == BB_TRANSFER_ROLE_DESTINATION ? 1 : 0;
        if (k[BB_XFER_K_TRACKED] > cs->control + payload || k[BB_XFER_K_INFLIGHT] > credit
            || k[BB_XFER_K_BETWEEN] > (retained ? payload : 0))
            cs->over_bound = 1;
        for (int j = 0; j < BB_XFER_K_N; j++)
            if (k[j] > cs->worst[role][j])
                cs->worst[role][j] = k[j];
    }
}

static cJSON *census_json(const bb_xfer_census_t *cs, int size, int retained)
{
    cJSON *c = cJSON_CreateObject();
    char bound[512];
    snprintf(bound, sizeof bound, "%s%lld bytes of control per rank (232 of control arrays "
             "and receipt, %lld of the admission's staging) plus %s; at most 2 requests live "
             "on the source, 1 on the destination, 0 elsewhere",
             retained ? "retained buffers: " : "", (long long)cs->control,
             (long long)(cs->control - BB_TRANSFER_CENSUS_BYTES),
             retained ? "the largest cap presented on data ranks during a ticket, at most "
                        "that cap between tickets"
                      : "nbytes on data ranks, nothing between tickets");
    cJSON_AddStringToObject(c, "bound", bound);
    cJSON_AddBoolToObject(c, "within_bound", !cs->over_bound);
    cJSON *arr = cJSON_AddArrayToObject(c, "per_rank");
    for (int r = 0; r < size; r++) {
        const int64_t *k = cs->per_rank + (size_t)r * BB_XFER_K_N;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "role",
                                bb_transfer_role_name((bb_transfer_role_t)k[BB_XFER_K_ROLE]));
        cJSON_AddNumberToObject(e, "tracked_bytes", (double)k[BB_XFER_K_TRACKED]);
        cJSON_AddNumberToObject(e, "max_inflight", (double)k[BB_XFER_K_INFLIGHT]);
        cJSON_AddNumberToObject(e, "payload_bytes", (double)k[BB_XFER_K_PAYLOAD]);
        cJSON_AddNumberToObject(e, "tracked_between_calls", (double)k[BB_XFER_K_BETWEEN]);
        cJSON_AddItemToArray(arr, e);
    }
    return c;
}

/* Each quantity the largest over roles. */
cJSON *bb_xfer_census_quantities(const bb_xfer_census_t *cs, int size, int retained,
                                 const char *absent, cJSON *q)
{
    const char *scope = "call/max-rank";
    if (cs == NULL) {
        bb_quantities_add(q, "communication.max_inflight",
                          bb_quantity_null("count", scope, absent));
        bb_quantities_add(q, "memory.tracked_live",
                          bb_quantity_null("byte", scope, "raw mode: buffers are the "
                                           "benchmark's, not counted by a phase"));
        return NULL;
    }
    int64_t worst[BB_XFER_K_N] = { 0 };
    for (int k = 0; k < 4; k++)
        for (int j = BB_XFER_K_TRACKED; j < BB_XFER_K_N; j++)
            if (cs->worst[k][j] > worst[j])
                worst[j] = cs->worst[k][j];
    bb_quantities_add(q, "communication.max_inflight",
                      bb_quantity_value((double)worst[BB_XFER_K_INFLIGHT], "count", scope));
    bb_quantities_add(q, "memory.tracked_live",
                      bb_quantity_value((double)worst[BB_XFER_K_TRACKED], "byte", scope));
    bb_quantities_add(q, "memory.tracked_between_calls",
                      bb_quantity_value((double)worst[BB_XFER_K_BETWEEN], "byte", scope));
    return census_json(cs, size, retained);
}

/* A census over its bound fails the run on rank 0 alone: the runner agrees
 * the exit code. */
int bb_xfer_census_check(bb_run_t *run, int64_t nbytes, bb_xfer_census_set_t *set)
{
    int code = BB_EXIT_OK;
    for (int r = 0; r < bb_run_rows(run); r++) {
        bb_xfer_census_t *cs = &set->row[r], *all = &set->all;
        if (cs->per_rank != NULL) {  /* rank 0's alone */
            if (cs->over_bound) {
                bb_run_note(run, "error: %s %lld bytes: census over its bound",
                            bb_run_row(run, r)->label, (long long)nbytes);
                code = BB_EXIT_FAILURE;
            }
            for (int k = 0; k < 4; k++)
                for (int j = 0; j < BB_XFER_K_N; j++)
                    if (cs->worst[k][j] > all->worst[k][j])
                        all->worst[k][j] = cs->worst[k][j];
            all->over_bound |= cs->over_bound;
            set->have = 1;
        }
        free(cs->per_rank);
        cs->per_rank = NULL;
    }
    return code;
}

/* The roles some rank has, each with its largest bytes and requests. */
void bb_xfer_census_note(bb_run_t *run, const bb_xfer_census_set_t *set, int source,
                         int destination)
{
    static const char *const roles[4] = { "inactive", "source", "destination", "same-rank" };
    const bb_xfer_census_t *all = &set->all;
    if (!set->have)
        return;
    char line[512];
    size_t used = 0;
    used += (size_t)snprintf(line, sizeof line, "census (measured, largest over points): ");
    for (int r = 0; r < 4; r++) {
        int seen = 0;
        for (int q = 0; q < bb_run_size(run); q++)
            seen |= bb_xfer_role(q, source, destination) == r;
        if (seen && used < sizeof line)
            used += (size_t)snprintf(line + used, sizeof line - used,
                                     "%s %lld B, %lld requests; ", roles[r],
                                     (long long)all->worst[r][BB_XFER_K_TRACKED],
                                     (long long)all->worst[r][BB_XFER_K_INFLIGHT]);
    }
    if (used < sizeof line)
        snprintf(line + used, sizeof line - used, "%s",
                 all->over_bound ? "OVER THE BOUND" : "within the bound");
    bb_table_note(bb_run_table(run), "%s", line);
}
