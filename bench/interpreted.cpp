// Loads rule files for the rule interpreter once per process (the benchmarks' interpreted rows).
#include "interpreted.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "dpl/compiler/rule_interpreter.h"

namespace dpl::bench {
namespace {

struct LoadedFile {
  std::unique_ptr<compiler::LoadedRules> rules;
  std::vector<const PassDef*> passes;
};

const LoadedFile& loaded_file(const std::string& path) {
  static std::map<std::string, LoadedFile> loaded;  // alive while benchmarks run
  auto [it, inserted] = loaded.try_emplace(path);
  if (!inserted) return it->second;
  std::string error;
  it->second.rules = compiler::load_rules(path, std::cerr, error);
  if (it->second.rules == nullptr) {
    std::cerr << "bench: cannot interpret " << path << (error.empty() ? "" : ": " + error) << "\n";
    std::exit(1);
  }
  it->second.passes = it->second.rules->interpreter->passes();
  return it->second;
}

}  // namespace

const std::vector<const PassDef*>& interpreted_passes(const std::string& path) { return loaded_file(path).passes; }

const PassDef& interpreted_pass(const std::string& path, std::string_view name) {
  const PassDef* pass = loaded_file(path).rules->interpreter->find_pass(name);
  if (pass == nullptr) {
    std::cerr << "bench: " << path << " has no pass " << name << "\n";
    std::exit(1);
  }
  return *pass;
}

}  // namespace dpl::bench
