/* The node level of the permit model: the process's side of the shared
 * table and of make's jobserver (node_budget.h). */
#include "node_budget.h"

#include <cpuexec/node.h>

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cache_line.h"
#include "core/env.h"
#include "core/error.h"
#include "core/text.h"
#include "jobserver.h"
#include "node_table.h"
#include "os/fork.h"
#include "os/os.h"
#include "topology/cgroup_limits.h"
#include "policy/node_budget_choice.h"

#if CPUEXEC_TEST_HOOKS
_Atomic(const char *) cpuexec__test_node_cgroup_root;
_Atomic uint64_t cpuexec__test_node_reclaim_every_ns;
_Atomic bool cpuexec__test_node_refresh_always;
_Atomic uint64_t cpuexec__test_node_caller_linger_ns;
#endif

enum { MODE_OFF, MODE_OWN, MODE_TABLE };

/* The process's state, made once per fork generation by the first worker
 * that asks (phase: generation << 2 | stage; stage 1 making, 2 made). */
static struct {
  int mode;                   /* MODE_TABLE: a shared table; MODE_OWN: own count (fallback) */
  cpuexec__node_table *table;
  uint32_t tag;               /* this process's slot tag in the table */
  bool host_scope;
  cpuexec__jobserver jobserver;
  bool jobserver_on;
  char path[1100];
  char identity[CPUEXEC__CGROUP_PATH_MAX + 128];
  char source[CPUEXEC__CGROUP_PATH_MAX + 256]; /* where N came from */
  char problem[512];          /* the diagnostic of a refused table or jobserver */
  uint32_t visible;
  /* The quota's throttling counts as the process joined (cgroup_limits.h):
   * the description shows what the kernel counted since. */
  uint64_t periods_at_join, throttled_at_join, throttled_ns_at_join;
} node;
static _Atomic uint64_t phase;
static _Atomic bool exit_registered;
/* The scope the first executor that named one asked for (DEFAULT: none
 * yet); read once, as the state is made. A pool that asked for another
 * scope than the process shares is told in the description (scope_note,
 * once written: state 2). */
static _Atomic int asked_scope;
static char scope_note[256];
static _Atomic int scope_note_state;

/* The callers' side (cpuexec__node_region_admits): the process's entry in
 * the table, for the fork generation that registered it (NULL: no table),
 * and how many of its workers hold a slot now. */
static _Atomic(cpuexec__node_entry *) caller_entry;
static _Atomic uint64_t caller_generation;
static _Atomic uint32_t workers_held;

/* The pools with workers alive in the process and, while they are more
 * than one, how many of its callers run regions now, and how many were
 * inside when a region last found others inside, and when
 * (cpuexec__node_others_running): a line of their own, read by every
 * caller and written only where several pools run. */
static struct {
  alignas(CPUEXEC__LINE) _Atomic uint32_t pools;
  _Atomic uint32_t callers_inside;
  _Atomic uint32_t met;
  _Atomic uint64_t met_ns;
} in_process;

/* The calling worker's permit: held for this fork generation, its slot
 * (-1: none held), the token byte (held_token), and where to look first. */
static __thread bool held;
static __thread uint64_t held_generation;
static __thread int32_t held_slot = -1;
static __thread bool held_token;
static __thread char token_byte;
static __thread uint32_t slot_hint;
static __thread uint32_t gives;

/* make's jobserver is looked for as the library loads, before the program
 * opens anything: a descriptor make closed (a recipe without '+') may be
 * reused by the program's own files later, and must not be mistaken for
 * make's pipe then. */
static int jobserver_found;
static _Atomic bool jobserver_looked;
static char jobserver_problem[400];

static void jobserver_at_load(void) {
  if (atomic_exchange(&jobserver_looked, true)) return;
  jobserver_found = cpuexec__jobserver_open(cpuexec__env_raw("MAKEFLAGS"), &node.jobserver);
  if (jobserver_found < 0) snprintf(jobserver_problem, sizeof jobserver_problem, "%s", cpuexec_error_message());
}

