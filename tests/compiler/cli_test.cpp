// dplc as a process: exit codes (0 ok, 1 input errors, 2 usage), files written atomically and only without
// errors, the depfile, --check, --emit, --namespace, byte-identical output whatever the input's directory, and
// the rule tests (--test, --tests-manifest).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct DplcRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

std::string quote(const std::string& arg) { return "'" + arg + "'"; }

DplcRun run_dplc(const std::string& args) {
  DplcRun run;
  std::string command = quote(DPLC_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.output.append(buffer.data(), n);
  int status = pclose(pipe);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class Dplc : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dplc_cli_test_" + std::to_string(::getpid()) + "_" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

const std::string kGood = "pass simple {\n  rule add_self: add(x, x) => multiply(x, const(2.0));\n}\n";
const std::string kBad = "rule r: ad(x, x) => x;\nrule s: exp(x) => y;\n";

TEST_F(Dplc, WritesHeaderAndSourceAndDepfile) {
  write_file(dir_ / "rules.dpl", kGood);
  DplcRun run = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "out").string()) +
                         " --depfile " + quote((dir_ / "out/rules.d").string()));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "");
  std::string header = read_file(dir_ / "out/rules.dpl.h");
  std::string source = read_file(dir_ / "out/rules.dpl.cpp");
  EXPECT_NE(header.find("const dpl::PassDef& simple_pass();"), std::string::npos) << header;
  EXPECT_NE(header.find("namespace dpl_passes {"), std::string::npos);
  EXPECT_NE(source.find("// rule add_self (rules.dpl:2)"), std::string::npos) << source;
  std::string depfile = read_file(dir_ / "out/rules.d");
  EXPECT_EQ(depfile, (dir_ / "out/rules.dpl.h").string() + " " + (dir_ / "out/rules.dpl.cpp").string() + ": " +
                         (dir_ / "rules.dpl").string() + "\n");
  // No temporary files are left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_ / "out")) ++files;
  EXPECT_EQ(files, 3);
}

TEST_F(Dplc, DepfileListsImports) {
  write_file(dir_ / "lib/common.dpl", "pattern twice(x) = add(x, x);\n");
  write_file(dir_ / "rules.dpl", "import \"lib/common.dpl\";\nrule r: exp(twice(y)) => y;\n");
  DplcRun run = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "out").string()) +
                         " --depfile " + quote((dir_ / "out/rules.d").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(read_file(dir_ / "out/rules.d"),
            (dir_ / "out/rules.dpl.h").string() + " " + (dir_ / "out/rules.dpl.cpp").string() + ": " +
                (dir_ / "rules.dpl").string() + " " + (dir_ / "lib/common.dpl").string() + "\n");
}

TEST_F(Dplc, OutputIsTheSameFromAnyDirectory) {
  write_file(dir_ / "a/rules.dpl", kGood);
  write_file(dir_ / "b/deeper/rules.dpl", kGood);
  ASSERT_EQ(run_dplc(quote((dir_ / "a/rules.dpl").string()) + " -o " + quote((dir_ / "out_a").string())).exit_code, 0);
  ASSERT_EQ(
      run_dplc(quote((dir_ / "b/deeper/rules.dpl").string()) + " -o " + quote((dir_ / "out_b").string())).exit_code, 0);
  EXPECT_EQ(read_file(dir_ / "out_a/rules.dpl.cpp"), read_file(dir_ / "out_b/rules.dpl.cpp"));
  EXPECT_EQ(read_file(dir_ / "out_a/rules.dpl.h"), read_file(dir_ / "out_b/rules.dpl.h"));
}

