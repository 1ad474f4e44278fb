/*
 * experiments/cli/: the `pslab` command line as two tables, a
 * command table (name, summary, what it names on the command line, its help
 * prose) and an options table (long name, short name, value, the commands
 * that take the option, help text, where the parsed value goes). Parsing,
 * every usage line, the options part of every --help, `pslab --help`'s list
 * of commands and the bash completion script are made from them, so an
 * option reads and means the same on every command that takes it
 * (tests/test_cli.c checks it). The cli room's one header: for its files
 * only (main.c, options.c, commands.c, help.c) and their tests.
 */
#ifndef PSLAB_EXPERIMENTS_CLI_H
#define PSLAB_EXPERIMENTS_CLI_H

#include "experiments/experiment.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The commands, in the order `pslab --help` lists them; an index of
 * cli_commands and a bit of an option's set of commands. */
typedef enum {
  CLI_RUN,
  CLI_CHECK,
  CLI_NODE,
  CLI_KEYGEN,
  CLI_PLOT,
  CLI_MERGE,
  CLI_METRICS,
  CLI_POLICIES,
  CLI_TRACE,
  CLI_CALIBRATE,
  CLI_VALIDATE,
  CLI_ADVISE,
  CLI_COMPLETION,
  CLI_N_COMMANDS
} cli_command_id;

#define CLI_ON(id) (1u << (id))
#define CLI_EVERY ((1u << CLI_N_COMMANDS) - 1u)

typedef struct {
  const char *name;
  const char *args;     /* beside the name in `pslab --help` ("SPEC"), or "" */
  const char *summary;  /* its line in `pslab --help` */
  const char *synopsis; /* the usage after "pslab NAME ": "@" stands for the
                           options, a newline starts another usage line */
  const char *target;   /* what it names on the command line ("SPEC"), or
                           NULL: nothing */
  bool many;            /* several of them */
  const char *required; /* the long name of an option it cannot do without */
  const char *implied;  /* a --set it always applies after the user's
                           ("backend=real"), as --backend would */
  const char *words;    /* fixed first arguments, for completion ("stats
                           merge"), or NULL */
  const char *about;    /* help between the usage and the options */
  const char *after;    /* help after the options: exit status, references */
} cli_command;

extern const cli_command cli_commands[CLI_N_COMMANDS];
/* What `pslab --help` says before and after its list of commands. */
extern const char cli_main_about[], cli_main_after[];

typedef struct cli cli;

/* How an option's value is stored. */
typedef enum {
  CLI_FLAG,   /* a bool at field, set to true; no value */
  CLI_STRING, /* the value (an argv string) in the const char * at field */
  CLI_COUNT,  /* an integer from 1 to max, in the uint32_t at field */
  CLI_CALL    /* call(c, value) stores it, or reports a usage error */
} cli_kind;

typedef struct {
  const char *lng;     /* "out" for --out */
  char shrt;           /* 'o' for -o, or 0 */
  const char *metavar; /* the value's name ("DIR"), or NULL for a flag */
  unsigned commands;   /* CLI_ON(CLI_RUN) | ...: the commands that take it */
  cli_kind kind;
  size_t field;        /* offsetof(cli, ...) for FLAG, STRING, COUNT */
  uint32_t max;        /* COUNT's largest value */
  int (*call)(cli *c, const char *value); /* CALL: 0 or an exit status */
  bool many;           /* may be repeated (usage shows "...") */
  const char *help;    /* what it does, one paragraph */
} cli_option;

/* Where an option reads differently on some commands (a default of their
 * own, a file where others take a directory): the wording there. */
typedef struct {
  const char *lng;
  unsigned commands;
  const char *metavar; /* NULL: the option's */
  const char *help;
} cli_option_text;

extern const cli_option cli_options[];
extern const size_t cli_n_options;
extern const cli_option_text cli_option_texts[];
extern const size_t cli_n_option_texts;

/* A parsed command line. Strings point into argv unless marked owned. */
struct cli {
  const cli_command *cmd;
  const char *target;   /* SPEC or DIR: the first of targets */
  const char **targets; /* argv strings */
  size_t n_targets;
  const char *out;
  const char *coordinator, *coordinator_file;
  const char **sets;    /* argv strings, then the options that are --sets */
  size_t n_sets;
  char *backend_set;    /* "backend=<B>" or the command's implied set, owned */
  char *key_set;        /* "cluster.key_file=\"<absolute FILE>\"", owned */
  char *repeats_set;    /* "repeats=<N>", owned; the last of sets when given */
  exp_shard shard;      /* {0, 0}: every run */
  char **metrics;       /* --metrics, owned (exp_metrics_parse), or NULL */
  const char *record_trace;
  const char *save_params; /* --save-params DIR */
  const char *svg;      /* trace stats --svg */
  uint32_t nodes;       /* trace stats --nodes (0: the trace's) */
  const char *profile;  /* validate and calibrate --profile FILE */
  const char *workload; /* calibrate --workload SPEC */
  uint32_t repeats;     /* --repeats (0: the spec's, or validate's default) */
  const char *rate;     /* validate --rate */
  double timeout_s;     /* --timeout SECONDS (0: none) */
  const char *timeout;  /* its argv string */
  double budget_s;      /* advise --budget SECONDS (0: the default) */
  const char *candidates; /* advise --candidates FILE */
  uint32_t confirm;     /* advise --confirm N (0: none) */
  uint32_t jobs;        /* advise --jobs N (0: the number of cores) */
  const char *metric;   /* advise --metric M */
  const char *fidelity; /* advise --fidelity DIR */
  const char *screen;   /* advise --screen MODEL */
  uint64_t seen;        /* bit i: cli_options[i] was given */
  bool quiet, resume, help, markdown, netns, quick, force, reuse_real, pin;
};

const cli_command *cli_command_find(const char *name);
cli_command_id cli_command_of(const cli_command *cmd);
/* The option named --lng, whichever commands take it, or NULL. */
const cli_option *cli_option_find(const char *lng);
/* How opt reads on cmd: its value's name (NULL for a flag) and help. */
void cli_option_wording(const cli_option *opt, const cli_command *cmd, const char **metavar,
                        const char **help);

/* Reads argv[2..] (argv[1] names cmd) into *c, which it clears first.
 * Returns 0, or an exit status after reporting on stderr; cli_free either
 * way. */
int cli_parse(cli *c, const cli_command *cmd, int argc, char **argv);
void cli_free(cli *c);

/* "pslab CMD: WHAT ARG", the usage line and a pointer to --help, on stderr;
 * returns EXP_EXIT_USAGE. cmd NULL: about pslab itself. */
int cli_usage_error(const cli_command *cmd, const char *what, const char *arg);
/* The usage of cmd: wrapped lines after "usage: ", or one line. */
void cli_print_usage(FILE *f, const cli_command *cmd, bool one_line);
/* `pslab CMD --help`, and `pslab --help`. */
void cli_print_help(FILE *f, const cli_command *cmd);
void cli_print_main_help(FILE *f);
/* A bash completion script: commands, their fixed words, their options,
 * file names (or backends) for the options' values. */
void cli_print_bash_completion(FILE *f);

#endif
