#!/usr/bin/python3
"""
Scoring with a per-group model, rows sorted by group against interleaved
(issue 22 section 4).

SELECT kernel_predict(m.model, t.f) FROM t JOIN models m USING (grp) keeps
decoded models in fn_extra.  With a cache of one model, rows that are not
sorted by group decode a model on almost every row; with a cache of several
(keyed by the TOAST pointer) they should cost about what sorted rows cost.

This script creates GROUPS groups of ROWS_PER_GROUP rows of d = D features
from a fixed seed, trains one model per group and kind (stored in a table,
so each model is a TOAST pointer):

  exact    ridge on N_EXACT rows of the group (every 10th)
  nystrom  ridge with "approximation": "nystrom", COMPONENTS centres, on all
           rows of the group

and scores every row with its group's model, the rows read from two tables
of the same rows:

  sorted       rows stored in (grp, id) order
  interleaved  rows stored in hash order (hashint4(id)): consecutive rows
               almost always belong to different groups

The plan is fixed to a hash join with the models table hashed and the rows
table scanned in storage order (so the order the scorer sees is the order
stored), serially, JIT off.  The two queries alternate run by run; median
of RUNS runs each.  Prints the ratio interleaved / sorted per kind; the
target is <= 1.3.  The sums of the predictions of both orders must agree.

Run against any cluster with kernel_ml installed, from the libpq
environment (PGHOST, PGPORT, PGUSER, PGDATABASE, ...), with Debian's Python:
    /usr/bin/python3 test/bench/group_scoring.py
Environment: KM_BENCH_RUNS (default 5), KM_BENCH_QUICK=1 (10 groups).
"""

import os
import statistics
import sys
import time

import numpy as np
import psycopg2

import kmbench

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
GROUPS = 10 if QUICK else 50
ROWS_PER_GROUP = 2000
D = 5
N_EXACT = ROWS_PER_GROUP // 10
COMPONENTS = 100
SEED = 20240622
RUNS = 1 if QUICK else int(os.environ.get("KM_BENCH_RUNS", "5"))
TARGET = 1.3
TABLE = "km_bench_gs"
MODELS = "km_bench_gs_models"

KINDS = [
    ("exact", f"'{{\"lambda\": 0.1}}'", f"WHERE id % 10 = 0"),
    ("nystrom", f"'{{\"lambda\": 0.1, \"approximation\": \"nystrom\", \"components\": {COMPONENTS}}}'", ""),
]


def load(cur):
    rng = np.random.default_rng(SEED)
    n = GROUPS * ROWS_PER_GROUP
    X = rng.normal(size=(n, D))
    grp = np.arange(n) // ROWS_PER_GROUP
    W = rng.normal(size=(GROUPS, D))
    y = np.sin(np.einsum("ij,ij->i", X, W[grp]) / np.sqrt(D)) + 0.1 * rng.normal(size=n)
    kmbench.copy_table(cur, TABLE, X, y)
    cur.execute(f"ALTER TABLE {TABLE} ADD COLUMN grp int")
    cur.execute(f"UPDATE {TABLE} SET grp = (id - 1) / {ROWS_PER_GROUP}")
    for order, key in (("sorted", "grp, id"), ("interleaved", "hashint4(id), id")):
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}_{order}")
        cur.execute(f"CREATE TABLE {TABLE}_{order} AS SELECT id, grp, f FROM {TABLE} ORDER BY {key}")
        cur.execute(f"VACUUM (FREEZE, ANALYZE) {TABLE}_{order}")
    cur.execute(f"DROP TABLE IF EXISTS {MODELS}")
    cur.execute(f"CREATE TABLE {MODELS} (kind text, grp int, model bytea)")
    for kind, opts, where in KINDS:
        cur.execute(f"INSERT INTO {MODELS} SELECT '{kind}', grp, kernel_train(f, y, {opts}) "
                    f"FROM {TABLE} {where} GROUP BY grp")
    cur.execute(f"VACUUM (FREEZE, ANALYZE) {MODELS}")


def query(kind, order):
    return (f"SELECT sum(kernel_predict(m.model, t.f)) FROM {TABLE}_{order} t "
            f"JOIN {MODELS} m ON m.grp = t.grp AND m.kind = '{kind}'")


def check_plan(cur, sql):
    cur.execute("EXPLAIN (COSTS OFF) " + sql)
    plan = [r[0] for r in cur.fetchall()]
    text = "\n".join(plan)
    # the rows table is the outer (probe) side: the first scan under the join
    scans = [line.strip() for line in plan if "Seq Scan" in line]
    if "Hash Join" not in text or "Gather" in text or not scans or TABLE + "_" not in scans[0]:
        sys.exit("unexpected plan:\n" + text)


def timed(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    value = cur.fetchone()[0]
    return time.perf_counter() - start, value


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    for s in ("jit = off", "max_parallel_workers_per_gather = 0",
              "enable_mergejoin = off", "enable_nestloop = off"):
        cur.execute("SET " + s)
    load(cur)
    cur.execute(f"SELECT kind, count(*), avg(octet_length(model))::int, "
                f"avg(pg_column_size(model))::int FROM {MODELS} GROUP BY kind ORDER BY kind")
    sizes = {k: (c, b, s) for k, c, b, s in cur.fetchall()}
    print(f"per-group scoring: {GROUPS} groups x {ROWS_PER_GROUP:,} rows, d = {D}; "
          f"median of {RUNS} runs, sorted and interleaved alternating")
    for kind, _, _ in KINDS:
        c, b, s = sizes[kind]
        print(f"  {kind:<8} {c} models of {b:,} bytes ({s:,} stored)")

    print()
    print(f"{'model':<8} {'sorted s':>9} {'interleaved s':>14} {'ratio':>7}")
    worst = 0.0
    for kind, _, _ in KINDS:
        qs = {order: query(kind, order) for order in ("sorted", "interleaved")}
        for sql in qs.values():
            check_plan(cur, sql)
            timed(cur, sql)                  # warm-up: buffers, TOAST pages
        times = {order: [] for order in qs}
        sums = {}
        for _ in range(RUNS):
            for order, sql in qs.items():
                t, v = timed(cur, sql)
                times[order].append(t)
                sums[order] = v
        if abs(sums["sorted"] - sums["interleaved"]) > 1e-9 * max(1.0, abs(sums["sorted"])):
            sys.exit(f"{kind}: sums differ: {sums['sorted']!r} vs {sums['interleaved']!r}")
        med = {order: statistics.median(ts) for order, ts in times.items()}
        ratio = med["interleaved"] / med["sorted"]
        worst = max(worst, ratio)
        print(f"{kind:<8} {med['sorted']:>9.3f} {med['interleaved']:>14.3f} {ratio:>7.2f}")
    print()
    print(f"interleaved / sorted, worst: {worst:.2f} (target <= {TARGET}): "
          + ("PASS" if worst <= TARGET else "FAIL"))

    for t in (TABLE, TABLE + "_sorted", TABLE + "_interleaved", MODELS):
        cur.execute(f"DROP TABLE {t}")
    conn.close()
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