#if defined(__GNUC__) && !defined(_WIN32)
__attribute__((constructor)) static void look_for_jobserver(void) { jobserver_at_load(); }
#endif

static const char *cgroup_root(void) { return CPUEXEC__TEST_HOOK(cpuexec__test_node_cgroup_root, NULL); }

/* The processors the process may run on; where the OS backend cannot say
 * (the portable POSIX one), the processors online: a budget of 1 would
 * leave every region to its caller. */
static uint32_t visible_processors(void) {
  cpuexec__os_cpus set;
  int32_t n = cpuexec__os_process_cpus(&set) ? cpuexec__os_cpus_count(&set) : 0;
#ifdef _SC_NPROCESSORS_ONLN
  if (n <= 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 && online < INT32_MAX ? (int32_t)online : 0;
  }
#endif
  return n > 0 ? (uint32_t)n : 1;
}

/* N now, and what it came from (into node.source when source). */
static uint32_t budget_now(bool describe) {
  if (node.host_scope) {
    if (describe) snprintf(node.source, sizeof node.source, "the host's %u visible processors", node.visible);
    return node.visible;
  }
  cpuexec__cgroup_limits limits;
  /* A file that cannot be read leaves no limit (the reader zeroes them). */
  (void)cpuexec__cgroup_limits_read(cgroup_root(), &limits);
  uint32_t n = cpuexec__cgroup_limits_cpus(&limits, node.visible);
  if (describe) {
    node.periods_at_join = limits.periods;
    node.throttled_at_join = limits.throttled_periods;
    node.throttled_ns_at_join = limits.throttled_ns;
    snprintf(node.identity, sizeof node.identity, "%s", limits.identity);
    if (limits.quota > 0)
      snprintf(node.source, sizeof node.source, "cgroup v%d quota %.3g CPUs (%s)", limits.quota_version, limits.quota,
               limits.quota_file);
    else if (limits.cpuset_count > 0)
      snprintf(node.source, sizeof node.source, "cgroup cpuset of %u processors (%s)", limits.cpuset_count,
               limits.cpuset_file);
    else
      snprintf(node.source, sizeof node.source, "no cgroup limit: the %u visible processors", node.visible);
  }
  return n;
}

static void at_exit(void) {
  uint64_t p = atomic_load(&phase);
  if ((p & 3) != 2 || p >> 2 != cpuexec__fork_generation_now()) return; /* a fork child's copy: nothing held */
  if (node.jobserver_on) cpuexec__jobserver_close(&node.jobserver);
  if (node.mode == MODE_TABLE) cpuexec__node_table_unregister(node.table, node.tag);
}

/* From here on this process's callers claim their implicit slot. */
static void publish_caller_entry(void) {
  atomic_store(&caller_generation, cpuexec__fork_generation_now());
  atomic_store_explicit(&caller_entry, cpuexec__node_table_entry(node.table, node.tag), memory_order_release);
}

