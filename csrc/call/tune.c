/*
 * Measured call plans (tune.h): the candidates, the tuning calls, the choice, and its record
 * in the stencil's disk cache entry (cache/plans.h).
 */
#include "call/tune.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/blocks.h"
#include "backend/cpu/jit.h"
#include "cache/plans.h"
#include "call/machine.h"
#include "call/pool.h"

/* A measurement of a candidate spans at least this much kernel time: a few percent of 2 ms
 * is tens of microseconds, as much as a call's own overhead and the clock's noise on a busy
 * machine, so a faster plan could not be told apart from a lucky measurement in less. A
 * shorter call measures each candidate over several calls (the fastest of them), as many as
 * make up 2 ms, at most TUNE_MAX_REPEATS; GTSCRIPT_AUTOTUNE_MIN_MS sets another span (tests). */
#define TUNE_MIN_SECONDS 2e-3
/* Calls shorter than this are not tuned: their time is mostly the call's own (argument
 * checks, waking the threads), not the plan's. */
#define TUNE_FLOOR_SECONDS 1e-4
/* A candidate replaces the model's plan only when it is faster by more than this fraction
 * (each compared by the lower of two measurements): less is within the noise. */
#define TUNE_NOISE 0.03

enum {
    TUNE_MAX_REPEATS = 8,  /* calls per measurement of a short call (TUNE_MIN_SECONDS) */
    TUNE_MAX_RECORDS = 16, /* keys remembered per stencil, the least recently used dropped */
    TUNE_MAX_DISCARDS = 4, /* measurements per key set aside because the run lacked threads */
    TUNE_NAME_LEN = 512,
};

struct TuneTable {
    TuneRecord rec[TUNE_MAX_RECORDS];
    int n;
    int last; /* the record of the latest call: repeated calls find it first */
    unsigned next_serial;
    unsigned long long clock;
};

TuneTable *tune_table_new(void) {
    return calloc(1, sizeof(TuneTable));
}

void tune_table_free(TuneTable *t) {
    free(t);
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}
static int64_t twice(int64_t v) {
    return v > INT64_MAX / 2 ? INT64_MAX : 2 * v;
}

/* ---- the machine ---------------------------------------------------------------------- */

static char machine[256];
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

/* What a measurement depends on besides the stencil: the CPU's model, its cache sizes and
 * vector width (and LLVM's name for the CPU), one word of [A-Za-z0-9._;=+()-]. */
static void make_machine_id(void) {
    snprintf(machine, sizeof machine, "%s;l1=%lld;l2=%lld;l3=%lld;v512=%d;llvm=%s",
             cpu_model_name(), (long long)cpu_cache_bytes(1), (long long)cpu_cache_bytes(2),
             (long long)cpu_cache_bytes(3), jit_has_wide_vectors() ? 1 : 0, jit_cpu_name());
    for (char *c = machine; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("._;=+()-", *c) != NULL))
            *c = '_';
}

static const char *machine_id(void) {
    pthread_once(&machine_once, make_machine_id);
    return machine;
}

/* ---- records ---------------------------------------------------------------------------- */

static bool same_key(const TuneRecord *r, const int64_t domain[3], CpuVariant v, int threads) {
    return r->domain[0] == domain[0] && r->domain[1] == domain[1] && r->domain[2] == domain[2] &&
           r->layout == v.layout && r->shared == v.shared && r->threads == threads;
}

static TuneRecord *find(TuneTable *t, const int64_t domain[3], CpuVariant v, int threads) {
    if (t->last < t->n && same_key(&t->rec[t->last], domain, v, threads)) return &t->rec[t->last];
    for (int i = 0; i < t->n; i++)
        if (same_key(&t->rec[i], domain, v, threads)) {
            t->last = i;
            return &t->rec[i];
        }
    return NULL;
}

static TuneRecord *by_serial(TuneTable *t, unsigned serial) {
    if (t->last < t->n && t->rec[t->last].serial == serial) return &t->rec[t->last];
    for (int i = 0; i < t->n; i++)
        if (t->rec[i].serial == serial) return &t->rec[i];
    return NULL;
}

static void drop(TuneTable *t, TuneRecord *r) {
    int i = (int)(r - t->rec);
    t->rec[i] = t->rec[--t->n];
}

