/*
 * The setup of a run and the part of each node's configuration it decides.
 *
 * Order: the policy first, then the workload (so a bad spec is reported
 * before anything is computed), then the layout from both (tables from the
 * workload, partition from the policy), then what only some runs need: the
 * hottest keys (estimated by the workload from sample streams with a fixed
 * seed, so every node of a real run computes the same list on its own) and
 * the sample distribution every worker's sampler reads.
 */
#include "run/internal.h"


#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static run_setup *fail(run_setup *s, char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  run_setup_free(s);
  return NULL;
}

static int make_samples(run_setup *s) {
  ps_key first;
  uint64_t count;
  double *weights;
  int rc = wl_sample_distribution(s->wl, &first, &count, &weights);
  if (rc != PS_OK) return rc;
  s->samples = ps_sample_dist_new(first, count, weights);
  free(weights);
  return s->samples ? PS_OK : PS_ERR_INVAL;
}

run_setup *run_setup_new(const run_args *a, char *err, size_t errlen) {
  char why[256];
  if (!a || a->nodes == 0 || a->workers_per_node == 0)
    return fail(NULL, err, errlen, "run: expected at least one node and one worker");
  run_setup *s = calloc(1, sizeof *s);
  if (!s) return fail(NULL, err, errlen, "run: out of memory");
  s->args = *a;
  s->args.base_dir = NULL; /* read once, here */
  if (ps_policy_configure(a->policy, &s->policy, &s->settings, why, sizeof why) != PS_OK)
    return fail(s, err, errlen, "policy.%s", why);
  if (run_roles_check(a, s->policy, &s->settings, a->stages != NULL, why, sizeof why) != 0)
    return fail(s, err, errlen, "%s", why);
  /* The workload runs on the worker nodes: its worker ranks count theirs. */
  uint32_t worker_nodes = a->worker_nodes ? a->worker_nodes : a->nodes;
  wl_context ctx = {.nodes = worker_nodes, .workers_per_node = a->workers_per_node,
                    .base_dir = a->base_dir};
  if (!(s->wl = wl_create(a->workload, &ctx, why, sizeof why)))
    return fail(s, err, errlen, "workload.%s", why);
  wl_tables(s->wl, &s->layout);
  s->layout.num_nodes = a->nodes;
  s->layout.partition = s->settings.partition;
  run_roles_layout(a, &s->layout);
  if (ps_layout_check(&s->layout) != PS_OK)
    return fail(s, err, errlen, "workload: invalid key tables");
  uint64_t keys = ps_layout_num_keys(&s->layout);
  if (s->settings.hot_keys > keys) s->settings.hot_keys = (uint32_t)keys; /* no more exist */
  char mem_err[768];
  if (run_memory_check(s, mem_err, sizeof mem_err) != 0)
    return fail(s, err, errlen, "%s", mem_err);
  if (s->settings.hot_keys) { /* the policy treats the hottest keys apart */
    if (!(s->hot = malloc(s->settings.hot_keys * sizeof *s->hot)))
      return fail(s, err, errlen, "run: out of memory for %u hot keys",
                  (unsigned)s->settings.hot_keys);
    s->n_hot = wl_hot_keys(s->wl, s->settings.hot_keys, s->hot);
  }
  if (run_consistency_parse(a->consistency, &s->consistency, why, sizeof why) != 0)
    return fail(s, err, errlen, "consistency.%s", why);
  if (run_consistency_check(s->consistency, &s->settings, wl_samples(s->wl), why,
                            sizeof why) != 0)
    return fail(s, err, errlen, "consistency: %s", why);
  s->clock_service = s->consistency.model != PS_CONSISTENCY_ASYNC || a->stages;
  char plan_err[768];
  if (a->stages && run_stages_plan(s, plan_err, sizeof plan_err) != 0)
    return fail(s, err, errlen, "%s", plan_err);
  s->has_quality = wl_quality_info(s->wl, &s->quality);
  int rc = wl_samples(s->wl) ? make_samples(s) : PS_OK;
  if (rc == PS_ERR_NOMEM) return fail(s, err, errlen, "run: out of memory");
  if (rc != PS_OK) return fail(s, err, errlen, "workload: invalid sample distribution");
  return s;
}

void run_setup_free(run_setup *s) {
  if (!s) return;
  run_stages_free(s);
  free(s->hot);
  ps_sample_dist_free(s->samples);
  wl_free(s->wl);
  free(s);
}

