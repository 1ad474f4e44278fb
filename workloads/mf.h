/*
 * The `mf` workload's internals, shared by its two files: mf_data.c reads or
 * generates the ratings and splits off the held-out ones; mf.c is the
 * workload type (the split over workers, the steps, the SGD or AdaGrad math
 * and the held-out RMSE). Nothing outside workloads/ includes this, tests excepted.
 */
#ifndef PSLAB_WORKLOADS_MF_H
#define PSLAB_WORKLOADS_MF_H

#include "workloads/internal.h"

/* One observed entry of the ratings matrix: row (user) and column (item) as
 * dense ids, and its value. */
typedef struct {
  uint32_t row, col;
  float rating;
} mf_rating;

/* The data, read once in create and read-only afterwards. */
typedef struct {
  uint32_t rows, cols;  /* the matrix's shape: ids are < rows and < cols */
  /* A ratings file's user and item names, by id (NULL for generated data,
   * whose ids are their names), for the saved factors. */
  char **user_names, **item_names;
  mf_rating *train;     /* malloc'd */
  size_t n_train;
  mf_rating *test;      /* malloc'd; NULL when there is no held-out data */
  size_t n_test;
  uint64_t data_seed;   /* the generator's seed, also the split's shuffle */
} mf_data;

/* blocking keeps workers * workers block offsets: it is refused above this */
#define MF_MAX_BLOCKING_WORKERS 2048

/* The workload: its parameters, its data and the data's split over workers
 * (see mf.c). */
typedef struct {
  mf_data d;
  uint64_t rank, batch, epochs;
  double lr, reg, init_scale;
  wl_optimizer optimizer; /* adagrad: values are [factor | accumulators] */
  bool has_flops;
  double flops;           /* per step, when has_flops */
  bool clustering, blocking, math;
  uint32_t workers, nodes, workers_per_node;
  uint32_t blocks;        /* column blocks: workers with blocking, else 1 */
  uint64_t *share;        /* training rating indices, by worker then block */
  uint64_t *share_off;    /* workers * blocks + 1 offsets into share */
  uint64_t steps_per_block; /* steps of a sub-epoch (of an epoch: no blocking) */
  uint64_t steps_per_epoch, steps_per_worker;
} mf_workload;

/* The data fields every mf object may hold (ratings, test, test_fraction,
 * rows, cols, nnz, skew, true_rank, noise, data_seed), for the type's list of
 * known fields; NULL-terminated. */
extern const char *const mf_data_fields[];

/* Reads the ratings file json names ("ratings", with "test" or a
 * "test_fraction" split) or generates the ratings ("rows", "cols", "nnz",
 * ...; true_rank defaults to rank). false with a message in err: the field
 * and what was wrong, or "<field>: <path>:<line>: <what was wrong>". */
bool mf_data_load(const struct cJSON *json, const wl_context *ctx, uint64_t rank, mf_data *d,
                  char *err, size_t errlen);
void mf_data_free(mf_data *d);

/* Whether rating i (by its index in the file or in generation order) is
 * held out when a fraction of them is: a fixed hash of i against the
 * fraction. */
bool mf_held_out(uint64_t i, double fraction);

#endif
