// Tests of graph construction and mutation: use lists, replace_all_uses, erase_unused, compact, modules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "dpl/ir/analysis.h"
#include "dpl/ir/builder.h"
#include "dpl/ir/op_registry.h"
#include "dpl/text/tvmscript.h"
#include "tensor_types.h"

namespace dpl {
namespace {

using test::f32;

size_t count_of(std::span<Node* const> list, const Node* node) {
  return static_cast<size_t>(std::count(list.begin(), list.end(), node));
}

std::vector<std::string> names(const Function& f) {
  std::vector<std::string> out;
  for (const Node* node : f.nodes()) out.push_back(node->name());
  return out;
}

class Graph : public ::testing::Test {
 protected:
  Node* named(Node* node, const std::string& name) {
    node->set_name(name);
    return node;
  }
  // x -> a = exp(x) -> c = tanh(a) -> d = negative(c), d the output, compacted.
  struct Chain {
    Node *x, *a, *c, *d;
  };
  Chain compacted_chain() {
    Chain chain;
    chain.x = named(b.param("x", f32({4})), "x");
    chain.a = named(b.call("exp", {chain.x}), "a");
    chain.c = named(b.call("tanh", {chain.a}), "c");
    chain.d = named(b.call("negative", {chain.c}), "d");
    b.output(chain.d);
    f.compact();
    return chain;
  }
  Function f{"main"};
  Builder b{f};
};

TEST_F(Graph, UseListsHaveOneEntryPerUse) {
  Node* x = b.param("x", f32({4}));
  Node* y = b.param("y", f32({4}));
  Node* twice = b.call("add", {x, x});
  Node* mixed = b.call("multiply", {twice, y});
  b.output(mixed);
  EXPECT_EQ(x->num_users(), 2u);
  EXPECT_EQ(count_of(x->users(), twice), 2u);
  EXPECT_EQ(y->num_users(), 1u);
  EXPECT_EQ(twice->users()[0], mixed);
  EXPECT_EQ(mixed->num_users(), 0u);
  EXPECT_EQ(f.nodes().size(), 4u);
  EXPECT_EQ(f.params().size(), 2u);
  EXPECT_LT(x->id(), twice->id());
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, AddCallChecksArityAttributesAndFillsDefaults) {
  Node* x = b.param("x", f32({2, 3}));
  std::string error;
  Node* ops[] = {x, x, x};
  EXPECT_EQ(f.add_call(op::add, std::span(ops, 3), {}, error), nullptr);
  EXPECT_EQ(error, "add: expected 2 operands, got 3");
  EXPECT_EQ(f.add_call(op::nn_softmax, std::span(ops, 1), {AttrValue(1.5)}, error), nullptr);
  EXPECT_EQ(error, "nn.softmax: attribute axis must be int, got 1.5");
  EXPECT_EQ(f.add_call(op::nn_softmax, std::span(ops, 1), {int64_t{1}, int64_t{2}}, error), nullptr);
  EXPECT_EQ(error, "nn.softmax: expected 1 attributes, got 2");
  EXPECT_EQ(f.nodes().size(), 1u);  // failed calls add nothing
  EXPECT_EQ(x->num_users(), 0u);

  Node* softmax = f.add_call(op::nn_softmax, std::span(ops, 1), {}, error);
  ASSERT_NE(softmax, nullptr);
  ASSERT_EQ(softmax->attrs().size(), 1u);
  EXPECT_EQ(std::get<int64_t>(softmax->attr(0)), -1);
  Node* g = b.param("g", f32({3}));
  Node* norm_ops[] = {x, g, g};
  Node* norm = f.add_call(op::nn_layer_norm, norm_ops, {std::vector<int64_t>{-1}, int64_t{1}, true, true}, error);
  ASSERT_NE(norm, nullptr) << error;
  EXPECT_EQ(std::get<double>(norm->attr(1)), 1.0);  // int given for a float attribute is stored as a double
}

TEST_F(Graph, CallsWithDefaultsBuildWhatCheckedCallsBuild) {
  // add_call_with_defaults (dplc's right-hand sides) skips add_call's checks, not its work: the same default
  // attribute list, type and use lists; type inference still declines.
  Node* x = b.param("x", f32({2, 3}));
  Node* w = b.param("w", f32({3, 5}));
  std::string error;
  Node* unary[] = {x};
  Node* checked = f.add_call(op::nn_softmax, unary, {}, error);
  Node* proven = f.add_call_with_defaults(op::nn_softmax, unary, error);
  ASSERT_NE(checked, nullptr);
  ASSERT_NE(proven, nullptr) << error;
  EXPECT_EQ(&proven->attrs(), &checked->attrs());  // the op's interned defaults
  ASSERT_EQ(proven->attrs().size(), 1u);
  EXPECT_EQ(std::get<int64_t>(proven->attr(0)), -1);
  EXPECT_EQ(proven->type(), checked->type());
  EXPECT_TRUE(proven->is_call_of(op::nn_softmax));
  EXPECT_EQ(count_of(x->users(), proven), 1u);
  Node* product_operands[] = {x, w};
  Node* product = f.add_call_with_defaults(op::matmul, product_operands, error);
  ASSERT_NE(product, nullptr) << error;
  EXPECT_EQ(product->type(), f32({2, 5}));
  EXPECT_EQ(&product->attrs(), &f.add_call(op::matmul, product_operands, {}, error)->attrs());
  Node* sum_operands[] = {x, x};
  Node* sum = f.add_call_with_defaults(op::add, sum_operands, error);
  ASSERT_NE(sum, nullptr) << error;
  EXPECT_TRUE(sum->attrs().empty());  // an op without attributes
  EXPECT_EQ(count_of(x->users(), sum), 2u);

  Node* mismatched[] = {x, x};
  const size_t before = f.nodes().size();
  EXPECT_EQ(f.add_call_with_defaults(op::matmul, mismatched, error), nullptr);
  EXPECT_NE(error.find("matmul"), std::string::npos) << error;
  EXPECT_EQ(f.nodes().size(), before);  // a declined call adds nothing
  b.output(b.call("add", {proven, product->operand(0)}));
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CountsTheLiveCallsOfEachOp) {
  // What lets the driver skip a pass whose rules need ops a function does not hold: every way a call comes to be
  // counts (a new call, a copy from another function, a rebuild in place), and every way it goes (a rebuild into
  // another op, erase_unused(), compact() of what the output no longer reaches) takes it off again.
  Node* x = b.param("x", f32({4}));
  EXPECT_FALSE(f.holds_call_of(op::exp));
  Node* e = b.call("exp", {x});
  Node* e2 = b.call("exp", {e});
  EXPECT_EQ(f.num_calls_of(op::exp), 2u);
  EXPECT_FALSE(f.holds_call_of(op::tanh));
  std::string error;
  const std::span<Node* const> just_x(&x, 1);
  const AttrList* attrs = f.default_attrs(op::tanh);
  f.rebuild_call(e, op::tanh, just_x, attrs, f.infer_call(op::tanh, just_x, attrs, error));
  EXPECT_TRUE(e->is_call_of(op::tanh));
  EXPECT_EQ(f.num_calls_of(op::tanh), 1u);
  EXPECT_EQ(f.num_calls_of(op::exp), 1u) << "the rebuilt call is no exp any more";
  Node* n = b.call("negative", {e2});
  Node* unused = b.call("sigmoid", {x});
  b.output(n);
  EXPECT_EQ(verify(f), "");
  EXPECT_EQ(f.erase_unused(unused), 1u);
  EXPECT_FALSE(f.holds_call_of(op::sigmoid));
  // The output moves to the tanh: the negative and the second exp are left unreachable, and compact() removes them.
  f.set_output(e);
  f.compact();
  EXPECT_FALSE(f.holds_call_of(op::negative));
  EXPECT_FALSE(f.holds_call_of(op::exp));
  EXPECT_EQ(f.num_calls_of(op::tanh), 1u);
  EXPECT_EQ(verify(f), "") << "verify() recounts the calls";

  Function g("g");
  Node* gx = g.add_param("x", x->type());
  Node* copied = g.add_call_like(f, *e, std::span<Node* const>(&gx, 1), error);
  ASSERT_NE(copied, nullptr) << error;
  EXPECT_TRUE(g.holds_call_of(op::tanh));
  EXPECT_FALSE(g.holds_call_of(op::negative));
  EXPECT_FALSE(g.holds_call_of(static_cast<OpId>(OpRegistry::global().size() + 100))) << "past the table";
}

TEST_F(Graph, CallsCopiedIntoAnotherFunctionKeepOpAttributesAndType) {
  // add_call_like (a partition's copy of its match) takes the original's type where inference could only give it
  // again, and infers otherwise: another operand type, a shape literal that inference reads, a failing call.
  Node* x = b.param("x", f32({1, 3, 8, 8}));
  Node* w = b.param("w", f32({4, 3, 3, 3}));
  Node* conv = b.call("nn.conv2d", {x, w}, {{"padding", std::vector<int64_t>{1, 1}}});
  Node* flat = b.call("reshape", {conv, b.shape({1, 256})});
  Node* sum = b.call("add", {flat, flat});
  b.output(sum);

  Function g("g");
  Node* gx = g.add_param("x", x->type());
  Node* gw = g.add_param("w", w->type());
  std::string error;
  Node* conv_operands[] = {gx, gw};
  Node* conv_copy = g.add_call_like(f, *conv, conv_operands, error);
  ASSERT_NE(conv_copy, nullptr) << error;
  EXPECT_TRUE(conv_copy->is_call_of(op::nn_conv2d));
  EXPECT_EQ(conv_copy->type(), conv->type());
  EXPECT_EQ(&conv_copy->attrs(), &conv->attrs());  // f's list itself: g holds on to f's lists
  EXPECT_EQ(count_of(gx->users(), conv_copy), 1u);

  Node* wide = g.add_param("wide", f32({1, 3, 16, 16}));
  Node* wide_operands[] = {wide, gw};
  Node* wide_copy = g.add_call_like(f, *conv, wide_operands, error);
  ASSERT_NE(wide_copy, nullptr) << error;
  EXPECT_EQ(wide_copy->type(), f32({1, 4, 16, 16}));  // inferred for the operand it reads

  Node* flat_operands[] = {conv_copy, g.add_shape({Dim::fixed(1), Dim::fixed(256)})};
  Node* flat_copy = g.add_call_like(f, *flat, flat_operands, error);
  ASSERT_NE(flat_copy, nullptr) << error;
  EXPECT_EQ(flat_copy->type(), flat->type());

  Node* odd = g.add_param("odd", f32({1, 255}));
  Node* mismatched[] = {flat_copy, odd};
  const size_t before = g.nodes().size();
  EXPECT_EQ(g.add_call_like(f, *sum, mismatched, error), nullptr);
  EXPECT_NE(error.find("add"), std::string::npos) << error;
  EXPECT_EQ(g.nodes().size(), before);  // a declined copy adds nothing
  Node* missing[] = {flat_copy, nullptr};
  error.clear();
  EXPECT_EQ(g.add_call_like(f, *sum, missing, error), nullptr);
  EXPECT_FALSE(error.empty());

  Node* sum_operands[] = {flat_copy, flat_copy};
  Node* sum_copy = g.add_call_like(f, *sum, sum_operands, error);
  ASSERT_NE(sum_copy, nullptr) << error;
  EXPECT_EQ(sum_copy->type(), sum->type());
  EXPECT_TRUE(sum_copy->attrs().empty());
  g.set_output(sum_copy);
  g.compact();
  EXPECT_EQ(verify(g), "");
}

TEST_F(Graph, CopiedCallsShareTheFirstSourcesAttributeListsAndOutliveIt) {
  auto conv_in = [](Function& function, std::vector<int64_t> padding) {
    Node* x = function.add_param("x", f32({1, 3, 8, 8}));
    Node* w = function.add_param("w", f32({4, 3, 3, 3}));
    std::string error;
    Node* operands[] = {x, w};
    const OpInfo& info = OpRegistry::global().get(op::nn_conv2d);
    AttrList attrs = info.default_attrs();
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      if (info.attrs[i].name == "padding") attrs[i] = std::move(padding);
    }
    Node* conv = function.add_call(op::nn_conv2d, operands, std::move(attrs), error);
    EXPECT_NE(conv, nullptr) << error;
    function.set_output(conv);
    return conv;
  };
  auto copy_into = [](Function& target, const Function& source, const Node* call) {
    std::string error;
    Node* operands[] = {target.add_param("x", call->operand(0)->type()),
                        target.add_param("w", call->operand(1)->type())};
    Node* copy = target.add_call_like(source, *call, operands, error);
    EXPECT_NE(copy, nullptr) << error;
    return copy;
  };
  auto source = std::make_unique<Function>("source");
  const Node* original = conv_in(*source, {1, 1, 1, 1});
  const AttrList expected = original->attrs();
  Function composite("composite");
  Node* shared = copy_into(composite, *source, original);
  EXPECT_EQ(&shared->attrs(), &original->attrs());

