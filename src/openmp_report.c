/* The public status, counters and report, and the storage the OMPT tool
 * counts into (src/openmp_counts.h says how counting works). Addresses are
 * resolved to functions (dladdr) only when the report is read, and call
 * sites in the same function are merged there. */
#include <cpuexec/errors.h>
#include <cpuexec/interop.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "openmp_counts.h"
#include "openmp_internal.h"

#define TABLE_SIZE CPUEXEC__OMP_TABLE_SIZE
#define POOL CPUEXEC__OMP_POOL
#define T_COUNT CPUEXEC__T_COUNT
#define C_COUNT CPUEXEC__C_COUNT
#define SHARED_BLOCK (&cpuexec__omp_blocks[POOL])

cpuexec__omp_count_block cpuexec__omp_blocks[POOL + 1];
_Atomic uintptr_t cpuexec__omp_table_keys[TABLE_SIZE];
_Atomic uint32_t cpuexec__omp_table_max_requested[TABLE_SIZE];
_Atomic uint32_t cpuexec__omp_table_max_actual[TABLE_SIZE];
__thread cpuexec__omp_count_block *cpuexec__omp_my_block __attribute__((tls_model("initial-exec")));

static pthread_key_t release_key;
static pthread_once_t release_key_once = PTHREAD_ONCE_INIT;
static bool release_key_made;

static void release_block(void *block) {
  cpuexec__omp_count_block *b = block;
  if (b != SHARED_BLOCK)
    atomic_store_explicit(&b->owned, 0, memory_order_release);
  cpuexec__omp_my_block = NULL; /* a count in a later destructor claims again */
}

static void make_release_key(void) { release_key_made = pthread_key_create(&release_key, release_block) == 0; }

/* The library may be unloaded before the process ends: no thread-exit
 * destructor may point into it then. */
__attribute__((destructor)) static void delete_release_key(void) {
  if (release_key_made)
    pthread_key_delete(release_key);
}

