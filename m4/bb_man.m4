# BB_PROG_HELP2MAN: man pages are made from each program's --help and
# --version with help2man; without it they are not built, and said so.
# Nor in an SMPI build (BB_ARG_WITH_SMPI): its programs run only under
# smpirun, and their pages are those of the ordinary build.
AC_DEFUN([BB_PROG_HELP2MAN], [
  AC_PATH_PROG([HELP2MAN], [help2man])
  AS_IF([test -z "$HELP2MAN"],
    [AC_MSG_WARN([no man pages without help2man; on Debian: apt-get install help2man])])
  AS_IF([test -n "$HELP2MAN" && test "x$bb_smpi" = xyes],
    [AC_MSG_NOTICE([no man pages in an SMPI build: its programs run only under smpirun (the ordinary build makes them)])])
  AM_CONDITIONAL([BB_MAN], [test -n "$HELP2MAN" && test "x$bb_smpi" != xyes])
])
