/*
 * experiments/common/: what every room of experiments/ uses: a growing
 * string buffer, numbers and JSON values as text, the dotted paths that
 * messages name, and files (read whole, mkdir -p, write-and-rename). The
 * error list (exp_errors) is the door's, experiment.h; its code is
 * common/error_list.c.
 *
 * Not a door: only the files of experiments/ (and their tests) include it.
 * It includes no other room.
 */
#ifndef PSLAB_EXPERIMENTS_COMMON_H
#define PSLAB_EXPERIMENTS_COMMON_H

#include "experiments/experiment.h"

#include <cjson/cJSON.h>

/* Keys in a JSON path are rendered into buffers of this size (longer paths
 * are cut in messages, never overflow). */
#define EXP_PATH_MAX 512

/* ------------------------------------------------ string buffer (text.c) */

/* A growing string. After an allocation failure it stays failed and
 * exp_buf_take returns NULL. */
typedef struct {
  char *data;
  size_t len, cap;
  bool failed;
} exp_buf;

void exp_buf_printf(exp_buf *b, const char *fmt, ...) EXP_PRINTF(2, 3);
/* Appends n bytes of data. */
void exp_buf_add(exp_buf *b, const char *data, size_t n);
void exp_buf_puts(exp_buf *b, const char *s);
/* The string (caller frees), or NULL if an allocation failed. */
char *exp_buf_take(exp_buf *b);
void exp_buf_free(exp_buf *b);

/* ------------------------------------------------------- values (text.c) */

/* Shortest text that reads back as v ("3", "0.1", "1e+20"). */
void exp_format_number(double v, char *buf, size_t n);
/* A short human label: strings bare, numbers formatted, objects as
 * {k=v,...}, lists as [a,b]. Caller frees; NULL on no memory. */
char *exp_value_label(const cJSON *v);
/* What an empty value (an empty list or object) at path means, in words:
 * "no straggler" for cluster.stragglers, "no scaling" for cluster.scale,
 * "no phase" for phases, "no stage" for stages, "none" for any other path
 * (NULL too): the table's, the plots' and the progress lines' label. */
const char *exp_empty_label(const char *path);
/* What was found, for "found ..." in messages: -3, "abc", an object,
 * nothing (the key is missing). */
void exp_describe(const cJSON *v, char *buf, size_t n);
/* A metric's value as one number: the number itself, or the mean of a
 * list (a per-epoch metric); false when v holds no number. */
bool exp_metric_value(const cJSON *v, double *out);

/* ------------------------------------------------- quality (quality.c) */

/* Whether metric is a held-out quality (quality, epoch_quality), whose
 * words come from the workload's measure rather than the metric table. */
bool exp_is_quality_metric(const char *metric);
/* The quality measure the records' workloads share (config.workload,
 * through workloads/' table of measures: wl_quality_of): its words
 * ("RMSE") into *label, and whether higher is better; false when no
 * record's workload has one, or two have different ones. */
bool exp_records_quality(const cJSON *records, const char **label, bool *higher_better);
/* "RMSE ↓", "MRR ↑": the measure's words and the arrow of its better
 * direction, into buf. */
void exp_quality_words(const char *label, bool higher_better, char *buf, size_t n);

/* -------------------------------------------------------- paths (text.c) */

/* "parent.key" ("key" under an empty parent), and "parent[i]". */
void exp_child_path(char *buf, size_t n, const char *parent, const char *key);
void exp_index_path(char *buf, size_t n, const char *parent, size_t i);

/* ------------------------------------------------------- files (files.c) */

/* Whether s is a non-empty [A-Za-z0-9_.-]+ other than "." and "..". */
bool exp_is_file_stem(const char *s);
/* The file at path opened for reading when it is a regular file; NULL with
 * "<path>: not a regular file (a FIFO)" (a directory, a device, ...) or
 * "<path>: cannot read: <reason>" in err. Never waits on a FIFO. */
FILE *exp_open_regular(const char *path, char *err, size_t errlen);
/* The whole file, NUL-terminated (a regular file only: exp_open_regular);
 * NULL with "<path>: <reason>" in err. */
char *exp_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* mkdir -p. 0, or -1 with a message. */
int exp_mkdir_p(const char *dir, char *err, size_t errlen);
/* Writes through "<path>.tmp" renamed over path. 0, or -1 with a message. */
int exp_write_file_atomic(const char *path, const char *data, size_t len,
                          char *err, size_t errlen);
/* json printed (formatted or on one line) with a closing newline, its
 * length without the terminating NUL in *len; NULL out of memory. */
char *exp_json_text_nl(const cJSON *json, bool formatted, size_t *len);
/* json, printed with a closing newline, through exp_write_file_atomic. 0,
 * or -1 with a message. */
int exp_write_json_atomic(const char *path, const cJSON *json, char *err, size_t errlen);
/* dir + "/" + name; caller frees. */
char *exp_join_path(const char *dir, const char *name);

#endif
