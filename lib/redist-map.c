/* redist-map.c: the standardized distribution, maps and their collective
 * validation. */
#include "config.h"
#include "internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Standardized distribution                                                */
/* ------------------------------------------------------------------------ */

void bb_std_block(int64_t n, int rank, int ranks, int64_t *first_out,
                  int64_t *count_out)
{
    if (ranks < 1) {  /* no distribution: nothing owned, no division by 0 */
        *first_out = *count_out = 0;
        return;
    }
    int64_t q = n / ranks, rem = n % ranks;
    *first_out = (int64_t)rank * q + (rank < rem ? rank : rem);
    *count_out = q + (rank < rem);
}

int bb_std_owner(int64_t n, int ranks, int64_t g)
{
    if (ranks < 1 || g < 0 || g >= n)
        return -1;
    int64_t q = n / ranks, rem = n % ranks;
    if (g < rem * (q + 1))
        return (int)(g / (q + 1));
    return (int)(rem + (g - rem * (q + 1)) / q);
}

/* ------------------------------------------------------------------------ */
/* Maps                                                                     */
/* ------------------------------------------------------------------------ */

bb_status_t bb_map_create(int64_t n, const int64_t *indices, int64_t count,
                          int64_t epoch, bb_map_t **map_out)
{
    if (map_out == NULL || n < 0 || n > INT32_MAX || count < 0
        || count > INT32_MAX || epoch < 0 || (count > 0 && indices == NULL))
        return BB_ERR_ARG;
    bb_map_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return BB_ERR_NOMEM;
    m->idx = malloc((size_t)(count > 0 ? count : 1) * sizeof *m->idx);
    if (m->idx == NULL) {
        free(m);
        return BB_ERR_NOMEM;
    }
    if (count > 0)
        memcpy(m->idx, indices, (size_t)count * sizeof *m->idx);
    m->n = n;
    m->count = count;
    m->epoch = epoch;
    *map_out = m;
    return BB_OK;
}

void bb_map_free(bb_map_t *map)
{
    if (map == NULL)
        return;
    free(map->idx);
    free(map);
}

bb_map_t *bb_map_copy(const bb_map_t *map)
{
    bb_map_t *m = NULL;
    if (map == NULL || bb_map_create(map->n, map->idx, map->count, map->epoch, &m) != BB_OK)
        return NULL;
    m->shape = map->shape;
    m->block = map->block;
    m->rank = map->rank;
    m->size = map->size;
    m->grid = map->grid;
    return m;
}

/* ------------------------------------------------------------------------ */
/* Regular maps and their closed forms                                      */
/* ------------------------------------------------------------------------ */

/* Local.  A map of sh's rank r, its indices materialized from the closed
 * form (so they equal the descriptor by construction). */
static bb_status_t bb_map_from_shape(const bb_regular_t *sh, int r, int64_t epoch,
                                     bb_map_t **map_out)
{
    int64_t cnt = bb_regular_below(sh, r, sh->n);
    bb_map_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return BB_ERR_NOMEM;
    m->idx = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *m->idx);
    if (m->idx == NULL) {
        free(m);
        return BB_ERR_NOMEM;
    }
    int64_t k = 0;
    for (int64_t g = bb_regular_next_own(sh, r, 0); g < sh->n; g = bb_regular_next_own(sh, r, g)) {
        int64_t e = bb_regular_end(sh, g);
        while (g < e)
            m->idx[k++] = g++;
    }
    m->n = sh->n;
    m->count = k;
    m->epoch = epoch;
    m->shape = sh->kind;
    m->block = sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC ? sh->block : 0;
    m->rank = r;
    m->size = sh->size;
    m->grid = sh->grid;
    *map_out = m;
    return BB_OK;
}

bb_status_t bb_map_create_block_cyclic(int64_t n, int64_t block, int rank, int size,
                                       int64_t epoch, bb_map_t **map_out)
{
    if (map_out == NULL || n < 0 || n > INT32_MAX || block < 1 || block > INT32_MAX
        || size < 1 || rank < 0 || rank >= size || epoch < 0)
        return BB_ERR_ARG;
    bb_regular_t sh = {.kind = BB_MAP_SHAPE_BLOCK_CYCLIC, .n = n, .block = block, .size = size};
    return bb_map_from_shape(&sh, rank, epoch, map_out);
}

