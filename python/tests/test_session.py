"""cpuexec.Session: sharing identity, the scope a `with` block installs,
counters (off by default, exact when on, shared by compatible sessions),
parallel_for, and 4 Python threads using sessions at once."""
import ast
import gc
import os
import re
import threading

import pytest

import cpuexec
from conftest import SRCDIR


def private_policy(k):
    """A policy no other test uses, so its executor and counters are fresh."""
    return {"num_threads": 2, "affinity_policy": "none", "spin_policy": "fixed_iterations",
            "spin_budget": 1000 + k}


def test_node_budget_says_what_applies():
    # The suite runs with the node budget off (tests/run-test.sh); under
    # `make -j check` the line also reports make's jobserver, not passed on.
    text = cpuexec.node_budget()
    assert isinstance(text, str)
    assert text.startswith("off (") or "CPUs shared by this user's processes" in text


def test_fields_and_identity_sharing():
    a = cpuexec.Session(private_policy(1))
    b = cpuexec.Session(cpuexec.Policy(**private_policy(1)))
    c = cpuexec.Session("num_threads=2,affinity_policy=none,spin_policy=fixed_iterations,spin_budget=1001")
    other = cpuexec.Session(private_policy(2))
    assert isinstance(a.resolution, cpuexec.Resolution)
    assert a.resolution.request == cpuexec.Policy(**private_policy(1))
    assert a.identity == a.resolution.identity == b.identity == c.identity
    assert a.executor_id == b.executor_id == c.executor_id > 0
    assert other.identity != a.identity and other.executor_id != a.executor_id
    assert a.effective_threads == a.resolution.effective_threads == 2
    serial = cpuexec.Session({"num_threads": 1})
    assert serial.effective_threads == 1 and serial.identity != a.identity
    assert repr(a) == f"<cpuexec.Session executor_id={a.executor_id} effective_threads=2>"


def test_released_executors_are_not_reused():
    first = cpuexec.Session(private_policy(3))
    first_id = first.executor_id
    del first
    gc.collect()
    assert cpuexec.Session(private_policy(3)).executor_id != first_id


def test_resolution_keeps_its_session_alive():
    r = cpuexec.Session(private_policy(4)).resolution
    gc.collect()
    assert r.effective_threads == 2 and "threads=2" in r.identity and r.describe()


def test_with_installs_the_executor_for_the_block():
    assert cpuexec.current_executor_id() is None
    outer = cpuexec.Session(private_policy(5))
    inner = cpuexec.Session({"num_threads": 1})
    with outer as entered:
        assert entered is outer
        assert cpuexec.current_executor_id() == outer.executor_id
        with inner:
            assert cpuexec.current_executor_id() == inner.executor_id
        assert cpuexec.current_executor_id() == outer.executor_id
        nested_default = cpuexec.Session()
        assert nested_default.executor_id == outer.executor_id
        assert nested_default.identity == outer.identity
        with outer:  # re-entered on the same thread
            assert cpuexec.current_executor_id() == outer.executor_id
        assert cpuexec.current_executor_id() == outer.executor_id
    assert cpuexec.current_executor_id() is None


def test_an_exception_leaves_the_scope():
    s = cpuexec.Session(private_policy(6))
    with pytest.raises(KeyError):
        with s:
            raise KeyError("inside")
    assert cpuexec.current_executor_id() is None


def test_scopes_left_out_of_order_or_never_entered():
    a = cpuexec.Session(private_policy(7))
    b = cpuexec.Session({"num_threads": 1})
    with pytest.raises(cpuexec.Error) as info:
        a.__exit__(None, None, None)
    assert info.value.name == "CPUEXEC_ESTATE" and "has not entered" in info.value.message
    a.__enter__()
    b.__enter__()
    with pytest.raises(cpuexec.Error) as info:
        a.__exit__(None, None, None)
    assert info.value.name == "CPUEXEC_ESTATE"
    assert cpuexec.current_executor_id() == b.executor_id
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert cpuexec.current_executor_id() is None
    # Another thread cannot leave this thread's scope.
    a.__enter__()
    errors = []

    def leave_elsewhere():
        try:
            a.__exit__(None, None, None)
        except cpuexec.Error as e:
            errors.append(e.name)
    t = threading.Thread(target=leave_elsewhere)
    t.start()
    t.join()
    assert errors == ["CPUEXEC_ESTATE"]
    a.__exit__(None, None, None)
    assert cpuexec.current_executor_id() is None


