/*
 * The definition tree's grammar, checked in full before build.c reads it. The tree reaches the
 * core from the frontend, but also from pickle.loads (a stencil pickles as its tree) and from
 * the disk index: a tree one item short, an int where a tuple belongs or a name holding a lone
 * surrogate must raise a clear TypeError or ValueError, never reach the builder. Nothing here
 * runs Python code (exact type checks and conversions of ints and strs only), so the tree
 * cannot change while it is checked.
 */
#include "ir/validate.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { SHOWN_PATH = 24 }; /* an error's path shows this many indices, then "..." */

typedef struct Validator {
    const char *root; /* the definition's key the walk is under: "params", "body", ... */
    Py_ssize_t path[SHOWN_PATH];
    int depth;   /* path[0 .. depth-1] lead to the item being checked */
    int nesting; /* statements and expressions entered and not yet left */
} Validator;

static bool fail(Validator *v, PyObject *exc, const char *fmt, ...) {
    char where[SHOWN_PATH * 24 + 64];
    size_t n = (size_t)snprintf(where, sizeof where, "%s", v->root);
    for (int d = 0; d < v->depth && d < SHOWN_PATH && n < sizeof where; d++)
        n += (size_t)snprintf(where + n, sizeof where - n, "[%zd]", v->path[d]);
    if (v->depth > SHOWN_PATH && n < sizeof where)
        snprintf(where + n, sizeof where - n, "... (%d levels down)", v->depth);
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    PyErr_Format(exc, "malformed definition tree at %s: %s", where, what);
    return false;
}

/* ---- leaves ----------------------------------------------------------------------------- */

/* The first code point of `s` that UTF-8 cannot encode (a lone surrogate), or -1. */
static long first_surrogate(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 0xD800 && c <= 0xDFFF) return (long)c;
    }
    return -1;
}

/* A str the core keeps as UTF-8 text: an identifier, operator, dtype, policy or tag. */
static bool check_text(Validator *v, PyObject *o, const char *what) {
    if (!PyUnicode_Check(o))
        return fail(v, PyExc_TypeError, "%s must be a str, got %.80s", what, Py_TYPE(o)->tp_name);
    long c = first_surrogate(o);
    if (c >= 0)
        return fail(v, PyExc_ValueError,
                    "%s holds the lone surrogate U+%04lX, which is not text (UTF-8 cannot encode it)",
                    what, c);
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(o, &len);
    if (s == NULL) return false; /* out of memory: its MemoryError stays */
    if ((size_t)len != strlen(s)) return fail(v, PyExc_ValueError, "%s holds a NUL character", what);
    return true;
}

/* A str that is only displayed (the file name, source lines): surrogates are allowed, the
 * builder escapes them (a file under a path of non-UTF-8 bytes has them in its name). */
static bool check_display(Validator *v, PyObject *o, const char *what) {
    if (!PyUnicode_Check(o))
        return fail(v, PyExc_TypeError, "%s must be a str, got %.80s", what, Py_TYPE(o)->tp_name);
    return true;
}

static bool check_int(Validator *v, PyObject *o, long long lo, long long hi, const char *what) {
    if (!PyLong_Check(o))
        return fail(v, PyExc_TypeError, "%s must be an int, got %.80s", what, Py_TYPE(o)->tp_name);
    if (lo == LLONG_MIN && hi == LLONG_MAX) return true; /* its range is the builder's to check */
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (x == -1 && PyErr_Occurred()) return false;
    if (overflow || x < lo || x > hi)
        return fail(v, PyExc_ValueError, "%s must be in [%lld, %lld]", what, lo, hi);
    return true;
}

static bool check_tuple(Validator *v, PyObject *o, const char *what) {
    if (!PyTuple_Check(o))
        return fail(v, PyExc_TypeError, "%s must be a tuple, got %.80s", what, Py_TYPE(o)->tp_name);
    return true;
}

static bool check_list(Validator *v, PyObject *o, const char *what) {
    if (!PyList_Check(o))
        return fail(v, PyExc_TypeError, "%s must be a list, got %.80s", what, Py_TYPE(o)->tp_name);
    return true;
}

