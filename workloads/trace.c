/*
 * The `trace` workload: replays a recorded access trace (workloads/TRACE.md)
 * on a cluster of any size.
 *
 * The trace is read once, in create, and kept as its compact encoding; each
 * stream decodes its records as it goes. A step of a recorded worker is its
 * records of one clock. Replayed, a step reads the keys of its read records
 * and writes those of its write records; the keys it sampled are replayed as
 * plain keys, read and written (what the driver does with samples: pulls
 * them and pushes them), because sampling management would draw other keys
 * than the ones recorded. So a replayed step draws no samples.
 *
 * Workers. Recorded worker i is replayed by run worker i mod W (W the run's
 * workers). With fewer recorded workers than W, several run workers replay
 * the same one; with more, run worker r replays recorded workers r, r + W,
 * r + 2W... one after the other. Every run worker runs steps_per_worker
 * steps (default: the longest of those sequences); a shorter one is filled
 * with empty steps (fill "empty": a clock tick that touches nothing) or by
 * replaying its sequence again from the start (fill "repeat"), a longer one
 * is cut.
 *
 * Tables come from the trace's header; the hot keys (for policies that
 * treat them apart) from the trace's own access counts. There is no math:
 * a trace holds accesses, not values.
 */
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FILL_EMPTY = 0, FILL_REPEAT = 1 } trace_fill;

typedef struct {
  wl_trace *trace;
  uint32_t run_workers; /* the run's, nodes * workers_per_node */
  uint32_t nodes;
  uint64_t steps, epochs;
  double flops;
  trace_fill fill;
  size_t max_step_keys; /* reads + samples + writes + samples of a step */
} trace_workload;

typedef struct {
  const trace_workload *tw;
  uint32_t first, stride; /* recorded workers first, first + stride, ... */
  uint32_t source;        /* the one being replayed */
  bool started;
  bool sequence_empty;    /* the worker's recorded workers hold no step */
  wl_trace_cursor cur;
  bool has_pending;       /* a record read ahead: the next step's first */
  wl_trace_record pending;
  ps_key *pending_keys;
  ps_key *writes, *samples; /* scratch: the step's write and sample keys */
  uint64_t drawn;
} trace_stream;

/* ------------------------------------------------------------ creation */

/* A step's size in a slot: reads and samples, then writes and samples. */
static size_t step_slot_keys(size_t r, size_t w, size_t s) { return r + w + 2 * s; }

/* Scans every step of every recorded worker: the largest slot a step needs,
 * and that no step is too large for one operation. */
static bool scan_steps(trace_workload *tw, const char *path, char *err, size_t errlen) {
  wl_trace *t = tw->trace;
  ps_key *keys = malloc(wl_trace_max_record_keys(t) * sizeof *keys);
  if (!keys) {
    snprintf(err, errlen, "file: out of memory");
    return false;
  }
  bool ok = true;
  for (uint32_t w = 0; ok && w < wl_trace_workers(t); w++) {
    wl_trace_cursor c;
    wl_trace_record r = {0};
    wl_trace_cursor_init(&c, t, w);
    size_t n[3] = {0, 0, 0};
    int64_t clock = -1;
    for (bool more = true; ok && more;) {
      more = wl_trace_next(&c, &r, keys);
      if (!more || r.clock != clock) { /* a step ends */
        size_t op_keys = n[0] + n[2] > n[1] + n[2] ? n[0] + n[2] : n[1] + n[2];
        if (op_keys > PS_MAX_OP_KEYS) {
          snprintf(err, errlen, "file: %s: worker %u, clock %" PRId64 ": a step of %zu keys, "
                   "more than one operation takes (%u)", path, (unsigned)w, clock, op_keys,
                   (unsigned)PS_MAX_OP_KEYS);
          ok = false;
        }
        size_t slot = step_slot_keys(n[0], n[1], n[2]);
        if (slot > tw->max_step_keys) tw->max_step_keys = slot;
        n[0] = n[1] = n[2] = 0;
        clock = r.clock;
      }
      if (more) n[r.op] += r.n;
    }
  }
  free(keys);
  return ok;
}

/* Steps run worker `rank` would replay once through: its recorded workers'. */
static uint64_t sequence_steps(const trace_workload *tw, uint32_t rank) {
  uint32_t recorded = wl_trace_workers(tw->trace);
  if (recorded <= tw->run_workers) return wl_trace_steps(tw->trace, rank % recorded);
  uint64_t sum = 0;
  for (uint32_t w = rank; w < recorded; w += tw->run_workers) sum += wl_trace_steps(tw->trace, w);
  return sum;
}

