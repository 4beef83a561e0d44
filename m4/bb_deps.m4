# Library checks through pkg-config; each failure names the Debian package.
AC_DEFUN([BB_CHECK_HWLOC], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc >= 2.0 not found ($HWLOC_PKG_ERRORS); on Debian: apt-get install libhwloc-dev])])
])
AC_DEFUN([BB_CHECK_CJSON], [
  PKG_CHECK_MODULES([CJSON], [libcjson >= 1.7], [],
    [AC_MSG_ERROR([cJSON >= 1.7 not found ($CJSON_PKG_ERRORS); on Debian: apt-get install libcjson-dev])])
])
AC_DEFUN([BB_CHECK_PTHREAD], [
  AC_SEARCH_LIBS([pthread_create], [pthread], [],
    [AC_MSG_ERROR([POSIX threads not found; on Debian: apt-get install libc6-dev])])
  AC_SEARCH_LIBS([sqrt], [m])
])

dnl The C library's allocator: its version for the record, and mallopt for
dnl --malloc no-trim (glibc's; without them the record says unknown and the
dnl option is refused).
AC_DEFUN([BB_CHECK_ALLOCATOR], [
  AC_CHECK_HEADERS([malloc.h gnu/libc-version.h])
  AC_CHECK_FUNCS([mallopt gnu_get_libc_version])
])
