#!/bin/sh
# The transfer phase library at 4 ranks (oversubscribed here).
np=4
. "$(dirname "$0")/transfer-np.sh"
