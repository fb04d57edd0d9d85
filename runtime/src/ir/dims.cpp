// Dimensions: interned symbols and canonical extent expressions, their arithmetic, TVM spelling and parsing.
#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "dpl/ir/types.h"

namespace dpl {

namespace {

// A product of atoms (symbols, floor-division and modulo entries, as raw Dim values sorted by atom order) times
// a coefficient; no atoms: a constant.
struct Term {
  std::vector<int64_t> atoms;
  int64_t coef = 0;
  bool operator==(const Term&) const = default;
};
// Canonical: terms in print order, distinct atom lists, no zero coefficient. Constants may be negative here.
using Poly = std::vector<Term>;

// Bounds that keep products of sums from growing without limit; larger results are "not a Dim".
constexpr size_t kMaxTerms = 32;
constexpr size_t kMaxDegree = 8;

enum class EntryKind : uint8_t { Symbol, Sum, FloorDiv, FloorMod };

// How tightly a spelling binds, as Python parses it.
enum Precedence : int { kAdditive = 1, kMultiplicative = 2, kAtomic = 3 };

struct Entry {
  EntryKind kind = EntryKind::Symbol;
  std::string spelling;
  int precedence = kAtomic;
  Poly poly;        // Sum
  int64_t lhs = 0;  // FloorDiv, FloorMod: raw Dims
  int64_t rhs = 0;
};

}  // namespace

// Interned symbols and expressions by kind and spelling (a canonical spelling names one expression). Entries
// never change once made; the deque keeps their addresses.
class DimTable {
 public:
  DimTable() { intern(EntryKind::Symbol, "-1", {}); }  // id 0: reshape's inferred extent

  static Dim dim(int64_t raw) { return Dim(raw); }

  const Entry& entry(Dim dim) {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_[static_cast<size_t>(-dim.raw() - 1)];
  }

  Dim intern(EntryKind kind, std::string spelling, Entry&& made) {
    std::string key(1, static_cast<char>('0' + static_cast<int>(kind)));
    key += spelling;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ids_.find(key);
    if (it != ids_.end()) return Dim(-(it->second + 1));
    const auto id = static_cast<int64_t>(entries_.size());
    Entry& entry = entries_.emplace_back(std::move(made));
    entry.kind = kind;
    entry.spelling = std::move(spelling);
    ids_.emplace(std::move(key), id);
    return Dim(-(id + 1));
  }

 private:
  std::mutex mutex_;
  std::deque<Entry> entries_;
  std::unordered_map<std::string, int64_t> ids_;
};

namespace {

DimTable& table() {
  static DimTable instance;
  return instance;
}

const Entry& entry_of(int64_t raw) { return table().entry(DimTable::dim(raw)); }

// Atoms sort symbols first, then divisions; each group by spelling, so the order never depends on which
// expression was interned first.
bool atom_less(int64_t a, int64_t b) {
  if (a == b) return false;
  const Entry& x = entry_of(a);
  const Entry& y = entry_of(b);
  const bool x_symbol = x.kind == EntryKind::Symbol;
  const bool y_symbol = y.kind == EntryKind::Symbol;
  if (x_symbol != y_symbol) return x_symbol;
  return x.spelling < y.spelling;
}

bool atoms_less(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), atom_less);
}

// Print order: higher degree first, then by atoms; the constant last.
bool term_less(const Term& a, const Term& b) {
  if (a.atoms.size() != b.atoms.size()) return a.atoms.size() > b.atoms.size();
  return atoms_less(a.atoms, b.atoms);
}

std::optional<Poly> normalize(Poly terms) {
  for (Term& term : terms) std::sort(term.atoms.begin(), term.atoms.end(), atom_less);
  std::sort(terms.begin(), terms.end(), term_less);
  Poly out;
  for (Term& term : terms) {
    if (!out.empty() && out.back().atoms == term.atoms) {
      if (__builtin_add_overflow(out.back().coef, term.coef, &out.back().coef)) return std::nullopt;
    } else {
      out.push_back(std::move(term));
    }
    if (out.back().coef == 0) out.pop_back();
  }
  if (out.size() > kMaxTerms) return std::nullopt;
  return out;
}

