/* layout.h: bbench-redist's data layouts (layout.c) and its fixture
 * (fixture.c): how N elements lie on a code's ranks, the values they carry
 * and the check of what arrived.  Private to bench/redist; conventions are
 * those of <bbench.h>. */
#ifndef BB_REDIST_LAYOUT_H
#define BB_REDIST_LAYOUT_H

#include "bbench.h"

/* ------------------------------------------------------------------------ */
/* Redistribution layouts (layout.c)                                        */
/* ------------------------------------------------------------------------ */

/* Layout generators, deterministic from (N, ranks, seed). */
typedef enum bb_layout_kind {
    BB_LAYOUT_STD = 0,          /* "std": the standardized distribution */
    BB_LAYOUT_STD_CEIL,         /* "std-ceil": blocks of ceil(N/P) */
    BB_LAYOUT_BLOCK_IRREGULAR,  /* "block-irregular[:SEED]": blocks of
                                   weights 1..8 drawn from SEED (default 1) */
    BB_LAYOUT_BLOCK_REVERSE,    /* "block-reverse": rank r holds the std block
                                   of rank P-1-r */
    BB_LAYOUT_CYCLIC,           /* "cyclic": g % P */
    BB_LAYOUT_BLOCK_CYCLIC,     /* "block-cyclic:B": blocks of B, round robin */
    BB_LAYOUT_SPATIAL,          /* "spatial[:PX,PY,PZ]": atoms on an L*L*nz
                                   lattice (x fastest), owned by subdomain;
                                   dims from P when not given */
    BB_LAYOUT_RANDOM,           /* "random[:SEED]": a seeded permutation of
                                   [0, N) cut into std blocks */
    BB_LAYOUT_SPATIAL_SHUFFLED, /* "spatial-shuffled[:SEED]": spatial's
                                   ownership (dims from P), each rank's
                                   elements in a seeded random local order */
    BB_LAYOUT_ROOT,             /* "root": all of [0, N) on rank 0, in order
                                   (a code that does not adopt maps) */
    BB_LAYOUT_BC2D,             /* "bc2d:ROWS,MB,NB[,PR,PC[,RSRC,CSRC]]": a
                                   ScaLAPACK matrix: N = ROWS x N/ROWS,
                                   column-major (g = i + j ROWS), in MB x NB
                                   blocks on a PR x PC grid (rank pr PC + pc)
                                   from process (RSRC, CSRC), each rank's
                                   elements in its local column-major order;
                                   PR x PC from P when not given; a grid of
                                   PR*PC < P ranks is the code's first PR*PC
                                   ranks, the others hold nothing;
                                   "...@IA,JA,M,N[,UPLO,DIAG,COLS]": the
                                   ROWS x N/ROWS submatrix at (IA, JA)
                                   (1-based) of an M x N matrix so
                                   distributed, or the trapezoid (UPLO U or
                                   L, DIAG U unit or N) of its ROWS x COLS
                                   submatrix: N counts the submatrix's (the
                                   trapezoid's) elements, numbered
                                   column-major among themselves, each
                                   rank's in the local column-major order of
                                   the whole M x N matrix */
    BB_LAYOUT_KINDS
} bb_layout_kind_t;

typedef struct bb_layout {
    bb_layout_kind_t kind;
    int64_t block;   /* block-cyclic */
    int dims[3];     /* spatial; 0: chosen from the rank count */
    uint64_t seed;   /* block-irregular, random */
    int64_t rows, mb, nb;    /* bc2d: matrix rows, block rows and columns */
    int pr, pc, rsrc, csrc;  /* bc2d: grid (0: from the rank count), source */
    int64_t ia, ja, gm, gn;  /* bc2d submatrix: corner (1-based), the whole
                                matrix's rows and columns; gm 0: none */
    int64_t cols;            /* bc2d trapezoid: the submatrix's columns */
    char uplo, diag;         /* bc2d trapezoid: 'U'/'L', 'U'/'N'; 0: none */
} bb_layout_t;

/* Local.  Parse a layout name as above; BB_ERR_PARSE with err saying why. */
bb_status_t bb_layout_parse(const char *text, bb_layout_t *layout_out,
                            char *err, size_t errlen);
/* Local.  The canonical text of a layout ("random:1"). */
void bb_layout_format(const bb_layout_t *layout, char *buf, size_t len);
/* Local.  The indices rank of ranks holds.  BB_ERR_ARG for spatial dims
 * whose product is not ranks (checked without overflow) and for a
 * block-cyclic block outside [1, INT32_MAX].  Caller owns *indices_out
 * (bb_free). */
