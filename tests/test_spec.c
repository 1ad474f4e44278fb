/*
 * Spec loading and validation (experiments/spec/: spec_load.c, cluster.c,
 * units.c, field_checks.c): a table of bad specs, each with the message it
 * must produce; several problems reported at once; syntax errors located by
 * line and column; units; --set overrides; the typed cluster sim/ and real/
 * receive.
 *
 * Specs are written with single quotes, turned into double quotes before
 * parsing, so that the table stays readable.
 */
#include "tests/unit.h"

#include "experiments/experiment.h"
#include "experiments/common/common.h"
#include "experiments/spec/spec.h" /* the fields that take units */

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------- helpers */

static char *dq(const char *s) {
  char *t = strdup(s);
  for (char *p = t; *p; p++)
    if (*p == '\'') *p = '"';
  return t;
}

#define GOOD_WORKLOAD "'workload': {'type': 'zipf', 'keys': 100, 'steps_per_worker': 10}"
#define GOOD_POLICY "'policy': {'type': 'static'}"
#define GOOD_REST GOOD_WORKLOAD ", " GOOD_POLICY
#define SAMPLING_WL "'workload': {'type': 'zipf', 'keys': 100, 'steps_per_worker': 10, 'samples_per_step': 1}"

static exp_spec *parse_sets(const char *spec, const char *const *sets, size_t n,
                            exp_errors *e) {
  char *text = dq(spec);
  exp_spec *s = exp_spec_parse(text, strlen(text), "spec.json", ".", sets, n, e);
  free(text);
  return s;
}

static exp_spec *parse(const char *spec, exp_errors *e) {
  return parse_sets(spec, NULL, 0, e);
}

static void print_errors(const exp_errors *e) {
  for (size_t i = 0; i < e->count; i++) fprintf(stderr, "    | %s\n", e->lines[i]);
}

/* The spec is rejected and some message contains `want`. */
static void expect_error(const char *spec, const char *want) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse(spec, &e);
  CU_ASSERT_PTR_NULL(s);
  bool found = exp_errors_contain(&e, want);
  if (!found) {
    fprintf(stderr, "\n  expected a message containing: %s\n  got:\n", want);
    print_errors(&e);
  }
  CU_ASSERT_TRUE(found);
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* -------------------------------------------------------- good specs */

static void test_minimal_spec_is_valid_with_defaults(void) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse("{'name': 'min', 'cluster': {'nodes': 2}, " GOOD_REST "}", &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(e.count, 0);
  CU_ASSERT_STRING_EQUAL(exp_spec_name(s), "min");
  const exp_run_list *runs = exp_spec_runs(s);
  CU_ASSERT_EQUAL(runs->count, 1);
  CU_ASSERT_EQUAL(runs->points, 1);
  CU_ASSERT_EQUAL(runs->runs[0].run, 1);
  CU_ASSERT_EQUAL(runs->runs[0].seed, 1); /* the default seed */
  CU_ASSERT_EQUAL(exp_spec_plots(s)->count, 0);
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* Sampling schemes that read sampled keys where they are work with worker-only
 * nodes (preloc and pool, which localize them, are refused: bad_specs). */
static void test_reading_sampling_schemes_accept_worker_only_nodes(void) {
  const char *specs[] = {
      "{'name': 't', 'cluster': {'nodes': 2, 'servers': 1, 'worker_nodes': 1}, " SAMPLING_WL
      ", 'policy': {'type': 'static', 'sampling': {'scheme': 'naive'}}}",
      "{'name': 't', 'cluster': {'nodes': 2, 'servers': 1, 'worker_nodes': 1}, " SAMPLING_WL
      ", 'policy': {'type': 'static', 'sampling': {'scheme': 'local'}}}",
      "{'name': 't', 'cluster': {'nodes': 2}, " SAMPLING_WL
      ", 'policy': {'type': 'static', 'sampling': {'scheme': 'preloc'}}}",
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    exp_errors e;
    exp_errors_init(&e);
    exp_spec *s = parse(specs[i], &e);
    print_errors(&e);
    CU_ASSERT_PTR_NOT_NULL(s);
    CU_ASSERT_EQUAL(e.count, 0);
    exp_spec_free(s);
    exp_errors_free(&e);
  }
}

/* Every spec shipped in experiments/specs/ is valid, with its run count. */
static void test_shipped_specs_are_valid(void) {
  static const struct {
    const char *file;
    size_t runs, plots;
  } shipped[] = {{"quickstart.json", 4, 2},
                 {"scaling.json", 12, 2},
                 {"skew.json", 20, 2},
                 {"staleness.json", 5, 2},
                 {"sampling.json", 5, 2}};
  for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/experiments/specs/%s", unit_source_dir(), shipped[i].file);
    exp_errors e;
    exp_errors_init(&e);
    exp_spec *s = exp_spec_load(path, NULL, 0, &e);
    print_errors(&e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(exp_spec_runs(s)->count, shipped[i].runs);
    CU_ASSERT_EQUAL(exp_spec_plots(s)->count, shipped[i].plots);
    exp_spec_free(s);
    exp_errors_free(&e);
  }
}

/* The largest work a run of the spec at path (after sets) asks for; -1 when
 * it does not load. */
static double most_work(const char *path, const char *const *sets, size_t n_sets) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(path, sets, n_sets, &e);
  print_errors(&e);
  exp_errors_free(&e);
  if (!s) return -1;
  double most = 0;
  char how[512];
  for (size_t i = 0; i < exp_spec_runs(s)->count; i++) {
    double w = exp_run_work(&exp_spec_runs(s)->runs[i], how, sizeof how);
    if (w > most) most = w;
  }
  CU_ASSERT_TRUE(exp_spec_check_work(s, &e));
  exp_spec_free(s);
  return most;
}

/* The work limit: every spec shipped (experiments/specs/, tests/specs/) and
 * the 1,024-node scale runs (bench/sim_scale --every-policy: the
 * quickstart's workload, 1,024 nodes x 4 workers x 100 steps) ask for less
 * than a hundredth of it; steps_per_worker 1e15 is refused with a message
 * naming the fields, the figure and the limit. */
static void test_work_limit(void) {
  static const char *const dirs[] = {"experiments/specs", "tests/specs"};
  double most = 0;
  size_t specs = 0;
  for (size_t k = 0; k < 2; k++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", unit_source_dir(), dirs[k]);
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    for (struct dirent *ent; (ent = readdir(d));) {
      size_t len = strlen(ent->d_name);
      if (len < 6 || strcmp(ent->d_name + len - 5, ".json") != 0) continue;
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
      double w = most_work(path, NULL, 0);
      CU_ASSERT(w >= 0 && w < EXP_WORK_LIMIT / 100);
      if (w > most) most = w;
      specs++;
    }
    closedir(d);
  }
  CU_ASSERT(specs >= 15);
  char qs[1024];
  snprintf(qs, sizeof qs, "%s/experiments/specs/quickstart.json", unit_source_dir());
  const char *scale[] = {"cluster.nodes=1024", "cluster.workers_per_node=4",
                         "workload.steps_per_worker=100"};
  double w = most_work(qs, scale, 3);
  CU_ASSERT_EQUAL(w, 1024.0 * 4 * 100 * 20);
  CU_ASSERT(w < EXP_WORK_LIMIT / 100);
  fprintf(stderr, "\n  work limit %g: shipped specs at most %g (%.2g of it), 1,024-node scale "
          "runs %g (%.2g of it)\n", EXP_WORK_LIMIT, most, most / EXP_WORK_LIMIT, w,
          w / EXP_WORK_LIMIT);
  const char *huge[] = {"workload.steps_per_worker=1e15"};
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(qs, huge, 1, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_FALSE(exp_spec_check_work(s, &e));
  CU_ASSERT_EQUAL_FATAL(e.count, 1);
  CU_ASSERT_TRUE(unit_contains(e.lines[0], "quickstart.json: run 1 asks for 6.4e+17 key "
                               "accesses (workload.steps_per_worker 1e+15 x 20 keys a step"));
  CU_ASSERT_TRUE(unit_contains(e.lines[0], "x cluster.nodes 8 x cluster.workers_per_node 4), "
                               "over the limit of 1e+09 a run"));
  CU_ASSERT_TRUE(unit_contains(e.lines[0], "as 3 other runs do; --force runs it anyway"));
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* Every spec shipped in experiments/specs has its reference results in
 * results/reference/<name>/ (make reference): the same spec, a successful
 * record of each of its runs, each plot drawn. A spec changed without
 * `make reference` fails here, so the committed results never describe
 * another spec. */
static void test_every_shipped_spec_has_reference_results(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/experiments/specs", unit_source_dir());
  DIR *d = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  size_t specs = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    size_t len = strlen(ent->d_name);
    if (len < 6 || strcmp(ent->d_name + len - 5, ".json") != 0) continue;
    specs++;
    char path[2048], ref[2048];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    snprintf(ref, sizeof ref, "%s/results/reference/%.*s", unit_source_dir(), (int)(len - 5),
             ent->d_name);
    exp_errors e;
    exp_errors_init(&e);
    exp_spec *s = exp_spec_load(path, NULL, 0, &e);
    print_errors(&e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(exp_spec_warnings(s)->count, 0);
    char file[2200], err[2400];
    snprintf(file, sizeof file, "%s/spec.json", ref);
    char *text = exp_read_file(file, NULL, err, sizeof err);
    cJSON *saved = text ? cJSON_Parse(text) : NULL;
    bool same = cJSON_Compare(saved, exp_spec_json(s), true);
    if (!same) fprintf(stderr, "\n  %s is not %s: run `make reference`\n", file, path);
    CU_ASSERT_TRUE(same);
    snprintf(file, sizeof file, "%s/runs.jsonl", ref);
    cJSON *records = exp_jsonl_load(file, &e);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(records), (int)exp_spec_runs(s)->count);
    for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
      CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(r, "error"));
    const exp_plot_list *plots = exp_spec_plots(s);
    for (size_t i = 0; i < plots->count; i++) {
      struct stat st;
      snprintf(file, sizeof file, "%s/%s.svg", ref, plots->items[i].name);
      CU_ASSERT_TRUE(stat(file, &st) == 0 && st.st_size > 0);
      snprintf(file, sizeof file, "%s/%s.png", ref, plots->items[i].name);
      CU_ASSERT_TRUE(stat(file, &st) == 0 && st.st_size > 0);
    }
    cJSON_Delete(records);
    cJSON_Delete(saved);
    free(text);
    exp_spec_free(s);
    exp_errors_free(&e);
  }
  closedir(d);
  CU_ASSERT_TRUE(specs >= 5);
}