  // A second source: the composite holds on to the first one's lists only, so it copies this one's list.
  Function other("other");
  const Node* other_original = conv_in(other, {2, 2, 2, 2});
  const Node* copied = copy_into(composite, other, other_original);
  EXPECT_NE(&copied->attrs(), &other_original->attrs());
  EXPECT_EQ(copied->attrs(), other_original->attrs());

  // The source holds on to nothing of the composite's, which holds on to the source: no cycle, a copy.
  const Node* back = copy_into(*source, composite, shared);
  EXPECT_EQ(&back->attrs(), &original->attrs());  // the source's own list, found again (the same source function)
  const Node* copied_back = copy_into(*source, composite, copied);
  EXPECT_NE(&copied_back->attrs(), &copied->attrs());
  EXPECT_EQ(copied_back->attrs(), other_original->attrs());

  source.reset();  // the composite's call still reads the list it shares (ASan checks it in scripts/sanitize.sh)
  EXPECT_EQ(shared->attrs(), expected);
  composite.set_output(shared);
  composite.compact();
  EXPECT_EQ(verify(composite), "");
}

TEST_F(Graph, TupleItemsAndShapes) {
  Node* x = b.param("x", f32({2}));
  Node* y = b.param("y", f32({3}));
  Node* pair = b.tuple({x, y});
  EXPECT_EQ(pair->type()->str(), "R.Tuple(R.Tensor((2,), dtype=\"float32\"), R.Tensor((3,), dtype=\"float32\"))");
  std::string error;
  Node* second = f.add_tuple_item(pair, 1, error);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->type(), y->type());
  EXPECT_EQ(second->index(), 1);
  EXPECT_EQ(f.add_tuple_item(pair, 2, error), nullptr);
  EXPECT_EQ(error, "tuple index 2 is out of range for " + pair->type()->str());
  EXPECT_EQ(f.add_tuple_item(x, 0, error), nullptr);
  EXPECT_EQ(error, "cannot take item 0 of a non-tuple value of type R.Tensor((2,), dtype=\"float32\")");
  Node* shape = f.add_shape({Dim::fixed(1), Dim::symbol("n")});
  EXPECT_EQ(shape->type()->str(), "R.Shape(ndim=2)");
  EXPECT_EQ(shape->shape_value()[1], Dim::symbol("n"));
  Literal literal{DType::Float16, {2}, {1.0, 2.0}};
  Node* constant = f.add_constant(literal);
  EXPECT_EQ(constant->type()->str(), "R.Tensor((2,), dtype=\"float16\")");
  EXPECT_FALSE(constant->literal().is_scalar());
  Node* call = f.add_func_call("fused", std::span(&x, 1), f32({2}));
  EXPECT_EQ(call->callee(), "fused");
  EXPECT_EQ(x->num_users(), 2u);
}

