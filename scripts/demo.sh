#!/usr/bin/env bash
# The README's first command: installs what is missing, builds dpl in ./build, then shows every bundled example
# (rules, input model, rewritten model, statistics) and runs the bundled passes over the real models.
# DPL_BUILD_DIR (default: build) and DPL_JOBS (default: 2) adjust it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DPL_BUILD_DIR:-$root/build}
models_dir=${DPL_MODELS_DIR:-$root/../shared/models}

banner() { printf '\n%s\n%s\n' "$1" "$(printf '%*s' "${#1}" '' | tr ' ' '=')"; }
section() { printf '\n--- %s\n' "$1"; }
# Lines of the form `name: type = value` inside a function: the model's bindings.
count_bindings() { grep -cE '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*: .+ = ' || true; }

"$root/scripts/bootstrap.sh"
banner "Building dpl in $build_dir"
cmake -S "$root" -B "$build_dir" -G Ninja >/dev/null
cmake --build "$build_dir" -j "${DPL_JOBS:-2}" | tail -n 1
dpl_opt="$build_dir/tools/dpl-opt/dpl-opt"

banner "Passes linked into dpl-opt (dpl-opt --list-passes)"
"$dpl_opt" --list-passes

# The passes written for the real models (examples/models/), applied to them at the end.
model_passes=()
model_partitions=()
for example_dir in "$root"/examples/*/; do
  example=$(basename "$example_dir")
  [[ -e "$example_dir/CMakeLists.txt" ]] && continue
  for rules in "$example_dir"*.dpl; do
    [[ -e "$rules" ]] || continue
    stem=$(basename "$rules" .dpl)
    passes=$(sed -nE 's/^[[:space:]]*pass[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*("[^"]*")?[[:space:]]*[{].*/\1/p' "$rules" |
      paste -sd, -)  # pass blocks, not a test's `pass NAME;`
    [[ -n "$passes" ]] || continue
    # Partitions last, as a BYOC flow carves what the rewrites leave (partition_*.dpl: composite functions).
    if [[ "$example" == models && "$stem" == partition_* ]]; then model_partitions+=("$passes");
    elif [[ "$example" == models ]]; then model_passes+=("$passes"); fi
    # A file that declares a pipeline (seed001: partition, then rewrite) is run through it.
    pipeline_name=$(sed -nE 's/^[[:space:]]*pipeline[[:space:]]+([A-Za-z_][A-Za-z0-9_]*).*/\1/p' "$rules" | awk 'NR == 1')
    [[ -n "$pipeline_name" ]] && passes=$pipeline_name
    input="$example_dir$stem.input.relax"
    expected="$example_dir$stem.expected.relax"
    [[ -e "$input" ]] || continue

    banner "Example $example/$stem: pass $passes"
    section "rules ($example/$stem.dpl)"
    cat "$rules"
    section "before ($example/$stem.input.relax)"
    cat "$input"
    section "after (dpl-opt -p $passes $example/$stem.input.relax --stats)"
    "$dpl_opt" -p "$passes" "$input" --stats 2>"$build_dir/demo-stats.txt"
    section "statistics"
    cat "$build_dir/demo-stats.txt"
    if [[ -e "$expected" ]]; then
      section "compared with the expected result ($example/$stem.expected.relax)"
      "$dpl_opt" -p "$passes" "$input" -o "$build_dir/demo-output.relax"
      "$dpl_opt" --equal "$build_dir/demo-output.relax" "$expected"
    fi
  done
done

pipeline=$(IFS=,; echo "${model_passes[*]},${model_partitions[*]}")
banner "Real models in $models_dir: the passes of examples/models, in one pipeline (partitions last)"
printf '%-32s %9s %9s %9s  %s\n' model bindings after rewrites "passes that fired"
for model in "$models_dir"/*.relax; do
  [[ -e "$model" ]] || continue
  before=$(count_bindings <"$model")
  if "$dpl_opt" -p "$pipeline" "$model" --stats -o "$build_dir/demo-model.relax" 2>"$build_dir/demo-stats.txt"; then
    after=$(count_bindings <"$build_dir/demo-model.relax")
    # "pass NAME: N rewrites, ..." lines: the total, and the passes with N > 0.
    rewrites=$(awk '/^pass /{n += $3} END{print n + 0}' "$build_dir/demo-stats.txt")
    fired=$(awk '/^pass / && $3 > 0 {sub(":", "", $2); printf "%s%s (%d)", sep, $2, $3; sep=", "}' \
              "$build_dir/demo-stats.txt")
    printf '%-32s %9s %9s %9s  %s\n' "$(basename "$model")" "$before" "$after" "$rewrites" "${fired:-none}"
  else
    printf '%-32s %9s %9s\n' "$(basename "$model")" "$before" "failed:"
    sed 's/^/    /' "$build_dir/demo-stats.txt"
  fi
done

# ResNet-50 carved into conv2d + batch_norm (+ relu) composite functions (examples/models/partition_resnet.dpl).
resnet="$models_dir/resnet50.relax"
if [[ -e "$resnet" ]]; then
  banner "ResNet-50 partitioned: dpl-opt -p models_partition_conv_bn resnet50.relax --stats"
  "$dpl_opt" -p models_partition_conv_bn "$resnet" --stats -o "$build_dir/demo-model.relax"
  section "main's first bindings, then the first composite function"
  grep -m 6 -E '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*: .+ = ' "$build_dir/demo-model.relax" | cut -c 1-160
  # awk reads to the end (head would close the pipe early, and pipefail would fail the demo on sed's SIGPIPE).
  sed -n '/R.function(private=True)/,/return/p' "$build_dir/demo-model.relax" | awk 'NR <= 12' | cut -c 1-160
  printf '%s composite functions\n' "$(grep -c '"Composite"' "$build_dir/demo-model.relax")"
fi
# An ONNX network fetched from npm by scripts/fetch-models.sh (via bootstrap.sh), imported (docs/importers.md).
onnx_model=${DPL_MODEL_CACHE:-$root/build/models}/ch_PP-OCRv4_det_infer.onnx
if [[ -e "$onnx_model" ]]; then
  banner "An ONNX network imported: dpl-import --stats $(basename "$onnx_model")"
  "$build_dir/tools/dpl-import/dpl-import" --stats "$onnx_model" -o "$build_dir/demo-import.relax"
  section "the first bindings of the imported function"
  grep -m 8 -E '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*: .+ = ' "$build_dir/demo-import.relax" | cut -c 1-160
  printf '... %s bindings\n' "$(count_bindings <"$build_dir/demo-import.relax")"
  # The printed file, opaque R.onnx.* calls included, is read back by another process and rewritten.
  banner "The imported network rewritten: dpl-opt -p models_partition_conv_bn --stats"
  "$build_dir/tools/dpl-opt/dpl-opt" -p models_partition_conv_bn --stats "$build_dir/demo-import.relax" \
    -o "$build_dir/demo-import-partitioned.relax"
  printf '%s composite functions; %s opaque calls kept\n' \
    "$(grep -c '"Composite"' "$build_dir/demo-import-partitioned.relax")" \
    "$(grep -c 'R\.onnx\.' "$build_dir/demo-import-partitioned.relax")"
fi
rm -f "$build_dir"/demo-stats.txt "$build_dir"/demo-output.relax "$build_dir"/demo-model.relax "$build_dir"/demo-import.relax \
  "$build_dir"/demo-import-partitioned.relax
