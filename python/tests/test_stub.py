"""python/cpuexec.pyi names what the module has: the same public names at
module level and in every class, the enums' values, the policy's fields."""
import ast
import os

import pytest

import cpuexec
from conftest import SRCDIR

STUB = os.path.join(SRCDIR, "python", "cpuexec.pyi")
# Protocol methods the runtime defines that a type checker must see.
PROTOCOL = ("__enter__", "__exit__", "__iter__", "__len__", "__call__", "__getitem__")


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read(), STUB)


def names_in(body):
    """{name: node} for the definitions of a module or class body (no imports)."""
    found = {}
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node
    return found


def public(names):
    return {n for n in names if not n.startswith("_")}


def sample_instances():
    """An instance of each class whose instances carry attributes the class does not."""
    try:
        cpuexec.Policy(num_threads=-3)
    except cpuexec.InvalidArgument as e:
        invalid = e
    else:
        pytest.fail("Policy(num_threads=-3) was accepted")
    return {"Error": invalid, "InvalidArgument": invalid}


STUB_NAMES = names_in(stub_tree().body)
CLASSES = sorted(n for n, node in STUB_NAMES.items() if isinstance(node, ast.ClassDef) and not n.startswith("_"))


def test_module_names():
    stub = public(STUB_NAMES) | ({"__version__"} & set(STUB_NAMES))
    module = public(dir(cpuexec)) | {"__version__"}
    assert sorted(module - stub) == [], "in the module, missing from python/cpuexec.pyi"
    assert sorted(stub - module) == [], "in python/cpuexec.pyi, not in the module"


@pytest.mark.parametrize("name", CLASSES)
def test_class_names(name):
    cls = getattr(cpuexec, name)
    assert isinstance(cls, type), f"cpuexec.{name} is a {type(cls).__name__} in the module, a class in the stub"
    stub = names_in(STUB_NAMES[name].body)
    runtime = vars(cls)
    missing = public(runtime) - set(stub)
    missing |= {p for p in PROTOCOL if p in runtime and p not in stub}
    assert sorted(missing) == [], f"cpuexec.{name} has these; python/cpuexec.pyi does not"
    instance = sample_instances().get(name)
    extra = [n for n in public(stub) if n not in runtime and not (instance is not None and hasattr(instance, n))]
    extra += [n for n in stub if n.startswith("__") and n not in ("__init__", "__eq__", "__hash__") and not hasattr(cls, n)]
    assert sorted(extra) == [], f"python/cpuexec.pyi gives cpuexec.{name} these; the module does not"


@pytest.mark.parametrize("name", ["SpinPolicy", "AffinityPolicy"])
def test_enum_values(name):
    stub = {n: ast.literal_eval(node.value) for n, node in names_in(STUB_NAMES[name].body).items()
            if isinstance(node, ast.Assign)}
    assert stub == {m.name: m.value for m in getattr(cpuexec, name)}


@pytest.mark.parametrize("method", ["__init__", "replace"])
def test_policy_fields(method):
    node = names_in(STUB_NAMES["Policy"].body)[method]
    keywords = [a.arg for a in node.args.kwonlyargs]
    assert keywords == list(cpuexec.Policy().to_dict()), f"Policy.{method}'s keywords in the stub"
