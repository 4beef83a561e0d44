"""The protocol document's Python API, statement by statement, for every
implementation in IMPLS (the pure-Python reference, libbbench through the C
extension, libbbench through ctypes): one script, the document's numbers.

Run under mpiexec at -n 1, 2 and 3 by tests/python/python.sh (every rank
runs the same tests in the same order).  Each test names the statement it
checks (doc/protocol.md, "The document, statement by statement", S1..):
values, refusals (class, stage, rank, sequence, on every rank alike), the
metrics' keys, types and reset rules, the tracked bytes, and the MPI calls
each rank made, counted by the PMPI interposer tests/fault.c (preloaded:
BBFAULT_LIB names it; the tests that need it skip without it).

A new implementation is one line of IMPLS: its sum phase class and its
transfer phase class, each called with no argument."""
import ctypes
import os
import threading

import numpy as np
import pytest
from mpi4py import MPI

from bbench import reference
from bbench.reference import (BoundedSumPhase, BoundedTransferPhase, CollectiveRefusal,
                              PoisonedPhase, TransferRefusal)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
last = size - 1

if os.environ.get("BBENCH_LIB"):
    from bbench._clib import CBoundedSumPhase, CBoundedTransferPhase, _extension
    try:
        HAVE_EXT = _extension("extension") is not None
    except RuntimeError:
        HAVE_EXT = False


def _c(cls, binding):
    return lambda: cls(binding=binding)


# name: (sum phase, transfer phase); one line an implementation.
IMPLS = {"reference": (BoundedSumPhase, BoundedTransferPhase)}
if os.environ.get("BBENCH_LIB"):
    if HAVE_EXT:
        IMPLS["extension"] = (_c(CBoundedSumPhase, "extension"),
                              _c(CBoundedTransferPhase, "extension"))
    IMPLS["ctypes"] = (_c(CBoundedSumPhase, "ctypes"), _c(CBoundedTransferPhase, "ctypes"))

impl = pytest.mark.parametrize("impl", sorted(IMPLS))

# The document's census: 144 + 16 * count (sum), 232 + nbytes on data ranks
# and 232 elsewhere (transfer), under the spec policy (the defaults).
SUM_BASE, TRANSFER_BASE = 144, 232

# ---------------------------------------------------------------- MPI calls
_fault = None
if os.environ.get("BBFAULT_LIB"):
    _fault = ctypes.CDLL(os.environ["BBFAULT_LIB"])
    _fault.bbfault_calls.restype = ctypes.c_long
    _fault.bbfault_calls.argtypes = [ctypes.c_char_p]
    _fault.bbfault_arm.argtypes = [ctypes.c_char_p, ctypes.c_long]
needs_calls = pytest.mark.skipif(_fault is None, reason="no PMPI interposer (BBFAULT_LIB)")
COUNTED = ("MPI_Allreduce", "MPI_Iallreduce", "MPI_Test", "MPI_Wait", "MPI_Isend",
           "MPI_Irecv", "MPI_Send", "MPI_Recv", "MPI_Bcast", "MPI_Barrier")


class Calls:
    """The MPI calls this rank made inside a with block (zeros omitted)."""

    def __enter__(self):
        self.before = {n: _fault.bbfault_calls(n.encode()) for n in COUNTED} if _fault else {}
        return self

    def __exit__(self, *exc):
        self.made = {n: _fault.bbfault_calls(n.encode()) - b for n, b in self.before.items()}
        self.made = {n: c for n, c in self.made.items() if c}
        return False


def app_collective_exact():
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2


def alike(x):
    """x is the same on every rank."""
    return len(set(map(repr, comm.allgather(x)))) == 1


def boom():
    raise ValueError("local failure")


