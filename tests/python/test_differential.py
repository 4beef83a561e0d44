"""The pure-Python reference against libbbench's C sum phase, case by case
on real MPI: the same status, stage, rank and sequence, equal sums, and the
application's next collective exact after each.  Needs BBENCH_LIB and
BBENCH_MPI (tests/python/python.sh sets them in a build on mpi4py's MPI)."""
import os

import numpy as np
import pytest
from mpi4py import MPI

from bbench.reference import BoundedSumPhase, CollectiveRefusal

if not os.environ.get("BBENCH_LIB"):
    pytest.skip("BBENCH_LIB unset: no C library to compare with", allow_module_level=True)
from bbench._clib import CBoundedSumPhase  # noqa: E402

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
last = size - 1


# The C phase under its default policies and under three others: every
# policy gives the spec's verdicts (the reference has no policies).
POLICIES = [{}, {"buffers": "retained", "admission": "fused-op", "requests": "persistent"},
            {"buffers": "borrowed", "admission": "fused"},
            {"admission": "fused-op", "requests": "persistent"}]


@pytest.fixture(scope="module", params=POLICIES,
                ids=lambda p: ",".join(p.values()) or "defaults")
def phases(request):
    c = CBoundedSumPhase(**request.param)
    yield BoundedSumPhase(), c
    c.close()


def boom():
    raise ValueError("provider failed")


CASES = {
    "admitted": (None, {}),
    "provider exception": (boom, {}),
    "wrong length": (lambda: np.zeros(3), {}),
    "count above cap": (lambda: np.zeros(9), {"count": 9}),
    "negative epoch": (lambda: np.zeros(4), {"epoch": -1}),
    "negative phase id": (lambda: np.zeros(4), {"phase_id": -5}),
    "count past int32": (lambda: np.zeros(4), {"count": 2**31, "max_elements": 2**31}),
    "cap past int32": (lambda: np.zeros(4), {"max_elements": 2**31}),
    "phase id differs": (lambda: np.zeros(4), {"phase_id": 8}),
    "epoch differs": (lambda: np.zeros(4), {"epoch": 4}),
    "cap differs": (lambda: np.zeros(4), {"max_elements": 7}),
    "count past int64": (lambda: np.zeros(4), {"count": 2**64 + 4}),
    "float epoch": (lambda: np.zeros(4), {"epoch": 3.0}),
    "bool epoch": (lambda: np.zeros(4), {"epoch": True}),
    "numpy integer fields": (None, {"count": np.int64(4), "max_elements": np.int32(8)}),
    # What prepare hands over: only a one-dimensional float64 NumPy array,
    # contiguous or not (a strided one is summed as it reads).
    "a list, not an array": (lambda: [0.0] * 4, {}),
    "int64 array": (lambda: np.zeros(4, dtype=np.int64), {}),
    "float32 array": (lambda: np.zeros(4, dtype=np.float32), {}),
    "two-dimensional": (lambda: np.zeros((2, 2)), {}),
    "strided": (lambda: np.arange(8.0)[::2], {}),
}


def outcome(phase, prepare, kw):
    try:
        return ("ok", phase.sum(prepare, **kw).tolist())
    except CollectiveRefusal as e:
        return ("refused", e.stage, e.rank, e.sequence)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("who", ["first", "last"])
def test_same_verdict(phases, name, who):
    ref, c = phases
    bad_prepare, fields = CASES[name]
    bad = 0 if who == "first" else last
    kw = dict(phase_id=7, epoch=3, count=4, max_elements=8)
    good = (lambda: np.arange(4, dtype=np.float64) + rank)
    prepare = good
    if rank == bad:
        kw.update(fields)
        prepare = bad_prepare or good
    assert ref.sequence == c.sequence
    a = outcome(ref, prepare, kw)
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2
    b = outcome(c, prepare, kw)
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2
    assert a == b
    assert len(set(map(repr, comm.allgather(a)))) == 1  # alike on every rank


def test_large_sum_equal(phases):
    ref, c = phases
    n = 1 << 20
    prepare = (lambda: np.full(n, rank + 0.5))
    kw = dict(phase_id=1, epoch=0, count=n, max_elements=n)
    x, y = ref.sum(prepare, **kw), c.sum(prepare, **kw)
    assert np.array_equal(x, y) and x[0] == sum(r + 0.5 for r in range(size))


