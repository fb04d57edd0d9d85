// The ONNX importer: an ONNX model (protobuf ModelProto) becomes a dpl Module whose one function computes the graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "dpl/ir/graph.h"
#include "dpl/ir/opaque_ops.h"  // is_onnx_opaque_op: the ops of the calls kept opaque
#include "dpl/support/diagnostics.h"

namespace dpl {

struct OnnxImportOptions {
  std::string function_name = "main";
  // Initializers and Constant tensors become R.const literals when they are small enough to read in the text;
  // the rest (the weights) become parameters of the function, after the graph inputs, so weights are never
  // embedded. Float tensors qualify up to `max_float_literal_elements` (scalars), integer and bool tensors up to
  // `max_int_literal_elements` (shapes, axes, indices).
  int64_t max_float_literal_elements = 1;
  int64_t max_int_literal_elements = 64;
  // Graph inputs to specialize on: each becomes this literal instead of a parameter (shapes, axes or clip bounds
  // that a model takes as inputs can then map to static attributes).
  std::map<std::string, Literal> constant_inputs;
  // Extents for the symbolic dimensions of the graph inputs, by name (as in the model, `p2o.DynamicDimension.0`,
  // or as printed, `p2o_DynamicDimension_0`). With every input static, the shape computations of an exported
  // model (Shape, Slice, Concat, Cast feeding a Reshape) fold into literals and map.
  std::map<std::string, int64_t> dims;
  // Operator types (`Resize`, any domain) kept as opaque calls even where a mapping exists: for rules of your own
  // over the operator as ONNX spells it, or a backend that implements it.
  std::set<std::string> keep_opaque;
};

// What an import produced, for tools and tests.
struct OnnxImportStats {
  size_t onnx_nodes = 0;    // nodes of the ONNX graph, Constant nodes included
  size_t mapped_nodes = 0;  // nodes mapped to registered dpl ops (or folded into literals / aliases)
  size_t weights = 0;       // initializers and Constant tensors that became parameters
  // Operators kept as opaque calls (`R.onnx.<OpType>`), with how many nodes each: the calls the function keeps (an
  // opaque Shape whose every user folded its value into a literal or a shape is gone, and counts as mapped).
  std::map<std::string, size_t> opaque_ops;
};

// Imports the model held in `model` (SourceFile::load reads binary files as they are; its path names the model in
// diagnostics). Standard operators map to registered ops (docs/importers.md has the table); any other operator is
// kept as an opaque call of an op registered at run time under `onnx.<OpType>`, with its attributes and a result
// type taken from the model's value_info (completed by ONNX shape inference). On a malformed model, an
// unsupported data type, or a node whose mapping does not type-check, returns nullptr with every error in `diags`.
std::unique_ptr<Module> import_onnx(const SourceFile& model, DiagnosticEngine& diags,
                                    const OnnxImportOptions& options = {}, OnnxImportStats* stats = nullptr);

// Reads a serialized ONNX TensorProto (the input_N.pb / output_N.pb files of ONNX's backend test data) into
// `literal`; false with `error` set on bytes that are not a tensor or hold a dtype dpl has no dtype for.
bool read_onnx_tensor(const SourceFile& file, Literal& literal, std::string& error);

}  // namespace dpl
