#include "call/interrupt.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <signal.h>
#include <string.h>
#include <time.h>

#include "call/pool.h"

/* Incremented by the handler; read by tile loops on any thread. A lock-free atomic on every
 * platform this builds for, which is what makes it safe in a signal handler. */
static unsigned long sigint_count;
/* Under the GIL: how many calls are watching, and the handler ours replaced. */
static int watchers;
static struct sigaction previous;
static bool ours;      /* our handler was installed at the last check */
/* Python's handler for SIGINT was signal.default_int_handler when ours was put in front of
 * it: a Ctrl-C then always ends the call, so kernels may stop inside a while loop (the
 * point they leave part-way cannot be resumed). Python changes its handler only through
 * signal.signal, which replaces ours with its own C handler, so this stays true for as long
 * as ours is the one installed. */
static bool raises;

static double checked; /* when that was (CLOCK_MONOTONIC_COARSE seconds) */

static void on_sigint(int sig, siginfo_t *info, void *uctx) {
    __atomic_fetch_add(&sigint_count, 1, __ATOMIC_SEQ_CST);
    if (previous.sa_flags & SA_SIGINFO)
        previous.sa_sigaction(sig, info, uctx);
    else
        previous.sa_handler(sig); /* only installed in front of a function, never SIG_DFL/IGN */
}

static bool python_handler_raises(void);

static bool is_function(const struct sigaction *sa) {
    if (sa->sa_flags & SA_SIGINFO) return sa->sa_sigaction != NULL && sa->sa_sigaction != on_sigint;
    return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN && sa->sa_handler != NULL;
}

/* Our handler stays installed between calls (it only counts, then calls the handler it
 * replaced), so that a call costs one system call (is ours still the handler?) rather than
 * four (install and restore, each checked): on a small stencil the four were most of the
 * call's overhead (0.4 -> 1.4 us). When something else has installed a handler since
 * (signal.signal), the next call puts ours in front of that one. */
unsigned long interrupt_arm(void) {
    unsigned long mark = interrupt_mark();
    if (watchers++ > 0) return mark;
    /* Even that one system call is most of a small call's cost (0.4 -> 0.7 us): calls in
     * quick succession (within 100 ms of the last check) trust it. A handler installed
     * since then by signal.signal makes at most the calls of the next 100 ms finish before
     * Python sees the Ctrl-C. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    double t = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
    if (ours && t - checked < 0.1) return mark;
    checked = t;
    struct sigaction cur;
    ours = false;
    if (sigaction(SIGINT, NULL, &cur) != 0) return mark;
    ours = (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigint;
    if (ours) return mark;
    if (!is_function(&cur)) return mark; /* SIG_DFL / SIG_IGN: nothing to chain to */
    struct sigaction mine;
    memset(&mine, 0, sizeof mine);
    mine.sa_sigaction = on_sigint;
    mine.sa_mask = cur.sa_mask;
    mine.sa_flags = (cur.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    previous = cur; /* before the handler can run */
    raises = python_handler_raises();
    ours = sigaction(SIGINT, &mine, NULL) == 0;
    return mark;
}

/* Whether signal.getsignal(SIGINT) is signal.default_int_handler (KeyboardInterrupt). On
 * any error: false (kernels then stop between tiles only, as they do for other handlers). */
static bool python_handler_raises(void) {
    PyObject *mod = PyImport_ImportModule("signal");
    PyObject *cur = mod ? PyObject_CallMethod(mod, "getsignal", "i", SIGINT) : NULL;
    PyObject *dflt = mod ? PyObject_GetAttrString(mod, "default_int_handler") : NULL;
    bool r = cur != NULL && dflt != NULL && cur == dflt;
    Py_XDECREF(dflt);
    Py_XDECREF(cur);
    Py_XDECREF(mod);
    if (PyErr_Occurred()) PyErr_Clear();
    return r;
}

const unsigned long *interrupt_loop_counter(const unsigned long *mark) {
    /* Python runs signal handlers in the main thread only: a call from another thread
     * raises nothing on Ctrl-C, so its loops must run to their end. */
    return ours && raises && _PyOS_IsMainThread() ? &sigint_count : mark;
}

void interrupt_disarm(void) { --watchers; }

unsigned long interrupt_mark(void) { return __atomic_load_n(&sigint_count, __ATOMIC_SEQ_CST); }

bool interrupt_since(unsigned long mark) { return interrupt_mark() != mark; }

bool interrupt_run(void (*task)(void *ctx, int worker), void *ctx, int nthreads,
                   unsigned long *mark, const unsigned long **loop_counter,
                   RunState (*unfinished)(void *ctx), int *workers) {
    *workers = 0;
    for (;;) {
        *mark = interrupt_arm();
        *loop_counter = interrupt_loop_counter(mark);
        int n;
        Py_BEGIN_ALLOW_THREADS n = pool_run(task, ctx, nthreads);
        Py_END_ALLOW_THREADS interrupt_disarm();
        *workers += n;
        RunState r = unfinished(ctx);
        if (r == RUN_DONE) return true;
        if (PyErr_CheckSignals() < 0) return false;
        if (r == RUN_BROKEN) {
            /* a loop stopped part-way (only under the default handler, so this is a handler
             * replaced since, without signal.signal): never return an incomplete result */
            PyErr_SetNone(PyExc_KeyboardInterrupt);
            return false;
        }
    }
}
