// The reader's and printer's name table: lookups, duplicates, growth, absent names.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "name_table.h"

namespace dpl::text {
namespace {

std::vector<std::string> binding_names(size_t count) {
  std::vector<std::string> names;
  names.reserve(count);
  for (size_t i = 0; i < count; ++i) names.push_back("lv" + std::to_string(i));
  return names;
}

TEST(NameTable, FindsEveryInsertedNameAcrossGrowth) {
  const std::vector<std::string> names = binding_names(5000);  // many rehashes and entry chunks
  NameTable<size_t> table;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto [value, inserted] = table.insert(names[i], i);
    ASSERT_TRUE(inserted) << names[i];
    EXPECT_EQ(*value, i);
  }
  EXPECT_EQ(table.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t* found = table.find(names[i]);
    ASSERT_NE(found, nullptr) << names[i];
    EXPECT_EQ(*found, i);
  }
  EXPECT_EQ(table.find("lv5000"), nullptr);
  EXPECT_EQ(table.find(""), nullptr);
  EXPECT_EQ(table.find("lv"), nullptr);
}

TEST(NameTable, AnInsertedNameKeepsItsFirstValue) {
  NameTable<int> table;
  EXPECT_TRUE(table.insert("layer0_attn_q_w", 1).second);
  const auto [value, inserted] = table.insert("layer0_attn_q_w", 2);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*value, 1);
  EXPECT_EQ(table.size(), 1u);
  // Names that differ only past eight bytes, or only in length, are different keys.
  EXPECT_TRUE(table.insert("layer0_attn_k_w", 3).second);
  EXPECT_TRUE(table.insert("layer0_attn_q_w2", 4).second);
  EXPECT_EQ(*table.find("layer0_attn_k_w"), 3);
  EXPECT_EQ(*table.find("layer0_attn_q_w2"), 4);
}

TEST(NameTable, ATableMadeForManyNamesFindsThemAndNoOthers) {
  const std::vector<std::string> names = binding_names(3000);
  NameTable<size_t> table(names.size());
  for (size_t i = 0; i < names.size(); i += 2) EXPECT_TRUE(table.insert(names[i], i).second);
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t* found = table.find(names[i]);
    if (i % 2 == 0) {
      ASSERT_NE(found, nullptr) << names[i];
      EXPECT_EQ(*found, i);
    } else {
      EXPECT_EQ(found, nullptr) << names[i];
    }
  }
}

}  // namespace
}  // namespace dpl::text
