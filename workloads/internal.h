/*
 * workloads/ internals: what the folder's files share, behind the one door
 * (workload.h). Nothing outside workloads/ includes this, tests excepted.
 *
 * A workload type (zipf, mf, kge, w2v, trace, dnn) is a wl_type table;
 * workload.c looks it up by the JSON "type" and dispatches through it. The
 * step storage every stream needs (a ring of the last `keep` steps' key
 * arrays) is written once, in workload.c: a type's next_step fills the slot it
 * is handed. Also here: JSON validation helpers with the one message format
 * (json_fields.c) and the Zipf sampler with its rank-to-key permutation
 * (zipf_dist.c), which the key-skewed generators reuse.
 */
#ifndef PSLAB_WORKLOADS_INTERNAL_H
#define PSLAB_WORKLOADS_INTERNAL_H

#include "workloads/workload.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>

/* wl_keep_tables' other half: from now on (keep) or no longer, wl_create
 * keeps the workloads it creates (at most 8) and shares a kept one's data
 * with every workload made of an equal object (less eval_every and
 * stop_after) on the same cluster; turning it off frees them. */
void wl_keep_workloads(bool keep);

/* ------------------------------------------------------- workload types */

/* What a type tells the dispatcher about a workload it created. */
typedef struct {
  uint64_t steps_per_worker;
  uint64_t steps_per_epoch;
  size_t max_step_keys;  /* keys one step's arrays may hold (slot size) */
  size_t max_step_items; /* items one step may name (0: none) */
  bool samples;          /* steps draw samples */
  bool math;             /* steps compute (math "real"): the type has math */
  bool has_quality;      /* the type evaluates held-out data (quality) */
  uint64_t eval_steps;   /* "eval_every" in steps per worker (0: epoch ends only) */
  uint64_t stop_steps;   /* "stop_after" in steps per worker (0: none); steps_per_worker
                            is then at most it */
  wl_quality quality;    /* when has_quality */
} wl_info;

/* What the driver hands a step's math, and what it takes back. Values are
 * concatenated, each as long as its key's table says; *_off[i] is where key
 * i's value starts. Initial values are already added (wl_add_initial). */
typedef struct {
  const float *reads;       /* values of step->reads */
  const size_t *read_off;
  const ps_key *samples;    /* the keys sampled for the step (n_samples) */
  const float *sample_vals;
  const size_t *sample_off;
  size_t n_samples;
  float *write_deltas;      /* zeroed room for step->writes' deltas: add */
  const size_t *write_off;
  float *sample_deltas;     /* zeroed room for the samples' deltas: add */
  double loss;              /* add the step's training loss (a sum) */
  double examples;          /* add the examples that loss is over */
} wl_math_io;

/* Held-out evaluation, split over the workers of a run. */
typedef struct {
  const ps_key *keys; /* the keys pulled, as eval_keys gave them */
  size_t n;
  const float *vals;  /* their values, initial values added */
  const size_t *off;  /* where key i's value starts in vals */
} wl_eval_in;

