/*
 * Definition tree -> structured IR. Names are resolved here: parameters are fields or
 * scalars, every other assigned name is a temporary (created in order of first assignment,
 * which also makes their numbering canonical). Reads of names that are neither are errors.
 */
#include "ir/build.h"

#include <string.h>

#include "ir/validate.h"

typedef struct Builder {
    Stencil *st;
    bool bad_tree; /* a Python exception is pending */
} Builder;

/* ---- reading the tuples ------------------------------------------------------------ */

/* A tree ir_validate passed but the builder cannot read (a wrong tag value, a parameter
 * declared twice): a ValueError, like the validator's. */
static bool bad(Builder *b, const char *what) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "malformed definition tree (%s)", what);
    b->bad_tree = true;
    return false;
}

static const char *tag_of(PyObject *node) {
    if (!PyTuple_Check(node) || PyTuple_GET_SIZE(node) < 1) return NULL;
    PyObject *t = PyTuple_GET_ITEM(node, 0);
    return PyUnicode_Check(t) ? PyUnicode_AsUTF8(t) : NULL;
}

static bool get_int(Builder *b, PyObject *node, Py_ssize_t i, int *out) {
    if (!PyTuple_Check(node) || i >= PyTuple_GET_SIZE(node)) return bad(b, "missing int");
    long v = PyLong_AsLong(PyTuple_GET_ITEM(node, i));
    if (v == -1 && PyErr_Occurred()) return bad(b, "int expected");
    *out = (int)v;
    return true;
}

static const char *get_str(Builder *b, PyObject *node, Py_ssize_t i) {
    if (!PyTuple_Check(node) || i >= PyTuple_GET_SIZE(node)) {
        bad(b, "missing string");
        return NULL;
    }
    PyObject *o = PyTuple_GET_ITEM(node, i);
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s == NULL) bad(b, "string expected");
    return s;
}

static PyObject *get_item(Builder *b, PyObject *node, Py_ssize_t i) {
    if (!PyTuple_Check(node) || i >= PyTuple_GET_SIZE(node)) {
        bad(b, "missing item");
        return NULL;
    }
    return PyTuple_GET_ITEM(node, i);
}

/* Offsets and interval bounds: the analyses add them up in `int` (extents grow by each
 * offset along a chain of statements), so they are held far below INT_MAX. */
enum { GT_MAX_OFFSET = 1 << 20 };

/* An offset or bound `what` from the tree, into *out: an error at the line (not a silent
 * truncation to 32 bits, nor a bare OverflowError) when it is beyond GT_MAX_OFFSET. */
static bool small_int(Builder *b, PyObject *o, int line, int col, const char *what, int *out) {
    if (!PyLong_Check(o)) return bad(b, what);
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return bad(b, what);
    if (overflow || v < -GT_MAX_OFFSET || v > GT_MAX_OFFSET) {
        PyObject *r = PyObject_Str(o);
        const char *text = r ? PyUnicode_AsUTF8(r) : NULL;
        PyErr_Clear();
        diag_error(b->st, DIAG_SEMANTIC, line, col, "%s %s is out of range: at most %d either way",
                   what, text ? text : "?", GT_MAX_OFFSET);
        Py_XDECREF(r);
        return false;
    }
    *out = (int)v;
    return true;
}

static bool get_pos(Builder *b, PyObject *node, int *line, int *col) {
    return get_int(b, node, 1, line) && get_int(b, node, 2, col);
}

/* ---- expressions -------------------------------------------------------------------- */

static Expr *build_expr(Builder *b, PyObject *node);

static bool build_const(Builder *b, Expr *e, PyObject *v) {
    if (PyBool_Check(v)) {
        e->type = DT_BOOL;
        e->cnst.i = v == Py_True;
    } else if (PyLong_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow)
            return diag_error(b->st, DIAG_SEMANTIC, e->line, e->col,
                              "integer literal does not fit in 64 bits");
        if (x == -1 && PyErr_Occurred()) return bad(b, "int literal");
        e->type = DT_INT64;
        e->weak = true;
        e->cnst.i = x;
    } else if (PyFloat_Check(v)) {
        e->type = DT_FLOAT64;
        e->weak = true;
        e->cnst.f = PyFloat_AS_DOUBLE(v);
    } else {
        PyObject *r = PyObject_Repr(v);
        const char *text = r ? PyUnicode_AsUTF8(r) : NULL; /* NULL: a repr that is not text */
        diag_error(b->st, DIAG_SEMANTIC, e->line, e->col,
                   "constant %s is not a number or bool: only numbers, bools and namespaces of "
                   "them can be used as externals",
                   text ? text : "?");
        Py_XDECREF(r);
        PyErr_Clear();
        return false;
    }
    return true;
}

