/* layout.c: the layouts bbench-redist measures: a parser for their names
 * and deterministic generators of each rank's indices. */
#include "config.h"
#include "private/bbtext.h"
#include "layout.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Layout generators                                                        */
/* ------------------------------------------------------------------------ */

uint64_t bb_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const char *const bb_layout_names[BB_LAYOUT_KINDS] = {
    "std", "std-ceil", "block-irregular", "block-reverse", "cyclic",
    "block-cyclic", "spatial", "random", "spatial-shuffled", "root", "bc2d"
};

static int bb_parse_i64(const char *s, const char **end, int64_t lo, int64_t hi,
                        int64_t *out)
{
    char *e;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (errno == ERANGE || v < lo || v > hi)  /* no silent clamp to the limit */
        return -1;
    *out = v;
    *end = e;
    return 0;
}

int bb_layout_trap_in(int64_t i, int64_t j, int64_t m, int64_t n, char uplo, char diag)
{
    int unit = diag == 'U';
    if (uplo == 'U')
        return i <= j + (m > n ? m - n : 0) - unit;
    return i >= j - (n > m ? n - m : 0) + unit;
}

/* A trapezoid column's rows: the first and the count (0..m). */
static void bb_trap_column(int64_t j, int64_t m, int64_t n, char uplo, char diag,
                           int64_t *first, int64_t *count)
{
    int unit = diag == 'U';
    if (uplo == 'U') {
        int64_t last = j + (m > n ? m - n : 0) - unit;  /* inclusive */
        *first = 0;
        *count = last < 0 ? 0 : last >= m ? m : last + 1;
    } else {
        int64_t f = j - (n > m ? n - m : 0) + unit;
        *first = f < 0 ? 0 : f > m ? m : f;
        *count = m - *first;
    }
}

int64_t bb_layout_trap_count(int64_t m, int64_t n, char uplo, char diag)
{
    int64_t total = 0, first, count;
    for (int64_t j = 0; j < n; j++) {
        bb_trap_column(j, m, n, uplo, diag, &first, &count);
        total += count;
    }
    return total;
}

int64_t bb_layout_sub_cols(const bb_layout_t *l, int64_t n)
{
    if (l->kind != BB_LAYOUT_BC2D || l->gm == 0 || l->rows < 1)
        return 0;
    return l->uplo ? l->cols : n / l->rows;
}

/* bc2d's "@IA,JA,M,N[,UPLO,DIAG,COLS]" (at: after the '@'; rows: ROWS)
 * into l; -1 with err. */
static int bb_parse_sub(const char *text, const char *more, const char *at, int64_t rows,
                        bb_layout_t *l, char *err, size_t errlen)
{
    int64_t a[4];
    const char *s = at, *end = at;
    for (int k = 0; k < 4; k++) {
        if (bb_parse_i64(s, &end, 1, INT32_MAX, &a[k]) != 0
            || (k < 3 && *end != ',') || (k == 3 && *end != ',' && *end != '\0')) {
            bb_errorf(err, errlen, "'%.32s%s': a bc2d submatrix is @IA,JA,M,N[,UPLO,DIAG,COLS]: "
                      "its 1-based corner and the whole matrix's rows and columns, positive",
                      text, more);
            return -1;
        }
        s = end + 1;
    }
    l->ia = a[0];
    l->ja = a[1];
    l->gm = a[2];
    l->gn = a[3];
    if (*end == ',') {
        int64_t cols;
        if ((s[0] != 'U' && s[0] != 'L') || s[1] != ',' || (s[2] != 'U' && s[2] != 'N')
            || s[3] != ',' || bb_parse_i64(s + 4, &end, 1, INT32_MAX, &cols) != 0
            || *end != '\0') {
            bb_errorf(err, errlen, "'%.32s%s': a bc2d trapezoid ends ,UPLO,DIAG,COLS: UPLO U "
                      "or L, DIAG U (unit: no diagonal) or N, COLS the submatrix's columns",
                      text, more);
            return -1;
        }
        l->uplo = s[0];
        l->diag = s[2];
        l->cols = cols;
    }
    if (l->ia - 1 + rows > l->gm || (l->uplo && l->ja - 1 + l->cols > l->gn)) {
        bb_errorf(err, errlen, "'%.32s%s': the submatrix at (IA, JA) = (%lld, %lld) leaves the "
                  "%lld x %lld matrix", text, more, (long long)l->ia, (long long)l->ja,
                  (long long)l->gm, (long long)l->gn);
        return -1;
    }
    return 0;
}

