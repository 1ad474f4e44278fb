/*
 * `pslab calibrate` (experiments/fidelity/calibrate.c): the fit on made-up
 * figures from a known cost model, which it must give back; the rounds and
 * their spread on a noisy source; the profile included by a spec; and the
 * real probe (real/probe.c) measuring something plausible and ending
 * cleanly.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "real/real.h"
#include "sim/sim.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------- a fake machine */

/* The simulator's node model (experiments/fidelity/calibrate.c), with the
 * wake-up split as the fit measures it: the sending thread's share, the
 * reading thread's and the I/O threads'. */
typedef struct {
  double latency, bandwidth, per_message, send, per_key, per_byte, io;
  double send_wake, read_wake, io_wake;
  double local_per_key, speed, initial;
  double wait;   /* a wake-up's wait for a core when every core is busy */
  /* A key access found last touched by another thread: what it costs
   * more, per key and per byte; and the share of two threads' accesses on
   * the same keys that are (on one core, none are). */
  double shared_key, shared_byte, share;
  double sleeps; /* sleeps the source counts per wake-up (context switches) */
  double slice;  /* the scheduler's */
  double preempt_wait, preempt_per_thread; /* a woken thread's wait beside spinners */
  unsigned cores, calls[64];
  exp_calib_batch shape[62]; /* batch shapes seen (wobble's kinds) */
  unsigned shapes;
  double noise; /* every other batch this much slower (relative) */
  bool no_wakeups; /* the source counts no wake-ups */
  bool no_io_wakeups; /* ... or none of the I/O threads' */
} model;

/* Every batch's noise: 1, or 1 + noise for about half of them, drawn
 * (a fixed sequence) so that no probe sees the same every round whatever
 * the number of probes. */
/* The noise of one call of the kind `kind` (a figure): its calls alternate
 * between 1 and 1 + noise, so every figure's rounds disagree. */
static double wobble(model *m, unsigned kind) {
  return m->calls[kind % 64]++ & 1 ? 1 + m->noise : 1;
}

/* Kinds 0 and 1 are compute and initial values; a batch's shape (its
 * count aside) is kind 2 and up, in the order first seen. */
static unsigned batch_kind(model *m, const exp_calib_batch *b) {
  unsigned i = 0;
  for (; i < m->shapes; i++) {
    const exp_calib_batch *s = &m->shape[i];
    if (s->keys == b->keys && s->floats == b->floats && s->window == b->window &&
        s->clients == b->clients && s->local == b->local && s->both_ways == b->both_ways &&
        s->spinners == b->spinners && s->push == b->push && s->count_shared == b->count_shared)
      break;
  }
  if (i == m->shapes && m->shapes < 62) m->shape[m->shapes++] = *b;
  return 2 + i;
}


/* The share of a batch's messages that find their handler asleep. */
static double asleep(const exp_calib_batch *b) {
  return 1.0 / ((b->window ? b->window : 1) * (b->clients ? b->clients : 1));
}

/* The share of a message's ends whose I/O thread was asleep: not the
 * handlers' share (an I/O thread batches less than the thread that reads
 * what it passes on), so that a fit on the handlers' wake-ups would miss. */
static double io_asleep(const exp_calib_batch *b) { return sqrt(asleep(b)); }

/* The model's wall time per pull (its round trip, or its bound: the round
 * trip shared by the pulls outstanding, the busiest handler, the senders, the
 * cores), as docs/fidelity.md states it. */
static double wall_per_pull(const model *m, const exp_calib_batch *b, double r) {
  double k = b->keys, bq = (double)ps_msg_encoded_len(b->keys, 0),
         bp = (double)ps_msg_encoded_len(b->keys, (size_t)b->keys * b->floats);
  /* The handling threads' wake-ups on the path; the I/O threads' are in
   * its latency (the simulator's I/O actor works beside the message). */
  double w = r * (m->send_wake + m->read_wake),
         handle_q = m->per_message + w + k * m->per_key + bq * m->per_byte,
         handle_p = m->per_message + w + k * m->per_key + bp * m->per_byte;
  double rtt = 2 * (m->latency + m->io_wake) + (bq + bp) / m->bandwidth + handle_q + handle_p;
  if (b->window <= 1 && b->clients <= 1 && !b->both_ways) return rtt;
  double cpu = handle_q + handle_p + 2 * m->send + 4 * m->io + 2 * io_asleep(b) * m->io_wake;
  double threads = (b->clients ? b->clients : 1) * (b->both_ways ? 2 : 1);
  double wall = rtt / (threads * (b->window ? b->window : 1));
  double busiest = b->both_ways ? (handle_q + m->send + handle_p) / 2
                                : fmax(handle_q + m->send, handle_p);
  wall = fmax(wall, busiest);
  wall = fmax(wall, m->send / threads);
  return fmax(wall, cpu / m->cores);
}

