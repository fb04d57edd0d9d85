// The syntax tree of a .dpl file: passes, rules, patterns (left-hand sides) and expressions (guards, right-hand
// sides). The parser builds it; sema resolves ops, attributes and variables in place; the emitter reads it.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "dpl/ir/op_registry.h"
#include "dpl/ir/types.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Lets std::visit take a set of lambdas, one per alternative of an AST node.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

struct Pattern;
using PatternPtr = std::unique_ptr<Pattern>;
struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// An op as written (`add`, `nn.softmax`, `R.nn.softmax`); sema fills in `id`.
struct OpName {
  std::string text;
  SourceLoc loc;
  OpId id = 0;
};

// --- patterns --------------------------------------------------------------------------------------------------

// `_`: matches any value.
struct WildcardPattern {};

// `x`: binds on first use; a later use must be the same value (the same node).
struct VarPattern {
  std::string name;
};

// `name: pattern`: matches `pattern` and binds the matched value to `name`.
struct BindPattern {
  std::string name;
  SourceLoc name_loc;
  PatternPtr inner;
};

// A keyword attribute inside a call pattern: `axis=-1` (a literal the attribute must equal) or `axis=a` (a
// capture binding the attribute's value to `a`).
struct PatternAttr {
  std::string name;
  SourceLoc loc;  // the attribute name
  SourceLoc value_loc;
  std::optional<AttrValue> literal;
  std::string capture;  // when not a literal
  int index = -1;       // sema: position in the op's attribute list
};

// One dimension of a type pattern: `_` (any), `4` (that extent), `n` (a dimension variable: bound on first
// use, a later use must be the same dimension, static or symbolic), or `b * n` (dimension arithmetic over
// variables the root binds, checked once the root has matched).
struct DimPattern {
  enum class Kind : uint8_t { Any, Fixed, Var, Expr };
  Kind kind = Kind::Any;
  int64_t extent = 0;
  // Var: the variable. Expr: a hidden variable (a name no user can write) bound to the dimension, which `check`
  // compares with the arithmetic as written: `dim#1 == b * n`, a guard sema types (Expr::compares_dimensions).
  std::string name;
  SourceLoc loc;
  std::shared_ptr<Expr> check;  // shared by the copies that expanding alternatives makes
  const Expr& written() const;  // Expr: the arithmetic as written (the right side of `check`)
  bool binds() const { return kind == Kind::Var || kind == Kind::Expr; }  // a (maybe hidden) dimension variable
  bool operator==(const DimPattern& other) const {
    return kind == other.kind && extent == other.extent && name == other.name;
  }
};

// `Tensor[(n, 4), float32]`, `Tensor[(_, _)]`, `Tensor[float16]`: any value of a tensor type that fits.
struct TypePattern {
  std::optional<std::vector<DimPattern>> shape;  // absent: any rank
  std::optional<DType> dtype;                    // absent: any dtype
  bool operator==(const TypePattern&) const = default;
};

// `...` or `xs...` after the last operand of a call pattern (field of a tuple pattern): any number of further
// operands, unconstrained; `xs...` binds them, in order, as a list of values.
struct RestPattern {
  std::string name;  // empty for `...`
  SourceLoc loc;
};

// `add(x, y)`, `(op: add | multiply)(x, c)`, `nn.relu?(x)`, `concat(...)`.
struct CallPattern {
  std::vector<OpName> ops;  // one, or the alternatives of `(add | multiply)(...)`
  std::string op_var;       // `op` in `(op: add | multiply)(...)`; empty when absent
  SourceLoc op_var_loc;
  bool optional = false;  // `nn.relu?(x)`: the call or its single operand
  std::vector<PatternPtr> operands;
  std::optional<RestPattern> rest;  // `f(a, xs...)`: at least operands.size() operands
  std::vector<PatternAttr> attrs;
  // `composite("ccompiler.add_sub_mul")(x, y)`: a call of a module function whose `Composite` attribute is this
  // name (a function a partition created); `ops` is then empty and `attrs` too.
  std::optional<std::string> composite;
  // `reshape(x, _): Tensor[(b * n, k)]`: the type the call's result must have (checked as a type pattern at the
  // call's node).
  std::optional<TypePattern> result_type;
};

// `const` (any constant), `const(2.0)` (a scalar with that value), `const(2.0, float16)` (and that dtype).
struct ConstPattern {
  std::optional<double> value;
  bool integer_value = false;  // written without a fraction: `const(2)` matches integer and float constants
  std::optional<DType> dtype;
};

