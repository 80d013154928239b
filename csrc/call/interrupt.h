/*
 * Ctrl-C during a call. Kernels run with the GIL released, so Python's own SIGINT handling
 * (a flag that the interpreter looks at between bytecodes) cannot reach them. While a call
 * runs, a SIGINT handler chained in front of Python's counts the signals (an atomic counter:
 * async-signal-safe) and then calls Python's handler, which records the signal as usual (it
 * is installed by the first call of several tiles and stays, checked at most every 100 ms,
 * so that calls stay cheap: interrupt.c). The
 * tile loops compare the counter with the value they started from and stop taking tiles when
 * it moved; the caller then takes the GIL back and lets Python run its handler
 * (PyErr_CheckSignals): KeyboardInterrupt (or whatever the handler raises) ends the call,
 * otherwise (a handler that does not raise, or a call outside the main thread, where Python
 * runs no handlers) the remaining tiles run and the result is complete.
 * Kernels also look at the counter inside `while` loops (every few ten thousand iterations:
 * codegen.c), where a single point may never finish: when it moved, the kernel stops where
 * it is and the call raises. That point cannot be resumed, so loops watch the counter only
 * where Ctrl-C is sure to end the call: Python's handler is the default one (it raises
 * KeyboardInterrupt) and the call runs in the main thread (interrupt_loop_counter).
 * Nothing is installed when Python handles no SIGINT (SIG_DFL or SIG_IGN): the signal then
 * acts as it would without gtscript.
 */
#ifndef GT_INTERRUPT_H
#define GT_INTERRUPT_H

#include <stdbool.h>

/* With the GIL held, before releasing it: starts watching (nested and concurrent calls share
 * one handler). Returns the counter's value to compare against. */
unsigned long interrupt_arm(void);
/* With the GIL held, after the kernels stopped: stops watching (the handler stays). */
void interrupt_disarm(void);
/* Has a SIGINT arrived since `mark`? Any thread, without the GIL. */
bool interrupt_since(unsigned long mark);
/* The current counter value (any thread). */
unsigned long interrupt_mark(void);

/* With the GIL held, after interrupt_arm: the counter kernels watch inside while loops: the
 * SIGINT counter where a Ctrl-C ends the call, else `mark` itself (equal to itself: loops
 * never stop). */
const unsigned long *interrupt_loop_counter(const unsigned long *mark);

/* What is left of a run: nothing, tiles that can still run, or a tile stopped part-way
 * inside a while loop (the call cannot complete). */
typedef enum { RUN_DONE, RUN_RESUME, RUN_BROKEN } RunState;

/* Runs task on the thread pool (pool.h) with the GIL released, watching for SIGINT: the
 * task polls interrupt_since(*mark) between units of work and returns early when it is true.
 * *loop_counter is set to interrupt_loop_counter(mark) for the kernels' while loops.
 * Then, with the GIL back, while unfinished(ctx): Python's handlers run (false with their
 * exception set, KeyboardInterrupt by default) or, if they raise nothing, the task runs again
 * from where it stopped (RUN_RESUME) or the call raises KeyboardInterrupt (RUN_BROKEN). The
 * caller holds the GIL. *workers: the threads that took part, summed over the runs. */
bool interrupt_run(void (*task)(void *ctx, int worker), void *ctx, int nthreads,
                   unsigned long *mark, const unsigned long **loop_counter,
                   RunState (*unfinished)(void *ctx), int *workers);

#endif
