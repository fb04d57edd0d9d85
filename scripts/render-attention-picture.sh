#!/usr/bin/env bash
# Renders docs/attention.png, the README's before/after picture of the seed 000 attention fusion: builds dpl-opt,
# runs `dpl-opt -p seed000_attention --dot` on examples/seed000/attention.input.relax and draws it with Graphviz
# (Debian's graphviz is installed here if `dot` is missing: the build itself does not need it).
# DPL_BUILD_DIR (default: build) and DPL_JOBS (default: 2) adjust it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DPL_BUILD_DIR:-$root/build}
output=$root/docs/attention.png

if ! command -v dot >/dev/null; then
  if [[ $(id -u) -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "render-attention-picture: Graphviz's dot is missing; install the graphviz package as root" >&2
    exit 1
  fi
  echo "render-attention-picture: installing graphviz" >&2
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends graphviz
fi

"$root/scripts/bootstrap.sh"
cmake -S "$root" -B "$build_dir" -G Ninja >/dev/null
cmake --build "$build_dir" -j "${DPL_JOBS:-2}" --target dpl-opt | tail -n 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build_dir/tools/dpl-opt/dpl-opt" -p seed000_attention "$root/examples/seed000/attention.input.relax" \
  --dot "$work/attention.dot" -o "$work/attention.output.relax"
dot -Tpng -Gdpi=110 -o "$output" "$work/attention.dot"
echo "wrote $output"
