"""A generated cloud-microphysics-style stencil, emitted as GTScript, NumPy and C.

    program = generate(seed=0, size=1.0)      # deterministic in (seed, size)
    program.gtscript_source("micro")          # a module's text: @gtscript.function's + stencil
    program.numpy_source("micro_numpy")       # an independent NumPy twin (loop over K)
    program.c_source("micro_c")               # hand-written-style C (loop over columns, K)
    program.counts()                          # temporaries, conditionals, K-1 reads, ...

The program has the shape of a column physics scheme: three computations, all FORWARD, the
first two short (level 0 sets the fluxes the sedimentation carries down; then the layer
geometry), then one over the levels 1..nlev (the domain has nlev + 1 levels, level 0 the
top boundary), made of process blocks: saturation adjustment, autoconversion, accretion,
rain evaporation, freezing and melting, deposition, ice nucleation, collection between
species and sedimentation. Each block makes a dozen temporaries and half a dozen `if`s on
values, most nested, calls `@gtscript.function`s (saturation pressures, limiters, fall
speeds) and writes one diagnostic output. Off-point reads are at K-1 only: a few input
fields and the sedimentation fluxes.

Every statement is one tree (tuples, below) that three small printers turn into the three
languages, so the twin and the C version compute the same program without sharing code with
gtscript. Conditions are, where the physics allows it, continuous across their thresholds
(a rate that vanishes at its threshold), and every `log` and `**` argument is kept positive
by a `max` guard, so that the last-bit differences of exp/log/pow between implementations
stay last-bit differences.
"""

import random
from dataclasses import dataclass, field

# ------------------------------------------------------------------------------ expressions
# ('num', v) ('var', name, koff) ('bin', op, a, b) ('neg', a) ('call', builtin, args)
# ('ucall', function, args) ('cmp', op, a, b) ('and', a, b)


class E:
    """An expression under construction: operators build the tuple tree."""

    __slots__ = ("n",)

    def __init__(self, node):
        self.n = node

    def _b(self, op, other, swap=False):
        a, b = self.n, lift(other)
        return E(("bin", op, b, a) if swap else ("bin", op, a, b))

    def __add__(self, o): return self._b("+", o)
    def __radd__(self, o): return self._b("+", o, True)
    def __sub__(self, o): return self._b("-", o)
    def __rsub__(self, o): return self._b("-", o, True)
    def __mul__(self, o): return self._b("*", o)
    def __rmul__(self, o): return self._b("*", o, True)
    def __truediv__(self, o): return self._b("/", o)
    def __rtruediv__(self, o): return self._b("/", o, True)
    def __pow__(self, o): return self._b("**", o)
    def __neg__(self): return E(("neg", self.n))
    def __lt__(self, o): return E(("cmp", "<", self.n, lift(o)))
    def __gt__(self, o): return E(("cmp", ">", self.n, lift(o)))
    def __and__(self, o): return E(("and", self.n, lift(o)))


def lift(x):
    if isinstance(x, E):
        return x.n
    if isinstance(x, (int, float)):
        return ("num", float(x))
    raise TypeError(f"not an expression: {x!r}")


def num(v):
    return E(("num", float(v)))


def call(name, *args):
    return E(("call", name, [lift(a) for a in args]))


def exp(x): return call("exp", x)
def log(x): return call("log", x)
def mn(a, b): return call("min", a, b)
def mx(a, b): return call("max", a, b)


# ------------------------------------------------------------------------------ the program

#: the @gtscript.function's: (parameters, [(local, expression)], returned expression), built
#: from parameter names; each is inlined by gtscript at every call
def _functions():
    v = {n: E(("var", n, 0)) for n in ("t", "p", "es", "q", "rho", "a", "b", "x", "lo", "hi",
                                        "t0", "w", "tc")}
    f = {}
    f["esat_w"] = (["t"], [("tc", v["t"] - 273.16)],
                   610.78 * exp(17.27 * v["tc"] / mx(v["t"] - 35.86, 50.0)))
    f["esat_i"] = (["t"], [("tc", v["t"] - 273.16)],
                   610.78 * exp(21.875 * v["tc"] / mx(v["t"] - 7.66, 50.0)))
    f["qsat"] = (["es", "p"], [], 0.622 * v["es"] / mx(v["p"] - 0.378 * v["es"], 1.0))
    f["limit"] = (["x", "lo", "hi"], [], mn(mx(v["x"], v["lo"]), v["hi"]))
    # a 0..1 ramp: 0 above t0, 1 at t0 - w and below
    f["ramp"] = (["t", "t0", "w"], [], mn(mx((v["t0"] - v["t"]) / v["w"], 0.0), 1.0))
    # terminal fall speed a * (rho q)^b with the density correction (rho0 / rho)^0.5
    f["fallspeed"] = (["q", "rho", "a", "b"], [],
                      v["a"] * mx(v["q"] * v["rho"], 1e-12) ** v["b"]
                      * (1.2 / mx(v["rho"], 0.01)) ** 0.5)
    # a mean particle size from the mass content (m), through a log and an exp
    f["diameter"] = (["q", "rho"], [("x", log(mx(v["q"] * v["rho"], 1e-14) * 1e-3))],
                     exp(0.25 * v["x"]))
    f["vent"] = (["q", "rho"], [], 0.78 + 0.31 * mx(v["q"] * v["rho"], 1e-12) ** 0.2)
    return f


