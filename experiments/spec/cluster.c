/*
 * The spec's "cluster" object, parsed into the sim_cluster sim/ consumes.
 *
 * Units are resolved here ("10Gbps" becomes bytes/s), stragglers and their
 * phases are checked (against the node count, in time order, not
 * overlapping) and handed to both backends (the real backend's view: each
 * with its phases; a whole-run one is one phase), and a user's SimGrid platform file is
 * looked up relative to the spec's directory, so sim/ receives only typed,
 * valid values. The fields only the real backend reads (bind, coordinator,
 * base_port, timeout_s, compute, auth, key_file) are checked here too,
 * whatever the backend. Every problem adds one message; the parse goes on, so that one
 * bad field does not hide the next.
 */
#include "experiments/spec/spec.h"
#include "policies/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_NODES 1000000.0
#define MAX_WORKERS_PER_NODE 1024.0
#define MAX_CORES 1048576.0

static const char *const cluster_keys[] = {
    "nodes", "workers_per_node", "host_speed", "network", "stragglers",
    "platform_file", "hosts", "cost", "machines", "profile", "bind", "coordinator",
    "base_port", "timeout_s", "compute", "auth", "key_file", "servers", "worker_nodes",
    "scale", NULL};
static const char *const scale_keys[] = {"at_s", "servers", NULL};
static const char *const network_keys[] = {
    "bandwidth", "latency", "model", "topology", "backbone_bandwidth",
    "backbone_latency", NULL};
static const char *const straggler_keys[] = {"node", "speed_factor", "bandwidth_factor",
                                             "from_s", "until_s", "phases", NULL};
static const char *const phase_keys[] = {"from_s", "until_s", "speed_factor",
                                         "bandwidth_factor", NULL};
static const char *const cost_keys[] = {"per_message_s", "per_key_s", "per_byte_s",
                                        "local_per_key_s", "send_per_message_s", "wakeup_s",
                                        "io_per_message_s", "wakeup_wait_s", "io_wakeup_s",
                                        "initial_per_float_s", "shared_per_key_s",
                                        "shared_per_byte_s", "step_s", "step_s_by_policy", NULL};
static const char *const machine_keys[] = {"count", "cores", "place", "loopback_latency",
                                           "loopback_bandwidth", "scheduler", "slice", "preempt",
                                           "preempt_wait", "preempt_per_thread", "io_read", "io_send",
                                           "pin", NULL};

static void parse_network(exp_errors *e, const cJSON *net, sim_cluster *c) {
  static const char *const models[] = {"CM02", "LV08", SIM_MODEL_LATENCY_BANDWIDTH, NULL};
  static const char *const topologies[] = {"star", "backbone", NULL};
  const char *p = "cluster.network";
  exp_check_keys(e, net, p, network_keys);
  exp_get_quantity(e, net, p, "bandwidth", EXP_QTY_BANDWIDTH, &c->bandwidth);
  exp_get_quantity(e, net, p, "latency", EXP_QTY_DURATION, &c->latency);
  const char *model = NULL, *topo = NULL;
  if (exp_get_choice(e, net, p, "model", models, &model) && model)
    snprintf(c->network_model, sizeof c->network_model, "%s", model);
  if (exp_get_choice(e, net, p, "topology", topologies, &topo) && topo)
    c->topology = strcmp(topo, "backbone") == 0 ? SIM_TOPOLOGY_BACKBONE
                                                : SIM_TOPOLOGY_STAR;
  exp_get_quantity(e, net, p, "backbone_bandwidth", EXP_QTY_BANDWIDTH,
                   &c->backbone_bandwidth);
  exp_get_quantity(e, net, p, "backbone_latency", EXP_QTY_DURATION,
                   &c->backbone_latency);
}

/* ---------------------------------------------------------- stragglers */

/* One phase (p its path) into *out; `after`: when the phase before it ends
 * (0 for the first), `before`: that phase's path, or NULL. A phase slows
 * something, starts at or after `after` and ends after it starts. own: ph is
 * a phase of a list (its keys are checked here), not a straggler's window. */
static void parse_phase(exp_errors *e, const cJSON *ph, const char *p, double after,
                        const char *before, bool own, run_phase *out) {
  *out = (run_phase){.from_s = 0, .until_s = INFINITY, .speed_factor = 1,
                     .bandwidth_factor = 1};
  if (!cJSON_IsObject(ph)) {
    exp_expect(e, p, "an object {\"from_s\", \"until_s\", \"speed_factor\", "
               "\"bandwidth_factor\"}", ph);
    return;
  }
  if (own) exp_check_keys(e, ph, p, phase_keys);
  bool from_ok = exp_get_number(e, ph, p, "from_s", 0, false, false, &out->from_s);
  bool until_ok = exp_get_number(e, ph, p, "until_s", 0, true, false, &out->until_s);
  exp_get_number(e, ph, p, "speed_factor", 0, true, false, &out->speed_factor);
  exp_get_number(e, ph, p, "bandwidth_factor", 0, true, false, &out->bandwidth_factor);
  if (!cJSON_GetObjectItemCaseSensitive(ph, "speed_factor") &&
      !cJSON_GetObjectItemCaseSensitive(ph, "bandwidth_factor"))
    exp_errors_addf(e, "%s: expected speed_factor or bandwidth_factor (what the phase "
                    "slows), found neither", p);
  char at[EXP_PATH_MAX + 16];
  if (from_ok && until_ok && !(out->until_s > out->from_s)) {
    snprintf(at, sizeof at, "%s.until_s", p);
    char what[96];
    snprintf(what, sizeof what, "a time after from_s (%g)", out->from_s);
    exp_expect(e, at, what, cJSON_GetObjectItemCaseSensitive(ph, "until_s"));
  }
  if (from_ok && before && out->from_s < after) {
    snprintf(at, sizeof at, "%s.from_s", p);
    const cJSON *found = cJSON_GetObjectItemCaseSensitive(ph, "from_s");
    if (isinf(after))
      exp_errors_addf(e, "%s: expected no phase after %s, which lasts to the end of the run "
                      "(a node's phases come in time order and do not overlap), found a "
                      "phase from %g", at, before, out->from_s);
    else
      exp_errors_addf(e, "%s: expected a time >= %g, when %s ends (a node's phases come in "
                      "time order and do not overlap), found %s%g", at, after, before,
                      found ? "" : "nothing, which means ", out->from_s);
  }
}

