/*
 * The wall time of a sweep, estimated before it starts (`pslab check`, the
 * start of `pslab run`, `pslab validate`).
 *
 * How: every distinct run config (the runs of a sweep point differ only by
 * their seed) is a run whose cost is unknown until it runs, so each is run
 * for a short while, as the runner runs it (a forked child, exp_run_probe),
 * and its progress reports are timed: one when it is set up (fraction 0),
 * then every 2% of its steps on the simulator, each with the wall seconds
 * since the fork and the CPU seconds the child has used. A run's estimate
 * is its setup (the wall time to the report at 0) plus its steps in CPU
 * seconds (to the report before last, then at the rate between the last
 * two, taken to fraction 1: the first steps can cost more) times the wall
 * seconds per CPU second that the whole calibration measured: the load of
 * the machine as it is, one figure for every point, rather than each
 * point's own second or so of it; scaled by the load of the last minute
 * over the load the probes met (exp_estimate_load_factor), since the runs
 * take minutes where the calibration took seconds. A run with stages is
 * probed stage by stage, each stage alone (exp_estimate_stages: its steps
 * at its own rate, the stage scheduler's simulations added). A probe stops after
 * EXP_ESTIMATE_REPORTS reports, or two once its share is spent (it may run
 * EXP_ESTIMATE_STRETCH times its share to see the second). A run that ends within its share of the
 * budget counts its own wall time; one that gave no report after its setup
 * counts the time it was given, as a lower bound ("more than"). The whole
 * budget is shared among at least budget / EXP_ESTIMATE_MIN_S points spread
 * over the sweep, what one leaves going to the next, and more while time is
 * left; a point not calibrated counts the mean of those that were per unit
 * of its work (exp_run_work: a sweep over cluster.nodes scales), or their
 * mean where the work is unknown. The sweep's estimate: the sum over points
 * of the estimate times the point's runs.
 *
 * A real run's estimate is the simulator's prediction of its time (the
 * calibration runs its simulated twin: the time so far at the last report
 * over the fraction done) plus the setup the calibration measured.
 */
#include "experiments/backends/backends.h"
#include "experiments/runner/runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXP_ESTIMATE_MIN_S 1.0 /* the least budget a calibrated point gets */
#define EXP_ESTIMATE_REPORTS 3 /* reports after the first step that are enough */
/* A probe may run this many times its share to see a second report: the
 * first can hold a cost paid once (replicas made, caches filled) that a rate
 * from it alone would count at every step. */
#define EXP_ESTIMATE_STRETCH 2.0
#define EXP_ESTIMATE_LOAD_MAX 4.0 /* the most the load may stretch the budget */
#define EXP_ESTIMATE_POINTS 1024

/* The reports that count: mark, the one at 0 (set up, no step taken);
 * first and last, the first and the last strictly between 0 and 1 (last
 * NULL when there is one), prev the one before last (first when there are
 * two); final, the last with a fraction above 0 (1 when the run finished). */
typedef struct {
  const exp_calib_point *mark, *first, *prev, *last, *final;
} reports;

static reports reports_of(const exp_calibration *c) {
  reports r = {0};
  for (size_t i = 0; i < c->n; i++) {
    const exp_calib_point *p = &c->points[i];
    if (p->fraction == 0 && !r.mark) r.mark = p;
    if (p->fraction > 0) r.final = p;
    if (!(p->fraction > 0 && p->fraction < 1)) continue;
    if (!r.first) r.first = p;
    if (p->fraction <= (r.last ? r.last : r.first)->fraction) continue;
    r.prev = r.last ? r.last : r.first;
    r.last = p;
  }
  return r;
}

/* The wall seconds (cpu: the CPU seconds) of a point's reading. */
static double reading(const exp_calib_point *p, bool cpu) { return cpu ? p->cpu_s : p->wall_s; }

