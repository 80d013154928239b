"""The stencil object: GT4Py's attributes (compared with what GT4Py itself reports), build
options, ``@gtscript.function`` capture, pickling and copying."""

import copy
import importlib
import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import emulate, require_compiler
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GT4PyCompatibilityWarning
from gtscript.info import AccessKind, Boundary, DomainInfo, FieldInfo, ParameterInfo

# One definition written once and imported twice: once against gtscript, once against GT4Py.
ATTRIBUTES_MODULE = """
import numpy as np
{imports}

@gtscript.stencil(backend="numpy", externals={{"BETA": 2.0, "N": 3, "FLAG": True, "NAME": "x"}})
def attrs(inp: Field[np.float64], out: Field[np.float64], acc: Field[IJ, np.float32],
          vec: Field[(np.float64, (2,))], kcol: Field[K, np.float64], unused: Field[np.int32],
          *, w: float, w2: np.int32):
    from __externals__ import BETA
    with computation(PARALLEL), interval(...):
        out = (inp[1, -2, 0] + inp[-1, 0, 0]) * w * BETA + vec[0, 0, 0][1] + kcol
    with computation(FORWARD), interval(0, 1):
        acc = acc + 1.0
    with computation(FORWARD), interval(1, None):
        acc = acc * 2.0

@gtscript.stencil(backend="numpy")
def vertical(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[0, 0, 1] - a[0, 0, -2] + a[0, 3, 0]
"""

_IMPORTS = {
    "gtscript": "import gtscript\nfrom gtscript import Field, IJ, K, PARALLEL, FORWARD, "
    "computation, interval",
    "gt4py": "from gt4py.cartesian import gtscript\nfrom gt4py.cartesian.gtscript import "
    "Field, IJ, K, PARALLEL, FORWARD, computation, interval",
}


