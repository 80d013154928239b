#include "call/interrupt.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <signal.h>
#include <string.h>

#include "call/pool.h"

/* Incremented by the handler; read by tile loops on any thread. A lock-free atomic on every
 * platform this builds for, which is what makes it safe in a signal handler. */
static unsigned long sigint_count;
/* Under the GIL: how many calls are watching, and the handler ours replaced. */
static int watchers;
static bool installed;
static struct sigaction previous;

static void on_sigint(int sig, siginfo_t *info, void *uctx) {
    __atomic_fetch_add(&sigint_count, 1, __ATOMIC_SEQ_CST);
    if (previous.sa_flags & SA_SIGINFO)
        previous.sa_sigaction(sig, info, uctx);
    else
        previous.sa_handler(sig); /* only installed in front of a function, never SIG_DFL/IGN */
}

static bool is_function(const struct sigaction *sa) {
    if (sa->sa_flags & SA_SIGINFO) return sa->sa_sigaction != NULL && sa->sa_sigaction != on_sigint;
    return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN && sa->sa_handler != NULL;
}

unsigned long interrupt_arm(void) {
    unsigned long mark = interrupt_mark();
    if (watchers++ > 0) return mark;
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0 || !is_function(&cur)) return mark;
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_sigint;
    ours.sa_mask = cur.sa_mask;
    ours.sa_flags = (cur.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    previous = cur; /* before the handler can run */
    installed = sigaction(SIGINT, &ours, NULL) == 0;
    return mark;
}

void interrupt_disarm(void) {
    if (--watchers > 0 || !installed) return;
    installed = false;
    struct sigaction cur;
    /* Put the previous handler back only if ours is still the one installed. */
    if (sigaction(SIGINT, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
        cur.sa_sigaction == on_sigint)
        sigaction(SIGINT, &previous, NULL);
}

unsigned long interrupt_mark(void) { return __atomic_load_n(&sigint_count, __ATOMIC_SEQ_CST); }

bool interrupt_since(unsigned long mark) { return interrupt_mark() != mark; }

bool interrupt_run(void (*task)(void *ctx, int worker), void *ctx, int nthreads,
                   unsigned long *mark, bool (*unfinished)(void *ctx)) {
    for (;;) {
        *mark = interrupt_arm();
        Py_BEGIN_ALLOW_THREADS pool_run(task, ctx, nthreads);
        Py_END_ALLOW_THREADS interrupt_disarm();
        if (!unfinished(ctx)) return true;
        if (PyErr_CheckSignals() < 0) return false;
    }
}
