/*
 * Checks of saved parameters, for the simulator's and the socket backend's
 * suites (tests/saved_params.h).
 */
#include "tests/saved_params.h"
#include "tests/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* names that saved_check_rows does not compare */
static const char *const any_names[] = {NULL};

static char *path_of(const char *dir, const char *file) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  return path;
}

wl_params saved_load(const char *dir) {
  char err[512];
  wl_params p;
  if (wl_params_load(path_of(dir, "params.bin"), &p, err, sizeof err) != 0)
    fprintf(stderr, "\n  %s\n", err);
  return p;
}

double saved_sum(const wl_params *p) {
  double sum = 0;
  for (uint64_t i = 0; i < p->n_floats; i++) sum += p->values[i];
  return sum;
}

/* The line's first field into name (a quoted one unquoted); where the
 * floats start, or NULL. */
static char *first_field(char *line, char sep, char *name, size_t cap) {
  size_t n = 0;
  char *c = line;
  if (*c == '"') {
    for (c++; *c && !(c[0] == '"' && c[1] != '"'); c++) {
      if (*c == '"') c++; /* a doubled quote */
      if (n + 1 < cap) name[n++] = *c;
    }
    if (*c == '"') c++;
  } else {
    for (; *c && *c != sep && *c != '\n'; c++)
      if (n + 1 < cap) name[n++] = *c;
  }
  name[n] = '\0';
  return *c == sep ? c : NULL;
}

