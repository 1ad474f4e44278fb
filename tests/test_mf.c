/*
 * The `mf` workload: its SGD gradient against finite differences, an
 * AdaGrad step by hand (the optimizer field), its loaders (a table of malformed files and their messages, both MovieLens
 * formats), the generator's determinism, the split over workers (default,
 * clustering, blocking), hot keys, math "none", and learning: a small
 * generated matrix trained through wl_drive on an in-process 1-node ps_node
 * with 2 workers, whose training loss must fall and whose held-out RMSE must
 * end well below that of predicting the mean.
 */
#include "model/testing.h"
#include "tests/unit.h"
#include "workloads/mf.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

static wl_workload *make_in(const char *single_quoted, uint32_t nodes, uint32_t per_node,
                            const char *dir, char *err, size_t errlen) {
  cJSON *j = unit_json(single_quoted);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  wl_context ctx = {.nodes = nodes, .workers_per_node = per_node, .base_dir = dir};
  wl_workload *wl = wl_create(j, &ctx, err, errlen);
  cJSON_Delete(j);
  return wl;
}

static wl_workload *make(const char *single_quoted, uint32_t nodes, uint32_t per_node) {
  char err[512] = "";
  wl_workload *wl = make_in(single_quoted, nodes, per_node, NULL, err, sizeof err);
  if (!wl) fprintf(stderr, "workload: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  return wl;
}

static const mf_workload *mf_of(const wl_workload *wl) { return wl->impl; }

/* The objective the math descends, in double: sum over the step's ratings
 * of (W_r . H_c - y)^2 + reg (|W_r|^2 + |H_c|^2); vals by read position. */
static double objective(const mf_workload *m, const wl_step *st, const double *vals) {
  double f = 0;
  for (size_t i = 0; i < st->n_items; i++) {
    const mf_rating *r = &m->d.train[st->items[i]];
    size_t pw = SIZE_MAX, ph = SIZE_MAX;
    for (size_t k = 0; k < st->n_reads; k++) {
      if (st->reads[k] == r->row) pw = k;
      if (st->reads[k] == (ps_key)m->d.rows + r->col) ph = k;
    }
    CU_ASSERT_FATAL(pw != SIZE_MAX && ph != SIZE_MAX);
    const double *w = vals + pw * m->rank, *h = vals + ph * m->rank;
    double e = -r->rating, nw = 0, nh = 0;
    for (uint64_t k = 0; k < m->rank; k++) {
      e += w[k] * h[k];
      nw += w[k] * w[k];
      nh += h[k] * h[k];
    }
    f += e * e + m->reg * (nw + nh);
  }
  return f;
}

/* ------------------------------------------------------------ gradient */

/* Analytic deltas / -lr against central differences of the objective, on
 * steps of a skewed matrix (hot rows and columns repeat within a step). */
static void test_gradient_matches_finite_differences(void) {
  wl_workload *wl = make("{'type':'mf','rows':30,'cols':20,'nnz':200,'rank':4,"
                         "'batch':12,'lr':0.05,'reg':0.1,'skew':1.1}", 1, 1);
  const mf_workload *m = mf_of(wl);
  wl_stream *s = wl_stream_new(wl, 0, 0, 7);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  gsl_rng *rng = wl_rng_new(3, 0);
  double worst = 0;
  size_t repeats = 0;
  for (int step = 0; step < 4; step++) {
    wl_step st;
    CU_ASSERT_FATAL(wl_next_step(s, &st));
    CU_ASSERT_EQUAL_FATAL(st.n_items, 12);
    CU_ASSERT(st.n_reads < 24 || step > 0);
    repeats += 24 - st.n_reads;
    size_t floats = st.n_reads * m->rank;
    float *vals = malloc(floats * sizeof *vals), *deltas = calloc(floats, sizeof *deltas);
    double *dv = malloc(floats * sizeof *dv);
    size_t *off = malloc(st.n_reads * sizeof *off);
    for (size_t i = 0; i < floats; i++) {
      vals[i] = (float)(gsl_rng_uniform(rng) * 2 - 1);
      dv[i] = vals[i];
    }
    for (size_t i = 0; i < st.n_reads; i++) off[i] = i * m->rank;
    wl_math_io io = {.reads = vals, .read_off = off, .write_deltas = deltas, .write_off = off};
    CU_ASSERT_EQUAL_FATAL(wl_type_mf.math(s->impl, &st, &io), PS_OK);
    CU_ASSERT_DOUBLE_EQUAL(io.examples, 12, 0);
    /* The loss is the squared error alone: the objective with reg 0. */
    double sq = 0;
    for (size_t i = 0; i < st.n_items; i++) {
      const mf_rating *r = &m->d.train[st.items[i]];
      size_t pw = 0, ph = 0;
      for (size_t k = 0; k < st.n_reads; k++) {
        if (st.reads[k] == r->row) pw = k;
        if (st.reads[k] == (ps_key)m->d.rows + r->col) ph = k;
      }
      double e = -r->rating;
      for (uint64_t k = 0; k < m->rank; k++) e += dv[pw * m->rank + k] * dv[ph * m->rank + k];
      sq += e * e;
    }
    CU_ASSERT_DOUBLE_EQUAL(io.loss, sq, 1e-4 * sq);
    const double eps = 1e-4;
    for (size_t i = 0; i < floats; i++) {
      double keep = dv[i];
      dv[i] = keep + eps;
      double up = objective(m, &st, dv);
      dv[i] = keep - eps;
      double down = objective(m, &st, dv);
      dv[i] = keep;
      double numeric = (up - down) / (2 * eps);
      double analytic = deltas[i] / -m->lr;
      double diff = fabs(numeric - analytic) / (1 + fabs(numeric));
      if (diff > worst) worst = diff;
    }
    free(vals);
    free(deltas);
    free(dv);
    free(off);
  }
  printf("\n  gradient: worst relative difference %.2e over 4 steps (%zu repeated keys)\n",
         worst, repeats);
  CU_ASSERT(worst < 1e-4);
  CU_ASSERT(repeats > 0); /* the check covered summed terms */
  gsl_rng_free(rng);
  wl_stream_free(s);
  wl_free(wl);
}

/* ------------------------------------------------------------- AdaGrad */

/* One AdaGrad step by hand. Ratings (u1, i10) = 3 and (u1, i20) = 1 in one
 * step, rank 2, reg 0.25, lr 0.1; pulled values [factor | accumulators]:
 * W = [1 2 | 0.5 0], H10 = [1 0 | 0 1], H20 = [0 1 | 0 0]. Errors W.H - y:
 * -2 and 1. Gradients 2 (e H + reg W) summed over the ratings, 2 (e W +
 * reg H): gW = [-3.5 1] + [0.5 3] = [-3 4], gH10 = [-3.5 -8], gH20 = [2
 * 4.5]. AdaGrad: acc + g^2 = [9.5 16], [12.25 65], [4 20.25]; deltas -0.1 g
 * / sqrt(that) and g^2. */
static void test_adagrad_step(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "r.data", "1\t10\t3\t0\n1\t20\t1\t0\n");
  char err[512] = "";
  wl_workload *wl = make_in("{'type':'mf','ratings':'r.data','test_fraction':0,'rank':2,"
                            "'batch':2,'lr':0.1,'reg':0.25,'optimizer':'adagrad'}",
                            1, 1, dir, err, sizeof err);
  if (!wl) fprintf(stderr, "%s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  ps_layout layout = {0};
  wl_tables(wl, &layout);
  CU_ASSERT_EQUAL(layout.tables[0].value_len, 4); /* the factor and its accumulators */
  CU_ASSERT_EQUAL(layout.tables[1].value_len, 4);
  float init[4] = {0};
  wl_add_initial(wl, 0, init, 4);
  CU_ASSERT(init[0] != 0 && init[1] != 0 && init[2] == 0 && init[3] == 0);

  static const float pulled[3][4] = {{1, 2, 0.5f, 0}, {1, 0, 0, 1}, {0, 1, 0, 0}};
  const double want[3][4] = {{0.3 / sqrt(9.5), -0.1, 9, 16},
                             {0.1, 0.8 / sqrt(65), 12.25, 64},
                             {-0.1, -0.1, 4, 20.25}};
  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  wl_step st;
  CU_ASSERT_FATAL(wl_next_step(s, &st));
  CU_ASSERT_EQUAL_FATAL(st.n_reads, 3);
  float vals[12], deltas[12] = {0};
  size_t off[3] = {0, 4, 8};
  for (size_t i = 0; i < 3; i++) /* keys: row 0, then the columns (1 + 0, 1 + 1) */
    memcpy(vals + off[i], pulled[st.reads[i]], sizeof pulled[0]);
  wl_math_io io = {.reads = vals, .read_off = off, .write_deltas = deltas, .write_off = off};
  CU_ASSERT_EQUAL_FATAL(wl_type_mf.math(s->impl, &st, &io), PS_OK);
  CU_ASSERT_DOUBLE_EQUAL(io.loss, 5, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(io.examples, 2, 0);
  for (size_t i = 0; i < 3; i++)
    for (size_t k = 0; k < 4; k++)
      CU_ASSERT_DOUBLE_EQUAL(deltas[off[i] + k], want[st.reads[i]][k], 1e-6);
  wl_stream_free(s);
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* -------------------------------------------------------------- loaders */

typedef struct {
  const char *what;
  const char *train, *test; /* file texts; test NULL: no test file */
  const char *spec_extra;   /* more fields, single-quoted JSON, or "" */
  const char *message;      /* expected, with %s for the directory */
} bad_case;

static void test_loader_errors(void) {
  static const bad_case cases[] = {
      {"missing column", "1 2 3\n4 5\n", NULL, "",
       "ratings: %s/train.txt:2: expected 3 columns (user, item, rating), found 2"},
      {"not a number", "u,i,r\n1,2,3.5\n4,5,x7\n", NULL, "",
       "ratings: %s/train.txt:3: rating: expected a number, found \"x7\""},
      {"not finite", "1\t2\t3\n1\t3\tnan\n", NULL, "",
       "ratings: %s/train.txt:2: rating: expected a number, found \"nan\""},
      {"empty", "", NULL, "", "ratings: %s/train.txt: expected ratings, found an empty file"},
      {"header only", "userId,movieId,rating\n\n", NULL, "",
       "ratings: %s/train.txt: expected ratings, found only a header"},
      {"unknown item in test", "1 2 3\n1 3 4\n", "1 2 5\n1 9 4\n", "",
       "test: %s/test.txt:2: item \"9\" is not in the training ratings"},
      {"unknown user in test", "a x 3\nb y 4\n", "c x 1\n", "",
       "test: %s/test.txt:1: user \"c\" is not in the training ratings"},
      {"missing column in test", "1 2 3\n", "1 2\n", "",
       "test: %s/test.txt:1: expected 3 columns (user, item, rating), found 2"},
      {"generator field with a file", "1 2 3\n", NULL, ",'rows':5",
       "rows: expected nothing: \"ratings\" names a file, which gives the data, found 5"},
      {"test_fraction with a test file", "1 2 3\n", "1 2 3\n", ",'test_fraction':0.2",
       "test_fraction: expected nothing: \"test\" names the held-out file, found 0.2"},
  };
  char *dir = unit_temp_dir();
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    unit_write(dir, "train.txt", cases[c].train);
    if (cases[c].test) unit_write(dir, "test.txt", cases[c].test);
    char spec[512], want[1024], err[1024] = "";
    snprintf(spec, sizeof spec, "{'type':'mf','ratings':'train.txt'%s%s}",
             cases[c].test ? ",'test':'test.txt'" : "", cases[c].spec_extra);
    const char *at = strstr(cases[c].message, "%s");
    if (at)
      snprintf(want, sizeof want, "%.*s%s%s", (int)(at - cases[c].message), cases[c].message,
               dir, at + 2);
    else
      snprintf(want, sizeof want, "%s", cases[c].message);
    wl_workload *wl = make_in(spec, 1, 1, dir, err, sizeof err);
    CU_ASSERT_PTR_NULL(wl);
    if (strcmp(err, want) != 0)
      fprintf(stderr, "\n  %s: got \"%s\"\n  want \"%s\"\n", cases[c].what, err, want);
    CU_ASSERT_STRING_EQUAL(err, want);
    wl_free(wl);
  }
  /* A directory, and a file that is not there. */
  char sub[512], want[1024], err[1024] = "";
  snprintf(sub, sizeof sub, "%s/sub", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
  CU_ASSERT_PTR_NULL(make_in("{'type':'mf','ratings':'sub'}", 1, 1, dir, err, sizeof err));
  snprintf(want, sizeof want, "ratings: %s/sub: expected a file, found a directory", dir);
  CU_ASSERT_STRING_EQUAL(err, want);
  unit_write(dir, "train.txt", "1 2 3\n");
  CU_ASSERT_PTR_NULL(
      make_in("{'type':'mf','ratings':'train.txt','test':'sub'}", 1, 1, dir, err, sizeof err));
  snprintf(want, sizeof want, "test: %s/sub: expected a file, found a directory", dir);
  CU_ASSERT_STRING_EQUAL(err, want);
  CU_ASSERT_PTR_NULL(make_in("{'type':'mf','ratings':'gone.txt'}", 1, 1, dir, err, sizeof err));
  snprintf(want, sizeof want, "ratings: %s/gone.txt: cannot read it: ", dir);
  CU_ASSERT(strncmp(err, want, strlen(want)) == 0);
  /* A FIFO: refused at once, not waited on (the alarm ends a hang). */
  char fifo[512];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
  alarm(30);
  CU_ASSERT_PTR_NULL(make_in("{'type':'mf','ratings':'fifo'}", 1, 1, dir, err, sizeof err));
  alarm(0);
  snprintf(want, sizeof want, "ratings: %s/fifo: not a regular file (a FIFO)", dir);
  CU_ASSERT_STRING_EQUAL(err, want);
  unit_remove_tree(dir);
  free(dir);
}

static void test_spec_errors(void) {
  static const struct {
    const char *spec, *message;
  } cases[] = {
      {"{'type':'mf','rows':10,'cols':10}", "nnz: expected an integer in [1, 4294967295], found nothing"},
      {"{'type':'mf','rows':3,'cols':3,'nnz':10}", "nnz: expected at most rows * cols (9), found 10"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'blocking':1}",
       "blocking: expected true or false, found 1"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'test':'t.txt'}",
       "test: expected nothing: generated data is split by test_fraction, found \"t.txt\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'math':'fake'}",
       "math: expected one of \"real\", \"none\", found \"fake\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'test_fraction':0,'target_quality':0.5}",
       "target_quality: expected nothing: this workload has no held-out data to measure, found "
       "0.5"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'rank':0}",
       "rank: expected an integer in [1, 65536], found 0"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'eval_every':100}",
       "eval_every: expected a count of steps per worker or a fraction of an epoch, with its "
       "unit (\"250 steps\", \"0.25 epochs\"), found 100"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'eval_every':'10 minutes'}",
       "eval_every: expected a count of steps per worker or a fraction of an epoch, with its "
       "unit (\"250 steps\", \"0.25 epochs\"), found \"10 minutes\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'eval_every':'2.5 steps'}",
       "eval_every: expected a count of steps per worker or a fraction of an epoch, with its "
       "unit (\"250 steps\", \"0.25 epochs\"), found \"2.5 steps\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'eval_every':'0 epochs'}",
       "eval_every: expected a count of steps per worker or a fraction of an epoch, with its "
       "unit (\"250 steps\", \"0.25 epochs\"), found \"0 epochs\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'test_fraction':0,'eval_every':'5 steps'}",
       "eval_every: expected nothing: this workload has no held-out data to evaluate, found "
       "\"5 steps\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'math':'none','eval_every':'5 steps'}",
       "eval_every: expected nothing: with \"math\": \"none\" nothing is evaluated, found "
       "\"5 steps\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'stop_after':100}",
       "stop_after: expected a count of steps per worker or a fraction of an epoch, with its "
       "unit (\"250 steps\", \"0.25 epochs\"), found 100"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'stop_after':'0 steps'}",
       "stop_after: expected a count of steps per worker or a fraction of an epoch, with its "
       "unit (\"250 steps\", \"0.25 epochs\"), found \"0 steps\""},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'optimizer':'adagard'}",
       "optimizer: expected one of \"sgd\", \"adagrad\", found \"adagard\" (did you mean "
       "\"adagrad\"?)"},
      {"{'type':'mf','rows':10,'cols':10,'nnz':20,'optimizer':'adam'}",
       "optimizer: expected one of \"sgd\", \"adagrad\", found \"adam\""},
      {"{'type':'mf','rows':1000,'cols':1000,'nnz':5000,'skew':30}",
       "nnz: expected at most the distinct (row, col) pairs the skew reaches, found 5000 (1 "
       "distinct after 510000 draws)"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char err[512] = "";
    CU_ASSERT_PTR_NULL(make_in(cases[c].spec, 1, 1, NULL, err, sizeof err));
    if (strcmp(err, cases[c].message) != 0) fprintf(stderr, "\n  got \"%s\"\n", err);
    CU_ASSERT_STRING_EQUAL(err, cases[c].message);
  }
  /* eval_every's accepted forms: steps, or a fraction of an epoch rounded to
   * steps (at least one) */
  static const struct {
    const char *every;
    double per_epoch; /* eval steps as a share of an epoch's, or -n: n steps */
  } ok[] = {{"7 steps", -7}, {"1step", -1}, {"0.5 epochs", 0.5}, {"1 epoch", 1}, {"1e-9 epochs", 0}};
  for (size_t c = 0; c < sizeof ok / sizeof ok[0]; c++) {
    char spec[256];
    snprintf(spec, sizeof spec, "{'type':'mf','rows':10,'cols':10,'nnz':40,'eval_every':'%s'}",
             ok[c].every);
    wl_workload *wl = make(spec, 1, 1);
    uint64_t per = wl_steps_per_epoch(wl);
    double want = ok[c].per_epoch < 0 ? -ok[c].per_epoch : round(ok[c].per_epoch * (double)per);
    CU_ASSERT_EQUAL(wl_eval_steps(wl), want < 1 ? 1 : (uint64_t)want);
    wl_free(wl);
  }
  char err[512] = "";
  CU_ASSERT_PTR_NULL(make_in("{'type':'mf','rows':10,'cols':10,'nnz':20,'blocking':true}",
                             MF_MAX_BLOCKING_WORKERS + 1, 1, NULL, err, sizeof err));
  CU_ASSERT(unit_contains(err, "blocking: expected false with more than 2048 workers"));
}

