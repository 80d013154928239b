"""gtscript as a GT4Py backend (gtscript/gt4py.py): ``import gtscript.gt4py`` registers
``gtscript:cpu``, ``gtscript:numpy`` and ``gtscript:cuda`` in GT4Py's backend registry, and a
definition built through GT4Py's own ``gtscript.stencil(backend="gtscript:cpu")`` is a GT4Py
``StencilObject`` that reports what GT4Py's numpy backend reports, calls and runs with GT4Py's
semantics and computes what GT4Py's numpy backend and hand-written NumPy compute. Runs on GT4Py
1.1 (Python 3.11) and 1.2 (Python 3.12): the differences between them are GT4Py's, the backend
takes the same path on both.

Definitions are written once, by a factory that takes the frontend's ``Field`` and axes, so
GT4Py's numpy backend (the oracle) and gtscript build the same text.
"""

import copy
import os
import subprocess
import sys
import textwrap
import types
import warnings

import numpy as np
import pytest

pytest.importorskip("gt4py.cartesian.config", reason="the GT4Py backend needs GT4Py (test extra)")

import gt4py.storage as gt_storage  # noqa: E402
from gt4py.cartesian import backend as gt_backend  # noqa: E402
from gt4py.cartesian import definitions as gt_definitions  # noqa: E402
from gt4py.cartesian import gtscript as gt4py_gtscript  # noqa: E402
from gt4py.cartesian.stencil_object import StencilObject  # noqa: E402

import gtscript  # noqa: E402
import gtscript.gt4py as gts_gt4py  # noqa: E402
from gtscript import BACKWARD, FORWARD, PARALLEL, computation, interval  # noqa: E402
from cuda_emulation.runner import emulate, require_compiler  # noqa: E402
from gt4py_corpus import runner  # noqa: E402

runner.private_gt4py_cache()  # GT4Py's generated numpy code goes to a temporary directory

GTS_BACKENDS = ("gtscript:cpu", "gtscript:numpy", "gtscript:cuda")
_stencil_mod = sys.modules["gtscript.stencil"]


# ----------------------------------------------------------------------------- definitions

