"""Things GT4Py accepts that gtscript refused:

- a scalar parameter defaulting to None (``q: np.float64 = None``): GT4Py builds it, runs a
  call that leaves q out where the stencil does not use q, and refuses with a TypeError a call
  that leaves it out where it does;
- stencils with more than 256 parameters (built, then every call refused): now up to
  ``gtscript._core.MAX_PARAMETERS`` (1,024), and more is refused at build;
- ``gtscript.config.build_settings``, GT4Py's dictionary (no effect in gtscript).

Every backend's call path: cpu, numpy and the cuda emulation."""

import linecache

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, GTScriptDefinitionError, computation, interval

BACKENDS = ("cpu", "numpy", "cuda")


def build(backend, defn, **kw):
    if backend == "cuda":
        from cuda_emulation.runner import emulate, require_compiler

        require_compiler()
        return emulate(gtscript.stencil("cuda", defn, **kw))
    return gtscript.stencil(backend, defn, **kw)


# ---- a None default ----------------------------------------------------------------------


def scaled(a: Field[np.float64], out: Field[np.float64], q: np.float64 = None):
    with computation(PARALLEL), interval(...):
        out = a * q


def optional(a: Field[np.float64], out: Field[np.float64], q: np.float64 = None):
    from __externals__ import USE_Q

    with computation(PARALLEL), interval(...):
        if __INLINED(USE_Q):  # noqa: F821 (gtscript's compile-time condition)
            out = a * q
        else:
            out = a


def unused(a: Field[np.float64], out: Field[np.float64], *, q: np.float64 = None, r: float = 2.0):
    with computation(PARALLEL), interval(...):
        out = a * r


@pytest.mark.parametrize("backend", BACKENDS)
def test_none_default_scalar(backend):
    a = np.random.default_rng(1).standard_normal((4, 3, 2))
    used = build(backend, scaled)
    out = np.zeros_like(a)
    used(a, out, q=3.0)  # passed: used as given
    np.testing.assert_array_equal(out, 3.0 * a)
    used(a, out, 0.5)
    np.testing.assert_array_equal(out, 0.5 * a)
    out[:] = 0.0
    with pytest.raises(TypeError, match="missing required argument 'q'.*None"):
        used(a, out)  # as GT4Py: a TypeError, nothing written
    with pytest.raises(TypeError, match="'q'"):
        used(a, out, q=None)
    assert not out.any()

    off = build(backend, optional, externals={"USE_Q": False})
    for kwargs in ({}, {"q": None}, {"q": 7.0}):
        out = np.zeros_like(a)
        off(a, out, **kwargs)
        np.testing.assert_array_equal(out, a)
    on = build(backend, optional, externals={"USE_Q": True})
    on(a, out, q=2.0)
    np.testing.assert_array_equal(out, 2.0 * a)
    with pytest.raises(TypeError, match="missing required argument 'q'"):
        on(a, out)

    out = np.zeros_like(a)
    build(backend, unused)(a, out)
    np.testing.assert_array_equal(out, 2.0 * a)


def test_none_default_shows_in_the_signature():
    import inspect

    stencil = gtscript.stencil("cpu", scaled)
    assert inspect.signature(stencil).parameters["q"].default is None
    assert "q: float64 = None" in repr(stencil)


# ---- many parameters ---------------------------------------------------------------------


def many_parameters(n):
    """A definition with n parameters: groups (in_k, out_k, s_k) with out_k = in_k * s_k + k
    (fields and scalars both past 256), then fields `extra_j` it only reads to make up n."""
    groups = n // 3
    names, body = [], []
    for k in range(groups):
        names += [f"in_{k}: Field[np.float64]", f"out_{k}: Field[np.float64]", f"s_{k}: float"]
        body.append(f"        out_{k} = in_{k} * s_{k} + {k}.0")
    extra = n - 3 * groups
    names += [f"extra_{j}: Field[np.float64]" for j in range(extra)]
    if extra:
        body.append("        out_0 = out_0 + " + " + ".join(f"extra_{j}" for j in range(extra)))
    src = (f"def many_{n}(" + ", ".join(names) + "):\n"
           "    with computation(PARALLEL), interval(...):\n" + "\n".join(body) + "\n")
    filename = f"<many_{n}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np, "Field": Field, "computation": computation, "interval": interval,
          "PARALLEL": PARALLEL}
    exec(compile(src, filename, "exec"), ns)
    return ns[f"many_{n}"], groups, extra


