/*
 * The simulated cluster as a SimGrid platform: defaults, checks, and the
 * platform XML written from a sim_cluster.
 *
 * The XML is one zone with routing "Cluster" (a star in SimGrid 3.32): per
 * machine a host, a SPLITDUPLEX link (SimGrid creates <id>_UP and <id>_DOWN,
 * so a machine sends and receives at full bandwidth at once, as a
 * full-duplex NIC does) and a host_link tying them; with
 * SIM_TOPOLOGY_BACKBONE a <backbone> that every route crosses. A route
 * between two machines is thus src_UP (+ backbone) + dst_DOWN: under CM02 a
 * lone message of S bytes takes latency(src) (+ latency(bb)) + latency(dst)
 * + S / min(bandwidths). A machine also gets a loopback route, for messages
 * that stay on it: without placement (a machine per node) one FATPIPE link
 * shared by all (flows do not share it), standing for a memory copy; with
 * placement a SHARED link per machine with the machine's loopback figures,
 * standing for the TCP loopback its nodes talk over. A machine with a
 * straggler's phases lists a speed per pstate: pstate 0 outside the phases,
 * pstate i + 1 in phase i (sim/stragglers.c switches between them).
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
  c->machines.loopback_latency = SIM_LOOPBACK_LATENCY;
  c->machines.loopback_bandwidth = SIM_LOOPBACK_BANDWIDTH;
  c->machines.scheduler = SIM_SCHED_RUN_QUEUE;
  c->machines.slice = SIM_SLICE_DEFAULT;
  c->timeout_s = SIM_TIMEOUT_DEFAULT;
}

void sim_cluster_shape(const sim_cluster *c, run_args *a) {
  a->nodes = c->nodes;
  a->workers_per_node = c->workers_per_node;
  a->servers = c->servers;
  a->worker_nodes = c->worker_nodes;
  a->scale = c->scale;
  a->n_scale = c->n_scale;
}

/* ------------------------------------------------------------ machines */

uint32_t sim_machine_count(const sim_cluster *c) {
  return c->machines.count ? c->machines.count : c->nodes;
}

uint32_t sim_node_machine(const sim_cluster *c, uint32_t node) {
  const sim_machines *m = &c->machines;
  if (!m->count) return node;
  if (m->place) return m->place[node];
  return (uint32_t)((uint64_t)node * m->count / c->nodes);
}

void sim_machine_name(const sim_cluster *c, uint32_t m, char *buf, size_t size) {
  snprintf(buf, size, "%s-%u", c->machines.count ? "machine" : "node", (unsigned)m);
}

static double straggler_factor(const sim_cluster *c, uint32_t m, bool speed) {
  double f = 1.0;
  for (size_t k = 0; k < c->n_stragglers; k++)
    if (sim_node_machine(c, c->stragglers[k].node) == m)
      f *= speed ? c->stragglers[k].speed_factor : c->stragglers[k].bandwidth_factor;
  return f;
}

double sim_machine_speed(const sim_cluster *c, uint32_t m) {
  return c->host_speed * straggler_factor(c, m, true);
}

double sim_machine_bandwidth(const sim_cluster *c, uint32_t m) {
  return c->bandwidth * straggler_factor(c, m, false);
}

const sim_straggler *sim_machine_phases(const sim_cluster *c, uint32_t m) {
  for (size_t k = 0; k < c->n_stragglers; k++)
    if (c->stragglers[k].n_phases && sim_node_machine(c, c->stragglers[k].node) == m)
      return &c->stragglers[k];
  return NULL;
}

static bool positive(double x) { return isfinite(x) && x > 0; }

/* A straggler's phases: in time order, disjoint, each from_s >= 0 before its
 * until_s, factors > 0; with phases, the whole-run factors are 1. */
static int check_phases(const sim_straggler *s, size_t k, char *err, size_t errlen) {
  if (s->n_phases && (!s->phases || s->speed_factor != 1 || s->bandwidth_factor != 1)) {
    snprintf(err, errlen, "cluster.stragglers[%zu]: expected phases and whole-run factors of "
             "1 with them, found %s, speed_factor %g, bandwidth_factor %g", k,
             s->phases ? "phases" : "no phase array", s->speed_factor, s->bandwidth_factor);
    return -1;
  }
  double after = 0;
  for (size_t i = 0; i < s->n_phases; i++) {
    const run_phase *p = &s->phases[i];
    if (!(p->from_s >= after) || !(p->until_s > p->from_s) || !positive(p->speed_factor) ||
        !positive(p->bandwidth_factor)) {
      snprintf(err, errlen, "cluster.stragglers[%zu].phases[%zu]: expected %g <= from_s < "
               "until_s and factors > 0, found from_s %g, until_s %g, speed_factor %g, "
               "bandwidth_factor %g", k, i, after, p->from_s, p->until_s, p->speed_factor,
               p->bandwidth_factor);
      return -1;
    }
    after = p->until_s;
  }
  return 0;
}

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
    if (check_phases(s, k, err, errlen) != 0) return -1;
    for (size_t j = 0; c->machines.count && j < k; j++)
      if (sim_node_machine(c, c->stragglers[j].node) == sim_node_machine(c, s->node)) {
        snprintf(err, errlen,
                 "cluster.stragglers[%zu]: expected at most one straggler per machine (its "
                 "factors slow the machine), found nodes %u and %u both on machine %u",
                 k, (unsigned)c->stragglers[j].node, (unsigned)s->node,
                 (unsigned)sim_node_machine(c, s->node));
        return -1;
      }
  }
  return 0;
}