TEST_F(Dplc, ErrorsExitOneAndWriteNothing) {
  write_file(dir_ / "bad.dpl", kBad);
  DplcRun run = run_dplc(quote((dir_ / "bad.dpl").string()) + " -o " + quote((dir_ / "out").string()));
  EXPECT_EQ(run.exit_code, 1);
  // Both errors, each with file:line:col, the source line and a caret.
  EXPECT_NE(run.output.find("bad.dpl:1:9: error: unknown op 'ad'; did you mean 'add'?\nrule r: ad(x, x) => x;\n"
                            "        ^~"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("bad.dpl:2:19: error: 'y' is not bound on the left-hand side"), std::string::npos)
      << run.output;
  EXPECT_FALSE(fs::exists(dir_ / "out/bad.dpl.h"));
  EXPECT_FALSE(fs::exists(dir_ / "out/bad.dpl.cpp"));
}

TEST_F(Dplc, AFailedRunLeavesThePreviousOutputsAndNoTemporaryFiles) {
  const fs::path out = dir_ / "out";
  const std::vector<fs::path> outputs = {out / "rules.dpl.h", out / "rules.dpl.cpp", out / "rules.d"};
  for (const fs::path& output : outputs) write_file(output, "previous " + output.filename().string() + "\n");
  const auto expect_previous_outputs_and_no_temporaries = [&] {
    for (const fs::path& output : outputs) {
      EXPECT_EQ(read_file(output), "previous " + output.filename().string() + "\n") << output;
    }
    for (const fs::path& where : {dir_, out}) {
      for (const auto& entry : fs::directory_iterator(where)) {
        EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
      }
    }
  };

  // Errors in the rules.
  write_file(dir_ / "rules.dpl", kBad);
  DplcRun run = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote(out.string()) + " --depfile " +
                         quote((out / "rules.d").string()));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  expect_previous_outputs_and_no_temporaries();

  // Good rules, but the depfile cannot be written: the header and source are not replaced either.
  write_file(dir_ / "rules.dpl", kGood);
  run = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote(out.string()) + " --depfile " +
                 quote((dir_ / "missing/rules.d").string()));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("dplc: error: cannot write"), std::string::npos) << run.output;
  expect_previous_outputs_and_no_temporaries();
}

TEST_F(Dplc, CheckWritesNothing) {
  write_file(dir_ / "rules.dpl", kGood);
  EXPECT_EQ(run_dplc("--check " + quote((dir_ / "rules.dpl").string())).exit_code, 0);
  write_file(dir_ / "bad.dpl", kBad);
  EXPECT_EQ(run_dplc("--check " + quote((dir_ / "bad.dpl").string())).exit_code, 1);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 2);
}

TEST_F(Dplc, EmitPrintsToStdout) {
  write_file(dir_ / "rules.dpl", kGood);
  DplcRun ast = run_dplc("--emit=ast " + quote((dir_ / "rules.dpl").string()));
  EXPECT_EQ(ast.exit_code, 0);
  EXPECT_NE(ast.output.find("match   add(x, x)"), std::string::npos) << ast.output;
  DplcRun cpp = run_dplc("--emit=cpp --namespace my::passes " + quote((dir_ / "rules.dpl").string()));
  EXPECT_EQ(cpp.exit_code, 0);
  EXPECT_NE(cpp.output.find("namespace my::passes {"), std::string::npos) << cpp.output;
  EXPECT_NE(cpp.output.find("int match_simple_add(dpl::Rewriter& rewriter, dpl::Node* root)"), std::string::npos)
      << cpp.output;
  EXPECT_NE(cpp.output.find("// rule add_self (rules.dpl:2)"), std::string::npos);
}

