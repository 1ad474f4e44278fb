/*
 * The `pslab` command line's tables (experiments/cli/cli.h) against
 * what is made of them: every option of a command is in that command's
 * --help and usage, and no other is; the bash completion script offers each
 * command exactly its options; an option parsed on any two of its commands
 * changes the parsed command line in the same way (and is an unknown option
 * on the others); the tables themselves are consistent. Nothing runs.
 */
#include "tests/unit.h"

#include "experiments/cli/cli.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------- helpers */

static bool takes(const cli_option *o, size_t cmd) { return o->commands & CLI_ON(cmd); }

/* What print(f, cmd) writes (caller frees). */
static char *capture(void (*print)(FILE *f, const cli_command *cmd), const cli_command *cmd) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) return NULL;
  print(mem, cmd);
  fclose(mem);
  return buf;
}

static void print_help(FILE *f, const cli_command *cmd) { cli_print_help(f, cmd); }
static void print_usage(FILE *f, const cli_command *cmd) { cli_print_usage(f, cmd, false); }
static void print_completion(FILE *f, const cli_command *cmd) {
  (void)cmd;
  cli_print_bash_completion(f);
}

/* Silences stderr (the usage errors of refused command lines) while on. */
static void quiet_stderr(bool on) {
  static int saved = -1;
  fflush(stderr);
  if (on) {
    int null = open("/dev/null", O_WRONLY);
    saved = dup(2);
    dup2(null, 2);
    close(null);
  } else if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
    saved = -1;
  }
}

/* "  -o, --out DIR" or "      --backend sim|real": the head of an option's
 * line in cmd's --help. */
static void head_of(char *buf, size_t n, const cli_option *o, const cli_command *cmd) {
  const char *metavar, *help;
  cli_option_wording(o, cmd, &metavar, &help);
  if (o->shrt)
    snprintf(buf, n, "  -%c, --%s%s%s", o->shrt, o->lng, metavar ? " " : "",
             metavar ? metavar : "");
  else
    snprintf(buf, n, "      --%s%s%s", o->lng, metavar ? " " : "", metavar ? metavar : "");
}

/* -------------------------------------------------------- the tables */

static void test_tables_consistent(void) {
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *a = &cli_options[i];
    CU_ASSERT_TRUE(a->commands != 0 && (a->commands & ~CLI_EVERY) == 0);
    CU_ASSERT_TRUE(a->help && *a->help);
    CU_ASSERT_EQUAL(a->metavar == NULL, a->kind == CLI_FLAG);
    CU_ASSERT_TRUE(a->kind != CLI_CALL || a->call);
    for (size_t j = i + 1; j < cli_n_options; j++) {
      const cli_option *b = &cli_options[j];
      CU_ASSERT_STRING_NOT_EQUAL(a->lng, b->lng);
      /* one short name, one meaning, wherever both are taken */
      if (a->shrt && a->shrt == b->shrt) CU_ASSERT_EQUAL(a->commands & b->commands, 0);
    }
  }
  for (size_t i = 0; i < cli_n_option_texts; i++) {
    const cli_option_text *t = &cli_option_texts[i];
    const cli_option *o = cli_option_find(t->lng);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_TRUE(t->commands != 0 && (t->commands & ~o->commands) == 0);
    CU_ASSERT_EQUAL(t->metavar != NULL && o->metavar == NULL, false);
    for (size_t j = i + 1; j < cli_n_option_texts; j++)
      if (strcmp(cli_option_texts[j].lng, t->lng) == 0)
        CU_ASSERT_EQUAL(cli_option_texts[j].commands & t->commands, 0);
  }
  for (size_t c = 0; c < CLI_N_COMMANDS; c++) {
    const cli_command *cmd = &cli_commands[c];
    CU_ASSERT_PTR_EQUAL(cli_command_find(cmd->name), cmd);
    CU_ASSERT_EQUAL(cli_command_of(cmd), c);
    if (cmd->required) {
      const cli_option *o = cli_option_find(cmd->required);
      CU_ASSERT_TRUE(o && takes(o, c));
    }
  }
}

/* ---------------------------------------------------- help and usage */

/* cmd's --help lists exactly cmd's options, each with its head, and its
 * usage names each but --help. */