double sim_io_handoff(double latency, double pass) {
  return pass > 0 ? fmin(1, latency / (2 * pass)) : 1;
}

double sim_io_wire_latency(double latency, double pass) {
  return fmax(0, latency - 2 * sim_io_handoff(latency, pass) * pass);
}

/* The loopback link's latency: with the I/O read on the message's path,
 * the calibrated latency less the read it holds; with the send on it too,
 * less both passes up to their handoffs (sim.h, io_send_on_path). */
static double loopback_latency(const sim_cluster *c) {
  const sim_machines *m = &c->machines;
  double pass = c->cost.io_wakeup_s + c->cost.io_per_message_s;
  if (!m->io_read_on_path) return m->loopback_latency;
  if (m->io_send_on_path) return sim_io_wire_latency(m->loopback_latency, pass);
  return m->loopback_latency - pass;
}

/* The I/O on the path: under a model with a receiver actor, the send only
 * with the read, and with a loopback latency that holds the read. */
static int check_io_read(const sim_cluster *c, char *err, size_t errlen) {
  if (c->machines.io_send_on_path && !c->machines.io_read_on_path) {
    snprintf(err, errlen, "cluster.machines.io_send: expected \"beside\" unless io_read is "
                          "\"on_path\" too, found \"on_path\"");
    return -1;
  }
  if (!c->machines.io_read_on_path) return 0;
  if (!strcmp(c->network_model, SIM_MODEL_LATENCY_BANDWIDTH)) {
    snprintf(err, errlen,
             "cluster.machines.io_read: expected \"beside\" under the network model \"%s\" "
             "(it sees a message's arrival only when its server looks), or the model CM02 or "
             "LV08, found \"on_path\"", SIM_MODEL_LATENCY_BANDWIDTH);
    return -1;
  }
  if (loopback_latency(c) < 0) {
    snprintf(err, errlen,
             "cluster.machines.io_read: \"on_path\" takes one I/O read (cost.io_wakeup_s + "
             "cost.io_per_message_s = %g s) off the loopback latency, which is shorter (%g s): "
             "expected a latency measured with the read in it (pslab calibrate's), or io_send "
             "\"on_path\" too", c->cost.io_wakeup_s + c->cost.io_per_message_s,
             c->machines.loopback_latency);
    return -1;
  }
  return 0;
}

static int check_machines(const sim_cluster *c, char *err, size_t errlen) {
  const sim_machines *m = &c->machines;
  if (!m->count) return 0;
  if (check_io_read(c, err, errlen) != 0) return -1;
  if (c->platform_file) {
    snprintf(err, errlen, "cluster.machines: expected none with platform_file (the platform "
                          "file says what the machines are)");
    return -1;
  }
  if (m->slice < 0 || !isfinite(m->slice)) {
    snprintf(err, errlen, "cluster.machines.slice: expected a duration > 0, found %g s", m->slice);
    return -1;
  }
  if ((m->count > c->nodes && !m->pin) || m->cores == 0 || !positive(m->loopback_bandwidth) ||
      !isfinite(m->loopback_latency) || m->loopback_latency < 0) {
    snprintf(err, errlen,
             "cluster.machines: expected 1 <= count <= nodes (%u, unless pin), cores >= 1, loopback "
             "latency >= 0 and bandwidth > 0, found count %u, cores %u, %g s, %g B/s",
             (unsigned)c->nodes, (unsigned)m->count, (unsigned)m->cores, m->loopback_latency,
             m->loopback_bandwidth);
    return -1;
  }
  bool *used = calloc(m->count, sizeof *used);
  if (!used) {
    snprintf(err, errlen, "cluster.machines: out of memory");
    return -1;
  }
  int rc = 0;
  for (uint32_t i = 0; i < c->nodes && rc == 0; i++) {
    uint32_t at = sim_node_machine(c, i);
    if (at >= m->count) {
      snprintf(err, errlen, "cluster.machines.place[%u]: expected a machine < %u, found %u",
               (unsigned)i, (unsigned)m->count, (unsigned)at);
      rc = -1;
    } else {
      used[at] = true;
    }
  }
  for (uint32_t k = 0; k < m->count && rc == 0 && !m->pin; k++)
    if (!used[k]) {
      snprintf(err, errlen, "cluster.machines: expected every machine to run a node, found "
                            "none on machine %u", (unsigned)k);
      rc = -1;
    }
  free(used);
  return rc;
}

