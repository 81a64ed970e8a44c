#!/usr/bin/python3
"""
Approximate classifiers at scale (issue 13, benchmark "Approximate logistic
and L2-SVM"): N rows (default 1,000,000; KM_BENCH_QUICK=1: 100,000), d = 20,
m = 500 Nystrom centres, a noisy binary task computed by the same formula in
SQL and in NumPy:
    f_j = sin(0.37 i (j + 1) + j),
    s   = 10 sin(pi f_1 f_2) + 20 (f_3 - 0.5)^2 + 10 f_4 + 5 f_5
          + 10 sin(0.71 i + 0.3) sin(2.329 i)          (deterministic "noise")
    y   = 1 if s > 13.5 else 0
Rows with i % 5 = 0 are held out; the others train.
kernel_ml: kernel_train(f, y, {"method": "logistic" | "svm", "approximation":
"nystrom", "components": 500, "gamma": 1/d, "lambda": LAM}) in a fresh backend
(serial plan), three times: with kernel_ml.max_memory = 256MB (features
recomputed each Newton pass) on 1 and on 2 BLAS threads
(kernel_ml.blas_threads), and with the default 4GB on 1 thread (features
cached when they and the rest take at most half of it: at 100,000 rows, not
at 1,000,000).  scikit-learn: StandardScaler + Nystroem(500, gamma) +
LogisticRegression(C) / LinearSVC(loss='squared_hinge', C, dual=False) with
C = 1/(n_train LAM), 2 BLAS threads, in its own process.  Time, held-out
accuracy, peak memory (the backend's VmHWM vs the scikit-learn process's
ru_maxrss), as ratios.  Targets: <= 180 s at 1M rows, accuracy within 0.5
points, memory <= 0.3x.
Run against any cluster with kernel_ml installed (libpq environment).
"""

import os
import statistics
import subprocess
import sys
import time

import psycopg2

from kmbench import backend_hwm

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
RUNS = int(os.environ.get("KM_BENCH_RUNS", "1"))
N = int(os.environ.get("KM_BENCH_AC_ROWS", "100000" if QUICK else "1000000"))
D = 20
M = 500
GAMMA = 1.0 / D
LAM = 1e-6
THRESHOLD = 13.5

SK = r'''
import resource, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
n, d, m, gamma, lam, thr, method = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
    float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), sys.argv[7])
ii = np.arange(1, n + 1, dtype=float)
X = np.sin(0.37 * ii[:, None] * (np.arange(d) + 1.0)[None, :] + np.arange(d)[None, :])
s = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
     + 10 * np.sin(0.71 * ii + 0.3) * np.sin(2.329 * ii))
y = (s > thr).astype(int)
te = (np.arange(1, n + 1) % 5) == 0
Xtr, ytr, Xte, yte = X[~te], y[~te], X[te], y[te]
del X, s, y
C = 1.0 / (len(ytr) * lam)
lin = (LogisticRegression(C=C, max_iter=1000) if method == "logistic"
       else LinearSVC(loss="squared_hinge", C=C, dual=False, max_iter=1000))
with threadpool_limits(2):
    t = time.time()
    pipe = make_pipeline(StandardScaler(), Nystroem(gamma=gamma, n_components=m, random_state=0), lin)
    pipe.fit(Xtr, ytr)
    el = time.time() - t
    acc = pipe.score(Xte, yte)
print(el, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, acc)
'''


def make_table(cur, n):
    cur.execute("DROP TABLE IF EXISTS kmb_aclass")
    cur.execute("""CREATE TABLE kmb_aclass AS
        SELECT i, f, (10 * sin(pi() * f[1] * f[2]) + 20 * (f[3] - 0.5) ^ 2 + 10 * f[4] + 5 * f[5]
                      + 10 * sin(0.71 * i + 0.3) * sin(2.329 * i) > %r)::int::float8 AS y
        FROM (SELECT i, ARRAY[%s]::float8[] AS f FROM generate_series(1, %d) i) s""" %
                (THRESHOLD, ", ".join("sin(0.37 * i * %d + %d)" % (j + 1, j) for j in range(D)), n))
    cur.execute("VACUUM ANALYZE kmb_aclass")