/* --------------------------------------------------------- bad specs */

#define C2 "'cluster': {'nodes': 2}"

static const struct {
  const char *spec;
  const char *message;
} bad_specs[] = {
    /* top level */
    {"[1, 2]", "spec.json: (top level): expected an object, found a list of 2"},
    {"{" C2 ", " GOOD_REST "}", "spec.json: name: expected a string, found nothing (the key is missing)"},
    {"{'name': 5, " C2 ", " GOOD_REST "}", "spec.json: name: expected a string, found 5"},
    {"{'name': 'a b', " C2 ", " GOOD_REST "}", "spec.json: name: expected a name of letters, digits, '_', '.' and '-', found \"a b\""},
    {"{'name': 't', 'nmae': 1, " C2 ", " GOOD_REST "}", "spec.json: nmae: expected one of the keys of the spec (name, backend,"},
    {"{'name': 't', 'nmae': 1, " C2 ", " GOOD_REST "}", "found an unknown key (did you mean \"name\"?)"},
    {"{'name': 't', 'name': 'u', " C2 ", " GOOD_REST "}", "spec.json: name: expected the key once, found it 2 times"},
    {"{'name': 't', 'backend': 'gpu', " C2 ", " GOOD_REST "}", "spec.json: backend: expected one of \"sim\" (a SimGrid-simulated cluster in one process; times are simulated), \"real\" (one process per node over TCP (ZeroMQ); times are wall-clock), found \"gpu\""},
    {"{'name': 't', 'backend': 'real', 'cluster': {'nodes': 2, 'bind': 'nowhere'}, " GOOD_REST "}", "spec.json: cluster.bind: expected an IPv4 address of this machine, or \"*\" for every interface, found \"nowhere\""},
    {"{'name': 't', 'seed': -1, " C2 ", " GOOD_REST "}", "spec.json: seed: expected an integer >= 0, found -1"},
    {"{'name': 't', 'seed': 1.5, " C2 ", " GOOD_REST "}", "spec.json: seed: expected an integer >= 0, found 1.5"},
    {"{'name': 't', 'repeats': 0, " C2 ", " GOOD_REST "}", "spec.json: repeats: expected an integer >= 1, found 0"},
    {"{'name': 't', 'repeats': '2', " C2 ", " GOOD_REST "}", "spec.json: repeats: expected an integer >= 1, found \"2\""},
    {"{'name': 't', 'description': 3, " C2 ", " GOOD_REST "}", "spec.json: description: expected a string, found 3"},
    {"{'name': 't', " GOOD_REST "}", "spec.json: cluster: expected an object, found nothing (the key is missing)"},
    {"{'name': 't', " C2 ", " GOOD_POLICY "}", "spec.json: workload: expected an object, found nothing (the key is missing)"},
    {"{'name': 't', " C2 ", " GOOD_WORKLOAD "}", "spec.json: policy: expected an object, found nothing (the key is missing)"},
    {"{'name': 't', 'cluster': [], " GOOD_REST "}", "spec.json: cluster: expected an object, found an empty list"},
    /* cluster */
    {"{'name': 't', 'cluster': {'nodes': -3}, " GOOD_REST "}", "spec.json: cluster.nodes: expected an integer >= 1, found -3"},
    {"{'name': 't', 'cluster': {}, " GOOD_REST "}", "spec.json: cluster.nodes: expected an integer >= 1, found nothing (the key is missing)"},
    {"{'name': 't', 'cluster': {'nodes': 2000000}, " GOOD_REST "}", "cluster.nodes: expected an integer <= 1000000, found 2000000"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'nodez': 3}, " GOOD_REST "}", "spec.json: cluster.nodez: expected one of the keys of cluster (nodes, workers_per_node,"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'workers_per_node': 0}, " GOOD_REST "}", "cluster.workers_per_node: expected an integer >= 1, found 0"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'count': 1}}, " GOOD_REST "}", "spec.json: cluster.machines.cores: expected an integer >= 1, found nothing (the key is missing)"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'count': 3, 'cores': 1}}, " GOOD_REST "}", "spec.json: cluster.machines.count: expected an integer <= 2, found 3"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'count': 2, 'cores': 1, 'place': [0, 2]}}, " GOOD_REST "}", "spec.json: cluster.machines.place[1]: expected a machine number in [0, 2), found 2"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'count': 2, 'cores': 1, 'place': [0]}}, " GOOD_REST "}", "spec.json: cluster.machines.place: expected a list of 2 machine numbers (one per node), found a list of 1"},
    {"{'name': 't', 'cluster': {'nodes': 3, 'machines': {'count': 2, 'cores': 1, 'place': [1, 1, 1]}}, " GOOD_REST "}", "spec.json: cluster.machines: expected every machine to run a node, found none on machine 0"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'cores': 1}, 'stragglers': [{'node': 0, 'speed_factor': 0.5}, {'node': 1, 'speed_factor': 0.5}]}, " GOOD_REST "}", "cluster.stragglers[1]: expected at most one straggler per machine"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'cores': 1, 'loopback_latency': '1 parsec'}}, " GOOD_REST "}", "spec.json: cluster.machines.loopback_latency: expected a duration"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'cores': 1, 'scheduler': 'fifo'}}, " GOOD_REST "}", "spec.json: cluster.machines.scheduler: expected one of"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'machines': {'cores': 1, 'slice': 3}}, " GOOD_REST "}", "spec.json: cluster.machines.slice: expected a duration"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'cost': {'send_per_message_s': -1}}, " GOOD_REST "}", "spec.json: cluster.cost.send_per_message_s: expected a duration"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'profile': 3}, " GOOD_REST "}", "spec.json: cluster.profile: expected a string, found 3"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'profile': 'no-such-profile.json'}, " GOOD_REST "}", "spec.json: cluster.profile: no-such-profile.json: cannot read"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'host_speed': '10GHz'}, " GOOD_REST "}", "cluster.host_speed: expected a speed with its unit, such as \"10Gf\", \"1.5Mf\", \"100f\" (flop/s), > 0, found \"10GHz\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'host_speed': 0}, " GOOD_REST "}", "cluster.host_speed: expected a speed with its unit, such as"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': {'bandwidth': '10Gbs'}}, " GOOD_REST "}", "cluster.network.bandwidth: expected a bandwidth with its unit, such as \"10Gbps\", \"100Mbps\", \"125MBps\" (bits or bytes per second), > 0, found \"10Gbs\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': {'latency': '5 parsecs'}}, " GOOD_REST "}", "cluster.network.latency: expected a duration with its unit, such as \"50us\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': {'latency': -1}}, " GOOD_REST "}", "cluster.network.latency: expected a duration with its unit, such as \"50us\", \"2ms\", \"1.5s\", \"100ns\", found -1"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': {'model': 'XX'}}, " GOOD_REST "}", "cluster.network.model: expected one of \"CM02\", \"LV08\", \"latency_bandwidth\", found \"XX\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': {'topology': 'ring'}}, " GOOD_REST "}", "cluster.network.topology: expected one of \"star\", \"backbone\", found \"ring\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': {'speed': 1}}, " GOOD_REST "}", "cluster.network.speed: expected one of the keys of cluster.network"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'network': 5}, " GOOD_REST "}", "cluster.network: expected an object, found 5"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 5}]}, " GOOD_REST "}", "cluster.stragglers[0].node: expected an integer <= 1, found 5"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 0, 'speed_factor': 0}]}, " GOOD_REST "}", "cluster.stragglers[0].speed_factor: expected a number > 0, found 0"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'speed_factor': 2}]}, " GOOD_REST "}", "cluster.stragglers[0].node: expected an integer >= 0, found nothing"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1}, {'node': 1}]}, " GOOD_REST "}", "cluster.stragglers[1].node: expected each node once in cluster.stragglers, found node 1 again"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': {'node': 1}}, " GOOD_REST "}", "cluster.stragglers: expected a list of stragglers, found an object"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0.1, 'until_s': 0.3, 'speed_factor': 0.5}, {'from_s': 0.2, 'bandwidth_factor': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[1].from_s: expected a time >= 0.3, when cluster.stragglers[0].phases[0] ends (a node's phases come in time order and do not overlap), found 0.2"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0.1, 'speed_factor': 0.5}, {'from_s': 0.2, 'speed_factor': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[1].from_s: expected no phase after cluster.stragglers[0].phases[0], which lasts to the end of the run"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0.1, 'until_s': 0.2, 'speed_factor': 0.5}, {'until_s': 0.5, 'speed_factor': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[1].from_s: expected a time >= 0.2, when cluster.stragglers[0].phases[0] ends (a node's phases come in time order and do not overlap), found nothing, which means 0"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0.3, 'until_s': 0.3, 'speed_factor': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0].until_s: expected a time after from_s (0.3), found 0.3"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'from_s': 0.5, 'until_s': 0.2, 'speed_factor': 0.5}]}, " GOOD_REST "}", "cluster.stragglers[0].until_s: expected a time after from_s (0.5), found 0.2"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'speed_factor': -1}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0].speed_factor: expected a number > 0, found -1"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0, 'bandwidth_factor': 0}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0].bandwidth_factor: expected a number > 0, found 0"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': -1, 'speed_factor': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0].from_s: expected a number >= 0, found -1"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0.1, 'speed': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0].speed: expected one of the keys of cluster.stragglers[0].phases[0] (from_s, until_s, speed_factor, bandwidth_factor), found an unknown key"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [{'from_s': 0.1, 'until_s': 0.2}]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0]: expected speed_factor or bandwidth_factor (what the phase slows), found neither"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'speed_factor': 0.5, 'phases': [{'from_s': 0.1, 'speed_factor': 0.5}]}]}, " GOOD_REST "}", "cluster.stragglers[0].speed_factor: expected nothing beside \"phases\" (give it in each phase), found 0.5"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': []}]}, " GOOD_REST "}", "cluster.stragglers[0].phases: expected a list of at least one phase"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'phases': [3]}]}, " GOOD_REST "}", "cluster.stragglers[0].phases[0]: expected an object {\"from_s\", \"until_s\", \"speed_factor\", \"bandwidth_factor\"}, found 3"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, 'until': 0.5, 'speed_factor': 0.5}]}, " GOOD_REST "}", "cluster.stragglers[0].until: expected one of the keys of cluster.stragglers[0] (node, speed_factor, bandwidth_factor, from_s, until_s, phases), found an unknown key"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'platform_file': 'no-such-platform.xml', 'hosts': ['a', 'b']}, " GOOD_REST "}", "spec.json: cluster.platform_file: expected a readable SimGrid platform file (looked for no-such-platform.xml), found \"no-such-platform.xml\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'hosts': ['a', 'b']}, " GOOD_REST "}", "cluster.hosts: expected nothing without cluster.platform_file, found a list of 2"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'cost': {'per_key_s': -1}}, " GOOD_REST "}", "cluster.cost.per_key_s: expected a duration with its unit, such as \"50us\", \"2ms\", \"1.5s\", \"100ns\", or a number of seconds >= 0, found -1"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'cost': {'per_msg_s': 1}}, " GOOD_REST "}", "cluster.cost.per_msg_s: expected one of the keys of cluster.cost (per_message_s, per_key_s, per_byte_s, local_per_key_s, send_per_message_s, wakeup_s, io_per_message_s, wakeup_wait_s, io_wakeup_s, initial_per_float_s, shared_per_key_s, shared_per_byte_s, step_s, step_s_by_policy), found an unknown key"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'cost': {'step_s_by_policy': {'adaptiv': 1e-6}}}, " GOOD_REST "}", "cluster.cost.step_s_by_policy.adaptiv: expected a policy type (as policy.type), found an unknown one"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'cost': {'step_s_by_policy': {'adaptive': -1}}}, " GOOD_REST "}", "cluster.cost.step_s_by_policy.adaptive: expected a number of seconds >= 0, or a duration such as \"20us\", found -1"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'cost': {'step_s_by_policy': 1e-6}}, " GOOD_REST "}", "cluster.cost.step_s_by_policy: expected an object of policy types and durations (seconds a step), found 1e-06"},
    /* cluster, roles and scaling */
    {"{'name': 't', 'cluster': {'nodes': 4, 'servers': 5}, " GOOD_REST "}", "spec.json: cluster.servers: expected an integer <= 4, found 5"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'worker_nodes': 0}, " GOOD_REST "}", "spec.json: cluster.worker_nodes: expected an integer >= 1, found 0"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'servers': 1, 'worker_nodes': 2}, " GOOD_REST "}", "spec.json: cluster.worker_nodes: expected at least 3 with 1 servers of 4 nodes (every node a server, a worker node or both), found 2"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'servers': 2, 'worker_nodes': 2}, " GOOD_WORKLOAD ", 'policy': {'type': 'relocate'}}", "spec.json: cluster.servers: policy.type \"relocate\" puts keys on the nodes of the workers that use them, so every worker node must be a server; expected 4 (every node) with it, found 2 servers and 2 worker nodes of 4 nodes"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'servers': 1, 'worker_nodes': 1}, " SAMPLING_WL ", 'policy': {'type': 'static', 'sampling': {'scheme': 'preloc'}}}", "spec.json: policy.sampling.scheme: \"preloc\" localizes the keys a worker samples to the worker's node, which holds no keys when it is not a server (cluster.servers 1 of 2 nodes); expected \"naive\" or \"local\" (they read sampled keys where they are), or every node a server, found \"preloc\""},
    {"{'name': 't', 'cluster': {'nodes': 4, 'servers': 2, 'worker_nodes': 4}, " SAMPLING_WL ", 'policy': {'type': 'psld', 'sampling': {'scheme': 'pool'}}}", "spec.json: policy.sampling.scheme: \"pool\" localizes the keys a worker samples"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'servers': 2, 'worker_nodes': 2}, " GOOD_REST ", 'stages': [{'workers': 2, 'steps': 10}]}", "spec.json: stages: expected none with separate servers and worker nodes (cluster.servers 2 and cluster.worker_nodes 2 of 4 nodes; not implemented)"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'scale': {'at_s': 1}}, " GOOD_REST "}", "spec.json: cluster.scale: expected a list of steps {\"at_s\", \"servers\"}, found an object"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'scale': [{'at_s': 1, 'servers': 5}]}, " GOOD_REST "}", "spec.json: cluster.scale[0].servers: expected an integer <= 4, found 5"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'scale': [{'at_s': 1, 'servers': 2}, {'at_s': 0.5, 'servers': 3}]}, " GOOD_REST "}", "spec.json: cluster.scale[1].at_s: expected a number >= 1, found 0.5"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'scale': [{'servers': 2}]}, " GOOD_REST "}", "spec.json: cluster.scale[0].at_s: expected a number >= 0, found nothing"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'scale': [{'at_s': 1, 'servers': 2, 'when': 3}]}, " GOOD_REST "}", "spec.json: cluster.scale[0].when: expected one of the keys of cluster.scale[0] (at_s, servers)"},
    {"{'name': 't', 'cluster': {'nodes': 4, 'scale': [{'at_s': 1, 'servers': 2}]}, " GOOD_WORKLOAD ", 'policy': {'type': 'nups'}}", "spec.json: cluster.scale: expected none with policy.type \"nups\""},
    /* cluster, the real backend's fields */
    {"{'name': 't', 'cluster': {'nodes': 2, 'coordinator': 'node01'}, " GOOD_REST "}", "spec.json: cluster.coordinator: expected \"HOST:PORT\", rank 0's address (a port 1-65535), found \"node01\""},
    {"{'name': 't', 'cluster': {'nodes': 2, 'coordinator': 'node01:0'}, " GOOD_REST "}", "cluster.coordinator: expected \"HOST:PORT\""},
    {"{'name': 't', 'cluster': {'nodes': 4, 'base_port': 65533}, " GOOD_REST "}", "spec.json: cluster.base_port: expected an integer <= 65532, found 65533"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'timeout_s': 0}, " GOOD_REST "}", "spec.json: cluster.timeout_s: expected a number > 0, found 0"},
    {"{'name': 't', 'cluster': {'nodes': 2, 'compute': 'burn'}, " GOOD_REST "}", "spec.json: cluster.compute: expected one of \"spin\", \"sleep\", found \"burn\""},
    /* the rooms' own validation, under their prefixes */
    {"{'name': 't', " C2 ", 'workload': {'type': 'zipf', 'keys': 0, 'steps_per_worker': 10}, " GOOD_POLICY "}", "spec.json: workload.keys: expected"},
    {"{'name': 't', " C2 ", 'workload': {'type': 'nope'}, " GOOD_POLICY "}", "spec.json: workload.type: expected one of"},
    {"{'name': 't', " C2 ", " GOOD_WORKLOAD ", 'policy': {'type': 'nope'}}", "spec.json: policy.type: expected one of"},
    /* sweep */
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'cluster.nodes': []}}", "spec.json: sweep[\"cluster.nodes\"]: expected a non-empty list of values, found an empty list"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'cluster.nodes': 4}}", "sweep[\"cluster.nodes\"]: expected a non-empty list of values, found 4"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': [1]}", "spec.json: sweep: expected an object of dotted paths to lists of values, found a list of 1"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'cluster.net.latency': [1]}}", "sweep[\"cluster.net.latency\"]: expected a path whose parent exists in the spec, found no cluster.net"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'name': ['a', 'b']}}", "sweep[\"name\"]: expected a setting that may differ between runs"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'cluster..nodes': [1]}}", "sweep[\"cluster..nodes\"]: expected a dotted path such as \"cluster.nodes\""},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'cluster.nodes': [2, 0]}}", "spec.json: cluster.nodes: expected an integer >= 1, found 0 (in sweep point cluster.nodes=0)"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'sweep': {'colour': [1, 2]}}", "spec.json: colour: expected one of the keys of the spec"},
    /* plots */
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': {}}", "spec.json: plots: expected a list of plots"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'cluster.nodes'}]}", "spec.json: plots[0].y: expected a string, found nothing"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'cluster.nodes', 'y': 'speed'}]}", "spec.json: plots[0].y: expected a metric name (time_s, epoch_time_s, steps,"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'cluster.nodez', 'y': 'time_s'}]}", "spec.json: plots[0].x: expected a metric name"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'cluster.nodes', 'y': 'time_s', 'series': 'policy.kind'}]}", "spec.json: plots[0].series: expected a dotted path into the run config, found \"policy.kind\""},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'a/b', 'x': 'cluster.nodes', 'y': 'time_s'}]}", "spec.json: plots[0].name: expected a file name stem"},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'time_s', 'y': 'steps'}, {'name': 'p', 'x': 'time_s', 'y': 'bytes'}]}", "spec.json: plots[1].name: expected a name no other plot has, found \"p\""},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'time_s', 'y': 'steps', 'logy': 'yes'}]}", "spec.json: plots[0].logy: expected true or false, found \"yes\""},
    {"{'name': 't', " C2 ", " GOOD_REST ", 'plots': [{'name': 'p', 'x': 'time_s', 'y': 'steps', 'colour': 'red'}]}", "spec.json: plots[0].colour: expected one of the keys of plots[0]"},
};