/* ---- nodes: each tag's items, one letter an item ------------------------------------------
 *   p  a line or column         s  text (a name, operator, dtype, policy, axes)
 *   v  any value (a constant)   e  an expression          n  an expression or None
 *   E  a list (or tuple) of expressions                   L  a list of statements
 *   o  offsets (di, dj, dk)     i  a tuple of ints (data index, data dimensions)
 *   b  an interval bound        B  a list of region boxes  I  a list of intervals          */

typedef struct Shape {
    const char *tag, *items;
    int optional; /* how many of the last items may be missing */
} Shape;

static const Shape EXPRS[] = {
    {"const", "ppv", 0},   {"name", "pps", 0},     {"index", "ppsoi", 0}, {"absk", "ppsei", 0},
    {"binop", "ppsee", 0}, {"cmp", "ppsee", 0},    {"unop", "ppse", 0},   {"boolop", "ppsE", 0},
    {"ternary", "ppeee", 0}, {"call", "ppsE", 0},  {"kindex", "pp", 0},   {NULL, NULL, 0},
};
static const Shape STMTS[] = {
    {"assign", "ppee", 0}, {"decl", "ppssnsi", 2}, {"if", "ppeLL", 0},
    {"while", "ppeL", 0},  {"region", "ppBL", 0},  {NULL, NULL, 0},
};
static const Shape COMPUTATION[] = {{"computation", "ppsI", 0}, {NULL, NULL, 0}};
static const Shape INTERVAL[] = {{"interval", "ppbbL", 0}, {NULL, NULL, 0}};
static const Shape PARAMS[] = {{"field", "sssi", 0}, {"scalar", "ssv", 1}, {NULL, NULL, 0}};

static bool check_node(Validator *v, PyObject *node, const Shape *shapes, const char *what);

static bool enter(Validator *v, Py_ssize_t index) {
    if (v->depth < SHOWN_PATH) v->path[v->depth] = index;
    v->depth++;
    return true;
}

static void leave(Validator *v) { v->depth--; }

/* Every item of list `o` (a tuple too when `tuples`) checked as a node of `shapes`. */
static bool check_nodes(Validator *v, PyObject *o, const Shape *shapes, const char *what,
                        bool tuples) {
    if (!(tuples && PyTuple_Check(o)) && !check_list(v, o, what)) return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++) {
        enter(v, i);
        if (!check_node(v, PySequence_Fast_GET_ITEM(o, i), shapes, what)) return false;
        leave(v);
    }
    return true;
}

/* (level, offset) or, for an interval bound only, (0, offset, name); level 0 is the start of
 * the axis, 1 its end. */
static bool check_bound(Validator *v, PyObject *o, bool runtime) {
    if (!check_tuple(v, o, "a bound")) return false;
    Py_ssize_t n = PyTuple_GET_SIZE(o);
    if (n != 2 && !(runtime && n == 3))
        return fail(v, PyExc_TypeError, "a bound has 2 items (level, offset)%s, not %zd",
                    runtime ? " or 3 (0, offset, name)" : "", n);
    const char *what[] = {"a bound's level", "a bound's offset", "a bound's name"};
    for (Py_ssize_t k = 0; k < n; k++) {
        enter(v, k);
        PyObject *x = PyTuple_GET_ITEM(o, k);
        bool ok = k == 2   ? check_text(v, x, what[k])
                  : k == 0 ? check_int(v, x, 0, n == 3 ? 0 : 1, what[k])
                           : check_int(v, x, LLONG_MIN, LLONG_MAX, what[k]);
        if (!ok) return false;
        leave(v);
    }
    return true;
}

/* (i_lo, i_hi, j_lo, j_hi), each a bound or None */
static bool check_boxes(Validator *v, PyObject *o) {
    if (!check_list(v, o, "the region boxes")) return false;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) {
        PyObject *box = PyList_GET_ITEM(o, i);
        enter(v, i);
        if (!check_tuple(v, box, "a region box")) return false;
        if (PyTuple_GET_SIZE(box) != 4)
            return fail(v, PyExc_TypeError, "a region box has 4 items (i_lo, i_hi, j_lo, j_hi), not %zd",
                        PyTuple_GET_SIZE(box));
        for (Py_ssize_t k = 0; k < 4; k++) {
            enter(v, k);
            if (PyTuple_GET_ITEM(box, k) != Py_None && !check_bound(v, PyTuple_GET_ITEM(box, k), false))
                return false;
            leave(v);
        }
        leave(v);
    }
    return true;
}

