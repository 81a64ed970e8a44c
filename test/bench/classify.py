#!/usr/bin/python3
"""
Classification benchmark (issue 13): exact SVM fit vs scikit-learn's SVC,
exact kernel logistic regression vs scikit-learn's LogisticRegression on
the exact kernel features, and scoring a class / a probability vs
kernel_predict on the same model.

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

Exact logistic: the first NLOG (default 5,000) training rows,
kernel_train(f, label, {"method": "logistic", "gamma": 1/d, "lambda":
LAM_LOG, "standardize": false}), i.e. (1/n) sum log-loss + (lam/2) a^T K a
with an unpenalized intercept.  scikit-learn's LogisticRegression penalizes
||w||^2 of its features, so it gets the features Phi = K^(1/2) (symmetric
square root by numpy.linalg.eigh): Phi w = K a with ||w||^2 = a^T K a, and
C = 1 / (n lam) (our objective divided by lam); lbfgs leaves the intercept
unpenalized, as we do.  Held-out rows get K_test K^(-1/2).  Fit times
(median of RUNS, interleaved; the eigendecomposition is reported apart, it
is not part of LogisticRegression's fit), held-out accuracy of both and the
largest difference of their held-out probabilities.

Run against any cluster with kernel_ml installed (libpq environment):
    /usr/bin/python3 test/bench/classify.py
Environment: KM_BENCH_RUNS (default 3), KM_BENCH_CLASSIFY_N (default 10000),
KM_BENCH_LOGISTIC_N (default 5000), KM_BENCH_QUICK=1 (n = 2,000, logistic
n = 1,000, held-out 2,000, one run: about a minute).
"""

import io
import os
import statistics
import time

import numpy as np
import psycopg2
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
RUNS = 1 if QUICK else int(os.environ.get("KM_BENCH_RUNS", "3"))
N = int(os.environ.get("KM_BENCH_CLASSIFY_N", "2000" if QUICK else "10000"))
NLOG = min(N, int(os.environ.get("KM_BENCH_LOGISTIC_N", "1000" if QUICK else "5000")))
D = 20
NTEST = 2000 if QUICK else 5000
LAM = 1e-4
LAM_LOG = 1e-3


def arr(row):
    return "{" + ",".join(repr(float(v)) for v in row) + "}"


def logistic(cur, Xtr, ytr, Xte, yte, gamma):
    n = len(Xtr)
    cur.execute("CREATE TABLE kmb_log AS SELECT * FROM kmb_tr LIMIT 0")
    buf = io.StringIO("".join("%s\t%s\n" % (arr(r), l) for r, l in zip(Xtr, ytr)))
    cur.copy_expert("COPY kmb_log FROM STDIN", buf)
    opts = ('{"method": "logistic", "gamma": %r, "lambda": %r, "standardize": false}'
            % (gamma, LAM_LOG))
    # Phi = K^(1/2), held-out features K_test K^(-1/2): ||w||^2 = a^T K a
    with threadpool_limits(2):
        t0 = time.perf_counter()
        K = rbf_kernel(Xtr, gamma=gamma)
        s, V = np.linalg.eigh(K)
        keep = s > 1e-12 * s[-1]
        Vk, sk = V[:, keep], s[keep]
        Phi = (Vk * np.sqrt(sk)) @ Vk.T
        Phi_te = rbf_kernel(Xte, Xtr, gamma=gamma) @ ((Vk / np.sqrt(sk)) @ Vk.T)
        t_feat = time.perf_counter() - t0
    t_km, t_sk = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        cur.execute("DELETE FROM kmb_m WHERE name = 'log'")
        cur.execute("INSERT INTO kmb_m SELECT 'log', kernel_train(f, label, %s::jsonb) FROM kmb_log",
                    (opts,))
        t_km.append(time.perf_counter() - t0)
        with threadpool_limits(2):
            t0 = time.perf_counter()
            lr = LogisticRegression(C=1.0 / (n * LAM_LOG), tol=1e-8, max_iter=10000).fit(Phi, ytr)
            t_sk.append(time.perf_counter() - t0)
    cur.execute("SELECT kernel_predict_class(m.model, t.f), kernel_predict_proba(m.model, t.f, 'pos') "
                "FROM kmb_te t, kmb_m m WHERE m.name = 'log' ORDER BY t.id")
    rows = cur.fetchall()
    acc_km = np.mean([r[0] == l for r, l in zip(rows, yte)])
    p_km = np.array([r[1] for r in rows])
    p_sk = lr.predict_proba(Phi_te)[:, list(lr.classes_).index("pos")]
    acc_sk = np.mean(lr.predict(Phi_te) == yte)
    mk, ms = statistics.median(t_km), statistics.median(t_sk)
    print("exact logistic n = %d, d = %d, lambda = %g (C = %g): kernel_ml %.2f s, "
          "LogisticRegression on K^(1/2) %.2f s (ratio %.2f; features %.1f s apart, %d of %d eigenvalues kept); "
          "held-out accuracy %.4f vs %.4f (diff %+.2f points), held-out probabilities differ by at most %.1e"
          % (n, D, LAM_LOG, 1.0 / (n * LAM_LOG), mk, ms, mk / ms, t_feat, keep.sum(), n,
             acc_km, acc_sk, 100 * (acc_km - acc_sk), np.max(np.abs(p_km - p_sk))))
    cur.execute("DROP TABLE kmb_log")


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
    cur.execute("DROP TABLE IF EXISTS kmb_tr, kmb_te, kmb_m, kmb_log")
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
        with threadpool_limits(2):
            svc = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=8.0 * N * N / 2**20 + 100).fit(Xtr, ytr)
        t_sk.append(time.perf_counter() - t0)
    cur.execute("SELECT kernel_predict_class(m.model, t.f) FROM kmb_te t, kmb_m m "
                "WHERE m.name = 'svm' ORDER BY t.id")
    acc_km = np.mean([r[0] == l for r, l in zip(cur.fetchall(), yte)])
    acc_sk = svc.score(Xte, yte)
    mk, ms = statistics.median(t_km), statistics.median(t_sk)
    print("exact svm n = %d, d = %d: kernel_ml %.2f s, SVC %.2f s, ratio %.2f; "
          "held-out accuracy %.4f vs %.4f (diff %+.2f points)"
          % (N, D, mk, ms, mk / ms, acc_km, acc_sk, 100 * (acc_km - acc_sk)))

    logistic(cur, Xtr[:NLOG], ytr[:NLOG], Xte, yte, gamma)

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
