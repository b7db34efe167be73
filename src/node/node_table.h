/* Internal: the node budget's table, one file in shared memory for every
 * libcpuexec process of one user in one cgroup (doc/node-budget.md).
 *
 * The file, <dir>/cpuexec-node-v<version>-<uid>-<hash of the cgroup identity>, is
 * created O_EXCL with mode 0600 and then checked by every opener: a
 * regular file owned by the effective user, mode 0600, the magic, this
 * version, this size and the same identity. Anything else is refused with
 * a message naming what was wrong; the process then keeps its own count.
 *
 * The budget is capacity slots (at most CPUEXEC__NODE_SLOTS). A slot word is
 * 0 when free, else the tag of the process that holds it: its entry index
 * + 1 and the entry's generation. Taking a slot is one compare-and-swap of
 * a free word to the tag, giving it back one compare-and-swap of the tag to
 * 0: no system call, and no window in which a crash loses a slot, since a
 * slot's whole state is that one word. A process registers an entry (pid,
 * start time) before its first take; a reclaim finds entries whose owner
 * died (gone, a zombie, or a pid reused by a process started later) and
 * frees their slots and the entry, so slots come back by the owner's
 * identity and never by trust.
 *
 * A process's callers hold one implicit slot while they run regions (the
 * entry's caller_slot), claimed without waiting: below the capacity when
 * one is free, else above it, where `overflow` counts it and no worker of
 * any process may take a slot until it is given back. A caller that
 * stopped opening regions (its entry's beat unchanged for
 * CPUEXEC__NODE_CALLER_LINGER_NS) has its slot released by whoever looks
 * (cpuexec__node_table_release_idle_callers). */
#ifndef CPUEXEC_SRC_NODE_TABLE_H
#define CPUEXEC_SRC_NODE_TABLE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CPUEXEC__NODE_MAGIC 0x43505558454e4f44ull /* "CPUXENOD" */
#define CPUEXEC__NODE_VERSION 2u
#define CPUEXEC__NODE_SLOTS 1024u
#define CPUEXEC__NODE_ENTRIES 512u
#define CPUEXEC__NODE_IDENTITY_MAX 1024u

/* One process; a line of its own, since its beat is written at every
 * region it opens. */
typedef struct cpuexec__node_entry {
  /* 0: free; else pid | generation << 32 | CPUEXEC__NODE_ENTRY_USED. */
  alignas(64) _Atomic uint64_t owner;
  /* The owner's start time (clock ticks after boot, /proc/<pid>/stat);
   * 0 while the owner registers, or where the system does not say. */
  _Atomic uint64_t start_time;
  /* The callers' implicit slot: 0 none, else its index + 1, with
   * CPUEXEC__NODE_CALLER_OVER when it is above the capacity (counted in
   * `overflow`); CPUEXEC__NODE_CALLER_CLAIMING while one is being claimed. */
  _Atomic uint32_t caller_slot;
  /* Bumped by the owner at each region its callers open. */
  _Atomic uint64_t beat;
  /* What the last look at an idle caller saw of beat, and when (ns). */
  _Atomic uint64_t beat_seen;
  _Atomic uint64_t beat_seen_ns;
} cpuexec__node_entry;

#define CPUEXEC__NODE_ENTRY_USED (1ull << 63)
#define CPUEXEC__NODE_CALLER_OVER (1u << 31)
#define CPUEXEC__NODE_CALLER_CLAIMING 0xffffffffu

typedef struct cpuexec__node_table {
  _Atomic uint64_t magic; /* stored last by the creator (release) */
  uint32_t version;
  uint32_t size;          /* bytes of the file */
  uint32_t slot_count;    /* CPUEXEC__NODE_SLOTS */
  uint32_t entry_count;   /* CPUEXEC__NODE_ENTRIES */
  char identity[CPUEXEC__NODE_IDENTITY_MAX];
  _Atomic uint32_t capacity;         /* N, the budget; re-read from the cgroup */
  _Atomic uint32_t entry_generation; /* bumped at each registration */
  _Atomic uint64_t refresh_after_ns; /* the next re-read of the quota (CLOCK_MONOTONIC) */
  _Atomic uint64_t reclaim_after_ns; /* the next reclaim allowed */
  _Atomic uint64_t idle_look_after_ns; /* the next look for idle callers allowed */
  _Atomic uint32_t entry_high;         /* entries at or above it were never used */
  _Alignas(64) _Atomic uint32_t overflow; /* callers' slots held above the capacity */
  _Alignas(64) _Atomic uint32_t slots[CPUEXEC__NODE_SLOTS];
  _Alignas(64) cpuexec__node_entry entries[CPUEXEC__NODE_ENTRIES];
} cpuexec__node_table;

