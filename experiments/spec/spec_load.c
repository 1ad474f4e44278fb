/*
 * Spec loading and validation.
 *
 * A spec goes through four steps before anything runs: read and parse (a
 * syntax error gives file:line:column), apply the --set overrides, expand
 * the sweep, and validate every resolved run config. Validation collects
 * every problem as one line, `<file>: <json.path>: expected <what>, found
 * <what>`. A problem found in every sweep point is reported once; one that
 * only some points have names the first such point, so the user sees which
 * swept value is wrong. The workload and policy objects are validated by
 * their own rooms (wl_create, ps_policy_configure), once per distinct
 * object, and their messages are put under "workload." and "policy.".
 */
#include "experiments/spec/spec.h"
#include "experiments/backends/backends.h"

#include "policies/policy.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

struct exp_spec {
  char *file;
  char *dir;
  char *name;
  cJSON *json;
  exp_run_list runs;
  exp_plot_list plots;
  exp_errors warnings;
};

static const char *const top_keys[] = {
    "name", "backend", "seed", "repeats", "cluster", "workload", "policy",
    "sweep", "plots", "description", "consistency", "stages", NULL};

/* --------------------------------------------------------- reading */

static void syntax_error(const char *text, size_t len, const char *end,
                         const char *file, exp_errors *errs) {
  size_t off = end && end >= text ? (size_t)(end - text) : 0;
  if (off > len) off = len;
  size_t line = 1, col = 1;
  for (size_t i = 0; i < off; i++) {
    bool newline = text[i] == '\n';
    line += newline;
    col = newline ? 1 : col + 1;
  }
  if (off >= len) {
    exp_errors_addf(errs, "%s:%zu:%zu: invalid JSON: unexpected end of %s", file,
                    line, col, len ? "file" : "file (the file is empty)");
    return;
  }
  if (text[off] == '\0') {
    exp_errors_addf(errs, "%s:%zu:%zu: invalid JSON: a NUL byte", file, line, col);
    return;
  }
  size_t n = strcspn(text + off, "\r\n");
  if (n > 24) n = 24;
  exp_errors_addf(errs, "%s:%zu:%zu: invalid JSON near \"%.*s\"", file, line, col,
                  (int)n, text + off);
}

static cJSON *parse_text(const char *text, size_t len, const char *file,
                         exp_errors *errs) {
  /* return_parse_end tells where parsing stopped, as cJSON_GetErrorPtr does,
   * without reading cJSON's global. cJSON 1.7.15's ParseWithLengthOpts
   * refuses every text when asked to check for trailing garbage (it wants a
   * NUL inside the length), so parse a NUL-terminated copy. */
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    syntax_error(text, len, nul, file, errs);
    return NULL;
  }
  char *copy = strndup(text, len);
  if (!copy) {
    exp_errors_addf(errs, "%s: out of memory", file);
    return NULL;
  }
  const char *end = NULL;
  cJSON *json = cJSON_ParseWithOpts(copy, &end, true);
  if (!json) syntax_error(copy, len, end, file, errs);
  free(copy);
  return json;
}

/* ------------------------------------------------------- overrides */

/* "sweep.<path>" names one sweep key, dots and all; the sweep object is
 * created when the spec has none, so a sweep can be given on the command
 * line alone. */
static int set_sweep(cJSON *json, const char *key, cJSON *value, char *err,
                     size_t errlen) {
  cJSON *sweep = cJSON_GetObjectItemCaseSensitive(json, "sweep");
  if (!sweep) sweep = cJSON_AddObjectToObject(json, "sweep");
  if (!cJSON_IsObject(sweep) || !*key) {
    snprintf(err, errlen, "sweep.%s: %s", key,
             *key ? "sweep is not an object" : "expected sweep.<path>");
    cJSON_Delete(value);
    return -1;
  }
  bool ok = cJSON_GetObjectItemCaseSensitive(sweep, key)
                ? cJSON_ReplaceItemInObjectCaseSensitive(sweep, key, value)
                : cJSON_AddItemToObject(sweep, key, value);
  if (!ok) cJSON_Delete(value);
  return ok ? 0 : -1;
}