SPECIES = ("qv", "qc", "qr", "qi", "qs", "qg")
SEDIMENTING = {"qr": (12.0, 0.2), "qs": (2.5, 0.12), "qg": (6.0, 0.15), "qi": (0.7, 0.1)}
#: read-only 3-D inputs besides the state: p, rho, dz (geometry), nc (droplet number, m^-3),
#: and modulating inputs that each block reads once (updraft, turbulence, aerosols, ...)
GEOMETRY = ("p", "rho", "dz", "nc")
AUX = ("w", "tke", "cldfra", "aer1", "aer2", "aer3", "aer4", "ni", "omega", "radh", "tadv",
       "qvadv")
IJ_FIELDS = ("landmask", "tsurf", "ccnfac", "latfac")
K_FIELD = "kfac"
SCALARS = ("dt",)


@dataclass
class Program:
    functions: dict
    passes: list                    # [(start, end or None, [statements])]
    fields3d: list                  # read-only inputs, in-out state, outputs: argument order
    inouts: list
    outputs: list
    ij_fields: list
    k_fields: list
    scalars: list
    seed: int
    size: float
    temps: list = field(default_factory=list)
    stored: set = field(default_factory=set)   # temporaries kept per level (see _classify)

    # -------------------------------------------------------------------------- arguments

    def arguments(self):
        """(name, kind) in the stencil's argument order; kind: 'ijk', 'ij', 'k' or 'scalar'."""
        return ([(n, "ijk") for n in self.fields3d] + [(n, "ij") for n in self.ij_fields]
                + [(n, "k") for n in self.k_fields] + [(n, "scalar") for n in self.scalars])

    def kind(self, name):
        if not hasattr(self, "_kind_cache"):
            self._kind_cache = dict(self.arguments())
        return self._kind_cache.get(name, "temp")

    @property
    def _kinds(self):
        return dict(self.arguments())

    # ---------------------------------------------------------------------------- counting

    def counts(self):
        """The shape of the program: arguments, temporaries, conditionals (`if`s), nesting,
        K-1 reads, transcendental calls (exp, log and `**` after inlining), statements."""
        kinds = self._kinds
        c = {"arguments": len(kinds), "fields_3d": len(self.fields3d),
             "ij_fields": len(self.ij_fields), "k_fields": len(self.k_fields),
             "outputs": len(self.outputs) + len(self.inouts), "temporaries": len(self.temps),
             "conditionals": 0, "max_nesting": 0, "k_minus_1_reads": 0,
             "k_minus_1_names": set(), "exp": 0, "log": 0, "pow": 0, "function_calls": 0,
             "statements_inlined": 0, "functions": len(self.functions)}

        def expr(e):
            tag = e[0]
            if tag == "var" and e[2] == -1:
                c["k_minus_1_reads"] += 1
                c["k_minus_1_names"].add(e[1])
            elif tag in ("bin", "cmp"):
                if tag == "bin" and e[1] == "**":
                    c["pow"] += 1
                expr(e[2]), expr(e[3])
            elif tag == "neg":
                expr(e[1])
            elif tag == "and":
                expr(e[1]), expr(e[2])
            elif tag == "call":
                if e[1] in ("exp", "log"):
                    c[e[1]] += 1
                for a in e[2]:
                    expr(a)
            elif tag == "ucall":
                c["function_calls"] += 1
                params, body, ret = self.functions[e[1]]
                c["statements_inlined"] += len(body) + 1
                for _, b in body:
                    expr(lift(b))
                expr(lift(ret))
                for a in e[2]:
                    expr(a)

        def stmts(body, depth):
            for s in body:
                c["statements_inlined"] += 1
                if s[0] == "assign":
                    expr(s[2])
                else:
                    c["conditionals"] += 1
                    c["max_nesting"] = max(c["max_nesting"], depth + 1)
                    expr(s[1])
                    stmts(s[2], depth + 1)
                    if s[3]:
                        c["statements_inlined"] += 1  # the else line
                        stmts(s[3], depth + 1)

        for _, _, body in self.passes:
            stmts(body, 0)
        c["k_minus_1_names"] = sorted(c["k_minus_1_names"])
        return c

    def check_column_local(self):
        """Raises ValueError unless every temporary is column-local: read at a level only
        after it is written at that level (in this computation at an enclosing or earlier
        scope, or by an earlier computation over these levels), and read at K-1 only where
        an earlier computation wrote it on the level above the first."""
        args = self._kinds
        earlier = []  # (start, end, names written at the top level)

        def reads(e, visible, start):
            tag = e[0]
            if tag == "var":
                name, koff = e[1], e[2]
                if name in args or name in visible and koff == 0:
                    return
                # level start - 1 from an earlier computation, the later ones from this one
                # (or from an earlier one over all the levels)
                if koff == -1 and any(s <= start - 1 and (end is None or end >= start)
                                      for s, end, names in earlier if name in names) and (
                        name in this_pass or any(s <= start - 1 and end is None
                                                 for s, end, names in earlier if name in names)):
                    return
                raise ValueError(f"{name} is read at K{koff:+d} before it is written")
            for child in e[1:]:
                if isinstance(child, tuple):
                    reads(child, visible, start)
                elif isinstance(child, list):
                    for c in child:
                        if isinstance(c, tuple):
                            reads(c, visible, start)

        def walk(body, visible, start):
            for s in body:
                if s[0] == "assign":
                    reads(s[2], visible, start)
                    visible.add(s[1])
                else:
                    reads(s[1], visible, start)
                    walk(s[2], set(visible), start)
                    walk(s[3], set(visible), start)

        for start, end, body in self.passes:
            this_pass = {s[1] for s in body if s[0] == "assign"}
            visible = set()
            for s, e, names in earlier:  # an earlier computation over these levels
                if s <= start and (e is None or (end is not None and e >= end)):
                    visible |= names
            walk(body, visible, start)
            earlier.append((start, end, this_pass))

    # ---------------------------------------------------------------------------- printers

    def gtscript_source(self, name, gt4py=False):
        """A module defining the functions and the stencil `name`, for gtscript (or, with
        gt4py=True, for GT4Py's own gtscript)."""
        pkg = "gt4py.cartesian.gtscript" if gt4py else "gtscript"
        out = ["import numpy as np",
               f"from {pkg} import FORWARD, IJ, K, Field, computation, interval, exp, log",
               f"import {pkg} as gtscript" if gt4py else "import gtscript", ""]
        p = _Printer(self, "gts")
        for fname, (params, body, ret) in self.functions.items():
            out += ["", "@gtscript.function", f"def {fname}({', '.join(params)}):"]
            out += p.function(fname)
        types = {"ijk": "Field[np.float64]", "ij": "Field[IJ, np.float64]",
                 "k": "Field[K, np.float64]", "scalar": "np.float64"}
        args = ",\n        ".join(f"{n}: {types[k]}" for n, k in self.arguments())
        out += ["", "", f"def {name}(\n        {args}):"]
        for start, end, body in self.passes:
            stop = "None" if end is None else str(end)
            out.append(f"    with computation(FORWARD), interval({start}, {stop}):")
            out += p.block(body, 2)
        return "\n".join(out) + "\n"

    def numpy_source(self, name):
        """A module with `name(**arrays, dt=...)`: the same program vectorised over columns
        with an explicit loop over K; arrays (ncol, 1, nk), IJ (ncol, 1), K (nk,)."""
        p = _Printer(self, "np")
        out = ["import numpy as np", ""]
        for fname, (params, body, ret) in self.functions.items():
            out += ["", f"def {fname}({', '.join(params)}):"]
            out += p.function(fname)
        out += ["", "", f"def {name}({', '.join(n for n, _ in self.arguments())}):",
                "    ncol, nk = p.shape[0], p.shape[2]"]
        out += [f"    {t} = np.zeros((ncol, nk))" for t in sorted(self.stored)]
        out.append("    with np.errstate(all='ignore'):")
        for start, end, body in self.passes:
            stop = "nk" if end is None else str(end)
            out.append(f"        for k in range({start}, {stop}):")
            out += p.block(body, 3)
        return "\n".join(out) + "\n"

    def c_source(self, name):
        """C11: `int name(double *const *args, long ncol, long nk, double dt)`, args the
        arrays in argument order (C order, K contiguous); OpenMP over columns; returns 1
        where a thread could not allocate the levels of its kept temporaries."""
        p = _Printer(self, "c")
        out = ["#include <math.h>", "#include <stdlib.h>", "",
               "static inline double mn(double a, double b) { return a < b ? a : b; }",
               "static inline double mx(double a, double b) { return a > b ? a : b; }"]
        for fname, (params, body, ret) in self.functions.items():
            out += ["", f"static inline double {fname}("
                    + ", ".join(f"double {q}" for q in params) + ") {"]
            out += p.function(fname) + ["}"]
        arrays = [(n, k) for n, k in self.arguments() if k != "scalar"]
        out += ["", "/* 0, or 1 where a thread could not allocate its column buffer */",
                f"int {name}(double *const *args, long ncol, long nk, double dt) {{",
                "    int failed = 0;"]
        out += [f"    double *const {n}_a = args[{i}];" for i, (n, _) in enumerate(arrays)]
        nstored = len(self.stored)
        # every thread reaches the worksharing loop, with or without its buffer
        out += ["#pragma omp parallel", "    {",
                f"        double *buf = malloc(sizeof(double) * (size_t)nk * {max(nstored, 1)});",
                "        if (!buf) {", "#pragma omp atomic write", "            failed = 1;",
                "        }",
                "#pragma omp for schedule(static)", "        for (long i = 0; i < ncol; i++) {",
                "            if (!buf)", "                continue;"]
        out += [f"            double *const {t} = buf + (size_t)nk * {j};"
                for j, t in enumerate(sorted(self.stored))]
        for n, k in arrays:
            off = {"ijk": "i * nk", "ij": "i", "k": "0"}[k]
            out.append(f"            double *const {n} = {n}_a + {off};")
        for start, end, body in self.passes:
            stop = "nk" if end is None else str(end)
            out.append(f"            for (long k = {start}; k < {stop}; k++) {{")
            written = _assigned(body)
            locals_ = [t for t in self.temps if t not in self.stored and t in written]
            for j in range(0, len(locals_), 12):
                out.append("                double " + ", ".join(locals_[j:j + 12]) + ";")
            out += p.block(body, 4)
            out.append("            }")
        out += ["        }", "        free(buf);", "    }", "    return failed;", "}"]
        return "\n".join(out) + "\n"


