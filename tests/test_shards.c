/*
 * Sweeps larger than one machine and sweeps that were interrupted
 * (experiments/spec/sweep.c's shards, runner/results_dir.c, merge_shards.c,
 * and the runner's --shard and --resume): which runs a shard holds, that a
 * shard's records are the whole experiment's, that a killed experiment
 * resumed ends with every run exactly once (finished runs kept, not rerun),
 * that failed and cut-short records are redone, that another spec's
 * directory is refused, and that `pslab merge` joins shards and says what
 * is missing or wrong.
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

static void write_text(const char *dir, const char *name, const char *text, const char *mode) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, mode);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

/* DIR/runs.jsonl as a list (NULL when it cannot be read). */
static cJSON *records_of(const char *dir) {
  char path[2048];
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

/* How many records of run n the list holds. */
static int count_run(const cJSON *records, int n) {
  int c = 0;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) c += run_number(r) == n;
  return c;
}

/* ------------------------------------------------------ the stand-in */

/* Set by each test before it runs an experiment; the forked children
 * inherit them. */
static char counter_path[1024]; /* one line per run started: its nodes */
static uint32_t fail_nodes;     /* a run on this many nodes fails */
static uint32_t kill_nodes;     /* a run on this many nodes kills the runner */
static uint32_t int_nodes;      /* a run on this many nodes interrupts it (SIGINT) */

static cJSON *counting_simulate(const exp_backend_job *a, char *err, size_t errlen) {
  uint32_t nodes = a->cluster->sim.nodes;
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
  if (nodes == int_nodes) {
    /* Ctrl-C while this run runs: the runner passes the signal on to this
     * process, which ends (or is killed after the grace second). */
    kill(getppid(), SIGINT);
    for (;;) pause();
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

static const char *const counting_keys[] = {"nodes", NULL};
static const exp_backend counting_backends[] = {
    {"sim", "a stand-in that counts its runs", counting_keys, counting_simulate}};

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
  fail_nodes = kill_nodes = int_nodes = 0;
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

static exp_spec *five_runs(void) { return spec_of("[1, 2, 3, 4, 5]", 1, "fake"); }

typedef struct {
  exp_shard shard;
  bool resume;
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
  o.backends = counting_backends;
  o.n_backends = 1;
  o.gnuplot = "/nonexistent/gnuplot";
  o.shard = h.shard;
  o.resume = h.resume;
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
      if (!unit_contains(err, cases[i].message))
        fprintf(stderr, "\n  %s: got \"%s\"\n", cases[i].text, err);
      CU_ASSERT_TRUE(unit_contains(err, cases[i].message));
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
  char *dir = unit_temp_dir(), *whole = unit_temp_dir(), *log = NULL;
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
  CU_ASSERT_TRUE(unit_contains(log, "[run 2/10] cluster.nodes=2: started\n"));
  CU_ASSERT_TRUE(unit_contains(log, "[run 8/10] cluster.nodes=3: done"));
  CU_ASSERT_FALSE(unit_contains(log, "[run 1/10]"));
  CU_ASSERT_TRUE(unit_contains(log, "pslab: shard 2/3: ran 3 of the experiment's 10 runs; results in "));
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
  unit_remove_tree(dir);
  unit_remove_tree(whole);
  free(dir);
  free(whole);
  exp_spec_free(spec);
}

/* ---------------------------------------------------------- resuming */

/* Every run of a five-run experiment exactly once in DIR/runs.jsonl, each
 * successful. */
static void assert_every_run_once(const char *dir) {
  cJSON *recs = records_of(dir);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(recs), 5);
  for (int n = 1; n <= 5; n++) CU_ASSERT_EQUAL(count_run(recs, n), 1);
  for (const cJSON *r = recs ? recs->child : NULL; r; r = r->next)
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(r, "error"));
  cJSON_Delete(recs);
}

/* The runner, in a child of its own, is killed while run 3 runs. */
static void run_until_killed(const exp_spec *spec, const char *dir) {
  kill_nodes = 3;
  fflush(NULL);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    FILE *null = fopen("/dev/null", "w");
    exp_runner_options o;
    exp_runner_options_default(&o);
    o.out_dir = dir;
    o.backends = counting_backends;
  o.n_backends = 1;
    o.log = o.out = null;
    exp_run_experiment(spec, &o);
    _exit(0); /* not reached: run 3 kills this process */
  }
  int status = 0;
  CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
  CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  kill_nodes = 0;
}

