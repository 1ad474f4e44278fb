/*
 * Stragglers with phases in a simulated run: a daemon actor per such
 * straggler walks its phases in simulated time and, at each boundary, sets
 * its machine's host to the phase's pstate (platform.c wrote one per phase:
 * the phase's speed_factor of the machine's speed) and its link's up and
 * down halves to the phase's bandwidth_factor of the cluster's bandwidth;
 * when a phase ends and the next does not start at once, it puts both back.
 * These are SimGrid's own speed and bandwidth changes: executions and
 * transfers under way go on at the new rate from that instant, so compute
 * and messages that straddle a boundary take exactly what the phases say.
 *
 * The actor sleeps until each boundary with sg_actor_sleep_until (absolute
 * simulated times, so no rounding adds up) and is a daemon: the run ends
 * when its workers are done and nothing is in flight, whatever phases are
 * still to come. Spawned before the workers, it runs first at time 0, so a
 * phase that starts at 0 holds before any worker computes or sends.
 *
 * A server's handling costs without placement are sleeps, not executions:
 * they follow the same phases through sim_spend (run_phase_stretch).
 */
#include "sim/platform.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>

struct sim_straggler_actor {
  sim_state *run;
  const sim_straggler *s;
  sg_host_t host;
  sg_link_t up, down;
  double bandwidth; /* the link's own, outside every phase */
};

/* Phase i's rates, or (i == SIZE_MAX) the machine's own. */
static void apply(const sim_straggler_actor *a, size_t i) {
  bool own = i == SIZE_MAX;
  sg_host_set_pstate(a->host, own ? 0 : (unsigned long)i + 1);
  double bw = a->bandwidth * (own ? 1.0 : a->s->phases[i].bandwidth_factor);
  sg_link_set_bandwidth(a->up, bw);
  sg_link_set_bandwidth(a->down, bw);
  sim_routes_changed(a->run);
}

static void straggler_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  const sim_straggler_actor *a = sg_actor_self_get_data();
  const sim_straggler *s = a->s;
  sg_actor_daemonize(sg_actor_self());
  for (size_t i = 0; i < s->n_phases; i++) {
    const run_phase *p = &s->phases[i];
    if (p->from_s > simgrid_get_clock()) sg_actor_sleep_until(p->from_s);
    apply(a, i);
    if (isinf(p->until_s)) return;
    sg_actor_sleep_until(p->until_s);
    if (i + 1 < s->n_phases && s->phases[i + 1].from_s == p->until_s) continue;
    apply(a, SIZE_MAX);
  }
}

int sim_stragglers_spawn(sim_state *run, const sim_cluster *c, char *err, size_t errlen) {
  if (c->platform_file) return 0; /* refused with stragglers (check_args) */
  uint32_t machines = sim_machine_count(c);
  run->slow_actors = calloc(machines, sizeof *run->slow_actors);
  if (!run->slow_actors) {
    snprintf(err, errlen, "sim_run: out of memory");
    return -1;
  }
  for (uint32_t m = 0; m < machines; m++) {
    const sim_straggler *s = sim_machine_phases(c, m);
    if (!s) continue;
    char host[24], up[40], down[40], name[48];
    sim_machine_name(c, m, host, sizeof host);
    snprintf(up, sizeof up, "link-%u_UP", (unsigned)m);
    snprintf(down, sizeof down, "link-%u_DOWN", (unsigned)m);
    sim_straggler_actor *a = &run->slow_actors[m];
    *a = (sim_straggler_actor){.run = run, .s = s, .host = sg_host_by_name(host), .up = sg_link_by_name(up),
                           .down = sg_link_by_name(down), .bandwidth = c->bandwidth};
    if (!a->host || !a->up || !a->down) {
      snprintf(err, errlen, "cluster.stragglers: no host %s or links %s, %s in the platform",
               host, up, down);
      return -1;
    }
    snprintf(name, sizeof name, "straggler-%u", (unsigned)s->node);
    sg_actor_t actor = sg_actor_init(name, a->host);
    sg_actor_set_data(actor, a);
    sg_actor_start(actor, straggler_main, 0, NULL);
  }
  return 0;
}