bb_status_t bb_layout_parse(const char *text, bb_layout_t *layout_out, char *err,
                            size_t errlen)
{
    bb_layout_t l;
    memset(&l, 0, sizeof l);
    l.seed = 1;
    if (text == NULL || layout_out == NULL)
        return BB_ERR_ARG;
    /* Messages quote at most 32 characters, so the reason always fits. */
    const char *more = strlen(text) > 32 ? "..." : "";
    const char *colon = strchr(text, ':');
    size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
    int kind = -1;
    for (int k = 0; k < BB_LAYOUT_KINDS; k++)
        if (strlen(bb_layout_names[k]) == nlen && strncmp(text, bb_layout_names[k], nlen) == 0)
            kind = k;
    if (kind < 0) {
        bb_errorf(err, errlen, "'%.32s%s' is not a layout (std, std-ceil, block-irregular[:SEED], "
                  "block-reverse, cyclic, block-cyclic:B, spatial[:PX,PY,PZ], random[:SEED], "
                  "spatial-shuffled[:SEED], root, bc2d:ROWS,MB,NB[,PR,PC[,RSRC,CSRC]])", text,
                  more);
        return BB_ERR_PARSE;
    }
    l.kind = (bb_layout_kind_t)kind;
    const char *arg = colon ? colon + 1 : NULL, *end = NULL;
    int64_t v;
    switch (l.kind) {
    case BB_LAYOUT_BLOCK_CYCLIC:
        if (arg == NULL || bb_parse_i64(arg, &end, 1, INT32_MAX, &v) != 0 || *end != '\0') {
            bb_errorf(err, errlen, "'%.32s%s': block-cyclic needs a block size B >= 1 (block-cyclic:B)", text, more);
            return BB_ERR_PARSE;
        }
        l.block = v;
        break;
    case BB_LAYOUT_BLOCK_IRREGULAR:
    case BB_LAYOUT_RANDOM:
    case BB_LAYOUT_SPATIAL_SHUFFLED:
        if (arg != NULL) {
            if (bb_parse_i64(arg, &end, 0, INT64_MAX, &v) != 0 || *end != '\0') {
                bb_errorf(err, errlen, "'%.32s%s': the seed must be a nonnegative integer", text, more);
                return BB_ERR_PARSE;
            }
            l.seed = (uint64_t)v;
        }
        break;
    case BB_LAYOUT_SPATIAL:
        if (arg != NULL) {
            const char *s = arg;
            for (int d = 0; d < 3; d++) {
                if (bb_parse_i64(s, &end, 1, INT32_MAX, &v) != 0
                    || (d < 2 && *end != ',') || (d == 2 && *end != '\0')) {
                    bb_errorf(err, errlen, "'%.32s%s': spatial takes three subdomain counts "
                              "(spatial:PX,PY,PZ)", text, more);
                    return BB_ERR_PARSE;
                }
                l.dims[d] = (int)v;
                s = end + 1;
            }
            /* No rank count exceeds INT32_MAX, so neither may PX*PY*PZ
             * (checked stepwise: the product of three int32 overflows). */
            int64_t prod = (int64_t)l.dims[0] * l.dims[1];
            if (prod > INT32_MAX || prod * l.dims[2] > INT32_MAX) {
                bb_errorf(err, errlen, "'%.32s%s': PX*PY*PZ is above %d, more "
                          "subdomains than any run has ranks", text, more, INT32_MAX);
                return BB_ERR_PARSE;
            }
        }
        break;
    case BB_LAYOUT_BC2D: {
        /* ROWS, MB, NB, then PR, PC, then RSRC, CSRC: 3, 5 or 7 integers;
         * then '@' and the submatrix's corner and the whole matrix */
        int64_t a[7];
        int na = 0;
        const char *s = arg, *at = NULL;
        while (s != NULL && na < 7) {
            if (bb_parse_i64(s, &end, na < 5 ? 1 : 0, INT32_MAX, &a[na]) != 0
                || (*end != ',' && *end != '\0' && *end != '@'))
                break;
            na++;
            at = *end == '@' ? end + 1 : NULL;
            s = *end == ',' ? end + 1 : NULL;
        }
        if (at != NULL && bb_parse_sub(text, more, at, a[0], &l, err, errlen) != 0)
            return BB_ERR_PARSE;
        if (s != NULL || (na != 3 && na != 5 && na != 7)) {
            bb_errorf(err, errlen, "'%.32s%s': bc2d takes ROWS,MB,NB[,PR,PC[,RSRC,CSRC]]"
                      "[@IA,JA,M,N]: positive integers (RSRC, CSRC from 0)", text, more);
            return BB_ERR_PARSE;
        }
        l.rows = a[0];
        l.mb = a[1];
        l.nb = a[2];
        if (na >= 5) {
            if (a[3] * a[4] > INT32_MAX) {
                bb_errorf(err, errlen, "'%.32s%s': PR*PC is above %d, more processes than "
                          "any run has ranks", text, more, INT32_MAX);
                return BB_ERR_PARSE;
            }
            l.pr = (int)a[3];
            l.pc = (int)a[4];
        }
        if (na == 7) {
            if (a[5] >= a[3] || a[6] >= a[4]) {
                bb_errorf(err, errlen, "'%.32s%s': the source process (RSRC, CSRC) must lie "
                          "in the PR x PC grid", text, more);
                return BB_ERR_PARSE;
            }
            l.rsrc = (int)a[5];
            l.csrc = (int)a[6];
        }
        break;
    }
    default:
        if (arg != NULL) {
            bb_errorf(err, errlen, "'%.32s%s': layout %s takes no argument", text, more,
                      bb_layout_names[kind]);
            return BB_ERR_PARSE;
        }
    }
    *layout_out = l;
    return BB_OK;
}

