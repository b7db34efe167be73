/* The policy request: parsing, formatting, equality, the environment
 * variable and the enum names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/test_util.h"

#include <cpuexec.h>

#define MAX_IDS 8

/* A policy as a test writes it down. */
typedef struct expected {
  int32_t num_threads;
  cpuexec_spin_policy spin;
  uint64_t budget;
  cpuexec_affinity_policy affinity;
  bool nested;
  uint32_t count;
  int32_t ids[MAX_IDS];
} expected;

static cpuexec_policy make(const expected *e) {
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  p.num_threads = e->num_threads;
  p.spin_policy = e->spin;
  p.spin_budget = e->budget;
  p.affinity_policy = e->affinity;
  p.allow_nested_parallelism = e->nested;
  p.cpu_set_count = e->count;
  memcpy(p.cpu_set, e->ids, e->count * sizeof e->ids[0]);
  return p;
}

#define ADAPTIVE CPUEXEC_SPIN_ADAPTIVE
#define ITERS CPUEXEC_SPIN_FIXED_ITERATIONS
#define DURATION CPUEXEC_SPIN_FIXED_DURATION
#define PARK CPUEXEC_SPIN_PARK_IMMEDIATELY
/* The default affinity: unpinned (cpuexec/policy.h). */
#define PHYS CPUEXEC_AFFINITY_NONE
#define EXPLICIT CPUEXEC_AFFINITY_EXPLICIT

