/*
 * sim/: the platform written from a cluster, and small simulated runs.
 *
 * SimGrid allows one engine per process, so everything that starts SimGrid
 * (loading a platform, sim_run) runs in a forked child that writes its
 * outcome, as JSON, to a pipe; assertions run in the parent. No test looks at
 * wall-clock time; the timing test checks simulated time against arithmetic.
 */
#include "sim/platform.h"
#include "sim/sim.h"
#include "sim/sim_internal.h" /* the run queue's wait (sim_cpu_block_wait) */
#include "tests/harness.h"
#include "tests/saved_params.h"
#include "tests/saved_quality.h"
#include "tests/unit.h"
#include "workloads/w2v.h"

#include "model/ps.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mutex.h>

/* -------------------------------------------------------- child runner */

/* Runs fn(ctx) in a child; what it returns (a JSON text, malloc'd) comes back
 * parsed. NULL if the child failed, with its message in err. */
static cJSON *in_child(char *(*fn)(void *ctx), void *ctx, char *err, size_t errlen) {
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    char *text = fn(ctx);
    size_t len = text ? strlen(text) : 0, off = 0;
    while (off < len) {
      ssize_t n = write(fds[1], text + off, len - off);
      if (n <= 0) break;
      off += (size_t)n;
    }
    _exit(text ? 0 : 1);
  }
  close(fds[1]);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  ssize_t n;
  while (buf && (n = read(fds[0], buf + len, cap - len - 1)) > 0) {
    len += (size_t)n;
    if (len + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!buf) return NULL;
  buf[len] = 0;
  cJSON *out = NULL;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && buf[0] == '{') out = cJSON_Parse(buf);
  else snprintf(err, errlen, "child failed (status %d): %s", status, buf);
  free(buf);
  return out;
}

static double num(const cJSON *obj, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* ------------------------------------------------------ the platform XML */

static sim_straggler stragglers[] = {{.node = 1, .speed_factor = 0.5, .bandwidth_factor = 0.25},
                                     {.node = 1, .speed_factor = 0.5, .bandwidth_factor = 1}};

static void small_cluster(sim_cluster *c, sim_topology topology) {
  sim_cluster_default(c);
  c->nodes = 3;
  c->workers_per_node = 2;
  c->host_speed = 2e9;
  c->bandwidth = 1e9;
  c->latency = 1e-5;
  c->topology = topology;
  c->backbone_bandwidth = 4e9;
  c->backbone_latency = 3e-5;
  c->stragglers = stragglers;
  c->n_stragglers = 2;
}

/* Not inlined: inlined at -O3, GCC takes the text for a pointer into this
 * frame (open_memstream is handed &text) and warns at each use (dangling
 * pointer). */
__attribute__((noinline)) static char *platform_text(const sim_cluster *c) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CU_ASSERT_EQUAL_FATAL(sim_platform_write(c, f), 0);
  fclose(f);
  return text;
}

static size_t count(const char *text, const char *what) {
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* The attribute `attr` of the element whose opening text is `open`. */
static double attribute(const char *text, const char *open, const char *attr) {
  const char *p = strstr(text, open);
  char key[64];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char *end = p ? strchr(p, '>') : NULL;
  const char *a = p ? strstr(p, key) : NULL;
  return a && a < end ? strtod(a + strlen(key), NULL) : NAN;
}

static void test_platform_xml(void) {
  sim_cluster c;
  small_cluster(&c, SIM_TOPOLOGY_BACKBONE);
  char *x = platform_text(&c);
  CU_ASSERT_PTR_NOT_NULL(strstr(x, "<platform version=\"4.1\">"));
  CU_ASSERT_PTR_NOT_NULL(strstr(x, "routing=\"Cluster\""));
  CU_ASSERT_EQUAL(count(x, "<host "), 3);
  CU_ASSERT_EQUAL(count(x, "<host_link "), 3);
  CU_ASSERT_EQUAL(count(x, "<backbone "), 1);
  CU_ASSERT_EQUAL(count(x, "<route "), 3); /* loopbacks */
  CU_ASSERT_EQUAL(count(x, "core=\"2\""), 3);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<host id=\"node-0\"", "speed"), 2e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<host id=\"node-1\"", "speed"), 0.5e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<link id=\"link-0\"", "bandwidth"), 1e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<link id=\"link-1\"", "bandwidth"), 0.25e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<link id=\"link-2\"", "latency"), 1e-5, 0);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<backbone ", "bandwidth"), 4e9, 0);
  free(x);
  c.topology = SIM_TOPOLOGY_STAR;
  x = platform_text(&c);
  CU_ASSERT_EQUAL(count(x, "<backbone "), 0);
  free(x);
}

static void test_cluster_check(void) {
  sim_cluster c;
  char err[256];
  sim_cluster_default(&c);
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), 0);
  CU_ASSERT_EQUAL(c.nodes, 1);
  CU_ASSERT_STRING_EQUAL(c.network_model, "CM02");
  small_cluster(&c, SIM_TOPOLOGY_STAR);
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), 0);
  sim_straggler bad = {.node = 3, .speed_factor = 1, .bandwidth_factor = 1};
  c.stragglers = &bad;
  c.n_stragglers = 1;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "stragglers[0]"));
  /* Phases: in time order, each from before until, factors > 0. */
  run_phase phases[2] = {{0, 0.2, 0.5, 1}, {0.1, 0.3, 1, 0.5}};
  bad = (sim_straggler){.node = 1, .speed_factor = 1, .bandwidth_factor = 1,
                        .phases = phases, .n_phases = 2};
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "stragglers[0].phases[1]: expected 0.2 <= from_s"));
  phases[1].from_s = 0.2;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), 0);
  phases[1].until_s = 0.2;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  phases[1].until_s = 0.3;
  phases[0].speed_factor = 0;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  phases[0].speed_factor = 0.5;
  bad.speed_factor = 0.5; /* factors of the whole run beside phases */
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  small_cluster(&c, SIM_TOPOLOGY_STAR);
  strcpy(c.network_model, "NS3");
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  strcpy(c.network_model, SIM_MODEL_LATENCY_BANDWIDTH);
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), 0);
}

/* In SimGrid: hosts, speeds and per-route latency and bandwidth. */
static char *load_platform_child(void *ctx) {
  const sim_cluster *c = ctx;
  char path[512], err[256];
  int argc = 2;
  char *argv[] = {"test_sim", "--log=root.thresh:critical", NULL};
  simgrid_init(&argc, argv);
  if (sim_platform_write_temp(c, path, sizeof path, err, sizeof err) != 0) return NULL;
  simgrid_load_platform(path);
  unlink(path);
  sg_host_t h0 = sg_host_by_name("node-0"), h1 = sg_host_by_name("node-1");
  char *out = malloc(512);
  snprintf(out, 512,
           "{\"hosts\":%zu,\"speed1\":%.17g,\"cores\":%d,\"lat01\":%.17g,\"bw01\":%.17g,"
           "\"lat00\":%.17g}",
           sg_host_count(), sg_host_get_speed(h1), sg_host_core_count(h0),
           sg_host_get_route_latency(h0, h1), sg_host_get_route_bandwidth(h0, h1),
           sg_host_get_route_latency(h0, h0));
  return out;
}

static void test_platform_loads(void) {
  sim_cluster c;
  small_cluster(&c, SIM_TOPOLOGY_BACKBONE);
  char err[1024] = "";
  cJSON *r = in_child(load_platform_child, &c, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(num(r, "hosts"), 3);
  CU_ASSERT_DOUBLE_EQUAL(num(r, "speed1"), 0.5e9, 0);
  CU_ASSERT_EQUAL(num(r, "cores"), 2);
  /* node-0 up + backbone + node-1 down; the bottleneck is node-1's link. */
  CU_ASSERT_DOUBLE_EQUAL(num(r, "lat01"), 1e-5 + 3e-5 + 1e-5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(num(r, "bw01"), 0.25e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(num(r, "lat00"), SIM_LOOPBACK_LATENCY, 0);
  cJSON_Delete(r);
}

/* ------------------------------------------------------------- sim_run */

typedef struct {
  sim_cluster cluster;
  const char *workload, *policy;
  const char *consistency; /* or NULL */
  uint64_t seed;
} run_spec;

static char *sim_run_child(void *ctx) {
  run_spec *r = ctx;
  cJSON *wl = cJSON_Parse(r->workload), *pol = cJSON_Parse(r->policy);
  cJSON *cons = r->consistency ? cJSON_Parse(r->consistency) : NULL;
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = r->seed, .consistency = cons},
                    .cluster = &r->cluster};
  char err[512];
  cJSON *m = sim_run(&a, err, sizeof err);
  char *text = m ? cJSON_PrintUnformatted(m) : NULL;
  if (!m) fprintf(stderr, "sim_run: %s\n", err);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  return text;
}

/* As sim_run_child, for a run that must fail: {"error": its message}. */
static char *sim_run_error_child(void *ctx) {
  run_spec *r = ctx;
  cJSON *wl = cJSON_Parse(r->workload), *pol = cJSON_Parse(r->policy);
  cJSON *cons = r->consistency ? cJSON_Parse(r->consistency) : NULL;
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = r->seed, .consistency = cons},
                    .cluster = &r->cluster};
  char err[512] = "";
  cJSON *m = sim_run(&a, err, sizeof err);
  cJSON *out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "error", m ? "" : err);
  char *text = cJSON_PrintUnformatted(out);
  cJSON_Delete(out);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  return text;
}

static cJSON *run(run_spec *r) {
  char err[1024] = "";
  cJSON *m = in_child(sim_run_child, r, err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  return m;
}

static const char *tiny_workload =
    "{\"type\":\"zipf\",\"keys\":2000,\"skew\":1.1,\"value_length\":8,\"reads_per_step\":10,"
    "\"writes_per_step\":10,\"steps_per_worker\":300,\"epochs\":3,\"locality\":0.5,"
    "\"flops_per_step\":1e5}";

static void tiny(run_spec *r, const char *policy) {
  r->consistency = NULL;
  sim_cluster_default(&r->cluster);
  r->cluster.nodes = 2;
  r->cluster.workers_per_node = 2;
  r->workload = tiny_workload;
  r->policy = policy;
  r->seed = 7;
}

static void test_metrics_and_conservation(void) {
  static const char *const names[] = {"time_s", "steps", "steps_per_s", "accesses",
                                      "local_ratio", "messages", "bytes", "relocations",
                                      "replica_syncs", "pushed_floats", "value_sum"};
  run_spec r;
  tiny(&r, "{\"type\":\"static\"}");
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CU_ASSERT_FALSE(isnan(num(m, names[i])));
  const cJSON *epochs = cJSON_GetObjectItemCaseSensitive(m, "epoch_time_s");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(epochs), 3);
  CU_ASSERT_EQUAL(num(m, "steps"), 4 * 300);
  CU_ASSERT(num(m, "time_s") > 0);
  CU_ASSERT(num(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  double sum = 0;
  for (int e = 0; e < 3; e++) sum += cJSON_GetArrayItem(epochs, e)->valuedouble;
  CU_ASSERT(sum <= num(m, "time_s") * (1 + 1e-12));
  cJSON_Delete(m);
}

/* The replica check: replicate by all-reduce keeps every replica equal to
 * its owner, exactly with integer pushes, up to float rounding with real
 * math (mf, whose replicated deltas are summed in a different order on
 * each node); replicas synced through the owner are not compared. */
static void test_replicas_match_owners(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"replicate\",\"hot_keys\":50,\"syncs_per_sec\":2000}");
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(num(m, "replica_syncs") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  CU_ASSERT_EQUAL(num(m, "replica_max_diff"), 0);
  cJSON_Delete(m);
  r.workload = "{\"type\":\"mf\",\"rows\":40,\"cols\":40,\"nnz\":400,\"rank\":8,"
               "\"batch\":4,\"epochs\":2,\"test_fraction\":0.2,\"math\":\"real\"}";
  r.policy = "{\"type\":\"replicate\",\"hot_keys\":\"all\",\"syncs_per_sec\":2000}";
  r.cluster.nodes = 4; /* sums of three or more orders differ */
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  double d = num(m, "replica_max_diff");
  printf("\n    mf replicate: replica_max_diff %g", d);
  CU_ASSERT(d >= 0 && d <= 1e-5);
  /* Every key replicated on 4 nodes: the evaluation read node-local
   * replicas for the keys its node does not own (about 3 in 4), and says
   * so; under static it reads the owners only. */
  printf(", eval_replica_share %g", num(m, "eval_replica_share"));
  CU_ASSERT(num(m, "eval_replica_share") > 0.6 && num(m, "eval_replica_share") < 0.9);
  cJSON_Delete(m);
  r.policy = "{\"type\":\"static\"}";
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "eval_replica_share"), 0);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "replica_max_diff"));
  cJSON_Delete(m);
  tiny(&r, "{\"type\":\"replicate\",\"hot_keys\":50,\"sync\":\"owner\"}");
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "replica_max_diff"));
  cJSON_Delete(m);
}

/* syncs_per_step on a simulated run: 2 nodes of 2 workers, 300 steps each,
 * a round every 10 steps of each worker: 600 / 20 = 30 rounds a node. */
static void test_syncs_per_step_rounds(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"replicate\",\"hot_keys\":50,\"syncs_per_step\":10}");
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "sync_rounds"), 2 * 30);
  CU_ASSERT(num(m, "replica_syncs") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  CU_ASSERT_EQUAL(num(m, "replica_max_diff"), 0);
  cJSON_Delete(m);
}

/* The first sync round by time comes one interval in, not at 0: on a run
 * shorter than a second, 1 round a second runs none (the same run as 0, not
 * one with a round of zero deltas at 0); at 100 a second each node runs one
 * round per 10 ms before its timers stop, at most time_s x 100. */
static void test_first_round_one_interval_in(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"replicate\",\"hot_keys\":50,\"sync\":\"owner\",\"syncs_per_sec\":1}");
  cJSON *one = run(&r);
  tiny(&r, "{\"type\":\"replicate\",\"hot_keys\":50,\"sync\":\"owner\",\"syncs_per_sec\":0}");
  cJSON *none = run(&r);
  tiny(&r, "{\"type\":\"replicate\",\"hot_keys\":50,\"sync\":\"owner\",\"syncs_per_sec\":100}");
  cJSON *many = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(one);
  CU_ASSERT_PTR_NOT_NULL_FATAL(none);
  CU_ASSERT_PTR_NOT_NULL_FATAL(many);
  CU_ASSERT(num(one, "time_s") < 1);
  CU_ASSERT_EQUAL(num(one, "replica_syncs"), 0);
  CU_ASSERT_TRUE(isnan(num(one, "sync_rounds")));
  CU_ASSERT_EQUAL(num(one, "messages"), num(none, "messages"));
  double rounds = num(many, "sync_rounds");
  CU_ASSERT(rounds > 0);
  CU_ASSERT(rounds <= 2 * floor(num(many, "time_s") * 100));
  cJSON_Delete(one);
  cJSON_Delete(none);
  cJSON_Delete(many);
}

static void test_relocate_conserves(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"relocate\",\"lookahead\":5}");
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(num(m, "relocations") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  cJSON_Delete(m);
}

