/* The text layer and the environment (src/core/text.h, src/core/env.h):
 * the whitespace rule, tokens, durations, key=value items, and variables
 * read under the rule with their name on every error. White-box. */
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

#include "core/env.h"
#include "core/error.h"
#include "core/text.h"

static void blanks_are_the_six_c_blanks(void **state) {
  (void)state;
  for (int c = 1; c < 256; c++)
    assert_int_equal(cpuexec__text_blank((char)c), c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
                                                      c == '\f');
  size_t len;
  const char *v = cpuexec__text_trim(" \t num_threads=4 \n", &len);
  assert_int_equal(len, strlen("num_threads=4"));
  assert_memory_equal(v, "num_threads=4", len);
  v = cpuexec__text_trim("   ", &len);
  assert_int_equal(len, 0);
  assert_int_equal(cpuexec__text_reject_blanks("policy", "a=1,b=2"), 0);
  assert_int_equal(cpuexec__text_reject_blanks("policy", "a=1,b= 2"), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "policy: whitespace at offset 6 (in 'b= 2')"));
}

static void tokens_match_whole_words(void **state) {
  (void)state;
  static const char *const words[] = {"on", "1", NULL};
  assert_true(cpuexec__text_is("on", 2, "on"));
  assert_false(cpuexec__text_is("onx", 3, "on"));
  assert_false(cpuexec__text_is("o", 1, "on"));
  assert_true(cpuexec__text_is_one_of("1", 1, words));
  assert_false(cpuexec__text_is_one_of("11", 2, words));
}

static void durations_split_and_format_exactly(void **state) {
  (void)state;
  static const struct {
    const char *text;
    size_t digits;
    uint64_t scale;
  } cases[] = {{"50us", 2, 1000}, {"7s", 1, 1000000000u}, {"3ms", 1, 1000000}, {"9ns", 1, 1},
               {"12", 2, 1},      {"5min", 1, 0},         {"ms", 0, 1000000},  {"", 0, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t scale = 99;
    assert_int_equal(cpuexec__duration_split(cases[i].text, strlen(cases[i].text), &scale), cases[i].digits);
    assert_int_equal(scale, cases[i].scale);
  }
  char buf[32];
  static const struct {
    uint64_t ns;
    const char *text;
  } out[] = {{0, "0ns"}, {50000, "50us"}, {1500000, "1500us"}, {2000000000u, "2s"}, {7, "7ns"}};
  for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
    assert_int_equal(cpuexec__duration_format(out[i].ns, buf, sizeof buf), (int)strlen(out[i].text));
    assert_string_equal(buf, out[i].text);
  }
}

static void items_run_from_comma_to_comma(void **state) {
  (void)state;
  cpuexec__text_items it = cpuexec__text_items_of("");
  cpuexec__text_item item;
  assert_false(cpuexec__text_items_next(&it, &item));
  it = cpuexec__text_items_of("a=1,b,,c=");
  assert_true(cpuexec__text_items_next(&it, &item));
  assert_int_equal(item.offset, 0);
  assert_int_equal(item.key_len, 1);
  assert_int_equal(item.value_len, 1);
  assert_memory_equal(item.value, "1", 1);
  assert_false(item.last);
  assert_true(cpuexec__text_items_next(&it, &item));
  assert_null(item.value);
  assert_int_equal(item.key_len, 1);
  assert_int_equal(item.offset, 4);
  assert_true(cpuexec__text_items_next(&it, &item));
  assert_int_equal(item.len, 0);
  assert_false(item.last);
  assert_true(cpuexec__text_items_next(&it, &item));
  assert_non_null(item.value);
  assert_int_equal(item.value_len, 0);
  assert_true(item.last);
  assert_false(cpuexec__text_items_next(&it, &item));
  it = cpuexec__text_items_of("a=1,");
  assert_true(cpuexec__text_items_next(&it, &item));
  assert_true(cpuexec__text_items_next(&it, &item));
  assert_int_equal(item.len, 0);
  assert_true(item.last);
}

static int parse_count(const char *text, void *out) {
  if (strcmp(text, "bad") == 0) return cpuexec__fail(CPUEXEC_EINVAL, "count: 'bad' is not one");
  *(int *)out = atoi(text);
  return 0;
}

static void variables_are_trimmed_and_named_in_errors(void **state) {
  (void)state;
  unsetenv("CPUEXEC_TEST_TEXT");
  bool found = true;
  int value = -1;
  assert_int_equal(cpuexec__env_parse("CPUEXEC_TEST_TEXT", parse_count, &value, &found), 0);
  assert_false(found);
  assert_int_equal(value, -1);
  setenv("CPUEXEC_TEST_TEXT", "  42\t", 1);
  assert_int_equal(cpuexec__env_parse("CPUEXEC_TEST_TEXT", parse_count, &value, &found), 0);
  assert_true(found);
  assert_int_equal(value, 42);
  size_t len;
  assert_memory_equal(cpuexec__env_value("CPUEXEC_TEST_TEXT", &len), "42", 2);
  assert_int_equal(len, 2);
  assert_string_equal(cpuexec__env_raw("CPUEXEC_TEST_TEXT"), "  42\t");
  setenv("CPUEXEC_TEST_TEXT", " bad ", 1);
  assert_int_equal(cpuexec__env_parse("CPUEXEC_TEST_TEXT", parse_count, &value, &found), CPUEXEC_EINVAL);
  assert_string_equal(cpuexec_error_message(), "CPUEXEC_TEST_TEXT: count: 'bad' is not one");
  unsetenv("CPUEXEC_TEST_TEXT");
}

/* CPUEXEC_REGISTRY follows the rule as CPUEXEC_POLICY does (it once was read untrimmed). */
static void the_registry_variable_is_trimmed_like_the_policy(void **state) {
  (void)state;
  cpuexec_registry_options o;
  setenv("CPUEXEC_REGISTRY", " capacity=3,idle_retention=5ms\n", 1);
  assert_int_equal(cpuexec_registry_options_from_environment(&o), 0);
  assert_int_equal(o.capacity, 3);
  assert_int_equal(o.idle_retention_ns, 5000000u);
  setenv("CPUEXEC_REGISTRY", " capacity=0 ", 1);
  assert_int_equal(cpuexec_registry_options_from_environment(&o), CPUEXEC_EINVAL);
  assert_non_null(strstr(cpuexec_error_message(), "CPUEXEC_REGISTRY: capacity: '0'"));
  unsetenv("CPUEXEC_REGISTRY");
  cpuexec_policy p;
  setenv("CPUEXEC_POLICY", "\tnum_threads=3 ", 1);
  assert_int_equal(cpuexec_policy_from_environment(&p), 0);
  assert_int_equal(p.num_threads, 3);
  unsetenv("CPUEXEC_POLICY");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(blanks_are_the_six_c_blanks),
      cmocka_unit_test(tokens_match_whole_words),
      cmocka_unit_test(durations_split_and_format_exactly),
      cmocka_unit_test(items_run_from_comma_to_comma),
      cmocka_unit_test(variables_are_trimmed_and_named_in_errors),
      cmocka_unit_test(the_registry_variable_is_trimmed_like_the_policy),
  };
  return cmocka_run_group_tests_name("text layer", tests, NULL, NULL);
}
