#!/usr/bin/python3
"""
Scoring by name against scoring with the bytea passed in (issue 5).

kernel_predict(name, features) looks the deployed model up once per
statement and keeps the decoded model in fn_extra, so scoring 100,000 rows
by name should cost about what scoring with the model bytea costs.  This
script creates 100,000 rows of d = 20 features from a fixed seed, trains a
named model on 2,000 of them (refitted on all 2,000), and times

  by name      SELECT sum(kernel_predict('name', f)) FROM t
  bytea        SELECT sum(kernel_predict((SELECT kernel_model_get('name')), f)) FROM t
  from table   SELECT sum(kernel_predict(k.model, f)) FROM t, kernel_models k
               WHERE k.name = 'name' AND k.deployed        (a TOAST pointer)

The bytea is computed once, by an InitPlan.  Written as a subquery in FROM,
(SELECT kernel_model_get('name') AS m) s, the planner pulls the subquery up
and calls the STABLE kernel_model_get once per row, which costs a lookup and
a 330 kB copy per row: about ten times slower than either line above.

Each query runs interleaved run by run, median of RUNS runs, serially
(max_parallel_workers_per_gather = 0) and with a parallel plan of 2 workers
(forced: parallel_setup_cost = 0), JIT off.  Prints
the ratio by name / bytea; the target is <= 1.2.

The same for a named classifier (issue 13): a logistic model on the same
2,000 rows with the label "pos" / "neg" (y > 0), scored by
kernel_predict_class(name, f) and kernel_predict_proba(name, f) against
their bytea forms on (SELECT kernel_model_get(name)); the class counts and
probability sums must agree.

Run against any cluster with kernel_ml installed, from the libpq
environment (PGHOST, PGPORT, PGUSER, PGDATABASE, ...), with Debian's Python:
    /usr/bin/python3 test/bench/by_name.py
Environment: KM_BENCH_RUNS (default 5).
"""

import io
import os
import statistics
import sys
import time

import numpy as np
import psycopg2

ROWS = 100_000
D = 20
N_TRAIN = 2000
SEED = 20240605
RUNS = int(os.environ.get("KM_BENCH_RUNS", "5"))
TABLE = "km_bench_by_name"
MODEL = "km_bench_by_name"

QUERIES = [
    ("bytea", f"SELECT sum(kernel_predict((SELECT kernel_model_get('{MODEL}')), t.f)) "
              f"FROM {TABLE} t"),
    ("from table", f"SELECT sum(kernel_predict(k.model, t.f)) FROM {TABLE} t, kernel_models k "
                   f"WHERE k.name = '{MODEL}' AND k.deployed"),
    ("by name", f"SELECT sum(kernel_predict('{MODEL}', t.f)) FROM {TABLE} t"),
]


CLASS_MODEL = "km_bench_by_name_class"
CLASS_QUERIES = [
    ("class bytea", f"SELECT count(*) FILTER (WHERE kernel_predict_class((SELECT kernel_model_get('{CLASS_MODEL}')), t.f) = 'pos') "
                    f"FROM {TABLE} t"),
    ("class by name", f"SELECT count(*) FILTER (WHERE kernel_predict_class('{CLASS_MODEL}', t.f) = 'pos') "
                      f"FROM {TABLE} t"),
    ("proba bytea", f"SELECT sum((kernel_predict_proba((SELECT kernel_model_get('{CLASS_MODEL}')), t.f)->>'pos')::float8) "
                    f"FROM {TABLE} t"),
    ("proba by name", f"SELECT sum((kernel_predict_proba('{CLASS_MODEL}', t.f)->>'pos')::float8) "
                      f"FROM {TABLE} t"),
]


def load(cur):
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(ROWS, D))
    w = rng.normal(size=D)
    y = np.sin(X @ w / np.sqrt(D)) + 0.1 * rng.normal(size=ROWS)
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
    cur.execute(f"CREATE TABLE {TABLE} (id int, f float8[], y float8)")
    buf = io.StringIO()
    for i in range(ROWS):
        buf.write("%d\t{%s}\t%r\n" % (i + 1, ",".join(repr(float(v)) for v in X[i]), float(y[i])))
    buf.seek(0)
    cur.copy_expert(f"COPY {TABLE} FROM STDIN", buf)
    cur.execute(f"ANALYZE {TABLE}")


