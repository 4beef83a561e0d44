/* options.c: bbench-redist's options, their presets and the checks
 * between them (redist.h); the option table itself is the
 * program's. */
#include "config.h"
#include "redist.h"

#include <stdint.h>
#include <string.h>

static void parse_layout(bb_run_t *run, const char *opt, const char *text, bb_layout_t *out)
{
    char err[256];
    if (bb_layout_parse(text, out, err, sizeof err) != BB_OK)
        bb_run_usage(run, "%s: %s", opt, err);
}

/* The layout must be generable for the code it lays out at every N
 * (spatial dims, bc2d's grid and rows). */
static void check_layout_fits(bb_run_t *run, const char *opt, const bb_layout_t *lay, int ranks,
                              const bb_size_list_t *elements)
{
    char err[256];
    for (size_t j = 0; j < elements->n; j++)
        if (bb_layout_check(lay, elements->values[j], ranks, err, sizeof err) != BB_OK)
            bb_run_usage(run, "%s: %s", opt, err);
}

static void add_layout(bb_run_t *run, const char *opt, const char *value, const char **list,
                       int *n)
{
    if (*n >= BB_REDIST_LAYOUTS_MAX)
        bb_run_usage(run, "%s: at most %d layouts", opt, BB_REDIST_LAYOUTS_MAX);
    list[(*n)++] = value;
}

void bb_redist_options_defaults(bb_redist_options_t *o)
{
    o->element_bytes = 24;
    o->driver_ranks = -1;
    o->directions[0] = BB_REDIST_SEND;
    o->directions[1] = BB_REDIST_RECEIVE;
    o->ndirections = 2;
    o->mode = BB_REDIST_MODE_MDI;
}

void bb_redist_options_parse(bb_run_t *run, bb_redist_options_t *o, int key,
                             const char *value)
{
    static const char *const directions[] = { ">", "<", "both" };
    static const char *const links[] = { "mdi", "intra" };
    static const char *const workloads[] = { "message", "md" };
    char err[256];
    switch (key) {
    case 'n': bb_run_parse_size_list(run, "elements", value, 0, INT32_MAX, &o->elements);
        break;
    case 'e':
        if (bb_cli_parse_size(value, 8, 24, &o->element_bytes, err, sizeof err) != BB_OK
            || o->element_bytes % 8 != 0)
            bb_run_usage(run, "--element-bytes: '%s' is not 8, 16 or 24", value);
        break;
    case BB_REDIST_OPT_DRIVER:
        o->driver_ranks = (int)bb_run_parse_size(run, "driver-ranks", value, 0, INT32_MAX);
        break;
    case BB_REDIST_OPT_FROM: add_layout(run, "--from", value, o->from, &o->nfrom); break;
    case BB_REDIST_OPT_TO: add_layout(run, "--to", value, o->to, &o->nto); break;
    case 'd': {
        int d = bb_run_parse_one(run, "direction", value, directions, 3);
        o->directions[0] = d == 1 ? BB_REDIST_RECEIVE : BB_REDIST_SEND;
        o->directions[1] = BB_REDIST_RECEIVE;
        o->ndirections = d == 2 ? 2 : 1;
        o->direction_given = 1;
        break;
    }
    case BB_REDIST_OPT_METHODS: {
        const char *names[BB_REDIST_METHODS + 1], *why = NULL;
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            names[m] = bb_redist_method_name((bb_redist_method_t)m);
        names[BB_REDIST_METHODS] = "scalapack";
        unsigned set = bb_run_parse_choices(run, "methods", value, names,
                                            BB_REDIST_METHODS + 1);
        o->nmethods = 0;
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            if (set & (1u << m))
                o->methods[o->nmethods++] = (bb_redist_method_t)m;
        o->scalapack = (set >> BB_REDIST_METHODS) & 1u;
        /* "all" takes the reference where it is built; by name it must be */
        if (o->scalapack && !bb_scalapack_available(&why)) {
            if (strcmp(value, "all") != 0)
                bb_run_usage(run, "--methods: scalapack is not built in: %s", why);
            o->scalapack = 0;
        }
        o->methods_given = 1;
        break;
    }
    case BB_REDIST_OPT_MESSAGES:
        o->messages = bb_run_parse_size(run, "messages", value, 0, INT32_MAX);
        break;
    case BB_REDIST_OPT_LINK:
        o->mode = bb_run_parse_one(run, "link", value, links, 2) == 0 ? BB_REDIST_MODE_MDI
                                                                      : BB_REDIST_MODE_INTRA;
        break;
    case BB_REDIST_OPT_WORKLOAD:
        o->md = bb_run_parse_one(run, "workload", value, workloads, 2) == 1;
        break;
    case BB_REDIST_OPT_REMAP: {
        const char *colon = strchr(value, ':');
        char k[32];
        if (colon == NULL || (size_t)(colon - value) >= sizeof k)
            bb_run_usage(run, "--remap: '%s' is not K:F (every K steps a fraction F)", value);
        memcpy(k, value, (size_t)(colon - value));
        k[colon - value] = '\0';
        o->remap_every = bb_run_parse_size(run, "remap", k, 1, INT32_MAX);
        if (bb_cli_parse_double(colon + 1, 0.0, 1.0, &o->remap_fraction, err, sizeof err)
                != BB_OK || !(o->remap_fraction > 0.0))
            bb_run_usage(run, "--remap: the fraction '%s' is not in (0, 1]", colon + 1);
        break;
    }
    case BB_REDIST_OPT_RATIOS: o->ratios = 1; break;
    }
}

