/*
 * run/: the layer both backends share. The metric table's shape, metrics
 * computed from hand-made node reports (figures worked out by hand, the
 * telemetry that locates a backend's difference among them), the
 * report's text form (exact round trip, every malformed report refused), the
 * setup's errors, the worker seed contract, and a whole run driven through
 * the run layer on the in-memory harness, with no backend at all.
 */
#include "run/run.h"

#include "harness.h"
#include "model/testing.h"
#include "unit.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double metric(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* ------------------------------------------------------------ the table */

static void test_metric_table_shape(void) {
  size_t n;
  const run_metric *t = run_metric_table(&n);
  CU_ASSERT_TRUE_FATAL(n > 10);
  for (size_t i = 0; i < n; i++) {
    CU_ASSERT_PTR_NOT_NULL(t[i].unit);
    CU_ASSERT_TRUE(t[i].label && *t[i].label);
    CU_ASSERT_TRUE(t[i].meaning && strlen(t[i].meaning) > 10);
    /* A list is computed as a list, a scalar as a scalar. */
    CU_ASSERT_FALSE(t[i].value && t[i].values);
    CU_ASSERT_TRUE(t[i].list ? (t[i].values != NULL) != (t[i].objects != NULL)
                             : !t[i].values && !t[i].objects);
    CU_ASSERT_PTR_EQUAL(run_metric_find(t[i].name), &t[i]);
    for (size_t j = 0; j < i; j++) CU_ASSERT_STRING_NOT_EQUAL(t[i].name, t[j].name);
  }
  CU_ASSERT_PTR_NOT_NULL(run_metric_find("loss"));
  CU_ASSERT_PTR_NULL(run_metric_find("losses"));
  CU_ASSERT_PTR_NULL(run_metric_find(NULL));
  const run_metric *wall = run_metric_find("wall_s");
  CU_ASSERT_TRUE(wall && !wall->value && !wall->values); /* the runner's */
  CU_ASSERT_TRUE(run_metric_find("time_s")->show & RUN_SHOW_TABLE);
  CU_ASSERT_TRUE(run_metric_find("steps_per_s")->show & RUN_SHOW_TABLE);
  CU_ASSERT_EQUAL(run_metric_find("staleness_max_s")->combine, RUN_COMBINE_MAX);
}

/* --------------------------------------------------- metrics from reports */

static double ends0[] = {1.0, 3.0}, ends1[] = {2.0, 2.5}, ends2[] = {1.5, 4.0}, ends3[] = {0.5};

/* Two nodes of two workers. Worker 2.. sampled; node 1 has replica reads. */
static void make_reports(run_node_report r[2]) {
  memset(r, 0, 2 * sizeof *r);
  static run_worker_report w0[2], w1[2];
  w0[0] = (run_worker_report){10, 40, 400, 0, 400, 0, 0, 0.25, ends0, 2, NULL, 0, 0, 0, 0, 0, 0, {0}, NULL, 0, NULL, 0, 0, 0};
  w0[1] = (run_worker_report){10, 40, 400, 0, 400, 0, 0, 0.5, ends1, 2, NULL, 0, 0, 0, 0, 0, 0, {0}, NULL, 0, NULL, 0, 0, 0};
  w1[0] = (run_worker_report){10, 60, 600, 20, 600, 0.5, 2.0, 0.125, ends2, 2, NULL, 0, 0, 0, 0, 0, 0, {0}, NULL, 0, NULL, 0, 0, 0};
  w1[1] = (run_worker_report){5, 30, 300, 10, 300, 0.25, 4.0, 0.75, ends3, 1, NULL, 0, 0, 0, 0, 0, 0, {0}, NULL, 0, NULL, 0, 0, 0};
  r[0] = (run_node_report){.owned_sum = 900, .workers = w0, .n_workers = 2};
  r[0].stats.local_accesses = 30;
  r[0].stats.remote_accesses = 50;
  r[0].stats.messages_sent = 7;
  r[0].stats.bytes_sent = 700;
  r[1] = (run_node_report){.owned_sum = 800, .dropped = 2, .workers = w1, .n_workers = 2};
  r[1].stats.local_accesses = 60;
  r[1].stats.remote_accesses = 30;
  r[1].stats.messages_sent = 3;
  r[1].stats.bytes_sent = 300;
  r[1].stats.relocations = 4;
  r[1].stats.replica_reads = 4;
  r[1].stats.staleness_sum_s = 0.002;
  r[1].stats.staleness_max_s = 0.001;
  r[1].stats.staleness_sum_steps = 6;
  r[1].stats.staleness_max_steps = 3;
  r[1].stats.staleness_hist[10] = 4;
  r[1].stats.staleness_steps_hist[1] = 1; /* 1 step */
  r[1].stats.staleness_steps_hist[2] = 3; /* 2 or 3 steps */
  r[1].throttling = true; /* a straggler on the real backend */
  r[1].throttled = 9;
  r[1].throttle_s = 0.375;
}

static void test_metrics_from_reports(void) {
  run_node_report r[2];
  make_reports(r);
  char err[128];
  cJSON *m = run_metrics(r, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "time_s"), 5.0);
  CU_ASSERT_EQUAL(metric(m, "steps"), 35);
  CU_ASSERT_EQUAL(metric(m, "steps_per_s"), 7);
  CU_ASSERT_EQUAL(metric(m, "accesses"), 170);
  CU_ASSERT_EQUAL(metric(m, "local_ratio"), 90.0 / 170.0);
  CU_ASSERT_EQUAL(metric(m, "messages"), 10);
  CU_ASSERT_EQUAL(metric(m, "bytes"), 1000);
  CU_ASSERT_EQUAL(metric(m, "relocations"), 4);
  CU_ASSERT_EQUAL(metric(m, "pushed_floats"), 1700);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), 1700);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "value_sum_unreadable"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "pushed_sum")); /* no real math */
  /* Epochs: from the earliest start 0.125 to the latest end of epoch 0
   * (2.0), then to the latest end of epoch 1 (4.0). */
  const cJSON *e = cJSON_GetObjectItem(m, "epoch_time_s");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(e), 2);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(e, 0)->valuedouble, 2.0 - 0.125);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(e, 1)->valuedouble, 2.0);
  /* Sampling: means over the workers that sampled only. */
  CU_ASSERT_EQUAL(metric(m, "samples"), 30);
  CU_ASSERT_EQUAL(metric(m, "sample_tv_distance"), 0.375);
  CU_ASSERT_EQUAL(metric(m, "sample_reuse_factor"), 3.0);
  /* Staleness from node 1's replica reads. */
  CU_ASSERT_EQUAL(metric(m, "staleness_mean_s"), 0.0005);
  CU_ASSERT_EQUAL(metric(m, "staleness_max_s"), 0.001);
  CU_ASSERT_EQUAL(metric(m, "staleness_mean_steps"), 1.5);
  CU_ASSERT_EQUAL(metric(m, "staleness_p99_steps"), 3);
  CU_ASSERT_EQUAL(metric(m, "staleness_max_steps"), 3);
  CU_ASSERT_EQUAL(metric(m, "staleness_p99_s"), ps_staleness_quantile(r[1].stats.staleness_hist, 0.99));
  CU_ASSERT_EQUAL(metric(m, "bad_messages"), 2);
  CU_ASSERT_EQUAL(metric(m, "throttled_messages"), 9);
  CU_ASSERT_EQUAL(metric(m, "throttle_s"), 0.375);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "wall_s")); /* the runner adds it */
  /* Keys are in table order. */
  size_t n, at = 0;
  const run_metric *t = run_metric_table(&n);
  for (const cJSON *c = m->child; c; c = c->next) {
    while (at < n && strcmp(t[at].name, c->string) != 0) at++;
    CU_ASSERT_TRUE(at < n);
  }
  cJSON_Delete(m);
}

