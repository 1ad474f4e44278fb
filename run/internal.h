/*
 * run/ internals: what the files of this room share. Not a door: nothing
 * outside run/ includes it.
 */
#ifndef PSLAB_RUN_INTERNAL_H
#define PSLAB_RUN_INTERNAL_H

#include "run/run.h"

typedef struct run_totals run_totals;

struct run_setup {
  run_args args;
  const ps_policy_ops *policy;
  ps_policy_settings settings;
  wl_workload *wl;
  ps_layout layout;
  ps_key *hot;             /* the workload's hottest keys, when the policy asks */
  size_t n_hot;
  ps_sample_dist *samples; /* the workload's sample distribution, if it samples */
  wl_quality quality;      /* the workload's quality measure, when has_quality */
  bool has_quality;
  ps_consistency consistency; /* the spec's "consistency" */
  bool clock_service;         /* nodes tell each other their clocks */
};

#endif
