/*
 * The `mf` workload's data: a ratings matrix read from a file or generated,
 * and its held-out part.
 *
 * Files. One rating a line, "user item rating", the fields separated by tabs,
 * commas or spaces (runs of them count as one separator), further columns
 * ignored: MovieLens's ratings.csv (userId,movieId,rating,timestamp, with its
 * header) and u.data (tab-separated, four columns) both load as they are. A
 * first line whose rating is not a number is a header; blank lines are
 * skipped. User and item names become dense ids in order of first
 * appearance (wl_dict), so rows = distinct users and cols = distinct items.
 * A held-out file ("test") has the same format; its users and items must be
 * in the training file (an unknown one is an error naming file and line).
 *
 * Generator. Hidden factors U (rows x true_rank) and V (cols x true_rank)
 * with N(0, true_rank^-1/4) entries, so that a hidden dot product has
 * variance 1; each rating picks a row and a column by Zipf laws of exponent
 * `skew` (wl_zipf: hot rows and columns spread by its fixed permutation),
 * distinct (row, column) pairs only, and is dot(U_r, V_c) plus N(0, noise)
 * noise. Everything comes from data_seed, never from a run's seed: every run
 * and every worker sees the same matrix.
 *
 * Held-out split without a test file: rating i (file or generation order) is
 * held out when a fixed hash of i falls below test_fraction.
 */
#include "workloads/mf.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mf_data_fields[] = {"ratings", "test", "test_fraction", "rows",
                                      "cols",    "nnz",  "skew",          "true_rank",
                                      "noise",   "data_seed", NULL};

/* The generator's fields, which a ratings file replaces. */
static const char *const generator_fields[] = {"rows", "cols", "nnz", "skew", "true_rank",
                                               "noise", NULL};

#define MF_DEFAULT_DATA_SEED 42
#define MF_SPLIT_SALT 0x6d6673706c6974ULL /* "mfsplit" */

bool mf_held_out(uint64_t i, double fraction) {
  if (fraction <= 0) return false;
  double u = (double)(ps_mix64(i ^ MF_SPLIT_SALT) >> 11) * 0x1.0p-53;
  return u < fraction;
}

/* ----------------------------------------------------------- rating lists */

typedef struct {
  mf_rating *v;
  size_t n, cap;
} rating_list;

static bool list_add(rating_list *l, uint32_t row, uint32_t col, float rating) {
  mf_rating *v = wl_grow(l->v, &l->cap, l->n + 1, sizeof *v);
  if (!v) return false;
  l->v = v;
  l->v[l->n++] = (mf_rating){row, col, rating};
  return true;
}

/* --------------------------------------------------------------- files */

/* A line's first three fields, split on tabs, commas and spaces. */
typedef struct {
  char *field[3];
  size_t fields; /* how many there are in all (at least those 3 to be valid) */
} line_fields;

static bool is_sep(char c) { return c == '\t' || c == ',' || c == ' '; }

/* Splits line in place (NUL-terminates the first three fields). */
static void split_line(char *line, line_fields *f) {
  f->fields = 0;
  char *p = line;
  for (;;) {
    while (*p && is_sep(*p)) p++;
    if (!*p) return;
    char *start = p;
    while (*p && !is_sep(*p)) p++;
    if (f->fields < 3) f->field[f->fields] = start;
    f->fields++;
    if (!*p) return;
    if (f->fields <= 3) *p = '\0';
    p++;
  }
}

static bool parse_rating(const char *s, float *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v) || fabs(v) > 3.0e38) return false;
  *out = (float)v;
  return true;
}

static bool blank(const char *line) {
  for (; *line; line++)
    if (!is_sep(*line)) return false;
  return true;
}

typedef struct {
  wl_dict users, items;
  rating_list train, test;
} file_data;

/* Reads one ratings file. training: names are added to the dictionaries and
 * a rating goes to train, or to test when split by test_fraction; otherwise
 * (a held-out file) names must be known and ratings go to test. */
