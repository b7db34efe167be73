"""Type hints for the cpuexec extension module (python/*.c); doc/python.md describes every name.

Installed next to the module (make install, pip install ./python) so that editors and type
checkers complete it. python/tests/test_stub.py checks that it names what the module has.
"""
import enum
from types import TracebackType
from typing import Any, Callable, ClassVar, Literal, Mapping, Sequence, Tuple, Type, Union, final

version: str
__version__: str
version_info: Tuple[int, int, int]

class Error(RuntimeError):
    """A libcpuexec call failed."""
    code: int
    """the negative CPUEXEC_E* value"""
    name: str
    """"CPUEXEC_ETOPOLOGY", ..."""
    message: str
    """the library's message: what was wrong, the value, what is allowed"""

class InvalidArgument(Error, ValueError):
    """An argument libcpuexec rejects (CPUEXEC_EINVAL)."""

class SpinPolicy(enum.Enum):
    ADAPTIVE = "adaptive"
    FIXED_ITERATIONS = "fixed_iterations"
    FIXED_DURATION = "fixed_duration"
    PARK_IMMEDIATELY = "park_immediately"

class AffinityPolicy(enum.Enum):
    NONE = "none"
    PHYSICAL_CORES = "physical_cores"
    PERFORMANCE_CORES = "performance_cores"
    PHYSICAL_THEN_SMT = "physical_then_smt"
    EXPLICIT = "explicit"

# A cpulist: "0-3,8" or processor ids.
_CpuList = Union[str, Sequence[int]]

@final
class Policy:
    """A CPU execution request: immutable, hashable, validated when built; str() is the text grammar."""
    def __init__(
        self,
        *,
        num_threads: int = 0,
        spin_policy: Union[SpinPolicy, str] = "adaptive",
        spin_budget: Union[int, str] = 0,
        affinity_policy: Union[AffinityPolicy, str] = "none",
        cpu_set: _CpuList = (),
        allow_nested_parallelism: bool = False,
        inherit_fp_environment: bool = False,
        participation: Literal["take_over", "every_participant"] = "take_over",
    ) -> None: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def spin_policy(self) -> SpinPolicy: ...
    @property
    def spin_budget(self) -> int: ...
    @property
    def affinity_policy(self) -> AffinityPolicy: ...
    @property
    def cpu_set(self) -> Tuple[int, ...]: ...
    @property
    def allow_nested_parallelism(self) -> bool: ...
    @property
    def inherit_fp_environment(self) -> bool: ...
    @property
    def participation(self) -> Literal["take_over", "every_participant"]: ...
    @classmethod
    def parse(cls, text: str, /) -> Policy: ...
    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], /) -> Policy: ...
    def replace(
        self,
        *,
        num_threads: int = ...,
        spin_policy: Union[SpinPolicy, str] = ...,
        spin_budget: Union[int, str] = ...,
        affinity_policy: Union[AffinityPolicy, str] = ...,
        cpu_set: _CpuList = ...,
        allow_nested_parallelism: bool = ...,
        inherit_fp_environment: bool = ...,
        participation: Literal["take_over", "every_participant"] = ...,
    ) -> Policy: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

# What resolve() and Session() accept: a Policy, a mapping of its fields, policy text, or
# None (the process default, CPUEXEC_POLICY).
_PolicyLike = Union[Policy, Mapping[str, Any], str, None]

