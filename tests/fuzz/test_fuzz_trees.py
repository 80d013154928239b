"""Fuzzing the core with malformed definition trees: the trees of real definitions (the fuzz
corpus, the shared stencils and the one below), mutated at random - items dropped,
duplicated, swapped or replaced by values of other types, huge and negative ints, None,
strings with lone surrogates or NUL, subtrees moved elsewhere, expressions nested deeper than
the core allows - and built on the numpy backend (and on the cpu backend for a sample).

A stencil pickles as its tree, and the disk index stores trees: the core must answer any of
them with a Python exception (TypeError or ValueError from its check of the tree, a
GTScriptSyntaxError or GTScriptSemanticError of the definition) or a stencil, never a crash.
The mutations are drawn from a seeded generator: mutation `n` of a run is `mutate(n)`, so a
failure is replayed by its number.
"""

from __future__ import annotations

import copy
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest

import gtscript
from gtscript import (FORWARD, IJ, PARALLEL, Field, K, computation, horizontal, interval,
                      region, I)
from gtscript import _core
from gtscript.errors import GTScriptSyntaxError
from gtscript.frontend import parse_definition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the helpers
import shared_stencils  # noqa: E402
from fuzz_grammar import load  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
SEED = 20261127
MUTATIONS = 600  # about 15 s on a 2-core machine
CPU_EVERY = 8  # one mutation in this many that the numpy backend accepts is built on the cpu


def runtime_constructs(a: Field[np.float64], h: Field[IJ, np.float64],
                       v: Field[(np.float64, (3,))], out: Field[np.float64], n: int):
    """Constructs the corpus lacks: a run-time interval bound, absolute K reads, K as a
    value, an IJ temporary declared, a temporary with data dimensions, a region."""
    w: Field[(np.float64, (2,))] = 0.0
    with computation(FORWARD), interval(n, None):
        s: Field[IJ, np.float64] = h
        w[0, 0, 0][0] = v[0, 0, 0][1] + a.at(K=0)
        out = s + w[0, 0, 0][0] * K
    with computation(PARALLEL), interval(0, n):
        out = a[0, 0, 1] if a > 0.0 else -a
        with horizontal(region[I[0], :]):
            out = 2.0 * out


def real_trees() -> list[tuple[dict, bool]]:
    """(tree, whether it builds): the corpus's refused definitions reach the analyses' errors."""
    trees = [(parse_definition(runtime_constructs), True)]
    for name in dir(shared_stencils):
        if name.endswith("_defn"):
            trees.append((parse_definition(getattr(shared_stencils, name)), True))
    for path in sorted(CORPUS.glob("*.py")):
        source = path.read_text()
        trees.append((parse_definition(load(source)), source.startswith("# builds")))
    return trees


# ---- mutations ------------------------------------------------------------------------------

INTS = [0, 1, -1, 2, 3, 7, -7, 2**31 - 1, 2**31, -2**31 - 1, 2**63, -2**63 - 1, 2**70, True]
STRS = ["", "\udcff", "a\udcff", "a\x00b", "binop", "index", "name", "nope", "float64", "IJ",
        "PARALLEL", "+", "and", "\u00e9t\u00e9", "x" * 300]
OTHER = [None, 1.5, math.nan, math.inf, b"bytes", [], (), {}, {"name": "a"}, object(), ("const",),
         [None], (1, 2, 3)]


def containers(tree, most_deep: int = 200):
    """(path, node) of every tuple and list in the tree (and its root dict), down to
    `most_deep` levels (a nested mutation goes far deeper)."""
    found, stack = [], [((), tree)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            found.append((path, node))
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, (tuple, list)):
            found.append((path, node))
            if len(path) < most_deep:
                stack.extend(((*path, i), v) for i, v in enumerate(node))
    return found


def get(tree, path):
    for p in path:
        tree = tree[p]
    return tree


