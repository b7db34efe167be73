/* The error convention and the version check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>

#include "support/test_util.h"

#include <cpuexec.h>

static void every_code_has_a_distinct_name_and_string(void **state) {
  (void)state;
  static const int codes[] = {
#define CODE(name, value, text) CPUEXEC_##name,
      CPUEXEC_ERRNO_MAP(CODE)
#undef CODE
  };
  size_t n = sizeof codes / sizeof codes[0];
  for (size_t i = 0; i < n; i++) {
    assert_true(codes[i] < 0);
    assert_string_not_equal(cpuexec_error_string(codes[i]), "unknown error");
    assert_int_equal(strncmp(cpuexec_error_name(codes[i]), "CPUEXEC_E", 9), 0);
    for (size_t j = 0; j < i; j++) {
      assert_int_not_equal(codes[i], codes[j]);
      assert_string_not_equal(cpuexec_error_name(codes[i]), cpuexec_error_name(codes[j]));
      assert_string_not_equal(cpuexec_error_string(codes[i]), cpuexec_error_string(codes[j]));
    }
  }
  assert_string_equal(cpuexec_error_name(CPUEXEC_EINVAL), "CPUEXEC_EINVAL");
  assert_string_equal(cpuexec_error_name(0), "CPUEXEC_OK");
}

static void unknown_codes_are_named_unknown(void **state) {
  (void)state;
  assert_string_equal(cpuexec_error_string(-9999), "unknown error");
  assert_string_equal(cpuexec_error_name(12345), "CPUEXEC_UNKNOWN");
}

static void compile_time_and_run_time_versions_agree(void **state) {
  (void)state;
  char header[32];
  snprintf(header, sizeof header, "%d.%d.%d", CPUEXEC_VERSION_MAJOR, CPUEXEC_VERSION_MINOR,
           CPUEXEC_VERSION_PATCH);
  assert_int_equal(cpuexec_version(), CPUEXEC_VERSION_HEX);
  assert_string_equal(cpuexec_version_string(), header);
  assert_string_equal(header, CPUEXEC_RELEASE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_code_has_a_distinct_name_and_string),
      cmocka_unit_test(unknown_codes_are_named_unknown),
      cmocka_unit_test(compile_time_and_run_time_versions_agree),
  };
  return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
