/* The policy registry and the configuration of static and relocate. */
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
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
  CU_ASSERT_PTR_NULL(names[2]);
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
}

static void test_configure_bad(void) {
  static const struct {
    const char *json, *message;
  } cases[] = {
      {"[]", "expected an object, found a list"},
      {"{}", "type: expected a string"},
      {"{\"type\":\"lapse\"}", "type: expected one of \"static\", \"relocate\", found \"lapse\""},
      {"{\"type\":\"static\",\"partition\":\"round\"}",
       "partition: expected \"hash\" or \"range\", found \"round\""},
      {"{\"type\":\"static\",\"fast_local_access\":1}",
       "fast_local_access: expected true or false, found a number"},
      {"{\"type\":\"static\",\"lookahead\":3}", "lookahead: unknown field; expected one of"},
      {"{\"type\":\"relocate\",\"lookahead\":-1}",
       "lookahead: expected an integer in [1, 4000], found -1"},
      {"{\"type\":\"relocate\",\"lookahead\":2.5}", "found 2.5"},
      {"{\"type\":\"relocate\",\"fast_local_access\":false}", "fast_local_access: expected true"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ps_policy_settings s;
    char err[256];
    CU_ASSERT(configure(cases[i].json, &s, err) < 0);
    if (!strstr(err, cases[i].message))
      CU_FAIL_FATAL("message does not match");
  }
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

PSLAB_SUITE("policies", {"registry", test_registry},
            {"configure accepts good objects", test_configure_good},
            {"configure names the bad field", test_configure_bad},
            {"intent localizes only under relocate", test_intent_localizes_only_under_relocate})