std::optional<Poly> to_poly(Dim dim) {
  if (dim.is_static()) return dim.extent() == 0 ? Poly{} : Poly{Term{{}, dim.extent()}};
  if (dim.is_inferred()) return std::nullopt;
  const Entry& entry = entry_of(dim.raw());
  if (entry.kind == EntryKind::Sum) return entry.poly;
  return Poly{Term{{dim.raw()}, 1}};
}

std::optional<int64_t> constant_of(const Poly& poly) {
  if (poly.empty()) return 0;
  if (poly.size() == 1 && poly[0].atoms.empty()) return poly[0].coef;
  return std::nullopt;
}

// A dim as an operand: in parentheses when it binds less tightly than `tightest`.
std::string operand_spelling(Dim dim, int tightest) {
  if (dim.is_static()) return std::to_string(dim.extent());
  const Entry& entry = entry_of(dim.raw());
  return entry.precedence < tightest ? "(" + entry.spelling + ")" : entry.spelling;
}

// `n * m * 2` for a term (the sign printed by the caller). After a unary minus the first factor is an operand
// too: Python reads `-n // 2` as `(-n) // 2`, so `-(n // 2)` keeps its parentheses.
std::string spell_term(const Term& term, bool after_unary_minus) {
  const int64_t magnitude = term.coef < 0 ? -term.coef : term.coef;
  std::string out;
  for (size_t i = 0; i < term.atoms.size(); ++i) {
    if (i > 0) out += " * ";
    out += operand_spelling(DimTable::dim(term.atoms[i]), i > 0 || after_unary_minus ? kAtomic : kMultiplicative);
  }
  if (term.atoms.empty()) return std::to_string(magnitude);
  if (magnitude != 1) out += " * " + std::to_string(magnitude);
  return out;
}

// The order a sum prints its terms in: canonical, except that a leading negative term yields its place to the
// first positive one (`8 - n`, not `-n + 8`).
std::vector<size_t> print_order(const Poly& poly) {
  std::vector<size_t> order;
  for (size_t i = 0; i < poly.size(); ++i) order.push_back(i);
  const auto positive = std::find_if(order.begin(), order.end(), [&](size_t i) { return poly[i].coef > 0; });
  if (positive != order.end()) std::rotate(order.begin(), positive, positive + 1);
  return order;
}

// TVM's spelling of a sum.
std::string spell_poly(const Poly& poly) {
  const std::vector<size_t> order = print_order(poly);
  std::string out;
  for (size_t k = 0; k < order.size(); ++k) {
    const Term& term = poly[order[k]];
    if (k == 0) {
      if (term.coef < 0) out += '-';
    } else {
      out += term.coef < 0 ? " - " : " + ";
    }
    out += spell_term(term, k == 0 && term.coef < 0);
  }
  return out;
}

// The Dim a canonical polynomial names: a static extent, an atom, or an interned sum.
std::optional<Dim> from_poly(Poly poly) {
  if (const std::optional<int64_t> constant = constant_of(poly)) {
    if (*constant < 0) return std::nullopt;
    return Dim::fixed(*constant);
  }
  if (poly.size() == 1 && poly[0].coef == 1 && poly[0].atoms.size() == 1) return DimTable::dim(poly[0].atoms[0]);
  Entry made;
  made.precedence = poly.size() > 1 || poly[0].coef < 0 ? kAdditive : kMultiplicative;
  std::string spelling = spell_poly(poly);
  made.poly = std::move(poly);
  return table().intern(EntryKind::Sum, std::move(spelling), std::move(made));
}

std::optional<Poly> add(const Poly& a, const Poly& b, int64_t b_sign) {
  Poly terms = a;
  for (Term term : b) {
    if (__builtin_mul_overflow(term.coef, b_sign, &term.coef)) return std::nullopt;
    terms.push_back(std::move(term));
  }
  return normalize(std::move(terms));
}

