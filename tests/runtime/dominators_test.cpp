// Tests of the dominator-pattern walk: one parent reached through path nodes only, used only inside the region.
#include "dpl/ir/dominators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dpl/ir/builder.h"
#include "tensor_types.h"

namespace dpl {
namespace {

using test::f32;

// conv2d(x, a new weight parameter), padded so that the output keeps x's height and width.
Node* conv(Builder& b, Node* x, const std::string& weight) {
  return b.call("nn.conv2d", {x, b.param(weight, f32({3, 3, 3, 3}))}, {{"padding", std::vector<int64_t>{1, 1}}});
}

// The seed's diamond: conv2d feeds relu and leaky_relu, whose results are added.
struct Diamond {
  Function f{"main"};
  Node* conv2d = nullptr;
  Node* relu = nullptr;
  Node* leaky = nullptr;
  Node* sum = nullptr;

  Diamond() {
    Builder b(f);
    conv2d = conv(b, b.param("x", f32({1, 3, 8, 8})), "w");
    relu = b.call("nn.relu", {conv2d});
    leaky = b.call("nn.leaky_relu", {conv2d});
    sum = b.call("add", {relu, leaky});
  }
};

Node* parent_of(const Function& f, const Node* child, const std::vector<OpId>& path) {
  return find_dominated_parent(
      f, child, [](const Node* node) { return node->is_call_of(op::nn_conv2d); },
      [&](const Node* node) { return is_call_of_any(node, path); });
}

// The diamond with `node` also read by an exp that is an output: the add no longer post-dominates it.
Node* parent_with_extra_user(Node* Diamond::*node) {
  Diamond d;
  Builder b(d.f);
  d.f.set_output(b.tuple({d.sum, b.call("exp", {d.*node})}));
  return parent_of(d.f, d.sum, {op::nn_relu, op::nn_leaky_relu});
}

TEST(Dominators, FindsTheParentOfADiamond) {
  Diamond d;
  d.f.set_output(d.sum);
  EXPECT_EQ(parent_of(d.f, d.sum, {op::nn_relu, op::nn_leaky_relu}), d.conv2d);
}

TEST(Dominators, ParentDirectlyBelowTheChild) {
  Function f("main");
  Builder b(f);
  Node* c = conv(b, b.param("x", f32({1, 3, 8, 8})), "w");
  Node* sum = b.call("add", {c, c});
  b.output(sum);
  EXPECT_EQ(parent_of(f, sum, {}), c);
}

TEST(Dominators, PathNodeOutsideThePathOps) {
  Diamond d;
  d.f.set_output(d.sum);
  EXPECT_EQ(parent_of(d.f, d.sum, {op::nn_relu}), nullptr);
}

TEST(Dominators, PathNodeOrParentUsedOutsideTheRegion) {
  EXPECT_EQ(parent_with_extra_user(&Diamond::relu), nullptr);
  EXPECT_EQ(parent_with_extra_user(&Diamond::conv2d), nullptr);
  EXPECT_NE(parent_with_extra_user(&Diamond::sum), nullptr);  // the child itself may have other users
}

TEST(Dominators, PathNodeIsTheOutput) {
  Diamond d;
  d.f.set_output(d.relu);
  EXPECT_EQ(parent_of(d.f, d.sum, {op::nn_relu, op::nn_leaky_relu}), nullptr);
}

TEST(Dominators, TwoParentsOrAWalkEndingAtAParameter) {
  Function f("main");
  Builder b(f);
  Node* x = b.param("x", f32({1, 3, 8, 8}));
  Node* left = b.call("nn.relu", {conv(b, x, "w")});
  Node* two_parents = b.call("add", {left, b.call("nn.relu", {conv(b, x, "v")})});
  Node* at_param = b.call("add", {b.call("nn.relu", {conv(b, x, "u")}), b.call("nn.relu", {x})});
  b.output(b.tuple({two_parents, at_param}));
  EXPECT_EQ(parent_of(f, two_parents, {op::nn_relu}), nullptr);
  EXPECT_EQ(parent_of(f, at_param, {op::nn_relu}), nullptr);
}

}  // namespace
}  // namespace dpl
