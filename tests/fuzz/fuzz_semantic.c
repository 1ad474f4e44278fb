/*
 * Semantic fuzzing of the core: a cluster of three nodes in one process
 * (tests/harness.h) runs legal traffic (pushes, pulls, localizes, replicas
 * and their syncs) while messages of every type are fed in among the
 * nodes' own, each numbered in order on its channel, keyed, with fields of
 * the input's choosing: what a peer that speaks the protocol but should not
 * be trusted could send. After each input every message is delivered and
 * the cluster must hold:
 *   - nothing loops: the messages in flight end within a bound;
 *   - no value lost or doubled: the values owned sum to the pushes made;
 *   - every key has exactly one owner, the one its home's directory names;
 *   - every operation of the legal traffic completed.
 * A violation aborts with what broke.
 *
 * Fed messages carry zeros where they carry values: a PUSH of zeros may be
 * applied or refused without changing the sum, so the sum still counts only
 * the legal pushes (which are not zero, so one applied twice shows). SET is
 * fed as PUSH (an overwrite the sum could not follow; its handler is
 * PUSH's). Fed messages are sealed with the run's secret, as a member's
 * would be, but LOCALIZE, HANDOVER and TRANSFER: a member that moved keys
 * behind the directory's back could lose them, so those come as an
 * outsider's, unsealed and numbered as the receiver takes next (the number
 * a real message needs), and must be refused without taking it. What a
 * pull reads is not checked: a fed PULL_REPLY for a key a pull waits for
 * completes it.
 *
 * Two builds of this file:
 *   - libFuzzer (cmake -DPSLAB_FUZZ=ON with clang): fuzz_semantic_lf. A
 *     campaign is `scripts/fuzz.sh [SECONDS]` (an hour by default): it
 *     builds the target into build-fuzz/, runs it at nice 19 on the seed
 *     corpus tests/fuzz/corpus/semantic/ (a few dozen inputs that together
 *     reach every edge a short run reached), keeps what it finds in
 *     build-fuzz/fuzz-semantic/ and merges it with the corpus there
 *     (`--merge` replaces the committed corpus by the merge). By hand:
 *     ./build-fuzz/tests/fuzz_semantic_lf -max_total_time=600 -max_len=4096
 *     NEW_DIR tests/fuzz/corpus/semantic; `fuzz_semantic --write-corpus DIR`
 *     writes a seed of every message type;
 *   - a driver of its own (every build, run by `make test`):
 *     fuzz_semantic [--runs N] [--seed S] [--seconds T] [--last FILE]
 *     [--write-corpus DIR] [FILE...] runs seeded random inputs (N of them,
 *     or for T seconds; --last keeps the one running), or replays the given
 *     files. ctest replays the corpus (fuzz_semantic_corpus); an input that
 *     broke a check (libFuzzer's crash-* file) goes into the corpus too, so
 *     that it is replayed from then on.
 */
#include "model/testing.h"
#include "tests/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NODES 3
#define KEYS 24
#define LEN 4
#define DRAIN_BOUND 200000 /* deliveries after an input; more is a loop */
#define MAX_OPS 4096       /* legal operations per input */

typedef struct {
  const uint8_t *p;
  size_t n, i;
} reader;

static bool more(const reader *r) { return r->i < r->n; }
static uint8_t u8(reader *r) { return r->i < r->n ? r->p[r->i++] : 0; }
static uint32_t u32(reader *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)u8(r) << (8 * i);
  return v;
}

static void fail(const char *what, ps_key k, double a, double b) {
  fprintf(stderr, "fuzz_semantic: %s (key %llu: %g, expected %g)\n", what,
          (unsigned long long)k, a, b);
  abort();
}

typedef struct {
  harness *h;
  double pushed; /* the legal pushes' floats, summed */
  float *bufs[MAX_OPS];
  size_t n_bufs;
  size_t ops;
} cluster;

static ps_key key_of(uint8_t b) { return (ps_key)(b % KEYS); }

static bool tracing; /* --trace: what each input does, on stderr */
#define TRACE(...) (tracing ? (void)fprintf(stderr, __VA_ARGS__) : (void)0)

/* One legal operation of worker 0 of node `node`; false when the input's
 * budget of operations is spent. */
