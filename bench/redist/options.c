/* options.c: bbench-redist's options, their presets and the checks
 * between them (redist.h); the option table itself is the
 * program's. */
#include "config.h"
#include "redist.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void bb_rd_options_defaults(bb_rd_options_t *o)
{
    o->element_bytes = 24;
    o->driver_ranks = -1;
    o->directions[0] = BB_REDIST_SEND;
    o->directions[1] = BB_REDIST_RECEIVE;
    o->ndirections = 2;
    o->mode = BB_REDIST_MODE_MDI;
}

void bb_rd_options_parse(bb_run_t *run, bb_rd_options_t *o, int key,
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
    case BB_REDIST_OPT_CASES: o->cases_file = value; break;
    case BB_REDIST_OPT_NO_BOUND: o->no_bound = 1; break;
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
        o->link_given = 1;
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
    case BB_REDIST_OPT_ROLE:
        /* the value differs between the launch's programs: a bad one is
         * said after the ranks agree (bb_rd_options_validate) */
        o->role_given = 1;
        o->role = strcasecmp(value, "driver") == 0 ? BB_REDIST_ROLE_DRIVER
                  : strcasecmp(value, "engine") == 0 ? BB_REDIST_ROLE_ENGINE
                  : BB_REDIST_ROLE_LAUNCH;
        o->role_bad = o->role == BB_REDIST_ROLE_LAUNCH;
        break;
    }
}

/* ---- --cases FILE: ScaLAPACK's GEMR2D.dat lines ---------------------------- */

/* A line's 22 integers in pdgemrdrv's order: m n, then per side (A, B)
 * M N RSRC CSRC IA JA P Q MB NB (the side's matrix, its source process,
 * the submatrix's corner, the grid, the blocks); a TRMR2D.dat line (known
 * by its count) adds UPLO (1 upper, 0 lower) and DIAG (1 unit, 0 not), as
 * pdtrmrdrv reads them. */
enum { BB_CASE_FIELDS = 22, BB_CASE_TRAP_FIELDS = 24, BB_CASE_SIDE = 10 };
enum { BB_CASE_M = 0, BB_CASE_MS = 0, BB_CASE_NS, BB_CASE_RSRC, BB_CASE_CSRC, BB_CASE_IA,
       BB_CASE_JA, BB_CASE_P, BB_CASE_Q, BB_CASE_MB, BB_CASE_NB };

