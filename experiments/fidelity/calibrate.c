/*
 * `pslab calibrate`: measure this machine with the real backend and write a
 * cluster profile that specs include (cluster.profile).
 *
 * What is measured comes through an exp_calib_source (batches of pulls,
 * compute), so the arithmetic here is tested on made-up numbers; the real
 * source is a probe of two real nodes on loopback (real/probe.c): node 0
 * pulls keys homed at node 1, whose receiver thread serves them; node 0's
 * pulling thread reads its own replies while it waits (real/leader.c).
 *
 * Each figure is measured in rounds, a batch each (sized to take about
 * CALIB_BATCH_S), until the last `min_rounds` rounds agree within
 * `target_spread` (half the range of their wall time over its median) or
 * `max_rounds` is reached; the figure is the median of those last rounds,
 * field by field, per pull, and its spread is reported either way. The
 * figures take their rounds in turn, one each, so that load that comes and
 * goes while calibrating moves them alike.
 *
 * The model is the simulator's node, as
 * docs/fidelity.md, "Calibrating: pslab calibrate" has it.
 * A message costs the thread that sends it s = send_per_message_s after the
 * send; ZeroMQ's I/O thread io = io_per_message_s at each end, off the
 * critical path; the thread that handles it m = per_message_s, plus p_k =
 * per_key_s per key and p_b = per_byte_s per byte; and a handling thread
 * that slept because nothing was waiting pays w = wakeup_s before it handles
 * the next (w_t), and an I/O thread that slept io_wakeup_s (w_io; it works
 * beside the message, so its wake-up's time on a lone round trip is in L).
 * With r the share of messages that found their handler asleep (1 with one
 * pull outstanding), q the I/O threads' wake-ups per message (both ends, as
 * counted: their voluntary context switches; 2 r where not counted), a
 * remote pull of k keys, B bytes in request and reply (ps_msg_encoded_len),
 * costs
 *
 *   CPU of both processes   = 2 (m + s + 2 io + r w_t + q w_io) + 2k p_k + B p_b
 *   one outstanding, wall   = 2 L + B / W + 2 w_t + 2 m + 2k p_k + B p_b
 *
 * with L and W the loopback's latency and bandwidth (the sends are paid
 * after the send, the I/O threads beside: neither delays the round trip).
 *
 * The fit, every parameter from the figures:
 *   - p_k, p_b: a least-squares fit of the CPU per pull over the size grid
 *     (one outstanding, r = 1) on (1, 2k, B);
 *   - r per window of outstanding pulls (1, 4, 16 of the smallest pull):
 *     the wake-ups per message handled, over those of one outstanding;
 *   - s: the CPU per pull of the calls that issued the pulls, fitted on r
 *     (a line; s its value at r = 0: a busy sender's);
 *   - m and the pulling and receiving threads' share of w (w_t): their CPU per
 *     message (sending and handling) fitted on r: the line's slope is the
 *     share of w, its value at r = 0 is m + s + the key and byte terms;
 *   - io and w_io: what the processes spent beyond those threads, per
 *     message, fitted on q: at q = 0 it is 2 io, its slope w_io;
 *   - L and W: a fit of the wall time per pull over the size grid on
 *     (1, 2k, B) gives 2 L + 2 w_t + 2 m, so L, and 1/W + p_b, so W: a lone
 *     round trip is reproduced, and every CPU second is charged somewhere.
 * A coefficient the data make negative is set to 0 and said so in the
 * profile's notes. Each parameter's spread is that of the same fit made
 * round by round (round i of every figure), half its range over the
 * fitted value.
 *
 * The check: the batches the fit did not use (traffic both ways at once,
 * two pulling threads) are predicted from the fitted parameters and their
 * measured wake-ups per message: their CPU per pull by the formula above,
 * their wall time per pull by the model's bound, the largest of the round
 * trip over the pulls outstanding, the busiest handling thread's time per
 * pull, the sending threads' and the CPU per pull over the cores. Measured
 * and predicted go to the log and the profile; nothing is tuned on them.
 *
 * local_per_key_s is a local pull's CPU time per key on the pulling thread
 * (16 keys of 64 floats, the core's fast local access); host_speed the flop
 * rate of the source's compute kernel; initial_per_float_s the time real
 * math takes to add the initial value of one pulled float (the source's
 * kernel: a workload's wl_add_initial); machines.cores the cores this
 * process may run on;
 * machines.slice the scheduler's slice, measured with two spinning threads a
 * core (the median of CALIB_SLICE_ROUNDS rounds): what the run-queue model
 * of the simulator lets a thread run while another waits for its core.
 *
 * shared_per_key_s and shared_per_byte_s: what a key access costs more when
 * another thread of the node touched the key last (its cache lines come
 * from the other core). Two local batches a size (16 keys of 16 and of 256
 * floats, each pull followed by a push of the same keys, as a training
 * step reads and writes them, each pull's keys drawn at random from a pool
 * of six pulls' worth): one thread, then two threads on the same pool at
 * once; a third batch of two threads counts, with the core's count
 * (ps_node_count_shared, which writes every entry and so is not timed),
 * the share of accesses that found the key last touched by the other
 * thread. Per size and round (the three batches measured one after the
 * other, under the same load), what an access cost more with two threads
 * over that share is a shared access's cost; its median over the rounds,
 * at the two sizes, gives it per key and per byte. Threads that do not run
 * at once (one core, or a round the machine gave them one) share nothing:
 * such rounds are left out, and with none left the cost is 0, said in the
 * notes.
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
#define CALIB_COMPUTE_FLOPS 1e6 /* of the warm-up batch */
#define CALIB_MAX_ROUNDS 64
#define CALIB_LOCAL_KEYS 16
#define CALIB_MIN_WAKE_RANGE 0.05 /* of r over the windows, to fit w */
#define CALIB_SLICE_ROUNDS 5
#define CALIB_SLICE_S 0.1 /* seconds a slice round spins (x scale) */
#define CALIB_SLICE_MIN_S 0.05 /* ... at least */
#define CALIB_MIN_SHARE 0.02 /* of accesses found shared, to fit shared_* */
#define CALIB_PREEMPT_SPINNERS 4 /* a woken thread beside 1 to this many spinners */
#define CALIB_PREEMPT_ROUNDS 5
#define CALIB_PREEMPT_WAKES 500 /* a round's wake-ups (x scale), 200 us apart */

/* What a probe is for. */
typedef enum {
  USE_GRID, USE_WINDOW, USE_BUSY, USE_CHECK, USE_LOCAL, USE_COMPUTE, USE_INITIAL,
  USE_RW_ALONE, USE_RW_SHARED, USE_RW_COUNT /* the shared accesses' batches */
} probe_use;

/* The batches measured, in order: the size grid (its first, the smallest
 * pull, is also the window of 1), the windows, the checks, a local pull and
 * the compute kernel. */
