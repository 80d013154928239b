"""Measured call plans (csrc/call/tune.c, docs/performance.md#measured-call-plans).

A cpu call long enough to matter runs, over its first calls on a domain, one candidate plan
each (tiles of other sizes and shapes; in C order, column blocks toggled), times the kernel
and keeps the fastest; the result goes to the stencil's cache entry (`plans.txt`) for this
machine. Checked here: every candidate computes the same bits (each tuning call against the
numpy backend and hand-written NumPy, with sentinel margins around views); what
exec_info["plan"] says on the way; that short calls, GTSCRIPT_AUTOTUNE=0 and the overrides
measure nothing; that a fresh process uses the disk record from its first call, ignores a
corrupt, truncated, foreign or linked file and rewrites it, and keeps the file bounded; and
that calls from several threads during tuning stay correct.

GTSCRIPT_AUTOTUNE_MIN_MS=0 (tests only) tunes calls of any length, so small domains do.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import gtscript
from shared_stencils import hdiff_defn, np_hdiff, np_thomas, thomas_defn

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
SENTINEL = -1234.5
MARGIN = 3


@pytest.fixture
def tune_any_call(monkeypatch):
    # read when a stencil first meets a domain: each test uses domains of its own
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE_MIN_MS", "0")
    monkeypatch.delenv("GTSCRIPT_AUTOTUNE", raising=False)
    monkeypatch.delenv("GTSCRIPT_TILE_SIZE", raising=False)
    monkeypatch.delenv("GTSCRIPT_COLUMN_BLOCKS", raising=False)


def framed(values, order):
    """(buffer, view): `values` in a view into a bigger buffer of `order` whose margins on
    every side (K too: the view keeps its unit stride) hold SENTINEL."""
    big = np.full(tuple(n + 2 * MARGIN for n in values.shape), SENTINEL, order=order)
    view = big[MARGIN:-MARGIN, MARGIN:-MARGIN, MARGIN:-MARGIN]
    view[...] = values
    return big, view


def hdiff_case(rng, shape):
    inp, coeff = rng.random(shape), rng.uniform(0.0, 0.1, shape)
    domain = (shape[0] - 4, shape[1] - 4, shape[2])
    want = np.full(shape, 7.0)
    want[2:-2, 2:-2] = np_hdiff(inp, coeff)
    call = dict(origin=(2, 2, 0), domain=domain)
    return hdiff_defn, [inp, coeff, np.full(shape, 7.0)], 2, call, want


def thomas_case(rng, shape):
    a, c, d = rng.random(shape), rng.random(shape), rng.random(shape)
    b = 4.0 + rng.random(shape)
    return thomas_defn, [a, b, c, d, np.zeros(shape)], 4, {}, np_thomas(a, b, c, d)


CASES = {"hdiff": hdiff_case, "thomas": thomas_case}


@pytest.mark.parametrize("name, order, shape", [("hdiff", "C", (37, 45, 11)),
                                                ("hdiff", "F", (41, 39, 10)),
                                                ("thomas", "C", (6, 150, 13))])
def test_every_tuning_call_gives_the_same_bits(tune_any_call, rng, name, order, shape):
    defn, arrays, out_index, call, by_hand = CASES[name](rng, shape)
    ref = [a.copy() for a in arrays]
    gtscript.stencil("numpy", defn)(*ref, **call)
    # the numpy backend and the NumPy written out agree, bit for bit
    np.testing.assert_array_equal(ref[out_index], by_hand)
    stencil = gtscript.stencil("cpu", defn)
    whys, plans = [], set()
    for _ in range(14):
        framed_args = [framed(a, order) for a in arrays]
        info = {}
        stencil(*(view for _, view in framed_args), exec_info=info, **call)
        plan = info["plan"]
        assert plan["layout"] == order
        whys.append((plan["tile_why"], plan["column_blocks_why"]))
        plans.add((tuple(plan["tile"]), plan["column_blocks"]))
        for (big, view), before, after in zip(framed_args, arrays, ref):
            np.testing.assert_array_equal(view, after)  # the output equal, the inputs untouched
            inside = np.zeros(big.shape, bool)
            inside[MARGIN:-MARGIN, MARGIN:-MARGIN, MARGIN:-MARGIN] = True
            assert np.all(big[~inside] == SENTINEL)  # nothing written outside the views
    tuning = plan["tuning"]
    n = len(tuning["candidates"])
    assert tuning["state"] == "measured" and 2 <= n <= 9 and 0 <= tuning["chosen"] < n
    assert tuning["calls"] <= 13 and tuning["min_ms"] == 0.0 and tuning["repeats"] == 1
    # every candidate ran (and gave the bits above)
    assert {(tuple(c["tile"]), c["column_blocks"] or 0) for c in tuning["candidates"]} <= plans
    assert all(len(c["ms"]) in (1, 2) and min(c["ms"]) >= 0 for c in tuning["candidates"])
    tile_whys = [t for t, _ in whys]
    assert tile_whys[:2] == ["tuning: warm-up (the model's plan)"] * 2
    assert tile_whys[2:n + 2] == [f"tuning: candidate {k} of {n}" for k in range(1, n + 1)]
    calls = tuning["calls"]
    assert all(t.startswith("tuning: candidate") and t.endswith("measured again")
               for t in tile_whys[n + 2:calls])
    chosen = tuning["candidates"][tuning["chosen"]]
    assert tile_whys[calls:] == [tile_whys[-1]] * (len(whys) - calls)
    ti, tj = chosen["tile"]
    assert tile_whys[-1].startswith(f"measured: {ti}x{tj} of {n} candidates (ms: ")
    assert tuple(plan["tile"]) == tuple(chosen["tile"])
    if name == "thomas":
        # C order with column groups: blocks and bundles are both candidates, and both ran
        assert {c["column_blocks"] for c in tuning["candidates"]} == {0, 64}
        assert {blocks for _, blocks in plans} == {0, 64}
        word = "blocks" if chosen["column_blocks"] else "bundles"
        assert whys[-1][1].startswith(f"measured: {word} of {n} candidates (ms: ")
        assert plan["column_blocks"] == chosen["column_blocks"]
    else:
        assert all(c["column_blocks"] is None for c in tuning["candidates"])
        assert {b for _, b in whys} == {"none"}


def test_a_call_shorter_than_the_span_is_measured_over_several(tune_any_call, monkeypatch, rng):
    """Each measurement spans GTSCRIPT_AUTOTUNE_MIN_MS of kernel time (2 ms unless set): a
    call shorter than that is measured over several calls (at most 8), the fastest counting.
    A span of a second makes every call here short, on any machine."""
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE_MIN_MS", "1000")
    defn, arrays, out_index, call, want = thomas_case(rng, (24, 40, 96))  # >= 0.1 ms of work
    stencil = gtscript.stencil("cpu", defn)
    whys = []
    for _ in range(2 + 11 * 8 + 1):
        arrays[out_index][...] = 0.0
        info = {}
        stencil(*arrays, exec_info=info, **call)
        np.testing.assert_array_equal(arrays[out_index], want)  # every call, whatever its plan
        whys.append(info["plan"]["tile_why"])
        tuning = info["plan"]["tuning"]
        if tuning["state"] != "tuning":
            break
    assert tuning["state"] == "measured" and tuning["repeats"] == 8, tuning
    n = len(tuning["candidates"])
    assert whys[:2] == ["tuning: warm-up (the model's plan)"] * 2
    # candidate k's 8 calls, one after the other, then the finalists' (if any)
    assert whys[2:2 + 8 * n] == [f"tuning: candidate {k} of {n}, call {c} of 8"
                                 for k in range(1, n + 1) for c in range(1, 9)]
    extra = whys[2 + 8 * n:]  # the first round's fastest and the model's plan, 8 calls each
    assert tuning["calls"] == len(whys) and len(extra) in (0, 16)
    assert all(w.startswith("tuning: candidate") and ", measured again, call " in w for w in extra)
    assert all(len(c["ms"]) in (1, 2) for c in tuning["candidates"])
    info = {}
    stencil(*arrays, exec_info=info, **call)
    assert info["plan"]["tile_why"].startswith("measured: ")


def test_a_short_call_keeps_the_model_plan(monkeypatch, rng):
    monkeypatch.delenv("GTSCRIPT_AUTOTUNE_MIN_MS", raising=False)  # the real threshold, 2 ms
    defn, arrays, _, call, want = thomas_case(rng, (3, 7, 5))  # microseconds of work
    stencil = gtscript.stencil("cpu", defn)
    for _ in range(5):
        info = {}
        stencil(*arrays, exec_info=info, **call)
        plan = info["plan"]
        assert plan["tile_why"] == plan["column_blocks_why"] == "model: too short to tune"
        assert plan["tuning"]["state"] == "too short" and plan["tuning"]["min_ms"] == 2.0
        assert plan["tuning"]["warmup_ms"] < 2.0 and plan["tuning"]["chosen"] is None
        np.testing.assert_array_equal(arrays[4], want)


def test_calls_from_several_threads_while_tuning(tune_any_call, rng):
    defn, arrays, _, call, want = hdiff_case(rng, (44, 52, 9))
    stencil = gtscript.stencil("cpu", defn)
    errors = []

    def work():
        try:
            for _ in range(15):
                out = np.full(want.shape, 7.0)
                stencil(arrays[0], arrays[1], out, **call)
                np.testing.assert_array_equal(out, want)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    info = {}
    stencil(*arrays, exec_info=info, **call)
    assert info["plan"]["tile_why"].startswith("measured: ")
    np.testing.assert_array_equal(arrays[2], want)


# ------------------------------------------------------------------- in a process of its own

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    import gtscript
    from shared_stencils import thomas_defn
    rng = np.random.default_rng(3)
    shape = (8, 70, 16)
    a, c, d = rng.random(shape), rng.random(shape), rng.random(shape)
    b = 4.0 + rng.random(shape)
    want = np.zeros(shape)
    gtscript.stencil("numpy", thomas_defn)(a, b, c, d, want)
    stencil = gtscript.stencil("cpu", thomas_defn)
    for _ in range(int(sys.argv[1])):
        x, info = np.zeros(shape), {{}}
        stencil(a, b, c, d, x, exec_info=info)
        p = info["plan"]
        print(json.dumps({{"tile_why": p["tile_why"], "blocks_why": p["column_blocks_why"],
                          "tile": p["tile"], "blocks": p["column_blocks"], "tuning": p["tuning"],
                          "equal": bool(np.array_equal(x, want)), "key": stencil.cache_key}}))
""")


