"""The threads of a cpu call at run time (gtscript/threads.py, csrc/call/pool.c, docs/configuration.md).

gtscript.set_num_threads / get_num_threads: the round trip and the refusals; a change between
two calls of one stencil changes the threads the next call runs on (exec_info["plan"]:
"threads" planned, "workers" that took part) and never what it computes (bits equal at 1 and
several threads, against the numpy backend and NumPy written out); a call in flight keeps its
threads; the tuner measures per thread count (a plan measured on 2 threads is not used on 1).
threadpoolctl: gtscript is listed by threadpool_info and limited by threadpool_limits.
"""

import threading
import time

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval
from shared_stencils import hdiff_defn, np_hdiff


@pytest.fixture(autouse=True)
def restore_threads():
    before = gtscript.get_num_threads()
    yield
    gtscript.set_num_threads(before)


def hdiff_call(stencil, inp, coeff, threads, exec_info=None):
    out = np.full(inp.shape, 7.0)
    gtscript.set_num_threads(threads)
    stencil(inp, coeff, out, origin=(2, 2, 0), domain=(inp.shape[0] - 4, inp.shape[1] - 4,
                                                       inp.shape[2]), exec_info=exec_info)
    return out


def test_set_and_get_round_trip():
    for n in (1, 3, 2, 256, 1):
        gtscript.set_num_threads(n)
        assert gtscript.get_num_threads() == n
    gtscript.set_num_threads(np.int64(4))  # NumPy's integers are whole numbers too
    assert gtscript.get_num_threads() == 4
    assert type(gtscript.get_num_threads()) is int
    assert gtscript.threads.MAX_THREADS == 256


@pytest.mark.parametrize("bad, error, words", [
    (0, ValueError, "between 1 and 256, not 0"),
    (-3, ValueError, "between 1 and 256, not -3"),
    (257, ValueError, "between 1 and 256, not 257"),
    (2**70, ValueError, "between 1 and 256"),
    (2.0, TypeError, "whole number, not float (2.0)"),
    ("4", TypeError, "whole number, not str ('4')"),
    (None, TypeError, "whole number, not NoneType"),
    (True, TypeError, "whole number, not True"),
])
def test_bad_counts_are_refused_and_change_nothing(bad, error, words):
    gtscript.set_num_threads(3)
    with pytest.raises(error, match="set_num_threads") as caught:
        gtscript.set_num_threads(bad)
    assert words in str(caught.value)
    assert gtscript.get_num_threads() == 3


def test_the_core_refuses_what_the_pool_cannot_take():
    # the C entry point checks too (gtscript.threads checks first and says more)
    for bad in (0, 257, -1, 2**80):
        with pytest.raises(ValueError, match="between 1 and 256"):
            gtscript._core.set_num_threads(bad)
    with pytest.raises(TypeError):
        gtscript._core.set_num_threads(1.5)


def test_results_are_identical_at_one_and_several_threads(rng):
    shape = (132, 100, 6)  # 128 x 96 x 6 points: above the parallel threshold, several tiles
    inp, coeff = rng.random(shape), rng.uniform(0.0, 0.1, shape)
    want = np.full(shape, 7.0)
    want[2:-2, 2:-2] = np_hdiff(inp, coeff)
    ref = np.full(shape, 7.0)
    gtscript.stencil("numpy", hdiff_defn)(inp, coeff, ref, origin=(2, 2, 0),
                                          domain=(shape[0] - 4, shape[1] - 4, shape[2]))
    np.testing.assert_array_equal(ref, want)
    stencil = gtscript.stencil("cpu", hdiff_defn)
    for threads in (1, 4, 3, 1, 2):
        info = {}
        out = hdiff_call(stencil, inp, coeff, threads, info)
        plan = info["plan"]
        assert plan["threads"] == threads and plan["workers"] == threads, plan
        ti, tj = plan["tile"]
        assert (shape[0] - 4) * (shape[1] - 4) > ti * tj * max(threads, 2), plan  # several tiles
        np.testing.assert_array_equal(out, want)


