"""bbench from Python: the bounded protocols in pure Python (reference).

The ctypes binding of libbbench, the benchmark and the differential tests
of issue 41 are not written yet (see python/README.md)."""
from .reference import (BoundedSumPhase, BoundedTransferPhase, CollectiveRefusal,
                        PoisonedPhase, TransferRefusal, TransferTicket)

__all__ = ["BoundedSumPhase", "BoundedTransferPhase", "CollectiveRefusal",
           "PoisonedPhase", "TransferRefusal", "TransferTicket"]
