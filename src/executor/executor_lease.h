/* Internal: the hooks the registry needs on an executor.
 *
 * The executor owns its threads; the registry owns sharing. Each executor
 * carries one lease slot that only the registry reads or writes, under the
 * registry's lock. */
#ifndef CPUEXEC_SRC_EXECUTOR_LEASE_H
#define CPUEXEC_SRC_EXECUTOR_LEASE_H

#include <cpuexec/executor.h>

struct cpuexec_registry;

typedef struct cpuexec__lease_slot {
  struct cpuexec_registry *registry; /* NULL: created by cpuexec_executor_create(), unshared */
  void *entry;                       /* the registry's bookkeeping for this pool */
} cpuexec__lease_slot;

cpuexec__lease_slot *cpuexec__executor_lease_slot(cpuexec_executor *exec);
/* Stops and joins exec's workers and frees it, whoever holds it: only for
 * the registry's finalize (its entry has no lease left) and for the last
 * reference of an unshared executor. */
void cpuexec__executor_free(cpuexec_executor *exec);
/* Adds / drops one reference of an unshared executor (executor.c). */
int cpuexec__executor_ref(cpuexec_executor *exec);
int cpuexec__executor_unref(cpuexec_executor *exec);
/* True when the calling thread runs a region of exec right now (a callback
 * of exec is on its stack): dropping exec's last reference there would
 * stop the pool from inside its own region. */
bool cpuexec__executor_running_here(const cpuexec_executor *exec);

/* 0 when exec's pinned workers still run where it was resolved to run
 * (re-pinning a worker whose set widened); CPUEXEC_EAFFINITY naming every
 * processor that left the process CPU set or could not be pinned again
 * (executor_placement.c). */
int cpuexec__executor_check_placement(cpuexec_executor *exec);

#endif