/* The list of phases of the straggler at p into *phases (malloc'd), *n. */
static void parse_phase_list(exp_errors *e, const cJSON *list, const char *p,
                             run_phase **phases, size_t *n) {
  char lp[EXP_PATH_MAX];
  exp_child_path(lp, sizeof lp, p, "phases");
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
    exp_expect(e, lp, "a list of at least one phase {\"from_s\", \"until_s\", "
               "\"speed_factor\", \"bandwidth_factor\"}", list);
    return;
  }
  size_t count = (size_t)cJSON_GetArraySize(list), i = 0;
  if (!(*phases = calloc(count, sizeof **phases))) {
    exp_errors_addf(e, "%s: out of memory", lp);
    return;
  }
  char ip[EXP_PATH_MAX], before[EXP_PATH_MAX];
  double after = 0;
  for (const cJSON *ph = list->child; ph; ph = ph->next, i++) {
    exp_index_path(ip, sizeof ip, lp, i);
    parse_phase(e, ph, ip, after, i ? before : NULL, true, &(*phases)[i]);
    after = (*phases)[i].until_s;
    snprintf(before, sizeof before, "%s", ip);
  }
  *n = count;
}

/* One straggler; nodes is 0 when the node count itself is invalid. Its
 * phases (a "phases" list; else one phase, "from_s"/"until_s" beside the
 * factors or the whole run) go to *phases (malloc'd), *n_phases. */
static void parse_straggler(exp_errors *e, const cJSON *s, const char *p, uint32_t nodes,
                            sim_straggler *out, run_phase **phases, size_t *n_phases) {
  static const char *const beside[] = {"speed_factor", "bandwidth_factor", "from_s",
                                       "until_s", NULL};
  if (!cJSON_IsObject(s)) {
    exp_expect(e, p, "an object {\"node\", \"speed_factor\", \"bandwidth_factor\"} "
               "(optionally \"from_s\", \"until_s\", or a list of \"phases\")", s);
    return;
  }
  exp_check_keys(e, s, p, straggler_keys);
  double node = 0;
  double max = nodes ? nodes - 1.0 : EXP_INT_MAX;
  if (exp_get_int(e, s, p, "node", 0, max, true, &node)) out->node = (uint32_t)node;
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(s, "phases");
  if (list) {
    for (size_t i = 0; beside[i]; i++) {
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, beside[i]);
      char at[EXP_PATH_MAX];
      exp_child_path(at, sizeof at, p, beside[i]);
      if (v) exp_expect(e, at, "nothing beside \"phases\" (give it in each phase)", v);
    }
    parse_phase_list(e, list, p, phases, n_phases);
    return;
  }
  /* One window (from_s/until_s), or the whole run (from 0 to the end): one
   * phase, so that a straggler means the same however it is written (its
   * host, link and server slowed alike, in both backends). */
  if (!(*phases = calloc(1, sizeof **phases))) {
    exp_errors_addf(e, "%s: out of memory", p);
    return;
  }
  parse_phase(e, s, p, 0, NULL, false, *phases);
  *n_phases = 1;
}

/* The real backend's view of the stragglers: every one with its phases. */
static bool real_stragglers(exp_cluster *out, run_phase **phases, const size_t *n_phases) {
  size_t n = out->sim.n_stragglers;
  out->real_stragglers = calloc(n, sizeof *out->real_stragglers);
  if (!out->real_stragglers) return false;
  for (size_t i = 0; i < n; i++)
    out->real_stragglers[i] = (real_straggler){.node = out->stragglers[i].node,
                                               .phases = phases[i], .n_phases = n_phases[i]};
  out->real.stragglers = out->real_stragglers;
  out->real.n_stragglers = n;
  return true;
}

