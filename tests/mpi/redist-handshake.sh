#!/bin/sh
# A message's handshake, the recv_dist flag and the admission, is one
# agreement collective, none for an eager message (pack, pack-mpi, overlap
# where the verdict cannot change the path: every rank's header rides in
# the exchange to every rank): no Bcast, Barrier, Send or Recv around it
# (the interposer counts every call of bb_redist_plan_execute), for every
# distributed method and both commands, within one code and across an MDI
# split; a message one rank refuses costs the same, is refused alike
# everywhere and leaves the receive buffers untouched.
. "$(dirname "$0")/../lib.sh"

out="$BB_TMP/out"
T="$B/tests/mpi/test-redist-handshake"

for np in $(bb_ranks 1 2 3 4); do
    bb_np_test "$np" "$out" "$T"
done
bb_finish
