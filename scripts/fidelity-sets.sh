#!/usr/bin/env bash
# fidelity-sets.sh: the simulator against the real backend over several sets, each made as a user
# would (one calibration of an idle machine and its own real runs), since on a small machine one set
# carries an uncertainty of the order of the goal (docs/fidelity.md, "How close it gets").
#
#   fidelity-sets.sh make OUT [N] [--pin]
#                                        N sets (default 3) into OUT/set-1 ...: `pslab calibrate`,
#                                        `calibrate --workload` for each spec, `validate` each spec;
#                                        --pin: `calibrate --pin`, a core per node (the real runs
#                                        pinned as its profile's cluster.machines.pin says); then
#                                        `calibrate` again (p-after.json): how far the machine moved
#   fidelity-sets.sh resim OUT TAG [--set PATH=VALUE]...
#                                        the simulated side again against each set's real runs
#                                        (`validate --reuse-real`), into OUT/set-K/TAG, with the
#                                        step figures derived again from the set's one-node real
#                                        runs under the same --set (`calibrate --workload
#                                        --reuse-real`), since they hold what the model leaves
#                                        uncharged
#   fidelity-sets.sh summary OUT [TAG]   each set's pooled line of fidelity-summary.sh (time_s:
#                                        median and worst error, ranking), then the sets' medians,
#                                        then every point of every set pooled, then each set's
#                                        machine figures after its runs over before
#
# The specs: experiments/specs/fidelity.json (2 and 4 nodes below 16 cores) and the three held-out
# ones. PSLAB: the pslab binary (default build/pslab).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pslab=${PSLAB:-$here/build/pslab}
specs=(fidelity heldout_skew heldout_values heldout_mf)

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "fidelity-sets: $*" >&2; exit 2; }

extra=() # the fidelity spec's node counts this machine has the cores for
node_set() {
  extra=()
  if [ "$1" = fidelity ] && [ "$(nproc)" -lt 16 ]; then extra=(--set 'sweep.cluster.nodes=[2,4]'); fi
}

make_sets() {
  local out=$1 n=${2:-3} pin=()
  if [ "$n" = --pin ]; then n=3; pin=(--pin); elif [ "${3:-}" = --pin ]; then pin=(--pin);
  elif [ -n "${3:-}" ]; then die "make: expected --pin after N, not '$3'"; fi
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "make: N must be a positive integer, not '$n'"
  [ -x "$pslab" ] || die "no pslab at $pslab (build first, or set PSLAB)"
  mkdir -p "$out"
  local k first=1
  while [ -e "$out/set-$first" ]; do first=$((first + 1)); done
  for ((k = first; k < first + n; k++)); do
    local d=$out/set-$k
    mkdir -p "$d.partial"
    echo "fidelity-sets: set $k: calibrate" >&2
    "$pslab" calibrate --out "$d.partial/p.json" --quiet "${pin[@]}"
    local s
    for s in "${specs[@]}"; do
      echo "fidelity-sets: set $k: $s" >&2
      "$pslab" calibrate --workload "$here/experiments/specs/$s.json" --profile "$d.partial/p.json" \
        --out "$d.partial/p-$s.json" --quiet
      node_set "$s"
      "$pslab" validate "$here/experiments/specs/$s.json" --profile "$d.partial/p-$s.json" \
        --out "$d.partial/v-$s" --quiet "${extra[@]}" > /dev/null || true
      [ -s "$d.partial/v-$s/validate.jsonl" ] || die "set $k: $s: validate wrote no validate.jsonl"
    done
    # The machine again, after its real runs: how far it moved from the calibration they are
    # judged with (summary's last table).
    echo "fidelity-sets: set $k: calibrate again" >&2
    "$pslab" calibrate --out "$d.partial/p-after.json" --quiet "${pin[@]}"
    mv "$d.partial" "$d" # a set is whole or not there
  done
}

resim() {
  local out=$1 tag=$2
  shift 2
  [[ $tag =~ ^[A-Za-z0-9_.-]+$ ]] || die "resim: TAG must be a plain name, not '$tag'"
  local d s found=0
  for d in "$out"/set-*/; do
    [ -d "$d" ] || continue
    d=${d%/}
    case $d in *.partial) continue ;; esac
    found=1
    for s in "${specs[@]}"; do
      # The step figures are what the simulator leaves uncharged: derived again
      # from the set's own one-node real runs under the changed model.
      [ -d "$d/p-$s.runs/real" ] || die "$d: no p-$s.runs/real/ (made before calibrate --workload)"
      rm -rf "$d/$tag/v-$s" "$d/$tag/p-$s.runs"
      mkdir -p "$d/$tag/v-$s" "$d/$tag/p-$s.runs"
      cp -r "$d/v-$s/real" "$d/$tag/v-$s/"
      cp -r "$d/p-$s.runs/real" "$d/$tag/p-$s.runs/"
      "$pslab" calibrate --workload "$here/experiments/specs/$s.json" --profile "$d/p.json" \
        --out "$d/$tag/p-$s.json" --reuse-real --quiet "$@" ||
        die "$d: $s: the step figures could not be derived again"
      node_set "$s"
      "$pslab" validate "$here/experiments/specs/$s.json" --profile "$d/$tag/p-$s.json" \
        --out "$d/$tag/v-$s" --reuse-real --quiet "${extra[@]}" "$@" > /dev/null || true
      [ -s "$d/$tag/v-$s/validate.jsonl" ] || die "$d: $s: validate wrote no validate.jsonl"
    done
    echo "fidelity-sets: $d/$tag" >&2
  done
  [ $found = 1 ] || die "resim: no set in $out (make some first)"
}