void bb_layout_format(const bb_layout_t *layout, char *buf, size_t len)
{
    if (layout->kind < 0 || layout->kind >= BB_LAYOUT_KINDS) {
        snprintf(buf, len, "unknown");
        return;
    }
    const char *name = bb_layout_names[layout->kind];
    switch (layout->kind) {
    case BB_LAYOUT_BLOCK_CYCLIC:
        snprintf(buf, len, "%s:%lld", name, (long long)layout->block);
        break;
    case BB_LAYOUT_BLOCK_IRREGULAR:
    case BB_LAYOUT_RANDOM:
    case BB_LAYOUT_SPATIAL_SHUFFLED:
        snprintf(buf, len, "%s:%llu", name, (unsigned long long)layout->seed);
        break;
    case BB_LAYOUT_SPATIAL:
        if (layout->dims[0] > 0)
            snprintf(buf, len, "%s:%d,%d,%d", name, layout->dims[0],
                     layout->dims[1], layout->dims[2]);
        else
            snprintf(buf, len, "%s", name);
        break;
    case BB_LAYOUT_BC2D: {
        int w = snprintf(buf, len, "%s:%lld,%lld,%lld", name, (long long)layout->rows,
                         (long long)layout->mb, (long long)layout->nb);
        if (layout->pr > 0 && w >= 0 && (size_t)w < len)
            w += snprintf(buf + w, len - (size_t)w, ",%d,%d", layout->pr, layout->pc);
        if ((layout->rsrc > 0 || layout->csrc > 0 || (layout->gm > 0 && layout->pr > 0))
            && w >= 0
            && (size_t)w < len)
            w += snprintf(buf + w, len - (size_t)w, ",%d,%d", layout->rsrc, layout->csrc);
        if (layout->gm > 0 && w >= 0 && (size_t)w < len)
            w += snprintf(buf + w, len - (size_t)w, "@%lld,%lld,%lld,%lld",
                          (long long)layout->ia, (long long)layout->ja,
                          (long long)layout->gm, (long long)layout->gn);
        if (layout->gm > 0 && layout->uplo && w >= 0 && (size_t)w < len)
            snprintf(buf + w, len - (size_t)w, ",%c,%c,%lld", layout->uplo, layout->diag,
                     (long long)layout->cols);
        break;
    }
    default:
        snprintf(buf, len, "%s", name);
    }
}

/* Three factors of ranks, as equal as possible (largest prime factors first
 * into the smallest dimension), largest first. */
