// Seed 000's examples through the passes dplc compiled from examples/seed000/*.dpl: each gives exactly the result
// the seed prints.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "add_self.dpl.h"
#include "distribute.dpl.h"
#include "dpl/ir/analysis.h"
#include "dpl/rewrite/driver.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"
#include "quadruple.dpl.h"

namespace dpl {
namespace {

const std::string kExampleDir = DPL_EXAMPLES_DIR "/seed000/";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Loaded {
  std::unique_ptr<SourceFile> source;
  std::unique_ptr<Module> module;
};

Loaded load(const std::string& path) {
  Loaded loaded;
  std::string error;
  loaded.source = SourceFile::load(path, error);
  EXPECT_NE(loaded.source, nullptr) << error;
  if (loaded.source == nullptr) return loaded;
  DiagnosticEngine diags;
  loaded.module = read_module(*loaded.source, diags);
  EXPECT_NE(loaded.module, nullptr) << diags.str();
  return loaded;
}

struct SeedExample {
  const char* stem;  // examples/seed000/<stem>.{dpl,input.relax,expected.relax}
  const char* pass;
  const PassDef& (*pass_def)();
  uint64_t rewrites;
  bool names_as_printed;  // our printer reproduces the seed's text exactly (every binding keeps its name)
};

void PrintTo(const SeedExample& example, std::ostream* out) { *out << example.stem; }

class Seed000 : public ::testing::TestWithParam<SeedExample> {};

TEST_P(Seed000, CompiledPassGivesTheSeedsResult) {
  const SeedExample& example = GetParam();
  const PassDef* pass = PassRegistry::find(example.pass);
  ASSERT_NE(pass, nullptr) << "pass " << example.pass << " is not registered";
  EXPECT_EQ(pass, &example.pass_def()) << "the generated header's accessor and the registry disagree";

  Loaded input = load(kExampleDir + example.stem + ".input.relax");
  Loaded expected = load(kExampleDir + example.stem + ".expected.relax");
  ASSERT_TRUE(input.module && expected.module);

  RunOptions options;
  options.verify_each = true;
  const PassResult result = run_pass(*pass, *input.module, options);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, example.rewrites);

  const EqualityResult equal = structurally_equal(*input.module, *expected.module);
  EXPECT_TRUE(equal.equal) << equal.difference << "\n" << print_module(*input.module);
  EXPECT_EQ(verify(*input.module), "");
  if (example.names_as_printed) {
    EXPECT_EQ(print_module(*input.module), read_text(kExampleDir + example.stem + ".expected.relax"));
  }
}

TEST_P(Seed000, ASecondRunChangesNothing) {
  const SeedExample& example = GetParam();
  Loaded expected = load(kExampleDir + example.stem + ".expected.relax");
  ASSERT_TRUE(expected.module);
  const PassResult result = run_pass(example.pass_def(), *expected.module);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, Seed000,
    ::testing::Values(SeedExample{"add_self", "seed000_add_self", dpl_passes::seed000_add_self_pass, 2, true},
                      SeedExample{"quadruple", "seed000_quadruple", dpl_passes::seed000_quadruple_pass, 1, true},
                      // Converges in two rewrites: (a + z) * 5, then the new (x + y) * 5.
                      SeedExample{"distribute", "seed000_distribute", dpl_passes::seed000_distribute_pass, 2,
                                  false}),
    [](const ::testing::TestParamInfo<SeedExample>& info) { return std::string(info.param.stem); });

TEST(Seed000Distribute, TheOutputKeepsItsBindingName) {
  Loaded input = load(kExampleDir + "distribute.input.relax");
  ASSERT_TRUE(input.module);
  ASSERT_TRUE(run_pass(dpl_passes::seed000_distribute_pass(), *input.module).ok());
  const Function* main = input.module->find("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->output()->name(), "out");
  EXPECT_TRUE(main->output()->is_call_of(op::add));
}

}  // namespace
}  // namespace dpl
