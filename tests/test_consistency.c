/*
 * Bounded consistency (model/clock.c) on in-memory clusters.
 *
 * The bound: workers step through random keys (pull, then push +1.0 to every
 * float) in a seeded random interleaving with message delivery, and every
 * value a worker reads is checked against every push issued so far: it holds
 * every push of clocks <= c - s - 1 (all workers) and every push of the
 * reader itself, and nothing that was not pushed. With staleness 0 (BSP) it
 * must be exactly the pushes of clocks < c. Over seeds and node counts, for
 * ssp, essp and sparse, with static placement, relocation (random localizes)
 * and replication (all-reduce replicas of hot keys).
 *
 * BSP equals a sequential run of its supersteps: with a deterministic,
 * nonlinear update in integers (exact in floats), the final values equal those
 * of a sequential simulation where every worker of a clock reads the values
 * the clock started with.
 *
 * The gate: a blocked worker is released exactly when the slowest reaches
 * its bound.
 */
#include "model/testing.h"
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FIRST = 100, KEYS = 24, LEN = 2, PER_STEP = 3, STEPS = 24, MAX_W = 8 };

typedef enum { PLACE_STATIC, PLACE_RELOCATE, PLACE_REPLICATE } placement;

static harness *make(uint32_t nodes, uint32_t workers, placement p, const cJSON *json,
                     const ps_key *hot, size_t n_hot, uint64_t seed) {
  harness_config c;
  harness_config_default(&c);
  c.nodes = nodes;
  c.workers = workers;
  c.layout.tables[0] = (ps_table){FIRST, KEYS, LEN};
  c.seed = seed;
  c.clock_service = true;
  if (p == PLACE_REPLICATE) {
    c.policy = &ps_policy_replicate;
    c.policy_json = json;
    c.hot_keys = hot;
    c.num_hot_keys = n_hot;
  }
  return harness_new(&c);
}

/* ------------------------------------------------------------ the bound */

typedef enum { GATE, GATE_WAIT, PULL_WAIT, READS_WAIT, PUSH_WAIT, DONE } wstate;

typedef struct {
  ps_worker *w;
  uint32_t rank;
  wstate state;
  ps_ticket t;
  int step;
  ps_key keys[STEPS][PER_STEP];
  float buf[PER_STEP * LEN];
} sim_worker;

typedef struct {
  harness *h;
  ps_consistency cons;
  bool bsp;
  sim_worker ws[MAX_W];
  uint32_t n_w;
  uint32_t pushed[STEPS][KEYS]; /* pushes issued, per clock and key */
  uint32_t total[KEYS];
  uint64_t reads_checked, violations;
  int64_t max_gap; /* the most clocks a worker went past the run's clock */
  bool nonlinear;  /* push update(value read) instead of 1.0: no read checks */
  bool wait_pushes; /* a worker waits for its push before its clock ends */
} bound_run;

/* The nonlinear update of the sequential comparison: exact in floats. */
static float update(float v) { return 1.0f + floorf(v / 4.0f); }

/* What the runs of one model exercised. */
typedef struct {
  uint64_t reads, cache_reads, refreshes, relocations, replica_reads, bounded_reads;
  int64_t max_gap;
  uint64_t differ; /* keys whose final value differs from the sequential run's */
} coverage;

/* Every value just read by worker sw at clock c against what was pushed. */
static void check_read(bound_run *r, sim_worker *sw) {
  int64_t c = ps_worker_clock(sw->w);
  int64_t upto = c - (int64_t)r->cons.staleness; /* clocks < upto must be in */
  for (int i = 0; i < PER_STEP; i++) {
    uint32_t k = (uint32_t)(sw->keys[sw->step][i] - FIRST);
    uint32_t need = 0; /* every push of clocks < upto */
    for (int64_t t = 0; t < upto && t < STEPS; t++) need += r->pushed[t][k];
    uint32_t own_late = 0; /* and its own of clocks >= upto (step s ran at clock s) */
    for (int64_t s = upto < 0 ? 0 : upto; s < sw->step; s++)
      for (int j = 0; j < PER_STEP; j++) own_late += sw->keys[s][j] - FIRST == k;
    float v = sw->buf[i * LEN];
    r->reads_checked++;
    uint32_t lower = need + own_late;
    bool bad = v < (float)lower || v > (float)r->total[k] || sw->buf[i * LEN + 1] != v;
    if (r->bsp && v != (float)need) bad = true; /* a snapshot: exactly the clocks before */
    if (bad) {
      r->violations++;
      if (r->violations < 4)
        fprintf(stderr, "\n  worker %u clock %lld key %u read %g, expected [%u, %u]%s\n",
                sw->rank, (long long)c, k + FIRST, v, lower, r->total[k],
                r->bsp ? " exactly the lower bound (bsp)" : "");
    }
  }
}

