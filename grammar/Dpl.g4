// Dpl.g4: the grammar of .dpl rewrite-rule files; docs/language.md describes what each construct means.
//
// One expression grammar serves patterns, guards and right-hand sides; the parser stage (compiler/src/parse.cpp)
// turns it into the pattern or expression AST the context calls for and rejects forms that do not belong there.
grammar Dpl;

file : item* EOF ;

item
  : passDecl
  | ruleDecl
  | multiRuleDecl
  | partitionDecl
  | pipelineDecl
  | patternDecl
  | importDecl
  | externDecl
  | opDecl
  | testDecl
  ;

importDecl : 'import' STRING ';' ;

passDecl : 'pass' ident description=STRING? '{' passItem* '}' ;

passItem
  : ruleDecl
  | multiRuleDecl
  | partitionDecl
  | patternDecl
  | testDecl
  ;

ruleDecl : 'rule' ident ruleOption* ':' lhs=expr ('where' guard=expr)? '=>' letBinding* rhs=expr ';' ;

// `priority 2` (higher is tried first; default 0) and `once` (never fires on a node this pass created).
ruleOption
  : 'priority' negative='-'? INT                             # priorityOption
  | 'once'                                                   # onceOption
  ;

// Several roots sharing bound values (TVM's rewrite_bindings): the first root is matched at the visited node,
// each later one among the users of values bound before it. A `group` root collects every fitting user.
multiRuleDecl
  : 'rule' ident ruleOption* '{' rootDecl+ ('where' guard=expr ';')? '=>' letBinding* rootRewrite* '}' ;

rootDecl : group='group'? ident ':' pattern=expr ('where' guard=expr)? ';' ;

rootRewrite : ident '=>' value=expr ';' ;

// `partition "ccompiler.add_sub_mul": multiply(add(x, y), subtract(x, y));`: each match becomes a call of a
// new composite function.
partitionDecl : 'partition' name=STRING ruleOption* ':' pattern=expr ('where' guard=expr)? ';' ;

// `pipeline fuse_all = simplify, fuse_attention;`: passes run in sequence under one name.
pipelineDecl : 'pipeline' ident description=STRING? '=' ident (',' ident)* ';' ;

// `let y = matmul(x, w);` before the final right-hand-side expression names a value built once.
letBinding : 'let' ident '=' value=expr ';' ;

// `extern predicate is_aligned(x: Tensor) from "checks.h";`: a C++ function the generated code calls.
externDecl : 'extern' kind=ident ident '(' (externParam (',' externParam)*)? ')' 'from' header=STRING ';' ;

externParam : ident ':' ident ;

// `op my.fused_gelu(x, approximate: string = "none") : elementwise -> same_as(x);`: a custom op, usable in patterns
// and right-hand sides and registered by the generated code. `xs...` as the last operand: any number of them.
opDecl
  : 'op' nameParts+=ident ('.' nameParts+=ident)* '(' (opParam (',' opParam)*)? ')'
    (':' traits+=ident (',' traits+=ident)*)? ('->' result=expr)? ';'
  ;

opParam
  : ident variadic='...'?                                    # operandParam
  | ident ':' kind=ident optional='?'? ('=' value=expr)?     # attrParam
  ;

// `test fold { input "a.input.relax"; expect "a.expected.relax"; }`: runs a pass on the input, compares the result
// with the expectation and both graphs' numbers (docs/verification.md). Inside a pass block it tests that pass; at
// the top level `pass NAME;` or `pipeline NAME;` says what it runs. Paths are relative to the .dpl file.
testDecl : 'test' ident '{' testItem* '}' ;

testItem
  : kind=('pass' | 'pipeline') ident ';'                    # testTargetItem
  | 'input' STRING ';'                                       # testInputItem
  | 'expect' (path=STRING | unchanged='unchanged') ';'       # testExpectItem
  | 'seed' INT ';'                                           # testSeedItem
  | 'tolerance' number=(FLOAT | INT) ';'                     # testToleranceItem
  | 'numbers' 'differ' ';'                                   # testNumbersDifferItem
  | 'dims' testDim (',' testDim)* ';'                        # testDimsItem
  ;

// `dims b = 2, s = 16;`: the values of symbolic dimensions in the input's parameters for the numeric check.
testDim : ident '=' INT ;

patternDecl : 'pattern' ident '(' (ident (',' ident)*)? ')' '=' body=expr ';' ;

// Alternatives listed first bind tighter. `name: p` is a prefix form with the lowest precedence, so
// `op: add | multiply` binds `op` to the whole alternation; `p: Tensor[...]` after a call pattern gives the type
// of its result (`r: reshape(x, _): Tensor[(b * n, k)]`). `...` (any further operands) and `xs...` (the same,
// bound as a list; on the right, the list spread) are the last operand of a call or field of a tuple.
expr
  : expr '(' arguments? ')'                                  # callExpr
  | expr '[' expr (',' expr)* ']'                            # indexExpr
  | expr '.' ident                                           # memberExpr
  | expr '?'                                                 # optionalExpr
  | expr '...'                                               # spreadExpr
  | op=('-' | '!') expr                                      # unaryExpr
  | expr op=('*' | '/') expr                                 # mulExpr
  | expr op=('+' | '-') expr                                 # addExpr
  | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr     # compareExpr
  | expr '&&' expr                                           # andExpr
  | expr '||' expr                                           # orExpr
  | expr '|' expr                                            # altExpr
  | ident ':' expr                                           # bindExpr
  | <assoc=right> expr ':' expr                              # typedExpr
  | primary                                                  # primaryExpr
  ;

primary
  : ident                                                    # namePrimary
  | INT                                                      # intPrimary
  | FLOAT                                                    # floatPrimary
  | STRING                                                   # stringPrimary
  | '[' (expr (',' expr)*)? ']'                              # listPrimary
  | '...'                                                    # restPrimary
  | '(' expr ')'                                             # parenPrimary
  | '(' (expr ',' (expr (',' expr)*)?)? ')'                  # tuplePrimary
  ;

arguments : argument (',' argument)* ;

// `**c` on the right: the attributes of the call bound to `c`, those not written as keywords.
argument
  : ident '=' expr                                           # keywordArgument
  | '**' ident                                               # attrsArgument
  | expr                                                     # positionalArgument
  ;

// `where` is also an op (R.where), so it stays usable as a name; so are the other words that only have a
// meaning at one place of a declaration.
ident
  : IDENT | 'where' | 'extern' | 'from' | 'priority' | 'once' | 'group' | 'partition' | 'pipeline' | 'op'
  | 'test' | 'input' | 'expect' | 'unchanged' | 'seed' | 'tolerance' | 'numbers' | 'differ' | 'dims'
  ;

INT : [0-9]+ ;
FLOAT : [0-9]+ '.' [0-9]* EXPONENT? | '.' [0-9]+ EXPONENT? | [0-9]+ EXPONENT ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;
STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
IDENT : [a-zA-Z_] [a-zA-Z_0-9]* ;

LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WHITESPACE : [ \t\r\n]+ -> skip ;

// Anything else becomes a token the parser rejects with a located error (the lexer itself never fails).
// Both match a proper prefix of a well-formed comment or string, so the longer well-formed token wins.
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'* ;
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* ('\\')? ;
UNKNOWN_CHAR : . ;
