/* Robustness of every exported function against bad arguments: a NULL
 * pointer, an enum out of range, a negative size, a NULL out-parameter.
 *
 * The rules proven here (include/cpuexec/errors.h's convention, the header comments):
 *   - an int-returning call fails with its documented negative code and
 *     cpuexec_error_message() names the argument that was wrong;
 *   - destroy/release/init of NULL is a no-op, like free(NULL), and records
 *     no error;
 *   - accessors of NULL return the neutral value their header documents;
 *   - executors built from NULL (a checker, a job pool) fail when run,
 *     instead of crashing;
 *   - nothing aborts or crashes (a crash fails this program).
 * Each group is a table: one row per call, so a new export adds one row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "support/test_util.h"

#include <cpuexec.h>
#include <pthreadpool.h>

#include <cpuexec/compat/job_pool.h>
#include <cpuexec/compat/parallel_for.h>
#include <cpuexec/compat/range_executor.h>
#include <cpuexec/compat/ranges.h>

/* Valid objects the rows pass beside the one bad argument, so each row
 * tests one argument only. */
typedef struct fixture {
  cpuexec_policy policy;
  cpuexec_topology *topology;
  cpuexec_resolved *resolved;
  cpuexec_executor *exec;
  cpuexec_registry *registry;
  cpuexec_session *session;
  char buf[256];
} fixture;

static fixture fx;

static int range_ok(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
  return 0;
}

static int run_ok(void *arg) {
  (void)arg;
  return 0;
}

static int setup(void **state) {
  (void)state;
  cpuexec_policy_init(&fx.policy);
  fx.policy.num_threads = 2;
  fx.policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  if (cpuexec_topology_load_synthetic("core:2 pu:1", NULL, &fx.topology) != 0 ||
      cpuexec_policy_resolve(&fx.policy, fx.topology, &fx.resolved) != 0 ||
      cpuexec_executor_create(fx.resolved, &fx.exec) != 0 || cpuexec_registry_create(NULL, &fx.registry) != 0 ||
      cpuexec_session_create(&fx.policy, &fx.session) != 0)
    return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cpuexec_session_destroy(fx.session);
  cpuexec_registry_destroy(fx.registry);
  cpuexec_executor_release(fx.exec);
  cpuexec_resolved_destroy(fx.resolved);
  cpuexec_topology_destroy(fx.topology);
  return 0;
}

/* ---- int-returning calls: the code and a message naming the argument ---- */

typedef struct failing_call {
  const char *name;
  int (*call)(void);
  int code;
  const char *names; /* a substring cpuexec_error_message() must hold */
} failing_call;

#define CALL(fn_name, expr)                                                                                          \
  static int fn_name(void) { return (expr); }

static cpuexec_executor *lease_out;
static cpuexec_session *session_out;
static cpuexec_registry *registry_out;
static cpuexec_resolved *resolved_out;
static cpuexec_topology *topology_out;
static cpuexec_counters counters_out;
static cpuexec_descriptor descriptor_out;
static cpuexec_plan plan_out;
static cpuexec_scope scope_out;
static size_t count_out;
static const cpuexec_cost cost_one = {.bytes_read = 1, .bytes_written = 1, .compute_cycles = 1};
static const cpuexec_cost cost_negative = {.bytes_read = 0, .bytes_written = -1, .compute_cycles = 0};

static cpuexec_policy policy_with(int32_t num_threads, int spin, int affinity) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = num_threads;
  p.spin_policy = (cpuexec_spin_policy)spin;
  p.affinity_policy = (cpuexec_affinity_policy)affinity;
  return p;
}

static cpuexec_policy bad_threads, bad_spin, bad_affinity, bad_cpu_count;

