# BB_CHECK_CFLAG(FLAG, [IF-OK], [IF-NOT]): does $CC compile with FLAG (with -Werror,
# so that a flag the compiler merely warns about counts as unsupported)?
AC_DEFUN([BB_CHECK_CFLAG], [
  AC_MSG_CHECKING([whether $CC accepts $1])
  bb_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -Werror $1"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); $2], [AC_MSG_RESULT([no]); $3])
  CFLAGS=$bb_save_CFLAGS
])

# BB_CHECK_LDFLAG(FLAG, [IF-OK], [IF-NOT]): does $CC compile and link with FLAG?
AC_DEFUN([BB_CHECK_LDFLAG], [
  AC_MSG_CHECKING([whether $CC links with $1])
  bb_save_CFLAGS=$CFLAGS
  bb_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS $1"
  LDFLAGS="$LDFLAGS $1"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); $2], [AC_MSG_RESULT([no]); $3])
  CFLAGS=$bb_save_CFLAGS
  LDFLAGS=$bb_save_LDFLAGS
])

# BB_WARNING_CFLAGS: probe each warning flag and collect the accepted ones in
# BB_WARN_CFLAGS, which Makefile.am adds to AM_CFLAGS; the user's CFLAGS stay theirs.
AC_DEFUN([BB_WARNING_CFLAGS], [
  BB_WARN_CFLAGS=
  for bb_flag in -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes \
                 -Wmissing-prototypes -Wformat=2 -Wcast-align -Wwrite-strings \
                 -Wvla -Wundef -Wnull-dereference -Wdouble-promotion; do
    BB_CHECK_CFLAG([$bb_flag], [BB_WARN_CFLAGS="$BB_WARN_CFLAGS $bb_flag"])
  done
  AC_SUBST([BB_WARN_CFLAGS])
])

# BB_ENABLE_WERROR: --enable-werror turns warnings into errors (CI), off by default.
AC_DEFUN([BB_ENABLE_WERROR], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (for CI)])],
    [], [enable_werror=no])
  AS_IF([test "x$enable_werror" = xyes], [BB_WARN_CFLAGS="$BB_WARN_CFLAGS -Werror"])
])

# BB_ENABLE_SANITIZERS: --enable-sanitizers builds with ASan and UBSan.
AC_DEFUN([BB_ENABLE_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UndefinedBehaviorSanitizer])],
    [], [enable_sanitizers=no])
  BB_SAN_CFLAGS=
  BB_SAN_LDFLAGS=
  AS_IF([test "x$enable_sanitizers" = xyes], [
    bb_san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    BB_CHECK_LDFLAG([$bb_san], [],
      [AC_MSG_ERROR([$CC cannot link with $bb_san; on Debian: apt-get install gcc (libasan, libubsan)])])
    BB_SAN_CFLAGS="$bb_san"
    BB_SAN_LDFLAGS="$bb_san"
  ])
  AM_CONDITIONAL([BB_SANITIZERS], [test "x$enable_sanitizers" = xyes])
  AC_SUBST([BB_SAN_CFLAGS])
  AC_SUBST([BB_SAN_LDFLAGS])
])

# BB_BUILD_PROVENANCE: record the compiler, flags and configure line for records.
AC_DEFUN([BB_BUILD_PROVENANCE], [
  bb_cc_version=`$CC --version 2>/dev/null | sed -n 1p`
  AC_DEFINE_UNQUOTED([BB_BUILD_CC], ["$CC ($bb_cc_version)"], [compiler used for the build])
  AC_DEFINE_UNQUOTED([BB_BUILD_CFLAGS], ["$CFLAGS $BB_WARN_CFLAGS $BB_SAN_CFLAGS"], [compiler flags])
  bb_configure_args=`echo "$ac_configure_args" | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g'`
  AC_DEFINE_UNQUOTED([BB_BUILD_CONFIGURE], ["$bb_configure_args"], [configure arguments])
  dnl The git revision is taken at build time (lib/bb-git.h, Makefile.am),
  dnl so that it names what was compiled, not what was configured.
])

# BB_VISIBILITY: libbbench is compiled with -fvisibility=hidden so that only
# the functions its headers mark BB_EXPORT are exported (BB_VISIBILITY_CFLAGS,
# used for the library only).  Without the flag every function is exported.
AC_DEFUN([BB_VISIBILITY], [
  BB_VISIBILITY_CFLAGS=
  BB_CHECK_CFLAG([-fvisibility=hidden], [BB_VISIBILITY_CFLAGS=-fvisibility=hidden])
  AC_SUBST([BB_VISIBILITY_CFLAGS])
])

# BB_AS_NEEDED: the linker drops libraries nothing uses (BB_AS_NEEDED_LDFLAGS).
# The MPI wrapper adds its libraries to every link; the MPI-free tool uses it
# to depend on none of them.
AC_DEFUN([BB_AS_NEEDED], [
  BB_AS_NEEDED_LDFLAGS=
  BB_CHECK_LDFLAG([-Wl,--as-needed], [BB_AS_NEEDED_LDFLAGS=-Wl,--as-needed])
  AC_SUBST([BB_AS_NEEDED_LDFLAGS])
])
