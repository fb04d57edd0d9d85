// dpl_torch_eval: evaluates a Relax file's `main` with the reference interpreter on float32 arguments read from a
// raw file, for tests/torch_import/torch_import_test.py to compare the imported graph with what PyTorch computes.
//   dpl_torch_eval MODEL.relax ARGS.bin OUT.bin
// ARGS.bin: every parameter's elements, in parameter order, row-major, little-endian float32; OUT.bin: the
// result's elements the same way. Exit 0 on success, 1 with a message on stderr otherwise.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "dpl/interp/interpreter.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"

namespace {

int fail(const std::string& message) {
  std::cerr << "dpl_torch_eval: error: " << message << '\n';
  return 1;
}

// The static shape of a float32 tensor parameter into `shape`; false with `error` set for any other parameter.
bool static_float32_shape(const dpl::Node& param, std::vector<int64_t>& shape, std::string& error) {
  const dpl::TypeRef type = param.type();
  if (!type->is_tensor() || type->dtype() != dpl::DType::Float32 || !type->has_shape()) {
    error = "parameter " + param.name() + " is not a float32 tensor of known shape";
    return false;
  }
  for (const dpl::Dim& dim : type->dims()) {
    if (!dim.is_static()) {
      error = "parameter " + param.name() + " has a symbolic dimension";
      return false;
    }
    shape.push_back(dim.extent());
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: dpl_torch_eval MODEL.relax ARGS.bin OUT.bin");
  std::string error;
  std::unique_ptr<dpl::SourceFile> source = dpl::SourceFile::load(argv[1], error);
  if (source == nullptr) return fail(error);
  dpl::DiagnosticEngine diags;
  std::unique_ptr<dpl::Module> module = dpl::read_module(*source, diags);
  diags.print(std::cerr);
  if (module == nullptr) return 1;
  const dpl::Function* function = module->find("main");
  if (function == nullptr) return fail(std::string(argv[1]) + " has no function main");

  std::ifstream args_file(argv[2], std::ios::binary);
  if (!args_file) return fail(std::string("cannot read ") + argv[2]);
  std::vector<dpl::Tensor> args;
  for (const dpl::Node* param : function->params()) {
    std::vector<int64_t> shape;
    if (!static_float32_shape(*param, shape, error)) return fail(error);
    int64_t count = 1;
    for (int64_t extent : shape) count *= extent;
    std::vector<float> raw(static_cast<size_t>(count));
    if (!args_file.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(count * sizeof(float)))) {
      return fail(std::string(argv[2]) + " ends before parameter " + param->name());
    }
    args.push_back(dpl::Tensor::from_values(dpl::DType::Float32, shape, std::vector<double>(raw.begin(), raw.end())));
  }
  if (args_file.peek() != std::char_traits<char>::eof()) return fail(std::string(argv[2]) + " has extra bytes");

  const dpl::EvalResult result = dpl::Interpreter().evaluate(*module, *function, args);
  if (!result.ok()) return fail(result.error);
  if (!result.value.is_tensor()) return fail("the result is not a tensor");
  const std::vector<double> values = result.value.tensor().values();
  const std::vector<float> raw(values.begin(), values.end());
  std::ofstream out(argv[3], std::ios::binary);
  out.write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(float)));
  if (!out) return fail(std::string("cannot write ") + argv[3]);
  return 0;
}
