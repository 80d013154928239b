"""Call plans are derived from the machine's facts as the OS reports them, and say so.

`exec_info["plan"]` names the cache sizes read from sysfs, the L2 budget the tiles were sized
for (half the L2, at most 512 KiB), why the tile shape is what it is ("model", "env", or one
tile), and the column-block choice. Without an override, and with measured plans off
(GTSCRIPT_AUTOTUNE=0: tests/backends/cpu/test_plan_tuning.py tests them), the plan is a function of the
stencil, the domain, the layout and those facts: the same every time.
"""

import os

import numpy as np

import gtscript
from gtscript import FORWARD, PARALLEL, Field, computation, interval

F64 = np.float64


def lap(inp: Field[F64], out: Field[F64]):
    with computation(PARALLEL), interval(...):
        out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp


def scan(a: Field[F64], out: Field[F64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = a + 0.5 * out[0, 0, -1]


def _sysfs_cache(level):
    base = "/sys/devices/system/cpu/cpu0/cache"
    if not os.path.isdir(base):
        return 0
    for index in sorted(os.listdir(base)):
        try:
            with open(os.path.join(base, index, "level")) as f:
                if int(f.read()) != level:
                    continue
            with open(os.path.join(base, index, "type")) as f:
                if f.read().startswith("Instruction"):
                    continue
            with open(os.path.join(base, index, "size")) as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        return int(text.rstrip("KMG")) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
    return 0


def _plan(defn, shape, **call):
    rng = np.random.default_rng(0)
    a, out = rng.random(shape), np.zeros(shape)
    info = {}
    gtscript.stencil("cpu", defn)(a, out, exec_info=info, **call)
    return info["plan"]


def test_the_plan_names_the_machine_facts_it_used(monkeypatch):
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE", "0")  # the model's plan, whatever the call's time
    plan = _plan(lap, (40, 30, 12), origin=(1, 1, 0), domain=(38, 28, 12))
    machine = plan["machine"]
    for level in (1, 2, 3):
        assert machine[f"l{level}{'d' if level == 1 else ''}_bytes"] == _sysfs_cache(level)
    l2 = machine["l2_bytes"]
    assert plan["l2_budget_bytes"] == (min(l2 // 2, 512 * 1024) if l2 else 512 * 1024)
    assert plan["tile_why"] == "model"
    assert isinstance(machine["vector_512"], bool)


def test_an_override_is_reported(monkeypatch):
    monkeypatch.setenv("GTSCRIPT_TILE_SIZE", "5x7")
    plan = _plan(lap, (41, 31, 12), origin=(1, 1, 0), domain=(39, 29, 12))
    assert plan["tile_why"] == "env" and tuple(plan["tile"]) == (5, 7)


def test_the_plan_is_deterministic_without_overrides(monkeypatch):
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE", "0")
    first = _plan(scan, (20, 130, 33))
    _plan(scan, (9, 9, 9))  # another domain: the stencil's cached plan is replaced
    again = _plan(scan, (20, 130, 33))
    assert first == again
    assert first["column_blocks"] > 0 and first["column_blocks_why"] == "model"
