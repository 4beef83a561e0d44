"""The pure-Python reference phases on real MPI (run under mpiexec at
-n 1..4: every rank runs the same tests in the same order).  After every
refusal the application's own next collective must be exact: a refusal that
left a collective behind would show there."""
import numpy as np
import pytest
from mpi4py import MPI

from bbench.reference import (BoundedSumPhase, BoundedTransferPhase, CollectiveRefusal,
                              TransferRefusal)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
last = size - 1


def app_collective_exact():
    assert comm.allreduce(rank + 1, op=MPI.SUM) == size * (size + 1) // 2


@pytest.fixture(scope="module")
def sum_phase():
    return BoundedSumPhase()


@pytest.mark.parametrize("count", [0, 1, 1000])
def test_sum_exact(sum_phase, count):
    got = sum_phase.sum(lambda: np.arange(count, dtype=np.float64) + rank,
                        phase_id=7, epoch=3, count=count, max_elements=1000)
    want = size * np.arange(count, dtype=np.float64) + size * (size - 1) / 2
    assert got.dtype == np.float64 and np.array_equal(got, want)
    assert sum_phase.metrics["payload_bytes"] == 8 * count
    assert sum_phase.metrics["tracked_buffer_bytes"] == 144 + 16 * count
    app_collective_exact()


def boom():
    raise ValueError("provider failed")


SUM_REFUSALS = {
    # name: (prepare on the refusing rank, fields there, expected stage)
    "provider exception": (boom, {}, "preflight"),
    "wrong length": (lambda: np.zeros(3), {}, "preflight"),
    "wrong dtype": (lambda: np.zeros(4, dtype=np.float32), {}, "preflight"),
    "count above cap": (lambda: np.zeros(9), {"count": 9}, "preflight"),
    "negative epoch": (lambda: np.zeros(4), {"epoch": -1}, "preflight"),
    "count past int32": (lambda: np.zeros(4), {"count": 2**31, "max_elements": 2**31},
                         "preflight"),
    "phase id differs": (lambda: np.zeros(4), {"phase_id": 8}, "contract"),
}


@pytest.mark.parametrize("name", sorted(SUM_REFUSALS))
@pytest.mark.parametrize("who", ["first", "last"])
def test_sum_refused_everywhere(sum_phase, name, who):
    prepare, fields, stage = SUM_REFUSALS[name]
    bad = 0 if who == "first" else last
    if stage == "contract" and size == 1:
        stage = None  # one rank agrees with itself: admitted
    kw = dict(phase_id=7, epoch=3, count=4, max_elements=8)
    if rank == bad:
        kw.update(fields)
    seq = sum_phase.sequence
    if stage is None:
        sum_phase.sum(prepare if rank == bad else (lambda: np.zeros(4)), **kw)
    else:
        with pytest.raises(CollectiveRefusal) as e:
            sum_phase.sum(prepare if rank == bad else (lambda: np.zeros(4)), **kw)
        assert (e.value.stage, e.value.rank, e.value.sequence) == (stage, None, seq)
        stages = comm.allgather((e.value.stage, e.value.sequence))
        assert len(set(stages)) == 1
    assert sum_phase.sequence == seq + 1  # consumed on refusal too
    app_collective_exact()
    # and the phase serves the next call
    got = sum_phase.sum(lambda: np.ones(2), phase_id=7, epoch=3, count=2, max_elements=8)
    assert np.array_equal(got, np.full(2, float(size)))


@pytest.fixture(scope="module")
def xfer():
    phase = BoundedTransferPhase()
    yield phase
    phase.close()


def payload(n):
    return (np.arange(n) * 7 % 251).astype(np.uint8)


@pytest.mark.parametrize("n", [0, 8, 4096])
@pytest.mark.parametrize("batches", [0, 3])
def test_transfer_delivers(xfer, n, batches):
    calls = []
    value = xfer.run(lambda: payload(n), lambda view: int(view.sum()) + len(view),
                     calls.append, source=0, destination=last, nbytes=n, max_bytes=4096,
                     phase_id=1, epoch=0, batches=batches)
    assert calls == list(range(batches))
    assert value == (int(payload(n).sum()) + n if rank == last else None)
    assert xfer.metrics["status"] == "ok" and xfer.metrics["failure_stage"] is None
    app_collective_exact()


def test_transfer_view_is_read_only(xfer):
    def consume(view):
        view[0] = 1
    with pytest.raises(TransferRefusal) as e:
        xfer.run(lambda: payload(8), consume, lambda i: None, source=0, destination=last,
                 nbytes=8, max_bytes=8, phase_id=1, epoch=0, batches=0)
    assert (e.value.stage, e.value.rank) == ("consumer", last)
    app_collective_exact()


def refusing(stage, who):
    """prepare, consume, compute for a refusal at stage on rank who."""
    prepare = (lambda: payload(16))
    consume = (lambda view: 1)
    compute = (lambda i: None)
    if stage == "preflight":
        prepare = boom
    elif stage == "consumer":
        consume = lambda view: boom()
    elif stage == "compute" and rank == who:
        compute = lambda i: boom()
    return prepare, consume, compute


@pytest.mark.parametrize("stage", ["preflight", "compute", "consumer"])
def test_transfer_refusals(xfer, stage):
    # the refusing rank: the source's prepare, the last rank's compute,
    # the destination's consumer
    who = {"preflight": 0, "compute": last, "consumer": last}[stage]
    prepare, consume, compute = refusing(stage, who)
    seq = xfer.sequence
    with pytest.raises(TransferRefusal) as e:
        xfer.run(prepare, consume, compute, source=0, destination=last, nbytes=16,
                 max_bytes=16, phase_id=2, epoch=0, batches=2)
    assert (e.value.stage, e.value.rank, e.value.sequence) == (stage, who, seq)
    assert isinstance(e.value, CollectiveRefusal)
    assert (xfer.metrics["failure_stage"], xfer.metrics["failure_rank"]) == (stage, who)
    app_collective_exact()


@pytest.mark.skipif(size == 1, reason="one rank cannot disagree with itself")
def test_transfer_contract_mismatch(xfer):
    with pytest.raises(TransferRefusal) as e:
        xfer.run(lambda: payload(8), lambda v: 0, lambda i: None, source=0,
                 destination=last, nbytes=8, max_bytes=8, phase_id=3,
                 epoch=1 if rank == last else 0, batches=0)
    assert (e.value.stage, e.value.rank) == ("contract", None)
    app_collective_exact()


def test_transfer_bad_fields(xfer):
    with pytest.raises(TransferRefusal) as e:
        xfer.run(lambda: payload(8), lambda v: 0, lambda i: None, source=0,
                 destination=size, nbytes=8, max_bytes=8, phase_id=3, epoch=0, batches=0)
    assert e.value.stage == "preflight" and e.value.rank == last
    app_collective_exact()


def test_ticket_api(xfer):
    ticket = xfer.begin(lambda: payload(64), source=last, destination=0, nbytes=64,
                        max_bytes=64, phase_id=4, epoch=0, batches=1)
    with pytest.raises(RuntimeError):
        xfer.begin(lambda: payload(64), source=last, destination=0, nbytes=64,
                   max_bytes=64, phase_id=4, epoch=0, batches=1)
    with pytest.raises(RuntimeError):
        xfer.close()
    for _ in range(3):
        ticket.progress()
    value = ticket.finish(lambda view: bytes(view))
    assert value == (payload(64).tobytes() if rank == 0 else None)
    with pytest.raises(RuntimeError):
        ticket.progress()
    app_collective_exact()
