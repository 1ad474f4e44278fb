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
  struct run_stage *stages;   /* the plan, when the spec has "stages" */
  size_t n_stages;
  int64_t *stage_ends;        /* each stage's end_clock (the nodes' clock_marks) */
};

/* Refuses (-1, the reason in err) a run whose memory estimate exceeds
 * args.memory.limit (run/memory.c); 0 when it fits or there is no limit. */
int run_memory_check(const run_setup *s, char *err, size_t errlen);

/* One stage of the plan (run/stages.c). */
typedef struct run_stage {
  uint32_t workers;           /* active workers */
  uint64_t steps;             /* in all */
  int64_t end_clock;          /* every worker's clock when it ends */
  ps_consistency consistency; /* its own, or the run's */
  wl_workload *wl;            /* owned: its own workload (batch, lr), or NULL:
                                 the run's */
  uint64_t seed;              /* its streams' seed (each stream adds its rank) */
} run_stage;

/* The layout's roles (num_servers, num_worker_nodes, num_homes) from a's
 * roles and scaling, checked by run_roles_check (roles.c). */
void run_roles_layout(const run_args *a, ps_layout *l);

/* Builds s->stages from s->args.stages (after the policy, the workload and
 * the consistency are set up). 0, or -1 with a message in err. */
int run_stages_plan(run_setup *s, char *err, size_t errlen);
void run_stages_free(run_setup *s);

/* Values as bytes that may travel between nodes (replica_check.c): records
 * of a key, its length and its floats, appended to a growing buffer. */
typedef struct {
  uint8_t *buf;
  size_t len, cap;
  bool oom; /* an append failed: the buffer is incomplete */
} run_bytes;
/* Appends key k's value (len floats; NULL: zeros). */
void run_bytes_put(run_bytes *b, ps_key k, const float *value, uint32_t len);
/* One record: its key, length and where its floats start in the bytes. */
typedef struct {
  ps_key key;
  uint32_t len;
  size_t at;
} run_record;
/* The records of bytes[0..len) into *recs (malloc'd, *n of them; the caller
 * frees). PS_OK, PS_ERR_NOMEM or PS_ERR_INVAL (bytes that are not records). */
int run_bytes_records(const uint8_t *bytes, size_t len, run_record **recs, size_t *n);

#endif