static void test_bad_specs_table(void) {
  for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++)
    expect_error(bad_specs[i].spec, bad_specs[i].message);
}

static void test_every_error_reported_at_once(void) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse("{'name': 'x y', 'seed': -2, 'cluster': {'nodes': -3, "
                      "'network': {'bandwidth': 'fast'}}, "
                      "'workload': {'type': 'zipf', 'keys': 0, 'steps_per_worker': 1}, "
                      "'policy': {'type': 'nope'}, 'sweep': {'policy.x.y': [1]}, "
                      "'plots': [{'name': 'p', 'x': 'time_s', 'y': 'nothing'}]}",
                      &e);
  CU_ASSERT_PTR_NULL(s);
  const char *wanted[] = {"name: expected a name", "seed: expected an integer >= 0",
                          "cluster.nodes: expected an integer >= 1, found -3",
                          "cluster.network.bandwidth: expected a bandwidth",
                          "workload.keys: expected", "policy.type: expected",
                          "sweep[\"policy.x.y\"]: expected a path whose parent exists",
                          "plots[0].y: expected a metric name"};
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
    if (!exp_errors_contain(&e, wanted[i])) fprintf(stderr, "\n  missing: %s\n", wanted[i]);
    CU_ASSERT_TRUE(exp_errors_contain(&e, wanted[i]));
  }
  CU_ASSERT_EQUAL(e.count, sizeof wanted / sizeof wanted[0]);
  for (size_t i = 0; i < e.count; i++) { /* one line each, all named by file */
    CU_ASSERT_PTR_NULL(strchr(e.lines[i], '\n'));
    CU_ASSERT_EQUAL(strncmp(e.lines[i], "spec.json: ", 11), 0);
  }
  exp_spec_free(s);
  exp_errors_free(&e);
}

