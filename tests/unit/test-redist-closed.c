/* test-redist-closed: the closed-form runs of a regular map pair
 * (bb_regular_runs, what bb_xplan_build_shapes plans from) against the
 * per-element plan's slot lists, for every (rank, peer) pair of a grid of N
 * (0, 1, primes, N < P, N not divisible), blocks (1, 3, 64, 1000, >= N and
 * the standardized distribution) and rank counts 1..4 on each side: the same
 * slots in the same order, the same counts, each peer's runs exactly its
 * list's contiguous runs; likewise 2D block-cyclic matrices (grids of 1..4
 * ranks, sources on the first or last process) against each other and the
 * 1D shapes.  The regular maps' indices against the layouts' generators
 * and a naive owner rule.  Serial, no MPI calls. */
#include "config.h"
#include "lib/redist-private.h"
#include "bench/redist/redist.h"
#include "../check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A shape of the grid: block >= 1 is block-cyclic, 0 the std distribution. */
static bb_regular_t shape_of(int64_t n, int64_t block, int size)
{
    if (block == 0)
        return (bb_regular_t){.kind = BB_MAP_SHAPE_STD, .n = n, .size = size};
    return (bb_regular_t){.kind = BB_MAP_SHAPE_BLOCK_CYCLIC, .n = n, .block = block,
                          .size = size};
}

/* A 2D shape of the grid (ScaLAPACK's matrix). */
static bb_regular_t grid_of(int64_t rows, int64_t cols, int64_t mb, int64_t nb, int pr, int pc,
                            int rsrc, int csrc)
{
    bb_map_grid_t g = {rows, cols, mb, nb, pr, pc, rsrc, csrc};
    return (bb_regular_t){.kind = BB_MAP_SHAPE_BLOCK_CYCLIC_2D, .n = rows * cols,
                          .size = pr * pc, .grid = g};
}

/* The owner of g by definition (independent of the closed forms). */
static int naive_owner(const bb_regular_t *sh, int64_t g)
{
    if (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D) {
        const bb_map_grid_t *q = &sh->grid;
        int64_t i = g % q->rows, j = g / q->rows;
        return (int)(((i / q->mb + q->rsrc) % q->pr) * q->pc + (j / q->nb + q->csrc) % q->pc);
    }
    if (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC)
        return (int)((g / sh->block) % sh->size);
    for (int r = 0; r < sh->size; r++) {
        int64_t first, cnt;
        bb_std_block(sh->n, r, sh->size, &first, &cnt);
        if (g >= first && g < first + cnt)
            return r;
    }
    return -1;
}

/* All ranks' maps of sh from the public constructors; each checked against
 * the naive rule (increasing g, owner r) and the descriptor it carries. */
static bb_map_t **make_maps(const bb_regular_t *sh)
{
    bb_map_t **m = calloc((size_t)sh->size, sizeof *m);
    for (int r = 0; r < sh->size; r++) {
        bb_status_t st = sh->kind == BB_MAP_SHAPE_STD
                             ? bb_map_create_std(sh->n, r, sh->size, 3, &m[r])
                         : sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D
                             ? bb_map_create_block_cyclic_2d(&sh->grid, r, 3, &m[r])
                             : bb_map_create_block_cyclic(sh->n, sh->block, r, sh->size, 3,
                                                          &m[r]);
        CHECK_MSG(st == BB_OK, "create n=%lld block=%lld r=%d/%d", (long long)sh->n,
                  (long long)sh->block, r, sh->size);
        int64_t k = 0, bad = 0, block = -1;
        int rank = -1, size = -1;
        const int64_t *idx = bb_map_indices(m[r]);
        for (int64_t g = 0; g < sh->n; g++)
            if (naive_owner(sh, g) == r)
                bad += k >= bb_map_count(m[r]) || idx[k++] != g;
        CHECK_MSG(bad == 0 && k == bb_map_count(m[r]) && bb_map_elements(m[r]) == sh->n
                      && k == bb_regular_below(sh, r, sh->n),
                  "indices of n=%lld block=%lld r=%d/%d", (long long)sh->n,
                  (long long)sh->block, r, sh->size);
        bb_map_grid_t g;
        CHECK_MSG(bb_map_shape(m[r], &block, &rank, &size) == sh->kind && rank == r
                      && size == sh->size && block == sh->block
                      && bb_map_grid(m[r], &g) == (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D)
                      && (sh->kind != BB_MAP_SHAPE_BLOCK_CYCLIC_2D
                          || memcmp(&g, &sh->grid, sizeof g) == 0),
                  "descriptor of n=%lld block=%lld r=%d/%d", (long long)sh->n,
                  (long long)sh->block, r, sh->size);
    }
    return m;
}