cpuexec__omp_count_block *cpuexec__openmp_claim_block(void) {
  pthread_once(&release_key_once, make_release_key);
  cpuexec__omp_count_block *b = SHARED_BLOCK;
  /* Without the key a block would never come back: share instead. */
  for (int i = 0; release_key_made && i < POOL; i++) {
    int expected = 0;
    if (atomic_load_explicit(&cpuexec__omp_blocks[i].owned, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong_explicit(&cpuexec__omp_blocks[i].owned, &expected, 1, memory_order_acquire,
                                                memory_order_relaxed)) {
      b = &cpuexec__omp_blocks[i];
      break;
    }
  }
  if (b != SHARED_BLOCK && pthread_setspecific(release_key, b) != 0) {
    atomic_store_explicit(&b->owned, 0, memory_order_release);
    b = SHARED_BLOCK;
  }
  cpuexec__omp_my_block = b;
  return b;
}

int cpuexec__openmp_table_slot(uintptr_t key) {
  uint32_t start = (uint32_t)((key >> 4) * 0x9E3779B1u) & (TABLE_SIZE - 1);
  for (uint32_t i = 0; i < TABLE_SIZE; i++) {
    uint32_t index = (start + i) & (TABLE_SIZE - 1);
    uintptr_t seen = atomic_load_explicit(&cpuexec__omp_table_keys[index], memory_order_acquire);
    if (seen == key)
      return (int)index;
    if (seen == 0) {
      if (atomic_compare_exchange_strong_explicit(&cpuexec__omp_table_keys[index], &seen, key, memory_order_acq_rel,
                                                  memory_order_acquire) ||
          seen == key)
        return (int)index;
    }
  }
  return -1;
}

void cpuexec__openmp_record_region_slow(cpuexec__omp_region_kind kind, const void *codeptr, uint32_t requested,
                                        uint32_t actual) {
  cpuexec__omp_count_block *b = cpuexec__openmp_block();
  if (kind == CPUEXEC__OMP_NESTED) {
    cpuexec__openmp_bump(b, &b->c[CPUEXEC__C_NESTED]);
    return;
  }
  unsigned column = kind == CPUEXEC__OMP_IN_CALLBACK ? (actual > 1 ? CPUEXEC__T_MULTI : CPUEXEC__T_INLINE)
                                                     : (unsigned)kind + 1;
  int slot = cpuexec__openmp_table_slot(codeptr != NULL ? (uintptr_t)codeptr : 1);
  if (slot < 0) {
    cpuexec__openmp_bump(b, &b->c[CPUEXEC__C_OVERFLOW + column]);
    return;
  }
  cpuexec__openmp_bump(b, &b->n[slot][column]);
  cpuexec__openmp_raise_max(&cpuexec__omp_table_max_requested[slot], requested);
  cpuexec__openmp_raise_max(&cpuexec__omp_table_max_actual[slot], actual);
}

void cpuexec__openmp_record_thread(int thread_type, bool begin) {
  if (thread_type == 2 /* ompt_thread_worker */) {
    cpuexec__omp_count_block *b = cpuexec__openmp_block();
    cpuexec__openmp_bump(b, &b->c[begin ? CPUEXEC__C_WORKERS_CREATED : CPUEXEC__C_WORKERS_ENDED]);
  }
}

void cpuexec__openmp_record_untracked(void) {
  cpuexec__omp_count_block *b = cpuexec__openmp_block();
  cpuexec__openmp_bump(b, &b->c[CPUEXEC__C_UNTRACKED]);
}

/* What cpuexec_openmp_reset() saw; guarded by baseline_lock, which only
 * readers take (never the tool). */
static pthread_mutex_t baseline_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t baseline_c[C_COUNT];
static uint64_t baseline_n[TABLE_SIZE][T_COUNT];

static void sum_counters(uint64_t sum[C_COUNT]) {
  memset(sum, 0, C_COUNT * sizeof *sum);
  for (int i = 0; i <= POOL; i++)
    for (int c = 0; c < C_COUNT; c++)
      sum[c] += atomic_load_explicit(&cpuexec__omp_blocks[i].c[c], memory_order_relaxed);
}

static void sum_slot(int slot, uint64_t sum[T_COUNT]) {
  memset(sum, 0, T_COUNT * sizeof *sum);
  for (int i = 0; i <= POOL; i++)
    for (int t = 0; t < T_COUNT; t++)
      sum[t] += atomic_load_explicit(&cpuexec__omp_blocks[i].n[slot][t], memory_order_relaxed);
}

/* A count since the reset; a count made concurrently with the reset may be
 * kept or lost, never wrap. */
static uint64_t since(uint64_t now, uint64_t base) { return now > base ? now - base : 0; }

CPUEXEC_EXPORT int cpuexec_openmp_counters_get(cpuexec_openmp_counters *out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass a cpuexec_openmp_counters to fill");
  memset(out, 0, sizeof *out);
  uint64_t sum[C_COUNT], column[T_COUNT] = {0}, slot_sum[T_COUNT];
  pthread_mutex_lock(&baseline_lock);
  sum_counters(sum);
  for (int c = 0; c < C_COUNT; c++)
    sum[c] = since(sum[c], baseline_c[c]);
  /* A kind's total: its column over the table, plus its overflow. */
  for (int slot = 0; slot < TABLE_SIZE; slot++) {
    if (atomic_load_explicit(&cpuexec__omp_table_keys[slot], memory_order_acquire) == 0)
      continue;
    sum_slot(slot, slot_sum);
    for (int t = 0; t < T_COUNT; t++)
      column[t] += since(slot_sum[t], baseline_n[slot][t]);
  }
  pthread_mutex_unlock(&baseline_lock);
  for (int t = 0; t < T_COUNT; t++)
    column[t] += sum[CPUEXEC__C_OVERFLOW + t];
  out->regions_in_callbacks = column[CPUEXEC__T_INLINE] + column[CPUEXEC__T_MULTI];
  out->regions_inline = column[CPUEXEC__T_INLINE];
  out->regions_multithreaded = column[CPUEXEC__T_MULTI];
  out->toplevel_regions_in_sessions = column[CPUEXEC__T_TOP_SESSION];
  out->toplevel_regions_outside = column[CPUEXEC__T_TOP_OUTSIDE];
  out->nested_regions = sum[CPUEXEC__C_NESTED];
  out->openmp_workers_created = sum[CPUEXEC__C_WORKERS_CREATED];
  out->openmp_workers_ended = sum[CPUEXEC__C_WORKERS_ENDED];
  out->untracked_regions = sum[CPUEXEC__C_UNTRACKED];
  out->report_overflow = 0;
  for (int t = 0; t < T_COUNT; t++)
    out->report_overflow += sum[CPUEXEC__C_OVERFLOW + t];
  return 0;
}

CPUEXEC_EXPORT void cpuexec_openmp_reset(void) {
  pthread_mutex_lock(&baseline_lock);
  sum_counters(baseline_c);
  for (int i = 0; i < TABLE_SIZE; i++) {
    sum_slot(i, baseline_n[i]);
    atomic_store_explicit(&cpuexec__omp_table_max_requested[i], 0, memory_order_relaxed);
    atomic_store_explicit(&cpuexec__omp_table_max_actual[i], 0, memory_order_relaxed);
  }
  pthread_mutex_unlock(&baseline_lock);
}

/* ---- status ---- */

/* libomp is loaded but never asked for a tool: either it has not run yet,
 * or something kept it from asking us. Its first use decides, so start it
 * (serial initialization on this thread; no thread is created) and see. */
static void settle_libomp_start(void) {
  const cpuexec__omp_runtime *omp = &cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP];
  (void)omp->get_max_threads();
}

