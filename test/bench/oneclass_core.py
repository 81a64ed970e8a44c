#!/usr/bin/python3
"""Exact one-class SVM core vs scikit-learn's OneClassSVM, side by side in one run
    make test/bench/oneclass_core && /usr/bin/python3 test/bench/oneclass_core.py

rbf with gamma = 'scale' (1 / (d var X) = 1 / d on standardized features),
nu = 0.5 (both defaults), tol = 1e-3 (scikit-learn's default) and 1e-6,
one thread each (libsvm is single-threaded):
  blobs10k: n = 10,000 training rows and 1,000 new ones, d = 10 (three
  Gaussian blobs, 2% uniform outliers), features standardized;
  breast_cancer: 569 rows, d = 30, standardized, scored on itself.
kernel_ml: test/bench/oneclass_core (km_oneclass_dual on rbf columns through
a 64 MB column cache, as the exact svm fit reads them). scikit-learn:
OneClassSVM(nu, gamma, tol, cache_size 200 MB, its default).  Runs alternate;
medians of RUNS (KM_BENCH_RUNS, default 5) and the median of per-run ratios.
Then, where a server with kernel_ml answers (libpq's environment; skipped
with KM_BENCH_SQL=0), the same through SQL: kernel_fit(f, '{"method":
"oneclass"}') over blobs10k's raw rows in a table (the rows' hash order,
standardization, the fit and the model's bytea included) against
OneClassSVM on the standardized rows at its defaults (tol 1e-3).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.svm import OneClassSVM
from threadpoolctl import threadpool_limits

THREADS = int(os.environ.get("KM_BENCH_THREADS", "1"))
RUNS = int(os.environ.get("KM_BENCH_RUNS", "5"))
CACHE_MB = float(os.environ.get("KM_BENCH_CACHE_MB", "64"))
NU = 0.5
here = os.path.dirname(os.path.abspath(__file__))
prog = os.path.join(here, "oneclass_core")


def standardize(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def datasets():
    X, _ = make_blobs(n_samples=10800, n_features=10, centers=3, random_state=20261127)
    rng = np.random.RandomState(5)
    X[rng.rand(len(X)) < 0.02] = rng.uniform(-15, 15, (1, 10))
    X = standardize(X)
    yield "blobs10k", X[:10000], X[10000:]
    X = standardize(load_breast_cancer().data)
    yield "breast_cancer", X, X


def run_core(path, dec_path, n, nt, d, gamma, tol):
    out = subprocess.run([prog, path, str(n), str(nt), str(d), repr(NU), repr(gamma), repr(tol),
                          str(THREADS), repr(CACHE_MB), dec_path], check=True,
                         capture_output=True, text=True)
    if out.stderr:
        sys.stderr.write(out.stderr)
    r = json.loads(out.stdout)
    r["dec"] = np.fromfile(dec_path, dtype=np.float64)
    return r


def run_sk(X, Xt, gamma, tol):
    with threadpool_limits(limits=THREADS):
        m = OneClassSVM(nu=NU, kernel="rbf", gamma=gamma, tol=tol)
        t0 = time.perf_counter()
        c0 = time.process_time()
        m.fit(X)
        t = time.perf_counter() - t0
        cpu = time.process_time() - c0
    return {"total_s": t, "cpu_s": cpu, "n_sv": int(len(m.support_)),
            "iterations": int(np.ravel(m.n_iter_)[0]), "dec": m.decision_function(Xt)}


print("Exact one-class SVM, rbf gamma = 'scale', nu = %g, %d BLAS thread(s), %g MB column cache, "
      "median of %d runs" % (NU, THREADS, CACHE_MB, RUNS))
print("%-13s %6s %6s %-24s %8s %8s %7s %7s %10s %6s" % ("data", "n", "tol", "system", "fit s",
                                                          "cpu s", "n_sv", "iters", "dec diff",
                                                          "labels"))
for name, X, Xt in datasets():
    n, d = X.shape
    gamma = 1.0 / (d * X.var())
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as fh:
        fh.write(np.ascontiguousarray(np.vstack([X, Xt])).tobytes())
        fh.write(np.zeros(len(X) + len(Xt)).tobytes())
        path = fh.name
    dec_path = path + ".dec"
    try:
        for tol in (1e-3, 1e-6):
            core, sk = [], []
            for r in range(RUNS):
                core.append(run_core(path, dec_path, n, len(Xt), d, gamma, tol))
                sk.append(run_sk(X, Xt, gamma, tol))
            med = lambda rs, k: statistics.median(r[k] for r in rs)
            a, b = core[0]["dec"], sk[0]["dec"]
            diff = np.max(np.abs(a - b)) / np.max(np.abs(b))
            same = int(np.sum((a > 0) == (b > 0)))
            print("%-13s %6d %6.0e %-24s %8.4f %8.4f %7d %7d %10.2e %6s" % (
                  name, n, tol, "kernel_ml oneclass", med(core, "total_s"), med(core, "cpu_s"),
                  core[0]["n_sv"], core[0]["iterations"], diff, "%d/%d" % (same, len(b))))
            print("%-13s %6d %6.0e %-24s %8.4f %8.4f %7d %7d" % (
                  name, n, tol, "scikit-learn OneClassSVM", med(sk, "total_s"), med(sk, "cpu_s"),
                  sk[0]["n_sv"], sk[0]["iterations"]))
            ratios = [c["total_s"] / s["total_s"] for c, s in zip(core, sk)]
            cratios = [c["cpu_s"] / s["cpu_s"] for c, s in zip(core, sk)]
            print("%-13s fit time ratio kernel_ml / OneClassSVM at tol %g: wall %.3f, cpu %.3f "
                  "(medians of per-run ratios); %d columns computed; longest SMO gap between "
                  "interrupt checks %.4f s" % (name, tol, statistics.median(ratios),
                                               statistics.median(cratios), core[0]["columns"],
                                               max(r["gap_s"] for r in core)))
    finally:
        os.unlink(path)
        if os.path.exists(dec_path):
            os.unlink(dec_path)


def bench_sql():
    """kernel_fit over a 10,000-row table vs OneClassSVM(), per-run ratios."""
    import io
    try:
        import psycopg2
        conn = psycopg2.connect("")
    except Exception as exc:                # no server: say so and stop
        print("through SQL: skipped (%s)" % str(exc).strip().splitlines()[0])
        return
    conn.autocommit = True
    cur = conn.cursor()
    X = next(datasets())[1]
    raw = X * 3.0 + 10.0                    # standardized again by kernel_fit
    cur.execute("CREATE TEMP TABLE oc_bench (f float8[])")
    cur.copy_expert("COPY oc_bench FROM STDIN", io.StringIO(
        "".join("{%s}\n" % ",".join(repr(float(v)) for v in r) for r in raw)))
    ratios = []
    for r in range(RUNS):
        t0 = time.perf_counter()
        cur.execute("""SELECT length(kernel_fit(f, '{"method": "oneclass"}')) FROM oc_bench""")
        cur.fetchone()
        t_sql = time.perf_counter() - t0
        with threadpool_limits(limits=THREADS):
            t0 = time.perf_counter()
            OneClassSVM(nu=NU, gamma="scale").fit(standardize(raw))
            t_sk = time.perf_counter() - t0
        ratios.append(t_sql / t_sk)
        print("through SQL, run %d: kernel_fit %.3f s, OneClassSVM %.3f s" % (r + 1, t_sql, t_sk))
    print("through SQL: fit time ratio kernel_fit / OneClassSVM at n = %d, defaults: %.3f "
          "(median of per-run ratios)" % (len(raw), statistics.median(ratios)))
    conn.close()


if os.environ.get("KM_BENCH_SQL", "1") != "0":
    bench_sql()
