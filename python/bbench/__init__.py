"""bbench from Python.

BoundedSumPhase and BoundedTransferPhase are the bounded protocols written
in pure Python (mpi4py + NumPy) from the protocol document; CBoundedSumPhase
and CBoundedTransferPhase are libbbench's C phases behind the same
interface (through a C extension, bbench._cphase, where it was built, else
through ctypes; binding="ctypes" or "extension" picks one; the library must
be built on mpi4py's MPI).  python3 -m bbench.bench measures them against
each other and against mpi4py's Allreduce.

Importing bbench neither imports mpi4py nor initializes MPI (the
document's ordinary serial construction); constructing a phase does."""
import os as _os

# A build tree keeps the C extension (bbench._cphase) apart from these
# sources: BBENCH_EXT_PATH names its folder (tests/python/python.sh).
__path__ += [d for d in _os.environ.get("BBENCH_EXT_PATH", "").split(_os.pathsep) if d]

from ._clib import CBoundedSumPhase, CBoundedTransferPhase  # noqa: E402
from .reference import (BoundedSumPhase, BoundedTransferPhase, CollectiveRefusal,  # noqa: E402
                        PoisonedPhase, TransferRefusal, TransferTicket)

__all__ = ["BoundedSumPhase", "BoundedTransferPhase", "CBoundedSumPhase",
           "CBoundedTransferPhase", "CollectiveRefusal", "PoisonedPhase",
           "TransferRefusal", "TransferTicket"]