static void test_metrics_absent_when_not_applicable(void) {
  run_node_report r[2];
  make_reports(r);
  r[1].stats.replica_reads = 0;
  r[1].dropped = 0;
  r[1].throttling = false;
  r[1].in_transfer = 3;
  r[1].workers[0].samples = r[1].workers[1].samples = 0;
  char err[128];
  cJSON *m = run_metrics(r, 2, 0.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const char *absent[] = {"staleness_mean_s", "staleness_p99_s", "staleness_max_s",
                          "staleness_mean_steps", "staleness_p99_steps", "staleness_max_steps", "samples",
                          "sample_tv_distance", "sample_reuse_factor", "bad_messages",
                          "value_sum", "throttled_messages", "throttle_s"};
  for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, absent[i]));
  CU_ASSERT_EQUAL(metric(m, "value_sum_unreadable"), 3);
  CU_ASSERT_EQUAL(metric(m, "steps_per_s"), 0); /* time 0: no division */
  cJSON_Delete(m);
}

/* Real math: per-epoch loss and held-out sums add up over workers. */
static wl_epoch_quality q0[2] = {{10, 5, 8, 2}, {4, 5, 2, 2}}, q1[2] = {{20, 5, 10, 2}, {6, 5, 0.5, 2}},
                        q2[2] = {{0, 10, 0, 4}, {0, 10, 1.5, 4}}, q3[1] = {{30, 10, 6, 0}};

static void add_quality(run_node_report r[2]) {
  r[0].workers[0].epoch_quality = q0;
  r[0].workers[1].epoch_quality = q1;
  r[1].workers[0].epoch_quality = q2;
  r[1].workers[1].epoch_quality = q3; /* finished one epoch only */
  r[0].workers[1].eval_s = 0.25;
  r[1].workers[0].eval_s = 0.5;
}

static void test_quality_metrics(void) {
  run_node_report r[2];
  make_reports(r);
  add_quality(r);
  wl_quality rmse = {.name = "rmse", .higher_better = false, .sqrt = true, .has_target = true,
                     .target = 1.5};
  char err[128];
  cJSON *m = run_metrics(r, 2, 5.0, &rmse, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* Only epoch 0 was finished by every worker: loss (10+20+0+30)/(5+5+10+10),
   * quality sqrt((8+10+0+6)/(2+2+4+0)). */
  const cJSON *loss = cJSON_GetObjectItem(m, "epoch_loss");
  const cJSON *quality = cJSON_GetObjectItem(m, "epoch_quality");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(loss), 1);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(quality), 1);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(loss, 0)->valuedouble, 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(quality, 0)->valuedouble, sqrt(3.0), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "loss"), 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "quality"), sqrt(3.0), 1e-12);
  CU_ASSERT_EQUAL(metric(m, "eval_s"), 0.5);
  CU_ASSERT_EQUAL(metric(m, "pushed_sum"), 1700); /* with real math only */
  /* epoch ends from the earliest start (0.125): 2.0 and 4.0. */
  const cJSON *ends = cJSON_GetObjectItem(m, "epoch_end_s");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(ends), 2);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(ends, 0)->valuedouble, 2.0 - 0.125);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "time_to_quality_s")); /* sqrt 3 > 1.5 */
  cJSON_Delete(m);
  /* Every worker finishes epoch 1: its quality sqrt(4/8) reaches the target. */
  static wl_epoch_quality q3b[2] = {{30, 10, 6, 0}, {0, 10, 0, 0}};
  r[1].workers[1].epoch_quality = q3b;
  r[1].workers[1].epochs = 2;
  static double ends3b[] = {0.5, 3.0};
  r[1].workers[1].epoch_end_s = ends3b;
  m = run_metrics(r, 2, 5.0, &rmse, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  quality = cJSON_GetObjectItem(m, "epoch_quality");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(quality), 2);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(quality, 1)->valuedouble, sqrt(0.5), 1e-12);
  CU_ASSERT_EQUAL(metric(m, "time_to_quality_s"), 4.0 - 0.125);
  cJSON_Delete(m);
  /* Higher is better: MRR 0.3 and 0.25, target 0.28 met at epoch 0. */
  wl_quality mrr = {.name = "mrr", .higher_better = true, .has_target = true, .target = 0.28};
  r[0].workers[0].epoch_quality[0].q_num = 0.6;
  r[0].workers[1].epoch_quality[0].q_num = 0;
  r[1].workers[0].epoch_quality[0].q_num = 0;
  r[1].workers[1].epoch_quality[0].q_num = 1.8; /* (0.6 + 1.8) / 8 = 0.3 */
  m = run_metrics(r, 2, 5.0, &mrr, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "epoch_quality"), 0)->valuedouble,
                         0.3, 1e-12);
  CU_ASSERT_EQUAL(metric(m, "time_to_quality_s"), 2.0 - 0.125);
  cJSON_Delete(m);
  /* Without a quality measure: loss, but no quality. */
  m = run_metrics(r, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(m, "epoch_loss"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "epoch_quality"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "quality"));
  cJSON_Delete(m);
  q0[0].q_num = 8; /* restore the statics for later tests */
  q1[0].q_num = 10;
  q2[0].q_num = 0;
}

/* Evaluation points and the final evaluation: point i sums every
 * worker's point i (only those every worker made), at the latest of their
 * times from the run's start (0.125); time to quality is the first point
 * that reaches the target, else time_s when only the final evaluation
 * does; `quality` is the final evaluation's. Both travel in the report's
 * text exactly. */
