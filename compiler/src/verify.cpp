// dplc --verify: builds small instances of each rule's left-hand side, rewrites them with the rule alone and
// compares the values before and after with the reference interpreter.
#include "dpl/compiler/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/rule_interpreter.h"
#include "dpl/interp/equivalence.h"
#include "dpl/interp/interpreter.h"
#include "dpl/ir/graph.h"
#include "dpl/rewrite/driver.h"

namespace dpl::compiler {

namespace {

// The choices an instance builder makes (option 0 is the preferred one). Each attempt replays the previous one up
// to the deepest choice that can still change and takes its next option. Two walks: depth-first over all options
// (good when the early choices are right and a late one is wrong, as in deep attention patterns), and cheapest
// first, where the cost of an attempt is the sum of its option indices and for budget 0, 1, 2, ... a depth-first
// walk visits every sequence within the budget (good when several early choices are one step off, e.g. the leaves
// of a batch_norm that must all be vectors).
class ChoiceSequence {
 public:
  explicit ChoiceSequence(bool cheapest_first) : budget_(cheapest_first ? 0 : kUnlimited) {}

  size_t choose(size_t count) {
    if (position_ == taken_.size()) {
      size_t allowed = std::min(count, budget_ - spent_ + 1);
      truncated_ = truncated_ || allowed < count;
      taken_.push_back({0, allowed});
    }
    size_t index = taken_[position_++].index;
    spent_ += index;
    return index;
  }
  // Starts the next attempt; false when every sequence was tried. Choices after the point where the previous
  // attempt stopped were never made, so they are dropped.
  bool advance() {
    taken_.resize(position_);
    replay();
    while (!taken_.empty()) {
      if (++taken_.back().index < taken_.back().count) return true;
      taken_.pop_back();
    }
    if (!truncated_) return false;  // a larger budget would allow nothing new
    ++budget_;
    truncated_ = false;
    return true;
  }
  void replay() {
    position_ = 0;
    spent_ = 0;
  }
  // The attempt's choices cost less than the budget: a smaller budget tried the same sequence already.
  bool tried_before() const { return budget_ != kUnlimited && spent_ < budget_; }

 private:
  struct Taken {
    size_t index;
    size_t count;
  };
  static constexpr size_t kUnlimited = size_t{1} << 40;
  std::vector<Taken> taken_;
  size_t position_ = 0;
  size_t budget_;
  size_t spent_ = 0;
  bool truncated_ = false;
};

// Shapes tried, in order, for a leaf whose pattern says nothing about its type.
const std::vector<std::vector<int64_t>> kLeafShapes = {{2, 3, 4, 4}, {2, 4, 4}, {4, 4}, {4, 8}, {8, 4}, {8}, {},
                                                       {2, 4, 6, 6}, {4, 4, 3, 3}, {1, 4, 6, 6}};
// Dtypes tried for a leaf whose pattern does not fix one (bool for logical ops).
const std::vector<DType> kLeafDtypes = {DType::Float32, DType::Float16, DType::Bool};
// Dtypes tried for a constant whose pattern does not fix one.
const std::vector<DType> kConstantDtypes = {DType::Float32, DType::Float16};
// Values tried for a constant whose pattern does not fix one, after a value that is neither 0, 1 nor a common
// scale (so that a dropped constant shows): those a guard may ask for.
const std::vector<double> kConstantValues = {0.8125, 1.0, 0.0, 2.0, -1.0};
// Extents given to dimension variables, in order of first use: distinct, so that swapped dimensions show.
const std::vector<int64_t> kDimExtents = {2, 3, 4, 5, 6, 7, 8, 9};
// The extent of a `_` dimension in a type pattern.
constexpr int64_t kAnyDimExtent = 4;
// How many fields a tuple pattern's rest gets, in order of preference.
const std::vector<size_t> kRestFieldCounts = {1, 2, 3};
// Factors tried when a reshape target splits the first dimension, after the dimension variables' extents.
const std::vector<int64_t> kSplitFactors = {2, 3, 4};

std::vector<Dim> fixed_dims(const std::vector<int64_t>& extents) {
  std::vector<Dim> dims;
  for (int64_t extent : extents) dims.push_back(Dim::fixed(extent));
  return dims;
}

std::optional<std::vector<int64_t>> static_extents(TypeRef type) {
  if (type == nullptr || !type->is_tensor() || !type->has_shape()) return std::nullopt;
  std::vector<int64_t> extents;
  for (const Dim& dim : type->dims()) {
    if (!dim.is_static()) return std::nullopt;
    extents.push_back(dim.extent());
  }
  return extents;
}

// A partition rule of the file: what makes the composite functions a `composite("NAME")` pattern calls.
struct PartitionRef {
  size_t pass_index = 0;
  size_t rule_index = 0;
};

std::optional<PartitionRef> find_partition(const AstFile& file, const std::string& composite) {
  for (size_t pass = 0; pass < file.passes.size(); ++pass) {
    for (size_t rule = 0; rule < file.passes[pass].rules.size(); ++rule) {
      const Rule& candidate = file.passes[pass].rules[rule];
      if (candidate.kind == Rule::Kind::Partition && candidate.name == composite) return PartitionRef{pass, rule};
    }
  }
  return std::nullopt;
}

// Unary ops tried between a dominator pattern's parent and an open operand of its child, when the path allows
// them (then any other unary op of the path).
const std::vector<OpId> kPreferredPathOps = {op::nn_relu, op::exp, op::negative};

// The value names `pattern` binds or refers to (variables, bindings, named parameters), in any alternative.
void collect_value_names(const Pattern& pattern, std::set<std::string>& names) {
  if (const auto* var = std::get_if<VarPattern>(&pattern.node)) names.insert(var->name);
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) names.insert(bind->name);
  if (const auto* param = std::get_if<ParamPattern>(&pattern.node); param != nullptr && param->name) {
    names.insert(*param->name);
  }
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { collect_value_names(sub, names); });
}

// The names more than one root of a multi-root rule's alternative uses (`x` of the QKV rule).
std::set<std::string> names_in_several_roots(const Rule& rule, const RootsAlternative& roots) {
  std::set<std::string> seen;
  std::set<std::string> several;
  for (size_t r = 0; r < rule.roots.size(); ++r) {
    std::set<std::string> names = {rule.roots[r].name};
    for (const PatternPtr& pattern : roots.roots[r]) collect_value_names(*pattern, names);
    for (const std::string& name : names) {
      if (!seen.insert(name).second) several.insert(name);
    }
  }
  return several;
}

// Which alternatives a group's members take: the first member's is a choice (the first that gives an instance),
// unless `every_member` fixes it for all; with `mixed`, member k takes the one k places after the first member's
// (cyclically).
struct GroupAlternatives {
  std::optional<size_t> every_member;
  bool mixed = false;
};

// How the siblings of a multi-root rule's instance (a group's members, the single roots) take their shapes. The
// leaves of one sibling that no other sibling shares (a member's or a root's own weight) are its private leaves.
struct SiblingShapes {
  // Private leaves and constants prefer shapes whose extents differ from each other, so that a rule reading the
  // wrong dimension of a weight (`w.shape[0]` for `w.shape[1]`) shows.
  bool distinct_extents = false;
  // Sibling k > 0 first tries the shapes of the first sibling's private leaves with every extent that no shared
  // value has widened by 4k (weights of 8, 12, 16 columns), so that a rule assuming equal siblings (an
  // equal-sections split) shows: real models have them (TinyLlama's q projection is 2048 wide, k and v 256).
  bool vary = false;
  GroupAlternatives alternatives;
};

// Attribute values a rule is also checked with where its left-hand side leaves them open (not written as a
// literal): a rule that matches every convolution must be right for strided and channels-last ones too, and one
// that forgets to copy an attribute (`nn.max_pool2d(x)` on the right for a pool with strides) shows. Each theme is
// one more search over the instances, with every open call of its ops taking its settings.
struct AttributeSetting {
  std::string_view name;
  AttrValue value;
};
struct OpSettings {
  OpId op;
  std::vector<AttributeSetting> settings;
};
struct AttributeTheme {
  std::string_view name;
  std::vector<OpSettings> ops;
  // Leaf shapes tried before kLeafShapes in this theme's searches: the data and weights its settings need (a
  // grouped convolution's channels C split in two, its weight (O, C / groups, kh, kw)).
  std::vector<std::vector<int64_t>> leaf_shapes = {};
  const OpSettings* find(OpId op) const {
    for (const OpSettings& entry : ops) {
      if (entry.op == op) return &entry;
    }
    return nullptr;
  }
};