def put(tree, path, value):
    """`tree` with the item at `path` replaced by `value` (tuples rebuilt along the way)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    new = put(tree[head], rest, value)
    if isinstance(tree, tuple):
        return tree[:head] + (new,) + tree[head + 1:]
    copied = copy.copy(tree)
    copied[head] = new
    return copied


def leaf_value(rng: random.Random, old):
    pool = rng.choice([INTS, STRS, OTHER])
    value = rng.choice(pool)
    if isinstance(old, str) and rng.random() < 0.5:  # a name of the tree made not text
        value = old + rng.choice(["\udcff", "\ud800", "\x00", "'"])
    if isinstance(old, int) and not isinstance(old, bool) and rng.random() < 0.5:
        value = old + rng.choice([-1, 1, 2**31, -2**31, 2**40])
    return value


def nested(e, depth: int):
    pos = e[1:3] if isinstance(e, tuple) and len(e) > 2 else (1, 0)
    for _ in range(depth):
        e = ("unop", *pos, "-", e)
    return e


SMALL_INTS = [-2, -1, 0, 1, 2, 3, 4, 5, 2**20, 2**20 + 1, -2**20 - 1, 2**31 - 1, 2**31, -2**31]


def plausible(rng: random.Random, tree, nodes):
    """An int or str item of the tree replaced by one of its kind: another name, operator,
    tag or dtype of the same tree, or an int near a limit (these get past the check of the
    tree into the builder and the analyses)."""
    leaves = [((*path, i), v) for path, node in nodes if isinstance(node, tuple)
              for i, v in enumerate(node) if isinstance(v, (int, str))]
    if not leaves:
        return tree, "no leaf"
    path, old = rng.choice(leaves)
    if isinstance(old, str):
        value = rng.choice([v for _, v in leaves if isinstance(v, str)])
    else:
        value = rng.choice(SMALL_INTS + [old + 1, old - 1, -old])
    return put(tree, path, value), f"{path} = {value!r:.40}"


def mutate_once(rng: random.Random, tree):
    nodes = containers(tree)
    if rng.random() < 0.4:
        return plausible(rng, tree, nodes)
    path, node = rng.choice(nodes)
    op = rng.choice(["drop", "dup", "swap", "leaf", "leaf", "retype", "graft", "nest", "append"])
    if isinstance(node, dict):
        key = rng.choice(list(node))
        if op == "drop":
            return {k: v for k, v in node.items() if k != key}, f"del {key}"
        return put(tree, (key,), leaf_value(rng, node[key])), f"{key} = leaf"
    n = len(node)
    items = list(node)
    if op == "drop" and n:
        i = rng.randrange(n)
        del items[i]
        what = f"drop {i}"
    elif op == "dup" and n:
        i = rng.randrange(n)
        items.insert(i, items[i])
        what = f"dup {i}"
    elif op == "swap" and n > 1:
        i, j = rng.sample(range(n), 2)
        items[i], items[j] = items[j], items[i]
        what = f"swap {i} {j}"
    elif op == "leaf" and n:
        i = rng.randrange(n)
        items[i] = leaf_value(rng, items[i])
        what = f"item {i} = {items[i]!r:.40}"
    elif op == "graft" and n:  # a subtree from elsewhere in the tree (an expr for a stmt, ...)
        i = rng.randrange(n)
        items[i] = rng.choice(nodes)[1]
        what = f"item {i} = graft"
    elif op == "nest" and n:
        i = rng.randrange(n)
        depth = rng.choice([50, 1000, 60_000])  # the last refused before any recursion
        items[i] = nested(items[i], depth)
        what = f"item {i} nested {depth}"
    elif op == "append":
        items.append(leaf_value(rng, None))
        what = "append"
    else:  # retype: a tuple as a list or a list as a tuple
        what = "retype"
        return put(tree, path, list(items) if isinstance(node, tuple) else tuple(items)), f"{path} {what}"
    new = tuple(items) if isinstance(node, tuple) else items
    return put(tree, path, new), f"{path} {what}"


EXPECTED = (TypeError, ValueError, GTScriptSyntaxError)


def mutate(trees, n: int):
    """Mutation number n: a tree and what was done to it."""
    rng = random.Random(SEED * 1_000_003 + n)
    tree = trees[rng.randrange(len(trees))][0]
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        tree, what = mutate_once(rng, tree)
        done.append(what)
        if not isinstance(tree, dict):
            break
    return tree, "; ".join(done)


def build(tree, backend):
    """None when the core built `tree`, else its exception (of the expected classes)."""
    try:
        _core.Module(tree, backend, {})
    except EXPECTED as e:
        return e
    return None


@pytest.fixture(scope="module")
def trees():
    return real_trees()


def test_real_trees_build(trees):
    """The unmutated trees build on both backends (else the mutations test nothing)."""
    assert len(trees) >= 8
    for tree, builds in trees:
        for backend in ("numpy", "cpu"):
            error = build(tree, backend)
            assert (error is None) == builds, (tree["filename"], error)


def test_mutated_trees_raise_or_build(trees):
    outcomes = {"built": 0}
    cpu_builds = 0
    for n in range(MUTATIONS):
        tree, what = mutate(trees, n)
        try:
            error = build(tree, "numpy")
            if error is None and outcomes["built"] % CPU_EVERY == 0:
                cpu_builds += 1
                error = build(tree, "cpu")
        except Exception as e:  # noqa: BLE001 - reported with the mutation's number
            pytest.fail(f"mutation {n} ({what}): {type(e).__name__}: {e}")
        name = "built" if error is None else type(error).__name__
        outcomes[name] = outcomes.get(name, 0) + 1
        if error is not None:
            assert str(error), f"mutation {n} ({what}): {type(error).__name__} without a message"
    # the mutations reach past the check of the tree, into the builder and the analyses
    assert outcomes["built"] > 10, outcomes
    assert outcomes.get("TypeError", 0) > 50 and outcomes.get("ValueError", 0) > 20, outcomes
    assert sum(v for k, v in outcomes.items() if k.startswith("GTScript")) > 5, outcomes
    assert cpu_builds > 0
    print(outcomes, f"{cpu_builds} built on the cpu too")