static void test_eval_points_and_final(void) {
  run_node_report r[2];
  make_reports(r);
  add_quality(r);
  static wl_eval_point e0[3] = {{1.0, 8, 2}, {2.0, 2, 2}, {3.0, 1, 2}};
  static wl_eval_point e1[3] = {{1.5, 8, 2}, {2.25, 2, 2}, {3.0, 1, 2}};
  static wl_eval_point e2[2] = {{1.25, 8, 4}, {2.5, 0, 4}}, e3[2] = {{0.75, 0, 0}, {2.0, 0, 0}};
  wl_eval_point *all[4] = {e0, e1, e2, e3};
  size_t counts[4] = {3, 3, 2, 2};
  for (int w = 0; w < 4; w++) {
    r[w / 2].workers[w % 2].evals = all[w];
    r[w / 2].workers[w % 2].n_evals = counts[w];
  }
  wl_quality rmse = {.name = "rmse", .higher_better = false, .sqrt = true, .has_target = true,
                     .target = 1.2};
  char err[128];
  cJSON *m = run_metrics(r, 2, 5.0, &rmse, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const cJSON *q = cJSON_GetObjectItem(m, "eval_quality"), *at = cJSON_GetObjectItem(m, "eval_end_s");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(q), 2);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(at), 2);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(q, 0)->valuedouble, sqrt(24.0 / 8), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(q, 1)->valuedouble, sqrt(4.0 / 8), 1e-12);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(at, 0)->valuedouble, 1.5 - 0.125);
  CU_ASSERT_EQUAL(cJSON_GetArrayItem(at, 1)->valuedouble, 2.5 - 0.125);
  CU_ASSERT_EQUAL(metric(m, "time_to_quality_s"), 2.5 - 0.125); /* sqrt(1/2) <= 1.2 */
  /* without a final evaluation, quality is the last epoch's: sqrt(3) */
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "quality"), sqrt(3.0), 1e-12);
  cJSON_Delete(m);
  /* a final evaluation, in node 1's report: quality is its; when no point
   * reaches the target but it does, time to quality is time_s */
  r[1].final_done = true;
  r[1].final_num = 1;
  r[1].final_den = 4;
  rmse.target = 0.6;
  m = run_metrics(r, 2, 5.0, &rmse, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "quality"), 0.5, 1e-12);
  CU_ASSERT_EQUAL(metric(m, "time_to_quality_s"), 5.0);
  cJSON_Delete(m);
  rmse.target = 0.4; /* nothing reaches it */
  m = run_metrics(r, 2, 5.0, &rmse, err, sizeof err);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "time_to_quality_s"));
  cJSON_Delete(m);
  for (int k = 0; k < 2; k++) {
    char *text = run_report_encode(&r[k]);
    run_node_report back;
    CU_ASSERT_EQUAL_FATAL(run_report_decode(text, strlen(text), &back, err, sizeof err), 0);
    CU_ASSERT_EQUAL(back.final_done, r[k].final_done);
    CU_ASSERT_EQUAL(back.final_num, r[k].final_num);
    CU_ASSERT_EQUAL(back.final_den, r[k].final_den);
    for (uint32_t i = 0; i < 2; i++) {
      CU_ASSERT_EQUAL_FATAL(back.workers[i].n_evals, r[k].workers[i].n_evals);
      CU_ASSERT_EQUAL(memcmp(back.workers[i].evals, r[k].workers[i].evals,
                             back.workers[i].n_evals * sizeof(wl_eval_point)), 0);
    }
    run_report_free(&back);
    free(text);
  }
}

/* ----------------------------------------------------------- report text */

