/* Internal: the library's two string builders.
 *   cpuexec__strbuf   a growable string for keys and descriptions; an
 *                     allocation failure is sticky (failed = true), so
 *                     callers check once at the end;
 *   cpuexec__bounded  a caller's fixed buffer written like snprintf: text
 *                     past the end is cut (always NUL-terminated when size >
 *                     0) and len counts the full length, which the public
 *                     *_format / *_describe calls return. */
#ifndef CPUEXEC_SRC_STRBUF_H
#define CPUEXEC_SRC_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cpuexec__strbuf {
  char *data; /* NUL-terminated once anything was appended; NULL before */
  size_t len;
  size_t cap;
  bool failed;
} cpuexec__strbuf;

void cpuexec__strbuf_printf(cpuexec__strbuf *sb, const char *format, ...) __attribute__((format(CPUEXEC_PRINTF_FORMAT, 2, 3)));
/* Appends text as a JSON string literal, quotes included. */
void cpuexec__strbuf_json_string(cpuexec__strbuf *sb, const char *text);
/* Hands the text over (caller frees); NULL on allocation failure. */
char *cpuexec__strbuf_take(cpuexec__strbuf *sb);
void cpuexec__strbuf_free(cpuexec__strbuf *sb);
/* snprintf-like copy of the text into buf; returns its full length. */
int cpuexec__strbuf_copy_out(const cpuexec__strbuf *sb, char *buf, size_t size);

typedef struct cpuexec__bounded {
  char *buf;   /* NULL only with size 0 */
  size_t size;
  size_t len;  /* the full length written so far, cut or not */
} cpuexec__bounded;

/* Starts writing buf (empties it when size > 0). */
cpuexec__bounded cpuexec__bounded_on(char *buf, size_t size);
void cpuexec__bounded_put(cpuexec__bounded *b, const char *text, size_t n);
void cpuexec__bounded_printf(cpuexec__bounded *b, const char *format, ...) __attribute__((format(CPUEXEC_PRINTF_FORMAT, 2, 3)));

/* The last step of a *_describe call: copies the text out like snprintf
 * and returns its full length, or CPUEXEC_ENOMEM naming `what` when the
 * text could not be built. Frees sb either way. */
int cpuexec__strbuf_finish(cpuexec__strbuf *sb, char *buf, size_t size, const char *what);

#endif
