"""bbench's Python tier: the bounded sum and transfer phases from Python,
beside the protocol written in Python (issue 41).

    mpiexec.openmpi -n 2 python3 -m bbench.bench [--count LIST] [--bytes LIST]
        [--samples N] [--budget S] [--confidence L] [--c-record FILE]
        [--c-transfer-record FILE] [--output FILE]

At each count (doubles a rank), interleaved sample by sample: raw (mpi4py
Allreduce on warm buffers), python (the pure-Python phase,
bbench.reference) and c-py (libbbench's phase from Python, default
policies: through its C extension, or ctypes) and, where the extension is
built, c-in (the same C phase called from C in this process, by the
extension's loops: c-py / c-in is the binding's cost in one run).  At each
of --bytes the same
for the transfer phase from rank 0 to the last rank, no compute batches:
raw is mpi4py's Isend/Irecv pair, c-py libbbench's run() (through the
extension, which hands consume() a copy of the bytes, or ctypes).  Each
sample is the mean over a block of calls, the slowest rank's; each block
after two untimed calls of its own row, as the C engine does.  Tables of
medians and ratios on rank 0's stdout, and with --output a bbench.record/1
record (written to a temporary file and renamed, never half-written).
--c-record and --c-transfer-record name bbench-sum and bbench-transfer
records of the same build (default policies, `--mode protocol`, transfer
`--batches 0`) for c-py / c-c, the binding against another launch; without
them that ratio is not measured and says so.

Every timing the record summarizes carries ci, the distribution-free
interval of its median at --confidence's level (as the C benchmarks write
it: ci_order), or ci null and ci_reason when the samples are too few.  Each
ratio of two rows of one run also has its paired figure (paired_ratio): the
median over rounds of a_k / b_k, sample k of both rows being taken in round
k, with its interval; resolved when that interval excludes 1.0.
"""
import argparse
import contextlib
import io
import json
import math
import os
import socket
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
from mpi4py import MPI

from . import _clib
from .reference import BoundedSumPhase, BoundedTransferPhase

PRIMERS = 2  # untimed calls before each block (the C engine's count)
CONFIDENCE_DEFAULT = 0.95  # the C library's BB_CONFIDENCE_DEFAULT