static const struct {
  const char *text;
  expected want;
} accepted[] = {
    {"", {0, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"num_threads=0", {0, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"num_threads=1", {1, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"num_threads=2147483647", {INT32_MAX, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"spin_policy=park_immediately", {0, PARK, 0, PHYS, false, 0, {0}}},
    {"spin_policy=adaptive,spin_budget=0", {0, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_iterations,spin_budget=1000", {0, ITERS, 1000, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_iterations,spin_budget=18446744073709551615", {0, ITERS, UINT64_MAX, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_duration,spin_budget=7ns", {0, DURATION, 7, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_duration,spin_budget=50us", {0, DURATION, 50000, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_duration,spin_budget=2ms", {0, DURATION, 2000000, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_duration,spin_budget=3s", {0, DURATION, 3000000000u, PHYS, false, 0, {0}}},
    {"spin_policy=fixed_duration,spin_budget=18446744073s", {0, DURATION, 18446744073000000000u, PHYS, false, 0, {0}}},
    /* spin_budget before spin_policy: the unit is checked once both are known. */
    {"spin_budget=50us,spin_policy=fixed_duration", {0, DURATION, 50000, PHYS, false, 0, {0}}},
    {"spin_budget=12,spin_policy=fixed_iterations", {0, ITERS, 12, PHYS, false, 0, {0}}},
    {"affinity_policy=none", {0, ADAPTIVE, 0, CPUEXEC_AFFINITY_NONE, false, 0, {0}}},
    {"affinity_policy=physical_cores", {0, ADAPTIVE, 0, CPUEXEC_AFFINITY_PHYSICAL_CORES, false, 0, {0}}},
    {"affinity_policy=performance_cores", {0, ADAPTIVE, 0, CPUEXEC_AFFINITY_PERFORMANCE_CORES, false, 0, {0}}},
    {"affinity_policy=physical_then_smt", {0, ADAPTIVE, 0, CPUEXEC_AFFINITY_PHYSICAL_THEN_SMT, false, 0, {0}}},
    {"allow_nested_parallelism=true", {0, ADAPTIVE, 0, PHYS, true, 0, {0}}},
    {"allow_nested_parallelism=false", {0, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"affinity_policy=explicit,cpu_set=5", {0, ADAPTIVE, 0, EXPLICIT, false, 1, {5}}},
    {"affinity_policy=explicit,cpu_set=0,2,4-7", {0, ADAPTIVE, 0, EXPLICIT, false, 6, {0, 2, 4, 5, 6, 7}}},
    /* Order is kept: the first id is the caller's. */
    {"affinity_policy=explicit,cpu_set=3,0-2", {0, ADAPTIVE, 0, EXPLICIT, false, 4, {3, 0, 1, 2}}},
    {"affinity_policy=explicit,cpu_set=4-4", {0, ADAPTIVE, 0, EXPLICIT, false, 1, {4}}},
    {"affinity_policy=explicit,cpu_set=2147483647", {0, ADAPTIVE, 0, EXPLICIT, false, 1, {INT32_MAX}}},
    /* cpu_set before the key that makes it valid, and keys after its list. */
    {"cpu_set=1,3,affinity_policy=explicit,num_threads=2", {2, ADAPTIVE, 0, EXPLICIT, false, 2, {1, 3}}},
    {"cpu_set=,num_threads=3", {3, ADAPTIVE, 0, PHYS, false, 0, {0}}},
    {"num_threads=4,spin_policy=fixed_duration,spin_budget=50us,affinity_policy=explicit,cpu_set=0,2",
     {4, DURATION, 50000, EXPLICIT, false, 2, {0, 2}}},
    {"allow_nested_parallelism=true,inherit_fp_environment=false,participation=take_over,cpu_set=8-9,spin_budget=100,affinity_policy=explicit,"
     "spin_policy=fixed_iterations,num_threads=2",
     {2, ITERS, 100, EXPLICIT, true, 2, {8, 9}}},
};

static void accepted_texts_give_their_fields(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    cpuexec_policy got, want = make(&accepted[i].want);
    memset(&got, 0xA5, sizeof got); /* parse must set every field, not rely on the caller */
    int rc = cpuexec_policy_parse(accepted[i].text, &got);
    if (rc != 0)
      fail_msg("'%s' rejected: %s", accepted[i].text, cpuexec_error_message());
    if (!cpuexec_policy_equal(&got, &want))
      fail_msg("'%s' parsed to other fields (num_threads %d spin %d budget %llu affinity %d count %u)",
               accepted[i].text, got.num_threads, got.spin_policy, (unsigned long long)got.spin_budget,
               got.affinity_policy, got.cpu_set_count);
  }
}

/* Each rejection: the text, the key the message must start with, and a
 * fragment it must contain (the value given or what is allowed). */
static const struct {
  const char *text;
  const char *key;
  const char *fragment;
} rejected[] = {
    /* Structure. */
    {"num_threads", "policy:", "'num_threads' is not key=value"},
    {"4", "policy:", "'4' is not key=value"},
    {"num_threads=4,5", "policy:", "'5' is not key=value"},
    {"=4", "policy:", "'=4' has no key"},
    {"threads=4", "policy:", "unknown key 'threads'"},
    {"NUM_THREADS=4", "policy:", "unknown key 'NUM_THREADS'"},
    {"num_threads=4,", "policy:", "empty item"},
    {",num_threads=4", "policy:", "empty item"},
    {"num_threads=4,,spin_policy=adaptive", "policy:", "empty item"},
    {"num_threads= 4", "policy:", "whitespace at offset 12"},
    {"num_threads=4\n", "policy:", "whitespace"},
    {"num_threads=4,spin_policy=adaptive,affinity_policy=\tnone", "policy:", "whitespace at offset 51 (in 'affinity_policy=\tnone')"},
    {" num_threads=4", "policy:", "whitespace at offset 0"},
    {"num_threads=4,num_threads=4", "num_threads:", "given twice"},
    {"cpu_set=1,cpu_set=2,affinity_policy=explicit", "cpu_set:", "given twice"},
    {"spin_policy=adaptive,spin_policy=adaptive", "spin_policy:", "given twice"},
    /* num_threads. */
    {"num_threads=", "num_threads:", "empty value"},
    {"num_threads=-3", "num_threads:", "'-3' is negative"},
    {"num_threads=-99999999999", "num_threads:", "is negative"},
    {"num_threads=-0", "num_threads:", "not a decimal"},
    {"num_threads=+4", "num_threads:", "'+4' is not a decimal"},
    {"num_threads=0x10", "num_threads:", "'0x10' is not a decimal"},
    {"num_threads=010", "num_threads:", "leading zero"},
    {"num_threads=4x", "num_threads:", "'4x' is not a decimal"},
    {"num_threads=4.0", "num_threads:", "'4.0' is not a decimal"},
    {"num_threads=2147483648", "num_threads:", "above 2147483647"},
    {"num_threads=99999999999999999999999", "num_threads:", "above 2147483647"},
    {"num_threads=4=5", "num_threads:", "'4=5'"},
    /* spin_policy and spin_budget. */
    {"spin_policy=", "spin_policy:", "empty value"},
    {"spin_policy=Adaptive", "spin_policy:", "'Adaptive' is not a spin policy; use adaptive"},
    {"spin_policy=spin", "spin_policy:", "park_immediately"},
    {"spin_policy=fixed_iterations", "spin_budget:", "needs a budget above 0"},
    {"spin_policy=fixed_duration", "spin_budget:", "needs a budget above 0"},
    {"spin_policy=fixed_iterations,spin_budget=0", "spin_budget:", "needs a budget above 0"},
    {"spin_policy=fixed_duration,spin_budget=0ns", "spin_budget:", "needs a budget above 0"},
    {"spin_budget=5", "spin_budget:", "5 with spin_policy=adaptive"},
    {"spin_policy=park_immediately,spin_budget=1", "spin_budget:", "1 with spin_policy=park_immediately"},
    {"spin_budget=50us", "spin_budget:", "'50us' is a duration, but spin_policy=adaptive"},
    {"spin_budget=50us,spin_policy=fixed_iterations", "spin_budget:", "takes a plain iteration count"},
    {"spin_policy=fixed_duration,spin_budget=50", "spin_budget:", "'50' has no unit"},
    {"spin_policy=fixed_duration,spin_budget=50usec", "spin_budget:", "'50usec' is neither"},
    {"spin_policy=fixed_duration,spin_budget=50US", "spin_budget:", "'50US' is neither"},
    {"spin_policy=fixed_duration,spin_budget=us", "spin_budget:", "'us' is neither"},
    {"spin_policy=fixed_duration,spin_budget=1.5ms", "spin_budget:", "'1.5ms' is neither"},
    {"spin_policy=fixed_iterations,spin_budget=0x10", "spin_budget:", "'0x10' is neither"},
    {"spin_policy=fixed_iterations,spin_budget=-1", "spin_budget:", "'-1' is neither"},
    {"spin_policy=fixed_iterations,spin_budget=007", "spin_budget:", "leading zero"},
    {"spin_policy=fixed_iterations,spin_budget=18446744073709551616", "spin_budget:", "is above"},
    {"spin_policy=fixed_duration,spin_budget=18446744074s", "spin_budget:", "is above 18446744073"},
    {"spin_policy=fixed_duration,spin_budget=18446744073710ms", "spin_budget:", "is above 18446744073709"},
    {"spin_policy=fixed_duration,spin_budget=", "spin_budget:", "empty value"},
    /* affinity_policy and cpu_set. */
    {"affinity_policy=", "affinity_policy:", "empty value"},
    {"affinity_policy=cores", "affinity_policy:", "'cores' is not an affinity policy"},
    {"affinity_policy=explicit", "affinity_policy:", "explicit without a cpu_set"},
    {"affinity_policy=explicit,cpu_set=", "affinity_policy:", "explicit without a cpu_set"},
    {"cpu_set=0,1", "cpu_set:", "affinity_policy=none"},
    {"affinity_policy=none,cpu_set=0", "cpu_set:", "affinity_policy=none"},
    {"affinity_policy=explicit,cpu_set=7-4", "cpu_set:", "'7-4' is a descending range"},
    {"affinity_policy=explicit,cpu_set=0,7-4", "cpu_set:", "'7-4' is a descending range"},
    {"affinity_policy=explicit,cpu_set=0-15:2", "cpu_set:", "'0-15:2' is not a processor id or range"},
    {"affinity_policy=explicit,cpu_set=-1", "cpu_set:", "'-1' is not a processor id"},
    {"affinity_policy=explicit,cpu_set=1--3", "cpu_set:", "'1--3' is not a processor id"},
    {"affinity_policy=explicit,cpu_set=1-", "cpu_set:", "'1-' is not a processor id"},
    {"affinity_policy=explicit,cpu_set=0x3", "cpu_set:", "'0x3' is not a processor id"},
    {"affinity_policy=explicit,cpu_set=03", "cpu_set:", "leading zero"},
    {"affinity_policy=explicit,cpu_set=2147483648", "cpu_set:", "above 2147483647"},
    {"affinity_policy=explicit,cpu_set=0,1,1", "cpu_set:", "processor 1 is listed twice"},
    {"affinity_policy=explicit,cpu_set=0-3,2", "cpu_set:", "processor 2 is listed twice"},
    {"affinity_policy=explicit,cpu_set=0-1023,1024", "cpu_set:", "longer than 1024"},
    {"affinity_policy=explicit,cpu_set=0-2147483647", "cpu_set:", "longer than 1024"},
    {"affinity_policy=explicit,cpu_set=,3", "policy:", "'3' is not key=value"},
    /* allow_nested_parallelism. */
    {"allow_nested_parallelism=", "allow_nested_parallelism:", "empty value"},
    {"allow_nested_parallelism=1", "allow_nested_parallelism:", "'1' is not a boolean; use true or false"},
    {"allow_nested_parallelism=TRUE", "allow_nested_parallelism:", "'TRUE'"},
    {"allow_nested_parallelism=yes", "allow_nested_parallelism:", "'yes'"},
};

static void rejected_texts_name_the_key_and_leave_the_policy_untouched(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
    cpuexec_policy before, p;
    memset(&before, 0x5A, sizeof before);
    p = before;
    int rc = cpuexec_policy_parse(rejected[i].text, &p);
    const char *msg = cpuexec_error_message();
    if (rc != CPUEXEC_EINVAL)
      fail_msg("'%s' gave %d, not CPUEXEC_EINVAL", rejected[i].text, rc);
    if (strncmp(msg, rejected[i].key, strlen(rejected[i].key)) != 0 || !strstr(msg, rejected[i].fragment))
      fail_msg("'%s': message '%s' lacks '%s' ... '%s'", rejected[i].text, msg, rejected[i].key,
               rejected[i].fragment);
    if (memcmp(&before, &p, sizeof p) != 0)
      fail_msg("'%s' changed the policy although it was rejected", rejected[i].text);
  }
}

static void parse_rejects_null_arguments(void **state) {
  (void)state;
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse(NULL, &p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "text is NULL"));
  assert_int_equal(cpuexec_policy_parse("", NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "policy is NULL"));
}

static void long_bad_values_are_quoted_briefly_and_the_rule_survives(void **state) {
  (void)state;
  char text[600] = "affinity_policy=";
  memset(text + strlen(text), 'x', 500);
  text[516] = '\0';
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse(text, &p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "use none, physical_cores"));
}

static const struct {
  expected policy;
  const char *text;
} canonical[] = {
    {{0, ADAPTIVE, 0, CPUEXEC_AFFINITY_PHYSICAL_CORES, false, 0, {0}},
     "num_threads=0,spin_policy=adaptive,spin_budget=0,affinity_policy=physical_cores,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{8, DURATION, 50000, CPUEXEC_AFFINITY_PERFORMANCE_CORES, true, 0, {0}},
     "num_threads=8,spin_policy=fixed_duration,spin_budget=50us,affinity_policy=performance_cores,"
     "allow_nested_parallelism=true,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{2, DURATION, 3000000000u, CPUEXEC_AFFINITY_PHYSICAL_CORES, false, 0, {0}},
     "num_threads=2,spin_policy=fixed_duration,spin_budget=3s,affinity_policy=physical_cores,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{2, DURATION, 1500000, CPUEXEC_AFFINITY_PHYSICAL_CORES, false, 0, {0}},
     "num_threads=2,spin_policy=fixed_duration,spin_budget=1500us,affinity_policy=physical_cores,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{2, DURATION, 2000000, CPUEXEC_AFFINITY_PHYSICAL_CORES, false, 0, {0}},
     "num_threads=2,spin_policy=fixed_duration,spin_budget=2ms,affinity_policy=physical_cores,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{2, DURATION, 1001, CPUEXEC_AFFINITY_PHYSICAL_CORES, false, 0, {0}},
     "num_threads=2,spin_policy=fixed_duration,spin_budget=1001ns,affinity_policy=physical_cores,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{1, ITERS, 1000000, CPUEXEC_AFFINITY_NONE, false, 0, {0}},
     "num_threads=1,spin_policy=fixed_iterations,spin_budget=1000000,affinity_policy=none,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set="},
    {{6, PARK, 0, EXPLICIT, false, 6, {0, 2, 4, 5, 6, 7}},
     "num_threads=6,spin_policy=park_immediately,spin_budget=0,affinity_policy=explicit,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set=0,2,4-7"},
    {{5, PARK, 0, EXPLICIT, false, 5, {3, 0, 1, 2, 9}},
     "num_threads=5,spin_policy=park_immediately,spin_budget=0,affinity_policy=explicit,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set=3,0-2,9"},
    {{3, PARK, 0, EXPLICIT, false, 3, {7, 6, 5}},
     "num_threads=3,spin_policy=park_immediately,spin_budget=0,affinity_policy=explicit,"
     "allow_nested_parallelism=false,inherit_fp_environment=false,participation=take_over,cpu_set=7,6,5"},
};

static void format_writes_every_key_in_canonical_order(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof canonical / sizeof canonical[0]; i++) {
    cpuexec_policy p = make(&canonical[i].policy), back;
    char buf[512];
    int len = cpuexec_policy_format(&p, buf, sizeof buf);
    assert_int_equal(len, (int)strlen(canonical[i].text));
    assert_string_equal(buf, canonical[i].text);
    assert_int_equal(cpuexec_policy_parse(buf, &back), 0);
    assert_true(cpuexec_policy_equal(&p, &back));
  }
}

static void format_truncates_like_snprintf(void **state) {
  (void)state;
  cpuexec_policy p = make(&canonical[7].policy);
  const char *full = canonical[7].text;
  int n = (int)strlen(full);
  for (size_t size = 0; size <= (size_t)n + 1; size++) {
    char buf[256];
    memset(buf, '#', sizeof buf);
    assert_int_equal(cpuexec_policy_format(&p, size ? buf : NULL, size), n);
    if (size > 0) {
      assert_int_equal(strlen(buf), size - 1 < (size_t)n ? size - 1 : (size_t)n);
      assert_memory_equal(buf, full, strlen(buf));
    }
    assert_int_equal(buf[size], '#'); /* nothing written at or past size */
  }
}

static void format_rejects_what_it_cannot_write(void **state) {
  (void)state;
  cpuexec_policy p;
  char buf[256];
  cpuexec_policy_init(&p);
  assert_int_equal(cpuexec_policy_format(NULL, buf, sizeof buf), CPUEXEC_EINVAL);
  assert_int_equal(cpuexec_policy_format(&p, NULL, 8), CPUEXEC_EINVAL);
  p.spin_policy = (cpuexec_spin_policy)9;
  assert_int_equal(cpuexec_policy_format(&p, buf, sizeof buf), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "spin_policy: 9"));
  cpuexec_policy_init(&p);
  p.affinity_policy = (cpuexec_affinity_policy)-1;
  assert_int_equal(cpuexec_policy_format(&p, buf, sizeof buf), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "affinity_policy: -1"));
  cpuexec_policy_init(&p);
  p.cpu_set_count = CPUEXEC_CPU_SET_MAX + 1;
  assert_int_equal(cpuexec_policy_format(&p, buf, sizeof buf), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "cpu_set_count: 1025"));
}

