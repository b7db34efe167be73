/* Internal: the layout of a resolved policy, shared by resolve.c (which
 * builds it) and the executor, registry and describe code (which read it).
 * Immutable after cpuexec_policy_resolve() returns; shared by reference count so an
 * executor can keep the resolution it runs without copying it. */
#ifndef CPUEXEC_SRC_RESOLVED_H
#define CPUEXEC_SRC_RESOLVED_H

#include <stdatomic.h>

#include <cpuexec/resolve.h>

/* The adaptive spin and the cadence's burn budget: core/tunables.h. */
#include "core/tunables.h"

struct cpuexec_resolved {
  atomic_uint refcount;
  cpuexec_policy request;
  uint32_t effective_threads;
  /* The caller's processor, -1 when the caller is not placed. */
  int32_t caller_processor;
  /* EXPLICIT only: pin the caller to caller_processor at every dispatch. */
  bool pin_caller;
  /* effective_threads - 1 entries when workers are pinned, else NULL/0. */
  int32_t *worker_processors;
  uint32_t worker_processor_count;
  bool uses_smt;
  bool uses_efficiency_cores;
  /* The topology ranks two or more CPU kinds (a hybrid machine): the
   * descriptor's affinity class tells performance-only placements apart. */
  bool kinds_ranked;
  bool allow_nested;
  /* Regions carry the caller's floating-point control state (fpenv.h). */
  bool inherit_fpenv;
  /* Every region waits for every admitted participant (the policy's
   * participation=every_participant; region.c). */
  bool every_participant;
  /* The node budget the executor's threads share (never DEFAULT: the
   * environment's choice filled in), whether the policy named it
   * (node_budget_asked), and where the choice came from. */
  cpuexec_node_budget node_budget;
  bool node_budget_asked;
  const char *node_budget_from;
  cpuexec_resolved_spin spin;
  /* Number of processors visible to the process at resolution time (the
   * adaptive spin parks at once when more threads are runnable). */
  uint32_t visible_processors;
  char **diagnostics;
  size_t diagnostic_count;
  char *sharing_key;
};

/* Frees a resolution no one references (resolved.c). */
void cpuexec__resolved_free(cpuexec_resolved *r);

/* Adds a reference; the matching cpuexec_resolved_destroy() drops it. */
const cpuexec_resolved *cpuexec__resolved_retain(const cpuexec_resolved *resolved);

#endif
