"""cpuexec.resolve, Resolution and Topology: every field against the JSON,
stored topologies matching cpuexec-info byte for byte (JSON and text), the
accepted forms, and errors from bad topologies or arguments."""
import json
import os

import pytest

import cpuexec
from conftest import QUOTA_FIXTURE, cpuexec_info, run_cpuexec_info, run_python

POLICIES = [
    "",
    "num_threads=1",
    "num_threads=2",
    "num_threads=4,affinity_policy=physical_cores",
    "num_threads=4,affinity_policy=performance_cores",
    "num_threads=6,affinity_policy=physical_then_smt,spin_policy=park_immediately",
    "num_threads=3,affinity_policy=none,spin_policy=fixed_iterations,spin_budget=500",
    "num_threads=2,affinity_policy=explicit,cpu_set=1,0,spin_policy=fixed_duration,spin_budget=20us",
    "num_threads=0,allow_nested_parallelism=true",
]


def info_parts(topology_arg, policy):
    """(topology JSON, resolution JSON) as cpuexec-info --json writes them."""
    out = cpuexec_info("--json", "--topology", topology_arg, "--policy", policy)
    head = '{"version":"%s","topology":' % cpuexec.version
    assert out.startswith(head) and out.endswith("}\n")
    topo_end = out.index(',"openmp_runtimes":')
    res_start = out.index(',"resolution":') + len(',"resolution":')
    return out[len(head):topo_end], out[res_start:-2]


def resolve_or_error(policy, topology):
    try:
        return cpuexec.resolve(policy, topology), None
    except cpuexec.Error as e:
        return None, e


def test_stored_topologies_match_cpuexec_info_json_byte_for_byte(topologies):
    compared = 0
    for path in topologies:
        topology = cpuexec.Topology.from_xml(path)
        for policy in POLICIES:
            resolution, error = resolve_or_error(policy, topology)
            if error is not None:
                # The tool refuses the same request with the same message.
                done = run_cpuexec_info("--json", "--topology", path, "--policy", policy)
                assert done.returncode != 0 and error.message in done.stderr.decode(), (path, policy)
                continue
            topo_json, res_json = info_parts(path, policy)
            assert topology.to_json() == topo_json, path
            assert resolution.to_json() == res_json, (path, policy)
            assert resolution.to_dict() == json.loads(res_json)
            compared += 1
    assert compared >= len(topologies) * 6


def test_stored_topologies_match_cpuexec_info_text(topologies):
    for path in topologies:
        topology = cpuexec.Topology.from_xml(path)
        for policy in ("num_threads=2", "num_threads=4,affinity_policy=physical_then_smt"):
            resolution, error = resolve_or_error(policy, topology)
            if error is not None:
                continue
            out = cpuexec_info("--topology", path, "--policy", policy)
            assert "== Topology ==\n" + topology.describe() + "\n\n== OpenMP runtimes ==" in out
            assert out.endswith("== Resolution of --policy ==\n" + resolution.describe() + "\n")


def test_cgroup_quota_fixture_matches_cpuexec_info():
    topology = cpuexec.Topology.from_xml(os.path.join(QUOTA_FIXTURE, "topology.xml"),
                                         cgroup_root=os.path.join(QUOTA_FIXTURE, "cgroup"),
                                         proc_self_cgroup=os.path.join(QUOTA_FIXTURE, "proc-self-cgroup"))
    assert topology.cpu_quota == 1.5
    topo_json, res_json = info_parts(QUOTA_FIXTURE, "num_threads=0")
    assert topology.to_json() == topo_json
    assert cpuexec.resolve({"num_threads": 0}, topology).to_json() == res_json


def assert_spin_stages_agree(spin):
    """The JSON's wait (resolve_describe.c): its stages in order, each with
    what bounds it, and only the adaptive policy's long and gap spins and
    cadence."""
    stages = spin["stages"]
    order = ("spin", "long_spin", "gap_spin", "cadence", "park")
    assert stages[-1] == "park" and stages == [s for s in order if s in stages]
    assert spin["parks_at_once"] == (stages == ["park"])
    assert ("long_spin" in stages) == (spin["long_spin_ns"] > 0)
    assert ("gap_spin" in stages) == (spin["gap_spin_max_ns"] > 0)
    assert (spin["long_spin_ns"] > 0 or spin["gap_spin_max_ns"] > 0) == (spin["long_spin_skipped_when"] is not None)
    assert ("cadence" in stages) == spin["follows_cadence"]
    if spin["policy"] != "adaptive":
        assert spin["long_spin_ns"] == spin["gap_spin_max_ns"] == 0 and not spin["follows_cadence"]
        assert spin["parks_at_once"] == (spin["policy"] == "park_immediately")
    assert spin["yields_when_sharing_processor"] == (not spin["parks_at_once"] and spin["policy"] != "fixed_iterations")


