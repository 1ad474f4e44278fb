/*
 * The pslab command end to end on the simulator: a tiny spec (tests/specs/
 * tiny.json) runs, its runs.jsonl has every documented field, a rerun gives
 * the same metrics bit for bit, every run conserves pushes (the sum of all
 * values equals the floats pushed), and the metrics equal the ones pinned in
 * tests/golden/tiny.json, so a change of behaviour shows as a diff; and its
 * three shards, run apart and merged, make the same records. After an
 * intended change, regenerate the golden file with
 *   PSLAB_UPDATE_GOLDEN=1 ctest -R integration
 * and say why in the commit.
 */
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Metrics pinned by the golden file: the simulated ones (not wall_s). */
static const char *const pinned[] = {"time_s", "steps", "steps_per_s", "accesses",
                                     "local_ratio", "messages", "bytes", "relocations",
                                     "replica_syncs", "pushed_floats", "value_sum", NULL};

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* Runs the tiny spec into dir; returns its records as a JSON list. */
/* Runs tests/specs/<spec>.json into dir; its records, in run order. */
static cJSON *run_spec(const char *spec, const char *dir) {
  const char *bin = getenv("PSLAB_BINARY_DIR");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && '%s/pslab' run '%s/tests/specs/%s.json' --out '%s' -q > '%s.out' 2>&1",
           dir, bin ? bin : ".", unit_source_dir(), spec, dir, dir);
  int rc = system(cmd);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc != 0) {
    snprintf(cmd, sizeof cmd, "cat '%s.out' >&2", dir);
    (void)system(cmd);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  char *text = read_file(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  cJSON *list = cJSON_CreateArray();
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    cJSON *rec = cJSON_Parse(line);
    CU_ASSERT_PTR_NOT_NULL(rec);
    if (rec) cJSON_AddItemToArray(list, rec);
  }
  free(text);
  return list;
}

static cJSON *run_tiny(const char *dir) { return run_spec("tiny", dir); }

static const char *tmp_dir(const char *name) {
  static char buf[2][512];
  static int i;
  const char *base = getenv("PSLAB_BINARY_DIR");
  i = (i + 1) % 2; /* two paths may be in use at once */
  snprintf(buf[i], sizeof buf[i], "%s/it-%s", base ? base : "/tmp", name);
  return buf[i];
}

static cJSON *first_run;

static void test_runs_have_every_field(void) {
  first_run = run_tiny(tmp_dir("a"));
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(first_run), 7);
  static const char *const top[] = {"experiment", "run", "repeat", "seed", "backend",
                                    "sweep", "config", "metrics", NULL};
  static const char *const metrics[] = {"time_s", "epoch_time_s", "steps", "steps_per_s",
                                        "accesses", "local_ratio", "messages", "bytes",
                                        "relocations", "replica_syncs", "wall_s", NULL};
  cJSON *rec;
  cJSON_ArrayForEach(rec, first_run) {
    for (int i = 0; top[i]; i++) CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(rec, top[i]));
    cJSON *m = cJSON_GetObjectItem(rec, "metrics");
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    for (int i = 0; metrics[i]; i++) CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(m, metrics[i]));
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(m, "epoch_time_s")), 2);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(m, "steps")->valuedouble, 3 * 2 * 200);
  }
}

static void test_every_run_conserves_pushes(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_run);
  cJSON *rec;
  cJSON_ArrayForEach(rec, first_run) {
    cJSON *m = cJSON_GetObjectItem(rec, "metrics");
    double pushed = cJSON_GetObjectItem(m, "pushed_floats")->valuedouble;
    double sum = cJSON_GetObjectItem(m, "value_sum")->valuedouble;
    CU_ASSERT(pushed > 0);
    CU_ASSERT_EQUAL(pushed, sum);
  }
}

static void test_policies_differ_as_expected(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_run);
  double msgs[4], local[4], reloc[4];
  for (int i = 0; i < 4; i++) {
    cJSON *m = cJSON_GetObjectItem(cJSON_GetArrayItem(first_run, i), "metrics");
    msgs[i] = cJSON_GetObjectItem(m, "messages")->valuedouble;
    local[i] = cJSON_GetObjectItem(m, "local_ratio")->valuedouble;
    reloc[i] = cJSON_GetObjectItem(m, "relocations")->valuedouble;
  }
  CU_ASSERT(msgs[0] > msgs[1]);   /* no fast local access: more messages */
  CU_ASSERT_EQUAL(local[0], 0);
  CU_ASSERT(local[2] > local[1]); /* range matches the data clustering */
  CU_ASSERT(local[3] > local[1]); /* relocation makes accesses local */
  CU_ASSERT_EQUAL(reloc[1], 0);
  CU_ASSERT(reloc[3] > 0);
  /* adaptive relocates keys one node intends and serves most accesses locally */
  cJSON *a = cJSON_GetObjectItem(cJSON_GetArrayItem(first_run, 6), "metrics");
  CU_ASSERT(cJSON_GetObjectItem(a, "relocations")->valuedouble > 0);
  CU_ASSERT(cJSON_GetObjectItem(a, "local_ratio")->valuedouble > local[1]);
}

