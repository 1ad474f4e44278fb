/*
 * pslab core, for tests only: what the core's tests call beside model/ps.h.
 *
 * Encoding messages of one's own making and numbering or sealing them as a
 * node would, reading a node's values and directory, and the operations that
 * no backend, policy or workload uses (ps_set, ps_replicate,
 * ps_drop_replicas). The core implements all of it;
 * tests/ includes this header, and so does model/ (through internal.h).
 * Library code outside model/ never does: what it needs is in model/ps.h.
 */
#ifndef PSLAB_MODEL_TESTING_H
#define PSLAB_MODEL_TESTING_H

#include "model/ps.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- messages */

/* Encodes `m` (body from m->keys/pos/values, which may be NULL when counts are
 * 0) into buf of len bytes; returns bytes written, or PS_ERR_INVAL (m or buf
 * NULL, an unknown type, values on a type without them or none on one that
 * needs them, a high flags byte, or len too short) or PS_ERR_LIMIT (more
 * than PS_MAX_OP_KEYS keys). */
long ps_msg_encode(const ps_msg *m, uint8_t *buf, size_t len);
/* The requester's float offset of key i (see ps_msg). */
uint32_t ps_msg_pos(const ps_msg *m, uint32_t i);
/* Whether messages of this type carry values (exactly those do; a POLICY
 * message may carry them, and its keys need none). */
bool ps_msg_type_has_values(int type);
/* Name of a message type ("PULL", ...), "?" when unknown. */
const char *ps_msg_type_name(int type);
/* Writes the seal of the encoded message buf[0..len) (len >=
 * PS_WIRE_HEADER_LEN) under secret with algorithm alg, as a node does once
 * it has numbered it (GMAC on a CPU without it: a zero seal, which no
 * node takes). */
void ps_msg_put_seal(uint8_t *buf, size_t len, const uint8_t secret[PS_SECRET_LEN],
                     ps_seal alg);
/* Writes dst and seq into the header of the encoded message buf (at least
 * PS_WIRE_HEADER_LEN bytes); its seal must then be written again. */
void ps_msg_put_dst_seq(uint8_t *buf, uint32_t dst, uint32_t seq);

/* ------------------------------------------------------------- channels */

/* The number this node takes next on src's channel (ps_msg.seq), for tests
 * that hand a node messages of their own making. */
uint32_t ps_node_next_seq(ps_node *node, uint32_t src);
/* The number this node takes next among src's shared messages (see the wire
 * format). */
uint32_t ps_node_next_shared(ps_node *node, uint32_t src);
/* Takes the next number of this node's channel to dst for a message the
 * node did not make (a fuzzer's, sent in order among the node's own): the
 * node's next message to dst is numbered after it. 0 when dst is no node. */
uint32_t ps_node_claim_seq(ps_node *node, uint32_t dst);
/* Sets the last number this node sent to dst (dst < the number of nodes):
 * for tests of a channel near the end of its numbers. */
void ps_node_set_sent(ps_node *node, uint32_t dst, uint32_t seq);

/* ----------------------------------------------------------- operations */

/* Overwrites the keys' values with vals (as ps_push adds them). vals is
 * copied. The codes of ps_push; also PS_ERR_INVAL for a key replicated by
 * all-reduce (ps_node_add_initial_replicas), which merges additive updates
 * only. */
int ps_set(ps_worker *w, const ps_key *keys, size_t n, const float *vals,
           size_t vals_len, ps_ticket *ticket, double now);
/* Creates replicas of keys[n] on w's node at run time, as ps_node_replicate;
 * returns as ps_localize (ticket may be NULL): the ticket completes when
 * every value has arrived. PS_OK, PS_PENDING, PS_ERR_LIMIT, PS_ERR_INVAL (on
 * a node that is not a server, or keys NULL with n > 0), PS_ERR_KEY_RANGE or
 * PS_ERR_NOMEM. */
int ps_replicate(ps_worker *w, const ps_key *keys, size_t n, ps_ticket *ticket, double now);
/* ps_node_drop_replicas from a worker's handle; never pending. Its codes. */
int ps_drop_replicas(ps_worker *w, const ps_key *keys, size_t n, double now);

/* ------------------------------------------------------- node contents */

/* Copy key k's value into out (value_len floats) if this node owns it:
 * PS_OK; PS_ERR_NOT_OWNER otherwise (also while the key is in transfer to
 * this node); PS_ERR_KEY_RANGE for a key in no table. */
int ps_node_read_owned(ps_node *node, ps_key k, float *out);
/* A replica's current value (value_len floats): PS_OK, PS_ERR_NOT_OWNER
 * when this node holds no arrived replica of k, or PS_ERR_KEY_RANGE. */
int ps_node_read_replica(ps_node *node, ps_key k, float *out);
/* Keys this node holds replicas of (arrived or arriving). */
size_t ps_node_replica_count(ps_node *node);
/* A deliberate bug, for tests of the replica check only: on this node an
 * all-reduce replica adds its own delta to its value a second time when it
 * sends it (the owner's value, and so value_sum, stay right). */
void ps_node_testing_double_count(ps_node *node, bool on);
/* The owner of k in the home's directory (call on k's home), or -1. */
int64_t ps_node_directory_owner(ps_node *node, ps_key k);

#ifdef __cplusplus
}
#endif
#endif