/* executor.h / counters.h */
CALL(create_null_resolved, cpuexec_executor_create(NULL, &lease_out))
CALL(create_null_out, cpuexec_executor_create(fx.resolved, NULL))
CALL(parallel_for_null_fn, cpuexec_parallel_for(fx.exec, 10, 1, NULL, NULL, 0))
CALL(parallel_for_zero_grain, cpuexec_parallel_for(fx.exec, 10, 0, NULL, range_ok, 0))
CALL(parallel_for_negative_grain, cpuexec_parallel_for(fx.exec, 10, -5, NULL, range_ok, 0))
CALL(parallel_for_serial_null_fn, cpuexec_parallel_for(NULL, 10, 1, NULL, NULL, 0))
CALL(plan_null_cost, cpuexec_parallel_for_plan(fx.exec, 10, NULL, NULL, &plan_out))
CALL(plan_null_plan, cpuexec_parallel_for_plan(fx.exec, 10, &cost_one, NULL, NULL))
CALL(plan_negative_cost, cpuexec_parallel_for_plan(fx.exec, 10, &cost_negative, NULL, &plan_out))
CALL(costed_null_cost, cpuexec_parallel_for_costed(fx.exec, 10, NULL, NULL, NULL, range_ok))
CALL(costed_null_fn, cpuexec_parallel_for_costed(fx.exec, 10, &cost_one, NULL, NULL, NULL))
CALL(enable_counters_null, cpuexec_executor_counters_enable(NULL))
CALL(counters_null_exec, cpuexec_executor_counters_get(NULL, &counters_out))
CALL(counters_null_out, cpuexec_executor_counters_get(fx.exec, NULL))
CALL(descriptor_null_exec, cpuexec_executor_descriptor_get(NULL, &descriptor_out))
CALL(descriptor_null_out, cpuexec_executor_descriptor_get(fx.exec, NULL))
CALL(check_descriptor_null_exec, cpuexec_executor_descriptor_check(NULL, &descriptor_out))
CALL(check_descriptor_null_expected, cpuexec_executor_descriptor_check(fx.exec, NULL))
static int calibrate_never(void *user, cpuexec_executor *exec) {
  (void)user;
  (void)exec;
  return -1000;
}
CALL(parallel_for_flags_unknown_bits, cpuexec_parallel_for_flags(fx.exec, 10, 1, NULL, range_ok, 0, 0x40))
CALL(parallel_for_flags_null_fn, cpuexec_parallel_for_flags(fx.exec, 10, 1, NULL, NULL, 0, 0))
CALL(calibration_null_expected, cpuexec_calibration_run(fx.exec, NULL, calibrate_never, NULL))
CALL(calibration_null_fn, cpuexec_calibration_run(fx.exec, &descriptor_out, NULL, NULL))
/* policy.h */
CALL(parse_null_text, cpuexec_policy_parse(NULL, &fx.policy))
CALL(parse_null_policy, cpuexec_policy_parse("", NULL))
CALL(format_null_policy, cpuexec_policy_format(NULL, fx.buf, sizeof fx.buf))
CALL(format_null_buf, cpuexec_policy_format(&fx.policy, NULL, 8))
CALL(format_bad_spin, cpuexec_policy_format(&bad_spin, fx.buf, sizeof fx.buf))
CALL(format_bad_cpu_count, cpuexec_policy_format(&bad_cpu_count, fx.buf, sizeof fx.buf))
CALL(from_environment_null, cpuexec_policy_from_environment(NULL))
/* topology.h */
CALL(topology_load_null_out, cpuexec_topology_load(NULL, NULL))
CALL(topology_xml_null_path, cpuexec_topology_load_xml(NULL, NULL, &topology_out))
CALL(topology_xml_null_out, cpuexec_topology_load_xml("x.xml", NULL, NULL))
CALL(topology_synthetic_null_text, cpuexec_topology_load_synthetic(NULL, NULL, &topology_out))
CALL(topology_synthetic_null_out, cpuexec_topology_load_synthetic("pu:2", NULL, NULL))
CALL(topology_describe_null, cpuexec_topology_describe(NULL, CPUEXEC_FORMAT_TEXT, fx.buf, sizeof fx.buf))
CALL(topology_describe_bad_format, cpuexec_topology_describe(fx.topology, (cpuexec_format)9, fx.buf, sizeof fx.buf))
CALL(topology_describe_null_buf, cpuexec_topology_describe(fx.topology, CPUEXEC_FORMAT_TEXT, NULL, 8))
/* resolve.h */
CALL(resolve_null_out, cpuexec_policy_resolve(&fx.policy, fx.topology, NULL))
CALL(resolve_negative_threads, cpuexec_policy_resolve(&bad_threads, fx.topology, &resolved_out))
CALL(resolve_bad_spin, cpuexec_policy_resolve(&bad_spin, fx.topology, &resolved_out))
CALL(resolve_bad_affinity, cpuexec_policy_resolve(&bad_affinity, fx.topology, &resolved_out))
CALL(resolve_default_null_out, cpuexec_policy_resolve_default(NULL))
CALL(describe_null_resolved, cpuexec_resolved_describe(NULL, CPUEXEC_FORMAT_TEXT, fx.buf, sizeof fx.buf))
CALL(describe_bad_format, cpuexec_resolved_describe(fx.resolved, (cpuexec_format)7, fx.buf, sizeof fx.buf))
CALL(describe_null_buf, cpuexec_resolved_describe(fx.resolved, CPUEXEC_FORMAT_JSON, NULL, 8))
/* registry.h */
CALL(registry_create_null_out, cpuexec_registry_create(NULL, NULL))
CALL(acquire_null_registry, cpuexec_registry_acquire(NULL, fx.resolved, &lease_out))
CALL(acquire_null_resolved, cpuexec_registry_acquire(fx.registry, NULL, &lease_out))
CALL(acquire_null_lease, cpuexec_registry_acquire(fx.registry, fx.resolved, NULL))
/* session.h */
CALL(session_create_null_out, cpuexec_session_create(NULL, NULL))
CALL(session_create_bad_policy, cpuexec_session_create(&bad_threads, &session_out))
CALL(session_run_null_session, cpuexec_session_run(NULL, NULL, run_ok))
CALL(session_run_null_fn, cpuexec_session_run(fx.session, NULL, NULL))
CALL(scope_enter_null_exec, cpuexec_scope_enter(NULL, &scope_out))
CALL(scope_enter_null_scope, cpuexec_scope_enter(fx.exec, NULL))
CALL(scope_leave_null, cpuexec_scope_leave(NULL))
static cpuexec_foreign_executor_ops foreign_ops_with(uint32_t threads, bool run) {
  cpuexec_foreign_executor_ops ops;
  cpuexec_foreign_executor_ops_init(&ops);
  ops.effective_threads = threads;
  ops.run_ranges = run ? cpuexec_range_executor_serial().run : NULL;
  return ops;
}
static cpuexec_foreign_executor_ops foreign_ok, foreign_no_threads, foreign_no_run;
static cpuexec_executor *foreign_out;
CALL(foreign_create_null_out, cpuexec_executor_create_foreign(&foreign_ok, NULL, NULL))
CALL(foreign_create_null_ops, cpuexec_executor_create_foreign(NULL, NULL, &foreign_out))
CALL(foreign_create_zero_threads, cpuexec_executor_create_foreign(&foreign_no_threads, NULL, &foreign_out))
CALL(foreign_create_null_run, cpuexec_executor_create_foreign(&foreign_no_run, NULL, &foreign_out))
static cpuexec_hook empty_hook;
CALL(hook_register_null, cpuexec_hook_register(NULL))
CALL(hook_register_empty, cpuexec_hook_register(&empty_hook))
/* interop.h */
CALL(openmp_status_null, cpuexec_openmp_status_get(NULL))
CALL(openmp_counters_null, cpuexec_openmp_counters_get(NULL))
CALL(openmp_report_null_entries, cpuexec_openmp_report_get(NULL, 5, &count_out))
CALL(openmp_report_null_count, cpuexec_openmp_report_get(NULL, 0, NULL))
CALL(openmp_describe_null_buf, cpuexec_openmp_report_describe(NULL, 8))
/* compat */
CALL(legacy_parallel_for_null_fn, ParallelFor(10, 1, NULL, NULL))
CALL(ranges_null_fn, cpuexec_ranges_execute(10, NULL, NULL, NULL))
CALL(costed_ranges_null_cost, cpuexec_ranges_execute_costed(10, NULL, NULL, 1, NULL, range_ok))
CALL(costed_ranges_negative_multiple, cpuexec_ranges_execute_costed(10, &cost_one, NULL, -4, NULL, range_ok))
CALL(costed_ranges_null_fn, cpuexec_ranges_execute_costed(10, &cost_one, NULL, 1, NULL, NULL))
CALL(range_run_negative_count, cpuexec_range_executor_run(NULL, -1, NULL, range_ok))
CALL(range_run_null_callback, cpuexec_range_executor_run(NULL, 10, NULL, NULL))
CALL(worker_jobs_null_job, cpuexec_worker_jobs_run(fx.exec, 4, NULL, NULL))
CALL(worker_jobs_serial_null_job, cpuexec_worker_jobs_run(NULL, 4, NULL, NULL))

