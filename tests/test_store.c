/* The key store's tables and the layout's partitioning. */
#include "model/internal.h"
#include "tests/unit.h"

#include <stdlib.h>

/* Random inserts and removes against a plain array of flags. */
static void test_store_matches_reference(void) {
  key_store s;
  CU_ASSERT_EQUAL_FATAL(ps__store_init(&s, 4), PS_OK);
  enum { KEYS = 5000 };
  bool *present = calloc(KEYS, sizeof *present);
  uint64_t x = 12345;
  for (int i = 0; i < 200000; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    ps_key k = (x >> 33) % KEYS;
    store_stripe *st = store_stripe_of(&s, k);
    if ((x >> 20) % 3) {
      bool created;
      key_entry *e = ps__stripe_get(st, k, &created);
      CU_ASSERT_PTR_NOT_NULL_FATAL(e);
      CU_ASSERT_EQUAL(created, !present[k]);
      CU_ASSERT_EQUAL(e->key, k);
      e->owner = (uint32_t)k; /* payload survives moves */
      present[k] = true;
    } else {
      ps__stripe_remove(st, k);
      present[k] = false;
    }
  }
  size_t count = 0;
  for (ps_key k = 0; k < KEYS; k++) {
    key_entry *e = stripe_find(store_stripe_of(&s, k), k);
    CU_ASSERT_EQUAL(e != NULL, present[k]);
    if (e) CU_ASSERT_EQUAL(e->owner, (uint32_t)k);
    count += present[k];
  }
  size_t used = 0;
  for (uint32_t i = 0; i < s.num_stripes; i++) used += s.stripes[i].used;
  CU_ASSERT_EQUAL(used, count);
  free(present);
  ps__store_destroy(&s);
  CU_ASSERT_EQUAL(ps__store_init(&s, 3), PS_ERR_INVAL);
}

static ps_layout two_tables(uint32_t nodes, ps_partition p) {
  ps_layout l = {.num_tables = 2, .num_nodes = nodes, .partition = p};
  l.tables[0] = (ps_table){0, 1000, 8};
  l.tables[1] = (ps_table){5000, 200, 64};
  return l;
}

static void test_layout_lengths_and_keys(void) {
  ps_layout l = two_tables(4, PS_PARTITION_HASH);
  CU_ASSERT_EQUAL(ps_layout_check(&l), PS_OK);
  CU_ASSERT_EQUAL(ps_layout_num_keys(&l), 1200);
  CU_ASSERT_EQUAL(ps_layout_value_len(&l, 999), 8);
  CU_ASSERT_EQUAL(ps_layout_value_len(&l, 1000), 0);
  CU_ASSERT_EQUAL(ps_layout_value_len(&l, 5199), 64);
  CU_ASSERT_EQUAL(ps_layout_key_at(&l, 1000), 5000);
  ps_layout bad = l;
  bad.tables[1].first = 900; /* overlaps */
  CU_ASSERT_EQUAL(ps_layout_check(&bad), PS_ERR_INVAL);
  bad = l;
  bad.num_nodes = 0;
  CU_ASSERT_EQUAL(ps_layout_check(&bad), PS_ERR_INVAL);
}

static void test_partitions_cover_and_balance(void) {
  for (int p = 0; p < 2; p++) {
    ps_layout l = two_tables(7, p ? PS_PARTITION_RANGE : PS_PARTITION_HASH);
    uint32_t count[7] = {0}, prev = 0;
    bool monotone = true;
    for (uint64_t i = 0; i < ps_layout_num_keys(&l); i++) {
      uint32_t h = ps_layout_home(&l, ps_layout_key_at(&l, i));
      CU_ASSERT_FATAL(h < 7);
      count[h]++;
      if (h < prev) monotone = false;
      prev = h;
    }
    for (int n = 0; n < 7; n++) CU_ASSERT(count[n] > 1200 / 7 / 2);
    CU_ASSERT_EQUAL(monotone, p == 1); /* range: contiguous blocks */
  }
}

PSLAB_SUITE("store", {"store matches a reference", test_store_matches_reference},
            {"layout lengths and keys", test_layout_lengths_and_keys},
            {"partitions cover and balance", test_partitions_cover_and_balance})
