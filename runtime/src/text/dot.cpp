// Graphviz output: a module before and after a rewrite, side by side, with replaced and created nodes highlighted.
#include "dpl/text/dot.h"

#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dpl/support/format.h"

namespace dpl {
namespace {

uint64_t mix(uint64_t seed, uint64_t value) {
  // splitmix64's finalizer over a boost-style combination: every input bit reaches every output bit.
  uint64_t x = value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return seed ^ x ^ (x >> 31);
}

uint64_t hash_text(std::string_view text) { return std::hash<std::string_view>{}(text); }

// The live nodes of `function`, every operand before its users. A rewrite leaves nodes() out of topological order
// until the next compact(), so the order is rebuilt here by a depth-first walk (explicit stack: deep graphs).
std::vector<const Node*> live_nodes_operands_first(const Function& function) {
  enum : uint8_t { kUnseen, kOnStack, kDone };
  std::vector<uint8_t> state(function.node_id_bound(), kUnseen);
  std::vector<const Node*> order;
  std::vector<std::pair<const Node*, size_t>> stack;  // node, next operand to visit
  for (const Node* root : function.nodes()) {
    if (root->is_dead() || state[root->id()] != kUnseen) continue;
    state[root->id()] = kOnStack;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      const Node* node = stack.back().first;
      size_t& next = stack.back().second;
      if (next < node->num_operands()) {
        const Node* operand = node->operand(next++);
        if (state[operand->id()] == kUnseen) {
          state[operand->id()] = kOnStack;
          stack.emplace_back(operand, 0);
        }
        continue;
      }
      state[node->id()] = kDone;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

// What a node computes apart from its operands. Parameters are identified by their position.
uint64_t own_hash(const Node& node, uint64_t param_position) {
  uint64_t hash = mix(0, static_cast<uint64_t>(node.kind()));
  // Types are interned, so equal types are the same pointer for as long as the process runs.
  hash = mix(hash, reinterpret_cast<uintptr_t>(node.type()));
  switch (node.kind()) {
    case NodeKind::Param:
      hash = mix(hash, param_position);
      break;
    case NodeKind::Call:
      hash = mix(hash, node.op());
      for (const AttrValue& value : node.attrs()) hash = mix(hash, hash_text(attr_value_str(value)));
      break;
    case NodeKind::Constant:
      hash = mix(hash, static_cast<uint64_t>(node.literal().dtype));
      for (int64_t extent : node.literal().shape) hash = mix(hash, static_cast<uint64_t>(extent));
      for (double value : node.literal().values) hash = mix(hash, std::bit_cast<uint64_t>(value));
      break;
    case NodeKind::TupleItem:
      hash = mix(hash, static_cast<uint64_t>(node.index()));
      break;
    case NodeKind::ShapeLit:
      for (const Dim& dim : node.shape_value()) hash = mix(hash, static_cast<uint64_t>(dim.raw()));
      break;
    case NodeKind::FuncCall:
      hash = mix(hash, hash_text(node.callee()));
      break;
    case NodeKind::Tuple:
      break;
  }
  return hash;
}

// One function's live nodes with, per node id, the hash of what the node itself computes (`own`) and of its whole
// subgraph (`full`: equal for structurally equal subgraphs, binding names ignored).
struct HashedFunction {
  std::vector<const Node*> nodes;
  std::vector<uint64_t> own;
  std::vector<uint64_t> full;
};

HashedFunction hash_function(const Function& function) {
  HashedFunction hashed;
  hashed.nodes = live_nodes_operands_first(function);
  hashed.own.assign(function.node_id_bound(), 0);
  hashed.full.assign(function.node_id_bound(), 0);
  std::vector<uint64_t> param_position(function.node_id_bound(), 0);
  for (size_t position = 0; position < function.params().size(); ++position) {
    param_position[function.params()[position]->id()] = position;
  }
  for (const Node* node : hashed.nodes) {
    uint64_t hash = hashed.own[node->id()] = own_hash(*node, param_position[node->id()]);
    for (const Node* operand : node->operands()) hash = mix(hash, hashed.full[operand->id()]);
    hashed.full[node->id()] = hash;
  }
  return hashed;
}

struct HashedModule {
  std::vector<HashedFunction> functions;
  std::unordered_set<uint64_t> subgraphs;  // every node's full hash
};

HashedModule hash_module(const Module& module) {
  HashedModule hashed;
  for (const std::unique_ptr<Function>& function : module.functions()) {
    hashed.functions.push_back(hash_function(*function));
    const HashedFunction& added = hashed.functions.back();
    for (const Node* node : added.nodes) hashed.subgraphs.insert(added.full[node->id()]);
  }
  return hashed;
}

// The nodes of `side` whose subgraph occurs nowhere in `other`, each with its own computation combined with the
// operands that `other` has too (an operand that `other` lacks counts as "some changed value").
struct MissingNodes {
  std::vector<const Node*> nodes;
  std::vector<uint64_t> local_hashes;
  std::unordered_set<uint64_t> local_hash_set;
};

MissingNodes nodes_missing_from(const HashedModule& side, const HashedModule& other) {
  constexpr uint64_t kChangedOperand = 0x6368616e676564ull;
  MissingNodes missing;
  for (const HashedFunction& function : side.functions) {
    for (const Node* node : function.nodes) {
      if (other.subgraphs.contains(function.full[node->id()])) continue;
      uint64_t local = function.own[node->id()];
      for (const Node* operand : node->operands()) {
        const uint64_t operand_hash = function.full[operand->id()];
        local = mix(local, other.subgraphs.contains(operand_hash) ? operand_hash : kChangedOperand);
      }
      missing.nodes.push_back(node);
      missing.local_hashes.push_back(local);
      missing.local_hash_set.insert(local);
    }
  }
  return missing;
}

// Splits `missing` into nodes that `other_missing` also computes on changed inputs (rewired) and the rest.
void classify(const MissingNodes& missing, const MissingNodes& other_missing, std::vector<const Node*>& changed,
              std::vector<const Node*>& rewired) {
  for (size_t i = 0; i < missing.nodes.size(); ++i) {
    (other_missing.local_hash_set.contains(missing.local_hashes[i]) ? rewired : changed).push_back(missing.nodes[i]);
  }
}

std::string escape_dot(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string type_summary(TypeRef type) {
  if (type->is_tensor() && type->has_shape()) {
    const std::string_view dtype = dtype_name(type->dtype());
    return dtype.empty() ? dims_str(type->dims()) : fmt::format("{} {}", dims_str(type->dims()), dtype);
  }
  return type->str();
}

// Label lines: what the node computes (with the attributes that differ from the op's defaults), then its type.
std::vector<std::string> label_lines(const Node& node) {
  const std::string name = node.name().empty() ? fmt::format("%{}", node.id()) : node.name();
  std::vector<std::string> lines;
  switch (node.kind()) {
    case NodeKind::Param:
      lines.push_back(name);
      break;
    case NodeKind::Constant:
      lines.push_back(node.literal().is_scalar()
                          ? fmt::format("const {}", format_double_like_python(node.literal().values[0]))
                          : "const");
      break;
    case NodeKind::Call: {
      const OpInfo& info = OpRegistry::global().get(node.op());
      lines.push_back(fmt::format("{} = {}", name, info.name));
      for (size_t i = 0; i < info.attrs.size() && i < node.attrs().size(); ++i) {
        if (node.attr(i) != info.attrs[i].default_value) {
          lines.push_back(fmt::format("{}={}", info.attrs[i].name, attr_value_str(node.attr(i))));
        }
      }
      break;
    }
    case NodeKind::Tuple:
      lines.push_back(fmt::format("{} = tuple", name));
      break;
    case NodeKind::TupleItem:
      lines.push_back(fmt::format("{} = [{}]", name, node.index()));
      break;
    case NodeKind::ShapeLit:
      lines.push_back(fmt::format("shape {}", dims_str(node.shape_value())));
      return lines;  // its type says nothing more
    case NodeKind::FuncCall:
      lines.push_back(fmt::format("{} = {}(...)", name, node.callee()));
      break;
  }
  lines.push_back(type_summary(node.type()));
  return lines;
}

void append_module(std::string& dot, const Module& module, std::string_view side, std::string_view side_label,
                   const std::unordered_set<const Node*>& highlighted, std::string_view highlight_style,
                   const std::unordered_set<const Node*>& rewired) {
  dot += fmt::format("  subgraph cluster_{} {{\n    label=\"{}\";\n", side, escape_dot(side_label));
  const bool one_cluster_per_function = module.functions().size() > 1;
  for (size_t f = 0; f < module.functions().size(); ++f) {
    const Function& function = *module.functions()[f];
    const std::string indent = one_cluster_per_function ? "      " : "    ";
    if (one_cluster_per_function) {
      dot += fmt::format("    subgraph cluster_{}_f{} {{\n      label=\"{}\";\n", side, f, escape_dot(function.name()));
    }
    const auto id = [&](const Node* node) { return fmt::format("{}_f{}_n{}", side, f, node->id()); };
    for (const Node* node : live_nodes_operands_first(function)) {
      std::string label;
      for (const std::string& line : label_lines(*node)) label += (label.empty() ? "" : "\\n") + escape_dot(line);
      std::string style;
      if (node->kind() == NodeKind::Param) style += ", shape=ellipse";
      if (node == function.output()) style += ", peripheries=2";
      if (highlighted.contains(node)) style += fmt::format(", {}", highlight_style);
      if (rewired.contains(node)) style += ", style=\"rounded,filled,dashed\"";
      dot += fmt::format("{}{} [label=\"{}\"{}];\n", indent, id(node), label, style);
      for (const Node* operand : node->operands()) dot += fmt::format("{}{} -> {};\n", indent, id(operand), id(node));
    }
    if (one_cluster_per_function) dot += "    }\n";
  }
  dot += "  }\n";
}

}  // namespace

RewriteDiff diff_rewrite(const Module& before, const Module& after) {
  const HashedModule hashed_before = hash_module(before);
  const HashedModule hashed_after = hash_module(after);
  const MissingNodes missing_before = nodes_missing_from(hashed_before, hashed_after);
  const MissingNodes missing_after = nodes_missing_from(hashed_after, hashed_before);
  RewriteDiff diff;
  classify(missing_before, missing_after, diff.replaced, diff.rewired);
  classify(missing_after, missing_before, diff.created, diff.rewired);
  return diff;
}

std::string rewrite_to_dot(const Module& before, const Module& after, std::string_view title) {
  const RewriteDiff diff = diff_rewrite(before, after);
  const std::unordered_set<const Node*> replaced(diff.replaced.begin(), diff.replaced.end());
  const std::unordered_set<const Node*> created(diff.created.begin(), diff.created.end());
  const std::unordered_set<const Node*> rewired(diff.rewired.begin(), diff.rewired.end());

  std::string dot = "digraph rewrite {\n";
  dot += fmt::format(
      "  graph [label=\"{}\\nred: matched and replaced, green: created, dashed: same op on a changed input, double border: output\", labelloc=t, "
      "fontname=\"Helvetica\"];\n",
      escape_dot(title));
  dot += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n";
  dot += "  edge [color=\"#555555\", arrowsize=0.6];\n";
  append_module(dot, before, "before", fmt::format("before ({} replaced)", diff.replaced.size()), replaced,
                "fillcolor=\"#f4cccc\", color=\"#cc0000\", penwidth=2", rewired);
  append_module(dot, after, "after", fmt::format("after ({} created)", diff.created.size()), created,
                "fillcolor=\"#d9ead3\", color=\"#38761d\", penwidth=2", rewired);
  dot += "}\n";
  return dot;
}

}  // namespace dpl
