/*
 * For tests of the final evaluation: the held-out RMSE of an mf workload
 * evaluated here, as the workload evaluates, on saved parameters
 * (params.bin: the owners' values once the run was quiet, initial values
 * added). Header-only: test_sim and test_real both include it.
 */
#ifndef PSLAB_TESTS_SAVED_QUALITY_H
#define PSLAB_TESTS_SAVED_QUALITY_H

#include "workloads/workload.h"

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline double saved_rmse(const char *workload, const wl_params *p, uint32_t nodes,
                                uint32_t workers) {
  cJSON *j = cJSON_Parse(workload);
  wl_context ctx = {.nodes = nodes, .workers_per_node = workers};
  char err[256];
  wl_workload *wl = wl_create(j, &ctx, err, sizeof err);
  cJSON_Delete(j);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  ps_key *keys;
  size_t n;
  CU_ASSERT_EQUAL_FATAL(wl_eval_keys_all(wl, &keys, &n), PS_OK);
  uint32_t len = p->tables[0].value_len; /* mf: rows and columns alike */
  float *vals = malloc((n ? n : 1) * len * sizeof *vals);
  size_t *off = malloc((n ? n : 1) * sizeof *off);
  for (size_t i = 0; i < n; i++) {
    const float *v = wl_params_value(p, keys[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    memcpy(vals + i * len, v, len * sizeof *vals);
    off[i] = i * len;
  }
  double num = 0, den = 0;
  CU_ASSERT_EQUAL(wl_eval_all(wl, keys, n, vals, off, &num, &den), PS_OK);
  free(vals);
  free(off);
  free(keys);
  wl_free(wl);
  return sqrt(num / den);
}

#endif