cJSON *exp_set_value(const char *text) {
  cJSON *value = cJSON_ParseWithOpts(text, NULL, true);
  return value ? value : cJSON_CreateString(text);
}

static void apply_set(cJSON *json, const char *arg, exp_errors *errs) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    exp_errors_addf(errs, "--set %s: expected path=value, such as cluster.nodes=16", arg);
    return;
  }
  char *path = strndup(arg, (size_t)(eq - arg));
  cJSON *value = exp_set_value(eq + 1);
  char err[EXP_PATH_MAX + 128] = "out of memory";
  int rc = -1;
  if (!path || !value)
    cJSON_Delete(value);
  else if (strncmp(path, "sweep.", 6) == 0)
    rc = set_sweep(json, path + 6, value, err, sizeof err);
  else
    rc = exp_path_set(json, path, value, err, sizeof err);
  if (rc != 0) exp_errors_addf(errs, "--set %s: %s", arg, err);
  free(path);
}

/* A --set on a path that a sweep key equals or lies under is overwritten in
 * every run. The spec stays valid, but a user reading the results would
 * believe the value was used: say which sweep key replaces it. (--set
 * sweep.X sets a sweep list and is not concerned.) */
static void warn_swept_sets(const cJSON *json, const char *const *sets,
                            size_t n_sets, exp_errors *warnings) {
  const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(json, "sweep");
  if (!cJSON_IsObject(sweep)) return;
  for (size_t i = 0; i < n_sets; i++) {
    const char *set = sets[i], *eq = strchr(set, '=');
    if (!eq || strncmp(set, "sweep.", 6) == 0) continue;
    size_t len = (size_t)(eq - set);
    for (const cJSON *k = sweep->child; k; k = k->next) {
      size_t kl = strlen(k->string);
      if (kl > len || strncmp(set, k->string, kl) != 0 || (kl < len && set[kl] != '.'))
        continue;
      exp_errors_addf(warnings, "--set %s has no effect: sweep[\"%s\"] replaces %s "
                      "in every run", set, k->string, k->string);
      break;
    }
  }
}

static bool said_already(const exp_errors *said, const char *line) {
  for (size_t i = 0; i < said->count; i++)
    if (strcmp(said->lines[i], line) == 0) return true;
  return false;
}

/* A cluster field that a run's backend does not read describes the other
 * backend's machine (the simulated network on the real backend, addresses
 * in a simulation): harmless, since specs are shared between backends, but
 * a user must not believe it took effect (the cost model on the real
 * backend). One line per field and backend, naming what that backend reads;
 * a field of which the backend reads a part (the real backend reads
 * network.bandwidth) is warned about field by field inside it. A field
 * that only the cluster's profile gave is not warned about: a profile
 * describes a machine for both backends. */
static void warn_unread_cluster_field(const exp_backend *be, const char *key,
                                      const exp_errors *profile_keys, exp_errors *said,
                                      exp_errors *warnings) {
  char pair[EXP_PATH_MAX];
  snprintf(pair, sizeof pair, "%s %s", be->name, key);
  if (exp_backend_reads(be, key) || said_already(said, pair) ||
      said_already(profile_keys, key))
    return;
  exp_errors_addf(said, "%s", pair);
  exp_buf reads = {0};
  for (size_t i = 0; be->cluster_keys[i]; i++)
    exp_buf_printf(&reads, "%s%s", i ? ", " : "", be->cluster_keys[i]);
  char *list = exp_buf_take(&reads);
  exp_errors_addf(warnings, "cluster.%s has no effect on the %s backend, which reads "
                  "only cluster.{%s}", key, be->name, list ? list : "");
  free(list);
}

/* The machines' layout, which the real backend reads for machines.pin
 * only: given without it, it changes nothing real (once per field). */
