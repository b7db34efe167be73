"""cpuexec.Policy, SpinPolicy, AffinityPolicy: fields, the three forms
(keywords, mapping, text) and enum members agreeing, every validation rule
with the library's message, and the error objects."""
import pickle

import pytest

import cpuexec

DEFAULT_TEXT = ("num_threads=0,spin_policy=adaptive,spin_budget=0,affinity_policy=none,"
                "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set=")


def test_enums_are_the_grammar_names():
    assert [m.value for m in cpuexec.SpinPolicy] == [
        "adaptive", "fixed_iterations", "fixed_duration", "park_immediately"]
    assert [m.value for m in cpuexec.AffinityPolicy] == [
        "none", "physical_cores", "performance_cores", "physical_then_smt", "explicit"]
    assert cpuexec.SpinPolicy("fixed_duration") is cpuexec.SpinPolicy.FIXED_DURATION
    assert cpuexec.AffinityPolicy.PHYSICAL_THEN_SMT.name == "PHYSICAL_THEN_SMT"
    import enum
    assert issubclass(cpuexec.SpinPolicy, enum.Enum) and issubclass(cpuexec.AffinityPolicy, enum.Enum)


def test_defaults_and_field_types():
    p = cpuexec.Policy()
    assert p.num_threads == 0
    assert p.spin_policy is cpuexec.SpinPolicy.ADAPTIVE
    assert p.spin_budget == 0
    assert p.affinity_policy is cpuexec.AffinityPolicy.NONE
    assert p.cpu_set == ()
    assert p.allow_nested_parallelism is False
    assert str(p) == DEFAULT_TEXT
    assert p.to_dict() == {"num_threads": 0, "spin_policy": "adaptive", "spin_budget": 0,
                           "affinity_policy": "none", "cpu_set": (),
                           "allow_nested_parallelism": False, "inherit_fp_environment": False,
                           "participation": "take_over", "node_budget": "default"}
    assert p.inherit_fp_environment is False
    assert p.participation == "take_over"
    assert p.node_budget == "default"


def test_inherit_fp_environment_is_a_field_in_every_form():
    p = cpuexec.Policy(num_threads=2, inherit_fp_environment=True)
    assert p.inherit_fp_environment is True
    assert "inherit_fp_environment=true" in str(p)
    assert "inherit_fp_environment=True" in repr(p)
    assert p == cpuexec.Policy.parse(str(p)) == cpuexec.Policy.from_mapping(p.to_dict())
    assert p != p.replace(inherit_fp_environment=False)
    assert hash(p) == hash(cpuexec.Policy.parse("num_threads=2,inherit_fp_environment=true"))
    with pytest.raises(TypeError, match="inherit_fp_environment: got int; use True or False"):
        cpuexec.Policy(inherit_fp_environment=1)


def test_every_field_is_kept():
    p = cpuexec.Policy(num_threads=3, spin_policy="fixed_iterations", spin_budget=1000,
                       affinity_policy="explicit", cpu_set=[4, 0, 2], allow_nested_parallelism=True)
    assert (p.num_threads, p.spin_policy, p.spin_budget, p.affinity_policy, p.cpu_set,
            p.allow_nested_parallelism) == (3, cpuexec.SpinPolicy.FIXED_ITERATIONS, 1000,
                                            cpuexec.AffinityPolicy.EXPLICIT, (4, 0, 2), True)
    assert str(p) == ("num_threads=3,spin_policy=fixed_iterations,spin_budget=1000,affinity_policy=explicit,"
                      "allow_nested_parallelism=true,inherit_fp_environment=false,participation=take_over,cpu_set=4,0,2")


def test_immutable_and_not_subclassable():
    p = cpuexec.Policy()
    with pytest.raises(AttributeError):
        p.num_threads = 4
    with pytest.raises(TypeError):
        class Sub(cpuexec.Policy):  # noqa: F841
            pass


