/*
 * Stages (FlexPS): the spec's stages list checked with messages that name
 * their JSON path; which workers a stage makes active and how its steps are
 * split; simulated runs that do every step of every stage exactly once,
 * lose no push, and hold each stage's barrier; and the stage scheduler,
 * which must pick the best worker count of stages whose best count is set
 * by construction.
 */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "experiments/common/common.h"
#include "run/run.h"
#include "sim/sim.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *dq(const char *s) {
  char *t = strdup(s);
  for (char *p = t; *p; p++)
    if (*p == '\'') *p = '"';
  return t;
}

/* ------------------------------------------------------------ spec errors */

#define BASE                                                                          \
  "'name': 's', 'cluster': {'nodes': 2, 'workers_per_node': 2}, "                    \
  "'workload': {'type': 'zipf', 'keys': 100, 'steps_per_worker': 100}, "             \
  "'policy': {'type': 'static'}, "

static void expect_errors(const char *spec, const char *const *want, size_t n) {
  char *text = dq(spec);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_parse(text, strlen(text), "spec.json", ".", NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  for (size_t i = 0; i < n; i++) {
    bool found = exp_errors_contain(&e, want[i]);
    if (!found) {
      fprintf(stderr, "\n  expected a message containing: %s\n  got:\n", want[i]);
      for (size_t k = 0; k < e.count; k++) fprintf(stderr, "    | %s\n", e.lines[k]);
    }
    CU_ASSERT_TRUE(found);
  }
  exp_spec_free(s);
  exp_errors_free(&e);
  free(text);
}

#define EXPECT(spec, ...)                                                       \
  do {                                                                          \
    const char *const want_[] = {__VA_ARGS__};                                  \
    expect_errors(spec, want_, sizeof want_ / sizeof want_[0]);                 \
  } while (0)

static void test_bad_stages_name_their_path(void) {
  EXPECT("{" BASE "'stages': []}", "stages: expected a list of 1 to");
  EXPECT("{" BASE "'stages': {'workers': 2}}", "stages: expected a list");
  EXPECT("{" BASE "'stages': [3]}", "stages[0]: expected an object");
  EXPECT("{" BASE "'stages': [{'workers': 2, 'steps': 10}, {'workers': 5, 'steps': 10}]}",
         "stages[1].workers: expected an integer from 1 to 4 (the cluster's workers) or "
         "\"auto\", found 5");
  EXPECT("{" BASE "'stages': [{'workers': 'all', 'steps': 10}]}",
         "stages[0].workers: expected an integer from 1 to 4");
  EXPECT("{" BASE "'stages': [{'workers': 2}]}", "stages[0].steps: expected the stage's steps "
                                                 "in all, an integer >= 1, found nothing");
  EXPECT("{" BASE "'stages': [{'workers': 2, 'steps': 1.5}]}", "stages[0].steps: expected");
  EXPECT("{" BASE "'stages': [{'workers': 4, 'steps': 3}]}",
         "stages[0].steps: 3 steps cannot keep 4 workers busy");
  EXPECT("{" BASE "'stages': [{'workers': 1, 'steps': 101}]}",
         "stages[0].steps: 101 steps over 1 workers is up to 101 per worker, more than the "
         "100 the workload gives one worker");
  EXPECT("{" BASE "'stages': [{'workers': 'auto', 'steps': 401}]}",
         "stages[0].steps: no worker count from 1 to 4 runs 401 steps");
  EXPECT("{" BASE "'stages': [{'workers': 2, 'steps': 10, 'colour': 1}]}",
         "stages[0].colour: unknown field (a stage takes workers, steps, batch, lr and "
         "consistency)");
  EXPECT("{" BASE "'stages': [{'workers': 2, 'steps': 10, 'lr': 0.1}]}",
         "stages[0].lr: the workload has no such field");
  EXPECT("{" BASE "'stages': [{'workers': 2, 'steps': 10, 'consistency': {'model': 'x'}}]}",
         "stages[0].consistency.model: expected");
  /* Every stage's problem is said, not just the first. */
  EXPECT("{" BASE "'stages': [{'workers': 9, 'steps': 10}, {'workers': 2, 'steps': 10}, "
         "{'workers': 2, 'steps': 10, 'batch': 3}]}",
         "stages[0].workers", "stages[2].batch");
  /* A stage's batch and lr are the workload's own fields, checked by it. */
  EXPECT("{'name': 's', 'cluster': {'nodes': 2}, 'policy': {'type': 'static'}, "
         "'workload': {'type': 'mf', 'rows': 100, 'cols': 50, 'nnz': 2000}, "
         "'stages': [{'workers': 1, 'steps': 5, 'lr': -1}]}",
         "stages[0].lr: expected");
}

static void test_good_stages_pass_and_auto_only_in_specs(void) {
  char *text = dq("{" BASE "'stages': [{'workers': 'auto', 'steps': 200}, "
                  "{'workers': 1, 'steps': 100, 'consistency': {'model': 'bsp'}}]}");
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_parse(text, strlen(text), "spec.json", ".", NULL, 0, &e);
  for (size_t k = 0; k < e.count; k++) fprintf(stderr, "    | %s\n", e.lines[k]);
  CU_ASSERT_PTR_NOT_NULL(s);
  exp_spec_free(s);
  exp_errors_free(&e);
  free(text);
  /* A backend is handed counts: run_setup_new refuses "auto". */
  cJSON *wl = unit_json("{'type': 'zipf', 'keys': 100, 'steps_per_worker': 100}");
  cJSON *pol = unit_json("{'type': 'static'}");
  cJSON *st = unit_json("[{'workers': 'auto', 'steps': 10}]");
  run_args a = {.workload = wl, .policy = pol, .stages = st, .nodes = 2,
                .workers_per_node = 2, .seed = 1};
  char err[512] = "";
  run_setup *setup = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NULL(setup);
  CU_ASSERT_TRUE(unit_contains(err, "stages[0].workers: \"auto\" is resolved by the stage "
                                    "scheduler"));
  run_setup_free(setup);
  cJSON_Delete(st);
  /* With counts it is set up, and progress counts every stage's clocks. */
  st = unit_json("[{'workers': 4, 'steps': 10}, {'workers': 3, 'steps': 10}]");
  a.stages = st;
  setup = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(setup);
  CU_ASSERT_EQUAL(run_setup_stages(setup), 2);
  CU_ASSERT_EQUAL(run_setup_steps_per_worker(setup), (3 + 1) + (4 + 1));
  /* Progress counts steps: 10 over 4 workers, then 10 over 3 of them. */
  CU_ASSERT_EQUAL(run_setup_steps(setup), 20);
  CU_ASSERT_EQUAL(run_setup_worker_steps(setup, 0), 3 + 4);
  CU_ASSERT_EQUAL(run_setup_worker_steps(setup, 3), 2 + 0);
  run_setup_free(setup);
  cJSON_Delete(st);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
}

/* ------------------------------------------------------------ the shares */

static void test_active_workers_round_robin_over_nodes(void) {
  /* 3 nodes x 2: the order is ranks 0, 2, 4 (every node's first), 1, 3, 5. */
  const uint32_t order[] = {0, 2, 4, 1, 3, 5};
  for (uint32_t active = 1; active <= 6; active++) {
    for (uint64_t steps = active; steps < 40; steps += 7) {
      uint64_t sum = 0, most = 0, least = UINT64_MAX;
      for (uint32_t p = 0; p < 6; p++) {
        uint64_t n = run_stage_worker_steps(3, 2, active, steps, order[p]);
        CU_ASSERT_EQUAL(n > 0, p < active); /* the first `active` of the order */
        sum += n;
        if (p < active && n > most) most = n;
        if (p < active && n < least) least = n;
      }
      CU_ASSERT_EQUAL(sum, steps);  /* every step once */
      CU_ASSERT_TRUE(most - least <= 1); /* as even as can be */
      CU_ASSERT_EQUAL(most, (steps + active - 1) / active);
    }
  }
  /* Two active workers are on two nodes, not on one. */
  CU_ASSERT_TRUE(run_stage_worker_steps(2, 4, 2, 10, 0) == 5);
  CU_ASSERT_TRUE(run_stage_worker_steps(2, 4, 2, 10, 4) == 5);
  CU_ASSERT_TRUE(run_stage_worker_steps(2, 4, 2, 10, 1) == 0);
}

static void test_candidates(void) {
  uint32_t c[RUN_STAGE_CANDIDATES_MAX];
  run_stage_info st = {.auto_workers = true, .steps = 1000, .max_per_worker = 1000};
  size_t n = run_stage_candidates(&st, 12, c);
  const uint32_t want[] = {1, 2, 4, 8, 12};
  CU_ASSERT_EQUAL_FATAL(n, 5);
  for (size_t i = 0; i < n; i++) CU_ASSERT_EQUAL(c[i], want[i]);
  st.max_per_worker = 300; /* 1 and 2 workers would run too many each */
  n = run_stage_candidates(&st, 8, c);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_EQUAL(c[0], 4);
  CU_ASSERT_EQUAL(c[1], 8);
  st.steps = 3; /* more workers than steps are never tried */
  st.max_per_worker = 3;
  n = run_stage_candidates(&st, 8, c);
  CU_ASSERT_EQUAL(n, 2);
  n = run_stage_candidates(&st, 1, c);
  CU_ASSERT_EQUAL(n, 1);
}

/* ------------------------------------------------------------- sim runs */

typedef struct {
  const char *workload, *policy, *stages;
  uint32_t nodes, workers_per_node;
  uint64_t seed;
  bool progress; /* the progress reports' fractions into the metrics, as "progress" */
} sim_job;

static void record_fraction(void *ctx, double sim_time_s, double fraction) {
  (void)sim_time_s;
  cJSON_AddItemToArray(ctx, cJSON_CreateNumber(fraction));
}

/* Runs sim_run in a child (SimGrid runs once per process): its metrics. */
static cJSON *simulate(const sim_job *j) {
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    sim_cluster c;
    sim_cluster_default(&c);
    c.nodes = j->nodes;
    c.workers_per_node = j->workers_per_node;
    cJSON *wl = unit_json(j->workload), *pol = unit_json(j->policy),
          *st = unit_json(j->stages);
    cJSON *fractions = cJSON_CreateArray();
    sim_run_args a = {.run = {.workload = wl, .policy = pol, .stages = st, .seed = j->seed},
                      .cluster = &c, .progress = j->progress ? record_fraction : NULL,
                      .progress_ctx = fractions};
    char err[1024] = "";
    cJSON *m = sim_run(&a, err, sizeof err);
    if (m) cJSON_AddItemToObject(m, "progress", fractions);
    char *text = m ? cJSON_PrintUnformatted(m) : NULL;
    if (!m) fprintf(stderr, "sim_run: %s\n", err);
    FILE *f = fdopen(fds[1], "w");
    if (f && text) fputs(text, f);
    if (f) fclose(f);
    _exit(text ? 0 : 1);
  }
  close(fds[1]);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  char chunk[4096];
  ssize_t got;
  while ((got = read(fds[0], chunk, sizeof chunk)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    fwrite(chunk, 1, (size_t)got, mem);
  }
  fclose(mem);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  cJSON *m = len ? cJSON_Parse(buf) : NULL;
  free(buf);
  return m;
}

static double num(const cJSON *o, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Every stage did its steps with its workers, no push was lost or doubled,
 * and no step of a stage started before every step of the one before ended. */
static void check_stages(const cJSON *m, const uint32_t *workers, const double *steps,
                         size_t n) {
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(m, "stages");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(stages), (int)n);
  double total = 0, prev_end = 0;
  size_t k = 0;
  for (const cJSON *st = stages->child; st; st = st->next, k++) {
    CU_ASSERT_EQUAL(num(st, "stage"), (double)k);
    CU_ASSERT_EQUAL(num(st, "workers"), workers[k]);
    CU_ASSERT_EQUAL(num(st, "steps"), steps[k]);
    CU_ASSERT_TRUE(num(st, "time_s") > 0);
    CU_ASSERT_DOUBLE_EQUAL(num(st, "steps_per_s"), steps[k] / num(st, "time_s"), 1e-6);
    CU_ASSERT_TRUE(num(st, "wait_s") >= 0);
    if (num(st, "start_s") < prev_end)
      fprintf(stderr, "\n  stage %zu starts at %.9g s, before stage %zu ended (%.9g s)\n", k,
              num(st, "start_s"), k - 1, prev_end);
    CU_ASSERT_TRUE(num(st, "start_s") >= prev_end); /* the barrier held */
    CU_ASSERT_DOUBLE_EQUAL(num(st, "end_s") - num(st, "start_s"), num(st, "time_s"), 1e-12);
    prev_end = num(st, "end_s");
    total += steps[k];
  }
  CU_ASSERT_EQUAL(num(m, "steps"), total);
  /* Without math every push adds 1.0 to each float it carries. */
  CU_ASSERT_TRUE(num(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(num(m, "value_sum"), num(m, "pushed_floats"));
}

static const char *zipf_wl =
    "{'type': 'zipf', 'keys': 3000, 'skew': 1.1, 'value_length': 8, 'reads_per_step': 6, "
    "'writes_per_step': 6, 'steps_per_worker': 400, 'locality': 0.5, 'flops_per_step': 1e5}";

static void test_every_step_of_every_stage_once(void) {
  static const char *const policies[] = {
      "{'type': 'static'}", "{'type': 'relocate', 'lookahead': 5}",
      "{'type': 'nups', 'hot_keys': 50, 'lookahead': 5}"};
  for (size_t p = 0; p < 3; p++) {
    sim_job j = {.workload = zipf_wl, .policy = policies[p], .nodes = 3, .workers_per_node = 2,
                 .seed = 7 + p,
                 .stages = "[{'workers': 6, 'steps': 600}, {'workers': 1, 'steps': 50}, "
                           "{'workers': 4, 'steps': 201, 'consistency': {'model': 'bsp'}}, "
                           "{'workers': 5, 'steps': 100, 'consistency': {'model': 'ssp', "
                           "'staleness': 2}}]"};
    cJSON *m = simulate(&j);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const uint32_t workers[] = {6, 1, 4, 5};
    const double steps[] = {600, 50, 201, 100};
    check_stages(m, workers, steps, 4);
    cJSON_Delete(m);
  }
}

/* Progress counts the steps taken: a stage of 1 active worker of 4 moves it
 * a step at a time (its idle workers' jumps to the stage's end are no
 * steps), as does the stage of all 4 after it, to 1. */
static void test_progress_counts_steps_not_clocks(void) {
  sim_job j = {.workload = zipf_wl, .policy = "{'type': 'static'}", .nodes = 2,
               .workers_per_node = 2, .seed = 3, .progress = true,
               .stages = "[{'workers': 1, 'steps': 10}, {'workers': 4, 'steps': 12}]"};
  cJSON *m = simulate(&j);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const cJSON *fractions = cJSON_GetObjectItemCaseSensitive(m, "progress");
  CU_ASSERT_FATAL(cJSON_GetArraySize(fractions) > 10);
  double last = 0, biggest = 0;
  for (const cJSON *f = fractions->child; f; f = f->next) {
    CU_ASSERT_TRUE(f->valuedouble >= last);
    if (f->valuedouble - last > biggest) biggest = f->valuedouble - last;
    last = f->valuedouble;
  }
  CU_ASSERT_EQUAL(last, 1);
  CU_ASSERT_DOUBLE_EQUAL(biggest, 1.0 / 22, 1e-12); /* 10 + 12 steps, one at a time */
  cJSON_Delete(m);
}

/* mf in two stages on two nodes of one worker each (evaluation pulls the
 * other node's keys, which takes time): each stage's evaluation points leave
 * out the evaluating of the stages before too, so the last one plus the
 * time spent evaluating comes to the run's last step's end (up to the two
 * workers' difference; counting only the last stage's evaluating would put
 * it about half of eval_s later). */
static void test_stage_times_leave_out_evaluation(void) {
  sim_job j = {.workload = "{'type': 'mf', 'rows': 20, 'cols': 20, 'nnz': 200, 'batch': 4, "
                           "'test_fraction': 0.2, 'epochs': 2, 'eval_every': '0.5 epochs'}",
               .policy = "{'type': 'static'}", .nodes = 2, .workers_per_node = 1, .seed = 3,
               .stages = "[{'workers': 2, 'steps': 40}, {'workers': 2, 'steps': 40}]"};
  cJSON *m = simulate(&j);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const cJSON *at = cJSON_GetObjectItemCaseSensitive(m, "eval_end_s");
  const cJSON *ends = cJSON_GetObjectItemCaseSensitive(m, "epoch_end_s");
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(m, "stages");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(at), 4);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(ends), 2);
  double last = cJSON_GetArrayItem(at, 3)->valuedouble;
  CU_ASSERT_EQUAL(last, cJSON_GetArrayItem(ends, 1)->valuedouble);
  double end = num(cJSON_GetArrayItem(stages, 1), "end_s");
  printf("\n    last evaluation at %.9g s + evaluating %.9g s, run's last step %.9g s", last,
         num(m, "eval_s"), end);
  CU_ASSERT_TRUE(num(m, "eval_s") > 0);
  CU_ASSERT_DOUBLE_EQUAL(last + num(m, "eval_s"), end, 0.1 * num(m, "eval_s"));
  cJSON_Delete(m);
}

static void test_stages_are_deterministic(void) {
  sim_job j = {.workload = zipf_wl, .policy = "{'type': 'relocate', 'lookahead': 5}",
               .nodes = 2, .workers_per_node = 2, .seed = 3,
               .stages = "[{'workers': 4, 'steps': 200}, {'workers': 2, 'steps': 100}]"};
  cJSON *a = simulate(&j), *b = simulate(&j);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  char *ta = cJSON_PrintUnformatted(a), *tb = cJSON_PrintUnformatted(b);
  CU_ASSERT_STRING_EQUAL(ta, tb);
  free(ta);
  free(tb);
  cJSON_Delete(a);
  cJSON_Delete(b);
}

/* ------------------------------------------------------------ scheduler */

/* Resolves the stages of a spec's run with the scheduler: the chosen count
 * of stage k (or 0), and the records. */
static uint32_t schedule(const char *cluster, const char *workload, const char *policy,
                         const char *stages, size_t k, cJSON **records) {
  cJSON *cj = unit_json(cluster), *wl = unit_json(workload), *pol = unit_json(policy),
        *st = unit_json(stages);
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster c;
  CU_ASSERT_TRUE_FATAL(exp_cluster_parse(cj, ".", &c, &e));
  exp_backend_job job = {.cluster = &c, .workload = wl, .policy = pol, .stages = st,
                         .base_dir = ".", .seed = 5};
  char err[1024] = "";
  CU_ASSERT_TRUE(exp_stages_have_auto(st));
  cJSON *resolved = exp_stages_schedule(&job, records, err, sizeof err);
  if (!resolved) fprintf(stderr, "\n  scheduling failed: %s\n", err);
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(resolved, (int)k),
                                                    "workers");
  uint32_t chosen = cJSON_IsNumber(w) ? (uint32_t)w->valuedouble : 0;
  cJSON_Delete(resolved);
  exp_cluster_free(&c);
  exp_errors_free(&e);
  cJSON_Delete(cj);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(st);
  return chosen;
}

