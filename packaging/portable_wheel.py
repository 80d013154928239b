"""Build gtscript wheels that install on glibc 2.28 and later (manylinux_2_28), without a
container: `make wheel-portable` runs this (long the first time: LLVM is compiled; not in CI).

The route, every step on this machine:

1. zig (the `ziglang` package of the package registry) is the C and C++ compiler. Its
   `-target x86_64-linux-gnu.2.28` links against glibc 2.28's symbol versions whatever the
   build machine's glibc, and brings its own libc++ (linked statically, so the wheel needs no
   libstdc++ either). Code is built for the architecture's baseline CPU.
2. LLVM 19's source: a directory or tarball given with --llvm-source, else Debian's source
   package `llvm-toolchain-19`, fetched by apt with a private sources list (the system's `deb`
   lines as `deb-src`), so the machine's apt configuration is not touched.
3. LLVM is configured for the host's target only (the cpu backend JITs for the machine it runs
   on; the cuda backend compiles with NVRTC), with none of z3, libxml2, zlib, zstd, libedit,
   libffi, and only the static libraries the core's LLVM-C calls need are built (the ORC JIT,
   the pass builder, the target's code generator and what they depend on).
4. The core is built by each given Python (`pip wheel`, scikit-build-core, CMakeLists.txt with
   GTSCRIPT_LLVM_STATIC=ON): LLVM and libc++ are linked into the module, their symbols hidden.
5. auditwheel checks each wheel against the manylinux_2_28 policy and tags it (it refuses a
   wheel whose symbols need a newer glibc), and prints `auditwheel show`.

tests_install/test_install.py (`make wheel-portable-test`) installs the result into a fresh
venv with the system's LLVM hidden and runs stencils with it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLIBC = "2.28"
LLVM_MAJOR = 19
# the LLVM libraries the core links, by target architecture (their dependencies are added
# from LLVM's own export file): those CMakeLists.txt's components (orcjit orcdebugging passes
# native nativecodegen) name: ORC's LLJIT and its debugger support (GTSCRIPT_GDB_JIT), the
# new pass manager, the host's code generator, assembly parser and disassembler
ROOT_LIBS = {
    "x86_64": ["LLVMOrcJIT", "LLVMOrcDebugging", "LLVMPasses", "LLVMX86CodeGen",
               "LLVMX86AsmParser", "LLVMX86Disassembler", "LLVMX86Desc", "LLVMX86Info"],
    "aarch64": ["LLVMOrcJIT", "LLVMOrcDebugging", "LLVMPasses", "LLVMAArch64CodeGen",
                "LLVMAArch64AsmParser", "LLVMAArch64Disassembler", "LLVMAArch64Desc",
                "LLVMAArch64Info", "LLVMAArch64Utils"],
}
LLVM_TARGET = {"x86_64": "X86", "aarch64": "AArch64"}


def step(what: str, command: list[str], log: Path, **kwargs) -> None:
    """Run one step with its output in `log`; say what and how long; on failure show the log's end."""
    print(f"{what} (log: {log}) ...", end="", flush=True)
    start = time.monotonic()
    with open(log, "w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode != 0:
        print(" failed")
        sys.stdout.write("".join(log.read_text(errors="replace").splitlines(True)[-40:]))
        raise SystemExit(f"{what}: `{' '.join(map(str, command))}` exited with {done.returncode}")
    print(f" done in {time.monotonic() - start:.0f} s", flush=True)


def zig_toolchain(work: Path, arch: str) -> dict[str, str]:
    """Wrapper scripts that make zig a cc/c++/ar/ranlib CMake can call by path."""
    try:
        import ziglang  # noqa: F401  (the package registry's zig)
    except ImportError:
        step("zig: installing the ziglang package", [sys.executable, "-m", "pip", "install",
             "--disable-pip-version-check", "ziglang"], work / "zig-install.log")
    found = subprocess.run([sys.executable, "-c", "import ziglang, os; "
                            "print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"],
                           capture_output=True, text=True, check=True)
    zig = found.stdout.strip()
    version = subprocess.run([zig, "version"], capture_output=True, text=True, check=True)
    print(f"zig: {zig} ({version.stdout.strip()}), target {arch}-linux-gnu.{GLIBC}")
    bindir = work / "zig"
    bindir.mkdir(parents=True, exist_ok=True)
    tools = {"cc": f"cc -target {arch}-linux-gnu.{GLIBC}",
             "c++": f"c++ -target {arch}-linux-gnu.{GLIBC}", "ar": "ar", "ranlib": "ranlib"}
    for name, args in tools.items():
        wrapper = bindir / name
        wrapper.write_text(f'#!/bin/sh\nexec "{zig}" {args} "$@"\n')
        wrapper.chmod(0o755)
    return {name: str(bindir / name) for name in tools}


def debian_sources() -> str:
    """The system's Debian archives as `deb-src` lines (one-line and deb822 formats)."""
    lines = []
    etc = Path("/etc/apt")
    for path in [etc / "sources.list", *sorted((etc / "sources.list.d").glob("*.list"))]:
        if path.exists():
            for line in path.read_text().splitlines():
                if re.match(r"\s*deb\s", line):
                    lines.append(re.sub(r"^\s*deb\s", "deb-src ", line))
    for path in sorted((etc / "sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            if "deb" not in fields.get("Types", "").split() or "URIs" not in fields:
                continue
            signed = f" [signed-by={fields['Signed-By']}]" if "Signed-By" in fields else ""
            for uri in fields["URIs"].split():
                for suite in fields.get("Suites", "").split():
                    lines.append(f"deb-src{signed} {uri} {suite} {fields.get('Components', 'main')}")
    return "\n".join(lines) + "\n"


def fetch_debian_source(work: Path) -> Path:
    """Download and unpack Debian's llvm-toolchain-19 source (its LLVM part) into work/src."""
    apt = work / "apt"
    for sub in ("lists/partial", "cache/archives/partial", "parts"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "sources.list").write_text(debian_sources())
    private = ["-o", f"Dir::Etc::SourceList={apt / 'sources.list'}",
               "-o", f"Dir::Etc::SourceParts={apt / 'parts'}",
               "-o", f"Dir::State::Lists={apt / 'lists'}", "-o", f"Dir::Cache={apt / 'cache'}"]
    step("LLVM source: the index of Debian's source packages", ["apt-get", *private, "update"],
         work / "apt-update.log")
    download = work / "download"
    download.mkdir(exist_ok=True)
    step(f"LLVM source: downloading Debian's llvm-toolchain-{LLVM_MAJOR}",
         ["apt-get", *private, "source", "--download-only", f"llvm-toolchain-{LLVM_MAJOR}"],
         work / "apt-source.log", cwd=download)
    tarballs = sorted(download.glob(f"llvm-toolchain-{LLVM_MAJOR}_*.orig.tar.*"))
    if not tarballs:
        raise SystemExit(f"no llvm-toolchain-{LLVM_MAJOR} orig tarball in {download}")
    return unpack(tarballs[-1], work)


def unpack(tarball: Path, work: Path) -> Path:
    """Unpack the parts of an LLVM source tarball that LLVM's build reads (llvm/, cmake/,
    third-party/), and return the directory that holds them."""
    dest = work / "src"
    print(f"LLVM source: unpacking {tarball.name} ...", end="", flush=True)
    start = time.monotonic()
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers()
                   if re.match(r"[^/]+/(llvm|cmake|third-party)(/|$)", m.name)]
        if not members:
            raise SystemExit(f"{tarball}: no llvm/ directory inside")
        tar.extractall(dest, members=members, filter="data")
    print(f" done in {time.monotonic() - start:.0f} s")
    return dest / members[0].name.split("/")[0]


def llvm_source(arg: str | None, work: Path) -> Path:
    if arg is None:
        existing = sorted((work / "src").glob("*/llvm/CMakeLists.txt"))
        source = existing[-1].parent.parent if existing else fetch_debian_source(work)
    elif Path(arg).is_dir():
        source = Path(arg)
    else:
        source = unpack(Path(arg), work)
    version_file = source / "cmake" / "Modules" / "LLVMVersion.cmake"
    found = re.search(r"LLVM_VERSION_MAJOR\s+(\d+)", version_file.read_text()) \
        if version_file.exists() else None
    if not (source / "llvm" / "CMakeLists.txt").exists() or not found:
        raise SystemExit(f"{source}: not an LLVM source tree (llvm/ and cmake/ expected)")
    if int(found[1]) != LLVM_MAJOR:
        raise SystemExit(f"{source} is LLVM {found[1]}: gtscript needs LLVM {LLVM_MAJOR}")
    print(f"LLVM source: {source} (LLVM {found[1]})")
    return source


def needed_libraries(build: Path, arch: str) -> list[str]:
    """ROOT_LIBS and every LLVM library they link, read from LLVM's export file."""
    exports = (build / "lib" / "cmake" / "llvm" / "LLVMExports.cmake").read_text()
    links = {name: [lib for lib in deps.split(";") if lib.startswith("LLVM")]
             for name, deps in re.findall(
                 r"set_target_properties\((LLVM\w+) PROPERTIES\s+INTERFACE_LINK_LIBRARIES "
                 r"\"([^\"]*)\"", exports)}
    needed, todo = [], list(ROOT_LIBS[arch])
    while todo:
        lib = todo.pop()
        if lib not in needed:
            needed.append(lib)
            todo.extend(links.get(lib, []))
    return sorted(needed)


def build_llvm(source: Path, work: Path, zig: dict[str, str], arch: str, jobs: int) -> Path:
    """Configure and build LLVM's static libraries the core needs; the build tree's
    lib/cmake/llvm is what the core's CMake is pointed at."""
    build = work / "llvm-build"
    if not (build / "build.ninja").exists():
        off = ["LLVM_ENABLE_Z3_SOLVER", "LLVM_ENABLE_LIBXML2", "LLVM_ENABLE_ZLIB",
               "LLVM_ENABLE_ZSTD", "LLVM_ENABLE_LIBEDIT", "LLVM_ENABLE_LIBPFM", "LLVM_ENABLE_FFI",
               "LLVM_ENABLE_CURL", "LLVM_ENABLE_HTTPLIB", "LLVM_ENABLE_BINDINGS",
               "LLVM_INCLUDE_TESTS", "LLVM_INCLUDE_BENCHMARKS", "LLVM_INCLUDE_EXAMPLES",
               "LLVM_INCLUDE_DOCS", "LLVM_INCLUDE_UTILS", "LLVM_BUILD_TOOLS"]
        step("LLVM: configuring (static libraries, target " + LLVM_TARGET[arch] + ")",
             ["cmake", "-G", "Ninja", "-S", str(source / "llvm"), "-B", str(build),
              "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_C_COMPILER={zig['cc']}",
              f"-DCMAKE_CXX_COMPILER={zig['c++']}", f"-DCMAKE_AR={zig['ar']}",
              f"-DCMAKE_RANLIB={zig['ranlib']}", f"-DLLVM_TARGETS_TO_BUILD={LLVM_TARGET[arch]}",
              "-DLLVM_ENABLE_PROJECTS=", "-DLLVM_ENABLE_PIC=ON",
              *[f"-D{name}=OFF" for name in off]], work / "llvm-configure.log")
    libs = needed_libraries(build, arch)
    step(f"LLVM: building {len(libs)} static libraries with {jobs} jobs (the first time: about "
         "an hour on two cores)", ["ninja", f"-j{jobs}", *libs], work / "llvm-build.log",
         cwd=build)
    return build / "lib" / "cmake" / "llvm"


def build_wheel(python: str, llvm_dir: Path, zig: dict[str, str], work: Path) -> Path:
    """The core built by `python` against the static LLVM: an unrepaired linux wheel."""
    tag = subprocess.run([python, "-c", "import sys; print(f'cp{sys.version_info[0]}"
                          "{sys.version_info[1]}')"], capture_output=True, text=True,
                         check=True).stdout.strip()
    out = work / "wheels" / tag
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # unstripped (scikit-build-core strips by default): the symbol table lets the test tell
    # LLVM's CPUID-dispatched BLAKE3 from the rest (test_portable_wheel.py; the debug information
    # is stripped by CMakeLists.txt)
    env = {**os.environ, "CC": zig["cc"], "CXX": zig["c++"], "SKBUILD_INSTALL_STRIP": "false",
           "CMAKE_ARGS": f"-DLLVM_DIR={llvm_dir} -DGTSCRIPT_LLVM_STATIC=ON "
                         f"-DCMAKE_AR={zig['ar']} -DCMAKE_RANLIB={zig['ranlib']}"}
    step(f"core: the {tag} wheel with {python}",
         [python, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-deps",
          "--no-build-isolation", "-w", str(out), str(ROOT)], work / f"wheel-{tag}.log", env=env)
    return next(out.glob("gtscript-*.whl"))


def repair(wheel: Path, dist: Path, arch: str, work: Path) -> Path:
    """auditwheel's check and tag: manylinux_2_28 or a refusal naming what is too new."""
    plat = f"manylinux_{GLIBC.replace('.', '_')}_{arch}"
    auditwheel = shutil.which("auditwheel", path=os.path.dirname(sys.executable)) or "auditwheel"
    before = set(dist.glob("gtscript-*.whl"))
    step(f"auditwheel: {wheel.name} as {plat}", [auditwheel, "repair", "--plat", plat,
         "--only-plat", "-w", str(dist), str(wheel)], work / f"repair-{wheel.stem}.log")
    made = sorted(set(dist.glob(f"gtscript-*{plat}*.whl")) - before) or \
        sorted(dist.glob(f"{wheel.name.split('-linux')[0]}*{plat}*.whl"))
    shown = subprocess.run([auditwheel, "show", str(made[-1])], capture_output=True, text=True)
    print(shown.stdout.strip())
    return made[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llvm-source", help="an LLVM 19 source directory (with llvm/ and "
                        "cmake/) or tarball; default: Debian's llvm-toolchain-19 source package")
    parser.add_argument("--python", action="append", help="a Python to build a wheel for "
                        "(with numpy and scikit-build-core installed); repeatable; default: "
                        "this one")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "portable",
                        help="where LLVM is built and kept (default: build/portable)")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    arch = platform.machine()
    if sys.platform != "linux" or arch not in ROOT_LIBS:
        raise SystemExit(f"a manylinux wheel is built on Linux x86_64 or aarch64, not "
                         f"{sys.platform} {arch}")
    args.work.mkdir(parents=True, exist_ok=True)
    args.dist.mkdir(parents=True, exist_ok=True)
    zig = zig_toolchain(args.work, arch)
    llvm_dir = build_llvm(llvm_source(args.llvm_source, args.work), args.work, zig, arch,
                          args.jobs)
    for python in args.python or [sys.executable]:
        print("wheel:", repair(build_wheel(python, llvm_dir, zig, args.work), args.dist, arch,
                               args.work))


if __name__ == "__main__":
    main()