TEST_F(Graph, ReplaceAllUsesRedirectsEveryUseAndTheOutput) {
  Node* x = b.param("x", f32({4}));
  Node* doubled = b.call("add", {x, x});
  Node* user1 = b.call("multiply", {doubled, doubled});
  Node* user2 = b.call("exp", {doubled});
  Node* out = b.call("add", {user1, user2});
  b.output(doubled);
  Node* two = b.scalar(2.0);
  Node* replacement = b.call("multiply", {x, two});
  f.replace_all_uses(doubled, replacement);
  EXPECT_EQ(doubled->num_users(), 0u);
  EXPECT_EQ(replacement->num_users(), 3u);
  EXPECT_EQ(count_of(replacement->users(), user1), 2u);
  EXPECT_EQ(count_of(replacement->users(), user2), 1u);
  EXPECT_EQ(user1->operand(0), replacement);
  EXPECT_EQ(user1->operand(1), replacement);
  EXPECT_EQ(f.output(), replacement);
  b.output(out);
  f.compact();
  EXPECT_EQ(verify(f), "");
  EXPECT_TRUE(doubled->is_dead());
  EXPECT_EQ(x->num_users(), 1u);  // the dead add(x, x) left x's use list
}

TEST_F(Graph, ReplaceKeepsTheReplacementsOwnUse) {
  Node* x = b.param("x", f32({4}));
  Node* e = b.call("exp", {x});
  b.output(e);
  Node* relu = b.call("nn.relu", {x});
  f.replace_all_uses(x, relu);  // insert relu after x
  EXPECT_EQ(relu->operand(0), x);
  EXPECT_EQ(e->operand(0), relu);
  EXPECT_EQ(x->num_users(), 1u);
  EXPECT_EQ(x->users()[0], relu);
  f.compact();
  EXPECT_EQ(verify(f), "");
  EXPECT_EQ(f.nodes(), (std::vector<Node*>{x, relu, e}));
}