static void test_resume_after_a_kill(void) {
  exp_spec *spec = five_runs();
  char *dir = unit_temp_dir(), *log = NULL;
  reset_stand_in(dir);
  run_until_killed(spec, dir);
  cJSON *before = records_of(dir);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(before), 2); /* runs 1 and 2 */
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.resume = true}, &log), EXP_EXIT_OK);
  assert_every_run_once(dir);
  /* Runs 1 and 2 were kept as they were (wall_s and all), not rerun; run 3
   * ran again, 4 and 5 for the first time. */
  cJSON *after = records_of(dir);
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(after, 0), cJSON_GetArrayItem(before, 0), true));
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(after, 1), cJSON_GetArrayItem(before, 1), true));
  CU_ASSERT_EQUAL(started(1), 1);
  CU_ASSERT_EQUAL(started(2), 1);
  CU_ASSERT_EQUAL(started(3), 2);
  CU_ASSERT_EQUAL(started(4), 1);
  CU_ASSERT_EQUAL(started(5), 1);
  CU_ASSERT_TRUE(unit_contains(log, "[run 1/5] cluster.nodes=1: skipped, already in runs.jsonl\n"));
  CU_ASSERT_TRUE(unit_contains(log, "[run 2/5] cluster.nodes=2: skipped"));
  CU_ASSERT_TRUE(unit_contains(log, "[run 3/5] cluster.nodes=3: started\n"));
  CU_ASSERT_TRUE(unit_contains(log, "pslab: 3 runs done, 2 skipped (already in runs.jsonl); results in "));
  /* summary.csv covers the old records and the new. */
  char *csv = unit_slurp(dir, "summary.csv");
  size_t lines = 0;
  for (char *p = csv; p && *p; p++) lines += *p == '\n';
  CU_ASSERT_EQUAL(lines, 6);
  CU_ASSERT_FALSE(unit_exists(dir, "logs")); /* run 3's log from the kill went with its rerun */
  free(csv);
  cJSON_Delete(before);
  cJSON_Delete(after);
  free(log);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

/* Interrupted again after a resume: the last line counts the runs really
 * in runs.jsonl, those kept from before the resume as well as this one's. */
static void test_interrupted_resume_counts_the_runs_kept(void) {
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer defers a signal's handler while the thread is in an
   * intercepted blocking call: the runner, blocked reading its child's pipe
   * (SA_RESTART), would never pass the SIGINT on, and the child waits for it
   * forever. The same reason disables it_signals there (tests/CMakeLists.txt). */
  return;
#endif
  exp_spec *spec = five_runs();
  char *dir = unit_temp_dir(), *log = NULL;
  reset_stand_in(dir);
  run_until_killed(spec, dir); /* runs 1 and 2 recorded */
  int_nodes = 4;
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.resume = true}, &log), 128 + SIGINT);
  int_nodes = 0;
  cJSON *recs = records_of(dir);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(recs), 3);
  char want[1200];
  snprintf(want, sizeof want, "during run 4, which is not recorded; the 3 runs finished before "
           "are in %s/runs.jsonl", dir);
  CU_ASSERT_TRUE(unit_contains(log, want));
  if (!unit_contains(log, want)) fprintf(stderr, "\n%s\n", log);
  cJSON_Delete(recs);
  free(log);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

static void test_resume_reruns_failed_runs(void) {
  exp_spec *spec = five_runs();
  char *dir = unit_temp_dir(), *log = NULL;
  reset_stand_in(dir);
  fail_nodes = 2;
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){0}, NULL), EXP_EXIT_FAILED);
  fail_nodes = 0;
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.resume = true}, &log), EXP_EXIT_OK);
  assert_every_run_once(dir);
  CU_ASSERT_EQUAL(started(1), 1);
  CU_ASSERT_EQUAL(started(2), 2);
  CU_ASSERT_EQUAL(started(3), 1);
  CU_ASSERT_TRUE(unit_contains(log, "pslab: 1 run done, 4 skipped"));
  /* runs.jsonl is in the order runs ended; runs.csv in run order. */
  cJSON *recs = records_of(dir);
  CU_ASSERT_EQUAL(run_number(cJSON_GetArrayItem(recs, 4)), 2);
  cJSON_Delete(recs);
  char *csv = unit_slurp(dir, "runs.csv");
  CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
  const char *r1 = strstr(csv, "\n1,0,3,1,1,10,"), *r2 = strstr(csv, "\n2,0,3,2,2,20,"),
             *r3 = strstr(csv, "\n3,0,3,3,3,30,");
  CU_ASSERT_TRUE(r1 && r2 && r3 && r1 < r2 && r2 < r3);
  free(csv);
  free(log);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