/* PS-Lite's layout: 2 servers, 3 worker nodes. Only the worker nodes run
 * steps, every access travels (no server runs a worker), and every push is
 * held once by a server. The co-located layout of the same cluster size
 * runs more steps (5 worker nodes) and serves some locally. */
static void test_servers_and_worker_nodes(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"static\"}");
  r.cluster.nodes = 5;
  r.cluster.servers = 2;
  r.cluster.worker_nodes = 3;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "steps"), 3 * 2 * 300);
  CU_ASSERT_EQUAL(num(m, "local_ratio"), 0);
  CU_ASSERT(num(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  /* Both servers' load: every access was served by one of them, each took
   * simulated time, and every client saw them answer. */
  const cJSON *servers = cJSON_GetObjectItemCaseSensitive(m, "servers");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(servers), 2);
  double keys = 0, replies = 0, per_s = 0;
  for (const cJSON *s = servers->child; s; s = s->next) {
    keys += num(s, "keys");
    replies += num(s, "replies");
    CU_ASSERT(num(s, "busy_s") > 0 && num(s, "utilization") < 1);
    CU_ASSERT(num(s, "rt_p50_s") > 0 && num(s, "rt_p50_s") <= num(s, "rt_max_s"));
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(s, "keys_per_s");
    for (const cJSON *v = series->child; v; v = v->next) per_s += v->valuedouble;
  }
  CU_ASSERT_EQUAL(keys, num(m, "accesses"));
  CU_ASSERT(replies > 0);
  CU_ASSERT_DOUBLE_EQUAL(per_s * num(cJSON_GetArrayItem(servers, 0), "bucket_s"), keys, 1e-6 * keys);
  cJSON_Delete(m);
  r.cluster.servers = r.cluster.worker_nodes = 0;
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "steps"), 5 * 2 * 300);
  CU_ASSERT(num(m, "local_ratio") > 0);
  cJSON_Delete(m);
  /* A policy that puts keys at the workers' nodes is refused, naming it. */
  tiny(&r, "{\"type\":\"relocate\"}");
  r.cluster.nodes = 5;
  r.cluster.servers = 2;
  r.cluster.worker_nodes = 3;
  char err[1024] = "";
  m = in_child(sim_run_error_child, &r, err, sizeof err);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(m, "error");
  CU_ASSERT_TRUE_FATAL(cJSON_IsString(e));
  CU_ASSERT_PTR_NOT_NULL(strstr(e->valuestring, "cluster.servers: policy.type \"relocate\""));
  cJSON_Delete(m);
}

/* A wait bounded by timeout_s of simulated time: under BSP, node 1 at a
 * ten-thousandth of the speed takes 0.1 s a step, so the others wait at the
 * clock longer than a timeout_s of 0.01 s with no step done anywhere; the
 * run fails naming a waiting worker and what it waits for. With the default
 * timeout_s it runs to its end. */
static void test_wait_deadline(void) {
  static sim_straggler slow[1] = {{.node = 1, .speed_factor = 1e-4, .bandwidth_factor = 1}};
  run_spec r;
  tiny(&r, "{\"type\":\"static\"}");
  r.workload = "{\"type\":\"zipf\",\"keys\":2000,\"skew\":1.1,\"value_length\":8,"
               "\"reads_per_step\":10,\"writes_per_step\":10,\"steps_per_worker\":5,"
               "\"flops_per_step\":1e5}";
  r.consistency = "{\"model\":\"bsp\"}";
  r.cluster.stragglers = slow;
  r.cluster.n_stragglers = 1;
  r.cluster.timeout_s = 0.01;
  char err[1024] = "";
  cJSON *m = in_child(sim_run_error_child, &r, err, sizeof err);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(m, "error");
  CU_ASSERT_TRUE_FATAL(cJSON_IsString(e));
  CU_ASSERT_PTR_NOT_NULL(strstr(e->valuestring, "simulation stuck: no step done for timeout_s 0.01"));
  CU_ASSERT_PTR_NOT_NULL(strstr(e->valuestring, "worker 0."));
  CU_ASSERT_PTR_NOT_NULL(strstr(e->valuestring, "a WAIT on clocks or reads"));
  if (!strstr(e->valuestring, "simulation stuck")) fprintf(stderr, "\n  error: %s\n", e->valuestring);
  cJSON_Delete(m);
  r.cluster.timeout_s = SIM_TIMEOUT_DEFAULT;
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "steps"), 4 * 5);
  CU_ASSERT(num(m, "time_s") > 0.4); /* node 1's 5 steps of 0.1 s */
  cJSON_Delete(m);
}

/* Server 1 of 4's share of the keys served in [from, until): from the
 * servers metric's series. */
static double share_of(const cJSON *m, uint32_t server, double from, double until) {
  const cJSON *servers = cJSON_GetObjectItemCaseSensitive(m, "servers");
  double mine = 0, all = 0;
  for (const cJSON *s = servers ? servers->child : NULL; s; s = s->next) {
    double w = num(s, "bucket_s");
    size_t i = 0;
    for (const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "keys_per_s")->child; v;
         v = v->next, i++) {
      if (i * w < from || (i + 1) * w > until) continue;
      all += v->valuedouble;
      if (num(s, "node") == server) mine += v->valuedouble;
    }
  }
  return all > 0 ? mine / all : NAN;
}

/* PSLD in the simulator, deterministic: a dense synchronous model on 4
 * servers and 8 worker nodes, server 1 at an eighth of its speed in
 * [0.08 s, 0.2 s). psld moves its load away while it is slow (its share of
 * the keys served falls from a quarter to under a tenth late in the
 * window) and back once it recovers (a fifth or more again later), and the
 * run ends sooner than under static placement, whose shares never move.
 * Each key on one server at the end, every push held once. */
static void test_psld_moves_load_away_and_back(void) {
  static run_phase slow[1] = {{0.08, 0.2, 0.125, 1}};
  static sim_straggler straggler[1] = {{.node = 1, .speed_factor = 1, .bandwidth_factor = 1,
                                        .phases = slow, .n_phases = 1}};
  run_spec r;
  tiny(&r, "{\"type\":\"psld\",\"window_s\":0.01}");
  r.workload = "{\"type\":\"dnn\",\"layers\":[256,256,10],\"key_floats\":512,\"batch\":16,"
               "\"examples\":4096,\"epochs\":4,\"math\":\"none\"}";
  r.consistency = "{\"model\":\"bsp\"}";
  r.cluster.nodes = 12;
  r.cluster.servers = 4;
  r.cluster.worker_nodes = 8;
  r.cluster.workers_per_node = 1;
  r.cluster.cost.per_byte_s = 1e-9;
  r.cluster.stragglers = straggler;
  r.cluster.n_stragglers = 1;
  cJSON *m = run(&r);
  r.policy = "{\"type\":\"static\"}";
  cJSON *s = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  double before = share_of(m, 1, 0, 0.08), during = share_of(m, 1, 0.14, 0.2);
  double after = share_of(m, 1, 0.3, 0.4);
  CU_ASSERT(before > 0.2);
  CU_ASSERT(during < 0.1);
  CU_ASSERT(after > 0.2);
  CU_ASSERT(share_of(s, 1, 0.14, 0.2) > 0.2); /* static: nothing moves */
  CU_ASSERT(num(m, "relocations") > 0);
  CU_ASSERT_EQUAL(num(s, "relocations"), 0);
  CU_ASSERT(num(m, "time_s") < 0.95 * num(s, "time_s"));
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  double owned = 0;
  for (const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, "servers")->child; x; x = x->next)
    owned += num(x, "owned_keys");
  /* 256x256 + 256 and 256x10 + 10 floats in keys of at most 512: */
  CU_ASSERT_EQUAL(owned, 128 + 1 + 5 + 1);
  if (!(during < 0.1 && after > 0.2))
    fprintf(stderr, "\n  server 1's share: %.3f before, %.3f during, %.3f after\n", before,
            during, after);
  cJSON_Delete(m);
  cJSON_Delete(s);
}

static double owned_keys_of(const cJSON *m, uint32_t server) {
  for (const cJSON *x = cJSON_GetObjectItemCaseSensitive(m, "servers")->child; x; x = x->next)
    if (num(x, "node") == server) return num(x, "owned_keys");
  return NAN;
}

/* Scaling under psld: 2 of 4 servers serve at first; at 0.08 s all 4 do,
 * and psld moves keys to the two that joined; the run ends with every key
 * on exactly one server (the servers' counts sum to the keys) and the two
 * holding some. Scaled in again at 0.2 s, they hand every key back: they
 * end with none, and still every key is on exactly one server. */
static void test_scale_out_and_in(void) {
  static const ps_scale_step out[2] = {{0, 2}, {0.08, 4}};
  static const ps_scale_step out_in[3] = {{0, 2}, {0.08, 4}, {0.2, 2}};
  run_spec r;
  tiny(&r, "{\"type\":\"psld\",\"window_s\":0.01}");
  r.workload = "{\"type\":\"dnn\",\"layers\":[256,256,10],\"key_floats\":512,\"batch\":16,"
               "\"examples\":4096,\"epochs\":4,\"math\":\"none\"}";
  r.consistency = "{\"model\":\"bsp\"}";
  r.cluster.nodes = 12;
  r.cluster.servers = 4;
  r.cluster.worker_nodes = 8;
  r.cluster.workers_per_node = 1;
  r.cluster.cost.per_byte_s = 1e-9;
  r.cluster.scale = out;
  r.cluster.n_scale = 2;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  double total = 0;
  for (uint32_t s = 0; s < 4; s++) total += owned_keys_of(m, s);
  CU_ASSERT_EQUAL(total, 135);
  CU_ASSERT(owned_keys_of(m, 2) > 0 && owned_keys_of(m, 3) > 0);
  CU_ASSERT_EQUAL(share_of(m, 2, 0, 0.08) + share_of(m, 3, 0, 0.08), 0); /* not yet serving */
  CU_ASSERT(share_of(m, 2, 0.15, 0.3) > 0.1);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  cJSON_Delete(m);
  r.cluster.scale = out_in;
  r.cluster.n_scale = 3;
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  total = 0;
  for (uint32_t s = 0; s < 4; s++) total += owned_keys_of(m, s);
  CU_ASSERT_EQUAL(total, 135);
  CU_ASSERT_EQUAL(owned_keys_of(m, 2), 0);
  CU_ASSERT_EQUAL(owned_keys_of(m, 3), 0);
  CU_ASSERT(share_of(m, 2, 0.12, 0.2) > 0.1); /* it served while it could */
  CU_ASSERT_EQUAL(share_of(m, 3, 0.25, 0.35), 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  cJSON_Delete(m);
}

/* The progress reports of a run: a report at 0 once it is set up, before
 * its first step (the runner's estimate times the setup by it), then
 * fractions that grow to 1. */
static void record_progress(void *ctx, double sim_time_s, double fraction) {
  cJSON_AddItemToArray(ctx, cJSON_CreateDoubleArray((double[]){sim_time_s, fraction}, 2));
}

static char *sim_progress_child(void *ctx) {
  run_spec *r = ctx;
  cJSON *wl = cJSON_Parse(r->workload), *pol = cJSON_Parse(r->policy);
  cJSON *calls = cJSON_CreateArray();
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = r->seed},
                    .cluster = &r->cluster, .progress = record_progress, .progress_ctx = calls};
  char err[512];
  cJSON *m = sim_run(&a, err, sizeof err);
  cJSON *out = cJSON_CreateObject();
  cJSON_AddItemToObject(out, "calls", calls);
  char *text = m ? cJSON_PrintUnformatted(out) : NULL;
  cJSON_Delete(out);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return text;
}

static void test_progress_reports_the_setup_at_zero(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"static\"}");
  char err[1024] = "";
  cJSON *m = in_child(sim_progress_child, &r, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const cJSON *calls = cJSON_GetObjectItemCaseSensitive(m, "calls");
  CU_ASSERT_FATAL(cJSON_GetArraySize(calls) > 2);
  const cJSON *first = cJSON_GetArrayItem(calls, 0);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(first, 0)->valuedouble, 0);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(first, 1)->valuedouble, 0);
  double last = 0;
  for (const cJSON *c = first->next; c; c = c->next) {
    double f = cJSON_GetArrayItem(c, 1)->valuedouble;
    CU_ASSERT(f > last);
    last = f;
  }
  CU_ASSERT_EQUAL(last, 1);
  cJSON_Delete(m);
}

static void test_deterministic(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"relocate\",\"lookahead\":5}");
  cJSON *a = run(&r), *b = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  char *ta = cJSON_PrintUnformatted(a), *tb = cJSON_PrintUnformatted(b);
  CU_ASSERT_STRING_EQUAL(ta, tb);
  /* cJSON prints 17 significant digits only when needed: compare bits too. */
  CU_ASSERT_EQUAL(memcmp(&(double){num(a, "time_s")}, &(double){num(b, "time_s")},
                         sizeof(double)), 0);
  free(ta);
  free(tb);
  cJSON_Delete(a);
  cJSON_Delete(b);
}

/* The run ends though a replica sync round trip outlasts the sync period
 * (replicas synced through their owners every 200 us; preloc moves the hot
 * keys, so a SYNC travels through their homes): timers stop once every
 * worker is done, and the run drains what is in flight. While timers kept
 * running after the end a SYNC was always in flight and the run never went
 * quiet; the child's alarm bounds that. */
static char *sim_run_bounded_child(void *ctx) {
  alarm(60);
  return sim_run_child(ctx);
}

static void test_replica_syncs_end_with_the_workers(void) {
  for (uint64_t seed = 3; seed <= 5; seed += 2) {
    run_spec r = {.seed = seed};
    sim_cluster_default(&r.cluster);
    r.cluster.nodes = 5;
    r.cluster.workers_per_node = 1;
    r.cluster.host_speed = 1e9;
    r.cluster.bandwidth = 1.25e9;
    r.cluster.latency = 1e-4;
    r.workload = "{\"type\":\"zipf\",\"keys\":10,\"skew\":1.1,\"value_length\":12,"
                 "\"reads_per_step\":2,\"writes_per_step\":0,\"steps_per_worker\":1,"
                 "\"flops_per_step\":0,\"locality\":0.93,\"samples_per_step\":1}";
    r.policy = "{\"type\":\"replicate\",\"partition\":\"range\",\"hot_keys\":5,"
               "\"syncs_per_sec\":5000,\"sync\":\"owner\",\"sampling\":{\"scheme\":\"preloc\"}}";
    char err[1024] = "";
    cJSON *m = in_child(sim_run_bounded_child, &r, err, sizeof err);
    if (!m) fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(num(m, "steps"), 5);
    CU_ASSERT(num(m, "time_s") < 0.01); /* simulated: one step and the drain */
    cJSON_Delete(m);
  }
}

static void test_fast_local_access_saves_messages(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"static\",\"fast_local_access\":true}");
  cJSON *fast = run(&r);
  tiny(&r, "{\"type\":\"static\",\"fast_local_access\":false}");
  cJSON *slow = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(slow);
  CU_ASSERT(num(slow, "messages") > num(fast, "messages"));
  CU_ASSERT_EQUAL(num(slow, "local_ratio"), 0);
  CU_ASSERT(num(fast, "local_ratio") > 0);
  CU_ASSERT_EQUAL(num(slow, "value_sum"), num(slow, "pushed_floats"));
  cJSON_Delete(fast);
  cJSON_Delete(slow);
}