static void warn_layout_without_pin(const exp_backend *be, const char *key,
                                    const cJSON *machines, const exp_errors *profile_keys,
                                    exp_errors *said, exp_errors *warnings) {
  bool layout = !strcmp(key, "machines.count") || !strcmp(key, "machines.cores") ||
                !strcmp(key, "machines.place");
  if (!layout || strcmp(be->name, "real") != 0 ||
      cJSON_IsTrue(cJSON_GetObjectItem(machines, "pin")) || said_already(profile_keys, key))
    return;
  char pair[EXP_PATH_MAX + 8];
  snprintf(pair, sizeof pair, "real %s", key);
  if (said_already(said, pair)) return;
  exp_errors_addf(said, "%s", pair);
  exp_errors_addf(warnings, "cluster.%s has no effect on the real backend without "
                  "cluster.machines.pin (true: each machine's nodes on cores of their own "
                  "of this machine)", key);
}

static void warn_unread_cluster_fields(const exp_run_list *runs, const exp_errors *profile_keys,
                                       exp_errors *warnings) {
  size_t n;
  const exp_backend *table = exp_backends(&n);
  exp_errors said; /* "<backend> <key>" already warned about */
  exp_errors_init(&said);
  for (size_t p = 0; p < runs->points; p++) {
    const cJSON *config = runs->runs[p].config;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(config, "backend");
    const exp_backend *be = exp_backend_find(table, n, cJSON_IsString(b) ? b->valuestring : "sim");
    const cJSON *cluster = cJSON_GetObjectItemCaseSensitive(config, "cluster");
    for (const cJSON *k = be && cJSON_IsObject(cluster) ? cluster->child : NULL; k; k = k->next) {
      bool within = cJSON_IsObject(k) && !exp_backend_reads(be, k->string) &&
                    exp_backend_reads_within(be, k->string) &&
                    !said_already(profile_keys, k->string);
      if (!within) { /* the field as a whole */
        warn_unread_cluster_field(be, k->string, profile_keys, &said, warnings);
        continue;
      }
      for (const cJSON *f = k->child; f; f = f->next) { /* network.latency, ... */
        char key[EXP_PATH_MAX];
        snprintf(key, sizeof key, "%s.%s", k->string, f->string);
        warn_unread_cluster_field(be, key, profile_keys, &said, warnings);
        warn_layout_without_pin(be, key, k, profile_keys, &said, warnings);
      }
    }
  }
  exp_errors_free(&said);
}

/* cluster.auth "insecure" on a bind beyond loopback runs as asked, with a
 * warning (once): any host that reaches the ports can send into the run. */
static void warn_insecure_auth(const exp_run_list *runs, exp_errors *warnings) {
  for (size_t p = 0; p < runs->points; p++) {
    const cJSON *config = runs->runs[p].config;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(config, "backend");
    const cJSON *auth = exp_path_get(config, "cluster.auth");
    const cJSON *bind = exp_path_get(config, "cluster.bind");
    const char *where = cJSON_IsString(bind) ? bind->valuestring : "127.0.0.1";
    if (!cJSON_IsString(b) || strcmp(b->valuestring, "real") != 0 || !cJSON_IsString(auth) ||
        strcmp(auth->valuestring, "insecure") != 0 || real_bind_is_loopback(where))
      continue;
    exp_errors_addf(warnings, "cluster.auth is \"insecure\" with cluster.bind \"%s\": the "
                    "nodes do not authenticate, so any host that can reach their ports can "
                    "send messages into the run", where);
    return;
  }
}

/* ----------------------------------------------- workload and policy */

/* What a room said about one distinct JSON object (NULL msg: valid). */
typedef struct {
  char *key;
  char *msg;
  bool samples; /* a valid workload that draws samples */
} verdict;

typedef struct {
  const char *dir;
  verdict *items;
  size_t count, cap;
} checker;

