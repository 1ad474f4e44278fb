/*
 * The trace format (workloads/TRACE.md): the reader of binary traces and of
 * their text form, the cursor that walks one worker's records, the writer of
 * one worker's part, and the merge of a run's parts into one trace.
 *
 * Decoders check every length: each varint against the end of its section,
 * each count against the bytes left (a key takes at least one byte, so a
 * forged count cannot make us allocate or read past the end), each
 * operation, each key against the tables, each clock against going back. A
 * trace is checked whole when loaded; after that a cursor trusts it.
 *
 * A loaded trace is its binary encoding in memory (the text form is encoded
 * as it is read), plus where each worker's section starts: the replay
 * streams and the statistics decode records on the fly, so memory is the
 * size of the file, not of its keys.
 */
#include "workloads/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAGIC_LEN 8
#define VARINT_MAX 10 /* bytes of a 64-bit LEB128 varint */

struct wl_trace {
  uint8_t *data;
  size_t len;
  ps_layout layout;
  uint32_t nodes, workers;
  size_t *sec_off, *sec_len; /* each worker's records: data[off .. off + len) */
  uint64_t *steps;
  uint64_t accesses;
  size_t max_record_keys;
};

const char *wl_trace_op_name(wl_trace_op op) {
  static const char *const names[] = {"read", "write", "sample"};
  return (unsigned)op < 3 ? names[op] : "?";
}

/* ------------------------------------------------------------ varints */

/* Appends v as LEB128 to buf (room for VARINT_MAX); returns the bytes. */
static size_t put_varint(uint8_t *buf, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  buf[n++] = (uint8_t)v;
  return n;
}

typedef enum { VARINT_OK = 0, VARINT_TRUNCATED, VARINT_OVERFLOW } varint_status;

static varint_status get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return VARINT_TRUNCATED;
    uint8_t b = *(*p)++;
    if (shift == 63 && b > 1) return VARINT_OVERFLOW;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return VARINT_OK;
    }
  }
  return VARINT_OVERFLOW;
}

/* ---------------------------------------------------- binary decoding */

typedef struct {
  const char *name;
  const uint8_t *base, *p, *end;
  char *err;
  size_t errlen;
} decoder;

