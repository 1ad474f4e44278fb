/*
 * The key space: tables of contiguous keys with a value length each, the
 * nodes' roles (servers, worker nodes), and the partitioning that gives
 * every key a home server. The home keeps the key's current owner in its
 * directory; it never moves.
 */
#include "model/ps.h"
#include "model/internal.h"

int ps_layout_check(const ps_layout *l) {
  if (!l || l->num_tables == 0 || l->num_tables > PS_MAX_TABLES) return PS_ERR_INVAL;
  if (l->num_nodes == 0) return PS_ERR_INVAL;
  if (l->num_servers > l->num_nodes || l->num_worker_nodes > l->num_nodes ||
      l->num_homes > ps_layout_servers(l) ||
      (uint64_t)ps_layout_servers(l) + ps_layout_worker_nodes(l) < l->num_nodes)
    return PS_ERR_INVAL;
  if (l->partition != PS_PARTITION_HASH && l->partition != PS_PARTITION_RANGE)
    return PS_ERR_INVAL;
  for (uint32_t i = 0; i < l->num_tables; i++) {
    const ps_table *t = &l->tables[i];
    if (t->count == 0 || t->value_len == 0) return PS_ERR_INVAL;
    if (t->first + t->count < t->first) return PS_ERR_INVAL; /* wraps */
    if (i > 0) {
      const ps_table *p = &l->tables[i - 1];
      if (t->first < p->first + p->count) return PS_ERR_INVAL;
    }
  }
  return PS_OK;
}

uint32_t ps_layout_servers(const ps_layout *l) {
  return l->num_servers ? l->num_servers : l->num_nodes;
}

uint32_t ps_layout_worker_nodes(const ps_layout *l) {
  return l->num_worker_nodes ? l->num_worker_nodes : l->num_nodes;
}

uint32_t ps_layout_homes(const ps_layout *l) {
  return l->num_homes ? l->num_homes : ps_layout_servers(l);
}

bool ps_layout_is_server(const ps_layout *l, uint32_t node) {
  return node < ps_layout_servers(l);
}

uint32_t ps_layout_first_worker_node(const ps_layout *l) {
  return l->num_nodes - ps_layout_worker_nodes(l);
}

bool ps_layout_runs_workers(const ps_layout *l, uint32_t node) {
  return node >= ps_layout_first_worker_node(l) && node < l->num_nodes;
}

uint64_t ps_layout_num_keys(const ps_layout *l) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < l->num_tables; i++) n += l->tables[i].count;
  return n;
}

/* Index of the table holding k, or -1. Tables are few: a linear scan. */
static int table_of(const ps_layout *l, ps_key k) {
  for (uint32_t i = 0; i < l->num_tables; i++) {
    const ps_table *t = &l->tables[i];
    if (k >= t->first && k - t->first < t->count) return (int)i;
  }
  return -1;
}

uint32_t ps_layout_value_len(const ps_layout *l, ps_key k) {
  int t = table_of(l, k);
  return t < 0 ? 0 : l->tables[t].value_len;
}

ps_key ps_layout_key_at(const ps_layout *l, uint64_t i) {
  for (uint32_t t = 0; t < l->num_tables; t++) {
    if (i < l->tables[t].count) return l->tables[t].first + i;
    i -= l->tables[t].count;
  }
  return 0;
}

void ps_layout_homed_counts(const ps_layout *l, uint64_t *counts) {
  uint32_t homes = ps_layout_homes(l);
  for (uint32_t h = 0; h < homes; h++) counts[h] = 0;
  for (uint32_t t = 0; t < l->num_tables; t++) {
    const ps_table *tb = &l->tables[t];
    for (uint64_t i = 0; i < tb->count; i++) counts[ps_layout_home(l, tb->first + i)]++;
  }
}

uint32_t ps_layout_home(const ps_layout *l, ps_key k) {
  uint32_t homes = ps_layout_homes(l); /* nodes 0 .. homes - 1 */
  if (l->partition == PS_PARTITION_HASH)
    return (uint32_t)(ps_mix64(k) % homes);
  /* Range: the i-th key of the key space goes to block i * homes / keys. */
  uint64_t index = 0;
  for (uint32_t t = 0; t < l->num_tables; t++) {
    const ps_table *tb = &l->tables[t];
    if (k >= tb->first && k - tb->first < tb->count) {
      index += k - tb->first;
      break;
    }
    index += tb->count;
  }
  uint64_t total = ps_layout_num_keys(l);
  return (uint32_t)((unsigned __int128)index * homes / total);
}