# ---------------------------------------------------------------- metrics
def check_types(m, seconds_may_be_none=()):
    for k, v in m.items():
        if k.endswith("_seconds"):
            if v is None:
                assert k in seconds_may_be_none, (k, m)
            else:
                assert type(v) is float and v >= 0.0, (k, v)
        elif k == "status":
            assert v in ("ok", "refused", "fatal"), m
        elif k == "failure_stage":
            assert v is None or v in ("preflight", "contract", "compute", "consumer",
                                      "receipt", "transport"), m
        elif k == "completed_during_batches":
            assert v is None or type(v) is bool, m
        elif k in ("failure_rank", "batches_executed"):
            assert v is None or type(v) is int, (k, m)
        else:
            assert type(v) is int and v >= 0, (k, v)


# ======================================================================== sum
@impl
@pytest.mark.parametrize("count", [0, 1, 5])
@needs_calls
def test_sum_values_metrics_census_calls(impl, count):
    """S3 (the call), S5 (Allreduce MIN then MAX; one Iallreduce; Test once,
    Wait if incomplete; at most one request, 144 + 16*count bytes), S6
    (replicated output), S11 (the metrics' names and units)."""
    phase = IMPLS[impl][0]()
    assert phase.metrics is None
    with Calls() as calls:
        got = phase.sum(lambda: np.arange(count, dtype=np.float64) + rank, phase_id=7,
                        epoch=3, count=count, max_elements=8)
    want = size * np.arange(count, dtype=np.float64) + size * (size - 1) / 2
    assert got.dtype == np.float64 and got.shape == (count,) and np.array_equal(got, want)
    m = phase.metrics
    assert set(m) == set(reference.SUM_METRICS)
    check_types(m)
    assert (m["sequence"], m["phase_id"], m["epoch"], m["rank"], m["ranks"]) \
        == (0, 7, 3, rank, size)
    assert m["payload_bytes"] == 8 * count
    assert m["max_inflight_requests"] == 1
    assert m["total_seconds"] >= m["admission_seconds"]
    assert phase.metrics == m
    made = calls.made
    assert made.pop("MPI_Allreduce") == 2 and made.pop("MPI_Iallreduce") == 1
    assert made.pop("MPI_Test") == 1 and made.pop("MPI_Wait", 0) <= 1
    assert made == {}, made  # no point-to-point, no other collective
    assert m["tracked_buffer_bytes"] == SUM_BASE + 16 * count
    phase.sum(lambda: np.ones(1), phase_id=8, epoch=0, count=1, max_elements=1)
    assert m["phase_id"] == 7 and phase.metrics["phase_id"] == 8  # a record, not a view
    app_collective_exact()


SUM_REFUSALS = {
    # name: (prepare on the refusing rank, its fields, stage, applies at n=1)
    "provider exception": (boom, {}, "preflight"),
    "wrong length": (lambda: np.zeros(3), {}, "preflight"),
    "a list, not an array": (lambda: [0.0] * 4, {}, "preflight"),
    "count above cap": (lambda: np.zeros(9), {"count": 9}, "preflight"),
    "negative epoch": (None, {"epoch": -1}, "preflight"),
    "count past int32": (None, {"count": 2**31, "max_elements": 2**31}, "preflight"),
    "float field": (None, {"epoch": 3.0}, "preflight"),
    "epoch differs": (None, {"epoch": 4}, "contract"),
}


@impl
@pytest.mark.parametrize("name", sorted(SUM_REFUSALS))
@needs_calls
def test_sum_refusal(impl, name):
    """S3 (fields' ranges; the sequence consumed on refusal), S4 (a local
    exception is a one-bit refusal, chained on its own rank only), S7
    (unequal fields or any refusal rejects payload posting everywhere; a
    retry at the next sequence), S8 (CollectiveRefusal), S12 (the last
    successful record is not a refusal record)."""
    prepare, fields, stage = SUM_REFUSALS[name]
    phase = IMPLS[impl][0]()
    kw = dict(phase_id=7, epoch=3, count=4, max_elements=8)
    good = (lambda: np.ones(4))
    phase.sum(good, **kw)
    before = phase.metrics
    mine = dict(kw)
    if rank == last:
        mine.update(fields)
    if stage == "contract" and size == 1:
        phase.sum(good, **mine)  # one rank agrees with itself: admitted
        return
    with Calls() as calls:
        with pytest.raises(CollectiveRefusal) as e:
            phase.sum(prepare if (prepare and rank == last) else good, **mine)
    assert type(e.value) is CollectiveRefusal
    assert (e.value.stage, e.value.rank, e.value.sequence) == (stage, None, 1)
    assert alike((e.value.stage, e.value.rank, e.value.sequence))
    # the local exception stays chained on its own rank only
    cause = e.value.__cause__
    assert (type(cause) is ValueError) == (name == "provider exception" and rank == last)
    if _fault is not None:
        assert calls.made == {"MPI_Allreduce": 2}, calls.made  # no payload anywhere
    assert phase.metrics == before  # S12
    assert phase.sequence == 2  # consumed on refusal
    assert phase.sum(good, **kw).tolist() == [float(size)] * 4  # retry at the next sequence
    assert phase.metrics["sequence"] == 2
    app_collective_exact()


