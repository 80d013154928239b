/* Run-time interval bounds: the values of the scalars, checked against the domain. */
#include "call/ibounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call/call.h"

/* "'n' = 7" (or "'n' = 7 + 1") for an error message, or "" for a static bound. */
static void describe(char *buf, size_t size, AxisBound b, const int64_t *kvals) {
    if (b.sym == NULL) {
        buf[0] = '\0';
        return;
    }
    long long v = (long long)kvals[b.sym->slot];
    if (b.offset == 0) snprintf(buf, size, "'%s' = %lld", b.sym->name, v);
    else
        snprintf(buf, size, "'%s' %c %d = %lld %c %d", b.sym->name, b.offset < 0 ? '-' : '+',
                 abs(b.offset), v, b.offset < 0 ? '-' : '+', abs(b.offset));
}

/* The bound's K index, overflow-checked: false when it does not fit in int64. */
static bool resolve(AxisBound b, int64_t nk, const int64_t *kvals, int64_t *out) {
    int64_t v = b.level ? nk : 0;
    if (__builtin_add_overflow(v, (int64_t)b.offset, &v)) return false;
    if (b.sym && __builtin_add_overflow(v, kvals[b.sym->slot], &v)) return false;
    *out = v;
    return true;
}

static bool bad_interval(const Interval *in, const char *why, const int64_t *kvals, int64_t ks,
                         int64_t ke, int64_t nk) {
    char ds[160], de[160], from[360] = "";
    describe(ds, sizeof ds, in->start, kvals);
    describe(de, sizeof de, in->end, kvals);
    if (ds[0] && de[0]) snprintf(from, sizeof from, " (start from %s, end from %s)", ds, de);
    else if (ds[0] || de[0]) snprintf(from, sizeof from, " (%s from %s)", ds[0] ? "start" : "end", ds[0] ? ds : de);
    PyErr_Format(PyExc_ValueError,
                 "the interval on line %d %s: it runs on levels [%lld, %lld)%s, and the domain "
                 "has %lld K levels",
                 in->line, why, (long long)ks, (long long)ke, from, (long long)nk);
    return false;
}

static bool read_ints(const Stencil *st, PyObject *const *values, int64_t *kvals) {
    for (int i = 0; i < st->nparams; i++) {
        const Symbol *s = st->params[i];
        if (s->kind != SYM_SCALAR) continue;
        kvals[s->slot] = 0;
        /* an omitted scalar is one the build found unused: no bound reads it */
        if (!dtype_is_int(s->dtype) || values[i] == NULL) continue;
        char slot[8] = {0};
        /* the scalar's own conversion and range check (it raises for a bad argument) */
        if (!scalar_value(s, values[i], slot)) return false;
        switch (s->dtype) {
        case DT_INT8: kvals[s->slot] = (int8_t)slot[0]; break;
        case DT_INT16: {
            int16_t x;
            memcpy(&x, slot, sizeof x);
            kvals[s->slot] = x;
            break;
        }
        case DT_INT32: {
            int32_t x;
            memcpy(&x, slot, sizeof x);
            kvals[s->slot] = x;
            break;
        }
        default: memcpy(&kvals[s->slot], slot, sizeof(int64_t)); break;
        }
    }
    return true;
}

bool ibounds_check(const Stencil *st, PyObject *const *values, const int64_t *domain,
                   int64_t *kvals) {
    if (!st->has_runtime_bounds) return true; /* kvals are read only for run-time bounds */
    if (!read_ints(st, values, kvals)) return false;
    /* an empty domain runs nothing, so no interval can leave it */
    if (!domain[0] || !domain[1] || !domain[2]) return true;
    int64_t nk = domain[2];
    for (int c = 0; c < st->ncomps; c++) {
        const Computation *comp = &st->comps[c];
        bool runtime = false;
        for (int i = 0; i < comp->nintervals; i++)
            runtime |= comp->intervals[i].start.sym || comp->intervals[i].end.sym;
        if (!runtime) continue;
        bool down = comp->policy == POLICY_BACKWARD;
        const Interval *prev = NULL;
        int64_t pks = 0, pke = 0;
        for (int i = 0; i < comp->nintervals; i++) {
            const Interval *in = &comp->intervals[i];
            int64_t ks, ke;
            if (!resolve(in->start, nk, kvals, &ks) || !resolve(in->end, nk, kvals, &ke)) {
                PyErr_Format(PyExc_ValueError,
                             "the interval on line %d: a run-time bound overflows int64", in->line);
                return false;
            }
            if (ks < 0 || ke > nk)
                return bad_interval(in, "reaches outside the domain", kvals, ks, ke, nk);
            if (ks > ke)
                return bad_interval(in, "has its start above its end", kvals, ks, ke, nk);
            if (ks == ke) continue; /* empty: runs nowhere, so it meets no other interval */
            if (prev && (down ? ke > pks : ks < pke)) {
                PyErr_Format(PyExc_ValueError,
                             "the interval on line %d runs on levels [%lld, %lld) and the one on "
                             "line %d on [%lld, %lld): in a computation with run-time bounds "
                             "the intervals run in the order written, %s, and must not overlap",
                             in->line, (long long)ks, (long long)ke, prev->line, (long long)pks,
                             (long long)pke,
                             down ? "downwards in BACKWARD" : "upwards in PARALLEL and FORWARD");
                return false;
            }
            prev = in, pks = ks, pke = ke;
        }
    }
    return true;
}
