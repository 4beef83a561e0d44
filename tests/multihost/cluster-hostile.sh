#!/bin/sh
# The namespace scripts against hostile use, in a sandbox of their own (a
# fresh network namespace and a private /run, so that nothing here can touch
# the machine's links or another test's cluster):
# - bbench-netns-cluster up interrupted by SIGINT, SIGTERM or SIGHUP while
#   it creates hosts leaves no namespace, link or /run/bbnc file, and exits
#   128 + the signal's number;
# - numbers too large for test(1) and subnets that are not a /24, or that a
#   route covers or is covered by, are refused before anything is made;
# - bbench-netns-delay puts the link back on SIGHUP, and a second delay on
#   the same host is refused with a message (no traceback), leaving the
#   first one working.
# Skipped (77) unless root with iproute2 and util-linux.
if [ -z "${BBNC_SANDBOX:-}" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
    for t in ip nsenter unshare setpriv timeout; do
        command -v $t >/dev/null 2>&1 || { echo "SKIP: needs $t"; exit 77; }
    done
    unshare -n -m true 2>/dev/null || { echo "SKIP: unshare -n -m fails here"; exit 77; }
    BBNC_SANDBOX=1 exec unshare -n -m sh "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
NC="$S/tools/bbench-netns-cluster"
DL="$S/tools/bbench-netns-delay"
out="$BB_TMP/out" err="$BB_TMP/err"
# /sys shows the devices of the namespace that mounts it: this one's.
mount -t tmpfs bbnc-sandbox /run && mount -t sysfs bbnc-sandbox /sys \
    || { echo "SKIP: cannot mount a private /run and /sys"; exit 77; }
ip link set lo up

# nothing_left WHAT: no fake host, no bbnc link, no /run/bbnc.
nothing_left() {
    bb_expect_true "$1: no namespace left ($(ip netns list | tr '\n' ' '))" \
        test -z "$(ip netns list)"
    bb_expect_true "$1: no bbnc link left" sh -c '! ip -o link show | grep -q ": bbnc-"'
    bb_expect_true "$1: no /run/bbnc left" test ! -e /run/bbnc
}
# refused WANT WHAT PATTERN CMD...: exit WANT, PATTERN on stderr, no shell
# noise, nothing made.
refused() {
    rwant=$1 rwhat=$2 rpat=$3
    shift 3
    timeout -k 5 60 "$@" >"$out" 2>"$err"
    bb_expect_rc "$rwant" $? "$rwhat"
    bb_expect_grep "$rpat" "$err" "$rwhat: the message"
    bb_expect_true "$rwhat: no shell noise" \
        test "$(grep -c -e 'expression' -e 'out of range' -e 'Illegal' -e 'Traceback' "$err")" -eq 0
    nothing_left "$rwhat"
}

# Numbers.
refused 2 "up 20 digits" "up: N: '99999999999999999999' is more than 16" sh "$NC" up 99999999999999999999
refused 2 "up 0" "up: N: '0' must be at least 1" sh "$NC" up 0
refused 2 "up 17" "up: N: '17' is more than 16" sh "$NC" up 17
refused 2 "run with 20 digits of ranks" "run: NP: '99999999999999999999' is more than" \
    sh "$NC" run 1 99999999999999999999 true

# Subnets: the /24 written in full, and nothing else.
for bad in 10.213 10.213.16.1 10.213.256 10.213.016 127.0.0 10..16 10.213.16/16; do
    BBNC_SUBNET=$bad refused 2 "BBNC_SUBNET=$bad" "BBNC_SUBNET '$bad'" sh "$NC" up 2
done
# A route that covers the cluster's /24, and one it covers, on a bridge
# of this sandbox's own.
ip link add bbt-dummy type bridge && ip link set bbt-dummy up
ip route add 10.213.0.0/16 dev bbt-dummy
refused 1 "a /16 route covers 10.213.16.0/24" "overlaps a route of this machine (10.213.0.0/16" \
    sh "$NC" up 2
ip route del 10.213.0.0/16 dev bbt-dummy
ip route add 10.213.16.128/25 dev bbt-dummy
refused 1 "a /25 route inside 10.213.16.0/24" "overlaps a route of this machine (10.213.16.128/25" \
    sh "$NC" up 2
BBNC_SUBNET=10.213.17.0/24 timeout -k 5 60 sh "$NC" up 1 >"$out" 2>"$err"
bb_expect_rc 0 $? "the next /24 beside the route, written A.B.C.0/24"
bb_expect_grep "10.213.17.0/24" "$out" "the cluster says its subnet"
sh "$NC" down >/dev/null 2>&1
nothing_left "down after up 1"
ip link delete bbt-dummy

# Signals in the middle of up 16: an ip(8) in front of the real one stops
# once the third host's namespace exists, until the signal has been sent,
# so the signal always lands in the middle, whatever the machine's speed.
real_ip=$(command -v ip)
mkdir "$BB_TMP/bin"
cat >"$BB_TMP/bin/ip" <<EOF
#!/bin/sh
"$real_ip" "\$@"
rc=\$?
if [ "\$*" = "netns add bbnc-h3" ] && [ ! -e "$BB_TMP/paused" ]; then
    : >"$BB_TMP/paused"
    i=0
    while [ ! -e "$BB_TMP/resume" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exit \$rc
EOF
chmod +x "$BB_TMP/bin/ip"
for sig in INT:2 TERM:15 HUP:1; do
    name=${sig%:*} num=${sig#*:}
    rm -f "$BB_TMP/paused" "$BB_TMP/resume"
    # A background job starts with SIGINT ignored, and a run under nohup with
    # SIGHUP ignored (a shell cannot trap a signal ignored on entry): give
    # both back their default.
    PATH="$BB_TMP/bin:$PATH" env --default-signal=INT,HUP sh "$NC" up 16 >"$out" 2>"$err" &
    pid=$!
    ( sleep 90; kill -KILL $pid 2>/dev/null ) &
    watchdog=$!
    i=0
    while [ ! -e "$BB_TMP/paused" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    bb_expect_true "SIG$name: up reached the third host" test -e "$BB_TMP/paused"
    kill -"$name" $pid
    : >"$BB_TMP/resume"
    wait $pid
    rc=$?
    kill $watchdog 2>/dev/null
    wait $watchdog 2>/dev/null
    bb_expect_rc $((128 + num)) $rc "up 16 interrupted by SIG$name"
    bb_expect_grep "interrupted by SIG$name: what it made is removed" "$err" "SIG$name: said so"
    nothing_left "after SIG$name"
    sh "$NC" down >/dev/null 2>&1
done

# The delay relay: SIGHUP restores the link; a second delay is refused.
if command -v python3 >/dev/null 2>&1 && command -v ethtool >/dev/null 2>&1 \
    && [ -c /dev/net/tun ]; then
    timeout -k 5 60 sh "$NC" up 2 >"$out" 2>"$err"
    bb_expect_rc 0 $? "up 2 for the relay"
    master() { basename "$(readlink "/sys/class/net/$1/master" 2>/dev/null)" 2>/dev/null; }
    timeout -k 5 120 python3 "$DL" bbnc-h2 5 100 >"$BB_TMP/relay" 2>&1 &
    relay=$!
    i=0
    while [ $i -lt 300 ] && ! grep -q "each way" "$BB_TMP/relay"; do sleep 0.1; i=$((i + 1)); done
    bb_expect_grep "+5 ms each way" "$BB_TMP/relay" "the relay runs"
    bb_expect_true "host 2's link is off the bridge" test "$(master bbnc-v2)" != bbnc-br0
    timeout -k 5 60 python3 "$DL" bbnc-h2 5 10 >"$out" 2>"$err"
    bb_expect_rc 1 $? "a second delay on bbnc-h2"
    bb_expect_grep "bbnc-h2 has a delay already" "$err" "the second delay: a message"
    bb_expect_true "the second delay: no traceback" sh -c "! grep -q Traceback '$err'"
    bb_expect_true "the first relay still runs" kill -0 $relay
    bb_expect_true "host 2's link still goes through the first relay" \
        test "$(master bbnc-v2)" != bbnc-br0 -a -e /sys/class/net/bbnc-d2
    kill -HUP $relay
    wait $relay
    bb_expect_rc 129 $? "the relay ended by SIGHUP"
    bb_expect_grep "link restored" "$BB_TMP/relay" "SIGHUP: the relay said it put the link back"
    bb_expect_true "SIGHUP: host 2's link is back on the bridge" test "$(master bbnc-v2)" = bbnc-br0
    bb_expect_true "SIGHUP: the relay's TAP device is gone" test ! -e /sys/class/net/bbnc-d2
    sh "$NC" down >/dev/null 2>&1
    nothing_left "down after the relay"
else
    echo "relay cases not run: they need python3, ethtool and /dev/net/tun"
fi
bb_finish