static bool same_choice(const PlanChoice *a, const PlanChoice *b) {
    return a->pool == b->pool && a->ti == b->ti && a->tj == b->tj &&
           a->block_cols == b->block_cols && a->tile_why == b->tile_why &&
           a->block_why == b->block_why && a->env == b->env &&
           a->tile_free == b->tile_free && a->blocks_free == b->blocks_free &&
           a->stream == b->stream && a->stream_why == b->stream_why &&
           a->stream_free == b->stream_free;
}

/* Adds candidate (ti, tj) (clamped to the domain) with the model's blocks and streaming,
 * unless an equal one is there. */
static void add_candidate(TuneRecord *r, int64_t ti, int64_t tj) {
    const PlanChoice *m = &r->model;
    ti = clamp64(ti, 1, r->domain[0]);
    tj = clamp64(tj, 1, r->domain[1]);
    for (int i = 0; i < r->ncand; i++)
        if (r->cand[i].ti == ti && r->cand[i].tj == tj) return;
    if (r->ncand == TUNE_MAX_CANDIDATES) return;
    r->cand[r->ncand++] = (TuneCandidate){ti, tj, m->block_cols, m->stream, {0, 0}, 0};
}

/* The model's plan first, then variations of its tile along the axis it sized (area halved
 * and doubled), of its aspect, whole rows of I (about the same area), the column blocks
 * toggled and the streaming toggled (each on the fastest plan so far, chosen when its turn
 * comes). At most 9. */
static void make_candidates(TuneRecord *r) {
    const PlanChoice *m = &r->model;
    int64_t ti = m->ti, tj = m->tj, bc = m->block_cols;
    r->ncand = 0;
    add_candidate(r, ti, tj);
    if (m->tile_free) {
        if (m->tile_axis == 0) {
            add_candidate(r, ti / 2, tj);
            add_candidate(r, twice(ti), tj);
        } else {
            add_candidate(r, ti, tj / 2);
            add_candidate(r, ti, twice(tj));
        }
        add_candidate(r, twice(ti), tj / 2);
        add_candidate(r, ti / 2, twice(tj));
        int64_t area;
        if (r->domain[0] > ti && !__builtin_mul_overflow(ti, tj, &area) && area >= r->domain[0])
            add_candidate(r, r->domain[0], area / r->domain[0]);
    }
    r->blocks_cand = r->stream_cand = -1;
    if (m->blocks_free && r->ncand < TUNE_MAX_CANDIDATES) {
        r->blocks_cand = r->ncand;
        r->cand[r->ncand++] = (TuneCandidate){ti, tj, bc ? 0 : m->block_width, m->stream, {0, 0}, 0};
    }
    if (m->stream_free && r->ncand < TUNE_MAX_CANDIDATES) {
        r->stream_cand = r->ncand;
        r->cand[r->ncand++] = (TuneCandidate){ti, tj, bc, !m->stream, {0, 0}, 0};
    }
}

static double best_seconds(const TuneCandidate *c) {
    double s = c->seconds[0];
    for (int i = 1; i < c->measured; i++)
        if (c->seconds[i] < s) s = c->seconds[i];
    return c->measured ? s : INFINITY;
}

/* The fastest of candidates [0, n) by their first measurement. */
static int fastest(const TuneRecord *r, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (r->cand[i].measured && r->cand[i].seconds[0] < r->cand[best].seconds[0]) best = i;
    return best;
}

/* The candidate tuning step `step` runs; -1 when tuning is over. Step 0 is the warm-up, steps
 * 1..n the first round, then the first round's fastest and the model's plan once more. */
static int step_candidate(const TuneRecord *r, int step) {
    if (step == 0) return 0;
    if (step <= r->ncand) return step - 1;
    if (r->finalist <= 0) return -1;
    if (step == r->ncand + 1) return r->finalist;
    if (step == r->ncand + 2) return 0;
    return -1;
}

/* ---- the record on disk ----------------------------------------------------------------
 * name:  "<machine> <layout C|F|G> <shared 0|1> <threads> <ni> <nj> <nk>"
 * value: "<chosen> <ti>x<tj>/<block columns>/<streaming 0|1>=<us>[,<us>] ..." per
 *        candidate, in microseconds (integers: a float's text would depend on the locale).
 *        A record of another form (an older gtscript's) is ignored and measured again. */

