/* The permit model's facts that are not fields, and its rules that are not
 * inline (permit.h). */
#include "permit.h"

#include "os/os.h"

#if CPUEXEC_TEST_HOOKS
_Atomic(cpuexec__permit_fact_fn) cpuexec__test_permit_clock;
_Atomic(cpuexec__permit_fact_fn) cpuexec__test_permit_preemptions;
_Atomic bool cpuexec__test_permit_no_gap_lessons;
cpuexec__test_gauge cpuexec__test_permit_running;
cpuexec__test_gauge cpuexec__test_permit_spinning;
#endif

uint64_t cpuexec__permit_now_ns(void) {
  cpuexec__permit_fact_fn fake = CPUEXEC__TEST_HOOK(cpuexec__test_permit_clock, NULL);
  return fake ? fake() : cpuexec__os_now_ns();
}

uint64_t cpuexec__permit_preemptions(void) {
  cpuexec__permit_fact_fn fake = CPUEXEC__TEST_HOOK(cpuexec__test_permit_preemptions, NULL);
  return fake ? fake() : cpuexec__os_thread_preemptions();
}

void cpuexec__permit_init(cpuexec__permit *p, uint32_t threads, uint32_t processors) {
  p->threads = threads;
  p->processors = processors;
  p->adaptive = false;
  p->strict_policy = false;
  p->placed_caller = false;
  p->first_worker_cpu = -1;
  atomic_init(&p->side, 0);
  atomic_init(&p->last_arrival_ns, 0);
  atomic_init(&p->strict_running, 0);
  p->lane0_arrivals_seen = 0;
}

/* Each thread's own look at its preemptions (permit.h, crowded lately). */
static __thread cpuexec__permit_thread this_thread;

bool cpuexec__permit_may_spin_long(uint64_t now_ns) {
  return !cpuexec__permit_crowded_lately(&this_thread, cpuexec__permit_preemptions(), now_ns);
}

void cpuexec__permit_note_wait(cpuexec__permit_worker *w, uint64_t spin_ns, uint64_t waited_ns, bool slept) {
  if (CPUEXEC__TEST_HOOK(cpuexec__test_permit_no_gap_lessons, false)) return;
  if (waited_ns > CPUEXEC__GAP_SPIN_MAX_NS) {
    /* An idle spell: whatever was learnt spun for nothing. */
    w->gap_spin_ns = 0;
    w->waits_since_gap = 0;
    return;
  }
  if (waited_ns > spin_ns) {
    if (slept) {
      uint64_t lesson = waited_ns + waited_ns / 2;
      if (lesson > CPUEXEC__GAP_SPIN_MAX_NS) lesson = CPUEXEC__GAP_SPIN_MAX_NS;
      if (lesson > w->gap_spin_ns) w->gap_spin_ns = lesson;
    }
    w->waits_since_gap = 0; /* parked through such a gap, or spun through it: it recurs */
    return;
  }
  if (w->gap_spin_ns != 0 && ++w->waits_since_gap > CPUEXEC__GAP_SPIN_MEMORY_WAITS) {
    w->gap_spin_ns = 0;
    w->waits_since_gap = 0;
  }
}
