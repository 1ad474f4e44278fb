/*
 * Where nodes are and who they are: cluster defaults, rank and size from the
 * launcher's environment, "HOST:PORT" parsing, the address a node tells the
 * others, and the coordinator file through which rank 0 can publish its
 * address on a shared file system.
 *
 * The environment is read in one place only (real_rank_from_env), called by
 * the command line; nothing else here looks at it.
 */
#include "real/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void real_cluster_default(real_cluster *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->bind, sizeof c->bind, "127.0.0.1");
  c->timeout_s = 30;
  c->compute = REAL_COMPUTE_SPIN;
  c->bandwidth = 10e9 / 8; /* the simulated link's default, 10 Gbps */
}

double real_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --------------------------------------------------------- environment */

static bool parse_u32(const char *s, uint32_t *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || v > UINT32_MAX || s[0] == '-') return false;
  *out = (uint32_t)v;
  return true;
}

int real_rank_from_env(uint32_t *rank, uint32_t *size, char *err, size_t errlen) {
  static const char *const pairs[][2] = {{"PSLAB_RANK", "PSLAB_SIZE"},
                                         {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                         {"PMI_RANK", "PMI_SIZE"},
                                         {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    const char *r = getenv(pairs[i][0]), *s = getenv(pairs[i][1]);
    if (!r && !s) continue;
    if (!parse_u32(r, rank) || !parse_u32(s, size) || *size == 0 || *rank >= *size) {
      snprintf(err, errlen, "%s=%s and %s=%s: expected a rank below a size >= 1",
               pairs[i][0], r ? r : "(unset)", pairs[i][1], s ? s : "(unset)");
      return -1;
    }
    return 0;
  }
  snprintf(err, errlen, "no rank: set PSLAB_RANK and PSLAB_SIZE, or start it under "
                        "mpirun (OMPI_COMM_WORLD_RANK), a PMI launcher (PMI_RANK) or "
                        "srun (SLURM_PROCID)");
  return -1;
}

/* ------------------------------------------------------------- addresses */

int real_split_host_port(const char *s, char *host, size_t hostlen, uint32_t *port,
                         char *err, size_t errlen) {
  const char *colon = s ? strrchr(s, ':') : NULL;
  size_t hl = colon ? (size_t)(colon - s) : 0;
  const char *h = s;
  if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') { /* [v6]:port */
    h++;
    hl -= 2;
  }
  if (!colon || hl == 0 || hl >= hostlen || !parse_u32(colon + 1, port) || *port > 65535) {
    snprintf(err, errlen, "expected HOST:PORT (a port 0-65535), found \"%s\"", s ? s : "");
    return -1;
  }
  memcpy(host, h, hl);
  host[hl] = '\0';
  return 0;
}

bool real_bind_is_wildcard(const char *bind) {
  return strcmp(bind, "*") == 0 || strcmp(bind, "0.0.0.0") == 0;
}

/* The local address of a UDP socket "connected" toward host: the one the
 * routing table picks to reach it. Sends nothing. */
static bool local_address_toward(const char *host, char *out, size_t n) {
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
  if (getaddrinfo(host, "9", &hints, &res) != 0 || !res) return false;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in local;
  socklen_t len = sizeof local;
  bool ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)&local, &len) == 0 &&
            inet_ntop(AF_INET, &local.sin_addr, out, (socklen_t)n) != NULL;
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  return ok;
}

/* This machine's own address by its host name, if not a loopback one. */
static bool address_of_hostname(char *out, size_t n) {
  char name[256];
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
  if (gethostname(name, sizeof name) != 0 || getaddrinfo(name, NULL, &hints, &res) != 0)
    return false;
  bool ok = false;
  for (struct addrinfo *a = res; a && !ok; a = a->ai_next) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)a->ai_addr;
    ok = (ntohl(in->sin_addr.s_addr) >> 24) != 127 &&
         inet_ntop(AF_INET, &in->sin_addr, out, (socklen_t)n) != NULL;
  }
  freeaddrinfo(res);
  return ok;
}

void real_advertised_host(const char *bind, const char *toward, char *out, size_t n) {
  if (!real_bind_is_wildcard(bind)) {
    snprintf(out, n, "%s", bind);
    return;
  }
  if (toward && *toward) {
    if (local_address_toward(toward, out, n) && strcmp(out, "0.0.0.0") != 0) return;
  } else if (address_of_hostname(out, n)) { /* rank 0, known by no name yet */
    return;
  }
  snprintf(out, n, "127.0.0.1");
}

/* ---------------------------------------------------- coordinator file */

int real_coordinator_file_write(const char *path, uint32_t run, const char *host_port,
                                char *err, size_t errlen) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  bool ok = f && fprintf(f, "run %u %s\n", run, host_port) > 0;
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(tmp, path) == 0) return 0;
  snprintf(err, errlen, "coordinator file %s: cannot write: %s", path, strerror(errno));
  remove(tmp);
  return -1;
}

/* The address in path if it names `run`. */
static bool read_coordinator_file(const char *path, uint32_t run, char *out, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[REAL_HOST_MAX + 64];
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  unsigned r;
  char addr[REAL_HOST_MAX];
  if (!ok || sscanf(line, "run %u %255s", &r, addr) != 2 || r != run) return false;
  snprintf(out, n, "%s", addr);
  return true;
}

int real_coordinator_file_wait(const char *path, uint32_t run, double timeout_s,
                               char *host_port, size_t n, char *err, size_t errlen) {
  double deadline = real_clock() + timeout_s;
  for (;;) {
    if (read_coordinator_file(path, run, host_port, n)) return 0;
    if (real_clock() >= deadline) break;
    poll(NULL, 0, 20); /* a file gives no event to wait for: look again soon */
  }
  snprintf(err, errlen, "node 0 did not publish its address for run %u in %s within %g s",
           run, path, timeout_s);
  return -1;
}
