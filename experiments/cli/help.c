/*
 * What the `pslab` command prints about itself, made from its command and
 * options tables (cli.h): usage lines, the options part of each
 * --help (wrapped to 79 columns, each option's help beside its name),
 * `pslab --help`'s list of commands, usage errors, and the bash completion
 * script of `pslab completion bash`.
 */
#include "experiments/cli/cli.h"

#include <stdint.h>
#include <string.h>

#define WIDTH 79    /* columns of help text */
#define HEAD_MAX 26 /* the column of an option's help, at most */

/* Writes words and tokens, breaking lines before WIDTH and indenting the
 * next line to col; at is the current column. */
typedef struct {
  FILE *f;
  size_t at, col, width;
} pen;

static void pen_word(pen *p, const char *w, size_t n) {
  if (p->at > p->col && p->at + 1 + n > p->width) {
    fprintf(p->f, "\n%*s", (int)p->col, "");
    p->at = p->col;
  } else if (p->at > p->col) {
    fputc(' ', p->f);
    p->at++;
  }
  fwrite(w, 1, n, p->f);
  p->at += n;
}

/* Pads from column at to col (on a new line when that leaves fewer than gap
 * spaces), then text, wrapped at col. */
static void pen_text(FILE *f, size_t at, size_t col, size_t gap, const char *text) {
  if (at + gap > col) {
    fputc('\n', f);
    at = 0;
  }
  fprintf(f, "%*s", (int)(col - at), "");
  pen p = {f, col, col, WIDTH};
  for (const char *s = text; *s;) {
    size_t n = strcspn(s, " ");
    if (n) pen_word(&p, s, n);
    s += n + (s[n] == ' ');
  }
  fputc('\n', f);
}

static bool takes(const cli_option *o, const cli_command *cmd) {
  return o->commands & CLI_ON(cli_command_of(cmd));
}

/* ------------------------------------------------------------- usage */

/* cmd's options as usage tokens: "[--out DIR]", "[--set PATH=VALUE]...", a
 * required one bare. */
static void usage_options(pen *p, const cli_command *cmd) {
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *o = &cli_options[i];
    if (!takes(o, cmd) || strcmp(o->lng, "help") == 0) continue;
    const char *metavar, *help;
    cli_option_wording(o, cmd, &metavar, &help);
    bool required = cmd->required && strcmp(cmd->required, o->lng) == 0;
    char tok[128];
    int n = snprintf(tok, sizeof tok, "%s--%s%s%s%s%s", required ? "" : "[", o->lng,
                     metavar ? " " : "", metavar ? metavar : "", required ? "" : "]",
                     o->many ? "..." : "");
    pen_word(p, tok, (size_t)n < sizeof tok ? (size_t)n : sizeof tok - 1);
  }
}

void cli_print_usage(FILE *f, const cli_command *cmd, bool one_line) {
  int at = fprintf(f, "usage: pslab %s ", cmd->name);
  pen p = {f, (size_t)at, (size_t)at, one_line ? SIZE_MAX : WIDTH};
  for (const char *s = cmd->synopsis; *s;) {
    size_t n = strcspn(s, " \n");
    if (n == 1 && *s == '@')
      usage_options(&p, cmd);
    else if (n)
      pen_word(&p, s, n);
    s += n;
    if (*s == '\n') { /* another usage line: after " | ", or below the first */
      if (one_line) {
        p.at += (size_t)fprintf(f, " | pslab %s ", cmd->name);
      } else {
        fputc('\n', f);
        p.at = (size_t)fprintf(f, "       pslab %s ", cmd->name);
      }
      p.col = p.at;
    }
    if (*s) s++;
  }
  fputc('\n', f);
}

int cli_usage_error(const cli_command *cmd, const char *what, const char *arg) {
  fprintf(stderr, "pslab%s%s: %s%s\n", cmd ? " " : "", cmd ? cmd->name : "", what,
          arg ? arg : "");
  if (cmd)
    cli_print_usage(stderr, cmd, true);
  else
    fputs("usage: pslab <command> [options]\n", stderr);
  fprintf(stderr, "Try 'pslab %s%s--help' for more.\n", cmd ? cmd->name : "", cmd ? " " : "");
  return EXP_EXIT_USAGE;
}

/* -------------------------------------------------------------- help */