static void bb_dims3(int ranks, int dims[3])
{
    dims[0] = dims[1] = dims[2] = 1;
    int r = ranks;
    int f[64], nf = 0;
    for (int q = 2; (int64_t)q * q <= r; q++)
        while (r % q == 0) {
            f[nf++] = q;
            r /= q;
        }
    if (r > 1)
        f[nf++] = r;
    for (int i = nf - 1; i >= 0; i--) {
        int s = 0;
        for (int d = 1; d < 3; d++)
            if (dims[d] < dims[s])
                s = d;
        dims[s] *= f[i];
    }
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++)
            if (dims[b] > dims[a]) {
                int t = dims[a]; dims[a] = dims[b]; dims[b] = t;
            }
}

void bb_layout_grid(const bb_layout_t *layout, int ranks, int *pr_out, int *pc_out)
{
    if (layout->pr > 0 && layout->pc > 0) {
        *pr_out = layout->pr;
        *pc_out = layout->pc;
        return;
    }
    int pr = 1;
    for (int d = 1; (int64_t)d * d <= ranks; d++)
        if (ranks % d == 0)
            pr = d;
    *pr_out = pr;
    *pc_out = ranks / pr;
}

bb_status_t bb_layout_check(const bb_layout_t *layout, int64_t n, int ranks, char *err,
                            size_t errlen)
{
    char name[96];
    bb_layout_format(layout, name, sizeof name);
    if (layout->kind == BB_LAYOUT_SPATIAL && layout->dims[0] > 0
        && (int64_t)layout->dims[0] * layout->dims[1] * layout->dims[2] != ranks) {
        bb_errorf(err, errlen, "'%s' does not fit a code of %d ranks (PX*PY*PZ must equal "
                  "the ranks)", name, ranks);
        return BB_ERR_ARG;
    }
    if (layout->kind != BB_LAYOUT_BC2D)
        return BB_OK;
    int pr, pc;
    bb_layout_grid(layout, ranks, &pr, &pc);
    if (layout->gm > 0 && layout->uplo) {
        /* a trapezoid's columns are given: N must be its count */
        int64_t want = bb_layout_trap_count(layout->rows, layout->cols, layout->uplo,
                                            layout->diag);
        if (n != want) {
            bb_errorf(err, errlen, "'%s' holds %lld elements (its trapezoid), not N = %lld: "
                      "give --elements %lld", name, (long long)want, (long long)n,
                      (long long)want);
            return BB_ERR_ARG;
        }
    } else if (layout->gm > 0 && layout->rows > 0 && n % layout->rows == 0
               && layout->ja - 1 + n / layout->rows > layout->gn) {
        bb_errorf(err, errlen, "'%s' does not fit N = %lld: the %lld x %lld submatrix at "
                  "(%lld, %lld) leaves the %lld x %lld matrix (at most %lld elements)", name,
                  (long long)n, (long long)layout->rows, (long long)(n / layout->rows),
                  (long long)layout->ia, (long long)layout->ja, (long long)layout->gm,
                  (long long)layout->gn,
                  (long long)(layout->rows * (layout->gn - layout->ja + 1)));
        return BB_ERR_ARG;
    }
    if (layout->gm > 0 && (layout->ia < 1 || layout->ja < 1
                           || layout->ia - 1 + layout->rows > layout->gm
                           || layout->gm * layout->gn > INT32_MAX)) {
        bb_errorf(err, errlen, "'%s': the submatrix leaves its matrix, or the matrix has more "
                  "than %d elements", name, INT32_MAX);
        return BB_ERR_ARG;
    }
    if (layout->rows < 1 || layout->mb < 1 || layout->nb < 1
        || (!layout->uplo && n % layout->rows != 0)) {
        bb_errorf(err, errlen, "'%s' does not fit N = %lld: N must be ROWS times the column "
                  "count (a multiple of %lld)", name, (long long)n, (long long)layout->rows);
        return BB_ERR_ARG;
    }
    /* A grid smaller than the code is ScaLAPACK's context over the code's
     * first PR*PC ranks: the others hold nothing on this side. */
    if ((int64_t)pr * pc > ranks || layout->rsrc >= pr || layout->csrc >= pc) {
        bb_errorf(err, errlen, "'%s' does not fit a code of %d ranks (PR*PC must not exceed "
                  "the ranks)", name, ranks);
        return BB_ERR_ARG;
    }
    return BB_OK;
}