static void parse_stragglers(exp_errors *e, const cJSON *list, uint32_t nodes,
                             exp_cluster *out) {
  const char *p = "cluster.stragglers";
  if (!cJSON_IsArray(list)) {
    exp_expect(e, p, "a list of stragglers", list);
    return;
  }
  size_t n = (size_t)cJSON_GetArraySize(list);
  if (n == 0) return;
  out->stragglers = calloc(n, sizeof *out->stragglers);
  out->phases = calloc(n, sizeof *out->phases);
  size_t *n_phases = calloc(n, sizeof *n_phases);
  if (!out->stragglers || !out->phases || !n_phases) {
    free(n_phases);
    exp_errors_addf(e, "%s: out of memory", p);
    return;
  }
  out->n_phase_lists = n;
  size_t i = 0;
  for (const cJSON *s = list->child; s; s = s->next, i++) {
    char ip[EXP_PATH_MAX];
    exp_index_path(ip, sizeof ip, p, i);
    sim_straggler *st = &out->stragglers[i];
    *st = (sim_straggler){.node = UINT32_MAX, .speed_factor = 1,
                          .bandwidth_factor = 1};
    parse_straggler(e, s, ip, nodes, st, &out->phases[i], &n_phases[i]);
    st->phases = out->phases[i];
    st->n_phases = n_phases[i];
    for (size_t j = 0; j < i && st->node != UINT32_MAX; j++)
      if (out->stragglers[j].node == st->node)
        exp_errors_addf(e, "%s.node: expected each node once in %s, found node %u again",
                        ip, p, st->node);
  }
  out->sim.stragglers = out->stragglers;
  out->sim.n_stragglers = n;
  if (!real_stragglers(out, out->phases, n_phases))
    exp_errors_addf(e, "%s: out of memory", p);
  free(n_phases);
}

static char *resolve_file(const char *base_dir, const char *file) {
  if (file[0] == '/' || !base_dir || !*base_dir || strcmp(base_dir, ".") == 0)
    return strdup(file);
  return exp_join_path(base_dir, file);
}

static void parse_hosts(exp_errors *e, const cJSON *hosts, uint32_t nodes,
                        exp_cluster *out) {
  const char *p = "cluster.hosts";
  char what[96];
  if (nodes)
    snprintf(what, sizeof what, "a list of %u host names (one per node)", nodes);
  else
    snprintf(what, sizeof what, "a list of host names (one per node)");
  if (!cJSON_IsArray(hosts) || (nodes && cJSON_GetArraySize(hosts) != (int)nodes)) {
    exp_expect(e, p, what, hosts);
    return;
  }
  size_t n = (size_t)cJSON_GetArraySize(hosts), i = 0;
  out->hosts = calloc(n + 1, sizeof *out->hosts);
  if (!out->hosts) return;
  for (const cJSON *h = hosts->child; h; h = h->next, i++) {
    char ip[EXP_PATH_MAX];
    exp_index_path(ip, sizeof ip, p, i);
    if (!cJSON_IsString(h) || !*h->valuestring) {
      exp_expect(e, ip, "a host name of the platform file", h);
      continue;
    }
    out->hosts[i] = strdup(h->valuestring);
  }
  out->sim.hosts = (const char *const *)out->hosts;
  out->sim.n_hosts = n;
}

static void parse_platform(exp_errors *e, const cJSON *json,
                           const char *base_dir, uint32_t nodes,
                           exp_cluster *out) {
  const char *file = NULL;
  const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(json, "hosts");
  bool has = cJSON_GetObjectItemCaseSensitive(json, "platform_file") != NULL;
  if (!has) {
    if (hosts) exp_expect(e, "cluster.hosts", "nothing without cluster.platform_file", hosts);
    return;
  }
  if (exp_get_string(e, json, "cluster", "platform_file", true, &file)) {
    out->platform_file = resolve_file(base_dir, file);
    if (out->platform_file && access(out->platform_file, R_OK) != 0) {
      char what[EXP_PATH_MAX + 64];
      snprintf(what, sizeof what, "a readable SimGrid platform file (looked for %s)",
               out->platform_file);
      exp_expect(e, "cluster.platform_file", what,
                 cJSON_GetObjectItemCaseSensitive(json, "platform_file"));
    }
    out->sim.platform_file = out->platform_file;
  }
  if (!hosts)
    exp_errors_addf(e, "cluster.hosts: expected a list of host names (one per "
                       "node) with platform_file, found nothing (the key is missing)");
  else
    parse_hosts(e, hosts, nodes, out);
}

/* cost.step_s_by_policy: {policy type: duration >= 0}. */
static void parse_step_by_policy(exp_errors *e, const cJSON *by, exp_cluster *out) {
  const char *p = "cluster.cost.step_s_by_policy";
  if (!cJSON_IsObject(by)) {
    exp_expect(e, p, "an object of policy types and durations (seconds a step)", by);
    return;
  }
  size_t n = (size_t)cJSON_GetArraySize(by);
  out->step_policy = calloc(n ? n : 1, sizeof *out->step_policy);
  out->step_policy_s = calloc(n ? n : 1, sizeof *out->step_policy_s);
  if (!out->step_policy || !out->step_policy_s) {
    exp_errors_addf(e, "%s: out of memory", p);
    return;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, by) {
    if (!ps_policy_find(it->string)) {
      exp_errors_addf(e, "%s.%s: expected a policy type (as policy.type), found an unknown one",
                      p, it->string);
      continue;
    }
    double v = NAN;
    if (cJSON_IsNumber(it)) v = it->valuedouble;
    else if (!cJSON_IsString(it) || exp_parse_duration(it->valuestring, &v) != 0) v = NAN;
    if (!isfinite(v) || v < 0) {
      char at[EXP_PATH_MAX];
      exp_child_path(at, sizeof at, p, it->string);
      exp_expect(e, at, "a number of seconds >= 0, or a duration such as \"20us\"", it);
      continue;
    }
    char *name = strdup(it->string);
    if (!name) {
      exp_errors_addf(e, "%s: out of memory", p);
      return;
    }
    out->step_policy[out->n_step_policy] = name;
    out->step_policy_s[out->n_step_policy++] = v;
  }
}