def run_process(cache, calls=12, **env):
    environ = dict(os.environ, GTSCRIPT_CACHE_DIR=str(cache), GTSCRIPT_AUTOTUNE_MIN_MS="0")
    for k in ("GTSCRIPT_AUTOTUNE", "GTSCRIPT_TILE_SIZE", "GTSCRIPT_COLUMN_BLOCKS"):
        environ.pop(k, None)
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(tests=TESTS), str(calls)],
                          env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(line["equal"] for line in lines)  # every call, tuning or not, gave the same bits
    return lines


@pytest.fixture(scope="module")
def tuned_cache(tmp_path_factory):
    """A cache directory in which one process tuned the solver on its domain (copy it)."""
    cache = tmp_path_factory.mktemp("tuned") / "cache"
    cache.mkdir(mode=0o700)
    lines = run_process(cache)
    assert lines[0]["tile_why"] == "tuning: warm-up (the model's plan)"
    assert lines[-1]["tile_why"].startswith("measured: ")
    return cache, lines


def copy_cache(tuned_cache, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(tuned_cache[0], cache)
    os.chmod(cache, 0o700)
    (plans,) = cache.glob("*/plans.txt")
    assert plans.parent.name == tuned_cache[1][0]["key"]  # next to the kernel, in its entry
    return cache, plans


def records(plans):
    lines = plans.read_text().splitlines()
    assert lines[0] == "gtscript-plans 1"
    return [line.split("\t") for line in lines[1:]]


def test_a_fresh_process_uses_the_recorded_plan_from_its_first_call(tuned_cache, tmp_path):
    cache, plans = copy_cache(tuned_cache, tmp_path)
    ((name, value),) = records(plans)
    first = tuned_cache[1][-1]
    model = first["tuning"]["candidates"][0]
    # record another candidate than the model's as the chosen one: the next process must run it
    cands = first["tuning"]["candidates"]
    pick = max(range(len(cands)), key=lambda i: (cands[i]["tile"] != model["tile"], i))
    plans.write_text(f"gtscript-plans 1\n{name}\t{pick} {value.split(' ', 1)[1]}\n")
    lines = run_process(cache, calls=3)
    for line in lines:
        assert line["tile_why"] == "disk: measured on this machine"
        assert line["blocks_why"] == "disk: measured on this machine"
        assert line["tile"] == cands[pick]["tile"]
        assert line["blocks"] == (cands[pick]["column_blocks"] or 0)
        assert line["tuning"]["state"] == "disk" and line["tuning"]["calls"] == 0
        assert line["tuning"]["chosen"] == pick
        assert [c["tile"] for c in line["tuning"]["candidates"]] == [c["tile"] for c in cands]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "symlink", "foreign machine",
                                    "tile outside the domain"])