static void check_record(const cJSON *records, size_t k, uint32_t chosen) {
  const cJSON *r = cJSON_GetArrayItem(records, (int)k);
  CU_ASSERT_TRUE_FATAL(cJSON_IsObject(r));
  CU_ASSERT_EQUAL(num(r, "chosen"), chosen);
  const cJSON *cand = cJSON_GetObjectItemCaseSensitive(r, "candidates");
  const cJSON *est = cJSON_GetObjectItemCaseSensitive(r, "estimated_s");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cand), cJSON_GetArraySize(est));
  /* The chosen one has the smallest estimate. */
  double best = INFINITY, at = 0;
  for (const cJSON *c = cand->child, *e = est->child; c && e; c = c->next, e = e->next)
    if (e->valuedouble < best) {
      best = e->valuedouble;
      at = c->valuedouble;
    }
  CU_ASSERT_EQUAL(at, chosen);
}

/* Compute dominates (a millisecond of flops per step, few small keys): the
 * stage goes fastest on every worker there is. */
static void test_scheduler_takes_every_worker_when_compute_dominates(void) {
  cJSON *records = NULL;
  uint32_t chosen = schedule(
      "{'nodes': 3, 'workers_per_node': 2, 'host_speed': '1Gf'}",
      "{'type': 'zipf', 'keys': 10000, 'skew': 0, 'value_length': 4, 'reads_per_step': 2, "
      "'writes_per_step': 2, 'steps_per_worker': 2000, 'flops_per_step': 1e6}",
      "{'type': 'static'}", "[{'workers': 2, 'steps': 40}, {'workers': 'auto', 'steps': 600}]",
      1, &records);
  CU_ASSERT_EQUAL(chosen, 6);
  CU_ASSERT_TRUE(cJSON_IsNull(cJSON_GetArrayItem(records, 0))); /* a fixed stage */
  check_record(records, 1, 6);
  const cJSON *cand = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(records, 1),
                                                       "candidates");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cand), 4); /* 1, 2, 4, 6 */
  cJSON_Delete(records);
}