def _assigned(body):
    """The names a list of statements assigns, in its branches too."""
    names = set()
    for s in body:
        if s[0] == "assign":
            names.add(s[1])
        else:
            names |= _assigned(s[2]) | _assigned(s[3])
    return names


class _Printer:
    """Statements and expressions of one Program in one dialect: 'gts', 'np' or 'c'."""

    def __init__(self, program, dialect):
        self.prog, self.d = program, dialect
        self.nmask = 0
        self.in_function = False  # a function's names are its parameters and locals
        self.defined = set()      # the twin's locals assigned so far (in program order)

    def function(self, fname):
        """The lines of one @gtscript.function's body (after its def line) in this dialect."""
        params, body, ret = self.prog.functions[fname]
        self.in_function = True
        try:
            if self.d == "c":
                lines = [f"    const double {loc} = {self.expr(lift(e))};" for loc, e in body]
                return lines + [f"    return {self.expr(lift(ret))};"]
            lines = [f"    {loc} = {self.expr(lift(e))}" for loc, e in body]
            return lines + [f"    return {self.expr(lift(ret))}"]
        finally:
            self.in_function = False

    def var(self, name, koff):
        if self.in_function:
            return name
        kind, d = self.prog.kind(name), self.d
        ks = "k" if koff == 0 else f"k - {-koff}"
        if kind == "ijk":
            return {"gts": name if koff == 0 else f"{name}[0, 0, {koff}]",
                    "np": f"{name}[:, 0, {ks}]", "c": f"{name}[{ks}]"}[d]
        if kind == "ij":
            return {"gts": name, "np": f"{name}[:, 0]", "c": f"{name}[0]"}[d]
        if kind == "k":
            return {"gts": name, "np": f"{name}[{ks}]", "c": f"{name}[{ks}]"}[d]
        if kind == "temp" and name in self.prog.stored:
            return {"gts": name if koff == 0 else f"{name}[0, 0, {koff}]",
                    "np": f"{name}[:, {ks}]", "c": f"{name}[{ks}]"}[d]
        if koff != 0:
            raise ValueError(f"{name} is read at K{koff:+d} but not kept per level")
        return name  # scalars, temporaries kept in locals, function parameters

    def expr(self, e):
        tag, d = e[0], self.d
        if tag == "num":
            text = repr(e[1])
            return f"({text})" if e[1] < 0 else text
        if tag == "var":
            return self.var(e[1], e[2])
        if tag == "bin":
            a, b = self.expr(e[2]), self.expr(e[3])
            if e[1] == "**" and d == "c":
                return f"pow({a}, {b})"
            return f"({a} {e[1]} {b})"
        if tag == "neg":
            return f"(-{self.expr(e[1])})"
        if tag == "cmp":
            return f"({self.expr(e[2])} {e[1]} {self.expr(e[3])})"
        if tag == "and":
            op = {"gts": "and", "np": "&", "c": "&&"}[d]
            return f"({self.expr(e[1])} {op} {self.expr(e[2])})"
        if tag == "call":
            args = ", ".join(self.expr(a) for a in e[2])
            name = e[1]
            if d == "np":
                name = {"min": "np.minimum", "max": "np.maximum"}.get(name, "np." + name)
            elif d == "c":
                name = {"min": "mn", "max": "mx"}.get(name, name)
            return f"{name}({args})"
        if tag == "ucall":
            return f"{e[1]}({', '.join(self.expr(a) for a in e[2])})"
        raise ValueError(f"unknown node {tag}")

    def block(self, body, depth, mask=None):
        ind = "    " * depth
        out = []
        for s in body:
            if s[0] == "assign":
                target, value = self.var(s[1], 0), self.expr(s[2])
                self_defined = target == s[1]
                if self.d == "c":
                    out.append(f"{ind}{target} = {value};")
                elif self.d == "gts" or mask is None or (
                        target == s[1] and s[1] not in self.defined):
                    # a local first set under a mask is read only under that mask
                    out.append(f"{ind}{target} = {value}")
                else:  # the twin: every lane computes, the mask's lanes keep the result
                    out.append(f"{ind}{target} = np.where({mask}, {value}, {target})")
                if self_defined:
                    self.defined.add(s[1])
                continue
            cond = self.expr(s[1])
            if self.d == "gts":
                out.append(f"{ind}if {cond}:")
                out += self.block(s[2], depth + 1)
                if s[3]:
                    out.append(f"{ind}else:")
                    out += self.block(s[3], depth + 1)
            elif self.d == "c":
                out.append(f"{ind}if {cond} {{")
                out += self.block(s[2], depth + 1)
                out.append(f"{ind}}}" + (" else {" if s[3] else ""))
                if s[3]:
                    out += self.block(s[3], depth + 1)
                    out.append(f"{ind}}}")
            else:  # the condition is taken before either branch writes
                self.nmask += 1
                m = f"m{self.nmask}"
                out.append(f"{ind}c{m} = {cond}")
                out.append(f"{ind}{m} = c{m}" if mask is None else f"{ind}{m} = {mask} & c{m}")
                out += self.block(s[2], depth, m)
                if s[3]:
                    out.append(f"{ind}n{m} = ~c{m}" if mask is None
                               else f"{ind}n{m} = {mask} & ~c{m}")
                    out += self.block(s[3], depth, f"n{m}")
        if not out and self.d != "np":
            out.append(f"{ind}pass" if self.d == "gts" else f"{ind};")
        return out