static Expr *name_expr(Builder *b, const char *id, int line, int col) {
    Stencil *st = b->st;
    Symbol *sym = stencil_lookup(st, id);
    if (sym == NULL) {
        diag_error(st, DIAG_SEMANTIC, line, col,
                   "unknown name '%s': not a parameter, a temporary assigned in this stencil, "
                   "an external or a gtscript builtin",
                   id);
        return NULL;
    }
    Expr *e = expr_new(st, sym->kind == SYM_SCALAR ? E_SCALAR : E_FIELD, line, col);
    if (e == NULL) return NULL;
    if (sym->kind == SYM_SCALAR)
        e->scalar = sym;
    else
        e->field.sym = sym;
    return e;
}

static bool build_data_index(Builder *b, PyObject *tup, int *ndi, int *di, int line, int col) {
    if (!PyTuple_Check(tup)) return bad(b, "data index");
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n > GT_MAX_DATA_DIMS)
        return diag_error(b->st, DIAG_SEMANTIC, line, col, "at most %d data dimensions are supported",
                          GT_MAX_DATA_DIMS);
    for (Py_ssize_t i = 0; i < n; i++) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(tup, i), &overflow);
        if (v == -1 && PyErr_Occurred()) return bad(b, "data index item");
        if (overflow)
            return diag_error(b->st, DIAG_SEMANTIC, line, col,
                              "data index or size beyond 64 bits is out of range");
        if (v < INT32_MIN || v > INT32_MAX)
            return diag_error(b->st, DIAG_SEMANTIC, line, col, "data index or size %lld is out of range", v);
        di[i] = (int)v;
    }
    *ndi = (int)n;
    return true;
}

static Expr *index_expr(Builder *b, PyObject *node, int line, int col) {
    const char *id = get_str(b, node, 3);
    PyObject *offs = get_item(b, node, 4), *didx = get_item(b, node, 5);
    if (id == NULL || offs == NULL || didx == NULL) return NULL;
    Expr *e = name_expr(b, id, line, col);
    if (e == NULL) return NULL;
    if (e->kind == E_SCALAR) {
        diag_error(b->st, DIAG_SEMANTIC, line, col, "scalar parameter '%s' cannot be indexed", id);
        return NULL;
    }
    if (!PyTuple_Check(offs) || PyTuple_GET_SIZE(offs) != 3) {
        bad(b, "offsets");
        return NULL;
    }
    for (int a = 0; a < 3; a++) {
        PyObject *o = PyTuple_GET_ITEM(offs, a);
        if (a == 2 && PyTuple_Check(o)) {
            e->field.kexpr = build_expr(b, o);
            if (e->field.kexpr == NULL) return NULL;
            continue;
        }
        if (!small_int(b, o, line, col, "offset", &e->field.off[a])) return NULL;
    }
    if (!build_data_index(b, didx, &e->field.ndi, e->field.data_index, line, col)) return NULL;
    return e;
}

/* ("absk", line, col, id, kexpr, data_index): f.at(K=kexpr), a read at an absolute K index. */
static Expr *absk_expr(Builder *b, PyObject *node, int line, int col) {
    const char *id = get_str(b, node, 3);
    PyObject *k = get_item(b, node, 4), *didx = get_item(b, node, 5);
    if (id == NULL || k == NULL || didx == NULL) return NULL;
    Expr *e = name_expr(b, id, line, col);
    if (e == NULL) return NULL;
    if (e->kind == E_SCALAR) {
        diag_error(b->st, DIAG_SEMANTIC, line, col, "scalar parameter '%s' cannot be indexed", id);
        return NULL;
    }
    e->field.kabs = true;
    e->field.kexpr = build_expr(b, k);
    if (e->field.kexpr == NULL) return NULL;
    if (!build_data_index(b, didx, &e->field.ndi, e->field.data_index, line, col)) return NULL;
    return e;
}

static bool parse_op(const char *s, Op *op) {
    static const char *const names[] = {"+", "-", "*", "/", "//", "%", "**"};
    for (int i = 0; i < 7; i++)
        if (strcmp(s, names[i]) == 0) return *op = (Op)(OP_ADD + i), true;
    static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
    for (int i = 0; i < 6; i++)
        if (strcmp(s, cmps[i]) == 0) return *op = (Op)(OP_LT + i), true;
    if (strcmp(s, "and") == 0) return *op = OP_AND, true;
    if (strcmp(s, "or") == 0) return *op = OP_OR, true;
    return false;
}