typedef struct wl_type {
  const char *name;
  /* Parses and checks json (an object); NULL with a message in err. */
  void *(*create)(const struct cJSON *json, const wl_context *ctx, wl_info *info,
                  char *err, size_t errlen);
  void (*free)(void *impl);
  void (*tables)(const void *impl, ps_layout *layout);
  /* NULL on no memory or a node out of range. */
  void *(*stream_new)(const void *impl, uint32_t node, uint32_t worker_rank,
                      uint64_t seed);
  void (*stream_free)(void *stream);
  /* Draws the next step with its keys in slot (max_step_keys keys) and its
   * items in items (max_step_items; NULL when the type names none). */
  bool (*next_step)(void *stream, ps_key *slot, uint64_t *items, wl_step *out);
  /* The sample distribution (see wl_sample_distribution); NULL when the
   * type never samples. */
  int (*sample_distribution)(const void *impl, ps_key *first, uint64_t *count,
                             double **weights);

  /* Optional (NULL: wl_hot_keys estimates from sample streams): the n
   * hottest keys by the data's own access counts, hottest first, ties by
   * key; returns how many (0 on no memory). */
  size_t (*hot_keys)(const void *impl, size_t n, ps_key *out);

  /* ---- real math: all NULL for a type without it; used only when the
   * workload's info.math is true. */
  /* Adds key k's initial value (len floats) to val: a fixed function of the
   * key and the workload (never of a worker or a node). */
  void (*initial)(const void *impl, ps_key k, float *val, uint32_t len);
  /* The step's math: reads io's values, adds the step's deltas and its loss.
   * Called on the step's worker with that worker's stream (for scratch
   * space). PS_OK or a negative ps_status. */
  int (*math)(void *stream, const wl_step *st, wl_math_io *io);
  /* The keys worker `rank` of `workers` pulls to evaluate its share of the
   * held-out data (malloc'd into *keys, *n of them; the caller frees; n may
   * be 0). PS_OK or PS_ERR_NOMEM. NULL when !info.has_quality. */
  int (*eval_keys)(const void *impl, uint32_t rank, uint32_t workers, ps_key **keys,
                   size_t *n);
  /* That worker's share of the quality, from the pulled values: *num and
   * *den, which add up over workers (wl_quality says what they become). */
  int (*eval)(const void *impl, uint32_t rank, uint32_t workers, const wl_eval_in *in,
              double *num, double *den);
  /* The name of the quality measure (in wl_quality_measures) that a
   * workload made of json evaluates, from json alone: create takes its
   * info.quality from it too (wl_quality_named). NULL when !eval, or when
   * json asks for no measure (w2v without similarity or analogy). */
  const char *(*quality_name)(const struct cJSON *json);

  /* Optional: writes the workload's own files of trained parameters into
   * dir (w2v: vectors.txt), from the value of every key (table t's keys at
   * vals[t], key by key, initial values added). 0, or -1 with a message in
   * err. */
  int (*save)(const void *impl, const ps_layout *layout, const float *const *vals,
              const char *dir, char *err, size_t errlen);
} wl_type;

/* Every workload type, NULL-terminated (the registry of workload.c). */
extern const wl_type *const wl_types[];
/* A copy of the entry called name of the measures' table (a zeroed one
 * with name "quality" when there is none: a type's mistake, caught by the
 * tests that walk wl_types). */
wl_quality wl_quality_named(const char *name);

/* A file written whole or not at all: wl_save_begin opens "<path>.tmp"
 * (*tmp, malloc'd); wl_save_end closes it and, when ok and every write
 * went through, renames it to path, else removes it; frees tmp. NULL or -1
 * with a message in err naming the file. */
FILE *wl_save_begin(const char *path, char **tmp, char *err, size_t errlen);
int wl_save_end(FILE *f, char *tmp, const char *path, bool ok, char *err, size_t errlen);
/* "<dir>/<name>" (malloc'd; NULL on no memory). */
char *wl_save_path(const char *dir, const char *name);
/* One of a workload's own files of saved parameters, "<dir>/<name>",
 * written whole or not at all (wl_save_begin and wl_save_end): open gives
 * f, or false with a message in err; close ends it (kept when ok and every
 * write went through) and frees the rest. 0, or -1 with a message in err. */
typedef struct {
  FILE *f;
  char *path, *tmp;
} wl_save_file;
bool wl_save_open(wl_save_file *s, const char *dir, const char *name, char *err, size_t errlen);
int wl_save_close(wl_save_file *s, bool ok, char *err, size_t errlen);
/* Writes x as %.9g (reads back as the same float). */
void wl_save_float(FILE *f, float x);
/* Writes n lines to f, fields separated by sep: line i's name (names[i], or
 * the number i when names is NULL; put in double quotes, quotes doubled, when
 * it holds sep, a quote or a line break), then `len` floats from vals + i *
 * stride, each as wl_save_float. */
void wl_save_rows(FILE *f, char sep, char *const *names, uint64_t n, const float *vals,
                  uint32_t len, uint64_t stride);