using Ints = std::vector<int64_t>;
const std::vector<AttributeTheme>& attribute_themes() {
  static const std::vector<AttributeTheme> themes = {
      {"strided windows",
       {{op::nn_conv1d, {{"strides", Ints{2}}, {"padding", Ints{1, 1}}}},
        {op::nn_conv2d, {{"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}}},
        {op::nn_conv2d_transpose,
         {{"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}}},
        {op::nn_max_pool2d,
         {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}, {"ceil_mode", true}}},
        {op::nn_avg_pool2d,
         {{"pool_size", Ints{3, 3}},
          {"strides", Ints{2, 2}},
          {"padding", Ints{1, 1, 1, 1}},
          {"ceil_mode", true},
          {"count_include_pad", true}}}}},
      {"dilated windows",
       {{op::nn_conv1d, {{"dilation", Ints{2}}, {"padding", Ints{2, 2}}}},
        {op::nn_conv2d, {{"dilation", Ints{2, 2}}, {"padding", Ints{2, 2, 2, 2}}}},
        {op::nn_max_pool2d, {{"pool_size", Ints{2, 2}}, {"dilation", Ints{2, 2}}}},
        {op::nn_avg_pool2d, {{"pool_size", Ints{2, 2}}, {"dilation", Ints{2, 2}}}}}},
      {"channels last",
       {{op::nn_conv1d, {{"data_layout", std::string("NWC")}, {"kernel_layout", std::string("WIO")}}},
        {op::nn_conv2d, {{"data_layout", std::string("NHWC")}, {"kernel_layout", std::string("HWIO")}}},
        {op::nn_max_pool2d, {{"layout", std::string("NHWC")}}},
        {op::nn_avg_pool2d, {{"layout", std::string("NHWC")}}},
        {op::nn_adaptive_avg_pool2d, {{"layout", std::string("NHWC")}}},
        {op::image_resize2d, {{"layout", std::string("NHWC")}}},
        {op::nn_batch_norm, {{"axis", int64_t{-1}}}},
        {op::nn_bias_add, {{"axis", int64_t{-1}}}}}},
      {"axis 1",
       {{op::sum, {{"axis", Ints{1}}, {"keepdims", true}}},
        {op::mean, {{"axis", Ints{1}}, {"keepdims", true}}},
        {op::max, {{"axis", Ints{1}}, {"keepdims", true}}},
        {op::min, {{"axis", Ints{1}}, {"keepdims", true}}},
        {op::cumsum, {{"axis", int64_t{1}}}},
        {op::nn_softmax, {{"axis", int64_t{1}}}},
        {op::nn_layer_norm, {{"axes", Ints{1}}}},
        {op::nn_rms_norm, {{"axes", Ints{1}}}}}},
      {"two groups",
       {{op::nn_conv1d, {{"groups", int64_t{2}}}},
        {op::nn_conv2d, {{"groups", int64_t{2}}}},
        {op::nn_conv2d_transpose, {{"groups", int64_t{2}}}}},
       {{2, 4, 6, 6}, {4, 2, 3, 3}, {2, 4, 6}, {4, 2, 3}}},
      {"float16 output",
       {{op::matmul, {{"out_dtype", std::string("float16")}}},
        {op::nn_dense, {{"out_dtype", std::string("float16")}}},
        {op::nn_conv1d, {{"out_dtype", std::string("float16")}}},
        {op::nn_conv2d, {{"out_dtype", std::string("float16")}}},
        {op::nn_conv2d_transpose, {{"out_dtype", std::string("float16")}}}}},
      {"epsilon 0.5",
       {{op::nn_layer_norm, {{"epsilon", 0.5}}},
        {op::nn_rms_norm, {{"epsilon", 0.5}}},
        {op::nn_group_norm, {{"epsilon", 0.5}}},
        {op::nn_batch_norm, {{"epsilon", 0.5}}}}},
  };
  return themes;
}

// Whether `call` leaves open an attribute `theme` sets: a literal fixes it, a capture does not.
bool leaves_open(const CallPattern& call, const OpSettings& settings) {
  for (const AttributeSetting& setting : settings.settings) {
    const bool literal = std::any_of(call.attrs.begin(), call.attrs.end(), [&](const PatternAttr& attr) {
      return attr.name == setting.name && attr.literal.has_value();
    });
    if (!literal) return true;
  }
  return false;
}

// Whether `theme` changes an instance of `pattern`: a call of one of its ops leaves one of its attributes open.
bool theme_applies(const Pattern& pattern, const AttributeTheme& theme) {
  if (const auto* call = std::get_if<CallPattern>(&pattern.node)) {
    for (const OpName& op : call->ops) {
      const OpSettings* settings = theme.find(op.id);
      if (settings != nullptr && leaves_open(*call, *settings)) return true;
    }
  }
  bool applies = false;
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { applies = applies || theme_applies(sub, theme); });
  return applies;
}

// Builds one instance of an alternative-free left-hand side (or of the roots of a multi-root rule) as a function,
// taking every open decision (leaf shapes and dtypes, reshape and broadcast targets, unwritten permutations,
// constants, a group member's alternative, the region of a dominator pattern) from `choices`. Deterministic in the
// choices, so building twice with the same choices gives two identical functions.
class InstanceBuilder {
 public:
  InstanceBuilder(ChoiceSequence& choices, const AstFile& file, Function& function, SiblingShapes siblings,
                  const std::set<std::string>& numbers, const AttributeTheme* theme)
      : choices_(choices), file_(file), function_(function), siblings_(siblings), numbers_(numbers), theme_(theme) {}

  // The roots of one alternative of a multi-root rule, in order, each a node of the same function (a name bound
  // by an earlier root is the same node in a later one); a group root gets `members` members. A name first bound
  // inside a group is a list, one value per member, so each member binds it afresh. Empty on failure.
  std::vector<Node*> build_roots(const Rule& rule, const RootsAlternative& roots, size_t members) {
    const std::set<std::string> names_of_several_roots = names_in_several_roots(rule, roots);
    std::vector<Node*> nodes;
    for (size_t r = 0; r < rule.roots.size(); ++r) {
      const RootDecl& decl = rule.roots[r];
      const std::vector<PatternPtr>& patterns = roots.roots[r];
      for (size_t member = 0; member < (decl.group ? members : 1); ++member) {
        std::map<std::string, Node*> outer = values_;
        // Later members repeat the first one's choices where they can: one member's search, not the product.
        member_choices_ = !decl.group  ? MemberChoices::Free
                          : member == 0 ? MemberChoices::Record
                                        : MemberChoices::Replay;
        replayed_ = 0;
        if (member == 0) recorded_.clear();
        sibling_ = decl.group ? member : r;
        single_root_ = !decl.group;
        shared_names_.clear();
        if (decl.group) {
          for (const auto& [name, value] : outer) shared_names_.insert(name);
        } else {
          shared_names_ = names_of_several_roots;
        }
        size_t alternative = 0;
        if (decl.group) {
          const GroupAlternatives& alternatives = siblings_.alternatives;
          alternative = alternatives.every_member ? *alternatives.every_member % patterns.size()
                                                  : pick_index(patterns.size());
          if (alternatives.mixed) alternative = (alternative + member) % patterns.size();
        }
        in_sibling_ = true;
        Node* node = build_named(decl.name, *patterns[alternative]);
        member_choices_ = MemberChoices::Free;
        in_sibling_ = false;
        if (decl.group) values_ = std::move(outer);
        if (node == nullptr) return {};
        nodes.push_back(node);
      }
    }
    return nodes;
  }

  // The partition rules whose composite functions the instance calls: they carve them out of it once built.
  const std::vector<PartitionRef>& partitions() const { return partitions_; }
  // The attribute values the theme gave the instance's calls: `nn.conv2d(strides=[2, 2], padding=[1, 1, 1, 1])`.
  std::string varied_attributes() const {
    std::string text;
    for (const std::string& call : varied_) text += (text.empty() ? "" : ", ") + call;
    return text;
  }

  // Null (see error()) when the instance does not type-check or uses a construct that cannot be built.
  Node* build(const Pattern& pattern) {
    return std::visit(Overloaded{
                          [&](const WildcardPattern&) { return open_leaf("", nullptr); },
                          [&](const VarPattern& var) { return named_leaf(var.name, nullptr, true); },
                          [&](const BindPattern& bind) { return build_named(bind.name, *bind.inner); },
                          [&](const CallPattern& call) { return build_call(call); },
                          [&](const ConstPattern& constant) { return build_constant(constant); },
                          [&](const AltPattern& alt) { return build(*alt.alternatives.front()); },
                          [&](const TypePattern& type) { return open_leaf("", &type); },
                          [&](const ItemPattern& item) { return build_item(item); },
                          [&](const TuplePattern& tuple) { return build_tuple(tuple); },
                          [&](const ParamPattern& param) {
                            return named_leaf(param.name.value_or(""), nullptr, false);
                          },
                          [&](const DominatorPattern& dominator) { return build_dominator(dominator); },
                      },
                      pattern.node);
  }

  const std::string& error() const { return error_; }

 private:
  // One of `options` (the first preferred). While a group's first member is built its picks are recorded; later
  // members pick the same values where their options hold them (an option list may differ between members: the
  // shapes built so far grow), and choose freely otherwise.
  template <typename T>
  T pick(const std::vector<T>& options) {
    if (member_choices_ == MemberChoices::Replay && replayed_ < recorded_.size()) {
      if (const T* recorded = std::any_cast<T>(&recorded_[replayed_++])) {
        auto found = std::find(options.begin(), options.end(), *recorded);
        if (found != options.end()) return *found;
      }
    }
    T chosen = options[choices_.choose(options.size())];
    if (member_choices_ == MemberChoices::Record) recorded_.emplace_back(chosen);
    return chosen;
  }
  size_t pick_index(size_t count) {
    std::vector<size_t> indices(count);
    for (size_t i = 0; i < count; ++i) indices[i] = i;
    return pick(indices);
  }

  Node* fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return nullptr;
  }

  // A leaf that may be an open operand of a dominator pattern's child (`_`, a variable, a type pattern; not
  // `var()`, which must be a parameter).
  Node* named_leaf(const std::string& name, const TypePattern* type, bool open) {
    if (!name.empty()) {
      if (auto found = values_.find(name); found != values_.end()) return found->second;
    }
    Node* node = open ? open_leaf(name, type) : leaf(name, type);
    if (node != nullptr && !name.empty()) values_[name] = node;
    return node;
  }

  // `name: pattern` (a bind, or a root of a multi-root rule): the value bound to `name` before, or the pattern's
  // instance, a parameter called `name` when the pattern is a leaf.
  Node* build_named(const std::string& name, const Pattern& pattern) {
    if (auto found = values_.find(name); found != values_.end()) return found->second;
    Node* node = nullptr;
    if (const auto* type = std::get_if<TypePattern>(&pattern.node)) {
      node = open_leaf(name, type);
    } else if (std::holds_alternative<WildcardPattern>(pattern.node)) {
      node = open_leaf(name, nullptr);
    } else if (const auto* param = std::get_if<ParamPattern>(&pattern.node); param != nullptr && !param->name) {
      node = leaf(name, nullptr);
    } else {
      node = build(pattern);
    }
    if (node != nullptr) values_[name] = node;
    return node;
  }

  // Inside a dominator pattern's child an open operand is part of the region: the parent, or a unary op of the
  // path applied to it (the walk from the child's operands must reach the parent through path ops only).
  Node* open_leaf(const std::string& name, const TypePattern* type) {
    if (dominators_.empty() || type != nullptr) return leaf(name, type);
    const DominatorFrame& frame = dominators_.back();
    const size_t choice = pick_index(frame.unary_path_ops.size() + 1);
    if (choice == frame.unary_path_ops.size()) return frame.parent;
    std::string error;
    Node* node = function_.add_call(frame.unary_path_ops[choice], std::vector<Node*>{frame.parent}, {}, error);
    return node != nullptr ? node : fail(error);
  }

  // `dominates(parent, path, child)`: the parent, then the child with its open operands in the region above.
  Node* build_dominator(const DominatorPattern& dominator) {
    Node* parent = build(*dominator.parent);
    if (parent == nullptr) return nullptr;
    DominatorFrame frame{parent, {}};
    for (OpId op : kPreferredPathOps) {
      if (std::binary_search(dominator.path_ops.begin(), dominator.path_ops.end(), op)) {
        frame.unary_path_ops.push_back(op);
      }
    }
    for (OpId op : dominator.path_ops) {
      const OpInfo& info = OpRegistry::global().get(op);
      if (frame.unary_path_ops.empty() && info.min_operands == 1 && info.max_operands == 1) {
        frame.unary_path_ops.push_back(op);
      }
    }
    dominators_.push_back(std::move(frame));
    Node* child = build(*dominator.child);
    dominators_.pop_back();
    return child;
  }

  // `composite("NAME")(...)`: the instance of the file's partition of that name, which build_instance() then
  // carves into a composite function and a call of it. Its names are its own: they are not the rule's.
  Node* build_composite(const std::string& composite) {
    std::optional<PartitionRef> partition = find_partition(file_, composite);
    if (!partition) {
      return fail("no partition of this file makes the composite functions \"" + composite + "\" calls");
    }
    const Rule& rule = file_.passes[partition->pass_index].rules[partition->rule_index];
    owned_.push_back(expand_alternatives(*rule.lhs));
    const std::vector<PatternPtr>& alternatives = owned_.back();
    std::map<std::string, Node*> outer = std::exchange(values_, {});
    Node* node = build(*alternatives[pick_index(alternatives.size())]);
    values_ = std::move(outer);
    partitions_.push_back(*partition);
    return node;
  }

  int64_t dim_extent(const DimPattern& dim) {
    switch (dim.kind) {
      case DimPattern::Kind::Any: return kAnyDimExtent;
      case DimPattern::Kind::Fixed: return dim.extent;
      case DimPattern::Kind::Var: return variable_extent(dim.name);
      case DimPattern::Kind::Expr: break;
    }
    // Its variables take their extents (chosen now when they are bound further on); an arithmetic that is no
    // extent for them builds what the pattern does not match, and the next instance is tried.
    std::optional<int64_t> extent =
        evaluate_dimension(dim.written(), [&](const std::string& name) { return variable_extent(name); });
    return extent && *extent > 0 ? *extent : kAnyDimExtent;
  }

  // The next of kDimExtents, or (a later choice) twice it: a guard relating dimensions (`d == half * 2`) may need
  // an even extent where the next one is odd.
  int64_t variable_extent(const std::string& name) {
    if (auto found = dims_.find(name); found != dims_.end()) return found->second;
    const int64_t next = kDimExtents[dims_.size() % kDimExtents.size()];
    const int64_t extent = pick(std::vector<int64_t>{next, 2 * next});
    dims_[name] = extent;
    return extent;
  }

  // A function parameter: of the pattern's type when it gives a shape, else of one of leaf_shapes().
  Node* leaf(const std::string& name, const TypePattern* type) {
    std::vector<int64_t> extents;
    if (type != nullptr && type->shape) {
      for (const DimPattern& dim : *type->shape) extents.push_back(dim_extent(dim));
    } else {
      // A sibling's leaf is private unless another sibling uses its name (a group's members share no leaf).
      const bool private_leaf = in_sibling_ && (name.empty() || shared_names_.count(name) == 0);
      extents = pick_leaf_shape(leaf_shapes(private_leaf), private_leaf);
    }
    DType dtype = type != nullptr && type->dtype ? *type->dtype : pick(leaf_dtypes());
    std::string param_name = name.empty() ? fmt::format("arg{}", function_.params().size()) : name;
    std::vector<Dim> dims = fixed_dims(extents);
    return function_.add_param(param_name, Type::tensor(dtype, dims));
  }

  // kLeafDtypes, the dtype of the operands built before a leaf built after them (build_call) first.
  std::vector<DType> leaf_dtypes() const {
    std::vector<DType> dtypes = kLeafDtypes;
    if (sibling_operand_dtype_) {
      std::erase(dtypes, *sibling_operand_dtype_);
      dtypes.insert(dtypes.begin(), *sibling_operand_dtype_);
    }
    return dtypes;
  }

  // The shapes the instance has so far (the latest first: an elementwise sibling), then vectors of their channel
  // (axis 1) and last extents (biases, norm scales), then of their other extents, then kLeafShapes. A leaf built
  // after its call's other operands (build_call) takes only their shapes, vectors of their extents or a scalar:
  // it must fit them, and fewer options keep the search over the rest of the instance short.
  std::vector<std::vector<int64_t>> leaf_shapes(bool private_leaf) const {
    std::vector<std::vector<int64_t>> shapes;
    auto add = [&](std::vector<int64_t> shape) {
      if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(std::move(shape));
    };
    // Below a call whose result shape the pattern fixes (`nn.relu(nn.conv2d(x, w)): Tensor[(1, 32, 28, 28)]`):
    // that shape, and for four axes a pointwise weight that keeps it (a 1x1 kernel from its channels to its own).
    for (auto shape = result_shapes_.rbegin(); shape != result_shapes_.rend(); ++shape) {
      add(*shape);
      if (shape->size() == 4) add({(*shape)[1], (*shape)[1], 1, 1});
    }
    std::vector<std::vector<int64_t>> built = sibling_operand_shapes_;
    if (built.empty()) {
      for (auto node = function_.nodes().rbegin(); node != function_.nodes().rend(); ++node) {
        if (std::optional<std::vector<int64_t>> extents = static_extents((*node)->type())) built.push_back(*extents);
      }
    }
    for (const auto& extents : built) add(extents);
    for (const auto& extents : built) {
      if (extents.size() >= 2) add({extents[1]});
      if (!extents.empty()) add({extents.back()});
    }
    for (const auto& extents : built) {
      for (int64_t extent : extents) add({extent});
    }
    if (sibling_operand_shapes_.empty()) {
      if (theme_ != nullptr) {
        for (const auto& extents : theme_->leaf_shapes) add(extents);
      }
      for (const auto& extents : kLeafShapes) add(extents);
    } else {
      add({1});
      add({});
    }
    if (siblings_.distinct_extents && private_leaf) {
      std::stable_partition(shapes.begin(), shapes.end(), has_distinct_extents);
    }
    return shapes;
  }

  // The shape of a leaf or constant. With SiblingShapes::vary, a later group member takes the first member's
  // shape widened, and a later single root's private leaf tries the shape of the same leaf of an earlier root
  // (the j-th private leaf of both) widened first.
  std::vector<int64_t> pick_leaf_shape(std::vector<std::vector<int64_t>> options, bool private_leaf) {
    if (!private_leaf) return pick(options);
    if (std::optional<std::vector<int64_t>> widened = widened_replay(options, true)) return *widened;
    if (!single_root_) return pick(options);
    std::vector<std::vector<int64_t>>& mine = root_private_shapes_[sibling_];
    for (size_t earlier = 0; siblings_.vary && earlier < sibling_; ++earlier) {
      const std::vector<std::vector<int64_t>>& theirs = root_private_shapes_[earlier];
      if (theirs.size() <= mine.size()) continue;
      std::vector<int64_t> widened = widen(theirs[mine.size()], sibling_ - earlier);
      std::erase(options, widened);
      options.insert(options.begin(), std::move(widened));
      break;
    }
    mine.push_back(pick(options));
    return mine.back();
  }

  // A later group member's replay of a shape the first member picked, widened (SiblingShapes::vary); a shape
  // that is not a leaf's only when it is one of `options`. Nothing when the shape has no extent to widen.
  std::optional<std::vector<int64_t>> widened_replay(const std::vector<std::vector<int64_t>>& options,
                                                     bool any_shape) {
    if (!siblings_.vary || member_choices_ != MemberChoices::Replay || replayed_ >= recorded_.size()) {
      return std::nullopt;
    }
    const auto* recorded = std::any_cast<std::vector<int64_t>>(&recorded_[replayed_]);
    if (recorded == nullptr) return std::nullopt;
    std::vector<int64_t> widened = widen(*recorded, sibling_);
    if (widened == *recorded) return std::nullopt;
    if (!any_shape && std::find(options.begin(), options.end(), widened) == options.end()) return std::nullopt;
    ++replayed_;
    return widened;
  }

  // `extents` with every extent no shared value has (unit axes aside: they broadcast) widened by 4 per step.
  std::vector<int64_t> widen(std::vector<int64_t> extents, size_t steps) const {
    std::set<int64_t> shared;
    for (const std::string& name : shared_names_) {
      auto found = values_.find(name);
      if (found == values_.end()) continue;
      if (std::optional<std::vector<int64_t>> value_extents = static_extents(found->second->type())) {
        shared.insert(value_extents->begin(), value_extents->end());
      }
    }
    for (int64_t& extent : extents) {
      if (extent > 1 && shared.count(extent) == 0) extent += 4 * static_cast<int64_t>(steps);
    }
    return extents;
  }

  static bool has_distinct_extents(const std::vector<int64_t>& extents) {
    for (size_t i = 0; i < extents.size(); ++i) {
      if (std::find(extents.begin() + static_cast<std::ptrdiff_t>(i) + 1, extents.end(), extents[i]) !=
          extents.end()) {
        return false;
      }
    }
    return true;
  }

  Node* build_constant(const ConstPattern& constant) {
    Literal literal;
    literal.dtype = constant.dtype ? *constant.dtype : pick(kConstantDtypes);
    if (constant.value) {
      literal.values = {*constant.value};
      return function_.add_constant(std::move(literal));
    }
    // Any constant: a scalar of one of kConstantValues (distinct per constant), or a tensor of one of the leaf
    // shapes (a weight).
    double base = pick(kConstantValues);
    if (base == kConstantValues.front()) base += 0.0625 * static_cast<double>(constants_++);
    std::vector<std::vector<int64_t>> shapes = leaf_shapes(in_sibling_);
    shapes.insert(shapes.begin(), std::vector<int64_t>{});
    literal.shape = pick_leaf_shape(std::move(shapes), in_sibling_);
    int64_t elements = 1;
    for (int64_t extent : literal.shape) elements *= extent;
    for (int64_t i = 0; i < elements; ++i) literal.values.push_back(base - 0.125 * static_cast<double>(i % 7));
    return function_.add_constant(std::move(literal));
  }

  Node* build_tuple(const TuplePattern& tuple) {
    std::vector<Node*> fields;
    for (const PatternPtr& field : tuple.fields) {
      Node* node = build(*field);
      if (node == nullptr) return nullptr;
      fields.push_back(node);
    }
    // `(a, ...)`, `(parts...)`: one field more (so that the rest is not always empty), or two or three (a guard
    // `parts.count == 2`); a later field prefers the shape of the one before it, then is that field itself (a
    // value listed twice, as in TinyLlama's cosine table `concat((f, f), axis=-1)`).
    const size_t rest_fields = tuple.rest ? pick(kRestFieldCounts) : 0;
    for (size_t i = 0; i < rest_fields; ++i) {
      const bool repeat = !fields.empty() && pick_index(2) == 1;
      Node* node = repeat ? fields.back() : leaf("", nullptr);
      if (node == nullptr) return nullptr;
      fields.push_back(node);
    }
    return function_.add_tuple(fields);
  }

  Node* build_item(const ItemPattern& item) {
    int64_t index = item.index.value_or(0);
    Node* tuple = nullptr;
    const Pattern* inner = item.tuple.get();
    if (const auto* bind = std::get_if<BindPattern>(&inner->node)) inner = bind->inner.get();
    if (std::holds_alternative<CallPattern>(inner->node) || std::holds_alternative<TuplePattern>(inner->node)) {
      tuple = build(*item.tuple);
    } else {
      // A leaf tuple: a tuple of leaves, long enough for the index.
      std::vector<Node*> fields;
      for (int64_t i = 0; i <= index; ++i) {
        Node* field = leaf("", nullptr);
        if (field == nullptr) return nullptr;
        fields.push_back(field);
      }
      tuple = function_.add_tuple(fields);
    }
    if (tuple == nullptr) return nullptr;
    std::string error;
    Node* node = function_.add_tuple_item(tuple, index, error);
    return node != nullptr ? node : fail(error);
  }

  // Targets tried for a reshape of a tensor of `extents`: merge the first two axes, split the first by a
  // dimension variable's extent (then by small factors), merge any other two adjacent axes, flatten, keep.
  std::vector<std::vector<int64_t>> reshape_targets(const std::vector<int64_t>& extents) const {
    std::vector<std::vector<int64_t>> targets;
    auto add = [&](std::vector<int64_t> target) {
      for (const auto& seen : targets) {
        if (seen == target) return;
      }
      targets.push_back(std::move(target));
    };
    size_t rank = extents.size();
    if (rank >= 2) {
      std::vector<int64_t> merged = {extents[0] * extents[1]};
      merged.insert(merged.end(), extents.begin() + 2, extents.end());
      add(merged);
    }
    if (rank >= 1) {
      std::vector<int64_t> factors;
      for (const auto& [name, extent] : dim_order()) factors.push_back(extent);
      factors.insert(factors.end(), kSplitFactors.begin(), kSplitFactors.end());
      for (int64_t factor : factors) {
        if (factor <= 1 || factor >= extents[0] || extents[0] % factor != 0) continue;
        std::vector<int64_t> split = {factor, extents[0] / factor};
        split.insert(split.end(), extents.begin() + 1, extents.end());
        add(split);
      }
    }
    for (size_t axis = 1; axis + 1 < rank; ++axis) {
      std::vector<int64_t> merged(extents.begin(), extents.begin() + static_cast<std::ptrdiff_t>(axis));
      merged.push_back(extents[axis] * extents[axis + 1]);
      merged.insert(merged.end(), extents.begin() + static_cast<std::ptrdiff_t>(axis) + 2, extents.end());
      add(merged);
    }
    int64_t total = 1;
    for (int64_t extent : extents) total *= extent;
    add({total});
    add(extents);
    return targets;
  }

  // Dimension variables in order of first use (their extents are increasing in that order).
  std::vector<std::pair<std::string, int64_t>> dim_order() const {
    std::vector<std::pair<std::string, int64_t>> order(dims_.begin(), dims_.end());
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    return order;
  }

  // The shape operand of reshape / broadcast_to / image.resize2d (when the pattern leaves it open): one of the
  // targets above; for broadcast_to, the input's shape with its unit axes repeated, or with a leading axis added;
  // for resize2d, the image's last two extents doubled or kept.
  Node* shape_operand(OpId op, Node* input) {
    std::optional<std::vector<int64_t>> extents = input != nullptr ? static_extents(input->type()) : std::nullopt;
    if (!extents) return fail("the shape operand's input has no static shape");
    std::vector<std::vector<int64_t>> targets;
    if (op == op::reshape) {
      targets = reshape_targets(*extents);
    } else if (op == op::image_resize2d) {
      if (extents->size() != 4) return fail("the resized image is not 4-D");
      targets = {{(*extents)[2] * 2, (*extents)[3] * 2}, {(*extents)[2], (*extents)[3]}};
    } else {
      std::vector<int64_t> repeated = *extents;
      for (int64_t& extent : repeated) extent = extent == 1 ? 2 : extent;
      targets = {repeated, *extents};
      std::vector<int64_t> widened = {2};
      widened.insert(widened.end(), extents->begin(), extents->end());
      targets.push_back(widened);
    }
    std::optional<std::vector<int64_t>> widened = widened_replay(targets, false);
    return function_.add_shape(fixed_dims(widened ? *widened : pick(targets)));
  }

  // Permutations tried for a permute_dims whose axes the pattern does not fix: the default (reverse), swap the
  // last two axes, swap axes 1 and 2.
  AttrValue permutation(Node* input) {
    int rank = input != nullptr && input->type()->is_tensor() ? input->type()->rank() : -1;
    std::vector<AttrValue> options = {std::monostate{}};
    if (rank >= 2) {
      std::vector<int64_t> axes(static_cast<size_t>(rank));
      for (int i = 0; i < rank; ++i) axes[static_cast<size_t>(i)] = i;
      std::swap(axes[static_cast<size_t>(rank - 2)], axes[static_cast<size_t>(rank - 1)]);
      options.emplace_back(axes);
      if (rank >= 4) {
        for (int i = 0; i < rank; ++i) axes[static_cast<size_t>(i)] = i;
        std::swap(axes[1], axes[2]);
        options.emplace_back(axes);
      }
    }
    return pick(options);
  }

  static bool is_leaf(const Pattern& pattern) {
    return std::holds_alternative<WildcardPattern>(pattern.node) || std::holds_alternative<VarPattern>(pattern.node);
  }

  // The extents of a result type whose every dimension is a number; nullopt otherwise.
  static std::optional<std::vector<int64_t>> fixed_shape(const std::optional<TypePattern>& type) {
    if (!type || !type->shape) return std::nullopt;
    std::vector<int64_t> extents;
    for (const DimPattern& dim : *type->shape) {
      if (dim.kind != DimPattern::Kind::Fixed) return std::nullopt;
      extents.push_back(dim.extent);
    }
    return extents;
  }

  static bool has_shaped_type(const Pattern& pattern) {
    if (const auto* type = std::get_if<TypePattern>(&pattern.node); type != nullptr && type->shape) return true;
    bool found = false;
    for_each_sub_pattern(pattern, [&](const Pattern& sub) { found = found || has_shaped_type(sub); });
    return found;
  }

  // When an operand of a call holds a type pattern with a shape, the operands that are bare leaves are built
  // last, so that they can take shapes fitting it (grouped-query attention's untyped query must agree with its
  // key, typed (b, kv_heads, s, dk)).
  static bool defers_leaf_operands(const CallPattern& call, bool takes_shape) {
    return !takes_shape && std::any_of(call.operands.begin(), call.operands.end(),
                                       [](const PatternPtr& operand) { return has_shaped_type(*operand); });
  }

  static std::vector<size_t> operand_build_order(const CallPattern& call, bool defers_leaves) {
    std::vector<size_t> order(call.operands.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (defers_leaves) {
      std::stable_partition(order.begin(), order.end(), [&](size_t i) { return !is_leaf(*call.operands[i]); });
    }
    return order;
  }

  Node* build_call(const CallPattern& call) {
    if (call.composite) return build_composite(*call.composite);
    if (call.ops.size() != 1) return fail("a call with op alternatives was not expanded");
    // The leaves below a call whose result shape the pattern fixes try shapes that give it first (leaf_shapes).
    std::optional<std::vector<int64_t>> result_shape = fixed_shape(call.result_type);
    if (result_shape) result_shapes_.push_back(std::move(*result_shape));
    struct PopResultShape {
      std::vector<std::vector<int64_t>>* shapes;
      bool pushed;
      ~PopResultShape() {
        if (pushed) shapes->pop_back();
      }
    } pop{&result_shapes_, result_shape.has_value()};
    const OpInfo& info = OpRegistry::global().get(call.ops.front().id);
    bool takes_shape = info.id == op::reshape || info.id == op::broadcast_to || info.id == op::image_resize2d;
    std::vector<Node*> operands(call.operands.size(), nullptr);
    const bool defers_leaves = defers_leaf_operands(call, takes_shape);
    for (size_t i : operand_build_order(call, defers_leaves)) {
      const Pattern& operand = *call.operands[i];
      Node* node = nullptr;
      // A leaf built after operands written after it takes their shapes (the query the key's) and dtype.
      if (defers_leaves && is_leaf(operand)) {
        for (const Node* built : operands) {
          if (built == nullptr) continue;
          if (std::optional<std::vector<int64_t>> extents = static_extents(built->type())) {
            sibling_operand_shapes_.push_back(*extents);
            if (!sibling_operand_dtype_) sibling_operand_dtype_ = built->type()->dtype();
          }
        }
      }
      bool open_shape = takes_shape && i == 1 && is_leaf(operand);
      if (open_shape) {
        const auto* var = std::get_if<VarPattern>(&operand.node);
        if (var != nullptr && values_.count(var->name) != 0) {
          node = values_[var->name];
        } else {
          node = shape_operand(info.id, operands.front());
          if (var != nullptr && node != nullptr) values_[var->name] = node;
        }
      } else {
        node = build(operand);
      }
      sibling_operand_shapes_.clear();
      sibling_operand_dtype_.reset();
      if (node == nullptr) return nullptr;
      operands[i] = node;
    }
    // `f(a, ...)`: as many more operands as the op needs at least.
    while (call.rest && operands.size() < static_cast<size_t>(std::max(info.min_operands, 0))) {
      Node* node = leaf("", nullptr);
      if (node == nullptr) return nullptr;
      operands.push_back(node);
    }
    AttrList attrs = info.default_attrs();
    std::vector<bool> written(attrs.size(), false);
    for (const PatternAttr& attr : call.attrs) {
      int index = info.attr_index(attr.name);  // expand_alternatives' copies do not keep sema's index
      if (index < 0 || !attr.literal) continue;
      auto slot = static_cast<size_t>(index);
      attrs[slot] = *attr.literal;
      if (!attr_matches_kind(info.attrs[slot].kind, attrs[slot])) {
        return fail("attribute " + attr.name + " does not fit its kind");
      }
      written[slot] = true;
    }
    // An optional number the rule reads as a number: a number (the rule declines where it is None), the same one
    // wherever the capture repeats. Each capture starts at another value, so that a first instance does not make
    // them all equal (`clip(clip(x, min=a, max=b), min=c, max=d)`: a guard comparing them decides something).
    for (const PatternAttr& attr : call.attrs) {
      const int index = info.attr_index(attr.name);
      if (index < 0 || attr.literal || numbers_.count(attr.capture) == 0) continue;
      auto slot = static_cast<size_t>(index);
      auto [chosen, fresh] = captured_numbers_.try_emplace(attr.capture);
      if (fresh) {
        std::vector<AttrValue> options;
        if (info.attrs[slot].kind == AttrKind::OptFloat) {
          options = {1.0, 0.0, 0.5, 2.0, -1.0};
        } else {
          options = {int64_t{1}, int64_t{0}, int64_t{2}, int64_t{-1}};
        }
        const size_t first = (captured_numbers_.size() - 1) % options.size();
        std::rotate(options.begin(), options.begin() + static_cast<std::ptrdiff_t>(first), options.end());
        chosen->second = pick(options);
      }
      attrs[slot] = chosen->second;
      written[slot] = true;
    }
    if (info.id == op::strided_slice) choose_slice_bounds(call, info, operands, attrs, written);
    if (const OpSettings* settings = theme_ != nullptr ? theme_->find(info.id) : nullptr) {
      apply_theme(info, *settings, attrs, written);
    }
    if (info.id == op::permute_dims) {
      int axes = info.attr_index("axes");
      if (axes >= 0 && !written[static_cast<size_t>(axes)]) {
        attrs[static_cast<size_t>(axes)] = permutation(operands.empty() ? nullptr : operands.front());
      }
    }
    std::string error;
    Node* node = function_.add_call(info.id, operands, std::move(attrs), error);
    return node != nullptr ? node : fail(error);
  }

  // strided_slice's begin and end where the pattern leaves them open: one entry per axis (the defaults, empty
  // lists, fit no axes), begin at each axis' middle or start, end at its end or middle. A capture takes the same
  // list wherever it repeats (`begin=m` ... `end=m`: two halves that meet).
  void choose_slice_bounds(const CallPattern& call, const OpInfo& info, const std::vector<Node*>& operands,
                           AttrList& attrs, const std::vector<bool>& written) {
    const int axes_index = info.attr_index("axes");
    const auto* axes = axes_index >= 0 ? std::get_if<Ints>(&attrs[static_cast<size_t>(axes_index)]) : nullptr;
    std::optional<std::vector<int64_t>> extents =
        operands.empty() || operands.front() == nullptr ? std::nullopt : static_extents(operands.front()->type());
    if (axes == nullptr || axes->empty() || !extents) return;
    Ints starts, middles, ends;
    for (int64_t axis : *axes) {
      const int64_t rank = static_cast<int64_t>(extents->size());
      const int64_t at = axis < 0 ? axis + rank : axis;
      const int64_t extent = at >= 0 && at < rank ? (*extents)[static_cast<size_t>(at)] : 1;
      starts.push_back(0);
      middles.push_back(extent / 2);
      ends.push_back(extent);
    }
    for (const auto& bound : {std::pair<std::string, std::vector<Ints>>{"begin", {middles, starts}},
                              std::pair<std::string, std::vector<Ints>>{"end", {ends, middles}}}) {
      const std::string& name = bound.first;
      const std::vector<Ints>& options = bound.second;
      const auto slot = static_cast<size_t>(info.attr_index(name));
      if (written[slot]) continue;
      auto captured = std::find_if(call.attrs.begin(), call.attrs.end(),
                                   [&](const PatternAttr& attr) { return attr.name == name && !attr.capture.empty(); });
      if (captured == call.attrs.end()) {
        attrs[slot] = pick(options);
        continue;
      }
      auto [chosen, fresh] = captured_lists_.try_emplace(captured->capture);
      if (fresh) chosen->second = pick(options);
      attrs[slot] = chosen->second;
    }
  }

  // The theme's settings for the attributes the pattern did not write (a capture takes what the theme gives).
  void apply_theme(const OpInfo& info, const OpSettings& settings, AttrList& attrs, const std::vector<bool>& written) {
    std::string set;
    for (const AttributeSetting& setting : settings.settings) {
      const int index = info.attr_index(setting.name);
      if (index < 0 || written[static_cast<size_t>(index)]) continue;
      attrs[static_cast<size_t>(index)] = setting.value;
      set += fmt::format("{}{}={}", set.empty() ? "" : ", ", setting.name, attr_value_str(setting.value));
    }
    if (!set.empty()) varied_.insert(fmt::format("{}({})", info.name, set));
  }

  struct DominatorFrame {
    Node* parent;
    std::vector<OpId> unary_path_ops;
  };

  ChoiceSequence& choices_;
  const AstFile& file_;
  Function& function_;
  std::map<std::string, Node*> values_;
  std::vector<DominatorFrame> dominators_;  // the dominator patterns whose child is being built, innermost last
  enum class MemberChoices : uint8_t { Free, Record, Replay };
  MemberChoices member_choices_ = MemberChoices::Free;
  SiblingShapes siblings_;
  bool in_sibling_ = false;   // building a root of a multi-root rule (a group member or a single root)
  bool single_root_ = false;  // ... a single root
  size_t sibling_ = 0;        // the member's index in its group, or the single root's index
  std::set<std::string> shared_names_;  // the names whose values the sibling being built shares with others
  std::map<size_t, std::vector<std::vector<int64_t>>> root_private_shapes_;  // per single root, in build order
  std::vector<std::vector<int64_t>> sibling_operand_shapes_;  // see build_call
  std::vector<std::vector<int64_t>> result_shapes_;  // the fixed result shapes of the calls being built, innermost last
  std::optional<DType> sibling_operand_dtype_;
  std::vector<std::any> recorded_;  // the picks of a group's first member
  size_t replayed_ = 0;
  std::vector<PartitionRef> partitions_;
  std::vector<std::vector<PatternPtr>> owned_;  // expanded partition patterns the instance was built from
  std::map<std::string, int64_t> dims_;
  const std::set<std::string>& numbers_;                // InstanceSpec::numbers
  std::map<std::string, AttrValue> captured_numbers_;  // what build_call chose for them
  std::map<std::string, Ints> captured_lists_;         // what choose_slice_bounds chose for captured bounds
  const AttributeTheme* theme_;                         // null: the op's defaults
  std::set<std::string> varied_;                        // see varied_attributes()
  int constants_ = 0;
  std::string error_;
};

// What an instance is built from: one alternative of a single-root rule's or a partition's left-hand side, or
// one alternative of a multi-root rule's roots with a number of members per group.
struct InstanceSpec {
  const Pattern* lhs = nullptr;
  const Rule* rule = nullptr;  // multi-root
  const RootsAlternative* roots = nullptr;
  size_t group_members = 2;
  SiblingShapes siblings;
  std::set<std::string> numbers;  // captured optional numbers the rule reads as numbers (optional_numbers_read)
  const AttributeTheme* theme = nullptr;  // open attributes take its values, not the op's defaults
};

// Builds the instance `choices` describe into a fresh module whose function `main` returns the left-hand side's
// value (a multi-root rule's: a tuple of its roots' values, every group member's). Composite calls are carved by
// their partitions, run alone. Null when it does not type-check (or a partition does not fire). `varied` (may be
// null) receives the attribute values the spec's theme gave the calls.
std::unique_ptr<Module> build_instance(RuleInterpreter& interpreter, const InstanceSpec& spec,
                                       ChoiceSequence& choices, std::string& error, std::string* varied = nullptr) {
  auto module = std::make_unique<Module>();
  Function& function = module->add_function("main");
  InstanceBuilder builder(choices, interpreter.file(), function, spec.siblings, spec.numbers, spec.theme);
  Node* output = nullptr;
  if (spec.rule != nullptr) {
    std::vector<Node*> roots = builder.build_roots(*spec.rule, *spec.roots, spec.group_members);
    std::erase_if(roots, [](const Node* root) { return root->kind() == NodeKind::Param; });
    if (!roots.empty()) output = function.add_tuple(roots);
  } else {
    output = builder.build(*spec.lhs);
    if (output != nullptr && !output->is_call() && output->kind() != NodeKind::TupleItem) {
      error = "the left-hand side is not a call";
      return nullptr;
    }
  }
  if (output == nullptr) {
    error = builder.error();
    return nullptr;
  }
  function.set_output(output);
  if (varied != nullptr) *varied = builder.varied_attributes();
  for (const PartitionRef& partition : builder.partitions()) {
    PassResult result = run_pass(interpreter.single_rule_pass(partition.pass_index, partition.rule_index), *module);
    if (result.stats.fired.empty() || result.stats.fired.front() == 0) {
      error = "the partition making the composite function did not fire";
      return nullptr;
    }
  }
  return module;
}

// float32 results of a rewrite may differ by reassociation: 1e-4 absolute plus 1e-4 relative. Other dtypes use
// the interpreter's defaults (float16 1e-3 + 1e-2, integers exact).
Tolerance verify_tolerance(DType dtype) {
  if (dtype == DType::Float32) return Tolerance{1e-4, 1e-4};
  return default_tolerance(dtype);
}

// The dtype of the first tensor of `type` (float32 when it holds none): the tolerance follows it.
DType first_dtype(const Type& type) {
  if (type.is_tensor()) return type.dtype();
  for (const TypeRef& field : type.fields()) return first_dtype(*field);
  return DType::Float32;
}

// The parameters' types, then those of the constants that are not scalars (weights).
std::string instance_shapes(const Function& function) {
  std::string text;
  for (const Node* param : function.params()) {
    text += (text.empty() ? "" : ", ") + param->name() + ": " + param->type()->str();
  }
  for (const Node* node : function.nodes()) {
    if (node->kind() == NodeKind::Constant && node->type()->is_tensor() && node->type()->rank() > 0) {
      text += (text.empty() ? "const: " : ", const: ") + node->type()->str();
    }
  }
  return "(" + text + ")";
}

std::string alternative_name(const Rule& rule, size_t index, size_t count) {
  if (count == 1) return rule.name;
  return fmt::format("{} (alternative {} of {})", rule.name, index + 1, count);
}

// What evaluating an instance before and after its rewrite on every seed showed.
struct SeedComparison {
  enum class Kind : uint8_t { Equal, Different, BeforeFails, AfterFails };
  Kind kind = Kind::Equal;
  std::string detail;
};

// The instance's shapes, and the attribute values a theme gave its calls.
std::string instance_description(const Function& function, const std::string& varied) {
  return instance_shapes(function) + (varied.empty() ? "" : " with " + varied);
}

SeedComparison compare_on_seeds(const Module& before_module, const Module& after_module, const std::string& varied,
                                const VerifyOptions& options) {
  const Function& before = *before_module.find("main");
  const Function& after = *after_module.find("main");
  const std::string shapes = instance_description(before, varied);
  const Tolerance tolerance = verify_tolerance(first_dtype(*before.output()->type()));
  for (uint64_t seed : options.seeds) {
    const EquivalenceResult result =
        compare_on_random_inputs(&before_module, before, &after_module, after, seed, {}, tolerance);
    switch (result.kind) {
      case EquivalenceResult::Kind::Equal:
        break;
      case EquivalenceResult::Kind::InputsFail:
      case EquivalenceResult::Kind::BeforeFails:
        return {SeedComparison::Kind::BeforeFails, shapes + ": " + result.error};
      case EquivalenceResult::Kind::AfterFails:
        return {SeedComparison::Kind::AfterFails, shapes + ": " + result.error};
      case EquivalenceResult::Kind::Different: {
        const ValueComparison& comparison = result.comparison;
        std::string difference = comparison.worst.mismatch.empty()
                                     ? fmt::format("max |difference| = {:.6g}", comparison.worst.max_abs_error)
                                     : comparison.worst.mismatch;
        return {SeedComparison::Kind::Different, fmt::format("{} at shapes {}, seed {}", difference, shapes, seed)};
      }
    }
  }
  return {SeedComparison::Kind::Equal, shapes};
}

struct RulePassRun {
  bool fired = false;
  std::string declined;  // why the driver declined a replacement for its type (PassStats::first_type_decline)
};

// Runs `pass` (one rule) on `module`, noting a replacement declined for its type: the rule matched and its guard
// held, yet its right-hand side is not even of the left-hand side's type there.
RulePassRun run_rule_pass(const PassDef& pass, Module& module) {
  PassResult result = run_pass(pass, module);
  return {!result.stats.fired.empty() && result.stats.fired.front() != 0,
          std::move(result.stats.first_type_decline)};
}

// Searches for an instance the rule rewrites and the reference interpreter can evaluate, then compares before and
// after on every seed. A replacement declined for its type is noted (RuleVerdict::declined) and the search goes on.
RuleVerdict check_instances(RuleInterpreter& interpreter, size_t pass_index, size_t rule_index,
                            const InstanceSpec& spec, const VerifyOptions& options) {
  RuleVerdict verdict;
  size_t type_checked = 0;
  std::string first_type_error;
  std::string first_eval_error;
  std::string first_decline;
  for (bool cheapest_first : {false, true}) {
    ChoiceSequence choices(cheapest_first);
    size_t attempts = 0;
    do {
      ++attempts;
      std::string error;
      std::string varied;
      std::unique_ptr<Module> before = build_instance(interpreter, spec, choices, error, &varied);
      if (choices.tried_before()) continue;
      if (before == nullptr) {
        if (first_type_error.empty()) first_type_error = error;
        continue;
      }
      ++type_checked;
      choices.replay();
      std::unique_ptr<Module> after = build_instance(interpreter, spec, choices, error);
      RulePassRun run = run_rule_pass(interpreter.single_rule_pass(pass_index, rule_index), *after);
      if (!run.declined.empty() && first_decline.empty()) {
        first_decline = run.declined + " at shapes " + instance_description(*before->find("main"), varied);
      }
      if (!run.fired) continue;
      SeedComparison comparison = compare_on_seeds(*before, *after, varied, options);
      switch (comparison.kind) {
        case SeedComparison::Kind::BeforeFails:
          // No kernel for an op at this dtype, say: another instance may do.
          if (first_eval_error.empty()) first_eval_error = comparison.detail;
          continue;
        case SeedComparison::Kind::AfterFails:
          verdict.detail = "cannot evaluate the rewritten instance " + comparison.detail;
          verdict.declined = first_decline;
          return verdict;
        case SeedComparison::Kind::Different:
          verdict.kind = RuleVerdict::Kind::Unsound;
          verdict.detail = comparison.detail;
          verdict.declined = first_decline;
          return verdict;
        case SeedComparison::Kind::Equal:
          verdict.kind = RuleVerdict::Kind::Verified;
          verdict.detail = comparison.detail;
          verdict.declined = first_decline;
          return verdict;
      }
    } while (attempts < options.max_attempts && choices.advance());
  }
  verdict.declined = first_decline;
  if (!first_decline.empty()) {
    verdict.detail = "every instance it matched declined the replacement for its type";
  } else if (!first_eval_error.empty()) {
    verdict.detail = "no instance the rule rewrites can be evaluated; the first: " + first_eval_error;
  } else if (type_checked == 0) {
    verdict.detail = "no instance of the left-hand side type-checks (" + first_type_error + ")";
  } else {
    verdict.detail = fmt::format("the instance did not match ({} instances that type-check tried)", type_checked);
  }
  return verdict;
}

// The searches a multi-root rule is checked with, in order, until one finds an instance the rule rewrites: first
// siblings of different widths with non-square private leaves (a rule reading the wrong dimension or assuming
// equal siblings shows), then for a group members of one shape with non-square leaves, then any shapes.
const std::vector<SiblingShapes> kGroupSearches = {{true, true, {}}, {true, false, {}}, {}};
const std::vector<SiblingShapes> kSingleRootSearches = {{true, true, {}}, {}};

// Runs the searches in order until one finds an instance the rule rewrites. The declined replacement reported is
// the first search's that had one: the varied shapes are where a misfit shows.
RuleVerdict search_in_turn(RuleInterpreter& interpreter, size_t pass_index, size_t rule_index, InstanceSpec spec,
                           const std::vector<SiblingShapes>& searches, const GroupAlternatives& alternatives,
                           const VerifyOptions& options) {
  RuleVerdict verdict;
  std::string declined;
  for (SiblingShapes siblings : searches) {
    siblings.alternatives = alternatives;
    spec.siblings = siblings;
    verdict = check_instances(interpreter, pass_index, rule_index, spec, options);
    if (declined.empty()) declined = verdict.declined;
    if (verdict.kind != RuleVerdict::Kind::NotVerified) break;
  }
  verdict.declined = declined;
  return verdict;
}

// One check of a rule with a group root: the number of members and the alternatives they take.
struct GroupCheck {
  size_t members;
  GroupAlternatives alternatives;
  std::string label() const {
    if (alternatives.mixed) return fmt::format("{} group members of different alternatives", members);
    if (alternatives.every_member) {
      return fmt::format("{} group members of alternative {}", members, *alternatives.every_member + 1);
    }
    return fmt::format("{} group members", members);
  }
};

// A rule with a group root is checked with 2 members and, on a separate search, with 3; when a group has
// alternatives, also with 2 members of each later alternative (the searches above take the first that gives an
// instance) and with 2 members taking different ones. Unsound when one instance is, verified when one is and none
// is unsound.
RuleVerdict check_searches(RuleInterpreter& interpreter, size_t pass_index, size_t rule_index, InstanceSpec spec,
                           const VerifyOptions& options) {
  if (spec.rule == nullptr) return check_instances(interpreter, pass_index, rule_index, spec, options);
  bool has_group = false;
  size_t group_alternatives = 1;
  for (size_t r = 0; r < spec.rule->roots.size(); ++r) {
    if (!spec.rule->roots[r].group) continue;
    has_group = true;
    group_alternatives = std::max(group_alternatives, spec.roots->roots[r].size());
  }
  if (!has_group) {
    return search_in_turn(interpreter, pass_index, rule_index, spec, kSingleRootSearches, {}, options);
  }
  std::vector<GroupCheck> checks = {{2, {}}, {3, {}}};
  for (size_t alternative = 1; alternative < group_alternatives; ++alternative) {
    checks.push_back({2, {alternative, false}});
  }
  if (group_alternatives > 1) checks.push_back({2, {std::nullopt, true}});
  RuleVerdict combined;
  std::string verified_shapes;
  for (const GroupCheck& check : checks) {
    spec.group_members = check.members;
    RuleVerdict verdict =
        search_in_turn(interpreter, pass_index, rule_index, spec, kGroupSearches, check.alternatives, options);
    if (!verdict.declined.empty()) verdict.declined += " (" + check.label() + ")";
    if (combined.declined.empty()) combined.declined = verdict.declined;
    switch (verdict.kind) {
      case RuleVerdict::Kind::Unsound:
        verdict.detail += " (" + check.label() + ")";
        return verdict;
      case RuleVerdict::Kind::Verified:
        verified_shapes += (verified_shapes.empty() ? "" : " and ") + verdict.detail + " with " + check.label();
        break;
      case RuleVerdict::Kind::NotVerified:
      case RuleVerdict::Kind::NeverMatches:  // searches give no such verdict
        if (combined.detail.empty()) combined.detail = verdict.detail + " with " + check.label();
        break;
    }
  }
  if (!verified_shapes.empty()) {
    combined.kind = RuleVerdict::Kind::Verified;
    combined.detail = verified_shapes;
  }
  return combined;
}

bool theme_applies(const InstanceSpec& spec, const AttributeTheme& theme) {
  if (spec.lhs != nullptr) return theme_applies(*spec.lhs, theme);
  for (const std::vector<PatternPtr>& root : spec.roots->roots) {
    for (const PatternPtr& pattern : root) {
      if (theme_applies(*pattern, theme)) return true;
    }
  }
  return false;
}

// An alternative is checked with the ops' default attributes, then with each theme that changes its instances:
// unsound when one of these checks is, verified when one is and none is unsound.
RuleVerdict check_alternative(RuleInterpreter& interpreter, size_t pass_index, size_t rule_index, InstanceSpec spec,
                              const VerifyOptions& options) {
  RuleVerdict verdict = check_searches(interpreter, pass_index, rule_index, spec, options);
  std::vector<std::string_view> unchecked;  // themes that apply but found no instance the rule rewrites
  for (const AttributeTheme& theme : attribute_themes()) {
    if (verdict.kind == RuleVerdict::Kind::Unsound) break;
    if (!theme_applies(spec, theme)) continue;
    spec.theme = &theme;
    RuleVerdict themed = check_searches(interpreter, pass_index, rule_index, spec, options);
    if (verdict.declined.empty()) verdict.declined = themed.declined;
    if (themed.kind == RuleVerdict::Kind::Unsound) {
      themed.declined = verdict.declined;
      return themed;
    }
    if (themed.kind != RuleVerdict::Kind::Verified) {
      unchecked.push_back(theme.name);
      continue;
    }
    if (verdict.kind == RuleVerdict::Kind::Verified) {
      verdict.detail += " and " + themed.detail;
    } else {
      verdict.kind = RuleVerdict::Kind::Verified;
      verdict.detail = themed.detail;
    }
  }
  // Said, not hidden: a rule verified with the defaults is not thereby checked for strided or grouped calls.
  if (verdict.kind == RuleVerdict::Kind::Verified && !unchecked.empty()) {
    verdict.detail += fmt::format("; not checked with {} (no instance the rule rewrites)", fmt::join(unchecked, ", "));
  }
  return verdict;
}

// The captured optional numbers (`clip(x, max=hi)`) that the rule's guards, attribute values or constants read as
// numbers (sema's as_number) or compare with a number (`hi == 6.0`): an instance where one is None only shows the
// rule declining.
std::set<std::string> optional_numbers_read(const Rule& rule) {
  std::set<std::string> names;
  // Sema sets attr_kind only on names of captured attributes.
  auto optional_number = [](const Expr& expr) {
    const bool optional = expr.attr_kind == AttrKind::OptInt || expr.attr_kind == AttrKind::OptFloat;
    return optional ? std::get_if<VarExpr>(&expr.node) : nullptr;
  };
  std::function<void(const Expr&)> visit = [&](const Expr& expr) {
    const VarExpr* var = optional_number(expr);
    if (var != nullptr && expr.type == ExprType::Number) names.insert(var->name);
    if (const auto* binary = std::get_if<BinaryExpr>(&expr.node);
        binary != nullptr && (binary->op == BinaryOp::Equal || binary->op == BinaryOp::NotEqual)) {
      for (const auto& [side, other] : {std::pair(&binary->lhs, &binary->rhs), std::pair(&binary->rhs, &binary->lhs)}) {
        const VarExpr* compared = optional_number(**side);
        if (compared != nullptr && (*other)->type == ExprType::Number) names.insert(compared->name);
      }
    }
    for_each_sub_expr(expr, visit);
  };
  for_each_rule_expr(rule, visit);
  return names;
}

// The instances of a rule's alternatives: its left-hand side's (rewrites, partitions) or its roots' (multi-root).
struct RuleAlternatives {
  std::vector<PatternPtr> patterns;
  std::vector<RootsAlternative> roots;
  std::set<std::string> numbers;  // optional_numbers_read, the same for every alternative
  size_t size() const { return patterns.size() + roots.size(); }
  InstanceSpec spec(const Rule& rule, size_t index) const {
    InstanceSpec spec;
    spec.numbers = numbers;
    if (rule.kind == Rule::Kind::MultiRoot) {
      spec.rule = &rule;
      spec.roots = &roots[index];
    } else {
      spec.lhs = patterns[index].get();
    }
    return spec;
  }
};

RuleAlternatives rule_alternatives(const Rule& rule) {
  RuleAlternatives alternatives;
  alternatives.numbers = optional_numbers_read(rule);
  if (rule.kind == Rule::Kind::MultiRoot) {
    alternatives.roots = expand_root_alternatives(rule);
  } else {
    alternatives.patterns = expand_alternatives(*rule.lhs);
  }
  return alternatives;
}

}  // namespace

VerifyResult verify_rules(const std::string& path, std::ostream& out, std::ostream& messages,
                          const VerifyOptions& options) {
  VerifyResult result;
  std::unique_ptr<CheckedFile> checked = check_file(path, messages);
  if (checked == nullptr) return result;
  const AstFile& file = *checked->compiled.ast;
  DiagnosticEngine diags;  // an unsound rule is an error at the rule
  std::unique_ptr<RuleInterpreter> interpreter = RuleInterpreter::create_for_single_rules(file);
  for (size_t pass_index = 0; pass_index < file.passes.size(); ++pass_index) {
    const Pass& pass = file.passes[pass_index];
    for (size_t rule_index = 0; rule_index < pass.rules.size(); ++rule_index) {
      const Rule& rule = pass.rules[rule_index];
      std::optional<std::string> reason = RuleInterpreter::unsupported_reason(rule);
      // Declared ops live in the file's own registry, which the interpreter and the instances do not use.
      if (!reason && !file.ops.empty()) reason = "the file declares ops";
      if (reason) {
        result.verdicts.push_back({RuleVerdict::Kind::NotVerified, pass.name, rule.name,
                                   "the rule interpreter cannot run it: " + *reason, ""});
        continue;
      }
      const RuleAlternatives alternatives = rule_alternatives(rule);
      for (size_t i = 0; i < alternatives.size(); ++i) {
        if (const DroppedAlternative* dropped = rule.find_dropped(i)) {  // never a multi-root rule's
          result.verdicts.push_back({RuleVerdict::Kind::NeverMatches, pass.name,
                                     alternative_name(rule, i, alternatives.size()), dropped->reason, ""});
          continue;
        }
        RuleVerdict verdict =
            check_alternative(*interpreter, pass_index, rule_index, alternatives.spec(rule, i), options);
        verdict.pass = pass.name;
        verdict.rule = alternative_name(rule, i, alternatives.size());
        if (verdict.kind == RuleVerdict::Kind::Unsound) {
          diags.error(rule.name_loc, "rule " + verdict.rule + " is unsound: " + verdict.detail);
        } else if (!verdict.declined.empty()) {
          diags.warning(rule.name_loc, "rule " + verdict.rule +
                                           "'s right-hand side does not fit where its left-hand side matched (the "
                                           "rewrite is declined there): " + verdict.declined);
        }
        result.verdicts.push_back(std::move(verdict));
      }
    }
  }
  diags.print(messages);
  for (const RuleVerdict& verdict : result.verdicts) {
    switch (verdict.kind) {
      case RuleVerdict::Kind::Verified:
        out << "verified: " << verdict.pass << "/" << verdict.rule << " at shapes " << verdict.detail << "\n";
        break;
      case RuleVerdict::Kind::Unsound:
        out << "unsound: " << verdict.pass << "/" << verdict.rule << "\n";
        break;
      case RuleVerdict::Kind::NotVerified:
        out << "not verified: " << verdict.pass << "/" << verdict.rule << ": " << verdict.detail << "\n";
        break;
      case RuleVerdict::Kind::NeverMatches:
        out << "never matches: " << verdict.pass << "/" << verdict.rule << ": " << verdict.detail << "\n";
        break;
    }
  }
  result.ok = !diags.has_errors();
  return result;
}

}  // namespace dpl::compiler
