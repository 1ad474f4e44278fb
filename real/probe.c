/*
 * A probe of the real backend: two nodes on loopback, this process node 0
 * and a forked child node 1, for measuring what the backend's operations
 * cost on this machine (`pslab calibrate`).
 *
 * Tables of REAL_PROBE_LENGTHS floats per value, PROBE_KEYS keys each, hash
 * partitioned with fast local access, one worker on node 0 (the calling
 * thread). A remote figure is a batch of pulls of keys homed at node 1, one
 * pull outstanding, as a worker makes them; a local figure, pulls of keys
 * homed at node 0, which the core serves from memory.
 *
 * CPU time is counted in both processes: node 1 reads its own CPU clock and
 * hands it over in a collective before and after each batch (the collective
 * itself falls outside the reading), node 0 reads its process clock and the
 * calling thread's. Node 1 loops on those collectives until node 0 says
 * stop; the child dies with its parent (PR_SET_PDEATHSIG), so a probe killed
 * midway leaves no node behind.
 */
#include "real/internal.h"
#include "run/run.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE_KEYS 256u
#define PROBE_TABLES (sizeof probe_lengths / sizeof probe_lengths[0])

static const uint32_t probe_lengths[] = {REAL_PROBE_LENGTHS};

struct real_probe {
  real_node *node;
  real_cluster cluster;
  pid_t child;
  int sock;        /* to the child, while it starts */
  float *buf;      /* room for a pull of every key of the longest table */
};

/* One collective's reply: go on or stop, and node 1's CPU seconds. */
typedef struct {
  uint8_t go;
  double cpu_s;
} probe_reply;

static double cpu_clock(clockid_t which) {
  struct timespec ts;
  clock_gettime(which, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ps_layout probe_layout(void) {
  ps_layout l = {.num_tables = PROBE_TABLES, .num_nodes = 2, .partition = PS_PARTITION_HASH};
  for (uint32_t t = 0; t < PROBE_TABLES; t++)
    l.tables[t] = (ps_table){t * PROBE_KEYS, PROBE_KEYS, probe_lengths[t]};
  return l;
}

static int table_of(uint32_t floats) {
  for (uint32_t t = 0; t < PROBE_TABLES; t++)
    if (probe_lengths[t] == floats) return (int)t;
  return -1;
}

/* The first n keys of table t homed at `home`; false if it has fewer. */
static bool keys_at(uint32_t t, uint32_t home, uint32_t n, ps_key *out) {
  ps_layout l = probe_layout();
  uint32_t found = 0;
  for (ps_key k = t * PROBE_KEYS; k < (t + 1) * PROBE_KEYS && found < n; k++)
    if (ps_layout_home(&l, k) == home) out[found++] = k;
  return found == n;
}

/* ------------------------------------------------------------ starting */

static void tell(void *ctx, const char *host_port) {
  int fd = *(int *)ctx;
  char line[REAL_HOST_MAX + 2];
  int n = snprintf(line, sizeof line, "%s\n", host_port);
  ssize_t w = send(fd, line, (size_t)n, MSG_NOSIGNAL);
  (void)w;
}

static bool read_line(int fd, char *out, size_t n, double timeout_s) {
  size_t used = 0;
  while (used + 1 < n) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, (int)(timeout_s * 1000)) <= 0) return false;
    ssize_t r = read(fd, out + used, 1);
    if (r <= 0) return false;
    if (out[used] == '\n') {
      out[used] = '\0';
      return true;
    }
    used++;
  }
  return false;
}

static real_node *start_node(const real_cluster *c, uint32_t rank, const char *coordinator,
                             int *tell_fd, char *err, size_t errlen) {
  real_node_config cfg = {.cluster = c, .coordinator = coordinator, .run = 1,
                          .listening = rank == 0 ? tell : NULL, .listening_ctx = tell_fd};
  ps_node_config_default(&cfg.core);
  cfg.core.id = rank;
  cfg.core.workers = 1;
  cfg.core.layout = probe_layout();
  if (rank == 0) run_secret_new(cfg.core.secret);
  return real_node_start(&cfg, err, errlen);
}

/* Node 1: serve pulls (its receiver thread does) and report CPU until told
 * to stop. */
static _Noreturn void child_main(const real_cluster *c, int fd) {
  char coordinator[REAL_HOST_MAX], err[REAL_ERROR_MAX];
  if (!read_line(fd, coordinator, sizeof coordinator, c->timeout_s)) _exit(2);
  close(fd);
  real_node *node = start_node(c, 1, coordinator, NULL, err, sizeof err);
  if (!node) {
    fprintf(stderr, "probe node 1: %s\n", err);
    _exit(1);
  }
  int rc = PS_OK;
  for (;;) {
    double cpu = cpu_clock(CLOCK_PROCESS_CPUTIME_ID);
    void *out = NULL;
    size_t len = 0;
    /* No deadline (node 0's round takes what it measures); a dead or silent
     * node 0 still ends the wait: the receiver fails the node within
     * timeout_s (real/receiver.c). */
    rc = real_node_collective(node, "a probe round", &cpu, sizeof cpu, INFINITY, NULL, NULL,
                              &out, &len);
    bool go = rc == PS_OK && len == sizeof(probe_reply) && ((probe_reply *)out)->go;
    free(out);
    if (!go) break;
  }
  if (rc == PS_OK) rc = real_node_quiesce(node);
  if (rc == PS_OK) rc = real_node_finish(node);
  real_node_free(node);
  _exit(rc == PS_OK ? 0 : 1);
}