static int ranges_negative_block_size(void) {
  cpuexec_range_schedule schedule;
  cpuexec_range_schedule_init(&schedule);
  schedule.min_block_size = -1;
  return cpuexec_ranges_execute(10, &schedule, NULL, range_ok);
}

static int ranges_negative_parallel_size(void) {
  cpuexec_range_schedule schedule;
  cpuexec_range_schedule_init(&schedule);
  schedule.min_parallel_size = -1;
  return cpuexec_ranges_execute(10, &schedule, NULL, range_ok);
}

static int topology_option(double quota, const char *allowed) {
  cpuexec_topology_options options;
  cpuexec_topology_options_init(&options);
  options.cpu_quota = quota;
  options.allowed_cpulist = allowed;
  return cpuexec_topology_load_synthetic("core:2 pu:1", &options, &topology_out);
}

static int topology_negative_quota(void) { return topology_option(-1.0, NULL); }
static int topology_nan_quota(void) { return topology_option(NAN, NULL); }
static int topology_bad_allowed_list(void) { return topology_option(0.0, "zz"); }

static int registry_negative_capacity(void) {
  cpuexec_registry_options options;
  cpuexec_registry_options_init(&options);
  options.capacity = -1;
  return cpuexec_registry_create(&options, &registry_out);
}

