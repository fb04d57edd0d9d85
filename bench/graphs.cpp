// Synthetic graph generators for the benchmarks (see graphs.h): built with the runtime's Builder.
#include "graphs.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dpl/ir/builder.h"

namespace dpl::bench {
namespace {

// BERT-base proportions, smaller so that types stay cheap to print: 11 tokens, 4 heads of 16, MLP 4x.
constexpr int64_t kTokens = 11;
constexpr int64_t kHeads = 4;
constexpr int64_t kHeadDim = 16;
constexpr int64_t kHidden = kHeads * kHeadDim;
constexpr int64_t kInner = 4 * kHidden;

TypeRef f32(std::vector<int64_t> extents) {
  std::vector<Dim> dims;
  dims.reserve(extents.size());
  for (int64_t extent : extents) dims.push_back(Dim::fixed(extent));
  return Type::tensor(DType::Float32, dims);
}

const AttrValue kTranspose = std::vector<int64_t>{1, 0};
const AttrValue kToHeads = std::vector<int64_t>{0, 2, 1, 3};
const AttrValue kKeyTranspose = std::vector<int64_t>{0, 1, 3, 2};

// Writes one encoder layer the way the converted models spell it; returns the layer's output.
class LayerWriter {
 public:
  LayerWriter(Builder& b, Node* mask) : b_(b), mask_(mask) {}

  Node* write(Node* input, size_t layer) {
    prefix_ = "l" + std::to_string(layer) + "_";
    Node* q = to_heads(linear(input, "q", kHidden, kHidden));
    Node* k = to_heads(linear(input, "k", kHidden, kHidden));
    Node* v = to_heads(linear(input, "v", kHidden, kHidden));
    Node* scores = b_.call("matmul", {q, b_.call("permute_dims", {k}, {{"axes", kKeyTranspose}})});
    scores = b_.call("multiply", {scores, b_.scalar(0.125)});
    scores = b_.call("add", {scores, mask_});
    Node* probs = b_.call("nn.softmax", {scores}, {{"axis", int64_t{-1}}});
    Node* context = b_.call("permute_dims", {b_.call("matmul", {probs, v})}, {{"axes", kToHeads}});
    context = b_.call("reshape", {context, b_.shape({1, kTokens, kHidden})});
    Node* attended = layer_norm(b_.call("add", {linear(context, "o", kHidden, kHidden), input}), "ln1");

    Node* inner = b_.call("nn.gelu", {linear(attended, "i", kHidden, kInner)});
    // The second MLP weight goes through two transposes that cancel: a site for `double_transpose`.
    Node* w2 = weight("out_w", kHidden, kInner);
    w2 = b_.call("permute_dims", {b_.call("permute_dims", {w2}, {{"axes", kTranspose}})}, {{"axes", kTranspose}});
    Node* mlp = b_.call("add", {b_.call("matmul", {inner, b_.call("permute_dims", {w2}, {{"axes", kTranspose}})}),
                                bias("out_b", kHidden)});
    Node* out = layer_norm(b_.call("add", {mlp, attended}), "ln2");
    // An elementwise tail with two identities: sites for `mul_one` and `add_zero`.
    out = b_.call("multiply", {out, b_.scalar(1.0)});
    return b_.call("add", {out, b_.scalar(0.0)});
  }

 private:
  Node* weight(const std::string& name, int64_t rows, int64_t cols) {
    return b_.param(prefix_ + name, f32({rows, cols}));
  }
  Node* bias(const std::string& name, int64_t size) { return b_.param(prefix_ + name, f32({size})); }

  // `matmul(x, permute_dims(w, axes=[1, 0])) + b`, as torch's Linear is converted.
  Node* linear(Node* x, const std::string& name, int64_t in, int64_t out) {
    Node* w = b_.call("permute_dims", {weight(name + "_w", out, in)}, {{"axes", kTranspose}});
    return b_.call("add", {b_.call("matmul", {x, w}), bias(name + "_b", out)});
  }

  // (1, tokens, hidden) -> (1, heads, tokens, head_dim)
  Node* to_heads(Node* x) {
    Node* split = b_.call("reshape", {x, b_.shape({1, kTokens, kHeads, kHeadDim})});
    return b_.call("permute_dims", {split}, {{"axes", kToHeads}});
  }

  Node* layer_norm(Node* x, const std::string& name) {
    return b_.call("nn.layer_norm", {x, bias(name + "_w", kHidden), bias(name + "_b", kHidden)},
                   {{"axes", std::vector<int64_t>{-1}}, {"epsilon", 1e-12}});
  }