# ---------------------------------------------------------------------------- the generator


class _Gen:
    def __init__(self, seed, nblocks):
        self.rng = random.Random(seed)
        self.ntemp = 0
        self.temps = []
        self.body = []            # statements of the current scope
        self.cur = {}             # species/t -> the temporary holding its current value
        self.aux_i = 0
        self.diag_i = 0
        self.nblocks = nblocks
        self.outputs = []

    # helpers ------------------------------------------------------------------------------
    def tmp(self, prefix, value):
        """A new temporary, assigned `value` here (at the current scope's top)."""
        self.ntemp += 1
        name = f"{prefix}_{self.ntemp}"
        self.temps.append(name)
        self.set(name, value)
        return E(("var", name, 0))

    def set(self, name, value):
        self.body.append(("assign", name, lift(value)))

    def when(self, cond, then, otherwise=None):
        """if cond: then() else: otherwise(); the callables append to the branch."""
        outer = self.body
        self.body = []
        then()
        then_body = self.body
        else_body = []
        if otherwise is not None:
            self.body = []
            otherwise()
            else_body = self.body
        self.body = outer
        outer.append(("if", lift(cond), then_body, else_body))

    def c(self, x, spread=0.1):
        """A coefficient near x (the seed picks it)."""
        return round(x * (1.0 + spread * (2.0 * self.rng.random() - 1.0)), 6)

    def v(self, name, koff=0):
        return E(("var", name, koff))

    def s(self, species):
        return self.v(self.cur[species])

    def update(self, species, value):
        self.cur[species] = self.tmp(species, value).n[1]

    def aux(self):
        """The next modulating input, as a factor near 1."""
        name = AUX[self.aux_i % len(AUX)]
        self.aux_i += 1
        return 1.0 + self.c(0.02) * self.v(name)

    def diag(self, value):
        name = f"diag{self.diag_i % self.noutputs}"
        if self.diag_i < self.noutputs:
            self.set(name, value)
        else:  # more blocks than outputs: the output sums them
            self.set(name, self.v(name) + value)
        self.diag_i += 1

    def fix_negative(self, species, into="qv"):
        """A negative mixing ratio goes back to `into` (a nested pair of `if`s)."""
        q = self.s(species)
        corr = self.tmp("neg", 0.0)

        def fix():
            self.set(corr.n[1], -q)

            def big():
                self.set(corr.n[1], mn(-q, mx(self.s(into), 0.0)))
            self.when(-q > mx(self.s(into), 0.0), big)
        self.when(q < 0.0, fix)
        self.update(species, q + corr)
        self.update(into, self.s(into) - corr)

    def ucall(self, fname, *args):
        return E(("ucall", fname, [lift(a) for a in args]))


