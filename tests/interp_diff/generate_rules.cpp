// Build-time generator of the differential test's rule files: random_NN.dpl in the given directory. A file is
// rewritten only when its text changes, so that a rebuild does not recompile the pass library for nothing.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "random_rules.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: dpl_generate_random_rules OUT_DIR NUM_FILES RULES_PER_FILE\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int files = std::stoi(argv[2]);
  const int rules = std::stoi(argv[3]);
  for (int i = 0; i < files; ++i) {
    std::string name = "random_" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    std::string text = dpl::testing::random_rule_file(1000 + static_cast<uint64_t>(i), name, rules);
    std::string path = dir + "/" + name + ".dpl";
    std::ifstream existing(path);
    std::stringstream old;
    old << existing.rdbuf();
    if (existing && old.str() == text) continue;
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out) {
      std::cerr << "cannot write " << path << "\n";
      return 1;
    }
  }
  return 0;
}
