/*
 * The wire format, one for both backends: a fixed little-endian header and a
 * body of keys, positions and values. The decoder trusts nothing: every count
 * is checked against the buffer before anything is read, so truncated,
 * oversized, foreign or corrupt messages come back as an error code.
 *
 * Header (PS_WIRE_HEADER_LEN = 64 bytes, little-endian):
 *   0 magic u32 | 4 seal u64 | 12 version u8 | 13 type u8 | 14 flags u16 |
 *   16 src u32 | 20 dst u32 | 24 seq u32 | 28 origin u32 | 32 worker u32 |
 *   36 aux u32 | 40 request u64 | 48 key_count u32 | 52 value_floats u32 |
 *   56 body_len u32 | 60 zero u32
 *
 * The seal is a MAC under the run's secret of buf[12..len): everything
 * after it, in one piece, so neither side copies the message to seal or
 * check it. Two algorithms, one per run (ps_node_config.seal, the same on
 * every node; a message sealed under the other is refused as a forgery):
 *
 * - GMAC: AES-256-GCM (libsodium's, with AES-NI and PCLMUL) with no
 *   plaintext and the sealed bytes as its additional data; the seal is the
 *   first 8 bytes of the 16-byte tag. The key is the whole 32-byte secret,
 *   expanded once per node (ps_sealer). The secret was grown to 32 random
 *   bytes rather than a 32-byte key derived from 16: a derived key would
 *   hold only 128 bits of chance and need a KDF; the bytes cost nothing,
 *   and as a run seals with one algorithm only, no bytes ever key two. The cost per byte is what it is
 *   for: about 0.9 us for a 4 KB message where SipHash takes 2.2-2.5 us
 *   (bench/mac_cost), and a remote pull pays it twice (its reply sealed,
 *   then checked).
 * - SipHash-2-4 (crypto_shorthash) under the secret's first 16 bytes: any
 *   CPU, and cheaper than BLAKE2b's keyed hash on short messages.
 *
 * GMAC's nonce. GCM must never see one 12-byte nonce twice under one key
 * with different data: two such tags give away its hash key, and with it
 * every forgery. The nonce is the 12 bytes at offset 16 of the message
 * itself: src, dst, seq (so the seal covers it too). Within a run (one key:
 * the secret is drawn per run, never from the seed) no two different
 * messages are sealed with the same three:
 * - A node's message to one node (model/outbox.c, enqueue_to) has
 *   src = the sender (a receiver refuses any other: admit_msg), dst = the
 *   receiver, seq = the next number of that channel, taken from the
 *   sender's own counter as the message is sealed and never given again:
 *   the buffer is sealed only once it is queued, so a send that fails
 *   (no memory) seals nothing, and the counter never wraps (a channel
 *   refuses its 2^32nd message: PS_ERR_LIMIT). A message to every other
 *   node without env.send_shared is a copy per node, each on its own
 *   channel; a node's message to itself (if a policy made one) is on
 *   channel (id, id), which is counted like any other.
 * - A shared message (env.send_shared: one buffer for several nodes) is
 *   sealed once, with dst = PS_DST_ALL (no node's id) and seq = its number
 *   among the sender's shared messages, which has its own counter and the
 *   same bounds; every destination gets the very same bytes.
 * - A forwarded operation is a new message of the forwarding node (its own
 *   src and channel number): no buffer is ever sealed twice. A resend of a
 *   buffer (none today) would be the same bytes, hence the same tag.
 * - The backends' control messages (real/wire.c: rendezvous, collectives,
 *   pings) are not sealed with the secret; tests and fuzzers that seal
 *   messages of their own make (ps_msg_put_seal) use their own keys or take
 *   a number the node then skips (ps_node_claim_seq).
 * A receiver checks a seal under whatever nonce the message claims; a
 * forger choosing nonces learns nothing, as GCM's nonce rule binds only the
 * sealing side.
 *
 * Odds. An 8-byte SipHash seal is guessed with odds 2^-64 per try; an
 * 8-byte GMAC seal with odds of about (blocks + 1) * 2^-64 per try, blocks
 * being the forged message's 16-byte blocks: about 2^-64 per 16 bytes the
 * forger sends (2^-56 for a 4 KB message; a success would also give away
 * part of GHASH's key, Ferguson 2005). Each try costs the forger its
 * message, counted (bad_seals) and refused.
 */