bb_status_t bb_map_create_std(int64_t n, int rank, int size, int64_t epoch,
                              bb_map_t **map_out)
{
    if (map_out == NULL || n < 0 || n > INT32_MAX || size < 1 || rank < 0 || rank >= size
        || epoch < 0)
        return BB_ERR_ARG;
    bb_regular_t sh = {.kind = BB_MAP_SHAPE_STD, .n = n, .size = size};
    return bb_map_from_shape(&sh, rank, epoch, map_out);
}

bb_status_t bb_map_create_block_cyclic_2d(const bb_map_grid_t *grid, int rank, int64_t epoch,
                                          bb_map_t **map_out)
{
    if (map_out == NULL || grid == NULL || epoch < 0)
        return BB_ERR_ARG;
    const bb_map_grid_t *g = grid;
    if (g->rows < 1 || g->rows > INT32_MAX || g->cols < 0 || g->cols > INT32_MAX / g->rows
        || g->mb < 1 || g->mb > INT32_MAX || g->nb < 1 || g->nb > INT32_MAX || g->pr < 1
        || g->pc < 1 || g->pr > INT32_MAX / g->pc || g->rsrc < 0 || g->rsrc >= g->pr
        || g->csrc < 0 || g->csrc >= g->pc || rank < 0 || rank >= g->pr * g->pc)
        return BB_ERR_ARG;
    bb_regular_t sh = {.kind = BB_MAP_SHAPE_BLOCK_CYCLIC_2D, .n = g->rows * g->cols,
                       .size = g->pr * g->pc, .grid = *g};
    return bb_map_from_shape(&sh, rank, epoch, map_out);
}

int bb_map_grid(const bb_map_t *map, bb_map_grid_t *grid_out)
{
    if (map == NULL || map->shape != BB_MAP_SHAPE_BLOCK_CYCLIC_2D)
        return 0;
    if (grid_out != NULL)
        *grid_out = map->grid;
    return 1;
}

bb_map_shape_t bb_map_shape(const bb_map_t *map, int64_t *block_out, int *rank_out,
                            int *size_out)
{
    if (map == NULL || map->shape == BB_MAP_SHAPE_NONE)
        return BB_MAP_SHAPE_NONE;
    if (block_out)
        *block_out = map->block;
    if (rank_out)
        *rank_out = map->rank;
    if (size_out)
        *size_out = map->size;
    return map->shape;
}

int bb_map_shape_get(const bb_map_t *map, bb_regular_t *shape_out, int *rank_out)
{
    if (map == NULL || map->shape == BB_MAP_SHAPE_NONE)
        return 0;
    *shape_out = (bb_regular_t){map->shape, map->n, map->block, map->size, map->grid};
    *rank_out = map->rank;
    return 1;
}

/* The closed forms.  Block-cyclic with block b over P ranks: g is in block
 * j = g / b, held by j % P; rank r's blocks before a cycle c (of b * P
 * indices) are c full ones (only the globally last block is short, and
 * nothing of r lies beyond it).  b and P are at most 2^31 and n below
 * 2^31, so no product here passes 2^63. */
/* A 2D matrix is the product of two 1D block-cyclic distributions: its
 * rows over the grid's pr process rows and its columns over its pc
 * columns, each with its source process rotated to rank 0 (process q of a
 * dimension with source s is rank (q - s) mod P of the unrotated one). */
static bb_regular_t bb_grid_rows(const bb_regular_t *sh)
{
    return (bb_regular_t){.kind = BB_MAP_SHAPE_BLOCK_CYCLIC, .n = sh->grid.rows,
                          .block = sh->grid.mb, .size = sh->grid.pr};
}
static bb_regular_t bb_grid_cols(const bb_regular_t *sh)
{
    return (bb_regular_t){.kind = BB_MAP_SHAPE_BLOCK_CYCLIC, .n = sh->grid.cols,
                          .block = sh->grid.nb, .size = sh->grid.pc};
}
/* Rank r's unrotated row and column ranks. */
static void bb_grid_place(const bb_regular_t *sh, int r, int *row, int *col)
{
    const bb_map_grid_t *g = &sh->grid;
    *row = (r / g->pc - g->rsrc + g->pr) % g->pr;
    *col = (r % g->pc - g->csrc + g->pc) % g->pc;
}

