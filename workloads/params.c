/*
 * Saved parameters (workload.h, "saved parameters"): each node's part, the
 * merge into params.bin and the workload's own files, and reading
 * params.bin back. A part is "PSLPPART" then records {u64 key, u32 len,
 * len float32}, in the order the node's store holds them; it lives only
 * until the merge.
 */
#include "workloads/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PART_MAGIC "PSLPPART"
#define PARAMS_VERSION 1u

/* ------------------------------------------------------------------ files */

char *wl_save_path(const char *dir, const char *name) {
  size_t dl = strlen(dir), nl = strlen(name);
  char *p = malloc(dl + nl + 2);
  if (!p) return NULL;
  memcpy(p, dir, dl);
  p[dl] = '/';
  memcpy(p + dl + 1, name, nl + 1);
  return p;
}

FILE *wl_save_begin(const char *path, char **tmp, char *err, size_t errlen) {
  size_t pl = strlen(path);
  if (!(*tmp = malloc(pl + 5))) {
    snprintf(err, errlen, "%s: out of memory", path);
    return NULL;
  }
  memcpy(*tmp, path, pl);
  memcpy(*tmp + pl, ".tmp", 5);
  FILE *f = fopen(*tmp, "wb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot write it: %s", *tmp, strerror(errno));
    free(*tmp);
    *tmp = NULL;
  }
  return f;
}

int wl_save_end(FILE *f, char *tmp, const char *path, bool ok, char *err, size_t errlen) {
  bool wrote = !ferror(f);
  int saved = errno;
  if (fclose(f) != 0) wrote = false;
  if (ok && wrote && rename(tmp, path) != 0) wrote = false;
  if (ok && !wrote) snprintf(err, errlen, "%s: cannot write it: %s", path,
                             strerror(errno ? errno : saved));
  if (!ok || !wrote) remove(tmp);
  free(tmp);
  return ok && wrote ? 0 : -1;
}

bool wl_save_open(wl_save_file *s, const char *dir, const char *name, char *err,
                  size_t errlen) {
  s->tmp = NULL;
  s->f = NULL;
  if (!(s->path = wl_save_path(dir, name))) snprintf(err, errlen, "params: out of memory");
  else if (!(s->f = wl_save_begin(s->path, &s->tmp, err, errlen))) free(s->path);
  return s->f != NULL;
}

int wl_save_close(wl_save_file *s, bool ok, char *err, size_t errlen) {
  int rc = wl_save_end(s->f, s->tmp, s->path, ok, err, errlen);
  free(s->path);
  return rc;
}

void wl_save_float(FILE *f, float x) { fprintf(f, "%.9g", (double)x); }

static void save_name(FILE *f, char sep, const char *name) {
  if (!strchr(name, sep) && !strpbrk(name, "\"\r\n")) {
    fputs(name, f);
    return;
  }
  fputc('"', f);
  for (const char *c = name; *c; c++) {
    if (*c == '"') fputc('"', f);
    fputc(*c, f);
  }
  fputc('"', f);
}

void wl_save_rows(FILE *f, char sep, char *const *names, uint64_t n, const float *vals,
                  uint32_t len, uint64_t stride) {
  for (uint64_t i = 0; i < n; i++) {
    if (names) save_name(f, sep, names[i]);
    else fprintf(f, "%llu", (unsigned long long)i);
    for (uint32_t j = 0; j < len; j++) {
      fputc(sep, f);
      wl_save_float(f, vals[i * stride + j]);
    }
    fputc('\n', f);
  }
}

static char *part_path(const char *dir, uint32_t node) {
  char name[32];
  snprintf(name, sizeof name, "params.part%u", (unsigned)node);
  return wl_save_path(dir, name);
}

/* ------------------------------------------------------------------ parts */

struct wl_params_part {
  FILE *f;
  char *path, *tmp;
};

wl_params_part *wl_params_part_open(const char *dir, uint32_t node, char *err,
                                    size_t errlen) {
  wl_params_part *p = calloc(1, sizeof *p);
  if (!p || !(p->path = part_path(dir, node))) {
    free(p);
    snprintf(err, errlen, "params: out of memory");
    return NULL;
  }
  if (!(p->f = wl_save_begin(p->path, &p->tmp, err, errlen))) {
    free(p->path);
    free(p);
    return NULL;
  }
  fwrite(PART_MAGIC, 1, 8, p->f);
  return p;
}

