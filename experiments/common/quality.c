/*
 * What a held-out quality is called: the measure of the workload that
 * produced it (RMSE, MRR, Hits@10, ...), from workloads/' one table of
 * measures, read from the run configs alone, so that results drawn from
 * runs.jsonl (the table, `pslab plot DIR`) name it as the runs did.
 */
#include "experiments/common/common.h"
#include "workloads/workload.h"

#include <stdio.h>
#include <string.h>

bool exp_is_quality_metric(const char *metric) {
  return metric && (strcmp(metric, "quality") == 0 || strcmp(metric, "epoch_quality") == 0 ||
                    strcmp(metric, "eval_quality") == 0);
}

bool exp_records_quality(const cJSON *records, const char **label, bool *higher_better) {
  const wl_quality *found = NULL;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(r, "config");
    const wl_quality *q = wl_quality_of(cJSON_GetObjectItemCaseSensitive(config, "workload"));
    if (!q) continue;
    if (found && found != q) return false;
    found = q;
  }
  if (!found) return false;
  *label = found->label;
  *higher_better = found->higher_better;
  return true;
}

void exp_quality_words(const char *label, bool higher_better, char *buf, size_t n) {
  snprintf(buf, n, "%s %s", label, higher_better ? "\xe2\x86\x91" : "\xe2\x86\x93");
}
