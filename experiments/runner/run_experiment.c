/*
 * The runner: runs each run of a valid spec in a child process and writes
 * the results as they come.
 *
 * SimGrid holds one simulation per process, and a simulation that crashes
 * must not take the experiment with it, so every run is a fork: the child
 * builds the typed cluster, runs the run through its backend's entry in the
 * backend table (backends/), and sends its metrics back through a pipe;
 * the parent times it, records it and goes on to the next run. On the real
 * backend the child forks every node of the run on this machine, or, under
 * `pslab node`, is this process's node of the run; then only rank 0 records
 * results, and the other ranks only run and report their failures. The
 * child's stdout and stderr (SimGrid's log, a sanitizer report, the real
 * nodes' messages) go to DIR/logs/run-<n>.log, kept only when not empty, so
 * a failure can be read afterwards and the progress line stays clean.
 *
 * Which runs run: those of the shard asked for (every run by default) and,
 * when resuming, not those whose successful record the directory already
 * holds (results_dir.c reads it back). The end of the experiment (summary.csv,
 * the table, the plots) is exp_results_finish, shared with `pslab merge`.
 *
 * A record that runs.jsonl refuses (a full disk) stops the experiment: no
 * further run starts, since none could be recorded; runs.csv and
 * summary.csv are made again from what runs.jsonl holds (or removed when
 * they cannot be written), and the last line says why it stopped and how
 * many runs are recorded.
 *
 * Signals: SIGINT or SIGTERM to the runner goes to every process of the run
 * under way (the run's child leads a process group that its own children,
 * scheduler simulations and node processes, join), which end; what does not
 * end within a grace second is killed. Every forked process also dies with
 * its parent (run_die_with_parent). The interrupted run is not recorded
 * (runs.jsonl keeps the runs finished before it, so --resume goes on from
 * there), no further run starts, and the runner returns 128 + the signal.
 *
 * Child to parent, one line each:
 *   P <simulated seconds> <fraction done>     progress (real: wall seconds)
 *   M <metrics as one-line JSON>              the result
 *   E <message>                               the backend's error
 */
#include "experiments/runner/runner.h"
#include "experiments/backends/backends.h"
#include "experiments/results/results.h"
#include "workloads/workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

void exp_runner_options_default(exp_runner_options *o) {
  *o = (exp_runner_options){.progress_tty = -1, .progress_period_s = EXP_PROGRESS_PERIOD_S};
}

/* --------------------------------------------------------- progress */

typedef struct {
  FILE *log;
  const char *prefix; /* before every line: "sim: ", or "" */
  bool quiet, tty;
  size_t total;
  uint32_t run;
  char label[72];
  double drawn;   /* when the line was last redrawn (monotonic seconds) */
  double period;  /* not on a terminal: a line per run this often (seconds) */
  double started; /* when the run started */
  double printed; /* when its last line (not on a terminal) was printed */
  /* A calibration's (exp_run_probe): every report, with the wall seconds
   * since the run started; NULL: none. */
  exp_probe_fn sink;
  void *sink_ctx;
  bool enough; /* the sink has seen enough: the run is ended */
} progress;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_label(progress *pg, const exp_run *run, const char *name) {
  char *label = exp_sweep_label(run->sweep);
  const char *l = label && *label ? label : name;
  size_t len = strlen(l);
  snprintf(pg->label, sizeof pg->label, "%.*s%s", 64, l, len > 64 ? "..." : "");
  free(label);
  pg->run = run->run;
}

static void progress_begin(progress *pg, const exp_run *run, const char *name) {
  progress_label(pg, run, name);
  pg->started = pg->printed = now_s();
  if (pg->quiet) return;
  if (pg->tty)
    fprintf(pg->log, "\r\033[K%s[run %u/%zu] %s starting", pg->prefix, pg->run, pg->total,
            pg->label);
  else
    fprintf(pg->log, "%s[run %u/%zu] %s: started\n", pg->prefix, pg->run, pg->total,
            pg->label);
  fflush(pg->log);
}

static void progress_skip(progress *pg, const exp_run *run, const char *name) {
  progress_label(pg, run, name);
  if (pg->quiet) return;
  fprintf(pg->log, "%s%s[run %u/%zu] %s: skipped, already in runs.jsonl\n",
          pg->tty ? "\r\033[K" : "", pg->prefix, pg->run, pg->total, pg->label);
  fflush(pg->log);
}

/* Not on a terminal, a line per run every pg->period seconds (when the
 * run reports progress), so that a log shows a long run moving. */
static void progress_line(progress *pg, double sim_t, double fraction) {
  double now = now_s();
  if (now < pg->printed + pg->period || fraction >= 1) return;
  pg->printed = now;
  fprintf(pg->log, "%s[run %u/%zu] %s: %.0f%% done, time %.4g s, wall %.1f s\n", pg->prefix,
          pg->run, pg->total, pg->label, 100 * fraction, sim_t, now - pg->started);
  fflush(pg->log);
}

