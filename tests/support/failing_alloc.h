/* Allocations that fail on demand, for the tests that check what the
 * library does without memory (tests/test_range_run_all.c,
 * tests/test_allocation_failures.c). Linking tests/support/failing_alloc.c
 * replaces malloc, calloc and realloc for the whole program with glibc's
 * own allocator behind a switch, so the library's allocations really fail
 * (errno ENOMEM). Sanitizer builds replace malloc themselves, and other C
 * libraries have no __libc_malloc: there FAILING_ALLOC_WORKS is 0, nothing
 * is replaced, and a test skips its cases. */
#ifndef CPUEXEC_TESTS_FAILING_ALLOC_H
#define CPUEXEC_TESTS_FAILING_ALLOC_H

#include <stdbool.h>
#include <stdlib.h> /* any C library header: __GLIBC__ */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FAILING_ALLOC_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FAILING_ALLOC_UNDER_SANITIZER 1
#endif
#endif

#if !defined(FAILING_ALLOC_UNDER_SANITIZER) && defined(__GLIBC__)
#define FAILING_ALLOC_WORKS 1
#else
#define FAILING_ALLOC_WORKS 0
#endif

/* Every allocation fails while on. */
void failing_alloc_all(bool on);
/* The n-th allocation from now fails, once (n <= 0: none). */
void failing_alloc_nth(long n);
/* Allocations refused since the last failing_alloc_reset_count(). */
unsigned failing_alloc_refused(void);
void failing_alloc_reset_count(void);

#endif