@impl
@pytest.mark.skipif(size == 1, reason="one rank cannot disagree with itself")
def test_sum_sequence_disagreement(impl):
    """S7: sequence agreement detects divergent calls; the refusal reports
    the highest presented sequence on every rank."""
    ahead, behind = IMPLS[impl][0](), IMPLS[impl][0]()
    kw = dict(phase_id=1, epoch=0, count=1, max_elements=1)
    with pytest.raises(CollectiveRefusal):
        ahead.sum(boom, **kw)  # every rank: ahead is at sequence 1
    # Both borrow the world: rank 0 calls at sequence 1, the others at 0.
    with pytest.raises(CollectiveRefusal) as e:
        (ahead if rank == 0 else behind).sum(lambda: np.ones(1), **kw)
    assert (e.value.stage, e.value.rank, e.value.sequence) == ("contract", None, 1)
    app_collective_exact()


@impl
def test_sum_reentry(impl):
    """S9: local reentry is rejected (inside prepare it is the provider's
    exception: a preflight refusal everywhere)."""
    phase = IMPLS[impl][0]()
    kw = dict(phase_id=1, epoch=0, count=1, max_elements=1)

    def prepare():
        if rank == last:
            phase.sum(lambda: np.ones(1), **kw)
        return np.ones(1)
    with pytest.raises(CollectiveRefusal) as e:
        phase.sum(prepare, **kw)
    assert (e.value.stage, e.value.rank, e.value.sequence) == ("preflight", None, 0)
    assert type(e.value.__cause__) is (RuntimeError if rank == last else type(None))
    app_collective_exact()


@impl
def test_binds_only_the_world(impl):
    """S1: the phase borrows the validated world; another communicator is
    refused locally (ValueError) before any collective."""
    dup = comm.Dup()
    try:
        with pytest.raises(ValueError):
            IMPLS[impl][0](dup) if impl == "reference" else \
                {"extension": CBoundedSumPhase, "ctypes": CBoundedSumPhase}[impl](
                    dup, binding=impl)
    finally:
        dup.Free()
    app_collective_exact()


@impl
def test_only_the_main_thread(impl):
    """S2: world binding only on the main (MPI-initializing) thread; a
    worker thread is rejected before it calls MPI (RuntimeError, local)."""
    seen = []

    def worker():
        try:
            IMPLS[impl][0]()
            seen.append(None)
        except RuntimeError:
            seen.append(RuntimeError)
    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert seen == [RuntimeError]
    phase = IMPLS[impl][0]()  # the main thread binds; a worker calling it is refused
    th = threading.Thread(target=lambda: seen.append(
        _raises(lambda: phase.sum(lambda: np.ones(1), phase_id=1, epoch=0, count=1,
                                  max_elements=1))))
    th.start()
    th.join()
    assert seen[1] is RuntimeError
    assert phase.sum(lambda: np.ones(1), phase_id=1, epoch=0, count=1,
                     max_elements=1)[0] == size
    assert phase.metrics["sequence"] == 0  # the worker's call consumed nothing
    app_collective_exact()


