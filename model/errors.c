/* Texts for the core's status codes, from the one list in ps.h; the
 * nearness of names that messages suggest ("did you mean"). */
#include "model/ps.h"

#include <string.h>

const char *ps_strerror(int status) {
  switch (status) {
  case PS_OK: return "ok";
  case PS_PENDING: return "pending";
#define PS_ERRNO_TEXT(name, code, text) \
  case name: return text;
    PS_ERRNO_MAP(PS_ERRNO_TEXT)
#undef PS_ERRNO_TEXT
  default: return "unknown status";
  }
}

/* Levenshtein distance, one row at a time. */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  size_t row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

bool ps_near_name(const char *name, const char *known, size_t *d) {
  if (strlen(name) > 40 || strlen(known) > 40) return false;
  *d = edit_distance(name, known);
  return *d < 3;
}