static void skip_case(bb_run_t *run, bb_rd_options_t *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void skip_case(bb_run_t *run, bb_rd_options_t *o, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char **grown = realloc(o->skipped, (o->nskipped + 1) * sizeof *grown);
    if (grown == NULL || (grown[o->nskipped] = strdup(msg)) == NULL)
        bb_run_fatal(run, "--cases: out of memory");
    o->skipped = grown;
    o->nskipped++;
}

/* Side s's fields (at f) as a bc2d layout: the whole matrix, or its m x n
 * submatrix (the trapezoid of it when uplo is set). */
static void case_side(const int64_t *f, int64_t m, int64_t n, char uplo, char diag,
                      bb_layout_t *l, char *name, size_t len)
{
    memset(l, 0, sizeof *l);
    l->kind = BB_LAYOUT_BC2D;
    l->seed = 1;
    l->rows = f[BB_CASE_MS];
    l->mb = f[BB_CASE_MB];
    l->nb = f[BB_CASE_NB];
    l->pr = (int)f[BB_CASE_P];
    l->pc = (int)f[BB_CASE_Q];
    l->rsrc = (int)f[BB_CASE_RSRC];
    l->csrc = (int)f[BB_CASE_CSRC];
    if (uplo || m != f[BB_CASE_MS] || n != f[BB_CASE_NS] || f[BB_CASE_IA] != 1
        || f[BB_CASE_JA] != 1) {
        l->rows = m;
        l->ia = f[BB_CASE_IA];
        l->ja = f[BB_CASE_JA];
        l->gm = f[BB_CASE_MS];
        l->gn = f[BB_CASE_NS];
        l->uplo = uplo;
        l->diag = diag;
        l->cols = uplo ? n : 0;
    }
    bb_layout_format(l, name, len);
}

/* One line: a usage error when malformed (alike on every rank: each parses
 * rank 0's bytes), skipped with the reason when valid but not run here. */
static void add_case(bb_run_t *run, bb_rd_options_t *o, int line, char *text, int ranks)
{
    int64_t f[BB_CASE_TRAP_FIELDS];
    int nf = 0;
    char *s = text, *end;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (*s == '\0')
            break;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE || v < 0 || v > INT32_MAX
            || (*end != '\0' && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')
            || nf == BB_CASE_TRAP_FIELDS)
            bb_run_usage(run, "--cases: %s:%d: not %d integers from 0 to %d (m n, then per "
                         "side M N RSRC CSRC IA JA P Q MB NB)", o->cases_file, line,
                         BB_CASE_FIELDS, INT32_MAX);
        f[nf++] = v;
        s = end;
    }
    if (nf != BB_CASE_FIELDS && nf != BB_CASE_TRAP_FIELDS)
        bb_run_usage(run, "--cases: %s:%d: %d integers where a case has %d (m n, then per "
                     "side M N RSRC CSRC IA JA P Q MB NB; %d with UPLO DIAG)", o->cases_file,
                     line, nf, BB_CASE_FIELDS, BB_CASE_TRAP_FIELDS);
    char uplo = 0, diag = 0;
    if (nf == BB_CASE_TRAP_FIELDS) {
        if (f[22] > 1 || f[23] > 1)
            bb_run_usage(run, "--cases: %s:%d: UPLO and DIAG (the last two) must be 0 or 1",
                         o->cases_file, line);
        uplo = f[22] ? 'U' : 'L';
        diag = f[23] ? 'U' : 'N';
    }
    int64_t m = f[0], n = f[1];
    for (int side = 0; side < 2; side++) {
        const int64_t *g = f + 2 + side * BB_CASE_SIDE;
        if (m < 1 || n < 1 || g[BB_CASE_MS] < 1 || g[BB_CASE_NS] < 1 || g[BB_CASE_P] < 1
            || g[BB_CASE_Q] < 1 || g[BB_CASE_MB] < 1 || g[BB_CASE_NB] < 1
            || g[BB_CASE_IA] < 1 || g[BB_CASE_JA] < 1)
            bb_run_usage(run, "--cases: %s:%d: m, n, and each side's M, N, IA, JA, P, Q, MB, "
                         "NB must be positive", o->cases_file, line);
        if (g[BB_CASE_RSRC] >= g[BB_CASE_P] || g[BB_CASE_CSRC] >= g[BB_CASE_Q])
            bb_run_usage(run, "--cases: %s:%d: side %c's source process (RSRC, CSRC) lies "
                         "outside its P x Q grid", o->cases_file, line, side ? 'B' : 'A');
        if (g[BB_CASE_IA] - 1 + m > g[BB_CASE_MS] || g[BB_CASE_JA] - 1 + n > g[BB_CASE_NS])
            bb_run_usage(run, "--cases: %s:%d: side %c's m x n submatrix at (IA, JA) leaves "
                         "its M x N matrix", o->cases_file, line, side ? 'B' : 'A');
        if (g[BB_CASE_P] * g[BB_CASE_Q] > INT32_MAX)
            bb_run_usage(run, "--cases: %s:%d: side %c's P*Q is above %d", o->cases_file,
                         line, side ? 'B' : 'A', INT32_MAX);
    }
    const int64_t *a = f + 2, *b = f + 2 + BB_CASE_SIDE;
    int64_t need = a[BB_CASE_P] * a[BB_CASE_Q] > b[BB_CASE_P] * b[BB_CASE_Q]
                       ? a[BB_CASE_P] * a[BB_CASE_Q] : b[BB_CASE_P] * b[BB_CASE_Q];
    if (need > ranks) {
        skip_case(run, o, "%s:%d: skipped: needs %lld ranks, the launch has %d",
                  o->cases_file, line, (long long)need, ranks);
        return;
    }
    if (a[BB_CASE_MS] * a[BB_CASE_NS] > INT32_MAX || b[BB_CASE_MS] * b[BB_CASE_NS] > INT32_MAX) {
        skip_case(run, o, "%s:%d: skipped: a matrix of more than %d elements",
                  o->cases_file, line, INT32_MAX);
        return;
    }
    bb_rd_case_t c;
    memset(&c, 0, sizeof c);
    c.line = line;
    c.n = uplo ? bb_layout_trap_count(m, n, uplo, diag) : m * n;
    if (c.n == 0) {
        skip_case(run, o, "%s:%d: skipped: its trapezoid holds no element", o->cases_file,
                  line);
        return;
    }
    case_side(a, m, n, uplo, diag, &c.from, c.from_name, sizeof c.from_name);
    case_side(b, m, n, uplo, diag, &c.to, c.to_name, sizeof c.to_name);
    bb_rd_case_t *grown = realloc(o->cases, (o->ncases + 1) * sizeof *grown);
    if (grown == NULL)
        bb_run_fatal(run, "--cases: out of memory");
    o->cases = grown;
    o->cases[o->ncases++] = c;
}

