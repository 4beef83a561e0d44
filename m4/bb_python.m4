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

# BB_PYTHON_INSTALL: where make install puts the bbench package
# (bbpythondir, under ${prefix} so that DESTDIR and distcheck's prefix
# hold): the Python's own directory under PREFIX when it has one on its
# path (/usr/local/lib/python3.11/dist-packages on Debian), else its
# PREFIX/lib/pythonX.Y/site-packages (then PYTHONPATH must name it).
# --with-pythondir=DIR chooses, --without-pythondir installs nothing; with
# no python3 at all nothing is installed either.
AC_DEFUN([BB_PYTHON_INSTALL], [
  AC_REQUIRE([BB_CHECK_PYTHON])
  AC_ARG_WITH([pythondir],
    [AS_HELP_STRING([--with-pythondir=DIR],
      [install the bbench Python package into DIR (default: the Python's own
       directory under PREFIX; --without-pythondir: do not install it)])],
    [], [with_pythondir=auto])
  bbpythondir=
  AS_CASE([$with_pythondir],
    [no], [],
    [auto|yes],
      [bb_py=${BB_PYTHON:-python3}
       bb_pre=$prefix
       test "x$bb_pre" = xNONE && bb_pre=$ac_default_prefix
       bb_rel=`$bb_py -c '
import sys, sysconfig
pre = sys.argv[[1]].rstrip("/")
for d in sys.path:
    if d.startswith(pre + "/lib/") and d.rstrip("/").endswith(("dist-packages", "site-packages")):
        print(d[[len(pre):]]); break
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": pre})[[len(pre):]])
' "$bb_pre" 2>/dev/null`
       test -n "$bb_rel" && bbpythondir='${prefix}'$bb_rel],
    [bbpythondir=$with_pythondir])
  AC_MSG_CHECKING([where make install puts the bbench Python package])
  AC_MSG_RESULT([${bbpythondir:-nowhere}])
  AC_SUBST([bbpythondir])
  AM_CONDITIONAL([BB_PYTHON_INSTALL], [test -n "$bbpythondir"])
])

# BB_PYTHON_EXTENSION: bbench._cphase, the C phases' extension, built when
# the Python tier runs here (a Python with mpi4py on this build's MPI), its
# headers and NumPy's are installed (python3-dev; python3-numpy has its
# own) and the build is not sanitized (a Python process cannot load an
# AddressSanitizer module).  Without it the
# binding goes through ctypes, and the benchmark's record says which.
AC_DEFUN([BB_PYTHON_EXTENSION], [
  AC_REQUIRE([BB_PYTHON_INSTALL])
  bb_python_ext=no
  BB_PYTHON_CPPFLAGS=
  AS_IF([test -n "$BB_PYTHON" && test "x$BB_PYTHON_MPI" = "x$BB_MPI_LIBRARY" &&
         test "x$enable_sanitizers" != xyes && test -n "$bbpythondir"], [
    bb_pyinc=`$BB_PYTHON -c 'import sysconfig; print(sysconfig.get_paths()[["include"]])' 2>/dev/null`
    bb_npinc=`$BB_PYTHON -c 'import numpy; print(numpy.get_include())' 2>/dev/null`
    bb_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$bb_pyinc -I$bb_npinc"
    AC_MSG_CHECKING([for Python.h (3.10 or later) and NumPy's arrayobject.h of $BB_PYTHON])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <Python.h>
#if PY_VERSION_HEX < 0x030A0000
#error too old
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>]], [[return Py_IsNone(Py_None) && NPY_DOUBLE ? 0 : 1;]])],
      [bb_python_ext=yes BB_PYTHON_CPPFLAGS="-I$bb_pyinc -I$bb_npinc"])
    AC_MSG_RESULT([$bb_python_ext])
    CPPFLAGS=$bb_save_CPPFLAGS
    AS_IF([test $bb_python_ext = no],
      [AC_MSG_WARN([the Python binding goes through ctypes: no Python.h or NumPy headers (on Debian: apt-get install python3-dev python3-numpy)])])])
  AC_SUBST([BB_PYTHON_CPPFLAGS])
  BB_PYTHON_EXT_BUILT=$bb_python_ext
  AC_SUBST([BB_PYTHON_EXT_BUILT])
  AM_CONDITIONAL([BB_PYTHON_EXT], [test $bb_python_ext = yes])
])