// `t[0]`: a tuple item with that index (`t[_]`: any index) whose tuple matches `tuple`.
struct ItemPattern {
  PatternPtr tuple;
  std::optional<int64_t> index;
};

// `(p, q)`: a tuple of exactly that many fields, each matching its pattern; `(p, ...)`: at least that many.
struct TuplePattern {
  std::vector<PatternPtr> fields;
  std::optional<RestPattern> rest;
};

// `var("x")`: the function parameter named x; `var()`: any function parameter.
struct ParamPattern {
  std::optional<std::string> name;
};

// `p | q`: the first alternative that matches.
struct AltPattern {
  std::vector<PatternPtr> alternatives;
};

// `dominates(nn.conv2d(x, w), elementwise, add(_, _))`, matched at the child's node (docs/semantics.md): `child`
// matches it; walking up from its operands, every node reached is the parent (a call of one of `parent`'s ops,
// which `parent` must then match, the same node on every walk) or a call of a `path` op, walked further; the
// nodes between are used only inside the region, and so is the parent.
struct DominatorPattern {
  PatternPtr parent;
  std::vector<OpName> path;  // ops or op classes (`elementwise`), as written
  PatternPtr child;
  std::vector<OpId> path_ops;  // sema: the ops of `path`, classes expanded, sorted
};

struct Pattern {
  SourceLoc loc;
  std::variant<WildcardPattern, VarPattern, BindPattern, CallPattern, ConstPattern, AltPattern, TypePattern,
               ItemPattern, TuplePattern, ParamPattern, DominatorPattern>
      node;
};

// --- expressions (right-hand sides, guards, attribute values) -------------------------------------------------

// What an expression denotes; sema fills it in.
enum class ExprType : uint8_t {
  Unknown,  // not checked (yet), or in error
  Value,    // a graph value (a node)
  Number,   // guards compute in double precision
  Bool,
  DType,
  String,
  IntList,
  Attr,  // a captured attribute of a kind not usable as one of the above (compared as a whole)
  Op,
  ValueList,   // a variable bound inside a group root (one value per member) or by `xs...` (the operands)
  NumberList,  // `w.shape[1]` over a value list, `split_indices(...)`
  AttrList,    // an attribute captured inside a group root (one value per member; `attr_kind` is its kind)
};

// A use of a variable bound on the left. In a guard, a name that is not bound and spells a dtype (`float32`)
// is a dtype literal.
struct VarExpr {
  std::string name;
};

// `x.dtype`, `x.rank`, `x.shape`, `x.uses`, `c.value`.
struct MemberExpr {
  ExprPtr object;
  std::string member;
  SourceLoc member_loc;
};

// `x.shape[1]`, `x.shape[-1]`.
struct IndexExpr {
  ExprPtr object;
  ExprPtr index;
};