std::optional<Poly> multiply(const Poly& a, const Poly& b) {
  if (a.size() * b.size() > kMaxTerms * 4) return std::nullopt;
  Poly terms;
  for (const Term& x : a) {
    for (const Term& y : b) {
      Term product;
      if (__builtin_mul_overflow(x.coef, y.coef, &product.coef)) return std::nullopt;
      product.atoms = x.atoms;
      product.atoms.insert(product.atoms.end(), y.atoms.begin(), y.atoms.end());
      if (product.atoms.size() > kMaxDegree) return std::nullopt;
      terms.push_back(std::move(product));
    }
  }
  return normalize(std::move(terms));
}

// `term / divisor` when the divisor's atoms are among the term's and its coefficient divides the term's.
std::optional<Term> divide_term(const Term& term, const Term& divisor) {
  if (divisor.coef == 0 || term.coef % divisor.coef != 0) return std::nullopt;
  Term quotient{{}, term.coef / divisor.coef};
  std::vector<int64_t> rest = divisor.atoms;
  for (int64_t atom : term.atoms) {
    const auto found = std::find(rest.begin(), rest.end(), atom);
    if (found != rest.end()) {
      rest.erase(found);
    } else {
      quotient.atoms.push_back(atom);
    }
  }
  if (!rest.empty()) return std::nullopt;
  return quotient;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// Splits `a` into the terms a one-term divisor divides exactly (returned divided) and the rest.
Poly split_divisible(const Poly& a, const Term& divisor, Poly& rest) {
  Poly quotient;
  for (const Term& term : a) {
    if (std::optional<Term> part = divide_term(term, divisor)) {
      quotient.push_back(std::move(*part));
    } else {
      rest.push_back(term);
    }
  }
  return quotient;
}

std::optional<Poly> atom_poly(EntryKind kind, const Poly& lhs, const Poly& rhs) {
  const std::optional<Dim> left = from_poly(lhs);
  const std::optional<Dim> right = from_poly(rhs);
  if (!left || !right) return std::nullopt;
  Entry made;
  made.precedence = kMultiplicative;
  made.lhs = left->raw();
  made.rhs = right->raw();
  // Python's `//` and `%` group to the left: a product on the left needs no parentheses, one on the right does.
  std::string spelling = operand_spelling(*left, kMultiplicative);
  spelling += kind == EntryKind::FloorDiv ? " // " : " % ";
  spelling += operand_spelling(*right, kAtomic);
  const Dim atom = table().intern(kind, std::move(spelling), std::move(made));
  return Poly{Term{{atom.raw()}, 1}};
}

// Floor division or modulo. Exactly divisible terms leave the atom: (b * q + r) // b == q + r // b and
// (b * q + r) % b == r % b for integers q, r and b != 0.
std::optional<Poly> divide(EntryKind kind, const Poly& a, const Poly& b) {
  const std::optional<int64_t> divisor_constant = constant_of(b);
  if (divisor_constant && *divisor_constant <= 0) return std::nullopt;
  if (b.size() != 1) {  // a sum as divisor: only a // a and a % a fold
    if (a == b) return kind == EntryKind::FloorDiv ? Poly{Term{{}, 1}} : Poly{};
    return atom_poly(kind, a, b);
  }
  const bool plus_constant = a.size() == 2 && a[1].atoms.empty();
  if (kind == EntryKind::FloorDiv && divisor_constant && (a.size() == 1 || plus_constant) && a[0].coef == 1 &&
      a[0].atoms.size() == 1) {
    // (x // c + k) // d == (x + c * k) // (c * d) for positive c and d (x // c + k is (x + c * k) // c): a
    // stride-2 layer after a stride-2 layer is (x + ...) // 4.
    const Entry& inner = entry_of(a[0].atoms[0]);
    const int64_t k = plus_constant ? a[1].coef : 0;
    int64_t product = 0, shift = 0;
    if (inner.kind == EntryKind::FloorDiv && inner.rhs >= 0 &&
        !__builtin_mul_overflow(inner.rhs, *divisor_constant, &product) &&
        !__builtin_mul_overflow(inner.rhs, k, &shift)) {
      const std::optional<Poly> x = to_poly(DimTable::dim(inner.lhs));
      const std::optional<Poly> numerator = x ? add(*x, {Term{{}, shift}}, 1) : std::nullopt;
      if (numerator) return divide(kind, *numerator, {Term{{}, product}});
    }
  }
  Poly rest;
  const Poly quotient = split_divisible(a, b[0], rest);
  if (rest.empty()) return kind == EntryKind::FloorDiv ? normalize(quotient) : Poly{};
  if (const std::optional<int64_t> remainder = constant_of(rest); remainder && divisor_constant) {
    const int64_t whole = floor_div(*remainder, *divisor_constant);
    if (kind == EntryKind::FloorMod) return normalize({Term{{}, *remainder - whole * *divisor_constant}});
    return add(quotient, {Term{{}, whole}}, 1);
  }
  std::optional<Poly> atom = atom_poly(kind, rest, b);
  if (!atom || kind == EntryKind::FloorMod) return atom;
  return add(quotient, *atom, 1);
}

std::optional<Poly> exact_divide(const Poly& a, const Poly& b) {
  if (b.empty()) return std::nullopt;
  if (a.empty()) return Poly{};
  if (b.size() == 1) {
    Poly rest;
    Poly quotient = split_divisible(a, b[0], rest);
    if (!rest.empty()) return std::nullopt;
    return normalize(std::move(quotient));
  }
  // A sum divides when the quotient of the leading terms times it gives back `a`.
  std::optional<Term> lead = divide_term(a[0], b[0]);
  if (!lead) return std::nullopt;
  std::optional<Poly> back = multiply(b, {*lead});
  if (!back || *back != a) return std::nullopt;
  return Poly{*lead};
}

using PolyOp = std::optional<Poly> (*)(const Poly&, const Poly&);

std::optional<Dim> apply(Dim a, Dim b, PolyOp op) {
  const std::optional<Poly> x = to_poly(a);
  const std::optional<Poly> y = to_poly(b);
  if (!x || !y) return std::nullopt;
  std::optional<Poly> result = op(*x, *y);
  if (!result) return std::nullopt;
  return from_poly(std::move(*result));
}

std::optional<Poly> poly_add(const Poly& a, const Poly& b) { return add(a, b, 1); }
std::optional<Poly> poly_sub(const Poly& a, const Poly& b) { return add(a, b, -1); }
std::optional<Poly> poly_floor_div(const Poly& a, const Poly& b) { return divide(EntryKind::FloorDiv, a, b); }
std::optional<Poly> poly_floor_mod(const Poly& a, const Poly& b) { return divide(EntryKind::FloorMod, a, b); }

}  // namespace

