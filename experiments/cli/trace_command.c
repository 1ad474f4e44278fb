/*
 * `pslab trace`: what a recorded trace says (stats) and the merge of a run's
 * parts (merge). The figures come from workloads/ (wl_trace_stats_compute);
 * this file prints them, one "name: value" line each, and draws the log-log
 * rank-frequency curve with gnuplot as the plots are drawn (plots/draw_plots.c).
 */
#include "experiments/plots/plots.h"
#include "workloads/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- printing */

static void print_stats(FILE *out, const char *file, const wl_trace *t,
                        const wl_trace_stats *s) {
  ps_layout l = {0};
  wl_trace_tables(t, &l);
  fprintf(out, "trace: %s\n", file);
  fprintf(out, "workers: %u (recorded on %u node%s)\n", s->workers, wl_trace_nodes(t),
          wl_trace_nodes(t) == 1 ? "" : "s");
  fprintf(out, "steps: %llu\n", (unsigned long long)s->steps);
  fprintf(out, "tables: %u (%llu keys)\n", l.num_tables, (unsigned long long)s->table_keys);
  fprintf(out, "keys: %llu accessed (%.1f%% of the tables' keys)\n",
          (unsigned long long)s->keys,
          s->table_keys ? 100.0 * (double)s->keys / (double)s->table_keys : 0.0);
  fprintf(out, "accesses: %llu (reads %llu, writes %llu, samples %llu)\n",
          (unsigned long long)s->accesses, (unsigned long long)s->reads,
          (unsigned long long)s->writes, (unsigned long long)s->samples);
  fprintf(out, "top keys: 0.1%% of keys get %.1f%% of accesses, 1%% get %.1f%%, 10%% get "
               "%.1f%%\n", 100 * s->top_share[0], 100 * s->top_share[1], 100 * s->top_share[2]);
  if (isnan(s->zipf_skew))
    fprintf(out, "zipf exponent: none (fewer than 3 keys with %d accesses or more)\n",
            WL_TRACE_FIT_MIN_COUNT);
  else
    fprintf(out, "zipf exponent: %.3f (least squares on log-log rank-frequency, ranks 1-%llu)\n",
            s->zipf_skew, (unsigned long long)s->zipf_ranks);
  fprintf(out, "locality: %.1f%% of accesses to keys range partitioning homes on the "
               "worker's node (%u node%s)\n", 100 * s->locality, s->nodes,
          s->nodes == 1 ? "" : "s");
  if (s->reuses)
    fprintf(out, "reuse distance: p50 %llu, p90 %llu, p99 %llu distinct keys (%llu reuses, "
                 "%llu first touches)\n", (unsigned long long)s->reuse_p50,
            (unsigned long long)s->reuse_p90, (unsigned long long)s->reuse_p99,
            (unsigned long long)s->reuses, (unsigned long long)s->cold);
  else
    fprintf(out, "reuse distance: none (no key is touched twice by one worker; %llu first "
                 "touches)\n", (unsigned long long)s->cold);
}

/* --------------------------------------------------------------- drawing */

/* Points of the curve: every rank up to 1000, then about 200 per decade. */
static void curve_points(exp_buf *b, const wl_trace_stats *s) {
  uint64_t last = 0;
  for (uint64_t r = 1; r <= s->keys; r++) {
    if (r > 1000 && r != s->keys && r < last * 1.0116) continue;
    exp_buf_printf(b, "%llu %llu\n", (unsigned long long)r,
                   (unsigned long long)s->rank_counts[r - 1]);
    last = r;
  }
}