static void check_help(size_t c) {
  const cli_command *cmd = &cli_commands[c];
  char *help = capture(print_help, cmd), *usage = capture(print_usage, cmd);
  CU_ASSERT_PTR_NOT_NULL_FATAL(help);
  char *opts = strstr(help, "\nOptions:\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(opts);
  char *end = strstr(opts + 1, "\n\n");
  if (end) end[1] = '\0'; /* the options part alone */
  size_t listed = 0, taken = 0;
  for (char *s = strstr(opts, "\n  -"); s; s = strstr(s + 1, "\n  -")) listed++;
  for (char *s = strstr(opts, "\n      --"); s; s = strstr(s + 1, "\n      --")) listed++;
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *o = &cli_options[i];
    if (!takes(o, c)) continue;
    taken++;
    char head[128], word[64];
    head_of(head + 1, sizeof head - 1, o, cmd);
    head[0] = '\n';
    if (!unit_contains(opts, head)) fprintf(stderr, "%s --help lacks:%s\n", cmd->name, head);
    CU_ASSERT_TRUE(unit_contains(opts, head));
    snprintf(word, sizeof word, "--%s", o->lng);
    if (strcmp(o->lng, "help") != 0) CU_ASSERT_TRUE(unit_contains(usage, word));
  }
  CU_ASSERT_EQUAL(listed, taken);
  free(help);
  free(usage);
}

static void test_help_lists_options(void) {
  for (size_t c = 0; c < CLI_N_COMMANDS; c++) check_help(c);
}

static void test_main_help_lists_commands(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  cli_print_main_help(mem);
  fclose(mem);
  for (size_t c = 0; c < CLI_N_COMMANDS; c++) {
    char line[64];
    snprintf(line, sizeof line, "\n  %s", cli_commands[c].name);
    CU_ASSERT_TRUE(unit_contains(buf, line));
  }
  free(buf);
}

/* -------------------------------------------------------- completion */

/* The words of `NAME="..."` in line (caller frees), or NULL. */
static char *field(const char *line, const char *name) {
  char key[32];
  snprintf(key, sizeof key, " %s=\"", name);
  const char *s = strstr(line, key);
  if (!s) return NULL;
  s += strlen(key);
  return strndup(s, strcspn(s, "\""));
}

/* words (space-separated) are exactly cmd's options, or those of them
 * that take a value. */
static void check_words(const char *words, size_t c, bool values) {
  size_t n = 0, want = 0;
  for (const char *s = words; *s;) {
    size_t len = strcspn(s, " ");
    if (len) n++;
    s += len + (s[len] == ' ');
  }
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *o = &cli_options[i];
    if (!takes(o, c) || (values && !o->metavar)) continue;
    char w[64];
    snprintf(w, sizeof w, " --%s ", o->lng);
    char padded[1024];
    snprintf(padded, sizeof padded, " %s ", words);
    CU_ASSERT_TRUE(unit_contains(padded, w));
    want++;
    if (o->shrt) {
      snprintf(w, sizeof w, " -%c ", o->shrt);
      CU_ASSERT_TRUE(unit_contains(padded, w));
      want++;
    }
  }
  CU_ASSERT_EQUAL(n, want);
}

