/* Internal: consistency checks that builds configured --enable-debug run.
 *
 * CPUEXEC_DEBUG (config.h) is a constant, 1 or 0, and every check is an
 * ordinary `if` on it: the checks compile in every build, so they never
 * rot, and the optimiser drops them from the normal build.
 *
 * A failed check is a broken internal invariant, or a misuse of the API
 * that the normal build cannot afford to detect (it would cost the hot path
 * or a lock): the debug build prints what broke, where, and aborts, so the
 * fault shows at its cause. The checks (grep CPUEXEC__CHECK):
 *   - lease vs destroy: cpuexec_executor_release() on a pool the registry
 *     still leases (executor.c);
 *   - slot invariants: a worker admitted to a region is one of its
 *     participants (executor.c); lease counts never go below zero
 *     (registry.c);
 *   - scope stack order is an API error in every build (scope.c returns
 *     CPUEXEC_ESTATE), so it needs no check here. */
#ifndef CPUEXEC_SRC_DEBUG_H
#define CPUEXEC_SRC_DEBUG_H

#ifndef CPUEXEC_DEBUG
#define CPUEXEC_DEBUG 0
#endif

__attribute__((noreturn, format(CPUEXEC_PRINTF_FORMAT, 4, 5))) void cpuexec__check_failed(const char *file, int line,
                                                                          const char *condition,
                                                                          const char *format, ...);

#define CPUEXEC__CHECK(condition, ...)                                                                      \
  do {                                                                                                     \
    if (CPUEXEC_DEBUG && !(condition)) cpuexec__check_failed(__FILE__, __LINE__, #condition, __VA_ARGS__); \
  } while (0)

#endif
