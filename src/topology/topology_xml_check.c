/* A well-formedness check of a topology XML file before hwloc reads it
 * (cpuexec/topology.h, cpuexec_topology_load_xml: what input it trusts).
 *
 * hwloc 2.9's XML loaders are written for files lstopo produced: a file
 * that ends inside the root element's start tag ("<topology version=\"2.0\"")
 * makes its built-in parser read past the end of the buffer and crash the
 * process. This check refuses any file that is not plain, well-formed XML
 * of the shape hwloc writes, so hwloc only ever sees balanced, terminated
 * markup:
 *   - at most 64 MiB, no NUL byte;
 *   - an optional <?xml ...?> declaration, comments, and one <!DOCTYPE ...>
 *     without an internal subset ('[': no entity definitions, so no
 *     entity expansion);
 *   - exactly one root element, named "topology";
 *   - start tags `<name attr="value" ...>` or `.../>`, names of letters,
 *     digits, '_', ':', '.', '-' (not starting with a digit, '.' or '-'),
 *     every attribute quoted with ' or ", no '<' inside a value;
 *   - end tags matching their start tags, at most 512 levels deep;
 *   - references only &lt; &gt; &amp; &quot; &apos; &#N; &#xH;;
 *   - comments and processing instructions terminated.
 * What it does not check is hwloc's business (object types, cpusets, which
 * hwloc reports as a load failure). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "topology_internal.h"

#define XML_MAX_BYTES (64u << 20)
#define XML_MAX_DEPTH 512

typedef struct cursor {
  const char *p, *end, *start;
  const char *path;
} cursor;

static unsigned line_of(const cursor *c, const char *at) {
  unsigned line = 1;
  for (const char *q = c->start; q < at && q < c->end; q++) line += *q == '\n';
  return line;
}

static int bad(const cursor *c, const char *at, const char *what) {
  return cpuexec__fail(CPUEXEC_ETOPOLOGY,
                       "topology: \"%s\" is not well-formed XML (line %u: %s); only hwloc XML exports such as "
                       "`lstopo --of xml` writes are read",
                       c->path, line_of(c, at), what);
}

static bool blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }
static bool name_start(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == ':';
}
static bool name_char(char ch) { return name_start(ch) || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-'; }

static void skip_blanks(cursor *c) {
  while (c->p < c->end && blank(*c->p)) c->p++;
}

/* Skips past `terminator`; false when the file ends first. */
static bool skip_past(cursor *c, const char *terminator) {
  size_t n = strlen(terminator);
  for (; c->p + n <= c->end; c->p++)
    if (memcmp(c->p, terminator, n) == 0) {
      c->p += n;
      return true;
    }
  c->p = c->end;
  return false;
}

static bool starts(const cursor *c, const char *text) {
  size_t n = strlen(text);
  return (size_t)(c->end - c->p) >= n && memcmp(c->p, text, n) == 0;
}

/* A name at c->p; its length, 0 when there is none. */
static size_t name(cursor *c) {
  const char *from = c->p;
  if (c->p >= c->end || !name_start(*c->p)) return 0;
  while (c->p < c->end && name_char(*c->p)) c->p++;
  return (size_t)(c->p - from);
}

/* A reference after '&', up to and including ';'. */
static int reference(cursor *c) {
  const char *at = c->p;
  static const char *const named[] = {"lt;", "gt;", "amp;", "quot;", "apos;"};
  c->p++;
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (starts(c, named[i])) {
      c->p += strlen(named[i]);
      return 0;
    }
  if (starts(c, "#x")) {
    c->p += 2;
    const char *digits = c->p;
    while (c->p < c->end && ((*c->p >= '0' && *c->p <= '9') || (*c->p >= 'a' && *c->p <= 'f') ||
                             (*c->p >= 'A' && *c->p <= 'F')))
      c->p++;
    if (c->p > digits && c->p - digits <= 6 && c->p < c->end && *c->p == ';') {
      c->p++;
      return 0;
    }
  } else if (starts(c, "#")) {
    c->p++;
    const char *digits = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    if (c->p > digits && c->p - digits <= 7 && c->p < c->end && *c->p == ';') {
      c->p++;
      return 0;
    }
  }
  return bad(c, at, "a reference other than &lt; &gt; &amp; &quot; &apos; or a character number");
}

/* Comments, processing instructions and blanks between markup (prolog,
 * epilog); stops at anything else. */
static int misc(cursor *c, bool allow_doctype, bool *doctype_seen) {
  for (;;) {
    skip_blanks(c);
    const char *at = c->p;
    if (starts(c, "<!--")) {
      if (!skip_past(c, "-->")) return bad(c, at, "a comment is not terminated");
    } else if (starts(c, "<?")) {
      if (!skip_past(c, "?>")) return bad(c, at, "a processing instruction is not terminated");
    } else if (starts(c, "<!DOCTYPE")) {
      if (!allow_doctype || *doctype_seen) return bad(c, at, "a DOCTYPE where none may be");
      *doctype_seen = true;
      for (; c->p < c->end && *c->p != '>'; c->p++)
        if (*c->p == '[') return bad(c, c->p, "a DOCTYPE with an internal subset (entity definitions)");
      if (c->p >= c->end) return bad(c, at, "the DOCTYPE is not terminated");
      c->p++;
    } else {
      return 0;
    }
  }
}