/* A last line cut short is dropped with a warning; a record whose seed is
 * not the run's (another spec's, or edited) is not taken for it. */
static void test_resume_drops_a_cut_short_line(void) {
  exp_spec *spec = five_runs();
  char *dir = unit_temp_dir(), *log = NULL;
  reset_stand_in(dir);
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){0}, NULL), EXP_EXIT_OK);
  cJSON *recs = records_of(dir);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(recs), 5);
  cJSON_ReplaceItemInObject(cJSON_GetArrayItem(recs, 0), "seed", cJSON_CreateNumber(4));
  char path[2048];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  FILE *f = fopen(path, "w");
  for (int i = 0; i < 3; i++) exp_jsonl_append(f, cJSON_GetArrayItem(recs, i));
  fclose(f);
  char *fourth = cJSON_PrintUnformatted(cJSON_GetArrayItem(recs, 3));
  fourth[strlen(fourth) / 2] = '\0'; /* the kill came mid-write */
  write_text(dir, "runs.jsonl", fourth, "a");
  free(fourth);
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.resume = true}, &log), EXP_EXIT_OK);
  char want[4096];
  snprintf(want, sizeof want, "pslab: warning: %s:4: the last line is cut short", path);
  CU_ASSERT_TRUE(unit_contains(log, want));
  assert_every_run_once(dir); /* strictly readable again */
  CU_ASSERT_EQUAL(started(1), 2); /* its record had another seed */
  CU_ASSERT_EQUAL(started(2), 1);
  CU_ASSERT_EQUAL(started(4), 2);
  CU_ASSERT_EQUAL(started(5), 2);
  cJSON_Delete(recs);
  free(log);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

static void test_resume_refuses_another_spec(void) {
  exp_spec *spec = five_runs(), *other = spec_of("[1, 2, 3]", 1, "fake");
  char *dir = unit_temp_dir(), *log = NULL;
  reset_stand_in(dir);
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){0}, NULL), EXP_EXIT_OK);
  char *jsonl = unit_slurp(dir, "runs.jsonl"), *saved = unit_slurp(dir, "spec.json");
  CU_ASSERT_EQUAL(run_into(other, dir, (how){.resume = true}, &log), EXP_EXIT_FAILED);
  char want[4096];
  snprintf(want, sizeof want, "pslab: %s/spec.json: the results there are of a different spec "
           "than fake.json", dir);
  CU_ASSERT_TRUE(unit_contains(log, want));
  CU_ASSERT_TRUE(unit_contains(log, "nothing was changed"));
  /* Nothing changed, nothing ran. */
  char *jsonl2 = unit_slurp(dir, "runs.jsonl"), *saved2 = unit_slurp(dir, "spec.json");
  CU_ASSERT_STRING_EQUAL(jsonl, jsonl2);
  CU_ASSERT_STRING_EQUAL(saved, saved2);
  CU_ASSERT_EQUAL(started(1), 1);
  CU_ASSERT_FALSE(unit_exists(dir, "runs.jsonl.tmp"));
  free(jsonl);
  free(jsonl2);
  free(saved);
  free(saved2);
  free(log);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
  exp_spec_free(other);
}

/* --resume where nothing was run yet runs everything; resuming a shard of
 * a finished experiment runs nothing. */
