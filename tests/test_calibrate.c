/*
 * `pslab calibrate` (experiments/fidelity/calibrate.c): the fit on made-up
 * figures from a known cost model, which it must give back; the rounds and
 * their spread on a noisy source; the profile included by a spec; and the
 * real probe (real/probe.c) measuring something plausible and ending
 * cleanly.
 */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "real/real.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- a fake machine */

typedef struct {
  double latency, per_message, send, per_key, per_byte, bandwidth;
  double local_per_key, speed;
  unsigned calls;
  double noise; /* every other batch this much slower (relative) */
} model;

static double wobble(model *m) { return m->calls++ % 2 ? 1 + m->noise : 1; }

static int fake_remote(void *ctx, uint32_t keys, uint32_t floats, uint32_t count,
                       exp_calib_sample *out, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  double bytes = (double)ps_msg_encoded_len(keys, 0) + (double)ps_msg_encoded_len(keys, keys * floats);
  double work = 2 * keys * m->per_key + bytes * m->per_byte;
  double rtt = 2 * m->latency + bytes / m->bandwidth + 2 * m->per_message + work;
  double cpu = 2 * (m->per_message + m->send) + work;
  double w = wobble(m);
  *out = (exp_calib_sample){count * rtt * w, count * cpu * w, count * m->send * w};
  return 0;
}

static int fake_local(void *ctx, uint32_t keys, uint32_t floats, uint32_t count,
                      exp_calib_sample *out, char *err, size_t errlen) {
  (void)floats;
  (void)err;
  (void)errlen;
  model *m = ctx;
  double t = count * keys * m->local_per_key * wobble(m);
  *out = (exp_calib_sample){t, t, t};
  return 0;
}

static int fake_compute(void *ctx, double flops, double *wall_s, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  *wall_s = flops / m->speed * wobble(m);
  return 0;
}

static model machine(void) {
  return (model){.latency = 20e-6, .per_message = 30e-6, .send = 10e-6, .per_key = 0.2e-6,
                 .per_byte = 0.5e-9, .bandwidth = 1e9, .local_per_key = 80e-9, .speed = 2e9};
}

static exp_calib_source source(model *m) {
  return (exp_calib_source){.ctx = m, .remote = fake_remote, .local = fake_local,
                            .compute = fake_compute, .cores = 3};
}

static double at(const cJSON *o, const char *path) {
  char copy[128];
  snprintf(copy, sizeof copy, "%s", path);
  const cJSON *v = o;
  for (char *save = NULL, *seg = strtok_r(copy, ".", &save); seg && v;
       seg = strtok_r(NULL, ".", &save))
    v = cJSON_GetObjectItemCaseSensitive(v, seg);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

#define CLOSE(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), fabs(b) * 1e-6 + 1e-18)

/* The profile calibrating the fake machine m gives (NULL: it failed). */
static cJSON *calibrate(model *m, unsigned max_rounds) {
  exp_calib_source src = source(m);
  exp_calib_options o;
  exp_calib_options_default(&o);
  if (max_rounds) o.max_rounds = max_rounds;
  char err[256] = "";
  cJSON *p = exp_calibrate(&src, &o, err, sizeof err);
  if (!p) fprintf(stderr, "calibrate: %s\n", err);
  return p;
}

static const cJSON *about_item(const cJSON *profile, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(profile, EXP_PROFILE_ABOUT), name);
}

/* The fit gives back the model the figures came from. */
static void test_fit_recovers_the_model(void) {
  model m = machine();
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CLOSE(at(p, "cost.per_message_s"), m.per_message);
  CLOSE(at(p, "cost.send_per_message_s"), m.send);
  CLOSE(at(p, "cost.per_key_s"), m.per_key);
  CLOSE(at(p, "cost.per_byte_s"), m.per_byte);
  CLOSE(at(p, "cost.local_per_key_s"), m.local_per_key);
  CLOSE(at(p, "machines.loopback_latency"), m.latency);
  CU_ASSERT_DOUBLE_EQUAL(at(p, "machines.loopback_bandwidth"), m.bandwidth, m.bandwidth * 1e-4);
  CLOSE(at(p, "host_speed"), m.speed);
  CU_ASSERT_EQUAL(at(p, "machines.cores"), 3);
  CU_ASSERT_EQUAL(at(p, "machines.count"), 1);
  /* Every figure is there, agreed after the first window of rounds. */
  exp_calib_options o;
  exp_calib_options_default(&o);
  const cJSON *figs = about_item(p, "figures");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(figs), 9);
  const cJSON *f;
  cJSON_ArrayForEach(f, figs) {
    CU_ASSERT_EQUAL(at(f, "rounds"), o.min_rounds);
    CU_ASSERT_EQUAL(at(f, "spread"), 0);
  }
  CU_ASSERT_EQUAL(cJSON_GetArraySize(about_item(p, "notes")), 0);
  cJSON_Delete(p);
}