/* The whole run's steps in wall or CPU seconds: what the reports up to the
 * one before last took from the mark (from the fork without one), and the
 * rest of the steps at the rate between the last two (the first steps can
 * cost more: warming up, replicas made, caches filled, paid once), or at
 * the first report's own rate when it is the only one. */
static double steps_of(const reports *r, bool cpu) {
  double base = r->mark ? reading(r->mark, cpu) : 0;
  if (!r->last) return (reading(r->first, cpu) - base) / r->first->fraction;
  double rate = (reading(r->last, cpu) - reading(r->prev, cpu)) /
                (r->last->fraction - r->prev->fraction);
  return reading(r->prev, cpu) - base + rate * (1 - r->prev->fraction);
}

static bool has_cpu(const reports *r) {
  return r->first && !isnan(r->first->cpu_s) && (!r->mark || !isnan(r->mark->cpu_s)) &&
         (!r->last || (!isnan(r->last->cpu_s) && !isnan(r->prev->cpu_s)));
}

void exp_calibration_span(const exp_calibration *c, double *wall_s, double *cpu_s) {
  reports r = reports_of(c);
  *wall_s = *cpu_s = 0;
  if (!r.mark || !r.final || isnan(r.mark->cpu_s) || isnan(r.final->cpu_s)) return;
  *wall_s = r.final->wall_s - r.mark->wall_s;
  *cpu_s = r.final->cpu_s - r.mark->cpu_s;
}

/* Setup: until the mark; without one, where the line through the first and
 * last reports meets fraction 0 (none with one report). */
static double setup_of(const reports *r) {
  if (r->mark) return r->mark->wall_s;
  if (!r->last) return 0;
  double rate = (r->last->wall_s - r->first->wall_s) / (r->last->fraction - r->first->fraction);
  return fmax(0, r->first->wall_s - rate * r->first->fraction);
}

double exp_estimate_run(const exp_calibration *c, double wall_per_cpu, bool real, bool *lower) {
  *lower = false;
  reports r = reports_of(c);
  double setup = setup_of(&r);
  if (real) {
    const exp_calib_point *at = r.last ? r.last : r.first;
    if (c->finished) return setup + c->time_s;
    if (at) return setup + at->time_s / at->fraction;
    *lower = true;
    return c->elapsed_s;
  }
  if (c->finished) return c->elapsed_s;
  if (!r.first) {
    *lower = true;
    return c->elapsed_s;
  }
  if (!r.mark) return steps_of(&r, false); /* from the fork: setup among the steps */
  if (wall_per_cpu > 0 && has_cpu(&r)) return setup + steps_of(&r, true) * wall_per_cpu;
  return setup + steps_of(&r, false);
}

double exp_estimate_per_first(const exp_calibration *c, double est) {
  reports r = reports_of(c);
  if (!r.mark || !r.first || !(r.first->wall_s > r.mark->wall_s)) return 0;
  return (est - r.mark->wall_s) / (r.first->wall_s - r.mark->wall_s);
}

double exp_estimate_floor(const exp_calibration *c, double per_first) {
  reports r = reports_of(c);
  if (c->finished || r.first || !r.mark || !(per_first > 0)) return c->elapsed_s;
  return fmax(c->elapsed_s, r.mark->wall_s + (c->elapsed_s - r.mark->wall_s) * per_first);
}

/* A stage's steps: its calibration's estimate less its setup, or where
 * that is only a lower bound, its floor (exp_estimate_floor) less it. */
static double stage_steps(const exp_calibration *c, double wall_per_cpu, bool real,
                          double per_first, bool *lower) {
  reports r = reports_of(c);
  double est = exp_estimate_run(c, wall_per_cpu, real, lower);
  if (*lower && !real) est = exp_estimate_floor(c, per_first);
  return fmax(0, est - setup_of(&r));
}

