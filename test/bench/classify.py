#!/usr/bin/python3
"""
Classification benchmark (issue 13): exact SVM fit vs scikit-learn's SVC, and
scoring a class / a probability vs kernel_predict on the same model.

A noisy binary task from a fixed seed: n training rows (default 10,000) and
5,000 held-out rows of d = 20 standard normal features, label
"pos" when x1 + ... + x5 + 0.5 noise > 0 (about 8% of labels flipped by the
noise).  kernel_ml: kernel_train(f, label, {"method": "svm", "gamma": 1/d,
"lambda": lam, "standardize": false, "tol": 1e-3}); scikit-learn:
SVC(C = 1/(n lam), gamma = 1/d, tol = 1e-3, cache_size large enough for the
whole kernel).  Median of RUNS fits each, interleaved; held-out accuracy of
both.  Then, on one model, 5,000 rows scored RUNS times by
kernel_predict (f(x)), kernel_predict_class and kernel_predict_proba
(probability model), serial plans: the ratios class / predict and
proba / predict (target <= 1.2).

Run against any cluster with kernel_ml installed (libpq environment):
    /usr/bin/python3 test/bench/classify.py
Environment: KM_BENCH_RUNS (default 3), KM_BENCH_CLASSIFY_N (default 10000).
"""

import io
import os
import statistics
import time

import numpy as np
import psycopg2
from sklearn.svm import SVC

RUNS = int(os.environ.get("KM_BENCH_RUNS", "3"))
N = int(os.environ.get("KM_BENCH_CLASSIFY_N", "10000"))
D = 20
NTEST = 5000
LAM = 1e-4


def arr(row):
    return "{" + ",".join(repr(float(v)) for v in row) + "}"


def main():
    rng = np.random.RandomState(20261123)
    X = rng.randn(N + NTEST, D)
    y = np.where(X[:, :5].sum(axis=1) + 0.5 * rng.randn(N + NTEST) > 0, "pos", "neg")
    Xtr, ytr, Xte, yte = X[:N], y[:N], X[N:], y[N:]
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET max_parallel_workers_per_gather = 0")
    cur.execute("SET jit = off")
    cur.execute("DROP TABLE IF EXISTS kmb_tr, kmb_te, kmb_m")
    cur.execute("CREATE TABLE kmb_tr (f float8[], label text)")
    cur.execute("CREATE TABLE kmb_te (id int, f float8[])")
    buf = io.StringIO("".join("%s\t%s\n" % (arr(r), l) for r, l in zip(Xtr, ytr)))
    cur.copy_expert("COPY kmb_tr FROM STDIN", buf)
    buf = io.StringIO("".join("%d\t%s\n" % (i, arr(r)) for i, r in enumerate(Xte)))
    cur.copy_expert("COPY kmb_te FROM STDIN", buf)
    cur.execute("CREATE TABLE kmb_m (name text, model bytea)")
    gamma, C = 1.0 / D, 1.0 / (N * LAM)
    opts = ('{"method": "svm", "gamma": %r, "lambda": %r, "standardize": false, "tol": 1e-3}'
            % (gamma, LAM))
    t_km, t_sk = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        cur.execute("DELETE FROM kmb_m")
        cur.execute("INSERT INTO kmb_m SELECT 'svm', kernel_train(f, label, %s::jsonb) FROM kmb_tr",
                    (opts,))
        t_km.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        svc = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=8.0 * N * N / 2**20 + 100).fit(Xtr, ytr)
        t_sk.append(time.perf_counter() - t0)
    cur.execute("SELECT kernel_predict_class(m.model, t.f) FROM kmb_te t, kmb_m m ORDER BY t.id")
    acc_km = np.mean([r[0] == l for r, l in zip(cur.fetchall(), yte)])
    acc_sk = svc.score(Xte, yte)
    mk, ms = statistics.median(t_km), statistics.median(t_sk)
    print("exact svm n = %d, d = %d: kernel_ml %.2f s, SVC %.2f s, ratio %.2f; "
          "held-out accuracy %.4f vs %.4f (diff %+.2f points)"
          % (N, D, mk, ms, mk / ms, acc_km, acc_sk, 100 * (acc_km - acc_sk)))

    cur.execute("INSERT INTO kmb_m SELECT 'svmp', kernel_train(f, label, %s::jsonb) "
                "FROM (SELECT * FROM kmb_tr LIMIT 2000) s",
                (opts[:-1] + ', "probability": true}',))
    q = {"predict": "SELECT sum(kernel_predict(m.model, t.f)) FROM kmb_te t, kmb_m m WHERE m.name = 'svmp'",
         "class": "SELECT count(kernel_predict_class(m.model, t.f)) FROM kmb_te t, kmb_m m WHERE m.name = 'svmp'",
         "proba": "SELECT sum(kernel_predict_proba(m.model, t.f, 'pos')) FROM kmb_te t, kmb_m m WHERE m.name = 'svmp'"}
    times = {k: [] for k in q}
    for _ in range(RUNS):
        for k, sql in q.items():
            t0 = time.perf_counter()
            cur.execute(sql)
            cur.fetchall()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print("scoring %d rows (model of %s support vectors): predict %.3f s, class %.3f s (%.2fx), proba %.3f s (%.2fx)"
          % (NTEST, "2,000 rows'", med["predict"], med["class"], med["class"] / med["predict"],
             med["proba"], med["proba"] / med["predict"]))
    cur.execute("DROP TABLE IF EXISTS kmb_tr, kmb_te, kmb_m")
    conn.close()


if __name__ == "__main__":
    main()
