/*
 * The plot of a search: each evaluation's estimate of the whole run (the
 * simulated metric) against the round it was made in, every candidate a
 * grey point, the candidates of the last round a coloured line through
 * their rounds, so that one sees the field narrow and the estimates settle
 * as the prefix lengthens.
 */
#include "experiments/advise/advise.h"
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FINALISTS_SHOWN 6

/* The data block of candidate c's evaluations ($cN), or of all (c < 0). */
static size_t data_block(exp_buf *b, const adv_report *rp, long c) {
  size_t rows = 0;
  if (c < 0) exp_buf_puts(b, "$all << EOD\n");
  else exp_buf_printf(b, "$c%ld << EOD\n", c);
  for (const cJSON *e = rp->res->evaluations->child; e; e = e->next) {
    double k = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "round"));
    double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "value"));
    double id = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "candidate"));
    if (!isfinite(v) || !(v > 0) || (c >= 0 && id != (double)c)) continue;
    exp_gp_number(b, k + 1);
    exp_buf_puts(b, " ");
    exp_gp_number(b, v);
    exp_buf_puts(b, "\n");
    rows++;
  }
  exp_buf_puts(b, "EOD\n");
  return rows;
}

char *adv_search_script(const adv_report *rp, const char *experiment) {
  exp_buf b = {0};
  exp_gp_begin(&b, "search", EXP_PLOT_WIDTH, EXP_PLOT_HEIGHT);
  char title[256];
  snprintf(title, sizeof title, "%s: the search, %zu candidates", experiment,
           rp->cands->count);
  exp_buf_puts(&b, "set title ");
  exp_gp_string(&b, title);
  exp_buf_puts(&b, "\nset xlabel \"round (the prefix of the run doubles each round)\"\n"
                   "set ylabel ");
  char ylabel[128];
  snprintf(ylabel, sizeof ylabel, "estimated %s, whole run",
           rp->metric.to_quality ? "time to quality (s)" : rp->metric.name);
  exp_gp_string(&b, ylabel);
  exp_buf_printf(&b, "\nset logscale y\nset grid\nset key below maxrows 4\nset xtics 1\n"
                    "set xrange [0.5:%zu.5]\n", rp->res->rounds);
  if (!data_block(&b, rp, -1)) {
    exp_buf_free(&b);
    return NULL;
  }
  exp_buf plots = {0};
  exp_buf_puts(&plots, "plot $all using 1:2 with points pt 7 ps 0.6 lc rgb \"#999999\" "
                       "title \"every evaluation\"");
  for (size_t i = 0; i < rp->res->n && i < FINALISTS_SHOWN; i++) {
    size_t c = rp->res->order[i];
    if (rp->res->round[c] < 0 || !data_block(&b, rp, (long)c)) continue;
    exp_buf_printf(&plots, ", $c%zu using 1:2 with linespoints lw 2 title ", c);
    exp_gp_string(&plots, rp->cands->items[c].label);
  }
  char *p = exp_buf_take(&plots);
  exp_buf_printf(&b, "%s\n", p ? p : "");
  free(p);
  exp_gp_png(&b, "search", EXP_PLOT_WIDTH, EXP_PLOT_HEIGHT);
  return exp_buf_take(&b);
}

int adv_draw_search(const adv_report *rp, const char *dir, const char *experiment,
                    const char *gnuplot, FILE *log) {
  char *script = adv_search_script(rp, experiment);
  if (!script) {
    fprintf(log, "pslab advise: search.svg not drawn: no evaluation has a value\n");
    return -1;
  }
  const char *prog = gnuplot ? gnuplot : "gnuplot";
  bool have = exp_program_exists(prog);
  int rc = exp_draw_script("search", script, dir, prog, have, log);
  free(script);
  if (!have)
    fprintf(log, "pslab advise: search.svg not drawn: %s is not installed; draw it later "
            "with `gnuplot search.gp` in %s/\n", prog, dir);
  return rc == 0 && have ? 0 : -1;
}