static Expr *binary(Builder *b, ExprKind kind, Op op, Expr *x, Expr *y, int line, int col) {
    Expr *e = expr_new(b->st, kind, line, col);
    if (e == NULL) return NULL;
    e->op.op = op;
    e->op.a = x;
    e->op.b = y;
    return e;
}

static Expr *call_expr(Builder *b, PyObject *node, int line, int col) {
    const char *fname = get_str(b, node, 3);
    PyObject *args = get_item(b, node, 4);
    if (fname == NULL || args == NULL) return NULL;
    if (!PyList_Check(args) && !PyTuple_Check(args)) {
        bad(b, "call args");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args, "call args");
    if (seq == NULL) {
        bad(b, "call args");
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Expr *e = NULL;
    DType cast_to;
    Builtin fn;
    if (dtype_parse(fname, &cast_to) || strcmp(fname, "float") == 0 || strcmp(fname, "int") == 0) {
        if (strcmp(fname, "float") == 0) cast_to = DT_FLOAT64;
        if (strcmp(fname, "int") == 0) cast_to = DT_INT64;
        if (n != 1) {
            diag_error(b->st, DIAG_SEMANTIC, line, col, "cast %s() takes exactly one argument", fname);
            goto done;
        }
        Expr *a = build_expr(b, PySequence_Fast_GET_ITEM(seq, 0));
        if (a == NULL || (e = expr_new(b->st, E_CAST, line, col)) == NULL) goto done;
        e->type = cast_to;
        e->cast = a;
    } else if (builtin_parse(fname, &fn)) {
        if (n != builtin_arity(fn)) {
            diag_error(b->st, DIAG_SEMANTIC, line, col, "%s() takes %d argument%s, %zd given",
                       fname, builtin_arity(fn), builtin_arity(fn) == 1 ? "" : "s", n);
            goto done;
        }
        Expr *call = expr_new(b->st, E_CALL, line, col);
        if (call == NULL) goto done;
        call->call.fn = fn;
        call->call.nargs = (int)n;
        for (Py_ssize_t i = 0; i < n; i++)
            if ((call->call.args[i] = build_expr(b, PySequence_Fast_GET_ITEM(seq, i))) == NULL)
                goto done;
        e = call;
    } else {
        diag_error(b->st, DIAG_SYNTAX, line, col,
                   "'%s' is not a gtscript builtin or cast (builtins: abs min max sqrt exp log "
                   "log10 pow floor ceil trunc sin cos tan arcsin arccos arctan arctan2 sinh cosh "
                   "tanh arcsinh arccosh arctanh gamma erf erfc cbrt round round_away_from_zero "
                   "isfinite isinf isnan; casts: float int bool float32 float64 int32 int64)",
                   fname);
    }
done:
    Py_DECREF(seq);
    return e;
}

static Expr *build_expr(Builder *b, PyObject *node) {
    const char *tag = tag_of(node);
    int line, col;
    if (tag == NULL) {
        bad(b, "expression");
        return NULL;
    }
    if (!get_pos(b, node, &line, &col)) return NULL;
    Stencil *st = b->st;
    if (strcmp(tag, "const") == 0) {
        Expr *e = expr_new(st, E_CONST, line, col);
        PyObject *v = get_item(b, node, 3);
        if (e == NULL || v == NULL || !build_const(b, e, v)) return NULL;
        return e;
    }
    if (strcmp(tag, "name") == 0) {
        const char *id = get_str(b, node, 3);
        return id ? name_expr(b, id, line, col) : NULL;
    }
    if (strcmp(tag, "index") == 0) return index_expr(b, node, line, col);
    if (strcmp(tag, "absk") == 0) return absk_expr(b, node, line, col);
    if (strcmp(tag, "kindex") == 0) { /* ("kindex", line, col): GT4Py's `K` as a value */
        Expr *e = expr_new(st, E_KINDEX, line, col);
        if (e != NULL) e->type = DT_INT64;
        return e;
    }
    if (strcmp(tag, "binop") == 0 || strcmp(tag, "cmp") == 0) {
        const char *ops = get_str(b, node, 3);
        Op op;
        /* the backends take a binop's operator to be arithmetic and a cmp's a comparison */
        bool cmp = tag[0] == 'c';
        if (ops == NULL || !parse_op(ops, &op) ||
            (cmp ? op < OP_LT || op > OP_NE : op < OP_ADD || op > OP_POW)) {
            bad(b, cmp ? "comparison operator" : "arithmetic operator");
            return NULL;
        }
        Expr *x = build_expr(b, get_item(b, node, 4));
        Expr *y = x ? build_expr(b, get_item(b, node, 5)) : NULL;
        if (y == NULL) return NULL;
        return binary(b, tag[0] == 'c' ? E_CMP : E_BINARY, op, x, y, line, col);
    }
    if (strcmp(tag, "unop") == 0) {
        const char *ops = get_str(b, node, 3);
        if (ops == NULL) return NULL;
        Op op = strcmp(ops, "-") == 0 ? OP_NEG : strcmp(ops, "+") == 0 ? OP_POS : OP_NOT;
        if (op == OP_NOT && strcmp(ops, "not") != 0) {
            bad(b, "unary operator");
            return NULL;
        }
        Expr *x = build_expr(b, get_item(b, node, 4));
        if (x == NULL) return NULL;
        return binary(b, E_UNARY, op, x, NULL, line, col);
    }
    if (strcmp(tag, "boolop") == 0) {
        const char *ops = get_str(b, node, 3);
        PyObject *vals = get_item(b, node, 4);
        Op op;
        if (ops == NULL || vals == NULL || !parse_op(ops, &op) || (op != OP_AND && op != OP_OR) ||
            !PyList_Check(vals) || PyList_GET_SIZE(vals) < 2) {
            bad(b, "boolop");
            return NULL;
        }
        Expr *acc = build_expr(b, PyList_GET_ITEM(vals, 0));
        for (Py_ssize_t i = 1; acc && i < PyList_GET_SIZE(vals); i++) {
            Expr *y = build_expr(b, PyList_GET_ITEM(vals, i));
            acc = y ? binary(b, E_LOGIC, op, acc, y, line, col) : NULL;
        }
        return acc;
    }
    if (strcmp(tag, "ternary") == 0) {
        Expr *c = build_expr(b, get_item(b, node, 3));
        Expr *x = c ? build_expr(b, get_item(b, node, 4)) : NULL;
        Expr *y = x ? build_expr(b, get_item(b, node, 5)) : NULL;
        Expr *e = y ? expr_new(st, E_TERNARY, line, col) : NULL;
        if (e == NULL) return NULL;
        e->ternary.cond = c;
        e->ternary.a = x;
        e->ternary.b = y;
        return e;
    }
    if (strcmp(tag, "call") == 0) return call_expr(b, node, line, col);
    bad(b, tag);
    return NULL;
}

/* ---- statements --------------------------------------------------------------------- */

static bool build_body(Builder *b, PyObject *list, StmtList *out);

static bool build_assign(Builder *b, PyObject *node, int line, int col, StmtList *out) {
    Stencil *st = b->st;
    PyObject *target = get_item(b, node, 3);
    const char *ttag = tag_of(target);
    if (ttag == NULL) return bad(b, "assignment target");
    Stmt *s = stmt_new(st, S_ASSIGN, line, col);
    if (s == NULL) return false;
    int tline, tcol;
    if (!get_pos(b, target, &tline, &tcol)) return false;
    const char *id = get_str(b, target, 3);
    if (id == NULL) return false;
    Symbol *sym = stencil_lookup(st, id);
    if (sym == NULL) return bad(b, "target not pre-declared");
    if (sym->kind == SYM_SCALAR)
        return diag_error(st, DIAG_SEMANTIC, tline, tcol,
                          "cannot assign to scalar parameter '%s': scalars are read-only inside a "
                          "stencil (assign to a temporary instead)",
                          id);
    s->assign.target = sym;
    if (strcmp(ttag, "index") == 0) {
        PyObject *offs = get_item(b, target, 4);
        if (offs == NULL || !PyTuple_Check(offs) || PyTuple_GET_SIZE(offs) != 3) return bad(b, "offsets");
        int off[3] = {0, 0, 0};
        for (int a = 0; a < 3; a++) {
            PyObject *o = PyTuple_GET_ITEM(offs, a);
            if (a == 2 && !PyLong_Check(o)) { /* a variable K offset (checked in types.c) */
                if ((s->assign.kexpr = build_expr(b, o)) == NULL) return false;
                continue;
            }
            if (!PyLong_Check(o))
                return diag_error(st, DIAG_SEMANTIC, tline, tcol,
                                  "the offset of a write to '%s' must be a constant", id);
            if (!small_int(b, o, tline, tcol, "offset", &off[a])) return false;
        }
        if (off[0] != 0 || off[1] != 0)
            return diag_error(st, DIAG_SEMANTIC, tline, tcol,
                              "write to '%s' with a horizontal offset [%d, %d, %d]: fields can only "
                              "be written at their own (i, j) position; shift the reads instead: "
                              "write `%s[0, 0, %d] = f(x[%d, %d, 0])`, not `%s[%d, %d, %d] = f(x)`",
                              id, off[0], off[1], off[2], id, off[2], -off[0], -off[1], id,
                              off[0], off[1], off[2]);
        s->assign.koff = off[2];
        if (!build_data_index(b, get_item(b, target, 5), &s->assign.ndi, s->assign.data_index,
                              tline, tcol))
            return false;
    } else if (strcmp(ttag, "name") != 0) {
        return bad(b, "assignment target kind");
    }
    PyObject *value = get_item(b, node, 4);
    if (value == NULL || (s->assign.value = build_expr(b, value)) == NULL) return false;
    return stmts_push(st, out, s);
}

static bool build_decl(Builder *b, PyObject *node, int line, int col, StmtList *out) {
    Stencil *st = b->st;
    const char *id = get_str(b, node, 3), *dt = get_str(b, node, 4);
    PyObject *value = get_item(b, node, 5);
    if (id == NULL || dt == NULL || value == NULL) return false;
    Symbol *sym = stencil_lookup(st, id);
    if (sym == NULL) return bad(b, "declared name not pre-declared");
    if (sym->kind != SYM_TEMP)
        return diag_error(st, DIAG_SEMANTIC, line, col,
                          "'%s' is a parameter: a declaration introduces a new temporary", id);
    DType t;
    if (!dtype_parse(dt, &t)) return bad(b, "decl dtype");
    if (sym->typed && sym->dtype != t)
        return diag_error(st, DIAG_SEMANTIC, line, col,
                          "temporary '%s' declared as %s but already has type %s", id, dt,
                          dtype_name(sym->dtype));
    sym->dtype = t;
    sym->typed = true;
    if (value == Py_None) return true;
    Stmt *s = stmt_new(st, S_ASSIGN, line, col);
    if (s == NULL) return false;
    s->assign.target = sym;
    if ((s->assign.value = build_expr(b, value)) == NULL) return false;
    return stmts_push(st, out, s);
}

static bool build_bound(Builder *b, PyObject *o, bool *has, AxisBound *ab, int line, int col) {
    if (o == Py_None) {
        *has = false;
        return true;
    }
    *has = true;
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2) return bad(b, "bound");
    ab->sym = NULL;
    return get_int(b, o, 0, &ab->level) &&
           small_int(b, PyTuple_GET_ITEM(o, 1), line, col, "bound", &ab->offset);
}

