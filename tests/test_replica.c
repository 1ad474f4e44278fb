/*
 * Replicas (model/replica.c) on in-memory clusters: convergence of every copy
 * to the exact sum of pushes for both sync modes, with relocations of the
 * other keys interleaved; read-your-writes on a replica; replicas made and
 * dropped at run time; staleness accounting.
 */
#include "model/testing.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <stdlib.h>
#include <string.h>

enum { FIRST = 100 };

static harness *make(uint32_t nodes, uint32_t workers, uint32_t keys, uint32_t len,
                     uint64_t seed) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.workers = workers;
  c.layout.tables[0] = (ps_table){FIRST, keys, len};
  c.seed = seed;
  return harness_new(&c);
}

/* Runs sync rounds on every node, delivering everything between them, until
 * a round leaves nothing to do: deltas first, then fresh values. */
static void quiesce(harness *h, uint32_t nodes, ps_sync_mode mode) {
  harness_drain(h);
  for (int round = 0; round < 3; round++) {
    harness_set_now(h, 1.0 + round);
    for (uint32_t n = 0; n < nodes; n++) ps_node_sync_replicas(harness_node(h, n), mode, 0, 1.0 + round);
    harness_drain(h);
  }
}

typedef struct {
  uint32_t nodes, workers, keys, hot;
  ps_sync_mode mode;
  bool churn; /* owner mode: any key relocates, replicas come and go */
  uint64_t seed;
} scenario;

/* Workers push +1 to component g (their global index) of random keys; the
 * first `hot` keys are replicated on every node, the rest relocate now and
 * then; sync rounds run at random moments. At the end every copy of every key
 * equals the pushes made to it, component by component. */