/* Reads the variables and opens what they name. */
static void make_state(bool inherited) {
  if (inherited) {
    /* A fork child: the parent's tokens and slots are the parent's. The
     * mapping stays; the child registers anew. */
    atomic_store(&node.jobserver.held, 0);
    if (node.mode == MODE_TABLE) {
      atomic_store(&caller_entry, NULL);
      atomic_store(&workers_held, 0);
      node.tag = cpuexec__node_table_register(node.table);
      if (node.tag == 0) {
        node.mode = MODE_OWN;
        snprintf(node.problem, sizeof node.problem, "node budget: table \"%.400s\" has no free entry", node.path);
      } else {
        publish_caller_entry();
      }
    }
    return;
  }
#ifdef _WIN32
  node.mode = MODE_OFF;
  snprintf(node.problem, sizeof node.problem, "not built for Windows: each process keeps its own count");
  return;
#endif
  /* The fork generation tells a child from its parent (permits, tokens):
   * it moves only once the library's fork handlers are registered. */
  if (cpuexec__fork_init() != 0) {
    node.mode = MODE_OFF;
    snprintf(node.problem, sizeof node.problem, "node budget: off: %s", cpuexec_error_message());
    fprintf(stderr, "libcpuexec: %s\n", node.problem);
    return;
  }
  node.visible = visible_processors();
  bool rc_refused = false;
  /* A policy's scope comes before the variable (cpuexec/policy.h). */
  cpuexec_node_budget choice = (cpuexec_node_budget)atomic_load(&asked_scope);
  const char *from;
  bool understood = true;
  if (choice == CPUEXEC_NODE_BUDGET_DEFAULT) choice = cpuexec__node_budget_from_environment(&from, &understood);
  if (choice == CPUEXEC_NODE_BUDGET_OFF) {
    node.mode = MODE_OFF;
  } else {
    if (!understood) {
      size_t len;
      const char *mode = cpuexec__env_value("CPUEXEC_NODE_BUDGET", &len);
      snprintf(node.problem, sizeof node.problem,
               "CPUEXEC_NODE_BUDGET: \"%.*s\" is not off, on, cgroup or host; using cgroup", (int)len, mode);
      rc_refused = true;
    }
    node.host_scope = choice == CPUEXEC_NODE_BUDGET_HOST;
    uint32_t n = budget_now(true);
    if (node.host_scope) snprintf(node.identity, sizeof node.identity, "host");
    char *dir = cpuexec__env_copy("CPUEXEC_NODE_DIR", NULL);
    int rc = cpuexec__node_table_path(dir != NULL && dir[0] != '\0' ? dir : "/dev/shm", node.identity, node.path,
                                      sizeof node.path);
    free(dir);
    if (rc == 0) rc = cpuexec__node_table_open(node.path, node.identity, n, &node.table);
    if (rc == 0 && (node.tag = cpuexec__node_table_register(node.table)) == 0)
      rc = cpuexec__fail(CPUEXEC_ESTATE, "node budget: table \"%s\" has no free entry", node.path);
    if (rc == 0) {
      node.mode = MODE_TABLE;
      publish_caller_entry();
    } else {
      node.mode = MODE_OWN;
      rc_refused = true;
      size_t used = strlen(node.problem);
      snprintf(node.problem + used, sizeof node.problem - used, "%s%s; the process keeps its own count",
               used ? "; " : "", cpuexec_error_message());
    }
  }
  if (!atomic_load(&jobserver_looked)) jobserver_at_load();
  node.jobserver_on = jobserver_found == 1;
  if (jobserver_found < 0) {
    size_t used = strlen(node.problem);
    snprintf(node.problem + used, sizeof node.problem - used, "%s%s", used ? "; " : "", jobserver_problem);
  }
  /* A refused table is worth a line on stderr (someone else's file, or a
   * corrupted one); a jobserver that is not there is the common case of a
   * program run by make without '+', said by the description only. */
  if (rc_refused) fprintf(stderr, "libcpuexec: %s\n", node.problem);
  if (!atomic_exchange(&exit_registered, true)) atexit(at_exit);
}

/* True once the state of this fork generation is made; false while another
 * thread makes it (the asker gets no permit meanwhile: it parks, and its
 * caller runs its share, so the budget is never exceeded on the way in). */
static bool ready(uint64_t generation) {
  uint64_t p = atomic_load_explicit(&phase, memory_order_acquire);
  if (p == (generation << 2 | 2)) return true;
  if (p >> 2 == generation && (p & 3) == 1) return false;
  bool inherited = (p & 3) != 0 && p >> 2 != generation;
  if (!atomic_compare_exchange_strong(&phase, &p, generation << 2 | 1)) return false;
  make_state(inherited);
  atomic_store_explicit(&phase, generation << 2 | 2, memory_order_release);
  return true;
}