void saved_check_rows(const char *dir, const char *file, char sep, bool header,
                      const wl_params *p, uint32_t t, uint32_t len,
                      const char *const *names) {
  FILE *f = fopen(path_of(dir, file), "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const ps_table *tb = &p->tables[t];
  char *line = NULL;
  size_t cap = 0;
  uint64_t i = 0, bad = 0;
  if (header) CU_ASSERT(getline(&line, &cap, f) > 0);
  for (; getline(&line, &cap, f) > 0; i++) {
    char name[256], want[32];
    char *c = first_field(line, sep, name, sizeof name);
    if (!names) snprintf(want, sizeof want, "%llu", (unsigned long long)i);
    const float *v = i < tb->count ? wl_params_value(p, tb->first + i) : NULL;
    bool ok = c && v && (names == any_names || !strcmp(name, names ? names[i] : want));
    for (uint32_t j = 0; ok && j < len; j++) {
      char *end;
      float x = strtof(c + 1, &end);
      ok = end != c + 1 && (*end == sep || *end == '\n' || !*end) && x == v[j];
      c = end;
    }
    if (!ok || (*c != '\n' && *c)) bad++;
    if (!ok && bad == 1) fprintf(stderr, "\n  %s: line %llu differs: %s", file,
                                 (unsigned long long)i + 1 + header, line);
  }
  free(line);
  fclose(f);
  CU_ASSERT_EQUAL(i, tb->count);
  CU_ASSERT_EQUAL(bad, 0);
}

void saved_check_npy(const char *dir, const char *file, const char *shape, const float *expect,
                     size_t n) {
  FILE *f = fopen(path_of(dir, file), "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  unsigned char head[10];
  CU_ASSERT_EQUAL_FATAL(fread(head, 1, 10, f), 10);
  CU_ASSERT_EQUAL(memcmp(head, "\x93NUMPY\x01\x00", 8), 0);
  size_t hl = head[8] | (size_t)head[9] << 8;
  CU_ASSERT_EQUAL((10 + hl) % 64, 0);
  char *dict = calloc(hl + 1, 1);
  CU_ASSERT_EQUAL_FATAL(fread(dict, 1, hl, f), hl);
  char want[128];
  snprintf(want, sizeof want, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
  CU_ASSERT_EQUAL(strncmp(dict, want, strlen(want)), 0);
  CU_ASSERT_EQUAL(dict[hl - 1], '\n');
  float *got = calloc(n + 1, sizeof *got);
  CU_ASSERT_EQUAL(fread(got, sizeof *got, n + 1, f), n); /* n floats, then the end */
  CU_ASSERT_EQUAL(memcmp(got, expect, n * sizeof *got), 0);
  free(got);
  free(dict);
  fclose(f);
}

void saved_check_no_parts(const char *dir, uint32_t nodes) {
  for (uint32_t r = 0; r < nodes; r++) {
    char name[64];
    snprintf(name, sizeof name, "params.part%u", (unsigned)r);
    CU_ASSERT_NOT_EQUAL(access(path_of(dir, name), F_OK), 0);
  }
}

/* ------------------------------------------------------ tiny workloads */

const char *const saved_mf_json =
    "{\"type\":\"mf\",\"ratings\":\"r.csv\",\"test_fraction\":0,\"rank\":3,"
    "\"batch\":2,\"epochs\":3,\"math\":\"none\"}";
const char *const saved_kge_json =
    "{\"type\":\"kge\",\"train\":\"t.tsv\",\"model\":\"distmult\",\"dim\":4,"
    "\"batch\":1,\"neg\":2,\"epochs\":3,\"math\":\"none\"}";
const char *const saved_w2v_json =
    "{\"type\":\"w2v\",\"corpus\":\"c.txt\",\"min_count\":1,\"dim\":4,\"window\":2,"
    "\"neg\":2,\"batch\":4,\"subsample\":0,\"epochs\":2,\"math\":\"none\"}";
/* tensors of 15 and 8 floats in keys of 5: the keys' values in key order
 * are the tensors' floats in order */
const char *const saved_dnn_json =
    "{\"type\":\"dnn\",\"layers\":[4,3,2],\"key_floats\":5,\"examples\":32,"
    "\"batch\":4,\"epochs\":2,\"test_examples\":8}";

const char *const saved_mf_generated_json =
    "{\"type\":\"mf\",\"rows\":7,\"cols\":5,\"nnz\":24,\"rank\":2,\"batch\":2,"
    "\"epochs\":2,\"math\":\"none\"}";
const char *const saved_mf_adagrad_json =
    "{\"type\":\"mf\",\"rows\":7,\"cols\":5,\"nnz\":24,\"rank\":2,\"batch\":2,"
    "\"epochs\":2,\"optimizer\":\"adagrad\",\"test_fraction\":0}";
/* tensors of 7 and 5 floats in keys of 3: table 0 holds 7's first 6 and
 * 5's first 3, then a table of 7's last float, one of 5's last 2 */
const char *const saved_dnn_tensors_json =
    "{\"type\":\"dnn\",\"tensors\":[7,5],\"key_floats\":3,\"examples\":16,"
    "\"batch\":4,\"epochs\":2,\"math\":\"none\"}";

/* Names by id: in order of first appearance in the files below. A name
 * with a quote is quoted in the saved file. */
static const char *const users[] = {"alice", "bob", "o\"neil", "carol", "dave"};
static const char *const items[] = {"matrix", "alien", "brazil"};
static const char *const entities[] = {"cat",  "animal", "dog",   "fish",
                                       "bone", "q\"uote", "thing", "food"};
static const char *const relations[] = {"is_a", "likes"};

void saved_write_data(const char *dir) {
  unit_write(dir, "r.csv",
             "user,item,rating\nalice,matrix,5\nbob,matrix,3\no\"neil,alien,4\nalice,alien,1\n"
             "carol,brazil,2\nbob,brazil,4\ncarol,alien,5\no\"neil,matrix,2\ndave,brazil,3\n"
             "dave,matrix,1\nalice,brazil,4\nbob,alien,2\n");
  unit_write(dir, "t.tsv",
             "cat\tis_a\tanimal\ndog\tis_a\tanimal\ncat\tlikes\tfish\ndog\tlikes\tbone\n"
             "q\"uote\tis_a\tthing\nfish\tis_a\tfood\nbone\tis_a\tthing\ncat\tis_a\tthing\n");
  unit_write(dir, "c.txt",
             "cat dog pet animal fur\ndog cat pet bark\ncar road wheel drive\n"
             "road car drive fast wheel\nfur pet cat\nwheel car fast\n");
}

void saved_check_files(const char *type, const char *dir, const wl_params *p) {
  if (!strcmp(type, "mf")) {
    saved_check_rows(dir, "user_factors.csv", ',', true, p, 0, 3, users);
    saved_check_rows(dir, "item_factors.csv", ',', true, p, 1, 3, items);
  } else if (!strcmp(type, "mf generated") || !strcmp(type, "mf adagrad")) {
    /* ids are their numbers; with AdaGrad the factor only, not what follows */
    if (!strcmp(type, "mf adagrad")) CU_ASSERT_EQUAL(p->n_floats, (7 + 5) * 2 * 2);
    saved_check_rows(dir, "user_factors.csv", ',', true, p, 0, 2, NULL);
    saved_check_rows(dir, "item_factors.csv", ',', true, p, 1, 2, NULL);
  } else if (!strcmp(type, "dnn tensors")) {
    CU_ASSERT_EQUAL_FATAL(p->n_floats, 7 + 5);
    const float *v = p->values;
    float t0[7], t1[5];
    memcpy(t0, v, 6 * sizeof *v);
    t0[6] = v[9];
    memcpy(t1, v + 6, 3 * sizeof *v);
    memcpy(t1 + 3, v + 10, 2 * sizeof *v);
    saved_check_npy(dir, "tensor0.npy", "(7,)", t0, 7);
    saved_check_npy(dir, "tensor1.npy", "(5,)", t1, 5);
  } else if (!strcmp(type, "kge")) { /* the embedding, not the AdaGrad half */
    saved_check_rows(dir, "entities.tsv", '\t', false, p, 0, 4, entities);
    saved_check_rows(dir, "relations.tsv", '\t', false, p, 1, 4, relations);
  } else if (!strcmp(type, "w2v")) {
    saved_check_rows(dir, "vectors.txt", ' ', true, p, 0, 4, any_names);
  } else if (!strcmp(type, "dnn")) {
    CU_ASSERT_EQUAL_FATAL(p->n_floats, 15 + 8);
    saved_check_npy(dir, "layer0.weight.npy", "(3, 4)", p->values, 12);
    saved_check_npy(dir, "layer0.bias.npy", "(3,)", p->values + 12, 3);
    saved_check_npy(dir, "layer1.weight.npy", "(2, 3)", p->values + 15, 6);
    saved_check_npy(dir, "layer1.bias.npy", "(2,)", p->values + 21, 2);
  } else {
    CU_FAIL("no such workload type");
  }
}
