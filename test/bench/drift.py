#!/usr/bin/python3
"""
The kernel drift test (issue 32, item 4): time, size and power.

Run with Debian's Python against a database where CREATE EXTENSION kernel_ml
has been done (libpq environment: PGHOST, PGPORT, ...), or through
`make bench` (test/bench/run.sh):

    /usr/bin/python3 test/bench/drift.py

1. Time (SQL): N rows a side (default 1,000,000), d = 20, standard normal
   rows; a named nystrom model with m = 1000 centres trained on one table;
   kernel_model_drift over the other (shifted by 0.1 sd) and over the
   training query itself (the same pass as the capture of the training side
   at training time).  Target: <= 10 s on 2 cores for the test.
2. Agreement (SQL vs NumPy): on the first seeds of 3, the statistic of
   kernel_model_drift equals the NumPy reimplementation (the definition of
   README "Drift") on the same rows within 1e-8.
3. Size and power (NumPy, the same statistic): 200 seeds of 100,000 rows a
   side, d = 20, the rows standardized by the training side's mean and
   standard deviation, J = 10 locations every (n / 10)-th training row
   (as a model's centres: rows drawn from the training rows), rbf with
   gamma 1 / d (the default): the rejection rate at alpha 0.01 with no shift
   (target within [0.005, 0.02]) and with a 0.1 sd mean shift in every
   coordinate and in one coordinate (target >= 0.9 for the former).

KM_BENCH_QUICK=1: 200,000 rows a side in 1., 50 seeds of 20,000 rows in 3.
"""

import io
import json
import os
import sys
import time

import numpy as np
import psycopg2
from scipy import stats

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
N_SQL = 200_000 if QUICK else 1_000_000
SEEDS = 50 if QUICK else 200
N_SIM = 20_000 if QUICK else 100_000
D = 20
J = 10


def statistic(Z1, Z2):
    delta = Z1.mean(0) - Z2.mean(0)
    C = np.cov(Z1, rowvar=False) / len(Z1) + np.cov(Z2, rowvar=False) / len(Z2)
    w, U = np.linalg.eigh(C)
    keep = w > 1e-10 * w.max()
    t = float(((U[:, keep].T @ delta) ** 2 / w[keep]).sum())
    return t, float(stats.chi2.sf(t, int(keep.sum())))


