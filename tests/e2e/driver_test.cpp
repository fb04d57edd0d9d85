// The rewrite driver's semantics, pinned with hand-written matchers (independent of dplc): visiting order,
// cascades, re-queued users, declined replacements, replace_all, rebuilding in place, users-first order, `once`,
// the rewrite budget, verify_each, pass and pipeline registry and statistics.
#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dpl/ir/analysis.h"
#include "dpl/ir/builder.h"
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/sweep.h"
#include "dpl/text/tvmscript.h"

namespace dpl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TypeRef tensor_type(std::vector<int64_t> extents, DType dtype = DType::Float32) {
  std::vector<Dim> dims;
  for (int64_t extent : extents) dims.push_back(Dim::fixed(extent));
  return Type::tensor(dtype, dims);
}

bool is_scalar_constant(const Node* node, double value) {
  return node->kind() == NodeKind::Constant && node->literal().is_scalar() && node->literal().values[0] == value;
}

// rule add_self: add(x, x) => multiply(x, const(2.0))
int match_add_self(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::add) || root->operand(0) != root->operand(1)) return -1;
  Node* x = root->operand(0);
  Node* product = rewriter.call(op::multiply, {x, rewriter.scalar(2.0, x->type()->dtype())});
  return product != nullptr && rewriter.replace(root, product) ? 0 : -1;
}

// rule fold_doubling: multiply(multiply(x, const(2.0)), const(2.0)) => multiply(x, const(4.0))
int match_fold_doubling(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::multiply) || !is_scalar_constant(root->operand(1), 2.0)) return -1;
  Node* inner = root->operand(0);
  if (!inner->is_call_of(op::multiply) || !is_scalar_constant(inner->operand(1), 2.0)) return -1;
  Node* x = inner->operand(0);
  Node* product = rewriter.call(op::multiply, {x, rewriter.scalar(4.0, x->type()->dtype())});
  return product != nullptr && rewriter.replace(root, product) ? 1 : -1;
}

// rule mul_to_add: multiply(x, const(2.0)) => add(x, x)
int match_mul_to_add(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::multiply) || !is_scalar_constant(root->operand(1), 2.0)) return -1;
  Node* x = root->operand(0);
  Node* sum = rewriter.call(op::add, {x, x});
  return sum != nullptr && rewriter.replace(root, sum) ? 0 : -1;
}

constexpr RuleInfo kAddSelfRules[] = {{"add_self", "test.dpl:1"}, {"fold_doubling", "test.dpl:2"}};
int match_add_self_then_fold(Rewriter& rewriter, Node* root) {
  const int rule = match_add_self(rewriter, root);
  return rule >= 0 ? rule : match_fold_doubling(rewriter, root);
}
const PassDef kAddSelfPass{"test_add_self", "x + x => x * 2", "test.dpl", std::span(kAddSelfRules, 1),
                           match_add_self};
const PassDef kCascadePass{"test_cascade", "x + x => x * 2, (x * 2) * 2 => x * 4", "test.dpl", kAddSelfRules,
                           match_add_self_then_fold};

constexpr RuleInfo kUndoRules[] = {{"mul_to_add", "undo.dpl:1"}, {"add_to_mul", "undo.dpl:2"}};
int match_undo(Rewriter& rewriter, Node* root) {
  if (match_mul_to_add(rewriter, root) >= 0) return 0;
  return match_add_self(rewriter, root) >= 0 ? 1 : -1;
}
const PassDef kUndoPass{"test_undo", "two rules that undo each other", "undo.dpl", kUndoRules, match_undo};

RunOptions verifying() {
  RunOptions options;
  options.verify_each = true;
  return options;
}

// The seed's first example: x2 = x + x; x4 = x2 + x2.
struct ChainedAdds {
  ChainedAdds() : function("main"), b(function) {
    x = b.param("x", tensor_type({16, 16}));
    x2 = b.call("add", {x, x});
    x2->set_name("x2");
    x4 = b.call("add", {x2, x2});
    x4->set_name("x4");
    b.output(x4);
  }
  Function function;
  Builder b;
  Node* x;
  Node* x2;
  Node* x4;
};

