/* A runtime hook (include/cpuexec/hooks.h) that keeps OpenBLAS's pthreads
 * build inline inside libcpuexec callbacks. libcpuexec's built-in guards do
 * this themselves now (doc/runtime-guards.md), without a lock; the example
 * stays as the shape of a hook for a library whose setting is process-wide
 * and that the guards do not govern. Registered alongside the built-in
 * guard, both set one thread and both restore the value they saw.
 *
 * OpenBLAS's pthreads build has one thread count for the whole process
 * (openblas_set_num_threads / openblas_get_num_threads), not one per thread
 * as OpenMP has. So the hook counts the participants inside regions: the
 * first to begin saves the count and sets 1, the last to end restores it;
 * the lock makes "first" and "last" exact. While any region runs, a BLAS
 * call made on another thread outside libcpuexec runs on one thread too:
 * the price of a process-wide setting.
 *
 * The two functions are looked up with dlsym (Windows: GetProcAddress in
 * libopenblas.dll, when it is loaded), so the program runs whether
 * or not OpenBLAS is loaded. Without it (as in `make check`), the example
 * drives a stand-in with the same two functions, so the same hook is
 * exercised and checked either way. */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <dlfcn.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <cpuexec.h>

/* ---- the library being kept inline ---------------------------------------- */

typedef struct blas_threads {
  void (*set)(int);
  int (*get)(void);
  const char *name;
} blas_threads;

static atomic_int standin_count = 4;
static void standin_set(int n) { atomic_store(&standin_count, n); }
static int standin_get(void) { return atomic_load(&standin_count); }

static blas_threads find_blas(void) {
  blas_threads b = {standin_set, standin_get, "a stand-in (OpenBLAS is not loaded)"};
#ifdef _WIN32
  HMODULE blas = GetModuleHandleA("libopenblas.dll");
  void *set = blas ? (void *)(uintptr_t)GetProcAddress(blas, "openblas_set_num_threads") : NULL;
  void *get = blas ? (void *)(uintptr_t)GetProcAddress(blas, "openblas_get_num_threads") : NULL;
#else
  void *set = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  void *get = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
#endif
  if (set != NULL && get != NULL) {
    *(void **)&b.set = set;
    *(void **)&b.get = get;
    b.name = "OpenBLAS";
  }
  return b;
}

/* ---- the hook -------------------------------------------------------------- */

typedef struct blas_hook {
  blas_threads blas;
  pthread_mutex_t lock;
  unsigned inside; /* participants between begin and end, under lock */
  int saved;       /* the count before the first of them, under lock */
} blas_hook;

static void blas_begin(void *user, void *state) {
  (void)state; /* the setting is process-wide: nothing to keep per participant */
  blas_hook *h = user;
  pthread_mutex_lock(&h->lock);
  if (h->inside++ == 0) {
    h->saved = h->blas.get();
    h->blas.set(1);
  }
  pthread_mutex_unlock(&h->lock);
}

static void blas_end(void *user, void *state) {
  (void)state;
  blas_hook *h = user;
  pthread_mutex_lock(&h->lock);
  if (--h->inside == 0) h->blas.set(h->saved);
  pthread_mutex_unlock(&h->lock);
}

static int register_blas_hook(blas_hook *h) {
  h->blas = find_blas();
  pthread_mutex_init(&h->lock, NULL);
  h->inside = 0;
  cpuexec_hook hook;
  cpuexec_hook_init(&hook);
  hook.name = "openblas-pthreads";
  hook.user = h;
  hook.participant_begin = blas_begin;
  hook.participant_end = blas_end;
  return cpuexec_hook_register(&hook);
}

/* ---- a kernel calling the library from callbacks -------------------------- */

typedef struct kernel {
  const blas_threads *blas;
  atomic_uint callbacks, not_inline, participants;
} kernel;

static int kernel_range(void *ctx, int64_t begin, int64_t end) {
  (void)begin, (void)end;
  kernel *k = ctx;
  atomic_fetch_add(&k->callbacks, 1);
  atomic_fetch_or(&k->participants, 1u << cpuexec_participant_index());
  /* Here a call like cblas_dgemm would run on this thread only. */
  if (k->blas->get() != 1) atomic_fetch_add(&k->not_inline, 1);
  return 0;
}

int main(void) {
  static blas_hook hook; /* registered for the life of the process */
  int rc = register_blas_hook(&hook);
  if (rc != 0) {
    fprintf(stderr, "openblas_hook: %s\n", cpuexec_error_message());
    return 1;
  }
  cpuexec_policy policy;
  cpuexec_policy_init(&policy);
  policy.num_threads = 3;
  policy.affinity_policy = CPUEXEC_AFFINITY_NONE;
  cpuexec_session *session = NULL;
  if ((rc = cpuexec_session_create(&policy, &session)) != 0) {
    fprintf(stderr, "openblas_hook: %s\n", cpuexec_error_message());
    return 1;
  }
  int before = hook.blas.get();
  kernel k = {.blas = &hook.blas};
  for (int region = 0; region < 20 && rc == 0; region++)
    rc = cpuexec_parallel_for(cpuexec_session_executor(session), 30, 1, &k, kernel_range, 0);
  int after = hook.blas.get();
  cpuexec_session_destroy(session);
  printf("openblas_hook: drove %s; %u callbacks on participants 0x%x, %u not inline; thread count %d before, %d "
         "after\n",
         hook.blas.name, atomic_load(&k.callbacks), atomic_load(&k.participants), atomic_load(&k.not_inline), before,
         after);
  bool ok = rc == 0 && atomic_load(&k.callbacks) > 0 && atomic_load(&k.not_inline) == 0 && after == before;
  return ok ? 0 : 1;
}