/* A small deterministic generator, so a failing sweep replays exactly. */
static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static cpuexec_policy random_valid_policy(uint64_t *s) {
  static const uint64_t scales[] = {1, 1000, 1000000, 1000000000};
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  uint64_t r = next(s);
  p.num_threads = r % 4 == 0 ? (int32_t)(next(s) % ((uint64_t)INT32_MAX + 1)) : (int32_t)(r % 65);
  p.spin_policy = (cpuexec_spin_policy)(next(s) % 4);
  uint64_t scale = scales[next(s) % 4];
  switch (p.spin_policy) {
  case CPUEXEC_SPIN_FIXED_ITERATIONS:
    p.spin_budget = next(s) % 2 ? 1 + next(s) % 100000 : 1 + next(s) % (UINT64_MAX - 1);
    break;
  case CPUEXEC_SPIN_FIXED_DURATION:
    p.spin_budget = scale * (1 + next(s) % (UINT64_MAX / scale));
    break;
  default:
    break;
  }
  p.affinity_policy = (cpuexec_affinity_policy)(next(s) % 5);
  p.allow_nested_parallelism = next(s) % 2;
  p.inherit_fp_environment = next(s) % 3 == 0;
  p.participation = (cpuexec_participation)(next(s) % 2);
  p.node_budget = (cpuexec_node_budget)(next(s) % 4);
  if (p.affinity_policy == CPUEXEC_AFFINITY_EXPLICIT) {
    /* Distinct ids in runs and jumps, in no particular order. */
    uint32_t want = 1 + (uint32_t)(next(s) % (next(s) % 8 == 0 ? CPUEXEC_CPU_SET_MAX : 12));
    while ((uint32_t)p.cpu_set_count < want) {
      int32_t id = (int32_t)(next(s) % (next(s) % 16 == 0 ? (uint64_t)INT32_MAX + 1 : 4096));
      uint32_t run = 1 + (uint32_t)(next(s) % 6);
      for (uint32_t k = 0; k < run && (uint32_t)p.cpu_set_count < want && id <= INT32_MAX - (int32_t)k; k++) {
        int32_t candidate = id + (int32_t)k;
        bool dup = false;
        for (uint32_t j = 0; j < (uint32_t)p.cpu_set_count && !dup; j++)
          dup = p.cpu_set[j] == candidate;
        if (!dup)
          p.cpu_set[p.cpu_set_count++] = candidate;
      }
    }
  }
  return p;
}