def ci_order(n, level):
    """(j, coverage): the order statistic (1-based) of the distribution-free
    interval of the median of n samples, [x(j), x(n+1-j)], j the largest
    j >= 1 whose coverage 1 - 2 P(Binomial(n, 1/2) <= j - 1) is at least
    level, and that coverage; (0, coverage of [min, max]) when no j
    reaches it (n < 6 at 0.95).  The binomial sums are exact (math.comb),
    as is the comparison with the level (record/stats.c's rule)."""
    if n < 1 or not 0 < level < 1:
        return 0, (1 - 2 * 0.5 ** n if n > 0 else 0.0)
    lev, total = Fraction(level), 2 ** n
    best, cover, cdf = 0, Fraction(total - 2, total), 0
    for j in range(1, (n + 1) // 2 + 1):
        cdf += math.comb(n, j - 1)  # total * P(B <= j - 1)
        c = Fraction(total - 2 * cdf, total)
        if c < lev:
            break
        best, cover = j, c
    return best, float(cover)


def ci_reason(n, level):
    """Why n samples have no interval of the median at level (the C
    record's ci_reason, word for word)."""
    need = 1
    while need < 100000 and ci_order(need, level)[0] == 0:
        need += 1
    return ("%d samples: an interval of the median at level %g needs %d or more "
            "(even [min, max] covers %.4g)" % (n, level, need, 1 - 2 * 0.5 ** n))


def interval(samples, level):
    """The record's ci member and its reason (None when ci is not null)."""
    s = sorted(samples)
    j, cover = ci_order(len(s), level)
    if j == 0:
        return None, ci_reason(len(s), level)
    return {"level": level, "low": s[j - 1], "high": s[len(s) - j],
            "coverage": cover, "order": j}, None


def paired_ratio(a, b, level):
    """The paired ratio of rows a and b measured interleaved (a[k] and b[k]
    in round k): the median over rounds of a[k] / b[k] and its interval at
    level; resolved when the interval excludes 1.0.  Rounds where a is not
    finite or b not a positive finite number are left out."""
    r = [x / y for x, y in zip(a, b)
         if math.isfinite(x) and math.isfinite(y) and y > 0]
    ci, why = interval(r, level) if r else (None, "no round with both rows measured")
    return {"median": float(np.median(r)) if r else None, "rounds": len(r),
            "ratios": r, "ci": ci, "ci_reason": why,
            "resolved": ci is not None and (ci["low"] > 1.0 or ci["high"] < 1.0)}


def parse_count(text):
    out = []
    for item in text.split(","):
        mult = {"K": 1024, "M": 1024 ** 2}.get(item[-1:].upper(), 1)
        n = int(item[:-1] if mult > 1 else item) * mult
        if n < 0 or n > 2**31 - 1:
            raise ValueError("count %s: 0 to 2^31-1" % item)
        out.append(n)
    return out


def args_of(argv):
    p = argparse.ArgumentParser(prog="bbench-py", description=__doc__.split("\n\n")[0])
    p.add_argument("--count", default="1,8K,128K,1M",
                   help="doubles a rank, a comma list with K/M (default 8 B to 8 MiB)")
    p.add_argument("--samples", type=int, default=5, help="samples a point, >= 3")
    p.add_argument("--budget", type=float, default=0.02,
                   help="seconds a sample, on the dearest row")
    p.add_argument("--bytes", default="8,4M",
                   help="transfer bytes, a comma list with K/M (default 8 B and 4 MiB; "
                        "'none': no transfer rows)")
    p.add_argument("--c-record", help="a bbench-sum record of this build (C from C)")
    p.add_argument("--c-transfer-record",
                   help="a bbench-transfer record of this build (C from C, --batches 0)")
    p.add_argument("--confidence", type=float, default=CONFIDENCE_DEFAULT,
                   help="the level of every interval of a median, in (0, 1) (default %g)"
                        % CONFIDENCE_DEFAULT)
    p.add_argument("--output", help="the record to write")
    a = p.parse_args(argv)
    try:
        a.counts = parse_count(a.count)
        a.bytes = [] if a.bytes == "none" else parse_count(a.bytes)
    except ValueError as e:
        p.error("--count or --bytes: %s" % e)
    if a.samples < 3 or not 0 < a.budget <= 10:
        p.error("--samples must be >= 3 and --budget in (0, 10]")
    if not 0 < a.confidence < 1:  # also NaN
        p.error("--confidence %s: a level in (0, 1), such as 0.95" % a.confidence)
    return a


class CLoop:
    """A way whose block is timed in C: loop(reps) makes reps calls from C
    and returns their mean seconds (the extension's block function)."""

    def __init__(self, loop):
        self.loop = loop

    def __call__(self):
        self.loop(1)


# What this microbenchmark cannot observe, null with the reason (the
# document: full-run time, actual network bytes and process memory remain
# null with reasons), as the C benchmarks write them.
UNOBSERVED = {
    "time.full_run": {"value": None, "unit": "s", "scope": "run/max-rank",
                      "reason": "not observable: a microbenchmark times calls, not a complete "
                                "scientific run", "deterministic": False},
    "network.bytes": {"value": None, "unit": "byte", "scope": "call/rank",
                      "reason": "not observable: MPI does not report wire traffic; payload "
                                "bytes are not network bytes", "deterministic": True},
    "memory.mpi_internal": {"value": None, "unit": "byte", "scope": "run/rank",
                            "reason": "not observable: MPI internal allocations are not "
                                      "reported", "deterministic": False},
    "memory.rss_peak": {"value": None, "unit": "byte", "scope": "run/max-rank",
                        "reason": "not measured: the process's memory is the Python "
                                  "interpreter's and NumPy's, not the phase's (the document "
                                  "keeps process memory null)", "deterministic": False},
}


def block(comm, f, reps):
    """Per-call mean of reps calls, the slowest rank's."""
    if isinstance(f, CLoop):
        return comm.allreduce(f.loop(reps), op=MPI.MAX)
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return comm.allreduce((time.perf_counter() - t0) / reps, op=MPI.MAX)


def quantity(samples, level, scope="call/max-rank", unit="s"):
    s = sorted(samples)
    med = float(np.median(s))
    q = {"value": med, "unit": unit, "scope": scope, "reason": None,
         "samples": list(samples), "median": med, "range": [s[0], s[-1]],
         "deterministic": False}
    q["ci"], why = interval(s, level)
    if why is not None:
        q["ci_reason"] = why
    return q


def c_from_c(path, benchmark, key, sizes):
    """{size: median elapsed} of the default-policy protocol rows of a C
    record (bbench-sum by count, bbench-transfer by bytes with no batches),
    and the reason where a size has none."""
    if not path:
        return {}, "no record of bbench-%s given (--c-%srecord)" % (
            benchmark, "" if benchmark == "sum" else "transfer-")
    with open(path) as f:
        rec = json.load(f)
    out = {}
    for p in rec.get("points", []):
        pa = p["parameters"]
        if (rec.get("benchmark") == benchmark and pa.get("mode") == "protocol"
                and pa.get("buffers", "fresh") == "fresh"
                and pa.get("admission", "spec") == "spec"
                and pa.get("requests", "per-call") == "per-call"
                and pa.get("batches", 0) == 0
                and pa.get(key) in sizes and p["status"] == "ok"):
            out[pa[key]] = p["quantities"]["elapsed"]["median"]
    return out, "the record %s has no default-policy protocol row at this size" % path

def main(argv=None):
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    # Every rank parses the same argv and exits alike (2: usage, 0: --help);
    # only rank 0 prints.
    quiet = io.StringIO()
    try:
        with contextlib.redirect_stdout(sys.stdout if rank == 0 else quiet), \
                contextlib.redirect_stderr(sys.stderr if rank == 0 else quiet):
            a = args_of(argv if argv is not None else sys.argv[1:])
    except SystemExit as e:
        return e.code
    # Rank 0 reads the C records; every rank gets what it read or why it
    # could not, so that a missing or malformed record is a usage error (2)
    # on every rank, said once, and no rank waits in the broadcast.
    err = cc = cc_reason = tc = tc_reason = None
    if rank == 0 and a.output:
        # --output checked before the run, as the C programs do: a record
        # that cannot be written is known now, not after every sample.
        d = os.path.dirname(os.path.abspath(a.output))
        if os.path.isdir(a.output):
            err = "--output %s: is a directory" % a.output
        elif not os.path.isdir(d) or not os.access(d, os.W_OK | os.X_OK):
            err = "--output %s: cannot write in %s" % (a.output, d)
    if rank == 0 and err is None:
        opt, path = "--c-record", a.c_record
        try:
            cc, cc_reason = c_from_c(a.c_record, "sum", "count", a.counts)
            opt, path = "--c-transfer-record", a.c_transfer_record
            tc, tc_reason = c_from_c(a.c_transfer_record, "transfer", "bytes", a.bytes)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RuntimeError,
                MemoryError) as e:  # RuntimeError: a JSON nested too deep
            err = "%s %s: not a usable record: %s" % (opt, path, e)
    err, cc, cc_reason, tc, tc_reason = comm.bcast((err, cc, cc_reason, tc, tc_reason))
    if err is not None:
        if rank == 0:
            print("bbench.bench: %s" % err, file=sys.stderr)
        return 2
    py, c = BoundedSumPhase(), _clib.CBoundedSumPhase()
    pyt, ct = BoundedTransferPhase(), _clib.CBoundedTransferPhase()
    # c-in: the same C phase called from C in this process (the extension's
    # loops), interleaved with the others: the binding's cost in one run.
    ext = _clib._extension() if c.binding == "extension" else None
    cin_reason = None if ext else "the C extension is not built (c-in needs its C loops)"
    # Each rank loads its binding itself (BBENCH_BINDING, BBENCH_EXT_PATH may
    # differ by host): the rows, and so the collectives, must be the same on
    # every rank.
    ways = comm.allgather((c.binding, ext is not None))
    if len(set(ways)) > 1:
        if rank == 0:
            print("bbench.bench: the ranks load different bindings (rank: binding, c-in "
                  "extension): %s; set BBENCH_BINDING and BBENCH_EXT_PATH alike on every "
                  "host" % ", ".join("%d: %s, %s" % (r, b, e) for r, (b, e) in enumerate(ways)),
                  file=sys.stderr)
        for p in (c, ct):
            p.close()
        return 2
    points, rows, trows, calls = [], [], [], 0

    def measure(ways, parts_of, params, payload, phases=None):
        """Samples of every way, interleaved, and their points; the parts of
        the ways parts_of names (way -> {quantity: its seconds in the phase's
        metrics of the last call}); phases (way -> phase) the ways whose
        phase's metrics give the census and the request credit."""
        nonlocal calls
        # The first call of each way at these parameters, kept out of the
        # samples and recorded apart (the document: first-call and later
        # reuse samples remain separate).
        first = {k: block(comm, f, 1) for k, f in ways.items()}
        # Reps from the dearest way's fastest of three one-call probes: one
        # stalled call cannot make the samples one call long.
        probe = max(min(block(comm, f, 1) for _ in range(3)) for f in ways.values())
        reps = max(1, int(a.budget / probe))
        got = {k: [] for k in ways}
        parts = {k: {q: [] for q in qs} for k, qs in parts_of.items()}
        # Round by round: sample k of every way is taken in round k, before
        # any way's sample k + 1, so got[x][k] / got[y][k] is a paired ratio
        # (paired_ratio).  Only ways of one size are interleaved: the sizes
        # are measured one after another, and c-c comes from another launch.
        for _ in range(a.samples):
            for k, f in ways.items():
                for _ in range(PRIMERS):
                    f()
                got[k].append(block(comm, f, reps))
                for q, v in parts_of.get(k, {}).items():  # the last call's, slowest rank's
                    parts[k][q].append(comm.allreduce(v(), op=MPI.MAX))
        calls += len(ways) * (2 + a.samples * (PRIMERS + reps))  # first, probe, blocks
        pts = {}
        for k, v in got.items():
            q = {"elapsed": quantity(v, a.confidence),
                 "communication.payload": {"value": payload, "unit": "byte",
                                           "scope": "call/rank", "reason": None,
                                           "deterministic": True}}
            for name, smp in parts.get(k, {}).items():
                q[name] = quantity(smp, a.confidence)
                q[name]["note"] = "the last call of each sample, not the block's mean"
            q.update(UNOBSERVED)
            if phases and k in phases:
                m = phases[k].metrics
                q["memory.tracked_live"] = {
                    "value": comm.allreduce(m["tracked_buffer_bytes"], op=MPI.MAX),
                    "unit": "byte", "scope": "call/max-rank", "reason": None,
                    "deterministic": True}
                q["communication.max_inflight"] = {
                    "value": comm.allreduce(m["max_inflight_requests"], op=MPI.MAX),
                    "unit": "count", "scope": "call/max-rank", "reason": None,
                    "deterministic": True}
            pts[k] = {"parameters": dict(params, mode=k, reps=reps),
                      "status": "ok", "refusal": None,
                      "first_call": {"elapsed": {
                          "value": first[k], "unit": "s", "scope": "call/max-rank",
                          "reason": None, "deterministic": False,
                          "note": "the first call at these parameters, the slowest rank's; "
                                  "not among the samples"}},
                      "quantities": q}
            points.append(pts[k])
        return {k: float(np.median(v)) for k, v in got.items()}, reps, got, pts

    for n in a.counts:
        src = np.full(n, float(rank))
        dst = np.empty(n)
        # As an application calls a phase: one prepare callable, the
        # contract's fields by name (no dict built and unpacked a call).
        def prep():
            return src

        ways = {"raw": lambda: comm.Allreduce(src, dst, op=MPI.SUM),
                "python": lambda: py.sum(prep, phase_id=1, epoch=0, count=n, max_elements=n),
                "c-py": lambda: c.sum(prep, phase_id=1, epoch=0, count=n, max_elements=n)}
        if ext:
            ways["c-in"] = CLoop(lambda reps: ext.block(
                "sum", c._phase_addr, c._metrics_addr, src, False, reps, 1, 0, n, n))
        med, reps, got, pts = measure(
            ways,
            {"python": {"phase.prepare": lambda: py.metrics["prepare_seconds"],
                        "phase.admission": lambda: py.metrics["admission_seconds"],
                        "communication.wait": lambda: (py.metrics["test_seconds"]
                                                       + py.metrics["exposed_wait_seconds"])},
             "c-py": {"phase.prepare": lambda: c.c_metrics.prepare_s,
                      "phase.admission": lambda: c.c_metrics.admission_s,
                      "phase.post": lambda: c.c_metrics.post_s,
                      "communication.wait": lambda: c.c_metrics.test_s + c.c_metrics.wait_s}},
            {"phase": "sum", "count": n, "element_bytes": 8}, 8 * n, {"python": py, "c-py": c})
        rows.append((8 * n, med["raw"], med["python"], med["c-py"], med.get("c-in"),
                     cc.get(n), reps,
                     ratios(a.confidence, got, med, cc.get(n), pts, cin_reason, cc_reason)))
    last = size - 1
    for n in a.bytes:
        # Rank 0 to the last rank (itself at -n 1), no compute batches; raw
        # is the plain Isend/Irecv pair the phase's payload is.
        buf = (np.arange(n) % 251).astype(np.uint8)
        rbuf = np.empty(n, dtype=np.uint8)

        def raw():
            reqs = []
            if rank == last:
                reqs.append(comm.Irecv(rbuf, source=0, tag=7))
            if rank == 0:
                reqs.append(comm.Isend(buf, dest=last, tag=7))
            MPI.Request.Waitall(reqs)

        def tprep():
            return buf

        ways = {"raw": raw,
                "python": lambda: pyt.run(tprep, len, None, source=0, destination=last, nbytes=n,
                                          max_bytes=n, phase_id=2, epoch=0, batches=0),
                "c-py": lambda: ct.run(tprep, len, None, source=0, destination=last, nbytes=n,
                                       max_bytes=n, phase_id=2, epoch=0, batches=0)}
        if ext:
            ways["c-in"] = CLoop(lambda reps: ext.block(
                "transfer", ct._phase_addr, ct._metrics_addr, buf, False, reps, 2, 0, 0, last, n,
                n, 0))
        med, reps, got, pts = measure(
            ways,
            {"python": {"phase.prepare": lambda: pyt.metrics["prepare_seconds"],
                        "phase.admission": lambda: pyt.metrics["admission_seconds"]},
             "c-py": {"phase.prepare": lambda: ct.c_metrics.prepare_s,
                      "phase.admission": lambda: ct.c_metrics.admission_s}},
            {"phase": "transfer", "bytes": n, "batches": 0}, n, {"python": pyt, "c-py": ct})
        trows.append((n, med["raw"], med["python"], med["c-py"], med.get("c-in"), tc.get(n),
                      reps,
                      ratios(a.confidence, got, med, tc.get(n), pts, cin_reason, tc_reason)))
    c.close()
    ct.close()
    pyt.close()
    if rank == 0:
        print_table(rows, cc_reason, cin_reason, size, c.binding, "sum", "count x 8",
                    "mpi4py Allreduce", "bbench-sum's protocol row (--c-record)")
        print_paired(rows, a.confidence)
        if trows:
            print()
            print_table(trows, tc_reason, cin_reason, size, ct.binding, "transfer", "bytes",
                        "mpi4py Isend/Irecv, rank 0 to the last",
                        "bbench-transfer's protocol row (--c-transfer-record)")
            print_paired(trows, a.confidence)
    if a.output:
        write_record(comm, a, points, size, calls, {"sum": c.binding, "transfer": ct.binding})
    return 0


