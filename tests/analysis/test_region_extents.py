"""Call-time extents per horizontal region: a statement inside `with horizontal(region[...])`
runs only on the region's points, so its reads reach those points shifted by the offset, not
the whole domain shifted. A stencil reading inward neighbours only at the domain's edges
(the boundary conditions of a dynamical core) is callable with an origin and domain covering
the whole array, and the bounds check stays exact: one point less room than the regions'
reads need is refused, arrays untouched. Inputs are views whose surrounding memory holds NaN,
so a read outside the array would show in the results."""

import linecache

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, I, J, computation, horizontal, interval, region
from cuda_emulation.runner import emulate, require_compiler

SHAPE = (9, 8, 3)
COMPILED = ("cpu", "numpy", "cuda")


def build(defn, backend):
    if backend == "cuda":
        require_compiler()
        return emulate(gtscript.stencil("cuda", defn), (3, 2))
    return gtscript.stencil(backend, defn)


def nan_padded(values):
    """A view of `values` inside a bigger buffer whose other elements are NaN."""
    big = np.full(tuple(n + 4 for n in values.shape), np.nan)
    view = big[2:-2, 2:-2, 2:-2]
    view[...] = values
    return view


def sentinel_padded(shape, value=1234.5):
    big = np.full(tuple(n + 4 for n in shape), value)
    return big, big[2:-2, 2:-2, 2:-2]


def edges_defn(inp: Field[float], out: Field[float]):
    with computation(PARALLEL), interval(...):
        out = inp
        with horizontal(region[I[0], :]):
            out = inp[1, 0, 0] - inp
        with horizontal(region[I[-1], :]):
            out = inp - inp[-1, 0, 0]
        with horizontal(region[:, J[0]]):
            out = 0.5 * (inp[0, 1, 0] + inp[0, 2, 0])
        with horizontal(region[I[1]:I[3], J[-1]]):
            out = inp[-1, -1, 0] + inp[2, 0, 0]


def edges_numpy(a):
    e = a.copy()
    e[0] = a[1] - a[0]
    e[-1] = a[-1] - a[-2]
    e[:, 0] = 0.5 * (a[:, 1] + a[:, 2])
    e[1:3, -1] = a[0:2, -2] + a[3:5, -1]
    return e


@pytest.mark.parametrize("backend", COMPILED)
def test_inward_reads_at_the_edges_need_no_halo(rng, backend):
    st = build(edges_defn, backend)
    assert st.halo == ((0, 0), (0, 0), (0, 0))
    assert st.field_info["inp"]["extent"] == ((0, 0), (0, 0), (0, 0))
    a = rng.uniform(-1, 1, SHAPE)
    inp = nan_padded(a)
    big, out = sentinel_padded(SHAPE)
    st(inp, out, origin=(0, 0, 0), domain=SHAPE)
    np.testing.assert_allclose(out, edges_numpy(a), rtol=1e-14, atol=0)
    assert not np.isnan(out).any(), "a read reached outside the array"
    inner = np.ones(big.shape, bool)
    inner[2:-2, 2:-2, 2:-2] = False
    assert (big[inner] == 1234.5).all(), "a write reached outside the array"
    # the default call (no origin, no domain) covers the whole array too
    out2 = np.zeros(SHAPE)
    st(inp, out2)
    np.testing.assert_array_equal(out2, out)


@pytest.mark.parametrize("backend", COMPILED)
def test_sub_domain_call_reads_only_inside_the_region_points(rng, backend):
    st = build(edges_defn, backend)
    a = rng.uniform(-1, 1, SHAPE)
    origin, domain = (2, 1, 0), (5, 6, 3)
    out = np.full(SHAPE, 7.0)
    st(nan_padded(a), out, origin=origin, domain=domain)
    expected = np.full(SHAPE, 7.0)
    expected[2:7, 1:7, :] = edges_numpy(a[2:7, 1:7, :])
    np.testing.assert_allclose(out, expected, rtol=1e-14, atol=0)


def temp_defn(inp: Field[float], out: Field[float]):
    with computation(PARALLEL), interval(...):
        t = inp[1, 0, 0] + 2.0 * inp
        out = inp
        with horizontal(region[I[0], :]):
            out = t[1, 0, 0]  # t needed at i = 1 only: inp at i <= 2


