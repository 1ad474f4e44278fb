/*
 * Sweep expansion (experiments/spec/sweep.c) and dotted paths (jsonpath.c):
 * sizes and order of the cartesian product, repeats and their seeds, whole
 * objects replacing objects, leaves added, later keys setting fields inside
 * earlier ones, and sweep paths that cannot be set.
 */
#include "tests/unit.h"

#include "experiments/experiment.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

/* Expands a spec that must be fine. */
static exp_run_list expand_ok(const char *spec) {
  cJSON *j = unit_json(spec);
  exp_errors e;
  exp_errors_init(&e);
  exp_run_list l;
  CU_ASSERT_TRUE(exp_sweep_expand(j, &l, &e));
  for (size_t i = 0; i < e.count; i++) fprintf(stderr, "\n    | %s", e.lines[i]);
  CU_ASSERT_EQUAL(e.count, 0);
  exp_errors_free(&e);
  cJSON_Delete(j);
  return l;
}

static double num_at(const exp_run *r, const char *path) {
  const cJSON *v = exp_path_get(r->config, path);
  CU_ASSERT_TRUE(cJSON_IsNumber(v));
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str_at(const exp_run *r, const char *path) {
  const cJSON *v = exp_path_get(r->config, path);
  CU_ASSERT_TRUE(cJSON_IsString(v));
  return cJSON_IsString(v) ? v->valuestring : "";
}

#define BASE "'name': 's', 'seed': 7, 'cluster': {'nodes': 1}, " \
             "'workload': {'type': 'zipf', 'skew': 1.1}, " \
             "'policy': {'type': 'static', 'fast_local_access': true}"

/* -------------------------------------------------------- the product */

static void test_no_sweep_is_one_run(void) {
  exp_run_list l = expand_ok("{" BASE "}");
  CU_ASSERT_EQUAL_FATAL(l.count, 1);
  CU_ASSERT_EQUAL(l.points, 1);
  CU_ASSERT_EQUAL(l.runs[0].run, 1);
  CU_ASSERT_EQUAL(l.runs[0].repeat, 0);
  CU_ASSERT_EQUAL(l.runs[0].seed, 7);
  CU_ASSERT_PTR_NULL(l.runs[0].sweep->child); /* {} */
  char *label = exp_sweep_label(l.runs[0].sweep);
  CU_ASSERT_STRING_EQUAL(label, "");
  free(label);
  exp_run_list_free(&l);
}

static void test_cartesian_product_size_and_order(void) {
  exp_run_list l = expand_ok("{" BASE ", 'sweep': {'cluster.nodes': [1, 2, 4], "
                             "'policy.type': ['static', 'relocate']}, "
                             "'plots': [{'name': 'p', 'x': 'time_s', 'y': 'steps'}]}");
  CU_ASSERT_EQUAL_FATAL(l.count, 6);
  CU_ASSERT_EQUAL(l.points, 6);
  /* First key outermost: nodes changes slowest. */
  static const double nodes[] = {1, 1, 2, 2, 4, 4};
  static const char *const types[] = {"static", "relocate", "static",
                                      "relocate", "static", "relocate"};
  for (size_t i = 0; i < 6; i++) {
    CU_ASSERT_EQUAL(l.runs[i].run, i + 1);
    CU_ASSERT_EQUAL(l.runs[i].point, i);
    CU_ASSERT_EQUAL(num_at(&l.runs[i], "cluster.nodes"), nodes[i]);
    CU_ASSERT_STRING_EQUAL(str_at(&l.runs[i], "policy.type"), types[i]);
    /* The rest of the spec is kept; sweep and plots are not in a config. */
    CU_ASSERT_TRUE(cJSON_IsTrue(exp_path_get(l.runs[i].config, "policy.fast_local_access")));
    CU_ASSERT_PTR_NULL(exp_path_get(l.runs[i].config, "sweep"));
    CU_ASSERT_PTR_NULL(exp_path_get(l.runs[i].config, "plots"));
  }
  /* The sweep object holds the values taken, in key order. */
  char *label = exp_sweep_label(l.runs[3].sweep);
  CU_ASSERT_STRING_EQUAL(label, "cluster.nodes=2, policy.type=relocate");
  free(label);
  CU_ASSERT_STRING_EQUAL(l.runs[3].sweep->child->string, "cluster.nodes");
  exp_run_list_free(&l);
}

/* An empty value is labelled as the table labels it, not "[]". */
static void test_empty_values_labelled_in_words(void) {
  exp_run_list l = expand_ok("{" BASE ", 'sweep': {'cluster.stragglers': [[], [0]], "
                             "'workload.extra': [{}]}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 2);
  char *label = exp_sweep_label(l.runs[0].sweep);
  CU_ASSERT_STRING_EQUAL(label, "no straggler, workload.extra=none");
  free(label);
  label = exp_sweep_label(l.runs[1].sweep);
  CU_ASSERT_STRING_EQUAL(label, "cluster.stragglers=[0], workload.extra=none");
  free(label);
  exp_run_list_free(&l);
}

static void test_three_axes_product(void) {
  exp_run_list l = expand_ok("{" BASE ", 'sweep': {'cluster.nodes': [1, 2], "
                             "'workload.skew': [0.5, 1, 1.5], "
                             "'policy.type': ['static', 'relocate']}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 12);
  /* The last key changes fastest, the middle one every 2 runs. */
  CU_ASSERT_EQUAL(num_at(&l.runs[0], "workload.skew"), 0.5);
  CU_ASSERT_EQUAL(num_at(&l.runs[1], "workload.skew"), 0.5);
  CU_ASSERT_EQUAL(num_at(&l.runs[2], "workload.skew"), 1);
  CU_ASSERT_EQUAL(num_at(&l.runs[6], "cluster.nodes"), 2);
  CU_ASSERT_EQUAL(num_at(&l.runs[6], "workload.skew"), 0.5);
  CU_ASSERT_STRING_EQUAL(str_at(&l.runs[11], "policy.type"), "relocate");
  exp_run_list_free(&l);
}

/* ----------------------------------------------------------- repeats */

static void test_repeats_and_seeds(void) {
  exp_run_list l = expand_ok("{" BASE ", 'repeats': 3, "
                             "'sweep': {'policy.type': ['static', 'relocate']}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 6);
  CU_ASSERT_EQUAL(l.points, 2);
  for (size_t i = 0; i < 6; i++) {
    CU_ASSERT_EQUAL(l.runs[i].repeat, i / 2); /* all points of a repeat first */
    CU_ASSERT_EQUAL(l.runs[i].point, i % 2);
    CU_ASSERT_STRING_EQUAL(str_at(&l.runs[i], "policy.type"), i % 2 ? "relocate" : "static");
    /* One seed per repeat, the same for every point of it. */
    CU_ASSERT_EQUAL(l.runs[i].seed, exp_run_seed(7, (uint32_t)(i / 2)));
  }
  CU_ASSERT_EQUAL(l.runs[0].seed, 7); /* repeat 0 keeps the spec's seed */
  CU_ASSERT_EQUAL(l.runs[0].seed, l.runs[1].seed);
  CU_ASSERT_EQUAL(l.runs[2].seed, l.runs[3].seed);
  CU_ASSERT_NOT_EQUAL(l.runs[0].seed, l.runs[2].seed);
  CU_ASSERT_NOT_EQUAL(l.runs[2].seed, l.runs[4].seed);
  exp_run_list_free(&l);
}

static void test_seed_derivation(void) {
  CU_ASSERT_EQUAL(exp_run_seed(1, 0), 1);
  CU_ASSERT_EQUAL(exp_run_seed(12345, 0), 12345);
  /* Deterministic, distinct across repeats and seeds, exact as JSON. */
  CU_ASSERT_EQUAL(exp_run_seed(1, 1), exp_run_seed(1, 1));
  uint64_t seen[64];
  size_t n = 0;
  for (uint64_t seed = 0; seed < 4; seed++) {
    for (uint32_t r = 1; r <= 16; r++) {
      uint64_t s = exp_run_seed(seed, r);
      CU_ASSERT_TRUE(s < EXP_SEED_LIMIT);
      /* Written and read back as records are, it is the same number. */
      cJSON *num = cJSON_CreateNumber((double)s);
      char *text = cJSON_PrintUnformatted(num);
      cJSON *back = cJSON_Parse(text);
      CU_ASSERT_TRUE(back && back->valuedouble == (double)s);
      cJSON_Delete(back);
      free(text);
      cJSON_Delete(num);
      for (size_t k = 0; k < n; k++) CU_ASSERT_NOT_EQUAL(seen[k], s);
      seen[n++] = s;
    }
  }
  /* A swept seed gives each point its own. */
  exp_run_list l = expand_ok("{" BASE ", 'repeats': 2, 'sweep': {'seed': [3, 4]}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 4);
  CU_ASSERT_EQUAL(l.runs[0].seed, 3);
  CU_ASSERT_EQUAL(l.runs[1].seed, 4);
  CU_ASSERT_EQUAL(l.runs[2].seed, exp_run_seed(3, 1));
  exp_run_list_free(&l);
}

/* ----------------------------------------------------- what is set */

static void test_object_replaces_object(void) {
  exp_run_list l = expand_ok("{" BASE ", 'sweep': {'policy': [{'type': 'relocate', "
                             "'lookahead': 5}, {'type': 'static'}]}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 2);
  CU_ASSERT_STRING_EQUAL(str_at(&l.runs[0], "policy.type"), "relocate");
  CU_ASSERT_EQUAL(num_at(&l.runs[0], "policy.lookahead"), 5);
  /* Replaced, not merged: the base's fast_local_access is gone. */
  CU_ASSERT_PTR_NULL(exp_path_get(l.runs[0].config, "policy.fast_local_access"));
  CU_ASSERT_PTR_NULL(exp_path_get(l.runs[1].config, "policy.lookahead"));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(exp_path_get(l.runs[1].config, "policy")), 1);
  exp_run_list_free(&l);
}

static void test_absent_leaf_is_added_and_later_keys_set_inside(void) {
  exp_run_list l = expand_ok("{" BASE ", 'sweep': {"
                             "'policy': [{'type': 'static'}, {'type': 'relocate'}], "
                             "'policy.fast_local_access': [false, true], "
                             "'cluster.workers_per_node': [2]}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 4);
  for (size_t i = 0; i < 4; i++) {
    const cJSON *fla = exp_path_get(l.runs[i].config, "policy.fast_local_access");
    CU_ASSERT_TRUE(cJSON_IsBool(fla));
    CU_ASSERT_EQUAL(cJSON_IsTrue(fla), i % 2 == 1);
    CU_ASSERT_EQUAL(num_at(&l.runs[i], "cluster.workers_per_node"), 2);
  }
  CU_ASSERT_STRING_EQUAL(str_at(&l.runs[3], "policy.type"), "relocate");
  exp_run_list_free(&l);
}

static void test_list_index_in_a_path(void) {
  exp_run_list l = expand_ok("{'name': 's', 'cluster': {'nodes': 2, 'stragglers': "
                             "[{'node': 1, 'speed_factor': 0.5}]}, "
                             "'sweep': {'cluster.stragglers.0.speed_factor': [0.1, 0.2]}}");
  CU_ASSERT_EQUAL_FATAL(l.count, 2);
  CU_ASSERT_EQUAL(num_at(&l.runs[1], "cluster.stragglers.0.speed_factor"), 0.2);
  CU_ASSERT_EQUAL(num_at(&l.runs[1], "cluster.stragglers.0.node"), 1);
  exp_run_list_free(&l);
}

/* ------------------------------------------------------ bad sweeps */

static void expect_sweep_error(const char *spec, const char *want) {
  cJSON *j = unit_json(spec);
  exp_errors e;
  exp_errors_init(&e);
  exp_run_list l;
  CU_ASSERT_FALSE(exp_sweep_expand(j, &l, &e));
  bool found = exp_errors_contain(&e, want);
  if (!found) {
    fprintf(stderr, "\n  expected: %s\n  got:", want);
    for (size_t i = 0; i < e.count; i++) fprintf(stderr, "\n    | %s", e.lines[i]);
  }
  CU_ASSERT_TRUE(found);
  exp_run_list_free(&l);
  exp_errors_free(&e);
  cJSON_Delete(j);
}

static void test_invalid_sweep_paths(void) {
  expect_sweep_error("{" BASE ", 'sweep': {'cluster.network.latency': [1]}}",
                     "sweep[\"cluster.network.latency\"]: expected a path whose parent "
                     "exists in the spec, found no cluster.network");
  expect_sweep_error("{" BASE ", 'sweep': {'policy.type.x': [1]}}",
                     "sweep[\"policy.type.x\"]: expected a path whose parent exists");
  expect_sweep_error("{'name': 's', 'cluster': {'stragglers': []}, "
                     "'sweep': {'cluster.stragglers.0.node': [1]}}",
                     "found no cluster.stragglers.0");
  expect_sweep_error("{'name': 's', 'cluster': {'stragglers': [{'node': 1}]}, "
                     "'sweep': {'cluster.stragglers.3': [{'node': 0}]}}",
                     "found no element cluster.stragglers.3");
  expect_sweep_error("{" BASE ", 'sweep': {'repeats': [1, 2]}}",
                     "sweep[\"repeats\"]: expected a setting that may differ between runs");
  expect_sweep_error("{" BASE ", 'sweep': {'plots.x': [1]}}",
                     "sweep[\"plots.x\"]: expected a setting that may differ");
  expect_sweep_error("{" BASE ", 'sweep': {'.nodes': [1]}}",
                     "sweep[\".nodes\"]: expected a dotted path");
  expect_sweep_error("{" BASE ", 'sweep': {'cluster.nodes': []}}",
                     "expected a non-empty list of values, found an empty list");
  expect_sweep_error("{" BASE ", 'sweep': {'cluster.nodes': [1], 'cluster.nodes': [2]}}",
                     "sweep[\"cluster.nodes\"]: expected each path once in sweep");
  expect_sweep_error("{" BASE ", 'sweep': 'nodes'}",
                     "sweep: expected an object of dotted paths to lists of values");
  /* A later key inside something an earlier one made a plain value. */
  expect_sweep_error("{" BASE ", 'sweep': {'policy': ['static'], 'policy.type': ['x']}}",
                     "sweep[\"policy.type\"]: cannot be set in sweep point policy=static");
}

static void test_valid_axes_survive_an_invalid_one(void) {
  cJSON *j = unit_json("{" BASE ", 'sweep': {'cluster.nodes': [1, 2], 'bad.path': [1]}}");
  exp_errors e;
  exp_errors_init(&e);
  exp_run_list l;
  CU_ASSERT_FALSE(exp_sweep_expand(j, &l, &e));
  CU_ASSERT_EQUAL(e.count, 1);
  CU_ASSERT_EQUAL(l.count, 2); /* the good axis is still expanded */
  exp_run_list_free(&l);
  exp_errors_free(&e);
  cJSON_Delete(j);
}

static void test_too_many_runs(void) {
  char spec[8192];
  size_t off = (size_t)snprintf(spec, sizeof spec, "{" BASE ", 'repeats': 10, 'sweep': {");
  for (int axis = 0; axis < 3; axis++) {
    off += (size_t)snprintf(spec + off, sizeof spec - off, "%s'workload.k%d': [",
                            axis ? ", " : "", axis);
    for (int v = 0; v < 200; v++)
      off += (size_t)snprintf(spec + off, sizeof spec - off, "%s%d", v ? "," : "", v);
    off += (size_t)snprintf(spec + off, sizeof spec - off, "]");
  }
  snprintf(spec + off, sizeof spec - off, "}}");
  expect_sweep_error(spec, "sweep: expected at most 1000000 runs");
}

/* ------------------------------------------------------------ paths */

static void test_path_get_and_set(void) {
  cJSON *j = unit_json("{'a': {'b': [10, {'c': 'x'}]}, 'd': 1}");
  CU_ASSERT_EQUAL(exp_path_get(j, "d")->valuedouble, 1);
  CU_ASSERT_EQUAL(exp_path_get(j, "a.b.0")->valuedouble, 10);
  CU_ASSERT_STRING_EQUAL(exp_path_get(j, "a.b.1.c")->valuestring, "x");
  CU_ASSERT_PTR_NULL(exp_path_get(j, "a.b.2"));
  CU_ASSERT_PTR_NULL(exp_path_get(j, "a.x"));
  CU_ASSERT_PTR_NULL(exp_path_get(j, "a..b"));
  CU_ASSERT_PTR_NULL(exp_path_get(j, ""));
  char err[256];
  CU_ASSERT_EQUAL(exp_path_set(j, "a.e", cJSON_CreateNumber(5), err, sizeof err), 0);
  CU_ASSERT_EQUAL(exp_path_get(j, "a.e")->valuedouble, 5);
  CU_ASSERT_EQUAL(exp_path_set(j, "a.b.1", cJSON_CreateString("y"), err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(exp_path_get(j, "a.b.1")->valuestring, "y");
  CU_ASSERT_EQUAL(exp_path_set(j, "a.b.5", cJSON_CreateNull(), err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "no element 5 in that list (it has 2)"));
  /* Missing objects on the way are made; lists are not. */
  CU_ASSERT_EQUAL(exp_path_set(j, "x.y.z", cJSON_CreateNumber(7), err, sizeof err), 0);
  CU_ASSERT_EQUAL(exp_path_get(j, "x.y.z")->valuedouble, 7);
  CU_ASSERT_EQUAL(exp_path_set(j, "a.b.3.c", cJSON_CreateNull(), err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "a.b.3.c: no element 3 in that list (it has 2)"));
  CU_ASSERT_PTR_NULL(exp_path_get(j, "a.b.3"));
  CU_ASSERT_EQUAL(exp_path_set(j, "d.y", cJSON_CreateNull(), err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "d is neither an object nor a list"));
  CU_ASSERT_EQUAL(exp_path_set(j, "new", cJSON_CreateTrue(), err, sizeof err), 0);
  CU_ASSERT_TRUE(cJSON_IsTrue(exp_path_get(j, "new")));
  cJSON_Delete(j);
}

static void test_validation_names_the_sweep_point(void) {
  const char *spec = "{'name': 's', 'cluster': {'nodes': 2}, "
                     "'workload': {'type': 'zipf', 'keys': 100, 'steps_per_worker': 10}, "
                     "'policy': {'type': 'static'}, "
                     "'sweep': {'policy.type': ['static', 'nope'], 'cluster.nodes': [2, 3]}}";
  char *t = strdup(spec);
  for (char *p = t; *p; p++)
    if (*p == '\'') *p = '"';
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_parse(t, strlen(t), "sw.json", ".", NULL, 0, &e);
  free(t);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(e.count, 1);
  CU_ASSERT_TRUE(exp_errors_contain(&e, "sw.json: policy.type: expected one of"));
  CU_ASSERT_TRUE(exp_errors_contain(&e, "(in sweep point policy.type=nope, cluster.nodes=2, and 1 more)"));
  exp_errors_free(&e);
}

PSLAB_SUITE("sweep",
            {"no sweep is one run", test_no_sweep_is_one_run},
            {"cartesian product size and order", test_cartesian_product_size_and_order},
            {"three axes", test_three_axes_product},
            {"empty values labelled in words", test_empty_values_labelled_in_words},
            {"repeats and seeds", test_repeats_and_seeds},
            {"seed derivation", test_seed_derivation},
            {"object replaces object", test_object_replaces_object},
            {"absent leaf added, later keys set inside", test_absent_leaf_is_added_and_later_keys_set_inside},
            {"list index in a path", test_list_index_in_a_path},
            {"invalid sweep paths", test_invalid_sweep_paths},
            {"valid axes survive an invalid one", test_valid_axes_survive_an_invalid_one},
            {"too many runs", test_too_many_runs},
            {"path get and set", test_path_get_and_set},
            {"validation names the sweep point", test_validation_names_the_sweep_point})
