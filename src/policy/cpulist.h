/* Internal: Linux cpulists ("0,2,4-7"), the form of /sys and /proc CPU lists,
 * cgroup cpuset files and the policy's cpu_set.
 *
 * A list is kept in the order written, not sorted: a policy's cpu_set is an
 * ordered list whose first entry is the caller. Items are "N" or "N-M" with
 * N <= M, decimal without leading zeros; the kernel's stride form
 * ("0-15:2") and whitespace are not accepted. Every failure names the field
 * passed in through cpuexec__fail(). */
#ifndef CPUEXEC_SRC_CPULIST_H
#define CPUEXEC_SRC_CPULIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Logical processor ids are OS indices in [0, CPUEXEC__CPU_ID_MAX]. */
#define CPUEXEC__CPU_ID_MAX INT32_MAX

/* Parses one item of len characters at text: "N" gives first = last = N,
 * "N-M" gives first = N, last = M. A descending range is rejected. */
int cpuexec__cpulist_parse_item(const char *field, const char *text, size_t len, int32_t *first, int32_t *last);

/* Appends first..last to ids[*count...]; fails, appending nothing, when the
 * list would hold more than capacity ids. */
int cpuexec__cpulist_append(const char *field, int32_t first, int32_t last, int32_t *ids, uint32_t capacity,
                            uint32_t *count);

/* Parses a whole cpulist of len characters ("" is the empty list) and
 * appends its ids in order. On failure *count is unchanged (ids past it may
 * have been written). */
int cpuexec__cpulist_parse(const char *field, const char *text, size_t len, int32_t *ids, uint32_t capacity,
                           uint32_t *count);

/* Writes ids in order, each run of consecutive ascending ids as "first-last"
 * ([3,0,1,2] is "3,0-2"). Like snprintf: returns the length of the whole
 * text and writes at most size bytes including the NUL (buf may be NULL when
 * size is 0). */
size_t cpuexec__cpulist_format(const int32_t *ids, uint32_t count, char *buf, size_t size);

/* The index of the first entry that repeats an earlier one, or -1. */
int64_t cpuexec__cpulist_find_duplicate(const int32_t *ids, uint32_t count);

/* Appends the cpulist of ids ("0-3,8,10-11"), or "none" when n is 0. */
struct cpuexec__strbuf;
void cpuexec__cpulist_put(struct cpuexec__strbuf *sb, const int32_t *ids, uint32_t n);

#endif
