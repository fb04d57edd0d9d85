// dpl-opt run as a process: rewriting with the bundled passes, --list-passes, --equal, --stats,
// --print-after-each, --load plugins, exit codes, diagnostics for bad IR, and -o left untouched on error.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

extern char** environ;

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
namespace fs = std::filesystem;

const std::string kExampleDir = DPL_EXAMPLES_DIR "/seed000/";

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out;
  std::string err;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

class DplOpt : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "dpl-opt-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome run(const std::vector<std::string>& args) {
    const std::string out_path = (dir_ / "stdout.txt").string();
    const std::string err_path = (dir_ / "stderr.txt").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv_strings = {DPL_OPT_PATH};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);

    Outcome outcome;
    pid_t pid = 0;
    const int spawn_error = posix_spawn(&pid, DPL_OPT_PATH, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(spawn_error, 0) << "cannot start " << DPL_OPT_PATH;
    if (spawn_error != 0) return outcome;
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
    outcome.out = read_text(out_path);
    outcome.err = read_text(err_path);
    return outcome;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(DplOpt, ListsTheBundledPasses) {
  const Outcome result = run({"--list-passes"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("description"));
  EXPECT_THAT(result.out, MatchesRegex("(.|\n)*seed000_add_self +add_self\\.dpl +1 +x \\+ x => x \\* 2(.|\n)*"));
  EXPECT_THAT(result.out, HasSubstr("seed000_quadruple"));
  EXPECT_THAT(result.out, HasSubstr("seed000_distribute"));
}

TEST_F(DplOpt, RewritesToTheSeedsResultAndWritesTheOutputFile) {
  const std::string output = path("out.relax");
  Outcome result = run({"-p", "seed000_add_self", kExampleDir + "add_self.input.relax", "-o", output});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(read_text(output), HasSubstr("R.multiply(x, R.const(2.0, \"float32\"))"));

  result = run({"--equal", output, kExampleDir + "add_self.expected.relax"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out, "equal\n");
}

TEST_F(DplOpt, WritingThroughASymlinkReplacesTheFileItNamesAndKeepsItsMode) {
  const fs::path target = path("target.relax");
  write_text(target, "old\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(target, path("link.relax"));
  const Outcome result =
      run({"-p", "seed000_add_self", kExampleDir + "add_self.input.relax", "-o", path("link.relax")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::is_symlink(path("link.relax")));
  EXPECT_THAT(read_text(target), HasSubstr("R.multiply"));
  EXPECT_EQ(fs::status(target).permissions(), fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(DplOpt, AnOutputInAMissingDirectoryIsAnError) {
  const Outcome result = run({kExampleDir + "add_self.input.relax", "-o", path("no/such/dir/out.relax")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("out.relax"));
}

TEST_F(DplOpt, PrintsToStdoutWithoutDashO) {
  const Outcome result = run({"-p", "seed000_quadruple", kExampleDir + "quadruple.input.relax"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("R.multiply(x, R.const(4.0, \"float32\"))"));
  EXPECT_THAT(result.out, Not(HasSubstr("R.add")));
}

TEST_F(DplOpt, RunsCommaSeparatedPassesInTheGivenOrder) {
  // add_self first leaves no add for quadruple; quadruple first leaves none for add_self.
  const std::string input = kExampleDir + "add_self.input.relax";
  Outcome result = run({"-p", "seed000_add_self,seed000_quadruple", input, "-o", path("a.relax")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  result = run({"-p", "seed000_quadruple", "-p", "seed000_add_self", input, "-o", path("b.relax")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(run({"--equal", path("a.relax"), kExampleDir + "add_self.expected.relax"}).exit_code, 0);
  EXPECT_EQ(run({"--equal", path("b.relax"), kExampleDir + "quadruple.expected.relax"}).exit_code, 0);
}

TEST_F(DplOpt, EqualSaysWhereTwoFilesDiffer) {
  const Outcome result =
      run({"--equal", kExampleDir + "add_self.input.relax", kExampleDir + "add_self.expected.relax"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.out, HasSubstr("not equal: "));
  EXPECT_THAT(result.out, HasSubstr("add"));
}

TEST_F(DplOpt, StatsGoToStderr) {
  const Outcome result = run({"-p", "seed000_distribute", kExampleDir + "distribute.input.relax", "--stats"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("@R.function"));
  EXPECT_THAT(result.err, HasSubstr("pass seed000_distribute: 2 rewrites"));
  EXPECT_THAT(result.err, HasSubstr("nodes visited"));
  EXPECT_THAT(result.err, MatchesRegex("(.|\n)*[0-9.]+ (us|ms|s)\n(.|\n)*"));
  EXPECT_THAT(result.err, MatchesRegex("(.|\n)*distribute_const_multiply +distribute\\.dpl:[0-9]+ +2\n(.|\n)*"));
}

TEST_F(DplOpt, VerifyEachAcceptsTheBundledPasses) {
  const Outcome result = run({"--verify-each", "-p", "seed000_distribute", kExampleDir + "distribute.input.relax"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(DplOpt, UnknownPassIsAnInputErrorListingTheKnownOnes) {
  const std::string output = path("out.relax");
  const Outcome result =
      run({"-p", "seed000_add_self,no_such_pass", kExampleDir + "add_self.input.relax", "-o", output});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("unknown pass or pipeline 'no_such_pass'"));
  EXPECT_THAT(result.err, HasSubstr("seed000_add_self"));
  EXPECT_THAT(result.err, HasSubstr("seed000_distribute"));
  EXPECT_FALSE(fs::exists(output));
}

TEST_F(DplOpt, BadIrIsReportedWithFileLineAndColumnAndNothingIsWritten) {
  const std::string input = path("bad.relax");
  write_text(input,
             "# from tvm.script import relax as R\n"
             "\n"
             "@R.function\n"
             "def main(x: R.Tensor((4,), dtype=\"float32\")) -> R.Tensor((4,), dtype=\"float32\"):\n"
             "    with R.dataflow():\n"
             "        y: R.Tensor((4,), dtype=\"float32\") = R.no_such_op(x)\n"
             "        R.output(y)\n"
             "    return y\n");
  const std::string output = path("out.relax");
  write_text(output, "previous contents\n");
  const Outcome result = run({"-p", "seed000_add_self", input, "-o", output});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, MatchesRegex("(.|\n)*bad\\.relax:6:[0-9]+: error: (.|\n)*"));
  EXPECT_THAT(result.err, HasSubstr("R.no_such_op(x)"));  // the source line
  EXPECT_THAT(result.err, HasSubstr("^"));                // and a caret under it
  EXPECT_EQ(read_text(output), "previous contents\n");
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp"))) << "a temporary file was left behind";
  }
}

TEST_F(DplOpt, MissingInputFileIsAnInputError) {
  const Outcome result = run({"-p", "seed000_add_self", path("missing.relax")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("missing.relax"));
}

TEST_F(DplOpt, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run({}).exit_code, 2);
  EXPECT_EQ(run({"--no-such-option"}).exit_code, 2);
  EXPECT_EQ(run({"--equal", kExampleDir + "add_self.input.relax"}).exit_code, 2);
  EXPECT_EQ(run({"--list-passes", kExampleDir + "add_self.input.relax"}).exit_code, 2);
  EXPECT_EQ(run({"-p"}).exit_code, 2);
  const Outcome result = run({"a.relax", "b.relax"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err, "");
}

TEST_F(DplOpt, HelpDescribesTheOptions) {
  const Outcome result = run({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  for (const char* option : {"--passes", "--output", "--list-passes", "--equal", "--stats", "--verify-each",
                             "--print-after-each", "--load"}) {
    EXPECT_THAT(result.out, HasSubstr(option));
  }
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

TEST_F(DplOpt, PrintAfterEachShowsTheModuleAfterEveryPassOnStderr) {
  const Outcome result = run({"--print-after-each", "-p", "seed000_add_self,seed000_quadruple",
                              kExampleDir + "add_self.input.relax"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const size_t first = result.err.find("# ---- after pass seed000_add_self ----\n");
  const size_t second = result.err.find("# ---- after pass seed000_quadruple ----\n");
  ASSERT_NE(first, std::string::npos) << result.err;
  ASSERT_NE(second, std::string::npos) << result.err;
  EXPECT_LT(first, second);
  // add_self turns both adds into multiplies, so quadruple has nothing left to rewrite; each pass prints once.
  EXPECT_EQ(count_of(result.err, "@R.function"), 2u);
  EXPECT_THAT(result.err.substr(first, second - first), HasSubstr("R.multiply(x, R.const(2.0, \"float32\"))"));
  // stdout holds only the final module.
  EXPECT_EQ(count_of(result.out, "@R.function"), 1u);
  EXPECT_THAT(result.out, Not(HasSubstr("after pass")));
}

const std::string kPluginInput = DPL_PLUGIN_DIR "/relu_twice.input.relax";

TEST_F(DplOpt, LoadsAPassPluginAndRunsItsPass) {
  const Outcome before = run({kPluginInput});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(count_of(before.out, "R.nn.relu("), 2u);

  const Outcome result = run({"--load", DPL_TEST_PLUGIN, "-p", "test_plugin_relu_idempotent", kPluginInput,
                              "--stats"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(count_of(result.out, "R.nn.relu("), 1u) << result.out;
  EXPECT_THAT(result.err, MatchesRegex("(.|\n)*relu_of_relu +relu_idempotent\\.dpl:3 +1\n(.|\n)*"));
}

TEST_F(DplOpt, ListPassesShowsLoadedPassesBesideTheLinkedOnes) {
  EXPECT_THAT(run({"--list-passes"}).out, Not(HasSubstr("test_plugin_relu_idempotent")));
  const Outcome result = run({"--load", DPL_TEST_PLUGIN, "--list-passes"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, MatchesRegex("(.|\n)*test_plugin_relu_idempotent +relu_idempotent\\.dpl +1 +relu(.|\n)*"));
  EXPECT_THAT(result.out, HasSubstr("seed000_add_self"));
}

TEST_F(DplOpt, APluginThatCannotBeLoadedIsAnInputError) {
  Outcome result = run({"--load", path("no-such-plugin.so"), "--list-passes"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("dpl-opt: error: cannot load plugin"));
  EXPECT_THAT(result.err, HasSubstr("no-such-plugin.so"));

  write_text(path("not-a-library.so"), "this is text\n");
  result = run({"--load", path("not-a-library.so"), "-p", "seed000_add_self", kExampleDir + "add_self.input.relax"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("not-a-library.so"));
  EXPECT_EQ(result.out, "");
}

TEST_F(DplOpt, APluginThatRegistersNoPassIsAnInputError) {
  const Outcome result = run({"--load", DPL_TEST_PLUGIN_WITHOUT_PASSES, "--list-passes"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("registers no new pass"));
  EXPECT_EQ(result.out, "");
}

}  // namespace
