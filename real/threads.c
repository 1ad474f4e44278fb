/*
 * This process's threads as the kernel sees them (/proc/self/task): a
 * thread found by its name, and how often it blocked (its voluntary context
 * switches). The probe and a node's report use them to count the wake-ups
 * of threads pslab does not run itself, ZeroMQ's I/O thread above all.
 */
#include "real/internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
