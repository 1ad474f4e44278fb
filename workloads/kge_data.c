/*
 * The kge workload's data: a knowledge graph from TSV files (FB15k, WN18
 * and their kin: head<TAB>relation<TAB>tail per line, train/valid/test), or
 * built from WordNet's own database files as Debian's wordnet-base installs
 * them, and a deterministic train/test split for the latter.
 *
 * WordNet (wndb(5)): each line of data.{noun,verb,adj,adv} past the license
 * header (lines that start with two spaces) is a synset:
 *   offset lex_filenum ss_type w_cnt(2 hex) {word lex_id(hex)}*w_cnt
 *   p_cnt(3 decimal) {symbol offset pos source/target}*p_cnt [frames] | gloss
 * A synset is named by its offset and the file it is in (offsets are byte
 * positions, unique per file only); a pointer's pos letter names the file
 * of its target (s, a satellite adjective, lives in data.adj). Pointers
 * whose source/target is 0000 relate synsets (semantic pointers); others
 * relate single words, and are left out, as WN18 does.
 */
#include "workloads/kge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kge_graph_free(kge_graph *g) {
  wl_names_free(g->entity_names, g->entities);
  wl_names_free(g->relation_names, g->relations);
  free(g->train);
  free(g->valid);
  free(g->test);
  memset(g, 0, sizeof *g);
}

/* ------------------------------------------------------------ triples */

typedef struct {
  kge_triple *v;
  size_t n, cap;
} triples;

static bool push_triple(triples *a, uint32_t h, uint32_t r, uint32_t t) {
  kge_triple *v = wl_grow(a->v, &a->cap, a->n + 1, sizeof *v);
  if (!v) return false;
  a->v = v;
  a->v[a->n++] = (kge_triple){h, r, t};
  return true;
}

/* Shrinks to fit (a graph's memory is its triples). */
static kge_triple *take(triples *a, size_t *n) {
  *n = a->n;
  if (a->n == 0) {
    free(a->v);
    return NULL;
  }
  kge_triple *v = realloc(a->v, a->n * sizeof *v);
  return v ? v : a->v;
}

/* ------------------------------------------------------------------ TSV */

typedef struct {
  wl_dict entities, relations;
} names;

/* Reads one TSV file into out; with add, unknown names get new ids,
 * otherwise they are errors. */
static bool read_tsv(const wl_context *ctx, const char *field, const char *file, names *nm,
                     bool add, triples *out, char *err, size_t errlen) {
  wl_reader r;
  if (!wl_reader_open(&r, ctx, field, file, err, errlen)) return false;
  bool ok = true, failed = false;
  size_t len;
  char *line;
  while (ok && (line = wl_reader_next(&r, &len, &failed))) {
    if (strspn(line, " \t") == len) continue; /* blank */
    const char *col[3];
    size_t col_len[3], cols = 0;
    for (char *p = line;;) {
      char *tab = strchr(p, '\t');
      size_t n = tab ? (size_t)(tab - p) : strlen(p);
      if (cols < 3) {
        col[cols] = p;
        col_len[cols] = n;
      }
      cols++;
      if (!tab) break;
      p = tab + 1;
    }
    static const char *const what[] = {"head", "relation", "tail"};
    if (cols != 3) {
      ok = wl_reader_error(&r, err, errlen,
                           "expected 3 tab-separated columns (head, relation, tail), found %zu",
                           cols);
      break;
    }
    uint32_t id[3];
    for (int c = 0; ok && c < 3; c++) {
      if (col_len[c] == 0) {
        ok = wl_reader_error(&r, err, errlen, "the %s is empty", what[c]);
        break;
      }
      wl_dict *d = c == 1 ? &nm->relations : &nm->entities;
      id[c] = add ? wl_dict_add(d, col[c], col_len[c], NULL) : wl_dict_find(d, col[c], col_len[c]);
      if (id[c] == UINT32_MAX)
        ok = add ? wl_reader_error(&r, err, errlen, "out of memory")
                 : wl_reader_error(&r, err, errlen, "unknown %s \"%.*s\": train never names it",
                                   c == 1 ? "relation" : "entity", (int)col_len[c], col[c]);
    }
    if (ok && !push_triple(out, id[0], id[1], id[2]))
      ok = wl_reader_error(&r, err, errlen, "out of memory");
  }
  if (ok && failed) ok = wl_reader_error(&r, err, errlen, "cannot read the file");
  if (ok && out->n == 0) ok = wl_reader_error(&r, err, errlen, "no triples in the file");
  wl_reader_close(&r);
  return ok;
}