def make_definitions(ns):
    """The test's definitions, annotated with ``ns``'s Field and axes (GT4Py's or gtscript's)."""
    Field, IJ, K = ns.Field, ns.IJ, ns.K

    def lap(inp: Field[np.float64], out: Field[np.float64], weight: float):
        with computation(PARALLEL), interval(...):
            out = weight * (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]
                            - 4.0 * inp)

    def plane(inp: Field[np.float64], bias: Field[IJ, np.float64], col: Field[K, np.float64],
              out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[0, 1, 0] + bias + col

    def vec(inp: Field[(np.float64, (2,))], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[0, 0, 0][0] - inp[0, 0, 0][1]

    def sweep(inp: Field[np.float64], acc: Field[np.float64]):
        with computation(FORWARD):
            with interval(0, 1):
                acc = inp
            with interval(1, None):
                acc = acc[0, 0, -1] + inp

    def vdiff(q: Field[np.float64], d: Field[np.float64]):
        with computation(PARALLEL), interval(1, -1):
            d = q[0, 0, 1] - q[0, 0, -1]

    def update(q: Field[np.float64], tend: Field[np.float64], spare: Field[np.float64],
               dt: float, unused: float):
        with computation(PARALLEL), interval(...):
            q = q + dt * tend[0, 1, 0]

    def written_first(a: Field[np.float32], b: Field[np.float32]):
        with computation(PARALLEL), interval(...):
            b = a
            b = b * 2.0

    def ends(a: Field[np.float64], out: Field[np.float64]):
        with computation(BACKWARD):
            with interval(-2, None):
                out = a[0, 0, -1]
            with interval(0, 2):
                out = a[0, 0, 1] + a[0, 0, 2]

    def scaled(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import SCALE

        with computation(PARALLEL), interval(...):
            out = SCALE * inp

    return {f.__name__: f for f in (lap, plane, vec, sweep, vdiff, update, written_first, ends,
                                    scaled)}


GTS = make_definitions(gtscript)
GT4PY = make_definitions(gt4py_gtscript)
EXTERNALS = {"scaled": {"SCALE": 3.0}}


def gt4py_numpy(name):
    """GT4Py's own numpy backend on the definition (the oracle)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gt4py_gtscript.stencil(backend="numpy", definition=GT4PY[name],
                                      externals=EXTERNALS.get(name, {}))


def through_gt4py(definition, backend="gtscript:cpu", **kwargs):
    """gtscript's build of the definition, through GT4Py's API."""
    stencil = gt4py_gtscript.stencil(backend=backend, definition=GTS[definition],
                                     externals=kwargs.pop("externals",
                                                          EXTERNALS.get(definition, {})),
                                     **kwargs)
    if backend == "gtscript:cuda":
        require_compiler()
        emulate(stencil.gtscript_stencil)
    return stencil


@pytest.fixture(params=GTS_BACKENDS)
def gts_backend(request):
    return request.param


# ------------------------------------------------------------------------ registry, storage

def test_importing_registers_the_three_backends_and_their_layouts():
    for name, gts_name in gts_gt4py.BACKEND_NAMES.items():
        cls = gt_backend.from_name(name)
        assert issubclass(cls, gt_backend.Backend) and cls.name == name
        assert cls.GTSCRIPT_BACKEND == gts_name
        assert name in gt_backend.REGISTRY.names
        assert isinstance(cls.options, dict)
        assert all("versioning" in o for o in cls.options.values())
        assert cls.languages["bindings"] == ["python"]
        from gt4py.storage.cartesian import layout_registry
        assert layout_registry.from_name(name) is cls.storage_info
    assert "gpu_arch" in gt_backend.from_name("gtscript:cuda").options
    # GT4Py's own backends are still there
    assert gt_backend.from_name("numpy").name == "numpy"


def test_importing_again_replaces_the_registration():
    import importlib

    before = gt_backend.from_name("gtscript:cpu")
    module = importlib.reload(gts_gt4py)
    after = gt_backend.from_name("gtscript:cpu")
    assert after is module.CpuBackend and after is not before


@pytest.mark.parametrize("name, grid", [("gtscript:cpu", (0, 1, 2)), ("gtscript:numpy", (0, 1, 2)),
                                        ("gtscript:cuda", (2, 1, 0))])
def test_storage_info(name, grid):
    info = gt_backend.from_name(name).storage_info
    assert info["device"] == ("gpu" if name.endswith("cuda") else "cpu")
    assert info["alignment"] == 8
    assert info["layout_map"](("I", "J", "K")) == grid
    assert info["layout_map"](("I", "J")) == ((0, 1) if grid == (0, 1, 2) else (1, 0))
    # data dimensions: GT4Py's allocator puts them outermost
    assert info["layout_map"](("I", "J", "K", "0")) == tuple(g + 1 for g in grid) + (0,)
    c_order, f_order = np.zeros((4, 5, 6)), np.zeros((4, 5, 6), order="F")
    fast, slow = (c_order, f_order) if grid == (0, 1, 2) else (f_order, c_order)
    assert info["is_optimal_layout"](fast, ("I", "J", "K"))
    assert not info["is_optimal_layout"](slow, ("I", "J", "K"))
    assert not info["is_optimal_layout"](fast, ("I", "J"))  # wrong number of dimensions


def test_is_optimal_layout_accepts_data_dimensions_inside_or_outside():
    check = gt_backend.from_name("gtscript:cpu").storage_info["is_optimal_layout"]
    dims = ("I", "J", "K", "0")
    assert check(gtscript.storage.zeros((4, 5, 6), (np.float64, (3,))), dims)   # innermost
    assert check(gt_storage.zeros((4, 5, 6), (np.float64, (3,)), backend="gtscript:cpu"), dims)
    assert not check(np.zeros((4, 5, 6, 3), order="F"), dims)


@pytest.mark.parametrize("name", ["gtscript:cpu", "gtscript:numpy"])
def test_gt4py_storages_are_laid_out_as_gtscript_storage(name):
    gts = name.split(":")[1]
    shape, index = (7, 6, 13), (2, 1, 3)
    for make in (gt_storage.zeros, gt_storage.ones, gt_storage.empty):
        arr = make(shape, np.float64, backend=name, aligned_index=index)
        mine = gtscript.storage.empty(shape, np.float64, backend=gts, aligned_index=index)
        assert isinstance(arr, np.ndarray) and arr.shape == shape and arr.dtype == np.float64
        assert arr.strides == mine.strides == (6 * 16 * 8, 16 * 8, 8)  # K padded to 16
        assert arr[2:, 1:, 3:].ctypes.data % 64 == 0
    assert (gt_storage.zeros(shape, backend=name) == 0).all()
    assert (gt_storage.ones(shape, backend=name) == 1).all()
    assert (gt_storage.full(shape, 2.5, backend=name) == 2.5).all()
    data = np.arange(7 * 6 * 13, dtype=np.float64).reshape(shape)
    arr = gt_storage.from_array(data, backend=name, aligned_index=index)
    assert (arr == data).all() and arr[2:, 1:, 3:].ctypes.data % 64 == 0
    ij = gt_storage.zeros((7, 6), np.float64, backend=name, dimensions=("I", "J"))
    assert ij.strides == (64, 8)  # J padded to 8
    vec = gt_storage.zeros((4, 5, 6), (np.float64, (2,)), backend=name)
    assert vec.shape == (4, 5, 6, 2) and vec.strides[2] == 8  # data dimension outermost


# ------------------------------------------------------------------------ the stencil object

@pytest.mark.parametrize("name", sorted(GTS))
def test_field_parameter_and_domain_info_equal_gt4py_numpy(name):
    ours, theirs = through_gt4py(name), gt4py_numpy(name)
    assert ours.field_info == theirs.field_info
    assert ours.parameter_info == theirs.parameter_info
    assert ours.domain_info == theirs.domain_info
    for info in ours.field_info.values():
        assert type(info) is gt_definitions.FieldInfo
        assert type(info.access) is gt_definitions.AccessKind
        assert type(info.boundary) is gt_definitions.Boundary
    assert type(ours.domain_info) is gt_definitions.DomainInfo


def test_run_time_interval_bound_reads_its_parameter():
    """parameter_info counts a scalar read only as an interval bound (as GT4Py does)."""

    def bounded(a: gtscript.Field[np.float64], out: gtscript.Field[np.float64], nlev: int):
        with computation(PARALLEL), interval(0, nlev):
            out = a

    for backend in ("cpu", "numpy"):
        info = gtscript.stencil(backend, bounded).parameter_info
        assert info["nlev"].access == gtscript.info.AccessKind.READ
    ours = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=bounded)
    assert ours.parameter_info["nlev"].access == gt_definitions.AccessKind.READ


def test_the_stencil_object_has_gt4pys_interface():
    st = through_gt4py("scaled", name="pkg.sub.scale_it")
    ref = gt4py_gtscript.stencil(backend="numpy", definition=GT4PY["scaled"],
                                 externals={"SCALE": 3.0}, name="pkg.sub.scale_it")
    assert isinstance(st, StencilObject)
    assert st.backend == "gtscript:cpu" and ref.backend == "numpy"
    assert st.options == ref.options  # name, module, the build options (no build_info)
    assert st.options["name"] == "scale_it" and st.options["module"] == "pkg.sub"
    assert type(st).__module__ == "pkg.sub" and type(st).__name__.startswith("scale_it____")
    assert isinstance(st._gt_id_, str) and len(st._gt_id_) == 10
    int(st._gt_id_, 16)
    assert st.definition_func is GTS["scaled"]
    assert "SCALE * inp" in st.source["scaled"]
    assert st.constants == {"SCALE": 3.0}
    assert st.gtscript_stencil.backend == "cpu"
    assert type(st)() is st and copy.deepcopy(st) is st  # a singleton, as GT4Py's
    with pytest.raises(AttributeError):
        st.foo = 1
    assert hash(st) == hash(type(st)())
    assert "gtscript:cpu" in str(st)
    # another name is another class; the same options are the same class
    other = through_gt4py("scaled", name="pkg.sub.other")
    assert type(other) is not type(st) and other._gt_id_ != st._gt_id_
    assert type(through_gt4py("scaled", name="pkg.sub.scale_it")) is type(st)


# ------------------------------------------------------------------------------- calling

def _lap_numpy(inp, weight, origin, domain):
    i, j, k = (slice(o, o + d) for o, d in zip(origin, domain))
    c = inp[i, j, k]
    shift = lambda di, dj: inp[i.start + di:i.stop + di, j.start + dj:j.stop + dj, k]  # noqa: E731
    return weight * (shift(1, 0) + shift(-1, 0) + shift(0, 1) + shift(0, -1) - 4.0 * c)


def test_call_matches_gt4py_numpy_and_numpy(fields, gts_backend):
    st, ref = through_gt4py("lap", gts_backend), gt4py_numpy("lap")
    inp = fields.random((9, 8, 5))
    origin, domain = (1, 1, 0), (7, 6, 5)
    for call in (dict(origin=origin, domain=domain),
                 dict(origin={"_all_": origin}, domain=domain),
                 dict(origin={"inp": origin, "out": origin}, domain=domain)):
        ours, theirs = fields.sentinel(inp.shape), fields.sentinel(inp.shape)
        st(inp, ours, 0.5, **call)
        ref(inp, theirs, 0.5, **call)
        np.testing.assert_array_equal(ours, theirs)
        before = fields.sentinel(inp.shape)
        fields.assert_written_only_in(ours, before, origin, domain,
                                      _lap_numpy(inp, 0.5, origin, domain))
    # keyword arguments, validation off
    out = fields.sentinel(inp.shape)
    st(inp=inp, out=out, weight=2.0, origin=(2, 2, 1), domain=(3, 4, 2), validate_args=False)
    fields.assert_written_only_in(out, fields.sentinel(inp.shape), (2, 2, 1), (3, 4, 2),
                                  _lap_numpy(inp, 2.0, (2, 2, 1), (3, 4, 2)))


def test_per_field_origins_with_ij_k_and_data_dimension_fields(fields, gts_backend):
    st, ref = through_gt4py("plane", gts_backend), gt4py_numpy("plane")
    inp, bias, col = fields.random((6, 7, 4)), fields.random((8, 8)), fields.random((6,))
    origin = {"inp": (1, 0, 1), "bias": (2, 1), "col": (2,), "out": (0, 1, 0)}
    domain = (4, 5, 3)
    ours, theirs = fields.sentinel((6, 7, 4)), fields.sentinel((6, 7, 4))
    st(inp, bias, col, ours, origin=origin, domain=domain)
    ref(inp, bias, col, theirs, origin=origin, domain=domain)
    np.testing.assert_array_equal(ours, theirs)
    expect = inp[1:5, 1:6, 1:4] + bias[2:6, 1:6, None] + col[None, None, 2:5]
    fields.assert_written_only_in(ours, fields.sentinel((6, 7, 4)), (0, 1, 0), domain, expect)

    vec, vref = through_gt4py("vec", gts_backend), gt4py_numpy("vec")
    data = fields.random((4, 4, 3, 2))
    ours, theirs = fields.sentinel((4, 4, 3)), fields.sentinel((4, 4, 3))
    # GT4Py's form of a data-dimension field's origin: its axes, then a zero per dimension
    vo = {"inp": (1, 0, 1, 0), "out": (0, 0, 0)}
    vec.run(inp=data, out=ours, _origin_=vo, _domain_=(3, 4, 2), exec_info=None)
    vref.run(inp=data, out=theirs, _origin_=vo, _domain_=(3, 4, 2), exec_info=None)
    np.testing.assert_array_equal(ours, theirs)
    fields.assert_close(ours[:3, :, :2], (data[..., 0] - data[..., 1])[1:, :, 1:])


def test_run_takes_gt4pys_arguments_and_fills_gt4pys_exec_info(fields, gts_backend):
    st, ref = through_gt4py("plane", gts_backend), gt4py_numpy("plane")
    inp, bias, col = fields.random((6, 7, 4)), fields.random((6, 8)), fields.random((4,))
    origin = {"inp": (1, 0, 0), "bias": (1, 1), "col": (0,), "out": (1, 1, 0)}
    infos = []
    outs = []
    for stencil in (st, ref):
        info, out = {}, fields.sentinel((6, 7, 4))
        stencil.run(inp=inp, bias=bias, col=col, out=out, _domain_=(4, 6, 4), _origin_=origin,
                    exec_info=info)
        infos.append(info)
        outs.append(out)
    np.testing.assert_array_equal(*outs)
    assert set(infos[0]) == set(infos[1]) == {"domain", "origin", "run_start_time",
                                              "run_end_time"}
    assert infos[0]["domain"] == infos[1]["domain"] == (4, 6, 4)
    assert infos[0]["origin"] == infos[1]["origin"] == origin
    assert infos[0]["run_start_time"] <= infos[0]["run_end_time"]
    # no exec_info: nothing but the run
    out = fields.sentinel((6, 7, 4))
    st.run(inp=inp, bias=bias, col=col, out=out, _domain_=(4, 6, 4), _origin_=origin,
           exec_info=None)
    np.testing.assert_array_equal(out, outs[0])


def test_frozen_stencil_runs(fields):
    st, ref = through_gt4py("lap"), gt4py_numpy("lap")
    inp = fields.random((8, 8, 3))
    origin = {"inp": (1, 1, 0), "out": (1, 1, 0)}
    results = []
    for stencil in (st, ref):
        out = fields.sentinel(inp.shape)
        info = {}
        stencil.freeze(origin=origin, domain=(6, 6, 3))(inp=inp, out=out, weight=1.5,
                                                         exec_info=info)
        assert info["call_run_start_time"] <= info["run_start_time"] <= info["run_end_time"] \
            <= info["call_run_end_time"]
        results.append(out)
    np.testing.assert_array_equal(*results)


def test_call_exec_info_has_gt4pys_keys(fields, gts_backend):
    st, ref = through_gt4py("lap", gts_backend), gt4py_numpy("lap")
    inp = fields.random((6, 6, 3))
    infos = []
    for stencil in (ref, st):
        info = {"__aggregate_data": True}
        for _ in range(2):
            stencil(inp, np.zeros_like(inp), 1.0, origin=(1, 1, 0), domain=(4, 4, 3),
                    exec_info=info)
        infos.append(info)
    theirs, ours = infos
    assert {k for k, v in theirs.items() if not isinstance(v, dict) or k == "origin"} <= set(ours)
    assert tuple(theirs["domain"]) == ours["domain"]
    assert {k: tuple(v) for k, v in theirs["origin"].items() if k != "_all_"} == ours["origin"]
    their_stats = next(v for v in theirs.values() if isinstance(v, dict) and "ncalls" in v)
    our_stats = next(v for v in ours.values() if isinstance(v, dict) and "ncalls" in v)
    assert set(their_stats) == set(our_stats) and our_stats["ncalls"] == 2
    assert (ours["call_start_time"] <= ours["run_start_time"] <= ours["run_end_time"]
            <= ours["call_end_time"])


def test_validation_errors_and_arrays_left_unchanged(fields, gts_backend):
    st, ref = through_gt4py("lap", gts_backend), gt4py_numpy("lap")
    inp, out = fields.random((6, 6, 3)), fields.sentinel((6, 6, 3))
    bad_dtype = np.zeros((6, 6, 3), np.float32)
    snap = fields.snapshot(inp, out, bad_dtype)
    for stencil in (st, ref):  # the same kind of error as GT4Py's
        with pytest.raises(TypeError, match="out"):
            stencil(inp, bad_dtype, 1.0, origin=(1, 1, 0), domain=(4, 4, 3))
        with pytest.raises(ValueError):
            stencil(inp, out, 1.0, origin=(1, 1, 0), domain=(5, 4, 3))  # reads beyond inp
        with pytest.raises(TypeError):
            stencil(inp, out)  # the scalar is missing
    with pytest.raises((TypeError, ValueError), match="out"):
        st(inp, np.zeros((6, 6)), 1.0, origin=(1, 1, 0), domain=(4, 4, 3))
    fields.assert_unchanged(snap)


def test_run_refuses_what_would_read_outside_an_array(fields, gts_backend):
    """GT4Py's run checks nothing (its numpy backend then reads whatever the indices reach);
    gtscript's run keeps its checks: an error, nothing written."""
    st = through_gt4py("lap", gts_backend)
    inp, out = fields.random((6, 6, 3)), fields.sentinel((6, 6, 3))
    snap = fields.snapshot(inp, out)
    with pytest.raises(ValueError, match="inp"):
        st.run(inp=inp, out=out, weight=1.0, _domain_=(5, 4, 3),
               _origin_={"inp": (1, 1, 0), "out": (1, 1, 0)}, exec_info=None)
    with pytest.raises(TypeError, match="out"):
        st.run(inp=inp, out=out.astype(np.float32), weight=1.0, _domain_=(4, 4, 3),
               _origin_={"inp": (1, 1, 0), "out": (1, 1, 0)}, exec_info=None)
    fields.assert_unchanged(snap)


@pytest.mark.parametrize("name", ["sweep", "vdiff", "update", "written_first", "ends", "scaled"])
def test_results_equal_gt4py_numpy(fields, gts_backend, name):
    st, ref = through_gt4py(name, gts_backend), gt4py_numpy(name)
    shape = (5, 6, 7)
    args, kwargs = {}, {}
    for arg, info in ref.field_info.items():
        args[arg] = fields.random(shape, dtype=info.dtype)
    for arg, info in ref.parameter_info.items():
        args[arg] = info.dtype.type(0.25)
    halo = max(b[1] for info in ref.field_info.values() for b in info.boundary[:2])
    kwargs = dict(origin=(0, 0, 0), domain=(5, 6 - halo, 7))
    ours, theirs = copy.deepcopy(args), copy.deepcopy(args)
    st(**ours, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref(**theirs, **kwargs)
    for arg in ref.field_info:
        np.testing.assert_allclose(ours[arg], theirs[arg], rtol=1e-6, err_msg=arg)


# ------------------------------------------------------------------------ build options

def _count_builds(monkeypatch):
    """Counts the gtscript builds (the C core's) and the StencilObject classes made."""
    counts = {"builds": 0, "classes": 0}
    build, make_class = _stencil_mod._module_from_tree, gts_gt4py._make_class

    def counting_build(*args, **kwargs):
        counts["builds"] += 1
        return build(*args, **kwargs)

    def counting_class(*args, **kwargs):
        counts["classes"] += 1
        return make_class(*args, **kwargs)

    monkeypatch.setattr(_stencil_mod, "_module_from_tree", counting_build)
    monkeypatch.setattr(gts_gt4py, "_make_class", counting_class)
    return counts


def test_cached_build_through_the_registry_builds_nothing(monkeypatch):
    def fresh(a: gtscript.Field[np.float64], b: gtscript.Field[np.float64]):
        with computation(PARALLEL), interval(...):
            b = a + 17.0

    counts = _count_builds(monkeypatch)
    info = {}
    first = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=fresh, build_info=info)
    assert counts == {"builds": 1, "classes": 1}
    assert info["module_source"] in ("build", "disk")
    for _ in range(3):
        info = {}
        again = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=fresh, build_info=info)
        assert again is first
        assert info["module_source"] == "pre-key"
    assert counts == {"builds": 1, "classes": 1}
    # gtscript.stencil directly shares the cache: the same gtscript stencil
    assert gtscript.stencil("cpu", fresh) is first.gtscript_stencil
    assert counts["builds"] == 1


def test_rebuild_builds_again(monkeypatch):
    counts = _count_builds(monkeypatch)
    info = {}
    st = through_gt4py("lap", rebuild=True, build_info=info)
    assert counts["builds"] == 1 and info["module_source"] == "build"
    assert st.options["rebuild"] is True
    through_gt4py("lap", rebuild=True)
    assert counts["builds"] == 2


def test_build_info_has_gt4pys_keys():
    info = {}
    through_gt4py("vdiff", build_info=info, rebuild=True)
    for key in ("parse_time", "module_time", "codegen_time", "build_time", "load_time"):
        assert isinstance(info[key], float) and info[key] >= 0.0, key
    assert info["build_time"] >= info["parse_time"]
    assert info["backend"] == "cpu" and info["cache_key"]


def test_raise_if_not_cached():
    def never_built(a: gtscript.Field[np.float64], b: gtscript.Field[np.float64]):
        from __externals__ import OFFSET

        with computation(PARALLEL), interval(...):
            b = a + OFFSET

    externals = {"OFFSET": float(np.random.default_rng().integers(1 << 40))}
    with pytest.raises(ValueError, match="not up to date in the cache"):
        gt4py_gtscript.stencil(backend="gtscript:cpu", definition=never_built,
                               externals=externals, raise_if_not_cached=True)
    built = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=never_built,
                                   externals=externals)
    again = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=never_built,
                                   externals=externals, raise_if_not_cached=True)
    assert again.gtscript_stencil is built.gtscript_stencil