/* Every step reads and writes one big key that lives on node 0 (range
 * partitioning of one key). The first worker of the order is on node 0 and
 * reaches it in memory; every other count adds workers on other nodes, whose
 * every step crosses the network twice with 40 kB: their share takes longer
 * than the whole stage does alone on node 0. One worker is best. */
static void test_scheduler_takes_one_worker_on_a_hot_key_of_one_node(void) {
  cJSON *records = NULL;
  uint32_t chosen = schedule(
      "{'nodes': 2, 'workers_per_node': 2, 'network': {'bandwidth': '1Gbps', 'latency': "
      "'100us'}}",
      "{'type': 'zipf', 'keys': 1, 'value_length': 10000, 'reads_per_step': 1, "
      "'writes_per_step': 1, 'steps_per_worker': 2000}",
      "{'type': 'static', 'partition': 'range'}", "[{'workers': 'auto', 'steps': 400}]", 0,
      &records);
  CU_ASSERT_EQUAL(chosen, 1);
  check_record(records, 0, 1);
  cJSON_Delete(records);
}

/* A stage is estimated from the state the stages before it leave. Under
 * relocation, a first stage of one worker (on node 0) pulls nearly every key
 * to node 0; a second stage of one worker then finds them all in memory,
 * while more workers would pull them back over a 1 ms network. From fresh
 * parameters (the keys spread over both nodes: the same stage scheduled
 * alone) more workers look faster, and a scheduler blind to the first stage
 * took them. */
