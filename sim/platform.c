/*
 * The simulated cluster as a SimGrid platform: defaults, checks, and the
 * platform XML written from a sim_cluster.
 *
 * The XML is one zone with routing "Cluster" (a star in SimGrid 3.32): per
 * node a host, a SPLITDUPLEX link (SimGrid creates <id>_UP and <id>_DOWN, so a
 * node sends and receives at full bandwidth at once, as a full-duplex NIC
 * does) and a host_link tying them; with SIM_TOPOLOGY_BACKBONE a <backbone>
 * that every route crosses. A route between two nodes is thus
 * src_UP (+ backbone) + dst_DOWN: under CM02 a lone message of S bytes takes
 * latency(src) (+ latency(bb)) + latency(dst) + S / min(bandwidths). Each node
 * also gets a loopback route through one FATPIPE link (flows do not share
 * it), used when the core sends a message to its own node.
 *
 * Numbers are printed with %.17g so the file says exactly what the cluster
 * says; units are SimGrid's (f = flop/s, Bps = bytes/s, s = seconds).
 */
#include "sim/platform.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ defaults */

void sim_cluster_default(sim_cluster *c) {
  memset(c, 0, sizeof *c);
  c->nodes = 1;
  c->workers_per_node = 1;
  c->host_speed = 10e9;        /* 10 Gf */
  c->bandwidth = 10e9 / 8;     /* 10 Gbps */
  c->latency = 50e-6;          /* 50 us */
  strcpy(c->network_model, "CM02");
  c->topology = SIM_TOPOLOGY_STAR;
  c->backbone_bandwidth = 40e9 / 8; /* 40 Gbps */
  c->backbone_latency = 0;
  /* A server pays 1 us per message, 50 ns per key and 0.1 ns per byte (a
   * 10 GB/s copy); a worker pays 20 ns per key it reads or writes locally. */
  c->cost.per_message_s = 1e-6;
  c->cost.per_key_s = 50e-9;
  c->cost.per_byte_s = 0.1e-9;
  c->cost.local_per_key_s = 20e-9;
}

/* --------------------------------------------------------------- nodes */

void sim_host_name(uint32_t i, char *buf, size_t size) {
  snprintf(buf, size, "node-%u", (unsigned)i);
}

static double straggler_factor(const sim_cluster *c, uint32_t i, bool speed) {
  double f = 1.0;
  for (size_t k = 0; k < c->n_stragglers; k++)
    if (c->stragglers[k].node == i)
      f *= speed ? c->stragglers[k].speed_factor : c->stragglers[k].bandwidth_factor;
  return f;
}

double sim_node_speed(const sim_cluster *c, uint32_t i) {
  return c->host_speed * straggler_factor(c, i, true);
}

double sim_node_bandwidth(const sim_cluster *c, uint32_t i) {
  return c->bandwidth * straggler_factor(c, i, false);
}

static bool positive(double x) { return isfinite(x) && x > 0; }

static int check_stragglers(const sim_cluster *c, char *err, size_t errlen) {
  if (c->n_stragglers && !c->stragglers) {
    snprintf(err, errlen, "cluster.stragglers: %zu entries but no array", c->n_stragglers);
    return -1;
  }
  for (size_t k = 0; k < c->n_stragglers; k++) {
    const sim_straggler *s = &c->stragglers[k];
    if (s->node >= c->nodes || !positive(s->speed_factor) || !positive(s->bandwidth_factor)) {
      snprintf(err, errlen,
               "cluster.stragglers[%zu]: expected node < %u and factors > 0, found node %u, "
               "speed_factor %g, bandwidth_factor %g",
               k, (unsigned)c->nodes, (unsigned)s->node, s->speed_factor, s->bandwidth_factor);
      return -1;
    }
  }
  return 0;
}

