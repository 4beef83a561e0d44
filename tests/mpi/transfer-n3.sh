#!/bin/sh
# The transfer phase library at 3 ranks (oversubscribed here).
np=3
. "$(dirname "$0")/transfer-np.sh"