def test_parallel_for_returns_the_participants_that_ran():
    """The seed's check (8 trivial blocks on a 2-thread session observe 2
    threads) per region, without a rendezvous: with the strict rule every
    call ran on both; with take-over some may run on the caller alone."""
    strict = cpuexec.Session(dict(private_policy(30), participation="every_participant"))
    with strict:
        assert [cpuexec.parallel_for(lambda b, e: None, 8, 1) for _ in range(200)] == [2] * 200
        assert cpuexec.parallel_for(lambda b, e: None, 1, 1) == 1  # one grain: inline on the caller
        assert cpuexec.parallel_for(lambda b, e: None, 0, 1) == 0
    loose = cpuexec.Session(private_policy(31))
    with loose:
        assert set(cpuexec.parallel_for(lambda b, e: None, 8, 1) for _ in range(200)) <= {1, 2}
    assert cpuexec.parallel_for(lambda b, e: None, 8, 1) == 1  # no session: serial


def test_counters_off_by_default_then_exact():
    s = cpuexec.Session(private_policy(8))
    zero = cpuexec.Counters((0,) * 8)
    with s:
        for _ in range(5):
            cpuexec.parallel_for(lambda b, e: None, 64, 1)
    assert s.counters() == zero
    s.enable_counters()
    twin = cpuexec.Session(private_policy(8))  # the same executor: its counters too
    with s:
        for _ in range(20):
            cpuexec.parallel_for(lambda b, e: None, 64, 1)
        cpuexec.parallel_for(lambda b, e: None, 1, 1)  # one grain: inline on the caller

        def nest(b, e):
            if b == 0:
                cpuexec.parallel_for(lambda b2, e2: None, 10, 1)
        cpuexec.parallel_for(nest, 8, 1)
    c = s.counters()
    assert c.dispatches == 21
    assert c.limited_inline == 1
    assert c.nested_inline == 1
    assert c.caller_waits <= c.dispatches
    assert twin.counters() == c
    assert cpuexec.Counters.n_fields == 23
    assert cpuexec.Counters.n_sequence_fields == 8
    # Executed participants: at least the caller per dispatched region, at most all admitted.
    assert c.dispatches <= c.participants_run <= 2 * c.dispatches
    # Went parallel: the dispatched regions that ran on both threads.
    assert c.parallel_regions == c.participants_run - c.dispatches
    assert [name for name in ("dispatches", "nested_inline", "limited_inline", "spins_found_work", "parks",
                              "wakeups", "caller_waits", "worker_active_ns") if hasattr(c, name)] == [
        "dispatches", "nested_inline", "limited_inline", "spins_found_work", "parks", "wakeups", "caller_waits",
        "worker_active_ns"]
    if os.environ.get("CPUEXEC_NODE_BUDGET") == "off":  # as the suite runs (tests/run-test.sh)
        assert c.node_slots_taken == 0 and c.node_slot_waits == 0
    other = cpuexec.Session(private_policy(9))
    assert other.counters() == zero


