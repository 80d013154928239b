#include "call/threads_abi.h"

#include "call/pool.h"

int gtscript_get_num_threads(void) {
    return pool_threads();
}

void gtscript_set_num_threads(int n) {
    pool_set_threads(n);
}