/* Pd pulls from node c to node s, as the model spends them. */
static void direction(const model *m, const exp_calib_batch *b, double pd, int c, int s,
                      exp_calib_sample *out) {
  double r = asleep(b), k = b->keys, bq = (double)ps_msg_encoded_len(b->keys, 0),
         bp = (double)ps_msg_encoded_len(b->keys, (size_t)b->keys * b->floats);
  double send = m->send + r * m->send_wake;
  double req = m->per_message + k * m->per_key + bq * m->per_byte + r * m->read_wake;
  double rep = m->per_message + k * m->per_key + bp * m->per_byte + r * m->read_wake;
  double qe = io_asleep(b), end = m->io + qe * m->io_wake / 2; /* each end of each message */
  out->node[c].issue_cpu_s += pd * (send + rep);
  out->node[c].send_cpu_s += pd * send;
  out->node[s].receiver_cpu_s += pd * (req + send);
  out->node[c].process_cpu_s += pd * (send + rep + 2 * end);
  out->node[s].process_cpu_s += pd * (req + send + 2 * end);
  double sleeps = m->no_wakeups ? 0 : m->sleeps * r * pd;
  out->node[c].wakeups += sleeps;
  out->node[s].wakeups += sleeps;
  double io_sleeps = m->no_io_wakeups ? 0 : 2 * qe * pd; /* two ends a node */
  out->node[c].io_wakeups += io_sleeps;
  out->node[s].io_wakeups += io_sleeps;
}

static int fake_pulls(void *ctx, const exp_calib_batch *b, exp_calib_sample *out, char *err,
                      size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  *out = (exp_calib_sample){0};
  double w = wobble(m, batch_kind(m, b));
  if (b->local && b->push) { /* local pulls and pushes: two accesses a key */
    double threads = b->clients ? b->clients : 1, accesses = threads * b->count * 2.0 * b->keys;
    double shared = threads > 1 && m->cores > 1 ? m->share * accesses : 0;
    double cpu = accesses * m->local_per_key +
                 shared * (m->shared_key + 4.0 * b->floats * m->shared_byte);
    if (b->count_shared) { /* counting writes every entry: slower, and not timed */
      cpu *= 1.5;
      out->node[0].shared_accesses = shared * w;
    }
    cpu *= w;
    *out = (exp_calib_sample){.wall_s = cpu / threads, .cpu_s = cpu, .thread_cpu_s = cpu,
                              .node = {out->node[0]}};
    return 0;
  }
  if (b->local) {
    /* The puller reads its CPU clock twice a pull, which its own CPU
     * figure leaves out and the wall time holds (1.4 us a reading, as a
     * clock read through a system call on a virtual machine costs). */
    double t = b->count * b->keys * m->local_per_key * w, readings = b->count * 2 * 1.4e-6 * w;
    *out = (exp_calib_sample){.wall_s = t + readings, .cpu_s = t + readings, .thread_cpu_s = t};
    return 0;
  }
  double pd = (double)b->count * (b->clients ? b->clients : 1);
  direction(m, b, pd, 0, 1, out);
  if (b->both_ways) direction(m, b, pd, 1, 0, out);
  double pulls = b->both_ways ? 2 * pd : pd;
  out->wall_s = pulls * wall_per_pull(m, b, asleep(b));
  if (b->spinners) { /* its two handlings share the cores, and each wake-up waits */
    double bytes = (double)(ps_msg_encoded_len(b->keys, 0) +
                            ps_msg_encoded_len(b->keys, (size_t)b->keys * b->floats));
    double crit = 2 * (m->per_message + m->send_wake + m->read_wake) +
                  2.0 * b->keys * m->per_key + bytes * m->per_byte;
    out->wall_s += pulls * (crit / b->spinners + 2 * m->wait);
  }
  out->cpu_s = out->node[0].process_cpu_s + out->node[1].process_cpu_s;
  out->thread_cpu_s = out->node[0].issue_cpu_s;
  double *v = (double *)out;
  for (size_t i = 0; i < sizeof *out / sizeof *v; i++) v[i] *= w;
  return 0;
}

static int fake_compute(void *ctx, double flops, double *wall_s, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  *wall_s = flops / m->speed * wobble(m, 0);
  return 0;
}

static int fake_initial(void *ctx, double floats, double *wall_s, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  *wall_s = floats * m->initial * wobble(m, 1);
  return 0;
}

/* The slice: m->slice, wobbling as the other figures do; the threads and
 * their time as calibrate asks (two a core, at least 50 ms). */
static int fake_slice(void *ctx, uint32_t threads, double seconds, double *slice_s, char *err,
                      size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  CU_ASSERT(threads >= 2 && threads % 2 == 0);
  CU_ASSERT(seconds >= 0.05);
  *slice_s = m->slice * wobble(m, 0);
  return 0;
}

