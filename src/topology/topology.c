/* Topology: the process-visible processors, their cores, packages and
 * kinds, read once with hwloc into plain arrays (topology_internal.h). */
#include "core/test_hooks.h"
#include "topology_internal.h"

#include "cgroup_limits.h"
#include "os/os.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "policy/cpulist.h"
#include "core/error.h"

CPUEXEC_EXPORT void cpuexec_topology_options_init(cpuexec_topology_options *options) {
  if (options != NULL)
    memset(options, 0, sizeof *options);
}

static char *dup_printf(const char *format, const char *arg) {
  int n = snprintf(NULL, 0, format, arg);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s != NULL)
    snprintf(s, (size_t)n + 1, format, arg);
  return s;
}

/* The most ids an option cpulist may expand to. */
#define CPULIST_MAX_IDS 65536

/* A Linux cpulist option into an hwloc bitmap (cpulist.h does the parsing). */
static int parse_cpulist(const char *field, const char *text, hwloc_bitmap_t set) {
  int32_t *ids = malloc(CPULIST_MAX_IDS * sizeof *ids);
  uint32_t count = 0;
  if (ids == NULL)
    return cpuexec__fail(CPUEXEC_ENOMEM, "%s: out of memory", field);
  int rc = cpuexec__cpulist_parse(field, text, strlen(text), ids, CPULIST_MAX_IDS, &count);
  if (rc == 0 && count == 0)
    rc = cpuexec__fail(CPUEXEC_EINVAL, "%s: empty cpulist; use ids and ranges such as 0,2,4-7", field);
  for (uint32_t i = 0; rc == 0 && i < count; i++)
    hwloc_bitmap_set(set, (unsigned)ids[i]);
  free(ids);
  return rc;
}

/* hwloc efficiency ranks kinds by performance: the highest value is the
 * most performant kind (P-cores). Returns false when kinds cannot be ranked. */
static bool rank_kinds(hwloc_topology_t topo, int nkinds, int *rank_of_kind) {
  int eff[64];
  if (nkinds < 2 || nkinds > 64)
    return false;
  for (int k = 0; k < nkinds; k++) {
    if (hwloc_cpukinds_get_info(topo, (unsigned)k, NULL, &eff[k], NULL, NULL, 0) != 0 || eff[k] < 0)
      return false;
  }
  for (int k = 0; k < nkinds; k++) {
    int higher = 0;
    for (int j = 0; j < nkinds; j++) {
      bool counted_before = false;
      for (int i = 0; i < j; i++)
        counted_before |= eff[i] == eff[j];
      if (eff[j] > eff[k] && !counted_before)
        higher++;
    }
    rank_of_kind[k] = higher;
  }
  return true;
}

static int32_t *bitmap_to_list(hwloc_const_bitmap_t set, uint32_t *count) {
  int n = hwloc_bitmap_weight(set);
  *count = 0;
  if (n <= 0)
    return NULL;
  int32_t *list = malloc((size_t)n * sizeof *list);
  if (list == NULL)
    return NULL;
  unsigned id;
  hwloc_bitmap_foreach_begin(id, set) list[(*count)++] = (int32_t)id;
  hwloc_bitmap_foreach_end();
  return list;
}

