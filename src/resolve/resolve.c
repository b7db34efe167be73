/* Resolution: a requested policy on a topology becomes what will run.
 *
 * The rules (include/cpuexec/resolve.h states them for callers):
 *   threads   explicit request > CPUEXEC_NUM_THREADS > OMP_NUM_THREADS (its
 *             first list element) > the cgroup quota and process CPU set >
 *             the topology (one participant per visible physical core, only
 *             the most performant visible kind when kinds are known). The
 *             quota caps only the topology default, rounded up: ceil(quota),
 *             at least 1 (1.5 CPUs -> 2 participants), because a participant
 *             that gets part of a CPU still finishes its share, while
 *             rounding down would leave part of the quota unused (1.5 -> 1
 *             is serial). With explicit affinity, num_threads 0 is the size
 *             of cpu_set and the environment is not consulted.
 *             CPUEXEC_NUM_THREADS is ours: a malformed value is an error, as
 *             is one a pinning policy cannot place. OMP_NUM_THREADS belongs
 *             to OpenMP: a malformed value is ignored and one above what a
 *             pinning policy can place is capped, each with a diagnostic.
 *   capacity  a pinning policy places at most one participant per visible
 *             core (physical_cores, performance_cores) or per visible
 *             processor (physical_then_smt); more is an error. affinity none
 *             may oversubscribe (a diagnostic says so).
 *   placement none: nothing pinned. physical_cores: the first visible
 *             processor of each core, the most performant kind first where
 *             the topology ranks kinds, hwloc order within a kind.
 *             performance_cores: the same, with a diagnostic when kinds are
 *             unknown. physical_then_smt: every core's first processor,
 *             then every core's second, and so on. explicit: cpu_set[0] is
 *             the caller (pinned at each dispatch), the rest the workers.
 *             Workers take the order minus the caller's core(s) first, and
 *             the caller's core only when nothing else is left. The caller's
 *             core is the core of its binding when someone else pinned it
 *             (it keeps that placement; explicit overrides it), else the
 *             first core of the order, left to the unpinned caller.
 *   sharing   the key holds behaviour only: threads, the pinned caller,
 *             worker processors, spin (adaptive includes the visible count
 *             it compares against), nesting. Serial policies of any affinity
 *             except explicit share a key: they place nothing.
 * Every input taken or ignored is a diagnostic. Output depends only on the
 * request, topology, environment and (for this process's topology) the
 * calling thread's binding, so the same input gives the same bytes. */
#include "resolved.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/cpulist.h"
#include "core/env.h"
#include "core/text.h"
#include "core/error.h"
#include "os/os.h"
#include "policy/policy_check.h"
#include "core/strbuf.h"
#include "topology/topology_internal.h"
#include "policy/node_budget_choice.h"

/* Collects diagnostics; an allocation failure is sticky. */
typedef struct diag_list {
  char **items;
  size_t count;
  bool failed;
} diag_list;

__attribute__((format(CPUEXEC_PRINTF_FORMAT, 2, 3))) static void diag(diag_list *d, const char *format, ...) {
  if (d->failed)
    return;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  char **items = realloc(d->items, (d->count + 1) * sizeof *items);
  char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (items != NULL)
    d->items = items;
  if (items == NULL || text == NULL) {
    free(text);
    d->failed = true;
    return;
  }
  va_start(args, format);
  vsnprintf(text, (size_t)n + 1, format, args);
  va_end(args);
  d->items[d->count++] = text;
}

static void diag_free(diag_list *d) {
  for (size_t i = 0; i < d->count; i++)
    free(d->items[i]);
  free(d->items);
}

/* A strict non-negative decimal, surrounding blanks allowed (core/text.h);
 * -1 when text is not one, -2 when it is one above INT32_MAX. */
static long long parse_count(const char *text, size_t len) {
  while (len > 0 && cpuexec__text_blank(*text))
    text++, len--;
  while (len > 0 && cpuexec__text_blank(text[len - 1]))
    len--;
  if (len == 0)
    return -1;
  long long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9')
      return -1;
    if (v <= INT32_MAX)
      v = v * 10 + (text[i] - '0');
  }
  return v > INT32_MAX ? -2 : v;
}