static void random_valid_policies_round_trip_through_text(void **state) {
  (void)state;
  static char text[16384], again[16384];
  uint64_t seed = 0x9E3779B97F4A7C15u;
  for (int i = 0; i < 3000; i++) {
    cpuexec_policy p = random_valid_policy(&seed), back;
    int len = cpuexec_policy_format(&p, text, sizeof text);
    assert_true(len > 0 && (size_t)len < sizeof text);
    if (cpuexec_policy_parse(text, &back) != 0)
      fail_msg("sweep %d: '%.200s' did not parse back: %s", i, text, cpuexec_error_message());
    if (!cpuexec_policy_equal(&p, &back))
      fail_msg("sweep %d: '%.200s' parsed back to a different policy", i, text);
    assert_int_equal(cpuexec_policy_format(&back, again, sizeof again), len);
    assert_string_equal(text, again);
  }
}

/* The field-by-field check gives parse's verdict and message for each rule. */
static void validate_applies_the_request_rules_to_built_policies(void **state) {
  (void)state;
  cpuexec_policy p;
  cpuexec_policy_init(&p);
  assert_int_equal(cpuexec_policy_validate(&p), 0);
  assert_int_equal(cpuexec_policy_validate(NULL), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "policy: NULL"));
  static const struct {
    int field;
    const char *message;
  } rows[] = {
      {0, "num_threads: -2 is negative"},
      {1, "spin_policy: 9 is not a spin policy"},
      {2, "affinity_policy: 7 is not an affinity policy"},
      {3, "spin_budget: 0 with spin_policy=fixed_duration"},
      {4, "spin_budget: 5 with spin_policy=adaptive"},
      {5, "cpu_set: given with affinity_policy=none"},
      {6, "affinity_policy: explicit without a cpu_set"},
      {7, "cpu_set: processor 3 is listed twice"},
      {8, "cpu_set: entry 1 is -4"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cpuexec_policy_init(&p);
    switch (rows[i].field) {
    case 0: p.num_threads = -2; break;
    case 1: p.spin_policy = (cpuexec_spin_policy)9; break;
    case 2: p.affinity_policy = (cpuexec_affinity_policy)7; break;
    case 3: p.spin_policy = CPUEXEC_SPIN_FIXED_DURATION; break;
    case 4: p.spin_budget = 5; break;
    case 5: p.cpu_set_count = 1; break;
    case 6: p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT; break;
    case 7: p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT; p.cpu_set_count = 2; p.cpu_set[0] = 3; p.cpu_set[1] = 3; break;
    default: p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT; p.cpu_set_count = 2; p.cpu_set[1] = -4; break;
    }
    if (cpuexec_policy_validate(&p) != CPUEXEC_EINVAL || strstr(cpuexec_error_message(), rows[i].message) == NULL)
      fail_msg("row %zu: want \"%s\", got \"%s\"", i, rows[i].message, cpuexec_error_message());
  }
}