// Calls whose signature dplc proved (a named op, its default attributes, a fixed operand list) skip the runtime's
// checks; calls with attributes, or of an op bound by the pattern, keep them.
// Calls of a named op with its default attributes and a fixed operand list are proven (built without run-time
// checks); a right-hand side that is one call rebuilds the matched node in place (Rewriter::rebuild, proven or
// checked), except in a pass with `once` rules (which tell new nodes by their ids). A right-hand side that names
// the matched node gets the checked rebuild, which looks for operands built from it.
TEST_F(Dplc, EmitsProvenCallsOnlyWhereTheSignatureIsProved) {
  write_file(dir_ / "rules.dpl",
             "pass proven {\n"
             "  rule scale: multiply(x, const(2.0)) => add(x, x);\n"
             "  rule soft: exp(x) => nn.softmax(x, axis=0);\n"
             "  rule swap: (op: subtract | divide)(x, y) => op(y, x);\n"
             "  rule nested: multiply(x, const(3.0)) => nn.relu(add(x, x));\n"
             "  rule nested_soft: log(x) => negative(nn.softmax(x, axis=0));\n"
             "  rule nested_swap: negative((op: subtract | divide)(x, y)) => negative(op(y, x));\n"
             "  rule wrap: r: sigmoid(_) => nn.relu(r);\n"
             "}\n"
             "pass with_once {\n"
             "  rule scale_once once: multiply(x, const(2.0)) => add(x, x);\n"
             "}\n");
  DplcRun cpp = run_dplc("--emit=cpp " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  const std::string& code = cpp.output;
  EXPECT_NE(code.find("rewriter.proven_rebuild(root, dpl::op::add, {x, x})"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.rebuild(root, dpl::op::nn_softmax, {x}, nn_softmax_attrs"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.rebuild(root, op, {y, x})"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.proven_call(dpl::op::add, {x, x})"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.proven_rebuild(root, dpl::op::nn_relu, {add"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.rebuild(root, dpl::op::nn_relu, {r})"), std::string::npos) << code;
  EXPECT_EQ(code.find("proven_rebuild(root, dpl::op::nn_relu, {r"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.call(dpl::op::nn_softmax, {x}, nn_softmax_attrs"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.call(op, {y, x})"), std::string::npos) << code;
  EXPECT_NE(code.find("rewriter.replace(root, add"), std::string::npos) << "the pass with a once rule\n" << code;
}

// An attribute list of literals is a static local of the rule, one per distinct list (the rewriter compares it with
// the function's interned lists, so a rewrite builds and frees none); a list with a captured value is a
// thread-local whose captured entries are assigned per rewrite. Literals are stored as calls store them: an int given for a float attribute as its double.
TEST_F(Dplc, AttributeListsAreStaticLocals) {
  write_file(dir_ / "rules.dpl",
             "pass p {\n"
             "  rule soft: exp(x) => nn.softmax(x, axis=0);\n"
             "  rule keep: nn.softmax(x, axis=a) => nn.softmax(exp(x), axis=a);\n"
             "  rule two: log(x) => add(permute_dims(x, axes=[1, 0]), permute_dims(x, axes=[1, 0]));\n"
             "  rule eps: nn.relu(x) => nn.rms_norm(x, x, axes=[-1], epsilon=1);\n"
             "  rule copy: s: nn.softmax(sigmoid(x)) => nn.softmax(x, **s, axis=1);\n"
             "  rule hwio: c: nn.conv2d(x, w, kernel_layout=\"OIHW\") => nn.conv2d(x, w, **c, kernel_layout=\"HWIO\");\n"
             "}\n");
  DplcRun cpp = run_dplc("--emit=cpp " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  const std::string& code = cpp.output;
  EXPECT_NE(code.find("static const dpl::AttrList nn_softmax_attrs1{/*axis=*/int64_t{0}};\n"
                      "  if (rewriter.rebuild(root, dpl::op::nn_softmax, {x}, nn_softmax_attrs1)) return 0;"),
            std::string::npos)
      << code;
  // A captured axis: a thread-local list whose entry is assigned on each rewrite (no list built per rewrite).
  EXPECT_NE(code.find("static thread_local dpl::AttrList nn_softmax_attrs1{/*axis=*/{}};\n"
                      "  nn_softmax_attrs1[0] = a;  // axis\n"
                      "  if (rewriter.rebuild(root, dpl::op::nn_softmax, {exp1}, nn_softmax_attrs1)) return 1;"),
            std::string::npos)
      << code;
  for (const char* call : {"permute_dims1 = rewriter.call(dpl::op::permute_dims, {x}, permute_dims_attrs1);",
                           "permute_dims2 = rewriter.call(dpl::op::permute_dims, {x}, permute_dims_attrs1);"}) {
    EXPECT_NE(code.find(call), std::string::npos) << "both calls share the one list\n" << code;
  }
  EXPECT_EQ(code.find("permute_dims_attrs2"), std::string::npos) << code;
  EXPECT_NE(code.find("{/*axes=*/std::vector<int64_t>{-1}, /*epsilon=*/1.0}"), std::string::npos) << code;
  // `**c` with a keyword beside it: c's list copied over a thread-local one, the keyword assigned after (a string
  // or list from a static constant).
  EXPECT_NE(code.find("static thread_local dpl::AttrList nn_softmax_attrs1;\n"
                      "    nn_softmax_attrs1 = s->attrs();\n"
                      "    nn_softmax_attrs1[0] = int64_t{1};  // axis\n"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("  nn_conv2d_attrs1 = c->attrs();\n"
                      "  static const dpl::AttrValue kernel_layout_value = std::string(\"HWIO\");\n"
                      "  nn_conv2d_attrs1[5] = kernel_layout_value;  // kernel_layout\n"),
            std::string::npos)
      << code;
}

// An op-class alternative that can never match (broadcast_to's operand 1 is a shape, never a permute_dims call)
// is left out of the decision tree and the generated code, and --emit=plan lists it as dropped with the reason;
// the rule still compiles (its other alternatives can match), with no diagnostic.
TEST_F(Dplc, EmitPlanShowsDroppedAlternatives) {
  write_file(dir_ / "rules.dpl",
             "pass p {\n"
             "  rule r: (op: broadcast_to | add)(x, permute_dims(y, axes=a)) => permute_dims(op(x, y), axes=a);\n"
             "}\n");
  DplcRun run = run_dplc("--emit=plan " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string& plan = run.output;
  EXPECT_NE(plan.find("pass p (rules.dpl): 1 rule, 1 alternative\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("rooted at add: 1 alternative"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("rooted at broadcast_to"), std::string::npos) << plan;
  EXPECT_NE(plan.find("dropped: rule r (rules.dpl:2), alternative 1 of 2: it can never match: operand 1 of "
                      "broadcast_to is always a shape, but permute_dims(y, axes=a) is always a tensor"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("warning"), std::string::npos) << plan;
  DplcRun cpp = run_dplc("--emit=cpp " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  EXPECT_EQ(cpp.output.find("dpl::op::broadcast_to"), std::string::npos) << cpp.output;
  EXPECT_NE(cpp.output.find("dpl::op::add"), std::string::npos) << cpp.output;
}

// --emit=plan prints each pass's decision tree: the steps two rules share once, under both names, then each
// rule's own steps; rules whose first operand has different ops are the cases of one switch.
TEST_F(Dplc, EmitPlanShowsTheSharedChecks) {
  write_file(dir_ / "rules.dpl",
             "pass p {\n"
             "  rule one: subtract(exp(x), const(1.0)) => x;\n"
             "  rule two: subtract(exp(x), const(2.0)) => x;\n"
             "  rule three: power(log(x), _) => x;\n"
             "  rule four: power(sqrt(x), _) => x;\n"
             "}\n");
  DplcRun run = run_dplc("--emit=plan " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string& plan = run.output;
  EXPECT_NE(plan.find("pass p (rules.dpl): 4 rules, 4 alternatives"), std::string::npos) << plan;
  size_t group = plan.find("rooted at subtract: 2 alternatives");
  size_t shared = plan.find("shared by one, two:", group);
  size_t head = plan.find("check root->operand(0) is dpl::op::exp", shared);
  size_t one = plan.find("rule one (rules.dpl:2):", head);
  size_t two = plan.find("rule two (rules.dpl:3):", one);
  ASSERT_NE(group, std::string::npos) << plan;
  ASSERT_NE(shared, std::string::npos) << plan;
  ASSERT_NE(head, std::string::npos) << plan;
  ASSERT_NE(one, std::string::npos) << plan;
  ASSERT_NE(two, std::string::npos) << plan;
  // The shared head check is printed once, and so is reading the constant's value; each rule keeps its own
  // compare.
  EXPECT_EQ(plan.find("is dpl::op::exp", plan.find('\n', head)), std::string::npos) << plan;
  const size_t read = plan.find("let const double scalar1 = constant1->scalar_value();", head);
  EXPECT_LT(read, one) << plan;
  EXPECT_GT(plan.find("scalar_value()", plan.find('\n', read)), plan.find("rooted at power")) << plan;
  EXPECT_NE(plan.find("fail if scalar1 != 1.0", one), std::string::npos) << plan;
  EXPECT_NE(plan.find("fail if scalar1 != 2.0", two), std::string::npos) << plan;
  size_t cases = plan.find("rooted at power: 2 alternatives");
  EXPECT_NE(plan.find("switch on the op of root->operand(0):", cases), std::string::npos) << plan;
  EXPECT_NE(plan.find("case dpl::op::log:", cases), std::string::npos) << plan;
  EXPECT_NE(plan.find("case dpl::op::sqrt:", cases), std::string::npos) << plan;
}

// A literal attribute is tested in place (dpl::attr_is_*), not against a static AttrValue: nothing to build or
// guard per visit, and rules that differ only in their literals still share the checks before them.
TEST_F(Dplc, LiteralAttributesAreTestedInPlace) {
  write_file(dir_ / "rules.dpl",
             "pass p {\n"
             "  rule t: permute_dims(permute_dims(x, axes=[1, 0]), axes=[1, 0]) => x;\n"
             "  rule h: permute_dims(permute_dims(x, axes=[0, 2, 1, 3]), axes=[0, 2, 1, 3]) => x;\n"
             "  rule m: mean(x, axis=[-1], keepdims=True) => x;\n"
             "  rule c: nn.conv2d(x, w, data_layout=\"NHWC\", out_layout=None) => x;\n"
             "  rule s: nn.softmax(x, axis=1) => x;\n"
             "  rule n: nn.rms_norm(x, w, epsilon=0.5) => x;\n"
             "}\n");
  DplcRun cpp = run_dplc("--emit=cpp " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  const std::string& code = cpp.output;
  EXPECT_EQ(code.find("dpl::AttrValue"), std::string::npos) << code;
  for (const char* test : {"if (!dpl::attr_is_ints(root->attr(0), {1, 0})) break;",
                           "if (!dpl::attr_is_ints(permute_dims1->attr(0), {0, 2, 1, 3})) return -1;",
                           "if (!dpl::attr_is_ints(root->attr(0), {-1})) return -1;",
                           "if (!dpl::attr_is_bool(root->attr(1), true)) return -1;",
                           "if (!dpl::attr_is_string(root->attr(4), \"NHWC\")) return -1;",
                           "if (!dpl::attr_is_none(root->attr(6))) return -1;",
                           "if (!dpl::attr_is_int(root->attr(0), 1)) return -1;",
                           "if (!dpl::attr_is_float(root->attr(1), 0.5)) return -1;"}) {
    EXPECT_NE(code.find(test), std::string::npos) << test << "\n" << code;
  }
  const std::string shared_check =
      "// shared by t, h\n  if (!root->operand(0)->is_call_of(dpl::op::permute_dims)) return -1;";
  const size_t shared = code.find(shared_check);
  ASSERT_NE(shared, std::string::npos) << code;
  EXPECT_EQ(code.find("is_call_of(dpl::op::permute_dims)", shared + shared_check.size()), std::string::npos) << code;
}

// Four or more rules that differ only in a constant's value become the cases of one switch on it, sorted by value,
// in the plan and in the code (the value found among the sorted literals); three compare one after the other.
TEST_F(Dplc, EmitPlanSwitchesOnTheValueOfAConstant) {
  write_file(dir_ / "rules.dpl",
             "pass four {\n"
             "  rule a: divide(x, const(4.0)) => x;\n"
             "  rule b: divide(x, const(1.0)) => x;\n"
             "  rule c: divide(x, const(3.0)) => x;\n"
             "  rule d: divide(x, const(2.0)) => x;\n"
             "}\n"
             "pass three {\n"
             "  rule e: subtract(x, const(1.0)) => x;\n"
             "  rule f: subtract(x, const(2.0)) => x;\n"
             "  rule g: subtract(x, const(4.0)) => x;\n"
             "}\n");
  DplcRun run = run_dplc("--emit=plan " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string& plan = run.output;
  const size_t switch_at = plan.find("switch on the value of scalar1:");
  ASSERT_NE(switch_at, std::string::npos) << plan;
  size_t at = switch_at;
  for (const char* value : {"case 1.0:", "case 2.0:", "case 3.0:", "case 4.0:"}) {
    const size_t next = plan.find(value, at);
    EXPECT_NE(next, std::string::npos) << value << "\n" << plan;
    at = next;
  }
  EXPECT_LT(at, plan.find("pass three")) << plan;
  EXPECT_EQ(plan.find("switch on the value", plan.find("pass three")), std::string::npos) << plan;
  EXPECT_NE(plan.find("fail if scalar1 != 4.0", plan.find("pass three")), std::string::npos) << plan;
  DplcRun cpp = run_dplc("--emit=cpp " + quote((dir_ / "rules.dpl").string()));
  ASSERT_EQ(cpp.exit_code, 0) << cpp.output;
  EXPECT_NE(cpp.output.find("    static constexpr double scalar1_cases[] = {\n      1.0, 2.0, 3.0, 4.0,\n    };\n"
                            "    switch (dpl::literal_case(scalar1, scalar1_cases)) {\n"
                            "      case 0: {\n"
                            "        // rule b (rules.dpl:3)\n"),
            std::string::npos)
      << cpp.output;
  EXPECT_NE(cpp.output.find("if (scalar1 != 2.0) break;"), std::string::npos) << cpp.output;  // pass three's
}

// --parts N: the decision trees and multi-root rules' functions spread over N source files, balanced by size; the
// first part keeps the dispatch and the rule tables, and declares what the other parts define; the ids of the ops the
// file declares are shared with the other parts. Every part is listed in the depfile; --parts 1 is the usual output.
TEST_F(Dplc, PartsSpreadTheDecisionTreesOverSeveralFiles) {
  const std::string rules =
      "op my.scale(x) : elementwise -> same_as(x);\n"
      "pass unary {\n"
      "  rule e: exp(log(x)) => x;\n"
      "  rule l: log(exp(x)) => x;\n"
      "  rule s: sqrt(multiply(x, x)) => abs(x);\n"
      "  rule t: tanh(negative(x)) => negative(tanh(x));\n"
      "  rule m: my.scale(my.scale(x)) => my.scale(x);\n"
      "}\n"
      "pass qkv {\n"
      "  rule combine {\n"
      "    a: matmul(x, wa);\n"
      "    b: matmul(x, wb);\n"
      "    where wa.rank == 2 && wb.rank == 2;\n"
      "    => let p = split(matmul(x, concat((wa, wb), axis=1)), indices_or_sections=split_indices(wa.shape[1], "
      "wb.shape[1]), axis=-1);\n"
      "       a => p[0];\n"
      "       b => p[1];\n"
      "  }\n"
      "}\n";
  write_file(dir_ / "rules.dpl", rules);
  DplcRun run = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "out").string()) +
                         " --parts 3 --depfile " + quote((dir_ / "out/rules.d").string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string first = read_file(dir_ / "out/rules.dpl.cpp");
  const std::string second = read_file(dir_ / "out/rules.dpl.part2.cpp");
  const std::string third = read_file(dir_ / "out/rules.dpl.part3.cpp");
  EXPECT_NE(second.find("// Generated by dplc from rules.dpl (part 2 of 3: functions rules.dpl.cpp calls)"),
            std::string::npos)
      << second;
  EXPECT_NE(third.find("namespace dpl_parts_rules {"), std::string::npos) << third;
  // Each tree and the multi-root rule's function is defined in exactly one part; the first declares and uses
  // those it does not hold.
  const std::vector<std::string> definitions = {
      "int match_unary_exp(", "int match_unary_log(", "int match_unary_sqrt(", "int match_unary_tanh(",
      "int match_unary_my_scale(", "int match_qkv_matmul(", "bool rule_combine("};
  int in_other_parts = 0;
  for (const std::string& start : definitions) {
    const std::string definition = start + "dpl::Rewriter& rewriter, dpl::Node* root) {";
    const bool in_first = first.find(definition) != std::string::npos;
    const int defined = in_first + (second.find(definition) != std::string::npos) +
                        (third.find(definition) != std::string::npos);
    EXPECT_EQ(defined, 1) << start;
    if (!in_first) {
      ++in_other_parts;
      const std::string name = start.substr(start.find(' ') + 1, start.size() - start.find(' ') - 2);
      EXPECT_NE(first.find("using dpl_parts_rules::" + name + ";"), std::string::npos) << first;
    }
  }
  EXPECT_GE(in_other_parts, 4);
  EXPECT_NE(second.find("(dpl::Rewriter& rewriter, dpl::Node* root) {"), std::string::npos) << second;
  EXPECT_NE(third.find("(dpl::Rewriter& rewriter, dpl::Node* root) {"), std::string::npos) << third;
  // The declared op's id is defined once, in the first part, and read by the others.
  EXPECT_NE(first.find("extern const dpl::OpId dpl_op_my_scale = register_my_scale();"), std::string::npos) << first;
  EXPECT_NE(second.find("extern const dpl::OpId dpl_op_my_scale;"), std::string::npos) << second;
  EXPECT_NE(third.find("extern const dpl::OpId dpl_op_my_scale;"), std::string::npos) << third;
  // The rule's function is declared in every part that does not define it (a tree anywhere may call it).
  for (const std::string* part : {&first, &second, &third}) {
    EXPECT_NE(part->find("bool rule_combine(dpl::Rewriter& rewriter, dpl::Node* root)"), std::string::npos);
  }
  // The dispatch and the tables stay in the first part.
  EXPECT_NE(first.find("int match_qkv(dpl::Rewriter& rewriter, dpl::Node* root) {"), std::string::npos) << first;
  EXPECT_NE(first.find("constexpr dpl::RuleInfo unary_rules[] = {"), std::string::npos);
  EXPECT_EQ(read_file(dir_ / "out/rules.d"), (dir_ / "out/rules.dpl.h").string() + " " +
                                                 (dir_ / "out/rules.dpl.cpp").string() + " " +
                                                 (dir_ / "out/rules.dpl.part2.cpp").string() + " " +
                                                 (dir_ / "out/rules.dpl.part3.cpp").string() + ": " +
                                                 (dir_ / "rules.dpl").string() + "\n");
  // The same again, byte for byte; one part is the usual single file.
  DplcRun again = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "again").string()) +
                           " --parts 3");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_file(dir_ / "again/rules.dpl.part2.cpp"), second);
  DplcRun one = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "one").string()) +
                         " --parts 1");
  DplcRun plain = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "plain").string()));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(read_file(dir_ / "one/rules.dpl.cpp"), read_file(dir_ / "plain/rules.dpl.cpp"));
  EXPECT_FALSE(fs::exists(dir_ / "one/rules.dpl.part2.cpp"));
  EXPECT_EQ(run_dplc("--parts 0 -o " + quote((dir_ / "zero").string()) + " " + quote((dir_ / "rules.dpl").string()))
                .exit_code,
            2);
  // A stem that is no identifier still names a valid namespace.
  write_file(dir_ / "2-rules.dpl", rules);
  DplcRun odd = run_dplc(quote((dir_ / "2-rules.dpl").string()) + " -o " + quote((dir_ / "odd").string()) +
                         " --parts 2");
  ASSERT_EQ(odd.exit_code, 0) << odd.output;
  EXPECT_NE(read_file(dir_ / "odd/2-rules.dpl.part2.cpp").find("namespace dpl_parts_2_rules {"), std::string::npos);
}

TEST_F(Dplc, UsageErrorsExitTwo) {
  write_file(dir_ / "rules.dpl", kGood);
  EXPECT_EQ(run_dplc("").exit_code, 2);
  EXPECT_EQ(run_dplc(quote((dir_ / "rules.dpl").string())).exit_code, 2);  // neither -o, --check nor --emit
  EXPECT_EQ(run_dplc("--emit=tree " + quote((dir_ / "rules.dpl").string())).exit_code, 2);
  EXPECT_EQ(run_dplc("--frobnicate " + quote((dir_ / "rules.dpl").string())).exit_code, 2);
  EXPECT_EQ(run_dplc("--check --namespace 'not a namespace' " + quote((dir_ / "rules.dpl").string())).exit_code, 2);
  DplcRun help = run_dplc("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--depfile"), std::string::npos);
}

TEST_F(Dplc, UnreadableInputIsAnInputError) {
  DplcRun run = run_dplc("--check " + quote((dir_ / "missing.dpl").string()));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("missing.dpl"), std::string::npos) << run.output;
}

}  // namespace

// --- dplc --test and --tests-manifest -------------------------------------------------------------------------

constexpr char kTwoAdds[] = R"(@R.function
def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    with R.dataflow():
        y: R.Tensor((4,), dtype="float32") = R.add(x, x)
        R.output(y)
    return y
)";
constexpr char kTimesTwo[] = R"(@R.function
def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    with R.dataflow():
        y: R.Tensor((4,), dtype="float32") = R.multiply(x, R.const(2.0, "float32"))
        R.output(y)
    return y
)";
constexpr char kTimesThree[] = R"(@R.function
def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
    with R.dataflow():
        y: R.Tensor((4,), dtype="float32") = R.multiply(x, R.const(3.0, "float32"))
        R.output(y)
    return y
)";