bb_status_t bb_layout_indices(const bb_layout_t *layout, int64_t n, int rank,
                              int ranks, int64_t **indices_out,
                              int64_t *count_out);
/* Local.  Whether layout can lay out n elements on ranks ranks: BB_OK, or
 * BB_ERR_ARG with err saying why (spatial dims whose product is not ranks;
 * bc2d: N not a multiple of ROWS, a grid of more than ranks ranks, a
 * source outside the grid). */
bb_status_t bb_layout_check(const bb_layout_t *layout, int64_t n, int ranks, char *err,
                            size_t errlen);
/* Local.  ScaLAPACK's p?trmr2d trapezoid of an m x n matrix (0-based i,
 * j; uplo 'U' or 'L', diag 'U' leaves the diagonal out): upper holds
 * i <= j + max(0, m - n), lower i >= j - max(0, n - m) (the test driver
 * pdtrmrdrv.c's check: a tall upper or a wide lower trapezoid has its
 * diagonal run into the bottom-right corner); and its element count. */
int bb_layout_trap_in(int64_t i, int64_t j, int64_t m, int64_t n, char uplo, char diag);
int64_t bb_layout_trap_count(int64_t m, int64_t n, char uplo, char diag);
/* Local.  A bc2d submatrix's columns for n elements (COLS for a
 * trapezoid, else n / ROWS); 0 for any other layout. */
int64_t bb_layout_sub_cols(const bb_layout_t *layout, int64_t n);
/* Local.  Where rank's elements (bb_layout_indices's order) sit in its
 * local array: *full_out elements (a bc2d submatrix's: all of the M x N
 * matrix's local array; otherwise the count) and (*slots_out)[i] the
 * position of element i (identity but for a submatrix).  Caller owns
 * *slots_out (free). */
bb_status_t bb_layout_slots(const bb_layout_t *layout, int64_t n, int rank, int ranks,
                            int64_t **slots_out, int64_t *count_out, int64_t *full_out);
/* Local.  A bc2d layout's grid on ranks ranks: as given, else the most
 * square PR x PC = ranks with PR <= PC. */
void bb_layout_grid(const bb_layout_t *layout, int ranks, int *pr_out, int *pc_out);
/* Local.  One step of the seeded 64-bit generator the layouts draw from
 * (splitmix64); the fixture's checksum uses it as a mixing hash. */
uint64_t bb_splitmix(uint64_t *state);
/* Local.  The same as a map with the given epoch (caller owns it); std,
 * std-ceil, cyclic, block-cyclic:B, root and bc2d carry their regular descriptor
 * (bb_map_shape), the others are indices only. */
bb_status_t bb_layout_map(const bb_layout_t *layout, int64_t n, int rank,
                          int ranks, int64_t epoch, bb_map_t **map_out);

/* ------------------------------------------------------------------------ */
/* Redistribution fixture (fixture.c): data pattern and check               */
/* ------------------------------------------------------------------------ */

/* Checking (outside any timed region).  Element g, component c carries
 * (double)((g*3 + c)*4 + (k & 3)) at repetition k. */
#define BB_REDIST_SENTINEL (-1.0)
/* Local.  buf: count(map) * element_bytes bytes. */
void bb_rd_fill(const bb_map_t *map, int64_t element_bytes, int64_t k,
                double *buf);
void bb_rd_fill_sentinel(int64_t count, int64_t element_bytes, double *buf);

typedef struct bb_rd_check {
    int64_t bad_slots;        /* all ranks */
    int64_t slots;            /* checked values, all ranks */
    int checksum_ok;          /* hash sum and slot count match [0, N) exactly */
    int64_t first_bad_index;  /* lowest global index of a bad slot, or -1 */
} bb_rd_check_t;

/* Local, a test's planted fault: when the environment's
 * BB_REDIST_TEST_CORRUPT names who ("scalapack" or a method's name, or
 * "all"), the first value of buf (count(map) elements) is changed, as if
 * wrong in transit, so that a test shows the check failing the run.
 * Nothing otherwise, nor on a rank that received nothing. */
void bb_rd_test_corrupt(const char *who, const bb_map_t *map, double *buf);

/* Collective over comm (normally the link).  Ranks that received pass the
 * map they received into (others NULL).  Checks every slot against the
 * value function and a global checksum over [0, N) that catches duplicates
 * and gaps.  BB_OK or BB_ERR_VALIDATION on every rank; BB_ERR_MPI. */
bb_status_t bb_rd_check(MPI_Comm comm, const bb_map_t *map, int64_t n,
                        int64_t element_bytes, int64_t k, const double *buf,
                        bb_rd_check_t *check_out);

#endif /* BB_REDIST_LAYOUT_H */
