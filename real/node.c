/*
 * One node process's lifecycle: start (bind, rendezvous, connect, receiver,
 * start barrier), waiting for tickets, failing, and freeing.
 *
 * Failure is a state, entered once: the first reason is kept, every thread
 * blocked on the node (workers on their waiter, the main thread on the
 * node's condition) wakes up and sees it, nothing is fed to the core any
 * more and data messages are dropped instead of sent. real_fail_and_tell
 * also sends the reason to rank 0, which passes it to everyone, so one
 * node's failure ends the run everywhere with a message that names it.
 */
#include "real/internal.h"

#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -------------------------------------------------------------- failure */

static void wake_everyone(real_node *n) {
  pthread_mutex_lock(&n->lock);
  pthread_cond_broadcast(&n->cond);
  pthread_mutex_unlock(&n->lock);
  for (uint32_t i = 0; n->waiters && i < n->workers; i++) {
    pthread_mutex_lock(&n->waiters[i].lock);
    pthread_cond_broadcast(&n->waiters[i].cond);
    pthread_mutex_unlock(&n->waiters[i].lock);
  }
  real_lead_wake_any(n); /* a worker reading the ROUTER */
}

/* ----------------------------------------------------------- core lock */

void real_core_enter(real_node *n) { pthread_mutex_lock(&n->core_mutex); }

void real_core_leave(real_node *n) { pthread_mutex_unlock(&n->core_mutex); }

/* -------------------------------------------------------------- failure */

static void fail_text(real_node *n, const char *text) {
  real_core_enter(n); /* no call into the core is under way */
  pthread_mutex_lock(&n->lock);
  if (!atomic_load(&n->failed)) {
    snprintf(n->error, sizeof n->error, "%s", text);
    atomic_store(&n->failed, true);
  }
  pthread_mutex_unlock(&n->lock);
  real_core_leave(n);
  wake_everyone(n);
}