/* A start tag after its name: attributes, then '>' or "/>". */
static int attributes(cursor *c, bool *empty) {
  for (;;) {
    const char *before = c->p;
    skip_blanks(c);
    if (c->p >= c->end) return bad(c, before, "the file ends inside a start tag");
    if (*c->p == '>') {
      c->p++;
      *empty = false;
      return 0;
    }
    if (starts(c, "/>")) {
      c->p += 2;
      *empty = true;
      return 0;
    }
    if (c->p == before) return bad(c, c->p, "attributes must be separated by blanks");
    const char *at = c->p;
    if (name(c) == 0) return bad(c, at, "an attribute without a name");
    skip_blanks(c);
    if (c->p >= c->end || *c->p != '=') return bad(c, at, "an attribute without '=' and a quoted value");
    c->p++;
    skip_blanks(c);
    if (c->p >= c->end || (*c->p != '"' && *c->p != '\'')) return bad(c, at, "an attribute value without quotes");
    char quote = *c->p++;
    while (c->p < c->end && *c->p != quote) {
      if (*c->p == '<') return bad(c, c->p, "'<' inside an attribute value");
      if (*c->p == '&') {
        int rc = reference(c);
        if (rc != 0) return rc;
      } else {
        c->p++;
      }
    }
    if (c->p >= c->end) return bad(c, at, "an attribute value is not terminated");
    c->p++;
  }
}

/* The root element and everything inside it. */
static int element_tree(cursor *c) {
  const char *stack_name[XML_MAX_DEPTH];
  size_t stack_len[XML_MAX_DEPTH];
  int depth = 0;
  do {
    const char *at = c->p;
    if (c->p >= c->end) return bad(c, at, depth > 0 ? "the file ends before every element is closed" : "no element");
    if (starts(c, "<!--")) {
      if (!skip_past(c, "-->")) return bad(c, at, "a comment is not terminated");
    } else if (starts(c, "<![CDATA[")) {
      if (depth == 0) return bad(c, at, "text outside the root element");
      if (!skip_past(c, "]]>")) return bad(c, at, "a CDATA section is not terminated");
    } else if (starts(c, "<?")) {
      if (!skip_past(c, "?>")) return bad(c, at, "a processing instruction is not terminated");
    } else if (starts(c, "</")) {
      c->p += 2;
      const char *n = c->p;
      size_t len = name(c);
      if (depth == 0 || len != stack_len[depth - 1] || memcmp(n, stack_name[depth - 1], len) != 0)
        return bad(c, at, "an end tag that does not match the open element");
      skip_blanks(c);
      if (c->p >= c->end || *c->p != '>') return bad(c, at, "an end tag is not terminated");
      c->p++;
      depth--;
    } else if (*c->p == '<') {
      c->p++;
      const char *n = c->p;
      size_t len = name(c);
      if (len == 0) return bad(c, at, "'<' not followed by an element name");
      if (depth == 0 && (len != 8 || memcmp(n, "topology", 8) != 0))
        return bad(c, at, "the root element is not <topology>");
      bool empty = false;
      int rc = attributes(c, &empty);
      if (rc != 0) return rc;
      if (!empty) {
        if (depth == XML_MAX_DEPTH) return bad(c, at, "elements nested more than 512 deep");
        stack_name[depth] = n;
        stack_len[depth] = len;
        depth++;
      }
    } else if (*c->p == '&') {
      int rc = reference(c);
      if (rc != 0) return rc;
    } else {
      c->p++; /* character data */
    }
  } while (depth > 0);
  return 0;
}

int cpuexec__xml_check(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: cannot open \"%s\": %s", path, strerror(errno));
  /* Sized by the file (a pipe or a file that grows is read up to the cap). */
  struct stat st;
  size_t cap = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < XML_MAX_BYTES
                   ? (size_t)st.st_size + 1
                   : (size_t)XML_MAX_BYTES + 1;
  char *buf = malloc(cap);
  if (buf == NULL) {
    fclose(f);
    return cpuexec__fail(CPUEXEC_ENOMEM, "topology: out of memory reading \"%s\"", path);
  }
  size_t n = fread(buf, 1, cap, f);
  bool failed = ferror(f) != 0;
  if (!failed && n == cap && cap <= XML_MAX_BYTES) {
    /* The file grew after fstat: read the rest, up to the cap. */
    char *bigger = realloc(buf, (size_t)XML_MAX_BYTES + 1);
    if (bigger == NULL) {
      free(buf);
      fclose(f);
      return cpuexec__fail(CPUEXEC_ENOMEM, "topology: out of memory reading \"%s\"", path);
    }
    buf = bigger;
    n += fread(buf + n, 1, (size_t)XML_MAX_BYTES + 1 - n, f);
    failed = ferror(f) != 0;
  }
  fclose(f);
  cursor c = {buf, buf + n, buf, path};
  int rc = 0;
  bool doctype = false;
  if (failed)
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: cannot read \"%s\"", path);
  else if (n > XML_MAX_BYTES)
    rc = cpuexec__fail(CPUEXEC_ETOPOLOGY, "topology: \"%s\" is larger than 64 MiB; not an hwloc XML topology", path);
  else if (memchr(buf, '\0', n) != NULL)
    rc = bad(&c, (const char *)memchr(buf, '\0', n), "a NUL byte (binary data)");
  if (rc == 0) rc = misc(&c, true, &doctype);
  if (rc == 0) {
    if (c.p >= c.end || *c.p != '<') rc = bad(&c, c.p, c.p >= c.end ? "no root element" : "text before the root element");
  }
  if (rc == 0) rc = element_tree(&c);
  if (rc == 0) rc = misc(&c, false, &doctype);
  if (rc == 0 && c.p < c.end) rc = bad(&c, c.p, "content after the root element");
  free(buf);
  return rc;
}
