/* Internals of the policy area, linked from the convenience library:
 * strict decimals, Linux cpulists, and the request rules applied to
 * policies built field by field (the path cpuexec_policy_resolve() takes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "support/test_util.h"

#include <cpuexec.h>

#include "policy/cpulist.h"
#include "core/text.h"
#include "policy/policy_check.h"

static void decimals_are_strict_and_bounded(void **state) {
  (void)state;
  static const struct {
    const char *text;
    uint64_t max;
    cpuexec__decimal_status status;
    uint64_t value;
  } cases[] = {
      {"0", 0, CPUEXEC__DECIMAL_OK, 0},
      {"1", 0, CPUEXEC__DECIMAL_TOO_LARGE, 0},
      {"9", 9, CPUEXEC__DECIMAL_OK, 9},
      {"10", 9, CPUEXEC__DECIMAL_TOO_LARGE, 0},
      {"18446744073709551615", UINT64_MAX, CPUEXEC__DECIMAL_OK, UINT64_MAX},
      {"18446744073709551616", UINT64_MAX, CPUEXEC__DECIMAL_TOO_LARGE, 0},
      {"99999999999999999999", UINT64_MAX, CPUEXEC__DECIMAL_TOO_LARGE, 0},
      {"2147483647", INT32_MAX, CPUEXEC__DECIMAL_OK, INT32_MAX},
      {"2147483648", INT32_MAX, CPUEXEC__DECIMAL_TOO_LARGE, 0},
      {"", 10, CPUEXEC__DECIMAL_EMPTY, 0},
      {"00", 10, CPUEXEC__DECIMAL_LEADING_ZERO, 0},
      {"0x1", 10, CPUEXEC__DECIMAL_NOT_DIGIT, 0},
      {"+1", 10, CPUEXEC__DECIMAL_NOT_DIGIT, 0},
      {"1 ", 10, CPUEXEC__DECIMAL_NOT_DIGIT, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t value = 12345;
    cpuexec__decimal_status status = cpuexec__decimal_parse(cases[i].text, strlen(cases[i].text), cases[i].max, &value);
    if (status != cases[i].status)
      fail_msg("'%s' (max %llu): status %d, want %d", cases[i].text, (unsigned long long)cases[i].max, status,
               cases[i].status);
    assert_int_equal(value, status == CPUEXEC__DECIMAL_OK ? cases[i].value : 12345);
  }
}

static void cpulists_parse_in_order(void **state) {
  (void)state;
  int32_t ids[8];
  uint32_t count = 0;
  assert_int_equal(cpuexec__cpulist_parse("cpus", "", 0, ids, 8, &count), 0);
  assert_int_equal(count, 0);
  assert_int_equal(cpuexec__cpulist_parse("cpus", "6,0-2,4", 7, ids, 8, &count), 0);
  assert_int_equal(count, 5);
  static const int32_t want[] = {6, 0, 1, 2, 4};
  assert_memory_equal(ids, want, sizeof want);
  /* Appends after what is there; only the first len characters count. */
  assert_int_equal(cpuexec__cpulist_parse("cpus", "9-10,garbage", 4, ids, 8, &count), 0);
  assert_int_equal(count, 7);
  assert_int_equal(ids[5], 9);
  assert_int_equal(ids[6], 10);
}