/* ready(), for a thread that must not go on without the state (a caller,
 * the description): while another thread makes it, it yields. The maker
 * waits for nobody (a few file reads, and a table's creator for a bounded
 * number of yields: node_table.h), so this ends. */
static void ready_soon(uint64_t generation) {
  while (!ready(generation)) cpuexec__os_yield();
}

/* Once per interval across the node: whoever moves *after wins the turn. */
static bool turn(_Atomic uint64_t *after, uint64_t every) {
  uint64_t now = cpuexec__os_now_ns(), at = atomic_load_explicit(after, memory_order_relaxed);
  return now >= at && atomic_compare_exchange_strong(after, &at, now + every);
}

static uint64_t caller_linger_ns(void) {
  uint64_t linger = CPUEXEC__TEST_HOOK(cpuexec__test_node_caller_linger_ns, 0);
  return linger ? linger - 1 : CPUEXEC__NODE_CALLER_LINGER_NS;
}

/* A taker that found no slot: the slots of callers gone idle come back,
 * looked for at most once per linger across the node. True when some did. */
static bool release_idle_callers(void) {
  uint64_t linger = caller_linger_ns();
  return (linger == 0 || turn(&node.table->idle_look_after_ns, linger)) &&
         cpuexec__node_table_release_idle_callers(node.table, cpuexec__os_now_ns(), linger) > 0;
}

static int32_t take_slot(void) {
  int32_t s = cpuexec__node_table_take(node.table, node.tag, slot_hint);
  if (s >= 0) return s;
  uint64_t every = CPUEXEC__TEST_HOOK(cpuexec__test_node_reclaim_every_ns, 0);
  bool freed = release_idle_callers();
  if (turn(&node.table->reclaim_after_ns, every ? every - 1 : CPUEXEC__NODE_RECLAIM_EVERY_NS) &&
      cpuexec__node_table_reclaim(node.table) > 0)
    freed = true;
  return freed ? cpuexec__node_table_take(node.table, node.tag, slot_hint) : -1;
}

/* Gives the calling worker's slot back (it holds one of this generation). */
static void give_slot(void) {
  cpuexec__node_table_give(node.table, node.tag, held_slot);
  held_slot = -1;
  atomic_fetch_sub_explicit(&workers_held, 1, memory_order_relaxed);
}

/* The process's entry for its callers, made on first use; NULL: no table. */
static cpuexec__node_entry *callers_entry(void) {
  uint64_t generation = cpuexec__fork_generation_now();
  cpuexec__node_entry *e = atomic_load_explicit(&caller_entry, memory_order_acquire);
  if (e != NULL && atomic_load_explicit(&caller_generation, memory_order_relaxed) == generation) return e;
  ready_soon(generation);
  e = atomic_load_explicit(&caller_entry, memory_order_acquire);
  return e != NULL && atomic_load_explicit(&caller_generation, memory_order_relaxed) == generation ? e : NULL;
}

void cpuexec__node_callers_rest(void) {
  /* Only where the state is made already: a pool that never ran a region
   * does not make the process join the node's table on its way out. */
  cpuexec__node_entry *e = atomic_load_explicit(&caller_entry, memory_order_acquire);
  if (e != NULL && atomic_load_explicit(&caller_generation, memory_order_relaxed) == cpuexec__fork_generation_now())
    cpuexec__node_table_release_caller(node.table, node.tag);
}

/* A worker of this process holds a slot: its tag holds one below the
 * capacity besides its callers' own. */
static bool a_worker_of_ours_holds_a_slot(cpuexec__node_entry *e) {
  uint32_t c = atomic_load_explicit(&e->caller_slot, memory_order_relaxed);
  int32_t callers = c != 0 && c != CPUEXEC__NODE_CALLER_CLAIMING ? (int32_t)(c & ~CPUEXEC__NODE_CALLER_OVER) - 1 : -1;
  return cpuexec__node_table_worker_holds(node.table, node.tag, callers);
}

