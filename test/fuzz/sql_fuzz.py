#!/usr/bin/env python3
"""Bounded SQL fuzzer for kernel_ml, run against a live server.

Generates statements that call every function and aggregate of the
extension with random valid and invalid arguments: arrays (empty, NULLs,
multi-dimensional, huge, tiny, negative zero, denormal, mixed lengths),
options objects (every key with valid, boundary and invalid values, unknown
keys, wrong types, non-objects), crafted models (models from kernel_train
mutated by bit flips, truncation, extension and field edits, most with both
CRC-32C checksums fixed up so the mutation reaches the field checks) and
small sets of rows for the aggregates.

Each statement runs in its own transaction under a short statement_timeout.
A statement fails when:
  - the backend dies (SQLSTATE 57P*, 08*, or a lost connection);
  - it raises XX000 (internal error), or XX001 (data corrupted) for anything
    but a model whose checksum does not match;
  - a float8 result, an array element or a number inside returned jsonb is
    NaN or Infinity although every input was finite;
  - kernel_train returns a model that kernel_model_info or kernel_predict
    then rejects;
  - a cancelled statement returns long after its statement_timeout.

Deterministic from --seed; bounded by --statements and --seconds, whichever
comes first.  The connection comes from the libpq environment (PGHOST, ...).
Ends with "N passed, N failed": statements without a finding, and distinct
findings (the shortest reproducer of each is printed).
"""
import argparse
import math
import random
import re
import struct
import sys
import time

import psycopg2
import psycopg2.extensions

TIMEOUT_MS = 2000
LATE_CANCEL_S = 3.0     # a cancel this late after the timeout is a finding

# ---------------------------------------------------------------- CRC-32C
# Castagnoli, reflected polynomial 0x82F63B78 (as PostgreSQL's pg_crc32c).
_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


# Layouts in src/core/model.h: format 1 (0.1.0) has a 144-byte header with its
# CRC at 140 and one payload CRC at the end; format 2 an 80-byte header with
# its CRC at 76, then sections of tag u16, flags u16, length u64, payload
# and a CRC-32C of tag through payload.
V1_HEADER_SIZE = 144
V1_HEADER_CRC_AT = 140
V2_HEADER_SIZE = 80
V2_HEADER_CRC_AT = 76
V2_SECTION_HEAD = 12


def format_version(buf):
    return struct.unpack_from('<H', buf, 4)[0] if len(buf) >= 6 else 0


def header_size(buf):
    return V1_HEADER_SIZE if format_version(buf) == 1 else V2_HEADER_SIZE


def fix_checksums(buf):
    """Recompute every CRC-32C field of a model that its bytes still reach."""
    buf = bytearray(buf)
    if format_version(buf) == 1:
        if len(buf) >= V1_HEADER_SIZE:
            struct.pack_into('<I', buf, V1_HEADER_CRC_AT, crc32c(buf[:V1_HEADER_CRC_AT]))
        if len(buf) >= V1_HEADER_SIZE + 4:
            struct.pack_into('<I', buf, len(buf) - 4,
                             crc32c(buf[V1_HEADER_SIZE:len(buf) - 4]))
        return bytes(buf)
    if len(buf) >= V2_HEADER_SIZE:
        struct.pack_into('<I', buf, V2_HEADER_CRC_AT, crc32c(buf[:V2_HEADER_CRC_AT]))
    at = V2_HEADER_SIZE
    while at + V2_SECTION_HEAD <= len(buf):
        end = at + V2_SECTION_HEAD + struct.unpack_from('<Q', buf, at + 4)[0]
        if end + 4 > len(buf):
            break
        struct.pack_into('<I', buf, end, crc32c(buf[at:end]))
        at = end + 4
    return bytes(buf)


