// Compiled against interpreted passes: random rule sets (compiled by dplc at build time) on random graphs, and the
// bundled example passes on their inputs and on the real models, must give structurally equal results, the same
// per-rule counts and the same errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dpl/compiler/rule_interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/text/tvmscript.h"
#include "random_rules.h"

namespace {

namespace fs = std::filesystem;

// Loads a rule file for the interpreter. With `allow_unsupported`, a file the interpreter declines only for
// constructs it does not run yet (multi-root rules, partitions, ...) gives null without a failure; it is listed.
std::unique_ptr<dpl::compiler::LoadedRules> load(const std::string& path, bool allow_unsupported = false) {
  std::string error;
  std::ostringstream messages;
  std::unique_ptr<dpl::compiler::LoadedRules> rules = dpl::compiler::load_rules(path, messages, error);
  if (rules == nullptr && allow_unsupported && error.empty()) {
    const std::string text = messages.str();
    size_t errors = 0;
    size_t unsupported = 0;
    for (size_t at = text.find(": error: "); at != std::string::npos; at = text.find(": error: ", at + 1)) ++errors;
    for (size_t at = text.find("cannot be interpreted"); at != std::string::npos;
         at = text.find("cannot be interpreted", at + 1)) {
      ++unsupported;
    }
    EXPECT_EQ(errors, unsupported) << path << ":\n" << text;
    std::cout << "not interpreted (unsupported constructs): " << path << "\n";
    return nullptr;
  }
  EXPECT_NE(rules, nullptr) << path << ": " << error << messages.str();
  return rules;
}

// What a pass run left behind, for comparing two runs.
struct Outcome {
  std::string error;
  std::vector<uint64_t> fired;
};

// `verify_each` runs the IR verifier after every rewrite (costly where a random rule set grows a graph until the
// rewrite budget stops it).
template <typename Graph>
Outcome run(const dpl::PassDef& pass, Graph& graph, bool verify_each) {
  dpl::RunOptions options;
  options.verify_each = verify_each;
  dpl::PassResult result = dpl::run_pass(pass, graph, options);
  return Outcome{result.error, result.stats.fired};
}

TEST(InterpreterDifferential, RandomRulesOnRandomGraphs) {
  constexpr int kGraphsPerFile = 550;
  int graphs = 0;
  uint64_t rewrites = 0;
  uint64_t budget_errors = 0;
  for (int file = 0; file < DPL_RANDOM_RULE_FILES; ++file) {
    const std::string name = "random_" + std::string(file < 10 ? "0" : "") + std::to_string(file);
    std::unique_ptr<dpl::compiler::LoadedRules> rules = load(std::string(DPL_RANDOM_RULES_DIR) + "/" + name + ".dpl");
    ASSERT_NE(rules, nullptr);
    const dpl::PassDef* interpreted = rules->interpreter->find_pass(name);
    const dpl::PassDef* compiled = dpl::PassRegistry::find(name);
    ASSERT_NE(interpreted, nullptr);
    ASSERT_NE(compiled, nullptr) << name << " is not linked in";
    for (int g = 0; g < kGraphsPerFile; ++g) {
      const uint64_t seed = static_cast<uint64_t>(file) * 100000 + static_cast<uint64_t>(g);
      dpl::Function a("main");
      dpl::Function b("main");
      dpl::testing::build_random_graph(a, seed);
      dpl::testing::build_random_graph(b, seed);
      Outcome by_compiled = run(*compiled, a, false);
      Outcome by_interpreter = run(*interpreted, b, false);
      ++graphs;
      ASSERT_EQ(by_compiled.error, by_interpreter.error) << name << ", graph seed " << seed;
      ASSERT_EQ(by_compiled.fired, by_interpreter.fired) << name << ", graph seed " << seed;
      dpl::EqualityResult equal = dpl::structurally_equal(a, b);
      ASSERT_TRUE(equal.equal) << name << ", graph seed " << seed << ": " << equal.difference;
      for (uint64_t count : by_compiled.fired) rewrites += count;
      budget_errors += by_compiled.error.empty() ? 0 : 1;
    }
  }
  EXPECT_GE(graphs, 10000);
  // The comparison means something only when rules fire often.
  EXPECT_GE(rewrites, static_cast<uint64_t>(graphs)) << "rules fired " << rewrites << " times on " << graphs << " graphs";
  std::cout << graphs << " graphs, " << rewrites << " rewrites, " << budget_errors << " budget errors\n";
}

// Every bundled example rule file: its passes compiled (linked in) and interpreted on the inputs in `inputs`.
void compare_examples(const std::vector<std::string>& inputs, bool with_own_input) {
  int compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(DPL_EXAMPLES_DIR)) {
    if (entry.path().extension() != ".dpl" || fs::exists(entry.path().parent_path() / "CMakeLists.txt")) continue;
    std::unique_ptr<dpl::compiler::LoadedRules> rules = load(entry.path().string(), /*allow_unsupported=*/true);
    if (rules == nullptr) continue;
    std::vector<std::string> files = inputs;
    fs::path own = entry.path();
    own.replace_extension(".input.relax");
    if (with_own_input && fs::exists(own)) files.push_back(own.string());
    for (const dpl::PassDef* interpreted : rules->interpreter->passes()) {
      const dpl::PassDef* compiled = dpl::PassRegistry::find(interpreted->name);
      ASSERT_NE(compiled, nullptr) << interpreted->name << " is not linked in";
      for (const std::string& input : files) {
        std::string error;
        std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(input, error);
        ASSERT_NE(source, nullptr) << error;
        dpl::DiagnosticEngine diags;
        std::unique_ptr<dpl::Module> a = dpl::read_module(*source, diags);
        std::unique_ptr<dpl::Module> b = dpl::read_module(*source, diags);
        ASSERT_TRUE(a != nullptr && b != nullptr) << input;
        Outcome by_compiled = run(*compiled, *a, true);
        Outcome by_interpreter = run(*interpreted, *b, true);
        EXPECT_EQ(by_compiled.error, by_interpreter.error) << interpreted->name << " on " << input;
        EXPECT_EQ(by_compiled.fired, by_interpreter.fired) << interpreted->name << " on " << input;
        dpl::EqualityResult equal = dpl::structurally_equal(*a, *b);
        EXPECT_TRUE(equal.equal) << interpreted->name << " on " << input << ": " << equal.difference;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
}

const std::string kModels = std::string(DPL_SHARED_DIR) + "/models/";

TEST(InterpreterDifferential, ExamplesOnTheirInputs) { compare_examples({}, true); }

TEST(InterpreterDifferential, ExamplesOnBertVitResnet) {
  compare_examples({kModels + "bert_base_uncased.relax", kModels + "vit_base_patch16_224.relax",
                    kModels + "resnet50.relax"},
                   false);
}

TEST(InterpreterDifferential, ExamplesOnTinyLlama) { compare_examples({kModels + "tinyllama_1_1b_chat.relax"}, false); }

}  // namespace