static void record_name(const TuneRecord *r, char *buf, size_t n) {
    snprintf(buf, n, "%s %c %d %d %lld %lld %lld", machine_id(), "CFG"[r->layout],
             r->shared ? 1 : 0, r->threads, (long long)r->domain[0], (long long)r->domain[1],
             (long long)r->domain[2]);
}

static void record_value(const TuneRecord *r, char *buf, size_t n) {
    size_t at = (size_t)snprintf(buf, n, "%d", r->chosen);
    for (int i = 0; i < r->ncand && at < n; i++) {
        const TuneCandidate *c = &r->cand[i];
        at += (size_t)snprintf(buf + at, n - at, " %lldx%lld/%lld/%d=", (long long)c->ti,
                               (long long)c->tj, (long long)c->block_cols, c->stream ? 1 : 0);
        for (int k = 0; k < c->measured && at < n; k++)
            at += (size_t)snprintf(buf + at, n - at, "%s%lld", k ? "," : "",
                                   (long long)llround(c->seconds[k] * 1e6));
    }
}

/* A decimal number without sign at *p (advanced past it), within [0, INT64_MAX]. */
static bool parse_count(const char **p, int64_t *out) {
    if (**p < '0' || **p > '9') return false;
    char *end;
    errno = 0;
    long long v = strtoll(*p, &end, 10);
    if (errno != 0) return false;
    *p = end;
    *out = v;
    return true;
}

static bool expect(const char **p, char c) {
    if (**p != c) return false;
    (*p)++;
    return true;
}

/* Reads a record's value into r's candidates; false when malformed or not for this key (a
 * tile outside the domain, column blocks where the stencil has none, a fixed choice that
 * differs). */
static bool parse_value(const char *v, TuneRecord *r) {
    const PlanChoice *m = &r->model;
    int64_t chosen;
    int n = 0;
    if (!parse_count(&v, &chosen)) return false;
    while (*v == ' ') {
        v++;
        if (n == TUNE_MAX_CANDIDATES) return false;
        TuneCandidate *c = &r->cand[n++];
        memset(c, 0, sizeof *c);
        int64_t stream;
        if (!parse_count(&v, &c->ti) || !expect(&v, 'x') || !parse_count(&v, &c->tj) ||
            !expect(&v, '/') || !parse_count(&v, &c->block_cols) || !expect(&v, '/') ||
            !parse_count(&v, &stream) || stream > 1 || !expect(&v, '='))
            return false;
        c->stream = stream == 1;
        int64_t us;
        while (c->measured < 2 && parse_count(&v, &us)) {
            c->seconds[c->measured++] = (double)us / 1e6;
            if (!expect(&v, ',')) break;
        }
        if (c->ti < 1 || c->ti > r->domain[0] || c->tj < 1 || c->tj > r->domain[1] ||
            (c->block_cols != 0 && c->block_cols != m->block_width) ||
            (!m->blocks_free && c->block_cols != m->block_cols) ||
            (!m->stream_free && c->stream != m->stream) ||
            (!m->tile_free && (c->ti != m->ti || c->tj != m->tj)))
            return false;
    }
    if (*v != '\0' || n == 0 || chosen >= n) return false;
    r->ncand = n;
    r->chosen = (int)chosen;
    return true;
}

static bool load_record(const char *cache_key, TuneRecord *r) {
    char name[TUNE_NAME_LEN], value[PLANS_MAX_LINE];
    record_name(r, name, sizeof name);
    TuneRecord parsed = *r;
    if (!plans_read(cache_key, name, value, sizeof value) || !parse_value(value, &parsed))
        return false;
    *r = parsed;
    r->state = TUNE_DISK;
    return true;
}

static void store_record(const char *cache_key, const TuneRecord *r) {
    char name[TUNE_NAME_LEN], value[PLANS_MAX_LINE];
    record_name(r, name, sizeof name);
    record_value(r, value, sizeof value);
    plans_write(cache_key, name, value);
}

/* ---- tuning ----------------------------------------------------------------------------- */

/* GTSCRIPT_AUTOTUNE=0 turns tuning off; GTSCRIPT_AUTOTUNE_MIN_MS the threshold (tests). */
static bool autotune_on(void) {
    const char *v = getenv("GTSCRIPT_AUTOTUNE");
    return !(v && strcmp(v, "0") == 0);
}