# The ratios the tables print, numerator and denominator row: c-c is the
# median of another launch's record (--c-record), never paired.
RATIOS = (("python", "raw"), ("c-py", "raw"), ("python", "c-py"), ("c-py", "c-in"),
          ("c-py", "c-c"))


def ratios(level, got, med, cfc, pts, cin_reason, cc_reason):
    """The ratios of one size, each with its paired figure, as the table
    prints them [(name, ratio of the medians, paired or None, reason)], and
    in the record: the numerator's point gets ratio.DEN (the ratio of the
    medians of elapsed, the table's figure) and beside it ratio.DEN.paired
    (the per-round ratios as its samples, their median, range and ci, the
    rounds and whether the interval excludes 1.0)."""
    out = []
    for num, den in RATIOS:
        q = pts[num]["quantities"]
        b = cfc if den == "c-c" else med.get(den)
        missing = None
        if b is None:
            missing = cc_reason if den == "c-c" else cin_reason
        note = "elapsed of this row over elapsed of the %s row at these parameters" % den
        q["ratio." + den] = {
            "value": None if b is None else med[num] / b, "unit": "ratio",
            "scope": "call/max-rank", "reason": missing, "deterministic": False,
            "note": note + ": the ratio of their medians"}
        if b is None or den == "c-c":
            why = missing or ("not paired: c-c is the median of another launch's record, "
                              "whose samples were not taken in this run's rounds")
            q["ratio.%s.paired" % den] = {
                "value": None, "unit": "ratio", "scope": "call/max-rank", "reason": why,
                "deterministic": False, "rounds": 0, "ci": None, "ci_reason": why,
                "resolved": False}
            out.append((num + "/" + den, None if b is None else med[num] / b, None, why))
            continue
        pr = paired_ratio(got[num], got[den], level)
        pq = quantity(pr["ratios"], level, unit="ratio")
        pq.update(rounds=pr["rounds"], resolved=pr["resolved"],
                  note=note + ", round by round: sample k of both taken in round k "
                  "(interleaved); resolved: the interval of the median excludes 1.0")
        q["ratio.%s.paired" % den] = pq
        out.append((num + "/" + den, med[num] / b, pr, None))
    return out