static const char *other_tool_owner(void) {
  void *definer = dlsym(RTLD_DEFAULT, "ompt_start_tool");
  Dl_info info, mine;
  if (definer == NULL || dladdr(definer, &info) == 0)
    return NULL;
  if (dladdr((void *)cpuexec_openmp_status, &mine) != 0 && info.dli_fbase == mine.dli_fbase)
    return NULL; /* ours comes first */
  if (strcmp(info.dli_fname, cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP].path) == 0)
    return NULL; /* libomp's weak one: it chains to the next definition */
  return info.dli_fname;
}

static void explain(cpuexec_openmp_state *out, uint32_t mask) {
  bool libomp = mask & (1U << CPUEXEC__OMP_LIBOMP), libgomp = mask & (1U << CPUEXEC__OMP_LIBGOMP);
  int state = atomic_load_explicit(&cpuexec__ompt_tool_state, memory_order_acquire);
  if (mask == 0) {
    out->detection = CPUEXEC_OPENMP_NO_RUNTIME;
    out->reason = "no OpenMP runtime is loaded in this process";
    return;
  }
  /* libgomp first: without libomp there is nothing to see, tool or not. */
  if (!libomp) {
    out->detection = CPUEXEC_OPENMP_NO_OMPT;
    out->reason = "the OpenMP runtime is libgomp, which has no OMPT: regions in callbacks are kept inline but "
                  "cannot be counted (link OpenMP code with -lomp to see it)";
    return;
  }
  if (!cpuexec__ompt_built) {
    out->detection = CPUEXEC_OPENMP_DECLINED;
    out->reason = "libcpuexec was built with --disable-ompt: OpenMP regions are kept inline but not counted";
    return;
  }
  if (state == CPUEXEC__OMPT_NOT_ASKED) {
    const char *tool_env = getenv("OMP_TOOL");
    if (tool_env == NULL || strcmp(tool_env, "disabled") != 0)
      settle_libomp_start();
    state = atomic_load_explicit(&cpuexec__ompt_tool_state, memory_order_acquire);
  }
  switch (state) {
  case CPUEXEC__OMPT_LIVE:
    out->detection = CPUEXEC_OPENMP_LIVE;
    out->reason = libgomp ? "live: libomp's regions are counted (libgomp is also loaded; regions it runs are kept "
                            "inline but not seen)"
                          : "live: libomp's regions are counted";
    return;
  case CPUEXEC__OMPT_STARTED:
    out->detection = CPUEXEC_OPENMP_NOT_STARTED;
    out->reason = "libomp accepted the tool and is initializing it";
    return;
  case CPUEXEC__OMPT_DECLINED:
    out->detection = CPUEXEC_OPENMP_DECLINED;
    out->reason = "CPUEXEC_OMPT=off: the tool declined; regions are kept inline but not counted";
    return;
  case CPUEXEC__OMPT_INIT_FAILED:
    out->detection = CPUEXEC_OPENMP_INIT_FAILED;
    out->reason = "libomp did not accept the tool's callbacks (thread, parallel, implicit task)";
    return;
  case CPUEXEC__OMPT_FINALIZED:
    out->detection = CPUEXEC_OPENMP_FINALIZED;
    out->reason = "libomp finalized the tool (its runtime shut down, normally at exit): the counts cover every "
                  "region before that";
    return;
  default:
    break;
  }
  const char *tool_env = getenv("OMP_TOOL");
  if (tool_env != NULL && strcmp(tool_env, "disabled") == 0) {
    out->detection = CPUEXEC_OPENMP_TOOL_DISABLED;
    out->reason = "OMP_TOOL=disabled: libomp starts no tool; regions are kept inline but not counted";
    return;
  }
  /* Filled once, under the lock, then only read: the reason stays valid. */
  static pthread_mutex_t other_lock = PTHREAD_MUTEX_INITIALIZER;
  static char other_reason[400];
  const char *owner = other_tool_owner();
  if (owner != NULL) {
    out->detection = CPUEXEC_OPENMP_OTHER_TOOL;
    pthread_mutex_lock(&other_lock);
    if (other_reason[0] == '\0')
      snprintf(other_reason, sizeof other_reason,
               "another OMPT tool took precedence: ompt_start_tool in %s does not chain to libcpuexec's "
               "(dlsym(RTLD_NEXT, \"ompt_start_tool\")); regions are kept inline but not counted",
               owner[0] != '\0' ? owner : "the program");
    pthread_mutex_unlock(&other_lock);
    out->reason = other_reason;
    return;
  }
  out->detection = CPUEXEC_OPENMP_STARTED_BEFORE;
  out->reason = "OpenMP started before libcpuexec was loaded (libomp asks for a tool once, at its first use; or "
                "libcpuexec is not in the global symbol scope, e.g. dlopen()ed with RTLD_LOCAL)";
}

