// The mapping table: one converter per standard ONNX operator, building registered dpl ops with the Builder.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

using KwArgs = std::vector<Builder::KwArg>;

Node* call(const NodeView& node, std::string_view op, const std::vector<Node*>& operands, const KwArgs& attrs = {}) {
  return node.context.build().call(op, operands, attrs);
}

Converted one(Node* value) { return std::vector<Node*>{value}; }

DType dtype_of_input(const NodeView& node, size_t i) {
  Node* input = node.input(i);
  return input != nullptr && input->type() != nullptr ? input->type()->dtype() : DType::Unknown;
}

Node* scalar_like(const NodeView& node, double value, size_t like_input) {
  DType dtype = dtype_of_input(node, like_input);
  return node.context.build().scalar(value, dtype == DType::Unknown ? DType::Float32 : dtype);
}

// Operators that are one registered op over the same operands; variadic ones (Max, Min, Sum) fold pairwise.
const std::unordered_map<std::string_view, std::string_view>& direct_ops() {
  static const std::unordered_map<std::string_view, std::string_view> table = {
      {"Add", "add"},        {"Sub", "subtract"},        {"Mul", "multiply"},       {"Div", "divide"},
      {"Equal", "equal"},    {"Less", "less"},            {"LessOrEqual", "less_equal"},
      {"Greater", "greater"}, {"GreaterOrEqual", "greater_equal"},                   {"And", "logical_and"},
      {"Or", "logical_or"},  {"Where", "where"},          {"Max", "maximum"},        {"Min", "minimum"},
      {"Sum", "add"},        {"Exp", "exp"},              {"Log", "log"},            {"Sqrt", "sqrt"},
      {"Neg", "negative"},   {"Abs", "abs"},              {"Tanh", "tanh"},          {"Sigmoid", "sigmoid"},
      {"Erf", "erf"},        {"Cos", "cos"},              {"Sin", "sin"},            {"Not", "logical_not"},
      {"Relu", "nn.relu"},   {"MatMul", "matmul"},
  };
  return table;
}

Converted convert_direct(const NodeView& node) {
  std::string_view op = direct_ops().at(node.proto.op_type());
  const OpInfo* info = OpRegistry::global().find(op);
  if (info->max_operands == 2 && node.inputs.size() > 2) {
    Node* folded = node.inputs[0];
    for (size_t i = 1; i < node.inputs.size(); ++i) folded = call(node, op, {folded, node.inputs[i]});
    return one(folded);
  }
  return one(call(node, op, node.inputs));
}

Converted convert_alias(const NodeView& node) {
  // Dropout in inference and Identity: the output is the input. A Dropout mask output is not modelled.
  if (node.proto.output_size() > 1 && !node.proto.output(1).empty()) return std::nullopt;
  return one(node.required(0));
}

Converted convert_pow(const NodeView& node) {
  Node* exponent = node.input(1);
  DType base_dtype = dtype_of_input(node, 0);
  // ONNX lets the exponent have its own dtype; Relax's power wants one dtype.
  if (base_dtype != DType::Unknown && dtype_of_input(node, 1) != base_dtype)
    exponent = call(node, "astype", {exponent}, {{"dtype", std::string(dtype_name(base_dtype))}});
  return one(call(node, "power", {node.input(0), exponent}));
}

Converted convert_transpose(const NodeView& node) {
  std::optional<std::vector<int64_t>> perm = node.ints_attr("perm");
  AttrValue axes = perm ? AttrValue(*perm) : AttrValue(std::monostate{});
  return one(call(node, "permute_dims", {node.input(0)}, {{"axes", axes}}));
}

Converted reshape_to(const NodeView& node, std::vector<Dim> dims) {
  Node* shape = node.context.function().add_shape(std::move(dims));
  return one(call(node, "reshape", {node.input(0), shape}));
}

Converted convert_reshape(const NodeView& node) {
  node.required(0);
  std::optional<std::vector<Dim>> dims = reshape_target(node);
  if (!dims) return std::nullopt;  // a shape only known at run time: kept opaque
  return reshape_to(node, std::move(*dims));
}