/* Both MovieLens files load as they are: ratings.csv (header, comma, four
 * columns) and u.data (tab, four columns); names become dense ids. */
static void test_movielens_formats(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "ratings.csv",
             "userId,movieId,rating,timestamp\r\n1,31,2.5,1260759144\r\n1,1029,3.0,1260759179\r\n"
             "7,31,4.5,1260759182\r\n");
  unit_write(dir, "u.data", "196\t242\t3\t881250949\n186\t302\t3\t891717742\n\n"
                            "22\t377\t1\t878887116\n196\t377\t4\t880606923\n");
  unit_write(dir, "u.test", "22\t242\t5\t881250949\n");
  wl_workload *wl = NULL;
  char err[512] = "";
  wl = make_in("{'type':'mf','ratings':'ratings.csv','test_fraction':0}", 1, 1, dir, err,
               sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  const mf_workload *m = mf_of(wl);
  CU_ASSERT_EQUAL(m->d.rows, 2);
  CU_ASSERT_EQUAL(m->d.cols, 2);
  CU_ASSERT_EQUAL_FATAL(m->d.n_train, 3);
  CU_ASSERT_EQUAL(m->d.n_test, 0);
  CU_ASSERT(m->d.train[2].row == 1 && m->d.train[2].col == 0 && m->d.train[2].rating == 4.5f);
  wl_quality q;
  CU_ASSERT_FALSE(wl_quality_info(wl, &q)); /* nothing held out */
  ps_layout layout = {0};
  wl_tables(wl, &layout);
  CU_ASSERT_EQUAL(layout.num_tables, 2);
  CU_ASSERT_EQUAL(layout.tables[1].first, 2);
  CU_ASSERT_EQUAL(layout.tables[1].value_len, 10);
  wl_free(wl);

  wl = make_in("{'type':'mf','ratings':'u.data','test':'u.test','rank':3}", 1, 1, dir, err,
               sizeof err);
  if (!wl) fprintf(stderr, "%s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  m = mf_of(wl);
  CU_ASSERT_EQUAL(m->d.rows, 3);
  CU_ASSERT_EQUAL(m->d.cols, 3);
  CU_ASSERT_EQUAL(m->d.n_train, 4);
  CU_ASSERT_EQUAL_FATAL(m->d.n_test, 1);
  CU_ASSERT(m->d.test[0].row == 2 && m->d.test[0].col == 0 && m->d.test[0].rating == 5.0f);
  CU_ASSERT_FATAL(wl_quality_info(wl, &q));
  CU_ASSERT_STRING_EQUAL(q.name, "rmse");
  CU_ASSERT_STRING_EQUAL(q.label, "RMSE"); /* from the table of measures */
  CU_ASSERT(q.sqrt && !q.higher_better);
  wl_free(wl);

  /* A split by test_fraction: every rating lands on one side, by its index. */
  wl = make_in("{'type':'mf','ratings':'u.data','test_fraction':0.5}", 1, 1, dir, err,
               sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  size_t held = 0;
  for (uint64_t i = 0; i < 4; i++) held += mf_held_out(i, 0.5);
  CU_ASSERT_EQUAL(mf_of(wl)->d.n_test, held);
  CU_ASSERT_EQUAL(mf_of(wl)->d.n_train, 4 - held);
  wl_free(wl);
  unit_remove_tree(dir);
  free(dir);
}

/* ------------------------------------------------------------ generator */

#define GEN_SPEC "{'type':'mf','rows':300,'cols':200,'nnz':5000,'rank':4,'noise':0.2%s}"

static wl_workload *gen(const char *extra) {
  char spec[256];
  snprintf(spec, sizeof spec, GEN_SPEC, extra);
  return make(spec, 1, 1);
}

static void test_generator_deterministic(void) {
  wl_workload *a = gen(""), *b = gen(""), *c = gen(",'data_seed':43");
  const mf_data *da = &mf_of(a)->d, *db = &mf_of(b)->d, *dc = &mf_of(c)->d;
  CU_ASSERT_EQUAL(da->n_train + da->n_test, 5000);
  CU_ASSERT(da->n_test > 400 && da->n_test < 600); /* test_fraction 0.1 */
  CU_ASSERT_EQUAL_FATAL(da->n_train, db->n_train);
  CU_ASSERT_EQUAL(memcmp(da->train, db->train, da->n_train * sizeof *da->train), 0);
  CU_ASSERT_EQUAL(memcmp(da->test, db->test, da->n_test * sizeof *da->test), 0);
  bool differs = da->n_train != dc->n_train;
  for (size_t i = 0; !differs && i < da->n_train; i++)
    differs = da->train[i].row != dc->train[i].row || da->train[i].rating != dc->train[i].rating;
  CU_ASSERT(differs);
  /* Distinct (row, col) pairs, in range; skewed rows. */
  uint8_t *seen = calloc(300 * 200, 1);
  uint32_t *per_row = calloc(300, sizeof *per_row);
  bool distinct = true;
  for (int side = 0; side < 2; side++) {
    const mf_rating *v = side ? da->test : da->train;
    size_t n = side ? da->n_test : da->n_train;
    for (size_t i = 0; i < n; i++) {
      CU_ASSERT_FATAL(v[i].row < 300 && v[i].col < 200);
      if (seen[v[i].row * 200 + v[i].col]++) distinct = false;
      per_row[v[i].row]++;
    }
  }
  CU_ASSERT(distinct);
  uint32_t most = 0;
  for (int r = 0; r < 300; r++)
    if (per_row[r] > most) most = per_row[r];
  CU_ASSERT(most > 5 * 5000 / 300); /* Zipf 1.1: the hottest row is far above the mean */
  free(seen);
  free(per_row);
  wl_free(a);
  wl_free(b);
  wl_free(c);
}

/* ------------------------------------------------------------ the split */

/* Every step of an epoch of every worker: its items, checked against the
 * keys it reads. Returns the items per worker through counts (by rating). */
static void walk_epoch(const wl_workload *wl, uint32_t per_node, uint64_t seed,
                       uint32_t *times_seen,
                       void (*check)(const mf_workload *, uint32_t, uint64_t, const wl_step *,
                                     void *),
                       void *ctx) {
  const mf_workload *m = mf_of(wl);
  for (uint32_t w = 0; w < m->workers; w++) {
    wl_stream *s = wl_stream_new(wl, w / per_node, w, seed);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    wl_step st;
    for (uint64_t j = 0; j < m->steps_per_epoch; j++) {
      CU_ASSERT_FATAL(wl_next_step(s, &st));
      CU_ASSERT(st.n_items <= m->batch);
      CU_ASSERT(st.reads == st.writes && st.n_reads == st.n_writes);
      for (size_t i = 0; i < st.n_items; i++) times_seen[st.items[i]]++;
      if (check) check(m, w, j, &st, ctx);
    }
    wl_stream_free(s);
  }
}

typedef struct {
  uint32_t workers;
  int32_t *block_of; /* [sub-epoch * workers + worker]: the column block seen, -1 none */
  bool outside;
} blocking_ctx;

static void check_block(const mf_workload *m, uint32_t w, uint64_t j, const wl_step *st,
                        void *ctx) {
  blocking_ctx *b = ctx;
  uint64_t sub = j / m->steps_per_block;
  uint32_t want = (uint32_t)((w + sub) % b->workers);
  for (size_t i = 0; i < st->n_reads; i++) {
    if (st->reads[i] < m->d.rows) continue;
    uint32_t col = (uint32_t)(st->reads[i] - m->d.rows);
    uint32_t block = (uint32_t)((uint64_t)col * b->workers / m->d.cols);
    if (block != want) b->outside = true;
    b->block_of[sub * b->workers + w] = (int32_t)block;
  }
}

static void test_blocking(void) {
  /* 2 nodes x 2 workers: 4 column blocks, 4 sub-epochs an epoch. */
  wl_workload *wl = gen(",'blocking':true,'batch':50,'epochs':2");
  const mf_workload *m = mf_of(wl);
  CU_ASSERT_EQUAL(m->steps_per_epoch, m->steps_per_block); /* one worker: one block */
  wl_free(wl);
  wl = make("{'type':'mf','rows':300,'cols':200,'nnz':5000,'rank':4,'blocking':true,"
            "'batch':50,'epochs':2}", 2, 2);
  m = mf_of(wl);
  CU_ASSERT_EQUAL_FATAL(m->workers, 4);
  CU_ASSERT_EQUAL(m->steps_per_epoch, 4 * m->steps_per_block);
  CU_ASSERT_EQUAL(wl_steps_per_epoch(wl), m->steps_per_epoch);
  CU_ASSERT_EQUAL(wl_steps_per_worker(wl), 2 * m->steps_per_epoch);
  int32_t block_of[16];
  for (int i = 0; i < 16; i++) block_of[i] = -1;
  blocking_ctx b = {4, block_of, false};
  uint32_t *seen = calloc(m->d.n_train, sizeof *seen);
  walk_epoch(wl, 2, 11, seen, check_block, &b);
  CU_ASSERT_FALSE(b.outside); /* every step stays in its column block */
  for (int sub = 0; sub < 4; sub++) /* no two workers share a block in a sub-epoch */
    for (int w = 0; w < 4; w++) {
      CU_ASSERT(block_of[sub * 4 + w] >= 0);
      for (int v = 0; v < w; v++) CU_ASSERT(block_of[sub * 4 + w] != block_of[sub * 4 + v]);
    }
  for (size_t i = 0; i < m->d.n_train; i++) CU_ASSERT_EQUAL(seen[i], 1); /* one epoch: once */
  free(seen);
  wl_free(wl);
}

static void check_node_rows(const mf_workload *m, uint32_t w, uint64_t j, const wl_step *st,
                            void *ctx) {
  (void)j;
  bool *outside = ctx;
  uint32_t node = w / m->workers_per_node;
  uint64_t lo = ((uint64_t)node * m->d.rows + m->nodes - 1) / m->nodes;
  uint64_t hi = ((uint64_t)(node + 1) * m->d.rows + m->nodes - 1) / m->nodes;
  for (size_t i = 0; i < st->n_reads; i++)
    if (st->reads[i] < m->d.rows && (st->reads[i] < lo || st->reads[i] >= hi)) *outside = true;
}

/* Default: each rating once an epoch, shares within one of each other.
 * Clustering: a node's workers train only its row block. */
static void test_split_and_clustering(void) {
  wl_workload *wl = make("{'type':'mf','rows':300,'cols':200,'nnz':5000,'rank':4,"
                         "'batch':64,'epochs':3}", 3, 2);
  const mf_workload *m = mf_of(wl);
  CU_ASSERT_EQUAL_FATAL(m->workers, 6);
  uint64_t largest = 0, smallest = UINT64_MAX;
  for (uint32_t w = 0; w < 6; w++) {
    uint64_t n = m->share_off[w + 1] - m->share_off[w];
    if (n > largest) largest = n;
    if (n < smallest) smallest = n;
  }
  CU_ASSERT(largest - smallest <= 1);
  CU_ASSERT_EQUAL(m->steps_per_epoch, (largest + 63) / 64);
  uint32_t *seen = calloc(m->d.n_train, sizeof *seen);
  walk_epoch(wl, 2, 5, seen, NULL, NULL);
  for (size_t i = 0; i < m->d.n_train; i++) CU_ASSERT_EQUAL(seen[i], 1);
  free(seen);
  wl_free(wl);

  wl = make("{'type':'mf','rows':300,'cols':200,'nnz':5000,'rank':4,'batch':64,"
            "'clustering':true}", 3, 2);
  m = mf_of(wl);
  seen = calloc(m->d.n_train, sizeof *seen);
  bool outside = false;
  walk_epoch(wl, 2, 5, seen, check_node_rows, &outside);
  CU_ASSERT_FALSE(outside);
  for (size_t i = 0; i < m->d.n_train; i++) CU_ASSERT_EQUAL(seen[i], 1);
  free(seen);
  wl_free(wl);
}

/* Two streams of one worker with the same seed draw the same steps; each
 * epoch visits the share in a new order. */
static void test_streams_deterministic(void) {
  wl_workload *wl = gen(",'batch':100,'epochs':2");
  wl_stream *a = wl_stream_new(wl, 0, 0, 9), *b = wl_stream_new(wl, 0, 0, 9);
  uint64_t spe = wl_steps_per_epoch(wl);
  wl_step x, y;
  bool same_order = true;
  uint64_t *first = malloc(spe * sizeof *first);
  for (uint64_t j = 0; j < 2 * spe; j++) {
    CU_ASSERT_FATAL(wl_next_step(a, &x) && wl_next_step(b, &y));
    CU_ASSERT_EQUAL_FATAL(x.n_items, y.n_items);
    CU_ASSERT_EQUAL(memcmp(x.items, y.items, x.n_items * sizeof *x.items), 0);
    CU_ASSERT_DOUBLE_EQUAL(x.flops, 8.0 * 4 * (double)x.n_items, 0);
    if (j < spe) first[j] = x.items[0];
    else if (first[j - spe] != x.items[0]) same_order = false;
  }
  CU_ASSERT_FALSE(same_order);
  CU_ASSERT_FALSE(wl_next_step(a, &x));
  free(first);
  wl_stream_free(a);
  wl_stream_free(b);
  wl_free(wl);
}

/* stop_after: the whole run's first steps, the same ones (the same data
 * split, shuffles and keys), and no more; in steps or a share of an epoch
 * (rounded up); past the run's end, the whole run. */
static void test_stop_after(void) {
  wl_workload *whole = gen(",'batch':100,'epochs':2");
  uint64_t spe = wl_steps_per_epoch(whole);
  CU_ASSERT_FATAL(spe > 4);
  static const char *const cuts[] = {"'7 steps'", "'0.5 epochs'", "'1000000 steps'"};
  uint64_t want[] = {7, (spe + 1) / 2, 2 * spe};
  for (size_t c = 0; c < 3; c++) {
    char extra[128];
    snprintf(extra, sizeof extra, ",'batch':100,'epochs':2,'stop_after':%s", cuts[c]);
    wl_workload *cut = gen(extra);
    CU_ASSERT_EQUAL(wl_steps_per_worker(cut), want[c]);
    CU_ASSERT_EQUAL(wl_steps_per_epoch(cut), spe);
    wl_stream *a = wl_stream_new(whole, 0, 0, 9), *b = wl_stream_new(cut, 0, 0, 9);
    wl_step x, y;
    uint64_t n = 0;
    while (wl_next_step(b, &y)) {
      CU_ASSERT_FATAL(wl_next_step(a, &x));
      CU_ASSERT_EQUAL_FATAL(x.n_items, y.n_items);
      CU_ASSERT_EQUAL(memcmp(x.items, y.items, x.n_items * sizeof *x.items), 0);
      n++;
    }
    CU_ASSERT_EQUAL(n, want[c]);
    wl_stream_free(a);
    wl_stream_free(b);
    wl_free(cut);
  }
  wl_free(whole);
}

/* Kept (wl_keep_tables), a workload made of an equal object on the same
 * cluster shares the first's data: its ratings file is not read again, and
 * eval_every and stop_after still apply to each; a different cluster or
 * object reads its own. Not kept, every workload reads its file. */
static void test_kept_workloads(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "r.data", "1\t10\t3\t0\n1\t20\t1\t0\n2\t10\t5\t0\n2\t20\t2\t0\n");
  char err[512] = "", path[600];
  snprintf(path, sizeof path, "%s/r.data", dir);
  const char *spec = "{'type':'mf','ratings':'r.data','test_fraction':0,'batch':1,'epochs':3}";
  wl_keep_tables(true);
  wl_workload *a = make_in(spec, 1, 1, dir, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_EQUAL_FATAL(remove(path), 0);
  wl_workload *b = make_in("{'type':'mf','ratings':'r.data','test_fraction':0,'batch':1,"
                           "'epochs':3,'stop_after':'2 steps'}", 1, 1, dir, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_PTR_EQUAL(mf_of(a), mf_of(b));
  CU_ASSERT_EQUAL(wl_steps_per_worker(a), 12);
  CU_ASSERT_EQUAL(wl_steps_per_worker(b), 2);
  CU_ASSERT_PTR_NULL(make_in(spec, 1, 2, dir, err, sizeof err)); /* another cluster */
  wl_free(b); /* a's data stays */
  CU_ASSERT_EQUAL(mf_of(a)->d.n_train, 4);
  wl_free(a);
  wl_keep_tables(false);
  CU_ASSERT_PTR_NULL(make_in(spec, 1, 1, dir, err, sizeof err));
  unit_remove_tree(dir);
  free(dir);
}

/* Hot keys: the most rated rows and columns, by brute force. */
static void test_hot_keys(void) {
  wl_workload *wl = gen("");
  const mf_workload *m = mf_of(wl);
  size_t keys = 500;
  uint64_t *count = calloc(keys, sizeof *count);
  for (size_t i = 0; i < m->d.n_train; i++) {
    count[m->d.train[i].row]++;
    count[300 + m->d.train[i].col]++;
  }
  ps_key hot[20];
  CU_ASSERT_EQUAL_FATAL(wl_hot_keys(wl, 20, hot), 20);
  for (size_t i = 0; i < 20; i++) {
    size_t above = 0; /* keys strictly hotter, or as hot with a smaller key */
    for (size_t k = 0; k < keys; k++)
      if (count[k] > count[hot[i]] || (count[k] == count[hot[i]] && k < hot[i])) above++;
    CU_ASSERT_EQUAL(above, i);
  }
  ps_key all[600];
  size_t used = 0;
  for (size_t k = 0; k < keys; k++) used += count[k] > 0;
  CU_ASSERT_EQUAL(wl_hot_keys(wl, 600, all), used);
  free(count);
  wl_free(wl);
}

/* math "none": the same keys and flops, no items, no math, no quality. */
static void test_math_none(void) {
  wl_workload *real = gen(""), *none = gen(",'math':'none'");
  CU_ASSERT_TRUE(wl_math(real));
  CU_ASSERT_FALSE(wl_math(none));
  wl_quality q;
  CU_ASSERT_FALSE(wl_quality_info(none, &q));
  float v[4] = {0};
  wl_add_initial(none, 3, v, 4);
  CU_ASSERT(v[0] == 0 && v[3] == 0);
  wl_add_initial(real, 3, v, 4);
  CU_ASSERT(v[0] != 0);
  wl_stream *a = wl_stream_new(real, 0, 0, 4), *b = wl_stream_new(none, 0, 0, 4);
  wl_step x, y;
  uint64_t steps = 0;
  while (wl_next_step(a, &x)) {
    CU_ASSERT_FATAL(wl_next_step(b, &y));
    CU_ASSERT_EQUAL_FATAL(x.n_reads, y.n_reads);
    CU_ASSERT_EQUAL(memcmp(x.reads, y.reads, x.n_reads * sizeof *x.reads), 0);
    CU_ASSERT_DOUBLE_EQUAL(x.flops, y.flops, 0);
    CU_ASSERT(x.n_items > 0);
    CU_ASSERT_PTR_NULL(y.items);
    steps++;
  }
  CU_ASSERT_FALSE(wl_next_step(b, &y));
  CU_ASSERT_EQUAL(steps, wl_steps_per_worker(real));
  wl_stream_free(a);
  wl_stream_free(b);
  wl_free(real);
  wl_free(none);
}


/* Held-out evaluation split over 3 workers: each pulls the distinct keys of
 * ratings i with i % 3 == its rank, and their sums add up to the whole. */
static void test_eval_split(void) {
  wl_workload *wl = gen("");
  const mf_workload *m = mf_of(wl);
  size_t keys = (size_t)m->d.rows + m->d.cols;
  float *all = calloc(keys * 4, sizeof *all);
  for (size_t k = 0; k < keys; k++) wl_add_initial(wl, k, all + 4 * k, 4);
  double num[4], den[4];
  for (uint32_t workers = 1; workers <= 3; workers += 2) {
    double sum_num = 0, sum_den = 0;
    for (uint32_t r = 0; r < workers; r++) {
      ps_key *k;
      size_t n;
      CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, r, workers, &k, &n), PS_OK);
      uint8_t *needed = calloc(keys, 1), *listed = calloc(keys, 1);
      for (size_t i = r; i < m->d.n_test; i += workers) {
        needed[m->d.test[i].row] = 1;
        needed[m->d.rows + m->d.test[i].col] = 1;
      }
      float *vals = malloc((n ? n : 1) * 4 * sizeof *vals);
      size_t *off = malloc((n ? n : 1) * sizeof *off);
      for (size_t i = 0; i < n; i++) {
        CU_ASSERT_FATAL(k[i] < keys);
        CU_ASSERT(needed[k[i]] && !listed[k[i]]); /* needed, and listed once */
        listed[k[i]] = 1;
        off[i] = 4 * i;
        memcpy(vals + off[i], all + 4 * k[i], 4 * sizeof *vals);
      }
      for (size_t j = 0; j < keys; j++) CU_ASSERT(needed[j] == listed[j]);
      wl_eval_in in = {k, n, vals, off};
      double a, b;
      CU_ASSERT_EQUAL(wl->type->eval(wl->impl, r, workers, &in, &a, &b), PS_OK);
      sum_num += a;
      sum_den += b;
      free(k), free(vals), free(off), free(needed), free(listed);
    }
    num[workers] = sum_num;
    den[workers] = sum_den;
  }
  CU_ASSERT_DOUBLE_EQUAL(den[1], (double)m->d.n_test, 0);
  CU_ASSERT_DOUBLE_EQUAL(den[3], den[1], 0);
  CU_ASSERT_DOUBLE_EQUAL(num[3], num[1], 1e-9 * num[1]);
  free(all);
  wl_free(wl);
}

/* ------------------------------------------------------------- learning */

static void send_forbidden(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  CU_FAIL("a 1-node cluster sent a message");
  free(buf);
}

static void wake_ignored(void *ctx, uint32_t worker, ps_ticket t) {
  (void)ctx, (void)worker, (void)t;
}

typedef struct {
  double clock;
  uint64_t math_steps;
} learn_env;

static int env_wait(void *ctx, ps_worker *w, ps_ticket t) {
  (void)ctx;
  CU_ASSERT(ps_worker_done(w, t)); /* every key is local */
  return ps_worker_done(w, t) ? PS_OK : PS_ERR_PROTOCOL;
}

static void env_compute(void *ctx, double flops, bool math_done) {
  learn_env *e = ctx;
  e->math_steps += math_done;
  e->clock += flops / 1e9;
}

static double env_now(void *ctx) { return ((learn_env *)ctx)->clock; }

/* The held-out RMSE of the values the node holds now (initial values
 * added), over all held-out ratings. */
static double node_rmse(const wl_workload *wl, ps_node *node) {
  ps_key *keys;
  size_t n;
  CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, 0, 1, &keys, &n), PS_OK);
  uint32_t rank = (uint32_t)mf_of(wl)->rank;
  float *vals = malloc(n * rank * sizeof *vals);
  size_t *off = malloc(n * sizeof *off);
  for (size_t i = 0; i < n; i++) {
    off[i] = i * rank;
    CU_ASSERT_EQUAL(ps_node_read_owned(node, keys[i], vals + off[i]), PS_OK);
    wl_add_initial(wl, keys[i], vals + off[i], rank);
  }
  wl_eval_in in = {keys, n, vals, off};
  double num, den;
  CU_ASSERT_EQUAL(wl->type->eval(wl->impl, 0, 1, &in, &num, &den), PS_OK);
  free(keys);
  free(vals);
  free(off);
  return sqrt(num / den);
}