static void test_resume_from_nothing_and_of_a_shard(void) {
  exp_spec *spec = five_runs();
  char *top = unit_temp_dir(), *log = NULL;
  char dir[512];
  snprintf(dir, sizeof dir, "%s/not/yet", top);
  reset_stand_in(top);
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.resume = true}, &log), EXP_EXIT_OK);
  assert_every_run_once(dir);
  CU_ASSERT_TRUE(unit_contains(log, "pslab: 5 runs done; results in "));
  free(log);
  CU_ASSERT_EQUAL(run_into(spec, dir, (how){.shard = {1, 2}, .resume = true}, &log), EXP_EXIT_OK);
  CU_ASSERT_TRUE(unit_contains(log, "pslab: shard 1/2: ran 0 of the experiment's 5 runs, 3 skipped"));
  CU_ASSERT_FALSE(unit_contains(log, "[run 2/5]"));
  assert_every_run_once(dir);
  for (uint32_t n = 1; n <= 5; n++) CU_ASSERT_EQUAL(started(n), 1);
  free(log);
  remove(counter_path);
  unit_remove_tree(top);
  free(top);
  exp_spec_free(spec);
}

/* ------------------------------------------------------------- merge */

typedef struct {
  int rc;
  char *log, *table;
} merged;

static merged merge_into(const char *out_dir, const char *const *dirs, size_t n) {
  merged m = {0};
  size_t log_len = 0, table_len = 0;
  exp_merge_options o;
  exp_merge_options_default(&o);
  o.out_dir = out_dir;
  o.gnuplot = "/nonexistent/gnuplot";
  o.log = open_memstream(&m.log, &log_len);
  o.out = open_memstream(&m.table, &table_len);
  m.rc = exp_merge_dirs(dirs, n, &o);
  fclose(o.log);
  fclose(o.out);
  return m;
}

static void merged_free(merged *m) {
  free(m->log);
  free(m->table);
}

/* DIR/<name> for a test's directories. */
static const char *sub(const char *dir, const char *name) {
  static char buf[4][512];
  static int i;
  i = (i + 1) % 4;
  snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
  return buf[i];
}

static void drop_wall_s(cJSON *records) {
  for (cJSON *r = records ? records->child : NULL; r; r = r->next)
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(r, "metrics"), "wall_s");
}

static void test_merge_joins_shards(void) {
  exp_spec *spec = spec_of("[1, 2, 3, 4, 5]", 2, "fake");
  char *dir = unit_temp_dir();
  reset_stand_in(dir);
  CU_ASSERT_EQUAL(run_into(spec, sub(dir, "whole"), (how){0}, NULL), EXP_EXIT_OK);
  for (uint32_t k = 1; k <= 3; k++) {
    char name[16];
    snprintf(name, sizeof name, "s%u", k);
    CU_ASSERT_EQUAL(run_into(spec, sub(dir, name), (how){.shard = {k, 3}}, NULL), EXP_EXIT_OK);
  }
  char s1[512], s2[512], s3[512];
  snprintf(s1, sizeof s1, "%s", sub(dir, "s1"));
  snprintf(s2, sizeof s2, "%s", sub(dir, "s2"));
  snprintf(s3, sizeof s3, "%s", sub(dir, "s3"));
  const char *dirs[] = {s2, s3, s1};
  merged m = merge_into(sub(dir, "all"), dirs, 3);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_OK);
  CU_ASSERT_TRUE(unit_contains(m.log, "pslab merge: 10 of the experiment's 10 runs from 3 directories; "
                                 "results in "));
  CU_ASSERT_TRUE(unit_contains(m.table, "cluster.nodes"));
  cJSON *all = records_of(sub(dir, "all")), *whole = records_of(sub(dir, "whole"));
  drop_wall_s(all);
  drop_wall_s(whole);
  CU_ASSERT_TRUE(cJSON_Compare(all, whole, true)); /* in run order */
  char *a = unit_slurp(sub(dir, "all"), "spec.json"), *w = unit_slurp(sub(dir, "whole"), "spec.json");
  CU_ASSERT_STRING_EQUAL(a, w);
  free(a);
  free(w);
  char *csv = unit_slurp(sub(dir, "all"), "runs.csv");
  size_t lines = 0;
  for (char *p = csv; p && *p; p++) lines += *p == '\n';
  CU_ASSERT_EQUAL(lines, 11);
  free(csv);
  cJSON_Delete(all);
  cJSON_Delete(whole);
  merged_free(&m);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

