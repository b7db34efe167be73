/* The process-visible topology: stored XML and synthetic machines, the
 * allowed set and binding options, the cgroup v2 quota, load errors, and
 * the descriptions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif
#include <cmocka.h>
#include <stdatomic.h>

#include "support/test_util.h"

#include <cpuexec.h>

#define TOPOLOGIES TOP_SRCDIR "/tests/data/topologies/"

static cpuexec_topology *load_xml(const char *name, const cpuexec_topology_options *options) {
  char path[1024];
  snprintf(path, sizeof path, TOPOLOGIES "%s", name);
  cpuexec_topology *t = NULL;
  int rc = cpuexec_topology_load_xml(path, options, &t);
  if (rc != 0)
    fail_msg("%s: %s", name, cpuexec_error_message());
  return t;
}

/* What each stored topology must read as. */
static const struct {
  const char *file;
  uint32_t packages, cores, processors, smt_width, kinds, performance_cores;
  const char *visible; /* the processor ids, in hwloc order, as a cpulist */
} shapes[] = {
    {"2cores.xml", 1, 2, 2, 1, 0, 2, "0,1"},
    {"1core.xml", 1, 1, 1, 1, 0, 1, "0"},
    {"8cores-smt2.xml", 1, 8, 16, 2, 0, 8, "0-15"},
    {"2packages-8cores-smt2.xml", 2, 16, 32, 2, 0, 16, "0-31"},
    {"hybrid-8p-smt2-16e.xml", 1, 24, 32, 2, 2, 8, "0-31"},
    {"smt4.xml", 1, 4, 16, 4, 0, 4, "0-15"},
    {"restricted-siblings.xml", 1, 4, 5, 2, 0, 4, "0,1,3,4,6"},
    {"quota-1.5/topology.xml", 1, 4, 4, 1, 0, 4, "0-3"},
    {"8cores-smt2-siblings-apart.xml", 1, 8, 16, 2, 0, 8, "0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15"},
    {"hybrid-4e-first-2p.xml", 1, 6, 6, 1, 2, 2, "0-5"},
};

/* The visible ids as a cpulist, runs collapsed ("0,1,3-5"). */
static void ids_as_list(const cpuexec_topology *t, char *buf, size_t size) {
  size_t len = 0;
  uint32_t n = cpuexec_topology_processor_count(t);
  buf[0] = '\0';
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    while (j + 1 < n && cpuexec_topology_processor_id(t, j + 1) == cpuexec_topology_processor_id(t, j) + 1)
      j++;
    len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", (int)cpuexec_topology_processor_id(t, i));
    if (j > i)
      len += (size_t)snprintf(buf + len, size - len, "%s%d", j == i + 1 ? "," : "-",
                              (int)cpuexec_topology_processor_id(t, j));
    i = j + 1;
  }
}

static void every_stored_topology_reads_as_its_shape(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    cpuexec_topology *t = load_xml(shapes[i].file, NULL);
    char ids[256];
    ids_as_list(t, ids, sizeof ids);
    printf("# %-28s packages %u cores %u processors %u smt %u kinds %u P-cores %u ids %s\n", shapes[i].file,
           cpuexec_topology_package_count(t), cpuexec_topology_core_count(t), cpuexec_topology_processor_count(t),
           cpuexec_topology_smt_width(t), cpuexec_topology_kind_count(t), cpuexec_topology_performance_core_count(t),
           ids);
    assert_int_equal(cpuexec_topology_package_count(t), shapes[i].packages);
    assert_int_equal(cpuexec_topology_core_count(t), shapes[i].cores);
    assert_int_equal(cpuexec_topology_processor_count(t), shapes[i].processors);
    assert_int_equal(cpuexec_topology_smt_width(t), shapes[i].smt_width);
    assert_int_equal(cpuexec_topology_kind_count(t), shapes[i].kinds);
    assert_int_equal(cpuexec_topology_performance_core_count(t), shapes[i].performance_cores);
    assert_string_equal(ids, shapes[i].visible);
    /* Without cgroup options a stored topology has no quota. */
    assert_true(cpuexec_topology_cpu_quota(t) == 0);
    assert_int_equal(cpuexec_topology_processor_id(t, cpuexec_topology_processor_count(t)), -1);
    cpuexec_topology_destroy(t);
  }
}