static bool legal(cluster *c, reader *r, uint8_t op) {
  if (c->ops == MAX_OPS) return false;
  c->ops++;
  uint32_t node = u8(r) % NODES;
  ps_key k = key_of(u8(r));
  ps_worker *w = harness_worker(c->h, node, 0);
  ps_ticket t;
  int rc = PS_OK;
  switch (op) {
  case 0: { /* push: small whole numbers, so the sum is exact */
    float v = (float)(u8(r) % 7 + 1), vals[LEN] = {v, v, v, v};
    rc = ps_push(w, &k, 1, vals, LEN, &t, 0);
    if (rc == PS_OK || rc == PS_PENDING) c->pushed += (double)v * LEN;
    break;
  }
  case 1: { /* pull into a buffer that lives until the end */
    float *out = malloc(LEN * sizeof *out);
    if (!out) abort();
    c->bufs[c->n_bufs++] = out;
    rc = ps_pull(w, &k, 1, out, LEN, &t, 0);
    break;
  }
  case 2: rc = ps_localize(w, &k, 1, &t, 0); break;
  case 3: rc = ps_replicate(w, &k, 1, &t, 0); break;
  case 4: rc = ps_drop_replicas(w, &k, 1, 0); break;
  default: (void)ps_node_sync_replicas(harness_node(c->h, node), PS_SYNC_OWNER, 0, 0);
  }
  TRACE("op %u node %u key %llu -> %d\n", op, node, (unsigned long long)k, rc);
  if (rc != PS_OK && rc != PS_PENDING) fail("a legal operation was refused", k, rc, PS_OK);
  return true;
}

/* A keyed message of the input's making, fed on the (src, dst) channel in
 * order after src's own messages. */
static void feed(cluster *c, reader *r) {
  uint32_t src = u8(r) % NODES, dst = (src + 1 + u8(r) % (NODES - 1)) % NODES;
  uint8_t type = (uint8_t)(1 + u8(r) % (PS_MSG_TYPE_END - 1));
  if (type == PS_MSG_SET) type = PS_MSG_PUSH;
  uint32_t n = 1 + u8(r) % 3;
  ps_key keys[3];
  uint32_t pos[3];
  for (uint32_t i = 0; i < n; i++) {
    uint8_t b = u8(r);
    keys[i] = b == 0xff ? (ps_key)u32(r) << 8 : key_of(b); /* now and then none */
    pos[i] = u8(r) % 3 == 0 ? u32(r) : (uint32_t)(u8(r) % 4) * LEN;
  }
  float zeros[3 * LEN] = {0};
  ps_msg m = {.type = type,
              .flags = (uint16_t)(u8(r) % 4 == 0 ? u8(r) % (PS_MAX_HOPS + 2) : 0),
              .src = src,
              .origin = u8(r) % (NODES + 1), /* NODES: no such node */
              .worker = u8(r) % 3,
              .aux = u8(r) % 8 == 0 ? u32(r) : u8(r) % (NODES + 1),
              .request = u8(r) % 2 ? u8(r) % 8 : ((uint64_t)u32(r) << 32 | u32(r)),
              .key_count = n,
              .value_floats = ps_msg_type_has_values(type) ? n * LEN : 0,
              .keys = (const uint8_t *)keys,
              .pos = (const uint8_t *)pos,
              .values = (const uint8_t *)zeros};
  bool member = type != PS_MSG_LOCALIZE && type != PS_MSG_HANDOVER && type != PS_MSG_TRANSFER;
  m.seq = member ? ps_node_claim_seq(harness_node(c->h, src), dst)
                 : ps_node_next_seq(harness_node(c->h, dst), src);
  m.dst = dst;
  TRACE("feed %s %u->%u keys %llu.. origin %u worker %u aux %u request %llu hops %u\n",
        ps_msg_type_name(type), src, dst, (unsigned long long)keys[0], m.origin, m.worker,
        m.aux, (unsigned long long)m.request, m.flags);
  size_t len = ps_msg_encoded_len(m.key_count, m.value_floats);
  uint8_t *buf = malloc(len);
  if (!buf || (member ? harness_encode(&m, dst, buf, len) : ps_msg_encode(&m, buf, len)) < 0)
    abort();
  harness_inject(c->h, src, dst, buf, len);
}

/* Raw bytes into a node, numbered as nothing on its channel (they never
 * take a number a real message needs: refused before, or out of sequence). */
static void feed_raw(cluster *c, reader *r) {
  uint32_t dst = u8(r) % NODES, src = u8(r) % (NODES + 1);
  size_t len = u8(r);
  uint8_t buf[256];
  size_t got = 0;
  while (got < len && more(r)) buf[got++] = u8(r);
  if (got >= PS_WIRE_HEADER_LEN) /* a number far past the next */
    for (int i = 0; i < 4; i++) buf[24 + i] = 0xf0;
  (void)ps_node_recv(harness_node(c->h, dst), src, buf, got, 0);
}