static void test_merge_refuses_different_specs(void) {
  exp_spec *spec = five_runs(), *other = spec_of("[1, 2, 3, 4, 5]", 1, "other");
  char *dir = unit_temp_dir();
  reset_stand_in(dir);
  CU_ASSERT_EQUAL(run_into(spec, sub(dir, "a"), (how){.shard = {1, 3}}, NULL), EXP_EXIT_OK);
  CU_ASSERT_EQUAL(run_into(spec, sub(dir, "b"), (how){.shard = {2, 3}}, NULL), EXP_EXIT_OK);
  CU_ASSERT_EQUAL(run_into(other, sub(dir, "c"), (how){.shard = {3, 3}}, NULL), EXP_EXIT_OK);
  char a[512], b[512], c[512], want[4096];
  snprintf(a, sizeof a, "%s", sub(dir, "a"));
  snprintf(b, sizeof b, "%s", sub(dir, "b"));
  snprintf(c, sizeof c, "%s", sub(dir, "c"));
  const char *dirs[] = {a, b, c};
  merged m = merge_into(sub(dir, "all"), dirs, 3);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_FAILED);
  snprintf(want, sizeof want, "pslab merge: %s/spec.json is not the spec of %s/spec.json", c, a);
  CU_ASSERT_TRUE(unit_contains(m.log, want));
  CU_ASSERT_TRUE(unit_contains(m.log, "nothing was written"));
  CU_ASSERT_FALSE(unit_exists(dir, "all"));
  merged_free(&m);
  /* Not a results directory at all. */
  const char *nowhere[] = {a, sub(dir, "nowhere")};
  m = merge_into(sub(dir, "all"), nowhere, 2);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_FAILED);
  CU_ASSERT_TRUE(unit_contains(m.log, "nowhere/spec.json: cannot read"));
  CU_ASSERT_FALSE(unit_exists(dir, "all"));
  merged_free(&m);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
  exp_spec_free(other);
}

/* What there is is written; the missing runs are listed, ranges joined. */
static void test_merge_names_missing_runs(void) {
  exp_spec *spec = spec_of("[1, 2, 3, 4, 5, 6, 7]", 1, "fake");
  char *dir = unit_temp_dir();
  reset_stand_in(dir);
  char s1[512], s2[512];
  snprintf(s1, sizeof s1, "%s", sub(dir, "s1"));
  snprintf(s2, sizeof s2, "%s", sub(dir, "s2"));
  CU_ASSERT_EQUAL(run_into(spec, s1, (how){.shard = {1, 3}}, NULL), EXP_EXIT_OK); /* 1, 4, 7 */
  CU_ASSERT_EQUAL(run_into(spec, s2, (how){.shard = {2, 3}}, NULL), EXP_EXIT_OK); /* 2, 5 */
  const char *one[] = {s1};
  merged m = merge_into(sub(dir, "all"), one, 1);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_FAILED);
  CU_ASSERT_TRUE(unit_contains(m.log, "pslab merge: warning: runs 2-3, 5-6 of the experiment's 7 "
                                 "are in none of the directories"));
  CU_ASSERT_TRUE(unit_contains(m.log, "pslab merge: 3 of the experiment's 7 runs from 1 directory"));
  cJSON *all = records_of(sub(dir, "all"));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(all), 3);
  cJSON_Delete(all);
  merged_free(&m);
  /* A shard killed mid-write: its cut-short line is dropped with a warning,
   * and its run is missing. */
  write_text(s2, "runs.jsonl", "{\"experiment\":\"fake\",\"run\":8", "a");
  const char *both[] = {s1, s2};
  m = merge_into(sub(dir, "all"), both, 2);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_FAILED);
  CU_ASSERT_TRUE(unit_contains(m.log, "s2/runs.jsonl:3: the last line is cut short"));
  CU_ASSERT_TRUE(unit_contains(m.log, "warning: runs 3, 6 of the experiment's 7"));
  merged_free(&m);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