/* An interval bound: (level, offset), or (0, offset, name) for a run-time bound, the value
 * of the integer scalar parameter `name` plus offset (the parameters are built by now). */
static bool build_interval_bound(Builder *b, PyObject *o, AxisBound *ab, int line, int col) {
    bool has;
    if (o == NULL) return false;
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 3) {
        if (!build_bound(b, o, &has, ab, line, col)) return false;
        return has ? true : bad(b, "interval bound");
    }
    if (!get_int(b, o, 0, &ab->level) ||
        !small_int(b, PyTuple_GET_ITEM(o, 1), line, col, "bound", &ab->offset))
        return false;
    PyObject *name = PyTuple_GET_ITEM(o, 2);
    if (ab->level != 0 || !PyUnicode_Check(name)) return bad(b, "bound");
    const char *id = PyUnicode_AsUTF8(name);
    if (id == NULL) return bad(b, "bound");
    Symbol *s = stencil_lookup(b->st, id);
    if (s == NULL || s->kind != SYM_SCALAR || !dtype_is_int(s->dtype))
        return diag_error(b->st, DIAG_SEMANTIC, line, col,
                          "the interval bound '%s' must be an integer scalar parameter", id);
    ab->sym = s;
    return true;
}

static bool build_region(Builder *b, PyObject *node, int line, int col, StmtList *out) {
    Stencil *st = b->st;
    PyObject *boxes = get_item(b, node, 3), *body = get_item(b, node, 4);
    if (boxes == NULL || body == NULL) return false;
    if (!PyList_Check(boxes) || PyList_GET_SIZE(boxes) < 1) return bad(b, "region boxes");
    Stmt *s = stmt_new(st, S_REGION, line, col);
    if (s == NULL) return false;
    s->nboxes = (int)PyList_GET_SIZE(boxes);
    s->boxes = arena_alloc(&st->arena, sizeof(Box) * (size_t)s->nboxes);
    if (s->boxes == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int i = 0; i < s->nboxes; i++) {
        PyObject *box = PyList_GET_ITEM(boxes, i);
        if (!PyTuple_Check(box) || PyTuple_GET_SIZE(box) != 4) return bad(b, "region box");
        for (int k = 0; k < 4; k++)
            if (!build_bound(b, PyTuple_GET_ITEM(box, k), &s->boxes[i].has[k], &s->boxes[i].b[k],
                             line, col))
                return false;
    }
    return build_body(b, body, &s->region.body) && stmts_push(st, out, s);
}

