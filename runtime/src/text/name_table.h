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
  // A full finalizer (splitmix64's): the table probes by the low bits, and a product alone leaves them depending
  // on the low bytes only (`lv1000` ... `lv1009` shared their low eleven bits, so probes ran eight slots long).
  hash ^= tail;
  hash = (hash ^ (hash >> 30)) * 0xBF58476D1CE4E5B9ull;
  hash = (hash ^ (hash >> 27)) * 0x94D049BB133111EBull;
  return hash ^ (hash >> 31);
}

// Keys are views: the text they point into (the source file, node names) must outlive the table.
//
// The probed array holds 8-byte slots (part of the hash and an entry's index); the entries are a vector in
// insertion order. A lookup in a model of 10^6 bindings then probes a 16 MB array instead of 128 MB of whole
// entries, the entry it finds was mostly inserted shortly before (a binding reads the ones just above it), and
// growing re-places 8-byte slots, not entries.
template <typename Value>
class NameTable {
 public:
  explicit NameTable(size_t expected = 0) {
    rehash(capacity_for(expected));
    entries_.reserve(expected);
  }

  Value* find(std::string_view name) {
    const uint32_t tag = tag_of(name);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      const Slot slot = slots_[i];
      if (slot.entry == 0) return nullptr;
      if (slot.tag == tag) {
        Entry& entry = entries_[slot.entry - 1];
        if (entry.key == name) return &entry.value;
      }
    }
  }

  // Inserts `value` under `name` unless the name is present. Returns the stored value (valid until the next
  // insertion) and whether it was inserted.
  std::pair<Value*, bool> insert(std::string_view name, Value value) {
    if ((entries_.size() + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    const uint32_t tag = tag_of(name);
    for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.entry == 0) {
        Entry& entry = entries_.emplace_back(Entry{name, std::move(value)});
        slot = Slot{tag, static_cast<uint32_t>(entries_.size())};
        return {&entry.value, true};
      }
      if (slot.tag == tag) {
        Entry& entry = entries_[slot.entry - 1];
        if (entry.key == name) return {&entry.value, false};
      }
    }
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string_view key;
    Value value{};
  };
  // The tag is where the name's probe starts (its low bits) and what most probes of another name stop at (the
  // rest): growing places each slot anew from the slot alone.
  struct Slot {
    uint32_t tag = 0;
    uint32_t entry = 0;  // the entry's index + 1; 0: empty
  };

  static uint32_t tag_of(std::string_view name) { return static_cast<uint32_t>(hash_name(name)); }

  static size_t capacity_for(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    return capacity;
  }

  // The old slots are read in order and land in the new array in two ascending runs (at the same index or one
  // old capacity further): both arrays are walked nearly sequentially, however large they are.
  void rehash(size_t capacity) {
    std::vector<Slot> old(capacity, Slot{});
    old.swap(slots_);
    mask_ = capacity - 1;
    for (const Slot& slot : old) {
      if (slot.entry == 0) continue;
      size_t i = slot.tag & mask_;
      while (slots_[i].entry != 0) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  size_t mask_ = 0;
};

}  // namespace dpl::text