TEST_F(Graph, CompactRemovesDeadChainsAndKeepsOrder) {
  Node* x = named(b.param("x", f32({4})), "x");
  Node* a = named(b.call("exp", {x}), "a");
  Node* dead1 = named(b.call("log", {a}), "dead1");
  named(b.call("sqrt", {dead1}), "dead2");
  Node* c = named(b.call("tanh", {a}), "c");
  Node* d = named(b.call("add", {a, c}), "d");
  b.output(d);
  Node* unused_param = named(b.param("unused", f32({1})), "unused");
  EXPECT_EQ(a->num_users(), 3u);
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "unused", "a", "c", "d"}));
  EXPECT_TRUE(dead1->is_dead());
  EXPECT_FALSE(unused_param->is_dead());
  EXPECT_EQ(a->num_users(), 2u);
  EXPECT_EQ(f.num_live_nodes(), 5u);
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CompactPullsNewNodesBeforeTheirUsers) {
  Node* x = named(b.param("x", f32({4})), "x");
  Node* a = named(b.call("exp", {x}), "a");
  Node* c = named(b.call("tanh", {a}), "c");
  Node* d = named(b.call("negative", {c}), "d");
  b.output(d);
  // A rewrite: c := sigmoid(log(x)); the new nodes sit at the end until compact().
  Node* n1 = named(b.call("log", {x}), "n1");
  Node* n2 = named(b.call("sigmoid", {n1}), "n2");
  f.replace_all_uses(c, n2);
  EXPECT_FALSE(f.order_is_topological());
  EXPECT_EQ(verify(f), "");  // out of order until compact(), but acyclic and consistent
  f.compact();
  EXPECT_TRUE(f.order_is_topological());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "n1", "n2", "d"}));
  EXPECT_TRUE(a->is_dead());
  EXPECT_TRUE(c->is_dead());
  EXPECT_EQ(x->num_users(), 1u);
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CompactAfterEagerErasePullsLateOperandsForward) {
  // What a pass leaves: the replaced node erased at once, so compact() takes its one-walk path.
  auto [x, a, c, d] = compacted_chain();
  Node* n1 = named(b.call("log", {x}), "n1");
  Node* n2 = named(b.call("sigmoid", {n1}), "n2");
  f.replace_all_uses(c, n2);
  EXPECT_EQ(f.erase_unused(c), 2u);  // c, then a
  EXPECT_FALSE(f.order_is_topological());
  f.compact();
  EXPECT_TRUE(f.order_is_topological());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "n1", "n2", "d"}));
  EXPECT_EQ(f.num_live_nodes(), 4u);
  EXPECT_EQ(verify(f), "");

  // Two new nodes, the user created before its new operand: the operand must move before it.
  Node* m = named(b.call("exp", {x}), "m");
  f.replace_all_uses(n1, m);
  EXPECT_EQ(f.erase_unused(n1), 1u);
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "m", "n2", "d"}));
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CompactReordersWhenAnOlderNodeListedLaterReplacesAnOperand) {
  Node* x = named(b.param("x", f32({4})), "x");
  Node* a = named(b.call("exp", {x}), "a");
  Node* c = named(b.call("tanh", {a}), "c");
  Node* late = named(b.call("log", {x}), "late");
  Node* d = named(b.call("add", {c, late}), "d");
  b.output(d);
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "a", "c", "late", "d"}));
  f.replace_all_uses(a, late);  // c now uses a node listed after it; neither is new
  EXPECT_FALSE(f.order_is_topological());
  EXPECT_EQ(f.erase_unused(a), 1u);
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "late", "c", "d"}));
  EXPECT_EQ(late->num_users(), 2u);
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CompactKeepsTheOrderWhenAReplacementIsListedEarlier) {
  Node* x = named(b.param("x", f32({4})), "x");
  Node* a = named(b.call("exp", {x}), "a");
  Node* c = named(b.call("tanh", {a}), "c");
  b.output(c);
  f.compact();
  Node* n = named(b.call("log", {x}), "n");
  Node* user = named(b.call("negative", {n}), "user");
  Node* n2 = named(b.call("sqrt", {x}), "n2");
  Node* user2 = named(b.call("abs", {n}), "user2");
  f.replace_all_uses(n, n2);  // user comes before n2 (late), user2 after it (in order)
  EXPECT_FALSE(f.order_is_topological());
  f.replace_all_uses(c, f.add_tuple(std::vector<Node*>{user, user2}));
  f.erase_unused(c);
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "n2", "user", "user2", ""}));
  EXPECT_TRUE(n->is_dead());
  EXPECT_EQ(verify(f), "");
}

// A rewrite's new constant goes first at compaction (after the parameters): the users given it, earlier in the
// order, are not pulled apart one by one, and it does not land just before the first of them.
TEST_F(Graph, ConstantsAppendedSinceTheLastCompactionLeadTheOrder) {
  auto [x, a, c, d] = compacted_chain();
  std::string error;
  // c = tanh(a) rebuilt in place as multiply(a, two): c now reads a node listed after it.
  Node* two = named(b.scalar(2.0), "two");
  const std::vector<Node*> operands{a, two};
  const AttrList* attrs = f.default_attrs(op::multiply);
  TypeRef type = f.infer_call(op::multiply, operands, attrs, error);
  ASSERT_NE(type, nullptr) << error;
  f.rebuild_call(c, op::multiply, operands, attrs, type);
  EXPECT_FALSE(f.order_is_topological());
  EXPECT_EQ(verify(f), "");
  f.compact();
  EXPECT_TRUE(f.order_is_topological());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "two", "a", "c", "d"}));
  EXPECT_EQ(verify(f), "");

  // A replacement by a new constant: it goes before `two`, which the last compaction placed.
  Node* half = named(f.add_constant(Literal{DType::Float32, {4}, {0.5, 0.5, 0.5, 0.5}}), "half");
  f.replace_all_uses(a, half);
  EXPECT_FALSE(f.order_is_topological());
  EXPECT_EQ(f.erase_unused(a), 1u);
  f.compact();
  EXPECT_TRUE(f.order_is_topological());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "half", "two", "c", "d"}));
  EXPECT_EQ(c->operand(0), half);
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, EraseUnusedRemovesTransitively) {
  Node* x = b.param("x", f32({4}));
  Node* keep = b.call("exp", {x});
  b.output(keep);
  Node* a = b.call("log", {x});
  Node* c = b.call("add", {a, keep});
  EXPECT_EQ(f.erase_unused(a), 0u);  // still used by c
  EXPECT_EQ(f.erase_unused(c), 2u);  // c, then a; keep stays (the output) and x stays (a parameter)
  EXPECT_TRUE(a->is_dead());
  EXPECT_FALSE(keep->is_dead());
  EXPECT_EQ(keep->num_users(), 0u);
  EXPECT_EQ(x->num_users(), 1u);
  EXPECT_EQ(f.num_live_nodes(), 2u);
  EXPECT_EQ(f.nodes().size(), 4u);
  EXPECT_EQ(verify(f), "");
  std::string error;
  EXPECT_EQ(f.add_call(op::exp, std::span(&a, 1), {}, error), nullptr);
  EXPECT_EQ(error, "exp: an operand was removed from the graph");
  f.compact();
  EXPECT_EQ(f.nodes().size(), 2u);
  EXPECT_EQ(f.num_live_nodes(), 2u);
}

TEST_F(Graph, CompactHandlesDeepGraphsIteratively) {
  // a uses the end of a 200k-long chain that comes after it in the order: compact must walk it without recursion.
  constexpr int kLength = 200000;
  Node* x = b.param("x", f32({4}));
  Node* placeholder = b.call("exp", {x});
  Node* a = b.call("negative", {placeholder});
  b.output(a);
  Node* chain = x;
  for (int i = 0; i < kLength; ++i) chain = b.call("nn.relu", {chain});
  f.replace_all_uses(placeholder, chain);
  f.compact();
  ASSERT_EQ(f.nodes().size(), static_cast<size_t>(kLength) + 2);
  EXPECT_EQ(f.nodes().front(), x);
  EXPECT_EQ(f.nodes().back(), a);
  EXPECT_TRUE(placeholder->is_dead());
  EXPECT_EQ(verify(f), "");
}