# --------------------------------------------------------------------------- process blocks

def _condensation(g):
    t, qv, qc = g.s("t"), g.s("qv"), g.s("qc")
    es = g.tmp("es", g.ucall("esat_w", t))
    qs = g.tmp("qsw", g.ucall("qsat", es, g.v("p")))
    dq = g.tmp("dq", (qv - qs) / (1.0 + g.c(5417.0) * 2490.0 * qs / (t * t)))
    cnd = g.tmp("cnd", 0.0)
    f = g.c(0.9, 0.05)

    def condense():
        g.set(cnd.n[1], dq * f * g.aux())

        def cap():
            g.set(cnd.n[1], 0.5 * qv)
        g.when(cnd > 0.5 * qv, cap)

    def evaporate():
        def has_cloud():
            g.set(cnd.n[1], mx(dq * f, -qc))

            def cold():
                g.set(cnd.n[1], cnd * (1.0 - 0.1 * g.ucall("ramp", t, 250.0, 30.0)))
            g.when(t < 250.0, cold)
        g.when(qc > 0.0, has_cloud)
    g.when(dq > 0.0, condense, evaporate)
    g.update("qv", qv - cnd)
    g.update("qc", qc + cnd)
    g.update("t", t + 2490.0 * cnd)
    g.diag(cnd / g.v("dt"))
    g.fix_negative("qc")


