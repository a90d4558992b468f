#!/usr/bin/env bash
# Runs the counting-overhead benchmark: plain (no hooks), off (hooks, thread not counting),
# basic (counting, Tracking::kBasic) and full (counting, Tracking::kFull), interleaved
# (plain, off, basic, full, plain, ...) so that drift in the machine hits every configuration
# alike; prints each configuration's median ns/op and its ratio to plain's median.
#
# usage: counting_overhead.sh [-r RUNS] [-n OPS] [-c CPU] [BIN_DIR]
#   BIN_DIR  directory holding counting_overhead_plain and counting_overhead_hooked
#            (default: the first of ., ./bench that has them)
#   -r RUNS  rounds (default 11)     -n OPS  ops per run (default 1000000)
#   -c CPU   pin every run to this CPU with taskset (default: no pinning)
# Target: basic <= 1.03 x plain.
set -euo pipefail

runs=11
ops=1000000
cpu=""
while getopts "r:n:c:h" option; do
  case "${option}" in
    r) runs="${OPTARG}" ;;
    n) ops="${OPTARG}" ;;
    c) cpu="${OPTARG}" ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

bin_dir="${1:-}"
if [[ -z "${bin_dir}" ]]; then
  for candidate in . ./bench; do
    if [[ -x "${candidate}/counting_overhead_plain" ]]; then bin_dir="${candidate}"; break; fi
  done
fi
if [[ -z "${bin_dir}" || ! -x "${bin_dir}/counting_overhead_plain" ||
      ! -x "${bin_dir}/counting_overhead_hooked" ]]; then
  echo "counting_overhead.sh: no counting_overhead_plain/_hooked in '${bin_dir:-. or ./bench}';" \
       "pass the bench/ directory of a Release build" >&2
  exit 2
fi
if ! [[ "${runs}" =~ ^[1-9][0-9]*$ && "${ops}" =~ ^[1-9][0-9]*$ ]]; then
  echo "counting_overhead.sh: -r and -n take positive integers" >&2
  exit 2
fi

pin=()
if [[ -n "${cpu}" ]]; then pin=(taskset -c "${cpu}"); fi

configs=(plain off basic full)
declare -A samples
for config in "${configs[@]}"; do samples[${config}]=""; done

# One run: prints its ns/op.
run_one() {
  local config="$1" line
  if [[ "${config}" == plain ]]; then
    line="$("${pin[@]}" "${bin_dir}/counting_overhead_plain" "${ops}")"
  else
    line="$("${pin[@]}" "${bin_dir}/counting_overhead_hooked" "${config}" "${ops}")"
  fi
  sed -n 's/.*ns_per_op=\([0-9.]*\).*/\1/p' <<<"${line}"
}

median() {
  tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for ((round = 1; round <= runs; ++round)); do
  for config in "${configs[@]}"; do
    samples[${config}]+=" $(run_one "${config}")"
  done
  echo "round ${round}/${runs}:$(for c in "${configs[@]}"; do
    printf ' %s=%s' "${c}" "$(awk '{ print $NF }' <<<"${samples[${c}]}")"; done)" >&2
done

plain_median="$(median <<<"${samples[plain]}")"
printf '%-6s %12s %10s   (%d runs x %d ops, interleaved)\n' config median_ns/op vs_plain \
  "${runs}" "${ops}"
for config in "${configs[@]}"; do
  m="$(median <<<"${samples[${config}]}")"
  printf '%-6s %12.2f %10s\n' "${config}" "${m}" \
    "$(awk -v m="${m}" -v p="${plain_median}" 'BEGIN { printf "%.3fx", m / p }')"
done
