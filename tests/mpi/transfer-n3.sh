#!/bin/sh
# The transfer phase library at 3 ranks (oversubscribed here).
BB_FULL_ONLY=yes  # every launch over the cores: make check-full
np=3
. "$(dirname "$0")/transfer-np.sh"