static void cpulist_failures_name_the_field_and_keep_the_count(void **state) {
  (void)state;
  static const struct {
    const char *text;
    const char *fragment;
  } cases[] = {
      {"1,,2", "has an empty item"},       {"1,", "has an empty item"},
      {",1", "has an empty item"},         {"3-1", "'3-1' is a descending range; write it low-high (1-3)"},
      {"a", "'a' is not a processor id"},  {"1-2-3", "'1-2-3' is not a processor id"},
      {"-", "'-' is not a processor id"},  {"0-", "'0-' is not a processor id"},
      {"01", "leading zero"},              {"4294967296", "above 2147483647"},
      {"0-8", "longer than 8 processors"}, {"0-3,4-7,8", "longer than 8 processors"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int32_t ids[8];
    uint32_t count = 0;
    int rc = cpuexec__cpulist_parse("cpuset.cpus", cases[i].text, strlen(cases[i].text), ids, 8, &count);
    assert_int_equal(rc, CPUEXEC_EINVAL);
    assert_int_equal(count, 0);
    if (strncmp(cpuexec_error_message(), "cpuset.cpus: ", 13) != 0 || !strstr(cpuexec_error_message(), cases[i].fragment))
      fail_msg("'%s': message '%s' lacks '%s'", cases[i].text, cpuexec_error_message(), cases[i].fragment);
  }
}

static void cpulists_format_runs_as_ranges(void **state) {
  (void)state;
  static const struct {
    int32_t ids[6];
    uint32_t count;
    const char *text;
  } cases[] = {
      {{0}, 0, ""},
      {{5}, 1, "5"},
      {{4, 5}, 2, "4-5"},
      {{0, 1, 2, 3, 8, 9}, 6, "0-3,8-9"},
      {{3, 0, 1, 2}, 4, "3,0-2"},
      {{2, 1, 0}, 3, "2,1,0"},
      {{INT32_MAX - 1, INT32_MAX, 0}, 3, "2147483646-2147483647,0"},
      {{-2, -1, 0}, 3, "-2,-1,0"}, /* not a valid set, but written without inventing a range */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[64];
    size_t len = cpuexec__cpulist_format(cases[i].ids, cases[i].count, buf, sizeof buf);
    assert_string_equal(buf, cases[i].text);
    assert_int_equal(len, strlen(cases[i].text));
  }
  int32_t ids[] = {0, 1, 2, 10};
  char small[4];
  assert_int_equal(cpuexec__cpulist_format(ids, 4, small, sizeof small), strlen("0-2,10"));
  assert_string_equal(small, "0-2");
  assert_int_equal(cpuexec__cpulist_format(ids, 4, NULL, 0), strlen("0-2,10"));
}

static void duplicates_are_found_at_their_second_appearance(void **state) {
  (void)state;
  int32_t none[] = {3, 1, 2};
  int32_t late[] = {3, 1, 2, 7, 1};
  assert_int_equal(cpuexec__cpulist_find_duplicate(none, 3), -1);
  assert_int_equal(cpuexec__cpulist_find_duplicate(late, 5), 4);
  assert_int_equal(cpuexec__cpulist_find_duplicate(late, 4), -1);
  assert_int_equal(cpuexec__cpulist_find_duplicate(late, 0), -1);
}

/* Policies built by hand can break rules no text can express. */
static void request_rules_hold_for_hand_built_policies(void **state) {
  (void)state;
  cpuexec_policy p;
  static const char *const names[] = {"valid default",  "spin enum",     "affinity enum", "negative threads",
                                      "negative id",    "count too big", "valid explicit"};
  static const char *const fragments[] = {NULL,
                                          "spin_policy: 7 is not a spin policy",
                                          "affinity_policy: -2 is not an affinity policy",
                                          "num_threads: -1 is negative",
                                          "cpu_set: entry 1 is -4; processor ids are 0 or above",
                                          "cpu_set_count: 1025; use 0 to 1024 entries",
                                          NULL};
  for (int i = 0; i < 7; i++) {
    cpuexec_policy_init(&p);
    switch (i) {
    case 1: p.spin_policy = (cpuexec_spin_policy)7; break;
    case 2: p.affinity_policy = (cpuexec_affinity_policy)-2; break;
    case 3: p.num_threads = -1; break;
    case 4:
      p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT;
      p.cpu_set_count = 2;
      p.cpu_set[0] = 0;
      p.cpu_set[1] = -4;
      break;
    case 5:
      p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT;
      p.cpu_set_count = CPUEXEC_CPU_SET_MAX + 1;
      break;
    case 6:
      p.affinity_policy = CPUEXEC_AFFINITY_EXPLICIT;
      p.cpu_set_count = 1;
      break;
    default: break;
    }
    int rc = cpuexec__policy_check(&p);
    if (!fragments[i]) {
      if (rc != 0)
        fail_msg("%s rejected: %s", names[i], cpuexec_error_message());
    } else if (rc != CPUEXEC_EINVAL || !strstr(cpuexec_error_message(), fragments[i])) {
      fail_msg("%s: rc %d, message '%s', want '%s'", names[i], rc, cpuexec_error_message(), fragments[i]);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decimals_are_strict_and_bounded),
      cmocka_unit_test(cpulists_parse_in_order),
      cmocka_unit_test(cpulist_failures_name_the_field_and_keep_the_count),
      cmocka_unit_test(cpulists_format_runs_as_ranges),
      cmocka_unit_test(duplicates_are_found_at_their_second_appearance),
      cmocka_unit_test(request_rules_hold_for_hand_built_policies),
  };
  return cmocka_run_group_tests_name("policy internals", tests, NULL, NULL);
}