def _autoconversion(g):
    qc, qr = g.s("qc"), g.s("qr")
    qcrit = g.c(2e-4)
    au = g.tmp("au", 0.0)
    ncm = g.tmp("ncm", mx(g.v("nc") * 1e-6 * g.v("ccnfac"), 10.0))

    def convert():
        excess = g.tmp("exc", mx(qc - qcrit, 1e-12))
        g.set(au.n[1], g.c(1350.0) * excess ** g.c(2.47, 0.02) * ncm ** g.c(-1.79, 0.02)
              * g.aux())

        def land():
            g.set(au.n[1], au * g.c(0.8, 0.05))
        g.when(g.v("landmask") > 0.5, land)

        def limit():
            g.set(au.n[1], excess / g.v("dt"))
        g.when(au * g.v("dt") > excess, limit)
    g.when(qc > qcrit, convert)
    g.update("qc", qc - au * g.v("dt"))
    g.update("qr", qr + au * g.v("dt"))
    g.diag(au)
    g.fix_negative("qc")


def _accretion(g):
    qc, qr, t = g.s("qc"), g.s("qr"), g.s("t")
    ac = g.tmp("ac", 0.0)

    def both():
        def rain():
            prod = g.tmp("cr", mx(qc * qr, 1e-24))
            g.set(ac.n[1], g.c(67.0) * prod ** g.c(1.15, 0.02) * g.aux()
                  * (1.2 / g.v("rho")) ** 0.5)
            g.set(ac.n[1], g.ucall("limit", ac, 0.0, qc / g.v("dt")))

            def cold():
                g.set(ac.n[1], ac * (1.0 - 0.5 * g.ucall("ramp", t, 273.16, 40.0)))
            g.when(t < 273.16, cold)
        g.when(qr > 1e-9, rain)
    g.when(qc > 1e-9, both)
    g.update("qc", qc - ac * g.v("dt"))
    g.update("qr", qr + ac * g.v("dt"))
    g.diag(ac)
    g.fix_negative("qc")


def _rain_evaporation(g):
    qr, qv, t = g.s("qr"), g.s("qv"), g.s("t")
    es = g.tmp("es", g.ucall("esat_w", t))
    qs = g.tmp("qsw", g.ucall("qsat", es, g.v("p")))
    ev = g.tmp("ev", 0.0)
    rho = g.v("rho")

    def rain():
        def subsat():
            ss = g.tmp("ss", (qs - qv) / mx(qs, 1e-10))
            vf = g.tmp("vf", g.ucall("vent", qr, rho))
            g.set(ev.n[1], g.c(2e-3) * ss * mx(rho * qr, 1e-12) ** g.c(0.525, 0.02) * vf
                  / rho * g.aux())
            g.set(ev.n[1], g.ucall("limit", ev, 0.0, qr / g.v("dt")))

            def cap():
                g.set(ev.n[1], (qs - qv) / g.v("dt"))
            g.when(ev * g.v("dt") > qs - qv, cap)
        g.when(qv < qs, subsat)
    g.when(qr > 1e-10, rain)
    dt = g.v("dt")
    g.update("qr", qr - ev * dt)
    g.update("qv", qv + ev * dt)
    g.update("t", t - 2490.0 * ev * dt)
    g.diag(ev)
    g.fix_negative("qr")


def _freeze_melt(g):
    t, qc, qi, qs = g.s("t"), g.s("qc"), g.s("qi"), g.s("qs")
    frz = g.tmp("frz", 0.0)
    mlt = g.tmp("mlt", 0.0)
    k = g.c(0.66)

    def cold():
        def cloud():
            g.set(frz.n[1], qc * (1.0 - exp(k * (t - 273.16))))

            def homogeneous():
                g.set(frz.n[1], qc)
            g.when(t < 233.16, homogeneous)
        g.when(qc > 0.0, cloud)

    def warm():
        def snow():
            g.set(mlt.n[1], mn(qs, g.c(5e-3) * (t - 273.16) * qs * g.aux()))
        g.when(qs > 0.0, snow)
    g.when(t < 273.16, cold, warm)
    g.update("qc", qc - frz)
    g.update("qi", qi + frz)
    g.update("qs", qs - mlt)
    g.update("qr", g.s("qr") + mlt)
    g.update("t", t + 333.0 * (frz - mlt))
    g.diag(frz - mlt)
    g.fix_negative("qs", "qr")


def _deposition(g):
    t, qv, qi = g.s("t"), g.s("qv"), g.s("qi")
    esi = g.tmp("esi", g.ucall("esat_i", t))
    qsi = g.tmp("qsi", g.ucall("qsat", esi, g.v("p")))
    dep = g.tmp("dep", 0.0)

    def cold():
        def ice():
            lns = g.tmp("lns", log(mx(qv, 1e-12) / mx(qsi, 1e-12)))
            g.set(dep.n[1], g.c(1e-3) * lns * mx(qi * g.v("rho"), 1e-12) ** 0.5 * g.aux())

            def grow():
                g.set(dep.n[1], mn(dep, (qv - qsi) / g.v("dt")))

            def shrink():
                g.set(dep.n[1], mx(dep, -qi / g.v("dt")))
            g.when(dep > 0.0, grow, shrink)
        g.when(qi > 1e-12, ice)
    g.when(t < 273.16, cold)
    dt = g.v("dt")
    g.update("qv", qv - dep * dt)
    g.update("qi", qi + dep * dt)
    g.update("t", t + 2834.0 * dep * dt)
    g.diag(dep)
    g.fix_negative("qi")


