# dpl_add_pass_library(): compiles .dpl rule files into a C++ pass library at build time (and, at the end,
# dpl_add_natives_library() for the rule interpreter's natives).
#
#   dpl_add_pass_library(<target> RULES a.dpl [b.dpl ...] [NAMESPACE ns] [PARTS n] [MODULE] [NO_TESTS])
#
# For every rule file, dplc runs at build time and writes <stem>.dpl.h and <stem>.dpl.cpp into
# ${CMAKE_CURRENT_BINARY_DIR}/<target>/. It re-runs when the rule file, dplc itself, or any file the rule file
# imports changes (dplc reports imports in a Makefile-syntax depfile). Relative RULES paths are taken relative to
# ${CMAKE_CURRENT_SOURCE_DIR}. NAMESPACE is the C++ namespace of the generated `const dpl::PassDef& <pass>_pass();`
# declarations (dplc's default: dpl_passes). Consumers link <target> and `#include "<stem>.dpl.h"`.
# PARTS n (default 1) splits each generated source into n files (<stem>.dpl.cpp, <stem>.dpl.part2.cpp, ...,
# `dplc --parts n`) that compile in parallel: for rule files of hundreds of rules, whose decision trees are most
# of the compile time.
#
# Why the library survives linking: each generated pass registers itself by name from a static initializer
# (dpl::PassRegistration) so that tools such as dpl-opt find it with no code referring to it. A linker drops the
# members of a static archive that nothing references, registrations included. So the generated code is compiled
# into the static library <target>_code, and <target> is an INTERFACE library that links it with
# $<LINK_LIBRARY:WHOLE_ARCHIVE,<target>_code>. WHOLE_ARCHIVE travels with <target>'s interface, so every
# executable or shared library that links <target>, directly or through other static libraries, keeps every pass.
# (An OBJECT library would also keep them, but its objects reach only the targets that link it directly.)
# Link <target>, never <target>_code itself: CMake refuses to link one archive both with and without
# WHOLE_ARCHIVE into the same program.
#
# MODULE makes <target> a plugin for `dpl-opt --load lib<target>.so -p <pass>` instead: a MODULE library of the
# generated code that does not link the runtime. The plugin resolves the runtime's symbols from the dpl-opt that
# loads it (dpl-opt is built with ENABLE_EXPORTS and the whole runtime), so its passes register into dpl-opt's
# own registry; linking a second copy of a static runtime into the plugin would give it a registry of its own.
#
# Rule tests: when a rule file declares tests (`test NAME { ... }`, docs/language.md), dplc also writes
# <stem>.dpl.tests, a manifest with their absolute input and expectation paths, and the function builds the
# runner <target>_rule_tests (the pass library and a one-line main calling dpl::rule_test_main) and registers
# the ctest `<target>.rule_tests`, which runs every test of the library's rule files with the compiled passes.
# Whether a file has tests is decided at configure time from lines starting with `test NAME` (a rule file
# generated at build time has none). NO_TESTS skips
# all this; MODULE libraries (plugins) have no runner (`dplc --test` runs their tests with the interpreter).
#
# Every call also records its dplc invocations in ${CMAKE_BINARY_DIR}/dpl_commands.json, written at the end of
# configuration, in the manner of compile_commands.json, for editor tooling: one entry per rule file with "file",
# "directory", "arguments" (the dplc command line), "output" (the generated .cpp), "target" and "import_dirs" (the
# directories `import "...";` paths are resolved against: the rule file's own directory).
#
# dplc is the in-tree `dplc` target, or the imported `dpl::dplc` of an installed dpl package.
include_guard(GLOBAL)

# Writes dpl_commands.json from the entries the calls recorded; deferred to the end of the top-level directory
# so that one file holds every call's entries (file(GENERATE) may write a file only once).
function(_dpl_write_commands_json)
  get_property(entries GLOBAL PROPERTY _DPL_COMMANDS_JSON_ENTRIES)
  list(JOIN entries ",\n" body)
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/dpl_commands.json" CONTENT "[\n${body}\n]\n")
endfunction()

