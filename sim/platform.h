/*
 * sim/ internal: the SimGrid platform a run simulates.
 *
 * SimGrid 3.32 has no C API to build a platform, so the cluster is written as
 * a platform XML (DTD 4.1) to a temporary file that SimGrid loads and we then
 * remove. One host per machine (sim_machine_name): without placement a
 * machine per node with workers_per_node cores of host_speed flop/s, so
 * workers of a node do not share a core; with placement (cluster.machines)
 * its cores are shared by the nodes on it. One full-duplex link per machine;
 * a Cluster (star) zone routes every pair through the source's up link and
 * the destination's down link, plus a shared backbone link with
 * SIM_TOPOLOGY_BACKBONE; messages within a machine take its loopback (a
 * fat pipe without placement; a link its flows share with it). Only sim/ and
 * its tests include this header.
 */
#ifndef PSLAB_SIM_PLATFORM_H
#define PSLAB_SIM_PLATFORM_H

#include "sim/sim.h"

#include <stdio.h>

/* The loopback a node uses to message itself: a memory copy, not the NIC.
 * (SimGrid's own implicit loopback has the same figures: 10 GB/s, 0 s.) */
#define SIM_LOOPBACK_BANDWIDTH 10e9 /* bytes/s */
#define SIM_LOOPBACK_LATENCY 0.0

/* Machines: without placement (c->machines.count 0) one per node, machine i
 * being node i's; with it, c->machines.count. */
uint32_t sim_machine_count(const sim_cluster *c);
/* Machine m's host name into buf (size >= 24): "node-<m>" without
 * placement, "machine-<m>" with it. */
void sim_machine_name(const sim_cluster *c, uint32_t m, char *buf, size_t size);

/* Speed of machine m's cores and bandwidth of its link, the factors of the
 * stragglers on it applied (several entries for one node multiply). */
double sim_machine_speed(const sim_cluster *c, uint32_t m);
double sim_machine_bandwidth(const sim_cluster *c, uint32_t m);
/* The straggler with phases on machine m, or NULL. Its host has a pstate
 * per phase besides its first (pstate 0: no phase): pstate i + 1 runs at
 * phase i's speed_factor of sim_machine_speed. */
const sim_straggler *sim_machine_phases(const sim_cluster *c, uint32_t m);


/* Writes the platform XML of c to out. 0, or -1 on a write error. */
int sim_platform_write(const sim_cluster *c, FILE *out);

/* Writes the platform XML of c to a new temporary file (under $TMPDIR or
 * /tmp, ending in ".xml", which SimGrid needs to pick its XML parser) and
 * puts its path in path (size >= 64). The caller removes the file. 0, or -1
 * with a message in err. */
int sim_platform_write_temp(const sim_cluster *c, char *path, size_t size,
                            char *err, size_t errlen);

#endif