static bool build_stmt(Builder *b, PyObject *node, StmtList *out) {
    const char *tag = tag_of(node);
    int line, col;
    if (tag == NULL) return bad(b, "statement");
    if (!get_pos(b, node, &line, &col)) return false;
    Stencil *st = b->st;
    if (strcmp(tag, "assign") == 0) return build_assign(b, node, line, col, out);
    if (strcmp(tag, "decl") == 0) return build_decl(b, node, line, col, out);
    if (strcmp(tag, "region") == 0) return build_region(b, node, line, col, out);
    if (strcmp(tag, "if") == 0) {
        Stmt *s = stmt_new(st, S_IF, line, col);
        if (s == NULL) return false;
        return (s->if_.cond = build_expr(b, get_item(b, node, 3))) != NULL &&
               build_body(b, get_item(b, node, 4), &s->if_.then) &&
               build_body(b, get_item(b, node, 5), &s->if_.els) && stmts_push(st, out, s);
    }
    if (strcmp(tag, "while") == 0) {
        Stmt *s = stmt_new(st, S_WHILE, line, col);
        if (s == NULL) return false;
        return (s->while_.cond = build_expr(b, get_item(b, node, 3))) != NULL &&
               build_body(b, get_item(b, node, 4), &s->while_.body) && stmts_push(st, out, s);
    }
    return bad(b, tag);
}