void exp_cluster_for_policy(exp_cluster *c, const cJSON *policy) {
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(policy, "type"));
  for (size_t i = 0; type && i < c->n_step_policy; i++)
    if (strcmp(c->step_policy[i], type) == 0) c->sim.cost.step_s = c->step_policy_s[i];
}

static void parse_cost(exp_errors *e, const cJSON *cost, sim_cost *c) {
  const char *p = "cluster.cost";
  exp_check_keys(e, cost, p, cost_keys);
  exp_get_quantity(e, cost, p, "per_message_s", EXP_QTY_DURATION, &c->per_message_s);
  exp_get_quantity(e, cost, p, "per_key_s", EXP_QTY_DURATION, &c->per_key_s);
  exp_get_quantity(e, cost, p, "per_byte_s", EXP_QTY_DURATION, &c->per_byte_s);
  exp_get_quantity(e, cost, p, "local_per_key_s", EXP_QTY_DURATION,
                   &c->local_per_key_s);
  exp_get_quantity(e, cost, p, "send_per_message_s", EXP_QTY_DURATION,
                   &c->send_per_message_s);
  exp_get_quantity(e, cost, p, "wakeup_s", EXP_QTY_DURATION, &c->wakeup_s);
  exp_get_quantity(e, cost, p, "io_per_message_s", EXP_QTY_DURATION, &c->io_per_message_s);
  exp_get_quantity(e, cost, p, "wakeup_wait_s", EXP_QTY_DURATION, &c->wakeup_wait_s);
  exp_get_quantity(e, cost, p, "io_wakeup_s", EXP_QTY_DURATION, &c->io_wakeup_s);
  exp_get_quantity(e, cost, p, "initial_per_float_s", EXP_QTY_DURATION,
                   &c->initial_per_float_s);
  exp_get_quantity(e, cost, p, "shared_per_key_s", EXP_QTY_DURATION, &c->shared_per_key_s);
  exp_get_quantity(e, cost, p, "shared_per_byte_s", EXP_QTY_DURATION, &c->shared_per_byte_s);
  exp_get_quantity(e, cost, p, "step_s", EXP_QTY_DURATION, &c->step_s);
}

/* Node i's machine from "place"; count is 0 when it is itself invalid. */
static void parse_place(exp_errors *e, const cJSON *list, uint32_t nodes, uint32_t count,
                        exp_cluster *out) {
  const char *p = "cluster.machines.place";
  char what[96];
  snprintf(what, sizeof what, "a list of %u machine numbers (one per node)", nodes);
  if (!cJSON_IsArray(list) || !nodes || cJSON_GetArraySize(list) != (int)nodes) {
    exp_expect(e, p, what, list);
    return;
  }
  out->place = calloc(nodes, sizeof *out->place);
  if (!out->place) {
    exp_errors_addf(e, "%s: out of memory", p);
    return;
  }
  size_t i = 0;
  for (const cJSON *v = list->child; v; v = v->next, i++) {
    char ip[EXP_PATH_MAX];
    exp_index_path(ip, sizeof ip, p, i);
    double at = v->valuedouble;
    if (!cJSON_IsNumber(v) || at != (double)(uint32_t)at || (count && at >= count)) {
      snprintf(what, sizeof what, "a machine number in [0, %u)", (unsigned)count);
      exp_expect(e, ip, what, v);
      continue;
    }
    out->place[i] = (uint32_t)at;
  }
  out->sim.machines.place = out->place;
}

/* Placement; nodes is 0 when the node count is invalid. */
static void parse_machines(exp_errors *e, const cJSON *m, uint32_t nodes, exp_cluster *out) {
  const char *p = "cluster.machines";
  sim_machines *pm = &out->sim.machines;
  exp_check_keys(e, m, p, machine_keys);
  double count = 1, cores = 0;
  exp_get_bool(e, m, p, "pin", &pm->pin); /* machines may then outnumber nodes */
  if (exp_get_int(e, m, p, "count", 1, nodes && !pm->pin ? nodes : MAX_NODES, false, &count))
    pm->count = count > 0 ? (uint32_t)count : 1;
  if (exp_get_int(e, m, p, "cores", 1, MAX_CORES, true, &cores)) pm->cores = (uint32_t)cores;
  exp_get_quantity(e, m, p, "loopback_latency", EXP_QTY_DURATION, &pm->loopback_latency);
  exp_get_quantity(e, m, p, "loopback_bandwidth", EXP_QTY_BANDWIDTH, &pm->loopback_bandwidth);
  static const char *const schedulers[] = {"run_queue", "shared", NULL};
  const char *sched = NULL;
  if (exp_get_choice(e, m, p, "scheduler", schedulers, &sched) && sched)
    pm->scheduler = strcmp(sched, "shared") == 0 ? SIM_SCHED_SHARED : SIM_SCHED_RUN_QUEUE;
  exp_get_quantity(e, m, p, "slice", EXP_QTY_DURATION, &pm->slice);
  /* Wake-up preemption: on with its figures (a profile of `pslab calibrate`
   * gives them), unless "preempt" is false. */
  exp_get_quantity(e, m, p, "preempt_wait", EXP_QTY_DURATION, &pm->preempt_wait_s);
  exp_get_quantity(e, m, p, "preempt_per_thread", EXP_QTY_DURATION, &pm->preempt_per_thread_s);
  pm->preempt = cJSON_GetObjectItemCaseSensitive(m, "preempt_wait") ||
                cJSON_GetObjectItemCaseSensitive(m, "preempt_per_thread");
  exp_get_bool(e, m, p, "preempt", &pm->preempt);
  static const char *const io_reads[] = {"beside", "on_path", NULL};
  const char *io_read = NULL;
  if (exp_get_choice(e, m, p, "io_read", io_reads, &io_read) && io_read)
    pm->io_read_on_path = strcmp(io_read, "on_path") == 0;
  const char *io_send = NULL;
  if (exp_get_choice(e, m, p, "io_send", io_reads, &io_send) && io_send)
    pm->io_send_on_path = strcmp(io_send, "on_path") == 0;
  const cJSON *place = cJSON_GetObjectItemCaseSensitive(m, "place");
  if (place) parse_place(e, place, nodes, pm->count, out);
}