// The product of static extents, or nullopt when one of them is symbolic.
std::optional<int64_t> static_product(std::span<const Dim> dims) {
  int64_t product = 1;
  for (Dim dim : dims) {
    if (!dim.is_static()) return std::nullopt;
    product *= dim.extent();
  }
  return product;
}

Converted convert_flatten(const NodeView& node) {
  TypeRef input = node.required(0)->type();
  if (!input->has_shape()) return std::nullopt;
  int64_t axis = node.int_attr("axis", 1);
  const auto rank = static_cast<int64_t>(input->dims().size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) throw BuildError(fmt::format("Flatten: axis {} is out of range", axis));
  std::span<const Dim> dims = input->dims();
  std::optional<int64_t> outer = static_product(dims.first(static_cast<size_t>(axis)));
  std::optional<int64_t> inner = static_product(dims.subspan(static_cast<size_t>(axis)));
  if (!outer && !inner) return std::nullopt;  // one -1 cannot stand for two symbolic parts
  return reshape_to(node, {outer ? Dim::fixed(*outer) : Dim::inferred(), inner ? Dim::fixed(*inner) : Dim::inferred()});
}

Converted convert_concat(const NodeView& node) {
  Node* fields = node.context.function().add_tuple(node.inputs);
  return one(call(node, "concat", {fields}, {{"axis", node.int_attr("axis", 0)}}));
}

Converted convert_split(const NodeView& node) {
  // Sizes from the `split` input (opset 13+) or attribute; else equal parts, one per output.
  std::optional<std::vector<int64_t>> sizes = node.opset() >= 13 ? node.constant_ints(1) : node.ints_attr("split");
  if (node.opset() >= 13 && node.input(1) != nullptr && !sizes) return std::nullopt;
  AttrValue sections = static_cast<int64_t>(node.proto.output_size());
  if (sizes) {
    std::vector<int64_t> indices;
    int64_t end = 0;
    for (size_t i = 0; i + 1 < sizes->size(); ++i) indices.push_back(end += (*sizes)[i]);
    sections = indices;
  }
  Node* parts = call(node, "split", {node.input(0)},
                     {{"indices_or_sections", sections}, {"axis", node.int_attr("axis", 0)}});
  std::vector<Node*> outputs;
  for (int i = 0; i < node.proto.output_size(); ++i) outputs.push_back(node.context.build().item(parts, i));
  return outputs;
}

}  // namespace

std::optional<std::vector<int64_t>> axes_of(const NodeView& node, int64_t input_opset, bool& absent) {
  if (node.opset() < input_opset) {
    std::optional<std::vector<int64_t>> axes = node.ints_attr("axes");
    absent = !axes;
    return axes ? axes : std::vector<int64_t>{};
  }
  absent = node.input(1) == nullptr;
  if (absent) return std::vector<int64_t>{};
  return node.constant_ints(1);
}

