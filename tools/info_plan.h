/* Calibration of the costed planner's model (src/executor/plan.c) on this machine:
 * measures each constant the way src/executor/plan.c documents and prints it (the
 * compiled-in values are src/executor/plan_model.h's). */
#ifndef CPUEXEC_TOOLS_INFO_PLAN_H
#define CPUEXEC_TOOLS_INFO_PLAN_H

#include <stdio.h>

/* Returns 0, or 1 when no executor could be made (the reason printed). */
int info_plan_calibrate(FILE *out);

#endif
