/* Does a pool still have the placement it was resolved with? Pinning the
 * workers at creation, the registry's check before it hands out another
 * lease of a pinned pool, and the caller's pin under an explicit policy
 * (cpuexec/topology.h, "CPU set changes"; cpuexec/executor.h, "The
 * caller's placement"; doc/cpu-set-changes.md; seed 000 S000-111).
 *
 * When the process CPU set shrinks (`taskset -a -p`, a cgroup cpuset
 * resize) the kernel moves every thread pinned outside it into the new
 * set: the thread keeps running, unpinned, and the pool no longer does what
 * its sharing key says. That is refused, naming the processors. When the
 * processor is usable again but the thread's set is wider (moved, then the
 * set grew back), the thread is pinned again and the call goes ahead.
 * Every processor that failed is named, not only the first, so one message
 * says everything that has to change. A backend that cannot read a
 * thread's affinity (os.h) checks nothing. */
#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "core/strbuf.h"
#include "core/test_hooks.h"
#include "executor_internal.h"
#include "executor_lease.h"
#include "os/os.h"
#include "os/placement_generation.h"

#if CPUEXEC_TEST_HOOKS
_Atomic uint64_t cpuexec__test_pin_refused;
#endif

static int pin(pthread_t thread, int32_t cpu) {
#if CPUEXEC_TEST_HOOKS
  uint64_t refused = atomic_load_explicit(&cpuexec__test_pin_refused, memory_order_relaxed);
  if (cpu >= 0 && cpu < 64 && (refused >> cpu & 1u)) return EINVAL;
#endif
  return cpuexec__os_pin_thread(thread, cpu);
}

int cpuexec__executor_pin_workers(cpuexec_executor *exec, uint32_t threads) {
  const cpuexec_resolved *r = exec->resolved;
  cpuexec__strbuf failed = {0};
  int32_t count = 0, first = -1;
  for (uint32_t k = 1; k < threads; k++) {
    int32_t cpu = r->worker_processors[k - 1];
    int err = pin(exec->workers[k - 1].thread, cpu);
    if (err == ENOTSUP) {
      cpuexec__strbuf_free(&failed);
      return cpuexec__fail(CPUEXEC_ENOTSUP,
                           "worker thread %u: processor %d: the %s OS backend cannot pin threads; resolve "
                           "the policy on this process's topology, or use affinity_policy=none",
                           k, cpu, cpuexec__os_backend());
    }
    if (err == 0) continue;
    cpuexec__strbuf_printf(&failed, "%sprocessor %d (worker thread %u: %s)", count ? ", " : "", cpu, k, strerror(err));
    if (count++ == 0) first = cpu;
  }
  if (count == 0) return 0;
  int rc = failed.failed
               ? cpuexec__fail(CPUEXEC_EAFFINITY, "%d worker pins could not be applied, the first processor %d",
                               count, first)
               : cpuexec__fail(CPUEXEC_EAFFINITY, "%d worker pin%s could not be applied: %s", count,
                               count == 1 ? "" : "s", failed.data);
  cpuexec__strbuf_free(&failed);
  return rc;
}

int cpuexec__executor_check_placement(struct cpuexec_executor *exec) {
  const cpuexec_resolved *r = exec->resolved;
  cpuexec__strbuf left = {0}, lost = {0};
  int32_t nleft = 0, nlost = 0;
  for (uint32_t k = 0; k < exec->worker_count && k < r->worker_processor_count; k++) {
    int32_t cpu = r->worker_processors[k];
    if (cpu < 0 || cpu >= CPUEXEC__OS_CPUS_MAX) continue;
    cpuexec__os_cpus set;
    if (!cpuexec__os_thread_cpus(exec->workers[k].thread, &set)) continue;
    if (!cpuexec__os_cpus_has(&set, cpu)) {
      cpuexec__strbuf_printf(&left, "%s%d (worker %u)", nleft++ ? ", " : "", (int)cpu, (unsigned)k + 1);
      continue;
    }
    if (cpuexec__os_cpus_count(&set) == 1) continue;
    int rc = pin(exec->workers[k].thread, cpu);
    if (rc != 0)
      cpuexec__strbuf_printf(&lost, "%s%d (worker %u: %s)", nlost++ ? ", " : "", (int)cpu, (unsigned)k + 1,
                             strerror(rc));
  }
  int rc = 0;
  if (nleft + nlost > 0) {
    cpuexec__placement_changed();
    if (left.failed || lost.failed)
      rc = cpuexec__fail(CPUEXEC_EAFFINITY, "executor %llu: %d pinned workers moved and %d could not be pinned again",
                         (unsigned long long)exec->id, (int)nleft, (int)nlost);
    else if (nleft > 0)
      rc = cpuexec__fail(CPUEXEC_EAFFINITY,
                         "executor %llu: processor%s %s left the process CPU set after the pool started%s%s; "
                         "release its leases and resolve the policy again",
                         (unsigned long long)exec->id, nleft == 1 ? "" : "s", left.data,
                         nlost ? ", and could not be pinned again: " : "", nlost ? lost.data : "");
    else
      rc = cpuexec__fail(CPUEXEC_EAFFINITY,
                         "executor %llu: lost their pins and could not be pinned again: processor%s %s",
                         (unsigned long long)exec->id, nlost == 1 ? "" : "s", lost.data);
  }
  cpuexec__strbuf_free(&left);
  cpuexec__strbuf_free(&lost);
  return rc;
}

int cpuexec__executor_pin_caller(int32_t cpu, bool recheck) {
  if (recheck) {
    /* This thread was pinned to cpu before: is it still there? */
    cpuexec__os_cpus set;
    if (cpuexec__os_thread_cpus(pthread_self(), &set)) {
      if (!cpuexec__os_cpus_has(&set, cpu)) {
        cpuexec__placement_changed();
        return cpuexec__fail(CPUEXEC_EAFFINITY,
                             "caller affinity: processor %d left the calling thread's CPU set after the thread "
                             "was pinned there (the process CPU set changed, or its affinity was set by someone "
                             "else); the thread is not moved back: release the session and resolve the policy "
                             "again",
                             cpu);
      }
      if (cpuexec__os_cpus_count(&set) == 1) return 0;
    }
  }
  int rc = pin(pthread_self(), cpu);
  if (rc == ENOTSUP)
    return cpuexec__fail(CPUEXEC_ENOTSUP,
                         "caller affinity: processor %d: the %s OS backend cannot pin threads; resolve the policy "
                         "on this process's topology, or use affinity_policy=none",
                         cpu, cpuexec__os_backend());
  if (rc != 0)
    return cpuexec__fail(CPUEXEC_EAFFINITY,
                         "caller affinity: processor %d could not be applied to the calling thread (%s); "
                         "the process CPU set may have changed since the policy was resolved",
                         cpu, strerror(rc));
  return 0;
}