double exp_estimate_stages(const exp_calibration *c, const exp_stage_cost *st, size_t n,
                           double wall_per_cpu, bool real, double per_first, bool *lower) {
  *lower = false;
  if (!n) return 0;
  reports r0 = reports_of(&c[0]);
  double setup = setup_of(&r0), total = setup, before = 0; /* the simulator's, stages < k */
  for (size_t k = 0; k < n; k++) {
    bool low = false, sim_low;
    total += stage_steps(&c[k], wall_per_cpu, real, per_first, &low);
    double sim = stage_steps(&c[k], wall_per_cpu, false, per_first, &sim_low);
    /* The scheduler's simulations, before the run starts: each sets up
     * and runs the stages before this one whole, then its prefix. */
    total += (double)st[k].trials * (setup + before) + st[k].prefix_share * sim;
    before += sim;
    *lower |= low;
  }
  return total;
}

double exp_estimate_total(const double *est, const double *work, const bool *calibrated,
                          const size_t *runs, size_t n) {
  /* An uncalibrated point: the mean estimate of the calibrated ones per
   * unit of work times its own work where it and some of them have a
   * work; else the mean of the calibrated; at least its own est. */
  double mean = 0, per_work = 0;
  size_t k = 0, kw = 0;
  for (size_t i = 0; i < n; i++) {
    if (!calibrated[i]) continue;
    mean += est[i];
    k++;
    if (work && work[i] > 0) {
      per_work += est[i] / work[i];
      kw++;
    }
  }
  mean = k ? mean / (double)k : 0;
  per_work = kw ? per_work / (double)kw : 0;
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    double e = calibrated[i]            ? est[i]
               : kw && work && work[i] > 0 ? per_work * work[i]
                                           : mean;
    sum += fmax(e, est[i]) * (double)runs[i];
  }
  return sum;
}

/* How many wall seconds a CPU-bound task takes per CPU second when n tasks
 * (it among them) are runnable on `cpus` processors sharing them evenly. */
static double time_shared(double n, double cpus) { return fmax(1, n / cpus); }

double exp_estimate_load_factor(double runnable, double load_avg, double cpus) {
  double f = time_shared(load_avg + 1, cpus) / time_shared(runnable, cpus);
  return fmin(fmax(f, 1 / EXP_ESTIMATE_LOAD_MAX), EXP_ESTIMATE_LOAD_MAX);
}

/* ----------------------------------------------------------- calibrating */

/* The load as /proc/loadavg gives it: its 1-minute average (*avg) and
 * the tasks runnable now (*now, the reader among them). false where it
 * cannot be read. */
static bool read_loadavg(double *avg, double *now) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return false;
  unsigned running = 0;
  bool ok = fscanf(f, "%lf %*f %*f %u/", avg, &running) == 2;
  fclose(f);
  *now = running;
  return ok;
}

typedef struct {
  exp_calib_point points[EXP_ESTIMATE_POINTS];
  size_t n;
  size_t reports; /* strictly between 0 and 1 */
  double share_s; /* past it, two reports are enough */
  exp_estimate *out; /* its runnable tasks, counted at every report */
} collected;

static bool collect(void *ctx, double wall_s, double time_s, double fraction, double cpu_s) {
  collected *c = ctx;
  double avg, now;
  if (read_loadavg(&avg, &now)) {
    c->out->runnable_sum += now - 1; /* not this reader; the probe itself counts */
    c->out->runnable_n++;
  }
  if (c->n == EXP_ESTIMATE_POINTS) c->n--; /* the last one replaces the one before */
  c->points[c->n++] = (exp_calib_point){wall_s, time_s, fraction, cpu_s};
  if (fraction > 0 && fraction < 1) c->reports++;
  /* Enough to see the steps' rate past the first (which can be slower),
   * unless the run is ending anyway. */
  return fraction < 1 &&
         (c->reports >= EXP_ESTIMATE_REPORTS || (c->reports >= 2 && wall_s >= c->share_s));
}

