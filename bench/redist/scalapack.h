/* scalapack.h: ScaLAPACK's Cpdgemr2d as a reference redistribution
 * (issue 26), in bench/redist/ so that libbbench never links ScaLAPACK.
 * Built with the real library when configure found one for this MPI
 * (HAVE_SCALAPACK, m4/bb_scalapack.m4); otherwise every create refuses,
 * saying why, so that callers need no #ifdef.  Private (not installed).
 *
 * How a bbench point becomes a ScaLAPACK matrix: an element of
 * element_bytes = 8k bytes is k doubles, k consecutive rows.  A bc2d side
 * (ROWS x N/ROWS elements, MB x NB blocks, PR x PC grid, source RSRC,
 * CSRC) is the k ROWS x N/ROWS matrix in k MB x NB blocks on that grid: its
 * local array, column-major with leading dimension k times its rows, is
 * bbench's local buffer (the elements in map order).  A 1D side is the same
 * matrix on a 1 x P grid in column blocks (ROWS 1 when neither side is
 * bc2d: a k x N matrix), its local array its columns in ascending order:
 * exactly bbench's buffer when the layout owns, in ascending order, the
 * columns numroc deals it (bb_scalapack_layout_block: cyclic NB 1,
 * block-cyclic:B NB B, std-ceil NB ceil(N/P), root NB N, std when its
 * blocks are those of std-ceil, any ascending layout on 1 rank; other
 * layouts are checked element by element against the block-cyclic
 * candidate and refused when they differ) and its blocks are whole columns
 * of a bc2d side's matrix.  Two bc2d sides must name one ROWS.
 *
 * In MDI mode the driver is ranks [0, Pd) of the link's communicator, the
 * engine [Pd, P), two disjoint grids inside a 1 x P grid of all (the
 * context Cpdgemr2d communicates in); in intra mode each side's grid holds
 * every rank (a 1 x P side is the grid of all itself).  A bc2d grid of
 * PR*PC ranks, fewer than its side's, is a context over the side's first
 * PR*PC ranks; the side's other ranks pass a descriptor of context -1 and
 * hold nothing (Cpdgemr2d's context of all still spans them).  '>' moves the driver's layout to the engine's, '<' back.
 *
 * A bc2d submatrix side (layout.h: ROWS x COLS at IA, JA of M x N) is the
 * k M x N matrix, its local array the whole matrix's (the caller stages
 * bbench's buffer into it: bb_layout_slots), the call Cpdgemr2d(k ROWS,
 * COLS, A, k (IA - 1) + 1, JA, ...) of that part only; a trapezoid
 * (both sides the same UPLO, DIAG and ROWS x COLS, 8-byte elements, since
 * ScaLAPACK's trapezoid is of doubles) Cpdtrmr2d.  The other side may be
 * a whole matrix of ROWS rows (bc2d or 1D) but not for a trapezoid.
 *
 * BLACS is global state: the grids of every live context share it.  The
 * first create starts it (MPI is already initialized, so BLACS does not
 * call MPI_Init), the last destroy ends it with Cblacs_exit(1) (every grid
 * and buffer freed, MPI left running), so that MPI_Finalize finds no BLACS
 * communicator and a later create starts it again.  Collective calls follow
 * runner.h's rules; one thread. */
#ifndef BB_REDIST_SCALAPACK_H
#define BB_REDIST_SCALAPACK_H

#include "layout.h"

typedef struct bb_scalapack_redist bb_scalapack_redist_t;

/* Setup cost on this rank (seconds), timed apart from the calls. */
typedef struct bb_scalapack_setup {
    double express_s;  /* deciding both layouts are block-cyclic (local) */
    double grid_s;     /* the BLACS grids (collective) */
    double desc_s;     /* the descriptors and local sizes (local) */
    double total_s;    /* inclusive of the above */
} bb_scalapack_setup_t;

/* Local.  1 when built with ScaLAPACK (*what_out: what configure found),
 * else 0 (*what_out: why not, with the Debian package to install).
 * what_out may be NULL. */
int bb_scalapack_available(const char **what_out);

/* Local.  1 when layout, for n elements on ranks ranks, is exactly
 * ScaLAPACK's 1 x ranks block-cyclic distribution of n columns with source
 * process 0 and ascending local order; *nb_out is then its block size
 * (>= 1).  Else 0 with the reason in reason (may be NULL).  Closed form for
 * cyclic, block-cyclic, std-ceil, std and root; O(n) per call for the other
 * kinds (every rank's indices compared). */
