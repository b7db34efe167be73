/* Internal: the constants of the costed planner's model (src/executor/plan.c has
 * the model and where each figure comes from). A header of its own so a
 * recalibration (bench/calibration/executor_calibrate, `cpuexec-info --bench`) edits
 * one place. */
#ifndef CPUEXEC_SRC_PLAN_MODEL_H
#define CPUEXEC_SRC_PLAN_MODEL_H

#define CPUEXEC__PLAN_DISPATCH_NS 650.0
#define CPUEXEC__PLAN_PER_PARTICIPANT_NS 150.0
#define CPUEXEC__PLAN_NS_PER_BYTE_MEMORY 0.075
#define CPUEXEC__PLAN_NS_PER_BYTE_CACHED 0.02
#define CPUEXEC__PLAN_CACHED_BYTES (1024.0 * 1024.0)
#define CPUEXEC__PLAN_BANDWIDTH_PARTICIPANTS 4u
#define CPUEXEC__PLAN_NS_PER_CYCLE 0.36
#define CPUEXEC__PLAN_TOLERANCE 0.10
#define CPUEXEC__PLAN_MIN_RANGE_NS 2000.0
#define CPUEXEC__PLAN_CHUNKS_PER_PARTICIPANT 8

#endif