void wl_params_part_add(void *part, ps_key k, const float *value, uint32_t len) {
  wl_params_part *p = part;
  uint64_t key = k;
  fwrite(&key, sizeof key, 1, p->f);
  fwrite(&len, sizeof len, 1, p->f);
  fwrite(value, sizeof *value, len, p->f);
}

int wl_params_part_close(wl_params_part *p, bool keep, char *err, size_t errlen) {
  int rc = wl_save_end(p->f, p->tmp, p->path, keep, err, errlen);
  free(p->path);
  free(p);
  return rc;
}

void wl_params_remove_parts(const char *dir, uint32_t nodes) {
  for (uint32_t i = 0; i < nodes; i++) {
    char *p = part_path(dir, i);
    size_t l = p ? strlen(p) : 0;
    char *tmp = p ? malloc(l + 5) : NULL;
    if (tmp) {
      memcpy(tmp, p, l);
      memcpy(tmp + l, ".tmp", 5);
      remove(tmp);
    }
    if (p) remove(p);
    free(tmp);
    free(p);
  }
}

/* ------------------------------------------------------------------ merge */

/* The dense values of every key: table t's at vals[t] (into one buffer),
 * and which keys a part gave (to catch a key owned twice). */
typedef struct {
  const ps_layout *layout;
  float *buf;
  const float *vals[PS_MAX_TABLES];
  uint64_t off[PS_MAX_TABLES]; /* floats before table t */
  uint8_t *given;              /* one byte per key, table by table */
  uint64_t keys_before[PS_MAX_TABLES];
} dense;

static int dense_init(dense *d, const ps_layout *layout) {
  memset(d, 0, sizeof *d);
  d->layout = layout;
  uint64_t floats = 0, keys = 0;
  for (uint32_t t = 0; t < layout->num_tables; t++) {
    d->off[t] = floats;
    d->keys_before[t] = keys;
    floats += layout->tables[t].count * layout->tables[t].value_len;
    keys += layout->tables[t].count;
  }
  d->buf = calloc(floats ? floats : 1, sizeof *d->buf);
  d->given = calloc(keys ? keys : 1, 1);
  for (uint32_t t = 0; t < layout->num_tables; t++) d->vals[t] = d->buf + d->off[t];
  return d->buf && d->given ? 0 : -1;
}

/* Reads one part into d. */
static int read_part(dense *d, const char *path, uint32_t node, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "params: %s: cannot read node %u's part: %s", path, (unsigned)node,
             strerror(errno));
    return -1;
  }
  char magic[8];
  const char *why = fread(magic, 1, 8, f) == 8 && !memcmp(magic, PART_MAGIC, 8)
                        ? NULL : "not a part of saved parameters";
  uint64_t key;
  uint32_t len;
  while (!why && fread(&key, sizeof key, 1, f) == 1) {
    int t = -1;
    for (uint32_t i = 0; i < d->layout->num_tables; i++)
      if (key >= d->layout->tables[i].first &&
          key - d->layout->tables[i].first < d->layout->tables[i].count) t = (int)i;
    uint64_t i = t < 0 ? 0 : key - d->layout->tables[t].first;
    if (t < 0 || fread(&len, sizeof len, 1, f) != 1 || len != d->layout->tables[t].value_len)
      why = "a key in no table, or a value of the wrong length";
    else if (d->given[d->keys_before[t] + i]++)
      why = "a key another node owns too";
    else if (fread(d->buf + d->off[t] + i * len, sizeof(float), len, f) != len)
      why = "cut short";
  }
  fclose(f);
  if (why) snprintf(err, errlen, "params: %s (node %u's part): %s", path, (unsigned)node, why);
  return why ? -1 : 0;
}

static void put_u32(FILE *f, uint32_t v) { fwrite(&v, sizeof v, 1, f); }
static void put_u64(FILE *f, uint64_t v) { fwrite(&v, sizeof v, 1, f); }

