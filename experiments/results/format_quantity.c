/*
 * Numbers for a reader: a metric's value in engineering form with its unit
 * ("217 ms", "278 MB", "147 k steps/s", "11.9 %"), and a mean with the
 * half-width of its confidence interval in the same prefix ("217 ± 3.1 ms"),
 * for the table printed at the end. The CSV files keep exact numbers
 * (exp_format_number); these are rounded, and never written in exponent
 * form, so that a column of them reads at a glance.
 *
 * The rounding is done once, by printf's %e (three significant digits for a
 * value, two for an interval), and the prefix is chosen from the rounded
 * exponent: 999.5 rounds to 1.00e+03 and so prints as "1 k", never as
 * "1000" nor as "1e+03".
 */
#include "experiments/results/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prefixes by power of 1000, from pico (-4) to exa (6). */
static const char *const prefixes[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
enum { PREFIX_MIN = -4, PREFIX_MAX = 6 };

/* How a unit is written: "share" as a percentage; seconds with prefixes
 * down to pico (ms, us); other units only with prefixes up (0.75 of a count
 * is 0.75, not 750 m). */
typedef struct {
  const char *unit;  /* what follows the prefix: "s", "B", "%", "steps/s" */
  double scale;      /* the value is multiplied by this first */
  int lowest;        /* lowest power of 1000 used */
  bool prefixes;     /* false: no prefix at all (percentages) */
} unit_style;

static unit_style style_of(const char *unit) {
  if (!unit) unit = "";
  if (strcmp(unit, "share") == 0) return (unit_style){"%", 100, 0, false};
  if (strcmp(unit, "s") == 0) return (unit_style){"s", 1, PREFIX_MIN, true};
  return (unit_style){unit, 1, 0, true};
}

/* A number rounded to `digits` significant digits: its digits (without the
 * point) and the power of ten of the first one. */
typedef struct {
  char digits[8];
  int exp10;
  bool negative;
} rounded;

static rounded round_to(double v, int digits) {
  rounded r = {.negative = v < 0};
  char text[32];
  snprintf(text, sizeof text, "%.*e", digits - 1, fabs(v));
  size_t k = 0;
  const char *s = text;
  for (; *s && *s != 'e' && k + 1 < sizeof r.digits; s++)
    if (*s != '.') r.digits[k++] = *s;
  r.digits[k] = '\0';
  r.exp10 = *s == 'e' ? atoi(s + 1) : 0;
  return r;
}

/* The power of 1000 a rounded value is written in. */
static int power_of(const rounded *r, const unit_style *st) {
  if (!st->prefixes) return 0;
  int p = r->exp10 >= 0 ? r->exp10 / 3 : -((2 - r->exp10) / 3); /* floor(exp10 / 3) */
  if (p < st->lowest) p = st->lowest;
  if (p > PREFIX_MAX) p = PREFIX_MAX;
  return p;
}

/* Writes r scaled by 1000^-power as a plain decimal, trailing zeros of the
 * fraction dropped: digits "217" with exp10 -1 at power -1 give "217". */
static void write_plain(const rounded *r, int power, char *buf, size_t n) {
  if (strspn(r->digits, "0") == strlen(r->digits)) { /* zero, in any prefix */
    snprintf(buf, n, "0");
    return;
  }
  int point = r->exp10 - 3 * power + 1; /* digits before the decimal point */
  int len = (int)strlen(r->digits);
  size_t k = 0;
  char out[700]; /* room for every double: |exp10| <= 324 */
  if (r->negative) out[k++] = '-';
  if (point <= 0) {
    out[k++] = '0';
    out[k++] = '.';
    for (int i = 0; i < -point; i++) out[k++] = '0';
  }
  for (int i = 0; i < len || i < point; i++) {
    if (i == point && point > 0) out[k++] = '.';
    out[k++] = i < len ? r->digits[i] : '0';
  }
  out[k] = '\0';
  if (strchr(out, '.')) { /* 2.50 -> 2.5, 3.00 -> 3 */
    while (k > 0 && out[k - 1] == '0') out[--k] = '\0';
    if (k > 0 && out[k - 1] == '.') out[--k] = '\0';
  }
  snprintf(buf, n, "%s", out);
}

/* " ms", " MB", " %", " k steps/s", " k", or "" for a plain count. A
 * prefix joins a unit symbol (s, B) but not a unit written as a word: "147
 * ksteps/s" would read as one strange unit. */
static void write_suffix(const unit_style *st, int power, char *buf, size_t n) {
  const char *prefix = st->prefixes ? prefixes[power - PREFIX_MIN] : "";
  bool symbol = strcmp(st->unit, "s") == 0 || strcmp(st->unit, "B") == 0;
  const char *gap = *prefix && *st->unit && !symbol ? " " : "";
  if (*prefix || *st->unit)
    snprintf(buf, n, " %s%s%s", prefix, gap, st->unit);
  else if (n)
    buf[0] = '\0';
}

/* NaN and infinities: "-" (nothing to show), "inf", "-inf". */
static bool write_special(double v, char *buf, size_t n) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else if (isinf(v))
    snprintf(buf, n, v > 0 ? "inf" : "-inf");
  else
    return false;
  return true;
}

void exp_format_quantity(double v, const char *unit, char *buf, size_t n) {
  if (write_special(v, buf, n)) return;
  unit_style st = style_of(unit);
  rounded r = round_to(v * st.scale, 3);
  int power = power_of(&r, &st);
  char num[700], suffix[48];
  write_plain(&r, power, num, sizeof num);
  write_suffix(&st, power, suffix, sizeof suffix);
  snprintf(buf, n, "%s%s", num, suffix);
}

void exp_format_interval(double mean, double half, const char *unit, char *buf,
                         size_t n) {
  if (isnan(half) || isinf(half) || isnan(mean) || isinf(mean)) {
    exp_format_quantity(mean, unit, buf, n);
    return;
  }
  unit_style st = style_of(unit);
  rounded m = round_to(mean * st.scale, 3), h = round_to(fabs(half) * st.scale, 2);
  /* The prefix of the larger of the two, so that "0 ± 3.1 ms" stays in ms. */
  bool half_larger = fabs(half) > fabs(mean);
  int power = power_of(half_larger ? &h : &m, &st);
  char num[700], pm[700], suffix[48];
  write_plain(&m, power, num, sizeof num);
  write_plain(&h, power, pm, sizeof pm);
  write_suffix(&st, power, suffix, sizeof suffix);
  snprintf(buf, n, "%s \xc2\xb1 %s%s", num, pm, suffix);
}