enum class UnaryOp : uint8_t { Negate, Not };
struct UnaryExpr {
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp : uint8_t {
  Add,
  Subtract,
  Multiply,
  Divide,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  And,
  Or
};
struct BinaryExpr {
  BinaryOp op;
  SourceLoc op_loc;
  ExprPtr lhs;
  ExprPtr rhs;
};

// A keyword attribute of a right-hand-side call: `axis=-1` or `kernel_size=k` (a captured attribute).
struct ExprAttr {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
  AttrKind kind = AttrKind::Int;  // sema: the attribute's kind (in a call of an op variable, every op's)
};

// `**c` among a right-hand-side call's arguments: the matched call whose attributes the new call copies.
struct AttrSource {
  std::string name;
  SourceLoc loc;  // the name
};

struct ExternDecl;

// `multiply(x, c)` or `op(x, c)` where `op` is an op variable bound on the left; also a call of an extern
// predicate (in a guard) or rewriter (as the whole right-hand side).
struct CallExpr {
  OpName op;
  bool op_is_var = false;            // sema: `op.text` names an op variable
  const ExternDecl* native = nullptr;  // sema: `op.text` names an extern predicate or rewriter
  std::vector<ExprPtr> operands;
  std::vector<ExprAttr> attrs;
  // `nn.conv2d(x, w2, **c)`: the attributes not written in `attrs` are copied from the call bound to `c` on the
  // left (sema: a call of this same op).
  std::optional<AttrSource> attrs_from;
};

// `const(2.0)`: a new scalar; without an explicit dtype it takes a sibling operand's dtype (see language.md).
// `const(eps)`, `const(1.0 / c.value)`: a value computed like a guard when the rule fires (`computed`; `value`
// is then unused).
struct ConstExpr {
  double value = 0;
  std::optional<DType> dtype;
  ExprPtr computed;
};

// `t[0]` on the right: a new tuple item.
struct ItemExpr {
  ExprPtr tuple;
  int64_t index = 0;
};

// `(a, b)` on the right: a new tuple.
struct TupleExpr {
  std::vector<ExprPtr> fields;
};

// `xs...` as an operand of a call or a field of a tuple on the right: the values of the list `xs`, in order.
struct SpreadExpr {
  std::string name;
  SourceLoc name_loc;
};

// A literal attribute value: `-1`, `1e-05`, `"NHWC"`, `True`, `None`, `[0, 2, 1, 3]`.
struct LiteralExpr {
  AttrValue value;
};

struct Expr {
  SourceLoc loc;
  std::variant<VarExpr, CallExpr, ConstExpr, LiteralExpr, MemberExpr, IndexExpr, UnaryExpr, BinaryExpr, ItemExpr,
               TupleExpr, SpreadExpr>
      node;
  // Filled in by sema.
  ExprType type = ExprType::Unknown;
  std::optional<DType> dtype_literal;  // a VarExpr that names a dtype
  std::optional<OpId> op_literal;      // a string literal naming an op, compared with an op variable
  AttrKind attr_kind = AttrKind::Int;  // a VarExpr naming a captured attribute: the attribute's kind
  // A BinaryExpr `==`/`!=` whose sides are dimension arithmetic — dimension variables, `x.shape[i]` of one value,
  // integer literals and `+ - *` — at least one side reading a dimension: decided for every value of the symbols
  // (dpl::dims_equal), by the generated guard and the rule interpreter alike (language.md, Guards).
  bool compares_dimensions = false;
};

std::string_view binary_op_spelling(BinaryOp op);

// The error for a call in a guard that is not of an extern predicate (the parser and sema both report it).
inline constexpr const char* kGuardCallsNoOps =
    "a guard reads properties of matched values (x.rank, c.value); it cannot call ops";

// --- declarations ----------------------------------------------------------------------------------------------

// `let y = matmul(x, w);` on the right: a value built once and named for the rest of the right-hand side.
struct LetBinding {
  std::string name;
  SourceLoc name_loc;
  ExprPtr value;
};

// `priority N` and `once` after a rule's name.
struct RuleOptions {
  int priority = 0;  // higher is tried first; equal priorities: more specific first, then declaration order
  SourceLoc priority_loc;  // line 0 when not written
  bool once = false;       // never fires on a node created during this run of the pass
};

// One root of a multi-root rule: `q: matmul(x, wq);` or `group ms: matmul(x, w: const) where w.rank == 2;`.
// Variables first bound inside a group root are lists (one entry per member) everywhere else in the rule.
struct RootDecl {
  std::string name;
  SourceLoc name_loc;
  bool group = false;
  PatternPtr pattern;
  ExprPtr guard;  // may be null; for a group, checked per member while collecting
};

// `q => p[0];` in a multi-root rule: what replaces the root named `root`. For a group root the value is a tuple
// (or a list-valued expression) whose i-th field replaces the i-th member.
struct RootRewrite {
  std::string root;
  SourceLoc loc;
  ExprPtr value;
};

// An alternative of a rule's left-hand side that no graph can match (never_match.h): left out of the decision
// tree, the rule interpreter and dplc --verify, and shown by `dplc --emit=plan`.
struct DroppedAlternative {
  size_t index = 0;    // in expand_alternatives(*rule.lhs) order
  std::string reason;  // "operand 1 of broadcast_to must be a shape, ..."
};

struct Rule {
  enum class Kind : uint8_t {
    Rewrite,    // `rule NAME: lhs => rhs;`
    MultiRoot,  // `rule NAME { roots => lets rewrites }`
    Partition,  // `partition "composite.name": lhs;` (`name` holds the composite name)
  };
  Kind kind = Kind::Rewrite;
  std::string name;
  SourceLoc name_loc;
  RuleOptions options;
  PatternPtr lhs;  // Rewrite and Partition
  ExprPtr guard;   // `where ...`; may be null
  std::vector<LetBinding> lets;  // in order, before `rhs` / `rewrites`
  ExprPtr rhs;     // Rewrite only
  std::vector<RootDecl> roots;        // MultiRoot only, in matching order
  std::vector<RootRewrite> rewrites;  // MultiRoot only
  std::vector<DroppedAlternative> dropped;  // sema: Rewrite and Partition only, by index

