/*
 * An in-memory cluster for testing the core without a network: several
 * ps_nodes whose encoded messages wait in one FIFO queue per ordered pair of
 * nodes, delivered in a seeded random order across pairs.
 */
#ifndef PSLAB_TESTS_HARNESS_H
#define PSLAB_TESTS_HARNESS_H

#include "model/ps.h"

typedef struct harness harness;

typedef struct {
  uint32_t nodes;
  uint32_t workers;            /* per node that runs workers (layout roles) */
  ps_layout layout;            /* tables, partition, roles; num_nodes is set */
  const ps_policy_ops *policy; /* may be NULL */
  const struct cJSON *policy_json;
  const ps_key *hot_keys;      /* handed to every node's config */
  size_t num_hot_keys;
  ps_policy_settings settings;
  uint64_t seed;
  bool clock_service;          /* ps_node_config.clock_service */
  const int64_t *clock_marks;  /* ps_node_config.clock_marks */
  size_t num_clock_marks;
  const ps_scale_step *scale;  /* ps_node_config.scale (the test runs the timers) */
  size_t num_scale;
  bool shared_sends;           /* env.send_shared (default: every copy through send) */
  uint32_t wrong_secret;       /* bit i: node i's secret is not the others' */
  uint32_t other_seal;         /* bit i: node i seals with the other algorithm
                                  than harness_seal() (same secret) */
} harness_config;

/* Defaults: 2 nodes, 1 worker, one table of 64 keys of length 4, hash. */
void harness_config_default(harness_config *c);
harness *harness_new(const harness_config *c);
void harness_free(harness *h);

ps_node *harness_node(harness *h, uint32_t node);
ps_worker *harness_worker(harness *h, uint32_t node, uint32_t worker);

/* Delivers one message from a random non-empty channel; false if none. */
bool harness_deliver_one(harness *h);
/* Delivers the head of the (src, dst) channel; false if it is empty. */
bool harness_deliver_from(harness *h, uint32_t src, uint32_t dst);
/* Puts buf (malloc'd; the harness frees it) at the end of the (src, dst)
 * channel as if src had sent it: delivered in order with src's own. */
void harness_inject(harness *h, uint32_t src, uint32_t dst, uint8_t *buf, size_t len);
/* A copy (malloc'd: the caller frees it) of the message at the head of the
 * (src, dst) channel, and its number given by env.send_shared (0: not a
 * shared one); false when the channel is empty. */
bool harness_peek(harness *h, uint32_t src, uint32_t dst, uint8_t **buf, size_t *len,
                  uint32_t *seq);
/* Delivers until no message is in flight; returns how many were delivered. */
uint64_t harness_drain(harness *h);
/* Delivers messages until ticket t of w completes; false if it cannot. */
bool harness_wait(harness *h, ps_worker *w, ps_ticket t);

uint64_t harness_in_flight(const harness *h);
/* Messages delivered so far, in all and of one type. */
uint64_t harness_delivered(const harness *h);
uint64_t harness_delivered_type(const harness *h, int type);
/* Decoding or handling errors seen by ps_node_recv. */
uint64_t harness_recv_errors(const harness *h);
/* The time messages are delivered at from now on (default 0). */
void harness_set_now(harness *h, double now);
/* A number from the harness's seeded generator. */
uint64_t harness_rand(harness *h);

/* The run's secret every harness node holds (ps_node_config.secret). */
const uint8_t *harness_secret(void);
/* The seal (ps_node_config.seal) of the nodes harness_new makes from now
 * on, and of harness_encode: SipHash until a test says otherwise. */
void harness_use_seal(ps_seal s);
ps_seal harness_seal(void);
/* Encodes m as a message to dst (its dst field is set to dst) and seals it
 * with harness_secret and harness_seal(), as a node of the harness would: ps_msg_encode's
 * result. A forger's message is ps_msg_encode's alone (no seal). */
long harness_encode(const ps_msg *m, uint32_t dst, uint8_t *buf, size_t len);

/* The node that owns k according to its home's directory. */
uint32_t harness_owner(harness *h, ps_key k);

#endif
