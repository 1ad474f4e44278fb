/*
 * libFuzzer target: arbitrary bytes into the decoder and into a live node.
 * Build: cmake -DPSLAB_FUZZ=ON -DCMAKE_C_COMPILER=clang; run with keyed
 * seeds of every type (tests/fuzz/fuzz_semantic.c writes them):
 *   ./build-fuzz/tests/fuzz_semantic --write-decode-corpus CORPUS
 *   ./build-fuzz/tests/fuzz_decode -max_total_time=60 CORPUS
 */
#include "model/testing.h"

#include <stdlib.h>
#include <string.h>

/* The run's secret of the node below (and of the inputs it seals). */
static const uint8_t secret[PS_SECRET_LEN] = "fuzzing secret!";

static void drop(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ps_node *node;
  if (!node) {
    ps_node_config c;
    ps_node_config_default(&c);
    c.id = 1;
    c.workers = 2;
    c.layout.num_tables = 2;
    c.layout.tables[0] = (ps_table){0, 100, 4};
    c.layout.tables[1] = (ps_table){1000, 10, 300};
    c.layout.num_nodes = 4;
    c.env.send = drop;
    c.clock_service = true; /* CLOCK and REFRESH reach their handlers */
    memcpy(c.secret, secret, PS_SECRET_LEN);
    node = ps_node_new(&c);
    /* Replicas of a few keys, so that DELTA, SYNC_REPLY and REFRESH find
     * copies to apply to. */
    static const ps_key replicated[] = {3, 7, 42, 1003};
    if (node) (void)ps_node_add_initial_replicas(node, replicated, 4, PS_SYNC_ALLREDUCE);
  }
  ps_msg m;
  if (ps_msg_decode(data, size, &m) == PS_OK && m.key_count)
    (void)ps_msg_key(&m, m.key_count - 1);
  uint32_t src = size ? data[size - 1] % 5 : 0;
  /* A decodable message gets the number the node takes next from src, so
   * inputs get past the channel check to the handlers' key loops (the node
   * lives across inputs; its channels' numbers move on). */
  static uint8_t buf[1 << 16];
  if (size >= PS_WIRE_HEADER_LEN && size <= sizeof buf && src < 4) {
    memcpy(buf, data, size);
    uint32_t seq = ps_node_next_seq(node, src);
    /* One input in four comes as a buffer of env.send_shared: numbered by
     * its receiver, its own number the next of src's shared messages. */
    bool shared = data[size - 2] % 4 == 0;
    if (shared) ps_msg_put_dst_seq(buf, PS_DST_ALL, ps_node_next_shared(node, src));
    else ps_msg_put_dst_seq(buf, 1, seq);
    /* Sealed as the run's nodes would, but for one input in eight: what a
     * member sends gets past the seal to the handlers and is fuzzed too. */
    if (data[size - 2] % 8 != 1) ps_msg_put_seal(buf, size, secret, PS_SEAL_SIPHASH);
    if (shared) (void)ps_node_recv_numbered(node, src, seq, buf, size, 0.0);
    else (void)ps_node_recv(node, src, buf, size, 0.0);
  } else {
    (void)ps_node_recv(node, src, data, size, 0.0);
  }
  return 0;
}
