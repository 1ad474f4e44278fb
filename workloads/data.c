/*
 * What the loaders of real data share: file names taken from the spec's
 * directory, input files opened only when they are regular files (a FIFO
 * would block the loader for ever), a line reader whose errors name the file and the line, a
 * dictionary from names to dense ids, and the deterministic initial values
 * of embeddings.
 */
#include "workloads/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ arrays */

void *wl_grow(void *buf, size_t *cap, size_t need, size_t size) {
  if (need <= *cap && *cap) return buf;
  size_t n = *cap ? *cap : 64;
  while (n < need) {
    if (n > SIZE_MAX / 2 / size) return NULL;
    n *= 2;
  }
  void *p = realloc(buf, n * size);
  if (p) *cap = n;
  return p;
}

/* ------------------------------------------------------------- paths */

char *wl_path(const wl_context *ctx, const char *file) {
  const char *base = ctx ? ctx->base_dir : NULL;
  if (file[0] == '/' || !base || !*base || strcmp(base, ".") == 0) return strdup(file);
  size_t a = strlen(base), b = strlen(file);
  char *p = malloc(a + b + 2);
  if (!p) return NULL;
  memcpy(p, base, a);
  size_t n = a;
  if (p[n - 1] != '/') p[n++] = '/';
  memcpy(p + n, file, b + 1);
  return p;
}

/* ------------------------------------------------------------ files */

/* What a file of mode is, when it is not a regular file. */
static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

FILE *wl_fopen_regular(const char *path, size_t *size, const char **kind) {
  struct stat st;
  *kind = NULL;
  if (stat(path, &st) != 0) return NULL;
  if (!S_ISREG(st.st_mode)) {
    *kind = file_kind(st.st_mode);
    return NULL;
  }
  /* Non-blocking: should a FIFO have taken its place since, the open does
   * not wait for a writer, and fstat tells. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  FILE *f = NULL;
  if (fstat(fd, &st) != 0) {
    /* errno says why */
  } else if (!S_ISREG(st.st_mode)) {
    *kind = file_kind(st.st_mode);
  } else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0) {
    f = fdopen(fd, "rb");
  }
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
    return NULL;
  }
  if (size) *size = st.st_size > 0 ? (size_t)st.st_size : 0;
  return f;
}

FILE *wl_open_regular(const char *path, size_t *size, char *err, size_t errlen) {
  const char *kind;
  FILE *f = wl_fopen_regular(path, size, &kind);
  if (f) return f;
  if (!kind)
    snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(errno));
  else if (strcmp(kind, "a directory") == 0)
    snprintf(err, errlen, "%s: expected a file, found a directory", path);
  else
    snprintf(err, errlen, "%s: not a regular file (%s)", path, kind);
  return NULL;
}

/* ------------------------------------------------------------ reader */

bool wl_reader_open(wl_reader *r, const wl_context *ctx, const char *field, const char *file,
                    char *err, size_t errlen) {
  memset(r, 0, sizeof *r);
  r->field = field;
  char *path = wl_path(ctx, file);
  if (!path) {
    snprintf(err, errlen, "%s: out of memory", field);
    return false;
  }
  char why[4096 + 128]; /* a path and the reason */
  FILE *f = wl_open_regular(path, NULL, why, sizeof why);
  if (!f) {
    snprintf(err, errlen, "%s: %s", field, why);
    free(path);
    return false;
  }
  r->file = f;
  r->path = path;
  return true;
}

char *wl_reader_next(wl_reader *r, size_t *len, bool *failed) {
  if (failed) *failed = false;
  if (!r->file) return NULL;
  size_t n = 0;
  int c;
  while ((c = getc((FILE *)r->file)) != EOF && c != '\n') {
    if (n + 2 > r->cap) {
      size_t cap = r->cap ? r->cap * 2 : 256;
      char *b = realloc(r->buf, cap);
      if (!b) {
        if (failed) *failed = true;
        return NULL;
      }
      r->buf = b;
      r->cap = cap;
    }
    r->buf[n++] = (char)c;
  }
  if (c == EOF && n == 0) {
    if (failed && ferror((FILE *)r->file)) *failed = true;
    return NULL;
  }
  if (!r->buf) { /* an empty line before any buffer */
    if (!(r->buf = malloc(r->cap = 256))) {
      if (failed) *failed = true;
      return NULL;
    }
  }
  if (n && r->buf[n - 1] == '\r') n--;
  r->buf[n] = '\0';
  r->line++;
  if (len) *len = n;
  return r->buf;
}

