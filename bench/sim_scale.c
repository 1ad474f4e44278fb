/*
 * sim_scale: what a simulated message costs in wall time under relocation,
 * against static partitioning, and what the latency_bandwidth network model
 * saves against SimGrid's CM02.
 *
 * One workload (the quickstart's, with 100k keys instead of 1M so that
 * building the Zipf table does not weigh on a short run): Zipf 1.1, 100-float
 * values, 10 reads and 10 writes per step, locality 0.9, on N nodes x 4
 * workers, S steps per worker (defaults 64 and 25). Four runs, each in its
 * own child (SimGrid allows one engine per process): static (hash, fast
 * local access) and relocate (lookahead 100), under CM02 and then under
 * latency_bandwidth. With lookahead 100 and 25 steps every localize of the
 * run starts at once: the case where SimGrid's solver has the most flows in
 * flight.
 *
 * Lines, one per figure (`name: X unit (ratio Y against Z)`):
 *   wall (and CPU) microseconds per simulated message of each run; relocate's against
 *   static's under the same model (goal: <= 2), latency_bandwidth's against
 *   CM02's for the same policy; simulated time_s of latency_bandwidth
 *   against CM02's (how far the cheap model is from SimGrid's).
 * Usage: sim_scale [steps [nodes]]. Wall time covers the whole run (engine,
 * platform, the nodes, the metrics): the machine's load moves it.
 *
 * sim_scale --every-policy [steps [nodes]] (defaults 100 and 1,024): the
 * scale goal, every shipped policy on the quickstart's own workload (1 M
 * keys) under latency_bandwidth, each run's wall and CPU seconds against the
 * goal of 300 s. The verdict goes by CPU time, which another job on the
 * same cores inflates much less than wall time. About 15 minutes in all.
 */
#include "bench/bench.h"
#include "sim/sim.h"
#include "run/run.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char *policy, *model;
  uint32_t nodes;
  uint64_t steps;
  uint64_t keys;
} scale_case;

typedef struct {
  double wall_s, cpu_s, messages, sim_s;
} figures;

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The process's CPU time: on a shared machine wall time grows with other
 * processes' load, CPU time much less. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double metric(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int run_case(const scale_case *sc, figures *out) {
  sim_cluster c;
  sim_cluster_default(&c);
  c.nodes = sc->nodes;
  c.workers_per_node = 4;
  snprintf(c.network_model, sizeof c.network_model, "%s", sc->model);
  char wl_text[512];
  snprintf(wl_text, sizeof wl_text,
           "{\"type\":\"zipf\",\"keys\":%llu,\"skew\":1.1,\"value_length\":100,"
           "\"reads_per_step\":10,\"writes_per_step\":10,\"steps_per_worker\":%llu,"
           "\"locality\":0.9}",
           (unsigned long long)(sc->keys ? sc->keys : 100000), (unsigned long long)sc->steps);
  cJSON *wl = cJSON_Parse(wl_text), *pol = cJSON_Parse(sc->policy);
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = 1}, .cluster = &c};
  char err[512];
  double t0 = wall_now(), c0 = cpu_now();
  cJSON *m = sim_run(&a, err, sizeof err);
  out->wall_s = wall_now() - t0;
  out->cpu_s = cpu_now() - c0;
  if (!m) fprintf(stderr, "sim_scale: %s\n", err);
  out->messages = metric(m, "messages");
  out->sim_s = metric(m, "time_s");
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return m ? 0 : -1;
}

static int case_of(void *ctx, void *out) { return run_case(ctx, out); }

/* Runs one case in a child and copies its figures back; -1 on failure. */
static int in_child(const scale_case *sc, figures *out) {
  return bench_in_child(case_of, (void *)sc, out, sizeof *out);
}

static const char *const policies[2][2] = {
    {"static", "{\"type\":\"static\",\"partition\":\"hash\"}"},
    {"relocate", "{\"type\":\"relocate\",\"partition\":\"hash\",\"lookahead\":100}"}};
static const char *const models[2] = {"CM02", SIM_MODEL_LATENCY_BANDWIDTH};

static double us_per_msg(const figures *f) {
  return f->messages > 0 ? f->wall_s / f->messages * 1e6 : 0;
}

static double cpu_us_per_msg(const figures *f) {
  return f->messages > 0 ? f->cpu_s / f->messages * 1e6 : 0;
}

#define SCALE_GOAL_S 300.0

