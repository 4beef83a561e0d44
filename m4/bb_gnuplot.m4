# BB_PROG_GNUPLOT: gnuplot for bbench-plot.  Only reported: bbench-plot
# looks for gnuplot when it runs (GNUPLOT, else PATH) and exits 77 without
# it, which make check counts as a skip of tests/tools/plot.sh.  The
# answer is repeated as "gnuplot: yes/no" at the end of configure's output.
AC_DEFUN([BB_PROG_GNUPLOT], [
  AC_PATH_PROG([GNUPLOT], [gnuplot])
  AS_IF([test -n "$GNUPLOT" && "$GNUPLOT" --version >/dev/null 2>&1], [bb_gnuplot_summary=yes],
    [bb_gnuplot_summary="no (bbench-plot exits 77; make check skips tests/tools/plot.sh)"
     AC_MSG_WARN([no plots without gnuplot: bbench-plot exits 77 and make check skips its test; on Debian: apt-get install gnuplot-nox])])
  AC_CONFIG_COMMANDS([gnuplot-summary],
    [AS_ECHO(["gnuplot: $bb_gnuplot_summary"])],
    [bb_gnuplot_summary="$bb_gnuplot_summary"])
])