static const struct {
  const char *name;
  probe_use use;
  exp_calib_batch b;
} probes[] = {
    {"remote_pull", USE_GRID, {.keys = 1, .floats = 1}},
    {"remote_pull", USE_GRID, {.keys = 1, .floats = 256}},
    {"remote_pull", USE_GRID, {.keys = 1, .floats = 4096}},
    {"remote_pull", USE_GRID, {.keys = 4, .floats = 4096}},
    {"remote_pull", USE_GRID, {.keys = 16, .floats = 1}},
    {"remote_pull", USE_GRID, {.keys = 64, .floats = 1}},
    {"remote_pull", USE_GRID, {.keys = 16, .floats = 256}},
    {"remote_pull", USE_GRID, {.keys = 64, .floats = 16}},
    {"remote_pull", USE_GRID, {.keys = 256, .floats = 1}},
    {"window", USE_WINDOW, {.keys = 1, .floats = 1, .window = 4}},
    {"window", USE_WINDOW, {.keys = 1, .floats = 1, .window = 16}},
    {"busy_cores", USE_BUSY, {.keys = 1, .floats = 1}}, /* spinners: one per core */
    {"both_ways", USE_CHECK, {.keys = 4, .floats = 64, .both_ways = true}},
    {"clients", USE_CHECK, {.keys = 4, .floats = 64, .clients = 2}},
    {"local_pull", USE_LOCAL, {.keys = CALIB_LOCAL_KEYS, .floats = 64, .local = true}},
    {"compute_per_flop", USE_COMPUTE, {0}},
    {"initial_per_float", USE_INITIAL, {0}},
#define RW(f)                                                                            \
  {"local_rw", USE_RW_ALONE, {.keys = CALIB_LOCAL_KEYS, .floats = f, .local = true, .push = true}}, \
  {"shared_rw", USE_RW_SHARED,                                                             \
   {.keys = CALIB_LOCAL_KEYS, .floats = f, .local = true, .push = true, .clients = 2}},      \
  {"shared_rw_count", USE_RW_COUNT,                                                        \
   {.keys = CALIB_LOCAL_KEYS, .floats = f, .local = true, .push = true, .clients = 2,         \
    .count_shared = true}}
    RW(16), RW(256),
#undef RW
};
/* The shared batches' sizes (floats a key), in the order above. */
static const double shared_floats[] = {16, 256};
#define SHARED_SIZES 2
#define PROBES (sizeof probes / sizeof probes[0])
#define GRID 9    /* probes[0 .. GRID) */
#define WINDOWS 3 /* probes[0] and the two USE_WINDOW after the grid */
#define SAMPLE_DOUBLES (sizeof(exp_calib_sample) / sizeof(double))
_Static_assert(sizeof(exp_calib_sample) % sizeof(double) == 0, "a sample is only doubles");

void exp_calib_options_default(exp_calib_options *o) {
  *o = (exp_calib_options){.min_rounds = 5, .max_rounds = 25, .target_spread = 0.05,
                           .scale = 1, .log = NULL};
}

/* ------------------------------------------------------------- rounds */

/* One figure: per pull (per flop for compute), every round, and the median
 * of the last `kept`. */
typedef struct {
  exp_calib_sample round[CALIB_MAX_ROUNDS];
  exp_calib_sample med;
  unsigned rounds, kept;
  double spread;     /* of wall_s: half the range of the last rounds / median */
  double cpu_spread; /* the same of cpu_s */
} figure;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(const double *v, unsigned n) {
  double s[CALIB_MAX_ROUNDS];
  memcpy(s, v, n * sizeof *v);
  qsort(s, n, sizeof *s, cmp_double);
  return exp_median_sorted(s, n);
}

static double *fields(exp_calib_sample *s) { return (double *)s; }

/* Pulls in a batch of b with count `count`: per thread, both ways twice. */
static double pulls_of(const exp_calib_batch *b, double count) {
  return count * (b->clients ? b->clients : 1) * (b->both_ways ? 2 : 1);
}

/* Whether probe i times a kernel of this process per unit (flops, floats),
 * not pulls between the nodes. */
static bool kernel(size_t i) {
  return probes[i].use == USE_COMPUTE || probes[i].use == USE_INITIAL;
}

/* One round of probe i, `count` large (flops for compute, floats for the
 * initial values), per pull (per unit). */
static int measure_once(const exp_calib_source *src, size_t i, double count,
                        exp_calib_sample *out, char *err, size_t errlen) {
  *out = (exp_calib_sample){0};
  if (kernel(i)) {
    int rc = probes[i].use == USE_COMPUTE
                 ? src->compute(src->ctx, count, &out->wall_s, err, errlen)
                 : src->initial(src->ctx, count, &out->wall_s, err, errlen);
    if (rc != 0) return -1;
    out->wall_s /= count;
    return 0;
  }
  exp_calib_batch b = probes[i].b;
  b.count = (uint32_t)count;
  if (probes[i].use == USE_BUSY) b.spinners = src->cores;
  if (src->pulls(src->ctx, &b, out, err, errlen) != 0) return -1;
  double n = pulls_of(&b, count);
  for (size_t k = 0; k < SAMPLE_DOUBLES; k++) fields(out)[k] /= n;
  return 0;
}

/* Medians and spreads of f's last `window` rounds. */
static void settle(figure *f, unsigned window) {
  unsigned first = f->rounds - window;
  double v[CALIB_MAX_ROUNDS];
  for (size_t k = 0; k < SAMPLE_DOUBLES; k++) {
    for (unsigned r = 0; r < window; r++) v[r] = fields(&f->round[first + r])[k];
    fields(&f->med)[k] = median_of(v, window);
  }
  double lo = INFINITY, hi = -INFINITY, clo = INFINITY, chi = -INFINITY;
  for (unsigned r = first; r < f->rounds; r++) {
    lo = fmin(lo, f->round[r].wall_s);
    hi = fmax(hi, f->round[r].wall_s);
    clo = fmin(clo, f->round[r].cpu_s);
    chi = fmax(chi, f->round[r].cpu_s);
  }
  f->kept = window;
  f->spread = f->med.wall_s > 0 ? 0.5 * (hi - lo) / f->med.wall_s : 0;
  f->cpu_spread = f->med.cpu_s > 0 ? 0.5 * (chi - clo) / f->med.cpu_s : 0;
}

/* The size of probe i's rounds (pulls per thread, or flops), from a
 * warm-up batch. */
static int size_rounds(const exp_calib_source *src, const exp_calib_options *o, size_t i,
                       double *count, char *err, size_t errlen) {
  bool flops = kernel(i);
  double c = flops ? CALIB_COMPUTE_FLOPS : 20;
  exp_calib_sample s;
  if (measure_once(src, i, c, &s, err, errlen) != 0) return -1;
  double per_count = flops ? s.wall_s : s.wall_s * pulls_of(&probes[i].b, 1);
  if (per_count > 0) c = CALIB_BATCH_S * o->scale / per_count;
  *count = flops ? fmax(c, CALIB_COMPUTE_FLOPS)
                 : fmin(fmax(floor(c), CALIB_MIN_COUNT), CALIB_MAX_COUNT);
  return 0;
}

/* Rounds of every probe, one of each in turn, until each probe's last ones
 * agree (see the top): a change of load while calibrating then moves every
 * figure alike, not some figures and not others. */
