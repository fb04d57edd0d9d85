#!/usr/bin/env bash
# Builds the benchmarks in Release and runs them all (issue 5): prints a results table and writes JSON + the plot.
#
#   scripts/bench.sh [BUILD_DIR] [--slow] [--min-time SECONDS] [--no-plot]
#
# BUILD_DIR defaults to build-bench. Results go to BUILD_DIR/bench/results/: one Google Benchmark JSON and console
# log per binary, compile.json (dplc as a process and the C++ compile of its output for 1,000 rules), table.md.
# The plot goes to docs/perf_ns_per_node.png. --slow adds the re-scan baseline on a 10^5-deep cascade (about
# four minutes by itself). --min-time is Google Benchmark's minimum timed time per benchmark (default 0.05 s; the
# untimed graph building of every iteration comes on top). The default run takes about 3 minutes on 2 cores.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-bench"
min_time=0.05
slow=()
plot=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --slow) slow=(--slow) ;;
    --min-time) min_time="$2"; shift ;;
    --no-plot) plot=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$(realpath -m "$1") ;;
  esac
  shift
done

python=/usr/bin/python3  # Debian's interpreter (design brief §7)
results="$build/bench/results"

echo "== configure and build (Release) in $build"
# -O2 rather than CMake's -O3: g++ 12 at -O3 reports false -Wrestrict / -Wuse-after-free warnings that -Werror
# turns into errors (docs/performance.md).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" >/dev/null
mkdir -p "$results"
ninja -C "$build" -j2 dpl-bench >"$results/build.log" 2>&1 || {
  tail -30 "$results/build.log" >&2
  exit 1
}
rm -f "$results"/bench_*.json

for binary in bench_rewrite bench_models bench_dplc bench_text; do
  echo "== $binary"
  start=$(date +%s)
  "$build/bench/$binary" "${slow[@]}" --benchmark_min_time="$min_time" \
    --benchmark_out="$results/$binary.json" --benchmark_out_format=json >"$results/$binary.txt" 2>&1 || {
    echo "bench.sh: $binary failed; see $results/$binary.txt" >&2
    tail -20 "$results/$binary.txt" >&2
    exit 1
  }
  echo "   $(( $(date +%s) - start )) s"
done

echo "== dplc and the C++ compile of its output (1,000 generated rules)"
generated="$results/mixed_1000"
mkdir -p "$generated"
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cxx_flags="-std=c++20 -O2 -DNDEBUG"
seconds_of() {  # runs "$@" and prints its wall time in seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  "$python" -c "print(f'{$t1 - $t0:.3f}')"
}
dplc_seconds=$(seconds_of "$build/compiler/dplc" "$build/bench/rules/mixed_1000.dpl" -o "$generated")
# shellcheck disable=SC2086  # the flags are words
cxx_seconds=$(seconds_of "$cxx" $cxx_flags -I"$root/runtime/include" -I"$generated" -c "$generated/mixed_1000.dpl.cpp" \
  -o "$generated/mixed_1000.dpl.o")
cpp_lines=$(wc -l <"$generated/mixed_1000.dpl.cpp")
# The same output in two parts (dplc --parts 2), compiled at once: the wall time of the pair.
parts="$results/mixed_1000_parts"
mkdir -p "$parts"
"$build/compiler/dplc" "$build/bench/rules/mixed_1000.dpl" -o "$parts" --parts 2
compile_parts() {
  local source
  for source in "$parts"/mixed_1000.dpl.cpp "$parts"/mixed_1000.dpl.part2.cpp; do
    # shellcheck disable=SC2086  # the flags are words
    "$cxx" $cxx_flags -I"$root/runtime/include" -I"$parts" -c "$source" -o "$source.o" &
  done
  wait
}
cxx_parts_seconds=$(seconds_of compile_parts)
cat >"$results/compile.json" <<EOF
{"dplc_seconds": $dplc_seconds, "cxx_seconds": $cxx_seconds, "cxx_parts_seconds": $cxx_parts_seconds,
 "cpp_lines": $cpp_lines, "cxx": "$(basename "$cxx") $cxx_flags"}
EOF

plot_args=()
if [[ $plot -eq 1 ]]; then
  if ! "$python" -c "import matplotlib" 2>/dev/null && ! command -v gnuplot >/dev/null; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      echo "== installing python3-matplotlib for the plot"
      apt-get install -y -q python3-matplotlib >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get install -y -q python3-matplotlib >/dev/null; } ||
        echo "bench.sh: could not install python3-matplotlib; no plot" >&2
    else
      echo "bench.sh: neither matplotlib nor gnuplot is installed; no plot" >&2
    fi
  fi
  plot_args=(--plot "$root/docs/perf_ns_per_node.png")
fi

echo
"$python" "$root/bench/report.py" "$results" --build "$build" --markdown "$results/table.md" "${plot_args[@]}"
