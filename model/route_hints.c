/*
 * Route hints: where a worker sends the operations on keys its node does
 * not hold, when its policy asks for them (ps_policy_settings.route_hints).
 *
 * Without hints every such operation goes to the key's home, which forwards
 * it to the owner (relocation.c): every operation passes the home, so a
 * worker's operations on a key stay in order while the key moves, at the
 * price of a hop, and of the home's work, on every access to a moved key.
 * PSLD moves keys away from a slow server; with the slow server still the
 * home of its keys, every access to them would still pass it.
 *
 * A worker learns from the replies to its own operations which server
 * answered for each key, and sends its later operations on the key there
 * directly. The order of one worker's operations on a key is kept by two
 * rules:
 *   - a worker changes routes only when it has no operation outstanding:
 *     what it learns waits (`learnt`) until then, so all its operations in
 *     flight on a key took the same first hop;
 *   - a first hop that does not hold the key does what every non-owner
 *     does: queues the operation if the key is on its way there, else
 *     forwards it to the home. Operations a node forwards to the home
 *     before it asks the home for the key (its LOCALIZE follows them on the
 *     same channel) reach the old owner before the value leaves it; those
 *     that arrive after it asked queue until the value lands. So operations
 *     on one route are applied in the order they were sent, whatever moves.
 * A stale hint costs a hop (the old owner forwards), never a lost or
 * reordered operation.
 *
 * Only on nodes that hold no keys (worker-only nodes): on a server, the
 * node's own state is a route too (an operation on a key it is receiving
 * queues there), and a localize of its own would change a key's route
 * under an operation in flight on the hinted one. Servers' workers go
 * through the home as without hints.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

static size_t slot(const route_map *m, ps_key k) {
  return (size_t)ps_mix64(k ^ 0x243f6a8885a308d3ull) & (m->cap - 1);
}

static bool grow(route_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 16;
  route_entry *e = calloc(cap, sizeof *e);
  if (!e) return false;
  route_entry *old = m->e;
  size_t old_cap = m->cap;
  m->e = e;
  m->cap = cap;
  for (size_t i = 0; i < old_cap; i++) {
    if (!old[i].used) continue;
    size_t j = slot(m, old[i].key);
    while (e[j].used) j = (j + 1) & (cap - 1);
    e[j] = old[i];
  }
  free(old);
  return true;
}

int ps__route_put(route_map *m, ps_key k, uint32_t server) {
  if ((m->len + 1) * 2 > m->cap && !grow(m)) return PS_ERR_NOMEM;
  size_t i = slot(m, k);
  while (m->e[i].used && m->e[i].key != k) i = (i + 1) & (m->cap - 1);
  if (!m->e[i].used) m->len++;
  m->e[i] = (route_entry){k, server, 1};
  return PS_OK;
}

bool ps__route_get(const route_map *m, ps_key k, uint32_t *server) {
  if (!m->cap) return false;
  for (size_t i = slot(m, k); m->e[i].used; i = (i + 1) & (m->cap - 1))
    if (m->e[i].key == k) {
      *server = m->e[i].server;
      return true;
    }
  return false;
}

void ps__route_free(route_map *m) {
  free(m->e);
  *m = (route_map){0};
}

void ps__routes_learn(ps_worker *w, ps_key k, uint32_t server) {
  pthread_mutex_lock(&w->lock);
  if (ps__route_put(&w->learnt, k, server) != PS_OK) { /* no memory: a route less */
  }
  pthread_mutex_unlock(&w->lock);
}

void ps__routes_adopt(ps_worker *w) {
  pthread_mutex_lock(&w->lock);
  if (w->n_tickets == 0 && w->learnt.len) {
    for (size_t i = 0; i < w->learnt.cap; i++)
      if (w->learnt.e[i].used &&
          ps__route_put(&w->routes, w->learnt.e[i].key, w->learnt.e[i].server) != PS_OK)
        break; /* no memory: the rest go to the home, as without hints */
    memset(w->learnt.e, 0, w->learnt.cap * sizeof *w->learnt.e);
    w->learnt.len = 0;
  }
  pthread_mutex_unlock(&w->lock);
}
