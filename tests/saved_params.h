/*
 * Checks of saved parameters (`--save-params`) shared by the simulator's and
 * the socket backend's suites: a run's params.bin read back, and the
 * workload's own files read back and compared with it float for float.
 */
#ifndef PSLAB_TESTS_SAVED_PARAMS_H
#define PSLAB_TESTS_SAVED_PARAMS_H

#include "workloads/workload.h"

#include <stdbool.h>

/* dir/params.bin, read (values NULL when it could not be: the caller
 * asserts). */
wl_params saved_load(const char *dir);
/* The sum of every float of p. */
double saved_sum(const wl_params *p);
/* dir/file holds one line per key of p's table t, fields separated by sep
 * (a CSV field may be quoted, quotes doubled), after a header line when
 * header: the key's name (names[i]; NULL: the number i) and its value's
 * first len floats, each equal to p's. */
void saved_check_rows(const char *dir, const char *file, char sep, bool header,
                      const wl_params *p, uint32_t t, uint32_t len,
                      const char *const *names);
/* dir/file is a .npy of float32 of this shape ("(3, 4)", "(3,)") holding n
 * floats equal to expect's. */
void saved_check_npy(const char *dir, const char *file, const char *shape, const float *expect,
                     size_t n);
/* No part of nodes 0..nodes-1 is left in dir. */
void saved_check_no_parts(const char *dir, uint32_t nodes);

/* Tiny workloads of every type with files of their own, "math": "none" but
 * dnn's (every float is then the count of its pushes); their data, written
 * into a run's base directory by saved_write_data. */
extern const char *const saved_mf_json, *const saved_kge_json, *const saved_w2v_json,
    *const saved_dnn_json;
/* Their other forms: mf of generated data (type "mf generated"), dnn given
 * by its tensors' sizes (type "dnn tensors"). */
extern const char *const saved_mf_generated_json, *const saved_dnn_tensors_json;
/* generated mf with AdaGrad: each value is the factor, then its accumulators */
extern const char *const saved_mf_adagrad_json;
void saved_write_data(const char *dir);
/* The files of the workload of that type (its "type") in dir, each
 * against p: names as the data gives them, values float for float. */
void saved_check_files(const char *type, const char *dir, const wl_params *p);

#endif
