# BB_CHECK_SCHEMA_VALIDATOR: a python3 that imports jsonschema, for make check
# to validate every record the tests write against schema/.  Without one the
# schema checks are skipped, and said so; CI=true makes them required.
AC_DEFUN([BB_CHECK_SCHEMA_VALIDATOR], [
  AC_MSG_CHECKING([for a python3 with jsonschema (record schema checks)])
  BB_SCHEMA_PYTHON=
  for bb_py in python3 /usr/bin/python3; do
    AS_IF([$bb_py -c 'import jsonschema; jsonschema.Draft202012Validator' >/dev/null 2>&1],
      [BB_SCHEMA_PYTHON=$bb_py; break])
  done
  AS_IF([test -n "$BB_SCHEMA_PYTHON"], [AC_MSG_RESULT([$BB_SCHEMA_PYTHON])],
    [AC_MSG_RESULT([no])
     AS_IF([test "x$CI" = xtrue],
       [AC_MSG_ERROR([CI needs the record schema checks; on Debian: apt-get install python3-jsonschema])],
       [AC_MSG_WARN([make check will skip the record schema checks; on Debian: apt-get install python3-jsonschema])])])
  AC_SUBST([BB_SCHEMA_PYTHON])
])