/* After the input: everything delivered, replicas' deltas handed on, and
 * the cluster checked. */
static void settle_and_check(cluster *c) {
  uint64_t delivered = 0;
  for (uint32_t round = 0; round < 2; round++) {
    while (harness_deliver_one(c->h))
      if (++delivered > DRAIN_BOUND) fail("messages still in flight: a loop", 0, delivered, 0);
    if (round == 0)
      for (uint32_t i = 0; i < NODES; i++) ps_node_finish(harness_node(c->h, i), 0);
  }
  double owned = 0;
  for (uint32_t i = 0; i < NODES; i++) {
    double s;
    uint64_t moving;
    ps_node_owned_sum(harness_node(c->h, i), &s, &moving);
    if (moving) fail("a key still in transfer once all was delivered", 0, moving, 0);
    if (ps_worker_pending(harness_worker(c->h, i, 0)))
      fail("an operation never completed", 0, i, 0);
    owned += s;
  }
  if (owned != c->pushed) fail("the values owned do not sum to the pushes", 0, owned, c->pushed);
  for (ps_key k = 0; k < KEYS; k++) {
    uint32_t owner = harness_owner(c->h, k), owners = 0;
    float v[LEN];
    for (uint32_t i = 0; i < NODES; i++)
      if (ps_node_read_owned(harness_node(c->h, i), k, v) == PS_OK) {
        owners++;
        if (i != owner) fail("a key owned where its home's directory does not point", k, i, owner);
      }
    if (owners != 1) fail("a key without exactly one owner", k, owners, 1);
  }
}

static void run_one(const uint8_t *data, size_t size) {
  reader r = {data, size, 0};
  harness_config hc;
  harness_config_default(&hc);
  hc.nodes = NODES;
  hc.layout.tables[0] = (ps_table){0, KEYS, LEN};
  hc.seed = size ? data[0] : 1;
  cluster c = {.h = harness_new(&hc)};
  while (more(&r)) {
    uint8_t op = u8(&r) % 12;
    if (op < 6) {
      if (!legal(&c, &r, op)) break;
    } else if (op < 9) {
      for (uint32_t i = u8(&r) % 16 + 1; i > 0 && harness_deliver_one(c.h); i--) {
      }
    } else if (op < 11) {
      feed(&c, &r);
    } else {
      feed_raw(&c, &r);
    }
  }
  settle_and_check(&c);
  for (size_t i = 0; i < c.n_bufs; i++) free(c.bufs[i]);
  harness_free(c.h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  run_one(data, size);
  return 0;
}

#ifndef PSLAB_LIBFUZZER

/* Seeds: for every message type, an input that runs some legal traffic
 * and feeds one well-formed keyed message of that type. */
static size_t seed_input(int type, uint8_t *out, size_t cap) {
  const uint8_t legal_ops[] = {0, 1, 5, 3, 0, 2, 7, 1, 2, 2, 3, 0, 0, 9, 4, 1, 3, 1, 2, 4,
                               6, 3, 0, 1, 2, 1, 5, 7, 2, 1, 8, 0};
  size_t n = 0;
  for (size_t i = 0; i < sizeof legal_ops && n < cap; i++) out[n++] = legal_ops[i];
  const uint8_t fed[] = {9, (uint8_t)type, 0, (uint8_t)(type - 1), 0, 5, 1, 1, 0, 0, 0, 1, 0, 2,
                         1, 3, 7, 2};
  for (size_t i = 0; i < sizeof fed && n < cap; i++) out[n++] = fed[i];
  return n;
}

static int write_corpus(const char *dir) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz_semantic: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    uint8_t in[128];
    size_t n = seed_input(type, in, sizeof in);
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%s", dir, ps_msg_type_name(type));
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(in, 1, n, f) != n || fclose(f) != 0) {
      fprintf(stderr, "fuzz_semantic: %s: %s\n", path, strerror(errno));
      return 1;
    }
  }
  printf("fuzz_semantic: %d seeds in %s\n", PS_MSG_TYPE_END - 1, dir);
  return 0;
}

/* Writes the input about to run, so that a crash leaves it behind. */
static bool save(const char *path, const uint8_t *in, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f && fwrite(in, 1, n, f) == n && fclose(f) == 0) return true;
  fprintf(stderr, "fuzz_semantic: %s: %s\n", path, strerror(errno));
  if (f) fclose(f);
  return false;
}