/* wait = preempt_wait + preempt_per_thread x (spinners - 1); the spinners
 * switched out once a wake-up, whatever their number. */
static int fake_preempt(void *ctx, uint32_t spinners, uint32_t wakes, double *wait_s,
                        double *preempted, char *err, size_t errlen) {
  (void)err;
  (void)errlen;
  model *m = ctx;
  CU_ASSERT(spinners >= 1 && spinners <= 4 && wakes >= 50);
  *wait_s = (m->preempt_wait + m->preempt_per_thread * (spinners - 1)) * wobble(m, 0);
  *preempted = 1;
  return 0;
}

static model machine(void) {
  return (model){.latency = 20e-6, .per_message = 3e-6, .send = 2e-6, .per_key = 0.2e-6,
                 .per_byte = 0.5e-9, .bandwidth = 1e9, .io = 1.5e-6, .send_wake = 1e-6,
                 .read_wake = 9e-6, .io_wake = 17e-6, .local_per_key = 80e-9, .speed = 2e9, .initial = 7e-9,
                 .wait = 45e-6, .sleeps = 1.5, .cores = 3, .slice = 2.5e-3,
                 .preempt_wait = 5e-6, .preempt_per_thread = 15e-6,
                 .shared_key = 90e-9, .shared_byte = 0.1e-9, .share = 0.6};
}

static exp_calib_source source(model *m) {
  return (exp_calib_source){.ctx = m, .pulls = fake_pulls, .compute = fake_compute,
                            .initial = fake_initial, .slice = fake_slice,
                            .preempt = fake_preempt, .cores = m->cores};
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

#define CLOSE(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), fabs(b) * 1e-9 + 1e-18)

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

/* The fit gives back the model the figures came from: every parameter,
 * the wake-up and the I/O threads' included. */
static void test_fit_recovers_the_model(void) {
  model m = machine();
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CLOSE(at(p, "cost.per_message_s"), m.per_message);
  CLOSE(at(p, "cost.send_per_message_s"), m.send);
  CLOSE(at(p, "cost.wakeup_s"), m.send_wake + m.read_wake);
  CLOSE(at(p, "cost.io_wakeup_s"), m.io_wake / 2);
  CLOSE(at(p, "cost.io_per_message_s"), m.io);
  CLOSE(at(p, "cost.wakeup_wait_s"), m.wait);
  CLOSE(at(p, "cost.per_key_s"), m.per_key);
  CLOSE(at(p, "cost.per_byte_s"), m.per_byte);
  CLOSE(at(p, "cost.local_per_key_s"), m.local_per_key);
  CLOSE(at(p, "machines.loopback_latency"), m.latency + m.io_wake);
  CLOSE(at(p, "machines.loopback_bandwidth"), m.bandwidth);
  CLOSE(at(p, "host_speed"), m.speed);
  CLOSE(at(p, "cost.initial_per_float_s"), m.initial);
  CLOSE(at(p, "cost.shared_per_key_s"), m.shared_key);
  CLOSE(at(p, "cost.shared_per_byte_s"), m.shared_byte);
  CU_ASSERT_EQUAL(at(p, "machines.cores"), 3);
  CLOSE(at(p, "machines.slice"), m.slice);
  CU_ASSERT_EQUAL(at(p, "machines.count"), 1);
  const cJSON *params = about_item(p, "parameters");
  CLOSE(at(params, "wakeup_s.value"), m.send_wake + m.read_wake);
  CLOSE(at(params, "io_wakeup_s.value"), m.io_wake / 2);
  CU_ASSERT_EQUAL(at(params, "wakeup_s.spread"), 0);
  /* Every figure is there, agreed after the first window of rounds. */
  exp_calib_options o;
  exp_calib_options_default(&o);
  const cJSON *figs = about_item(p, "figures");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(figs), 28); /* 23 probes, the slice, 4 preemptions */
  const cJSON *f;
  cJSON_ArrayForEach(f, figs) {
    CU_ASSERT_EQUAL(at(f, "rounds"), o.min_rounds);
    CU_ASSERT_EQUAL(at(f, "spread"), 0);
  }
  CU_ASSERT_EQUAL(cJSON_GetArraySize(about_item(p, "notes")), 0);
  /* A woken thread's wait beside spinners: beside one, and the slope. */
  const cJSON *pre = about_item(p, "preemption");
  CLOSE(at(pre, "wait_s"), m.preempt_wait);
  CLOSE(at(pre, "per_thread_s"), m.preempt_per_thread);
  CU_ASSERT_EQUAL(at(pre, "preempted_per_wakeup"), 1);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(pre, "note_per_thread"));
  /* ... and the run queue's wake-up preemption takes them, switched off. */
  const cJSON *on = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "machines"),
                                                     "preempt");
  CU_ASSERT_TRUE(cJSON_IsFalse(on));
  CLOSE(at(p, "machines.preempt_wait"), m.preempt_wait);
  CLOSE(at(p, "machines.preempt_per_thread"), m.preempt_per_thread);
  cJSON_Delete(p);
  /* Waits that fall with more spinners: no negative slope, and a note. */
  m.preempt_per_thread = -1e-6;
  p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  pre = about_item(p, "preemption");
  CU_ASSERT_EQUAL(at(pre, "per_thread_s"), 0);
  CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItemCaseSensitive(pre, "note_per_thread"));
  cJSON_Delete(p);
  /* Not measured on one core, nor by a source that cannot. */
  for (int k = 0; k < 2; k++) {
    m = machine();
    exp_calib_source src = source(&m);
    if (k) src.preempt = NULL;
    else src.cores = m.cores = 1;
    char err[256] = "";
    p = exp_calibrate(&src, &o, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NULL(about_item(p, "preemption"));
    const cJSON *mach = cJSON_GetObjectItemCaseSensitive(p, "machines");
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(mach, "preempt_wait"));
    cJSON_Delete(p);
  }
}

