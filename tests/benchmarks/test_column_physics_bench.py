"""The column physics benchmark (benchmarks/column_physics.py): its generated program has the
promised shape, and its correctness check runs gtscript's cpu and numpy backends and the
hand-written C version against the NumPy twin (a tiny program: 8 columns, 20 levels)."""

import copy
import os
import re
import shutil
import sys
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks"))
import c_baselines  # noqa: E402
import column_physics as bench  # noqa: E402
import column_physics_gen as gen  # noqa: E402

HAVE_CC = shutil.which(c_baselines.CC) is not None


def _options(c=HAVE_CC):
    return SimpleNamespace(fortran=True, c=c, numpy_backends=True, gt4py=False,
                           gt4py_compiled=None, numpy_max_columns=8192, check_columns=1024,
                           vector_math=True)


def test_default_program_has_the_shape_of_a_microphysics_scheme():
    program = gen.generate()
    counts = program.counts()
    assert 60 <= counts["arguments"] <= 77
    assert counts["ij_fields"] >= 1 and counts["k_fields"] == 1
    assert 400 <= counts["temporaries"] <= 500
    assert 250 <= counts["conditionals"] <= 300
    assert counts["max_nesting"] >= 3
    # K-1 reads of a handful of fields and temporaries (the sedimentation fluxes), no others
    fields = [n for n in counts["k_minus_1_names"] if program.kind(n) == "ijk"]
    temps = [n for n in counts["k_minus_1_names"] if program.kind(n) == "temp"]
    assert 2 <= len(fields) <= 6 and 4 <= len(temps) <= 6
    assert counts["exp"] >= 50 and counts["log"] >= 20 and counts["pow"] >= 50
    assert counts["function_calls"] >= 60 and counts["functions"] >= 5
    # two short FORWARD computations, then one over levels 1..nlev
    (s1, e1, b1), (s2, e2, b2), (s3, e3, b3) = program.passes
    assert (s1, e1, s3, e3) == (0, 1, 1, None) and len(b1) + len(b2) < 10 < len(b3)
    program.check_column_local()
    source = program.gtscript_source("micro")
    assert source.count("with computation(FORWARD)") == 3
    assert source.count("@gtscript.function") == counts["functions"]
    # nothing off the point but K-1
    body = source[source.index("    with computation"):]
    assert set(re.findall(r"\[([^\]]*)\]", body)) == {"0, 0, -1"}


def test_generator_is_deterministic_in_its_seed_and_size():
    a, b = gen.generate(seed=3), gen.generate(seed=3)
    assert a.gtscript_source("m") == b.gtscript_source("m")
    assert a.c_source("m") == b.c_source("m") and a.numpy_source("m") == b.numpy_source("m")
    assert gen.generate(seed=4).gtscript_source("m") != a.gtscript_source("m")
    small = gen.generate(size=0.25).counts()
    assert small["temporaries"] < a.counts()["temporaries"] / 2


def test_column_locality_check_rejects_a_read_before_a_write():
    program = gen.generate(size=0.15)
    program.check_column_local()
    bad = copy.deepcopy(program)
    later = next(s[1] for s in bad.passes[2][2][20:] if s[0] == "assign"
                 and bad.kind(s[1]) == "temp")
    bad.passes[2][2].insert(0, ("assign", "early", ("var", later, 0)))
    with pytest.raises(ValueError, match=f"{later} is read at K\\+0 before it is written"):
        bad.check_column_local()
    bad = copy.deepcopy(program)  # a K-1 read of a temporary no earlier computation set
    bad.passes[1][2].insert(0, ("assign", "early", ("var", "rhom", -1)))
    with pytest.raises(ValueError, match="rhom is read at K-1"):
        bad.check_column_local()


def test_inputs_and_the_twin_stay_finite_and_physical():
    case = bench.Micro(size=0.15, nlev=20)
    arrays = case.inputs(8)
    case.numpy(arrays)
    for name in case.written:
        assert np.all(np.isfinite(arrays[name])), name
    assert np.all((arrays["t"] > 150.0) & (arrays["t"] < 350.0))
    for q in gen.SPECIES:  # the negative fixers keep every mixing ratio at or above zero
        assert arrays[q].min() >= -1e-15, q
    # the program did something: the state moved and the diagnostics are not all zero
    before = case.inputs(8)
    assert not np.allclose(arrays["qc"], before["qc"])
    assert any(np.any(arrays[d] != 0.0) for d in case.program.outputs)


@pytest.fixture(scope="module")
def micro_columns():
    case = bench.Micro(size=0.15, nlev=20)
    columns, notes, build_s = bench.implementations(case, _options(), sys.stderr)
    return case, columns, notes


def test_gtscript_and_c_agree_with_the_numpy_twin(micro_columns):
    case, columns, notes = micro_columns
    names = {c.name for c in columns}
    expected = {"gtscript[cpu]", f"gtscript[cpu] {bench.suite.FORTRAN}", bench.VECTOR_MATH,
                "numpy", "gtscript[numpy]"} | ({"c"} if HAVE_CC else set())
    assert names == expected, notes
    active, layouts, differences = bench.check(case, columns, 8, _options())
    assert {c.name for c in active} == expected == set(differences)
    # libm's results are NumPy's to the rounding of the order of operations; libmvec's within
    # the looser tolerance the vector_math column is checked to
    assert differences["gtscript[cpu]"] <= bench.RTOL
    assert differences[bench.VECTOR_MATH] <= bench.VECTOR_MATH_RTOL
    # the check looked at real results: the outputs of the C-order columns moved
    arrays = layouts.get("C")
    assert not np.array_equal(arrays["qc"], layouts.pristine["qc"])


def test_the_check_catches_a_wrong_column(micro_columns):
    case, columns, _ = micro_columns
    good = next(c for c in columns if c.name == "gtscript[cpu]")

    def wrong(arrays, scalars, halo):
        good.call(arrays, scalars, halo)
        arrays["diag3"][5, 0, 7] *= 1.0 + 1e-6  # one point of one output, slightly off

    broken = bench.Column("broken", wrong, "C")
    with pytest.raises(AssertionError, match="broken disagrees with the NumPy version on diag3"):
        bench.check(case, [broken], 8, _options())


def test_satadj_case_agrees_with_its_numpy_version():
    case = bench.Satadj(nblocks=3, nlev=20)
    columns, notes, _ = bench.implementations(case, _options(c=False), sys.stderr)
    active, layouts, _ = bench.check(case, columns, 8, _options(c=False))
    assert {c.name for c in active} >= {"gtscript[cpu]", "gtscript[numpy]", "numpy"}
    arrays = layouts.get("C")
    assert not np.array_equal(arrays["t"], layouts.pristine["t"])