/* bc2d: rank's elements, local column outer, local row inner (ScaLAPACK's
 * local array); the layout checked.  A submatrix: the local array is the
 * whole M x N matrix's, of which the elements inside it are listed, and
 * slots (may be NULL) gets each one's position in that array; *full_out
 * the array's length. */
static int64_t bb_bc2d_indices(const bb_layout_t *l, int64_t n, int rank, int ranks,
                               int64_t *idx, int64_t *slots, int64_t *full_out)
{
    int pr, pc;
    bb_layout_grid(l, ranks, &pr, &pc);
    int sub = l->gm > 0;
    int64_t m = sub ? l->gm : l->rows, cols = sub ? l->gn : n / l->rows, k = 0, pos = 0;
    /* the submatrix's rows [i0, i0 + sm), columns [j0, j0 + sn) */
    int64_t i0 = sub ? l->ia - 1 : 0, j0 = sub ? l->ja - 1 : 0;
    int64_t sm = l->rows, sn = sub ? bb_layout_sub_cols(l, n) : cols;
    int64_t *colstart = NULL;  /* a trapezoid: its column j's first element number */
    *full_out = 0;
    if ((int64_t)rank >= (int64_t)pr * pc)
        return 0;  /* outside the grid */
    if (l->uplo) {
        colstart = malloc((size_t)(sn + 1) * sizeof *colstart);
        if (colstart == NULL)
            return -1;
        int64_t first, count;
        colstart[0] = 0;
        for (int64_t j = 0; j < sn; j++) {
            bb_trap_column(j, sm, sn, l->uplo, l->diag, &first, &count);
            colstart[j + 1] = colstart[j] + count;
        }
    }
    int myr = rank / pc, myc = rank % pc;
    /* process row (b + RSRC) % PR holds row block b: its first is the
     * distance from the source */
    for (int64_t cb = (myc - l->csrc + pc) % pc; cb * l->nb < cols; cb += pc)
        for (int64_t j = cb * l->nb; j < (cb + 1) * l->nb && j < cols; j++)
            for (int64_t rb = (myr - l->rsrc + pr) % pr; rb * l->mb < m; rb += pr)
                for (int64_t i = rb * l->mb; i < (rb + 1) * l->mb && i < m; i++, pos++) {
                    int64_t si = i - i0, sj = j - j0;
                    if (si < 0 || si >= sm || sj < 0 || sj >= sn)
                        continue;
                    if (colstart != NULL) {
                        if (!bb_layout_trap_in(si, sj, sm, sn, l->uplo, l->diag))
                            continue;
                        int64_t first, count;
                        bb_trap_column(sj, sm, sn, l->uplo, l->diag, &first, &count);
                        idx[k] = colstart[sj] + si - first;
                    } else {
                        idx[k] = si + sj * sm;
                    }
                    if (slots != NULL)
                        slots[k] = pos;
                    k++;
                }
    free(colstart);
    *full_out = pos;
    return k;
}