/* Rank 0 reads the file and every rank parses its bytes (hosts without a
 * shared folder use rank 0's copy; no rank reads another file): a malformed
 * file is a usage error on all.  ScaLAPACK's files are a few KiB. */
enum { BB_CASES_MAX_BYTES = 4 << 20 };
static void read_cases(bb_run_t *run, bb_rd_options_t *o, int ranks)
{
    size_t len;
    char *text = bb_run_read_input(run, "--cases", o->cases_file, BB_CASES_MAX_BYTES, &len);
    /* An empty file reads as one empty line (fmemopen needs a byte). */
    FILE *fp = fmemopen(text, len > 0 ? len : 1, "r");
    if (fp == NULL)
        bb_run_fatal(run, "--cases: fmemopen: %s", strerror(errno));
    char buf[1024];
    int line = 0;
    while (fgets(buf, sizeof buf, fp) != NULL) {
        line++;
        if (strchr(buf, '\n') == NULL && !feof(fp)) {
            fclose(fp);
            free(text);
            bb_run_usage(run, "--cases: %s:%d: a line longer than %zu characters",
                         o->cases_file, line, sizeof buf - 2);
        }
        char *s = buf + strspn(buf, " \t\r\n");
        if (*s == '\0' || *s == '#')
            continue;  /* blank, or a comment */
        add_case(run, o, line, s, ranks);
    }
    int bad = ferror(fp);
    fclose(fp);
    free(text);
    if (bad)
        bb_run_usage(run, "--cases: cannot read '%s'", o->cases_file);
    if (o->ncases == 0)
        bb_run_usage(run, "--cases: no case of '%s' runs on %d ranks (%zu skipped%s%s)",
                     o->cases_file, ranks, o->nskipped, o->nskipped ? ", the first: " : "",
                     o->nskipped ? o->skipped[0] : "");
}

/* --cases fixes the points: one per case, '>' on the intra link. */
static size_t validate_cases(bb_run_t *run, bb_rd_options_t *o, int ranks)
{
    if (o->nfrom > 0 || o->nto > 0 || o->elements.n > 0 || o->direction_given || o->md
        || o->ratios || o->full_sweep || (o->link_given && o->mode != BB_REDIST_MODE_INTRA))
        bb_run_usage(run, "--cases fixes the points (each case's matrix, from its A layout "
                         "to its B layout, '>', --link intra): no --from, --to, --elements, "
                         "-m, --direction, --link mdi, --workload md, --ratios or "
                         "--full-sweep");
    if (o->driver_ranks >= 0 || o->role_given)
        bb_run_usage(run, "--%s applies to --link mdi only",
                     o->role_given ? "role" : "driver-ranks");
    o->mode = BB_REDIST_MODE_INTRA;
    o->ndirections = 1;
    o->directions[0] = BB_REDIST_SEND;
    if (!o->methods_given) {
        for (int m = 0; m < BB_REDIST_METHODS; m++)
            o->methods[o->nmethods++] = (bb_redist_method_t)m;
        o->scalapack = bb_scalapack_available(NULL);
    }
    read_cases(run, o, ranks);
    return o->ncases;
}

/* This rank's MPI_APPNUM (its program's place in an MPMD launch), or -1
 * where the launch or the MPI gives none. */
static int launch_appnum(void)
{
#ifdef BB_HAVE_MPI_APPNUM
    int *v = NULL, flag = 0;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag) == MPI_SUCCESS && flag
        && v != NULL)
        return *v;
#endif
    return -1;
}

/* Collective (--link mdi): the codes.  --driver-ranks splits the world at
 * PD; --role names each rank's code; with neither, a launch of two programs
 * (MPI_APPNUM 0 and 1) is a driver and an engine, one program is split at
 * P/2.  One MPI_Allreduce, after which every check is alike on every rank
 * (the arguments but --role's value are agreed: code_option). */