def test_every_field_agrees_with_the_json(topologies):
    for path in topologies:
        topology = cpuexec.Topology.from_xml(path)
        for policy in POLICIES:
            r, error = resolve_or_error(policy, topology)
            if error is not None:
                continue
            d = r.to_dict()
            assert r.request == cpuexec.Policy.parse(policy)
            # The JSON names inherit_fp_environment, participation and node_budget only when not the default.
            assert r.request.to_dict() == {"inherit_fp_environment": False, "participation": "take_over",
                                           "node_budget": "default",
                                           **d["request"],
                                           "cpu_set": tuple(d["request"]["cpu_set"])}
            assert r.effective_threads == d["effective_threads"]
            assert r.caller_processor == d["caller_processor"]
            assert r.worker_processors == tuple(d["worker_processors"])
            assert r.uses_smt is d["uses_smt"] and r.uses_efficiency_cores is d["uses_efficiency_cores"]
            assert r.allows_nesting is d["allow_nested_parallelism"]
            assert r.spin.policy is cpuexec.SpinPolicy(d["spin"]["policy"])
            assert (r.spin.spin_ns, r.spin.spin_iterations, r.spin.park_when_oversubscribed,
                    r.spin.cadence_burn_permille) == (
                d["spin"]["spin_ns"], d["spin"]["spin_iterations"], d["spin"]["park_when_oversubscribed"],
                d["spin"]["cadence_burn_permille"])
            assert_spin_stages_agree(d["spin"])
            assert r.diagnostics == tuple(d["diagnostics"])
            assert r.identity == d["sharing_key"]
            assert all(isinstance(x, str) for x in r.diagnostics)


def test_resolution_values_on_known_machines():
    hybrid = cpuexec.Topology.from_xml(os.path.join(os.path.dirname(QUOTA_FIXTURE), "hybrid-8p-smt2-16e.xml"))
    assert (hybrid.processor_count, hybrid.core_count, hybrid.package_count, hybrid.kind_count,
            hybrid.smt_width, hybrid.performance_core_count, hybrid.cpu_quota) == (32, 24, 1, 2, 2, 8, None)
    assert hybrid.processors == tuple(range(32))
    r = cpuexec.resolve({"num_threads": 4, "affinity_policy": "performance_cores"}, hybrid)
    assert (r.effective_threads, r.caller_processor, r.worker_processors) == (4, None, (2, 4, 6))
    assert not r.uses_smt and not r.uses_efficiency_cores
    r = cpuexec.resolve({"num_threads": 12, "affinity_policy": "performance_cores"}, hybrid)
    assert r.uses_efficiency_cores and not r.uses_smt
    r = cpuexec.resolve("num_threads=10,affinity_policy=physical_then_smt",
                        cpuexec.Topology.from_xml(os.path.join(os.path.dirname(QUOTA_FIXTURE), "8cores-smt2.xml")))
    assert r.uses_smt
    r = cpuexec.resolve("num_threads=2,affinity_policy=explicit,cpu_set=3,1", hybrid)
    assert (r.caller_processor, r.worker_processors) == (3, (1,))
    assert cpuexec.resolve({"num_threads": 1, "affinity_policy": "physical_cores"},
                           hybrid).diagnostics[-1].startswith("serial")


def test_forms_resolve_alike_and_none_is_the_process_default():
    topo = cpuexec.Topology.from_synthetic("core:4 pu:2")
    forms = [cpuexec.Policy(num_threads=3, affinity_policy="none"), {"num_threads": 3, "affinity_policy": "none"},
             "num_threads=3,affinity_policy=none"]
    jsons = {cpuexec.resolve(f, topo).to_json() for f in forms}
    assert len(jsons) == 1
    assert cpuexec.resolve(policy_or_mapping=forms[0], topology=topo).to_json() in jsons
    out = run_python("import cpuexec; print(cpuexec.resolve().effective_threads, cpuexec.resolve(None).request)",
                     env={"CPUEXEC_POLICY": "num_threads=1,affinity_policy=none"})
    assert out.split()[0] == "1" and "affinity_policy=none" in out


def test_this_process_matches_cpuexec_info():
    out = cpuexec_info("--json", "--policy", "num_threads=0")
    assert out.endswith(',"resolution":' + cpuexec.resolve({"num_threads": 0}).to_json() + "}\n")
    here = cpuexec.Topology.this_process()
    assert here.processor_count == len(os.sched_getaffinity(0))
    assert ',"topology":' + here.to_json() + ',' in out
    assert cpuexec.Topology.this_process(quota=1.0).cpu_quota == 1.0


