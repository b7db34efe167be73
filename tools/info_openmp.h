/* cpuexec-info --openmp-report and --libraries-report (tools/info_openmp.c). */
#ifndef CPUEXEC_TOOLS_INFO_OPENMP_H
#define CPUEXEC_TOOLS_INFO_OPENMP_H

/* argv: the program and its arguments. Returns the exit status. */
int cpuexec_info_openmp_report(int argc, char **argv);
/* --libraries-report: the same for CPUEXEC_LIBRARIES_REPORT. */
int cpuexec_info_libraries_report(int argc, char **argv);

#endif
