// Synthetic graph generators for the benchmarks: the add chain, transformer-like encoders, distribute cascades,
// QKV groups.
#pragma once

#include <cstddef>
#include <memory>

#include "dpl/ir/graph.h"

namespace dpl::bench {

// A module holding one function `main`, the shape every generator below fills in.
std::unique_ptr<Module> new_main_module();
Function& main_function(Module& module);

// The chain of issue 5: `x` and `adds` bindings `v_i = add(v_{i-1}, v_{i-1})` (v_0 = x); the output is the last.
// `add(x, x) => multiply(x, const(2.0))` fires once per add.
void build_add_chain(Function& function, size_t adds);

// A BERT-like encoder written out binding by binding as the real models are: per layer, three parallel
// matmuls sharing the layer input (q, k, v; weight transposes, bias adds, reshape + permute to heads), the
// attention core (permute k, matmul, multiply by const(0.125), add the shared mask, softmax, matmul, permute back,
// reshape), the output projection, residual add + layer_norm, the MLP (matmul, add, gelu, matmul, add, residual,
// layer_norm), and a short elementwise tail. Three places per layer are left for simplification rules to find:
// `multiply(h, const(1.0))`, `add(h, const(0.0))` and a doubly transposed weight.
void build_transformer(Function& function, size_t layers);

// How big one transformer layer is (measured by building one), to size graphs by node or binding count.
struct LayerSize {
  size_t nodes = 0;     // every node: parameters, constants, shape literals, calls
  size_t bindings = 0;  // the calls, which the text prints as `lv: T = R.op(...)` lines
  size_t rewrites = 0;  // sites of the transformer simplification rules (bench/rules/transformer.dpl)
};
LayerSize transformer_layer_size();
// The layer count whose graph is closest to `nodes` nodes (at least one layer).
size_t transformer_layers_for_nodes(size_t nodes);
size_t transformer_layers_for_bindings(size_t bindings);

// Graphs whose rewrites cascade, for `multiply(add(a, b), c: const) => add(multiply(a, c), multiply(b, c))`:
// `trees` left-deep sums `add(...add(add(x0, x1), x2)..., x_depth)` of distinct parameters, each multiplied by
// a constant; the products are summed into the output. Distributing the multiply over the top add creates
// `multiply(<the add below>, c)`, which matches again: each tree takes `depth` rewrites, one after the other.
void build_distribute_cascade(Function& function, size_t trees, size_t depth);
// Nodes of one tree of the cascade (parameters, adds, constant, multiply, the add that sums it in).
size_t cascade_tree_nodes(size_t depth);

// The QKV groups of issue 5 (where TVM's rewrite_bindings is quadratic in the number of groups): `groups` groups
// in a row, each three parallel matmuls `matmul(x, wq)`, `matmul(x, wk)`, `matmul(x, wv)` of the group input x
// with their own rank-2 weights, summed `add(add(q, k), v)` into the next group's input; the output is the last
// sum. Each group is one site for a multi-root rule combining the three matmuls (examples/seed002/combine_qkv.dpl).
void build_qkv_groups(Function& function, size_t groups);
// Nodes of one group (three weights, three matmuls, two adds).
size_t qkv_group_nodes();

// `blocks` conv2d + batch_norm + relu blocks in a row, each one site for `bench/rules/partition.dpl`, which makes
// a composite function of every block. Each block has its own parameters as in ResNet, or, with
// `ParamsPerBlock::shared`, all read one weight and one batch-norm parameter set: values with a user per block.
enum class ParamsPerBlock { own, shared };
void build_conv_blocks(Function& function, size_t blocks, ParamsPerBlock params = ParamsPerBlock::own);

}  // namespace dpl::bench