static verdict *find_verdict(checker *c, const char *key) {
  for (size_t i = 0; i < c->count; i++)
    if (strcmp(c->items[i].key, key) == 0) return &c->items[i];
  return NULL;
}

/* Stores the verdict (takes key); NULL on no memory. */
static verdict *remember(checker *c, char *key, const char *msg) {
  char *copy = msg ? strdup(msg) : NULL;
  if (c->count == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 8;
    verdict *items = realloc(c->items, cap * sizeof *items);
    if (items) {
      c->items = items;
      c->cap = cap;
    }
  }
  if (c->count == c->cap || (msg && !copy)) {
    free(key);
    free(copy);
    return NULL;
  }
  c->items[c->count] = (verdict){key, copy, false};
  return &c->items[c->count++];
}

static void checker_free(checker *c) {
  for (size_t i = 0; i < c->count; i++) {
    free(c->items[i].key);
    free(c->items[i].msg);
  }
  free(c->items);
}

/* A room's message is relative to its object: "skew: expected ..." becomes
 * "workload.skew: expected ...", anything else "workload: ...". */
static void add_prefixed(exp_errors *e, const char *prefix, const char *msg) {
  size_t k = strspn(msg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_.[]");
  size_t pl = strlen(prefix);
  if (strncmp(msg, prefix, pl) == 0 && (msg[pl] == '.' || msg[pl] == ':'))
    exp_errors_addf(e, "%s", msg);
  else if (k > 0 && msg[k] == ':')
    exp_errors_addf(e, "%s.%s", prefix, msg);
  else
    exp_errors_addf(e, "%s: %s", prefix, msg);
}

static const char *room_verdict(checker *c, const cJSON *json, bool workload,
                                uint32_t nodes, uint32_t workers_per_node, bool *samples) {
  char *text = cJSON_PrintUnformatted(json);
  exp_buf kb = {0};
  exp_buf_printf(&kb, "%c%u.%u|%s", workload ? 'w' : 'p', nodes, workers_per_node,
                 text ? text : "");
  free(text);
  char *key = exp_buf_take(&kb);
  if (!key) return "out of memory";
  verdict *v = find_verdict(c, key);
  if (v) {
    free(key);
    if (samples) *samples = v->samples;
    return v->msg;
  }
  char err[1024] = "";
  bool ok, draws = false;
  if (workload) {
    wl_context ctx = {.nodes = nodes, .workers_per_node = workers_per_node,
                      .base_dir = c->dir};
    wl_workload *wl = wl_create(json, &ctx, err, sizeof err);
    ok = wl != NULL;
    draws = wl && wl_samples(wl);
    wl_free(wl);
  } else {
    const ps_policy_ops *ops = NULL;
    ps_policy_settings settings;
    ps_policy_settings_default(&settings);
    ok = ps_policy_configure(json, &ops, &settings, err, sizeof err) == 0;
  }
  if (!ok && !*err) snprintf(err, sizeof err, "invalid (no reason given)");
  v = remember(c, key, ok ? NULL : err);
  if (v) v->samples = draws;
  if (samples) *samples = draws;
  return v ? v->msg : (ok ? NULL : "out of memory");
}

/* ---------------------------------------------------- run configs */

/* "backend": an entry of the backend table. */
static void check_backend(exp_errors *e, const cJSON *config) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, "backend");
  size_t n;
  const exp_backend *table = exp_backends(&n);
  if (!v || (cJSON_IsString(v) && exp_backend_find(table, n, v->valuestring))) return;
  exp_buf what = {0};
  exp_buf_puts(&what, "one of");
  for (size_t i = 0; i < n; i++)
    exp_buf_printf(&what, "%s \"%s\" (%s)", i ? "," : "", table[i].name, table[i].summary);
  char *w = exp_buf_take(&what);
  exp_expect(e, "backend", w ? w : "a backend", v);
  free(w);
}