static void test_report_text_round_trip(void) {
  run_node_report r[2];
  make_reports(r);
  r[0].owned_sum = 0.1; /* needs 17 digits */
  r[0].workers[1].pushed_sum = -1.0 / 3.0;
  r[0].workers[0].start_s = 1.0 / 3.0;
  r[0].stats.bytes_sent = (1ull << 53) - 1;
  r[0].stats.staleness_hist[47] = 12345;
  add_quality(r);
  r[1].workers[1].epoch_quality = NULL; /* a worker without: no field */
  for (int k = 0; k < 2; k++) {
    char *text = run_report_encode(&r[k]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NULL(strchr(text, '\n')); /* one line */
    run_node_report back;
    char err[128] = "";
    CU_ASSERT_EQUAL_FATAL(run_report_decode(text, strlen(text), &back, err, sizeof err), 0);
    CU_ASSERT_EQUAL(memcmp(&back.stats, &r[k].stats, sizeof back.stats), 0);
    CU_ASSERT_EQUAL(back.owned_sum, r[k].owned_sum);
    CU_ASSERT_EQUAL(back.dropped, r[k].dropped);
    CU_ASSERT_EQUAL(back.throttling, r[k].throttling);
    CU_ASSERT_EQUAL(back.throttled, r[k].throttled);
    CU_ASSERT_EQUAL(back.throttle_s, r[k].throttle_s);
    CU_ASSERT_EQUAL_FATAL(back.n_workers, r[k].n_workers);
    for (uint32_t i = 0; i < back.n_workers; i++) {
      const run_worker_report *a = &back.workers[i], *b = &r[k].workers[i];
      CU_ASSERT_TRUE(a->steps == b->steps && a->accesses == b->accesses &&
                     a->pushed_floats == b->pushed_floats && a->samples == b->samples &&
                     a->pushed_sum == b->pushed_sum);
      CU_ASSERT_TRUE(a->sample_tv_distance == b->sample_tv_distance &&
                     a->sample_reuse_factor == b->sample_reuse_factor &&
                     a->start_s == b->start_s);
      CU_ASSERT_EQUAL_FATAL(a->epochs, b->epochs);
      for (size_t e = 0; e < a->epochs; e++) CU_ASSERT_EQUAL(a->epoch_end_s[e], b->epoch_end_s[e]);
      CU_ASSERT_EQUAL(a->eval_s, b->eval_s);
      CU_ASSERT_EQUAL_FATAL(!a->epoch_quality, !b->epoch_quality);
      for (size_t e = 0; b->epoch_quality && e < a->epochs; e++)
        CU_ASSERT_EQUAL(memcmp(&a->epoch_quality[e], &b->epoch_quality[e], sizeof *a->epoch_quality), 0);
    }
    run_report_free(&back);
    free(text);
  }
}

/* Servers' load in reports: through the text and back exactly, and into
 * the "servers" metric: a server's figures, the response times every client
 * saw from it (summed over the clients), and its keys served per second in
 * buckets of the widest width any server used. */
static void test_report_load_and_servers_metric(void) {
  run_node_report r[2];
  make_reports(r);
  uint64_t s0[3] = {10, 20, 30}, s1[1] = {40};
  ps_rt_stats rt0[2] = {{.count = 4, .keys = 8, .sum_s = 0.004, .max_s = 0.0015},
                        {.count = 2, .keys = 2, .sum_s = 1.0 / 3.0, .max_s = 0.25}};
  ps_rt_stats rt1[2] = {{.count = 1, .keys = 3, .sum_s = 0.002, .max_s = 0.002}, {0}};
  rt0[0].hist[20] = 4;
  rt0[1].hist[40] = 2;
  rt1[0].hist[22] = 1;
  r[0].server = r[1].server = true;
  r[0].load = (ps_server_load){.keys = 100, .floats = 400, .handled = 10, .busy_s = 0.5,
                               .queue_sum = 20, .queue_max = 5};
  r[1].load = (ps_server_load){.keys = 40, .floats = 160, .handled = 4, .busy_s = 0.25};
  r[0].series = s0;
  r[0].n_series = 3;
  r[0].bucket_s = 0.001;
  r[1].series = s1;
  r[1].n_series = 1;
  r[1].bucket_s = 0.002;
  r[0].rt = rt0;
  r[1].rt = rt1;
  r[0].n_rt = r[1].n_rt = 2;
  r[0].stats.messages_received = 9;
  r[0].owned_keys = 12;
  run_node_report back[2];
  for (int k = 0; k < 2; k++) {
    char *text = run_report_encode(&r[k]);
    char err[160] = "";
    CU_ASSERT_EQUAL_FATAL(run_report_decode(text, strlen(text), &back[k], err, sizeof err), 0);
    CU_ASSERT_EQUAL(back[k].server, true);
    CU_ASSERT_EQUAL(memcmp(&back[k].load, &r[k].load, sizeof back[k].load), 0);
    CU_ASSERT_EQUAL(back[k].bucket_s, r[k].bucket_s);
    CU_ASSERT_EQUAL_FATAL(back[k].n_series, r[k].n_series);
    CU_ASSERT_EQUAL(memcmp(back[k].series, r[k].series, r[k].n_series * sizeof *r[k].series), 0);
    CU_ASSERT_EQUAL_FATAL(back[k].n_rt, 2);
    CU_ASSERT_EQUAL(memcmp(back[k].rt, r[k].rt, 2 * sizeof *r[k].rt), 0);
    free(text);
  }
  char err[128];
  cJSON *m = run_metrics(back, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const cJSON *servers = cJSON_GetObjectItem(m, "servers");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(servers), 2);
  const cJSON *a = cJSON_GetArrayItem(servers, 0), *b = cJSON_GetArrayItem(servers, 1);
  CU_ASSERT_EQUAL(metric(a, "node"), 0);
  CU_ASSERT_EQUAL(metric(a, "messages"), 9);
  CU_ASSERT_EQUAL(metric(a, "keys"), 100);
  CU_ASSERT_EQUAL(metric(a, "owned_keys"), 12);
  CU_ASSERT_EQUAL(metric(b, "owned_keys"), 0);
  CU_ASSERT_EQUAL(metric(a, "busy_s"), 0.5);
  CU_ASSERT_EQUAL(metric(a, "utilization"), 0.1);
  CU_ASSERT_EQUAL(metric(a, "queue_mean"), 2);
  CU_ASSERT_EQUAL(metric(a, "queue_max"), 5);
  CU_ASSERT_EQUAL(metric(a, "replies"), 5); /* 4 to node 0, 1 to node 1 */
  CU_ASSERT_DOUBLE_EQUAL(metric(a, "rt_mean_s"), 0.006 / 5, 1e-15);
  CU_ASSERT_EQUAL(metric(a, "rt_max_s"), 0.002);
  CU_ASSERT_DOUBLE_EQUAL(metric(a, "rt_p50_s"), 1.024e-3, 1e-12); /* bucket 20: up to 2^10 us */
  CU_ASSERT_EQUAL(metric(a, "rt_p99_s"), 0.002); /* bucket 22's bound (2^11 us), cut at the max */
  CU_ASSERT_EQUAL(metric(b, "replies"), 2);
  CU_ASSERT_EQUAL(metric(b, "rt_p50_s"), 0.25); /* bucket 40's 2^20 us, cut at the max */
  CU_ASSERT_EQUAL(metric(a, "bucket_s"), 0.002);
  const cJSON *ka = cJSON_GetObjectItem(a, "keys_per_s"), *kb = cJSON_GetObjectItem(b, "keys_per_s");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(ka), 2);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(ka, 0)->valuedouble, 30 / 0.002, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(ka, 1)->valuedouble, 30 / 0.002, 1e-9);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(kb), 1);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetArrayItem(kb, 0)->valuedouble, 40 / 0.002, 1e-9);
  cJSON_Delete(m);
  /* Only servers are listed. */
  back[1].server = false;
  m = run_metrics(back, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(m, "servers")), 1);
  cJSON_Delete(m);
  for (int k = 0; k < 2; k++) run_report_free(&back[k]);
}

/* The telemetry that locates a difference between backends, from reports
 * sent through their text form. Node 0 is a server, node 1 only a client;
 * time_s 2. Response times: 3 replies in bucket 10 (up to 2^5 us) and one
 * in bucket 30 (2^15 us, the largest 20 ms). Node 0 handled 6 messages with
 * 0, 0, 0, 1, 1 and 300 waiting (the last in the bucket of 256..511), over
 * 2 wake-ups; node 1 handled 4 with none waiting, over 2. CPU 0.3 and 0.1 s
 * for 7 + 3 messages sent. */