static void test_completion_matches_table(void) {
  char *script = capture(print_completion, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(script);
  for (size_t c = 0; c < CLI_N_COMMANDS; c++) {
    char key[64];
    snprintf(key, sizeof key, "\n    %s) opts=\"", cli_commands[c].name);
    char *line = strstr(script, key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(line);
    line = strndup(line + 1, strcspn(line + 1, "\n"));
    char *opts = field(line, "opts"), *values = field(line, "values"),
         *words = field(line, "words");
    CU_ASSERT_TRUE_FATAL(opts && values && words);
    check_words(opts, c, false);
    check_words(values, c, true);
    CU_ASSERT_STRING_EQUAL(words, cli_commands[c].words ? cli_commands[c].words : "");
    CU_ASSERT_TRUE(unit_contains(script, cli_commands[c].name));
    free(opts);
    free(values);
    free(words);
    free(line);
  }
  free(script);
}

/* ----------------------------------------------------------- parsing */

/* A value each option accepts (more arguments after it where it needs
 * them); NULL: a flag. */
static const char *const samples[][3] = {
    {"out", "d", NULL},           {"set", "a.b=1", NULL},     {"backend", "real", NULL},
    {"repeats", "3", NULL},       {"shard", "1/2", NULL},     {"metrics", "time_s", NULL},
    {"record-trace", "t.trace", NULL}, {"save-params", "p", NULL}, {"coordinator", "h:1", NULL},
    {"coordinator-file", "c.addr", NULL}, {"key-file", "/k.key", NULL},
    {"profile", "p.json", NULL},  {"rate", "1gbit", "--netns"}, {"svg", "o.svg", NULL},
    {"nodes", "4", NULL},         {"timeout", "2.5", NULL},
    {"budget", "30", NULL},       {"candidates", "c.json", NULL}, {"confirm", "2", NULL},
    {"metric", "bytes", NULL},    {"fidelity", "v", NULL},     {"jobs", "2", NULL},
    {"screen", "own", NULL},      {"workload", "w.json", NULL},
};

/* The parsed command line as "field=value" lines (caller frees). */
static char *digest(const cli *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fprintf(f, "out=%s\ncoordinator=%s\ncoordinator_file=%s\nrecord_trace=%s\nsvg=%s\n",
          c->out ? c->out : "", c->coordinator ? c->coordinator : "",
          c->coordinator_file ? c->coordinator_file : "",
          c->record_trace ? c->record_trace : "", c->svg ? c->svg : "");
  fprintf(f, "timeout=%g\njobs=%u\n", c->timeout_s, (unsigned)c->jobs);
  fprintf(f, "save_params=%s\n", c->save_params ? c->save_params : "");
  fprintf(f, "screen=%s\n", c->screen ? c->screen : "");
  fprintf(f, "workload=%s\n", c->workload ? c->workload : "");
  fprintf(f, "budget=%g\ncandidates=%s\nconfirm=%u\nmetric=%s\nfidelity=%s\n", c->budget_s,
          c->candidates ? c->candidates : "", (unsigned)c->confirm, c->metric ? c->metric : "",
          c->fidelity ? c->fidelity : "");
  fprintf(f, "profile=%s\nrate=%s\nnodes=%u\nrepeats=%u\nshard=%u/%u\n",
          c->profile ? c->profile : "", c->rate ? c->rate : "", (unsigned)c->nodes,
          (unsigned)c->repeats, (unsigned)c->shard.index, (unsigned)c->shard.count);
  for (size_t i = 0; i < c->n_sets; i++) fprintf(f, "set=%s\n", c->sets[i]);
  for (size_t i = 0; c->metrics && c->metrics[i]; i++) fprintf(f, "metric=%s\n", c->metrics[i]);
  fprintf(f, "quiet=%d\nresume=%d\nhelp=%d\nmarkdown=%d\nnetns=%d\nquick=%d\nforce=%d\n"
             "reuse_real=%d\npin=%d\n",
          c->quiet, c->resume, c->help, c->markdown, c->netns, c->quick, c->force,
          c->reuse_real, c->pin);
  fclose(f);
  return buf;
}

/* The lines of a that b lacks (caller frees). */
static char *lines_not_in(const char *a, const char *b) {
  char *out = calloc(strlen(a) + 1, 1);
  char padded[4096];
  snprintf(padded, sizeof padded, "\n%s", b);
  for (const char *s = a; *s;) {
    size_t n = strcspn(s, "\n") + 1;
    char line[512];
    snprintf(line, sizeof line, "\n%.*s", (int)n, s);
    if (!unit_contains(padded, line)) strncat(out, s, n);
    s += n;
  }
  return out;
}

/* Parses "pslab CMD <targets> <required option> <extra...>": the digest, or
 * that of an empty command line when it is refused; *rc its status. */
static char *parse_digest(size_t c, const char *const *extra, size_t n_extra, bool with_required,
                          int *rc) {
  const cli_command *cmd = &cli_commands[c];
  char *argv[16] = {"pslab", (char *)cmd->name};
  int argc = 2;
  if (cmd->words) argv[argc++] = strndup(cmd->words, strcspn(cmd->words, " "));
  if (cmd->target && (!cmd->words || cmd->many)) argv[argc++] = strdup("x");
  int owned = argc;
  if (with_required && cmd->required) {
    argv[argc++] = (char *)"--out"; /* the one required option there is */
    argv[argc++] = (char *)"d";
  }
  for (size_t i = 0; i < n_extra; i++) argv[argc++] = (char *)extra[i];
  cli parsed;
  quiet_stderr(true);
  *rc = cli_parse(&parsed, cmd, argc, argv);
  quiet_stderr(false);
  if (*rc != 0) {
    cli_free(&parsed);
    parsed = (cli){.cmd = cmd};
  }
  char *d = digest(&parsed);
  cli_free(&parsed);
  for (int i = 2; i < owned; i++) free(argv[i]);
  return d;
}

/* What --lng (with its sample value) changes on command c; NULL when c
 * refuses it. */
static char *effect(const cli_option *o, size_t c) {
  const char *extra[4] = {NULL};
  size_t n = 0;
  char name[64];
  snprintf(name, sizeof name, "--%s", o->lng);
  extra[n++] = name;
  for (size_t i = 0; o->metavar && i < sizeof samples / sizeof samples[0]; i++) {
    if (strcmp(samples[i][0], o->lng) != 0) continue;
    extra[n++] = samples[i][1];
    if (samples[i][2]) extra[n++] = samples[i][2];
  }
  CU_ASSERT_TRUE(!o->metavar || n > 1); /* a sample for every option with a value */
  bool required = cli_commands[c].required && strcmp(cli_commands[c].required, o->lng) == 0;
  int rc, base_rc;
  char *with = parse_digest(c, extra, n, !required, &rc);
  size_t skip = o->metavar ? 2 : 1; /* the option and its value */
  char *without = parse_digest(c, extra + skip, n - skip, !required, &base_rc);
  char *diff = rc == 0 ? lines_not_in(with, without) : NULL;
  free(with);
  free(without);
  return diff;
}

static void test_option_means_the_same_everywhere(void) {
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *o = &cli_options[i];
    char *first = NULL;
    for (size_t c = 0; c < CLI_N_COMMANDS; c++) {
      char *diff = effect(o, c);
      if (!takes(o, c)) {
        CU_ASSERT_PTR_NULL(diff); /* an unknown option there */
      } else if (!diff || !*diff) {
        fprintf(stderr, "--%s has no effect on %s\n", o->lng, cli_commands[c].name);
        CU_FAIL("an option without effect");
      } else if (!first) {
        first = strdup(diff);
      } else if (strcmp(first, diff) != 0) {
        fprintf(stderr, "--%s on %s:\n%sbut elsewhere:\n%s", o->lng, cli_commands[c].name,
                diff, first);
        CU_FAIL("an option that means two things");
      }
      free(diff);
    }
    free(first);
  }
}

/* The short name means the long one, and --lng=VALUE the same as --lng
 * VALUE. */
static void test_option_spellings(void) {
  int rc;
  const char *a[] = {"-o", "d", "-s", "x=1", "-m", "time_s", "-t", "f", "-q"};
  const char *b[] = {"--out=d", "--set=x=1", "--metrics=time_s", "--record-trace", "f",
                     "--quiet"};
  char *da = parse_digest(CLI_RUN, a, 9, true, &rc);
  CU_ASSERT_EQUAL(rc, 0);
  char *db = parse_digest(CLI_RUN, b, 6, true, &rc);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(da, db);
  free(da);
  free(db);
  const char *const refused[][2] = {{"--quiet=1", NULL}, {"--set", NULL}, {"--repeats", "0"},
                                    {"--rate", "1gbit"}, {"--outx", "d"}, {"-x", NULL},
                                    {"--timeout", "0"}, {"--timeout", "5s"}};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    size_t c = strcmp(refused[i][0], "--rate") == 0 ? CLI_VALIDATE : CLI_RUN;
    free(parse_digest(c, refused[i], refused[i][1] ? 2 : 1, true, &rc));
    CU_ASSERT_EQUAL(rc, EXP_EXIT_USAGE);
  }
  free(parse_digest(CLI_KEYGEN, NULL, 0, false, &rc));
  CU_ASSERT_EQUAL(rc, EXP_EXIT_USAGE); /* keygen without its --out */
}

PSLAB_SUITE("cli", {"tables are consistent", test_tables_consistent},
            {"--help lists exactly a command's options", test_help_lists_options},
            {"pslab --help lists every command", test_main_help_lists_commands},
            {"completion offers exactly a command's options", test_completion_matches_table},
            {"an option means the same on every command", test_option_means_the_same_everywhere},
            {"short, long and --long=VALUE spellings", test_option_spellings})