/* "  -o, --out DIR" or "      --backend sim|real" into buf; its length. */
static size_t option_head(char *buf, size_t n, const cli_option *o, const cli_command *cmd) {
  const char *metavar, *help;
  cli_option_wording(o, cmd, &metavar, &help);
  int len = snprintf(buf, n, "  %c%c%s--%s%s%s", o->shrt ? '-' : ' ', o->shrt ? o->shrt : ' ',
                     o->shrt ? ", " : "  ", o->lng, metavar ? " " : "", metavar ? metavar : "");
  return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

static void print_options(FILE *f, const cli_command *cmd) {
  char head[128];
  size_t col = 0;
  for (size_t i = 0; i < cli_n_options; i++) {
    size_t len = takes(&cli_options[i], cmd) ? option_head(head, sizeof head, &cli_options[i], cmd)
                                              : 0;
    if (len + 2 > col) col = len + 2;
  }
  if (col > HEAD_MAX) col = HEAD_MAX; /* a longer head has its help below */
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *o = &cli_options[i];
    if (!takes(o, cmd)) continue;
    const char *metavar, *help;
    cli_option_wording(o, cmd, &metavar, &help);
    size_t len = option_head(head, sizeof head, o, cmd);
    fputs(head, f);
    pen_text(f, len, col, 2, help);
  }
}

void cli_print_help(FILE *f, const cli_command *cmd) {
  cli_print_usage(f, cmd, false);
  fprintf(f, "\n%s\nOptions:\n", cmd->about);
  print_options(f, cmd);
  fprintf(f, "\n%s", cmd->after);
}

void cli_print_main_help(FILE *f) {
  fprintf(f, "usage: pslab <command> [options]\n\n%s\nCommands:\n", cli_main_about);
  for (size_t i = 0; i < CLI_N_COMMANDS; i++) {
    const cli_command *c = &cli_commands[i];
    int len = fprintf(f, "  %s%s%s", c->name, *c->args ? " " : "", c->args);
    pen_text(f, (size_t)len, 15, 1, c->summary);
  }
  fputs("  help [CMD]   this help, or the help of a command\n"
        "\n"
        "Options:\n"
        "  -h, --help   this help; `pslab CMD --help` explains a command's options\n"
        "\n",
        f);
  fputs(cli_main_after, f);
}

/* -------------------------------------------------------- completion */

/* cmd's options (only those that take a value, when values), separated by
 * spaces: "--out -o --set -s ...". */
static void option_words(FILE *f, const cli_command *cmd, bool values) {
  const char *sep = "";
  for (size_t i = 0; i < cli_n_options; i++) {
    const cli_option *o = &cli_options[i];
    if (!takes(o, cmd) || (values && !o->metavar)) continue;
    fprintf(f, "%s--%s", sep, o->lng);
    if (o->shrt) fprintf(f, " -%c", o->shrt);
    sep = " ";
  }
}

static const char completion_head[] =
    "# bash completion for pslab, made by `pslab completion bash` from its\n"
    "# tables of commands and options. Load it with: source <(pslab completion bash)\n"
    "_pslab() {\n"
    "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    "  local opts=\"\" values=\"\" words=\"\"\n"
    "  local commands=\"";

static const char completion_body[] =
    "\"\n"
    "  COMPREPLY=()\n"
    "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
    "    COMPREPLY=($(compgen -W \"$commands -h --help\" -- \"$cur\"))\n"
    "    return\n"
    "  fi\n"
    "  case ${COMP_WORDS[1]} in\n";

static const char completion_values[] =
    "  esac\n"
    "  case \" $values \" in\n"
    "    *\" $prev \"*)\n"
    "      if [ \"$prev\" = --backend ]; then\n"
    "        COMPREPLY=($(compgen -W \"";

static const char completion_tail[] =
    "\" -- \"$cur\"))\n"
    "      else\n"
    "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "      fi\n"
    "      return ;;\n"
    "  esac\n"
    "  if [[ $cur == -* ]]; then\n"
    "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
    "  elif [ -n \"$words\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
    "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
    "  else\n"
    "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "  fi\n"
    "}\n"
    "complete -o filenames -F _pslab pslab\n";

/* One line per command: its options, those that take a value, its words. */
static void completion_cases(FILE *f) {
  for (size_t i = 0; i < CLI_N_COMMANDS; i++) {
    const cli_command *cmd = &cli_commands[i];
    fprintf(f, "    %s) opts=\"", cmd->name);
    option_words(f, cmd, false);
    fprintf(f, "\" values=\"");
    option_words(f, cmd, true);
    fprintf(f, "\" words=\"%s\" ;;\n", cmd->words ? cmd->words : "");
  }
  fputs("    help) words=\"$commands\" ;;\n", f);
}

void cli_print_bash_completion(FILE *f) {
  size_t n;
  const exp_backend *backends = exp_backends(&n);
  fputs(completion_head, f);
  for (size_t i = 0; i < CLI_N_COMMANDS; i++) fprintf(f, "%s ", cli_commands[i].name);
  fputs("help", f);
  fputs(completion_body, f);
  completion_cases(f);
  fputs(completion_values, f);
  for (size_t i = 0; i < n; i++) fprintf(f, "%s%s", i ? " " : "", backends[i].name);
  fputs(completion_tail, f);
}