/* What a point's calibration keeps, per probe: the reports that count
 * (reports_of). A point has one probe, or with stages one per stage (the
 * run with that stage alone: cost[k] what the scheduler adds for it). */
typedef struct {
  exp_calib_point (*kept)[5];
  exp_calibration *cal;
  exp_stage_cost *cost; /* NULL without stages */
  size_t n;
  bool real;
} point_calibration;

static void keep(exp_calib_point kept[5], exp_calibration *cal, const collected *c,
                 const exp_probe_result *res, int rc) {
  exp_calibration all = {c->points, c->n, res->elapsed_s, rc > 0, res->time_s};
  reports r = reports_of(&all);
  const exp_calib_point *which[] = {r.mark, r.first, r.prev, r.last, r.final};
  size_t n = 0;
  for (size_t i = 0; i < 5; i++)
    if (which[i] && (i == 0 || which[i] != which[i - 1])) kept[n++] = *which[i];
  *cal = (exp_calibration){kept, n, res->elapsed_s, rc > 0, res->time_s};
}

static void point_free(point_calibration *pc) {
  free(pc->kept), free(pc->cal), free(pc->cost);
  *pc = (point_calibration){0};
}

static bool point_alloc(point_calibration *pc, size_t n, bool staged) {
  pc->kept = calloc(n, sizeof *pc->kept);
  pc->cal = calloc(n, sizeof *pc->cal);
  pc->cost = staged ? calloc(n, sizeof *pc->cost) : NULL;
  pc->n = n;
  if (pc->kept && pc->cal && (pc->cost || !staged)) return true;
  point_free(pc);
  return false;
}

/* The distinct configs of the runs shard holds: first[k] the index of the
 * first run of each, runs[k] how many; the count. */
static size_t distinct_configs(const exp_run_list *runs, const exp_shard *shard,
                               size_t *first, size_t *count) {
  size_t n = 0;
  for (size_t i = 0; i < runs->count; i++) {
    if (!exp_shard_has(shard, runs->runs[i].run)) continue;
    size_t k = 0;
    while (k < n && !cJSON_Compare(runs->runs[first[k]].config, runs->runs[i].config, true))
      k++;
    if (k == n) {
      first[n] = i;
      count[n++] = 0;
    }
    count[k]++;
  }
  return n;
}

static bool is_real(const exp_run *run) {
  const cJSON *b = exp_path_get(run->config, "backend");
  return cJSON_IsString(b) && strcmp(b->valuestring, "real") == 0;
}

/* Runs one probe of run with share_s, for at most cap_s (to see a second
 * report), into kept and cal. */
static void calibrate(const exp_spec *spec, const exp_run *run, double share_s, double cap_s,
                      exp_estimate *out, exp_calib_point kept[5], exp_calibration *cal) {
  collected *c = calloc(1, sizeof *c);
  exp_probe_result res = {0};
  if (c) c->share_s = share_s, c->out = out;
  int rc = c ? exp_run_probe(spec, run, cap_s, collect, c, &res) : 0;
  out->spent_s += res.elapsed_s;
  if (rc < 0) {
    out->failed++;
    snprintf(out->error, sizeof out->error, "run %u: %s", run->run, res.error);
  }
  if (c) keep(kept, cal, c, &res, rc);
  else *cal = (exp_calibration){kept, 0, res.elapsed_s, false, NAN};
  free(c);
}