static void issue_push(bound_run *r, sim_worker *sw) {
  int64_t c = ps_worker_clock(sw->w);
  float ones[PER_STEP * LEN];
  for (int i = 0; i < PER_STEP * LEN; i++) ones[i] = r->nonlinear ? update(sw->buf[i]) : 1.0f;
  for (int i = 0; i < PER_STEP; i++) {
    uint32_t k = (uint32_t)(sw->keys[sw->step][i] - FIRST);
    r->pushed[c][k]++;
    r->total[k]++;
  }
  /* As the driver: the clock ends while the push may still travel (the core
   * says the clock only once it is applied); with `wait_pushes`, the worker
   * waits for it first. */
  int rc = ps_push(sw->w, sw->keys[sw->step], PER_STEP, ones, PER_STEP * LEN, &sw->t, 0);
  CU_ASSERT_FATAL(rc >= 0);
  if (rc == PS_PENDING && r->wait_pushes) {
    sw->state = PUSH_WAIT;
    return;
  }
  ps_advance_clock(sw->w, 0);
  sw->step++;
  sw->state = GATE;
}

static void after_pull(bound_run *r, sim_worker *sw) {
  if (!r->nonlinear) check_read(r, sw);
  if (!r->bsp) return issue_push(r, sw);
  CU_ASSERT_FATAL(ps_end_reads(sw->w, 0) == PS_OK);
  int rc = ps_reads_wait(sw->w, &sw->t, 0);
  CU_ASSERT_FATAL(rc >= 0);
  if (rc == PS_PENDING) sw->state = READS_WAIT;
  else issue_push(r, sw);
}

static void issue_pull(bound_run *r, sim_worker *sw) {
  int rc = ps_pull(sw->w, sw->keys[sw->step], PER_STEP, sw->buf, PER_STEP * LEN, &sw->t, 0);
  CU_ASSERT_FATAL(rc >= 0);
  if (rc == PS_PENDING) sw->state = PULL_WAIT;
  else after_pull(r, sw);
}

static void signal_intent(bound_run *r, sim_worker *sw, int step) {
  if (r->cons.model != PS_CONSISTENCY_SPARSE || step >= STEPS) return;
  ps_intent(sw->w, sw->keys[step], PER_STEP, step, step + 1, 0);
}

/* Moves worker sw on if it can; true when it did something. */
static bool progress(bound_run *r, sim_worker *sw) {
  switch (sw->state) {
  case GATE: {
    if (sw->step == STEPS) {
      CU_ASSERT_FATAL(ps_set_clock(sw->w, PS_CLOCK_DONE, 0) == PS_OK);
      sw->state = DONE;
      return true;
    }
    signal_intent(r, sw, sw->step + (int)r->cons.lookahead);
    int64_t c = ps_worker_clock(sw->w);
    const ps_key *keys = r->cons.model == PS_CONSISTENCY_SPARSE ? sw->keys[sw->step] : NULL;
    int rc = ps_clock_wait(sw->w, c - (int64_t)r->cons.staleness, keys, keys ? PER_STEP : 0,
                           &sw->t, 0);
    CU_ASSERT_FATAL(rc >= 0);
    if (rc == PS_PENDING) {
      sw->state = GATE_WAIT;
      return true;
    }
    int64_t gap = c - ps_node_min_clock(ps_worker_node(sw->w));
    if (gap > r->max_gap) r->max_gap = gap;
    issue_pull(r, sw);
    return true;
  }
  case GATE_WAIT:
  case PULL_WAIT:
  case READS_WAIT:
  case PUSH_WAIT:
    if (!ps_worker_done(sw->w, sw->t)) return false;
    if (sw->state == GATE_WAIT) {
      int64_t gap = ps_worker_clock(sw->w) - ps_node_min_clock(ps_worker_node(sw->w));
      if (gap > r->max_gap) r->max_gap = gap;
      issue_pull(r, sw);
    } else if (sw->state == PULL_WAIT) after_pull(r, sw);
    else if (sw->state == READS_WAIT) issue_push(r, sw);
    else {
      ps_advance_clock(sw->w, 0);
      sw->step++;
      sw->state = GATE;
    }
    return true;
  case DONE: return false;
  }
  return false;
}

