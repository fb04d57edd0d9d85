#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz and runs each for a bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     # default 600; targets: rules relax pass lsp (DPL_FUZZ_TARGETS to choose)
#
# Seeds are gathered fresh on every run from the repository's rule files and IR texts (the regression inputs of
# tests/fuzz_regressions included) and the real models in ../shared/models; what the fuzzers learn is kept in
# build-fuzz/corpus/<target>. A failing input (crash, sanitizer report, failed check, timeout, leak, out of
# memory) is written to build-fuzz/crashes/<target>/ and makes the script exit 1 once every target has run. Turn a finding into a regression test by fixing it and
# copying the input to tests/fuzz_regressions/{dpl,relax,pass,lsp}/ (see docs/verification.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-600}
build_dir=${DPL_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${DPL_JOBS:-2}
targets=(${DPL_FUZZ_TARGETS:-rules relax pass lsp})
models_dir="$root/../shared/models"

"$root/scripts/bootstrap.sh"
clang=$(command -v clang++-14 || command -v clang++)
launcher_args=()
if command -v ccache >/dev/null; then
  launcher_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Line tables (-g1) are all the sanitizers' stack traces need, and build much faster than full debug information.
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DDPL_FUZZ=ON -DDPL_BUILD_TESTS=OFF -DDPL_BUILD_BENCHMARKS=OFF "${launcher_args[@]}"
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]/#/dpl_fuzz_}"

# Seeds: <target> -> files. IR texts are the small ones of examples/ and tests/ plus the models.
small_relax=()
while IFS= read -r -d '' file; do small_relax+=("$file"); done < \
  <(find "$root/examples" "$root/tests" -name '*.relax' -size -16k -print0 | sort -z)
gather_seeds() {
  local target=$1 dir=$2
  rm -rf "$dir"
  mkdir -p "$dir"
  case $target in
    rules|lsp)  # lsp: a rule file edited in the language server
      find "$root/examples" "$root/tests/compiler" "$root/tests/fuzz_regressions" -name '*.dpl' \
        -exec cp -t "$dir" --backup=numbered {} +
      ;;
    relax)
      cp -t "$dir" --backup=numbered "${small_relax[@]}"
      if [[ -d "$models_dir" ]]; then cp -t "$dir" --backup=numbered "$models_dir"/*.relax; fi
      ;;
    pass)
      # The first byte picks the pass (index modulo the number of bundled passes): every small IR text is
      # paired with every pass.
      local passes index file
      passes=$(cat "$root"/examples/*/*.dpl | grep -c '^pass ' || true)
      for ((index = 0; index < passes; ++index)); do
        for file in "${small_relax[@]}"; do
          { printf "\\x$(printf %02x "$index")"; cat "$file"; } > "$dir/$index-$(basename "$file")"
        done
      done
      if [[ -d "$root/tests/fuzz_regressions/pass" ]]; then
        find "$root/tests/fuzz_regressions/pass" -type f -exec cp -t "$dir" --backup=numbered {} +
      fi
      ;;
  esac
}

failed=()
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  seeds="$build_dir/seeds/$target"
  crashes="$build_dir/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  gather_seeds "$target" "$seeds"
  echo "fuzz: $target for ${seconds}s ($(ls "$seeds" | wc -l) seeds, corpus $corpus)" >&2
  status=0
  "$build_dir/fuzz/dpl_fuzz_$target" "$corpus" "$seeds" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=4096 -artifact_prefix="$crashes/" -print_final_stats=1 \
    > "$build_dir/fuzz-$target.log" 2>&1 || status=$?
  tail -n 25 "$build_dir/fuzz-$target.log" >&2
  if [[ $status -ne 0 ]]; then
    failed+=("$target")
    echo "fuzz: $target FAILED (status $status); input in $crashes/, log $build_dir/fuzz-$target.log" >&2
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: failures in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no failures in ${targets[*]} (${seconds}s each)"