bool kge_load_tsv(kge_graph *g, const wl_context *ctx, const char *train, const char *valid,
                  const char *test, char *err, size_t errlen) {
  memset(g, 0, sizeof *g);
  names nm = {0};
  triples tr = {0}, va = {0}, te = {0};
  bool ok = read_tsv(ctx, "train", train, &nm, true, &tr, err, errlen) &&
            (!valid || read_tsv(ctx, "valid", valid, &nm, false, &va, err, errlen)) &&
            (!test || read_tsv(ctx, "test", test, &nm, false, &te, err, errlen));
  g->entities = nm.entities.count;
  g->relations = nm.relations.count;
  g->entity_names = wl_dict_take_names(&nm.entities);
  g->relation_names = wl_dict_take_names(&nm.relations);
  g->train = take(&tr, &g->n_train);
  g->valid = take(&va, &g->n_valid);
  g->test = take(&te, &g->n_test);
  if (!ok) kge_graph_free(g);
  return ok;
}

/* -------------------------------------------------------------- WordNet */

/* The next space-separated token of *p (NULL at the end of the line). */
static const char *token(char **p, size_t *len) {
  char *s = *p;
  while (*s == ' ') s++;
  if (!*s) return NULL;
  char *e = s;
  while (*e && *e != ' ') e++;
  *len = (size_t)(e - s);
  *p = e;
  return s;
}

/* Parses a number of exactly the token (base 10 or 16); false if it is not
 * one. */
static bool token_number(const char *s, size_t len, int base, unsigned long *out) {
  if (len == 0 || len > 12) return false;
  char buf[16];
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *end;
  *out = strtoul(buf, &end, base);
  return *end == '\0' && buf[0] != '-' && buf[0] != '+';
}

/* The entity of synset `offset` (8 digits) in the file of pos letter. */
static uint32_t synset(wl_dict *entities, const char *offset, size_t len, char pos) {
  char name[24];
  if (len > 16) return UINT32_MAX - 1;
  memcpy(name, offset, len);
  name[len] = pos == 's' ? 'a' : pos;
  return wl_dict_add(entities, name, len + 1, NULL);
}

/* One synset line's synset-to-synset pointers into out. */
static bool wordnet_line(wl_reader *r, char *line, char pos, names *nm, triples *out,
                         char *err, size_t errlen) {
  char *p = line;
  size_t len, off_len;
  unsigned long n;
  const char *off = token(&p, &off_len);
  if (!off || !token_number(off, off_len, 10, &n))
    return wl_reader_error(r, err, errlen, "expected a synset offset, found \"%.20s\"", line);
  uint32_t head = synset(&nm->entities, off, off_len, pos);
  const char *tok;
  if (!token(&p, &len) || !token(&p, &len)) /* lex_filenum, ss_type */
    return wl_reader_error(r, err, errlen, "the synset line ends early");
  if (!(tok = token(&p, &len)) || !token_number(tok, len, 16, &n))
    return wl_reader_error(r, err, errlen, "expected a word count (hex)");
  for (unsigned long w = 0; w < 2 * n; w++)
    if (!token(&p, &len)) return wl_reader_error(r, err, errlen, "fewer words than w_cnt");
  if (!(tok = token(&p, &len)) || !token_number(tok, len, 10, &n))
    return wl_reader_error(r, err, errlen, "expected a pointer count");
  for (unsigned long i = 0; i < n; i++) {
    size_t sym_len = 0, to_len = 0, pos_len = 0, st_len = 0;
    const char *sym = token(&p, &sym_len), *to = token(&p, &to_len);
    const char *tpos = token(&p, &pos_len), *st = token(&p, &st_len);
    if (!st || pos_len != 1 || !strchr("nvasr", tpos[0]))
      return wl_reader_error(r, err, errlen, "pointer %lu of %lu is malformed", i + 1, n);
    if (st_len != 4 || memcmp(st, "0000", 4) != 0) continue; /* word to word */
    uint32_t rel = wl_dict_add(&nm->relations, sym, sym_len, NULL);
    uint32_t tail = synset(&nm->entities, to, to_len, tpos[0]);
    if (head >= UINT32_MAX - 1 || tail >= UINT32_MAX - 1 || rel == UINT32_MAX ||
        !push_triple(out, head, rel, tail))
      return wl_reader_error(r, err, errlen, "out of memory");
  }
  return true;
}

