// Test helper shared by the runtime tests: static float32 tensor types (Builder takes types, not extents).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "dpl/ir/types.h"

namespace dpl::test {

inline TypeRef f32(std::initializer_list<int64_t> extents) {
  std::vector<Dim> dims;
  for (int64_t extent : extents) dims.push_back(Dim::fixed(extent));
  return Type::tensor(DType::Float32, dims);
}

}  // namespace dpl::test