/*
 * A hand-computable run. 2 nodes, 1 worker each, one key (key 0, homed on
 * node 0 by range partition), each step reads it and writes nothing, no
 * flops, no local cost. Node 0's worker reads from memory and takes no
 * simulated time; node 1's worker makes S remote pulls, one after another,
 * alone on the network. A route crosses the source's up link and the
 * destination's down link (latency L each, bandwidth B), plus the backbone
 * (Lbb, Bbb) with that topology: route latency R = 2L (+ Lbb), bottleneck
 * W = B (or min(B, Bbb)). One pull:
 *   request  node 1 -> node 0: R + REQ/W, then node 0's server pays
 *            m + k + b*REQ;
 *   reply    node 0 -> node 1: R + REP/W, then node 1's server (which hands
 *            the values to the worker) pays m + k + b*REP;
 * with REQ = ps_msg_encoded_len(1, 0), REP = ps_msg_encoded_len(1, V) bytes
 * and m, k, b the per-message, per-key and per-byte costs. time_s = S x that;
 * the run sends 2S messages of S x (REQ + REP) bytes.
 */
typedef struct {
  double bandwidth, latency;
  sim_topology topology;
  double bb_bandwidth, bb_latency;
  int steps, len;
  const char *model; /* NULL: the default, CM02 */
} hand_spec;

static void hand_case(run_spec *r, const hand_spec *h) {
  static char workload[256];
  r->consistency = NULL;
  sim_cluster_default(&r->cluster);
  r->cluster.nodes = 2;
  r->cluster.workers_per_node = 1;
  r->cluster.bandwidth = h->bandwidth;
  r->cluster.latency = h->latency;
  r->cluster.topology = h->topology;
  r->cluster.backbone_bandwidth = h->bb_bandwidth;
  r->cluster.backbone_latency = h->bb_latency;
  if (h->model) snprintf(r->cluster.network_model, sizeof r->cluster.network_model, "%s", h->model);
  r->cluster.cost = (sim_cost){.per_message_s = 2e-6, .per_key_s = 1e-7, .per_byte_s = 1e-9};
  snprintf(workload, sizeof workload,
           "{\"type\":\"zipf\",\"keys\":1,\"value_length\":%d,\"reads_per_step\":1,"
           "\"writes_per_step\":0,\"steps_per_worker\":%d,\"locality\":0}",
           h->len, h->steps);
  r->workload = workload;
  r->policy = "{\"type\":\"static\",\"partition\":\"range\"}";
  r->seed = 1;
}

static void check_hand_case(const hand_spec *h) {
  run_spec r;
  hand_case(&r, h);
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const sim_cost *c = &r.cluster.cost;
  bool bb = h->topology == SIM_TOPOLOGY_BACKBONE;
  double route = 2 * h->latency + (bb ? h->bb_latency : 0);
  double width = bb ? fmin(h->bandwidth, h->bb_bandwidth) : h->bandwidth;
  double req = (double)ps_msg_encoded_len(1, 0);
  double rep = (double)ps_msg_encoded_len(1, (uint32_t)h->len);
  double pull = 2 * route + (req + rep) / width + 2 * (c->per_message_s + c->per_key_s) +
                c->per_byte_s * (req + rep);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), h->steps * pull, h->steps * pull * 1e-9);
  /* Node 1's worker ends its step k at k pulls (node 0's, local, sooner):
   * half the steps at S / 2 pulls, for an odd S midway between the middle
   * two steps' ends. */
  CU_ASSERT_DOUBLE_EQUAL(num(m, "half_time_s"), h->steps / 2.0 * pull,
                         h->steps * pull * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "last_step_s"), h->steps * pull, h->steps * pull * 1e-9);
  CU_ASSERT_EQUAL(num(m, "messages"), 2 * h->steps);
  CU_ASSERT_EQUAL(num(m, "bytes"), h->steps * (req + rep));
  CU_ASSERT_DOUBLE_EQUAL(num(m, "local_ratio"), 0.5, 0);
  /* CPU: the two handlings of each pull (no send, local or flop cost). */
  double cpu = h->steps * (2 * (c->per_message_s + c->per_key_s) + c->per_byte_s * (req + rep));
  CU_ASSERT_DOUBLE_EQUAL(num(m, "cpu_s"), cpu, cpu * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "cpu_per_message_s"), cpu / (2 * h->steps), cpu * 1e-9);
  cJSON_Delete(m);
}

static void test_time_matches_arithmetic(void) {
  /* 800 Mbps, 100 us: latency and bandwidth both matter. */
  check_hand_case(&(hand_spec){.bandwidth = 1e8, .latency = 1e-4, .steps = 100, .len = 1000});
  /* 10 Gbps over 5 ms links, 4 MB replies: TCP-gamma:0 means no window cap
   * (SimGrid's default 4 MiB window would hold this route to 210 MB/s). */
  check_hand_case(&(hand_spec){.bandwidth = 1.25e9, .latency = 5e-3, .steps = 5,
                               .len = 1000000});
  /* A backbone slower than the links is the bottleneck, and adds latency. */
  check_hand_case(&(hand_spec){.bandwidth = 1e9, .latency = 1e-5,
                               .topology = SIM_TOPOLOGY_BACKBONE, .bb_bandwidth = 2e8,
                               .bb_latency = 3e-4, .steps = 50, .len = 5000});
}

/* ------------------------------------------------------------ placement */

static void test_placement_xml_and_checks(void) {
  sim_cluster c;
  char err[256];
  small_cluster(&c, SIM_TOPOLOGY_STAR);
  c.nodes = 5;
  c.n_stragglers = 0;
  c.machines = (sim_machines){.count = 2, .cores = 3, .loopback_latency = 7e-6,
                              .loopback_bandwidth = 2e9};
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), 0);
  /* Blocks: nodes 0-2 on machine 0, 3-4 on machine 1. */
  CU_ASSERT_EQUAL(sim_node_machine(&c, 2), 0);
  CU_ASSERT_EQUAL(sim_node_machine(&c, 3), 1);
  char *x = platform_text(&c);
  CU_ASSERT_EQUAL(count(x, "<host "), 2);
  CU_ASSERT_EQUAL(count(x, "core=\"3\""), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(x, "<host id=\"machine-1\""));
  CU_ASSERT_EQUAL(count(x, "sharing_policy=\"SHARED\""), 2);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<link id=\"loopback-1\"", "latency"), 7e-6, 0);
  CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<link id=\"loopback-0\"", "bandwidth"), 2e9, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(x, "<route src=\"machine-1\" dst=\"machine-1\">"));
  free(x);
  /* A straggler slows its machine; two on one machine are refused. */
  sim_straggler two[] = {{.node = 3, .speed_factor = 0.5, .bandwidth_factor = 1},
                         {.node = 4, .speed_factor = 0.5, .bandwidth_factor = 1}};
  c.stragglers = two;
  c.n_stragglers = 1;
  CU_ASSERT_DOUBLE_EQUAL(sim_machine_speed(&c, 1), 1e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(sim_machine_speed(&c, 0), 2e9, 0);
  c.n_stragglers = 2;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "one straggler per machine"));
  c.n_stragglers = 0;
  /* Explicit places: in range, and every machine runs a node. */
  uint32_t place[5] = {1, 1, 1, 1, 1};
  c.machines.place = place;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "none on machine 0"));
  place[0] = 2;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "machines.place[0]"));
  place[0] = 0;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), 0);
  c.machines.place = NULL;
  c.machines.count = 6;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
  c.machines.count = 2;
  c.machines.cores = 0;
  CU_ASSERT_EQUAL(sim_cluster_check(&c, err, sizeof err), -1);
}

/* Compute only (no keys): S steps of F flops per worker, one worker per
 * node, at host speed H. */
static void compute_case(run_spec *r, uint32_t machines, uint32_t cores) {
  static const char *workload =
      "{\"type\":\"zipf\",\"keys\":10,\"value_length\":1,\"reads_per_step\":0,"
      "\"writes_per_step\":0,\"steps_per_worker\":40,\"flops_per_step\":5e6}";
  r->consistency = NULL;
  sim_cluster_default(&r->cluster);
  r->cluster.nodes = 2;
  r->cluster.host_speed = 1e9;
  r->cluster.machines = (sim_machines){.count = machines, .cores = cores,
                                       .loopback_bandwidth = 1e9};
  r->workload = workload;
  r->policy = "{\"type\":\"static\"}";
  r->seed = 1;
}

/* Two nodes on one one-core machine take twice the compute time of the same
 * nodes on two machines, or on one machine of two cores. */
static void test_placement_shares_cores(void) {
  const double alone = 40 * 5e6 / 1e9;
  run_spec r;
  compute_case(&r, 2, 1);
  cJSON *apart = run(&r);
  compute_case(&r, 1, 1);
  cJSON *shared = run(&r);
  compute_case(&r, 1, 2);
  cJSON *two_cores = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(apart);
  CU_ASSERT_PTR_NOT_NULL_FATAL(shared);
  CU_ASSERT_PTR_NOT_NULL_FATAL(two_cores);
  CU_ASSERT_DOUBLE_EQUAL(num(apart, "time_s"), alone, alone * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(shared, "time_s"), 2 * alone, alone * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(two_cores, "time_s"), alone, alone * 1e-9);
  /* CPU is the work, not the time it took: the flops at host_speed, the
   * same wherever they ran (no message: nothing else is charged). */
  CU_ASSERT_EQUAL(num(apart, "messages"), 0);
  CU_ASSERT_DOUBLE_EQUAL(num(apart, "cpu_s"), 2 * alone, alone * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(shared, "cpu_s"), 2 * alone, alone * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(two_cores, "cpu_s"), 2 * alone, alone * 1e-9);
  cJSON_Delete(apart);
  cJSON_Delete(shared);
  cJSON_Delete(two_cores);
}

/* One node of `workers` workers, each step a read of the node's one key and
 * C = 1e6 flops at 1 Gflop/s; a read costs L = local_per_key_s, and one
 * that finds the key last read by the other worker X more. */
static void shared_case(run_spec *r, uint32_t workers, double x) {
  static const char *workload =
      "{\"type\":\"zipf\",\"keys\":1,\"value_length\":16,\"reads_per_step\":1,"
      "\"writes_per_step\":0,\"steps_per_worker\":20,\"flops_per_step\":1e6}";
  r->consistency = NULL;
  sim_cluster_default(&r->cluster);
  r->cluster.nodes = 1;
  r->cluster.workers_per_node = workers;
  r->cluster.host_speed = 1e9;
  r->cluster.cost.local_per_key_s = 1e-5;
  r->cluster.cost.shared_per_key_s = x;
  r->cluster.cost.shared_per_byte_s = x / 1000;
  r->workload = workload;
  r->policy = "{\"type\":\"static\"}";
  r->seed = 1;
}

/* The shared access's cost, exactly: with one worker no read is shared and
 * the cost changes nothing; with two, each reads at its step's start, the
 * second after the first (it lags by X from its first read on), so every
 * read but the very first finds the other's: 2S - 1 shared reads, each X
 * plus 64 bytes at X / 1000. The lagging worker ends the run: S (C + L + X'). */
static void test_shared_access_cost(void) {
  const double c = 1e-3, l = 1e-5, x = 2e-4, shared = x + 64 * x / 1000;
  const int steps = 20;
  run_spec r;
  shared_case(&r, 1, x);
  cJSON *one = run(&r);
  shared_case(&r, 2, x);
  cJSON *two = run(&r);
  shared_case(&r, 2, 0);
  cJSON *free_two = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(one);
  CU_ASSERT_PTR_NOT_NULL_FATAL(two);
  CU_ASSERT_PTR_NOT_NULL_FATAL(free_two);
  double alone = steps * (c + l);
  CU_ASSERT_DOUBLE_EQUAL(num(one, "time_s"), alone, alone * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(free_two, "time_s"), alone, alone * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(two, "time_s"), steps * (c + l + shared), alone * 1e-9);
  double cpu = 2 * alone + (2 * steps - 1) * shared;
  CU_ASSERT_DOUBLE_EQUAL(num(two, "cpu_s"), cpu, cpu * 1e-9);
  CU_ASSERT_EQUAL(num(two, "shared_accesses"), 2 * steps - 1);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(one, "shared_accesses")); /* none */
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(free_two, "shared_accesses"));
  cJSON_Delete(one);
  cJSON_Delete(two);
  cJSON_Delete(free_two);
}

/* A worker's own work per step, exactly: one worker of S steps, each of C
 * compute and L for its one local read, pays S (C + L + T) with cost.step_s
 * T; two workers each pay their own steps, in time and in CPU. */
static void test_step_cost(void) {
  const double c = 1e-3, l = 1e-5, t = 3e-4;
  const int steps = 20;
  run_spec r;
  cJSON *m[2];
  for (uint32_t w = 1; w <= 2; w++) {
    shared_case(&r, w, 0);
    r.cluster.cost.step_s = t;
    m[w - 1] = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m[w - 1]);
  }
  double one = steps * (c + l + t);
  CU_ASSERT_DOUBLE_EQUAL(num(m[0], "time_s"), one, one * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m[0], "cpu_s"), one, one * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "time_s"), one, one * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "cpu_s"), 2 * one, one * 1e-9);
  cJSON_Delete(m[0]);
  cJSON_Delete(m[1]);
}

/* The thread that handles messages shares keys too: two nodes of one
 * worker, both reading node 0's one key (node 1's by message), so that no
 * two workers share a key and every shared access involves node 0's
 * handling thread. Each costs X: the CPU of a run at 2X less that at X is
 * X times the count, whichever side paid it. */
static void test_shared_access_handled(void) {
  const double x = 1e-7;
  run_spec r;
  cJSON *m[2];
  for (int i = 0; i < 2; i++) {
    shared_case(&r, 1, x * (i + 1));
    r.cluster.nodes = 2;
    r.cluster.cost.shared_per_byte_s = 0;
    r.cluster.cost.per_message_s = 2e-6;
    r.policy = "{\"type\":\"static\",\"partition\":\"range\"}";
    m[i] = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m[i]);
  }
  double count = num(m[0], "shared_accesses");
  CU_ASSERT(count > 0);
  CU_ASSERT_EQUAL(num(m[1], "shared_accesses"), count);
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "cpu_s") - num(m[0], "cpu_s"), x * count, x * 1e-6);
  cJSON_Delete(m[0]);
  cJSON_Delete(m[1]);
}

/* The hand case with both nodes on one machine: messages take its loopback
 * (latency Lb, bandwidth Bb, once per message), the server's costs are work
 * on the machine's core, which nothing else uses meanwhile. */
static void test_placement_loopback_arithmetic(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 50, .len = 1000};
  run_spec r;
  hand_case(&r, &h);
  r.cluster.machines = (sim_machines){.count = 1, .cores = 1, .loopback_latency = 3e-5,
                                      .loopback_bandwidth = 5e8};
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const sim_cost *c = &r.cluster.cost;
  double req = (double)ps_msg_encoded_len(1, 0);
  double rep = (double)ps_msg_encoded_len(1, (uint32_t)h.len);
  double pull = 2 * 3e-5 + (req + rep) / 5e8 + 2 * (c->per_message_s + c->per_key_s) +
                c->per_byte_s * (req + rep);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), h.steps * pull, h.steps * pull * 1e-9);
  CU_ASSERT_EQUAL(num(m, "messages"), 2 * h.steps);
  cJSON_Delete(m);
}