// compact() finds nodes left without a user from what changed, not by reading every node: each way a live node
// can end up unused is checked here (the one-walk path would keep such a node).
TEST_F(Graph, CompactRemovesANodeThatReplaceAllUsesLeftUnused) {
  auto [x, a, c, d] = compacted_chain();
  f.replace_all_uses(c, a);  // no erase_unused(c): c stays live without a user; the order stays topological
  EXPECT_TRUE(f.order_is_topological());
  f.compact();
  EXPECT_TRUE(c->is_dead());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "a", "d"}));
  EXPECT_EQ(verify(f), "");

  Node* n = named(b.call("log", {x}), "n");
  f.replace_all_uses(a, n);  // now a (and nothing else) is unused, and d uses a node listed after it
  f.compact();
  EXPECT_TRUE(a->is_dead());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "n", "d"}));
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CompactRemovesNewNodesThatNeverGotAUser) {
  Node* x = named(b.param("x", f32({4})), "x");
  Node* a = named(b.call("exp", {x}), "a");
  b.output(a);
  f.compact();
  Node* orphan = named(b.call("log", {x}), "orphan");
  Node* orphan_user = named(b.call("sqrt", {orphan}), "orphan_user");
  f.compact();
  EXPECT_TRUE(orphan->is_dead());
  EXPECT_TRUE(orphan_user->is_dead());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "a"}));
  EXPECT_EQ(x->num_users(), 1u);
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, CompactDropsTheChainOfAReplacedOutput) {
  auto [x, a, c, d] = compacted_chain();
  f.set_output(c);  // d never had a user
  f.compact();
  EXPECT_TRUE(d->is_dead());
  EXPECT_EQ(c->num_users(), 0u);  // c had a user once: its use list is empty, not absent
  f.set_output(a);
  f.compact();
  EXPECT_TRUE(c->is_dead());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "a"}));

  Node* other = named(b.call("log", {x}), "other");
  f.set_output(other);
  f.compact();
  EXPECT_TRUE(a->is_dead());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "other"}));
  EXPECT_EQ(verify(f), "");
}

TEST_F(Graph, RepeatedCompactionsOfStaleOrdersStayTopological) {
  // Parameters interleaved with calls, and two rounds in which an older node listed later replaces an operand
  // (erased at once, as a pass does): each round reorders, so marks left over from the first would show.
  Node* x = named(b.param("x", f32({4})), "x");
  Node* a = named(b.call("exp", {x}), "a");
  Node* c = named(b.call("tanh", {a}), "c");
  Node* y = named(b.param("y", f32({4})), "y");
  Node* l1 = named(b.call("log", {y}), "l1");
  Node* l2 = named(b.call("abs", {y}), "l2");
  Node* d = named(b.call("add", {c, l1}), "d");
  Node* e = named(b.call("multiply", {d, l2}), "e");
  b.output(e);
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "y", "a", "c", "l1", "l2", "d", "e"}));

  f.replace_all_uses(a, l1);
  EXPECT_EQ(f.erase_unused(a), 1u);
  EXPECT_FALSE(f.order_is_topological());
  f.compact();
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "y", "l1", "c", "l2", "d", "e"}));
  EXPECT_EQ(verify(f), "");

  f.replace_all_uses(l1, l2);
  EXPECT_EQ(f.erase_unused(l1), 1u);
  EXPECT_FALSE(f.order_is_topological());
  f.compact();
  EXPECT_TRUE(f.order_is_topological());
  EXPECT_EQ(names(f), (std::vector<std::string>{"x", "y", "l2", "c", "d", "e"}));
  EXPECT_EQ(f.num_live_nodes(), 6u);
  EXPECT_EQ(verify(f), "");
}