/* Fills t from a loaded hwloc topology: visible = allowed & binding. */
static int extract(hwloc_topology_t topo, const cpuexec_topology_options *o, cpuexec_topology *t) {
  int rc = CPUEXEC_ENOMEM;
  hwloc_bitmap_t visible = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
  hwloc_bitmap_t scratch = hwloc_bitmap_alloc();
  uint32_t *core_map = NULL, *package_map = NULL;
  if (visible == NULL || scratch == NULL)
    goto out;
  hwloc_bitmap_and(visible, visible, hwloc_topology_get_topology_cpuset(topo));
  if (o->allowed_cpulist != NULL) {
    if ((rc = parse_cpulist("allowed_cpulist", o->allowed_cpulist, scratch)) != 0)
      goto out;
    hwloc_bitmap_and(visible, visible, scratch);
  }
  hwloc_bitmap_zero(scratch);
  if (o->binding_cpulist != NULL) {
    if ((rc = parse_cpulist("binding_cpulist", o->binding_cpulist, scratch)) != 0)
      goto out;
    hwloc_bitmap_and(visible, visible, scratch);
  } else if (t->live) {
    if (hwloc_get_cpubind(topo, scratch, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(scratch))
      hwloc_bitmap_and(visible, visible, scratch);
  }
  if (hwloc_bitmap_iszero(visible)) {
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "%s: no processor is both allowed and in the process binding",
                       t->source);
    goto out;
  }

  int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int ncore = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int nkinds = hwloc_cpukinds_get_nr(topo, 0);
  int rank_of_kind[64];
  /* The complete set counts processors the process may not use too. */
  int complete = hwloc_bitmap_weight(hwloc_topology_get_complete_cpuset(topo));
  t->machine_processors = (uint32_t)(complete > npu ? complete : npu > 0 ? npu : 0);
  t->kind_count = (uint32_t)(nkinds > 0 ? nkinds : 0);
  t->kinds_ranked = rank_kinds(topo, nkinds, rank_of_kind);
  rc = CPUEXEC_ENOMEM; /* the cpulist parses above may have left 0 */
  t->processors = calloc((size_t)hwloc_bitmap_weight(visible), sizeof *t->processors);
  /* Dense indices by first appearance; +1 so 0 means "not seen yet". PUs
   * without a core (or package) ancestor get their own slot past the end. */
  core_map = calloc((size_t)(ncore > 0 ? ncore : 0) + (size_t)npu + 1, sizeof *core_map);
  package_map = calloc((size_t)(npkg > 0 ? npkg : 0) + 1, sizeof *package_map);
  uint32_t *core_siblings = calloc((size_t)(ncore > 0 ? ncore : 0) + (size_t)npu + 1, sizeof *core_siblings);
  if (t->processors == NULL || core_map == NULL || package_map == NULL || core_siblings == NULL) {
    free(core_siblings);
    goto out;
  }
  /* t->processors holds one entry per visible processor, so the walk over
   * PU objects below must meet each OS index once: hwloc accepts a file that
   * lists a PU (or the core holding it) twice, and writing one entry per
   * object would then run past the array. */
  hwloc_bitmap_zero(scratch);
  for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, NULL); pu != NULL;
       pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)) {
    if (pu->os_index == HWLOC_UNKNOWN_INDEX)
      continue;
    if (hwloc_bitmap_isset(scratch, pu->os_index)) {
      rc = cpuexec__fail(CPUEXEC_ETOPOLOGY,
                         "%s: processor %u is listed twice (two PU objects with OS index %u); a topology lists "
                         "each processor once",
                         t->source, pu->os_index, pu->os_index);
      free(core_siblings);
      goto out;
    }
    if (hwloc_bitmap_set(scratch, pu->os_index) != 0) {
      rc = CPUEXEC_ENOMEM;
      free(core_siblings);
      goto out;
    }
    if (!hwloc_bitmap_isset(visible, pu->os_index))
      continue;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
    size_t core_slot = core != NULL ? core->logical_index : (size_t)(ncore > 0 ? ncore : 0) + pu->logical_index;
    size_t pkg_slot = pkg != NULL ? pkg->logical_index : (size_t)(npkg > 0 ? npkg : 0);
    if (core_map[core_slot] == 0)
      core_map[core_slot] = ++t->core_count;
    if (package_map[pkg_slot] == 0)
      package_map[pkg_slot] = ++t->package_count;
    cpuexec__processor *p = &t->processors[t->processor_count++];
    p->os_index = (int32_t)pu->os_index;
    p->core = core_map[core_slot] - 1;
    p->package = package_map[pkg_slot] - 1;
    p->sibling = core_siblings[core_slot]++;
    if (p->sibling + 1 > t->smt_max)
      t->smt_max = p->sibling + 1;
    p->kind_rank = CPUEXEC__KIND_UNKNOWN;
    if (t->kinds_ranked) {
      int k = hwloc_cpukinds_get_by_cpuset(topo, pu->cpuset, 0);
      p->kind_rank = k >= 0 && k < nkinds ? rank_of_kind[k] : CPUEXEC__KIND_UNKNOWN;
    }
  }
  free(core_siblings);
  t->best_kind_rank = CPUEXEC__KIND_UNKNOWN;
  for (uint32_t i = 0; i < t->processor_count; i++) {
    int32_t r = t->processors[i].kind_rank;
    if (r != CPUEXEC__KIND_UNKNOWN && (t->best_kind_rank == CPUEXEC__KIND_UNKNOWN || r < t->best_kind_rank))
      t->best_kind_rank = r;
  }
  rc = 0;
