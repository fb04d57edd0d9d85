// The Graphviz writer: structural before/after diff (replaced, created, rewired nodes) and the DOT text it draws,
// on the seed 000 passes, plus `dpl-opt --dot` run as a process.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "add_self.dpl.h"
#include "attention.dpl.h"
#include "dpl/rewrite/driver.h"
#include "dpl/text/dot.h"
#include "dpl/text/tvmscript.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<dpl::Module> parse(const std::string& path, const std::string& text) {
  dpl::SourceFile source(path, text);
  dpl::DiagnosticEngine diags;
  std::unique_ptr<dpl::Module> module = dpl::read_module(source, diags);
  EXPECT_NE(module, nullptr) << path;
  return module;
}

std::unique_ptr<dpl::Module> parse_example(const std::string& relative) {
  const std::string path = DPL_EXAMPLES_DIR "/" + relative;
  return parse(path, read_text(path));
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

bool any_op(const std::vector<const dpl::Node*>& nodes, dpl::OpId op) {
  return std::any_of(nodes.begin(), nodes.end(), [&](const dpl::Node* node) { return node->is_call_of(op); });
}

TEST(Dot, AttentionFusionReplacesEveryMatchedNodeAndCreatesOne) {
  std::unique_ptr<dpl::Module> before = parse_example("seed000/attention.input.relax");
  std::unique_ptr<dpl::Module> after = parse_example("seed000/attention.input.relax");
  ASSERT_TRUE(dpl::run_pass(dpl_passes::seed000_attention_pass(), *after).ok());

  const dpl::RewriteDiff diff = dpl::diff_rewrite(*before, *after);
  ASSERT_EQ(diff.created.size(), 1u);
  EXPECT_TRUE(diff.created[0]->is_call_of(dpl::op::nn_attention));
  EXPECT_TRUE(diff.rewired.empty());
  // Everything but the parameters took part in the match: 12 calls, the scale constant, 4 shape literals.
  const dpl::Function& main = *before->find("main");
  size_t non_params = 0;
  for (const dpl::Node* node : main.nodes()) non_params += node->kind() != dpl::NodeKind::Param ? 1 : 0;
  EXPECT_EQ(diff.replaced.size(), non_params);
  for (const dpl::Node* node : diff.replaced) EXPECT_NE(node->kind(), dpl::NodeKind::Param);
  EXPECT_TRUE(any_op(diff.replaced, dpl::op::nn_softmax));
}

TEST(Dot, UnchangedModuleHasNoDifferences) {
  std::unique_ptr<dpl::Module> a = parse_example("seed000/attention.input.relax");
  std::unique_ptr<dpl::Module> b = parse_example("seed000/attention.input.relax");
  const dpl::RewriteDiff diff = dpl::diff_rewrite(*a, *b);
  EXPECT_TRUE(diff.replaced.empty());
  EXPECT_TRUE(diff.created.empty());
  EXPECT_TRUE(diff.rewired.empty());
  const std::string dot = dpl::rewrite_to_dot(*a, *b, "unchanged");
  EXPECT_THAT(dot, Not(HasSubstr("#f4cccc")));
  EXPECT_THAT(dot, Not(HasSubstr("#d9ead3")));
}

constexpr const char* kAddThenMore = R"(# from tvm.script import relax as R

@R.function
def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    with R.dataflow():
        a: R.Tensor((4,), dtype="float32") = R.add(x, x)
        b: R.Tensor((4,), dtype="float32") = R.subtract(a, y)
        c: R.Tensor((4,), dtype="float32") = R.nn.relu(b)
        d: R.Tensor((4,), dtype="float32") = R.multiply(y, y)
        e: R.Tensor((4,), dtype="float32") = R.add(c, d)
        R.output(e)
    return e
)";