static void progress_update(progress *pg, double sim_t, double fraction, double cpu_s) {
  if (pg->sink && pg->sink(pg->sink_ctx, now_s() - pg->started, sim_t, fraction, cpu_s))
    pg->enough = true;
  if (pg->quiet) return;
  if (!pg->tty) {
    progress_line(pg, sim_t, fraction);
    return;
  }
  double now = now_s();
  if (now < pg->drawn + 0.1 && fraction < 1) return; /* a terminal needs no more */
  pg->drawn = now;
  fprintf(pg->log, "\r\033[K%s[run %u/%zu] %s sim t=%.4gs %.0f%%", pg->prefix, pg->run,
          pg->total, pg->label, sim_t, 100 * fraction);
  fflush(pg->log);
}

static void progress_end(progress *pg, const cJSON *metrics, const char *error,
                         double wall) {
  if (pg->tty && (!pg->quiet || error)) fputs("\r\033[K", pg->log);
  if (error) {
    fprintf(pg->log, "%s[run %u/%zu] %s: FAILED: %s\n", pg->prefix, pg->run, pg->total,
            pg->label, error);
  } else if (!pg->quiet && !pg->tty) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(metrics, "time_s");
    char diverged[48] = "";
    int epoch = exp_metrics_diverged(metrics);
    if (epoch) snprintf(diverged, sizeof diverged, "diverged @ epoch %d, ", epoch);
    fprintf(pg->log, "%s[run %u/%zu] %s: done, %stime %.6g s, wall %.3f s\n", pg->prefix,
            pg->run, pg->total, pg->label, diverged, cJSON_IsNumber(t) ? t->valuedouble : NAN,
            wall);
  }
  fflush(pg->log);
}

/* ---------------------------------------------------------- signals */

/* What runs may be shared with the handlers: the signal that interrupted
 * the experiment (0: none) and the process group of the run under way. */
static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t running_group;

#define GRACE_S 1 /* after the signal, before SIGKILL */

static void on_alarm(int sig) {
  (void)sig;
  pid_t g = running_group;
  if (g > 0) kill(-g, SIGKILL);
}

static void on_interrupt(int sig) {
  int saved = errno;
  pid_t g = running_group;
  if (interrupted && g > 0) {
    kill(-g, SIGKILL); /* a second signal: no more grace */
  } else if (g > 0) {
    kill(-g, sig);
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL); /* async-signal-safe, as are kill and alarm */
    alarm(GRACE_S);
  }
  if (!interrupted) interrupted = sig;
  errno = saved;
}

typedef struct {
  struct sigaction intr, term, alrm;
} saved_signals;

static void signals_catch(saved_signals *old) {
  interrupted = 0;
  running_group = 0;
#if defined(__linux__)
  /* Orphans of the run (a node whose launcher died first) come back here to
   * be reaped (run_in_child), not to init. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  struct sigaction sa = {.sa_handler = on_interrupt, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGALRM, NULL, &old->alrm);
  sigaction(SIGINT, &sa, &old->intr);
  sigaction(SIGTERM, &sa, &old->term);
}

static void signals_restore(const saved_signals *old) {
  sigaction(SIGINT, &old->intr, NULL);
  sigaction(SIGTERM, &old->term, NULL);
  if (interrupted) {
    alarm(0);
    sigaction(SIGALRM, &old->alrm, NULL);
  }
}

/* ------------------------------------------------------------ child */

static void write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    buf += n;
    len -= (size_t)n;
  }
}

static void send_line(int fd, char tag, const char *text) {
  char head[2] = {tag, ' '};
  write_all(fd, head, 2);
  for (const char *s = text; *s;) {
    size_t n = strcspn(s, "\r\n");
    write_all(fd, s, n);
    s += n;
    if (*s) {
      write_all(fd, " ", 1); /* a message stays one line */
      s++;
    }
  }
  write_all(fd, "\n", 1);
}

typedef struct {
  int fd;
  double last, step; /* the last fraction sent; the least change sent */
} child_progress;

static void child_on_progress(void *ctx, double sim_t, double fraction) {
  child_progress *cp = ctx;
  /* About 200 updates per run are plenty for a progress line. */
  if (fraction < cp->last + cp->step && fraction < 1.0) return;
  cp->last = fraction;
  /* With the CPU seconds of this process so far: the estimate's calibration
   * counts them, which another process's load does not change. */
  struct timespec cpu;
  double cpu_s = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0
                     ? (double)cpu.tv_sec + 1e-9 * (double)cpu.tv_nsec
                     : -1;
  char line[128];
  int n = snprintf(line, sizeof line, "P %.17g %.17g %.9g\n", sim_t, fraction, cpu_s);
  if (n > 0) write_all(cp->fd, line, (size_t)n);
}

/* What a child runs. */
typedef struct {
  const exp_spec *spec;
  const exp_run *run;
  const exp_backend *backends;
  size_t n_backends;
  const exp_node_role *node; /* pslab node, or NULL */
  bool want_progress;
  const char *trace_path;    /* --record-trace: this run's trace, or NULL */
  const char *params_dir;    /* --save-params: this run's directory, or NULL */
  bool force;                /* --force: no memory check */
  double timeout_s;          /* --timeout: the run is ended after it; 0: never */
  bool every_report;         /* send every progress report (a calibration) */
  const char *backend;       /* run it on this backend, not the spec's; NULL: the spec's */
} child_job;

/* MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read (then
 * runs are not checked, as on a system without it). */
static uint64_t memory_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
  fclose(f);
  return (uint64_t)kib * 1024;
}

/* The child's standard output and error go to its log (when it has one). */
static void log_to(const char *log_path) {
  int log = log_path ? open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  if (log < 0) return;
  dup2(log, STDOUT_FILENO);
  dup2(log, STDERR_FILENO);
  close(log);
}

static noreturn void child_main(const child_job *job, int fd, const char *log_path) {
  log_to(log_path);
  exp_errors e;
  exp_errors_init(&e);
  exp_cluster cluster;
  const cJSON *config = job->run->config;
  if (!exp_cluster_parse(cJSON_GetObjectItemCaseSensitive(config, "cluster"),
                         exp_spec_dir(job->spec), &cluster, &e)) {
    send_line(fd, 'E', e.count ? e.lines[0] : "invalid cluster");
    _exit(1);
  }
  exp_cluster_for_policy(&cluster, cJSON_GetObjectItemCaseSensitive(config, "policy"));
  child_progress cp = {fd, -1, job->every_report ? 0 : 0.005};
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(config, "backend");
  const char *name = job->backend ? job->backend : cJSON_IsString(b) ? b->valuestring : "sim";
  const exp_backend *backend = exp_backend_find(job->backends, job->n_backends, name);
  if (!backend) {
    send_line(fd, 'E', "backend: no such backend (the spec was validated against another "
                       "table)");
    _exit(1);
  }
  exp_backend_job bj = {
      .cluster = &cluster,
      .workload = cJSON_GetObjectItemCaseSensitive(config, "workload"),
      .policy = cJSON_GetObjectItemCaseSensitive(config, "policy"),
      .consistency = cJSON_GetObjectItemCaseSensitive(config, "consistency"),
      .stages = cJSON_GetObjectItemCaseSensitive(config, "stages"),
      .base_dir = exp_spec_dir(job->spec),
      .seed = job->run->seed,
      .run = job->run->run,
      .progress = job->want_progress ? child_on_progress : NULL,
      .progress_ctx = &cp,
      .node = job->node,
      .trace_path = job->trace_path,
      .params_dir = job->params_dir,
      .memory_limit = job->force ? 0 : memory_available(),
  };
  char err[2048] = "";
  /* "workers": "auto" is the scheduler's, before the backend sees the run. */
  cJSON *resolved = NULL, *records = NULL;
  if (exp_stages_have_auto(bj.stages)) {
    if (!(resolved = exp_stages_schedule(&bj, &records, err, sizeof err))) {
      send_line(fd, 'E', err);
      _exit(1);
    }
    bj.stages = resolved;
  }
  cJSON *metrics = backend->run(&bj, err, sizeof err);
  if (metrics && records) exp_stages_attach(metrics, records);
  char *text = metrics ? cJSON_PrintUnformatted(metrics) : NULL;
  if (!text) {
    send_line(fd, 'E', *err ? err : "the simulation failed without saying why");
    _exit(1);
  }
  send_line(fd, 'M', text);
  _exit(0);
}

/* ----------------------------------------------------------- parent */

typedef struct {
  cJSON *metrics;
  char *error;
  bool timed_out;
} outcome;

static void child_line(const char *line, progress *pg, outcome *out) {
  double t, f, cpu;
  int got = line[0] == 'P' ? sscanf(line, "P %lf %lf %lf", &t, &f, &cpu) : 0;
  if (got >= 2) {
    progress_update(pg, t, f, got == 3 && cpu >= 0 ? cpu : NAN);
  } else if (line[0] == 'M' && !out->metrics) {
    out->metrics = cJSON_Parse(line + 1);
    if (!cJSON_IsObject(out->metrics) && !out->error)
      out->error = strdup("the simulation sent metrics that are not a JSON object");
  } else if (line[0] == 'E' && !out->error) {
    out->error = strdup(line[1] ? line + 2 : "");
  }
}

/* Waits until fd can be read or the deadline (monotonic seconds; 0: none)
 * has passed: false when it has. */
static bool wait_readable(int fd, double deadline) {
  while (deadline > 0) {
    double left = deadline - now_s();
    if (left <= 0) return false;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, (int)ceil(left * 1000));
    if (n > 0 || (n < 0 && errno != EINTR)) return true;
  }
  return true;
}

/* Reads the child's lines from fd until it closes the pipe, or until the
 * deadline (0: none) or a calibration's sink has seen enough: false when
 * one of those came first. */
