/*
 * Collectives through rank 0: barrier, quiescence, gathering metrics, the
 * clean shutdown. One primitive serves them all: every node sends its
 * contribution to rank 0 (GATHER, numbered), rank 0 waits for all, decides
 * an answer and sends it to each (RELEASE). A node sends its next
 * contribution only after the previous answer, so each side holds one
 * collective at a time and a number out of turn is a protocol error.
 *
 * Rank 0 takes the contributions and moves on to the next number before it
 * sends the answers: a quick node's next contribution can never find it
 * still on the previous one.
 *
 * Quiescence uses counts: every node counts the data messages it sent and
 * received (a message counts as received once handled, so whatever it
 * caused is already counted as sent; one refused for its seal does not
 * count: no node made it, so none counted it as sent). Rounds gather the counts; when two
 * rounds in a row give the same totals and they balance, nothing was in
 * flight between them (counts only grow, and a message in flight during
 * both would make the second round's sent exceed its received).
 */
#include "real/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- rank 0 */

static void list_missing(const real_node *n, char *out, size_t len) {
  size_t used = 0;
  uint32_t listed = 0;
  out[0] = '\0';
  for (uint32_t p = 0; p < n->size && used < len; p++) {
    if (n->gather_has[p]) continue;
    if (listed == 8) {
      snprintf(out + used, len - used, ", ...");
      return;
    }
    int w = snprintf(out + used, len - used, "%s%u", listed ? ", " : "", p);
    used += w > 0 ? (size_t)w : 0;
    listed++;
  }
}

/* Waits for every contribution and takes them (in and len arrays of size). */
static int root_gather(real_node *n, const char *phase, const void *in, size_t len,
                       double deadline, void **ins, size_t *lens) {
  void *own = malloc(len ? len : 1);
  if (!own) {
    real_fail_and_tell(n, "node 0: out of memory in %s", phase);
    return PS_ERR_PEER;
  }
  if (len) memcpy(own, in, len);
  pthread_mutex_lock(&n->lock);
  n->gather_in[0] = own;
  n->gather_len[0] = len;
  n->gather_has[0] = true;
  n->gather_count++;
  while (n->gather_count < n->size && !atomic_load(&n->failed))
    if (!real_cond_wait_until(n, deadline)) break;
  bool all = n->gather_count == n->size && !atomic_load(&n->failed);
  char missing[96] = "";
  if (all) {
    memcpy(ins, n->gather_in, n->size * sizeof *ins);
    memcpy(lens, n->gather_len, n->size * sizeof *lens);
    memset(n->gather_in, 0, n->size * sizeof *n->gather_in);
    memset(n->gather_has, 0, n->size * sizeof *n->gather_has);
    n->gather_count = 0;
    n->coll_seq++;
  } else if (!atomic_load(&n->failed)) {
    list_missing(n, missing, sizeof missing);
  }
  pthread_mutex_unlock(&n->lock);
  if (all) return PS_OK;
  if (*missing)
    real_fail_and_tell(n, "node%s %s did not reach %s within %g s", strchr(missing, ',') ? "s" : "",
                       missing, phase, n->cluster.timeout_s);
  return PS_ERR_PEER;
}

static int root_collective(real_node *n, const char *phase, const void *in, size_t len,
                           double deadline, real_decide_fn decide, void *ctx, void **out,
                           size_t *out_len) {
  void **ins = calloc(n->size, sizeof *ins);
  size_t *lens = calloc(n->size, sizeof *lens);
  int rc = ins && lens ? root_gather(n, phase, in, len, deadline, ins, lens) : PS_ERR_NOMEM;
  uint32_t seq = n->coll_seq; /* the one just gathered */
  void *reply = NULL;
  size_t reply_len = 0;
  if (rc == PS_OK && decide)
    reply = decide(ctx, n->size, (const void *const *)ins, lens, &reply_len);
  for (uint32_t p = 1; rc == PS_OK && p < n->size; p++)
    real_send_ctl(n, p, REAL_CTL_RELEASE, seq, reply, reply_len, false);
  for (uint32_t p = 0; ins && p < n->size; p++) free(ins[p]);
  free(ins);
  free(lens);
  if (rc == PS_ERR_NOMEM) real_fail_and_tell(n, "node 0: out of memory in %s", phase);
  if (rc == PS_OK && out) {
    *out = reply;
    if (out_len) *out_len = reply_len;
  } else {
    free(reply);
  }
  return rc == PS_OK ? PS_OK : PS_ERR_PEER;
}

