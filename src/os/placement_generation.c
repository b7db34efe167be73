/* The placement generation's counter (placement_generation.h). */
#include "placement_generation.h"

_Atomic uint64_t cpuexec__placement_changes;