extern const wl_type wl_type_zipf;
extern const wl_type wl_type_mf;
extern const wl_type wl_type_kge;
extern const wl_type wl_type_w2v;
extern const wl_type wl_type_trace;
extern const wl_type wl_type_dnn;

struct wl_workload {
  const wl_type *type;
  void *impl;
  wl_info info;
  uint32_t num_nodes;
  wl_context ctx;
  bool shared; /* impl is a kept workload's (wl_keep_workloads): not freed */
};

struct wl_stream {
  const wl_type *type;
  void *impl;
  const wl_workload *wl;
  size_t keep;      /* steps whose arrays stay valid */
  size_t slots;     /* min(keep, steps_per_worker): ring length */
  size_t slot_keys; /* keys per slot (at least 1) */
  ps_key *ring;     /* slots * slot_keys, allocated on first need */
  size_t slot_items; /* items per slot (0: the type names none) */
  uint64_t *item_ring; /* slots * slot_items */
  uint64_t drawn;   /* steps drawn so far */
  uint64_t limit;   /* the stream ends after this many (UINT64_MAX: none) */
};

/* The generator of one worker's stream: mt19937 seeded from (seed,
 * worker_rank), so callers may pass the run's seed to every worker. NULL on
 * no memory. Touches no global state (no gsl_rng_env_setup). */
gsl_rng *wl_rng_new(uint64_t seed, uint32_t worker_rank);

/* ------------------------------------------------------ JSON validation */

/* Largest integer a JSON number holds exactly; the bound of "an integer >= n". */
#define WLJ_INT_MAX 9007199254740992.0 /* 2^53 */

/* Writes "<field>: expected <expected>, found <what found is>" into err;
 * found NULL means the field is missing ("found nothing"). */
void wlj_error(char *err, size_t errlen, const char *field,
               const char *expected, const struct cJSON *found);
/* Describes a JSON value for a message: 3, "text", true, null, an array... */
void wlj_describe(const struct cJSON *v, char *buf, size_t len);
/* Checks json is an object whose fields are all in known (NULL-terminated),
 * each present once. false with a message in err. */
bool wlj_check_fields(const struct cJSON *json, const char *const *known,
                      char *err, size_t errlen);
/* Reads an integer field in [min, max]; def NULL makes it required. */
bool wlj_uint(const struct cJSON *json, const char *field, uint64_t min,
              uint64_t max, const uint64_t *def, uint64_t *out, char *err,
              size_t errlen);
/* Reads a number field in [min, max] (max may be INFINITY), default def. */
bool wlj_number(const struct cJSON *json, const char *field, double min,
                double max, double def, double *out, char *err,
                size_t errlen);

/* Reads a boolean field (true or false), def when missing. */
bool wlj_bool(const struct cJSON *json, const char *field, bool def, bool *out, char *err,
              size_t errlen);
/* Reads a string field; def NULL makes it required. *out borrows from json. */
bool wlj_string(const struct cJSON *json, const char *field, const char *def,
                const char **out, char *err, size_t errlen);
/* Reads a string field that must be one of choices (NULL-terminated); its
 * index into *out; def_index when missing (SIZE_MAX: required). */
bool wlj_choice(const struct cJSON *json, const char *field, const char *const *choices,
                size_t def_index, size_t *out, char *err, size_t errlen);
/* The fields every computing workload has: "math" ("real", the default, or
 * "none": the same access pattern with no arithmetic) into info->math, and
 * "target_quality" (a number; needs a quality measure) into info->quality.
 * Call after info->has_quality and info->quality's name and direction are
 * set. */
bool wlj_math_fields(const struct cJSON *json, wl_info *info, char *err, size_t errlen);
/* "eval_every" (every type with a quality measure takes it): a count of
 * steps per worker ("250 steps") or a fraction of an epoch ("0.25 epochs")
 * into info->eval_steps, once info's steps_per_epoch is known (0 when the
 * field is missing). false with a message in err: a bare number, another
 * unit, or a workload with nothing to evaluate. */
