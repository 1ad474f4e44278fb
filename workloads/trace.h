/*
 * workloads/trace.h: access traces, the door for those outside workloads/
 * (the run layer records them, the experiments layer merges and studies
 * them). The format is documented in workloads/TRACE.md.
 *
 * A trace says, for every worker of a run, which keys it read, wrote and
 * sampled at each of its clocks. Three pieces:
 *   the reader     loads a binary trace or its text form (told apart by the
 *                  magic), checking every length, every operation and every
 *                  key against the tables: a bad file is an error naming the
 *                  file and the byte offset or the line, never a crash;
 *   the writer     one per worker of a recording run: appends that worker's
 *                  records to a part file, FILE.part<rank> (written under a
 *                  temporary name, renamed when the worker is done);
 *   the merge      joins the parts of a run into FILE (temporary name, then
 *                  rename) and removes them;
 * plus the statistics `pslab trace stats` prints (trace_stats.c). The `trace`
 * workload type (trace.c) replays a loaded trace.
 */
#ifndef PSLAB_WORKLOADS_TRACE_H
#define PSLAB_WORKLOADS_TRACE_H

#include "workloads/workload.h"

#define WL_TRACE_VERSION 1
#define WL_TRACE_MAGIC "PSLTRACE"      /* 8 bytes: a binary trace */
#define WL_TRACE_PART_MAGIC "PSLTPART" /* 8 bytes: one worker's part */
#define WL_TRACE_TEXT_MAGIC "pslab-trace" /* the text form's first word */

typedef enum { WL_TRACE_READ = 0, WL_TRACE_WRITE = 1, WL_TRACE_SAMPLE = 2 } wl_trace_op;

/* The name of an operation in the text form ("read", "write", "sample"). */
const char *wl_trace_op_name(wl_trace_op op);

/* ----------------------------------------------------------------- reader */

typedef struct wl_trace wl_trace;

/* Loads the trace in file `path` (binary or text). NULL with a message in
 * err: "<path>: offset <n>: <what>" (binary), "<path>:<line>: <what>" (text)
 * or "<path>: <what>" (cannot be read, empty). Memory: the binary encoding
 * of the trace (the text form is encoded on loading), plus O(workers). */
wl_trace *wl_trace_load(const char *path, char *err, size_t errlen);
/* The same from bytes in memory (copied); name names them in messages. */
wl_trace *wl_trace_parse(const void *data, size_t len, const char *name, char *err,
                         size_t errlen);
void wl_trace_free(wl_trace *t);

/* The tables of the trace (fills num_tables and tables). */
void wl_trace_tables(const wl_trace *t, ps_layout *layout);
uint32_t wl_trace_workers(const wl_trace *t);
/* The nodes of the recording run (workers are numbered node-major). */
uint32_t wl_trace_nodes(const wl_trace *t);
/* Steps of worker w: its records grouped by clock. */
uint64_t wl_trace_steps(const wl_trace *t, uint32_t w);
/* Keys over every record of every worker. */
uint64_t wl_trace_accesses(const wl_trace *t);
/* The most keys one record holds (room wl_trace_next needs). */
size_t wl_trace_max_record_keys(const wl_trace *t);

typedef struct {
  int64_t clock;
  wl_trace_op op;
  size_t n; /* keys, ascending (duplicates kept) */
} wl_trace_record;

/* Walks one worker's records in order. */
typedef struct {
  const uint8_t *p, *end;
  int64_t clock;
} wl_trace_cursor;

void wl_trace_cursor_init(wl_trace_cursor *c, const wl_trace *t, uint32_t w);
/* The next record, its keys into keys (room for wl_trace_max_record_keys);
 * false at the end of the worker's records. A loaded trace is checked
 * whole, so a cursor never meets a bad record. */
bool wl_trace_next(wl_trace_cursor *c, wl_trace_record *r, ps_key *keys);

/* Writes t as a binary trace to path, under a temporary name renamed once
 * complete. 0, or -1 with a message in err. */
int wl_trace_save(const wl_trace *t, const char *path, char *err, size_t errlen);

/* ----------------------------------------------------------------- writer */

typedef struct wl_trace_writer wl_trace_writer;

/* "<file>.part<rank>" (malloc'd; NULL on no memory). */
char *wl_trace_part_path(const char *file, uint32_t rank);