int sim_cluster_check(const sim_cluster *c, char *err, size_t errlen) {
  const char *what = NULL;
  if (c->nodes == 0) what = "nodes >= 1";
  else if (c->workers_per_node == 0) what = "workers_per_node >= 1";
  else if (!positive(c->host_speed)) what = "host_speed > 0";
  else if (!positive(c->bandwidth)) what = "network bandwidth > 0";
  else if (!isfinite(c->latency) || c->latency < 0) what = "network latency >= 0";
  else if (strcmp(c->network_model, "CM02") && strcmp(c->network_model, "LV08"))
    what = "network model \"CM02\" or \"LV08\"";
  else if (c->topology != SIM_TOPOLOGY_STAR && c->topology != SIM_TOPOLOGY_BACKBONE)
    what = "topology star or backbone";
  else if (c->topology == SIM_TOPOLOGY_BACKBONE &&
           (!positive(c->backbone_bandwidth) || !isfinite(c->backbone_latency) ||
            c->backbone_latency < 0))
    what = "backbone bandwidth > 0 and latency >= 0";
  else if (c->cost.per_message_s < 0 || c->cost.per_key_s < 0 || c->cost.per_byte_s < 0 ||
           c->cost.local_per_key_s < 0)
    what = "cost figures >= 0";
  if (what) {
    snprintf(err, errlen, "cluster: expected %s", what);
    return -1;
  }
  return check_stragglers(c, err, errlen);
}

/* ----------------------------------------------------------------- XML */

static void write_node(const sim_cluster *c, uint32_t i, FILE *out) {
  char host[24];
  sim_host_name(i, host, sizeof host);
  fprintf(out, "    <host id=\"%s\" speed=\"%.17gf\" core=\"%u\"/>\n", host,
          sim_node_speed(c, i), (unsigned)c->workers_per_node);
  fprintf(out,
          "    <link id=\"link-%u\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
          " sharing_policy=\"SPLITDUPLEX\"/>\n",
          (unsigned)i, sim_node_bandwidth(c, i), c->latency);
  fprintf(out, "    <host_link id=\"%s\" up=\"link-%u_UP\" down=\"link-%u_DOWN\"/>\n", host,
          (unsigned)i, (unsigned)i);
}

int sim_platform_write(const sim_cluster *c, FILE *out) {
  fputs("<?xml version='1.0'?>\n"
        "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n"
        "  <zone id=\"pslab\" routing=\"Cluster\">\n",
        out);
  for (uint32_t i = 0; i < c->nodes; i++) write_node(c, i, out);
  fprintf(out,
          "    <link id=\"loopback\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
          " sharing_policy=\"FATPIPE\"/>\n",
          SIM_LOOPBACK_BANDWIDTH, SIM_LOOPBACK_LATENCY);
  if (c->topology == SIM_TOPOLOGY_BACKBONE)
    fprintf(out, "    <backbone id=\"backbone\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n",
            c->backbone_bandwidth, c->backbone_latency);
  for (uint32_t i = 0; i < c->nodes; i++)
    fprintf(out,
            "    <route src=\"node-%u\" dst=\"node-%u\"><link_ctn id=\"loopback\"/></route>\n",
            (unsigned)i, (unsigned)i);
  fputs("  </zone>\n</platform>\n", out);
  return ferror(out) ? -1 : 0;
}

int sim_platform_write_temp(const sim_cluster *c, char *path, size_t size, char *err,
                            size_t errlen) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  if ((size_t)snprintf(path, size, "%s/pslab-platform-XXXXXX.xml", dir) >= size) {
    snprintf(err, errlen, "temporary directory path too long: %s", dir);
    return -1;
  }
  int fd = mkstemps(path, 4);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(path);
    }
    return -1;
  }
  int rc = sim_platform_write(c, out);
  if (fclose(out) != 0) rc = -1;
  if (rc != 0) {
    snprintf(err, errlen, "cannot write the platform to %s", path);
    unlink(path);
  }
  return rc;
}
