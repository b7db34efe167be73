/* cpuexec-info --bench: dispatch overhead of the default executor next to
 * the OpenMP runtimes installed, and the executor counters of a short run. */
#ifndef CPUEXEC_TOOLS_INFO_BENCH_H
#define CPUEXEC_TOOLS_INFO_BENCH_H

#include <stdio.h>

/* Runs for a few seconds and writes a table to out; 0, or 1 when the
 * default executor could not be made (the message names why). */
int info_bench_run(FILE *out);

#endif
