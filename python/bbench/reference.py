"""The bounded sum and transfer phases in pure Python (mpi4py + NumPy).

Written from the protocol document (the vibe-qc runtime protocol, whose
API this follows) and bbench's doc/protocol.md, sections 2 and 3: the same
agreement fields, in the same order, the same status codes, so that a
record of this tier and of the C library describe one contract.  This is
the protocol as its owners would write it; it shares no code with lib/.

Only the thread that imported mpi4py and initialized MPI may call.  No
method here does I/O.
"""
import threading
import time

import numpy as np
from mpi4py import MPI

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# Transfer status codes: 0 success, else 8 * rank + stage (doc/protocol.md 3).
STAGE_CODES = {"preflight": 1, "compute": 2, "consumer": 3, "receipt": 4}
STAGE_NAMES = {v: k for k, v in STAGE_CODES.items()}
PAYLOAD_TAG, RECEIPT_TAG = 0, 1


class CollectiveRefusal(RuntimeError):
    """Every rank refused the call alike; nothing was published.  stage,
    rank (None: no single rank, a contract mismatch) and sequence are the
    same on every rank; the message is local and not for control flow."""

    def __init__(self, message, stage, rank, sequence):
        super().__init__(message)
        self.stage, self.rank, self.sequence = stage, rank, sequence
        self.failure_stage, self.failure_rank = stage, rank


class TransferRefusal(CollectiveRefusal):
    """A refusal of the transfer phase (stages preflight, contract,
    compute, consumer, receipt)."""


class PoisonedPhase(RuntimeError):
    """An MPI error while a request was live: the phase keeps its request
    and buffers (see _FATAL) and the job must end."""


# Poisoned phases stay reachable from here, so that MPI may still write into
# their buffers whatever the caller drops.
_FATAL = []
# Posted transfer phases, rooted until their ticket retires.
_LIVE = set()


def _is_int64(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) \
        and -2**63 <= int(x) <= INT64_MAX


def _minmax(comm, fields):
    """The spec's admission: MIN then MAX of int64 fields, two Allreduces."""
    local = np.asarray(fields, dtype=np.int64)
    lo = np.empty_like(local)
    hi = np.empty_like(local)
    comm.Allreduce(local, lo, op=MPI.MIN)
    comm.Allreduce(local, hi, op=MPI.MAX)
    return lo, hi


class _Owned:
    """Checks shared by both phases: the owning thread, no reentry."""

    def _own(self):
        if threading.get_ident() != self._thread:
            raise RuntimeError("only the thread that created the phase may call it")
        if self._busy:
            raise RuntimeError("the phase was entered again from inside a callback")
        if self.poisoned:
            raise PoisonedPhase("the phase is poisoned: end the job")

    def _poison(self, err):
        self.poisoned = True
        _FATAL.append(self)
        raise PoisonedPhase("MPI failed inside the phase: end the job") from err


class BoundedSumPhase(_Owned):
    """sum(prepare, phase_id=, epoch=, count=, max_elements=): every rank in
    the same order; returns the replicated float64 sum, or raises
    CollectiveRefusal on every rank."""

    FIELDS = 6  # sequence, phase_id, epoch, count, cap, refusal

    def __init__(self, comm=None):
        self.comm = MPI.COMM_WORLD if comm is None else comm  # borrowed, never freed
        self.rank, self.ranks = self.comm.Get_rank(), self.comm.Get_size()
        self.sequence = 0
        self.poisoned = False
        self.metrics = None
        self._thread = threading.get_ident()
        self._busy = False
        self._request = None

    def sum(self, prepare, *, phase_id, epoch, count, max_elements):
        self._own()
        t0 = time.perf_counter()
        refusal, send, err = 0, None, None
        ok_fields = all(_is_int64(v) for v in (phase_id, epoch, count, max_elements))
        if not ok_fields or min(phase_id, epoch, count, max_elements) < 0 \
                or count > INT32_MAX or max_elements > INT32_MAX or count > max_elements:
            refusal = 1
        else:
            self._busy = True
            try:
                arr = prepare()
                if not (isinstance(arr, np.ndarray) and arr.dtype == np.float64
                        and arr.ndim == 1 and arr.shape[0] == count):
                    refusal = 1
                else:
                    send = np.array(arr, dtype=np.float64, order="C", copy=True)
            except Exception as e:  # local: its text never travels
                refusal, err = 1, e
            finally:
                self._busy = False
        fields = [self.sequence,
                  int(phase_id) if ok_fields else 0, int(epoch) if ok_fields else 0,
                  int(count) if ok_fields else 0, int(max_elements) if ok_fields else 0,
                  refusal]
        t1 = time.perf_counter()
        try:
            lo, hi = _minmax(self.comm, fields)
        except MPI.Exception as e:
            self._poison(e)
        t2 = time.perf_counter()
        seq = self.sequence
        self.sequence += 1  # consumed on admission and on refusal alike
        if hi[5] > 0 or not np.array_equal(lo[:5], hi[:5]):
            stage = "preflight" if hi[5] > 0 else "contract"
            exc = CollectiveRefusal("bounded sum refused (%s) at sequence %d"
                                    % (stage, int(hi[0])), stage, None, int(hi[0]))
            if err is not None:
                raise exc from err
            raise exc
        recv = np.empty(count, dtype=np.float64)
        try:
            self._request = self.comm.Iallreduce(send, recv, op=MPI.SUM)
            t3 = time.perf_counter()
            done = self._request.Test()
            t4 = time.perf_counter()
            if not done:
                self._request.Wait()
            t5 = time.perf_counter()
        except MPI.Exception as e:
            self._poison(e)
        self._request = None
        self.metrics = {
            "sequence": seq, "phase_id": int(phase_id), "epoch": int(epoch),
            "rank": self.rank, "ranks": self.ranks,
            "prepare_seconds": t1 - t0, "admission_seconds": t2 - t1,
            "test_seconds": t4 - t3, "exposed_wait_seconds": t5 - t4,
            "total_seconds": time.perf_counter() - t0,
            "payload_bytes": 8 * int(count),
            "tracked_buffer_bytes": 144 + 16 * int(count),
            "max_inflight_requests": 1,
        }
        return recv