static int bb_grid_owner(const bb_regular_t *sh, int64_t g)
{
    bb_regular_t rw = bb_grid_rows(sh), cl = bb_grid_cols(sh);
    int64_t m = sh->grid.rows;
    int row = (bb_regular_owner(&rw, g % m) + sh->grid.rsrc) % sh->grid.pr;
    int col = (bb_regular_owner(&cl, g / m) + sh->grid.csrc) % sh->grid.pc;
    return row * sh->grid.pc + col;
}

/* The owner's stretch: to the end of g's row block in its column, or,
 * where one process row holds every row, to the end of its column block. */
static int64_t bb_grid_end(const bb_regular_t *sh, int64_t g)
{
    bb_regular_t rw = bb_grid_rows(sh), cl = bb_grid_cols(sh);
    int64_t m = sh->grid.rows, j = g / m;
    if (sh->grid.pr == 1 || sh->grid.mb >= m)
        return bb_regular_end(&cl, j) * m;
    return j * m + bb_regular_end(&rw, g % m);
}

/* r's elements below x: its rows times its columns below x's column, and
 * its rows above x's row in x's column when r holds that column. */
static int64_t bb_grid_below(const bb_regular_t *sh, int r, int64_t x)
{
    bb_regular_t rw = bb_grid_rows(sh), cl = bb_grid_cols(sh);
    int64_t m = sh->grid.rows, j = x / m, i = x % m;
    int row, col;
    bb_grid_place(sh, r, &row, &col);
    int64_t k = bb_regular_below(&rw, row, m) * bb_regular_below(&cl, col, j);
    if (j < sh->grid.cols && bb_regular_owner(&cl, j) == col)
        k += bb_regular_below(&rw, row, i);
    return k;
}

/* r's first row in x's column at or after x's row when r holds that
 * column, else its first row in its next column. */
static int64_t bb_grid_next_own(const bb_regular_t *sh, int r, int64_t x)
{
    bb_regular_t rw = bb_grid_rows(sh), cl = bb_grid_cols(sh);
    int64_t m = sh->grid.rows, cols = sh->grid.cols, n = sh->n, j = x / m, i = x % m;
    int row, col;
    bb_grid_place(sh, r, &row, &col);
    int64_t first = bb_regular_next_own(&rw, row, 0);
    if (first >= m)
        return n; /* r holds no row */
    if (bb_regular_owner(&cl, j) == col) {
        int64_t ii = bb_regular_next_own(&rw, row, i);
        if (ii < m)
            return j * m + ii;
        j++;
    }
    int64_t jj = j < cols ? bb_regular_next_own(&cl, col, j) : cols;
    return jj < cols ? jj * m + first : n;
}

int bb_regular_owner(const bb_regular_t *sh, int64_t g)
{
    if (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D)
        return bb_grid_owner(sh, g);
    if (sh->kind == BB_MAP_SHAPE_STD)
        return bb_std_owner(sh->n, sh->size, g);
    return (int)((g / sh->block) % sh->size);
}

int64_t bb_regular_end(const bb_regular_t *sh, int64_t g)
{
    if (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D)
        return bb_grid_end(sh, g);
    if (sh->kind == BB_MAP_SHAPE_STD) {
        int64_t first, cnt;
        bb_std_block(sh->n, bb_std_owner(sh->n, sh->size, g), sh->size, &first, &cnt);
        return first + cnt;
    }
    if (sh->size == 1) /* one holder: its blocks touch */
        return sh->n;
    int64_t e = (g / sh->block + 1) * sh->block;
    return e < sh->n ? e : sh->n;
}

int64_t bb_regular_below(const bb_regular_t *sh, int r, int64_t x)
{
    if (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D)
        return bb_grid_below(sh, r, x);
    if (sh->kind == BB_MAP_SHAPE_STD) {
        int64_t first, cnt;
        bb_std_block(sh->n, r, sh->size, &first, &cnt);
        int64_t k = x - first;
        return k < 0 ? 0 : (k > cnt ? cnt : k);
    }
    int64_t b = sh->block, cyc = b * sh->size;
    int64_t t = x % cyc - (int64_t)r * b;
    return (x / cyc) * b + (t < 0 ? 0 : (t > b ? b : t));
}