def test_result_ownership(phases):
    """Fresh buffers: the caller's array; retained and borrowed: a read-only
    view of the phase's buffer, which the next call overwrites."""
    ref, c = phases
    kw = dict(phase_id=2, epoch=0, count=3, max_elements=8)
    x = c.sum(lambda: np.full(3, 1.0), **kw)
    ref.sum(lambda: np.full(3, 1.0), **kw)
    assert x.tolist() == [float(size)] * 3
    if c.policies["buffers"] == "fresh":
        assert x.flags.writeable
        x[0] = -1.0  # the caller's own
    else:
        assert not x.flags.writeable
    c.sum(lambda: np.full(3, 2.0), **kw)
    ref.sum(lambda: np.full(3, 2.0), **kw)
    want = [-1.0, float(size), float(size)] if c.policies["buffers"] == "fresh" \
        else [2.0 * size] * 3
    assert x.tolist() == want


# ---------------------------------------------------------------------------
# The transfer phase

from bbench.reference import BoundedTransferPhase, TransferRefusal  # noqa: E402
from bbench._clib import CBoundedTransferPhase  # noqa: E402


# The transfer phase takes fresh or retained buffers (not borrowed: it
# always copies the provider's bytes into its own buffer).
T_POLICIES = [{}, {"buffers": "retained", "admission": "fused-op", "requests": "persistent"},
              {"admission": "fused"}]


@pytest.fixture(scope="module", params=T_POLICIES,
                ids=lambda p: ",".join(p.values()) or "defaults")
def transfers(request):
    ref, c = BoundedTransferPhase(), CBoundedTransferPhase(**request.param)
    yield ref, c
    ref.close()
    c.close()


def data(n):
    return (np.arange(n) * 13 % 251).astype(np.uint8)


def t_outcome(phase, prepare, consume, compute, kw):
    try:
        return ("ok", phase.run(prepare, consume, compute, **kw))
    except TransferRefusal as e:
        return ("refused", e.stage, e.rank, e.sequence)


def noop(i):
    return None


T_CASES = {
    # name: (rank that differs, its prepare, consume, compute, its fields)
    "delivered": (None, None, None, None, {}),
    "zero bytes": ("all", lambda: data(0), None, None, {"nbytes": 0}),
    "same rank": ("all", None, None, None, {"destination": 0}),
    "provider exception": (0, boom, None, None, {}),
    "wrong length": (0, lambda: data(5), None, None, {}),
    "over cap": ("all", lambda: data(64), None, None, {"nbytes": 64}),
    "negative epoch": ("last", None, None, None, {"epoch": -2}),
    "destination out of range": ("all", None, None, None, {"destination": 10**6}),
    "compute failure": ("last", None, None, lambda i: boom() if i == 1 else None, {}),
    "consumer failure": ("last", None, lambda v: boom(), None, {}),
    "epoch differs": ("last", None, None, None, {"epoch": 9}),
    "bool batches": ("last", None, None, None, {"batches": True}),
    "numpy integer fields": ("all", None, None, None, {"nbytes": np.int64(32),
                                                       "epoch": np.int32(1)}),
}


def t_ticket(phase, prepare, consume, compute, kw):
    """The run() of the reference written with the ticket API: begin, a
    batch and a poll each, finish with the batch's exception if any."""
    try:
        ticket = phase.begin(prepare, **kw)
        err = None
        for i in range(kw["batches"] if isinstance(kw["batches"], int) else 0):
            try:
                compute(i)
            except Exception as e:
                err = e
                break
            ticket.progress()
        return ("ok", ticket.finish(consume, local_error=err))
    except TransferRefusal as e:
        return ("refused", e.stage, e.rank, e.sequence)


@pytest.mark.parametrize("name", sorted(T_CASES))
@pytest.mark.parametrize("how", ["run", "ticket"])
def test_transfer_same_verdict(transfers, name, how):
    ref, c = transfers
    who, prep, cons, comp, fields = T_CASES[name]
    mine = who == "all" or (who == "last" and rank == last) or who == rank
    kw = dict(source=0, destination=last, nbytes=32, max_bytes=32, phase_id=5, epoch=1,
              batches=3)
    prepare, consume, compute = (lambda: data(32)), (lambda v: bytes(v)), noop
    if mine:
        kw.update(fields)
        prepare = prep or prepare
        consume = cons or consume
        compute = comp or compute
    assert ref.sequence == c.sequence
    call = t_outcome if how == "run" else t_ticket
    a = call(ref, prepare, consume, compute, kw)
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2
    b = call(c, prepare, consume, compute, kw)
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2
    assert a == b
    # the same verdict on every rank (a value is the destination's only)
    everyone = comm.allgather(a if a[0] == "refused" else ("ok",))
    assert len(set(everyone)) == 1
    if a[0] == "ok":
        assert a[1] == (data(kw["nbytes"]).tobytes() if rank == kw["destination"] else None)


