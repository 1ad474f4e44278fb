/*
 * Drawing plots: write each plot's gnuplot script next to the results and
 * run gnuplot on it, which draws it twice, DIR/<name>.svg and DIR/<name>.png
 * (both must be written for the plot to count as drawn), and `pslab plot
 * DIR`, which does the same from a results directory alone (DIR/spec.json
 * and DIR/runs.jsonl).
 *
 * gnuplot is an external program and may be missing: then the scripts are
 * still written, the user is told how to install it, and the caller gets
 * EXP_EXIT_PLOTS, so that the missing plots are never silent.
 */
#include "experiments/plots/plots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

bool exp_program_exists(const char *prog) {
  if (strchr(prog, '/')) return access(prog, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  for (const char *s = path;; s++) {
    size_t len = strcspn(s, ":");
    char *dir = strndup(len ? s : ".", len ? len : 1);
    char *full = dir ? exp_join_path(dir, prog) : NULL;
    bool found = full && access(full, X_OK) == 0;
    free(dir);
    free(full);
    if (found) return true;
    s += len;
    if (!*s) return false;
  }
}

/* Reads fd to its end, keeping the first size - 1 bytes in buf
 * (NUL-terminated). */
static void read_all(int fd, char *buf, size_t size) {
  size_t len = 0;
  char scrap[512];
  for (;;) {
    char *to = len + 1 < size ? buf + len : scrap;
    size_t room = len + 1 < size ? size - 1 - len : sizeof scrap;
    ssize_t n = read(fd, to, room);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (to != scrap) len += (size_t)n;
  }
  buf[len] = '\0';
}

/* gnuplot's complaints as one line: the first, with how many other
 * different lines there were ("" for none). */
static void condense(const char *text, char *out, size_t n) {
  const char *first = NULL;
  size_t first_len = 0, others = 0;
  for (const char *s = text; *s;) {
    size_t len = strcspn(s, "\n");
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\r')) len--;
    const char *start = s;
    while (len && *start == ' ') start++, len--;
    if (len && !first) {
      first = start;
      first_len = len;
    } else if (len && (len != first_len || strncmp(start, first, len) != 0)) {
      others++;
    }
    s += strcspn(s, "\n");
    if (*s) s++;
  }
  *out = '\0';
  if (!first) return;
  snprintf(out, n, "%.*s", (int)first_len, first);
  size_t used = strlen(out);
  if (others && used < n)
    snprintf(out + used, n - used, " (and %zu more line%s)", others, others > 1 ? "s" : "");
}

/* Starts prog on script in dir, its stdout to /dev/null and its stderr to
 * the pipe's write end; the child's pid, or -1. */
static pid_t start_gnuplot(const char *prog, const char *dir, const char *script, int pipe_fd[2]) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid != 0) return pid;
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
  }
  dup2(pipe_fd[1], STDERR_FILENO);
  close(pipe_fd[0]);
  if (chdir(dir) == 0) execlp(prog, prog, script, (char *)NULL);
  _exit(127);
}

int exp_run_gnuplot(const char *prog, const char *dir, const char *script, char *said,
                    size_t saidlen, char *err, size_t errlen) {
  char text[4096];
  int fds[2];
  *said = '\0';
  pid_t pid = pipe(fds) == 0 ? start_gnuplot(prog, dir, script, fds) : -1;
  if (pid < 0) {
    snprintf(err, errlen, "cannot start %s: %s", prog, strerror(errno));
    return -1;
  }
  close(fds[1]);
  read_all(fds[0], text, sizeof text);
  close(fds[0]);
  condense(text, said, saidlen);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFSIGNALED(status))
    snprintf(err, errlen, "%s was killed by signal %d", prog, WTERMSIG(status));
  else if (WEXITSTATUS(status) == EXP_GNUPLOT_NO_PNG)
    snprintf(err, errlen, "%s has no pngcairo terminal, so the PNG was not drawn "
                          "(Debian: apt-get install gnuplot-nox)", prog);
  else
    snprintf(err, errlen, "%s exited with status %d%s%s", prog, WEXITSTATUS(status),
             *said ? ": " : "", said);
  if (WIFEXITED(status) && WEXITSTATUS(status) == EXP_GNUPLOT_NO_PNG) *said = '\0';
  return -1;
}

/* Whether dir/name is there and not empty; else the reason in err. */
static bool drawn(const char *dir, const char *name, const char *prog, char *err,
                  size_t errlen) {
  char *path = exp_join_path(dir, name);
  struct stat st;
  bool ok = path && stat(path, &st) == 0 && st.st_size > 0;
  if (!ok) snprintf(err, errlen, "%s wrote no %s", prog, path ? path : name);
  free(path);
  return ok;
}

/* Removes what an earlier drawing left, so that a failed one shows. */
static void remove_drawing(const char *dir, const char *name) {
  char *path = exp_join_path(dir, name);
  if (path) remove(path);
  free(path);
}

/* Runs gnuplot on the script <name>.gp in dir: both drawings, or -1 with
 * the reason in err; what gnuplot said though it drew, in said. */
