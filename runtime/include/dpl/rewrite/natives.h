// The registry of native predicates and rewriters: C++ functions that `extern` declarations name, found by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dpl/ir/graph.h"

namespace dpl {

class Rewriter;

enum class NativeKind : uint8_t { Predicate, Rewriter };

// The uniform forms the rule interpreter calls: one operand per parameter, in order.
using NativePredicateFn = bool (*)(std::span<Node* const> operands);
using NativeRewriterFn = Node* (*)(Rewriter& rewriter, std::span<Node* const> operands);

struct NativeFunction {
  std::string name;
  NativeKind kind = NativeKind::Predicate;
  size_t arity = 0;
  NativePredicateFn predicate = nullptr;  // kind Predicate
  NativeRewriterFn rewriter = nullptr;    // kind Rewriter
  std::string origin;                     // the library that registered it, or "linked in"

  // `bool NAME(const dpl::Node*, ...)` or `dpl::Node* NAME(dpl::Rewriter&, dpl::Node*, ...)`, for messages.
  std::string signature() const;
};

// Natives by name. A program registers the functions linked into it with DPL_NATIVE (static initializers);
// load_natives() adds a library's. The same name again with the same kind and arity keeps the first registration
// (two libraries may both register a helper they share); with another kind or arity it is an error.
class NativeRegistry {
 public:
  NativeRegistry() = default;
  // Entries are found through pointers into natives_: a copy would point into the original; a move keeps them.
  NativeRegistry(const NativeRegistry&) = delete;
  NativeRegistry& operator=(const NativeRegistry&) = delete;
  NativeRegistry(NativeRegistry&&) = default;
  NativeRegistry& operator=(NativeRegistry&&) = default;

  // The process's registry: the one DPL_NATIVE, load_natives() and the rule interpreter use by default.
  static NativeRegistry& global();

  // Throws std::invalid_argument when `native.name` is registered with another kind or arity. Returns the entry
  // that holds the name (the earlier one when it was already registered).
  const NativeFunction& add(NativeFunction native);
  const NativeFunction* find(std::string_view name) const;
  std::vector<const NativeFunction*> all() const;  // sorted by name
  size_t size() const { return by_name_.size(); }
  bool empty() const { return by_name_.empty(); }

  // What failed registrations (NativeRegistration) reported: a static initializer must not throw, since that
  // would end the program before main, or leave the dynamic loader locked inside dlopen.
  const std::vector<std::string>& registration_errors() const { return registration_errors_; }
  void record_registration_error(std::string message) { registration_errors_.push_back(std::move(message)); }
  // The origin given to natives registered from now on (load_natives() names the library it opens).
  void set_origin(std::string origin) { origin_ = std::move(origin); }

 private:
  std::deque<NativeFunction> natives_;  // stable addresses
  std::map<std::string, const NativeFunction*, std::less<>> by_name_;
  std::vector<std::string> registration_errors_;
  std::string origin_ = "linked in";
};

namespace detail {

template <typename T>
inline constexpr bool is_native_operand = std::is_same_v<T, Node*> || std::is_same_v<T, const Node*>;

// What a native's signature says: its kind and arity, or not a native signature at all.
template <typename Function>
struct NativeSignature {
  static constexpr bool valid = false;
};
template <bool NoExcept, typename... Params>
struct NativeSignature<bool (*)(Params...) noexcept(NoExcept)> {
  static constexpr bool valid = (is_native_operand<Params> && ...);
  static constexpr NativeKind kind = NativeKind::Predicate;
  static constexpr size_t arity = sizeof...(Params);
};
template <bool NoExcept, typename... Params>
struct NativeSignature<Node* (*)(Rewriter&, Params...) noexcept(NoExcept)> {
  static constexpr bool valid = (is_native_operand<Params> && ...);
  static constexpr NativeKind kind = NativeKind::Rewriter;
  static constexpr size_t arity = sizeof...(Params);
};

template <auto Function>
bool call_predicate(std::span<Node* const> operands) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return Function(operands[I]...);
  }(std::make_index_sequence<NativeSignature<decltype(Function)>::arity>());
}

template <auto Function>
Node* call_rewriter(Rewriter& rewriter, std::span<Node* const> operands) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return Function(rewriter, operands[I]...);
  }(std::make_index_sequence<NativeSignature<decltype(Function)>::arity>());
}

}  // namespace detail

// The registry entry of `Function` under `name`: kind and arity from its signature, `bool(const Node*, ...)`
// for a predicate, `Node*(Rewriter&, Node*, ...)` for a rewriter (each operand `Node*` or `const Node*`).
template <auto Function>
NativeFunction make_native(std::string name) {
  using Signature = detail::NativeSignature<decltype(Function)>;
  static_assert(Signature::valid,
                "a native is bool(const dpl::Node*, ...) (a predicate) or dpl::Node*(dpl::Rewriter&, dpl::Node*, "
                "...) (a rewriter); each operand is a dpl::Node* or a const dpl::Node*");
  NativeFunction native;
  native.name = std::move(name);
  native.kind = Signature::kind;
  native.arity = Signature::arity;
  if constexpr (Signature::kind == NativeKind::Predicate) {
    native.predicate = &detail::call_predicate<Function>;
  } else {
    native.rewriter = &detail::call_rewriter<Function>;
  }
  return native;
}

// Registers `Function` in the process's registry when constructed (a static object); a conflict is recorded in
// NativeRegistry::registration_errors(), not thrown.
template <auto Function>
struct NativeRegistration {
  explicit NativeRegistration(std::string name) {
    NativeRegistry& registry = NativeRegistry::global();
    try {
      registry.add(make_native<Function>(std::move(name)));
    } catch (const std::exception& error) {
      registry.record_registration_error(error.what());
    }
  }
};

// Loads a natives library (a MODULE library built with dpl_add_natives_library(), which links no runtime of its
// own): dlopen runs its registrations into the process's registry. False with `error` when it cannot be opened,
// when a registration conflicts with one made before, or when it registers no new native.
bool load_natives(const std::string& path, std::string& error);
// load_natives() of each path in turn (what a tool's repeated `--natives` option gives); stops at the first error.
bool load_natives(std::span<const std::string> paths, std::string& error);

}  // namespace dpl

// `DPL_NATIVE(is_matrix);` at namespace scope registers the global function is_matrix under its own name.
#define DPL_NATIVE(function) \
  static const ::dpl::NativeRegistration<&::function> dpl_native_registration_##function(#function)
