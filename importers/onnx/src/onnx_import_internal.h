// Shared between the importer's stages: the ONNX protobuf types, the import context and the stage entry points.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "dpl/import/onnx.h"
#include "dpl/ir/builder.h"

namespace dpl::onnx_import {

// --- proto_loading.cpp: bytes -> ModelProto, ONNX types and tensors -> dpl types and literals ---

// Parses `model`'s bytes, gives the graph inputs' symbolic dimensions named in `dims` their extents, and completes
// value_info with ONNX shape inference (a model ONNX cannot infer keeps what it declares). Returns false with an
// error message on bytes that are not a ModelProto.
bool parse_model(const SourceFile& model, const std::map<std::string, int64_t>& dims, ::onnx::ModelProto& proto,
                 std::string& error);
// Adds `dims` as the declared shape of value `name` (a symbol under the model's spelling of it, the inferred -1 an
// unknown extent); infer_shapes then gives the values computed from it shapes too.
void declare_shape(::onnx::ModelProto& proto, const std::string& name, DType dtype, std::span<const Dim> dims);
// Completes value_info with ONNX's shape inference; a model ONNX cannot infer keeps what it declares.
void infer_shapes(::onnx::ModelProto& proto);
// True for the default ONNX domain, written "" or "ai.onnx".
bool is_standard_domain(std::string_view domain);
// The opset version of the default ONNX domain (1 when the model declares none).
int64_t default_opset(const ::onnx::ModelProto& proto);
// The dpl dtype of an ONNX TensorProto data type; nullopt for types dpl has no dtype for (string, complex, ...).
std::optional<DType> dtype_of(int32_t onnx_data_type);
std::string onnx_dtype_name(int32_t onnx_data_type);
// A symbolic dimension's name made a TVMScript identifier: "p2o.DynamicDimension.0" -> "p2o_DynamicDimension_0".
std::string identifier_from(std::string_view name);
// The tensor type a ValueInfoProto declares; nullptr when it declares no tensor type or an unsupported dtype.
TypeRef type_of(const ::onnx::TypeProto& type);
// Decodes a TensorProto's values (raw_data or the typed fields). Fails for unsupported dtypes and external data.
bool decode_tensor(const ::onnx::TensorProto& tensor, Literal& literal, std::string& error);
// The static shape and dtype of a TensorProto without decoding its values.
TypeRef tensor_proto_type(const ::onnx::TensorProto& tensor, std::string& error);

// --- shape vectors: what the importer knows of an int64 vector computed from tensor shapes ---

// One element: unknown, a known integer, or a symbolic dimension that the function's parameters bind.
using ShapeElement = std::variant<std::monostate, int64_t, Dim>;

// An integer tensor of rank 0 or 1 (Shape's result and what Gather, Slice, Concat, Cast... make of it), element by
// element. The lattice of shape_vectors.cpp.
struct ShapeVector {
  DType dtype = DType::Int64;
  bool scalar = false;  // rank 0 (one element) rather than rank 1
  std::vector<ShapeElement> elements;

  bool is_static() const;  // every element a known integer
  Literal literal() const;  // only when is_static()
};

// --- the context every converter works in ---

class ImportContext {
 public:
  ImportContext(Function& function, const OnnxImportOptions& options, int64_t opset)
      : builder_(function), options_(options), opset_(opset) {}

  Builder& build() { return builder_; }
  Function& function() { return builder_.function(); }
  const OnnxImportOptions& options() const { return options_; }
  int64_t opset() const { return opset_; }

  // The value an ONNX name denotes; nullptr when unknown (the caller reports it).
  Node* value(const std::string& name) const;
  void bind(const std::string& name, Node* node);
  // The declared (value_info / output) type of an ONNX value, or nullptr.
  TypeRef declared_type(const std::string& name) const;
  void declare(const std::string& name, TypeRef type) { declared_[name] = type; }

  // A tensor proto as a literal constant (small, or named by keep_literal) or a new parameter named after it
  // (large); nullptr + error on data dpl cannot hold.
  Node* tensor_value(const std::string& name, const ::onnx::TensorProto& tensor, std::string& error);
  // The tensor named `name` becomes a literal whatever its size (an operator input that acts as an attribute).
  void keep_literal(const std::string& name) { literal_names_.insert(name); }
  size_t weights() const { return weights_; }

  // The shape vector a value holds: read from an integer literal of rank <= 1, else as recorded; nullopt when
  // nothing is known.
  std::optional<ShapeVector> shape_vector(const Node* value) const;
  void set_shape_vector(const Node* value, ShapeVector vector) { shape_vectors_[value] = std::move(vector); }
  // True when `dim` is a symbol some parameter's type has: only those are defined where a shape literal could use
  // them (as in TVM, where a function's symbolic variables are defined by its parameters).
  bool binds_symbol(Dim dim);