def test_a_bad_record_is_ignored_and_the_file_rewritten(tuned_cache, tmp_path, damage):
    cache, plans = copy_cache(tuned_cache, tmp_path)
    ((name, value),) = records(plans)
    outside = tmp_path / "elsewhere.txt"
    if damage == "garbage":
        plans.write_bytes(b"\x00\xff garbage\n" * 10)
    elif damage == "truncated":
        text = plans.read_text()
        plans.write_text(text[:len(text) - len(value) // 2])
    elif damage == "symlink":
        outside.write_text(plans.read_text())
        plans.unlink()
        plans.symlink_to(outside)
    elif damage == "foreign machine":
        plans.write_text(f"gtscript-plans 1\nanother-cpu;l1=1;l2=2;l3=3;v512=0;llvm=x "
                         f"{name.split(' ', 1)[1]}\t{value}\n")
    else:
        plans.write_text(f"gtscript-plans 1\n{name}\t0 100000x1/64=5 1x1/0=4\n")
    lines = run_process(cache)
    assert lines[0]["tile_why"] == "tuning: warm-up (the model's plan)"  # nothing applied
    assert lines[-1]["tile_why"].startswith("measured: ")
    assert not plans.is_symlink()
    rewritten = records(plans)
    assert [n for n, _ in rewritten][-1] == name
    if damage == "foreign machine":  # the other machine's record stays, apart from this one's
        assert len(rewritten) == 2 and rewritten[0][0].startswith("another-cpu;")
    else:
        assert len(rewritten) == 1
    if damage == "symlink":
        assert outside.read_text().splitlines()[1].split("\t")[0] == name  # not written through
    assert not [p for p in plans.parent.iterdir() if ".tmp-" in p.name]


def test_the_file_keeps_the_newest_64_records(tuned_cache, tmp_path):
    cache, plans = copy_cache(tuned_cache, tmp_path)
    ((name, value),) = records(plans)
    others = [f"machine-{i} C 0 2 8 70 16\t0 8x70/64=1" for i in range(70)]
    plans.write_text("gtscript-plans 1\n" + "\n".join(others) + "\n")
    run_process(cache)
    kept = records(plans)
    assert len(kept) == 64 and kept[-1][0] == name
    assert [f"{n}\t{v}" for n, v in kept[:-1]] == others[-63:]  # the oldest went


@pytest.mark.parametrize("env, tile_why, blocks_why", [
    ({"GTSCRIPT_AUTOTUNE": "0"}, "model", "model"),
    ({"GTSCRIPT_TILE_SIZE": "3x20"}, "env", "model"),
    ({"GTSCRIPT_COLUMN_BLOCKS": "0"}, "model", "env"),
])
def test_autotune_off_and_overrides_measure_nothing(tmp_path, env, tile_why, blocks_why):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    lines = run_process(cache, **env)
    for line in lines:
        assert line["tile_why"] == tile_why and line["blocks_why"] == blocks_why
        assert line["tuning"] is None
    assert len({(tuple(line["tile"]), line["blocks"]) for line in lines}) == 1
    if "GTSCRIPT_TILE_SIZE" in env:
        assert lines[0]["tile"] == [3, 20]
    assert not list(cache.glob("*/plans.txt"))
