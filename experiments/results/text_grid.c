/*
 * A text grid for a terminal: a header row, a rule, then rows of cells in
 * aligned columns, labels on the left (left-aligned) and numbers on the
 * right (right-aligned), two spaces between columns.
 *
 * A label cell longer than the grid's wrap width is wrapped at spaces onto
 * continuation lines of its row, never cut inside a word (a word longer
 * than the width keeps a line of its own): a table is read and pasted into
 * papers, and "fast_loca..." loses what tells two rows apart. Continuation
 * lines are indented by two spaces (within the width), so that they do not
 * read as rows of their own; the other cells of the row stay on its first
 * line. Widths count characters, not
 * bytes, so that "±" and other UTF-8 text line up.
 */
#include "experiments/results/results.h"

#include <stdlib.h>
#include <string.h>

bool exp_grid_init(exp_grid *g, size_t rows, size_t cols, size_t label_cols,
                   size_t wrap) {
  *g = (exp_grid){.rows = rows, .cols = cols, .label_cols = label_cols, .wrap = wrap};
  g->cells = calloc(rows * cols + 1, sizeof *g->cells);
  return g->cells != NULL;
}

bool exp_grid_set(exp_grid *g, size_t row, size_t col, const char *text) {
  char **cell = &g->cells[row * g->cols + col];
  free(*cell);
  *cell = strdup(text);
  return *cell != NULL;
}

void exp_grid_free(exp_grid *g) {
  for (size_t i = 0; g->cells && i < g->rows * g->cols; i++) free(g->cells[i]);
  free(g->cells);
  *g = (exp_grid){0};
}

/* ------------------------------------------------------------ lines */

/* Characters in s[0..len): UTF-8 continuation bytes do not count. */
static size_t columns(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

/* The next line of a wrapped cell: starts at *s (after spaces), as many
 * whole words as fit in wrap columns (at least one); *s moves past it.
 * Returns its length in bytes (0 when the text is used up). */
static size_t next_line(const char **s, size_t wrap, const char **start) {
  const char *p = *s + strspn(*s, " ");
  size_t len = strcspn(p, " ");
  while (p[len] == ' ') {
    size_t gap = strspn(p + len, " "), word = strcspn(p + len + gap, " ");
    if (word == 0 || columns(p, len + gap + word) > wrap) break;
    len += gap + word;
  }
  *start = p;
  *s = p + len;
  return len;
}

enum { INDENT = 2 }; /* of a label's continuation lines */

static size_t indent_of(const exp_grid *g, size_t col, size_t k) {
  return col < g->label_cols && k > 0 ? INDENT : 0;
}

/* Line `k` of a cell (wrapped when it is a label): its start and length;
 * length 0 past the cell's last line. */
static size_t cell_line(const exp_grid *g, size_t col, const char *text, size_t k,
                        const char **start) {
  *start = text ? text : "";
  if (!text) return 0;
  if (col >= g->label_cols) return k == 0 ? strlen(text) : 0;
  const char *s = text;
  size_t len = 0, rest = g->wrap > INDENT ? g->wrap - INDENT : 1;
  for (size_t i = 0; i <= k; i++) len = next_line(&s, i ? rest : g->wrap, start);
  return len;
}

static size_t cell_height(const exp_grid *g, size_t col, const char *text) {
  const char *start;
  size_t k = 0;
  while (cell_line(g, col, text, k, &start) > 0) k++;
  return k ? k : 1;
}

/* ---------------------------------------------------------- printing */

static void pad(FILE *f, size_t n) {
  for (size_t i = 0; i < n; i++) fputc(' ', f);
}

/* One line of row r: line k of each of its cells. */
static void print_line(FILE *f, const exp_grid *g, const size_t *width, size_t r,
                       size_t k) {
  size_t owed = 0; /* spaces not yet written: none at the end of a line */
  for (size_t c = 0; c < g->cols; c++) {
    const char *start;
    size_t len = cell_line(g, c, g->cells[r * g->cols + c], k, &start);
    size_t indent = indent_of(g, c, k), w = indent + columns(start, len);
    size_t gap = c ? 2 : 0;
    bool left = c < g->label_cols;
    if (len == 0) {
      owed += gap + width[c];
      continue;
    }
    pad(f, owed + gap + (left ? indent : width[c] - w));
    fwrite(start, 1, len, f);
    owed = left ? width[c] - w : 0;
  }
  fputc('\n', f);
}

void exp_grid_print(const exp_grid *g, FILE *f) {
  size_t *width = calloc(g->cols + 1, sizeof *width);
  if (!width) return;
  for (size_t i = 0; i < g->rows * g->cols; i++) {
    size_t c = i % g->cols;
    const char *start;
    for (size_t k = 0, len; (len = cell_line(g, c, g->cells[i], k, &start)) > 0; k++) {
      size_t w = indent_of(g, c, k) + columns(start, len);
      if (w > width[c]) width[c] = w;
    }
  }
  for (size_t r = 0; r < g->rows; r++) {
    size_t height = 1;
    for (size_t c = 0; c < g->label_cols; c++) {
      size_t h = cell_height(g, c, g->cells[r * g->cols + c]);
      if (h > height) height = h;
    }
    for (size_t k = 0; k < height; k++) print_line(f, g, width, r, k);
    for (size_t c = 0; r == 0 && c < g->cols; c++) {
      if (c) fputs("  ", f);
      for (size_t i = 0; i < width[c]; i++) fputc('-', f);
      if (c + 1 == g->cols) fputc('\n', f);
    }
  }
  free(width);
}
