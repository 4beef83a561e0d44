"""The pure-Python reference against libbbench's C sum phase, case by case
on real MPI: the same status, stage, rank and sequence, equal sums, and the
application's next collective exact after each.  Needs BBENCH_LIB and
BBENCH_MPI (tests/python/reference.sh sets them for the Open MPI build)."""
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


@pytest.fixture(scope="module")
def phases():
    c = CBoundedSumPhase()
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