static void test_telemetry_metrics(void) {
  run_node_report r[2];
  make_reports(r);
  ps_rt_stats rt0[1] = {{.count = 3, .sum_s = 1e-4, .max_s = 4e-5}};
  ps_rt_stats rt1[1] = {{.count = 1, .sum_s = 0.02, .max_s = 0.02}};
  rt0[0].hist[10] = 3;
  rt1[0].hist[30] = 1;
  r[0].rt = rt0;
  r[1].rt = rt1;
  r[0].n_rt = r[1].n_rt = 1;
  r[0].server = true;
  r[0].load = (ps_server_load){.handled = 6, .busy_s = 0.5, .queue_sum = 302,
                               .queue_max = 300, .wakeups = 2};
  r[0].load.queue_hist[0] = 3;
  r[0].load.queue_hist[1] = 2;
  r[0].load.queue_hist[PS_QUEUE_EXACT + 4] = 1; /* 16 * 2^4 .. 16 * 2^5 - 1 */
  r[1].load = (ps_server_load){.handled = 4, .busy_s = 0.7, .wakeups = 2}; /* not a server */
  r[1].load.queue_hist[0] = 4;
  r[0].cpu_s = 0.3;
  r[1].cpu_s = 0.1;
  r[0].io_wakeups = 3;
  r[1].io_wakeups = 1;
  r[0].io_cpu_s = 0.125;
  r[1].io_cpu_s = 0.0625;
  /* Turns on a core, seconds run, seconds waited: node 1's workers were
   * not measured (no turns). */
  r[0].io_sched = (run_thread_sched){.turns = 4, .ran_s = 0.125, .wait_s = 0.5};
  r[1].io_sched = (run_thread_sched){.turns = 1, .ran_s = 0.0625, .wait_s = 0.125};
  r[0].worker_sched =
      (run_thread_sched){.turns = 8, .ran_s = 0.25, .wait_s = 0.0625, .blocked_s = 0.75};
  run_node_report back[2];
  for (int k = 0; k < 2; k++) {
    char *text = run_report_encode(&r[k]);
    char err[160] = "";
    CU_ASSERT_EQUAL_FATAL(run_report_decode(text, strlen(text), &back[k], err, sizeof err), 0);
    CU_ASSERT_EQUAL(memcmp(&back[k].load, &r[k].load, sizeof back[k].load), 0);
    CU_ASSERT_EQUAL(back[k].cpu_s, r[k].cpu_s);
    CU_ASSERT_EQUAL(back[k].io_wakeups, r[k].io_wakeups);
    CU_ASSERT_EQUAL(back[k].io_cpu_s, r[k].io_cpu_s);
    CU_ASSERT_EQUAL(memcmp(&back[k].io_sched, &r[k].io_sched, sizeof r[k].io_sched), 0);
    CU_ASSERT_EQUAL(memcmp(&back[k].worker_sched, &r[k].worker_sched, sizeof r[k].io_sched), 0);
    free(text);
  }
  char err[128];
  cJSON *m = run_metrics(back, 2, 2.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "rt_p50_s"), 32e-6, 1e-15); /* bucket 10's bound */
  CU_ASSERT_EQUAL(metric(m, "rt_p99_s"), 0.02);  /* bucket 30's 2^15 us, cut at the max */
  CU_ASSERT_EQUAL(metric(m, "utilization"), 0.25); /* node 0's 0.5 s of 1 server x 2 s */
  CU_ASSERT_EQUAL(metric(m, "queue_p50"), 0);      /* 7 of the 10 found none waiting */
  CU_ASSERT_EQUAL(metric(m, "queue_p99"), 300);    /* 511, the bucket's top, cut at the max */
  CU_ASSERT_EQUAL(metric(m, "messages_per_wakeup"), 2.5);
  CU_ASSERT_EQUAL(metric(m, "messages_per_io_wakeup"), 2.5); /* 10 handled, 4 I/O wake-ups */
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "cpu_s"), 0.4, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "cpu_per_message_s"), 0.04, 1e-15);
  CU_ASSERT_EQUAL(metric(m, "io_cpu_s"), 0.1875); /* summed over the nodes */
  CU_ASSERT_EQUAL(metric(m, "io_turn_s"), 0.0375);    /* 0.1875 s over 5 turns */
  CU_ASSERT_EQUAL(metric(m, "io_run_wait_s"), 0.125); /* 0.625 s over 5 turns */
  CU_ASSERT_EQUAL(metric(m, "worker_turn_s"), 0.03125);
  CU_ASSERT_EQUAL(metric(m, "worker_run_wait_s"), 0.0078125);
  CU_ASSERT_EQUAL(metric(m, "worker_blocked_s"), 0.1875); /* 0.75 s over the 4 workers */
  cJSON_Delete(m);
  for (int k = 0; k < 2; k++) run_report_free(&back[k]);
  /* No reply, nothing handled, no wake-up, no message: those are absent;
   * utilization is 0, CPU 0. */
  make_reports(r);
  r[0].stats.messages_sent = r[1].stats.messages_sent = 0;
  r[0].server = true;
  m = run_metrics(r, 2, 2.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const char *absent[] = {"rt_p50_s", "rt_p99_s", "queue_p50", "queue_p99",
                          "messages_per_wakeup", "messages_per_io_wakeup",
                          "cpu_per_message_s", "io_cpu_s", "io_turn_s", "io_run_wait_s",
                          "worker_turn_s", "worker_run_wait_s", "worker_blocked_s"};
  for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, absent[i]));
  CU_ASSERT_EQUAL(metric(m, "utilization"), 0);
  CU_ASSERT_EQUAL(metric(m, "cpu_s"), 0);
  cJSON_Delete(m);
}

static void test_report_decode_refuses_bad_text(void) {
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"", "expected a node report"},
      {"[1,2]", "expected a node report"},
      {"{\"workers\": []}", "expected a node report"},
      {"{\"stats\": {}, \"workers\": []}", "stats.local_accesses: expected a number"},
      {"{\"stats\": {\"local_accesses\": -1}, \"workers\": []}",
       "stats.local_accesses: expected a count"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_node_report r;
    char err[160] = "";
    CU_ASSERT_EQUAL(run_report_decode(cases[i].text, strlen(cases[i].text), &r, err, sizeof err),
                    -1);
    if (!unit_contains(err, cases[i].message))
      fprintf(stderr, "\n  case %zu: got \"%s\", expected \"%s\"\n", i, err, cases[i].message);
    CU_ASSERT_TRUE(unit_contains(err, cases[i].message));
    CU_ASSERT_PTR_NULL(r.workers);
  }
  /* A good report with one field broken in each of its parts. */
  run_node_report r[2];
  make_reports(r);
  add_quality(r);
  char *good = run_report_encode(&r[0]);
  static const struct {
    const char *from, *to, *message;
  } breaks[] = {
      {"\"owned_sum\":", "\"owned_sux\":", "report.owned_sum: expected a number"},
      {"\"start_s\":", "\"start_x\":", "workers[].start_s: expected a number"},
      {"\"epoch_end_s\":[", "\"epoch_end_s\":3,\"x\":[", "workers[].epoch_end_s: expected a list"},
      {"\"staleness_hist\":[0,", "\"staleness_hist\":[", "stats.staleness_hist: expected 48"},
      {"\"staleness_hist\":[0,", "\"staleness_hist\":[true,", "stats.staleness_hist[0]: expected a count"},
      {"\"epoch_end_s\":[", "\"epoch_end_s\":[\"x\",", "workers[].epoch_end_s[0]: expected a number"},
      {"\"dropped\":", "\"dropped\":null,\"y\":", "report.dropped: expected a number"},
      {"\"epoch_quality\":[[", "\"epoch_quality\":[[1],[", "workers[].epoch_quality: expected a list of 2"},
      {"\"epoch_quality\":[[", "\"epoch_quality\":[[\"x\",", "workers[].epoch_quality[0]: expected 4 numbers"},
      {"\"eval_s\":", "\"eval_x\":", "workers[].eval_s: expected a number"},
      {"\"io_sched\":[", "\"io_sched\":[-1,", "report.io_sched: expected 4 numbers >= 0"},
      {"\"worker_sched\":[", "\"worker_sched\":[1,", "report.worker_sched: expected 4 numbers"},
  };
  for (size_t i = 0; good && i < sizeof breaks / sizeof breaks[0]; i++) {
    const char *at = strstr(good, breaks[i].from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    char bad[8192];
    snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - good), good, breaks[i].to,
             at + strlen(breaks[i].from));
    run_node_report back;
    char err[160] = "";
    CU_ASSERT_EQUAL(run_report_decode(bad, strlen(bad), &back, err, sizeof err), -1);
    if (!unit_contains(err, breaks[i].message))
      fprintf(stderr, "\n  break %zu: got \"%s\", expected \"%s\"\n", i, err, breaks[i].message);
    CU_ASSERT_TRUE(unit_contains(err, breaks[i].message));
  }
  free(good);
}

/* ----------------------------------------------------------------- setup */

