// The runtime core on the four real models: every binding's type re-inferred, compact() keeps a dead-code-free
// graph as it is, equality finds a single changed constant.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dpl/ir/analysis.h"
#include "dpl/support/format.h"
#include "dpl/text/tvmscript.h"

namespace dpl {
namespace {

const std::string kModels = std::string(DPL_SHARED_DIR) + "/models/";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<Module> parse(const std::string& path, const std::string& text) {
  SourceFile source(path, text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = read_module(source, diags);
  EXPECT_NE(module, nullptr) << diags.str();
  return module;
}

class Models : public ::testing::TestWithParam<const char*> {};

TEST_P(Models, AreWellFormedAndKeepTheirOrderThroughCompact) {
  std::string path = kModels + GetParam();
  std::string text = read_text(path);
  ASSERT_FALSE(text.empty()) << path;
  std::unique_ptr<Module> module = parse(path, text);
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->functions().size(), 1u);
  Function& main = *module->functions()[0];
  EXPECT_EQ(verify(main), "");
  size_t calls = 0;
  for (const Node* node : main.nodes()) {
    if (!node->is_call()) continue;
    ++calls;
    // The registry's inference on the node's own operands reproduces the annotation the reader checked.
    std::string error;
    const OpInfo& info = OpRegistry::global().get(node->op());
    EXPECT_EQ(info.infer(InferInput{node->operands(), node->attrs()}, error), node->type()) << node->name() << error;
  }
  EXPECT_GT(calls, 100u);

  std::vector<Node*> before = main.nodes();
  main.compact();  // the models have no dead code
  EXPECT_EQ(main.nodes(), before);
  EXPECT_EQ(verify(main), "");
  for (const Node* node : before) EXPECT_FALSE(node->is_dead());
}

INSTANTIATE_TEST_SUITE_P(Real, Models,
                         ::testing::Values("bert_base_uncased.relax", "tinyllama_1_1b_chat.relax", "resnet50.relax",
                                           "vit_base_patch16_224.relax"));

TEST(ModelEquality, FindsOneChangedAttentionScale) {
  std::string path = kModels + "bert_base_uncased.relax";
  std::string text = read_text(path);
  std::string changed = text;
  size_t at = changed.find("R.multiply(lv66, R.const(0.125, \"float32\"))");
  ASSERT_NE(at, std::string::npos);
  changed.replace(changed.find("0.125", at), 5, "0.12");
  std::unique_ptr<Module> original = parse(path, text);
  std::unique_ptr<Module> same = parse(path, text);
  std::unique_ptr<Module> edited = parse(path, changed);
  ASSERT_TRUE(original && same && edited);
  EXPECT_TRUE(structurally_equal(*original, *same).equal);
  EqualityResult result = structurally_equal(*original, *edited);
  EXPECT_FALSE(result.equal);
  // The reader keeps float32 constants at float32 precision.
  EXPECT_EQ(result.difference, "main: binding lv67 operand 1: constant float32 0.125 vs float32 " +
                                   format_double_like_python(static_cast<double>(0.12f)));
}

}  // namespace
}  // namespace dpl