bb_status_t bb_layout_indices(const bb_layout_t *layout, int64_t n, int rank,
                              int ranks, int64_t **indices_out, int64_t *count_out)
{
    if (layout == NULL || indices_out == NULL || count_out == NULL || n < 0
        || n > INT32_MAX || ranks < 1 || rank < 0 || rank >= ranks)
        return BB_ERR_ARG;
    int dims[3] = {layout->dims[0], layout->dims[1], layout->dims[2]};
    /* A hand-built block of 0 would never advance (and < 0 go backwards). */
    if (layout->kind == BB_LAYOUT_BLOCK_CYCLIC
        && (layout->block < 1 || layout->block > INT32_MAX))
        return BB_ERR_ARG;
    if (layout->kind == BB_LAYOUT_BC2D && bb_layout_check(layout, n, ranks, NULL, 0) != BB_OK)
        return BB_ERR_ARG;
    if (layout->kind == BB_LAYOUT_SPATIAL || layout->kind == BB_LAYOUT_SPATIAL_SHUFFLED) {
        if (dims[0] <= 0 || layout->kind == BB_LAYOUT_SPATIAL_SHUFFLED)
            bb_dims3(ranks, dims);
        else if (dims[1] <= 0 || dims[2] <= 0
                 || (int64_t)dims[0] * dims[1] > ranks
                 || (int64_t)dims[0] * dims[1] * dims[2] != ranks)
            return BB_ERR_ARG;  /* the first product bounds the second */
    }
    /* Upper bound on this rank's count, so one allocation suffices. */
    int64_t first, cnt;
    bb_std_block(n, rank, ranks, &first, &cnt);
    int64_t cap = n;
    int64_t *idx = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *idx);
    if (idx == NULL)
        return BB_ERR_NOMEM;
    int64_t k = 0;
    switch (layout->kind) {
    case BB_LAYOUT_STD:
        for (int64_t i = 0; i < cnt; i++)
            idx[k++] = first + i;
        break;
    case BB_LAYOUT_STD_CEIL: {
        int64_t b = (n + ranks - 1) / ranks;
        int64_t lo = (int64_t)rank * b < n ? (int64_t)rank * b : n;
        int64_t hi = lo + b < n ? lo + b : n;
        for (int64_t g = lo; g < hi; g++)
            idx[k++] = g;
        break;
    }
    case BB_LAYOUT_BLOCK_IRREGULAR: {
        /* weights 1..8 drawn from the seed; boundaries floor(n * W_<r / W) */
        int64_t w_total = 0, w_before = 0;
        for (int r = 0; r < ranks; r++) {
            uint64_t s = layout->seed * 0x100000001B3ull + (uint64_t)r;
            int64_t w = 1 + (int64_t)(bb_splitmix(&s) % 8);
            if (r < rank)
                w_before += w;
            if (r == rank)
                cnt = w;
            w_total += w;
        }
        int64_t lo = (int64_t)(((__int128)n * w_before) / w_total);
        int64_t hi = (int64_t)(((__int128)n * (w_before + cnt)) / w_total);
        for (int64_t g = lo; g < hi; g++)
            idx[k++] = g;
        break;
    }
    case BB_LAYOUT_BLOCK_REVERSE: {
        int64_t f2, c2;
        bb_std_block(n, ranks - 1 - rank, ranks, &f2, &c2);
        for (int64_t i = 0; i < c2; i++)
            idx[k++] = f2 + i;
        break;
    }
    case BB_LAYOUT_CYCLIC:
        for (int64_t g = rank; g < n; g += ranks)
            idx[k++] = g;
        break;
    case BB_LAYOUT_BLOCK_CYCLIC: {
        int64_t b = layout->block;
        for (int64_t lo = (int64_t)rank * b; lo < n; lo += b * ranks)
            for (int64_t g = lo; g < lo + b && g < n; g++)
                idx[k++] = g;
        break;
    }
    case BB_LAYOUT_SPATIAL:
    case BB_LAYOUT_SPATIAL_SHUFFLED: {
        /* n atoms on an L x L x nz lattice, x fastest; L^3 >= n */
        int64_t L = 1;
        while (L * L * L < n)
            L++;
        int64_t nz = n > 0 ? (n + L * L - 1) / (L * L) : 1;
        for (int64_t g = 0; g < n; g++) {
            int64_t x = g % L, y = (g / L) % L, z = g / (L * L);
            int64_t rx = x * dims[0] / L, ry = y * dims[1] / L, rz = z * dims[2] / nz;
            if (rx + dims[0] * (ry + dims[1] * rz) == rank)
                idx[k++] = g;
        }
        if (layout->kind == BB_LAYOUT_SPATIAL_SHUFFLED) {
            /* an MD code's local order after neighbour-list sorting: the
             * same owners, no contiguous runs (seeded per rank) */
            uint64_t s = layout->seed * 0x100000001B3ull + (uint64_t)rank;
            for (int64_t i = k - 1; i > 0; i--) {
                int64_t j = (int64_t)(bb_splitmix(&s) % (uint64_t)(i + 1));
                int64_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
            }
        }
        break;
    }
    case BB_LAYOUT_ROOT:
        if (rank == 0)
            for (int64_t g = 0; g < n; g++)
                idx[k++] = g;
        break;
    case BB_LAYOUT_BC2D: {
        int64_t full;
        k = bb_bc2d_indices(layout, n, rank, ranks, idx, NULL, &full);
        if (k < 0) {
            free(idx);
            return BB_ERR_NOMEM;
        }
        break;
    }
    case BB_LAYOUT_RANDOM: {
        /* a seeded permutation of [0, n), cut into standardized blocks */
        int64_t *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
        if (perm == NULL) {
            free(idx);
            return BB_ERR_NOMEM;
        }
        for (int64_t g = 0; g < n; g++)
            perm[g] = g;
        uint64_t s = layout->seed;
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(bb_splitmix(&s) % (uint64_t)(i + 1));
            int64_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        }
        for (int64_t i = 0; i < cnt; i++)
            idx[k++] = perm[first + i];
        free(perm);
        break;
    }
    default:
        free(idx);
        return BB_ERR_ARG;
    }
    *indices_out = idx;
    *count_out = k;
    return BB_OK;
}