static void test_error_in_every_sweep_point_reported_once(void) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse("{'name': 't', 'cluster': {'nodes': 2, 'host_speed': 'x'}, " GOOD_REST
                      ", 'sweep': {'cluster.workers_per_node': [1, 2, 3]}}", &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(e.count, 1);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "cluster.host_speed: expected a speed"));
  CU_ASSERT_FALSE(exp_errors_contain(&e, "in sweep point"));
  exp_errors_free(&e);
  /* A problem of some points names the first and counts the others. */
  exp_errors_init(&e);
  s = parse("{'name': 't', " C2 ", " GOOD_REST
            ", 'sweep': {'cluster.nodes': [0, 2, -1, -5]}}", &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "found 0 (in sweep point cluster.nodes=0)"));
  CU_ASSERT_TRUE(exp_errors_contain(&e, "found -1 (in sweep point cluster.nodes=-1)"));
  exp_errors_free(&e);
}

/* ------------------------------------------------------ syntax errors */

static void test_syntax_error_has_line_and_column(void) {
  exp_errors e;
  exp_errors_init(&e);
  const char *text = "{\n  \"name\": \"t\",\n  \"cluster\": {\"nodes\": 2,,}\n}\n";
  exp_spec *s = exp_spec_parse(text, strlen(text), "bad.json", ".", NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(e.count, 1);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "bad.json:3:"));
  CU_ASSERT_TRUE(exp_errors_contain(&e, "invalid JSON near"));
  exp_errors_free(&e);

  exp_errors_init(&e);
  text = "{\"name\": \"t\"} trailing";
  s = exp_spec_parse(text, strlen(text), "t.json", ".", NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "t.json:1:15: invalid JSON near \"trailing\""));
  exp_errors_free(&e);

  exp_errors_init(&e);
  text = "{\"name\":\n \"t\"";
  s = exp_spec_parse(text, strlen(text), "cut.json", ".", NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "cut.json:2:5: invalid JSON: unexpected end of file"));
  exp_errors_free(&e);

  exp_errors_init(&e);
  s = exp_spec_parse("", 0, "empty.json", ".", NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "empty.json:1:1: invalid JSON"));
  exp_errors_free(&e);
}

static void test_unreadable_file_is_named(void) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load("/nonexistent/dir/spec.json", NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(e.count, 1);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "/nonexistent/dir/spec.json: cannot read: "));
  exp_errors_free(&e);
}

/* ------------------------------------------------------------- units */

static void test_units_table(void) {
  static const struct {
    char kind; /* f: flops, b: bandwidth, d: duration */
    const char *text;
    int rc;
    double value;
  } cases[] = {
      {'f', "10Gf", 0, 1e10},        {'f', "1.5Mf", 0, 1.5e6},
      {'f', "100f", 0, 100},         {'f', "2kf", 0, 2e3},
      {'f', "3Tf", 0, 3e12},         {'f', "1Pf", 0, 1e15},
      {'f', "2Gflops", 0, 2e9},      {'f', "1e3f", 0, 1e3},
      {'f', "10 Gf", 0, 1e10},       {'f', ".5Gf", 0, 5e8},
      {'f', "10", -1, 0},            {'f', "10G", -1, 0},
      {'f', "Gf", -1, 0},            {'f', "-1Gf", -1, 0},
      {'f', "10GHz", -1, 0},         {'f', "0x10f", -1, 0},
      {'f', "inff", -1, 0},          {'f', "10Gf ", -1, 0},
      {'f', "10gf", -1, 0},          {'f', "", -1, 0},
      {'b', "10Gbps", 0, 1.25e9},    {'b', "1Gbps", 0, 1.25e8},
      {'b', "100Mbps", 0, 1.25e7},   {'b', "125MBps", 0, 1.25e8},
      {'b', "8bps", 0, 1},           {'b', "1KiBps", 0, 1024},
      {'b', "1MiBps", 0, 1048576},   {'b', "10Gbs", -1, 0},
      {'b', "10Gb", -1, 0},          {'b', "10", -1, 0},
      {'b', "fast", -1, 0},          {'b', "10mbps", -1, 0},
      {'d', "50us", 0, 5e-5},        {'d', "1ms", 0, 1e-3},
      {'d', "0.5s", 0, 0.5},         {'d', "100ns", 0, 1e-7},
      {'d', "2ps", 0, 2e-12},        {'d', "1min", 0, 60},
      {'d', "1h", 0, 3600},          {'d', "0s", 0, 0},
      {'d', "5", -1, 0},             {'d', "5m", -1, 0},
      {'d', "5 parsecs", -1, 0},     {'d', "1.2.3s", -1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double v = -42;
    int rc = cases[i].kind == 'f'   ? exp_parse_flops(cases[i].text, &v)
             : cases[i].kind == 'b' ? exp_parse_bandwidth(cases[i].text, &v)
                                    : exp_parse_duration(cases[i].text, &v);
    if (rc != cases[i].rc) fprintf(stderr, "\n  unit case \"%s\": rc %d\n", cases[i].text, rc);
    CU_ASSERT_EQUAL(rc, cases[i].rc);
    if (rc == 0 && cases[i].rc == 0)
      CU_ASSERT_DOUBLE_EQUAL(v, cases[i].value, cases[i].value * 1e-12);
  }
}

/* ------------------------------------------------------ the cluster */

static void test_cluster_parses_units_into_sim_cluster(void) {
  char *text = dq("{'nodes': 4, 'workers_per_node': 3, 'host_speed': '2Gf', "
                  "'network': {'bandwidth': '1Gbps', 'latency': '1ms', 'model': 'LV08', "
                  "'topology': 'backbone', 'backbone_bandwidth': '125MBps', "
                  "'backbone_latency': '2ms'}, "
                  "'stragglers': [{'node': 3, 'speed_factor': 0.5}], "
                  "'cost': {'per_message_s': '2us', 'per_key_s': 1e-8, 'per_byte_s': '1ns', "
                  "'local_per_key_s': 0}}");
  cJSON *json = cJSON_Parse(text);
  free(text);
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster c;
  CU_ASSERT_TRUE(exp_cluster_parse(json, ".", &c, &e));
  print_errors(&e);
  CU_ASSERT_EQUAL(c.sim.nodes, 4);
  CU_ASSERT_EQUAL(c.sim.workers_per_node, 3);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.host_speed, 2e9, 1);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.bandwidth, 1.25e8, 1e-3);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.latency, 1e-3, 1e-15);
  CU_ASSERT_STRING_EQUAL(c.sim.network_model, "LV08");
  CU_ASSERT_EQUAL(c.sim.topology, SIM_TOPOLOGY_BACKBONE);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.backbone_bandwidth, 1.25e8, 1e-3);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.backbone_latency, 2e-3, 1e-15);
  CU_ASSERT_EQUAL_FATAL(c.sim.n_stragglers, 1);
  CU_ASSERT_EQUAL(c.sim.stragglers[0].node, 3);
  CU_ASSERT_EQUAL_FATAL(c.sim.stragglers[0].n_phases, 1); /* the whole run */
  CU_ASSERT_DOUBLE_EQUAL(c.sim.stragglers[0].phases[0].speed_factor, 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.stragglers[0].phases[0].bandwidth_factor, 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.per_message_s, 2e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.per_byte_s, 1e-9, 1e-21);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.local_per_key_s, 0, 0);
  CU_ASSERT_PTR_NULL(c.sim.platform_file);
  exp_cluster_free(&c);
  cJSON_Delete(json);
  exp_errors_free(&e);
}

