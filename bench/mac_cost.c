/*
 * mac_cost: what sealing a message costs, for the keyed MACs of libsodium
 * the core could seal with, side by side in one run: GMAC (AES-256-GCM with
 * no plaintext and the message as its additional data, the AES key expanded
 * once, 16-byte tag of which the core keeps 8: model/codec.c's where the
 * CPU has AES-NI and PCLMUL), SipHash-2-4 (crypto_shorthash, 16-byte key,
 * 8-byte tag: the core's elsewhere) and keyed BLAKE2b (crypto_generichash,
 * 16-byte key and tag), over what a seal covers (a message less its magic
 * and seal fields) of the sizes the core sends: a header and one key, and
 * bodies of 100, 1000 and 16384 floats. Each round times all three on the
 * same buffer, one after the other; bench/bench.h prints medians over the
 * rounds, their spread, and the median of the rounds' ratios (GMAC and
 * SipHash against BLAKE2b, and GMAC against SipHash). Per message in ns,
 * and per byte in ns for the largest size. Without AES-NI, GMAC is left
 * out (and said so).
 *
 * Usage: mac_cost [scale] (scale multiplies the hashes timed; default 1,
 * about a second in all). Exit status 0 when every figure was measured.
 */
#include "bench/bench.h"

#include <sodium.h>

#define ROUNDS 9
#define SEALED_OFFSET 12 /* what a seal skips: the magic and the seal */

typedef int (*mac_fn)(uint8_t *tag, const uint8_t *in, size_t len, const uint8_t *key);

static int siphash(uint8_t *tag, const uint8_t *in, size_t len, const uint8_t *key) {
  return crypto_shorthash(tag, in, len, key);
}

static int blake2b(uint8_t *tag, const uint8_t *in, size_t len, const uint8_t *key) {
  return crypto_generichash(tag, 16, in, len, key, 16);
}

/* GMAC's key, expanded once as the core does (its 32-byte key drawn in
 * main); the nonce is the 12 bytes a message's src, dst and number hold. */
static crypto_aead_aes256gcm_state gcm;
#define NONCE_IN_SEALED 4

static int gmac(uint8_t *tag, const uint8_t *in, size_t len, const uint8_t *key) {
  (void)key;
  uint8_t none[1];
  return crypto_aead_aes256gcm_encrypt_detached_afternm(none, tag, NULL, NULL, 0, in, len, NULL,
                                                        in + NONCE_IN_SEALED, &gcm);
}

/* ns per hash of buf[0..len), `count` of them. */
static double time_mac(mac_fn fn, const uint8_t *buf, size_t len, const uint8_t *key,
                       long count) {
  uint8_t tag[16] = {0};
  uint64_t sink = 0;
  double t0 = bench_now();
  for (long i = 0; i < count; i++) {
    fn(tag, buf, len, key);
    sink += tag[0];
  }
  double t = bench_now() - t0;
  if (sink == UINT64_MAX) puts(""); /* keeps the loop */
  return t * 1e9 / (double)count;
}

/* One size: every MAC timed in each round; its figures printed. */
static int one_size(uint32_t floats, bool with_gmac, const uint8_t *key, double scale,
                    bool per_byte) {
  size_t len = (size_t)ps_msg_encoded_len(1, floats) - SEALED_OFFSET;
  uint8_t *buf = malloc(len);
  if (!buf) return 1;
  randombytes_buf(buf, len);
  long count = (long)(scale * 2e7 / (double)(len + 64) / ROUNDS) + 1;
  char name_gm[96], name_sip[96], name_b2[96];
  snprintf(name_gm, sizeof name_gm, "GMAC (AES-256-GCM), 1 key of %u floats (%zu B)", floats,
           len);
  snprintf(name_sip, sizeof name_sip, "SipHash-2-4, 1 key of %u floats (%zu B)", floats, len);
  snprintf(name_b2, sizeof name_b2, "BLAKE2b-128, 1 key of %u floats (%zu B)", floats, len);
  bench_fig gm = {.name = name_gm, .unit = "ns"}, sip = {.name = name_sip, .unit = "ns"},
            b2 = {.name = name_b2, .unit = "ns"};
  for (int r = 0; r < ROUNDS; r++) {
    if (with_gmac) bench_add(&gm, time_mac(gmac, buf, len, key, count));
    bench_add(&sip, time_mac(siphash, buf, len, key, count));
    bench_add(&b2, time_mac(blake2b, buf, len, key, count));
  }
  bench_print(&b2);
  bench_print_ratio(&sip, &b2, false);
  if (with_gmac) {
    bench_print_ratio(&gm, &b2, false);
    bench_print_ratio(&gm, &sip, false);
  }
  if (per_byte) {
    bench_fig gm_b = {.name = "GMAC per byte", .unit = "ns"};
    bench_fig sip_b = {.name = "SipHash-2-4 per byte", .unit = "ns"};
    bench_fig b2_b = {.name = "BLAKE2b-128 per byte", .unit = "ns"};
    for (int r = 0; r < ROUNDS; r++) {
      if (with_gmac) bench_add(&gm_b, gm.v[r] / (double)len);
      bench_add(&sip_b, sip.v[r] / (double)len);
      bench_add(&b2_b, b2.v[r] / (double)len);
    }
    bench_print(&b2_b);
    bench_print_ratio(&sip_b, &b2_b, false);
    if (with_gmac) bench_print_ratio(&gm_b, &b2_b, false);
  }
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  double scale = argc > 1 ? atof(argv[1]) : 1;
  if (!(scale > 0) || sodium_init() < 0) return 1;
  static const uint32_t floats[4] = {0, 100, 1000, 16384};
  uint8_t key[32];
  randombytes_buf(key, sizeof key);
  bool with_gmac = crypto_aead_aes256gcm_is_available();
  if (with_gmac) crypto_aead_aes256gcm_beforenm(&gcm, key);
  else puts("GMAC: left out (this CPU has no AES-NI and PCLMUL)");
  for (int s = 0; s < 4; s++)
    if (one_size(floats[s], with_gmac, key, scale, s == 3) != 0) return 1;
  return 0;
}
