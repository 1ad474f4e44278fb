/*
 * Shared bits of the CUnit programs: each tests/test_<module>.c defines its
 * suite with PSLAB_SUITE and gets a main() that runs it and exits non-zero on
 * any failure.
 */
#ifndef PSLAB_TESTS_UNIT_H
#define PSLAB_TESTS_UNIT_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
  const char *name;
  void (*fn)(void);
} unit_test;

/* Runs the tests as one CUnit suite; returns the process exit status. */
int unit_run_suite(const char *suite, const unit_test *tests, size_t n);

#define PSLAB_SUITE(suite_name, ...)                                       \
  int main(void) {                                                         \
    static const unit_test tests_[] = {__VA_ARGS__};                       \
    return unit_run_suite(suite_name, tests_,                              \
                          sizeof tests_ / sizeof tests_[0]);               \
  }

/* Directory of the source tree (PSLAB_SOURCE_DIR, set by CTest), or ".". */
const char *unit_source_dir(void);

struct cJSON;

/* JSON written with single quotes (easier inside C strings): every ' becomes
 * a double quote, then it is parsed (a failed parse is a failed assertion,
 * NULL). Caller frees. */
struct cJSON *unit_json(const char *single_quoted);

/* A fresh directory under /tmp (caller frees the name; a failure ends the
 * test), and its removal with everything in it. */
char *unit_temp_dir(void);
void unit_remove_tree(const char *dir);
/* Writes text into dir/name (a failure ends the test). */
void unit_write(const char *dir, const char *name, const char *text);
/* The whole of dir/name, NUL-terminated (caller frees), or NULL. */
char *unit_slurp(const char *dir, const char *name);
/* Whether dir/name exists. */
bool unit_exists(const char *dir, const char *name);
/* Whether text (which may be NULL) contains needle. */
bool unit_contains(const char *text, const char *needle);

#endif
