"""A model on a small NDSL-like framework (tests/ndsl_like/), which knows only GT4Py's API, run
on gtscript's GT4Py backends by changing its backend string: FV3-style regions with ``I[0] + n``
externals, a corner fill in place (one array as input and output), an argument the build does
not use (a 3-D array where a 2-D field is declared), column searches and a multi-stencil model
step. Every gtscript backend's result equals GT4Py's own numpy backend's (the same framework,
backend "numpy") and hand-written NumPy.

``GTSCRIPT_GT4PY_BACKENDS=numpy`` runs the file on GT4Py's numpy backend only (a check of the
test itself)."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

pytest.importorskip("gt4py.cartesian.config", reason="the framework test needs GT4Py (pyproject's gt4py extra)")

import gt4py
from gt4py.cartesian import config as gt_config
from gt4py.cartesian.definitions import AccessKind

import gtscript.gt4py  # noqa: F401  (registers the gtscript backends in GT4Py's registry)
import gt4py.storage as gt_storage
from cuda_emulation.runner import emulate, require_compiler
from ndsl_like import GridIndexing, StencilConfig, StencilFactory
from ndsl_like import stencils as st


BACKENDS = tuple(os.environ.get("GTSCRIPT_GT4PY_BACKENDS", "gtscript:cpu,gtscript:numpy,gtscript:cuda").split(","))
GRID = GridIndexing(nx=7, ny=6, nz=5, n_halo=2)


@pytest.fixture(scope="module")
def gt4py_cache(tmp_path_factory):
    """NDSL points ``config.cache_settings`` at its own directory; the fixture restores it."""
    saved = dict(gt_config.cache_settings)
    yield str(tmp_path_factory.mktemp("gt4py-framework-cache"))
    gt_config.cache_settings.clear()
    gt_config.cache_settings.update(saved)


def _factory(backend: str, cache_root: str) -> StencilFactory:
    if backend == "gtscript:cuda":
        require_compiler()
        config = StencilConfig(backend=backend, storage_backend="gtscript:cpu")  # host arrays
    else:
        config = StencilConfig(backend=backend)
    return StencilFactory(config, GRID, cache_root=cache_root)


def _stencil(factory: StencilFactory, func, origin, domain, externals=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stencil = factory.from_origin_domain(func, origin, domain, externals=externals)
    if factory.config.backend == "gtscript:cuda":
        emulate(stencil.stencil_object.gtscript_stencil)
    return stencil


def _random(factory: StencilFactory, seed: int, dims=("I", "J", "K")) -> np.ndarray:
    rng = np.random.default_rng(seed)
    full = dict(zip("IJK", GRID.shape))
    return factory.from_array(rng.uniform(-1.0, 1.0, tuple(full[d] for d in dims)), dims)


def _close(got, want, what):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-13, err_msg=what)


# =============================================================== the framework's own reads


@pytest.mark.parametrize("backend", BACKENDS)
def test_framework_reads_gt4py_metadata(backend, gt4py_cache):
    """What NDSL reads off a stencil and a backend: ``field_info`` axes and write access
    (``AccessKind``), per-field origins, the storage layout GT4Py's allocator gives."""
    factory = _factory(backend, gt4py_cache)
    stencil = _stencil(factory, st.scale_or_add, GRID.origin_compute, GRID.domain_compute,
                       externals={"USE_BIAS": True})
    info = stencil.stencil_object.field_info
    assert tuple(info["q"].axes) == ("I", "J", "K")
    assert tuple(info["bias"].axes) == ("I", "J")
    assert stencil.written_fields == ["out"]
    assert info["q"].access & AccessKind.READ and not info["q"].access & AccessKind.WRITE
    assert stencil._field_origins == {"_all_": (2, 2, 0), "q": (2, 2, 0), "bias": (2, 2), "out": (2, 2, 0)}
    assert stencil.build_info, "build_info is filled"
    assert gt_config.cache_settings["root_path"] == gt4py_cache
    q = factory.zeros()
    assert q.shape == GRID.shape and factory.is_optimal_layout(q)
    assert factory.storage_info()["device"] == "cpu"
    if backend.startswith("gtscript:"):
        assert stencil.stencil_object.backend == backend


# =============================================================== regions with I[0] + n


def _edge_update_numpy(q, w):
    h, nx, ny = GRID.n_halo, GRID.nx, GRID.ny
    out = np.zeros_like(q)
    i0, i1, j0, j1 = h, h + nx - 1, h, h + ny - 1
    c = (slice(i0, i1 + 1), slice(j0, j1 + 1))
    out[c] = q[c] + w * (np.roll(q, 1, 0)[c] + np.roll(q, -1, 0)[c] + np.roll(q, 1, 1)[c]
                         + np.roll(q, -1, 1)[c] - 4.0 * q[c])
    for i in (i0, i1):
        out[i, j0:j1 + 1] = 0.5 * (q[i, j0 - 1:j1] + q[i, j0 + 1:j1 + 2])
    for j in (j0, j1):
        out[i0:i1 + 1, j] = 0.5 * (q[i0 - 1:i1, j] + q[i0 + 1:i1 + 2, j])
    for i in (i0, i1):
        for j in (j0, j1):
            out[i, j] = q[i, j]
    return out