/* One randomized run, adding what it exercised to *cov; with `reference`,
 * pushes are nonlinear and the final values are compared with it (a
 * sequential run of the same supersteps). */
static void run_bound_with(uint32_t nodes, placement p, ps_consistency cons, uint64_t seed,
                           coverage *cov, bool reference) {
  enum { WORKERS = 2 };
  cJSON *json = cJSON_Parse("{\"type\": \"replicate\", \"hot_keys\": 4, "
                            "\"syncs_per_sec\": 2000}");
  ps_key hot[4] = {FIRST, FIRST + 1, FIRST + 2, FIRST + 3};
  bound_run *r = calloc(1, sizeof *r);
  CU_ASSERT_FATAL(r != NULL);
  r->h = make(nodes, WORKERS, p, json, hot, 4, seed);
  r->cons = cons;
  r->bsp = cons.model != PS_CONSISTENCY_SPARSE && cons.staleness == 0;
  r->nonlinear = reference;
  r->wait_pushes = seed % 2 == 0; /* both ways */
  r->n_w = nodes * WORKERS;
  uint64_t rng = seed * 7919 + nodes;
  for (uint32_t i = 0; i < r->n_w; i++) {
    sim_worker *sw = &r->ws[i];
    sw->w = harness_worker(r->h, i / WORKERS, i % WORKERS);
    sw->rank = i;
    CU_ASSERT_FATAL(ps_worker_set_consistency(sw->w, cons) == PS_OK);
    for (int s = 0; s < STEPS; s++)
      for (int j = 0; j < PER_STEP; j++) { /* skewed: the low keys are hot */
        uint64_t x = ps_splitmix64(&rng) % (KEYS * KEYS);
        sw->keys[s][j] = FIRST + (ps_key)(KEYS - 1 - (uint64_t)sqrt((double)x));
      }
    for (uint32_t s = 0; s < cons.lookahead; s++) signal_intent(r, sw, (int)s);
  }
  double now = 0;
  uint64_t idle = 0;
  for (;;) {
    bool all_done = true;
    for (uint32_t i = 0; i < r->n_w; i++) all_done &= r->ws[i].state == DONE;
    if (all_done && harness_in_flight(r->h) == 0) break;
    uint64_t pick = harness_rand(r->h) % 8;
    bool moved = false;
    if (pick < 3) {
      moved = harness_deliver_one(r->h);
    } else if (pick < 7) {
      sim_worker *sw = &r->ws[harness_rand(r->h) % r->n_w];
      moved = progress(r, sw);
    } else if (p == PLACE_RELOCATE) {
      sim_worker *sw = &r->ws[harness_rand(r->h) % r->n_w];
      ps_key k = FIRST + harness_rand(r->h) % KEYS;
      moved = ps_localize(sw->w, &k, 1, NULL, now) == PS_OK;
    } else if (p == PLACE_REPLICATE) {
      now += 1e-4;
      harness_set_now(r->h, now);
      for (uint32_t n = 0; n < nodes; n++)
        if (ps_node_next_timer(harness_node(r->h, n)) <= now)
          ps_node_on_timer(harness_node(r->h, n), now);
    }
    idle = moved ? 0 : idle + 1;
    if (idle > 100000) {
      CU_FAIL("the run is stuck: no worker can move and no message is in flight");
      break;
    }
  }
  for (uint32_t n = 0; n < nodes; n++) ps_node_finish(harness_node(r->h, n), now);
  harness_drain(r->h);
  CU_ASSERT_EQUAL(r->violations, 0);
  CU_ASSERT_EQUAL(harness_recv_errors(r->h), 0);
  /* Nothing lost or doubled: the owners hold every push. */
  double sum = 0;
  uint64_t pushes = 0, moving = 0;
  ps_node_stats st = {0};
  for (uint32_t n = 0; n < nodes; n++) {
    double s;
    uint64_t m;
    ps_node_owned_sum(harness_node(r->h, n), &s, &m);
    sum += s;
    moving += m;
    ps_node_stats one;
    ps_node_get_stats(harness_node(r->h, n), &one);
    ps_node_stats_add(&st, &one);
  }
  for (int k = 0; k < KEYS; k++) pushes += r->total[k];
  CU_ASSERT_EQUAL(moving, 0);
  if (!reference) CU_ASSERT_DOUBLE_EQUAL(sum, (double)pushes * LEN, 1e-6);
  if (reference) { /* clock by clock: every worker reads the clock's start */
    float seq[KEYS] = {0}, next[KEYS];
    for (int s = 0; s < STEPS; s++) {
      memcpy(next, seq, sizeof seq);
      for (uint32_t i = 0; i < r->n_w; i++)
        for (int j = 0; j < PER_STEP; j++) {
          uint32_t k = (uint32_t)(r->ws[i].keys[s][j] - FIRST);
          next[k] += update(seq[k]);
        }
      memcpy(seq, next, sizeof seq);
    }
    uint32_t differ = 0;
    for (uint32_t k = 0; k < KEYS; k++) {
      float v[LEN];
      CU_ASSERT_FATAL(ps_node_read_owned(harness_node(r->h, harness_owner(r->h, FIRST + k)),
                                         FIRST + k, v) == PS_OK);
      differ += v[0] != seq[k] || v[1] != seq[k];
    }
    cov->differ += differ;
  }
  /* The staleness read never exceeds the bound (sparse: the keys it reads
   * are clear of whoever is further behind, so the copies may be older). */
  if (cons.model != PS_CONSISTENCY_SPARSE) CU_ASSERT(st.bounded_staleness_max <= cons.staleness);
  cov->reads += r->reads_checked;
  cov->cache_reads += st.cache_reads;
  cov->refreshes += st.refreshes;
  cov->relocations += st.relocations;
  cov->replica_reads += st.replica_reads;
  cov->bounded_reads += st.bounded_reads;
  if (r->max_gap > cov->max_gap) cov->max_gap = r->max_gap;
  harness_free(r->h);
  free(r);
  cJSON_Delete(json);
}

