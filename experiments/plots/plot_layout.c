/*
 * Plot layout: how large the canvas is, and how a bar chart's category
 * labels fit under their bars.
 *
 * gnuplot neither wraps labels nor grows the canvas: a long label runs off
 * the edge, and a long legend overlays the data. So the script is given
 * labels wrapped at spaces to the width of their bars' slot, and a canvas
 * that has room for them and for the legend below the plot. When even
 * single words do not fit side by side, the canvas widens, up to a limit
 * past which the labels stand upright.
 *
 * Sizes are estimates from average character widths, of two kinds: what
 * the 12-point sans font draws, which decides when labels collide, and
 * what gnuplot reckons when it reserves room (wider), which decides how
 * much room it takes for upright labels and legend columns. The default
 * canvas holds a line of labels, x's label and two rows of legend.
 */
#include "experiments/plots/plots.h"

#include <stdlib.h>
#include <string.h>

enum {
  CANVAS_MAX_W = 1400, /* widest a canvas grows for side-by-side labels */
  FRAME_PX = 140,      /* y tick labels, y label, right margin */
  LINE_PX = 18,        /* one line of 12-point text */
  KEY_ROW_PX = 20,     /* one row of the legend, its samples' spacing included */
  KEY_SAMPLE_CHARS = 6 /* a legend entry's line sample and gaps, in characters */
};
#define DRAWN_CHAR_PX 7.5 /* a character as drawn */
#define GNUPLOT_CHAR_PX 10.5 /* a character as gnuplot reckons it */

char *exp_wrap_words(const char *s, size_t width) {
  exp_buf b = {0};
  size_t line = 0;
  exp_buf_puts(&b, "");
  while (*s) {
    while (*s == ' ') s++;
    size_t len = strcspn(s, " ");
    if (!len) break;
    if (line && line + 1 + len > width) {
      exp_buf_puts(&b, "\n");
      line = 0;
    } else if (line) {
      exp_buf_puts(&b, " ");
      line++;
    }
    exp_buf_printf(&b, "%.*s", (int)len, s);
    line += len;
    s += len;
  }
  return exp_buf_take(&b);
}

/* ------------------------------------------------------- bar labels */

/* Characters that fit under one category of n on a canvas w pixels wide,
 * leaving a gap to the next. */
static size_t slot_chars(int w, size_t n) {
  double chars = (double)(w - FRAME_PX) / (double)n / DRAWN_CHAR_PX - 2;
  return chars < 4 ? 4 : (size_t)chars;
}

static size_t longest(char *const *labels, size_t n, bool words) {
  size_t most = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = labels[i];
    if (!words && strlen(s) > most) most = strlen(s);
    while (words && *s) {
      size_t len = strcspn(s, " ");
      if (len > most) most = len;
      s += len;
      while (*s == ' ') s++;
    }
  }
  return most;
}

/* The canvas width at which the widest word of n categories' labels fits
 * its slot; 0 when that is wider than CANVAS_MAX_W. */
static int width_for(size_t word, size_t n) {
  if (word <= slot_chars(EXP_PLOT_WIDTH, n)) return EXP_PLOT_WIDTH;
  double w = FRAME_PX + (double)n * ((double)word + 2) * DRAWN_CHAR_PX;
  if (w > CANVAS_MAX_W) return 0;
  return ((int)w + 9) / 10 * 10;
}

/* How wide a line an upright label may have: as many lines as its slot
 * holds side by side (at most 3), none shorter than its longest word. */
static size_t upright_wrap(char *const *cats, size_t n, int w) {
  size_t fit = (size_t)((w - FRAME_PX) / (int)n / LINE_PX);
  fit = fit < 1 ? 1 : fit > 3 ? 3 : fit;
  size_t width = (longest(cats, n, false) + fit - 1) / fit, word = longest(cats, n, true);
  return width > word ? width : word;
}

/* Wraps the category labels, and says what extra height they need. false
 * on no memory. */
static bool lay_out_ticks(exp_plot_layout *l, char *const *cats, size_t n, int *extra) {
  l->ticks = calloc(n + 1, sizeof *l->ticks);
  if (!l->ticks) return false;
  l->n_ticks = n;
  if (n == 0) return true;
  int w = width_for(longest(cats, n, true), n);
  l->upright = w == 0;
  l->width = w ? w : EXP_PLOT_WIDTH;
  size_t width = l->upright ? upright_wrap(cats, n, l->width) : slot_chars(l->width, n);
  size_t lines = 1, line_chars = 0;
  for (size_t i = 0; i < n; i++) {
    l->ticks[i] = exp_wrap_words(cats[i], width);
    if (!l->ticks[i]) return false;
    size_t k = 1, run = 0;
    for (const char *s = l->ticks[i];; s++) {
      if (*s == '\n' || !*s) {
        line_chars = run > line_chars ? run : line_chars;
        run = 0;
        if (!*s) break;
        k++;
      } else {
        run++;
      }
    }
    lines = k > lines ? k : lines;
  }
  l->tick_lines = l->upright ? 1 : lines;
  if (l->upright)
    *extra = (int)((double)line_chars * GNUPLOT_CHAR_PX) - LINE_PX;
  else
    *extra = (int)(lines - 1) * LINE_PX;
  return true;
}

/* ----------------------------------------------------------- legend */

/* A legend below the plot: its entries (the series', and a diverged run's
 * or a run's end's when drawn) and the width of the widest. */
static size_t key_entries(const exp_plot_data *d, size_t *widest) {
  size_t n = d->n_series, most = longest(d->series, d->n_series, false);
  const char *extra[] = {d->n_diverged ? EXP_KEY_DIVERGED : NULL, d->n_ends ? EXP_KEY_END : NULL};
  for (size_t i = 0; i < 2; i++) {
    if (!extra[i]) continue;
    n++;
    if (strlen(extra[i]) > most) most = strlen(extra[i]);
  }
  *widest = most;
  return n;
}

/* Makes room for the legend: gnuplot puts as many columns side by side as
 * the widest entry allows; the canvas widens for an entry wider than
 * itself (up to CANVAS_MAX_W) and grows taller for rows beyond the two the
 * default holds (one more row's room besides, which gnuplot's own reckoning
 * of the key takes). */
static void key_room(exp_plot_layout *l, const exp_plot_data *d) {
  size_t widest, n = key_entries(d, &widest);
  if (n < 2) return;
  double column = ((double)widest + KEY_SAMPLE_CHARS) * GNUPLOT_CHAR_PX;
  if (column > l->width) l->width = column > CANVAS_MAX_W ? CANVAS_MAX_W : ((int)column + 9) / 10 * 10;
  size_t cols = (size_t)((double)l->width / column);
  cols = cols < 1 ? 1 : cols;
  size_t rows = (n + cols - 1) / cols;
  if (rows > 2) l->height += (int)(rows - 1) * KEY_ROW_PX;
}

bool exp_plot_layout_make(exp_plot_layout *l, const exp_plot_data *d) {
  *l = (exp_plot_layout){.width = EXP_PLOT_WIDTH, .height = EXP_PLOT_HEIGHT, .tick_lines = 1};
  int extra = 0;
  if (!d->numeric && !lay_out_ticks(l, d->cats, d->n_cats, &extra)) return false;
  if (extra > 0) l->height += extra;
  key_room(l, d);
  return true;
}

void exp_plot_layout_free(exp_plot_layout *l) {
  for (size_t i = 0; l->ticks && i < l->n_ticks; i++) free(l->ticks[i]);
  free(l->ticks);
  *l = (exp_plot_layout){0};
}