CPUEXEC_EXPORT int cpuexec_openmp_status(cpuexec_openmp_state *out) {
  if (out == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "out: NULL; pass a cpuexec_openmp_state to fill");
  memset(out, 0, sizeof *out);
  uint32_t mask = cpuexec__openmp_detect(false);
  out->libomp_loaded = mask & (1U << CPUEXEC__OMP_LIBOMP);
  out->libgomp_loaded = mask & (1U << CPUEXEC__OMP_LIBGOMP);
  out->guard_active = mask != 0;
  if (out->libomp_loaded)
    snprintf(out->libomp_path, sizeof out->libomp_path, "%s", cpuexec__omp_runtimes[CPUEXEC__OMP_LIBOMP].path);
  if (out->libgomp_loaded)
    snprintf(out->libgomp_path, sizeof out->libgomp_path, "%s", cpuexec__omp_runtimes[CPUEXEC__OMP_LIBGOMP].path);
  explain(out, mask);
  out->live = out->detection == CPUEXEC_OPENMP_LIVE;
  out->chained_tool = atomic_load_explicit(&cpuexec__ompt_chained, memory_order_acquire) != 0;
  if (out->chained_tool)
    snprintf(out->chained_tool_name, sizeof out->chained_tool_name, "%s", cpuexec__ompt_chained_name);
  return 0;
}

/* ---- the report ---- */

static int by_regions_descending(const void *a, const void *b) {
  const cpuexec_openmp_report_entry *x = a, *y = b;
  uint64_t nx = x->inline_in_callbacks + x->multithreaded_in_callbacks + x->toplevel_in_sessions + x->toplevel_outside;
  uint64_t ny = y->inline_in_callbacks + y->multithreaded_in_callbacks + y->toplevel_in_sessions + y->toplevel_outside;
  if (nx != ny)
    return nx < ny ? 1 : -1;
  return strcmp(x->function, y->function);
}

