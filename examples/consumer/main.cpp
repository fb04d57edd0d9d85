// The consumer project's program: runs its compiled pass on a TVMScript Relax file and prints the result.
#include <iostream>
#include <memory>
#include <string>

#include "dpl/rewrite/driver.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"
#include "strength.dpl.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer FILE.relax\n";
    return 2;
  }
  std::string error;
  std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(argv[1], error);
  if (source == nullptr) {
    std::cerr << "consumer: " << error << '\n';
    return 1;
  }
  dpl::DiagnosticEngine diags;
  std::unique_ptr<dpl::Module> module = dpl::read_module(*source, diags);
  diags.print(std::cerr);
  if (module == nullptr) return 1;

  const dpl::PassResult result = dpl::run_pass(consumer::consumer_strength_pass(), *module);
  if (!result.ok()) {
    std::cerr << "consumer: " << result.error << '\n';
    return 1;
  }
  std::cerr << "consumer: " << result.stats.rewrites << " rewrite(s)\n";
  std::cout << dpl::print_module(*module);
  return 0;
}
