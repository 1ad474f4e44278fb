/*
 * The real backend's small pieces, without processes or sockets: control
 * messages (round trips, and every truncation and corruption rejected
 * without reading past the buffer), routing ids, HOST:PORT parsing, rank and
 * size from the launcher's environment, the coordinator file.
 */
#include "model/testing.h"
#include "real/internal.h"
#include "tests/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ control */

static uint8_t *encode(uint8_t type, uint32_t seq, uint32_t size, const void *p, uint32_t len,
                       size_t *out) {
  real_ctl m = {.type = type, .rank = 3, .run = 7, .seq = seq, .size = size,
                .payload = p, .payload_len = len};
  return real_ctl_encode(&m, out);
}

static void test_control_round_trip(void) {
  size_t len;
  uint8_t *buf = encode(REAL_CTL_GATHER, 42, 4, "\x01\x02\x00\x03", 4, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
  CU_ASSERT_EQUAL(len, REAL_CTL_HEADER_LEN + 4);
  CU_ASSERT_TRUE(real_ctl_is_control(buf, len));
  real_ctl m;
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_OK);
  CU_ASSERT_EQUAL(m.type, REAL_CTL_GATHER);
  CU_ASSERT_EQUAL(m.rank, 3);
  CU_ASSERT_EQUAL(m.run, 7);
  CU_ASSERT_EQUAL(m.seq, 42);
  CU_ASSERT_EQUAL(m.size, 4);
  CU_ASSERT_EQUAL(m.payload_len, 4);
  CU_ASSERT_EQUAL(memcmp(m.payload, "\x01\x02\x00\x03", 4), 0);
  free(buf);
}

/* The core's messages of every type (MOVE and POLICY among them) are data
 * to the real backend: never taken for control messages. */
static void test_data_messages_are_not_control(void) {
  uint8_t buf[256];
  uint64_t key = 7;
  uint32_t pos = 0;
  float vals[4] = {1, 2, 3, 4};
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    bool values = ps_msg_type_has_values(type);
    ps_msg m = {.type = (uint8_t)type, .src = 1, .origin = 1, .key_count = 1,
                .keys = (const uint8_t *)&key, .pos = (const uint8_t *)&pos,
                .value_floats = values ? 4 : 0, .values = (const uint8_t *)vals};
    long len = ps_msg_encode(&m, buf, sizeof buf);
    CU_ASSERT_FATAL(len > 0);
    CU_ASSERT_FALSE(real_ctl_is_control(buf, (size_t)len));
    real_ctl c;
    CU_ASSERT_EQUAL(real_ctl_decode(buf, (size_t)len, &c), PS_ERR_MAGIC);
  }
}

/* A book: the run's secret (PS_SECRET_LEN bytes, NULs among them), then
 * the endpoints. */
static void test_book_entries(void) {
  const char book[] = "sec\0ret of 16 b\0and 16 bytes mo\0tcp://a:1\0tcp://bb:22\0tcp://ccc:333";
  _Static_assert(PS_SECRET_LEN == 32, "the book above starts with 32 bytes of secret");
  size_t len;
  uint8_t *buf = encode(REAL_CTL_BOOK, 0, 3, book, sizeof book, &len);
  real_ctl m;
  CU_ASSERT_EQUAL_FATAL(real_ctl_decode(buf, len, &m), PS_OK);
  CU_ASSERT_EQUAL(memcmp(real_ctl_book_secret(&m), book, PS_SECRET_LEN), 0);
  CU_ASSERT_STRING_EQUAL(real_ctl_book_entry(&m, 0), "tcp://a:1");
  CU_ASSERT_STRING_EQUAL(real_ctl_book_entry(&m, 2), "tcp://ccc:333");
  CU_ASSERT_PTR_NULL(real_ctl_book_entry(&m, 3));
  free(buf);
  /* A book whose strings do not match its size is malformed. */
  buf = encode(REAL_CTL_BOOK, 0, 4, book, sizeof book, &len);
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_ERR_MALFORMED);
  free(buf);
  buf = encode(REAL_CTL_BOOK, 0, 3, book, sizeof book - 1, &len); /* no final NUL */
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_ERR_MALFORMED);
  free(buf);
  buf = encode(REAL_CTL_BOOK, 0, 1, book, PS_SECRET_LEN - 1, &len); /* not even a secret */
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_ERR_MALFORMED);
  free(buf);
  /* A PING holds nothing. */
  buf = encode(REAL_CTL_PING, 0, 3, NULL, 0, &len);
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_OK);
  CU_ASSERT_EQUAL(m.type, REAL_CTL_PING);
  free(buf);
  buf = encode(REAL_CTL_PING, 0, 3, "x", 1, &len);
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_ERR_MALFORMED);
  free(buf);
  /* HELLO and ABORT hold one string, without NUL. */
  buf = encode(REAL_CTL_HELLO, 0, 3, "tcp://x\0y", 9, &len);
  CU_ASSERT_EQUAL(real_ctl_decode(buf, len, &m), PS_ERR_MALFORMED);
  free(buf);
}

/* Every prefix and every single-byte corruption of a valid message either
 * decodes to a consistent message or is rejected; never a read outside
 * (the sanitizer build checks that, on a copy of exactly the tested size). */