def _nucleation(g):
    t, qv, qi = g.s("t"), g.s("qv"), g.s("qi")
    esi = g.tmp("esi", g.ucall("esat_i", t))
    qsi = g.tmp("qsi", g.ucall("qsat", esi, g.v("p")))
    nuc = g.tmp("nuc", 0.0)

    def cold():
        def supersat():
            nin = g.tmp("nin", g.c(1e3) * exp(mn(0.1 * (258.16 - t), 30.0)) * g.v("kfac"))
            g.set(nuc.n[1], mn(nin * 1e-12 / g.v("dt") * g.aux(), (qv - qsi) / g.v("dt")))
            g.set(nuc.n[1], mx(nuc, 0.0))
        g.when(qv > qsi, supersat)
    g.when(t < 258.16, cold)
    dt = g.v("dt")
    g.update("qv", qv - nuc * dt)
    g.update("qi", qi + nuc * dt)
    g.update("t", t + 2834.0 * nuc * dt)
    g.diag(nuc)


#: (collected, collector, coefficient, exponent, efficiency's temperature scale)
COLLECTIONS = (("qc", "qs", 4.0, 0.8, 0.025), ("qi", "qs", 1.5, 0.6, 0.05),
               ("qc", "qg", 6.0, 0.85, 0.02), ("qr", "qg", 3.0, 0.9, 0.03),
               ("qi", "qg", 1.0, 0.7, 0.04), ("qs", "qg", 0.8, 0.75, 0.06))


def _collection(g, which):
    src, dst, a, b, te = COLLECTIONS[which]
    q, qd, t = g.s(src), g.s(dst), g.s("t")
    col = g.tmp("col", 0.0)

    def present():
        def collector():
            eff = g.tmp("eff", exp(g.c(te) * mn(t - 273.16, 0.0)))
            dm = g.tmp("dm", g.ucall("diameter", qd, g.v("rho")))
            g.set(col.n[1], g.c(a) * q * mx(qd * g.v("rho"), 1e-12) ** g.c(b, 0.02) * eff
                  * (1.0 + 10.0 * dm) * g.aux())
            g.set(col.n[1], mn(col, q / g.v("dt")))
            if src in ("qc", "qr"):  # liquid collected above freezing sheds as rain
                def warm():
                    g.set(col.n[1], col * 0.5)
                g.when((t > 273.16) & (qd > 1e-6), warm)
        g.when(qd > 1e-10, collector)
    g.when(q > 1e-12, present)
    dt = g.v("dt")
    g.update(src, q - col * dt)
    g.update(dst, qd + col * dt)
    if src in ("qc", "qr"):
        g.update("t", t + 333.0 * col * dt)
    g.diag(col)
    g.fix_negative(src)


def _sedimentation(g, species):
    """Implicit upwind fall: the flux from the level above (read at K-1) comes in, the level's
    own falls out at its terminal speed; the flux is kept per level."""
    q, rho, dz, dt = g.s(species), g.v("rho"), g.v("dz"), g.v("dt")
    a, b = SEDIMENTING[species]
    flux = f"flx_{species}"
    vt = g.tmp("vt", g.ucall("fallspeed", q, rho, g.c(a), b))

    def fast():  # a CFL-like cap on the fall speed
        g.set(vt.n[1], dz / dt)
    g.when(vt * dt > dz, fast)
    fin = g.tmp("fin", g.v(flux, -1))
    qn = g.tmp(species, (q + dt * fin / (rho * dz)) / (1.0 + dt * vt / dz))

    def tiny():
        g.set(qn.n[1], 0.0)
    g.when(qn < 1e-14, tiny)
    g.cur[species] = qn.n[1]
    g.set(flux, rho * qn * vt)
    g.diag(g.v(flux))


TEMPLATES = [_condensation, _autoconversion, _accretion, _rain_evaporation, _freeze_melt,
             _deposition, _nucleation] + [
    (lambda g, i=i: _collection(g, i)) for i in range(len(COLLECTIONS))]

#: blocks of the default size (the sedimentation of four species comes on top)
DEFAULT_BLOCKS = 52
DEFAULT_OUTPUTS = 40


