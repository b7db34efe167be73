"""pip install ./python: the cpuexec module built against an installed libcpuexec.

pkg-config finds the library (its cpuexec.pc: `make install` puts it in
$(libdir)/pkgconfig; set PKG_CONFIG_PATH for a prefix pkg-config does not
search). The module's run path is pkg-config's libdir, so `import cpuexec`
needs no LD_LIBRARY_PATH. In a staged tree (make install DESTDIR=D, with
PKG_CONFIG_SYSROOT_DIR=D) libdir and the run path are the staged ones.
The version is the library's (pkg-config --modversion). Metadata:
pyproject.toml; the Autotools build of the same sources is mk/python.am.
"""
import os
import shlex
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["module.c", "errors.c", "policy.c", "topology.c", "resolution.c", "session.c", "tasks.c", "runtime.c"]
PKG_CONFIG = os.environ.get("PKG_CONFIG", "pkg-config")


def pkg_config(*args):
    command = [*shlex.split(PKG_CONFIG), *args, "cpuexec"]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              check=False)
    except OSError as e:
        sys.exit(f"cpuexec: cannot run {PKG_CONFIG} ({e.strerror}); it finds libcpuexec (Debian: pkgconf)")
    if done.returncode != 0:
        sys.exit(f"cpuexec: {' '.join(command)} failed: {done.stderr.strip()}\n"
                 "cpuexec: install libcpuexec first (./configure && make && make install), and set "
                 "PKG_CONFIG_PATH to the directory of its cpuexec.pc when pkg-config does not search it "
                 "(`pkg-config --variable pc_path pkg-config` lists where it looks)")
    return done.stdout.strip()


def split_flags(text, *prefixes):
    """{prefix: [values]} for -I/-L/-l style flags, and the rest under None."""
    found = {p: [] for p in prefixes}
    found[None] = []
    for flag in shlex.split(text):
        prefix = next((p for p in prefixes if flag.startswith(p) and len(flag) > len(p)), None)
        found[prefix].append(flag[len(prefix):] if prefix else flag)
    return found


def library_dir():
    libdir = pkg_config("--variable=libdir")
    sysroot = os.environ.get("PKG_CONFIG_SYSROOT_DIR", "").rstrip("/")
    # pkgconf prefixes variables with the sysroot; freedesktop pkg-config does not.
    if sysroot and not libdir.startswith(sysroot + "/"):
        libdir = sysroot + libdir
    return libdir


class build_ext_with_stub(build_ext):
    """Also puts the type stub next to the module (the wheel's root)."""

    def run(self):
        super().run()
        if not self.inplace:
            self.copy_file(os.path.join(HERE, "cpuexec.pyi"), os.path.join(self.build_lib, "cpuexec.pyi"))


def extension():
    cflags = split_flags(pkg_config("--cflags"), "-I")
    libs = split_flags(pkg_config("--libs"), "-L", "-l")
    libdir = library_dir()
    return Extension(
        "cpuexec",
        sources=SOURCES,
        depends=["module.h"],
        include_dirs=cflags["-I"],
        extra_compile_args=cflags[None] + ["-fno-strict-aliasing"],
        library_dirs=libs["-L"] or [libdir],
        libraries=libs["-l"] or ["cpuexec"],
        extra_link_args=libs[None],
        runtime_library_dirs=[libdir],
    )


if __name__ == "__main__":
    os.chdir(HERE)
    setup(
        version=pkg_config("--modversion"),
        ext_modules=[extension()],
        cmdclass={"build_ext": build_ext_with_stub},
    )
