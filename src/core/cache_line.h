/* Internal: the unit of layout for data that threads share. */
#ifndef CPUEXEC_SRC_CACHE_LINE_H
#define CPUEXEC_SRC_CACHE_LINE_H

/* Two lines: adjacent-line prefetch makes neighbours of 64-byte lines share. */
#define CPUEXEC__LINE 128

#endif