Dim Dim::symbol(std::string_view name) { return table().intern(EntryKind::Symbol, std::string(name), Entry{}); }

std::string_view Dim::symbol_name() const {
  if (is_static()) return "?";
  return table().entry(*this).spelling;
}

bool Dim::is_symbol() const { return !is_static() && !is_inferred() && table().entry(*this).kind == EntryKind::Symbol; }

bool Dim::is_expression() const { return !is_static() && table().entry(*this).kind != EntryKind::Symbol; }

std::string Dim::str() const { return is_static() ? std::to_string(value_) : std::string(symbol_name()); }

std::vector<Dim> Dim::symbols() const {
  std::vector<Dim> found;
  std::vector<Dim> pending = {*this};
  // Depth first, left to right: the order the spelling names them.
  while (!pending.empty()) {
    const Dim dim = pending.back();
    pending.pop_back();
    if (dim.is_static() || dim.is_inferred()) continue;
    const Entry& entry = table().entry(dim);
    switch (entry.kind) {
      case EntryKind::Symbol:
        if (std::find(found.begin(), found.end(), dim) == found.end()) found.push_back(dim);
        break;
      case EntryKind::Sum: {
        std::vector<Dim> atoms;
        for (size_t i : print_order(entry.poly))
          for (int64_t atom : entry.poly[i].atoms) atoms.push_back(Dim(atom));
        pending.insert(pending.end(), atoms.rbegin(), atoms.rend());
        break;
      }
      case EntryKind::FloorDiv:
      case EntryKind::FloorMod:
        pending.push_back(Dim(entry.rhs));
        pending.push_back(Dim(entry.lhs));
        break;
    }
  }
  return found;
}