static bool check_ints(Validator *v, PyObject *o) {
    if (!check_tuple(v, o, "a data index or the data dimensions")) return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++) {
        enter(v, i);
        /* their range is checked by the builder, at the source line */
        if (!check_int(v, PyTuple_GET_ITEM(o, i), LLONG_MIN, LLONG_MAX, "a data index or size"))
            return false;
        leave(v);
    }
    return true;
}

/* (di, dj, dk): ints (their range checked by the builder), dk also an expression */
static bool check_offsets(Validator *v, PyObject *o) {
    if (!check_tuple(v, o, "the offsets")) return false;
    if (PyTuple_GET_SIZE(o) != 3)
        return fail(v, PyExc_TypeError, "the offsets have 3 items (di, dj, dk), not %zd",
                    PyTuple_GET_SIZE(o));
    for (Py_ssize_t a = 0; a < 3; a++) {
        PyObject *x = PyTuple_GET_ITEM(o, a);
        enter(v, a);
        bool ok = a == 2 && PyTuple_Check(x) ? check_node(v, x, EXPRS, "an expression")
                                             : check_int(v, x, LLONG_MIN, LLONG_MAX, "an offset");
        if (!ok) return false;
        leave(v);
    }
    return true;
}

static bool check_one(Validator *v, char kind, PyObject *x) {
    switch (kind) {
    case 'p': return check_int(v, x, 0, INT_MAX - 1, "a line or column"); /* col + 1 is shown */
    case 's': return check_text(v, x, "a name or keyword");
    case 'v': return true; /* the builder refuses a constant that is not a number */
    case 'e': return check_node(v, x, EXPRS, "an expression");
    case 'n': return x == Py_None || check_node(v, x, EXPRS, "an expression");
    case 'E': return check_nodes(v, x, EXPRS, "the arguments", true);
    case 'L': return check_nodes(v, x, STMTS, "a statement list", false);
    case 'o': return check_offsets(v, x);
    case 'i': return check_ints(v, x);
    case 'b': return check_bound(v, x, true);
    case 'B': return check_boxes(v, x);
    case 'I': return check_nodes(v, x, INTERVAL, "the intervals", false);
    default: return fail(v, PyExc_SystemError, "unknown item kind '%c'", kind);
    }
}

static bool check_node(Validator *v, PyObject *node, const Shape *shapes, const char *what) {
    if (!check_tuple(v, node, what)) return false;
    if (PyTuple_GET_SIZE(node) < 1) return fail(v, PyExc_TypeError, "%s is an empty tuple", what);
    enter(v, 0);
    if (!check_text(v, PyTuple_GET_ITEM(node, 0), "a node's tag")) return false;
    leave(v);
    const char *tag = PyUnicode_AsUTF8(PyTuple_GET_ITEM(node, 0));
    const Shape *s = shapes;
    while (s->tag && strcmp(s->tag, tag) != 0) s++;
    if (s->tag == NULL) {
        char tags[160] = "";
        for (const Shape *t = shapes; t->tag; t++)
            snprintf(tags + strlen(tags), sizeof tags - strlen(tags), "%s%s", t == shapes ? "" : " ", t->tag);
        return fail(v, PyExc_ValueError, "'%.40s' is not %s (tags: %s)", tag, what, tags);
    }
    Py_ssize_t most = 1 + (Py_ssize_t)strlen(s->items), n = PyTuple_GET_SIZE(node);
    if (n < most - s->optional || n > most)
        return fail(v, PyExc_TypeError, "a '%s' node has %zd item%s, not %zd%s", tag, n,
                    n == 1 ? "" : "s", most - s->optional, s->optional ? " or more" : "");
    /* statements and expressions recurse in the builder and the analyses */
    bool nests = shapes == EXPRS || shapes == STMTS;
    if (nests && ++v->nesting > GT_MAX_NESTING)
        return fail(v, PyExc_ValueError, "statements and expressions nest more than %d levels deep",
                    GT_MAX_NESTING);
    for (Py_ssize_t i = 1; i < n; i++) {
        enter(v, i);
        if (!check_one(v, s->items[i - 1], PyTuple_GET_ITEM(node, i))) return false;
        leave(v);
    }
    if (nests) v->nesting--;
    return true;
}

