"""The bounded sum and transfer phases in pure Python (mpi4py + NumPy).

Written from the protocol document (the vibe-qc runtime protocol, whose
API this follows) and bbench's doc/protocol.md, sections 2 and 3: the same
agreement fields, in the same order, the same status codes, so that a
record of this tier and of the C library describe one contract.  This is
the protocol as its owners would write it; it shares no code with lib/.

Importing this module neither imports nor initializes MPI (the document's
"ordinary serial construction"); constructing a phase does, and binds the
world there: only the main thread, which must be MPI's main (initializing)
thread with at least MPI_THREAD_FUNNELED provided, may construct and call a
phase.  No method here does I/O.
"""
import threading
import time

import numpy as np

MPI = None  # mpi4py.MPI, imported by the first phase constructed (_mpi)

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# Transfer status codes: 0 success, else 8 * rank + stage (doc/protocol.md 3).
STAGE_CODES = {"preflight": 1, "compute": 2, "consumer": 3, "receipt": 4}
STAGE_NAMES = {v: k for k, v in STAGE_CODES.items()}
PAYLOAD_TAG, RECEIPT_TAG = 0, 1

# The document's census (counted buffer bytes, Python objects and MPI's own
# memory excluded): the sum phase's three 48-byte control arrays and two
# float64 payload buffers; the transfer phase's three control arrays (216
# bytes: nine int64 fields local, MIN and MAX) and its 16-byte receipt, and
# one payload buffer of nbytes on a data rank (the same rank: one copy).
SUM_CONTROL_BYTES = 3 * 6 * 8
TRANSFER_CONTROL_BYTES = 3 * 9 * 8
RECEIPT_BYTES = 2 * 8

# The metrics' names (doc/protocol.md, "The Python API"): the sum phase's
# success record, the transfer phase's full record (run/finish) and its
# minimal one (a preflight or contract refusal, a fatal transport error).
SUM_METRICS = ("sequence", "phase_id", "epoch", "rank", "ranks", "prepare_seconds",
               "admission_seconds", "test_seconds", "exposed_wait_seconds", "total_seconds",
               "payload_bytes", "tracked_buffer_bytes", "max_inflight_requests")
TRANSFER_MINIMAL_METRICS = ("sequence", "rank", "status", "total_seconds", "failure_stage",
                            "failure_rank")
TRANSFER_METRICS = ("sequence", "phase_id", "epoch", "rank", "ranks", "status",
                    "prepare_seconds", "admission_seconds", "compute_seconds",
                    "progress_seconds", "payload_wait_seconds", "status_agreement_seconds",
                    "consumer_seconds", "receipt_wait_seconds", "total_seconds",
                    "batches_executed", "polls", "completed_during_batches", "payload_bytes",
                    "tracked_buffer_bytes", "max_inflight_requests", "failure_stage",
                    "failure_rank")


def _mpi():
    """mpi4py.MPI, imported (and so MPI initialized) on first use."""
    global MPI
    if MPI is None:
        from mpi4py import MPI as mpi
        MPI = mpi
    return MPI


def bind_world(comm=None):
    """The document's world binding, as the C tier's bb_world_bind: comm is
    the validated world (None or COMM_WORLD itself; a launched singleton is
    a world of one), the caller is the main thread and MPI's main thread,
    and the provided level is at least THREAD_FUNNELED.  RuntimeError (a
    local setup failure, before any collective) otherwise."""
    mpi = _mpi()
    world = mpi.COMM_WORLD
    if comm is not None and comm != world:
        raise ValueError("a phase binds the validated world (MPI.COMM_WORLD or None), "
                         "not another communicator")
    if not mpi.Is_initialized() or mpi.Is_finalized():
        raise RuntimeError("world binding: MPI is not initialized, or finalized")
    if threading.current_thread() is not threading.main_thread() or not mpi.Is_thread_main():
        raise RuntimeError("world binding: only the main thread that initialized MPI may "
                           "bind the world")
    if mpi.Query_thread() < mpi.THREAD_FUNNELED:
        raise RuntimeError("world binding: MPI provides less than MPI_THREAD_FUNNELED")
    return world


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


def chain(exc, cause):
    """exc raised from cause when cause is an exception; a non-exception
    cause (an invalid local_error) is not chained: it already became a
    compute refusal, and chaining it would raise Python's TypeError on this
    rank alone after the agreement."""
    if isinstance(cause, BaseException):
        raise exc from cause
    raise exc