static void synthetic_descriptions_load_like_xml(void **state) {
  (void)state;
  cpuexec_topology *t;
  assert_int_equal(cpuexec_topology_load_synthetic("package:2 core:3 pu:2", NULL, &t), 0);
  assert_int_equal(cpuexec_topology_package_count(t), 2);
  assert_int_equal(cpuexec_topology_core_count(t), 6);
  assert_int_equal(cpuexec_topology_processor_count(t), 12);
  assert_int_equal(cpuexec_topology_smt_width(t), 2);
  cpuexec_topology_destroy(t);
  /* Without core objects every processor counts as its own core. */
  assert_int_equal(cpuexec_topology_load_synthetic("package:2 pu:3", NULL, &t), 0);
  assert_int_equal(cpuexec_topology_package_count(t), 2);
  assert_int_equal(cpuexec_topology_core_count(t), 6);
  assert_int_equal(cpuexec_topology_smt_width(t), 1);
  cpuexec_topology_destroy(t);
}

/* The allowed set and the binding intersect; a core keeps only the
 * processors left, and one with none left disappears. */
static void allowed_set_and_binding_intersect(void **state) {
  (void)state;
  static const struct {
    const char *allowed, *binding;
    uint32_t processors, cores, smt_width;
  } cases[] = {
      {NULL, NULL, 16, 8, 2},      {"0-7", NULL, 8, 4, 2},  {NULL, "0-7", 8, 4, 2},
      {"0-7", "4-11", 4, 2, 2},    {"0,2,4,6", NULL, 4, 4, 1}, {"1,3", "0-15", 2, 2, 1},
      {"0-3,100", NULL, 4, 2, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_topology_options o;
    cpuexec_topology_options_init(&o);
    o.allowed_cpulist = cases[i].allowed;
    o.binding_cpulist = cases[i].binding;
    cpuexec_topology *t = load_xml("8cores-smt2.xml", &o);
    assert_int_equal(cpuexec_topology_processor_count(t), cases[i].processors);
    assert_int_equal(cpuexec_topology_core_count(t), cases[i].cores);
    assert_int_equal(cpuexec_topology_smt_width(t), cases[i].smt_width);
    cpuexec_topology_destroy(t);
  }
}

static void bad_options_are_rejected_naming_the_field(void **state) {
  (void)state;
  static const struct {
    const char *allowed, *binding, *caller;
    double quota;
    int code;
    const char *field;
  } cases[] = {
      {"0-x", NULL, NULL, 0, CPUEXEC_EINVAL, "allowed_cpulist"},
      {"", NULL, NULL, 0, CPUEXEC_EINVAL, "allowed_cpulist"},
      {NULL, "3-1", NULL, 0, CPUEXEC_EINVAL, "binding_cpulist"},
      {NULL, "0x3", NULL, 0, CPUEXEC_EINVAL, "binding_cpulist"},
      {NULL, NULL, "1,,2", 0, CPUEXEC_EINVAL, "caller_cpulist"},
      {NULL, NULL, NULL, -1.5, CPUEXEC_EINVAL, "cpu_quota"},
      {NULL, NULL, NULL, 1.0 / 0.0, CPUEXEC_EINVAL, "cpu_quota"},
      /* Nothing left: allowed and binding do not meet. */
      {"0-3", "8-11", NULL, 0, CPUEXEC_ETOPOLOGY, "8cores-smt2.xml"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cpuexec_topology_options o;
    cpuexec_topology_options_init(&o);
    o.allowed_cpulist = cases[i].allowed;
    o.binding_cpulist = cases[i].binding;
    o.caller_cpulist = cases[i].caller;
    o.cpu_quota = cases[i].quota;
    cpuexec_topology *t = (cpuexec_topology *)0x1;
    assert_int_equal(cpuexec_topology_load_xml(TOPOLOGIES "8cores-smt2.xml", &o, &t), cases[i].code);
    assert_null(t);
    assert_non_null(strstr(cpuexec_error_message(), cases[i].field));
  }
}

static char scratch_dir[256];

static int make_scratch(void **state) {
  (void)state;
  snprintf(scratch_dir, sizeof scratch_dir, "%s", "/tmp/cpuexec-topology-XXXXXX");
  return mkdtemp(scratch_dir) != NULL ? 0 : -1;
}

static void write_file(const char *relative, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", scratch_dir, relative);
  /* Create the parent directories. */
  for (char *slash = strchr(path + strlen(scratch_dir) + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    mkdir(path, 0700);
    *slash = '/';
  }
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int remove_scratch(void **state) {
  (void)state;
  return test_remove_tree(scratch_dir);
}

static void load_errors_name_the_file(void **state) {
  (void)state;
  cpuexec_topology *t;
  assert_int_equal(cpuexec_topology_load_xml(TOPOLOGIES "no-such-machine.xml", NULL, &t), CPUEXEC_ETOPOLOGY);
  assert_null(t);
  assert_non_null(strstr(cpuexec_error_message(), "no-such-machine.xml"));

  write_file("garbage.xml", "<topology version=\"2.0\"> this is not hwloc </nonsense>");
  char path[512];
  snprintf(path, sizeof path, "%s/garbage.xml", scratch_dir);
  assert_int_equal(cpuexec_topology_load_xml(path, NULL, &t), CPUEXEC_ETOPOLOGY);
  assert_non_null(strstr(cpuexec_error_message(), "garbage.xml"));

  assert_int_equal(cpuexec_topology_load_synthetic("core:banana", NULL, &t), CPUEXEC_ETOPOLOGY);
  assert_non_null(strstr(cpuexec_error_message(), "core:banana"));
  assert_int_equal(cpuexec_topology_load_xml(NULL, NULL, &t), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_topology_load_xml(TOPOLOGIES "2cores.xml", NULL, NULL), CPUEXEC_EINVAL);
}

static double quota_of(const char *proc_self_cgroup, const char *root, int *rc) {
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  char proc[512], cg[512];
  snprintf(proc, sizeof proc, "%s/%s", scratch_dir, proc_self_cgroup);
  snprintf(cg, sizeof cg, "%s/%s", scratch_dir, root);
  o.proc_self_cgroup = proc;
  o.cgroup_root = cg;
  cpuexec_topology *t = NULL;
  *rc = cpuexec_topology_load_xml(TOPOLOGIES "8cores-smt2.xml", &o, &t);
  double q = cpuexec_topology_cpu_quota(t);
  cpuexec_topology_destroy(t);
  return q;
}

/* cpu.max of the process cgroup and of every parent: the smallest wins. */
static void cgroup_quota_is_the_smallest_on_the_path(void **state) {
  (void)state;
  int rc;
  write_file("a/proc", "12:cpu:/old-v1-line\n0::/outer/inner\n");
  write_file("a/cg/outer/inner/cpu.max", "max 100000\n");
  write_file("a/cg/outer/cpu.max", "250000 100000\n");
  assert_true(quota_of("a/proc", "a/cg", &rc) == 2.5);
  assert_int_equal(rc, 0);

  write_file("a/cg/outer/inner/cpu.max", "50000 100000\n");
  assert_true(quota_of("a/proc", "a/cg", &rc) == 0.5);

  /* The root's own file counts too (a container's namespace root). */
  write_file("a/cg/cpu.max", "20000 100000\n");
  assert_true(quota_of("a/proc", "a/cg", &rc) == 0.2);

  /* "max" everywhere, or no cpu.max at all: unlimited. */
  write_file("b/proc", "0::/x\n");
  write_file("b/cg/x/cpu.max", "max 100000\n");
  assert_true(quota_of("b/proc", "b/cg", &rc) == 0);
  assert_int_equal(rc, 0);
  write_file("c/proc", "0::/nothing/here\n");
  assert_true(quota_of("c/proc", "c/cg", &rc) == 0);
  assert_int_equal(rc, 0);
  /* A cgroup v1 only machine has no "0::" line: unlimited. */
  write_file("d/proc", "4:memory:/x\n");
  assert_true(quota_of("d/proc", "d/cg", &rc) == 0);
  assert_int_equal(rc, 0);
}

static void malformed_cgroup_files_fail_naming_the_file(void **state) {
  (void)state;
  int rc;
  write_file("e/proc", "0::/job\n");
  static const char *const bad[] = {"", "banana 100000\n", "150000\n", "150000 0\n", "-5 100000\n",
                                    "1.5 100000\n", "150000 100000 extra\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_file("e/cg/job/cpu.max", bad[i]);
    quota_of("e/proc", "e/cg", &rc);
    assert_int_equal(rc, CPUEXEC_ETOPOLOGY);
    assert_non_null(strstr(cpuexec_error_message(), "e/cg/job/cpu.max"));
  }
  quota_of("missing-proc-file", "e/cg", &rc);
  assert_int_equal(rc, CPUEXEC_ETOPOLOGY);
  assert_non_null(strstr(cpuexec_error_message(), "missing-proc-file"));
  write_file("f/proc", "0::relative/path\n");
  quota_of("f/proc", "f/cg", &rc);
  assert_int_equal(rc, CPUEXEC_ETOPOLOGY);
  assert_non_null(strstr(cpuexec_error_message(), "f/proc"));
}

static void quota_fixture_and_option_give_one_and_a_half_cpus(void **state) {
  (void)state;
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  o.proc_self_cgroup = TOPOLOGIES "quota-1.5/proc-self-cgroup";
  o.cgroup_root = TOPOLOGIES "quota-1.5/cgroup";
  cpuexec_topology *t = load_xml("quota-1.5/topology.xml", &o);
  assert_true(cpuexec_topology_cpu_quota(t) == 1.5);
  cpuexec_topology_destroy(t);
  /* A direct quota wins over the files. */
  o.cpu_quota = 3;
  t = load_xml("quota-1.5/topology.xml", &o);
  assert_true(cpuexec_topology_cpu_quota(t) == 3);
  cpuexec_topology_destroy(t);
}

/* The process's processors by id, as the OS reports them (Windows: the
 * process mask of its first group; ids are group * 64 + number). */
static bool in_process_set(int32_t id) {
#ifdef _WIN32
  DWORD_PTR process = 0, system = 0;
  USHORT groups[16], count = 16;
  assert_true(GetProcessAffinityMask(GetCurrentProcess(), &process, &system));
  if (!GetProcessGroupAffinity(GetCurrentProcess(), &count, groups)) groups[0] = 0; /* wine: group 0 */
  return id >= 0 && id / 64 == groups[0] && (process >> (id % 64) & 1u);
#else
  cpu_set_t set;
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  return id >= 0 && id < CPU_SETSIZE && CPU_ISSET(id, &set);
#endif
}

static void this_process_sees_its_affinity_mask(void **state) {
  (void)state;
  uint32_t in_set = 0;
  for (int32_t id = 0; id < 1024; id++) in_set += in_process_set(id);
  cpuexec_topology *t;
  assert_int_equal(cpuexec_topology_load(NULL, &t), 0);
  assert_int_equal(cpuexec_topology_processor_count(t), in_set);
  for (uint32_t i = 0; i < (uint32_t)cpuexec_topology_processor_count(t); i++)
    assert_true(in_process_set(cpuexec_topology_processor_id(t, i)));
  assert_true(cpuexec_topology_core_count(t) >= 1);
  assert_true(cpuexec_topology_core_count(t) <= cpuexec_topology_processor_count(t));
  cpuexec_topology_destroy(t);
  /* A binding option narrows this process's view too. */
  cpuexec_topology_options o;
  cpuexec_topology_options_init(&o);
  char one[16];
  int first = -1;
  for (int i = 0; i < 1024 && first < 0; i++)
    if (in_process_set(i))
      first = i;
  snprintf(one, sizeof one, "%d", first);
  o.binding_cpulist = one;
  assert_int_equal(cpuexec_topology_load(&o, &t), 0);
  assert_int_equal(cpuexec_topology_processor_count(t), 1);
  assert_int_equal(cpuexec_topology_processor_id(t, 0), first);
  cpuexec_topology_destroy(t);
}

static void describe_is_snprintf_like_and_json_is_escaped(void **state) {
  (void)state;
  cpuexec_topology *t = load_xml("hybrid-8p-smt2-16e.xml", NULL);
  int n = cpuexec_topology_describe(t, CPUEXEC_FORMAT_TEXT, NULL, 0);
  assert_true(n > 0);
  char *full = malloc((size_t)n + 1);
  assert_int_equal(cpuexec_topology_describe(t, CPUEXEC_FORMAT_TEXT, full, (size_t)n + 1), n);
  assert_int_equal(strlen(full), (size_t)n);
  assert_non_null(strstr(full, "8 visible performance cores"));
  char small[10];
  assert_int_equal(cpuexec_topology_describe(t, CPUEXEC_FORMAT_TEXT, small, sizeof small), n);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, full, sizeof small - 1);
  free(full);
  assert_int_equal(cpuexec_topology_describe(t, (cpuexec_format)7, small, sizeof small), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_topology_describe(NULL, CPUEXEC_FORMAT_TEXT, small, sizeof small), CPUEXEC_EINVAL);
  cpuexec_topology_destroy(t);

  /* A path with a quote and a backslash is escaped in JSON. (Windows file
   * names cannot hold a quote: there the backslashes are the separators
   * of a subfolder.) */
  char src[512], dst[512];
  snprintf(src, sizeof src, TOPOLOGIES "2cores.xml");
#ifdef _WIN32
  snprintf(dst, sizeof dst, "%s/we", scratch_dir);
  mkdir(dst, 0700);
  snprintf(dst, sizeof dst, "%s\\we\\ird name.xml", scratch_dir);
  const char *escaped = "we\\\\ird name.xml";
#else
  snprintf(dst, sizeof dst, "%s/we\"ird\\name.xml", scratch_dir);
  const char *escaped = "we\\\"ird\\\\name.xml";
#endif
  FILE *from = fopen(src, "rb"), *to = fopen(dst, "wb");
  assert_non_null(from);
  assert_non_null(to);
  char block[4096];
  size_t got;
  while ((got = fread(block, 1, sizeof block, from)) > 0) assert_int_equal(fwrite(block, 1, got, to), got);
  fclose(from);
  assert_int_equal(fclose(to), 0);
  assert_int_equal(cpuexec_topology_load_xml(dst, NULL, &t), 0);
  char json[4096];
  n = cpuexec_topology_describe(t, CPUEXEC_FORMAT_JSON, json, sizeof json);
  assert_true(n > 0 && (size_t)n < sizeof json);
  assert_non_null(strstr(json, escaped));
  assert_non_null(strstr(json, "\"cores\":2,"));
  assert_non_null(strstr(json, "\"cpu_quota\":null"));
  cpuexec_topology_destroy(t);
}

/* Calls check(name, path) for every .xml file of the corpus folder dir
 * (under tests/data); returns how many there were. */
static int for_each_xml(const char *dir, void (*check)(const char *name, const char *path)) {
  char folder[1024];
  snprintf(folder, sizeof folder, TOP_SRCDIR "/tests/data/%s", dir);
  DIR *d = opendir(folder);
  assert_non_null(d);
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 4, ".xml") != 0) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
    check(e->d_name, path);
    files++;
  }
  closedir(d);
  return files;
}