int bb_scalapack_layout_block(const bb_layout_t *layout, int64_t n, int ranks, int64_t *nb_out,
                              char *reason, size_t reason_len);

/* A side as ScaLAPACK holds it: a rows x cols matrix of elements
 * (column-major: element g is row g % rows, column g / rows) in mb x nb
 * blocks on a pr x pc grid (process pr pc + pc of the side: row-major, as
 * BLACS numbers a grid) from process (rsrc, csrc). */
typedef struct bb_scalapack_shape {
    int64_t rows, cols, mb, nb;
    int pr, pc, rsrc, csrc;
    int64_t ia, ja;  /* the copied submatrix's corner (1-based, elements) */
} bb_scalapack_shape_t;

/* Local.  1 when layout, for n elements on ranks ranks, is a ScaLAPACK
 * distribution of the rows x (n / rows) matrix (rows: the pair's, a bc2d
 * side's ROWS, else 1): a bc2d layout of those rows directly; a 1D
 * layout (bb_scalapack_layout_block) on a 1 x ranks grid when its blocks
 * are whole columns.  Else 0 with the reason. */
int bb_scalapack_layout_shape(const bb_layout_t *layout, int64_t n, int ranks, int64_t rows,
                              bb_scalapack_shape_t *shape_out, char *reason, size_t reason_len);

/* Collective over comm (the link's communicator: every rank passes the same
 * arguments but the buffers).  driver_ranks: Pd in MDI mode (1..P-1),
 * ignored in intra mode.  command: BB_REDIST_SEND ('>': driver_layout to
 * engine_layout) or BB_REDIST_RECEIVE ('<': back).  element_bytes: a
 * positive multiple of 8.  BB_OK with *ctx_out; BB_REFUSED alike on every
 * rank, without communicating, when ScaLAPACK is not built, when a layout
 * is not block-cyclic as above, or when k * N exceeds ScaLAPACK's 32-bit
 * int: reason says which ("cannot express ..."); BB_ERR_ARG for a bad
 * argument (local, before any MPI call; alike when the arguments are);
 * BB_ERR_NOMEM.  setup_out and reason may be NULL.  Caller owns *ctx_out
 * (bb_scalapack_redist_destroy). */
bb_status_t bb_scalapack_redist_create(MPI_Comm comm, bb_redist_mode_t mode, int driver_ranks,
                                       int command, int64_t n, int64_t element_bytes,
                                       const bb_layout_t *driver_layout,
                                       const bb_layout_t *engine_layout,
                                       bb_scalapack_redist_t **ctx_out,
                                       bb_scalapack_setup_t *setup_out, char *reason,
                                       size_t reason_len);
/* The same on a link (its communicator, mode and driver ranks). */
bb_status_t bb_scalapack_redist_create_on_link(const bb_redist_link_t *link, int command,
                                               int64_t n, int64_t element_bytes,
                                               const bb_layout_t *driver_layout,
                                               const bb_layout_t *engine_layout,
                                               bb_scalapack_redist_t **ctx_out,
                                               bb_scalapack_setup_t *setup_out,
                                               char *reason, size_t reason_len);

/* Collective over the context's communicator: one redistribution,
 * Cpdgemr2d (Cpdtrmr2d) from send (the sending side's local array on this
 * rank: bb_scalapack_redist_send_count elements, for a submatrix all of
 * its matrix's) to recv (the receiving side's: _recv_count).  Either may be NULL where its count is
 * 0.  BB_ERR_ARG (local: the other ranks would wait) for a NULL ctx or a
 * NULL buffer with a nonzero count. */
bb_status_t bb_scalapack_redist_execute(bb_scalapack_redist_t *ctx, const void *send, void *recv);

/* Local.  Elements this rank sends and receives (0 outside a side). */
int64_t bb_scalapack_redist_send_count(const bb_scalapack_redist_t *ctx);
int64_t bb_scalapack_redist_recv_count(const bb_scalapack_redist_t *ctx);
/* Local.  "1x2 NB=64 -> 1x2 NB=1000, 1 x 100000 doubles" into buf. */
void bb_scalapack_redist_describe(const bb_scalapack_redist_t *ctx, char *buf, size_t len);

/* Collective over the context's communicator: its grids freed (and BLACS
 * ended when it was the last live context).  NULL: nothing. */
void bb_scalapack_redist_destroy(bb_scalapack_redist_t *ctx);

#endif