class TransferTicket:
    """The one live ticket of a BoundedTransferPhase (begin)."""

    def __init__(self, phase):
        self._phase = phase
        self.finished = False

    def progress(self):
        """Has this rank's payload completed? (one test of its requests)"""
        if self.finished:
            raise RuntimeError("the ticket is finished")
        return self._phase._progress()

    def finish(self, consume, local_error=None):
        if self.finished:
            raise RuntimeError("the ticket is finished")
        self.finished = True
        return self._phase._finish(consume, local_error)


class BoundedTransferPhase(_Owned):
    """One byte payload from source to destination per ticket, on a
    duplicate of the world (payload tag 0, receipt tag 1)."""

    FIELDS = 9  # sequence, phase_id, epoch, source, destination, nbytes, cap, batches, status

    def __init__(self, comm=None):
        world = MPI.COMM_WORLD if comm is None else comm
        self.comm = world.Dup()  # collective; freed by close()
        self.rank, self.ranks = self.comm.Get_rank(), self.comm.Get_size()
        self.sequence = 0
        self.poisoned = False
        self.closed = False
        self.metrics = None
        self._thread = threading.get_ident()
        self._busy = False
        self._ticket = None

    def _code(self, stage):
        return 8 * self.rank + STAGE_CODES[stage]

    def close(self):
        self._own()
        if self._ticket is not None:
            raise RuntimeError("a ticket is live: finish it before close()")
        if not self.closed:
            self.comm.Free()
            self.closed = True

    def run(self, prepare, consume, compute_batch, **contract):
        ticket = self.begin(prepare, **contract)
        err = None
        for i in range(int(contract.get("batches", 0))):
            try:
                compute_batch(i)
            except Exception as e:  # stop the remaining callbacks
                err = e
                break
            ticket.progress()
        return ticket.finish(consume, local_error=err)

    def begin(self, prepare, *, source, destination, nbytes, max_bytes, phase_id,
              epoch, batches):
        self._own()
        if self.closed:
            raise RuntimeError("the phase is closed")
        if self._ticket is not None:
            raise RuntimeError("a ticket is live: one per phase")
        t0 = time.perf_counter()
        vals = (phase_id, epoch, source, destination, nbytes, max_bytes, batches)
        ok = all(_is_int64(v) for v in vals)
        code, err, data = 0, None, None
        if not ok or min(vals) < 0 or nbytes > INT32_MAX or max_bytes > INT32_MAX \
                or nbytes > max_bytes or source >= self.ranks or destination >= self.ranks \
                or self.sequence == INT64_MAX:
            code = self._code("preflight")
        elif self.rank == source:
            self._busy = True
            try:
                arr = prepare()
                if not (isinstance(arr, np.ndarray) and arr.dtype == np.uint8
                        and arr.ndim == 1 and arr.shape[0] == nbytes):
                    code = self._code("preflight")
                else:
                    data = np.array(arr, dtype=np.uint8, order="C", copy=True)
            except Exception as e:
                code, err = self._code("preflight"), e
            finally:
                self._busy = False
        fields = [self.sequence] + [int(v) if ok else 0 for v in vals] + [code]
        t1 = time.perf_counter()
        try:
            lo, hi = _minmax(self.comm, fields)
        except MPI.Exception as e:
            self._poison(e)
        seq = self.sequence
        self.sequence += 1
        self.metrics = {"sequence": seq, "rank": self.rank, "ranks": self.ranks,
                        "prepare_seconds": t1 - t0,
                        "admission_seconds": time.perf_counter() - t1,
                        "failure_stage": None, "failure_rank": None}
        agreed = int(hi[8])
        if agreed != 0 or not np.array_equal(lo[:8], hi[:8]):
            stage, rank = ("contract", None) if agreed == 0 \
                else (STAGE_NAMES[agreed % 8], agreed // 8)
            self.metrics.update(status="refused", failure_stage=stage, failure_rank=rank,
                                total_seconds=time.perf_counter() - t0)
            exc = TransferRefusal("bounded transfer refused (%s)" % stage, stage, rank,
                                  int(hi[0]))
            if err is not None:
                raise exc from err
            raise exc
        src, dst, n = int(source), int(destination), int(nbytes)
        self._t = {"seq": seq, "src": src, "dst": dst, "n": n, "t0": t0, "polls": 0,
                   "completed_during_batches": False, "reqs": [], "data": data,
                   "recv": None, "receipt": np.zeros(2, dtype=np.int64)}
        try:
            if self.rank == src and src == dst:
                self._t["recv"] = data.copy()  # the same rank: one local copy
            elif self.rank == src:
                self._t["reqs"] = [self.comm.Irecv(self._t["receipt"], dst, RECEIPT_TAG),
                                   self.comm.Isend(data, dst, PAYLOAD_TAG)]
            elif self.rank == dst:
                self._t["recv"] = np.empty(n, dtype=np.uint8)
                self._t["reqs"] = [self.comm.Irecv(self._t["recv"], src, PAYLOAD_TAG)]
        except MPI.Exception as e:
            self._poison(e)
        self._ticket = TransferTicket(self)
        _LIVE.add(self)
        return self._ticket

    def _max(self, code):
        """The status agreement: MAX of one int64 over the phase's ranks."""
        out = np.empty(1, dtype=np.int64)
        try:
            self.comm.Allreduce(np.array([code], dtype=np.int64), out, op=MPI.MAX)
        except MPI.Exception as e:
            self._poison(e)
        return int(out[0])

    def _payload_reqs(self):
        reqs = self._t["reqs"]
        return reqs[1:] if self.rank == self._t["src"] and self._t["src"] != self._t["dst"] \
            else reqs

    def _progress(self):
        self._own()
        self._t["polls"] += 1
        try:
            done = all(r.Test() for r in self._payload_reqs())
        except MPI.Exception as e:
            self._poison(e)
        self._t["completed_during_batches"] |= done
        return done

    def _finish(self, consume, local_error):
        t = self._t
        try:
            for r in self._payload_reqs():
                r.Wait()
        except MPI.Exception as e:
            self._poison(e)
        # Any local_error, an exception or not, is this rank's compute refusal.
        mine = 0 if local_error is None else self._code("compute")
        agreed = self._max(mine)
        terminal, value, cerr = agreed, None, None
        if self.rank == t["dst"]:
            outcome = agreed
            if agreed == 0:
                view = t["recv"].view()
                view.flags.writeable = False
                self._busy = True
                try:
                    value = consume(view)
                except Exception as e:
                    outcome, cerr = self._code("consumer"), e
                finally:
                    self._busy = False
            terminal = max(terminal, outcome)
            receipt = np.array([t["seq"], outcome], dtype=np.int64)
            if t["src"] != t["dst"]:
                try:
                    self.comm.Send(receipt, t["src"], RECEIPT_TAG)
                except MPI.Exception as e:
                    self._poison(e)
            else:
                t["receipt"][:] = receipt
        if self.rank == t["src"]:
            if t["src"] != t["dst"]:
                try:
                    t["reqs"][0].Wait()
                except MPI.Exception as e:
                    self._poison(e)
            got = t["receipt"]
            valid = got[0] == t["seq"] and (
                got[1] == agreed if agreed != 0
                else got[1] in (0, 8 * t["dst"] + STAGE_CODES["consumer"]))
            if not valid:
                terminal = max(terminal, self._code("receipt"))
        final = self._max(terminal)
        self._ticket = None
        _LIVE.discard(self)
        self.metrics.update(polls=t["polls"],
                            completed_during_batches=t["completed_during_batches"],
                            payload_bytes=t["n"] if self.rank in (t["src"], t["dst"]) else 0,
                            total_seconds=time.perf_counter() - t["t0"])
        self._t = None
        if final != 0:
            stage, rank = STAGE_NAMES[final % 8], final // 8
            self.metrics.update(status="refused", failure_stage=stage, failure_rank=rank)
            exc = TransferRefusal("bounded transfer refused (%s)" % stage, stage, rank,
                                  t["seq"])
            if cerr is not None or local_error is not None:
                raise exc from (cerr or local_error)
            raise exc
        self.metrics.update(status="ok")
        return value if self.rank == t["dst"] else None
