#!/usr/bin/python3
"""ctest for tools/editor: the JSON files parse, the VS Code manifest points at real files, and every keyword of
grammar/Dpl.g4 is highlighted as a keyword by the TextMate grammar (so a new keyword needs an editor update)."""

import argparse
import json
import os
import re
import sys


def fail(message):
    print(f"editor_grammar_test: {message}", file=sys.stderr)
    sys.exit(1)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as text:
            return json.load(text)
    except (OSError, json.JSONDecodeError) as error:
        fail(f"{path}: {error}")


def dpl_keywords(antlr_grammar):
    """Every quoted word of the ANTLR grammar ('rule', 'where', ...): the keywords the lexer knows."""
    with open(antlr_grammar, encoding="utf-8") as text:
        source = re.sub(r"//.*", "", text.read())
    return sorted(set(re.findall(r"'([A-Za-z_][A-Za-z_0-9]*)'", source)))


def reachable_rules(grammar):
    """The (scope name, regex) of every `match` rule reachable from the top-level patterns through includes."""
    repository = grammar.get("repository", {})
    found, seen = [], set()

    def visit(rules):
        for rule in rules:
            include = rule.get("include", "")
            if include.startswith("#"):
                if include not in seen:
                    seen.add(include)
                    if include[1:] not in repository:
                        fail(f"include of a missing repository rule {include}")
                    visit([repository[include[1:]]])
                continue
            if "match" in rule:
                found.append((rule.get("name", ""), rule["match"]))
                for capture in rule.get("captures", {}).values():
                    found.append((capture.get("name", ""), None))
            visit(rule.get("patterns", []))

    visit(grammar.get("patterns", []))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--editor-dir", required=True)
    parser.add_argument("--antlr-grammar", required=True)
    args = parser.parse_args()

    grammar = load_json(os.path.join(args.editor_dir, "dpl.tmLanguage.json"))
    manifest = load_json(os.path.join(args.editor_dir, "package.json"))
    load_json(os.path.join(args.editor_dir, "language-configuration.json"))

    contributes = manifest.get("contributes", {})
    languages, grammars = contributes.get("languages", []), contributes.get("grammars", [])
    if len(languages) != 1 or ".dpl" not in languages[0].get("extensions", []):
        fail("package.json must declare one language for .dpl files")
    if len(grammars) != 1 or grammars[0].get("scopeName") != grammar.get("scopeName"):
        fail(f"package.json's grammar scope differs from the grammar's {grammar.get('scopeName')}")
    for path in (languages[0].get("configuration"), grammars[0].get("path")):
        if not path or not os.path.isfile(os.path.join(args.editor_dir, path)):
            fail(f"package.json names a missing file: {path}")

    rules = reachable_rules(grammar)
    keyword_regexes = []
    for name, regex in rules:
        if regex is None:
            continue
        try:
            compiled = re.compile(regex)
        except re.error as error:
            fail(f"regex {regex!r} does not compile: {error}")
        if name.startswith("keyword.") and not name.startswith("keyword.operator."):
            keyword_regexes.append(compiled)

    keywords = dpl_keywords(args.antlr_grammar)
    for expected in ("pass", "rule", "where", "import"):
        if expected not in keywords:
            fail(f"found no '{expected}' in {args.antlr_grammar}: is the keyword extraction broken? ({keywords})")
    missing = [word for word in keywords if not any(regex.fullmatch(word) for regex in keyword_regexes)]
    if missing:
        fail(f"keywords of {args.antlr_grammar} not highlighted by dpl.tmLanguage.json: {', '.join(missing)} "
             "(add them to its `keywords` rule)")
    for identifier in ("add", "nn", "relu", "x", "rules", "passes", "wherever"):
        if any(regex.fullmatch(identifier) or regex.search(f" {identifier} ") for regex in keyword_regexes):
            fail(f"the keyword rules also highlight the plain name '{identifier}'")
    print(f"editor grammar ok: {len(keywords)} keywords highlighted ({', '.join(keywords)})")


if __name__ == "__main__":
    main()