TEST(GraphFromText, CompactRemovesAnUnusedBindingOfAReadGraph) {
  const std::string text =
      "@R.function\n"
      "def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n"
      "    with R.dataflow():\n"
      "        unused = R.exp(x)\n"
      "        y = R.tanh(x)\n"
      "        R.output(y)\n"
      "    return y\n";
  SourceFile source("unused.relax", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = read_module(source, diags);
  ASSERT_NE(module, nullptr) << diags.str();
  Function& main = *module->functions()[0];
  ASSERT_EQ(main.nodes().size(), 3u);
  Node* unused = main.nodes()[1];
  ASSERT_EQ(unused->name(), "unused");
  main.compact();
  EXPECT_TRUE(unused->is_dead());
  EXPECT_EQ(names(main), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(verify(main), "");
}

TEST_F(Graph, FunctionMetadata) {
  Node* x = b.param("x", f32({4}));
  b.output(x);
  EXPECT_EQ(f.return_type(), x->type());
  f.set_return_type(Type::object());
  EXPECT_EQ(f.return_type(), Type::object());
  f.attrs().emplace_back("Composite", std::string("dnnl.conv2d"));
  ASSERT_NE(f.find_attr("Composite"), nullptr);
  EXPECT_EQ(std::get<std::string>(*f.find_attr("Composite")), "dnnl.conv2d");
  EXPECT_EQ(f.find_attr("Primitive"), nullptr);
  EXPECT_TRUE(f.has_dataflow_block());
  f.set_private(true);
  EXPECT_TRUE(f.is_private());
}

TEST_F(Graph, CallsWithEqualAttributesShareOneList) {
  Node* x = b.param("x", f32({2, 3}));
  const AttrValue transpose = std::vector<int64_t>{1, 0};
  Node* t1 = b.call("permute_dims", {x}, {{"axes", transpose}});
  Node* t2 = b.call("permute_dims", {t1}, {{"axes", transpose}});
  Node* other = b.call("permute_dims", {x}, {{"axes", AttrValue(std::vector<int64_t>{0, 1})}});
  EXPECT_EQ(&t1->attrs(), &t2->attrs());
  EXPECT_NE(&t1->attrs(), &other->attrs());
  EXPECT_EQ(std::get<std::vector<int64_t>>(other->attr(0)), (std::vector<int64_t>{0, 1}));
  // Defaults given or left out are one list; -0.0 and 0.0 are equal values but keep their own lists (printing).
  Node* s1 = b.call("nn.softmax", {x});
  Node* s2 = b.call("nn.softmax", {x}, {{"axis", AttrValue(int64_t{-1})}});
  EXPECT_EQ(&s1->attrs(), &s2->attrs());
  Node* c1 = b.call("clip", {x}, {{"min", AttrValue(0.0)}, {"max", AttrValue(6.0)}});
  Node* c2 = b.call("clip", {x}, {{"min", AttrValue(-0.0)}, {"max", AttrValue(6.0)}});
  EXPECT_NE(&c1->attrs(), &c2->attrs());
  EXPECT_TRUE(std::signbit(std::get<double>(c2->attr(0))));
  EXPECT_FALSE(std::signbit(std::get<double>(c1->attr(0))));
  // A node without attributes has an empty list.
  EXPECT_TRUE(x->attrs().empty());
}

// A list passed by reference (dplc's constant lists) is checked as a moved one and interned to the same list; the
// caller's list is left as it was, also when a value must be stored converted (an int given for a float).
TEST_F(Graph, AttributeListsPassedByReferenceAreCheckedAndInternedAsMovedOnes) {
  Node* x = b.param("x", f32({2, 3}));
  Node* g = b.param("g", f32({3}));
  std::string error;
  Node* one[] = {x};
  const AttrList transpose{std::vector<int64_t>{1, 0}};
  Node* moved = f.add_call(op::permute_dims, one, AttrList{std::vector<int64_t>{1, 0}}, error);
  Node* kept = f.add_call(op::permute_dims, one, transpose, error);
  ASSERT_NE(moved, nullptr);
  ASSERT_NE(kept, nullptr) << error;
  EXPECT_EQ(&kept->attrs(), &moved->attrs());
  EXPECT_NE(&kept->attrs(), &transpose);  // the function's own copy: the caller's list may die first
  EXPECT_EQ(kept->type(), moved->type());

  Node* norm_ops[] = {x, g, g};
  const AttrList int_epsilon{std::vector<int64_t>{-1}, int64_t{1}, true, true};
  Node* norm = f.add_call(op::nn_layer_norm, norm_ops, int_epsilon, error);
  ASSERT_NE(norm, nullptr) << error;
  EXPECT_EQ(std::get<double>(norm->attr(1)), 1.0);
  EXPECT_TRUE(std::holds_alternative<int64_t>(int_epsilon[1]));  // converted in a copy
  Node* again = f.add_call(op::nn_layer_norm, norm_ops, AttrList{std::vector<int64_t>{-1}, 1.0, true, true}, error);
  ASSERT_NE(again, nullptr) << error;
  EXPECT_EQ(&again->attrs(), &norm->attrs());

  const AttrList wrong_kind{AttrValue(1.5)};
  EXPECT_EQ(f.add_call(op::nn_softmax, one, wrong_kind, error), nullptr);
  EXPECT_EQ(error, "nn.softmax: attribute axis must be int, got 1.5");
  const AttrList none;
  Node* softmax = f.add_call(op::nn_softmax, one, none, error);  // empty: the defaults
  ASSERT_NE(softmax, nullptr) << error;
  EXPECT_EQ(&softmax->attrs(), f.default_attrs(op::nn_softmax));
}

TEST_F(Graph, RepeatedCallsGetTheirOwnInferredTypes) {
  // add_call remembers inferred types per op, attributes and operand types: equal keys, equal types; a
  // different operand type (or a shape-literal operand, whose value inference reads) is inferred anew.
  Node* x = b.param("x", f32({2, 3}));
  Node* y = b.param("y", f32({3}));
  Node* z = b.param("z", f32({4, 1, 3}));
  EXPECT_EQ(b.call("add", {x, y})->type(), f32({2, 3}));
  EXPECT_EQ(b.call("add", {x, y})->type(), f32({2, 3}));
  EXPECT_EQ(b.call("add", {z, x})->type(), f32({4, 2, 3}));
  EXPECT_EQ(b.call("add", {x, x})->type(), f32({2, 3}));
  EXPECT_EQ(b.call("reshape", {x, b.shape({6})})->type(), f32({6}));
  EXPECT_EQ(b.call("reshape", {x, b.shape({3, 2})})->type(), f32({3, 2}));
  std::string error;
  Node* bad[] = {x, z};
  EXPECT_EQ(f.add_call(op::matmul, bad, {}, error), nullptr);  // a failure is not remembered as a type
  EXPECT_FALSE(error.empty());
  Node* good[] = {x, b.param("w", f32({3, 5}))};
  Node* product = f.add_call(op::matmul, good, {}, error);
  ASSERT_NE(product, nullptr) << error;
  EXPECT_EQ(product->type(), f32({2, 5}));

  // Past the calls after which the function makes its memo, four operands (nn.attention with a bias) are keyed
  // by all four: a bias that does not broadcast to the logits fails, whatever a call before it inferred.
  for (int i = 0; i < 20; ++i) b.call("add", {x, x});
  Node* q = b.param("q", f32({1, 8, 2, 4}));
  Node* bias = b.param("bias", f32({1, 2, 8, 8}));
  Node* wrong_bias = b.param("wrong_bias", f32({1, 2, 8, 5}));
  const AttrList attention_attrs = OpRegistry::global().get(op::nn_attention).default_attrs();
  for (int i = 0; i < 2; ++i) {
    Node* with_bias[] = {q, q, q, bias};
    Node* attention = f.add_call(op::nn_attention, with_bias, attention_attrs, error);
    ASSERT_NE(attention, nullptr) << error;
    EXPECT_EQ(attention->type(), f32({1, 8, 2, 4}));
  }
  Node* with_wrong_bias[] = {q, q, q, wrong_bias};
  EXPECT_EQ(f.add_call(op::nn_attention, with_wrong_bias, attention_attrs, error), nullptr);
  EXPECT_NE(error.find("bias"), std::string::npos) << error;
}

TEST_F(Graph, UseListsGrowShrinkAndRecycleTheirMemory) {
  // Use lists live in memory the function recycles: grow one past several capacities, empty it, and grow
  // others into the freed blocks; every list must stay exact.
  Node* x = b.param("x", f32({4}));
  std::vector<Node*> users;
  for (int i = 0; i < 1000; ++i) users.push_back(b.call(i % 2 == 0 ? "exp" : "log", {x}));
  Node* sum = users[0];
  for (size_t i = 1; i < users.size(); ++i) sum = b.call("add", {sum, users[i]});
  b.output(sum);
  EXPECT_EQ(x->num_users(), 1000u);
  for (size_t i = 0; i < users.size(); ++i) EXPECT_EQ(count_of(x->users(), users[i]), 1u) << i;
  Node* y = b.param("y", f32({4}));
  for (size_t i = 0; i < users.size(); i += 2) {  // the exps now use y
    Node* relu = b.call("nn.relu", {y});
    f.replace_all_uses(users[i], relu);
    EXPECT_EQ(f.erase_unused(users[i]), 1u);
  }
  EXPECT_EQ(x->num_users(), 500u);
  EXPECT_EQ(y->num_users(), 500u);
  for (size_t i = 1; i < users.size(); i += 2) EXPECT_EQ(count_of(x->users(), users[i]), 1u) << i;
  for (int i = 0; i < 300; ++i) b.call("negative", {b.call("exp", {x})});  // new lists take recycled blocks
  EXPECT_EQ(x->num_users(), 800u);
  EXPECT_EQ(y->num_users(), 500u);
  EXPECT_EQ(verify(f), "");
  f.compact();
  EXPECT_EQ(x->num_users(), 500u);  // the 300 unused chains are gone
  EXPECT_EQ(verify(f), "");
}

TEST(GraphUseLists, ASharedValueKeepsExactUsersInEveryRemovalOrder) {
  // Removing a user of a long use list first looks next to the slot of the previous removal (graph.cpp,
  // drop_use): forward and reverse sweeps take that path, the other orders the search; all must stay exact,
  // with new users arriving in between and users that read the value twice.
  constexpr size_t kUsers = 64;
  const std::vector<std::string> orders{"forward", "reverse", "outside-in", "every third", "forward with arrivals"};
  for (const std::string& order : orders) {
    SCOPED_TRACE(order);
    Function f("main");
    Builder b(f);
    Node* x = b.param("x", f32({4}));
    b.output(b.call("negative", {x}));
    std::vector<Node*> live;
    for (size_t i = 0; i < kUsers; ++i) live.push_back(i % 5 == 0 ? b.call("add", {x, x}) : b.call("exp", {x}));
    std::vector<Node*> removal = live;
    if (order == "reverse") std::reverse(removal.begin(), removal.end());
    if (order == "outside-in") {
      removal.clear();
      for (size_t i = 0; i < kUsers / 2; ++i) removal.insert(removal.end(), {live[i], live[kUsers - 1 - i]});
    }
    if (order == "every third") {
      removal.clear();
      for (size_t start = 0; start < 3; ++start) {
        for (size_t i = start; i < kUsers; i += 3) removal.push_back(live[i]);
      }
    }
    for (Node* user : removal) {
      ASSERT_EQ(f.erase_unused(user), 1u);
      live.erase(std::find(live.begin(), live.end(), user));
      if (order == "forward with arrivals") live.push_back(b.call("tanh", {x}));
      size_t expected_uses = 1;  // the output's negative
      for (const Node* kept : live) {
        const size_t uses = kept->num_operands();
        expected_uses += uses;
        ASSERT_EQ(count_of(x->users(), kept), uses);
      }
      ASSERT_EQ(x->num_users(), expected_uses);
    }
    EXPECT_EQ(verify(f), "");
  }
}

// Builds x, y -> five-field tuple (operands out of line) -> items -> calls with attributes and a constant; returns
// the output.
Node* build_mixed_graph(Builder& b, size_t copies) {
  Node* x = b.param("x", f32({4, 4}));
  Node* y = b.param("y", f32({4, 4}));
  Node* total = nullptr;
  for (size_t i = 0; i < copies; ++i) {
    Node* fields = b.tuple({x, y, x, y, x});
    Node* sum = b.call("add", {b.item(fields, 0), b.item(fields, 3)});
    Node* scaled = b.call("multiply", {sum, b.scalar(0.5 + static_cast<double>(i))});
    Node* moved = b.call("permute_dims", {scaled}, {{"axes", std::vector<int64_t>{1, 0}}});
    total = total == nullptr ? moved : b.call("add", {total, moved});
  }
  b.output(total);
  return total;
}

TEST(GraphMemory, NodesInMemoryOfADestroyedFunctionStartClean) {
  // Memory of destroyed functions is reused by later ones (the allocator recycles node blocks) and nodes are not
  // cleared before construction: a node built where a named, used, dead or rewritten one lay must be as new.
  std::string fresh_text;
  {
    Function fresh("main");
    Builder b(fresh);
    build_mixed_graph(b, 3);
    fresh_text = print_function(fresh);
  }
  for (int round = 0; round < 3; ++round) {
    auto dirty = std::make_unique<Function>("main");
    Builder b(*dirty);
    Node* output = build_mixed_graph(b, 2000);  // several blocks of nodes, names, literals, use lists
    for (Node* node : dirty->nodes()) {
      if (node->kind() == NodeKind::Call) node->set_name("n" + std::to_string(node->id()));
    }
    Node* replacement = b.call("negative", {output});
    dirty->replace_all_uses(output, replacement);
    dirty->erase_unused(output);
    dirty.reset();

    Function again("main");
    Builder rebuilt(again);
    build_mixed_graph(rebuilt, 3);
    EXPECT_EQ(print_function(again), fresh_text) << round;
    EXPECT_EQ(verify(again), "");
    for (const Node* node : again.nodes()) {
      EXPECT_FALSE(node->is_dead());
      if (node->kind() != NodeKind::Param) {
        EXPECT_TRUE(node->name().empty()) << node->id();
      }
      for (const Node* user : node->users()) EXPECT_EQ(count_of(user->operands(), node), count_of(node->users(), user));
    }
  }
}

// A thread keeps the node blocks of functions that died for its next functions (graph.cpp, ArenaBlockCache), so
// that graph after graph does not fault in fresh pages: the next function's first node lies where the last
// block given back lay, which is the dead function's first block (blocks are given back last first), whatever
// else was allocated in between.
// (A function's small first block is not kept: malloc recycles those itself.)
TEST(GraphMemory, ADeadFunctionsNodeBlocksServeTheNextFunction) {
  // The first node of the second block, the first one a large block holds.
  const auto first_of_large_block = [](Function& function, const char* param) {
    Builder b(function);
    Node* value = b.param(param, f32({2}));
    Node* first = nullptr;
    for (int i = 0; i < 2000; ++i) {  // several blocks
      value = b.call("negative", {value});
      if (value->id() == Node::kFirstBlockNodes) first = value;
    }
    b.output(value);
    return first;
  };
  Node* first_of_dead = nullptr;
  {
    Function dead("dead");
    first_of_dead = first_of_large_block(dead, "x");
  }
  // Allocations in between would reuse the freed blocks if they went back to the allocator.
  std::vector<std::unique_ptr<char[]>> others;
  for (int i = 0; i < 8; ++i) others.push_back(std::make_unique<char[]>(Node::kArenaBlockNodes * 128));
  Function next("next");
  const Node* first_of_next = first_of_large_block(next, "y");
  ASSERT_NE(first_of_next, nullptr);
  EXPECT_EQ(first_of_next, first_of_dead);
  EXPECT_EQ(first_of_next->name(), "");
  EXPECT_EQ(first_of_next->num_users(), 1u);
}

// A function's first block holds Node::kFirstBlockNodes nodes and their cold parts, closer together than in the
// later blocks: names, extras and a fifth operand must land in the right place on both sides of the boundary.
TEST(GraphMemory, ColdPartsOnBothSidesOfTheFirstBlock) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", f32({1, 2, 4, 4}));
  Node* scale = b.param("scale", f32({2}));
  std::vector<Node*> nodes;
  Node* value = x;
  for (size_t i = 0; i < 2 * Node::kFirstBlockNodes; ++i) {
    value = i % 2 == 0 ? b.call("nn.batch_norm", {x, scale, scale, scale, scale}) : b.item(value, i % 3 == 0 ? 0 : 2);
    value->set_name("v" + std::to_string(i));
    nodes.push_back(value);
  }
  b.output(value);
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i]->name(), "v" + std::to_string(i));
    if (i % 2 == 0) {
      ASSERT_EQ(nodes[i]->num_operands(), 5u);
      EXPECT_EQ(nodes[i]->operand(4), scale);
    } else {
      EXPECT_EQ(nodes[i]->index(), i % 3 == 0 ? 0 : 2);
    }
  }
  EXPECT_EQ(verify(function), "");
}

