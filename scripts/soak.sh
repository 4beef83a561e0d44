#!/bin/sh
# soak.sh: 100000 sum phases and 10000 transfer tickets at -n 2 (not part of
# make check), reporting RSS and tracked bytes at the start and the end.
#   sh scripts/soak.sh [BUILD_DIR] [SUM_PHASES] [TICKETS]
set -eu
# The soak program links the static copy of the library: a plain binary.
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/build}
make -C "$build" tests/soak/soak >/dev/null
exec timeout 3600 ${MPIEXEC:-mpiexec} -n 2 "$build/tests/soak/soak" "${2:-100000}" "${3:-10000}"