/* The layouts that are exactly a regular map (their generator above gives
 * the same indices: tests/unit/test-redist-layout checks it) carry its
 * descriptor, so that plans between two of them are closed-form: std is the
 * standardized distribution; std-ceil one block of ceil(N/P) per rank;
 * cyclic blocks of 1; root one block of N (all on rank 0). */
bb_status_t bb_layout_map(const bb_layout_t *layout, int64_t n, int rank,
                          int ranks, int64_t epoch, bb_map_t **map_out)
{
    if (layout != NULL && n >= 0 && n <= INT32_MAX && ranks >= 1 && rank >= 0
        && rank < ranks) {
        int64_t ceil_block = (n + ranks - 1) / ranks;
        switch (layout->kind) {
        case BB_LAYOUT_STD:
            return bb_map_create_std(n, rank, ranks, epoch, map_out);
        case BB_LAYOUT_STD_CEIL:
            return bb_map_create_block_cyclic(n, ceil_block > 0 ? ceil_block : 1, rank, ranks,
                                              epoch, map_out);
        case BB_LAYOUT_CYCLIC:
            return bb_map_create_block_cyclic(n, 1, rank, ranks, epoch, map_out);
        case BB_LAYOUT_BLOCK_CYCLIC:
            if (layout->block >= 1 && layout->block <= INT32_MAX)
                return bb_map_create_block_cyclic(n, layout->block, rank, ranks, epoch,
                                                  map_out);
            break; /* refused below, as before */
        case BB_LAYOUT_ROOT:
            return bb_map_create_block_cyclic(n, n > 0 ? n : 1, rank, ranks, epoch, map_out);
        case BB_LAYOUT_BC2D: {
            if (bb_layout_check(layout, n, ranks, NULL, 0) != BB_OK)
                break; /* refused below, as before */
            /* a grid smaller than the code: the library's 2D descriptor
             * spans a whole code, so these maps are indices (directory) */
            if (layout->pr > 0 && (int64_t)layout->pr * layout->pc < ranks)
                break;
            if (layout->gm > 0)
                break; /* a submatrix: indices */
            bb_map_grid_t g = {layout->rows, n / layout->rows, layout->mb, layout->nb, 0, 0,
                               layout->rsrc, layout->csrc};
            bb_layout_grid(layout, ranks, &g.pr, &g.pc);
            return bb_map_create_block_cyclic_2d(&g, rank, epoch, map_out);
        }
        default:
            break;
        }
    }
    int64_t *idx = NULL, cnt = 0;
    bb_status_t st = bb_layout_indices(layout, n, rank, ranks, &idx, &cnt);
    if (st != BB_OK)
        return st;
    st = bb_map_create(n, idx, cnt, epoch, map_out);
    free(idx);
    return st;
}

bb_status_t bb_layout_slots(const bb_layout_t *layout, int64_t n, int rank, int ranks,
                            int64_t **slots_out, int64_t *count_out, int64_t *full_out)
{
    if (layout == NULL || slots_out == NULL || count_out == NULL || full_out == NULL)
        return BB_ERR_ARG;
    int64_t *idx = NULL, cnt = 0;
    bb_status_t st = bb_layout_indices(layout, n, rank, ranks, &idx, &cnt);
    if (st != BB_OK)
        return st;
    int64_t full = cnt;
    if (layout->kind == BB_LAYOUT_BC2D && layout->gm > 0)
        /* idx as the scratch: each index is overwritten by its slot */
        cnt = bb_bc2d_indices(layout, n, rank, ranks, idx, idx, &full);
    else
        for (int64_t i = 0; i < cnt; i++)
            idx[i] = i;
    if (cnt < 0) {
        free(idx);
        return BB_ERR_NOMEM;
    }
    *slots_out = idx;
    *count_out = cnt;
    *full_out = full;
    return BB_OK;
}
