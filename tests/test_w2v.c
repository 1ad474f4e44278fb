/*
 * The w2v workload: the tokenizer, the vocabulary after min_count, the
 * loaders' messages, Spearman's rho with ties, the SGNS gradient against
 * finite differences, an AdaGrad step by hand (the optimizer field), the steps (chunks, windows, sentences, samples,
 * subsampling's gaps closed), the 3CosAdd evaluation, WordNet's corpus and
 * similarity set when installed, and learning: a corpus of three topics
 * trained through wl_drive on an in-process node with the naive sampler,
 * whose loss falls and whose embeddings come to rank same-topic pairs above
 * cross-topic ones.
 */
#include "tests/harness.h"
#include "tests/unit.h"
#include "workloads/w2v.h"

#include "policies/policy.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- helpers */

/* Creates a workload from single-quoted JSON with files taken from dir;
 * NULL with the message in err. */
static wl_workload *make(const char *json, const char *dir, uint32_t nodes, char *err,
                         size_t errlen) {
  cJSON *j = unit_json(json);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  wl_context ctx = {.nodes = nodes, .workers_per_node = 1, .base_dir = dir};
  err[0] = '\0';
  wl_workload *wl = wl_create(j, &ctx, err, errlen);
  cJSON_Delete(j);
  return wl;
}