/* cost.step_s_by_policy: a run of a policy type it names charges that
 * type's figure in place of step_s; another type keeps step_s. */
static void test_cluster_step_by_policy(void) {
  cJSON *json = unit_json("{'nodes': 2, 'cost': {'step_s': '3us', "
                          "'step_s_by_policy': {'adaptive': 2e-05, 'relocate': '1us'}}}");
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster c;
  CU_ASSERT_TRUE_FATAL(exp_cluster_parse(json, ".", &c, &e));
  print_errors(&e);
  CU_ASSERT_EQUAL_FATAL(c.n_step_policy, 2);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.step_s, 3e-6, 1e-18);
  cJSON *pol = unit_json("{'type': 'static'}");
  exp_cluster_for_policy(&c, pol);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.step_s, 3e-6, 1e-18); /* not named: step_s */
  cJSON_Delete(pol);
  pol = unit_json("{'type': 'adaptive', 'syncs_per_sec': 200}");
  exp_cluster_for_policy(&c, pol);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.step_s, 2e-5, 1e-18);
  cJSON_Delete(pol);
  pol = unit_json("{'type': 'relocate'}");
  exp_cluster_for_policy(&c, pol);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.step_s, 1e-6, 1e-18);
  cJSON_Delete(pol);
  exp_cluster_for_policy(&c, NULL); /* no policy: as it was */
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.step_s, 1e-6, 1e-18);
  exp_cluster_free(&c);
  cJSON_Delete(json);
  exp_errors_free(&e);
}

/* Stragglers' three forms, as both backends get them: a whole-run one, a
 * window, and a list of phases (defaults: from the start, to the end, a
 * factor of 1). */
static void test_cluster_parses_straggler_phases(void) {
  char *text = dq("{'nodes': 4, 'network': {'bandwidth': '1Gbps'}, 'stragglers': ["
                  "{'node': 0, 'bandwidth_factor': 0.5}, "
                  "{'node': 1, 'from_s': 0.05, 'until_s': 0.2, 'speed_factor': 0.25}, "
                  "{'node': 3, 'phases': [{'until_s': 0.1, 'speed_factor': 0.5}, "
                  "{'from_s': 0.3, 'bandwidth_factor': 0.125}]}]}");
  cJSON *json = cJSON_Parse(text);
  free(text);
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster c;
  CU_ASSERT_TRUE(exp_cluster_parse(json, ".", &c, &e));
  print_errors(&e);
  CU_ASSERT_EQUAL_FATAL(c.sim.n_stragglers, 3);
  const sim_straggler *s = c.sim.stragglers;
  /* A whole-run straggler is one phase from 0 to the end: the same meaning
   * as a window (host, link and server slowed), in both backends. */
  CU_ASSERT_EQUAL_FATAL(s[0].n_phases, 1);
  CU_ASSERT_DOUBLE_EQUAL(s[0].bandwidth_factor, 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[0].phases[0].from_s, 0, 0);
  CU_ASSERT_TRUE(isinf(s[0].phases[0].until_s));
  CU_ASSERT_DOUBLE_EQUAL(s[0].phases[0].bandwidth_factor, 0.5, 0);
  CU_ASSERT_EQUAL_FATAL(s[1].n_phases, 1);
  CU_ASSERT_DOUBLE_EQUAL(s[1].speed_factor, 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[1].phases[0].from_s, 0.05, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[1].phases[0].until_s, 0.2, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[1].phases[0].speed_factor, 0.25, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[1].phases[0].bandwidth_factor, 1, 0);
  CU_ASSERT_EQUAL_FATAL(s[2].n_phases, 2);
  CU_ASSERT_EQUAL(s[2].node, 3);
  CU_ASSERT_DOUBLE_EQUAL(s[2].phases[0].from_s, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[2].phases[0].until_s, 0.1, 0);
  CU_ASSERT_TRUE(isinf(s[2].phases[1].until_s));
  CU_ASSERT_DOUBLE_EQUAL(s[2].phases[1].speed_factor, 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(s[2].phases[1].bandwidth_factor, 0.125, 0);
  /* The real backend: the same phases; bandwidth factors of the link's
   * 1 Gbps. */
  CU_ASSERT_EQUAL_FATAL(c.real.n_stragglers, 3);
  const real_straggler *r = c.real.stragglers;
  CU_ASSERT_PTR_EQUAL(r[0].phases, s[0].phases);
  CU_ASSERT_EQUAL(r[0].n_phases, 1);
  CU_ASSERT_PTR_EQUAL(r[2].phases, s[2].phases);
  CU_ASSERT_EQUAL(r[2].n_phases, 2);
  CU_ASSERT_DOUBLE_EQUAL(c.real.bandwidth, 1.25e8, 1e-3);
  exp_cluster_free(&c);
  cJSON_Delete(json);
  exp_errors_free(&e);
}

static void test_cluster_real_fields(void) {
  char *text = dq("{'nodes': 3, 'bind': '*', 'coordinator': 'node01:5555', 'base_port': 7000, "
                  "'timeout_s': 2.5, 'compute': 'sleep'}");
  cJSON *json = cJSON_Parse(text);
  free(text);
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster c;
  CU_ASSERT_TRUE(exp_cluster_parse(json, ".", &c, &e));
  print_errors(&e);
  CU_ASSERT_STRING_EQUAL(c.real.bind, "*");
  CU_ASSERT_STRING_EQUAL(c.real.coordinator, "node01:5555");
  CU_ASSERT_EQUAL(c.real.base_port, 7000);
  CU_ASSERT_DOUBLE_EQUAL(c.real.timeout_s, 2.5, 0);
  CU_ASSERT_EQUAL(c.real.compute, REAL_COMPUTE_SLEEP);
  exp_cluster_free(&c);
  cJSON_Delete(json);
  /* Defaults: loopback, no coordinator, ports from the OS, 30 s, spin. */
  json = cJSON_Parse("{\"nodes\": 2}");
  CU_ASSERT_TRUE(exp_cluster_parse(json, ".", &c, &e));
  CU_ASSERT_STRING_EQUAL(c.real.bind, "127.0.0.1");
  CU_ASSERT_STRING_EQUAL(c.real.coordinator, "");
  CU_ASSERT_EQUAL(c.real.base_port, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.real.timeout_s, 30, 0);
  CU_ASSERT_EQUAL(c.real.compute, REAL_COMPUTE_SPIN);
  exp_cluster_free(&c);
  cJSON_Delete(json);
  exp_errors_free(&e);
}

static void test_cluster_defaults_come_from_sim(void) {
  sim_cluster d;
  sim_cluster_default(&d);
  cJSON *json = cJSON_Parse("{\"nodes\": 5}");
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster c;
  CU_ASSERT_TRUE(exp_cluster_parse(json, ".", &c, &e));
  CU_ASSERT_EQUAL(c.sim.nodes, 5);
  CU_ASSERT_EQUAL(c.sim.workers_per_node, d.workers_per_node);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.host_speed, d.host_speed, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.bandwidth, d.bandwidth, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.per_key_s, d.cost.per_key_s, 0);
  CU_ASSERT_STRING_EQUAL(c.sim.network_model, d.network_model);
  exp_cluster_free(&c);
  cJSON_Delete(json);
  exp_errors_free(&e);
}

