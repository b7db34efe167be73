/* cpuexec-info's section on threaded libraries and the runtime guards
 * (tools/info_runtimes.c). */
#ifndef CPUEXEC_TOOLS_INFO_RUNTIMES_H
#define CPUEXEC_TOOLS_INFO_RUNTIMES_H

#include <stdbool.h>
#include <stdio.h>

/* Text: a section of its own. JSON: `,"runtimes":{...}`, a member to put
 * inside the report's object. */
void info_runtimes_print(FILE *out, bool json);

#endif