/* Every shipped policy as bench/README.md's 1,024-node table runs it. */
static int every_policy(uint64_t steps, uint32_t nodes) {
  static const char *const every[][2] = {
      {"static", "{\"type\":\"static\",\"partition\":\"hash\",\"fast_local_access\":false}"},
      {"relocate", "{\"type\":\"relocate\",\"partition\":\"hash\",\"lookahead\":100}"},
      {"replicate", "{\"type\":\"replicate\",\"hot_keys\":1000}"},
      {"replicate-owner", "{\"type\":\"replicate\",\"hot_keys\":1000,\"sync\":\"owner\"}"},
      {"nups", "{\"type\":\"nups\"}"},
      {"adaptive", "{\"type\":\"adaptive\"}"},
      {"psld", "{\"type\":\"psld\"}"}};
  size_t n = sizeof every / sizeof every[0], met = 0;
  printf("sim_scale: every policy, %u nodes x 4 workers, %llu steps per worker, the "
         "quickstart's workload (1 M keys), %s\n",
         (unsigned)nodes, (unsigned long long)steps, SIM_MODEL_LATENCY_BANDWIDTH);
  for (size_t p = 0; p < n; p++) {
    scale_case sc = {.policy = every[p][1], .model = SIM_MODEL_LATENCY_BANDWIDTH,
                     .nodes = nodes, .steps = steps, .keys = 1000000};
    figures f;
    char name[96];
    snprintf(name, sizeof name, "sim %s %ux4 x %llu steps", every[p][0], (unsigned)nodes,
             (unsigned long long)steps);
    if (in_child(&sc, &f) != 0) {
      printf("%s: failed\n", name);
      continue;
    }
    printf("# %s: %.0f messages, simulated %.6g s\n", name, f.messages, f.sim_s);
    printf("%s CPU: %.4g s (ratio %.3g against the %.0f s goal)\n", name, f.cpu_s,
           f.cpu_s / SCALE_GOAL_S, SCALE_GOAL_S);
    printf("%s wall: %.4g s (ratio %.3g against the %.0f s goal)\n", name, f.wall_s,
           f.wall_s / SCALE_GOAL_S, SCALE_GOAL_S);
    fflush(stdout);
    met += f.cpu_s < SCALE_GOAL_S;
  }
  printf("goal every policy at %u nodes x 4 x %llu steps under %.0f s (CPU): %zu of %zu: %s\n",
         (unsigned)nodes, (unsigned long long)steps, SCALE_GOAL_S, met, n,
         met == n ? "met" : "missed");
  return met == n ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--every-policy") == 0) {
    uint64_t st = argc > 2 ? strtoull(argv[2], NULL, 10) : 100;
    uint32_t nd = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1024;
    return every_policy(st ? st : 100, nd ? nd : 1024);
  }
  uint64_t steps = argc > 1 ? strtoull(argv[1], NULL, 10) : 25;
  uint32_t nodes = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 64;
  if (steps == 0) steps = 25;
  if (nodes == 0) nodes = 64;
  printf("sim_scale: %u nodes x 4 workers, %llu steps per worker, Zipf 1.1 (quickstart's "
         "workload, 100k keys); wall time per simulated message\n",
         (unsigned)nodes, (unsigned long long)steps);
  figures f[2][2]; /* [model][policy] */
  char name[2][2][96];
  for (int mo = 0; mo < 2; mo++)
    for (int p = 0; p < 2; p++) {
      scale_case sc = {.policy = policies[p][1], .model = models[mo], .nodes = nodes,
                       .steps = steps};
      snprintf(name[mo][p], sizeof name[mo][p], "sim %s %ux4 %s", policies[p][0],
               (unsigned)nodes, models[mo]);
      if (in_child(&sc, &f[mo][p]) != 0) {
        printf("%s: failed\n", name[mo][p]);
        return 1;
      }
      const figures *x = &f[mo][p];
      printf("# %s: %.0f messages, %.3g s wall, %.3g s CPU, simulated %.6g s\n", name[mo][p],
             x->messages, x->wall_s, x->cpu_s, x->sim_s);
      const figures *y = p == 1 ? &f[mo][0] : mo == 1 ? &f[0][p] : NULL;
      const char *yname = p == 1 ? name[mo][0] : name[0][p];
      printf("%s: %.3g us/msg", name[mo][p], us_per_msg(x));
      if (y) printf(" (ratio %.3g against %s)", us_per_msg(x) / us_per_msg(y), yname);
      printf("\n%s CPU: %.3g us/msg", name[mo][p], cpu_us_per_msg(x));
      if (y) printf(" (ratio %.3g against %s CPU)", cpu_us_per_msg(x) / cpu_us_per_msg(y), yname);
      printf("\n");
      fflush(stdout);
    }
  for (int p = 0; p < 2; p++) {
    printf("%s wall: %.3g s (ratio %.3g against %s)\n", name[1][p], f[1][p].wall_s,
           f[1][p].wall_s / f[0][p].wall_s, name[0][p]);
    printf("%s time_s: %.6g s (ratio %.4f against %s)\n", name[1][p], f[1][p].sim_s,
           f[1][p].sim_s / f[0][p].sim_s, name[0][p]);
  }
  for (int mo = 0; mo < 2; mo++) {
    double r = us_per_msg(&f[mo][1]) / us_per_msg(&f[mo][0]);
    double rc = cpu_us_per_msg(&f[mo][1]) / cpu_us_per_msg(&f[mo][0]);
    printf("goal relocate per message within 2x of static, %s: %.3g <= 2 (CPU %.3g): %s\n",
           models[mo], r, rc, r <= 2 ? "met" : "missed");
  }
  return 0;
}
