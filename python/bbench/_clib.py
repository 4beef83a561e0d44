"""ctypes binding of libbbench's sum and transfer phases, with their calls
through the C extension bbench._cphase where it was built.

Why ctypes underneath: it needs no compiler or Python headers where it is
installed (Debian's python3 has ctypes, not cffi), so the phases work
without the extension; but ctypes costs about 5 us a call, the phase
itself 2-3 us at 8 bytes, so sum() and run() go through the extension
where it was built (0.5 us; the benchmark's c-py/c-in measures it).

The library must be built against mpi4py's MPI (Debian's mpi4py is Open
MPI's): two MPI libraries in one process would each think it owns MPI.
Importing this module imports neither mpi4py nor the library: the first
phase constructed does.

Each phase's metrics is a dict with the document's names and units, as
the reference's (reference.SUM_METRICS, TRANSFER_METRICS): the sum phase's
last successful call (a refusal leaves it as it was), the transfer phase's
latest ticket (a refusal or a fatal error included).  c_metrics is the C
struct of the latest call, with the C phase's own names and extra fields.
"""
import ctypes
import os
import weakref

import numpy as np
from . import reference
from .reference import CollectiveRefusal, PoisonedPhase, TransferRefusal, bind_world, chain

_STAGES = {0: None, 1: "preflight", 2: "compute", 3: "consumer", 4: "receipt",
           5: "contract", 6: "transport"}
BB_OK, BB_REFUSED, BB_ERR_POISONED, BB_ERR_MPI = 0, 1, 6, 7
# Results of this many doubles or more are lent to NumPy, smaller ones copied.
_LEND_FROM = 8192


class _Refusal(ctypes.Structure):
    _fields_ = [("stage", ctypes.c_int), ("rank", ctypes.c_int),
                ("sequence", ctypes.c_int64)]


class _SumMetrics(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int),
                ("sequence", ctypes.c_int64), ("phase_id", ctypes.c_int64),
                ("epoch", ctypes.c_int64), ("count", ctypes.c_int64),
                ("rank", ctypes.c_int), ("ranks", ctypes.c_int),
                ("prepare_s", ctypes.c_double), ("admission_s", ctypes.c_double),
                ("post_s", ctypes.c_double), ("test_s", ctypes.c_double),
                ("wait_s", ctypes.c_double), ("total_s", ctypes.c_double),
                ("test_completed", ctypes.c_int),
                ("payload_bytes", ctypes.c_int64), ("tracked_bytes", ctypes.c_int64),
                ("max_inflight", ctypes.c_int), ("requests_posted", ctypes.c_int),
                ("local_cause", ctypes.c_int), ("refusal", _Refusal),
                ("mpi_call", ctypes.c_char_p)]


class _SumContract(ctypes.Structure):
    _fields_ = [("phase_id", ctypes.c_int64), ("epoch", ctypes.c_int64),
                ("count", ctypes.c_int64), ("max_elements", ctypes.c_int64)]


_PREPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                            ctypes.POINTER(ctypes.c_void_p),  # const double **
                            ctypes.POINTER(ctypes.c_int64))
_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double))


class _SumProvider(ctypes.Structure):
    _fields_ = [("prepare", _PREPARE), ("release", _RELEASE), ("arg", ctypes.c_void_p)]


def _mpi_name():
    v = reference._mpi().Get_library_version()
    return "openmpi" if v.startswith("Open MPI") else "mpich" if "MPICH" in v else "other"


_lib = None
_ext = False  # not looked for yet


def _raise_status(phase, st, call, error, refusal, what):
    """Raise what a phase's call that returned st (not BB_OK) means: the
    collective refusal its metrics name (chained to the Python exception a
    callback or the caller gave, error), PoisonedPhase, or RuntimeError."""
    lib = phase._lib
    if st == BB_REFUSED:
        r = phase._metrics.refusal
        if _STAGES.get(r.stage) is None:
            raise RuntimeError("%s refused, naming no stage: libbbench wrote no refusal into "
                               "the call's metrics" % call)
        # rank -1 is C's None; a non-exception error (an invalid
        # local_error) is not chained (reference.chain).
        chain(refusal("bounded %s refused (%s)" % (what, _STAGES[r.stage]), _STAGES[r.stage],
                      None if r.rank < 0 else r.rank, r.sequence), error)
    if st in (BB_ERR_MPI, BB_ERR_POISONED):
        phase.poisoned = True
        raise PoisonedPhase("libbbench: %s" % lib.bb_status_string(st).decode())
    raise RuntimeError("%s: %s" % (call, lib.bb_status_string(st).decode()))


