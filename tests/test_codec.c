/* The wire format: round trips, and a decoder that rejects every bad buffer. */
#include "model/testing.h"
#include "tests/unit.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t rnd(void) { return ps_splitmix64(&rng_state); }

/* Encodes a message of `type` with 3 keys into a fresh buffer. */
static uint8_t *make(int type, size_t *len) {
  static const uint64_t keys[3] = {7, 1ull << 40, 3};
  static const uint32_t pos[3] = {0, 4, 8};
  static const float vals[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  ps_msg m = {.type = (uint8_t)type, .flags = 0x34, .seq = 0x9abcdef0, .src = 2, .dst = 0x11223344,
              .origin = 5, .worker = 3, .aux = 9, .request = 0x0102030405060708ull, .key_count = 3,
              .value_floats = ps_msg_type_has_values(type) ? 12 : 0, .keys = (const uint8_t *)keys,
              .pos = (const uint8_t *)pos, .values = (const uint8_t *)vals};
  *len = ps_msg_encoded_len(m.key_count, m.value_floats);
  uint8_t *buf = malloc(*len);
  CU_ASSERT_EQUAL_FATAL(ps_msg_encode(&m, buf, *len), (long)*len);
  return buf;
}

static void test_round_trip_every_type(void) {
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    size_t len;
    uint8_t *buf = make(type, &len);
    ps_msg m;
    CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_OK);
    CU_ASSERT_EQUAL(m.type, type);
    CU_ASSERT_EQUAL(m.flags, 0x34);
    CU_ASSERT_EQUAL(m.seq, 0x9abcdef0);
    CU_ASSERT_EQUAL(m.src, 2);
    CU_ASSERT_EQUAL(m.dst, 0x11223344);
    CU_ASSERT_EQUAL(m.origin, 5);
    CU_ASSERT_EQUAL(m.worker, 3);
    CU_ASSERT_EQUAL(m.aux, 9);
    CU_ASSERT_EQUAL(m.request, 0x0102030405060708ull);
    CU_ASSERT_EQUAL(m.key_count, 3);
    CU_ASSERT_EQUAL(ps_msg_key(&m, 1), 1ull << 40);
    CU_ASSERT_EQUAL(ps_msg_pos(&m, 2), 8);
    if (ps_msg_type_has_values(type)) {
      float v[12];
      ps_msg_values(&m, 0, v, 12);
      CU_ASSERT_EQUAL(v[11], 12.0f);
    } else {
      CU_ASSERT_PTR_NULL(m.values);
    }
    CU_ASSERT_STRING_NOT_EQUAL(ps_msg_type_name(type), "?");
    free(buf);
  }
}

static void test_every_truncation_rejected(void) {
  for (int type = 1; type < PS_MSG_TYPE_END; type++) {
    size_t len;
    uint8_t *buf = make(type, &len);
    for (size_t cut = 0; cut < len; cut++) {
      /* A copy of exactly `cut` bytes, so ASan sees any over-read. */
      uint8_t *part = malloc(cut ? cut : 1);
      memcpy(part, buf, cut);
      ps_msg m;
      CU_ASSERT_EQUAL(ps_msg_decode(part, cut, &m), PS_ERR_TRUNCATED);
      free(part);
    }
    free(buf);
  }
}

static void test_oversized_and_foreign_rejected(void) {
  size_t len;
  uint8_t *buf = make(PS_MSG_PUSH, &len);
  uint8_t *big = calloc(1, len + 5);
  memcpy(big, buf, len);
  ps_msg m;
  CU_ASSERT_EQUAL(ps_msg_decode(big, len + 5, &m), PS_ERR_OVERSIZED);
  buf[0] ^= 0xff;
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_MAGIC);
  buf[0] ^= 0xff;
  buf[12] = 2; /* version 2 had no seals */
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_VERSION);
  buf[12] = PS_WIRE_VERSION;
  buf[13] = 0;
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_TYPE);
  buf[13] = PS_MSG_TYPE_END;
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_TYPE);
  buf[13] = PS_MSG_PUSH;
  buf[48] = 4; /* key count no longer matches the body length */
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_MALFORMED);
  buf[48] = 3;
  buf[13] = PS_MSG_PULL; /* a PULL carrying values */
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_MALFORMED);
  buf[13] = PS_MSG_PUSH;
  buf[51] = 0x7f; /* absurd key count */
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_LIMIT);
  buf[51] = 0;
  buf[61] = 1; /* the reserved word is not zero */
  CU_ASSERT_EQUAL(ps_msg_decode(buf, len, &m), PS_ERR_MALFORMED);
  free(big);
  free(buf);
}

/* A MOVE names keys and carries no values; a POLICY carries the policy's
 * own words and floats, in any counts (none of either, too). */