def _edge_update(backend, cache, origin, domain):
    factory = _factory(backend, cache)
    stencil = _stencil(factory, st.edge_update, origin, domain)
    q, out = _random(factory, 1), factory.zeros()
    stencil(q, out, 0.1)
    return np.asarray(q), np.asarray(out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_regions_with_axis_offset_externals(backend, gt4py_cache):
    """FV3's edge regions, ``region[i_start, :]`` with ``i_start = I[0] + n``, on the compute
    domain and on the compute domain with one halo point (the offsets move with the call's
    origin): the gtscript backend, GT4Py's numpy backend and NumPy agree."""
    for origin, domain in ((GRID.origin_compute, GRID.domain_compute), GRID.domain_with_halo(1)):
        q, got = _edge_update(backend, gt4py_cache, origin, domain)
        _, oracle = _edge_update("numpy", gt4py_cache, origin, domain)
        want = _edge_update_numpy(q, 0.1)
        inside = tuple(slice(o, o + d) for o, d in zip(GRID.origin_compute, GRID.domain_compute))
        _close(got[inside], want[inside], f"{backend} vs NumPy, origin {origin}")
        _close(got, oracle, f"{backend} vs GT4Py numpy, origin {origin}")


# =============================================================== corner fill in place


def _fill_corners_numpy(q):
    q = q.copy()
    h, nx, ny = GRID.n_halo, GRID.nx, GRID.ny
    i0, i1, j0, j1 = h, h + nx - 1, h, h + ny - 1
    src = q.copy()
    for (i, j), (di, dj) in {
        (i0 - 1, j0 - 1): (0, 1), (i0 - 2, j0 - 1): (1, 2), (i1 + 1, j0 - 1): (0, 1), (i1 + 2, j0 - 1): (-1, 2),
        (i0 - 1, j1 + 1): (0, -1), (i0 - 2, j1 + 1): (1, -2), (i1 + 1, j1 + 1): (0, -1), (i1 + 2, j1 + 1): (-1, -2),
    }.items():
        q[i, j] = src[i + di, j + dj]
    return q


@pytest.mark.parametrize("backend", BACKENDS)
def test_corner_fill_in_place(backend, gt4py_cache):
    """NDSL's ``fill_corners_x(q, q)``: one array as input and output, over the compute domain
    and its halo (regions relative to it): equal to NumPy and to GT4Py's numpy backend."""
    results = {}
    for b in dict.fromkeys((backend, "numpy")):
        factory = _factory(b, gt4py_cache)
        stencil = _stencil(factory, st.fill_corners_x, *GRID.domain_with_halo(GRID.n_halo))
        q = _random(factory, 2)
        before = np.asarray(q).copy()
        stencil(q, q)
        results[b] = np.asarray(q)
    _close(results[backend], _fill_corners_numpy(before), f"{backend} vs NumPy")
    _close(results[backend], results["numpy"], f"{backend} vs GT4Py numpy")


# =============================================================== unused argument


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_argument_of_another_shape(backend, gt4py_cache):
    """A build without USE_BIAS never reads ``bias`` (access NONE): the model passes a 3-D
    array where a 2-D field is declared, as GT4Py allows; the array is left alone."""
    results = {}
    for b in dict.fromkeys((backend, "numpy")):
        factory = _factory(b, gt4py_cache)
        stencil = _stencil(factory, st.scale_or_add, GRID.origin_compute, GRID.domain_compute,
                           externals={"USE_BIAS": False})
        info = stencil.stencil_object.field_info["bias"]
        assert info is None or info.access == AccessKind.NONE
        q, out = _random(factory, 3), factory.zeros()
        wrong = _random(factory, 4)  # 3-D, declared IJ
        kept = np.asarray(wrong).copy()
        stencil(q, wrong, out, 2.0)
        np.testing.assert_array_equal(np.asarray(wrong), kept)
        results[b] = (np.asarray(q), np.asarray(out))
    q, out = results[backend]
    inside = tuple(slice(o, o + d) for o, d in zip(GRID.origin_compute, GRID.domain_compute))
    _close(out[inside], 2.0 * q[inside], f"{backend} vs NumPy")
    _close(out, results["numpy"][1], f"{backend} vs GT4Py numpy")


# =============================================================== column searches


def _first_level_numpy(q, thresh):
    above = q > thresh
    first = np.where(above.any(axis=2), above.argmax(axis=2), -1)
    return np.broadcast_to(first[:, :, None], q.shape)


@pytest.mark.parametrize("backend", BACKENDS)
def test_column_search(backend, gt4py_cache):
    """A FORWARD search with a found flag (the first level above a threshold, spread down the
    column by a BACKWARD sweep) and a while loop inside each point. GT4Py's oracle here is its
    debug backend: GT4Py 1.1's numpy backend runs such a while loop one iteration short."""
    results = {}
    for b in dict.fromkeys((backend, "debug")):
        factory = _factory(b, gt4py_cache)
        search = _stencil(factory, st.first_level_above, GRID.origin_compute, GRID.domain_compute)
        halve = _stencil(factory, st.count_halvings, GRID.origin_compute, GRID.domain_compute)
        q = _random(factory, 5)
        kfound = factory.zeros(dtype=np.int64)
        n = factory.zeros(dtype=np.int64)
        q8 = factory.from_array(np.abs(np.asarray(q)) * 8.0)
        search(q, kfound, 0.6)
        halve(q8, n, 0.5)
        results[b] = (np.asarray(q), np.asarray(kfound), np.asarray(q8), np.asarray(n))
    q, kfound, q8, n = results[backend]
    inside = tuple(slice(o, o + d) for o, d in zip(GRID.origin_compute, GRID.domain_compute))
    np.testing.assert_array_equal(kfound[inside], _first_level_numpy(q[inside], 0.6))
    assert (kfound[inside] >= 0).any() and (kfound[inside] == -1).any(), "the data has both cases"
    x, want_n = q8[inside].copy(), np.zeros(n[inside].shape, np.int64)
    while (x > 0.5).any():
        more = x > 0.5
        x[more] *= 0.5
        want_n[more] += 1
    np.testing.assert_array_equal(n[inside], want_n)
    np.testing.assert_array_equal(kfound, results["debug"][1])
    np.testing.assert_array_equal(n, results["debug"][3])


# =============================================================== a model step


class DiffusionModel:
    """Three stencils a step: the edge update (regions), a corner fill in place, a column
    relaxation (FORWARD then BACKWARD); state in GT4Py storages of the factory's backend."""

    def __init__(self, factory: StencilFactory, in_place_corners: bool):
        self.update = _stencil(factory, st.edge_update, GRID.origin_compute, GRID.domain_compute)
        self.corners = _stencil(factory, st.fill_corners_x, *GRID.domain_with_halo(GRID.n_halo))
        self.relax = _stencil(factory, st.column_relax, GRID.origin_compute, GRID.domain_compute)
        self.in_place_corners = in_place_corners
        self.q = _random(factory, 6)
        self.tmp = factory.zeros()
        self.factory = factory

    def step(self):
        self.update(self.q, self.tmp, 0.1)
        if self.in_place_corners:
            self.corners(self.tmp, self.tmp)
        else:
            src = self.factory.from_array(np.asarray(self.tmp))
            self.corners(self.tmp, src)
        self.relax(self.tmp, self.q, 0.25)


def _model_numpy(q, steps):
    inside = tuple(slice(o, o + d) for o, d in zip(GRID.origin_compute, GRID.domain_compute))
    q = q.copy()
    tmp = np.zeros_like(q)
    for _ in range(steps):
        new = _edge_update_numpy(q, 0.1)
        tmp[inside] = new[inside]
        tmp = _fill_corners_numpy(tmp)
        out = q.copy()
        col = tmp[inside].copy()
        for k in range(1, GRID.nz):
            col[:, :, k] = col[:, :, k] + 0.25 * col[:, :, k - 1]
        for k in range(GRID.nz - 2, -1, -1):
            col[:, :, k] = col[:, :, k] + 0.25 * col[:, :, k + 1]
        out[inside] = col
        q = out
    return q


@pytest.mark.parametrize("in_place", [False, True], ids=["copied-corners", "in-place-corners"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_model_steps(backend, in_place, gt4py_cache):
    """Three steps of the model: the state equals GT4Py numpy's and hand-written NumPy's."""
    models = {}
    for b in dict.fromkeys((backend, "numpy")):
        model = DiffusionModel(_factory(b, gt4py_cache), in_place)
        start = np.asarray(model.q).copy()
        for _ in range(3):
            model.step()
        models[b] = model
    got = np.asarray(models[backend].q)
    _close(got, np.asarray(models["numpy"].q), f"{backend} vs GT4Py numpy")
    _close(got, _model_numpy(start, 3), f"{backend} vs NumPy")
    assert all(s.calls == 3 for s in (models[backend].update, models[backend].corners, models[backend].relax))


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_without_validation_and_exec_info(backend, gt4py_cache):
    """``FrozenStencil`` with ``validate_args=False`` calls ``run(_origin_=, _domain_=,
    exec_info=None)``; ``run`` with an ``exec_info`` dict reports GT4Py's keys."""
    factory = _factory(backend, gt4py_cache)
    factory.config = StencilConfig(backend=factory.config.backend, validate_args=False,
                                   storage_backend=factory.config.storage_backend)
    stencil = _stencil(factory, st.scale_or_add, GRID.origin_compute, GRID.domain_compute,
                       externals={"USE_BIAS": True})
    q, bias, out = _random(factory, 7), _random(factory, 8, ("I", "J")), factory.zeros()
    stencil(q, bias, out, 3.0)
    inside = tuple(slice(o, o + d) for o, d in zip(GRID.origin_compute, GRID.domain_compute))
    _close(np.asarray(out)[inside], 3.0 * np.asarray(q)[inside] + np.asarray(bias)[inside[:2]][:, :, None], backend)
    info: dict = {}
    stencil.stencil_object.run(q=q, bias=bias, out=out, c=1.0, _origin_=stencil._field_origins,
                               _domain_=stencil.domain, exec_info=info)
    assert tuple(info["domain"]) == GRID.domain_compute
    assert info["run_end_time"] >= info["run_start_time"]


# ======================================== K levels computed at run time, read in the array


def _remap_numpy(pe1, pe2, q1, q2, lo, n):
    q2 = q2.copy()
    for i in range(lo[0], lo[0] + n[0]):
        for j in range(lo[1], lo[1] + n[1]):
            for k in range(n[2]):
                kk = 0
                while pe1[i, j, kk + 1] < pe2[i, j, k]:
                    kk += 1
                q2[i, j, k] = q1[i, j, kk] + (pe2[i, j, k] - pe1[i, j, kk]) * (pe1[i, j, kk + 1] - pe2[i, j, k])
    return q2


def _remap_arrays(factory, top):
    """Interfaces rising with K (nz + 1 levels); pe2 reaches ``top`` at the last layer, so
    the search stops at level nz (inside the array) or, with ``top`` above pe1's top level,
    runs past it."""
    nz = GRID.nz
    ni, nj = GRID.shape[:2]
    rng = np.random.default_rng(7)
    halo = (GRID.n_halo, GRID.n_halo, 0)  # NDSL's K_INTERFACE dimension: nz + 1 levels
    pe1 = gt_storage.from_array(np.broadcast_to(np.arange(nz + 1, dtype=np.float64), (ni, nj, nz + 1)),
                                backend=factory.storage_backend, aligned_index=halo)
    pe2_values = rng.uniform(0.0, nz - 0.5, (ni, nj, nz))
    pe2_values[:, :, -1] = top
    pe2 = factory.from_array(pe2_values, ("I", "J", "K"))
    return pe1, pe2, _random(factory, 8), factory.zeros()


@pytest.mark.parametrize("backend", BACKENDS)
def test_k_levels_read_beyond_the_domain_inside_the_array(backend, gt4py_cache):
    """The search reads level nz of an nz + 1 level field: GT4Py runs it, and so does every
    gtscript backend through GT4Py's API (the result equals GT4Py's and NumPy's: its debug
    backend, as its numpy backend does not implement ``field.at``)."""
    results = {}
    for b in dict.fromkeys((backend, "debug")):
        factory = _factory(b, gt4py_cache)
        stencil = _stencil(factory, st.remap_to_levels, GRID.origin_compute, GRID.domain_compute)
        pe1, pe2, q1, q2 = _remap_arrays(factory, top=GRID.nz - 0.25)
        stencil(pe1, pe2, q1, q2)
        results[b] = np.asarray(q2)
    want = _remap_numpy(np.asarray(pe1), np.asarray(pe2), np.asarray(q1), np.zeros(GRID.shape),
                        GRID.origin_compute, GRID.domain_compute)
    _close(results[backend], results["debug"], f"{backend} vs GT4Py debug")
    _close(results[backend], want, f"{backend} vs NumPy")


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b.startswith("gtscript:")])
def test_k_level_beyond_the_array_stops_the_call_and_changes_nothing(backend, gt4py_cache):
    """A search that runs past the array's top level: the run-time check fails, the kernel
    stops (no hang: the call returns) and raises a ValueError naming the field, with every
    array as it was (GT4Py's numpy backend returns a level the array holds instead)."""
    factory = _factory(backend, gt4py_cache)
    stencil = _stencil(factory, st.remap_to_levels, GRID.origin_compute, GRID.domain_compute)
    arrays = _remap_arrays(factory, top=GRID.nz + 5.0)
    before = [np.array(a, copy=True) for a in arrays]
    for call in (lambda: stencil(*arrays), lambda: stencil.stencil_object(*arrays)):
        with pytest.raises(ValueError, match="pe1"):
            call()
        for a, b in zip(arrays, before):
            np.testing.assert_array_equal(np.asarray(a), b)
