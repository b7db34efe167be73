/* A latch that counts stages: one thread sets stage k, others wait until it
 * is reached. Tests order threads with it instead of waiting on time. */
#ifndef CPUEXEC_TESTS_STAGE_LATCH_H
#define CPUEXEC_TESTS_STAGE_LATCH_H

#include <pthread.h>

typedef struct stage_latch {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stage;
} stage_latch;

#define STAGE_LATCH_INITIALIZER {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}

static inline void stage_latch_wait(stage_latch *l, int stage) {
  pthread_mutex_lock(&l->lock);
  while (l->stage < stage)
    pthread_cond_wait(&l->cond, &l->lock);
  pthread_mutex_unlock(&l->lock);
}

static inline void stage_latch_set(stage_latch *l, int stage) {
  pthread_mutex_lock(&l->lock);
  l->stage = stage;
  pthread_cond_broadcast(&l->cond);
  pthread_mutex_unlock(&l->lock);
}

#endif