static cJSON *parse(const char *text) {
  cJSON *j = cJSON_Parse(text);
  CU_ASSERT_PTR_NOT_NULL(j);
  return j;
}

static void test_setup_errors_name_the_object(void) {
  cJSON *wl = parse("{\"type\": \"zipf\", \"keys\": 100, \"steps_per_worker\": 10}");
  cJSON *bad_wl = parse("{\"type\": \"zipf\", \"keys\": -3}");
  cJSON *pol = parse("{\"type\": \"static\"}");
  cJSON *bad_pol = parse("{\"type\": \"teleport\"}");
  char err[256];
  run_args a = {.workload = wl, .policy = bad_pol, .nodes = 2, .workers_per_node = 1};
  CU_ASSERT_PTR_NULL(run_setup_new(&a, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "policy."));
  a.policy = pol;
  a.workload = bad_wl;
  CU_ASSERT_PTR_NULL(run_setup_new(&a, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "workload.keys"));
  a.workload = wl;
  a.nodes = 0;
  CU_ASSERT_PTR_NULL(run_setup_new(&a, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "at least one node"));
  a.nodes = 3;
  run_setup *s = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(run_setup_layout(s)->num_nodes, 3);
  CU_ASSERT_EQUAL(run_setup_steps_per_worker(s), 10);
  ps_node_config cfg;
  run_node_config(s, 2, &cfg);
  CU_ASSERT_EQUAL(cfg.id, 2);
  CU_ASSERT_EQUAL(cfg.workers, 1);
  CU_ASSERT_EQUAL(cfg.layout.num_nodes, 3);
  CU_ASSERT_PTR_EQUAL(cfg.policy_json, pol);
  run_setup_free(s);
  cJSON_Delete(wl);
  cJSON_Delete(bad_wl);
  cJSON_Delete(pol);
  cJSON_Delete(bad_pol);
}

/* A run whose memory estimate exceeds the limit is refused before anything
 * large is made, naming the field that makes it large; without a limit
 * (--force) the same setup is made, and hot_keys beyond the workload's keys
 * is capped at them (it used to allocate all it asked for). */
static void test_setup_refuses_what_memory_cannot_hold(void) {
  cJSON *wl = parse("{\"type\": \"zipf\", \"keys\": 100000, \"value_length\": 100,"
                    " \"steps_per_worker\": 10}");
  cJSON *stat = parse("{\"type\": \"static\"}");
  cJSON *repl = parse("{\"type\": \"replicate\", \"hot_keys\": 100000000}");
  cJSON *repl_owner =
      parse("{\"type\": \"replicate\", \"hot_keys\": 100000000, \"sync\": \"owner\"}");
  char err[768];
  run_args a = {.workload = wl, .policy = stat, .nodes = 100000, .workers_per_node = 1};
  a.memory.limit = 1ull << 30;
  CU_ASSERT_PTR_NULL(run_setup_new(&a, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "cluster.nodes 100000"));
  CU_ASSERT_TRUE(unit_contains(err, "--force"));
  CU_ASSERT_FALSE(unit_contains(err, "policy.hot_keys"));
  a.nodes = 64; /* 64 replicas of 100,000 keys of 400 bytes: about 5.6 GiB */
  a.policy = repl;
  a.memory.shared_sends = true; /* a round in flight: 64 x 41 MB */
  CU_ASSERT_PTR_NULL(run_setup_new(&a, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "policy.hot_keys: 100000 replicas on each of 64 nodes"));
  CU_ASSERT_TRUE(unit_contains(err, "a sync round's deltas in flight, 100000 keys per node ("));
  CU_ASSERT_FALSE(unit_contains(err, "cluster.nodes 64"));
  a.memory.nodes_here = 1; /* one node's process: 90 MiB, and a round of 41 MB */
  run_setup *s = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL(s);
  run_setup_free(s);
  /* A backend that sends every other node its own copy: 63 x 41 MB. */
  a.memory.shared_sends = false;
  CU_ASSERT_PTR_NULL(run_setup_new(&a, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "policy.hot_keys x cluster.nodes: a sync round's deltas in "
                                    "flight, 100000 keys per node, a copy for each of the other "
                                    "63 (2.42 GiB)"));
  a.policy = repl_owner; /* synced through the owners: no all-reduce round */
  s = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL(s);
  run_setup_free(s);
  a.memory.limit = 0;
  a.memory.nodes_here = 0;
  s = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  ps_node_config cfg;
  run_node_config(s, 0, &cfg);
  CU_ASSERT_EQUAL(cfg.settings.hot_keys, 100000); /* asked 1e8: capped at the keys */
  CU_ASSERT_TRUE(cfg.num_hot_keys > 0 && cfg.num_hot_keys <= 100000);
  run_setup_free(s);
  cJSON_Delete(wl);
  cJSON_Delete(stat);
  cJSON_Delete(repl);
  cJSON_Delete(repl_owner);
}

static void test_worker_seed_contract(void) {
  /* The golden results rest on this formula: changing it changes every
   * sampled run. */
  CU_ASSERT_EQUAL(run_worker_seed(7, 3), ps_mix64(7 ^ ps_mix64(4)));
  CU_ASSERT_NOT_EQUAL(run_worker_seed(7, 3), run_worker_seed(7, 4));
  CU_ASSERT_NOT_EQUAL(run_worker_seed(7, 3), run_worker_seed(8, 3));
}

/* ------------------------------------------- a run on the in-memory harness */

typedef struct {
  harness *h;
} drive_ctx;

static int harness_wait_cb(void *ctx, ps_worker *w, ps_ticket t) {
  drive_ctx *d = ctx;
  return harness_wait(d->h, w, t) ? PS_OK : PS_ERR_INVAL;
}
static void no_compute(void *ctx, double flops, bool math_done) {
  (void)math_done;
  (void)ctx;
  (void)flops;
}
static double time_zero(void *ctx) {
  (void)ctx;
  return 0;
}

/* Two nodes of two workers under relocate, with samples: every worker driven
 * through run_worker_drive (one after the other), every node's report made,
 * metrics reduced: no push lost, every step counted. */