TEST(Driver, RewritesTheSeedsChainedAddsAndKeepsBindingNames) {
  ChainedAdds graph;
  const PassResult result = run_pass(kAddSelfPass, graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;

  Function expected("main");
  Builder b(expected);
  Node* x = b.param("x", tensor_type({16, 16}));
  Node* x2 = b.call("multiply", {x, b.scalar(2.0)});
  b.output(b.call("multiply", {x2, b.scalar(2.0)}));
  const EqualityResult equal = structurally_equal(graph.function, expected);
  EXPECT_TRUE(equal.equal) << equal.difference;

  EXPECT_EQ(graph.function.output()->name(), "x4");
  EXPECT_EQ(graph.function.output()->operand(0)->name(), "x2");
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(result.stats.fired, std::vector<uint64_t>({2}));
  EXPECT_EQ(result.stats.nodes_removed, 2u);  // the two adds
  // x2, x4 and the two multiplies that replaced them; parameters and constants are not visited.
  EXPECT_EQ(result.stats.nodes_visited, 4u);
  EXPECT_EQ(verify(graph.function), "");
}

// Every call node a matcher saw, in order.
std::vector<const Node*> g_visited;
int record_visit(Rewriter&, Node* root) {
  g_visited.push_back(root);
  return -1;
}
const PassDef kRecordPass{"test_record", "records visits", "record.dpl", {}, record_visit};

TEST(Driver, VisitsEveryNodeOnceOperandsBeforeUsers) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  Node* y = b.param("y", tensor_type({8}));
  // Created in an order where the last-created node is used first, so creation order is not visiting order.
  Node* a = b.call("add", {x, y});
  Node* e = b.call("exp", {a});
  Node* m = b.call("multiply", {a, b.scalar(3.0)});
  Node* s = b.call("subtract", {m, e});
  Node* out = b.call("add", {s, m});
  b.output(out);

  g_visited.clear();
  const PassResult result = run_pass(kRecordPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  const std::vector<const Node*> calls = {a, e, m, s, out};
  ASSERT_EQ(g_visited.size(), calls.size());
  for (const Node* call : calls) EXPECT_EQ(std::count(g_visited.begin(), g_visited.end(), call), 1);
  for (size_t i = 0; i < g_visited.size(); ++i) {
    for (const Node* operand : g_visited[i]->operands()) {
      if (operand->kind() != NodeKind::Call) continue;
      const auto position = std::find(g_visited.begin(), g_visited.end(), operand) - g_visited.begin();
      EXPECT_LT(static_cast<size_t>(position), i) << "an operand was visited after its user";
    }
  }
  EXPECT_EQ(result.stats.nodes_visited, calls.size());
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(result.stats.nodes_removed, 0u);
}

TEST(Driver, FollowsCascadesThroughTheNodesARewriteCreated) {
  // add_self turns x2 and x4 into multiplies; the second multiply is new and only then does fold_doubling see
  // multiply(multiply(x, 2), 2).
  ChainedAdds graph;
  const PassResult result = run_pass(kCascadePass, graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;

  Function expected("main");
  Builder b(expected);
  b.output(b.call("multiply", {b.param("x", tensor_type({16, 16})), b.scalar(4.0)}));
  const EqualityResult equal = structurally_equal(graph.function, expected);
  EXPECT_TRUE(equal.equal) << equal.difference;
  EXPECT_EQ(result.stats.fired, std::vector<uint64_t>({2, 1}));
  EXPECT_EQ(graph.function.output()->name(), "x4");
}

TEST(Driver, RewritesALongChainInOneSweep) {
  // x0 = x + x, x1 = x0 + x0, ...: each node is rewritten once, and visited once before and once after.
  constexpr int kLength = 1000;
  Function function("main");
  Builder b(function);
  Node* value = b.param("x", tensor_type({4}));
  for (int i = 0; i < kLength; ++i) value = b.call("add", {value, value});
  b.output(value);

  const PassResult result = run_pass(kAddSelfPass, function);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, static_cast<uint64_t>(kLength));
  EXPECT_EQ(result.stats.nodes_visited, static_cast<uint64_t>(2 * kLength));
  EXPECT_EQ(result.stats.nodes_removed, static_cast<uint64_t>(kLength));
  for (const Node* node : function.nodes()) EXPECT_FALSE(node->is_call_of(op::add));
  EXPECT_EQ(verify(function), "");
}

TEST(Driver, RightHandSidesShareTheScalarsTheyBuildAndPrintAsBefore) {
  ChainedAdds graph;
  const PassResult result = run_pass(kAddSelfPass, graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  const Node* outer = graph.function.output();
  const Node* two = outer->operand(1);
  EXPECT_EQ(outer->operand(0)->operand(1), two);
  EXPECT_EQ(two->num_users(), 2u);

  // The same graph with a constant per use prints the same text.
  Function unshared("main");
  Builder b(unshared);
  Node* x2 = b.call("multiply", {b.param("x", tensor_type({16, 16})), b.scalar(2.0)});
  x2->set_name("x2");
  Node* x4 = b.call("multiply", {x2, b.scalar(2.0)});
  x4->set_name("x4");
  b.output(x4);
  EXPECT_EQ(print_function(graph.function), print_function(unshared));
}

TEST(Driver, StartsANewSharedScalarWhenOneHasTheMostUses) {
  const size_t length = Rewriter::kMaxScalarUses + 1;
  Function function("main");
  Builder b(function);
  Node* value = b.param("x", tensor_type({4}));
  for (size_t i = 0; i < length; ++i) value = b.call("add", {value, value});
  b.output(value);

  const PassResult result = run_pass(kAddSelfPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  std::vector<const Node*> constants;
  for (const Node* node : function.nodes()) {
    if (node->kind() == NodeKind::Constant) constants.push_back(node);
  }
  ASSERT_EQ(constants.size(), 2u);
  EXPECT_EQ(constants[0]->num_users(), Rewriter::kMaxScalarUses);
  EXPECT_EQ(constants[1]->num_users(), 1u);
}

// Right-hand sides that build several round scalars (1.0, 2.0, 0.5, 0.125, ...) in turn share each of them: such
// doubles differ only in their exponent bits, and a slot chosen from the middle bits of their hash put them all in
// one slot, where each replaced the other.
TEST(Driver, SharesSeveralRoundScalarsBuiltInTurn) {
  Function function("main");
  std::vector<Node*> worklist;
  std::vector<FlagByte> queued;
  Rewriter rewriter(function, worklist, queued);
  const double values[] = {1.0, 2.0, 0.5, 0.125, 0.0, -1.0, 3.0, 4.0};
  std::vector<Node*> first;
  for (double value : values) first.push_back(rewriter.scalar(value, DType::Float32));
  for (size_t i = 0; i < std::size(values); ++i) {
    Node* again = rewriter.scalar(values[i], DType::Float32);
    EXPECT_EQ(again, first[i]) << values[i] << " was built again";
    EXPECT_TRUE(is_scalar_constant(again, values[i]));
  }
  EXPECT_NE(rewriter.scalar(1.0, DType::Float16), first[0]);
}

// A scalar holds what its dtype holds, as its printed text reads back: a computed value (`const(eps)` of a double
// attribute, `const(c.value / 3)`) is rounded to the constant's dtype, integers toward zero.
TEST(Driver, ScalarsAreRoundedToTheirDtype) {
  Function function("main");
  std::vector<Node*> worklist;
  std::vector<FlagByte> queued;
  Rewriter rewriter(function, worklist, queued);
  EXPECT_TRUE(is_scalar_constant(rewriter.scalar(1e-5, DType::Float32), static_cast<double>(1e-5f)));
  EXPECT_TRUE(is_scalar_constant(rewriter.scalar(0.1, DType::Float16), 0.0999755859375));  // float16's nearest
  EXPECT_TRUE(is_scalar_constant(rewriter.scalar(0.1, DType::Float64), 0.1));
  EXPECT_TRUE(is_scalar_constant(rewriter.scalar(-2.75, DType::Int64), -2.0));
  // The rounded value is the shared one: asking again for the unrounded value finds it.
  EXPECT_EQ(rewriter.scalar(1e-5, DType::Float32), rewriter.scalar(static_cast<double>(1e-5f), DType::Float32));
}

// rule scale_exp: exp(x) => multiply(x, const(5.0)), declined at nodes named "decline" after building the
// constant (which the driver then removes as unused).
constexpr RuleInfo kScaleExpRules[] = {{"scale_exp", "scale.dpl:1"}};
int match_scale_exp(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  Node* five = rewriter.scalar(5.0, DType::Float32);
  if (root->name() == "decline") return -1;
  Node* product = rewriter.call(op::multiply, {root->operand(0), five});
  return product != nullptr && rewriter.replace(root, product) ? 0 : -1;
}
const PassDef kScaleExpPass{"test_scale_exp", "exp(x) => x * 5", "scale.dpl", kScaleExpRules, match_scale_exp};

TEST(Driver, NeverHandsOutASharedScalarThatWasRemoved) {
  Function function("main");
  Builder b(function);
  Node* declined = b.call("exp", {b.param("x", tensor_type({4}))});
  declined->set_name("decline");
  b.output(b.call("exp", {declined}));

  const PassResult result = run_pass(kScaleExpPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  const Node* five = function.output()->operand(1);
  EXPECT_TRUE(is_scalar_constant(five, 5.0));
  EXPECT_FALSE(five->is_dead());
  EXPECT_EQ(verify(function), "");
}

// A matcher that, at the node named "trigger", replaces the node named "shared" (which an already visited node
// uses) by log(x): the users of the replaced node must be visited again.
int g_negative_visits = 0;
constexpr RuleInfo kRequeueRules[] = {{"swap_shared", "requeue.dpl:1"}};
int match_requeue(Rewriter& rewriter, Node* root) {
  if (root->is_call_of(op::negative)) ++g_negative_visits;
  if (root->name() != "trigger") return -1;
  Node* shared = root->operand(0)->operand(0);
  if (!shared->is_call_of(op::exp)) return -1;
  Node* log = rewriter.call(op::log, {shared->operand(0)});
  return log != nullptr && rewriter.replace(shared, log) ? 0 : -1;
}
const PassDef kRequeuePass{"test_requeue", "requeues users", "requeue.dpl", kRequeueRules, match_requeue};

TEST(Driver, RequeuesTheUsersOfAReplacedNode) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  Node* shared = b.call("exp", {x});
  shared->set_name("shared");
  Node* neg = b.call("negative", {shared});
  Node* abs = b.call("abs", {shared});
  Node* trigger = b.call("sqrt", {abs});
  trigger->set_name("trigger");
  b.output(b.call("add", {neg, trigger}));

  g_negative_visits = 0;
  const PassResult result = run_pass(kRequeuePass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_EQ(g_negative_visits, 2) << "negative(shared) was visited before the rewrite and must be again after";
  EXPECT_TRUE(neg->operand(0)->is_call_of(op::log));
}

// rule to_half: exp(x) => astype(x, "float16") — a right-hand side of another dtype, which replace() refuses.
std::string g_last_error;
// What a matcher returns for a rule that `fired` (0) or not (-1), keeping the rewriter's last error for the test.
int outcome(Rewriter& rewriter, bool fired) {
  g_last_error = rewriter.last_error();
  return fired ? 0 : -1;
}
constexpr RuleInfo kToHalfRules[] = {{"to_half", "half.dpl:1"}};
int match_to_half(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  Node* half = rewriter.call(op::astype, {root->operand(0)}, AttrList{std::string("float16")});
  if (half == nullptr) {
    g_last_error = "astype did not type-check: " + rewriter.last_error();
    return -1;
  }
  return outcome(rewriter, rewriter.replace(root, half));
}
const PassDef kToHalfPass{"test_to_half", "changes the dtype", "half.dpl", kToHalfRules, match_to_half};

TEST(Driver, ReplaceDeclinesAReplacementOfAnotherType) {
  Function function("main");
  Builder b(function);
  Node* e = b.call("exp", {b.param("x", tensor_type({8}))});
  b.output(b.call("negative", {e}));

  g_last_error.clear();
  const PassResult result = run_pass(kToHalfPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_THAT(g_last_error, HasSubstr("dtype float16 instead of float32"));
  EXPECT_EQ(function.output()->operand(0), e);
  // The astype the rule built and did not use is gone.
  for (const Node* node : function.nodes()) EXPECT_FALSE(node->is_call_of(op::astype));
  EXPECT_EQ(result.stats.nodes_removed, 0u);
}

// rule flatten: exp(x) => reshape(x, shape([64])) applied to an 8x8 tensor: another rank, also refused.
constexpr RuleInfo kFlattenRules[] = {{"flatten", "flatten.dpl:1"}};
int match_flatten(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  Node* flat = rewriter.call(op::reshape, {root->operand(0), rewriter.shape({Dim::fixed(64)})});
  return outcome(rewriter, flat != nullptr && rewriter.replace(root, flat));
}
const PassDef kFlattenPass{"test_flatten", "changes the rank", "flatten.dpl", kFlattenRules, match_flatten};

TEST(Driver, ReplaceDeclinesAReplacementOfAnotherRank) {
  Function function("main");
  Builder b(function);
  b.output(b.call("exp", {b.param("x", tensor_type({8, 8}))}));
  g_last_error.clear();
  const PassResult result = run_pass(kFlattenPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_THAT(g_last_error, HasSubstr("rank 1 instead of 2"));
  EXPECT_TRUE(function.output()->is_call_of(op::exp));
}

// Each visit that declines after building leaves nothing behind, however many decline in one sweep.
TEST(Driver, RemovesWhatEachDecliningVisitBuilt) {
  Function function("main");
  Builder b(function);
  Node* value = b.param("x", tensor_type({8}));
  for (int i = 0; i < 5; ++i) value = b.call("exp", {value});
  b.output(value);
  const size_t listed = function.nodes().size();

  const PassResult result = run_pass(kToHalfPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(result.stats.nodes_visited, 5u);
  EXPECT_EQ(result.stats.nodes_removed, 0u);
  EXPECT_EQ(function.nodes().size(), listed);
  for (const Node* node : function.nodes()) EXPECT_FALSE(node->is_call_of(op::astype));
}

// rule exp_away: exp(x) => x, from a hand-written rewriter that first builds a negative(x) it never uses (as a
// rule that declines after building, before another fires, leaves one), noting how many users x has then.
std::vector<size_t> g_users_of_x;
constexpr RuleInfo kExpAwayRules[] = {{"exp_away", "away.dpl:1"}};
int match_exp_away_leaving_a_node(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  g_users_of_x.push_back(root->operand(0)->num_users());
  if (rewriter.call(op::negative, {root->operand(0)}) == nullptr) return -1;
  return rewriter.replace(root, root->operand(0)) ? 0 : -1;
}
const PassDef kExpAwayPass{"test_exp_away", "exp(x) => x", "away.dpl", kExpAwayRules, match_exp_away_leaving_a_node};

// What a visit built and left unused goes right after it, also when a rule fired there: a later visit must not
// see it among the users of its operands (the rule interpreter tries rules in turn, building each one's right-hand
// side, so a rule that fires may follow one that declined).
TEST(Driver, RemovesWhatAVisitBuiltAndLeftUnusedAlsoWhenARuleFired) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  b.output(b.call("sqrt", {b.call("exp", {b.call("exp", {x})})}));

  g_users_of_x.clear();
  const PassResult result = run_pass(kExpAwayPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(g_users_of_x, (std::vector<size_t>{1, 1}));  // the first visit's negative(x) is gone at the second
  EXPECT_EQ(result.stats.nodes_removed, 2u);             // the two exps; the negatives were never in the graph
  ASSERT_EQ(function.nodes().size(), 2u);
  EXPECT_EQ(function.output()->operand(0), x);
  EXPECT_EQ(verify(function), "");
}

// rule outer: multiply(x, y) => matmul(x, y), built as dplc builds it (proven_call): fires where the shapes fit
// a matmul, and where they do not, inference still declines it with the reason.
constexpr RuleInfo kOuterRules[] = {{"outer", "outer.dpl:1"}};
int match_outer(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::multiply)) return -1;
  Node* product = rewriter.proven_call(op::matmul, {root->operand(0), root->operand(1)});
  if (product == nullptr) {
    g_last_error = rewriter.last_error();
    return -1;
  }
  return rewriter.replace(root, product) ? 0 : -1;
}
const PassDef kOuterPass{"test_outer", "x * y => x @ y", "outer.dpl", kOuterRules, match_outer};

TEST(Driver, ProvenCallsBuildAndStillDeclineWhatDoesNotTypeCheck) {
  Function function("main");
  Builder b(function);
  Node* square = b.param("square", tensor_type({4, 4}));
  Node* wide = b.param("wide", tensor_type({2, 3}));
  Node* fits = b.call("multiply", {square, square});
  Node* does_not_fit = b.call("multiply", {wide, wide});
  b.output(b.call("add", {fits, b.call("sum", {does_not_fit})}));

  g_last_error.clear();
  const PassResult result = run_pass(kOuterPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_THAT(g_last_error, HasSubstr("matmul"));
  const Node* product = function.output()->operand(0);
  EXPECT_TRUE(product->is_call_of(op::matmul));
  EXPECT_EQ(product->type(), tensor_type({4, 4}));
  EXPECT_EQ(std::count(square->users().begin(), square->users().end(), product), 2);
  EXPECT_TRUE(function.output()->operand(1)->operand(0)->is_call_of(op::multiply));
  EXPECT_EQ(verify(function), "");
}

TEST(Driver, StopsWithAnErrorNamingRulesThatUndoEachOther) {
  Function function("main");
  Builder b(function);
  Node* y = b.call("multiply", {b.param("x", tensor_type({4})), b.scalar(2.0)});
  y->set_name("y");
  b.output(y);

  RunOptions options = verifying();
  options.budget_per_node = 4;
  const PassResult result = run_pass(kUndoPass, function, options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error, HasSubstr("rewrite budget exhausted"));
  EXPECT_THAT(result.error, HasSubstr("mul_to_add"));
  EXPECT_THAT(result.error, HasSubstr("add_to_mul"));
  EXPECT_THAT(result.error, HasSubstr("binding 'y'"));
  const uint64_t budget = 4 * 3 + 1024;  // 4 per node x (x, 2.0, y) + 1024
  EXPECT_EQ(result.stats.rewrites, budget + 1);
  EXPECT_EQ(result.stats.fired[0] + result.stats.fired[1], budget + 1);
  // The graph is still whole: one live multiply or add of x, and nothing else left over.
  EXPECT_EQ(verify(function), "");
  EXPECT_LE(function.num_live_nodes(), 3u);
}

// A broken matcher that bypasses Rewriter::replace and swaps in a value of another dtype: the users' types no
// longer match what the registry infers.
constexpr RuleInfo kBrokenRules[] = {{"broken", "broken.dpl:7"}};
int match_broken(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  Node* half = rewriter.call(op::astype, {root->operand(0)}, AttrList{std::string("float16")});
  if (half == nullptr) return -1;
  rewriter.function().replace_all_uses(root, half);
  return 0;
}
const PassDef kBrokenPass{"test_broken", "breaks the IR", "broken.dpl", kBrokenRules, match_broken};

Node* build_exp_then_negative(Function& function) {
  Builder b(function);
  Node* e = b.call("exp", {b.param("x", tensor_type({8}))});
  e->set_name("e");
  b.output(b.call("negative", {e}));
  return e;
}

TEST(Driver, VerifyEachStopsAtTheFirstMalformedRewrite) {
  Function function("main");
  build_exp_then_negative(function);
  const PassResult result = run_pass(kBrokenPass, function, verifying());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error, HasSubstr("malformed after rule broken (broken.dpl:7)"));
  EXPECT_THAT(result.error, HasSubstr("binding 'e'"));
  EXPECT_EQ(result.stats.rewrites, 1u);
}

TEST(Driver, WithoutVerifyEachTheSameRewriteGoesUnchecked) {
  Function function("main");
  build_exp_then_negative(function);
  const PassResult result = run_pass(kBrokenPass, function);
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  EXPECT_NE(verify(function), "");
}

TEST(Driver, RunsEveryFunctionOfAModule) {
  Module module;
  for (const char* name : {"main", "helper"}) {
    Function& function = module.add_function(name);
    Builder b(function);
    Node* x = b.param("x", tensor_type({2}));
    b.output(b.call("add", {x, x}));
  }
  const PassResult result = run_pass(kAddSelfPass, module, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(result.stats.fired, std::vector<uint64_t>({2}));
  for (const auto& function : module.functions()) EXPECT_TRUE(function->output()->is_call_of(op::multiply));
}

// rule merge_siblings (multi-root): multiply(x, const(2.0)) and a sibling add(x, x) => both become one new
// multiply(x, 2.0), replaced together by replace_all.
Node* sibling_add_self(Node* x) {
  for (Node* user : x->users()) {
    if (user->is_call_of(op::add) && user->operand(0) == x && user->operand(1) == x) return user;
  }
  return nullptr;
}
constexpr RuleInfo kMergeRules[] = {{"merge_siblings", "merge.dpl:1"}};
int match_merge_siblings(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::multiply) || !is_scalar_constant(root->operand(1), 2.0)) return -1;
  Node* x = root->operand(0);
  Node* sibling = sibling_add_self(x);
  if (sibling == nullptr || rewriter.created_in_run(root)) return -1;
  Node* merged = rewriter.call(op::multiply, {x, rewriter.scalar(2.0, x->type()->dtype())});
  const std::pair<Node*, Node*> replacements[] = {{root, merged}, {sibling, merged}};
  return outcome(rewriter, merged != nullptr && rewriter.replace_all(replacements));
}
const PassDef kMergePass{"test_merge", "multi-root merge", "merge.dpl", kMergeRules, match_merge_siblings};

// The same two roots, but the sibling's replacement has another rank: nothing may change.
int match_merge_badly(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::multiply) || !is_scalar_constant(root->operand(1), 2.0)) return -1;
  Node* x = root->operand(0);
  Node* sibling = sibling_add_self(x);
  if (sibling == nullptr) return -1;
  Node* merged = rewriter.call(op::multiply, {x, rewriter.scalar(2.0, x->type()->dtype())});
  Node* flat = rewriter.call(op::reshape, {x, rewriter.shape({Dim::fixed(16)})});
  const std::pair<Node*, Node*> replacements[] = {{root, merged}, {sibling, flat}};
  return outcome(rewriter, merged != nullptr && flat != nullptr && rewriter.replace_all(replacements));
}
const PassDef kMergeBadlyPass{"test_merge_badly", "multi-root merge", "merge.dpl", kMergeRules, match_merge_badly};

// out = (x * 2, x + x)
struct Siblings {
  Siblings() : function("main"), b(function) {
    x = b.param("x", tensor_type({4, 4}));
    doubled = b.call("multiply", {x, b.scalar(2.0)});
    sum = b.call("add", {x, x});
    b.output(b.tuple({doubled, sum}));
  }
  Function function;
  Builder b;
  Node* x;
  Node* doubled;
  Node* sum;
};

TEST(ReplaceAll, ReplacesEveryRootTogether) {
  Siblings graph;
  const PassResult result = run_pass(kMergePass, graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  const Node* out = graph.function.output();
  ASSERT_EQ(out->num_operands(), 2u);
  EXPECT_EQ(out->operand(0), out->operand(1));
  EXPECT_TRUE(out->operand(0)->is_call_of(op::multiply));
  EXPECT_TRUE(graph.doubled->is_dead());
  EXPECT_TRUE(graph.sum->is_dead());
  EXPECT_EQ(verify(graph.function), "");
}

TEST(ReplaceAll, DeclinesEveryRootWhenOneDoesNotFit) {
  Siblings graph;
  Siblings original;
  g_last_error.clear();
  const PassResult result = run_pass(kMergeBadlyPass, graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_THAT(g_last_error, HasSubstr("replace_all: root 1"));
  EXPECT_THAT(g_last_error, HasSubstr("rank 1 instead of 2"));
  EXPECT_FALSE(graph.doubled->is_dead());
  EXPECT_FALSE(graph.sum->is_dead());
  const EqualityResult equal = structurally_equal(graph.function, original.function);
  EXPECT_TRUE(equal.equal) << equal.difference;
}

const PassDef kRecordUsersFirstPass{"test_record_users_first", "records visits", "record.dpl", {}, record_visit,
                                    VisitOrder::UsersFirst};

TEST(Driver, UsersFirstVisitsEveryNodeOnceUsersBeforeOperands) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  Node* a = b.call("exp", {x});
  Node* e = b.call("negative", {a});
  Node* m = b.call("multiply", {a, b.scalar(3.0)});
  Node* out = b.call("add", {e, m});
  b.output(out);

  g_visited.clear();
  const PassResult result = run_pass(kRecordUsersFirstPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  const std::vector<const Node*> calls = {a, e, m, out};
  ASSERT_EQ(g_visited.size(), calls.size());
  EXPECT_EQ(g_visited.front(), out);
  EXPECT_EQ(g_visited.back(), a);
  for (const Node* call : calls) EXPECT_EQ(std::count(g_visited.begin(), g_visited.end(), call), 1);
  for (size_t i = 0; i < g_visited.size(); ++i) {
    for (const Node* user : g_visited[i]->users()) {
      const auto position = std::find(g_visited.begin(), g_visited.end(), user) - g_visited.begin();
      EXPECT_LT(static_cast<size_t>(position), i) << "a user was visited after its operand";
    }
  }
}

// rule wrap [once]: nn.relu(x) => nn.relu(nn.relu(x)). Its right side contains its left side again, so without `once`
// (created_in_run) it would fire until the budget runs out.
constexpr RuleInfo kWrapRules[] = {{"wrap", "wrap.dpl:1"}};
int match_wrap_once(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::nn_relu) || rewriter.created_in_run(root)) return -1;
  Node* inner = rewriter.call(op::nn_relu, {root->operand(0)});
  Node* outer = inner != nullptr ? rewriter.call(op::nn_relu, {inner}) : nullptr;
  return outer != nullptr && rewriter.replace(root, outer) ? 0 : -1;
}
const PassDef kWrapPass{"test_wrap", "wraps relus once", "wrap.dpl", kWrapRules, match_wrap_once};

TEST(Driver, OnceRulesSkipNodesCreatedInTheRun) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  b.output(b.call("add", {b.call("nn.relu", {x}), b.call("nn.relu", {b.call("exp", {x})})}));
  const PassResult result = run_pass(kWrapPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 2u);
  for (const Node* operand : function.output()->operands()) {
    ASSERT_TRUE(operand->is_call_of(op::nn_relu));
    EXPECT_TRUE(operand->operand(0)->is_call_of(op::nn_relu));
    EXPECT_FALSE(operand->operand(0)->operand(0)->is_call_of(op::nn_relu));
  }
}

// Rules whose right-hand side is one call, rebuilt in place as dplc emits them (Rewriter::rebuild).
// rule add_self: add(x, x) => multiply(x, const(2.0))
int match_add_self_in_place(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::add) || root->operand(0) != root->operand(1)) return -1;
  Node* x = root->operand(0);
  return rewriter.proven_rebuild(root, op::multiply, {x, rewriter.scalar(2.0, x->type()->dtype())}) ? 0 : -1;
}
const PassDef kAddSelfInPlacePass{"test_add_self_in_place", "x + x => x * 2, in place", "test.dpl",
                                  std::span(kAddSelfRules, 1), match_add_self_in_place};

