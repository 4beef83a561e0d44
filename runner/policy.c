/* policy.c: the protocol policies a benchmark measures (see policy.h). */
#include "config.h"
#include "policy.h"

#include <stdio.h>
#include <string.h>

static const char *const buffers_names[] = { "fresh", "retained", "borrowed" };
static const char *const shape_names[] = { "free", "fixed" };
static const char *const admission_names[] = { "spec", "fused", "fused-op" };
static const char *const requests_names[] = { "per-call", "persistent" };
static const char *const metrics_names[] = { "timed", "untimed" };

void bb_policy_defaults(bb_policy_choice_t *choice)
{
    choice->buffers = choice->admission = choice->requests = choice->metrics = 1u;
    choice->shape = 1u;
}

int bb_policy_parse(bb_run_t *run, int key, const char *value, bb_policy_choice_t *choice)
{
    if (key != BB_OPT_BUFFERS && key != BB_OPT_ADMISSION && key != BB_OPT_REQUESTS
        && key != BB_OPT_METRICS && key != BB_OPT_SHAPE)
        return 0;  /* another option's, whose value may be NULL */
    int both = strcmp(value, "both") == 0;
    switch (key) {
    case BB_OPT_BUFFERS:
        choice->buffers = both ? 3u : bb_run_parse_choices(run, "buffers", value,
                                                           buffers_names, 3);
        if (!choice->sum && (choice->buffers & (1u << BB_BUFFERS_BORROWED)))
            bb_run_usage(run, "--buffers borrowed: the sum phase's alone");
        return 1;
    case BB_OPT_ADMISSION:
        /* both: the two of the issue that introduced fused, as before */
        choice->admission = both ? 3u : bb_run_parse_choices(run, "admission", value,
                                                             admission_names, 3);
        return 1;
    case BB_OPT_REQUESTS:
        choice->requests = both ? 3u : bb_run_parse_choices(run, "requests", value,
                                                            requests_names, 2);
#ifndef BB_HAVE_PERSISTENT_COLLECTIVES
        if (choice->requests & (1u << BB_REQUESTS_PERSISTENT))
            bb_run_usage(run, "--requests persistent: this MPI has no persistent collectives "
                              "(neither MPI_Allreduce_init nor MPIX_Allreduce_init)");
#endif
        return 1;
    case BB_OPT_METRICS:
        choice->metrics = both ? 3u : bb_run_parse_choices(run, "metrics", value,
                                                           metrics_names, 2);
        return 1;
    case BB_OPT_SHAPE:
        choice->shape = both ? 3u : bb_run_parse_choices(run, "shape", value, shape_names, 2);
        return 1;
    }
    return 0;
}

int bb_policy_given(const bb_policy_choice_t *choice)
{
    return choice->buffers != 1u || choice->admission != 1u || choice->requests != 1u
           || choice->metrics != 1u || choice->shape != 1u;
}

int bb_policy_list(const bb_policy_choice_t *choice, bb_phase_attr_t *out)
{
    int n = 0;
    for (int f = 0; f < 2; f++)
        for (int m = 0; m < 2; m++)
            for (int r = 0; r < 2; r++)
                for (int a = 0; a < (f ? 1 : 3); a++)  /* fixed: no admission */
                    for (int b = 0; b < (f ? 2 : 3); b++)
                        if ((choice->buffers & (1u << b)) && (f || (choice->admission & (1u << a)))
                            && (choice->requests & (1u << r)) && (choice->metrics & (1u << m))
                            && (choice->shape & (1u << f)))
                            out[n++] = (bb_phase_attr_t){ .buffers = (bb_buffers_t)b,
                                                          .admission = (bb_admission_t)a,
                                                          .requests = (bb_requests_t)r,
                                                          .metrics = (bb_metrics_t)m,
                                                          .shape = (bb_shape_t)f };
    return n;
}

void bb_policy_label(const char *base, const bb_phase_attr_t *attr, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s%s%s%s", base,
             attr->buffers != BB_BUFFERS_FRESH ? "-" : "",
             attr->buffers != BB_BUFFERS_FRESH ? bb_buffers_name(attr->buffers) : "",
             attr->shape != BB_SHAPE_FREE ? "-fixed" : "",
             attr->admission != BB_ADMISSION_SPEC ? "-" : "",
             attr->admission != BB_ADMISSION_SPEC ? bb_admission_name(attr->admission) : "",
             attr->requests != BB_REQUESTS_PER_CALL ? "-persistent" : "",
             attr->metrics != BB_METRICS_TIMED ? "-untimed" : "");
}

void bb_policy_describe(const bb_phase_attr_t *attr, char *buf, size_t len)
{
    snprintf(buf, len, "buffers %s, %s %s, requests %s%s",
             bb_buffers_name(attr->buffers),
             attr->shape != BB_SHAPE_FREE ? "shape" : "admission",
             attr->shape != BB_SHAPE_FREE ? "fixed" : bb_admission_name(attr->admission),
             bb_requests_name(attr->requests),
             attr->metrics != BB_METRICS_TIMED ? ", untimed" : "");
}

void bb_policy_legend(const char *differs, const bb_phase_attr_t *attr, int with_buffers,
                      char *buf, size_t len)
{
    char policy[128];
    bb_policy_describe(attr, policy, sizeof policy);
    snprintf(buf, len, "%s (%s)", differs, with_buffers ? policy : strchr(policy, ',') + 2);
}

void bb_policy_parameters(cJSON *params, const bb_phase_attr_t *attr, int with_buffers)
{
    if (with_buffers)
        cJSON_AddStringToObject(params, "buffers", bb_buffers_name(attr->buffers));
    if (attr->shape == BB_SHAPE_FREE)  /* the fixed shape makes no admission */
        cJSON_AddStringToObject(params, "admission", bb_admission_name(attr->admission));
    cJSON_AddStringToObject(params, "requests", bb_requests_name(attr->requests));
    if (attr->metrics != BB_METRICS_TIMED)
        cJSON_AddStringToObject(params, "metrics", bb_metrics_name(attr->metrics));
}

bb_mismatch_t bb_mismatch_parse(bb_run_t *run, const char *value, unsigned mask,
                                int *rank_out)
{
    static const char *const names[BB_MISMATCH_N] = {
        "", "phase_id", "epoch", "source", "destination", "count", "nbytes", "cap",
        "batches", "sequence"
    };
    const char *mine[BB_MISMATCH_N];
    int field[BB_MISMATCH_N], n = 1;
    mine[0] = "";
    for (int f = 1; f < BB_MISMATCH_N; f++)
        if (mask & (1u << f)) {
            field[n] = f;
            mine[n++] = names[f];
        }
    return (bb_mismatch_t)field[bb_run_parse_rank_choice(run, "mismatch-rank", value, mine, 1,
                                                         n, rank_out)];
}
