/* The node budget's shared table: create, check, register, reclaim
 * (node_table.h). */
#include "node_table.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "process_identity.h"

#ifndef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A creator stores the magic last; an opener that finds the file before
 * that yields this many times, then refuses it (a creator that died half
 * way leaves such a file: it is reported, never waited on forever). */
#define CREATE_WAIT_YIELDS 100000u

static uint64_t fnv1a(const char *text) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return h;
}

int cpuexec__node_table_path(const char *dir, const char *identity, char *buf, unsigned long size) {
  /* The format's version is in the name: a table left by a library of
   * another version (its processes gone or not) is not this one's, and is
   * neither refused nor shared. */
  int n = snprintf(buf, size, "%s/cpuexec-node-v%u-%lu-%016llx", dir, CPUEXEC__NODE_VERSION, (unsigned long)geteuid(),
                   (unsigned long long)fnv1a(identity));
  if (n < 0 || (unsigned long)n >= size)
    return cpuexec__fail(CPUEXEC_ESTATE, "node budget: the directory \"%s\" makes too long a path", dir);
  return 0;
}

static int refuse(int fd, cpuexec__node_table *t, const char *path, const char *why, unsigned long long detail) {
  if (t != NULL) munmap(t, sizeof *t);
  if (fd >= 0) close(fd);
  return cpuexec__fail(CPUEXEC_ESTATE, "node budget: table \"%s\" refused: %s%s%llu", path, why,
                       detail != 0 ? " " : "", detail);
}

/* The checks every opener makes on a table it did not just create. */
static int check(int fd, const char *path, const char *identity, cpuexec__node_table **out) {
  struct stat st;
  if (fstat(fd, &st) != 0) return refuse(fd, NULL, path, "fstat failed, errno", (unsigned long long)errno);
  if (!S_ISREG(st.st_mode)) return refuse(fd, NULL, path, "not a regular file", 0);
  if (st.st_uid != geteuid()) return refuse(fd, NULL, path, "owned by another user: uid", (unsigned long long)st.st_uid);
  if ((st.st_mode & 0777) != 0600) {
    close(fd);
    return cpuexec__fail(CPUEXEC_ESTATE, "node budget: table \"%s\" refused: mode is %03o, not 0600", path,
                         (unsigned)(st.st_mode & 0777));
  }
  for (uint32_t i = 0; st.st_size < (off_t)sizeof(cpuexec__node_table) && i < CREATE_WAIT_YIELDS; i++) {
    sched_yield();
    if (fstat(fd, &st) != 0) return refuse(fd, NULL, path, "fstat failed, errno", (unsigned long long)errno);
  }
  if (st.st_size != (off_t)sizeof(cpuexec__node_table))
    return refuse(fd, NULL, path, "corrupted: its size is not that of a table but", (unsigned long long)st.st_size);
  cpuexec__node_table *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (t == MAP_FAILED) return refuse(fd, NULL, path, "mmap failed, errno", (unsigned long long)errno);
  uint64_t magic = 0;
  for (uint32_t i = 0; (magic = atomic_load_explicit(&t->magic, memory_order_acquire)) == 0 && i < CREATE_WAIT_YIELDS;
       i++)
    sched_yield();
  if (magic != CPUEXEC__NODE_MAGIC) return refuse(fd, t, path, "corrupted: no libcpuexec magic", 0);
  if (t->version != CPUEXEC__NODE_VERSION)
    return refuse(fd, t, path, "another version of the table format:", (unsigned long long)t->version);
  if (t->size != sizeof *t || t->slot_count != CPUEXEC__NODE_SLOTS || t->entry_count != CPUEXEC__NODE_ENTRIES ||
      atomic_load(&t->capacity) == 0 || atomic_load(&t->capacity) > CPUEXEC__NODE_SLOTS)
    return refuse(fd, t, path, "corrupted: its sizes are not this version's", 0);
  if (memchr(t->identity, '\0', sizeof t->identity) == NULL || strcmp(t->identity, identity) != 0)
    return refuse(fd, t, path, "it belongs to another cgroup (its name's hash collides)", 0);
  close(fd);
  *out = t;
  return 0;
}

