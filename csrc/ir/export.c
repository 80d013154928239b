/* Analysed IR -> Python tuples. The numpy backend executes exactly this tree. */
#include "ir/export.h"

static PyObject *export_expr(const Expr *e);

static PyObject *data_index(int n, const int *di) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *v = PyLong_FromLong(di[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *const_value(const Expr *e) {
    if (e->type == DT_BOOL) return PyBool_FromLong((long)e->cnst.i);
    if (dtype_is_int(e->type)) return PyLong_FromLongLong(e->cnst.i);
    return PyFloat_FromDouble(e->cnst.f);
}

static PyObject *export_expr(const Expr *e) {
    const char *t = dtype_name(e->type);
    switch (e->kind) {
    case E_CONST: {
        PyObject *v = const_value(e);
        return v ? Py_BuildValue("(ssN)", "const", t, v) : NULL;
    }
    case E_FIELD: {
        const int *o = e->field.off;
        PyObject *di = data_index(e->field.ndi, e->field.data_index);
        if (di == NULL) return NULL;
        if (e->field.kexpr) {
            PyObject *k = export_expr(e->field.kexpr);
            if (k == NULL) {
                Py_DECREF(di);
                return NULL;
            }
            /* last: the line of a checked level (kchecked), else 0 */
            return Py_BuildValue("(sss(iii)NNi)", e->field.kabs ? "afield" : "vfield", t,
                                 e->field.sym->name, o[0], o[1], o[2], k, di,
                                 e->field.kchecked ? e->line : 0);
        }
        return Py_BuildValue("(sss(iii)N)", "field", t, e->field.sym->name, o[0], o[1], o[2], di);
    }
    case E_SCALAR: return Py_BuildValue("(sss)", "scalar", t, e->scalar->name);
    case E_UNARY: {
        PyObject *a = export_expr(e->op.a);
        return a ? Py_BuildValue("(sssN)", "unop", t, op_name(e->op.op), a) : NULL;
    }
    case E_BINARY:
    case E_CMP:
    case E_LOGIC: {
        const char *tag = e->kind == E_BINARY ? "binop" : e->kind == E_CMP ? "cmp" : "boolop";
        PyObject *a = export_expr(e->op.a);
        PyObject *b = a ? export_expr(e->op.b) : NULL;
        if (b == NULL) {
            Py_XDECREF(a);
            return NULL;
        }
        return Py_BuildValue("(sssNN)", tag, t, op_name(e->op.op), a, b);
    }
    case E_TERNARY: {
        PyObject *c = export_expr(e->ternary.cond);
        PyObject *a = c ? export_expr(e->ternary.a) : NULL;
        PyObject *b = a ? export_expr(e->ternary.b) : NULL;
        if (b == NULL) {
            Py_XDECREF(c);
            Py_XDECREF(a);
            return NULL;
        }
        return Py_BuildValue("(ssNNN)", "ternary", t, c, a, b);
    }
    case E_CALL: {
        PyObject *args = PyList_New(e->call.nargs);
        for (int i = 0; args && i < e->call.nargs; i++) {
            PyObject *a = export_expr(e->call.args[i]);
            if (a == NULL) {
                Py_CLEAR(args);
                break;
            }
            PyList_SET_ITEM(args, i, a);
        }
        if (args && e->call.checked) /* then: the line of the check and what it reads */
            return Py_BuildValue("(sssNis)", "call", t, builtin_name(e->call.fn), args, e->line,
                                 e->call.from->name);
        return args ? Py_BuildValue("(sssN)", "call", t, builtin_name(e->call.fn), args) : NULL;
    }
    case E_CAST: {
        PyObject *a = export_expr(e->cast);
        return a ? Py_BuildValue("(ssN)", "cast", t, a) : NULL;
    }
    case E_KINDEX: return Py_BuildValue("(ss)", "kindex", t);
    }
    PyErr_SetString(PyExc_RuntimeError, "unknown expression kind");
    return NULL;
}

static PyObject *opt_expr(const Expr *e) {
    if (e == NULL) Py_RETURN_NONE;
    return export_expr(e);
}

/* (level, offset), or (0, offset, name) for a run-time bound (the scalar parameter `name`) */
PyObject *export_bound(AxisBound b) {
    if (b.sym) return Py_BuildValue("(iis)", b.level, b.offset, b.sym->name);
    return Py_BuildValue("(ii)", b.level, b.offset);
}

static PyObject *opt_bound(bool has, AxisBound b) {
    if (!has) Py_RETURN_NONE;
    return export_bound(b);
}

static PyObject *export_boxes(const Stmt *s) {
    if (s->nboxes == 0) Py_RETURN_NONE;
    PyObject *l = PyList_New(s->nboxes);
    for (int i = 0; l && i < s->nboxes; i++) {
        const Box *b = &s->boxes[i];
        PyObject *box = Py_BuildValue("(NNNN)", opt_bound(b->has[0], b->b[0]),
                                      opt_bound(b->has[1], b->b[1]), opt_bound(b->has[2], b->b[2]),
                                      opt_bound(b->has[3], b->b[3]));
        if (box == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, box);
    }
    return l;
}

static PyObject *export_stmts(const StmtList *l);

static PyObject *export_stmt(const Stmt *s) {
    const int *h = s->horizontal_extent;
    PyObject *guard = opt_expr(s->guard);
    PyObject *boxes = guard ? export_boxes(s) : NULL;
    if (boxes == NULL) {
        Py_XDECREF(guard);
        return NULL;
    }
    if (s->kind == S_ASSIGN) {
        PyObject *di = data_index(s->assign.ndi, s->assign.data_index);
        PyObject *v = di ? export_expr(s->assign.value) : NULL;
        /* koff: an int, or the expression of a variable K offset; a checked one (kchecked) is
         * ("kchecked", line, expr) */
        PyObject *koff = v == NULL ? NULL
                         : s->assign.kexpr ? export_expr(s->assign.kexpr)
                                           : PyLong_FromLong(s->assign.koff);
        if (koff && s->assign.kchecked) koff = Py_BuildValue("(siN)", "kchecked", s->line, koff);
        if (koff == NULL) {
            Py_XDECREF(v);
            Py_XDECREF(di);
            Py_DECREF(guard);
            Py_DECREF(boxes);
            return NULL;
        }
        return Py_BuildValue("(sisNN((ii)(ii))NNN)", "assign", s->line, s->assign.target->name,
                             koff, di, h[0], h[1], h[2], h[3], guard, boxes, v);
    }
    PyObject *cond = export_expr(s->while_.cond);
    PyObject *body = cond ? export_stmts(&s->while_.body) : NULL;
    if (body == NULL) {
        Py_XDECREF(cond);
        Py_DECREF(guard);
        Py_DECREF(boxes);
        return NULL;
    }
    return Py_BuildValue("(siNNN((ii)(ii))N)", "while", s->line, cond, guard, boxes, h[0], h[1],
                         h[2], h[3], body);
}

static PyObject *export_stmts(const StmtList *l) {
    PyObject *out = PyList_New(l->n);
    for (int i = 0; out && i < l->n; i++) {
        PyObject *s = export_stmt(l->items[i]);
        if (s == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, s);
    }
    return out;
}

static PyObject *export_params(const Stencil *st) {
    PyObject *l = PyList_New(st->nparams);
    for (int i = 0; l && i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        PyObject *p;
        if (s->kind == SYM_SCALAR) {
            p = Py_BuildValue("(sss)", "scalar", s->name, dtype_name(s->dtype));
        } else {
            char axes[4];
            int n = 0;
            if (s->axes & AX_I) axes[n++] = 'I';
            if (s->axes & AX_J) axes[n++] = 'J';
            if (s->axes & AX_K) axes[n++] = 'K';
            axes[n] = '\0';
            p = Py_BuildValue("(ssssN)", "field", s->name, dtype_name(s->dtype), axes,
                              data_index(s->ndata, s->data_dims));
        }
        if (p == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, p);
    }
    return l;
}

static PyObject *export_temps(const Stencil *st) {
    PyObject *l = PyList_New(st->ntemps);
    for (int i = 0; l && i < st->ntemps; i++) {
        const Symbol *s = st->temps[i];
        const Extent *a = &s->access;
        PyObject *dd = PyTuple_New(s->ndata);
        for (int d = 0; dd && d < s->ndata; d++) {
            PyObject *v = PyLong_FromLong(s->data_dims[d]);
            if (v == NULL) Py_CLEAR(dd);
            else PyTuple_SET_ITEM(dd, d, v);
        }
        PyObject *t = dd == NULL ? NULL
                                 : Py_BuildValue("(ss((ii)(ii)(ii))sN)", s->name, dtype_name(s->dtype),
                                                 a->lo[0], a->hi[0], a->lo[1], a->hi[1], a->lo[2],
                                                 a->hi[2], s->axes & AX_K ? "IJK" : "IJ", dd);
        if (t == NULL) Py_XDECREF(dd);
        if (t == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, t);
    }
    return l;
}

static PyObject *export_comps(const Stencil *st) {
    PyObject *l = PyList_New(st->ncomps);
    for (int c = 0; l && c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        PyObject *ivs = PyList_New(comp->nintervals);
        for (int i = 0; ivs && i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            PyObject *iv = Py_BuildValue("(NNN)", export_bound(in->start), export_bound(in->end),
                                         export_stmts(&in->body));
            if (iv == NULL) {
                Py_CLEAR(ivs);
                break;
            }
            PyList_SET_ITEM(ivs, i, iv);
        }
        PyObject *cp = ivs ? Py_BuildValue("(sN)", policy_name(comp->policy), ivs) : NULL;
        if (cp == NULL) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, c, cp);
    }
    return l;
}

PyObject *ir_export(const Stencil *st) {
    return Py_BuildValue("{s:s,s:N,s:N,s:N,s:i,s:O}", "name", st->name, "params",
                         export_params(st), "temporaries", export_temps(st), "computations",
                         export_comps(st), "min_k_levels", st->min_k_levels, "checked_k",
                         st->has_checked_k ? Py_True : Py_False);
}