static int measure_rounds(const exp_calib_source *src, const exp_calib_options *o,
                          figure *figs, char *err, size_t errlen) {
  double count[PROBES];
  bool done[PROBES] = {false};
  for (size_t i = 0; i < PROBES; i++)
    if (size_rounds(src, o, i, &count[i], err, errlen) != 0) return -1;
  unsigned max = o->max_rounds > CALIB_MAX_ROUNDS ? CALIB_MAX_ROUNDS : o->max_rounds;
  if (max < 1) max = 1;
  unsigned window = o->min_rounds < 1 ? 1 : o->min_rounds > max ? max : o->min_rounds;
  for (unsigned r = 0; r < max; r++) {
    for (size_t i = 0; i < PROBES; i++) {
      figure *f = &figs[i];
      if (done[i]) continue;
      if (measure_once(src, i, count[i], &f->round[r], err, errlen) != 0) return -1;
      f->rounds = r + 1;
      if (r + 1 < window) continue;
      settle(f, window);
      done[i] = f->spread <= o->target_spread;
    }
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

/* Least squares of y on (1, x) over n points: y = at0 + slope x. Without
 * spread in x (range under min_range): slope 0, at0 the mean; false. */
static bool fit_line(const double *x, const double *y, size_t n, double min_range,
                     double *at0, double *slope) {
  double mx = 0, my = 0, lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    mx += x[i] / (double)n;
    my += y[i] / (double)n;
    lo = fmin(lo, x[i]);
    hi = fmax(hi, x[i]);
  }
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  bool ok = hi - lo >= min_range && sxx > 0;
  *slope = ok ? sxy / sxx : 0;
  *at0 = my - *slope * mx;
  return ok;
}

/* x, or 0 with a note (notes NULL: none) when the data made it negative. */
static double at_least_zero(double x, const char *what, cJSON *notes) {
  if (x >= 0) return x;
  char line[160];
  snprintf(line, sizeof line, "%s came out negative (%.3g) and was set to 0", what, x);
  if (notes) cJSON_AddItemToArray(notes, cJSON_CreateString(line));
  return 0;
}

static void note(cJSON *notes, const char *text) {
  if (notes) cJSON_AddItemToArray(notes, cJSON_CreateString(text));
}

/* ------------------------------------------------------------ the fit */

/* What the fit takes, from the medians or from one round of every figure. */
typedef struct {
  /* Per pull of the grid: 2k, the bytes of request and reply, the wall
   * time and the CPU of both processes. */
  double k2[GRID], bytes[GRID], rtt[GRID], cpu[GRID];
  /* Per window (1, 4, 16): wake-ups per message over those of window 1;
   * the pulling and receiving threads' CPU per message; the rest of the
   * processes' per message; the issuing calls' per pull. */
  double r[WINDOWS], app[WINDOWS], io[WINDOWS], send[WINDOWS];
  /* Per window: the I/O threads' wake-ups per message (both ends), as
   * counted (io_counted), else 2 r: both ends' I/O threads taken to wake
   * whenever the reading threads do. */
  double q[WINDOWS];
  bool io_counted;
  double rtt_busy; /* the smallest pull's round trip with every core busy */
  double cores;
  double local_per_key, speed, initial_per_float;
  /* Per shared size: what an access found shared costs more (NAN: the
   * threads hardly ever shared a key). */
  double shared_cost[SHARED_SIZES];
} measured;

/* The model's parameters (see the top). */
typedef struct {
  double per_msg, send, wake_threads, io_wake_end, io, per_key, per_byte;
  double wake_wait;
  double latency, bandwidth, local_per_key, speed, initial_per_float;
  double shared_per_key, shared_per_byte;
} fitted;

/* The parameters as the profile and the log name them, with their units. */
static const struct {
  const char *name, *unit;
  size_t offset;
} params[] = {
    {"per_message_s", "s", offsetof(fitted, per_msg)},
    {"send_per_message_s", "s", offsetof(fitted, send)},
    {"wakeup_s", "s", offsetof(fitted, wake_threads)},  /* the handling threads' wake-up */
    {"io_wakeup_s", "s", offsetof(fitted, io_wake_end)}, /* an I/O thread's, at one end */
    {"io_per_message_s", "s", offsetof(fitted, io)},
    {"wakeup_wait_s", "s", offsetof(fitted, wake_wait)},
    {"per_key_s", "s", offsetof(fitted, per_key)},
    {"per_byte_s", "s", offsetof(fitted, per_byte)},
    {"loopback_latency", "s", offsetof(fitted, latency)},
    {"loopback_bandwidth", "B/s", offsetof(fitted, bandwidth)},
    {"local_per_key_s", "s", offsetof(fitted, local_per_key)},
    {"host_speed", "flop/s", offsetof(fitted, speed)},
    {"initial_per_float_s", "s", offsetof(fitted, initial_per_float)},
    {"shared_per_key_s", "s", offsetof(fitted, shared_per_key)},
    {"shared_per_byte_s", "s", offsetof(fitted, shared_per_byte)},
};
#define PARAMS (sizeof params / sizeof params[0])

static double param(const fitted *f, size_t i) {
  return *(const double *)((const char *)f + params[i].offset);
}

static double req_bytes(const exp_calib_batch *b) {
  return (double)ps_msg_encoded_len(b->keys, 0);
}

static double reply_bytes(const exp_calib_batch *b) {
  return (double)ps_msg_encoded_len(b->keys, (size_t)b->keys * b->floats);
}

/* The threads that pull and receive, per pull. */
static double app_cpu(const exp_calib_sample *s) {
  return s->node[0].issue_cpu_s + s->node[0].receiver_cpu_s + s->node[1].issue_cpu_s +
         s->node[1].receiver_cpu_s;
}

static double wakes(const exp_calib_sample *s) {
  return s->node[0].wakeups + s->node[1].wakeups;
}

static double io_wakes(const exp_calib_sample *s) {
  return s->node[0].io_wakeups + s->node[1].io_wakeups;
}

/* Probe i's sample: the medians (round < 0) or its round-th last round. */
static const exp_calib_sample *sample_of(const figure *figs, size_t i, int round) {
  const figure *f = &figs[i];
  return round < 0 ? &f->med : &f->round[f->rounds - f->kept + (unsigned)round];
}

/* A shared access's cost at size z from round r of its three batches
 * (measured one after the other, so under the same load): the extra thread
 * CPU an access took with two threads, over the share of accesses the
 * counting batch found shared (per pull and push of its keys: two accesses
 * a key). NAN below CALIB_MIN_SHARE: the threads did not run at once. */
static double shared_cost_at(const figure *figs, size_t z, unsigned r) {
  double alone = NAN, two = NAN, share = NAN;
  for (size_t i = 0; i < PROBES; i++) {
    const exp_calib_batch *b = &probes[i].b;
    if (!b->push || b->floats != shared_floats[z]) continue;
    const exp_calib_sample *s = &figs[i].round[r];
    double accesses = 2.0 * b->keys;
    if (probes[i].use == USE_RW_ALONE) alone = s->thread_cpu_s / accesses;
    if (probes[i].use == USE_RW_SHARED) two = s->thread_cpu_s / accesses;
    if (probes[i].use == USE_RW_COUNT) share = s->node[0].shared_accesses / accesses;
  }
  return share >= CALIB_MIN_SHARE ? (two - alone) / share : NAN;
}

/* Rounds every shared batch of size z ran. */
static unsigned shared_rounds(const figure *figs, size_t z) {
  unsigned n = CALIB_MAX_ROUNDS;
  for (size_t i = 0; i < PROBES; i++)
    if (probes[i].b.push && probes[i].b.floats == shared_floats[z] && figs[i].rounds < n)
      n = figs[i].rounds;
  return n;
}

/* m's shared costs: round < 0, the median over every round the batches of a
 * size all ran (rounds that shared nothing left out); else the round-th of
 * the last `kept` of those rounds. */
static void view_shared(const figure *figs, int round, unsigned kept, measured *m) {
  for (size_t z = 0; z < SHARED_SIZES; z++) {
    unsigned n = shared_rounds(figs, z);
    if (round >= 0) {
      m->shared_cost[z] = (unsigned)round < n && n >= kept
                              ? shared_cost_at(figs, z, n - kept + (unsigned)round)
                              : NAN;
      continue;
    }
    double v[CALIB_MAX_ROUNDS];
    unsigned ok = 0;
    for (unsigned r = 0; r < n; r++) {
      if (!isnan(v[ok] = shared_cost_at(figs, z, r))) ok++;
    }
    m->shared_cost[z] = ok ? median_of(v, ok) : NAN;
  }
}

static void view(const figure *figs, int round, uint32_t cores, measured *m) {
  size_t w = 0;
  m->cores = cores;
  for (size_t i = 0; i < PROBES; i++) {
    const exp_calib_sample *s = sample_of(figs, i, round);
    const exp_calib_batch *b = &probes[i].b;
    if (i < GRID) {
      m->k2[i] = 2.0 * b->keys;
      m->bytes[i] = req_bytes(b) + reply_bytes(b);
      m->rtt[i] = s->wall_s;
      m->cpu[i] = s->cpu_s;
    }
    if (i == 0 || probes[i].use == USE_WINDOW) { /* two messages a pull */
      m->r[w] = wakes(s) / 2;
      m->q[w] = io_wakes(s) / 2;
      m->app[w] = app_cpu(s) / 2;
      m->io[w] = (s->cpu_s - app_cpu(s)) / 2;
      m->send[w++] = s->node[0].send_cpu_s + s->node[1].send_cpu_s;
    }
    if (probes[i].use == USE_BUSY) m->rtt_busy = s->wall_s;
    /* The pulling thread's CPU: the work a local access is. (The probe
     * reads no clock a local pull: a reading may be a system call, on a
     * virtual machine 1.4 us, three times the pull itself.) */
    if (probes[i].use == USE_LOCAL) m->local_per_key = s->thread_cpu_s / b->keys;
    if (probes[i].use == USE_COMPUTE) m->speed = s->wall_s > 0 ? 1 / s->wall_s : 0;
    if (probes[i].use == USE_INITIAL) m->initial_per_float = s->wall_s;
  }
  view_shared(figs, round, figs[0].kept, m);
  double r1 = m->r[0];
  for (size_t i = 0; i < WINDOWS; i++) m->r[i] = r1 > 0 ? m->r[i] / r1 : 0;
  m->io_counted = m->q[0] > 0;
  if (!m->io_counted)
    for (size_t i = 0; i < WINDOWS; i++) m->q[i] = 2 * m->r[i];
}
/* shared_per_key_s and shared_per_byte_s from m's shared batches (see the
 * top): per size, the extra CPU an access took with two threads over the
 * share of accesses found shared; a line through the two sizes' bytes. */
static void fit_shared(const measured *m, cJSON *notes, fitted *f) {
  const double *cost = m->shared_cost;
  for (size_t z = 0; z < SHARED_SIZES; z++) {
    if (isnan(cost[z])) {
      note(notes, "two threads on the same keys hardly ever found a key last touched by the "
                  "other (one core?): shared_per_key_s and shared_per_byte_s are 0");
      f->shared_per_key = f->shared_per_byte = 0;
      return;
    }
  }
  double bytes0 = 4 * shared_floats[0], bytes1 = 4 * shared_floats[1];
  f->shared_per_byte = at_least_zero((cost[1] - cost[0]) / (bytes1 - bytes0),
                                     "shared_per_byte_s", notes);
  f->shared_per_key =
      at_least_zero(cost[0] - f->shared_per_byte * bytes0, "shared_per_key_s", notes);
}

/* Fits the model to m (see the top); coefficients set to 0, wake-ups
 * that did not change, a bandwidth that limits nothing are said in notes
 * (NULL: not said). False with a message. */
static bool fit_model(const measured *m, cJSON *notes, fitted *f, char *err, size_t errlen) {
  double bc[3], br[3];
  if (!fit3(m->k2, m->bytes, m->cpu, GRID, bc) || !fit3(m->k2, m->bytes, m->rtt, GRID, br)) {
    snprintf(err, errlen, "calibrate: the remote figures do not determine the cost model");
    return false;
  }
  f->per_key = at_least_zero(bc[1], "per_key_s", notes);
  f->per_byte = at_least_zero(bc[2], "per_byte_s", notes);
  double s0, s1, a0, a1, i0, i1;
  bool woke = fit_line(m->r, m->send, WINDOWS, CALIB_MIN_WAKE_RANGE, &s0, &s1);
  fit_line(m->r, m->app, WINDOWS, CALIB_MIN_WAKE_RANGE, &a0, &a1);
  fit_line(m->q, m->io, WINDOWS, CALIB_MIN_WAKE_RANGE, &i0, &i1);
  if (!m->io_counted)
    note(notes, "ZeroMQ's I/O threads' wake-ups were not counted: taken to wake at both ends "
                "whenever the reading threads do");
  if (!woke)
    note(notes, "the windows did not change the wake-ups per message (or none were counted): "
                "wakeup_s is 0 and the other figures are the windows' means");
  f->send = at_least_zero(s0, "send_per_message_s", notes);
  double key_byte = (m->k2[0] * f->per_key + m->bytes[0] * f->per_byte) / 2; /* a message's */
  f->per_msg = at_least_zero(a0 - f->send - key_byte, "per_message_s", notes);
  f->wake_threads = at_least_zero(a1, "wakeup_threads_s", notes);
  f->io = at_least_zero(i0 / 2, "io_per_message_s", notes);
  f->io_wake_end = at_least_zero(i1, "io_wakeup_s", notes);
  /* The I/O threads' wake-up is their own work in the simulator, beside the
   * message (io_wakeup_s): its time on a lone round trip is in the
   * latency, as the handling threads' wake-up is not. */
  f->latency = at_least_zero((br[0] - 2 * f->wake_threads - 2 * f->per_msg) / 2,
                             "machines.loopback_latency", notes);
  double inv_bw = br[2] - f->per_byte;
  f->bandwidth = 1 / inv_bw;
  if (!(inv_bw > 1e-12)) { /* more than 1 TB/s: limits nothing */
    note(notes, "the round trip grows no faster with bytes than the CPU cost per byte: the "
                "loopback bandwidth limits nothing beyond it and is written as 1 TBps");
    f->bandwidth = 1e12;
  }
  /* With every core busy, the two handlings on the round trip's path
   * share a core with the spinners (the simulator's fair sharing stretches
   * them by one core's worth: crit / cores) and each wake-up waits for a
   * core besides: what the round trip grew by beyond the sharing, per
   * wake-up. */
  double crit =
      2 * (f->wake_threads + f->per_msg) + m->k2[0] * f->per_key + m->bytes[0] * f->per_byte;
  f->wake_wait = at_least_zero((m->rtt_busy - m->rtt[0] - crit / fmax(m->cores, 1)) / 2,
                               "wakeup_wait_s", notes);
  f->local_per_key = at_least_zero(m->local_per_key, "local_per_key_s", notes);
  f->speed = m->speed;
  f->initial_per_float = m->initial_per_float;
  fit_shared(m, notes, f);
  return true;
}

/* Each parameter's spread: the fit made round by round (see the top). */
static void param_spreads(const figure *figs, const fitted *best, uint32_t cores,
                          double *spread) {
  double lo[PARAMS], hi[PARAMS];
  for (size_t i = 0; i < PARAMS; i++) lo[i] = INFINITY, hi[i] = -INFINITY;
  char err[8];
  for (unsigned r = 0; r < figs[0].kept; r++) {
    measured m = {0};
    fitted f;
    view(figs, (int)r, cores, &m);
    if (!fit_model(&m, NULL, &f, err, sizeof err)) continue;
    for (size_t i = 0; i < PARAMS; i++) {
      lo[i] = fmin(lo[i], param(&f, i));
      hi[i] = fmax(hi[i], param(&f, i));
    }
  }
  for (size_t i = 0; i < PARAMS; i++) {
    double v = fabs(param(best, i));
    spread[i] = v > 0 && hi[i] >= lo[i] ? 0.5 * (hi[i] - lo[i]) / v : 0;
  }
}

/* ---------------------------------------------------------- the check */

/* What the model says a batch costs per pull, given r, the share of its
 * messages that found their handler asleep, and q, its I/O threads'
 * wake-ups per message (see the top). */
typedef struct {
  double cpu_s, wall_s;
} prediction;

static prediction predict(const fitted *f, const exp_calib_batch *b, double r, double q,
                          uint32_t cores) {
  double k = b->keys, bq = req_bytes(b), bp = reply_bytes(b), wake = r * f->wake_threads;
  double keys = 2 * k * f->per_key + (bq + bp) * f->per_byte;
  double cpu = 2 * (f->per_msg + f->send + 2 * f->io + r * f->wake_threads + q * f->io_wake_end) +
               keys;
  double rtt = 2 * f->latency + (bq + bp) / f->bandwidth + 2 * wake + 2 * f->per_msg + keys;
  double req = f->per_msg + wake + k * f->per_key + bq * f->per_byte + f->send;
  double rep = f->per_msg + wake + k * f->per_key + bp * f->per_byte;
  double threads = (b->clients ? b->clients : 1) * (b->both_ways ? 2 : 1);
  double outstanding = threads * (b->window ? b->window : 1);
  double handler = b->both_ways ? (req + rep) / 2 : fmax(req, rep);
  double wall = fmax(fmax(rtt / outstanding, handler),
                     fmax(f->send / threads, cpu / (cores ? cores : 1)));
  return (prediction){cpu, wall};
}

/* Probe i in words: "round trip, 1 key of 1 float", "4 keys of 64 floats,
 * both ways". */
static void describe(size_t i, char *buf, size_t n) {
  const exp_calib_batch *b = &probes[i].b;
  if (kernel(i)) {
    snprintf(buf, n, probes[i].use == USE_COMPUTE ? "compute (dot products)"
                                                  : "initial values of pulled floats");
    return;
  }
  const char *what = probes[i].use == USE_GRID ? "round trip, " : b->local ? "local, " : "";
  int len = snprintf(buf, n, "%s%u key%s of %u float%s", what, b->keys,
                     b->keys > 1 ? "s" : "", b->floats, b->floats > 1 ? "s" : "");
  if (len < 0 || (size_t)len >= n) return;
  if (b->push)
    snprintf(buf + len, n - (size_t)len, ", pull+push%s%s", b->clients > 1 ? ", 2 threads" : "",
             b->count_shared ? ", counted" : "");
  else if (b->both_ways) snprintf(buf + len, n - (size_t)len, ", both ways");
  else if (b->clients > 1) snprintf(buf + len, n - (size_t)len, ", %u pullers", b->clients);
  else if (b->window > 1) snprintf(buf + len, n - (size_t)len, ", %u outstanding", b->window);
  else if (probes[i].use == USE_BUSY) snprintf(buf + len, n - (size_t)len, ", every core busy");
}

/* The share of probe i's messages that found their handler asleep: its
 * wake-ups per message over the smallest pull's (one outstanding). */
static double wake_share(const figure *figs, size_t i) {
  double one = wakes(&figs[0].med);
  return one > 0 ? wakes(&figs[i].med) / one : 0;
}

static cJSON *node_json(const exp_calib_node *n) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "process_cpu_s", n->process_cpu_s);
  cJSON_AddNumberToObject(o, "receiver_cpu_s", n->receiver_cpu_s);
  cJSON_AddNumberToObject(o, "issue_cpu_s", n->issue_cpu_s);
  cJSON_AddNumberToObject(o, "send_cpu_s", n->send_cpu_s);
  cJSON_AddNumberToObject(o, "wakeups", n->wakeups);
  cJSON_AddNumberToObject(o, "io_wakeups", n->io_wakeups);
  if (n->shared_accesses > 0) cJSON_AddNumberToObject(o, "shared_accesses", n->shared_accesses);
  return o;
}