TEST(Dot, NodesDownstreamOfARewriteAreRewiredNotReplaced) {
  std::unique_ptr<dpl::Module> before = parse("inline.relax", kAddThenMore);
  std::unique_ptr<dpl::Module> after = parse("inline.relax", kAddThenMore);
  ASSERT_TRUE(dpl::run_pass(dpl_passes::seed000_add_self_pass(), *after).ok());

  const dpl::RewriteDiff diff = dpl::diff_rewrite(*before, *after);
  ASSERT_EQ(diff.replaced.size(), 1u);
  EXPECT_TRUE(diff.replaced[0]->is_call_of(dpl::op::add));
  EXPECT_EQ(diff.replaced[0]->name(), "a");
  // multiply(x, 2.0) and its constant; multiply(y, y) existed before and is not new.
  ASSERT_EQ(diff.created.size(), 2u);
  EXPECT_TRUE(any_op(diff.created, dpl::op::multiply));
  EXPECT_TRUE(std::any_of(diff.created.begin(), diff.created.end(), [](const dpl::Node* node) {
    return node->kind() == dpl::NodeKind::Constant && node->literal().values == std::vector<double>{2.0};
  }));
  // subtract, relu and the final add, once in each module.
  EXPECT_EQ(diff.rewired.size(), 6u);
  EXPECT_TRUE(any_op(diff.rewired, dpl::op::nn_relu));
  EXPECT_FALSE(any_op(diff.rewired, dpl::op::multiply));
}

TEST(Dot, DrawsBothSidesWithTheChangesHighlighted) {
  std::unique_ptr<dpl::Module> before = parse_example("seed000/attention.input.relax");
  std::unique_ptr<dpl::Module> after = parse_example("seed000/attention.input.relax");
  ASSERT_TRUE(dpl::run_pass(dpl_passes::seed000_attention_pass(), *after).ok());
  const dpl::RewriteDiff diff = dpl::diff_rewrite(*before, *after);
  const std::string dot = dpl::rewrite_to_dot(*before, *after, "attention \"fused\"");

  EXPECT_EQ(dot.rfind("digraph rewrite {\n", 0), 0u);
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_before {"));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_after {"));
  EXPECT_THAT(dot, HasSubstr("label=\"attention \\\"fused\\\"\\n"));  // the title, quotes escaped
  EXPECT_EQ(count(dot, "fillcolor=\"#f4cccc\""), diff.replaced.size());
  EXPECT_EQ(count(dot, "fillcolor=\"#d9ead3\""), 1u);
  // The created node: the fused op with its scale attribute, green, the after side's output.
  const size_t attention = dot.find("= nn.attention\\nscale=0.15811388194561005\\n(2, 4096, 8, 40) float32\"");
  ASSERT_NE(attention, std::string::npos) << dot;
  const std::string attention_line = dot.substr(attention, dot.find('\n', attention) - attention);
  EXPECT_THAT(attention_line, HasSubstr("peripheries=2"));
  EXPECT_THAT(attention_line, HasSubstr("#d9ead3"));
  // Attributes that differ from the defaults are shown; parameters are ellipses and are not highlighted.
  EXPECT_THAT(dot, HasSubstr("lv58 = permute_dims\\naxes=[0, 2, 1, 3]"));
  EXPECT_THAT(dot, HasSubstr("before_f0_n0 [label=\"Q\\n(2, 4096, 8, 40) float32\", shape=ellipse];"));
  EXPECT_THAT(dot, HasSubstr("before_f0_n0 -> "));
  EXPECT_THAT(dot, HasSubstr("after_f0_n0 -> "));
}

TEST(Dot, DplOptWritesThePictureBesideTheRewrittenText) {
  std::string pattern = (fs::temp_directory_path() / "dpl-dot-test-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  const std::string input = DPL_EXAMPLES_DIR "/seed000/attention.input.relax";
  const std::string command = std::string("'") + DPL_OPT_PATH + "' -p seed000_attention '" + input + "' --dot '" +
                              (dir / "out.dot").string() + "' -o '" + (dir / "out.relax").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::string dot = read_text(dir / "out.dot");
  EXPECT_THAT(dot, HasSubstr("label=\"attention.input.relax: seed000_attention\\n"));
  EXPECT_THAT(dot, HasSubstr("= nn.attention"));
  EXPECT_EQ(count(dot, "fillcolor=\"#d9ead3\""), 1u);
  EXPECT_THAT(read_text(dir / "out.relax"), HasSubstr("R.nn.attention("));

  // An unwritable picture path is an input error, reported, not a crash.
  const std::string bad = std::string("'") + DPL_OPT_PATH + "' '" + input + "' --dot '" +
                          (dir / "missing" / "x.dot").string() + "' > /dev/null 2>&1";
  const int status = std::system(bad.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  fs::remove_all(dir);
}

}  // namespace