static void test_move_and_policy_messages(void) {
  uint8_t buf[256];
  uint64_t words[2] = {5, UINT64_MAX};
  uint32_t pos[2] = {0, 0};
  float floats[3] = {0.5f, -1, 3};
  ps_msg m = {.type = PS_MSG_MOVE, .src = 1, .origin = 1, .key_count = 2,
              .keys = (const uint8_t *)words, .pos = (const uint8_t *)pos, .value_floats = 3,
              .values = (const uint8_t *)floats};
  CU_ASSERT_EQUAL(ps_msg_encode(&m, buf, sizeof buf), PS_ERR_INVAL); /* no values */
  m.value_floats = 0;
  long len = ps_msg_encode(&m, buf, sizeof buf);
  CU_ASSERT_EQUAL_FATAL(len, (long)ps_msg_encoded_len(2, 0));
  ps_msg d;
  CU_ASSERT_EQUAL(ps_msg_decode(buf, (size_t)len, &d), PS_OK);
  CU_ASSERT_EQUAL(d.type, PS_MSG_MOVE);
  CU_ASSERT_PTR_NULL(d.values);
  CU_ASSERT_STRING_EQUAL(ps_msg_type_name(PS_MSG_MOVE), "MOVE");
  const size_t counts[][2] = {{2, 3}, {2, 0}, {0, 3}, {0, 0}};
  for (size_t i = 0; i < 4; i++) {
    m = (ps_msg){.type = PS_MSG_POLICY, .src = 1, .origin = 1, .request = 7,
                 .key_count = (uint32_t)counts[i][0], .keys = (const uint8_t *)words,
                 .pos = (const uint8_t *)pos, .value_floats = (uint32_t)counts[i][1],
                 .values = (const uint8_t *)floats};
    len = ps_msg_encode(&m, buf, sizeof buf);
    CU_ASSERT_EQUAL_FATAL(len, (long)ps_msg_encoded_len(m.key_count, m.value_floats));
    CU_ASSERT_EQUAL_FATAL(ps_msg_decode(buf, (size_t)len, &d), PS_OK);
    CU_ASSERT_EQUAL(d.request, 7);
    CU_ASSERT_EQUAL(d.key_count, counts[i][0]);
    if (d.key_count) CU_ASSERT_EQUAL(ps_msg_key(&d, 1), UINT64_MAX);
    CU_ASSERT_EQUAL(d.value_floats, counts[i][1]);
    if (d.value_floats) {
      float v[3];
      ps_msg_values(&d, 0, v, 3);
      CU_ASSERT_EQUAL(v[1], -1.0f);
    } else {
      CU_ASSERT_PTR_NULL(d.values);
    }
    for (size_t cut = 0; cut < (size_t)len; cut++) /* every truncation refused */
      CU_ASSERT_EQUAL(ps_msg_decode(buf, cut, &d), PS_ERR_TRUNCATED);
  }
  /* The exemption is POLICY's alone: a PUSH's keys still need values. */
  m = (ps_msg){.type = PS_MSG_PUSH, .key_count = 2, .keys = (const uint8_t *)words,
               .pos = (const uint8_t *)pos};
  CU_ASSERT_EQUAL(ps_msg_encode(&m, buf, sizeof buf), PS_ERR_INVAL);
}

static void test_encode_refuses_bad_input(void) {
  uint8_t buf[64];
  ps_msg m = {.type = PS_MSG_PULL, .value_floats = 1};
  CU_ASSERT_EQUAL(ps_msg_encode(&m, buf, sizeof buf), PS_ERR_INVAL);
  m = (ps_msg){.type = 0};
  CU_ASSERT_EQUAL(ps_msg_encode(&m, buf, sizeof buf), PS_ERR_INVAL);
  m = (ps_msg){.type = PS_MSG_PULL, .key_count = 10};
  CU_ASSERT_EQUAL(ps_msg_encode(&m, buf, sizeof buf), PS_ERR_INVAL); /* too small */
}

/* Random buffers, and valid messages with random bytes flipped: the decoder
 * returns (ASan and UBSan watch every read), and whatever it accepts has
 * counts consistent with the length. */
static void test_random_bytes_never_crash(void) {
  for (uint64_t seed = 1; seed <= 2000; seed++) {
    rng_state = seed;
    size_t len = rnd() % 200;
    uint8_t *buf = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)rnd();
    if (len >= 14 && rnd() % 2) { /* valid-looking header more often */
      buf[0] = 0x50, buf[1] = 0x53, buf[2] = 0x4c, buf[3] = 0x42;
      buf[12] = PS_WIRE_VERSION;
      buf[13] = (uint8_t)(1 + rnd() % (PS_MSG_TYPE_END - 1));
    }
    ps_msg m;
    if (ps_msg_decode(buf, len, &m) == PS_OK)
      CU_ASSERT_EQUAL(len, ps_msg_encoded_len(m.key_count, m.value_floats));
    free(buf);
  }
  for (uint64_t seed = 1; seed <= 2000; seed++) {
    rng_state = seed;
    size_t len;
    uint8_t *buf = make((int)(1 + rnd() % (PS_MSG_TYPE_END - 1)), &len);
    for (int flips = 0; flips < 3; flips++) buf[rnd() % len] ^= (uint8_t)(1 + rnd() % 255);
    ps_msg m;
    if (ps_msg_decode(buf, len, &m) == PS_OK)
      CU_ASSERT_EQUAL(len, ps_msg_encoded_len(m.key_count, m.value_floats));
    free(buf);
  }
}

static void test_strerror_covers_codes(void) {
  CU_ASSERT_STRING_EQUAL(ps_strerror(PS_OK), "ok");
  CU_ASSERT_STRING_EQUAL(ps_strerror(PS_ERR_TRUNCATED), "message truncated");
  for (int code = -1; code >= PS_ERR_MALFORMED; code--)
    CU_ASSERT_STRING_NOT_EQUAL(ps_strerror(code), "unknown status");
  CU_ASSERT_STRING_EQUAL(ps_strerror(-999), "unknown status");
}

PSLAB_SUITE("codec", {"round trip of every type", test_round_trip_every_type},
            {"every truncation is rejected", test_every_truncation_rejected},
            {"oversized and foreign messages are rejected", test_oversized_and_foreign_rejected},
            {"encode refuses bad input", test_encode_refuses_bad_input},
            {"MOVE and POLICY messages", test_move_and_policy_messages},
            {"random bytes never crash the decoder", test_random_bytes_never_crash},
            {"strerror covers every code", test_strerror_covers_codes})