static void run_bound(uint32_t nodes, placement p, ps_consistency cons, uint64_t seed,
                      coverage *cov) {
  run_bound_with(nodes, p, cons, seed, cov, false);
}

static coverage bound_over_seeds(ps_consistency cons) {
  coverage cov = {0};
  for (placement p = PLACE_STATIC; p <= PLACE_REPLICATE; p++)
    for (uint32_t nodes = 2; nodes <= 4; nodes++)
      for (uint64_t seed = 1; seed <= 5; seed++) run_bound(nodes, p, cons, seed, &cov);
  /* The runs went where the bound could break: */
  CU_ASSERT(cov.reads > 1000);
  CU_ASSERT(cov.relocations > 0);  /* keys moved under the readers */
  CU_ASSERT(cov.replica_reads > 0); /* replicas served reads */
  return cov;
}

static void test_bound_bsp(void) {
  coverage c = bound_over_seeds((ps_consistency){PS_CONSISTENCY_SSP, 0, 0});
  CU_ASSERT(c.max_gap == 0); /* nobody starts a clock before all ended the last */
}

static void test_bound_ssp(void) {
  coverage c = bound_over_seeds((ps_consistency){PS_CONSISTENCY_SSP, 2, 0});
  CU_ASSERT(c.cache_reads > 0); /* the cache served reads within the bound */
  CU_ASSERT(c.max_gap == 2);    /* workers ran ahead, as far as the bound and no further */
  CU_ASSERT(c.refreshes == 0);
}

static void test_bound_essp(void) {
  coverage c = bound_over_seeds((ps_consistency){PS_CONSISTENCY_ESSP, 1, 0});
  CU_ASSERT(c.refreshes > 0); /* owners pushed fresh values to the caches */
  CU_ASSERT(c.cache_reads > 0);
  CU_ASSERT(c.max_gap <= 1);
}

static void test_bound_sparse(void) {
  coverage c = bound_over_seeds((ps_consistency){PS_CONSISTENCY_SPARSE, 1, 3});
  CU_ASSERT(c.max_gap > 1); /* past the bound, where the keys allowed it */
}

/* BSP's result is a sequential run's: each clock reads the values it started
 * with. SSP with staleness 1 and async read fresher values, so their results
 * differ (which shows the comparison can fail). */