FORMS = [
    # (mapping, text, the same mapping with enum members)
    ({"num_threads": 4}, "num_threads=4", {"num_threads": 4}),
    ({"num_threads": 0, "spin_policy": "adaptive", "affinity_policy": "physical_cores"},
     "num_threads=0,spin_policy=adaptive,affinity_policy=physical_cores",
     {"num_threads": 0, "spin_policy": cpuexec.SpinPolicy.ADAPTIVE,
      "affinity_policy": cpuexec.AffinityPolicy.PHYSICAL_CORES}),
    ({"spin_policy": "fixed_duration", "spin_budget": 50000}, "spin_policy=fixed_duration,spin_budget=50us",
     {"spin_policy": cpuexec.SpinPolicy.FIXED_DURATION, "spin_budget": "50us"}),
    ({"spin_policy": "fixed_iterations", "spin_budget": 1000}, "spin_budget=1000,spin_policy=fixed_iterations",
     {"spin_policy": cpuexec.SpinPolicy.FIXED_ITERATIONS, "spin_budget": "1000"}),
    ({"spin_policy": "park_immediately", "affinity_policy": "none"},
     "affinity_policy=none,spin_policy=park_immediately",
     {"spin_policy": cpuexec.SpinPolicy.PARK_IMMEDIATELY, "affinity_policy": cpuexec.AffinityPolicy.NONE}),
    ({"num_threads": 3, "affinity_policy": "explicit", "cpu_set": [0, 2, 3]},
     "num_threads=3,affinity_policy=explicit,cpu_set=0,2-3",
     {"num_threads": 3, "affinity_policy": cpuexec.AffinityPolicy.EXPLICIT, "cpu_set": "0,2-3"}),
    ({"affinity_policy": "performance_cores", "allow_nested_parallelism": True},
     "affinity_policy=performance_cores,allow_nested_parallelism=true",
     {"affinity_policy": cpuexec.AffinityPolicy.PERFORMANCE_CORES, "allow_nested_parallelism": True}),
    ({"affinity_policy": "physical_then_smt", "cpu_set": ()}, "affinity_policy=physical_then_smt,cpu_set=",
     {"affinity_policy": cpuexec.AffinityPolicy.PHYSICAL_THEN_SMT, "cpu_set": ""}),
]


@pytest.mark.parametrize("mapping,text,with_enums", FORMS)
def test_mapping_text_keywords_and_enums_agree(mapping, text, with_enums):
    from_text = cpuexec.Policy.parse(text)
    assert cpuexec.Policy.from_mapping(mapping) == from_text
    assert cpuexec.Policy(**mapping) == from_text
    assert cpuexec.Policy.from_mapping(with_enums) == from_text
    assert hash(cpuexec.Policy.from_mapping(with_enums)) == hash(from_text)
    assert cpuexec.Policy.parse(str(from_text)) == from_text
    assert cpuexec.Policy.from_mapping(from_text.to_dict()) == from_text
    assert eval(repr(from_text), {"cpuexec": cpuexec}) == from_text
    assert pickle.loads(pickle.dumps(from_text)) == from_text


def test_equality_and_hash_follow_every_field():
    base = cpuexec.Policy(num_threads=2, affinity_policy="explicit", cpu_set=[0, 1])
    variants = [base.replace(num_threads=3), base.replace(spin_policy="park_immediately"),
                base.replace(spin_policy="fixed_iterations", spin_budget=5), base.replace(cpu_set=[1, 0]),
                base.replace(affinity_policy="none", cpu_set=()), base.replace(allow_nested_parallelism=True)]
    for v in variants:
        assert v != base and not (v == base)
    assert len({base, *variants}) == 1 + len(variants)
    assert {base: 1}[cpuexec.Policy(num_threads=2, affinity_policy="explicit", cpu_set=(0, 1))] == 1
    assert base != str(base) and base != base.to_dict()


def test_replace_validates_again():
    p = cpuexec.Policy(spin_policy="fixed_iterations", spin_budget=10)
    with pytest.raises(ValueError, match=r"spin_budget: 10 with spin_policy=adaptive"):
        p.replace(spin_policy="adaptive")
    assert p.replace(spin_policy="adaptive", spin_budget=0) == cpuexec.Policy()


