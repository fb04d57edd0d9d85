# ctest script: installs the dpl build into a fresh prefix, builds examples/consumer against it with
# find_package(dpl), runs it and compares its output with the expected file using the installed dpl-opt; then
# builds the same rules as a MODULE plugin and runs them through the installed `dpl-opt --load`, and a natives
# library (dpl_add_natives_library) that the installed `dpl-opt --rules --natives` and `dplc --natives` load.
# Inputs (-D): DPL_BUILD_DIR, DPL_SOURCE_ROOT, WORK_DIR, GENERATOR, CXX_COMPILER.
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${ARGN}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  set(step_out "${out}" PARENT_SCOPE)
  set(step_err "${err}" PARENT_SCOPE)
endfunction()

function(expect condition_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "expected ${condition_text}")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")
set(consumer_source "${DPL_SOURCE_ROOT}/examples/consumer")
file(REMOVE_RECURSE "${WORK_DIR}")

run_step("cmake --install" "${CMAKE_COMMAND}" --install "${DPL_BUILD_DIR}" --prefix "${prefix}")

file(GLOB config_files "${prefix}/lib*/cmake/dpl/dplConfig.cmake")
list(LENGTH config_files config_count)
expect("one installed dplConfig.cmake, found: ${config_files}" config_count EQUAL 1)
cmake_path(GET config_files PARENT_PATH config_dir)
foreach(file bin/dplc bin/dpl-opt include/dpl/ir/graph.h include/dpl/ir/ops.def include/dpl/rewrite/driver.h
             include/dpl/text/dot.h)
  expect("${prefix}/${file} to be installed" EXISTS "${prefix}/${file}")
endforeach()
foreach(file dplConfigVersion.cmake dplTargets.cmake DplAddPassLibrary.cmake)
  expect("${config_dir}/${file} to be installed" EXISTS "${config_dir}/${file}")
endforeach()
file(GLOB runtime_libraries "${prefix}/lib*/libdpl_runtime.*")
expect("libdpl_runtime in ${prefix}/lib*" runtime_libraries)

# Consumers need fmt (the static runtime's private dependency) and nothing of the compiler's.
file(GLOB target_files "${config_dir}/dplTargets*.cmake")
foreach(file IN LISTS target_files config_files)
  file(READ "${file}" text)
  foreach(unwanted antlr CLI11 dpl_compiler dpl_grammar "${DPL_BUILD_DIR}" "${DPL_SOURCE_ROOT}/runtime")
    string(FIND "${text}" "${unwanted}" found)
    expect("${file} not to mention ${unwanted}" found EQUAL -1)
  endforeach()
endforeach()

run_step("configuring examples/consumer" "${CMAKE_COMMAND}" -S "${consumer_source}" -B "${consumer_build}"
  -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}")
file(STRINGS "${consumer_build}/CMakeCache.txt" dpl_dir_line REGEX "^dpl_DIR:")
expect("find_package(dpl) to use the fresh prefix, got ${dpl_dir_line}" dpl_dir_line MATCHES "^dpl_DIR:PATH=${prefix}/")

run_step("building examples/consumer" "${CMAKE_COMMAND}" --build "${consumer_build}")
expect("dplc to have generated strength.dpl.h"
  EXISTS "${consumer_build}/consumer_passes/strength.dpl.h")

run_step("running the consumer" "${consumer_build}/consumer" "${consumer_source}/strength.input.relax")
expect("the consumer to report two rewrites, got: ${step_err}" step_err MATCHES "consumer: 2 rewrite\\(s\\)")
file(WRITE "${WORK_DIR}/strength.output.relax" "${step_out}")
run_step("comparing with strength.expected.relax" "${prefix}/bin/dpl-opt"
  --equal "${WORK_DIR}/strength.output.relax" "${consumer_source}/strength.expected.relax")
expect("installed dpl-opt --equal to say equal, got: ${step_out}" step_out STREQUAL "equal\n")