static void test_run_on_the_harness(void) {
  cJSON *wl = parse("{\"type\": \"zipf\", \"keys\": 200, \"skew\": 1.0, \"value_length\": 3, "
                    "\"reads_per_step\": 4, \"writes_per_step\": 2, \"samples_per_step\": 2, "
                    "\"steps_per_worker\": 30}");
  cJSON *pol = parse("{\"type\": \"relocate\", \"lookahead\": 4, "
                     "\"sampling\": {\"scheme\": \"preloc\"}}");
  char err[256];
  run_args a = {.workload = wl, .policy = pol, .nodes = 2, .workers_per_node = 2, .seed = 3};
  run_setup *s = run_setup_new(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  ps_node_config nc;
  run_node_config(s, 0, &nc);
  harness_config hc;
  harness_config_default(&hc);
  hc.nodes = 2;
  hc.workers = 2;
  hc.layout = nc.layout;
  hc.policy = nc.policy;
  hc.policy_json = nc.policy_json;
  hc.settings = nc.settings;
  hc.seed = 11;
  harness *h = harness_new(&hc);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  drive_ctx d = {h};
  wl_driver_env env = {.ctx = &d, .wait = harness_wait_cb, .compute = no_compute,
                       .now = time_zero};
  run_worker w[2][2];
  for (uint32_t n = 0; n < 2; n++)
    for (uint32_t i = 0; i < 2; i++) {
      CU_ASSERT_EQUAL_FATAL(run_worker_init(&w[n][i], s, harness_node(h, n), i, err, sizeof err), 0);
      CU_ASSERT_EQUAL(w[n][i].rank, n * 2 + i);
      CU_ASSERT_PTR_NOT_NULL(w[n][i].sampler);
    }
  for (uint32_t n = 0; n < 2; n++)
    for (uint32_t i = 0; i < 2; i++) CU_ASSERT_EQUAL(run_worker_drive(&w[n][i], s, env), PS_OK);
  for (uint32_t n = 0; n < 2; n++) ps_node_finish(harness_node(h, n), 0);
  harness_drain(h);
  run_node_report r[2];
  for (uint32_t n = 0; n < 2; n++) {
    CU_ASSERT_EQUAL_FATAL(run_report_make(&r[n], harness_node(h, n), 2, NULL), PS_OK);
    for (uint32_t i = 0; i < 2; i++) CU_ASSERT_EQUAL(run_report_worker(&r[n], &w[n][i]), PS_OK);
  }
  /* Keys homed counted once for all nodes are each key's home, counted, and
   * give each node the count of its own report. */
  const ps_layout *l = ps_node_layout(harness_node(h, 0));
  uint64_t homed[2], by_key[2] = {0, 0};
  CU_ASSERT_EQUAL_FATAL(ps_layout_homes(l), 2);
  ps_layout_homed_counts(l, homed);
  for (uint64_t i = 0; i < ps_layout_num_keys(l); i++)
    by_key[ps_layout_home(l, ps_layout_key_at(l, i))]++;
  for (uint32_t n = 0; n < 2; n++) {
    CU_ASSERT_EQUAL(homed[n], by_key[n]);
    run_node_report shared;
    CU_ASSERT_EQUAL_FATAL(run_report_make(&shared, harness_node(h, n), 2, homed), PS_OK);
    CU_ASSERT_EQUAL(shared.owned_keys, r[n].owned_keys);
    CU_ASSERT_EQUAL(ps_node_owned_keys(harness_node(h, n), homed), r[n].owned_keys);
    run_report_free(&shared);
  }
  run_worker stray = {.index = 2};
  CU_ASSERT_EQUAL(run_report_worker(&r[0], &stray), PS_ERR_INVAL);
  cJSON *m = run_metrics(r, 2, 1.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "steps"), 120);
  CU_ASSERT_EQUAL(metric(m, "samples"), 240);
  CU_ASSERT_TRUE(metric(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
  CU_ASSERT_TRUE(metric(m, "relocations") > 0);
  cJSON_Delete(m);
  for (uint32_t n = 0; n < 2; n++) {
    run_report_free(&r[n]);
    for (uint32_t i = 0; i < 2; i++) run_worker_free(&w[n][i]);
  }
  harness_free(h);
  run_setup_free(s);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
}

/* A straggler's time line: the factor at a time, and work stretched
 * through phases (half speed in [1, 2), quarter speed from 3 on). */
static void test_phase_stretch(void) {
  const run_phase p[2] = {{1, 2, 0.5, 0.25}, {3, INFINITY, 0.25, 1}};
  CU_ASSERT_EQUAL(run_phase_factor(p, 2, 0.5, false), 1);
  CU_ASSERT_EQUAL(run_phase_factor(p, 2, 1, false), 0.5);
  CU_ASSERT_EQUAL(run_phase_factor(p, 2, 1.5, true), 0.25);
  CU_ASSERT_EQUAL(run_phase_factor(p, 2, 2, false), 1); /* until_s is outside */
  CU_ASSERT_EQUAL(run_phase_factor(p, 2, 1e9, false), 0.25);
  CU_ASSERT_EQUAL(run_phase_stretch(NULL, 0, 5, 2), 2);
  CU_ASSERT_EQUAL(run_phase_stretch(p, 2, 0, 0.5), 0.5);   /* before the phases */
  CU_ASSERT_EQUAL(run_phase_stretch(p, 2, 1, 0.25), 0.5);  /* inside the first */
  /* From 0.5: 0.5 of work to 1, 0.5 in [1, 2), 1 in [2, 3), then 0.5 at a
   * quarter: 2 more. 2.5 of work take 4.5. */
  CU_ASSERT_DOUBLE_EQUAL(run_phase_stretch(p, 2, 0.5, 2.5), 4.5, 1e-12);
  CU_ASSERT_EQUAL(run_phase_stretch(p, 2, 10, 1), 4);      /* the last, open-ended */
}

/* The replica check (run/replica_check.c): 3 nodes hold replicas of 4 keys
 * by all-reduce (each key's owner mirrors it to the other two); every worker
 * pushes 1.0 to each float of every key twice, with a sync round between.
 * Once finished and quiet, every replica equals its owner exactly. With a
 * deliberate bug (node 1's replicas count their own deltas twice) the owners
 * still sum to the pushes, as value_sum sees them, but the check reports the
 * difference: 6 + 2 against 6, relative to 8. */
static double replica_check_run(bool double_count, uint64_t *checked, double *owned) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = 3;
  c.workers = 1;
  c.layout.tables[0] = (ps_table){100, 4, 2};
  c.seed = 5;
  harness *h = harness_new(&c);
  ps_key keys[4] = {100, 101, 102, 103};
  for (uint32_t n = 0; n < 3; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), keys, 4, PS_SYNC_ALLREDUCE),
                    PS_OK);
  ps_node_testing_double_count(harness_node(h, 1), double_count);
  float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  ps_ticket t;
  for (int round = 0; round < 2; round++) {
    for (uint32_t n = 0; n < 3; n++)
      CU_ASSERT_EQUAL(ps_push(harness_worker(h, n, 0), keys, 4, ones, 8, &t, round), PS_OK);
    for (uint32_t n = 0; n < 3; n++)
      ps_node_sync_replicas(harness_node(h, n), PS_SYNC_ALLREDUCE, 0, round);
    harness_drain(h);
  }
  for (uint32_t n = 0; n < 3; n++) ps_node_finish(harness_node(h, n), 2);
  harness_drain(h);
  uint8_t *all = NULL;
  size_t len = 0;
  for (uint32_t n = 0; n < 3; n++) {
    uint8_t *mine;
    size_t k;
    CU_ASSERT_EQUAL_FATAL(run_replica_owned(harness_node(h, n), &mine, &k), PS_OK);
    all = realloc(all, len + k);
    if (k) memcpy(all + len, mine, k);
    len += k;
    free(mine);
  }
  double diff = 0;
  *checked = 0;
  *owned = 0;
  for (uint32_t n = 0; n < 3; n++) {
    run_node_report r = {0};
    CU_ASSERT_EQUAL(run_replica_check(&r, harness_node(h, n), all, len), PS_OK);
    diff = fmax(diff, r.replica_max_diff);
    *checked += r.replicas_checked;
    double sum;
    uint64_t moving;
    ps_node_owned_sum(harness_node(h, n), &sum, &moving);
    *owned += sum;
  }
  uint8_t bad[3] = {1, 2, 3}; /* not a record */
  run_node_report r = {0};
  CU_ASSERT_EQUAL(run_replica_check(&r, harness_node(h, 0), bad, sizeof bad), PS_ERR_INVAL);
  free(all);
  harness_free(h);
  return diff;
}

