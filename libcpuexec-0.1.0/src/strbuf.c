/* A growable string (strbuf.h). */
#include "strbuf.h"

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