int cpuexec__node_table_open(const char *path, const char *identity, uint32_t capacity, cpuexec__node_table **out) {
  *out = NULL;
  if (strlen(identity) >= CPUEXEC__NODE_IDENTITY_MAX)
    return cpuexec__fail(CPUEXEC_ESTATE, "node budget: the cgroup identity is too long");
  if (capacity == 0) capacity = 1;
  if (capacity > CPUEXEC__NODE_SLOTS) capacity = CPUEXEC__NODE_SLOTS;
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      return cpuexec__fail(CPUEXEC_ESTATE, "node budget: cannot open table \"%s\": %s", path, strerror(errno));
    return check(fd, path, identity, out);
  }
  if (fd < 0) return cpuexec__fail(CPUEXEC_ESTATE, "node budget: cannot create table \"%s\": %s", path, strerror(errno));
  /* Ours: the mode the umask may have narrowed, then the size and fields. */
  cpuexec__node_table *t = MAP_FAILED;
  if (fchmod(fd, 0600) != 0 || ftruncate(fd, sizeof *t) != 0 ||
      (t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
    int e = errno;
    close(fd);
    unlink(path);
    return cpuexec__fail(CPUEXEC_ESTATE, "node budget: cannot size table \"%s\": %s", path, strerror(e));
  }
  close(fd);
  t->version = CPUEXEC__NODE_VERSION;
  t->size = sizeof *t;
  t->slot_count = CPUEXEC__NODE_SLOTS;
  t->entry_count = CPUEXEC__NODE_ENTRIES;
  snprintf(t->identity, sizeof t->identity, "%s", identity);
  atomic_store_explicit(&t->capacity, capacity, memory_order_relaxed);
  atomic_store_explicit(&t->magic, CPUEXEC__NODE_MAGIC, memory_order_release);
  *out = t;
  return 0;
}

void cpuexec__node_table_close(cpuexec__node_table *table) {
  if (table != NULL) munmap(table, sizeof *table);
}

static inline uint32_t tag_of(uint32_t index, uint32_t generation) { return (index + 1) | (generation & 0xffffu) << 16; }

static uint32_t capacity_of(cpuexec__node_table *t) {
  uint32_t cap = atomic_load_explicit(&t->capacity, memory_order_relaxed);
  return cap > CPUEXEC__NODE_SLOTS ? CPUEXEC__NODE_SLOTS : cap;
}

/* One less caller over the budget, never below none (a count a crash left
 * short is set right by the next reclaim's recount). */
static void overflow_down(cpuexec__node_table *t) {
  uint32_t n = atomic_load_explicit(&t->overflow, memory_order_relaxed);
  while (n > 0 && !atomic_compare_exchange_weak(&t->overflow, &n, n - 1)) {
  }
}

/* Releases entry e's callers' slot c (what its caller_slot held), if it
 * still holds that one. */
static bool release_caller(cpuexec__node_table *t, cpuexec__node_entry *e, uint32_t tag, uint32_t c) {
  if (c == 0 || c == CPUEXEC__NODE_CALLER_CLAIMING || !atomic_compare_exchange_strong(&e->caller_slot, &c, 0))
    return false;
  uint32_t slot = (c & ~CPUEXEC__NODE_CALLER_OVER) - 1, expected = tag;
  if (slot < CPUEXEC__NODE_SLOTS) atomic_compare_exchange_strong(&t->slots[slot], &expected, 0);
  if (c & CPUEXEC__NODE_CALLER_OVER) overflow_down(t);
  return true;
}

/* Frees entry i if its owner died: its callers' slot, its other slots,
 * then the entry. */
static uint32_t reclaim_entry(cpuexec__node_table *t, uint32_t i) {
  cpuexec__node_entry *e = &t->entries[i];
  uint64_t owner = atomic_load_explicit(&e->owner, memory_order_acquire);
  if (owner == 0) return 0;
  uint64_t recorded = atomic_load_explicit(&e->start_time, memory_order_acquire), now;
  if (cpuexec__process_alive((int64_t)(owner & 0xffffffffu), &now) && (recorded == 0 || now == recorded)) return 0;
  uint32_t tag = tag_of(i, (uint32_t)(owner >> 32)), freed = 0;
  release_caller(t, e, tag, atomic_load(&e->caller_slot));
  for (uint32_t s = 0; s < CPUEXEC__NODE_SLOTS; s++) {
    uint32_t expected = tag;
    if (atomic_compare_exchange_strong(&t->slots[s], &expected, 0)) freed++;
  }
  atomic_compare_exchange_strong(&e->owner, &owner, 0);
  return freed;
}