void real_fail(real_node *n, const char *fmt, ...) {
  char text[REAL_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fail_text(n, text);
}

/* Sends an ABORT (origin, text) to rank 0, or from rank 0 to every node
 * but `except`, once per node. */
static void tell(real_node *n, uint32_t origin, const char *text, uint32_t except) {
  pthread_mutex_lock(&n->lock);
  bool told = n->abort_told;
  n->abort_told = true;
  pthread_mutex_unlock(&n->lock);
  if (told || !n->peers_made) return;
  size_t len = strlen(text);
  if (n->rank != 0) {
    real_send_ctl(n, 0, REAL_CTL_ABORT, origin, text, len, true);
    return;
  }
  for (uint32_t p = 1; p < n->size; p++)
    if (p != except && p != origin) real_send_ctl(n, p, REAL_CTL_ABORT, origin, text, len, true);
}

void real_fail_and_tell(real_node *n, const char *fmt, ...) {
  char text[REAL_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fail_text(n, text);
  tell(n, n->rank, text, UINT32_MAX);
}

/* An ABORT arrived from src about a failure first seen at origin. */
void real_abort_received(real_node *n, uint32_t src, uint32_t origin, const char *text) {
  real_fail(n, "node %u: %s", origin, text);
  if (n->rank == 0) tell(n, origin, text, src);
}


bool real_node_failed(real_node *n, char *err, size_t errlen) {
  if (!atomic_load(&n->failed)) return false;
  if (err) {
    pthread_mutex_lock(&n->lock);
    snprintf(err, errlen, "%s", n->error);
    pthread_mutex_unlock(&n->lock);
  }
  return true;
}

void real_log_bad(real_node *n, const char *fmt, ...) {
  uint64_t count = atomic_fetch_add(&n->logged, 1) + 1;
  if (count > REAL_LOG_FIRST && count % 1000 != 0) return;
  char text[REAL_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (count <= REAL_LOG_FIRST)
    fprintf(stderr, "pslab: %s\n", text);
  else
    fprintf(stderr, "pslab: %s (%llu bad frames so far)\n", text, (unsigned long long)count);
}

/* -------------------------------------------------------------- waiting */

bool real_cond_wait_until(real_node *n, double deadline) {
  if (isinf(deadline)) {
    pthread_cond_wait(&n->cond, &n->lock);
    return true;
  }
  if (deadline - real_clock() <= 0) return false;
  /* n->cond uses CLOCK_MONOTONIC (node_alloc), as real_clock does. */
  struct timespec ts = real_abs_time(deadline);
  return pthread_cond_timedwait(&n->cond, &n->lock, &ts) != ETIMEDOUT ||
         real_clock() < deadline;
}

struct timespec real_abs_time(double deadline) {
  double left = fmax(deadline - real_clock(), 0);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double whole = floor(left);
  ts.tv_sec += (time_t)whole;
  ts.tv_nsec += (long)((left - whole) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

/* real_node_wait is in leader.c. */

/* ------------------------------------------------------------ accessors */

ps_node *real_node_core(real_node *n) { return n->core; }
uint32_t real_node_rank(const real_node *n) { return n->rank; }
double real_node_now(const real_node *n) {
  /* Non-const load: C11's atomic_load takes a pointer to non-const. */
  if (!atomic_load_explicit((atomic_bool *)&n->started, memory_order_acquire)) return 0;
  double now = real_clock() - n->t0;
  return now > 0 ? now : 0;
}

void real_node_get_stats(real_node *n, real_node_stats *out) {
  out->sent = atomic_load(&n->sent);
  out->received = atomic_load(&n->received);
  out->dropped = atomic_load(&n->dropped);
  out->stray = atomic_load(&n->stray);
  out->refused = atomic_load(&n->refused);
  out->throttled = atomic_load(&n->throttled);
  out->throttle_s = 1e-9 * (double)atomic_load(&n->throttle_ns);
}

void real_node_stop_timers(real_node *n) { atomic_store(&n->timers_on, false); }

/* ------------------------------------------------------------- creation */

static bool config_ok(const real_node_config *c, char *err, size_t errlen) {
  const char *why = NULL;
  if (!c || !c->cluster) why = "no configuration";
  else if (c->core.id >= c->core.layout.num_nodes) why = "the rank must be below the size";
  else if ((c->core.workers == 0) == ps_layout_runs_workers(&c->core.layout, c->core.id))
    why = "a node runs workers exactly when the layout's roles say it does";
  else if (!(c->cluster->timeout_s > 0)) why = "timeout_s must be > 0";
  else if (c->core.id == 0 && c->core.layout.num_nodes > 1 && sodium_is_zero(c->core.secret,
                                                                         PS_SECRET_LEN))
    why = "node 0 needs the run's secret (core.secret), which it hands to the others";
  if (why) snprintf(err, errlen, "real_node_start: %s", why);
  return why == NULL;
}

static real_node *node_alloc(const real_node_config *c) {
  real_node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->rank = c->core.id;
  n->size = c->core.layout.num_nodes;
  n->run = c->run;
  n->workers = c->core.workers;
  n->cluster = *c->cluster;
  memcpy(n->secret, c->core.secret, PS_SECRET_LEN); /* the others': from the book */
  real_throttle_init(n);
  atomic_init(&n->started, false);   /* the start release sets t0 */
  atomic_init(&n->timers_on, false); /* from the start barrier on */
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
#if defined(__GLIBC__)
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
  pthread_mutex_init(&n->core_mutex, &ma);
  pthread_mutexattr_destroy(&ma);
  pthread_mutex_init(&n->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&n->cond, &attr);
  n->peers = calloc(n->size, sizeof *n->peers);
  n->waiters = calloc(n->workers ? n->workers : 1, sizeof *n->waiters);
  n->gather_in = calloc(n->size, sizeof *n->gather_in);
  n->gather_len = calloc(n->size, sizeof *n->gather_len);
  n->gather_has = calloc(n->size, sizeof *n->gather_has);
  if (!n->peers || !n->waiters || !n->gather_in || !n->gather_len || !n->gather_has) {
    free(n->peers);
    free(n->waiters);
    free(n->gather_in);
    free(n->gather_len);
    free(n->gather_has);
    pthread_mutex_destroy(&n->core_mutex);
    pthread_mutex_destroy(&n->lock);
    pthread_cond_destroy(&n->cond);
    pthread_condattr_destroy(&attr);
    free(n);
    return NULL;
  }
  for (uint32_t p = 0; p < n->size; p++) pthread_mutex_init(&n->peers[p].lock, NULL);
  for (uint32_t i = 0; i < n->workers; i++) { /* timed waits: leader.c */
    pthread_mutex_init(&n->waiters[i].lock, NULL);
    pthread_cond_init(&n->waiters[i].cond, &attr);
  }
  pthread_condattr_destroy(&attr);
  if (real_lead_init(n) != 0) {
    real_node_free(n);
    return NULL;
  }
  return n;
}

/* Rank 0's address and this node's own port and advertised host. */
static int plan_addresses(real_node *n, const real_node_config *c, uint32_t *port,
                          char *err, size_t errlen) {
  const char *coord = c->coordinator ? c->coordinator : n->cluster.coordinator;
  char coord_host[REAL_HOST_MAX] = "";
  uint32_t coord_port = 0;
  snprintf(n->coordinator, sizeof n->coordinator, "%s", coord ? coord : "");
  if (*n->coordinator &&
      real_split_host_port(n->coordinator, coord_host, sizeof coord_host, &coord_port, err,
                           errlen) != 0)
    return -1;
  if (n->rank == 0) {
    *port = *n->coordinator ? coord_port : n->cluster.base_port;
    if (real_bind_is_wildcard(n->cluster.bind) && *coord_host)
      snprintf(n->host, sizeof n->host, "%s", coord_host);
    else
      real_advertised_host(n->cluster.bind, NULL, n->host, sizeof n->host);
    return 0;
  }
  if (!*n->coordinator && !c->coordinator_file) {
    snprintf(err, errlen, "node %u needs rank 0's address: --coordinator HOST:PORT, "
             "cluster.coordinator or a coordinator file", n->rank);
    return -1;
  }
  *port = n->cluster.base_port ? n->cluster.base_port + n->rank : 0;
  if (*port > 65535) {
    snprintf(err, errlen, "node %u: cluster.base_port + rank is %u, above 65535", n->rank,
             *port);
    return -1;
  }
  real_advertised_host(n->cluster.bind, coord_host, n->host, sizeof n->host);
  return 0;
}

/* The core's send: the transport's, with the buffer published for TSan
 * (see REAL_TSAN_RELEASE in internal.h). */
static void send_published(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  REAL_TSAN_RELEASE(buf);
  real_throttle_send(ctx, dst, len); /* a straggler's slowed link */
  real_node_send(ctx, dst, buf, len);
}

/* After the rendezvous: every node has the run's secret and seal by then. */
static int core_create(real_node *n, const real_node_config *c, char *err, size_t errlen) {
  ps_node_config cfg = c->core;
  memcpy(cfg.secret, n->secret, PS_SECRET_LEN);
  cfg.seal = n->seal; /* rank 0's choice, whatever c->core.seal says */
  real_node_env(n, &cfg.env);
  cfg.env.send = send_published;
  n->core = ps_node_new(&cfg);
  if (n->core) return 0;
  snprintf(err, errlen, "node %u: the core refused its configuration", n->rank);
  return -1;
}

static void boot_id(char out[REAL_BOOT_ID]) {
  out[0] = '\0';
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (!f) return;
  if (!fgets(out, REAL_BOOT_ID, f)) out[0] = '\0';
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
}

void *real_start_clock(size_t *len) {
  real_start_clock_msg *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  boot_id(c->boot);
  c->t0 = real_clock();
  *len = sizeof *c;
  return c;
}

double real_start_t0(const void *reply, size_t len) {
  double now = real_clock();
  real_start_clock_msg c;
  if (!reply || len != sizeof c) return now;
  memcpy(&c, reply, sizeof c);
  c.boot[sizeof c.boot - 1] = '\0';
  char mine[REAL_BOOT_ID];
  boot_id(mine);
  bool same = mine[0] && strcmp(mine, c.boot) == 0;
  return same && c.t0 <= now && c.t0 > now - 60 ? c.t0 : now;
}

static void *decide_start(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                          size_t *out_len) {
  (void)ctx, (void)size, (void)in, (void)len;
  return real_start_clock(out_len);
}

/* Waits until every link to another node is up, then the start barrier. */
static int start_barrier(real_node *n) {
  double deadline = real_clock() + n->cluster.timeout_s;
  pthread_mutex_lock(&n->lock);
  while (n->links_up + 1 < n->size && !atomic_load(&n->failed))
    if (!real_cond_wait_until(n, deadline)) break;
  bool ok = n->links_up + 1 >= n->size;
  pthread_mutex_unlock(&n->lock);
  if (!ok && !atomic_load(&n->failed)) {
    uint32_t p = 0;
    while (p < n->size && (p == n->rank || n->peers[p].up)) p++;
    real_fail_and_tell(n, "node %u cannot reach node %u at %s within %g s", n->rank,
                       p < n->size ? p : 0, p < n->size ? n->peers[p].endpoint : "?",
                       n->cluster.timeout_s);
  }
  void *reply = NULL;
  size_t len = 0;
  if (real_node_collective(n, "the start", NULL, 0, n->cluster.timeout_s, decide_start, NULL,
                           &reply, &len) != PS_OK)
    return -1;
  /* Once, before any timer runs and published before anyone reads it: the
   * core's clock never goes back (0 until now, then from 0 on). */
  n->t0 = real_start_t0(reply, len);
  free(reply);
  atomic_store_explicit(&n->started, true, memory_order_release);
  atomic_store(&n->timers_on, true);
  return 0;
}

real_node *real_node_start(const real_node_config *c, char *err, size_t errlen) {
  if (!config_ok(c, err, errlen)) return NULL;
  real_node *n = node_alloc(c);
  if (!n) {
    snprintf(err, errlen, "real_node_start: out of memory");
    return NULL;
  }
  uint32_t port = 0;
  int rc = plan_addresses(n, c, &port, err, errlen);
  if (rc == 0) rc = real_transport_open(n, port, err, errlen);
  if (rc == 0) rc = real_rendezvous(n, c, err, errlen);
  if (rc == 0) rc = core_create(n, c, err, errlen);
  if (rc == 0 && real_receiver_start(n) != 0) {
    snprintf(err, errlen, "node %u: cannot start the receiver thread", n->rank);
    rc = -1;
  }
  if (rc == 0 && start_barrier(n) != 0) {
    real_node_failed(n, err, errlen);
    rc = -1;
  }
  if (rc == 0) return n;
  real_fail(n, "%s", err); /* a short linger: only an ABORT may be pending */
  real_node_free(n);
  return NULL;
}

void real_node_free(real_node *n) {
  if (!n) return;
  if (n->receiver_running) real_receiver_stop(n);
  /* Clean: deliver everything (rank 0's last release). Failed: give an
   * ABORT a moment to leave, but do not wait for a peer that is gone. */
  double linger_s = fmin(n->cluster.timeout_s, atomic_load(&n->failed) ? 0.2 : 3600);
  int linger = (int)(linger_s * 1000);
  real_transport_close(n, linger);
  ps_node_free(n->core);
  sodium_memzero(n->secret, sizeof n->secret);
  for (uint32_t p = 0; n->peers && p < n->size; p++) pthread_mutex_destroy(&n->peers[p].lock);
  for (uint32_t i = 0; n->waiters && i < n->workers; i++) {
    pthread_mutex_destroy(&n->waiters[i].lock);
    pthread_cond_destroy(&n->waiters[i].cond);
  }
  for (uint32_t p = 0; n->gather_in && p < n->size; p++) free(n->gather_in[p]);
  free(n->gather_in);
  free(n->gather_len);
  free(n->gather_has);
  free(n->release);
  free(n->peers);
  free(n->waiters);
  real_lead_free(n);
  pthread_mutex_destroy(&n->core_mutex);
  pthread_mutex_destroy(&n->lock);
  pthread_cond_destroy(&n->cond);
  free(n);
}
