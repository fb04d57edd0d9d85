// Compiled against interpreted passes: random rule sets (compiled by dplc at build time) on random graphs, the
// bundled example passes and pipelines on their inputs and on the real models, and the compiler's run/*.dpl rule
// files (multi-root and group rules, custom ops, ...) on every example input, must give structurally equal results,
// the same per-rule counts and the same errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dpl/compiler/rule_interpreter.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/natives.h"
#include "dpl/text/tvmscript.h"
#include "natives.h"
#include "random_rules.h"

// run/natives.dpl's externs: compiled, its pass calls natives.h's functions; interpreted, these registrations.
DPL_NATIVE(is_matrix);
DPL_NATIVE(flip_subtract);

namespace {

namespace fs = std::filesystem;

// Loads a rule file for the interpreter (externs call the natives registered above).
std::unique_ptr<dpl::compiler::LoadedRules> load(const std::string& path) {
  std::string error;
  std::ostringstream messages;
  std::unique_ptr<dpl::compiler::LoadedRules> rules = dpl::compiler::load_rules(path, messages, error);
  EXPECT_NE(rules, nullptr) << path << ": " << error << messages.str();
  return rules;
}

// What a pass run left behind, for comparing two runs.
struct Outcome {
  std::string error;
  std::vector<uint64_t> fired;
  uint64_t visited = 0;
};

// `verify_each` runs the IR verifier after every rewrite (costly where a random rule set grows a graph until the
// rewrite budget stops it).
template <typename Graph>
Outcome run(const dpl::PassDef& pass, Graph& graph, bool verify_each) {
  dpl::RunOptions options;
  options.verify_each = verify_each;
  dpl::PassResult result = dpl::run_pass(pass, graph, options);
  return Outcome{result.error, result.stats.fired, result.stats.nodes_visited};
}

struct RandomRun {
  int graphs = 0;
  uint64_t rewrites = 0;
  uint64_t budget_errors = 0;
};

// The random rule files `<prefix>NN` (NN < `files`), compiled and interpreted, each on `graphs_per_file` graphs
// that `build` makes from a seed.
RandomRun compare_random(const std::string& prefix, int files, int graphs_per_file,
                         void (*build)(dpl::Function&, uint64_t)) {
  int graphs = 0;
  uint64_t rewrites = 0;
  uint64_t budget_errors = 0;
  for (int file = 0; file < files; ++file) {
    const std::string name = prefix + std::string(file < 10 ? "0" : "") + std::to_string(file);
    std::unique_ptr<dpl::compiler::LoadedRules> rules = load(std::string(DPL_RANDOM_RULES_DIR) + "/" + name + ".dpl");
    EXPECT_NE(rules, nullptr);
    if (rules == nullptr) return {};
    const dpl::PassDef* interpreted = rules->interpreter->find_pass(name);
    const dpl::PassDef* compiled = dpl::PassRegistry::find(name);
    EXPECT_NE(interpreted, nullptr);
    EXPECT_NE(compiled, nullptr) << name << " is not linked in";
    if (interpreted == nullptr || compiled == nullptr) return {};
    for (int g = 0; g < graphs_per_file; ++g) {
      const uint64_t seed = static_cast<uint64_t>(file) * 100000 + static_cast<uint64_t>(g);
      dpl::Function a("main");
      dpl::Function b("main");
      build(a, seed);
      build(b, seed);
      Outcome by_compiled = run(*compiled, a, false);
      Outcome by_interpreter = run(*interpreted, b, false);
      ++graphs;
      EXPECT_EQ(by_compiled.error, by_interpreter.error) << name << ", graph seed " << seed;
      EXPECT_EQ(by_compiled.fired, by_interpreter.fired) << name << ", graph seed " << seed;
      EXPECT_EQ(by_compiled.visited, by_interpreter.visited) << name << ", graph seed " << seed;
      dpl::EqualityResult equal = dpl::structurally_equal(a, b);
      EXPECT_TRUE(equal.equal) << name << ", graph seed " << seed << ": " << equal.difference;
      if (by_compiled.fired != by_interpreter.fired || !equal.equal) return {};  // one report is enough
      for (uint64_t count : by_compiled.fired) rewrites += count;
      budget_errors += by_compiled.error.empty() ? 0 : 1;
    }
  }
  std::cout << graphs << " graphs, " << rewrites << " rewrites, " << budget_errors << " budget errors\n";
  return RandomRun{graphs, rewrites, budget_errors};
}

TEST(InterpreterDifferential, RandomRulesOnRandomGraphs) {
  const RandomRun run = compare_random("random_", DPL_RANDOM_RULE_FILES, 550, &dpl::testing::build_random_graph);
  EXPECT_GE(run.graphs, 10000);
  // The comparison means something only when rules fire often.
  EXPECT_GE(run.rewrites, static_cast<uint64_t>(run.graphs)) << "rules fired " << run.rewrites << " times";
}

TEST(InterpreterDifferential, RandomMultiRootRulesOnFanoutGraphs) {
  const RandomRun run = compare_random("random_multi_", DPL_RANDOM_MULTI_ROOT_FILES, 500,
                                       &dpl::testing::build_random_fanout_graph);
  EXPECT_GE(run.graphs, 3000);
  // Multi-root rules need several matching users of one value: they fire on a fair share of the graphs.
  EXPECT_GE(run.rewrites, static_cast<uint64_t>(run.graphs) / 4) << run.rewrites << " rewrites";
}

// What the comparisons covered, to show that they mean something.
struct Coverage {
  int runs = 0;
  uint64_t rewrites = 0;
};

// The passes `compiled` and `interpreted` (one each, or a pipeline's, in order) on a module read from `input`.
void compare_on(const std::vector<const dpl::PassDef*>& compiled, const std::vector<const dpl::PassDef*>& interpreted,
                const std::string& what, const std::string& input, Coverage& coverage) {
  ASSERT_EQ(compiled.size(), interpreted.size()) << what;
  std::string error;
  std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(input, error);
  ASSERT_NE(source, nullptr) << error;
  dpl::DiagnosticEngine diags;
  std::unique_ptr<dpl::Module> a = dpl::read_module(*source, diags);
  std::unique_ptr<dpl::Module> b = dpl::read_module(*source, diags);
  ASSERT_TRUE(a != nullptr && b != nullptr) << input;
  for (size_t i = 0; i < compiled.size(); ++i) {
    Outcome by_compiled = run(*compiled[i], *a, true);
    Outcome by_interpreter = run(*interpreted[i], *b, true);
    EXPECT_EQ(by_compiled.error, by_interpreter.error) << what << " on " << input;
    EXPECT_EQ(by_compiled.fired, by_interpreter.fired) << what << " on " << input;
    EXPECT_EQ(by_compiled.visited, by_interpreter.visited) << what << " on " << input;
    for (uint64_t count : by_compiled.fired) coverage.rewrites += count;
  }
  dpl::EqualityResult equal = dpl::structurally_equal(*a, *b);
  EXPECT_TRUE(equal.equal) << what << " on " << input << ": " << equal.difference;
  ++coverage.runs;
}

// The names of the ops `pass` declares its rules rooted at, sorted (a file's own ops have other ids when
// interpreted).
std::vector<std::string> root_op_names(const dpl::PassDef& pass, const dpl::OpRegistry& registry) {
  std::vector<std::string> names;
  for (dpl::OpId op : pass.root_ops) names.emplace_back(registry.get(op).name);
  std::sort(names.begin(), names.end());
  return names;
}

// Every pass and pipeline of a rule file, compiled (linked in) and interpreted, on each of `inputs`.
void compare_rule_file(const std::string& path, const std::vector<std::string>& inputs, Coverage& coverage) {
  std::unique_ptr<dpl::compiler::LoadedRules> rules = load(path);
  ASSERT_NE(rules, nullptr);
  for (const dpl::PassDef* interpreted : rules->interpreter->passes()) {
    const dpl::PassDef* compiled = dpl::PassRegistry::find(interpreted->name);
    ASSERT_NE(compiled, nullptr) << interpreted->name << " is not linked in";
    EXPECT_EQ(compiled->order, interpreted->order) << interpreted->name;
    EXPECT_EQ(compiled->visit_params, interpreted->visit_params) << interpreted->name;
    EXPECT_EQ(root_op_names(*compiled, dpl::OpRegistry::global()),
              root_op_names(*interpreted, rules->interpreter->file().op_registry ? *rules->interpreter->file().op_registry
                                                                                 : dpl::OpRegistry::global()))
        << interpreted->name;
    for (const std::string& input : inputs) {
      compare_on({compiled}, {interpreted}, std::string(interpreted->name), input, coverage);
    }
  }
  for (const dpl::compiler::PipelineDecl& pipeline : rules->interpreter->file().pipelines) {
    const dpl::PipelineDef* compiled = dpl::PassRegistry::find_pipeline(pipeline.name);
    ASSERT_NE(compiled, nullptr) << pipeline.name << " is not linked in";
    std::vector<const dpl::PassDef*> compiled_passes;
    for (std::string_view pass : compiled->passes) compiled_passes.push_back(dpl::PassRegistry::find(pass));
    for (const std::string& input : inputs) {
      compare_on(compiled_passes, rules->interpreter->resolve(pipeline.name), "pipeline " + pipeline.name, input,
                 coverage);
    }
  }
}

// The bundled example rule files (examples/<dir>/*.dpl; a directory with a CMakeLists.txt is a consumer project).
std::vector<fs::path> example_rule_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(DPL_EXAMPLES_DIR)) {
    if (entry.path().extension() != ".dpl" || fs::exists(entry.path().parent_path() / "CMakeLists.txt")) continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The example's own models: <stem>.input.relax, .expected.relax and any other <stem>.*.relax (seed 001's
// partitioned module, the input of its second pass).
std::vector<std::string> own_inputs(const fs::path& rules) {
  std::vector<std::string> inputs;
  const std::string prefix = rules.stem().string() + ".";
  for (const auto& entry : fs::directory_iterator(rules.parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && entry.path().extension() == ".relax") inputs.push_back(entry.path().string());
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

// Every bundled example rule file, on `inputs` (and on its own models when `with_own_inputs`).
Coverage compare_examples(const std::vector<std::string>& inputs, bool with_own_inputs) {
  Coverage coverage;
  for (const fs::path& rules : example_rule_files()) {
    std::vector<std::string> files = inputs;
    if (with_own_inputs) {
      for (const std::string& own : own_inputs(rules)) files.push_back(own);
    }
    compare_rule_file(rules.string(), files, coverage);
  }
  EXPECT_GT(coverage.runs, 0);
  std::cout << coverage.runs << " runs, " << coverage.rewrites << " rewrites\n";
  return coverage;
}

const std::string kModels = std::string(DPL_SHARED_DIR) + "/models/";

TEST(InterpreterDifferential, ExamplesOnTheirInputs) {
  const Coverage coverage = compare_examples({}, true);
  EXPECT_GE(coverage.rewrites, 40u);
}

TEST(InterpreterDifferential, ExamplesOnBertVitResnet) {
  // ResNet-50's 53 partitions and the 24 combined projections of BERT and ViT at least.
  const Coverage coverage = compare_examples(
      {kModels + "bert_base_uncased.relax", kModels + "vit_base_patch16_224.relax", kModels + "resnet50.relax"},
      false);
  EXPECT_GE(coverage.rewrites, 53u + 24u);
}

TEST(InterpreterDifferential, ExamplesOnTinyLlama) {
  const Coverage coverage = compare_examples({kModels + "tinyllama_1_1b_chat.relax"}, false);
  EXPECT_GE(coverage.rewrites, 44u);  // the combined projections at least
}

// The compiler's run/*.dpl files (natives.dpl's externs with the natives registered above) on every example's models
// and on inputs written for them (custom ops, groups, alternatives in roots): multi-root, group and context-root
// rules, declared ops, patterns, rule order.
TEST(InterpreterDifferential, CompilerRunRulesOnExampleInputs) {
  std::vector<std::string> inputs;
  for (const fs::path& rules : example_rule_files()) {
    for (const std::string& own : own_inputs(rules)) inputs.push_back(own);
  }
  for (const auto& entry : fs::directory_iterator(DPL_INTERP_DIFF_INPUTS_DIR)) inputs.push_back(entry.path().string());
  // The inputs of run/*.dpl's test declarations (alternatives in multi-root rules, ...).
  for (const auto& entry : fs::directory_iterator(DPL_COMPILER_RUN_DIR)) {
    if (entry.path().string().ends_with(".input.relax")) inputs.push_back(entry.path().string());
  }
  std::sort(inputs.begin(), inputs.end());
  Coverage coverage;
  for (const auto& entry : fs::directory_iterator(DPL_COMPILER_RUN_DIR)) {
    if (entry.path().extension() != ".dpl") continue;
    compare_rule_file(entry.path().string(), inputs, coverage);
  }
  std::cout << coverage.runs << " runs, " << coverage.rewrites << " rewrites\n";
  EXPECT_GE(coverage.rewrites, 20u);
}

// run/multi_root.dpl's alternatives and group attributes on real models: run_alternative_group combines the 12
// query, key and value projections of BERT and of ViT (weights transposed parameters: its second alternative),
// and so do run_group_attributes and run_group_attributes_void (every out_dtype "void").
TEST(InterpreterDifferential, MultiRootAlternativesOnBertAndVit) {
  Coverage coverage;
  compare_rule_file(std::string(DPL_COMPILER_RUN_DIR) + "/multi_root.dpl",
                    {kModels + "bert_base_uncased.relax", kModels + "vit_base_patch16_224.relax"}, coverage);
  EXPECT_GE(coverage.rewrites, 3u * 24u);
}

// run/group_lists.dpl's op captured per group member on BERT and ViT (each combines its 12 query, key and value
// projections with their bias adds), and run/partition_rest.dpl's rest inputs on TinyLlama (its 44 rotary
// embeddings, the concat's fields as parameters).
TEST(InterpreterDifferential, GroupOpsAndPartitionRestsOnModels) {
  Coverage groups;
  compare_rule_file(std::string(DPL_COMPILER_RUN_DIR) + "/group_lists.dpl",
                    {kModels + "bert_base_uncased.relax", kModels + "vit_base_patch16_224.relax"}, groups);
  EXPECT_GE(groups.rewrites, 2u * 12u);
  Coverage partitions;
  compare_rule_file(std::string(DPL_COMPILER_RUN_DIR) + "/partition_rest.dpl",
                    {kModels + "tinyllama_1_1b_chat.relax"}, partitions);
  EXPECT_GE(partitions.rewrites, 44u);
}

// Linking tests/compiler/run/custom_ops.dpl registered its ops before main: the file still checks and interprets
// (twice, too), and a declaration that disagrees with a registered op is an error at the declaration.
TEST(InterpreterDifferential, DeclaredOpsAgreeWithTheRegisteredOnes) {
  const std::string custom_ops = std::string(DPL_COMPILER_RUN_DIR) + "/custom_ops.dpl";
  EXPECT_NE(load(custom_ops), nullptr);
  EXPECT_NE(load(custom_ops), nullptr);
  dpl::SourceFile source("redeclares.dpl", "op my.scale(x);\nrule r: my.scale(x) => x;\n");
  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileOptions options;
  options.generate = false;
  EXPECT_FALSE(dpl::compiler::compile(source, diags, options).ok);
  std::ostringstream messages;
  diags.print(messages);
  EXPECT_NE(messages.str().find("redeclares.dpl:1:4: error: op 'my.scale' is already registered with a different "
                                "signature (by a pass library or rule file loaded before)"),
            std::string::npos)
      << messages.str();
}

}  // namespace
