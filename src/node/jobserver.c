/* The GNU make jobserver client (jobserver.h). */
#include "jobserver.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

#ifndef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The value of the last --jobserver-auth= (or --jobserver-fds=) word. */
static bool auth_value(const char *makeflags, char *out, size_t size) {
  static const char *const keys[] = {"--jobserver-auth=", "--jobserver-fds="};
  const char *best = NULL;
  for (int k = 0; k < 2; k++)
    for (const char *p = makeflags; (p = strstr(p, keys[k])) != NULL; p += strlen(keys[k]))
      if (best == NULL || p > best) best = p + strlen(keys[k]);
  if (best == NULL) return false;
  size_t len = strcspn(best, " \t");
  if (len >= size) len = size - 1;
  memcpy(out, best, len);
  out[len] = '\0';
  return true;
}

static bool is_fifo(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* A strict descriptor number. */
static bool parse_fd(const char *text, size_t len, int *fd) {
  if (len == 0 || len > 9) return false;
  int v = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *fd = v;
  return true;
}

static int fail(cpuexec__jobserver *js, const char *why, const char *detail) {
  if (js->read_fd >= 0) close(js->read_fd);
  if (js->write_fd >= 0) close(js->write_fd);
  js->read_fd = js->write_fd = -1;
  return cpuexec__fail(CPUEXEC_ESTATE, "jobserver: MAKEFLAGS names \"%s\": %s%s; the process keeps its own count",
                       js->auth, why, detail);
}

/* Opens an inherited descriptor anew: our own open file, so O_NONBLOCK and
 * O_CLOEXEC are ours and make's descriptor keeps its flags. */
static int reopen(int fd, int flags) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  return open(path, flags | O_NONBLOCK | O_CLOEXEC);
}

int cpuexec__jobserver_open(const char *makeflags, cpuexec__jobserver *js) {
  js->read_fd = js->write_fd = -1;
  atomic_store(&js->held, 0);
  atomic_store(&js->closed, false);
  js->auth[0] = '\0';
  if (makeflags == NULL || !auth_value(makeflags, js->auth, sizeof js->auth)) return 0;
  if (strncmp(js->auth, "fifo:", 5) == 0) {
    const char *path = js->auth + 5;
    if (*path == '\0') return fail(js, "an empty fifo path", "");
    js->read_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (js->read_fd >= 0 && is_fifo(js->read_fd)) js->write_fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (js->read_fd < 0 || js->write_fd < 0) return fail(js, "the fifo cannot be opened: ", strerror(errno));
    if (!is_fifo(js->read_fd)) return fail(js, "not a fifo", "");
    return 1;
  }
  const char *comma = strchr(js->auth, ',');
  int r, w;
  if (comma == NULL || !parse_fd(js->auth, (size_t)(comma - js->auth), &r) || !parse_fd(comma + 1, strlen(comma + 1), &w))
    return fail(js, "malformed; expected fifo:PATH or R,W", "");
  if (fcntl(r, F_GETFD) < 0 || fcntl(w, F_GETFD) < 0)
    return fail(js, "its descriptors are closed (make did not pass them: a recipe without '+'?)", "");
  if (!is_fifo(r) || !is_fifo(w)) return fail(js, "its descriptors are not pipes", "");
  js->read_fd = reopen(r, O_RDONLY);
  js->write_fd = js->read_fd >= 0 ? reopen(w, O_WRONLY) : -1;
  if (js->read_fd < 0 || js->write_fd < 0)
    return fail(js, "cannot open the pipe anew through /proc/self/fd: ", strerror(errno));
  return 1;
}

bool cpuexec__jobserver_take(cpuexec__jobserver *js, char *byte) {
  if (js->read_fd < 0 || atomic_load_explicit(&js->closed, memory_order_acquire)) return false;
  if (read(js->read_fd, byte, 1) != 1) return false; /* EAGAIN: none free; EOF: make is gone */
  atomic_fetch_add_explicit(&js->held, 1, memory_order_acq_rel);
  if (atomic_load_explicit(&js->closed, memory_order_acquire)) {
    /* Exit began meanwhile: the exit's count may have missed this one. */
    cpuexec__jobserver_give(js, *byte);
    return false;
  }
  return true;
}

void cpuexec__jobserver_give(cpuexec__jobserver *js, char byte) {
  /* Only a token counted as held goes back: never one more than taken,
   * even racing the exit, which gives back what is left. */
  int64_t h = atomic_load_explicit(&js->held, memory_order_acquire);
  while (h > 0 && !atomic_compare_exchange_weak_explicit(&js->held, &h, h - 1, memory_order_acq_rel,
                                                         memory_order_acquire)) {
  }
  if (h <= 0) return;
  while (write(js->write_fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

void cpuexec__jobserver_close(cpuexec__jobserver *js) {
  if (js->write_fd < 0) return;
  atomic_store_explicit(&js->closed, true, memory_order_release);
  int64_t left = atomic_exchange_explicit(&js->held, 0, memory_order_acq_rel);
  for (; left > 0; left--) {
    char token = '+';
    while (write(js->write_fd, &token, 1) < 0 && errno == EINTR) {
    }
  }
}
#else
int cpuexec__jobserver_open(const char *makeflags, cpuexec__jobserver *js) {
  (void)makeflags;
  js->read_fd = js->write_fd = -1;
  return 0;
}
bool cpuexec__jobserver_take(cpuexec__jobserver *js, char *byte) {
  (void)js, (void)byte;
  return false;
}
void cpuexec__jobserver_give(cpuexec__jobserver *js, char byte) { (void)js, (void)byte; }
void cpuexec__jobserver_close(cpuexec__jobserver *js) { (void)js; }
#endif