def _field(x):
    """A contract field as the library takes it: an int or NumPy integer
    (not a bool) that fits int64, else -1, which the library refuses on
    every rank (the reference refuses such a field alike)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool) \
            and -2**63 <= x < 2**63:
        return int(x)
    return -1


def _extension(binding=None):
    """bbench._cphase (the C extension) or None: binding "ctypes" (or, when
    binding is None, $BBENCH_BINDING=ctypes) says not to use it, "extension"
    that it must be there, None takes it where it was built.  Looked for
    after load(): in a build tree it finds libbbench already loaded."""
    global _ext
    if binding not in (None, "ctypes", "extension"):
        raise ValueError("binding: None, 'ctypes' or 'extension', not %r" % (binding,))
    if binding is None and os.environ.get("BBENCH_BINDING") == "ctypes":
        binding = "ctypes"
    if binding == "ctypes":
        return None
    if _ext is False:
        try:
            from . import _cphase
            _ext = _cphase
        except ImportError:
            _ext = None
    if _ext is None and binding == "extension":
        raise RuntimeError("the C extension bbench._cphase is not built")
    return _ext


def _seconds(x):
    """A C time: negative is "not measured by the phase", None here."""
    return None if x < 0 else x


def sum_record(m):
    """The document's sum record (reference.SUM_METRICS) from a C
    bb_sum_metrics_t; None before the first success."""
    if m.sequence < 0:
        return None
    return {"sequence": m.sequence, "phase_id": m.phase_id, "epoch": m.epoch,
            "rank": m.rank, "ranks": m.ranks,
            "prepare_seconds": _seconds(m.prepare_s), "admission_seconds": _seconds(m.admission_s),
            "test_seconds": _seconds(m.test_s), "exposed_wait_seconds": _seconds(m.wait_s),
            "total_seconds": _seconds(m.total_s), "payload_bytes": m.payload_bytes,
            "tracked_buffer_bytes": m.tracked_bytes, "max_inflight_requests": m.max_inflight}


def transfer_record(m):
    """The document's transfer record (reference.TRANSFER_METRICS, or the
    minimal TRANSFER_MINIMAL_METRICS for a preflight or contract refusal
    and a fatal error) from a C bb_transfer_metrics_t; None before the
    first ticket retired or was refused."""
    if m.sequence < 0:
        return None
    stage = _STAGES.get(m.refusal.stage)
    rank = None if m.refusal.rank < 0 else m.refusal.rank
    if m.status in (BB_ERR_MPI, BB_ERR_POISONED):
        return {"sequence": m.sequence, "rank": m.rank, "status": "fatal",
                "total_seconds": _seconds(m.total_s), "failure_stage": "transport",
                "failure_rank": m.rank}
    if m.status == BB_REFUSED and stage in ("preflight", "contract"):
        return {"sequence": m.refusal.sequence, "rank": m.rank, "status": "refused",
                "total_seconds": _seconds(m.total_s), "failure_stage": stage,
                "failure_rank": rank}
    cdb = m.completed_during_batches
    return {"sequence": m.sequence, "phase_id": m.phase_id, "epoch": m.epoch,
            "rank": m.rank, "ranks": m.ranks, "status": "ok" if m.status == BB_OK else "refused",
            "prepare_seconds": m.prepare_s, "admission_seconds": m.admission_s,
            "compute_seconds": _seconds(m.compute_s), "progress_seconds": m.progress_s,
            "payload_wait_seconds": m.payload_wait_s,
            "status_agreement_seconds": m.status_agreement_s + m.terminal_agreement_s,
            "consumer_seconds": m.consumer_s, "receipt_wait_seconds": m.receipt_wait_s,
            "total_seconds": m.total_s,
            "batches_executed": None if m.batches_executed < 0 else m.batches_executed,
            "polls": m.polls, "completed_during_batches": None if cdb < 0 else bool(cdb),
            "payload_bytes": m.payload_bytes, "tracked_buffer_bytes": m.tracked_bytes,
            "max_inflight_requests": m.max_inflight,
            "failure_stage": stage if m.status == BB_REFUSED else None,
            "failure_rank": rank if m.status == BB_REFUSED else None}



def load(path=None, mpi=None):
    """libbbench at path (default $BBENCH_LIB, else where make install put
    it), built against mpi ($BBENCH_MPI: openmpi or mpich, else the
    installed build's), which must be mpi4py's."""
    global _lib
    if _lib is not None:
        return _lib
    path = path or os.environ.get("BBENCH_LIB")
    mpi = mpi or os.environ.get("BBENCH_MPI")
    if not path or not mpi:
        try:  # installed: make install wrote where the library went
            from . import _build
        except ImportError:
            raise RuntimeError("set BBENCH_LIB (libbbench.so) and BBENCH_MPI (its MPI): "
                               "this bbench package was not installed by make install")
        path, mpi = path or _build.LIB, mpi or _build.MPI
    if mpi != _mpi_name():
        raise RuntimeError("libbbench is built with %s, mpi4py with %s: one process "
                           "cannot hold both" % (mpi, _mpi_name()))
    lib = ctypes.CDLL(path)
    comm_t = ctypes.c_void_p if mpi == "openmpi" else ctypes.c_int
    lib.bb_world_bind.argtypes = [comm_t, ctypes.POINTER(ctypes.c_void_p)]
    lib.bb_world_release.argtypes = [ctypes.c_void_p]
    lib.bb_sum_phase_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.bb_sum_phase_create_attr.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                             ctypes.POINTER(ctypes.c_void_p)]
    lib.bb_sum_phase_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(_SumProvider),
                                     ctypes.POINTER(_SumContract),
                                     ctypes.POINTER(ctypes.c_void_p),  # double **
                                     ctypes.POINTER(_SumMetrics)]
    lib.bb_sum_phase_sequence.argtypes = [ctypes.c_void_p]
    lib.bb_sum_phase_sequence.restype = ctypes.c_int64
    lib.bb_sum_phase_destroy.argtypes = [ctypes.c_void_p]
    lib.bb_free.argtypes = [ctypes.c_void_p]
    lib.bb_status_string.restype = ctypes.c_char_p
    lib._comm_t = comm_t
    _lib = lib
    return lib


class _Attr(ctypes.Structure):
    _fields_ = [("buffers", ctypes.c_int), ("admission", ctypes.c_int),
                ("requests", ctypes.c_int), ("metrics", ctypes.c_int),
                ("shape", ctypes.c_int), ("shape_count", ctypes.c_int64),
                ("shape_cap", ctypes.c_int64)]


# The policies' names, as bbench-sum's options spell them, and their codes.
BUFFERS = {"fresh": 0, "retained": 1, "borrowed": 2}
ADMISSIONS = {"spec": 0, "fused": 1, "fused-op": 2}
REQUESTS = {"per-call": 0, "persistent": 1}


class _CPhase:
    """What both C phases share: the world bound to an mpi4py communicator,
    and close() (_end names the library call that ends the phase)."""
    _end = None
    _to_record = None

    @property
    def metrics(self):
        """The document's record (a new dict at each access), or None."""
        return type(self)._to_record(self._record)

    @property
    def c_metrics(self):
        """The latest call's C metrics struct (the C phase's names), or None."""
        return self._metrics if self._metrics.sequence >= 0 else None

    def _bind(self, comm):
        lib = self._lib
        comm = bind_world(comm)  # the reference's checks, then the C tier's own
        self._world = ctypes.c_void_p()
        st = lib.bb_world_bind(lib._comm_t(reference.MPI._handleof(comm)),
                               ctypes.byref(self._world))
        if st != BB_OK:
            raise RuntimeError("bb_world_bind: %s" % lib.bb_status_string(st).decode())
        self._phase = ctypes.c_void_p()

    def close(self):
        """The C phase's end, and its status as the reference's close()
        raises it: a live ticket or a call from inside one of the phase's
        callbacks is RuntimeError, a poisoned phase PoisonedPhase, and the
        phase and its world then stay as they were (the C phase still holds
        them).  Only after the end succeeded is the world released."""
        if self._phase:
            st = getattr(self._lib, self._end)(self._phase)
            if st in (BB_ERR_POISONED, BB_ERR_MPI):  # a failed MPI call poisons it
                self.poisoned = True
                raise PoisonedPhase("the phase is poisoned: end the job (%s: %s)"
                                    % (self._end, self._lib.bb_status_string(st).decode()))
            if st != BB_OK:
                raise RuntimeError("close() refused: a ticket is live or the phase is inside "
                                   "one of its calls (%s: %s)"
                                   % (self._end, self._lib.bb_status_string(st).decode()))
            self._phase = ctypes.c_void_p()
        for name in ("sum", "run"):  # the extension's caller forgets the phase
            caller = self.__dict__.pop(name, None)
            if caller is not None:
                caller.close()
        # ctypes' byref objects kept on the instance refer back to it where
        # the cycle collector cannot see: drop them, so that a closed phase
        # is freed.
        for name in [k for k in self.__dict__ if k.startswith("_") and k.endswith("_ref")]:
            self.__dict__[name] = None
        if self._world:
            self._lib.bb_world_release(self._world)
            self._world = ctypes.c_void_p()


class CBoundedSumPhase(_CPhase):
    """libbbench's sum phase behind the reference's interface, with the C
    phase's policies (defaults: fresh buffers, spec admission, per-call
    requests; every policy gives the spec's verdicts).  With fresh buffers
    the result is the caller's array; with retained or borrowed ones it is a
    read-only view of the phase's own buffer, as the C phase lends it: valid
    until the next sum() or close() (copy it to keep it).  Borrowed buffers
    post prepare()'s array itself: keep it unchanged until sum() returns."""
    _end = "bb_sum_phase_destroy"
    _to_record = staticmethod(sum_record)

    def __init__(self, comm=None, *, buffers="fresh", admission="spec", requests="per-call",
                 binding=None):
        attr = _attr_of(buffers, admission, requests)
        if binding not in (None, "ctypes", "extension"):
            raise ValueError("binding: None, 'ctypes' or 'extension', not %r" % (binding,))
        self.policies = {"buffers": buffers, "admission": admission, "requests": requests}
        self._lent = buffers != "fresh"
        self._lib = lib = load()
        ext = _extension(binding)  # after load(): see _extension
        self._bind(comm)
        st = lib.bb_sum_phase_create_attr(self._world, ctypes.byref(attr),
                                          ctypes.byref(self._phase))
        if st != BB_OK:
            lib.bb_world_release(self._world)
            self._world = ctypes.c_void_p()
            raise RuntimeError("bb_sum_phase_create_attr (%s): %s"
                               % (", ".join(self.policies.values()),
                                  lib.bb_status_string(st).decode()))
        self.poisoned = False
        # Made once: ctypes objects cost microseconds each, and the call is
        # a few microseconds itself at 8 bytes.
        self._prepare = self._failure = self._held = None
        self._provider = _SumProvider(_PREPARE(self._c_prepare), _RELEASE(self._c_release),
                                      None)
        self._contract = _SumContract()
        self._metrics = _SumMetrics()  # the call's
        self._record = _SumMetrics()   # the last success's: metrics
        self._metrics.sequence = self._record.sequence = -1
        self._result = ctypes.c_void_p()
        self._provider_ref = ctypes.byref(self._provider)
        self._contract_ref = ctypes.byref(self._contract)
        self._metrics_ref = ctypes.byref(self._metrics)
        self._result_ref = ctypes.byref(self._result)
        self._run = lib.bb_sum_phase_run
        self._phase_addr = self._phase.value
        self._metrics_addr = ctypes.addressof(self._metrics)
        # The C extension, when built: sum() is its C callable, in this
        # instance's dict (no Python frame a call).
        if ext is not None:
            self.sum = ext.caller("sum", self._phase_addr, self._metrics_addr, self._metrics,
                                  self, self._lent, ctypes.addressof(self._record),
                                  self._record)
        self.binding = "extension" if ext is not None else "ctypes"

    @property
    def sequence(self):
        return self._lib.bb_sum_phase_sequence(self._phase)

    def _c_prepare(self, arg, data_out, len_out):
        try:
            arr = self._prepare()
        except Exception as e:  # local: its text stays here
            self._failure = e
            return 1
        if not (isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.ndim == 1):
            return 1
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        self._held = arr  # alive until the phase releases it
        # The address, without arr.ctypes (which builds an object a call).
        data_out[0] = arr.__array_interface__["data"][0]
        len_out[0] = arr.shape[0]
        return 0

    def _c_release(self, arg, data):
        self._held = None

    def sum(self, prepare, *, phase_id, epoch, count, max_elements):
        """Through ctypes (the extension's caller replaces it when built)."""
        if not self._phase:
            raise RuntimeError("sum() on a closed phase")
        self._prepare, self._failure = prepare, None
        c = self._contract
        c.phase_id, c.epoch, c.count, c.max_elements = (
            _field(x) for x in (phase_id, epoch, count, max_elements))
        m = self._metrics
        m.refusal.stage = 0  # a refusal must name its stage (_raise_status)
        st = self._run(self._phase, self._provider_ref, self._contract_ref,
                       self._result_ref, self._metrics_ref)
        self._prepare = None
        if st == BB_OK:  # the last successful record (a refusal's is not)
            ctypes.memmove(ctypes.addressof(self._record), self._metrics_addr,
                           ctypes.sizeof(_SumMetrics))
        if st != BB_OK:
            self._raise(st, self._failure)
        count = c.count
        if count == 0:
            return np.empty(0, dtype=np.float64)
        addr = self._result.value
        if self._lent:  # the phase's own buffer, until the next call
            out = np.ctypeslib.as_array((ctypes.c_double * count).from_address(addr))
            out.flags.writeable = False
            return out
        if count < _LEND_FROM:  # a copy costs less than a finalizer
            out = np.empty(count, dtype=np.float64)
            ctypes.memmove(out.__array_interface__["data"][0], addr, 8 * count)
            self._lib.bb_free(addr)
            return out
        # The result is the caller's (fresh buffers): lend it to NumPy
        # without a copy, and hand it back to bb_free when the last view goes.
        out = np.ctypeslib.as_array((ctypes.c_double * count).from_address(addr))
        weakref.finalize(out, self._lib.bb_free, addr)
        return out

    def _raise(self, st, failure):
        _raise_status(self, st, "bb_sum_phase_run", failure, CollectiveRefusal, "sum")

    _raise_run = _raise  # the extension's caller raises through it



# ---------------------------------------------------------------------------
# The transfer phase (run() and the ticket API)

class _TransferMetrics(ctypes.Structure):
    _fields_ = ([("status", ctypes.c_int), ("sequence", ctypes.c_int64)]
                + [(n, ctypes.c_int64) for n in ("phase_id", "epoch", "source",
                                                 "destination", "nbytes", "batches")]
                + [(n, ctypes.c_int) for n in ("rank", "ranks", "role", "first_call")]
                + [(n, ctypes.c_double) for n in (
                    "prepare_s", "admission_s", "post_s", "compute_s", "progress_s",
                    "payload_wait_s", "status_agreement_s", "consumer_s", "receipt_wait_s",
                    "terminal_agreement_s", "total_s")]
                + [("batches_executed", ctypes.c_int64), ("polls", ctypes.c_int64),
                   ("completed_during_batches", ctypes.c_int),
                   ("payload_bytes", ctypes.c_int64), ("tracked_bytes", ctypes.c_int64),
                   ("max_inflight", ctypes.c_int), ("requests_posted", ctypes.c_int),
                   ("code", ctypes.c_int64), ("local_cause", ctypes.c_int),
                   ("refusal", _Refusal)])


class _TransferContract(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("phase_id", "epoch", "source", "destination",
                                              "nbytes", "max_bytes", "batches")]


_T_PREPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                              ctypes.POINTER(ctypes.c_int64))
_T_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_T_CONSUME = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                              ctypes.POINTER(ctypes.c_void_p))
_T_DISCARD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_T_BATCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64)


