// Semantic checks of a parsed .dpl file: ops and their signatures from the op registry, attribute names and
// kinds, variable binding (left before right, same kind everywhere, bound in every alternative), unique names.
#include "dpl/compiler/sema.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "dpl/compiler/emit_cpp.h"
#include "dpl/compiler/never_match.h"
#include "dpl/compiler/op_decls.h"
#include "dpl/compiler/overlap.h"
#include "dpl/compiler/rhs_types.h"
#include "dpl/compiler/termination.h"
#include "dpl/text/tvmscript.h"

namespace dpl::compiler {

namespace {

// Edit distance counting insertions, deletions, substitutions and swaps of adjacent characters.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The closest of `candidates` to `name`, if it is close enough to be a plausible typo.
std::string nearest(std::string_view name, const std::vector<std::string>& candidates) {
  // At most one edit per three characters, and fewer edits than the name has characters.
  size_t allowed = std::max<size_t>(1, name.size() / 3);
  if (allowed >= name.size()) allowed = name.size() == 0 ? 0 : name.size() - 1;
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string_view strip_op_prefix(std::string_view name) {
  for (std::string_view prefix : {"R.", "relax."}) {
    if (name.starts_with(prefix)) return name.substr(prefix.size());
  }
  return name;
}

std::string value_kind_name(const AttrValue& value) {
  return std::visit(Overloaded{
                        [](std::monostate) -> std::string { return "None"; },
                        [](bool) -> std::string { return "a bool"; },
                        [](int64_t) -> std::string { return "an int"; },
                        [](double) -> std::string { return "a float"; },
                        [](const std::string&) -> std::string { return "a string"; },
                        [](const std::vector<int64_t>&) -> std::string { return "an int list"; },
                    },
                    value);
}

std::string plural(int count, const char* noun) { return std::to_string(count) + " " + noun + (count == 1 ? "" : "s"); }

// Each alternative of a rule becomes its own matcher function; this bounds the generated code.
constexpr size_t kMaxAlternatives = 256;

// The builtin of computed values that turns part sizes into split points (docs/language.md, group rules).
constexpr std::string_view kSplitIndices = "split_indices";

enum class VarKind { Value, Op, Attr, Dim };

const char* var_kind_name(VarKind kind) {
  switch (kind) {
    case VarKind::Value:
      return "a value";
    case VarKind::Op:
      return "an op";
    case VarKind::Attr:
      return "an attribute value";
    case VarKind::Dim:
      return "a dimension";
  }
  return "";
}

struct Variable {
  VarKind kind = VarKind::Value;
  SourceLoc loc;                       // where it is first bound
  std::vector<OpId> ops;               // Op: the ops it may stand for
  AttrKind attr_kind = AttrKind::Int;  // Attr: the kind of the captured attribute
  bool partial = false;                // bound in only some alternatives of a `|`
  bool poisoned = false;               // its binding had an error: uses are not checked further
  int uses = 0;                        // references after the binding (left or right)
  bool let = false;                    // bound by a `let` on the right
  bool list = false;                   // first bound inside a group root: one value per member outside it
  bool rest = false;                   // bound by `xs...`: a list of operands (or fields)
  std::optional<OpId> call_op;         // Value bound to a call of one op (`c: nn.conv2d(...)`): what `**c` copies
  std::string call_op_var;             // Value bound to a call binding an op variable (`c: (op: a | b)(...)`)
};

// Ordered, so that warnings come out in name order, deterministically.
using Scope = std::map<std::string, Variable>;

class Checker {
 public:
  Checker(AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry)
      : file_(file), diags_(diags), registry_(registry) {}

  void run() {
    declare_externs();
    std::map<std::string, const Pass*> passes;
    std::map<std::string, SourceLoc> rules;
    for (Pass& pass : file_.passes) {
      auto [it, inserted] = passes.emplace(pass.name, &pass);
      if (!inserted) {
        const Pass& first = *it->second;
        Diagnostic& diag = diags_.error(pass.name_loc, "duplicate pass name '" + pass.name + "'");
        DiagnosticEngine::add_note(diag, first.name_loc, "first defined here");
        if (pass.implicit || first.implicit) {
          DiagnosticEngine::add_note(diag, (pass.implicit ? pass : first).name_loc,
                                     "rules outside a pass block form the pass named after the file");
        }
      }
      for (Rule& rule : pass.rules) {
        auto [first, fresh] = rules.emplace(rule.name, rule.name_loc);
        if (!fresh) {
          Diagnostic& diag = diags_.error(rule.name_loc, std::string(rule.kind == Rule::Kind::Partition
                                                                         ? "duplicate partition name '"
                                                                         : "duplicate rule name '") +
                                                             rule.name + "'");
          DiagnosticEngine::add_note(diag, first->second, "first defined here");
        }
        check_rule(rule);
      }
      check_partition_pass(pass);
    }
    check_pipelines(passes);
    check_tests(passes);
  }

 private:
  // A partition pass visits users first (the largest match wins), a rewrite pass operands first: one pass cannot
  // do both.
  void check_partition_pass(const Pass& pass) {
    const Rule* first_partition = nullptr;
    const Rule* first_rewrite = nullptr;
    for (const Rule& rule : pass.rules) {
      const Rule*& first = rule.kind == Rule::Kind::Partition ? first_partition : first_rewrite;
      if (first == nullptr) first = &rule;
    }
    if (first_partition == nullptr || first_rewrite == nullptr) return;
    const Rule& later = first_partition->name_loc.line > first_rewrite->name_loc.line ? *first_partition
                                                                                        : *first_rewrite;
    const Rule& earlier = &later == first_partition ? *first_rewrite : *first_partition;
    Diagnostic& diag = diags_.error(
        later.name_loc, "pass '" + pass.name +
                            "' mixes partitions and rewrite rules; a partition pass visits users first, a rewrite "
                            "pass operands first: put them in separate passes (a pipeline can run both)");
    DiagnosticEngine::add_note(diag, earlier.name_loc,
                               earlier.kind == Rule::Kind::Partition ? "the first partition is here"
                                                                     : "the first rewrite rule is here");
  }

  // `pipeline NAME = a, b;`: a new name (neither a pass nor another pipeline) over passes of this file.
  void check_pipelines(const std::map<std::string, const Pass*>& passes) {
    std::map<std::string, const PipelineDecl*> pipelines;
    std::vector<std::string> pass_names;
    for (const auto& [name, pass] : passes) pass_names.push_back(name);
    for (const PipelineDecl& pipeline : file_.pipelines) {
      if (auto pass = passes.find(pipeline.name); pass != passes.end()) {
        Diagnostic& diag = diags_.error(pipeline.name_loc, "pipeline '" + pipeline.name +
                                                               "' has the name of a pass; 'dpl-opt -p " +
                                                               pipeline.name + "' could mean either");
        DiagnosticEngine::add_note(diag, pass->second->name_loc, "the pass is here");
      }
      if (auto [first, fresh] = pipelines.emplace(pipeline.name, &pipeline); !fresh) {
        Diagnostic& diag = diags_.error(pipeline.name_loc, "duplicate pipeline name '" + pipeline.name + "'");
        DiagnosticEngine::add_note(diag, first->second->name_loc, "first defined here");
      }
      for (size_t i = 0; i < pipeline.passes.size(); ++i) {
        const std::string& name = pipeline.passes[i];
        if (passes.count(name) != 0) continue;
        std::string message = "unknown pass '" + name + "' in pipeline '" + pipeline.name + "'";
        if (std::string suggestion = nearest(name, pass_names); !suggestion.empty()) {
          message += "; did you mean '" + suggestion + "'?";
        }
        Diagnostic& diag = diags_.error(pipeline.pass_locs[i], message);
        std::string known;
        for (const std::string& pass_name : pass_names) known += (known.empty() ? "" : ", ") + pass_name;
        DiagnosticEngine::add_note(diag, pipeline.name_loc,
                                   known.empty() ? "a pipeline runs passes of its own file, and this file has none"
                                                 : "a pipeline runs passes of its own file: " + known);
      }
    }
  }

  // `test NAME { ... }`: unique names, a pass or pipeline of this file, IR files that exist and read.
  void check_tests(const std::map<std::string, const Pass*>& passes) {
    std::map<std::string, SourceLoc> names;
    std::vector<std::string> pass_names;
    for (const auto& [name, pass] : passes) pass_names.push_back(name);
    for (RuleTest& test : file_.tests) {
      if (auto [first, fresh] = names.emplace(test.name, test.name_loc); !fresh) {
        Diagnostic& diag = diags_.error(test.name_loc, "duplicate test name '" + test.name + "'");
        DiagnosticEngine::add_note(diag, first->second, "first defined here");
      }
      check_test_target(test, pass_names);
      test.input_path = read_test_file(test.input, test.input_loc);
      if (!test.expect_unchanged) test.expect_path = read_test_file(test.expect, test.expect_loc);
    }
  }

  void check_test_target(const RuleTest& test, const std::vector<std::string>& pass_names) {
    bool is_pass = std::find(pass_names.begin(), pass_names.end(), test.target) != pass_names.end();
    bool is_pipeline = std::any_of(file_.pipelines.begin(), file_.pipelines.end(),
                                   [&](const PipelineDecl& pipeline) { return pipeline.name == test.target; });
    if (test.target_is_pipeline ? is_pipeline : is_pass) return;
    if (is_pass || is_pipeline) {
      diags_.error(test.target_loc, "'" + test.target + "' is a " + (is_pass ? "pass" : "pipeline") + ": write '" +
                                        (is_pass ? "pass " : "pipeline ") + test.target + ";'");
      return;
    }
    std::vector<std::string> candidates = pass_names;
    for (const PipelineDecl& pipeline : file_.pipelines) candidates.push_back(pipeline.name);
    std::string message = std::string("unknown ") + (test.target_is_pipeline ? "pipeline" : "pass") + " '" +
                          test.target + "' in test '" + test.name + "'";
    if (std::string suggestion = nearest(test.target, candidates); !suggestion.empty()) {
      message += "; did you mean '" + suggestion + "'?";
    }
    diags_.error(test.target_loc, message);
  }

  // Reads the IR file a test names (relative to the .dpl file) and returns its absolute path; a file that is
  // missing or does not read as IR is an error at the string.
  std::string read_test_file(const std::string& written, SourceLoc loc) {
    namespace fs = std::filesystem;
    fs::path path = fs::absolute(fs::path(file_.source->path()).parent_path() / written).lexically_normal();
    std::error_code code;
    std::string error;
    std::unique_ptr<SourceFile> source =
        fs::is_regular_file(path, code) ? SourceFile::load(path.string(), error) : nullptr;
    if (source == nullptr) {
      diags_.error(loc, "cannot read '" + written + "': " + (error.empty() ? "no such file" : error));
      return path.string();
    }
    DiagnosticEngine ir_diags;
    if (read_module(*source, ir_diags) == nullptr) {
      Diagnostic& diag = diags_.error(loc, "'" + written + "' does not read as IR");
      // The reader's first errors show where; the rest would bury the test's own diagnostics.
      constexpr size_t kShown = 3;
      for (size_t i = 0; i < ir_diags.diagnostics().size() && i < kShown; ++i) {
        const Diagnostic& problem = ir_diags.diagnostics()[i];
        DiagnosticEngine::add_note(diag, problem.loc, problem.message);
      }
      if (ir_diags.diagnostics().size() > kShown) {
        DiagnosticEngine::add_note(diag, loc, std::to_string(ir_diags.diagnostics().size() - kShown) +
                                                  " more problems in '" + written + "'");
      }
    }
    file_.test_files.push_back(std::move(source));
    return path.string();
  }

  // Extern names are unique and are not op names (a call would be ambiguous).
  void declare_externs() {
    for (const ExternDecl& decl : file_.externs) {
      if (is_cpp_keyword(decl.name)) {
        diags_.error(decl.name_loc, "extern name '" + decl.name + "' is a C++ keyword, so no function can have it");
        continue;
      }
      if (registry_.find(strip_op_prefix(decl.name)) != nullptr) {
        diags_.error(decl.name_loc, "extern " + std::string(extern_kind_name(decl)) + " '" + decl.name +
                                        "' has the name of an op; choose another name");
        continue;
      }
      auto [it, fresh] = externs_.emplace(decl.name, &decl);
      if (!fresh) {
        Diagnostic& diag = diags_.error(decl.name_loc, "duplicate extern name '" + decl.name + "'");
        DiagnosticEngine::add_note(diag, it->second->name_loc, "first declared here");
      }
    }
  }

  static const char* extern_kind_name(const ExternDecl& decl) {
    return decl.kind == ExternDecl::Kind::Predicate ? "predicate" : "rewriter";
  }

  const ExternDecl* find_extern(const std::string& name, const Scope& scope) const {
    if (scope.count(name) != 0) return nullptr;  // an op variable of that name
    auto it = externs_.find(name);
    return it == externs_.end() ? nullptr : it->second;
  }

  // A call of an extern: operands are graph values, one per parameter, and the kind fits the place.
  // Returns false after reporting an error.
  bool check_extern_call(CallExpr& call, const ExternDecl& decl, ExternDecl::Kind wanted, SourceLoc loc,
                         Scope& scope) {
    size_t errors_before = diags_.error_count();
    call.native = &decl;
    if (decl.kind != wanted) {
      Diagnostic& diag = diags_.error(
          call.op.loc, wanted == ExternDecl::Kind::Predicate
                           ? "'" + decl.name + "' is an extern rewriter; a guard can call only extern predicates"
                           : "'" + decl.name + "' is an extern predicate; it belongs in a guard ('where " +
                                 decl.name + "(...)')");
      DiagnosticEngine::add_note(diag, decl.name_loc, "declared here");
    }
    if (call.operands.size() != decl.params.size()) {
      Diagnostic& diag = diags_.error(loc, "extern " + std::string(extern_kind_name(decl)) + " '" + decl.name +
                                               "' takes " + plural(static_cast<int>(decl.params.size()), "operand") +
                                               ", but " + std::to_string(call.operands.size()) +
                                               (call.operands.size() == 1 ? " is" : " are") + " given");
      DiagnosticEngine::add_note(diag, decl.name_loc, "declared here");
    }
    if (!call.attrs.empty()) diags_.error(call.attrs[0].loc, "a call of an extern takes no attributes");
    if (call.attrs_from) {
      diags_.error(call.attrs_from->loc, "a call of an extern takes no attributes; '**" + call.attrs_from->name +
                                             "' copies them into a new op call");
    }
    for (ExprPtr& operand : call.operands) {
      if (wanted == ExternDecl::Kind::Predicate) {
        const auto* var = std::get_if<VarExpr>(&operand->node);
        if (var == nullptr) {
          diags_.error(operand->loc, "an extern predicate takes names bound on the left-hand side");
          continue;
        }
        if (auto it = scope.find(var->name); it != scope.end() && it->second.let) {
          report_let_in_computed(var->name, operand->loc, it->second);
          continue;
        }
      }
      check_value_expr(*operand, scope);
    }
    return diags_.error_count() == errors_before;
  }

  // Guards and computed attribute values are evaluated before anything is built.
  void report_let_in_computed(const std::string& name, SourceLoc loc, Variable& variable) {
    ++variable.uses;
    Diagnostic& diag = diags_.error(loc, "'" + name + "' is built by a let; guards and attribute values read only "
                                                     "names bound on the left-hand side");
    DiagnosticEngine::add_note(diag, variable.loc, "bound here");
  }

  // --- rules and patterns ---

  void check_rule(Rule& rule) {
    member_only_.clear();
    if (rule.kind == Rule::Kind::MultiRoot) return check_multi_rule(rule);
    size_t errors_before = diags_.error_count();
    const bool partition = rule.kind == Rule::Kind::Partition;
    if (partition && rule.name.empty()) diags_.error(rule.name_loc, "a partition needs a composite name");
    Scope scope;
    check_pattern(*rule.lhs, scope);
    check_dimension_expressions(scope);
    if (!root_is_call(*rule.lhs) && (partition || !root_is_tuple_item(*rule.lhs))) {
      diags_.error(rule.lhs->loc, partition ? "the pattern of a partition must be an op call"
                                            : "the left-hand side of a rule must be an op call or a tuple item "
                                              "(t[0])");
    } else if (count_alternatives(*rule.lhs, kMaxAlternatives) > kMaxAlternatives) {
      diags_.error(rule.lhs->loc, "the pattern has more than " + std::to_string(kMaxAlternatives) +
                                      " alternatives once '|' and '?' are expanded; split the rule");
    }
    if (rule.guard != nullptr) check_guard(*rule.guard, scope);
    // A partition has no right-hand side: its names are the composite function's inputs, used or not.
    if (partition) return;
    for (LetBinding& let : rule.lets) check_let(let, scope);
    whole_rhs_ = rule.rhs.get();
    check_value_expr(*rule.rhs, scope);
    whole_rhs_ = nullptr;
    if (diags_.error_count() > errors_before) return;  // unused names are noise next to an error
    warn_unused(scope);
  }

  void warn_unused(const Scope& scope) {
    for (const auto& [name, variable] : scope) {
      if (variable.let && variable.uses == 0) {
        diags_.warning(variable.loc, "'" + name + "' is built by a let but never used");
        continue;
      }
      if (variable.uses == 0 && !name.starts_with("_") && !variable.partial) {
        diags_.warning(variable.loc, "'" + name + "' is bound but never used" +
                                         (variable.kind == VarKind::Value ? "; write _ to match any value" : ""));
      }
    }
  }

  // Every way the pattern can match has a tuple item at the root: the rule is tried at tuple items.
  static bool root_is_tuple_item(const Pattern& pattern) {
    return std::visit(Overloaded{
                          [&](const BindPattern& p) { return root_is_tuple_item(*p.inner); },
                          [&](const ItemPattern&) { return true; },
                          [&](const AltPattern& p) {
                            return std::all_of(p.alternatives.begin(), p.alternatives.end(),
                                               [&](const PatternPtr& a) { return root_is_tuple_item(*a); });
                          },
                          [](const auto&) { return false; },
                      },
                      pattern.node);
  }

  // Every way the pattern can match has an op call at the root (what the matcher dispatches on).
  bool root_is_call(const Pattern& pattern) const {
    return std::visit(Overloaded{
                          [&](const BindPattern& p) { return root_is_call(*p.inner); },
                          [&](const DominatorPattern& p) { return root_is_call(*p.child); },
                          [&](const CallPattern& p) { return !p.optional; },
                          [&](const AltPattern& p) {
                            return std::all_of(p.alternatives.begin(), p.alternatives.end(),
                                               [&](const PatternPtr& a) { return root_is_call(*a); });
                          },
                          [](const auto&) { return false; },
                      },
                      pattern.node);
  }

  // Binds `name` on first use; a later use must be of the same kind.
  void bind_or_use(const std::string& name, SourceLoc loc, Variable variable, Scope& scope) {
    auto it = scope.find(name);
    if (it == scope.end()) {
      if (report_member_only(name, loc)) return;
      variable.loc = loc;
      scope.emplace(name, std::move(variable));
      return;
    }
    Variable& existing = it->second;
    if (existing.poisoned || variable.poisoned) {
      ++existing.uses;
      return;
    }
    if (existing.partial) {
      Diagnostic& diag = diags_.error(loc, "'" + name + "' is bound in only some alternatives of a '|'");
      DiagnosticEngine::add_note(diag, existing.loc, "bound here");
      return;
    }
    if (existing.list) {
      report_list_in_pattern(name, loc, existing);
      return;
    }
    if (variable.rest) {
      Diagnostic& diag = diags_.error(loc, "'" + name + "...' binds a list of operands, but '" + name + "' is " +
                                               var_kind_name(existing.kind) + " bound already");
      DiagnosticEngine::add_note(diag, existing.loc, "first bound here");
      return;
    }
    if (existing.kind != variable.kind) {
      Diagnostic& diag = diags_.error(loc, "'" + name + "' is " + var_kind_name(variable.kind) + " here, but " +
                                               var_kind_name(existing.kind) + " where it was bound");
      DiagnosticEngine::add_note(diag, existing.loc, "first bound here");
      return;
    }
    if (existing.kind == VarKind::Attr && existing.attr_kind != variable.attr_kind) {
      Diagnostic& diag =
          diags_.error(loc, "'" + name + "' captures a " + std::string(attr_kind_name(variable.attr_kind)) +
                                " attribute here, but a " + std::string(attr_kind_name(existing.attr_kind)) +
                                " one where it was bound");
      DiagnosticEngine::add_note(diag, existing.loc, "first bound here");
      return;
    }
    ++existing.uses;
  }

  // `name: pattern` (or a root `name: pattern;`): binds the name, checks the pattern, and notes the op when the
  // pattern is a call of one op, whose attributes `**name` may then copy.
  void bind_and_check(const std::string& name, SourceLoc loc, Variable variable, Pattern& pattern, Scope& scope) {
    const bool fresh = scope.count(name) == 0;
    bind_or_use(name, loc, std::move(variable), scope);
    check_pattern(pattern, scope);
    auto it = scope.find(name);
    if (!fresh || it == scope.end()) return;
    it->second.call_op = single_call_op(pattern);
    const Pattern* inner = &pattern;
    while (const auto* bind = std::get_if<BindPattern>(&inner->node)) inner = bind->inner.get();
    if (const auto* call = std::get_if<CallPattern>(&inner->node); call != nullptr && !call->optional) {
      it->second.call_op_var = call->op_var;
    }
  }

  // The op of every call `pattern` matches, when that is one op: `nn.conv2d(...)`, alternatives of such calls.
  static std::optional<OpId> single_call_op(const Pattern& pattern) {
    if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return single_call_op(*bind->inner);
    if (const auto* call = std::get_if<CallPattern>(&pattern.node)) {
      if (call->ops.size() != 1 || call->optional || call->composite) return std::nullopt;
      return call->ops[0].id;
    }
    const auto* alt = std::get_if<AltPattern>(&pattern.node);
    if (alt == nullptr || alt->alternatives.empty()) return std::nullopt;
    std::optional<OpId> first = single_call_op(*alt->alternatives[0]);
    for (const PatternPtr& alternative : alt->alternatives) {
      if (single_call_op(*alternative) != first) return std::nullopt;
    }
    return first;
  }

  void check_pattern(Pattern& pattern, Scope& scope) {
    std::visit(Overloaded{
                   [](WildcardPattern&) {},
                   [](ConstPattern&) {},
                   [](ParamPattern&) {},
                   [&](VarPattern& p) { bind_or_use(p.name, pattern.loc, Variable{}, scope); },
                   [&](BindPattern& p) { bind_and_check(p.name, p.name_loc, Variable{}, *p.inner, scope); },
                   [&](CallPattern& p) { check_call_pattern(p, pattern.loc, scope); },
                   [&](AltPattern& p) { check_alternatives(p, scope); },
                   [&](ItemPattern& p) { check_pattern(*p.tuple, scope); },
                   [&](TuplePattern& p) {
                     for (PatternPtr& field : p.fields) check_pattern(*field, scope);
                     bind_rest(p.rest, scope);
                   },
                   [&](DominatorPattern& p) { check_dominator(p, scope); },
                   [&](TypePattern& p) { check_type_pattern(p, scope); },
               },
               pattern.node);
  }

  // Binds (or uses) the dimension variables of a type pattern; queues its dimension expressions.
  void check_type_pattern(TypePattern& type, Scope& scope) {
    if (!type.shape) return;
    for (DimPattern& dim : *type.shape) {
      if (!dim.binds()) continue;
      Variable variable;
      variable.kind = VarKind::Dim;
      if (dim.kind == DimPattern::Kind::Expr) {
        variable.uses = 1;  // read by its check
        dimension_checks_.push_back(DimensionCheck{dim.check.get(), {}});
      }
      bind_or_use(dim.name, dim.loc, std::move(variable), scope);
    }
  }

  // `xs...`: a list of values (the operands or fields after the written ones).
  void bind_rest(const std::optional<RestPattern>& rest, Scope& scope) {
    if (!rest || rest->name.empty()) return;
    Variable variable;
    variable.list = true;
    variable.rest = true;
    bind_or_use(rest->name, rest->loc, std::move(variable), scope);
  }

  // `dominates(parent, path, child)`: the parent and the child are op calls (the walk stops at the parent's ops),
  // the path names ops or op classes.
  void check_dominator(DominatorPattern& dominator, Scope& scope) {
    check_pattern(*dominator.child, scope);
    check_pattern(*dominator.parent, scope);
    for (const PatternPtr* part : {&dominator.parent, &dominator.child}) {
      const Pattern* inner = part->get();
      while (const auto* bind = std::get_if<BindPattern>(&inner->node)) inner = bind->inner.get();
      const auto* call = std::get_if<CallPattern>(&inner->node);
      if (call == nullptr || call->optional || call->composite) {
        diags_.error((*part)->loc, std::string("the ") + (part == &dominator.parent ? "parent" : "child") +
                                       " of a dominator pattern must be an op call (not optional)");
      }
    }
    dominator.path_ops.clear();
    for (OpName& op : dominator.path) {
      if (std::optional<OpTrait> trait = op_class(op.text)) {
        for (size_t id = 0; id < registry_.size(); ++id) {
          if (registry_.get(static_cast<OpId>(id)).has(*trait)) dominator.path_ops.push_back(static_cast<OpId>(id));
        }
      } else if (registry_.find(op.text) == nullptr && !nearest(op.text, kOpClassNames).empty()) {
        diags_.error(op.loc, "unknown op class '" + op.text + "'; did you mean '" + nearest(op.text, kOpClassNames) +
                                 "'?");
      } else if (resolve_op(op)) {
        dominator.path_ops.push_back(op.id);
      }
    }
    std::sort(dominator.path_ops.begin(), dominator.path_ops.end());
    dominator.path_ops.erase(std::unique(dominator.path_ops.begin(), dominator.path_ops.end()),
                             dominator.path_ops.end());
  }

  // Reports what is wrong with the call but still binds every name in it, so that one mistake does not
  // cascade into "not bound" errors further on.
  void check_call_pattern(CallPattern& call, SourceLoc loc, Scope& scope) {
    if (call.composite) {  // any number of operands: the composite function's parameters
      for (PatternPtr& operand : call.operands) check_pattern(*operand, scope);
      bind_rest(call.rest, scope);  // `composite("c")(a, xs...)`: further arguments, as for an op
      if (call.result_type) check_type_pattern(*call.result_type, scope);
      return;
    }
    expand_op_classes(call, loc);
    bool ops_ok = !call.ops.empty();
    for (OpName& op : call.ops) ops_ok = resolve_op(op) && ops_ok;
    bool op_var_ok = !call.op_var.empty();
    if (call.optional) {
      if (call.operands.size() != 1 || call.rest) {
        diags_.error(loc, "an optional op ('?') wraps exactly one operand, the value matched when the op is absent");
      }
      if (!call.op_var.empty()) {
        diags_.error(call.op_var_loc, "an optional op cannot bind an op variable: the op may be absent");
        op_var_ok = false;
      }
    }
    if (op_var_ok) {
      Variable variable;
      variable.kind = VarKind::Op;
      variable.poisoned = !ops_ok;
      if (ops_ok) {
        for (const OpName& op : call.ops) variable.ops.push_back(op.id);
      }
      bind_or_use(call.op_var, call.op_var_loc, std::move(variable), scope);
    }
    if (ops_ok) {
      for (const OpName& op : call.ops) {
        check_arity(op, static_cast<int>(call.operands.size()), loc, call.rest.has_value());
      }
    }
    std::set<std::string> seen;
    for (PatternAttr& attr : call.attrs) {
      if (!seen.insert(attr.name).second) {
        diags_.error(attr.loc, "attribute '" + attr.name + "' is given twice");
        continue;
      }
      std::optional<AttrKind> kind = ops_ok ? attribute_kind(call.ops, attr.name, attr.loc) : std::nullopt;
      if (attr.literal) {
        if (kind) check_literal_kind(*attr.literal, *kind, call.ops[0], attr);
      } else {
        Variable variable;
        variable.kind = VarKind::Attr;
        variable.attr_kind = kind.value_or(AttrKind::Int);
        variable.poisoned = !kind;
        bind_or_use(attr.capture, attr.value_loc, std::move(variable), scope);
      }
    }
    for (PatternPtr& operand : call.operands) check_pattern(*operand, scope);
    bind_rest(call.rest, scope);
    if (call.result_type) check_type_pattern(*call.result_type, scope);
  }

  // Each alternative starts from the same scope; afterwards a name counts as bound only if every alternative
  // binds it the same way.
  void check_alternatives(AltPattern& alt, Scope& scope) {
    std::vector<Scope> results;
    for (PatternPtr& alternative : alt.alternatives) {
      Scope branch = scope;
      const size_t checks_before = dimension_checks_.size();
      check_pattern(*alternative, branch);
      for (size_t i = checks_before; i < dimension_checks_.size(); ++i) dimension_checks_[i].branches.push_back(branch);
      results.push_back(std::move(branch));
    }
    Scope merged = scope;
    for (const Scope& branch : results) {
      for (const auto& [name, variable] : branch) {
        auto it = merged.find(name);
        if (it == merged.end()) {
          merged.emplace(name, variable);
        } else if (scope.count(name) != 0 || it->second.kind == variable.kind) {
          it->second.uses = std::max(it->second.uses, variable.uses);
          if (it->second.call_op != variable.call_op) it->second.call_op.reset();  // calls of different ops
          if (it->second.call_op_var != variable.call_op_var) it->second.call_op_var.clear();
        }
      }
    }
    for (auto& [name, variable] : merged) {
      if (scope.count(name) != 0) continue;
      for (const Scope& branch : results) {
        auto it = branch.find(name);
        if (it == branch.end() || it->second.kind != variable.kind) variable.partial = true;
      }
    }
    scope = std::move(merged);
  }

  // --- right-hand sides ---

  // `let y = ...;`: checked in the names bound so far, then binds a new name (never one bound already).
  void check_let(LetBinding& let, Scope& scope) {
    check_value_expr(*let.value, scope);
    if (auto it = scope.find(let.name); it != scope.end()) {
      Diagnostic& diag =
          diags_.error(let.name_loc, "let '" + let.name + "' shadows a name " +
                                         (it->second.let ? "bound by an earlier let" : "bound on the left-hand side"));
      DiagnosticEngine::add_note(diag, it->second.loc, "bound here");
      return;
    }
    Variable variable;
    variable.loc = let.name_loc;
    variable.let = true;
    scope.emplace(let.name, std::move(variable));
  }

  // An operand of a call or the whole right-hand side: something that produces a graph value. A name bound in a
  // group (a list of values) may be a call operand (`list_operand`), where it stands for the tuple of its values.
  // A spread `xs...` is allowed where several values fit (`spread_ok`): a call's operands, a tuple's fields.
  void check_value_expr(Expr& expr, Scope& scope, bool list_operand = false, bool spread_ok = false) {
    bool list = false;
    std::visit(
        Overloaded{
            [&](SpreadExpr& e) {
              list = true;
              const Variable* variable = use_variable(e.name, e.name_loc, VarKind::Value, scope);
              if (variable != nullptr && !variable->list) {
                Diagnostic& diag = diags_.error(expr.loc, "'" + e.name + "' is a single value; only a list (bound by " +
                                                              "xs... or inside a group) can be spread");
                DiagnosticEngine::add_note(diag, variable->loc, "bound here");
              } else if (!spread_ok) {
                diags_.error(expr.loc, "'" + e.name + "...' stands for several values; it can only be operands of a "
                                       "call or fields of a tuple: concat((" + e.name + "...), axis=0)");
              }
            },
            [&](VarExpr& e) {
              const Variable* variable = use_variable(e.name, expr.loc, VarKind::Value, scope);
              list = variable != nullptr && variable->list;
              if (list && !list_operand) report_misplaced_list(expr, *variable);
            },
            [&](ConstExpr& e) {
              if (e.computed == nullptr) return;
              const ExprType type = as_number(*e.computed, check_computed(*e.computed, scope));
              if (type != ExprType::Number && type != ExprType::Unknown) {
                const std::string hint = type == ExprType::Value ? "; read a number from it: c.value, x.shape[0]" : "";
                diags_.error(e.computed->loc, "const(...) takes a number, but '" + to_string(*e.computed) + "' is " +
                                                  type_name(type) + hint);
              }
            },
            [&](LiteralExpr&) {
              diags_.error(expr.loc,
                           "a literal is not a graph value; write const(" + to_string(expr) + ") for a new constant");
            },
            [&](CallExpr& e) {
              const ExternDecl* native = find_extern(e.op.text, scope);
              if (native == nullptr) return check_call_expr(e, expr.loc, scope);
              check_extern_call(e, *native, ExternDecl::Kind::Rewriter, expr.loc, scope);
              if (native->kind == ExternDecl::Kind::Rewriter && &expr != whole_rhs_) {
                diags_.error(expr.loc, "extern rewriter '" + native->name +
                                           "' builds the whole replacement; it cannot be part of an expression");
              }
            },
            [&](ItemExpr& e) { check_value_expr(*e.tuple, scope); },
            [&](TupleExpr& e) {
              for (ExprPtr& field : e.fields) check_value_expr(*field, scope, false, /*spread_ok=*/true);
            },
            [&](auto&) { diags_.error(expr.loc, "expected a graph value: a bound name, an op call or const(...)"); },
        },
        expr.node);
    expr.type = list ? ExprType::ValueList : ExprType::Value;
  }

  // `xs...` bound inside a group: a list per member, readable only in the group's guard.
  bool report_member_only(const std::string& name, SourceLoc loc) {
    auto it = member_only_.find(name);
    if (it == member_only_.end()) return false;
    Diagnostic& diag = diags_.error(loc, "'" + name + "' holds the operands " + name + "... matched in each member of "
                                         "group '" + it->second.second + "'; read it in the group's own guard");
    DiagnosticEngine::add_note(diag, it->second.first, "bound here");
    return true;
  }

  const Variable* use_variable(const std::string& name, SourceLoc loc, VarKind expected, Scope& scope) {
    auto it = scope.find(name);
    if (it == scope.end()) {
      if (report_member_only(name, loc)) return nullptr;
      std::vector<std::string> bound;
      for (const auto& [bound_name, variable] : scope) {
        if (variable.kind == expected && !variable.partial) bound.push_back(bound_name);
      }
      std::string message = "'" + name + "' is not bound on the left-hand side";
      if (std::string suggestion = nearest(name, bound); !suggestion.empty()) {
        message += "; did you mean '" + suggestion + "'?";
      }
      diags_.error(loc, message);
      return nullptr;
    }
    Variable& variable = it->second;
    if (variable.poisoned) {
      ++variable.uses;
      return nullptr;
    }
    if (variable.partial) {
      Diagnostic& diag = diags_.error(loc, "'" + name + "' is bound in only some alternatives of a '|'");
      DiagnosticEngine::add_note(diag, variable.loc, "bound here");
      return nullptr;
    }
    if (variable.kind != expected) {
      Diagnostic& diag = diags_.error(loc, "'" + name + "' is " + var_kind_name(variable.kind) + ", but " +
                                               var_kind_name(expected) + " is needed here");
      DiagnosticEngine::add_note(diag, variable.loc, "bound here");
      return nullptr;
    }
    ++variable.uses;
    return &variable;
  }

  void check_call_expr(CallExpr& call, SourceLoc loc, Scope& scope) {
    std::vector<OpName> ops;
    auto var = scope.find(call.op.text);
    if (var != scope.end()) {
      const Variable* variable = use_variable(call.op.text, call.op.loc, VarKind::Op, scope);
      call.op_is_var = true;
      // Its attributes: the op's defaults, or with `**r` those of the call that bound it, some replaced by name.
      if (!call.attrs.empty() && !call.attrs_from) {
        const ExprAttr& first = call.attrs[0];
        diags_.error(first.loc, "a call of an op variable gets the op's defaults; to give attributes, copy those of "
                                "the call that bound it and replace some: " + call.op.text + "(..., **r, " +
                                    first.name + "=" + to_string(*first.value) + ") with r: (" + call.op.text +
                                    ": ...)(...)");
      }
      if (variable != nullptr && (call.attrs.empty() || call.attrs_from)) {
        for (OpId id : variable->ops) ops.push_back(OpName{call.op.text, call.op.loc, id});
      }
    } else if (resolve_op(call.op)) {
      ops.push_back(call.op);
    }
    auto spread = [](const ExprPtr& operand) { return std::holds_alternative<SpreadExpr>(operand->node); };
    const bool spreads = std::any_of(call.operands.begin(), call.operands.end(), spread);
    const auto fixed = static_cast<int>(call.operands.size()) -
                       static_cast<int>(std::count_if(call.operands.begin(), call.operands.end(), spread));
    for (const OpName& op : ops) check_arity(op, fixed, loc, spreads);
    if (call.attrs_from) check_attrs_from(call, ops, scope);
    std::set<std::string> seen;
    for (ExprAttr& attr : call.attrs) {
      if (!seen.insert(attr.name).second) {
        diags_.error(attr.loc, "attribute '" + attr.name + "' is given twice");
        continue;
      }
      std::optional<AttrKind> kind = ops.empty() ? std::nullopt : attribute_kind(ops, attr.name, attr.loc);
      if (kind) attr.kind = *kind;
      check_attr_expr(*attr.value, kind, ops.empty() ? nullptr : &ops[0], attr, scope);
    }
    for (ExprPtr& operand : call.operands) check_value_expr(*operand, scope, /*list_operand=*/true, /*spread_ok=*/true);
  }

  // `**c`: `c` is bound on the left to a call of the op being built, whose attributes the new call copies.
  void check_attrs_from(const CallExpr& call, const std::vector<OpName>& ops, Scope& scope) {
    const AttrSource& source = *call.attrs_from;
    const Variable* variable = use_variable(source.name, source.loc, VarKind::Value, scope);
    // A call of an op variable copies from the call that bound the variable, whichever op it matched.
    if (variable == nullptr || (!call.op_is_var && ops.empty())) return;
    const std::string target = call.op_is_var ? "(" + call.op.text + ": ...)" : registry_.get(ops[0].id).name;
    std::string why;
    if (variable->list) {
      why = variable->rest ? "is a list (the operands " + source.name + "... matched)"
                           : "is a list (one value per member of a group)";
    } else if (variable->let) {
      why = "is bound by a let, not matched";
    } else if (call.op_is_var) {
      if (variable->call_op_var != call.op.text) why = "is not the call that bound op variable '" + call.op.text + "'";
    } else if (!variable->call_op) {
      why = "is not bound to a call of one op";
    } else if (*variable->call_op != ops[0].id) {
      why = "is bound to a call of " + registry_.get(*variable->call_op).name;
    }
    if (why.empty()) return;
    Diagnostic& diag = diags_.error(source.loc, "'**" + source.name + "' copies the attributes of a matched " + target +
                                                    " call, but '" + source.name + "' " + why + "; bind one on the "
                                                    "left: " + source.name + ": " + target + "(...)");
    DiagnosticEngine::add_note(diag, variable->loc, "bound here");
  }

  // An attribute value on the right: a literal, a captured attribute, or a value computed like a guard
  // (`axis=x.rank - 1`, `scale=s.value`, `dtype=x.dtype`) whose type suits the attribute's kind.
  void check_attr_expr(Expr& value, std::optional<AttrKind> kind, const OpName* op, const ExprAttr& attr,
                       Scope& scope) {
    if (auto* literal = std::get_if<LiteralExpr>(&value.node)) {
      if (kind) check_literal_kind(literal->value, *kind, *op, PatternAttr{attr.name, attr.loc, value.loc, {}, {}, -1});
      value.type = literal_type(literal->value);
      return;
    }
    ExprType type = check_computed(value, scope);
    if (!kind || type == ExprType::Unknown) return;
    bool capture = std::holds_alternative<VarExpr>(value.node) && !value.dtype_literal && type != ExprType::Value &&
                   type != ExprType::Op;
    if (capture && value.attr_kind == *kind) return;  // copied as it is
    if (*kind == AttrKind::Int || *kind == AttrKind::Float || *kind == AttrKind::OptInt || *kind == AttrKind::OptFloat) {
      type = as_number(value, type);
    }
    if (type != ExprType::Attr && attr_accepts(*kind, type)) return;
    Diagnostic& diag = diags_.error(value.loc, "attribute '" + attr.name + "' of " + registry_.get(op->id).name +
                                                   " expects " + std::string(attr_kind_name(*kind)) + ", but '" +
                                                   to_string(value) + "' is " + type_name(type));
    if (capture) DiagnosticEngine::add_note(diag, scope.at(std::get<VarExpr>(value.node).name).loc, "captured here");
  }

  // --- guards and computed values ---

  void check_guard(Expr& guard, Scope& scope) {
    ExprType type = check_computed(guard, scope);
    if (type != ExprType::Bool && type != ExprType::Unknown) {
      diags_.error(guard.loc, "a guard must be a condition, but '" + to_string(guard) + "' is " + type_name(type));
    }
  }

  static ExprType literal_type(const AttrValue& value) {
    return std::visit(Overloaded{
                          [](std::monostate) { return ExprType::Attr; },
                          [](bool) { return ExprType::Bool; },
                          [](int64_t) { return ExprType::Number; },
                          [](double) { return ExprType::Number; },
                          [](const std::string&) { return ExprType::String; },
                          [](const std::vector<int64_t>&) { return ExprType::IntList; },
                      },
                      value);
  }

  // How a captured attribute of `kind` takes part in guards.
  static ExprType type_of_attr(AttrKind kind) {
    switch (kind) {
      case AttrKind::Int:
      case AttrKind::Float:
        return ExprType::Number;
      case AttrKind::Bool:
        return ExprType::Bool;
      case AttrKind::String:
      case AttrKind::DType:
        return ExprType::String;
      case AttrKind::IntList:
        return ExprType::IntList;
      default:
        return ExprType::Attr;  // optional or mixed: compared as a whole
    }
  }

  static bool attr_accepts(AttrKind kind, ExprType type) {
    switch (kind) {
      case AttrKind::Int:
      case AttrKind::Float:
      case AttrKind::OptInt:
      case AttrKind::OptFloat:
        return type == ExprType::Number;
      case AttrKind::Bool:
        return type == ExprType::Bool;
      case AttrKind::DType:
        return type == ExprType::DType || type == ExprType::String;
      case AttrKind::String:
      case AttrKind::OptString:
        return type == ExprType::String;
      case AttrKind::IntList:
      case AttrKind::OptIntList:
      case AttrKind::IntOrIntList:
        return type == ExprType::IntList;
    }
    return false;
  }

  static std::string type_name(ExprType type) {
    switch (type) {
      case ExprType::Unknown:
        return "unknown";
      case ExprType::Value:
        return "a graph value";
      case ExprType::Number:
        return "a number";
      case ExprType::Bool:
        return "a condition";
      case ExprType::DType:
        return "a dtype";
      case ExprType::String:
        return "a string";
      case ExprType::IntList:
        return "an int list";
      case ExprType::Attr:
        return "an attribute value";
      case ExprType::Op:
        return "an op";
      case ExprType::ValueList:
        return "a list of graph values (one per group member)";
      case ExprType::NumberList:
        return "a list of numbers";
      case ExprType::AttrList:
        return "a list of attribute values (one per group member)";
    }
    return "unknown";
  }

  // Types a guard-like expression; reports what is wrong and returns Unknown then (which silences follow-ups).
  ExprType check_computed(Expr& expr, Scope& scope) {
    ExprType type = std::visit(
        Overloaded{
            [&](LiteralExpr& e) { return literal_type(e.value); },
            [&](VarExpr& e) { return check_name(e, expr, scope); },
            [&](MemberExpr& e) { return check_member(e, scope); },
            [&](IndexExpr& e) { return check_index(e, expr, scope); },
            [&](UnaryExpr& e) {
              ExprType wanted = e.op == UnaryOp::Negate ? ExprType::Number : ExprType::Bool;
              ExprType operand = check_computed(*e.operand, scope);
              if (wanted == ExprType::Number) operand = as_number(*e.operand, operand);
              if (operand == ExprType::Unknown) return ExprType::Unknown;
              if (operand != wanted) {
                diags_.error(expr.loc,
                             std::string(e.op == UnaryOp::Negate ? "'-' needs a number" : "'!' needs a condition") +
                                 ", but '" + to_string(*e.operand) + "' is " + type_name(operand));
                return ExprType::Unknown;
              }
              return wanted;
            },
            [&](BinaryExpr& e) { return check_binary(e, expr, scope); },
            [&](CallExpr& e) {
              const ExternDecl* native = find_extern(e.op.text, scope);
              if (native == nullptr && e.op.text == kSplitIndices) return check_split_indices(e, expr, scope);
              if (native == nullptr) {
                std::vector<std::string> predicates;
                for (const auto& [name, decl] : externs_) {
                  if (decl->kind == ExternDecl::Kind::Predicate) predicates.push_back(name);
                }
                std::string suggestion = nearest(e.op.text, predicates);
                diags_.error(expr.loc, suggestion.empty() ? std::string(kGuardCallsNoOps)
                                                          : "'" + e.op.text + "' is not an extern predicate; did you "
                                                                                 "mean '" + suggestion + "'?");
                return ExprType::Unknown;
              }
              return check_extern_call(e, *native, ExternDecl::Kind::Predicate, expr.loc, scope) ? ExprType::Bool
                                                                                                  : ExprType::Unknown;
            },
            [&](auto&) {
              diags_.error(expr.loc, "expected a guard expression");
              return ExprType::Unknown;
            },
        },
        expr.node);
    expr.type = type;
    return type;
  }

  ExprType check_name(const VarExpr& var, Expr& expr, Scope& scope) {
    auto it = scope.find(var.name);
    if (it == scope.end()) {
      if (std::optional<DType> dtype = parse_dtype(var.name); dtype && *dtype != DType::Unknown) {
        expr.dtype_literal = dtype;
        return ExprType::DType;
      }
      use_variable(var.name, expr.loc, VarKind::Value, scope);  // reports it as unbound
      return ExprType::Unknown;
    }
    Variable& variable = it->second;
    if (variable.poisoned || variable.partial) {
      use_variable(var.name, expr.loc, variable.kind, scope);  // reports a partial binding
      return ExprType::Unknown;
    }
    if (variable.let) {
      report_let_in_computed(var.name, expr.loc, variable);
      return ExprType::Unknown;
    }
    ++variable.uses;
    switch (variable.kind) {
      case VarKind::Value:
        return variable.list ? ExprType::ValueList : ExprType::Value;
      case VarKind::Op:
        return ExprType::Op;
      case VarKind::Dim:  // a group's: one extent per member
        return variable.list ? ExprType::NumberList : ExprType::Number;
      case VarKind::Attr:
        expr.attr_kind = variable.attr_kind;
        return variable.list ? ExprType::AttrList : type_of_attr(variable.attr_kind);
    }
    return ExprType::Unknown;
  }

  // The value variable a property is read from, or nullptr after reporting why not.
  bool check_property_object(Expr& object, Scope& scope, const std::string& property) {
    ExprType type = check_computed(object, scope);
    if (type == ExprType::Unknown) return false;
    if (type != ExprType::Value || !std::holds_alternative<VarExpr>(object.node)) {
      diags_.error(object.loc, "'." + property + "' reads a property of a matched value, but '" + to_string(object) +
                                   "' is " + type_name(type));
      return false;
    }
    return true;
  }

  ExprType check_member(MemberExpr& member, Scope& scope) {
    static const std::map<std::string, ExprType> properties = {{"dtype", ExprType::DType},
                                                               {"rank", ExprType::Number},
                                                               {"uses", ExprType::Number},
                                                               {"value", ExprType::Number}};
    if (std::optional<ExprType> type = check_list_member(member, scope)) return *type;
    auto it = properties.find(member.member);
    if (it == properties.end()) {
      if (member.member == "shape") {
        diags_.error(member.member_loc, "index the shape to read one dimension: x.shape[0]");
      } else {
        diags_.error(member.member_loc,
                     "unknown property '" + member.member + "'; properties: dtype, rank, shape[i], uses, value");
      }
      check_computed(*member.object, scope);
      return ExprType::Unknown;
    }
    if (!check_property_object(*member.object, scope, member.member)) return ExprType::Unknown;
    return it->second;
  }

  ExprType check_index(IndexExpr& index, Expr& expr, Scope& scope) {
    auto* member = std::get_if<MemberExpr>(&index.object->node);
    if (member == nullptr || member->member != "shape") {
      diags_.error(expr.loc, "only a shape can be indexed: x.shape[0]");
      return ExprType::Unknown;
    }
    index.object->type = ExprType::IntList;
    bool over_list = is_list_name(*member->object, scope);
    if (!over_list && !check_property_object(*member->object, scope, "shape")) return ExprType::Unknown;
    if (over_list) check_computed(*member->object, scope);
    if (!constant_int(*index.index)) {
      diags_.error(index.index->loc, "a shape index is an integer literal (negative counts from the end)");
      return ExprType::Unknown;
    }
    index.index->type = ExprType::Number;
    return over_list ? ExprType::NumberList : ExprType::Number;
  }

  ExprType check_binary(BinaryExpr& binary, Expr& expr, Scope& scope) {
    ExprType lhs = check_computed(*binary.lhs, scope);
    ExprType rhs = check_computed(*binary.rhs, scope);
    if (lhs == ExprType::Unknown || rhs == ExprType::Unknown) return ExprType::Unknown;
    std::string op(binary_op_spelling(binary.op));
    auto require = [&](ExprType wanted, const char* what) {
      for (const ExprPtr* side : {&binary.lhs, &binary.rhs}) {
        if ((*side)->type != wanted) {
          diags_.error((*side)->loc, "'" + op + "' needs " + what + ", but '" + to_string(**side) + "' is " +
                                         type_name((*side)->type));
          return false;
        }
      }
      return true;
    };
    if (binary.op != BinaryOp::And && binary.op != BinaryOp::Or &&
        (lhs == ExprType::NumberList || rhs == ExprType::NumberList)) {
      return check_number_list_comparison(binary);
    }
    const bool arithmetic = binary.op == BinaryOp::Add || binary.op == BinaryOp::Subtract ||
                            binary.op == BinaryOp::Multiply || binary.op == BinaryOp::Divide;
    const bool ordering = binary.op == BinaryOp::Less || binary.op == BinaryOp::LessEqual ||
                          binary.op == BinaryOp::Greater || binary.op == BinaryOp::GreaterEqual;
    if (arithmetic || ordering) {
      as_number(*binary.lhs, lhs);
      as_number(*binary.rhs, rhs);
    }
    switch (binary.op) {
      case BinaryOp::Add:
      case BinaryOp::Subtract:
      case BinaryOp::Multiply:
      case BinaryOp::Divide:
        return require(ExprType::Number, "numbers") ? ExprType::Number : ExprType::Unknown;
      case BinaryOp::Less:
      case BinaryOp::LessEqual:
      case BinaryOp::Greater:
      case BinaryOp::GreaterEqual:
        return require(ExprType::Number, "numbers") ? ExprType::Bool : ExprType::Unknown;
      case BinaryOp::And:
      case BinaryOp::Or:
        return require(ExprType::Bool, "conditions") ? ExprType::Bool : ExprType::Unknown;
      case BinaryOp::Equal:
      case BinaryOp::NotEqual:
        if (lhs == ExprType::AttrList || rhs == ExprType::AttrList) return check_attr_list_equality(binary, scope);
        if (lhs == ExprType::ValueList || rhs == ExprType::ValueList) return check_value_list_equality(binary);
        if (lhs == ExprType::Op || rhs == ExprType::Op) return check_op_equality(binary);
        if (!literal_fits_capture(*binary.lhs, *binary.rhs) || !literal_fits_capture(*binary.rhs, *binary.lhs)) {
          return ExprType::Unknown;
        }
        if (comparable(*binary.lhs, *binary.rhs)) {
          bool reads_dim = false;
          expr.compares_dimensions = is_dimension_arithmetic(*binary.lhs, scope, reads_dim) &&
                                     is_dimension_arithmetic(*binary.rhs, scope, reads_dim) && reads_dim;
          return ExprType::Bool;
        }
        diags_.error(binary.op_loc, "cannot compare " + type_name(lhs) + " with " + type_name(rhs));
        return ExprType::Unknown;
    }
    return ExprType::Unknown;
  }

  // A captured optional number (`scale=s` of an OptFloat attribute) where a number is needed: read as one, and
  // where it is None the rule declines, as it does on a dimension that is not static. `s == None` and `s == 0.5`
  // still compare the whole value. Returns the type `expr` has then.
  static ExprType as_number(Expr& expr, ExprType type) {
    if (type != ExprType::Attr || !std::holds_alternative<VarExpr>(expr.node) || expr.dtype_literal ||
        (expr.attr_kind != AttrKind::OptInt && expr.attr_kind != AttrKind::OptFloat)) {
      return type;
    }
    expr.type = ExprType::Number;
    return ExprType::Number;
  }

  // Whether a checked `expr` is dimension arithmetic (Expr::compares_dimensions): dimension variables, one
  // value's `x.shape[i]`, integer literals and `+ - *` over them; `reads_dim` is set when it reads a dimension.
  static bool is_dimension_arithmetic(const Expr& expr, const Scope& scope, bool& reads_dim) {
    if (expr.type != ExprType::Number) return false;  // a group's dimensions and `xs.shape[i]` are lists
    return std::visit(
        Overloaded{
            [&](const VarExpr& e) {
              auto it = scope.find(e.name);
              if (expr.dtype_literal || it == scope.end() || it->second.kind != VarKind::Dim) return false;
              reads_dim = true;
              return true;
            },
            [&](const IndexExpr&) {
              reads_dim = true;
              return true;
            },
            [](const LiteralExpr& e) { return std::holds_alternative<int64_t>(e.value); },
            [&](const BinaryExpr& e) {
              return (e.op == BinaryOp::Add || e.op == BinaryOp::Subtract || e.op == BinaryOp::Multiply) &&
                     is_dimension_arithmetic(*e.lhs, scope, reads_dim) &&
                     is_dimension_arithmetic(*e.rhs, scope, reads_dim);
            },
            [](const auto&) { return false; },
        },
        expr.node);
  }

  // `w == x`, `w != x`: a list of graph values against one value holds when every member is that node (`==`) or
  // none is (`!=`); two lists compare as wholes (same count, the same node at every position).
  ExprType check_value_list_equality(const BinaryExpr& binary) {
    const ExprType lhs = binary.lhs->type;
    const ExprType rhs = binary.rhs->type;
    auto graph_value = [](ExprType type) { return type == ExprType::Value || type == ExprType::ValueList; };
    if (graph_value(lhs) && graph_value(rhs)) return ExprType::Bool;
    diags_.error(binary.op_loc, "'" + std::string(binary_op_spelling(binary.op)) + "' between " + type_name(lhs) +
                                    " and " + type_name(rhs) + ": a list of graph values compares with a graph value "
                                    "(every member) or with another list of graph values");
    return ExprType::Unknown;
  }

  // `w.shape[1] <= 128`: a list of numbers (one per group member) against a number holds when the comparison
  // holds for every member; two such lists compare as wholes with `==` and `!=` (same count, pairwise equal).
  ExprType check_number_list_comparison(const BinaryExpr& binary) {
    const ExprType lhs = binary.lhs->type;
    const ExprType rhs = binary.rhs->type;
    const bool ordering = binary.op == BinaryOp::Less || binary.op == BinaryOp::LessEqual ||
                          binary.op == BinaryOp::Greater || binary.op == BinaryOp::GreaterEqual;
    const bool equality = binary.op == BinaryOp::Equal || binary.op == BinaryOp::NotEqual;
    const bool against_number = lhs == ExprType::Number || rhs == ExprType::Number;
    if ((ordering || equality) && against_number) return ExprType::Bool;
    if (equality && lhs == rhs) return ExprType::Bool;
    diags_.error(binary.op_loc, "'" + std::string(binary_op_spelling(binary.op)) + "' between " + type_name(lhs) +
                                    " and " + type_name(rhs) + ": a list of numbers compares with a number (every "
                                    "member) or, with == and !=, with another list of numbers");
    return ExprType::Unknown;
  }

  // `a == LITERAL`, `a != b` where `a` holds an attribute per group member: the comparison holds for every
  // member's value against the literal (converted to the attribute's kind) or the single capture `b`; two such
  // lists compare as wholes (same count, pairwise equal).
  ExprType check_attr_list_equality(BinaryExpr& binary, const Scope& scope) {
    const bool list_left = binary.lhs->type == ExprType::AttrList;
    const Expr& list = list_left ? *binary.lhs : *binary.rhs;
    Expr& other = list_left ? *binary.rhs : *binary.lhs;
    if (auto* literal = std::get_if<LiteralExpr>(&other.node)) {
      AttrValue converted = literal->value;
      if (attr_matches_kind(list.attr_kind, converted)) {
        literal->value = std::move(converted);
        return ExprType::Bool;
      }
    } else if (const auto* var = std::get_if<VarExpr>(&other.node); var != nullptr && !other.dtype_literal) {
      auto it = scope.find(var->name);
      if (it != scope.end() && it->second.kind == VarKind::Attr && it->second.attr_kind == list.attr_kind) {
        return ExprType::Bool;  // another list, or a single capture, of the same kind
      }
    }
    diags_.error(binary.op_loc, "cannot compare '" + to_string(list) + "', " + type_name(list.type) + " of kind " +
                                    std::string(attr_kind_name(list.attr_kind)) + ", with '" + to_string(other) +
                                    "' (" +
                                    type_name(other.type) + "); compare it with a literal or a capture of that kind");
    return ExprType::Unknown;
  }

  // An op variable against another, or against an op named in quotes (`op == "nn.relu"`): the same op.
  ExprType check_op_equality(BinaryExpr& binary) {
    Expr& other = binary.lhs->type == ExprType::Op ? *binary.rhs : *binary.lhs;
    if (other.type == ExprType::Op) return ExprType::Bool;
    const auto* literal = std::get_if<LiteralExpr>(&other.node);
    const auto* name = literal != nullptr ? std::get_if<std::string>(&literal->value) : nullptr;
    if (name == nullptr) {
      diags_.error(binary.op_loc, "an op compares with another op or with an op's name in quotes (`op == \"add\"`), "
                                  "not with '" + to_string(other) + "' (" + type_name(other.type) + ")");
      return ExprType::Unknown;
    }
    OpName op{*name, other.loc};
    if (!resolve_op(op)) return ExprType::Unknown;
    other.op_literal = op.id;
    other.type = ExprType::Op;
    return ExprType::Bool;
  }

  // `lo == 0` against a captured attribute compared whole (a float or None): the literal as the attribute would
  // store it (0.0, or the int never equals the double); a literal the attribute can never hold is an error.
  bool literal_fits_capture(const Expr& capture, Expr& other) {
    auto* literal = std::get_if<LiteralExpr>(&other.node);
    if (capture.type != ExprType::Attr || literal == nullptr || !std::holds_alternative<VarExpr>(capture.node)) {
      return true;
    }
    if (attr_matches_kind(capture.attr_kind, literal->value)) return true;
    diags_.error(other.loc, "'" + to_string(capture) + "' captures an attribute of kind " +
                                std::string(attr_kind_name(capture.attr_kind)) + ", which is never " + to_string(other));
    return false;
  }

  // Equality is defined between like things; a dtype also compares with a string (an attribute holding a dtype
  // name), and a whole attribute value with a literal or another capture.
  static bool comparable(const Expr& a, const Expr& b) {
    auto text = [](ExprType t) { return t == ExprType::DType || t == ExprType::String; };
    if (a.type == ExprType::Attr || b.type == ExprType::Attr) {
      const Expr& other = a.type == ExprType::Attr ? b : a;
      return std::holds_alternative<LiteralExpr>(other.node) || other.type == ExprType::Attr;
    }
    if (a.type == ExprType::Op) return false;
    return a.type == b.type || (text(a.type) && text(b.type));
  }

  static bool constant_int(const Expr& expr) {
    if (const auto* literal = std::get_if<LiteralExpr>(&expr.node)) {
      return std::holds_alternative<int64_t>(literal->value);
    }
    return false;
  }

  // --- multi-root and group rules ---

  // `rule NAME { root; ...; where guard; => lets; root => value; ... }`: the roots are checked as patterns in
  // order, in one scope; names first bound inside a group root are lists everywhere after it.
  void check_multi_rule(Rule& rule) {
    size_t errors_before = diags_.error_count();
    Scope scope;
    for (size_t i = 0; i < rule.roots.size(); ++i) check_root(rule.roots[i], i == 0, scope);
    if (count_root_alternatives(rule, kMaxAlternatives) > kMaxAlternatives) {
      diags_.error(rule.name_loc, "the roots have more than " + std::to_string(kMaxAlternatives) +
                                      " alternatives together once '|' and '?' are expanded; split the rule");
    }
    if (rule.guard != nullptr) check_guard(*rule.guard, scope);
    for (LetBinding& let : rule.lets) check_let(let, scope);
    std::map<std::string, const RootRewrite*> rewritten;
    for (RootRewrite& rewrite : rule.rewrites) check_root_rewrite(rule, rewrite, rewritten, scope);
    if (rule.rewrites.empty()) {
      diags_.error(rule.name_loc, "rule '" + rule.name + "' rewrites none of its roots; add 'root => value;' after "
                                  "'=>'");
    }
    if (diags_.error_count() > errors_before) return;
    warn_unused(scope);
  }

  void check_root(RootDecl& root, bool anchor, Scope& scope) {
    if (anchor && root.group) {
      diags_.error(root.name_loc, "the first root is the anchor, matched at the visited node; it cannot be a group "
                                  "(start with the value the group shares, e.g. 'x: _;')");
    }
    if (!anchor) check_later_root(root, scope);
    if (auto it = scope.find(root.name); it != scope.end()) {
      Diagnostic& diag = diags_.error(root.name_loc, "root name '" + root.name + "' is bound already");
      DiagnosticEngine::add_note(diag, it->second.loc, "bound here");
    }
    const Scope before = scope;
    Variable named;
    named.uses = 1;  // a root needs a name, used or not
    bind_and_check(root.name, root.name_loc, std::move(named), *root.pattern, scope);
    check_dimension_expressions(scope);
    if (root.guard != nullptr) check_guard(*root.guard, scope);
    if (!root.group || anchor) return;  // a group anchor was reported above
    for (auto it = scope.begin(); it != scope.end();) {
      auto& [name, variable] = *it;
      if (before.count(name) != 0 || !variable.rest) {
        ++it;
        continue;
      }
      // One list per member: read in the group's own guard (`where xs.count == 2`), not after it.
      member_only_[name] = {variable.loc, root.name};
      it = scope.erase(it);
    }
    // Values, ops, attributes and dimensions first bound inside the group: one per member after it.
    for (auto& [name, variable] : scope) {
      if (before.count(name) == 0) variable.list = true;
    }
  }

  // The dimension expressions of the root just checked: each reads dimension variables bound in the root or an
  // earlier one, inside an alternative also those its alternative binds (the check runs once the root matched).
  void check_dimension_expressions(Scope& scope) {
    for (DimensionCheck& pending : dimension_checks_) {
      Scope seen = scope;
      for (auto branch = pending.branches.rbegin(); branch != pending.branches.rend(); ++branch) {
        for (const auto& [name, variable] : *branch) {
          if (!variable.partial) seen.insert_or_assign(name, variable);
        }
      }
      bool readable = true;
      std::vector<std::string> names;
      for_each_name(*std::get<BinaryExpr>(pending.check->node).rhs, [&](const std::string& name, SourceLoc loc) {
        if (seen.count(name) == 0) {
          diags_.error(loc, "'" + name + "' is not a dimension of this root or an earlier one; a dimension expression "
                                         "reads dimension variables bound as Tensor[(" + name + ", ...)]");
          readable = false;
          return;
        }
        const Variable* variable = use_variable(name, loc, VarKind::Dim, seen);
        if (variable != nullptr && variable->list) {
          Diagnostic& diag = diags_.error(loc, "'" + name + "' is bound inside a group, one dimension per member; "
                                                           "a dimension expression outside it cannot read it");
          DiagnosticEngine::add_note(diag, variable->loc, "bound here");
        }
        readable = readable && variable != nullptr && !variable->list;
        names.push_back(name);
      });
      if (!readable) continue;
      check_guard(*pending.check, seen);
      for (const std::string& name : names) {
        if (auto it = scope.find(name); it != scope.end()) ++it->second.uses;
      }
    }
    dimension_checks_.clear();
  }

  // A later root is searched among the users of a value bound before it: each of its alternatives must be an op
  // call with such a value among its operands (or those of a call inside it).
  void check_later_root(const RootDecl& root, const Scope& scope) {
    const std::vector<PatternPtr> alternatives = expand_alternatives(*root.pattern);
    for (size_t k = 0; k < alternatives.size(); ++k) {
      const Pattern& alternative = *alternatives[k];
      const std::string which = alternatives.size() == 1 ? "" : alternative_text(k, alternatives.size());
      if (!root_is_call(alternative)) {
        diags_.error(alternative.loc, "a root after the first must be an op call: it is searched among the users of "
                                      "values bound before it" + which);
        return;
      }
      if (!find_root_hook(alternative, [&](const std::string& name) { return shared_value(name, scope); })) {
        Diagnostic& diag = diags_.error(alternative.loc, "root '" + root.name + "' shares no value with the roots "
                                                         "before it, so it cannot be found" + which);
        DiagnosticEngine::add_note(diag, root.name_loc, "an operand of its pattern (or of a call inside it) must be a "
                                                        "name bound by an earlier root");
        return;
      }
    }
  }

  static std::string alternative_text(size_t k, size_t count) {
    return " (in alternative " + std::to_string(k + 1) + " of " + std::to_string(count) + ")";
  }

  // Whether every alternative of `pattern` is an op call: a root replaced by its rewrite.
  bool every_alternative_is_call(const Pattern& pattern) const {
    const std::vector<PatternPtr> alternatives = expand_alternatives(pattern);
    return std::all_of(alternatives.begin(), alternatives.end(),
                       [&](const PatternPtr& alternative) { return root_is_call(*alternative); });
  }

  // A value a later root can be found from: bound before it, a single value (not a group's list).
  static bool shared_value(const std::string& name, const Scope& scope) {
    auto it = scope.find(name);
    return it != scope.end() && it->second.kind == VarKind::Value && !it->second.list && !it->second.partial &&
           !it->second.let;
  }

  void check_root_rewrite(const Rule& rule, RootRewrite& rewrite, std::map<std::string, const RootRewrite*>& done,
                          Scope& scope) {
    auto root = std::find_if(rule.roots.begin(), rule.roots.end(),
                             [&](const RootDecl& decl) { return decl.name == rewrite.root; });
    whole_rhs_ = rewrite.value.get();
    check_value_expr(*rewrite.value, scope);
    whole_rhs_ = nullptr;
    if (root == rule.roots.end()) {
      std::vector<std::string> names;
      for (const RootDecl& decl : rule.roots) names.push_back(decl.name);
      std::string message = "'" + rewrite.root + "' is not a root of rule '" + rule.name + "'";
      if (std::string suggestion = nearest(rewrite.root, names); !suggestion.empty()) {
        message += "; did you mean '" + suggestion + "'?";
      }
      Diagnostic& diag = diags_.error(rewrite.loc, message);
      std::string known;
      for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
      DiagnosticEngine::add_note(diag, rule.name_loc, "its roots: " + known);
      return;
    }
    if (auto [first, fresh] = done.emplace(rewrite.root, &rewrite); !fresh) {
      Diagnostic& diag = diags_.error(rewrite.loc, "root '" + rewrite.root + "' is rewritten twice");
      DiagnosticEngine::add_note(diag, first->second->loc, "first rewritten here");
      return;
    }
    if (!every_alternative_is_call(*root->pattern)) {
      Diagnostic& diag = diags_.error(rewrite.loc, "root '" + rewrite.root + "' is not an op call" +
                                                   (count_alternatives(*root->pattern, 1) > 1 ? " in every alternative"
                                                                                              : "") +
                                                   ", so it cannot be rewritten; it gives the other roots a value to "
                                                   "share");
      DiagnosticEngine::add_note(diag, root->name_loc, "declared here");
    }
  }

  bool is_list_name(const Expr& expr, const Scope& scope) const {
    const auto* var = std::get_if<VarExpr>(&expr.node);
    if (var == nullptr) return false;
    auto it = scope.find(var->name);
    return it != scope.end() && it->second.list && !it->second.poisoned && it->second.kind == VarKind::Value;
  }

  // `ms.count`; other properties of a list are read per member, in the group's guard. Nullopt when `member` is
  // not read from a list.
  std::optional<ExprType> check_list_member(MemberExpr& member, Scope& scope) {
    if (!is_list_name(*member.object, scope)) return std::nullopt;
    check_computed(*member.object, scope);
    if (member.member == "count") return ExprType::Number;
    const std::string& name = std::get<VarExpr>(member.object->node).name;
    const bool rest = scope.at(name).rest;
    Diagnostic& diag = diags_.error(member.member_loc,
                                    "'" + name + "' is a list (" +
                                        (rest ? "the operands " + name + "... matched" : "one value per group member") +
                                        "): it has .count and .shape[i]" +
                                        (rest ? "" : "; read ." + member.member + " per member in the group's guard"));
    DiagnosticEngine::add_note(diag, scope.at(name).loc, "bound here");
    return ExprType::Unknown;
  }

  void report_list_in_pattern(const std::string& name, SourceLoc loc, Variable& variable) {
    ++variable.uses;
    Diagnostic& diag = diags_.error(loc, "'" + name + "' is a list (" +
                                             (variable.rest ? "the operands " + name + "... matched"
                                                            : "bound inside a group, one value per member") +
                                             "); a later pattern cannot match it");
    DiagnosticEngine::add_note(diag, variable.loc, "bound here");
  }

  void report_misplaced_list(const Expr& expr, const Variable& variable) {
    const std::string name = to_string(expr);
    Diagnostic& diag = diags_.error(
        expr.loc, variable.rest ? "'" + name + "' is a list (the operands " + name + "... matched); spread it where "
                                      "several values fit: f(" + name + "...), (" + name + "...)"
                                : "'" + name + "' is a list (one value per group member); it can only be an operand "
                                      "of an op that takes a tuple, such as concat(" + name + ", axis=0)");
    DiagnosticEngine::add_note(diag, variable.loc, "bound here");
  }

  // `split_indices(ws.shape[1])` or `split_indices(a.shape[1], b.shape[1], c.shape[1])`: the running sums of the
  // sizes without the total, for split(indices_or_sections=...).
  ExprType check_split_indices(CallExpr& call, Expr& expr, Scope& scope) {
    if (!call.attrs.empty()) diags_.error(call.attrs[0].loc, "split_indices takes no attributes");
    std::vector<ExprType> types;
    for (ExprPtr& operand : call.operands) types.push_back(check_computed(*operand, scope));
    if (std::find(types.begin(), types.end(), ExprType::Unknown) != types.end()) return ExprType::Unknown;
    bool one_list = types.size() == 1 && types[0] == ExprType::NumberList;
    bool numbers = !types.empty() && std::all_of(types.begin(), types.end(),
                                                 [](ExprType type) { return type == ExprType::Number; });
    if (one_list || numbers) return ExprType::IntList;
    diags_.error(expr.loc, "split_indices takes the sizes of the parts: one list (ws.shape[1] over a group) or "
                           "several numbers (a.shape[1], b.shape[1])");
    return ExprType::Unknown;
  }

  // --- ops and attributes ---

  inline static const std::vector<std::string> kOpClassNames = {"elementwise", "broadcast", "injective", "reduction",
                                                                "opaque"};

  // The trait an op class name (`elementwise`) stands for, unless an op has that name.
  std::optional<OpTrait> op_class(const std::string& name) const {
    static const std::map<std::string, OpTrait> classes = {{"elementwise", kElementwise},
                                                           {"broadcast", kBroadcast},
                                                           {"injective", kInjective},
                                                           {"reduction", kReduction},
                                                           {"opaque", kOpaque}};
    auto it = classes.find(name);
    if (it == classes.end() || registry_.find(name) != nullptr) return std::nullopt;
    return it->second;
  }

  // `elementwise(x)`: an op class stands for every registered op with that trait that takes as many operands
  // (at least as many, with `...`).
  void expand_op_classes(CallPattern& call, SourceLoc loc) {
    std::vector<OpName> ops;
    for (const OpName& op : call.ops) {
      std::optional<OpTrait> trait = op_class(op.text);
      if (!trait) {
        ops.push_back(op);
        continue;
      }
      int count = static_cast<int>(call.operands.size());
      size_t before = ops.size();
      for (size_t id = 0; id < registry_.size(); ++id) {
        const OpInfo& info = registry_.get(static_cast<OpId>(id));
        bool takes = (call.rest || count >= info.min_operands) && (info.max_operands < 0 || count <= info.max_operands);
        if (info.has(*trait) && takes) ops.push_back(OpName{info.name, op.loc, info.id});
      }
      if (ops.size() == before) {
        diags_.error(loc, "no " + op.text + " op takes " + (call.rest ? "at least " : "") + plural(count, "operand"));
      }
    }
    call.ops = std::move(ops);
  }

  bool resolve_op(OpName& op) {
    if (const OpInfo* info = registry_.find(op.text)) {
      op.id = info->id;
      return true;
    }
    std::string message = "unknown op '" + op.text + "'";
    if (std::string suggestion = nearest_op_name(op.text, registry_); !suggestion.empty()) {
      message += "; did you mean '" + suggestion + "'?";
    }
    diags_.error(op.loc, message);
    return false;
  }

  // `at_least`: `count` operands and any number more (`xs...`).
  void check_arity(const OpName& op, int count, SourceLoc loc, bool at_least = false) {
    const OpInfo& info = registry_.get(op.id);
    if ((at_least || count >= info.min_operands) && (info.max_operands < 0 || count <= info.max_operands)) return;
    std::string expected;
    if (info.max_operands < 0) {
      expected = "at least " + plural(info.min_operands, "operand");
    } else if (info.min_operands == info.max_operands) {
      expected = plural(info.min_operands, "operand");
    } else {
      expected = std::to_string(info.min_operands) + " to " + plural(info.max_operands, "operand");
    }
    diags_.error(loc, info.name + " takes " + expected + ", but " + (at_least ? "at least " : "") +
                          std::to_string(count) + (count == 1 ? " is" : " are") + " given");
  }

  // The kind of attribute `name` of every op in `ops` (alternatives must agree), or nullopt after an error.
  std::optional<AttrKind> attribute_kind(const std::vector<OpName>& ops, const std::string& name, SourceLoc loc) {
    std::optional<AttrKind> kind;
    for (const OpName& op : ops) {
      const OpInfo& info = registry_.get(op.id);
      int index = info.attr_index(name);
      if (index < 0) {
        std::string message = "unknown attribute '" + name + "' of " + info.name;
        if (info.attrs.empty()) {
          message += "; " + info.name + " has no attributes";
        } else {
          message += "; valid attributes: ";
          for (size_t i = 0; i < info.attrs.size(); ++i) message += (i > 0 ? ", " : "") + info.attrs[i].name;
        }
        diags_.error(loc, message);
        return std::nullopt;
      }
      AttrKind this_kind = info.attrs[static_cast<size_t>(index)].kind;
      if (kind && *kind != this_kind) {
        diags_.error(loc, "attribute '" + name + "' has different kinds in the alternative ops");
        return std::nullopt;
      }
      kind = this_kind;
    }
    return kind;
  }

  // Converts `value` to `kind` in place (an int where a float is expected), or reports the mismatch.
  void check_literal_kind(AttrValue& value, AttrKind kind, const OpName& op, const PatternAttr& attr) {
    AttrValue converted = value;
    if (attr_matches_kind(kind, converted)) {
      value = std::move(converted);
      return;
    }
    diags_.error(attr.value_loc, "attribute '" + attr.name + "' of " + registry_.get(op.id).name + " expects " +
                                     std::string(attr_kind_name(kind)) + ", but " + attr_value_str(value) + " is " +
                                     value_kind_name(value));
  }

  AstFile& file_;
  DiagnosticEngine& diags_;
  const OpRegistry& registry_;
  std::map<std::string, const ExternDecl*> externs_;
  const Expr* whole_rhs_ = nullptr;  // the rule's final right-hand side, while it is checked
  // Names of `xs...` bound inside a group of the rule being checked: where bound, and the group.
  std::map<std::string, std::pair<SourceLoc, std::string>> member_only_;
  // The dimension expressions of the root being checked, each with the scopes at the end of the alternatives
  // around it (innermost first): checked once the root is (check_dimension_expressions).
  struct DimensionCheck {
    Expr* check;
    std::vector<Scope> branches;
  };
  std::vector<DimensionCheck> dimension_checks_;
};

}  // namespace

std::string nearest_op_name(std::string_view name, const OpRegistry& registry) {
  std::vector<std::string> names;
  for (size_t id = 0; id < registry.size(); ++id) names.push_back(registry.get(static_cast<OpId>(id)).name);
  return nearest(strip_op_prefix(name), names);
}

bool check(AstFile& file, DiagnosticEngine& diags, const OpRegistry& given) {
  size_t errors_before = diags.error_count();
  if (!file.ops.empty()) file.op_registry = declare_ops(file, diags, given);
  const OpRegistry& registry = file.op_registry ? *file.op_registry : given;
  Checker(file, diags, registry).run();
  if (diags.error_count() != errors_before) return false;
  check_never_matching(file, diags, registry);
  check_rhs_types(file, diags, registry);
  check_rule_overlaps(file, diags, registry);
  if (diags.error_count() != errors_before) return false;
  warn_rules_that_undo_each_other(file, diags, registry);
  return true;
}

}  // namespace dpl::compiler
