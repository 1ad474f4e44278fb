/*
 * sim/ internal: the SimGrid platform a run simulates.
 *
 * SimGrid 3.32 has no C API to build a platform, so the cluster is written as
 * a platform XML (DTD 4.1) to a temporary file that SimGrid loads and we then
 * remove. One host per node (named by sim_host_name), each with
 * workers_per_node cores of host_speed flop/s, so workers of a node do not
 * share a core; one full-duplex link per node; a Cluster (star) zone routes
 * every pair through the source's up link and the destination's down link,
 * plus a shared backbone link with SIM_TOPOLOGY_BACKBONE; a node talks to
 * itself through a fat-pipe loopback link. Only sim/ and its tests include
 * this header.
 */
#ifndef PSLAB_SIM_PLATFORM_H
#define PSLAB_SIM_PLATFORM_H

#include "sim/sim.h"

#include <stdio.h>

/* The loopback a node uses to message itself: a memory copy, not the NIC.
 * (SimGrid's own implicit loopback has the same figures: 10 GB/s, 0 s.) */
#define SIM_LOOPBACK_BANDWIDTH 10e9 /* bytes/s */
#define SIM_LOOPBACK_LATENCY 0.0

/* Writes "node-<i>" into buf (size >= 24). */
void sim_host_name(uint32_t i, char *buf, size_t size);

/* Speed of node i's cores and bandwidth of its link, stragglers applied
 * (factors of several entries for one node multiply). */
double sim_node_speed(const sim_cluster *c, uint32_t i);
double sim_node_bandwidth(const sim_cluster *c, uint32_t i);

/* Checks c: sizes, speeds, network model, topology, stragglers, costs (not
 * platform_file and hosts, which sim_run checks).
 * 0, or -1 with a message in err. */
int sim_cluster_check(const sim_cluster *c, char *err, size_t errlen);

/* Writes the platform XML of c to out. 0, or -1 on a write error. */
int sim_platform_write(const sim_cluster *c, FILE *out);

/* Writes the platform XML of c to a new temporary file (under $TMPDIR or
 * /tmp, ending in ".xml", which SimGrid needs to pick its XML parser) and
 * puts its path in path (size >= 64). The caller removes the file. 0, or -1
 * with a message in err. */
int sim_platform_write_temp(const sim_cluster *c, char *path, size_t size,
                            char *err, size_t errlen);

#endif