static void equal_compares_every_field_and_only_the_listed_ids(void **state) {
  (void)state;
  cpuexec_policy a, b;
  assert_int_equal(cpuexec_policy_parse("num_threads=3,affinity_policy=explicit,cpu_set=1,2,3", &a), 0);
  b = a;
  b.cpu_set[3] = 99; /* past cpu_set_count */
  assert_true(cpuexec_policy_equal(&a, &b));
  assert_true(cpuexec_policy_equal(&a, &a));
  assert_false(cpuexec_policy_equal(&a, NULL));
  assert_true(cpuexec_policy_equal(NULL, NULL));
  for (int field = 0; field < 10; field++) {
    b = a;
    switch (field) {
    case 0: b.num_threads = 4; break;
    case 1: b.spin_policy = CPUEXEC_SPIN_PARK_IMMEDIATELY; break;
    case 2: b.spin_budget = 1; break;
    case 3: b.affinity_policy = CPUEXEC_AFFINITY_NONE; break;
    case 4: b.cpu_set_count = 2; break;
    case 5: b.cpu_set[2] = 4; break;
    case 6: b.allow_nested_parallelism = true; break;
    case 7: b.inherit_fp_environment = true; break;
    case 8: b.participation = CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT; break;
    default: b.node_budget = CPUEXEC_NODE_BUDGET_HOST; break;
    }
    if (cpuexec_policy_equal(&a, &b))
      fail_msg("a change of field %d went unnoticed", field);
  }
}