def _import_definitions(tmp_path, library, template=ATTRIBUTES_MODULE):
    name = f"stencil_object_defs_{library}_{abs(hash(str(tmp_path)))}"
    path = tmp_path / f"{name}.py"
    path.write_text(template.format(imports=_IMPORTS[library]))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The attribute stencils built by gtscript and by GT4Py (numpy backend, private cache)."""
    pytest.importorskip("gt4py.cartesian")
    from gt4py.cartesian import config as gt4py_config

    tmp = tmp_path_factory.mktemp("gt4py")
    # GT4Py read GT_CACHE_ROOT when it was imported: point its setting at a private directory
    saved = gt4py_config.cache_settings["root_path"]
    gt4py_config.cache_settings["root_path"] = str(tmp / "cache")
    try:
        ours = _import_definitions(tmp, "gtscript")
        theirs = _import_definitions(tmp, "gt4py")
    finally:
        gt4py_config.cache_settings["root_path"] = saved
    return ours, theirs


def test_field_info_matches_gt4py(both):
    ours, theirs = both
    for name in ("attrs", "vertical"):
        mine, ref = getattr(ours, name).field_info, getattr(theirs, name).field_info
        assert list(mine) == list(ref)
        for field, info in mine.items():
            expected = ref[field]
            assert isinstance(info, FieldInfo)
            assert int(info.access) == int(expected.access), field
            assert str(info.access) == str(expected.access), field
            assert tuple(info.boundary) == tuple(expected.boundary), field
            assert info.axes == expected.axes, field
            assert info.data_dims == expected.data_dims, field
            assert info.dtype == expected.dtype, field
            assert info.ndim == expected.ndim and info.mask == expected.mask, field
            assert info.domain_mask == expected.domain_mask, field


def test_field_info_stays_a_mapping(both):
    info = both[0].attrs.field_info
    assert info["inp"]["extent"] == ((-1, 1), (-2, 0), (0, 0))
    assert info["inp"]["intent"] == "in" and info["acc"]["intent"] == "inout"
    assert info["out"]["intent"] == "out" and info["unused"]["intent"] == "unused"
    assert info["acc"]["dtype"] == "float32" and info["acc"]["axes"] == "IJ"
    assert info["vec"]["data_dims"] == (2,) and info["kcol"]["axes"] == "K"
    assert dict(info["inp"]) == {"extent": ((-1, 1), (-2, 0), (0, 0)), "intent": "in",
                                 "dtype": "float64", "axes": "IJK", "data_dims": ()}
    assert info["inp"].boundary == Boundary(((1, 1), (2, 0), (0, 0)))
    assert info["inp"].boundary.frame_size == (2, 2, 0)
    assert info["out"].access is AccessKind.WRITE


def test_boundary_is_never_negative_in_i_and_j(both):
    """A read only on one side needs no halo on the other in I and J (as in GT4Py)."""
    ours, theirs = both
    b = ours.vertical.field_info["a"].boundary
    assert b == ((0, 0), (0, 3), (2, 1))
    assert all(lo >= 0 and hi >= 0 for lo, hi in ours.attrs.field_info["inp"].boundary)


def test_parameter_info_matches_gt4py(both):
    ours, theirs = both
    mine, ref = ours.attrs.parameter_info, theirs.attrs.parameter_info
    assert list(mine) == list(ref) == ["w", "w2"]
    for name, info in mine.items():
        assert isinstance(info, ParameterInfo)
        assert info.dtype == ref[name].dtype
        assert int(info.access) == int(ref[name].access), name
    assert mine["w2"].access is AccessKind.NONE and mine["w"].access is AccessKind.READ


def test_domain_info_backend_definition_func(both):
    ours, theirs = both
    for name in ("attrs", "vertical"):
        mine, ref = getattr(ours, name), getattr(theirs, name)
        assert isinstance(mine.domain_info, DomainInfo)
        assert mine.domain_info.parallel_axes == ref.domain_info.parallel_axes
        assert mine.domain_info.sequential_axis == ref.domain_info.sequential_axis
        assert mine.domain_info.ndim == ref.domain_info.ndim
        assert mine.domain_info.min_sequential_axis_size == mine.min_k_levels
        # GT4Py says 0 for interval(...) alone, yet refuses an empty domain: gtscript says 1
        assert (mine.domain_info.min_sequential_axis_size
                == max(1, ref.domain_info.min_sequential_axis_size))
        assert mine.backend == ref.backend == "numpy"
        assert mine.definition_func.__name__ == ref.definition_func.__name__ == name
        assert mine.definition_func is mine.__wrapped__
    # interval(0, 1) and the rest of the domain: two levels at least
    assert ours.attrs.domain_info.min_sequential_axis_size == 2
    assert ours.attrs.constants == {"BETA": 2.0, "N": 3, "FLAG": True}


def test_attributes_on_every_backend():
    def copy(a: gtscript.Field[np.float64], b: gtscript.Field[np.float64], *, s: float):
        with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
            b = a[1, 0, 0]

    for backend in ("cpu", "numpy", "cuda"):
        st = gtscript.stencil(backend, copy)
        assert st.backend == backend
        assert st.field_info["a"].boundary == ((0, 1), (0, 0), (0, 0))
        assert st.parameter_info["s"].access is AccessKind.NONE
        assert st.definition_func is copy


# ---- build options ---------------------------------------------------------------------------


ALL_BACKENDS = ("cpu", "numpy", "cuda")


def _build_and_call(backend, definition, arrays, **options):
    st = gtscript.stencil(backend, definition, **options)
    if backend == "cuda":
        require_compiler()
        emulate(st)
    st(**arrays)
    return st


# "T" and "U" are dtype placeholders, given by dtypes= at the build
def placeholders(a: Field["T"], acc: Field[IJ, "T"], out: Field["U"], *, s: "T"):  # noqa: F821
    with computation(PARALLEL), interval(...):
        tmp: "U" = a * s + 1.5  # noqa: F821
        out = tmp
    with computation(FORWARD), interval(...):
        acc = acc + a


@pytest.mark.parametrize("backend", ALL_BACKENDS)
@pytest.mark.parametrize("t, u", [(np.float32, np.int32), (np.float64, np.int64),
                                  (np.float64, np.float32)])
def test_dtype_placeholders(backend, t, u, rng):
    a = rng.uniform(-4, 4, (5, 4, 3)).astype(t)
    acc, out = np.zeros((5, 4), t), np.zeros((5, 4, 3), u)
    st = _build_and_call(backend, placeholders, dict(a=a, acc=acc, out=out, s=t(2.5)),
                         dtypes={"T": t, "U": u})
    assert st.field_info["a"].dtype == t and st.field_info["acc"].dtype == t
    assert st.field_info["out"].dtype == u and st.parameter_info["s"].dtype == t
    # hand-written NumPy: the temporary has dtype U, so the sum is truncated for integers
    np.testing.assert_array_equal(out, (a * t(2.5) + t(1.5)).astype(u))
    np.testing.assert_allclose(acc, a.sum(axis=2, dtype=t), rtol=1e-6)
    ref_out, ref_acc = np.zeros_like(out), np.zeros_like(acc)
    gtscript.stencil("numpy", placeholders, dtypes={"T": t, "U": u})(a, ref_acc, ref_out, s=t(2.5))
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_allclose(acc, ref_acc, rtol=1e-6)


def test_dtype_placeholders_key_the_cache():
    f32 = gtscript.stencil("cpu", placeholders, dtypes={"T": np.float32, "U": np.int32})
    f64 = gtscript.stencil("cpu", placeholders, dtypes={"T": np.float64, "U": np.int32})
    again = gtscript.stencil("cpu", placeholders, dtypes={"U": "int32", "T": np.float32})
    assert f32 is not f64 and f32.cache_key != f64.cache_key
    assert again is f32  # the same dtypes, spelled differently, find the built stencil


def test_dtype_placeholder_errors():
    with pytest.raises(gtscript.GTScriptDefinitionError, match=r"dtypes=\{'T': np.float64\}"):
        gtscript.stencil("cpu", placeholders, dtypes={"U": np.int32})
    with pytest.raises(TypeError, match=r"dtypes\['T'\].*unsupported dtype"):
        gtscript.stencil("cpu", placeholders, dtypes={"T": np.complex128, "U": np.int32})
    with pytest.raises(TypeError, match="dtypes must be a dict"):
        gtscript.stencil("cpu", placeholders, dtypes=[("T", np.float32)])


def literal_ints(a: Field[np.int32], wide: Field[np.int64], kind: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        wide = a * 100000  # int32 * literal: int64 arithmetic only if the literal is int64
        tmp = 7  # its dtype is the literal's
        kind = tmp


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_literal_int_precision_64(backend, rng):
    a = rng.integers(20000, 2**31 - 1, (4, 3, 2), dtype=np.int32)
    wide, kind = np.zeros(a.shape, np.int64), np.zeros(a.shape, np.int64)
    st = _build_and_call(backend, literal_ints, dict(a=a, wide=wide, kind=kind),
                         literal_int_precision=64)
    np.testing.assert_array_equal(wide, a.astype(np.int64) * 100000)  # no int32 overflow
    assert (wide > 2**31).all() and (kind == 7).all()
    temps = {t[0]: t[1] for t in st.ir_tree()["temporaries"]}
    assert temps["tmp"] == "int64"


def test_literal_int_precision_32_and_key():
    st32 = gtscript.stencil("numpy", literal_ints, literal_int_precision=32)
    st64 = gtscript.stencil("numpy", literal_ints, literal_int_precision=64)
    weak = gtscript.stencil("numpy", literal_ints)
    assert {t[0]: t[1] for t in st32.ir_tree()["temporaries"]}["tmp"] == "int32"
    assert len({st32.cache_key, st64.cache_key, weak.cache_key}) == 3
    for backend in ALL_BACKENDS:
        a = np.full((2, 2, 2), 7, np.int32)
        wide, kind = np.zeros(a.shape, np.int64), np.zeros(a.shape, np.int64)
        st = _build_and_call(backend, literal_ints, dict(a=a, wide=wide, kind=kind),
                             literal_int_precision=32)
        assert "7:int32" in st.ir() and "100000:int32" in st.ir()  # typed, not weak
        assert (wide == 700000).all() and (kind == 7).all()


def test_literal_int_precision_errors():
    for bad in (16, 2**32 + 32):
        with pytest.raises(ValueError, match="literal_int_precision"):
            gtscript.stencil("cpu", literal_ints, literal_int_precision=bad)

    def too_big(a: Field[np.int64]):
        with computation(PARALLEL), interval(...):
            a = a + 3000000000

    with pytest.raises(gtscript.GTScriptSemanticError, match="does not fit in int32"):
        gtscript.stencil("cpu", too_big, literal_int_precision=32)
    assert gtscript.stencil("cpu", too_big, literal_int_precision=64) is not None


def test_build_info_is_filled():
    info = {}
    st = gtscript.stencil("cpu", literal_ints, build_info=info, rebuild=True)
    assert set(info) >= {"parse_time", "codegen_time", "build_time", "module_source",
                         "backend", "cache_key"}
    assert 0 < info["parse_time"] <= info["build_time"]
    assert 0 < info["codegen_time"] <= info["build_time"]
    assert info["backend"] == "cpu" and info["cache_key"] == st.cache_key
    again = {}
    assert gtscript.stencil("cpu", literal_ints, build_info=again) is st
    assert again["module_source"] == "pre-key" and again["parse_time"] == 0.0
    with pytest.raises(TypeError, match="build_info must be a dict"):
        gtscript.stencil("cpu", literal_ints, build_info=[])


def _compat_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, GT4PyCompatibilityWarning)]


def test_ignored_gt4py_options_warn_once(monkeypatch):
    stencil_module = importlib.import_module("gtscript.stencil")

    monkeypatch.setattr(stencil_module, "_warned", set())
    with pytest.warns(GT4PyCompatibilityWarning) as record:
        gtscript.stencil("cpu", literal_ints, debug_mode=True, format_source=False)
        gtscript.stencil("cpu", literal_ints, debug_mode=False, cache_settings={})
        gtscript.stencil("numpy", literal_ints, debug_mode=True, format_source=True)
    messages = _compat_warnings(record)
    assert len(messages) == 3, messages  # debug_mode, format_source, cache_settings: once each
    assert sum("'debug_mode'" in m for m in messages) == 1
    assert all(w.filename == __file__ for w in record)  # said at the user's line
    with pytest.raises(TypeError, match="unknown stencil option 'verbos'"):
        gtscript.stencil("cpu", literal_ints, verbos=True)


def test_the_backend_lists_hang_on_the_decorator_as_the_docs_cite_them():
    """`gtscript.stencil` is the decorator (it hides the module): gtscript.stencil.BACKENDS
    and gtscript.stencil.GT4PY_BACKENDS are the module's tuples all the same."""
    stencil_module = importlib.import_module("gtscript.stencil")
    assert gtscript.stencil.BACKENDS == stencil_module.BACKENDS == ("cpu", "numpy", "cuda")
    assert gtscript.stencil.GT4PY_BACKENDS is stencil_module.GT4PY_BACKENDS
    assert gtscript.stencil.GT4PY_BACKENDS["debug"] == "numpy"