@pytest.mark.parametrize("backend", COMPILED)
def test_a_temporary_read_inside_a_region_is_needed_only_there(rng, backend):
    st = build(temp_defn, backend)
    assert st.halo == ((0, 1), (0, 0), (0, 0))  # t itself reads inp[1] on the whole domain
    a = rng.uniform(-1, 1, SHAPE)
    out = np.zeros(SHAPE)
    domain = (SHAPE[0] - 1,) + SHAPE[1:]
    st(nan_padded(a), out, origin=(0, 0, 0), domain=domain)
    e = np.zeros(SHAPE)
    e[:-1] = a[:-1]
    e[0] = a[2] + 2.0 * a[1]
    np.testing.assert_allclose(out, e, rtol=1e-14, atol=0)


# One region read per case: (box in I as written, I offset), checked for exactness.
CASES = [
    ("I[0]", 1), ("I[0]", -1), ("I[0]", 3), ("I[-1]", -1), ("I[-1]", 1), ("I[-1]", -4),
    ("I[0]:I[2]", 2), ("I[-2]:", -2), ("I[-2]:", 1), (":I[2]", -1), ("I[1]:I[-1]", 1),
    ("I[1]:I[-1]", -2), ("I[0] - 1", 1), ("I[-1] + 1", -1),
]


def box_points(text, n):
    """The points of a one-axis box written with I[...] (relative to a domain of n)."""
    def bound(s, default):
        s = s.strip()
        if not s:
            return default
        k, _, rest = s.partition("]")
        k = int(k[2:])
        shift = int(rest.replace(" ", "")) if rest.strip() else 0
        return (k if k >= 0 else n + k) + shift
    if ":" in text:
        lo, hi = text.split(":")
        return bound(lo, 0), bound(hi, n)
    p = bound(text, 0)
    return p, p + 1


def one_read_defn(box, di):
    src = (
        "def one_read(inp: Field[float], out: Field[float]):\n"
        "    with computation(PARALLEL), interval(...):\n"
        "        out = 0.0\n"
        f"        with horizontal(region[{box}, :]):\n"
        f"            out = inp[{di}, 0, 0]\n"
    )
    scope = {"Field": Field, "PARALLEL": PARALLEL, "computation": computation,
             "interval": interval, "horizontal": horizontal, "region": region, "I": I}
    filename = f"<one_read {box} {di}>"
    # the frontend reads a definition's source through linecache, as for a notebook cell
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), scope)
    return scope["one_read"]


@pytest.mark.parametrize("box, di", CASES)
def test_the_extent_of_a_region_read_is_exact(rng, box, di):
    n = 7
    lo, hi = box_points(box, n)
    lo, hi = max(lo, 0), min(hi, n)  # argument fields' statements run on the domain
    # the indices read, relative to the origin, and the room they need on each side
    below = max(0, -(lo + di))
    above = max(0, hi - 1 + di - (n - 1))
    shape = (n + below + above, 4, 2)
    a = rng.uniform(-1, 1, shape)
    for backend in ("cpu", "numpy"):
        st = gtscript.stencil(backend, one_read_defn(box, di))
        assert st.field_info["inp"]["extent"][0] == (-below, above)
        out = np.full(shape, 9.0)
        st(nan_padded(a), out, origin=(below, 0, 0), domain=(n, 4, 2))
        e = np.full(shape, 9.0)
        e[below:below + n] = 0.0
        e[below + lo:below + hi] = a[below + lo + di:below + hi + di]
        np.testing.assert_array_equal(out, e)
        # one point less room on a side that is needed: refused, nothing written
        for o, size in ((below - 1, shape[0]), (below, shape[0] - 1)):
            if (o < below and below == 0) or (size < shape[0] and above == 0):
                continue
            inp, out = a[:size].copy(), np.full((size, 4, 2), 9.0)
            before = (inp.copy(), out.copy())
            with pytest.raises(ValueError, match="'inp'"):
                st(inp, out, origin=(max(o, 0), 0, 0), domain=(n - (o < 0), 4, 2))
            np.testing.assert_array_equal(inp, before[0])
            np.testing.assert_array_equal(out, before[1])