# cuda at 300 only: NVRTC's compile time grows faster than linearly with the kernel's
# parameters (about 7 s for 150, 110 s for 600 on this suite's machines); 300 is past the old
# limit of every table of the cuda call path, whose bound is the same constant
@pytest.mark.parametrize(("backend", "n"), [("cpu", 300), ("numpy", 300), ("cuda", 300),
                                            ("cpu", 1024), ("numpy", 1024)])
def test_many_parameters_run(backend, n):
    assert gtscript._core.MAX_PARAMETERS >= 1024
    defn, groups, extra = many_parameters(n)
    stencil = build(backend, defn)
    rng = np.random.default_rng(n)
    shape = (3, 2, 2)
    kwargs, expected = {}, {}
    for k in range(groups):
        x, s = rng.standard_normal(shape), float(rng.standard_normal())
        kwargs.update({f"in_{k}": x, f"out_{k}": np.zeros(shape), f"s_{k}": s})
        expected[f"out_{k}"] = x * s + k
    for j in range(extra):
        kwargs[f"extra_{j}"] = rng.standard_normal(shape)
        expected["out_0"] = expected["out_0"] + kwargs[f"extra_{j}"]
    assert len(kwargs) == n
    stencil(**kwargs)
    for name, values in expected.items():
        np.testing.assert_allclose(kwargs[name], values, rtol=1e-14, err_msg=name)


def test_too_many_parameters_refused_at_build():
    limit = gtscript._core.MAX_PARAMETERS
    defn, _, _ = many_parameters(limit + 1)
    with pytest.raises(GTScriptDefinitionError, match=f"{limit + 1} parameters; at most {limit}"):
        gtscript.stencil("cpu", defn)


def test_core_refuses_a_tree_with_too_many_parameters():
    """The core's own check, for a definition tree built some other way."""
    from gtscript.frontend import parse_definition

    limit = gtscript._core.MAX_PARAMETERS
    defn, _, _ = many_parameters(limit)
    tree = parse_definition(defn)
    tree["params"] = [*tree["params"], ("scalar", "one_more", "float64")]
    with pytest.raises(Exception, match=f"{limit + 1} parameters; at most {limit}"):
        gtscript._core.Module(tree, "numpy")


# ---- build_settings ----------------------------------------------------------------------


# gt4py.cartesian.config.build_settings of GT4Py 1.1.12 (run, not read from its docs): each
# key, a nested dict's keys, True where the value is a list (importing GT4Py here would take
# most of this file's time; tests/compat_gt4py/test_gt4py_compat.py runs GT4Py itself)
GT4PY_BUILD_SETTINGS = {
    "cuda_bin_path": False, "cuda_include_path": False, "cuda_library_path": False,
    "cuda_arch": False, "gt_include_path": False,
    "openmp": {"use_openmp": False, "cppflags": True, "ldflags": True},
    "extra_compile_args": {"cxx": True, "cuda": True},
    "extra_link_args": True, "parallel_jobs": False, "cpp_template_depth": False,
}


def test_build_settings_like_gt4py():
    import gtscript.config as gt_config

    def shape(d):
        return {k: shape(v) if isinstance(v, dict) else type(v) is list for k, v in d.items()}

    assert shape(gt_config.build_settings) == GT4PY_BUILD_SETTINGS
    assert gt_config.build_settings["parallel_jobs"] >= 1
    # what GT4Py codes do with it
    gt_config.build_settings["extra_compile_args"]["cxx"].extend(["-O3", "-march=native"])
    try:
        stencil = gtscript.stencil("cpu", scaled)
        a, out = np.ones((2, 2, 2)), np.zeros((2, 2, 2))
        stencil(a, out, q=2.0)
        np.testing.assert_array_equal(out, 2.0)
    finally:
        del gt_config.build_settings["extra_compile_args"]["cxx"][-2:]