static wl_workload *make_ok(const char *json, const char *dir, uint32_t nodes) {
  char err[512];
  wl_workload *wl = make(json, dir, nodes, err, sizeof err);
  if (!wl) fprintf(stderr, "unexpected error: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  return wl;
}

/* The error creating json gives contains want. */
static void expect_error(const char *json, const char *dir, const char *want) {
  char err[512];
  wl_workload *wl = make(json, dir, 1, err, sizeof err);
  CU_ASSERT_PTR_NULL(wl);
  wl_free(wl);
  if (!unit_contains(err, want)) fprintf(stderr, "\nwanted \"%s\" in \"%s\"\n", want, err);
  CU_ASSERT_TRUE(unit_contains(err, want));
}

/* ----------------------------------------------------------- tokenizer */

typedef struct {
  char words[16][32];
  size_t n;
} word_list;

static bool collect(void *ctx, const char *word, size_t len) {
  word_list *l = ctx;
  CU_ASSERT_FATAL(l->n < 16 && len < 32);
  memcpy(l->words[l->n], word, len);
  l->words[l->n++][len] = '\0';
  return true;
}

static void test_tokenizer(void) {
  const char *text = "Hello, World! it's \xc3\x9cn\xc3\xaf" "code\xe2\x80\x94" "dash "
                     "x_y 3.14\tTAB(paren)--end";
  char buf[128];
  word_list l = {0};
  CU_ASSERT_TRUE(w2v_tokenize(text, strlen(text), buf, collect, &l));
  const char *want[] = {"hello", "world", "it", "s",
                        "\xc3\x9cn\xc3\xaf" "code\xe2\x80\x94" "dash", /* UTF-8 kept, uncased */
                        "x", "y", "3", "14", "tab", "paren", "end"};
  CU_ASSERT_EQUAL_FATAL(l.n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < l.n; i++) CU_ASSERT_STRING_EQUAL(l.words[i], want[i]);
  word_list none = {0};
  CU_ASSERT_TRUE(w2v_tokenize(" ,.;\t\r ", 7, buf, collect, &none));
  CU_ASSERT_EQUAL(none.n, 0);
}

/* ------------------------------------------------------------ vocabulary */

static void test_min_count_and_vocabulary(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "c.txt", "a b C a, b a\n\n...\nB d e\ne\n");
  w2v_corpus c;
  char err[512];
  wl_context ctx = {.nodes = 1, .workers_per_node = 1, .base_dir = dir};
  CU_ASSERT_TRUE_FATAL(w2v_corpus_load(&c, &ctx, "c.txt", 2, dir, err, sizeof err));
  /* a: 3, b: 3 (ties: first seen first), c: 1, d: 1, e: 2 */
  CU_ASSERT_EQUAL(c.vocab.count, 3);
  CU_ASSERT_EQUAL(c.raw_words, 5);
  CU_ASSERT_EQUAL(c.raw_tokens, 10);
  CU_ASSERT_EQUAL(wl_dict_find(&c.vocab, "a", 1), 0);
  CU_ASSERT_EQUAL(wl_dict_find(&c.vocab, "b", 1), 1);
  CU_ASSERT_EQUAL(wl_dict_find(&c.vocab, "e", 1), 2);
  CU_ASSERT_EQUAL(wl_dict_find(&c.vocab, "c", 1), UINT32_MAX);
  CU_ASSERT_EQUAL(c.counts[0], 3);
  CU_ASSERT_EQUAL(c.counts[2], 2);
  /* Sentences a b a b a | b e | e: rare words leave no trace. */
  uint32_t want[] = {0, 1, 0, 1, 0, 1, 2, 2};
  CU_ASSERT_EQUAL_FATAL(c.n_tokens, 8);
  for (size_t i = 0; i < 8; i++) CU_ASSERT_EQUAL(c.tokens[i], want[i]);
  CU_ASSERT_EQUAL_FATAL(c.n_sentences, 3);
  CU_ASSERT_EQUAL(c.sentences[0], 0);
  CU_ASSERT_EQUAL(c.sentences[1], 5);
  CU_ASSERT_EQUAL(c.sentences[2], 7);
  CU_ASSERT_EQUAL(c.sentences[3], 8);
  w2v_corpus_free(&c);

  /* Through the workload: two tables of V keys each, dim floats. */
  wl_workload *wl = make_ok("{'type':'w2v','corpus':'c.txt','min_count':2,'dim':7}", dir, 1);
  ps_layout layout;
  memset(&layout, 0, sizeof layout);
  wl_tables(wl, &layout);
  CU_ASSERT_EQUAL(layout.num_tables, 2);
  CU_ASSERT_EQUAL(layout.tables[0].first, 0);
  CU_ASSERT_EQUAL(layout.tables[0].count, 3);
  CU_ASSERT_EQUAL(layout.tables[1].first, 3);
  CU_ASSERT_EQUAL(layout.tables[1].value_len, 7);
  /* Samples: the output table, unigram^0.75. */
  ps_key first;
  uint64_t count;
  double *weights;
  CU_ASSERT_TRUE(wl_samples(wl));
  CU_ASSERT_EQUAL_FATAL(wl_sample_distribution(wl, &first, &count, &weights), PS_OK);
  CU_ASSERT_EQUAL(first, 3);
  CU_ASSERT_EQUAL(count, 3);
  CU_ASSERT_DOUBLE_EQUAL(weights[0], pow(3, 0.75), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(weights[2], pow(2, 0.75), 1e-12);
  free(weights);
  /* Hot keys: input then output vector of the most frequent words. */
  ps_key hot[8];
  CU_ASSERT_EQUAL(wl_hot_keys(wl, 8, hot), 6);
  ps_key want_hot[] = {0, 3, 1, 4, 2, 5};
  for (size_t i = 0; i < 6; i++) CU_ASSERT_EQUAL(hot[i], want_hot[i]);
  /* Initial values: inputs in [-0.5/dim, 0.5/dim), outputs 0. */
  float v[7] = {0};
  wl_add_initial(wl, 1, v, 7);
  bool nonzero = false;
  for (int i = 0; i < 7; i++) {
    CU_ASSERT(fabsf(v[i]) <= 0.5f / 7);
    nonzero = nonzero || v[i] != 0;
  }
  CU_ASSERT_TRUE(nonzero);
  float o[7] = {0};
  wl_add_initial(wl, 4, o, 7);
  for (int i = 0; i < 7; i++) CU_ASSERT_EQUAL(o[i], 0);
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* --------------------------------------------------------------- loaders */

static void test_loader_errors(void) {
  char *dir = unit_temp_dir();
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
  unit_write(dir, "empty.txt", " .,;\n\n!!\n");
  unit_write(dir, "c.txt", "alpha beta gamma alpha beta\nbeta gamma alpha\n");
  unit_write(dir, "short.txt", "# a comment\nalpha beta 1\nbeta gamma\n");
  unit_write(dir, "nan.txt", "w1 w2 score\nalpha beta 1\nbeta gamma high\n");
  unit_write(dir, "one.txt", "alpha beta 1\nalpha zeta 2\n");
  unit_write(dir, "nothing.txt", "# only a comment\n\n");
  unit_write(dir, "ana.txt", ": section\nalpha beta gamma alpha\nalpha beta\n");

  expect_error("{'type':'w2v'}", dir, "corpus: expected a non-empty string, found nothing");
  expect_error("{'type':'w2v','corpus':'empty.txt'}", dir,
               "empty.txt: empty: expected text, found no words");
  expect_error("{'type':'w2v','corpus':'sub'}", dir, "/sub: expected a file, found a directory");
  expect_error("{'type':'w2v','corpus':'missing.txt'}", dir, "corpus: ");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':4}", dir,
               "no word occurs min_count (4) times (8 words, 3 distinct)");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'similarity':'short.txt'}", dir,
               "short.txt:3: expected 3 columns (w1 w2 score), found 2");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'similarity':'nan.txt'}", dir,
               "nan.txt:3: score: expected a number, found \"high\"");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'similarity':'one.txt'}", dir,
               "only 1 of 2 pairs have both words in the vocabulary");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'similarity':'nothing.txt'}", dir,
               "similarity: ");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'similarity':'sub'}", dir,
               "similarity: ");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'analogy':'ana.txt'}", dir,
               "ana.txt:3: expected 4 words (a b c d), found 2");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'analogy':'ana.txt',"
               "'similarity':'one.txt'}",
               dir, "analogy: expected nothing when similarity is set");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'wordnet_dir':'/x'}", dir,
               "wordnet_dir: expected nothing unless corpus or similarity reads WordNet");
  expect_error("{'type':'w2v','corpus':'wordnet:glosses','wordnet_dir':'no-such-dir'}", dir,
               "install Debian's wordnet-base");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'similarity_pairs':5}", dir,
               "similarity_pairs: expected nothing unless similarity is \"wordnet:synonyms\"");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'window':1000,'batch':20000}", dir,
               "batch: expected a batch whose keys");
  expect_error("{'type':'w2v','corpus':'c.txt','min_count':1,'target_quality':0.5}", dir,
               "target_quality: expected nothing");
  expect_error("{'type':'w2v','corpus':'c.txt','dimension':5}", dir,
               "dimension: expected one of the fields");
  expect_error("{'type':'w2v','corpus':'c.txt','lr_schedule':'cosine'}", dir,
               "lr_schedule: expected one of \"linear\", \"constant\"");

  /* No WordNet where it is looked for: say what to install. */
  w2v_corpus c;
  char err[512];
  CU_ASSERT_FALSE(w2v_corpus_load(&c, NULL, "wordnet:glosses", 5, dir, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "corpus: \"wordnet:glosses\" reads WordNet's database"));
  CU_ASSERT_TRUE(unit_contains(err, "install Debian's wordnet-base"));
  wl_context ctx = {.nodes = 1, .workers_per_node = 1, .base_dir = dir};
  CU_ASSERT_TRUE_FATAL(w2v_corpus_load(&c, &ctx, "c.txt", 1, dir, err, sizeof err));
  w2v_similarity s;
  CU_ASSERT_FALSE(w2v_similarity_load(&s, &ctx, "wordnet:synonyms", &c, 10, dir, err,
                                      sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "similarity: \"wordnet:synonyms\" reads WordNet"));
  /* A header line is allowed, unknown words are skipped and counted. */
  unit_write(dir, "ok.txt", "Word 1\tWord 2\tHuman (mean)\nALPHA  beta 1.5\nbeta zeta 2\n"
                            "gamma\talpha -1e0\n");
  CU_ASSERT_TRUE_FATAL(w2v_similarity_load(&s, &ctx, "ok.txt", &c, 10, dir, err, sizeof err));
  CU_ASSERT_EQUAL(s.n, 2);
  CU_ASSERT_EQUAL(s.skipped, 1);
  CU_ASSERT_EQUAL(s.pairs[0].a, wl_dict_find(&c.vocab, "alpha", 5));
  CU_ASSERT_EQUAL(s.pairs[1].score, -1.0);
  free(s.pairs);
  w2v_corpus_free(&c);
  unit_remove_tree(dir);
  free(dir);
}

