"""GT4Py's own objects in definitions built by ``gtscript.stencil``: under a GT4Py-based
framework (NDSL, PyFV3) a definition's module imports ``gt4py.cartesian.gtscript``, so its
annotations are GT4Py's ``Field[...]`` objects (aliases from another module, string
annotations), its region bounds GT4Py's axis indices (``I[0] + 1`` externals), the functions
it calls GT4Py's ``@gtscript.function`` (directly, through a module, through an alias,
nested), and GT4Py 1.2's ``lazy_function`` and ``enum``. The definitions live in
tests/gt4py_style/ (modules importing GT4Py only); each is built on the cpu and numpy backends
(and the cuda backend through the host emulation for some), compared with GT4Py's numpy
backend (the oracle) and with hand-written NumPy.

Before gtscript read GT4Py's objects (gtscript/frontend/gt4py_objects.py) every definition
here failed at its first parameter ("unsupported dtype _FieldDescriptor(...)"); a GT4Py
function's body was not in the pre-key (a changed body found the stencil built from the old
one); a GT4Py 1.2 lazy function was not a function gtscript could call; gtscript's own
``lazy_function`` refused GT4Py 1.2's ``@lazy_function()`` spelling."""

from __future__ import annotations

import functools
import importlib
import sys
import textwrap
import warnings

import numpy as np
import pytest

pytest.importorskip("gt4py.cartesian.config",
                    reason="GT4Py's objects need GT4Py (pyproject's test extra)")

import gtscript  # noqa: E402
from gtscript import lang  # noqa: E402
from gtscript.frontend import definition_fingerprint  # noqa: E402
from gtscript.frontend.gt4py_objects import from_gt4py  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # GT4Py's dependencies' import warnings
    from gt4py.cartesian import gtscript as gt
    from gt4py_style import definitions, fields, future_definitions, ppm

from cuda_emulation.runner import emulate, require_compiler  # noqa: E402

GT4PY_12 = hasattr(gt, "lazy_function")  # GT4Py 1.2 added lazy_function and enum
SHAPE = (8, 7, 5)
NI, NJ, NK = SHAPE
BACKENDS = ("cpu", "numpy")

#: The externals of FV3's axis offsets (``i_start = I[0] + (is - origin)``), as GT4Py objects.
CORNERS = {"i_start": gt.I[0] + 1, "i_end": gt.I[-1] - 1, "j_start": gt.J[0] + 1,
           "j_end": gt.J[-1], "local_is": gt.I[0]}


def rand(rng, shape=SHAPE, dtype=np.float64):
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def _externals_key(externals):
    return tuple(sorted((k, repr(v)) for k, v in (externals or {}).items()))