def _raises(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


# =================================================================== transfer
def payload(n):
    return (np.arange(n) * 13 % 251).astype(np.uint8)


def role_of(src, dst):
    return "same" if rank == src == dst else "source" if rank == src \
        else "destination" if rank == dst else "none"


def run_ticket(phase, prepare, consume, compute, kw, local_error=None):
    """run() written with the ticket API, as the document's begin/progress/
    finish: a batch and a poll each, finish with the batch's exception."""
    ticket = phase.begin(prepare, **kw)
    assert ticket.metrics is None  # live: no record yet
    err = local_error
    for i in range(kw["batches"]):
        try:
            compute(i)
        except Exception as e:  # noqa: BLE001
            err = e
            break
        ticket.progress()
    try:
        return ticket.finish(consume, local_error=err)
    finally:
        assert ticket.metrics == phase.metrics


@impl
@pytest.mark.parametrize("nbytes", [0, 16, 4096])
@pytest.mark.parametrize("how", ["run", "ticket"])
@needs_calls
def test_transfer_values_metrics_census_calls(impl, nbytes, how):
    """T2 (run), T3 (the value on the destination only, None elsewhere), T4
    (a batch each, a poll after each), T6 (nine fields, MIN then MAX), T7
    (source: receipt Irecv and payload Isend; destination: payload Irecv;
    same rank: one local copy; others nothing), T9 (the destination sends
    the receipt and completes its send, the source completes its Irecv),
    T11 (232 + nbytes on data ranks, 232 elsewhere; at most two requests on
    the source, one on the destination), T13 (the metrics), T14
    (completed_during_batches)."""
    phase = IMPLS[impl][1]()
    src, dst = 0, last
    kw = dict(source=src, destination=dst, nbytes=nbytes, max_bytes=4096, phase_id=5,
              epoch=1, batches=3)
    done = []
    with Calls() as calls:
        if how == "run":
            value = phase.run(lambda: payload(nbytes), bytes, done.append, **kw)
        else:
            value = run_ticket(phase, lambda: payload(nbytes), bytes, done.append, kw)
    assert done == [0, 1, 2]
    assert value == (payload(nbytes).tobytes() if rank == dst else None)
    m = phase.metrics
    assert set(m) == set(reference.TRANSFER_METRICS)
    check_types(m, () if how == "run" else ("compute_seconds",))
    role = role_of(src, dst)
    data = role != "none"
    assert (m["sequence"], m["phase_id"], m["epoch"], m["rank"], m["ranks"], m["status"]) \
        == (0, 5, 1, rank, size, "ok")
    assert (m["failure_stage"], m["failure_rank"]) == (None, None)
    assert m["polls"] == 3
    assert m["batches_executed"] == (3 if how == "run" else None)
    assert (m["compute_seconds"] is None) == (how == "ticket")
    assert m["payload_bytes"] == (nbytes if data else 0)
    assert m["max_inflight_requests"] == {"source": 2, "destination": 1}.get(role, 0)
    assert (m["completed_during_batches"] is None) == (role in ("same", "none"))
    made = calls.made
    assert made.pop("MPI_Allreduce") == 4  # admission MIN, MAX; status; terminal
    p2p = {"source": {"MPI_Irecv": 1, "MPI_Isend": 1},
           "destination": {"MPI_Irecv": 1, "MPI_Isend": 1}}.get(role, {})
    tests = made.pop("MPI_Test", 0)
    waits = made.pop("MPI_Wait", 0)
    assert made == p2p, made  # no blocking Send/Recv, nothing on other ranks
    # a Test a poll on the payload until it completed (none after), none elsewhere
    assert (1 <= tests <= 3) if p2p else tests == 0, tests
    assert waits <= (2 if p2p else 0)  # the payload if still live, the receipt
    assert m["tracked_buffer_bytes"] == TRANSFER_BASE + (nbytes if data else 0)
    phase.close()
    app_collective_exact()


def t_refusing(stage, kw):
    """prepare, consume, compute, fields and local_error of this rank for a
    refusal at stage (the refusing rank: source 0 for preflight, the last
    rank otherwise)."""
    prepare, consume, compute, fields, err = (lambda: payload(16)), bytes, (lambda i: None), \
        {}, None
    if stage in ("preflight", "preflight-and-contract") and rank == 0:
        prepare = boom
        if stage == "preflight-and-contract" and rank == last:
            fields = {"epoch": 9}  # at -n 1 both on one rank
    elif stage == "preflight-and-contract" and rank == last:
        fields = {"epoch": 9}
    elif stage == "contract" and rank == last:
        fields = {"epoch": 9}
    elif stage == "compute" and rank == last:
        compute = (lambda i: boom() if i == 1 else None)
    elif stage == "compute-not-exception" and rank == last:
        err = "bad"
    elif stage == "consumer" and rank == last:
        consume = (lambda v: boom())
    return prepare, consume, compute, dict(kw, **fields), err


T_STAGES = ["preflight", "contract", "preflight-and-contract", "compute",
            "compute-not-exception", "consumer"]


@impl
@pytest.mark.parametrize("stage", T_STAGES)
@pytest.mark.parametrize("how", ["run", "ticket"])
@needs_calls
def test_transfer_refusal_provenance(impl, stage, how):
    """T6 (refused before posting: nothing but the admission), T8 (a compute
    failure skips consumption everywhere), T9/T10 (the requests still
    drain: the receipt travels; a retry at the next sequence), T13 (a
    preflight refusal's minimal record; the others' full record), T15
    (TransferRefusal, a CollectiveRefusal; stage, rank, sequence; rank None
    for a contract mismatch; local exceptions chained on their own rank
    only), T16 (a preflight failure takes precedence over a simultaneous
    contract mismatch), T18 (a non-exception local_error is a compute
    refusal on every rank, no rank-local TypeError), T19 (a success resets
    the provenance)."""
    if stage == "contract" and size == 1:
        pytest.skip("one rank cannot disagree with itself")
    if stage == "compute-not-exception" and how == "run":
        pytest.skip("run() passes its own batch's exception")
    phase = IMPLS[impl][1]()
    kw = dict(source=0, destination=last, nbytes=16, max_bytes=16, phase_id=2, epoch=0,
              batches=2)
    phase.run(lambda: payload(16), bytes, lambda i: None, **kw)
    prepare, consume, compute, mine, err = t_refusing(stage, kw)
    consumed = []

    def consume_seen(v):
        consumed.append(1)
        return consume(v)
    with Calls() as calls:
        with pytest.raises(TransferRefusal) as e:
            if how == "run":
                phase.run(prepare, consume_seen, compute, **mine)
            else:
                run_ticket(phase, prepare, consume_seen, compute, mine, local_error=err)
    x = e.value
    assert isinstance(x, CollectiveRefusal) and type(x) is TransferRefusal
    want_stage = {"compute-not-exception": "compute",
                  "preflight-and-contract": "preflight"}.get(stage, stage)
    want_rank = None if stage == "contract" else 0 if want_stage == "preflight" else last
    assert (x.stage, x.rank, x.sequence) == (want_stage, want_rank, 1)
    assert (x.failure_stage, x.failure_rank) == (want_stage, want_rank)
    assert alike((x.stage, x.rank, x.sequence))
    chained = want_stage in ("preflight", "compute", "consumer") and rank == want_rank \
        and stage != "compute-not-exception"
    assert (type(x.__cause__) is ValueError) == chained
    assert x.__cause__ is None or chained
    m = phase.metrics
    minimal = want_stage in ("preflight", "contract")
    assert set(m) == set(reference.TRANSFER_MINIMAL_METRICS if minimal
                         else reference.TRANSFER_METRICS)
    check_types(m, () if how == "run" else ("compute_seconds",))
    assert (m["status"], m["failure_stage"], m["failure_rank"], m["sequence"], m["rank"]) \
        == ("refused", want_stage, want_rank, 1, rank)
    if want_stage == "compute":
        assert consumed == []  # consumption skipped everywhere
    made = calls.made
    if _fault is not None:
        if minimal:
            assert made == {"MPI_Allreduce": 2}, made  # nothing posted
        else:
            role = role_of(0, last)
            want = {"source": {"MPI_Irecv": 1, "MPI_Isend": 1},
                    "destination": {"MPI_Irecv": 1, "MPI_Isend": 1}}.get(role, {})
            made.pop("MPI_Test", 0), made.pop("MPI_Wait", 0)
            assert made == dict(want, MPI_Allreduce=4), made
    # T10: retry at the next sequence; T19: a success resets the provenance
    assert phase.run(lambda: payload(16), bytes, lambda i: None, **kw) \
        == (payload(16).tobytes() if rank == last else None)
    assert (phase.metrics["failure_stage"], phase.metrics["failure_rank"],
            phase.metrics["sequence"], phase.metrics["status"]) == (None, None, 2, "ok")
    phase.close()
    app_collective_exact()


@impl
def test_ticket_rules(impl):
    """T1 (close after retirement; an active phase refuses close), T5
    (exactly one ticket per phase; a finished ticket rejects progress and
    finish; an active phase rejects another begin; the ticket's metrics)."""
    phase = IMPLS[impl][1]()
    kw = dict(source=last, destination=0, nbytes=64, max_bytes=64, phase_id=4, epoch=0,
              batches=1)
    t = phase.begin(lambda: payload(64), **kw)
    for call in (lambda: phase.begin(lambda: payload(64), **kw), phase.close):
        assert _raises(call) is RuntimeError
    t.progress()
    assert t.finish(bytes) == (payload(64).tobytes() if rank == 0 else None)
    assert _raises(t.progress) is RuntimeError
    assert _raises(lambda: t.finish(bytes)) is RuntimeError
    assert t.metrics["status"] == "ok" and t.metrics["sequence"] == 0
    phase.close()
    app_collective_exact()


@impl
@needs_calls
def test_transfer_transport_error_marks_fatal(impl):
    """T12, T1: an MPI failure poisons and retains the phase (close refuses
    it); its metrics say status fatal, stage transport and the local
    detecting rank.  The fault
    (tests/fault.c, armed here) fails every rank's status agreement, on a
    same-rank ticket (no point-to-point request is left live)."""
    phase = IMPLS[impl][1]()
    kw = dict(source=0, destination=0, nbytes=8, max_bytes=8, phase_id=9, epoch=0,
              batches=0)
    t = phase.begin(lambda: payload(8), **kw)
    _fault.bbfault_arm(b"MPI_Allreduce", 1)
    try:
        with pytest.raises(PoisonedPhase):
            t.finish(bytes)
    finally:
        _fault.bbfault_arm(b"MPI_Allreduce", 0)
    m = phase.metrics
    assert set(m) == set(reference.TRANSFER_MINIMAL_METRICS)
    assert (m["status"], m["failure_stage"], m["failure_rank"], m["rank"], m["sequence"]) \
        == ("fatal", "transport", rank, rank, 0)
    with pytest.raises(PoisonedPhase):  # retained: not closed, not reused
        phase.close()
    app_collective_exact()


@impl
@needs_calls
def test_sum_mpi_error_poisons(impl):
    """S10: an exception during MPI posting poisons the instance (retained;
    not reused): the fault fails every rank's Iallreduce after the
    admission, so nobody waits.  The metrics stay the last success (S12)."""
    phase = IMPLS[impl][0]()
    kw = dict(phase_id=1, epoch=0, count=2, max_elements=2)
    phase.sum(lambda: np.ones(2), **kw)
    before = phase.metrics
    _fault.bbfault_arm(b"MPI_Iallreduce", 1)
    try:
        with pytest.raises(PoisonedPhase):
            phase.sum(lambda: np.ones(2), **kw)
    finally:
        _fault.bbfault_arm(b"MPI_Iallreduce", 0)
    assert phase.poisoned and phase.metrics == before
    with Calls() as calls:
        with pytest.raises(PoisonedPhase):  # refused before any MPI call
            phase.sum(lambda: np.ones(2), **kw)
    assert calls.made == {}, calls.made
    app_collective_exact()