/* --------------------------------------------------------------- Spearman */

static void test_spearman(void) {
  bool ok;
  /* Ranks of x with a tie: 1, 2.5, 2.5, 4; of y: 1, 3, 2, 4. Sxy = 4.5,
   * Sxx = 4.5, Syy = 5: rho = 4.5 / sqrt(22.5). */
  double x[] = {1, 2, 2, 3}, y[] = {10, 30, 20, 40};
  CU_ASSERT_DOUBLE_EQUAL(w2v_spearman(x, y, 4, &ok), 4.5 / sqrt(22.5), 1e-12);
  CU_ASSERT_TRUE(ok);
  double rev[] = {4, 3, 2, 1}, inc[] = {-5, 0, 0.5, 100};
  CU_ASSERT_DOUBLE_EQUAL(w2v_spearman(rev, inc, 4, &ok), -1.0, 1e-12);
  double flat[] = {7, 7, 7, 7};
  CU_ASSERT_DOUBLE_EQUAL(w2v_spearman(flat, inc, 4, &ok), 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(w2v_spearman(x, y, 1, &ok), 0.0, 1e-12);
  double diverged[] = {1, NAN, 3, 4}; /* a NaN model has no rank order */
  CU_ASSERT_TRUE(isnan(w2v_spearman(diverged, inc, 4, &ok)));
  /* Binary scores (a similarity set of synonyms and non-synonyms). */
  double cos[] = {0.9, 0.1, 0.5, 0.3}, bin[] = {1, 0, 1, 0};
  /* ranks cos: 4, 1, 3, 2; bin: 3.5, 1.5, 3.5, 1.5 -> Sxy = 4, Sxx = 5, Syy = 4 */
  CU_ASSERT_DOUBLE_EQUAL(w2v_spearman(cos, bin, 4, &ok), 4.0 / sqrt(20.0), 1e-12);
}

/* ------------------------------------------------------ gradient check */

#define GC_DIM 5
#define GC_NEG 3

/* The SGNS loss of one pair: center in, context out, negatives n[0..2]. */
static double pair_loss(const float *in, const float *out, const float *neg, int skip) {
  double f = 0, loss;
  for (int i = 0; i < GC_DIM; i++) f += (double)in[i] * out[i];
  loss = log1p(exp(-f));
  for (int k = 0; k < GC_NEG; k++) {
    if (k == skip) continue;
    double g = 0;
    for (int i = 0; i < GC_DIM; i++) g += (double)in[i] * neg[k * GC_DIM + i];
    loss += log1p(exp(g));
  }
  return loss;
}

static void test_gradient(void) {
  /* Reads: the center's input vector (key 1), the context's output vector
   * (key V + 2 = 12); samples: keys 13, 12 (the context: skipped), 15. */
  const uint32_t V = 10;
  const float lr = 0.1f;
  ps_key reads[] = {1, 12};
  ps_key samples[] = {13, 12, 15};
  float vals[2 * GC_DIM], svals[GC_NEG * GC_DIM];
  uint64_t seed = 7;
  for (int i = 0; i < 2 * GC_DIM; i++) vals[i] = wl_initial_uniform(seed, 1, (uint32_t)i, 1.0f);
  for (int i = 0; i < GC_NEG * GC_DIM; i++)
    svals[i] = wl_initial_uniform(seed, 2, (uint32_t)i, 1.0f);
  size_t off[] = {0, GC_DIM}, soff[] = {0, GC_DIM, 2 * GC_DIM};
  uint64_t items[] = {0, 0 | (uint64_t)1 << 32};
  wl_step st = {.reads = reads, .n_reads = 2, .writes = reads, .n_writes = 2,
                .n_samples = GC_NEG, .items = items, .n_items = 2};
  float d[2 * GC_DIM] = {0}, sd[GC_NEG * GC_DIM] = {0};
  wl_math_io io = {.reads = vals, .read_off = off, .samples = samples, .sample_vals = svals,
                   .sample_off = soff, .n_samples = GC_NEG, .write_deltas = d,
                   .write_off = off, .sample_deltas = sd};
  w2v_sgns(&st, &io, GC_DIM, V, GC_NEG, lr);
  CU_ASSERT_DOUBLE_EQUAL(io.examples, 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(io.loss, pair_loss(vals, vals + GC_DIM, svals, 1), 1e-6);
  /* Central differences: delta = -lr * dL/dx for every float. */
  const double h = 1e-3;
  double worst = 0;
  float *all[] = {vals, vals + GC_DIM, svals, svals + GC_DIM, svals + 2 * GC_DIM};
  float *delta[] = {d, d + GC_DIM, sd, sd + GC_DIM, sd + 2 * GC_DIM};
  for (int v = 0; v < 5; v++)
    for (int i = 0; i < GC_DIM; i++) {
      float keep = all[v][i];
      all[v][i] = keep + (float)h;
      double up = pair_loss(vals, vals + GC_DIM, svals, 1);
      all[v][i] = keep - (float)h;
      double down = pair_loss(vals, vals + GC_DIM, svals, 1);
      all[v][i] = keep;
      double want = -lr * (up - down) / (2 * h);
      double diff = fabs(want - delta[v][i]);
      worst = diff > worst ? diff : worst;
      CU_ASSERT_DOUBLE_EQUAL(delta[v][i], want, 1e-4);
    }
  printf("\n  gradient check: largest |delta - (-lr * finite difference)| = %.2g\n", worst);
  /* The skipped negative (the context itself) gets no delta. */
  for (int i = 0; i < GC_DIM; i++) CU_ASSERT_EQUAL(sd[GC_DIM + i], 0);
}

/* --------------------------------------------------------------- AdaGrad */

/* One AdaGrad step by hand (optimizer "adagrad"): dim 2, neg 2, lr 0.1 (no
 * schedule), values [vector | accumulators]. Pairs (context 0 -> center 1)
 * and (context 2 -> center 3) over V = 4 words: reads out 1 (key 5), in 0,
 * out 3 (key 7), in 2; negatives 7 and 6 for the first pair, 6 and 6 for the
 * second. Input vectors lie along x (in0 = [1 0], in2 = [2 0]), output
 * vectors along y (out1 = [0 1], out3 = [0 2], out2 = [0 3]): every score
 * is 0 and sigma 1/2. Gradients of the loss: a pair's -1/2 out_c on its
 * context and -1/2 in on its center, a negative's +1/2 out_n and +1/2 in,
 * summed per key: in0 [0 2], in2 [0 2], out1 [-0.5 0], out3 [-1 0] as a
 * center + [0.5 0] as a negative = [-0.5 0], out2 [0.5 + 1 + 1, 0]. Each
 * key steps once, in its first slot: negative 7 adds to the read of key 7,
 * the second and third 6 to the first; those slots push 0. */
static void test_adagrad_step(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "c.txt", "a a a a b b b c c d\n");
  wl_workload *wl = make_ok("{'type':'w2v','corpus':'c.txt','min_count':1,'dim':2,'neg':2,"
                            "'window':1,'lr':0.1,'lr_schedule':'constant','subsample':0,"
                            "'optimizer':'adagrad'}", dir, 1);
  expect_error("{'type':'w2v','corpus':'c.txt','optimizer':'adagrd'}", dir,
               "optimizer: expected one of \"sgd\", \"adagrad\", found \"adagrd\" (did you "
               "mean \"adagrad\"?)");
  ps_layout layout = {0};
  wl_tables(wl, &layout);
  CU_ASSERT_EQUAL(layout.tables[0].value_len, 4);
  CU_ASSERT_EQUAL(layout.tables[1].value_len, 4);
  float init[4] = {0};
  wl_add_initial(wl, 0, init, 4); /* the vector only: accumulators start at 0 */
  CU_ASSERT(init[0] != 0 && init[1] != 0 && init[2] == 0 && init[3] == 0);

  ps_key reads[] = {5, 0, 7, 2}, samples[] = {7, 6, 6, 6};
  float vals[] = {0, 1, 0, 0, /**/ 1, 0, 0, 12, /**/ 0, 2, 0.75f, 0, /**/ 2, 0, 5, 0};
  float svals[] = {0, 2, 0.75f, 0, /**/ 0, 3, 0, 7, /**/ 0, 3, 0, 7, /**/ 0, 3, 0, 7};
  size_t off[] = {0, 4, 8, 12};
  uint64_t items[] = {0, 1 | (uint64_t)0 << 32, 3 | (uint64_t)2 << 32};
  wl_step st = {.reads = reads, .n_reads = 4, .writes = reads, .n_writes = 4, .n_samples = 4,
                .items = items, .n_items = 3};
  float d[16] = {0}, sd[16] = {0};
  wl_math_io io = {.reads = vals, .read_off = off, .samples = samples, .sample_vals = svals,
                   .sample_off = off, .n_samples = 4, .write_deltas = d, .write_off = off,
                   .sample_deltas = sd};
  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL_FATAL(wl_type_w2v.math(s->impl, &st, &io), PS_OK);
  CU_ASSERT_DOUBLE_EQUAL(io.loss, 6 * log(2), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(io.examples, 2, 0);
  /* acc + g^2: out1 [0.25 0], in0 [0 16], out3 [1 0], in2 [5 4], out2 [6.25 7] */
  const double want[] = {0.1, 0, 0.25, 0, /**/ 0, -0.05, 0, 4, /**/ 0.05, 0, 0.25, 0,
                         /**/ 0, -0.1, 0, 4};
  const double swant[] = {0, 0, 0, 0, /**/ -0.1, 0, 6.25, 0, /**/ 0, 0, 0, 0, /**/ 0, 0, 0, 0};
  for (size_t i = 0; i < 16; i++) {
    CU_ASSERT_DOUBLE_EQUAL(d[i], want[i], 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(sd[i], swant[i], 1e-6);
  }
  /* Saved vectors are the vectors, not their accumulators. */
  float table0[16] = {1, 2, 99, 99, /**/ 3, 4, 99, 99, /**/ 5, 6, 99, 99, /**/ 7, 8, 99, 99};
  const float *tables[] = {table0, table0};
  char err[256] = "";
  CU_ASSERT_EQUAL(wl_type_w2v.save(wl->impl, &layout, tables, dir, err, sizeof err), 0);
  char *text = unit_slurp(dir, "vectors.txt");
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_STRING_EQUAL(text, "4 2\na 1 2\nb 3 4\nc 5 6\nd 7 8\n");
  free(text);
  wl_stream_free(s);
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* ----------------------------------------------------------------- steps */

/* Steps: each worker walks its own chunk, every worker the same number of
 * steps per epoch; pairs stay within a sentence and the window; keys are
 * distinct; samples are pairs * neg; the same seed gives the same steps. */
static void test_steps(void) {
  char *dir = unit_temp_dir();
  /* 4 sentences of distinct-looking words, 53 tokens in all. */
  unit_write(dir, "c.txt",
             "a b c d e f g h i j k l m n o p q r s t\n"
             "a c e g i k m o q s\n"
             "b d f h j l n p r t a b c d e f g\n"
             "q r s t u v\n");
  wl_workload *wl = make_ok("{'type':'w2v','corpus':'c.txt','min_count':1,'window':2,"
                            "'batch':4,'neg':3,'subsample':0,'epochs':2,'dim':4}",
                            dir, 3);
  CU_ASSERT_EQUAL(wl_steps_per_epoch(wl), 5); /* ceil(ceil(53 / 3) / 4) */
  CU_ASSERT_EQUAL(wl_steps_per_worker(wl), 10);
  ps_layout layout;
  memset(&layout, 0, sizeof layout);
  wl_tables(wl, &layout);
  uint64_t V = layout.tables[0].count;
  uint64_t centers_total = 0;
  for (uint32_t r = 0; r < 3; r++) {
    wl_stream *s = wl_stream_new(wl, r, r, 42), *t = wl_stream_new(wl, r, r, 42);
    wl_step st, st2;
    uint64_t steps = 0;
    while (wl_next_step(s, &st)) {
      CU_ASSERT_TRUE_FATAL(wl_next_step(t, &st2));
      CU_ASSERT_EQUAL(st.n_items, st2.n_items);
      CU_ASSERT_EQUAL(st.n_reads, st2.n_reads);
      CU_ASSERT_TRUE(st.writes == st.reads && st.n_writes == st.n_reads);
      CU_ASSERT_EQUAL(st.items[0], steps);
      size_t pairs = st.n_items - 1;
      CU_ASSERT_EQUAL(st.n_samples, pairs * 3);
      CU_ASSERT_DOUBLE_EQUAL(st.flops, 6.0 * 4 * (double)pairs * 4, 1e-9);
      CU_ASSERT(pairs <= 4 * 2 * 2);
      for (size_t i = 0; i < st.n_reads; i++)
        for (size_t j = i + 1; j < st.n_reads; j++) CU_ASSERT_NOT_EQUAL(st.reads[i], st.reads[j]);
      for (size_t p = 0; p < pairs; p++) {
        uint32_t ci = (uint32_t)st.items[1 + p], oi = (uint32_t)(st.items[1 + p] >> 32);
        CU_ASSERT_FATAL(ci < st.n_reads && oi < st.n_reads);
        CU_ASSERT(st.reads[ci] < V);  /* an input vector */
        CU_ASSERT(st.reads[oi] >= V); /* an output vector */
        CU_ASSERT_EQUAL(st.items[1 + p], st2.items[1 + p]);
      }
      if (steps < 5) centers_total += pairs ? 1 : 0;
      steps++;
    }
    CU_ASSERT_FALSE(wl_next_step(t, &st2));
    CU_ASSERT_EQUAL(steps, 10);
    wl_stream_free(s);
    wl_stream_free(t);
  }
  CU_ASSERT(centers_total > 10);
  wl_free(wl);

  /* One worker, window 1, batch = the corpus: the pairs are exactly the
   * neighbours within each sentence (b is always 1). */
  unit_write(dir, "s.txt", "x y z\nw x\n");
  wl = make_ok("{'type':'w2v','corpus':'s.txt','min_count':1,'window':1,'batch':5,"
               "'subsample':0,'neg':1,'dim':2}", dir, 1);
  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  wl_step st;
  CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
  /* x y z | w x: pairs (x,y) (y,x) (y,z) (z,y) (w,x) (x,w): 6, none across */
  CU_ASSERT_EQUAL(st.n_items - 1, 6);
  CU_ASSERT_EQUAL(st.n_samples, 6);
  /* ids: x 0, y 1, z 2, w 3; V = 4 */
  bool z_w = false;
  for (size_t p = 0; p + 1 < st.n_items; p++) {
    ps_key c = st.reads[(uint32_t)st.items[1 + p]], o = st.reads[st.items[1 + p] >> 32] - 4;
    if ((c == 2 && o == 3) || (c == 3 && o == 2)) z_w = true;
  }
  CU_ASSERT_FALSE(z_w); /* z ends one sentence, w starts the next */
  CU_ASSERT_FALSE(wl_next_step(s, &st));
  wl_stream_free(s);
  wl_free(wl);

  /* Subsampling drops a frequent word's tokens about as word2vec says. */
  char big[40000];
  size_t n = 0;
  for (int i = 0; i < 4000; i++) n += (size_t)snprintf(big + n, sizeof big - n, "the %c ", 'a' + i % 26);
  big[n++] = '\n';
  big[n] = '\0';
  unit_write(dir, "f.txt", big);
  wl = make_ok("{'type':'w2v','corpus':'f.txt','min_count':1,'window':1,'batch':100,"
               "'subsample':0.01,'neg':0,'dim':2}", dir, 1);
  s = wl_stream_new(wl, 0, 0, 3);
  uint64_t the_centers = 0;
  while (wl_next_step(s, &st)) {
    for (size_t p = 0; p + 1 < st.n_items; p++)
      if (st.reads[st.items[1 + p] >> 32] == 27) the_centers++; /* V + "the": V = 27 */
  }
  /* "the": f = 4000 of T = 8000; t*T = 80: keep (sqrt(50) + 1) / 50 = 0.161;
   * as a center its pairs need a kept neighbour: 2 neighbours, each kept
   * with (sqrt(80/(80*... rare letters keep 1) -> about 2 pairs a center. */
  double kept = (sqrt(4000.0 / 80.0) + 1) * 80.0 / 4000.0;
  double want = 4000 * kept * 2;
  printf("  subsampling: 'the' made %llu pairs as a center, expected about %.0f\n",
         (unsigned long long)the_centers, want);
  CU_ASSERT(fabs((double)the_centers - want) < 0.15 * want);
  wl_stream_free(s);
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* The (center word, context word) pairs of every step of one worker's
 * stream, in order, into pairs (room for cap); their number. The center is
 * the word whose output vector a pair predicts, the context the one whose
 * input vector it trains (word2vec.c's and gensim's roles). */
static size_t stream_pairs(wl_workload *wl, uint64_t seed, uint32_t (*pairs)[2], size_t cap) {
  ps_layout layout;
  memset(&layout, 0, sizeof layout);
  wl_tables(wl, &layout);
  ps_key V = layout.tables[0].count;
  wl_stream *s = wl_stream_new(wl, 0, 0, seed);
  wl_step st;
  size_t n = 0;
  while (wl_next_step(s, &st))
    for (size_t p = 0; p + 1 < st.n_items; p++) {
      CU_ASSERT_FATAL(n < cap);
      pairs[n][0] = (uint32_t)(st.reads[st.items[1 + p] >> 32] - V); /* predicted */
      pairs[n++][1] = (uint32_t)st.reads[(uint32_t)st.items[1 + p]];     /* its input */
    }
  wl_stream_free(s);
  return n;
}

/* Subsampling closes gaps, as word2vec.c and gensim do: a center's window
 * counts kept tokens only. "the" (id 0) makes 1000 of the 1005 tokens and
 * subsampling keeps 2% of its tokens; the other words always stay (their
 * keep probability is above 1). With this seed no "the" of the first
 * sentence is kept, so the words a..e (ids 1..5) are neighbours. */
static void test_subsampling_gaps(void) {
  char *dir = unit_temp_dir();
  char text[8192];
  size_t len = (size_t)snprintf(text, sizeof text, "a the b the the c d the e\n");
  for (int i = 0; i < 996; i++) len += (size_t)snprintf(text + len, sizeof text - len, "the ");
  text[len - 1] = '\n';
  unit_write(dir, "gaps.txt", text);
  static uint32_t pairs[4096][2];
  /* window 1 (b is always 1): each kept word's nearest kept neighbours */
  wl_workload *wl = make_ok("{'type':'w2v','corpus':'gaps.txt','min_count':1,'window':1,"
                            "'batch':1005,'subsample':0.0004,'neg':0,'dim':2}", dir, 1);
  size_t n = stream_pairs(wl, 7, pairs, 4096), rare = 0;
  static const uint32_t want[][2] = {{1, 2}, {2, 1}, {2, 3}, {3, 2}, {3, 4},
                                     {4, 3}, {4, 5}, {5, 4}};
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT((pairs[i][0] == 0) == (pairs[i][1] == 0)); /* no kept "the" among a..e */
    if (pairs[i][0] == 0) continue;
    CU_ASSERT_FATAL(rare < 8);
    CU_ASSERT_EQUAL(pairs[i][0], want[rare][0]);
    CU_ASSERT_EQUAL(pairs[i][1], want[rare][1]);
    rare++;
  }
  CU_ASSERT_EQUAL(rare, 8);
  wl_free(wl);
  /* window 2: each center's contexts are its nearest kept word on each
   * side (b = 1) or its two nearest (b = 2), whatever lies between */
  wl = make_ok("{'type':'w2v','corpus':'gaps.txt','min_count':1,'window':2,"
               "'batch':1005,'subsample':0.0004,'neg':0,'dim':2}", dir, 1);
  n = stream_pairs(wl, 7, pairs, 4096);
  static const char *const b1[] = {"", "2", "13", "24", "35", "4"},
                           *const b2[] = {"", "23", "134", "1245", "235", "34"};
  char got[6][8] = {{0}};
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT((pairs[i][0] == 0) == (pairs[i][1] == 0));
    if (pairs[i][0] == 0) continue;
    size_t l = strlen(got[pairs[i][0]]);
    CU_ASSERT_FATAL(l < 7);
    got[pairs[i][0]][l] = (char)('0' + pairs[i][1]);
  }
  for (int c = 1; c <= 5; c++) {
    if (strcmp(got[c], b1[c]) && strcmp(got[c], b2[c]))
      fprintf(stderr, "\ncenter %d: contexts %s, wanted %s or %s\n", c, got[c], b1[c], b2[c]);
    CU_ASSERT(!strcmp(got[c], b1[c]) || !strcmp(got[c], b2[c]));
  }
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* ----------------------------------------------------------- evaluation */

/* 3CosAdd on hand-made vectors, split over two workers, and Spearman
 * through the type's eval. */
static void test_eval(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "c.txt", "king queen man woman apple\nking queen man woman\n");
  unit_write(dir, "q.txt", ": royals\nman king woman queen\nMAN WOMAN king queen\n"
                           "king queen man apple\nking queen nobody woman\n");
  wl_workload *wl = make_ok("{'type':'w2v','corpus':'c.txt','min_count':1,'dim':3,"
                            "'analogy':'q.txt','analogy_vocab':5}", dir, 2);
  wl_quality q;
  CU_ASSERT_TRUE_FATAL(wl_quality_info(wl, &q));
  CU_ASSERT_STRING_EQUAL(q.name, "analogy");
  CU_ASSERT_TRUE(q.higher_better);
  /* ids by frequency: king 0, queen 1, man 2, woman 3, apple 4. Vectors:
   * royalty on axis 0, gender on axis 1, fruit on axis 2. */
  float vec[5][3] = {{1, 1, 0}, {1, -1, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}};
  double num = 0, den = 0;
  for (uint32_t r = 0; r < 2; r++) {
    ps_key *keys;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, r, 2, &keys, &n), PS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 5); /* both have questions: all candidates */
    size_t off[5];
    float vals[15];
    for (size_t i = 0; i < 5; i++) {
      CU_ASSERT_EQUAL(keys[i], i);
      off[i] = 3 * i;
      memcpy(vals + 3 * i, vec[keys[i]], sizeof vec[0]);
    }
    wl_eval_in in = {.keys = keys, .n = n, .vals = vals, .off = off};
    double a, b;
    CU_ASSERT_EQUAL(wl->type->eval(wl->impl, r, 2, &in, &a, &b), PS_OK);
    num += a;
    den += b;
    free(keys);
  }
  /* 3 questions kept (nobody is unknown): man:king::woman:queen right,
   * man:woman::king:queen right, king:queen::man:apple wrong (woman is
   * nearest queen - king + man). */
  CU_ASSERT_DOUBLE_EQUAL(den, 3, 0);
  CU_ASSERT_DOUBLE_EQUAL(num, 2, 0);
  wl_free(wl);

  unit_write(dir, "sim.txt", "king queen 9\nman woman 8\nking apple 1\nqueen apple 0.5\n");
  wl = make_ok("{'type':'w2v','corpus':'c.txt','min_count':1,'dim':3,"
               "'similarity':'sim.txt','target_quality':0.5}", dir, 2);
  CU_ASSERT_TRUE_FATAL(wl_quality_info(wl, &q));
  CU_ASSERT_STRING_EQUAL(q.name, "spearman");
  CU_ASSERT_TRUE(q.has_target);
  ps_key *keys;
  size_t n;
  CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, 1, 2, &keys, &n), PS_OK);
  CU_ASSERT_EQUAL(n, 0); /* rank 0 alone evaluates */
  free(keys);
  CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, 0, 2, &keys, &n), PS_OK);
  CU_ASSERT_EQUAL_FATAL(n, 5);
  size_t off[5];
  float vals[15];
  for (size_t i = 0; i < 5; i++) {
    off[i] = 3 * i;
    memcpy(vals + 3 * i, vec[keys[i]], sizeof vec[0]);
  }
  wl_eval_in in = {.keys = keys, .n = n, .vals = vals, .off = off};
  CU_ASSERT_EQUAL(wl->type->eval(wl->impl, 0, 2, &in, &num, &den), PS_OK);
  /* cosines: king-queen 0, man-woman -1, king-apple 0, queen-apple 0 vs
   * scores 9, 8, 1, 0.5: ranks x 3, 1, 3, 3; y 4, 3, 2, 1 -> rho = -0.258 */
  CU_ASSERT_DOUBLE_EQUAL(den, 1, 0);
  double x[] = {0, -1, 0, 0}, y[] = {9, 8, 1, 0.5};
  bool ok;
  CU_ASSERT_DOUBLE_EQUAL(num, w2v_spearman(x, y, 4, &ok), 1e-9);
  free(keys);
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* --------------------------------------------------------------- WordNet */