static double min_seconds(void) {
    const char *v = getenv("GTSCRIPT_AUTOTUNE_MIN_MS");
    if (v && *v) {
        char *end;
        double ms = strtod(v, &end);
        if (*end == '\0' && ms >= 0 && ms < 1e9) return ms * 1e-3;
    }
    return TUNE_MIN_SECONDS;
}

/* A new record for the key (from disk when one is recorded for this machine), in the table;
 * NULL when the table has no room. Reads the disk with Python's help: the table may change
 * meanwhile (another thread's call), so the record is put in only afterwards. */
static TuneRecord *record_new(TuneTable *t, const char *cache_key, const int64_t domain[3],
                              CpuVariant v, int threads, const PlanChoice *model) {
    TuneRecord r;
    memset(&r, 0, sizeof r);
    memcpy(r.domain, domain, sizeof r.domain);
    r.layout = v.layout;
    r.shared = v.shared;
    r.threads = threads;
    r.model = *model;
    r.finalist = -1;
    r.min_seconds = min_seconds();
    make_candidates(&r);
    r.state = r.ncand > 1 && !model->env && autotune_on() ? TUNE_RUNNING : TUNE_FIXED;
    if (r.state == TUNE_RUNNING) load_record(cache_key, &r);
    TuneRecord *old = find(t, domain, v, threads);
    if (old) return old;
    int i = t->n;
    if (t->n == TUNE_MAX_RECORDS) { /* the least recently used goes */
        i = 0;
        for (int k = 1; k < t->n; k++)
            if (t->rec[k].used < t->rec[i].used) i = k;
    } else {
        t->n++;
    }
    r.serial = ++t->next_serial ? t->next_serial : ++t->next_serial; /* never 0 */
    t->rec[i] = r;
    t->last = i;
    return &t->rec[i];
}

static void apply(PlanChoice *c, const TuneCandidate *k) {
    c->ti = k->ti;
    c->tj = k->tj;
    c->block_cols = k->block_cols;
    c->stream = k->stream;
}

void tune_begin(TuneTable *t, const Stencil *st, const char *cache_key, const int64_t domain[3],
                CpuVariant variant, bool slot, bool fresh, TuneCall *tc) {
    tc->serial = 0;
    tc->step = -1;
    tc->measured = false;
    tc->rep = 0;
    tc->have_snap = false;
    /* the pool's size now (gtscript.set_num_threads may change it between calls): read once,
     * so that the key, the model and the plan agree */
    int threads = pool_threads();
    TuneRecord *r = t ? find(t, domain, variant, threads) : NULL;
    PlanChoice model;
    memset(&model, 0, sizeof model);
    if (r == NULL || fresh) {
        plan_model(st, domain, variant, threads, &model);
        /* the shared-memory kernel keeps the bundles (codegen.h): no block choice there */
        if (variant.shared) model.blocks_free = false;
    }
    if (r && fresh && !same_choice(&model, &r->model)) {
        drop(t, r); /* the overrides in the environment changed: start again */
        r = NULL;
    }
    if (r == NULL && t) r = record_new(t, cache_key, domain, variant, threads, &model);
    if (r == NULL) {
        tc->choice = model;
        return;
    }
    r->used = ++t->clock;
    tc->serial = r->serial;
    tc->choice = r->model;
    if (r->state == TUNE_MEASURED || r->state == TUNE_DISK) {
        apply(&tc->choice, &r->cand[r->chosen]);
    } else if (r->state == TUNE_RUNNING && slot) {
        apply(&tc->choice, &r->cand[step_candidate(r, r->step)]);
        tc->step = r->step;
    }
}

/* Toggle candidate k runs on the fastest plan measured before it: its tile, and with
 * `blocks` its column blocks too. */
static void adopt_fastest(TuneRecord *r, int k, bool blocks) {
    const TuneCandidate *f = &r->cand[fastest(r, k)];
    r->cand[k].ti = f->ti;
    r->cand[k].tj = f->tj;
    if (blocks) r->cand[k].block_cols = f->block_cols;
}

/* The calls one measurement of a call of `seconds` spans (0: too short to tune). */
static int repeats_for(double seconds, double min_seconds) {
    if (seconds >= min_seconds) return 1;
    if (seconds < TUNE_FLOOR_SECONDS) return 0;
    double n = ceil(min_seconds / seconds);
    return n < TUNE_MAX_REPEATS ? (int)n : TUNE_MAX_REPEATS;
}

