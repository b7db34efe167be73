"""cpuexec.run_all: every index once on the installed executor with nothing
to report; in a fork child, whose inherited executor refuses, every index
once on the calling thread with the error returned, not raised; the first
exception fn raises stops the call and is raised."""
import os
import threading

import pytest

import cpuexec


def session():
    return cpuexec.Session({"num_threads": 3, "affinity_policy": "none"})


def recorder(count):
    hits = [0] * count
    lock = threading.Lock()

    def fn(begin, end):
        with lock:
            for i in range(begin, end):
                hits[i] += 1

    return hits, fn


def test_every_index_once_with_nothing_to_report():
    for count in (0, 1, 2, 1000, 5000):
        hits, fn = recorder(count)
        with session():
            assert cpuexec.run_all(fn, count) == (None, 0)
        assert hits == [1] * count
    hits, fn = recorder(300)
    assert cpuexec.run_all(fn, 300) == (None, 0)  # no executor: the caller runs it
    assert hits == [1] * 300


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork(): this platform has none")
def test_a_fork_child_runs_every_index_and_gets_the_error_back():
    with session():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                hits, fn = recorder(1000)
                error, caller_indices = cpuexec.run_all(fn, 1000)
                ok = (hits == [1] * 1000 and isinstance(error, cpuexec.Error) and error.name == "CPUEXEC_EFORKED"
                      and "fork" in error.message and caller_indices == 1000)
                status = 0 if ok else 2
            finally:
                os.write(write, bytes([status]))
                os._exit(status)
        os.close(write)
        verdict = os.read(read, 1)
        os.close(read)
        _, wait_status = os.waitpid(pid, 0)
    assert verdict == bytes([0])
    assert os.waitstatus_to_exitcode(wait_status) == 0


def test_the_first_exception_stops_the_call():
    ran = []

    def fn(begin, end):
        ran.append((begin, end))
        raise KeyError("block")

    with session():
        with pytest.raises(KeyError):
            cpuexec.run_all(fn, 4)
    # Two ranges of two at most (one per participant that got one); none ran twice.
    assert 1 <= len(ran) <= 2 and len(set(ran)) == len(ran)


def test_bad_arguments_are_rejected():
    with pytest.raises(TypeError):
        cpuexec.run_all(3, 10)
    with pytest.raises(cpuexec.InvalidArgument):
        cpuexec.run_all(lambda b, e: None, -1)