/* Resolves one table slot into an entry; false when it holds no region. */
static bool read_slot(int slot, cpuexec_openmp_report_entry *entry, const void **function_start) {
  uintptr_t key = atomic_load_explicit(&cpuexec__omp_table_keys[slot], memory_order_acquire);
  if (key == 0)
    return false;
  memset(entry, 0, sizeof *entry);
  uint64_t *columns[T_COUNT] = {&entry->inline_in_callbacks, &entry->multithreaded_in_callbacks,
                                &entry->toplevel_in_sessions, &entry->toplevel_outside};
  uint64_t sum[T_COUNT], total = 0;
  pthread_mutex_lock(&baseline_lock);
  sum_slot(slot, sum);
  for (int t = 0; t < T_COUNT; t++) {
    *columns[t] = since(sum[t], baseline_n[slot][t]);
    total += *columns[t];
  }
  pthread_mutex_unlock(&baseline_lock);
  if (total == 0)
    return false;
  entry->codeptr = key == 1 ? NULL : (const void *)key;
  /* Maxima are only raised above one (src/openmp_counts.h). */
  entry->max_requested_threads = atomic_load_explicit(&cpuexec__omp_table_max_requested[slot], memory_order_relaxed);
  entry->max_actual_threads = atomic_load_explicit(&cpuexec__omp_table_max_actual[slot], memory_order_relaxed);
  if (entry->max_requested_threads == 0)
    entry->max_requested_threads = 1;
  if (entry->max_actual_threads == 0)
    entry->max_actual_threads = 1;
  *function_start = entry->codeptr;
  Dl_info info;
  /* codeptr_ra is a return address: look up the byte before it, which is
   * still inside the calling function even when the call ends it. */
  if (entry->codeptr != NULL && dladdr((const char *)entry->codeptr - 1, &info) != 0) {
    snprintf(entry->object, sizeof entry->object, "%s", info.dli_fname != NULL ? info.dli_fname : "");
    entry->offset = (uint64_t)((uintptr_t)entry->codeptr - (uintptr_t)info.dli_fbase);
    if (info.dli_sname != NULL) {
      snprintf(entry->function, sizeof entry->function, "%s", info.dli_sname);
      *function_start = info.dli_saddr;
    }
  }
  return true;
}

static void merge_into(cpuexec_openmp_report_entry *into, const cpuexec_openmp_report_entry *from) {
  into->inline_in_callbacks += from->inline_in_callbacks;
  into->multithreaded_in_callbacks += from->multithreaded_in_callbacks;
  into->toplevel_in_sessions += from->toplevel_in_sessions;
  into->toplevel_outside += from->toplevel_outside;
  if (from->max_requested_threads > into->max_requested_threads)
    into->max_requested_threads = from->max_requested_threads;
  if (from->max_actual_threads > into->max_actual_threads)
    into->max_actual_threads = from->max_actual_threads;
}