TEST(Rebuild, TurnsTheMatchedCallIntoTheNewOneKeepingNodeNameAndUsers) {
  ChainedAdds graph;
  const PassResult result = run_pass(kAddSelfInPlacePass, graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  Function expected("main");
  Builder b(expected);
  Node* x2 = b.call("multiply", {b.param("x", tensor_type({16, 16})), b.scalar(2.0)});
  b.output(b.call("multiply", {x2, b.scalar(2.0)}));
  const EqualityResult equal = structurally_equal(graph.function, expected);
  EXPECT_TRUE(equal.equal) << equal.difference;
  // The same nodes, now multiplies: nothing was created or removed but the shared constant.
  EXPECT_EQ(graph.function.output(), graph.x4);
  EXPECT_EQ(graph.x4->operand(0), graph.x2);
  EXPECT_TRUE(graph.x2->is_call_of(op::multiply));
  EXPECT_EQ(graph.x2->name(), "x2");
  EXPECT_EQ(graph.x->num_users(), 1u);
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(result.stats.nodes_visited, 4u) << "each rebuilt node is visited again, as a replacement would be";
  EXPECT_EQ(result.stats.nodes_removed, 0u);
  EXPECT_EQ(verify(graph.function), "");
}

// The same pass declaring `roots` as the ops its rule is rooted at, as dplc emits a pass.
constexpr PassDef add_self_rooted_at(std::string_view name, std::span<const OpId> roots) {
  return PassDef{name, "x + x => x * 2, with root ops", "test.dpl", std::span(kAddSelfRules, 1),
                 match_add_self_in_place, VisitOrder::OperandsFirst, false, roots};
}
constexpr OpId kAddRoots[] = {op::add};
constexpr OpId kExpRoots[] = {op::exp};

TEST(Rebuild, ANodeRebuiltAsAnOpNoRuleIsRootedAtIsNotVisitedAgain) {
  ChainedAdds graph;
  const PassResult result =
      run_pass(add_self_rooted_at("test_add_self_rooted", kAddRoots), graph.function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_EQ(result.stats.nodes_visited, 2u) << "the multiplies the adds became cannot match";
  EXPECT_TRUE(graph.x4->is_call_of(op::multiply));
  EXPECT_TRUE(graph.x2->is_call_of(op::multiply));
}

// Root ops that leave out the add the rule fires at: the driver says so instead of skipping later visits.
TEST(Rebuild, ARuleFiringAtAnOpTheRootOpsLeaveOutIsAnError) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({16, 16}));
  Node* x2 = b.call("add", {x, x});
  b.output(b.call("exp", {x2}));  // an exp, so that the function holds a call of a root op and is swept
  const PassResult result = run_pass(add_self_rooted_at("test_add_self_misrooted", kExpRoots), function);
  EXPECT_NE(result.error.find("pass test_add_self_misrooted: rule add_self fired at"), std::string::npos)
      << result.error;
  EXPECT_NE(result.error.find("which PassDef::root_ops does not list"), std::string::npos) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
}

