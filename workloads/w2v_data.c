/*
 * The `w2v` workload's data: the corpus and the quality sets, read once in
 * create and read-only afterwards.
 *
 * Corpus. Any UTF-8 (or ASCII) text, each line a sentence (windows never
 * cross a line), split into words on ASCII whitespace, control characters
 * and ASCII punctuation, lower-cased in ASCII (bytes >= 0x80 belong to
 * words, so UTF-8 letters stay inside their word, uncased). One pass reads
 * it into a dictionary of every word and an array of word ids (4 bytes a
 * token); then words seen fewer than min_count times are dropped (from the
 * vocabulary and from the token array, as word2vec does before windowing)
 * and the rest are renumbered by frequency, most frequent first. Memory:
 * the tokens, the sentence starts and the distinct words.
 *
 * "wordnet:glosses" is a real corpus any Debian machine has once
 * wordnet-base is installed: the gloss of every synset (definition and
 * examples, the text after " | " in data.noun, data.verb, data.adj and
 * data.adv), one sentence each, in file order.
 *
 * Similarity and analogy sets in the common formats (WordSim353/SimLex-style
 * `w1 w2 score`, questions-words.txt-style `a b c d` with ': section'
 * headers), and "wordnet:synonyms": a similarity set built from WordNet,
 * a proxy for human judgements (see w2v_similarity_load).
 */
#include "workloads/w2v.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------- tokenizer */

static bool is_separator(unsigned char c) {
  if (c >= 0x80) return false;               /* UTF-8 bytes belong to words */
  if (c <= ' ' || c == 0x7f) return true;   /* whitespace, controls */
  if (c >= '0' && c <= '9') return false;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return false;
  return true;                               /* ASCII punctuation */
}

bool w2v_tokenize(const char *text, size_t len, char *buf,
                  bool (*fn)(void *ctx, const char *word, size_t len), void *ctx) {
  size_t i = 0;
  while (i < len) {
    while (i < len && is_separator((unsigned char)text[i])) i++;
    size_t n = 0;
    while (i < len && !is_separator((unsigned char)text[i])) {
      char c = text[i++];
      buf[n++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    if (n && !fn(ctx, buf, n)) return false;
  }
  return true;
}

/* Lower-cases word in place (ASCII). */
static void ascii_lower(char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] >= 'A' && s[i] <= 'Z') s[i] = (char)(s[i] - 'A' + 'a');
}

/* --------------------------------------------------------- the builder */

typedef struct {
  wl_dict dict;        /* every word */
  uint64_t *counts;    /* by raw id */
  size_t counts_cap;
  uint32_t *tokens;    /* raw ids */
  uint64_t n_tokens, tokens_cap;
  uint64_t *starts;    /* sentence starts */
  uint64_t n_sentences, starts_cap;
  char *buf;           /* the tokenizer's word buffer */
  size_t buf_cap;
  bool nomem;
} builder;