static int resolve_explicit(uint32_t count, int32_t first) {
  cpuexec_policy p = policy_with(0, CPUEXEC_SPIN_ADAPTIVE, CPUEXEC_AFFINITY_EXPLICIT);
  p.cpu_set_count = count;
  p.cpu_set[0] = first;
  p.cpu_set[1] = 1;
  return cpuexec_policy_resolve(&p, fx.topology, &resolved_out);
}

static int resolve_negative_cpu_id(void) { return resolve_explicit(2, -1); }
static int resolve_cpu_set_too_long(void) { return resolve_explicit(CPUEXEC_CPU_SET_MAX + 1, 0); }

static int check_descriptor_bad_enum(void) {
  cpuexec_descriptor expected;
  if (cpuexec_executor_descriptor_get(fx.exec, &expected) != 0)
    return 1;
  expected.affinity_class = (cpuexec_affinity_policy)99;
  return cpuexec_executor_descriptor_check(fx.exec, &expected);
}

/* Leaving the outer scope first is refused; the scopes are then left in order. */
static int scope_leave_out_of_order(void) {
  cpuexec_scope outer, inner;
  if (cpuexec_scope_enter(fx.exec, &outer) != 0 || cpuexec_scope_enter(fx.exec, &inner) != 0)
    return 1;
  int rc = cpuexec_scope_leave(&outer); /* successful leaves below keep its message */
  if (cpuexec_scope_leave(&inner) != 0 || cpuexec_scope_leave(&outer) != 0 || cpuexec_executor_current() != NULL)
    return 2;
  return rc;
}

/* Executors made from NULL: they fail when run (2+ groups reach them). */
static int checking_null_checker(void) {
  cpuexec_range_executor e = cpuexec_range_executor_checking(NULL, cpuexec_range_executor_serial(), true);
  return cpuexec_range_executor_run(&e, 10, NULL, range_ok);
}

static int job_pool_null_pool(void) {
  cpuexec_range_executor e = cpuexec_range_executor_from_job_pool(NULL);
  return cpuexec_range_executor_run(&e, 10, NULL, range_ok);
}

static int job_pool_null_run_pool(void) {
  static const cpuexec_job_pool empty = {NULL, NULL};
  cpuexec_range_executor e = cpuexec_range_executor_from_job_pool(&empty);
  return cpuexec_range_executor_run(&e, 10, NULL, range_ok);
}