static double config_number(const cJSON *config, const char *path, double dflt) {
  const cJSON *v = exp_path_get(config, path);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* config with stage k of its stages alone ("auto" workers: all of the
 * cluster's, the scheduler's simulations counted apart, into cost);
 * NULL on no memory. */
static cJSON *stage_alone(const cJSON *config, size_t k, exp_stage_cost *cost) {
  cJSON *copy = cJSON_Duplicate(config, true);
  const cJSON *stage = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(copy, "stages"),
                                          (int)k);
  cJSON *one = cJSON_Duplicate(stage, true), *list = cJSON_CreateArray();
  if (!copy || !one || !list || !cJSON_AddItemToArray(list, one)) {
    cJSON_Delete(copy), cJSON_Delete(one), cJSON_Delete(list);
    return NULL;
  }
  *cost = (exp_stage_cost){0};
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(one, "workers");
  if (cJSON_IsString(w)) {
    double steps = config_number(one, "steps", 1), prefix;
    double workers = fmin(steps, config_number(config, "cluster.nodes", 1) *
                                     config_number(config, "cluster.workers_per_node", 1));
    cost->trials = exp_stages_trials((uint64_t)steps, (uint32_t)workers, &prefix);
    cost->prefix_share = prefix / steps;
    cJSON_ReplaceItemInObjectCaseSensitive(one, "workers", cJSON_CreateNumber(workers));
  }
  cJSON_ReplaceItemInObjectCaseSensitive(copy, "stages", list);
  return copy;
}

/* Calibrates the point whose first run is run with share_s, for at most
 * cap_s, into pc: one probe, or with stages one per stage, each with its
 * part of both. false on no memory. */
static bool calibrate_point(const exp_spec *spec, const exp_run *run, double share_s,
                            double cap_s, exp_estimate *out, point_calibration *pc) {
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(run->config, "stages");
  size_t n = cJSON_IsArray(stages) ? (size_t)cJSON_GetArraySize(stages) : 0;
  if (!point_alloc(pc, n ? n : 1, n > 0)) return false;
  pc->real = is_real(run);
  if (!n) {
    calibrate(spec, run, share_s, cap_s, out, pc->kept[0], &pc->cal[0]);
    return true;
  }
  out->staged = true;
  for (size_t k = 0; k < n; k++) {
    exp_run alone = *run;
    if (!(alone.config = stage_alone(run->config, k, &pc->cost[k]))) return false;
    calibrate(spec, &alone, share_s / (double)n, cap_s / (double)n, out, pc->kept[k],
              &pc->cal[k]);
    cJSON_Delete(alone.config);
  }
  return true;
}

