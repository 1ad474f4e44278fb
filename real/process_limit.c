/*
 * How many more processes and threads this process may start, for the
 * local launcher's check before its first fork (launch_local.c): a run of
 * many nodes is refused at once, naming the numbers, instead of forking
 * until the kernel refuses and leaving the nodes already forked to time out.
 *
 * Linux counts threads and processes alike (tasks) against two limits:
 *   the user's process limit  RLIMIT_NPROC (ulimit -u), counted over every
 *                             task of the user; it does not bind root, and
 *                             the tasks the user runs are counted from /proc
 *                             (each of its processes' thread count);
 *   the pids cgroups          pids.max against pids.current, in the pids
 *                             cgroup of this process and every cgroup above
 *                             it (cgroup v1's pids hierarchy, or v2's unified
 *                             one), which bind root too.
 * Whatever cannot be read limits nothing: the check is for runs far too
 * large, and the kernel still has the last word.
 */
#include "real/internal.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"

/* The number in path ("max" or unreadable: UINT64_MAX). */
static uint64_t read_number(const char *path) {
  FILE *f = fopen(path, "r");
  char text[64] = "";
  bool read = f && fgets(text, sizeof text, f);
  if (f) fclose(f);
  char *end;
  unsigned long long v = read ? strtoull(text, &end, 10) : 0;
  return read && end != text ? (uint64_t)v : UINT64_MAX;
}

/* Tasks (threads of every process) of user uid, from /proc. */
static uint64_t user_tasks(uid_t uid) {
  uint64_t count = 0;
  DIR *d = opendir("/proc");
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[300], line[512];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%s", e->d_name);
    if (stat(path, &st) != 0 || st.st_uid != uid) continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    bool ok = f && fgets(line, sizeof line, f);
    if (f) fclose(f);
    const char *rest = ok ? strrchr(line, ')') : NULL; /* the name may hold spaces */
    long threads = 0;
    /* After the name: state, then fields 4..19, then num_threads (field 20). */
    if (rest && sscanf(rest + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                       "%*d %*d %*d %*d %ld", &threads) == 1 && threads > 0)
      count += (uint64_t)threads;
    else
      count++;
  }
  if (d) closedir(d);
  return count;
}

/* Keeps the smaller room, and its description. */
static void consider(uint64_t room, const char *what, uint64_t *best, char *out, size_t n) {
  if (room >= *best) return;
  *best = room;
  snprintf(out, n, "%s", what);
}

static void user_room(uint64_t *best, char *out, size_t n) {
  struct rlimit rl;
  if (getuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return;
  uint64_t used = user_tasks(getuid()), limit = (uint64_t)rl.rlim_cur;
  char what[160];
  snprintf(what, sizeof what, "the user's process limit (ulimit -u %" PRIu64 ", %" PRIu64
           " processes and threads running)", limit, used);
  consider(used < limit ? limit - used : 0, what, best, out, n);
}

/* Every level of the pids cgroup at dir (below root, a mount point): its
 * room, pids.max - pids.current. */
static void cgroup_room(const char *root, const char *rel, uint64_t *best, char *out,
                        size_t n) {
  char dir[REAL_PATH_MAX];
  snprintf(dir, sizeof dir, "%s%s", root, strcmp(rel, "/") ? rel : "");
  for (;;) {
    char path[REAL_PATH_MAX + 16], what[REAL_PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/pids.max", dir);
    uint64_t max = read_number(path);
    snprintf(path, sizeof path, "%s/pids.current", dir);
    uint64_t current = read_number(path);
    if (max != UINT64_MAX && current != UINT64_MAX) {
      snprintf(what, sizeof what, "the pids cgroup %s (pids.max %" PRIu64 ", %" PRIu64
               " in use)", dir, max, current);
      consider(current < max ? max - current : 0, what, best, out, n);
    }
    char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) < strlen(root)) break;
    *slash = '\0';
  }
}

/* The pids cgroup of this process, from /proc/self/cgroup: v1's "N:pids:/P"
 * under CGROUP_ROOT/pids, or v2's "0::/P" under the unified hierarchy. */
static void cgroups_room(uint64_t *best, char *out, size_t n) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  char line[REAL_PATH_MAX];
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *controllers = strchr(line, ':'), *rel = controllers ? strchr(controllers + 1, ':') : NULL;
    if (!rel || rel[1] != '/') continue;
    *rel++ = '\0';
    controllers++;
    if (strstr(controllers, "pids")) {
      cgroup_room(CGROUP_ROOT "/pids", rel, best, out, n);
    } else if (!*controllers) {
      struct stat st;
      bool unified = stat(CGROUP_ROOT "/cgroup.controllers", &st) == 0;
      cgroup_room(unified ? CGROUP_ROOT : CGROUP_ROOT "/unified", rel, best, out, n);
    }
  }
  if (f) fclose(f);
}

uint64_t real_task_room(char *what, size_t whatlen) {
  uint64_t best = UINT64_MAX;
  if (whatlen) *what = '\0';
  user_room(&best, what, whatlen);
  cgroups_room(&best, what, whatlen);
  return best;
}
