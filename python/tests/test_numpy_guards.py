"""NumPy on OpenBLAS's pthreads build, through the module: numpy.dot inside
cpuexec.parallel_for callbacks of a 2-thread session runs on the callbacks'
threads only (OpenBLAS's own threads get no CPU time while the region runs;
the process's CPU time, which counts every thread, is the caller's and the
pool's), gives the exact result, and the same dot at top level still uses
OpenBLAS's threads. The child loads OpenBLAS's pthreads build from its Debian
directory (LD_LIBRARY_PATH), whatever the system's BLAS alternative is, asked
for 2 threads, its idle threads asleep at once (OPENBLAS_THREAD_TIMEOUT=4)
so only work shows as CPU time."""
import json
import os
import sysconfig

import pytest

from conftest import run_python

pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")

MULTIARCH = sysconfig.get_config_var("MULTIARCH") or ""
PTHREAD_DIR = os.path.join("/usr/lib", MULTIARCH, "openblas-pthread")

CHILD = r'''
import ctypes, json, os, resource, sys, threading, time
import numpy
libs = sorted({f.split()[-1] for f in open("/proc/self/maps") if len(f.split()) >= 6 and ".so" in f.split()[-1]})
def exports(path, name):
    try:
        return getattr(ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY), name)
    except (OSError, AttributeError):
        return None
openblas = [p for p in libs if exports(p, "openblas_get_parallel") is not None]
if not openblas or exports(openblas[0], "openblas_get_parallel")() != 1:
    print(json.dumps({"wrong_blas": openblas}))
    sys.exit(0)
threads_of = exports(openblas[0], "openblas_get_num_threads")
import cpuexec

def thread_ns(tid):
    # The thread's CPU clock (Linux: CPUCLOCK_SCHED, per thread), up to date even while it runs.
    try:
        return time.clock_gettime_ns(((~tid) << 3) | 6)
    except OSError:
        return None
def snapshot():
    tids = [int(t) for t in os.listdir("/proc/self/task")]
    per = {t: thread_ns(t) for t in tids}
    return {t: v for t, v in per.items() if v is not None}
def process_ns():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return int((u.ru_utime + u.ru_stime) * 1e9)
def name(tid):
    try:
        return open("/proc/self/task/%d/comm" % tid).read().strip()
    except OSError:
        return ""
def others(before, after, p0, p1, allowed):
    grown = {t: after[t] - before.get(t, 0) for t in after}
    listed = sum(grown.values())
    other_listed = sum(v for t, v in grown.items() if t not in allowed)
    exited = max(0, (p1 - p0) - listed)
    return other_listed + exited, sum(v for t, v in grown.items() if t in allowed)

N, R = 256, 2
a = [((numpy.arange(N * N).reshape(N, N) * 7 + r) % 5 - 2).astype(numpy.float64) for r in range(R)]
b = [((numpy.arange(N * N).reshape(N, N) * 3 + 2 * r) % 5 - 2).astype(numpy.float64) for r in range(R)]
want = [(a[r].astype(numpy.int64) @ b[r].astype(numpy.int64)).astype(numpy.float64) for r in range(R)]
c = [numpy.zeros((N, N)) for r in range(R)]
seen = {}
def gemm(begin, end):
    for r in range(begin, end):
        seen[r] = (threading.get_native_id(), threads_of())
        for _ in range(12):
            numpy.dot(a[r], b[r], out=c[r])

main = threading.get_native_id()
with cpuexec.Session({"num_threads": 2, "affinity_policy": "none", "spin_policy": "park_immediately"}) as s:
    p0 = process_ns(); before = snapshot()
    cpuexec.parallel_for(gemm, R, 1)
    after = snapshot(); p1 = process_ns()
    allowed = {main} | {t for t, _ in seen.values()} | {t for t in after if name(t).startswith("cpuexec-w")}
    inside_other, inside_allowed = others(before, after, p0, p1, allowed)
    inside_exact = all(bool((c[r] == want[r]).all()) for r in range(R))
    runtimes = cpuexec.runtimes()
threads_after = threads_of()
for r in range(R):
    c[r][:] = 0
p0 = process_ns(); before = snapshot()
for r in range(R):
    for _ in range(12):
        numpy.dot(a[r], b[r], out=c[r])
after = snapshot(); p1 = process_ns()
top_other, top_allowed = others(before, after, p0, p1, {main})
print(json.dumps({"openblas": openblas[0], "session_threads": s.effective_threads,
                  "seen": {str(k): v for k, v in seen.items()}, "threads_after": threads_after,
                  "inside_other_ms": inside_other / 1e6, "inside_allowed_ms": inside_allowed / 1e6,
                  "inside_exact": inside_exact, "top_other_ms": top_other / 1e6, "top_allowed_ms": top_allowed / 1e6,
                  "top_exact": all(bool((c[r] == want[r]).all()) for r in range(R)),
                  "runtimes": runtimes}))
'''


def test_numpy_dot_in_callbacks_stays_on_the_pool_with_openblas_pthreads():
    if not os.path.exists(os.path.join(PTHREAD_DIR, "libopenblas.so.0")):
        pytest.skip(f"OpenBLAS's pthreads build is not installed in {PTHREAD_DIR} (Debian: libopenblas0-pthread; "
                    "tests/guard-packages.sh fails for it)")
    path = PTHREAD_DIR + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    out = run_python(CHILD, env={"LD_LIBRARY_PATH": path, "OPENBLAS_NUM_THREADS": "2",
                                 "OPENBLAS_THREAD_TIMEOUT": "4"},
                     unset=("OMP_NUM_THREADS", "CPUEXEC_POLICY", "CPUEXEC_NUM_THREADS"))
    print(out)
    r = json.loads(out.strip().splitlines()[-1])
    assert "wrong_blas" not in r, f"NumPy did not load OpenBLAS's pthreads build from {PTHREAD_DIR}: {r}"
    assert r["session_threads"] == 2
    guarded = [e for e in r["runtimes"] if e["family"] == "openblas"]
    assert guarded and guarded[0]["governed"] and guarded[0]["guard"] == "process_wide", r["runtimes"]
    assert guarded[0]["threading"] == "pthreads" and "openblas-pthread" in guarded[0]["path"]
    # Both ranges ran, on two threads, each seeing OpenBLAS at one thread.
    assert len(r["seen"]) == 2 and len({v[0] for v in r["seen"].values()}) == 2, r["seen"]
    assert all(v[1] == 1 for v in r["seen"].values()), r["seen"]
    assert r["threads_after"] == 2
    assert r["inside_exact"] and r["top_exact"]
    assert r["inside_allowed_ms"] > 0
    assert r["inside_other_ms"] < 2.0, r
    # The same measure sees OpenBLAS's threads at top level: it can fail.
    assert r["top_other_ms"] > 2.0, r