static void check_top_fields(exp_errors *e, const cJSON *config) {
  const char *name = NULL, *desc = NULL;
  double d;
  exp_check_keys(e, config, "", top_keys);
  if (exp_get_string(e, config, "", "name", true, &name) && name &&
      !exp_is_file_stem(name))
    exp_expect(e, "name", "a name of letters, digits, '_', '.' and '-'",
               cJSON_GetObjectItemCaseSensitive(config, "name"));
  check_backend(e, config);
  exp_get_int(e, config, "", "seed", 0, (double)(EXP_SEED_LIMIT - 1), false, &d);
  exp_get_int(e, config, "", "repeats", 1, 1000000, false, &d);
  exp_get_string(e, config, "", "description", false, &desc);
}

/* "consistency": its fields, and whether the policy and workload allow it
 * (pol NULL: the policy is invalid, said already). */
static void check_consistency(exp_errors *e, const cJSON *config, const cJSON *pol,
                              bool wl_ok, bool samples) {
  const cJSON *json = cJSON_GetObjectItemCaseSensitive(config, "consistency");
  ps_consistency cons;
  char err[512];
  if (run_consistency_parse(json, &cons, err, sizeof err) != 0) {
    add_prefixed(e, "consistency", err);
    return;
  }
  const ps_policy_ops *ops = NULL;
  ps_policy_settings settings;
  ps_policy_settings_default(&settings);
  if (!pol || !wl_ok || ps_policy_configure(pol, &ops, &settings, err, sizeof err) != 0)
    return;
  if (run_consistency_check(cons, &settings, samples, err, sizeof err) != 0)
    exp_errors_addf(e, "consistency: %s", err);
}

/* "stages": read by the run layer as a run will read it (run_stages_check),
 * "workers": "auto" allowed (the scheduler resolves it before the run). Not
 * when the workload or the policy is itself invalid: that is said above. */
static void check_stages(checker *c, const cJSON *config, const cJSON *wl, const cJSON *pol,
                         uint32_t nodes, uint32_t workers, exp_errors *e) {
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(config, "stages");
  if (!stages || !wl || !pol || !nodes || !workers) return;
  run_args a = {.workload = wl, .policy = pol,
                .consistency = cJSON_GetObjectItemCaseSensitive(config, "consistency"),
                .stages = stages, .nodes = nodes, .workers_per_node = workers,
                .base_dir = c->dir};
  run_stage_info info[RUN_STAGES_MAX];
  size_t n;
  char err[4096];
  if (run_stages_check(&a, true, info, &n, err, sizeof err) == 0) return;
  for (char *line = err, *end; line; line = end ? end + 1 : NULL) { /* a line each */
    end = strchr(line, '\n');
    exp_errors_addf(e, "%.*s", end ? (int)(end - line) : (int)strlen(line), line);
  }
}

/* The cluster's roles and scaling against the policy and the stages
 * (run_roles_check), once the cluster and the policy are valid. */
static void check_roles(const cJSON *config, const exp_cluster *cl, const cJSON *pol,
                        exp_errors *e) {
  const ps_policy_ops *ops = NULL;
  ps_policy_settings settings;
  char err[512];
  if (ps_policy_configure(pol, &ops, &settings, err, sizeof err) != 0) return;
  run_args a = {.nodes = cl->sim.nodes, .workers_per_node = cl->sim.workers_per_node,
                .servers = cl->sim.servers, .worker_nodes = cl->sim.worker_nodes,
                .scale = cl->sim.scale, .n_scale = cl->sim.n_scale, .policy = pol};
  bool stages = cJSON_GetObjectItemCaseSensitive(config, "stages") != NULL;
  if (run_roles_check(&a, ops, &settings, stages, err, sizeof err) != 0)
    exp_errors_addf(e, "%s", err);
}