/* The participation key (cpuexec/policy.h): both rules parse, format and
 * compare; anything else is refused naming the key and the choices. */
static void participation_is_a_key_of_the_text_form(void **state) {
  (void)state;
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse("num_threads=2,participation=every_participant", &p), 0);
  assert_int_equal(p.participation, CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT);
  char text[256];
  assert_true(cpuexec_policy_format(&p, text, sizeof text) > 0);
  assert_non_null(strstr(text, ",participation=every_participant,cpu_set="));
  cpuexec_policy back;
  assert_int_equal(cpuexec_policy_parse(text, &back), 0);
  assert_true(cpuexec_policy_equal(&p, &back));
  assert_int_equal(cpuexec_policy_parse("participation=take_over", &p), 0);
  assert_int_equal(p.participation, CPUEXEC_PARTICIPATION_TAKE_OVER);
  assert_int_equal(cpuexec_policy_parse("participation=every", &p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "participation: 'every' is not a participation rule"));
  assert_non_null(strstr(cpuexec_error_message(), "take_over or every_participant"));
  assert_string_equal(cpuexec_participation_name(CPUEXEC_PARTICIPATION_EVERY_PARTICIPANT), "every_participant");
  assert_null(cpuexec_participation_name((cpuexec_participation)7));
  cpuexec_policy_init(&p);
  p.participation = (cpuexec_participation)7;
  assert_int_equal(cpuexec_policy_validate(&p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "participation: 7 is not a participation rule"));
}

/* The node_budget key (cpuexec/policy.h): every choice parses, formats and
 * compares; the default is not written (texts from before the key read
 * the same); anything else is refused naming the key and the choices. */