/* The sending cost: node 1's worker pays it after each request it sends;
 * when it is longer than a whole pull, it sets the pace: S x s. */
static void test_send_cost(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 30, .len = 1000};
  run_spec r;
  hand_case(&r, &h);
  r.cluster.cost.send_per_message_s = 2e-3;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), h.steps * 2e-3, h.steps * 2e-3 * 1e-9);
  /* CPU: the handlings, and the sending of every request and reply. */
  const sim_cost *c = &r.cluster.cost;
  double req = (double)ps_msg_encoded_len(1, 0), rep = (double)ps_msg_encoded_len(1, 1000);
  double cpu = h.steps * (2 * (c->per_message_s + c->per_key_s) + c->per_byte_s * (req + rep) +
                          2 * 2e-3);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "cpu_s"), cpu, cpu * 1e-9);
  cJSON_Delete(m);
}

/* ------------------------------------------------------------ node model */

/* Inbox order. Node 1's link runs at a thousandth of the bandwidth, so its
 * pulls of key 0 (homed on node 0) spend long on the wire; node 0's worker
 * pulls the same key from its own server over the loopback (no fast local
 * access). No handling costs. Node 0's server must take each local request
 * when it arrives, not after node 1's request sent before it: then every
 * local pull takes T0 = (REQ + REP) / loopback bandwidth and every remote
 * one T1 = 4L + (REQ + REP) / (B / 1000), and server 0's mean response time
 * is their mean. (Node 0's worker sends first, so even the first contacts,
 * which come in send order, do not wait.) */
static void test_inbox_arrival_order(void) {
  static sim_straggler slow[] = {{.node = 1, .speed_factor = 1, .bandwidth_factor = 1e-3}};
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 20, .len = 10};
  run_spec r;
  hand_case(&r, &h);
  r.cluster.cost = (sim_cost){0};
  r.cluster.stragglers = slow;
  r.cluster.n_stragglers = 1;
  r.policy = "{\"type\":\"static\",\"partition\":\"range\",\"fast_local_access\":false}";
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  double bytes = (double)(ps_msg_encoded_len(1, 0) + ps_msg_encoded_len(1, (uint32_t)h.len));
  double t0 = bytes / SIM_LOOPBACK_BANDWIDTH, t1 = 4 * h.latency + bytes / (h.bandwidth * 1e-3);
  const cJSON *server0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "servers"), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(server0);
  CU_ASSERT_EQUAL(num(server0, "replies"), 2 * h.steps);
  /* (Response times are kept to the nanosecond.) */
  CU_ASSERT_DOUBLE_EQUAL(num(server0, "rt_mean_s"), (t0 + t1) / 2, 2e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), h.steps * t1, h.steps * t1 * 1e-9);
  cJSON_Delete(m);
}

/* FIFO per pair: node 1's worker pushes a 400 kB value to node 0 and then
 * pulls a key from it, in the same step. Both share the route, so the small
 * pull would end first; the core refuses a message numbered past the next
 * one, so a run that handed them out of order would fail. */
static void test_inbox_fifo_per_pair(void) {
  static const char *workload =
      "{\"type\":\"zipf\",\"keys\":1,\"value_length\":100000,\"reads_per_step\":1,"
      "\"writes_per_step\":1,\"steps_per_worker\":10,\"locality\":0}";
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 10, .len = 1};
  run_spec r;
  hand_case(&r, &h);
  r.workload = workload;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(num(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  cJSON_Delete(m);
}

/* The wake-up cost w. One worker a node: every request and every reply
 * reaches an idle server, which pays w once before handling it: the hand
 * case's pull plus 2w, under CM02 and under latency_bandwidth. */
static void check_wakeup_lone_message(const char *model) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 30, .len = 100,
                       .model = model};
  run_spec r;
  hand_case(&r, &h);
  r.cluster.cost.wakeup_s = 3e-5;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const sim_cost *c = &r.cluster.cost;
  double req = (double)ps_msg_encoded_len(1, 0), rep = (double)ps_msg_encoded_len(1, 100);
  double pull = 4 * h.latency + (req + rep) / h.bandwidth + 2 * (c->per_message_s + c->per_key_s) +
                c->per_byte_s * (req + rep) + 2 * c->wakeup_s;
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), h.steps * pull, h.steps * pull * 1e-9);
  /* Node 1's worker does nothing but wait for its pulls; node 0's pulls
   * are local and never wait: the mean over the two, half. */
  CU_ASSERT_DOUBLE_EQUAL(num(m, "op_wait_s"), h.steps * pull / 2, h.steps * pull * 1e-9);
  cJSON_Delete(m);
}

static void test_wakeup_lone_message(void) {
  check_wakeup_lone_message(NULL);
  check_wakeup_lone_message(SIM_MODEL_LATENCY_BANDWIDTH);
}

/* A burst: node 1's k workers each pull key 0 at once, in one step. The k
 * requests share node 1's link and all arrive at t_a = 2L + k REQ / B;
 * server 0 wakes once (w) and handles them one after another (c each, the
 * replies leaving c apart, each alone on the wire); node 1's server wakes
 * for the first reply (w) and finds each later one waiting, as handling a
 * reply (c_r) takes longer than c: the last is done at
 *   t_a + w + c + 2L + REP / B + w + k c_r. */
static void test_wakeup_once_per_burst(void) {
  const uint32_t k = 4;
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 1, .len = 100};
  run_spec r;
  hand_case(&r, &h);
  r.cluster.workers_per_node = k;
  r.cluster.cost.per_message_s = 1e-4;
  r.cluster.cost.wakeup_s = 3e-5;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const sim_cost *c = &r.cluster.cost;
  double req = (double)ps_msg_encoded_len(1, 0), rep = (double)ps_msg_encoded_len(1, 100);
  double handle = c->per_message_s + c->per_key_s + c->per_byte_s * req;
  double handle_reply = c->per_message_s + c->per_key_s + c->per_byte_s * rep;
  double arrive = 2 * h.latency + k * req / h.bandwidth;
  double t = arrive + c->wakeup_s + handle + 2 * h.latency + rep / h.bandwidth + c->wakeup_s +
             k * handle_reply;
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), t, t * 1e-9);
  CU_ASSERT_EQUAL(num(m, "messages"), 2 * k);
  cJSON_Delete(m);
}

/* Real math's initial values: one node, one worker, matrix factorization
 * of batch 1 and rank 8, so every step pulls a row's and a column's key of 8
 * floats and adds their initial values: initial_per_float_s = x adds
 * 16 x a step (executed on the worker's core, in series with the rest);
 * evaluation's pulls are not a step's. Without real math nothing changes. */
static void test_initial_values_cost(void) {
  static const char *const workloads[] = {
      "{\"type\":\"mf\",\"rows\":20,\"cols\":20,\"nnz\":60,\"rank\":8,\"batch\":1,"
      "\"test_fraction\":0.2,\"math\":\"real\"}",
      "{\"type\":\"mf\",\"rows\":20,\"cols\":20,\"nnz\":60,\"rank\":8,\"batch\":1,"
      "\"test_fraction\":0.2,\"math\":\"none\"}"};
  const double x = 3e-6;
  for (int w = 0; w < 2; w++) {
    cJSON *m[2];
    for (int k = 0; k < 2; k++) {
      run_spec r;
      tiny(&r, "{\"type\":\"static\"}");
      r.workload = workloads[w];
      r.cluster.nodes = 1;
      r.cluster.workers_per_node = 1;
      r.cluster.cost.initial_per_float_s = k ? x : 0;
      m[k] = run(&r);
      CU_ASSERT_PTR_NOT_NULL_FATAL(m[k]);
    }
    double steps = num(m[0], "steps"), t0 = num(m[0], "time_s");
    CU_ASSERT(steps > 10);
    double want = w == 0 ? steps * 16 * x : 0;
    CU_ASSERT_DOUBLE_EQUAL(num(m[1], "time_s") - t0, want, t0 * 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(num(m[1], "cpu_s") - num(m[0], "cpu_s"), want, t0 * 1e-9);
    for (int k = 0; k < 2; k++) cJSON_Delete(m[k]);
  }
}

/* The I/O thread's cost i: node 0 serves, node 1's worker pulls key 0 and
 * computes, both nodes on one one-core machine (its loopback as good as
 * free). The core never idles, so a run takes its total work: i adds 4i a
 * step (2 messages, each worked on at both ends, both on this machine).
 * Without placement the I/O thread has a core of its own: no change. */
static void io_case(run_spec *r, bool placed, double io) {
  static const char *workload =
      "{\"type\":\"zipf\",\"keys\":1,\"value_length\":10,\"reads_per_step\":1,"
      "\"writes_per_step\":0,\"steps_per_worker\":20,\"locality\":0,\"flops_per_step\":2e5}";
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 20, .len = 10};
  hand_case(r, &h);
  r->workload = workload;
  r->cluster.host_speed = 1e9;
  r->cluster.servers = 1;
  r->cluster.worker_nodes = 1;
  r->cluster.cost.io_per_message_s = io;
  if (placed)
    r->cluster.machines = (sim_machines){.count = 1, .cores = 1, .loopback_bandwidth = 1e18};
}

static void test_io_thread_cost(void) {
  const double io = 7e-6;
  cJSON *m[4];
  for (int k = 0; k < 4; k++) {
    run_spec r;
    io_case(&r, k < 2, k % 2 ? io : 0);
    m[k] = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m[k]);
  }
  double base = num(m[0], "time_s");
  CU_ASSERT_EQUAL(num(m[1], "messages"), 40);
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "time_s") - base, 20 * 4 * io, base * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m[3], "time_s"), num(m[2], "time_s"), 0);
  /* The I/O actors' CPU is what they were charged: 40 messages, two ends. */
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "io_cpu_s"), 20 * 4 * io, io * 1e-9);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m[3], "io_cpu_s")); /* no I/O actor */
  for (int k = 0; k < 4; k++) cJSON_Delete(m[k]);
  /* The I/O thread's connection event (io_wakeup_s), once per peer a
   * batch serves: on the one shared core each node's I/O thread is still at
   * the request's work when the reply's comes (node 0 handles the request
   * and answers meanwhile; the reply reaches node 1 meanwhile), so each
   * sleeps once a step (2 wake-ups a step, each finding one message) but
   * serves its one peer in two batches a step, the second found on
   * finishing the first: 4 events a step, all of them on the one core. */
  const double wake = 11e-6;
  run_spec r;
  io_case(&r, true, 0);
  r.cluster.cost.io_wakeup_s = wake;
  r.cluster.machines.scheduler = SIM_SCHED_SHARED;
  cJSON *w = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  CU_ASSERT_DOUBLE_EQUAL(num(w, "time_s") - base, 20 * 4 * wake, base * 1e-9);
  CU_ASSERT_EQUAL(num(w, "messages_per_io_wakeup"), 1); /* 40 handled, 40 wake-ups */
  CU_ASSERT_DOUBLE_EQUAL(num(w, "io_cpu_s"), 20 * 4 * wake, wake * 1e-9);
  cJSON_Delete(w);
  /* The run queue: an I/O thread woken while the core is held waits its
   * turn and runs its batch whole, so its batches are what it finds then:
   * between 2 and 4 a step, each serving the one peer once. On the one core
   * every event lengthens the run by itself. */
  io_case(&r, true, 0);
  r.cluster.cost.io_wakeup_s = wake;
  w = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  double wakes = num(w, "io_cpu_s") / wake;
  CU_ASSERT_DOUBLE_EQUAL(wakes, round(wakes), 1e-6);
  CU_ASSERT(wakes >= 20 * 2 && wakes <= 20 * 4);
  CU_ASSERT_DOUBLE_EQUAL(num(w, "time_s") - base, num(w, "io_cpu_s"), base * 1e-9);
  /* Its turns on the core: each works off a batch or more; a woken I/O
   * thread waits for the worker's compute to give the core up. */
  CU_ASSERT(num(w, "io_turn_s") >= wake * (1 - 1e-9));
  CU_ASSERT(num(w, "io_run_wait_s") > 0);
  cJSON_Delete(w);
  /* Several peers: 4 nodes of 2 workers on one 2-core machine, every
   * access remote. A batch pays an event per peer it serves, so the events
   * are a whole number, more than the wake-ups (batches found awake and
   * batches serving several peers pay too) and at most one per message at
   * each end. */
  tiny(&r, "{\"type\":\"static\"}");
  r.cluster.nodes = 4;
  r.cluster.workers_per_node = 2;
  r.workload = "{\"type\":\"zipf\",\"keys\":2000,\"skew\":1.1,\"value_length\":8,"
               "\"reads_per_step\":10,\"writes_per_step\":10,\"steps_per_worker\":50,"
               "\"locality\":0,\"flops_per_step\":1e5}";
  r.cluster.machines = (sim_machines){.count = 1, .cores = 2, .loopback_bandwidth = 1e18};
  r.cluster.cost.io_wakeup_s = wake;
  w = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  double events = num(w, "io_cpu_s") / wake, messages = num(w, "messages");
  double io_wakeups = messages / num(w, "messages_per_io_wakeup");
  CU_ASSERT_DOUBLE_EQUAL(events, round(events), 1e-6 * events);
  CU_ASSERT(events > 1.05 * io_wakeups);
  CU_ASSERT(events <= 2 * messages);
  if (!(events > 1.05 * io_wakeups))
    fprintf(stderr, "\n  %.0f events, %.0f wake-ups, %.0f messages\n", events, io_wakeups, messages);
  cJSON_Delete(w);
}

/* The I/O send on the message's path too (cluster.machines.io_send
 * "on_path"). Each I/O pass hands its message on after the fraction h =
 * min(1, L / (2 P)) of its work (L the loopback latency, P a pass), and
 * the loopback link keeps L - 2 h P: with P 12 us, h is 1 for L 30 us (the
 * link 6 us) and 0.5 for L 12 us (the link 0). A batch found awake pays no
 * event then. On a machine with a core for every thread a lone message so
 * arrives when it did with the I/O beside its way, but for the events of
 * batches found awake (a whole number of 5 us, all the replies' with h 0.5,
 * whose request's read is still under way) and, with h 0.5, a reply's wait
 * for the rest of that read (as the real I/O thread ends its turn before it
 * takes the next command), at most 6 us a step. With 4 nodes of 2 workers
 * on 2 cores the I/O actors pass messages on in smaller batches than with
 * the read alone on the path, and pay fewer events; relocations, whose
 * messages now queue at the I/O actor, keep every push (FIFO per pair).
 * Refused without the read on the path. */