/* Starts the part of worker `rank` (of `workers`, on `nodes` nodes) of the
 * run whose key tables layout holds, in "<path>.tmp". NULL with a message. */
wl_trace_writer *wl_trace_writer_open(const char *path, const ps_layout *layout,
                                      uint32_t nodes, uint32_t workers, uint32_t rank,
                                      char *err, size_t errlen);
/* Appends one record (keys need not be sorted; n == 0 writes nothing).
 * Clocks must not go back. PS_OK, PS_ERR_INVAL (a clock that goes back, a key
 * in no table, or a write that failed: see wl_trace_writer_close) or
 * PS_ERR_NOMEM. */
int wl_trace_writer_record(wl_trace_writer *w, int64_t clock, wl_trace_op op,
                           const ps_key *keys, size_t n);
/* The driver's trace_step (wl_driver_env): writer is a wl_trace_writer. */
int wl_trace_writer_step(void *writer, int64_t clock, const wl_step *st,
                         const ps_key *samples, size_t n_samples);
/* Ends the part: keep renames "<path>.tmp" to path, else it is removed.
 * Frees w. 0, or -1 with a message in err (the first error of any write,
 * then nothing is kept). */
int wl_trace_writer_close(wl_trace_writer *w, bool keep, char *err, size_t errlen);

/* Joins the parts "<file>.part0" .. "<file>.part<W-1>" (W from part 0's
 * header) into file, under a temporary name renamed once complete and
 * checked, and removes the parts. 0, or -1 with a message (a part missing or
 * of another run: then the parts are left as they were). */
int wl_trace_merge(const char *file, char *err, size_t errlen);
/* Removes whatever parts of file there are ("<file>.part<r>" and their
 * ".tmp"), for r < workers. */
void wl_trace_remove_parts(const char *file, uint32_t workers);

/* ------------------------------------------------------------- statistics */

typedef struct {
  uint32_t workers, nodes; /* nodes: of the locality figure */
  uint64_t steps, accesses, reads, writes, samples;
  uint64_t table_keys;     /* keys in the trace's tables */
  uint64_t keys;           /* distinct keys accessed */
  /* Share of accesses to the hottest 0.1%, 1% and 10% of the distinct keys
   * (at least one key each). */
  double top_share[3];
  /* The Zipf exponent fitted to the head of the rank-frequency curve (see
   * TRACE.md); NAN when fewer than 3 ranks qualify. */
  double zipf_skew;
  uint64_t zipf_ranks;     /* the ranks fitted: 1 .. zipf_ranks */
  /* Share of accesses to keys that range partitioning over `nodes` nodes
   * homes on the accessing worker's node (worker w on node w*nodes/workers). */
  double locality;
  /* Reuse distance: distinct other keys a worker touched between two touches
   * of one key (a step touches each of its keys once). */
  uint64_t reuses, cold;   /* touches with and without an earlier one */
  uint64_t reuse_p50, reuse_p90, reuse_p99; /* nearest rank; 0 without reuses */
  uint64_t *rank_counts;   /* accesses of each key, descending (keys of them) */
} wl_trace_stats;

/* The statistics of t, locality for `nodes` nodes (0: the trace's). PS_OK
 * or PS_ERR_NOMEM. Memory: O(distinct keys + one worker's touches). */
int wl_trace_stats_compute(const wl_trace *t, uint32_t nodes, wl_trace_stats *out);
void wl_trace_stats_free(wl_trace_stats *s);
/* Least-squares Zipf exponent of the head of counts[n] (descending): the
 * slope of log(count) against log(rank), ranks weighted 1/rank (each decade
 * weighs the same), over the ranks whose count is at least
 * WL_TRACE_FIT_MIN_COUNT. NAN when fewer than 3 ranks qualify. */
#define WL_TRACE_FIT_MIN_COUNT 100
double wl_trace_fit_zipf(const uint64_t *counts, uint64_t n, uint64_t *ranks_used);
/* The n most accessed keys of t (hottest first, ties by key) into out;
 * returns how many (fewer when fewer keys are accessed; 0 on no memory). */
size_t wl_trace_hot_keys(const wl_trace *t, size_t n, ps_key *out);

#endif
