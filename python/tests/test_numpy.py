"""NumPy inside a session: with cpuexec.Session({"num_threads": 1}) a large
numpy.dot on OpenBLAS's OpenMP build runs its OpenMP region at one thread
(the OpenMP runtime is told so for the block and restored after it, and no
OpenMP worker starts), while outside the session it does use more threads.
Run in a fresh interpreter so no earlier OpenMP region has started workers,
with OpenBLAS's OpenMP build from its Debian directory first on
LD_LIBRARY_PATH (when installed), whatever the system's BLAS alternative."""
import json
import os
import sysconfig

import pytest

from conftest import run_python

pytest.importorskip("numpy", reason="NumPy is not installed (Debian: python3-numpy)")

CHILD = r'''
import ctypes, json, os, sys
import numpy
libs = sorted({f.split()[-1] for f in open("/proc/self/maps") if len(f.split()) >= 6 and ".so" in f.split()[-1]})
def exports(path, name):
    try:
        return getattr(ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY), name)
    except (OSError, AttributeError):
        return None
parallel = [f for f in (exports(p, "openblas_get_parallel") for p in libs) if f is not None]
blas = [p for p in libs if "blas" in os.path.basename(p)]
# openblas_get_parallel(): 0 single-threaded, 1 pthreads, 2 OpenMP.
if not parallel or parallel[0]() != 2:
    print(json.dumps({"skip": "NumPy's BLAS is not OpenBLAS's OpenMP build (loaded: %s)" % (blas or "none")}))
    sys.exit(0)
runtimes = [p for p in libs if os.path.basename(p).startswith(("libgomp", "libomp", "libiomp"))]
max_threads = exports(runtimes[0], "omp_get_max_threads")
import cpuexec
def tasks():
    # Running threads: a joined thread stays listed a moment, with PF_EXITING (0x4) in its flags.
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/stat" % tid) as f:
                flags = int(f.read().rsplit(")", 1)[1].split()[6])
        except (OSError, IndexError, ValueError):
            continue
        n += (flags & 0x4) == 0
    return n
a = numpy.ones((768, 768))
before_max, before_tasks = max_threads(), tasks()
with cpuexec.Session({"num_threads": 1}) as s:
    inside_max = max_threads()
    inside = numpy.dot(a, a)
    inside_tasks = tasks()
after_max = max_threads()
outside = numpy.dot(a, a)
print(json.dumps({"runtime": runtimes[0], "cpus": len(os.sched_getaffinity(0)), "session_threads": s.effective_threads,
                  "before_max": before_max, "inside_max": inside_max, "after_max": after_max,
                  "before_tasks": before_tasks, "inside_tasks": inside_tasks, "outside_tasks": tasks(),
                  "equal": bool((inside == outside).all()), "value": float(inside[0, 0]),
                  "status": cpuexec.openmp_status(), "report": cpuexec.openmp_report()}))
'''


OPENMP_DIR = os.path.join("/usr/lib", sysconfig.get_config_var("MULTIARCH") or "", "openblas-openmp")


def test_numpy_dot_runs_openmp_at_one_thread_inside_a_serial_session():
    env = {}
    if os.path.exists(os.path.join(OPENMP_DIR, "libopenblas.so.0")):
        env["LD_LIBRARY_PATH"] = OPENMP_DIR + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    # The machine decides OpenMP's default outside the session, not these.
    out = run_python(CHILD, env=env,
                     unset=("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOMP_CPU_AFFINITY", "CPUEXEC_POLICY"))
    print(out)
    r = json.loads(out.strip().splitlines()[-1])
    if "skip" in r:
        pytest.skip(r["skip"])
    assert r["session_threads"] == 1
    assert r["inside_max"] == 1, r
    assert r["after_max"] == r["before_max"], r
    # A serial session starts no worker and OpenMP started none for the dot.
    assert r["inside_tasks"] == r["before_tasks"], r
    assert r["equal"] and r["value"] == 768.0
    assert r["status"]["guard_active"] and (r["status"]["libgomp_loaded"] or r["status"]["libomp_loaded"])
    assert isinstance(r["report"], list) and all(isinstance(e, dict) for e in r["report"])
    if r["cpus"] >= 2 and r["before_max"] >= 2:
        # The same check sees OpenMP workers when they do start: the measure can fail.
        assert r["outside_tasks"] > r["inside_tasks"], r