// A function without a call of any root op is not swept: the same misrooted pass finds nothing to visit in the
// chained adds (with a sweep it would have fired at an add and stopped with the error above).
TEST(Driver, SkipsAFunctionHoldingNoCallOfThePasssRootOps) {
  ChainedAdds graph;
  const PassResult result = run_pass(add_self_rooted_at("test_add_self_misrooted", kExpRoots), graph.function);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.nodes_visited, 0u);
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_TRUE(graph.x4->is_call_of(op::add));
  // Told to sweep anyway, the driver visits the adds and the misrooted rule stops the pass.
  RunOptions sweep;
  sweep.sweep_every_function = true;
  const PassResult forced = run_pass(add_self_rooted_at("test_add_self_misrooted", kExpRoots), graph.function, sweep);
  EXPECT_GT(forced.stats.nodes_visited, 0u);
  EXPECT_FALSE(forced.ok());
  EXPECT_TRUE(graph.x4->is_call_of(op::add)) << "the misrooted rewrite was undone";
  // Once the function holds an exp, the pass sweeps it.
  Node* e = graph.b.call("exp", {graph.x4});
  graph.b.output(e);
  const PassResult swept = run_pass(add_self_rooted_at("test_add_self_misrooted", kExpRoots), graph.function);
  EXPECT_GT(swept.stats.nodes_visited, 0u);
  EXPECT_FALSE(swept.ok());
}