# Header fields of format 2: offset -> struct format (src/core/model.h).
FIELDS_V2 = {
    4: '<H', 6: '<H', 8: '<Q', 16: '<B', 17: '<B', 18: '<B', 19: '<B',
    20: '<B', 21: '<B', 22: '<B', 23: '<B', 24: '<i', 28: '<I', 32: '<d',
    40: '<d', 48: '<Q', 56: '<Q', 64: '<d', 72: '<I',
}
# Header fields of format 1.
FIELDS_V1 = {
    4: '<H', 6: '<H', 8: '<Q', 16: '<I', 20: '<B', 21: '<B', 22: '<H',
    24: '<i', 28: '<i', 32: '<i', 36: '<I', 40: '<I', 44: '<B', 47: '<B',
    48: '<Q', 56: '<d', 64: '<d', 72: '<d', 80: '<d', 88: '<d', 96: '<d',
    104: '<d', 112: '<d', 120: '<d', 128: '<I', 132: '<B', 133: '<B',
    134: '<H', 136: '<I',
}
INT_EDGES = [0, 1, 2, 3, 7, 8, 9, 255, 256, 65535, 2**31 - 1, 2**31,
             2**32 - 1, 2**63, 2**64 - 1]
DOUBLE_EDGES = [0.0, -0.0, 1.0, -1.0, 1e308, -1e308, 1e-308, 5e-324,
                math.inf, -math.inf, math.nan, 1e200, 1e-200]

# ---------------------------------------------------------------- values
FLOAT_EDGES = ['0', '-0', '1', '-1', '1e308', '-1e308', '1e-308', '-1e-308',
               '5e-324', '2.2250738585072014e-308', '1.7976931348623157e308',
               '1e200', '-1e200', '1e150', '1e-150', '1e100', '3.5', '-2.25']
NONFINITE = ['NaN', 'Infinity', '-Infinity']
PARALLEL = ('SET LOCAL parallel_setup_cost = 0', 'SET LOCAL parallel_tuple_cost = 0',
            'SET LOCAL min_parallel_table_scan_size = 0',
            'SET LOCAL max_parallel_workers_per_gather = 2')


class Stmt:
    """A generated statement and what its inputs allow."""

    def __init__(self, fn, sql, finite=True, corrupt=False, train=False,
                 setup=(), note=None):
        self.fn = fn            # function under test, for grouping findings
        self.sql = sql
        self.setup = setup      # SET LOCAL statements run before it
        self.note = note        # how a crafted model was made
        self.finite = finite    # every input finite: no NaN/Infinity may come out
        self.corrupt = corrupt  # model bytes with a wrong checksum: XX001 is right
        self.train = train      # result is a model to read back


