/*
 * The `kge` workload's parts (kge.c: the type; kge_data.c: the graph from TSV
 * files or WordNet; kge_math.c: the models' scores and gradients). Internal
 * to workloads/ (tests excepted), like internal.h.
 */
#ifndef PSLAB_WORKLOADS_KGE_H
#define PSLAB_WORKLOADS_KGE_H

#include "workloads/internal.h"

/* ------------------------------------------------------------ the graph */

typedef struct {
  uint32_t h, r, t;
} kge_triple;

/* A knowledge graph with dense ids: entities 0..entities-1, relations
 * 0..relations-1, and its splits. Read-only once loaded. */
typedef struct {
  uint32_t entities, relations;
  /* The names the data gives them, by id (TSV: as written; WordNet: a
   * synset's offset and part of speech, "02084071n", and a pointer's
   * symbol, "@"), for the saved embeddings. */
  char **entity_names, **relation_names;
  kge_triple *train, *valid, *test;
  size_t n_train, n_valid, n_test;
} kge_graph;

void kge_graph_free(kge_graph *g);

/* Loads TSV files (head<TAB>relation<TAB>tail per line; blank lines are
 * skipped): train (required), valid and test (NULL: none), each named by
 * the workload field of the same name. Names are mapped to ids in order of
 * first appearance in train; a name in valid or test that train never
 * names is an error. false with "<field>: <path>:<line>: <what>" in err. */
bool kge_load_tsv(kge_graph *g, const wl_context *ctx, const char *train, const char *valid,
                  const char *test, char *err, size_t errlen);

/* Loads WordNet's synset-to-synset pointers from dir's data.{noun,verb,adj,
 * adv} (wndb format): every synset (offset and part of speech; satellite
 * adjectives are adjectives) is an entity, every pointer symbol a relation,
 * every pointer whose source/target field is 0000 a triple (lexical
 * pointers between words are left out). All of it goes into train; see
 * kge_split. A missing file says to install wordnet-base. */
bool kge_load_wordnet(kge_graph *g, const wl_context *ctx, const char *dir, char *err,
                      size_t errlen);

/* Moves a deterministic share (test_fraction, by seed) of train into test,
 * except triples whose head, tail or relation would then be in no train
 * triple (they stay in train). false on no memory. */
bool kge_split(kge_graph *g, double test_fraction, uint64_t seed);

/* --------------------------------------------------------------- models */

typedef enum { KGE_COMPLEX, KGE_DISTMULT, KGE_RESCAL } kge_model;

/* Floats of an entity's and a relation's embedding (without the AdaGrad
 * half of their values) for a model of dimension dim. */
uint32_t kge_entity_len(kge_model m, uint32_t dim);
uint32_t kge_relation_len(kge_model m, uint32_t dim);

/* The score of triple (h, r, t), embeddings as kge_*_len say. */
double kge_score(kge_model m, uint32_t dim, const float *h, const float *r, const float *t);

/* q (kge_entity_len floats) such that score(h, r, c) = q . c for every
 * entity c: what ranking many tails needs computed once. */
void kge_query(kge_model m, uint32_t dim, const float *h, const float *r, double *q);

/* One example of the logistic loss: y = 1 for a true triple, 0 for a
 * corrupted one. Returns softplus(s) - y*s (the loss without
 * regularization) and ADDS to gh, gr, gt the gradient of
 *   softplus(s) - y*s + reg/2 * (|h|^2 + |r|^2 + |t|^2)
 * with respect to h, r, t (gh may be gt when h and t are one entity: both
 * add). */
double kge_example(kge_model m, uint32_t dim, const float *h, const float *r, const float *t,
                   double y, double reg, double *gh, double *gr, double *gt);

/* Flops of one example (score and gradient). */
double kge_example_flops(kge_model m, uint32_t dim);

#endif