uint32_t cpuexec__node_table_register(cpuexec__node_table *t) {
  uint64_t pid = (uint64_t)getpid(), start;
  cpuexec__process_alive((int64_t)pid, &start);
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t i = 0; i < CPUEXEC__NODE_ENTRIES; i++) {
      uint64_t expected = 0;
      uint32_t generation = (atomic_fetch_add(&t->entry_generation, 1) + 1) & 0xffffu;
      uint64_t owner = pid | (uint64_t)generation << 32 | CPUEXEC__NODE_ENTRY_USED;
      if (atomic_load_explicit(&t->entries[i].owner, memory_order_relaxed) != 0 ||
          !atomic_compare_exchange_strong(&t->entries[i].owner, &expected, owner))
        continue;
      cpuexec__node_entry *e = &t->entries[i];
      atomic_store_explicit(&e->caller_slot, 0, memory_order_relaxed);
      atomic_store_explicit(&e->beat, 0, memory_order_relaxed);
      atomic_store_explicit(&e->beat_seen, 0, memory_order_relaxed);
      atomic_store_explicit(&e->beat_seen_ns, 0, memory_order_relaxed);
      uint32_t high = atomic_load(&t->entry_high);
      while (high < i + 1 && !atomic_compare_exchange_weak(&t->entry_high, &high, i + 1)) {
      }
      atomic_store_explicit(&e->start_time, start, memory_order_release);
      return tag_of(i, generation);
    }
    /* Full: free the entries of the dead, once. */
    for (uint32_t i = 0; i < CPUEXEC__NODE_ENTRIES; i++) reclaim_entry(t, i);
  }
  return 0;
}

void cpuexec__node_table_unregister(cpuexec__node_table *t, uint32_t tag) {
  if (tag == 0) return;
  cpuexec__node_entry *e = cpuexec__node_table_entry(t, tag);
  release_caller(t, e, tag, atomic_load(&e->caller_slot));
  for (uint32_t s = 0; s < CPUEXEC__NODE_SLOTS; s++) {
    uint32_t expected = tag;
    atomic_compare_exchange_strong(&t->slots[s], &expected, 0);
  }
  uint32_t i = (tag & 0xffffu) - 1;
  uint64_t owner = atomic_load(&t->entries[i].owner);
  if ((uint32_t)(owner >> 32 & 0xffffu) == tag >> 16 && (owner & 0xffffffffu) == (uint64_t)getpid()) {
    atomic_store(&t->entries[i].start_time, 0);
    atomic_compare_exchange_strong(&t->entries[i].owner, &owner, 0);
  }
}

uint32_t cpuexec__node_table_reclaim(cpuexec__node_table *t) {
  /* Only entries that hold a slot are looked at: one /proc read each. A
   * slot whose tag names no registered entry (a corrupted word) is freed. */
  bool holds[CPUEXEC__NODE_ENTRIES] = {false};
  uint32_t freed = 0;
  for (uint32_t s = 0; s < CPUEXEC__NODE_SLOTS; s++) {
    uint32_t tag = atomic_load_explicit(&t->slots[s], memory_order_relaxed);
    if (tag == 0) continue;
    uint32_t i = (tag & 0xffffu) - 1;
    uint64_t owner = i < CPUEXEC__NODE_ENTRIES ? atomic_load(&t->entries[i].owner) : 0;
    if (owner == 0 || (uint32_t)(owner >> 32 & 0xffffu) != tag >> 16) {
      if (atomic_compare_exchange_strong(&t->slots[s], &tag, 0)) freed++;
      continue;
    }
    holds[i] = true;
  }
  uint32_t over = 0;
  for (uint32_t i = 0; i < CPUEXEC__NODE_ENTRIES; i++) {
    if (holds[i]) freed += reclaim_entry(t, i);
    if (atomic_load(&t->entries[i].owner) != 0) {
      uint32_t c = atomic_load(&t->entries[i].caller_slot);
      over += c != CPUEXEC__NODE_CALLER_CLAIMING && (c & CPUEXEC__NODE_CALLER_OVER);
    }
  }
  /* The count of callers over the budget, recounted: a process that died
   * between claiming such a slot and counting it leaves it wrong. */
  atomic_store(&t->overflow, over);
  return freed;
}