  Builder& b_;
  Node* mask_;
  std::string prefix_;
};

size_t count_bindings(const Function& function) {
  return static_cast<size_t>(std::count_if(function.nodes().begin(), function.nodes().end(),
                                           [](const Node* node) { return node->is_call(); }));
}

size_t closest_count(size_t target, size_t per_unit) { return std::max<size_t>(1, (target + per_unit / 2) / per_unit); }

}  // namespace

std::unique_ptr<Module> new_main_module() {
  auto module = std::make_unique<Module>();
  module->add_function("main");
  return module;
}

Function& main_function(Module& module) { return *module.find("main"); }

void build_add_chain(Function& function, size_t adds) {
  Builder b(function);
  Node* value = b.param("x", f32({16, 16}));
  for (size_t i = 0; i < adds; ++i) value = b.call("add", {value, value});
  b.output(value);
}

void build_transformer(Function& function, size_t layers) {
  Builder b(function);
  Node* hidden = b.param("hidden_states", f32({1, kTokens, kHidden}));
  Node* mask = b.param("attention_mask", f32({1, 1, kTokens, kTokens}));
  LayerWriter writer(b, mask);
  for (size_t layer = 0; layer < layers; ++layer) hidden = writer.write(hidden, layer);
  b.output(hidden);
}

LayerSize transformer_layer_size() {
  static const LayerSize size = [] {
    // Two layers minus one: what one more layer adds, without the function's own inputs.
    Function one("one");
    build_transformer(one, 1);
    Function two("two");
    build_transformer(two, 2);
    LayerSize result;
    result.nodes = two.nodes().size() - one.nodes().size();
    result.bindings = count_bindings(two) - count_bindings(one);
    result.rewrites = 3;  // mul_one, add_zero, double_transpose (see LayerWriter::write)
    return result;
  }();
  return size;
}

size_t transformer_layers_for_nodes(size_t nodes) { return closest_count(nodes, transformer_layer_size().nodes); }

size_t transformer_layers_for_bindings(size_t bindings) {
  return closest_count(bindings, transformer_layer_size().bindings);
}

void build_distribute_cascade(Function& function, size_t trees, size_t depth) {
  Builder b(function);
  const TypeRef type = f32({16, 16});
  Node* total = nullptr;
  for (size_t tree = 0; tree < trees; ++tree) {
    const std::string prefix = "t" + std::to_string(tree) + "_x";
    Node* sum = b.param(prefix + "0", type);
    for (size_t i = 1; i <= depth; ++i) sum = b.call("add", {sum, b.param(prefix + std::to_string(i), type)});
    Node* product = b.call("multiply", {sum, b.scalar(3.0)});
    total = total == nullptr ? product : b.call("add", {total, product});
  }
  b.output(total);
}

size_t cascade_tree_nodes(size_t depth) {
  // depth + 1 parameters, depth adds, the constant, the multiply, the add that sums the tree into the total.
  return 2 * depth + 4;
}

void build_qkv_groups(Function& function, size_t groups) {
  Builder b(function);
  const TypeRef weight_type = f32({16, 16});
  Node* x = b.param("x", f32({4, 16}));
  for (size_t group = 0; group < groups; ++group) {
    const std::string prefix = "g" + std::to_string(group) + "_w";
    Node* q = b.call("matmul", {x, b.param(prefix + "q", weight_type)});
    Node* k = b.call("matmul", {x, b.param(prefix + "k", weight_type)});
    Node* v = b.call("matmul", {x, b.param(prefix + "v", weight_type)});
    x = b.call("add", {b.call("add", {q, k}), v});
  }
  b.output(x);
}

size_t qkv_group_nodes() { return 8; }

void build_conv_blocks(Function& function, size_t blocks, ParamsPerBlock params) {
  Builder b(function);
  Node* x = b.param("x", f32({1, 8, 4, 4}));
  std::vector<Node*> shared;  // weight, gamma, beta, mean, var
  auto block_params = [&](size_t block) {
    if (!shared.empty()) return shared;
    const std::string prefix = params == ParamsPerBlock::shared ? std::string() : "b" + std::to_string(block) + "_";
    std::vector<Node*> made{b.param(prefix + "w", f32({8, 8, 1, 1}))};
    for (const char* name : {"gamma", "beta", "mean", "var"}) made.push_back(b.param(prefix + name, f32({8})));
    if (params == ParamsPerBlock::shared) shared = made;
    return made;
  };
  for (size_t block = 0; block < blocks; ++block) {
    const std::vector<Node*> p = block_params(block);
    Node* conv = b.call("nn.conv2d", {x, p[0]});
    Node* norm = b.call("nn.batch_norm", {conv, p[1], p[2], p[3], p[4]});
    x = b.call("nn.relu", {b.item(norm, 0)});
  }
  b.output(x);
}

}  // namespace dpl::bench
