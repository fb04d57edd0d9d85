# dpl_add_pass_library(): compiles .dpl rule files into a C++ pass library at build time.
#
#   dpl_add_pass_library(<target> RULES a.dpl [b.dpl ...] [NAMESPACE ns])
#
# For every rule file, dplc runs at build time and writes <stem>.dpl.h and <stem>.dpl.cpp into
# ${CMAKE_CURRENT_BINARY_DIR}/<target>/. It re-runs when the rule file, dplc itself, or any file the rule file
# imports changes (dplc reports imports in a Makefile-syntax depfile). Relative RULES paths are taken relative to
# ${CMAKE_CURRENT_SOURCE_DIR}. NAMESPACE is the C++ namespace of the generated `const dpl::PassDef& <pass>_pass();`
# declarations (dplc's default: dpl_passes). Consumers link <target> and `#include "<stem>.dpl.h"`.
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
# dplc is the in-tree `dplc` target, or the imported `dpl::dplc` of an installed dpl package.
include_guard(GLOBAL)

function(dpl_add_pass_library target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "NAMESPACE" "RULES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dpl_add_pass_library(${target}): unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_RULES)
    message(FATAL_ERROR "dpl_add_pass_library(${target}): RULES needs at least one .dpl file")
  endif()
  if(TARGET dplc)
    set(dplc dplc)
  elseif(TARGET dpl::dplc)
    set(dplc dpl::dplc)
  else()
    message(FATAL_ERROR "dpl_add_pass_library(${target}): no dplc target; build inside dpl or find_package(dpl)")
  endif()
  set(namespace_args)
  if(ARG_NAMESPACE)
    set(namespace_args --namespace ${ARG_NAMESPACE})
  endif()

  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  file(MAKE_DIRECTORY "${out_dir}")
  set(generated)
  set(stems)
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
    add_custom_command(
      OUTPUT "${header}" "${source}"
      COMMAND ${dplc} "${rules_path}" -o "${out_dir}" ${namespace_args} --depfile "${out_dir}/${stem}.dpl.d"
      DEPENDS "${rules_path}" ${dplc}
      DEPFILE "${out_dir}/${stem}.dpl.d"
      COMMENT "dplc ${file_name} -> ${target}/${stem}.dpl.{h,cpp}"
      VERBATIM)
    list(APPEND generated "${header}" "${source}")
  endforeach()

  add_library(${target}_code STATIC ${generated})
  target_include_directories(${target}_code PUBLIC "${out_dir}")
  target_link_libraries(${target}_code PUBLIC dpl::runtime)
  set_target_properties(${target}_code PROPERTIES POSITION_INDEPENDENT_CODE ON)

  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE "${out_dir}")
  target_link_libraries(${target} INTERFACE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${target}_code>" dpl::runtime)
endfunction()