class _TransferProvider(ctypes.Structure):
    _fields_ = [("prepare", _T_PREPARE), ("release", _T_RELEASE), ("arg", ctypes.c_void_p)]


class _TransferConsumer(ctypes.Structure):
    _fields_ = [("consume", _T_CONSUME), ("discard", _T_DISCARD), ("arg", ctypes.c_void_p)]


class _TransferCompute(ctypes.Structure):
    _fields_ = [("batch", _T_BATCH), ("arg", ctypes.c_void_p)]


class _Ticket(ctypes.Structure):
    _fields_ = [("phase", ctypes.c_void_p), ("generation", ctypes.c_int64)]


BB_ERR_STATE = 5  # bb_status_t: a finished ticket, a live one, a closed phase
# Statuses a ticket call returns before any MPI call, the ticket as it was
# (BB_ERR_ARG, _THREAD, _REENTRY, _STATE): a live ticket stays live.
_TICKET_UNTOUCHED = (2, 3, 4, BB_ERR_STATE)


def _load_transfer(lib):
    if getattr(lib, "_transfer_ready", False):
        return
    lib.bb_transfer_phase_create_attr.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                                  ctypes.POINTER(ctypes.c_void_p)]
    lib.bb_transfer_phase_close.argtypes = [ctypes.c_void_p]
    lib.bb_transfer_phase_run.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(_TransferProvider), ctypes.POINTER(_TransferConsumer),
        ctypes.POINTER(_TransferCompute), ctypes.POINTER(_TransferContract),
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_TransferMetrics)]
    lib.bb_transfer_phase_begin.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(_TransferProvider), ctypes.POINTER(_TransferContract),
        ctypes.POINTER(_Ticket), ctypes.POINTER(_TransferMetrics)]
    lib.bb_transfer_ticket_progress.argtypes = [ctypes.POINTER(_Ticket),
                                                ctypes.POINTER(ctypes.c_int)]
    lib.bb_transfer_ticket_finish.argtypes = [
        ctypes.POINTER(_Ticket), ctypes.POINTER(_TransferConsumer), ctypes.c_int,
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_TransferMetrics)]
    lib.bb_transfer_phase_sequence.argtypes = [ctypes.c_void_p]
    lib.bb_transfer_phase_sequence.restype = ctypes.c_int64
    lib._transfer_ready = True