static bool read_child(int fd, progress *pg, outcome *out, double deadline) {
  exp_buf b = {0};
  bool in_time = true;
  char chunk[4096];
  for (;;) {
    if (pg->enough || !(in_time = wait_readable(fd, deadline))) {
      in_time = false;
      break;
    }
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    exp_buf_add(&b, chunk, (size_t)got);
    char *text = b.failed ? NULL : b.data, *nl;
    while (text && (nl = memchr(text, '\n', b.len - (size_t)(text - b.data)))) {
      *nl = '\0';
      child_line(text, pg, out);
      text = nl + 1;
    }
    if (text && text != b.data) { /* keep what is left of a line */
      b.len -= (size_t)(text - b.data);
      memmove(b.data, text, b.len + 1);
    }
  }
  if (in_time && b.len) child_line(b.data, pg, out);
  exp_buf_free(&b);
  return in_time;
}

/* The last non-empty line of a log, to show with a crash. */
static void last_log_line(const char *path, char *buf, size_t n) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  char *line = NULL;
  size_t cap = 0;
  while (f && getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\r\n")] = '\0';
    if (*line) snprintf(buf, n, "%s", line);
  }
  free(line);
  if (f) fclose(f);
}

/* Why a child that sent no metrics ended. */
static char *explain_exit(int status, const char *log_path) {
  char why[128], last[256];
  if (WIFSIGNALED(status))
    snprintf(why, sizeof why, "the simulation crashed (signal %d, %s)",
             WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(why, sizeof why, "the simulation exited with status %d without "
             "sending metrics", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  last[0] = '\0';
  if (log_path) last_log_line(log_path, last, sizeof last);
  exp_buf b = {0};
  exp_buf_puts(&b, why);
  if (*last) exp_buf_printf(&b, "; its log ends with: %s", last);
  return exp_buf_take(&b);
}

/* Forks the run's child, which runs child_main writing to fds[1], in a
 * process group of its own that dies with this process. Returns its pid
 * (the group's), or -1. */
static pid_t fork_child(const child_job *job, const int fds[2], const char *log_path) {
  fflush(NULL); /* or the child's copies of stdio buffers may be written twice */
  /* Held back across fork(): the child starts with the default actions, and
   * the parent knows the child's group before a signal can ask for it. */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigprocmask(SIG_BLOCK, &block, &old);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0); /* a group of its own, which its children join */
    run_die_with_parent(parent);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(fds[0]);
    child_main(job, fds[1], log_path);
  }
  if (pid > 0) {
    setpgid(pid, pid); /* whichever of the two runs first */
    running_group = pid;
    if (interrupted) kill(-pid, SIGKILL); /* the signal came as it forked */
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return pid;
}

/* Waits for the child pid to end and reaps it with its group; its exit
 * status. */
static int reap_group(pid_t pid) {
  /* Ended, not yet reaped: its pid, and so its group's, cannot be reused
   * yet. Whatever of the group is left (nothing, normally; after a signal,
   * processes whose parent died first, handed to this one as their
   * subreaper) is killed and reaped with it, so none is left behind, not
   * even as a zombie. */
  siginfo_t info;
  while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) continue;
  running_group = 0;
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  for (int st; waitpid(-pid, &st, 0) > 0 || errno == EINTR;) continue;
  return status;
}

static outcome run_in_child(const child_job *job, progress *pg, const char *log_path) {
  outcome out = {0};
  int fds[2];
  if (pipe(fds) != 0) {
    out.error = strdup("cannot create a pipe for the run");
    return out;
  }
  pid_t pid = fork_child(job, fds, log_path);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    out.error = strdup("cannot fork a process for the run");
    return out;
  }
  double deadline = job->timeout_s > 0 ? now_s() + job->timeout_s : 0;
  bool in_time = read_child(fds[0], pg, &out, deadline);
  close(fds[0]);
  if (!in_time) { /* the run's group ends here; reap_group reaps it */
    kill(-pid, SIGKILL);
    out.timed_out = true;
    cJSON_Delete(out.metrics);
    out.metrics = NULL;
    free(out.error);
    char why[64];
    snprintf(why, sizeof why, "timed out after %g s", job->timeout_s);
    out.error = strdup(why);
  }
  int status = reap_group(pid);
  if (!out.metrics && !out.error) out.error = explain_exit(status, log_path);
  if (out.error) {
    cJSON_Delete(out.metrics);
    out.metrics = NULL;
  }
  return out;
}

/* ------------------------------------------------------ calibration */

int exp_run_probe(const exp_spec *spec, const exp_run *run, double budget_s,
                  exp_probe_fn on_report, void *ctx, exp_probe_result *res) {
  size_t n_backends;
  const exp_backend *backends = exp_backends(&n_backends);
  child_job job = {.spec = spec, .run = run, .backends = backends, .n_backends = n_backends,
                   .want_progress = true, .timeout_s = budget_s, .every_report = true,
                   .backend = "sim"};
  progress pg = {.quiet = true, .sink = on_report, .sink_ctx = ctx, .started = now_s()};
  outcome out = run_in_child(&job, &pg, "/dev/null");
  res->elapsed_s = now_s() - pg.started;
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(out.metrics, "time_s");
  res->time_s = cJSON_IsNumber(t) ? t->valuedouble : NAN;
  int rc = out.metrics ? 1 : out.timed_out ? 0 : -1;
  snprintf(res->error, sizeof res->error, "%s", rc < 0 && out.error ? out.error : "");
  cJSON_Delete(out.metrics);
  free(out.error);
  return rc;
}