static bool build_body(Builder *b, PyObject *list, StmtList *out) {
    if (list == NULL || !PyList_Check(list)) return bad(b, "statement list");
    bool ok = true;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        /* Keep going after a semantic error so the count of violations is right, but stop at
         * a malformed tree or out-of-memory. */
        if (!build_stmt(b, PyList_GET_ITEM(list, i), out)) {
            ok = false;
            if (b->bad_tree || b->st->diag.kind == DIAG_NOMEM) return false;
        }
    }
    return ok;
}

/* ---- declarations: parameters, then temporaries in order of first assignment ------- */

static bool declare_targets(Builder *b, PyObject *body);

static bool declare_stmt(Builder *b, PyObject *node) {
    const char *tag = tag_of(node);
    if (tag == NULL) return bad(b, "statement");
    Stencil *st = b->st;
    int line, col;
    if (!get_pos(b, node, &line, &col)) return false;
    const char *id = NULL;
    if (strcmp(tag, "assign") == 0) {
        PyObject *target = get_item(b, node, 3);
        if (target == NULL) return false;
        id = get_str(b, target, 3);
    } else if (strcmp(tag, "decl") == 0) {
        id = get_str(b, node, 3);
        if (id == NULL) return false;
        /* a declaration fixes the temporary's axes: it must come before any other use */
        int axes = AX_IJK;
        if (PyTuple_GET_SIZE(node) > 6) {
            const char *ax = get_str(b, node, 6);
            if (ax == NULL) return false;
            if (strcmp(ax, "IJ") == 0) axes = AX_I | AX_J;
            else if (strcmp(ax, "IJK") != 0) return bad(b, "decl axes");
        }
        Symbol *sym = stencil_lookup(st, id);
        if (sym == NULL) {
            if ((sym = stencil_add_temp(st, id, line, col)) == NULL) return false;
            sym->axes = axes;
            /* data dimensions: declared before the computations, so before any use */
            PyObject *dd = PyTuple_GET_SIZE(node) > 7 ? get_item(b, node, 7) : NULL;
            if (dd && !build_data_index(b, dd, &sym->ndata, sym->data_dims, line, col)) return false;
            /* the cuda backend keeps a slab's block size in the last stride */
            if (sym->ndata > GT_MAX_DATA_DIMS - 1)
                return diag_error(st, DIAG_SEMANTIC, line, col,
                                  "temporary '%s': at most %d data dimensions are supported", id,
                                  GT_MAX_DATA_DIMS - 1);
            for (int d = 0; d < sym->ndata; d++)
                if (sym->data_dims[d] <= 0 || sym->data_dims[d] > 1 << 20)
                    return diag_error(st, DIAG_SEMANTIC, line, col,
                                      "temporary '%s': data dimension %d has size %d (1 to %d)",
                                      id, d, sym->data_dims[d], 1 << 20);
        } else if (sym->kind == SYM_TEMP && sym->axes != axes) {
            return diag_error(st, DIAG_SEMANTIC, line, col,
                              "temporary '%s' is declared as an %s field after its first use as "
                              "an %s field: declare it before it is first assigned",
                              id, axes == AX_IJK ? "IJK" : "IJ", sym->axes == AX_IJK ? "IJK" : "IJ");
        }
        return true;
    } else if (strcmp(tag, "if") == 0) {
        return declare_targets(b, get_item(b, node, 4)) && declare_targets(b, get_item(b, node, 5));
    } else if (strcmp(tag, "while") == 0 || strcmp(tag, "region") == 0) {
        return declare_targets(b, get_item(b, node, 4));
    } else {
        return bad(b, tag);
    }
    if (id == NULL) return false;
    if (stencil_lookup(st, id) == NULL && stencil_add_temp(st, id, line, col) == NULL) return false;
    return true;
}