// The same with the rule's table of needed ops (RuleInfo::needs, as dplc emits it): `add(x, x)` declared as
// needing an exp as well, which the chained adds do not hold. No rule can match: the function is not swept.
constexpr OpId kAddAndExp[] = {op::add, op::exp};
constexpr RuleInfo kAddSelfNeedingExp[] = {{"add_self", "test.dpl:1", kAddAndExp}};

// `add(x, x) => multiply(x, 2)` with the given rule table (its needs), and what running it on `graph` must give
// when the table rules the function out: no visit, no rewrite.
PassDef add_self_needing(std::span<const RuleInfo> rules) {
  return PassDef{"test_add_self_needs", "x + x => x * 2, with needed ops", "test.dpl", rules,
                 match_add_self_in_place, VisitOrder::OperandsFirst, false, kAddRoots};
}

void expect_not_swept(const PassDef& pass, ChainedAdds& graph) {
  const PassResult skipped = run_pass(pass, graph.function);
  ASSERT_TRUE(skipped.ok()) << skipped.error;
  EXPECT_EQ(skipped.stats.nodes_visited, 0u);
  EXPECT_EQ(skipped.stats.rewrites, 0u);
  EXPECT_EQ(skipped.stats.functions_not_swept, 1u);
  const std::string stats = format_stats(skipped.stats, pass.rules);
  EXPECT_THAT(stats, HasSubstr(": 0 rewrites, 0 nodes visited, 0 nodes removed, ")) << stats;
  EXPECT_THAT(stats, HasSubstr(" us, 1 function not swept (no rule can match there)\n")) << stats;
  EXPECT_EQ(verify(graph.function), "");
}

