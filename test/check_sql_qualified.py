#!/usr/bin/env python3
"""Every function, aggregate, operator and cast in kernel_ml's SQL is
schema-qualified (issue 29).

    python3 test/check_sql_qualified.py [--c] FILE...

FILE: the install and upgrade scripts (sql/kernel_ml.sql,
sql/kernel_ml--A--B.sql) or, with --c, C sources whose string literals hold
the SQL the extension issues through SPI.  An extension script runs with
the extension's schema on the search path, where a role with CREATE on it
may have planted a function or operator that matches a call better than
pg_catalog's (array_agg(jsonb) against pg_catalog.array_agg(anynonarray)):
a view, a constraint or a function body bound to it runs the role's code as
whoever uses the object.  So in every expression -- views, SELECT, INSERT,
UPDATE and DELETE statements, CHECK constraints, DEFAULT and USING
expressions, index predicates, DO blocks and SQL or PL/pgSQL bodies -- this
flags:
  - a function or aggregate call without a schema (pg_catalog.max(...),
    @extschema@.f(...)), and a trigger's EXECUTE FUNCTION without one;
  - an operator outside OPERATOR(schema.op), and the syntax that hides one:
    IN (...), BETWEEN, LIKE, ILIKE, SIMILAR TO, IS [NOT] DISTINCT FROM,
    NULLIF, a simple CASE x WHEN;
  - a cast (::type, CAST(... AS type)) to an unqualified type that is not a
    SQL keyword type (integer, bigint, boolean, ...: the grammar qualifies
    those itself).
Declarations are not expressions: column and argument types, CREATE
AGGREGATE's support functions (looked up by their exact argument types in
the schema the script has just created them in), COMMENT, GRANT.  Syntax
that names no operator is fine: COALESCE, GREATEST, LEAST, IS NULL, ORDER
BY, DISTINCT, GROUP BY (default operator classes), a negative number.

Prints one line per finding (file:line: what) and ends with
"N passed, N failed" (files); exit status 1 when anything is flagged.
"""
import re
import sys

# SQL keywords that are followed by "(" without being a function call, or
# that are function-like syntax the grammar resolves itself
SYNTAX = {
    'select', 'from', 'where', 'and', 'or', 'not', 'exists', 'any', 'all', 'some',
    'array', 'row', 'values', 'filter', 'over', 'within', 'group', 'cast', 'coalesce',
    'greatest', 'least', 'extract', 'position', 'substring', 'trim', 'overlay',
    'as', 'on', 'join', 'using', 'key', 'check', 'unique', 'primary', 'references',
    'conflict', 'table', 'returns', 'in', 'into', 'by', 'set', 'when', 'then', 'else',
    'case', 'is', 'with', 'lateral', 'tablesample', 'for', 'if', 'elsif', 'return',
    'perform', 'execute', 'query', 'raise', 'loop', 'while', 'foreach', 'default',
    'union', 'except', 'intersect', 'limit', 'offset', 'distinct', 'partition',
    'only', 'returning', 'do', 'update', 'nothing', 'type', 'grouping', 'cube',
    'rollup', 'sets', 'collate', 'include', 'begin', 'atomic', 'end', 'variadic',
    'numeric', 'decimal', 'varchar', 'char', 'character', 'bit', 'time', 'timestamp',
    'interval', 'float', 'national', 'nchar', 'ordinality', 'xmlelement',
}
# types the grammar itself maps to pg_catalog (SystemTypeName)
KEYWORD_TYPES = {
    'int', 'integer', 'smallint', 'bigint', 'real', 'float', 'double', 'decimal',
    'dec', 'numeric', 'boolean', 'bool_keyword', 'char', 'character', 'varchar',
    'nchar', 'national', 'bit', 'time', 'timestamp', 'interval',
}
HIDDEN = {
    'in': 'IN (...) compares with an unqualified =: write x OPERATOR(pg_catalog.=) ANY (ARRAY[...])',
    'between': 'BETWEEN compares with unqualified >= and <=',
    'like': 'LIKE is the unqualified operator ~~',
    'ilike': 'ILIKE is the unqualified operator ~~*',
    'similar': 'SIMILAR TO calls unqualified similar_to_escape and ~',
    'nullif': 'NULLIF compares with an unqualified =',
    'distinct_from': 'IS [NOT] DISTINCT FROM compares with an unqualified =',
    'simple_case': 'a simple CASE x WHEN compares with an unqualified =: write CASE WHEN x OPERATOR(pg_catalog.=) ...',
}

TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<dollar>\$(?P<tag>[A-Za-z_]*)\$)
  | (?P<string>[EeBbXxUu]?'(?:[^']|'')*')
  | (?P<qident>"(?:[^"]|"")*")
  | (?P<param>\$\d+)
  | (?P<num>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)
  | (?P<ident>@extschema@|[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<cast>::)
  | (?P<assign>:=)
  | (?P<op>[-+*/<>=~!@#%^&|`?]+)
  | (?P<punct>[(),;.\[\]:])
''', re.X | re.S)


class Tok:
    __slots__ = ('kind', 'text', 'low', 'line')

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line
        self.low = text.lower()


def tokenize(text, line0=1):
    """Tokens; a dollar-quoted body is tokenized in turn (its code counts)."""
    toks = []
    pos, line = 0, line0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            toks.append(Tok('punct', text[pos], line))
            line += text[pos] == '\n'
            pos += 1
            continue
        kind = m.lastgroup if m.lastgroup != 'tag' else 'dollar'
        s = m.group(0)
        if kind == 'dollar':
            end = text.find(s, m.end())
            if end < 0:
                end = len(text)
            body = text[m.end():end]
            toks.append(Tok('body_start', s, line))
            toks.extend(tokenize(body, line + s.count('\n')))
            toks.append(Tok('body_end', s, line + text[pos:end].count('\n')))
            line += text[pos:end + len(s)].count('\n')
            pos = end + len(s)
            continue
        if kind not in ('ws', 'comment'):
            toks.append(Tok(kind, s, line))
        line += s.count('\n')
        pos = m.end()
    return toks


def statements(toks):
    """Split at top-level semicolons (a dollar body is one token run)."""
    stmt, depth = [], 0
    for t in toks:
        if t.kind == 'body_start':
            depth += 1
        elif t.kind == 'body_end':
            depth -= 1
        if t.text == ';' and depth == 0:
            if stmt:
                yield stmt
            stmt = []
        else:
            stmt.append(t)
    if stmt:
        yield stmt


def word(toks, i):
    return toks[i].low if 0 <= i < len(toks) and toks[i].kind == 'ident' else None


def expression_ranges(st):
    """(start, end) token ranges of a statement that are expressions."""
    w = [t.low if t.kind == 'ident' else t.text for t in st]
    head = ' '.join(x for x in w[:4] if isinstance(x, str)).lower()
    n = len(st)
    if head.startswith(('comment ', 'grant ', 'revoke ', 'drop ', 'create aggregate',
                        'alter extension', 'create extension', 'create schema', 'create role',
                        'create type', 'security ', 'set ', 'reset ', 'create cast',
                        'create operator', 'alter aggregate', 'alter function')):
        return []
    if head.startswith(('select', 'insert', 'update', 'delete', 'with', 'do',
                        'create view', 'create or replace view', 'create materialized view',
                        'create or replace recursive', 'create recursive view',
                        'values', 'perform')):
        return [(0, n)]
    ranges = []
    if head.startswith(('create function', 'create or replace function',
                        'create procedure', 'create or replace procedure')):
        # the body: dollar-quoted, BEGIN ATOMIC ... END, or RETURN expr;
        # argument DEFAULT expressions
        i = 0
        while i < n:
            t = st[i]
            if t.kind == 'body_start':
                j = i + 1
                while j < n and st[j].kind != 'body_end':
                    j += 1
                lang = [x.low for x in st if x.kind == 'ident']
                if 'sql' in lang or 'plpgsql' in lang:
                    ranges.append((i + 1, j))
                i = j
            elif t.low in ('atomic', 'return') and t.kind == 'ident':
                ranges.append((i + 1, n))
                break
            elif t.low == 'default' and t.kind == 'ident' or t.text == '=' and i > 0 and st[i - 1].kind == 'ident':
                j, depth = i + 1, 0
                while j < n and not (depth == 0 and st[j].text in (',', ')')):
                    depth += st[j].text == '('
                    depth -= st[j].text == ')'
                    j += 1
                ranges.append((i + 1, j))
                i = j
            i += 1
        return ranges
    if head.startswith(('create trigger', 'create or replace trigger', 'create constraint trigger')):
        for i, t in enumerate(st):
            if t.low in ('function', 'procedure') and i > 0 and st[i - 1].low == 'execute':
                if not (i + 2 < n and st[i + 2].text == '.'):
                    ranges.append(('trigger', i + 1))
            if t.low == 'when' and i + 1 < n and st[i + 1].text == '(':
                j, depth = i + 1, 0
                while j < n:
                    depth += st[j].text == '('
                    depth -= st[j].text == ')'
                    j += 1
                    if depth == 0:
                        break
                ranges.append((i + 1, j))
        return ranges
    # CREATE TABLE / ALTER TABLE / CREATE INDEX: CHECK (...), DEFAULT expr,
    # USING expr, GENERATED ... AS (...), an index's expressions and WHERE
    i = 0
    is_index = 'index' in head.split()[:4]
    while i < n:
        t = st[i]
        if t.kind == 'ident' and t.low in ('check', 'generated') or \
                (is_index and t.kind == 'ident' and t.low == 'on'):
            j = i + 1
            while j < n and st[j].text != '(':
                j += 1
            k, depth = j, 0
            while k < n:
                depth += st[k].text == '('
                depth -= st[k].text == ')'
                k += 1
                if depth == 0:
                    break
            ranges.append((j + 1, k - 1) if is_index and t.low == 'on' else (j, k))
            i = k
            continue
        if t.kind == 'ident' and t.low in ('default', 'using', 'where'):
            if t.low == 'using' and i + 1 < n and word(st, i + 1) in ('btree', 'hash', 'gist', 'gin', 'brin', 'spgist'):
                i += 1
                continue
            j, depth = i + 1, 0
            while j < n and not (depth == 0 and (st[j].text == ',' or st[j].text == ')' or
                                                 (st[j].kind == 'ident' and st[j].low in (
                                                     'not', 'null', 'constraint', 'check', 'primary',
                                                     'unique', 'references', 'collate', 'generated')
                                                  and t.low == 'default' and j > i + 1))):
                depth += st[j].text == '('
                depth -= st[j].text == ')'
                j += 1
            ranges.append((i + 1, j))
            i = j
            continue
        i += 1
    return ranges


def check_range(st, a, b, report):
    """Flag unqualified calls, operators and casts in st[a:b]."""
    in_operator = 0
    depth_stack = []
    i = a
    while i < b:
        t = st[i]
        prev = st[i - 1] if i > a else None
        nxt = st[i + 1] if i + 1 < b else None
        if t.kind == 'ident' and t.low == 'operator' and nxt is not None and nxt.text == '(':
            # OPERATOR(schema.op): skip to its ")"
            j = i + 2
            qualified = j + 1 < b and st[j + 1].text == '.'
            while j < b and st[j].text != ')':
                j += 1
            if not qualified:
                report(t.line, 'OPERATOR(...) without a schema')
            i = j + 1
            continue
        if t.kind == 'ident' and nxt is not None and nxt.text == '(':
            qualified = prev is not None and prev.text == '.'
            pprev = st[i - 2] if i - 2 >= a else None
            if t.low == 'nullif':
                report(t.line, HIDDEN['nullif'])
            elif t.low == 'in' and prev is not None:
                report(t.line, HIDDEN['in'])
            elif qualified or t.low in SYNTAX:
                pass
            elif prev is not None and prev.kind == 'ident' and prev.low in (
                    'into', 'references', 'table', 'index', 'view', 'as', 'conflict',
                    'function', 'aggregate', 'procedure', 'type'):
                pass    # a relation's column list, an alias's, a declaration
            elif prev is not None and (prev.text == ')' or prev.kind in ('ident', 'qident')) and \
                    not (prev.kind == 'ident' and prev.low in (
                        'select', 'where', 'and', 'or', 'not', 'then', 'else', 'when', 'by',
                        'return', 'perform', 'distinct', 'on', 'having', 'filter', 'if', 'elsif',
                        'case', 'in', 'is', 'set', 'returning', 'values', 'exists', 'between',
                        'like', 'raise', 'into', 'default', 'check', 'using', 'all', 'any', 'some',
                        'from', 'join', 'lateral', 'array', 'row')):
                pass    # FROM f(...) g(col): the alias's column list
            elif prev is not None and prev.kind == 'cast':
                pass    # ::type(typmod) is checked as a cast
            elif pprev is not None and pprev.kind == 'cast':
                pass
            else:
                report(t.line, '%s(...) without a schema (pg_catalog. or @extschema@.)' % t.text)
        if t.kind == 'ident':
            if t.low in ('between', 'like', 'ilike', 'similar'):
                report(t.line, HIDDEN[t.low])
            elif t.low == 'distinct' and prev is not None and prev.low in ('is', 'not') \
                    and nxt is not None and nxt.low == 'from':
                report(t.line, HIDDEN['distinct_from'])
            elif t.low == 'case' and nxt is not None and nxt.low != 'when':
                report(t.line, HIDDEN['simple_case'])
            elif t.low == 'cast' and nxt is not None and nxt.text == '(':
                j, depth = i + 1, 0
                while j < b:
                    depth += st[j].text == '('
                    depth -= st[j].text == ')'
                    if depth == 1 and st[j].low == 'as':
                        check_type(st, j + 1, b, report)
                        break
                    if depth == 0:
                        break
                    j += 1
        if t.kind == 'cast':
            check_type(st, i + 1, b, report)
        if t.kind == 'op':
            ok = False
            if t.text == '*' and prev is not None and (prev.text in ('(', '.', ',') or prev.low == 'select') \
                    and nxt is not None and nxt.text in (')', ',') or \
                    t.text == '*' and prev is not None and prev.text == '.' or \
                    t.text == '*' and prev is not None and prev.low == 'select':
                ok = True   # count(*), SELECT *, s.*
            elif t.text == '=>':
                ok = True   # named argument
            elif t.text == '=' and _assignment(st, a, i):
                ok = True   # UPDATE ... SET col = value
            elif t.text == '-' and nxt is not None and nxt.kind == 'num' and (
                    prev is None or prev.kind in ('op', 'cast') or prev.text in ('(', ',', '[') or
                    prev.kind == 'ident' and prev.low in SYNTAX):
                ok = True   # a negative number: a constant
            if not ok:
                report(t.line, 'operator %s without OPERATOR(pg_catalog.%s)' % (t.text, t.text))
        i += 1


def _assignment(st, a, i):
    """Whether the = at i assigns (UPDATE ... SET a = ..., DO UPDATE SET)."""
    j, depth = i - 1, 0
    while j >= a:
        x = st[j]
        if x.text == ')':
            depth += 1
        elif x.text == '(':
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0 and x.kind == 'ident':
            if x.low == 'set':
                return True
            if x.low in ('where', 'when', 'and', 'or', 'on', 'select', 'then', 'else', 'having',
                         'if', 'elsif', 'return', 'check', 'case', 'returning', 'from', 'not'):
                return False
        j -= 1
    return False


def check_type(st, i, b, report):
    if i >= b:
        return
    t = st[i]
    if t.kind not in ('ident', 'qident'):
        return
    if i + 1 < b and st[i + 1].text == '.':
        return      # schema.type
    if t.kind == 'ident' and t.low in KEYWORD_TYPES:
        return
    report(t.line, 'cast to %s without a schema (pg_catalog.%s)' % (t.text, t.text))


def check_sql(text, line0, report, c_string=False):
    for st in statements(tokenize(text, line0)):
        if c_string:
            ranges = [(0, len(st))]
        else:
            ranges = expression_ranges(st)
        for r in ranges:
            if r[0] == 'trigger':
                report(st[r[1]].line, 'EXECUTE FUNCTION %s without a schema (@extschema@.)' % st[r[1]].text)
            else:
                check_range(st, r[0], r[1], report)


C_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*')


def c_sql_strings(src):
    """(line, text) of the C string literals that hold SQL statements or
    expressions the extension runs (not messages)."""
    code = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), src, flags=re.S)
    code = re.sub(r'//[^\n]*', '', code)
    for m in C_STRING.finditer(code):
        s = ''.join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0)))
        s = s.replace('\\n', '\n').replace('\\t', ' ').replace('\\"', '"')
        before = code[max(0, m.start() - 40):m.start()]
        if re.search(r'\b(errmsg|errdetail|errhint|errcontext|elog|errmsg_plural|errdetail_plural|'
                     r'ereport|pg_log|printf|fprintf|_)\s*\(\s*(ERROR\s*,\s*)?$',
                     before):
            continue
        if not re.search(r'\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|OPERATOR\(|pg_catalog\.|COALESCE\()', s):
            continue
        # printf placeholders: %s. is a schema, %s a relation or an expression
        s = s.replace('%%', '%')
        s = re.sub(r'%[-0-9.]*(?:l|ll|z)?[sdu]', 'km_placeholder', s)
        yield code.count('\n', 0, m.start()) + 1, s


def main(argv):
    c_mode = '--c' in argv
    files = [a for a in argv if a != '--c']
    passed = failed = 0
    for f in files:
        findings = []

        def report(line, what, f=f):
            findings.append('%s:%d: %s' % (f, line, what))

        text = open(f, encoding='utf-8').read()
        if c_mode or f.endswith('.c'):
            for line, s in c_sql_strings(text):
                check_sql(s, line, report, c_string=True)
        else:
            check_sql(text, 1, report)
        for x in sorted(set(findings), key=lambda s: (int(s.split(':')[1]), s)):
            print(x)
        if findings:
            failed += 1
            print('not ok - %s: %d unqualified' % (f, len(set(findings))))
        else:
            passed += 1
            print('ok - %s' % f)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
