#!/bin/sh
# redist-scalapack.sh at 4 ranks (oversubscribed on 2 cores: its own script
# so that each stays under a minute).
BB_FULL_ONLY=yes  # every launch over the cores: make check-full
nps=4
. "$(dirname "$0")/redist-scalapack.sh"