/* Replica reads miss at most a sync interval (1/200 s) and a message's way
 * (100 us of latency, a little queueing): more than the interval alone, since
 * the latency counts, in simulated time. */
static void test_staleness_within_sync_interval(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_run);
  for (int i = 4; i < 7; i++) { /* replicate, nups, adaptive */
    cJSON *m = cJSON_GetObjectItem(cJSON_GetArrayItem(first_run, i), "metrics");
    CU_ASSERT(cJSON_GetObjectItem(m, "replica_syncs")->valuedouble > 0);
    cJSON *max = cJSON_GetObjectItem(m, "staleness_max_s");
    CU_ASSERT_PTR_NOT_NULL_FATAL(max);
    CU_ASSERT(max->valuedouble > 1.0 / 200);
    CU_ASSERT(max->valuedouble <= 1.0 / 200 + 5e-4);
    CU_ASSERT(cJSON_GetObjectItem(m, "staleness_max_steps")->valuedouble > 0);
    CU_ASSERT(cJSON_GetObjectItem(m, "staleness_p99_s")->valuedouble <= 2.0 / 200);
  }
}

static double metric(cJSON *runs, int i, const char *name) {
  cJSON *m = cJSON_GetObjectItem(cJSON_GetArrayItem(runs, i), "metrics");
  cJSON *v = cJSON_GetObjectItem(m, name);
  CU_ASSERT_PTR_NOT_NULL_FATAL(v);
  return v->valuedouble;
}

/* Steps that sample, under nups with naive, pool (reuse 4) and local
 * sampling: every sample is pulled and pushed (conservation counts them),
 * pool reuses each drawn key 4 times, local serves more locally than naive
 * and reports it drifts further from the intended distribution. */
static void test_sampling_schemes(void) {
  cJSON *runs = run_spec("tiny_sampling", tmp_dir("s"));
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(runs), 3);
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_EQUAL(metric(runs, i, "samples"), 3 * 2 * 200 * 5);
    CU_ASSERT(metric(runs, i, "pushed_floats") > 0);
    CU_ASSERT_EQUAL(metric(runs, i, "pushed_floats"), metric(runs, i, "value_sum"));
    CU_ASSERT_EQUAL(metric(runs, i, "replica_max_diff"), 0); /* integer pushes: exact */
  }
  CU_ASSERT_EQUAL(metric(runs, 0, "sample_reuse_factor"), 1);
  CU_ASSERT_DOUBLE_EQUAL(metric(runs, 1, "sample_reuse_factor"), 4, 0.1);
  /* naive: only sampling noise, ~0.4 * sqrt(500 keys / 1000 samples) */
  CU_ASSERT(metric(runs, 0, "sample_tv_distance") < 0.35);
  CU_ASSERT(metric(runs, 2, "sample_tv_distance") > metric(runs, 0, "sample_tv_distance") + 0.1);
  CU_ASSERT(metric(runs, 2, "local_ratio") > metric(runs, 0, "local_ratio"));
  cJSON_Delete(runs);
}

/* Compares the pinned metrics of two lists of records. */
static int count_differences(cJSON *a, cJSON *b, bool print) {
  int diff = 0;
  for (int i = 0; i < cJSON_GetArraySize(a); i++) {
    cJSON *ma = cJSON_GetObjectItem(cJSON_GetArrayItem(a, i), "metrics");
    cJSON *mb = cJSON_GetObjectItem(cJSON_GetArrayItem(b, i), "metrics");
    for (int k = 0; pinned[k]; k++) {
      cJSON *x = cJSON_GetObjectItem(ma, pinned[k]), *y = mb ? cJSON_GetObjectItem(mb, pinned[k]) : NULL;
      if (x && y && x->valuedouble == y->valuedouble) continue;
      diff++;
      if (print)
        fprintf(stderr, "run %d %s: %.17g, golden %.17g\n", i, pinned[k], x ? x->valuedouble : -1,
                y ? y->valuedouble : -1);
    }
  }
  return diff;
}

static void test_rerun_is_identical(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_run);
  cJSON *again = run_tiny(tmp_dir("b"));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(again), 7);
  CU_ASSERT_EQUAL(count_differences(first_run, again, true), 0);
  cJSON_Delete(again);
}

