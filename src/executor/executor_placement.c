/* Does a running pool still have the placement it was resolved with? The
 * registry asks before it hands out another lease of a pinned pool
 * (cpuexec/topology.h, "CPU set changes"; seed 000 S000-111).
 *
 * When the process CPU set shrinks (`taskset -a -p`, a cgroup cpuset
 * resize) the kernel moves every thread pinned outside it into the new
 * set: the worker keeps running, unpinned, and the pool no longer does what
 * its sharing key says. That is refused, naming the processor. When the
 * processor is usable again but the worker's set is wider (moved, then the
 * set grew back), the worker is pinned again and the lease goes ahead.
 * A backend that cannot read a thread's affinity (os.h) checks nothing. */
#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "executor_internal.h"
#include "os/os.h"

int cpuexec__executor_check_placement(struct cpuexec_executor *exec) {
  const cpuexec_resolved *r = exec->resolved;
  for (uint32_t k = 0; k < exec->worker_count && k < r->worker_processor_count; k++) {
    int32_t cpu = r->worker_processors[k];
    if (cpu < 0 || cpu >= CPUEXEC__OS_CPUS_MAX) continue;
    cpuexec__os_cpus set;
    if (!cpuexec__os_thread_cpus(exec->workers[k].thread, &set)) continue;
    if (!cpuexec__os_cpus_has(&set, cpu))
      return cpuexec__fail(CPUEXEC_EAFFINITY,
                           "executor %llu: processor %d of worker %u left the process CPU set after the pool "
                           "started; release its leases and resolve the policy again",
                           (unsigned long long)exec->id, (int)cpu, (unsigned)k + 1);
    if (cpuexec__os_cpus_count(&set) == 1) continue;
    int rc = cpuexec__os_pin_thread(exec->workers[k].thread, cpu);
    if (rc != 0)
      return cpuexec__fail(CPUEXEC_EAFFINITY,
                           "executor %llu: worker %u lost its pin and processor %d could not be applied again (%s)",
                           (unsigned long long)exec->id, (unsigned)k + 1, (int)cpu, strerror(rc));
  }
  return 0;
}