static void run(const scenario *sc) {
  uint32_t total = sc->nodes * sc->workers, len = total;
  harness *h = make(sc->nodes, sc->workers, sc->keys, len, sc->seed);
  ps_key *hot = malloc(sc->hot * sizeof *hot);
  for (uint32_t i = 0; i < sc->hot; i++) hot[i] = FIRST + i;
  for (uint32_t n = 0; n < sc->nodes; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), hot, sc->hot, sc->mode), PS_OK);
  uint64_t *pushed = calloc((size_t)sc->keys * total, sizeof *pushed);
  float *vals = calloc(len * 3, sizeof *vals), *out = calloc(len * 3, sizeof *out);
  for (int step = 0; step < 3000; step++) {
    uint32_t g = (uint32_t)(harness_rand(h) % total);
    ps_worker *w = harness_worker(h, g / sc->workers, g % sc->workers);
    size_t n = 1 + harness_rand(h) % 3;
    ps_key keys[3];
    for (size_t i = 0; i < n; i++) keys[i] = FIRST + harness_rand(h) % sc->keys;
    uint64_t r = harness_rand(h) % 20;
    ps_ticket t;
    if (r < 12) {
      memset(vals, 0, len * 3 * sizeof *vals);
      for (size_t i = 0; i < n; i++) {
        vals[i * len + g] = 1;
        pushed[(keys[i] - FIRST) * total + g]++;
      }
      int rc = ps_push(w, keys, n, vals, n * len, &t, 0);
      CU_ASSERT(rc == PS_OK || rc == PS_PENDING);
    } else if (r < 16) {
      int rc = ps_pull(w, keys, n, out, n * len, &t, 0);
      CU_ASSERT(rc == PS_OK || rc == PS_PENDING);
      if (rc == PS_PENDING) CU_ASSERT_TRUE(harness_wait(h, w, t));
      for (size_t i = 0; i < n; i++) /* read-your-writes, replicas included */
        CU_ASSERT(out[i * len + g] == (float)pushed[(keys[i] - FIRST) * total + g]);
    } else if (r < 18 && sc->churn) {
      /* Owners move under their replicas (SYNCs then queue on keys in
       * transfer), and replicas are made and dropped at run time. */
      uint64_t what = harness_rand(h) % 3;
      int rc = what == 0   ? ps_localize(w, keys, 1, NULL, 0)
               : what == 1 ? ps_replicate(w, keys, 1, NULL, 0)
                           : ps_drop_replicas(w, keys, 1, 0);
      CU_ASSERT_EQUAL(rc, PS_OK);
    } else if (r < 18) {
      /* Cold keys; under all-reduce hot ones too, which must stay put (their
       * node serves them locally already; the churn variant moves them
       * under owner sync). */
      if (keys[0] >= FIRST + sc->hot || sc->mode == PS_SYNC_ALLREDUCE)
        CU_ASSERT_EQUAL(ps_localize(w, keys, 1, NULL, 0), PS_OK);
    } else {
      uint32_t node = (uint32_t)(harness_rand(h) % sc->nodes);
      ps_node_sync_replicas(harness_node(h, node), sc->mode, 0, step);
    }
    for (uint64_t d = harness_rand(h) % 4; d > 0; d--) harness_deliver_one(h);
  }
  quiesce(h, sc->nodes, sc->mode);
  float *v = calloc(len, sizeof *v);
  for (uint32_t i = 0; i < sc->keys; i++) {
    ps_key k = FIRST + i;
    uint32_t owner = harness_owner(h, k);
    CU_ASSERT_EQUAL_FATAL(ps_node_read_owned(harness_node(h, owner), k, v), PS_OK);
    for (uint32_t g = 0; g < total; g++) CU_ASSERT_EQUAL(v[g], (float)pushed[(size_t)i * total + g]);
    for (uint32_t n = 0; n < sc->nodes; n++) {
      if (n == owner) continue;
      int rc = ps_node_read_replica(harness_node(h, n), k, v);
      if (rc != PS_OK && (sc->churn || i >= sc->hot)) continue; /* no replica here */
      CU_ASSERT_EQUAL_FATAL(rc, PS_OK);
      for (uint32_t g = 0; g < total; g++)
        CU_ASSERT_EQUAL(v[g], (float)pushed[(size_t)i * total + g]);
    }
  }
  uint64_t syncs = 0, reads = 0;
  for (uint32_t n = 0; n < sc->nodes; n++) {
    ps_node_stats s;
    ps_node_get_stats(harness_node(h, n), &s);
    syncs += s.replica_syncs;
    reads += s.replica_reads;
  }
  CU_ASSERT(syncs > 0);
  CU_ASSERT(reads > 0);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  free(v);
  free(vals);
  free(out);
  free(pushed);
  free(hot);
  harness_free(h);
}

static void test_converge_through_owner(void) {
  for (uint64_t seed = 1; seed <= 24; seed++) {
    scenario sc = {.nodes = 2 + (uint32_t)(seed % 7), .workers = 1 + (uint32_t)(seed % 2),
                   .keys = 12, .hot = 4, .mode = PS_SYNC_OWNER, .seed = seed};
    run(&sc);
  }
}

static void test_converge_while_owners_move(void) {
  for (uint64_t seed = 1; seed <= 24; seed++) {
    scenario sc = {.nodes = 2 + (uint32_t)(seed % 7), .workers = 1 + (uint32_t)(seed % 2),
                   .keys = 12, .hot = 4, .mode = PS_SYNC_OWNER, .churn = true, .seed = seed};
    run(&sc);
  }
}

static void test_converge_by_allreduce(void) {
  for (uint64_t seed = 1; seed <= 24; seed++) {
    scenario sc = {.nodes = 2 + (uint32_t)(seed % 7), .workers = 1 + (uint32_t)(seed % 2),
                   .keys = 12, .hot = 4, .mode = PS_SYNC_ALLREDUCE, .seed = seed};
    run(&sc);
  }
}

/* A replica answers its node from memory, with the node's own pushes, before
 * any sync; another node's push shows after a round. */