static void validate_config(checker *c, const cJSON *config, exp_errors *e) {
  check_top_fields(e, config);
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(config, "cluster");
  exp_cluster cluster;
  size_t before = e->count;
  bool cluster_ok = exp_cluster_parse(cl, c->dir, &cluster, e) && e->count == before;
  /* An invalid node count leaves the default (1): the workload is still
   * checked, so its own problems show in the same report. The workload
   * runs on the worker nodes. */
  uint32_t nodes = cluster.sim.nodes, workers = cluster.sim.workers_per_node;
  uint32_t worker_nodes = cluster.sim.worker_nodes ? cluster.sim.worker_nodes : nodes;
  const cJSON *wl = NULL, *pol = NULL;
  bool samples = false, wl_ok = false, pol_ok = false;
  if (exp_get_object(e, config, "", "workload", true, &wl) && wl) {
    const char *msg = room_verdict(c, wl, true, worker_nodes, workers ? workers : 1, &samples);
    if (msg) add_prefixed(e, "workload", msg);
    wl_ok = !msg;
  }
  if (exp_get_object(e, config, "", "policy", true, &pol) && pol) {
    const char *msg = room_verdict(c, pol, false, 0, 0, NULL);
    if (msg) add_prefixed(e, "policy", msg);
    pol_ok = !msg;
  }
  check_consistency(e, config, pol_ok ? pol : NULL, wl_ok, samples);
  if (cluster_ok && pol_ok) check_roles(config, &cluster, pol, e);
  exp_cluster_free(&cluster);
  check_stages(c, config, wl_ok ? wl : NULL, pol_ok ? pol : NULL, nodes, workers, e);
}

/* ------------------------------------------------- sweep-aware report */

/* A message and the sweep points it was found in. */
typedef struct {
  char *msg;
  size_t points;
  size_t first_point, last_point;
} tally;

typedef struct {
  tally *items;
  size_t count, cap;
} tallies;

static void tally_add(tallies *t, const char *msg, size_t point) {
  for (size_t i = 0; i < t->count; i++) {
    if (strcmp(t->items[i].msg, msg) != 0) continue;
    if (t->items[i].last_point != point) t->items[i].points++;
    t->items[i].last_point = point;
    return;
  }
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    tally *items = realloc(t->items, cap * sizeof *items);
    if (!items) return;
    t->items = items;
    t->cap = cap;
  }
  char *copy = strdup(msg);
  if (copy) t->items[t->count++] = (tally){copy, 1, point, point};
}

/* The sweep key a message's path (before its first ": ") is, or lies
 * under, when the spec itself has nothing there: the sweep brought the
 * field in, so a typo in it is the sweep key's. NULL otherwise. */
static const char *from_sweep(const cJSON *json, const char *msg) {
  const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(json, "sweep");
  size_t len = strcspn(msg, ":");
  for (const cJSON *k = cJSON_IsObject(sweep) ? sweep->child : NULL; k; k = k->next) {
    size_t kl = strlen(k->string);
    if (kl > len || strncmp(msg, k->string, kl) != 0 || (kl < len && msg[kl] != '.'))
      continue;
    if (!exp_path_get(json, k->string)) return k->string;
  }
  return NULL;
}

/* Reports each distinct message once; one that not every point has says
 * in which point it was first found, one about a field a sweep key brought
 * in says which key. */
static void tally_report(tallies *t, const cJSON *json, const exp_run_list *runs,
                         exp_errors *e) {
  for (size_t i = 0; i < t->count; i++) {
    tally *m = &t->items[i];
    const char *key = from_sweep(json, m->msg);
    exp_buf with = {0};
    if (key) exp_buf_printf(&with, "%s (a field sweep[\"%s\"] brings in)", m->msg, key);
    char *text = key ? exp_buf_take(&with) : NULL;
    if (text) {
      free(m->msg);
      m->msg = text;
    }
    if (m->points == runs->points) {
      exp_errors_addf(e, "%s", m->msg);
    } else {
      char *label = exp_sweep_label(runs->runs[m->first_point].sweep);
      char more[64] = "";
      if (m->points > 1)
        snprintf(more, sizeof more, ", and %zu more", m->points - 1);
      exp_errors_addf(e, "%s (in sweep point %s%s)", m->msg, label ? label : "?", more);
      free(label);
    }
    free(m->msg);
  }
  free(t->items);
}