# A JSON string literal of `text`.
function(_dpl_json_string text out_var)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  set(${out_var} "\"${text}\"" PARENT_SCOPE)
endfunction()

# Records one dpl_commands.json entry: dplc (a target; its path is a generator expression) run with dplc_args.
function(_dpl_record_command target dplc rules_path output dplc_args)
  cmake_path(GET rules_path PARENT_PATH rules_dir)
  set(arguments "\"$<TARGET_FILE:${dplc}>\"")
  foreach(arg IN LISTS dplc_args)
    _dpl_json_string("${arg}" arg)
    string(APPEND arguments ", ${arg}")
  endforeach()
  foreach(field rules_path rules_dir output target)
    _dpl_json_string("${${field}}" json_${field})
  endforeach()
  _dpl_json_string("${CMAKE_CURRENT_SOURCE_DIR}" json_directory)
  string(CONCAT entry "  {\"file\": ${json_rules_path}, \"directory\": ${json_directory}, "
    "\"arguments\": [${arguments}], \"output\": ${json_output}, \"target\": ${json_target}, "
    "\"import_dirs\": [${json_rules_dir}]}")
  get_property(scheduled GLOBAL PROPERTY _DPL_COMMANDS_JSON_SCHEDULED)
  if(NOT scheduled)
    set_property(GLOBAL PROPERTY _DPL_COMMANDS_JSON_SCHEDULED TRUE)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _dpl_write_commands_json)
  endif()
  set_property(GLOBAL APPEND PROPERTY _DPL_COMMANDS_JSON_ENTRIES "${entry}")
endfunction()