static void test_wordnet(void) {
  struct stat st;
  if (stat(W2V_WORDNET_DIR "/data.noun", &st) != 0) {
    printf("\n  WordNet is not installed: skipped\n");
    return;
  }
  char err[512];
  w2v_corpus c;
  CU_ASSERT_TRUE_FATAL(
      w2v_corpus_load(&c, NULL, "wordnet:glosses", 5, W2V_WORDNET_DIR, err, sizeof err));
  printf("\n  wordnet:glosses: %llu sentences, %llu tokens (%llu before min_count 5), "
         "vocabulary %u (of %llu words)\n",
         (unsigned long long)c.n_sentences, (unsigned long long)c.n_tokens,
         (unsigned long long)c.raw_tokens, c.vocab.count, (unsigned long long)c.raw_words);
  CU_ASSERT(c.n_sentences > 100000);
  CU_ASSERT(c.n_tokens > 1000000);
  CU_ASSERT(c.vocab.count > 10000);
  w2v_similarity s;
  CU_ASSERT_TRUE_FATAL(
      w2v_similarity_load(&s, NULL, "wordnet:synonyms", &c, 1000, W2V_WORDNET_DIR, err,
                          sizeof err));
  CU_ASSERT_EQUAL(s.n, 2000);
  size_t ones = 0;
  for (size_t i = 0; i < s.n; i++) {
    ones += s.pairs[i].score == 1;
    CU_ASSERT(s.pairs[i].a < c.vocab.count && s.pairs[i].b < c.vocab.count);
    CU_ASSERT_NOT_EQUAL(s.pairs[i].a, s.pairs[i].b);
  }
  CU_ASSERT_EQUAL(ones, 1000);
  printf("  wordnet:synonyms: e.g. %s ~ %s (1), %s ~ %s (0)\n", c.vocab.names[s.pairs[0].a],
         c.vocab.names[s.pairs[0].b], c.vocab.names[s.pairs[1000].a],
         c.vocab.names[s.pairs[1000].b]);
  /* Deterministic: built again, the same pairs. */
  w2v_similarity t;
  CU_ASSERT_TRUE_FATAL(
      w2v_similarity_load(&t, NULL, "wordnet:synonyms", &c, 1000, W2V_WORDNET_DIR, err,
                          sizeof err));
  CU_ASSERT_EQUAL(memcmp(s.pairs, t.pairs, s.n * sizeof *s.pairs), 0);
  free(s.pairs);
  free(t.pairs);
  w2v_corpus_free(&c);
}

