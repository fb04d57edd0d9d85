// Graph building: walks the ONNX graph in order, creating parameters, literals and one converted value per output.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_set>

#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

// `node 12 'Conv_3' (Conv)`: how diagnostics name a node (ONNX files have no lines to point at).
std::string describe(const ::onnx::NodeProto& node, int index) {
  return fmt::format("node {} '{}' ({}{})", index, node.name(), node.domain().empty() ? "" : node.domain() + ".",
                     node.op_type());
}

// Both fully static and different: the mapping (or the model) is wrong.
bool contradicts(TypeRef declared, TypeRef inferred) {
  if (declared == nullptr || inferred == nullptr || !declared->is_tensor() || !inferred->is_tensor()) return false;
  if (declared->static_num_elements() < 0 || inferred->static_num_elements() < 0) return false;
  return declared != inferred;
}

}  // namespace

Node* ImportContext::value(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : it->second;
}

void ImportContext::bind(const std::string& name, Node* node) { values_[name] = node; }

TypeRef ImportContext::declared_type(const std::string& name) const {
  auto it = declared_.find(name);
  return it == declared_.end() ? nullptr : it->second;
}

Node* ImportContext::tensor_value(const std::string& name, const ::onnx::TensorProto& tensor, std::string& error) {
  TypeRef type = tensor_proto_type(tensor, error);
  if (type == nullptr) return nullptr;
  const int64_t limit =
      is_float(type->dtype()) ? options_.max_float_literal_elements : options_.max_int_literal_elements;
  if (type->static_num_elements() <= limit || literal_names_.contains(name)) {
    Literal literal;
    if (!decode_tensor(tensor, literal, error)) return nullptr;
    return function().add_constant(std::move(literal));
  }
  ++weights_;
  return function().add_param(identifier_from(name), type);
}

const ::onnx::AttributeProto* NodeView::attr(std::string_view name) const {
  for (const auto& attribute : proto.attribute())
    if (attribute.name() == name) return &attribute;
  return nullptr;
}

int64_t NodeView::int_attr(std::string_view name, int64_t fallback) const {
  const auto* found = attr(name);
  return found != nullptr && found->has_i() ? found->i() : fallback;
}

double NodeView::float_attr(std::string_view name, double fallback) const {
  const auto* found = attr(name);
  return found != nullptr && found->has_f() ? static_cast<double>(found->f()) : fallback;
}

std::string NodeView::string_attr(std::string_view name, std::string fallback) const {
  const auto* found = attr(name);
  return found != nullptr && found->has_s() ? found->s() : fallback;
}