static size_t gcd(size_t a, size_t b) {
  while (b) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The step between the points calibrated one after the other: near n over
 * the golden ratio, and prime to n, so that the first few are spread over
 * the sweep, and points 0, step, 2 step, ... modulo the size of the last
 * axis go through all its values (a sweep of 4 node counts times 3
 * policies is not calibrated on one policy alone). */
static size_t stride(size_t n) {
  size_t s = (size_t)llround(0.6180339887 * (double)n);
  for (size_t d = 0; d <= n; d++) {
    if (s > d && gcd(s - d, n) == 1) return s - d;
    if (s + d < n && gcd(s + d, n) == 1) return s + d;
  }
  return 1;
}

size_t exp_estimate_order(size_t n, size_t j) { return n ? j * stride(n) % n : 0; }

/* Adds the wall and CPU seconds of the steps of pc's probes to *wall and *cpu. */
static void point_span(const point_calibration *pc, double *wall, double *cpu) {
  for (size_t k = 0; k < pc->n; k++) {
    double w, c;
    exp_calibration_span(&pc->cal[k], &w, &c);
    *wall += w;
    *cpu += c;
  }
}

/* Calibrates points of the sweep (first[i]: the first run of point i) in
 * the order of exp_estimate_order, so that however many are calibrated
 * they are spread over it and over each of its axes: k
 * of them, each with its share of what is left, then others while time is
 * left (a probe ends once it has seen enough, or the run ended; it may run
 * past its share to see a second report, which leaves less to the next).
 * The budget is in seconds of an idle machine: on a busy one, where a
 * probe gets a part of a core, it is that many times longer (the wall
 * seconds per CPU second of the probes so far), up to EXP_ESTIMATE_LOAD_MAX. */
static bool calibrate_points(const exp_spec *spec, const exp_run_list *runs,
                             const size_t *first, size_t n, double budget_s,
                             exp_estimate *out, point_calibration *pc, bool *done) {
  size_t k = (size_t)(budget_s / EXP_ESTIMATE_MIN_S);
  k = k < 1 ? 1 : k > n ? n : k;
  double budget = budget_s, wall = 0, cpu = 0;
  for (size_t j = 0; j < n && (!out->calibrated || out->spent_s < budget); j++) {
    size_t i = exp_estimate_order(n, j);
    size_t left = out->calibrated < k ? k - out->calibrated : 1;
    double share = fmax((budget - out->spent_s) / (double)left, 0.05);
    /* While no probe has seen a step, one may run until it does, as long
     * as the load may stretch the budget: a run whose first 2% take longer
     * than its share is still measured. */
    double cap = share * EXP_ESTIMATE_STRETCH;
    if (!(cpu > 0)) cap = fmax(cap, budget_s * EXP_ESTIMATE_LOAD_MAX - out->spent_s);
    if (!calibrate_point(spec, &runs->runs[first[i]], share, cap, out, &pc[i])) return false;
    done[i] = true;
    out->calibrated++;
    /* A busy machine gives a probe less of a core: the budget grows with
     * the load measured so far, so that it sees about as many steps. */
    point_span(&pc[i], &wall, &cpu);
    if (cpu > 0) budget = budget_s * fmin(fmax(wall / cpu, 1), EXP_ESTIMATE_LOAD_MAX);
  }
  return true;
}

/* The mean of exp_estimate_per_first over the probes of the simulated
 * points that gave a first report after their setup; 0 without one. */
static double mean_per_first(const point_calibration *pc, const bool *done, size_t n,
                             double wall_per_cpu) {
  double sum = 0;
  size_t firsts = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; done[i] && !pc[i].real && k < pc[i].n; k++) {
      bool lower;
      double est = exp_estimate_run(&pc[i].cal[k], wall_per_cpu, false, &lower);
      double ratio = lower ? 0 : exp_estimate_per_first(&pc[i].cal[k], est);
      if (ratio > 0) sum += ratio, firsts++;
    }
  return firsts ? sum / (double)firsts : 0;
}

/* Each calibrated point's estimate into est, its steps' CPU seconds turned
 * into wall seconds at the rate of the whole calibration (the machine's
 * load as it was, the same for every point); a point with stages from a
 * probe of each (exp_estimate_stages). A point whose estimate is only
 * a lower bound (a probe without a report after its setup) is not counted
 * as calibrated (known[i] false): the others say more of it, its bound its
 * least (exp_estimate_floor: its time after its setup, not enough for a
 * first report, times what a first report's time came to in the whole run
 * of the probes that gave one). */
static void estimate_points(const point_calibration *pc, const bool *done, size_t n,
                            exp_estimate *out, double *est, bool *known) {
  double wall = 0, cpu = 0;
  for (size_t i = 0; i < n; i++)
    if (done[i]) point_span(&pc[i], &wall, &cpu);
  double load_avg, ignored;
  out->load_factor = 1;
  if (out->runnable_n && read_loadavg(&load_avg, &ignored)) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    out->load_avg = load_avg;
    out->load_factor = exp_estimate_load_factor(out->runnable_sum / (double)out->runnable_n,
                                                load_avg, cpus > 0 ? (double)cpus : 1);
  }
  out->wall_per_cpu = cpu > 0 ? wall / cpu * out->load_factor : 0;
  double per_first = mean_per_first(pc, done, n, out->wall_per_cpu);
  bool any_known = false, any_lower = false;
  for (size_t i = 0; i < n; i++) {
    bool lower = false;
    if (done[i] && pc[i].cost)
      est[i] = exp_estimate_stages(pc[i].cal, pc[i].cost, pc[i].n, out->wall_per_cpu,
                                   pc[i].real, per_first, &lower);
    else if (done[i])
      est[i] = exp_estimate_run(&pc[i].cal[0], out->wall_per_cpu, pc[i].real, &lower);
    known[i] = done[i] && !lower;
    if (lower && !pc[i].real && !pc[i].cost && per_first > 0)
      est[i] = exp_estimate_floor(&pc[i].cal[0], per_first);
    any_known |= known[i];
    any_lower |= lower;
  }
  out->lower = any_lower && !any_known;
}