bool wlj_eval_every(const struct cJSON *json, wl_info *info, char *err, size_t errlen);
/* "stop_after" (mf, kge, w2v): the run's first steps only, in the forms of
 * eval_every ("250 steps", "0.25 epochs"): each worker's stream ends there
 * (wl_stream_new), everything else (data split, shuffles, learning-rate
 * schedule) as in the whole run, so the run is the whole run's beginning.
 * Sets info->stop_steps and lowers info->steps_per_worker to it. false with
 * a message in err. */
bool wlj_stop_after(const struct cJSON *json, wl_info *info, char *err, size_t errlen);

/* The "optimizer" field of the training workloads whose step math is plain
 * SGD (mf, w2v): "sgd" (the default) or "adagrad". false with a message in
 * err (a near miss gets a "did you mean"). */
typedef enum { WL_OPT_SGD, WL_OPT_ADAGRAD } wl_optimizer;
bool wlj_optimizer(const struct cJSON *json, wl_optimizer *out, char *err, size_t errlen);

/* ------------------------------------------------------------- AdaGrad */

/* AdaGrad's state lives in the value itself, as kge stores it (and Lapse):
 * a key of `len` parameters holds [parameters | accumulated squared
 * gradients], 2 len floats, so the store, relocation and replication carry
 * the state with the parameters; the accumulators start at 0 (initial
 * values touch the parameters only) and a step pushes, from the pulled
 * accumulator acc and the step's gradient g (summed over the step, per
 * key), acc += g^2 and param -= lr g / sqrt(acc + g^2 + 1e-10). */
#define WL_ADAGRAD_EPS 1e-10

/* Floats a key holds for `len` parameters under optimizer o. */
static inline uint32_t wl_value_len(wl_optimizer o, uint32_t len) {
  return o == WL_OPT_ADAGRAD ? 2 * len : len;
}

/* One float: the deltas of the parameter and of its accumulator. */
static inline void wl_adagrad(double lr, double g, float acc, float *d_param, float *d_acc) {
  double sum = acc + g * g;
  *d_param = (float)(-lr * g / sqrt(sum > 0 ? sum + WL_ADAGRAD_EPS : WL_ADAGRAD_EPS));
  *d_acc = (float)(g * g);
}

/* One key: v is its pulled value [params | acc]; d's first len floats hold
 * the step's gradient on entry and the parameters' deltas on return, its
 * last len the accumulators'. */
static inline void wl_adagrad_key(double lr, const float *v, float *d, uint32_t len) {
  for (uint32_t i = 0; i < len; i++) wl_adagrad(lr, d[i], v[len + i], d + i, d + len + i);
}

/* ------------------------------------------------------------ data files */

/* A file name from a spec, resolved against ctx->base_dir unless absolute
 * (malloc'd; NULL on no memory). */
char *wl_path(const wl_context *ctx, const char *file);

/* The file at path opened for reading ("rb") when it is a regular file,
 * without ever waiting on a FIFO, and *size its size (size may be NULL);
 * NULL with "<path>: not a regular file (a FIFO)" (a device, a socket),
 * "<path>: expected a file, found a directory" or "<path>: cannot read it:
 * <reason>" in err. Every data and trace file a workload reads is opened
 * with it. */
FILE *wl_open_regular(const char *path, size_t *size, char *err, size_t errlen);

/* Reads a text file line by line, for loaders whose errors name the field,
 * the file and the line: "<field>: <path>:<line>: <what was wrong>". */
typedef struct {
  void *file;        /* FILE * */
  const char *field; /* the workload field that named the file */
  char *path;        /* resolved (for messages) */
  uint64_t line;     /* number of the line last read (1-based) */
  char *buf;
  size_t cap;
} wl_reader;
/* Opens file (resolved by wl_path), which the workload's `field` (a static
 * string) named, for reading; a missing file, a directory or an unreadable
 * one is an error "<field>: <path>: ...". false with a message in err. */
bool wl_reader_open(wl_reader *r, const wl_context *ctx, const char *field, const char *file,
                    char *err, size_t errlen);