static void test_bsp_equals_sequential(void) {
  coverage bsp = {0}, ssp = {0};
  for (placement p = PLACE_STATIC; p <= PLACE_RELOCATE; p++)
    for (uint32_t nodes = 2; nodes <= 4; nodes++)
      for (uint64_t seed = 1; seed <= 4; seed++) {
        run_bound_with(nodes, p, (ps_consistency){PS_CONSISTENCY_SSP, 0, 0}, seed, &bsp, true);
        run_bound_with(nodes, p, (ps_consistency){PS_CONSISTENCY_SSP, 1, 0}, seed, &ssp, true);
      }
  CU_ASSERT_EQUAL(bsp.differ, 0);
  CU_ASSERT(ssp.differ > 0);
}

/* Two nodes of one worker, staleness 1: worker 0 at clock 3 waits for clock
 * 2; it is released when worker 1 reaches clock 2 and node 0 hears of it,
 * not before. */
static void test_gate_releases_when_slowest_advances(void) {
  harness *h = make(2, 1, PLACE_STATIC, NULL, NULL, 0, 1);
  ps_worker *fast = harness_worker(h, 0, 0), *slow = harness_worker(h, 1, 0);
  ps_consistency ssp1 = {PS_CONSISTENCY_SSP, 1, 0};
  CU_ASSERT_FATAL(ps_worker_set_consistency(fast, ssp1) == PS_OK);
  CU_ASSERT_FATAL(ps_worker_set_consistency(slow, ssp1) == PS_OK);
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_clock_wait(fast, 1, NULL, 0, &t, 0), PS_PENDING); /* slow is at 0 */
  harness_drain(h);
  for (int i = 0; i < 3; i++) ps_advance_clock(fast, 0);
  harness_drain(h);
  CU_ASSERT_FALSE(ps_worker_done(fast, t));
  ps_advance_clock(slow, 0);
  CU_ASSERT_FALSE(ps_worker_done(fast, t)); /* node 0 has not heard yet */
  harness_drain(h);
  CU_ASSERT_TRUE(ps_worker_done(fast, t));
  CU_ASSERT_EQUAL(ps_clock_wait(fast, 2, NULL, 0, &t, 0), PS_PENDING);
  ps_advance_clock(slow, 0);
  harness_drain(h);
  CU_ASSERT_TRUE(ps_worker_done(fast, t));
  CU_ASSERT_EQUAL(ps_node_min_clock(harness_node(h, 0)), 2);
  CU_ASSERT_EQUAL(harness_delivered_type(h, PS_MSG_CLOCK), 5); /* each move said once */
  /* Leaving: a worker that is done holds nobody back. */
  CU_ASSERT_EQUAL(ps_clock_wait(fast, 3, NULL, 0, &t, 0), PS_PENDING);
  CU_ASSERT_EQUAL(ps_set_clock(slow, PS_CLOCK_DONE, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_TRUE(ps_worker_done(fast, t));
  CU_ASSERT_EQUAL(ps_set_clock(fast, 1, 0), PS_ERR_INVAL); /* clocks never go back */
  harness_free(h);
}

/* Without the clock service nothing bounded is allowed, and no CLOCK is
 * taken from a peer. */
static void test_no_clock_service(void) {
  harness_config c;
  harness_config_default(&c);
  harness *h = harness_new(&c);
  ps_worker *w = harness_worker(h, 0, 0);
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_worker_set_consistency(w, (ps_consistency){PS_CONSISTENCY_SSP, 1, 0}),
                  PS_ERR_INVAL);
  CU_ASSERT_EQUAL(ps_clock_wait(w, 0, NULL, 0, &t, 0), PS_ERR_INVAL);
  uint8_t buf[PS_WIRE_HEADER_LEN];
  ps_msg m = {.type = PS_MSG_CLOCK, .src = 1, .origin = 1, .request = 5,
              .seq = ps_node_next_seq(harness_node(h, 0), 1)};
  CU_ASSERT_FATAL(harness_encode(&m, 0, buf, sizeof buf) > 0);
  CU_ASSERT_EQUAL(ps_node_recv(harness_node(h, 0), 1, buf, sizeof buf, 0), PS_ERR_PROTOCOL);
  harness_free(h);
}

PSLAB_SUITE("consistency", {"the gate releases when the slowest advances",
                            test_gate_releases_when_slowest_advances},
            {"no clock service, no bound", test_no_clock_service},
            {"bsp equals a sequential run of its supersteps", test_bsp_equals_sequential}, {"bsp reads exactly the clocks before", test_bound_bsp},
            {"ssp reads within its bound", test_bound_ssp},
            {"essp reads within its bound", test_bound_essp},
            {"sparse reads within its bound", test_bound_sparse})
