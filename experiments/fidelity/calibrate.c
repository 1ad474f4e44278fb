/*
 * `pslab calibrate`: measure this machine with the real backend and write a
 * cluster profile that specs include (cluster.profile).
 *
 * What is measured comes through an exp_calib_source (remote pulls, local
 * pulls, compute), so the arithmetic here is tested on made-up numbers; the
 * real source is a probe of two real nodes on loopback (real/probe.c).
 *
 * Each figure is measured in rounds, a batch of operations each (sized to
 * take about CALIB_BATCH_S), until the last `min_rounds` rounds agree within
 * `target_spread` (half their range over their median) or `max_rounds` is
 * reached; the figure is the median of those last rounds, and its spread is
 * reported either way.
 *
 * The model the figures are fitted to is the simulator's for nodes on one
 * machine (cluster.machines). A remote pull of k keys, B bytes in all
 * (request and reply, ps_msg_encoded_len), with one pull outstanding:
 *
 *   CPU of both processes per pull   = 2 (m + s) + 2k p_k + B p_b
 *   wall time per pull (round trip)  = 2 L + B / W + 2 m + 2k p_k + B p_b
 *
 * with m = per_message_s (the receiving server thread), s =
 * send_per_message_s (the sending thread, paid off the critical path), p_k =
 * per_key_s, p_b = per_byte_s, L and W the loopback's latency and
 * bandwidth. A least-squares fit of CPU on (1, 2k, B) gives 2(m + s), p_k and
 * p_b; s is the issuing thread's CPU per pull of the smallest pull (its
 * sending and waking); m the rest. A fit of the round trip on (1, 2k, B)
 * gives 2L + 2m, so L; and 1/W + p_b, so W. Every CPU second is thus
 * charged somewhere, and a lone round trip is reproduced. A coefficient the
 * data make negative is set to 0 and said so in the profile's notes.
 *
 * local_per_key_s is a local pull's time per key (16 keys of 64 floats, the
 * core's fast local access); host_speed the flop rate of the source's
 * compute kernel; machines.cores the cores this process may run on.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "experiments/results/results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CALIB_BATCH_S 0.04 /* seconds a round's batch aims at (x scale) */
#define CALIB_MIN_COUNT 5
#define CALIB_MAX_COUNT 1000000
#define CALIB_LOCAL_KEYS 16
#define CALIB_LOCAL_FLOATS 64
#define CALIB_COMPUTE_FLOPS 1e6 /* of the warm-up batch */
#define CALIB_MAX_ROUNDS 64

/* The remote pulls measured: keys per pull, floats per value. */
static const struct {
  uint32_t keys, floats;
} remote_grid[] = {{1, 1}, {1, 256}, {1, 4096}, {4, 4096}, {16, 1}, {64, 1}, {16, 256}};
#define REMOTE_GRID (sizeof remote_grid / sizeof remote_grid[0])

void exp_calib_options_default(exp_calib_options *o) {
  *o = (exp_calib_options){.min_rounds = 5, .max_rounds = 25, .target_spread = 0.05,
                           .scale = 1, .log = NULL};
}

/* ------------------------------------------------------------- rounds */

typedef enum { FIG_REMOTE, FIG_LOCAL, FIG_COMPUTE } fig_kind;