static bool dfail(decoder *d, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool dfail(decoder *d, const uint8_t *at, const char *fmt, ...) {
  int n = snprintf(d->err, d->errlen, "%s: offset %zu: ", d->name, (size_t)(at - d->base));
  if (n >= 0 && (size_t)n < d->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* Reads a varint named `what` in [min, max] from d (up to end). */
static bool dvarint(decoder *d, const uint8_t *end, const char *what, uint64_t min,
                    uint64_t max, uint64_t *out) {
  const uint8_t *at = d->p;
  switch (get_varint(&d->p, end, out)) {
  case VARINT_TRUNCATED:
    return dfail(d, at, "truncated: %s runs past the end of %s", what,
                 end == d->end ? "the file" : "its section");
  case VARINT_OVERFLOW:
    return dfail(d, at, "%s: a number longer than 64 bits", what);
  case VARINT_OK:
    break;
  }
  if (*out < min || *out > max)
    return dfail(d, at, "%s is %" PRIu64 ", expected %" PRIu64 " to %" PRIu64, what, *out,
                 min, max);
  return true;
}

typedef struct {
  ps_layout layout;
  uint32_t nodes, workers, rank; /* rank: parts only */
} trace_header;

/* Magic, version, tables, nodes, workers (and a part's rank). */
static bool decode_header(decoder *d, bool part, trace_header *h) {
  const char *magic = part ? WL_TRACE_PART_MAGIC : WL_TRACE_MAGIC;
  memset(h, 0, sizeof *h);
  if ((size_t)(d->end - d->p) < MAGIC_LEN + 1) {
    if ((size_t)(d->end - d->p) >= MAGIC_LEN && memcmp(d->p, magic, MAGIC_LEN) != 0)
      return dfail(d, d->p, "not a pslab trace (bad magic; expected \"%s\")", magic);
    return dfail(d, d->end, "truncated: the header runs past the end of the file");
  }
  if (memcmp(d->p, magic, MAGIC_LEN) != 0)
    return dfail(d, d->p, "not a pslab trace%s (bad magic; expected \"%s\")",
                 part ? " part" : "", magic);
  d->p += MAGIC_LEN;
  if (*d->p != WL_TRACE_VERSION)
    return dfail(d, d->p, "version %u is not supported (this pslab reads version %u)",
                 (unsigned)*d->p, WL_TRACE_VERSION);
  d->p++;
  uint64_t tables, v;
  if (!dvarint(d, d->end, "the number of tables", 1, PS_MAX_TABLES, &tables)) return false;
  h->layout.num_tables = (uint32_t)tables;
  for (uint32_t i = 0; i < tables; i++) {
    ps_table *t = &h->layout.tables[i];
    const uint8_t *at = d->p;
    if (!dvarint(d, d->end, "a table's first key", 0, UINT64_MAX, &t->first) ||
        !dvarint(d, d->end, "a table's key count", 1, UINT64_MAX, &t->count) ||
        !dvarint(d, d->end, "a table's value length", 1, UINT32_MAX, &v))
      return false;
    t->value_len = (uint32_t)v;
    if (t->first + t->count < t->first)
      return dfail(d, at, "table %u: its keys run past the largest key", (unsigned)i);
    if (i && t->first < h->layout.tables[i - 1].first + h->layout.tables[i - 1].count)
      return dfail(d, at, "table %u: expected tables sorted by first key and disjoint",
                   (unsigned)i);
  }
  if (!dvarint(d, d->end, "the number of nodes", 1, UINT32_MAX, &v)) return false;
  h->nodes = (uint32_t)v;
  /* Each worker takes at least one byte (its section's length): a forged
   * count cannot make us allocate more than the file's size. */
  const uint8_t *at = d->p;
  if (!dvarint(d, d->end, "the number of workers", 1, UINT32_MAX, &v)) return false;
  uint64_t most = part ? UINT32_MAX : (uint64_t)(d->end - d->p);
  if (v > most)
    return dfail(d, at, "%" PRIu64 " workers, but only %" PRIu64 " bytes follow", v, most);
  h->workers = (uint32_t)v;
  if (part) {
    if (!dvarint(d, d->end, "the worker's rank", 0, h->workers - 1, &v)) return false;
    h->rank = (uint32_t)v;
  }
  return true;
}

/* Checks worker w's records in d->p .. end, counting steps and keys. */
static bool decode_section(decoder *d, const uint8_t *end, uint32_t w, wl_trace *t) {
  int64_t clock = 0;
  bool first = true;
  uint64_t steps = 0;
  char what[64];
  while (d->p < end) {
    const uint8_t *at = d->p;
    uint64_t head, n;
    snprintf(what, sizeof what, "worker %u's record", (unsigned)w);
    if (!dvarint(d, end, what, 0, UINT64_MAX, &head)) return false;
    if ((head & 3) == 3) return dfail(d, at, "worker %u: unknown operation 3", (unsigned)w);
    uint64_t delta = head >> 2;
    if (delta > (uint64_t)(INT64_MAX - clock))
      return dfail(d, at, "worker %u: the clock runs past 2^63", (unsigned)w);
    if (first || delta) steps++;
    first = false;
    clock += (int64_t)delta;
    const uint8_t *count_at = d->p;
    if (!dvarint(d, end, "a record's key count", 1, UINT64_MAX, &n)) return false;
    if (n > (uint64_t)(end - d->p))
      return dfail(d, count_at,
                   "a record of %" PRIu64 " keys runs past the end of worker %u's section "
                   "(%zu bytes left)", n, (unsigned)w, (size_t)(end - d->p));
    ps_key k = 0;
    for (uint64_t i = 0; i < n; i++) {
      const uint8_t *key_at = d->p;
      uint64_t gap;
      if (!dvarint(d, end, "a key", 0, UINT64_MAX, &gap)) return false;
      if (k + gap < k) return dfail(d, key_at, "a key past 2^64 - 1");
      k += gap;
      if (ps_layout_value_len(&t->layout, k) == 0)
        return dfail(d, key_at, "worker %u: key %" PRIu64 " is in no table of the trace",
                     (unsigned)w, k);
    }
    t->accesses += n;
    if (n > t->max_record_keys) t->max_record_keys = (size_t)n;
  }
  t->steps[w] = steps;
  return true;
}

static wl_trace *parse_binary(uint8_t *data, size_t len, const char *name, char *err,
                              size_t errlen) {
  decoder d = {name, data, data, data + len, err, errlen};
  trace_header h;
  wl_trace *t = calloc(1, sizeof *t);
  if (!t) {
    free(data);
    snprintf(err, errlen, "%s: out of memory", name);
    return NULL;
  }
  t->data = data;
  t->len = len;
  if (!decode_header(&d, false, &h)) goto fail;
  t->layout = h.layout;
  t->nodes = h.nodes;
  t->workers = h.workers;
  t->sec_off = calloc(h.workers, sizeof *t->sec_off);
  t->sec_len = calloc(h.workers, sizeof *t->sec_len);
  t->steps = calloc(h.workers, sizeof *t->steps);
  if (!t->sec_off || !t->sec_len || !t->steps) {
    snprintf(err, errlen, "%s: out of memory", name);
    goto fail;
  }
  for (uint32_t w = 0; w < h.workers; w++) {
    uint64_t sec;
    char what[64];
    snprintf(what, sizeof what, "the length of worker %u's section", (unsigned)w);
    const uint8_t *at = d.p;
    if (!dvarint(&d, d.end, what, 0, UINT64_MAX, &sec)) goto fail;
    if (sec > (uint64_t)(d.end - d.p)) {
      dfail(&d, at, "worker %u's section of %" PRIu64 " bytes runs past the end of the file "
                    "(%zu bytes left)", (unsigned)w, sec, (size_t)(d.end - d.p));
      goto fail;
    }
    t->sec_off[w] = (size_t)(d.p - data);
    t->sec_len[w] = (size_t)sec;
    if (!decode_section(&d, d.p + sec, w, t)) goto fail;
  }
  if (d.p != d.end) {
    dfail(&d, d.p, "%zu bytes after the last worker's section", (size_t)(d.end - d.p));
    goto fail;
  }
  if (t->max_record_keys == 0) t->max_record_keys = 1;
  return t;
fail:
  wl_trace_free(t);
  return NULL;
}

/* --------------------------------------------------------------- encoding */

typedef struct {
  uint8_t *buf;
  size_t len, cap;
  bool failed;
} bytes;

static bool bytes_reserve(bytes *b, size_t more) {
  if (b->failed) return false;
  if (b->len + more <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more) {
    if (cap > SIZE_MAX / 2) return !(b->failed = true);
    cap *= 2;
  }
  uint8_t *p = realloc(b->buf, cap);
  if (!p) return !(b->failed = true);
  b->buf = p;
  b->cap = cap;
  return true;
}

static void bytes_put(bytes *b, const void *p, size_t n) {
  if (n && bytes_reserve(b, n)) {
    memcpy(b->buf + b->len, p, n);
    b->len += n;
  }
}

static void bytes_varint(bytes *b, uint64_t v) {
  if (bytes_reserve(b, VARINT_MAX)) b->len += put_varint(b->buf + b->len, v);
}

static void encode_header(bytes *b, bool part, const ps_layout *l, uint32_t nodes,
                          uint32_t workers, uint32_t rank) {
  bytes_put(b, part ? WL_TRACE_PART_MAGIC : WL_TRACE_MAGIC, MAGIC_LEN);
  uint8_t version = WL_TRACE_VERSION;
  bytes_put(b, &version, 1);
  bytes_varint(b, l->num_tables);
  for (uint32_t i = 0; i < l->num_tables; i++) {
    bytes_varint(b, l->tables[i].first);
    bytes_varint(b, l->tables[i].count);
    bytes_varint(b, l->tables[i].value_len);
  }
  bytes_varint(b, nodes);
  bytes_varint(b, workers);
  if (part) bytes_varint(b, rank);
}

static int cmp_key(const void *a, const void *b) {
  ps_key x = *(const ps_key *)a, y = *(const ps_key *)b;
  return x < y ? -1 : x > y;
}

/* One record: head (op | clock delta << 2), count, ascending key gaps. keys
 * must be sorted. */
static void encode_record(bytes *b, uint64_t delta, wl_trace_op op, const ps_key *keys,
                          size_t n) {
  bytes_varint(b, (uint64_t)op | delta << 2);
  bytes_varint(b, n);
  ps_key prev = 0;
  for (size_t i = 0; i < n; i++) {
    bytes_varint(b, keys[i] - prev);
    prev = keys[i];
  }
}

/* -------------------------------------------------------------- text form */

typedef struct {
  const char *name;
  uint64_t line;
  char *err;
  size_t errlen;
} text_pos;

static bool tfail(const text_pos *tp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool tfail(const text_pos *tp, const char *fmt, ...) {
  int n = snprintf(tp->err, tp->errlen, "%s:%" PRIu64 ": ", tp->name, tp->line);
  if (n >= 0 && (size_t)n < tp->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tp->err + n, tp->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* The next whitespace-separated word of *s (NUL-terminated in place); NULL
 * when none. */
static char *next_word(char **s) {
  char *p = *s;
  while (*p == ' ' || *p == '\t') p++;
  if (!*p) {
    *s = p;
    return NULL;
  }
  char *w = p;
  while (*p && *p != ' ' && *p != '\t') p++;
  if (*p) *p++ = '\0';
  *s = p;
  return w;
}

static bool parse_u64(const char *w, uint64_t *out) {
  if (!w || !*w) return false;
  uint64_t v = 0;
  for (const char *c = w; *c; c++) {
    if (*c < '0' || *c > '9') return false;
    if (v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10) return false;
    v = v * 10 + (uint64_t)(*c - '0');
  }
  *out = v;
  return true;
}

typedef struct {
  bytes b;
  int64_t clock;
} text_worker;

typedef struct {
  text_pos tp;
  ps_layout layout;
  bool have_workers, have_nodes, records_begun;
  uint32_t workers, nodes;
  text_worker *w;
  ps_key *keys;
  size_t keys_cap;
} text_state;

static bool text_number(text_state *s, char *word, const char *what, uint64_t min,
                        uint64_t max, uint64_t *out) {
  if (!word) return tfail(&s->tp, "missing %s", what);
  if (!parse_u64(word, out)) return tfail(&s->tp, "%s: expected an integer, found \"%.40s\"",
                                          what, word);
  if (*out < min || *out > max)
    return tfail(&s->tp, "%s is %" PRIu64 ", expected %" PRIu64 " to %" PRIu64, what, *out,
                 min, max);
  return true;
}

static bool text_header_line(text_state *s, const char *word, char *rest) {
  if (s->records_begun)
    return tfail(&s->tp, "\"%s\" after the first record: header lines come first", word);
  uint64_t v;
  if (strcmp(word, "table") == 0) {
    ps_layout *l = &s->layout;
    if (l->num_tables == PS_MAX_TABLES)
      return tfail(&s->tp, "more than %u tables", (unsigned)PS_MAX_TABLES);
    ps_table *t = &l->tables[l->num_tables];
    uint64_t len;
    if (!text_number(s, next_word(&rest), "the table's first key", 0, UINT64_MAX, &t->first) ||
        !text_number(s, next_word(&rest), "the table's key count", 1, UINT64_MAX, &t->count) ||
        !text_number(s, next_word(&rest), "the table's value length", 1, UINT32_MAX, &len))
      return false;
    t->value_len = (uint32_t)len;
    if (t->first + t->count < t->first)
      return tfail(&s->tp, "the table's keys run past the largest key");
    if (l->num_tables && t->first < l->tables[l->num_tables - 1].first +
                                        l->tables[l->num_tables - 1].count)
      return tfail(&s->tp, "expected tables sorted by first key and disjoint");
    l->num_tables++;
  } else if (strcmp(word, "workers") == 0 || strcmp(word, "nodes") == 0) {
    bool workers = word[0] == 'w';
    if (workers ? s->have_workers : s->have_nodes)
      return tfail(&s->tp, "\"%s\" given twice", word);
    if (!text_number(s, next_word(&rest), workers ? "the number of workers" :
                     "the number of nodes", 1, workers ? 1u << 20 : UINT32_MAX, &v))
      return false;
    if (workers) {
      s->workers = (uint32_t)v;
      s->have_workers = true;
    } else {
      s->nodes = (uint32_t)v;
      s->have_nodes = true;
    }
  } else {
    return tfail(&s->tp, "unknown header line \"%s\"", word);
  }
  if (next_word(&rest)) return tfail(&s->tp, "\"%s\": too many values", word);
  return true;
}

static bool text_begin_records(text_state *s) {
  if (s->layout.num_tables == 0)
    return tfail(&s->tp, "a record before any \"table FIRST COUNT VALUE_LEN\" line");
  if (!s->have_workers) return tfail(&s->tp, "a record before the \"workers N\" line");
  if (!s->have_nodes) s->nodes = s->workers;
  s->w = calloc(s->workers, sizeof *s->w);
  if (!s->w) return tfail(&s->tp, "out of memory");
  s->records_begun = true;
  return true;
}

static bool text_record(text_state *s, char *first, char *rest) {
  if (!s->records_begun && !text_begin_records(s)) return false;
  uint64_t w, clock;
  if (!parse_u64(first, &w))
    return tfail(&s->tp, "expected a record \"WORKER CLOCK OP KEY...\" or a header line, "
                         "found \"%.40s\"", first);
  if (w >= s->workers)
    return tfail(&s->tp, "worker %" PRIu64 ", but the trace has %u workers", w,
                 (unsigned)s->workers);
  /* A record's head holds the clock's step in 62 bits (op | delta << 2). */
  if (!text_number(s, next_word(&rest), "the clock", 0, INT64_MAX >> 2, &clock)) return false;
  char *op_word = next_word(&rest);
  wl_trace_op op;
  if (!op_word) return tfail(&s->tp, "missing the operation (read, write or sample)");
  if (strcmp(op_word, "read") == 0) op = WL_TRACE_READ;
  else if (strcmp(op_word, "write") == 0) op = WL_TRACE_WRITE;
  else if (strcmp(op_word, "sample") == 0) op = WL_TRACE_SAMPLE;
  else return tfail(&s->tp, "unknown operation \"%.40s\" (expected read, write or sample)",
                    op_word);
  text_worker *tw = &s->w[w];
  if ((int64_t)clock < tw->clock)
    return tfail(&s->tp, "worker %" PRIu64 "'s clock goes back from %" PRId64 " to %" PRIu64,
                 w, tw->clock, clock);
  size_t n = 0;
  for (char *word; (word = next_word(&rest));) {
    uint64_t k;
    if (!parse_u64(word, &k))
      return tfail(&s->tp, "a key: expected an integer, found \"%.40s\"", word);
    if (ps_layout_value_len(&s->layout, k) == 0)
      return tfail(&s->tp, "key %" PRIu64 " is in no table of the trace", k);
    if (n == s->keys_cap) {
      size_t cap = s->keys_cap ? s->keys_cap * 2 : 64;
      ps_key *p = realloc(s->keys, cap * sizeof *p);
      if (!p) return tfail(&s->tp, "out of memory");
      s->keys = p;
      s->keys_cap = cap;
    }
    s->keys[n++] = k;
  }
  if (n == 0) return tfail(&s->tp, "a record with no keys");
  qsort(s->keys, n, sizeof *s->keys, cmp_key);
  encode_record(&tw->b, (uint64_t)((int64_t)clock - tw->clock), op, s->keys, n);
  tw->clock = (int64_t)clock;
  return tw->b.failed ? tfail(&s->tp, "out of memory") : true;
}

static bool text_line(text_state *s, char *line) {
  char *hash = strchr(line, '#');
  if (hash) *hash = '\0';
  char *rest = line;
  char *first = next_word(&rest);
  if (!first) return true;
  if (strcmp(first, "table") == 0 || strcmp(first, "workers") == 0 ||
      strcmp(first, "nodes") == 0)
    return text_header_line(s, first, rest);
  return text_record(s, first, rest);
}

/* The first line: "pslab-trace VERSION". */
static bool text_magic_line(text_state *s, char *line) {
  char *rest = line, *magic = next_word(&rest), *version = next_word(&rest);
  uint64_t v;
  if (!magic || strcmp(magic, WL_TRACE_TEXT_MAGIC) != 0)
    return tfail(&s->tp, "expected \"%s %u\" on the first line", WL_TRACE_TEXT_MAGIC,
                 WL_TRACE_VERSION);
  if (!version || !parse_u64(version, &v))
    return tfail(&s->tp, "expected the version after \"%s\"", WL_TRACE_TEXT_MAGIC);
  if (v != WL_TRACE_VERSION)
    return tfail(&s->tp, "version %" PRIu64 " is not supported (this pslab reads version %u)",
                 v, WL_TRACE_VERSION);
  return true;
}

/* At the end of a trace without records (a valid one): its header must be
 * complete. */
static bool text_no_records(text_state *s) {
  if (s->layout.num_tables == 0) return tfail(&s->tp, "no \"table FIRST COUNT VALUE_LEN\" line");
  if (!s->have_workers) return tfail(&s->tp, "no \"workers N\" line");
  return text_begin_records(s);
}

/* Builds the binary encoding of the text state's records. */
static uint8_t *text_encode(text_state *s, size_t *len) {
  bytes b = {0};
  encode_header(&b, false, &s->layout, s->nodes, s->workers, 0);
  for (uint32_t w = 0; w < s->workers; w++) {
    bytes_varint(&b, s->w[w].b.len);
    bytes_put(&b, s->w[w].b.buf, s->w[w].b.len);
  }
  if (b.failed) {
    free(b.buf);
    return NULL;
  }
  *len = b.len;
  return b.buf;
}

static wl_trace *parse_text(const char *text, size_t len, const char *name, char *err,
                            size_t errlen) {
  text_state s = {.tp = {name, 0, err, errlen}};
  wl_trace *t = NULL;
  bool ok = true;
  const char *p = text, *end = text + len;
  char *line = NULL;
  size_t line_cap = 0;
  while (ok && p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    s.tp.line++;
    if (n + 1 > line_cap) {
      char *q = realloc(line, n + 1);
      if (!q) {
        ok = tfail(&s.tp, "out of memory");
        break;
      }
      line = q;
      line_cap = n + 1;
    }
    memcpy(line, p, n);
    line[n] = '\0';
    if (n && line[n - 1] == '\r') line[n - 1] = '\0';
    if (memchr(p, '\0', n)) {
      ok = tfail(&s.tp, "a NUL byte: not a text trace");
      break;
    }
    ok = s.tp.line == 1 ? text_magic_line(&s, line) : text_line(&s, line);
    p = nl ? nl + 1 : end;
  }
  if (ok && !s.records_begun) ok = text_no_records(&s);
  if (ok) {
    size_t blen = 0;
    uint8_t *bin = text_encode(&s, &blen);
    if (!bin)
      snprintf(err, errlen, "%s: out of memory", name);
    else
      t = parse_binary(bin, blen, name, err, errlen);
  }
  free(line);
  for (uint32_t w = 0; s.w && w < s.workers; w++) free(s.w[w].b.buf);
  free(s.w);
  free(s.keys);
  return t;
}

/* ---------------------------------------------------------------- loading */

wl_trace *wl_trace_parse(const void *data, size_t len, const char *name, char *err,
                         size_t errlen) {
  size_t tl = strlen(WL_TRACE_TEXT_MAGIC);
  if (len == 0) {
    snprintf(err, errlen, "%s: an empty file, not a trace", name);
    return NULL;
  }
  if (len >= tl && memcmp(data, WL_TRACE_TEXT_MAGIC, tl) == 0)
    return parse_text(data, len, name, err, errlen);
  if (len >= MAGIC_LEN && memcmp(data, WL_TRACE_PART_MAGIC, MAGIC_LEN) == 0) {
    snprintf(err, errlen, "%s: offset 0: one worker's part of a trace, not a trace (`pslab "
                          "trace merge` joins the parts)", name);
    return NULL;
  }
  if (len < MAGIC_LEN || memcmp(data, WL_TRACE_MAGIC, MAGIC_LEN) != 0) {
    snprintf(err, errlen, "%s: offset 0: not a pslab trace (bad magic; expected \"%s\" or "
                          "the text form's \"%s %u\")", name, WL_TRACE_MAGIC,
             WL_TRACE_TEXT_MAGIC, WL_TRACE_VERSION);
    return NULL;
  }
  uint8_t *copy = malloc(len);
  if (!copy) {
    snprintf(err, errlen, "%s: out of memory", name);
    return NULL;
  }
  memcpy(copy, data, len);
  return parse_binary(copy, len, name, err, errlen);
}

/* Reads the whole of path (malloc'd). NULL with a message. */
static uint8_t *slurp(const char *path, size_t *len, char *err, size_t errlen) {
  size_t size = 0;
  FILE *f = wl_open_regular(path, &size, err, errlen);
  if (!f) return NULL;
  size_t cap = size > 0 ? size + 1 : 4096, n = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    uint8_t *p = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
    if (!p) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = p;
    cap *= 2;
  }
  bool failed = ferror(f);
  fclose(f);
  if (!buf || failed) {
    snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

wl_trace *wl_trace_load(const char *path, char *err, size_t errlen) {
  size_t len;
  uint8_t *data = slurp(path, &len, err, errlen);
  if (!data) return NULL;
  wl_trace *t = wl_trace_parse(data, len, path, err, errlen);
  free(data);
  return t;
}

void wl_trace_free(wl_trace *t) {
  if (!t) return;
  free(t->data);
  free(t->sec_off);
  free(t->sec_len);
  free(t->steps);
  free(t);
}

void wl_trace_tables(const wl_trace *t, ps_layout *layout) {
  layout->num_tables = t->layout.num_tables;
  memcpy(layout->tables, t->layout.tables, sizeof layout->tables);
}

uint32_t wl_trace_workers(const wl_trace *t) { return t->workers; }
uint32_t wl_trace_nodes(const wl_trace *t) { return t->nodes; }
uint64_t wl_trace_steps(const wl_trace *t, uint32_t w) {
  return w < t->workers ? t->steps[w] : 0;
}
uint64_t wl_trace_accesses(const wl_trace *t) { return t->accesses; }
size_t wl_trace_max_record_keys(const wl_trace *t) { return t->max_record_keys; }

/* ----------------------------------------------------------------- cursor */

void wl_trace_cursor_init(wl_trace_cursor *c, const wl_trace *t, uint32_t w) {
  c->p = w < t->workers ? t->data + t->sec_off[w] : t->data;
  c->end = w < t->workers ? c->p + t->sec_len[w] : t->data;
  c->clock = 0;
}

bool wl_trace_next(wl_trace_cursor *c, wl_trace_record *r, ps_key *keys) {
  if (c->p >= c->end) return false;
  uint64_t head = 0, n = 0, gap = 0;
  get_varint(&c->p, c->end, &head); /* checked when loaded */
  get_varint(&c->p, c->end, &n);
  c->clock += (int64_t)(head >> 2);
  r->clock = c->clock;
  r->op = (wl_trace_op)(head & 3);
  r->n = (size_t)n;
  ps_key k = 0;
  for (uint64_t i = 0; i < n; i++) {
    get_varint(&c->p, c->end, &gap);
    k += gap;
    keys[i] = k;
  }
  return true;
}

/* ------------------------------------------------------------------ files */

/* Writes data[len] to path through "<path>.tmp" and a rename. */
static int write_atomic(const char *path, const void *data, size_t len, char *err,
                        size_t errlen) {
  size_t pl = strlen(path);
  char *tmp = malloc(pl + 5);
  if (!tmp) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  memcpy(tmp, path, pl);
  memcpy(tmp + pl, ".tmp", 5);
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(data, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    snprintf(err, errlen, "%s: cannot write it: %s", path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  return ok ? 0 : -1;
}

int wl_trace_save(const wl_trace *t, const char *path, char *err, size_t errlen) {
  return write_atomic(path, t->data, t->len, err, errlen);
}

/* ----------------------------------------------------------------- writer */

struct wl_trace_writer {
  FILE *f;
  char *path, *tmp;
  ps_layout layout;
  int64_t clock;
  bytes rec;      /* the record being encoded */
  ps_key *sorted; /* its keys, sorted */
  size_t sorted_cap;
  char error[256]; /* the first failure, or "" */
};

char *wl_trace_part_path(const char *file, uint32_t rank) {
  size_t n = strlen(file) + 16;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s.part%u", file, (unsigned)rank);
  return p;
}

static void writer_failed(wl_trace_writer *w, const char *what) {
  if (!w->error[0])
    snprintf(w->error, sizeof w->error, "%s: %s", w->tmp, what);
}

wl_trace_writer *wl_trace_writer_open(const char *path, const ps_layout *layout,
                                      uint32_t nodes, uint32_t workers, uint32_t rank,
                                      char *err, size_t errlen) {
  wl_trace_writer *w = calloc(1, sizeof *w);
  size_t pl = strlen(path);
  if (!w || !(w->path = strdup(path)) || !(w->tmp = malloc(pl + 5))) {
    snprintf(err, errlen, "%s: out of memory", path);
    if (w) free(w->path);
    free(w);
    return NULL;
  }
  memcpy(w->tmp, path, pl);
  memcpy(w->tmp + pl, ".tmp", 5);
  w->layout = *layout;
  bytes h = {0};
  encode_header(&h, true, layout, nodes, workers, rank);
  if (!(w->f = fopen(w->tmp, "wb")) || h.failed || fwrite(h.buf, 1, h.len, w->f) != h.len) {
    snprintf(err, errlen, "%s: cannot write it: %s", w->tmp,
             h.failed ? "out of memory" : strerror(errno));
    if (w->f) {
      fclose(w->f);
      remove(w->tmp);
    }
    free(h.buf);
    free(w->path);
    free(w->tmp);
    free(w);
    return NULL;
  }
  free(h.buf);
  return w;
}

int wl_trace_writer_record(wl_trace_writer *w, int64_t clock, wl_trace_op op,
                           const ps_key *keys, size_t n) {
  if (w->error[0]) return PS_ERR_INVAL;
  if (n == 0) return PS_OK;
  if (clock < w->clock) {
    writer_failed(w, "a clock that goes back");
    return PS_ERR_INVAL;
  }
  if (n > w->sorted_cap) {
    ps_key *p = realloc(w->sorted, n * sizeof *p);
    if (!p) return PS_ERR_NOMEM;
    w->sorted = p;
    w->sorted_cap = n;
  }
  memcpy(w->sorted, keys, n * sizeof *keys);
  qsort(w->sorted, n, sizeof *keys, cmp_key);
  for (size_t i = 0; i < n; i++)
    if (ps_layout_value_len(&w->layout, w->sorted[i]) == 0) {
      writer_failed(w, "a key in no table");
      return PS_ERR_INVAL;
    }
  if ((uint64_t)(clock - w->clock) > (UINT64_MAX >> 2)) {
    writer_failed(w, "a clock step past 2^62");
    return PS_ERR_INVAL;
  }
  w->rec.len = 0;
  encode_record(&w->rec, (uint64_t)(clock - w->clock), op, w->sorted, n);
  if (w->rec.failed) return PS_ERR_NOMEM;
  w->clock = clock;
  if (fwrite(w->rec.buf, 1, w->rec.len, w->f) != w->rec.len) {
    writer_failed(w, strerror(errno));
    return PS_ERR_INVAL;
  }
  return PS_OK;
}

int wl_trace_writer_step(void *writer, int64_t clock, const wl_step *st,
                         const ps_key *samples, size_t n_samples) {
  wl_trace_writer *w = writer;
  int rc = wl_trace_writer_record(w, clock, WL_TRACE_READ, st->reads, st->n_reads);
  if (rc == PS_OK) rc = wl_trace_writer_record(w, clock, WL_TRACE_WRITE, st->writes, st->n_writes);
  if (rc == PS_OK && n_samples)
    rc = wl_trace_writer_record(w, clock, WL_TRACE_SAMPLE, samples, n_samples);
  return rc;
}

int wl_trace_writer_close(wl_trace_writer *w, bool keep, char *err, size_t errlen) {
  if (!w) return 0;
  if (fclose(w->f) != 0) writer_failed(w, strerror(errno));
  int rc = 0;
  if (w->error[0]) {
    snprintf(err, errlen, "trace: %s", w->error);
    rc = -1;
  }
  if (keep && rc == 0 && rename(w->tmp, w->path) != 0) {
    snprintf(err, errlen, "trace: %s: cannot rename it to %s: %s", w->tmp, w->path,
             strerror(errno));
    rc = -1;
  }
  if (!keep || rc != 0) remove(w->tmp);
  free(w->rec.buf);
  free(w->sorted);
  free(w->path);
  free(w->tmp);
  free(w);
  return rc;
}

/* ------------------------------------------------------------------ merge */

static bool same_layout(const ps_layout *a, const ps_layout *b) {
  if (a->num_tables != b->num_tables) return false;
  for (uint32_t i = 0; i < a->num_tables; i++)
    if (a->tables[i].first != b->tables[i].first || a->tables[i].count != b->tables[i].count ||
        a->tables[i].value_len != b->tables[i].value_len)
      return false;
  return true;
}

/* Reads part `rank` of file: its header and its records (data + off ..). */
static uint8_t *read_part(const char *file, uint32_t rank, trace_header *h, size_t *len,
                          size_t *off, char *err, size_t errlen) {
  char *path = wl_trace_part_path(file, rank);
  if (!path) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  uint8_t *data = slurp(path, len, err, errlen);
  if (data) {
    decoder d = {path, data, data, data + *len, err, errlen};
    if (decode_header(&d, true, h)) {
      *off = (size_t)(d.p - data);
    } else {
      free(data);
      data = NULL;
    }
  }
  free(path);
  return data;
}

int wl_trace_merge(const char *file, char *err, size_t errlen) {
  trace_header first, h;
  size_t len, off;
  uint8_t *part = read_part(file, 0, &first, &len, &off, err, errlen);
  if (!part) return -1;
  bytes b = {0};
  encode_header(&b, false, &first.layout, first.nodes, first.workers, 0);
  bool ok = true;
  for (uint32_t r = 0; ok && r < first.workers; r++) {
    if (r > 0 && !(part = read_part(file, r, &h, &len, &off, err, errlen))) {
      ok = false;
      break;
    }
    if (r > 0 && (h.rank != r || h.workers != first.workers || h.nodes != first.nodes ||
                  !same_layout(&h.layout, &first.layout))) {
      char *p = wl_trace_part_path(file, r);
      snprintf(err, errlen, "%s: a part of another run (its rank, workers, nodes or tables "
                            "differ from part 0's)", p ? p : file);
      free(p);
      ok = false;
    } else {
      bytes_varint(&b, len - off);
      bytes_put(&b, part + off, len - off);
    }
    free(part);
  }
  if (ok && b.failed) {
    snprintf(err, errlen, "%s: out of memory", file);
    ok = false;
  }
  if (ok) { /* check the whole before it replaces anything */
    wl_trace *t = wl_trace_parse(b.buf, b.len, file, err, errlen);
    ok = t != NULL;
    wl_trace_free(t);
  }
  if (ok) ok = write_atomic(file, b.buf, b.len, err, errlen) == 0;
  free(b.buf);
  if (ok) wl_trace_remove_parts(file, first.workers);
  return ok ? 0 : -1;
}

void wl_trace_remove_parts(const char *file, uint32_t workers) {
  for (uint32_t r = 0; r < workers; r++) {
    char *p = wl_trace_part_path(file, r);
    if (!p) continue;
    size_t n = strlen(p);
    char *tmp = malloc(n + 5);
    remove(p);
    if (tmp) {
      memcpy(tmp, p, n);
      memcpy(tmp + n, ".tmp", 5);
      remove(tmp);
    }
    free(tmp);
    free(p);
  }
}