static bool read_ratings(const wl_context *ctx, const char *field, const char *file,
                         bool training, double test_fraction, file_data *fd, char *err,
                         size_t errlen) {
  wl_reader r;
  if (!wl_reader_open(&r, ctx, field, file, err, errlen)) return false;
  bool ok = true, header = false, failed = false;
  uint64_t index = 0; /* ratings read so far */
  char *line;
  while (ok && (line = wl_reader_next(&r, NULL, &failed))) {
    if (blank(line)) continue;
    line_fields f;
    split_line(line, &f);
    if (f.fields < 3) {
      ok = wl_reader_error(&r, err, errlen,
                           "expected 3 columns (user, item, rating), found %zu", f.fields);
      break;
    }
    float rating;
    if (!parse_rating(f.field[2], &rating)) {
      if (r.line == 1) { /* a header */
        header = true;
        continue;
      }
      ok = wl_reader_error(&r, err, errlen, "rating: expected a number, found \"%.40s\"",
                           f.field[2]);
      break;
    }
    uint32_t u, i;
    if (training) {
      u = wl_dict_add(&fd->users, f.field[0], strlen(f.field[0]), NULL);
      i = wl_dict_add(&fd->items, f.field[1], strlen(f.field[1]), NULL);
      if (u == UINT32_MAX || i == UINT32_MAX) {
        ok = wl_reader_error(&r, err, errlen, "out of memory");
        break;
      }
    } else {
      u = wl_dict_find(&fd->users, f.field[0], strlen(f.field[0]));
      i = wl_dict_find(&fd->items, f.field[1], strlen(f.field[1]));
      if (u == UINT32_MAX || i == UINT32_MAX) {
        ok = wl_reader_error(&r, err, errlen, "%s \"%.40s\" is not in the training ratings",
                             u == UINT32_MAX ? "user" : "item",
                             u == UINT32_MAX ? f.field[0] : f.field[1]);
        break;
      }
    }
    bool to_test = !training || mf_held_out(index, test_fraction);
    if (!list_add(to_test ? &fd->test : &fd->train, u, i, rating)) {
      ok = wl_reader_error(&r, err, errlen, "out of memory");
      break;
    }
    index++;
  }
  if (ok && failed) ok = wl_reader_error(&r, err, errlen, "cannot read the line");
  if (ok && index == 0)
    snprintf(err, errlen, "%s: %s: expected ratings, found %s", field, r.path,
             header ? "only a header" : "an empty file");
  wl_reader_close(&r);
  return ok && index > 0;
}

static bool load_files(const cJSON *json, const wl_context *ctx, const char *ratings,
                       mf_data *d, char *err, size_t errlen) {
  for (size_t i = 0; generator_fields[i]; i++) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(json, generator_fields[i]);
    if (g) {
      wlj_error(err, errlen, generator_fields[i],
                "nothing: \"ratings\" names a file, which gives the data", g);
      return false;
    }
  }
  const char *test = NULL;
  const cJSON *tf = cJSON_GetObjectItemCaseSensitive(json, "test_fraction");
  double fraction = 0;
  if (cJSON_GetObjectItemCaseSensitive(json, "test")) {
    if (!wlj_string(json, "test", NULL, &test, err, errlen)) return false;
    if (tf) {
      wlj_error(err, errlen, "test_fraction", "nothing: \"test\" names the held-out file", tf);
      return false;
    }
  } else if (!wlj_number(json, "test_fraction", 0, 0.99, 0.1, &fraction, err, errlen)) {
    return false;
  }
  file_data fd = {0};
  bool ok = read_ratings(ctx, "ratings", ratings, true, fraction, &fd, err, errlen) &&
            (!test || read_ratings(ctx, "test", test, false, 0, &fd, err, errlen));
  if (ok && fd.train.n == 0) {
    wlj_error(err, errlen, "test_fraction", "a fraction that leaves training ratings", tf);
    ok = false;
  }
  d->rows = fd.users.count;
  d->cols = fd.items.count;
  d->user_names = wl_dict_take_names(&fd.users);
  d->item_names = wl_dict_take_names(&fd.items);
  d->train = fd.train.v;
  d->n_train = fd.train.n;
  d->test = fd.test.v;
  d->n_test = fd.test.n;
  return ok;
}