static bool trace_parse(const cJSON *json, const wl_context *ctx, trace_workload *tw,
                        char *err, size_t errlen) {
  static const char *const known[] = {"type", "file", "steps_per_worker", "fill", "epochs",
                                      "flops_per_step", "math", NULL};
  static const char *const fills[] = {"empty", "repeat", NULL};
  const uint64_t one = 1;
  const char *file;
  size_t fill;
  if (!wlj_check_fields(json, known, err, errlen) ||
      !wlj_string(json, "file", NULL, &file, err, errlen) ||
      !wlj_choice(json, "fill", fills, FILL_EMPTY, &fill, err, errlen) ||
      !wlj_uint(json, "epochs", 1, UINT64_MAX, &one, &tw->epochs, err, errlen) ||
      !wlj_number(json, "flops_per_step", 0, INFINITY, 0, &tw->flops, err, errlen))
    return false;
  tw->fill = (trace_fill)fill;
  const cJSON *math = cJSON_GetObjectItemCaseSensitive(json, "math");
  if (math && !(cJSON_IsString(math) && strcmp(math->valuestring, "none") == 0)) {
    wlj_error(err, errlen, "math", "\"none\" (a trace holds accesses, no values to compute)",
              math);
    return false;
  }
  char *path = wl_path(ctx, file);
  char why[512];
  if (!path) {
    snprintf(err, errlen, "file: out of memory");
    return false;
  }
  tw->trace = wl_trace_load(path, why, sizeof why);
  bool ok = tw->trace != NULL;
  if (!ok) snprintf(err, errlen, "file: %s", why);
  if (ok) ok = scan_steps(tw, path, err, errlen);
  uint64_t longest = 0;
  for (uint32_t r = 0; ok && r < tw->run_workers; r++) {
    uint64_t n = sequence_steps(tw, r);
    if (n > longest) longest = n;
  }
  if (ok && longest == 0) {
    snprintf(err, errlen, "file: %s: the trace has no steps to replay", path);
    ok = false;
  }
  free(path);
  if (ok && !wlj_uint(json, "steps_per_worker", 1, UINT64_MAX, &longest, &tw->steps, err,
                      errlen))
    return false;
  if (ok && tw->steps % tw->epochs != 0) {
    char expected[96];
    snprintf(expected, sizeof expected, "a divisor of steps_per_worker (%" PRIu64 ")",
             tw->steps);
    wlj_error(err, errlen, "epochs", expected,
              cJSON_GetObjectItemCaseSensitive(json, "epochs"));
    return false;
  }
  return ok;
}

static void trace_free(void *impl) {
  trace_workload *tw = impl;
  if (!tw) return;
  wl_trace_free(tw->trace);
  free(tw);
}

static void *trace_create(const cJSON *json, const wl_context *ctx, wl_info *info, char *err,
                          size_t errlen) {
  trace_workload *tw = calloc(1, sizeof *tw);
  if (!tw) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  tw->nodes = ctx->nodes;
  tw->run_workers = ctx->nodes * ctx->workers_per_node;
  if ((uint64_t)ctx->nodes * ctx->workers_per_node > UINT32_MAX) {
    snprintf(err, errlen, "expected fewer than 2^32 workers");
    free(tw);
    return NULL;
  }
  if (!trace_parse(json, ctx, tw, err, errlen)) {
    trace_free(tw);
    return NULL;
  }
  info->steps_per_worker = tw->steps;
  info->steps_per_epoch = tw->steps / tw->epochs;
  info->max_step_keys = tw->max_step_keys;
  info->samples = false;
  info->math = false;
  return tw;
}

static void trace_tables(const void *impl, ps_layout *layout) {
  const trace_workload *tw = impl;
  wl_trace_tables(tw->trace, layout);
}

static size_t trace_hot(const void *impl, size_t n, ps_key *out) {
  const trace_workload *tw = impl;
  return wl_trace_hot_keys(tw->trace, n, out);
}

/* -------------------------------------------------------------- streams */

static void trace_stream_free(void *stream) {
  trace_stream *s = stream;
  if (!s) return;
  free(s->pending_keys);
  free(s->writes);
  free(s->samples);
  free(s);
}