size_t bb_redist_options_validate(bb_run_t *run, bb_redist_options_t *o)
{
    int ranks = bb_run_size(run);
    o->full_sweep = bb_run_full_sweep(run);  /* the runner's --full-sweep */
    if (o->full_sweep && o->ratios)
        bb_run_usage(run, "--full-sweep and --ratios are two presets: give one");
    /* -m: bytes of the global array, N = bytes / element bytes. */
    bb_run_message_sizes(run, "elements", o->element_bytes,
                         (o->full_sweep ? 10000 : 1000) * o->element_bytes,
                         (o->full_sweep ? 1000000 : 10000) * o->element_bytes, &o->elements);
    if (o->remap_every > 0 && !o->md)
        bb_run_usage(run, "--remap applies to --workload md only");
    if (o->md) {
        if (o->direction_given || o->ratios || o->messages > 0 || o->element_bytes != 24)
            bb_run_usage(run, "--workload md fixes the commands (>COORDS, <FORCES, "
                         "<ENERGY), their sizes and one plan set per point: no --direction, "
                         "--element-bytes, --messages or --ratios");
        o->ndirections = 1;
        o->directions[0] = BB_REDIST_SEND;
        /* the replicated baseline moves 3N doubles in one MPI call */
        for (size_t j = 0; j < o->elements.n; j++)
            if (o->elements.values[j] * 3 > INT32_MAX)
                bb_run_usage(run, "--elements: %lld is too many for --workload md's "
                             "replicated baseline (one MPI call of 3N doubles)",
                             (long long)o->elements.values[j]);
    }
    if (o->elements.n == 0)
        bb_run_parse_size_list(run, "elements",
                               o->ratios ? "1e6" : o->full_sweep ? "1e4,1e5,1e6" : "1e3,1e4",
                               0, INT32_MAX, &o->elements);
    if (o->nfrom == 0) {
        static const char *const sweep[] = {"spatial", "spatial-shuffled", "random:1", "root"};
        static const char *const ratios[] = {"spatial", "random:1"};
        if (o->full_sweep)
            for (int i = 0; i < 4; i++)
                o->from[o->nfrom++] = sweep[i];
        else if (o->ratios)
            for (int i = 0; i < 2; i++)
                o->from[o->nfrom++] = ratios[i];
        else
            /* not spatial: on one driver rank it is the identity of std */
            o->from[o->nfrom++] = "spatial-shuffled";
    }
    if (o->nto == 0)
        o->to[o->nto++] = "std";
    if (o->ratios && !o->direction_given) {
        o->directions[0] = BB_REDIST_SEND;
        o->ndirections = 1;
    }
    if (!o->methods_given) {
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            o->methods[o->nmethods++] = (bb_redist_method_t)m;
        o->scalapack = bb_scalapack_available(NULL);
    }
    if (o->md && o->nmethods == 0)
        bb_run_usage(run, "--workload md measures the library's methods: scalapack alone "
                     "is not one");
    for (int i = 0; i < o->nfrom; i++)
        parse_layout(run, "--from", o->from[i], &o->from_layout[i]);
    for (int i = 0; i < o->nto; i++)
        parse_layout(run, "--to", o->to[i], &o->to_layout[i]);
    int dr = ranks, er = ranks;
    if (o->mode == BB_REDIST_MODE_MDI) {
        if (ranks < 2)
            bb_run_usage(run, "--link mdi needs a driver and an engine: run on at "
                         "least 2 ranks (mpiexec -n 2), or use --link intra");
        if (o->driver_ranks < 0)
            o->driver_ranks = ranks / 2;
        if (o->driver_ranks < 1 || o->driver_ranks > ranks - 1)
            bb_run_usage(run, "--driver-ranks: %d leaves %s without ranks: give 1 to "
                         "%d on %d ranks", o->driver_ranks,
                         o->driver_ranks < 1 ? "the driver" : "the engine", ranks - 1,
                         ranks);
        dr = o->driver_ranks;
        er = ranks - o->driver_ranks;
    } else if (o->driver_ranks >= 0) {
        bb_run_usage(run, "--driver-ranks applies to --link mdi only");
    }
    for (int i = 0; i < o->nfrom; i++)
        check_layout_fits(run, "--from", &o->from_layout[i], dr, &o->elements);
    for (int i = 0; i < o->nto; i++)
        check_layout_fits(run, "--to", &o->to_layout[i], er, &o->elements);
    /* (the root methods move their arrays in pieces: no INT_MAX limit here) */
    return o->elements.n * (size_t)o->ndirections * (size_t)o->nfrom * (size_t)o->nto;
}