int sim_cluster_check(const sim_cluster *c, char *err, size_t errlen) {
  const char *what = NULL;
  if (c->nodes == 0) what = "nodes >= 1";
  else if (c->workers_per_node == 0) what = "workers_per_node >= 1";
  else if (!positive(c->host_speed)) what = "host_speed > 0";
  else if (!positive(c->bandwidth)) what = "network bandwidth > 0";
  else if (!isfinite(c->latency) || c->latency < 0) what = "network latency >= 0";
  else if (strcmp(c->network_model, "CM02") && strcmp(c->network_model, "LV08") &&
           strcmp(c->network_model, SIM_MODEL_LATENCY_BANDWIDTH))
    what = "network model \"CM02\", \"LV08\" or \"" SIM_MODEL_LATENCY_BANDWIDTH "\"";
  else if (c->topology != SIM_TOPOLOGY_STAR && c->topology != SIM_TOPOLOGY_BACKBONE)
    what = "topology star or backbone";
  else if (c->topology == SIM_TOPOLOGY_BACKBONE &&
           (!positive(c->backbone_bandwidth) || !isfinite(c->backbone_latency) ||
            c->backbone_latency < 0))
    what = "backbone bandwidth > 0 and latency >= 0";
  else if (c->cost.per_message_s < 0 || c->cost.per_key_s < 0 || c->cost.per_byte_s < 0 ||
           c->cost.local_per_key_s < 0)
    what = "cost figures >= 0";
  else if (c->cost.send_per_message_s < 0 || c->cost.wakeup_s < 0 ||
           c->cost.io_per_message_s < 0 || c->cost.wakeup_wait_s < 0 ||
           c->cost.io_wakeup_s < 0 || c->cost.shared_per_key_s < 0 ||
           c->cost.shared_per_byte_s < 0 || c->cost.step_s < 0)
    what = "cost figures >= 0";
  if (what) {
    snprintf(err, errlen, "cluster: expected %s", what);
    return -1;
  }
  if (check_machines(c, err, errlen) != 0) return -1;
  return check_stragglers(c, err, errlen);
}

/* ----------------------------------------------------------------- XML */

static void write_machine(const sim_cluster *c, uint32_t m, FILE *out) {
  char host[24];
  sim_machine_name(c, m, host, sizeof host);
  uint32_t cores = c->machines.count ? c->machines.cores : c->workers_per_node;
  const sim_straggler *slow = sim_machine_phases(c, m);
  fprintf(out, "    <host id=\"%s\" speed=\"%.17gf", host, sim_machine_speed(c, m));
  for (size_t i = 0; slow && i < slow->n_phases; i++) /* pstate i + 1: phase i */
    fprintf(out, ",%.17gf", sim_machine_speed(c, m) * slow->phases[i].speed_factor);
  fprintf(out, "\" core=\"%u\"/>\n", (unsigned)cores);
  fprintf(out,
          "    <link id=\"link-%u\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
          " sharing_policy=\"SPLITDUPLEX\"/>\n",
          (unsigned)m, sim_machine_bandwidth(c, m), c->latency);
  fprintf(out, "    <host_link id=\"%s\" up=\"link-%u_UP\" down=\"link-%u_DOWN\"/>\n", host,
          (unsigned)m, (unsigned)m);
}

/* Without placement, one FATPIPE loopback that every node's messages to
 * itself take; with it, a loopback per machine that its flows share. */
static void write_loopbacks(const sim_cluster *c, uint32_t machines, FILE *out) {
  const sim_machines *pm = &c->machines;
  if (!pm->count)
    fprintf(out,
            "    <link id=\"loopback\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
            " sharing_policy=\"FATPIPE\"/>\n",
            SIM_LOOPBACK_BANDWIDTH, SIM_LOOPBACK_LATENCY);
  for (uint32_t m = 0; pm->count && m < machines; m++)
    fprintf(out,
            "    <link id=\"loopback-%u\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
            " sharing_policy=\"SHARED\"/>\n",
            (unsigned)m, pm->loopback_bandwidth, loopback_latency(c));
}

int sim_platform_write(const sim_cluster *c, FILE *out) {
  uint32_t machines = sim_machine_count(c);
  fputs("<?xml version='1.0'?>\n"
        "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n"
        "  <zone id=\"pslab\" routing=\"Cluster\">\n",
        out);
  for (uint32_t m = 0; m < machines; m++) write_machine(c, m, out);
  write_loopbacks(c, machines, out);
  if (c->topology == SIM_TOPOLOGY_BACKBONE)
    fprintf(out, "    <backbone id=\"backbone\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n",
            c->backbone_bandwidth, c->backbone_latency);
  for (uint32_t m = 0; m < machines; m++) {
    char host[24], link[24];
    sim_machine_name(c, m, host, sizeof host);
    if (c->machines.count) snprintf(link, sizeof link, "loopback-%u", (unsigned)m);
    else snprintf(link, sizeof link, "loopback");
    fprintf(out, "    <route src=\"%s\" dst=\"%s\"><link_ctn id=\"%s\"/></route>\n", host, host,
            link);
  }
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