int exp_estimate_spec(const exp_spec *spec, const exp_shard *shard, double budget_s,
                      exp_estimate *out) {
  *out = (exp_estimate){0};
  const exp_run_list *runs = exp_spec_runs(spec);
  size_t m = runs->count + 1;
  size_t *first = calloc(m, sizeof *first), *count = calloc(m, sizeof *count);
  double *est = calloc(m, sizeof *est), *work = calloc(m, sizeof *work);
  bool *done = calloc(m, sizeof *done), *known = calloc(m, sizeof *known);
  point_calibration *pc = calloc(m, sizeof *pc);
  int rc = -1;
  if (first && count && est && work && done && known && pc) {
    size_t n = distinct_configs(runs, shard, first, count);
    if (calibrate_points(spec, runs, first, n, budget_s, out, pc, done)) {
      estimate_points(pc, done, n, out, est, known);
      char how[512];
      for (size_t i = 0; i < n; i++) {
        out->runs += count[i];
        out->real |= is_real(&runs->runs[first[i]]);
        work[i] = exp_run_work(&runs->runs[first[i]], how, sizeof how);
      }
      out->total_s = exp_estimate_total(est, work, known, count, n);
      out->points = n;
      rc = 0;
    }
  }
  for (size_t i = 0; pc && i < m; i++) point_free(&pc[i]);
  free(first), free(count), free(est), free(work), free(done), free(known), free(pc);
  return rc;
}

/* ---------------------------------------------------------------- saying */

void exp_format_wall(double s, char *buf, size_t n) {
  if (s < 10)
    snprintf(buf, n, "%.1f s", s);
  else if (s < 60)
    snprintf(buf, n, "%.0f s", s);
  else if (s < 3600)
    snprintf(buf, n, "%.0f min %.0f s", floor(s / 60), fmod(floor(s), 60));
  else
    snprintf(buf, n, "%.0f h %.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

void exp_estimate_print(FILE *f, const char *lead, const exp_estimate *e) {
  char total[48], spent[48];
  exp_format_wall(e->total_s, total, sizeof total);
  exp_format_wall(e->spent_s, spent, sizeof spent);
  fprintf(f, "%sestimate: %s %s of wall time for %zu run%s (", lead,
          e->lower ? "more than" : "about", total, e->runs, e->runs == 1 ? "" : "s");
  if (e->real)
    fprintf(f, "the simulator's prediction of each run's time plus its setup, ");
  fprintf(f, "from %s simulating the first steps of %s", spent,
          e->staged ? "each stage of " : "");
  if (e->points == 1)
    fprintf(f, "its sweep point");
  else if (e->calibrated == e->points)
    fprintf(f, "each of the %zu sweep points", e->points);
  else
    fprintf(f, "%zu of the %zu sweep points, the others taken as their mean per unit of "
            "work", e->calibrated, e->points);
  if (fabs(e->load_factor - 1) > 0.1)
    fprintf(f, "; the load the probes met (%.1f tasks runnable) times %.2g for the last "
            "minute's (load average %.2f)", e->runnable_sum / (double)e->runnable_n,
            e->load_factor, e->load_avg);
  fprintf(f, ")%s\n", e->lower ? "; no run got going in its share of the calibration: "
                                 "each counts only that share" : "");
  if (e->failed)
    fprintf(f, "%s%zu sweep point%s failed in the calibration: %s\n", lead, e->failed,
            e->failed == 1 ? "" : "s", e->error);
}