/* The table's file name in dir for this identity and user (buf of size). */
int cpuexec__node_table_path(const char *dir, const char *identity, char *buf, unsigned long size);

/* Opens the table at path, creating it with capacity when absent, and
 * checks it (see the top). On success *out is mapped. On refusal returns
 * CPUEXEC_ESTATE (or CPUEXEC_ENOMEM) with the reason in
 * cpuexec_error_message(). Never waits for another process longer than a
 * bounded number of yields. */
int cpuexec__node_table_open(const char *path, const char *identity, uint32_t capacity, cpuexec__node_table **out);

void cpuexec__node_table_close(cpuexec__node_table *table);

/* Registers this process (pid, start time): its slot tag, or 0 when every
 * entry is taken by a live process (a reclaim runs first). */
uint32_t cpuexec__node_table_register(cpuexec__node_table *table);

/* Frees every slot with tag and the entry behind it (a clean exit). */
void cpuexec__node_table_unregister(cpuexec__node_table *table, uint32_t tag);

/* Takes a free slot below the capacity for a worker, starting at hint; its
 * index, or -1 when every one is held or a caller is over the budget.
 * Atomics only. */
static inline int32_t cpuexec__node_table_take(cpuexec__node_table *table, uint32_t tag, uint32_t hint) {
  if (atomic_load_explicit(&table->overflow, memory_order_relaxed) != 0) return -1;
  uint32_t cap = atomic_load_explicit(&table->capacity, memory_order_relaxed);
  if (cap > CPUEXEC__NODE_SLOTS) cap = CPUEXEC__NODE_SLOTS;
  uint32_t start = cap == 0 || hint < cap ? hint : hint % cap;
  for (uint32_t k = 0; k < cap; k++) {
    uint32_t i = start + k < cap ? start + k : start + k - cap;
    uint32_t cur = atomic_load_explicit(&table->slots[i], memory_order_relaxed);
    if (cur == 0 && atomic_compare_exchange_strong_explicit(&table->slots[i], &cur, tag, memory_order_acq_rel,
                                                            memory_order_relaxed))
      return (int32_t)i;
  }
  return -1;
}

/* Gives slot back if tag still holds it (a reclaim never takes a live
 * holder's slot; the check keeps a confused caller from freeing another's). */
static inline void cpuexec__node_table_give(cpuexec__node_table *table, uint32_t tag, int32_t slot) {
  uint32_t expected = tag;
  atomic_compare_exchange_strong_explicit(&table->slots[slot], &expected, 0, memory_order_release,
                                          memory_order_relaxed);
}

/* Free slots below the capacity, counted up to `enough`; 0 while a caller
 * is over the budget. */
uint32_t cpuexec__node_table_room(cpuexec__node_table *table, uint32_t enough);

/* Whether tag holds a slot below the capacity besides slot `except` (-1:
 * none): one of its process's workers does, its callers' slot excepted.
 * False while a caller is over the budget (no worker may hold one then). */
bool cpuexec__node_table_worker_holds(cpuexec__node_table *table, uint32_t tag, int32_t except);

/* The entry of tag (registered by this process). */
static inline cpuexec__node_entry *cpuexec__node_table_entry(cpuexec__node_table *table, uint32_t tag) {
  return &table->entries[(tag & 0xffffu) - 1];
}

/* Claims the callers' implicit slot of tag's process, unless it holds one:
 * below the capacity when one is free, else above it (never waits); one
 * held above it moves below when a slot there is free. */
void cpuexec__node_table_claim_caller(cpuexec__node_table *table, uint32_t tag);

/* Releases the callers' implicit slot of tag's process, if it holds one. */
void cpuexec__node_table_release_caller(cpuexec__node_table *table, uint32_t tag);

/* Releases the callers' slots of processes whose beat has not moved for
 * linger_ns at now_ns, as seen by looks at least that far apart; the
 * number released. */
uint32_t cpuexec__node_table_release_idle_callers(cpuexec__node_table *table, uint64_t now_ns, uint64_t linger_ns);

/* Frees the slots and entries of processes that died; the number of slots
 * freed. Reads /proc once per entry that holds slots. */
uint32_t cpuexec__node_table_reclaim(cpuexec__node_table *table);

/* Who holds what, for the description: "pid P: K slots (the callers'
 * over the budget)", "; " between processes, into buf (snprintf-like;
 * "nobody" when no slot is held). */
unsigned long cpuexec__node_table_holders(const cpuexec__node_table *table, char *buf, unsigned long size);

/* Slots held now, and by tag (for the description). */
uint32_t cpuexec__node_table_held(const cpuexec__node_table *table, uint32_t tag);

#endif