/* One figure: per operation, the median of the last rounds. */
typedef struct {
  double wall_s, cpu_s, thread_cpu_s;
  double spread;  /* of wall_s: half the range of the last rounds / median */
  unsigned rounds;
} figure;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(const double *v, unsigned n) {
  double s[CALIB_MAX_ROUNDS];
  memcpy(s, v, n * sizeof *v);
  qsort(s, n, sizeof *s, cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static int measure_once(const exp_calib_source *src, fig_kind kind, uint32_t keys,
                        uint32_t floats, double count, exp_calib_sample *out, char *err,
                        size_t errlen) {
  switch (kind) {
  case FIG_REMOTE:
    return src->remote(src->ctx, keys, floats, (uint32_t)count, out, err, errlen);
  case FIG_LOCAL:
    return src->local(src->ctx, keys, floats, (uint32_t)count, out, err, errlen);
  case FIG_COMPUTE:
    *out = (exp_calib_sample){0};
    return src->compute(src->ctx, count, &out->wall_s, err, errlen);
  }
  return -1;
}

/* Rounds of `kind` until they agree (see the top). A round is `count`
 * operations (flops for compute), sized from a warm-up batch. */
static int measure(const exp_calib_source *src, const exp_calib_options *o, fig_kind kind,
                   uint32_t keys, uint32_t floats, figure *f, char *err, size_t errlen) {
  bool flops = kind == FIG_COMPUTE;
  double count = flops ? CALIB_COMPUTE_FLOPS : 20;
  exp_calib_sample s;
  if (measure_once(src, kind, keys, floats, count, &s, err, errlen) != 0) return -1;
  double per = s.wall_s / count;
  if (per > 0) count = CALIB_BATCH_S * o->scale / per;
  count = flops ? fmax(count, CALIB_COMPUTE_FLOPS)
                : fmin(fmax(floor(count), CALIB_MIN_COUNT), CALIB_MAX_COUNT);
  unsigned max = o->max_rounds > CALIB_MAX_ROUNDS ? CALIB_MAX_ROUNDS : o->max_rounds;
  unsigned window = o->min_rounds < 1 ? 1 : o->min_rounds > max ? max : o->min_rounds;
  double wall[CALIB_MAX_ROUNDS], cpu[CALIB_MAX_ROUNDS], thread[CALIB_MAX_ROUNDS];
  for (unsigned r = 0; r < max; r++) {
    if (measure_once(src, kind, keys, floats, count, &s, err, errlen) != 0) return -1;
    wall[r] = s.wall_s / count;
    cpu[r] = s.cpu_s / count;
    thread[r] = s.thread_cpu_s / count;
    f->rounds = r + 1;
    if (r + 1 < window) continue;
    unsigned first = r + 1 - window;
    double lo = wall[first], hi = wall[first];
    for (unsigned i = first + 1; i <= r; i++) {
      lo = fmin(lo, wall[i]);
      hi = fmax(hi, wall[i]);
    }
    f->wall_s = median_of(wall + first, window);
    f->cpu_s = median_of(cpu + first, window);
    f->thread_cpu_s = median_of(thread + first, window);
    f->spread = f->wall_s > 0 ? 0.5 * (hi - lo) / f->wall_s : 0;
    if (f->spread <= o->target_spread) break;
  }
  return 0;
}

/* --------------------------------------------------------------- fits */

/* Least squares of y on (1, x1, x2) over n points: b[0..2]. false when the
 * points do not determine them. */
static bool fit3(const double *x1, const double *x2, const double *y, size_t n, double b[3]) {
  double a[3][4] = {{0}};
  for (size_t i = 0; i < n; i++) {
    double row[3] = {1, x1[i], x2[i]};
    for (int r = 0; r < 3; r++) {
      for (int c = 0; c < 3; c++) a[r][c] += row[r] * row[c];
      a[r][3] += row[r] * y[i];
    }
  }
  for (int c = 0; c < 3; c++) { /* Gauss-Jordan with partial pivoting */
    int piv = c;
    for (int r = c + 1; r < 3; r++)
      if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
    if (fabs(a[piv][c]) < 1e-300) return false;
    for (int k = 0; k < 4; k++) {
      double t = a[c][k];
      a[c][k] = a[piv][k];
      a[piv][k] = t;
    }
    for (int r = 0; r < 3; r++) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (int k = c; k < 4; k++) a[r][k] -= f * a[c][k];
    }
  }
  for (int r = 0; r < 3; r++) b[r] = a[r][3] / a[r][r];
  return true;
}

/* x, or 0 with a note when the data made it negative. */
static double at_least_zero(double x, const char *what, cJSON *notes) {
  if (x >= 0) return x;
  char line[160];
  snprintf(line, sizeof line, "%s came out negative (%.3g) and was set to 0", what, x);
  cJSON_AddItemToArray(notes, cJSON_CreateString(line));
  return 0;
}

/* ------------------------------------------------------------- output */

static void add_figure(cJSON *list, const char *name, uint32_t keys, uint32_t floats,
                       const figure *f) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  if (keys) {
    cJSON_AddNumberToObject(o, "keys", keys);
    cJSON_AddNumberToObject(o, "floats", floats);
  }
  cJSON_AddNumberToObject(o, "wall_s", f->wall_s);
  if (keys) {
    cJSON_AddNumberToObject(o, "cpu_s", f->cpu_s);
    cJSON_AddNumberToObject(o, "thread_cpu_s", f->thread_cpu_s);
  }
  cJSON_AddNumberToObject(o, "spread", f->spread);
  cJSON_AddNumberToObject(o, "rounds", f->rounds);
  cJSON_AddItemToArray(list, o);
}

