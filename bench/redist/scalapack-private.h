/* scalapack-private.h: the BLACS and ScaLAPACK functions scalapack.c
 * calls, declared here because ScaLAPACK ships no C header.  Checked against
 * Debian's libscalapack-mpich 2.2.1 (nm -D exports each name) and the BLACS
 * and REDIST sources of ScaLAPACK 2.2: the C interface (C prefix) passes
 * integers by value, the Fortran one (trailing _) by address; Int is a
 * 32-bit int in that build (no _64 symbols); an MPI communicator is passed
 * as itself (the C interface's system handle); a descriptor is 9 ints
 * (DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD).  Only scalapack.c
 * and its test include it, and only when HAVE_SCALAPACK is defined. */
#ifndef BB_SCALAPACK_PRIVATE_H
#define BB_SCALAPACK_PRIVATE_H

#include <mpi.h>

/* The descriptor's fields (0-based), as ScaLAPACK's DESC_ indices. */
enum {
    BB_DESC_DTYPE = 0, BB_DESC_CTXT, BB_DESC_M, BB_DESC_N, BB_DESC_MB, BB_DESC_NB,
    BB_DESC_RSRC, BB_DESC_CSRC, BB_DESC_LLD, BB_DESC_LEN
};

/* This process and the size of MPI_COMM_WORLD; calls MPI_Init only when
 * MPI is not initialized (never here: bbench initializes it first). */
void Cblacs_pinfo(int *mypnum, int *nprocs);
/* A BLACS system handle for comm (stored as is, not duplicated; the same
 * handle again for the same comm), and its release (slot 0, the world,
 * is never freed). */
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
/* Collective over the handle's communicator: *context is a system handle
 * on entry, a grid of nprow x npcol processes on exit (usermap: their
 * ranks in that communicator, column-major with leading dimension ldumap),
 * or -1 on a process outside the grid.  MPI_Comm_create, a dup and two
 * splits of the result. */
void Cblacs_gridmap(int *context, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
/* Frees the grid's four communicators. */
void Cblacs_gridexit(int context);
/* Frees every grid and the BLACS buffers; MPI_Finalize only when
 * not_done is 0 (we always pass 1: MPI outlives BLACS). */
void Cblacs_exit(int not_done);

/* Fortran: fills desc for an m x n matrix in mb x nb blocks from process
 * (irsrc, icsrc) of grid ictxt, local leading dimension lld; *info < 0
 * names a bad argument (-i: the i-th). */
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld,
               int *info);
/* Fortran: how many of n rows or columns in blocks of nb process iproc of
 * nprocs holds when the first block is on isrcproc. */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
            const int *nprocs);
/* Fortran, 1-based: the global index of local index indxloc of process
 * iproc; the process holding global index indxglob, and its local index
 * there (iproc is read only by indxl2g_). */
int indxl2g_(const int *indxloc, const int *nb, const int *iproc, const int *isrcproc,
             const int *nprocs);
int indxg2p_(const int *indxglob, const int *nb, const int *iproc, const int *isrcproc,
             const int *nprocs);
int indxg2l_(const int *indxglob, const int *nb, const int *iproc, const int *isrcproc,
             const int *nprocs);
/* Copies the m x n submatrix of A at (ia, ja) (1-based) to B at (ib, jb).
 * Every process of gcontext calls it (a grid holding both A's and B's
 * processes, 1 x P here); a process outside A's grid passes a descriptor
 * whose CTXT is -1 (likewise for B), and its a (or b) is not touched.  A is
 * not written (the prototype is not const). */
void Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca, double *b, int ib,
               int jb, int *descb, int gcontext);
/* The same for the trapezoid of the m x n submatrix (uplo "U" or "L",
 * diag "U": its diagonal left out, or "N"; only the first character is
 * read); nm -D exports it from libscalapack-mpich 2.2.1. */
void Cpdtrmr2d(char *uplo, char *diag, int m, int n, double *a, int ia, int ja, int *desca,
               double *b, int ib, int jb, int *descb, int gcontext);

#endif