/* Callers of the process's other pools running as one of its callers
 * opens a region (counted among those inside until its region ends). The
 * clock is read only where the answer depends on it: a caller alone, with
 * no meeting remembered (met_ns 0), has nobody else running whatever the
 * time (one thread calling several pools, as a process that keeps a pool
 * per policy does, pays no clock a region). A meeting older than the
 * settle window is forgotten, unless another caller met meanwhile (its
 * met_ns then differs). */
static uint32_t others_running(uint64_t (*now_ns)(void)) {
  uint32_t inside = atomic_fetch_add_explicit(&in_process.callers_inside, 1, memory_order_relaxed);
  uint64_t met_ns = atomic_load_explicit(&in_process.met_ns, memory_order_relaxed);
  if (inside == 0 && met_ns == 0) return 0;
  uint64_t now = now_ns();
  if (inside > 0) {
    atomic_store_explicit(&in_process.met, inside, memory_order_relaxed);
    atomic_store_explicit(&in_process.met_ns, now, memory_order_relaxed);
    met_ns = now;
  }
  uint32_t others =
      cpuexec__node_others_running(inside, atomic_load_explicit(&in_process.met, memory_order_relaxed), met_ns, now);
  if (others == 0) atomic_compare_exchange_strong_explicit(&in_process.met_ns, &met_ns, 0, memory_order_relaxed,
                                                           memory_order_relaxed);
  return others;
}

uint32_t cpuexec__node_region_admits(uint32_t participants, uint64_t (*now_ns)(void), cpuexec__node_region *region) {
  region->crowded = false;
  region->processes_over = false;
  region->counted = false;
  cpuexec__node_entry *e = callers_entry();
  if (e == NULL) return participants;
  /* Only this process's callers write the beat, and a look needs only to
   * see it move: a plain store, no read-modify-write. */
  atomic_store_explicit(&e->beat, atomic_load_explicit(&e->beat, memory_order_relaxed) + 1, memory_order_relaxed);
  uint32_t claim = atomic_load_explicit(&e->caller_slot, memory_order_relaxed);
  if (claim == 0 || (claim & CPUEXEC__NODE_CALLER_OVER)) cpuexec__node_table_claim_caller(node.table, node.tag);
  /* Callers of this process's other pools running now: each needs a free
   * slot before a worker of this region gets one. */
  uint32_t others = 0;
  if (atomic_load_explicit(&in_process.pools, memory_order_relaxed) > 1) {
    others = others_running(now_ns);
    region->counted = true;
  }
  /* A worker of ours that holds a slot joins; the others ask when they
   * wake. None holding: wake only as many as could take one. */
  if (others == 0 && atomic_load_explicit(&workers_held, memory_order_relaxed) != 0) return participants;
  uint32_t room = cpuexec__node_table_room(node.table, participants - 1 + others);
  if (room <= others && release_idle_callers()) room = cpuexec__node_table_room(node.table, participants - 1 + others);
  /* A worker of ours woken by the last region, late, may take its slot
   * between the look at workers_held above and the count of free slots:
   * it joins (a worker counts in workers_held only once its slot is
   * taken). */
  if (room == 0 && others == 0 && a_worker_of_ours_holds_a_slot(e)) return participants;
  region->processes_over = atomic_load_explicit(&node.table->overflow, memory_order_relaxed) != 0;
  region->crowded = region->processes_over || room < others;
  return room > others ? room - others + 1 : 1;
}

void cpuexec__node_uncount_caller(void) {
  atomic_fetch_sub_explicit(&in_process.callers_inside, 1, memory_order_relaxed);
}

void cpuexec__node_pool_made(void) { atomic_fetch_add_explicit(&in_process.pools, 1, memory_order_relaxed); }