# Poisoned phases stay reachable from here, so that MPI may still write into
# their buffers whatever the caller drops.
_FATAL = []
# Posted transfer phases, rooted until their ticket retires.
_LIVE = set()


def _is_int64(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) \
        and -2**63 <= int(x) <= INT64_MAX


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
    CollectiveRefusal on every rank.  metrics: the last successful call's
    record (a refusal leaves it as it was; None before the first)."""

    FIELDS = 6  # sequence, phase_id, epoch, count, cap, refusal

    def __init__(self, comm=None):
        self.comm = bind_world(comm)  # borrowed, never duplicated or freed
        self.rank, self.ranks = self.comm.Get_rank(), self.comm.Get_size()
        self.sequence = 0
        self.poisoned = False
        self.metrics = None
        self._thread = threading.get_ident()
        self._busy = False
        self._request = None
        # The control storage, three 48-byte arrays, made once.
        self._local = np.zeros(self.FIELDS, dtype=np.int64)
        self._lo = np.empty_like(self._local)
        self._hi = np.empty_like(self._local)

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
        self._local[:] = [self.sequence,
                          int(phase_id) if ok_fields else 0, int(epoch) if ok_fields else 0,
                          int(count) if ok_fields else 0,
                          int(max_elements) if ok_fields else 0, refusal]
        t1 = time.perf_counter()
        lo, hi = self._lo, self._hi
        try:
            self.comm.Allreduce(self._local, lo, op=MPI.MIN)
            self.comm.Allreduce(self._local, hi, op=MPI.MAX)
        except MPI.Exception as e:
            self._poison(e)
        t2 = time.perf_counter()
        seq = self.sequence
        self.sequence += 1  # consumed on admission and on refusal alike
        if hi[5] > 0 or not np.array_equal(lo[:5], hi[:5]):
            stage = "preflight" if hi[5] > 0 else "contract"
            chain(CollectiveRefusal("bounded sum refused (%s) at sequence %d"
                                    % (stage, int(hi[0])), stage, None, int(hi[0])), err)
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
        send = None  # the instance keeps no payload reference
        self.metrics = {
            "sequence": seq, "phase_id": int(phase_id), "epoch": int(epoch),
            "rank": self.rank, "ranks": self.ranks,
            "prepare_seconds": t1 - t0, "admission_seconds": t2 - t1,
            "test_seconds": t4 - t3, "exposed_wait_seconds": t5 - t4,
            "total_seconds": time.perf_counter() - t0,
            "payload_bytes": 8 * int(count),
            "tracked_buffer_bytes": SUM_CONTROL_BYTES + 16 * int(count),
            "max_inflight_requests": 1,
        }
        return recv


class TransferTicket:
    """The one live ticket of a BoundedTransferPhase (begin).  metrics: None
    while the ticket is live, then its record (the phase's metrics as the
    ticket retired)."""

    def __init__(self, phase):
        self._phase = phase
        self.finished = False
        self.metrics = None

    def progress(self):
        """Has this rank's payload completed? (one test of its requests)"""
        if self.finished:
            raise RuntimeError("the ticket is finished")
        return self._phase._progress()

    def finish(self, consume, local_error=None):
        if self.finished:
            raise RuntimeError("the ticket is finished")
        self._phase._own()
        self.finished = True
        try:
            return self._phase._finish(consume, local_error)
        finally:
            m = self._phase.metrics
            self.metrics = dict(m) if m is not None else None