enum thread_source { FROM_REQUEST, FROM_SET, FROM_CPUEXEC_ENV, FROM_OMP_ENV, FROM_TOPOLOGY };

static bool pinning(cpuexec_affinity_policy a) {
  return a == CPUEXEC_AFFINITY_PHYSICAL_CORES || a == CPUEXEC_AFFINITY_PERFORMANCE_CORES ||
         a == CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT;
}

/* Step by step through the precedence; *source says which step decided. */
static int choose_threads(const cpuexec_policy *req, const cpuexec_topology *t, diag_list *d, uint32_t *threads,
                          enum thread_source *source) {
  /* Read as set (messages quote them so); parse_count applies the blanks rule. */
  const char *cpuexec_env = cpuexec__env_raw("CPUEXEC_NUM_THREADS");
  const char *omp_env = cpuexec__env_raw("OMP_NUM_THREADS");
  if (req->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT) {
    if (req->num_threads == 0) {
      *threads = req->cpu_set_count;
      *source = FROM_SET;
      diag(d, "num_threads: 0 with explicit affinity takes the %d processors of cpu_set", (int)req->cpu_set_count);
    } else if (req->num_threads != req->cpu_set_count) {
      return cpuexec__fail(CPUEXEC_EINVAL,
                           "num_threads: %d does not match the %d processor(s) of the explicit cpu_set; "
                           "give one processor per participant (the caller first) or num_threads=0",
                           req->num_threads, req->cpu_set_count);
    } else {
      *threads = (uint32_t)req->num_threads;
      *source = FROM_REQUEST;
      diag(d, "num_threads: %d requested", req->num_threads);
    }
  } else if (req->num_threads > 0) {
    *threads = (uint32_t)req->num_threads;
    *source = FROM_REQUEST;
    diag(d, "num_threads: %d requested", req->num_threads);
  }
  if (req->num_threads > 0 || req->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT) {
    if (cpuexec_env != NULL)
      diag(d, "CPUEXEC_NUM_THREADS=%s ignored: the request sets the thread count", cpuexec_env);
    if (omp_env != NULL)
      diag(d, "OMP_NUM_THREADS=%s ignored: the request sets the thread count", omp_env);
    return 0;
  }

  if (cpuexec_env != NULL) {
    long long v = parse_count(cpuexec_env, strlen(cpuexec_env));
    if (v == -2)
      return cpuexec__fail(CPUEXEC_EINVAL,
                           "CPUEXEC_NUM_THREADS: \"%s\" is too large; at most %d participants, 0 for the "
                           "topology default",
                           cpuexec_env, INT32_MAX);
    if (v < 0)
      return cpuexec__fail(CPUEXEC_EINVAL,
                           "CPUEXEC_NUM_THREADS: \"%s\" is not a thread count; use a decimal number, 0 for the "
                           "topology default",
                           cpuexec_env);
    if (v > 0) {
      *threads = (uint32_t)v;
      *source = FROM_CPUEXEC_ENV;
      diag(d, "num_threads: 0 requested; CPUEXEC_NUM_THREADS=%s sets %lld", cpuexec_env, v);
      if (omp_env != NULL)
        diag(d, "OMP_NUM_THREADS=%s ignored: CPUEXEC_NUM_THREADS takes precedence", omp_env);
      return 0;
    }
    diag(d, "CPUEXEC_NUM_THREADS=0 asks for the default; looking further");
  }
  if (omp_env != NULL) {
    size_t first = strcspn(omp_env, ",");
    long long v = parse_count(omp_env, first);
    if (v > 0) {
      *threads = (uint32_t)v;
      *source = FROM_OMP_ENV;
      diag(d, "num_threads: 0 requested; OMP_NUM_THREADS=%s sets %lld", omp_env, v);
      return 0;
    }
    diag(d, "OMP_NUM_THREADS=%s ignored: its first element is not a positive decimal count", omp_env);
  }

  *source = FROM_TOPOLOGY;
  uint32_t cores = cpuexec_topology_performance_core_count(t);
  if (t->kinds_ranked && cores != t->core_count)
    diag(d, "num_threads: 0 requested; topology default %u (the performance cores of %u visible physical cores)",
         cores, t->core_count);
  else
    diag(d, "num_threads: 0 requested; topology default %u (one per visible physical core)", cores);
  if (t->processor_count < t->machine_processors)
    diag(d, "process CPU set: %u of the machine's %u processors are visible", t->processor_count,
         t->machine_processors);
  *threads = cores;
  if (t->cpu_quota > 0) {
    /* Compared as doubles first, so a huge quota never overflows the cast. */
    uint32_t cap = ceil(t->cpu_quota) < *threads ? (uint32_t)ceil(t->cpu_quota) : *threads;
    if (cap < 1)
      cap = 1;
    if (cap < *threads) {
      diag(d, "cgroup quota %.3g CPUs (%s) caps the default at %u (rounded up)", t->cpu_quota,
           t->quota_source != NULL ? t->quota_source : "option", cap);
      *threads = cap;
    } else {
      diag(d, "cgroup quota %.3g CPUs (%s) allows the default of %u", t->cpu_quota,
           t->quota_source != NULL ? t->quota_source : "option", *threads);
    }
  }
  if (*threads == 0)
    *threads = 1;
  return 0;
}

