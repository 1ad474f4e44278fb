/*
 * Quantities with units, written the way SimGrid platform files write them:
 * "10Gf" (flop/s), "10Gbps" / "125MBps" (bandwidth), "50us" (duration).
 *
 * A quantity is a plain decimal number (no sign, no hex, no inf/nan), then
 * optional spaces, then exactly one known unit: an SI prefix glued to a base
 * unit. Results are in flop/s, bytes/s and seconds; bit rates are divided by
 * 8 here so nothing downstream has to remember which one it got.
 */
#include "experiments/spec/spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  double factor;
} unit;

static const unit decimal_prefixes[] = {
    {"", 1},      {"k", 1e3},   {"M", 1e6},   {"G", 1e9},
    {"T", 1e12},  {"P", 1e15},  {"E", 1e18},  {NULL, 0},
};

static const unit bandwidth_prefixes[] = {
    {"", 1},      {"k", 1e3},   {"M", 1e6},   {"G", 1e9},
    {"T", 1e12},  {"P", 1e15},  {"E", 1e18},
    {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0}, {NULL, 0},
};

static const unit flops_bases[] = {{"f", 1}, {"flops", 1}, {NULL, 0}};
static const unit bandwidth_bases[] = {{"bps", 0.125}, {"Bps", 1}, {NULL, 0}};

/* Durations carry their own scale: no prefix table. */
static const unit duration_units[] = {
    {"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6},
    {"ms", 1e-3},  {"s", 1},     {"min", 60},  {"h", 3600}, {NULL, 0},
};

/* Reads the number at the start of s; *rest points after it and any spaces.
 * -1 unless s starts with a digit or ".digit" and the number is finite. */
static int leading_number(const char *s, double *v, const char **rest) {
  bool starts = (s[0] >= '0' && s[0] <= '9') ||
                (s[0] == '.' && s[1] >= '0' && s[1] <= '9');
  if (!starts) return -1;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return -1;
  char *end;
  *v = strtod(s, &end);
  if (!isfinite(*v)) return -1;
  while (*end == ' ') end++;
  *rest = end;
  return 0;
}

/* The factor of `text` written as prefix + base, or 0 if it is not. */
static double prefixed_factor(const char *text, const unit *prefixes,
                              const unit *bases) {
  for (size_t p = 0; prefixes[p].name; p++) {
    size_t pl = strlen(prefixes[p].name);
    if (strncmp(text, prefixes[p].name, pl) != 0) continue;
    for (size_t b = 0; bases[b].name; b++)
      if (strcmp(text + pl, bases[b].name) == 0)
        return prefixes[p].factor * bases[b].factor;
  }
  return 0;
}

static int parse_prefixed(const char *s, const unit *prefixes,
                          const unit *bases, double *out) {
  double v;
  const char *rest;
  if (leading_number(s, &v, &rest) != 0) return -1;
  double f = prefixed_factor(rest, prefixes, bases);
  if (f == 0) return -1;
  *out = v * f;
  return 0;
}

int exp_parse_flops(const char *s, double *out) {
  return parse_prefixed(s, decimal_prefixes, flops_bases, out);
}

int exp_parse_bandwidth(const char *s, double *out) {
  return parse_prefixed(s, bandwidth_prefixes, bandwidth_bases, out);
}

int exp_parse_duration(const char *s, double *out) {
  static const unit none[] = {{"", 1}, {NULL, 0}};
  return parse_prefixed(s, none, duration_units, out);
}
