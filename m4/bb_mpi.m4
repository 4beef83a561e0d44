# BB_PROG_MPICC: use the MPI compiler wrapper as CC.  MPICC and MPIEXEC are
# precious so that `./configure MPICC=... MPIEXEC=...` is remembered.
AC_DEFUN([BB_PROG_MPICC], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper (default: mpicc)])
  AS_IF([test -z "$MPICC"], [AC_CHECK_PROGS([MPICC], [mpicc], [])])
  AS_IF([test -z "$MPICC"],
    [AC_MSG_ERROR([no MPI C compiler wrapper found; on Debian: apt-get install mpich libmpich-dev])])
  dnl A wrapper given by hand must exist, or AC_PROG_CC fails with a vaguer message.
  bb_mpicc_prog=`echo "$MPICC" | sed 's/ .*//'`
  AS_IF([command -v "$bb_mpicc_prog" >/dev/null 2>&1], [],
    [AC_MSG_ERROR([MPICC=$MPICC: no such program; on Debian: apt-get install mpich libmpich-dev])])
  CC="$MPICC"
])

# BB_PROG_MPIEXEC: the launcher used by tests and scripts.
AC_DEFUN([BB_PROG_MPIEXEC], [
  AC_ARG_VAR([MPIEXEC], [MPI launcher used by the tests and scripts (default: mpiexec)])
  AS_IF([test -z "$MPIEXEC"], [AC_CHECK_PROGS([MPIEXEC], [mpiexec mpirun], [])])
  AS_IF([test -z "$MPIEXEC"],
    [AC_MSG_ERROR([no MPI launcher found; on Debian: apt-get install mpich])])
  bb_mpiexec_prog=`echo "$MPIEXEC" | sed 's/ .*//'`
  AS_IF([command -v "$bb_mpiexec_prog" >/dev/null 2>&1], [],
    [AC_MSG_ERROR([MPIEXEC=$MPIEXEC: no such program; on Debian: apt-get install mpich])])
])

# BB_CHECK_MPI: the compiler builds and links an MPI 3 program.
AC_DEFUN([BB_CHECK_MPI], [
  AC_MSG_CHECKING([whether $CC builds and links an MPI program])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
      [[int p; MPI_Count c = 0; (void)c;
        MPI_Init_thread(0, 0, MPI_THREAD_FUNNELED, &p); MPI_Finalize();]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$CC cannot build MPI 3 programs; on Debian: apt-get install libmpich-dev])])
])