#define ROW(fn, code, names) {#fn, fn, CPUEXEC_##code, names}

static const failing_call failing_calls[] = {
    ROW(create_null_resolved, EINVAL, "resolved"),
    ROW(create_null_out, EINVAL, "out"),
    ROW(parallel_for_null_fn, EINVAL, "fn"),
    ROW(parallel_for_zero_grain, EINVAL, "grain: 0"),
    ROW(parallel_for_negative_grain, EINVAL, "grain: -5"),
    ROW(parallel_for_serial_null_fn, EINVAL, "fn"),
    ROW(plan_null_cost, EINVAL, "cost"),
    ROW(plan_null_plan, EINVAL, "plan"),
    ROW(plan_negative_cost, EINVAL, "bytes_written -1"),
    ROW(costed_null_cost, EINVAL, "cost"),
    ROW(costed_null_fn, EINVAL, "fn"),
    ROW(enable_counters_null, EINVAL, "exec"),
    ROW(counters_null_exec, EINVAL, "exec"),
    ROW(counters_null_out, EINVAL, "out"),
    ROW(descriptor_null_exec, EINVAL, "exec"),
    ROW(descriptor_null_out, EINVAL, "out"),
    ROW(check_descriptor_null_exec, EINVAL, "exec"),
    ROW(check_descriptor_null_expected, EINVAL, "expected"),
    ROW(parallel_for_flags_unknown_bits, EINVAL, "flags: 0x40"),
    ROW(parallel_for_flags_null_fn, EINVAL, "fn"),
    ROW(calibration_null_expected, EINVAL, "expected"),
    ROW(calibration_null_fn, EINVAL, "fn"),
    ROW(parse_null_text, EINVAL, "text"),
    ROW(parse_null_policy, EINVAL, "policy is NULL"),
    ROW(format_null_policy, EINVAL, "policy"),
    ROW(format_null_buf, EINVAL, "buf"),
    ROW(format_bad_spin, EINVAL, "spin_policy: 77"),
    ROW(format_bad_cpu_count, EINVAL, "cpu_set"),
    ROW(from_environment_null, EINVAL, "policy"),
    ROW(topology_load_null_out, EINVAL, "out"),
    ROW(topology_xml_null_path, EINVAL, "path"),
    ROW(topology_xml_null_out, EINVAL, "out"),
    ROW(topology_synthetic_null_text, EINVAL, "description"),
    ROW(topology_synthetic_null_out, EINVAL, "out"),
    ROW(topology_describe_null, EINVAL, "topology"),
    ROW(topology_describe_bad_format, EINVAL, "format: 9"),
    ROW(topology_describe_null_buf, EINVAL, "buf"),
    ROW(resolve_null_out, EINVAL, "out"),
    ROW(resolve_negative_threads, EINVAL, "num_threads: -3"),
    ROW(resolve_bad_spin, EINVAL, "spin_policy: 77"),
    ROW(resolve_bad_affinity, EINVAL, "affinity_policy: 77"),
    ROW(resolve_default_null_out, EINVAL, "out"),
    ROW(describe_null_resolved, EINVAL, "resolved"),
    ROW(describe_bad_format, EINVAL, "format: 7"),
    ROW(describe_null_buf, EINVAL, "buf"),
    ROW(registry_create_null_out, EINVAL, "out"),
    ROW(acquire_null_registry, EINVAL, "registry"),
    ROW(acquire_null_resolved, EINVAL, "resolved"),
    ROW(acquire_null_lease, EINVAL, "lease"),
    ROW(session_create_null_out, EINVAL, "out"),
    ROW(session_create_bad_policy, EINVAL, "num_threads: -3"),
    ROW(session_run_null_session, EINVAL, "session"),
    ROW(session_run_null_fn, EINVAL, "fn"),
    ROW(scope_enter_null_exec, EINVAL, "exec"),
    ROW(scope_enter_null_scope, EINVAL, "scope"),
    ROW(scope_leave_null, EINVAL, "scope"),
    ROW(foreign_create_null_out, EINVAL, "out"),
    ROW(foreign_create_null_ops, EINVAL, "ops"),
    ROW(foreign_create_zero_threads, EINVAL, "effective_threads: 0"),
    ROW(foreign_create_null_run, EINVAL, "run_ranges"),
    ROW(hook_register_null, EINVAL, "hook: NULL"),
    ROW(hook_register_empty, EINVAL, "every function is NULL"),
    ROW(openmp_status_null, EINVAL, "out"),
    ROW(openmp_counters_null, EINVAL, "out"),
    ROW(openmp_report_null_entries, EINVAL, "entries"),
    ROW(openmp_report_null_count, EINVAL, "count"),
    ROW(openmp_describe_null_buf, EINVAL, "buf"),
    ROW(legacy_parallel_for_null_fn, EINVAL, "fn"),
    ROW(ranges_null_fn, EINVAL, "fn"),
    ROW(ranges_negative_block_size, EINVAL, "min_block_size: -1"),
    ROW(ranges_negative_parallel_size, EINVAL, "min_parallel_size"),
    ROW(costed_ranges_null_cost, EINVAL, "cost"),
    ROW(costed_ranges_negative_multiple, EINVAL, "block_multiple: -4"),
    ROW(costed_ranges_null_fn, EINVAL, "fn"),
    ROW(range_run_negative_count, EINVAL, "count: -1"),
    ROW(range_run_null_callback, EINVAL, "callback"),
    ROW(worker_jobs_null_job, EINVAL, "job"),
    ROW(worker_jobs_serial_null_job, EINVAL, "job"),
    ROW(topology_negative_quota, EINVAL, "cpu_quota: -1"),
    ROW(topology_nan_quota, EINVAL, "cpu_quota: nan"),
    ROW(topology_bad_allowed_list, EINVAL, "allowed_cpulist: 'zz'"),
    ROW(registry_negative_capacity, EINVAL, "capacity: -1"),
    ROW(resolve_negative_cpu_id, EINVAL, "cpu_set: entry 0 is -1"),
    ROW(resolve_cpu_set_too_long, EINVAL, "cpu_set_count: 1025"),
    ROW(check_descriptor_bad_enum, EMISMATCH, "affinity_class"),
    ROW(scope_leave_out_of_order, ESTATE, "reverse order"),
    ROW(checking_null_checker, EINVAL, "checker"),
    ROW(job_pool_null_pool, EINVAL, "pool is NULL"),
    ROW(job_pool_null_run_pool, EINVAL, "run_pool is NULL"),
};

