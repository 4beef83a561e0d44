# BB_CHECK_PYTHON: the Python tier (python/, tests/python/) needs a Python
# that imports mpi4py, NumPy and pytest.  PYTHON= chooses it; otherwise the
# first of python3 and /usr/bin/python3 that has all three (a python3 on
# PATH may be a virtual environment without Debian's python3-mpi4py).
# BB_PYTHON_MPI is the MPI mpi4py was built with (openmpi, mpich, other),
# read without initializing MPI: the tier runs only when it is this build's
# MPI (two MPI libraries cannot share a process).  Without such a Python
# the tier is skipped, and said so.
AC_DEFUN([BB_CHECK_PYTHON], [
  AC_ARG_VAR([PYTHON], [the Python of the Python tier (with mpi4py, numpy, pytest)])
  AC_MSG_CHECKING([for a Python with mpi4py, numpy and pytest])
  bb_probe='import numpy, pytest, mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; v = MPI.Get_library_version(); print("openmpi" if v.startswith("Open MPI") else "mpich" if "MPICH" in v else "other")'
  BB_PYTHON= BB_PYTHON_MPI=
  for bb_py in ${PYTHON:-python3 /usr/bin/python3}; do
    bb_mpi=`$bb_py -c "$bb_probe" 2>/dev/null` || continue
    BB_PYTHON=$bb_py BB_PYTHON_MPI=$bb_mpi
    break
  done
  AS_IF([test -n "$BB_PYTHON"],
    [AC_MSG_RESULT([$BB_PYTHON (mpi4py on $BB_PYTHON_MPI)])
     AS_IF([test "x$BB_PYTHON_MPI" != "x$BB_MPI_LIBRARY"],
       [AC_MSG_WARN([mpi4py is built on $BB_PYTHON_MPI, this build on $BB_MPI_LIBRARY: make check skips the Python tier (configure MPICC=mpicc.$BB_PYTHON_MPI MPIEXEC=mpiexec.$BB_PYTHON_MPI for it)])])],
    [AC_MSG_RESULT([no])
     AC_MSG_WARN([make check will skip the Python tier; on Debian: apt-get install python3-mpi4py python3-numpy python3-pytest])])
  AC_SUBST([BB_PYTHON])
  AC_SUBST([BB_PYTHON_MPI])
])