void cpuexec__node_pool_gone(void) { atomic_fetch_sub_explicit(&in_process.pools, 1, memory_order_relaxed); }

static bool permit_refused(const cpuexec__node_counts *counts) {
  if (counts && counts->refused) atomic_fetch_add_explicit(counts->refused, 1, memory_order_relaxed);
  return false;
}

bool cpuexec__node_permit_run(const cpuexec__node_counts *counts) {
  uint64_t generation = cpuexec__fork_generation_now();
  if (held && held_generation == generation) {
    /* A caller over the budget: the slot goes back before this worker
     * joins another region, so the callers' processors are not shared. */
    if (held_slot < 0 || atomic_load_explicit(&node.table->overflow, memory_order_relaxed) == 0) return true;
    cpuexec__node_permit_park();
    return permit_refused(counts);
  }
  held = false;
  held_slot = -1;
  held_token = false;
  if (!ready(generation)) return false; /* another thread makes the state: not a full budget */
  if (node.mode != MODE_TABLE && !node.jobserver_on) return true;
  if (node.mode == MODE_TABLE) {
    int32_t s = take_slot();
    if (s < 0) return permit_refused(counts);
    held_slot = s;
    slot_hint = (uint32_t)s;
    atomic_fetch_add_explicit(&workers_held, 1, memory_order_relaxed);
  }
  if (node.jobserver_on) {
    if (!cpuexec__jobserver_take(&node.jobserver, &token_byte)) {
      if (held_slot >= 0) give_slot();
      return permit_refused(counts);
    }
    held_token = true;
  }
  held = true;
  held_generation = generation;
  if (counts && counts->taken) atomic_fetch_add_explicit(counts->taken, 1, memory_order_relaxed);
  return true;
}

void cpuexec__node_permit_park(void) {
  if (!held) return;
  held = false;
  if (held_generation != cpuexec__fork_generation_now()) return; /* the parent's, not ours */
  if (held_slot >= 0) {
    give_slot();
    /* A park is about to make a system call anyway: the cheapest place to
     * notice a resized cgroup, ten times a second across the node; the clock is
     * read at every CPUEXEC__NODE_REFRESH_LOOK_EVERY-th give only. */
    if (!node.host_scope && (CPUEXEC__TEST_HOOK(cpuexec__test_node_refresh_always, false) ||
                             (++gives % CPUEXEC__NODE_REFRESH_LOOK_EVERY == 0 &&
                              turn(&node.table->refresh_after_ns, CPUEXEC__NODE_REFRESH_EVERY_NS))))
      atomic_store_explicit(&node.table->capacity, budget_now(false), memory_order_relaxed);
  }
  if (held_token) {
    cpuexec__jobserver_give(&node.jobserver, token_byte);
    held_token = false;
  }
}

/* How the cgroup's quota held it back since the process joined, for the
 * description ("" without a quota, or in the host's scope). Read afresh:
 * a description is not on any hot path. */
static void describe_throttling(char *text, size_t size) {
  text[0] = '\0';
  cpuexec__cgroup_limits now;
  if (node.host_scope || cpuexec__cgroup_limits_read(cgroup_root(), &now) != 0 || now.throttle_file[0] == '\0') return;
  /* A count below the one at join: the quota moved to another cgroup. */
  bool same = now.periods >= node.periods_at_join && now.throttled_periods >= node.throttled_at_join &&
              now.throttled_ns >= node.throttled_ns_at_join;
  uint64_t periods = now.periods - (same ? node.periods_at_join : 0);
  uint64_t throttled = now.throttled_periods - (same ? node.throttled_at_join : 0);
  uint64_t ns = now.throttled_ns - (same ? node.throttled_ns_at_join : 0);
  snprintf(text, size, "; the quota throttled the cgroup in %llu of %llu periods since %s (%.1f ms; %s)",
           (unsigned long long)throttled, (unsigned long long)periods,
           same ? "this process joined" : "the cgroup was made", (double)ns / 1e6, now.throttle_file);
}