/* cluster.auth and cluster.key_file (relative to the spec's directory),
 * after cluster.bind. */
static void parse_auth(exp_errors *e, const cJSON *json, const char *base_dir,
                       real_cluster *c) {
  static const char *const auths[] = {"auto", "curve", "none", "insecure", NULL};
  static const real_auth values[] = {REAL_AUTH_AUTO, REAL_AUTH_CURVE, REAL_AUTH_NONE,
                                     REAL_AUTH_INSECURE};
  const char *auth = NULL, *file = NULL;
  if (exp_get_choice(e, json, "cluster", "auth", auths, &auth) && auth)
    for (size_t i = 0; auths[i]; i++)
      if (strcmp(auth, auths[i]) == 0) c->auth = values[i];
  char why[512];
  if (c->auth == REAL_AUTH_NONE && real_auth_uses_curve(c, why, sizeof why) < 0)
    exp_errors_addf(e, "cluster.auth: expected \"auto\" or \"curve\" with cluster.bind "
                    "\"%s\" (reachable beyond this machine, nodes must authenticate), or "
                    "\"insecure\" to run without authentication anyway; found \"none\"",
                    c->bind);
  if (!exp_get_string(e, json, "cluster", "key_file", false, &file) || !file) return;
  char *path = *file ? resolve_file(base_dir, file) : NULL;
  struct stat st;
  if (path && strlen(path) < sizeof c->key_file && stat(path, &st) != 0)
    /* Named, so meant: not to be passed over where no key is needed. */
    exp_errors_addf(e, "cluster.key_file: %s: cannot read: %s (`pslab keygen --out FILE` "
                    "makes one)", path, strerror(errno));
  else if (path && strlen(path) < sizeof c->key_file)
    snprintf(c->key_file, sizeof c->key_file, "%s", path);
  else
    exp_expect(e, "cluster.key_file", "the path of a key file `pslab keygen` wrote",
               cJSON_GetObjectItemCaseSensitive(json, "key_file"));
  free(path);
}

/* The real backend's fields; nodes is 0 when the node count is invalid. */
static void parse_real(exp_errors *e, const cJSON *json, const char *base_dir, uint32_t nodes,
                       real_cluster *c) {
  static const char *const computes[] = {"spin", "sleep", NULL};
  const char *p = "cluster", *bind = NULL, *coord = NULL, *compute = NULL;
  struct in_addr addr;
  if (exp_get_string(e, json, p, "bind", false, &bind) && bind) {
    bool ok = strcmp(bind, "*") == 0 ||
              (strlen(bind) < sizeof c->bind && inet_pton(AF_INET, bind, &addr) == 1);
    if (ok)
      snprintf(c->bind, sizeof c->bind, "%s", bind);
    else
      exp_expect(e, "cluster.bind", "an IPv4 address of this machine, or \"*\" for every "
                 "interface", cJSON_GetObjectItemCaseSensitive(json, "bind"));
  }
  if (exp_get_string(e, json, p, "coordinator", false, &coord) && coord) {
    char host[REAL_HOST_MAX], why[REAL_HOST_MAX + 64];
    uint32_t port;
    if (real_split_host_port(coord, host, sizeof host, &port, why, sizeof why) == 0 && port > 0)
      snprintf(c->coordinator, sizeof c->coordinator, "%s", coord);
    else
      exp_expect(e, "cluster.coordinator", "\"HOST:PORT\", rank 0's address (a port 1-65535)",
                 cJSON_GetObjectItemCaseSensitive(json, "coordinator"));
  }
  double port = 0, max = nodes ? 65536.0 - nodes : 65535;
  if (exp_get_int(e, json, p, "base_port", 0, max, false, &port)) c->base_port = (uint32_t)port;
  exp_get_number(e, json, p, "timeout_s", 0, true, false, &c->timeout_s);
  if (exp_get_choice(e, json, p, "compute", computes, &compute) && compute)
    c->compute = strcmp(compute, "sleep") == 0 ? REAL_COMPUTE_SLEEP : REAL_COMPUTE_SPIN;
  parse_auth(e, json, base_dir, c);
}

/* ------------------------------------------------------- roles, scale */