static void free_maps(bb_map_t **m, int size)
{
    for (int r = 0; r < size; r++)
        bb_map_free(m[r]);
    free(m);
}

/* One side: rank me of mine against other.  want[d] (wn[d] slots) is the
 * per-element plan's slot list of peer d on me.  The runs must cover
 * exactly those slots in that order, be in increasing slot order overall,
 * and be maximal per peer. */
static int check_side(const bb_regular_t *mine, int me, const bb_regular_t *other,
                      int **want, const int *wn, const char *what)
{
    int fails = failed;
    int64_t nr = bb_regular_runs(mine, me, other, NULL, 0);
    bb_regular_run_t *run = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *run);
    CHECK(bb_regular_runs(mine, me, other, run, nr) == nr);
    int *at = calloc((size_t)other->size, sizeof *at);
    int64_t next = 0, bad = 0;
    for (int64_t k = 0; k < nr; k++) {
        int d = run[k].peer;
        if (d < 0 || d >= other->size || run[k].len < 1 || run[k].first != next) {
            bad++;
            break;
        }
        next += run[k].len;
        for (int j = 0; j < run[k].len; j++)
            bad += at[d] >= wn[d] || want[d][at[d]++] != run[k].first + j;
    }
    int64_t per_peer_runs = 0;
    for (int d = 0; d < other->size; d++) {
        bad += at[d] != wn[d];  /* counts */
        per_peer_runs += bb_slot_runs_count(want[d], wn[d]);
    }
    check_at(bad == 0 && next == bb_regular_below(mine, me, mine->n), __LINE__,
             "%s n=%lld: rank %d of %d (block %lld) against %d (block %lld): runs differ "
             "from the per-element slot lists", what, (long long)mine->n, me, mine->size,
             (long long)mine->block, other->size, (long long)other->block);
    check_at(per_peer_runs == nr, __LINE__,
             "%s n=%lld: rank %d: %lld closed-form runs, %lld in the slot lists", what,
             (long long)mine->n, me, (long long)nr, (long long)per_peer_runs);
    free(run);
    free(at);
    return failed == fails;
}

/* One pair of shapes: the per-element plan (as bb_xplan_build makes it: a
 * sender's slots for each receiver in its storage order; the receiver's
 * ordinals of them in that same order) against the closed forms, for every
 * sender and every receiver. */
static void check_pair(const bb_regular_t *ss, const bb_regular_t *rs)
{
    int64_t n = ss->n;
    int ps = ss->size, pr = rs->size;
    bb_map_t **sm = make_maps(ss), **rm = make_maps(rs);
    int *owner = malloc((size_t)(n > 0 ? n : 1) * sizeof *owner);
    int *ord = malloc((size_t)(n > 0 ? n : 1) * sizeof *ord);
    for (int r = 0; r < pr; r++)
        for (int64_t i = 0; i < bb_map_count(rm[r]); i++) {
            owner[bb_map_indices(rm[r])[i]] = r;
            ord[bb_map_indices(rm[r])[i]] = (int)i;
        }
    /* spos[s][r], rpos[r][s] with their lengths */
    int ***spos = malloc((size_t)ps * sizeof *spos), ***rpos = malloc((size_t)pr * sizeof *rpos);
    int **sn = malloc((size_t)ps * sizeof *sn), **rn = malloc((size_t)pr * sizeof *rn);
    for (int s = 0; s < ps; s++) {
        spos[s] = malloc((size_t)pr * sizeof **spos);
        sn[s] = calloc((size_t)pr, sizeof **sn);
        for (int r = 0; r < pr; r++)
            spos[s][r] = malloc((size_t)(n > 0 ? n : 1) * sizeof ***spos);
    }
    for (int r = 0; r < pr; r++) {
        rpos[r] = malloc((size_t)ps * sizeof **rpos);
        rn[r] = calloc((size_t)ps, sizeof **rn);
        for (int s = 0; s < ps; s++)
            rpos[r][s] = malloc((size_t)(n > 0 ? n : 1) * sizeof ***rpos);
    }
    for (int s = 0; s < ps; s++)
        for (int64_t i = 0; i < bb_map_count(sm[s]); i++) {
            int64_t g = bb_map_indices(sm[s])[i];
            int r = owner[g];
            spos[s][r][sn[s][r]++] = (int)i;
            rpos[r][s][rn[r][s]++] = ord[g];
        }
    for (int s = 0; s < ps; s++)
        check_side(ss, s, rs, spos[s], sn[s], "send");
    for (int r = 0; r < pr; r++)
        check_side(rs, r, ss, rpos[r], rn[r], "recv");
    for (int s = 0; s < ps; s++) {
        for (int r = 0; r < pr; r++)
            free(spos[s][r]);
        free(spos[s]);
        free(sn[s]);
    }
    for (int r = 0; r < pr; r++) {
        for (int s = 0; s < ps; s++)
            free(rpos[r][s]);
        free(rpos[r]);
        free(rn[r]);
    }
    free(spos); free(rpos); free(sn); free(rn); free(owner); free(ord);
    free_maps(sm, ps);
    free_maps(rm, pr);
}