static void test_platform_file_is_found_next_to_the_spec(void) {
  char dir[] = "/tmp/pslab-spec-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char xml[256], spec[256];
  snprintf(xml, sizeof xml, "%s/platform.xml", dir);
  snprintf(spec, sizeof spec, "%s/spec.json", dir);
  FILE *f = fopen(xml, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("<?xml version='1.0'?>\n", f);
  fclose(f);
  char *text = dq("{'name': 'p', 'cluster': {'nodes': 2, 'platform_file': 'platform.xml', "
                  "'hosts': ['h0', 'h1']}, " GOOD_REST "}");
  f = fopen(spec, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
  free(text);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(spec, NULL, 0, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL(s);
  exp_cluster c;
  if (s) {
    const cJSON *cl = cJSON_GetObjectItem(exp_spec_runs(s)->runs[0].config, "cluster");
    CU_ASSERT_TRUE(exp_cluster_parse(cl, exp_spec_dir(s), &c, &e));
    CU_ASSERT_STRING_EQUAL(c.sim.platform_file, xml);
    CU_ASSERT_EQUAL(c.sim.n_hosts, 2);
    CU_ASSERT_STRING_EQUAL(c.sim.hosts[1], "h1");
    exp_cluster_free(&c);
  }
  exp_spec_free(s);
  /* With hosts of the wrong count. */
  exp_errors_free(&e);
  exp_errors_init(&e);
  const char *sets[] = {"cluster.hosts=[\"h0\"]"};
  s = exp_spec_load(spec, sets, 1, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "cluster.hosts: expected a list of 2 host names (one per node), found a list of 1"));
  exp_errors_free(&e);
  remove(xml);
  remove(spec);
  rmdir(dir);
}

/* A profile's fields go under the spec's own, objects merged field by field;
 * its "calibration" is not a cluster field; "profile" stays, as given. */
static void test_profile_is_included_under_the_spec(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "prof.json",
             "{\"calibration\": {\"cores\": {\"value\": 2}}, \"host_speed\": \"2Gf\","
             " \"cost\": {\"per_message_s\": \"20us\", \"per_key_s\": \"1us\"},"
             " \"machines\": {\"count\": 1, \"cores\": 2, \"loopback_latency\": \"15us\","
             " \"slice\": 0.0025, \"preempt\": false, \"preempt_wait\": 5e-06,"
             " \"preempt_per_thread\": 2.4e-05}}");
  char *text = dq("{'name': 'p', 'cluster': {'nodes': 4, 'profile': 'prof.json', "
                  "'cost': {'per_key_s': '100ns'}}, " GOOD_REST ", "
                  "'sweep': {'cluster.machines.count': [1, 2]}}");
  unit_write(dir, "spec.json", text);
  free(text);
  char *spec = exp_join_path(dir, "spec.json");
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_load(spec, NULL, 0, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(exp_spec_runs(s)->count, 2);
  const cJSON *cl = cJSON_GetObjectItem(exp_spec_runs(s)->runs[1].config, "cluster");
  exp_cluster c;
  CU_ASSERT_TRUE(exp_cluster_parse(cl, exp_spec_dir(s), &c, &e));
  CU_ASSERT_DOUBLE_EQUAL(c.sim.host_speed, 2e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.per_message_s, 20e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.cost.per_key_s, 100e-9, 1e-18); /* the spec's */
  CU_ASSERT_EQUAL(c.sim.machines.count, 2);                    /* the sweep's */
  CU_ASSERT_EQUAL(c.sim.machines.cores, 2);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.machines.loopback_latency, 15e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.machines.slice, 2.5e-3, 1e-18); /* calibrate's, in seconds */
  CU_ASSERT_EQUAL(c.sim.machines.scheduler, SIM_SCHED_RUN_QUEUE);
  /* calibrate gives the preemption's figures switched off */
  CU_ASSERT_FALSE(c.sim.machines.preempt);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.machines.preempt_wait_s, 5e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.machines.preempt_per_thread_s, 24e-6, 1e-18);
  exp_cluster_free(&c);
  /* figures given without "preempt" switch it on */
  cJSON *own = unit_json("{'nodes': 2, 'machines': {'cores': 1, 'preempt_per_thread': '30us'}}");
  CU_ASSERT_TRUE(exp_cluster_parse(own, exp_spec_dir(s), &c, &e));
  CU_ASSERT_TRUE(c.sim.machines.preempt);
  CU_ASSERT_DOUBLE_EQUAL(c.sim.machines.preempt_per_thread_s, 30e-6, 1e-18);
  exp_cluster_free(&c);
  cJSON_Delete(own);
  const cJSON *prof = cJSON_GetObjectItem(cl, "profile");
  CU_ASSERT_TRUE(cJSON_IsString(prof) && strcmp(prof->valuestring, "prof.json") == 0);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cl, EXP_PROFILE_ABOUT));
  exp_spec_free(s);
  /* A profile that is not an object of cluster fields. */
  unit_write(dir, "prof.json", "[1]");
  s = exp_spec_load(spec, NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "prof.json: expected an object of cluster fields"));
  exp_errors_free(&e);
  exp_errors_init(&e);
  unit_write(dir, "prof.json", "{\"machines\": {\"cores\": 0}}");
  s = exp_spec_load(spec, NULL, 0, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "cluster.machines.cores: expected an integer >= 1"));
  CU_ASSERT_TRUE(exp_errors_contain(&e, "may come from"));
  exp_errors_free(&e);
  free(spec);
  unit_remove_tree(dir);
  free(dir);
}

/* ------------------------------------------------------------ units */

/* Every field that takes a quantity and does not say its unit in its name
 * refuses a bare number, in the spec, in a sweep and in --set alike, with
 * the accepted forms and the JSON path in the message; the same value with
 * its unit is taken. */