real_probe *real_probe_start(const real_cluster *cluster, char *err, size_t errlen) {
  real_probe *p = calloc(1, sizeof *p);
  uint32_t longest = probe_lengths[PROBE_TABLES - 1];
  if (p) p->buf = calloc((size_t)longest * PROBE_KEYS, sizeof *p->buf);
  if (!p || !p->buf) {
    snprintf(err, errlen, "probe: out of memory");
    free(p);
    return NULL;
  }
  p->sock = -1;
  if (cluster) p->cluster = *cluster;
  else real_cluster_default(&p->cluster);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    snprintf(err, errlen, "probe: socketpair: %s", strerror(errno));
    free(p->buf);
    free(p);
    return NULL;
  }
  fflush(NULL);
  pid_t parent = getpid();
  p->child = fork();
  if (p->child == 0) {
    run_die_with_parent(parent);
    close(sv[0]);
    child_main(&p->cluster, sv[1]);
  }
  close(sv[1]);
  p->sock = sv[0];
  if (p->child < 0) {
    snprintf(err, errlen, "probe: fork: %s", strerror(errno));
    real_probe_free(p);
    return NULL;
  }
  p->node = start_node(&p->cluster, 0, NULL, &p->sock, err, errlen);
  if (!p->node) {
    real_probe_free(p);
    return NULL;
  }
  return p;
}

/* ----------------------------------------------------------- measuring */

static void *decide(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                    size_t *out_len) {
  probe_reply *r = malloc(sizeof *r);
  if (!r) return NULL;
  r->go = *(const uint8_t *)ctx;
  r->cpu_s = size > 1 && len[1] == sizeof(double) ? *(const double *)in[1] : NAN;
  *out_len = sizeof *r;
  return r;
}

/* A collective: node 1's CPU clock now, and whether it goes on. */
static int round_trip_cpu(real_probe *p, uint8_t go, double *node1_cpu) {
  void *out = NULL;
  size_t len = 0;
  int rc = real_node_collective(p->node, "a probe round", NULL, 0, p->cluster.timeout_s,
                                decide, &go, &out, &len);
  if (rc == PS_OK && len == sizeof(probe_reply) && node1_cpu)
    *node1_cpu = ((probe_reply *)out)->cpu_s;
  free(out);
  return rc;
}

static int batch(real_probe *p, bool remote, uint32_t keys, uint32_t floats, uint32_t count,
                 real_probe_sample *out, char *err, size_t errlen) {
  int t = table_of(floats);
  ps_key k[PROBE_KEYS];
  if (t < 0 || keys == 0 || !keys_at((uint32_t)t, remote ? 1 : 0, keys, k)) {
    snprintf(err, errlen, "probe: no %u keys of %u floats homed at node %d", keys, floats,
             remote ? 1 : 0);
    return -1;
  }
  ps_worker *w = ps_node_worker(real_node_core(p->node), 0);
  size_t len = (size_t)keys * floats;
  double cpu1_start = NAN, cpu1_end = NAN;
  int rc = round_trip_cpu(p, 1, &cpu1_start);
  double wall = real_clock(), cpu0 = cpu_clock(CLOCK_PROCESS_CPUTIME_ID),
         thread = cpu_clock(CLOCK_THREAD_CPUTIME_ID);
  for (uint32_t i = 0; rc == PS_OK && i < count; i++) {
    ps_ticket ticket;
    rc = ps_pull(w, k, keys, p->buf, len, &ticket, 0);
    if (rc == PS_PENDING) rc = real_node_wait(p->node, w, ticket);
  }
  out->thread_cpu_s = cpu_clock(CLOCK_THREAD_CPUTIME_ID) - thread;
  out->wall_s = real_clock() - wall;
  out->cpu_s = cpu_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  if (rc == PS_OK) rc = round_trip_cpu(p, 1, &cpu1_end);
  if (rc != PS_OK) {
    char why[REAL_ERROR_MAX] = "";
    real_node_failed(p->node, why, sizeof why);
    snprintf(err, errlen, "probe: %s%s%s", ps_strerror(rc), *why ? ": " : "", why);
    return -1;
  }
  out->cpu_s += cpu1_end - cpu1_start;
  return 0;
}

int real_probe_remote(real_probe *p, uint32_t keys, uint32_t floats, uint32_t count,
                      real_probe_sample *out, char *err, size_t errlen) {
  return batch(p, true, keys, floats, count, out, err, errlen);
}

int real_probe_local(real_probe *p, uint32_t keys, uint32_t floats, uint32_t count,
                     real_probe_sample *out, char *err, size_t errlen) {
  return batch(p, false, keys, floats, count, out, err, errlen);
}

/* ------------------------------------------------------------- the end */

int real_probe_free(real_probe *p) {
  if (!p) return 0;
  int rc = PS_OK;
  if (p->node) {
    rc = round_trip_cpu(p, 0, NULL);
    if (rc == PS_OK) rc = real_node_quiesce(p->node);
    if (rc == PS_OK) rc = real_node_finish(p->node);
    real_node_free(p->node);
  }
  if (p->sock >= 0) close(p->sock);
  int status = 0;
  if (p->child > 0) {
    if (rc != PS_OK || !p->node) kill(p->child, SIGKILL);
    waitpid(p->child, &status, 0);
  }
  bool ok = rc == PS_OK && p->node && p->child > 0 && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0;
  free(p->buf);
  free(p);
  return ok ? 0 : -1;
}