/* ------------------------------------------------------------ generator */

typedef struct {
  uint64_t rows, cols, nnz, true_rank;
  double skew, noise, fraction;
} gen_params;

static bool gen_parse(const cJSON *json, uint64_t rank, gen_params *g, char *err,
                      size_t errlen) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(json, "test");
  if (t) {
    wlj_error(err, errlen, "test", "nothing: generated data is split by test_fraction", t);
    return false;
  }
  if (!wlj_uint(json, "rows", 1, 1u << 30, NULL, &g->rows, err, errlen) ||
      !wlj_uint(json, "cols", 1, 1u << 30, NULL, &g->cols, err, errlen) ||
      !wlj_uint(json, "nnz", 1, UINT32_MAX, NULL, &g->nnz, err, errlen) ||
      !wlj_number(json, "skew", 0, INFINITY, 1.1, &g->skew, err, errlen) ||
      !wlj_uint(json, "true_rank", 1, 4096, &rank, &g->true_rank, err, errlen) ||
      !wlj_number(json, "noise", 0, INFINITY, 0.1, &g->noise, err, errlen) ||
      !wlj_number(json, "test_fraction", 0, 0.99, 0.1, &g->fraction, err, errlen))
    return false;
  if ((double)g->nnz > (double)g->rows * (double)g->cols) {
    char expected[96];
    snprintf(expected, sizeof expected, "at most rows * cols (%.0f)",
             (double)g->rows * (double)g->cols);
    wlj_error(err, errlen, "nnz", expected, cJSON_GetObjectItemCaseSensitive(json, "nnz"));
    return false;
  }
  return true;
}

/* A set of (row, col) pairs: open addressing on row << 32 | col, + 1. */
typedef struct {
  uint64_t *slots; /* 0: empty */
  size_t mask;
} pair_set;

static bool pair_insert(pair_set *s, uint32_t row, uint32_t col) {
  uint64_t v = ((uint64_t)row << 32 | col) + 1;
  size_t i = (size_t)ps_mix64(v) & s->mask;
  while (s->slots[i]) {
    if (s->slots[i] == v) return false;
    i = (i + 1) & s->mask;
  }
  s->slots[i] = v;
  return true;
}

/* Hidden factors: n x rank, N(0, sigma) entries. */
static double *hidden_factors(gsl_rng *rng, uint64_t n, uint64_t rank, double sigma) {
  double *f = malloc(n * rank * sizeof *f);
  if (!f) return NULL;
  for (uint64_t i = 0; i < n * rank; i++) f[i] = gsl_ran_gaussian(rng, sigma);
  return f;
}

/* Draws the distinct pairs: every draw is a fresh (row, col) by the two Zipf
 * laws; a skew so steep that nnz distinct pairs take more than 100 draws
 * each on average is an error rather than a long wait. */
