#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan and runs ctest (minus `slow`).
#
#   scripts/sanitize.sh            # g++ (the default compiler)
#   CXX=clang++-14 scripts/sanitize.sh
#
# Exits non-zero when the build or a test fails, or when any sanitizer wrote a report: every sanitized process
# (dplc at build time, gtest discovery, the tests and the processes they start) logs its reports into
# build-asan/sanitizer-reports/, so a report from a child process whose exit status a test ignores still counts
# (except UBSan's under g++, which go to standard error: see below).
# DPL_ASAN_BUILD_DIR (default: build-asan) and DPL_JOBS (default: 2) adjust it; for a partial run on a slow
# machine, DPL_SANITIZE_TARGETS (build targets, default: all) and DPL_SANITIZE_TESTS (a ctest -R regex).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DPL_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${DPL_JOBS:-2}
reports="$build_dir/sanitizer-reports"

"$root/scripts/bootstrap.sh"

sanitize_flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
# Exported as CXXFLAGS/LDFLAGS so that the projects tests configure themselves, such as the install test's
# consumer build, are sanitized too and link against the sanitized libdpl. -O1 keeps the tests fast enough.
# g++ (12) warns of maybe-uninitialized std::variant and std::vector members in instrumented code that its normal
# builds, and clang's, do not flag: a false positive of its flow analysis under ASan, which -Werror would make fatal.
gcc_only_flags=""
if ! "${CXX:-c++}" -dM -E -x c++ /dev/null | grep -q __clang__; then
  gcc_only_flags="-Wno-maybe-uninitialized"
fi
export CXXFLAGS="-O1 $sanitize_flags $gcc_only_flags"
export LDFLAGS="$sanitize_flags"
# A report also makes the process exit with 86, which no test expects from a tool.
common_options="exitcode=86:log_path=$reports/report"
export ASAN_OPTIONS="$common_options:detect_leaks=1:strict_string_checks=1"
export LSAN_OPTIONS="$common_options:suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="$common_options:print_stacktrace=1:halt_on_error=1"

rm -rf "$reports"
mkdir -p "$reports"
compiler_args=()
if [[ -n "${CXX:-}" ]]; then
  compiler_args=(-DCMAKE_CXX_COMPILER="$CXX")
fi
launcher_args=()
if command -v ccache >/dev/null; then
  launcher_args=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Line tables (-g1) are all the sanitizers' stack traces need, and compile and link much faster than full debug
# information. CMAKE_CXX_FLAGS as well as CXXFLAGS: the environment only seeds a new build directory's cache.
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" "${compiler_args[@]}" "${launcher_args[@]}"
status=0
read -r -a targets <<< "${DPL_SANITIZE_TARGETS:-all}"
# A full run is long (47 minutes on a loaded 2-core machine): keep building past a failure (-k 0) and run the
# tests that did build, so that one run shows every problem.
build_log="$build_dir/sanitize-build.log"
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" -- -k 0 2>&1 | tee "$build_log" || status=$?
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" -LE slow -R "${DPL_SANITIZE_TESTS:-.}" || status=$?

# g++'s UBSan runtime, linked beside its ASan runtime, ignores log_path and reports on standard error (it still
# exits with 86): also look for its reports in the build output (dplc, test discovery) and every test's output.
stderr_reports=$(grep -h "runtime error:" "$build_log" "$build_dir/Testing/Temporary/LastTest.log" || true)
if [[ -n "$stderr_reports" ]]; then
  echo "sanitize: UndefinedBehaviorSanitizer reports on standard error:" >&2
  echo "$stderr_reports" >&2
  exit 1
fi
shopt -s nullglob
found=("$reports"/report*)
if [[ ${#found[@]} -gt 0 ]]; then
  echo "sanitize: ${#found[@]} sanitizer report(s):" >&2
  for report in "${found[@]}"; do
    echo "=== $report" >&2
    cat "$report" >&2
  done
  exit 1
fi
if [[ $status -ne 0 ]]; then
  echo "sanitize: build or tests failed (status $status)" >&2
  exit "$status"
fi
echo "sanitize: clean (no sanitizer reports, all tests passed)"