/* The check predicts what the batches the fit left out measured, when they
 * come from the model: both ways and two pullers, CPU and time per pull. */
static void test_check_predicts_the_held_out_batches(void) {
  model m = machine();
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  const cJSON *checked = about_item(p, "check"), *c;
  CU_ASSERT_EQUAL(cJSON_GetArraySize(checked), 2);
  cJSON_ArrayForEach(c, checked) {
    CLOSE(at(c, "predicted_cpu_s"), at(c, "cpu_s"));
    CLOSE(at(c, "predicted_wall_s"), at(c, "wall_s"));
  }
  /* Two pullers, one pull each outstanding: half the messages woke. */
  CLOSE(at(cJSON_GetArrayItem(checked, 1), "wake_share"), 0.5);
  /* A model whose round trip is slower than it says: the check shows it. */
  cJSON_Delete(p);
  m = machine();
  m.cores = 1;
  exp_calib_source src = source(&m);
  src.cores = 2; /* the calibration believes in 2 cores, the machine has 1 */
  exp_calib_options o;
  exp_calib_options_default(&o);
  char err[256];
  p = exp_calibrate(&src, &o, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  c = cJSON_GetArrayItem(about_item(p, "check"), 0);
  CLOSE(at(c, "predicted_cpu_s"), at(c, "cpu_s"));
  CU_ASSERT(at(c, "predicted_wall_s") < at(c, "wall_s") * 0.99);
  cJSON_Delete(p);
}

/* On one core two threads never share a key: the shared costs are 0, and
 * the notes say why. With noisy rounds, what each round measured gives
 * the cost: the same model back. */
static void test_shared_costs_need_threads_at_once(void) {
  model m = machine();
  m.cores = 1;
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(at(p, "cost.shared_per_key_s"), 0);
  CU_ASSERT_EQUAL(at(p, "cost.shared_per_byte_s"), 0);
  bool said = false;
  const cJSON *n;
  cJSON_ArrayForEach(n, about_item(p, "notes")) said = said || strstr(n->valuestring, "shared");
  CU_ASSERT_TRUE(said);
  cJSON_Delete(p);
  m = machine();
  m.noise = 0.2; /* each round's three batches wobble alike (calls alternate) */
  p = calibrate(&m, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CLOSE(at(p, "cost.shared_per_key_s"), m.shared_key);
  CLOSE(at(p, "cost.shared_per_byte_s"), m.shared_byte);
  cJSON_Delete(p);
}

/* A machine busy just before calibrating: the notes say so, with the load,
 * and the profile keeps it; an idle one (or an unknown load) says nothing. */
/* A workload's step cost from a validation's records: per run, (real -
 * simulated) cpu_s over the steps of the simulated run, sorted, the
 * workload as validated; a validation without cpu_s records is refused,
 * naming its file. */
static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

static void test_step_cost_from_records(void) {
  char dir[] = "/tmp/pslab-step-XXXXXX", path[256], err[256];
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/sim", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/sim/runs.jsonl", dir);
  write_text(path, "{\"config\":{\"workload\":{\"type\":\"zipf\"}},\"metrics\":{\"steps\":100}}\n"
                   "{\"metrics\":{\"steps\":7}}\n");
  snprintf(path, sizeof path, "%s/validate.jsonl", dir);
  write_text(path, "{\"kind\":\"run\",\"metric\":\"time_s\",\"sim\":1,\"real\":9}\n"
                   "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.015}\n"
                   "{\"kind\":\"point\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.5}\n"
                   "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.011}\n"
                   "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.012}\n");
  double v[EXP_STEP_RUNS];
  size_t n = 0;
  uint64_t steps = 0;
  cJSON *wl = NULL;
  CU_ASSERT_EQUAL_FATAL(exp_step_cost_read(dir, NULL, v, &n, &steps, &wl, err, sizeof err), 0);
  CU_ASSERT_EQUAL(steps, 100);
  CU_ASSERT_EQUAL_FATAL(n, 3);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 1e-5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(v[1], 2e-5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(v[2], 5e-5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(exp_median_sorted(v, n), 2e-5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(exp_median_sorted(v, 2), 1.5e-5, 1e-15);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(wl, "type")), "zipf");
  cJSON_Delete(wl);
  /* By policy: a run's type is its sweep's policy, static without one. */
  write_text(path, "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.015,"
                   "\"sweep\":{\"policy\":{\"type\":\"static\"}}}\n"
                   "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.04,"
                   "\"sweep\":{\"policy\":{\"type\":\"adaptive\",\"syncs_per_sec\":9}}}\n"
                   "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.01,\"real\":0.011}\n"
                   "{\"kind\":\"run\",\"metric\":\"cpu_s\",\"sim\":0.02,\"real\":0.03,"
                   "\"sweep\":{\"policy\":{\"type\":\"adaptive\"}}}\n");
  wl = NULL;
  CU_ASSERT_EQUAL_FATAL(exp_step_cost_read(dir, "adaptive", v, &n, &steps, &wl, err, sizeof err),
                        0);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 1e-4, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(v[1], 3e-4, 1e-15);
  cJSON_Delete(wl);
  wl = NULL;
  CU_ASSERT_EQUAL_FATAL(exp_step_cost_read(dir, "static", v, &n, &steps, &wl, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 1e-5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(v[1], 5e-5, 1e-15);
  cJSON_Delete(wl);
  wl = NULL;
  CU_ASSERT_EQUAL(exp_step_cost_read(dir, "nups", v, &n, &steps, &wl, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no run of policy nups"));
  cJSON_Delete(wl);
  write_text(path, "{\"kind\":\"run\",\"metric\":\"time_s\",\"sim\":1,\"real\":9}\n");
  wl = NULL;
  CU_ASSERT_EQUAL(exp_step_cost_read(dir, NULL, v, &n, &steps, &wl, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "validate.jsonl"));
  cJSON_Delete(wl);
  remove(path);
  snprintf(path, sizeof path, "%s/sim/runs.jsonl", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/sim", dir);
  rmdir(path);
  rmdir(dir);
}

static void test_busy_machine_is_noted(void) {
  model m = machine();
  exp_calib_source src = source(&m);
  exp_calib_options o;
  exp_calib_options_default(&o);
  char err[256];
  for (int busy = 0; busy < 3; busy++) {
    src.load_before = busy == 0 ? 0.2 : busy == 1 ? NAN : 1.75;
    cJSON *p = exp_calibrate(&src, &o, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    bool said = false;
    const cJSON *n;
    cJSON_ArrayForEach(n, about_item(p, "notes")) said = said || strstr(n->valuestring, "1.75");
    CU_ASSERT_EQUAL(said, busy == 2);
    const cJSON *load = about_item(p, "load_before");
    CU_ASSERT_EQUAL(load != NULL, busy != 1);
    cJSON_Delete(p);
  }
}

/* A source that counts no wake-ups gives wakeup_s 0 and says why. */
static void test_uncounted_wakeups_are_noted(void) {
  model m = machine();
  m.no_wakeups = true;
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(at(p, "cost.wakeup_s"), 0);
  CU_ASSERT(cJSON_GetArraySize(about_item(p, "notes")) >= 1);
  cJSON_Delete(p);
  /* Without the I/O threads' count, their wake-ups are taken to follow the
   * handlers', which this model's do not: the fit then misses, and says
   * what it assumed. */
  m = machine();
  m.no_io_wakeups = true;
  p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT(fabs(at(p, "cost.io_wakeup_s") / (m.io_wake / 2) - 1) > 0.05);
  bool said = false;
  const cJSON *n;
  cJSON_ArrayForEach(n, about_item(p, "notes")) said = said || strstr(n->valuestring, "I/O");
  CU_ASSERT_TRUE(said);
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
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
    bool own = cJSON_IsString(name) &&
               (strcmp(name->valuestring, "slice") == 0 || strcmp(name->valuestring, "preempt") == 0);
    CU_ASSERT_EQUAL(at(f, "rounds"), own ? 5 : 8); /* slice and preemption: their own 5 rounds */
    CU_ASSERT(at(f, "spread") > 0.05);
  }
  /* ... and so do the parameters fitted round by round. */
  CU_ASSERT(at(about_item(p, "parameters"), "per_message_s.spread") > 0);
  CU_ASSERT(at(about_item(p, "parameters"), "wakeup_s.spread") > 0);
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
  CLOSE(at(p, "cost.wakeup_s"), m.send_wake + m.read_wake);
  CU_ASSERT(cJSON_GetArraySize(about_item(p, "notes")) >= 1);
  cJSON_Delete(p);
}

/* The cluster a 3-node spec including `profile` parses to, into c (its
 * errors printed); false if it does not. */
static bool cluster_of(const cJSON *profile, exp_cluster *c) {
  char *dir = unit_temp_dir();
  char *text = cJSON_Print(profile);
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
  bool ok = false;
  if (s) {
    const cJSON *cl = cJSON_GetObjectItem(exp_spec_runs(s)->runs[0].config, "cluster");
    ok = exp_cluster_parse(cl, exp_spec_dir(s), c, &e);
  }
  for (size_t i = 0; i < e.count; i++) fprintf(stderr, "    | %s\n", e.lines[i]);
  exp_spec_free(s);
  exp_errors_free(&e);
  unit_remove_tree(dir);
  free(dir);
  return ok;
}

/* The profile a calibration writes is a cluster a spec includes: the
 * machine's cores, the fitted figures. */
static void test_profile_validates_as_a_cluster(void) {
  model m = machine();
  cJSON *p = calibrate(&m, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  exp_cluster c;
  CU_ASSERT_TRUE_FATAL(cluster_of(p, &c));
  CU_ASSERT_EQUAL(c.sim.machines.count, 1);
  CU_ASSERT_EQUAL(c.sim.machines.cores, 3);
  CU_ASSERT_FALSE(c.sim.machines.pin);
  CLOSE(c.sim.cost.per_message_s, m.per_message);
  CLOSE(c.sim.host_speed, m.speed);
  CLOSE(c.sim.cost.initial_per_float_s, m.initial);
  exp_cluster_free(&c);
  cJSON_Delete(p);
}

/* Measured with a core per node (the source's nodes pinned, on a machine
 * of 4 cores): the profile's machines are those cores, one each, pinned,
 * more than the spec's 3 nodes (the fourth runs nothing), both I/O passes
 * on the message's path; the network between two of them is the loopback,
 * its wire's part (beyond the two passes) at each end. */
static void test_profile_of_a_core_per_node(void) {
  model m = machine();
  m.cores = 1;
  exp_calib_source src = source(&m);
  src.pinned_of = 4;
  exp_calib_options o;
  exp_calib_options_default(&o);
  char err[256] = "";
  cJSON *p = exp_calibrate(&src, &o, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(at(p, "machines.count"), 4);
  CU_ASSERT_EQUAL(at(p, "machines.cores"), 1);
  CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "machines"), "pin")));
  const cJSON *pm = cJSON_GetObjectItem(p, "machines");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(pm, "io_read")), "on_path");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(pm, "io_send")), "on_path");
  /* The network's latency is the wire's part of the loopback, beyond two
   * I/O passes, at each end: a loopback of 37 us and passes of 10 us leave
   * 8.5 us a link; one of 18 us (below) leaves none. */
  double pass = at(p, "cost.io_wakeup_s") + at(p, "cost.io_per_message_s");
  CLOSE(pass, m.io_wake / 2 + m.io);
  CLOSE(at(p, "network.latency"), (at(p, "machines.loopback_latency") - 2 * pass) / 2);
  CLOSE(at(p, "network.latency"), 8.5e-6);
  CU_ASSERT_EQUAL(at(p, "network.bandwidth"), at(p, "machines.loopback_bandwidth"));
  /* Preemption is measured although each machine has one core (the probe
   * uses two): the source's figures, switched off as without a pin. */
  CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(pm, "preempt")));
  CLOSE(at(p, "machines.preempt_wait"), m.preempt_wait);
  CLOSE(at(p, "machines.preempt_per_thread"), m.preempt_per_thread);
  const cJSON *of = about_item(p, "pinned_of");
  CU_ASSERT(cJSON_IsNumber(of) && of->valuedouble == 4);
  exp_cluster c;
  CU_ASSERT_TRUE_FATAL(cluster_of(p, &c));
  CU_ASSERT_TRUE(c.sim.machines.pin);
  CU_ASSERT_TRUE(c.sim.machines.io_read_on_path && c.sim.machines.io_send_on_path);
  CU_ASSERT_FALSE(c.sim.machines.preempt);
  CLOSE(c.sim.machines.preempt_wait_s, m.preempt_wait);
  CU_ASSERT_EQUAL(c.sim.machines.count, 4);
  CU_ASSERT_EQUAL(c.sim.latency, at(p, "network.latency"));
  CU_ASSERT_EQUAL(sim_cluster_check(&c.sim, err, sizeof err), 0);
  c.sim.machines.pin = false; /* unpinned, a machine without a node is refused */
  CU_ASSERT_EQUAL(sim_cluster_check(&c.sim, err, sizeof err), -1);
  exp_cluster_free(&c);
  cJSON_Delete(p);
  m.latency = 1e-6;
  p = exp_calibrate(&src, &o, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CLOSE(at(p, "machines.loopback_latency"), 18e-6);
  CU_ASSERT_EQUAL(at(p, "network.latency"), 0);
  cJSON_Delete(p);
}

