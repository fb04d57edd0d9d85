// dplc --verify: numeric testing of each rewrite rule on small concrete instances of its left-hand side.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace dpl::compiler {

struct VerifyOptions {
  // Each instance is evaluated before and after the rewrite on random inputs drawn with these seeds.
  std::vector<uint64_t> seeds = {1, 2, 3};
  // How many instances (shape and attribute choices) each of the two searches tries per rule alternative.
  size_t max_attempts = 10000;
};

struct RuleVerdict {
  // NeverMatches: an alternative dplc dropped because no graph can match it (Rule::dropped); nothing to verify.
  enum class Kind : uint8_t { Verified, Unsound, NotVerified, NeverMatches };
  Kind kind = Kind::NotVerified;
  std::string pass;
  std::string rule;    // with " (alternative i of n)" when the rule has several
  std::string detail;  // Verified: the instance's parameters; Unsound: the difference; NotVerified and
                       // NeverMatches: the reason
  // A replacement the driver declined for its type on an instance the rule matched (its right-hand side does not
  // fit there, so the rewrite does not happen): not unsound (declining is how a rule that does not fit behaves,
  // docs/semantics.md), but worth a warning. Empty when none was.
  std::string declined;
};

struct VerifyResult {
  bool ok = false;  // the file compiled and no rule was found unsound
  std::vector<RuleVerdict> verdicts;
};

// Reads and checks `path`, then for every rule (each alternative after expansion) builds a small instance of its
// left-hand side (a multi-root rule's: all roots in one graph, its roots' and group members' own weights of
// different widths first; groups with 2, then 3 members, then 2 of different alternatives), rewrites it with the
// rule alone (the rule interpreter), and evaluates before and after with the reference interpreter. Errors (compile errors, unsound rules with file:line:col, the
// source line and a caret) go to `messages`; one line per rule alternative goes to `out`:
// "verified: ...", "not verified: ...", "unsound: ..." or "never matches: ..." (a dropped alternative).
VerifyResult verify_rules(const std::string& path, std::ostream& out, std::ostream& messages,
                          const VerifyOptions& options = {});

}  // namespace dpl::compiler