def test_a_change_between_calls_changes_the_threads_of_the_next_call(rng):
    shape = (132, 100, 6)
    inp, coeff = rng.random(shape), rng.uniform(0.0, 0.1, shape)
    stencil = gtscript.stencil("cpu", hdiff_defn)
    seen = []
    for threads in (2, 2, 1, 1, 4, 2):
        info = {}
        hdiff_call(stencil, inp, coeff, threads, info)
        seen.append((info["plan"]["threads"], info["plan"]["workers"]))
    assert seen == [(2, 2), (2, 2), (1, 1), (1, 1), (4, 4), (2, 2)]
    # a small domain runs on the calling thread whatever the count (as before)
    small = np.full((8, 8, 3), 7.0)
    info = {}
    gtscript.set_num_threads(4)
    stencil(small, small.copy(), small.copy(), origin=(2, 2, 0), domain=(4, 4, 3), exec_info=info)
    assert info["plan"]["threads"] == 1


def slow_defn(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        x = sin(a) + cos(a[1, 0, 0])  # noqa: F821 - GTScript's builtins
        x = sin(x) * cos(x) + exp(-x * x)  # noqa: F821
        x = sin(x) * cos(x) + exp(-x * x)  # noqa: F821
        x = sin(x) * cos(x) + exp(-x * x)  # noqa: F821
        b = x + sin(x) * cos(x)  # noqa: F821


def test_a_small_domain_with_much_work_per_point_is_shared_out(rng):
    # under 2**15 points a call stays on the calling thread unless the stencil's work at each
    # point (its expression nodes) makes up for it: a sweep of many statements on 100 columns
    # runs twice as fast on two threads, a copy of as many points gains nothing
    def copy_defn(a: Field[np.float64], b: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            b = a

    a = rng.random((49, 48, 8))
    got = {}
    for threads in (1, 2):
        gtscript.set_num_threads(threads)
        for defn, name in ((slow_defn, "slow"), (copy_defn, "copy")):
            b, info = np.zeros_like(a), {}
            gtscript.stencil("cpu", defn)(a, b, origin=(0, 0, 0), domain=(48, 48, 8),
                                          exec_info=info)
            got[name, threads] = (b, info["plan"]["threads"])
    assert got["slow", 2][1] == 2 and got["slow", 1][1] == 1
    assert got["copy", 2][1] == 1
    assert np.array_equal(got["slow", 2][0], got["slow", 1][0])
    assert np.array_equal(got["copy", 2][0][:48], a[:48])
    x = np.sin(a[:48, :48]) + np.cos(a[1:, :48])  # slow_defn in NumPy
    for _ in range(3):
        x = np.sin(x) * np.cos(x) + np.exp(-x * x)
    np.testing.assert_allclose(got["slow", 2][0][:48, :48], x + np.sin(x) * np.cos(x), rtol=1e-13)


def test_a_call_in_flight_keeps_its_threads():
    stencil = gtscript.stencil("cpu", slow_defn)
    a = np.random.default_rng(3).random((201, 200, 40))
    b = np.zeros_like(a)
    # a set that falls inside the run (exec_info's clock is time.monotonic's) must not change
    # how many threads the run has; a loaded machine may start the call late: try again
    for _attempt in range(5):
        gtscript.set_num_threads(2)
        info, during = {}, []

        def call():
            stencil(a, b, domain=(200, 200, 40), exec_info=info)

        worker = threading.Thread(target=call)
        worker.start()
        time.sleep(0.02)
        t0 = time.monotonic()
        gtscript.set_num_threads(1)
        t1 = time.monotonic()
        during.append((t0, t1))
        worker.join()
        if info["run_start_time"] < t0 and t1 < info["run_end_time"]:
            assert info["plan"]["threads"] == 2 and info["plan"]["workers"] == 2, info["plan"]
            break
    else:
        pytest.fail(f"no set fell inside a run in 5 tries: {during}, last run "
                    f"{info['run_start_time']}..{info['run_end_time']}")
    # and the next call runs on one
    info = {}
    stencil(a, b, domain=(200, 200, 40), exec_info=info)
    assert info["plan"]["threads"] == 1 and info["plan"]["workers"] == 1
    # NumPy has SIMD exp of its own (AVX-512 machines): its last bit may differ from libm's
    np.testing.assert_allclose(b[:200, :200], _slow_by_hand(a), rtol=1e-14, atol=0)


def _slow_by_hand(a):
    x = np.sin(a[:200, :200]) + np.cos(a[1:201, :200])
    for _ in range(3):
        x = np.sin(x) * np.cos(x) + np.exp(-x * x)
    return x + np.sin(x) * np.cos(x)


def test_the_tuner_measures_per_thread_count(rng, monkeypatch):
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE_MIN_MS", "0")  # tune calls of any length (tests)
    for var in ("GTSCRIPT_AUTOTUNE", "GTSCRIPT_TILE_SIZE", "GTSCRIPT_COLUMN_BLOCKS",
                "GTSCRIPT_STREAMING_STORES"):
        monkeypatch.delenv(var, raising=False)
    shape = (133, 101, 5)  # a domain no other test here calls with: keys of its own
    inp, coeff = rng.random(shape), rng.uniform(0.0, 0.1, shape)
    want = np.full(shape, 7.0)
    want[2:-2, 2:-2] = np_hdiff(inp, coeff)
    stencil = gtscript.stencil("cpu", hdiff_defn)

    def until_measured(threads):
        for _ in range(40):
            info = {}
            out = hdiff_call(stencil, inp, coeff, threads, info)
            np.testing.assert_array_equal(out, want)
            assert info["plan"]["threads"] == threads
            if info["plan"]["tuning"]["state"] in ("measured", "too short"):
                info = {}  # (the call that ends tuning runs the last candidate: one more)
                hdiff_call(stencil, inp, coeff, threads, info)
                return info["plan"]
        pytest.fail(f"tuning on {threads} threads did not end in 40 calls: {info['plan']}")

    on_two = until_measured(2)
    # one thread: a key of its own; the measurement on two is not used, tuning starts again
    info = {}
    hdiff_call(stencil, inp, coeff, 1, info)
    assert info["plan"]["threads"] == 1
    assert info["plan"]["tuning"]["state"] == "tuning", info["plan"]["tuning"]
    assert info["plan"]["tuning"]["calls"] == 1
    until_measured(1)
    # back on two: its measurement is still there, the plan the same
    info = {}
    hdiff_call(stencil, inp, coeff, 2, info)
    assert info["plan"]["tuning"]["state"] == on_two["tuning"]["state"]
    assert info["plan"]["tile"] == on_two["tile"]
    assert info["plan"]["tuning"]["chosen"] == on_two["tuning"]["chosen"]
    assert info["plan"]["tuning"]["calls"] == on_two["tuning"]["calls"]  # nothing measured
    assert info["plan"]["threads"] == 2


def test_threadpoolctl_lists_and_limits_gtscript(rng):
    threadpoolctl = pytest.importorskip("threadpoolctl", minversion="3.5")
    assert gtscript.threads.THREADPOOLCTL is True
    gtscript.set_num_threads(3)
    mine = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "gtscript"]
    assert len(mine) == 1, threadpoolctl.threadpool_info()
    assert mine[0]["internal_api"] == "gtscript" and mine[0]["num_threads"] == 3
    assert mine[0]["version"] == gtscript.__version__
    assert mine[0]["filepath"].endswith(gtscript._core.__file__.rsplit("/", 1)[-1])
    shape = (132, 100, 6)
    inp, coeff = rng.random(shape), rng.uniform(0.0, 0.1, shape)
    stencil = gtscript.stencil("cpu", hdiff_defn)
    with threadpoolctl.threadpool_limits(1):
        assert gtscript.get_num_threads() == 1
        info = {}
        out = np.full(shape, 7.0)
        stencil(inp, coeff, out, origin=(2, 2, 0), domain=(128, 96, 6), exec_info=info)
        assert info["plan"]["threads"] == 1 and info["plan"]["workers"] == 1
    assert gtscript.get_num_threads() == 3  # restored
    with threadpoolctl.threadpool_limits(limits=2, user_api="gtscript"):
        assert gtscript.get_num_threads() == 2
    assert gtscript.get_num_threads() == 3
    # what the pool cannot take is clamped, not raised inside the with block
    with threadpoolctl.threadpool_limits(10_000, user_api="gtscript"):
        assert gtscript.get_num_threads() == 256
    with threadpoolctl.ThreadpoolController().limit(limits=1, user_api="gtscript"):
        assert gtscript.get_num_threads() == 1
    assert gtscript.get_num_threads() == 3