/* -------------------------------------------------------------- learning */

static int env_wait(void *ctx, ps_worker *w, ps_ticket t) {
  return harness_wait(ctx, w, t) ? PS_OK : PS_ERR_PROTOCOL;
}

static double fake_clock;
static void env_compute(void *ctx, double flops, bool math_done) {
  (void)ctx;
  CU_ASSERT_TRUE(math_done);
  fake_clock += flops / 1e9;
}
static double env_now(void *ctx) {
  (void)ctx;
  return fake_clock;
}

#define TOPICS 3
#define TOPIC_WORDS 6

/* A corpus whose words co-occur only within their topic: each line draws
 * one topic and 12 of its words (a fixed LCG), and a similarity file that
 * scores same-topic pairs 1 and cross-topic pairs 0. */
static void write_topics(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/topics.txt", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  uint64_t x = 12345;
  for (int line = 0; line < 300; line++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int topic = (int)((x >> 33) % TOPICS);
    for (int i = 0; i < 12; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      fprintf(f, "%sT%dw%d", i ? " " : "", topic, (int)((x >> 33) % TOPIC_WORDS));
    }
    fprintf(f, ".\n");
  }
  fclose(f);
  snprintf(path, sizeof path, "%s/topics-sim.txt", dir);
  f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "# same topic: 1, different topics: 0\n");
  for (int a = 0; a < TOPICS * TOPIC_WORDS; a++)
    for (int b = a + 1; b < TOPICS * TOPIC_WORDS; b++)
      fprintf(f, "t%dw%d\tt%dw%d\t%d\n", a / TOPIC_WORDS, a % TOPIC_WORDS, b / TOPIC_WORDS,
              b % TOPIC_WORDS, a / TOPIC_WORDS == b / TOPIC_WORDS);
  fclose(f);
}

