// dpl-bench-rules: writes a generated benchmark rule set (rule_text.h) to a .dpl file at build time.
#include <charconv>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "rule_text.h"

namespace {

int usage() {
  std::fputs("usage: dpl-bench-rules same-root|diverse|mixed COUNT OUTPUT.dpl\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return usage();
  const std::string_view kind = argv[1];
  const std::string_view count_text = argv[2];
  size_t count = 0;
  auto [end, error] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (error != std::errc() || end != count_text.data() + count_text.size() || count == 0) {
    std::fprintf(stderr, "dpl-bench-rules: COUNT must be a positive integer, not '%s'\n", argv[2]);
    return 2;
  }
  std::string text;
  if (kind == "same-root") {
    text = dpl::bench::same_root_rules(count);
  } else if (kind == "diverse") {
    text = dpl::bench::diverse_rules(count);
  } else if (kind == "mixed") {
    text = dpl::bench::mixed_rules(count);
  } else {
    return usage();
  }
  std::ofstream out(argv[3], std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "dpl-bench-rules: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
