/*
 * Real training end to end, on both backends: the pslab command runs a tiny
 * task with known structure in the simulator and on the real backend (2
 * nodes x 2 workers, loopback), and each run's records must show learning:
 * the training loss falls, the held-out quality ends far better than it
 * started and than chance.
 *
 *   mf    generated low-rank ratings (the generator's own data);
 *   kge   a cycle graph of 30 entities written here as TSV: next, prev and
 *         opposite (i -> i + 15) relations, some triples held out;
 *   w2v   a corpus of three topics written here: each line draws words of
 *         one topic only; the similarity file says same-topic pairs 1,
 *         cross-topic pairs 0;
 *   dnn   an MLP regressing a teacher network's outputs (the workload's own
 *         synthetic data), synchronously: BSP, every step all keys. Both
 *         backends then compute the same supersteps, so their losses agree
 *         (up to the order float deltas are added in).
 *
 * mf and w2v run again with "optimizer": "adagrad".
 *
 * Data files are named relative to the spec's directory, as users write
 * them. The simulator's runs are also run twice: the same numbers.
 */
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;

static void write_file(const char *name, const char *text) {
  char path[1024];
  int n = snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = n >= 0 && (size_t)n < sizeof path ? fopen(path, "w") : NULL;
  if (!f || fputs(text, f) < 0) {
    fprintf(stderr, "test_training: cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

/* ----------------------------------------------------------- the data */

static void write_graph(void) {
  enum { N = 30 };
  char *train = calloc(1, 65536), *test = calloc(1, 4096);
  size_t a = 0, b = 0;
  for (int i = 0; i < N; i++) {
    const struct { const char *rel; int to; } edges[] = {
        {"next", (i + 1) % N}, {"prev", (i + N - 1) % N}, {"opposite", (i + N / 2) % N}};
    for (int k = 0; k < 3; k++) {
      bool held = (i * 3 + k) % 9 == 4 && i >= 3; /* 1 in 9, every entity seen */
      char *out = held ? test : train;
      size_t *at = held ? &b : &a;
      *at += (size_t)sprintf(out + *at, "e%d\t%s\te%d\n", i, edges[k].rel, edges[k].to);
    }
  }
  write_file("graph_train.tsv", train);
  write_file("graph_test.tsv", test);
  free(train);
  free(test);
}

static void write_corpus(void) {
  enum { TOPICS = 3, WORDS = 8, LINES = 600, LEN = 12 };
  char *text = calloc(1, LINES * LEN * 8 + 1);
  size_t at = 0;
  uint64_t x = 12345;
  for (int l = 0; l < LINES; l++) {
    int t = l % TOPICS;
    for (int w = 0; w < LEN; w++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      at += (size_t)sprintf(text + at, "%s%c%d", w ? " " : "", 'a' + t, (int)((x >> 33) % WORDS));
    }
    text[at++] = '\n';
  }
  write_file("topics.txt", text);
  free(text);
  char sim[8192];
  size_t s = 0;
  for (int i = 0; i < WORDS; i++)
    for (int j = i + 1; j < WORDS; j += 3) {
      s += (size_t)sprintf(sim + s, "a%d a%d 1\nb%d c%d 0\n", i, j, i, j);
      s += (size_t)sprintf(sim + s, "c%d c%d 1\na%d b%d 0\n", i, j, i, j);
    }
  write_file("topics_sim.txt", sim);
}

/* ------------------------------------------------------------ running */

#define RELOCATE "\"policy\": {\"type\": \"relocate\", \"lookahead\": 4}"
static const char *const specs[][3] = {
    {"mf", "{\"type\": \"mf\", \"rows\": 300, \"cols\": 200, \"nnz\": 12000, \"rank\": 5, "
           "\"epochs\": 8, \"batch\": 50}", RELOCATE},
    {"kge", "{\"type\": \"kge\", \"train\": \"graph_train.tsv\", \"test\": \"graph_test.tsv\", "
            "\"dim\": 16, \"batch\": 8, \"neg\": 5, \"epochs\": 40}", RELOCATE},
    {"w2v", "{\"type\": \"w2v\", \"corpus\": \"topics.txt\", \"similarity\": \"topics_sim.txt\", "
            "\"min_count\": 1, \"dim\": 16, \"window\": 3, \"batch\": 20, \"subsample\": 0, "
            "\"epochs\": 4}", RELOCATE},
    {"dnn", "{\"type\": \"dnn\", \"layers\": [8, 32, 4], \"key_floats\": 64, "
            "\"examples\": 2048, \"batch\": 16, \"epochs\": 6, \"test_examples\": 256}",
     "\"policy\": {\"type\": \"static\"}, \"consistency\": {\"model\": \"bsp\"}"},
    {"mf_adagrad", "{\"type\": \"mf\", \"rows\": 300, \"cols\": 200, \"nnz\": 12000, "
                   "\"rank\": 5, \"epochs\": 8, \"batch\": 50, \"optimizer\": \"adagrad\", "
                   "\"lr\": 0.3}", RELOCATE},
    {"w2v_adagrad", "{\"type\": \"w2v\", \"corpus\": \"topics.txt\", "
                    "\"similarity\": \"topics_sim.txt\", \"min_count\": 1, \"dim\": 16, "
                    "\"window\": 3, \"batch\": 20, \"subsample\": 0, \"epochs\": 4, "
                    "\"optimizer\": \"adagrad\"}", RELOCATE},
};

/* Runs the task on the backend; its one record. */
static cJSON *run_task(size_t task, const char *backend, const char *tag) {
  char spec[2048], name[64], path[1024], out[1024];
  snprintf(name, sizeof name, "%s_%s_%s", specs[task][0], backend, tag);
  snprintf(spec, sizeof spec,
           "{\"name\": \"%s\", \"backend\": \"%s\", \"seed\": 3, "
           "\"cluster\": {\"nodes\": 2, \"workers_per_node\": 2}, "
           "\"workload\": %s, %s}",
           name, backend, specs[task][1], specs[task][2]);
  snprintf(path, sizeof path, "%s.json", name);
  write_file(path, spec);
  snprintf(out, sizeof out, "%s/out_%s", dir, name);
  const char *bin = getenv("PSLAB_BINARY_DIR");
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s/pslab' run '%s/%s.json' --out '%s' -q > '%s.log' 2>&1",
           bin ? bin : ".", dir, name, out, out);
  int rc = system(cmd);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc != 0) {
    snprintf(cmd, sizeof cmd, "cat '%s.log' >&2", out);
    (void)system(cmd);
  }
  char *text = unit_slurp(out, "runs.jsonl");
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  cJSON *rec = cJSON_Parse(text);
  free(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
  return rec;
}

static const cJSON *metric(const cJSON *rec, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "metrics"), name);
}