def generate(seed=0, size=1.0):
    """The program for `seed` at `size` (1.0: ~70 arguments, ~450 temporaries, ~270
    conditionals; the block and output counts scale with it)."""
    nblocks = max(len(TEMPLATES), round(DEFAULT_BLOCKS * size))
    noutputs = max(4, min(DEFAULT_OUTPUTS, round(DEFAULT_OUTPUTS * size)))
    g = _Gen(seed, nblocks)
    g.noutputs = noutputs
    state = ("t",) + SPECIES
    fluxes = [f"flx_{s}" for s in SEDIMENTING]

    # pass 1, level 0 (the top boundary): nothing falls in from above
    g.body = []
    for f in fluxes:
        g.set(f, 0.0)
    pass1 = g.body
    # pass 2, levels 1..nlev: the layer's geometry, from K-1 reads of the inputs
    g.body = []
    g.set("dpl", mx(g.v("p") - g.v("p", -1), 1.0))
    g.set("rhom", 0.5 * (g.v("rho") + g.v("rho", -1)))
    g.set("wm", 0.5 * (g.v("w") + g.v("w", -1)) * g.v("latfac"))
    pass2 = g.body
    g.temps += fluxes + ["dpl", "rhom", "wm"]

    # pass 3, levels 1..nlev: the processes
    g.body = []
    for s in state:
        g.update(s, g.v(s))
    g.update("t", g.s("t") + g.v("dt") * (g.v("radh") * 1e-5 + g.v("tadv") * 1e-5
                                         + 1e-4 * (g.v("tsurf") - 288.0) * g.v("kfac")
                                         - 2e-5 * g.v("wm") * g.v("dpl") / g.v("rhom") * 1e-2))
    g.update("qv", mx(g.s("qv") + g.v("dt") * (g.v("qvadv") * 1e-9
                                               + 1e-10 * g.v("tke", -1) * g.v("omega")), 0.0))
    order = list(range(len(TEMPLATES)))
    for b in range(nblocks):
        if b % len(TEMPLATES) == 0:
            g.rng.shuffle(order)
        TEMPLATES[order[b % len(TEMPLATES)]](g)
    for s in SEDIMENTING:
        _sedimentation(g, s)
    # the new state and the tendencies (their sum) written back
    for s in state:
        g.set(s, g.s(s))
    pass3 = g.body

    outputs = [f"diag{i}" for i in range(noutputs)]
    prog = Program(functions=_functions(), passes=[(0, 1, pass1), (1, None, pass2),
                                                   (1, None, pass3)],
                   fields3d=list(GEOMETRY + AUX) + list(state) + outputs,
                   inouts=list(state), outputs=outputs, ij_fields=list(IJ_FIELDS),
                   k_fields=[K_FIELD], scalars=list(SCALARS), seed=seed, size=size,
                   temps=g.temps)
    # kept per level: what pass 1 or 2 writes (read later) and what is read at K-1
    prog.stored = set(fluxes + ["dpl", "rhom", "wm"])
    return prog


# ------------------------------------------------------------------------------- the inputs


def inputs(program, ncol, nlev, seed=0):
    """{name: array} of physically plausible inputs for `ncol` columns of nlev + 1 levels
    (level 0 the top): a sounding from 200 K / 10 hPa to ~300 K / 1000 hPa, moisture near
    saturation, condensates with zeros, and every output zero. C order."""
    import numpy as np

    rng = np.random.default_rng(seed)
    nk = nlev + 1
    shape = (ncol, 1, nk)
    s = np.linspace(0.0, 1.0, nk)[None, None, :]
    jitter = rng.uniform(-1.0, 1.0, (ncol, 1, 1))
    a = {}
    a["t"] = 200.0 + 95.0 * s + 5.0 * jitter + rng.normal(0.0, 1.0, shape)
    a["p"] = 1000.0 * np.exp(np.log(100.0) * s) * (1.0 + 0.01 * jitter)
    a["rho"] = a["p"] / (287.0 * a["t"])
    a["dz"] = 100.0 + 400.0 * (1.0 - s) + rng.uniform(0.0, 20.0, shape)
    a["nc"] = rng.uniform(5e7, 3e8, shape)
    for name in AUX:
        a[name] = rng.uniform(-1.0, 1.0, shape)
    es = 610.78 * np.exp(17.27 * (a["t"] - 273.16) / (a["t"] - 35.86))
    qs = 0.622 * es / np.maximum(a["p"] - 0.378 * es, 1.0)
    a["qv"] = np.minimum(qs * rng.uniform(0.6, 1.15, shape), 0.03)

    def condensate(scale):
        return np.where(rng.random(shape) < 0.5, 0.0, rng.uniform(0.0, scale, shape))
    a["qc"], a["qr"], a["qi"] = condensate(1e-3), condensate(5e-4), condensate(2e-4)
    a["qs"], a["qg"] = condensate(3e-4), condensate(2e-4)
    for name in program.outputs:
        a[name] = np.zeros(shape)
    a["landmask"] = (rng.random((ncol, 1)) < 0.3).astype(np.float64)
    a["tsurf"] = rng.uniform(270.0, 305.0, (ncol, 1))
    a["ccnfac"] = rng.uniform(0.5, 2.0, (ncol, 1))
    a["latfac"] = rng.uniform(0.0, 1.0, (ncol, 1))
    a["kfac"] = np.linspace(0.5, 1.5, nk)
    return {name: np.ascontiguousarray(a[name]) for name, kind in program.arguments()
            if kind != "scalar"}


SCALAR_VALUES = {"dt": 20.0}
