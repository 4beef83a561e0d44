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
  dnl The launcher named like the wrapper first (mpicc.openmpi: mpiexec.openmpi),
  dnl so that a wrapper given alone does not get another MPI's mpiexec.
  bb_mpicc_suffix=`echo "$MPICC" | sed 's/ .*//; s|.*/||; s/^mpicc//'`
  AS_IF([test -z "$MPIEXEC" && test -n "$bb_mpicc_suffix"],
    [AC_CHECK_PROGS([MPIEXEC], [mpiexec$bb_mpicc_suffix mpirun$bb_mpicc_suffix], [])])
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

# BB_CHECK_MPI_PKGCONFIG: does the MPI have a pkg-config module (MPICH ships
# mpich.pc, Open MPI ompi-c.pc)?  If so bbench.pc requires it (BB_PC_MPI), so
# that `pkg-config --cflags --libs bbench` works with a plain compiler;
# otherwise users compile with the MPI wrapper, as bbench.pc says.  The
# module must give the flags of the wrapper configure found: its include
# directory holds the mpi.h that $CC uses.
AC_DEFUN([BB_CHECK_MPI_PKGCONFIG], [
  AC_REQUIRE([PKG_PROG_PKG_CONFIG])
  BB_PC_MPI=
  AC_MSG_CHECKING([for a pkg-config module of the MPI])
  for bb_mod in mpich ompi-c mpi; do
    AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists $bb_mod 2>/dev/null], [
      bb_mod_cflags=`$PKG_CONFIG --cflags-only-I $bb_mod 2>/dev/null`
      bb_cc_show=`$CC -show 2>/dev/null || $CC --showme 2>/dev/null`
      dnl Accept it when the wrapper compiles with the same include path
      dnl (or the module adds none: mpi.h in a system directory).
      bb_mod_ok=yes
      for bb_i in $bb_mod_cflags; do
        case " $bb_cc_show " in *" $bb_i "*) ;; *) bb_mod_ok=no ;; esac
      done
      AS_IF([test "x$bb_mod_ok" = xyes], [BB_PC_MPI=$bb_mod; break])
    ])
  done
  AS_IF([test -n "$BB_PC_MPI"], [AC_MSG_RESULT([$BB_PC_MPI])],
    [AC_MSG_RESULT([none: bbench.pc tells users to compile with mpicc])])
  AC_SUBST([BB_PC_MPI])
])