/* Records a tuning call's time; true when tuning is over (r->state is then TUNE_MEASURED). */
static bool record_time(TuneRecord *r, double seconds) {
    r->calls++;
    if (r->step == 0) {
        /* two warm-up calls, the faster counts: a first call also pays for first touches
         * (the plan's buffers, pages of fresh arrays), which would hide a short call */
        r->warmup_seconds = r->calls == 1 || seconds < r->warmup_seconds ? seconds : r->warmup_seconds;
        if (r->calls == 1 && repeats_for(seconds, r->min_seconds) > 0) return false;
        r->repeats = repeats_for(r->warmup_seconds, r->min_seconds);
        if (r->repeats == 0)
            r->state = TUNE_SHORT;
        else
            r->step = 1;
        return false;
    }
    /* a measurement: the fastest of `repeats` calls */
    r->rep_best = r->rep == 0 || seconds < r->rep_best ? seconds : r->rep_best;
    if (++r->rep < r->repeats) return false;
    seconds = r->rep_best;
    r->rep = 0;
    TuneCandidate *c = &r->cand[step_candidate(r, r->step)];
    if (c->measured < 2) c->seconds[c->measured++] = seconds;
    r->step++;
    /* the column blocks toggled, on the fastest tile so far; the streaming toggled, on the
     * fastest tile and blocks so far */
    if (r->blocks_cand > 0 && r->step == r->blocks_cand + 1) adopt_fastest(r, r->blocks_cand, false);
    if (r->stream_cand > 0 && r->step == r->stream_cand + 1) adopt_fastest(r, r->stream_cand, true);
    if (r->step == r->ncand + 1) r->finalist = fastest(r, r->ncand);
    if (step_candidate(r, r->step) >= 0) return false;
    r->chosen = 0;
    if (r->finalist > 0 &&
        best_seconds(&r->cand[r->finalist]) < best_seconds(&r->cand[0]) * (1.0 - TUNE_NOISE))
        r->chosen = r->finalist;
    r->state = TUNE_MEASURED;
    return true;
}

void tune_end(TuneTable *t, const char *cache_key, TuneCall *tc, double seconds, bool clean,
              bool snapshot) {
    TuneRecord *r = t && tc->serial ? by_serial(t, tc->serial) : NULL;
    if (r == NULL) return;
    bool done = false;
    if (tc->step >= 0 && r->state == TUNE_RUNNING && r->step == tc->step) {
        if (!clean && r->discards < TUNE_MAX_DISCARDS) {
            r->discards++;
        } else {
            tc->measured = true;
            tc->rep = r->rep;
            done = record_time(r, seconds);
        }
    }
    if (snapshot) {
        tc->snap = *r;
        tc->have_snap = true;
    }
    if (done) {
        /* a copy: writing the file calls into Python, where another thread may change the
         * table */
        TuneRecord copy = *r;
        store_record(cache_key, &copy);
    }
}

/* ---- exec_info ------------------------------------------------------------------------- */

/* "64x8 blocks 1.52, 32x8 blocks 1.60, ...": each candidate's best time in ms. */
static void list_times(const TuneRecord *r, char *buf, size_t n) {
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->ncand && at < n; i++) {
        const TuneCandidate *c = &r->cand[i];
        at += (size_t)snprintf(buf + at, n - at, "%s%lldx%lld%s%s %.3g", i ? ", " : "",
                               (long long)c->ti, (long long)c->tj,
                               !r->model.blocks_free ? ""
                               : c->block_cols       ? " blocks"
                                                     : " bundles",
                               !r->model.stream_free ? ""
                               : c->stream           ? " streaming"
                                                     : " plain",
                               1e3 * best_seconds(c));
    }
}

