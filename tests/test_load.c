/*
 * Servers' load as the core counts it (model/server_load.c): what a server served
 * for requests that came in messages, over time in buckets that widen as a
 * run grows, what the backend reports of its handling, and the response
 * times clients see, by the server that answered.
 */
#include "tests/harness.h"
#include "tests/unit.h"

#include <string.h>

/* One server (node 0) and two worker nodes; keys 100.. of length 4. */
static harness *make(void) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = 3;
  c.layout.num_servers = 1;
  c.layout.num_worker_nodes = 2;
  c.layout.tables[0] = (ps_table){100, 64, 4};
  c.seed = 3;
  return harness_new(&c);
}

static void test_served_keys_over_time(void) {
  harness *h = make();
  ps_node *server = harness_node(h, 0);
  ps_worker *w = harness_worker(h, 1, 0);
  ps_key keys[3] = {100, 101, 102};
  float vals[12] = {1}, out[12];
  ps_ticket t;
  harness_set_now(h, 0.0005);
  CU_ASSERT_EQUAL(ps_push(w, keys, 3, vals, 12, &t, 0), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  ps_server_load l;
  ps_node_server_load(server, &l);
  CU_ASSERT_EQUAL(l.keys, 3);
  CU_ASSERT_EQUAL(l.floats, 12);
  uint64_t series[PS_SERIES_MAX];
  double width;
  CU_ASSERT_EQUAL(ps_node_served_series(server, series, PS_SERIES_MAX, &width), 1);
  CU_ASSERT_EQUAL(width, PS_SERIES_FIRST_BUCKET_S);
  CU_ASSERT_EQUAL(series[0], 3);
  /* At 0.3 s a bucket of 1 ms would be the 300th: buckets widen to 2 ms,
   * pairs merged, and the first 3 keys stay in the first. */
  harness_set_now(h, 0.3);
  CU_ASSERT_EQUAL(ps_pull(w, keys, 2, out, 8, &t, 0.2999), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  CU_ASSERT_EQUAL(ps_node_served_series(server, series, PS_SERIES_MAX, &width), 151);
  CU_ASSERT_EQUAL(width, 2 * PS_SERIES_FIRST_BUCKET_S);
  CU_ASSERT_EQUAL(series[0], 3);
  CU_ASSERT_EQUAL(series[150], 2);
  CU_ASSERT_EQUAL(series[149], 0);
  ps_node_server_load(server, &l);
  CU_ASSERT_EQUAL(l.keys, 5);
  /* Worker nodes serve nothing. */
  ps_node_server_load(harness_node(h, 1), &l);
  CU_ASSERT_EQUAL(l.keys, 0);
  harness_free(h);
}

static void test_response_times_by_server(void) {
  harness *h = make();
  ps_worker *w = harness_worker(h, 2, 0);
  ps_key keys[2] = {100, 101};
  float vals[8] = {0}, out[8];
  ps_ticket t;
  harness_set_now(h, 0.003);
  CU_ASSERT_EQUAL(ps_push(w, keys, 2, vals, 8, &t, 0.001), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  harness_set_now(h, 0.5);
  CU_ASSERT_EQUAL(ps_pull(w, keys, 1, out, 4, &t, 0.004), PS_PENDING);
  CU_ASSERT_TRUE(harness_wait(h, w, t));
  ps_rt_stats rt;
  CU_ASSERT_EQUAL(ps_node_response_times(harness_node(h, 2), 0, &rt), PS_OK);
  CU_ASSERT_EQUAL(rt.count, 2);
  CU_ASSERT_EQUAL(rt.keys, 3);
  CU_ASSERT_DOUBLE_EQUAL(rt.sum_s, 0.002 + 0.496, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(rt.max_s, 0.496, 1e-9);
  /* 2 ms and 496 ms, in their half-octave buckets. */
  CU_ASSERT_DOUBLE_EQUAL(ps_rt_quantile(rt.hist, 0.5), 1e-6 * 2048, 1e-12);
  CU_ASSERT(ps_rt_quantile(rt.hist, 1.0) >= 0.496 && ps_rt_quantile(rt.hist, 1.0) < 0.496 * 1.42);
  /* Nobody else answered node 2; node 1 asked nothing. */
  CU_ASSERT_EQUAL(ps_node_response_times(harness_node(h, 2), 1, &rt), PS_OK);
  CU_ASSERT_EQUAL(rt.count, 0);
  CU_ASSERT_EQUAL(ps_node_response_times(harness_node(h, 1), 0, &rt), PS_OK);
  CU_ASSERT_EQUAL(rt.count, 0);
  CU_ASSERT_EQUAL(ps_node_response_times(harness_node(h, 2), 3, &rt), PS_ERR_INVAL);
  ps_rt_stats sum = {0}, one = {.count = 1, .keys = 2, .sum_s = 0.5, .max_s = 0.5};
  one.hist[3] = 1;
  ps_rt_stats_add(&sum, &one);
  ps_rt_stats_add(&sum, &one);
  CU_ASSERT_TRUE(sum.count == 2 && sum.keys == 4 && sum.sum_s == 1.0 && sum.max_s == 0.5 &&
                 sum.hist[3] == 2);
  harness_free(h);
}

/* What the backend reports of handling: busy time summed, messages waiting
 * summed, the most and how often each count, wake-ups. Local workers' direct accesses are not served keys. */
static void test_handling_reported_by_the_backend(void) {
  harness_config c;
  harness_config_default(&c);
  c.layout.tables[0] = (ps_table){100, 64, 4};
  harness *h = harness_new(&c);
  ps_node *n = harness_node(h, 0);
  ps_node_note_handling(n, 0.25, 3);
  ps_node_note_handling(n, 0.5, 1);
  ps_node_note_handling(n, 0, 0);
  ps_server_load l;
  ps_node_server_load(n, &l);
  CU_ASSERT_EQUAL(l.handled, 3);
  CU_ASSERT_EQUAL(l.busy_s, 0.75);
  CU_ASSERT_EQUAL(l.queue_sum, 4);
  CU_ASSERT_EQUAL(l.queue_max, 3);
  /* How often each count waited: exact below 16, in octaves above. */
  CU_ASSERT_TRUE(l.queue_hist[0] == 1 && l.queue_hist[1] == 1 && l.queue_hist[3] == 1);
  CU_ASSERT_EQUAL(ps_queue_quantile(l.queue_hist, 0.5), 1);
  CU_ASSERT_EQUAL(ps_queue_quantile(l.queue_hist, 1.0), 3);
  ps_node_note_handling(n, 0, 15);
  ps_node_note_handling(n, 0, 16);
  ps_node_note_handling(n, 0, 40);
  ps_node_note_handling(n, 0, UINT32_MAX);
  ps_node_server_load(n, &l);
  CU_ASSERT_EQUAL(l.queue_hist[15], 1);
  CU_ASSERT_EQUAL(l.queue_hist[PS_QUEUE_EXACT], 1);     /* 16..31 */
  CU_ASSERT_EQUAL(l.queue_hist[PS_QUEUE_EXACT + 1], 1); /* 32..63 */
  CU_ASSERT_EQUAL(l.queue_hist[PS_QUEUE_BUCKETS - 1], 1);
  CU_ASSERT_EQUAL(ps_queue_quantile(l.queue_hist, 6.0 / 7), 63);
  CU_ASSERT_EQUAL(ps_queue_quantile(l.queue_hist, 1.0), (double)UINT32_MAX);
  uint64_t none[PS_QUEUE_BUCKETS] = {0};
  CU_ASSERT_EQUAL(ps_queue_quantile(none, 0.5), 0);
  /* Wake-ups of the handling thread, as the backend reports them. */
  CU_ASSERT_EQUAL(l.wakeups, 0);
  ps_node_note_wakeup(n);
  ps_node_note_wakeup(n);
  ps_node_server_load(n, &l);
  CU_ASSERT_EQUAL(l.wakeups, 2);
  const ps_layout *lay = ps_node_layout(n);
  ps_key k = 100;
  while (ps_layout_home(lay, k) != 0) k++;
  float one[4] = {1, 1, 1, 1};
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, 0, 0), &k, 1, one, 4, &t, 0), PS_OK);
  ps_node_server_load(n, &l);
  CU_ASSERT_EQUAL(l.keys, 0);
  harness_free(h);
}

PSLAB_SUITE("load", {"keys served, over time", test_served_keys_over_time},
            {"response times by server", test_response_times_by_server},
            {"handling as the backend reports it", test_handling_reported_by_the_backend})
