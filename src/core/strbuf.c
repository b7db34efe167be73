/* The string builders (strbuf.h). */
#include "strbuf.h"

#include "error.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(cpuexec__strbuf *sb, size_t extra) {
  if (sb->failed)
    return false;
  if (sb->len + extra + 1 <= sb->cap)
    return true;
  size_t cap = sb->cap != 0 ? sb->cap : 128;
  while (cap < sb->len + extra + 1)
    cap *= 2;
  char *data = realloc(sb->data, cap);
  if (data == NULL) {
    sb->failed = true;
    return false;
  }
  sb->data = data;
  sb->cap = cap;
  return true;
}

void cpuexec__strbuf_printf(cpuexec__strbuf *sb, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n < 0) {
    sb->failed = true;
    return;
  }
  if (!reserve(sb, (size_t)n))
    return;
  va_start(args, format);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, format, args);
  va_end(args);
  sb->len += (size_t)n;
}

void cpuexec__strbuf_json_string(cpuexec__strbuf *sb, const char *text) {
  cpuexec__strbuf_printf(sb, "\"");
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
    switch (*p) {
    case '"':
      cpuexec__strbuf_printf(sb, "\\\"");
      break;
    case '\\':
      cpuexec__strbuf_printf(sb, "\\\\");
      break;
    case '\n':
      cpuexec__strbuf_printf(sb, "\\n");
      break;
    case '\t':
      cpuexec__strbuf_printf(sb, "\\t");
      break;
    case '\r':
      cpuexec__strbuf_printf(sb, "\\r");
      break;
    default:
      if (*p < 0x20)
        cpuexec__strbuf_printf(sb, "\\u%04x", *p);
      else
        cpuexec__strbuf_printf(sb, "%c", *p);
    }
  }
  cpuexec__strbuf_printf(sb, "\"");
}

char *cpuexec__strbuf_take(cpuexec__strbuf *sb) {
  if (sb->data == NULL && reserve(sb, 0))
    sb->data[0] = '\0';
  if (sb->failed) {
    cpuexec__strbuf_free(sb);
    return NULL;
  }
  char *data = sb->data;
  sb->data = NULL;
  sb->len = sb->cap = 0;
  return data;
}

void cpuexec__strbuf_free(cpuexec__strbuf *sb) {
  free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}

int cpuexec__strbuf_copy_out(const cpuexec__strbuf *sb, char *buf, size_t size) {
  const char *text = sb->data != NULL ? sb->data : "";
  if (size > 0 && buf != NULL) {
    size_t n = sb->len < size - 1 ? sb->len : size - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
  }
  return sb->len > INT_MAX ? INT_MAX : (int)sb->len;
}

cpuexec__bounded cpuexec__bounded_on(char *buf, size_t size) {
  if (size > 0 && buf != NULL)
    buf[0] = '\0';
  return (cpuexec__bounded){buf, buf != NULL ? size : 0, 0};
}

void cpuexec__bounded_put(cpuexec__bounded *b, const char *text, size_t n) {
  if (b->len + 1 < b->size) {
    size_t room = b->size - b->len - 1;
    size_t copy = n < room ? n : room;
    memcpy(b->buf + b->len, text, copy);
    b->buf[b->len + copy] = '\0';
  }
  b->len += n;
}

void cpuexec__bounded_printf(cpuexec__bounded *b, const char *format, ...) {
  char scratch[1];
  size_t used = b->len < b->size ? b->len : b->size;
  va_list args;
  va_start(args, format);
  int n = b->size - used > 0 ? vsnprintf(b->buf + used, b->size - used, format, args)
                             : vsnprintf(scratch, 0, format, args);
  va_end(args);
  if (n > 0)
    b->len += (size_t)n;
}

int cpuexec__strbuf_finish(cpuexec__strbuf *sb, char *buf, size_t size, const char *what) {
  if (sb->failed) {
    cpuexec__strbuf_free(sb);
    return cpuexec__fail(CPUEXEC_ENOMEM, "%s: out of memory", what);
  }
  int n = cpuexec__strbuf_copy_out(sb, buf, size);
  cpuexec__strbuf_free(sb);
  return n;
}
