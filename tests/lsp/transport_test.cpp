// dpl-lsp's framing: Content-Length messages read back to back, bad headers skipped, cut bodies ending the input.
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "transport.h"

namespace dpl::lsp {
namespace {

using ::testing::HasSubstr;

TEST(Transport, WrittenMessagesReadBackInOrder) {
  std::stringstream stream;
  write_message(stream, R"({"a":1})");
  write_message(stream, "{}");
  EXPECT_EQ(stream.str(), "Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}");
  std::ostringstream log;
  EXPECT_EQ(read_message(stream, log), R"({"a":1})");
  EXPECT_EQ(read_message(stream, log), "{}");
  EXPECT_FALSE(read_message(stream, log).has_value());
  EXPECT_TRUE(log.str().empty());
}

TEST(Transport, OtherHeadersAndCaseAreAccepted) {
  std::istringstream in("content-length:  3\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1]");
  std::ostringstream log;
  EXPECT_EQ(read_message(in, log), "[1]");
}

TEST(Transport, AHeaderBlockWithoutALengthIsSkipped) {
  std::istringstream in("Content-Type: x\r\n\r\nContent-Length: abc\r\n\r\nContent-Length: 2\r\n\r\n{}");
  std::ostringstream log;
  EXPECT_EQ(read_message(in, log), "{}");
  EXPECT_THAT(log.str(), HasSubstr("without a valid Content-Length"));
}

TEST(Transport, ATooLargeBodyIsSkippedWhole) {
  const std::string big(100, 'x');
  std::istringstream in("Content-Length: 999999999999\r\n\r\n" + big);
  std::ostringstream log;
  EXPECT_FALSE(read_message(in, log).has_value());
  EXPECT_THAT(log.str(), HasSubstr("skipped a message of 999999999999 bytes"));
}

TEST(Transport, ABodyCutShortEndsTheInput) {
  std::istringstream in("Content-Length: 10\r\n\r\n{}");
  std::ostringstream log;
  EXPECT_FALSE(read_message(in, log).has_value());
}

}  // namespace
}  // namespace dpl::lsp