TEST(Driver, SkipsAFunctionMissingAnOpEveryRuleNeeds) {
  ChainedAdds graph;
  const PassDef pass = add_self_needing(kAddSelfNeedingExp);
  expect_not_swept(pass, graph);
  EXPECT_TRUE(graph.x4->is_call_of(op::add));
  // With an exp in the function the rule may match (the table only says what a match needs): swept.
  Node* exp = graph.b.call("exp", {graph.x4});
  graph.b.output(exp);
  const PassResult swept = run_pass(pass, graph.function);
  ASSERT_TRUE(swept.ok()) << swept.error;
  EXPECT_EQ(swept.stats.rewrites, 2u);
  EXPECT_EQ(swept.stats.functions_not_swept, 0u);
  EXPECT_THAT(format_stats(swept.stats, pass.rules), Not(HasSubstr("not swept")));
  EXPECT_TRUE(graph.x4->is_call_of(op::multiply));
  // Without the exp again (the output moves past it, and compaction, as a pass leaves a function, removes it),
  // nothing is swept: the function counts its calls, it does not only remember which it once held.
  Node* sum = graph.b.call("add", {exp->operand(0), exp->operand(0)});
  graph.b.output(sum);
  graph.function.compact();
  expect_not_swept(pass, graph);
  EXPECT_TRUE(sum->is_call_of(op::add));
  EXPECT_FALSE(graph.function.holds_call_of(op::exp));
}

// A table that lists an op twice: every match holds two calls of it (`exp(exp(x))` somewhere, say).
constexpr OpId kAddAndTwoExps[] = {op::add, op::exp, op::exp};
constexpr RuleInfo kAddSelfNeedingTwoExps[] = {{"add_self", "test.dpl:1", kAddAndTwoExps}};

TEST(Driver, SkipsAFunctionHoldingFewerCallsOfAnOpThanEveryMatchHolds) {
  ChainedAdds graph;
  const PassDef pass = add_self_needing(kAddSelfNeedingTwoExps);
  Node* exp = graph.b.call("exp", {graph.x4});
  graph.b.output(exp);
  expect_not_swept(pass, graph);
  EXPECT_TRUE(graph.x4->is_call_of(op::add));
  graph.b.output(graph.b.call("exp", {exp}));
  const PassResult two_exps = run_pass(pass, graph.function);
  ASSERT_TRUE(two_exps.ok()) << two_exps.error;
  EXPECT_EQ(two_exps.stats.rewrites, 2u);
  EXPECT_TRUE(graph.x4->is_call_of(op::multiply));
}

// A matcher that reports a rule index past its table (a hand-written one, out of step with its PassDef).
int match_add_self_as_rule_3(Rewriter& rewriter, Node* root) {
  return match_add_self_in_place(rewriter, root) >= 0 ? 3 : -1;
}

TEST(Rebuild, AMatcherReportingARuleThePassDoesNotHaveIsAnError) {
  ChainedAdds graph;
  const PassDef pass{"test_add_self_rule_3", "reports rule #3", "test.dpl", std::span(kAddSelfRules, 1),
                     match_add_self_as_rule_3};
  const PassResult result = run_pass(pass, graph.function);
  EXPECT_EQ(result.error, "pass test_add_self_rule_3: the matcher reported rule #3, but the pass has 1 rule");
  EXPECT_EQ(result.stats.rewrites, 0u);
}

// rule through_log: exp(x) => add(log(x), x) — the new operand log(x) is created after the node it feeds.
constexpr RuleInfo kThroughLogRules[] = {{"through_log", "log.dpl:1"}};
int match_through_log(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  Node* x = root->operand(0);
  Node* log = rewriter.proven_call(op::log, {x});
  return log != nullptr && rewriter.proven_rebuild(root, op::add, {log, x}) ? 0 : -1;
}
const PassDef kThroughLogPass{"test_through_log", "exp(x) => log(x) + x", "log.dpl", kThroughLogRules,
                              match_through_log};

TEST(Rebuild, PutsNewOperandsBeforeTheRebuiltNode) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  Node* inner = b.call("negative", {x});
  Node* e = b.call("exp", {inner});
  e->set_name("e");
  b.output(b.call("multiply", {e, e}));
  const PassResult result = run_pass(kThroughLogPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  ASSERT_TRUE(e->is_call_of(op::add));
  EXPECT_EQ(e->name(), "e");
  const Node* log = e->operand(0);
  ASSERT_TRUE(log->is_call_of(op::log));
  EXPECT_EQ(log->operand(0), inner);
  const std::vector<Node*>& order = function.nodes();
  EXPECT_LT(std::find(order.begin(), order.end(), log), std::find(order.begin(), order.end(), e))
      << "compaction lists the new operand before the node it was created after";
  EXPECT_EQ(verify(function), "");

}

// rule abs_of_exp: negative(exp(x)) => abs(x) — the exp loses its only user.
constexpr RuleInfo kAbsRules[] = {{"abs_of_exp", "abs.dpl:1"}};
int match_abs_of_exp(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::negative) || !root->operand(0)->is_call_of(op::exp)) return -1;
  return rewriter.rebuild(root, op::abs, {root->operand(0)->operand(0)}) ? 0 : -1;
}
const PassDef kAbsPass{"test_abs", "-exp(x) => abs(x)", "abs.dpl", kAbsRules, match_abs_of_exp};

TEST(Rebuild, RemovesTheOperandsNothingUsesAnyMore) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  Node* shared = b.call("exp", {x});
  Node* only = b.call("exp", {x});
  Node* keeps = b.call("negative", {shared});
  Node* drops = b.call("negative", {only});
  b.output(b.tuple({keeps, drops, shared}));
  const PassResult result = run_pass(kAbsPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 2u);
  EXPECT_TRUE(keeps->is_call_of(op::abs));
  EXPECT_TRUE(drops->is_call_of(op::abs));
  EXPECT_FALSE(shared->is_dead()) << "the tuple still uses it";
  EXPECT_TRUE(only->is_dead());
  EXPECT_EQ(result.stats.nodes_removed, 1u);
  EXPECT_EQ(x->num_users(), 3u);  // shared, and the two abs calls
  EXPECT_EQ(verify(function), "");
}

// rule wrap: exp(x) => nn.relu(r) with r the matched exp itself: the root stays as an operand, so rebuild()
// creates the relu and replaces the root by it (dplc emits rebuild(), not proven_rebuild(), for a right-hand side
// that names the root).
constexpr RuleInfo kWrapRootRules[] = {{"wrap_root", "wrap.dpl:2"}};
int match_wrap_root(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp) || rewriter.created_in_run(root) || root->users().empty() ||
      root->users()[0]->is_call_of(op::nn_relu)) {
    return -1;
  }
  return rewriter.rebuild(root, op::nn_relu, {root}) ? 0 : -1;
}
const PassDef kWrapRootPass{"test_wrap_root", "exp(x) => relu(exp(x))", "wrap.dpl", kWrapRootRules, match_wrap_root};

