/*
 * Files, as the runner, the plotter and the commands use them: a file read
 * whole (only a regular file: a FIFO, a directory or a device given as a
 * spec or a profile is refused before it is opened for reading, since a
 * FIFO would block the reader for ever), mkdir -p, a file written through
 * a temporary one renamed over it (never seen half-written), a path
 * joined, and the names the results may be given (a file name stem).
 */
#include "experiments/common/common.h"
#include "workloads/workload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool exp_is_file_stem(const char *s) {
  if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return false;
  for (; *s; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

FILE *exp_open_regular(const char *path, char *err, size_t errlen) {
  const char *kind;
  FILE *f = wl_fopen_regular(path, NULL, &kind);
  if (!f && kind)
    snprintf(err, errlen, "%s: not a regular file (%s)", path, kind);
  else if (!f)
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
  return f;
}

char *exp_read_file(const char *path, size_t *len, char *err, size_t errlen) {
  FILE *f = exp_open_regular(path, err, errlen);
  if (!f) return NULL;
  exp_buf b = {0};
  char chunk[8192];
  size_t n;
  while (!b.failed && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
    exp_buf_add(&b, chunk, n);
  bool bad = ferror(f) != 0;
  int saved = errno;
  fclose(f);
  if (bad) {
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(saved));
    exp_buf_free(&b);
    return NULL;
  }
  size_t total = b.len;
  char *s = exp_buf_take(&b);
  if (!s) snprintf(err, errlen, "%s: out of memory", path);
  if (len) *len = total;
  return s;
}

/* Creates one directory; fine if it is already there as a directory. */
static int make_dir(const char *p) {
  struct stat st;
  if (mkdir(p, 0777) == 0) return 0;
  if (errno != EEXIST) return -1;
  if (stat(p, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

int exp_mkdir_p(const char *dir, char *err, size_t errlen) {
  char *p = *dir ? strdup(dir) : NULL;
  if (!p) {
    snprintf(err, errlen, "cannot create directory \"%s\"", dir);
    return -1;
  }
  int rc = 0;
  /* Each prefix ending at a slash, then the whole path. */
  for (char *s = p + 1; rc == 0; s++) {
    bool end = *s == '\0';
    if (*s != '/' && !end) continue;
    *s = '\0';
    rc = make_dir(p);
    if (rc != 0) snprintf(err, errlen, "%s: cannot create: %s", p, strerror(errno));
    if (end) break;
    *s = '/';
  }
  free(p);
  return rc;
}

int exp_write_file_atomic(const char *path, const char *data, size_t len,
                          char *err, size_t errlen) {
  size_t n = strlen(path) + 5;
  char *tmp = malloc(n);
  if (!tmp) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  snprintf(tmp, n, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(data, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  return ok ? 0 : -1;
}

char *exp_join_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (!p) return NULL;
  size_t dl = strlen(dir);
  bool slash = dl > 0 && dir[dl - 1] == '/';
  snprintf(p, n, "%s%s%s", dir, slash || dl == 0 ? "" : "/", name);
  return p;
}

char *exp_json_text_nl(const cJSON *json, bool formatted, size_t *len) {
  char *text = formatted ? cJSON_Print(json) : cJSON_PrintUnformatted(json);
  size_t n = text ? strlen(text) : 0;
  char *out = text ? realloc(text, n + 2) : NULL;
  if (!out) {
    free(text);
    return NULL;
  }
  memcpy(out + n, "\n", 2);
  *len = n + 1;
  return out;
}

int exp_write_json_atomic(const char *path, const cJSON *json, char *err, size_t errlen) {
  size_t len;
  char *file = exp_json_text_nl(json, true, &len);
  if (!file) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int rc = exp_write_file_atomic(path, file, len, err, errlen);
  free(file);
  return rc;
}