static void test_io_send_on_path(void) {
  const double latency[2] = {3e-5, 12e-6}, handoff[2] = {1, 0.5}, link[2] = {6e-6, 0};
  for (int l = 0; l < 2; l++) {
    cJSON *m[3];
    for (int k = 0; k < 3; k++) {
      run_spec r;
      io_case(&r, true, 7e-6);
      r.cluster.cost.io_wakeup_s = 5e-6;
      r.cluster.machines.loopback_latency = latency[l];
      r.cluster.machines.cores = 8;
      r.cluster.machines.io_read_on_path = k >= 1;
      r.cluster.machines.io_send_on_path = k == 2;
      if (k == 2) {
        CU_ASSERT_DOUBLE_EQUAL(sim_io_handoff(latency[l], 12e-6), handoff[l], 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(sim_io_wire_latency(latency[l], 12e-6), link[l], 1e-15);
        char *x = platform_text(&r.cluster);
        CU_ASSERT_DOUBLE_EQUAL(attribute(x, "<link id=\"loopback-0\"", "latency"), link[l], 1e-15);
        free(x);
      }
      m[k] = run(&r);
      CU_ASSERT_PTR_NOT_NULL_FATAL(m[k]);
    }
    double t0 = num(m[0], "time_s"), io0 = num(m[0], "io_cpu_s");
    CU_ASSERT_DOUBLE_EQUAL(num(m[1], "time_s"), t0, t0 * 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(num(m[1], "io_cpu_s"), io0, 1e-12);
    /* Both on the path: the batches found awake paid no event, a whole
     * number of them (more where a reply finds the read's rest under way). */
    double skipped = (io0 - num(m[2], "io_cpu_s")) / 5e-6;
    CU_ASSERT_DOUBLE_EQUAL(skipped, round(skipped), 1e-6);
    CU_ASSERT(skipped >= 0 && skipped <= 40);
    if (handoff[l] < 1) CU_ASSERT(skipped >= 20);
    /* A message arrives when it did beside, but for the events not paid
     * and, with h 0.5, a reply's wait for the rest of its request's read. */
    CU_ASSERT(num(m[2], "time_s") >= t0 - skipped * 5e-6 - t0 * 1e-9);
    CU_ASSERT(num(m[2], "time_s") <= t0 + 20 * (1 - handoff[l]) * 12e-6 + t0 * 1e-9);
    for (int k = 0; k < 3; k++) cJSON_Delete(m[k]);
  }
  cJSON *m[2];
  for (int k = 0; k < 2; k++) {
    run_spec r;
    tiny(&r, "{\"type\":\"relocate\",\"lookahead\":2}");
    r.cluster.cost.io_per_message_s = 7e-6;
    r.cluster.cost.io_wakeup_s = 5e-6;
    r.cluster.nodes = 4;
    r.cluster.workers_per_node = 2;
    r.workload = "{\"type\":\"zipf\",\"keys\":2000,\"skew\":1.1,\"value_length\":8,"
                 "\"reads_per_step\":10,\"writes_per_step\":10,\"steps_per_worker\":50,"
                 "\"locality\":0,\"flops_per_step\":1e5}";
    r.cluster.machines = (sim_machines){.count = 1, .cores = 2, .loopback_latency = 3e-5,
                                        .loopback_bandwidth = 1e18, .io_read_on_path = true,
                                        .io_send_on_path = k == 1};
    m[k] = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m[k]);
  }
  CU_ASSERT(num(m[1], "messages_per_io_wakeup") < 0.8 * num(m[0], "messages_per_io_wakeup"));
  CU_ASSERT(num(m[1], "io_cpu_s") < num(m[0], "io_cpu_s"));
  CU_ASSERT(num(m[1], "relocations") > 0);
  CU_ASSERT_EQUAL(num(m[1], "steps"), 4 * 2 * 50);
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "value_sum"), num(m[1], "pushed_floats"), 0);
  for (int k = 0; k < 2; k++) cJSON_Delete(m[k]);
  run_spec r;
  io_case(&r, true, 7e-6);
  r.cluster.machines.io_send_on_path = true;
  char err[512];
  CU_ASSERT_EQUAL(sim_cluster_check(&r.cluster, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster.machines.io_send"));
  r.cluster.machines.io_read_on_path = true;
  r.cluster.machines.loopback_latency = 1e-6; /* shorter than a read: both passes share it */
  CU_ASSERT_EQUAL(sim_cluster_check(&r.cluster, err, sizeof err), 0);
}

/* The I/O read on the message's path (cluster.machines.io_read "on_path").
 * The io case on a machine with a core for every thread: a message's read
 * starts as it arrives and ends one read later, and the loopback's latency
 * is one read shorter, so every message reaches its server when it did
 * with the read beside: the same run, to the arithmetic's rounding. With
 * 4 nodes of 2 workers on 2 cores, a message waits for its node's I/O
 * actor, busy with other peers' reads and sends or waiting for a core: the
 * response times and the workers' waits are longer. Under latency_bandwidth,
 * and with a latency shorter than a read, it is refused. */
static void test_io_read_on_path(void) {
  cJSON *m[4];
  for (int k = 0; k < 4; k++) {
    run_spec r;
    io_case(&r, true, 7e-6);
    r.cluster.cost.io_wakeup_s = 5e-6;
    r.cluster.machines.loopback_latency = 3e-5;
    r.cluster.machines.cores = 8;
    if (k >= 2) { /* 4 nodes of 2 workers, every access remote, 2 cores */
      r.cluster.servers = 0;
      r.cluster.worker_nodes = 0;
      r.cluster.nodes = 4;
      r.cluster.workers_per_node = 2;
      r.cluster.machines.cores = 2;
      r.workload = "{\"type\":\"zipf\",\"keys\":2000,\"skew\":1.1,\"value_length\":8,"
                   "\"reads_per_step\":10,\"writes_per_step\":10,\"steps_per_worker\":50,"
                   "\"locality\":0,\"flops_per_step\":1e5}";
    }
    r.cluster.machines.io_read_on_path = k % 2;
    m[k] = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m[k]);
  }
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "time_s"), num(m[0], "time_s"), num(m[0], "time_s") * 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(num(m[1], "io_cpu_s"), num(m[0], "io_cpu_s"), 1e-12);
  CU_ASSERT(num(m[3], "rt_p50_s") > 1.1 * num(m[2], "rt_p50_s"));
  CU_ASSERT(num(m[3], "op_wait_s") > 1.1 * num(m[2], "op_wait_s"));
  CU_ASSERT(num(m[3], "time_s") > num(m[2], "time_s"));
  for (int k = 0; k < 4; k++) cJSON_Delete(m[k]);
  run_spec r;
  io_case(&r, true, 7e-6);
  r.cluster.cost.io_wakeup_s = 5e-6;
  r.cluster.machines.io_read_on_path = true;
  char err[512];
  r.cluster.machines.loopback_latency = 1e-5;
  CU_ASSERT_EQUAL(sim_cluster_check(&r.cluster, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster.machines.io_read"));
  r.cluster.machines.loopback_latency = 3e-5;
  CU_ASSERT_EQUAL(sim_cluster_check(&r.cluster, err, sizeof err), 0);
  snprintf(r.cluster.network_model, sizeof r.cluster.network_model, "%s",
           SIM_MODEL_LATENCY_BANDWIDTH);
  CU_ASSERT_EQUAL(sim_cluster_check(&r.cluster, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "\"beside\""));
}

/* The run queue's reader. Node 1's worker pulls from node 0 and waits; with
 * both nodes on one machine of two cores, its reply is read by the worker
 * itself (it leads, as a real waiting worker does): one wake-up, its own,
 * and none more when its ticket is done. So a pull is the loopback case's
 * plus two wake-ups (node 0's server, node 1's worker), not three, and
 * every handled message woke its reader. */
static void test_run_queue_worker_reads_its_reply(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 50, .len = 1000};
  const double w = 2e-5;
  run_spec r;
  hand_case(&r, &h);
  r.cluster.machines = (sim_machines){.count = 1, .cores = 2, .loopback_latency = 3e-5,
                                      .loopback_bandwidth = 5e8};
  r.cluster.cost.wakeup_s = w;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const sim_cost *c = &r.cluster.cost;
  double req = (double)ps_msg_encoded_len(1, 0);
  double rep = (double)ps_msg_encoded_len(1, (uint32_t)h.len);
  double handle = 2 * (c->per_message_s + c->per_key_s) + c->per_byte_s * (req + rep);
  double pull = 2 * 3e-5 + (req + rep) / 5e8 + handle + 2 * w;
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), h.steps * pull, h.steps * pull * 1e-9);
  CU_ASSERT_EQUAL(num(m, "messages_per_wakeup"), 1);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "cpu_s"), h.steps * (handle + 2 * w), h.steps * w * 1e-9);
  cJSON_Delete(m);
}

/* In a child: SimGrid started, with the platform of `nodes` nodes (no
 * placement) loaded. False if the platform could not be written. */
static bool simgrid_with_nodes(uint32_t nodes) {
  sim_cluster c;
  sim_cluster_default(&c);
  c.nodes = nodes;
  char path[512], err[256];
  int argc = 2;
  char *argv[] = {"test_sim", "--log=root.thresh:critical", NULL};
  simgrid_init(&argc, argv);
  if (sim_platform_write_temp(&c, path, sizeof path, err, sizeof err) != 0) return false;
  simgrid_load_platform(path);
  unlink(path);
  return true;
}

/* Runs fn in a child (in_child) and asserts that it reported. */
static cJSON *child_report(char *(*fn)(void *ctx)) {
  char err[1024] = "";
  cJSON *r = in_child(fn, NULL, err, sizeof err);
  if (!r) fprintf(stderr, "%s\n", err);
  CU_ASSERT_PTR_NOT_NULL(r);
  return r;
}

/* The reader reads on (env.wake, sim/messages.c). A worker that waits and
 * reads its node's messages (the server works as its thread) is not woken
 * when another of its tickets completes (its last push's ack): it reads on
 * until the ticket it waits for is done, as real/leader.c's leading worker
 * does. A worker that does not read is woken to look, as a real waiter is.
 * Were the reader woken by the ack, whether it waited again before the
 * server chose the next message's reader would depend on the order in
 * which SimGrid runs actors ready at one instant. */
typedef struct {
  int reading_other, reading_own, idle_other;
} reads_on_result;

static void reads_on_actor(int argc, char **argv) {
  (void)argc;
  reads_on_result *out = (reads_on_result *)(uintptr_t)strtoull(argv[0], NULL, 16);
  harness_config hc;
  harness_config_default(&hc);
  hc.nodes = 1;
  harness *h = harness_new(&hc);
  if (!h) return;
  sim_node n = {.num_workers = 1};
  sim_worker w = {.node = &n, .done_cond = sg_cond_init()};
  n.workers = &w;
  w.rw.handle = harness_worker(h, 0, 0);
  ps_env env;
  sim_node_env(&n, &env);
  /* It reads as it waits for ticket 7 (not yet issued: not done); ticket 6
   * completes. Then its own is done (ticket 0: below the first issued). */
  n.server_busy = true;
  n.server_out.as = &w.out.thread;
  w.waiting = true;
  w.wait_ticket = 7;
  env.wake(env.ctx, 0, 6);
  out->reading_other = w.waiting ? 0 : 1;
  w.wait_ticket = 0;
  env.wake(env.ctx, 0, 0);
  out->reading_own = w.waiting ? 0 : 1;
  /* The server reads as its own thread: the waiter is woken to look. */
  n.server_out.as = NULL;
  w.waiting = true;
  w.wait_ticket = 7;
  env.wake(env.ctx, 0, 6);
  out->idle_other = w.waiting ? 0 : 1;
  sg_cond_destroy(w.done_cond);
  harness_free(h);
}

static char *reads_on_child(void *ctx) {
  (void)ctx;
  char arg[32];
  if (!simgrid_with_nodes(1)) return NULL;
  static reads_on_result r = {-1, -1, -1};
  snprintf(arg, sizeof arg, "%llx", (unsigned long long)(uintptr_t)&r);
  const char *args[] = {arg};
  sg_actor_create("reader", sg_host_by_name("node-0"), reads_on_actor, 1, (char **)args);
  simgrid_run();
  char *text = malloc(96);
  snprintf(text, 96, "{\"reading_other\":%d,\"reading_own\":%d,\"idle_other\":%d}",
           r.reading_other, r.reading_own, r.idle_other);
  return text;
}

static void test_run_queue_reader_reads_on(void) {
  cJSON *r = child_report(reads_on_child);
  if (!r) return;
  CU_ASSERT_EQUAL(num(r, "reading_other"), 0); /* reads on */
  CU_ASSERT_EQUAL(num(r, "reading_own"), 1);
  CU_ASSERT_EQUAL(num(r, "idle_other"), 1);
  cJSON_Delete(r);
}

/* The slice. Node 1's two workers pull from node 0 and compute 20 ms a
 * step, all on one core: a request waits for node 0's server to get the
 * core, which a computing worker gives up only when its slice is over. A
 * slice of 0.5 ms makes the operations' waits far shorter than one of 50
 * ms, and the compute is the same. */
static void test_run_queue_slice(void) {
  double wait[2], time[2];
  const double slices[2] = {0.5e-3, 50e-3};
  for (int k = 0; k < 2; k++) {
    run_spec r;
    io_case(&r, true, 0);
    r.cluster.workers_per_node = 2;
    r.workload = "{\"type\":\"zipf\",\"keys\":1,\"value_length\":10,\"reads_per_step\":1,"
                 "\"writes_per_step\":0,\"steps_per_worker\":10,\"locality\":0,"
                 "\"flops_per_step\":2e7}";
    r.cluster.machines.slice = slices[k];
    cJSON *m = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    wait[k] = num(m, "op_wait_s");
    time[k] = num(m, "time_s");
    cJSON_Delete(m);
  }
  CU_ASSERT_DOUBLE_EQUAL(time[0], time[1], time[1] * 1e-6);
  CU_ASSERT(wait[0] < wait[1] / 10);
}

/* The run queue's count of each thread's turns, run and waits (the
 * metrics worker_turn_s and worker_run_wait_s): one node of two workers on
 * a one-core machine, every access local and free, 8 steps of 0.3 ms of
 * compute each (2.4 ms a worker), a slice of 1 ms. A worker never blocks,
 * so it runs a slice a turn and then hands the core to the other, which
 * has waited that turn: w0 runs at once, then each waits 1 ms for each of
 * its next turns, until w0 ends 0.4 ms into its third and w1 has waited
 * that. 6 turns of 0.8 ms on average, 4.4 ms waited, the run 4.8 ms. With
 * the shared scheduler no run queue counts: no such metric. */
/* One key, 8 steps a worker of one read each, nothing costing CPU but
 * the compute, on one machine: the run queue's counting cases. */
static void one_key_case(run_spec *r, uint32_t nodes, uint32_t workers, const char *workload,
                         sim_machines machines) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 8, .len = 10};
  hand_case(r, &h);
  r->cluster.nodes = nodes;
  r->cluster.workers_per_node = workers;
  r->cluster.host_speed = 1e9;
  r->cluster.cost = (sim_cost){0};
  r->workload = workload;
  r->cluster.machines = machines;
}

