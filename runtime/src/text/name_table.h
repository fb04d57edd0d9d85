// A flat (open-addressing) hash table keyed by names, for the reader's scopes and the printer's name set: models
// have up to a million bindings, where node-based std::unordered_map spends most of its time on cache misses.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace dpl::text {

// Binding names are short (`lv123`, `layer0_attn_q_w`): eight bytes at a time, inline, instead of std::hash's
// out-of-line byte loop.
inline uint64_t hash_name(std::string_view name) {
  uint64_t hash = 0x9E3779B97F4A7C15ull ^ name.size();
  size_t i = 0;
  for (; i + 8 <= name.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, name.data() + i, 8);
    hash = (hash ^ word) * 0xBF58476D1CE4E5B9ull;
    hash ^= hash >> 31;
  }
  uint64_t tail = 0;
  for (size_t shift = 0; i < name.size(); ++i, shift += 8) {
    tail |= uint64_t{static_cast<unsigned char>(name[i])} << shift;
  }
  hash = (hash ^ tail) * 0x94D049BB133111EBull;
  return hash ^ (hash >> 29);
}

// Keys are views: the text they point into (the source file, node names) must outlive the table.
template <typename Value>
class NameTable {
 public:
  explicit NameTable(size_t expected = 0) { rehash(capacity_for(expected)); }

  Value* find(std::string_view name) {
    const uint64_t hash = hash_name(name);
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
    const uint64_t hash = hash_name(name);
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