/* The batch's shape as fields of o. */
static void add_batch(cJSON *o, size_t i) {
  const exp_calib_batch *b = &probes[i].b;
  cJSON_AddStringToObject(o, "name", probes[i].name);
  if (kernel(i)) return;
  cJSON_AddNumberToObject(o, "keys", b->keys);
  cJSON_AddNumberToObject(o, "floats", b->floats);
  if (probes[i].use == USE_LOCAL) return;
  if (b->push) {
    cJSON_AddNumberToObject(o, "clients", b->clients ? b->clients : 1);
    cJSON_AddBoolToObject(o, "push", true);
    if (b->count_shared) cJSON_AddBoolToObject(o, "count_shared", true);
    return;
  }
  cJSON_AddNumberToObject(o, "window", b->window ? b->window : 1);
  cJSON_AddNumberToObject(o, "clients", b->clients ? b->clients : 1);
  cJSON_AddBoolToObject(o, "both_ways", b->both_ways);
  if (probes[i].use == USE_BUSY) cJSON_AddBoolToObject(o, "cores_busy", true);
}

/* Figure i, per pull (per flop for compute, per float for initial values). */
static void add_figure(cJSON *list, size_t i, const figure *f) {
  cJSON *o = cJSON_CreateObject();
  add_batch(o, i);
  cJSON_AddNumberToObject(o, "wall_s", f->med.wall_s);
  if (!kernel(i)) {
    cJSON_AddNumberToObject(o, "cpu_s", f->med.cpu_s);
    cJSON_AddNumberToObject(o, "thread_cpu_s", f->med.thread_cpu_s);
    cJSON_AddNumberToObject(o, "cpu_spread", f->cpu_spread);
  }
  if (!kernel(i) && probes[i].use != USE_LOCAL) {
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (int n = 0; n < 2; n++) cJSON_AddItemToArray(nodes, node_json(&f->med.node[n]));
  }
  cJSON_AddNumberToObject(o, "spread", f->spread);
  cJSON_AddNumberToObject(o, "rounds", f->rounds);
  cJSON_AddItemToArray(list, o);
}