namespace {

Converted convert_squeeze(const NodeView& node, bool unsqueeze) {
  bool absent = false;
  std::optional<std::vector<int64_t>> axes = axes_of(node, 13, absent);
  if (!axes) return std::nullopt;
  if (unsqueeze) return one(call(node, "expand_dims", {node.input(0)}, {{"axis", *axes}}));
  AttrValue axis = absent ? AttrValue(std::monostate{}) : AttrValue(*axes);
  return one(call(node, "squeeze", {node.input(0)}, {{"axis", axis}}));
}
Converted convert_squeeze(const NodeView& node) { return convert_squeeze(node, false); }
Converted convert_unsqueeze(const NodeView& node) { return convert_squeeze(node, true); }

Converted convert_reduce(const NodeView& node) {
  static const std::unordered_map<std::string_view, std::pair<std::string_view, int64_t>> reductions = {
      {"ReduceMean", {"mean", 18}}, {"ReduceSum", {"sum", 13}}, {"ReduceMax", {"max", 18}}, {"ReduceMin", {"min", 18}}};
  const auto& [op, input_opset] = reductions.at(node.proto.op_type());
  bool absent = false;
  std::optional<std::vector<int64_t>> axes = axes_of(node, input_opset, absent);
  if (!axes) return std::nullopt;
  if (absent && node.int_attr("noop_with_empty_axes", 0) != 0) return one(node.input(0));
  AttrValue axis = absent ? AttrValue(std::monostate{}) : AttrValue(*axes);
  return one(call(node, op, {node.input(0)}, {{"axis", axis}, {"keepdims", node.int_attr("keepdims", 1) != 0}}));
}

Converted convert_softmax(const NodeView& node) {
  const bool per_axis = node.opset() >= 13;
  int64_t axis = node.int_attr("axis", per_axis ? -1 : 1);
  if (!per_axis) {
    // Before opset 13 Softmax flattens to 2-D at `axis`: the same as per-axis only on the last axis.
    int rank = node.rank(0);
    if (rank < 0 || (axis != -1 && axis != rank - 1)) return std::nullopt;
  }
  return one(call(node, "nn.softmax", {node.input(0)}, {{"axis", axis}}));
}

Converted convert_gemm(const NodeView& node) {
  Node* a = node.input(0);
  Node* b = node.input(1);
  if (node.int_attr("transA", 0) != 0) a = call(node, "permute_dims", {a});
  if (node.int_attr("transB", 0) != 0) b = call(node, "permute_dims", {b});
  Node* product = call(node, "matmul", {a, b});
  const double alpha = node.float_attr("alpha", 1.0);
  const double beta = node.float_attr("beta", 1.0);
  if (alpha != 1.0) product = call(node, "multiply", {product, scalar_like(node, alpha, 0)});
  Node* c = node.input(2);
  if (c == nullptr || beta == 0.0) return one(product);
  if (beta != 1.0) c = call(node, "multiply", {c, scalar_like(node, beta, 2)});
  return one(call(node, "add", {product, c}));
}

std::vector<int64_t> ints_or(const NodeView& node, std::string_view name, std::vector<int64_t> fallback) {
  std::optional<std::vector<int64_t>> value = node.ints_attr(name);
  return value ? *value : fallback;
}

// Explicit padding only: SAME_UPPER / SAME_LOWER depend on the input extents and are kept opaque.
bool explicit_padding(const NodeView& node) {
  std::string auto_pad = node.string_attr("auto_pad", "NOTSET");
  return auto_pad == "NOTSET" || auto_pad == "VALID";
}

Converted convert_conv(const NodeView& node) {
  const int kernel_rank = node.rank(1);
  if ((kernel_rank != 3 && kernel_rank != 4) || !explicit_padding(node)) return std::nullopt;
  const size_t spatial = static_cast<size_t>(kernel_rank - 2);
  const std::vector<int64_t> ones(spatial, 1);
  std::vector<int64_t> pads = ints_or(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (node.string_attr("auto_pad", "NOTSET") == "VALID") pads.assign(2 * spatial, 0);
  Node* out = call(node, spatial == 2 ? "nn.conv2d" : "nn.conv1d", {node.input(0), node.input(1)},
                   {{"strides", ints_or(node, "strides", ones)},
                    {"padding", pads},
                    {"dilation", ints_or(node, "dilations", ones)},
                    {"groups", node.int_attr("group", 1)}});
  if (node.input(2) != nullptr) out = call(node, "nn.bias_add", {out, node.input(2)}, {{"axis", int64_t{1}}});
  return one(out);
}

// The values of input i when it is a literal constant (Resize's scales).
std::optional<std::vector<double>> constant_values(const NodeView& node, size_t i) {
  Node* value = node.input(i);
  if (value == nullptr || value->kind() != NodeKind::Constant) return std::nullopt;
  return value->literal().values;
}

// 2-D only; output_shape (spatial extents, or all four) becomes explicit padding as ONNX defines it for NOTSET.
Converted convert_conv_transpose(const NodeView& node) {
  TypeRef data = node.required(0)->type();
  TypeRef weight = node.required(1)->type();
  if (node.rank(1) != 4 || !explicit_padding(node) || !weight->has_shape()) return std::nullopt;
  std::vector<int64_t> strides = ints_or(node, "strides", {1, 1});
  std::vector<int64_t> dilations = ints_or(node, "dilations", {1, 1});
  std::vector<int64_t> output_padding = ints_or(node, "output_padding", {0, 0});
  std::vector<int64_t> pads = ints_or(node, "pads", {0, 0, 0, 0});
  if (node.string_attr("auto_pad", "NOTSET") == "VALID") pads.assign(4, 0);
  if (strides.size() != 2 || dilations.size() != 2 || output_padding.size() != 2 || pads.size() != 4)
    return std::nullopt;
  for (size_t s = 0; s < 2; ++s) {
    const Dim kernel = weight->dims()[2 + s];
    if (std::optional<std::vector<int64_t>> shape = node.ints_attr("kernel_shape");
        shape && (shape->size() != 2 || !kernel.is_static() || (*shape)[s] != kernel.extent()))
      return std::nullopt;
  }
  if (std::optional<std::vector<int64_t>> output_shape = node.ints_attr("output_shape")) {
    if (output_shape->size() == 4) output_shape->erase(output_shape->begin(), output_shape->begin() + 2);
    if (output_shape->size() != 2 || !data->has_shape() || data->rank() != 4) return std::nullopt;
    for (size_t s = 0; s < 2; ++s) {
      const Dim input = data->dims()[2 + s];
      const Dim kernel = weight->dims()[2 + s];
      if (!input.is_static() || !kernel.is_static()) return std::nullopt;
      const int64_t total = strides[s] * (input.extent() - 1) + output_padding[s] +
                            (kernel.extent() - 1) * dilations[s] + 1 - (*output_shape)[s];
      // ONNX halves with Python's floor division; a negative end pad is output padding.
      const int64_t end = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pads[s] = total - end;
      pads[s + 2] = std::max<int64_t>(end, 0);
      output_padding[s] += std::max<int64_t>(-end, 0);
      if (pads[s] < 0) return std::nullopt;
    }
  }
  // Relax wants output_padding below the stride (ONNX allows up to the dilation too).
  for (size_t s = 0; s < 2; ++s)
    if (output_padding[s] < 0 || output_padding[s] >= strides[s]) return std::nullopt;
  Node* out = call(node, "nn.conv2d_transpose", {node.input(0), node.input(1)},
                   {{"strides", strides},
                    {"padding", pads},
                    {"output_padding", output_padding},
                    {"dilation", dilations},
                    {"groups", node.int_attr("group", 1)}});
  if (node.input(2) != nullptr) out = call(node, "nn.bias_add", {out, node.input(2)}, {{"axis", int64_t{1}}});
  return one(out);
}

// The ONNX Resize attributes image.resize2d spells differently; nullopt for a value it has no equal for.
std::optional<std::string> resize_method(const std::string& mode) {
  if (mode == "nearest") return "nearest_neighbor";
  if (mode == "linear" || mode == "cubic") return mode;
  return std::nullopt;
}

// Resize (opset 11+) of a 4-D NCHW tensor by literal sizes, or by literal scales that give whole extents (Relax's
// resize maps coordinates by the extents' ratio, ONNX by the scale: they agree only then). N and C unchanged.
Converted convert_resize(const NodeView& node) {
  if (node.opset() < 11 || node.int_attr("antialias", 0) != 0 || node.attr("axes") != nullptr ||
      node.string_attr("keep_aspect_ratio_policy", "stretch") != "stretch")
    return std::nullopt;
  const std::optional<std::string> method = resize_method(node.string_attr("mode", "nearest"));
  const std::string coordinates = node.string_attr("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = node.string_attr("nearest_mode", "round_prefer_floor");
  static constexpr std::array<std::string_view, 5> kCoordinates = {
      "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"};
  static constexpr std::array<std::string_view, 4> kRoundings = {"round_prefer_floor", "round_prefer_ceil",
                                                                  "floor", "ceil"};
  if (!method || std::find(kCoordinates.begin(), kCoordinates.end(), coordinates) == kCoordinates.end() ||
      std::find(kRoundings.begin(), kRoundings.end(), rounding) == kRoundings.end())
    return std::nullopt;
  TypeRef input = node.required(0)->type();
  if (!input->has_shape() || input->rank() != 4) return std::nullopt;
  std::vector<Dim> size;
  if (node.input(3) != nullptr) {
    std::optional<std::vector<int64_t>> sizes = node.constant_ints(3);
    if (!sizes || sizes->size() != 4) return std::nullopt;
    for (size_t axis = 0; axis < 4; ++axis) {
      const Dim dim = input->dims()[axis];
      if (axis < 2 && !(dim.is_static() && dim.extent() == (*sizes)[axis])) return std::nullopt;
      if (axis >= 2) size.push_back(Dim::fixed((*sizes)[axis]));
    }
  } else {
    std::optional<std::vector<double>> scales = constant_values(node, 2);
    if (!scales || scales->size() != 4 || (*scales)[0] != 1.0 || (*scales)[1] != 1.0) return std::nullopt;
    for (size_t axis = 2; axis < 4; ++axis) {
      const Dim dim = input->dims()[axis];
      const double scale = (*scales)[axis];
      if (!dim.is_static()) {
        // A symbolic extent scales exactly by a whole factor: n * 2.
        if (scale != std::floor(scale) || scale < 1.0 || scale > 1024.0) return std::nullopt;
        std::optional<Dim> scaled = dim_mul(dim, Dim::fixed(static_cast<int64_t>(scale)));
        if (!scaled) return std::nullopt;
        size.push_back(*scaled);
        continue;
      }
      const double extent = static_cast<double>(dim.extent()) * scale;
      if (extent != std::floor(extent) || extent < 1.0) return std::nullopt;
      size.push_back(Dim::fixed(static_cast<int64_t>(extent)));
    }
  }
  for (const Dim& dim : size)
    if (dim.is_static() && dim.extent() <= 0) return std::nullopt;
  Node* shape = node.context.function().add_shape(std::move(size));
  return one(call(node, "image.resize2d", {node.input(0), shape},
                  {{"layout", std::string("NCHW")},
                   {"method", *method},
                   {"coordinate_transformation_mode", coordinates},
                   {"rounding_method", *method == "nearest_neighbor" ? rounding : std::string("round")},
                   {"cubic_alpha", node.float_attr("cubic_coeff_a", -0.75)},
                   {"cubic_exclude", node.int_attr("exclude_outside", 0)}}));
}

Converted convert_pool(const NodeView& node) {
  const bool max = node.proto.op_type() == "MaxPool";
  std::vector<int64_t> kernel = ints_or(node, "kernel_shape", {});
  if (kernel.size() != 2 || !explicit_padding(node) || node.proto.output_size() > 1) return std::nullopt;
  std::vector<int64_t> pads = ints_or(node, "pads", {0, 0, 0, 0});
  if (node.string_attr("auto_pad", "NOTSET") == "VALID") pads.assign(4, 0);
  return one(call(node, max ? "nn.max_pool2d" : "nn.avg_pool2d", {node.input(0)},
                  {{"pool_size", kernel},
                   {"strides", ints_or(node, "strides", {1, 1})},
                   {"dilation", ints_or(node, "dilations", {1, 1})},
                   {"padding", pads},
                   {"ceil_mode", node.int_attr("ceil_mode", 0) != 0},
                   {"count_include_pad", node.int_attr("count_include_pad", 0) != 0}}));
}

Converted convert_global_pool(const NodeView& node) {
  const int rank = node.rank(0);
  if (rank < 3) return std::nullopt;
  std::vector<int64_t> axes(static_cast<size_t>(rank - 2));
  std::iota(axes.begin(), axes.end(), 2);
  const char* op = node.proto.op_type() == "GlobalMaxPool" ? "max" : "mean";
  return one(call(node, op, {node.input(0)}, {{"axis", axes}, {"keepdims", true}}));
}

Converted convert_batch_norm(const NodeView& node) {
  if (node.proto.output_size() > 1 || node.int_attr("training_mode", 0) != 0) return std::nullopt;
  Node* norm = call(node, "nn.batch_norm", node.inputs,
                    {{"axis", int64_t{1}},
                     {"epsilon", node.float_attr("epsilon", 1e-5)},
                     {"momentum", node.float_attr("momentum", 0.9)},
                     {"training", false}});
  return one(node.context.build().item(norm, 0));
}

Converted convert_layer_norm(const NodeView& node) {
  for (int i = 1; i < node.proto.output_size(); ++i)
    if (!node.proto.output(i).empty()) return std::nullopt;  // Mean / InvStdDev outputs are not modelled
  const int rank = node.rank(0);
  if (rank < 0) return std::nullopt;
  int64_t axis = node.int_attr("axis", -1);
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i) axes.push_back(i);
  Node* scale = node.required(1);
  Node* bias = node.input(2);
  if (bias == nullptr) {
    // Relax's layer_norm always takes a bias: zeros of the scale's shape.
    TypeRef scale_type = scale->type();
    if (!scale_type->has_shape()) return std::nullopt;
    Node* shape = node.context.function().add_shape({scale_type->dims().begin(), scale_type->dims().end()});
    bias = call(node, "zeros", {shape}, {{"dtype", std::string(dtype_name(scale_type->dtype()))}});
  }
  return one(call(node, "nn.layer_norm", {node.input(0), scale, bias},
                  {{"axes", axes}, {"epsilon", node.float_attr("epsilon", 1e-5)}}));
}

Converted convert_gelu(const NodeView& node) {
  std::string approximate = node.string_attr("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return std::nullopt;
  return one(call(node, approximate == "tanh" ? "nn.gelu_tanh" : "nn.gelu", {node.input(0)}));
}

Converted convert_leaky_relu(const NodeView& node) {
  return one(call(node, "nn.leaky_relu", {node.input(0)}, {{"alpha", node.float_attr("alpha", 0.01)}}));
}

// clip(x * alpha + beta, 0, 1)
Node* hard_sigmoid(const NodeView& node, double alpha, double beta) {
  Node* scaled = call(node, "multiply", {node.input(0), scalar_like(node, alpha, 0)});
  Node* shifted = call(node, "add", {scaled, scalar_like(node, beta, 0)});
  return call(node, "clip", {shifted}, {{"min", 0.0}, {"max", 1.0}});
}

Converted convert_hard_sigmoid(const NodeView& node) {
  return one(hard_sigmoid(node, node.float_attr("alpha", 0.2), node.float_attr("beta", 0.5)));
}

Converted convert_hard_swish(const NodeView& node) {
  return one(call(node, "multiply", {node.input(0), hard_sigmoid(node, 1.0 / 6.0, 0.5)}));
}

Converted convert_clip(const NodeView& node) {
  AttrValue low = std::monostate{};
  AttrValue high = std::monostate{};
  if (node.opset() < 11) {
    if (node.attr("min") != nullptr) low = node.float_attr("min", 0.0);
    if (node.attr("max") != nullptr) high = node.float_attr("max", 0.0);
  } else {
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (node.input(i) == nullptr) continue;
      std::optional<double> bound = node.constant_scalar(i);
      if (!bound) return std::nullopt;  // a computed bound: kept opaque
      (i == 1 ? low : high) = *bound;
    }
  }
  return one(call(node, "clip", {node.input(0)}, {{"min", low}, {"max", high}}));
}

Converted convert_cast(const NodeView& node) {
  std::optional<DType> dtype = dtype_of(static_cast<int32_t>(node.int_attr("to", 0)));
  if (!dtype) return std::nullopt;
  return one(call(node, "astype", {node.input(0)}, {{"dtype", std::string(dtype_name(*dtype))}}));
}

Converted convert_constant(const NodeView& node) {
  const ::onnx::AttributeProto* value = node.attr("value");
  const std::string& name = node.proto.output(0);
  std::string error;
  Node* result = nullptr;
  if (value != nullptr && value->has_t()) {
    result = node.context.tensor_value(name, value->t(), error);
  } else {
    // value_float(s) / value_int(s): small literal tensors.
    Literal literal;
    if (const auto* f = node.attr("value_float")) {
      literal.values = {f->f()};
    } else if (const auto* fs = node.attr("value_floats")) {
      literal.values.assign(fs->floats().begin(), fs->floats().end());
      literal.shape = {fs->floats_size()};
    } else if (const auto* i = node.attr("value_int")) {
      literal = Literal{DType::Int64, {}, {static_cast<double>(i->i())}};
    } else if (const auto* is = node.attr("value_ints")) {
      literal = Literal{DType::Int64, {is->ints_size()}, {is->ints().begin(), is->ints().end()}};
    } else {
      return std::nullopt;  // sparse or string constants
    }
    result = node.context.function().add_constant(std::move(literal));
  }
  if (result == nullptr) throw BuildError(error);
  return one(result);
}

Converted convert_gather(const NodeView& node) {
  return one(call(node, "take", {node.input(0), node.input(1)}, {{"axis", node.int_attr("axis", 0)}}));
}

}  // namespace

std::optional<SliceBounds> slice_bounds(const NodeView& node) {
  SliceBounds bounds;
  std::optional<std::vector<int64_t>> starts, ends, axes;
  if (node.opset() < 10) {
    starts = node.ints_attr("starts");
    ends = node.ints_attr("ends");
    axes = node.ints_attr("axes");
  } else {
    starts = node.constant_ints(1);
    ends = node.constant_ints(2);
    if (node.input(3) != nullptr && !(axes = node.constant_ints(3))) return std::nullopt;
    if (node.input(4) != nullptr && !(bounds.steps = node.constant_ints(4))) return std::nullopt;
  }
  if (!starts || !ends) return std::nullopt;
  bounds.starts = std::move(*starts);
  bounds.ends = std::move(*ends);
  if (axes) {
    bounds.axes = std::move(*axes);
  } else {
    bounds.axes.resize(bounds.starts.size());
    std::iota(bounds.axes.begin(), bounds.axes.end(), 0);
  }
  return bounds;
}

namespace {

Converted convert_slice(const NodeView& node) {
  std::optional<SliceBounds> bounds = slice_bounds(node);
  if (!bounds) return std::nullopt;
  AttrValue strides = bounds->steps ? AttrValue(*bounds->steps) : AttrValue(std::monostate{});
  return one(call(node, "strided_slice", {node.input(0)},
                  {{"axes", bounds->axes}, {"begin", bounds->starts}, {"end", bounds->ends}, {"strides", strides}}));
}

const std::unordered_map<std::string_view, Converter>& converters() {
  static const std::unordered_map<std::string_view, Converter> table = [] {
    std::unordered_map<std::string_view, Converter> map = {
        {"Identity", convert_alias},
        {"Dropout", convert_alias},
        {"Pow", convert_pow},
        {"Transpose", convert_transpose},
        {"Reshape", convert_reshape},
        {"Flatten", convert_flatten},
        {"Concat", convert_concat},
        {"Split", convert_split},
        {"Squeeze", convert_squeeze},
        {"Unsqueeze", convert_unsqueeze},
        {"ReduceMean", convert_reduce},
        {"ReduceSum", convert_reduce},
        {"ReduceMax", convert_reduce},
        {"ReduceMin", convert_reduce},
        {"Softmax", convert_softmax},
        {"Gemm", convert_gemm},
        {"Conv", convert_conv},
        {"ConvTranspose", convert_conv_transpose},
        {"Resize", convert_resize},
        {"MaxPool", convert_pool},
        {"AveragePool", convert_pool},
        {"GlobalAveragePool", convert_global_pool},
        {"GlobalMaxPool", convert_global_pool},
        {"BatchNormalization", convert_batch_norm},
        {"LayerNormalization", convert_layer_norm},
        {"Gelu", convert_gelu},
        {"LeakyRelu", convert_leaky_relu},
        {"HardSigmoid", convert_hard_sigmoid},
        {"HardSwish", convert_hard_swish},
        {"Clip", convert_clip},
        {"Cast", convert_cast},
        {"Constant", convert_constant},
        {"Gather", convert_gather},
        {"Slice", convert_slice},
    };
    for (const auto& [op_type, op] : direct_ops()) map.emplace(op_type, convert_direct);
    return map;
  }();
  return table;
}

}  // namespace

bool is_attribute_input(std::string_view op_type, size_t input) {
  // Resize's roi, scales and sizes parameterize the operator: literals whatever their size.
  return op_type == "Resize" && input >= 1;
}

Converter find_converter(std::string_view op_type) {
  auto it = converters().find(op_type);
  return it == converters().end() ? nullptr : it->second;
}

}  // namespace dpl::onnx_import