static void test_replica_reads_locally(void) {
  harness *h = make(3, 1, 16, 2, 3);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  for (uint32_t n = 0; n < 3; n++)
    ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_OWNER);
  float one[2] = {1, 1}, out[2];
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, 1, 0), &k, 1, one, 2, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_pull(harness_worker(h, 1, 0), &k, 1, out, 2, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(out[0], 1.0f);
  CU_ASSERT_EQUAL(harness_in_flight(h), 0); /* no message so far */
  CU_ASSERT_EQUAL(ps_pull(harness_worker(h, 2, 0), &k, 1, out, 2, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(out[0], 0.0f); /* not synced yet */
  quiesce(h, 3, PS_SYNC_OWNER);
  CU_ASSERT_EQUAL(ps_pull(harness_worker(h, 2, 0), &k, 1, out, 2, &t, 5.0), PS_OK);
  CU_ASSERT_EQUAL(out[1], 1.0f);
  CU_ASSERT_EQUAL(ps_worker_key_locality(harness_worker(h, 2, 0), k), PS_KEY_LOCAL);
  /* A set on a replica: the pushes before it are overwritten at the owner. */
  float five[2] = {5, 5};
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, 2, 0), &k, 1, one, 2, &t, 5.0), PS_OK);
  CU_ASSERT_EQUAL(ps_set(harness_worker(h, 2, 0), &k, 1, five, 2, &t, 5.0), PS_OK);
  quiesce(h, 3, PS_SYNC_OWNER);
  CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, 0), k, out), PS_OK);
  CU_ASSERT_EQUAL(out[0], 5.0f);
  CU_ASSERT_EQUAL(ps_node_read_replica(harness_node(h, 1), k, out), PS_OK);
  CU_ASSERT_EQUAL(out[0], 5.0f);
  ps_node_stats s;
  ps_node_get_stats(harness_node(h, 2), &s);
  CU_ASSERT_EQUAL(s.replica_reads, 2);
  CU_ASSERT_EQUAL(s.staleness_max_s, 5.0 - 3.0); /* read at 5, last round at 3 */
  harness_free(h);
}

/* Replicas made at run time wait for their value; dropping one hands its
 * delta to the owner. */
static void test_replicate_and_drop_at_run_time(void) {
  harness *h = make(3, 1, 16, 2, 4);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  float two[2] = {2, 2}, out[2];
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, 0, 0), &k, 1, two, 2, &t, 0), PS_OK);
  ps_worker *w = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_replicate(w, &k, 1, &t, 0), PS_PENDING);
  CU_ASSERT_EQUAL(ps_worker_key_locality(w, k), PS_KEY_ARRIVING);
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, two, 2, &t, 0), PS_PENDING); /* queues */
  harness_drain(h);
  CU_ASSERT_TRUE(ps_worker_done(w, t));
  CU_ASSERT_EQUAL(ps_node_replica_count(harness_node(h, 1)), 1);
  CU_ASSERT_EQUAL(ps_pull(w, &k, 1, out, 2, &t, 0), PS_OK);
  CU_ASSERT_EQUAL(out[0], 4.0f);
  CU_ASSERT_EQUAL(ps_drop_replicas(w, &k, 1, 0), PS_OK);
  CU_ASSERT_EQUAL(ps_node_replica_count(harness_node(h, 1)), 0);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, 0), k, out), PS_OK);
  CU_ASSERT_EQUAL(out[0], 4.0f);
  CU_ASSERT_EQUAL(ps_worker_key_locality(w, k), PS_KEY_REMOTE);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
}

/* The answer to a SYNC sent before its replica was dropped must not become
 * the value of the next replica of the key: it misses what was pushed in
 * between (a push of this very worker, here). */
