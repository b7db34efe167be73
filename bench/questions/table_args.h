/* The arguments of bench/run.sh's table protocol, as the programs under
 * bench/questions/ take them: --mode=round|smoke (calibrate and hot add
 * nothing of theirs), --quick, --participants=N (or BENCH_PARTICIPANTS;
 * 2 to 64, else 2) and --delay-len, which they ignore. */
#ifndef CPUEXEC_BENCH_TABLE_ARGS_H
#define CPUEXEC_BENCH_TABLE_ARGS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_args {
  bool measure; /* round or smoke: false for the modes with nothing to add */
  bool smoke;
  bool quick;
  unsigned participants;
} table_args;

/* Exits with 2 and the usage on an argument it does not know. */
static inline table_args table_args_parse(int argc, char **argv) {
  const char *mode = "round";
  table_args a = {false, false, false, 2};
  const char *env = getenv("BENCH_PARTICIPANTS");
  if (env && *env) a.participants = (unsigned)strtoul(env, NULL, 10);
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--mode=", 7) == 0)
      mode = argv[i] + 7;
    else if (strcmp(argv[i], "--quick") == 0)
      a.quick = true;
    else if (strncmp(argv[i], "--participants=", 15) == 0)
      a.participants = (unsigned)strtoul(argv[i] + 15, NULL, 10);
    else if (strncmp(argv[i], "--delay-len=", 12) != 0) {
      fprintf(stderr, "usage: %s [--mode=round|smoke] [--quick] [--participants=N]\n", argv[0]);
      exit(2);
    }
  }
  if (a.participants < 2 || a.participants > 64) a.participants = 2;
  a.smoke = strcmp(mode, "smoke") == 0;
  a.measure = a.smoke || strcmp(mode, "round") == 0;
  return a;
}

#endif