static void test_run_queue_counts_turns(void) {
  for (int k = 0; k < 2; k++) {
    run_spec r;
    one_key_case(&r, 1, 2,
                 "{\"type\":\"zipf\",\"keys\":1,\"value_length\":10,\"reads_per_step\":1,"
                 "\"writes_per_step\":0,\"steps_per_worker\":8,\"locality\":1,"
                 "\"flops_per_step\":3e5}",
                 (sim_machines){.count = 1, .cores = 1, .loopback_bandwidth = 1e18,
                                .slice = 1e-3});
    if (k) r.cluster.machines.scheduler = SIM_SCHED_SHARED;
    cJSON *m = run(&r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    if (k) {
      CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "worker_turn_s"));
      CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "worker_run_wait_s"));
    } else {
      CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), 4.8e-3, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(num(m, "worker_turn_s"), 4.8e-3 / 6, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(num(m, "worker_run_wait_s"), 4.4e-3 / 6, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(num(m, "worker_blocked_s"), 0, 1e-15); /* never slept */
      CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "io_turn_s")); /* no I/O actor */
    }
    cJSON_Delete(m);
  }
}

/* The workers' sleeps: two nodes on a machine of two cores, a worker each
 * computing 0.1 ms a step, one key homed on node 0. Node 0's worker reads
 * it in place and never sleeps; node 1's sleeps a round trip over the
 * loopback link (twice 0.1 ms) for each of its 8 reads, nothing else
 * costing CPU: 1.6 ms, 0.8 ms the mean. */
static void test_run_queue_counts_sleeps(void) {
  run_spec r;
  one_key_case(&r, 2, 1,
               "{\"type\":\"zipf\",\"keys\":1,\"value_length\":10,\"reads_per_step\":1,"
               "\"writes_per_step\":0,\"steps_per_worker\":8,\"flops_per_step\":1e5}",
               (sim_machines){.count = 1, .cores = 2, .loopback_latency = 1e-4,
                              .loopback_bandwidth = 1e18, .slice = 1e-3});
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "time_s"), 2.4e-3, 1e-12); /* 8 x (0.2 + 0.1) ms */
  CU_ASSERT_DOUBLE_EQUAL(num(m, "worker_blocked_s"), 0.8e-3, 1e-12);
  cJSON_Delete(m);
}

/* The wait for a core (cost.wakeup_wait_s): the I/O case without I/O cost,
 * node 1 running `workers` workers that pull and compute, on one one-core
 * machine (or none). With one worker nothing executes while node 0's server
 * sleeps (the worker waits for its reply, and node 1's server has no more to
 * do), so no wake-up finds the core busy: nothing changes, to the bit. With
 * two, one computes while the other's request wakes node 0's server: the run
 * is longer, by at most a wait per wake-up. Without placement no machine is
 * ever busy. */
static void test_wakeup_waits_for_a_busy_core(void) {
  const double wait = 30e-6;
  double t[2][3];
  double wakeups = 0;
  for (int workers = 1; workers <= 2; workers++) {
    for (int k = 0; k < 3; k++) { /* placed, placed with the wait, unplaced with it */
      run_spec r;
      io_case(&r, k < 2, 0);
      r.cluster.workers_per_node = (uint32_t)workers;
      r.cluster.cost.wakeup_wait_s = k ? wait : 0;
      r.cluster.machines.scheduler = SIM_SCHED_SHARED;
      cJSON *m = run(&r);
      CU_ASSERT_PTR_NOT_NULL_FATAL(m);
      t[workers - 1][k] = num(m, "time_s");
      if (workers == 2 && k == 1) wakeups = num(m, "messages") / num(m, "messages_per_wakeup");
      cJSON_Delete(m);
    }
  }
  CU_ASSERT_DOUBLE_EQUAL(t[0][1], t[0][0], 0);
  CU_ASSERT(t[1][1] > t[1][0] + wait / 2);
  CU_ASSERT(t[1][1] <= t[1][0] + wakeups * wait * (1 + 1e-9));
  run_spec r;
  io_case(&r, false, 0);
  r.cluster.workers_per_node = 2;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_DOUBLE_EQUAL(t[1][2], num(m, "time_s"), 0);
  cJSON_Delete(m);
}

/* A wait that giving the core up interrupts. On one core of node-0, the
 * sleeper runs a millisecond, then waits for the notifier, whose millisecond
 * of work on node-1 ends at that very time; a third thread waits in the run
 * queue for the sleeper's core. Handing the core to it is a semaphore's
 * release, a simcall: the sleeper yields before it waits, and the notifier,
 * ready at the same time, runs meanwhile and notifies while nobody waits (a
 * notify that is lost). The sleeper must then not wait: it would sleep for
 * ever. */
typedef struct {
  sim_state run;
  sim_thread sleeper, queued;
  bool waiting, notified, done, stuck;
  sg_cond_t cond;
  sg_mutex_t mutex;
} handover_case;

static handover_case *handover;

static void handover_sleeper(int argc, char **argv) {
  (void)argc, (void)argv;
  handover_case *h = handover;
  sg_mutex_lock(h->mutex);
  sim_cpu_run(&h->run, &h->sleeper, 0, 1e-3);
  h->waiting = true;
  sim_cpu_block_wait(&h->run, &h->sleeper, &h->waiting, h->cond, h->mutex, INFINITY);
  h->done = true;
  sg_mutex_unlock(h->mutex);
}

static void handover_queued(int argc, char **argv) {
  (void)argc, (void)argv;
  handover_case *h = handover;
  sg_actor_sleep_for(0.5e-3);
  sim_cpu_run(&h->run, &h->queued, 0, 1e-3); /* waits for the sleeper's core */
  sim_cpu_block(&h->run, &h->queued);
}

static void handover_notifier(int argc, char **argv) {
  (void)argc, (void)argv;
  handover_case *h = handover;
  sg_actor_execute(sg_host_get_speed(sg_host_self()) * 1e-3); /* ends with the sleeper's */
  h->notified = h->waiting;
  if (h->waiting) {
    h->waiting = false;
    sg_cond_notify_one(h->cond);
  }
}

/* A second later, long after all that: is the sleeper still asleep? It is
 * woken then, so that the run ends. */
static void handover_watchdog(int argc, char **argv) {
  (void)argc, (void)argv;
  handover_case *h = handover;
  sg_actor_sleep_for(1);
  h->stuck = !h->done;
  sg_cond_notify_one(h->cond);
}

static char *handover_child(void *ctx) {
  (void)ctx;
  if (!simgrid_with_nodes(2)) return NULL;
  static handover_case h;
  static uint32_t executing;
  h.run.slice = 1;
  h.run.machine_cores = 1;
  h.run.executing = &executing;
  if (sim_cores_init(&h.run, 1) != 0) return NULL;
  h.cond = sg_cond_init();
  h.mutex = sg_mutex_init();
  handover = &h;
  sg_host_t host = sg_host_by_name("node-0");
  h.run.core_speed = sg_host_get_speed(host);
  sg_actor_create("sleeper", host, handover_sleeper, 0, NULL);
  sg_actor_create("queued", host, handover_queued, 0, NULL);
  sg_actor_create("notifier", sg_host_by_name("node-1"), handover_notifier, 0, NULL);
  sg_actor_create("watchdog", host, handover_watchdog, 0, NULL);
  simgrid_run();
  char *out = malloc(64);
  snprintf(out, 64, "{\"notified\":%d,\"stuck\":%d}", h.notified, h.stuck);
  return out;
}

static void test_run_queue_wait_after_a_yield(void) {
  cJSON *r = child_report(handover_child);
  if (!r) return;
  CU_ASSERT_EQUAL(num(r, "notified"), 1); /* before the sleeper waited */
  CU_ASSERT_EQUAL(num(r, "stuck"), 0);
  cJSON_Delete(r);
}

/* Wake-up preemption (cluster.machines.preempt), on one core, slice 10 ms.
 * A computes 5 ms from 0; B wakes at 1 ms for 0.1 ms; with `third`, C
 * comes at 0.5 ms for 2 ms. Without preemption B waits for A's end (B ends
 * at 5.1 ms). With it (wait 20 us, 30 us per thread per core past the
 * first), B takes A's core at 1.02 ms and ends at 1.12, and A, resumed,
 * ends at 5.1 ms, after two turns and 0.1 ms in the queue. With C: C takes
 * A's core at 0.52 ms (beside A alone: 20 us); B, beside C and the
 * preempted A (two threads for the core), waits 50 us and takes C's at
 * 1.05 ms, ends at 1.15; then A (0.52 ms run, C 0.53) resumes, ends at
 * 5.63 ms, and C at 7.1. */
typedef struct {
  sim_state run;
  sim_thread a, b, c;
  double a_end, b_end, c_end;
} preempt_case;

static preempt_case *preempting;
/* 0: none; 1: preemption; 2: preemption and C; 3: preemption as A's
 * execution ends (1.02 ms): A goes on only once B has run, and ends at
 * 1.12 ms as B does. */
static int preempt_variant;

/* One thread of the case: argv[0] names it (a, b or c). */
static void preempt_thread(int argc, char **argv) {
  (void)argc;
  preempt_case *h = preempting;
  char which = argv[0][0];
  sim_thread *t = which == 'a' ? &h->a : which == 'b' ? &h->b : &h->c;
  double *end = which == 'a' ? &h->a_end : which == 'b' ? &h->b_end : &h->c_end;
  double start = which == 'a' ? 0 : which == 'b' ? 1e-3 : 0.5e-3;
  double work = which == 'a' ? (preempt_variant == 3 ? 1.02e-3 : 5e-3)
                : which == 'b' ? 0.1e-3 : 2e-3;
  if (start > 0) sg_actor_sleep_for(start);
  sim_cpu_run(&h->run, t, 0, work);
  *end = simgrid_get_clock();
  sim_cpu_block(&h->run, t);
}

static char *preempt_child(void *ctx) {
  (void)ctx;
  if (!simgrid_with_nodes(1)) return NULL;
  static preempt_case h;
  static uint32_t executing;
  h.run.slice = 10e-3;
  h.run.machine_cores = 1;
  h.run.executing = &executing;
  h.run.preempt = preempt_variant > 0;
  h.run.preempt_wait_s = 20e-6;
  h.run.preempt_per_thread_s = 30e-6;
  if (sim_cores_init(&h.run, 1) != 0) return NULL;
  preempting = &h;
  sg_host_t host = sg_host_by_name("node-0");
  h.run.core_speed = sg_host_get_speed(host);
  const char *names[] = {"a", "b", "c"};
  for (int i = 0; i < (preempt_variant == 2 ? 3 : 2); i++) {
    char *argv[] = {(char *)names[i], NULL};
    sg_actor_create(names[i], host, preempt_thread, 1, argv);
  }
  simgrid_run();
  char *out = malloc(256);
  snprintf(out, 256, "{\"a\":%.17g,\"b\":%.17g,\"c\":%.17g,\"a_turns\":%g,\"a_wait\":%.17g,"
           "\"b_wait\":%.17g}", h.a_end, h.b_end, h.c_end, h.a.turns, h.a.wait_s, h.b.wait_s);
  return out;
}