@pytest.mark.parametrize("name, nearest", [("gt:cpu_ifirst", "cpu"), ("gt:cpu_kfirst", "cpu"),
                                           ("dace:cpu", "cpu"), ("dace:cpu_KJI", "cpu"),
                                           ("gt:gpu", "cuda"), ("dace:gpu_IJK", "cuda"),
                                           ("dace:gpu", "cuda"), ("debug", "numpy")])
def test_gt4py_backend_names(monkeypatch, name, nearest):
    stencil_module = importlib.import_module("gtscript.stencil")

    monkeypatch.setattr(stencil_module, "_warned", set())
    with pytest.warns(GT4PyCompatibilityWarning, match=f"'{name}'.*'{nearest}'"):
        st = gtscript.stencil(name, literal_ints)
    assert st.backend == nearest
    with warnings.catch_warnings():
        warnings.simplefilter("error", GT4PyCompatibilityWarning)  # the note is said once
        assert gtscript.stencil(backend=name)(literal_ints) is st
    with pytest.raises(ValueError, match="unknown backend 'gt:cpu'"):
        gtscript.stencil("gt:cpu", literal_ints)


# ---- @gtscript.function captures its free names when decorated --------------------------------

CAPTURED_SCALE = 1.0


def _make_affine():
    offset = 10.0

    @gtscript.function
    def affine(x):
        return x * CAPTURED_SCALE + offset

    offset = 20.0  # rebinding the closure variable after decoration changes nothing  # noqa: F841
    return affine


