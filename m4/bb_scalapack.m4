# BB_CHECK_SCALAPACK: ScaLAPACK's p?gemr2d, bbench-redist's reference
# redistribution (bench/redist/scalapack.c), optional:
# --with-scalapack[=auto|yes|no] (default auto: used when found).
#
# Candidates in order: the pkg-config modules scalapack-FLAVOUR and
# scalapack, then the libraries scalapack-FLAVOUR, scalapack-mpich,
# scalapack-openmpi and scalapack (FLAVOUR: mpich, openmpi or other, as
# BB_CHECK_LAUNCHER_KIND found it; it only orders the candidates and names
# the package to install).  A
# candidate is taken when a program calling every BLACS and ScaLAPACK
# function bbench-redist calls links with $CC, and when it is built for the
# same MPI: the linked program loads no MPI library (libmpi*, libmpich*,
# libopen-pal*, libsimgrid*) that a plain MPI program does not (ldd), since
# a ScaLAPACK built for another MPI links but breaks at run time.
#
# Defines HAVE_SCALAPACK, BB_SCALAPACK_FOUND (what was taken) or
# BB_SCALAPACK_WHY_NOT (the reason, for the tests' skip), substitutes
# SCALAPACK_CFLAGS and SCALAPACK_LIBS, and sets the automake conditional
# BB_HAVE_SCALAPACK.  The answer is repeated as "scalapack: ..." at the end
# of configure's output.
AC_DEFUN([BB_CHECK_SCALAPACK], [
  AC_REQUIRE([PKG_PROG_PKG_CONFIG])
  AC_ARG_WITH([scalapack],
    [AS_HELP_STRING([--with-scalapack@<:@=auto|yes|no@:>@],
      [ScaLAPACK's p?gemr2d as bbench-redist's reference redistribution
       (default: auto, used when found for this MPI)])],
    [], [with_scalapack=auto])
  AS_CASE([$with_scalapack], [auto|yes|no], [],
    [AC_MSG_ERROR([--with-scalapack=$with_scalapack: expected auto, yes or no])])

  bb_scalapack_found=
  bb_scalapack_why=
  SCALAPACK_CFLAGS=
  SCALAPACK_LIBS=
  AS_IF([test "x$with_scalapack" = xno], [bb_scalapack_why="disabled by --without-scalapack"], [
    dnl BB_CHECK_LAUNCHER_KIND's answer (mpich, openmpi or other)
    AC_REQUIRE([BB_CHECK_LAUNCHER_KIND])
    bb_mpi_flavour=$bb_mpi_lib
    AS_CASE([$bb_mpi_flavour],
      [openmpi], [bb_scalapack_pkg=libscalapack-openmpi-dev],
      [bb_scalapack_pkg=libscalapack-mpich-dev])

    dnl The MPI libraries a plain MPI program loads: the same-MPI reference.
    AC_PATH_PROG([LDD], [ldd])
    bb_mpi_sonames() {
      $LDD "$[1]" 2>/dev/null | sed -n 's/^[[ 	]]*\(lib[[^ ]]*\.so[[^ ]]*\) .*/\1/p' \
        | grep -E '^lib(mpi|mpich|open-pal|open-rte|simgrid)[[._-]]' | sort -u
    }
    bb_mpi_base=
    AS_IF([test -n "$LDD" && test "x$cross_compiling" != xyes],
      [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0); MPI_Finalize();]])],
         [bb_mpi_base=`bb_mpi_sonames conftest$ac_exeext`])])

    bb_tried=
    for bb_cand in pkg:scalapack-$bb_mpi_flavour pkg:scalapack lib:scalapack-$bb_mpi_flavour \
        lib:scalapack-mpich lib:scalapack-openmpi lib:scalapack; do
      bb_name=${bb_cand#*:}
      AS_CASE([" $bb_tried "], [*" $bb_cand "*], [continue])
      bb_tried="$bb_tried $bb_cand"
      AS_CASE([$bb_cand],
        [pkg:*], [AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists "$bb_name" 2>/dev/null], [
                     bb_cflags=`$PKG_CONFIG --cflags "$bb_name" 2>/dev/null`
                     bb_libs=`$PKG_CONFIG --libs "$bb_name" 2>/dev/null`
                     bb_what="pkg-config $bb_name `$PKG_CONFIG --modversion $bb_name 2>/dev/null`"],
                   [continue])],
        [bb_cflags= bb_libs="-l$bb_name" bb_what="-l$bb_name"])
      AC_MSG_CHECKING([for ScaLAPACK through $bb_what])
      bb_save_CFLAGS=$CFLAGS bb_save_LIBS=$LIBS
      CFLAGS="$CFLAGS $bb_cflags" LIBS="$bb_libs $LIBS"
      dnl The prototypes are our own (ScaLAPACK ships no C header): the ones
      dnl bench/redist/scalapack-private.h declares.
      bb_ok=no
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
void Cblacs_pinfo(int *, int *);
int Csys2blacs_handle(MPI_Comm);
void Cfree_blacs_system_handle(int);
void Cblacs_gridmap(int *, int *, int, int, int);
void Cblacs_gridinfo(int, int *, int *, int *, int *);
void Cblacs_gridexit(int);
void Cblacs_exit(int);
void descinit_(int *, int *, int *, int *, int *, int *, int *, int *, int *, int *);
int numroc_(int *, int *, int *, int *, int *);
void Cpdgemr2d(int, int, double *, int, int, int *, double *, int, int, int *, int);]],
          [[int me, np, c, map = 0, d[9], z = 0, info;
            MPI_Init(0, 0);
            Cblacs_pinfo(&me, &np);
            c = Csys2blacs_handle(MPI_COMM_WORLD);
            Cblacs_gridmap(&c, &map, 1, 1, 1);
            Cblacs_gridinfo(c, &me, &np, &me, &np);
            descinit_(d, &np, &np, &np, &np, &z, &z, &c, &np, &info);
            Cpdgemr2d(0, 0, 0, 1, 1, d, 0, 1, 1, d, c + numroc_(&np, &np, &z, &z, &np));
            Cblacs_gridexit(c);
            Cfree_blacs_system_handle(c);
            Cblacs_exit(1);
            MPI_Finalize();]])],
        [AS_IF([test -z "$LDD" || test "x$cross_compiling" = xyes],
           [bb_ok="no: cannot check that it is built for this MPI (no ldd, or cross-compiling)"],
           [bb_extra=`bb_mpi_sonames conftest$ac_exeext | grep -v -x -F "$bb_mpi_base" | tr '\n' ' '`
            AS_IF([test -n "$bb_mpi_base" && test -z "$bb_extra"], [bb_ok=yes],
              [test -z "$bb_mpi_base"], [bb_ok="no: ldd names no MPI library of a plain MPI program"],
              [bb_ok="no: built for another MPI (loads ${bb_extra% })"])])],
        [bb_ok="no: not found, or does not link with $CC"])
      CFLAGS=$bb_save_CFLAGS LIBS=$bb_save_LIBS
      AC_MSG_RESULT([$bb_ok])
      AS_IF([test "x$bb_ok" = xyes],
        [bb_scalapack_found=$bb_what SCALAPACK_CFLAGS=$bb_cflags SCALAPACK_LIBS=$bb_libs; break],
        [bb_scalapack_why="${bb_scalapack_why:+$bb_scalapack_why; }$bb_what: ${bb_ok#no: }"])
    done
    AS_IF([test -z "$bb_scalapack_found"], [
      bb_scalapack_why="no ScaLAPACK for this MPI ($bb_mpi_flavour)${bb_scalapack_why:+: $bb_scalapack_why}; on Debian: apt-get install $bb_scalapack_pkg"
      AS_IF([test "x$with_scalapack" = xyes],
        [AC_MSG_ERROR([--with-scalapack: $bb_scalapack_why])],
        [AC_MSG_WARN([the ScaLAPACK reference redistribution is left out: $bb_scalapack_why])])])
  ])
  AS_IF([test -n "$bb_scalapack_found"],
    [AC_DEFINE([HAVE_SCALAPACK], [1], [ScaLAPACK (p?gemr2d, BLACS) links and is built for this MPI])
     AC_DEFINE_UNQUOTED([BB_SCALAPACK_FOUND], ["$bb_scalapack_found"], [the ScaLAPACK configure took])
     bb_scalapack_summary="yes ($bb_scalapack_found)"],
    [AC_DEFINE_UNQUOTED([BB_SCALAPACK_WHY_NOT], ["$bb_scalapack_why"],
       [why the ScaLAPACK reference redistribution is not built])
     bb_scalapack_summary="no ($bb_scalapack_why)"])
  AC_SUBST([SCALAPACK_CFLAGS])
  AC_SUBST([SCALAPACK_LIBS])
  AM_CONDITIONAL([BB_HAVE_SCALAPACK], [test -n "$bb_scalapack_found"])
  AC_CONFIG_COMMANDS([scalapack-summary],
    [AS_ECHO(["scalapack: $bb_scalapack_summary"])],
    [bb_scalapack_summary="$bb_scalapack_summary"])
])
