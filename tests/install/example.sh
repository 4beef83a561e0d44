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
# The installed scripts launch with the launcher bbench was configured with
# when MPIEXEC is unset, not the first mpiexec on PATH (issue 58, finding 8:
# Debian's mpiexec may be the other MPI's, which starts singletons).
mkdir -p "$BB_TMP/wrong"
printf '#!/bin/sh\necho "the mpiexec first on PATH ran: $*" >&2\nexit 97\n' > "$BB_TMP/wrong/mpiexec"
chmod +x "$BB_TMP/wrong/mpiexec"
bb_expect_grep "^BB_CONFIGURED_MPIEXEC=\"$MPIEXEC\"\$" "$root/share/bbench/bb-config.sh" \
    "bb-config.sh installed beside bb-launcher.sh, naming $MPIEXEC"
(unset MPIEXEC
 PATH="$BB_TMP/wrong:$PATH" LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout -k 5 "$BB_TIMEOUT" sh "$root/bin/bbench-sweep" --ranks 2 --out "$BB_TMP/sweep" \
    -- "$root/bin/bbench-sum" --count 1 --samples 3 --reps 2) > "$BB_TMP/sweep.out" 2>&1
bb_expect_rc 0 $? "installed bbench-sweep, MPIEXEC unset, another mpiexec first on PATH"
bb_expect_true "it ran the configured launcher (a record at -n 2, the wrong one never ran)" \
    sh -c "test -s '$BB_TMP/sweep/sum-n2.json' && ! grep -q 'first on PATH ran' '$BB_TMP/sweep.out'"
if [ -n "$BB_PC_MPI" ]; then
    # bbench.pc requires the MPI's module: a plain compiler suffices.
    # shellcheck disable=SC2046,SC2086
    cc $BB_SAN_CFLAGS -o "$BB_TMP/example-cc" "$S/examples/bbench-example.c" $(pc --cflags --libs) \
        > "$BB_TMP/cc2.log" 2>&1
    bb_expect_rc 0 $? "example built with plain cc via Requires: $BB_PC_MPI"
    cat "$BB_TMP/cc2.log"
fi
bb_finish