static void log_figure(FILE *log, size_t i, const figure *figs, const exp_calib_options *o) {
  if (!log) return;
  const figure *f = &figs[i];
  char what[64], v[32], c[32] = "", r[32] = "";
  describe(i, what, sizeof what);
  if (probes[i].use == USE_COMPUTE) {
    exp_format_quantity(f->med.wall_s > 0 ? 1 / f->med.wall_s : 0, "flop/s", v, sizeof v);
  } else if (probes[i].use == USE_INITIAL) {
    exp_format_quantity(f->med.wall_s, "s", v, sizeof v);
    snprintf(r, sizeof r, "a float");
  } else if (probes[i].use == USE_LOCAL) {
    exp_format_quantity(f->med.wall_s / probes[i].b.keys, "s", v, sizeof v);
    snprintf(r, sizeof r, "a key");
  } else if (probes[i].b.push) { /* thread CPU per access; the share found shared */
    double accesses = 2.0 * probes[i].b.keys;
    exp_format_quantity(f->med.thread_cpu_s / accesses, "s", v, sizeof v);
    snprintf(r, sizeof r, "an access");
    if (probes[i].b.count_shared)
      snprintf(c, sizeof c, "shared %.2f", f->med.node[0].shared_accesses / accesses);
  } else {
    exp_format_quantity(f->med.wall_s, "s", v, sizeof v);
    char cpu[24];
    exp_format_quantity(f->med.cpu_s, "s", cpu, sizeof cpu);
    snprintf(c, sizeof c, "CPU %s", cpu);
    snprintf(r, sizeof r, "woke %.2f", wake_share(figs, i));
  }
  fprintf(log, "  %-37s %10s %-14s %-10s spread %5.1f%% %2u rounds%s\n", what, v, c, r,
          100 * f->spread, f->rounds, f->spread > o->target_spread ? " (above target)" : "");
}

