/*
 * Policies talking to each other: a node's policy instance sends another
 * node's a message of its own (PSLD's servers report their load to a
 * coordinator, which decides the moves), carried by the core like any other
 * message, in order on the pair's channel. The core reads nothing in it but
 * its length: the words and floats are the policy's.
 */
#include "model/internal.h"

int ps_node_send_policy(ps_node *node, uint32_t dst, uint64_t kind, const uint64_t *words,
                        size_t n_words, const float *floats, size_t n_floats, double now) {
  if (dst >= node->layout.num_nodes || (n_words && !words) || (n_floats && !floats))
    return PS_ERR_INVAL;
  if (n_words > PS_MAX_OP_KEYS || n_floats > PS_MAX_OP_KEYS) return PS_ERR_LIMIT;
  call_ctx c;
  ps__ctx_init(&c, node, now);
  ps__ctx_add_words(&c, dst, PS_MSG_POLICY, kind, words, n_words, floats, n_floats);
  ps__ctx_finish(&c);
  return c.error;
}

int ps__handle_policy_message(ps_node *n, const ps_msg *m, double now) {
  if (!n->policy || !n->policy->on_message || m->origin != m->src) return PS_ERR_PROTOCOL;
  return n->policy->on_message(n->policy_state, m->src, m->request, m, now);
}