affine = _make_affine()


def uses_affine(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = affine(a)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_function_captures_globals_and_nonlocals_when_decorated(backend, rng):
    global CAPTURED_SCALE
    a = rng.uniform(-1, 1, (4, 3, 2))
    saved = CAPTURED_SCALE
    try:
        CAPTURED_SCALE = 2.0  # rebound after affine was decorated: GT4Py keeps 1.0
        b = np.zeros_like(a)
        _build_and_call(backend, uses_affine, dict(a=a, b=b))
        np.testing.assert_array_equal(b, a * 1.0 + 10.0)
        ref = np.zeros_like(a)
        gtscript.stencil("numpy", uses_affine)(a, ref)
        np.testing.assert_array_equal(b, ref)
    finally:
        CAPTURED_SCALE = saved


def test_function_redecorated_sees_the_new_values(rng):
    global CAPTURED_SCALE, affine
    a = rng.uniform(-1, 1, (4, 3, 2))
    saved_scale, saved_affine = CAPTURED_SCALE, affine
    try:
        first = gtscript.stencil("cpu", uses_affine)
        CAPTURED_SCALE = 3.0
        assert gtscript.stencil("cpu", uses_affine) is first  # the capture did not change
        affine = _make_affine()  # decorated again: captures 3.0
        second = gtscript.stencil("cpu", uses_affine)
        assert second is not first
        b = np.zeros_like(a)
        second(a, b)
        np.testing.assert_array_equal(b, a * 3.0 + 10.0)
    finally:
        CAPTURED_SCALE, affine = saved_scale, saved_affine


class _Slotted:
    __slots__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor


SLOTTED = _Slotted(2.0)
TABLE = np.array([1.0, 2.0, 3.0])


def uses_slotted(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a * SLOTTED.factor


def test_prekey_follows_objects_changed_in_place(rng):
    a = rng.uniform(-1, 1, (3, 3, 2))
    first = gtscript.stencil("cpu", uses_slotted)
    try:
        SLOTTED.factor = 5.0  # no __dict__, a repr with only the id: keyed by its slots
        second = gtscript.stencil("cpu", uses_slotted)
        assert second is not first
        b = np.zeros_like(a)
        second(a, b)
        np.testing.assert_array_equal(b, a * 5.0)
    finally:
        SLOTTED.factor = 2.0
    assert gtscript.stencil("cpu", uses_slotted).cache_key == first.cache_key


def test_prekey_keys_arrays_by_content():
    from gtscript.frontend import definition_fingerprint

    before = definition_fingerprint(uses_slotted, {"T": TABLE})
    assert definition_fingerprint(uses_slotted, {"T": TABLE.copy()}) == before
    TABLE[1] = 7.0
    try:
        assert definition_fingerprint(uses_slotted, {"T": TABLE}) != before
        assert definition_fingerprint(uses_slotted, {"T": TABLE.astype(np.float32)}) != \
            definition_fingerprint(uses_slotted, {"T": TABLE})
        assert definition_fingerprint(uses_slotted, {"T": TABLE.reshape(3, 1)}) != \
            definition_fingerprint(uses_slotted, {"T": TABLE})
    finally:
        TABLE[1] = 2.0


# ---- pickling and copying ------------------------------------------------------------------------


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

POOL_SCRIPT = '''
import concurrent.futures
import multiprocessing
import pickle
import sys

import numpy as np

import gtscript
from gtscript import Field, PARALLEL, computation, interval
import pickled_stencils


@gtscript.stencil(backend="{backend}")
def shift_scale(a: Field[np.float64], b: Field[np.float64], *, w: float):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0] * w


def apply(args):
    stencil, w = args
    a = np.arange(5 * 3 * 2, dtype=np.float64).reshape(5, 3, 2)
    b = np.zeros((4, 3, 2))
    stencil(a, b, w=w)
    return b, stencil.backend, stencil.build_info["module_source"]


if __name__ == "__main__":
    # defined under the main guard: a spawned child's __main__ never runs this block
    @gtscript.stencil(backend="{backend}")
    def guarded(a: Field[np.float64], b: Field[np.float64], *, w: float):
        with computation(PARALLEL), interval(...):
            b = a[1, 0, 0] * w + 1.0

    a = np.arange(5 * 3 * 2, dtype=np.float64).reshape(5, 3, 2)
    for method in ("spawn", "fork"):
        context = multiprocessing.get_context(method)
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
            jobs = [(shift_scale, 1.0), (guarded, 2.0), (pickled_stencils.imported, 3.0),
                    (shift_scale, 4.0)]
            for (stencil, w), (b, backend, source) in zip(jobs, pool.map(apply, jobs)):
                expected = a[1:] * w + (1.0 if stencil is guarded else 0.0)
                assert np.array_equal(b, expected), (method, stencil, b, expected)
                assert backend == "{backend}"
        with context.Pool(2) as pool:
            results = pool.map(apply, [(guarded, 5.0), (pickled_stencils.imported, 6.0)])
        assert np.array_equal(results[0][0], a[1:] * 5.0 + 1.0)
        assert np.array_equal(results[1][0], a[1:] * 6.0)
    print("pools ok")
'''

IMPORTED_MODULE = '''
import numpy as np

import gtscript
from gtscript import Field, PARALLEL, computation, interval


@gtscript.stencil(backend="{backend}")
def imported(a: Field[np.float64], b: Field[np.float64], *, w: float):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0] * w
'''


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_stencils_in_process_pools(tmp_path, backend):
    """A script defining stencils in __main__ (at the top level and under the main guard)
    maps them over spawn and fork process pools, with a stencil of an importable module."""
    (tmp_path / "pickled_stencils.py").write_text(IMPORTED_MODULE.format(backend=backend))
    script = tmp_path / "pool_script.py"
    script.write_text(POOL_SCRIPT.format(backend=backend))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, str(tmp_path)])}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pools ok" in done.stdout


