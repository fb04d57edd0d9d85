// A flat (open-addressing) hash table keyed by names, for the reader's scopes and the printer's name set: models
// have up to a million bindings, where node-based std::unordered_map spends most of its time on cache misses.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace dpl::text {

// Keys are views: the text they point into (the source file, node names) must outlive the table.
template <typename Value>
class NameTable {
 public:
  explicit NameTable(size_t expected = 0) { rehash(capacity_for(expected)); }

  Value* find(std::string_view name) {
    const uint64_t hash = std::hash<std::string_view>{}(name);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.hash == hash && slot.key == name) return &slot.value;
    }
  }

  // Inserts `value` under `name` unless the name is present. Returns the stored value (valid until the next
  // insertion) and whether it was inserted.
  std::pair<Value*, bool> insert(std::string_view name, Value value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    const uint64_t hash = std::hash<std::string_view>{}(name);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        slot = Slot{name, hash, std::move(value), true};
        ++size_;
        return {&slot.value, true};
      }
      if (slot.hash == hash && slot.key == name) return {&slot.value, false};
    }
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    std::string_view key;
    uint64_t hash = 0;
    Value value{};
    bool used = false;
  };

  static size_t capacity_for(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    return capacity;
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (Slot& slot : old) {
      if (!slot.used) continue;
      size_t i = slot.hash & mask_;
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i] = std::move(slot);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace dpl::text