/* The check (see the top): the batches the fit did not use, measured
 * against predicted, into the log and a list. */
static cJSON *check(const figure *figs, const fitted *fit, uint32_t cores, FILE *log) {
  cJSON *list = cJSON_CreateArray();
  if (log) fprintf(log, "check (not fitted): per pull, measured and what the model predicts\n");
  for (size_t i = 0; i < PROBES; i++) {
    if (probes[i].use != USE_CHECK) continue;
    const exp_calib_sample *s = &figs[i].med;
    double r = wake_share(figs, i);
    double q = io_wakes(&figs[0].med) > 0 ? io_wakes(s) / 2 : 2 * r;
    prediction p = predict(fit, &probes[i].b, r, q, cores);
    cJSON *o = cJSON_CreateObject();
    add_batch(o, i);
    cJSON_AddNumberToObject(o, "wake_share", r);
    cJSON_AddNumberToObject(o, "cpu_s", s->cpu_s);
    cJSON_AddNumberToObject(o, "predicted_cpu_s", p.cpu_s);
    cJSON_AddNumberToObject(o, "wall_s", s->wall_s);
    cJSON_AddNumberToObject(o, "predicted_wall_s", p.wall_s);
    cJSON_AddItemToArray(list, o);
    if (!log) continue;
    char what[64], c[24], pc[24], w[24], pw[24];
    describe(i, what, sizeof what);
    exp_format_quantity(s->cpu_s, "s", c, sizeof c);
    exp_format_quantity(p.cpu_s, "s", pc, sizeof pc);
    exp_format_quantity(s->wall_s, "s", w, sizeof w);
    exp_format_quantity(p.wall_s, "s", pw, sizeof pw);
    fprintf(log, "  %-37s CPU %s, model %s (%+.0f%%); time %s, model's bound %s (%+.0f%%)\n",
            what, c, pc, 100 * (p.cpu_s / s->cpu_s - 1), w, pw, 100 * (p.wall_s / s->wall_s - 1));
  }
  return list;
}

static cJSON *parameters_json(const fitted *f, const double *spread) {
  cJSON *o = cJSON_CreateObject();
  for (size_t i = 0; i < PARAMS; i++) {
    cJSON *p = cJSON_AddObjectToObject(o, params[i].name);
    cJSON_AddNumberToObject(p, "value", param(f, i));
    cJSON_AddNumberToObject(p, "spread", spread[i]);
  }
  return o;
}

static void log_fitted(FILE *log, const fitted *f, const double *spread, uint32_t cores) {
  fprintf(log, "fitted (spread: the same fit round by round):\n");
  for (size_t i = 0; i < PARAMS; i++) {
    char v[32];
    exp_format_quantity(param(f, i), params[i].unit, v, sizeof v);
    fprintf(log, "  %-22s %12s  spread %5.1f%%\n", params[i].name, v, 100 * spread[i]);
  }
  fprintf(log, "  cores %u\n", cores);
}

static void about(cJSON *profile, const exp_calib_source *src, const exp_calib_options *o,
                  cJSON *figures, cJSON *parameters, cJSON *checked, cJSON *notes) {
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
  if (src->pinned_of) cJSON_AddNumberToObject(a, "pinned_of", src->pinned_of);
  if (!isnan(src->load_before)) cJSON_AddNumberToObject(a, "load_before", src->load_before);
  cJSON_AddNumberToObject(a, "target_spread", o->target_spread);
  cJSON_AddItemToObject(a, "figures", figures);
  cJSON_AddItemToObject(a, "parameters", parameters);
  cJSON_AddItemToObject(a, "check", checked);
  cJSON_AddItemToObject(a, "notes", notes);
}

