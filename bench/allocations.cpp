// The bench binaries' global operator new and delete: malloc and free, counted per thread (allocations.h).
#include "allocations.h"

#include <cstdlib>
#include <new>

namespace dpl::bench {
namespace {

thread_local uint64_t allocations = 0;  // trivially constructed: usable before and after any static constructor

void* counted_malloc(std::size_t size) {
  ++allocations;
  // malloc(0) may return nullptr; operator new must not.
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}

void* counted_aligned(std::size_t size, std::align_val_t alignment) {
  ++allocations;
  const auto align = static_cast<std::size_t>(alignment);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size + align - 1) / align * align;
  if (void* memory = std::aligned_alloc(align, rounded == 0 ? align : rounded)) return memory;
  throw std::bad_alloc();
}

}  // namespace

uint64_t allocations_so_far() { return allocations; }

}  // namespace dpl::bench

using dpl::bench::counted_aligned;
using dpl::bench::counted_malloc;

// Every form is defined here, not only the two that libstdc++'s other forms forward to: under AddressSanitizer the
// sanitizer's runtime defines the array and nothrow forms itself, and memory from its nothrow new (std::stable_sort's
// temporary buffer) would reach the free() below.
void* operator new(std::size_t size) { return counted_malloc(size); }
void* operator new[](std::size_t size) { return counted_malloc(size); }
void* operator new(std::size_t size, std::align_val_t alignment) { return counted_aligned(size, alignment); }
void* operator new[](std::size_t size, std::align_val_t alignment) { return counted_aligned(size, alignment); }

namespace {
template <typename Allocate>
void* or_null(Allocate allocate) noexcept {
  try {
    return allocate();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
}  // namespace

void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return or_null([&] { return counted_malloc(size); });
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return or_null([&] { return counted_malloc(size); });
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return or_null([&] { return counted_aligned(size, alignment); });
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return or_null([&] { return counted_aligned(size, alignment); });
}

void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::align_val_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::align_val_t) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t, std::align_val_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t, std::align_val_t) noexcept { std::free(memory); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete(void* memory, std::align_val_t, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, std::align_val_t, const std::nothrow_t&) noexcept { std::free(memory); }
