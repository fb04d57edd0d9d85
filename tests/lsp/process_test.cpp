// dpl-lsp run as a process, as an editor runs it: framed messages on stdin, replies on stdout, the exit code.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server.h"
#include "transport.h"

namespace dpl::lsp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

struct Session {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs dpl-lsp on `messages` (each framed) and collects what it printed.
Session run(const std::vector<std::string>& messages) {
  // One directory per test and process: ctest runs the tests of this file in parallel.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path dir = fs::temp_directory_path() / ("dpl_lsp_" + test + "_" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    std::ofstream in(dir / "in");
    for (const std::string& message : messages) write_message(in, message);
  }
  const std::string command = std::string(DPL_LSP_PATH) + " <" + (dir / "in").string() + " >" +
                              (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(command.c_str());
  Session session;
  session.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const auto slurp = [](const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  session.out = slurp(dir / "out");
  session.err = slurp(dir / "err");
  fs::remove_all(dir);
  return session;
}

std::string open_message(const std::string& path, const std::string& text) {
  return nlohmann::json{{"jsonrpc", "2.0"},
                        {"method", "textDocument/didOpen"},
                        {"params", {{"textDocument", {{"uri", uri_of_path(path)}, {"text", text}}}}}}
      .dump();
}

TEST(DplLspProcess, ChecksAnExampleAndExitsCleanly) {
  const std::string example = DPL_EXAMPLES_DIR "/seed000/add_self.dpl";
  std::ifstream file(example);
  std::stringstream text;
  text << file.rdbuf();
  const Session session = run({R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
                               open_message(example, text.str()),
                               open_message("/nowhere/bad.dpl", "rule r: add(x, x) => nosuch(x);"),
                               R"({"jsonrpc":"2.0","id":2,"method":"shutdown"})",
                               R"({"jsonrpc":"2.0","method":"exit"})"});
  EXPECT_EQ(session.exit_code, 0) << session.err;
  std::istringstream replies(session.out);
  std::ostringstream log;
  std::vector<nlohmann::json> messages;
  while (const std::optional<std::string> body = read_message(replies, log)) {
    messages.push_back(nlohmann::json::parse(*body));
  }
  ASSERT_EQ(messages.size(), 4u) << session.out;
  EXPECT_EQ(messages[0]["id"], 1);
  EXPECT_TRUE(messages[1]["params"]["diagnostics"].empty()) << messages[1].dump(2);  // the example is clean
  ASSERT_EQ(messages[2]["params"]["diagnostics"].size(), 1u);
  EXPECT_THAT(messages[2]["params"]["diagnostics"][0]["message"].get<std::string>(), HasSubstr("nosuch"));
  EXPECT_EQ(messages[3]["id"], 2);
}

TEST(DplLspProcess, InputEndingWithoutExitIsExitCodeOne) {
  const Session session = run({"{broken", R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"});
  EXPECT_EQ(session.exit_code, 1);
  EXPECT_THAT(session.out, HasSubstr("-32700"));
  EXPECT_THAT(session.out, HasSubstr("\"id\":1"));
}

}  // namespace
}  // namespace dpl::lsp
