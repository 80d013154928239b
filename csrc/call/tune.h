/*
 * Measured call plans. The model (plan.h) sizes tiles from the cache sizes; where a call is
 * long enough for it to matter, the plan is measured instead, across calls, once per stencil,
 * domain, layout and thread count: never by running the kernel twice in one call (a stencil
 * may update a field in place). For a key seen for the first time:
 *   calls 1, 2      the model's plan (a warm-up; the faster kernel time decides how: a call of
 *                   TUNE_MIN_SECONDS or more measures each candidate once, a shorter one
 *                   each over as many calls as make up that time (at most TUNE_MAX_REPEATS,
 *                   the fastest counts), and one under TUNE_FLOOR_SECONDS keeps the model's
 *                   plan: "too short to tune")
 *   calls 2..N+1    each one candidate plan: the model's, the tile's area halved and
 *                   doubled, its aspect changed both ways, whole rows of I, (C order,
 *                   column groups) the fastest tile so far with the column blocks toggled,
 *                   and (outputs beyond the L2 caches) the fastest so far with streaming
 *                   stores toggled
 *   2 more calls    the fastest candidate and the model's plan once more, when the fastest is
 *                   not the model's
 * then the fastest (by the lower of its measurements) is kept if it beats the model's by more
 * than TUNE_NOISE, else the model's plan. At most 9 + 2 = 11 measurements after the warm-up
 * (of 8 calls each at most: 90 calls in all, under 2 ms each, for the shortest tuned calls;
 * 13 for a call of 2 ms or more). Every candidate
 * computes the same bits: tiles and blocks only change the order of independent work, and
 * streaming only how a store reaches memory.
 *
 * The result is kept per stencil in memory and, when the stencil has an entry in the disk
 * cache, in that entry's directory (`plans.txt`, keyed also by the machine: CPU model, cache
 * sizes and vector width), so that a later process uses it from its first call.
 *
 * Every function runs with the GIL held, which serialises the tables; only a call holding the
 * stencil's cached plan (call.c's plan_busy) advances tuning, others run the current best.
 */
#ifndef GT_TUNE_H
#define GT_TUNE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "backend/cpu/codegen.h"
#include "call/plan.h"
#include "ir/ir.h"

enum { TUNE_MAX_CANDIDATES = 9, TUNE_WHY_LEN = 512 };

typedef struct TuneCandidate {
    int64_t ti, tj, block_cols;
    bool stream;       /* streaming stores (backend/cpu/stream.h) */
    double seconds[2]; /* kernel time of each measurement */
    int measured;      /* how many of seconds[] hold one */
} TuneCandidate;

typedef enum {
    TUNE_FIXED,    /* nothing to tune: one candidate, an override, or GTSCRIPT_AUTOTUNE=0 */
    TUNE_RUNNING,  /* tuning calls under way */
    TUNE_SHORT,    /* the warm-up was under the threshold: the model's plan */
    TUNE_MEASURED, /* tuned by this process */
    TUNE_DISK,     /* a measurement recorded on disk for this machine */
} TuneState;

/* What the tuner knows of one key (domain, layout class, shared memory, threads). */
typedef struct TuneRecord {
    int64_t domain[3];
    CpuLayout layout;
    bool shared;
    int threads;
    unsigned serial;         /* distinguishes records made at different times */
    unsigned long long used; /* for least-recently-used replacement */
    TuneState state;
    PlanChoice model;
    int ncand;
    TuneCandidate cand[TUNE_MAX_CANDIDATES];
    int blocks_cand; /* the candidate with the model's column blocks toggled (its tile is the
                        fastest measured before it), or -1 */
    int stream_cand; /* the candidate with the model's streaming toggled (its tile and blocks
                        the fastest measured before it), or -1 */
    int step;        /* 0 the warm-up, then one candidate's measurement each */
    int finalist;    /* the first round's fastest, measured again (-1: not known yet) */
    int chosen;      /* TUNE_MEASURED, TUNE_DISK: the candidate kept */
    int discards;    /* measurements not used (the run did not have its threads) */
    int repeats;     /* calls per measurement (1, more for a call under TUNE_MIN_SECONDS) */
    int rep;         /* calls of the current measurement made */
    double rep_best; /* the fastest of them */
    int calls;       /* tuning calls measured */
    double warmup_seconds;
    double min_seconds; /* the threshold the warm-up was compared with */
} TuneRecord;

/* One call's dealings with the tuner, on the call's stack. */
typedef struct TuneCall {
    PlanChoice choice; /* the plan this call runs */
    unsigned serial;   /* its key's record, 0: none */
    int step;          /* the tuning step this call measures, -1: none */
    bool measured;     /* tune_end used this call's time */
    int rep;           /* which call of its measurement it was */
    bool have_snap;
    TuneRecord snap; /* the record after tune_end (for exec_info) */
    char tile_why[TUNE_WHY_LEN], block_why[TUNE_WHY_LEN], stream_why[TUNE_WHY_LEN];
} TuneCall;

typedef struct TuneTable TuneTable;

/* A stencil's table; NULL when out of memory (the caller raises). */
TuneTable *tune_table_new(void);
void tune_table_free(TuneTable *t);

/* Before a run: the plan choice of this call (tc->choice). `slot`: the call holds the
 * stencil's cached plan, and only then measures; `fresh`: a plan is made for this call
 * anyway (the environment's overrides are read again, as plan_new always did). Never fails:
 * without memory, or with t NULL, the model's choice. */
void tune_begin(TuneTable *t, const Stencil *st, const char *cache_key, const int64_t domain[3],
                CpuVariant variant, bool slot, bool fresh, TuneCall *tc);

/* After a complete run: its kernel time in seconds; `clean` when it had the plan's threads to
 * itself (else the measurement is not used, a few times at most). Stores a finished result on
 * disk. With `snapshot`, keeps the record in tc for tune_info. Never fails. */
void tune_end(TuneTable *t, const char *cache_key, TuneCall *tc, double seconds, bool clean,
              bool snapshot);

/* For exec_info["plan"]: why the call's tile, column blocks and streaming were what they were
 * (the plan's own reasons, or the tuner's: the whys point into tc or p), and the "tuning"
 * entry (a new reference: a dict, or None). NULL with an exception set. */
PyObject *tune_info(TuneCall *tc, const struct Plan *p, const char **tile_why,
                    const char **block_why, const char **stream_why);

#endif