static void test_run_queue_preempts_for_a_woken_thread(void) {
  const double expect[4][3] = {
      {5e-3, 5.1e-3, 0}, {5.1e-3, 1.12e-3, 0}, {5.63e-3, 1.15e-3, 7.1e-3}, {1.12e-3, 1.12e-3, 0}};
  for (preempt_variant = 0; preempt_variant < 4; preempt_variant++) {
    cJSON *r = child_report(preempt_child);
    if (!r) return;
    const double *e = expect[preempt_variant];
    CU_ASSERT_DOUBLE_EQUAL(num(r, "a"), e[0], 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(r, "b"), e[1], 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(num(r, "c"), e[2], 1e-12);
    if (preempt_variant == 1) {
      CU_ASSERT_EQUAL(num(r, "a_turns"), 2);
      CU_ASSERT_DOUBLE_EQUAL(num(r, "a_wait"), 0.1e-3, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(num(r, "b_wait"), 20e-6, 1e-12);
    }
    cJSON_Delete(r);
  }
}

/* ----------------------------------------------------------- stragglers */

/* The compute case (2 nodes x 40 steps of 5 Mflop at 1 Gf: 0.2 s, epochs of
 * 10 steps, 50 ms each) with node 1 a straggler: `phases` (n of them), or
 * for the whole run (whole > 0: its speed factor), or none. */
static cJSON *compute_with(const run_phase *phases, size_t n, double whole) {
  static const char *workload =
      "{\"type\":\"zipf\",\"keys\":10,\"value_length\":1,\"reads_per_step\":0,"
      "\"writes_per_step\":0,\"steps_per_worker\":40,\"epochs\":4,\"flops_per_step\":5e6}";
  run_spec r;
  compute_case(&r, 0, 0);
  r.workload = workload;
  sim_straggler slow = {.node = 1, .speed_factor = whole > 0 ? whole : 1,
                        .bandwidth_factor = 1, .phases = phases, .n_phases = n};
  r.cluster.stragglers = &slow;
  r.cluster.n_stragglers = n || whole > 0;
  return run(&r);
}

static double epoch(const cJSON *m, int i) {
  const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "epoch_time_s"), i);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A node slowed to half speed in [50 ms, 100 ms) only: the run is slower
 * than with no straggler and faster than with the node slowed throughout;
 * the epoch that falls in the window takes longer (in 50 ms it does 25 ms
 * of work, then 25 ms more at full speed), the others do not. All of it in
 * simulated time, to the arithmetic. */
static void test_straggler_phase_slows_its_window(void) {
  const run_phase window = {.from_s = 0.05, .until_s = 0.1, .speed_factor = 0.5,
                            .bandwidth_factor = 1};
  const run_phase always = {.from_s = 0, .until_s = INFINITY, .speed_factor = 0.5,
                            .bandwidth_factor = 1};
  cJSON *none = compute_with(NULL, 0, 0), *in = compute_with(&window, 1, 0);
  cJSON *again = compute_with(&window, 1, 0), *all = compute_with(&always, 1, 0);
  cJSON *whole = compute_with(NULL, 0, 0.5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(none);
  CU_ASSERT_PTR_NOT_NULL_FATAL(in);
  CU_ASSERT_PTR_NOT_NULL_FATAL(again);
  CU_ASSERT_PTR_NOT_NULL_FATAL(all);
  CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
  CU_ASSERT_DOUBLE_EQUAL(num(none, "time_s"), 0.2, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(num(in, "time_s"), 0.225, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(num(all, "time_s"), 0.4, 1e-12);
  CU_ASSERT(num(none, "time_s") < num(in, "time_s") && num(in, "time_s") < num(all, "time_s"));
  CU_ASSERT_DOUBLE_EQUAL(epoch(in, 0), 0.05, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(epoch(in, 1), 0.075, 1e-12); /* the window's */
  CU_ASSERT_DOUBLE_EQUAL(epoch(in, 2), 0.05, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(epoch(in, 3), 0.05, 1e-12);
  /* A phase over the whole run is the whole-run straggler, bit for bit. */
  CU_ASSERT_EQUAL(memcmp(&(double){num(all, "time_s")}, &(double){num(whole, "time_s")},
                         sizeof(double)), 0);
  /* Deterministic. */
  CU_ASSERT_EQUAL(memcmp(&(double){num(in, "time_s")}, &(double){num(again, "time_s")},
                         sizeof(double)), 0);
  cJSON_Delete(none);
  cJSON_Delete(in);
  cJSON_Delete(again);
  cJSON_Delete(all);
  cJSON_Delete(whole);
}

/* The hand case with node 0 (the server of every pull) a straggler from
 * the start: a speed phase stretches its server's handling of each request
 * (cost / f, so f = 0.5 adds the cost once more), where a whole-run
 * straggler slows only its host's flops (its server's costs are a sleep of
 * a core of its own); a bandwidth phase halves its link both ways, as a
 * whole-run bandwidth factor does. */
static void test_straggler_phase_server_and_link(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 40, .len = 1000};
  const run_phase speed = {.from_s = 0, .until_s = INFINITY, .speed_factor = 0.5,
                           .bandwidth_factor = 1};
  const run_phase link = {.from_s = 0, .until_s = INFINITY, .speed_factor = 1,
                          .bandwidth_factor = 0.5};
  run_spec r;
  hand_case(&r, &h);
  const sim_cost c = r.cluster.cost;
  double req = (double)ps_msg_encoded_len(1, 0);
  double rep = (double)ps_msg_encoded_len(1, (uint32_t)h.len);
  double pull = 4 * h.latency + (req + rep) / h.bandwidth +
                2 * (c.per_message_s + c.per_key_s) + c.per_byte_s * (req + rep);
  double handling = c.per_message_s + c.per_key_s + c.per_byte_s * req;
  sim_straggler slow = {.node = 0, .speed_factor = 1, .bandwidth_factor = 1};
  r.cluster.stragglers = &slow;
  r.cluster.n_stragglers = 1;
  slow.phases = &speed;
  slow.n_phases = 1;
  cJSON *server = run(&r);
  slow.phases = &link;
  cJSON *phased_link = run(&r);
  slow = (sim_straggler){.node = 0, .speed_factor = 0.5, .bandwidth_factor = 1};
  cJSON *whole_speed = run(&r);
  slow = (sim_straggler){.node = 0, .speed_factor = 1, .bandwidth_factor = 0.5};
  cJSON *whole_link = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(server);
  CU_ASSERT_PTR_NOT_NULL_FATAL(phased_link);
  CU_ASSERT_PTR_NOT_NULL_FATAL(whole_speed);
  CU_ASSERT_PTR_NOT_NULL_FATAL(whole_link);
  double t = h.steps * (pull + handling);
  CU_ASSERT_DOUBLE_EQUAL(num(server, "time_s"), t, t * 1e-9);
  t = h.steps * pull;
  CU_ASSERT_DOUBLE_EQUAL(num(whole_speed, "time_s"), t, t * 1e-9);
  t = h.steps * (pull + (req + rep) / h.bandwidth);
  CU_ASSERT_DOUBLE_EQUAL(num(phased_link, "time_s"), t, t * 1e-9);
  CU_ASSERT_EQUAL(memcmp(&(double){num(phased_link, "time_s")},
                         &(double){num(whole_link, "time_s")}, sizeof(double)), 0);
  cJSON_Delete(server);
  cJSON_Delete(phased_link);
  cJSON_Delete(whole_speed);
  cJSON_Delete(whole_link);
}

/* A bandwidth phase in the middle of the hand case: slower than none,
 * faster than throughout; a straggler's host has a pstate per phase. */
/* latency_bandwidth: a lone message takes latency + size / bandwidth of its
 * route, as under CM02, so the hand-computed runs come out the same. */
static void test_latency_bandwidth_arithmetic(void) {
  const char *lb = SIM_MODEL_LATENCY_BANDWIDTH;
  check_hand_case(&(hand_spec){.bandwidth = 1e8, .latency = 1e-4, .steps = 100, .len = 1000,
                               .model = lb});
  check_hand_case(&(hand_spec){.bandwidth = 1.25e9, .latency = 5e-3, .steps = 5,
                               .len = 1000000, .model = lb});
  check_hand_case(&(hand_spec){.bandwidth = 1e9, .latency = 1e-5,
                               .topology = SIM_TOPOLOGY_BACKBONE, .bb_bandwidth = 2e8,
                               .bb_latency = 3e-4, .steps = 50, .len = 5000, .model = lb});
}

/* latency_bandwidth: messages to one node take turns on its link, as CM02
 * shares it. Four nodes push a value of S bytes to node 0 at the same
 * moment: the last arrives at L + 4 S / B (CM02: all four then, sharing the
 * link), not at L + S / B as when only senders queued. */
static void test_latency_bandwidth_incast(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 1, .len = 100000};
  run_spec r;
  hand_case(&r, &h);
  r.cluster.nodes = 5;
  static char workload[256];
  snprintf(workload, sizeof workload,
           "{\"type\":\"zipf\",\"keys\":1,\"value_length\":%d,\"reads_per_step\":0,"
           "\"writes_per_step\":1,\"steps_per_worker\":1,\"locality\":0}",
           h.len);
  r.workload = workload;
  cJSON *cm02 = run(&r);
  strcpy(r.cluster.network_model, SIM_MODEL_LATENCY_BANDWIDTH);
  cJSON *lb = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cm02);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lb);
  const sim_cost *c = &r.cluster.cost;
  double route = 2 * h.latency, bw = h.bandwidth;
  double push = (double)ps_msg_encoded_len(1, (uint32_t)h.len);
  double ack = (double)ps_msg_encoded_len(1, 0);
  double handle = c->per_message_s + c->per_key_s + c->per_byte_s * push; /* < push / bw */
  double acked = ack / bw + c->per_message_s + c->per_key_s + c->per_byte_s * ack;
  double t = 2 * route + 4 * push / bw + handle + acked;
  CU_ASSERT_EQUAL(num(lb, "messages"), 8);
  CU_ASSERT_DOUBLE_EQUAL(num(lb, "time_s"), t, t * 1e-9);
  /* CM02 finishes the four together, so the server handles them one after
   * another: 3 handlings more. */
  t = 2 * route + 4 * push / bw + 4 * handle + acked;
  CU_ASSERT_DOUBLE_EQUAL(num(cm02, "time_s"), t, t * 1e-6);
  cJSON_Delete(cm02);
  cJSON_Delete(lb);
}

/* latency_bandwidth under load: relocation keeps every push (the core needs
 * per-pair FIFO, which the model keeps), and a run is the same every time. */
static void test_latency_bandwidth_conserves_and_repeats(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"relocate\",\"lookahead\":5}");
  strcpy(r.cluster.network_model, SIM_MODEL_LATENCY_BANDWIDTH);
  cJSON *a = run(&r), *b = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT(num(a, "relocations") > 0);
  CU_ASSERT_EQUAL(num(a, "value_sum"), num(a, "pushed_floats"));
  char *ta = cJSON_PrintUnformatted(a), *tb = cJSON_PrintUnformatted(b);
  CU_ASSERT_STRING_EQUAL(ta, tb);
  CU_ASSERT_EQUAL(memcmp(&(double){num(a, "time_s")}, &(double){num(b, "time_s")},
                         sizeof(double)), 0);
  free(ta);
  free(tb);
  cJSON_Delete(a);
  cJSON_Delete(b);
  /* Without fast local access a node also sends to itself (its loopback). */
  tiny(&r, "{\"type\":\"static\",\"fast_local_access\":false}");
  strcpy(r.cluster.network_model, SIM_MODEL_LATENCY_BANDWIDTH);
  a = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_EQUAL(num(a, "value_sum"), num(a, "pushed_floats"));
  cJSON_Delete(a);
}

/* latency_bandwidth: a straggler's slower link slows the messages sent
 * while it is slow. */
static void test_latency_bandwidth_straggler_link(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 40, .len = 1000,
                       .model = SIM_MODEL_LATENCY_BANDWIDTH};
  run_phase phase = {.from_s = 0.002, .until_s = 0.004, .speed_factor = 1,
                     .bandwidth_factor = 0.25};
  run_spec r;
  hand_case(&r, &h);
  cJSON *none = run(&r);
  sim_straggler slow = {.node = 0, .speed_factor = 1, .bandwidth_factor = 1,
                        .phases = &phase, .n_phases = 1};
  r.cluster.stragglers = &slow;
  r.cluster.n_stragglers = 1;
  cJSON *window = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(none);
  CU_ASSERT_PTR_NOT_NULL_FATAL(window);
  CU_ASSERT(num(none, "time_s") < num(window, "time_s"));
  cJSON_Delete(none);
  cJSON_Delete(window);
}

static void test_straggler_bandwidth_window(void) {
  const hand_spec h = {.bandwidth = 1e8, .latency = 1e-4, .steps = 40, .len = 1000};
  run_phase phases[2] = {{.from_s = 0.002, .until_s = 0.004, .speed_factor = 1,
                          .bandwidth_factor = 0.25},
                         {.from_s = 0.004, .until_s = 0.006, .speed_factor = 0.5,
                          .bandwidth_factor = 1}};
  run_spec r;
  hand_case(&r, &h);
  cJSON *none = run(&r);
  sim_straggler slow = {.node = 0, .speed_factor = 1, .bandwidth_factor = 1,
                        .phases = phases, .n_phases = 1};
  r.cluster.stragglers = &slow;
  r.cluster.n_stragglers = 1;
  cJSON *window = run(&r);
  phases[0].from_s = 0;
  phases[0].until_s = INFINITY;
  cJSON *always = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(none);
  CU_ASSERT_PTR_NOT_NULL_FATAL(window);
  CU_ASSERT_PTR_NOT_NULL_FATAL(always);
  CU_ASSERT(num(none, "time_s") < num(window, "time_s"));
  CU_ASSERT(num(window, "time_s") < num(always, "time_s"));
  cJSON_Delete(none);
  cJSON_Delete(window);
  cJSON_Delete(always);
  /* Two phases back to back: two pstates besides the host's own. */
  phases[0] = (run_phase){0.002, 0.004, 1, 0.25};
  slow.n_phases = 2;
  char *x = platform_text(&r.cluster);
  CU_ASSERT_PTR_NOT_NULL(strstr(x, "speed=\"10000000000f,10000000000f,5000000000f\""));
  free(x);
}

/* The user's own platform: our XML in a file, nodes mapped to hosts in
 * reverse; and LV08. Both must run and conserve. */
static void test_platform_file_and_lv08(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"static\"}");
  char path[512], err[256];
  CU_ASSERT_EQUAL_FATAL(sim_platform_write_temp(&r.cluster, path, sizeof path, err, sizeof err), 0);
  static const char *const hosts[] = {"node-1", "node-0"};
  r.cluster.platform_file = path;
  r.cluster.hosts = hosts;
  r.cluster.n_hosts = 2;
  cJSON *m = run(&r);
  unlink(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  cJSON_Delete(m);
  tiny(&r, "{\"type\":\"static\"}");
  strcpy(r.cluster.network_model, "LV08");
  m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
  cJSON_Delete(m);
}

static char *bad_policy_child(void *ctx) {
  run_spec *r = ctx;
  cJSON *wl = cJSON_Parse(r->workload), *pol = cJSON_Parse(r->policy);
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = 1}, .cluster = &r->cluster};
  char err[512] = "";
  cJSON *m = sim_run(&a, err, sizeof err);
  cJSON *out = cJSON_CreateObject();
  cJSON_AddBoolToObject(out, "failed", m == NULL);
  cJSON_AddStringToObject(out, "err", err);
  char *text = cJSON_PrintUnformatted(out);
  cJSON_Delete(out);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return text;
}

static void test_bad_spec_is_an_error(void) {
  run_spec r;
  tiny(&r, "{\"type\":\"no-such-policy\"}");
  char err[1024] = "";
  cJSON *out = in_child(bad_policy_child, &r, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "failed")));
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(out, "err");
  CU_ASSERT(cJSON_IsString(msg) && strstr(msg->valuestring, "policy.type"));
  cJSON_Delete(out);
}

/* Staleness in the reader's own steps, on a spec small enough to count by
 * hand. Two nodes of one worker replay a trace: worker 0 reads and writes
 * key 2 (node 1's, range partitioning), worker 1 key 0 (node 0's), both
 * replicated everywhere, synced by all-reduce after every step of each node.
 * A step costs 1 ms on node 0 and 10/3 ms on node 1 (a straggler at 0.3).
 * Node 0's read of step i (at i ms) sees node 1's newest DELTA, made at
 * 10j/3 ms with 10j/3 + 0.05 ms <= i ms (latency 50 us), none before 4 ms
 * (then from the run's start): it is i - ceil(10j/3) + 1 of node 0's steps
 * stale (i before 4 ms). Node 1's reads see node 0's DELTA of the last ms: 1
 * step stale (its step 0: 0), until node 0 says it is done (after its 40
 * steps, with nothing left to send: an empty last DELTA): 0 from then on.
 * Counted as the reader's clock minus the sender's, node 0's reads would
 * grow to 39 - 11 = 28; without node 0's last word, node 1's would grow to
 * 27 steps (and 90 ms). */
