/*
 * This process's threads as the kernel sees them (/proc/self/task): a
 * thread found by its name, how often it blocked (its voluntary context
 * switches), how much CPU it used and how long it waited for a core. The
 * probe and a node's report use them to count the wake-ups, the CPU and the
 * waits of threads, ZeroMQ's I/O thread (which pslab does not run itself)
 * and the workers. And the cores a node's threads may run on
 * (cluster.machines.pin).
 */
#define _GNU_SOURCE /* pthread_setname_np, sched_setaffinity */
#include "real/internal.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void real_name_thread(pthread_t thread, const char *name) {
  char comm[16];
  snprintf(comm, sizeof comm, "%s", name); /* the kernel keeps 15 characters */
  pthread_setname_np(thread, comm);
}

pid_t real_named_thread(const char *name) {
  DIR *d = opendir("/proc/self/task");
  pid_t found = 0;
  struct dirent *e;
  while (d && !found && (e = readdir(d))) {
    char path[64], comm[32] = "";
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f) && strncmp(comm, name, strlen(name)) == 0 &&
        (comm[strlen(name)] == '\n' || comm[strlen(name)] == '\0'))
      found = (pid_t)atoi(e->d_name);
    fclose(f);
  }
  if (d) closedir(d);
  return found;
}

double real_thread_switches(pid_t tid) {
  if (!tid) return 0;
  char path[64], line[128];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
  FILE *f = fopen(path, "r");
  double n = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "voluntary_ctxt_switches: %lf", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

/* utime and stime, fields 14 and 15 of stat, after the command in
 * parentheses (which may hold spaces). */
static double stat_cpu_s(pid_t tid) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE *f = fopen(path, "r");
  char *got = f ? fgets(line, sizeof line, f) : NULL;
  if (f) fclose(f);
  const char *p = got ? strrchr(line, ')') : NULL;
  unsigned long long ut = 0, st = 0;
  long hz = sysconf(_SC_CLK_TCK);
  if (!p || hz <= 0 ||
      sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return 0;
  return (double)(ut + st) / (double)hz;
}

bool real_thread_schedstat(pid_t tid, double out[3]) {
  char path[64];
  if (tid) snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
  else snprintf(path, sizeof path, "/proc/thread-self/schedstat");
  FILE *f = fopen(path, "r");
  double ran = 0, wait = 0, turns = 0;
  bool ok = f && fscanf(f, "%lf %lf %lf", &ran, &wait, &turns) == 3;
  if (f) fclose(f);
  if (ok) {
    out[0] = ran * 1e-9;
    out[1] = wait * 1e-9;
    out[2] = turns;
  }
  return ok;
}

double real_thread_cpu_s(pid_t tid) {
  if (!tid) return 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
  FILE *f = fopen(path, "r");
  double ns = -1;
  if (f && fscanf(f, "%lf", &ns) != 1) ns = -1;
  if (f) fclose(f);
  return ns >= 0 ? ns * 1e-9 : stat_cpu_s(tid);
}

int real_cores_allowed(int *out, int cap, char *err, size_t errlen) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    snprintf(err, errlen, "cannot read this process's cores: %s", strerror(errno));
    return -1;
  }
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) {
      if (n < cap) out[n] = c;
      n++;
    }
  return n;
}

int real_pin_cores(uint32_t first, uint32_t count, char *err, size_t errlen) {
  int cores[CPU_SETSIZE];
  int n = real_cores_allowed(cores, CPU_SETSIZE, err, errlen);
  if (n < 0) return -1;
  if (count == 0) {
    snprintf(err, errlen, "expected at least one core, found 0");
    return -1;
  }
  if ((uint64_t)first + count > (uint64_t)n) {
    snprintf(err, errlen, "expected cores %u to %u of the %d this process may use", first,
             first + count - 1, n);
    return -1;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (uint32_t i = first; i < first + count; i++) CPU_SET(cores[i], &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    snprintf(err, errlen, "cannot pin to cores %u to %u: %s", first, first + count - 1,
             strerror(errno));
    return -1;
  }
  return 0;
}