def ours(method, max_memory, threads):
    """Seconds, the backend's peak memory, held-out accuracy, model info."""
    c2 = psycopg2.connect("")
    c2.autocommit = True
    cur = c2.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET jit = off")
    cur.execute("SET max_parallel_workers_per_gather = 0")
    cur.execute("SET kernel_ml.max_memory = %s", (max_memory,))
    cur.execute("SET kernel_ml.blas_threads = %d" % threads)
    opts = ('{"method": "%s", "approximation": "nystrom", "components": %d, "gamma": %r, "lambda": %r}'
            % (method, M, GAMMA, LAM))
    t = time.time()
    cur.execute("SELECT kernel_train(f, y, %s::jsonb) FROM kmb_aclass WHERE i %% 5 <> 0", (opts,))
    model = cur.fetchone()[0]
    el = time.time() - t
    mem = backend_hwm(cur)
    cur.execute("SELECT avg((kernel_predict_class(%s::bytea, f)::float8 = y)::int) FROM kmb_aclass "
                "WHERE i %% 5 = 0", (psycopg2.Binary(model),))
    acc = float(cur.fetchone()[0])
    cur.execute("SELECT kernel_model_info(%s::bytea)", (psycopg2.Binary(model),))
    info = cur.fetchone()[0]
    c2.close()
    return el, mem, acc, info


def sklearn_run(method):
    out = subprocess.run([sys.executable, "-c", SK, str(N), str(D), str(M), repr(GAMMA), repr(LAM),
                          repr(THRESHOLD), method], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def med(xs):
    return statistics.median(xs)


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    print("approximate classifiers (issue 13): %d rows (%d train), d = %d, m = %d, gamma %g, lambda %g, "
          "medians of %d run(s)" % (N, N - N // 5, D, M, GAMMA, LAM, RUNS))
    make_table(cur, N)
    rc = 0
    for method, skname in (("logistic", "LogisticRegression"), ("svm", "LinearSVC(squared_hinge)")):
        rows = {}
        for label, mm, th in (("kernel_ml, 256MB, 1 thread", "256MB", 1),
                              ("kernel_ml, 256MB, 2 threads", "256MB", 2),
                              ("kernel_ml, 4GB, 1 thread", "4GB", 1)):
            rows[label] = [ours(method, mm, th) for _ in range(RUNS)]
        sk = [sklearn_run(method) for _ in range(RUNS)]
        ts, ms, accs = med([x[0] for x in sk]), med([x[1] for x in sk]), med([x[2] for x in sk])
        print("\n%s (nystrom, primal Newton) vs StandardScaler + Nystroem(%d) + %s" % (method, M, skname))
        print("  %-30s %8s %9s %9s %8s %8s %9s %s" % ("", "time s", "peak MB", "accuracy", "time/sk",
                                                    "mem/sk", "acc-sk", "newton steps"))
        for label, rs in rows.items():
            t, mem, acc = med([x[0] for x in rs]), med([x[1] for x in rs]), med([x[2] for x in rs])
            info = rs[0][3]
            print("  %-30s %8.2f %9.0f %9.4f %8.2f %8.3f %+9.4f %s" % (
                label, t, mem / 2**20, acc, t / ts, mem / ms, acc - accs, info.get("iterations")))
        print("  %-30s %8.2f %9.0f %9.4f %8s %8s %9s" % ("scikit-learn (2 BLAS threads)", ts, ms / 2**20,
                                                       accs, "1", "1", ""))
    print("  targets (1M rows): time <= 180 s, |accuracy - sk| <= 0.005, memory <= 0.3x")
    cur.execute("DROP TABLE kmb_aclass")
    conn.close()
    return rc


if __name__ == "__main__":
    sys.exit(main())
