/*
 * Sweeps larger than one machine and sweeps that were interrupted
 * (experiments/sweep.c's shards, resultsdir.c, merge.c, and the runner's
 * --shard and --resume): which runs a shard holds, that a shard's records
 * are the whole experiment's, that a killed experiment resumed ends with
 * every run exactly once (finished runs kept, not rerun), that failed and
 * cut-short records are redone, that another spec's directory is refused,
 * and that `pslab merge` joins shards and says what is missing or wrong.
 *
 * Runs go through a stand-in for sim_run in each forked child; it counts
 * its invocations in a file (one line per run started, with the run's node
 * count) so that a test can tell which runs really ran. The shards of a
 * real simulation are checked against a whole run in test_integration.c.
 */
#include "tests/unit.h"

#include "experiments/experiment.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------- helpers */

static char *make_temp_dir(void) {
  char *dir = strdup("/tmp/pslab-shards-XXXXXX");
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  return dir;
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  while (d && (ent = readdir(d))) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      remove_tree(path);
    else
      remove(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static bool contains(const char *text, const char *needle) {
  return text && strstr(text, needle);
}

/* DIR/runs.jsonl as a list (NULL when it cannot be read). */
static cJSON *records_of(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  exp_errors e;
  exp_errors_init(&e);
  cJSON *r = exp_jsonl_load(path, &e);
  exp_errors_print(&e, stderr);
  exp_errors_free(&e);
  return r;
}

static int run_number(const cJSON *rec) {
  const cJSON *n = cJSON_GetObjectItem(rec, "run");
  return cJSON_IsNumber(n) ? (int)n->valuedouble : -1;
}

/* ------------------------------------------------------ the stand-in */

/* Set by each test before it runs an experiment; the forked children
 * inherit them. */
static char counter_path[1024]; /* one line per run started: its nodes */
static uint32_t fail_nodes;     /* a run on this many nodes fails */
static uint32_t kill_nodes;     /* a run on this many nodes kills the runner */

static cJSON *counting_simulate(const sim_run_args *a, char *err, size_t errlen) {
  uint32_t nodes = a->cluster->nodes;
  FILE *f = fopen(counter_path, "a");
  if (f) {
    fprintf(f, "%u\n", nodes);
    fclose(f);
  }
  if (nodes == kill_nodes) {
    /* The runner (this child's parent) dies as a power cut or `kill -9`
     * would take it, in the middle of a run. */
    kill(getppid(), SIGKILL);
    raise(SIGKILL);
  }
  if (nodes == fail_nodes) {
    snprintf(err, errlen, "failing on %u nodes", nodes);
    return NULL;
  }
  cJSON *m = cJSON_CreateObject();
  cJSON_AddNumberToObject(m, "time_s", (double)nodes);
  cJSON_AddNumberToObject(m, "steps", 10.0 * nodes);
  cJSON_AddNumberToObject(m, "seed_seen", (double)a->seed);
  return m;
}

/* How many runs on `nodes` nodes were started since the counter was reset. */
static int started(uint32_t nodes) {
  FILE *f = fopen(counter_path, "r");
  unsigned n;
  int c = 0;
  while (f && fscanf(f, "%u", &n) == 1) c += n == nodes;
  if (f) fclose(f);
  return c;
}

static void reset_stand_in(const char *dir) {
  snprintf(counter_path, sizeof counter_path, "%s.count", dir);
  remove(counter_path);
  fail_nodes = kill_nodes = 0;
}

/* A spec whose run r runs on r nodes (nodes = the sweep's values, in run
 * order, two repeats when `repeats`). */
static exp_spec *spec_of(const char *nodes, int repeats, const char *name) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"name\": \"%s\", \"seed\": 3, \"repeats\": %d, \"cluster\": {\"nodes\": 1}, "
           "\"workload\": {\"type\": \"zipf\", \"keys\": 100, \"steps_per_worker\": 10}, "
           "\"policy\": {\"type\": \"static\"}, \"sweep\": {\"cluster.nodes\": %s}}",
           name, repeats, nodes);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = exp_spec_parse(text, strlen(text), "fake.json", ".", NULL, 0, &e);
  exp_errors_print(&e, stderr);
  exp_errors_free(&e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  return s;
}

typedef struct {
  exp_shard shard;
} how;

/* Runs spec into dir with the stand-in; the log (stderr) in *log when log
 * is not NULL. Returns the runner's status. */
static int run_into(const exp_spec *spec, const char *dir, how h, char **log) {
  char *log_text = NULL, *table = NULL;
  size_t log_len = 0, table_len = 0;
  exp_runner_options o;
  exp_runner_options_default(&o);
  o.out_dir = dir;
  o.progress_tty = 0;
  o.simulate = counting_simulate;
  o.gnuplot = "/nonexistent/gnuplot";
  o.shard = h.shard;
  o.log = open_memstream(&log_text, &log_len);
  o.out = open_memstream(&table, &table_len);
  int rc = exp_run_experiment(spec, &o);
  fclose(o.log);
  fclose(o.out);
  free(table);
  if (log)
    *log = log_text;
  else
    free(log_text);
  return rc;
}

/* ------------------------------------------------------------ shards */

static void test_shard_parse(void) {
  static const struct {
    const char *text;
    uint32_t k, n; /* n == 0: refused */
    const char *message;
  } cases[] = {
      {"1/1", 1, 1, NULL}, {"2/8", 2, 8, NULL}, {"8/8", 8, 8, NULL},
      {"0/3", 0, 0, "expected K/N with 1 <= K <= N (shard K of N), found \"0/3\""},
      {"4/3", 0, 0, "expected K/N with 1 <= K <= N (shard K of N), found \"4/3\""},
      {"1/0", 0, 0, "with 1 <= K <= N"},
      {"3/", 0, 0, "expected K/N, two whole numbers such as 2/8, found \"3/\""},
      {"/3", 0, 0, "two whole numbers"}, {"a/b", 0, 0, "found \"a/b\""},
      {"2", 0, 0, "found \"2\""}, {"-1/3", 0, 0, "two whole numbers"},
      {"1/3/5", 0, 0, "two whole numbers"}, {" 1/3", 0, 0, "two whole numbers"},
      {"99999999999/1", 0, 0, "two whole numbers"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    exp_shard s = {77, 77};
    char err[256] = "";
    int rc = exp_shard_parse(cases[i].text, &s, err, sizeof err);
    if (cases[i].n) {
      CU_ASSERT_EQUAL(rc, 0);
      CU_ASSERT_EQUAL(s.index, cases[i].k);
      CU_ASSERT_EQUAL(s.count, cases[i].n);
    } else {
      CU_ASSERT_EQUAL(rc, -1);
      if (!contains(err, cases[i].message))
        fprintf(stderr, "\n  %s: got \"%s\"\n", cases[i].text, err);
      CU_ASSERT_TRUE(contains(err, cases[i].message));
    }
  }
}

static void test_shards_split_every_run_once(void) {
  exp_spec *spec = spec_of("[1, 2, 3, 4, 5, 6, 7]", 2, "fake"); /* 14 runs */
  const exp_run_list *runs = exp_spec_runs(spec);
  for (uint32_t n = 1; n <= 16; n++) {
    size_t total = 0;
    for (uint32_t k = 1; k <= n; k++) {
      exp_shard s = {k, n};
      total += exp_shard_size(&s, runs);
      for (uint32_t r = 1; r <= 14; r++) {
        bool in_some_other = false;
        for (uint32_t j = 1; j <= n; j++)
          if (j != k && exp_shard_has(&(exp_shard){j, n}, r)) in_some_other = true;
        if (exp_shard_has(&s, r)) CU_ASSERT_FALSE(in_some_other);
      }
    }
    CU_ASSERT_EQUAL(total, 14);
  }
  exp_shard s = {2, 3};
  CU_ASSERT_TRUE(exp_shard_has(&s, 2));
  CU_ASSERT_TRUE(exp_shard_has(&s, 5));
  CU_ASSERT_FALSE(exp_shard_has(&s, 3));
  CU_ASSERT_TRUE(exp_shard_has(NULL, 3));
  CU_ASSERT_TRUE(exp_shard_has(&(exp_shard){0, 0}, 3));
  exp_spec_free(spec);
}

/* A shard runs its runs with the whole experiment's numbers, seeds and
 * configs, and says which shard it was. */
static void test_runner_runs_only_its_shard(void) {
  exp_spec *spec = spec_of("[1, 2, 3, 4, 5]", 2, "fake"); /* 10 runs */
  char *dir = make_temp_dir(), *whole = make_temp_dir(), *log = NULL;
  reset_stand_in(dir);
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.shard = {2, 3}}, &log), EXP_EXIT_OK);
  cJSON *recs = records_of(dir);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(recs), 3); /* runs 2, 5, 8 */
  CU_ASSERT_EQUAL(run_number(cJSON_GetArrayItem(recs, 0)), 2);
  CU_ASSERT_EQUAL(run_number(cJSON_GetArrayItem(recs, 1)), 5);
  CU_ASSERT_EQUAL(run_number(cJSON_GetArrayItem(recs, 2)), 8);
  CU_ASSERT_EQUAL(started(1) + started(4), 0);
  CU_ASSERT_EQUAL(started(2), 1);
  CU_ASSERT_EQUAL(started(5), 1);
  CU_ASSERT_EQUAL(started(3), 1); /* run 8: repeat 1, 3 nodes */
  CU_ASSERT_TRUE(contains(log, "[run 2/10] cluster.nodes=2: started\n"));
  CU_ASSERT_TRUE(contains(log, "[run 8/10] cluster.nodes=3: done"));
  CU_ASSERT_FALSE(contains(log, "[run 1/10]"));
  CU_ASSERT_TRUE(contains(log, "pslab: shard 2/3: ran 3 of the experiment's 10 runs; results in "));
  /* The same records as the whole experiment's runs 2, 5 and 8 (but wall_s). */
  reset_stand_in(whole);
  CU_ASSERT_EQUAL(run_into(spec, whole, (how){0}, NULL), EXP_EXIT_OK);
  cJSON *all = records_of(whole);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(all), 10);
  for (int i = 0; i < 3; i++) {
    cJSON *a = cJSON_GetArrayItem(recs, i);
    cJSON *b = cJSON_GetArrayItem(all, run_number(a) - 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(a, "metrics"), "wall_s");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(b, "metrics"), "wall_s");
    CU_ASSERT_TRUE(cJSON_Compare(a, b, true));
  }
  cJSON_Delete(recs);
  cJSON_Delete(all);
  free(log);
  remove(counter_path);
  reset_stand_in(dir);
  remove_tree(dir);
  remove_tree(whole);
  free(dir);
  free(whole);
  exp_spec_free(spec);
}

PSLAB_SUITE("shards",
            {"--shard K/N parsed, bad ones refused", test_shard_parse},
            {"shards split every run once", test_shards_split_every_run_once},
            {"the runner runs only its shard", test_runner_runs_only_its_shard})