/* Seeds for fuzz_decode: one encoded message of every type with keys of
 * its node's layout (keys 0..99 of 4 floats, 1000..1009 of 300), from node
 * 2 to node 1 (fuzz_decode's), which it numbers itself. */
static int write_decode_corpus(const char *dir) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz_semantic: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  static float zeros[2 * 300];
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    for (int big = 0; big < 2; big++) {
      ps_key keys[2] = {big ? 1003 : 7, big ? 1004 : 42};
      uint32_t pos[2] = {0, big ? 300 : 4};
      uint32_t len = big ? 300 : 4;
      ps_msg m = {.type = (uint8_t)type, .src = 2, .origin = 2, .aux = 3, .request = 1,
                  .key_count = 2, .seq = 1,
                  .value_floats = ps_msg_type_has_values(type) ? 2 * len : 0,
                  .keys = (const uint8_t *)keys, .pos = (const uint8_t *)pos,
                  .values = (const uint8_t *)zeros};
      static uint8_t buf[4096];
      long n = ps_msg_encode(&m, buf, sizeof buf);
      if (n <= 0) abort();
      buf[n++] = 2; /* fuzz_decode reads the sender from the last byte */
      char path[4096];
      snprintf(path, sizeof path, "%s/%s-%s", dir, ps_msg_type_name(type), big ? "300" : "4");
      if (!save(path, buf, (size_t)n)) return 1;
    }
  }
  printf("fuzz_semantic: %d decode seeds in %s\n", 2 * (PS_MSG_TYPE_END - 1), dir);
  return 0;
}

static int replay(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_semantic: %s: %s\n", path, strerror(errno));
    return 1;
  }
  static uint8_t buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  run_one(buf, n);
  return 0;
}

static void usage(FILE *to) {
  fprintf(to, "usage: fuzz_semantic [--runs N] [--seed S] [--seconds T] [--last FILE] [--trace]\n"
              "                     [--write-corpus DIR] [--write-decode-corpus DIR] [FILE...]\n"
              "Feeds a 3-node in-memory cluster legal traffic and messages of every type\n"
              "(seeded random inputs, the seeds of every type, or the given files) and\n"
              "checks after each input that nothing loops and no value is lost or doubled.\n"
              "Aborts with the broken rule (--last FILE keeps each random input there\n"
              "before it runs, to replay the one that broke; --trace tells what each\n"
              "input does); prints what it ran otherwise. --write-corpus writes this\n"
              "target's seeds for libFuzzer, --write-decode-corpus fuzz_decode's.\n");
}

int main(int argc, char **argv) {
  unsigned long long runs = 1000, seed = 1;
  double seconds = 0;
  const char *last = NULL;
  int files = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--runs") && i + 1 < argc) {
      runs = strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(a, "--seed") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(a, "--seconds") && i + 1 < argc) {
      seconds = strtod(argv[++i], NULL);
    } else if (!strcmp(a, "--trace")) {
      tracing = true;
    } else if (!strcmp(a, "--last") && i + 1 < argc) {
      last = argv[++i];
    } else if (!strcmp(a, "--write-corpus") && i + 1 < argc) {
      return write_corpus(argv[++i]);
    } else if (!strcmp(a, "--write-decode-corpus") && i + 1 < argc) {
      return write_decode_corpus(argv[++i]);
    } else if (a[0] == '-') {
      usage(stderr);
      return 2;
    } else {
      if (replay(a) != 0) return 1;
      files++;
    }
  }
  if (files) {
    printf("fuzz_semantic: %d inputs replayed, every check held\n", files);
    return 0;
  }
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    uint8_t in[128];
    run_one(in, seed_input(type, in, sizeof in));
  }
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t rng = seed, done = 0, bytes = 0;
  static uint8_t in[4096];
  for (;; done++) {
    if (seconds > 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) >= seconds)
        break;
    } else if (done == runs) {
      break;
    }
    size_t n = 16 + ps_splitmix64(&rng) % (sizeof in - 16);
    for (size_t i = 0; i < n; i++) in[i] = (uint8_t)ps_splitmix64(&rng);
    if (last && !save(last, in, n)) return 1;
    run_one(in, n);
    bytes += n;
  }
  printf("fuzz_semantic: %llu random inputs (%llu bytes, seed %llu) and %d seeds, every check "
         "held\n",
         (unsigned long long)done, (unsigned long long)bytes, seed, PS_MSG_TYPE_END - 1);
  return 0;
}

#endif
