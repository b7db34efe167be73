"""Random mappings, texts and arguments: every call returns or raises one of
the documented exceptions; nothing else escapes and the interpreter lives.
Seeded, so a failure names the case that reproduces it."""
import math
import random

import pytest

import cpuexec
from conftest import TOPOLOGIES

KEYS = ["num_threads", "spin_policy", "spin_budget", "affinity_policy", "cpu_set", "allow_nested_parallelism",
        "inherit_fp_environment", "participation"]
ALLOWED = (KeyError, TypeError, ValueError, cpuexec.Error)


class Weird:
    def __index__(self):
        raise RuntimeError("index exploded")


class BadIter:
    def __iter__(self):
        raise OSError("no iteration")


def wild_value(rng):
    choices = [
        lambda: None, lambda: True, lambda: False,
        lambda: rng.randint(-5, 40), lambda: rng.choice([0, 1, 2, 3, 4, 8, 16, 1024]),
        lambda: rng.choice([2**31 - 1, 2**31, -2**31, 2**63, 2**64, -2**64, 10**400, -10**400]),
        lambda: rng.choice([math.nan, math.inf, -math.inf, 1.5, 0.0, -0.0]),
        lambda: rng.choice([m.value for m in cpuexec.SpinPolicy] + [m.value for m in cpuexec.AffinityPolicy]),
        lambda: rng.choice(list(cpuexec.SpinPolicy) + list(cpuexec.AffinityPolicy)),
        lambda: rng.choice(["", "\0", "50us", "1000", "0-3", "0,2-3", "3-1", "0,0", "x" * 20000, "\ud800",
                            "é", "adaptive\0", "1,2,=", "-1", "0-4294967296", "0-1023", "18446744073709551616ns"]),
        lambda: [rng.randint(-3, 70) for _ in range(rng.randint(0, 6))],
        lambda: tuple(range(rng.randint(0, 1100))),
        lambda: {1, 2}, lambda: {"a": 1}, lambda: b"0,1", lambda: object(), lambda: Weird(), lambda: BadIter(),
        lambda: [Weird()], lambda: [None], lambda: [2**40],
    ]
    return rng.choice(choices)()


def random_mapping(rng):
    keys = rng.sample(KEYS, rng.randint(0, len(KEYS)))
    if rng.random() < 0.1:
        keys.append(rng.choice(["threads", "", "NUM_THREADS", 3, None, "num_threads\0"]))
    return {k: wild_value(rng) for k in keys}


def check_policy(p):
    # A policy that was accepted round-trips through its text and mapping.
    assert cpuexec.Policy.parse(str(p)) == p
    assert cpuexec.Policy.from_mapping(p.to_dict()) == p
    assert hash(p) == hash(cpuexec.Policy.parse(str(p)))


def test_random_mappings_never_crash():
    rng = random.Random(15)
    topologies = [cpuexec.Topology.from_xml(path) for path in TOPOLOGIES]
    accepted = rejected = 0
    for case in range(3000):
        mapping = random_mapping(rng)
        try:
            p = cpuexec.Policy.from_mapping(mapping)
        except ALLOWED:
            rejected += 1
            continue
        except RuntimeError as e:  # Weird.__index__'s own error passes through unchanged
            assert str(e) == "index exploded", (case, mapping)
            continue
        except OSError as e:  # BadIter's
            assert str(e) == "no iteration", (case, mapping)
            continue
        accepted += 1
        check_policy(p)
        try:
            r = cpuexec.resolve(p, rng.choice(topologies))
            assert r.effective_threads >= 1 and r.to_dict()["sharing_key"] == r.identity
        except ALLOWED:
            pass
    assert accepted > 100 and rejected > 1000, (accepted, rejected)


def test_random_texts_never_crash():
    rng = random.Random(16)
    alphabet = "num_threads=spin_policy,affinity_cpu_set0123456789-usmn\0 é"
    parsed = 0
    for case in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        if rng.random() < 0.3:
            text = str(cpuexec.Policy(num_threads=rng.randint(0, 8))) + text[:3]
        try:
            check_policy(cpuexec.Policy.parse(text))
            parsed += 1
        except ValueError:
            pass
    assert parsed > 0


def test_random_arguments_to_every_entry_point_never_crash():
    rng = random.Random(17)
    calls = [
        lambda v: cpuexec.resolve(v), lambda v: cpuexec.resolve({}, v), lambda v: cpuexec.Policy.parse(v),
        lambda v: cpuexec.Topology.from_xml(v), lambda v: cpuexec.Topology.from_synthetic(v),
        lambda v: cpuexec.Topology.this_process(allowed=v), lambda v: cpuexec.Topology.this_process(quota=v),
        lambda v: cpuexec.parallel_for(lambda b, e: None, v), lambda v: cpuexec.parallel_for(lambda b, e: None, 4, v),
        lambda v: cpuexec.parallel_for(v, 3), lambda v: cpuexec.Policy().replace(num_threads=v),
    ]
    for case in range(2000):
        value = wild_value(rng)
        call = rng.choice(calls)
        try:
            call(value)
        except ALLOWED:
            pass
        except RuntimeError as e:
            assert str(e) == "index exploded", case
        except OSError as e:
            assert str(e) == "no iteration", case