class DplcTest : public Dplc {
 protected:
  void SetUp() override {
    Dplc::SetUp();
    write_file(dir_ / "data/two_adds.relax", kTwoAdds);
    write_file(dir_ / "data/times_two.relax", kTimesTwo);
    write_file(dir_ / "data/times_three.relax", kTimesThree);
  }
};

TEST_F(DplcTest, PassingTestsPrintPassAndExitZero) {
  write_file(dir_ / "rules.dpl", R"(pass double {
  rule add_self: add(x, x) => multiply(x, const(2.0));
  test doubles { input "data/two_adds.relax"; expect "data/times_two.relax"; }
  test leaves_products_alone { input "data/times_two.relax"; expect unchanged; seed 9; }
}
)");
  DplcRun run = run_dplc("--test " + quote((dir_ / "rules.dpl").string()));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "PASS doubles (max abs error 0)\nPASS leaves_products_alone (max abs error 0)\n");
}

TEST_F(DplcTest, SymbolicDimensionsTakeTheTestsValues) {
  auto dynamic = [](const std::string& value) {
    return "@R.function\ndef main(x: R.Tensor((\"n\", 4), dtype=\"float32\")) -> R.Tensor((\"n\", 4), "
           "dtype=\"float32\"):\n    n = T.int64()\n    with R.dataflow():\n        y: R.Tensor((n, 4), "
           "dtype=\"float32\") = " + value + "\n        R.output(y)\n    return y\n";
  };
  write_file(dir_ / "data/dynamic.relax", dynamic("R.add(x, x)"));
  write_file(dir_ / "data/dynamic_doubled.relax", dynamic("R.multiply(x, R.const(2.0, \"float32\"))"));
  write_file(dir_ / "rules.dpl", R"(pass double {
  rule add_self: add(x, x) => multiply(x, const(2.0));
  test given { input "data/dynamic.relax"; expect "data/dynamic_doubled.relax"; dims n = 3; }
  test not_given { input "data/dynamic.relax"; expect "data/dynamic_doubled.relax"; }
}
)");
  DplcRun run = run_dplc("--test " + quote((dir_ / "rules.dpl").string()));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_EQ(run.output,
            "PASS given (max abs error 0)\n"
            "FAIL not_given: main: cannot draw random inputs: parameter 'x' has symbolic dimension 'n' without a "
            "value; give it a value in the test: `dims n = N;`\n");
}