def print_paired(rows, level):
    """Each ratio of the table with its paired figure: the median over
    rounds of the per-round ratio, its interval, the rounds; '?' marks one
    not resolved (the interval holds 1.0, or the rounds are too few for
    one)."""
    print("# paired: the median over rounds of a_k/b_k (sample k of both rows taken in "
          "round k), [low, high] its interval at level %g, rounds; ?: not resolved (the "
          "interval holds 1.0 or does not exist); medians: the table's ratio" % level)
    print("%9s %11s %9s %9s %9s %9s %6s %3s" % (
        "size_B", "ratio", "medians", "paired", "low", "high", "rounds", "res"))
    reasons = {}
    for row in rows:
        for name, of_medians, pr, why in row[7]:
            fm = "-" if of_medians is None else "%.3f" % of_medians
            if pr is None:
                print("%9d %11s %9s %9s %9s %9s %6d %3s" % (row[0], name, fm, "-", "-", "-",
                                                            0, "?"))
                reasons[name] = why
                continue
            ci = pr["ci"]
            print("%9d %11s %9s %9.3f %9s %9s %6d %3s" % (
                row[0], name, fm, pr["median"], "-" if ci is None else "%.3f" % ci["low"],
                "-" if ci is None else "%.3f" % ci["high"], pr["rounds"],
                "yes" if pr["resolved"] else "?"))
            if ci is None:
                reasons[name] = pr["ci_reason"]
    for name, why in reasons.items():
        print("# %s: %s" % (name, why))