static void log_figure(FILE *log, const char *what, const figure *f, const char *unit,
                       double value, const exp_calib_options *o) {
  if (!log) return;
  char v[48];
  exp_format_quantity(value, unit, v, sizeof v);
  fprintf(log, "  %-34s %12s  spread %5.1f%%  %2u rounds%s\n", what, v, 100 * f->spread,
          f->rounds, f->spread > o->target_spread ? "  (spread above target)" : "");
}

static void about(cJSON *profile, const exp_calib_source *src, const exp_calib_options *o,
                  cJSON *figures, cJSON *notes) {
  cJSON *a = cJSON_AddObjectToObject(profile, EXP_PROFILE_ABOUT);
  char host[256] = "", when[32] = "";
  gethostname(host, sizeof host - 1);
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
  cJSON_AddStringToObject(a, "by", "pslab calibrate");
  cJSON_AddStringToObject(a, "host", host);
  cJSON_AddStringToObject(a, "date", when);
  cJSON_AddNumberToObject(a, "cores", src->cores);
  cJSON_AddNumberToObject(a, "target_spread", o->target_spread);
  cJSON_AddItemToObject(a, "figures", figures);
  cJSON_AddItemToObject(a, "notes", notes);
}

/* ------------------------------------------------------------ the fit */

/* What was measured, as the fit takes it. */
typedef struct {
  /* Per remote pull of the grid: 2k, the bytes of request and reply, the
   * round trip and the CPU of both processes. */
  double k2[REMOTE_GRID], bytes[REMOTE_GRID], rtt[REMOTE_GRID], cpu[REMOTE_GRID];
  double issuer;        /* the issuing thread's CPU per pull of the smallest */
  double local_per_key; /* a local pull's time per key */
  double speed;         /* the compute kernel's flop/s (0: it took no time) */
} measured;

/* The cost model's coefficients (see the top). */
typedef struct {
  double per_msg, send, per_key, per_byte, latency, bandwidth;
} fitted;

/* Measures every figure through src, in order (the remote grid, a local
 * pull, compute), adding each to figures and to o->log. 0, or -1 with a
 * message. */
static int measure_all(const exp_calib_source *src, const exp_calib_options *o,
                       cJSON *figures, measured *m, char *err, size_t errlen) {
  FILE *log = o->log;
  if (log) fprintf(log, "pslab calibrate: remote pulls between two real nodes on loopback\n");
  for (size_t i = 0; i < REMOTE_GRID; i++) {
    uint32_t k = remote_grid[i].keys, v = remote_grid[i].floats;
    figure f = {0};
    if (measure(src, o, FIG_REMOTE, k, v, &f, err, errlen) != 0) return -1;
    m->k2[i] = 2.0 * k;
    m->bytes[i] = (double)ps_msg_encoded_len(k, 0) + (double)ps_msg_encoded_len(k, k * v);
    m->rtt[i] = f.wall_s;
    m->cpu[i] = f.cpu_s;
    if (i == 0) m->issuer = f.thread_cpu_s;
    add_figure(figures, "remote_pull", k, v, &f);
    char what[64];
    snprintf(what, sizeof what, "round trip, %u key%s of %u float%s", k, k > 1 ? "s" : "", v,
             v > 1 ? "s" : "");
    log_figure(log, what, &f, "s", f.wall_s, o);
  }
  figure local = {0}, compute = {0};
  if (measure(src, o, FIG_LOCAL, CALIB_LOCAL_KEYS, CALIB_LOCAL_FLOATS, &local, err, errlen) != 0)
    return -1;
  add_figure(figures, "local_pull", CALIB_LOCAL_KEYS, CALIB_LOCAL_FLOATS, &local);
  m->local_per_key = local.wall_s / CALIB_LOCAL_KEYS;
  log_figure(log, "local pull, per key of 64 floats", &local, "s", m->local_per_key, o);
  if (measure(src, o, FIG_COMPUTE, 0, 0, &compute, err, errlen) != 0) return -1;
  add_figure(figures, "compute_per_flop", 0, 0, &compute);
  m->speed = compute.wall_s > 0 ? 1 / compute.wall_s : 0;
  log_figure(log, "compute (dot products)", &compute, "flop/s", m->speed, o);
  return 0;
}