int64_t bb_regular_next_own(const bb_regular_t *sh, int r, int64_t x)
{
    int64_t n = sh->n, g;
    if (x >= n)
        return n;
    if (sh->kind == BB_MAP_SHAPE_BLOCK_CYCLIC_2D)
        return bb_grid_next_own(sh, r, x);
    if (sh->kind == BB_MAP_SHAPE_STD) {
        int64_t first, cnt;
        bb_std_block(n, r, sh->size, &first, &cnt);
        if (cnt == 0 || x >= first + cnt)
            return n;
        return x < first ? first : x;
    }
    int64_t b = sh->block, cyc = b * sh->size, start = (x / cyc) * cyc, rem = x - start;
    if (rem < (int64_t)r * b) {
        g = start + (int64_t)r * b;
    } else if (rem < ((int64_t)r + 1) * b) {
        g = x;
    } else {
        if (cyc >= n - start) /* no next cycle (and no overflow forming it) */
            return n;
        g = start + cyc + (int64_t)r * b;
    }
    return g < n ? g : n;
}

/* Walk me's indices one stretch of other at a time: [g, e) has one holder
 * in other, and me's slots in it are [below(g), below(e)); the next index
 * of me's at or after e starts the next piece.  Consecutive pieces are
 * adjacent in me's slots, so a piece of the previous piece's holder
 * extends its run. */
int64_t bb_regular_runs(const bb_regular_t *mine, int me, const bb_regular_t *other,
                      bb_regular_run_t *out, int64_t cap)
{
    int64_t k = 0, lo = 0;
    int last = -1;
    for (int64_t g = bb_regular_next_own(mine, me, 0); g < mine->n;
         g = bb_regular_next_own(mine, me, g)) {
        int o = bb_regular_owner(other, g);
        int64_t e = bb_regular_end(other, g), hi = bb_regular_below(mine, me, e);
        if (o == last) {
            if (out && k - 1 < cap)
                out[k - 1].len += (int)(hi - lo);
        } else {
            if (out && k < cap)
                out[k] = (bb_regular_run_t){o, (int)lo, (int)(hi - lo)};
            k++;
            last = o;
        }
        lo = hi;
        g = e;
    }
    return k;
}

int64_t bb_map_elements(const bb_map_t *map) { return map->n; }
int64_t bb_map_count(const bb_map_t *map) { return map->count; }
int64_t bb_map_epoch(const bb_map_t *map) { return map->epoch; }
const int64_t *bb_map_indices(const bb_map_t *map) { return map->idx; }

/* Counting sort of items by destination: order_out[j] is the j-th item in
 * destination order (stable), displ the first slot of each destination.
 * cursor is scratch of p ints. */
void bb_bucket(const int *dest, int64_t n, int p, int *count, int *displ,
               int *cursor, int *order_out)
{
    for (int d = 0; d < p; d++)
        count[d] = 0;
    for (int64_t i = 0; i < n; i++)
        count[dest[i]]++;
    int acc = 0;
    for (int d = 0; d < p; d++) {
        displ[d] = cursor[d] = acc;
        acc += count[d];
    }
    for (int64_t i = 0; i < n; i++)
        order_out[cursor[dest[i]]++] = (int)i;
}

/* Validation sends every in-range index to its holder in the standardized
 * distribution of comm, which counts hits: 0 is a gap, > 1 a duplicate.
 * The sequence of collectives depends only on agreed values, so a bad map
 * on one rank can never leave another waiting. */