static void bad_arguments_fail_with_a_code_and_a_message_naming_them(void **state) {
  (void)state;
  bad_threads = policy_with(-3, CPUEXEC_SPIN_ADAPTIVE, CPUEXEC_AFFINITY_NONE);
  bad_spin = policy_with(0, 77, CPUEXEC_AFFINITY_NONE);
  bad_affinity = policy_with(0, CPUEXEC_SPIN_ADAPTIVE, 77);
  bad_cpu_count = policy_with(0, CPUEXEC_SPIN_ADAPTIVE, CPUEXEC_AFFINITY_EXPLICIT);
  bad_cpu_count.cpu_set_count = CPUEXEC_CPU_SET_MAX + 1;
  foreign_ok = foreign_ops_with(2, true);
  foreign_no_threads = foreign_ops_with(0, true);
  foreign_no_run = foreign_ops_with(2, false);
  cpuexec_hook_init(&empty_hook);
  size_t wrong = 0;
  for (size_t i = 0; i < sizeof failing_calls / sizeof failing_calls[0]; i++) {
    const failing_call *row = &failing_calls[i];
    int rc = row->call();
    const char *message = cpuexec_error_message();
    if (rc != row->code || strstr(message, row->names) == NULL) {
      print_error("%s: returned %d (%s), expected %s; message \"%s\" should name \"%s\"\n", row->name, rc,
                  cpuexec_error_name(rc), cpuexec_error_name(row->code), message, row->names);
      wrong++;
    }
  }
  assert_int_equal(wrong, 0);
}

/* ---- NULL that must be tolerated: no-ops and neutral accessors ---- */