static void test_learning(void) {
  char *dir = unit_temp_dir();
  write_topics(dir);
  wl_workload *wl = make_ok("{'type':'w2v','corpus':'topics.txt','min_count':1,'dim':16,"
                            "'window':3,'neg':5,'batch':10,'subsample':0,'lr':0.05,"
                            "'epochs':6,'similarity':'topics-sim.txt'}",
                            dir, 1);
  harness_config hc;
  harness_config_default(&hc);
  hc.nodes = 1;
  hc.workers = 1;
  memset(&hc.layout, 0, sizeof hc.layout);
  wl_tables(wl, &hc.layout);
  harness *h = harness_new(&hc);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  ps_worker *w = harness_worker(h, 0, 0);
  ps_key first;
  uint64_t count;
  double *weights;
  CU_ASSERT_EQUAL_FATAL(wl_sample_distribution(wl, &first, &count, &weights), PS_OK);
  ps_sample_dist *dist = ps_sample_dist_new(first, count, weights);
  free(weights);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dist);
  ps_sampler *sampler = ps_sampler_new(NULL, w, dist, 77); /* naive */
  CU_ASSERT_PTR_NOT_NULL_FATAL(sampler);
  /* Before training (initial values alone) the ranking is chance. */
  ps_key *keys;
  size_t n_keys;
  CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, 0, 1, &keys, &n_keys), PS_OK);
  CU_ASSERT_EQUAL_FATAL(n_keys, TOPICS * TOPIC_WORDS);
  float *vals = calloc(n_keys * 16, sizeof *vals);
  size_t *off = malloc(n_keys * sizeof *off);
  CU_ASSERT_FATAL(vals && off);
  for (size_t i = 0; i < n_keys; i++) {
    off[i] = 16 * i;
    wl_add_initial(wl, keys[i], vals + off[i], 16);
  }
  wl_eval_in in = {.keys = keys, .n = n_keys, .vals = vals, .off = off};
  double rho0, den0;
  CU_ASSERT_EQUAL(wl->type->eval(wl->impl, 0, 1, &in, &rho0, &den0), PS_OK);
  CU_ASSERT(fabs(rho0) < 0.3);
  free(keys);
  free(vals);
  free(off);
  wl_stream *s = wl_stream_new(wl, 0, 0, 5);
  wl_driver_env env = {.ctx = h, .wait = env_wait, .compute = env_compute, .now = env_now,
                       .sample_ctx = sampler, .sample_prepare = ps_sampler_prepare_cb,
                       .sample_pull = ps_sampler_pull_cb, .sample_stats = ps_sampler_stats_cb,
                       .rank = 0, .workers = 1};
  wl_driver_stats stats;
  CU_ASSERT_EQUAL_FATAL(wl_drive(w, s, &env, 2, &stats), PS_OK);
  CU_ASSERT_EQUAL_FATAL(stats.epochs, 6);
  CU_ASSERT_PTR_NOT_NULL_FATAL(stats.epoch_quality);
  printf("\n  learning (3 topics, %llu steps, %llu samples): spearman %.3f before training, "
         "0.789 when topics separate perfectly\n",
         (unsigned long long)stats.steps, (unsigned long long)stats.samples, rho0);
  for (size_t e = 0; e < stats.epochs; e++) {
    const wl_epoch_quality *q = &stats.epoch_quality[e];
    printf("    epoch %zu: loss per pair %.4f over %.0f pairs, spearman %.3f\n", e + 1,
           q->loss / q->examples, q->examples, q->q_num / q->q_den);
    CU_ASSERT(q->examples > 1000);
    CU_ASSERT_DOUBLE_EQUAL(q->q_den, 1, 0);
  }
  const wl_epoch_quality *q0 = &stats.epoch_quality[0], *q5 = &stats.epoch_quality[5];
  /* At the start a pair's loss is 6 log 2 = 4.16 (all dot products 0). */
  CU_ASSERT(q0->loss / q0->examples < 6 * log(2.0));
  CU_ASSERT(q5->loss / q5->examples < 0.9 * (q0->loss / q0->examples));
  CU_ASSERT(q5->loss / q5->examples < 0.5 * 6 * log(2.0));
  CU_ASSERT(q5->q_num / q5->q_den > 0.5);
  CU_ASSERT_EQUAL(stats.samples, (uint64_t)(5 * (q0->examples + stats.epoch_quality[1].examples +
                                                 stats.epoch_quality[2].examples +
                                                 stats.epoch_quality[3].examples +
                                                 q5->examples + stats.epoch_quality[4].examples)));
  free(stats.epoch_end_s);
  free(stats.epoch_quality);
  free(stats.evals);
  wl_stream_free(s);
  ps_sampler_free(sampler);
  ps_sample_dist_free(dist);
  harness_free(h);

  /* math "none": the same steps, pushes of 1.0, no quality. */
  wl_free(wl);
  wl = make_ok("{'type':'w2v','corpus':'topics.txt','min_count':1,'math':'none'}", dir, 1);
  CU_ASSERT_FALSE(wl_math(wl));
  wl_quality q;
  CU_ASSERT_FALSE(wl_quality_info(wl, &q));
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

PSLAB_SUITE("w2v",
            {"tokenizer", test_tokenizer},
            {"min_count and vocabulary", test_min_count_and_vocabulary},
            {"loader errors", test_loader_errors},
            {"spearman with ties", test_spearman},
            {"gradient check", test_gradient},
            {"adagrad step", test_adagrad_step},
            {"steps", test_steps},
            {"subsampling closes gaps", test_subsampling_gaps},
            {"evaluation", test_eval},
            {"wordnet corpus and synonyms", test_wordnet},
            {"learning through the driver", test_learning})