TEST(Rebuild, BuildsANewCallWhereTheOperandsUseTheRoot) {
  Function function("main");
  Builder b(function);
  Node* e = b.call("exp", {b.param("x", tensor_type({8}))});
  b.output(b.call("negative", {e}));
  const PassResult result = run_pass(kWrapRootPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 1u);
  const Node* relu = function.output()->operand(0);
  ASSERT_TRUE(relu->is_call_of(op::nn_relu));
  EXPECT_EQ(relu->operand(0), e);
  EXPECT_TRUE(e->is_call_of(op::exp));
  EXPECT_EQ(verify(function), "");
}

// rule total: exp(x) => sum(x): another rank, declined by rebuild() as by replace(), the node unchanged.
constexpr RuleInfo kTotalRules[] = {{"total", "total.dpl:1"}};
int match_total(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  return outcome(rewriter, rewriter.proven_rebuild(root, op::sum, {root->operand(0)}));
}
const PassDef kTotalPass{"test_total", "exp(x) => sum(x)", "total.dpl", kTotalRules, match_total};

TEST(Rebuild, DeclinesACallOfAnotherTypeAndChangesNothing) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({4, 4}));
  Node* e = b.call("exp", {x});
  b.output(b.call("negative", {e}));
  g_last_error.clear();
  const PassResult result = run_pass(kTotalPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(result.stats.type_declines, 1u);
  EXPECT_THAT(g_last_error, HasSubstr("replace: the replacement has type"));
  EXPECT_THAT(result.stats.first_type_decline, HasSubstr("rank 0 instead of 2"));
  EXPECT_TRUE(e->is_call_of(op::exp));
  EXPECT_EQ(e->operand(0), x);
  EXPECT_EQ(x->num_users(), 1u);
  EXPECT_EQ(verify(function), "");
}

// rule matmul_self: exp(x) => exp(matmul(x, x)): the call cannot be built on a non-square x (type inference
// fails), which declines the rule and counts as a replacement that does not fit.
constexpr RuleInfo kMatmulSelfRules[] = {{"matmul_self", "matmul_self.dpl:1"}};
int match_matmul_self(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  Node* product = rewriter.call(op::matmul, {root->operand(0), root->operand(0)});
  if (product == nullptr) return -1;
  return outcome(rewriter, rewriter.proven_rebuild(root, op::exp, {product}));
}
const PassDef kMatmulSelfPass{"test_matmul_self", "exp(x) => exp(matmul(x, x))", "matmul_self.dpl",
                              kMatmulSelfRules, match_matmul_self};

TEST(Rebuild, ACallThatCannotBeBuiltCountsAsADecline) {
  Function function("main");
  Builder b(function);
  Node* x = b.param("x", tensor_type({4, 8}));
  Node* e = b.call("exp", {x});
  b.output(b.call("negative", {e}));
  const PassResult result = run_pass(kMatmulSelfPass, function, verifying());
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
  EXPECT_EQ(result.stats.type_declines, 1u);
  EXPECT_THAT(result.stats.first_type_decline, HasSubstr("matmul"));
  EXPECT_EQ(e->operand(0), x);
  EXPECT_EQ(verify(function), "");
}

// rule soft: exp(x) => nn.softmax(x, axis=A), with the attributes checked at run time (Rewriter::rebuild, what
// dplc emits for a call with attributes): axis 0 fits, a string for the int attribute is declined. The list is
// built per rewrite, or kept by the matcher and passed by reference (dplc's constant lists).
AttrValue g_softmax_axis;
constexpr RuleInfo kSoftRules[] = {{"soft", "soft.dpl:1"}};
int match_soft(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  return outcome(rewriter, rewriter.rebuild(root, op::nn_softmax, {root->operand(0)}, AttrList{g_softmax_axis}));
}
const PassDef kSoftPass{"test_soft", "exp(x) => softmax(x)", "soft.dpl", kSoftRules, match_soft};
int match_soft_kept_list(Rewriter& rewriter, Node* root) {
  if (!root->is_call_of(op::exp)) return -1;
  const AttrList kept{g_softmax_axis};
  return outcome(rewriter, rewriter.rebuild(root, op::nn_softmax, {root->operand(0)}, kept));
}
const PassDef kSoftKeptListPass{"test_soft", "exp(x) => softmax(x)", "soft.dpl", kSoftRules, match_soft_kept_list};

TEST(Rebuild, ChecksAndInternsTheAttributesItIsGiven) {
  for (const PassDef* pass : {&kSoftPass, &kSoftKeptListPass}) {
    SCOPED_TRACE(pass == &kSoftPass ? "moved list" : "list by reference");
    Function function("main");
    Builder b(function);
    Node* e = b.call("exp", {b.param("x", tensor_type({4, 4}))});
    Node* other = b.call("nn.softmax", {b.param("y", tensor_type({4, 4}))}, {{"axis", int64_t{0}}});
    b.output(b.tuple({b.call("negative", {e}), other}));

    g_softmax_axis = std::string("rows");
    g_last_error.clear();
    PassResult result = run_pass(*pass, function, verifying());
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(result.stats.rewrites, 0u);
    EXPECT_THAT(g_last_error, HasSubstr("attribute axis must be"));
    EXPECT_TRUE(e->is_call_of(op::exp));

    g_softmax_axis = int64_t{0};
    result = run_pass(*pass, function, verifying());
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(result.stats.rewrites, 1u);
    ASSERT_TRUE(e->is_call_of(op::nn_softmax));
    EXPECT_EQ(e->attr(0), AttrValue(int64_t{0}));
    EXPECT_EQ(&e->attrs(), &other->attrs()) << "equal attribute lists are one list";
    EXPECT_EQ(verify(function), "");
  }
}

const PassDef kRegistryZ{"zz_registry_test", "second", "z.dpl", {}, record_visit};
const PassDef kRegistryA{"aa_registry_test", "first", "a.dpl", {}, record_visit};
const PassRegistration kRegisterZ(kRegistryZ);
const PassRegistration kRegisterA(kRegistryA);

// --- a pass's own sweep (PassDef::sweep): the driver's loop instantiated with the matcher inlined, as dplc emits ---

// `pass` visiting in `Order`, parameters too if `VisitParams`, through the driver's loop.
template <VisitOrder Order, bool VisitParams>
PassDef visiting(PassDef pass) {
  pass.order = Order;
  pass.visit_params = VisitParams;
  return pass;
}

// The same, through its own loop.
template <MatchFn Match, VisitOrder Order = VisitOrder::OperandsFirst, bool VisitParams = false>
PassDef with_compiled_sweep(PassDef pass) {
  pass = visiting<Order, VisitParams>(pass);
  pass.sweep = &compiled_sweep<Match, Order, VisitParams>;
  return pass;
}

// What a pass did to a graph: the text it left, its statistics, its error, and the nodes it visited in order.
struct SweepOutcome {
  std::string text;
  PassStats stats;
  std::string error;
  std::vector<std::string> visited;
};

SweepOutcome run_recorded(const PassDef& pass, void (*build)(Function&), const RunOptions& options) {
  Function function("main");
  build(function);
  g_visited.clear();
  const PassResult result = run_pass(pass, function, options);
  SweepOutcome outcome{print_function(function), result.stats, result.error, {}};
  for (const Node* node : g_visited) outcome.visited.push_back(std::to_string(node->id()));
  return outcome;
}