/* The thread count a pinning policy can place: cores or processors. */
static int check_capacity(const cpuexec_policy *req, const cpuexec_topology *t, enum thread_source source,
                          diag_list *d, uint32_t *threads) {
  if (!pinning(req->affinity_policy))
    return 0;
  bool smt = req->affinity_policy == CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT;
  uint32_t capacity = smt ? t->processor_count : t->core_count;
  const char *what = smt ? "logical processors" : "physical cores";
  if (*threads <= capacity)
    return 0;
  if (source == FROM_OMP_ENV) {
    diag(d, "OMP_NUM_THREADS asks for %u but affinity_policy=%s can place %u on the visible %s; using %u", *threads,
         cpuexec_affinity_policy_name(req->affinity_policy), capacity, what, capacity);
    *threads = capacity;
    return 0;
  }
  return cpuexec__fail(CPUEXEC_EINVAL,
                       "%s: %u threads exceed the %u %s visible to the process for affinity_policy=%s; "
                       "ask for at most %u, or use affinity_policy=none",
                       source == FROM_CPUEXEC_ENV ? "CPUEXEC_NUM_THREADS" : "num_threads", *threads, capacity, what,
                       cpuexec_affinity_policy_name(req->affinity_policy), capacity);
}

static int check_explicit_set(const cpuexec_policy *req, const cpuexec_topology *t) {
  for (int32_t i = 0; i < req->cpu_set_count; i++) {
    if (cpuexec__topology_find(t, req->cpu_set[i]) != NULL)
      continue;
    int32_t *ids = malloc(t->processor_count * sizeof *ids);
    char *visible = NULL;
    if (ids != NULL) {
      for (uint32_t k = 0; k < t->processor_count; k++)
        ids[k] = t->processors[k].os_index;
      size_t len = cpuexec__cpulist_format(ids, t->processor_count, NULL, 0);
      visible = malloc(len + 1);
      if (visible != NULL)
        cpuexec__cpulist_format(ids, t->processor_count, visible, len + 1);
    }
    int rc = cpuexec__fail(CPUEXEC_EINVAL, "cpu_set: processor %d is not visible to the process (visible: %s)",
                           (int)req->cpu_set[i], visible != NULL ? visible : "?");
    free(ids);
    free(visible);
    return rc;
  }
  return 0;
}

