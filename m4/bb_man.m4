# BB_PROG_HELP2MAN: man pages are made from each program's --help and
# --version with help2man; without it they are not built, and said so.
AC_DEFUN([BB_PROG_HELP2MAN], [
  AC_PATH_PROG([HELP2MAN], [help2man])
  AS_IF([test -z "$HELP2MAN"],
    [AC_MSG_WARN([no man pages without help2man; on Debian: apt-get install help2man])])
  AM_CONDITIONAL([BB_MAN], [test -n "$HELP2MAN"])
])