static void test_replica_check(void) {
  uint64_t checked;
  double owned;
  CU_ASSERT_EQUAL(replica_check_run(false, &checked, &owned), 0);
  CU_ASSERT_EQUAL(checked, 4 * 2);
  CU_ASSERT_EQUAL(owned, 3 * 2 * 8);
  CU_ASSERT_DOUBLE_EQUAL(replica_check_run(true, &checked, &owned), 2.0 / 8, 1e-12);
  CU_ASSERT_EQUAL(checked, 4 * 2);
  CU_ASSERT_EQUAL(owned, 3 * 2 * 8); /* value_sum misses it */
}

/* The seal a run uses: GMAC only where every node makes it, unless
 * PSLAB_SEAL forces one; a forced GMAC where a node cannot, or another
 * word, is a clear error naming the variable. */
static void test_seal_choice(void) {
  char err[256];
  ps_seal s = PS_SEAL_END;
  unsetenv(RUN_SEAL_ENV);
  CU_ASSERT_EQUAL(run_seal_choose(true, &s, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s, PS_SEAL_GMAC);
  CU_ASSERT_EQUAL(run_seal_choose(false, &s, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s, PS_SEAL_SIPHASH);
  setenv(RUN_SEAL_ENV, "siphash", 1);
  CU_ASSERT_EQUAL(run_seal_choose(true, &s, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s, PS_SEAL_SIPHASH);
  setenv(RUN_SEAL_ENV, "gmac", 1);
  CU_ASSERT_EQUAL(run_seal_choose(true, &s, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s, PS_SEAL_GMAC);
  CU_ASSERT_EQUAL(run_seal_choose(false, &s, err, sizeof err), -1);
  CU_ASSERT_TRUE(unit_contains(err, "PSLAB_SEAL=gmac"));
  setenv(RUN_SEAL_ENV, "aes", 1);
  CU_ASSERT_EQUAL(run_seal_choose(true, &s, err, sizeof err), -1);
  CU_ASSERT_TRUE(unit_contains(err, "PSLAB_SEAL=\"aes\": expected"));
  setenv(RUN_SEAL_ENV, "auto", 1);
  CU_ASSERT_EQUAL(run_seal_choose(false, &s, err, sizeof err), 0);
  CU_ASSERT_EQUAL(s, PS_SEAL_SIPHASH);
  unsetenv(RUN_SEAL_ENV);
}

/* half_time_s and last_step_s: the latest worker's half_s and last_s, on
 * time_s's clock; absent when a worker has none (NaN: it did not run those
 * steps; 0: a report made by hand); carried through the report's text
 * exactly. */
static void test_half_time_metric(void) {
  run_node_report r[2];
  make_reports(r);
  char err[128];
  cJSON *m = run_metrics(r, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "half_time_s")); /* made by hand: none */
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "last_step_s"));
  cJSON_Delete(m);
  const double half[4] = {2.5, 2.75, 3.125, 1.5}, last[4] = {4.5, 4.75, 4.25, 4};
  for (int k = 0; k < 4; k++) {
    r[k / 2].workers[k % 2].half_s = half[k];
    r[k / 2].workers[k % 2].last_s = last[k];
  }
  run_node_report back[2];
  for (int k = 0; k < 2; k++) {
    char *text = run_report_encode(&r[k]);
    CU_ASSERT_EQUAL_FATAL(run_report_decode(text, strlen(text), &back[k], err, sizeof err), 0);
    free(text);
  }
  for (int k = 0; k < 4; k++) {
    CU_ASSERT_EQUAL(back[k / 2].workers[k % 2].half_s, half[k]);
    CU_ASSERT_EQUAL(back[k / 2].workers[k % 2].last_s, last[k]);
  }
  m = run_metrics(back, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "half_time_s"), 3.125);
  CU_ASSERT_EQUAL(metric(m, "last_step_s"), 4.75);
  cJSON_Delete(m);
  r[1].workers[1].half_s = r[1].workers[1].last_s = NAN; /* one did not get there */
  char *text = run_report_encode(&r[1]);
  run_report_free(&back[1]);
  CU_ASSERT_EQUAL_FATAL(run_report_decode(text, strlen(text), &back[1], err, sizeof err), 0);
  free(text);
  CU_ASSERT(isnan(back[1].workers[1].half_s));
  m = run_metrics(back, 2, 5.0, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "half_time_s"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(m, "last_step_s"));
  cJSON_Delete(m);
  for (int k = 0; k < 2; k++) run_report_free(&back[k]);
  for (int k = 0; k < 4; k++) r[k / 2].workers[k % 2].half_s = r[k / 2].workers[k % 2].last_s = 0;
}

PSLAB_SUITE("run",
            {"replica check: replicas against owners, a double count caught",
             test_replica_check},
            {"metric table: one entry per metric, each complete", test_metric_table_shape},
            {"metrics from node reports, by hand", test_metrics_from_reports},
            {"metrics absent when they do not apply", test_metrics_absent_when_not_applicable},
            {"loss and quality per epoch, time to quality", test_quality_metrics},
            {"evaluation points and the final evaluation", test_eval_points_and_final},
            {"report text round trip is exact", test_report_text_round_trip},
            {"half_time_s, last_step_s: the latest worker's", test_half_time_metric},
            {"servers: load in reports, and the servers metric",
             test_report_load_and_servers_metric},
            {"telemetry: response times, handling, wake-ups, CPU", test_telemetry_metrics},
            {"report decoder refuses bad text", test_report_decode_refuses_bad_text},
            {"setup errors name the object", test_setup_errors_name_the_object},
            {"setup refuses what memory cannot hold",
             test_setup_refuses_what_memory_cannot_hold},
            {"worker seed contract", test_worker_seed_contract},
            {"a run on the in-memory harness", test_run_on_the_harness},
            {"a straggler's phases stretch work", test_phase_stretch},
            {"the seal: GMAC where every node makes it, PSLAB_SEAL forces one",
             test_seal_choice})