static void validate_runs(const cJSON *json, const exp_run_list *runs,
                          const char *dir, exp_errors *e) {
  checker c = {.dir = dir};
  if (runs->count == 0) {
    /* The sweep could not be expanded: check what is there without it. */
    cJSON *base = cJSON_Duplicate(json, true);
    cJSON_DeleteItemFromObjectCaseSensitive(base, "sweep");
    cJSON_DeleteItemFromObjectCaseSensitive(base, "plots");
    validate_config(&c, base, e);
    cJSON_Delete(base);
    checker_free(&c);
    return;
  }
  tallies t = {0};
  for (size_t p = 0; p < runs->points; p++) {
    exp_errors mine;
    exp_errors_init(&mine);
    validate_config(&c, runs->runs[p].config, &mine);
    for (size_t i = 0; i < mine.count; i++) tally_add(&t, mine.lines[i], p);
    exp_errors_free(&mine);
  }
  tally_report(&t, json, runs, e);
  checker_free(&c);
}

/* ------------------------------------------------------- plot names */

bool exp_is_metric(const char *name) { return run_metric_find(name) != NULL; }

static bool in_some_config(const exp_run_list *runs, const char *path) {
  if (runs->points == 0) return true; /* no configs to ask: not known */
  for (size_t p = 0; p < runs->points; p++)
    if (exp_path_get(runs->runs[p].config, path)) return true;
  return false;
}

static void metric_names(exp_buf *b) {
  size_t n;
  const run_metric *m = run_metric_table(&n);
  for (size_t i = 0; i < n; i++) exp_buf_printf(b, "%s%s", i ? ", " : "", m[i].name);
}

static void check_plot_names(const exp_plot_list *plots,
                             const exp_run_list *runs, exp_errors *e) {
  exp_buf mb = {0};
  metric_names(&mb);
  char *metrics = exp_buf_take(&mb);
  for (size_t i = 0; i < plots->count; i++) {
    const exp_plot *p = &plots->items[i];
    if (!p->x || !p->y) continue; /* already reported as missing */
    char what[1024];
    char path[64];
    snprintf(what, sizeof what, "a metric name (%s) or a dotted path into the run config",
             metrics ? metrics : "");
    snprintf(path, sizeof path, "plots[%zu].x", i);
    if (!exp_is_metric(p->x) && !in_some_config(runs, p->x))
      exp_errors_addf(e, "%s: expected %s, found \"%s\"", path, what, p->x);
    snprintf(path, sizeof path, "plots[%zu].y", i);
    if (!exp_is_metric(p->y))
      exp_errors_addf(e, "%s: expected a metric name (%s), found \"%s\"", path,
                      metrics ? metrics : "", p->y);
    snprintf(path, sizeof path, "plots[%zu].series", i);
    if (p->series && !in_some_config(runs, p->series))
      exp_errors_addf(e, "%s: expected a dotted path into the run config, found \"%s\"",
                      path, p->series);
  }
  free(metrics);
}

cJSON *exp_json_load(const char *path, exp_errors *errs) {
  char err[EXP_PATH_MAX + 128];
  size_t len = 0;
  char *text = exp_read_file(path, &len, err, sizeof err);
  if (!text) {
    exp_errors_addf(errs, "%s", err);
    return NULL;
  }
  cJSON *json = parse_text(text, len, path, errs);
  free(text);
  return json;
}

/* ------------------------------------------------------------ door */

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

exp_spec *exp_spec_load(const char *path, const char *const *sets,
                        size_t n_sets, exp_errors *errs) {
  char err[EXP_PATH_MAX + 128];
  size_t len = 0;
  char *text = exp_read_file(path, &len, err, sizeof err);
  if (!text) {
    exp_errors_addf(errs, "%s", err);
    return NULL;
  }
  char *dir = dir_of(path);
  exp_spec *s = dir ? exp_spec_parse(text, len, path, dir, sets, n_sets, errs) : NULL;
  free(dir);
  free(text);
  return s;
}