static int draw_files(const char *name, const char *dir, const char *prog, char *said,
                      size_t saidlen, char *err, size_t errlen) {
  char gp[EXP_PATH_MAX], svg[EXP_PATH_MAX], png[EXP_PATH_MAX];
  snprintf(gp, sizeof gp, "%s.gp", name);
  snprintf(svg, sizeof svg, "%s.svg", name);
  snprintf(png, sizeof png, "%s.png", name);
  remove_drawing(dir, svg);
  remove_drawing(dir, png);
  if (exp_run_gnuplot(prog, dir, gp, said, saidlen, err, errlen) != 0) return -1;
  if (!drawn(dir, svg, prog, err, errlen) || !drawn(dir, png, prog, err, errlen))
    return -1;
  return 0;
}

int exp_draw_script(const char *name, const char *script, const char *dir,
                    const char *prog, bool have_prog, FILE *log) {
  char err[2 * EXP_PATH_MAX + 256];
  char gp_name[EXP_PATH_MAX];
  snprintf(gp_name, sizeof gp_name, "%s.gp", name);
  char *gp = exp_join_path(dir, gp_name);
  int rc = gp ? 0 : -1;
  if (rc != 0) snprintf(err, sizeof err, "out of memory");
  if (rc == 0) rc = exp_write_file_atomic(gp, script, strlen(script), err, sizeof err);
  if (rc != 0) fprintf(log, "pslab: plot %s not drawn: %s\n", name, err);
  if (rc == 0 && have_prog) {
    char said[512];
    rc = draw_files(name, dir, prog, said, sizeof said, err, sizeof err);
    if (rc != 0) fprintf(log, "pslab: plot %s not drawn: %s (script: %s)\n", name, err, gp);
    else if (*said)
      fprintf(log, "pslab: plot %s drawn, but gnuplot warned: %s (script: %s)\n", name, said, gp);
  }
  free(gp);
  return rc;
}

/* Writes plot p's script and draws it when gnuplot is there. */
static int draw_one(const exp_plot *p, const char *experiment,
                    const cJSON *records, const char *dir, const char *prog,
                    bool have_prog, FILE *log) {
  char err[2 * EXP_PATH_MAX + 256];
  char *script = exp_plot_script(p, experiment, records, err, sizeof err);
  if (!script) {
    fprintf(log, "pslab: plot %s not drawn: %s\n", p->name, err);
    return -1;
  }
  int rc = exp_draw_script(p->name, script, dir, prog, have_prog, log);
  free(script);
  return rc;
}

int exp_plots_draw(const exp_plot_list *plots, const char *experiment,
                   const cJSON *records, const char *dir, const char *gnuplot,
                   FILE *log) {
  const char *prog = gnuplot ? gnuplot : "gnuplot";
  bool have = exp_program_exists(prog);
  int rc = EXP_EXIT_OK;
  for (size_t i = 0; i < plots->count; i++)
    if (draw_one(&plots->items[i], experiment, records, dir, prog, have, log) != 0)
      rc = EXP_EXIT_PLOTS;
  if (plots->count && !have) {
    fprintf(log, "pslab: plots not drawn: %s is not installed (on Debian: apt-get "
                 "install gnuplot-nox, or scripts/install-deps.sh). The scripts are "
                 "in %s/*.gp; draw them later with `pslab plot %s`.\n", prog, dir, dir);
    rc = EXP_EXIT_PLOTS;
  }
  return rc;
}

/* The name and plots of DIR/spec.json; false with the reasons on log. */
static bool load_plots(const char *path, char **name, exp_plot_list *plots,
                       FILE *log) {
  char err[EXP_PATH_MAX + 128];
  char *text = exp_read_file(path, NULL, err, sizeof err);
  if (!text) {
    fprintf(log, "pslab: %s\n", err);
    return false;
  }
  cJSON *json = cJSON_Parse(text);
  free(text);
  if (!cJSON_IsObject(json)) {
    fprintf(log, "pslab: %s: expected a spec (a JSON object), found %s\n", path,
            json ? "another JSON value" : "invalid JSON");
    cJSON_Delete(json);
    return false;
  }
  exp_errors e;
  exp_errors_init(&e);
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(json, "name");
  *name = strdup(cJSON_IsString(n) ? n->valuestring : "experiment");
  exp_plots_parse(cJSON_GetObjectItemCaseSensitive(json, "plots"), plots, &e);
  for (size_t i = 0; i < e.count; i++) fprintf(log, "%s: %s\n", path, e.lines[i]);
  bool ok = e.count == 0 && *name;
  exp_errors_free(&e);
  cJSON_Delete(json);
  return ok;
}

int exp_plot_dir(const char *dir, const char *gnuplot, FILE *log) {
  char *spec_path = exp_join_path(dir, "spec.json");
  char *runs_path = exp_join_path(dir, "runs.jsonl");
  char *name = NULL;
  exp_plot_list plots = {0};
  cJSON *records = NULL;
  int rc = EXP_EXIT_FAILED;
  if (spec_path && runs_path && load_plots(spec_path, &name, &plots, log)) {
    exp_errors e;
    exp_errors_init(&e);
    records = exp_jsonl_load(runs_path, &e);
    exp_errors_print(&e, log);
    exp_errors_free(&e);
  }
  if (records && plots.count == 0) {
    fprintf(log, "pslab: %s asks for no plots\n", spec_path);
    rc = EXP_EXIT_OK;
  } else if (records) {
    rc = exp_plots_draw(&plots, name, records, dir, gnuplot, log);
  }
  cJSON_Delete(records);
  exp_plot_list_free(&plots);
  free(name);
  free(spec_path);
  free(runs_path);
  return rc;
}