/* The next line, without its line ending (\n or \r\n), NUL-terminated, in a
 * buffer the reader owns (valid until the next call); NULL at the end of the
 * file or on a read error (then *failed is set, if given). */
char *wl_reader_next(wl_reader *r, size_t *len, bool *failed);
/* Writes "<field>: <path>:<line>: <fmt...>" into err. Returns false (for `return
 * wl_reader_error(...)`). */
bool wl_reader_error(const wl_reader *r, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void wl_reader_close(wl_reader *r);

/* Names to dense ids 0, 1, 2... in order of first appearance (entities,
 * users, items, words). */
typedef struct {
  char **names;      /* by id */
  uint32_t count;
  uint32_t *slots;   /* open addressing: id + 1, 0 empty */
  size_t cap;        /* slots (power of two) */
  uint32_t names_cap;
} wl_dict;
/* The id of name[0..len), added if new (*added set if given). UINT32_MAX on
 * no memory. */
uint32_t wl_dict_add(wl_dict *d, const char *name, size_t len, bool *added);
/* The id of name[0..len), or UINT32_MAX when it is not there. */
uint32_t wl_dict_find(const wl_dict *d, const char *name, size_t len);
void wl_dict_free(wl_dict *d);
/* Takes d's names (by id, d->count of them, each malloc'd; the caller frees
 * them with wl_names_free) and frees the rest of d. NULL when d is empty. */
char **wl_dict_take_names(wl_dict *d);
void wl_names_free(char **names, uint32_t count);

/* Returns buf grown (doubling, from 64) to hold `need` elements of `size`
 * bytes and updates *cap; NULL on no memory or overflow, buf then unchanged
 * (the one growable-array helper of the folder). */
void *wl_grow(void *buf, size_t *cap, size_t need, size_t size);

/* A key and how often the data accesses it. */
typedef struct {
  ps_key key;
  uint64_t count;
} wl_key_count;
/* The hot-key answer every type gives (wl_hot_keys): sorts c[0..n) hottest
 * first, ties by key (so the answer is deterministic), and writes the keys
 * of the first min(want, n) entries with a count above 0 into out; returns
 * how many. */
size_t wl_hottest(wl_key_count *c, size_t n, size_t want, ps_key *out);

/* A fixed pseudo-random value in [-scale, scale) for float i of key k,
 * salted per use: the deterministic initial values of embeddings. */
float wl_initial_uniform(uint64_t salt, ps_key k, uint32_t i, float scale);

/* ------------------------------------------------- Zipf over an index range */

/* A fixed pseudo-random permutation of [0, n): a 4-round unbalanced Feistel
 * network on the smallest power-of-two domain holding n, walked in cycles
 * until the image falls inside [0, n) (fewer than 2 passes through the network
 * on average). O(1) memory; keyed by a constant, never by a run's seed. */
#define WL_PERM_ROUNDS 4
typedef struct {
  uint64_t n;
  unsigned left_bits, right_bits;
  uint64_t round_key[WL_PERM_ROUNDS];
} wl_perm;

void wl_perm_init(wl_perm *p, uint64_t n);
/* The image of x (x < n), in [0, n). */
uint64_t wl_perm_apply(const wl_perm *p, uint64_t x);

/* Zipf over [0, size): rank r has probability proportional to 1/(r+1)^skew
 * and is placed at index perm(r). skew 0 is uniform and builds no table. */
typedef struct {
  uint64_t size;
  double skew;
  gsl_ran_discrete_t *alias; /* Walker alias table; NULL when uniform */
  bool kept;                 /* alias is wl_keep_tables' (not freed) */
  wl_perm perm;
} wl_zipf;

/* Builds the sampler in O(size) time and 16 bytes per rank (size must be in
 * [1, 2^32 - 1]). PS_OK or PS_ERR_NOMEM (then *z holds nothing to free). */
int wl_zipf_init(wl_zipf *z, uint64_t size, double skew);
void wl_zipf_free(wl_zipf *z);
/* Draws an index in [0, size); reads z only, so threads may share it. */
uint64_t wl_zipf_draw(const wl_zipf *z, gsl_rng *rng);

#endif