def rbf(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def numpy_test(Xtr, Xnew, V, mean, scale, gamma):
    f = lambda X: rbf((X - mean) / scale, V, gamma)
    return statistic(f(Xtr), f(Xnew))


def copy_table(cur, table, X):
    cur.execute("DROP TABLE IF EXISTS %s" % table)
    cur.execute("CREATE UNLOGGED TABLE %s (f float8[], y float8)" % table)
    step = 100_000
    for s in range(0, len(X), step):
        buf = io.StringIO()
        for row in X[s:s + step]:
            buf.write("{%s}\t%r\n" % (",".join(repr(float(v)) for v in row), float(row[0])))
        buf.seek(0)
        cur.copy_expert("COPY %s FROM STDIN" % table, buf)
    cur.execute("ANALYZE %s" % table)


def timed(cur, sql, args=()):
    t0 = time.time()
    cur.execute(sql, args)
    r = cur.fetchone()
    return time.time() - t0, r


def sql_part(cur):
    rng = np.random.default_rng(20261127)
    Xtr = rng.standard_normal((N_SQL, D))
    Xnew = rng.standard_normal((N_SQL, D)) + 0.1
    t0 = time.time()
    copy_table(cur, "bdrift_train", Xtr)
    copy_table(cur, "bdrift_new", Xnew)
    print("# tables of %d rows a side, d = %d, loaded in %.1f s" % (N_SQL, D, time.time() - t0))
    cur.execute("SELECT kernel_model_drop('bdrift') FROM kernel_model_names WHERE name = 'bdrift'")
    secs, _ = timed(cur, "SELECT version FROM kernel_model_train('bdrift', 'SELECT f, y FROM bdrift_train', "
                    "'{\"approximation\": \"nystrom\", \"components\": 1000, \"lambda\": 0.1, "
                    "\"test_fraction\": 0}')")
    print("training nystrom m = 1000 on %d rows (the training side captured by one more pass): %.1f s"
          % (N_SQL, secs))
    secs, (res,) = timed(cur, "SELECT kernel_model_drift('bdrift', 'SELECT f FROM bdrift_new')")
    res = res if isinstance(res, dict) else json.loads(res)
    print("kernel_model_drift, %d training rows vs %d new rows (0.1 sd shift): %.2f s "
          "(target <= 10 s); statistic %.1f, p %.3g, dof %d"
          % (res["n_train"], res["n_new"], secs, res["statistic"], res["p_value"], res["dof"]))
    secs2, (res2,) = timed(cur, "SELECT kernel_model_drift('bdrift', 'SELECT f FROM bdrift_train')")
    res2 = res2 if isinstance(res2, dict) else json.loads(res2)
    print("kernel_model_drift over the training rows themselves (the capture pass's work): %.2f s; "
          "statistic %.3g" % (secs2, res2["statistic"]))
    # the same statistic in NumPy, from the model's export
    cur.execute("SELECT kernel_model_export(model) FROM kernel_models WHERE name = 'bdrift' AND deployed")
    e = cur.fetchone()[0]
    e = e if isinstance(e, dict) else json.loads(e)
    C = np.array(e["centers"])
    V = C[[j * len(C) // J for j in range(J)]]
    t, p = numpy_test(Xtr, Xnew, V, np.array(e["mean"]), np.array(e["scale"]), e["gamma"])
    err = abs(res["statistic"] - t) / abs(t)
    print("agreement with NumPy at %d rows a side: statistic relative error %.2g (want <= 1e-8)" % (N_SQL, err))
    cur.execute("SELECT kernel_model_drop('bdrift')")
    cur.execute("DROP TABLE bdrift_train")
    cur.execute("DROP TABLE bdrift_new")
    return err <= 1e-8


def simulation():
    rng = np.random.default_rng(32004)
    gamma = 1.0 / D
    rejected = {"no shift": 0, "0.1 sd, every coordinate": 0, "0.1 sd, one coordinate": 0}
    t0 = time.time()
    for _ in range(SEEDS):
        Xtr = rng.standard_normal((N_SIM, D))
        mean, scale = Xtr.mean(0), Xtr.std(0)
        V = ((Xtr[[j * N_SIM // J for j in range(J)]]) - mean) / scale
        ztr = rbf((Xtr - mean) / scale, V, gamma)
        for case in rejected:
            Xnew = rng.standard_normal((N_SIM, D))
            if case == "0.1 sd, every coordinate":
                Xnew += 0.1
            elif case == "0.1 sd, one coordinate":
                Xnew[:, 0] += 0.1
            _, p = statistic(ztr, rbf((Xnew - mean) / scale, V, gamma))
            rejected[case] += p < 0.01
    print("size and power in NumPy (%d seeds, %d rows a side, d = %d, J = %d, alpha 0.01; %.0f s):"
          % (SEEDS, N_SIM, D, J, time.time() - t0))
    ok = True
    for case, r in rejected.items():
        rate = r / SEEDS
        want = "within [0.005, 0.02]" if case == "no shift" else (
            ">= 0.9" if "every" in case else "reported")
        print("  %-26s rejection rate %.3f (%s)" % (case, rate, want))
        if case == "no shift":
            ok &= 0.005 <= rate <= 0.02
        elif "every" in case:
            ok &= rate >= 0.9
    return ok


def main():
    print("== kernel drift test (test/bench/drift.py%s)" % (", quick" if QUICK else ""))
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET extra_float_digits = 3")
    ok = sql_part(cur)
    ok &= simulation()
    conn.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