static void test_control_rejects_damage(void) {
  size_t len;
  uint8_t *buf = encode(REAL_CTL_ABORT, 1, 2, "node 1 is gone", 14, &len);
  real_ctl m;
  for (size_t cut = 0; cut < len; cut++) {
    uint8_t *copy = malloc(cut ? cut : 1);
    memcpy(copy, buf, cut);
    CU_ASSERT_NOT_EQUAL(real_ctl_decode(copy, cut, &m), PS_OK);
    free(copy);
  }
  uint8_t *longer = malloc(len + 1);
  memcpy(longer, buf, len);
  longer[len] = 'x';
  CU_ASSERT_EQUAL(real_ctl_decode(longer, len + 1, &m), PS_ERR_OVERSIZED);
  free(longer);
  for (size_t i = 0; i < len; i++) {
    for (int bit = 0; bit < 8; bit++) {
      uint8_t *copy = malloc(len);
      memcpy(copy, buf, len);
      copy[i] ^= (uint8_t)(1u << bit);
      if (real_ctl_decode(copy, len, &m) == PS_OK) {
        CU_ASSERT(m.type > 0 && m.type < REAL_CTL_TYPE_END);
        CU_ASSERT_EQUAL(REAL_CTL_HEADER_LEN + (size_t)m.payload_len, len);
      }
      free(copy);
    }
  }
  CU_ASSERT_FALSE(real_ctl_is_control((const uint8_t *)"PSLB", 4));
  CU_ASSERT_FALSE(real_ctl_is_control(buf, 3));
  free(buf);
}

static void test_routing_ids(void) {
  uint8_t id[REAL_ID_LEN];
  uint32_t rank, run;
  real_id_encode(5, 9, id);
  CU_ASSERT_TRUE(real_id_decode(id, sizeof id, &rank, &run));
  CU_ASSERT_EQUAL(rank, 5);
  CU_ASSERT_EQUAL(run, 9);
  CU_ASSERT_FALSE(real_id_decode(id, 5, &rank, &run)); /* e.g. ZeroMQ's own ids */
}

/* ---------------------------------------------------------- addresses */

static void test_host_port(void) {
  char host[64], err[128];
  uint32_t port;
  CU_ASSERT_EQUAL(real_split_host_port("node01:5555", host, sizeof host, &port, err,
                                       sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(host, "node01");
  CU_ASSERT_EQUAL(port, 5555);
  CU_ASSERT_EQUAL(real_split_host_port("[::1]:80", host, sizeof host, &port, err, sizeof err),
                  0);
  CU_ASSERT_STRING_EQUAL(host, "::1");
  const char *bad[] = {"node01", ":80", "h:", "h:70000", "h:-1", "h:8x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CU_ASSERT_EQUAL(real_split_host_port(bad[i], host, sizeof host, &port, err, sizeof err),
                    -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "expected HOST:PORT"));
  }
  CU_ASSERT_TRUE(real_bind_is_wildcard("*"));
  CU_ASSERT_TRUE(real_bind_is_wildcard("0.0.0.0"));
  CU_ASSERT_FALSE(real_bind_is_wildcard("127.0.0.1"));
  real_advertised_host("127.0.0.1", "anything", host, sizeof host);
  CU_ASSERT_STRING_EQUAL(host, "127.0.0.1");
  real_advertised_host("*", "127.0.0.1", host, sizeof host); /* the route to it */
  CU_ASSERT_STRING_EQUAL(host, "127.0.0.1");
}

static void clear_rank_env(void) {
  const char *names[] = {"PSLAB_RANK", "PSLAB_SIZE", "OMPI_COMM_WORLD_RANK",
                         "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
                         "SLURM_NTASKS"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unsetenv(names[i]);
}

static void test_rank_from_env(void) {
  uint32_t rank = 99, size = 99;
  char err[256];
  clear_rank_env();
  CU_ASSERT_EQUAL(real_rank_from_env(&rank, &size, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "mpirun"));
  setenv("SLURM_PROCID", "2", 1);
  setenv("SLURM_NTASKS", "4", 1);
  CU_ASSERT_EQUAL(real_rank_from_env(&rank, &size, err, sizeof err), 0);
  CU_ASSERT_EQUAL(rank, 2);
  CU_ASSERT_EQUAL(size, 4);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1); /* mpirun's win over srun's */
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  CU_ASSERT_EQUAL(real_rank_from_env(&rank, &size, err, sizeof err), 0);
  CU_ASSERT_EQUAL(rank, 1);
  CU_ASSERT_EQUAL(size, 3);
  setenv("PSLAB_RANK", "3", 1);
  setenv("PSLAB_SIZE", "3", 1); /* rank >= size */
  CU_ASSERT_EQUAL(real_rank_from_env(&rank, &size, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "PSLAB_RANK=3"));
  setenv("PSLAB_RANK", "x", 1);
  CU_ASSERT_EQUAL(real_rank_from_env(&rank, &size, err, sizeof err), -1);
  clear_rank_env();
}

static void test_coordinator_file(void) {
  char dir[] = "/tmp/pslab-coord.XXXXXX", path[128], hp[64], err[256];
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/addr", dir);
  CU_ASSERT_EQUAL(real_coordinator_file_write(path, 3, "127.0.0.1:4000", err, sizeof err), 0);
  CU_ASSERT_EQUAL(real_coordinator_file_wait(path, 3, 1, hp, sizeof hp, err, sizeof err), 0);
  CU_ASSERT_STRING_EQUAL(hp, "127.0.0.1:4000");
  /* Another run's line is not taken: the wait ends at its deadline. */
  CU_ASSERT_EQUAL(real_coordinator_file_wait(path, 4, 0.05, hp, sizeof hp, err, sizeof err),
                  -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "did not publish its address for run 4"));
  remove(path);
  rmdir(dir);
}

PSLAB_SUITE("real_wire", {"control message round trip", test_control_round_trip},
            {"data messages are not control messages", test_data_messages_are_not_control},
            {"address book entries and string checks", test_book_entries},
            {"damaged control messages are rejected", test_control_rejects_damage},
            {"routing ids", test_routing_ids},
            {"HOST:PORT and advertised hosts", test_host_port},
            {"rank and size from the environment", test_rank_from_env},
            {"coordinator file", test_coordinator_file})