  const DroppedAlternative* find_dropped(size_t alternative) const {
    auto it = std::find_if(dropped.begin(), dropped.end(),
                           [&](const DroppedAlternative& d) { return d.index == alternative; });
    return it == dropped.end() ? nullptr : &*it;
  }
  bool is_dropped(size_t alternative) const { return find_dropped(alternative) != nullptr; }
};

// How a later root of a multi-root rule is found from the values bound before it: `path` holds the operand
// (tuple field) positions from the root's call pattern down to an operand naming such a value (`variable`),
// outermost first. The matcher scans the users of that value for calls of the innermost op on the path (tuples,
// for a tuple pattern there), their users for the next op up, and so on to the root. The shortest path wins,
// then the leftmost.
struct RootHook {
  std::vector<size_t> path;
  std::string variable;
};
std::optional<RootHook> find_root_hook(const Pattern& root, const std::function<bool(const std::string&)>& bound);
// The call or tuple pattern reached from `root` by following the operand (field) positions `path`, binds looked
// through (a prefix of a hook's path, without its last position).
const Pattern& pattern_at(const Pattern& root, std::span<const size_t> path);

// The right-hand side as written: `let y = matmul(x, w); add(y, y)`.
std::string rhs_to_string(const Rule& rule);

// `extern predicate is_aligned(x: Tensor) from "checks.h";`: a C++ function `bool is_aligned(const dpl::Node*)`
// usable in guards; `extern rewriter NAME(...)`: `dpl::Node* NAME(dpl::Rewriter&, dpl::Node*...)`, usable as a
// whole right-hand side, returning nullptr to decline.
struct ExternDecl {
  enum class Kind : uint8_t { Predicate, Rewriter };
  Kind kind = Kind::Predicate;
  std::string name;
  SourceLoc name_loc;
  std::vector<std::string> params;
  std::string header;  // as written, included by the generated code
};

// `op my.scale(x, factor: float = 1.0) : elementwise -> same_as(x);`: a custom op. Sema registers it in the
// file's op registry (AstFile::op_registry); the generated code registers it in the process's registry before
// main, so that the TVMScript reader accepts it wherever the pass library is linked.
struct OpDecl {
  struct Attr {
    std::string name;
    SourceLoc loc;
    std::string kind;  // as written: int, float, bool, string, dtype, int_list, int_or_int_list
    SourceLoc kind_loc;
    bool optional = false;  // `int?`: may be None (the default when none is written)
    std::optional<AttrValue> default_value;
    SourceLoc default_loc;
  };
  std::string name;  // `my.scale`
  SourceLoc name_loc;
  std::vector<std::string> operands;
  std::vector<SourceLoc> operand_locs;
  bool variadic = false;  // the last operand was written `xs...`: any number of operands from there on
  std::vector<Attr> attrs;
  std::vector<std::string> traits;
  std::vector<SourceLoc> trait_locs;
  ExprPtr result;  // `same_as(x)`; null: the result type is unknown
  // Filled in by sema.
  OpId id = 0;
  int same_as = -1;  // the operand whose type the result has; -1: unknown
};

// `pipeline all = simplify, fuse_attention;`: registered like a pass; running it runs the passes in order.
struct PipelineDecl {
  std::string name;
  SourceLoc name_loc;
  std::string description;
  std::vector<std::string> passes;
  std::vector<SourceLoc> pass_locs;
};

struct Pass {
  std::string name;
  SourceLoc name_loc;
  std::string description;
  bool implicit = false;  // the rules written outside any `pass` block, named after the file stem
  std::vector<Rule> rules;
};

// `pattern to_bsh(t) = reshape(permute_dims(t, axes=[0, 2, 1, 3]), _);`: a named, parameterised pattern. A use
// `to_bsh(q)` stands for the body with each parameter replaced by the argument pattern.
struct PatternMacro {
  std::string name;
  SourceLoc name_loc;
  std::vector<std::string> params;
  std::vector<SourceLoc> param_locs;
  PatternPtr body;
};

// `test NAME { [pass P; | pipeline P;] input "a.relax"; expect "b.relax" | unchanged; [seed N;] [tolerance X;]
// [numbers differ;] [dims b = 2, s = 16;] }`: runs a pass or pipeline on the input and checks the result (docs/verification.md).
struct RuleTest {
  std::string name;
  SourceLoc name_loc;
  std::string target;      // the pass (or pipeline) it runs; for a test inside a pass block, that pass
  SourceLoc target_loc;    // the name after `pass`/`pipeline`, or the test's name inside a pass block
  bool target_is_pipeline = false;
  std::string input;       // as written, relative to the .dpl file's directory
  SourceLoc input_loc;
  std::string expect;      // empty with `expect unchanged;`
  SourceLoc expect_loc;
  bool expect_unchanged = false;
  uint64_t seed = 1;
  std::optional<double> tolerance;  // absolute and relative; absent: by dtype
  bool numbers_differ = false;      // the rewrite is meant to change what the graph computes
  std::map<std::string, int64_t, std::less<>> dims;  // values of the input's symbolic dimensions
  // Filled in by sema: `input` and `expect` made absolute.
  std::string input_path;
  std::string expect_path;
};

// `import "common.dpl";`: makes the pattern declarations of another file usable here.
struct Import {
  std::string path;  // as written, relative to the importing file's directory
  SourceLoc loc;
};

struct AstFile {
  const SourceFile* source = nullptr;
  std::string basename;  // "arith.dpl": what generated code and diagnostics-free output mention
  std::string stem;      // "arith"
  std::vector<Pass> passes;
  std::vector<PatternMacro> macros;
  std::vector<Import> imports;
  std::vector<ExternDecl> externs;
  std::vector<PipelineDecl> pipelines;
  std::vector<OpDecl> ops;
  std::vector<RuleTest> tests;
  // The IR files the tests name, read by sema (diagnostics may quote them).
  std::vector<std::unique_ptr<SourceFile>> test_files;
  // The registry the file is checked and compiled against: the built-in ops and the file's `op` declarations
  // (sema makes it when the file declares ops; null: the registry given to check()).
  std::shared_ptr<const OpRegistry> op_registry;
};

// The file's base name and its stem turned into an identifier (`my-rules.dpl` -> `my_rules`).
std::string path_basename(const std::string& path);
std::string identifier_stem(const std::string& path);

// The shortest spelling that reads back as the same double, always with a `.` or an exponent: `2.0`, `1e-05`.
std::string format_double(double value);

// Deep copy (alternatives are expanded by copying).
PatternPtr clone(const Pattern& pattern);
// Same structure, ops, names and literals (locations ignored).
bool same_pattern(const Pattern& a, const Pattern& b);

// Whether two lists of pointers have the same length and `same` holds for each pair of what they point to.
template <typename Ptr, typename Same>
bool same_each(const std::vector<Ptr>& a, const std::vector<Ptr>& b, Same&& same) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [&](const Ptr& x, const Ptr& y) { return same(*x, *y); });
}