/* Fits the cost model to m (see the top); a coefficient set to 0 or a
 * bandwidth that limits nothing is said in notes. False with a message. */
static bool fit_model(const measured *m, cJSON *notes, fitted *out, char *err, size_t errlen) {
  double bc[3], br[3];
  if (!fit3(m->k2, m->bytes, m->cpu, REMOTE_GRID, bc) ||
      !fit3(m->k2, m->bytes, m->rtt, REMOTE_GRID, br)) {
    snprintf(err, errlen, "calibrate: the remote figures do not determine the cost model");
    return false;
  }
  out->per_key = at_least_zero(bc[1], "per_key_s", notes);
  out->per_byte = at_least_zero(bc[2], "per_byte_s", notes);
  out->send = fmin(m->issuer, fmax(bc[0], 0) / 2);
  out->per_msg = at_least_zero(bc[0] / 2 - out->send, "per_message_s", notes);
  out->latency =
      at_least_zero((br[0] - 2 * out->per_msg) / 2, "machines.loopback_latency", notes);
  double inv_bw = br[2] - out->per_byte;
  out->bandwidth = 1 / inv_bw;
  if (!(inv_bw > 1e-12)) { /* more than 1 TB/s: limits nothing */
    cJSON_AddItemToArray(notes, cJSON_CreateString(
        "the round trip grows no faster with bytes than the CPU cost per byte: the loopback "
        "bandwidth limits nothing beyond it and is written as 1 TBps"));
    out->bandwidth = 1e12;
  }
  return true;
}

/* The profile: EXP_PROFILE_ABOUT (taking figures and notes), host_speed,
 * cost and machines. */
static cJSON *profile_make(const exp_calib_source *src, const exp_calib_options *o,
                           cJSON *figures, cJSON *notes, const measured *m, const fitted *f) {
  cJSON *profile = cJSON_CreateObject();
  about(profile, src, o, figures, notes);
  cJSON_AddNumberToObject(profile, "host_speed", m->speed);
  cJSON *cost = cJSON_AddObjectToObject(profile, "cost");
  cJSON_AddNumberToObject(cost, "per_message_s", f->per_msg);
  cJSON_AddNumberToObject(cost, "per_key_s", f->per_key);
  cJSON_AddNumberToObject(cost, "per_byte_s", f->per_byte);
  cJSON_AddNumberToObject(cost, "local_per_key_s", m->local_per_key);
  cJSON_AddNumberToObject(cost, "send_per_message_s", f->send);
  cJSON *machines = cJSON_AddObjectToObject(profile, "machines");
  cJSON_AddNumberToObject(machines, "count", 1);
  cJSON_AddNumberToObject(machines, "cores", src->cores);
  cJSON_AddNumberToObject(machines, "loopback_latency", f->latency);
  cJSON_AddNumberToObject(machines, "loopback_bandwidth", f->bandwidth);
  return profile;
}

static void log_fitted(FILE *log, const measured *m, const fitted *fit, uint32_t cores) {
  char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
  exp_format_quantity(fit->per_msg, "s", a, sizeof a);
  exp_format_quantity(fit->send, "s", b, sizeof b);
  exp_format_quantity(fit->per_key, "s", c, sizeof c);
  exp_format_quantity(fit->per_byte, "s", d, sizeof d);
  exp_format_quantity(fit->latency, "s", e, sizeof e);
  exp_format_quantity(fit->bandwidth, "B", f, sizeof f);
  exp_format_quantity(m->local_per_key, "s", g, sizeof g);
  fprintf(log, "fitted: per_message_s %s, send_per_message_s %s, per_key_s %s, per_byte_s "
               "%s,\n        loopback latency %s and bandwidth %s/s, local_per_key_s %s, %u "
               "cores\n", a, b, c, d, e, f, g, cores);
}

/* ---------------------------------------------------------------- door */

cJSON *exp_calibrate(const exp_calib_source *src, const exp_calib_options *o, char *err,
                     size_t errlen) {
  cJSON *figures = cJSON_CreateArray(), *notes = cJSON_CreateArray();
  measured m = {0};
  fitted fit;
  if (measure_all(src, o, figures, &m, err, errlen) != 0 ||
      !fit_model(&m, notes, &fit, err, errlen))
    goto fail;
  if (!(m.speed > 0)) {
    snprintf(err, errlen, "calibrate: the compute kernel took no time");
    goto fail;
  }
  cJSON *profile = profile_make(src, o, figures, notes, &m, &fit);
  if (o->log) log_fitted(o->log, &m, &fit, src->cores);
  return profile;
fail:
  cJSON_Delete(figures);
  cJSON_Delete(notes);
  return NULL;
}