out:
  free(core_map);
  free(package_map);
  hwloc_bitmap_free(visible);
  hwloc_bitmap_free(scratch);
  return rc;
}

/* The live process's quota from its v1 or v2 cgroups. */
static int live_quota(cpuexec_topology *t) {
  if (cpuexec__os_proc_self_cgroup() == NULL) return 0; /* the OS backend knows no cgroup */
  cpuexec__cgroup_limits limits;
  int rc = cpuexec__cgroup_limits_read(NULL, &limits);
  if (rc != 0 || limits.quota == 0) return rc;
  t->quota_source = dup_printf("%s", limits.quota_file);
  if (t->quota_source == NULL) return cpuexec__fail(CPUEXEC_ENOMEM, "cgroup quota: out of memory");
  t->cpu_quota = limits.quota;
  return 0;
}

static int fill_options_side(const cpuexec_topology_options *o, bool tolerant, cpuexec_topology *t) {
  if (o->cpu_quota < 0 || !isfinite(o->cpu_quota))
    return cpuexec__fail(CPUEXEC_EINVAL, "cpu_quota: %g is not a CPU count; use 0 for none or a positive number",
                         o->cpu_quota);
  if (o->cpu_quota > 0) {
    t->cpu_quota = o->cpu_quota;
    t->quota_source = dup_printf("%s", "option cpu_quota");
    if (t->quota_source == NULL)
      return CPUEXEC_ENOMEM;
  } else if (t->live || o->cgroup_root != NULL || o->proc_self_cgroup != NULL) {
    /* Paths given: the v2 files they name; otherwise the process's own v1
     * and v2 hierarchies (cgroup_limits.h). */
    int rc = o->cgroup_root != NULL || o->proc_self_cgroup != NULL
                 ? cpuexec__cgroup_cpu_quota(o, &t->cpu_quota, &t->quota_source)
                 : live_quota(t);
    if (rc != 0 && tolerant && rc != CPUEXEC_ENOMEM) {
      /* The default must not fail on a file the process does not own. */
      t->fallback = dup_printf("cgroup quota ignored: %s; the default is not capped by a quota", cpuexec_error_message());
      t->cpu_quota = 0;
      return t->fallback != NULL ? 0 : CPUEXEC_ENOMEM;
    }
    if (rc != 0)
      return rc;
  }
  if (!t->live && o->caller_cpulist != NULL) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL)
      return CPUEXEC_ENOMEM;
    int rc = parse_cpulist("caller_cpulist", o->caller_cpulist, set);
    if (rc == 0) {
      t->caller_binding = bitmap_to_list(set, &t->caller_binding_count);
      if (t->caller_binding == NULL)
        rc = CPUEXEC_ENOMEM;
    }
    hwloc_bitmap_free(set);
    return rc;
  }
  return 0;
}

enum source_kind { SOURCE_PROCESS, SOURCE_XML, SOURCE_SYNTHETIC };

#if CPUEXEC_TEST_HOOKS
_Atomic int cpuexec__test_hwloc_load_fails;
#endif

static int load(enum source_kind kind, const char *arg, const cpuexec_topology_options *options, bool tolerant,
                cpuexec_topology **out) {
  cpuexec_topology_options defaults;
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass where to store the topology");
  *out = NULL;
  if (kind != SOURCE_PROCESS && arg == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "%s: NULL; pass a %s", kind == SOURCE_XML ? "path" : "description",
                         kind == SOURCE_XML ? "hwloc XML file" : "synthetic description such as \"core:4 pu:2\"");
  if (options == NULL) {
    cpuexec_topology_options_init(&defaults);
    options = &defaults;
  }
  cpuexec_topology *t = calloc(1, sizeof *t);
  if (t == NULL)
    return cpuexec__fail(CPUEXEC_ENOMEM, "topology: out of memory");
  t->live = kind == SOURCE_PROCESS;
  t->source = kind == SOURCE_PROCESS ? dup_printf("%s", "this process")
              : kind == SOURCE_XML   ? dup_printf("xml:%s", arg)
                                     : dup_printf("synthetic:%s", arg);
  hwloc_topology_t topo = NULL;
  int rc = CPUEXEC_ENOMEM;
  if (t->source == NULL)
    goto fail;
  /* hwloc's XML loader trusts its input; it sees only well-formed files. */
  if (kind == SOURCE_XML && (rc = cpuexec__xml_check(arg)) != 0)
    goto fail;
  if (hwloc_topology_init(&topo) != 0) {
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: hwloc_topology_init failed: %s", strerror(errno));
    topo = NULL;
    goto fail;
  }
  if (kind == SOURCE_XML && hwloc_topology_set_xml(topo, arg) != 0) {
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: \"%s\" is not an hwloc XML topology", arg);
    goto fail;
  }
  if (kind == SOURCE_SYNTHETIC && hwloc_topology_set_synthetic(topo, arg) != 0) {
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: \"%s\" is not an hwloc synthetic description", arg);
    goto fail;
  }
  errno = 0;
  if ((t->live && CPUEXEC__TEST_HOOK(cpuexec__test_hwloc_load_fails, 0)) ||
      hwloc_topology_load(topo) != 0) {
    /* hwloc sets errno on some refusals only; a stale one would name a cause that is not. */
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: hwloc could not load %s: %s", t->source,
                       errno != 0 ? strerror(errno) : "hwloc refused its content");
    goto fail;
  }
  if ((rc = extract(topo, options, t)) != 0 || (rc = fill_options_side(options, tolerant, t)) != 0)
    goto fail;
  hwloc_topology_destroy(topo);
  *out = t;
  return 0;