/* 1 when rank r of p's map of lay (bb_layout_map) holds its generator's
 * indices (bb_layout_indices) in the same order; *shape_out its
 * descriptor. */
static int map_is_generator(const bb_layout_t *lay, int64_t n, int r, int p,
                            bb_map_shape_t *shape_out)
{
    int64_t *idx = NULL, cnt = -1;
    bb_map_t *m = NULL;
    int ok = bb_layout_indices(lay, n, r, p, &idx, &cnt) == BB_OK
             && bb_layout_map(lay, n, r, p, 1, &m) == BB_OK && bb_map_count(m) == cnt
             && (cnt == 0 || memcmp(idx, bb_map_indices(m), (size_t)cnt * sizeof *idx) == 0);
    *shape_out = bb_map_shape(m, NULL, NULL, NULL);
    bb_map_free(m);
    bb_free(idx);
    return ok;
}

/* The layouts bb_layout_map marks regular give their generator's indices. */
static void check_layouts(int64_t n, int p)
{
    const char *specs[] = {"std", "std-ceil", "cyclic", "block-cyclic:3", "block-cyclic:64",
                           "root", "random:2"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        bb_layout_t lay;
        bb_layout_parse(specs[s], &lay, NULL, 0);
        for (int r = 0; r < p; r++) {
            bb_map_shape_t shape = BB_MAP_SHAPE_NONE;
            CHECK_MSG(map_is_generator(&lay, n, r, p, &shape), "%s n=%lld r=%d/%d: map differs "
                      "from the generator", specs[s], (long long)n, r, p);
            int regular = strcmp(specs[s], "random:2") != 0;
            CHECK_MSG((shape != BB_MAP_SHAPE_NONE) == regular, "%s: regular %d", specs[s],
                      regular);
        }
    }
}

/* bc2d layouts (grid from the rank count) give their generator's indices
 * through the 2D descriptor. */
static void check_layouts2d(void)
{
    const char *specs[] = {"bc2d:1,2,3", "bc2d:3,1,1", "bc2d:3,2,5", "bc2d:7,3,2"};
    const int64_t cols[] = {0, 1, 4, 13};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++)
        for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
            for (int p = 1; p <= 6; p++) {
                bb_layout_t lay;
                bb_layout_parse(specs[s], &lay, NULL, 0);
                int64_t n = lay.rows * cols[c];
                for (int r = 0; r < p; r++) {
                    bb_map_shape_t shape = BB_MAP_SHAPE_NONE;
                    int ok = map_is_generator(&lay, n, r, p, &shape)
                             && shape == BB_MAP_SHAPE_BLOCK_CYCLIC_2D;
                    CHECK_MSG(ok, "%s n=%lld r=%d/%d: map differs from the generator",
                              specs[s], (long long)n, r, p);
                }
            }
}

/* 2D shapes against 2D and 1D ones: every grid of 1..4 ranks (and 3 x 1,
 * 1 x 3), blocks that split rows and columns or hold them whole, the
 * source on the first or the last process. */
static void check_grids(void)
{
    const int64_t rowsv[] = {1, 3, 7}, colsv[] = {0, 1, 5, 12}, mbv[] = {1, 2, 5}, nbv[] = {1, 4};
    const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 3}, {3, 1}};
    enum { NG = 6 };
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++) {
            int64_t rows = rowsv[a], cols = colsv[b], n = rows * cols;
            bb_regular_t sh[3 * 2 * NG * 2];
            int ns = 0;
            for (size_t c = 0; c < 3; c++)
                for (size_t d = 0; d < 2; d++)
                    for (int e = 0; e < NG; e++)
                        for (int last = 0; last < 2; last++) {
                            int pr = grids[e][0], pc = grids[e][1];
                            if (last && pr * pc == 1)
                                continue;
                            sh[ns++] = grid_of(rows, cols, mbv[c], nbv[d], pr, pc,
                                               last ? pr - 1 : 0, last ? pc - 1 : 0);
                        }
            for (int i = 0; i < ns; i++) {
                for (int j = 0; j < ns; j += 3)  /* a third of the receivers: each kind */
                    check_pair(&sh[i], &sh[j]);
                const int64_t blocks[] = {0, 1, 3, n > 0 ? n : 1};
                for (int ranks = 1; ranks <= 4; ranks++)
                    for (size_t k = 0; k < 4; k++) {
                        bb_regular_t one = shape_of(n, blocks[k], ranks);
                        check_pair(&sh[i], &one);
                        check_pair(&one, &sh[i]);
                    }
            }
        }
}

