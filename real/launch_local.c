/*
 * real_run_local: every node of one run as processes on this machine, for
 * `pslab run SPEC --backend real`.
 *
 * Nodes 1.. are forked first, before any ZeroMQ context or thread exists in
 * this process, and each waits on a socket pair for rank 0's address. Rank
 * 0 then runs in this process on a free port (the OS picks it) and, once
 * bound, writes its address to every child. So ports never collide and no
 * child inherits a socket of rank 0. Each child also holds the write end of
 * a pipe whose end-of-file tells this process it exited. After rank 0 ended
 * the run cleanly, the children get timeout_s (plus a margin) to exit on
 * their own before they are killed, so the launcher never hangs on a stuck
 * child. After rank 0 failed (it names the node that failed the run), the
 * others were told to stop: they get FAILED_GRACE_S, then SIGKILL, which a
 * stopped or hung process cannot ignore as it could SIGTERM. A node stopped
 * mid-run is noticed within timeout_s (real/receiver.c), so such a run ends,
 * with every process gone, within timeout_s + 1 s of the stop.
 *
 * When the nodes authenticate (auth.c) and the spec names no key file, the
 * cluster's keypair is made here, before the fork, and lives only in the
 * memory of these processes.
 *
 * With cluster.machines.pin (a->pin_cores), each node is pinned to its
 * machine's cores of this one before it starts a thread: a child as it
 * starts, rank 0 for its run (this process's affinity is given back after).
 *
 * A child prints its failure ("pslab node R: why") on its stderr, which it
 * shares with this process (the runner sends it to the run's log).
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "real/internal.h"
#include "run/run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_MARGIN_S 5.0
#define FAILED_GRACE_S 0.5
/* Threads of a node process besides its workers: main, receiver, ZeroMQ's
 * I/O thread and reaper (measured: 6 with two workers, without CURVE). */
#define NODE_TASKS 4

typedef struct {
  pid_t pid;
  int addr;    /* socket to the child: rank 0's address, one line */
  int life;    /* read end of the child's life pipe */
  int status;
  bool exited;
} child;

typedef struct {
  child *kids; /* by rank; [0] unused */
  uint32_t nodes;
} launch;

/* -------------------------------------------------------------- children */

/* Reads one line (rank 0's address) from fd within timeout_s. */
static bool read_address(int fd, double timeout_s, char *out, size_t n) {
  size_t used = 0;
  double deadline = real_clock() + timeout_s;
  while (used + 1 < n) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    double left = deadline - real_clock();
    if (left <= 0 || poll(&p, 1, (int)ceil(left * 1000)) <= 0) return false;
    ssize_t r = read(fd, out + used, n - 1 - used);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    used += (size_t)r;
    out[used] = '\0';
    char *nl = strchr(out, '\n');
    if (nl) {
      *nl = '\0';
      return true;
    }
  }
  return false;
}

/* Pins the calling thread (a node's first) to node rank's machine's cores. */
static int pin_node(const real_run_args *a, uint32_t rank, char *err, size_t errlen) {
  uint32_t m = a->pin_machine[rank];
  char why[256];
  if (real_pin_cores(m * a->pin_cores, a->pin_cores, why, sizeof why) == 0) return 0;
  snprintf(err, errlen, "cluster.machines.pin: node %u on machine %u: %s", rank, m, why);
  return -1;
}

/* Whether the machines of the pin fit in this process's cores. */
static int check_pin(const real_run_args *a, char *err, size_t errlen) {
  if (!a->pin_cores) return 0;
  int cores[1];
  int n = real_cores_allowed(cores, 1, err, errlen);
  if (n < 0) return -1;
  uint64_t need = (uint64_t)a->pin_machines * a->pin_cores;
  if (need <= (uint64_t)n) return 0;
  snprintf(err, errlen, "cluster.machines.pin: expected count x cores (%u x %u = %llu) "
           "within the %d cores this process may use", a->pin_machines, a->pin_cores,
           (unsigned long long)need, n);
  return -1;
}