static void test_stale_sync_reply_ignored(void) {
  harness *h = make(2, 1, 8, 1, 1);
  ps_key k = FIRST;
  while (harness_owner(h, k) != 0) k++; /* home and owner: node 0 */
  ps_node *n1 = harness_node(h, 1);
  ps_worker *w = harness_worker(h, 1, 0);
  float one = 1, out = -1;
  ps_ticket t;
  int rc = ps_replicate(w, &k, 1, &t, 0);
  if (rc == PS_PENDING) CU_ASSERT_TRUE(harness_wait(h, w, t));
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, &one, 1, &t, 0), PS_OK); /* into the replica */
  CU_ASSERT_EQUAL(ps_node_sync_replicas(n1, PS_SYNC_OWNER, 0, 1), 1); /* SYNC(1) leaves */
  CU_ASSERT_EQUAL(ps_drop_replicas(w, &k, 1, 1), PS_OK); /* its answer still out */
  CU_ASSERT_EQUAL(ps_push(w, &k, 1, &one, 1, &t, 1), PS_PENDING); /* to the owner */
  CU_ASSERT_EQUAL(ps_replicate(w, &k, 1, &t, 1), PS_PENDING);    /* a replica again */
  while (harness_deliver_from(h, 1, 0)) continue; /* the owner serves all three */
  CU_ASSERT_TRUE(harness_deliver_from(h, 0, 1));  /* only the first answer */
  rc = ps_pull(w, &k, 1, &out, 1, &t, 2);
  if (rc == PS_PENDING) CU_ASSERT_TRUE(harness_wait(h, w, t));
  CU_ASSERT_EQUAL(out, 2.0f); /* both pushes: read-your-writes */
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_node_read_replica(n1, k, &out), PS_OK);
  CU_ASSERT_EQUAL(out, 2.0f);
  CU_ASSERT_EQUAL(harness_recv_errors(h), 0);
  harness_free(h);
}

/* ps_node_finish under all-reduce: a replica's pending delta reaches every
 * copy once, not the owner only (whose mirror would send it back to the
 * replica it came from as well). */
static void test_finish_allreduce_counts_once(void) {
  harness *h = make(3, 1, 8, 1, 1);
  ps_key k = FIRST;
  uint32_t owner = harness_owner(h, k), r = (owner + 1) % 3;
  for (uint32_t n = 0; n < 3; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float one = 1, v;
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(harness_worker(h, r, 0), &k, 1, &one, 1, &t, 0), PS_OK);
  for (uint32_t n = 0; n < 3; n++) ps_node_finish(harness_node(h, n), 0);
  quiesce(h, 3, PS_SYNC_ALLREDUCE);
  for (uint32_t n = 0; n < 3; n++) {
    int rc = n == owner ? ps_node_read_owned(harness_node(h, n), k, &v)
                        : ps_node_read_replica(harness_node(h, n), k, &v);
    CU_ASSERT_EQUAL(rc, PS_OK);
    CU_ASSERT_EQUAL(v, 1.0f);
  }
  harness_free(h);
}

/* Staleness by hand. Node 0 owns key k; node 1 holds a replica of it. At
 * every millisecond t = 0..11 node 0's worker pushes k and finishes its step
 * (its clock becomes t + 1), and node 1's worker reads its replica at clock t
 * and finishes its step. Both nodes run a sync round at 4 and 8 ms, before
 * the steps; every message takes 1.5 ms. A read's staleness is its time
 * minus the time the newest delta from node 0 it sees was sent, and its
 * clock minus node 0's clock then; before any, from 0 and clock 0. */
static void staleness_by_hand(ps_sync_mode mode, ps_node_stats *s) {
  harness *h = make(2, 1, 16, 1, 7);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  for (uint32_t n = 0; n < 2; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, mode), PS_OK);
  const double ms = 1e-3, latency = 1.5 * ms;
  double due = -1; /* when the one message in flight arrives */
  float one = 1, out;
  ps_ticket t;
  for (int half = 0; half < 24; half++) {
    double now = half * 0.5 * ms;
    if (due >= 0 && now >= due) {
      harness_set_now(h, due);
      CU_ASSERT_TRUE(harness_deliver_one(h));
      due = harness_in_flight(h) ? due + latency : -1; /* the owner's answer */
    }
    if (half % 2) continue;
    if (half == 8 || half == 16) {
      for (uint32_t n = 0; n < 2; n++) ps_node_sync_replicas(harness_node(h, n), mode, 0, now);
      CU_ASSERT_EQUAL(harness_in_flight(h), 1);
      due = now + latency;
    }
    CU_ASSERT_EQUAL(ps_push(harness_worker(h, 0, 0), &k, 1, &one, 1, &t, now), PS_OK);
    ps_advance_clock(harness_worker(h, 0, 0), now);
    CU_ASSERT_EQUAL(ps_pull(harness_worker(h, 1, 0), &k, 1, &out, 1, &t, now), PS_OK);
    ps_advance_clock(harness_worker(h, 1, 0), now);
  }
  CU_ASSERT_EQUAL(harness_in_flight(h), 0);
  ps_node_get_stats(harness_node(h, 1), s);
  harness_free(h);
}