size_t cpuexec__node_budget_describe(char *buf, size_t size) {
  uint64_t generation = cpuexec__fork_generation_now();
  ready_soon(generation);
  char js[200] = "";
  if (node.jobserver_on)
    snprintf(js, sizeof js, "; make's jobserver (%s) bounds the workers too, %lld tokens held now",
             node.jobserver.auth, (long long)atomic_load(&node.jobserver.held));
  const char *note = atomic_load_explicit(&scope_note_state, memory_order_acquire) == 2 ? scope_note : "";
  int n;
  if (node.mode == MODE_OFF)
    n = snprintf(buf, size, "off (%s)%s%s", node.problem[0] ? node.problem : "CPUEXEC_NODE_BUDGET=off", js, note);
  else if (node.mode == MODE_OWN)
    n = snprintf(buf, size, "the process's own count (%s)%s%s", node.problem, js, note);
  else {
    char holders[1024], throttling[CPUEXEC__CGROUP_PATH_MAX + 200];
    cpuexec__node_table_holders(node.table, holders, sizeof holders);
    describe_throttling(throttling, sizeof throttling);
    n = snprintf(buf, size, "%u CPUs shared by this user's processes in %s, from %s; table %s, %u slots held "
                 "(this process %u)%s%s%s; held by: %s",
                 atomic_load(&node.table->capacity), node.host_scope ? "the whole host" : node.identity,
                 node.source, node.path, cpuexec__node_table_held(node.table, 0),
                 cpuexec__node_table_held(node.table, node.tag), js, throttling, note, holders);
  }
  return n < 0 ? 0 : (size_t)n;
}

cpuexec_node_budget cpuexec__node_scope(void) {
  if ((atomic_load_explicit(&phase, memory_order_acquire) & 3) != 2)
    return (cpuexec_node_budget)atomic_load(&asked_scope);
  if (node.mode != MODE_TABLE) return CPUEXEC_NODE_BUDGET_OFF;
  return node.host_scope ? CPUEXEC_NODE_BUDGET_HOST : CPUEXEC_NODE_BUDGET_CGROUP;
}

void cpuexec__node_ask_scope(cpuexec_node_budget scope) {
  if (scope != CPUEXEC_NODE_BUDGET_CGROUP && scope != CPUEXEC_NODE_BUDGET_HOST) return;
  int none = CPUEXEC_NODE_BUDGET_DEFAULT;
  atomic_compare_exchange_strong(&asked_scope, &none, (int)scope);
  cpuexec_node_budget shared = cpuexec__node_scope();
  if (shared == scope || shared == CPUEXEC_NODE_BUDGET_DEFAULT) return;
  /* The first pool that asked for another scope is told; written once. */
  int idle = 0;
  if (!atomic_compare_exchange_strong(&scope_note_state, &idle, 1)) return;
  snprintf(scope_note, sizeof scope_note,
           "; a pool asked for node_budget=%s, and this process shares %s (a process shares one scope: its first "
           "pool's, else CPUEXEC_NODE_BUDGET's)",
           cpuexec_node_budget_name(scope),
           shared == CPUEXEC_NODE_BUDGET_HOST     ? "the whole host's budget"
           : shared == CPUEXEC_NODE_BUDGET_CGROUP ? "its cgroup's budget"
                                                  : "none (the node budget is off, or its table was refused)");
  atomic_store_explicit(&scope_note_state, 2, memory_order_release);
}

const char *cpuexec__node_budget_table_path(void) { return node.mode == MODE_TABLE ? node.path : ""; }

CPUEXEC_EXPORT int cpuexec_node_budget_describe(char *buf, size_t size) {
  if (buf == NULL && size > 0) return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu; pass a buffer or size 0", size);
  size_t n = cpuexec__node_budget_describe(buf, size);
  return n > INT32_MAX ? INT32_MAX : (int)n;
}
