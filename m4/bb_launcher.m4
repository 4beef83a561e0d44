# BB_CHECK_LAUNCHER_KIND: the kind of $MPIEXEC (hydra, openmpi, slurm, unknown),
# as tools/bb-launcher.sh names it, for the tests (BB_LAUNCHER_KIND).  A
# launcher of another MPI than the one $CC builds with would start every
# rank as a singleton of its own, and the tests would measure that: such a
# pair is refused.  The library is told by the macros its mpi.h defines.
AC_DEFUN([BB_CHECK_LAUNCHER_KIND], [
  AC_MSG_CHECKING([the kind of launcher $MPIEXEC is])
  BB_LAUNCHER_KIND=`. "$srcdir/tools/bb-launcher.sh" && bb_launcher_kind $MPIEXEC`
  AC_MSG_RESULT([$BB_LAUNCHER_KIND])
  AC_MSG_CHECKING([which MPI library $CC builds with])
  AC_PREPROC_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OMPI_MAJOR_VERSION
#error not Open MPI
#endif]])], [bb_mpi_lib=openmpi],
    [AC_PREPROC_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef MPICH_VERSION
#error not MPICH
#endif]])], [bb_mpi_lib=mpich], [bb_mpi_lib=other])])
  AC_MSG_RESULT([$bb_mpi_lib])
  AS_CASE([$bb_mpi_lib:$BB_LAUNCHER_KIND],
    [openmpi:hydra|mpich:openmpi],
    [AS_IF([test $bb_mpi_lib = mpich], [bb_mpiexec_same=mpiexec.mpich], [bb_mpiexec_same=mpiexec.openmpi])
     AC_MSG_ERROR([MPIEXEC=$MPIEXEC is a launcher of kind $BB_LAUNCHER_KIND but $CC builds with $bb_mpi_lib: every rank would run as a singleton; give the launcher of the same MPI (configure MPIEXEC=$bb_mpiexec_same)])])
  AC_SUBST([BB_LAUNCHER_KIND])
  dnl The library, for the Slurm tier: srun --mpi=pmi2 (MPICH), pmix (Open MPI).
  BB_MPI_LIBRARY=$bb_mpi_lib
  AC_SUBST([BB_MPI_LIBRARY])
])