# (keywords, exception, message as the library writes it)
REJECTED = [
    ({"num_threads": -3}, ValueError,
     "num_threads: -3 is negative; use 0 for the topology default, 1 for serial or a participant count"),
    ({"num_threads": 2**31}, ValueError, "num_threads: 2147483648 is out of range"),
    ({"num_threads": -2**31 - 1}, ValueError, "num_threads: -2147483649 is out of range"),
    ({"num_threads": 10**400}, ValueError, "num_threads: larger than any 64-bit integer"),
    ({"num_threads": -10**400}, ValueError, "num_threads: smaller than any 64-bit integer"),
    ({"num_threads": 1.0}, TypeError, "num_threads: got float; use an int"),
    ({"num_threads": float("nan")}, TypeError, "num_threads: got float; use an int"),
    ({"num_threads": "4"}, TypeError, "num_threads: got str; use an int"),
    ({"num_threads": None}, TypeError, "num_threads: got NoneType; use an int"),
    ({"num_threads": True}, TypeError, "num_threads: True is a bool; use an int"),
    ({"spin_policy": "spinny"}, ValueError,
     "spin_policy: 'spinny' is not a spin policy; use adaptive, fixed_iterations, fixed_duration or "
     "park_immediately"),
    ({"spin_policy": "ADAPTIVE"}, ValueError, "spin_policy: 'ADAPTIVE' is not a spin policy"),
    ({"spin_policy": "adaptive\0"}, ValueError, "spin_policy: 'adaptive\\x00' contains a NUL character"),
    ({"spin_policy": "adaptive,num_threads=3"}, ValueError, "spin_policy: 'adaptive,num_threads=3' holds one of"),
    ({"spin_policy": 0}, TypeError, "spin_policy: got int; use a cpuexec.SpinPolicy member or its name"),
    ({"spin_policy": cpuexec.AffinityPolicy.NONE}, TypeError, "spin_policy: got AffinityPolicy"),
    ({"affinity_policy": "cores"}, ValueError,
     "affinity_policy: 'cores' is not an affinity policy; use none, physical_cores, performance_cores, "
     "physical_then_smt or explicit"),
    ({"affinity_policy": cpuexec.SpinPolicy.ADAPTIVE}, TypeError, "affinity_policy: got SpinPolicy"),
    ({"spin_policy": "fixed_duration"}, ValueError,
     "spin_budget: 0 with spin_policy=fixed_duration; a fixed spin needs a budget above 0 "
     "(a duration such as 50us)"),
    ({"spin_policy": "fixed_iterations"}, ValueError,
     "spin_budget: 0 with spin_policy=fixed_iterations; a fixed spin needs a budget above 0 "
     "(an iteration count such as 1000)"),
    ({"spin_budget": 7}, ValueError,
     "spin_budget: 7 with spin_policy=adaptive; only fixed_iterations and fixed_duration take a budget"),
    ({"spin_policy": "park_immediately", "spin_budget": 1}, ValueError,
     "spin_budget: 1 with spin_policy=park_immediately"),
    ({"spin_policy": "fixed_iterations", "spin_budget": -1}, ValueError, "spin_budget: -1 is negative"),
    ({"spin_policy": "fixed_iterations", "spin_budget": 2**64}, ValueError,
     "spin_budget: larger than any 64-bit integer"),
    ({"spin_policy": "fixed_duration", "spin_budget": "50"}, ValueError,
     "spin_budget: '50' has no unit; spin_policy=fixed_duration takes a duration such as 50us"),
    ({"spin_policy": "fixed_iterations", "spin_budget": "50us"}, ValueError,
     "spin_budget: '50us' is a duration, but spin_policy=fixed_iterations takes a plain iteration count"),
    ({"spin_policy": "fixed_duration", "spin_budget": "5 us"}, ValueError, "spin_budget"),
    ({"spin_policy": "fixed_iterations", "spin_budget": 2.5}, TypeError, "spin_budget: got float"),
    ({"cpu_set": [0]}, ValueError,
     "cpu_set: given with affinity_policy=none; a cpu_set needs affinity_policy=explicit"),
    ({"affinity_policy": "explicit"}, ValueError,
     "affinity_policy: explicit without a cpu_set; list the caller's processor first"),
    ({"affinity_policy": "explicit", "cpu_set": [2, 5, 2]}, ValueError,
     "cpu_set: processor 2 is listed twice; each processor may appear once"),
    ({"affinity_policy": "explicit", "cpu_set": "2,5,2"}, ValueError, "cpu_set"),
    ({"affinity_policy": "explicit", "cpu_set": [1, -4]}, ValueError,
     "cpu_set: entry 1 is -4; processor ids are 0 or above"),
    ({"affinity_policy": "explicit", "cpu_set": [2**31]}, ValueError, "cpu_set entry: 2147483648 is out of range"),
    ({"affinity_policy": "explicit", "cpu_set": list(range(1025))}, ValueError,
     "cpu_set: more than 1024 entries; at most 1024"),
    ({"affinity_policy": "explicit", "cpu_set": "0-7:2"}, ValueError, "cpu_set"),
    ({"affinity_policy": "explicit", "cpu_set": "0,num_threads=4"}, ValueError, "cpu_set: '0,num_threads=4' holds"),
    ({"affinity_policy": "explicit", "cpu_set": {0, 1}}, TypeError, "cpu_set: got set"),
    ({"affinity_policy": "explicit", "cpu_set": b"0,1"}, TypeError, "cpu_set: got bytes"),
    ({"affinity_policy": "explicit", "cpu_set": 3}, TypeError, "cpu_set: got int"),
    ({"affinity_policy": "explicit", "cpu_set": [0, "1"]}, TypeError, "cpu_set entry: got str; use an int"),
    ({"allow_nested_parallelism": 1}, TypeError, "allow_nested_parallelism: got int; use True or False"),
    ({"allow_nested_parallelism": "true"}, TypeError, "allow_nested_parallelism: got str"),
]


