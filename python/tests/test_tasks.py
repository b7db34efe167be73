"""cpuexec.TaskGroup: every task once on a session's workers, the first
exception raised by wait(), submitting from tasks, the `with` form, and a
group without an executor (tasks run at submit)."""
import threading

import pytest

import cpuexec


def session():
    return cpuexec.Session({"num_threads": 3, "affinity_policy": "none"})


def test_every_task_runs_once():
    s = session()
    hits = [0] * 2000
    lock = threading.Lock()

    def task(i):
        with lock:
            hits[i] += 1

    with s:
        g = cpuexec.TaskGroup()
    for i in range(2000):
        g.submit(task, i)
    g.wait()
    assert hits == [1] * 2000
    # Reusable after a wait.
    for i in range(100):
        g.submit(task, i)
    g.wait()
    assert hits[:100] == [2] * 100


def test_the_first_exception_reaches_wait():
    with session():
        g = cpuexec.TaskGroup(max_concurrency=1, queue_capacity=8)
    ran = []

    def task(i):
        ran.append(i)
        if i == 30:
            raise KeyError("task 30")

    for i in range(100):
        g.submit(task, i)
    with pytest.raises(KeyError, match="task 30"):
        g.wait()
    assert 30 in ran and len(set(ran)) == len(ran)
    g.submit(task, 1)
    g.wait()


def test_tasks_submit_tasks_and_with_waits():
    done = []
    with session():
        with cpuexec.TaskGroup() as g:
            def child(i):
                done.append(i)

            def parent():
                for i in range(50):
                    g.submit(child, i)

            g.submit(parent)
    assert sorted(done) == list(range(50))


def test_waiting_inside_its_own_task_is_refused():
    seen = []
    with session():
        g = cpuexec.TaskGroup()

    def task():
        try:
            g.wait()
        except cpuexec.Error as e:
            seen.append(e.name)

    g.submit(task)
    g.wait()
    assert seen == ["CPUEXEC_EBUSY"]


def test_without_an_executor_tasks_run_at_submit():
    g = cpuexec.TaskGroup()
    ran = []
    g.submit(ran.append, 1)
    assert ran == [1]
    g.wait()
    with pytest.raises(TypeError):
        g.submit(5)
    with pytest.raises(cpuexec.InvalidArgument):
        cpuexec.TaskGroup(max_concurrency=-1)
