#!/usr/bin/env python3
"""Bounded SQL fuzzer for kernel_ml, run against a live server.

Generates statements that call every function and aggregate of the
extension with random valid and invalid arguments: arrays (empty, NULLs,
multi-dimensional, huge, tiny, negative zero, denormal, mixed lengths),
options objects (every key with valid, boundary and invalid values, unknown
keys, wrong types, non-objects), crafted models (models from kernel_train
mutated by bit flips, truncation, extension and field edits, most with both
CRC-32C checksums fixed up so the mutation reaches the field checks) and
small sets of rows for the aggregates, and the pass aggregate
_kernel_ml_pass(features, target or label, descriptor) that any role can
call: descriptors built around real pass points (test/fuzz/pass_seeds, the
libFuzzer target's seeds) with their key recomputed, their rules, header
fields and points mutated, truncated headers and random bytes, and crafted
pass states handed to its combine and final functions.

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
import os
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


# Layouts in src/core/model/model.h: format 1 (0.1.0) has a 144-byte header with its
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


# Header fields of format 2: offset -> struct format (src/core/model/model.h).
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

# ---------------------------------------------------------------- pass descriptors
# PostgreSQL's hash_bytes_extended (src/common/hashfn.c), which keys a pass
# descriptor (src/pg/pass_desc.c): Bob Jenkins' lookup3, little-endian words.
_M32 = 0xFFFFFFFF


def _rot(x, k):
    return ((x << k) | (x >> (32 - k))) & _M32


def _mix(a, b, c):
    a = (a - c) & _M32; a ^= _rot(c, 4); c = (c + b) & _M32
    b = (b - a) & _M32; b ^= _rot(a, 6); a = (a + c) & _M32
    c = (c - b) & _M32; c ^= _rot(b, 8); b = (b + a) & _M32
    a = (a - c) & _M32; a ^= _rot(c, 16); c = (c + b) & _M32
    b = (b - a) & _M32; b ^= _rot(a, 19); a = (a + c) & _M32
    c = (c - b) & _M32; c ^= _rot(b, 4); b = (b + a) & _M32
    return a, b, c


def _final(a, b, c):
    c ^= b; c = (c - _rot(b, 14)) & _M32
    a ^= c; a = (a - _rot(c, 11)) & _M32
    b ^= a; b = (b - _rot(a, 25)) & _M32
    c ^= b; c = (c - _rot(b, 16)) & _M32
    a ^= c; a = (a - _rot(c, 4)) & _M32
    b ^= a; b = (b - _rot(a, 14)) & _M32
    c ^= b; c = (c - _rot(b, 24)) & _M32
    return a, b, c


def hash_bytes_extended(k, seed):
    n = len(k)
    a = b = c = (0x9e3779b9 + n + 3923095) & _M32
    if seed:
        a = (a + (seed >> 32)) & _M32
        b = (b + (seed & _M32)) & _M32
        a, b, c = _mix(a, b, c)
    i = 0
    while n - i >= 12:
        a = (a + int.from_bytes(k[i:i + 4], 'little')) & _M32
        b = (b + int.from_bytes(k[i + 4:i + 8], 'little')) & _M32
        c = (c + int.from_bytes(k[i + 8:i + 12], 'little')) & _M32
        a, b, c = _mix(a, b, c)
        i += 12
    rest = k[i:]
    if len(rest) >= 9:
        c = (c + (int.from_bytes(rest[8:], 'little') << 8)) & _M32
    if len(rest) >= 5:
        b = (b + int.from_bytes(rest[4:8], 'little')) & _M32
    if rest:
        a = (a + int.from_bytes(rest[0:4], 'little')) & _M32
    a, b, c = _final(a, b, c)
    return (b << 32) | c


# src/pg/pass_desc.h: PassDescHeader after its length word (92 bytes).
PASS_MAGIC = 0x44504d4b     # "KMPD"
PASS_KEY_SEED = 0x6b65726e656c6d6c
PASS_HEADER = '<IHHIQQIiIIqdiiiIQQ'
PASS_FIELDS = {4: '<H', 6: '<H', 8: '<I', 12: '<Q', 20: '<Q', 28: '<I', 32: '<i',
               36: '<I', 40: '<I', 44: '<q', 52: '<d', 60: '<i', 64: '<i', 68: '<i',
               72: '<I', 76: '<Q', 84: '<Q'}
# PassStateHeader after its length word: magic, key, state_bytes, d, cap,
# nbuf, external, added, rows, then km_error's status.
STATE_FIELDS = {0: '<I', 4: '<Q', 12: '<Q', 20: '<I', 24: '<I', 28: '<I', 32: '<I',
                36: '<q', 44: '<q', 52: '<i'}
PASS_SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pass_seeds')
PASS_LABEL_KINDS = (7, 8, 9, 10)


def pass_rules(target, folds=3, side=0, fold=0, all_rows=1, seed=1, frac=0.0, d=3):
    return dict(target=target, folds=folds, side=side, fold=fold, all_rows=all_rows,
                seed=seed, frac=frac, d=d)


def pass_labels(target):
    if target == 1:
        return [(0, 0.0), (1, 1.0), (2, 2.0)]
    if target == 2:
        return [(0, b'a'), (1, b'b'), (2, b'c')]
    return []


def pass_descriptor(kind, point, state_bytes, chunk, rules, labels=None, key=True):
    """The bytes of a descriptor (bytea content), its key computed unless key is False."""
    if labels is None:
        labels = pass_labels(rules['target'])
    lab = b''
    for c, v in labels:
        if isinstance(v, bytes):
            lab += struct.pack('<II', c, len(v)) + v
        else:
            lab += struct.pack('<IId', c, 0, v)
    body = lab + point
    k = hash_bytes_extended(body, PASS_KEY_SEED) if key else 0
    head = struct.pack(PASS_HEADER, PASS_MAGIC, 1, kind, 0x01020304, k, state_bytes,
                       chunk, rules['d'], rules['target'], rules['all_rows'], rules['seed'],
                       rules['frac'], rules['folds'], rules['side'], rules['fold'],
                       len(labels), len(lab), len(point))
    return head + body


def rekey(desc):
    """desc with its key recomputed over the bytes after its header."""
    desc = bytearray(desc)
    if len(desc) >= 92:
        struct.pack_into('<Q', desc, 12, hash_bytes_extended(bytes(desc[92:]), PASS_KEY_SEED))
    return bytes(desc)


def read_pass_seeds():
    """(kind, point) of every seed, sorted by name; none when the directory is missing."""
    out = []
    if not os.path.isdir(PASS_SEEDS):
        return out
    for name in sorted(os.listdir(PASS_SEEDS)):
        with open(os.path.join(PASS_SEEDS, name), 'rb') as f:
            b = f.read()
        if len(b) >= 2:
            out.append((struct.unpack_from('<H', b)[0], b[2:]))
    return out


def bytea(b):
    return "'\\x%s'::bytea" % bytes(b).hex()


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
    def __init__(self, rnd, models, points=()):
        self.r = rnd
        self.models = models    # list of valid model bytes
        self.points = points    # real pass points: dicts (Fuzzer.setup_passes)
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
                         'named_train', 'named_other', 'predict_name', 'pass', 'pass'])
        corrupt = False
        if kind == 'pass':
            return self.pass_statement()
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

    # -- the pass aggregate
    def pass_rows(self, target, d):
        """VALUES of a few rows for the pass aggregate: the target as float8 or text."""
        r = self.r
        out = []
        for i in range(r.choice([0, 1, 2, 3, 5, 9])):
            dd = d if r.random() < 0.9 else r.choice([1, 2, 4])
            f = self.array_literal([repr(round(r.gauss(0, 2), 3)) for _ in range(dd)])
            if r.random() < 0.05:
                f = 'NULL::float8[]'
            if target == 2:
                t = quote(r.choice(['a', 'b', 'c', 'c', 'zz', '']))
            elif target == 1:
                t = r.choice(['0', '1', '2', '2', '-0', '7'])
            else:
                t = repr(round(r.gauss(0, 5), 3))
            if r.random() < 0.05:
                t = 'NULL'
            out.append('(%s, %s)' % (f, t))
        ttype = 'text' if target == 2 else 'float8'
        if not out:
            return '(SELECT NULL::float8[] AS f, NULL::%s AS t WHERE false) v' % ttype
        return '(SELECT f, t::%s AS t FROM (VALUES %s) v0(f, t)) v' % (ttype, ', '.join(out))

    def mutated_descriptor(self, pt):
        """A descriptor around pt's point: rules, header fields or point mutated."""
        r = self.r
        rules = dict(pt['rules'])
        what = 'pass kind %d (%s)' % (pt['kind'], pt['name'])
        point = bytearray(pt['point'])
        p = r.random()
        if p < 0.2:
            pass
        elif p < 0.45:      # rules a host could write: side, fold, split, folds
            rules['side'] = r.choice([0, 1, 2])
            rules['folds'] = r.choice([0, 2, 3, 5])
            rules['fold'] = r.choice([0, 1, 2, 4])
            rules['all_rows'] = r.choice([0, 1])
            rules['frac'] = r.choice([0.0, 0.2, 0.5, 1.0])
            rules['d'] = r.choice([3, 3, 1, 2, 4, 1 << 20])
            rules['target'] = r.choice([0, 1, 2, 3])
            what += ', rules %r' % rules
        elif p < 0.7 and point:   # the point's bytes
            for _ in range(r.randint(1, 3)):
                i = r.randrange(len(point))
                if r.random() < 0.5:
                    point[i] ^= 1 << r.randrange(8)
                else:
                    point[i] = r.choice([0, 1, 0x7f, 0x80, 0xff])
                what += ', point byte %d changed' % i
        elif p < 0.8:
            cut = r.randrange(len(point) + 1)
            point = point[:cut]
            what += ', point cut to %d bytes' % cut
        desc = bytearray(pass_descriptor(pt['kind'], bytes(point), pt['state_bytes'],
                                         pt['chunk'], rules))
        if p >= 0.8:        # a header field set to an edge value, the key recomputed
            off = r.choice(list(PASS_FIELDS))
            fmt = PASS_FIELDS[off]
            if fmt == '<d':
                val = r.choice(DOUBLE_EDGES)
            else:
                bits = struct.calcsize(fmt) * 8
                val = r.choice(INT_EDGES) & ((1 << bits) - 1)
                if fmt[1].islower() and val >= 1 << (bits - 1):
                    val -= 1 << bits
            struct.pack_into(fmt, desc, off, val)
            what += ', header field at %d set to %r' % (off, val)
            if r.random() < 0.9:
                desc = bytearray(rekey(desc))
        self.note = what
        return bytes(desc), rules

    def crafted_state(self, pt):
        """pt's real state with header fields or bytes changed."""
        r = self.r
        st = bytearray(pt['state'])
        what = []
        for _ in range(r.randint(1, 4)):
            if r.random() < 0.5:
                off = r.choice(list(STATE_FIELDS))
                fmt = STATE_FIELDS[off]
                bits = struct.calcsize(fmt) * 8
                val = r.choice(INT_EDGES + [0, 1, 2, 3]) & ((1 << bits) - 1)
                if fmt[1].islower() and val >= 1 << (bits - 1):
                    val -= 1 << bits
                if off + struct.calcsize(fmt) <= len(st):
                    struct.pack_into(fmt, st, off, val)
                    what.append('state field at %d set to %r' % (off, val))
            elif len(st) > 636:
                i = r.randrange(636, len(st))
                st[i] = r.randrange(256)
                what.append('state byte %d set' % i)
        return bytes(st), ', '.join(what)

    def pass_statement(self):
        r = self.r
        if not self.points or r.random() < 0.15:
            # random bytes, or a header cut short after the magic
            p = r.random()
            if p < 0.4:
                desc = bytes(r.randrange(256) for _ in range(r.choice([0, 1, 4, 40, 91, 92, 200])))
            else:
                desc = struct.pack('<I', PASS_MAGIC) + bytes(
                    r.randrange(256) for _ in range(r.randrange(120)))
                if r.random() < 0.5:
                    desc = rekey(desc)
            target = r.choice([0, 2])
            sql = 'SELECT length(_kernel_ml_pass(f, t, %s)) FROM %s' % (
                bytea(desc), self.pass_rows(target, 3))
            return Stmt('_kernel_ml_pass', sql, True, note='%d random bytes' % len(desc))
        pt = r.choice(self.points)
        kind = r.choice(['rows', 'rows', 'rows', 'parallel', 'combine', 'final'])
        if kind in ('combine', 'final'):
            # crafted states of the statement's own pass (the same descriptor: its key)
            st, what = self.crafted_state(pt)
            self.note = 'pass kind %d (%s), %s' % (pt['kind'], pt['name'], what)
            inner = '(SELECT _kernel_ml_pass(f, t, %s) AS s FROM %s)' % (
                bytea(pt['desc']), self.pass_rows(pt['rules']['target'], 3))
            # the statement's pass state first (its pass rebuilt in this process), then the crafted one
            src = '(SELECT s FROM %s q0 UNION ALL SELECT %s) q' % (inner, bytea(st))
            if kind == 'combine':
                sql = 'SELECT length(km_fuzz_pass_combine(s)) FROM ' + src
            else:
                sql = 'SELECT length(_kernel_ml_pass_final(s)) FROM ' + src
            return Stmt('_kernel_ml_pass(state)', sql, True, note=self.note)
        desc, rules = self.mutated_descriptor(pt)
        if kind == 'parallel':
            if rules['target'] in (1, 2):
                # the label as its class's value or text, as the host writes it
                t = 'floor(abs(t))::int % 3' if rules['target'] == 1 else \
                    "(ARRAY['a','b','c'])[1 + floor(abs(t))::int % 3]"
                t = ('(%s)::float8' if rules['target'] == 1 else '%s') % t
                src = '(SELECT f, %s AS t, g FROM km_fuzz_rows) v' % t
            else:
                src = 'km_fuzz_rows'
            sql = 'SELECT length(_kernel_ml_pass(f, t, %s)) FROM %s WHERE g < %d' % (
                bytea(desc), src, r.choice([1, 10, 40]))
            return Stmt('_kernel_ml_pass', sql, True, setup=PARALLEL, note=self.note)
        sql = 'SELECT length(_kernel_ml_pass(f, t, %s)) FROM %s' % (
            bytea(desc), self.pass_rows(rules['target'], rules['d'] if rules['d'] < 16 else 3))
        return Stmt('_kernel_ml_pass', sql, True, note=self.note)

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
        self.points = []        # real pass points (setup_passes)

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
        cur.execute('DROP AGGREGATE IF EXISTS km_fuzz_pass_combine(bytea)')
        cur.execute('CREATE AGGREGATE km_fuzz_pass_combine(bytea) '
                    '(SFUNC = _kernel_ml_pass_combine, STYPE = bytea)')
        self.points = self.setup_passes(cur)
        self.conn.autocommit = False
        return models

    def setup_passes(self, cur):
        """The seeds' points with the state size and chunk their passes have
        here (read from the error a descriptor without them raises), a
        descriptor of fixed rules and a real state of it."""
        points = []
        for i, (kind, point) in enumerate(read_pass_seeds()):
            target = 2 if kind in PASS_LABEL_KINDS else 0
            rules = pass_rules(target)
            rows = ("(SELECT ARRAY[0.5, -1, 2]::float8[] AS f, %s AS t "
                    "UNION ALL SELECT ARRAY[1, 0.25, -0.5]::float8[], %s) v" %
                    (("'a'::text", "'c'::text") if target == 2 else ('1.5::float8', '-2::float8')))
            try:
                cur.execute('SELECT _kernel_ml_pass(f, t, %s) FROM %s' % (
                    bytea(pass_descriptor(kind, point, 0, 0, rules)), rows))
                continue        # a pass of no state: nothing to learn
            except psycopg2.Error as e:
                m = re.search(r'has a state of (\d+) bytes and chunks of (\d+) rows',
                              e.diag.message_detail or '')
                if not m:
                    continue
                sb, chunk = int(m.group(1)), int(m.group(2))
            desc = pass_descriptor(kind, point, sb, chunk, rules)
            try:
                cur.execute('SELECT _kernel_ml_pass(f, t, %s) FROM %s' % (bytea(desc), rows))
                state = bytes(cur.fetchone()[0])
            except psycopg2.Error:
                continue
            points.append(dict(kind=kind, point=point, state_bytes=sb, chunk=chunk,
                               rules=rules, desc=desc, state=state, name='seed %d' % i))
        return points

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
        gen = Gen(rnd, models, self.points)
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
            self.conn.cursor().execute('DROP AGGREGATE IF EXISTS km_fuzz_pass_combine(bytea)')
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
    print('%d statements in %.0f s (seed %d), %d pass points' % (
        n, time.time() - t0, args.seed, len(f.points)))
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