CPUEXEC_EXPORT int cpuexec_openmp_report(cpuexec_openmp_report_entry *entries, size_t capacity, size_t *count) {
  if (count == NULL)
    return cpuexec__fail(CPUEXEC_EINVAL, "count: NULL; pass a size_t to receive the number of entries");
  if (entries == NULL && capacity > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "entries: NULL with capacity %zu; pass an array or capacity 0", capacity);
  cpuexec_openmp_report_entry *all = calloc(TABLE_SIZE, sizeof *all);
  const void **starts = calloc(TABLE_SIZE, sizeof *starts);
  if (all == NULL || starts == NULL) {
    free(all);
    free(starts);
    return cpuexec__fail(CPUEXEC_ENOMEM, "report: %zu bytes for %d entries", TABLE_SIZE * sizeof *all, TABLE_SIZE);
  }
  size_t n = 0;
  for (int slot = 0; slot < TABLE_SIZE; slot++) {
    const void *start = NULL;
    if (!read_slot(slot, &all[n], &start))
      continue;
    /* Call sites of one named function are one line of the report. */
    size_t same = n;
    if (all[n].function[0] != '\0')
      for (size_t i = 0; i < n; i++)
        if (starts[i] == start) {
          same = i;
          break;
        }
    if (same != n) {
      merge_into(&all[same], &all[n]);
      continue;
    }
    starts[n++] = start;
  }
  qsort(all, n, sizeof *all, by_regions_descending);
  if (entries != NULL && capacity > 0 && n > 0)
    memcpy(entries, all, (n < capacity ? n : capacity) * sizeof *all);
  *count = n;
  free(all);
  free(starts);
  return 0;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

/* snprintf into buf at *length, tracking the full length. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t size, size_t *length, const char *format, ...) {
  char scratch[1];
  size_t used = *length < size ? *length : size;
  va_list args;
  va_start(args, format);
  int n = size - used > 0 ? vsnprintf(buf + used, size - used, format, args) : vsnprintf(scratch, 0, format, args);
  va_end(args);
  if (n > 0)
    *length += (size_t)n;
}
#define APPEND(...) append(buf, size, &length, __VA_ARGS__)

CPUEXEC_EXPORT int cpuexec_openmp_report_describe(char *buf, size_t size) {
  if (buf == NULL && size > 0)
    return cpuexec__fail(CPUEXEC_EINVAL, "buf: NULL with size %zu; pass a buffer or size 0", size);
  cpuexec_openmp_state status;
  cpuexec_openmp_counters c;
  cpuexec_openmp_status(&status);
  cpuexec_openmp_counters_get(&c);
  size_t n = 0;
  int rc = cpuexec_openmp_report(NULL, 0, &n);
  cpuexec_openmp_report_entry *entries = n > 0 ? calloc(n, sizeof *entries) : NULL;
  if (rc == 0 && n > 0 && entries == NULL)
    return cpuexec__fail(CPUEXEC_ENOMEM, "report: %zu entries", n);
  if (rc == 0 && n > 0)
    rc = cpuexec_openmp_report(entries, n, &n);
  if (rc != 0) {
    free(entries);
    return rc;
  }
  size_t length = 0;
  APPEND("OpenMP detection: %s\n", status.reason);
  APPEND("runtimes: libomp %s, libgomp %s%s%s\n", status.libomp_loaded ? status.libomp_path : "(not loaded)",
         status.libgomp_loaded ? status.libgomp_path : "(not loaded)", status.chained_tool ? "; chained tool " : "",
         status.chained_tool ? status.chained_tool_name : "");
  APPEND("regions in callbacks: %llu (inline %llu, more than one thread %llu); top-level in sessions: %llu; "
         "top-level outside sessions: %llu; nested: %llu\n",
         (unsigned long long)c.regions_in_callbacks, (unsigned long long)c.regions_inline,
         (unsigned long long)c.regions_multithreaded, (unsigned long long)c.toplevel_regions_in_sessions,
         (unsigned long long)c.toplevel_regions_outside, (unsigned long long)c.nested_regions);
  APPEND("OpenMP worker threads created: %llu\n", (unsigned long long)c.openmp_workers_created);
  APPEND("%-40s %10s %10s %10s %10s %9s\n", "calling function (object+offset)", "inline-cb", "multi-cb", "top-sess",
         "top-other", "team r/a");
  for (size_t i = 0; i < n; i++) {
    const cpuexec_openmp_report_entry *e = &entries[i];
    char where[200];
    snprintf(where, sizeof where, "%s (%s+0x%llx)", e->function[0] != '\0' ? e->function : "?",
             e->object[0] != '\0' ? base_name(e->object) : "?", (unsigned long long)e->offset);
    APPEND("%-40s %10llu %10llu %10llu %10llu %4u/%-4u\n", where, (unsigned long long)e->inline_in_callbacks,
           (unsigned long long)e->multithreaded_in_callbacks, (unsigned long long)e->toplevel_in_sessions,
           (unsigned long long)e->toplevel_outside, e->max_requested_threads, e->max_actual_threads);
  }
  if (n == 0)
    APPEND("(no OpenMP region seen)\n");
  free(entries);
  return (int)length;
}

/* CPUEXEC_OPENMP_REPORT=FILE (or "-" for stderr): write the report when the
 * process exits (cpuexec-info --openmp-report sets it for the program it
 * runs). Registered at load, so it runs before the runtimes' destructors. */
static void write_report_at_exit(void) {
  const char *path = getenv("CPUEXEC_OPENMP_REPORT");
  if (path == NULL)
    return;
  int length = cpuexec_openmp_report_describe(NULL, 0);
  char *text = length > 0 ? malloc((size_t)length + 1) : NULL;
  if (text == NULL)
    return;
  cpuexec_openmp_report_describe(text, (size_t)length + 1);
  FILE *out = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
  if (out != NULL) {
    fputs(text, out);
    if (out != stderr)
      fclose(out);
  }
  free(text);
}

__attribute__((constructor)) static void report_at_exit_if_asked(void) {
  if (getenv("CPUEXEC_OPENMP_REPORT") != NULL)
    atexit(write_report_at_exit);
}