TEST_F(DplcTest, AWrongExpectationFailsWithTheStructuralDifference) {
  write_file(dir_ / "rules.dpl", R"(pass double {
  rule add_self: add(x, x) => multiply(x, const(2.0));
}
test wrong_constant { pass double; input "data/two_adds.relax"; expect "data/times_three.relax"; }
test not_unchanged { pass double; input "data/two_adds.relax"; expect unchanged; }
test fine { pass double; input "data/two_adds.relax"; expect "data/times_two.relax"; }
)");
  DplcRun run = run_dplc("--test " + quote((dir_ / "rules.dpl").string()));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("FAIL wrong_constant: the result differs from the expectation: main: binding y operand "
                            "1: constant float32 2.0 vs float32 3.0"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("FAIL not_unchanged: the pass changed the input (expect unchanged): main: binding y: op "
                            "multiply vs add"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("PASS fine"), std::string::npos) << run.output;
}

TEST_F(DplcTest, ARuleThatChangesTheNumbersFailsWithTheError) {
  // The expectation matches the rule, but the rule is wrong: x + x is not x * 3.
  write_file(dir_ / "rules.dpl", R"(pass triple {
  rule add_self: add(x, x) => multiply(x, const(3.0));
  test wrong_rule { input "data/two_adds.relax"; expect "data/times_three.relax"; }
  test meant_to_differ { input "data/two_adds.relax"; expect "data/times_three.relax"; numbers differ; }
}
test said_to_differ_but_same { pass triple; input "data/times_two.relax"; expect unchanged; numbers differ; }
)");
  DplcRun run = run_dplc("--test " + quote((dir_ / "rules.dpl").string()));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("FAIL wrong_rule: the pass changes what the graph computes (seed 1): main output: max abs "
                            "error "),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("PASS meant_to_differ (numbers differ as expected: main output: max abs error"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("FAIL said_to_differ_but_same: the numbers did not change"), std::string::npos)
      << run.output;
}

