"""Shared fixtures: where the build tree's cpuexec-info and the stored
topologies are (python/run-pytest sets the two directories)."""
import glob
import os
import subprocess
import sys

import pytest

SRCDIR = os.environ.get("CPUEXEC_TEST_SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILDDIR = os.environ.get("CPUEXEC_TEST_BUILDDIR", SRCDIR)
TOPOLOGIES = sorted(glob.glob(os.path.join(SRCDIR, "tests", "data", "topologies", "*.xml")))
QUOTA_FIXTURE = os.path.join(SRCDIR, "tests", "data", "topologies", "quota-1.5")


def run_cpuexec_info(*args):
    """The build tree's tools/cpuexec-info run with args (a CompletedProcess)."""
    tool = os.path.join(BUILDDIR, "tools", "cpuexec-info")
    # The tool links its sanitizer runtime itself; the preload is the interpreter's.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run([tool, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=False)


def cpuexec_info(*args):
    """stdout of the build tree's tools/cpuexec-info with args (must exit 0)."""
    done = run_cpuexec_info(*args)
    assert done.returncode == 0, f"cpuexec-info {args}: {done.stderr.decode()}"
    return done.stdout.decode()


def run_python(code, env=None, unset=()):
    """Runs code in a fresh interpreter (same paths and preload, env added,
    the names in unset removed); returns stdout."""
    full_env = {k: v for k, v in os.environ.items() if k not in unset}
    full_env.update(env or {})
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=full_env, check=False, timeout=240)
    assert done.returncode == 0, f"child failed ({done.returncode}):\n{done.stderr.decode()}"
    return done.stdout.decode()


@pytest.fixture(scope="session")
def topologies():
    assert TOPOLOGIES, f"no stored topologies under {SRCDIR}/tests/data/topologies"
    return TOPOLOGIES