/* host_speed, cost and machines. */
static void profile_fill(cJSON *profile, const fitted *f, const exp_calib_source *src,
                         double slice, const cJSON *preemption) {
  uint32_t cores = src->cores;
  cJSON_AddNumberToObject(profile, "host_speed", f->speed);
  cJSON *cost = cJSON_AddObjectToObject(profile, "cost");
  cJSON_AddNumberToObject(cost, "per_message_s", f->per_msg);
  cJSON_AddNumberToObject(cost, "per_key_s", f->per_key);
  cJSON_AddNumberToObject(cost, "per_byte_s", f->per_byte);
  cJSON_AddNumberToObject(cost, "local_per_key_s", f->local_per_key);
  cJSON_AddNumberToObject(cost, "send_per_message_s", f->send);
  cJSON_AddNumberToObject(cost, "wakeup_s", f->wake_threads);
  cJSON_AddNumberToObject(cost, "io_per_message_s", f->io);
  cJSON_AddNumberToObject(cost, "io_wakeup_s", f->io_wake_end);
  cJSON_AddNumberToObject(cost, "wakeup_wait_s", f->wake_wait);
  cJSON_AddNumberToObject(cost, "initial_per_float_s", f->initial_per_float);
  cJSON_AddNumberToObject(cost, "shared_per_key_s", f->shared_per_key);
  cJSON_AddNumberToObject(cost, "shared_per_byte_s", f->shared_per_byte);
  cJSON *machines = cJSON_AddObjectToObject(profile, "machines");
  cJSON_AddNumberToObject(machines, "count", src->pinned_of ? src->pinned_of : 1);
  cJSON_AddNumberToObject(machines, "cores", cores);
  if (src->pinned_of) { /* a core per node: the loopback between two is the network */
    cJSON_AddTrueToObject(machines, "pin");
    /* Both I/O passes on the message's path: with a core per node they
     * validate best (docs/fidelity.md,
     * "Both I/O passes on the message's path"). */
    cJSON_AddStringToObject(machines, "io_read", "on_path");
    cJSON_AddStringToObject(machines, "io_send", "on_path");
    /* The network's latency is the wire's part of the loopback's: with both
     * passes on the path, what a lone message takes beyond its two I/O
     * passes up to their handoffs (sim_io_wire_latency), which a message
     * between two machines makes too. A link at each end. */
    cJSON *network = cJSON_AddObjectToObject(profile, "network");
    cJSON_AddNumberToObject(network, "latency",
                            sim_io_wire_latency(f->latency, f->io_wake_end + f->io) / 2);
    cJSON_AddNumberToObject(network, "bandwidth", f->bandwidth);
  }
  cJSON_AddNumberToObject(machines, "loopback_latency", f->latency);
  cJSON_AddNumberToObject(machines, "loopback_bandwidth", f->bandwidth);
  if (slice > 0) cJSON_AddNumberToObject(machines, "slice", slice);
  if (preemption) { /* measured, and off: see docs/fidelity.md for why */
    cJSON_AddFalseToObject(machines, "preempt");
    cJSON_AddNumberToObject(machines, "preempt_wait",
                            cJSON_GetObjectItemCaseSensitive(preemption, "wait_s")->valuedouble);
    cJSON_AddNumberToObject(
        machines, "preempt_per_thread",
        cJSON_GetObjectItemCaseSensitive(preemption, "per_thread_s")->valuedouble);
  }
}

/* The scheduler's slice (0: the source does not measure it), as a figure of
 * the list and a line of the log. */
static int measure_slice(const exp_calib_source *src, const exp_calib_options *o, cJSON *list,
                         double *slice, char *err, size_t errlen) {
  *slice = 0;
  if (!src->slice) return 0;
  double v[CALIB_SLICE_ROUNDS];
  uint32_t threads = 2 * (src->cores ? src->cores : 1);
  for (int r = 0; r < CALIB_SLICE_ROUNDS; r++)
    if (src->slice(src->ctx, threads, fmax(CALIB_SLICE_S * o->scale, CALIB_SLICE_MIN_S), &v[r],
                   err, errlen) != 0)
      return -1;
  *slice = median_of(v, CALIB_SLICE_ROUNDS);
  double lo = v[0], hi = v[0];
  for (int r = 1; r < CALIB_SLICE_ROUNDS; r++) {
    lo = fmin(lo, v[r]);
    hi = fmax(hi, v[r]);
  }
  double spread = *slice > 0 ? (hi - lo) / 2 / *slice : 0;
  cJSON *fig = cJSON_CreateObject();
  cJSON_AddStringToObject(fig, "name", "slice");
  cJSON_AddNumberToObject(fig, "threads", threads);
  cJSON_AddNumberToObject(fig, "wall_s", *slice);
  cJSON_AddNumberToObject(fig, "spread", spread);
  cJSON_AddNumberToObject(fig, "rounds", CALIB_SLICE_ROUNDS);
  cJSON_AddItemToArray(list, fig);
  if (o->log)
    fprintf(o->log, "  slice, %u threads spinning on %u cores  %.3g ms  spread %5.1f%%\n",
            threads, src->cores, 1e3 * *slice, 100 * spread);
  return 0;
}

/* How long a woken thread waits for a core that spinning threads hold,
 * beside 1 to CALIB_PREEMPT_SPINNERS of them: a figure each (the median of
 * its rounds), a line of the log each, and wait = wait_s + per_thread_s x
 * (spinners - 1), wait_s the wait beside one and per_thread_s the
 * least-squares slope through it, into *out (left NULL
 * where the source does not measure it or the machine has one core): the
 * figures of the run queue's wake-up preemption (machines.preempt_wait,
 * machines.preempt_per_thread), which the profile gives switched off
 * (machines.preempt false: on fresh sets it lost rankings it had right,
 * with shared cores and with a core per node). With a core per node the
 * probe measures what a node's core does: the woken thread and the
 * spinners on one core, the thread that wakes it on another. */
static int measure_preempt(const exp_calib_source *src, const exp_calib_options *o,
                           cJSON *list, cJSON **out, char *err, size_t errlen) {
  *out = NULL;
  if (!src->preempt || (src->pinned_of ? src->pinned_of : src->cores) < 2) return 0;
  enum { N = CALIB_PREEMPT_SPINNERS };
  double wait[N], first_preempted = 0, worst = 0;
  uint32_t wakes = (uint32_t)fmax(50, CALIB_PREEMPT_WAKES * o->scale);
  for (uint32_t n = 1; n <= N; n++) {
    double v[CALIB_PREEMPT_ROUNDS], p[CALIB_PREEMPT_ROUNDS];
    for (int r = 0; r < CALIB_PREEMPT_ROUNDS; r++)
      if (src->preempt(src->ctx, n, wakes, &v[r], &p[r], err, errlen) != 0) return -1;
    wait[n - 1] = median_of(v, CALIB_PREEMPT_ROUNDS);
    double preempted = median_of(p, CALIB_PREEMPT_ROUNDS), lo = v[0], hi = v[0];
    for (int r = 1; r < CALIB_PREEMPT_ROUNDS; r++) {
      lo = fmin(lo, v[r]);
      hi = fmax(hi, v[r]);
    }
    double spread = wait[n - 1] > 0 ? (hi - lo) / 2 / wait[n - 1] : 0;
    worst = fmax(worst, spread);
    if (n == 1) first_preempted = preempted;
    cJSON *fig = cJSON_CreateObject();
    cJSON_AddStringToObject(fig, "name", "preempt");
    cJSON_AddNumberToObject(fig, "spinners", n);
    cJSON_AddNumberToObject(fig, "wall_s", wait[n - 1]);
    cJSON_AddNumberToObject(fig, "preempted_per_wakeup", preempted);
    cJSON_AddNumberToObject(fig, "spread", spread);
    cJSON_AddNumberToObject(fig, "rounds", CALIB_PREEMPT_ROUNDS);
    cJSON_AddItemToArray(list, fig);
    if (o->log)
      fprintf(o->log, "  a woken thread's wait beside %u spinning  %.3g us  spinners switched "
              "out %.2f a wake-up  spread %5.1f%%\n", n, 1e6 * wait[n - 1], preempted,
              100 * spread);
  }
  /* Beside one spinner as measured; each spinner past the first, the
   * least-squares slope through that point (0 if the waits fall). */
  double sxy = 0, sxx = 0;
  for (int i = 1; i < N; i++) {
    sxy += i * (wait[i] - wait[0]);
    sxx += i * i;
  }
  double per = fmax(0, sxy / sxx);
  *out = cJSON_CreateObject();
  cJSON_AddNumberToObject(*out, "wait_s", wait[0]);
  cJSON_AddNumberToObject(*out, "per_thread_s", per);
  cJSON_AddNumberToObject(*out, "preempted_per_wakeup", first_preempted);
  cJSON_AddNumberToObject(*out, "spread", worst);
  cJSON_AddStringToObject(*out, "note", "how long a woken thread waits for a core that "
                          "computing threads hold: wait_s, plus per_thread_s for each "
                          "spinning thread past the first; the figures of the run queue's "
                          "wake-up preemption (machines.preempt_wait, preempt_per_thread), "
                          "off by default (machines.preempt false): "
                          "docs/fidelity.md, \"Exact preemption, on four fresh sets\"");
  if (!(sxy > 0))
    cJSON_AddStringToObject(*out, "note_per_thread", "the waits did not grow with the "
                            "spinners: per_thread_s set to 0");
  return 0;
}