static void test_scheduler_starts_from_the_state_before(void) {
  const char *cl = "{'nodes': 2, 'workers_per_node': 2, 'network': {'bandwidth': '1Gbps', "
                   "'latency': '1ms'}}";
  const char *wl = "{'type': 'zipf', 'keys': 200, 'skew': 0, 'value_length': 4, "
                   "'reads_per_step': 2, 'writes_per_step': 2, 'steps_per_worker': 2000, "
                   "'flops_per_step': 1e4}";
  const char *pol = "{'type': 'relocate', 'lookahead': 5}";
  cJSON *fresh = NULL, *after = NULL;
  uint32_t alone = schedule(cl, wl, pol, "[{'workers': 'auto', 'steps': 400}]", 0, &fresh);
  uint32_t second = schedule(cl, wl, pol,
                             "[{'workers': 1, 'steps': 400}, {'workers': 'auto', 'steps': 400}]",
                             1, &after);
  CU_ASSERT_NOT_EQUAL(alone, 1);
  CU_ASSERT_EQUAL(second, 1);
  check_record(after, 1, 1);
  cJSON_Delete(fresh);
  cJSON_Delete(after);
}

/* The same schedule twice: the same choice and the same estimates. */
static void test_scheduler_is_deterministic(void) {
  const char *cl = "{'nodes': 2, 'workers_per_node': 2}";
  const char *st = "[{'workers': 'auto', 'steps': 300}]";
  cJSON *r1 = NULL, *r2 = NULL;
  uint32_t c1 = schedule(cl, zipf_wl, "{'type': 'relocate'}", st, 0, &r1);
  uint32_t c2 = schedule(cl, zipf_wl, "{'type': 'relocate'}", st, 0, &r2);
  CU_ASSERT_EQUAL(c1, c2);
  CU_ASSERT_TRUE(c1 >= 1 && c1 <= 4);
  char *t1 = cJSON_PrintUnformatted(r1), *t2 = cJSON_PrintUnformatted(r2);
  CU_ASSERT_STRING_EQUAL(t1, t2);
  free(t1);
  free(t2);
  cJSON_Delete(r1);
  cJSON_Delete(r2);
}

PSLAB_SUITE("stages", {"bad stages name their JSON path", test_bad_stages_name_their_path},
            {"progress counts steps, not clocks", test_progress_counts_steps_not_clocks},
            {"good stages pass; auto only in specs", test_good_stages_pass_and_auto_only_in_specs},
            {"the scheduler starts a stage from the state before it",
             test_scheduler_starts_from_the_state_before},
            {"active workers round-robin over nodes, steps split evenly",
             test_active_workers_round_robin_over_nodes},
            {"the scheduler's candidate counts", test_candidates},
            {"every step of every stage once, conserved, barriers hold",
             test_every_step_of_every_stage_once},
            {"stages are deterministic", test_stages_are_deterministic},
            {"stage times leave out every evaluation", test_stage_times_leave_out_evaluation},
            {"scheduler: compute-bound stage takes every worker",
             test_scheduler_takes_every_worker_when_compute_dominates},
            {"scheduler: a hot key of one node takes one worker",
             test_scheduler_takes_one_worker_on_a_hot_key_of_one_node},
            {"scheduler is deterministic", test_scheduler_is_deterministic})