void expect_same_outcome(const SweepOutcome& compiled, const SweepOutcome& looped) {
  EXPECT_EQ(compiled.text, looped.text);
  EXPECT_EQ(compiled.error, looped.error);
  EXPECT_EQ(compiled.stats.nodes_visited, looped.stats.nodes_visited);
  EXPECT_EQ(compiled.stats.rewrites, looped.stats.rewrites);
  EXPECT_EQ(compiled.stats.fired, looped.stats.fired);
  EXPECT_EQ(compiled.stats.nodes_removed, looped.stats.nodes_removed);
  EXPECT_EQ(compiled.visited, looped.visited);
}

// x1 = x + x, x2 = x1 + x1, ... x8: each add doubles, and the doublings fold into one multiply as they cascade.
void build_doublings(Function& function) {
  Builder b(function);
  Node* value = b.param("x", tensor_type({4, 4}));
  for (int i = 1; i <= 8; ++i) {
    value = b.call("add", {value, value});
    value->set_name("x" + std::to_string(i));
  }
  b.output(value);
}

// exp, negative and a multiply by a constant sharing one parameter, added up: every kind of node a sweep skips.
void build_mixed_kinds(Function& function) {
  Builder b(function);
  Node* x = b.param("x", tensor_type({8}));
  Node* unused = b.param("unused", tensor_type({8}));
  (void)unused;
  Node* a = b.call("exp", {x});
  b.output(b.call("add", {b.call("negative", {a}), b.call("multiply", {a, b.scalar(3.0)})}));
}

TEST(CompiledSweep, RewritesACascadeAsTheDriversLoopDoes) {
  const SweepOutcome compiled =
      run_recorded(with_compiled_sweep<match_add_self_then_fold>(kCascadePass), build_doublings, verifying());
  const SweepOutcome looped = run_recorded(kCascadePass, build_doublings, verifying());
  ASSERT_EQ(looped.error, "");
  EXPECT_GT(looped.stats.fired[1], 0u) << "the folds cascade";
  expect_same_outcome(compiled, looped);
}

TEST(CompiledSweep, StopsAtTheBudgetWithTheDriversMessage) {
  RunOptions options;
  options.budget_per_node = 4;
  auto build = [](Function& function) {
    Builder b(function);
    Node* y = b.call("multiply", {b.param("x", tensor_type({4})), b.scalar(2.0)});
    y->set_name("y");
    b.output(y);
  };
  const SweepOutcome compiled = run_recorded(with_compiled_sweep<match_undo>(kUndoPass), build, options);
  const SweepOutcome looped = run_recorded(kUndoPass, build, options);
  EXPECT_THAT(looped.error, HasSubstr("rewrite budget exhausted"));
  expect_same_outcome(compiled, looped);
}

// The recording matcher under each visit order, with and without parameter visits: the same nodes in the same order.
TEST(CompiledSweep, VisitsTheSameNodesInTheSameOrderForEachOrderAndParameterSetting) {
  using enum VisitOrder;
  const std::pair<PassDef, PassDef> variants[] = {
      {with_compiled_sweep<record_visit, OperandsFirst, false>(kRecordPass),
       visiting<OperandsFirst, false>(kRecordPass)},
      {with_compiled_sweep<record_visit, UsersFirst, false>(kRecordPass), visiting<UsersFirst, false>(kRecordPass)},
      {with_compiled_sweep<record_visit, OperandsFirst, true>(kRecordPass), visiting<OperandsFirst, true>(kRecordPass)},
      {with_compiled_sweep<record_visit, UsersFirst, true>(kRecordPass), visiting<UsersFirst, true>(kRecordPass)},
  };
  for (const auto& [compiled, looped] : variants) {
    SCOPED_TRACE(::testing::Message() << "users first: " << (looped.order == UsersFirst)
                                      << ", parameters: " << looped.visit_params);
    const SweepOutcome a = run_recorded(compiled, build_mixed_kinds, verifying());
    const SweepOutcome b = run_recorded(looped, build_mixed_kinds, verifying());
    EXPECT_EQ(b.visited.size(), looped.visit_params ? 5u : 4u) << "four calls, and the parameter in use";
    expect_same_outcome(a, b);
  }
}

TEST(PassRegistry, FindsRegisteredPassesAndListsThemSorted) {
  EXPECT_EQ(PassRegistry::find("aa_registry_test"), &kRegistryA);
  EXPECT_EQ(PassRegistry::find("zz_registry_test"), &kRegistryZ);
  EXPECT_EQ(PassRegistry::find("no_such_pass"), nullptr);
  const std::vector<const PassDef*> all = PassRegistry::all();
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                             [](const PassDef* a, const PassDef* b) { return a->name < b->name; }));
  EXPECT_EQ(std::count(all.begin(), all.end(), &kRegistryA), 1);
}

constexpr std::string_view kPipelineSteps[] = {"aa_registry_test", "zz_registry_test"};
const PipelineDef kPipelineB{"bb_pipeline_test", "both", "p.dpl", kPipelineSteps};
const PipelineDef kPipelineA{"aa_pipeline_test", "", "p.dpl", std::span(kPipelineSteps, 1)};
const PipelineRegistration kRegisterPipelineB(kPipelineB);
const PipelineRegistration kRegisterPipelineA(kPipelineA);

TEST(PassRegistry, FindsRegisteredPipelinesAndListsThemSorted) {
  EXPECT_EQ(PassRegistry::find_pipeline("bb_pipeline_test"), &kPipelineB);
  EXPECT_EQ(PassRegistry::find_pipeline("aa_pipeline_test"), &kPipelineA);
  EXPECT_EQ(PassRegistry::find_pipeline("aa_registry_test"), nullptr);  // a pass, not a pipeline
  EXPECT_EQ(PassRegistry::find("bb_pipeline_test"), nullptr);
  const std::vector<const PipelineDef*> all = PassRegistry::all_pipelines();
  const auto a = std::find(all.begin(), all.end(), &kPipelineA);
  const auto b = std::find(all.begin(), all.end(), &kPipelineB);
  ASSERT_NE(a, all.end());
  ASSERT_NE(b, all.end());
  EXPECT_LT(a, b);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                             [](const PipelineDef* x, const PipelineDef* y) { return x->name < y->name; }));
  ASSERT_EQ(kPipelineB.passes.size(), 2u);
  for (std::string_view step : kPipelineB.passes) EXPECT_NE(PassRegistry::find(step), nullptr);
}

TEST(FormatStats, PrintsAnAlignedRowPerRule) {
  PassStats stats;
  stats.pass = "test_cascade";
  stats.rule_names = {"add_self", "fold_doubling"};
  stats.fired = {12, 3};
  stats.nodes_visited = 40;
  stats.rewrites = 15;
  stats.nodes_removed = 9;
  stats.seconds = 0.0025;
  const std::string table = format_stats(stats, kAddSelfRules);
  EXPECT_THAT(table, HasSubstr("pass test_cascade: 15 rewrites, 40 nodes visited, 9 nodes removed, 2.50 ms"));
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = table.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(table.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[1], HasSubstr("rule"));
  EXPECT_THAT(lines[2], HasSubstr("add_self"));
  EXPECT_THAT(lines[2], HasSubstr("test.dpl:1"));
  EXPECT_THAT(lines[3], HasSubstr("fold_doubling"));
  // Columns line up: every row has the same length and the counts end in the same column.
  EXPECT_EQ(lines[1].size(), lines[2].size());
  EXPECT_EQ(lines[2].size(), lines[3].size());
  EXPECT_EQ(lines[2].substr(lines[2].size() - 2), "12");
  EXPECT_EQ(lines[3].back(), '3');
  EXPECT_EQ(lines[2].find("test.dpl:1"), lines[3].find("test.dpl:2"));
}

}  // namespace
}  // namespace dpl
