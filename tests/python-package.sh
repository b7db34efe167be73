#!/bin/sh
# pip install ./python: `make install DESTDIR=...` into a tree under the build
# directory, then the module built from python/pyproject.toml against that
# library (pkg-config, with PKG_CONFIG_SYSROOT_DIR for the staged tree) and
# installed with pip, offline, into a virtual environment that sees the
# system's setuptools (--system-site-packages, --no-build-isolation,
# --no-index). Then `import cpuexec` in the environment without
# LD_LIBRARY_PATH or PYTHONPATH: the module is the pip-installed one, the
# library it loads the installed one (its run path), its stub beside it.
# Exit 77 (skipped, with the reason) when the interpreter lacks venv, pip,
# setuptools or wheel.
# CI runs the suite several times (.ci/run names the builds); a
# check of the sources and the packaging, the same in every build, runs in
# the first only: the later builds set CPUEXEC_SOURCE_CHECKS_DONE.
if [ -n "${CPUEXEC_SOURCE_CHECKS_DONE:-}" ]; then
  echo "SKIP: $(basename "$0") checks what every build shares; it ran in this CI run's first build (CPUEXEC_SOURCE_CHECKS_DONE)"
  exit 77
fi
set -eu
python=${PYTHON:-python3}
for m in venv pip setuptools wheel; do
  if ! "$python" -c "import $m" >/dev/null 2>&1; then
    echo "SKIP: $python has no $m module (Debian: python3-venv python3-pip python3-setuptools python3-wheel)"
    exit 77
  fi
done
build=$(cd "${top_builddir:-.}" && pwd)
src=$(cd "${top_srcdir:-.}" && pwd)
work=$build/tests/python-package.dir
rm -rf "$work"
mkdir -p "$work"
# The test runs inside `make check`: a fresh make, not the caller's jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL || true
# One `make install` at a time in this build tree (tests/cmake-package.sh installs too).
lock=; command -v flock >/dev/null 2>&1 && lock="flock $build/tests/install-lock"
$lock ${MAKE:-make} -C "$build" install DESTDIR="$work/destdir" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "python-package: make install failed"; exit 1; }
pc=$(find "$work/destdir" -name cpuexec.pc)
[ -n "$pc" ] || { echo "python-package: cpuexec.pc was not installed"; exit 1; }
release=$(sed -n 's/^release=//p' "$src/VERSION")

# The project is built in a copy: pip builds in the tree it is given, and the
# source tree may be read-only (distcheck).
mkdir "$work/project"
cp "$src/python/pyproject.toml" "$src/python/setup.py" "$src/python/MANIFEST.in" "$src/python/cpuexec.pyi" \
  "$src/python"/*.c "$src/python"/*.h "$work/project/"

"$python" -m venv --system-site-packages --without-pip "$work/venv" >"$work/venv.log" 2>&1 ||
  { cat "$work/venv.log"; echo "python-package: python3 -m venv failed"; exit 1; }
venv_python=$work/venv/bin/python
# Importing a sanitizer build's library needs its runtime preloaded into the
# uninstrumented interpreter, as python/with-cpuexec does (pip loads no
# libcpuexec and runs without it).
preload=${PYTHON_TEST_PRELOAD:-}
run() {
  case "$preload" in
    */*) env LD_PRELOAD="$preload" ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "$@" ;;
    *) "$@" ;;
  esac
}
(
  cd "$work"
  unset LD_LIBRARY_PATH PYTHONPATH || true
  PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$work/destdir PIP_CONFIG_FILE=/dev/null \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1 \
    "$venv_python" -m pip install --no-build-isolation --no-index --no-deps "$work/project"
) >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; echo "python-package: pip install failed"; exit 1; }

cat >"$work/check.py" <<'EOF'
import os, sys
import cpuexec
venv, libdir, release = sys.argv[1:4]
where = os.path.realpath(cpuexec.__file__)
assert where.startswith(os.path.realpath(venv) + os.sep), f"cpuexec imported from {where}, not the environment"
stub = os.path.join(os.path.dirname(where), "cpuexec.pyi")
assert os.path.exists(stub), f"no stub beside the module ({stub})"
with open("/proc/self/maps") as maps:
    libs = {line.split()[-1] for line in maps if "libcpuexec.so" in line}
assert libs and all(os.path.realpath(p).startswith(os.path.realpath(libdir) + os.sep) for p in libs), \
    f"loaded {sorted(libs)}, not the library in {libdir}"
assert cpuexec.__version__ == release, f"module version {cpuexec.__version__}, VERSION says {release}"
r = cpuexec.resolve({"num_threads": 2})
assert r.effective_threads == 2, r.describe()
with cpuexec.Session({"num_threads": 2}) as s:
    seen = []
    cpuexec.parallel_for(lambda b, e: seen.append((b, e)), 100, 10)
assert sum(e - b for b, e in seen) == 100, seen
print(f"python-package: cpuexec {cpuexec.__version__} from {where}, library {sorted(libs)[0]}")
EOF
libdir=$(dirname "$pc")/..
(
  cd "$work"
  unset LD_LIBRARY_PATH PYTHONPATH || true
  run "$venv_python" "$work/check.py" "$work/venv" "$(cd "$libdir" && pwd)" "$release"
) || { echo "python-package: importing the pip-installed module failed"; exit 1; }
# pip knows it, with the library's version.
PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv_python" -m pip show cpuexec >"$work/show.log" 2>&1 &&
  grep -q "^Version: $release\$" "$work/show.log" ||
  { cat "$work/show.log"; echo "python-package: pip show cpuexec does not say version $release"; exit 1; }
echo "python-package: pip installed the module offline from python/ against the installed library"
rm -rf "$work"
