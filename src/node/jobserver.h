/* Internal: a GNU make jobserver client (doc/node-budget.md, "Under make").
 *
 * When MAKEFLAGS carries --jobserver-auth (or make 4.1's --jobserver-fds),
 * make hands its children tokens, one byte each, in a named pipe
 * ("fifo:PATH") or an inherited pipe ("R,W"); each process owns one
 * implicit token, which covers its caller, and every other running thread
 * must hold one. A worker takes a token before it joins and gives it back
 * before it parks.
 *
 * Reads never block: the fifo is opened by this process with O_NONBLOCK,
 * and make's inherited pipe is opened anew through /proc/self/fd/R, so
 * make's own descriptor (shared with every sibling) keeps its flags.
 * Tokens are counted: only a token taken is given back, and at exit every
 * token still held (workers running or spinning then) goes back. A fork
 * child holds none (the node budget starts it afresh). */
#ifndef CPUEXEC_SRC_NODE_JOBSERVER_H
#define CPUEXEC_SRC_NODE_JOBSERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct cpuexec__jobserver {
  int read_fd, write_fd;  /* this process's own descriptors; -1: none */
  _Atomic int64_t held;   /* tokens this process's workers hold */
  _Atomic bool closed;    /* exit began: no more takes, held goes back once */
  char auth[128];         /* what MAKEFLAGS named, for the description */
} cpuexec__jobserver;

/* Reads makeflags (NULL: none). 1 when a jobserver was found and opened,
 * 0 when makeflags names none, or CPUEXEC_ESTATE with the reason (closed
 * descriptors, a missing fifo, a malformed value) in cpuexec_error_message(). */
int cpuexec__jobserver_open(const char *makeflags, cpuexec__jobserver *js);

/* One token without blocking; true when taken (*byte is what was read). */
bool cpuexec__jobserver_take(cpuexec__jobserver *js, char *byte);

/* Gives back a token this process took. */
void cpuexec__jobserver_give(cpuexec__jobserver *js, char byte);

/* At exit: every token still held goes back, and no more are taken. */
void cpuexec__jobserver_close(cpuexec__jobserver *js);

#endif