/* cluster.servers and cluster.worker_nodes; nodes is 0 when invalid. */
static void parse_roles(exp_errors *e, const cJSON *json, uint32_t nodes, sim_cluster *c) {
  const char *p = "cluster";
  double max = nodes ? nodes : MAX_NODES, servers = 0, workers = 0;
  if (exp_get_int(e, json, p, "servers", 1, max, false, &servers)) c->servers = (uint32_t)servers;
  if (exp_get_int(e, json, p, "worker_nodes", 1, max, false, &workers))
    c->worker_nodes = (uint32_t)workers;
  uint32_t s = c->servers ? c->servers : nodes, w = c->worker_nodes ? c->worker_nodes : nodes;
  if (nodes && (uint64_t)s + w < nodes) {
    char what[160];
    snprintf(what, sizeof what, "at least %u with %u servers of %u nodes (every node a "
             "server, a worker node or both)", nodes - s, s, nodes);
    exp_expect(e, "cluster.worker_nodes", what,
               cJSON_GetObjectItemCaseSensitive(json, "worker_nodes"));
  }
}

/* cluster.scale: [{"at_s", "servers"}, ...] in time order; servers is the
 * count of cluster.servers (0 when invalid). */
static void parse_scale(exp_errors *e, const cJSON *list, uint32_t servers, exp_cluster *out) {
  const char *p = "cluster.scale";
  if (!cJSON_IsArray(list)) {
    exp_expect(e, p, "a list of steps {\"at_s\", \"servers\"}", list);
    return;
  }
  size_t n = (size_t)cJSON_GetArraySize(list), i = 0;
  if (n == 0) return;
  if (!(out->scale = calloc(n, sizeof *out->scale))) {
    exp_errors_addf(e, "%s: out of memory", p);
    return;
  }
  for (const cJSON *s = list->child; s; s = s->next, i++) {
    char ip[EXP_PATH_MAX];
    exp_index_path(ip, sizeof ip, p, i);
    if (!cJSON_IsObject(s)) {
      exp_expect(e, ip, "an object {\"at_s\", \"servers\"}", s);
      continue;
    }
    exp_check_keys(e, s, ip, scale_keys);
    double at = 0, count = 1, min_at = i ? out->scale[i - 1].at_s : 0;
    exp_get_number(e, s, ip, "at_s", min_at, false, true, &at);
    exp_get_int(e, s, ip, "servers", 1, servers ? servers : MAX_NODES, true, &count);
    out->scale[i] = (ps_scale_step){at, (uint32_t)count};
  }
  out->sim.scale = out->scale;
  out->sim.n_scale = n;
}

/* ------------------------------------------------------------- profile */

/* Adds src's fields to dst: objects merge field by field, anything else
 * replaces what dst has. */
static bool merge_into(cJSON *dst, const cJSON *src) {
  for (const cJSON *f = src->child; f; f = f->next) {
    cJSON *have = cJSON_GetObjectItemCaseSensitive(dst, f->string);
    if (cJSON_IsObject(have) && cJSON_IsObject(f)) {
      if (!merge_into(have, f)) return false;
      continue;
    }
    cJSON *copy = cJSON_Duplicate(f, true);
    if (!copy) return false;
    if (have) cJSON_ReplaceItemInObjectCaseSensitive(dst, f->string, copy);
    else cJSON_AddItemToObject(dst, f->string, copy);
  }
  return true;
}

/* The cluster with its profile's fields under its own: a new object, or
 * NULL with a message. *file gets the profile's path (caller frees); *raw,
 * when raw is not NULL, the profile's own fields (caller frees); *step,
 * when step is not NULL, the record of its step figures (caller frees;
 * NULL when it has none). */
static cJSON *with_profile(exp_errors *e, const cJSON *json, const char *base_dir,
                           char **file, cJSON **raw, cJSON **step) {
  const char *name = NULL;
  *file = NULL;
  if (step) *step = NULL;
  if (!exp_get_string(e, json, "cluster", "profile", true, &name) || !name) return NULL;
  *file = resolve_file(base_dir, name);
  if (!*file) return NULL;
  exp_errors mine;
  exp_errors_init(&mine);
  cJSON *profile = exp_json_load(*file, &mine);
  for (size_t i = 0; i < mine.count; i++)
    exp_errors_addf(e, "cluster.profile: %s", mine.lines[i]);
  exp_errors_free(&mine);
  if (!profile) return NULL;
  cJSON *merged = NULL;
  if (!cJSON_IsObject(profile) || cJSON_GetObjectItemCaseSensitive(profile, "profile")) {
    exp_errors_addf(e, "cluster.profile: %s: expected an object of cluster fields without "
                       "\"profile\" (as `pslab calibrate` writes)", *file);
  } else {
    const cJSON *record = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(profile, EXP_PROFILE_ABOUT), "step");
    if (step && record) *step = cJSON_Duplicate(record, true);
    cJSON_DeleteItemFromObjectCaseSensitive(profile, EXP_PROFILE_ABOUT);
    if (raw) *raw = cJSON_Duplicate(profile, true);
    /* "profile" itself is kept as given: it says which. */
    if (merge_into(profile, json)) {
      merged = profile;
      profile = NULL;
    } else {
      exp_errors_addf(e, "cluster.profile: out of memory");
    }
  }
  cJSON_Delete(profile);
  return merged;
}

/* The warning of a step_s measured for another workload than the spec's,
 * where the spec gives none of its own (see exp_cluster_include_profile). */