static bool grow_to(void **p, uint64_t *cap, uint64_t need, size_t size) {
  size_t c = (size_t)*cap;
  void *q = wl_grow(*p, &c, (size_t)need, size);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

static bool add_token(void *ctx, const char *word, size_t len) {
  builder *b = ctx;
  bool added;
  uint32_t id = wl_dict_add(&b->dict, word, len, &added);
  uint64_t cap = b->counts_cap;
  if (id == UINT32_MAX || !grow_to((void **)&b->counts, &cap, (uint64_t)id + 1, sizeof *b->counts) ||
      !grow_to((void **)&b->tokens, &b->tokens_cap, b->n_tokens + 1, sizeof *b->tokens)) {
    b->nomem = true;
    return false;
  }
  b->counts_cap = (size_t)cap;
  if (added) b->counts[id] = 0;
  b->counts[id]++;
  b->tokens[b->n_tokens++] = id;
  return true;
}

/* Tokenizes one sentence into the builder; false on no memory. */
static bool add_sentence(builder *b, const char *text, size_t len) {
  uint64_t cap = b->buf_cap;
  if (!grow_to((void **)&b->buf, &cap, len + 1, 1)) return !(b->nomem = true);
  b->buf_cap = (size_t)cap;
  uint64_t first = b->n_tokens;
  if (!w2v_tokenize(text, len, b->buf, add_token, b)) return false;
  if (b->n_tokens == first) return true;
  if (!grow_to((void **)&b->starts, &b->starts_cap, b->n_sentences + 2, sizeof *b->starts))
    return !(b->nomem = true);
  b->starts[b->n_sentences++] = first;
  return true;
}

static void builder_free(builder *b) {
  wl_dict_free(&b->dict);
  free(b->counts);
  free(b->tokens);
  free(b->starts);
  free(b->buf);
}

/* ------------------------------------------------------------ reading */

static bool nomem(char *err, size_t errlen, const char *field) {
  snprintf(err, errlen, "%s: out of memory", field);
  return false;
}

/* Each line of the file is a sentence. */
static bool read_text(builder *b, const wl_context *ctx, const char *file, char **path,
                      char *err, size_t errlen) {
  wl_reader r;
  if (!wl_reader_open(&r, ctx, "corpus", file, err, errlen)) return false;
  char *line;
  size_t len;
  bool failed = false;
  while ((line = wl_reader_next(&r, &len, &failed)))
    if (!add_sentence(b, line, len)) break;
  bool ok = !failed && !b->nomem;
  if (failed) wl_reader_error(&r, err, errlen, "cannot read it");
  if (b->nomem) nomem(err, errlen, "corpus");
  if (ok && !(*path = strdup(r.path))) ok = nomem(err, errlen, "corpus");
  wl_reader_close(&r);
  return ok;
}

static const char *const wordnet_parts[] = {"noun", "verb", "adj", "adv", NULL};

/* Opens wordnet_dir/data.<part>, with the message that says what to install
 * when it is missing. */
static bool open_wordnet(wl_reader *r, const char *field, const char *what,
                         const char *wordnet_dir, const char *part, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/data.%s", wordnet_dir, part);
  struct stat st;
  if (stat(path, &st) != 0) {
    snprintf(err, errlen,
             "%s: %s reads WordNet's database, and %s: %s: install Debian's wordnet-base "
             "(apt-get install wordnet-base, or scripts/install-deps.sh)",
             field, what, path, strerror(errno));
    return false;
  }
  return wl_reader_open(r, NULL, field, path, err, errlen);
}

/* A synset line of a data.* file, or NULL for the license header (lines
 * that start with spaces). */
static bool is_synset_line(const char *line) { return line[0] >= '0' && line[0] <= '9'; }

static bool read_glosses(builder *b, const char *wordnet_dir, char *err, size_t errlen) {
  for (size_t p = 0; wordnet_parts[p]; p++) {
    wl_reader r;
    if (!open_wordnet(&r, "corpus", "\"wordnet:glosses\"", wordnet_dir, wordnet_parts[p], err,
                      errlen))
      return false;
    char *line;
    size_t len;
    bool failed = false;
    while ((line = wl_reader_next(&r, &len, &failed))) {
      if (!is_synset_line(line)) continue;
      const char *bar = strstr(line, " | ");
      if (!bar) continue;
      bar += 3;
      if (!add_sentence(b, bar, len - (size_t)(bar - line))) break;
    }
    bool ok = !failed && !b->nomem;
    if (failed) wl_reader_error(&r, err, errlen, "cannot read it");
    if (b->nomem) nomem(err, errlen, "corpus");
    wl_reader_close(&r);
    if (!ok) return false;
  }
  return true;
}

/* ------------------------------------------------------------ pruning */

typedef struct {
  uint64_t count;
  uint32_t id;
} counted; /* qsort has no context: each entry carries its count */

static int by_count_then_id(const void *x, const void *y) {
  const counted *a = x, *b = y;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* Keeps words seen min_count times, renumbered by frequency, and the tokens
 * and sentences that remain. */
static bool prune(builder *b, w2v_corpus *c, uint64_t min_count) {
  uint32_t raw = b->dict.count, kept = 0;
  counted *by_count = malloc((raw ? raw : 1) * sizeof *by_count);
  uint32_t *order = malloc((raw ? raw : 1) * sizeof *order);
  if (!order || !by_count) {
    free(order);
    free(by_count);
    return false;
  }
  for (uint32_t id = 0; id < raw; id++)
    if (b->counts[id] >= min_count) by_count[kept++] = (counted){b->counts[id], id};
  qsort(by_count, kept, sizeof *by_count, by_count_then_id);
  for (uint32_t r = 0; r < kept; r++) order[r] = by_count[r].id;
  free(by_count);
  c->counts = malloc((kept ? kept : 1) * sizeof *c->counts);
  bool ok = c->counts != NULL;
  for (uint32_t r = 0; ok && r < kept; r++) {
    const char *name = b->dict.names[order[r]];
    ok = wl_dict_add(&c->vocab, name, strlen(name), NULL) == r;
    c->counts[r] = b->counts[order[r]];
  }
  /* Raw id -> rank, reusing the counts array (no longer needed). */
  for (uint32_t id = 0; ok && id < raw; id++) b->counts[id] = UINT64_MAX;
  for (uint32_t r = 0; ok && r < kept; r++) b->counts[order[r]] = r;
  free(order);
  if (!ok) return false;
  uint64_t n = 0, sentences = 0;
  b->starts[b->n_sentences] = b->n_tokens;
  for (uint64_t s = 0; s < b->n_sentences; s++) {
    uint64_t first = n;
    for (uint64_t t = b->starts[s]; t < b->starts[s + 1]; t++) {
      uint64_t id = b->counts[b->tokens[t]];
      if (id != UINT64_MAX) b->tokens[n++] = (uint32_t)id;
    }
    if (n > first) b->starts[sentences++] = first;
  }
  b->starts[sentences] = n;
  c->raw_tokens = b->n_tokens;
  c->raw_words = raw;
  c->n_tokens = n;
  c->n_sentences = sentences;
  uint32_t *tokens = realloc(b->tokens, (n ? n : 1) * sizeof *tokens);
  uint64_t *starts = realloc(b->starts, (sentences + 1) * sizeof *starts);
  c->tokens = tokens ? tokens : b->tokens;
  c->sentences = starts ? starts : b->starts;
  b->tokens = NULL;
  b->starts = NULL;
  return true;
}

bool w2v_corpus_load(w2v_corpus *c, const wl_context *ctx, const char *corpus,
                     uint64_t min_count, const char *wordnet_dir, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  builder b = {0};
  char *path = NULL;
  bool wordnet = strcmp(corpus, "wordnet:glosses") == 0;
  bool ok = wordnet ? read_glosses(&b, wordnet_dir, err, errlen)
                    : read_text(&b, ctx, corpus, &path, err, errlen);
  const char *name = wordnet ? corpus : path;
  if (ok && b.n_tokens == 0) {
    snprintf(err, errlen, "corpus: %s: empty: expected text, found no words", name);
    ok = false;
  }
  if (ok && !(ok = prune(&b, c, min_count ? min_count : 1))) nomem(err, errlen, "corpus");
  if (ok && c->vocab.count == 0) {
    snprintf(err, errlen,
             "corpus: %s: no word occurs min_count (%llu) times (%llu words, %llu distinct)",
             name, (unsigned long long)min_count, (unsigned long long)c->raw_tokens,
             (unsigned long long)c->raw_words);
    ok = false;
  }
  builder_free(&b);
  free(path);
  if (!ok) w2v_corpus_free(c);
  return ok;
}

void w2v_corpus_free(w2v_corpus *c) {
  free(c->tokens);
  free(c->sentences);
  free(c->counts);
  wl_dict_free(&c->vocab);
  memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------ quality files */

/* Splits line into at most max whitespace-separated fields (in place);
 * returns how many there are (max + 1 when there are more). */
static size_t split_fields(char *line, char **fields, size_t max) {
  size_t n = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return n;
    if (n == max) return max + 1;
    fields[n++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (*p) *p++ = '\0';
  }
}

static bool blank(const char *line) {
  while (*line == ' ' || *line == '\t') line++;
  return !*line;
}

static uint32_t find_word(const w2v_corpus *c, char *word) {
  size_t n = strlen(word);
  ascii_lower(word, n);
  return wl_dict_find(&c->vocab, word, n);
}

static bool parse_score(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* Whether the line's last whitespace-separated field is a number. */
static bool last_field_is_number(const char *line) {
  size_t end = strlen(line);
  while (end && (line[end - 1] == ' ' || line[end - 1] == '\t')) end--;
  size_t start = end;
  while (start && line[start - 1] != ' ' && line[start - 1] != '\t') start--;
  char buf[64];
  if (end - start >= sizeof buf) return false;
  memcpy(buf, line + start, end - start);
  buf[end - start] = '\0';
  double v;
  return parse_score(buf, &v);
}

static bool push_pair(w2v_similarity *s, size_t *cap, uint32_t a, uint32_t b, double score) {
  if (s->n == *cap) {
    size_t n = *cap ? *cap * 2 : 256;
    w2v_pair *p = realloc(s->pairs, n * sizeof *p);
    if (!p) return false;
    s->pairs = p;
    *cap = n;
  }
  s->pairs[s->n++] = (w2v_pair){a, b, score};
  return true;
}

static bool read_similarity(w2v_similarity *s, const wl_context *ctx, const char *file,
                            const w2v_corpus *c, char *err, size_t errlen) {
  wl_reader r;
  if (!wl_reader_open(&r, ctx, "similarity", file, err, errlen)) return false;
  size_t cap = 0;
  uint64_t lines = 0; /* pair lines, the header excepted */
  bool ok = true, failed = false, first = true;
  char *line;
  while (ok && (line = wl_reader_next(&r, NULL, &failed))) {
    if (blank(line) || line[0] == '#') continue;
    if (first && !last_field_is_number(line)) { /* a header: "Word 1  Word 2  Human (mean)" */
      first = false;
      continue;
    }
    first = false;
    char *f[3];
    size_t n = split_fields(line, f, 3);
    double score;
    if (n != 3) {
      ok = wl_reader_error(&r, err, errlen, "expected 3 columns (w1 w2 score), found %s",
                           n > 3 ? "more" : n == 2 ? "2" : "1");
    } else if (!parse_score(f[2], &score)) {
      ok = wl_reader_error(&r, err, errlen, "score: expected a number, found \"%.40s\"", f[2]);
    } else {
      lines++;
      uint32_t a = find_word(c, f[0]), b = find_word(c, f[1]);
      if (a == UINT32_MAX || b == UINT32_MAX)
        s->skipped++;
      else if (!push_pair(s, &cap, a, b, score))
        ok = nomem(err, errlen, "similarity");
    }
  }
  if (ok && failed) ok = wl_reader_error(&r, err, errlen, "cannot read it");
  if (ok && lines == 0)
    ok = wl_reader_error(&r, err, errlen, "empty: expected lines \"w1 w2 score\", found none");
  if (ok && s->n < 2)
    ok = wl_reader_error(&r, err, errlen,
                         "only %zu of %llu pairs have both words in the vocabulary; "
                         "Spearman's rho needs 2",
                         s->n, (unsigned long long)lines);
  wl_reader_close(&r);
  return ok;
}

/* ------------------------------------------------- WordNet's synonyms */

/* The synonym sets' words, each synset's in-vocabulary single words as
 * sorted pairs (a < b). */
typedef struct {
  uint64_t *pairs; /* a << 32 | b */
  uint64_t n, cap;
} synonyms;

static bool one_word(void *ctx, const char *word, size_t len) {
  (void)word, (void)len;
  (*(size_t *)ctx)++;
  return true;
}

/* The vocabulary id of a synset's word (lemma), or UINT32_MAX: lemmas of
 * several words (with '_') or with punctuation are not single words; an
 * adjective's marker "(a)", "(p)", "(ip)" is dropped. */
static uint32_t lemma_id(const w2v_corpus *c, char *lemma, char *buf) {
  char *paren = strchr(lemma, '(');
  if (paren) *paren = '\0';
  size_t len = strlen(lemma), tokens = 0;
  w2v_tokenize(lemma, len, buf, one_word, &tokens);
  if (tokens != 1 || is_separator((unsigned char)lemma[0]) ||
      is_separator((unsigned char)lemma[len - 1]))
    return UINT32_MAX;
  return find_word(c, lemma);
}

static bool add_synset(synonyms *sy, const w2v_corpus *c, char *line) {
  char *save = NULL, *tok;
  tok = strtok_r(line, " ", &save); /* offset */
  if (tok) tok = strtok_r(NULL, " ", &save); /* lex_filenum */
  if (tok) tok = strtok_r(NULL, " ", &save); /* ss_type */
  if (tok) tok = strtok_r(NULL, " ", &save); /* w_cnt, hex */
  if (!tok) return true;
  unsigned long words = strtoul(tok, NULL, 16);
  uint32_t ids[64];
  size_t n = 0;
  char buf[256];
  for (unsigned long i = 0; i < words; i++) {
    char *lemma = strtok_r(NULL, " ", &save);
    if (!lemma || !strtok_r(NULL, " ", &save)) break; /* lex_id */
    if (strlen(lemma) >= sizeof buf) continue;
    uint32_t id = lemma_id(c, lemma, buf);
    bool seen = id == UINT32_MAX;
    for (size_t j = 0; !seen && j < n; j++) seen = ids[j] == id;
    if (!seen && n < sizeof ids / sizeof ids[0]) ids[n++] = id;
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t j = i + 1; j < n; j++) {
      if (!grow_to((void **)&sy->pairs, &sy->cap, sy->n + 1, sizeof *sy->pairs)) return false;
      uint32_t a = ids[i] < ids[j] ? ids[i] : ids[j], b = ids[i] ^ ids[j] ^ a;
      sy->pairs[sy->n++] = (uint64_t)a << 32 | b;
    }
  }
  return true;
}

static int by_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

static bool is_synonym(const synonyms *sy, uint32_t a, uint32_t b) {
  uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
  return bsearch(&key, sy->pairs, sy->n, sizeof key, by_u64) != NULL;
}

#define SYNONYM_SEED 0x73796e6f6e796dULL /* "synonym": fixed, never the run's */

/* n pairs of synonyms (score 1) drawn without replacement from all the
 * synonym pairs of the vocabulary, and as many pairs of their words that
 * share no synset (score 0), both with a fixed seed. */
static bool build_synonyms(w2v_similarity *s, const w2v_corpus *c, uint64_t n,
                           const char *wordnet_dir, char *err, size_t errlen) {
  synonyms sy = {0};
  gsl_rng *rng = NULL;
  bool ok = true;
  for (size_t p = 0; ok && wordnet_parts[p]; p++) {
    wl_reader r;
    if (!(ok = open_wordnet(&r, "similarity", "\"wordnet:synonyms\"", wordnet_dir,
                            wordnet_parts[p], err, errlen)))
      break;
    char *line;
    bool failed = false;
    while (ok && (line = wl_reader_next(&r, NULL, &failed)))
      if (is_synset_line(line) && !add_synset(&sy, c, line)) ok = nomem(err, errlen, "similarity");
    if (ok && failed) ok = wl_reader_error(&r, err, errlen, "cannot read it");
    wl_reader_close(&r);
  }
  if (ok) {
    qsort(sy.pairs, sy.n, sizeof *sy.pairs, by_u64);
    uint64_t u = 0;
    for (uint64_t i = 0; i < sy.n; i++)
      if (!u || sy.pairs[i] != sy.pairs[u - 1]) sy.pairs[u++] = sy.pairs[i];
    sy.n = u;
    if (sy.n == 0) {
      snprintf(err, errlen, "similarity: \"wordnet:synonyms\": no two words of the "
                            "vocabulary share a synset");
      ok = false;
    }
  }
  if (ok) ok = (rng = wl_rng_new(SYNONYM_SEED, 0)) != NULL;
  size_t cap = 0;
  uint64_t take = ok ? (n < sy.n ? n : sy.n) : 0;
  /* Partial Fisher-Yates on a copy keeps the synonym set sorted for lookups. */
  uint64_t *pick = ok ? malloc((sy.n ? sy.n : 1) * sizeof *pick) : NULL;
  if (ok && !pick) ok = false;
  if (ok) memcpy(pick, sy.pairs, sy.n * sizeof *pick);
  for (uint64_t i = 0; ok && i < take; i++) {
    uint64_t j = i + (uint64_t)(gsl_rng_uniform(rng) * (double)(sy.n - i));
    if (j >= sy.n) j = sy.n - 1;
    uint64_t t = pick[i];
    pick[i] = pick[j];
    pick[j] = t;
    ok = push_pair(s, &cap, (uint32_t)(pick[i] >> 32), (uint32_t)pick[i], 1.0);
  }
  /* Each non-synonym pair takes the first word of synonym pair i and the
   * second of another chosen pair: both kinds then have the same words at
   * the same frequencies, so a ranking by frequency alone scores 0. */
  for (uint64_t i = 0, tries = 0; ok && i < take && take > 1 && tries < 100 * take; tries++) {
    uint64_t j = gsl_rng_uniform_int(rng, (unsigned long)take);
    uint32_t a = (uint32_t)(pick[i] >> 32), b = (uint32_t)pick[j];
    if (j == i || a == b || is_synonym(&sy, a, b)) continue;
    ok = push_pair(s, &cap, a, b, 0.0);
    i++;
  }
  if (!ok && !err[0]) nomem(err, errlen, "similarity");
  free(pick);
  if (rng) gsl_rng_free(rng);
  free(sy.pairs);
  return ok;
}

bool w2v_similarity_load(w2v_similarity *s, const wl_context *ctx, const char *file,
                         const w2v_corpus *c, uint64_t n_synonyms, const char *wordnet_dir,
                         char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  if (errlen) err[0] = '\0';
  bool ok = strcmp(file, "wordnet:synonyms") == 0
                ? build_synonyms(s, c, n_synonyms, wordnet_dir, err, errlen)
                : read_similarity(s, ctx, file, c, err, errlen);
  if (!ok) {
    free(s->pairs);
    memset(s, 0, sizeof *s);
  }
  return ok;
}

/* ----------------------------------------------------------- analogies */

bool w2v_analogy_load(w2v_analogy *a, const wl_context *ctx, const char *file,
                      const w2v_corpus *c, uint32_t vocab, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  wl_reader r;
  if (!wl_reader_open(&r, ctx, "analogy", file, err, errlen)) return false;
  size_t cap = 0;
  uint64_t lines = 0;
  bool ok = true, failed = false;
  char *line;
  while (ok && (line = wl_reader_next(&r, NULL, &failed))) {
    if (blank(line) || line[0] == ':') continue;
    char *f[4];
    size_t n = split_fields(line, f, 4);
    if (n != 4) {
      ok = wl_reader_error(&r, err, errlen, "expected 4 words (a b c d), found %s",
                           n > 4 ? "more" : n == 3 ? "3" : n == 2 ? "2" : "1");
      break;
    }
    lines++;
    uint32_t q[4];
    bool known = true;
    for (size_t i = 0; i < 4; i++) {
      q[i] = find_word(c, f[i]);
      known = known && q[i] < vocab;
    }
    if (!known) {
      a->skipped++;
      continue;
    }
    if (a->n == cap) {
      size_t m = cap ? cap * 2 : 256;
      uint32_t(*p)[4] = realloc(a->q, m * sizeof *p);
      if (!p) {
        ok = nomem(err, errlen, "analogy");
        break;
      }
      a->q = p;
      cap = m;
    }
    memcpy(a->q[a->n++], q, sizeof q);
  }
  if (ok && failed) ok = wl_reader_error(&r, err, errlen, "cannot read it");
  if (ok && lines == 0)
    ok = wl_reader_error(&r, err, errlen, "empty: expected lines \"a b c d\", found none");
  if (ok && a->n == 0)
    ok = wl_reader_error(&r, err, errlen,
                         "none of the %llu questions has its 4 words among the %u most "
                         "frequent words (analogy_vocab)",
                         (unsigned long long)lines, (unsigned)vocab);
  wl_reader_close(&r);
  if (!ok) {
    free(a->q);
    memset(a, 0, sizeof *a);
  }
  return ok;
}

/* ------------------------------------------------------------ Spearman */

typedef struct {
  double v;
  size_t i;
} valued; /* qsort has no context: each entry carries its value */

static int by_value(const void *x, const void *y) {
  const valued *a = x, *b = y;
  if (a->v != b->v) return a->v < b->v ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

/* Ranks 1..n of v (no NaN), ties averaged, into r. */
static bool ranks(const double *v, size_t n, double *r) {
  valued *idx = malloc(n * sizeof *idx);
  if (!idx) return false;
  for (size_t i = 0; i < n; i++) idx[i] = (valued){v[i], i};
  qsort(idx, n, sizeof *idx, by_value);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && idx[j].v == idx[i].v) j++;
    double avg = (double)(i + j + 1) / 2.0; /* ranks i+1 .. j */
    for (size_t k = i; k < j; k++) r[idx[k].i] = avg;
    i = j;
  }
  free(idx);
  return true;
}

double w2v_spearman(const double *x, const double *y, size_t n, bool *ok) {
  *ok = true;
  if (n < 2) return 0;
  for (size_t i = 0; i < n; i++) /* a diverged model has no rank order */
    if (isnan(x[i]) || isnan(y[i])) return NAN;
  double *rx = malloc(2 * n * sizeof *rx);
  if (!rx || !ranks(x, n, rx) || !ranks(y, n, rx + n)) {
    free(rx);
    *ok = false;
    return 0;
  }
  const double *ry = rx + n;
  double mean = (double)(n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++) {
    double dx = rx[i] - mean, dy = ry[i] - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  free(rx);
  if (sxx == 0 || syy == 0) return 0;
  return sxy / sqrt(sxx * syy);
}