/* Runs `pslab ARGS` (a command line without the program), quietly; its
 * exit status. */
static int pslab(const char *args, const char *out) {
  const char *bin = getenv("PSLAB_BINARY_DIR");
  char cmd[4096];
  int n = snprintf(cmd, sizeof cmd, "'%s/pslab' %s > '%s' 2>&1", bin ? bin : ".", args, out);
  if (n < 0 || (size_t)n >= sizeof cmd) {
    fprintf(stderr, "test_integration: command line too long for %s\n", out);
    return -1;
  }
  int rc = system(cmd);
  if (rc != 0) {
    snprintf(cmd, sizeof cmd, "cat '%s' >&2", out);
    (void)system(cmd);
  }
  return rc;
}

/* Three shards of the tiny spec, run apart and merged, make the records of
 * the whole experiment run in one go (but wall_s). */
static void test_shards_merged_are_the_whole(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_run);
  char top[600], args[4096], out[700];
  snprintf(top, sizeof top, "%s", tmp_dir("shards"));
  snprintf(out, sizeof out, "%s.out", top);
  snprintf(args, sizeof args, "rm -rf '%s'", top);
  CU_ASSERT_EQUAL(system(args), 0);
  for (int k = 1; k <= 3; k++) {
    snprintf(args, sizeof args, "run '%s/tests/specs/tiny.json' --shard %d/3 --out '%s/shard-%d' -q",
             unit_source_dir(), k, top, k);
    CU_ASSERT_EQUAL(pslab(args, out), 0);
  }
  snprintf(args, sizeof args, "merge --out '%s/all' '%s/shard-3' '%s/shard-1' '%s/shard-2'",
           top, top, top, top);
  CU_ASSERT_EQUAL(pslab(args, out), 0);
  char path[700];
  snprintf(path, sizeof path, "%s/all/runs.jsonl", top);
  char *text = read_file(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  cJSON *merged = cJSON_CreateArray();
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    cJSON_AddItemToArray(merged, cJSON_Parse(line));
  free(text);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(merged), cJSON_GetArraySize(first_run));
  for (int i = 0; i < cJSON_GetArraySize(merged); i++) {
    cJSON *a = cJSON_Duplicate(cJSON_GetArrayItem(first_run, i), true);
    cJSON *b = cJSON_GetArrayItem(merged, i);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(a, "metrics"), "wall_s");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(b, "metrics"), "wall_s");
    CU_ASSERT_TRUE(cJSON_Compare(a, b, true));
    cJSON_Delete(a);
  }
  cJSON_Delete(merged);
}

/* The golden file holds, per run, the pinned metrics. */
static void test_matches_golden(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(first_run);
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/golden/tiny.json", unit_source_dir());
  if (getenv("PSLAB_UPDATE_GOLDEN")) {
    cJSON *golden = cJSON_CreateArray();
    cJSON *rec;
    cJSON_ArrayForEach(rec, first_run) {
      cJSON *m = cJSON_GetObjectItem(rec, "metrics"), *g = cJSON_CreateObject(),
            *gm = cJSON_AddObjectToObject(g, "metrics");
      cJSON_AddItemToObject(g, "sweep", cJSON_Duplicate(cJSON_GetObjectItem(rec, "sweep"), 1));
      for (int k = 0; pinned[k]; k++)
        cJSON_AddItemToObject(gm, pinned[k], cJSON_Duplicate(cJSON_GetObjectItem(m, pinned[k]), 1));
      cJSON_AddItemToArray(golden, g);
    }
    char *text = cJSON_Print(golden);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%s\n", text);
    fclose(f);
    free(text);
    cJSON_Delete(golden);
  }
  char *text = read_file(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  cJSON *golden = cJSON_Parse(text);
  free(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(golden);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(golden), cJSON_GetArraySize(first_run));
  CU_ASSERT_EQUAL(count_differences(first_run, golden, true), 0);
  cJSON_Delete(golden);
  cJSON_Delete(first_run);
  first_run = NULL;
}

PSLAB_SUITE("integration", {"runs.jsonl has every field", test_runs_have_every_field},
            {"sampling schemes in the simulator", test_sampling_schemes},
            {"every run conserves pushes", test_every_run_conserves_pushes},
            {"policies differ as expected", test_policies_differ_as_expected},
            {"staleness: a sync interval and a message's way", test_staleness_within_sync_interval},
            {"a rerun gives identical metrics", test_rerun_is_identical},
            {"shards run apart and merged are the whole", test_shards_merged_are_the_whole},
            {"metrics match the golden file", test_matches_golden})