static void test_merge_refuses_an_input_as_output(void) {
  exp_spec *spec = five_runs();
  char *dir = unit_temp_dir();
  reset_stand_in(dir);
  char s1[512], s2[512];
  snprintf(s1, sizeof s1, "%s", sub(dir, "s1"));
  snprintf(s2, sizeof s2, "%s", sub(dir, "s2"));
  CU_ASSERT_EQUAL(run_into(spec, s1, (how){.shard = {1, 2}}, NULL), EXP_EXIT_OK);
  CU_ASSERT_EQUAL(run_into(spec, s2, (how){.shard = {2, 2}}, NULL), EXP_EXIT_OK);
  char *before = unit_slurp(s2, "runs.jsonl");
  const char *dirs[] = {s1, s2};
  char out[600];
  snprintf(out, sizeof out, "%s/../s2/.", s1); /* s2, spelt otherwise */
  merged m = merge_into(out, dirs, 2);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_FAILED);
  char want[4096];
  snprintf(want, sizeof want, "pslab merge: the output directory %s is one of the directories "
           "to merge (%s)", out, s2);
  CU_ASSERT_TRUE(unit_contains(m.log, want));
  char *after = unit_slurp(s2, "runs.jsonl");
  CU_ASSERT_STRING_EQUAL(before, after);
  free(before);
  free(after);
  merged_free(&m);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

/* A run in two directories: the successful record over a failed one, the
 * first directory's of two successful ones, with a warning naming both. */
static void test_merge_chooses_one_record_per_run(void) {
  exp_spec *spec = five_runs();
  char *dir = unit_temp_dir();
  reset_stand_in(dir);
  char a[512], b[512];
  snprintf(a, sizeof a, "%s", sub(dir, "a"));
  snprintf(b, sizeof b, "%s", sub(dir, "b"));
  fail_nodes = 2;
  CU_ASSERT_EQUAL(run_into(spec, a, (how){0}, NULL), EXP_EXIT_FAILED);
  fail_nodes = 0;
  CU_ASSERT_EQUAL(run_into(spec, b, (how){0}, NULL), EXP_EXIT_OK);
  const char *dirs[] = {a, b};
  merged m = merge_into(sub(dir, "all"), dirs, 2);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_OK);
  char want[4096];
  snprintf(want, sizeof want, "pslab merge: warning: run 1 succeeded in both %s and %s; "
           "keeping the record of %s", a, b, a);
  CU_ASSERT_TRUE(unit_contains(m.log, want));
  CU_ASSERT_FALSE(unit_contains(m.log, "run 2 succeeded"));
  cJSON *all = records_of(sub(dir, "all")), *ra = records_of(a), *rb = records_of(b);
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(all), 5);
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(all, 0), cJSON_GetArrayItem(ra, 0), true));
  CU_ASSERT_TRUE(cJSON_Compare(cJSON_GetArrayItem(all, 1), cJSON_GetArrayItem(rb, 1), true));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetArrayItem(all, 1), "error"));
  cJSON_Delete(all);
  cJSON_Delete(ra);
  cJSON_Delete(rb);
  merged_free(&m);
  /* Only the failed record: it is merged, and the merge says so. */
  const char *only[] = {a};
  m = merge_into(sub(dir, "all"), only, 1);
  CU_ASSERT_EQUAL(m.rc, EXP_EXIT_FAILED);
  CU_ASSERT_TRUE(unit_contains(m.log, "pslab merge: 1 of the runs merged failed"));
  merged_free(&m);
  remove(counter_path);
  unit_remove_tree(dir);
  free(dir);
  exp_spec_free(spec);
}

PSLAB_SUITE("shards",
            {"--shard K/N parsed, bad ones refused", test_shard_parse},
            {"shards split every run once", test_shards_split_every_run_once},
            {"the runner runs only its shard", test_runner_runs_only_its_shard},
            {"resume after a kill: every run once", test_resume_after_a_kill},
            {"resume reruns failed runs", test_resume_reruns_failed_runs},
            {"an interrupted resume counts the runs kept",
             test_interrupted_resume_counts_the_runs_kept},
            {"resume drops a line cut short", test_resume_drops_a_cut_short_line},
            {"resume refuses another spec's directory", test_resume_refuses_another_spec},
            {"resume from nothing, and of a shard", test_resume_from_nothing_and_of_a_shard},
            {"merge joins shards into the whole", test_merge_joins_shards},
            {"merge refuses different specs", test_merge_refuses_different_specs},
            {"merge names the missing runs", test_merge_names_missing_runs},
            {"merge refuses an input as output", test_merge_refuses_an_input_as_output},
            {"merge keeps one record per run", test_merge_chooses_one_record_per_run})