static void *trace_stream_new(const void *impl, uint32_t node, uint32_t worker_rank,
                              uint64_t seed) {
  (void)seed; /* a replay draws nothing */
  const trace_workload *tw = impl;
  if (node >= tw->nodes || worker_rank >= tw->run_workers) return NULL;
  trace_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->tw = tw;
  uint32_t recorded = wl_trace_workers(tw->trace);
  s->first = recorded <= tw->run_workers ? worker_rank % recorded : worker_rank;
  s->stride = recorded <= tw->run_workers ? recorded : tw->run_workers;
  s->sequence_empty = sequence_steps(tw, worker_rank) == 0;
  size_t keys = tw->max_step_keys ? tw->max_step_keys : 1;
  s->pending_keys = malloc(wl_trace_max_record_keys(tw->trace) * sizeof(ps_key));
  s->writes = malloc(keys * sizeof(ps_key));
  s->samples = malloc(keys * sizeof(ps_key));
  if (!s->pending_keys || !s->writes || !s->samples) {
    trace_stream_free(s);
    return NULL;
  }
  return s;
}

/* Reads the next record of the worker's sequence into pending (moving on to
 * its next recorded worker at the end of one). A new recorded worker starts
 * a new step: *new_source says so. false at the end of the sequence. */
static bool read_record(trace_stream *s, bool *new_source) {
  const wl_trace *t = s->tw->trace;
  uint32_t recorded = wl_trace_workers(t);
  *new_source = false;
  if (!s->started) {
    s->started = true;
    s->source = s->first;
    wl_trace_cursor_init(&s->cur, t, s->source);
    *new_source = true;
  }
  for (;;) {
    if (s->source < recorded && wl_trace_next(&s->cur, &s->pending, s->pending_keys)) {
      s->has_pending = true;
      return true;
    }
    /* With at least as many run workers, one recorded worker only. */
    if (recorded <= s->tw->run_workers || s->source + s->stride >= recorded) {
      s->source = recorded;
      return false;
    }
    s->source += s->stride;
    wl_trace_cursor_init(&s->cur, t, s->source);
    *new_source = true;
  }
}

/* Gathers the sequence's next step into slot; false at the sequence's end. */
static bool replay_step(trace_stream *s, ps_key *slot, wl_step *out) {
  bool fresh;
  if (!s->has_pending && !read_record(s, &fresh)) return false;
  int64_t clock = s->pending.clock;
  size_t n[3] = {0, 0, 0};
  ps_key *dst[3] = {slot, s->writes, s->samples};
  for (;;) {
    wl_trace_op op = s->pending.op;
    memcpy(dst[op] + n[op], s->pending_keys, s->pending.n * sizeof(ps_key));
    n[op] += s->pending.n;
    s->has_pending = false;
    if (!read_record(s, &fresh)) break;
    if (fresh || s->pending.clock != clock) break; /* the next step's first record */
  }
  /* reads, samples | writes, samples */
  size_t nr = n[0], nw = n[1], ns = n[2];
  memcpy(slot + nr, s->samples, ns * sizeof(ps_key));
  memcpy(slot + nr + ns, s->writes, nw * sizeof(ps_key));
  memcpy(slot + nr + ns + nw, s->samples, ns * sizeof(ps_key));
  out->reads = slot;
  out->n_reads = nr + ns;
  out->writes = slot + nr + ns;
  out->n_writes = nw + ns;
  return true;
}

/* Back to the start of the worker's sequence. */
static void rewind_sequence(trace_stream *s) {
  s->started = false;
  s->has_pending = false;
}

static bool trace_next_step(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  (void)items;
  trace_stream *s = stream;
  const trace_workload *tw = s->tw;
  if (s->drawn == tw->steps) return false;
  out->n_samples = 0;
  out->flops = tw->flops;
  bool got = replay_step(s, slot, out);
  if (!got && tw->fill == FILL_REPEAT && !s->sequence_empty) {
    rewind_sequence(s);
    got = replay_step(s, slot, out);
  }
  if (!got) { /* an empty step: a clock tick touching nothing */
    out->reads = out->writes = slot;
    out->n_reads = out->n_writes = 0;
  }
  s->drawn++;
  return true;
}

const wl_type wl_type_trace = {
    .name = "trace",
    .create = trace_create,
    .free = trace_free,
    .tables = trace_tables,
    .stream_new = trace_stream_new,
    .stream_free = trace_stream_free,
    .next_step = trace_next_step,
    .hot_keys = trace_hot,
};