static bool declare_targets(Builder *b, PyObject *body) {
    if (body == NULL || !PyList_Check(body)) return bad(b, "statement list");
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(body); i++)
        if (!declare_stmt(b, PyList_GET_ITEM(body, i))) return false;
    return true;
}

static bool build_params(Builder *b, PyObject *params) {
    Stencil *st = b->st;
    if (params == NULL || !PyList_Check(params)) return bad(b, "params");
    if (PyList_GET_SIZE(params) > GT_MAX_PARAMS)
        return diag_error(st, DIAG_VALUE, 0, 0,
                          "the stencil has %zd parameters; at most %d are allowed",
                          PyList_GET_SIZE(params), (int)GT_MAX_PARAMS);
    st->nparams = (int)PyList_GET_SIZE(params);
    st->params = arena_alloc(&st->arena, sizeof(Symbol *) * (size_t)(st->nparams + 1));
    if (st->params == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int i = 0; i < st->nparams; i++) {
        PyObject *p = PyList_GET_ITEM(params, i);
        const char *kind = tag_of(p), *name = get_str(b, p, 1), *dt = get_str(b, p, 2);
        if (kind == NULL || name == NULL || dt == NULL) return bad(b, "param");
        Symbol *s = arena_alloc(&st->arena, sizeof *s);
        if (s == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        if ((s->name = arena_strdup(&st->arena, name)) == NULL)
            return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        s->index = i;
        s->typed = true;
        if (!dtype_parse(dt, &s->dtype)) return bad(b, "param dtype");
        for (int j = 0; j < i; j++)
            if (strcmp(st->params[j]->name, name) == 0) return bad(b, "duplicate parameter");
        if (strcmp(kind, "field") == 0) {
            const char *axes = get_str(b, p, 3);
            PyObject *dd = get_item(b, p, 4);
            if (axes == NULL || dd == NULL) return false;
            s->kind = SYM_FIELD;
            s->slot = st->nfields++;
            for (const char *c = axes; *c; c++)
                s->axes |= *c == 'I' ? AX_I : *c == 'J' ? AX_J : *c == 'K' ? AX_K : 0;
            if (!build_data_index(b, dd, &s->ndata, s->data_dims, 0, 0)) return false;
            /* no grid axes: a GlobalTable, which has data dimensions only */
            if (s->axes == 0 && s->ndata == 0) return bad(b, "field axes");
        } else if (strcmp(kind, "scalar") == 0) {
            s->kind = SYM_SCALAR;
            s->axes = 0;
            s->slot = st->nscalars++;
        } else {
            return bad(b, "param kind");
        }
        st->params[i] = s;
    }
    return true;
}

static bool build_computations(Builder *b, PyObject *body) {
    Stencil *st = b->st;
    if (body == NULL || !PyList_Check(body)) return bad(b, "body");
    st->ncomps = (int)PyList_GET_SIZE(body);
    st->comps = arena_alloc(&st->arena, sizeof(Computation) * (size_t)(st->ncomps + 1));
    if (st->comps == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    bool ok = true;
    for (int c = 0; c < st->ncomps; c++) {
        PyObject *node = PyList_GET_ITEM(body, c);
        Computation *comp = &st->comps[c];
        const char *pol = get_str(b, node, 3);
        PyObject *ivs = get_item(b, node, 4);
        if (pol == NULL || ivs == NULL || !get_pos(b, node, &comp->line, &comp->col)) return false;
        if (strcmp(pol, "PARALLEL") == 0) comp->policy = POLICY_PARALLEL;
        else if (strcmp(pol, "FORWARD") == 0) comp->policy = POLICY_FORWARD;
        else if (strcmp(pol, "BACKWARD") == 0) comp->policy = POLICY_BACKWARD;
        else return bad(b, "policy");
        if (!PyList_Check(ivs)) return bad(b, "intervals");
        comp->nintervals = (int)PyList_GET_SIZE(ivs);
        comp->intervals = arena_alloc(&st->arena, sizeof(Interval) * (size_t)(comp->nintervals + 1));
        if (comp->intervals == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
        for (int i = 0; i < comp->nintervals; i++) {
            PyObject *iv = PyList_GET_ITEM(ivs, i);
            Interval *in = &comp->intervals[i];
            if (!get_pos(b, iv, &in->line, &in->col) ||
                !build_interval_bound(b, get_item(b, iv, 3), &in->start, in->line, in->col) ||
                !build_interval_bound(b, get_item(b, iv, 4), &in->end, in->line, in->col))
                return false;
            if (!build_body(b, get_item(b, iv, 5), &in->body)) {
                ok = false;
                if (b->bad_tree || st->diag.kind == DIAG_NOMEM) return false;
            }
        }
    }
    return ok;
}

/* A str that is only displayed (the file name, a source line) as UTF-8 in the arena: a lone
 * surrogate, which a path of non-UTF-8 bytes decodes to (os.fsdecode), becomes its escape
 * \udcfc rather than failing the build. */
static char *display_text(Builder *b, PyObject *o) {
    PyObject *bytes = PyUnicode_AsEncodedString(o, "utf-8", "backslashreplace");
    if (bytes == NULL) {
        bad(b, "text");
        return NULL;
    }
    char *s = arena_strdup(&b->st->arena, PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (s == NULL) diag_error(b->st, DIAG_NOMEM, 0, 0, "out of memory");
    return s;
}

static bool build_source(Builder *b, PyObject *lines) {
    Stencil *st = b->st;
    if (lines == NULL || !PyList_Check(lines)) return bad(b, "source_lines");
    st->nsource = (int)PyList_GET_SIZE(lines);
    st->source = arena_alloc(&st->arena, sizeof(char *) * (size_t)(st->nsource + 1));
    if (st->source == NULL) return diag_error(st, DIAG_NOMEM, 0, 0, "out of memory");
    for (int i = 0; i < st->nsource; i++)
        if ((st->source[i] = display_text(b, PyList_GET_ITEM(lines, i))) == NULL) return false;
    return true;
}

bool ir_build(Stencil *st, PyObject *def) {
    Builder b = {.st = st};
    if (!ir_validate(def)) {
        b.bad_tree = true;
        return false;
    }
    const char *name = PyUnicode_AsUTF8(PyDict_GetItemString(def, "name")); /* validated */
    if (name == NULL || (st->name = arena_strdup(&st->arena, name)) == NULL)
        return name ? diag_error(st, DIAG_NOMEM, 0, 0, "out of memory") : bad(&b, "name");
    if ((st->filename = display_text(&b, PyDict_GetItemString(def, "filename"))) == NULL) return false;
    if (!build_source(&b, PyDict_GetItemString(def, "source_lines"))) return false;
    if (!build_params(&b, PyDict_GetItemString(def, "params"))) return false;
    PyObject *body = PyDict_GetItemString(def, "body");
    if (body == NULL || !PyList_Check(body)) return bad(&b, "body");
    /* Temporaries get their slots after every field parameter. */
    for (Py_ssize_t c = 0; c < PyList_GET_SIZE(body); c++) {
        PyObject *ivs = get_item(&b, PyList_GET_ITEM(body, c), 4);
        if (ivs == NULL || !PyList_Check(ivs)) return bad(&b, "intervals");
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ivs); i++)
            if (!declare_targets(&b, get_item(&b, PyList_GET_ITEM(ivs, i), 5))) return false;
    }
    return build_computations(&b, body);
}