summary() {
  local out=$1 tag=${2:-} d line found=0
  printf '| set | points | median |error| | worst | ranking |\n|---|---|---|---|---|\n'
  local meds=() worsts=() files=()
  for d in "$out"/set-*/; do
    d=${d%/}
    case $d in *.partial) continue ;; esac
    local from=$d${tag:+/$tag}
    compgen -G "$from/v-*/validate.jsonl" > /dev/null || continue
    found=1
    files+=("$from"/v-*/validate.jsonl)
    # the pooled row ("all"), or with one spec its own (the table's first)
    line=$(bash "$here/scripts/fidelity-summary.sh" "$from"/v-*/validate.jsonl |
      awk '/^\| all \|/ {all = $0} NR == 3 {first = $0} END {print all != "" ? all : first}')
    # | all | points | median | worst | in10 | in25 | within | msgs | rank |
    IFS='|' read -r _ _ pts med worst _ _ _ _ rank _ <<< "$line"
    printf '| %s | %s | %s | %s | %s |\n' "$(basename "$d")" "${pts// /}" "${med// /}" \
      "${worst// /}" "$(echo "$rank" | sed 's/^ *//; s/ *$//')"
    meds+=("${med//[ %]/}")
    worsts+=("${worst//[ %]/}")
  done
  [ $found = 1 ] || die "summary: no set in $out${tag:+ with $tag}"
  printf '%s\n' "${meds[@]}" | sort -g | awk '{a[NR] = $1} END {
    printf "\nthe sets'"'"' median of the medians: %.1f%%", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
  printf '%s\n' "${worsts[@]}" | sort -g | awk '{a[NR] = $1} END {
    printf ", of the worsts: %.1f%% (%d set%s)\n", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, NR,
      NR == 1 ? "" : "s" }'
  # Every point of every set at once: one model against another over all of them.
  line=$(bash "$here/scripts/fidelity-summary.sh" "${files[@]}" |
    awk '/^\| all \|/ {all = $0} NR == 3 {first = $0} END {print all != "" ? all : first}')
  local pts med worst in10 in25 msgs rank
  IFS='|' read -r _ _ pts med worst in10 in25 _ msgs rank _ <<< "$line"
  printf 'pooled, %s points: median %s, worst %s, within 10%% %s, within 25%% %s, worst messages error %s, ranking %s\n' \
    "${pts// /}" "${med// /}" "${worst// /}" "${in10// /}" "${in25// /}" "${msgs// /}" \
    "$(echo "$rank" | sed 's/^ *//; s/ *$//')"
  drift "$out"
}

# A profile's figure (its first number of that name: cost and machines hold numbers, the
# calibration's record objects).
figure() { grep -o "\"$2\":[[:space:]]*[0-9][0-9.e+-]*" "$1" | head -1 | sed 's/.*:[[:space:]]*//'; }

# The sets calibrated again after their real runs (p-after.json): each figure after over before.
drift() {
  local out=$1 d f header=0
  local names=(host_speed loopback_latency wakeup_s io_wakeup_s io_per_message_s per_key_s)
  for d in "$out"/set-*/; do
    d=${d%/}
    case $d in *.partial) continue ;; esac
    [ -s "$d/p-after.json" ] && [ -s "$d/p.json" ] || continue
    if [ $header = 0 ]; then
      printf '\nthe machine after each set'"'"'s real runs, over its calibration:\n\n| set |'
      printf ' %s |' "${names[@]}"
      printf '\n|---|'; printf -- '---|%.0s' "${names[@]}"; printf '\n'
      header=1
    fi
    printf '| %s |' "$(basename "$d")"
    for f in "${names[@]}"; do
      awk -v a="$(figure "$d/p-after.json" "$f")" -v b="$(figure "$d/p.json" "$f")" \
        'BEGIN { if (a == "" || b == "" || b + 0 == 0) printf " - |"; else printf " %.2f |", a / b }'
    done
    printf '\n'
  done
}

case ${1:-} in
  make) [ $# -ge 2 ] && [ $# -le 4 ] || { usage >&2; exit 2; }; shift; make_sets "$@" ;;
  resim) [ $# -ge 3 ] || { usage >&2; exit 2; }; shift; resim "$@" ;;
  summary) [ $# -ge 2 ] && [ $# -le 3 ] || { usage >&2; exit 2; }; summary "$2" "${3:-}" ;;
  -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