static int write_table(const dense *d, const char *dir, char *err, size_t errlen) {
  wl_save_file sv;
  if (!wl_save_open(&sv, dir, WL_PARAMS_FILE, err, errlen)) return -1;
  FILE *f = sv.f;
  const ps_layout *l = d->layout;
  fwrite(WL_PARAMS_MAGIC, 1, 8, f);
  put_u32(f, PARAMS_VERSION);
  put_u32(f, l->num_tables);
  uint64_t floats = 0;
  for (uint32_t t = 0; t < l->num_tables; t++) {
    put_u64(f, l->tables[t].first);
    put_u64(f, l->tables[t].count);
    put_u32(f, l->tables[t].value_len);
    put_u32(f, 0);
    floats += l->tables[t].count * l->tables[t].value_len;
  }
  fwrite(d->buf, sizeof *d->buf, floats, f);
  return wl_save_close(&sv, true, err, errlen);
}

int wl_params_merge(const wl_workload *wl, const ps_layout *layout, const char *dir,
                    uint32_t nodes, char *err, size_t errlen) {
  dense d;
  int rc = dense_init(&d, layout);
  if (rc) snprintf(err, errlen, "params: out of memory for every key's value");
  for (uint32_t i = 0; rc == 0 && i < nodes; i++) {
    char *path = part_path(dir, i);
    rc = path ? read_part(&d, path, i, err, errlen) : -1;
    if (!path) snprintf(err, errlen, "params: out of memory");
    free(path);
  }
  for (uint32_t t = 0; rc == 0 && t < layout->num_tables; t++) {
    const ps_table *tb = &layout->tables[t];
    for (uint64_t i = 0; i < tb->count; i++)
      wl_add_initial(wl, tb->first + i, d.buf + d.off[t] + i * tb->value_len, tb->value_len);
  }
  if (rc == 0) rc = write_table(&d, dir, err, errlen);
  if (rc == 0 && wl->type->save)
    rc = wl->type->save(wl->impl, layout, d.vals, dir, err, errlen);
  if (rc == 0) wl_params_remove_parts(dir, nodes);
  free(d.buf);
  free(d.given);
  return rc;
}

/* ------------------------------------------------------------------- load */

static int load_fail(FILE *f, wl_params *out, const char *path, const char *why, char *err,
                     size_t errlen) {
  if (f) fclose(f);
  wl_params_free(out);
  snprintf(err, errlen, "%s: %s", path, why);
  return -1;
}

int wl_params_load(const char *path, wl_params *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return load_fail(NULL, out, path, strerror(errno), err, errlen);
  char magic[8];
  uint32_t version, n;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, WL_PARAMS_MAGIC, 8) ||
      fread(&version, 4, 1, f) != 1 || version != PARAMS_VERSION || fread(&n, 4, 1, f) != 1 ||
      n > PS_MAX_TABLES)
    return load_fail(f, out, path, "not saved parameters (version 1)", err, errlen);
  out->num_tables = n;
  for (uint32_t t = 0; t < n; t++) {
    uint64_t first, count;
    uint32_t len, zero;
    if (fread(&first, 8, 1, f) != 1 || fread(&count, 8, 1, f) != 1 ||
        fread(&len, 4, 1, f) != 1 || fread(&zero, 4, 1, f) != 1)
      return load_fail(f, out, path, "cut short in its tables", err, errlen);
    out->tables[t] = (ps_table){.first = first, .count = count, .value_len = len};
    out->n_floats += count * len;
  }
  out->values = malloc((out->n_floats ? out->n_floats : 1) * sizeof *out->values);
  if (!out->values) return load_fail(f, out, path, "out of memory", err, errlen);
  if (fread(out->values, sizeof(float), out->n_floats, f) != out->n_floats || fgetc(f) != EOF)
    return load_fail(f, out, path, "its values do not match its tables", err, errlen);
  fclose(f);
  return 0;
}

const float *wl_params_value(const wl_params *p, ps_key k) {
  uint64_t off = 0;
  for (uint32_t t = 0; t < p->num_tables; t++) {
    const ps_table *tb = &p->tables[t];
    if (k >= tb->first && k - tb->first < tb->count)
      return p->values + off + (k - tb->first) * tb->value_len;
    off += tb->count * tb->value_len;
  }
  return NULL;
}

void wl_params_free(wl_params *p) {
  free(p->values);
  p->values = NULL;
}