class Gen:
    def __init__(self, rnd, models):
        self.r = rnd
        self.models = models    # list of valid model bytes
        self.finite = True

    # -- numbers and arrays
    def number(self):
        r = self.r
        p = r.random()
        if p < 0.55:
            return repr(round(r.gauss(0, 3), r.choice([0, 2, 6, 12])))
        if p < 0.93:
            return r.choice(FLOAT_EDGES)
        if p < 0.96:
            return 'NULL'
        self.finite = False
        return r.choice(NONFINITE)

    def row(self, d):
        return [self.number() if self.r.random() < 0.3 else
                repr(round(self.r.gauss(0, 2), 3)) for _ in range(d)]

    def array_literal(self, vals):
        return "'{" + ','.join(vals) + "}'::float8[]"

    def array(self, d=None):
        r = self.r
        p = r.random()
        if d is None:
            d = r.choice([0, 1, 1, 2, 2, 3, 5, 8])
        if p < 0.75:
            return self.array_literal([self.number() for _ in range(d)])
        if p < 0.80:
            return 'NULL::float8[]'
        if p < 0.85:    # two dimensions
            return "'{{1,2},{3,4}}'::float8[]"
        if p < 0.88:    # lower bound not 1
            return "'[3:4]={1,2}'::float8[]"
        if p < 0.91:
            return 'ARRAY[NULL]::float8[]'
        if p < 0.95:    # long
            return "array_fill(%s::float8, ARRAY[%d])" % (
                r.choice(['1', '1e-308', '1e300', '0']), r.choice([100, 1000, 5000]))
        return self.array_literal([self.number() for _ in range(r.randint(0, 3))])

    # -- options
    def opt_value(self, key, kernel):
        r = self.r
        valid = {
            'kernel': ['"linear"', '"poly"', '"rbf"', '"laplacian"', '"sigmoid"',
                       '"cosine"', '"min"', '"polysum"'],
            'gamma': ['0.5', '1', '0.01', '"auto"', '[0.1, 1]', '[0.5]', '1e-300', '1e300', '100'],
            'degree': ['1', '2', '3', '5', '100', '50'],
            'coef0': ['0', '1', '-1', '1e308', '-1e308', '1e-308', '-0'],
            'method': ['"ridge"', '"lms"'],
            'lambda': ['0', '1', '0.001', '"auto"', '[0.01, 1, 10]', '1e-300', '1e300', '[0]'],
            'learning_rate': ['0.01', '0.5', '1e-300', '1e300', '10'],
            'max_iter': ['1', '5', '50', '2147483647'],
            'tol': ['0', '1e-6', '1e300', '1e-320'],
            'standardize': ['true', 'false'],
            'fit_intercept': ['true', 'false'],
            'cv': ['"loo"', '"gcv"', '2', '3', '1000'],
            'seed': ['0', '1', '-2147483648', '2147483647', '42'],
            'test_fraction': ['0', '0.2', '0.5', '0.999999', '1e-300'],
            'deploy': ['"if_better"', '"always"', '"never"'],
        }
        invalid = ['null', 'true', '"x"', '""', '[]', '{}', '-1', '0', '1e400',
                   '-1e400', '1e-400', '2.5', '[1, "a"]', '[[1]]', '"auto "',
                   '"RBF"', '2147483648', '-2147483649', '1001', '1', '"loo"',
                   '[' + ','.join(['1'] * 65) + ']', '{"a": 1}', '"\\u00e9"']
        if r.random() < 0.8:
            return r.choice(valid[key])
        return r.choice(invalid)

    KERNEL_PARAMS = {'linear': [], 'poly': ['gamma', 'degree', 'coef0'],
                     'rbf': ['gamma'], 'laplacian': ['gamma'],
                     'sigmoid': ['gamma', 'coef0'], 'cosine': [], 'min': [],
                     'polysum': ['degree']}

    def options(self, training=True, catalog=False):
        r = self.r
        p = r.random()
        if p < 0.04:
            return r.choice(["'[]'::jsonb", "'1'::jsonb", "'\"rbf\"'::jsonb",
                             "'null'::jsonb", "'[{\"kernel\": \"rbf\"}]'::jsonb"])
        if p < 0.10:
            return "'{}'::jsonb"
        kernel = r.choice(list(self.KERNEL_PARAMS))
        keys = {}
        if r.random() < 0.85:
            keys['kernel'] = '"%s"' % kernel
        for k in self.KERNEL_PARAMS[kernel]:
            if r.random() < 0.5:
                keys[k] = self.opt_value(k, kernel)
        if training:
            method = r.choice(['ridge', 'ridge', 'lms'])
            if r.random() < 0.6:
                keys['method'] = '"%s"' % method
            extra = ['lambda', 'standardize', 'fit_intercept', 'cv', 'seed']
            if method == 'lms':
                extra += ['learning_rate', 'max_iter', 'tol']
            if catalog:
                extra += ['test_fraction', 'deploy']
            for k in extra:
                if r.random() < 0.25:
                    keys[k] = self.opt_value(k, kernel)
        if r.random() < 0.15:   # any key at all, applicable or not
            k = r.choice(['kernel', 'gamma', 'degree', 'coef0', 'method', 'lambda',
                          'learning_rate', 'max_iter', 'tol', 'standardize',
                          'fit_intercept', 'cv', 'seed', 'test_fraction', 'deploy'])
            keys[k] = self.opt_value(k, kernel)
        if r.random() < 0.05:
            keys[r.choice(['Kernel', 'foo', '', 'gamma ', 'lambdas'])] = '1'
        body = ', '.join('"%s": %s' % (k, v) for k, v in keys.items())
        return "'{%s}'::jsonb" % body.replace("'", "''")

    # -- rows for the aggregates
    def rows(self, with_target):
        r = self.r
        n = r.choice([0, 1, 2, 3, 5, 8, 12, 20, 30])
        d = r.choice([1, 1, 2, 3, 4])
        shape = r.random()
        out = []
        for i in range(n):
            if shape < 0.5:
                f = [repr(round(r.gauss(0, 2), 3)) for _ in range(d)]
            elif shape < 0.6:   # duplicates and constant columns
                f = ['1'] * d if i % 2 else ['2'] + ['1'] * (d - 1)
            else:
                f = self.row(d)
            if r.random() < 0.04:    # mixed lengths
                f = f + ['1']
            fa = self.array_literal(f) if r.random() > 0.02 else 'NULL::float8[]'
            if with_target:
                t = self.number() if r.random() < 0.2 else repr(round(r.gauss(0, 5), 3))
                t = 'NULL' if t == 'NULL' else "'%s'" % t
                out.append('(%s, %s::float8)' % (fa, t))
            else:
                out.append('(%s)' % fa)
        return n, d, out

    def values(self, with_target):
        n, d, rows = self.rows(with_target)
        cols = 'f, t' if with_target else 'f'
        if n == 0:
            src = ('(SELECT NULL::float8[] AS f, NULL::float8 AS t WHERE false) v'
                   if with_target else '(SELECT NULL::float8[] AS f WHERE false) v')
        else:
            src = '(VALUES %s) v(%s)' % (', '.join(rows), cols)
        return d, src

    # -- models
    def mutated_model(self):
        """(bytea literal, corrupt): a valid model, mutated or not."""
        r = self.r
        which = r.randrange(len(self.models))
        buf = bytearray(self.models[which])
        what = 'model %d' % which
        p = r.random()
        if p < 0.15:
            pass
        elif p < 0.35:
            for _ in range(r.randint(1, 3)):
                i = r.randrange(len(buf))
                buf[i] ^= 1 << r.randrange(8)
                what += ', bit flip at byte %d' % i
        elif p < 0.45:
            buf = buf[:r.randrange(len(buf) + 1)]
            what += ', truncated to %d bytes' % len(buf)
        elif p < 0.52:
            k = r.choice([1, 4, 8, 64])
            buf += bytes(r.randrange(256) for _ in range(k))
            what += ', %d bytes appended' % k
        elif p < 0.80 and len(buf) >= header_size(buf):  # a header field set to an edge value
            fields = FIELDS_V1 if format_version(buf) == 1 else FIELDS_V2
            off = r.choice(list(fields))
            fmt = fields[off]
            if fmt == '<d':
                val = r.choice(DOUBLE_EDGES)
            else:
                bits = struct.calcsize(fmt) * 8
                val = r.choice(INT_EDGES) & ((1 << bits) - 1)
                if fmt[1].islower() and val >= 1 << (bits - 1):
                    val -= 1 << bits
            struct.pack_into(fmt, buf, off, val)
            what += ', header field at offset %d set to %r' % (off, val)
        else:           # a double of the payload
            hs = header_size(buf)
            if len(buf) >= hs + 12:
                k = r.randrange((len(buf) - hs - 4) // 8)
                val = r.choice(DOUBLE_EDGES)
                struct.pack_into('<d', buf, hs + 8 * k, val)
                what += ', payload double %d set to %r' % (k, val)
        corrupt = False
        if r.random() < 0.85:
            buf = fix_checksums(buf)
            what += ', checksums fixed up'
        else:
            corrupt = bytes(buf) != fix_checksums(buf)
        self.note = what
        return "'\\x%s'::bytea" % bytes(buf).hex(), corrupt

    # -- statements
    def statement(self):
        r = self.r
        self.finite = True
        self.note = None
        kind = r.choice(['parallel', 'eval', 'eval', 'matrix', 'check', 'train', 'train', 'train',
                         'train2', 'predict', 'predict', 'info', 'info',
                         'named_train', 'named_other', 'predict_name'])
        corrupt = False
        if kind == 'parallel':  # combine, serialize and deserialize run
            fn = 'kernel_train'
            sql = ('SELECT kernel_train(f, t, %s) FROM km_fuzz_rows WHERE g < %d'
                   % (self.options(), r.choice([1, 2, 10, 40])))
            return Stmt(fn, sql, True, train=True, setup=PARALLEL)
        if kind == 'eval':
            d = r.choice([0, 1, 2, 3])
            x, z = self.array(d), self.array(d if r.random() < 0.9 else d + 1)
            sql = 'SELECT kernel_eval(%s, %s, %s)' % (x, z, self.options(training=False))
            fn = 'kernel_eval'
        elif kind in ('matrix', 'check'):
            fn = 'kernel_' + kind
            d, src = self.values(False)
            sql = 'SELECT %s(f, %s) FROM %s' % (fn, self.options(training=False), src)
        elif kind in ('train', 'train2'):
            fn = 'kernel_train'
            d, src = self.values(True)
            if kind == 'train2':
                sql = 'SELECT kernel_train(f, t) FROM %s' % src
            else:
                sql = 'SELECT kernel_train(f, t, %s) FROM %s' % (self.options(), src)
            return Stmt(fn, sql, self.finite, train=True)
        elif kind in ('predict', 'info'):
            m, corrupt = self.mutated_model()
            if kind == 'predict':
                fn = 'kernel_predict'
                sql = 'SELECT kernel_predict(%s, %s)' % (m, self.array())
            else:
                fn = 'kernel_model_info'
                sql = 'SELECT kernel_model_info(%s)' % m
        elif kind == 'predict_name':
            fn = 'kernel_predict(name)'
            sql = 'SELECT kernel_predict(%s::text, %s)' % (self.model_name(), self.array())
        elif kind == 'named_train':
            fn = 'kernel_model_train'
            d, src = self.values(True)
            q = 'SELECT f, t FROM %s' % src
            sql = 'SELECT * FROM kernel_model_train(%s, %s, %s)' % (
                self.model_name(), quote(q), self.options(catalog=True))
        else:
            name = self.model_name()
            version = r.choice(['1', '2', '0', '-1', '2147483647', 'NULL'])
            fn = r.choice(['kernel_model_retrain', 'kernel_model_deploy',
                           'kernel_model_drop', 'kernel_model_get'])
            if fn == 'kernel_model_retrain':
                sql = 'SELECT * FROM kernel_model_retrain(%s)' % name
            elif fn == 'kernel_model_deploy':
                sql = 'SELECT kernel_model_deploy(%s, %s)' % (name, version)
            elif fn == 'kernel_model_drop':
                sql = 'SELECT kernel_model_drop(%s, %s)' % (name, version)
            else:
                sql = 'SELECT kernel_model_get(%s)' % name
        return Stmt(fn, sql, self.finite, corrupt, note=self.note)

    def model_name(self):
        return self.r.choice(["'fuzz_a'", "'fuzz_a'", "'fuzz_b'", "'none'", "''",
                              'NULL', "'%s'" % ('x' * 100)])


def quote(s):
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------- checks
def nonfinite(v):
    """Path to a NaN or Infinity inside a result value, or None."""
    if isinstance(v, float):
        return None if math.isfinite(v) else repr(v)
    if isinstance(v, (list, tuple)):
        for i, e in enumerate(v):
            p = nonfinite(e)
            if p:
                return '[%d]%s' % (i, p)
    if isinstance(v, dict):
        for k, e in v.items():
            p = nonfinite(e)
            if p:
                return '.%s%s' % (k, p)
    return None


def normalize(msg):
    """Message without its numbers and quoted values, to group findings."""
    msg = (msg or '').split('\n')[0]
    msg = re.sub(r'"[^"]*"', '"?"', msg)
    return re.sub(r'[-+]?\d[\d.e+-]*', 'N', msg)


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.findings = {}      # key -> (sql, what)
        self.passed = 0
        self.conn = None
        self.outcomes = {}      # (fn, 'ok' or SQLSTATE) -> count

    def connect(self, wait=30.0):
        deadline = time.time() + wait
        while True:
            try:
                self.conn = psycopg2.connect('')
                return
            except psycopg2.OperationalError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)

    def setup(self):
        self.connect()
        self.conn.autocommit = True
        cur = self.conn.cursor()
        cur.execute('CREATE EXTENSION IF NOT EXISTS kernel_ml')
        # what an earlier run left (kernel_model_drop(name) drops every
        # version; (name, NULL) is an error since 0.3.0)
        cur.execute("SELECT kernel_model_drop(name) FROM "
                    "(SELECT DISTINCT name FROM kernel_models WHERE name LIKE 'fuzz%') s")
        models = []
        base = "(SELECT ARRAY[i::float8, sin(i)] AS f, cos(i) * 3 AS t FROM generate_series(1, 12) i) s"
        for opts in ['{}', '{"kernel": "linear"}', '{"kernel": "poly", "degree": 2}',
                     '{"kernel": "rbf", "lambda": [0.1, 1], "cv": "loo"}',
                     '{"kernel": "sigmoid", "gamma": 0.1, "method": "lms", "max_iter": 20}',
                     '{"kernel": "laplacian", "lambda": [0.1, 1], "cv": 3}',
                     '{"kernel": "polysum", "degree": 2, "standardize": false}',
                     '{"kernel": "cosine", "fit_intercept": false}']:
            cur.execute('SELECT kernel_train(f, t, %s) FROM ' + base, (opts,))
            models.append(bytes(cur.fetchone()[0]))
        cur.execute('DROP TABLE IF EXISTS km_fuzz_rows')
        cur.execute('CREATE TABLE km_fuzz_rows AS SELECT ARRAY[sin(i), cos(3 * i), i % 7]::float8[] AS f, '
                    'sin(i) * 2 + (i % 7) AS t, i % 500 AS g FROM generate_series(1, 20000) i')
        cur.execute('ANALYZE km_fuzz_rows')
        cur.execute("SELECT * FROM kernel_model_train('fuzz_a', "
                    "'SELECT ARRAY[i::float8] AS f, i * 2.0 AS t FROM generate_series(1, 20) i')")
        self.conn.autocommit = False
        return models

    def tally(self, stmt, outcome):
        k = (stmt.fn, outcome)
        self.outcomes[k] = self.outcomes.get(k, 0) + 1

    def record(self, stmt, what, key):
        key = (stmt.fn,) + key
        old = self.findings.get(key)
        sql = ''.join(s + '; ' for s in stmt.setup) + stmt.sql
        if stmt.note:
            sql = '-- %s\n  %s' % (stmt.note, sql)
        if old is None or len(sql) < len(old[0]):
            self.findings[key] = (sql, what)

    def execute(self, stmt):
        cur = self.conn.cursor()
        cur.execute('SET LOCAL statement_timeout = %d' % TIMEOUT_MS)
        for s in stmt.setup:
            cur.execute(s)
        cur.execute(stmt.sql)
        rows = cur.fetchall() if cur.description else []
        types = [c.type_code for c in cur.description] if cur.description else []
        self.conn.commit()
        return rows, types

    def run_one(self, stmt):
        """Run stmt; record findings; return the rows or None on error."""
        t0 = time.time()
        try:
            rows, types = self.execute(stmt)
        except psycopg2.Error as e:
            elapsed = time.time() - t0
            code = e.pgcode or ''
            self.tally(stmt, code or 'lost')
            if self.conn.closed or code.startswith('57P') or code.startswith('08') or \
                    (code == '' and isinstance(e, psycopg2.OperationalError)):
                self.record(stmt, 'backend died: %s %s' % (code, str(e).strip()[:200]),
                            ('crash',))
                try:
                    self.conn.close()
                except psycopg2.Error:
                    pass
                time.sleep(1)
                self.connect()
                return None
            self.conn.rollback()
            msg = e.diag.message_primary or str(e)
            if code == 'XX000' or (code == 'XX001' and not stmt.corrupt):
                self.record(stmt, '%s %s' % (code, msg), (code, normalize(msg)))
            elif code == '57014' and elapsed > TIMEOUT_MS / 1000.0 + LATE_CANCEL_S:
                self.record(stmt, 'cancelled %.1f s after its %d ms timeout' %
                            (elapsed - TIMEOUT_MS / 1000.0, TIMEOUT_MS), ('late cancel',))
            elif stmt.finite and code == '22P02' and 'json' in msg:
                # a function printed NaN or Infinity into JSON text
                self.record(stmt, '%s %s' % (code, msg), (code, normalize(msg)))
            else:
                self.passed += 1
            return None
        self.tally(stmt, 'ok')
        if stmt.finite:
            for row in rows:
                for v, t in zip(row, types):
                    if isinstance(v, str) and t == 3802:    # jsonb as text
                        p = jsonb_nonfinite(v)
                    else:
                        p = nonfinite(v)
                    if p:
                        self.record(stmt, 'non-finite result %s' % p, ('nonfinite',))
                        return rows
        self.passed += 1
        return rows

    def read_back(self, stmt, rows):
        """A model kernel_train returned must pass its own reader."""
        if not rows or rows[0][0] is None:
            return
        m = "'\\x%s'::bytea" % bytes(rows[0][0]).hex()
        cur = self.conn.cursor()
        try:
            cur.execute('SET LOCAL statement_timeout = %d' % TIMEOUT_MS)
            cur.execute("SELECT (kernel_model_info(%s)->>'n_features')::int" % m)
            d = cur.fetchone()[0]
            cur.execute('SELECT kernel_predict(%s, array_fill(0.5::float8, ARRAY[%d]))'
                        % (m, d or 1))
            self.conn.commit()
        except psycopg2.Error as e:
            self.conn.rollback()
            if e.pgcode in ('22P03', 'XX001', 'XX000'):
                self.record(stmt, 'kernel_train returned a model its reader rejects: %s %s'
                            % (e.pgcode, e.diag.message_primary), ('unreadable', e.pgcode))

    def run(self):
        rnd = random.Random(self.args.seed)
        models = self.setup()
        gen = Gen(rnd, models)
        t_end = time.time() + self.args.seconds
        n = 0
        while n < self.args.statements and time.time() < t_end:
            stmt = gen.statement()
            n += 1
            rows = self.run_one(stmt)
            if stmt.train and rows is not None:
                self.read_back(stmt, rows)
        try:
            self.conn.rollback()
            self.conn.autocommit = True
            self.conn.cursor().execute(
                "SELECT kernel_model_drop(name) FROM "
                "(SELECT DISTINCT name FROM kernel_models WHERE name LIKE 'fuzz%') s")
            self.conn.cursor().execute('DROP TABLE IF EXISTS km_fuzz_rows')
        except psycopg2.Error:
            pass
        return n


