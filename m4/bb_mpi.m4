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
  BB_MPICC_FAMILY
  BB_MPICC_LINKS
  CC="$MPICC"
])

# BB_MPICC_FAMILY: whose wrapper $MPICC is (bb_mpicc_family: openmpi, mpich
# or other), asked of the wrapper itself: on Debian `mpicc` is whichever MPI
# the alternatives rank first, and installing another package (ScaLAPACK's
# pulls Open MPI in) can change it under the user.
AC_DEFUN([BB_MPICC_FAMILY], [
  AC_MSG_CHECKING([whose wrapper $MPICC is])
  AS_CASE([`$MPICC --showme:version 2>/dev/null`],
    [*"Open MPI"*], [bb_mpicc_family=openmpi bb_mpicc_name="Open MPI's"],
    [AS_CASE([`$MPICC -show 2>/dev/null`],
      [*mpich*], [bb_mpicc_family=mpich bb_mpicc_name="MPICH's"],
      [bb_mpicc_family=other bb_mpicc_name="an MPI"])])
  AC_MSG_RESULT([$bb_mpicc_family])
])

# BB_MPICC_LINKS: the wrapper links a trivial MPI program, before AC_PROG_CC
# does the same and fails with "C compiler cannot create executables".  A
# wrapper whose MPI lacks its development files is the usual cause (Debian's
# openmpi-bin brings the wrapper, libopenmpi-dev the libraries it links):
# say so, and name the other MPI's wrapper where there is one.
AC_DEFUN([BB_MPICC_LINKS], [
  AC_MSG_CHECKING([whether $MPICC links an MPI program])
  cat > conftest_mpi.c <<_BBEOF
#include <mpi.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); MPI_Finalize(); return 0; }
_BBEOF
  AS_IF([$MPICC $CFLAGS $LDFLAGS conftest_mpi.c -o conftest_mpi$EXEEXT > conftest_mpi.err 2>&1],
    [AC_MSG_RESULT([yes])
     rm -f conftest_mpi.c conftest_mpi.err conftest_mpi$EXEEXT],
    [AC_MSG_RESULT([no])
     cat conftest_mpi.err >&AS_MESSAGE_LOG_FD
     bb_mpicc_why=`grep -m 1 -E 'cannot find|rror' conftest_mpi.err`
     AS_IF([test -z "$bb_mpicc_why"], [bb_mpicc_why=`head -n 1 conftest_mpi.err`])
     rm -f conftest_mpi.c conftest_mpi.err conftest_mpi$EXEEXT
     AS_CASE([$bb_mpicc_family],
       [openmpi], [bb_mpicc_dev=libopenmpi-dev bb_mpicc_other=mpich],
       [mpich], [bb_mpicc_dev=libmpich-dev bb_mpicc_other=openmpi],
       [bb_mpicc_dev= bb_mpicc_other=])
     AS_IF([test -n "$bb_mpicc_dev" && command -v dpkg-query >/dev/null 2>&1 &&
            ! dpkg-query -W -f='${Status}' $bb_mpicc_dev 2>/dev/null | grep -q 'install ok installed'],
       [bb_mpicc_what="$bb_mpicc_name wrapper and $bb_mpicc_dev is missing: install it (apt-get install $bb_mpicc_dev)"],
       [bb_mpicc_what="$bb_mpicc_name wrapper and cannot link an MPI program ($bb_mpicc_why; config.log has the rest)"])
     AS_IF([test -n "$bb_mpicc_other" && command -v mpicc.$bb_mpicc_other >/dev/null 2>&1],
       [bb_mpicc_what="$bb_mpicc_what, or configure MPICC=mpicc.$bb_mpicc_other MPIEXEC=mpiexec.$bb_mpicc_other"])
     AC_MSG_ERROR([$MPICC is $bb_mpicc_what])])
])

# BB_PROG_MPIEXEC: the launcher used by tests and scripts.
AC_DEFUN([BB_PROG_MPIEXEC], [
  AC_ARG_VAR([MPIEXEC], [MPI launcher used by the tests and scripts (default: mpiexec)])
  dnl The launcher named like the wrapper first (mpicc.openmpi: mpiexec.openmpi),
  dnl then the one of the wrapper's MPI (Debian: mpiexec.mpich, mpiexec.openmpi),
  dnl so that a wrapper given alone does not get another MPI's mpiexec.
  bb_mpicc_suffix=`echo "$MPICC" | sed 's/ .*//; s|.*/||; s/^mpicc//'`
  AS_IF([test -z "$MPIEXEC" && test -n "$bb_mpicc_suffix"],
    [AC_CHECK_PROGS([MPIEXEC], [mpiexec$bb_mpicc_suffix mpirun$bb_mpicc_suffix], [])])
  AS_IF([test -z "$MPIEXEC" && test "$bb_mpicc_family" != other],
    [AC_CHECK_PROGS([MPIEXEC], [mpiexec.$bb_mpicc_family mpirun.$bb_mpicc_family], [])])
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