static void node_budget_is_a_key_of_the_text_form(void **state) {
  (void)state;
  static const char *const names[] = {"default", "cgroup", "host", "off"};
  for (int b = CPUEXEC_NODE_BUDGET_DEFAULT; b <= CPUEXEC_NODE_BUDGET_OFF; b++) {
    char in[64], text[256];
    snprintf(in, sizeof in, "num_threads=2,node_budget=%s", names[b]);
    cpuexec_policy p, back;
    assert_int_equal(cpuexec_policy_parse(in, &p), 0);
    assert_int_equal(p.node_budget, b);
    assert_string_equal(cpuexec_node_budget_name(p.node_budget), names[b]);
    assert_true(cpuexec_policy_format(&p, text, sizeof text) > 0);
    snprintf(in, sizeof in, ",node_budget=%s,cpu_set=", names[b]);
    if (b == CPUEXEC_NODE_BUDGET_DEFAULT)
      assert_null(strstr(text, "node_budget"));
    else
      assert_non_null(strstr(text, in));
    assert_int_equal(cpuexec_policy_parse(text, &back), 0);
    assert_true(cpuexec_policy_equal(&p, &back));
  }
  cpuexec_policy p;
  assert_int_equal(cpuexec_policy_parse("node_budget=none", &p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "node_budget: 'none' is not a node budget choice"));
  assert_non_null(strstr(cpuexec_error_message(), "default, cgroup, host or off"));
  assert_int_equal(cpuexec_policy_parse("node_budget=off,node_budget=host", &p), CPUEXEC_EINVAL);
  assert_null(cpuexec_node_budget_name((cpuexec_node_budget)9));
  cpuexec_policy_init(&p);
  assert_int_equal(p.node_budget, CPUEXEC_NODE_BUDGET_DEFAULT);
  p.node_budget = (cpuexec_node_budget)9;
  assert_int_equal(cpuexec_policy_validate(&p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "node_budget: 9 is not a node budget choice"));
  assert_true(cpuexec_policy_format(&p, NULL, 0) < 0);
}

static void init_sets_the_documented_defaults(void **state) {
  (void)state;
  cpuexec_policy p;
  memset(&p, 0xFF, sizeof p);
  cpuexec_policy_init(&p);
  assert_int_equal(p.num_threads, 0);
  assert_int_equal(p.spin_policy, CPUEXEC_SPIN_ADAPTIVE);
  assert_int_equal(p.spin_budget, 0);
  assert_int_equal(p.affinity_policy, CPUEXEC_AFFINITY_NONE);
  assert_int_equal(p.cpu_set_count, 0);
  assert_false(p.allow_nested_parallelism);
  assert_int_equal(p.struct_size, sizeof p);
  for (size_t i = 0; i < sizeof p.reserved_ / sizeof p.reserved_[0]; i++) assert_int_equal(p.reserved_[i], 0);
}

/* {0} is the defaults too, and any struct_size other than 0 or this
 * layout's is refused rather than read with the wrong layout. */
static void zero_initialised_policy_is_the_default_and_struct_size_is_checked(void **state) {
  (void)state;
  cpuexec_policy zero = {0}, init;
  cpuexec_policy_init(&init);
  assert_true(cpuexec_policy_equal(&zero, &init));
  char a[256], b[256];
  assert_true(cpuexec_policy_format(&zero, a, sizeof a) > 0);
  assert_true(cpuexec_policy_format(&init, b, sizeof b) > 0);
  assert_string_equal(a, b);
  cpuexec_resolved *r = NULL;
  assert_int_equal(cpuexec_policy_resolve(&zero, NULL, &r), 0);
  assert_int_equal(cpuexec_resolved_request(r)->affinity_policy, CPUEXEC_AFFINITY_NONE);
  cpuexec_resolved_destroy(r);
  cpuexec_policy odd = init;
  odd.struct_size = 12;
  assert_int_equal(cpuexec_policy_resolve(&odd, NULL, &r), CPUEXEC_EINVAL);
  assert_null(r);
  assert_non_null(strstr(cpuexec_error_message(), "struct_size: 12"));
}

