#!/usr/bin/env bash
# Regenerates generated/<example>/, the checked-in dplc output for every bundled example rule set; with --check it
# regenerates into a scratch directory instead and fails, showing a diff, when the checked-in copy is stale.
#
#   scripts/update-generated.sh [--dplc PATH] [--check SCRATCH_DIR]
#
# Without --dplc, dplc is built first in $DPL_BUILD_DIR (default: build).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dplc=""
check_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dplc) dplc=${2:?--dplc needs a path}; shift 2 ;;
    --check) check_dir=${2:?--check needs a scratch directory}; shift 2 ;;
    -h|--help) sed -n '2,7s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "update-generated: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [[ -z "$dplc" ]]; then
  build_dir=${DPL_BUILD_DIR:-$root/build}
  cmake -S "$root" -B "$build_dir" -G Ninja >/dev/null
  cmake --build "$build_dir" -j "${DPL_JOBS:-2}" --target dplc
  dplc="$build_dir/compiler/dplc"
fi

# The example directories with rule files (a directory with a CMakeLists.txt is a consumer project, not a rule set).
examples=()
for dir in "$root"/examples/*/; do
  dir=${dir%/}
  if [[ ! -e "$dir/CMakeLists.txt" ]] && compgen -G "$dir/*.dpl" >/dev/null; then
    examples+=("$(basename "$dir")")
  fi
done

# Generates every example's code into $1/<example>/.
generate_into() {
  local out=$1 name rules
  for name in "${examples[@]}"; do
    rm -rf "${out:?}/$name"
    mkdir -p "$out/$name"
    for rules in "$root/examples/$name"/*.dpl; do
      "$dplc" "$rules" -o "$out/$name"
    done
  done
}

if [[ -n "$check_dir" ]]; then
  mkdir -p "$check_dir"
  check_dir=$(cd "$check_dir" && pwd)
  generate_into "$check_dir"
  stale=0
  for name in "${examples[@]}"; do
    if [[ ! -d "$root/generated/$name" ]]; then
      echo "generated/$name is missing" >&2
      stale=1
    elif ! diff -ru "$root/generated/$name" "$check_dir/$name"; then
      stale=1
    fi
  done
  for dir in "$root"/generated/*/; do
    [[ -d "$dir" ]] || continue
    name=$(basename "$dir")
    if [[ ! " ${examples[*]} " == *" $name "* ]]; then
      echo "generated/$name has no rule files in examples/$name" >&2
      stale=1
    fi
  done
  if [[ $stale -ne 0 ]]; then
    echo "generated/ is out of date with dplc's output: run scripts/update-generated.sh and commit the result" >&2
    exit 1
  fi
  echo "generated/ matches dplc's output for ${#examples[@]} example(s)"
  exit 0
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
generate_into "$scratch"
for dir in "$root"/generated/*/; do
  [[ -d "$dir" ]] && rm -rf "$dir"
done
for name in "${examples[@]}"; do
  cp -r "$scratch/$name" "$root/generated/$name"
  echo "generated/$name: $(cd "$root/generated/$name" && ls | tr '\n' ' ')"
done