/* A core per node on the real machine: while the probe runs, this process
 * (node 0) runs on one core, and gets its cores back when it ends; a pull
 * works. On one core, refused. */
static void test_real_probe_pinned(void) {
  cpu_set_t before, during, after;
  CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof before, &before), 0);
  char err[512] = "";
  real_probe *p = real_probe_start(NULL, true, err, sizeof err);
  if (CPU_COUNT(&before) < 2) {
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs two cores"));
    return;
  }
  if (!p) fprintf(stderr, "probe: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(sched_getaffinity(0, sizeof during, &during), 0);
  CU_ASSERT_EQUAL(CPU_COUNT(&during), 1);
  real_probe_sample remote;
  CU_ASSERT_EQUAL(real_probe_remote(p, 1, 1, 20, &remote, err, sizeof err), 0);
  CU_ASSERT(remote.wall_s > 0 && remote.node[1].process_cpu_s > 0);
  /* The preemption probe needs two cores: it gets them back meanwhile,
   * and this thread is on its one core again after. */
  double wait = -1, preempted = -1;
  CU_ASSERT_EQUAL(real_probe_preempt_beside(p, 1, 50, &wait, &preempted, err, sizeof err), 0);
  CU_ASSERT(wait >= 0 && preempted >= 0); /* other work may switch spinners out too */
  cpu_set_t again;
  CU_ASSERT_EQUAL(sched_getaffinity(0, sizeof again, &again), 0);
  CU_ASSERT_TRUE(CPU_EQUAL(&during, &again));
  CU_ASSERT_EQUAL(real_probe_remote(p, 1, 1, 20, &remote, err, sizeof err), 0);
  CU_ASSERT_EQUAL(real_probe_free(p), 0);
  CU_ASSERT_EQUAL(sched_getaffinity(0, sizeof after, &after), 0);
  CU_ASSERT_TRUE(CPU_EQUAL(&before, &after));
}