def c_counter_fields():
    """The fields of include/cpuexec/counters.h's cpuexec_counters, in order."""
    with open(os.path.join(SRCDIR, "include", "cpuexec", "counters.h"), encoding="utf-8") as f:
        header = f.read()
    body = re.search(r"typedef struct cpuexec_counters \{(.*?)\} cpuexec_counters;", header, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = re.findall(r"uint64_t\s+(\w+)\s*(\[\d+\])?\s*;", body)
    # The reserved room comes last and is no counter.
    while fields and fields[-1][0].startswith("reserved"):
        fields.pop()
    assert fields and all(not array for _, array in fields), "a field that is not one counter"
    return [name for name, _ in fields]


def stub_class_properties(name):
    """The properties python/cpuexec.pyi declares for class name, in order."""
    with open(os.path.join(SRCDIR, "python", "cpuexec.pyi"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return [n.name for n in cls.body if isinstance(n, ast.FunctionDef)]


def test_counters_have_every_field_of_the_c_struct_in_its_order():
    names = c_counter_fields()
    assert cpuexec.Counters.n_fields == len(names)
    c = cpuexec.Counters(tuple(range(len(names))))
    assert [getattr(c, name) for name in names] == list(range(len(names)))
    stub = stub_class_properties("Counters")
    assert stub == names, "python/cpuexec.pyi's Counters"


def test_a_second_caller_is_counted_where_it_ran():
    # The first caller holds its region open (its own first range waits)
    # while a second caller runs one on the same executor: on 2 threads the
    # two callers occupy both, so the second runs alone (occupied_inline);
    # on 3 it runs in a lane beside the first (concurrent_regions).
    for threads, moved in ((2, "occupied_inline"), (3, "concurrent_regions")):
        s = cpuexec.Session({**private_policy(40 + threads), "num_threads": threads})
        s.enable_counters()
        inside, beside_done = threading.Event(), threading.Event()
        ran_beside = []

        def first(b, e):
            if b == 0:  # the caller's reserved first range
                inside.set()
                assert beside_done.wait(120), "the second caller did not finish"

        def second_caller():
            assert inside.wait(120)
            with s:
                ran_beside.append(cpuexec.parallel_for(lambda b, e: None, 8, 1))
            beside_done.set()
        t = threading.Thread(target=second_caller)
        t.start()
        with s:
            cpuexec.parallel_for(first, 8, 1)
        t.join()
        assert len(ran_beside) == 1 and (ran_beside[0] == 1 if threads == 2 else 1 <= ran_beside[0] <= 2)
        c = s.counters()
        assert c.dispatches == (1 if threads == 2 else 2)  # a lane's region is a dispatch too
        others = {"occupied_inline", "concurrent_regions"} - {moved}
        assert (getattr(c, moved), *(getattr(c, f) for f in others)) == (1, 0), c
        # Nothing moves a caller; a worker that joins on its caller's
        # processor moves itself, at most once per join (doc/spinning.md).
        assert c.bound_inline == 0 and c.step_offs <= c.participants_run, c


def test_every_participant_runs_on_every_admitted_thread():
    # The seed's check: 8 trivial blocks on a 2-thread session run on both
    # threads every time under participation=every_participant, and the
    # counters say every admitted participant ran.
    s = cpuexec.Session(cpuexec.Policy(num_threads=2, participation="every_participant"))
    assert "participation=every" in s.resolution.to_dict()["sharing_key"]
    s.enable_counters()
    with s:
        for _ in range(200):
            seen = set()
            cpuexec.parallel_for(lambda b, e: seen.add(threading.get_ident()), 8, 1)
            assert len(seen) == 2
    c = s.counters()
    assert c.dispatches == 200
    assert c.participants_run == 400
    assert c.parallel_regions == 200
    assert c.takeovers == 0
    # One caller: the occupancy rule never leaves a region to it alone.
    assert c.occupied_inline == 0 and c.stood_aside == 0


def test_parallel_for_is_the_serial_loop():
    calls = []
    cpuexec.parallel_for(lambda b, e: calls.append((b, e, threading.get_ident())), 10, 3)
    # In order on this thread, contiguous, several grains per call allowed.
    bounds = [(b, e) for b, e, _ in calls]
    assert bounds[0][0] == 0 and bounds[-1][1] == 10
    assert all(e1 == b2 for (_, e1), (b2, _) in zip(bounds, bounds[1:]))
    assert all((e - b) % 3 == 0 or e == 10 for b, e in bounds)
    assert {t for _, _, t in calls} == {threading.get_ident()}
    s = cpuexec.Session(private_policy(10))
    for total, grain in ((1, 1), (7, 2), (1000, 1), (1000, 33), (5, 100)):
        seen = [0] * total

        def fill(b, e):
            assert 0 <= b < e <= total and (e - b >= grain or e == total)
            for k in range(b, e):
                seen[k] += 1
        with s:
            cpuexec.parallel_for(fill, total, grain)
            cpuexec.parallel_for(fill, total, grain=grain, max_participants=1)
        assert seen == [2] * total, (total, grain)
    nothing = []
    cpuexec.parallel_for(nothing.append, 0)
    cpuexec.parallel_for(nothing.append, -5)
    assert nothing == []


def test_parallel_for_raises_the_callbacks_exception():
    s = cpuexec.Session(private_policy(11))
    started = []

    def fail(b, e):
        started.append(b)
        if b == 0:
            raise ZeroDivisionError("range 0")
    with s, pytest.raises(ZeroDivisionError, match="range 0"):
        cpuexec.parallel_for(fail, 1000, 1)
    assert 0 in started and len(started) < 1000


BAD_CALLS = [
    (lambda: cpuexec.parallel_for(None, 10), TypeError),
    (lambda: cpuexec.parallel_for(print, 10, 0), ValueError),
    (lambda: cpuexec.parallel_for(print, 10, -1), ValueError),
    (lambda: cpuexec.parallel_for(print, 2**70), ValueError),
    (lambda: cpuexec.parallel_for(print, float("nan")), TypeError),
    (lambda: cpuexec.parallel_for(print, "10"), TypeError),
    (lambda: cpuexec.parallel_for(print, 10, 1, -1), ValueError),
    (lambda: cpuexec.parallel_for(print, 10, 1, 2**32), ValueError),
    (lambda: cpuexec.parallel_for(print), TypeError),
    (lambda: cpuexec.Session(5), TypeError),
    (lambda: cpuexec.Session(b"num_threads=1"), TypeError),
    (lambda: cpuexec.Session("num_threads=-1"), ValueError),
    (lambda: cpuexec.Session("num_threads=1\0"), ValueError),
    (lambda: cpuexec.Session({"bogus": 1}), KeyError),
    (lambda: cpuexec.Session(num_threads=2), TypeError),
    (lambda: cpuexec.Session({"num_threads": 2**64}), ValueError),
    (lambda: cpuexec.Session({"num_threads": float("nan")}), TypeError),
]


@pytest.mark.parametrize("call,exc", BAD_CALLS)
def test_bad_arguments_raise(call, exc):
    with pytest.raises(exc):
        call()


def test_grain_message_is_the_librarys():
    with pytest.raises(ValueError) as info:
        cpuexec.parallel_for(print, 10, 0)
    assert info.value.name == "CPUEXEC_EINVAL" and "grain" in info.value.message


def test_four_threads_with_sessions_at_once():
    policies = [private_policy(12), private_policy(13)]
    shared = cpuexec.Session(private_policy(14))
    barrier = threading.Barrier(4)
    results, errors = {}, []

    def worker(i):
        try:
            own = cpuexec.Session(policies[i % 2])
            barrier.wait()
            for rep in range(25):
                for session in (own, shared):
                    with session:
                        assert cpuexec.current_executor_id() == session.executor_id
                        seen = [0] * 500

                        def fill(b, e):
                            for k in range(b, e):
                                seen[k] += 1
                        cpuexec.parallel_for(fill, 500, 7)
                        assert seen == [1] * 500
                    assert cpuexec.current_executor_id() is None
            barrier.wait()
            results[i] = (own.identity, own.executor_id)
        except BaseException as e:  # reported below, with the thread
            errors.append((i, repr(e)))
            barrier.abort()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results[0] == results[2] and results[1] == results[3]
    assert results[0][0] != results[1][0] and results[0][1] != results[1][1]
    assert cpuexec.current_executor_id() is None


def test_a_kernel_that_requires_an_executor_fails_without_one():
    assert cpuexec.current_executor_id() is None
    with pytest.raises(cpuexec.Error) as failure:
        cpuexec.kernel_executor_id("conv2d")
    assert failure.value.name == "CPUEXEC_ESTATE" and 'kernel "conv2d"' in failure.value.message
    # Supported, not required: the process default pool.
    assert cpuexec.kernel_executor_id("conv2d", required=False) > 0
    s = cpuexec.Session(private_policy(7))
    with s:
        assert cpuexec.kernel_executor_id("conv2d") == s.executor_id
        assert cpuexec.kernel_executor_id("conv2d", required=False) == s.executor_id
