// Tests of StagedOutputs and write_file_atomically: all outputs of a run or none, no temporary files left behind.
#include "dpl/support/file_output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dpl {
namespace {

namespace fs = std::filesystem;

class FileOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dpl_file_output_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void write(const std::string& file, const std::string& text) { std::ofstream(file) << text; }
  static std::string read(const std::string& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The names in the directory, to see that no temporary file stayed.
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

TEST_F(FileOutput, CommitReplacesEveryStagedFile) {
  write(path("a.h"), "old a");
  write(path("b.cpp"), "old b");
  StagedOutputs outputs;
  std::string error;
  ASSERT_TRUE(outputs.stage(path("a.h"), "new a", error)) << error;
  ASSERT_TRUE(outputs.stage(path("b.cpp"), "new b", error)) << error;
  EXPECT_EQ(read(path("a.h")), "old a");  // nothing visible before commit()
  ASSERT_TRUE(outputs.commit(error)) << error;
  EXPECT_EQ(read(path("a.h")), "new a");
  EXPECT_EQ(read(path("b.cpp")), "new b");
  EXPECT_EQ(entries(), 2u);
}

TEST_F(FileOutput, AFailedStageLeavesThePreviousOutputsAndNoTemporaryFiles) {
  write(path("a.h"), "old a");
  std::string error;
  {
    StagedOutputs outputs;
    ASSERT_TRUE(outputs.stage(path("a.h"), "new a", error)) << error;
    EXPECT_FALSE(outputs.stage(path("missing/a.d"), "depfile", error));
    EXPECT_NE(error.find("cannot write " + path("missing/a.d")), std::string::npos) << error;
  }  // not committed: the staged temporary goes away
  EXPECT_EQ(read(path("a.h")), "old a");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(FileOutput, KeepsPermissionsAndFollowsSymbolicLinks) {
  write(path("target.txt"), "old");
  ASSERT_EQ(::chmod(path("target.txt").c_str(), 0640), 0);
  fs::create_symlink(path("target.txt"), path("link.txt"));
  std::string error;
  ASSERT_TRUE(write_file_atomically(path("link.txt"), "new", error)) << error;
  EXPECT_TRUE(fs::is_symlink(path("link.txt")));
  EXPECT_EQ(read(path("target.txt")), "new");
  struct stat info {};
  ASSERT_EQ(::stat(path("target.txt").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(), 2u);
}

}  // namespace
}  // namespace dpl
