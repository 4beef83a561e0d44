# BB_CHECK_MPI_FEATURES: what the MPI offers beyond MPI 3, by feature tests
# (never by the library's name), into config.h for include/private/mpi-compat.h.
#
# The persistent collectives (MPI_Allreduce_init) are MPI 4.  MPICH 4 has
# them in mpi.h; Open MPI 4.1 (MPI 3.1) offers them as MPIX_Allreduce_init
# in mpi-ext.h (its pcollreq extension, OMPI_HAVE_MPI_EXT_PCOLLREQ).  With
# neither, the persistent requests policy is refused (BB_HAVE_PERSISTENT_
# COLLECTIVES undefined) and its tests skip.  Each probe links, so a
# declaration without the symbol does not count.  The cache variables
# bb_cv_mpi_allreduce_init and bb_cv_mpix_allreduce_init (yes/no) may be set
# on the command line to build as if a feature were missing.
AC_DEFUN([BB_CHECK_MPI_FEATURES], [
  AC_CACHE_CHECK([for MPI_Allreduce_init], [bb_cv_mpi_allreduce_init],
    [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
        [[MPI_Request r; int s = 0, d = 0;
          return MPI_Allreduce_init(&s, &d, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &r);]])],
      [bb_cv_mpi_allreduce_init=yes], [bb_cv_mpi_allreduce_init=no])])
  AS_IF([test "x$bb_cv_mpi_allreduce_init" = xyes], [bb_cv_mpix_allreduce_init=no],
    [AC_CACHE_CHECK([for MPIX_Allreduce_init in mpi-ext.h], [bb_cv_mpix_allreduce_init],
      [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#include <mpi-ext.h>]],
          [[MPI_Request r; int s = 0, d = 0;
            return MPIX_Allreduce_init(&s, &d, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &r);]])],
        [bb_cv_mpix_allreduce_init=yes], [bb_cv_mpix_allreduce_init=no])])])
  BB_ALLREDUCE_INIT=
  AS_IF([test "x$bb_cv_mpi_allreduce_init" = xyes],
    [AC_DEFINE([BB_HAVE_MPI_ALLREDUCE_INIT], [1], [MPI_Allreduce_init in mpi.h (MPI 4)])
     BB_ALLREDUCE_INIT=MPI_Allreduce_init],
    [test "x$bb_cv_mpix_allreduce_init" = xyes],
    [AC_DEFINE([BB_HAVE_MPIX_ALLREDUCE_INIT], [1],
       [MPIX_Allreduce_init in mpi-ext.h (Open MPI's pcollreq extension)])
     BB_ALLREDUCE_INIT=MPIX_Allreduce_init],
    [AC_MSG_WARN([$CC has neither MPI_Allreduce_init (MPI 4) nor MPIX_Allreduce_init: the persistent requests policy and raw-persistent are refused])])
  AS_IF([test -n "$BB_ALLREDUCE_INIT"],
    [AC_DEFINE([BB_HAVE_PERSISTENT_COLLECTIVES], [1],
       [the MPI makes persistent collectives (include/private/mpi-compat.h names the call)])
     AC_DEFINE_UNQUOTED([BB_ALLREDUCE_INIT_NAME], ["$BB_ALLREDUCE_INIT"],
       [the MPI call that makes a persistent allreduce])])
  dnl MPI_APPNUM (MPI 2's attribute on MPI_COMM_WORLD: which program of an
  dnl MPMD launch a rank runs) lets a redistribution link find the driver
  dnl and engine codes from the launch.  MPICH and Open MPI have it; without
  dnl it (SMPI) bb_redist_link_create_codes refuses the launch role and the
  dnl two-program tests skip.  bb_cv_mpi_appnum=no builds as if it were missing.
  AC_CACHE_CHECK([for MPI_APPNUM], [bb_cv_mpi_appnum],
    [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]],
        [[int *v = 0, flag = 0;
          return MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);]])],
      [bb_cv_mpi_appnum=yes], [bb_cv_mpi_appnum=no])])
  BB_MPI_APPNUM=no
  AS_IF([test "x$bb_cv_mpi_appnum" = xyes],
    [AC_DEFINE([BB_HAVE_MPI_APPNUM], [1],
       [MPI_APPNUM on MPI_COMM_WORLD names a rank's program in an MPMD launch])
     BB_MPI_APPNUM=yes])
  AC_SUBST([BB_MPI_APPNUM])
  dnl For the tests: which call, or empty when the policy is refused.
  AC_SUBST([BB_ALLREDUCE_INIT])
])