static void destroy_release_and_init_of_null_are_no_ops(void **state) {
  (void)state;
  assert_int_equal(cpuexec_scope_leave(NULL), CPUEXEC_EINVAL); /* a known message to keep */
  const char *before = cpuexec_error_message();
  char kept[256];
  strncpy(kept, before, sizeof kept - 1);
  kept[sizeof kept - 1] = '\0';

  cpuexec_executor_release(NULL);
  cpuexec_executor_release(NULL);
  cpuexec_resolved_destroy(NULL);
  cpuexec_topology_destroy(NULL);
  cpuexec_session_destroy(NULL);
  assert_int_equal(cpuexec_registry_destroy(NULL), 0);
  cpuexec_policy_init(NULL);
  cpuexec_registry_options_init(NULL);
  cpuexec_topology_options_init(NULL);
  cpuexec_range_schedule_init(NULL);
  cpuexec_foreign_executor_ops_init(NULL);
  cpuexec_hook_init(NULL);
  cpuexec_dispatch_observer_set(NULL, NULL);
  pthreadpool_destroy(NULL);

  assert_string_equal(cpuexec_error_message(), kept); /* no-ops record no error */
}

static void accessors_of_null_return_documented_neutral_values(void **state) {
  (void)state;
  /* executor.h: NULL is the serial executor */
  assert_int_equal(cpuexec_executor_effective_threads(NULL), 1);
  assert_null(cpuexec_executor_resolved(NULL));
  assert_int_equal(cpuexec_executor_id(NULL), 0);
  /* registry.h, session.h */
  assert_int_equal(cpuexec_registry_live_pools(NULL), 0);
  assert_null(cpuexec_session_executor(NULL));
  /* resolve.h */
  assert_null(cpuexec_resolved_request(NULL));
  assert_int_equal(cpuexec_resolved_effective_threads(NULL), 0);
  assert_int_equal(cpuexec_resolved_caller_processor(NULL), -1);
  int32_t count = 99;
  assert_null(cpuexec_resolved_worker_processors(NULL, &count));
  assert_int_equal(count, 0);
  assert_null(cpuexec_resolved_worker_processors(NULL, NULL));
  (void)cpuexec_resolved_worker_processors(fx.resolved, NULL); /* a NULL count is allowed */
  assert_false(cpuexec_resolved_uses_smt(NULL));
  assert_false(cpuexec_resolved_uses_efficiency_cores(NULL));
  assert_false(cpuexec_resolved_allows_nesting(NULL));
  cpuexec_resolved_spin spin = cpuexec_resolved_spin_behaviour(NULL);
  assert_int_equal(spin.policy, CPUEXEC_SPIN_PARK_IMMEDIATELY);
  assert_int_equal(spin.spin_ns, 0);
  assert_int_equal(spin.spin_iterations, 0);
  assert_int_equal(cpuexec_resolved_diagnostic_count(NULL), 0);
  assert_null(cpuexec_resolved_diagnostic(NULL, 0));
  assert_null(cpuexec_resolved_diagnostic(fx.resolved, cpuexec_resolved_diagnostic_count(fx.resolved)));
  assert_null(cpuexec_resolved_sharing_key(NULL));
  /* topology.h */
  assert_int_equal(cpuexec_topology_processor_count(NULL), 0);
  assert_int_equal(cpuexec_topology_core_count(NULL), 0);
  assert_int_equal(cpuexec_topology_package_count(NULL), 0);
  assert_int_equal(cpuexec_topology_kind_count(NULL), 0);
  assert_true(cpuexec_topology_cpu_quota(NULL) == 0.0);
  assert_int_equal(cpuexec_topology_smt_width(NULL), 0);
  assert_int_equal(cpuexec_topology_performance_core_count(NULL), 0);
  assert_int_equal(cpuexec_topology_processor_id(NULL, 0), -1);
  assert_int_equal(cpuexec_topology_processor_id(fx.topology, UINT32_MAX), -1);
  /* policy.h and errors.h: values outside the enums */
  assert_true(cpuexec_policy_equal(NULL, NULL));
  assert_false(cpuexec_policy_equal(NULL, &fx.policy));
  assert_false(cpuexec_policy_equal(&fx.policy, NULL));
  assert_null(cpuexec_spin_policy_name((cpuexec_spin_policy)99));
  assert_null(cpuexec_affinity_policy_name((cpuexec_affinity_policy)-1));
  assert_string_equal(cpuexec_error_string(-9999), "unknown error");
  assert_string_equal(cpuexec_error_name(12345), "CPUEXEC_UNKNOWN");
  /* pthreadpool.h */
  assert_int_equal(pthreadpool_get_threads_count(NULL), 1);
}