/* All-reduce: node 0's DELTAs leave at 4 and 8 ms (its clock 4 and 8) and
 * arrive at 5.5 and 9.5; node 1's own rounds (nothing to send) change
 * nothing. Reads at t = 0..5 are t ms and t steps stale; at 6..9, t - 4; at
 * 10 and 11, t - 8: 34 in all, 5 at most (a round of its own 0..3 ms ago is
 * not what the replica has not seen). */
static void test_staleness_allreduce_by_hand(void) {
  ps_node_stats s;
  staleness_by_hand(PS_SYNC_ALLREDUCE, &s);
  CU_ASSERT_EQUAL(s.replica_reads, 12);
  CU_ASSERT_DOUBLE_EQUAL(s.staleness_sum_s, 34e-3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s.staleness_max_s, 5e-3, 1e-12);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 34);
  CU_ASSERT_EQUAL(s.staleness_max_steps, 5);
  CU_ASSERT_EQUAL(s.staleness_steps_hist[0], 1); /* 0 steps: the read at 0 */
  CU_ASSERT_EQUAL(s.staleness_steps_hist[3], 4); /* 4 or 5 steps: the reads at 4, 5, 8, 9 */
  CU_ASSERT_EQUAL(ps_staleness_steps_quantile(s.staleness_steps_hist, 0.99), 7);
}

/* All-reduce: a node whose round finds nothing to send after one that
 * sent says so (an empty DELTA), and a node that sent its last deltas
 * (ps_node_finish) leaves nothing behind: node 1's reads after either came
 * are not stale; a node that has sent nothing yet (2) is not waited for. */
static void test_staleness_allreduce_idle_and_last(void) {
  harness *h = make(3, 1, 16, 1, 8);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  for (uint32_t n = 0; n < 3; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float one = 1, out;
  ps_ticket t;
  ps_worker *w0 = harness_worker(h, 0, 0), *w1 = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.001), PS_OK);
  ps_advance_clock(w0, 0.001);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.002);
  harness_set_now(h, 0.003);
  harness_drain(h);
  ps_advance_clock(w1, 0.004);
  ps_advance_clock(w1, 0.004);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.004), PS_OK); /* 2 ms, 1 step */
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.0045); /* nothing */
  CU_ASSERT_EQUAL(harness_in_flight(h), 2); /* an empty DELTA to nodes 1 and 2 */
  harness_set_now(h, 0.005);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.0055), PS_OK); /* 0 */
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.006), PS_OK);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.006);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.0065); /* idle again */
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.007), PS_OK);
  ps_node_finish(harness_node(h, 0), 0.007);
  harness_set_now(h, 0.0075);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.008), PS_OK); /* 0 */
  CU_ASSERT_EQUAL(out, 3.0f);
  ps_node_stats s;
  ps_node_get_stats(harness_node(h, 1), &s);
  CU_ASSERT_EQUAL(s.replica_reads, 3);
  CU_ASSERT_DOUBLE_EQUAL(s.staleness_sum_s, 2e-3, 1e-12);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 2); /* node 1's two steps at 4 ms */
  harness_free(h);
}

/* All-reduce: a node whose last round sent its deltas says it is done when
 * it finishes with nothing left to send (an empty last DELTA): the other
 * node's later reads miss nothing of it. */