static void environment_variable_uses_the_same_grammar(void **state) {
  (void)state;
  cpuexec_policy p, want;
  cpuexec_policy_init(&want);

  unsetenv("CPUEXEC_POLICY");
  memset(&p, 0x11, sizeof p);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  assert_true(cpuexec_policy_equal(&p, &want));

  setenv("CPUEXEC_POLICY", "", 1);
  memset(&p, 0x11, sizeof p);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  assert_true(cpuexec_policy_equal(&p, &want));

  setenv("CPUEXEC_POLICY", "num_threads=3,spin_policy=fixed_duration,spin_budget=2ms,affinity_policy=explicit,"
                           "cpu_set=2,0-1", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  assert_int_equal(cpuexec_policy_parse("cpu_set=2,0-1,affinity_policy=explicit,spin_budget=2000us,"
                                        "spin_policy=fixed_duration,num_threads=3", &want), 0);
  assert_true(cpuexec_policy_equal(&p, &want));

  cpuexec_policy before = p;
  setenv("CPUEXEC_POLICY", "num_threads=-2", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), CPUEXEC_EINVAL);
  assert_string_equal(cpuexec_error_message(),
                      "CPUEXEC_POLICY: num_threads: '-2' is negative; use 0 for the topology default, 1 for serial "
                      "or a participant count");
  assert_memory_equal(&before, &p, sizeof p);

  setenv("CPUEXEC_POLICY", "nthreads=2", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "CPUEXEC_POLICY: policy: unknown key 'nthreads'"));

  /* The environment's one whitespace rule (as for CPUEXEC_NUM_THREADS):
   * blanks around the value are ignored, blanks inside it are not. */
  setenv("CPUEXEC_POLICY", " \tnum_threads=4 \n", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  assert_int_equal(p.num_threads, 4);
  setenv("CPUEXEC_POLICY", "num_threads=4 ", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  assert_int_equal(p.num_threads, 4);
  setenv("CPUEXEC_POLICY", "  ", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  cpuexec_policy defaults;
  cpuexec_policy_init(&defaults);
  assert_true(cpuexec_policy_equal(&p, &defaults));
  setenv("CPUEXEC_POLICY", "num_threads=4, spin_policy=adaptive", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "CPUEXEC_POLICY: policy: whitespace"));
  /* The parser itself stays strict. */
  assert_int_equal(cpuexec_policy_parse("num_threads=4 ", &p), CPUEXEC_EINVAL);
  unsetenv("CPUEXEC_POLICY");
  assert_int_equal(cpuexec_policy_from_environment(NULL), CPUEXEC_EINVAL);
}

static void enum_names_match_the_text_form(void **state) {
  (void)state;
  static const char *const spins[] = {"adaptive", "fixed_iterations", "fixed_duration", "park_immediately"};
  static const char *const affinities[] = {"none", "physical_cores", "performance_cores", "physical_then_smt",
                                           "explicit"};
  char text[64];
  cpuexec_policy p;
  for (int s = 0; s < 4; s++) {
    assert_string_equal(cpuexec_spin_policy_name((cpuexec_spin_policy)s), spins[s]);
    snprintf(text, sizeof text, "spin_policy=%s,spin_budget=%s", spins[s],
             s == CPUEXEC_SPIN_FIXED_ITERATIONS ? "1" : s == CPUEXEC_SPIN_FIXED_DURATION ? "1ns" : "0");
    assert_int_equal(cpuexec_policy_parse(text, &p), 0);
    assert_int_equal(p.spin_policy, s);
  }
  for (int a = 0; a < 5; a++) {
    assert_string_equal(cpuexec_affinity_policy_name((cpuexec_affinity_policy)a), affinities[a]);
    snprintf(text, sizeof text, "affinity_policy=%s%s", affinities[a], a == CPUEXEC_AFFINITY_EXPLICIT ? ",cpu_set=0" : "");
    assert_int_equal(cpuexec_policy_parse(text, &p), 0);
    assert_int_equal(p.affinity_policy, a);
  }
  assert_null(cpuexec_spin_policy_name((cpuexec_spin_policy)4));
  assert_null(cpuexec_spin_policy_name((cpuexec_spin_policy)-1));
  assert_null(cpuexec_affinity_policy_name((cpuexec_affinity_policy)5));
  assert_null(cpuexec_affinity_policy_name((cpuexec_affinity_policy)-1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_sets_the_documented_defaults),
      cmocka_unit_test(zero_initialised_policy_is_the_default_and_struct_size_is_checked),
      cmocka_unit_test(accepted_texts_give_their_fields),
      cmocka_unit_test(rejected_texts_name_the_key_and_leave_the_policy_untouched),
      cmocka_unit_test(parse_rejects_null_arguments),
      cmocka_unit_test(long_bad_values_are_quoted_briefly_and_the_rule_survives),
      cmocka_unit_test(format_writes_every_key_in_canonical_order),
      cmocka_unit_test(format_truncates_like_snprintf),
      cmocka_unit_test(format_rejects_what_it_cannot_write),
      cmocka_unit_test(random_valid_policies_round_trip_through_text),
      cmocka_unit_test(validate_applies_the_request_rules_to_built_policies),
      cmocka_unit_test(equal_compares_every_field_and_only_the_listed_ids),
      cmocka_unit_test(participation_is_a_key_of_the_text_form),
      cmocka_unit_test(node_budget_is_a_key_of_the_text_form),
      cmocka_unit_test(environment_variable_uses_the_same_grammar),
      cmocka_unit_test(enum_names_match_the_text_form),
  };
  return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