static void find_codes(bb_run_t *run, bb_rd_options_t *o, int ranks)
{
    if (o->role_given && o->driver_ranks >= 0)
        bb_run_usage(run, "--role and --driver-ranks: give one (--role names each program's "
                     "code in an MPMD launch, --driver-ranks splits one program's ranks)");
    if (o->driver_ranks >= 0) {
        o->codes_found_by = "split";
        o->drivers_first = 1;
        return;
    }
    enum { BAD, DRIVERS, ENGINES, APP0, APP1, DRIVER_RANKS, FIELDS };
    int me = bb_run_rank(run), app = launch_appnum();
    int driver = o->role_given ? o->role == BB_REDIST_ROLE_DRIVER : app == 0;
    int engine = o->role_given ? o->role == BB_REDIST_ROLE_ENGINE : app == 1;
    int64_t mine[FIELDS] = { o->role_bad, driver, engine, app == 0, app == 1,
                             driver ? me : 0 }, all[FIELDS];
    if (MPI_Allreduce(mine, all, FIELDS, MPI_INT64_T, MPI_SUM, bb_run_comm(run))
            != MPI_SUCCESS)
        bb_run_fatal(run, "MPI_Allreduce failed while finding the codes");
    if (all[BAD] > 0)
        bb_run_usage(run, "--role: %lld of %d ranks gave a code other than driver or engine",
                     (long long)all[BAD], ranks);
    if (o->role_given) {
        if (all[DRIVERS] == 0 || all[ENGINES] == 0)
            bb_run_usage(run, "--role: every rank is %s: launch both codes (mpiexec -n PD "
                         "bbench-redist --role driver ... : -n PE bbench-redist --role engine "
                         "...)", all[DRIVERS] ? "a driver" : "an engine");
        o->codes_found_by = "role";
    } else if (all[APP0] > 0 && all[APP1] > 0 && all[APP0] + all[APP1] == ranks) {
        o->codes_found_by = "appnum";
    } else if (all[APP1] > 0 || (all[APP0] > 0 && all[APP0] < ranks)) {
        bb_run_usage(run, "the launch started %s programs than two (MPI_APPNUM): launch one "
                     "program (split at --driver-ranks) or two (the driver, then the engine), "
                     "or give each rank --role driver or --role engine",
                     all[APP1] > 0 ? "more" : "other");
    } else {
        /* one program (or an MPI that does not say): the world split */
        o->codes_found_by = "split";
        o->drivers_first = 1;
        o->driver_ranks = ranks / 2;
        return;
    }
    o->driver_ranks = (int)all[DRIVERS];
    /* distinct ranks sum to 0 + 1 + ... + (D - 1) only when they are [0, D) */
    o->drivers_first = all[DRIVER_RANKS] == all[DRIVERS] * (all[DRIVERS] - 1) / 2;
}

void bb_rd_options_clear(bb_rd_options_t *o)
{
    for (size_t i = 0; i < o->nskipped; i++)
        free(o->skipped[i]);
    free(o->skipped);
    free(o->cases);
    o->skipped = NULL;
    o->cases = NULL;
    o->nskipped = o->ncases = 0;
}

size_t bb_rd_options_validate(bb_run_t *run, bb_rd_options_t *o)
{
    int ranks = bb_run_size(run);
    o->full_sweep = bb_run_full_sweep(run);  /* the runner's --full-sweep */
    if (o->full_sweep && o->ratios)
        bb_run_usage(run, "--full-sweep and --ratios are two presets: give one");
    if (o->cases_file != NULL) {
        if (o->remap_every > 0)
            bb_run_usage(run, "--remap applies to --workload md only");
        /* -m fills the elements: refused below like --elements */
        bb_run_message_sizes(run, "elements", o->element_bytes, 1000 * o->element_bytes,
                             10000 * o->element_bytes, &o->elements);
        return validate_cases(run, o, ranks);
    }
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
        find_codes(run, o, ranks);
        if (o->driver_ranks < 1 || o->driver_ranks > ranks - 1)
            bb_run_usage(run, "--driver-ranks: %d leaves %s without ranks: give 1 to "
                         "%d on %d ranks", o->driver_ranks,
                         o->driver_ranks < 1 ? "the driver" : "the engine", ranks - 1,
                         ranks);
        dr = o->driver_ranks;
        er = ranks - o->driver_ranks;
    } else if (o->driver_ranks >= 0 || o->role_given) {
        bb_run_usage(run, "--%s applies to --link mdi only",
                     o->role_given ? "role" : "driver-ranks");
    }
    for (int i = 0; i < o->nfrom; i++)
        check_layout_fits(run, "--from", &o->from_layout[i], dr, &o->elements);
    for (int i = 0; i < o->nto; i++)
        check_layout_fits(run, "--to", &o->to_layout[i], er, &o->elements);
    /* (the root methods move their arrays in pieces: no INT_MAX limit here) */
    return o->elements.n * (size_t)o->ndirections * (size_t)o->nfrom * (size_t)o->nto;
}