/* Checks json whole; the messages go to e unprefixed. */
static void check_spec(cJSON *json, const char *dir, exp_run_list *runs,
                       exp_plot_list *plots, exp_errors *profile_keys, exp_errors *warns,
                       exp_errors *e) {
  if (!cJSON_IsObject(json)) {
    exp_expect(e, "", "an object", json);
    return;
  }
  exp_cluster_include_profile(json, dir, e, profile_keys, warns); /* sweeps reach its fields */
  exp_sweep_expand(json, runs, e);
  exp_plots_parse(cJSON_GetObjectItemCaseSensitive(json, "plots"), plots, e);
  validate_runs(json, runs, dir, e);
  check_plot_names(plots, runs, e);
}

exp_spec *exp_spec_parse(const char *text, size_t len, const char *file,
                         const char *base_dir, const char *const *sets,
                         size_t n_sets, exp_errors *errs) {
  size_t before = errs->count;
  cJSON *json = parse_text(text, len, file, errs);
  if (!json) return NULL;
  for (size_t i = 0; i < n_sets && cJSON_IsObject(json); i++)
    apply_set(json, sets[i], errs);
  exp_errors mine, profile_keys, profile_warns;
  exp_errors_init(&mine);
  exp_errors_init(&profile_keys);
  exp_errors_init(&profile_warns);
  exp_run_list runs = {0};
  exp_plot_list plots = {0};
  check_spec(json, base_dir, &runs, &plots, &profile_keys, &profile_warns, &mine);
  exp_set_hints(&mine, sets, n_sets);
  for (size_t i = 0; i < mine.count; i++)
    exp_errors_addf(errs, "%s: %s", file, mine.lines[i]);
  exp_errors_free(&mine);
  exp_spec *s = errs->count == before ? calloc(1, sizeof *s) : NULL;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(json, "name");
  if (s) {
    *s = (exp_spec){.file = strdup(file), .dir = strdup(base_dir),
                    .name = strdup(name->valuestring), .json = json,
                    .runs = runs, .plots = plots};
    exp_errors_init(&s->warnings);
    warn_swept_sets(json, sets, n_sets, &s->warnings);
    warn_unread_cluster_fields(&s->runs, &profile_keys, &s->warnings);
    warn_insecure_auth(&s->runs, &s->warnings);
    for (size_t i = 0; i < profile_warns.count; i++)
      exp_errors_addf(&s->warnings, "%s", profile_warns.lines[i]);
    exp_errors_free(&profile_warns);
    exp_errors_free(&profile_keys);
    if (s->file && s->dir && s->name) return s;
    exp_errors_addf(errs, "%s: out of memory", file);
    exp_spec_free(s);
    return NULL;
  }
  exp_errors_free(&profile_keys);
  exp_errors_free(&profile_warns);
  exp_run_list_free(&runs);
  exp_plot_list_free(&plots);
  cJSON_Delete(json);
  return NULL;
}

void exp_spec_free(exp_spec *s) {
  if (!s) return;
  free(s->file);
  free(s->dir);
  free(s->name);
  cJSON_Delete(s->json);
  exp_run_list_free(&s->runs);
  exp_plot_list_free(&s->plots);
  exp_errors_free(&s->warnings);
  free(s);
}

const char *exp_spec_name(const exp_spec *s) { return s->name; }
const char *exp_spec_file(const exp_spec *s) { return s->file; }
const char *exp_spec_dir(const exp_spec *s) { return s->dir; }
const cJSON *exp_spec_json(const exp_spec *s) { return s->json; }
const exp_run_list *exp_spec_runs(const exp_spec *s) { return &s->runs; }
const exp_plot_list *exp_spec_plots(const exp_spec *s) { return &s->plots; }
const exp_errors *exp_spec_warnings(const exp_spec *s) { return &s->warnings; }
