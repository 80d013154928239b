#include "call/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;   /* guards everything below */
    pthread_cond_t wake;    /* a new job (or generation) is posted */
    pthread_cond_t done;    /* a worker finished its share */
    pthread_mutex_t busy;   /* held by the caller running a job */
    int nthreads;           /* configured size, 0 = not read yet (also read without the lock) */
    int started;            /* worker threads running (not counting callers) */
    unsigned long generation;
    PoolTask task;
    void *ctx;
    int active;             /* workers that take part in the current job */
    int pending;            /* workers of the current job still running */
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
       PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, NULL, NULL, 0, 0};

/* After fork() only the forking thread exists in the child: forget the workers. */
static void after_fork_child(void) {
    pthread_mutex_init(&P.lock, NULL);
    pthread_mutex_init(&P.busy, NULL);
    pthread_cond_init(&P.wake, NULL);
    pthread_cond_init(&P.done, NULL);
    P.started = 0;
    P.pending = 0;
}

static int read_size(void) {
    const char *env = getenv("GTSCRIPT_NUM_THREADS");
    if (env && *env) {
        long n = strtol(env, NULL, 10); /* saturates where atoi's overflow is undefined */
        if (n >= 1) return n < POOL_MAX ? (int)n : POOL_MAX;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n >= 1) return n < POOL_MAX ? n : POOL_MAX;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (n < POOL_MAX ? (int)n : POOL_MAX) : 1;
}

/* Reads the configured size on the first use; with P.lock held. */
static void configure_locked(void) {
    if (P.nthreads == 0) {
        __atomic_store_n(&P.nthreads, read_size(), __ATOMIC_RELEASE);
        pthread_atfork(NULL, NULL, after_fork_child);
    }
}

int pool_threads(void) {
    int n = __atomic_load_n(&P.nthreads, __ATOMIC_ACQUIRE); /* each call asks: keep it cheap */
    if (n > 0) return n;
    pthread_mutex_lock(&P.lock);
    configure_locked();
    n = P.nthreads;
    pthread_mutex_unlock(&P.lock);
    return n;
}

void pool_set_threads(int n) {
    n = n < 1 ? 1 : n > POOL_MAX ? POOL_MAX : n;
    pthread_mutex_lock(&P.lock);
    configure_locked(); /* registers the fork handler once, as a first read does */
    __atomic_store_n(&P.nthreads, n, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&P.lock);
}

static void *worker_main(void *arg) {
    int id = (int)(long)arg; /* 1 .. nthreads-1 */
    unsigned long seen = 0;
    pthread_mutex_lock(&P.lock);
    for (;;) {
        while (P.generation == seen) pthread_cond_wait(&P.wake, &P.lock);
        seen = P.generation;
        if (id >= P.active) continue;
        PoolTask task = P.task;
        void *ctx = P.ctx;
        pthread_mutex_unlock(&P.lock);
        task(ctx, id);
        pthread_mutex_lock(&P.lock);
        if (--P.pending == 0) pthread_cond_signal(&P.done);
    }
    return NULL;
}

/* Starts workers up to n - 1 (the caller is worker 0); returns how many threads can run. */
static int ensure_workers(int n) {
    while (P.started < n - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker_main, (void *)(long)(P.started + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0) break;
        P.started++;
    }
    return P.started + 1 < n ? P.started + 1 : n;
}

int pool_run(PoolTask task, void *ctx, int nthreads) {
    if (nthreads > POOL_MAX) nthreads = POOL_MAX;
    if (nthreads <= 1 || pthread_mutex_trylock(&P.busy) != 0) {
        task(ctx, 0);
        return 1;
    }
    pthread_mutex_lock(&P.lock);
    int n = ensure_workers(nthreads);
    P.task = task;
    P.ctx = ctx;
    P.active = n;
    P.pending = n - 1;
    P.generation++;
    pthread_cond_broadcast(&P.wake);
    pthread_mutex_unlock(&P.lock);

    task(ctx, 0);

    pthread_mutex_lock(&P.lock);
    while (P.pending > 0) pthread_cond_wait(&P.done, &P.lock);
    P.task = NULL;
    P.ctx = NULL;
    pthread_mutex_unlock(&P.lock);
    pthread_mutex_unlock(&P.busy);
    return n;
}