def print_table(rows, cc_reason, cin_reason, size, binding, phase, unit, raw, cc):
    def fmt(x, f):
        return "-" if x is None else f % x

    print("# bbench-py %s: %d ranks; medians in us, each sample the slowest rank's mean over "
          "a block of calls; rows interleaved sample by sample; size_B: %s"
          % (phase, size, unit))
    print("# raw: %s; python: the pure-Python phase; c-py: libbbench's phase from Python "
          "(through the %s); c-in: the same C phase called from C in this process, in "
          "this run; c-c: %s" % (raw, "C extension" if binding == "extension"
                                 else "ctypes binding", cc))
    print("# python/c-py: the Python layer; c-py/c-in: the binding (one run); c-py/c-c: the "
          "binding against another launch")
    print("%9s %10s %10s %10s %10s %10s %9s %9s %11s %9s %9s %6s" % (
        "size_B", "raw_us", "python_us", "c-py_us", "c-in_us", "c-c_us", "py/raw",
        "c-py/raw", "python/c-py", "c-py/c-in", "c-py/c-c", "reps"))
    for size_b, raw_s, pyt, cpy, cin, cfc, reps, _ in rows:
        print("%9d %10.2f %10.2f %10.2f %10s %10s %9.2f %9.2f %11.2f %9s %9s %6d" % (
            size_b, raw_s * 1e6, pyt * 1e6, cpy * 1e6, fmt(cin and cin * 1e6, "%.2f"),
            fmt(cfc and cfc * 1e6, "%.2f"), pyt / raw_s, cpy / raw_s, pyt / cpy,
            fmt(cin and cpy / cin, "%.2f"), fmt(cfc and cpy / cfc, "%.2f"), reps))
    if any(r[4] is None for r in rows):
        print("# c-in: not measured: %s" % cin_reason)
    if any(r[5] is None for r in rows):
        print("# c-c: not measured: %s" % cc_reason)