/* A source whose rounds disagree by 20% runs every round and says so. */
static void test_noisy_rounds_report_their_spread(void) {
  model m = machine();
  m.noise = 0.2;
  cJSON *p = calibrate(&m, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  const cJSON *f;
  cJSON_ArrayForEach(f, about_item(p, "figures")) {
    CU_ASSERT_EQUAL(at(f, "rounds"), 8);
    CU_ASSERT(at(f, "spread") > 0.05);
  }
  cJSON_Delete(p);
}

/* A model a fit cannot give (no cost per key, a round trip that grows with
 * bytes no faster than the CPU does) gives zeros and notes, not nonsense. */
static void test_degenerate_figures_are_noted(void) {
  model m = machine();
  m.bandwidth = INFINITY;
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT(at(p, "machines.loopback_bandwidth") >= 1e12);
  CU_ASSERT(cJSON_GetArraySize(about_item(p, "notes")) >= 1);
  cJSON_Delete(p);
}

/* The profile a calibration writes is a cluster a spec includes. */
static void test_profile_validates_as_a_cluster(void) {
  model m = machine();
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char *dir = unit_temp_dir();
  char *text = cJSON_Print(p);
  unit_write(dir, "calibration.json", text);
  free(text);
  unit_write(dir, "spec.json",
             "{\"name\": \"c\", \"cluster\": {\"nodes\": 3, \"profile\": \"calibration.json\"},"
             " \"workload\": {\"type\": \"zipf\", \"keys\": 100, \"steps_per_worker\": 5},"
             " \"policy\": {\"type\": \"static\"}}");
  char path[512];
  snprintf(path, sizeof path, "%s/spec.json", dir);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(path, NULL, 0, &e);
  for (size_t i = 0; i < e.count; i++) fprintf(stderr, "    | %s\n", e.lines[i]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  exp_cluster c;
  const cJSON *cl = cJSON_GetObjectItem(exp_spec_runs(s)->runs[0].config, "cluster");
  CU_ASSERT_TRUE(exp_cluster_parse(cl, exp_spec_dir(s), &c, &e));
  CU_ASSERT_EQUAL(c.sim.machines.count, 1);
  CU_ASSERT_EQUAL(c.sim.machines.cores, 3);
  CLOSE(c.sim.cost.per_message_s, m.per_message);
  CLOSE(c.sim.host_speed, m.speed);
  exp_cluster_free(&c);
  exp_spec_free(s);
  exp_errors_free(&e);
  cJSON_Delete(p);
  unit_remove_tree(dir);
  free(dir);
}

/* The real probe: a few pulls each way, figures that make sense, and both
 * nodes end cleanly. (No figure is compared with a speed: only that wall
 * and CPU time passed and a remote pull costs more than a local one.) */
static void test_real_probe(void) {
  char err[512] = "";
  real_probe *p = real_probe_start(NULL, err, sizeof err);
  if (!p) fprintf(stderr, "probe: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  real_probe_sample remote, local;
  CU_ASSERT_EQUAL(real_probe_remote(p, 4, 256, 50, &remote, err, sizeof err), 0);
  CU_ASSERT_EQUAL(real_probe_local(p, 4, 256, 50, &local, err, sizeof err), 0);
  CU_ASSERT(remote.wall_s > 0 && remote.cpu_s > 0 && remote.thread_cpu_s > 0);
  CU_ASSERT(remote.cpu_s >= remote.thread_cpu_s);
  CU_ASSERT(local.wall_s > 0);
  CU_ASSERT(remote.cpu_s > local.cpu_s);
  CU_ASSERT_EQUAL(real_probe_remote(p, 4, 3, 1, &remote, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "3 floats"));
  CU_ASSERT_EQUAL(real_probe_free(p), 0);
}

PSLAB_SUITE("calibrate", {"fit_recovers_the_model", test_fit_recovers_the_model},
            {"noisy_rounds_report_their_spread", test_noisy_rounds_report_their_spread},
            {"degenerate_figures_are_noted", test_degenerate_figures_are_noted},
            {"profile_validates_as_a_cluster", test_profile_validates_as_a_cluster},
            {"real_probe", test_real_probe})
