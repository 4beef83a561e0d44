"""bbench from Python.

BoundedSumPhase and BoundedTransferPhase are the bounded protocols written
in pure Python (mpi4py + NumPy) from the protocol document; CBoundedSumPhase
and CBoundedTransferPhase are libbbench's C phases behind the same
interface (a ctypes binding: the library must be built on mpi4py's MPI).
python3 -m bbench.bench measures them against each other and against
mpi4py's Allreduce."""
from ._clib import CBoundedSumPhase, CBoundedTransferPhase
from .reference import (BoundedSumPhase, BoundedTransferPhase, CollectiveRefusal,
                        PoisonedPhase, TransferRefusal, TransferTicket)

__all__ = ["BoundedSumPhase", "BoundedTransferPhase", "CBoundedSumPhase",
           "CBoundedTransferPhase", "CollectiveRefusal", "PoisonedPhase",
           "TransferRefusal", "TransferTicket"]