// A function destroyed on another thread than the one that built it gives its blocks to that thread's cache or,
// once that thread's cache is gone, back to the allocator: either way nothing is freed twice or kept dangling.
TEST(GraphMemory, FunctionsMayDieOnAnotherThread) {
  auto built = std::make_unique<Function>("main");
  std::thread([&] {
    Builder b(*built);
    Node* value = b.param("x", f32({2}));
    for (int i = 0; i < 1500; ++i) value = b.call("negative", {value});
    b.output(value);
  }).join();  // the building thread and its cache are gone
  EXPECT_EQ(verify(*built), "");
  built.reset();
  std::thread([] {
    Function local("main");
    Builder b(local);
    Node* value = b.param("x", f32({2}));
    for (int i = 0; i < 1500; ++i) value = b.call("negative", {value});
    b.output(value);
    EXPECT_EQ(verify(local), "");
  }).join();
}

// A node's cold part is constructed on its first write (graph.h): until then the node reads as unnamed and
// without extras, and every way of writing it (a name, an extra, a fourth operand) must still take.
TEST_F(Graph, ColdPartsAreWrittenOnDemand) {
  Node* x = b.param("x", f32({2}));
  Node* unnamed = b.call("negative", {x});
  EXPECT_EQ(unnamed->name(), "");
  unnamed->set_name("");  // clearing a name never written writes nothing
  EXPECT_EQ(unnamed->name(), "");
  unnamed->set_name("late");
  EXPECT_EQ(unnamed->name(), "late");
  unnamed->set_name("");
  EXPECT_EQ(unnamed->name(), "");

  std::vector<Node*> args{x, unnamed, x, unnamed, x};  // more than fit in the node: the rest go to the cold part
  Node* call = f.add_func_call("callee", args, f32({2}));
  ASSERT_EQ(call->num_operands(), args.size());
  for (size_t i = 0; i < args.size(); ++i) EXPECT_EQ(call->operand(i), args[i]) << i;
  EXPECT_EQ(call->callee(), "callee");
  EXPECT_EQ(call->name(), "");
  call->set_name("c");
  EXPECT_EQ(call->callee(), "callee");
  EXPECT_EQ(call->operand(4), x);
  EXPECT_EQ(count_of(unnamed->users(), call), 2u);

  Literal two;
  two.values = {2.0};
  Node* constant = f.add_constant(two);
  EXPECT_EQ(constant->literal(), two);
  EXPECT_EQ(constant->name(), "");
}

