// Build-time generator of the differential test's rule files: random_NN.dpl (or, with `multi_root`,
// random_multi_NN.dpl) in the given directory. A file is rewritten only when its text changes, so that a rebuild
// does not recompile the pass library for nothing.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "random_rules.h"

int main(int argc, char** argv) {
  const bool multi_root = argc == 5 && std::string(argv[4]) == "multi_root";
  if (argc != 4 && !multi_root) {
    std::cerr << "usage: dpl_generate_random_rules OUT_DIR NUM_FILES RULES_PER_FILE [multi_root]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int files = std::stoi(argv[2]);
  const int rules = std::stoi(argv[3]);
  for (int i = 0; i < files; ++i) {
    std::string name = std::string(multi_root ? "random_multi_" : "random_") + (i < 10 ? "0" : "") + std::to_string(i);
    std::string text = multi_root ? dpl::testing::random_multi_root_file(5000 + static_cast<uint64_t>(i), name, rules)
                                  : dpl::testing::random_rule_file(1000 + static_cast<uint64_t>(i), name, rules);
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