std::optional<std::vector<int64_t>> NodeView::ints_attr(std::string_view name) const {
  const auto* found = attr(name);
  if (found == nullptr || found->type() != ::onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(found->ints().begin(), found->ints().end());
}

Node* NodeView::required(size_t i) const {
  Node* value = input(i);
  if (value == nullptr) throw BuildError(fmt::format("input {} is required", i));
  return value;
}

std::optional<std::vector<int64_t>> NodeView::constant_ints(size_t i) const {
  Node* value = input(i);
  if (value == nullptr || value->kind() != NodeKind::Constant || !is_integer(value->literal().dtype))
    return std::nullopt;
  const std::vector<double>& values = value->literal().values;
  return std::vector<int64_t>(values.begin(), values.end());
}

std::optional<double> NodeView::constant_scalar(size_t i) const {
  Node* value = input(i);
  if (value == nullptr || value->kind() != NodeKind::Constant || value->literal().values.size() != 1)
    return std::nullopt;
  return value->literal().values[0];
}

int NodeView::rank(size_t i) const {
  Node* value = input(i);
  return value != nullptr && value->type() != nullptr && value->type()->is_tensor() ? value->type()->rank() : -1;
}

namespace {

// One import: the stages of import_onnx over one parsed model, reporting into `diags`.
class GraphImporter {
 public:
  GraphImporter(::onnx::ModelProto& proto, const SourceFile& model, DiagnosticEngine& diags,
                const OnnxImportOptions& options, Function& function)
      : proto_(proto),
        graph_(proto.graph()),
        where_{&model, 0, 0, 1},
        diags_(diags),
        options_(options),
        function_(function),
        context_(function, options, default_opset(proto)) {}

  void run() {
    declare_value_info();
    for (const auto& info : graph_.output()) context_.declare(info.name(), type_of(info.type()));
    for (const auto& node : graph_.node()) {
      if (!is_standard_domain(node.domain())) continue;
      for (int i = 0; i < node.input_size(); ++i)
        if (is_attribute_input(node.op_type(), static_cast<size_t>(i))) context_.keep_literal(node.input(i));
    }
    bind_inputs();
    bind_initializers();
    for (int index = 0; index < graph_.node_size(); ++index) convert_node(graph_.node(index), index);
    set_output();
    stats_.weights = context_.weights();
  }

  OnnxImportStats& stats() { return stats_; }

 private:
  void error(std::string message) { diags_.error(where_, std::move(message)); }

  // Graph inputs that are not initializers are the function's parameters, first; initializers follow as weights.
  void bind_inputs() {
    for (const auto& tensor : graph_.initializer()) initializer_names_.insert(tensor.name());
    for (const auto& input : graph_.input()) {
      if (initializer_names_.contains(input.name())) continue;
      if (auto constant = options_.constant_inputs.find(input.name()); constant != options_.constant_inputs.end()) {
        bind_constant_input(input.name(), constant->second);
        continue;
      }
      TypeRef type = type_of(input.type());
      if (type == nullptr) {
        const bool is_tensor = input.type().has_tensor_type();
        error(fmt::format("graph input '{}' is not a tensor of a supported dtype ({})", input.name(),
                          is_tensor ? onnx_dtype_name(input.type().tensor_type().elem_type()) : "not a tensor type"));
        failed_.insert(input.name());
        continue;
      }
      context_.bind(input.name(), function_.add_param(identifier_from(input.name()), type));
    }
  }

  void bind_constant_input(const std::string& name, const Literal& literal) {
    const int64_t count =
        std::accumulate(literal.shape.begin(), literal.shape.end(), int64_t{1}, std::multiplies<int64_t>());
    if (count != static_cast<int64_t>(literal.values.size())) {
      error(fmt::format("constant input '{}' has {} values for {} elements", name, literal.values.size(), count));
      failed_.insert(name);
      return;
    }
    context_.bind(name, function_.add_constant(literal));
  }

  void bind_initializers() {
    std::string message;
    for (const auto& tensor : graph_.initializer()) {
      if (Node* value = context_.tensor_value(tensor.name(), tensor, message); value != nullptr) {
        context_.bind(tensor.name(), value);
      } else {
        error(fmt::format("initializer '{}': {}", tensor.name(), message));
        failed_.insert(tensor.name());
      }
    }
  }

  void convert_node(const ::onnx::NodeProto& node, int index) {
    ++stats_.onnx_nodes;
    NodeView view{node, {}, context_};
    bool inputs_ok = true;
    for (const std::string& name : node.input()) {
      Node* value = name.empty() ? nullptr : context_.value(name);
      if (!name.empty() && value == nullptr) {
        // A value that failed before was reported there: one mistake, one diagnostic.
        if (!failed_.contains(name))
          error(fmt::format("{}: input '{}' is not produced by an earlier node, an input or an initializer",
                            describe(node, index), name));
        inputs_ok = false;
      }
      view.inputs.push_back(value);
    }
    // Trailing omitted optional inputs carry no position information.
    while (!view.inputs.empty() && view.inputs.back() == nullptr) view.inputs.pop_back();
    if (!inputs_ok) {
      failed_.insert(node.output().begin(), node.output().end());
      return;
    }
    try {
      if (node.op_type() == "Shape" || node.op_type() == "Reshape") reinfer_if_taught();
      std::vector<Node*> outputs = convert(view);
      bind_outputs(node, outputs);
      if (node.op_type() == "Reshape" && !outputs.empty()) teach_onnx_reshape(node.output(0), outputs[0]);
    } catch (const BuildError& failure) {
      error(fmt::format("{}: {}", describe(node, index), failure.what()));
      failed_.insert(node.output().begin(), node.output().end());
    }
  }

  // A shape computation whose every element is known becomes a literal; otherwise the node's converter when it has
  // one and it does not decline, else an opaque call. What is known of a shape vector is recorded on the result
  // for its users (a Reshape then gets a shape of symbolic dims; the opaque Shape it came from is left unused).
  std::vector<Node*> convert(const NodeView& view) {
    std::string opaque_name;
    if (context_.options().keep_opaque.contains(view.proto.op_type())) return convert_opaque(view, opaque_name);
    std::optional<ShapeVector> computed = infer_shape_vector(view);
    if (computed && computed->is_static()) return {function_.add_constant(computed->literal())};
    const ::onnx::NodeProto& node = view.proto;
    Converter converter = is_standard_domain(node.domain()) ? find_converter(node.op_type()) : nullptr;
    Converted converted = converter != nullptr ? converter(view) : std::nullopt;
    std::vector<Node*> outputs = converted ? *converted : convert_opaque(view, opaque_name);
    if (computed && outputs.size() == 1 && outputs[0] != nullptr) context_.set_shape_vector(outputs[0], *computed);
    return outputs;
  }

  void declare_value_info() {
    for (const auto& info : graph_.value_info()) context_.declare(info.name(), type_of(info.type()));
  }

  // ONNX's shape inference does not follow a Reshape whose shape is computed: what comes after it has no declared
  // shape, and later shape computations cannot read the batch from it. When such a Reshape mapped, its dims (the
  // inferred type's, else the target's with -1 unknown) become the output's declared shape, and inference runs
  // again before the next node that reads declared extents (once for a run of such Reshapes).
  void teach_onnx_reshape(const std::string& name, const Node* value) {
    TypeRef declared = context_.declared_type(name);
    if ((declared != nullptr && declared->has_shape()) || !value->is_call() || value->op() != op::reshape) return;
    TypeRef type = value->type();
    std::span<const Dim> dims = type->has_shape() ? type->dims() : value->operands()[1]->shape_value();
    declare_shape(proto_, name, type->dtype(), dims);
    taught_ = true;
  }

  void reinfer_if_taught() {
    if (!taught_) return;
    infer_shapes(proto_);
    declare_value_info();
    taught_ = false;
  }

  // Opaque calls whose results nothing uses any more (shape computations that folded) are gone after compact():
  // the statistics count the opaque calls the function keeps, one per ONNX node.
  void count_opaque_calls() {
    size_t opaque = 0;
    for (const Node* node : function_.nodes()) {
      if (node->is_dead() || !node->is_call() || !is_onnx_opaque_op(node->op())) continue;
      ++stats_.opaque_ops[OpRegistry::global().get(node->op()).name];
      ++opaque;
    }
    stats_.mapped_nodes = stats_.onnx_nodes - opaque;
  }

  void bind_outputs(const ::onnx::NodeProto& node, const std::vector<Node*>& outputs) {
    for (int i = 0; i < node.output_size() && static_cast<size_t>(i) < outputs.size(); ++i) {
      const std::string& name = node.output(i);
      Node* value = outputs[static_cast<size_t>(i)];
      if (name.empty() || value == nullptr) continue;
      if (TypeRef declared = context_.declared_type(name); contradicts(declared, value->type()))
        throw BuildError(fmt::format("output '{}' has type {} but the model declares {}", name, value->type()->str(),
                                     declared->str()));
      if (Node* folded = fold_shape_arithmetic(function_, value, options_.max_int_literal_elements)) value = folded;
      if (value->name().empty()) value->set_name(identifier_from(name));
      context_.bind(name, value);
    }
  }

  void set_output() {
    std::vector<Node*> outputs;
    for (const auto& output : graph_.output()) {
      Node* value = context_.value(output.name());
      if (value == nullptr && !failed_.contains(output.name()))
        error(fmt::format("graph output '{}' is not produced by any node", output.name()));
      outputs.push_back(value);
    }
    if (outputs.empty()) error("the graph has no outputs");
    if (std::find(outputs.begin(), outputs.end(), nullptr) != outputs.end() || outputs.empty()) return;
    function_.set_output(outputs.size() == 1 ? outputs[0] : function_.add_tuple(outputs));
    function_.compact();
    count_opaque_calls();
  }

  ::onnx::ModelProto& proto_;
  bool taught_ = false;  // shapes declared since ONNX's shape inference last ran
  const ::onnx::GraphProto& graph_;
  const SourceLoc where_;
  DiagnosticEngine& diags_;
  const OnnxImportOptions& options_;
  Function& function_;
  ImportContext context_;
  OnnxImportStats stats_;
  std::unordered_set<std::string> initializer_names_;
  // Values that failed (inputs, initializers, nodes' outputs): their users are skipped quietly.
  std::unordered_set<std::string> failed_;
};

}  // namespace

}  // namespace dpl::onnx_import

namespace dpl {

std::unique_ptr<Module> import_onnx(const SourceFile& model, DiagnosticEngine& diags, const OnnxImportOptions& options,
                                    OnnxImportStats* stats) {
  const size_t errors_before = diags.error_count();
  ::onnx::ModelProto proto;
  std::string error;
  if (!onnx_import::parse_model(model, options.dims, proto, error)) {
    diags.error(SourceLoc{&model, 0, 0, 1}, error);
    return nullptr;
  }
  auto module = std::make_unique<Module>();
  onnx_import::GraphImporter importer(proto, model, diags, options, module->add_function(options.function_name));
  importer.run();
  if (diags.error_count() > errors_before) return nullptr;
  if (stats != nullptr) *stats = std::move(importer.stats());
  return module;
}

}  // namespace dpl