def test_pickle_by_reference_for_importable_stencils(tmp_path, monkeypatch):
    (tmp_path / "pickled_stencils_ref.py").write_text(IMPORTED_MODULE.format(backend="cpu"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import pickled_stencils_ref

    try:
        stencil = pickled_stencils_ref.imported
        data = pickle.dumps(stencil)
        assert b"pickled_stencils_ref" in data and len(data) < 200  # a reference, no tree
        assert pickle.loads(data) is stencil
    finally:
        sys.modules.pop("pickled_stencils_ref", None)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_pickle_by_tree_rebuilds_an_equal_stencil(backend, rng):
    def local_shift(a: Field[np.float64], b: Field[np.float64], *, w: float):
        with computation(PARALLEL), interval(...):
            b = a[1, 0, 0] * w

    original = gtscript.stencil(backend, local_shift, literal_float_precision=32)
    copy_ = pickle.loads(pickle.dumps(original))
    assert copy_ is not original and type(copy_) is type(original)
    assert copy_.cache_key == original.cache_key and copy_.backend == backend
    assert copy_.options == {"literal_float_precision": 32}
    assert copy_.field_info == original.field_info
    assert copy_.definition_func is None  # a local function cannot travel by reference
    assert copy_.signature == original.signature == ("local_shift(a: Field[float64], "
                                                     "b: Field[float64], *, w: float64)")
    assert pickle.loads(pickle.dumps(original)) is copy_  # rebuilt once per process
    a = rng.standard_normal((5, 3, 2))
    b1, b2 = np.zeros((4, 3, 2)), np.zeros((4, 3, 2))
    if backend == "cuda":
        require_compiler()
        emulate(original), emulate(copy_)
    original(a, b1, w=2.0)
    copy_(a, b2, w=2.0)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(b2, a[1:] * 2.0)


def test_copy_and_deepcopy_give_the_stencil():
    st = gtscript.stencil("cpu", literal_ints)
    assert copy.copy(st) is st and copy.deepcopy(st) is st
    holder = copy.deepcopy({"stencil": st, "data": [1, 2]})
    assert holder["stencil"] is st


def test_stencil_defined_in_a_notebook_cell_unpickles_in_another_process(tmp_path):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    result = shell.run_cell(textwrap.dedent("""
        import pickle
        import numpy as np
        import gtscript
        from gtscript import Field, PARALLEL, computation, interval

        @gtscript.stencil(backend="cpu")
        def in_cell(a: Field[np.float64], b: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                b = a[0, 1, 0] - a
        cell_pickle = pickle.dumps(in_cell)
        """))
    result.raise_error()
    (tmp_path / "stencil.pkl").write_bytes(shell.user_ns["cell_pickle"])
    loader = textwrap.dedent(f"""
        import pickle
        import numpy as np
        stencil = pickle.loads(open({str(tmp_path / "stencil.pkl")!r}, "rb").read())
        a = np.arange(3 * 4 * 2, dtype=np.float64).reshape(3, 4, 2) ** 2
        b = np.zeros((3, 3, 2))
        stencil(a, b)
        assert np.array_equal(b, a[:, 1:] - a[:, :-1]), b
        print("ok", stencil.__name__, stencil.build_info["module_source"])
        """)
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-c", loader], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok in_cell")


def test_unpickling_does_not_repeat_build_warnings():
    def unused_temporary(a: Field[np.float64], b: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            never_read = a * 2.0
            b = a

    with pytest.warns(UserWarning, match="never_read"):
        st = gtscript.stencil("numpy", unused_temporary)
    data = pickle.dumps(st)
    stencil_module = importlib.import_module("gtscript.stencil")
    stencil_module._from_tree_cache.clear()  # as in a fresh process
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = pickle.loads(data)
    assert again.cache_key == st.cache_key and again.build_warnings