class BoundedTransferPhase(_Owned):
    """One byte payload from source to destination per ticket, on a
    duplicate of the world (payload tag 0, receipt tag 1).  metrics: the
    latest ticket's record, refusals included (TRANSFER_METRICS; a
    preflight or contract refusal and a fatal transport error give the
    minimal TRANSFER_MINIMAL_METRICS)."""

    FIELDS = 9  # sequence, phase_id, epoch, source, destination, nbytes, cap, batches, status

    def __init__(self, comm=None):
        world = bind_world(comm)
        self.comm = world.Dup()  # collective; freed by close()
        self.rank, self.ranks = self.comm.Get_rank(), self.comm.Get_size()
        self.sequence = 0
        self.poisoned = False
        self.closed = False
        self.metrics = None
        self._thread = threading.get_ident()
        self._busy = False
        self._ticket = None
        self._t = None
        # The control storage (216 bytes) and the receipt (16), made once.
        self._local = np.zeros(self.FIELDS, dtype=np.int64)
        self._lo = np.empty_like(self._local)
        self._hi = np.empty_like(self._local)
        self._receipt = np.zeros(2, dtype=np.int64)

    def _code(self, stage):
        return 8 * self.rank + STAGE_CODES[stage]

    def _fatal(self, err, seq, t0):
        """A transport error: status fatal, stage transport, this rank (the
        local detecting rank, not an agreed diagnosis); then poisoned."""
        self.metrics = {"sequence": seq, "rank": self.rank, "status": "fatal",
                        "total_seconds": time.perf_counter() - t0,
                        "failure_stage": "transport", "failure_rank": self.rank}
        if self._ticket is not None:
            self._ticket.metrics = dict(self.metrics)
        self._poison(err)

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
        compute_s, executed = 0.0, 0
        for i in range(int(contract.get("batches", 0))):
            tb = time.perf_counter()
            try:
                compute_batch(i)
            except Exception as e:  # stop the remaining callbacks
                err = e
                compute_s += time.perf_counter() - tb
                executed += 1
                break
            compute_s += time.perf_counter() - tb
            executed += 1
            ticket.progress()
        self._t["compute"] = (compute_s, executed)
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
                    # the owned contiguous buffer (the same rank's only copy)
                    data = np.array(arr, dtype=np.uint8, order="C", copy=True)
            except Exception as e:
                code, err = self._code("preflight"), e
            finally:
                self._busy = False
        elif self.rank == destination:
            data = np.empty(int(nbytes), dtype=np.uint8)  # the receive buffer
        self._local[:] = [self.sequence] + [int(v) if ok else 0 for v in vals] + [code]
        t1 = time.perf_counter()
        seq = self.sequence
        lo, hi = self._lo, self._hi
        try:
            self.comm.Allreduce(self._local, lo, op=MPI.MIN)
            self.comm.Allreduce(self._local, hi, op=MPI.MAX)
        except MPI.Exception as e:
            self._fatal(e, seq, t0)
        t2 = time.perf_counter()
        self.sequence += 1
        agreed = int(hi[8])
        if agreed != 0 or not np.array_equal(lo[:8], hi[:8]):
            stage, rank = ("contract", None) if agreed == 0 \
                else (STAGE_NAMES[agreed % 8], agreed // 8)
            # The minimal record; sequence is the highest presented, as the
            # exception's, so that every rank reports the same.
            self.metrics = {"sequence": int(hi[0]), "rank": self.rank, "status": "refused",
                            "total_seconds": time.perf_counter() - t0,
                            "failure_stage": stage, "failure_rank": rank}
            chain(TransferRefusal("bounded transfer refused (%s)" % stage, stage, rank,
                                  int(hi[0])), err)
        src, dst, n = int(source), int(destination), int(nbytes)
        role = "same" if self.rank == src == dst else "source" if self.rank == src \
            else "destination" if self.rank == dst else "none"
        self._t = t = {"seq": seq, "phase_id": int(phase_id), "epoch": int(epoch),
                       "src": src, "dst": dst, "n": n, "role": role, "t0": t0,
                       "prepare": t1 - t0, "admission": t2 - t1, "polls": 0, "progress": 0.0,
                       "completed": None if role in ("same", "none") else False,
                       "compute": (None, None), "payload": None, "receipt_req": None,
                       "data": data, "inflight": 0}
        self._receipt[:] = 0
        try:
            if role == "source":
                t["receipt_req"] = self.comm.Irecv(self._receipt, dst, RECEIPT_TAG)
                t["payload"] = self.comm.Isend(data, dst, PAYLOAD_TAG)
                t["inflight"] = 2
            elif role == "destination":
                t["payload"] = self.comm.Irecv(data, src, PAYLOAD_TAG)
                t["inflight"] = 1
        except MPI.Exception as e:
            self._fatal(e, seq, t0)
        self._ticket = TransferTicket(self)
        _LIVE.add(self)
        return self._ticket

    def _max(self, code):
        """The status agreement: MAX of one int64 over the phase's ranks
        (into the control arrays: no storage of its own)."""
        self._local[8] = code
        try:
            self.comm.Allreduce(self._local[8:], self._hi[8:], op=MPI.MAX)
        except MPI.Exception as e:
            self._fatal(e, self._t["seq"], self._t["t0"])
        return int(self._hi[8])

    def _progress(self):
        self._own()
        t = self._t
        tp = time.perf_counter()
        t["polls"] += 1
        done = True
        try:
            if t["payload"] is not None:
                done = t["payload"].Test()
        except MPI.Exception as e:
            self._fatal(e, t["seq"], t["t0"])
        if t["completed"] is not None:
            t["completed"] = t["completed"] or done
        t["progress"] += time.perf_counter() - tp
        return done

    def _finish(self, consume, local_error):
        t = self._t
        tw = time.perf_counter()
        try:
            if t["payload"] is not None:
                t["payload"].Wait()
        except MPI.Exception as e:
            self._fatal(e, t["seq"], t["t0"])
        ts = time.perf_counter()
        # Any local_error, an exception or not, is this rank's compute refusal.
        mine = 0 if local_error is None else self._code("compute")
        agreed = self._max(mine)
        agreement_s = time.perf_counter() - ts
        terminal, value, cerr, consumer_s = agreed, None, None, 0.0
        tr = time.perf_counter()
        if self.rank == t["dst"]:
            outcome = agreed
            if agreed == 0:
                view = t["data"].view()
                view.flags.writeable = False
                tc = time.perf_counter()
                self._busy = True
                try:
                    value = consume(view)
                except Exception as e:
                    outcome, cerr = self._code("consumer"), e
                finally:
                    self._busy = False
                consumer_s = time.perf_counter() - tc
            terminal = max(terminal, outcome)
            tr = time.perf_counter()
            if t["src"] != t["dst"]:
                # The destination's receipt send, completed here.
                self._receipt[:] = [t["seq"], outcome]
                try:
                    self.comm.Isend(self._receipt, t["src"], RECEIPT_TAG).Wait()
                except MPI.Exception as e:
                    self._fatal(e, t["seq"], t["t0"])
            else:
                self._receipt[:] = [t["seq"], outcome]
        if self.rank == t["src"]:
            if t["src"] != t["dst"]:
                try:
                    t["receipt_req"].Wait()
                except MPI.Exception as e:
                    self._fatal(e, t["seq"], t["t0"])
            got = self._receipt
            valid = got[0] == t["seq"] and (
                got[1] == agreed if agreed != 0
                else got[1] in (0, 8 * t["dst"] + STAGE_CODES["consumer"]))
            if not valid:
                terminal = max(terminal, self._code("receipt"))
        receipt_s = time.perf_counter() - tr
        tt = time.perf_counter()
        final = self._max(terminal)
        agreement_s += time.perf_counter() - tt
        data_rank = t["role"] != "none"
        compute_s, executed = t["compute"]
        self.metrics = {
            "sequence": t["seq"], "phase_id": t["phase_id"], "epoch": t["epoch"],
            "rank": self.rank, "ranks": self.ranks, "status": "ok",
            "prepare_seconds": t["prepare"], "admission_seconds": t["admission"],
            "compute_seconds": compute_s, "progress_seconds": t["progress"],
            "payload_wait_seconds": ts - tw, "status_agreement_seconds": agreement_s,
            "consumer_seconds": consumer_s, "receipt_wait_seconds": receipt_s,
            "total_seconds": time.perf_counter() - t["t0"],
            "batches_executed": executed, "polls": t["polls"],
            "completed_during_batches": t["completed"],
            "payload_bytes": t["n"] if data_rank else 0,
            "tracked_buffer_bytes": TRANSFER_CONTROL_BYTES + RECEIPT_BYTES
            + (t["n"] if data_rank else 0),
            "max_inflight_requests": t["inflight"],
            "failure_stage": None, "failure_rank": None}
        # Retired: the instance drops its request and buffer references.
        self._ticket = None
        self._t = None
        _LIVE.discard(self)
        if final != 0:
            stage, rank = STAGE_NAMES[final % 8], final // 8
            self.metrics.update(status="refused", failure_stage=stage, failure_rank=rank)
            chain(TransferRefusal("bounded transfer refused (%s)" % stage, stage, rank,
                                  t["seq"]), cerr if cerr is not None else local_error)
        return value if self.rank == t["dst"] else None
