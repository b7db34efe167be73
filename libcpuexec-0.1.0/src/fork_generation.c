/* The fork generation: a counter a pthread_atfork child handler bumps, so an
 * executor can tell it was inherited with one load instead of a getpid()
 * system call on every dispatch. */
#include <pthread.h>

#include "executor_internal.h"

_Atomic uint64_t cpuexec__fork_generation = 0;

static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;

static void fork_child(void) { atomic_fetch_add_explicit(&cpuexec__fork_generation, 1, memory_order_relaxed); }

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, fork_child); }

void cpuexec__fork_generation_init(void) { pthread_once(&fork_handler_once, register_fork_handler); }