std::optional<int64_t> Dim::evaluate(const std::function<std::optional<int64_t>(Dim symbol)>& value_of) const {
  if (is_static()) return value_;
  if (is_inferred()) return std::nullopt;
  const Entry& entry = table().entry(*this);
  switch (entry.kind) {
    case EntryKind::Symbol: return value_of(*this);
    case EntryKind::Sum: {
      int64_t sum = 0;
      for (const Term& term : entry.poly) {
        int64_t product = term.coef;
        for (int64_t atom : term.atoms) {
          const std::optional<int64_t> value = Dim(atom).evaluate(value_of);
          if (!value || __builtin_mul_overflow(product, *value, &product)) return std::nullopt;
        }
        if (__builtin_add_overflow(sum, product, &sum)) return std::nullopt;
      }
      return sum;
    }
    case EntryKind::FloorDiv:
    case EntryKind::FloorMod: {
      const std::optional<int64_t> lhs = Dim(entry.lhs).evaluate(value_of);
      const std::optional<int64_t> rhs = Dim(entry.rhs).evaluate(value_of);
      if (!lhs || !rhs || *rhs == 0) return std::nullopt;
      const int64_t quotient = floor_div(*lhs, *rhs);
      return entry.kind == EntryKind::FloorDiv ? quotient : *lhs - quotient * *rhs;
    }
  }
  return std::nullopt;
}

namespace {

// Two static extents (the usual case: a model's weights) combine without polynomials, which allocate; a result that
// overflows or is negative takes the polynomial path, which declines it.
template <typename Combine>
std::optional<Dim> apply_static_first(Dim a, Dim b, Combine overflows, PolyOp op) {
  int64_t result = 0;
  if (a.is_static() && b.is_static() && !overflows(a.extent(), b.extent(), &result) && result >= 0) {
    return Dim::fixed(result);
  }
  return apply(a, b, op);
}

}  // namespace

std::optional<Dim> dim_add(Dim a, Dim b) {
  return apply_static_first(a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); },
                            poly_add);
}
std::optional<Dim> dim_sub(Dim a, Dim b) {
  return apply_static_first(a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); },
                            poly_sub);
}
std::optional<Dim> dim_mul(Dim a, Dim b) {
  return apply_static_first(a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); },
                            multiply);
}
std::optional<Dim> dim_floor_div(Dim a, Dim b) { return apply(a, b, poly_floor_div); }
std::optional<Dim> dim_floor_mod(Dim a, Dim b) { return apply(a, b, poly_floor_mod); }
std::optional<Dim> dim_exact_div(Dim a, Dim b) { return apply(a, b, exact_divide); }

DimValue::DimValue(Dim dim) {
  if (dim.is_static()) {
    value_ = dim.extent();
  } else if (!dim.is_inferred()) {
    value_ = dim;
  }
}

DimValue::DimValue(int64_t n) : value_(n) {}

std::optional<Dim> DimValue::as_dim() const {
  if (const Dim* dim = std::get_if<Dim>(&value_)) return *dim;
  if (const int64_t* n = std::get_if<int64_t>(&value_); n != nullptr && *n >= 0) return Dim::fixed(*n);
  return std::nullopt;
}

// Integers stay integers (overflow gives nothing); otherwise both must be dimensions, combined by `dim_op`.
DimValue DimValue::apply(const DimValue& a, const DimValue& b, IntegerOp integer_op, DimOp dim_op) {
  const int64_t* x = std::get_if<int64_t>(&a.value_);
  const int64_t* y = std::get_if<int64_t>(&b.value_);
  if (x != nullptr && y != nullptr) {
    int64_t result = 0;
    return integer_op(*x, *y, &result) ? none() : DimValue(result);
  }
  const std::optional<Dim> p = a.as_dim();
  const std::optional<Dim> q = b.as_dim();
  if (!p || !q) return none();
  const std::optional<Dim> result = dim_op(*p, *q);
  return result ? DimValue(*result) : none();
}