bool wl_reader_error(const wl_reader *r, char *err, size_t errlen, const char *fmt, ...) {
  int n = snprintf(err, errlen, "%s: %s:%llu: ", r->field ? r->field : "file",
                   r->path ? r->path : "?", (unsigned long long)r->line);
  if (n >= 0 && (size_t)n < errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return false;
}

void wl_reader_close(wl_reader *r) {
  if (r->file) fclose((FILE *)r->file);
  free(r->path);
  free(r->buf);
  memset(r, 0, sizeof *r);
}

/* -------------------------------------------------------- dictionary */

static uint64_t hash_name(const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  return ps_mix64(h);
}

static bool same_name(const char *stored, const char *s, size_t len) {
  return strncmp(stored, s, len) == 0 && stored[len] == '\0';
}

uint32_t wl_dict_find(const wl_dict *d, const char *name, size_t len) {
  if (!d->cap) return UINT32_MAX;
  for (size_t i = hash_name(name, len) & (d->cap - 1);; i = (i + 1) & (d->cap - 1)) {
    uint32_t s = d->slots[i];
    if (!s) return UINT32_MAX;
    if (same_name(d->names[s - 1], name, len)) return s - 1;
  }
}

static bool dict_grow(wl_dict *d) {
  size_t cap = d->cap ? d->cap * 2 : 1024;
  uint32_t *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (uint32_t id = 0; id < d->count; id++) {
    size_t i = hash_name(d->names[id], strlen(d->names[id])) & (cap - 1);
    while (slots[i]) i = (i + 1) & (cap - 1);
    slots[i] = id + 1;
  }
  free(d->slots);
  d->slots = slots;
  d->cap = cap;
  return true;
}

uint32_t wl_dict_add(wl_dict *d, const char *name, size_t len, bool *added) {
  if (added) *added = false;
  uint32_t id = wl_dict_find(d, name, len);
  if (id != UINT32_MAX) return id;
  if (d->count == UINT32_MAX - 1) return UINT32_MAX;
  if (((size_t)d->count + 1) * 10 > d->cap * 7 && !dict_grow(d)) return UINT32_MAX;
  if (d->count == d->names_cap) {
    uint32_t cap = d->names_cap ? d->names_cap * 2 : 1024;
    char **names = realloc(d->names, cap * sizeof *names);
    if (!names) return UINT32_MAX;
    d->names = names;
    d->names_cap = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return UINT32_MAX;
  memcpy(copy, name, len);
  copy[len] = '\0';
  id = d->count++;
  d->names[id] = copy;
  size_t i = hash_name(name, len) & (d->cap - 1);
  while (d->slots[i]) i = (i + 1) & (d->cap - 1);
  d->slots[i] = id + 1;
  if (added) *added = true;
  return id;
}

void wl_names_free(char **names, uint32_t count) {
  for (uint32_t i = 0; names && i < count; i++) free(names[i]);
  free(names);
}

void wl_dict_free(wl_dict *d) {
  wl_names_free(d->names, d->count);
  free(d->slots);
  memset(d, 0, sizeof *d);
}

char **wl_dict_take_names(wl_dict *d) {
  char **names = d->count ? d->names : NULL;
  if (!names) free(d->names);
  free(d->slots);
  memset(d, 0, sizeof *d);
  return names;
}

/* ---------------------------------------------------- initial values */

float wl_initial_uniform(uint64_t salt, ps_key k, uint32_t i, float scale) {
  uint64_t h = ps_mix64(ps_mix64(k ^ salt) + i);
  double u = (double)(h >> 11) * 0x1.0p-53; /* [0, 1) */
  return (float)((2.0 * u - 1.0) * scale);
}
