// The natives registry: kinds and arities from signatures, the uniform callables, duplicates and conflicts, and
// static registration into the process's registry.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpl/ir/builder.h"
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/natives.h"

namespace {

std::vector<const dpl::Node*> seen;

bool first_is_second(const dpl::Node* a, const dpl::Node* b) {
  seen = {a, b};
  return a == b;
}
bool takes_mutable(dpl::Node* a) noexcept { return a != nullptr; }
bool no_operands() { return true; }
dpl::Node* second_of_three(dpl::Rewriter&, dpl::Node*, dpl::Node* b, const dpl::Node*) { return b; }
dpl::Node* declines(dpl::Rewriter&, dpl::Node*) { return nullptr; }

}  // namespace

// Registered into the process's registry before main, as a natives library's functions are when it is loaded.
DPL_NATIVE(first_is_second);
static const dpl::NativeRegistration<&second_of_three> second_of_three_registration("pick_second");
// The same name again as a rewriter: recorded, not thrown (a static initializer must not throw).
static const dpl::NativeRegistration<&declines> conflicting_registration("first_is_second");

namespace {

TEST(NativeRegistry, KindAndArityComeFromTheSignature) {
  dpl::NativeRegistry registry;
  const dpl::NativeFunction& predicate = registry.add(dpl::make_native<&first_is_second>("first_is_second"));
  EXPECT_EQ(predicate.kind, dpl::NativeKind::Predicate);
  EXPECT_EQ(predicate.arity, 2u);
  EXPECT_NE(predicate.predicate, nullptr);
  EXPECT_EQ(predicate.rewriter, nullptr);
  const dpl::NativeFunction& rewriter = registry.add(dpl::make_native<&second_of_three>("second_of_three"));
  EXPECT_EQ(rewriter.kind, dpl::NativeKind::Rewriter);
  EXPECT_EQ(rewriter.arity, 3u);
  EXPECT_NE(rewriter.rewriter, nullptr);
  EXPECT_EQ(rewriter.predicate, nullptr);
  EXPECT_EQ(registry.add(dpl::make_native<&no_operands>("no_operands")).arity, 0u);
  EXPECT_EQ(registry.add(dpl::make_native<&takes_mutable>("takes_mutable")).arity, 1u);
  EXPECT_EQ(registry.size(), 4u);
}

TEST(NativeRegistry, SignaturesAreWrittenAsTheCppFunction) {
  EXPECT_EQ(dpl::make_native<&first_is_second>("p").signature(), "bool p(const dpl::Node*, const dpl::Node*)");
  EXPECT_EQ(dpl::make_native<&no_operands>("q").signature(), "bool q()");
  EXPECT_EQ(dpl::make_native<&declines>("r").signature(), "dpl::Node* r(dpl::Rewriter&, dpl::Node*)");
}

TEST(NativeRegistry, TheUniformCallablesPassTheOperandsInOrder) {
  dpl::Module module;
  dpl::Function& function = module.add_function("main");
  dpl::Builder builder(function);
  const std::vector<dpl::Dim> dims = {dpl::Dim::fixed(2)};
  dpl::Node* x = builder.param("x", dpl::Type::tensor(dpl::DType::Float32, dims));
  dpl::Node* y = builder.param("y", dpl::Type::tensor(dpl::DType::Float32, dims));
  dpl::Node* z = builder.param("z", dpl::Type::tensor(dpl::DType::Float32, dims));
  dpl::NativeRegistry registry;
  const dpl::NativeFunction& predicate = registry.add(dpl::make_native<&first_is_second>("first_is_second"));
  std::vector<dpl::Node*> operands = {x, y};
  EXPECT_FALSE(predicate.predicate(operands));
  EXPECT_EQ(seen, (std::vector<const dpl::Node*>{x, y}));
  operands = {x, x};
  EXPECT_TRUE(predicate.predicate(operands));
  const dpl::NativeFunction& rewriter = registry.add(dpl::make_native<&second_of_three>("second_of_three"));
  std::vector<dpl::Node*> worklist;
  std::vector<dpl::FlagByte> queued;
  dpl::Rewriter unused_rewriter(function, worklist, queued);  // second_of_three does not use it
  operands = {x, y, z};
  EXPECT_EQ(rewriter.rewriter(unused_rewriter, operands), y);
}

TEST(NativeRegistry, FindsByNameAndListsInNameOrder) {
  dpl::NativeRegistry registry;
  registry.add(dpl::make_native<&takes_mutable>("b"));
  registry.add(dpl::make_native<&declines>("a"));
  ASSERT_NE(registry.find("a"), nullptr);
  EXPECT_EQ(registry.find("a")->kind, dpl::NativeKind::Rewriter);
  EXPECT_EQ(registry.find("c"), nullptr);
  std::vector<std::string> names;
  for (const dpl::NativeFunction* native : registry.all()) names.push_back(native->name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
}

TEST(NativeRegistry, TheSameNameWithTheSameSignatureKeepsTheFirst) {
  dpl::NativeRegistry registry;
  const dpl::NativeFunction& first = registry.add(dpl::make_native<&takes_mutable>("check"));
  const dpl::NativeFunction& again = registry.add(dpl::make_native<&first_is_second>("check2"));
  EXPECT_NE(&first, &again);
  const dpl::NativeFunction& same = registry.add(dpl::make_native<&takes_mutable>("check"));
  EXPECT_EQ(&first, &same);
  EXPECT_EQ(registry.size(), 2u);
}

TEST(NativeRegistry, TheSameNameWithAnotherKindOrArityThrows) {
  dpl::NativeRegistry registry;
  registry.set_origin("liba.so");
  registry.add(dpl::make_native<&first_is_second>("check"));
  registry.set_origin("libb.so");
  try {
    registry.add(dpl::make_native<&declines>("check"));
    FAIL() << "a rewriter under a predicate's name was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "native 'check' is already registered as bool check(const dpl::Node*, const dpl::Node*) (liba.so); "
                 "libb.so registers dpl::Node* check(dpl::Rewriter&, dpl::Node*)");
  }
  EXPECT_THROW(registry.add(dpl::make_native<&takes_mutable>("check")), std::invalid_argument);  // arity 1, not 2
  EXPECT_EQ(registry.find("check")->arity, 2u);
}

TEST(NativeRegistry, StaticRegistrationsFillTheGlobalRegistryAndRecordConflicts) {
  const dpl::NativeRegistry& registry = dpl::NativeRegistry::global();
  const dpl::NativeFunction* predicate = registry.find("first_is_second");
  ASSERT_NE(predicate, nullptr);
  EXPECT_EQ(predicate->kind, dpl::NativeKind::Predicate);
  EXPECT_EQ(predicate->origin, "linked in");
  const dpl::NativeFunction* renamed = registry.find("pick_second");
  ASSERT_NE(renamed, nullptr);
  EXPECT_EQ(renamed->arity, 3u);
  EXPECT_EQ(registry.find("second_of_three"), nullptr);
  ASSERT_EQ(registry.registration_errors().size(), 1u);
  EXPECT_EQ(registry.registration_errors()[0],
            "native 'first_is_second' is already registered as bool first_is_second(const dpl::Node*, const "
            "dpl::Node*) (linked in); linked in registers dpl::Node* first_is_second(dpl::Rewriter&, dpl::Node*)");
}

TEST(NativeRegistry, LoadingALibraryThatDoesNotExistIsAnError) {
  std::string error;
  EXPECT_FALSE(dpl::load_natives("/no/such/natives.so", error));
  EXPECT_NE(error.find("cannot load natives library: /no/such/natives.so"), std::string::npos) << error;
}

}  // namespace