static void warn_step_workload(const cJSON *spec, const cJSON *cluster, const cJSON *merged,
                               const cJSON *measured, const char *file, exp_errors *warnings) {
  const cJSON *own_cost = cJSON_GetObjectItemCaseSensitive(cluster, "cost");
  const cJSON *cost = cJSON_GetObjectItemCaseSensitive(merged, "cost");
  const cJSON *step = cJSON_GetObjectItemCaseSensitive(cost, "step_s");
  const cJSON *by = cJSON_GetObjectItemCaseSensitive(cost, "step_s_by_policy");
  const cJSON *workload = cJSON_GetObjectItemCaseSensitive(spec, "workload");
  if (!warnings || !measured || cJSON_Compare(measured, workload, true)) return;
  if (!cJSON_GetObjectItemCaseSensitive(own_cost, "step_s") && cJSON_IsNumber(step) &&
      step->valuedouble != 0)
    exp_errors_addf(warnings,
                    "cluster.profile %s: its cost.step_s (%g s a step) was measured for another "
                    "workload than this spec's (calibration.step.workload there): measure this "
                    "one with `pslab calibrate --workload`, or set cluster.cost.step_s",
                    file, step->valuedouble);
  if (!cJSON_GetObjectItemCaseSensitive(own_cost, "step_s_by_policy") && cJSON_IsObject(by) &&
      by->child)
    exp_errors_addf(warnings,
                    "cluster.profile %s: its cost.step_s_by_policy was measured for another "
                    "workload than this spec's (calibration.step.workload there): measure this "
                    "one with `pslab calibrate --workload`, or set cluster.cost.step_s_by_policy",
                    file);
}

/* The warning of step figures measured under a change of the model
 * (`calibrate --workload --set cluster.PATH=VALUE`, in the step record's
 * "sets") that the spec's cluster does not make: they hold what that model
 * leaves uncharged, not what this one does. */
static void warn_step_sets(const cJSON *merged, const cJSON *sets, const char *file,
                           exp_errors *warnings) {
  for (const cJSON *it = cJSON_IsArray(sets) ? sets->child : NULL; warnings && it;
       it = it->next) {
    const char *set = cJSON_GetStringValue(it);
    const char *eq = set ? strchr(set, '=') : NULL;
    if (!eq || strncmp(set, "cluster.", 8) != 0 || eq - set - 8 >= EXP_PATH_MAX) continue;
    char path[EXP_PATH_MAX];
    snprintf(path, sizeof path, "%.*s", (int)(eq - set - 8), set + 8);
    if (strcmp(path, "profile") == 0 || strncmp(path, "cost.step_s", 11) == 0) continue;
    cJSON *value = exp_set_value(eq + 1);
    const cJSON *here = exp_path_get(merged, path);
    if (value && (!here || !cJSON_Compare(here, value, true)))
      exp_errors_addf(warnings,
                      "cluster.profile %s: its step figures were measured with --set %s "
                      "(calibration.step.sets there), which this spec does not make: they "
                      "hold what that model leaves uncharged; set it too, or measure again "
                      "with `pslab calibrate --workload`",
                      file, set);
    cJSON_Delete(value);
  }
}

void exp_cluster_include_profile(cJSON *spec, const char *base_dir, exp_errors *errs,
                                 exp_errors *profile_keys, exp_errors *warnings) {
  cJSON *cluster = cJSON_GetObjectItemCaseSensitive(spec, "cluster");
  if (!cJSON_IsObject(cluster) || !cJSON_GetObjectItemCaseSensitive(cluster, "profile")) return;
  char *file = NULL;
  cJSON *step = NULL;
  cJSON *merged = with_profile(errs, cluster, base_dir, &file, NULL, &step);
  warn_step_workload(spec, cluster, merged, cJSON_GetObjectItemCaseSensitive(step, "workload"),
                     file, warnings);
  if (merged) warn_step_sets(merged, cJSON_GetObjectItemCaseSensitive(step, "sets"), file,
                             warnings);
  cJSON_Delete(step);
  free(file);
  /* What only the profile gave: whole fields, and the fields within an
   * object the spec gave in part (machines.slice beside the spec's own
   * machines.pin). */
  for (const cJSON *k = merged ? merged->child : NULL; k && profile_keys; k = k->next) {
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(cluster, k->string);
    if (!own) exp_errors_addf(profile_keys, "%s", k->string);
    else if (cJSON_IsObject(own) && cJSON_IsObject(k))
      for (const cJSON *f = k->child; f; f = f->next)
        if (!cJSON_GetObjectItemCaseSensitive(own, f->string))
          exp_errors_addf(profile_keys, "%s.%s", k->string, f->string);
  }
  if (merged) cJSON_ReplaceItemInObjectCaseSensitive(spec, "cluster", merged);
  else cJSON_DeleteItemFromObjectCaseSensitive(cluster, "profile"); /* said once */
}

/* --------------------------------------------------------------- units */

static const exp_unit_field unit_fields[] = {
    {"host_speed", EXP_QTY_FLOPS},
    {"network.bandwidth", EXP_QTY_BANDWIDTH},
    {"network.latency", EXP_QTY_DURATION},
    {"network.backbone_bandwidth", EXP_QTY_BANDWIDTH},
    {"network.backbone_latency", EXP_QTY_DURATION},
    {"machines.loopback_latency", EXP_QTY_DURATION},
    {"machines.loopback_bandwidth", EXP_QTY_BANDWIDTH},
    {"machines.slice", EXP_QTY_DURATION},
    {"machines.preempt_wait", EXP_QTY_DURATION},
    {"machines.preempt_per_thread", EXP_QTY_DURATION},
};

const exp_unit_field *exp_unit_fields(size_t *count) {
  *count = sizeof unit_fields / sizeof unit_fields[0];
  return unit_fields;
}