static double first(const cJSON *list) { return cJSON_GetArrayItem(list, 0)->valuedouble; }
static double last(const cJSON *list) {
  return cJSON_GetArrayItem(list, cJSON_GetArraySize(list) - 1)->valuedouble;
}

/* Loss falls to below `loss_drop` of its first epoch; quality ends past
 * quality_bound (higher better: far past chance, whatever the first epoch
 * reached) or below it and below the first epoch's (lower better). */
static void check_learned(const cJSON *rec, const char *what, double loss_drop,
                          double quality_bound, bool higher_better) {
  const cJSON *loss = metric(rec, "epoch_loss"), *quality = metric(rec, "epoch_quality");
  CU_ASSERT_TRUE_FATAL(cJSON_IsArray(loss) && cJSON_IsArray(quality));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(loss), cJSON_GetArraySize(quality));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(metric(rec, "epoch_end_s")), cJSON_GetArraySize(loss));
  double q0 = first(quality), q1 = last(quality);
  printf("\n    %s: loss %.4f -> %.4f, quality %.4f -> %.4f", what, first(loss), last(loss), q0,
         q1);
  CU_ASSERT_TRUE(last(loss) < loss_drop * first(loss));
  bool better = higher_better ? q1 > quality_bound : q1 < quality_bound && q1 < q0;
  CU_ASSERT_TRUE(better);
  /* The final quality, on the owners' values once the run is quiet, has
   * learned as well. */
  double qf = metric(rec, "quality")->valuedouble;
  printf(", final %.4f", qf);
  CU_ASSERT_TRUE(higher_better ? qf > quality_bound : qf < quality_bound && qf < q0);
  /* No delta lost or doubled: the stored values add up to what was pushed
   * (float rounding aside: the store adds in float). */
  const cJSON *stored = metric(rec, "value_sum"), *pushed = metric(rec, "pushed_sum");
  CU_ASSERT_TRUE_FATAL(cJSON_IsNumber(stored) && cJSON_IsNumber(pushed));
  printf(", stored %.6f, pushed %.6f", stored->valuedouble, pushed->valuedouble);
  CU_ASSERT_DOUBLE_EQUAL(stored->valuedouble, pushed->valuedouble,
                         1e-3 + 1e-4 * fabs(pushed->valuedouble));
  /* With all-reduce replicas, every copy equals its owner up to rounding. */
  const cJSON *diff = metric(rec, "replica_max_diff");
  if (diff) CU_ASSERT_TRUE(cJSON_IsNumber(diff) && diff->valuedouble <= 1e-5);
}