fail:
  if (rc == CPUEXEC_ENOMEM)
    cpuexec__fail(rc, "topology: out of memory loading %s", t->source != NULL ? t->source : "a topology");
  if (topo != NULL)
    hwloc_topology_destroy(topo);
  cpuexec_topology_destroy(t);
  return rc;
}

CPUEXEC_EXPORT int cpuexec_topology_load(const cpuexec_topology_options *options, cpuexec_topology **out) {
  return load(SOURCE_PROCESS, NULL, options, false, out);
}

CPUEXEC_EXPORT int cpuexec_topology_load_xml(const char *path, const cpuexec_topology_options *options,
                                             cpuexec_topology **out) {
  return load(SOURCE_XML, path, options, false, out);
}

CPUEXEC_EXPORT int cpuexec_topology_load_synthetic(const char *description,
                                                   const cpuexec_topology_options *options,
                                                   cpuexec_topology **out) {
  return load(SOURCE_SYNTHETIC, description, options, false, out);
}

int cpuexec__topology_load_live(const cpuexec_topology_options *options, bool tolerant, cpuexec_topology **out) {
  return load(SOURCE_PROCESS, NULL, options, tolerant, out);
}

CPUEXEC_EXPORT void cpuexec_topology_destroy(cpuexec_topology *topology) {
  if (topology == NULL)
    return;
  free(topology->processors);
  free(topology->caller_binding);
  free(topology->quota_source);
  free(topology->source);
  free(topology->fallback);
  free(topology);
}

const cpuexec__processor *cpuexec__topology_find(const cpuexec_topology *topology, int32_t os_index) {
  for (uint32_t i = 0; i < topology->processor_count; i++)
    if (topology->processors[i].os_index == os_index)
      return &topology->processors[i];
  return NULL;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_processor_count(const cpuexec_topology *topology) {
  return topology != NULL ? (int32_t)topology->processor_count : 0;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_core_count(const cpuexec_topology *topology) {
  return topology != NULL ? (int32_t)topology->core_count : 0;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_package_count(const cpuexec_topology *topology) {
  return topology != NULL ? (int32_t)topology->package_count : 0;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_kind_count(const cpuexec_topology *topology) {
  return topology != NULL ? (int32_t)topology->kind_count : 0;
}

CPUEXEC_EXPORT double cpuexec_topology_cpu_quota(const cpuexec_topology *topology) {
  return topology != NULL ? topology->cpu_quota : 0;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_smt_width(const cpuexec_topology *topology) {
  return topology != NULL ? (int32_t)topology->smt_max : 0;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_performance_core_count(const cpuexec_topology *topology) {
  if (topology == NULL)
    return 0;
  uint32_t n = 0;
  for (uint32_t i = 0; i < topology->processor_count; i++) {
    const cpuexec__processor *p = &topology->processors[i];
    if (p->sibling == 0 && p->kind_rank == topology->best_kind_rank)
      n++;
  }
  return (int32_t)n;
}

CPUEXEC_EXPORT int32_t cpuexec_topology_processor_id(const cpuexec_topology *topology, int32_t i) {
  return topology != NULL && i >= 0 && (uint32_t)i < topology->processor_count ? topology->processors[i].os_index
                                                                               : -1;
}