function(dpl_add_pass_library target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "MODULE;NO_TESTS" "NAMESPACE;PARTS" "RULES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dpl_add_pass_library(${target}): unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_RULES)
    message(FATAL_ERROR "dpl_add_pass_library(${target}): RULES needs at least one .dpl file")
  endif()
  if(TARGET dplc)
    set(dplc dplc)
    set(runtime dpl_runtime)
  elseif(TARGET dpl::dplc)
    set(dplc dpl::dplc)
    set(runtime dpl::runtime)
  else()
    message(FATAL_ERROR "dpl_add_pass_library(${target}): no dplc target; build inside dpl or find_package(dpl)")
  endif()
  set(namespace_args)
  if(ARG_NAMESPACE)
    set(namespace_args --namespace ${ARG_NAMESPACE})
  endif()
  if(NOT DEFINED ARG_PARTS)
    set(ARG_PARTS 1)
  elseif(NOT ARG_PARTS MATCHES "^[1-9][0-9]*$" OR ARG_PARTS GREATER 64)
    message(FATAL_ERROR "dpl_add_pass_library(${target}): PARTS must be a number from 1 to 64, not '${ARG_PARTS}'")
  endif()

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  file(MAKE_DIRECTORY "${out_dir}")
  set(generated)
  set(stems)
  set(manifests)
  foreach(rules IN LISTS ARG_RULES)
    cmake_path(ABSOLUTE_PATH rules BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE OUTPUT_VARIABLE rules_path)
    cmake_path(GET rules_path FILENAME file_name)
    string(REGEX REPLACE "\\.dpl$" "" stem "${file_name}")
    if(stem IN_LIST stems)
      message(FATAL_ERROR "dpl_add_pass_library(${target}): two rule files named ${file_name}")
    endif()
    list(APPEND stems "${stem}")
    set(header "${out_dir}/${stem}.dpl.h")
    set(source "${out_dir}/${stem}.dpl.cpp")
    set(parts)
    set(parts_args)
    if(ARG_PARTS GREATER 1)
      set(parts_args --parts ${ARG_PARTS})
      foreach(part RANGE 2 ${ARG_PARTS})
        list(APPEND parts "${out_dir}/${stem}.dpl.part${part}.cpp")
      endforeach()
    endif()
    set(dplc_args "${rules_path}" -o "${out_dir}" ${namespace_args} ${parts_args} --depfile "${out_dir}/${stem}.dpl.d")
    set(manifest)
    # A rule file generated at build time does not exist yet: it has no tests.
    if(NOT ARG_MODULE AND NOT ARG_NO_TESTS AND EXISTS "${rules_path}")
      file(STRINGS "${rules_path}" test_lines REGEX "^[ \t]*test[ \t]+[A-Za-z_]")
      if(test_lines)
        set(manifest "${out_dir}/${stem}.dpl.tests")
        list(APPEND dplc_args --tests-manifest "${manifest}")
        list(APPEND manifests "${manifest}")
      endif()
    endif()
    add_custom_command(
      OUTPUT "${header}" "${source}" ${parts} ${manifest}
      COMMAND ${dplc} ${dplc_args}
      DEPENDS "${rules_path}" ${dplc}
      DEPFILE "${out_dir}/${stem}.dpl.d"
      COMMENT "dplc ${file_name} -> ${target}/${stem}.dpl.{h,cpp}"
      VERBATIM)
    list(APPEND generated "${header}" "${source}" ${parts})
    _dpl_record_command(${target} ${dplc} "${rules_path}" "${source}" "${dplc_args}")
  endforeach()

  if(ARG_MODULE)
    add_library(${target} MODULE ${generated})
    # The runtime's headers only; its symbols come from the loading dpl-opt (see above).
    target_include_directories(${target} PRIVATE "${out_dir}"
      "$<TARGET_PROPERTY:${runtime},INTERFACE_INCLUDE_DIRECTORIES>")
    target_compile_features(${target} PRIVATE cxx_std_20)
    return()
  endif()

  add_library(${target}_code STATIC ${generated})
  target_include_directories(${target}_code PUBLIC "${out_dir}")
  target_link_libraries(${target}_code PUBLIC dpl::runtime)
  set_target_properties(${target}_code PROPERTIES POSITION_INDEPENDENT_CODE ON)

  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE "${out_dir}")
  target_link_libraries(${target} INTERFACE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${target}_code>" dpl::runtime)

  if(manifests)
    set(runner_main "${out_dir}/rule_test_main.cpp")
    file(CONFIGURE OUTPUT "${runner_main}" CONTENT [[
// The rule-test runner of a pass library (written by dpl_add_pass_library()).
#include "dpl/rewrite/rule_test.h"

int main(int argc, char** argv) { return dpl::rule_test_main(argc, argv); }
]])
    add_executable(${target}_rule_tests "${runner_main}" ${manifests})
    target_link_libraries(${target}_rule_tests PRIVATE ${target})
    add_test(NAME ${target}.rule_tests COMMAND ${target}_rule_tests ${manifests})
  endif()
endfunction()

# dpl_add_natives_library(): a natives library for the rule interpreter (`dpl-opt --rules R.dpl --natives LIB.so`,
# `dplc --natives LIB.so --test|--verify R.dpl`).
#
#   dpl_add_natives_library(<target> SOURCES a.cpp [b.cpp ...])
#
# The sources define the functions that `extern predicate` / `extern rewriter` declarations name and register each
# with `DPL_NATIVE(name);` (dpl/rewrite/natives.h). Like a MODULE pass library, the library is compiled against
# the runtime's headers only and does not link the runtime: its registrations resolve the runtime's symbols, the
# natives registry among them, from the dplc or dpl-opt that loads it, so that they fill that program's one
# registry (a second copy of a static runtime inside the library would have a registry of its own).
function(dpl_add_natives_library target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_SOURCES)
    message(FATAL_ERROR "dpl_add_natives_library(${target}): expected SOURCES a.cpp [b.cpp ...]")
  endif()
  if(TARGET dpl_runtime)
    set(runtime dpl_runtime)
  elseif(TARGET dpl::runtime)
    set(runtime dpl::runtime)
  else()
    message(FATAL_ERROR "dpl_add_natives_library(${target}): no dpl runtime target; build inside dpl or find_package(dpl)")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE "$<TARGET_PROPERTY:${runtime},INTERFACE_INCLUDE_DIRECTORIES>")
  target_compile_features(${target} PRIVATE cxx_std_20)
endfunction()