/* The data files, written once, in the first test that needs them. */
static void prepare(void) {
  if (dir) return;
  dir = unit_temp_dir();
  write_graph();
  write_corpus();
}

/* bound[0] for the simulator; bound[1] for the real backend, whose workers
 * interleave as the machine's load has them (more staleness on a busy
 * machine), so its bound is looser, though still far past chance. */
static void run_both(size_t task, double loss_drop, const double bound[2], bool higher_better) {
  const char *backends[] = {"sim", "real"};
  prepare();
  for (int b = 0; b < 2; b++) {
    cJSON *rec = run_task(task, backends[b], "a");
    char what[64];
    snprintf(what, sizeof what, "%s on %s", specs[task][0], backends[b]);
    check_learned(rec, what, b ? 0.5 * (1 + loss_drop) : loss_drop, bound[b], higher_better);
    if (b == 0) { /* simulated: the same spec gives the same numbers */
      cJSON *again = run_task(task, "sim", "b");
      CU_ASSERT_TRUE(cJSON_Compare(metric(rec, "epoch_quality"), metric(again, "epoch_quality"), 1));
      CU_ASSERT_TRUE(cJSON_Compare(metric(rec, "epoch_loss"), metric(again, "epoch_loss"), 1));
      cJSON_Delete(again);
    }
    cJSON_Delete(rec);
  }
}

/* RMSE well under the spread of the ratings (predicting the mean: about 1). */
static void test_mf_learns(void) { run_both(0, 0.2, (const double[]){0.5, 0.75}, false); }
/* Filtered MRR among 30 entities: chance is about 0.13 (on the real backend
 * it swings, 0.34 to 1.0 in runs here, with the workers' interleaving). */
static void test_kge_learns(void) { run_both(1, 0.6, (const double[]){0.5, 0.25}, true); }
/* Spearman against same-topic 1, cross-topic 0: chance 0. */
static void test_w2v_learns(void) { run_both(2, 0.9, (const double[]){0.5, 0.4}, true); }

/* The optimizer field on both backends: AdaGrad's accumulators travel in
 * the values (twice as many floats a key), and training learns as well. */
static void test_mf_adagrad_learns(void) { run_both(4, 0.2, (const double[]){0.5, 0.75}, false); }
static void test_w2v_adagrad_learns(void) {
  run_both(5, 0.9, (const double[]){0.5, 0.4}, true);
}

/* Held-out MSE against the teacher's outputs (0.14 after the first epoch
 * here; it must end below 0.06 and below that); under BSP the real backend
 * trains the same supersteps as the simulator: its losses within 1% of the
 * simulated ones. */
static void test_dnn_learns_under_bsp(void) {
  prepare();
  cJSON *sim = run_task(3, "sim", "a"), *real = run_task(3, "real", "a");
  check_learned(sim, "dnn on sim (bsp)", 0.3, 0.06, false);
  check_learned(real, "dnn on real (bsp)", 0.3, 0.06, false);
  const cJSON *a = metric(sim, "epoch_loss"), *b = metric(real, "epoch_loss");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(a), cJSON_GetArraySize(b));
  for (int e = 0; e < cJSON_GetArraySize(a); e++) {
    double x = cJSON_GetArrayItem(a, e)->valuedouble, y = cJSON_GetArrayItem(b, e)->valuedouble;
    CU_ASSERT_DOUBLE_EQUAL(y, x, 0.01 * x);
  }
  CU_ASSERT(metric(sim, "clock_messages")->valuedouble > 0); /* BSP's clocks ran */
  cJSON_Delete(sim);
  cJSON_Delete(real);
}

int main(void) {
  static const unit_test tests[] = {
      {"mf learns on both backends", test_mf_learns},
      {"kge learns on both backends", test_kge_learns},
      {"w2v learns on both backends", test_w2v_learns},
      {"dnn learns under bsp on both backends, alike", test_dnn_learns_under_bsp},
      {"mf with adagrad learns on both backends", test_mf_adagrad_learns},
      {"w2v with adagrad learns on both backends", test_w2v_adagrad_learns},
  };
  int rc = unit_run_suite("training", tests, sizeof tests / sizeof tests[0]);
  if (dir) unit_remove_tree(dir);
  free(dir);
  return rc;
}