static char *svg_script(const char *file, const char *svg_name, const wl_trace_stats *s) {
  exp_buf b = {0};
  exp_buf_printf(&b, "# pslab trace stats: the rank-frequency curve of %s\n", file);
  exp_buf_printf(&b, "set terminal svg size 720,480 dynamic enhanced font 'sans,12' "
                     "background rgb 'white'\n");
  exp_buf_printf(&b, "set output '%s'\n", svg_name);
  exp_buf_puts(&b, "set logscale xy\nset xlabel 'rank of the key (by accesses)'\n"
                   "set ylabel 'accesses'\nset grid\nset key top right\n"
                   "set title 'rank-frequency (log-log)'\n");
  exp_buf_puts(&b, "$curve << EOD\n");
  curve_points(&b, s);
  exp_buf_puts(&b, "EOD\n");
  if (!isnan(s->zipf_skew) && s->keys) {
    exp_buf_printf(&b, "plot $curve using 1:2 with lines lw 2 lc rgb '#0072B2' title 'trace', "
                       "%llu * x**(-%.6f) with lines lw 1 dt 2 lc rgb '#D55E00' "
                       "title 'Zipf, exponent %.3f'\n",
                   (unsigned long long)s->rank_counts[0], s->zipf_skew, s->zipf_skew);
  } else {
    exp_buf_puts(&b, "plot $curve using 1:2 with lines lw 2 lc rgb '#0072B2' title 'trace'\n");
  }
  return exp_buf_take(&b);
}

/* Draws svg (the script beside it): 0, or -1 with the reason on log. */
static int draw_svg(const char *file, const char *svg, const wl_trace_stats *s,
                    const char *gnuplot, FILE *log) {
  const char *prog = gnuplot ? gnuplot : "gnuplot";
  char err[EXP_PATH_MAX + 256];
  const char *slash = strrchr(svg, '/');
  char *dir = slash ? strndup(svg, (size_t)(slash - svg + (slash == svg))) : strdup(".");
  const char *svg_name = slash ? slash + 1 : svg;
  size_t stem = strlen(svg);
  if (stem > 4 && strcmp(svg + stem - 4, ".svg") == 0) stem -= 4;
  exp_buf gp = {0};
  exp_buf_printf(&gp, "%.*s.gp", (int)stem, svg);
  char *gp_path = exp_buf_take(&gp);
  char *script = svg_script(file, svg_name, s);
  int rc = dir && gp_path && script ? 0 : -1;
  if (rc != 0) snprintf(err, sizeof err, "out of memory");
  if (rc == 0) rc = exp_write_file_atomic(gp_path, script, strlen(script), err, sizeof err);
  if (rc == 0 && !exp_program_exists(prog)) {
    snprintf(err, sizeof err, "%s is not installed (on Debian: apt-get install gnuplot-nox); "
                              "the script is %s", prog, gp_path);
    rc = -1;
  }
  if (rc == 0) {
    remove(svg);
    const char *gp_name = strrchr(gp_path, '/');
    char said[512];
    rc = exp_run_gnuplot(prog, dir, gp_name ? gp_name + 1 : gp_path, said, sizeof said, err,
                         sizeof err);
    if (rc == 0 && *said)
      fprintf(log, "pslab trace stats: %s drawn, but gnuplot warned: %s (script: %s)\n", svg,
              said, gp_path);
  }
  struct stat st;
  if (rc == 0 && !(stat(svg, &st) == 0 && st.st_size > 0)) {
    snprintf(err, sizeof err, "%s wrote no %s", prog, svg);
    rc = -1;
  }
  if (rc != 0) fprintf(log, "pslab trace stats: %s not drawn: %s\n", svg, err);
  free(dir);
  free(gp_path);
  free(script);
  return rc;
}

/* -------------------------------------------------------------- commands */

int exp_trace_stats(const char *file, uint32_t nodes, const char *svg, const char *gnuplot,
                    FILE *out, FILE *log) {
  char err[1024];
  wl_trace *t = wl_trace_load(file, err, sizeof err);
  if (!t) {
    fprintf(log, "pslab trace stats: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  wl_trace_stats s;
  if (wl_trace_stats_compute(t, nodes, &s) != PS_OK) {
    fprintf(log, "pslab trace stats: %s: out of memory\n", file);
    wl_trace_free(t);
    return EXP_EXIT_FAILED;
  }
  print_stats(out, file, t, &s);
  int rc = EXP_EXIT_OK;
  if (svg) {
    if (draw_svg(file, svg, &s, gnuplot, log) == 0)
      fprintf(out, "svg: %s\n", svg);
    else
      rc = EXP_EXIT_PLOTS;
  }
  wl_trace_stats_free(&s);
  wl_trace_free(t);
  return rc;
}

int exp_trace_merge(const char *file, FILE *log) {
  char err[EXP_PATH_MAX + 512];
  if (wl_trace_merge(file, err, sizeof err) != 0) {
    fprintf(log, "pslab trace merge: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  return EXP_EXIT_OK;
}
