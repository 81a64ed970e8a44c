#!/usr/bin/python3
"""Exact epsilon-SVR core vs scikit-learn's SVR, side by side in one run
    make test/bench/svr_core && /usr/bin/python3 test/bench/svr_core.py

Two data sets, rbf with gamma = 'scale' (1 / (d var X)), C = 1,
epsilon = 0.1, tol = 1e-3 (scikit-learn's defaults), one thread each
(libsvm is single-threaded; kernel_ml's Gram matrix by OpenBLAS with
THREADS threads, its time included):
  diabetes: 442 rows, d = 10, features standardized, raw targets;
  predictions compared on the training rows;
  synthetic: Friedman #1 (make_friedman1, noise 1), n = 4,000 training and
  1,000 held-out rows, d = 10, features standardized.
kernel_ml: test/bench/svr_core (Gram matrix, then km_svr_dual).
scikit-learn: SVR(C, epsilon, gamma, tol, cache_size large enough for the
whole kernel matrix in libsvm's floats).  Runs alternate; medians of RUNS
(KM_BENCH_RUNS, default 5).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.svm import SVR
from threadpoolctl import threadpool_limits

THREADS = int(os.environ.get("KM_BENCH_THREADS", "1"))
RUNS = int(os.environ.get("KM_BENCH_RUNS", "5"))
C, EPS, TOL = 1.0, 0.1, 1e-3
here = os.path.dirname(os.path.abspath(__file__))
prog = os.path.join(here, "svr_core")


def standardize(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def datasets():
    Xr, yr = load_diabetes(return_X_y=True)
    X = standardize(Xr)
    yield "diabetes", X, yr, X, yr
    X, y = make_friedman1(n_samples=5000, n_features=10, noise=1.0, random_state=20261125)
    X = standardize(X)
    yield "friedman1", X[:4000], y[:4000], X[4000:], y[4000:]


def run_core(path, pred_path, n, nt, d, gamma):
    out = subprocess.run([prog, path, str(n), str(nt), str(d), repr(C), repr(EPS), repr(gamma),
                          repr(TOL), str(THREADS), pred_path], check=True, capture_output=True,
                         text=True)
    if out.stderr:
        sys.stderr.write(out.stderr)
    r = json.loads(out.stdout)
    r["pred"] = np.fromfile(pred_path, dtype=np.float64)
    return r


def run_svr(X, y, Xt, gamma):
    cache_mb = len(y) ** 2 * 4 / 2 ** 20 + 64
    with threadpool_limits(limits=THREADS):
        m = SVR(C=C, epsilon=EPS, kernel="rbf", gamma=gamma, tol=TOL, cache_size=cache_mb)
        t0 = time.perf_counter()
        c0 = time.process_time()
        m.fit(X, y)
        t = time.perf_counter() - t0
        cpu = time.process_time() - c0
    return {"total_s": t, "cpu_s": cpu, "n_sv": int(len(m.support_)),
            "iterations": int(m.n_iter_), "b": float(m.intercept_[0]), "pred": m.predict(Xt)}


print("Exact epsilon-SVR, rbf gamma = 'scale', C = %g, epsilon = %g, tol = %g, %d BLAS thread(s), "
      "median of %d runs" % (C, EPS, TOL, THREADS, RUNS))
print("%-10s %6s %-22s %8s %8s %8s %8s %7s %7s %10s" % ("data", "n", "system", "fit s", "cpu s",
                                                          "gram s", "smo s", "n_sv", "iters",
                                                          "pred diff"))
for name, X, y, Xt, yt in datasets():
    n, d = X.shape
    gamma = 1.0 / (d * X.var())
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as fh:
        fh.write(np.ascontiguousarray(np.vstack([X, Xt])).tobytes())
        fh.write(np.concatenate([y, yt]).tobytes())
        path = fh.name
    pred_path = path + ".pred"
    try:
        core, svr = [], []
        for r in range(RUNS):
            core.append(run_core(path, pred_path, n, len(Xt), d, gamma))
            svr.append(run_svr(X, y, Xt, gamma))
        med = lambda rs, k: statistics.median(r[k] for r in rs)
        diff = np.max(np.abs(core[0]["pred"] - svr[0]["pred"])) / np.max(np.abs(svr[0]["pred"]))
        print("%-10s %6d %-22s %8.4f %8.4f %8.4f %8.4f %7d %7d %10.2e" % (
              name, n, "kernel_ml km_svr_dual", med(core, "total_s"), med(core, "cpu_s"),
              med(core, "gram_s"), med(core, "smo_s"), core[0]["n_sv"], core[0]["iterations"], diff))
        print("%-10s %6d %-22s %8.4f %8.4f %8s %8s %7d %7d" % (
              name, n, "scikit-learn SVR", med(svr, "total_s"), med(svr, "cpu_s"), "", "",
              svr[0]["n_sv"], svr[0]["iterations"]))
        ratios = [c["total_s"] / s["total_s"] for c, s in zip(core, svr)]
        cratios = [c["cpu_s"] / s["cpu_s"] for c, s in zip(core, svr)]
        print("%-10s fit time ratio kernel_ml / SVR: wall %.3f, cpu %.3f (medians of per-run "
              "ratios); longest SMO gap between interrupt checks %.4f s"
              % (name, statistics.median(ratios), statistics.median(cratios),
                 max(r["gap_s"] for r in core)))
    finally:
        os.unlink(path)
        if os.path.exists(pred_path):
            os.unlink(pred_path)