/* A 200 x 200 rank-5 matrix, 8000 ratings, 2 workers on one node, run one
 * after the other through wl_drive: worker 0's first epoch to worker 1's
 * last, the training loss per rating must fall by a large factor, and the
 * held-out RMSE must end far below that of predicting the training mean. */
static void test_learning_through_the_driver(void) {
  wl_workload *wl = make("{'type':'mf','rows':200,'cols':200,'nnz':8000,'rank':5,"
                         "'noise':0.1,'epochs':20,'batch':50}", 1, 2);
  const mf_workload *m = mf_of(wl);
  ps_layout layout = {0};
  wl_tables(wl, &layout);
  layout.num_nodes = 1;
  layout.partition = PS_PARTITION_HASH;
  ps_node_config cfg;
  ps_node_config_default(&cfg);
  cfg.layout = layout;
  cfg.workers = 2;
  cfg.env = (ps_env){.send = send_forbidden, .wake = wake_ignored};
  ps_node *node = ps_node_new(&cfg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(node);

  double mean = 0, mean_sq = 0;
  for (size_t i = 0; i < m->d.n_train; i++) mean += m->d.train[i].rating;
  mean /= (double)m->d.n_train;
  for (size_t i = 0; i < m->d.n_test; i++)
    mean_sq += (m->d.test[i].rating - mean) * (m->d.test[i].rating - mean);
  double mean_rmse = sqrt(mean_sq / (double)m->d.n_test);
  double rmse_before = node_rmse(wl, node);

  learn_env e = {0};
  double first_loss = 0, last_loss = 0, q_num = 0, q_den = 0;
  uint64_t epochs = 0;
  for (uint32_t w = 0; w < 2; w++) {
    wl_stream *s = wl_stream_new(wl, 0, w, 17);
    wl_driver_env env = {.ctx = &e, .wait = env_wait, .compute = env_compute, .now = env_now,
                         .rank = w, .workers = 2};
    wl_driver_stats stats;
    CU_ASSERT_EQUAL_FATAL(wl_drive(ps_node_worker(node, w), s, &env, 2, &stats), PS_OK);
    CU_ASSERT_EQUAL_FATAL(stats.epochs, 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(stats.epoch_quality);
    const wl_epoch_quality *q = stats.epoch_quality;
    if (w == 0) first_loss = q[0].loss / q[0].examples;
    last_loss = q[19].loss / q[19].examples;
    if (w == 1) { /* its share of the held-out data, at its end */
      q_num = q[19].q_num;
      q_den = q[19].q_den;
    }
    epochs += stats.epochs;
    printf("\n  worker %u: loss/rating by epoch", w);
    for (size_t i = 0; i < stats.epochs; i += 2) printf(" %.4f", q[i].loss / q[i].examples);
    free(stats.epoch_end_s);
    free(stats.epoch_quality);
    free(stats.evals);
    wl_stream_free(s);
  }
  double rmse_after = node_rmse(wl, node);
  printf("\n  training loss/rating %.4f -> %.4f; held-out RMSE %.4f -> %.4f "
         "(predicting the mean: %.4f; worker 1's share at the end: %.4f)\n",
         first_loss, last_loss, rmse_before, rmse_after, mean_rmse, sqrt(q_num / q_den));
  CU_ASSERT_EQUAL(e.math_steps, 2 * wl_steps_per_worker(wl));
  CU_ASSERT(last_loss < first_loss / 10);
  CU_ASSERT(rmse_after < 0.5 * mean_rmse);
  CU_ASSERT(rmse_after < 0.5 * rmse_before);
  /* Worker 1's evaluation covers the odd held-out ratings. */
  CU_ASSERT_DOUBLE_EQUAL(q_den, (double)(m->d.n_test / 2), 0);
  CU_ASSERT(sqrt(q_num / q_den) < 0.5 * mean_rmse);
  ps_node_free(node);
  wl_free(wl);
}

PSLAB_SUITE("mf", {"gradient_matches_finite_differences", test_gradient_matches_finite_differences},
            {"adagrad_step", test_adagrad_step},
            {"loader_errors", test_loader_errors}, {"spec_errors", test_spec_errors},
            {"movielens_formats", test_movielens_formats},
            {"generator_deterministic", test_generator_deterministic},
            {"blocking", test_blocking}, {"split_and_clustering", test_split_and_clustering},
            {"streams_deterministic", test_streams_deterministic},
            {"stop_after", test_stop_after}, {"kept_workloads", test_kept_workloads},
            {"hot_keys", test_hot_keys}, {"eval_split", test_eval_split}, {"math_none", test_math_none},
            {"learning_through_the_driver", test_learning_through_the_driver})