@pytest.mark.parametrize("kwargs,exc,message", REJECTED)
def test_every_rule_rejects_with_its_message(kwargs, exc, message):
    for build in (lambda: cpuexec.Policy(**kwargs), lambda: cpuexec.Policy.from_mapping(kwargs),
                  lambda: cpuexec.resolve(kwargs), lambda: cpuexec.Policy().replace(**kwargs)):
        with pytest.raises(exc) as info:
            build()
        assert message in str(info.value)
        if exc is ValueError:
            err = info.value
            assert isinstance(err, cpuexec.InvalidArgument) and isinstance(err, cpuexec.Error)
            assert isinstance(err, RuntimeError)
            assert (err.code, err.name, err.message) == (-1, "CPUEXEC_EINVAL", str(err))


def test_library_rules_give_the_same_message_as_text():
    # The same rule reached through text and through fields names it the same way.
    pairs = [("spin_policy=fixed_duration", {"spin_policy": "fixed_duration"}),
             ("affinity_policy=explicit", {"affinity_policy": "explicit"}),
             ("spin_policy=park_immediately,spin_budget=0", {"spin_policy": "park_immediately", "spin_budget": 0}),
             ("spin_policy=bogus", {"spin_policy": "bogus"})]
    for text, mapping in pairs:
        try:
            cpuexec.Policy.parse(text)
            text_error = None
        except ValueError as e:
            text_error = str(e)
        try:
            cpuexec.Policy.from_mapping(mapping)
            mapping_error = None
        except ValueError as e:
            mapping_error = str(e)
        assert text_error == mapping_error, text