static void test_staleness_allreduce_finish_with_nothing_left(void) {
  harness *h = make(2, 1, 16, 1, 11);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  for (uint32_t n = 0; n < 2; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float one = 1, out;
  ps_ticket t;
  ps_worker *w0 = harness_worker(h, 0, 0), *w1 = harness_worker(h, 1, 0);
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.001), PS_OK);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.002);
  harness_set_now(h, 0.003);
  harness_drain(h);
  ps_node_finish(harness_node(h, 0), 0.004);
  CU_ASSERT_EQUAL(harness_in_flight(h), 1); /* its last word, no keys */
  harness_set_now(h, 0.005);
  harness_drain(h);
  for (int i = 0; i < 3; i++) ps_advance_clock(w1, 0.006);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.007), PS_OK);
  CU_ASSERT_EQUAL(out, 1.0f);
  ps_node_stats s;
  ps_node_get_stats(harness_node(h, 1), &s);
  CU_ASSERT_EQUAL(s.replica_reads, 1);
  CU_ASSERT_EQUAL(s.staleness_sum_s, 0);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 0);
  harness_free(h);
}

/* Staleness in the reader's own steps, whatever pace the writer keeps. Node
 * 0's worker takes 10 steps at 1 ms and pushes k; its DELTA leaves at 2 ms
 * and arrives at 3. Node 1's worker steps at 1, 2.5 and 2.6 ms and reads at
 * 4 ms: 2 ms and 2 of its steps stale (its clock, 3, is behind the writer's
 * 10: a count by clocks said 0). It takes 40 more steps, from 5 ms, and
 * reads at 6 ms: 4 ms and 42 steps (by clocks: 43 - 10 = 33). */
static void test_staleness_in_the_readers_steps(void) {
  harness *h = make(2, 1, 16, 1, 9);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  for (uint32_t n = 0; n < 2; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float one = 1, out;
  ps_ticket t;
  ps_worker *w0 = harness_worker(h, 0, 0), *w1 = harness_worker(h, 1, 0);
  for (int i = 0; i < 10; i++) ps_advance_clock(w0, 0.001);
  ps_advance_clock(w1, 0.001);
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.001), PS_OK);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.002);
  ps_advance_clock(w1, 0.0025);
  ps_advance_clock(w1, 0.0026);
  harness_set_now(h, 0.003);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.004), PS_OK);
  CU_ASSERT_EQUAL(out, 1.0f);
  for (int i = 0; i < 40; i++) ps_advance_clock(w1, 0.005 + i * 1e-5);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.006), PS_OK);
  ps_node_stats s;
  ps_node_get_stats(harness_node(h, 1), &s);
  CU_ASSERT_EQUAL(s.replica_reads, 2);
  CU_ASSERT_DOUBLE_EQUAL(s.staleness_sum_s, 6e-3, 1e-12);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 2 + 42);
  CU_ASSERT_EQUAL(s.staleness_max_steps, 42);
  harness_free(h);
}

/* Reads far behind: the last 1024 of the reader's steps count exactly,
 * older ones to within 64 steps and never more than it took; a read of a
 * copy older than the reader's first step counts every step. */