/* ---- depth, without recursion -------------------------------------------------------------- */

/* Statements nest two containers a level (a statement list, then the statement), expressions
 * one or two (an operand, or a call's argument list): a tree whose tuples and lists nest
 * deeper than this is refused before the recursive check walks it, so that an absurd depth
 * (a pickle of a million nested tuples, a cycle through a list) costs no stack at all. */
enum { MAX_CONTAINER_DEPTH = 2 * GT_MAX_NESTING + 16 };

typedef struct Pending {
    PyObject *o;
    int depth;
} Pending;

/* Walks `root` with a stack of its own; false (ValueError, or MemoryError) when it nests
 * deeper than MAX_CONTAINER_DEPTH. Borrowed references only: nothing runs Python code. */
static bool check_depth(Validator *v, PyObject *root) {
    size_t n = 0, cap = 256;
    Pending *stack = PyMem_Malloc(cap * sizeof *stack);
    if (stack == NULL) {
        PyErr_NoMemory();
        return false;
    }
    stack[n++] = (Pending){root, 0};
    bool ok = true;
    while (ok && n > 0) {
        Pending p = stack[--n];
        if (!PyTuple_Check(p.o) && !PyList_Check(p.o)) continue;
        if (p.depth >= MAX_CONTAINER_DEPTH) {
            ok = fail(v, PyExc_ValueError, "its tuples and lists nest more than %d levels deep",
                      MAX_CONTAINER_DEPTH);
            break;
        }
        Py_ssize_t size = PySequence_Fast_GET_SIZE(p.o);
        for (Py_ssize_t i = 0; ok && i < size; i++) {
            if (n == cap) {
                Pending *w = PyMem_Realloc(stack, 2 * cap * sizeof *stack);
                if (w == NULL) {
                    PyErr_NoMemory();
                    ok = false;
                    break;
                }
                stack = w;
                cap *= 2;
            }
            stack[n++] = (Pending){PySequence_Fast_GET_ITEM(p.o, i), p.depth + 1};
        }
    }
    PyMem_Free(stack);
    return ok;
}

/* ---- the definition ------------------------------------------------------------------------ */

/* definition[key], which must be present */
static PyObject *entry(Validator *v, PyObject *def, const char *key) {
    v->root = key;
    PyObject *o = PyDict_GetItemString(def, key); /* borrowed; cannot raise for a str key */
    if (o == NULL) fail(v, PyExc_TypeError, "the definition has no '%s'", key);
    return o;
}

bool ir_validate(PyObject *def) {
    Validator v = {.root = "the definition"};
    if (!PyDict_Check(def))
        return fail(&v, PyExc_TypeError, "the definition must be a dict, got %.80s", Py_TYPE(def)->tp_name);
    PyObject *o;
    if ((o = entry(&v, def, "name")) == NULL || !check_text(&v, o, "the stencil's name")) return false;
    if ((o = entry(&v, def, "filename")) == NULL || !check_display(&v, o, "the file name")) return false;
    if ((o = entry(&v, def, "source_lines")) == NULL || !check_list(&v, o, "the source lines"))
        return false;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) {
        enter(&v, i);
        if (!check_display(&v, PyList_GET_ITEM(o, i), "a source line")) return false;
        leave(&v);
    }
    if ((o = entry(&v, def, "params")) == NULL || !check_nodes(&v, o, PARAMS, "a parameter", false))
        return false;
    return (o = entry(&v, def, "body")) != NULL && check_depth(&v, o) &&
           check_nodes(&v, o, COMPUTATION, "a computation", false);
}