def test_unknown_keys_name_the_key_and_the_allowed_ones():
    allowed = ("num_threads, spin_policy, spin_budget, affinity_policy, cpu_set, allow_nested_parallelism, "
               "inherit_fp_environment, participation, node_budget")
    with pytest.raises(KeyError) as info:
        cpuexec.Policy.from_mapping({"num_threads": 2, "threads": 2})
    assert info.value.args[0] == f"policy: unknown key 'threads'; keys are {allowed}"
    with pytest.raises(KeyError, match="unknown key 3"):
        cpuexec.Policy.from_mapping({3: 1})
    with pytest.raises(KeyError, match="unknown key 'spin'"):
        cpuexec.resolve({"spin": "adaptive"})
    with pytest.raises(TypeError, match=f"policy: unknown key 'threads'; keys are {allowed}"):
        cpuexec.Policy(threads=2)
    with pytest.raises(TypeError, match="keyword arguments only"):
        cpuexec.Policy(4)


def test_parse_rejects_bad_text_with_the_library_message():
    with pytest.raises(ValueError, match="policy: unknown key 'threads'"):
        cpuexec.Policy.parse("threads=4")
    with pytest.raises(ValueError, match="num_threads"):
        cpuexec.Policy.parse("num_threads=04")
    with pytest.raises(ValueError, match="NUL character at index 13"):
        cpuexec.Policy.parse("num_threads=4\0,spin_policy=adaptive")
    with pytest.raises(TypeError, match="policy text: got bytes"):
        cpuexec.Policy.parse(b"num_threads=4")
    with pytest.raises(TypeError):
        cpuexec.Policy.parse(None)
    assert cpuexec.Policy.parse("") == cpuexec.Policy()


def test_mapping_like_objects_and_non_mappings():
    import collections
    import types
    assert cpuexec.Policy.from_mapping(types.MappingProxyType({"num_threads": 2})).num_threads == 2
    assert cpuexec.Policy.from_mapping(collections.OrderedDict(num_threads=2)).num_threads == 2
    for bad in ([("num_threads", 2)], "num_threads=2", 5, None):
        with pytest.raises(TypeError):
            cpuexec.Policy.from_mapping(bad)
    with pytest.raises(TypeError, match="policy: got list"):
        cpuexec.resolve([("num_threads", 2)])


def test_numpy_style_integers_are_accepted():
    class Index:
        def __index__(self):
            return 3
    assert cpuexec.Policy(num_threads=Index()).num_threads == 3


def test_participation_is_a_field_in_every_form():
    p = cpuexec.Policy(num_threads=2, participation="every_participant")
    assert p.participation == "every_participant"
    assert "participation=every_participant" in str(p)
    assert "participation='every_participant'" in repr(p)
    assert p == cpuexec.Policy.parse(str(p))
    assert p != p.replace(participation="take_over")
    assert cpuexec.Policy.from_mapping({"participation": "every_participant"}).participation == "every_participant"
    with pytest.raises(cpuexec.InvalidArgument, match="participation: 'every' is not a participation rule"):
        cpuexec.Policy(participation="every")
    with pytest.raises(TypeError, match="participation: got int"):
        cpuexec.Policy(participation=1)


def test_node_budget_is_a_field_in_every_form():
    p = cpuexec.Policy(num_threads=2, node_budget="off")
    assert p.node_budget == "off"
    assert "node_budget=off" in str(p)
    assert "node_budget='off'" in repr(p)
    assert p == cpuexec.Policy.parse(str(p)) == cpuexec.Policy.from_mapping(p.to_dict())
    assert eval(repr(p), {"cpuexec": cpuexec}) == p
    assert p != p.replace(node_budget="default")
    # The default is not written: texts from before the key read the same.
    assert "node_budget" not in str(p.replace(node_budget="default"))
    assert cpuexec.Policy.from_mapping({"node_budget": "host"}).node_budget == "host"
    with pytest.raises(cpuexec.InvalidArgument, match="node_budget: 'none' is not a node budget choice"):
        cpuexec.Policy(node_budget="none")
    with pytest.raises(TypeError, match="node_budget: got bool"):
        cpuexec.Policy(node_budget=False)