@functools.cache
def _gt4py_stencil(defn, externals_key):
    externals = {k: v for k, v in _EXTERNALS_BY_KEY[externals_key].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gt.stencil(backend="numpy", definition=defn, externals=externals)


_EXTERNALS_BY_KEY: dict = {}


def gt4py_run(defn, args, externals=None, **call):
    """``defn`` built and run by GT4Py's numpy backend (the oracle) on copies of ``args``."""
    key = _externals_key(externals)
    _EXTERNALS_BY_KEY[key] = dict(externals or {})
    stencil = _gt4py_stencil(defn, key)
    copies = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stencil(**copies, **call)
    return copies


def gtscript_run(defn, backend, args, externals=None, **call):
    stencil = gtscript.stencil(backend if backend != "cuda" else "cuda", defn,
                               externals=externals)
    if backend == "cuda":
        emulate(stencil, (3, 2))
    copies = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    stencil(**copies, **call)
    return copies


def check(defn, args, expected, externals=None, backends=BACKENDS, rtol=1e-14, **call):
    """Every backend's results equal hand-written NumPy's and GT4Py's numpy backend's."""
    oracle = gt4py_run(defn, args, externals, **call)
    for name, value in expected.items():
        np.testing.assert_allclose(oracle[name], value, rtol=rtol, atol=1e-14,
                                   err_msg=f"GT4Py vs NumPy: {name}")
    for backend in backends:
        ours = gtscript_run(defn, backend, args, externals, **call)
        for name, value in expected.items():
            np.testing.assert_allclose(ours[name], value, rtol=rtol, atol=1e-14,
                                       err_msg=f"{backend} vs NumPy: {name}")
            np.testing.assert_allclose(ours[name], oracle[name], rtol=rtol, atol=1e-14,
                                       err_msg=f"{backend} vs GT4Py: {name}")


# ============================================================================ the objects


def test_gt4py_objects_read_as_the_languages_own():
    assert from_gt4py(gt.I) is lang.I and from_gt4py(gt.IJ) == (lang.I, lang.J)
    assert from_gt4py(gt.I[0] + 1) == lang.I[0] + 1
    assert from_gt4py(gt.I[-1] - 2) == lang.I[-1] - 2
    assert from_gt4py(gt.J[0]) == lang.J[0] and from_gt4py(gt.K[-1]) == lang.K[-1]
    # a NumPy integer offset (GT4Py keeps it, and its own regions then refuse it)
    shifted = from_gt4py(gt.I[0] + np.int64(2))
    assert shifted == lang.I[0] + 2 and type(shifted.offset) is int
    assert from_gt4py(gt.AxisInterval("K", 1, 4)) == lang.AxisInterval("K", 1, 4)
    assert from_gt4py(gt.Field) is lang.Field and from_gt4py(gt.GlobalTable) is lang.GlobalTable
    assert from_gt4py(fields.FloatFieldIJ) == lang.Field[lang.IJ, np.float64]
    assert from_gt4py(fields.FloatFieldK) == lang.Field[lang.K, np.float64]
    assert from_gt4py(fields.Vec3Field) == lang.Field[(np.float64, (3,))]
    assert from_gt4py(fields.Pair32FieldIJ) == lang.Field[lang.IJ, (np.float32, (2,))]
    assert from_gt4py(fields.Table4) == lang.GlobalTable[(np.float64, (4,))]
    assert from_gt4py(gt.Field["T"]) == lang.Field["T"]
    # anything else is itself
    for value in (1, "I", (1, 2), np.float64, fields.Phase.ICE, None):
        assert from_gt4py(value) is value


# ============================================================================ Field objects


def test_field_objects_in_every_spelling(rng):
    """Aliases made in another module (FloatField, Field[IJ, ...], Field[K, ...], an int32
    field, data dimensions) and Field written in place, qualified or not. Failed before:
    "parameter 'a': unsupported dtype _FieldDescriptor(...)"."""
    a, b, q = rand(rng), rand(rng), rand(rng, (NI, NJ))
    s, dz = rand(rng, (NI, NJ)), rand(rng, (NK,))
    n = rng.integers(-5, 5, SHAPE).astype(np.int32)
    v, w = rand(rng, SHAPE + (3,)), rand(rng, (NI, NJ, 2), np.float32)
    args = {"a": a, "s": s, "dz": dz, "n": n, "v": v, "w": w, "b": b, "c": q,
            "out": np.zeros(SHAPE), "vout": np.zeros(SHAPE + (3,))}
    out = a + s[..., None] * dz + n + v[..., 2] + w[..., 1, None].astype(np.float64) + b \
        - q[..., None]
    vout = np.stack([v[..., 1], 2.0 * v[..., 2],
                     np.broadcast_to(w[..., 0, None].astype(np.float64), SHAPE)], axis=-1)
    check(definitions.annotations, args, {"out": out, "vout": vout},
          backends=(*BACKENDS, "cuda"))
    params = {p[1]: p[2:] for p in gtscript.stencil("cpu", definitions.annotations)
              .ir_tree()["params"]}
    assert params["s"] == ("float64", "IJ", ()) and params["dz"] == ("float64", "K", ())
    assert params["n"] == ("int32", "IJK", ()) and params["w"] == ("float32", "IJ", (2,))
    assert params["v"] == ("float64", "IJK", (3,)) and params["vout"] == ("float64", "IJK", (3,))


def test_string_annotations_naming_gt4py_objects(rng):
    """``from __future__ import annotations``: the strings name GT4Py's objects, aliases
    imported from another module and reached through it (``fields.FloatFieldK``)."""
    assert all(isinstance(a, str) for a in future_definitions.strings.__annotations__.values())
    a, s, dz, b = rand(rng), rand(rng, (NI, NJ)), rand(rng, (NK,)), rand(rng, (NI, NJ))
    v, c = rand(rng, SHAPE + (3,)), rand(rng, SHAPE + (3,))
    args = {"a": a, "s": s, "v": v, "dz": dz, "b": b, "c": c, "out": np.zeros(SHAPE),
            "scale": 0.5}
    expected = 0.5 * a + s[..., None] * dz + v[..., 0] + b[..., None] + c[..., 2]
    check(future_definitions.strings, args, {"out": expected})


def test_global_table_of_gt4py(rng):
    """GT4Py's ``GlobalTable[(dtype, (n,))]`` (GT4Py 1.1 and 1.2 both have it: an array
    without grid axes read as ``table.A[i]``)."""
    coef, x = rand(rng, (4,)), rand(rng)
    args = {"coef": coef, "x": x, "out": np.zeros(SHAPE)}
    check(definitions.table, args, {"out": coef[0] + coef[1] * x + coef[3] * x * x})


def test_column_with_ij_and_k_field_aliases(rng):
    a, sfc, dz = rand(rng), rand(rng, (NI, NJ)), rand(rng, (NK,))
    expected = np.zeros(SHAPE)
    expected[..., 0] = sfc + a[..., 0]
    for k in range(1, NK):
        expected[..., k] = expected[..., k - 1] + a[..., k] * dz[k]
    check(definitions.column, {"a": a, "sfc": sfc, "dz": dz, "out": np.zeros(SHAPE)},
          {"out": expected}, rtol=1e-13)


# ============================================================================ axis indices


def corners_numpy(q, ext, origin, domain):
    """Hand-written NumPy of definitions.corners: a bound (level, offset) is the domain's
    start (level 0) or end (level 1) plus offset, relative to the origin."""
    out = np.zeros(SHAPE)
    o, n = origin, domain
    sl = tuple(slice(o[d], o[d] + n[d]) for d in range(3))
    res = q[sl].copy()

    def at(index, size):  # a lang.AxisIndex -> a compute-domain position
        return (0 if index.level == 0 else size) + index.offset

    e = {k: from_gt4py(v) for k, v in ext.items()}
    i = np.arange(n[0])[:, None, None]
    j = np.arange(n[1])[None, :, None]
    qd = q[sl]
    mask = (i == at(e["i_start"] - 1, n[0])) | (i == at(e["i_end"] + 1, n[0]))
    res = np.where(mask, 2.0 * qd, res)
    mask = (i >= at(e["local_is"], n[0])) & (i < at(e["i_start"] + 2, n[0])) \
        & (j == at(e["j_start"], n[1]))
    res = np.where(mask, res + 10.0, res)
    res = np.where(j == at(e["j_end"], n[1]), res - 1.0, res)
    res = np.where((i == 1) & (j == n[1] - 2), res + 100.0, res)  # FIRST_TWO, J[-1] - 1
    res = np.where((i == n[0] - 1) & (j >= at(e["j_start"], n[1])), res + 1000.0, res)
    out[sl] = res
    return out


@pytest.mark.parametrize("ext", [
    CORNERS,
    {"i_start": gt.I[0] + 2, "i_end": gt.I[-1] - 2, "j_start": gt.J[0],
     "j_end": gt.J[-1] - 1, "local_is": gt.I[0] + 1},
], ids=["fv3", "shifted"])
def test_axis_index_externals_in_regions(rng, ext):
    """GT4Py's ``I[0] + 1``, ``I[-1] - 1``, ``J[0]``, ``J[-1]`` as externals, shifted again
    in the definition (``region[i_start - 1, :]``, ``local_is : i_start + 2``), a module global
    holding one, and the one-line ``horizontal``."""
    q = rand(rng)
    origin, domain = (1, 1, 0), (NI - 2, NJ - 2, NK)
    expected = corners_numpy(q, ext, origin, domain)
    check(definitions.corners, {"q": q, "out": np.zeros(SHAPE)}, {"out": expected},
          externals=ext, backends=(*BACKENDS, "cuda"), origin=origin, domain=domain)


def test_axis_indices_through_gt4py_module_beyond_gt4py(rng):
    """``region[gtscript.I[-1], gtscript.J[0] : gtscript.J[0] + 2]`` with GT4Py's module:
    GT4Py refuses it, gtscript reads it as ``I[-1]`` (checked against NumPy)."""
    with pytest.raises(Exception, match="Invalid interval range"):
        gt4py_run(definitions.module_axes, {"q": np.zeros(SHAPE), "out": np.zeros(SHAPE)})
    q = rand(rng)
    expected = q.copy()
    expected[-1, 0:2] += 1.0
    for backend in BACKENDS:
        out = gtscript_run(definitions.module_axes, backend, {"q": q, "out": np.zeros(SHAPE)})
        np.testing.assert_array_equal(out["out"], expected)


# ============================================================================ functions


def fluxes_numpy(q, c, limit):
    up = np.where(c[1:] > 0.0, q[:-1], q[1:])  # q[-1, 0, 0]: the domain starts at i = 1
    sign = np.where(c[1:] < 0.0, -q[1:], q[1:])
    lim = np.minimum(np.maximum(up, -limit), limit)
    return up + sign, lim


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
def test_gt4py_functions_called_directly_through_a_module_and_nested(rng, backend):
    """GT4Py's ``@gtscript.function``: ``ppm.upwind`` (a module attribute), ``fv_ppm.sign``
    (``import ... as``), ``limited`` (imported by name; nested call, an external imported
    inside it), ``edge_sum`` (calls two GT4Py functions). Failed before (after the field
    annotations were read): "'ppm.upwind': not a gtscript function"."""
    if backend == "cuda":
        require_compiler()
    q, c = rand(rng), rand(rng)
    args = {"q": q, "c": c, "out": np.zeros(SHAPE), "lim": np.zeros(SHAPE), "e": np.zeros(SHAPE)}
    call = {"origin": (1, 0, 0), "domain": (NI - 2, NJ, NK)}
    flux, lim = fluxes_numpy(q, c, 0.5)
    inner = slice(1, NI - 1)
    qd = q[inner]
    qp = q[2:]
    sign_e = np.where(qd < 0.0, -qp, qp)
    lim_e = np.minimum(np.maximum(np.where(qd > 0.0, q[:-2], qd), -0.5), 0.5)
    expected = {name: np.zeros(SHAPE) for name in ("out", "lim", "e")}
    expected["out"][inner], expected["lim"][inner] = flux[:-1], lim[:-1]
    expected["e"][inner] = sign_e + lim_e
    check(definitions.fluxes, args, expected, externals={"LIMIT": 0.5}, backends=(backend,),
          **call)


def test_a_gt4py_function_as_an_external(rng):
    q, c = rand(rng), rand(rng)
    expected = np.zeros(SHAPE)
    expected[1:] = np.where(c[1:] > 0.0, q[:-1], q[1:])
    check(definitions.function_external, {"q": q, "c": c, "out": np.zeros(SHAPE)},
          {"out": expected}, externals={"FLUX": ppm.upwind}, origin=(1, 0, 0),
          domain=(NI - 1, NJ, NK))


def test_axis_indices_held_in_a_dict_and_a_tuple_beyond_gt4py(rng):
    """GT4Py refuses a dict or a tuple as an external; gtscript reads the GT4Py axis indices
    they hold (checked against NumPy)."""
    ext = {"BOUNDS": {"west": gt.I[0] + 1}, "EDGES": (gt.J[0], gt.J[-1] - 1)}
    with pytest.raises(Exception, match="invalid value for external symbol"):
        gt4py_run(definitions.held_bounds, {"q": np.zeros(SHAPE), "out": np.zeros(SHAPE)}, ext)
    q = rand(rng)
    expected = q.copy()
    expected[1, NJ - 2] += 1.0
    for backend in BACKENDS:
        out = gtscript_run(definitions.held_bounds, backend, {"q": q, "out": np.zeros(SHAPE)},
                           ext)
        np.testing.assert_array_equal(out["out"], expected)


def test_a_plain_function_of_a_gt4py_module_is_still_refused(tmp_path, monkeypatch):
    module = _write_module(tmp_path, monkeypatch, "gt4py_plain_fn", """
        import numpy as np
        from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

        def twice(a):
            return 2.0 * a

        def uses(a: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = twice(a)
    """)
    with pytest.raises(gtscript.errors.GTScriptSyntaxError, match="not a gtscript function"):
        gtscript.stencil("numpy", module.uses)


# ============================================================================ enums


def test_int_enum_members_as_externals_and_globals(rng):
    """An IntEnum member as an external and through a module global (``Phase.ICE``), and
    compared with an int field: GT4Py 1.1 and 1.2 read members as their ints (this worked
    before: IntEnum members are ints)."""
    t = rand(rng)
    n = rng.integers(0, 3, SHAPE).astype(np.int32)
    for phase in fields.Phase:
        args = {"t": t, "n": n, "out": np.zeros(SHAPE)}
        out = t + 2.0 if phase is fields.Phase.ICE else t - 2.0
        out = np.where(n == 1, out * 10.0, out)
        check(definitions.phases, args, {"out": out}, externals={"PHASE": phase})


def test_a_plain_enum_member_is_refused_as_gt4py_refuses_it(tmp_path, monkeypatch):
    module = _write_module(tmp_path, monkeypatch, "gt4py_plain_enum", """
        import enum

        import numpy as np
        from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

        class Colour(enum.Enum):
            RED = 1

        def uses(a: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = a + Colour.RED
    """)
    with pytest.raises(Exception, match="invalid value for external symbol Colour.RED"):
        gt4py_run(module.uses, {"a": np.zeros(SHAPE), "out": np.zeros(SHAPE)})
    with pytest.raises(gtscript.errors.GTScriptSyntaxError, match="not a number"):
        gtscript.stencil("numpy", module.uses)


def test_gt4py_12_enum_registered_with_its_decorator(tmp_path, monkeypatch, rng):
    """GT4Py 1.2's ``@gtscript.enum`` (IntEnum classes only); GT4Py 1.1 has no ``enum``."""
    if not GT4PY_12:
        assert not hasattr(gt, "enum")
        return
    module = _write_module(tmp_path, monkeypatch, "gt4py_reg_enum", """
        import enum

        import numpy as np
        from gt4py.cartesian import gtscript
        from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

        @gtscript.enum
        class RegisteredLevel(enum.IntEnum):
            LOW = 3
            HIGH = 7

        def uses(a: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                if a > 0.0:
                    out = a + RegisteredLevel.HIGH
                else:
                    out = a - RegisteredLevel.LOW
    """)
    a = rand(rng)
    check(module.uses, {"a": a, "out": np.zeros(SHAPE)},
          {"out": np.where(a > 0.0, a + 7.0, a - 3.0)})


# ============================================================================ lazy functions


LAZY_SOURCE = """
    import numpy as np
    from gt4py.cartesian import gtscript
    from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

    CALLS = []


    @gtscript.lazy_function()
    def lazy_twice(a):
        return 2.0 * a


    @gtscript.lazy_function(before_annotation=lambda f: CALLS.append(("before", f.__name__)),
                            after_annotation=lambda f: CALLS.append(("after", f.__name__)))
    def lazy_hooked(a):
        return lazy_twice(a) + 1.0


    def uses(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = lazy_hooked(a) - lazy_twice(a[1, 0, 0])
"""


def test_gt4py_12_lazy_functions(tmp_path, monkeypatch, rng):
    """GT4Py 1.2's ``@gtscript.lazy_function(...)`` binds the name to a closure that
    annotates the function when called: gtscript reads the function it wraps, running its
    hooks once. GT4Py 1.1 has no ``lazy_function``. Failed before: "'lazy_hooked': not a
    gtscript function"."""
    if not GT4PY_12:
        assert not hasattr(gt, "lazy_function")
        return
    module = _write_module(tmp_path, monkeypatch, "gt4py_lazy", LAZY_SOURCE)
    a = rand(rng)
    expected = np.zeros(SHAPE)
    expected[:-1] = 2.0 * a[:-1] + 1.0 - 2.0 * a[1:]
    # the hooks have not run: no pre-key (they may change what is read), a build runs them
    assert definition_fingerprint(module.uses) is None
    for backend in BACKENDS:
        out = gtscript_run(module.uses, backend, {"a": a, "out": np.zeros(SHAPE)},
                           domain=(NI - 1, NJ, NK))
        np.testing.assert_allclose(out["out"], expected, rtol=1e-15)
    assert module.CALLS == [("before", "lazy_hooked"), ("after", "lazy_hooked")]
    assert definition_fingerprint(module.uses) is not None  # read now: its record is the key
    oracle = gt4py_run(module.uses, {"a": a, "out": np.zeros(SHAPE)}, domain=(NI - 1, NJ, NK))
    np.testing.assert_allclose(oracle["out"], expected, rtol=1e-15)


def test_gtscript_lazy_function_takes_gt4py_12_spelling(rng):
    """gtscript's own ``lazy_function`` with GT4Py 1.2's spelling: ``@lazy_function()`` and
    its hooks. Failed before: "lazy_function() missing 1 required positional argument"."""
    calls = []

    @gtscript.lazy_function()
    def plain(x):
        return x + 1.0

    @gtscript.lazy_function(before_annotation=lambda f: calls.append(("before", f)),
                            after_annotation=lambda f: calls.append(("after", f)))
    def hooked(x):
        return 3.0 * plain(x)

    def uses(a: gtscript.Field[np.float64], out: gtscript.Field[np.float64]):
        with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
            out = hooked(a)

    assert calls == []
    a = rand(rng)
    for backend in BACKENDS:
        out = gtscript_run(uses, backend, {"a": a, "out": np.zeros(SHAPE)})
        np.testing.assert_allclose(out["out"], 3.0 * (a + 1.0), rtol=1e-15)
    assert calls == [("before", hooked), ("after", hooked)]


# ============================================================================ the pre-key


def _write_module(tmp_path, monkeypatch, name, source):
    """Import ``source`` as module ``name`` from ``tmp_path`` (again if it exists; no
    bytecode cache, which a rewrite of the same size within a second would not invalidate)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    importlib.invalidate_caches()
    if name in sys.modules:
        return importlib.reload(sys.modules[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(name)


def test_a_changed_axis_index_external_or_global_rebuilds(rng, tmp_path, monkeypatch):
    q = rand(rng)
    call = {"origin": (1, 1, 0), "domain": (NI - 2, NJ - 2, NK)}
    shifted = {**CORNERS, "i_start": gt.I[0] + 2}
    key = definition_fingerprint(definitions.corners, CORNERS)
    assert key is not None and key == definition_fingerprint(definitions.corners, dict(CORNERS))
    assert definition_fingerprint(definitions.corners, shifted) != key
    assert definition_fingerprint(definitions.corners, {**CORNERS, "i_end": gt.I[-1]}) != key
    first = gtscript_run(definitions.corners, "cpu", {"q": q, "out": np.zeros(SHAPE)},
                         CORNERS, **call)
    second = gtscript_run(definitions.corners, "cpu", {"q": q, "out": np.zeros(SHAPE)},
                          shifted, **call)
    np.testing.assert_array_equal(second["out"], corners_numpy(q, shifted, call["origin"],
                                                               call["domain"]))
    assert not np.array_equal(first["out"], second["out"])
    # a module global holding GT4Py's axis index, changed in the module's file
    source = """
        import numpy as np
        from gt4py.cartesian.gtscript import PARALLEL, Field, I, computation, horizontal
        from gt4py.cartesian.gtscript import interval, region

        BOUND = I[0] + {}

        def marks(out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = 0.0
                with horizontal(region[BOUND, :]):
                    out = 1.0
    """
    for shift in (1, 3):
        module = _write_module(tmp_path, monkeypatch, "gt4py_bound_global", source.format(shift))
        out = gtscript_run(module.marks, "cpu", {"out": np.zeros(SHAPE)})["out"]
        assert np.flatnonzero(out[:, 0, 0]).tolist() == [shift]


FUNCTIONS_SOURCE = """
    from gt4py.cartesian import gtscript

    @gtscript.function
    def scaled(a):
        return {} * a
"""

DEFINITION_SOURCE = """
    import numpy as np
    from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

    import gt4py_prekey_fns as fns
    from gt4py_prekey_fns import scaled

    def uses(a: Field[np.float64], out: Field[np.float64], out2: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = scaled(a)
            out2 = fns.scaled(a + 1.0)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_changed_gt4py_function_body_rebuilds(rng, tmp_path, monkeypatch, backend):
    """The body of a GT4Py function in another module is in the pre-key: rewritten (and its
    modules reloaded), the same decoration builds the new body. Failed before: the stencil
    built from the old body was found (a GT4Py function entered the key by its name)."""
    a = rand(rng)
    keys = []
    for factor in ("2.0", "30.0"):
        _write_module(tmp_path, monkeypatch, "gt4py_prekey_fns", FUNCTIONS_SOURCE.format(factor))
        module = _write_module(tmp_path, monkeypatch, "gt4py_prekey_defs", DEFINITION_SOURCE)
        keys.append(definition_fingerprint(module.uses))
        out = gtscript_run(module.uses, backend,
                           {"a": a, "out": np.zeros(SHAPE), "out2": np.zeros(SHAPE)})
        np.testing.assert_array_equal(out["out"], float(factor) * a)
        np.testing.assert_array_equal(out["out2"], float(factor) * (a + 1.0))
    assert None not in keys and keys[0] != keys[1]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_gt4py_field_placeholders_resolved_by_dtypes(rng, dt):
    """GT4Py's ``Field["T"]`` and ``Field[IJ, ("T", (2,))]`` with ``dtypes={"T": ...}``."""
    a, b = rand(rng, dtype=dt), rand(rng, (NI, NJ, 2), dt)
    args = {"a": a, "b": b, "out": np.zeros(SHAPE, dt)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = gt.stencil(backend="numpy", definition=definitions.placeholder,
                            dtypes={"T": dt})
        expected = {k: v.copy() for k, v in args.items()}
        oracle(**expected)
    np.testing.assert_allclose(expected["out"], a * b[..., 1, None] + b[..., 0, None],
                               rtol=1e-6)
    for backend in BACKENDS:
        st = gtscript.stencil(backend, definitions.placeholder, dtypes={"T": dt})
        assert ("field", "b", np.dtype(dt).name, "IJ", (2,)) in st.ir_tree()["params"]
        ours = {k: v.copy() for k, v in args.items()}
        st(**ours)
        np.testing.assert_array_equal(ours["out"], expected["out"])


def test_a_changed_field_alias_in_another_module_rebuilds(tmp_path, monkeypatch):
    """``FloatField = Field[np.float32]`` made float64 in its module: the same decoration
    builds float64 parameters."""
    definition = """
        from gt4py.cartesian.gtscript import PARALLEL, computation, interval

        from gt4py_alias_types import FloatField

        def copy(a: FloatField, out: FloatField):
            with computation(PARALLEL), interval(...):
                out = a
    """
    for dtype in ("float32", "float64"):
        _write_module(tmp_path, monkeypatch, "gt4py_alias_types", f"""
            import numpy as np
            from gt4py.cartesian.gtscript import Field

            FloatField = Field[np.{dtype}]
        """)
        module = _write_module(tmp_path, monkeypatch, "gt4py_alias_defs", definition)
        st = gtscript.stencil("cpu", module.copy)
        assert ("field", "a", dtype, "IJK", ()) in st.ir_tree()["params"]


@pytest.mark.parametrize("use_exp", [True, False])
def test_gt4py_builtins_imported_by_name(rng, use_exp):
    """``sqrt``, ``exp``, ``abs``, ``min``, ``max``, ``__INLINED``, ``compile_assert`` imported
    from GT4Py's module (GT4Py's functions, called by their names), a bool field alias."""
    a = rand(rng)
    mask = rng.integers(0, 2, SHAPE).astype(bool)
    out = np.exp(a) + np.sqrt(np.abs(a)) if use_exp else np.maximum(a, 0.0) + 2.0 * np.minimum(a, 0.0)
    acc = np.flip(np.cumsum(np.flip(a, axis=2), axis=2), axis=2)
    check(definitions.builtins_by_name,
          {"a": a, "mask": mask, "out": np.zeros(SHAPE), "acc": np.zeros(SHAPE)},
          {"out": np.where(mask, -out, out), "acc": acc}, externals={"USE_EXP": use_exp},
          rtol=1e-13)


def test_gt4py_axes_as_values_and_in_the_offset_shorthand(rng):
    a = rand(rng)
    call = {"origin": (1, 0, 0), "domain": (NI - 1, NJ - 1, NK)}
    expected = np.zeros(SHAPE)
    ks = np.arange(NK)
    expected[1:, :-1] = ks * a[1:, 1:]
    expected[1:, :-1, 1] = a[:-1, :-1, 1] + 100.0
    check(definitions.axes_as_values, {"a": a, "out": np.zeros(SHAPE)}, {"out": expected},
          **call)


def test_a_gt4py_function_reads_its_globals_as_they_were_when_decorated(tmp_path, monkeypatch,
                                                                        rng):
    """GT4Py inlines the values a function's globals had when ``@gtscript.function`` ran
    (``_gtscript_["nonlocals"]``), as gtscript's own functions do: a global rebound later
    does not change the stencil, nor its pre-key. Failed before: gtscript read the rebound
    value (2.0 where GT4Py computes with 1.0)."""
    module = _write_module(tmp_path, monkeypatch, "gt4py_rebound", """
        import numpy as np
        from gt4py.cartesian import gtscript
        from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

        COEF = 1.0

        @gtscript.function
        def scaled(a):
            return COEF * a

        def uses(a: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = scaled(a)
    """)
    key = definition_fingerprint(module.uses)
    monkeypatch.setattr(module, "COEF", 2.0)
    assert definition_fingerprint(module.uses) == key
    a = rand(rng)
    check(module.uses, {"a": a, "out": np.zeros(SHAPE)}, {"out": a})
    assert definition_fingerprint(module.uses) == key


def test_a_gt4py_field_gtscript_cannot_read_names_the_parameter(tmp_path, monkeypatch):
    """GT4Py builds ``Field[(J, I), ...]`` (axes out of order) without a word; gtscript
    refuses it at the parameter, with its line, as for its own ``Field``."""
    module = _write_module(tmp_path, monkeypatch, "gt4py_bad_axes", """
        import numpy as np
        from gt4py.cartesian.gtscript import PARALLEL, Field, I, J, computation, interval

        def swapped(a: Field[np.float64], b: Field[(J, I), np.float64]):
            with computation(PARALLEL), interval(...):
                a = 1.0
    """)
    with pytest.raises(gtscript.errors.GTScriptDefinitionError,
                       match="parameter 'b'.*unsupported field axes JI") as info:
        gtscript.stencil("numpy", module.swapped)
    assert info.value.lineno == 5
