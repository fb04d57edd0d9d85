// The rule interpreter: runs the passes of a checked .dpl file without generating C++. Each pass becomes a
// dpl::PassDef whose matcher walks the checked AST, so the same driver (dpl::run_pass) runs it with the same
// visit order, rewrite budget and replacement semantics as the compiled pass; the matcher follows the emitter's
// decisions (rule and alternative order, commutative operand orders, binding, guards, constant dtypes), so it fires
// the same rule on the same match and builds the same replacement.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/compiler/compile.h"
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/natives.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

class InterpretedPass;

// The natives that stand for a file's extern declarations (a native of the same name, kind and arity).
using NativeBindings = std::map<const ExternDecl*, const NativeFunction*>;

class RuleInterpreter {
 public:
  // Prepares every pass of `file` (checked by compile(); it must outlive the interpreter): rewrite, partition,
  // multi-root and group rules, composite(...) patterns. The file's `op` declarations are registered in the
  // process's OpRegistry (as a compiled pass library registers them before main), so that IR read afterwards may
  // use them. Extern predicates and rewriters call the natives of `natives` of their name (looked up here, once):
  // when `natives` is empty, each rule calling an extern is an error at the rule (it needs native code); else
  // each extern without a native of its name, kind and arity is an error at its declaration. On any error the
  // result is null.
  static std::unique_ptr<RuleInterpreter> create(const AstFile& file, DiagnosticEngine& diags,
                                                 const NativeRegistry& natives = NativeRegistry::global());
  // Why `rule` cannot be interpreted with `natives` (what create() reports), or nothing when it can.
  static std::optional<std::string> unsupported_reason(const Rule& rule,
                                                       const NativeRegistry& natives = NativeRegistry::global());
  // An interpreter without passes, for single_rule_pass() on the rules unsupported_reason() accepts: dplc --verify
  // checks those rules even in files where others cannot be interpreted.
  static std::unique_ptr<RuleInterpreter> create_for_single_rules(
      const AstFile& file, const NativeRegistry& natives = NativeRegistry::global());
  ~RuleInterpreter();
  RuleInterpreter(const RuleInterpreter&) = delete;
  RuleInterpreter& operator=(const RuleInterpreter&) = delete;

  const AstFile& file() const { return file_; }
  // The passes, in file order.
  std::vector<const PassDef*> passes() const;
  const PassDef* find_pass(std::string_view name) const;
  // What a name given to `dpl-opt -p` stands for: the pass of that name, or the passes of the file's pipeline of
  // that name, in order; empty when the file has neither.
  std::vector<const PassDef*> resolve(std::string_view name) const;
  // The names of the passes and pipelines, for error messages: "a, b, all (pipeline)".
  std::string known_names() const;
  // The passes `names` stand for, in order (every pass of the file when `names` is empty); false with `error`
  // naming the first unknown name and the known ones.
  bool resolve(const std::vector<std::string>& names, std::vector<const PassDef*>& out, std::string& error) const;

  // A pass of rule `rule_index` of pass `pass_index` alone (dplc --verify rewrites a rule's instances with it).
  // Valid until the next call or the interpreter's end.
  const PassDef& single_rule_pass(size_t pass_index, size_t rule_index);

 private:
  RuleInterpreter(const AstFile& file, const NativeRegistry& natives);

  const AstFile& file_;
  NativeBindings natives_;
  std::vector<std::unique_ptr<InterpretedPass>> passes_;
  std::unique_ptr<InterpretedPass> single_rule_;
};

// Reads, checks and prepares a .dpl file for interpretation: what `dpl-opt --rules` and `dplc --verify` need.
struct LoadedRules {
  std::unique_ptr<SourceFile> source;
  CompileResult compiled;
  std::unique_ptr<RuleInterpreter> interpreter;
};
// Prints the diagnostics (warnings too) to `messages` while the files they quote are alive; returns null on any
// error (a file that cannot be read is reported in `error`, not printed).
std::unique_ptr<LoadedRules> load_rules(const std::string& path, std::ostream& messages, std::string& error);

}  // namespace dpl::compiler