/* A machine that was not idle just before (src->load_before): every figure
 * may be off; said in the notes and the log. */
static void note_load(const exp_calib_source *src, cJSON *notes, FILE *log) {
  if (isnan(src->load_before) || src->load_before <= EXP_CALIB_BUSY) return;
  char line[200];
  snprintf(line, sizeof line,
           "the machine was not idle: a load average of %.2f over the minute before; other "
           "work moves every figure (calibrate an idle machine)",
           src->load_before);
  note(notes, line);
  if (log) fprintf(log, "warning: %s\n", line);
}

/* ---------------------------------------------------------------- door */

static int measure_all(const exp_calib_source *src, const exp_calib_options *o, figure *figs,
                       cJSON *list, char *err, size_t errlen) {
  if (o->log) fprintf(o->log, "pslab calibrate: pulls between two real nodes on loopback, "
                              "per pull\n");
  if (measure_rounds(src, o, figs, err, errlen) != 0) return -1;
  for (size_t i = 0; i < PROBES; i++) {
    add_figure(list, i, &figs[i]);
    log_figure(o->log, i, figs, o);
  }
  return 0;
}

cJSON *exp_calibrate(const exp_calib_source *src, const exp_calib_options *o, char *err,
                     size_t errlen) {
  figure *figs = calloc(PROBES, sizeof *figs);
  cJSON *figures = cJSON_CreateArray(), *notes = cJSON_CreateArray(), *profile = NULL;
  measured m = {0};
  fitted fit;
  if (!figs) snprintf(err, errlen, "out of memory");
  double slice;
  cJSON *preemption = NULL;
  if (!figs || measure_all(src, o, figs, figures, err, errlen) != 0 ||
      measure_slice(src, o, figures, &slice, err, errlen) != 0 ||
      measure_preempt(src, o, figures, &preemption, err, errlen) != 0)
    goto done;
  view(figs, -1, src->cores, &m);
  if (!fit_model(&m, notes, &fit, err, errlen)) goto done;
  note_load(src, notes, o->log);
  if (!(fit.speed > 0)) {
    snprintf(err, errlen, "calibrate: the compute kernel took no time");
    goto done;
  }
  double spread[PARAMS];
  param_spreads(figs, &fit, src->cores, spread);
  if (o->log) log_fitted(o->log, &fit, spread, src->cores);
  cJSON *checked = check(figs, &fit, src->cores, o->log);
  profile = cJSON_CreateObject();
  about(profile, src, o, figures, parameters_json(&fit, spread), checked, notes);
  profile_fill(profile, &fit, src, slice, preemption);
  if (preemption)
    cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(profile, EXP_PROFILE_ABOUT),
                          "preemption", preemption);
  figures = notes = preemption = NULL;
done:
  cJSON_Delete(preemption);
  cJSON_Delete(figures);
  cJSON_Delete(notes);
  free(figs);
  return profile;
}

/* ------------------------------------------------------ the real source */

static int real_pulls(void *ctx, const exp_calib_batch *b, exp_calib_sample *out, char *err,
                      size_t errlen) {
  real_probe_batch rb = {.keys = b->keys, .floats = b->floats, .count = b->count,
                         .window = b->window, .clients = b->clients, .local = b->local,
                         .both_ways = b->both_ways, .spinners = b->spinners,
                         .push = b->push, .count_shared = b->count_shared};
  real_probe_sample s;
  if (real_probe_run(ctx, &rb, &s, err, errlen) != 0) return -1;
  *out = (exp_calib_sample){.wall_s = s.wall_s, .cpu_s = s.cpu_s,
                            .thread_cpu_s = s.thread_cpu_s};
  for (int n = 0; n < 2; n++)
    out->node[n] = (exp_calib_node){s.node[n].process_cpu_s, s.node[n].receiver_cpu_s,
                                    s.node[n].issue_cpu_s, s.node[n].send_cpu_s,
                                    s.node[n].wakeups, s.node[n].io_wakeups,
                                    s.node[n].shared_accesses};
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

static int probe_initial(void *ctx, double floats, double *wall_s, char *err,
                         size_t errlen) {
  (void)ctx;
  return real_probe_initial(floats, wall_s, err, errlen);
}

static int probe_slice(void *ctx, uint32_t threads, double seconds, double *slice_s, char *err,
                       size_t errlen) {
  (void)ctx;
  return real_probe_slice(threads, seconds, slice_s, err, errlen);
}

static int probe_preempt(void *ctx, uint32_t spinners, uint32_t wakes, double *wait_s,
                         double *preempted, char *err, size_t errlen) {
  return real_probe_preempt_beside(ctx, spinners, wakes, wait_s, preempted, err, errlen);
}

static uint32_t cores_here(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return (uint32_t)CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint32_t)n : 1;
}

int exp_calib_real_source(exp_calib_source *src, bool pin, char *err, size_t errlen) {
  double load = NAN;
  if (getloadavg(&load, 1) != 1) load = NAN; /* before the probe's nodes start */
  uint32_t all = cores_here();
  real_probe *p = real_probe_start(NULL, pin, err, errlen);
  if (!p) return -1;
  *src = (exp_calib_source){
      .ctx = p, .pulls = real_pulls, .compute = dot_compute, .initial = probe_initial,
      .slice = probe_slice, .preempt = probe_preempt, .cores = cores_here(),
      .pinned_of = pin ? all : 0, .load_before = load};
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
  if (exp_calib_real_source(&src, o->pin, err, sizeof err) != 0) {
    fprintf(log, "pslab calibrate: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  cJSON *profile = exp_calibrate(&src, o, err, sizeof err);
  bool ended = exp_calib_real_source_end(&src) == 0;
  int rc = profile ? exp_write_json_atomic(path, profile, err, sizeof err) : -1;
  cJSON_Delete(profile);
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
