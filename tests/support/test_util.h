/* Tests' support, all of it but the white-box fixtures, in one include
 * (include it after nothing but system headers; it includes <cmocka.h>):
 *   - watchdog.h: a per-case watchdog for every cmocka_unit_test() case;
 *   - threads.h: threads and processes (C only);
 *   - executors.h: executors from stored topologies (C only);
 *   - adapters.h: the adapters' helpers, in adapters.c (C only).
 * White-box tests add resolve_fixtures.h (the stored machines and resolve
 * fixtures). Tests include these as "support/<header>" (-I$(top_srcdir)/tests). */
#ifndef CPUEXEC_TESTS_SUPPORT_TEST_UTIL_H
#define CPUEXEC_TESTS_SUPPORT_TEST_UTIL_H

#include "watchdog.h"

#ifndef __cplusplus
#include "adapters.h"
#include "executors.h"
#include "threads.h"
#endif

#endif