/* ----------------------------------------------------------- other ranks */

static int node_collective(real_node *n, const char *phase, const void *in, size_t len,
                           double deadline, void **out, size_t *out_len) {
  real_send_ctl(n, 0, REAL_CTL_GATHER, n->coll_seq + 1, in, len, false);
  pthread_mutex_lock(&n->lock);
  while (!n->released && !atomic_load(&n->failed))
    if (!real_cond_wait_until(n, deadline)) break;
  bool got = n->released && !atomic_load(&n->failed);
  void *reply = NULL;
  size_t reply_len = 0;
  if (got) {
    reply = n->release;
    reply_len = n->release_len;
    n->release = NULL;
    n->released = false;
    n->coll_seq++;
  }
  pthread_mutex_unlock(&n->lock);
  if (!got) {
    if (!atomic_load(&n->failed))
      real_fail_and_tell(n, "node 0 did not finish %s within %g s (node %u waited)", phase,
                         n->cluster.timeout_s, n->rank);
    return PS_ERR_PEER;
  }
  if (out) {
    *out = reply;
    if (out_len) *out_len = reply_len;
  } else {
    free(reply);
  }
  return PS_OK;
}

int real_node_collective(real_node *n, const char *phase, const void *in, size_t len,
                         double timeout_s, real_decide_fn decide, void *ctx, void **out,
                         size_t *out_len) {
  if (out) *out = NULL;
  if (out_len) *out_len = 0;
  if (atomic_load(&n->failed)) return PS_ERR_PEER;
  double deadline = isinf(timeout_s) ? INFINITY : real_clock() + timeout_s;
  if (n->rank == 0)
    return root_collective(n, phase, in, len, deadline, decide, ctx, out, out_len);
  return node_collective(n, phase, in, len, deadline, out, out_len);
}

int real_node_barrier(real_node *n, const char *phase, double timeout_s) {
  return real_node_collective(n, phase, NULL, 0, timeout_s, NULL, NULL, NULL, NULL);
}

/* ------------------------------------------------------------ quiescence */

typedef struct {
  bool have_prev;
  uint64_t sent, received;
} quiet_state;

static void *decide_quiet(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                          size_t *out_len) {
  quiet_state *q = ctx;
  uint64_t sent = 0, received = 0;
  bool valid = true;
  for (uint32_t p = 0; p < size; p++) {
    uint64_t c[2];
    if (len[p] != sizeof c) {
      valid = false;
      continue;
    }
    memcpy(c, in[p], sizeof c);
    sent += c[0];
    received += c[1];
  }
  uint8_t *done = malloc(1);
  if (!done) return NULL;
  *done = valid && sent == received && q->have_prev && q->sent == sent &&
          q->received == received;
  *q = (quiet_state){valid, sent, received};
  *out_len = 1;
  return done;
}

int real_node_quiesce(real_node *n) {
  quiet_state q = {0};
  double deadline = real_clock() + n->cluster.timeout_s;
  for (;;) {
    uint64_t counts[2] = {atomic_load(&n->sent), atomic_load(&n->received)};
    void *reply = NULL;
    size_t len = 0;
    double left = deadline - real_clock();
    int rc = real_node_collective(n, "quiescence", counts, sizeof counts, left > 0 ? left : 0,
                                  decide_quiet, &q, &reply, &len);
    bool done = rc == PS_OK && len == 1 && *(uint8_t *)reply;
    free(reply);
    if (rc != PS_OK) return rc;
    if (done) return PS_OK;
    if (real_clock() >= deadline) {
      real_fail_and_tell(n, "messages were still in flight %g s after every worker was done",
                         n->cluster.timeout_s);
      return PS_ERR_PEER;
    }
  }
}

/* -------------------------------------------------------------- shutdown */

int real_node_finish(real_node *n) {
  pthread_mutex_lock(&n->lock);
  n->closing = true; /* from here on, peers leaving is expected */
  pthread_mutex_unlock(&n->lock);
  return real_node_barrier(n, "the shutdown", n->cluster.timeout_s);
}