@final
class Topology:
    """A process-visible CPU topology (immutable)."""
    @classmethod
    def this_process(
        cls,
        *,
        allowed: _CpuList | None = None,
        binding: _CpuList | None = None,
        quota: float | None = None,
        cgroup_root: str | None = None,
        proc_self_cgroup: str | None = None,
    ) -> Topology: ...
    @classmethod
    def from_xml(
        cls,
        path: str,
        /,
        *,
        allowed: _CpuList | None = None,
        binding: _CpuList | None = None,
        caller: _CpuList | None = None,
        quota: float | None = None,
        cgroup_root: str | None = None,
        proc_self_cgroup: str | None = None,
    ) -> Topology: ...
    @classmethod
    def from_synthetic(
        cls,
        description: str,
        /,
        *,
        allowed: _CpuList | None = None,
        binding: _CpuList | None = None,
        caller: _CpuList | None = None,
        quota: float | None = None,
        cgroup_root: str | None = None,
        proc_self_cgroup: str | None = None,
    ) -> Topology: ...
    @property
    def processor_count(self) -> int: ...
    @property
    def core_count(self) -> int: ...
    @property
    def package_count(self) -> int: ...
    @property
    def kind_count(self) -> int: ...
    @property
    def smt_width(self) -> int: ...
    @property
    def performance_core_count(self) -> int: ...
    @property
    def cpu_quota(self) -> float | None: ...
    @property
    def processors(self) -> Tuple[int, ...]: ...
    def describe(self) -> str: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class Spin(Tuple[SpinPolicy, int, int, bool]):
    """What a waiting thread will do (a struct sequence)."""
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int]
    @property
    def policy(self) -> SpinPolicy: ...
    @property
    def spin_ns(self) -> int: ...
    @property
    def spin_iterations(self) -> int: ...
    @property
    def park_when_oversubscribed(self) -> bool: ...

@final
class Resolution:
    """An immutable resolution of a policy on a topology."""
    @property
    def request(self) -> Policy: ...
    @property
    def effective_threads(self) -> int: ...
    @property
    def caller_processor(self) -> int | None: ...
    @property
    def worker_processors(self) -> Tuple[int, ...]: ...
    @property
    def uses_smt(self) -> bool: ...
    @property
    def uses_efficiency_cores(self) -> bool: ...
    @property
    def allows_nesting(self) -> bool: ...
    @property
    def spin(self) -> Spin: ...
    @property
    def diagnostics(self) -> Tuple[str, ...]: ...
    @property
    def identity(self) -> str: ...
    def describe(self) -> str: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class Counters(Tuple[int, int, int, int, int, int, int, int]):
    """A snapshot of an executor's optional counters (a struct sequence)."""
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int]
    @property
    def dispatches(self) -> int: ...
    @property
    def nested_inline(self) -> int: ...
    @property
    def limited_inline(self) -> int: ...
    @property
    def spins_found_work(self) -> int: ...
    @property
    def parks(self) -> int: ...
    @property
    def wakeups(self) -> int: ...
    @property
    def caller_waits(self) -> int: ...
    @property
    def worker_active_ns(self) -> int: ...
    # Named only (not in the 8-tuple, which stays as it was):
    @property
    def takeovers(self) -> int: ...
    @property
    def participants_run(self) -> int: ...
    @property
    def occupied_inline(self) -> int: ...
    @property
    def stood_aside(self) -> int: ...

@final
class Session:
    """Resolves a policy and leases a shared executor; `with session:` installs it on this thread."""
    def __init__(self, policy_or_mapping: _PolicyLike = None) -> None: ...
    def __enter__(self) -> Session: ...
    def __exit__(
        self,
        exc_type: Type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]: ...
    @property
    def resolution(self) -> Resolution: ...
    @property
    def identity(self) -> str: ...
    @property
    def executor_id(self) -> int: ...
    @property
    def effective_threads(self) -> int: ...
    def enable_counters(self) -> None: ...
    def counters(self) -> Counters: ...

def resolve(policy_or_mapping: _PolicyLike = None, topology: Topology | None = None) -> Resolution: ...
def parallel_for(fn: Callable[[int, int], object], total: int, grain: int = 1, max_participants: int = 0) -> int: ...
@final
class TaskGroup:
    """Independent tasks on the workers of the executor installed on this thread."""
    def __init__(self, max_concurrency: int = 0, queue_capacity: int = 0) -> None: ...
    def submit(self, fn: Callable[..., Any], *args: Any) -> None: ...
    def wait(self) -> None: ...
    def __enter__(self) -> "TaskGroup": ...
    def __exit__(self, exc_type: Type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool: ...

def current_executor_id() -> int | None: ...
def kernel_executor_id(kernel: str, required: bool = True) -> int: ...
def openmp_status() -> dict[str, Any]: ...
def openmp_counters() -> dict[str, int]: ...
def openmp_report() -> list[dict[str, Any]]: ...
def openmp_reset() -> None: ...
def runtimes() -> list[dict[str, Any]]: ...
