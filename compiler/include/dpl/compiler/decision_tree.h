// Merged decision trees: a pass's rule alternatives as an ordered trie of match steps, printed as C++ or as a plan.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dpl::compiler {

// Lines with indentation.
class CodeWriter {
 public:
  void line(const std::string& text);
  void blank() { out_ += '\n'; }
  void text(const std::string& lines) { out_ += lines; }  // already indented
  void indent() { ++indent_; }
  void dedent() { --indent_; }
  int indent_level() const { return indent_; }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
  int indent_ = 0;
};

// One statement of a rule alternative's matcher. How a failed check leaves (`return -1;`, `break;`, `continue;`)
// is decided when the tree is printed.
struct MatchStep {
  enum class Kind : unsigned char {
    Check,      // `text` is a failure condition
    Define,     // `text` is a declaration without side effects
    Loop,       // `text` is the `for (...)` header trying both operand orders of a commutative call
    Statement,  // a statement of a rule's tail (it may build nodes)
    Action,     // `text` is the rule's final action: an expression that is true when the rule fired
  };
  // Where a check may go among an alternative's matching steps. A structural check (a head, an operand count)
  // stays where it is: later steps read operands it guards. Value checks (attributes, types, repeated names) and
  // then literal checks (a constant's value) move after the structural steps of their loop level, so that rules
  // that differ in a value share their structure.
  enum class Placement : unsigned char { Structure, Value, Literal };

  MatchStep(Kind kind, std::string text, std::string declares = "")
      : kind(kind), text(std::move(text)), declares(std::move(declares)) {}

  Kind kind;
  Placement placement = Placement::Structure;
  std::string text;
  std::string declares;  // Define: the name it declares (a definition nothing reads is dropped)
  // A head check (the node is a call of one op, or a node of one kind): the node's expression and its head.
  // Head checks of one subject with different heads exclude each other.
  std::string subject;
  std::string head;        // "dpl::op::matmul", "dpl::NodeKind::Constant"
  std::string case_label;  // a built-in op's constant: the check can be a `case` of a switch on the op
  // A literal check (`scalar1 != 1.5`: a constant's value): `subject` is the local holding the value. Literal
  // checks of one subject with different values exclude each other too.
  std::optional<double> literal;

  bool is_head_check() const { return kind == Kind::Check && !head.empty(); }
  bool is_literal_check() const { return kind == Kind::Check && literal.has_value(); }
  bool operator==(const MatchStep& other) const { return kind == other.kind && text == other.text; }
};

// What a rule alternative does once its matching steps have passed: its comment, its own statements (aliases,
// guard, right-hand side) and the index of the rule the pass matcher returns when it fires.
// The heads a rule requires of its root's operands, where the emitter knows them: an op or node kind per operand
// ("" for an operand it does not constrain); for a commutative root, in either order.
struct OperandHeads {
  bool known = false;
  bool commutative = false;
  std::vector<std::string> heads;
};
// Whether no node can have operands with the heads both require (a node's operand has one head).
bool heads_exclude(const OperandHeads& a, const OperandHeads& b);

struct RuleLeaf {
  size_t rule_index = 0;
  size_t position = 0;  // the order in which it was added to its tree
  std::string rule_name;
  std::vector<std::string> comment;  // lines, each without the leading `// `
  std::vector<MatchStep> tail;       // ends with the Action
  OperandHeads root_heads;           // lets the rule pass over earlier rules it excludes (DecisionTree::add)
};

struct DecisionNode {
  const MatchStep* step = nullptr;  // null at the root and at leaves
  const RuleLeaf* leaf = nullptr;   // set at leaves
  std::vector<std::unique_ptr<DecisionNode>> children;
  std::vector<const RuleLeaf*> rules;  // the alternatives below, in the order they are tried
};

// Removes the definitions that no later step reads (a node that only needed its head checked).
void drop_unread_definitions(std::vector<MatchStep>& prefix, std::vector<MatchStep>& tail);

// The ordered trie of one dispatch group (the alternatives of one root op). Alternatives are added in rule order;
// one shares a prefix with the last child at each level only, so the order in which rules are tried is kept.
// A child whose first step is a head check may be passed over by an alternative with another head on the same
// subject, and a child whose rules all require other heads of the root's operands (heads_exclude()) by any
// alternative: no node matches both, so their order does not matter. Loop steps are never shared: sharing a loop
// would interleave rules across operand orders. The matching steps are free of side effects, so an alternative's
// steps before its first loop may run in another order: value checks after the structure (MatchStep::Placement),
// and a step the last child starts with first, when the alternative has it too (a step some rule runs right after
// the shared prefix reads only what that prefix guarantees).
class DecisionTree {
 public:
  void add(std::vector<MatchStep> prefix, RuleLeaf leaf);
  const DecisionNode& root() const { return root_; }
  size_t size() const { return root_.rules.size(); }

  // The body of `int f(dpl::Rewriter& rewriter, dpl::Node* root)`: returns the index of the rule that fired, or
  // falls through (the caller writes the final `return -1;`). `comment` gives the comment lines of each rule.
  using LeafComment = std::function<std::vector<std::string>(const RuleLeaf&)>;
  void print_cpp(CodeWriter& out, const LeafComment& comment) const;
  // The tree as indented text.
  void print_plan(CodeWriter& out) const;

 private:
  std::vector<std::unique_ptr<MatchStep>> steps_;
  std::vector<std::unique_ptr<RuleLeaf>> leaves_;
  DecisionNode root_;
};

}  // namespace dpl::compiler