 private:
  Builder builder_;
  const OnnxImportOptions& options_;
  int64_t opset_;
  std::unordered_map<std::string, Node*> values_;
  std::unordered_map<std::string, TypeRef> declared_;
  std::unordered_set<std::string> literal_names_;
  std::unordered_map<const Node*, ShapeVector> shape_vectors_;
  size_t weights_ = 0;
};

// One ONNX node being converted: its proto, operand values (nullptr for an omitted optional input) and context.
struct NodeView {
  const ::onnx::NodeProto& proto;
  std::vector<Node*> inputs;
  ImportContext& context;

  const ::onnx::AttributeProto* attr(std::string_view name) const;
  int64_t int_attr(std::string_view name, int64_t fallback) const;
  double float_attr(std::string_view name, double fallback) const;
  std::string string_attr(std::string_view name, std::string fallback) const;
  std::optional<std::vector<int64_t>> ints_attr(std::string_view name) const;
  // Input i when present (ONNX writes an omitted optional input as "").
  Node* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // Input i, which the operator requires: throws BuildError when the node omits it.
  Node* required(size_t i) const;
  // Integer values of input i when it is a literal constant (shapes, axes, split sizes).
  std::optional<std::vector<int64_t>> constant_ints(size_t i) const;
  // The value of input i when it is a literal scalar (or one-element) constant.
  std::optional<double> constant_scalar(size_t i) const;
  // The rank of input i, or -1.
  int rank(size_t i) const;
  int64_t opset() const { return context.opset(); }
};

// --- op_mapping.cpp ---

// What a converter produced: one value per ONNX output, or nothing when the node is better kept opaque (an
// attribute combination or non-constant operand the mapping does not cover). Builder errors propagate as
// BuildError and are reported against the node.
using Converted = std::optional<std::vector<Node*>>;
using Converter = Converted (*)(const NodeView& node);
// The converter of a standard-domain operator, or nullptr.
Converter find_converter(std::string_view op_type);
// Whether input `input` of a standard-domain `op_type` node parameterizes the operator (Resize's scales), so an
// initializer or Constant feeding it is kept a literal the converter can read.
bool is_attribute_input(std::string_view op_type, size_t input);
// Axes from the attribute (before `input_opset`) or from input 1 (from `input_opset` on). `absent` tells whether
// the node gave none; nullopt when the input is computed.
std::optional<std::vector<int64_t>> axes_of(const NodeView& node, int64_t input_opset, bool& absent);
// Slice's bounds: attributes before opset 10, literal inputs after; axes default to 0, 1, ...; steps to all 1
// (nullopt). nullopt when a bound is computed.
struct SliceBounds {
  std::vector<int64_t> starts, ends, axes;
  std::optional<std::vector<int64_t>> steps;
};
std::optional<SliceBounds> slice_bounds(const NodeView& node);

// --- shape_vectors.cpp ---

// The shape vector the single-output ONNX node computes from its inputs' types and shape vectors (Shape, Gather,
// Slice, Squeeze, Unsqueeze, Concat, Cast to an integer dtype, Identity, Add, Sub, Mul, Div); nullopt when the node
// is no such computation or its inputs are not known well enough.
std::optional<ShapeVector> infer_shape_vector(const NodeView& node);
// Reshape's target as dims (ONNX semantics: 0 copies the input's extent unless `allowzero`, -1 is inferred), from
// the shape vector of input 1. A single unknown element becomes the inferred extent (-1): the element count leaves
// it no other value. nullopt when input 1 is not a known vector or more than one extent is left to infer.
std::optional<std::vector<Dim>> reshape_target(const NodeView& node);

// --- constant_folding.cpp ---

// When `value` is a call of a registered op on literals (directly or in a tuple) with an integer or bool result of
// at most `max_elements` elements -- the shape arithmetic of exported models -- returns a new literal holding what
// the reference interpreter computes for it; else nullptr.
Node* fold_shape_arithmetic(Function& function, Node* value, int64_t max_elements);

// --- opaque_ops.cpp ---

// Emits `node` as a call of the opaque op `onnx.<OpType>` (registered on first use): its present inputs as
// operands, its attributes (schema order when ONNX knows the operator) and its outputs' declared types.
std::vector<Node*> convert_opaque(const NodeView& node, std::string& registered_name);

}  // namespace dpl::onnx_import