#include "model/internal.h"

#include <sodium.h>
#include <string.h>

_Static_assert(crypto_aead_aes256gcm_KEYBYTES == PS_SECRET_LEN, "the secret is a GMAC key");
_Static_assert(crypto_shorthash_KEYBYTES <= PS_SECRET_LEN, "its start is a SipHash key");
_Static_assert(crypto_shorthash_KEYBYTES == sizeof(((ps_sealer *)0)->siphash_key), "");
_Static_assert(sizeof(crypto_aead_aes256gcm_state) <= sizeof(((ps_sealer *)0)->gcm_state),
               "ps_sealer holds libsodium's AES-GCM state");
_Static_assert(crypto_shorthash_BYTES == 8, "a seal is 8 bytes");
_Static_assert(crypto_aead_aes256gcm_ABYTES >= 8, "a GMAC seal is a tag's first 8 bytes");

#define SEAL_AT 4      /* the seal field */
#define SEALED_FROM 12 /* what the seal covers: buf[SEALED_FROM..len) */
#define NONCE_AT 16    /* GMAC's nonce: src, dst, seq (see above) */
_Static_assert(crypto_aead_aes256gcm_NPUBBYTES == 12, "the nonce is src, dst and seq");

/* Bodies are copied as host arrays: the wire is little-endian. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "pslab's wire format assumes a little-endian host");

/* ------------------------------------------------ little-endian helpers */

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) {
  return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* ------------------------------------------------------------ types */

static const char *const type_names[PS_MSG_TYPE_END] = {
    [PS_MSG_PULL] = "PULL",           [PS_MSG_PULL_REPLY] = "PULL_REPLY",
    [PS_MSG_PUSH] = "PUSH",           [PS_MSG_SET] = "SET",
    [PS_MSG_WRITE_ACK] = "WRITE_ACK", [PS_MSG_LOCALIZE] = "LOCALIZE",
    [PS_MSG_HANDOVER] = "HANDOVER",   [PS_MSG_TRANSFER] = "TRANSFER",
    [PS_MSG_SYNC] = "SYNC",           [PS_MSG_SYNC_REPLY] = "SYNC_REPLY",
    [PS_MSG_DELTA] = "DELTA",         [PS_MSG_INTENT] = "INTENT",
    [PS_MSG_INTENT_REPLY] = "INTENT_REPLY", [PS_MSG_CLOCK] = "CLOCK",
    [PS_MSG_REFRESH] = "REFRESH",     [PS_MSG_MOVE] = "MOVE",
    [PS_MSG_POLICY] = "POLICY",
};

const char *ps_msg_type_name(int type) {
  if (type <= 0 || type >= PS_MSG_TYPE_END) return "?";
  return type_names[type];
}

bool ps_msg_type_has_values(int type) {
  return type == PS_MSG_PULL_REPLY || type == PS_MSG_PUSH || type == PS_MSG_SET ||
         type == PS_MSG_TRANSFER || type == PS_MSG_SYNC || type == PS_MSG_SYNC_REPLY ||
         type == PS_MSG_DELTA || type == PS_MSG_REFRESH || type == PS_MSG_POLICY;
}

/* Whether keys of a message of this type must come with values: those of
 * types with values, but a POLICY's, whose keys and floats are its own. */
static bool keys_need_values(int type) {
  return ps_msg_type_has_values(type) && type != PS_MSG_POLICY;
}

/* --------------------------------------------------------- encoding */

size_t ps_msg_encoded_len(uint32_t key_count, uint32_t value_floats) {
  return PS_WIRE_HEADER_LEN + (size_t)key_count * 12 + (size_t)value_floats * 4;
}

long ps_msg_encode(const ps_msg *m, uint8_t *buf, size_t len) {
  if (!m || !buf || m->type == 0 || m->type >= PS_MSG_TYPE_END) return PS_ERR_INVAL;
  if (m->key_count > PS_MAX_OP_KEYS) return PS_ERR_LIMIT;
  if (!ps_msg_type_has_values(m->type) && m->value_floats != 0) return PS_ERR_INVAL;
  if (keys_need_values(m->type) && m->key_count > 0 && m->value_floats == 0)
    return PS_ERR_INVAL;
  if (m->flags & 0xff00) return PS_ERR_INVAL;
  size_t need = ps_msg_encoded_len(m->key_count, m->value_floats);
  if (need > len || need - PS_WIRE_HEADER_LEN > UINT32_MAX) return PS_ERR_INVAL;
  put_u32(buf + 0, PS_WIRE_MAGIC);
  put_u64(buf + SEAL_AT, 0); /* ps_msg_put_seal's, once numbered */
  buf[12] = PS_WIRE_VERSION;
  buf[13] = m->type;
  put_u16(buf + 14, m->flags);
  put_u32(buf + 16, m->src);
  put_u32(buf + 20, m->dst);
  put_u32(buf + 24, m->seq);
  put_u32(buf + 28, m->origin);
  put_u32(buf + 32, m->worker);
  put_u32(buf + 36, m->aux);
  put_u64(buf + 40, m->request);
  put_u32(buf + 48, m->key_count);
  put_u32(buf + 52, m->value_floats);
  put_u32(buf + 56, (uint32_t)(need - PS_WIRE_HEADER_LEN));
  put_u32(buf + 60, 0);
  uint8_t *p = buf + PS_WIRE_HEADER_LEN;
  if (m->key_count) {
    memcpy(p, m->keys, (size_t)m->key_count * 8);
    memcpy(p + (size_t)m->key_count * 8, m->pos, (size_t)m->key_count * 4);
  }
  if (m->value_floats)
    memcpy(p + (size_t)m->key_count * 12, m->values, (size_t)m->value_floats * 4);
  return (long)need;
}

void ps_msg_put_dst_seq(uint8_t *buf, uint32_t dst, uint32_t seq) {
  put_u32(buf + 20, dst);
  put_u32(buf + 24, seq);
}

/* ------------------------------------------------------------ seals */

bool ps_seal_gmac_available(void) {
  return sodium_init() >= 0 && crypto_aead_aes256gcm_is_available();
}

const char *ps_seal_name(ps_seal s) {
  return s == PS_SEAL_SIPHASH ? "siphash" : s == PS_SEAL_GMAC ? "gmac" : "?";
}

int ps_sealer_init(ps_sealer *s, ps_seal alg, const uint8_t secret[PS_SECRET_LEN]) {
  memset(s, 0, sizeof *s);
  s->alg = alg;
  if (alg == PS_SEAL_SIPHASH) {
    memcpy(s->siphash_key, secret, sizeof s->siphash_key);
    return PS_OK;
  }
  if (alg != PS_SEAL_GMAC || !ps_seal_gmac_available()) return PS_ERR_INVAL;
  crypto_aead_aes256gcm_beforenm((crypto_aead_aes256gcm_state *)s->gcm_state, secret);
  return PS_OK;
}

void ps_sealer_clear(ps_sealer *s) { sodium_memzero(s, sizeof *s); }

uint64_t ps_msg_seal(const uint8_t *buf, size_t len, const ps_sealer *s) {
  if (s->alg == PS_SEAL_GMAC) {
    uint8_t tag[crypto_aead_aes256gcm_ABYTES], none[1];
    crypto_aead_aes256gcm_encrypt_detached_afternm(
        none, tag, NULL, NULL, 0, buf + SEALED_FROM, len - SEALED_FROM, NULL, buf + NONCE_AT,
        (const crypto_aead_aes256gcm_state *)s->gcm_state);
    return get_u64(tag);
  }
  uint8_t tag[crypto_shorthash_BYTES];
  crypto_shorthash(tag, buf + SEALED_FROM, len - SEALED_FROM, s->siphash_key);
  return get_u64(tag);
}

void ps_msg_put_sealed(uint8_t *buf, size_t len, const ps_sealer *s) {
  put_u64(buf + SEAL_AT, ps_msg_seal(buf, len, s));
}

bool ps_msg_seal_ok(const uint8_t *buf, size_t len, const ps_sealer *s) {
  /* One 64-bit comparison: no early exit on the first wrong byte. */
  return ps_msg_seal(buf, len, s) == get_u64(buf + SEAL_AT);
}

void ps_msg_put_seal(uint8_t *buf, size_t len, const uint8_t secret[PS_SECRET_LEN],
                     ps_seal alg) {
  ps_sealer s;
  if (ps_sealer_init(&s, alg, secret) == PS_OK) ps_msg_put_sealed(buf, len, &s);
  else put_u64(buf + SEAL_AT, 0);
  ps_sealer_clear(&s);
}

/* --------------------------------------------------------- decoding */

int ps_msg_decode(const uint8_t *buf, size_t len, ps_msg *m) {
  if (!buf || !m) return PS_ERR_INVAL;
  if (len < PS_WIRE_HEADER_LEN) return PS_ERR_TRUNCATED;
  if (get_u32(buf) != PS_WIRE_MAGIC) return PS_ERR_MAGIC;
  if (buf[12] != PS_WIRE_VERSION) return PS_ERR_VERSION;
  uint8_t type = buf[13];
  if (type == 0 || type >= PS_MSG_TYPE_END) return PS_ERR_TYPE;
  uint32_t keys = get_u32(buf + 48), floats = get_u32(buf + 52);
  uint32_t body = get_u32(buf + 56);
  if (keys > PS_MAX_OP_KEYS || floats > PS_MAX_OP_KEYS * 64u) return PS_ERR_LIMIT;
  if ((uint64_t)keys * 12 + (uint64_t)floats * 4 != body) return PS_ERR_MALFORMED;
  if (len - PS_WIRE_HEADER_LEN < body) return PS_ERR_TRUNCATED;
  if (len - PS_WIRE_HEADER_LEN > body) return PS_ERR_OVERSIZED;
  if (!ps_msg_type_has_values(type) && floats != 0) return PS_ERR_MALFORMED;
  if (keys_need_values(type) && keys > 0 && floats == 0) return PS_ERR_MALFORMED;
  if (get_u16(buf + 14) & 0xff00) return PS_ERR_MALFORMED; /* reserved */
  if (get_u32(buf + 60) != 0) return PS_ERR_MALFORMED;     /* reserved */
  m->type = type;
  m->flags = get_u16(buf + 14);
  m->src = get_u32(buf + 16);
  m->dst = get_u32(buf + 20);
  m->seq = get_u32(buf + 24);
  m->origin = get_u32(buf + 28);
  m->worker = get_u32(buf + 32);
  m->aux = get_u32(buf + 36);
  m->request = get_u64(buf + 40);
  m->key_count = keys;
  m->value_floats = floats;
  m->keys = buf + PS_WIRE_HEADER_LEN;
  m->pos = m->keys + (size_t)keys * 8;
  m->values = floats ? m->pos + (size_t)keys * 4 : NULL;
  return PS_OK;
}

ps_key ps_msg_key(const ps_msg *m, uint32_t i) { return get_u64(m->keys + (size_t)i * 8); }
uint32_t ps_msg_pos(const ps_msg *m, uint32_t i) { return get_u32(m->pos + (size_t)i * 4); }

void ps_msg_values(const ps_msg *m, uint32_t from, float *out, uint32_t n) {
  /* Floats travel in the host's IEEE-754 layout, little-endian; every
   * supported host (x86-64, aarch64) is little-endian, so a copy suffices. */
  memcpy(out, m->values + (size_t)from * 4, (size_t)n * 4);
}
