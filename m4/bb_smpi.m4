# BB_ARG_WITH_SMPI: --with-smpi builds bbench against SimGrid's SMPI, which
# runs the unmodified programs on a simulated platform (doc/simulate.md).
# Called before BB_PROG_MPICC and LT_INIT, because it chooses for both:
#  - MPICC=smpicc and MPIEXEC=smpirun unless given;
#  - SMPI_PRETEND_CC=1 for configure only: smpicc then links ordinary
#    programs, so that configure's "can run C programs" probe works (its
#    real output is a shared object that only smpirun can load; make runs
#    smpicc without the variable);
#  - LD from PATH: with SMPI_PRETEND_CC smpicc prints a warning on stdout,
#    which libtool would take for the linker's name;
#  - static libraries (--disable-shared): SMPI privatizes each simulated
#    rank's globals by loading the program once per rank, which covers the
#    libraries only when they are linked into it.
# BB_SMPI (config.h and Automake) selects the work-arounds of
# include/private/mpi-compat.h and the simulated record (runtime/simulated.c).  The man
# pages, made by running the programs, are not built (BB_PROG_HELP2MAN).
AC_DEFUN([BB_ARG_WITH_SMPI], [
  AC_ARG_WITH([smpi],
    [AS_HELP_STRING([--with-smpi],
       [build against SimGrid SMPI (smpicc, smpirun) for simulated runs; see doc/simulate.md])],
    [], [with_smpi=no])
  bb_smpi=no
  AS_CASE([$with_smpi],
    [no], [],
    [yes], [bb_smpi=yes],
    [AC_MSG_ERROR([--with-smpi takes no value (give MPICC=.../smpicc for another SimGrid)])])
  BB_SMPI_VERSION=
  AS_IF([test "x$bb_smpi" = xyes], [
    AS_IF([test -z "$MPICC"], [MPICC=smpicc])
    AS_IF([test -z "$MPIEXEC"], [MPIEXEC=smpirun])
    bb_smpicc_prog=`echo "$MPICC" | sed 's/ .*//'`
    AS_IF([command -v "$bb_smpicc_prog" >/dev/null 2>&1], [],
      [AC_MSG_ERROR([--with-smpi: $MPICC not found; on Debian: apt-get install libsimgrid-dev])])
    SMPI_PRETEND_CC=1
    export SMPI_PRETEND_CC
    AS_IF([test -z "$LD"], [AC_PATH_PROG([LD], [ld])])
    AS_IF([test "x$enable_shared" = xyes],
      [AC_MSG_ERROR([--with-smpi needs static libraries: drop --enable-shared])])
    enable_shared=no
    AC_MSG_CHECKING([the SimGrid version of $MPICC])
    BB_SMPI_VERSION=`$MPICC --version 2>/dev/null | sed -n 's/^SimGrid version //p' | sed 1q`
    AS_IF([test -z "$BB_SMPI_VERSION"],
      [AC_MSG_RESULT([none])
       AC_MSG_ERROR([--with-smpi: $MPICC --version does not name a SimGrid version; is it smpicc?])])
    AC_MSG_RESULT([$BB_SMPI_VERSION])
    AC_DEFINE([BB_SMPI], [1], [built against SimGrid SMPI (configure --with-smpi)])
    AC_DEFINE_UNQUOTED([BB_SMPI_VERSION_STRING], ["$BB_SMPI_VERSION"],
      [the SimGrid version smpicc named at configure time])
  ])
  AC_SUBST([BB_SMPI_VERSION])
  AM_CONDITIONAL([BB_SMPI], [test "x$bb_smpi" = xyes])
])

# BB_CHECK_SMPI: in an SMPI build, mpi.h is SMPI's and the SimGrid C API
# (sg_version_get, sg_host_count) links: the record names the simulator and
# counts the platform's hosts with it.
AC_DEFUN([BB_CHECK_SMPI], [
  AS_IF([test "x$bb_smpi" = xyes], [
    AC_MSG_CHECKING([whether $CC links SimGrid's C API])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#include <simgrid/version.h>
#include <simgrid/host.h>]],
        [[int a, b, c; sg_version_get(&a, &b, &c); return (int)sg_host_count();]])],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--with-smpi: $CC does not link SimGrid's C API (simgrid/version.h, simgrid/host.h)])])
  ])
])
