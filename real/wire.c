/*
 * The control messages nodes exchange besides the core's own (rendezvous,
 * collectives, aborts), and the routing ids that name a frame's sender.
 *
 * Control messages share the transport with data messages and are told
 * apart by their magic ("PSLC" against the core's "PSLB"). Like the core's
 * decoder, this one trusts nothing: lengths are checked against the buffer
 * before anything is read, and strings must be what their type says.
 *
 * Header (REAL_CTL_HEADER_LEN = 28 bytes, little-endian):
 *   0 magic u32 | 4 type u8 | 5 zero[3] | 8 rank u32 | 12 run u32 |
 *   16 seq u32 | 20 size u32 | 24 payload_len u32
 */
#include "real/internal.h"

#include <stdlib.h>
#include <string.h>

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* ---------------------------------------------------------- routing ids */

void real_id_encode(uint32_t rank, uint32_t run, uint8_t out[REAL_ID_LEN]) {
  put_u32(out, rank);
  put_u32(out + 4, run);
}

bool real_id_decode(const uint8_t *id, size_t len, uint32_t *rank, uint32_t *run) {
  if (len != REAL_ID_LEN) return false;
  *rank = get_u32(id);
  *run = get_u32(id + 4);
  return true;
}

/* ------------------------------------------------------------- encoding */

uint8_t *real_ctl_encode(const real_ctl *m, size_t *len) {
  if (m->payload_len > REAL_CTL_MAX_PAYLOAD) return NULL;
  size_t n = REAL_CTL_HEADER_LEN + (size_t)m->payload_len;
  uint8_t *buf = malloc(n);
  if (!buf) return NULL;
  put_u32(buf, REAL_CTL_MAGIC);
  buf[4] = m->type;
  buf[5] = buf[6] = buf[7] = 0;
  put_u32(buf + 8, m->rank);
  put_u32(buf + 12, m->run);
  put_u32(buf + 16, m->seq);
  put_u32(buf + 20, m->size);
  put_u32(buf + 24, m->payload_len);
  if (m->payload_len) memcpy(buf + REAL_CTL_HEADER_LEN, m->payload, m->payload_len);
  *len = n;
  return buf;
}

/* ------------------------------------------------------------- decoding */

bool real_ctl_is_control(const uint8_t *buf, size_t len) {
  return len >= 4 && get_u32(buf) == REAL_CTL_MAGIC;
}

/* Whether p[0..len) holds exactly `count` NUL-terminated strings. */
static bool holds_strings(const uint8_t *p, uint32_t len, uint32_t count) {
  uint32_t found = 0;
  for (uint32_t i = 0; i < len; i++)
    if (p[i] == 0) found++;
  return found == count && (len == 0 || p[len - 1] == 0);
}

static int check_payload(const real_ctl *m) {
  switch (m->type) {
  case REAL_CTL_HELLO:
  case REAL_CTL_ABORT:
    /* One string, without its NUL. */
    return memchr(m->payload, 0, m->payload_len) ? PS_ERR_MALFORMED : PS_OK;
  case REAL_CTL_BOOK: /* the secret, then the endpoints */
    if (m->payload_len < PS_SECRET_LEN || m->size == 0 ||
        m->size > m->payload_len - PS_SECRET_LEN)
      return PS_ERR_MALFORMED;
    return holds_strings(m->payload + PS_SECRET_LEN, m->payload_len - PS_SECRET_LEN, m->size)
               ? PS_OK
               : PS_ERR_MALFORMED;
  case REAL_CTL_PING:
    return m->payload_len ? PS_ERR_MALFORMED : PS_OK;
  default:
    return PS_OK; /* GATHER, RELEASE: opaque bytes */
  }
}

int real_ctl_decode(const uint8_t *buf, size_t len, real_ctl *m) {
  if (!buf || len < REAL_CTL_HEADER_LEN) return PS_ERR_TRUNCATED;
  if (get_u32(buf) != REAL_CTL_MAGIC) return PS_ERR_MAGIC;
  if (buf[4] == 0 || buf[4] >= REAL_CTL_TYPE_END) return PS_ERR_TYPE;
  if (buf[5] || buf[6] || buf[7]) return PS_ERR_MALFORMED;
  uint32_t plen = get_u32(buf + 24);
  if (plen > REAL_CTL_MAX_PAYLOAD) return PS_ERR_LIMIT;
  if (len < REAL_CTL_HEADER_LEN + (size_t)plen) return PS_ERR_TRUNCATED;
  if (len > REAL_CTL_HEADER_LEN + (size_t)plen) return PS_ERR_OVERSIZED;
  *m = (real_ctl){.type = buf[4], .rank = get_u32(buf + 8), .run = get_u32(buf + 12),
                  .seq = get_u32(buf + 16), .size = get_u32(buf + 20),
                  .payload = buf + REAL_CTL_HEADER_LEN, .payload_len = plen};
  return check_payload(m);
}

const char *real_ctl_book_entry(const real_ctl *m, uint32_t i) {
  if (m->type != REAL_CTL_BOOK || i >= m->size) return NULL;
  const char *p = (const char *)m->payload + PS_SECRET_LEN;
  for (uint32_t k = 0; k < i; k++) p += strlen(p) + 1;
  return p;
}

const uint8_t *real_ctl_book_secret(const real_ctl *m) {
  return m->type == REAL_CTL_BOOK ? m->payload : NULL;
}