static void malformed_file_fails(const char *name, const char *path) {
  cpuexec_topology *t = NULL;
  int rc = cpuexec_topology_load_xml(path, NULL, &t);
  if (rc != CPUEXEC_ETOPOLOGY) fail_msg("%s: rc %d", name, rc);
  assert_null(t);
  assert_non_null(strstr(cpuexec_error_message(), name));
}

/* Every file of the malformed corpus fails to load with a message, in this
 * process: the ones that crash hwloc's loader never reach it. */
static void malformed_xml_corpus_fails_without_crashing(void **state) {
  (void)state;
  assert_true(for_each_xml("malformed-xml", malformed_file_fails) >= 20);
}

/* Well-formed files of odd structure (tests/data/odd-xml/README) load with
 * counts that agree with each other, and a default policy resolves on them
 * and runs a region: nothing indexes past what the file really holds. */
static int count_indices(void *ctx, int64_t begin, int64_t end) {
  _Atomic int64_t *seen = ctx;
  atomic_fetch_add(seen, end - begin);
  return 0;
}

static void odd_file_loads_consistently(const char *name, const char *path) {
  cpuexec_topology *t = NULL;
  int rc = cpuexec_topology_load_xml(path, NULL, &t);
  if (rc != 0) {
    if (rc != CPUEXEC_ETOPOLOGY) fail_msg("%s: rc %d: %s", name, rc, cpuexec_error_message());
    assert_non_null(strstr(cpuexec_error_message(), name));
    return;
  }
  int32_t n = cpuexec_topology_processor_count(t);
  printf("# %-28s processors %d cores %d packages %d\n", name, (int)n,
         (int)cpuexec_topology_core_count(t), (int)cpuexec_topology_package_count(t));
  assert_true(n >= 1);
  assert_true(cpuexec_topology_core_count(t) >= 1 && cpuexec_topology_core_count(t) <= n);
  assert_true(cpuexec_topology_package_count(t) >= 1);
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < i; j++)
      if (cpuexec_topology_processor_id(t, i) == cpuexec_topology_processor_id(t, j))
        fail_msg("%s: processor %d listed twice", name, (int)cpuexec_topology_processor_id(t, i));
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.affinity_policy = CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT;
  cpuexec_resolved *resolved = NULL;
  if (cpuexec_policy_resolve(&policy, t, &resolved) != 0)
    fail_msg("%s: %s", name, cpuexec_error_message());
  int32_t threads = cpuexec_resolved_effective_threads(resolved);
  assert_true(threads >= 1 && threads <= n);
  int32_t workers = 0;
  const int32_t *placed = cpuexec_resolved_worker_processors(resolved, &workers);
  assert_int_equal(workers, threads - 1);
  for (int32_t i = 0; i < workers; i++) {
    assert_int_not_equal(placed[i], cpuexec_resolved_caller_processor(resolved));
    for (int32_t j = 0; j < i; j++) assert_int_not_equal(placed[i], placed[j]);
  }
  cpuexec_resolved_destroy(resolved);
  /* Unpinned (the default), the resolution runs here whatever the file says. */
  assert_int_equal(cpuexec_policy_resolve(NULL, t, &resolved), 0);
  cpuexec_executor *exec = NULL;
  assert_int_equal(cpuexec_executor_create(resolved, &exec), 0);
  _Atomic int64_t seen = 0;
  assert_int_equal(cpuexec_parallel_for(exec, 1000, 7, &seen, count_indices, 0), 0);
  assert_int_equal(atomic_load(&seen), 1000);
  assert_int_equal(cpuexec_executor_release(exec), 0);
  cpuexec_resolved_destroy(resolved);
  cpuexec_topology_destroy(t);
}

static void structurally_odd_files_load_with_consistent_counts(void **state) {
  (void)state;
  assert_true(for_each_xml("odd-xml", odd_file_loads_consistently) >= 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_stored_topology_reads_as_its_shape),
      cmocka_unit_test(synthetic_descriptions_load_like_xml),
      cmocka_unit_test(allowed_set_and_binding_intersect),
      cmocka_unit_test(bad_options_are_rejected_naming_the_field),
      cmocka_unit_test(load_errors_name_the_file),
      cmocka_unit_test(malformed_xml_corpus_fails_without_crashing),
      cmocka_unit_test(structurally_odd_files_load_with_consistent_counts),
      cmocka_unit_test(cgroup_quota_is_the_smallest_on_the_path),
      cmocka_unit_test(malformed_cgroup_files_fail_naming_the_file),
      cmocka_unit_test(quota_fixture_and_option_give_one_and_a_half_cpus),
      cmocka_unit_test(this_process_sees_its_affinity_mask),
      cmocka_unit_test(describe_is_snprintf_like_and_json_is_escaped),
  };
  return cmocka_run_group_tests_name("topology", tests, make_scratch, remove_scratch);
}