/* A whole simulated run for a search (`pslab advise`): as a probe, but its
 * metrics handed back. */
cJSON *exp_run_simulated(const exp_spec *spec, const exp_run *run, double timeout_s,
                         char *err, size_t errlen) {
  size_t n_backends;
  const exp_backend *backends = exp_backends(&n_backends);
  child_job job = {.spec = spec, .run = run, .backends = backends, .n_backends = n_backends,
                   .want_progress = false, .timeout_s = timeout_s, .backend = "sim"};
  progress pg = {.quiet = true, .started = now_s()};
  outcome out = run_in_child(&job, &pg, "/dev/null");
  if (!out.metrics) snprintf(err, errlen, "%s", out.error ? out.error : "the run failed");
  free(out.error);
  return out.metrics;
}

/* ----------------------------------------------------------- runner */

typedef struct {
  const exp_spec *spec;
  exp_runner_options o;
  char *dir;
  int jsonl;       /* runs.jsonl, opened O_APPEND */
  cJSON *records;  /* sorted by run number */
  bool *done;      /* resuming: done[r - 1] when run r's record was kept */
  size_t ran;      /* runs run */
  size_t failed;   /* of them, runs that failed */
  size_t diverged; /* of them, runs whose training diverged (not failed) */
  size_t skipped;  /* runs whose record was kept */
  bool io_failed;  /* a trace could not be written */
  int stopped;     /* why a record could not be written (errno): no more runs */
  uint32_t cut;    /* the run a signal interrupted (not recorded), or 0 */
  progress pg;
} runner;

static char *log_path_of(const runner *r, uint32_t run) {
  char name[64];
  snprintf(name, sizeof name, "logs/run-%u.log", run);
  return exp_join_path(r->dir, name);
}

static outcome run_child(runner *r, const exp_run *run, const char *log_path,
                         const char *trace_path, const char *params_dir) {
  child_job job = {r->spec, run, r->o.backends, r->o.n_backends, r->o.node,
                   !r->pg.quiet, trace_path, params_dir, r->o.force, r->o.timeout_s, false, NULL};
  return run_in_child(&job, &r->pg, log_path);
}

/* The directory run saves its parameters into, made if missing (NULL when
 * not saving; with *failed set and the reason in err when it cannot be
 * made or on no memory). */
static char *params_dir_of(const runner *r, const exp_run *run, bool *failed, char *err,
                           size_t errlen) {
  *failed = false;
  if (!r->o.save_params) return NULL;
  char name[32];
  snprintf(name, sizeof name, "run-%u", (unsigned)run->run);
  char *dir = exp_spec_runs(r->spec)->count == 1 ? strdup(r->o.save_params)
                                                 : exp_join_path(r->o.save_params, name);
  if (!dir) snprintf(err, errlen, "out of memory");
  if (!dir || exp_mkdir_p(dir, err, errlen) != 0) {
    *failed = true;
    free(dir);
    return NULL;
  }
  return dir;
}

/* ------------------------------------------------------------ traces */

char *exp_trace_run_path(const char *file, size_t runs, uint32_t run) {
  if (runs == 1) return strdup(file);
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base) dot = file + strlen(file);
  exp_buf b = {0};
  exp_buf_printf(&b, "%.*s-run%u%s", (int)(dot - file), file, (unsigned)run, dot);
  return exp_buf_take(&b);
}

/* The trace path of run (NULL when not recording, or on no memory). */
static char *trace_path_of(const runner *r, const exp_run *run) {
  if (!r->o.record_trace) return NULL;
  return exp_trace_run_path(r->o.record_trace, exp_spec_runs(r->spec)->count, run->run);
}

/* Workers of a run's cluster (its parts of a trace). */
static uint32_t run_workers(const exp_run *run) {
  const cJSON *n = exp_path_get(run->config, "cluster.nodes");
  const cJSON *w = exp_path_get(run->config, "cluster.workers_per_node");
  double nodes = cJSON_IsNumber(n) ? n->valuedouble : 1;
  double wpn = cJSON_IsNumber(w) ? w->valuedouble : 1;
  return (uint32_t)(nodes * wpn);
}

/* After a run that recorded a trace: its parts merged into the trace when
 * it succeeded, else removed. */
static void finish_trace(runner *r, const exp_run *run, const char *path, bool ok) {
  if (!ok) {
    wl_trace_remove_parts(path, run_workers(run));
    return;
  }
  char err[EXP_PATH_MAX + 512];
  if (wl_trace_merge(path, err, sizeof err) != 0) {
    fprintf(r->o.log, "pslab: run %u: trace not written: %s\n", run->run, err);
    r->io_failed = true;
  } else if (!r->o.quiet) {
    fprintf(r->o.log, "%s%s[run %u/%zu] trace in %s\n", r->pg.tty ? "\r\033[K" : "",
            r->pg.prefix, run->run, r->pg.total, path);
  }
}

/* After a run that saved its parameters into dir: says where, or removes
 * the parts a killed run left. */