/* The real probe: a few pulls each way, figures that make sense, and both
 * nodes end cleanly. (No figure is compared with a speed: only that wall
 * and CPU time passed, a remote pull costs more than a local one, and node
 * 1's receiver, which serves node 0's pulls one at a time, slept and woke
 * for them inside the batch's readings.) */
static void test_real_probe(void) {
  char err[512] = "";
  real_probe *p = real_probe_start(NULL, false, err, sizeof err);
  if (!p) fprintf(stderr, "probe: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  real_probe_sample remote, local;
  CU_ASSERT_EQUAL(real_probe_remote(p, 4, 256, 50, &remote, err, sizeof err), 0);
  CU_ASSERT_EQUAL(real_probe_local(p, 4, 256, 50, &local, err, sizeof err), 0);
  CU_ASSERT(remote.wall_s > 0 && remote.cpu_s > 0 && remote.thread_cpu_s > 0);
  CU_ASSERT(remote.cpu_s >= remote.thread_cpu_s);
  CU_ASSERT(remote.node[1].receiver_cpu_s > 0);
  CU_ASSERT(remote.node[1].process_cpu_s >= remote.node[1].receiver_cpu_s);
  /* Node 1's reading thread slept and woke for requests (counted at all:
   * how many of the 50 depends on the machine's load, which a test on a
   * shared machine does not control). */
  CU_ASSERT(remote.node[1].wakeups >= 1);
  CU_ASSERT(remote.node[0].send_cpu_s > 0 && remote.node[0].send_cpu_s < remote.thread_cpu_s);
  CU_ASSERT(local.wall_s > 0);
  CU_ASSERT(remote.cpu_s > local.cpu_s);
  double initial = 0;
  CU_ASSERT_EQUAL(real_probe_initial(1e5, &initial, err, sizeof err), 0);
  CU_ASSERT(initial > 0);
  /* The slice: four threads on however many cores; positive, and no longer
   * than the longest window they may spin (a window with no turn taken is
   * tried again, twice as long, up to 5 windows: 0.05 to 0.8 s). */
  double slice = 0;
  CU_ASSERT_EQUAL(real_probe_slice(4, 0.05, &slice, err, sizeof err), 0);
  CU_ASSERT(slice > 0 && slice <= 0.8);
  CU_ASSERT_EQUAL(real_probe_slice(0, 0.05, &slice, err, sizeof err), -1);
  /* One spinner on an idle machine of two cores or more takes no turn: five
   * windows, then an error that says so; on a busy one it may take some. */
  slice = 0;
  if (real_probe_slice(1, 0.01, &slice, err, sizeof err) == 0) {
    CU_ASSERT(slice > 0 && slice <= 0.16);
  } else {
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "in 5 windows of 0.01 to 0.16 s"));
  }
  /* A woken thread beside a spinner on its core, 50 wake-ups: a wait and
   * the spinner's switches a wake-up, each at least nothing (how long, and
   * how often, depend on what else the machine runs: not asserted). Needs
   * two cores, else says so. */
  double wait = -1, preempted = -1;
  cpu_set_t cpus;
  bool two = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
  CU_ASSERT_EQUAL(real_probe_preempt(1, 50, &wait, &preempted, err, sizeof err), two ? 0 : -1);
  if (two) {
    CU_ASSERT(wait >= 0 && isfinite(wait));
    CU_ASSERT(preempted >= 0 && isfinite(preempted));
  } else {
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "two cores"));
  }
  CU_ASSERT_EQUAL(real_probe_preempt(0, 50, &wait, &preempted, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "spinners"));
  CU_ASSERT_EQUAL(real_probe_remote(p, 4, 3, 1, &remote, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "3 floats"));
  /* A window, two pullers, both ways: every pull answered, nodes intact. */
  real_probe_batch b = {.keys = 1, .floats = 16, .count = 40, .window = 8};
  real_probe_sample s;
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  b = (real_probe_batch){.keys = 2, .floats = 64, .count = 20, .clients = 2};
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  CU_ASSERT(s.thread_cpu_s > 0);
  b = (real_probe_batch){.keys = 2, .floats = 64, .count = 20, .both_ways = true};
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  CU_ASSERT(s.node[1].issue_cpu_s > 0 && s.node[1].send_cpu_s > 0);
  /* Spinners: every pull still answered; their CPU is not node 0's (a
   * batch of a few pulls with two spinning threads would otherwise count
   * their whole time). */
  b = (real_probe_batch){.keys = 1, .floats = 1, .count = 30, .spinners = 2};
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  CU_ASSERT(s.node[0].process_cpu_s < 2 * s.wall_s);
  b.spinners = REAL_PROBE_MAX_SPINNERS + 1;
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "spinning threads"));
  /* Pulls and pushes of local keys by two threads, counted: no more
   * shared accesses than accesses (how many depends on whether the machine
   * ran both at once); not counted, none; pushes to remote keys refused. */
  b = (real_probe_batch){.keys = 16, .floats = 16, .count = 200, .clients = 2, .local = true,
                         .push = true, .count_shared = true};
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  CU_ASSERT(s.node[0].shared_accesses >= 0 && s.node[0].shared_accesses <= 2.0 * 16 * 2 * 200);
  CU_ASSERT(s.thread_cpu_s > 0);
  b.count_shared = false;
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s.node[0].shared_accesses, 0);
  b.local = false;
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "local"));
  /* The largest pull the grid makes (per-key costs need many keys), and
   * one key more refused. */
  b = (real_probe_batch){.keys = REAL_PROBE_MAX_KEYS, .floats = 1, .count = 20};
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), 0);
  CU_ASSERT(s.wall_s > 0 && s.node[1].receiver_cpu_s > 0);
  b.keys++;
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "keys"));
  b = (real_probe_batch){.keys = 2, .floats = 64, .count = 20, .both_ways = true};
  b.window = REAL_PROBE_MAX_WINDOW + 1;
  CU_ASSERT_EQUAL(real_probe_run(p, &b, &s, err, sizeof err), -1);
  CU_ASSERT_EQUAL(real_probe_free(p), 0);
}

PSLAB_SUITE("calibrate", {"fit_recovers_the_model", test_fit_recovers_the_model},
            {"check_predicts_the_held_out_batches", test_check_predicts_the_held_out_batches},
            {"uncounted_wakeups_are_noted", test_uncounted_wakeups_are_noted},
            {"shared_costs_need_threads_at_once", test_shared_costs_need_threads_at_once},
            {"busy_machine_is_noted", test_busy_machine_is_noted},
            {"step_cost_from_records", test_step_cost_from_records},
            {"noisy_rounds_report_their_spread", test_noisy_rounds_report_their_spread},
            {"degenerate_figures_are_noted", test_degenerate_figures_are_noted},
            {"profile_validates_as_a_cluster", test_profile_validates_as_a_cluster},
            {"profile_of_a_core_per_node", test_profile_of_a_core_per_node},
            {"real_probe", test_real_probe},
            {"real_probe_pinned", test_real_probe_pinned})