def test_topology_options():
    path = os.path.join(os.path.dirname(QUOTA_FIXTURE), "8cores-smt2.xml")
    restricted = cpuexec.Topology.from_xml(path, allowed="0-3")
    assert restricted.processors == (0, 1, 2, 3) and restricted.core_count == 2
    assert cpuexec.Topology.from_xml(path, allowed=[0, 1, 2, 3]).to_json() == restricted.to_json()
    assert cpuexec.Topology.from_xml(path, allowed=range(4)).to_json() == restricted.to_json()
    assert cpuexec.Topology.from_xml(os.fsencode(path)).processor_count == 16
    import pathlib
    assert cpuexec.Topology.from_xml(pathlib.Path(path), quota=2).cpu_quota == 2.0
    pinned = cpuexec.Topology.from_xml(path, caller="5")
    assert cpuexec.resolve({"num_threads": 2}, pinned).caller_processor == 5


BAD_TOPOLOGY_CALLS = [
    (lambda: cpuexec.Topology.from_xml("/nonexistent/topology.xml"), cpuexec.Error, "CPUEXEC_ETOPOLOGY"),
    (lambda: cpuexec.Topology.from_xml("a\0b.xml"), ValueError, None),
    (lambda: cpuexec.Topology.from_xml(None), TypeError, None),
    (lambda: cpuexec.Topology.from_xml(3), TypeError, None),
    (lambda: cpuexec.Topology.from_synthetic("bogus:3"), cpuexec.Error, None),
    (lambda: cpuexec.Topology.from_synthetic("core:2\0"), ValueError, None),
    (lambda: cpuexec.Topology.from_synthetic(b"core:2"), TypeError, None),
    (lambda: cpuexec.Topology.this_process(quota=float("nan")), ValueError, "CPUEXEC_EINVAL"),
    (lambda: cpuexec.Topology.this_process(quota=-1), ValueError, "CPUEXEC_EINVAL"),
    (lambda: cpuexec.Topology.this_process(quota=float("inf")), ValueError, "CPUEXEC_EINVAL"),
    (lambda: cpuexec.Topology.this_process(quota=10**400), ValueError, "CPUEXEC_EINVAL"),
    (lambda: cpuexec.Topology.this_process(quota="1"), TypeError, None),
    (lambda: cpuexec.Topology.this_process(quota=True), TypeError, None),
    (lambda: cpuexec.Topology.this_process(allowed="0-x"), cpuexec.Error, None),
    (lambda: cpuexec.Topology.this_process(allowed=[-1]), ValueError, None),
    (lambda: cpuexec.Topology.this_process(allowed=[2**40]), ValueError, None),
    (lambda: cpuexec.Topology.this_process(allowed=5), TypeError, None),
    (lambda: cpuexec.Topology.this_process(allowed="0\0"), ValueError, None),
    (lambda: cpuexec.Topology.this_process(nonsense=1), TypeError, None),
    (lambda: cpuexec.Topology(), TypeError, None),
    (lambda: cpuexec.Resolution(), TypeError, None),
    (lambda: cpuexec.resolve({}, topology="8cores"), TypeError, None),
    (lambda: cpuexec.resolve({}, topology=3), TypeError, None),
    (lambda: cpuexec.resolve(3), TypeError, None),
    (lambda: cpuexec.resolve({}, None, None), TypeError, None),
]


@pytest.mark.parametrize("call,exc,name", BAD_TOPOLOGY_CALLS)
def test_bad_topologies_and_arguments_raise(call, exc, name):
    with pytest.raises(exc) as info:
        call()
    if name is not None:
        assert info.value.name == name and info.value.message


def test_resolution_errors_name_the_field():
    two = cpuexec.Topology.from_synthetic("core:2 pu:1")
    with pytest.raises(cpuexec.Error) as info:
        cpuexec.resolve("num_threads=2,affinity_policy=explicit,cpu_set=0,7", two)
    assert "cpu_set" in info.value.message and info.value.name.startswith("CPUEXEC_E")


def test_resolution_outlives_its_topology():
    topo = cpuexec.Topology.from_synthetic("core:4 pu:1")
    r = cpuexec.resolve({"num_threads": 4, "affinity_policy": "physical_cores"}, topo)
    del topo
    import gc
    gc.collect()
    assert r.worker_processors == (1, 2, 3) and "threads=4" in r.identity
    assert repr(r).startswith("<cpuexec.Resolution effective_threads=4 caller_processor=None identity='")


def test_readme_command_output():
    out = run_python("import cpuexec; print(cpuexec.resolve({'num_threads': 0}).describe())")
    assert out.startswith("request:               num_threads=0,") and "sharing key:" in out