uint32_t cpuexec__node_table_room(cpuexec__node_table *t, uint32_t enough) {
  if (atomic_load_explicit(&t->overflow, memory_order_relaxed) != 0) return 0;
  uint32_t cap = capacity_of(t), room = 0;
  for (uint32_t s = 0; s < cap && room < enough; s++)
    room += atomic_load_explicit(&t->slots[s], memory_order_relaxed) == 0;
  return room;
}

bool cpuexec__node_table_worker_holds(cpuexec__node_table *t, uint32_t tag, int32_t except) {
  if (atomic_load_explicit(&t->overflow, memory_order_relaxed) != 0) return false;
  uint32_t cap = capacity_of(t);
  for (uint32_t s = 0; s < cap; s++)
    if ((int32_t)s != except && atomic_load_explicit(&t->slots[s], memory_order_relaxed) == tag) return true;
  return false;
}

void cpuexec__node_table_claim_caller(cpuexec__node_table *t, uint32_t tag) {
  cpuexec__node_entry *e = cpuexec__node_table_entry(t, tag);
  uint32_t held = atomic_load(&e->caller_slot);
  if ((held != 0 && !(held & CPUEXEC__NODE_CALLER_OVER)) || held == CPUEXEC__NODE_CALLER_CLAIMING ||
      !atomic_compare_exchange_strong(&e->caller_slot, &held, CPUEXEC__NODE_CALLER_CLAIMING))
    return;
  /* None held, or one above the capacity: the lowest free slot, so a claim
   * over the budget moves below it as soon as a slot there is free (until
   * then no worker of any process takes one). */
  uint32_t cap = capacity_of(t), limit = held ? cap : CPUEXEC__NODE_SLOTS, claimed = held;
  for (uint32_t s = 0; s < limit && claimed == held; s++) {
    uint32_t free_word = 0;
    if (atomic_load_explicit(&t->slots[s], memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong(&t->slots[s], &free_word, tag))
      claimed = (s + 1) | (s >= cap ? CPUEXEC__NODE_CALLER_OVER : 0);
  }
  /* Counted before it is published: a release can then never count down a
   * slot that was not counted up. */
  if (claimed != held && (claimed & CPUEXEC__NODE_CALLER_OVER)) atomic_fetch_add(&t->overflow, 1);
  atomic_store(&e->caller_slot, claimed);
  if (claimed != held && held != 0) {
    uint32_t old = (held & ~CPUEXEC__NODE_CALLER_OVER) - 1, expected = tag;
    atomic_compare_exchange_strong(&t->slots[old], &expected, 0);
    overflow_down(t);
  }
}

void cpuexec__node_table_release_caller(cpuexec__node_table *t, uint32_t tag) {
  cpuexec__node_entry *e = cpuexec__node_table_entry(t, tag);
  release_caller(t, e, tag, atomic_load(&e->caller_slot));
}

uint32_t cpuexec__node_table_release_idle_callers(cpuexec__node_table *t, uint64_t now_ns, uint64_t linger_ns) {
  uint32_t high = atomic_load_explicit(&t->entry_high, memory_order_relaxed), released = 0;
  if (high > CPUEXEC__NODE_ENTRIES) high = CPUEXEC__NODE_ENTRIES;
  for (uint32_t i = 0; i < high; i++) {
    cpuexec__node_entry *e = &t->entries[i];
    uint64_t owner = atomic_load_explicit(&e->owner, memory_order_acquire);
    uint32_t c = atomic_load_explicit(&e->caller_slot, memory_order_relaxed);
    if (owner == 0 || c == 0 || c == CPUEXEC__NODE_CALLER_CLAIMING) continue;
    uint64_t beat = atomic_load_explicit(&e->beat, memory_order_relaxed);
    if (beat != atomic_load_explicit(&e->beat_seen, memory_order_relaxed)) {
      atomic_store_explicit(&e->beat_seen, beat, memory_order_relaxed);
      atomic_store_explicit(&e->beat_seen_ns, now_ns, memory_order_relaxed);
    } else if (now_ns - atomic_load_explicit(&e->beat_seen_ns, memory_order_relaxed) >= linger_ns &&
               release_caller(t, e, tag_of(i, (uint32_t)(owner >> 32)), c)) {
      released++;
    }
  }
  return released;
}

unsigned long cpuexec__node_table_holders(const cpuexec__node_table *table, char *buf, unsigned long size) {
  cpuexec__node_table *t = (cpuexec__node_table *)table;
  uint32_t high = atomic_load(&t->entry_high);
  if (high > CPUEXEC__NODE_ENTRIES) high = CPUEXEC__NODE_ENTRIES;
  unsigned long used = 0;
  if (size > 0) buf[0] = '\0';
  for (uint32_t i = 0; i < high; i++) {
    uint64_t owner = atomic_load(&t->entries[i].owner);
    if (owner == 0) continue;
    uint32_t tag = tag_of(i, (uint32_t)(owner >> 32)), held = cpuexec__node_table_held(t, tag);
    if (held == 0) continue;
    uint32_t c = atomic_load(&t->entries[i].caller_slot);
    bool caller = c != 0 && c != CPUEXEC__NODE_CALLER_CLAIMING;
    int n = snprintf(buf + (used < size ? used : size), used < size ? size - used : 0, "%spid %llu: %u slot%s (%s)",
                     used ? "; " : "", (unsigned long long)(owner & 0xffffffffu), held, held == 1 ? "" : "s",
                     !caller ? "workers" : (c & CPUEXEC__NODE_CALLER_OVER) ? "its callers' over the budget, workers"
                                                                           : "its callers', workers");
    if (n > 0) used += (unsigned long)n;
  }
  if (used == 0) {
    int n = snprintf(buf, size, "nobody");
    used = n > 0 ? (unsigned long)n : 0;
  }
  return used;
}

uint32_t cpuexec__node_table_held(const cpuexec__node_table *t, uint32_t tag) {
  uint32_t n = 0;
  for (uint32_t s = 0; s < CPUEXEC__NODE_SLOTS; s++) {
    uint32_t v = atomic_load_explicit(&((cpuexec__node_table *)t)->slots[s], memory_order_relaxed);
    if (v != 0 && (tag == 0 || v == tag)) n++;
  }
  return n;
}
#else
int cpuexec__node_table_path(const char *dir, const char *identity, char *buf, unsigned long size) {
  (void)dir, (void)identity, (void)buf, (void)size;
  return cpuexec__fail(CPUEXEC_ESTATE, "node budget: not built for Windows");
}
int cpuexec__node_table_open(const char *path, const char *identity, uint32_t capacity, cpuexec__node_table **out) {
  (void)path, (void)identity, (void)capacity;
  *out = NULL;
  return cpuexec__fail(CPUEXEC_ESTATE, "node budget: not built for Windows");
}
void cpuexec__node_table_close(cpuexec__node_table *table) { (void)table; }
uint32_t cpuexec__node_table_register(cpuexec__node_table *table) { (void)table; return 0; }
void cpuexec__node_table_unregister(cpuexec__node_table *table, uint32_t tag) { (void)table, (void)tag; }
uint32_t cpuexec__node_table_reclaim(cpuexec__node_table *table) { (void)table; return 0; }
uint32_t cpuexec__node_table_held(const cpuexec__node_table *table, uint32_t tag) { (void)table, (void)tag; return 0; }
unsigned long cpuexec__node_table_holders(const cpuexec__node_table *table, char *buf, unsigned long size) {
  (void)table;
  int n = snprintf(buf, size, "nobody");
  return n > 0 ? (unsigned long)n : 0;
}
uint32_t cpuexec__node_table_room(cpuexec__node_table *table, uint32_t enough) { (void)table, (void)enough; return 0; }
bool cpuexec__node_table_worker_holds(cpuexec__node_table *table, uint32_t tag, int32_t except) {
  (void)table, (void)tag, (void)except;
  return false;
}
void cpuexec__node_table_claim_caller(cpuexec__node_table *table, uint32_t tag) { (void)table, (void)tag; }
void cpuexec__node_table_release_caller(cpuexec__node_table *table, uint32_t tag) { (void)table, (void)tag; }
uint32_t cpuexec__node_table_release_idle_callers(cpuexec__node_table *table, uint64_t now_ns, uint64_t linger_ns) {
  (void)table, (void)now_ns, (void)linger_ns;
  return 0;
}
#endif