static void finish_params(runner *r, const exp_run *run, const char *dir, bool ok) {
  if (!dir) return;
  const cJSON *n = exp_path_get(run->config, "cluster.nodes");
  if (!ok) wl_params_remove_parts(dir, cJSON_IsNumber(n) ? (uint32_t)n->valuedouble : 1);
  else if (!r->o.quiet)
    fprintf(r->o.log, "%s%s[run %u/%zu] parameters in %s\n", r->pg.tty ? "\r\033[K" : "",
            r->pg.prefix, run->run, r->pg.total, dir);
}

static exp_results results_of(const runner *r) {
  return (exp_results){r->records, exp_spec_plots(r->spec), r->o.metrics};
}

static void record_run(runner *r, const exp_run *run, outcome *out) {
  char err[EXP_PATH_MAX + 128];
  cJSON *rec = exp_record_new(exp_spec_name(r->spec), run, out->metrics, out->error);
  out->metrics = NULL;
  char why[256] = "out of memory";
  errno = ENOMEM;
  if (!rec || exp_jsonl_append_fd(r->jsonl, rec, why, sizeof why) != 0) {
    r->stopped = errno ? errno : EIO;
    fprintf(r->o.log, "pslab: run %u: cannot write its record to %s/runs.jsonl: %s\n",
            run->run, r->dir, why);
    cJSON_Delete(rec); /* runs.jsonl does not hold it: nor do the derived files */
    return;
  }
  r->diverged += exp_record_diverged(rec) != 0;
  exp_records_insert(r->records, rec);
  /* Failing here is no reason to stop: the record is kept, the file that
   * could not be written is removed, and the end writes both again. */
  exp_results res = results_of(r);
  if (exp_results_write(r->dir, &res, NULL, err, sizeof err) != 0)
    fprintf(r->o.log, "pslab: %s\n", err);
}

/* After a record could not be written: the records are what runs.jsonl
 * holds (a record whose line the disk took but whose sync failed is
 * there), so that the derived files are made from it and nothing else. */
static void reread_records(runner *r) {
  exp_errors w, e;
  exp_errors_init(&w);
  exp_errors_init(&e);
  char *path = exp_join_path(r->dir, "runs.jsonl");
  cJSON *loaded = path ? exp_jsonl_load_interrupted(path, &w, &e) : NULL;
  cJSON *sorted = loaded ? cJSON_CreateArray() : NULL;
  for (cJSON *rec; sorted && (rec = cJSON_DetachItemFromArray(loaded, 0));)
    exp_records_insert(sorted, rec);
  if (sorted) {
    cJSON_Delete(r->records);
    r->records = sorted;
  }
  cJSON_Delete(loaded);
  free(path);
  exp_errors_free(&w);
  exp_errors_free(&e);
}

static void do_run(runner *r, const exp_run *run) {
  char *log_path = log_path_of(r, run->run);
  char *trace = trace_path_of(r, run);
  char why[EXP_PATH_MAX + 128] = "out of memory";
  bool bad_dir;
  char *params = params_dir_of(r, run, &bad_dir, why, sizeof why);
  progress_begin(&r->pg, run, exp_spec_name(r->spec));
  double start = now_s();
  outcome out = log_path && (trace || !r->o.record_trace) && !bad_dir
                    ? run_child(r, run, log_path, trace, params)
                    : (outcome){NULL, strdup(why), false};
  double wall = now_s() - start;
  if (interrupted) finish_params(r, run, params, false);
  if (interrupted) { /* its result is not the run's: nothing of it is kept */
    if (trace) wl_trace_remove_parts(trace, run_workers(run));
    if (r->pg.tty) fputs("\r\033[K", r->pg.log);
    r->cut = run->run;
    cJSON_Delete(out.metrics);
    free(out.error);
    free(trace);
    free(params);
    free(log_path);
    return;
  }
  r->ran++;
  if (out.metrics) {
    cJSON_DeleteItemFromObjectCaseSensitive(out.metrics, "wall_s");
    cJSON_AddNumberToObject(out.metrics, "wall_s", wall);
  } else {
    r->failed++;
  }
  progress_end(&r->pg, out.metrics, out.error, wall);
  if (trace) finish_trace(r, run, trace, out.metrics != NULL);
  finish_params(r, run, params, out.metrics != NULL);
  free(trace);
  free(params);
  struct stat st;
  if (log_path && stat(log_path, &st) == 0 && st.st_size == 0) remove(log_path);
  record_run(r, run, &out);
  free(out.error);
  free(log_path);
}

/* Removes the run logs an earlier experiment left in logs/, so that every
 * log there is this experiment's. */
static void clear_logs(const char *logs) {
  DIR *d = opendir(logs);
  struct dirent *ent;
  while (d && (ent = readdir(d))) {
    size_t len = strlen(ent->d_name);
    if (strncmp(ent->d_name, "run-", 4) != 0 || len < 8 ||
        strcmp(ent->d_name + len - 4, ".log") != 0)
      continue;
    char *path = exp_join_path(logs, ent->d_name);
    if (path) remove(path);
    free(path);
  }
  if (d) closedir(d);
}