// The call a pattern is, through bindings (`r: reshape(x, _)`); nullptr when it is not a call.
CallPattern* call_through_bindings(Pattern& pattern);

// The type a pattern itself checks: a type pattern's, or a call pattern's result type; nullptr when none.
const TypePattern* type_of_pattern(const Pattern& pattern);

// Calls `visit` on the `check` of each dimension expression in `pattern` and the patterns inside it, in the order
// they are written.
void for_each_dimension_check(const Pattern& pattern, const std::function<void(const Expr&)>& visit);

// Dimension arithmetic as a type pattern writes it (names, integers, `+ - *`) in int64 with the names' values;
// nullopt when a name has none or the arithmetic overflows.
std::optional<int64_t> evaluate_dimension(const Expr& written,
                                          const std::function<std::optional<int64_t>(const std::string&)>& value_of);

// Calls `visit` with the name and location of each variable `expr` reads (VarExpr), in the order written.
void for_each_name(const Expr& expr, const std::function<void(const std::string&, SourceLoc)>& visit);

// Calls `visit` on each pattern directly inside `pattern`, in the order they are written: a binding's inner
// pattern, a call's operands, the alternatives, a tuple item's tuple, a tuple's fields, a dominator's parent and
// child.
template <typename Visit>
void for_each_sub_pattern(const Pattern& pattern, Visit&& visit) {
  std::visit(Overloaded{
                 [&](const BindPattern& p) { visit(*p.inner); },
                 [&](const CallPattern& p) {
                   for (const PatternPtr& operand : p.operands) visit(*operand);
                 },
                 [&](const AltPattern& p) {
                   for (const PatternPtr& alternative : p.alternatives) visit(*alternative);
                 },
                 [&](const ItemPattern& p) { visit(*p.tuple); },
                 [&](const TuplePattern& p) {
                   for (const PatternPtr& field : p.fields) visit(*field);
                 },
                 [&](const DominatorPattern& p) {
                   visit(*p.parent);
                   visit(*p.child);
                 },
                 [](const auto&) {},
             },
             pattern.node);
}