def test_externals_dtypes_and_precisions(fields):
    ours = through_gt4py("scaled", externals={"SCALE": -2.0})
    inp = fields.random((3, 3, 3))
    out = np.zeros_like(inp)
    ours(inp, out)
    np.testing.assert_array_equal(out, -2.0 * inp)

    def typed(a: gtscript.Field["T"], b: gtscript.Field["T"]):  # noqa: F821
        with computation(PARALLEL), interval(...):
            b = a * 0.1

    st32 = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=typed,
                                  dtypes={"T": np.float32}, literal_float_precision=32)
    assert st32.field_info["a"].dtype == np.float32
    assert st32.gtscript_stencil.options["literal_float_precision"] == 32
    assert st32.options["literal_float_precision"] == 32
    a = fields.random((3, 3, 3), dtype=np.float32)
    b = np.zeros_like(a)
    st32(a, b)
    np.testing.assert_array_equal(b, a * np.float32(0.1))


def test_backend_options(recwarn):
    with pytest.warns(RuntimeWarning, match="Unknown options"):
        through_gt4py("lap", no_such_option=3)
    # other GT4Py backends' options change nothing and say nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st = through_gt4py("lap", device_sync=True, oir_pipeline=None, format_source=False)
    assert st.options["backend_opts"] == {"device_sync": True, "oir_pipeline": None}
    st = through_gt4py("lap", inline_temporaries=False)
    assert st.gtscript_stencil.options["inline_temporaries"] is False
    st = through_gt4py("lap", vector_math=True)  # a framework passes it as GT4Py's option
    assert st.gtscript_stencil.options["vector_math"] is True


# ------------------------------------------------------------------------- without GT4Py

def test_without_gt4py_the_import_says_what_is_missing(tmp_path):
    script = tmp_path / "no_gt4py.py"
    script.write_text(textwrap.dedent("""
        import sys

        class NoGT4Py:
            def find_spec(self, name, path=None, target=None):
                if name == "gt4py" or name.startswith("gt4py."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoGT4Py())
        import gtscript  # gtscript itself needs no GT4Py
        try:
            import gtscript.gt4py
        except ImportError as exc:
            print("ImportError:", exc)
            print("cause:", exc.__cause__)
        else:
            print("imported")
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert "ImportError: gtscript.gt4py registers gtscript as a GT4Py backend and needs " \
           "GT4Py" in done.stdout
    assert "pip install 'gtscript[gt4py]'" in done.stdout
    assert "No module named 'gt4py" in done.stdout


def test_module_namespace_is_not_the_gt4py_package():
    """``gtscript.gt4py`` is gtscript's module: the absolute ``gt4py`` stays GT4Py."""
    import gt4py

    assert isinstance(gts_gt4py, types.ModuleType) and gts_gt4py.__name__ == "gtscript.gt4py"
    assert gt4py.__name__ == "gt4py" and hasattr(gt4py, "cartesian")