def jsonb_nonfinite(text):
    """NaN or Infinity as a JSON number token (outside strings)."""
    import json
    try:
        return nonfinite(json.loads(text))
    except ValueError:
        return 'unparsable jsonb %r' % text[:80]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--statements', type=int, default=3000)
    ap.add_argument('--seconds', type=float, default=90)
    args = ap.parse_args()
    # jsonb comes back as text so that NaN cannot hide in a parsed float
    psycopg2.extensions.register_type(
        psycopg2.extensions.new_type((3802,), 'JSONB_TEXT', lambda v, c: v))
    f = Fuzzer(args)
    t0 = time.time()
    n = f.run()
    print('%d statements in %.0f s (seed %d)' % (n, time.time() - t0, args.seed))
    fns = sorted({fn for fn, _ in f.outcomes})
    for fn in fns:
        print('  %-22s %s' % (fn, ', '.join(
            '%s %d' % (o, c) for (g, o), c in sorted(f.outcomes.items()) if g == fn)))
    for i, ((fn, *key), (sql, what)) in enumerate(sorted(f.findings.items()), 1):
        print('FINDING %d: %s: %s' % (i, fn, what))
        print('  ' + (sql if len(sql) < 4000 else sql[:4000] + ' ...'))
    print('%d passed, %d failed' % (f.passed, len(f.findings)))
    return 1 if f.findings else 0


if __name__ == '__main__':
    sys.exit(main())
