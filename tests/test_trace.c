/*
 * Traces (workloads/workload.h, traces): the binary format round trip through the
 * writer and the merge, the text form, a table of malformed inputs each
 * rejected with its message, a zipf run recorded through the driver and
 * replayed by the trace workload step for step, the replay's mapping of
 * workers and its fields, and the statistics (a generated Zipf trace gives
 * back its exponent; hand-made traces give their known locality and reuse
 * distances).
 */
#include "tests/unit.h"
#include "workloads/internal.h"
#include "workloads/workload.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

static char *path_in(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

static ps_layout one_table(uint64_t keys, uint32_t value_len) {
  ps_layout l = {0};
  l.num_tables = 1;
  l.tables[0] = (ps_table){0, keys, value_len};
  return l;
}

/* All of a worker's records, flattened: op, clock, n, keys... */
typedef struct {
  uint64_t v[4096];
  size_t n;
} flat;

static void flatten(const wl_trace *t, uint32_t w, flat *out) {
  ps_key keys[256];
  CU_ASSERT_FATAL(wl_trace_max_record_keys(t) <= 256);
  wl_trace_cursor c;
  wl_trace_record r;
  wl_trace_cursor_init(&c, t, w);
  out->n = 0;
  while (wl_trace_next(&c, &r, keys)) {
    CU_ASSERT_FATAL(out->n + 3 + r.n <= 4096);
    out->v[out->n++] = r.op;
    out->v[out->n++] = (uint64_t)r.clock;
    out->v[out->n++] = r.n;
    for (size_t i = 0; i < r.n; i++) out->v[out->n++] = keys[i];
  }
}

/* --------------------------------------------------------- round trip */

static void test_binary_round_trip(void) {
  char *dir = unit_temp_dir(), *file = path_in(dir, "t.trace"), err[512] = "";
  ps_layout l = {0};
  l.num_tables = 2;
  l.tables[0] = (ps_table){0, 1000, 8};
  l.tables[1] = (ps_table){5000, 200000, 3};
  for (uint32_t rank = 0; rank < 2; rank++) {
    char *part = wl_trace_part_path(file, rank);
    wl_trace_writer *w = wl_trace_writer_open(part, &l, 1, 2, rank, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_FALSE(unit_exists(dir, rank ? "t.trace.part1" : "t.trace.part0")); /* .tmp */
    ps_key reads[] = {900 + rank, 3, 204999, 3, 5000};
    ps_key writes[] = {3};
    CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_READ, reads, 5), PS_OK);
    CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_WRITE, writes, 1), PS_OK);
    CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_SAMPLE, NULL, 0), PS_OK); /* none */
    CU_ASSERT_EQUAL(wl_trace_writer_record(w, 7, WL_TRACE_SAMPLE, writes, 1), PS_OK);
    if (rank == 0) {
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 6, WL_TRACE_READ, writes, 1), PS_ERR_INVAL);
      CU_ASSERT_NOT_EQUAL(wl_trace_writer_close(w, true, err, sizeof err), 0);
      CU_ASSERT_TRUE(unit_contains(err, "a clock that goes back"));
      CU_ASSERT_FALSE(unit_exists(dir, "t.trace.part0")); /* not kept when it failed */
      w = wl_trace_writer_open(part, &l, 1, 2, rank, err, sizeof err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(w);
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_READ, reads, 5), PS_OK);
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_WRITE, writes, 1), PS_OK);
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 7, WL_TRACE_SAMPLE, writes, 1), PS_OK);
    } else {
      ps_key bad = 1000; /* between the tables */
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 8, WL_TRACE_READ, &bad, 1), PS_ERR_INVAL);
      CU_ASSERT_NOT_EQUAL(wl_trace_writer_close(w, true, err, sizeof err), 0);
      CU_ASSERT_TRUE(unit_contains(err, "a key in no table"));
      w = wl_trace_writer_open(part, &l, 1, 2, rank, err, sizeof err);
      CU_ASSERT_PTR_NOT_NULL_FATAL(w);
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_READ, reads, 5), PS_OK);
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 0, WL_TRACE_WRITE, writes, 1), PS_OK);
      CU_ASSERT_EQUAL(wl_trace_writer_record(w, 7, WL_TRACE_SAMPLE, writes, 1), PS_OK);
    }
    CU_ASSERT_EQUAL(wl_trace_writer_close(w, true, err, sizeof err), 0);
    free(part);
  }
  CU_ASSERT_TRUE(unit_exists(dir, "t.trace.part1"));
  CU_ASSERT_EQUAL(wl_trace_merge(file, err, sizeof err), 0);
  CU_ASSERT_FALSE(unit_exists(dir, "t.trace.part0")); /* the parts are gone */
  CU_ASSERT_FALSE(unit_exists(dir, "t.trace.part1"));
  CU_ASSERT_FALSE(unit_exists(dir, "t.trace.tmp"));
  wl_trace *t = wl_trace_load(file, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_EQUAL(wl_trace_workers(t), 2);
  CU_ASSERT_EQUAL(wl_trace_nodes(t), 1);
  ps_layout got = {0};
  wl_trace_tables(t, &got);
  CU_ASSERT_EQUAL(got.num_tables, 2);
  CU_ASSERT_EQUAL(got.tables[1].first, 5000);
  CU_ASSERT_EQUAL(got.tables[1].count, 200000);
  CU_ASSERT_EQUAL(got.tables[1].value_len, 3);
  CU_ASSERT_EQUAL(wl_trace_steps(t, 0), 2);
  CU_ASSERT_EQUAL(wl_trace_accesses(t), 14);
  CU_ASSERT_EQUAL(wl_trace_max_record_keys(t), 5);
  flat f;
  flatten(t, 1, &f);
  const uint64_t want[] = {WL_TRACE_READ, 0, 5, 3, 3, 901, 5000, 204999, /* sorted */
                           WL_TRACE_WRITE, 0, 1, 3, WL_TRACE_SAMPLE, 7, 1, 3};
  CU_ASSERT_EQUAL_FATAL(f.n, sizeof want / sizeof want[0]);
  CU_ASSERT_EQUAL(memcmp(f.v, want, sizeof want), 0);
  /* Saved and loaded again: the same bytes. */
  char *copy = path_in(dir, "copy.trace");
  CU_ASSERT_EQUAL(wl_trace_save(t, copy, err, sizeof err), 0);
  uint8_t a[256], b[256];
  FILE *fa = fopen(file, "rb"), *fb = fopen(copy, "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(fa);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fb);
  size_t na = fread(a, 1, sizeof a, fa), nb = fread(b, 1, sizeof b, fb);
  fclose(fa);
  fclose(fb);
  CU_ASSERT(na > 30 && na < sizeof a);
  CU_ASSERT_EQUAL_FATAL(na, nb);
  CU_ASSERT_EQUAL(memcmp(a, b, na), 0);
  /* A merge with a part missing says which, and leaves the others. */
  char *part = wl_trace_part_path(file, 0);
  wl_trace_writer *w = wl_trace_writer_open(part, &l, 1, 2, 0, err, sizeof err);
  CU_ASSERT_EQUAL(wl_trace_writer_close(w, true, err, sizeof err), 0);
  CU_ASSERT_NOT_EQUAL(wl_trace_merge(file, err, sizeof err), 0);
  CU_ASSERT_TRUE(unit_contains(err, "t.trace.part1: cannot read it"));
  CU_ASSERT_TRUE(unit_exists(dir, "t.trace.part0"));
  free(part);
  wl_trace_free(t);
  free(copy);
  free(file);
  unit_remove_tree(dir);
  free(dir);
}

/* ------------------------------------------------------------ text form */

static const char text_trace[] =
    "pslab-trace 1\n"
    "# two workers, two tables\n"
    "table 0 10 4\n"
    "table 100 50 2   # the second\n"
    "workers 2\n"
    "nodes 1\n"
    "\n"
    "0 0 read 5 1 120\n"
    "1 0 read 3\n"
    "0 0 write 1\r\n"
    "0 0 sample 149 149\n"
    "0 2 read 9\n"
    "1 4 write 3 # a comment\n";

static void test_text_form(void) {
  char err[512] = "";
  wl_trace *t = wl_trace_parse(text_trace, strlen(text_trace), "hand.txt", err, sizeof err);
  if (!t) fprintf(stderr, "%s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_EQUAL(wl_trace_workers(t), 2);
  CU_ASSERT_EQUAL(wl_trace_nodes(t), 1);
  ps_layout l = {0};
  wl_trace_tables(t, &l);
  CU_ASSERT_EQUAL(l.num_tables, 2);
  CU_ASSERT_EQUAL(l.tables[1].first, 100);
  CU_ASSERT_EQUAL(l.tables[1].value_len, 2);
  CU_ASSERT_EQUAL(wl_trace_steps(t, 0), 2);
  CU_ASSERT_EQUAL(wl_trace_steps(t, 1), 2);
  CU_ASSERT_EQUAL(wl_trace_accesses(t), 9);
  flat f;
  flatten(t, 0, &f);
  const uint64_t w0[] = {WL_TRACE_READ, 0, 3, 1, 5, 120, WL_TRACE_WRITE, 0, 1, 1,
                         WL_TRACE_SAMPLE, 0, 2, 149, 149, WL_TRACE_READ, 2, 1, 9};
  CU_ASSERT_EQUAL_FATAL(f.n, sizeof w0 / sizeof w0[0]);
  CU_ASSERT_EQUAL(memcmp(f.v, w0, sizeof w0), 0);
  flatten(t, 1, &f);
  const uint64_t w1[] = {WL_TRACE_READ, 0, 1, 3, WL_TRACE_WRITE, 4, 1, 3};
  CU_ASSERT_EQUAL_FATAL(f.n, sizeof w1 / sizeof w1[0]);
  CU_ASSERT_EQUAL(memcmp(f.v, w1, sizeof w1), 0);
  wl_trace_free(t);
  /* nodes defaults to the workers; a trace may hold no records. */
  const char *empty = "pslab-trace 1\ntable 0 5 1\nworkers 3\n";
  t = wl_trace_parse(empty, strlen(empty), "e", err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_EQUAL(wl_trace_nodes(t), 3);
  CU_ASSERT_EQUAL(wl_trace_accesses(t), 0);
  wl_trace_free(t);
}

/* ------------------------------------------------------- malformed input */

/* A valid binary trace: one table of 10 keys (4 floats), 1 node, 1 worker
 * whose one record reads keys 3 and 5. Offsets: magic 0-7, version 8, table
 * count 9, the table 10-12, nodes 13, workers 14, section length 15, the
 * record 16-19 (head, count, key gaps). */
static const uint8_t good[] = {'P', 'S', 'L', 'T', 'R', 'A', 'C', 'E', 1, 1, 0, 10, 4,
                               1, 1, 4, 0, 2, 3, 2};

typedef struct {
  const char *what;
  size_t cut;        /* bytes kept (0: all) */
  int at;            /* byte to change (-1: none) */
  uint8_t value;
  const char *message;
} binary_case;

static void test_malformed_binary(void) {
  char err[512];
  wl_trace *t = wl_trace_parse(good, sizeof good, "g", err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  wl_trace_free(t);
  const binary_case cases[] = {
      {"truncated in the header", 12, -1, 0,
       "x.trace: offset 12: truncated: a table's value length runs past the end of the file"},
      {"truncated in the records", 19, -1, 0,
       "x.trace: offset 15: worker 0's section of 4 bytes runs past the end of the file "
       "(3 bytes left)"},
      {"truncated magic", 5, -1, 0, "x.trace: offset 0: not a pslab trace (bad magic"},
      {"bad magic", 0, 7, 'X', "x.trace: offset 0: not a pslab trace (bad magic"},
      {"bad version", 0, 8, 2,
       "x.trace: offset 8: version 2 is not supported (this pslab reads version 1)"},
      {"a count past the end", 0, 17, 127,
       "x.trace: offset 17: a record of 127 keys runs past the end of worker 0's section "
       "(2 bytes left)"},
      {"unknown operation", 0, 16, 3, "x.trace: offset 16: worker 0: unknown operation 3"},
      {"key out of the tables", 0, 19, 20,
       "x.trace: offset 19: worker 0: key 23 is in no table of the trace"},
      {"no table", 0, 9, 0, "x.trace: offset 9: the number of tables is 0, expected 1 to 16"},
      {"workers beyond the bytes", 0, 14, 100,
       "x.trace: offset 14: 100 workers, but only 5 bytes follow"},
      {"a section length beyond the file", 0, 15, 100,
       "x.trace: offset 15: worker 0's section of 100 bytes runs past the end of the file"},
      {"an empty record", 0, 17, 0,
       "x.trace: offset 17: a record's key count is 0, expected 1 to"},
      {"a varint past the end of its section", 0, 19, 0x80,
       "x.trace: offset 19: truncated: a key runs past the end of the file"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t bytes[sizeof good];
    memcpy(bytes, good, sizeof good);
    if (cases[i].at >= 0) bytes[cases[i].at] = cases[i].value;
    size_t len = cases[i].cut ? cases[i].cut : sizeof good;
    err[0] = '\0';
    t = wl_trace_parse(bytes, len, "x.trace", err, sizeof err);
    CU_ASSERT_PTR_NULL(t);
    wl_trace_free(t);
    if (!unit_contains(err, cases[i].message))
      fprintf(stderr, "\n%s: got \"%s\"\n", cases[i].what, err);
    CU_ASSERT_TRUE(unit_contains(err, cases[i].message));
  }
  /* Bytes after the last section, an empty file, a part. */
  uint8_t longer[sizeof good + 1];
  memcpy(longer, good, sizeof good);
  longer[sizeof good] = 0;
  CU_ASSERT_PTR_NULL(wl_trace_parse(longer, sizeof longer, "x", err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "x: offset 20: 1 bytes after the last worker's section"));
  CU_ASSERT_PTR_NULL(wl_trace_parse(good, 0, "x", err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "x: an empty file, not a trace"));
  uint8_t part[sizeof good];
  memcpy(part, good, sizeof good);
  memcpy(part, "PSLTPART", 8);
  CU_ASSERT_PTR_NULL(wl_trace_parse(part, sizeof part, "x", err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "one worker's part of a trace"));
  /* Every cut of a valid trace is rejected, never read past its end (the
   * sanitizer build checks the reads). */
  for (size_t cut = 1; cut < sizeof good; cut++) {
    uint8_t *copy = malloc(cut);
    memcpy(copy, good, cut);
    t = wl_trace_parse(copy, cut, "cut", err, sizeof err);
    CU_ASSERT_PTR_NULL(t);
    wl_trace_free(t);
    free(copy);
  }
}

typedef struct {
  const char *what, *text, *message;
} text_case;

static void test_malformed_text(void) {
  const text_case cases[] = {
      {"bad version", "pslab-trace 2\n", "t.txt:1: version 2 is not supported"},
      {"no version", "pslab-trace\n", "t.txt:1: expected the version after"},
      {"unknown operation", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 fetch 1\n",
       "t.txt:4: unknown operation \"fetch\" (expected read, write or sample)"},
      {"key out of the tables", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 read 1 10\n",
       "t.txt:4: key 10 is in no table of the trace"},
      {"not a number", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 read 1 x2\n",
       "t.txt:4: a key: expected an integer, found \"x2\""},
      {"worker out of range", "pslab-trace 1\ntable 0 10 1\nworkers 2\n2 0 read 1\n",
       "t.txt:4: worker 2, but the trace has 2 workers"},
      {"clock back", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 5 read 1\n0 4 read 1\n",
       "t.txt:5: worker 0's clock goes back from 5 to 4"},
      {"no keys", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 read\n",
       "t.txt:4: a record with no keys"},
      {"no op", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0\n",
       "t.txt:4: missing the operation"},
      {"record before the workers", "pslab-trace 1\ntable 0 10 1\n0 0 read 1\n",
       "t.txt:3: a record before the \"workers N\" line"},
      {"header after records", "pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 read 1\nnodes 2\n",
       "t.txt:5: \"nodes\" after the first record"},
      {"overlapping tables", "pslab-trace 1\ntable 0 10 1\ntable 5 10 1\n",
       "t.txt:3: expected tables sorted by first key and disjoint"},
      {"zero keys in a table", "pslab-trace 1\ntable 0 0 1\n",
       "t.txt:2: the table's key count is 0, expected 1 to"},
      {"no table", "pslab-trace 1\nworkers 1\n", "no \"table FIRST COUNT VALUE_LEN\" line"},
      {"a stray word", "pslab-trace 1\ntable 0 10 1\nworkers 1\nhello\n",
       "t.txt:4: expected a record \"WORKER CLOCK OP KEY...\" or a header line"},
  };
  char err[512];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    err[0] = '\0';
    wl_trace *t = wl_trace_parse(cases[i].text, strlen(cases[i].text), "t.txt", err,
                                 sizeof err);
    CU_ASSERT_PTR_NULL(t);
    wl_trace_free(t);
    if (!unit_contains(err, cases[i].message))
      fprintf(stderr, "\n%s: got \"%s\"\n", cases[i].what, err);
    CU_ASSERT_TRUE(unit_contains(err, cases[i].message));
  }
  /* Files: missing, a directory. */
  char *dir = unit_temp_dir();
  CU_ASSERT_PTR_NULL(wl_trace_load(dir, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "expected a file, found a directory"));
  char *missing = path_in(dir, "missing");
  CU_ASSERT_PTR_NULL(wl_trace_load(missing, err, sizeof err));
  CU_ASSERT_TRUE(unit_contains(err, "missing: cannot read it"));
  free(missing);
  /* A FIFO: refused at once, not waited on (the alarm ends a hang). */
  char *fifo = path_in(dir, "fifo.trace");
  CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
  alarm(30);
  CU_ASSERT_PTR_NULL(wl_trace_load(fifo, err, sizeof err));
  alarm(0);
  CU_ASSERT_TRUE(unit_contains(err, "fifo.trace: not a regular file (a FIFO)"));
  free(fifo);
  unit_remove_tree(dir);
  free(dir);
}

/* ------------------------------------------------- record, then replay */

/* In-process 1-node cluster: every key is local, nothing is ever sent. */
static void send_forbidden(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  CU_FAIL("a 1-node cluster sent a message");
  free(buf);
}
static void wake_ignored(void *ctx, uint32_t worker, ps_ticket t) {
  (void)ctx, (void)worker, (void)t;
}
static int env_wait(void *ctx, ps_worker *w, ps_ticket t) {
  (void)ctx;
  CU_ASSERT_TRUE(ps_worker_done(w, t));
  return ps_worker_done(w, t) ? PS_OK : PS_ERR_PROTOCOL;
}
static void env_compute(void *ctx, double flops, bool math_done) {
  (void)math_done;
  *(double *)ctx += flops / 1e9;
}
static double env_now(void *ctx) { return *(double *)ctx; }

static wl_workload *make(const char *json, uint32_t nodes, uint32_t wpn, const char *base,
                         char *err, size_t errlen) {
  cJSON *j = unit_json(json);
  wl_context ctx = {.nodes = nodes, .workers_per_node = wpn, .base_dir = base};
  wl_workload *wl = wl_create(j, &ctx, err, errlen);
  cJSON_Delete(j);
  return wl;
}

/* Sorted copy of keys[n] into out. */
static int cmp_key(const void *a, const void *b) {
  ps_key x = *(const ps_key *)a, y = *(const ps_key *)b;
  return x < y ? -1 : x > y;
}
static void sorted(const ps_key *keys, size_t n, ps_key *out) {
  memcpy(out, keys, n * sizeof *keys);
  qsort(out, n, sizeof *out, cmp_key);
}

static void same_step(const wl_step *a, const wl_step *b) {
  ps_key x[64], y[64];
  CU_ASSERT_EQUAL_FATAL(a->n_reads, b->n_reads);
  CU_ASSERT_EQUAL_FATAL(a->n_writes, b->n_writes);
  CU_ASSERT_FATAL(a->n_reads <= 64 && a->n_writes <= 64);
  sorted(a->reads, a->n_reads, x);
  sorted(b->reads, b->n_reads, y);
  CU_ASSERT_EQUAL(memcmp(x, y, a->n_reads * sizeof *x), 0);
  sorted(a->writes, a->n_writes, x);
  sorted(b->writes, b->n_writes, y);
  CU_ASSERT_EQUAL(memcmp(x, y, a->n_writes * sizeof *x), 0);
}

static const char zipf_json[] =
    "{'type': 'zipf', 'keys': 300, 'skew': 1.1, 'value_length': 4, 'reads_per_step': 8,"
    " 'writes_per_step': 5, 'steps_per_worker': 120, 'epochs': 2}";

/* Records a zipf run of 2 workers on one node through the driver into
 * dir/run.trace. */
static void record_zipf(const char *dir, uint64_t seed) {
  char err[512] = "", *file = path_in(dir, "run.trace");
  wl_workload *wl = make(zipf_json, 1, 2, NULL, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  ps_layout layout = {0};
  wl_tables(wl, &layout);
  layout.num_nodes = 1;
  ps_node_config cfg;
  ps_node_config_default(&cfg);
  cfg.workers = 2;
  cfg.layout = layout;
  cfg.env = (ps_env){.send = send_forbidden, .wake = wake_ignored};
  ps_node *node = ps_node_new(&cfg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(node);
  double clock = 0;
  for (uint32_t r = 0; r < 2; r++) {
    char *part = wl_trace_part_path(file, r);
    wl_trace_writer *tw = wl_trace_writer_open(part, &layout, 1, 2, r, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tw);
    wl_stream *s = wl_stream_new(wl, 0, r, seed);
    wl_driver_env env = {.ctx = &clock, .wait = env_wait, .compute = env_compute,
                         .now = env_now, .trace_ctx = tw, .trace_step = wl_trace_writer_step,
                         .rank = r, .workers = 2};
    wl_driver_stats stats;
    CU_ASSERT_EQUAL(wl_drive(ps_node_worker(node, r), s, &env, 3, &stats), PS_OK);
    CU_ASSERT_EQUAL(stats.steps, 120);
    free(stats.epoch_end_s);
    wl_stream_free(s);
    CU_ASSERT_EQUAL(wl_trace_writer_close(tw, true, err, sizeof err), 0);
    free(part);
  }
  CU_ASSERT_EQUAL(wl_trace_merge(file, err, sizeof err), 0);
  ps_node_free(node);
  wl_free(wl);
  free(file);
}

static void test_record_then_replay(void) {
  char *dir = unit_temp_dir(), err[512] = "";
  record_zipf(dir, 42);
  wl_workload *zipf = make(zipf_json, 1, 2, NULL, err, sizeof err);
  /* The same cluster: each worker replays its own recording, step for step
   * (a record's keys come back sorted, so steps compare as sets). */
  wl_workload *replay = make("{'type': 'trace', 'file': 'run.trace', 'epochs': 2}", 1, 2, dir,
                             err, sizeof err);
  if (!replay) fprintf(stderr, "%s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
  CU_ASSERT_EQUAL(wl_steps_per_worker(replay), 120);
  CU_ASSERT_EQUAL(wl_steps_per_epoch(replay), 60);
  CU_ASSERT_FALSE(wl_math(replay));
  CU_ASSERT_FALSE(wl_samples(replay));
  ps_layout l = {0};
  wl_tables(replay, &l);
  CU_ASSERT_EQUAL(l.num_tables, 1);
  CU_ASSERT_EQUAL(l.tables[0].count, 300);
  CU_ASSERT_EQUAL(l.tables[0].value_len, 4);
  for (uint32_t r = 0; r < 2; r++) {
    wl_stream *a = wl_stream_new(zipf, 0, r, 42), *b = wl_stream_new(replay, 0, r, 999);
    wl_step x, y;
    uint64_t steps = 0;
    while (wl_next_step(a, &x)) {
      CU_ASSERT_TRUE_FATAL(wl_next_step(b, &y));
      CU_ASSERT_EQUAL(y.n_samples, 0);
      same_step(&x, &y);
      steps++;
    }
    CU_ASSERT_FALSE(wl_next_step(b, &y));
    CU_ASSERT_EQUAL(steps, 120);
    wl_stream_free(a);
    wl_stream_free(b);
  }
  wl_free(replay);
  /* One worker: it replays recorded worker 0, then recorded worker 1. */
  replay = make("{'type': 'trace', 'file': 'run.trace'}", 1, 1, dir, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
  CU_ASSERT_EQUAL(wl_steps_per_worker(replay), 240);
  wl_stream *b = wl_stream_new(replay, 0, 0, 1);
  for (uint32_t r = 0; r < 2; r++) {
    wl_stream *a = wl_stream_new(zipf, 0, r, 42);
    wl_step x, y;
    while (wl_next_step(a, &x)) {
      CU_ASSERT_TRUE_FATAL(wl_next_step(b, &y));
      same_step(&x, &y);
    }
    wl_stream_free(a);
  }
  wl_step y;
  CU_ASSERT_FALSE(wl_next_step(b, &y));
  wl_stream_free(b);
  wl_free(replay);
  /* Three workers on three nodes: worker 2 replays recorded worker 0. */
  replay = make("{'type': 'trace', 'file': 'run.trace'}", 3, 1, dir, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
  CU_ASSERT_EQUAL(wl_steps_per_worker(replay), 120);
  wl_stream *a = wl_stream_new(zipf, 0, 0, 42);
  b = wl_stream_new(replay, 2, 2, 1);
  wl_step x;
  while (wl_next_step(a, &x)) {
    CU_ASSERT_TRUE_FATAL(wl_next_step(b, &y));
    same_step(&x, &y);
  }
  wl_stream_free(a);
  wl_stream_free(b);
  wl_free(replay);
  wl_free(zipf);
  unit_remove_tree(dir);
  free(dir);
}

/* Samples replay as keys read and written; fill and cut; the fields. */
static void test_replay_fields(void) {
  char *dir = unit_temp_dir(), err[512] = "", *file = path_in(dir, "hand.trace");
  write_text(file, "pslab-trace 1\n"
                   "table 0 10 2\n"
                   "workers 2\n"
                   "0 0 read 1 2\n0 0 write 1\n0 0 sample 7 8\n"
                   "0 1 write 4\n"
                   "0 3 read 3\n"
                   "1 0 read 9\n"
                   "1 5 read 5 6\n1 5 sample 5\n");
  wl_workload *wl = make("{'type': 'trace', 'file': 'hand.trace', 'flops_per_step': 5}", 1, 2,
                         dir, err, sizeof err);
  if (!wl) fprintf(stderr, "%s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  CU_ASSERT_EQUAL(wl_steps_per_worker(wl), 3); /* the longest: worker 0's */
  wl_stream *s = wl_stream_new(wl, 0, 0, 0);
  wl_step st;
  CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
  const ps_key reads0[] = {1, 2, 7, 8}, writes0[] = {1, 7, 8};
  wl_step want = {.reads = reads0, .n_reads = 4, .writes = writes0, .n_writes = 3};
  same_step(&st, &want);
  CU_ASSERT_EQUAL(st.n_samples, 0);
  CU_ASSERT_EQUAL(st.flops, 5);
  CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
  CU_ASSERT_EQUAL(st.n_reads, 0);
  CU_ASSERT_EQUAL_FATAL(st.n_writes, 1);
  CU_ASSERT_EQUAL(st.writes[0], 4);
  CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
  CU_ASSERT_EQUAL_FATAL(st.n_reads, 1);
  CU_ASSERT_EQUAL(st.reads[0], 3);
  CU_ASSERT_FALSE(wl_next_step(s, &st));
  wl_stream_free(s);
  /* Worker 1 has 2 steps: a third, empty one fills it. */
  s = wl_stream_new(wl, 0, 1, 0);
  CU_ASSERT_TRUE(wl_next_step(s, &st));
  CU_ASSERT_TRUE(wl_next_step(s, &st));
  CU_ASSERT_EQUAL(st.n_reads, 3); /* 5 6 and the sampled 5 */
  CU_ASSERT_EQUAL(st.n_writes, 1);
  CU_ASSERT_TRUE(wl_next_step(s, &st));
  CU_ASSERT_EQUAL(st.n_reads + st.n_writes, 0);
  CU_ASSERT_FALSE(wl_next_step(s, &st));
  wl_stream_free(s);
  ps_key hot[3];
  CU_ASSERT_EQUAL(wl_hot_keys(wl, 3, hot), 3);
  CU_ASSERT_EQUAL(hot[0], 1); /* 2 accesses (read, write), as key 5 (read, sample) */
  CU_ASSERT_EQUAL(hot[1], 5); /* ties by key */
  CU_ASSERT_EQUAL(hot[2], 2); /* the first of the keys of 1 access */
  wl_free(wl);
  /* fill "repeat": worker 1 starts again; steps_per_worker cuts. */
  wl = make("{'type': 'trace', 'file': 'hand.trace', 'fill': 'repeat', 'steps_per_worker': 4,"
            " 'epochs': 2}", 1, 2, dir, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  s = wl_stream_new(wl, 0, 1, 0);
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
    CU_ASSERT_EQUAL(st.n_reads, i % 2 ? 3u : 1u);
  }
  CU_ASSERT_FALSE(wl_next_step(s, &st));
  wl_stream_free(s);
  wl_free(wl);
  const struct {
    const char *json, *message;
  } bad[] = {
      {"{'type': 'trace', 'file': 'hand.trace', 'math': 'real'}",
       "math: expected \"none\" (a trace holds accesses, no values to compute), found \"real\""},
      {"{'type': 'trace'}", "file: expected a non-empty string, found nothing"},
      {"{'type': 'trace', 'file': 'nope.trace'}", "nope.trace: cannot read it"},
      {"{'type': 'trace', 'file': 'hand.trace', 'epochs': 2}",
       "epochs: expected a divisor of steps_per_worker (3), found 2"},
      {"{'type': 'trace', 'file': 'hand.trace', 'fill': 'loop'}",
       "fill: expected one of \"empty\", \"repeat\", found \"loop\""},
      {"{'type': 'trace', 'file': 'hand.trace', 'keys': 3}", "keys: expected one of the fields"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    wl = make(bad[i].json, 1, 2, dir, err, sizeof err);
    CU_ASSERT_PTR_NULL(wl);
    wl_free(wl);
    if (!unit_contains(err, bad[i].message)) fprintf(stderr, "\ngot \"%s\"\n", err);
    CU_ASSERT_TRUE(unit_contains(err, bad[i].message));
  }
  /* A malformed trace names the field, the file and the line. */
  write_text(file, "pslab-trace 1\ntable 0 10 2\nworkers 1\n0 0 read 11\n");
  wl = make("{'type': 'trace', 'file': 'hand.trace'}", 1, 1, dir, err, sizeof err);
  CU_ASSERT_PTR_NULL(wl);
  CU_ASSERT_TRUE(unit_contains(err, "file: "));
  CU_ASSERT_TRUE(unit_contains(err, "hand.trace:4: key 11 is in no table of the trace"));
  free(file);
  unit_remove_tree(dir);
  free(dir);
}

/* ------------------------------------------------------------ statistics */

/* A trace of one worker whose steps read `per_step` Zipf draws each, over
 * `keys` keys with exponent `skew`, `accesses` in all. */
static wl_trace *zipf_trace(const char *dir, uint64_t keys, double skew, uint64_t accesses) {
  char err[512] = "", *file = path_in(dir, "zipf.trace"), *part = wl_trace_part_path(file, 0);
  ps_layout l = one_table(keys, 1);
  wl_trace_writer *w = wl_trace_writer_open(part, &l, 1, 1, 0, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  wl_zipf z;
  CU_ASSERT_EQUAL_FATAL(wl_zipf_init(&z, keys, skew), PS_OK);
  gsl_rng *rng = wl_rng_new(7, 0);
  enum { PER_STEP = 100 };
  ps_key step[PER_STEP];
  for (uint64_t i = 0; i < accesses / PER_STEP; i++) {
    for (int k = 0; k < PER_STEP; k++) step[k] = wl_zipf_draw(&z, rng);
    CU_ASSERT_EQUAL_FATAL(wl_trace_writer_record(w, (int64_t)i, WL_TRACE_READ, step, PER_STEP),
                          PS_OK);
  }
  gsl_rng_free(rng);
  wl_zipf_free(&z);
  CU_ASSERT_EQUAL_FATAL(wl_trace_writer_close(w, true, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(wl_trace_merge(file, err, sizeof err), 0);
  wl_trace *t = wl_trace_load(file, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  free(part);
  free(file);
  return t;
}

static void check_exponent(double skew) {
  char *dir = unit_temp_dir();
  wl_trace *t = zipf_trace(dir, 100000, skew, 1000000);
  wl_trace_stats s;
  CU_ASSERT_EQUAL_FATAL(wl_trace_stats_compute(t, 0, &s), PS_OK);
  CU_ASSERT_EQUAL(s.accesses, 1000000);
  CU_ASSERT_EQUAL(s.reads, 1000000);
  CU_ASSERT_EQUAL(s.table_keys, 100000);
  CU_ASSERT(s.keys > 10000 && s.keys <= 100000);
  CU_ASSERT(s.zipf_ranks >= 100);
  fprintf(stderr, " [skew %.2f: fitted %.4f over ranks 1-%llu, top 1%% %.3f] ", skew,
          s.zipf_skew, (unsigned long long)s.zipf_ranks, s.top_share[1]);
  CU_ASSERT_DOUBLE_EQUAL(s.zipf_skew, skew, 0.05);
  CU_ASSERT(s.top_share[0] < s.top_share[1] && s.top_share[1] < s.top_share[2]);
  CU_ASSERT_EQUAL(s.locality, 1.0); /* one node homes every key */
  for (uint64_t i = 1; i < s.keys; i++) CU_ASSERT_FATAL(s.rank_counts[i - 1] >= s.rank_counts[i]);
  CU_ASSERT_EQUAL(s.cold, s.keys); /* one worker: one first touch per key */
  CU_ASSERT(s.reuses + s.cold <= s.accesses);
  CU_ASSERT(s.reuse_p50 <= s.reuse_p90 && s.reuse_p90 <= s.reuse_p99);
  wl_trace_stats_free(&s);
  wl_trace_free(t);
  unit_remove_tree(dir);
  free(dir);
}

static void test_stats_zipf_11(void) { check_exponent(1.1); }
static void test_stats_zipf_08(void) { check_exponent(0.8); }

static void test_stats_by_hand(void) {
  /* Worker 0 (node 0 of 2; keys 0-4 are node 0's, 5-9 node 1's) touches
   * 1 2 3 | 1 | 2 | 2 (one step each): reuses of 1 after {2, 3}: 2; of 2
   * after {3, 1}: 2; of 2 right after: 0. Its write of 1 in the first step
   * is the same touch. Worker 1 touches 7 8 | 1. */
  const char *text = "pslab-trace 1\ntable 0 10 1\nworkers 2\nnodes 2\n"
                     "0 0 read 1 2 3\n0 0 write 1\n0 1 read 1\n0 2 read 2\n0 3 read 2\n"
                     "1 0 read 7 8\n1 1 read 1\n";
  char err[256];
  wl_trace *t = wl_trace_parse(text, strlen(text), "h", err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  wl_trace_stats s;
  CU_ASSERT_EQUAL_FATAL(wl_trace_stats_compute(t, 0, &s), PS_OK);
  CU_ASSERT_EQUAL(s.nodes, 2);
  CU_ASSERT_EQUAL(s.steps, 6);
  CU_ASSERT_EQUAL(s.accesses, 10);
  CU_ASSERT_EQUAL(s.keys, 5);
  CU_ASSERT_EQUAL(s.rank_counts[0], 4); /* key 1: read 3 times, written once */
  CU_ASSERT_EQUAL(s.rank_counts[1], 3); /* key 2 */
  CU_ASSERT_DOUBLE_EQUAL(s.top_share[0], 0.4, 1e-12); /* one key of 5 */
  CU_ASSERT_DOUBLE_EQUAL(s.top_share[2], 0.4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s.locality, 9.0 / 10.0, 1e-12); /* all but worker 1's key 1 */
  CU_ASSERT_EQUAL(s.reuses, 3);
  CU_ASSERT_EQUAL(s.cold, 6);
  CU_ASSERT_EQUAL(s.reuse_p50, 2);
  CU_ASSERT_EQUAL(s.reuse_p90, 2);
  CU_ASSERT_EQUAL(s.reuse_p99, 2);
  CU_ASSERT_TRUE(isnan(s.zipf_skew)); /* far too few accesses to fit */
  wl_trace_stats_free(&s);
  /* On one node every access is local. */
  CU_ASSERT_EQUAL_FATAL(wl_trace_stats_compute(t, 1, &s), PS_OK);
  CU_ASSERT_EQUAL(s.locality, 1.0);
  wl_trace_stats_free(&s);
  wl_trace_free(t);
}

PSLAB_SUITE("trace",
            {"binary round trip through writer and merge", test_binary_round_trip},
            {"text form", test_text_form},
            {"malformed binary traces", test_malformed_binary},
            {"malformed text traces", test_malformed_text},
            {"record a zipf run, replay it step for step", test_record_then_replay},
            {"replay: samples, fill, cut, fields", test_replay_fields},
            {"stats recover Zipf exponent 1.1", test_stats_zipf_11},
            {"stats recover Zipf exponent 0.8", test_stats_zipf_08},
            {"stats of a hand-made trace", test_stats_by_hand})
