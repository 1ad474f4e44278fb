/* Runs one CUnit suite and turns its result into an exit status. */
#include "tests/unit.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

int unit_run_suite(const char *suite, const unit_test *tests, size_t n) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  CU_pSuite s = CU_add_suite(suite, NULL, NULL);
  if (!s) return 2;
  for (size_t i = 0; i < n; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return 2;
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  unsigned tests_failed = CU_get_number_of_tests_failed();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  printf("%s: %u passed, %u failed\n", suite, run - tests_failed, tests_failed);
  return failed ? 1 : 0;
}

const char *unit_source_dir(void) {
  const char *d = getenv("PSLAB_SOURCE_DIR");
  return d && *d ? d : ".";
}