/* Resuming: what DIR holds for this spec. Its successful records become
 * r->records and r->done; nothing on disk changes here, so a refusal (DIR
 * holds another spec) leaves DIR as it was. */
static int read_resumed(runner *r, bool report) {
  exp_errors w, e;
  exp_errors_init(&w);
  exp_errors_init(&e);
  exp_resumed got;
  int rc = exp_resume_read(r->dir, r->spec, &got, &w, &e);
  for (size_t i = 0; report && i < w.count; i++)
    fprintf(r->o.log, "pslab: warning: %s\n", w.lines[i]);
  for (size_t i = 0; report && i < e.count; i++)
    fprintf(r->o.log, "pslab: %s\n", e.lines[i]);
  if (rc == 0) {
    cJSON_Delete(r->records);
    r->records = got.records;
    r->done = got.done;
  }
  exp_errors_free(&w);
  exp_errors_free(&e);
  return rc;
}

/* Starts runs.jsonl: afresh, or, resuming, rewritten whole with the records
 * kept, so failed records make way for their reruns and a line cut short
 * does not spoil the next one appended. */
static int open_jsonl(runner *r, const char *jsonl, char *err, size_t errlen) {
  if (r->o.resume && exp_jsonl_write(jsonl, r->records, err, errlen) != 0) return -1;
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (r->o.resume ? 0 : O_TRUNC);
  if ((r->jsonl = open(jsonl, flags, 0644)) < 0) {
    snprintf(err, errlen, "%s: cannot write: %s", jsonl, strerror(errno));
    return -1;
  }
  return 0;
}

/* Creates DIR and DIR/logs, saves the spec, opens runs.jsonl. */
static int prepare(runner *r) {
  char err[EXP_PATH_MAX + 128];
  if (r->o.resume && read_resumed(r, true) != 0) return -1;
  char *logs = exp_join_path(r->dir, "logs");
  char *jsonl = exp_join_path(r->dir, "runs.jsonl");
  int rc = logs && jsonl ? 0 : -1;
  if (rc != 0) snprintf(err, sizeof err, "out of memory");
  if (rc == 0) rc = exp_mkdir_p(logs, err, sizeof err);
  if (rc == 0 && !r->o.resume) clear_logs(logs); /* resuming keeps the kept runs' */
  if (rc == 0) rc = exp_spec_save(r->dir, exp_spec_json(r->spec), err, sizeof err);
  if (rc == 0) rc = open_jsonl(r, jsonl, err, sizeof err);
  if (rc != 0) fprintf(r->o.log, "pslab: %s\n", err);
  free(logs);
  free(jsonl);
  return rc;
}

/* The last line when a record could not be written. */
static void report_stopped(const runner *r) {
  size_t n = (size_t)cJSON_GetArraySize(r->records);
  fprintf(r->o.log, "pslab: %sstopped: a record could not be written to %s/runs.jsonl (%s); "
          "%zu run%s recorded (--resume runs the rest once it can be written)\n",
          r->pg.prefix, r->dir, strerror(r->stopped), n, n == 1 ? "" : "s");
}

/* The last line: what this invocation ran, of which runs. */
static void report_end(const runner *r, size_t total) {
  if (r->stopped) {
    report_stopped(r);
    return;
  }
  if (!r->failed && !r->diverged && !r->io_failed && r->o.quiet) return;
  const exp_shard *sh = &r->o.shard;
  exp_buf b = {0};
  exp_buf_printf(&b, "pslab: %s", r->pg.prefix);
  if (sh->count)
    exp_buf_printf(&b, "shard %u/%u: ran %zu of the experiment's %zu runs", sh->index,
                   sh->count, r->ran, total);
  if (sh->count && r->failed) exp_buf_printf(&b, ", %zu failed", r->failed);
  if (!sh->count && r->failed)
    exp_buf_printf(&b, "%zu of %zu runs failed", r->failed, r->ran);
  if (!sh->count && !r->failed && r->diverged)
    exp_buf_printf(&b, "%zu run%s ok", r->ran - r->diverged, r->ran - r->diverged == 1 ? "" : "s");
  else if (!sh->count && !r->failed)
    exp_buf_printf(&b, "%zu run%s done", r->ran, r->ran == 1 ? "" : "s");
  if (r->diverged) exp_buf_printf(&b, ", %zu diverged", r->diverged);
  if (r->skipped) exp_buf_printf(&b, ", %zu skipped (already in runs.jsonl)", r->skipped);
  if (r->io_failed) exp_buf_printf(&b, "; a trace could not be written (see above)");
  exp_buf_printf(&b, "; results in %s/", r->dir);
  char *line = exp_buf_take(&b);
  fprintf(r->o.log, "%s\n", line ? line : "pslab: out of memory");
  free(line);
}