/* ------------------------------------------------------ the real source */

static int real_remote(void *ctx, uint32_t keys, uint32_t floats, uint32_t count,
                       exp_calib_sample *out, char *err, size_t errlen) {
  real_probe_sample s;
  if (real_probe_remote(ctx, keys, floats, count, &s, err, errlen) != 0) return -1;
  *out = (exp_calib_sample){s.wall_s, s.cpu_s, s.thread_cpu_s};
  return 0;
}

static int real_local(void *ctx, uint32_t keys, uint32_t floats, uint32_t count,
                      exp_calib_sample *out, char *err, size_t errlen) {
  real_probe_sample s;
  if (real_probe_local(ctx, keys, floats, count, &s, err, errlen) != 0) return -1;
  *out = (exp_calib_sample){s.wall_s, s.cpu_s, s.thread_cpu_s};
  return 0;
}

static double wall_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Dot products of two 64-float vectors, as the tasks' math makes them:
 * 128 flops each. */
static int dot_compute(void *ctx, double flops, double *wall_s, char *err, size_t errlen) {
  (void)ctx;
  (void)err;
  (void)errlen;
  static float x[64], y[64];
  for (int i = 0; i < 64; i++) x[i] = y[i] = 1.0f / (float)(i + 1);
  uint64_t dots = (uint64_t)ceil(flops / 128);
  double start = wall_clock();
  volatile float sink = 0;
  for (uint64_t d = 0; d < dots; d++) {
    float s = 0;
    for (int i = 0; i < 64; i++) s += x[i] * y[i];
    sink = sink + s;
    x[d & 63] += 1e-7f; /* keep each dot product live */
  }
  *wall_s = (wall_clock() - start) * flops / (128.0 * (double)dots);
  return 0;
}

static uint32_t cores_here(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return (uint32_t)CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint32_t)n : 1;
}

int exp_calib_real_source(exp_calib_source *src, char *err, size_t errlen) {
  real_probe *p = real_probe_start(NULL, err, errlen);
  if (!p) return -1;
  *src = (exp_calib_source){.ctx = p, .remote = real_remote, .local = real_local,
                            .compute = dot_compute, .cores = cores_here()};
  return 0;
}

int exp_calib_real_source_end(exp_calib_source *src) {
  int rc = real_probe_free(src->ctx);
  src->ctx = NULL;
  return rc;
}

/* Whether path's directory takes a new file, before seconds of measuring. */
static bool writable_dir(const char *path, FILE *log) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  bool ok = dir && access(dir, W_OK | X_OK) == 0;
  if (!ok)
    fprintf(log, "pslab calibrate: cannot write %s: %s is not a writable directory\n", path,
            dir ? dir : "its directory");
  free(dir);
  return ok;
}

int exp_calibrate_file(const char *path, const exp_calib_options *o, FILE *log) {
  char err[1024];
  if (!writable_dir(path, log)) return EXP_EXIT_FAILED;
  exp_calib_source src;
  if (exp_calib_real_source(&src, err, sizeof err) != 0) {
    fprintf(log, "pslab calibrate: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  cJSON *profile = exp_calibrate(&src, o, err, sizeof err);
  bool ended = exp_calib_real_source_end(&src) == 0;
  char *text = profile ? cJSON_Print(profile) : NULL;
  cJSON_Delete(profile);
  size_t len = text ? strlen(text) : 0;
  char *file = text ? realloc(text, len + 2) : NULL;
  int rc = -1;
  if (file) {
    memcpy(file + len, "\n", 2);
    rc = exp_write_file_atomic(path, file, len + 1, err, sizeof err);
  } else if (profile) {
    free(text);
    snprintf(err, sizeof err, "out of memory");
  }
  free(file);
  if (rc != 0) {
    fprintf(log, "pslab calibrate: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  if (!ended) fprintf(log, "pslab calibrate: warning: the probe's nodes did not end cleanly\n");
  if (o->log)
    fprintf(o->log, "wrote %s (a spec includes it: \"cluster\": {\"profile\": \"%s\", ...})\n",
            path, path);
  return EXP_EXIT_OK;
}
