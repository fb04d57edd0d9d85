// Merged decision trees: building the ordered trie of a dispatch group, and printing it as C++ or as a plan.
#include "dpl/compiler/decision_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "dpl/compiler/ast.h"

namespace dpl::compiler {

void CodeWriter::line(const std::string& text) {
  if (!text.empty()) out_.append(static_cast<size_t>(indent_) * 2, ' ');
  out_ += text;
  out_ += '\n';
}

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Whether `text` mentions the identifier `name` (not as part of a longer identifier).
bool mentions(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool starts = at == 0 || !is_identifier_char(text[at - 1]);
    bool ends = at + name.size() == text.size() || !is_identifier_char(text[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// "a, b and 3 more"
std::string rule_names(const std::vector<const RuleLeaf*>& rules) {
  constexpr size_t kShown = 4;
  std::vector<std::string> names;
  for (const RuleLeaf* rule : rules) {
    if (names.empty() || names.back() != rule->rule_name) names.push_back(rule->rule_name);
  }
  if (names.size() <= kShown) return fmt::format("{}", fmt::join(names, ", "));
  return fmt::format("{}, ... {} ({} rules)", fmt::join(names.begin(), names.begin() + kShown - 1, ", "), names.back(),
                     names.size());
}

// One item of a node's children as printed: a single child, children that test the op of one subject, each a
// different built-in op (printed as one switch), or children that test the value of one constant, each against a
// different literal (printed as one switch on its position among the sorted literals).
struct ChildItem {
  enum class Kind : unsigned char { One, OpSwitch, LiteralSwitch };
  Kind kind = Kind::One;
  std::vector<const DecisionNode*> nodes;
};

// Below this many rules that differ in a literal, comparing one after the other costs less than the search.
constexpr size_t kLiteralSwitchMin = 4;

const MatchStep* literal_step(const DecisionNode* node) {
  return node->step != nullptr && node->step->is_literal_check() && std::isfinite(*node->step->literal) ? node->step
                                                                                                         : nullptr;
}

// The end of a run of at least kLiteralSwitchMin children from `begin` whose first steps compare one subject with
// different literals (no node passes two of them, so they may be tried in any order); `begin` when there is none.
size_t literal_run_end(const std::vector<std::unique_ptr<DecisionNode>>& children, size_t begin) {
  const MatchStep* first = literal_step(children[begin].get());
  if (first == nullptr) return begin;
  std::set<double> values = {*first->literal};  // 0.0 and -0.0 are one value here, as in the comparison
  size_t end = begin + 1;
  while (end < children.size()) {
    const MatchStep* step = literal_step(children[end].get());
    if (step == nullptr || step->subject != first->subject || !values.insert(*step->literal).second) break;
    ++end;
  }
  return end - begin >= kLiteralSwitchMin ? end : begin;
}

// The children of a literal switch, by their literal.
std::vector<const DecisionNode*> by_literal(std::vector<const DecisionNode*> nodes) {
  std::sort(nodes.begin(), nodes.end(),
            [](const DecisionNode* a, const DecisionNode* b) { return *a->step->literal < *b->step->literal; });
  return nodes;
}

// A run of consecutive children whose first steps check the head of one subject, each a different head, exclude
// each other: no node passes two of them, so they may be tried in any order. Those that test a built-in op become
// one switch, tried first; the others (a kind, an op declared in the .dpl file) follow one by one.
std::vector<ChildItem> child_items(const std::vector<std::unique_ptr<DecisionNode>>& children) {
  auto head_step = [](const DecisionNode* node) -> const MatchStep* {
    return node->step != nullptr && node->step->is_head_check() ? node->step : nullptr;
  };
  std::vector<ChildItem> items;
  for (size_t begin = 0; begin < children.size();) {
    if (const size_t end = literal_run_end(children, begin); end != begin) {
      ChildItem literals{ChildItem::Kind::LiteralSwitch, {}};
      for (size_t i = begin; i < end; ++i) literals.nodes.push_back(children[i].get());
      items.push_back(std::move(literals));
      begin = end;
      continue;
    }
    const MatchStep* first = head_step(children[begin].get());
    size_t end = begin + 1;
    if (first != nullptr) {
      std::set<std::string> heads = {first->head};
      while (end < children.size()) {
        const MatchStep* step = head_step(children[end].get());
        if (step == nullptr || step->subject != first->subject || !heads.insert(step->head).second) break;
        ++end;
      }
    }
    ChildItem cases{ChildItem::Kind::OpSwitch, {}};
    std::vector<ChildItem> others;
    for (size_t i = begin; i < end; ++i) {
      const DecisionNode* node = children[i].get();
      if (first != nullptr && !node->step->case_label.empty()) {
        cases.nodes.push_back(node);
      } else {
        others.push_back(ChildItem{ChildItem::Kind::One, {node}});
      }
    }
    if (cases.nodes.size() == 1) cases.kind = ChildItem::Kind::One;
    if (!cases.nodes.empty()) items.push_back(std::move(cases));
    items.insert(items.end(), others.begin(), others.end());
    begin = end;
  }
  return items;
}

// Prints matcher code. `fail` is the statement that gives up on the current subtree.
class CppPrinter {
 public:
  CppPrinter(CodeWriter& out, const DecisionTree::LeafComment& comment) : out_(out), comment_(comment) {}

  void children(const std::vector<std::unique_ptr<DecisionNode>>& nodes, const std::string& fail) {
    std::vector<ChildItem> items = child_items(nodes);
    for (size_t i = 0; i < items.size(); ++i) {
      // The last item gives up as its parent does; the others fall through to the next item.
      bool last = i + 1 == items.size();
      const std::string item_fail = last ? fail : "break;";
      if (!last) {
        out_.line("do {");
        out_.indent();
      }
      switch (items[i].kind) {
        case ChildItem::Kind::OpSwitch:
          switch_on_op(items[i], item_fail);
          break;
        case ChildItem::Kind::LiteralSwitch:
          switch_on_literal(items[i]);
          break;
        case ChildItem::Kind::One:
          subtree(*items[i].nodes[0], item_fail, /*skip_first=*/false);
          break;
      }
      if (!last) {
        out_.dedent();
        out_.line("} while (false);");
      }
    }
  }

 private:
  void switch_on_op(const ChildItem& item, const std::string& fail) {
    const std::string& subject = item.nodes[0]->step->subject;
    out_.line("if (!" + subject + "->is_call()) " + fail);
    std::vector<std::string> labels;
    for (const DecisionNode* node : item.nodes) labels.push_back(node->step->case_label);
    switch_body(subject + "->op()", item.nodes, labels);
  }

  // `switch (value)` with a case per node, labelled `labels`, each the node's subtree without its first step (the
  // case is that check); a value no case has, or a case whose subtree fails, leaves the switch.
  void switch_body(const std::string& value, const std::vector<const DecisionNode*>& nodes,
                   const std::vector<std::string>& labels) {
    out_.line("switch (" + value + ") {");
    out_.indent();
    for (size_t i = 0; i < nodes.size(); ++i) {
      out_.line("case " + labels[i] + ": {");
      out_.indent();
      subtree(*nodes[i], "break;", /*skip_first=*/true);
      out_.line("break;");
      out_.dedent();
      out_.line("}");
    }
    out_.line("default:");
    out_.indent();
    out_.line("break;");
    out_.dedent();
    out_.dedent();
    out_.line("}");
  }

  // The cases in the order of their literals; a value none of them has falls through, as a failed check would.
  void switch_on_literal(const ChildItem& item) {
    const std::string& subject = item.nodes[0]->step->subject;
    const std::vector<const DecisionNode*> cases = by_literal(item.nodes);
    std::vector<std::string> literals;
    for (const DecisionNode* node : cases) literals.push_back(format_double(*node->step->literal));
    out_.line("{");
    out_.indent();
    out_.line("static constexpr double " + subject + "_cases[] = {");
    out_.indent();
    constexpr size_t kPerLine = 12;
    for (size_t i = 0; i < literals.size(); i += kPerLine) {
      const auto end = literals.begin() + static_cast<std::ptrdiff_t>(std::min(i + kPerLine, literals.size()));
      out_.line(fmt::format("{},", fmt::join(literals.begin() + static_cast<std::ptrdiff_t>(i), end, ", ")));
    }
    out_.dedent();
    out_.line("};");
    std::vector<std::string> positions;
    for (size_t i = 0; i < cases.size(); ++i) positions.push_back(std::to_string(i));
    switch_body("dpl::literal_case(" + subject + ", " + subject + "_cases)", cases, positions);
    out_.dedent();
    out_.line("}");
  }

  // A node's chain of single children, then its branches or its rule's tail.
  void subtree(const DecisionNode& start, std::string fail, bool skip_first) {
    if (start.rules.size() == 1) {
      for (const std::string& line : comment_(*start.rules[0])) out_.line("// " + line);
    } else if (start.step != nullptr) {
      if (!comment_(*start.rules[0]).empty()) out_.line("// shared by " + rule_names(start.rules));
    }
    int loops = 0;
    const DecisionNode* node = &start;
    for (bool first = true;; first = false) {
      if (node->leaf != nullptr) {
        tail(*node->leaf, fail);
        break;
      }
      if (node->step != nullptr && !(first && skip_first)) step(*node->step, fail, loops);
      if (node->children.size() != 1) {
        children(node->children, fail);
        break;
      }
      node = node->children[0].get();
    }
    for (; loops > 0; --loops) {
      out_.dedent();
      out_.line("}");
    }
  }

  void step(const MatchStep& step, std::string& fail, int& loops) {
    switch (step.kind) {
      case MatchStep::Kind::Check:
        out_.line("if (" + step.text + ") " + fail);
        break;
      case MatchStep::Kind::Loop:
        out_.line(step.text + " {");
        out_.indent();
        ++loops;
        fail = "continue;";  // a later failure tries the other order
        break;
      case MatchStep::Kind::Define:
      case MatchStep::Kind::Statement:
      case MatchStep::Kind::Action:
        out_.line(step.text);
        break;
    }
  }

  void tail(const RuleLeaf& leaf, std::string fail) {
    int loops = 0;
    for (const MatchStep& statement : leaf.tail) {
      if (statement.kind == MatchStep::Kind::Action) {
        out_.line(fmt::format("if ({}) return {};", statement.text, leaf.rule_index));
      } else {
        step(statement, fail, loops);
      }
    }
    for (; loops > 0; --loops) {
      out_.dedent();
      out_.line("}");
    }
  }

  CodeWriter& out_;
  const DecisionTree::LeafComment& comment_;
};

// Prints the tree as indented text: shared steps under the rules that share them, branches, each rule's leaf.
class PlanPrinter {
 public:
  explicit PlanPrinter(CodeWriter& out) : out_(out) {}

  void children(const std::vector<std::unique_ptr<DecisionNode>>& nodes) {
    for (const ChildItem& item : child_items(nodes)) {
      if (item.kind == ChildItem::Kind::One) {
        subtree(*item.nodes[0], false);
        continue;
      }
      const bool on_literal = item.kind == ChildItem::Kind::LiteralSwitch;
      out_.line("switch on the " + std::string(on_literal ? "value" : "op") + " of " + item.nodes[0]->step->subject +
                ":");
      out_.indent();
      for (const DecisionNode* node : on_literal ? by_literal(item.nodes) : item.nodes) {
        out_.line("case " + (on_literal ? format_double(*node->step->literal) : node->step->case_label) + ":");
        out_.indent();
        subtree(*node, true);
        out_.dedent();
      }
      out_.dedent();
    }
  }

 private:
  void subtree(const DecisionNode& start, bool skip_first) {
    if (start.rules.size() == 1) {
      out_.line(start.rules[0]->comment[0] + ":");
    } else {
      out_.line("shared by " + rule_names(start.rules) + ":");
    }
    out_.indent();
    const DecisionNode* node = &start;
    for (bool first = true;; first = false) {
      if (node->leaf != nullptr) {
        for (const MatchStep& statement : node->leaf->tail) step(statement);
        out_.line(fmt::format("fires: rule index {}", node->leaf->rule_index));
        break;
      }
      if (node->step != nullptr && !(first && skip_first)) step(*node->step);
      if (node->children.size() != 1) {
        children(node->children);
        break;
      }
      node = node->children[0].get();
    }
    out_.dedent();
  }

  void step(const MatchStep& step) {
    switch (step.kind) {
      case MatchStep::Kind::Check:
        out_.line(step.is_head_check() ? "check " + step.subject + " is " + step.head : "fail if " + step.text);
        break;
      case MatchStep::Kind::Define:
        out_.line("let " + step.text);
        break;
      case MatchStep::Kind::Loop:
        out_.line("loop " + step.text);
        break;
      case MatchStep::Kind::Statement:
        out_.line("do " + step.text);
        break;
      case MatchStep::Kind::Action:
        out_.line("act " + step.text);
        break;
    }
  }

  CodeWriter& out_;
};

}  // namespace

void drop_unread_definitions(std::vector<MatchStep>& prefix, std::vector<MatchStep>& tail) {
  auto read_after = [&](size_t at_prefix, size_t at_tail, const std::string& name) {
    for (size_t i = at_prefix; i < prefix.size(); ++i) {
      if (mentions(prefix[i].text, name)) return true;
    }
    for (size_t i = at_tail; i < tail.size(); ++i) {
      if (mentions(tail[i].text, name)) return true;
    }
    return false;
  };
  // From the back, so that a definition read only by a dropped one goes too.
  for (size_t i = tail.size(); i-- > 0;) {
    if (tail[i].kind == MatchStep::Kind::Define && !tail[i].declares.empty() &&
        !read_after(prefix.size(), i + 1, tail[i].declares)) {
      tail.erase(tail.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  for (size_t i = prefix.size(); i-- > 0;) {
    if (prefix[i].kind == MatchStep::Kind::Define && !prefix[i].declares.empty() &&
        !read_after(i + 1, 0, prefix[i].declares)) {
      prefix.erase(prefix.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

namespace {

bool is_loop(const MatchStep& step) { return step.kind == MatchStep::Kind::Loop; }

// Value and literal checks after the structural steps, each level of loops on its own.
void place_checks(std::vector<MatchStep>& steps) {
  auto begin = steps.begin();
  while (begin != steps.end()) {
    auto end = std::find_if(begin, steps.end(), is_loop);
    std::stable_sort(begin, end, [](const MatchStep& a, const MatchStep& b) { return a.placement < b.placement; });
    begin = end == steps.end() ? end : end + 1;
  }
}

}  // namespace

bool heads_exclude(const OperandHeads& a, const OperandHeads& b) {
  if (!a.known || !b.known || a.heads.size() != b.heads.size() || a.commutative != b.commutative) return false;
  if (!a.commutative) {
    for (size_t i = 0; i < a.heads.size(); ++i) {
      if (!a.heads[i].empty() && !b.heads[i].empty() && a.heads[i] != b.heads[i]) return true;
    }
    return false;
  }
  // Two operands in either order: a node satisfies both if the heads they name fit in two operands together.
  std::map<std::string, size_t> needed;
  for (const OperandHeads* side : {&a, &b}) {
    std::map<std::string, size_t> own;
    for (const std::string& head : side->heads) {
      if (!head.empty()) ++own[head];
    }
    for (const auto& [head, count] : own) needed[head] = std::max(needed[head], count);
  }
  size_t total = 0;
  for (const auto& entry : needed) total += entry.second;
  return total > a.heads.size();
}

void DecisionTree::add(std::vector<MatchStep> prefix, RuleLeaf rule) {
  rule.position = leaves_.size();
  leaves_.push_back(std::make_unique<RuleLeaf>(std::move(rule)));
  const RuleLeaf* leaf = leaves_.back().get();
  place_checks(prefix);
  DecisionNode* node = &root_;
  node->rules.push_back(leaf);
  for (size_t at = 0; at < prefix.size(); ++at) {
    // The steps that may run next: up to the first loop (or the loop itself).
    const auto here = prefix.begin() + static_cast<std::ptrdiff_t>(at);
    const auto movable_end = std::find_if(here, prefix.end(), is_loop);
    auto find = [&](auto predicate) { return std::find_if(here, movable_end, predicate); };
    DecisionNode* next = nullptr;
    for (auto child = node->children.rbegin(); child != node->children.rend() && here != movable_end; ++child) {
      const MatchStep* other = (*child)->step;
      if (other != nullptr) {
        if (auto same = find([&](const MatchStep& step) { return step == *other; }); same != movable_end) {
          std::rotate(here, same, same + 1);
          next = child->get();
          break;
        }
      }
      // Another head on the same subject, or other heads of the root's operands: this alternative and the
      // child's rules exclude each other.
      const bool excludes =
          (other != nullptr && other->is_head_check() &&
           find([&](const MatchStep& step) {
             return step.is_head_check() && step.subject == other->subject && step.head != other->head;
           }) != movable_end) ||
          std::all_of((*child)->rules.begin(), (*child)->rules.end(), [&](const RuleLeaf* other_rule) {
            return heads_exclude(other_rule->root_heads, leaf->root_heads);
          });
      if (!excludes) break;
    }
    if (next == nullptr) {
      steps_.push_back(std::make_unique<MatchStep>(std::move(prefix[at])));
      node->children.push_back(std::make_unique<DecisionNode>());
      next = node->children.back().get();
      next->step = steps_.back().get();
    }
    node = next;
    node->rules.push_back(leaf);
  }
  node->children.push_back(std::make_unique<DecisionNode>());
  node->children.back()->leaf = leaf;
  node->children.back()->rules.push_back(leaf);
}

void DecisionTree::print_cpp(CodeWriter& out, const LeafComment& comment) const {
  CppPrinter(out, comment).children(root_.children, "return -1;");
}

void DecisionTree::print_plan(CodeWriter& out) const { PlanPrinter(out).children(root_.children); }

}  // namespace dpl::compiler
