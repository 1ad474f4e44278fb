/*
 * libFuzzer target: arbitrary bytes into the decoder and into a live node.
 * Build: cmake -DPSLAB_FUZZ=ON -DCMAKE_C_COMPILER=clang; run:
 *   ./build-fuzz/tests/fuzz_decode -max_total_time=60
 */
#include "model/ps.h"

#include <stdlib.h>

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
    node = ps_node_new(&c);
  }
  ps_msg m;
  if (ps_msg_decode(data, size, &m) == PS_OK && m.key_count)
    (void)ps_msg_key(&m, m.key_count - 1);
  uint32_t src = size ? data[size - 1] % 5 : 0;
  (void)ps_node_recv(node, src, data, size, 0.0);
  return 0;
}