/* Size queries: a NULL buffer with size 0 measures, like snprintf. */
static void null_buffer_with_size_zero_measures_the_text(void **state) {
  (void)state;
  assert_true(cpuexec_policy_format(&fx.policy, NULL, 0) > 0);
  assert_true(cpuexec_resolved_describe(fx.resolved, CPUEXEC_FORMAT_TEXT, NULL, 0) > 0);
  assert_true(cpuexec_topology_describe(fx.topology, CPUEXEC_FORMAT_JSON, NULL, 0) > 0);
  assert_true(cpuexec_openmp_report_describe(NULL, 0) > 0);
  count_out = 0;
  assert_int_equal(cpuexec_openmp_report_get(NULL, 0, &count_out), 0);
}

/* NULL executors are documented as serial: the loop still runs. */
static int count_range(void *ctx, int64_t begin, int64_t end) {
  *(int64_t *)ctx += end - begin;
  return 0;
}

static int count_job(void *ctx, int32_t id, int32_t workers) {
  (void)id;
  (void)workers;
  *(int64_t *)ctx += 1;
  return 0;
}

static void null_executors_run_the_serial_loop(void **state) {
  (void)state;
  int64_t seen = 0;
  assert_int_equal(cpuexec_parallel_for(NULL, 10, 3, &seen, count_range, 0), 0);
  assert_int_equal(seen, 10);
  seen = 0;
  assert_int_equal(cpuexec_parallel_for_costed(NULL, 10, &cost_one, NULL, &seen, count_range), 0);
  assert_int_equal(seen, 10);
  seen = 0;
  assert_int_equal(cpuexec_range_executor_run(NULL, 10, &seen, count_range), 0);
  assert_int_equal(seen, 10);
  seen = 0;
  assert_int_equal(cpuexec_worker_jobs_run(NULL, 4, &seen, count_job), 0);
  assert_int_equal(seen, 4);
  cpuexec_range_executor of_null = cpuexec_range_executor_of(NULL);
  seen = 0;
  assert_int_equal(cpuexec_range_executor_run(&of_null, 10, &seen, count_range), 0);
  assert_int_equal(seen, 10);
  assert_int_equal(cpuexec_parallel_for_plan(NULL, 1000, &cost_one, NULL, &plan_out), 0);
  assert_int_equal(plan_out.participants, 1);
}

/* pthreadpool has no error return: a NULL function runs nothing. */
static void pthreadpool_null_function_runs_nothing(void **state) {
  (void)state;
  pthreadpool_t pool = pthreadpool_create(2);
  assert_non_null(pool);
  pthreadpool_t pools[] = {NULL, pool};
  for (size_t i = 0; i < 2; i++) {
    pthreadpool_parallelize_1d(pools[i], NULL, NULL, 100, 0);
    pthreadpool_parallelize_1d_tile_1d(pools[i], NULL, NULL, 100, 0, 0);
    pthreadpool_parallelize_2d(pools[i], NULL, NULL, 10, 10, 0);
    pthreadpool_parallelize_2d_tile_2d(pools[i], NULL, NULL, 10, 10, 0, 0, 0);
    pthreadpool_parallelize_6d_tile_2d(pools[i], NULL, NULL, 2, 2, 2, 2, 2, 2, 1, 1, 0);
  }
  pthreadpool_destroy(pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_arguments_fail_with_a_code_and_a_message_naming_them),
      cmocka_unit_test(destroy_release_and_init_of_null_are_no_ops),
      cmocka_unit_test(accessors_of_null_return_documented_neutral_values),
      cmocka_unit_test(null_buffer_with_size_zero_measures_the_text),
      cmocka_unit_test(null_executors_run_the_serial_loop),
      cmocka_unit_test(pthreadpool_null_function_runs_nothing),
  };
  return cmocka_run_group_tests_name("api_robustness", tests, setup, teardown);
}