def source_git():
    """git describe of the tree this package runs from (as the C build
    records its source tree), or None and the reason (an installed copy)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, "git could not be run"
    if out.returncode != 0 or not out.stdout.strip():
        return None, "the package does not run from a git checkout (git describe failed)"
    return out.stdout.strip(), None


def write_record(comm, a, points, size, calls, binding):
    hosts = comm.gather(socket.gethostname())
    if comm.Get_rank() != 0:
        return
    git, git_reason = source_git()
    per_host = {h: hosts.count(h) for h in hosts}
    cores = os.cpu_count()
    over = any(k > cores for k in per_host.values()) if cores else None
    rec = {
        "schema": "bbench.record/1", "vocabulary": "bbench.quantities/1",
        "benchmark": "py",
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": [sys.executable, "-m", "bbench.bench"] + sys.argv[1:],
        "source": {"package": "bbench", "version": "0.1.0", "git": git,
                   "build": {"python": sys.version.split()[0],
                             "numpy": np.__version__,
                             "mpi4py": __import__("mpi4py").__version__,
                             "libbbench": os.environ.get("BBENCH_LIB"),
                             "binding": binding["sum"],
                             "transfer_binding": binding["transfer"]}},
        "runtime": {"mpi_standard": "%d.%d" % MPI.Get_version(),
                    "mpi_library": MPI.Get_library_version().splitlines()[0].strip(),
                    "thread_level_requested": "MPI_THREAD_MULTIPLE",
                    "thread_level_provided": {
                        MPI.THREAD_SINGLE: "MPI_THREAD_SINGLE",
                        MPI.THREAD_FUNNELED: "MPI_THREAD_FUNNELED",
                        MPI.THREAD_SERIALIZED: "MPI_THREAD_SERIALIZED",
                        MPI.THREAD_MULTIPLE: "MPI_THREAD_MULTIPLE"}[MPI.Query_thread()],
                    "timer": {"source": "time.perf_counter", "resolution_s":
                              time.get_clock_info("perf_counter").resolution},
                    "env": {k: v for k, v in os.environ.items()
                            if k.startswith(("OMPI_MCA_", "MPIR_CVAR_", "OMP_", "MALLOC_"))},
                    "simulated": None, "simulated_reason": "measured on real hosts",
                    "launcher": None,
                    "launcher_reason": "not captured by the Python tier"},
        "topology": {"ranks": size, "hosts": len(per_host), "oversubscribed": over,
                     "per_host": [{"host": h, "ranks": k} for h, k in per_host.items()],
                     "per_rank": [{"rank": r, "host": h} for r, h in enumerate(hosts)]},
        "run": {"measurement": {
            "samples": a.samples, "reps": None, "reps_chosen_by": "--budget",
            "budget_s": a.budget, "warmup": 0, "timing": "block", "rank_stat": "max",
            "calls": calls, "primer_calls_per_block": PRIMERS,
            "confidence": a.confidence,
            "rounds": "interleaved: at each size sample k of every row is taken in round k, "
                      "before any row's k + 1 (the sizes one after another); ratio.DEN.paired "
                      "pairs the rows of one size by round, c-c (another launch) unpaired",
            "reps_note": "one figure a point (its parameters.reps), fitted to the budget on "
                         "the dearest row's fastest of three one-call probes"}},
        "points": points,
    }
    if git is None:
        rec["source"]["git_reason"] = git_reason
    else:
        rec["source"]["git_dirty"] = git.endswith("-dirty")
    if over is None:
        rec["topology"]["oversubscribed_reason"] = "the core count is unknown"
    tmp = a.output + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=1)
    os.replace(tmp, a.output)


def run(argv=None):
    """main(), and what the C programs' fatal path does for an exception no
    rank agreed on (a failed load on one host, memory): print it and end
    the whole job (exit 3), never leave the other ranks waiting."""
    try:
        return main(argv)
    except Exception:  # noqa: BLE001 (every kind: the job must end)
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(3)


if __name__ == "__main__":
    sys.exit(run())