static bool gen_ratings(const gen_params *g, gsl_rng *rng, const double *u, const double *v,
                        rating_list *train, rating_list *test, char *err, size_t errlen) {
  wl_zipf zr, zc;
  bool zr_ok = wl_zipf_init(&zr, g->rows, g->skew) == PS_OK;
  bool zc_ok = zr_ok && wl_zipf_init(&zc, g->cols, g->skew) == PS_OK;
  size_t cap = 16;
  while (cap < 2 * g->nnz) cap *= 2;
  pair_set set = {calloc(cap, sizeof(uint64_t)), cap - 1};
  bool ok = zc_ok && set.slots;
  if (!ok) snprintf(err, errlen, "nnz: out of memory for the generator");
  uint64_t made = 0, draws = 0, max_draws = 100 * g->nnz + 10000;
  while (ok && made < g->nnz) {
    if (draws++ == max_draws) {
      snprintf(err, errlen,
               "nnz: expected at most the distinct (row, col) pairs the skew reaches, found %llu "
               "(%llu distinct after %llu draws)",
               (unsigned long long)g->nnz, (unsigned long long)made,
               (unsigned long long)max_draws);
      ok = false;
      break;
    }
    uint32_t r = (uint32_t)wl_zipf_draw(&zr, rng), c = (uint32_t)wl_zipf_draw(&zc, rng);
    if (!pair_insert(&set, r, c)) continue;
    double dot = 0;
    for (uint64_t k = 0; k < g->true_rank; k++)
      dot += u[r * g->true_rank + k] * v[c * g->true_rank + k];
    float rating = (float)(dot + (g->noise > 0 ? gsl_ran_gaussian(rng, g->noise) : 0));
    rating_list *to = mf_held_out(made, g->fraction) ? test : train;
    if (!list_add(to, r, c, rating)) {
      snprintf(err, errlen, "nnz: out of memory for %llu ratings", (unsigned long long)g->nnz);
      ok = false;
    }
    made++;
  }
  free(set.slots);
  if (zc_ok) wl_zipf_free(&zc);
  if (zr_ok) wl_zipf_free(&zr);
  return ok;
}

static bool generate(const cJSON *json, uint64_t rank, mf_data *d, char *err, size_t errlen) {
  gen_params g;
  if (!gen_parse(json, rank, &g, err, errlen)) return false;
  gsl_rng *rng = wl_rng_new(d->data_seed, 0);
  double sigma = pow((double)g.true_rank, -0.25);
  double *u = rng ? hidden_factors(rng, g.rows, g.true_rank, sigma) : NULL;
  double *v = u ? hidden_factors(rng, g.cols, g.true_rank, sigma) : NULL;
  rating_list train = {0}, test = {0};
  bool ok = v != NULL;
  if (!ok)
    snprintf(err, errlen, "rows: out of memory for the hidden factors");
  else
    ok = gen_ratings(&g, rng, u, v, &train, &test, err, errlen);
  if (ok && train.n == 0) {
    wlj_error(err, errlen, "test_fraction", "a fraction that leaves training ratings",
              cJSON_GetObjectItemCaseSensitive(json, "test_fraction"));
    ok = false;
  }
  free(u);
  free(v);
  if (rng) gsl_rng_free(rng);
  d->rows = (uint32_t)g.rows;
  d->cols = (uint32_t)g.cols;
  d->train = train.v;
  d->n_train = train.n;
  d->test = test.v;
  d->n_test = test.n;
  return ok;
}

/* ------------------------------------------------------------------ door */

bool mf_data_load(const cJSON *json, const wl_context *ctx, uint64_t rank, mf_data *d,
                  char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  const uint64_t seed_default = MF_DEFAULT_DATA_SEED;
  if (!wlj_uint(json, "data_seed", 0, UINT64_MAX, &seed_default, &d->data_seed, err, errlen))
    return false;
  bool ok;
  if (cJSON_GetObjectItemCaseSensitive(json, "ratings")) {
    const char *ratings;
    ok = wlj_string(json, "ratings", NULL, &ratings, err, errlen) &&
         load_files(json, ctx, ratings, d, err, errlen);
  } else {
    ok = generate(json, rank, d, err, errlen);
  }
  if (!ok) mf_data_free(d);
  return ok;
}

void mf_data_free(mf_data *d) {
  wl_names_free(d->user_names, d->rows);
  wl_names_free(d->item_names, d->cols);
  free(d->train);
  free(d->test);
  memset(d, 0, sizeof *d);
}
