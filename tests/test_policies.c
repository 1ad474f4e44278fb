/* The policy registry and the configuration of every policy. */
#include "model/testing.h"
#include "policies/common.h"
#include "policies/keymap.h"
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Configures the policy in `text`; returns the status, message in err. */
static int configure(const char *text, ps_policy_settings *s, char *err) {
  cJSON *j = cJSON_Parse(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  const ps_policy_ops *ops;
  err[0] = 0;
  int rc = ps_policy_configure(j, &ops, s, err, 256);
  cJSON_Delete(j);
  return rc;
}

static void test_registry(void) {
  CU_ASSERT_PTR_EQUAL(ps_policy_find("static"), &ps_policy_static);
  CU_ASSERT_PTR_EQUAL(ps_policy_find("relocate"), &ps_policy_relocate);
  CU_ASSERT_PTR_NULL(ps_policy_find("nope"));
  const char *const *names = ps_policy_names();
  CU_ASSERT_STRING_EQUAL(names[0], "static");
  CU_ASSERT_STRING_EQUAL(names[3], "nups");
  CU_ASSERT_STRING_EQUAL(names[4], "adaptive");
  CU_ASSERT_STRING_EQUAL(names[5], "psld");
  CU_ASSERT_PTR_NULL(names[6]);
}

static void test_configure_good(void) {
  ps_policy_settings s;
  char err[256];
  CU_ASSERT_EQUAL(configure("{\"type\":\"static\"}", &s, err), PS_OK);
  CU_ASSERT_TRUE(s.fast_local_access);
  CU_ASSERT_EQUAL(s.partition, PS_PARTITION_HASH);
  CU_ASSERT_EQUAL(s.lookahead, 0);
  CU_ASSERT_EQUAL(configure("{\"type\":\"static\",\"partition\":\"range\","
                            "\"fast_local_access\":false}", &s, err), PS_OK);
  CU_ASSERT_FALSE(s.fast_local_access);
  CU_ASSERT_EQUAL(s.partition, PS_PARTITION_RANGE);
  CU_ASSERT_EQUAL(configure("{\"type\":\"relocate\",\"lookahead\":100}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.lookahead, 100);
  CU_ASSERT_EQUAL(configure("{\"type\":\"relocate\"}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.lookahead, 10);
  CU_ASSERT_EQUAL(configure("{\"type\":\"replicate\"}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.hot_keys, 0); /* all keys: no hot list needed */
  CU_ASSERT_EQUAL(configure("{\"type\":\"replicate\",\"hot_keys\":50,\"sync\":\"owner\","
                            "\"syncs_per_sec\":0.2,\"threshold\":0.5}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.hot_keys, 50);
  CU_ASSERT_EQUAL(configure("{\"type\":\"nups\"}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.hot_keys, 1000);
  CU_ASSERT_EQUAL(s.lookahead, 10);
  CU_ASSERT_EQUAL(configure("{\"type\":\"adaptive\"}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.lookahead, 50);
  CU_ASSERT_EQUAL(s.hot_keys, 0);
  CU_ASSERT_EQUAL(configure("{\"type\":\"adaptive\",\"window_clocks\":0,\"syncs_per_sec\":5,"
                            "\"lookahead\":20,\"partition\":\"range\"}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(s.lookahead, 20);
  CU_ASSERT_EQUAL(configure("{\"type\":\"nups\",\"sampling\":{\"scheme\":\"pool\","
                            "\"reuse\":64}}", &s, err), PS_OK);
  CU_ASSERT_EQUAL(configure("{\"type\":\"static\",\"sampling\":{\"scheme\":\"local\"}}",
                            &s, err), PS_OK);
  CU_ASSERT_FALSE(s.route_hints);
  CU_ASSERT_EQUAL(configure("{\"type\":\"psld\",\"window_s\":0.1,\"explore\":0,\"budget_Bps\":1e6,"
                            "\"blocks_per_server\":4,\"tolerance\":0,\"smoothing\":1,"
                            "\"partition\":\"range\"}", &s, err), PS_OK);
  CU_ASSERT_TRUE(s.route_hints);       /* workers go straight to where keys moved */
  CU_ASSERT_FALSE(s.keys_at_workers);  /* it moves keys among servers only */
  CU_ASSERT_EQUAL(s.partition, PS_PARTITION_RANGE);
  CU_ASSERT_EQUAL(s.lookahead, 0);
}

/* model/ps.h: configure's json may be NULL, meaning the defaults; so every
 * registered policy's configure(NULL) succeeds with the settings of
 * {"type": name}. */
static void test_configure_null_means_defaults(void) {
  for (const char *const *name = ps_policy_names(); *name; name++) {
    const ps_policy_ops *ops = ps_policy_find(*name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ops);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ops->configure);
    char text[64], err[256] = "";
    snprintf(text, sizeof text, "{\"type\":\"%s\"}", *name);
    ps_policy_settings from_null, from_type;
    ps_policy_settings_default(&from_null);
    int rc = ops->configure(NULL, &from_null, err, sizeof err);
    CU_ASSERT_EQUAL(rc, PS_OK);
    if (rc != PS_OK) fprintf(stderr, "\n  %s: configure(NULL): %s\n", *name, err);
    CU_ASSERT_EQUAL(configure(text, &from_type, err), PS_OK);
    CU_ASSERT_EQUAL(from_null.partition, from_type.partition);
    CU_ASSERT_EQUAL(from_null.fast_local_access, from_type.fast_local_access);
    CU_ASSERT_EQUAL(from_null.lookahead, from_type.lookahead);
    CU_ASSERT_EQUAL(from_null.hot_keys, from_type.hot_keys);
    CU_ASSERT_EQUAL(from_null.owner_replicas, from_type.owner_replicas);
  }
}

static void test_configure_bad(void) {
  static const struct {
    const char *json, *message;
  } cases[] = {
      {"[]", "expected an object, found a list"},
      {"{}", "type: expected a string"},
      {"{\"type\":\"lapse\"}",
       "type: expected one of \"static\", \"relocate\", \"replicate\", \"nups\", \"adaptive\", \"psld\", found \"lapse\""},
      {"{\"type\":\"psld\",\"window_s\":0}", "window_s: expected a number > 0, found 0"},
      {"{\"type\":\"psld\",\"explore\":2}", "explore: expected a share in [0, 1], found 2"},
      {"{\"type\":\"psld\",\"smoothing\":0}", "smoothing: expected a number > 0, found 0"},
      {"{\"type\":\"psld\",\"blocks_per_server\":0}",
       "blocks_per_server: expected an integer in [1, 1048576], found 0"},
      {"{\"type\":\"psld\",\"budget_Bps\":\"1GBps\"}", "budget_Bps: expected a number > 0, found a string"},
      {"{\"type\":\"psld\",\"fast_local_access\":false}", "fast_local_access: expected true"},
      {"{\"type\":\"psld\",\"lookahead\":3}", "lookahead: unknown field; expected one of"},
      {"{\"type\":\"replicate\",\"hot_keys\":\"some\"}",
       "hot_keys: expected an integer >= 1 or \"all\", found \"some\""},
      {"{\"type\":\"replicate\",\"syncs_per_sec\":-1}",
       "syncs_per_sec: expected a number >= 0, found -1"},
      {"{\"type\":\"replicate\",\"sync\":\"gossip\"}",
       "sync: expected \"allreduce\" or \"owner\", found \"gossip\""},
      {"{\"type\":\"replicate\",\"threshold\":-1}", "threshold: expected a number >= 0"},
      {"{\"type\":\"nups\",\"hot_keys\":\"all\"}", "hot_keys: expected an integer >= 1"},
      {"{\"type\":\"nups\",\"fast_local_access\":false}", "fast_local_access: unknown field"},
      {"{\"type\":\"static\",\"partition\":\"round\"}",
       "partition: expected \"hash\" or \"range\", found \"round\""},
      {"{\"type\":\"static\",\"fast_local_access\":1}",
       "fast_local_access: expected true or false, found a number"},
      {"{\"type\":\"static\",\"lookahead\":3}", "lookahead: unknown field; expected one of"},
      {"{\"type\":\"relocate\",\"lookahead\":-1}",
       "lookahead: expected an integer in [1, 4000], found -1"},
      {"{\"type\":\"relocate\",\"lookahead\":2.5}", "found 2.5"},
      {"{\"type\":\"relocate\",\"fast_local_access\":false}", "fast_local_access: expected true"},
      {"{\"type\":\"adaptive\",\"hot_keys\":10}", "hot_keys: unknown field"},
      {"{\"type\":\"nups\",\"sampling\":{\"scheme\":\"pool\",\"reuse\":0}}",
       "sampling.reuse: expected an integer in [1, "},
      {"{\"type\":\"static\",\"sampling\":{\"scheme\":\"lucky\"}}", "sampling.scheme: expected"},
      {"{\"type\":\"static\",\"sampling\":3}", "sampling: expected an object, found a number"},
      {"{\"type\":\"adaptive\",\"window_clocks\":-2}",
       "window_clocks: expected an integer in [0, 1000000], found -2"},
      {"{\"type\":\"adaptive\",\"syncs_per_sec\":0}",
       "syncs_per_sec: expected a number > 0, found 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ps_policy_settings s;
    char err[256];
    CU_ASSERT(configure(cases[i].json, &s, err) < 0);
    if (!strstr(err, cases[i].message))
      CU_FAIL_FATAL("message does not match");
  }
}

/* ----------------------------------------------------------- field tables */

/* An object with every field of the table at its default (one whose default
 * is no value, as window_clocks's "estimated", at its minimum), with "type"
 * when a policy's; sampling's with scheme "pool", which takes every field. */
static cJSON *defaults_object(const char *name, const policy_field *fields) {
  cJSON *o = cJSON_CreateObject();
  bool policy = ps_policy_find(name) != NULL;
  if (policy) cJSON_AddStringToObject(o, "type", name);
  for (const policy_field *f = fields; f->name; f++) {
    const policy_enum_value *e = f->values;
    while (e && e->name && e->code != (int)f->def) e++;
    if (f->type == FIELD_BOOL) cJSON_AddBoolToObject(o, f->name, f->def != 0);
    else if (f->type == FIELD_ENUM) cJSON_AddStringToObject(o, f->name, e->name);
    else if (f->type == FIELD_COUNT_OR_ALL && f->def == FIELD_ALL)
      cJSON_AddStringToObject(o, f->name, "all");
    else cJSON_AddNumberToObject(o, f->name, f->default_text ? f->min : f->def);
  }
  if (!policy) cJSON_ReplaceItemInObjectCaseSensitive(o, "scheme", cJSON_CreateString("pool"));
  return o;
}

/* Configures o as table `name` does: a policy object, or a sampling one. */
static int configure_as(const char *name, const cJSON *o, ps_policy_settings *s, char *err) {
  memset(s, 0, sizeof *s); /* the defaults leave replicas_per_node to the policy */
  ps_policy_settings_default(s);
  err[0] = 0;
  if (ps_policy_find(name)) return ps_policy_configure(o, NULL, s, err, 256);
  return ps_sampling_configure(o, err, 256);
}

/* Every field of every table at its default is accepted, by configure (with
 * the settings of no field at all) and by the policy's init. */
static void test_fields_at_their_defaults_are_accepted(void) {
  harness_config c;
  harness_config_default(&c);
  harness *h = harness_new(&c);
  const char *name;
  const policy_field *fields;
  for (size_t i = 0; (fields = policy_field_table(i, &name)) != NULL; i++) {
    cJSON *o = defaults_object(name, fields);
    ps_policy_settings all, none;
    char err[256];
    CU_ASSERT_EQUAL(configure_as(name, o, &all, err), PS_OK);
    if (err[0]) fprintf(stderr, "\n  %s: %s\n", name, err);
    const ps_policy_ops *ops = ps_policy_find(name);
    if (ops) {
      cJSON *type_only = cJSON_CreateObject();
      cJSON_AddStringToObject(type_only, "type", name);
      CU_ASSERT_EQUAL(configure_as(name, type_only, &none, err), PS_OK);
      cJSON_Delete(type_only);
      CU_ASSERT_EQUAL(all.partition, none.partition);
      CU_ASSERT_EQUAL(all.fast_local_access, none.fast_local_access);
      CU_ASSERT_EQUAL(all.lookahead, none.lookahead);
      CU_ASSERT_EQUAL(all.hot_keys, none.hot_keys);
      CU_ASSERT_EQUAL(all.owner_replicas, none.owner_replicas);
      CU_ASSERT_EQUAL(all.replicas_per_node, none.replicas_per_node);
      /* init sees the whole object, with the sampling configure is spared */
      cJSON_AddItemToObject(o, "sampling", defaults_object("sampling", policy_sampling_fields));
      void *state = NULL;
      CU_ASSERT_EQUAL(ops->init(harness_node(h, 0), o, &state), PS_OK);
      if (ops->free) ops->free(state);
    }
    cJSON_Delete(o);
  }
  harness_free(h);
}

/* The fields a policy reads are its table's: each of them is read (a wrong
 * value is refused by name), and every other field, of another table or of
 * none, is refused as unknown with the table's list. */
static void test_policies_read_their_tables(void) {
  const char *name, *other_name;
  const policy_field *fields, *other;
  for (size_t i = 0; (fields = policy_field_table(i, &name)) != NULL; i++) {
    bool policy = ps_policy_find(name) != NULL;
    char list[512];
    size_t off = (size_t)snprintf(list, sizeof list, "unknown field; expected one of%s",
                                  policy ? " type" : "");
    for (const policy_field *f = fields; f->name; f++)
      off += (size_t)snprintf(list + off, sizeof list - off, "%s %s",
                              f == fields && !policy ? "" : ",", f->name);
    for (size_t j = 0; (other = policy_field_table(j, &other_name)) != NULL; j++)
      for (const policy_field *f = other; f->name; f++) {
        const policy_field *mine = fields;
        while (mine->name && strcmp(mine->name, f->name) != 0) mine++;
        cJSON *o = defaults_object(name, fields);
        cJSON_DeleteItemFromObjectCaseSensitive(o, f->name);
        cJSON_AddItemToObject(o, f->name, cJSON_CreateObject());
        ps_policy_settings s;
        char err[256], want[600];
        CU_ASSERT(configure_as(name, o, &s, err) < 0);
        snprintf(want, sizeof want, "%s: %s", f->name, mine->name ? "expected " : list);
        bool ok = mine->name ? strncmp(err, want, strlen(want)) == 0 : strcmp(err, want) == 0;
        if (!ok) fprintf(stderr, "\n  %s, field %s: %s\n  wanted %s\n", name, f->name, err, want);
        CU_ASSERT_TRUE(ok);
        cJSON_Delete(o);
      }
  }
}

/* docs/policies.md carries the tables as ps_policy_fields_print prints
 * them, a row for every field. */
static void test_docs_list_the_field_tables(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/docs", unit_source_dir());
  char *doc = unit_slurp(dir, "policies.md");
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  const char *begin = "<!-- policy fields: generated by pslab policies --markdown; "
                      "tests/test_policies.c checks it -->\n";
  const char *end = "<!-- end of policy fields -->";
  char *from = strstr(doc, begin), *to = from ? strstr(from, end) : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(to);
  from += strlen(begin);
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  ps_policy_fields_print(mem, true);
  fclose(mem);
  bool same = (size_t)(to - from) == len && memcmp(from, text, len) == 0;
  if (!same)
    fprintf(stderr, "\n  docs/policies.md's policy fields differ from the field tables: "
                    "replace them with the output of `build/pslab policies --markdown`\n");
  CU_ASSERT_TRUE(same);
  const char *name;
  const policy_field *fields;
  for (size_t i = 0; (fields = policy_field_table(i, &name)) != NULL; i++)
    for (const policy_field *f = fields; f->name; f++) {
      char row[96];
      snprintf(row, sizeof row, "| `%s` |", f->name);
      CU_ASSERT_TRUE(unit_contains(text, row));
    }
  free(text);
  free(doc);
}

/* relocate answers an intent by localizing; static ignores it. */
static void test_intent_localizes_only_under_relocate(void) {
  for (int p = 0; p < 2; p++) {
    harness_config c;
    harness_config_default(&c);
    c.policy = p ? &ps_policy_relocate : &ps_policy_static;
    harness *h = harness_new(&c);
    ps_key k = 0;
    while (ps_layout_home(ps_node_layout(harness_node(h, 0)), k) != 0) k++;
    CU_ASSERT_EQUAL(ps_intent(harness_worker(h, 1, 0), &k, 1, 3, 4, 0), PS_OK);
    harness_drain(h);
    CU_ASSERT_EQUAL(harness_owner(h, k), p ? 1u : 0u);
    harness_free(h);
  }
}

/* nups: hot keys are replicas everywhere and never move; an intent on a cold
 * key localizes it; sync rounds run on the node's timer. */
static void test_nups_replicates_hot_and_relocates_cold(void) {
  cJSON *json = cJSON_Parse("{\"type\":\"nups\",\"hot_keys\":2,\"syncs_per_sec\":10}");
  harness_config c;
  harness_config_default(&c);
  c.nodes = 3;
  c.policy = &ps_policy_nups;
  c.policy_json = json;
  ps_key hot[2] = {5, 9};
  c.hot_keys = hot;
  c.num_hot_keys = 2;
  harness *h = harness_new(&c);
  ps_worker *w = harness_worker(h, 1, 0);
  ps_key cold = 20;
  while (ps_layout_home(ps_node_layout(harness_node(h, 0)), cold) == 1) cold++;
  ps_key keys[3] = {5, 9, cold};
  for (int i = 0; i < 2; i++) CU_ASSERT_EQUAL(ps_worker_key_locality(w, hot[i]), PS_KEY_LOCAL);
  CU_ASSERT_EQUAL(ps_intent(w, keys, 3, 1, 2, 0), PS_OK);
  harness_drain(h);
  CU_ASSERT_EQUAL(harness_owner(h, cold), 1u);
  CU_ASSERT_EQUAL(harness_owner(h, 5), ps_layout_home(ps_node_layout(harness_node(h, 0)), 5));
  float one[4] = {1, 1, 1, 1};
  ps_ticket t;
  CU_ASSERT_EQUAL(ps_push(w, hot, 1, one, 4, &t, 0), PS_OK); /* a replica: local */
  ps_node *n1 = harness_node(h, 1);
  CU_ASSERT_EQUAL(ps_node_next_timer(n1), 0);
  /* The timer's first call, at 0, runs no round: the first comes one
   * interval (0.1 s) in. */
  ps_node_stats st;
  ps_node_get_stats(n1, &st);
  uint64_t sent = st.messages_sent;
  ps_node_on_timer(n1, 0);
  CU_ASSERT_DOUBLE_EQUAL(ps_node_next_timer(n1), 0.1, 1e-12);
  ps_node_get_stats(n1, &st);
  CU_ASSERT_EQUAL(st.messages_sent, sent);
  CU_ASSERT_EQUAL(st.sync_rounds, 0);
  harness_drain(h);
  float v[4];
  uint32_t owner = harness_owner(h, 5);
  CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, owner), 5, v), PS_OK);
  CU_ASSERT_EQUAL(v[0], 0.0f);
  ps_node_on_timer(n1, 0.1);
  CU_ASSERT_DOUBLE_EQUAL(ps_node_next_timer(n1), 0.2, 1e-12);
  ps_node_get_stats(n1, &st);
  CU_ASSERT_EQUAL(st.sync_rounds, 1);
  harness_drain(h);
  CU_ASSERT_EQUAL(ps_node_read_owned(harness_node(h, owner), 5, v), PS_OK);
  CU_ASSERT_EQUAL(v[0], 1.0f);
  harness_free(h);
  cJSON_Delete(json);
}

/* syncs_per_step: a round each time the node's workers (2 here) have done
 * 3 steps each since the last, counted as their clocks advance, and none by
 * time; syncs_per_sec with it is refused. */
static void test_syncs_per_step(void) {
  static const char *const policies[] = {
      "{\"type\":\"replicate\",\"hot_keys\":2,\"syncs_per_step\":3}",
      "{\"type\":\"nups\",\"hot_keys\":2,\"syncs_per_step\":3}",
      "{\"type\":\"adaptive\",\"syncs_per_step\":3}"};
  for (int p = 0; p < 3; p++) {
    cJSON *json = cJSON_Parse(policies[p]);
    harness_config c;
    harness_config_default(&c);
    c.nodes = 2;
    c.workers = 2;
    CU_ASSERT_EQUAL_FATAL(ps_policy_configure(json, &c.policy, &c.settings, (char[256]){0}, 256),
                          PS_OK);
    c.policy_json = json;
    ps_key hot[2] = {5, 9};
    c.hot_keys = hot;
    c.num_hot_keys = 2;
    harness *h = harness_new(&c);
    ps_node *n0 = harness_node(h, 0);
    ps_node_on_timer(n0, 0);
    if (p < 2) CU_ASSERT_EQUAL(ps_node_next_timer(n0), INFINITY); /* none by time */
    /* adaptive takes replicas only on intents: give it one to sync. */
    if (p == 2) CU_ASSERT_EQUAL(ps_node_replicate(n0, hot, 2, 0), PS_OK);
    harness_drain(h);
    ps_node_stats st;
    uint64_t rounds[12];
    for (int i = 0; i < 12; i++) {
      ps_advance_clock(harness_worker(h, 0, (uint32_t)i % 2), 0);
      ps_node_get_stats(n0, &st);
      rounds[i] = st.sync_rounds;
    }
    /* 6 steps of the node's (3 each) per round: after steps 6 and 12. */
    for (int i = 0; i < 12; i++) CU_ASSERT_EQUAL(rounds[i], (uint64_t)(i + 1) / 6);
    ps_node_get_stats(harness_node(h, 1), &st);
    CU_ASSERT_EQUAL(st.sync_rounds, 0); /* the other node's workers did nothing */
    harness_free(h);
    cJSON_Delete(json);
  }
  cJSON *both = cJSON_Parse("{\"type\":\"nups\",\"syncs_per_sec\":5,\"syncs_per_step\":3}");
  const ps_policy_ops *ops;
  ps_policy_settings set;
  char err[256] = "";
  CU_ASSERT_EQUAL(ps_policy_configure(both, &ops, &set, err, sizeof err), PS_ERR_INVAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "syncs_per_step"));
  cJSON_Delete(both);
}

/* The policies' key map: inserts, finds, and removes (backward shift keeps
 * every other key findable, through wrap-around and growth). */
static void test_keymap(void) {
  keymap m = {0};
  for (ps_key k = 0; k < 3000; k++) {
    uint64_t *v = keymap_slot(&m, k * 7919);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    *v = k + 1;
  }
  CU_ASSERT_EQUAL(m.len, 3000);
  for (ps_key k = 0; k < 3000; k += 2) keymap_remove(&m, k * 7919);
  keymap_remove(&m, 12345678); /* absent: nothing happens */
  CU_ASSERT_EQUAL(m.len, 1500);
  for (ps_key k = 0; k < 3000; k++) {
    uint64_t *v = keymap_find(&m, k * 7919);
    if (k % 2) {
      CU_ASSERT_PTR_NOT_NULL(v);
      if (v) CU_ASSERT_EQUAL(*v, k + 1);
    } else {
      CU_ASSERT_PTR_NULL(v);
    }
  }
  keymap_free(&m);
  CU_ASSERT_PTR_NULL(keymap_find(&m, 1));
}

/* The driving contract (model/ps.h, "timers"): the due time moves only
 * when the timers run, so a backend that asks after each run of them never
 * misses one. Every policy with a timer hook, under random operations,
 * intents and deliveries from several nodes. */
static void test_due_time_moves_only_on_timer(void) {
  static const char *const policies[] = {
      "{\"type\": \"replicate\", \"hot_keys\": 8, \"syncs_per_sec\": 10}",
      "{\"type\": \"replicate\", \"sync\": \"owner\", \"hot_keys\": 8}",
      "{\"type\": \"nups\", \"hot_keys\": 8}",
      "{\"type\": \"adaptive\", \"syncs_per_sec\": 50}"};
  for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
    cJSON *json = cJSON_Parse(policies[p]);
    harness_config c;
    harness_config_default(&c);
    c.nodes = 3;
    CU_ASSERT_EQUAL_FATAL(ps_policy_configure(json, &c.policy, &c.settings, (char[256]){0}, 256),
                          PS_OK);
    c.policy_json = json;
    ps_key hot[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    c.hot_keys = hot;
    c.num_hot_keys = 8;
    c.seed = 7 + p;
    harness *h = harness_new(&c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_EQUAL(ps_node_next_timer(harness_node(h, 0)), 0); /* due at once */
    double now = 0;
    for (int round = 0; round < 20; round++) {
      double due[3];
      for (uint32_t n = 0; n < 3; n++) {
        ps_node_on_timer(harness_node(h, n), now);
        due[n] = ps_node_next_timer(harness_node(h, n));
        CU_ASSERT_TRUE(due[n] > now); /* it moved on */
      }
      for (int op = 0; op < 30; op++) {
        uint32_t n = (uint32_t)(harness_rand(h) % 3);
        ps_worker *w = harness_worker(h, n, 0);
        ps_key k = harness_rand(h) % 64;
        float v[4] = {1, 1, 1, 1}, out[4];
        ps_ticket t;
        int rc = op % 3 == 0   ? ps_push(w, &k, 1, v, 4, &t, now)
                 : op % 3 == 1 ? ps_pull(w, &k, 1, out, 4, &t, now)
                               : ps_intent(w, &k, 1, ps_worker_clock(w) + 1,
                                           ps_worker_clock(w) + 3, now);
        if (rc == PS_PENDING) harness_wait(h, w, t);
        ps_advance_clock(w, 0);
        harness_deliver_one(h);
        for (uint32_t m = 0; m < 3; m++)
          CU_ASSERT_EQUAL(ps_node_next_timer(harness_node(h, m)), due[m]);
      }
      harness_drain(h);
      for (uint32_t m = 0; m < 3; m++) CU_ASSERT_EQUAL(ps_node_next_timer(harness_node(h, m)), due[m]);
      now = due[0] > due[1] ? due[0] : due[1];
      now = now > due[2] ? now : due[2];
    }
    harness_free(h);
    cJSON_Delete(json);
  }
}

PSLAB_SUITE("policies", {"key map", test_keymap},
            {"nups replicates hot keys and relocates cold ones",
             test_nups_replicates_hot_and_relocates_cold},
            {"syncs_per_step: rounds counted in worker steps", test_syncs_per_step}, {"registry", test_registry},
            {"configure accepts good objects", test_configure_good},
            {"configure names the bad field", test_configure_bad},
            {"fields at their defaults are accepted", test_fields_at_their_defaults_are_accepted},
            {"policies read the fields of their tables", test_policies_read_their_tables},
            {"docs/policies.md lists the field tables", test_docs_list_the_field_tables},
            {"configure(NULL) means the defaults, for every policy",
             test_configure_null_means_defaults},
            {"intent localizes only under relocate", test_intent_localizes_only_under_relocate},
            {"the due time moves only when timers run", test_due_time_moves_only_on_timer})
