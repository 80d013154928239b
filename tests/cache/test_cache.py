"""The module cache (docs/caching.md): the canonical key, the memory and disk levels, and the
disk cache's safety rules.

Every test here that touches the disk uses its own private cache directory (the suite as a
whole runs with a temporary one, see conftest.py). Stencils get a fresh external SCALE where a
test needs a key no other test has built, because the memory level outlives a test.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval

SHAPE = (9, 7, 4)
_scales = itertools.count(1)


def fresh_scale() -> float:
    """An external value no other stencil in this process was built with: a fresh key."""
    return 1.0 + next(_scales) / 1024.0 + (os.getpid() % 997) / 1e6


# ======================================================================= definitions
# base_defn and the three after it are the same stencil written differently.

def base_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        tmp = inp[1, 0, 0] - inp[0, 0, 0]
        out = SCALE * (tmp - tmp[-1, 0, 0])


def reformatted_defn(inp: Field[np.float64],
                     out: Field[np.float64]):
    from __externals__ import SCALE
    with computation(PARALLEL), interval(...):
        tmp = (inp[1, 0, 0]
               - inp[0, 0, 0])
        out = SCALE * (
            tmp - tmp[-1, 0, 0]
        )


def commented_defn(inp: Field[np.float64], out: Field[np.float64]):
    """A docstring, comments and blank lines change nothing."""
    from __externals__ import SCALE  # the scale factor

    # the flux between cells
    with computation(PARALLEL), interval(...):

        tmp = inp[1, 0, 0] - inp[0, 0, 0]  # forward difference

        out = SCALE * (tmp - tmp[-1, 0, 0])  # its divergence


def renamed_temp_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        flux = inp[1, 0, 0] - inp[0, 0, 0]
        out = SCALE * (flux - flux[-1, 0, 0])


def changed_statement_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        tmp = inp[1, 0, 0] - inp[0, 0, 0]
        out = SCALE * (tmp + tmp[-1, 0, 0])


def float32_defn(inp: Field[np.float32], out: Field[np.float32]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        tmp = inp[1, 0, 0] - inp[0, 0, 0]
        out = SCALE * (tmp - tmp[-1, 0, 0])


def masked_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if inp > 0.0:
            doubled = 2.0 * inp
            out = doubled
        else:
            out = -inp


def masked_renamed_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        # the mask temporary the analysis adds is named after the line: moving it changes nothing
        if inp > 0.0:
            twice = 2.0 * inp
            out = twice
        else:
            out = -inp


def reference(inp, scale):
    """Hand-written NumPy: out[i] = scale * (d[i] - d[i-1]) with d = forward difference."""
    d = inp[1:] - inp[:-1]
    return scale * (d[1:] - d[:-1])


ORIGIN = (1, 0, 0)
DOMAIN = (SHAPE[0] - 2, SHAPE[1], SHAPE[2])


def make(defn=base_defn, scale=None, backend="cpu", **options):
    scale = fresh_scale() if scale is None else scale
    return gtscript.stencil(backend, defn, externals={"SCALE": scale}, **options)


def run(st, inp, exec_info=None):
    out = np.full(inp.shape, 7.0, dtype=inp.dtype)
    st(inp, out, origin=ORIGIN, domain=DOMAIN, exec_info=exec_info)
    return out


def check_result(st, scale, rng):
    inp = rng.uniform(-1, 1, SHAPE)
    out = run(st, inp)
    np.testing.assert_allclose(out[1:-1], reference(inp, scale), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(out[[0, -1]], 7.0)
    return inp, out


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private cache directory for one test (created by the core on first use)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(d))
    monkeypatch.delenv("GTSCRIPT_CACHE_MAX_BYTES", raising=False)
    return d


def entries(cache_dir: Path) -> list[Path]:
    return sorted(p for p in cache_dir.iterdir() if len(p.name) == 64)


def assert_valid_entry(entry: Path, key: str):
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["key"] == key == entry.name
    assert meta["package"] == gtscript.__version__
    for part, name in (("object", "kernel.o"), ("source", "kernel.ll")):
        data = (entry / name).read_bytes()
        assert meta[part]["size"] == len(data) > 0
        assert meta[part]["sha256"] == hashlib.sha256(data).hexdigest()
    return meta


# ======================================================================= the key

@pytest.mark.parametrize("defn", [reformatted_defn, commented_defn, renamed_temp_defn],
                         ids=["reformatted", "commented", "renamed-temporary"])
def test_equivalent_definitions_have_the_same_key(defn, rng):
    scale = fresh_scale()
    a, b = make(base_defn, scale), make(defn, scale)
    assert a is not b
    assert len(a.cache_key) == 64 and a.cache_key == b.cache_key
    assert a.build_info["cache_key"] == a.cache_key
    # the same compiled code: the second came from memory, and computes the same thing
    assert b.build_info["module_source"] == "memory"
    _, out_a = check_result(a, scale, rng)
    inp, out_b = check_result(b, scale, rng)
    np.testing.assert_array_equal(run(a, inp), out_b)


def test_renaming_the_mask_temporary_and_moving_lines_keeps_the_key(rng):
    a = gtscript.stencil("cpu", masked_defn)
    b = gtscript.stencil("cpu", masked_renamed_defn)
    n = gtscript.stencil("numpy", masked_defn)
    assert a.cache_key == b.cache_key
    inp = rng.uniform(-1, 1, SHAPE)
    expect = np.where(inp > 0.0, 2.0 * inp, -inp)
    for st in (a, b, n):
        out = np.zeros(SHAPE)
        st(inp, out)
        np.testing.assert_array_equal(out, expect)


def test_changes_that_matter_change_the_key(rng):
    scale = fresh_scale()
    base = make(base_defn, scale)
    variants = {
        "external": make(base_defn, scale + 1.0),
        "statement": make(changed_statement_defn, scale),
        "dtype": make(float32_defn, scale),
        "backend": make(base_defn, scale, backend="numpy"),
        "option": make(base_defn, scale, literal_float_precision=64),
        "llvm_passes": make(base_defn, scale, llvm_passes="function(instcombine)"),
    }
    keys = {name: st.cache_key for name, st in variants.items()}
    assert base.cache_key not in keys.values(), keys
    assert len(set(keys.values())) == len(keys), keys
    for name, st in variants.items():
        if name in ("external", "statement", "backend"):
            continue
        assert st.build_info["module_source"] == "build", name
    # each variant computes what it says (cpu and numpy against the hand-written reference)
    inp = rng.uniform(-1, 1, SHAPE)
    np.testing.assert_allclose(run(variants["external"], inp)[1:-1], reference(inp, scale + 1.0), rtol=1e-13)
    np.testing.assert_allclose(run(variants["backend"], inp)[1:-1], reference(inp, scale), rtol=1e-13)
    np.testing.assert_allclose(run(variants["option"], inp)[1:-1], reference(inp, scale), rtol=1e-13)
    np.testing.assert_allclose(run(variants["llvm_passes"], inp)[1:-1], reference(inp, scale), rtol=1e-13)
    d = inp[1:] - inp[:-1]
    np.testing.assert_allclose(run(variants["statement"], inp)[1:-1], scale * (d[1:] + d[:-1]), rtol=1e-13)
    out32 = run(variants["dtype"], inp.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32[1:-1], reference(inp.astype(np.float32), np.float32(scale)),
                               rtol=1e-5, atol=1e-5)


def times_zero_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp * 0.0


def times_negative_zero_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp * -0.0


def test_constants_are_keyed_exactly(rng):
    """0.0 and -0.0 print alike with %g; they must not share code (the sign of the result
    differs)."""
    pos = gtscript.stencil("cpu", times_zero_defn)
    neg = gtscript.stencil("cpu", times_negative_zero_defn)
    assert pos.cache_key != neg.cache_key
    inp = rng.uniform(-1, 1, SHAPE)
    for st, ref in ((pos, inp * 0.0), (neg, inp * -0.0),
                    (gtscript.stencil("numpy", times_negative_zero_defn), inp * -0.0)):
        out = np.full(SHAPE, 7.0)
        st(inp, out)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))


def test_renaming_a_parameter_changes_the_key():
    def one(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp

    def two(src: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = src

    assert gtscript.stencil("cpu", one).cache_key != gtscript.stencil("cpu", two).cache_key


def bound_defn(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(FORWARD), interval(0, 1):
        t: Field[IJ, np.int64] = top + 1
    with computation(PARALLEL), interval(0, t):
        out = a


def bound_moved_defn(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(FORWARD), interval(0, 1):
        t: Field[IJ, np.int64] = top + 1

    with computation(PARALLEL), interval(0, t):
        out = a


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_the_line_of_a_checked_interval_bound_is_in_the_key(backend):
    """The kernel checks a bound computed from a temporary and reports its line: definitions
    that differ only there must not share code (the message would name the other's line)."""
    a, b = gtscript.stencil(backend, bound_defn), gtscript.stencil(backend, bound_moved_defn)
    assert a.cache_key != b.cache_key
    if backend == "cuda":
        return  # the source differs; the call is tested on the host emulation elsewhere
    lines = (bound_defn.__code__.co_firstlineno + 3, bound_moved_defn.__code__.co_firstlineno + 4)
    for st, line in zip((a, b), lines):
        top = np.full(SHAPE[:2], 1, np.int64)
        top[2, 3] = SHAPE[2]  # t == nk + 1
        with pytest.raises(ValueError, match=f"interval bound on line {line}, "):
            st(np.ones(SHAPE), top, np.zeros(SHAPE))


# ======================================================================= memory level

def test_redecoration_shares_the_loaded_code_and_the_prekey_returns_the_same_object(rng):
    scale = fresh_scale()
    before = gtscript.cache.info()
    first = make(base_defn, scale)
    assert make(base_defn, scale) is first  # the pre-key: same definition, no lowering at all
    again = make(reformatted_defn, scale)  # a new definition: lowered, key found in memory
    after = gtscript.cache.info()
    assert first.build_info["module_source"] == "build"
    assert again.build_info["module_source"] == "memory"
    assert after["misses"] == before["misses"] + 1
    assert after["memory_hits"] == before["memory_hits"] + 1
    assert after["hits"] == after["memory_hits"] + after["disk_hits"]
    assert again.source() == first.source() and "gt_kernel" in again.source()
    info = {}
    run(again, rng.uniform(size=SHAPE), exec_info=info)
    assert info["module_source"] == "memory" and 0 <= info["build_time"] < first.build_info["build_time"]
    del first  # the shared code outlives the module that built it
    check_result(again, scale, rng)


def test_rebuild_bypasses_both_levels_and_replaces_the_disk_entry(cache_dir, rng):
    scale = fresh_scale()
    first = make(base_defn, scale)
    meta1 = assert_valid_entry(cache_dir / first.cache_key, first.cache_key)
    time.sleep(0.01)
    rebuilt = make(base_defn, scale, rebuild=True)
    assert rebuilt is not first and rebuilt.cache_key == first.cache_key
    assert rebuilt.build_info["module_source"] == "build"
    meta2 = assert_valid_entry(cache_dir / first.cache_key, first.cache_key)
    assert meta2["created"] > meta1["created"]
    assert len(entries(cache_dir)) == 1
    check_result(rebuilt, scale, rng)
    # and the rebuilt module is what an equivalent definition now shares
    assert make(renamed_temp_defn, scale).build_info["module_source"] == "memory"


# ======================================================================= disk level

def test_entry_layout_and_permissions(cache_dir):
    st = make()
    assert cache_dir.is_dir() and (cache_dir.stat().st_mode & 0o777) == 0o700
    (entry,) = entries(cache_dir)
    assert entry.name == st.cache_key
    meta = assert_valid_entry(entry, st.cache_key)
    assert meta["backend"] == "cpu" and meta["target"] == st.build_info["target"]
    assert meta["name"] == "base_defn" and abs(meta["created"] - time.time()) < 600
    assert [p["name"] for p in meta["params"]] == ["inp", "out"]
    assert meta["params"][0]["extent"] == [[-1, 1], [0, 0], [0, 0]]
    assert meta["params"][0]["dtype"] == "float64"
    assert sorted(p.name for p in entry.iterdir()) == ["kernel.ll", "kernel.o", "meta.json"]
    for p in entry.iterdir():
        assert p.stat().st_mode & 0o077 == 0, p
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_numpy_backend_stores_nothing(cache_dir):
    st = make(backend="numpy")
    assert len(st.cache_key) == 64
    assert not cache_dir.exists() or not entries(cache_dir)


def test_in_process_disk_hit_after_the_memory_level_is_cleared(cache_dir, rng):
    scale = fresh_scale()
    st = make(base_defn, scale)
    saved = cache_dir / st.cache_key
    backup = cache_dir.parent / "backup"
    shutil.copytree(saved, backup)
    assert gtscript.cache.clear() == 1
    assert not entries(cache_dir)
    shutil.copytree(backup, saved)
    hits = gtscript.cache.info()["disk_hits"]
    again = make(renamed_temp_defn, scale)
    assert again.build_info["module_source"] == "disk"
    assert gtscript.cache.info()["disk_hits"] == hits + 1
    assert again.source() == st.source()
    check_result(again, scale, rng)


STENCIL_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    def wait_for(path):
        deadline = time.time() + 120
        while not os.path.exists(path):
            if time.time() > deadline:
                sys.exit("no go signal")
            time.sleep(0.002)

    if len(sys.argv) > 2:  # concurrent mode: say ready, then wait for the common start
        open(sys.argv[2] + ".ready", "w").close()
        wait_for(sys.argv[3])

    @gtscript.stencil(backend="cpu", externals={"SCALE": 0.75})
    def diffuse(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import SCALE
        with computation(PARALLEL), interval(...):
            tmp = inp[1, 0, 0] - inp[0, 0, 0]
            out = SCALE * (tmp - tmp[-1, 0, 0])

    inp = np.random.default_rng(5).uniform(-1, 1, (9, 7, 4))
    out = np.full(inp.shape, 7.0)
    if os.environ.get("STENCIL_ORDER") == "F":  # the kernel variant for Fortran order
        inp, out = np.asfortranarray(inp), np.asfortranarray(out)
    info = {}
    diffuse(inp, out, origin=(1, 0, 0), domain=(7, 7, 4), exec_info=info)
    np.save(sys.argv[1], out)
    print(json.dumps({"module_source": info["module_source"], "key": diffuse.cache_key,
                      "source_ok": "gt_kernel" in diffuse.source(),
                      "info": gtscript.cache.info()}))
""")


def run_script(script: Path, out: Path, *extra, env=None):
    r = subprocess.run([sys.executable, str(script), str(out), *map(str, extra)], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "stencil_script.py"
    path.write_text(STENCIL_SCRIPT)
    return path


def test_a_second_process_gets_a_disk_hit_with_identical_results(cache_dir, script, tmp_path):
    first, _ = run_script(script, tmp_path / "a.npy")
    assert first["module_source"] == "build" and first["info"]["misses"] == 1
    entry = cache_dir / first["key"]
    assert_valid_entry(entry, first["key"])
    os.utime(entry / "meta.json", (1000, 1000))  # pretend it was last used long ago
    second, stderr = run_script(script, tmp_path / "b.npy")
    assert second["module_source"] == "disk" and second["key"] == first["key"], (first, second, stderr)
    assert second["info"]["disk_hits"] == 1 and second["info"]["misses"] == 0
    assert second["source_ok"]  # source() works on a disk hit
    assert (entry / "meta.json").stat().st_mtime > 1000  # a hit counts as a use (LRU)
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    np.testing.assert_array_equal(a, b)
    inp = np.random.default_rng(5).uniform(-1, 1, SHAPE)
    np.testing.assert_allclose(a[1:-1], reference(inp, 0.75), rtol=1e-13)


def test_layout_variants_are_cached_on_disk_too(cache_dir, script, tmp_path):
    env = dict(os.environ, STENCIL_ORDER="F")
    first, _ = run_script(script, tmp_path / "a.npy", env=env)
    assert first["module_source"] == "build"
    assert first["info"]["misses"] == 2 and first["info"]["stores"] == 2  # main kernel + variant
    assert len(entries(cache_dir)) == 2
    second, _ = run_script(script, tmp_path / "b.npy", env=env)
    assert second["module_source"] == "disk"
    assert second["info"]["disk_hits"] == 2 and second["info"]["misses"] == 0
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    np.testing.assert_array_equal(a, b)
    inp = np.random.default_rng(5).uniform(-1, 1, SHAPE)
    np.testing.assert_allclose(a[1:-1], reference(inp, 0.75), rtol=1e-13)


def test_eight_processes_building_at_once_all_succeed_with_one_valid_entry(cache_dir, script, tmp_path):
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path / f"out{i}.npy"),
                               str(tmp_path / f"p{i}"), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(8)]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("p*.ready"))) < 8 and time.time() < deadline:
        time.sleep(0.01)
    go.touch()  # every process has imported gtscript: now they all build at once
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        assert "Warning" not in stderr, stderr
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    keys = {r["key"] for r in results}
    assert len(keys) == 1, results
    sources = [r["module_source"] for r in results]  # a late process may find the entry
    assert "build" in sources and set(sources) <= {"build", "disk"}, results
    (entry,) = entries(cache_dir)
    assert entry.name in keys
    assert_valid_entry(entry, entry.name)
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".")]
    outs = [np.load(tmp_path / f"out{i}.npy") for i in range(8)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    # the surviving entry is loadable by a ninth process
    ninth, stderr = run_script(script, tmp_path / "ninth.npy")
    assert ninth["module_source"] == "disk" and ninth["key"] in keys, (ninth, results, stderr)
    np.testing.assert_array_equal(np.load(tmp_path / "ninth.npy"), outs[0])


# ======================================================================= invalid entries

def _rewrite_meta(entry, **changes):
    meta = json.loads((entry / "meta.json").read_text())
    meta.update(changes)
    (entry / "meta.json").write_text(json.dumps(meta))


CORRUPTIONS = {
    "truncated object": lambda e: (e / "kernel.o").write_bytes((e / "kernel.o").read_bytes()[:100]),
    "zero-length object": lambda e: (e / "kernel.o").write_bytes(b""),
    "garbage object": lambda e: (e / "kernel.o").write_bytes(
        np.random.default_rng(1).bytes((e / "kernel.o").stat().st_size)),
    "truncated source": lambda e: (e / "kernel.ll").write_bytes((e / "kernel.ll").read_bytes()[:10]),
    "zero-length metadata": lambda e: (e / "meta.json").write_bytes(b""),
    "garbage metadata": lambda e: (e / "meta.json").write_bytes(b"\x00\xff{garbage"),
    "wrong package version": lambda e: _rewrite_meta(e, package="0.0.0-another"),
    "wrong compiler build": lambda e: _rewrite_meta(e, core="0" * 64),
    "wrong llvm version": lambda e: _rewrite_meta(e, llvm="3.4.0"),
    "wrong key": lambda e: _rewrite_meta(e, key="f" * 64),
    "wrong target": lambda e: _rewrite_meta(e, target="aarch64-unknown-linux-gnu/generic/"),
    "wrong format": lambda e: _rewrite_meta(e, format=99),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_invalid_entries_are_rebuilt_with_a_warning_never_loaded(corruption, cache_dir, rng):
    scale = fresh_scale()
    st = make(base_defn, scale)
    entry = cache_dir / st.cache_key
    backup = cache_dir.parent / "backup"
    shutil.copytree(entry, backup)
    gtscript.cache.clear()  # forget the memory level (and the disk entry, restored below)
    shutil.copytree(backup, entry)
    CORRUPTIONS[corruption](entry)
    invalid = gtscript.cache.info()["invalid_entries"]
    with pytest.warns(RuntimeWarning, match="ignoring the entry .* rebuilding it"):
        again = make(renamed_temp_defn, scale)
    assert again.build_info["module_source"] == "build"
    assert gtscript.cache.info()["invalid_entries"] == invalid + 1
    check_result(again, scale, rng)
    assert_valid_entry(entry, st.cache_key)  # replaced by a good one
    assert len(entries(cache_dir)) == 1


@pytest.mark.parametrize("damage", ["missing object", "empty directory"])
def test_incomplete_entries_are_rebuilt(damage, cache_dir, rng):
    scale = fresh_scale()
    st = make(base_defn, scale)
    entry = cache_dir / st.cache_key
    backup = cache_dir.parent / "backup"
    shutil.copytree(entry, backup)
    gtscript.cache.clear()
    shutil.copytree(backup, entry)
    for name in (["kernel.o"] if damage == "missing object" else ["kernel.o", "kernel.ll", "meta.json"]):
        (entry / name).unlink()
    again = make(renamed_temp_defn, scale)
    assert again.build_info["module_source"] == "build"
    check_result(again, scale, rng)
    assert_valid_entry(entry, st.cache_key)


# ======================================================================= unsafe directories

@pytest.mark.parametrize("mode, why", [(0o777, "writable by every user"), (0o770, "writable by its group"),
                                       (0o702, "writable by every user")])
def test_a_shared_writable_cache_directory_is_refused(mode, why, tmp_path, monkeypatch, rng):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(mode)
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(d))
    with pytest.raises(PermissionError, match=why) as exc:
        make()
    assert str(d) in str(exc.value) and "GTSCRIPT_CACHE_DIR" in str(exc.value)
    with pytest.raises(PermissionError):
        gtscript.cache.info()
    assert not list(d.iterdir())  # nothing was written there
    d.chmod(0o700)
    scale = fresh_scale()
    st = make(base_defn, scale)
    assert st.build_info["module_source"] == "build"
    check_result(st, scale, rng)


def test_a_cache_directory_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    if os.geteuid() == 0:
        d = tmp_path / "someone-elses"
        d.mkdir(mode=0o700)
        os.chown(d, 65534, 65534)  # nobody
    else:
        d = Path("/")  # owned by root
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(d))
    with pytest.raises(PermissionError, match="owned by user id"):
        make()


def test_a_cache_path_that_is_a_file_is_refused(tmp_path, monkeypatch):
    f = tmp_path / "file"
    f.write_text("")
    f.chmod(0o600)
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(f))
    with pytest.raises(PermissionError, match="not a directory"):
        make()


# ======================================================================= control

def test_path_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "explicit"))
    assert gtscript.cache.path() == str(tmp_path / "explicit")
    monkeypatch.delenv("GTSCRIPT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gtscript.cache.path() == str(tmp_path / "xdg" / "gtscript")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert gtscript.cache.path() == str(tmp_path / "home" / ".cache" / "gtscript")
    assert not (tmp_path / "home").exists()  # asking for the path creates nothing


def test_the_suite_never_uses_the_users_cache():
    path = gtscript.cache.path()
    assert os.path.basename(path).startswith("gtscript-test-cache-"), path
    assert (os.stat(path).st_mode & 0o777) == 0o700


def test_info_and_clear(cache_dir):
    info = gtscript.cache.info()
    assert info["path"] == str(cache_dir) and info["entries"] == 0 and info["bytes"] == 0
    assert info["max_bytes"] == 1 << 30
    a, b = make(), make()
    info = gtscript.cache.info()
    assert info["entries"] == 2
    on_disk = sum(f.stat().st_size for e in entries(cache_dir) for f in e.iterdir())
    assert info["bytes"] == on_disk > 0
    assert info["memory_entries"] >= 2
    assert gtscript.cache.clear() == 2
    info = gtscript.cache.info()
    assert info["entries"] == 0 and info["bytes"] == 0 and info["memory_entries"] == 0
    # existing stencils keep working; re-decorating builds again
    inp = np.random.default_rng(0).uniform(size=SHAPE)
    run(a, inp)
    st = gtscript.stencil("cpu", base_defn, externals=a.externals)
    assert st is not a and st.build_info["module_source"] == "build"


def test_eviction_keeps_the_size_under_the_limit_least_recently_used_first(cache_dir, monkeypatch, rng):
    first = make()
    size = gtscript.cache.info()["bytes"]
    limit = int(2.5 * size)
    monkeypatch.setenv("GTSCRIPT_CACHE_MAX_BYTES", str(limit))
    assert gtscript.cache.info()["max_bytes"] == limit
    second = make()
    assert {e.name for e in entries(cache_dir)} == {first.cache_key, second.cache_key}
    # `first` was used more recently than `second`: `second` goes first
    os.utime(cache_dir / second.cache_key / "meta.json", (1000, 1000))
    third = make()
    assert {e.name for e in entries(cache_dir)} == {first.cache_key, third.cache_key}
    built = [make() for _ in range(4)]
    for st in built:
        assert gtscript.cache.info()["bytes"] <= limit
    names = {e.name for e in entries(cache_dir)}
    assert built[-1].cache_key in names and len(names) == 2
    # evicted stencils still run (their code is loaded), and rebuild on a fresh decoration
    scale = second.externals["SCALE"]
    check_result(second, scale, rng)
    monkeypatch.setenv("GTSCRIPT_CACHE_MAX_BYTES", "0")
    last = make()
    assert gtscript.cache.info()["entries"] == 0  # nothing fits in zero bytes
    assert last.build_info["module_source"] == "build"
    check_result(last, last.externals["SCALE"], rng)
