/*
 * The `dnn` workload's internals (dnn.c), for the file itself and its tests:
 * the model's tensors, how they are cut into keys, and the synthetic data of
 * real math. Nothing outside workloads/ includes this, tests excepted.
 */
#ifndef PSLAB_WORKLOADS_DNN_H
#define PSLAB_WORKLOADS_DNN_H

#include "workloads/internal.h"

#define DNN_MAX_TENSORS 256
#define DNN_MAX_WIDTH (1u << 20)        /* units of one layer */
#define DNN_MAX_PARAMS (1ull << 28)     /* floats of the whole model (1 GiB) */
#define DNN_MAX_KEY_FLOATS (1u << 24)   /* floats of one key (64 MiB) */
#define DNN_MAX_DATA_FLOATS (1ull << 28) /* floats of the synthetic data */

typedef struct {
  /* The model: n_tensors tensors of params[t] floats each. With layers
   * (width != NULL, n_tensors + 1 widths), tensor t is layer t's weight
   * matrix, width[t + 1] rows of width[t] floats (row j: output unit j's
   * weights), followed by its width[t + 1] biases. */
  uint32_t n_tensors;
  uint64_t params[DNN_MAX_TENSORS];
  uint64_t base[DNN_MAX_TENSORS]; /* where tensor t starts in the whole model */
  uint32_t *width;                /* malloc'd; NULL with "tensors" */
  uint64_t total;                 /* floats of the whole model */
  /* Keys: tensor t is cut into floor(params / key_floats) keys of
   * key_floats floats (table 0, every tensor's in tensor order) and, when
   * key_floats does not divide params, one more of the remainder (a table
   * per distinct remainder, its tensors in order). */
  uint32_t key_floats;
  ps_layout layout;               /* num_tables and tables */
  uint64_t n_keys;
  uint32_t *key_tensor;           /* per key: its tensor */
  uint64_t *key_offset;           /* per key: its first float in its tensor */
  /* Training. */
  uint64_t batch, examples, epochs, test_examples, data_seed;
  double lr, flops;
  bool has_flops, math;
  uint32_t workers, nodes;
  uint64_t steps_per_epoch, steps_per_worker;
  /* Real math: examples (and test_examples) inputs and targets, made by a
   * fixed teacher network of the same widths from data_seed. */
  float *train_x, *train_y, *test_x, *test_y;
} dnn_workload;

/* Key k's tensor, its first float in the tensor and its length; false when
 * k is no key of the model. */
bool dnn_key_span(const dnn_workload *d, ps_key k, uint32_t *tensor, uint64_t *offset,
                  uint32_t *len);
/* Examples worker w trains on, and those of the largest share. */
uint64_t dnn_share(const dnn_workload *d, uint32_t w);

#endif