# Bad input reaches the consumer as a diagnostic, not a crash.
file(WRITE "${WORK_DIR}/bad.relax" "@R.function\ndef main(x: R.Tensor((4,), dtype=\"float32\")):\n    return y\n")
execute_process(COMMAND "${consumer_build}/consumer" "${WORK_DIR}/bad.relax"
  RESULT_VARIABLE status ERROR_VARIABLE err OUTPUT_QUIET)
expect("the consumer to fail with exit code 1 on bad input, got ${status}: ${err}" status EQUAL 1)
expect("a file:line:col diagnostic, got: ${err}" err MATCHES "bad.relax:3:")

# The editor's view of the build: dpl_add_pass_library recorded its dplc command in dpl_commands.json.
file(READ "${consumer_build}/dpl_commands.json" commands_json)
string(JSON command_count LENGTH "${commands_json}")
expect("one dpl_commands.json entry, got ${command_count}" command_count EQUAL 1)
string(JSON commands_file GET "${commands_json}" 0 file)
string(JSON commands_dplc GET "${commands_json}" 0 arguments 0)
expect("the entry to name strength.dpl, got ${commands_file}" commands_file STREQUAL "${consumer_source}/strength.dpl")
expect("the entry to run the installed dplc, got ${commands_dplc}" commands_dplc STREQUAL "${prefix}/bin/dplc")

# A plugin built against the installed package (dpl_add_pass_library(... MODULE)) and loaded by the installed
# dpl-opt, which must then run its pass.
set(plugin_source "${WORK_DIR}/plugin-source")
set(plugin_build "${WORK_DIR}/plugin-build")
file(MAKE_DIRECTORY "${plugin_source}")
file(WRITE "${plugin_source}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)
project(dpl_plugin LANGUAGES CXX)
find_package(dpl 0.1 CONFIG REQUIRED)
dpl_add_pass_library(strength_plugin RULES \"${consumer_source}/strength.dpl\" MODULE)
dpl_add_natives_library(test_natives SOURCES \"${DPL_SOURCE_ROOT}/tests/natives/natives.cpp\")
target_include_directories(test_natives PRIVATE \"${DPL_SOURCE_ROOT}/tests/compiler/run\")
")
run_step("configuring the plugin project" "${CMAKE_COMMAND}" -S "${plugin_source}" -B "${plugin_build}"
  -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}")
run_step("building the plugin" "${CMAKE_COMMAND}" --build "${plugin_build}")
run_step("installed dpl-opt --load" "${prefix}/bin/dpl-opt" --load "${plugin_build}/libstrength_plugin.so"
  -p consumer_strength "${consumer_source}/strength.input.relax" -o "${WORK_DIR}/plugin.output.relax")
run_step("comparing the plugin's result with strength.expected.relax" "${prefix}/bin/dpl-opt"
  --equal "${WORK_DIR}/plugin.output.relax" "${consumer_source}/strength.expected.relax")
set(natives_dir "${DPL_SOURCE_ROOT}/tests/natives")
run_step("installed dpl-opt --rules --natives" "${prefix}/bin/dpl-opt" --rules "${natives_dir}/natives_rules.dpl"
  --natives "${plugin_build}/libtest_natives.so" "${natives_dir}/natives_rules.input.relax"
  -o "${WORK_DIR}/natives.output.relax")
run_step("comparing the interpreted result with natives_rules.expected.relax" "${prefix}/bin/dpl-opt"
  --equal "${WORK_DIR}/natives.output.relax" "${natives_dir}/natives_rules.expected.relax")
run_step("installed dplc --natives --test" "${prefix}/bin/dplc" --natives "${plugin_build}/libtest_natives.so"
  --test "${natives_dir}/natives_rules.dpl")
expect("the rule test to pass, got: ${step_out}" step_out MATCHES "PASS flips")
message(STATUS "consumer built against ${prefix} and produced the expected result; so did a plugin and natives")