TEST_F(DplcTest, AFileWithoutTestsOrWithErrorsFails) {
  write_file(dir_ / "none.dpl", "rule add_self: add(x, x) => multiply(x, const(2.0));\n");
  DplcRun none = run_dplc("--test " + quote((dir_ / "none.dpl").string()));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.output.find("has no tests"), std::string::npos) << none.output;

  write_file(dir_ / "missing.dpl", R"(rule add_self: add(x, x) => multiply(x, const(2.0));
test t { pass missing; input "data/nothing_here.relax"; expect unchanged; }
)");
  DplcRun missing = run_dplc("--test " + quote((dir_ / "missing.dpl").string()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("error: cannot read 'data/nothing_here.relax': no such file"), std::string::npos)
      << missing.output;
  EXPECT_EQ(missing.output.find("PASS"), std::string::npos) << missing.output;
}

TEST_F(DplcTest, ManifestListsTheTestsWithAbsolutePaths) {
  write_file(dir_ / "rules.dpl", R"(pass double {
  rule add_self: add(x, x) => multiply(x, const(2.0));
  test doubles { input "data/two_adds.relax"; expect "data/times_two.relax"; tolerance 0.001; }
}
pipeline all = double;
test everything { pipeline all; input "data/two_adds.relax"; expect unchanged; seed 5; numbers differ; dims s = 4, b = 2; }
)");
  fs::path manifest = dir_ / "out/rules.dpl.tests";
  DplcRun run = run_dplc(quote((dir_ / "rules.dpl").string()) + " -o " + quote((dir_ / "out").string()) +
                         " --tests-manifest " + quote(manifest.string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string data = fs::absolute(dir_ / "data").lexically_normal().string();
  EXPECT_EQ(read_file(manifest),
            "# dpl rule tests: name, kind, target, input, expect, seed, tolerance, numbers, dims\n"
            "doubles\tpass\tdouble\t" + data + "/two_adds.relax\t" + data + "/times_two.relax\t1\t0.001\tsame\t-\n"
            "everything\tpipeline\tall\t" + data + "/two_adds.relax\t-\t5\t-\tdiffer\tb=2,s=4\n");
  // All or nothing: a manifest without -o is a usage error.
  EXPECT_EQ(run_dplc(quote((dir_ / "rules.dpl").string()) + " --check --tests-manifest x").exit_code, 2);
}
