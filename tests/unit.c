/* Runs one CUnit suite and turns its result into an exit status; the small
 * file and JSON helpers several suites share. */
#include "tests/unit.h"

#include <CUnit/Basic.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int unit_run_suite(const char *suite, const unit_test *tests, size_t n) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  CU_pSuite s = CU_add_suite(suite, NULL, NULL);
  if (!s) return 2;
  /* PSLAB_TEST_ONLY: run only the tests whose name contains it (to repeat
   * one test while chasing a rare failure); none matching is an error. */
  const char *only = getenv("PSLAB_TEST_ONLY");
  size_t added = 0;
  for (size_t i = 0; i < n; i++) {
    if (only && *only && !strstr(tests[i].name, only)) continue;
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return 2;
    added++;
  }
  if (!added) {
    fprintf(stderr, "%s: no test's name contains \"%s\" (PSLAB_TEST_ONLY)\n", suite, only);
    CU_cleanup_registry();
    return 2;
  }
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

/* ---------------------------------------------------------- helpers */

cJSON *unit_json(const char *single_quoted) {
  char *t = strdup(single_quoted);
  for (char *p = t; p && *p; p++)
    if (*p == '\'') *p = '"';
  cJSON *j = t ? cJSON_Parse(t) : NULL;
  free(t);
  CU_ASSERT_PTR_NOT_NULL(j);
  return j;
}

char *unit_temp_dir(void) {
  char *dir = strdup("/tmp/pslab-test-XXXXXX");
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  return dir;
}

void unit_write(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_TRUE(fputs(text, f) >= 0);
  fclose(f);
}

void unit_remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *ent;
  while (d && (ent = readdir(d))) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      unit_remove_tree(path);
    else
      remove(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

char *unit_slurp(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  int c;
  while (mem && (c = fgetc(f)) != EOF) fputc(c, mem);
  fclose(f);
  if (mem) fclose(mem);
  return buf;
}

bool unit_exists(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

bool unit_contains(const char *text, const char *needle) { return text && strstr(text, needle); }
