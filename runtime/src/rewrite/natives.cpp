// The registry of native predicates and rewriters, and the loading of natives libraries (natives.h).
#include "dpl/rewrite/natives.h"

#include <algorithm>

#include "dpl/support/shared_library.h"

namespace dpl {

namespace {

std::string operands_text(size_t arity, std::string_view operand) {
  std::string text;
  for (size_t i = 0; i < arity; ++i) text += (i == 0 ? "" : ", ") + std::string(operand);
  return text;
}

}  // namespace

std::string NativeFunction::signature() const {
  if (kind == NativeKind::Predicate) return "bool " + name + "(" + operands_text(arity, "const dpl::Node*") + ")";
  return "dpl::Node* " + name + "(dpl::Rewriter&" + (arity == 0 ? "" : ", ") + operands_text(arity, "dpl::Node*") +
         ")";
}

NativeRegistry& NativeRegistry::global() {
  static NativeRegistry registry;
  return registry;
}

const NativeFunction& NativeRegistry::add(NativeFunction native) {
  if (native.origin.empty()) native.origin = origin_;
  if (auto it = by_name_.find(native.name); it != by_name_.end()) {
    const NativeFunction& known = *it->second;
    if (known.kind == native.kind && known.arity == native.arity) return known;
    throw std::invalid_argument("native '" + native.name + "' is already registered as " + known.signature() +
                                " (" + known.origin + "); " + native.origin + " registers " + native.signature());
  }
  natives_.push_back(std::move(native));
  by_name_.emplace(natives_.back().name, &natives_.back());
  return natives_.back();
}

const NativeFunction* NativeRegistry::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<const NativeFunction*> NativeRegistry::all() const {
  std::vector<const NativeFunction*> natives;
  for (const auto& [name, native] : by_name_) natives.push_back(native);
  return natives;
}

bool load_natives(const std::string& path, std::string& error) {
  NativeRegistry& registry = NativeRegistry::global();
  const size_t natives_before = registry.size();
  const size_t errors_before = registry.registration_errors().size();
  registry.set_origin(path);
  const bool loaded = load_shared_library(path, error);
  registry.set_origin("linked in");
  if (!loaded) {
    error = "cannot load natives library: " + error;
    return false;
  }
  const std::vector<std::string>& errors = registry.registration_errors();
  if (errors.size() > errors_before) {
    error = "natives library " + path + ": " + errors[errors_before];
    for (size_t i = errors_before + 1; i < errors.size(); ++i) error += "; " + errors[i];
    return false;
  }
  if (registry.size() == natives_before) {
    error = "natives library " + path + " registers no new native (register each function with DPL_NATIVE(name) "
            "and build the library with dpl_add_natives_library(), which links no runtime of its own; a native "
            "already registered under the same name is not registered again)";
    return false;
  }
  return true;
}

bool load_natives(std::span<const std::string> paths, std::string& error) {
  return std::all_of(paths.begin(), paths.end(), [&error](const std::string& path) { return load_natives(path, error); });
}

}  // namespace dpl
