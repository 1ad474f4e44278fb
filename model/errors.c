/* Texts for the core's status codes, from the one list in ps.h. */
#include "model/ps.h"

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