DimValue operator+(const DimValue& a, const DimValue& b) {
  return DimValue::apply(
      a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); }, dim_add);
}

DimValue operator-(const DimValue& a, const DimValue& b) {
  return DimValue::apply(
      a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); }, dim_sub);
}

DimValue operator*(const DimValue& a, const DimValue& b) {
  return DimValue::apply(
      a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); }, dim_mul);
}

std::optional<bool> dims_equal(const DimValue& a, const DimValue& b) {
  const int64_t* m = std::get_if<int64_t>(&a.value_);
  const int64_t* n = std::get_if<int64_t>(&b.value_);
  if (m != nullptr && n != nullptr) return *m == *n;
  const std::optional<Dim> x = a.as_dim();
  const std::optional<Dim> y = b.as_dim();
  if (!x || !y) return std::nullopt;  // nothing, or a negative integer against a symbol
  if (*x == *y) return true;  // interned: one polynomial, one Dim
  // Differing by a constant: n + 1 and n. The difference is a Dim only when it is not negative: try both ways.
  for (const std::optional<Dim>& difference : {dim_sub(*x, *y), dim_sub(*y, *x)}) {
    if (difference && difference->is_static()) return false;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------------
// Parsing: recursive descent over Python's precedence (additive < multiplicative < unary), on polynomials so
// that negative intermediate constants are fine.

namespace {

class DimParser {
 public:
  DimParser(std::string_view text, const std::function<std::string(std::string_view)>& check_symbol,
            DimSyntaxError& error)
      : text_(text), check_symbol_(check_symbol), error_(error) {}

  std::optional<Poly> parse() {
    skip_space();
    std::optional<Poly> value = additive(0);
    if (!value) return std::nullopt;
    if (pos_ < text_.size()) return fail(pos_, 1, unexpected("after a dimension"));
    return value;
  }

 private:
  static constexpr int kMaxDepth = 64;

  std::optional<Poly> fail(size_t offset, size_t length, std::string message) {
    error_ = DimSyntaxError{offset, length, std::move(message)};
    return std::nullopt;
  }

  std::string unexpected(std::string_view where) const {
    if (pos_ >= text_.size()) return "a dimension ends early";
    const char c = text_[pos_];
    if (c == '/' && (pos_ + 1 >= text_.size() || text_[pos_ + 1] != '/')) {
      return "'/' is true division; a dimension divides with '//'";
    }
    return "unsupported '" + std::string(1, c) + "' " + std::string(where) +
           " (a dimension is integers, symbols, + - * // % and parentheses)";
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }

  bool eat(std::string_view op) {
    if (text_.substr(pos_, op.size()) != op) return false;
    pos_ += op.size();
    skip_space();
    return true;
  }

  std::optional<Poly> additive(int depth) {
    std::optional<Poly> value = multiplicative(depth);
    while (value) {
      const size_t at = pos_;
      int64_t sign = 0;
      if (eat("+")) {
        sign = 1;
      } else if (eat("-")) {
        sign = -1;
      } else {
        break;
      }
      std::optional<Poly> right = multiplicative(depth);
      if (!right) return std::nullopt;
      value = add(*value, *right, sign);
      if (!value) return fail(at, 1, "the dimension is too large");
    }
    return value;
  }

  std::optional<Poly> multiplicative(int depth) {
    std::optional<Poly> value = unary(depth);
    while (value) {
      const size_t at = pos_;
      EntryKind kind = EntryKind::Sum;
      if (eat("//")) {
        kind = EntryKind::FloorDiv;
      } else if (eat("%")) {
        kind = EntryKind::FloorMod;
      } else if (text_.substr(pos_, 2) != "**" && eat("*")) {
        kind = EntryKind::Sum;
      } else {
        break;
      }
      const size_t right_at = pos_;
      std::optional<Poly> right = unary(depth);
      if (!right) return std::nullopt;
      if (kind == EntryKind::Sum) {
        value = multiply(*value, *right);
        if (!value) return fail(at, 1, "the dimension is too large");
        continue;
      }
      const std::optional<int64_t> divisor = constant_of(*right);
      if (divisor && *divisor <= 0) {
        return fail(right_at, pos_ > right_at ? pos_ - right_at : 1,
                    *divisor == 0 ? "division by zero in a dimension" : "a dimension divides by a negative number");
      }
      value = divide(kind, *value, *right);
      if (!value) return fail(at, kind == EntryKind::FloorDiv ? 2 : 1, "the dimension cannot be kept");
    }
    return value;
  }

  std::optional<Poly> unary(int depth) {
    if (depth > kMaxDepth) return fail(pos_, 1, "the dimension nests too deeply");
    const size_t at = pos_;
    if (eat("-")) {
      std::optional<Poly> value = unary(depth + 1);
      if (!value) return std::nullopt;
      value = add({}, *value, -1);
      if (!value) return fail(at, 1, "the dimension is too large");
      return value;
    }
    return primary(depth);
  }

  std::optional<Poly> primary(int depth) {
    const size_t start = pos_;
    if (eat("(")) {
      std::optional<Poly> value = additive(depth + 1);
      if (!value) return std::nullopt;
      if (!eat(")")) {
        return fail(pos_, 1, pos_ >= text_.size() ? "missing ')' in a dimension" : unexpected("in a dimension"));
      }
      return value;
    }
    if (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int64_t value = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
          while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
          return fail(start, pos_ - start, "integer out of range in a dimension");
        }
        ++pos_;
      }
      if (pos_ < text_.size() && is_name_char(text_[pos_])) return fail(start, 1, unexpected("in a dimension"));
      skip_space();
      return value == 0 ? Poly{} : Poly{Term{{}, value}};
    }
    if (pos_ < text_.size() && is_name_start(text_[pos_])) {
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      const std::string_view name = text_.substr(start, pos_ - start);
      skip_space();
      if (pos_ < text_.size() && (text_[pos_] == '(' || text_[pos_] == '.')) {
        size_t end = pos_;
        while (end < text_.size() && (text_[end] == '.' || is_name_char(text_[end]))) ++end;
        return fail(start, name.size(), "unsupported call '" + std::string(text_.substr(start, end - start)) +
                                             "' in a dimension (a dimension is integers, symbols, + - * // % "
                                             "and parentheses)");
      }
      std::string problem = check_symbol_ ? check_symbol_(name) : std::string();
      if (!problem.empty()) return fail(start, name.size(), std::move(problem));
      return Poly{Term{{Dim::symbol(name).raw()}, 1}};
    }
    return fail(pos_, 1, unexpected("in a dimension"));
  }

  static bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

  std::string_view text_;
  const std::function<std::string(std::string_view)>& check_symbol_;
  DimSyntaxError& error_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<Dim> parse_dim(std::string_view text, bool allow_inferred,
                             const std::function<std::string(std::string_view name)>& check_symbol,
                             DimSyntaxError& error) {
  // A static extent, as almost every dimension of a model is: its digits, without building a polynomial.
  if (!text.empty() && text.size() <= 18 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t extent = 0;
    for (char c : text) extent = extent * 10 + (c - '0');
    return Dim::fixed(extent);
  }
  std::optional<Poly> value = DimParser(text, check_symbol, error).parse();
  if (!value) return std::nullopt;
  if (const std::optional<int64_t> constant = constant_of(*value); constant && *constant < 0) {
    if (allow_inferred && *constant == -1) return Dim::inferred();
    error = DimSyntaxError{0, text.size(),
                           "negative dimension " + std::to_string(*constant) +
                               (allow_inferred ? " (only -1, an inferred extent, is allowed)" : "")};
    return std::nullopt;
  }
  std::optional<Dim> dim = from_poly(std::move(*value));
  if (!dim) error = DimSyntaxError{0, text.size(), "the dimension cannot be kept"};
  return dim;
}

}  // namespace dpl
