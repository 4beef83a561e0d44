"""Prototype of the Python tier's benchmark (issue 41 item 3): mpi4py
Allreduce (raw), the pure-Python phase and the C phase from Python,
interleaved sample by sample at each size, rank-maximum per-call means,
median of the samples.  Prints one table; no record yet.

    mpiexec.openmpi -n 2 python3 -m bbench.bench [SAMPLES]
"""
import sys
import time

import numpy as np
from mpi4py import MPI

from .reference import BoundedSumPhase
from ._clib import CBoundedSumPhase

SIZES = [1, 8192, 131072, 1048576]  # doubles: 8 B, 64 KiB, 1 MiB, 8 MiB


def main():
    comm = MPI.COMM_WORLD
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    py, c = BoundedSumPhase(), CBoundedSumPhase()
    rank = comm.Get_rank()
    if rank == 0:
        print("%8s %10s %10s %10s %8s %8s" % ("size_B", "raw_us", "python_us", "c_py_us",
                                               "py/raw", "c_py/raw"))
    for n in SIZES:
        src = np.full(n, float(rank))
        dst = np.empty(n)
        kw = dict(phase_id=1, epoch=0, count=n, max_elements=n)
        ways = {"raw": lambda: comm.Allreduce(src, dst, op=MPI.SUM),
                "python": lambda: py.sum(lambda: src, **kw),
                "c_py": lambda: c.sum(lambda: src, **kw)}
        # reps: fitted to 20 ms on the dearest way's warm call
        for f in ways.values():
            f()
        t = max(comm.allreduce(timed(f, 1), op=MPI.MAX) for f in ways.values())
        reps = max(1, int(0.02 / t))
        got = {k: [] for k in ways}
        for _ in range(samples):
            for k, f in ways.items():
                f()  # the primer: what the previous way left is paid here
                got[k].append(comm.allreduce(timed(f, reps), op=MPI.MAX))
        med = {k: float(np.median(v)) * 1e6 for k, v in got.items()}
        if rank == 0:
            print("%8d %10.2f %10.2f %10.2f %8.2f %8.2f" % (
                8 * n, med["raw"], med["python"], med["c_py"], med["python"] / med["raw"],
                med["c_py"] / med["raw"]))
    c.close()


def timed(f, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


if __name__ == "__main__":
    main()