def timed(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    value = cur.fetchone()[0]
    return time.perf_counter() - start, value


def measure(cur, queries, base_of):
    """Median seconds per query, serial and with 2 workers; results must equal their base's."""
    results = {}
    for workers in (0, 2):
        # kernel_predict costs far more than its declared cost of 1, so the
        # planner would not choose a parallel plan on its own
        cur.execute(f"SET max_parallel_workers_per_gather = {workers}")
        cur.execute(f"SET parallel_setup_cost = {0 if workers else 1000}")
        cur.execute(f"SET parallel_tuple_cost = {0 if workers else 0.1}")
        for name, sql in queries:
            cur.execute("EXPLAIN " + sql)
            plan = " ".join(r[0] for r in cur.fetchall())
            if ("Gather" in plan) != (workers > 0):
                sys.exit(f"unexpected plan for {name} with {workers} workers: {plan}")
        times = {name: [] for name, _ in queries}
        sums = {}
        for name, sql in queries:          # warm-up: caches, TOAST pages
            timed(cur, sql)
        for _ in range(RUNS):
            for name, sql in queries:
                t, v = timed(cur, sql)
                times[name].append(t)
                sums[name] = v
        for name in sums:
            base = sums[base_of[name]]
            if abs(sums[name] - base) > 1e-6 * max(1.0, abs(base)):
                sys.exit(f"sums differ: {name} {sums[name]!r} vs {base_of[name]} {base!r}")
        results[workers] = {name: statistics.median(ts) for name, ts in times.items()}
    return results


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    cur.execute("SET jit = off")
    load(cur)
    cur.execute(f"SELECT count(*) FROM kernel_models WHERE name = '{MODEL}'")
    if cur.fetchone()[0] > 0:
        cur.execute(f"SELECT kernel_model_drop('{MODEL}')")
    cur.execute(f"SELECT version, deployed FROM kernel_model_train('{MODEL}', "
                f"'SELECT f, y FROM {TABLE} WHERE id <= {N_TRAIN}', "
                "'{\"lambda\": 0.1, \"refit\": true, \"seed\": 1}')")
    cur.execute(f"SELECT n_train, n_features, octet_length(model) FROM kernel_models "
                f"WHERE name = '{MODEL}' AND deployed")
    n, d, size = cur.fetchone()
    print(f"model {MODEL}: n_train = {n}, d = {d}, {size} bytes; scoring {ROWS:,} rows, "
          f"median of {RUNS} runs, interleaved")

    results = measure(cur, QUERIES, {"bytea": "bytea", "from table": "bytea", "by name": "bytea"})
    print()
    print(f"{'query':<12} {'workers':>7} {'median s':>9} {'ratio to bytea':>15}")
    worst = 0.0
    for workers, med in results.items():
        for name, _ in QUERIES:
            ratio = med[name] / med["bytea"]
            if name == "by name":
                worst = max(worst, ratio)
            print(f"{name:<12} {workers:>7} {med[name]:>9.3f} {ratio:>15.3f}")
    print()
    print(f"by-name / bytea ratio: {results[0]['by name'] / results[0]['bytea']:.3f} serial, "
          f"{results[2]['by name'] / results[2]['bytea']:.3f} with 2 workers (target <= 1.2): "
          + ("PASS" if worst <= 1.2 else "FAIL"))

    cur.execute(f"SELECT count(*) FROM kernel_models WHERE name = '{CLASS_MODEL}'")
    if cur.fetchone()[0] > 0:
        cur.execute(f"SELECT kernel_model_drop('{CLASS_MODEL}')")
    cur.execute(f"SELECT version FROM kernel_model_train('{CLASS_MODEL}', "
                f"'SELECT f, CASE WHEN y > 0 THEN ''pos'' ELSE ''neg'' END FROM {TABLE} WHERE id <= {N_TRAIN}', "
                "'{\"method\": \"logistic\", \"lambda\": 0.01, \"refit\": true, \"seed\": 1}')")
    cres = measure(cur, CLASS_QUERIES, {"class bytea": "class bytea", "class by name": "class bytea",
                                        "proba bytea": "proba bytea", "proba by name": "proba bytea"})
    print()
    print(f"classifier {CLASS_MODEL} (logistic, {N_TRAIN} rows)")
    print(f"{'query':<14} {'workers':>7} {'median s':>9} {'ratio to bytea':>15}")
    cworst = 0.0
    for workers, med in cres.items():
        for name, _ in CLASS_QUERIES:
            base = name.split()[0] + " bytea"
            ratio = med[name] / med[base]
            if name.endswith("by name"):
                cworst = max(cworst, ratio)
            print(f"{name:<14} {workers:>7} {med[name]:>9.3f} {ratio:>15.3f}")
    print()
    print(f"by-name / bytea ratio for classifiers: class {cres[0]['class by name'] / cres[0]['class bytea']:.3f}, "
          f"proba {cres[0]['proba by name'] / cres[0]['proba bytea']:.3f} serial; worst {cworst:.3f} "
          "(target <= 1.2): " + ("PASS" if cworst <= 1.2 else "FAIL"))
    worst = max(worst, cworst)

    cur.execute(f"SELECT kernel_model_drop('{MODEL}')")
    cur.execute(f"SELECT kernel_model_drop('{CLASS_MODEL}')")
    cur.execute(f"DROP TABLE {TABLE}")
    conn.close()
    return 0 if worst <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())
