/* tests/support/failing_alloc.h: malloc, calloc and realloc with a
 * failure switch, on glibc's own allocator. */
#include "failing_alloc.h"

#if FAILING_ALLOC_WORKS
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static atomic_bool every;     /* failing_alloc_all() */
static atomic_long countdown; /* > 0: the allocation that takes it to 0 fails */
static atomic_uint refused;

void failing_alloc_all(bool on) { atomic_store(&every, on); }
void failing_alloc_nth(long n) { atomic_store(&countdown, n > 0 ? n : 0); }
unsigned failing_alloc_refused(void) { return atomic_load(&refused); }
void failing_alloc_reset_count(void) { atomic_store(&refused, 0); }

static bool refuse(void) {
  bool now = atomic_load_explicit(&every, memory_order_relaxed);
  if (!now && atomic_load_explicit(&countdown, memory_order_relaxed) > 0)
    now = atomic_fetch_sub(&countdown, 1) == 1;
  if (!now) return false;
  atomic_fetch_add(&refused, 1);
  errno = ENOMEM;
  return true;
}

__attribute__((visibility("default"))) void *malloc(size_t n) { return refuse() ? NULL : __libc_malloc(n); }
__attribute__((visibility("default"))) void *calloc(size_t n, size_t size) {
  return refuse() ? NULL : __libc_calloc(n, size);
}
__attribute__((visibility("default"))) void *realloc(void *p, size_t n) {
  return refuse() ? NULL : __libc_realloc(p, n);
}
#else
void failing_alloc_all(bool on) { (void)on; }
void failing_alloc_nth(long n) { (void)n; }
unsigned failing_alloc_refused(void) { return 0; }
void failing_alloc_reset_count(void) {}
#endif