def test_transfer_alias_is_the_callers(transfers):
    """consume() may return the view it was given: after retirement it is
    the caller's, read-only, and later tickets (which reuse or free the
    phase's buffer) leave it alone."""
    ref, c = transfers
    kw = dict(source=0, destination=last, nbytes=4096, max_bytes=4096, phase_id=6, epoch=0,
              batches=0)
    got = [p.run(lambda: data(4096), lambda v: v, noop, **kw) for p in (ref, c)]
    for p in (ref, c):
        p.run(lambda: np.full(4096, 7, dtype=np.uint8), len, noop, **kw)
    if rank == last:
        for g in got:
            assert not g.flags.writeable and g.tobytes() == data(4096).tobytes()
    else:
        assert got == [None, None]


def test_misuse_is_local_and_closed_is_refused():
    """A call with a missing field is Python's TypeError before any MPI (on
    every rank alike, so nobody waits); a sum kept past close() raises,
    never touches the freed phase."""
    c = CBoundedSumPhase()
    keep = c.sum
    with pytest.raises(TypeError):
        c.sum(lambda: np.zeros(1), phase_id=1, epoch=0, count=1)
    assert keep(lambda: np.ones(1), phase_id=1, epoch=0, count=1, max_elements=1)[0] == size
    c.close()
    with pytest.raises(RuntimeError):
        keep(lambda: np.ones(1), phase_id=1, epoch=0, count=1, max_elements=1)
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2


# close() as the reference's (issue 58, findings 3, 4 and 6): never a
# success while the C phase still holds its world, the same outcome on
# every rank in both tiers, and a closed C phase freed.
T_KW = dict(source=0, destination=last, nbytes=32, max_bytes=32, phase_id=7, epoch=0,
            batches=1)


@pytest.mark.parametrize("cls", [BoundedTransferPhase, CBoundedTransferPhase])
def test_close_with_a_live_ticket_is_refused(cls):
    p = cls()
    t = p.begin(lambda: data(32), **T_KW)
    with pytest.raises(RuntimeError):
        p.close()
    t.progress()
    got = t.finish(bytes)
    assert got == (data(32).tobytes() if rank == last else None)
    p.close()
    assert comm.allreduce(rank + 1) == size * (size + 1) // 2


def close_inside(where):
    """The outcome of close() called from inside prepare() or consume(),
    for each class: the same exception (class, stage, rank) on every rank,
    and the phase still usable, then closed."""
    out = []
    for cls in (BoundedTransferPhase, CBoundedTransferPhase):
        p = cls()

        def prepare():
            if where == "prepare":
                p.close()
            return data(32)

        def consume(v):
            if where == "consume":
                p.close()
            return bytes(v)

        kw = dict(T_KW, batches=0)
        try:
            r = ("ok", p.run(prepare, consume, noop, **kw))
        except TransferRefusal as e:
            r = ("refused", e.stage, e.rank)
        assert len(set(comm.allgather(r if r[0] == "refused" else ("ok",)))) == 1
        after = p.run(lambda: data(32), bytes, noop, **kw)
        assert after == (data(32).tobytes() if rank == last else None)
        p.close()
        out.append(r)
    return out


@pytest.mark.parametrize("where", ["prepare", "consume"])
def test_close_from_a_callback_is_refused_alike(where):
    ref, c = close_inside(where)
    assert ref[0] == "refused" and ref == c


def test_closed_sum_phase_is_freed():
    import gc
    import weakref
    p = CBoundedSumPhase()
    assert p.sum(lambda: np.ones(2), phase_id=1, epoch=0, count=2, max_elements=2)[0] == size
    w = weakref.ref(p)
    p.close()
    del p
    gc.collect()
    assert w() is None


@pytest.mark.parametrize("cls", [BoundedTransferPhase, CBoundedTransferPhase])
def test_finish_from_another_thread_leaves_the_ticket_live(cls):
    """A finish() refused before any MPI call (another thread: both tiers
    check the thread) is no finish: the ticket stays live and the owning
    thread finishes it."""
    import threading
    p = cls()
    t = p.begin(lambda: data(32), **T_KW)
    seen = []
    th = threading.Thread(target=lambda: seen.append(_raises(lambda: t.finish(bytes))))
    th.start()
    th.join()
    assert seen == [RuntimeError]
    got = t.finish(bytes)
    assert got == (data(32).tobytes() if rank == last else None)
    p.close()


def _raises(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None