int main(void)
{
    const int64_t ns[] = {0, 1, 2, 3, 5, 7, 13, 64, 97, 1000, 1009, 4099};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        int64_t n = ns[i];
        /* 0: std; n + 5 and n: one block holds everything */
        const int64_t blocks[] = {0, 1, 3, 64, 1000, n > 0 ? n : 1, n + 5};
        const size_t nb = sizeof blocks / sizeof *blocks;
        for (int ps = 1; ps <= 4; ps++)
            for (int pr = 1; pr <= 4; pr++)
                for (size_t a = 0; a < nb; a++)
                    for (size_t b = 0; b < nb; b++) {
                        bb_regular_t ss = shape_of(n, blocks[a], ps);
                        bb_regular_t rs = shape_of(n, blocks[b], pr);
                        check_pair(&ss, &rs);
                    }
        for (int p = 1; p <= 5; p++)
            check_layouts(n, p);
    }

    check_layouts2d();
    check_grids();

    /* The constructors' argument checks. */
    bb_map_grid_t bad[] = {{0, 2, 1, 1, 1, 1, 0, 0}, {2, -1, 1, 1, 1, 1, 0, 0},
                           {2, 2, 0, 1, 1, 1, 0, 0}, {2, 2, 1, 1, 0, 1, 0, 0},
                           {2, 2, 1, 1, 2, 1, 2, 0}, {2, 2, 1, 1, 1, 2, 0, -1},
                           {65536, 65536, 1, 1, 1, 1, 0, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bb_map_t *mm = NULL;
        CHECK_MSG(bb_map_create_block_cyclic_2d(&bad[i], 0, 0, &mm) == BB_ERR_ARG,
                  "2D grid %zu refused", i);
    }
    bb_map_grid_t good = {2, 3, 1, 1, 1, 2, 0, 1};
    bb_map_t *mm = NULL;
    CHECK(bb_map_create_block_cyclic_2d(&good, 2, 0, &mm) == BB_ERR_ARG);
    CHECK(bb_map_create_block_cyclic_2d(&good, 1, -1, &mm) == BB_ERR_ARG);
    bb_map_t *m = NULL;
    CHECK(bb_map_create_block_cyclic(10, 0, 0, 2, 0, &m) == BB_ERR_ARG);
    CHECK(bb_map_create_block_cyclic(10, 3, 2, 2, 0, &m) == BB_ERR_ARG);
    CHECK(bb_map_create_block_cyclic(10, 3, 0, 2, -1, &m) == BB_ERR_ARG);
    CHECK(bb_map_create_block_cyclic((int64_t)INT32_MAX + 1, 3, 0, 2, 0, &m) == BB_ERR_ARG);
    CHECK(bb_map_create_std(10, -1, 2, 0, &m) == BB_ERR_ARG);
    CHECK(bb_map_create_std(10, 0, 0, 0, &m) == BB_ERR_ARG);
    CHECK(bb_map_create_std(10, 0, 1, 0, NULL) == BB_ERR_ARG);
    /* a map from indices carries none, and a copy keeps the descriptor */
    int64_t idx[2] = {0, 1};
    CHECK(bb_map_create(2, idx, 2, 0, &m) == BB_OK
          && bb_map_shape(m, NULL, NULL, NULL) == BB_MAP_SHAPE_NONE);
    bb_map_free(m);
    CHECK(bb_map_create_block_cyclic(100, 7, 1, 3, 0, &m) == BB_OK);
    bb_map_t *c = bb_map_copy(m);
    int64_t block = 0;
    int rank = -1, size = -1;
    CHECK(c && bb_map_shape(c, &block, &rank, &size) == BB_MAP_SHAPE_BLOCK_CYCLIC && block == 7
          && rank == 1 && size == 3);
    bb_map_free(c);
    bb_map_free(m);

    printf("%d checks, %d failed\n", passed + failed, failed);
    return check_verdict();
}