static void test_staleness_steps_by_hand_on_a_spec(void) {
  static sim_straggler slow = {.node = 1, .speed_factor = 0.3, .bandwidth_factor = 1};
  char *dir = unit_temp_dir();
  unit_write(dir, "t.txt", "pslab-trace 1\ntable 0 4 1\nworkers 2\nnodes 2\n"
                           "0 0 read 2\n0 0 write 2\n1 0 read 0\n1 0 write 0\n");
  char file[4200];
  snprintf(file, sizeof file,
           "{\"type\":\"trace\",\"file\":\"%s/t.txt\",\"steps_per_worker\":40,"
           "\"fill\":\"repeat\",\"flops_per_step\":1e7}", dir);
  run_spec r;
  tiny(&r, "{\"type\":\"replicate\",\"partition\":\"range\",\"hot_keys\":4,"
           "\"syncs_per_step\":1}");
  r.workload = file;
  r.cluster.workers_per_node = 1;
  r.cluster.stragglers = &slow;
  r.cluster.n_stragglers = 1;
  cJSON *m = run(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  uint64_t sum = 0, max = 0;
  for (int i = 0; i < 40; i++) { /* node 0's reads */
    uint64_t j = i >= 4 ? (uint64_t)((i - 0.05) * 0.3) : 0;
    uint64_t st = i >= 4 ? (uint64_t)i - (10 * j + 2) / 3 + 1 : (uint64_t)i;
    sum += st;
    if (st > max) max = st;
  }
  for (int i = 1; i < 40; i++) sum += i * 10.0 / 3 < 40.05; /* node 1's */
  CU_ASSERT_EQUAL(sum, 93 + 12);
  CU_ASSERT_EQUAL(num(m, "staleness_mean_steps"), (double)sum / 80);
  CU_ASSERT_EQUAL(num(m, "staleness_max_steps"), (double)max);
  cJSON_Delete(m);
  unit_remove_tree(dir);
  free(dir);
}

/* --------------------------------------------------- saved parameters */

typedef struct {
  run_spec r;
  const char *dir; /* base_dir and params_dir */
} saving_spec;

static char *sim_run_saving_child(void *ctx) {
  saving_spec *sv = ctx;
  cJSON *wl = cJSON_Parse(sv->r.workload), *pol = cJSON_Parse(sv->r.policy);
  sim_run_args a = {.run = {.workload = wl, .policy = pol, .seed = sv->r.seed,
                            .base_dir = sv->dir, .params_dir = sv->dir},
                    .cluster = &sv->r.cluster};
  char err[512];
  cJSON *m = sim_run(&a, err, sizeof err);
  char *text = m ? cJSON_PrintUnformatted(m) : NULL;
  if (!m) fprintf(stderr, "sim_run: %s\n", err);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return text;
}

static cJSON *run_saving(saving_spec *sv) {
  char err[1024] = "";
  cJSON *m = in_child(sim_run_saving_child, sv, err, sizeof err);
  if (!m) fprintf(stderr, "%s\n", err);
  return m;
}

static wl_params load_params(const char *dir) {
  char path[4096], err[512];
  snprintf(path, sizeof path, "%s/params.bin", dir);
  wl_params p;
  if (wl_params_load(path, &p, err, sizeof err) != 0) fprintf(stderr, "%s\n", err);
  return p;
}

/* Pushes of +1.0 (math "none") through replicas on 3 nodes: the saved table
 * has every key of the layout, no part is left, and its floats sum to every
 * float pushed (each counted once, from its owner). */
static void test_saved_params_hold_every_push(void) {
  saving_spec sv = {.dir = unit_temp_dir()};
  tiny(&sv.r, "{\"type\":\"replicate\",\"hot_keys\":50,\"syncs_per_sec\":2000}");
  sv.r.cluster.nodes = 3;
  cJSON *m = run_saving(&sv);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  wl_params p = load_params(sv.dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p.values);
  CU_ASSERT_EQUAL(p.num_tables, 1);
  CU_ASSERT_EQUAL(p.tables[0].count, 2000);
  CU_ASSERT_EQUAL(p.tables[0].value_len, 8);
  double sum = 0;
  for (uint64_t i = 0; i < p.n_floats; i++) sum += p.values[i];
  CU_ASSERT(num(m, "pushed_floats") > 0);
  CU_ASSERT(num(m, "replica_syncs") > 0);
  CU_ASSERT_EQUAL(sum, num(m, "pushed_floats"));
  CU_ASSERT_EQUAL(sum, num(m, "value_sum"));
  char part[4096];
  snprintf(part, sizeof part, "%s/params.part0", sv.dir);
  CU_ASSERT_NOT_EQUAL(access(part, F_OK), 0);
  wl_params_free(&p);
  cJSON_Delete(m);
  unit_remove_tree(sv.dir);
  free((char *)sv.dir);
}

/* Reads vectors.txt (word2vec's text format) from dir: its words into
 * words (room for cap) and their vectors into vals (cap * 8 floats), *dim
 * from its first line; how many words. */
static size_t read_vectors(const char *dir, char (*words)[64], float *vals, size_t cap,
                           uint32_t *dim) {
  char path[4096];
  snprintf(path, sizeof path, "%s/vectors.txt", dir);
  FILE *f = fopen(path, "r");
  unsigned n_words = 0;
  size_t n = 0, i = 0;
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(fscanf(f, "%u %u", &n_words, dim), 2);
  CU_ASSERT_FATAL(n_words <= cap && *dim == 8);
  for (; i < n_words && fscanf(f, "%63s", words[i]) == 1; i++)
    for (uint32_t j = 0; j < *dim && fscanf(f, "%f", &vals[n]) == 1; j++) n++;
  fclose(f);
  CU_ASSERT_EQUAL(n, (size_t)n_words * *dim);
  return i;
}

static double cosine_of(char (*words)[64], const float *vals, size_t n, const char *a,
                        const char *b) {
  const float *va = NULL, *vb = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(words[i], a)) va = vals + 8 * i;
    if (!strcmp(words[i], b)) vb = vals + 8 * i;
  }
  CU_ASSERT_FATAL(va && vb);
  double ab = 0, aa = 0, bb = 0;
  for (int j = 0; j < 8; j++) {
    ab += (double)va[j] * vb[j];
    aa += (double)va[j] * va[j];
    bb += (double)vb[j] * vb[j];
  }
  return ab / sqrt(aa * bb);
}

/* w2v on one node: the saved input vectors (params.bin and vectors.txt, the
 * same floats) give the Spearman's rho the run reported from its final
 * evaluation, on the pairs similarity.tsv lists. */
static void test_saved_w2v_vectors_give_its_quality(void) {
  saving_spec sv = {.dir = unit_temp_dir()};
  unit_write(sv.dir, "c.txt",
             "cat dog pet animal fur\ndog cat pet bark\ncar road wheel drive\n"
             "road car drive fast wheel\nfur pet cat\nwheel car fast\n");
  unit_write(sv.dir, "s.txt", "cat dog 1\ncar road 1\ncat car 0\ndog wheel 0\npet drive 0\n");
  tiny(&sv.r, "{\"type\":\"static\"}");
  sv.r.cluster.nodes = 1;
  sv.r.cluster.workers_per_node = 1;
  sv.r.workload = "{\"type\":\"w2v\",\"corpus\":\"c.txt\",\"similarity\":\"s.txt\","
                  "\"min_count\":1,\"dim\":8,\"window\":2,\"neg\":2,\"batch\":4,"
                  "\"subsample\":0,\"lr\":0.1,\"epochs\":5}";
  cJSON *m = run_saving(&sv);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  wl_params p = load_params(sv.dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p.values);
  CU_ASSERT_EQUAL_FATAL(p.num_tables, 2);
  uint64_t V = p.tables[0].count;
  static char words[16][64];
  float text[16 * 8];
  uint32_t dim = 0;
  size_t n = read_vectors(sv.dir, words, text, 16, &dim);
  CU_ASSERT_EQUAL_FATAL(n, V);
  CU_ASSERT_EQUAL(memcmp(text, p.values, n * dim * sizeof(float)), 0);
  /* the run's quality from the saved vectors: the listed pairs' cosines */
  static const double score[5] = {1, 1, 0, 0, 0};
  double cos[5];
  char path[4096];
  snprintf(path, sizeof path, "%s/similarity.tsv", sv.dir);
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char a[64], b[64];
  double sc;
  size_t k = 0;
  for (; k < 5 && fscanf(f, "%63s %63s %lf", a, b, &sc) == 3; k++) {
    CU_ASSERT_EQUAL(sc, score[k]);
    cos[k] = cosine_of(words, text, n, a, b);
  }
  fclose(f);
  CU_ASSERT_EQUAL_FATAL(k, 5);
  bool ok;
  double rho = w2v_spearman(cos, score, 5, &ok);
  printf("\n  rho from the saved vectors %.9f, reported %.9f\n", rho, num(m, "quality"));
  CU_ASSERT_DOUBLE_EQUAL(rho, num(m, "quality"), 1e-12);
  wl_params_free(&p);
  cJSON_Delete(m);
  unit_remove_tree(sv.dir);
  free((char *)sv.dir);
}

/* Every workload with files of its own, saved from 3 nodes of 2 workers
 * whose replicas (and, under nups, relocated keys) are resolved at the end:
 * params.bin holds each key's value once, from its owner (with "math":
 * "none", its floats sum to every float pushed), and the workload's files,
 * read back, hold the same floats under the data's names. */
static void saved_round_trip(const char *type, const char *workload, const char *policy) {
  saving_spec sv = {.dir = unit_temp_dir()};
  saved_write_data(sv.dir);
  tiny(&sv.r, policy);
  sv.r.cluster.nodes = 3;
  sv.r.workload = workload;
  cJSON *m = run_saving(&sv);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(num(m, "replica_syncs") > 0);
  if (strstr(policy, "nups")) CU_ASSERT(num(m, "relocations") > 0);
  wl_params p = saved_load(sv.dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p.values);
  if (strstr(workload, "\"math\":\"none\"")) {
    CU_ASSERT(num(m, "pushed_floats") > 0);
    CU_ASSERT_EQUAL(saved_sum(&p), num(m, "pushed_floats"));
  }
  saved_check_files(type, sv.dir, &p);
  saved_check_no_parts(sv.dir, 3);
  wl_params_free(&p);
  cJSON_Delete(m);
  unit_remove_tree(sv.dir);
  free((char *)sv.dir);
}

/* The i-th number of the list `name` of m (NaN when missing). */
static double nth(const cJSON *m, const char *name, int i) {
  const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, name), i);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* mf with every key replicated on 2 nodes and never synced during training:
 * evaluations during training read each node's own replicas, the final
 * `quality` the owners' values once the last deltas are handed on, which
 * the saved parameters hold too. eval_every "0.5 epochs" adds an evaluation
 * in the middle of each epoch; those at epoch ends are epoch_quality's. */
static void test_final_quality_reads_the_owners(void) {
  saving_spec sv = {.dir = unit_temp_dir()};
  tiny(&sv.r, "{\"type\":\"replicate\",\"hot_keys\":\"all\",\"syncs_per_sec\":0}");
  sv.r.workload = "{\"type\":\"mf\",\"rows\":40,\"cols\":40,\"nnz\":400,\"rank\":8,"
                  "\"batch\":4,\"epochs\":2,\"test_fraction\":0.2,\"lr\":0.05,"
                  "\"eval_every\":\"0.5 epochs\"}";
  cJSON *m = run_saving(&sv);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  wl_params p = load_params(sv.dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p.values);
  double owners = saved_rmse(sv.r.workload, &p, 2, 2), last = nth(m, "epoch_quality", 1);
  printf("\n    final RMSE %.6f (owners %.6f), last epoch's %.6f, replica share %g",
         num(m, "quality"), owners, last, num(m, "eval_replica_share"));
  CU_ASSERT(num(m, "eval_replica_share") > 0.3);
  CU_ASSERT_DOUBLE_EQUAL(num(m, "quality"), owners, 1e-9);
  CU_ASSERT(fabs(owners - last) > 1e-6);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "eval_quality")), 4);
  for (int e = 0; e < 2; e++) {
    CU_ASSERT_EQUAL(nth(m, "eval_quality", 2 * e + 1), nth(m, "epoch_quality", e));
    CU_ASSERT_EQUAL(nth(m, "eval_end_s", 2 * e + 1), nth(m, "epoch_end_s", e));
    CU_ASSERT(nth(m, "eval_end_s", 2 * e) < nth(m, "eval_end_s", 2 * e + 1));
  }
  wl_params_free(&p);
  cJSON_Delete(m);
  unit_remove_tree(sv.dir);
  free((char *)sv.dir);
}

static const char *const saved_nups = "{\"type\":\"nups\",\"hot_keys\":3,\"syncs_per_sec\":2000}";

static void test_saved_mf_factors(void) { saved_round_trip("mf", saved_mf_json, saved_nups); }
static void test_saved_kge_embeddings(void) {
  saved_round_trip("kge", saved_kge_json, saved_nups);
}
static void test_saved_generated_mf_and_dnn_tensors(void) {
  saved_round_trip("mf generated", saved_mf_generated_json, saved_nups);
  saved_round_trip("mf adagrad", saved_mf_adagrad_json, saved_nups);
  saved_round_trip("dnn tensors", saved_dnn_tensors_json,
                   "{\"type\":\"replicate\",\"hot_keys\":2,\"syncs_per_step\":1}");
}
static void test_saved_w2v_vectors(void) { saved_round_trip("w2v", saved_w2v_json, saved_nups); }
static void test_saved_dnn_tensors(void) {
  saved_round_trip("dnn", saved_dnn_json,
                   "{\"type\":\"replicate\",\"hot_keys\":5,\"syncs_per_step\":1}");
}

PSLAB_SUITE("sim", {"platform_xml", test_platform_xml}, {"cluster_check", test_cluster_check},
            {"servers and worker nodes", test_servers_and_worker_nodes},
            {"wait_deadline", test_wait_deadline},
            {"psld moves load away from a slowed server and back",
             test_psld_moves_load_away_and_back},
            {"scaling servers out and in", test_scale_out_and_in},
            {"platform_loads", test_platform_loads},
            {"metrics_and_conservation", test_metrics_and_conservation},
            {"relocate_conserves", test_relocate_conserves},
            {"deterministic", test_deterministic},
            {"progress reports the setup at 0", test_progress_reports_the_setup_at_zero},
            {"replica syncs end with the workers", test_replica_syncs_end_with_the_workers},
            {"replicas match their owners at the end", test_replicas_match_owners},
            {"the final quality reads the owners", test_final_quality_reads_the_owners},
            {"syncs_per_step: rounds in worker steps", test_syncs_per_step_rounds},
            {"the first sync round one interval in", test_first_round_one_interval_in},
            {"fast_local_access_saves_messages", test_fast_local_access_saves_messages},
            {"time_matches_arithmetic", test_time_matches_arithmetic},
            {"platform_file_and_lv08", test_platform_file_and_lv08},
            {"placement_xml_and_checks", test_placement_xml_and_checks},
            {"placement_shares_cores", test_placement_shares_cores},
            {"shared_access_cost", test_shared_access_cost},
            {"step_cost", test_step_cost},
            {"shared_access_handled", test_shared_access_handled},
            {"initial_values_cost", test_initial_values_cost},
            {"placement_loopback_arithmetic", test_placement_loopback_arithmetic},
            {"send_cost", test_send_cost},
            {"inbox_arrival_order", test_inbox_arrival_order},
            {"inbox_fifo_per_pair", test_inbox_fifo_per_pair},
            {"wakeup_lone_message", test_wakeup_lone_message},
            {"wakeup_once_per_burst", test_wakeup_once_per_burst},
            {"io_thread_cost", test_io_thread_cost},
            {"io_read_on_path", test_io_read_on_path},
            {"io_send_on_path", test_io_send_on_path},
      {"run_queue_worker_reads_its_reply", test_run_queue_worker_reads_its_reply},
      {"run_queue_reader_reads_on", test_run_queue_reader_reads_on},
            {"run_queue_slice", test_run_queue_slice},
            {"run_queue_counts_turns", test_run_queue_counts_turns},
            {"run_queue_counts_sleeps", test_run_queue_counts_sleeps},
            {"run_queue_preempts_for_a_woken_thread", test_run_queue_preempts_for_a_woken_thread},
            {"run_queue_wait_after_a_yield", test_run_queue_wait_after_a_yield},
            {"wakeup_waits_for_a_busy_core", test_wakeup_waits_for_a_busy_core},
            {"straggler_phase_slows_its_window", test_straggler_phase_slows_its_window},
            {"straggler_phase_server_and_link", test_straggler_phase_server_and_link},
            {"straggler_bandwidth_window", test_straggler_bandwidth_window},
            {"latency_bandwidth_arithmetic", test_latency_bandwidth_arithmetic},
            {"latency_bandwidth_incast", test_latency_bandwidth_incast},
            {"latency_bandwidth_conserves_and_repeats",
             test_latency_bandwidth_conserves_and_repeats},
            {"latency_bandwidth_straggler_link", test_latency_bandwidth_straggler_link},
            {"bad_spec_is_an_error", test_bad_spec_is_an_error},
            {"staleness steps by hand on a spec", test_staleness_steps_by_hand_on_a_spec},
            {"saved parameters hold every push", test_saved_params_hold_every_push},
            {"saved w2v vectors give its quality", test_saved_w2v_vectors_give_its_quality},
            {"saved mf factors: CSV with the data's ids", test_saved_mf_factors},
            {"saved kge embeddings: TSV with the data's names", test_saved_kge_embeddings},
            {"saved w2v vectors from replicas", test_saved_w2v_vectors},
            {"saved dnn tensors: .npy by layer", test_saved_dnn_tensors},
            {"saved generated mf and dnn tensors", test_saved_generated_mf_and_dnn_tensors})
