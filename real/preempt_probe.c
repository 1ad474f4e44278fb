/*
 * How the operating system hands a core to a thread that wakes while
 * others compute there: `pslab calibrate`'s measurement for the model of a
 * node's threads (docs/fidelity.md, "The node's threads on the cores").
 *
 * Three kinds of thread, each pinned: `spinners` threads spin on the first
 * core of the process's affinity; a sleeper waits on an eventfd on that
 * same core and, each time it wakes, spins REAL_PREEMPT_WORK_S; a kicker on
 * the second core writes the eventfd every REAL_PREEMPT_GAP_S. The figures
 * are the sleeper's mean wait for its core per turn (its schedstat's run
 * delay over the times it was scheduled in) and the spinners' involuntary
 * switches per wake-up (/proc/thread-self/status): about 1 when a woken
 * thread takes the core from a computing one at once.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include "real/internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define REAL_PREEMPT_GAP_S 200e-6
#define REAL_PREEMPT_WORK_S 5e-6

typedef struct {
  int fd;             /* the eventfd */
  int core, other;    /* the spinners' and sleeper's core; the kicker's */
  uint32_t wakes;     /* the kicker's writes */
  atomic_int stop;    /* the spinners stop */
  atomic_int started; /* spinners spinning */
  double delay_s, turns; /* the sleeper's, over its wake-ups */
  double switched;       /* the spinners' involuntary switches, summed */
  bool ok;
} preempt_run;

typedef struct {
  preempt_run *run;
  pthread_t thread;
  double switches; /* involuntary, over the run */
  bool ok;
} spinner_arg;

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/* This thread's involuntary context switches, or -1. */
static double involuntary(void) {
  FILE *f = fopen("/proc/thread-self/status", "r");
  char line[256];
  double n = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "nonvoluntary_ctxt_switches: %lf", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

static void *spinner_main(void *arg) {
  spinner_arg *s = arg;
  s->ok = pin(s->run->core);
  double before = involuntary();
  atomic_fetch_add(&s->run->started, 1);
  while (!atomic_load_explicit(&s->run->stop, memory_order_relaxed)) continue;
  double after = involuntary();
  s->ok = s->ok && before >= 0 && after >= 0;
  s->switches = after - before;
  return NULL;
}

static void *kicker_main(void *arg) {
  preempt_run *r = arg;
  if (!pin(r->other)) return NULL;
  double next = mono_s();
  for (uint32_t i = 0; i < r->wakes; i++) {
    next += REAL_PREEMPT_GAP_S;
    while (mono_s() < next) continue;
    uint64_t one = 1;
    if (write(r->fd, &one, sizeof one) != (ssize_t)sizeof one) break; /* cannot fail */
  }
  return NULL;
}

static void *sleeper_main(void *arg) {
  preempt_run *r = arg;
  double a[3], b[3];
  if (!pin(r->core) || !real_thread_schedstat(0, a)) return NULL;
  pthread_t kicker;
  if (pthread_create(&kicker, NULL, kicker_main, r) != 0) return NULL;
  uint64_t got = 0;
  while (got < r->wakes) {
    uint64_t n;
    if (read(r->fd, &n, sizeof n) != (ssize_t)sizeof n) break;
    got += n;
    double until = mono_s() + REAL_PREEMPT_WORK_S;
    while (mono_s() < until) continue;
  }
  bool read_b = real_thread_schedstat(0, b);
  pthread_join(kicker, NULL);
  if (!read_b || !(b[2] > a[2])) return NULL;
  r->delay_s = (b[1] - a[1]) / (b[2] - a[2]);
  r->turns = b[2] - a[2];
  r->ok = true;
  return NULL;
}

/* The first two cores of this process's affinity, or false. */
static bool two_cores(int *first, int *second) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
    if (CPU_ISSET(c, &set)) *(found++ ? second : first) = c;
  return found == 2;
}

int real_probe_preempt(uint32_t spinners, uint32_t wakes, double *wait_s, double *preempted,
                       char *err, size_t errlen) {
  if (spinners == 0 || spinners > REAL_PROBE_MAX_SPINNERS || wakes == 0) {
    snprintf(err, errlen, "preemption probe: %u spinners (1 to %u), %u wake-ups (1 or more)",
             spinners, REAL_PROBE_MAX_SPINNERS, wakes);
    return -1;
  }
  preempt_run r = {.wakes = wakes};
  if (!two_cores(&r.core, &r.other)) {
    snprintf(err, errlen, "preemption probe: needs two cores to run on");
    return -1;
  }
  if ((r.fd = eventfd(0, 0)) < 0) {
    snprintf(err, errlen, "preemption probe: eventfd: %s", strerror(errno));
    return -1;
  }
  spinner_arg sp[REAL_PROBE_MAX_SPINNERS];
  uint32_t made = 0;
  for (; made < spinners; made++) {
    sp[made] = (spinner_arg){.run = &r};
    if (pthread_create(&sp[made].thread, NULL, spinner_main, &sp[made]) != 0) break;
  }
  while (atomic_load(&r.started) < (int)made) continue;
  pthread_t sleeper;
  bool ran = made == spinners && pthread_create(&sleeper, NULL, sleeper_main, &r) == 0;
  if (ran) pthread_join(sleeper, NULL);
  atomic_store(&r.stop, 1);
  bool ok = ran && r.ok;
  for (uint32_t i = 0; i < made; i++) {
    pthread_join(sp[i].thread, NULL);
    ok = ok && sp[i].ok;
    r.switched += sp[i].switches;
  }
  close(r.fd);
  if (!ok) {
    snprintf(err, errlen, "preemption probe: %s",
             made < spinners ? "could not start its threads"
                             : "cannot pin its threads or read their schedstat and status");
    return -1;
  }
  *wait_s = r.delay_s;
  *preempted = r.switched / (double)wakes;
  return 0;
}
