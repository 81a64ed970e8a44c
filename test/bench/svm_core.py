#!/usr/bin/python3
"""Exact SVM core vs scikit-learn's SVC, side by side in one run (issue 13's
benchmark at the core level; `make bench` runs it, or
    make test/bench/svm_core && /usr/bin/python3 test/bench/svm_core.py).

A noisy binary task: n = 10,000 training and 5,000 held-out rows, d = 20
standard normal features, label = sign(x0 x1 + sin(2 x2) + 0.5 x3 - 0.3 x4^2
+ 0.3 + noise), noise N(0, 0.5^2).  rbf with gamma = 1/d, C = 1, tol = 1e-3.
kernel_ml: test/bench/svm_core (Gram matrix by BLAS with THREADS threads,
included in its time, then km_svm_binary; and "columns on demand", the path
kernel_train takes for an svm without probabilities: SMO computes each
Gram column when it first reads it, pages populated column by column, one
BLAS thread).  scikit-learn: SVC(C, gamma, tol,
cache_size large enough for the whole kernel matrix in libsvm's floats).
Runs alternate; medians of RUNS (KM_BENCH_RUNS, default 3).
Environment: KM_SVM_N (10000), KM_BENCH_QUICK=1 (n = 3000, one run).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

THREADS = 2
quick = os.environ.get("KM_BENCH_QUICK") == "1"
N = int(os.environ.get("KM_SVM_N", "3000" if quick else "10000"))
NT = 5000
D = 20
C = 1.0
GAMMA = 1.0 / D
TOL = 1e-3
RUNS = 1 if quick else int(os.environ.get("KM_BENCH_RUNS", "3"))
here = os.path.dirname(os.path.abspath(__file__))
prog = os.path.join(here, "svm_core")

rng = np.random.default_rng(20261123)
X = rng.standard_normal((N + NT, D))
score = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] - 0.3 * X[:, 4] ** 2 + 0.3
         + 0.5 * rng.standard_normal(N + NT))
y = np.where(score > 0, 1.0, -1.0)

with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as fh:
    fh.write(np.ascontiguousarray(X).tobytes())
    fh.write(y.tobytes())
    path = fh.name


def run_core(shrinking=1, on_demand=0):
    # on demand: one BLAS thread, as kernel_train sets it for this path (a
    # column is one DGEMV; two threads made the whole fit 2x slower)
    out = subprocess.run([prog, path, str(N), str(NT), str(D), repr(C), repr(GAMMA), repr(TOL),
                          str(1 if on_demand else THREADS), str(shrinking), str(on_demand)], check=True,
                         capture_output=True, text=True)
    if out.stderr:
        sys.stderr.write(out.stderr)
    return json.loads(out.stdout)


def run_svc():
    cache_mb = N * N * 4 / 2 ** 20 + 64      # libsvm caches float columns
    with threadpool_limits(limits=THREADS):
        m = SVC(C=C, kernel="rbf", gamma=GAMMA, tol=TOL, cache_size=cache_mb)
        t0 = time.perf_counter()
        c0 = time.process_time()
        m.fit(X[:N], y[:N])
        t = time.perf_counter() - t0
        cpu = time.process_time() - c0
        acc = float(np.mean(m.predict(X[N:]) == y[N:]))
    return {"total_s": t, "cpu_s": cpu, "accuracy": acc, "n_sv": int(len(m.support_)),
            "iterations": int(m.n_iter_[0]), "b": float(-m.intercept_[0])}


try:
    core, core_ns, core_od, svc = [], [], [], []
    for r in range(RUNS):
        core_od.append(run_core(1, 1))
        core.append(run_core(1))
        svc.append(run_svc())
        core_ns.append(run_core(0))
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    print("Exact SVM, n = %d, d = %d, rbf gamma = 1/d, C = %g, tol = %g, %d BLAS threads, "
          "median of %d runs" % (N, D, C, TOL, THREADS, RUNS))
    print("%-32s %8s %8s %8s %8s %8s %7s %7s %7s %7s" % ("system", "fit s", "cpu s", "touch s", "gram s",
                                                        "smo s", "n_sv", "iters", "columns", "acc %"))
    for name, rs in (("kernel_ml core (columns on demand)", core_od),
                     ("kernel_ml core (shrinking)", core), ("kernel_ml core (no shrinking)", core_ns)):
        print("%-32s %8.3f %8.3f %8.3f %8.3f %8.3f %7d %7d %7d %7.2f" % (
              name, med(rs, "total_s"), med(rs, "cpu_s"), med(rs, "touch_s"), med(rs, "gram_s"),
              med(rs, "smo_s"), rs[0]["n_sv"], rs[0]["iterations"], rs[0]["columns"],
              100 * rs[0]["accuracy"]))
    print("%-32s %8.3f %8.3f %8s %8s %8s %7d %7d %7s %7.2f" % (
          "scikit-learn SVC", med(svc, "total_s"), med(svc, "cpu_s"), "", "", "",
          svc[0]["n_sv"], svc[0]["iterations"], "", 100 * svc[0]["accuracy"]))
    for name, rs in (("columns on demand", core_od), ("full Gram matrix", core)):
        ratios = [c["total_s"] / s["total_s"] for c, s in zip(rs, svc)]
        cratios = [c["cpu_s"] / s["cpu_s"] for c, s in zip(rs, svc)]
        print("fit time ratio kernel_ml (%s) / SVC: wall %.3f, cpu %.3f (medians of per-run ratios; target <= 1.0)"
              % (name, statistics.median(ratios), statistics.median(cratios)))
    print("held-out accuracy difference: %+.2f points (target within 0.2)"
          % (100 * (core[0]["accuracy"] - svc[0]["accuracy"])))
    print("longest gap between interrupt checks: SMO %.3f s, Gram build %.3f s"
          % (max(r["gap_s"] for r in core + core_ns + core_od),
             max(r["gram_gap_s"] for r in core + core_ns + core_od)))
finally:
    os.unlink(path)
