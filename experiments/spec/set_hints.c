/*
 * Hints for --set values that are not JSON.
 *
 * `--set path=value` takes value as JSON when it parses and else as its
 * text, so that `--set cluster.network.bandwidth=1Gbps` needs no quotes.
 * When such a text is what a message says it found (`--set
 * sweep.policy=[nups]` gives the string "[nups]", not a list), the message
 * says where the string came from and shows the value as JSON, its bare
 * words quoted: `--set 'sweep.policy=["nups"]'`. A bare word alone gets
 * none: quoted it is the same string.
 */
#include "experiments/spec/spec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool word_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool word_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

/* text with its bare words (outside quotes; not true, false or null) in
 * double quotes: "[nups, relocate]" -> "[\"nups\", \"relocate\"]". */
static char *quote_words(const char *text) {
  exp_buf b = {0};
  bool in_string = false;
  for (const char *s = text; *s;) {
    if (in_string || *s == '"') {
      if (*s == '"' && (s == text || s[-1] != '\\')) in_string = !in_string;
      exp_buf_printf(&b, "%c", *s++);
      continue;
    }
    if (!word_start(*s) || (s > text && word_char(s[-1]))) {
      exp_buf_printf(&b, "%c", *s++);
      continue;
    }
    size_t n = 1;
    while (word_char(s[n])) n++;
    bool literal = (n == 4 && (!strncmp(s, "true", 4) || !strncmp(s, "null", 4))) ||
                   (n == 5 && !strncmp(s, "false", 5));
    exp_buf_printf(&b, literal ? "%.*s" : "\"%.*s\"", (int)n, s);
    s += n;
  }
  return exp_buf_take(&b);
}

/* The value as JSON, its bare words quoted, when that parses to something
 * else than the string it was taken as (a bare word, a typo, says nothing
 * new quoted); else NULL. */
static char *as_json(const char *text) {
  char *quoted = quote_words(text);
  cJSON *v = quoted ? cJSON_ParseWithOpts(quoted, NULL, true) : NULL;
  bool other = v && !(cJSON_IsString(v) && strcmp(v->valuestring, text) == 0);
  cJSON_Delete(v);
  if (other) return quoted;
  free(quoted);
  return NULL;
}

/* Appends the hint for --set `set` (path=text) to line *l, if any. */
static void add_hint(char **l, const char *set, const char *eq) {
  char *json = as_json(eq + 1);
  if (!json) return;
  exp_buf b = {0};
  exp_buf_printf(&b, "%s (--set took it as a string, since %s is not JSON; as JSON: --set "
                     "'%.*s=%s')", *l, eq + 1, (int)(eq - set), set, json);
  char *text = exp_buf_take(&b);
  free(json);
  if (!text) return;
  free(*l);
  *l = text;
}

void exp_set_hints(exp_errors *errs, const char *const *sets, size_t n_sets) {
  for (size_t i = 0; i < n_sets; i++) {
    const char *eq = strchr(sets[i], '=');
    cJSON *v = eq ? cJSON_ParseWithOpts(eq + 1, NULL, true) : NULL;
    if (!eq || v || strchr(eq + 1, '\'')) { /* JSON; or no shell quoting to show */
      cJSON_Delete(v);
      continue;
    }
    cJSON *text = cJSON_CreateString(eq + 1);
    char found[128] = "found ";
    if (text) exp_describe(text, found + 6, sizeof found - 6);
    cJSON_Delete(text);
    for (size_t k = 0; text && k < errs->count; k++)
      if (strstr(errs->lines[k], found)) add_hint(&errs->lines[k], sets[i], eq);
  }
}