static void test_staleness_steps_far_behind(void) {
  harness *h = make(2, 1, 16, 1, 10);
  ps_key k = FIRST;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
  for (uint32_t n = 0; n < 2; n++)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(harness_node(h, n), &k, 1, PS_SYNC_ALLREDUCE),
                    PS_OK);
  float one = 1, out;
  ps_ticket t;
  ps_worker *w0 = harness_worker(h, 0, 0), *w1 = harness_worker(h, 1, 0);
  ps_node_stats s;
  /* before any DELTA: from the run's start, every step (3000) */
  for (int i = 0; i < 100; i++) ps_advance_clock(w1, 0.001 + i * 1e-6);
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.002), PS_OK);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.002);
  for (int i = 0; i < 2900; i++) ps_advance_clock(w1, 0.003 + i * 1e-6);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.006), PS_OK);
  ps_node_get_stats(harness_node(h, 1), &s);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 3000);
  /* the DELTA of 2 ms: 2900 steps since, more than the fine log holds */
  harness_set_now(h, 0.007);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.008), PS_OK);
  ps_node_get_stats(harness_node(h, 1), &s);
  uint64_t far = s.staleness_sum_steps - 3000;
  CU_ASSERT(far <= 2900 && far > 2900 - 64);
  /* another DELTA at 9 ms: 1000 steps since, exactly */
  CU_ASSERT_EQUAL(ps_push(w0, &k, 1, &one, 1, &t, 0.009), PS_OK);
  ps_node_sync_replicas(harness_node(h, 0), PS_SYNC_ALLREDUCE, 0, 0.009);
  harness_set_now(h, 0.0095);
  harness_drain(h);
  for (int i = 0; i < 1000; i++) ps_advance_clock(w1, 0.01 + i * 1e-6);
  CU_ASSERT_EQUAL(ps_pull(w1, &k, 1, &out, 1, &t, 0.012), PS_OK);
  CU_ASSERT_EQUAL(out, 2.0f);
  ps_node_get_stats(harness_node(h, 1), &s);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 3000 + far + 1000);
  harness_free(h);
}

/* Through the owner: node 1's SYNCs leave at 4 and 8 ms, the owner answers
 * at 5.5 and 9.5 (its clock 6 and 10), the answers arrive at 7 and 11. Reads
 * at t = 0..6 are t ms and t steps stale; at 7..10, t - 5.5 ms and t - 6
 * steps; at 11, 1.5 ms and 1 step: 34.5 ms and 32 steps in all, 6 at most. */
static void test_staleness_owner_by_hand(void) {
  ps_node_stats s;
  staleness_by_hand(PS_SYNC_OWNER, &s);
  CU_ASSERT_EQUAL(s.replica_reads, 12);
  CU_ASSERT_DOUBLE_EQUAL(s.staleness_sum_s, 34.5e-3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s.staleness_max_s, 6e-3, 1e-12);
  CU_ASSERT_EQUAL(s.staleness_sum_steps, 32);
  CU_ASSERT_EQUAL(s.staleness_max_steps, 6);
}

static void test_staleness_quantile(void) {
  uint64_t hist[PS_STALENESS_BUCKETS] = {0};
  CU_ASSERT_EQUAL(ps_staleness_quantile(hist, 0.99), 0);
  hist[3] = 99; /* [4, 8) us */
  hist[10] = 1; /* [512, 1024) us */
  CU_ASSERT_DOUBLE_EQUAL(ps_staleness_quantile(hist, 0.5), 8e-6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(ps_staleness_quantile(hist, 0.99), 8e-6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(ps_staleness_quantile(hist, 1.0), 1024e-6, 1e-12);
}

PSLAB_SUITE("replica", {"copies converge through the owner", test_converge_through_owner},
            {"copies converge while owners move and replicas come and go",
             test_converge_while_owners_move},
            {"a stale SYNC answer is ignored", test_stale_sync_reply_ignored},
            {"finish under all-reduce counts a delta once", test_finish_allreduce_counts_once},
            {"copies converge by all-reduce", test_converge_by_allreduce},
            {"a replica reads locally", test_replica_reads_locally},
            {"replicate and drop at run time", test_replicate_and_drop_at_run_time},
            {"staleness quantile", test_staleness_quantile},
            {"staleness by hand: all-reduce", test_staleness_allreduce_by_hand},
            {"staleness by hand: through the owner", test_staleness_owner_by_hand},
            {"staleness: idle rounds and last deltas", test_staleness_allreduce_idle_and_last},
            {"staleness: a node done with nothing left says so",
             test_staleness_allreduce_finish_with_nothing_left},
            {"staleness in the reader's own steps", test_staleness_in_the_readers_steps},
            {"staleness steps of reads far behind", test_staleness_steps_far_behind})