// Calls `visit` on each expression directly inside `expr`, in the order they are written (a call's operands
// before its attribute values).
template <typename Visit>
void for_each_sub_expr(const Expr& expr, Visit&& visit) {
  std::visit(Overloaded{
                 [&](const CallExpr& e) {
                   for (const ExprPtr& operand : e.operands) visit(*operand);
                   for (const ExprAttr& attr : e.attrs) visit(*attr.value);
                 },
                 [&](const MemberExpr& e) { visit(*e.object); },
                 [&](const IndexExpr& e) {
                   visit(*e.object);
                   visit(*e.index);
                 },
                 [&](const UnaryExpr& e) { visit(*e.operand); },
                 [&](const BinaryExpr& e) {
                   visit(*e.lhs);
                   visit(*e.rhs);
                 },
                 [&](const ItemExpr& e) { visit(*e.tuple); },
                 [&](const TupleExpr& e) {
                   for (const ExprPtr& field : e.fields) visit(*field);
                 },
                 [&](const ConstExpr& e) {
                   if (e.computed != nullptr) visit(*e.computed);
                 },
                 [](const auto&) {},
             },
             expr.node);
}

// Calls `visit` on each top-level expression of a rule: its roots' guards, its guard, its lets, its right-hand side
// and its roots' rewrites (sub-expressions are for_each_sub_expr's).
template <typename Visit>
void for_each_rule_expr(const Rule& rule, Visit&& visit) {
  for (const RootDecl& root : rule.roots) {
    if (root.guard != nullptr) visit(*root.guard);
  }
  if (rule.guard != nullptr) visit(*rule.guard);
  for (const LetBinding& let : rule.lets) visit(*let.value);
  if (rule.rhs != nullptr) visit(*rule.rhs);
  for (const RootRewrite& rewrite : rule.rewrites) visit(*rewrite.value);
}

// How many alternative-free patterns `pattern` stands for: the product over `|`, op alternatives and `?`
// (saturating at `limit + 1`).
size_t count_alternatives(const Pattern& pattern, size_t limit);
// The alternative-free patterns `pattern` stands for, in priority order (left alternative first; for `op?(p)`
// the op first). In each, every call has one op, no call is optional, and there is no `|`.
std::vector<PatternPtr> expand_alternatives(const Pattern& pattern);

// One alternative of a multi-root rule (docs/semantics.md): per root, in order, the alternative-free patterns it
// is matched with — one for a single root (the combinations of the single roots' alternatives make the rule's
// alternatives, the first root's varying slowest), every alternative of a group root (members are collected
// alternative by alternative).
struct RootsAlternative {
  std::vector<std::vector<PatternPtr>> roots;
};
std::vector<RootsAlternative> expand_root_alternatives(const Rule& rule);
// How many alternatives expand_root_alternatives() gives, times each group's alternatives (saturating at
// `limit + 1`): what bounds the generated code.
size_t count_root_alternatives(const Rule& rule, size_t limit);
// The names `pattern` captures attributes into (`axis=a`), in any alternative.
std::set<std::string> attribute_captures(const Pattern& pattern);
// The op variables `pattern` binds (`(op: add | multiply)(x, y)`), in any alternative.
std::set<std::string> op_captures(const Pattern& pattern);
// Whether `expr` calls an extern rewriter or predicate anywhere (sema resolved CallExpr::native).
bool calls_extern(const Expr& expr);

// Source-like rendering: `add(a: add(x, x), a)`, `multiply(x, const(4.0))`.
std::string to_string(const Pattern& pattern);
std::string to_string(const Expr& expr);
// An indented tree of the whole file, for `dplc --emit=ast`.
std::string dump_ast(const AstFile& file);

}  // namespace dpl::compiler