const ps_layout *run_setup_layout(const run_setup *s) { return &s->layout; }
uint64_t run_setup_steps_per_worker(const run_setup *s) {
  /* With stages: the clock every worker ends at (idle ones jump to it). */
  if (s->n_stages) return (uint64_t)s->stages[s->n_stages - 1].end_clock;
  return wl_steps_per_worker(s->wl);
}

static uint64_t stage_worker_steps(const run_setup *s, size_t k, uint32_t rank) {
  const run_stage *st = &s->stages[k];
  return run_stage_worker_steps(s->args.nodes, s->args.workers_per_node, st->workers,
                                st->steps, rank);
}

uint64_t run_setup_worker_steps(const run_setup *s, uint32_t rank) {
  if (!s->n_stages) return wl_steps_per_worker(s->wl);
  uint64_t n = 0;
  for (size_t k = 0; k < s->n_stages; k++) n += stage_worker_steps(s, k, rank);
  return n;
}

uint64_t run_setup_steps(const run_setup *s) {
  uint32_t workers = run_setup_workers(s);
  if (!s->n_stages) return wl_steps_per_worker(s->wl) * workers;
  uint64_t n = 0;
  for (uint32_t r = 0; r < workers; r++) n += run_setup_worker_steps(s, r);
  return n;
}

uint64_t run_worker_progress(const run_setup *s, const run_worker *w) {
  int64_t clock = ps_worker_clock(w->handle);
  if (clock <= 0) return 0;
  if (!s->n_stages) {
    uint64_t total = wl_steps_per_worker(s->wl);
    return (uint64_t)clock < total ? (uint64_t)clock : total;
  }
  /* In stage k the clock runs from the stage before's end (0 for the
   * first) one a step, then jumps to the stage's end. */
  uint64_t done = 0;
  int64_t start = 0;
  for (size_t k = 0; k < s->n_stages && clock > start; k++) {
    uint64_t n = stage_worker_steps(s, k, w->rank), in = (uint64_t)(clock - start);
    done += in < n ? in : n;
    start = s->stages[k].end_clock;
  }
  return done;
}

const wl_quality *run_setup_quality(const run_setup *s) {
  return s->has_quality ? &s->quality : NULL;
}

void run_secret_new(uint8_t out[PS_SECRET_LEN]) {
  if (sodium_init() < 0) abort(); /* no random source: no run may go on unsealed */
  randombytes_buf(out, PS_SECRET_LEN);
}

int run_seal_choose(bool every_node_gmac, ps_seal *out, char *err, size_t errlen) {
  const char *want = getenv(RUN_SEAL_ENV);
  if (!want || !*want || strcmp(want, "auto") == 0) {
    *out = every_node_gmac ? PS_SEAL_GMAC : PS_SEAL_SIPHASH;
    return 0;
  }
  if (strcmp(want, ps_seal_name(PS_SEAL_SIPHASH)) == 0) {
    *out = PS_SEAL_SIPHASH;
    return 0;
  }
  if (strcmp(want, ps_seal_name(PS_SEAL_GMAC)) != 0) {
    snprintf(err, errlen, "%s=\"%.40s\": expected \"siphash\", \"gmac\" or \"auto\"",
             RUN_SEAL_ENV, want);
    return -1;
  }
  if (!every_node_gmac) {
    snprintf(err, errlen, "%s=gmac: a node's CPU cannot make GMAC seals (AES-NI and PCLMUL); "
             "use \"siphash\" or \"auto\"", RUN_SEAL_ENV);
    return -1;
  }
  *out = PS_SEAL_GMAC;
  return 0;
}

bool run_seal_gmac_offered(void) {
  const char *want = getenv(RUN_SEAL_ENV);
  return ps_seal_gmac_available() && !(want && strcmp(want, ps_seal_name(PS_SEAL_SIPHASH)) == 0);
}

void run_node_config(const run_setup *s, uint32_t id, ps_node_config *cfg) {
  ps_node_config_default(cfg);
  cfg->id = id;
  cfg->workers = run_node_workers(s, id);
  cfg->layout = s->layout;
  cfg->policy = s->policy;
  cfg->policy_json = s->args.policy;
  cfg->settings = s->settings;
  cfg->hot_keys = s->hot;
  cfg->num_hot_keys = s->n_hot;
  cfg->clock_service = s->clock_service;
  cfg->clock_marks = s->stage_ends; /* the only clocks a worker jumps to */
  cfg->num_clock_marks = s->n_stages;
  cfg->scale = s->args.scale;
  cfg->num_scale = s->args.n_scale;
  memcpy(cfg->secret, s->args.secret, PS_SECRET_LEN);
  cfg->seal = s->args.seal;
}

ps_consistency run_setup_consistency(const run_setup *s) { return s->consistency; }