bb_status_t bb_map_validate(MPI_Comm comm, const bb_map_t *map,
                            bb_map_fault_t *fault_out)
{
    bb_map_fault_t fault;
    int p = 0, me = 0;
    bb_status_t st = BB_OK;
    memset(&fault, 0, sizeof fault);
    if (MPI_Comm_size(comm, &p) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return BB_ERR_MPI;
    int64_t n = map ? map->n : -1, cnt = map ? map->count : 0;
    size_t pp = (size_t)p;
    int *dest = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *dest);
    int *scount = calloc(pp, sizeof(int)), *sdispl = calloc(pp, sizeof(int));
    int *rcount = calloc(pp, sizeof(int)), *rdispl = calloc(pp, sizeof(int));
    int *cursor = calloc(pp, sizeof(int)), *order = NULL;
    int64_t *sbuf = NULL, *rbuf = NULL, *hits = NULL;
    int64_t out_of_range = 0, dups = 0, gaps = 0;
    int nomem = !dest || !scount || !sdispl || !rcount || !rdispl || !cursor;
    /* A regular map's indices are its descriptor's (made by the library
     * from it): when every rank claims the same descriptor, with its own
     * rank and this communicator's size, the maps partition [0, n) by
     * construction and no index needs to travel. */
    int claim = map != NULL && map->shape != BB_MAP_SHAPE_NONE && map->rank == me
                && map->size == p;
    int64_t local[7] = {n, map ? map->epoch : -1, nomem, map == NULL, claim,
                        map ? map->shape : 0, map ? map->block : 0}, mn[7], mx[7];
    if (bb_agree_minmax_fused(comm, local, 7, mn, mx) != MPI_SUCCESS) {
        st = BB_ERR_MPI;
        goto free_all;
    }
    fault.n_mismatch = mn[0] != mx[0];
    fault.epoch_mismatch = mn[1] != mx[1];
    fault.missing = mx[3] != 0;
    fault.resources = mx[2] != 0;
    int regular = mn[4] == 1 && mn[5] == mx[5] && mn[6] == mx[6];
    if (!nomem && !(regular && !fault.n_mismatch))
        for (int64_t i = 0; i < cnt; i++) {
            int64_t g = map->idx[i];
            if (g < 0 || g >= n) {
                out_of_range++;
                dest[i] = -1;
            } else {
                dest[i] = bb_std_owner(n, p, g);
            }
        }
    if (regular && !fault.n_mismatch && !fault.missing && !fault.resources) {
        /* agreed alike on every rank: none takes the exchange below */
        if (fault.epoch_mismatch)
            st = BB_REFUSED;
        goto free_all;
    }
    if (!fault.n_mismatch && !fault.missing && !fault.resources) {
        int64_t nvalid = 0, rtotal = 0, first, bn;
        for (int64_t i = 0; i < cnt; i++)
            if (dest[i] >= 0) {
                scount[dest[i]]++;
                nvalid++;
            }
        if (MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm) != MPI_SUCCESS) {
            st = BB_ERR_MPI;
            goto free_all;
        }
        for (int d = 0; d < p; d++) {
            rdispl[d] = (int)(rtotal < INT_MAX ? rtotal : 0);
            rtotal += rcount[d];
        }
        bb_std_block(n, me, p, &first, &bn);
        order = malloc((size_t)(nvalid > 0 ? nvalid : 1) * sizeof *order);
        sbuf = malloc((size_t)(nvalid > 0 ? nvalid : 1) * sizeof *sbuf);
        rbuf = malloc((size_t)(rtotal > 0 && rtotal <= INT_MAX ? rtotal : 1) * sizeof *rbuf);
        hits = calloc((size_t)(bn > 0 ? bn : 1), sizeof *hits);
        int64_t bad2 = (!order || !sbuf || !rbuf || !hits || rtotal > INT_MAX), anybad;
        if (bb_agree_max(comm, &bad2, 1, &anybad) != MPI_SUCCESS) {
            st = BB_ERR_MPI;
            goto free_all;
        }
        fault.resources = anybad != 0;
        if (!anybad) {
            int acc = 0;
            for (int d = 0; d < p; d++) {
                sdispl[d] = cursor[d] = acc;
                acc += scount[d];
            }
            for (int64_t i = 0; i < cnt; i++)
                if (dest[i] >= 0)
                    sbuf[cursor[dest[i]]++] = map->idx[i];
            if (MPI_Alltoallv(sbuf, scount, sdispl, MPI_INT64_T, rbuf, rcount, rdispl,
                              MPI_INT64_T, comm) != MPI_SUCCESS) {
                st = BB_ERR_MPI;
                goto free_all;
            }
            for (int64_t j = 0; j < rtotal; j++)
                hits[rbuf[j] - first]++; /* in range: we own the block */
            for (int64_t o = 0; o < bn; o++) {
                if (hits[o] == 0)
                    gaps++;
                else
                    dups += hits[o] - 1;
            }
        }
    }
    int64_t counts[3] = {out_of_range, dups, gaps}, sums[3];
    if (MPI_Allreduce(counts, sums, 3, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS) {
        st = BB_ERR_MPI;
        goto free_all;
    }
    fault.out_of_range = sums[0];
    fault.duplicates = sums[1];
    fault.gaps = sums[2];
    if (fault.out_of_range || fault.duplicates || fault.gaps || fault.n_mismatch
        || fault.epoch_mismatch || fault.missing || fault.resources)
        st = BB_REFUSED;
free_all:
    free(dest); free(scount); free(sdispl); free(rcount); free(rdispl); free(cursor);
    free(order); free(sbuf); free(rbuf); free(hits);
    if (fault_out != NULL)
        *fault_out = fault;
    return st;
}
