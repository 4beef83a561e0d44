#!/bin/sh
# The installed layout works for a user: install into a staging directory,
# build examples/bbench-example.c against it with pkg-config and mpicc (and
# with the plain compiler when bbench.pc names the MPI's module), run it at
# -n 2.  Also: no libtool archive installed, only the API headers.
. "$(dirname "$0")/../lib.sh"
stage="$BB_TMP/stage"
log="$BB_TMP/install.log"
# A nested make of this build tree: everything is built already.
make -C "$B" install DESTDIR="$stage" > "$log" 2>&1
bb_expect_rc 0 $? "make install DESTDIR=..."
root="$stage$prefix"
# The staged bbench.pc with its prefix moved to the staging directory (not
# --define-variable=prefix=, which would move the prefix of the MPI's own
# module too: Open MPI's ompi-c.pc derives its include path from it).
mkdir "$BB_TMP/pc"
sed "s|^prefix=.*|prefix=$root|" "$root/lib/pkgconfig/bbench.pc" > "$BB_TMP/pc/bbench.pc"
pc() { "$PKG_CONFIG" "$@" bbench; }
export PKG_CONFIG_PATH="$BB_TMP/pc"
libdir=$(pc --variable=libdir)
bb_expect_true "bbench.pc found in the staged tree" test -n "$libdir" -a -d "$libdir"
bb_expect_true "no libtool archive installed" test ! -e "$libdir/libbbench.la"
bb_expect_true "shared library installed" test -e "$libdir/libbbench.so"
bb_expect_true "bbench.h and bbench/status.h installed" \
    test -f "$root/include/bbench.h" -a -f "$root/include/bbench/status.h"
# Nothing else: include/private/, runtime/, runner/ and bench/ stay home.
bb_expect_true "no internal header installed" \
    test "$(cd "$root/include" && find . -type f | sort | tr '\n' ' ')" = \
    "./bbench.h ./bbench/status.h "

# In a sanitizer build the installed library is instrumented, and a program
# linking it must be too ($BB_SAN_CFLAGS is empty otherwise).
# shellcheck disable=SC2046,SC2086
$MPICC $BB_SAN_CFLAGS -o "$BB_TMP/example" "$S/examples/bbench-example.c" $(pc --cflags --libs) \
    > "$BB_TMP/cc.log" 2>&1
bb_expect_rc 0 $? "example built with mpicc and pkg-config --cflags --libs bbench"
cat "$BB_TMP/cc.log"
if [ -x "$BB_TMP/example" ]; then
    out="$BB_TMP/out"
    LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        bb_mpirun 2 "$BB_TMP/example" > "$out" 2>&1
    bb_expect_rc 0 $? "example at -n 2 against the installed library"
    bb_expect_grep '^sum: ok, 4 values, sum\[3\] = 7,' "$out" "sum phase: 1 + 6 over two ranks"
    bb_expect_grep '^transfer: ok, 14 bytes from rank 1, payload checked' "$out" "transfer ticket"
    bb_expect_grep '^bbench-example: libbbench [0-9.]*: ok$' "$out" "final status"
    # The program must use the staged library, not a build-tree copy.
    LD_LIBRARY_PATH="$libdir" ldd "$BB_TMP/example" > "$BB_TMP/ldd" 2>&1
    bb_expect_grep "libbbench.so.* => $libdir/" "$BB_TMP/ldd" "linked to the installed libbbench"
fi
if [ -n "$BB_PC_MPI" ]; then
    # bbench.pc requires the MPI's module: a plain compiler suffices.
    # shellcheck disable=SC2046,SC2086
    cc $BB_SAN_CFLAGS -o "$BB_TMP/example-cc" "$S/examples/bbench-example.c" $(pc --cflags --libs) \
        > "$BB_TMP/cc2.log" 2>&1
    bb_expect_rc 0 $? "example built with plain cc via Requires: $BB_PC_MPI"
    cat "$BB_TMP/cc2.log"
fi
bb_finish
