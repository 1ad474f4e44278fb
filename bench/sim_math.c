/*
 * sim_math: what real math costs the simulator. The same mf workload (a
 * generated 100k x 20k matrix, Zipf 1.1, rank 16, static hash partitioning,
 * one worker per node) runs with "math": "real" and with "math": "none"
 * (the same keys, pushes of 1.0, no arithmetic), at 8 and at 64 simulated
 * nodes, each in its own child process (SimGrid allows one engine per
 * process), the two maths interleaved over rounds. It prints simulated key
 * accesses per wall-clock second for each, the median of the rounds, and
 * real / none: the share of a what-if run's wall time the math takes.
 *
 * Usage: sim_math [rounds]   (default 3)
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
  double wall_s, accesses, sim_s;
} figures;

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double metric(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int child(uint32_t nodes, const char *math, figures *out) {
  sim_cluster c;
  sim_cluster_default(&c);
  c.nodes = nodes;
  c.workers_per_node = 1;
  char wl_text[512];
  snprintf(wl_text, sizeof wl_text,
           "{\"type\":\"mf\",\"rows\":100000,\"cols\":20000,\"nnz\":%u,\"rank\":16,"
           "\"epochs\":1,\"math\":\"%s\"}",
           nodes * 4000u, math);
  cJSON *wl = cJSON_Parse(wl_text), *pol = cJSON_Parse("{\"type\":\"static\"}");
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = 1}, .cluster = &c};
  char err[512];
  double t0 = wall_now();
  cJSON *m = sim_run(&a, err, sizeof err);
  out->wall_s = wall_now() - t0;
  if (!m) fprintf(stderr, "sim_math: %s\n", err);
  out->accesses = metric(m, "accesses");
  out->sim_s = metric(m, "time_s");
  int rc = m ? 0 : -1;
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return rc;
}

typedef struct {
  uint32_t nodes;
  const char *math;
} math_case;

static int child_of(void *ctx, void *out) {
  const math_case *mc = ctx;
  return child(mc->nodes, mc->math, out);
}

static int in_child(uint32_t nodes, const char *math, figures *out) {
  math_case mc = {nodes, math};
  return bench_in_child(child_of, &mc, out, sizeof *out);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  if (rounds < 1 || rounds > 15) {
    fprintf(stderr, "usage: sim_math [rounds 1..15]\n");
    return 2;
  }
  printf("sim_math: mf rank 16, 4000 ratings per node, static; simulated key accesses per "
         "wall second, medians of %d interleaved rounds\n", rounds);
  const uint32_t sizes[] = {8, 64};
  for (size_t s = 0; s < 2; s++) {
    char rname[64], nname[64];
    snprintf(rname, sizeof rname, "sim mf math real, %u nodes", (unsigned)sizes[s]);
    snprintf(nname, sizeof nname, "sim mf math none, %u nodes", (unsigned)sizes[s]);
    bench_fig real = {.name = rname, .unit = "k accesses/s"},
              none = {.name = nname, .unit = "k accesses/s"};
    figures f;
    for (int r = 0; r < rounds; r++) {
      if (in_child(sizes[s], "real", &f) != 0) return 1;
      bench_add(&real, f.accesses / f.wall_s / 1e3);
      if (in_child(sizes[s], "none", &f) != 0) return 1;
      bench_add(&none, f.accesses / f.wall_s / 1e3);
    }
    bench_print(&none);
    bench_print_ratio(&real, &none, false);
  }
  return 0;
}