/* A bare number where the unit is not in the field's name is refused (was
 * "latency": 50 fifty seconds or fifty microseconds?), but at a field the
 * cluster's profile gives as a number: `pslab calibrate` writes its figures
 * in base units, and spec.json and the records carry them merged in (from
 * the profile as it was then: the value may since differ). A number out of
 * range is left to exp_get_quantity, whose message shows the same forms. */
static void check_units(exp_errors *e, const cJSON *own, const cJSON *profile) {
  for (size_t i = 0; i < sizeof unit_fields / sizeof unit_fields[0]; i++) {
    const cJSON *v = exp_path_get(own, unit_fields[i].path);
    bool duration = unit_fields[i].q == EXP_QTY_DURATION;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        !(duration ? v->valuedouble >= 0 : v->valuedouble > 0))
      continue;
    const cJSON *figure = profile ? exp_path_get(profile, unit_fields[i].path) : NULL;
    if (cJSON_IsNumber(figure)) continue;
    char p[EXP_PATH_MAX];
    exp_child_path(p, sizeof p, "cluster", unit_fields[i].path);
    exp_expect(e, p, exp_quantity_forms(unit_fields[i].q), v);
  }
}

/* ---------------------------------------------------------------- door */

static void parse_fields(const cJSON *json, const char *base_dir, exp_cluster *out,
                         exp_errors *errs) {
  const char *p = "cluster";
  exp_check_keys(errs, json, p, cluster_keys);
  double nodes = 0, wpn = 0;
  if (exp_get_int(errs, json, p, "nodes", 1, MAX_NODES, true, &nodes))
    out->sim.nodes = (uint32_t)nodes;
  if (exp_get_int(errs, json, p, "workers_per_node", 1, MAX_WORKERS_PER_NODE,
                  false, &wpn) && wpn > 0)
    out->sim.workers_per_node = (uint32_t)wpn;
  exp_get_quantity(errs, json, p, "host_speed", EXP_QTY_FLOPS, &out->sim.host_speed);
  const cJSON *net = NULL, *cost = NULL, *machines = NULL;
  if (exp_get_object(errs, json, p, "network", false, &net) && net)
    parse_network(errs, net, &out->sim);
  out->real.bandwidth = out->sim.bandwidth; /* what stragglers' bandwidth factors slow */
  if (exp_get_object(errs, json, p, "cost", false, &cost) && cost)
    parse_cost(errs, cost, &out->sim.cost);
  const cJSON *by = cost ? cJSON_GetObjectItemCaseSensitive(cost, "step_s_by_policy") : NULL;
  if (by) parse_step_by_policy(errs, by, out);
  if (exp_get_object(errs, json, p, "machines", false, &machines) && machines)
    parse_machines(errs, machines, (uint32_t)nodes, out);
  const cJSON *stragglers = cJSON_GetObjectItemCaseSensitive(json, "stragglers");
  if (stragglers) parse_stragglers(errs, stragglers, (uint32_t)nodes, out);
  parse_platform(errs, json, base_dir, (uint32_t)nodes, out);
  parse_roles(errs, json, (uint32_t)nodes, &out->sim);
  const cJSON *scale = cJSON_GetObjectItemCaseSensitive(json, "scale");
  uint32_t servers = out->sim.servers ? out->sim.servers : (uint32_t)nodes;
  if (scale) parse_scale(errs, scale, servers, out);
  parse_real(errs, json, base_dir, (uint32_t)nodes, &out->real);
  out->sim.timeout_s = out->real.timeout_s; /* one bound on a wait, both backends */
}

bool exp_cluster_parse(const cJSON *json, const char *base_dir,
                       exp_cluster *out, exp_errors *errs) {
  size_t before = errs->count;
  *out = (exp_cluster){0};
  sim_cluster_default(&out->sim);
  real_cluster_default(&out->real);
  if (!cJSON_IsObject(json)) {
    exp_expect(errs, "cluster", "an object", json);
    return false;
  }
  cJSON *merged = NULL, *figures = NULL;
  char *profile = NULL;
  if (cJSON_GetObjectItemCaseSensitive(json, "profile")) {
    merged = with_profile(errs, json, base_dir, &profile, &figures, NULL);
    if (!merged) {
      free(profile);
      cJSON_Delete(figures);
      return false;
    }
  }
  check_units(errs, json, figures);
  cJSON_Delete(figures);
  if (merged) json = merged;
  parse_fields(json, base_dir, out, errs);
  /* What only the whole cluster can tell (placement against stragglers). */
  char err[EXP_PATH_MAX + 256];
  if (errs->count == before && sim_cluster_check(&out->sim, err, sizeof err) != 0)
    exp_errors_addf(errs, "%s", err);
  if (merged && errs->count > before)
    exp_errors_addf(errs, "cluster.profile: the fields above may come from %s, merged under "
                          "the spec's own", profile);
  cJSON_Delete(merged);
  free(profile);
  return errs->count == before;
}

void exp_cluster_free(exp_cluster *c) {
  free(c->stragglers);
  for (size_t i = 0; c->phases && i < c->n_phase_lists; i++) free(c->phases[i]);
  free(c->phases);
  free(c->real_stragglers);
  free(c->place);
  free(c->platform_file);
  for (size_t i = 0; c->hosts && i < c->sim.n_hosts; i++) free(c->hosts[i]);
  free(c->hosts);
  free(c->scale);
  for (size_t i = 0; i < c->n_step_policy; i++) free(c->step_policy[i]);
  free(c->step_policy);
  free(c->step_policy_s);
  *c = (exp_cluster){0};
}
