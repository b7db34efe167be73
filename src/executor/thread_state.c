/* The per-thread state every area reads (thread_state.h). Outside any
 * region a thread is participant 0 of 1. */
#include "thread_state.h"

__thread cpuexec__thread_state cpuexec__tls = {.participant_count = 1};
