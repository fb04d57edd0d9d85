#!/usr/bin/env bash
# The README's second command: installs what is missing, configures, builds and runs every test.
# Exits non-zero on any failure. DPL_BUILD_DIR (default: build) and DPL_JOBS (default: 2) adjust it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DPL_BUILD_DIR:-$root/build}
jobs=${DPL_JOBS:-2}

"$root/scripts/bootstrap.sh"
cmake -S "$root" -B "$build_dir" -G Ninja
cmake --build "$build_dir" -j "$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