static int compare_id(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The calling thread's binding as visible processors, when it is narrower
 * than the process-visible set (someone pinned it). Returns the count. */
static uint32_t caller_binding(const cpuexec_topology *t, const cpuexec__processor **out, uint32_t max) {
  uint32_t n = 0;
  if (t->live) {
    int32_t ids[CPUEXEC_CPU_SET_MAX];
    int32_t count = cpuexec__os_affinity_self(ids, CPUEXEC_CPU_SET_MAX);
    if (count > CPUEXEC_CPU_SET_MAX)
      count = CPUEXEC_CPU_SET_MAX;
    for (uint32_t i = 0; i < t->processor_count && n < max; i++) {
      int32_t id = t->processors[i].os_index;
      if (count > 0 && bsearch(&id, ids, (size_t)count, sizeof *ids, compare_id) != NULL)
        out[n++] = &t->processors[i];
    }
  } else {
    for (uint32_t i = 0; i < t->caller_binding_count && n < max; i++) {
      const cpuexec__processor *p = cpuexec__topology_find(t, t->caller_binding[i]);
      if (p != NULL)
        out[n++] = p;
    }
  }
  return n < t->processor_count ? n : 0;
}

/* Placement order of a pinning policy, into order[]; returns its length. */
static uint32_t placement_order(const cpuexec_policy *req, const cpuexec_topology *t, diag_list *d,
                                const cpuexec__processor **order) {
  uint32_t n = 0;
  switch (req->affinity_policy) {
  case CPUEXEC_AFFINITY_PHYSICAL_CORES:
  case CPUEXEC_AFFINITY_PERFORMANCE_CORES:
    /* Both prefer performance cores where the topology ranks kinds (seed
     * 000: one processor per physical core, performance cores first);
     * performance_cores also says when it cannot. */
    if (!t->kinds_ranked && req->affinity_policy == CPUEXEC_AFFINITY_PERFORMANCE_CORES) {
      diag(d, "affinity_policy=performance_cores: the topology reports no ranked CPU kinds; placing as "
              "physical_cores");
    }
    /* Stable by kind rank: most performant kind first, hwloc order within;
     * processors hwloc left out of every kind come last. */
    for (int32_t rank = 0; t->kinds_ranked && rank < (int32_t)t->kind_count; rank++)
      for (uint32_t i = 0; i < t->processor_count; i++)
        if (t->processors[i].sibling == 0 && t->processors[i].kind_rank == rank)
          order[n++] = &t->processors[i];
    for (uint32_t i = 0; i < t->processor_count; i++)
      if (t->processors[i].sibling == 0 && (!t->kinds_ranked || t->processors[i].kind_rank < 0))
        order[n++] = &t->processors[i];
    break;
  case CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT:
    for (uint32_t s = 0; s < t->smt_max; s++)
      for (uint32_t i = 0; i < t->processor_count; i++)
        if (t->processors[i].sibling == s)
          order[n++] = &t->processors[i];
    break;
  default:
    break;
  }
  return n;
}

static void count_participant(const cpuexec_topology *t, const cpuexec__processor *p, uint32_t *per_core,
                              cpuexec_resolved *r) {
  per_core[p->core]++;
  r->uses_efficiency_cores |= t->kinds_ranked && p->kind_rank > 0;
}

typedef struct placement {
  int32_t caller;
  bool pin_caller;
  int32_t *workers; /* threads - 1 entries or NULL */
  uint32_t worker_count;
} placement;

static int place(const cpuexec_policy *req, const cpuexec_topology *t, uint32_t threads, diag_list *d,
                 placement *pl, cpuexec_resolved *r) {
  pl->caller = -1;
  const cpuexec__processor **bound = calloc(t->processor_count, sizeof *bound);
  const cpuexec__processor **order = calloc(t->processor_count, sizeof *order);
  bool *caller_core = calloc(t->core_count, sizeof *caller_core);
  uint32_t *per_core = calloc(t->core_count, sizeof *per_core);
  int rc = CPUEXEC_ENOMEM;
  if (bound == NULL || order == NULL || caller_core == NULL || per_core == NULL)
    goto out;
  const cpuexec__processor *caller_home = NULL;
  bool explicit_set = req->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT;
  uint32_t nbound = caller_binding(t, bound, t->processor_count);
  if (nbound > 0) {
    int32_t *ids = malloc(nbound * sizeof *ids);
    char list[256] = "?";
    if (ids != NULL) {
      for (uint32_t i = 0; i < nbound; i++)
        ids[i] = bound[i]->os_index;
      cpuexec__cpulist_format(ids, nbound, list, sizeof list);
      free(ids);
    }
    if (explicit_set)
      diag(d, "caller: bound to processor(s) %s by someone else; affinity_policy=explicit pins it to %d at each "
              "dispatch", list, (int)req->cpu_set[0]);
    else if (req->affinity_policy == CPUEXEC_AFFINITY_NONE)
      diag(d, "caller: bound to processor(s) %s by someone else; it keeps that placement", list);
    else
      diag(d, "caller: bound to processor(s) %s by someone else; it keeps that placement and workers avoid its "
              "core(s) while others are free", list);
    if (explicit_set)
      nbound = 0;
    else if (nbound == 1)
      pl->caller = bound[0]->os_index;
  }

  if (threads > 1 && req->affinity_policy != CPUEXEC_AFFINITY_NONE) {
    pl->workers = malloc((threads - 1) * sizeof *pl->workers);
    if (pl->workers == NULL)
      goto out;
  }
  if (req->affinity_policy == CPUEXEC_AFFINITY_NONE) {
    diag(d, "affinity_policy=none: no participant is pinned");
  } else if (req->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT) {
    pl->caller = req->cpu_set[0];
    pl->pin_caller = true;
    for (uint32_t i = 1; i < threads; i++)
      pl->workers[pl->worker_count++] = req->cpu_set[i];
  } else {
    uint32_t n = placement_order(req, t, d, order);
    if (nbound > 0) {
      for (uint32_t i = 0; i < nbound; i++)
        caller_core[bound[i]->core] = true;
    } else if (n > 0) {
      caller_core[order[0]->core] = true;
    }
    /* Workers: the order without the caller's cores, then those cores. */
    for (int pass = 0; pass < 2; pass++)
      for (uint32_t i = 0; i < n && pl->worker_count + 1 < threads; i++)
        if (caller_core[order[i]->core] == (pass == 1))
          pl->workers[pl->worker_count++] = order[i]->os_index;
    /* The caller runs on one of its cores: the one workers reach last. */
    for (uint32_t i = 0; i < n; i++)
      if (caller_core[order[i]->core])
        caller_home = order[i];
  }

  /* SMT and efficiency use, over every participant with a place: the
   * workers, and the caller on its pinned processor or on the core kept
   * for it. With affinity none nothing is placed, so both stay false. */
  if (req->affinity_policy != CPUEXEC_AFFINITY_NONE) {
    if (pl->pin_caller)
      count_participant(t, cpuexec__topology_find(t, pl->caller), per_core, r);
    else if (caller_home != NULL)
      count_participant(t, caller_home, per_core, r);
    for (uint32_t i = 0; i < pl->worker_count; i++)
      count_participant(t, cpuexec__topology_find(t, pl->workers[i]), per_core, r);
  }
  for (uint32_t c = 0; c < t->core_count; c++)
    r->uses_smt |= per_core[c] > 1;
  rc = 0;
out:
  free(bound);
  free(order);
  free(caller_core);
  free(per_core);
  return rc;
}

static cpuexec_resolved_spin resolve_spin(const cpuexec_policy *req) {
  cpuexec_resolved_spin s = {.policy = req->spin_policy};
  switch (req->spin_policy) {
  case CPUEXEC_SPIN_ADAPTIVE:
    s.spin_ns = CPUEXEC__ADAPTIVE_SPIN_NS;
    s.park_when_oversubscribed = true;
    s.cadence_burn_permille = CPUEXEC__CADENCE_BURN_PERMILLE;
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    s.spin_ns = req->spin_budget;
    break;
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    s.spin_iterations = req->spin_budget;
    break;
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    break;
  }
  return s;
}

/* The node budget of the request: its own choice, else the environment's
 * (cpuexec/policy.h). Which scope the process shares is the node level's
 * (a process shares one: src/node/node_budget.h), said by its description. */
static void resolve_node_budget(const cpuexec_policy *req, cpuexec_resolved *r) {
  r->node_budget_asked = req->node_budget != CPUEXEC_NODE_BUDGET_DEFAULT;
  if (r->node_budget_asked) {
    r->node_budget = req->node_budget;
    r->node_budget_from = "the policy's node_budget";
  } else {
    r->node_budget = cpuexec__node_budget_from_environment(&r->node_budget_from, NULL);
  }
}

/* Behaviour only: threads, the pinned caller, the workers' processors, what
 * waiting does, nesting, the FP state and the participation rule. No request spelling, no diagnostics. */
static char *sharing_key(const cpuexec_resolved *r) {
  cpuexec__strbuf sb = {0};
  cpuexec__strbuf_printf(&sb, "threads=%u;caller=", r->effective_threads);
  if (r->pin_caller)
    cpuexec__strbuf_printf(&sb, "%d", (int)r->caller_processor);
  else
    cpuexec__strbuf_printf(&sb, "free");
  cpuexec__strbuf_printf(&sb, ";workers=");
  if (r->worker_processor_count == 0)
    cpuexec__strbuf_printf(&sb, "none");
  for (uint32_t i = 0; i < r->worker_processor_count; i++)
    cpuexec__strbuf_printf(&sb, "%s%d", i ? "," : "", (int)r->worker_processors[i]);
  switch (r->spin.policy) {
  case CPUEXEC_SPIN_ADAPTIVE:
    cpuexec__strbuf_printf(&sb, ";spin=%lluns,park-over-%u", (unsigned long long)r->spin.spin_ns,
                           r->visible_processors);
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    cpuexec__strbuf_printf(&sb, ";spin=%lluns", (unsigned long long)r->spin.spin_ns);
    break;
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    cpuexec__strbuf_printf(&sb, ";spin=%lluit", (unsigned long long)r->spin.spin_iterations);
    break;
  case CPUEXEC_SPIN_PARK_IMMEDIATELY:
    cpuexec__strbuf_printf(&sb, ";spin=0");
    break;
  }
  cpuexec__strbuf_printf(&sb, ";nested=%s", r->allow_nested ? "yes" : "no");
  if (r->inherit_fpenv)
    cpuexec__strbuf_printf(&sb, ";fpenv=caller");
  /* The executor carries the rule (kernels see only their executor), and it
   * changes how the pool runs: strict regions run one at a time. */
  if (r->every_participant)
    cpuexec__strbuf_printf(&sb, ";participation=every");
#ifndef _WIN32 /* no node level there: nothing to tell pools apart by */
  /* A pool out of the budget, or of the host's, runs differently from one
   * of the cgroup's (the default: keys written before the key existed stay). */
  if (r->node_budget != CPUEXEC_NODE_BUDGET_CGROUP)
    cpuexec__strbuf_printf(&sb, ";node=%s", cpuexec_node_budget_name(r->node_budget));
#endif
  return cpuexec__strbuf_take(&sb);
}

/* A request read from the environment that cannot be resolved here: the
 * message names CPUEXEC_POLICY, as its parse errors do, unless it already
 * names the variable it came from (CPUEXEC_NUM_THREADS). */
static void name_the_variable(void) {
  const char *why = cpuexec_error_message();
  if (strncmp(why, "CPUEXEC_", 8) == 0)
    return;
  char detail[448];
  snprintf(detail, sizeof detail, "%s", why);
  cpuexec__fail(0, "CPUEXEC_POLICY: %s", detail);
}

CPUEXEC_EXPORT int cpuexec_policy_resolve(const cpuexec_policy *request, const cpuexec_topology *topology,
                                   cpuexec_resolved **out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the resolution");
  *out = NULL;
  cpuexec_resolved *r = calloc(1, sizeof *r);
  if (r == NULL)
    return cpuexec__fail(CPUEXEC_ENOMEM, "resolve: out of memory");
  diag_list d = {0};
  placement pl = {0};
  int rc;
  /* Set while a failure would be about the request: one read from
   * CPUEXEC_POLICY then says so (the fail path names the variable). Its
   * parse errors name it already. */
  bool request_step = false;
  if (request != NULL)
    r->request = *request;
  else if ((rc = cpuexec_policy_from_environment(&r->request)) != 0)
    goto fail;
  const cpuexec_policy *req = &r->request;
  request_step = true;
  if ((rc = cpuexec__policy_check(req)) != 0)
    goto fail;
  request_step = false;
  if (topology == NULL && (rc = cpuexec__topology_process(&topology)) != 0)
    goto fail;
  request_step = true;
  if (req->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT && (rc = check_explicit_set(req, topology)) != 0)
    goto fail;
  if (topology->fallback != NULL)
    diag(&d, "%s", topology->fallback);

  uint32_t threads = 1;
  enum thread_source source = FROM_TOPOLOGY;
  if ((rc = choose_threads(req, topology, &d, &threads, &source)) != 0 ||
      (rc = check_capacity(req, topology, source, &d, &threads)) != 0)
    goto fail;
  if (source != FROM_TOPOLOGY && topology->cpu_quota > 0 && threads > ceil(topology->cpu_quota))
    diag(&d, "num_threads: %u participants exceed the cgroup quota of %.3g CPUs; they will share it", threads,
         topology->cpu_quota);
  if (req->affinity_policy == CPUEXEC_AFFINITY_NONE && threads > topology->processor_count)
    diag(&d, "num_threads: %u participants on %u visible processors: oversubscribed", threads,
         topology->processor_count);
  r->effective_threads = threads;
  if (threads == 1)
    diag(&d, "serial: the caller runs every range; no worker thread starts");

  /* This process's own topology on an OS backend without affinity: a
   * pinning policy resolves unpinned and says so; an explicit placement
   * cannot be honoured at all. A stored topology describes another machine,
   * so its placement is resolved as asked. */
  const cpuexec_policy *placed = req;
  cpuexec_policy unpinned;
  if (topology->live && !cpuexec__os_has_affinity() && req->affinity_policy != CPUEXEC_AFFINITY_NONE) {
    if (req->affinity_policy == CPUEXEC_AFFINITY_EXPLICIT) {
      rc = cpuexec__fail(CPUEXEC_ENOTSUP,
                         "affinity_policy=explicit: the %s OS backend of this build cannot pin threads; use "
                         "affinity_policy=none, or a build configured --with-os-backend=linux",
                         cpuexec__os_backend());
      goto fail;
    }
    diag(&d, "affinity_policy=%s: the %s OS backend cannot pin threads; no participant is pinned",
         cpuexec_affinity_policy_name(req->affinity_policy), cpuexec__os_backend());
    unpinned = *req;
    unpinned.affinity_policy = CPUEXEC_AFFINITY_NONE;
    placed = &unpinned;
  }
  if ((rc = place(placed, topology, threads, &d, &pl, r)) != 0)
    goto fail;
  r->caller_processor = pl.caller;
  r->pin_caller = pl.pin_caller;
  r->worker_processors = pl.worker_count > 0 ? pl.workers : NULL;
  if (pl.worker_count == 0)
    free(pl.workers);
  r->worker_processor_count = pl.worker_count;
  pl.workers = NULL;
  r->allow_nested = req->allow_nested_parallelism;
  r->inherit_fpenv = req->inherit_fp_environment;
  r->every_participant = req->participation == CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT;
  resolve_node_budget(req, r);
  r->spin = resolve_spin(req);
  r->visible_processors = topology->processor_count;
  r->kinds_ranked = topology->kinds_ranked;
  if (d.failed) {
    rc = CPUEXEC_ENOMEM;
    goto fail;
  }
  r->diagnostics = d.items;
  r->diagnostic_count = d.count;
  d.items = NULL;
  d.count = 0;
  r->sharing_key = sharing_key(r);
  if (r->sharing_key == NULL) {
    rc = CPUEXEC_ENOMEM;
    goto fail;
  }
  atomic_init(&r->refcount, 1);
  *out = r;
  return 0;
fail:
  if (rc == CPUEXEC_ENOMEM)
    cpuexec__fail(rc, "resolve: out of memory");
  else if (request == NULL && request_step)
    name_the_variable();
  free(pl.workers);
  diag_free(&d);
  cpuexec__resolved_free(r);
  return rc;
}