TEST(Module, FunctionsAndUniqueNames) {
  Module module;
  Function& main = module.add_function("main");
  module.add_function("fused_add");
  module.add_function("fused_add_1");
  EXPECT_EQ(module.find("main"), &main);
  EXPECT_EQ(module.find("nothing"), nullptr);
  EXPECT_EQ(module.functions().size(), 3u);
  EXPECT_EQ(module.unique_function_name("fused_mul"), "fused_mul");
  EXPECT_EQ(module.unique_function_name("fused_add"), "fused_add_2");
  const Module& view = module;
  EXPECT_EQ(view.find("fused_add")->name(), "fused_add");
}

// Names given one after the other continue where the last one was found (constant time per name), and a removed
// function's name is free again: the first free name is always the one given.
TEST(Module, FreshNamesAndRemovalsKeepGivingTheFirstFreeName) {
  Module module;
  for (int i = 0; i < 5; ++i) module.add_function(module.unique_function_name("fused"));
  EXPECT_NE(module.find("fused_4"), nullptr);
  EXPECT_TRUE(module.remove_function("fused_2"));
  EXPECT_FALSE(module.remove_function("fused_2"));
  EXPECT_EQ(module.find("fused_2"), nullptr);
  EXPECT_EQ(module.unique_function_name("fused"), "fused_2");
  module.add_function("fused_2");
  EXPECT_EQ(module.unique_function_name("fused"), "fused_5");
  EXPECT_TRUE(module.remove_function("fused"));
  EXPECT_EQ(module.unique_function_name("fused"), "fused");
  module.add_function("fused_6");  // added under its own name, not through unique_function_name
  module.add_function(module.unique_function_name("fused"));
  module.add_function(module.unique_function_name("fused"));
  EXPECT_EQ(module.unique_function_name("fused"), "fused_7");
  EXPECT_EQ(module.functions().size(), 7u);
}

// Two functions of one name (a reader reports the second as an error, but the module holds both until then):
// the first is found, and once it is removed, the other.
TEST(Module, FindGivesTheFirstFunctionOfAName) {
  Module module;
  Function& first = module.add_function("f");
  Function& second = module.add_function("f");
  EXPECT_EQ(module.find("f"), &first);
  EXPECT_TRUE(module.remove_function("f"));
  EXPECT_EQ(module.find("f"), &second);
  EXPECT_TRUE(module.remove_function(second.name()));  // the name viewed dies with the function (ASan checks it)
  EXPECT_EQ(module.find("f"), nullptr);
  EXPECT_TRUE(module.functions().empty());
}

}  // namespace
}  // namespace dpl