bool kge_load_wordnet(kge_graph *g, const wl_context *ctx, const char *dir, char *err,
                      size_t errlen) {
  static const char *const files[] = {"noun", "verb", "adj", "adv"};
  static const char pos[] = {'n', 'v', 'a', 'r'};
  memset(g, 0, sizeof *g);
  names nm = {0};
  triples tr = {0};
  bool ok = true;
  for (int f = 0; ok && f < 4; f++) {
    char file[4096];
    snprintf(file, sizeof file, "%s/data.%s", dir, files[f]);
    wl_reader r;
    if (!wl_reader_open(&r, ctx, "wordnet_dir", file, err, errlen)) {
      size_t used = strlen(err);
      snprintf(err + used, errlen - used,
               "; install wordnet-base (make deps, or scripts/install-deps.sh), or set "
               "wordnet_dir to a directory with WordNet's data.* files");
      ok = false;
      break;
    }
    size_t len;
    bool failed = false;
    char *line;
    while (ok && (line = wl_reader_next(&r, &len, &failed))) {
      if (len == 0 || line[0] == ' ') continue; /* license header */
      ok = wordnet_line(&r, line, pos[f], &nm, &tr, err, errlen);
    }
    if (ok && failed) ok = wl_reader_error(&r, err, errlen, "cannot read the file");
    wl_reader_close(&r);
  }
  if (ok && tr.n == 0) {
    snprintf(err, errlen, "wordnet_dir: %s: no synset-to-synset pointers in its data.* files",
             dir);
    ok = false;
  }
  g->entities = nm.entities.count;
  g->relations = nm.relations.count;
  g->entity_names = wl_dict_take_names(&nm.entities);
  g->relation_names = wl_dict_take_names(&nm.relations);
  g->train = take(&tr, &g->n_train);
  if (!ok) kge_graph_free(g);
  return ok;
}

/* ---------------------------------------------------------------- split */

bool kge_split(kge_graph *g, double test_fraction, uint64_t seed) {
  size_t n = g->n_train, want = (size_t)(test_fraction * (double)n + 0.5);
  if (want == 0) return true;
  uint32_t *ent = calloc(g->entities, sizeof *ent), *rel = calloc(g->relations, sizeof *rel);
  size_t *order = malloc(n * sizeof *order);
  bool *moved = calloc(n, sizeof *moved);
  kge_triple *test = malloc(want * sizeof *test);
  gsl_rng *rng = wl_rng_new(seed, 0);
  bool ok = ent && rel && order && moved && test && rng;
  if (ok) {
    for (size_t i = 0; i < n; i++) {
      order[i] = i;
      ent[g->train[i].h]++;
      ent[g->train[i].t]++;
      rel[g->train[i].r]++;
    }
    gsl_ran_shuffle(rng, order, n, sizeof *order);
    size_t got = 0;
    for (size_t i = 0; i < n && got < want; i++) {
      kge_triple x = g->train[order[i]];
      uint32_t need = x.h == x.t ? 3 : 2; /* so that >= 1 is left after the move */
      if (rel[x.r] < 2 || ent[x.h] < need || ent[x.t] < need) continue;
      ent[x.h]--;
      ent[x.t]--;
      rel[x.r]--;
      moved[order[i]] = true;
      test[got++] = x;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (!moved[i]) g->train[k++] = g->train[i];
    g->n_train = k;
    free(g->test);
    g->test = test;
    g->n_test = got;
    test = NULL;
  }
  if (rng) gsl_rng_free(rng);
  free(ent);
  free(rel);
  free(order);
  free(moved);
  free(test);
  return ok;
}