static _Noreturn void child_main(const real_run_args *a, uint32_t rank, int addr_fd) {
  char coordinator[REAL_HOST_MAX], err[REAL_ERROR_MAX];
  if (!read_address(addr_fd, a->cluster->timeout_s, coordinator, sizeof coordinator) ||
      !*coordinator) {
    fprintf(stderr, "pslab node %u: no address for node 0 from the launcher (node 0 did "
            "not start)\n", rank);
    _exit(1);
  }
  close(addr_fd);
  if (a->pin_cores && pin_node(a, rank, err, sizeof err) != 0) {
    fprintf(stderr, "pslab node %u: %s\n", rank, err);
    _exit(1);
  }
  real_run_args b = *a;
  b.rank = rank;
  b.memory_all_nodes = true; /* every node of the run is on this machine */
  b.coordinator = coordinator;
  b.coordinator_file = NULL;
  b.listening = NULL;
  b.started = NULL;
  b.progress = NULL;
  cJSON *m = real_run_node(&b, err, sizeof err);
  if (!m) fprintf(stderr, "pslab node %u: %s\n", rank, err);
  cJSON_Delete(m);
  fflush(NULL);
  _exit(m ? 0 : 1);
}

/* Forks node `rank`; its parent-side descriptors go in l->kids[rank]. */
static int fork_node(launch *l, const real_run_args *a, uint32_t rank) {
  int sv[2], life[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
  if (pipe(life) != 0) {
    close(sv[0]);
    close(sv[1]);
    return -1;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    run_die_with_parent(parent); /* never outlive the launcher */
    for (uint32_t r = 1; r < rank; r++) { /* the other children's, inherited */
      close(l->kids[r].addr);
      close(l->kids[r].life);
    }
    close(sv[0]);
    close(life[0]);
    child_main(a, rank, sv[1]); /* life[1] stays open until the child exits */
  }
  close(sv[1]);
  close(life[1]);
  if (pid < 0) {
    close(sv[0]);
    close(life[0]);
    return -1;
  }
  l->kids[rank] = (child){.pid = pid, .addr = sv[0], .life = life[0]};
  return 0;
}

/* ---------------------------------------------------------------- rank 0 */

static void tell_address(void *ctx, const char *host_port) {
  launch *l = ctx;
  char line[REAL_HOST_MAX + 2];
  int len = snprintf(line, sizeof line, "%s\n", host_port);
  for (uint32_t r = 1; r < l->nodes; r++) {
    if (l->kids[r].addr < 0) continue;
    /* A child that died already must not kill the launcher with SIGPIPE;
     * one that cannot be told gives up by itself and is reaped. */
    ssize_t sent = send(l->kids[r].addr, line, (size_t)len, MSG_NOSIGNAL);
    (void)sent;
    close(l->kids[r].addr);
    l->kids[r].addr = -1;
  }
}

/* ---------------------------------------------------------------- reaping */

static void reap(child *k) {
  while (waitpid(k->pid, &k->status, 0) < 0 && errno == EINTR) continue;
  k->exited = true;
  close(k->life);
  k->life = -1;
}

/* Waits for every child until deadline, then kills the rest. */
static void reap_all(launch *l, double deadline) {
  struct pollfd *p = calloc(l->nodes, sizeof *p);
  for (;;) {
    nfds_t count = 0;
    for (uint32_t r = 1; r < l->nodes; r++)
      if (!l->kids[r].exited && p) p[count++] = (struct pollfd){.fd = l->kids[r].life,
                                                                .events = POLLIN};
    double left = deadline - real_clock();
    if (count == 0 || left <= 0 || !p) break;
    if (poll(p, count, (int)ceil(left * 1000)) < 0 && errno != EINTR) break;
    for (uint32_t r = 1; r < l->nodes; r++)
      for (nfds_t i = 0; i < count; i++)
        if (p[i].fd == l->kids[r].life && p[i].revents) reap(&l->kids[r]);
  }
  free(p);
  for (uint32_t r = 1; r < l->nodes; r++) {
    if (l->kids[r].exited) continue;
    kill(l->kids[r].pid, SIGKILL);
    reap(&l->kids[r]);
    l->kids[r].status = -1; /* marks "did not exit in time" */
  }
}

/* The first child that did not end well, described in err; false if none. */
static bool child_failure(const launch *l, double wait_s, char *err, size_t errlen) {
  for (uint32_t r = 1; r < l->nodes; r++) {
    int st = l->kids[r].status;
    if (st == -1)
      snprintf(err, errlen, "node %u did not exit within %g s of node 0; killed it", r,
               wait_s);
    else if (WIFSIGNALED(st))
      snprintf(err, errlen, "node %u was killed by signal %d (%s)", r, WTERMSIG(st),
               strsignal(WTERMSIG(st)));
    else if (WEXITSTATUS(st) != 0)
      snprintf(err, errlen, "node %u failed (exit status %d; its message is in the log)", r,
               WEXITSTATUS(st));
    else
      continue;
    return true;
  }
  return false;
}

/* Whether this machine lets the run start its processes and threads: every
 * node a process of NODE_TASKS threads and its workers' (one more with
 * CURVE: the guard), rank 0 being this process. 0, or -1 with a message. */
static int check_tasks(const real_run_args *a, char *err, size_t errlen) {
  char ignored[8], what[REAL_PATH_MAX + 128];
  uint64_t per_node = NODE_TASKS + a->run.workers_per_node +
                      (real_auth_uses_curve(a->cluster, ignored, sizeof ignored) == 1);
  uint64_t need = (uint64_t)a->run.nodes * per_node - 1, room = real_task_room(what, sizeof what);
  if (need <= room) return 0;
  snprintf(err, errlen, "run: cluster.nodes %u x cluster.workers_per_node %u needs about "
           "%" PRIu64 " more processes and threads on this machine (%u node processes of "
           "%" PRIu64 " threads each, rank 0 being this one), more than the %" PRIu64
           " that %s allows. Make the run smaller, or raise the limit",
           a->run.nodes, a->run.workers_per_node, need, a->run.nodes, per_node, room, what);
  return -1;
}

/* Rank 0 (this process, prepared before any fork: a run refused by its
 * memory estimate for all its nodes forks nothing) runs while the children
 * run; then they are reaped. */
static cJSON *launch_all(launch *l, const real_run_args *a, char *err, size_t errlen) {
  real_run_args b = *a;
  b.rank = 0;
  b.memory_all_nodes = true; /* every node of the run is on this machine */
  b.coordinator = NULL;
  b.coordinator_file = NULL;
  b.listening = tell_address;
  b.hook_ctx = l;
  b.started = NULL;
  node_run *root = check_pin(a, err, errlen) == 0 ? real_run_prepare(&b, err, errlen) : NULL;
  if (!root || check_tasks(a, err, errlen) != 0) {
    real_run_discard(root);
    return NULL;
  }
  fflush(NULL); /* or the children's copies of stdio buffers are written twice */
  uint32_t forked = 1;
  while (forked < a->run.nodes && fork_node(l, a, forked) == 0) forked++;
  l->nodes = forked;
  cJSON *metrics = NULL;
  if (forked < a->run.nodes) {
    snprintf(err, errlen, "cannot fork node %u: %s", forked, strerror(errno));
    real_run_discard(root);
  } else if (a->pin_cores) {
    cpu_set_t was; /* this process's own, given back after rank 0's run */
    bool saved = sched_getaffinity(0, sizeof was, &was) == 0;
    if (!saved) snprintf(err, errlen, "cluster.machines.pin: %s", strerror(errno));
    if (saved && pin_node(a, 0, err, errlen) == 0) metrics = real_run_go(root);
    else real_run_discard(root);
    if (saved) sched_setaffinity(0, sizeof was, &was);
  } else {
    metrics = real_run_go(root);
  }
  tell_address(l, ""); /* rank 0 never listened: let the children go */
  double wait_s = metrics ? a->cluster->timeout_s + EXIT_MARGIN_S : FAILED_GRACE_S;
  reap_all(l, real_clock() + wait_s);
  if (metrics && child_failure(l, wait_s, err, errlen)) {
    cJSON_Delete(metrics);
    metrics = NULL;
  }
  return metrics;
}

cJSON *real_run_local(const real_run_args *a, char *err, size_t errlen) {
  if (!a || !a->cluster || a->run.nodes == 0) {
    snprintf(err, errlen, "real_run_local: bad arguments");
    return NULL;
  }
  /* The cluster's CURVE key, when its nodes use one, made here in memory
   * and inherited by the children: it is never written anywhere. */
  real_cluster cluster = *a->cluster;
  if (real_auth_local_keys(&cluster, err, errlen) != 0) return NULL;
  real_run_args keyed = *a;
  keyed.cluster = &cluster;
  launch l = {.kids = calloc(a->run.nodes, sizeof(child)), .nodes = 1};
  cJSON *metrics = NULL;
  if (l.kids)
    metrics = launch_all(&l, &keyed, err, errlen);
  else
    snprintf(err, errlen, "real_run_local: out of memory");
  free(l.kids);
  real_curve_key_wipe(&cluster.key);
  return metrics;
}