/* The last line after a signal: what was kept. 128 + the signal. */
static int report_interrupted(const runner *r) {
  int sig = interrupted;
  exp_buf b = {0};
  exp_buf_printf(&b, "pslab: %sinterrupted by %s", r->pg.prefix, strsignal(sig));
  if (r->cut) exp_buf_printf(&b, " during run %u, which is not recorded", r->cut);
  /* What runs.jsonl holds: the records kept by a resume and this one's. */
  size_t kept = r->records ? (size_t)cJSON_GetArraySize(r->records) : 0;
  if (r->dir && !(r->o.node && r->o.node->rank != 0))
    exp_buf_printf(&b, "; the %zu run%s finished before %s in %s/runs.jsonl (--resume runs "
                   "the rest)", kept, kept == 1 ? "" : "s", kept == 1 ? "is" : "are", r->dir);
  char *line = exp_buf_take(&b);
  fprintf(r->o.log, "%s\n", line ? line : "pslab: interrupted");
  free(line);
  return 128 + sig;
}

static int finish(runner *r, size_t total) {
  char *logs = exp_join_path(r->dir, "logs");
  if (logs) rmdir(logs); /* only goes when no run left a log */
  free(logs);
  if (r->stopped) reread_records(r);
  exp_results res = results_of(r);
  int rc = exp_results_finish(r->dir, exp_spec_name(r->spec), &res, r->o.gnuplot, r->o.out,
                              r->o.log);
  report_end(r, total);
  return r->failed || r->io_failed || r->stopped ? EXP_EXIT_FAILED : rc;
}

/* Whether this invocation runs run: it is in the shard and, resuming, its
 * record was not kept. */
static bool wanted(const runner *r, const exp_run *run) {
  return exp_shard_has(&r->o.shard, run->run) && !(r->done && r->done[run->run - 1]);
}

/* `pslab node` on a rank other than 0: runs this node of every run in turn
 * and writes nothing (rank 0 records the results). */
static int follow_runs(runner *r, const exp_run_list *runs) {
  size_t failed = 0;
  r->pg.quiet = true;
  /* Rank 0 skips the runs it finds done; so must every node of them. */
  if (r->o.resume && (!r->dir || read_resumed(r, false) != 0)) return EXP_EXIT_FAILED;
  for (size_t i = 0; i < runs->count && !interrupted; i++) {
    const exp_run *run = &runs->runs[i];
    if (!wanted(r, run)) continue;
    char *trace = trace_path_of(r, run); /* rank 0 merges the parts */
    char why[EXP_PATH_MAX + 128];
    bool bad_dir;
    char *params = params_dir_of(r, run, &bad_dir, why, sizeof why);
    outcome out =
        bad_dir ? (outcome){NULL, strdup(why), false} : run_child(r, run, NULL, trace, params);
    free(trace);
    free(params);
    if (out.error && !interrupted) {
      fprintf(r->o.log, "pslab node %u: run %u failed: %s\n", r->o.node->rank, run->run,
              out.error);
      failed++;
    }
    cJSON_Delete(out.metrics);
    free(out.error);
  }
  return failed ? EXP_EXIT_FAILED : EXP_EXIT_OK;
}

/* The runs of the shard, skipping (and saying so) those already done. */
static void run_all(runner *r, const exp_run_list *runs) {
  for (size_t i = 0; i < runs->count && !interrupted && !r->stopped; i++) {
    const exp_run *run = &runs->runs[i];
    if (wanted(r, run)) {
      do_run(r, run);
    } else if (exp_shard_has(&r->o.shard, run->run)) {
      progress_skip(&r->pg, run, exp_spec_name(r->spec));
      r->skipped++;
    }
  }
}

int exp_run_experiment(const exp_spec *spec, const exp_runner_options *opts) {
  runner r = {.spec = spec, .jsonl = -1};
  exp_runner_options_default(&r.o);
  if (opts) r.o = *opts;
  if (!r.o.out) r.o.out = stdout;
  if (!r.o.log) r.o.log = stderr;
  if (!r.o.backends) r.o.backends = exp_backends(&r.o.n_backends);
  const exp_run_list *runs = exp_spec_runs(spec);
  r.pg = (progress){.log = r.o.log, .prefix = r.o.prefix ? r.o.prefix : "",
                    .quiet = r.o.quiet, .total = runs->count,
                    .period = r.o.progress_period_s > 0 ? r.o.progress_period_s
                                                        : EXP_PROGRESS_PERIOD_S,
                    .tty = r.o.progress_tty < 0 ? isatty(fileno(r.o.log))
                                                : r.o.progress_tty != 0};
  r.dir = r.o.out_dir ? strdup(r.o.out_dir)
                      : exp_join_path("results", exp_spec_name(spec));
  r.records = cJSON_CreateArray();
  int rc = EXP_EXIT_FAILED;
  saved_signals old;
  signals_catch(&old);
  if (r.o.node && r.o.node->rank != 0) {
    rc = follow_runs(&r, runs);
  } else if (r.dir && r.records && prepare(&r) == 0) {
    run_all(&r, runs);
    close(r.jsonl);
    rc = interrupted ? EXP_EXIT_FAILED : finish(&r, runs->count);
  } else if (!r.dir || !r.records) {
    fprintf(r.o.log, "pslab: out of memory\n");
  }
  if (interrupted) rc = report_interrupted(&r);
  signals_restore(&old);
  cJSON_Delete(r.records);
  free(r.done);
  free(r.dir);
  return rc;
}