def test_a_genuinely_outward_read_is_still_refused(rng):
    def outward(inp: Field[float], out: Field[float]):
        with computation(PARALLEL), interval(...):
            out = inp
            with horizontal(region[I[0], :]):
                out = inp[-1, 0, 0]
    for backend in ("cpu", "numpy"):
        st = gtscript.stencil(backend, outward)
        assert st.halo == ((1, 0), (0, 0), (0, 0))
        inp, out = rng.uniform(-1, 1, SHAPE), np.zeros(SHAPE)
        with pytest.raises(ValueError, match=r"argument 'inp'.*needs indices -1\.\."):
            st(inp, out, origin=(0, 0, 0), domain=SHAPE)
        assert (out == 0).all()
        st(inp, out, origin=(1, 0, 0), domain=(SHAPE[0] - 1,) + SHAPE[1:])
        assert out[1, 0, 0] == inp[0, 0, 0] and out[2, 3, 1] == inp[2, 3, 1]


def edges_reference(a, origin, domain):
    """edges_defn by hand on the whole array `a` for any origin and domain (reads may reach
    beyond the domain when its edges' regions cross)."""
    (oi, oj, ok), (ni, nj, nk) = origin, domain

    def at(i, j, di=0, dj=0):
        return a[oi + i + di, oj + j + dj, ok:ok + nk]
    out = np.empty((ni, nj, nk))
    for i in range(ni):
        for j in range(nj):
            v = at(i, j)
            if i == 0:
                v = at(i, j, 1) - at(i, j)
            if i == ni - 1:
                v = at(i, j) - at(i, j, -1)
            if j == 0:
                v = 0.5 * (at(i, j, 0, 1) + at(i, j, 0, 2))
            if 1 <= i < 3 and j == nj - 1:
                v = at(i, j, -1, -1) + at(i, j, 2)
            out[i, j] = v
    return out


def test_a_domain_where_the_regions_edges_cross_is_checked_without_regions(rng):
    st = gtscript.stencil("cpu", edges_defn)
    # I[1]:I[3] reads inp[2]: the extent <0, 0> holds once I[4] is inside the domain; J[0]
    # reads J[2]: once J[2] is
    assert st.region_min_domain == (5, 3)
    inp, out = rng.uniform(-1, 1, SHAPE), np.zeros(SHAPE)
    # below: every read is assumed anywhere in the domain (inp's extent <-1, 2> in I)
    with pytest.raises(ValueError, match=r"argument 'inp'.*extent <-1, 2>"):
        st(inp, out, origin=(0, 0, 0), domain=(4, 5, 3))
    assert (out == 0).all()
    for backend in ("cpu", "numpy"):
        for origin, domain in (((1, 0, 0), (4, 3, 3)), ((1, 1, 0), (3, 1, 3)), ((0, 0, 0), (5, 3, 3))):
            st = gtscript.stencil(backend, edges_defn)
            out = np.zeros(SHAPE)
            st(nan_padded(inp), out, origin=origin, domain=domain)
            sl = tuple(slice(o, o + n) for o, n in zip(origin, domain))
            np.testing.assert_allclose(out[sl], edges_reference(inp, origin, domain), rtol=1e-14)
            out[sl] = 0
            assert (out == 0).all()


def test_a_temporary_computed_only_where_a_region_reads_it_needs_the_regions_domain(rng):
    st = gtscript.stencil("cpu", temp_defn)
    assert st.region_min_domain == (2, 1)
    assert "calls need a domain of at least 2 x 0" in st.ir()
    inp, out = rng.uniform(-1, 1, SHAPE), np.zeros(SHAPE)
    with pytest.raises(ValueError, match="horizontal regions need at least 2 x 0 points"):
        st(inp, out, origin=(0, 0, 0), domain=(1, 4, 3))
    assert (out == 0).all()
    st(inp, out, origin=(0, 0, 0), domain=(2, 4, 3))
    np.testing.assert_allclose(out[0, :4], inp[2, :4] + 2.0 * inp[1, :4], rtol=1e-14)
    np.testing.assert_allclose(out[1, :4], inp[1, :4], rtol=1e-14)
