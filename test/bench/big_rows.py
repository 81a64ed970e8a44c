"""
Large synthetic regression sets for the issue 31 scale benchmarks
(scale_1m.py, cg_10m.py): d = 20 features uniform on [0, 1], a smooth
target (Friedman #1's terms on the first five features, a sine of the other
fifteen's mean, as test/bench/cg_scale.sh) plus N(0, 0.1^2) noise, drawn in
chunks by NumPy from a fixed seed and loaded by binary COPY (each row's
bytes built by a structured array, so 10M rows load in minutes, not hours).
"""

import numpy as np

D = 20
CHUNK = 250_000


def target(X, rng):
    return (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2
            + 10 * X[:, 3] + 5 * X[:, 4]
            + 2 * np.sin(2 * np.pi * X[:, 5:].mean(axis=1))
            + 0.1 * rng.standard_normal(X.shape[0]))


def chunks(n, seed):
    """(X, y) chunks of at most CHUNK rows, n rows in all, the same for a seed."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n:
        k = min(CHUNK, n - done)
        X = rng.random((k, D))
        yield X, target(X, rng)
        done += k


def rows(n, seed):
    X, y = zip(*chunks(n, seed))
    return np.vstack(X), np.concatenate(y)


def _copy_dtype(d):
    return np.dtype([("nf", ">i2"), ("alen", ">i4"), ("ndim", ">i4"), ("flags", ">i4"),
                     ("oid", ">u4"), ("dim", ">i4"), ("lb", ">i4"),
                     ("el", [("len", ">i4"), ("v", ">f8")], (d,)),
                     ("ylen", ">i4"), ("y", ">f8")])


def _binary(X, y):
    n, d = X.shape
    a = np.zeros(n, dtype=_copy_dtype(d))
    a["nf"] = 2
    a["alen"] = 20 + 12 * d
    a["ndim"] = 1
    a["oid"] = 701				# float8
    a["dim"] = d
    a["lb"] = 1
    a["el"]["len"] = 8
    a["el"]["v"] = X
    a["ylen"] = 8
    a["y"] = y
    return a.tobytes()


class _Stream:
    """A file-like reader over the COPY BINARY bytes of (X, y) chunks."""

    def __init__(self, parts):
        self.parts = iter(parts)
        self.buf = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
        self.done = False

    def read(self, size=-1):
        while not self.done and (size < 0 or len(self.buf) < size):
            try:
                X, y = next(self.parts)
                self.buf += _binary(X, y)
            except StopIteration:
                self.buf += b"\xff\xff"
                self.done = True
        if size < 0:
            size = len(self.buf)
        out, self.buf = self.buf[:size], self.buf[size:]
        return out

    readline = read


def load(cur, table, parts):
    """(Re)create table (f float8[], y float8) from (X, y) parts, frozen and analyzed."""
    cur.execute("DROP TABLE IF EXISTS %s" % table)
    cur.execute("CREATE TABLE %s (f float8[], y float8)" % table)
    cur.copy_expert("COPY %s (f, y) FROM STDIN (FORMAT binary)" % table, _Stream(parts),
                    size=1 << 20)
    cur.execute("VACUUM (FREEZE, ANALYZE) %s" % table)