def _attr_of(buffers, admission, requests):
    try:
        return _Attr(BUFFERS[buffers], ADMISSIONS[admission], REQUESTS[requests], 0, 0, 0, 0)
    except KeyError as e:
        raise ValueError("unknown policy %s: buffers %s, admission %s, requests %s"
                         % (e, "|".join(BUFFERS), "|".join(ADMISSIONS),
                            "|".join(REQUESTS))) from None


class CBoundedTransferPhase(_CPhase):
    """libbbench's transfer phase behind the reference's interface (run, and
    begin with its ticket), with the C phase's policies (defaults: fresh
    buffers, spec admission, per-call requests; every policy gives the
    spec's verdicts).  consume() gets a read-only copy of the received
    bytes, which it may return (the document lets a returned alias become
    the caller's).  run() goes through the C extension where it was built;
    through ctypes, and the ticket API, the consumer's value travels as a
    token and stays on the destination's Python side."""
    _end = "bb_transfer_phase_close"
    _to_record = staticmethod(transfer_record)

    def __init__(self, comm=None, *, buffers="fresh", admission="spec", requests="per-call",
                 binding=None):
        attr = _attr_of(buffers, admission, requests)
        if binding not in (None, "ctypes", "extension"):
            raise ValueError("binding: None, 'ctypes' or 'extension', not %r" % (binding,))
        self.policies = {"buffers": buffers, "admission": admission, "requests": requests}
        self._lib = lib = load()
        _load_transfer(lib)
        ext = _extension(binding)  # after load(): see _extension
        self._bind(comm)
        st = lib.bb_transfer_phase_create_attr(self._world, ctypes.byref(attr),
                                               ctypes.byref(self._phase))
        if st != BB_OK:
            lib.bb_world_release(self._world)
            self._world = ctypes.c_void_p()
            raise RuntimeError("bb_transfer_phase_create_attr (%s): %s"
                               % (", ".join(self.policies.values()),
                                  lib.bb_status_string(st).decode()))
        self._cb = None
        self._provider = _TransferProvider(_T_PREPARE(self._c_prepare),
                                           _T_RELEASE(self._c_release), None)
        self._consumer = _TransferConsumer(_T_CONSUME(self._c_consume),
                                           _T_DISCARD(self._c_discard), None)
        self._compute = _TransferCompute(_T_BATCH(self._c_batch), None)
        self._contract = _TransferContract()
        self._metrics = _TransferMetrics()  # the call's
        self._record = _TransferMetrics()   # the latest ticket's: metrics
        self._metrics.sequence = self._record.sequence = -1
        self.poisoned = False
        self._phase_addr = self._phase.value
        self._metrics_addr = ctypes.addressof(self._metrics)
        if ext is not None:  # run() is the extension's C callable
            self.run = ext.caller("transfer", self._phase_addr, self._metrics_addr,
                                  self._metrics, self, False, ctypes.addressof(self._record),
                                  self._record)
        self.binding = "extension" if ext is not None else "ctypes"

    @property
    def sequence(self):
        return self._lib.bb_transfer_phase_sequence(self._phase)

    def _c_prepare(self, arg, data_out, len_out):
        cb = self._cb
        try:
            arr = cb["prepare"]()
        except Exception as e:
            cb["error"] = e
            return 1
        if not (isinstance(arr, np.ndarray) and arr.dtype == np.uint8 and arr.ndim == 1):
            return 1
        arr = np.ascontiguousarray(arr)
        cb["held"] = arr
        data_out[0] = arr.ctypes.data if arr.shape[0] else None
        len_out[0] = arr.shape[0]
        return 0

    def _c_release(self, arg, data):
        self._cb["held"] = None

    def _c_batch(self, arg, index):
        try:
            self._cb["compute"](index)
            return 0
        except Exception as e:
            self._cb["error"] = e
            return 1

    def _c_consume(self, arg, data, nbytes, value_out):
        cb = self._cb
        # A read-only copy (the extension's consume_cb says why).
        view = np.frombuffer(ctypes.string_at(data, nbytes) if nbytes else b"", dtype=np.uint8)
        try:
            cb["value"] = cb["consume"](view)
        except Exception as e:
            cb["error"] = e
            return 1
        value_out[0] = 1  # a token: the value itself stays in cb
        return 0

    def _c_discard(self, arg, value):
        self._cb["value"] = None

    def _contract_of(self, vals):
        c = self._contract
        for name, x in zip(("phase_id", "epoch", "source", "destination", "nbytes",
                            "max_bytes", "batches"), vals):
            setattr(c, name, _field(x))
        return c

    def _publish(self, st, took_part=(BB_OK, BB_REFUSED, BB_ERR_MPI)):
        """The call's metrics become the record metrics shows when the call
        took part (not a misuse refused before any MPI call)."""
        if st in took_part:
            ctypes.memmove(ctypes.addressof(self._record), self._metrics_addr,
                           ctypes.sizeof(_TransferMetrics))

    def _raise(self, st, call, error):
        _raise_status(self, st, call, error, TransferRefusal, "transfer")

    def _raise_run(self, st, error):  # the extension's caller raises through it
        self._raise(st, "bb_transfer_phase_run", error)

    def run(self, prepare, consume, compute_batch, *, source, destination, nbytes, max_bytes,
            phase_id, epoch, batches):
        """Through ctypes (the extension's caller replaces it when built)."""
        if self._cb is not None:
            raise RuntimeError("a ticket is live: one per phase")
        self._cb = cb = {"prepare": prepare, "consume": consume, "compute": compute_batch,
                         "error": None, "held": None, "value": None}
        c = self._contract_of((phase_id, epoch, source, destination, nbytes, max_bytes,
                               batches))
        token = ctypes.c_void_p()
        m = self._metrics
        st = self._lib.bb_transfer_phase_run(self._phase, ctypes.byref(self._provider),
                                             ctypes.byref(self._consumer),
                                             ctypes.byref(self._compute),
                                             ctypes.byref(c), ctypes.byref(token),
                                             ctypes.byref(m))
        self._cb = None
        self._publish(st)
        if st != BB_OK:
            self._raise(st, "bb_transfer_phase_run", cb["error"])
        return cb["value"] if token.value else None

    def begin(self, prepare, *, source, destination, nbytes, max_bytes, phase_id, epoch,
              batches):
        """The ticket API: begin posts the payload and returns the live
        ticket (progress() polls, finish(consume, local_error=) completes)."""
        if self._cb is not None:
            raise RuntimeError("a ticket is live: one per phase")
        self._cb = cb = {"prepare": prepare, "consume": None, "compute": None,
                         "error": None, "held": None, "value": None}
        c = self._contract_of((phase_id, epoch, source, destination, nbytes, max_bytes,
                               batches))
        ticket = _Ticket()
        st = self._lib.bb_transfer_phase_begin(self._phase, ctypes.byref(self._provider),
                                               ctypes.byref(c), ctypes.byref(ticket),
                                               ctypes.byref(self._metrics))
        self._publish(st, (BB_REFUSED, BB_ERR_MPI))  # a live ticket's is not a record
        if st != BB_OK:
            self._cb = None
            self._raise(st, "bb_transfer_phase_begin", cb["error"])
        return CTransferTicket(self, ticket)

    def _finish(self, ticket, consume, local_error):
        cb = self._cb
        cb["consume"], cb["error"] = consume, None
        token = ctypes.c_void_p()
        st = self._lib.bb_transfer_ticket_finish(
            ctypes.byref(ticket), ctypes.byref(self._consumer),
            1 if local_error is not None else 0, ctypes.byref(token),
            ctypes.byref(self._metrics))
        self._retired = st not in _TICKET_UNTOUCHED
        if self._retired:
            self._cb = None  # the ticket is retired: the provider's array is released
        self._publish(st)
        if st != BB_OK:
            self._raise(st, "bb_transfer_ticket_finish", cb["error"] or local_error)
        return cb["value"] if token.value else None



class CTransferTicket:
    """The one live ticket of a CBoundedTransferPhase (begin), as the
    reference's TransferTicket."""

    def __init__(self, phase, ticket):
        self._phase = phase
        self._ticket = ticket
        self.finished = False
        self.metrics = None  # its record once retired (the phase's metrics then)

    def progress(self):
        """Has this rank's payload completed? (one MPI_Test)"""
        if self.finished:
            raise RuntimeError("the ticket is finished")
        done = ctypes.c_int(0)
        st = self._phase._lib.bb_transfer_ticket_progress(ctypes.byref(self._ticket),
                                                          ctypes.byref(done))
        if st != BB_OK:
            self._phase._raise(st, "bb_transfer_ticket_progress", None)
        return bool(done.value)

    def finish(self, consume, local_error=None):
        if self.finished:
            raise RuntimeError("the ticket is finished")
        self._phase._retired = False
        try:
            return self._phase._finish(self._ticket, consume, local_error)
        finally:
            # finished once the C ticket is retired; a call refused before
            # any MPI call (another thread, a callback) leaves it live.
            self.finished = self._phase._retired
            if self.finished:
                self.metrics = self._phase.metrics