static PyObject *candidates_list(const TuneRecord *r) {
    PyObject *l = PyList_New(r->ncand);
    for (int i = 0; l && i < r->ncand; i++) {
        const TuneCandidate *c = &r->cand[i];
        PyObject *ms = PyList_New(c->measured);
        for (int k = 0; ms && k < c->measured; k++) {
            /* whole microseconds, as recorded on disk (finer is noise) */
            PyObject *x = PyFloat_FromDouble(round(1e6 * c->seconds[k]) / 1e3);
            if (x == NULL)
                Py_CLEAR(ms);
            else
                PyList_SET_ITEM(ms, k, x);
        }
        PyObject *blocks =
            r->model.block_why ? PyLong_FromLongLong(c->block_cols) : Py_NewRef(Py_None);
        PyObject *e = ms && blocks
                          ? Py_BuildValue("{s:(LL),s:O,s:O,s:O}", "tile", (long long)c->ti,
                                          (long long)c->tj, "column_blocks", blocks,
                                          "streaming_stores", c->stream ? Py_True : Py_False,
                                          "ms", ms)
                          : NULL;
        Py_XDECREF(ms);
        Py_XDECREF(blocks);
        if (e == NULL)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, i, e);
    }
    return l;
}

PyObject *tune_info(TuneCall *tc, const Plan *p, const char **tile_why, const char **block_why,
                    const char **stream_why) {
    *tile_why = p ? p->tile_why : "none";
    *block_why = p ? p->block_why : NULL;
    *stream_why = p ? p->stream_why : NULL;
    if (!tc->have_snap || tc->snap.state == TUNE_FIXED) return Py_NewRef(Py_None);
    const TuneRecord *r = &tc->snap;
    char times[TUNE_WHY_LEN - 96];
    const char *state = "tuning";
    const char *msg = NULL;
    if (tc->step >= 0) {
        int c = step_candidate(r, tc->step);
        if (tc->step == 0)
            msg = r->state == TUNE_SHORT ? "model: too short to tune"
                                         : "tuning: warm-up (the model's plan)";
        else if (c >= 0) {
            char rep[48] = "";
            if (r->repeats > 1 && tc->measured)
                snprintf(rep, sizeof rep, ", call %d of %d", tc->rep + 1, r->repeats);
            snprintf(tc->tile_why, TUNE_WHY_LEN, "tuning: candidate %d of %d%s%s%s", c + 1,
                     r->ncand, tc->step > r->ncand ? ", measured again" : "", rep,
                     tc->measured ? "" : " (not measured: the threads were busy)");
            msg = tc->tile_why;
        }
    } else if (r->state == TUNE_RUNNING) {
        msg = "model: tuning in progress";
    }
    switch (r->state) {
    case TUNE_SHORT:
        state = "too short";
        msg = msg ? msg : "model: too short to tune";
        break;
    case TUNE_DISK:
        state = "disk";
        msg = msg ? msg : "disk: measured on this machine";
        break;
    case TUNE_MEASURED:
        state = "measured";
        if (msg == NULL) {
            const TuneCandidate *k = &r->cand[r->chosen];
            list_times(r, times, sizeof times);
            snprintf(tc->tile_why, TUNE_WHY_LEN, "measured: %lldx%lld of %d candidates (ms: %s)",
                     (long long)k->ti, (long long)k->tj, r->ncand, times);
            snprintf(tc->block_why, TUNE_WHY_LEN, "measured: %s of %d candidates (ms: %s)",
                     k->block_cols ? "blocks" : "bundles", r->ncand, times);
            snprintf(tc->stream_why, TUNE_WHY_LEN, "measured: %s of %d candidates (ms: %s)",
                     k->stream ? "streaming" : "plain", r->ncand, times);
            if (r->model.tile_free) *tile_why = tc->tile_why;
            if (r->model.blocks_free) *block_why = tc->block_why;
            if (r->model.stream_free) *stream_why = tc->stream_why;
        }
        break;
    default:
        break;
    }
    if (msg) {
        if (r->model.tile_free) *tile_why = msg;
        if (r->model.blocks_free) *block_why = msg;
        if (r->model.stream_free) *stream_why = msg;
    }
    PyObject *cands = candidates_list(r);
    if (cands == NULL) return NULL;
    bool chose = r->state == TUNE_MEASURED || r->state == TUNE_DISK;
    PyObject *chosen = chose ? PyLong_FromLong(r->chosen) : Py_NewRef(Py_None);
    if (chosen == NULL) {
        Py_DECREF(cands);
        return NULL;
    }
    return Py_BuildValue("{s:s,s:N,s:N,s:i,s:i,s:d,s:d}", "state", state, "candidates", cands,
                         "chosen", chosen, "calls", r->state == TUNE_DISK ? 0 : r->calls,
                         "repeats", r->repeats, "warmup_ms", 1e3 * r->warmup_seconds, "min_ms",
                         1e3 * r->min_seconds);
}