static void test_units_required_where_the_name_has_none(void) {
  static const char *const with_unit[] = {[EXP_QTY_FLOPS] = "'50Gf'",
                                          [EXP_QTY_BANDWIDTH] = "'50Mbps'",
                                          [EXP_QTY_DURATION] = "'50us'"};
  static const char *const forms[] = {[EXP_QTY_FLOPS] = "such as \"10Gf\"",
                                      [EXP_QTY_BANDWIDTH] = "such as \"10Gbps\"",
                                      [EXP_QTY_DURATION] = "such as \"50us\", \"2ms\""};
  size_t n;
  const exp_unit_field *f = exp_unit_fields(&n);
  CU_ASSERT_EQUAL(n, 10);
  for (size_t i = 0; i < n; i++) {
    char want[256], spec[1024], set[256], sweep[256];
    snprintf(want, sizeof want, "cluster.%s: expected a %s with its unit, %s", f[i].path,
             f[i].q == EXP_QTY_FLOPS ? "speed" : f[i].q == EXP_QTY_BANDWIDTH ? "bandwidth"
                                                                             : "duration",
             forms[f[i].q]);
    const char *dot = strchr(f[i].path, '.');
    const char *leaf = dot ? dot + 1 : f[i].path;
    char group[32] = "";
    if (dot) snprintf(group, sizeof group, "%.*s", (int)(dot - f[i].path), f[i].path);
    const char *more = strcmp(group, "machines") == 0 ? "'cores': 1, " : "";
    for (int unitless = 1; unitless >= 0; unitless--) {
      const char *v = unitless ? "50" : with_unit[f[i].q];
      if (dot)
        snprintf(spec, sizeof spec, "{'name': 't', 'cluster': {'nodes': 2, '%s': {%s'%s': %s}}, "
                 GOOD_REST "}", group, more, leaf, v);
      else
        snprintf(spec, sizeof spec, "{'name': 't', 'cluster': {'nodes': 2, '%s': %s}, "
                 GOOD_REST "}", leaf, v);
      if (unitless) {
        expect_error(spec, want);
        expect_error(spec, ", found 50"); /* the forms, then what was found */
        continue;
      }
      exp_errors e;
      exp_errors_init(&e);
      exp_spec *s = parse(spec, &e);
      CU_ASSERT_PTR_NOT_NULL(s);
      if (!s) fprintf(stderr, "\n  %s with a unit refused:\n", f[i].path);
      print_errors(&e);
      exp_spec_free(s);
      exp_errors_free(&e);
    }
    /* --set and a sweep are held to the same. */
    snprintf(spec, sizeof spec, "{'name': 't', 'cluster': {'nodes': 2, 'network': {}%s}, "
             GOOD_REST "}", *more ? ", 'machines': {'cores': 1}" : "");
    snprintf(set, sizeof set, "cluster.%s=2", f[i].path);
    snprintf(sweep, sizeof sweep, "sweep={\"cluster.%s\": [%s, 3]}", f[i].path,
             f[i].q == EXP_QTY_FLOPS ? "\"1Gf\"" : f[i].q == EXP_QTY_BANDWIDTH ? "\"1Gbps\"" : "\"1ms\"");
    const char *const *sets[] = {(const char *const[]){set}, (const char *const[]){sweep}};
    for (size_t k = 0; k < 2; k++) {
      exp_errors e;
      exp_errors_init(&e);
      exp_spec *s = parse_sets(spec, sets[k], 1, &e);
      CU_ASSERT_PTR_NULL(s);
      CU_ASSERT_TRUE(exp_errors_contain(&e, want));
      if (!exp_errors_contain(&e, want)) print_errors(&e);
      exp_spec_free(s);
      exp_errors_free(&e);
    }
  }
  /* Fields named with their unit take numbers in it. */
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse("{'name': 't', 'cluster': {'nodes': 2, 'timeout_s': 30, "
                      "'cost': {'per_message_s': 1e-6, 'per_key_s': '50ns'}}, " GOOD_REST "}", &e);
  CU_ASSERT_PTR_NOT_NULL(s);
  print_errors(&e);
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* The spec (single-quoted JSON, as dq takes it) written as dir/spec.json and
 * loaded from there, as a profile beside it is found. */
static exp_spec *load_written(const char *dir, const char *single_quoted, exp_errors *e) {
  char *text = dq(single_quoted);
  unit_write(dir, "spec.json", text);
  free(text);
  char *path = exp_join_path(dir, "spec.json");
  exp_spec *s = exp_spec_load(path, NULL, 0, e);
  free(path);
  return s;
}

/* Step figures measured under a change of the model (calibrate --workload
 * --set, recorded in calibration.step.sets) warn a spec that does not make
 * it, a value as --set reads it (JSON, else a plain string); one that makes
 * it, and the sets that are not the model's (the profile, the step figures
 * themselves), do not. */
static void test_profile_step_sets_warn(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "prof.json",
             "{\"cost\": {\"step_s\": 1e-06}, \"machines\": {\"count\": 1, \"cores\": 2}, "
             "\"calibration\": {\"step\": {\"sets\": "
             "[\"cluster.machines.preempt=true\", \"cluster.machines.scheduler=shared\", "
             "\"cluster.profile=x.json\", \"cluster.cost.step_s=0\", \"workload.keys=7\"]}}}");
  const struct {
    const char *cluster;
    size_t warnings;
  } cases[] = {
      {"'nodes': 2, 'profile': 'prof.json'", 2},
      {"'nodes': 2, 'profile': 'prof.json', 'machines': {'preempt': true}", 1},
      {"'nodes': 2, 'profile': 'prof.json', 'machines': {'preempt': true, 'scheduler': "
       "'shared'}", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char spec[512];
    snprintf(spec, sizeof spec, "{'name': 'p', 'cluster': {%s}, " GOOD_REST "}",
             cases[i].cluster);
    exp_errors e;
    exp_errors_init(&e);
    exp_spec *s = load_written(dir, spec, &e);
    print_errors(&e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const exp_errors *w = exp_spec_warnings(s);
    size_t n = 0;
    for (size_t k = 0; k < w->count; k++) n += strstr(w->lines[k], "step figures") != NULL;
    CU_ASSERT_EQUAL(n, cases[i].warnings);
    if (i == 0)
      CU_ASSERT_TRUE(exp_errors_contain(w, "its step figures were measured with --set "
                                           "cluster.machines.preempt=true"));
    exp_spec_free(s);
    exp_errors_free(&e);
  }
  unit_remove_tree(dir);
  free(dir);
}

/* A profile's figures are numbers in base units (pslab calibrate writes
 * them so) and are taken, also merged into the spec as spec.json and the
 * records hold them (from an older calibration, maybe); a bare number at a
 * field the profile does not give is refused. */
static void test_profile_figures_may_be_numbers(void) {
  char *dir = unit_temp_dir();
  unit_write(dir, "prof.json", "{\"host_speed\": 4001440696.4920087, \"machines\": "
             "{\"count\": 1, \"cores\": 2, \"loopback_latency\": 2.5e-05, "
             "\"loopback_bandwidth\": 1e12}}");
  const char *specs[] = {
      "{'name': 'p', 'cluster': {'nodes': 2, 'profile': 'prof.json'}, " GOOD_REST "}",
      /* as spec.json holds it: the figures merged in */
      "{'name': 'p', 'cluster': {'nodes': 2, 'profile': 'prof.json', 'host_speed': "
      "3001440696.4920087, 'machines': {'count': 1, 'cores': 2, 'loopback_latency': 2.5e-05, "
      "'loopback_bandwidth': 1e12}}, " GOOD_REST "}",
      "{'name': 'p', 'cluster': {'nodes': 2, 'profile': 'prof.json', 'network': "
      "{'latency': 0.001}}, " GOOD_REST "}",
  };
  for (size_t i = 0; i < 3; i++) {
    exp_errors e;
    exp_errors_init(&e);
    exp_spec *s = load_written(dir, specs[i], &e);
    if (i < 2) {
      CU_ASSERT_PTR_NOT_NULL(s);
      print_errors(&e);
    } else {
      CU_ASSERT_PTR_NULL(s);
      CU_ASSERT_TRUE(exp_errors_contain(&e, "cluster.network.latency: expected a duration with "
                                            "its unit"));
    }
    exp_spec_free(s);
    exp_errors_free(&e);
  }
  unit_remove_tree(dir);
  free(dir);
}

/* "Did you mean" for an unknown field wherever fields are read (the spec's
 * own keys, the cluster, the workload, the policy, consistency, plots), and
 * a field a sweep key brought in is said to come from the sweep. */
static void test_did_you_mean_everywhere(void) {
  static const struct { const char *spec, *want; } cases[] = {
      {"{'name': 't', 'cluster': {'nodes': 2, 'nodez': 1}, " GOOD_REST "}",
       "cluster.nodez: expected one of the keys of cluster"},
      {"{'name': 't', 'cluster': {'nodes': 2}, 'workload': {'type': 'zipf', 'keyz': 100, "
       "'steps_per_worker': 10}, " GOOD_POLICY "}",
       "workload.keyz: expected one of the fields type, keys,"},
      {"{'name': 't', 'cluster': {'nodes': 2}, " GOOD_WORKLOAD ", 'policy': {'type': "
       "'relocate', 'lookahed': 5}}", "policy.lookahed: unknown field; expected one of"},
      {"{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST ", 'consistency': {'model': 'ssp', "
       "'staleless': 2}}", "consistency.staleless: unknown field"},
      {"{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST ", 'sweep': {'worklaod.keys': [1]}}",
       "sweep[\"worklaod.keys\"]: expected a path whose parent exists in the spec, found no "
       "worklaod"},
  };
  static const char *const meant[] = {"nodes", "keys", "lookahead", "staleness", "workload"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char want[512];
    expect_error(cases[i].spec, cases[i].want);
    snprintf(want, sizeof want, "(did you mean \"%s\"?)", meant[i]);
    expect_error(cases[i].spec, want);
  }
  /* A typo in a sweep key: the unknown field's message names the key. */
  expect_error("{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST ", "
               "'sweep': {'workload.keyz': [1, 2]}}",
               "workload.keyz: expected one of the fields type, keys");
  expect_error("{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST ", "
               "'sweep': {'workload.keyz': [1, 2]}}",
               "(did you mean \"keys\"?) (a field sweep[\"workload.keyz\"] brings in)");
  expect_error("{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST ", "
               "'sweep': {'cluster.nodez': [1, 2]}}",
               "(a field sweep[\"cluster.nodez\"] brings in)");
  /* A sweep over a field the spec has is not blamed for another's problem. */
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse("{'name': 't', 'cluster': {'nodes': 2, 'nodez': 1}, " GOOD_REST ", "
                      "'sweep': {'cluster.nodes': [1, 2]}}", &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_FALSE(exp_errors_contain(&e, "brings in"));
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* --------------------------------------------------------- overrides */

static const cJSON *config_at(const exp_spec *s, size_t run, const char *path) {
  return exp_path_get(exp_spec_runs(s)->runs[run].config, path);
}

/* A sweep over stragglers' phases: each run's config (what runs.jsonl
 * records) holds its phases as given, and --set reaches inside them. */
static void test_straggler_phases_in_run_configs(void) {
  const char *sets[] = {"cluster.stragglers.0.phases.1.bandwidth_factor=0.125"};
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': 2, 'stragglers': [{'node': 1, "
                           "'phases': [{'from_s': 0.05, 'until_s': 0.2, 'speed_factor': 0.25}, "
                           "{'from_s': 0.3, 'bandwidth_factor': 0.5}]}]}, " GOOD_REST ", "
                           "'sweep': {'cluster.stragglers.0.phases.0.speed_factor': [0.5, 0.125]}}",
                           sets, 1, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL_FATAL(exp_spec_runs(s)->count, 2);
  CU_ASSERT_EQUAL(config_at(s, 1, "cluster.stragglers.0.phases.0.speed_factor")->valuedouble,
                  0.125);
  CU_ASSERT_EQUAL(config_at(s, 0, "cluster.stragglers.0.phases.0.until_s")->valuedouble, 0.2);
  CU_ASSERT_EQUAL(config_at(s, 0, "cluster.stragglers.0.phases.1.from_s")->valuedouble, 0.3);
  CU_ASSERT_EQUAL(config_at(s, 1, "cluster.stragglers.0.phases.1.bandwidth_factor")->valuedouble,
                  0.125);
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* A --set value that is not JSON is taken as its text; when a message
 * says it found that text, it also says why and shows the value as JSON,
 * bare words quoted. A bare word (a typo) gets no hint: quoted it is the
 * same string. */
static void test_set_hints_quoting(void) {
  static const struct { const char *set, *want; } cases[] = {
      {"sweep.policy=[nups]", "sweep[\"policy\"]: expected a non-empty list of values, found "
       "\"[nups]\" (--set took it as a string, since [nups] is not JSON; as JSON: --set "
       "'sweep.policy=[\"nups\"]')"},
      {"policy={type: nups, hot_keys: 5}", "as JSON: --set 'policy={\"type\": \"nups\", "
       "\"hot_keys\": 5}')"},
      {"cluster.stragglers=[{node: 1, speed_factor: 0}]",
       "as JSON: --set 'cluster.stragglers=[{\"node\": 1, \"speed_factor\": 0}]')"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    exp_errors e;
    exp_errors_init(&e);
    const char *sets[] = {cases[i].set};
    exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST "}", sets, 1, &e);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_TRUE(exp_errors_contain(&e, cases[i].want));
    if (!exp_errors_contain(&e, cases[i].want)) print_errors(&e);
    exp_spec_free(s);
    exp_errors_free(&e);
  }
  exp_errors e;
  exp_errors_init(&e);
  const char *sets[] = {"policy.type=nupz"};
  exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST "}", sets, 1, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "found \"nupz\""));
  CU_ASSERT_FALSE(exp_errors_contain(&e, "--set took it"));
  exp_spec_free(s);
  exp_errors_free(&e);
}

static void test_set_overrides_before_validation(void) {
  const char *sets[] = {
      "cluster.nodes=16",                     /* number (the spec's -1 is never seen) */
      "cluster.network.bandwidth=1Gbps",      /* not JSON: a plain string */
      "policy={\"type\":\"relocate\",\"lookahead\":5}", /* an object */
      "description=\"quoted\"",               /* a JSON string */
      "name=renamed",
      "cluster.stragglers.0.speed_factor=0.25", /* a list index */
  };
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': -1, 'network': {}, "
                           "'stragglers': [{'node': 1}]}, " GOOD_REST "}",
                           sets, sizeof sets / sizeof sets[0], &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(config_at(s, 0, "cluster.nodes")->valuedouble, 16);
  CU_ASSERT_STRING_EQUAL(config_at(s, 0, "cluster.network.bandwidth")->valuestring, "1Gbps");
  CU_ASSERT_STRING_EQUAL(config_at(s, 0, "policy.type")->valuestring, "relocate");
  CU_ASSERT_EQUAL(config_at(s, 0, "policy.lookahead")->valuedouble, 5);
  CU_ASSERT_STRING_EQUAL(config_at(s, 0, "description")->valuestring, "quoted");
  CU_ASSERT_STRING_EQUAL(exp_spec_name(s), "renamed");
  CU_ASSERT_EQUAL(config_at(s, 0, "cluster.stragglers.0.speed_factor")->valuedouble, 0.25);
  /* The effective spec (what DIR/spec.json holds) has them too. */
  CU_ASSERT_EQUAL(exp_path_get(exp_spec_json(s), "cluster.nodes")->valuedouble, 16);
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* A --set may name an object the spec leaves out: it is made on the way. */
static void test_set_makes_missing_objects(void) {
  const char *sets[] = {"cluster.network.model=\"latency_bandwidth\""};
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': 2}, " GOOD_REST "}", sets, 1, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_STRING_EQUAL(config_at(s, 0, "cluster.network.model")->valuestring,
                         "latency_bandwidth");
  exp_spec_free(s);
  exp_errors_free(&e);
}

static void test_set_errors(void) {
  static const struct {
    const char *set;
    const char *message;
  } cases[] = {
      {"cluster.foo.bar=1", "cluster.foo: expected one of the keys of cluster ("},
      {"name.x=1", "--set name.x=1: name.x: name is neither an object nor a list"},
      {"noequals", "--set noequals: expected path=value, such as cluster.nodes=16"},
      {"=3", "--set =3: expected path=value"},
      {"cluster..nodes=3", "--set cluster..nodes=3: \"cluster..nodes\" is not a dotted path"},
      {"cluster.stragglers.7.node=1", "--set cluster.stragglers.7.node=1: cluster.stragglers.7.node: no element 7 in that list (it has 0)"},
      {"cluster.nodes=many", "spec.json: cluster.nodes: expected an integer >= 1, found \"many\""},
      {"cluster.timeout_s=-1", "spec.json: cluster.timeout_s: expected a number > 0, found -1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    exp_errors e;
    exp_errors_init(&e);
    exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': 2, 'stragglers': []}, "
                             GOOD_REST "}", &cases[i].set, 1, &e);
    CU_ASSERT_PTR_NULL(s);
    bool found = exp_errors_contain(&e, cases[i].message);
    if (!found) {
      fprintf(stderr, "\n  --set %s: expected %s, got:\n", cases[i].set, cases[i].message);
      print_errors(&e);
    }
    CU_ASSERT_TRUE(found);
    exp_spec_free(s);
    exp_errors_free(&e);
  }
}

static void test_set_can_add_a_sweep(void) {
  const char *sets[] = {"sweep.cluster.nodes=[1,2,3]", "sweep.policy.type=[\"static\",\"relocate\"]"};
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse_sets("{'name': 't', " C2 ", " GOOD_REST "}", sets, 2, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(exp_spec_runs(s)->count, 6);
  CU_ASSERT_EQUAL(config_at(s, 5, "cluster.nodes")->valuedouble, 3);
  CU_ASSERT_STRING_EQUAL(config_at(s, 5, "policy.type")->valuestring, "relocate");
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* A --set the sweep overwrites in every run is a warning, not an error. */
static void test_set_under_a_sweep_key_warns(void) {
  const char *sets[] = {"policy.lookahead=5", "cluster.nodes=4", "sweep.policy.type=[\"relocate\"]"};
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse_sets("{'name': 't', " C2 ", " GOOD_WORKLOAD ", 'policy': {'type': 'relocate'}, "
                           "'sweep': {'policy': [{'type': 'relocate', 'lookahead': 2}], "
                           "'workload.keys': [10, 20]}}", sets, 3, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  const exp_errors *w = exp_spec_warnings(s);
  CU_ASSERT_EQUAL(w->count, 1); /* cluster.nodes is not swept; sweep.X sets a list */
  CU_ASSERT_TRUE(exp_errors_contain(w, "--set policy.lookahead=5 has no effect: sweep[\"policy\"] "
                                       "replaces policy in every run"));
  CU_ASSERT_EQUAL(config_at(s, 0, "policy.lookahead")->valuedouble, 2);
  exp_spec_free(s);
  /* The exact path warns; a path the key is only a prefix of (sync and
   * syncs_per_sec) does not. */
  const char *more[] = {"workload.keys=50", "policy.syncs_per_sec=100"};
  s = parse_sets("{'name': 't', " C2 ", " GOOD_WORKLOAD ", 'policy': {'type': 'replicate', "
                 "'hot_keys': 5}, 'sweep': {'workload.keys': [10], 'policy.sync': ['owner']}}",
                 more, 2, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  w = exp_spec_warnings(s);
  CU_ASSERT_EQUAL(w->count, 1);
  CU_ASSERT_TRUE(exp_errors_contain(w, "--set workload.keys=50 has no effect: "
                                       "sweep[\"workload.keys\"] replaces workload.keys in every run"));
  exp_spec_free(s);
  exp_errors_free(&e);
}

/* A cluster field the run's backend does not read is a warning (once per
 * field and backend), never silence: the simulated network's latency on the
 * real backend (which reads its bandwidth, for stragglers), the real
 * backend's timeout in a simulation; stragglers, which both read, none;
 * the machines' layout on the real backend without machines.pin. */
static void test_cluster_fields_a_backend_ignores_warn(void) {
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = parse_sets("{'name': 't', 'cluster': {'nodes': 2, 'timeout_s': 5, "
                           "'network': {'bandwidth': '1Gbps', 'latency': '1ms'}, "
                           "'stragglers': [{'node': 1, 'speed_factor': 0.5}]}, " GOOD_WORKLOAD
                           ", 'policy': {'type': 'static'}, "
                           "'sweep': {'backend': ['sim', 'real', 'real']}}", NULL, 0, &e);
  print_errors(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  const exp_errors *w = exp_spec_warnings(s);
  CU_ASSERT_EQUAL(w->count, 2);
  CU_ASSERT_TRUE(exp_errors_contain(w, "cluster.timeout_s has no effect on the sim backend, "
                                       "which reads only cluster.{nodes,"));
  CU_ASSERT_TRUE(exp_errors_contain(w, "cluster.network.latency has no effect on the real "
                                       "backend"));
  CU_ASSERT_FALSE(exp_errors_contain(w, "cluster.stragglers has no effect"));
  CU_ASSERT_FALSE(exp_errors_contain(w, "cluster.network.bandwidth has no effect"));
  exp_spec_free(s);
  /* What each backend reads: no warning. */
  s = parse_sets("{'name': 't', 'cluster': {'nodes': 2, 'network': {'latency': '1ms'}}, "
                 GOOD_WORKLOAD ", 'policy': {'type': 'static'}}", NULL, 0, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(exp_spec_warnings(s)->count, 0);
  exp_spec_free(s);
  /* The machines' layout on the real backend: read with machines.pin, a
   * warning without it; the simulator's scheduler never read there. */
  s = parse_sets("{'name': 't', 'backend': 'real', 'cluster': {'nodes': 2, 'machines': "
                 "{'count': 2, 'cores': 1, 'scheduler': 'shared'}}, " GOOD_WORKLOAD
                 ", 'policy': {'type': 'static'}}", NULL, 0, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  w = exp_spec_warnings(s);
  CU_ASSERT_EQUAL(w->count, 3);
  CU_ASSERT_TRUE(exp_errors_contain(w, "cluster.machines.count has no effect on the real "
                                       "backend without cluster.machines.pin"));
  CU_ASSERT_TRUE(exp_errors_contain(w, "cluster.machines.cores has no effect on the real "
                                       "backend without cluster.machines.pin"));
  CU_ASSERT_TRUE(exp_errors_contain(w, "cluster.machines.scheduler has no effect on the real "
                                       "backend"));
  exp_spec_free(s);
  s = parse_sets("{'name': 't', 'backend': 'real', 'cluster': {'nodes': 2, 'machines': "
                 "{'count': 2, 'cores': 1, 'pin': true}}, " GOOD_WORKLOAD
                 ", 'policy': {'type': 'static'}}", NULL, 0, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(exp_spec_warnings(s)->count, 0);
  exp_spec_free(s);
  exp_errors_free(&e);
}

PSLAB_SUITE("spec", {"profile_is_included_under_the_spec", test_profile_is_included_under_the_spec},
            {"units required where the name has none", test_units_required_where_the_name_has_none},
            {"--set hints at quoting", test_set_hints_quoting},
            {"did you mean, everywhere; sweep keys named", test_did_you_mean_everywhere},
            {"profile figures may be numbers", test_profile_figures_may_be_numbers},
            {"profile step figures of a changed model warn", test_profile_step_sets_warn},
            {"minimal spec is valid, with defaults", test_minimal_spec_is_valid_with_defaults},
            {"shipped specs are valid", test_shipped_specs_are_valid},
            {"the work limit", test_work_limit},
            {"every shipped spec has reference results", test_every_shipped_spec_has_reference_results},
            {"table of bad specs and their messages", test_bad_specs_table},
            {"every error reported at once", test_every_error_reported_at_once},
            {"error of every sweep point reported once", test_error_in_every_sweep_point_reported_once},
            {"syntax error has line and column", test_syntax_error_has_line_and_column},
            {"unreadable file is named", test_unreadable_file_is_named},
            {"units table", test_units_table},
            {"cluster units into sim_cluster", test_cluster_parses_units_into_sim_cluster},
            {"cluster defaults come from sim", test_cluster_defaults_come_from_sim},
            {"cluster fields of the real backend", test_cluster_real_fields},
            {"cluster: step figures by policy", test_cluster_step_by_policy},
            {"cluster stragglers' phases", test_cluster_parses_straggler_phases},
            {"stragglers' phases in every run's config", test_straggler_phases_in_run_configs},
            {"platform file next to the spec", test_platform_file_is_found_next_to_the_spec},
            {"--set overrides before validation", test_set_overrides_before_validation},
            {"--set under a sweep key warns", test_set_under_a_sweep_key_warns},
            {"cluster fields a backend ignores warn", test_cluster_fields_a_backend_ignores_warn},
            {"--set errors", test_set_errors},
            {"--set makes missing objects", test_set_makes_missing_objects},
            {"--set can add a sweep", test_set_can_add_a_sweep},
            {"naive and local sampling accept worker-only nodes",
             test_reading_sampling_schemes_accept_worker_only_nodes})
