/*
 * The `w2v` workload's parts (workloads/w2v*.c) and what its tests reach:
 * the corpus (tokens as word ids, sentences, the vocabulary ranked by
 * frequency), the quality sets (similarity pairs, analogy questions), and
 * the SGNS math of one step. Nothing outside workloads/ includes this, tests
 * excepted.
 */
#ifndef PSLAB_WORKLOADS_W2V_H
#define PSLAB_WORKLOADS_W2V_H

#include "workloads/internal.h"

/* Where Debian's wordnet-base puts the database. */
#define W2V_WORDNET_DIR "/usr/share/wordnet"

/* ------------------------------------------------------------- corpus */

/* A tokenized corpus after min_count: word ids are ranks by frequency (0 is
 * the most frequent; ties by first appearance), so the `analogy_vocab` most
 * frequent words are ids 0..analogy_vocab-1. Read-only once built. */
typedef struct {
  uint32_t *tokens;     /* n_tokens word ids, rare words removed */
  uint64_t n_tokens;
  uint64_t *sentences;  /* n_sentences + 1 starts into tokens (last: n_tokens) */
  uint64_t n_sentences;
  wl_dict vocab;        /* names by id (inserted in rank order) */
  uint64_t *counts;     /* per id: occurrences in the corpus */
  uint64_t raw_tokens;  /* tokens before min_count */
  uint64_t raw_words;   /* distinct words before min_count */
} w2v_corpus;

/* Calls fn for each token of text[0..len): runs of bytes that are not ASCII
 * whitespace, control characters or ASCII punctuation, lower-cased (ASCII
 * only; bytes >= 0x80 are part of words), into buf (room for len bytes).
 * false when fn returns false. */
bool w2v_tokenize(const char *text, size_t len, char *buf,
                  bool (*fn)(void *ctx, const char *word, size_t len), void *ctx);

/* Reads `corpus` (a file, each line a sentence, or "wordnet:glosses": the
 * glosses of WordNet's synsets in wordnet_dir, each a sentence) and keeps
 * words seen at least min_count times. false with "corpus: ..." in err (an
 * empty corpus, no word left after min_count, a directory, WordNet
 * missing). */
bool w2v_corpus_load(w2v_corpus *c, const wl_context *ctx, const char *corpus,
                     uint64_t min_count, const char *wordnet_dir, char *err, size_t errlen);
void w2v_corpus_free(w2v_corpus *c);

/* ------------------------------------------------------- quality sets */

typedef struct {
  uint32_t a, b;  /* word ids */
  double score;
} w2v_pair;

typedef struct {
  w2v_pair *pairs;
  size_t n;
  uint64_t skipped; /* pairs with a word outside the vocabulary */
} w2v_similarity;

/* Reads `w1 w2 score` lines (tabs or spaces; '#' comments and blank lines
 * skipped; an optional header line first, whose last field is not a
 * number), or builds "wordnet:synonyms" from WordNet in wordnet_dir
 * (n_synonyms pairs of words sharing a synset, score 1, and as many pairs of
 * the same words sharing none, score 0). false with "similarity: ..." in
 * err. */
bool w2v_similarity_load(w2v_similarity *s, const wl_context *ctx, const char *file,
                         const w2v_corpus *c, uint64_t n_synonyms, const char *wordnet_dir,
                         char *err, size_t errlen);

typedef struct {
  uint32_t (*q)[4]; /* a b c d: word ids below the analogy vocabulary */
  size_t n;
  uint64_t skipped; /* questions with a word outside it */
} w2v_analogy;

/* Reads `a b c d` lines (':' lines are section headers; blank lines
 * skipped), keeping questions whose four words are among the `vocab` most
 * frequent. false with "analogy: ..." in err. */
bool w2v_analogy_load(w2v_analogy *a, const wl_context *ctx, const char *file,
                      const w2v_corpus *c, uint32_t vocab, char *err, size_t errlen);

/* Spearman's rank correlation of x and y (n of them): Pearson's correlation
 * of their ranks, ties given their average rank; 0 when either has no
 * spread or n < 2, and 0 with *ok false on no memory. */
double w2v_spearman(const double *x, const double *y, size_t n, bool *ok);

/* --------------------------------------------------------------- math */

/* One step's skip-gram with negative sampling, on pulled values: items[0]
 * is the step's index in the worker's run; items[1 + p] is pair p: the read
 * index of the input vector it trains (low 32 bits: the context's) and of
 * the output vector it predicts (high 32 bits: the center's);
 * samples[p * neg .. + neg] are its negatives (one equal to the predicted
 * word is skipped, as word2vec does).
 * Deltas are -lr times the gradients of the logistic losses, all taken at
 * the pulled values; loss and examples (pairs) are added to io. */
void w2v_sgns(const wl_step *st, wl_math_io *io, uint32_t dim, uint32_t vocab, uint32_t neg,
              float lr);

#endif
