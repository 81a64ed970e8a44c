#!/usr/bin/python3
"""
Approximate models: accuracy (issue 12, benchmark section 1).

Friedman #1 (scikit-learn's make_friedman1: d = 10, y = 10 sin(pi x1 x2) +
20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + N(0, 1) noise), 20,000 training rows and
5,000 held-out rows, standardized, rbf kernel, one (gamma, lambda) for every
model.  Held-out RMSE of

  kernel_ml exact kernel ridge (Cholesky)
  kernel_ml nystrom, m = 250, 500, 1000, 2000
  kernel_ml rff, D = 1000, 4000
  scikit-learn StandardScaler + Nystroem(m) / RBFSampler(D) + Ridge(alpha = lambda)

printed as ratios to exact and to scikit-learn at the same m.  Both sides
draw their centres / frequencies at random: each approximate row is the mean
over KM_BENCH_SEEDS seeds (default 20; kernel_ml's "seed" option,
scikit-learn's random_state), and the spread (min-max) is printed beside it.
Twenty because one draw's RMSE varies by about 1.5% (standard deviation over
seeds of rff D = 1000, either side): with 5 seeds the standard error of the
difference of two means is about 0.9%, as large as the 1% target, and five
seeds once showed kernel_ml 2.1% behind scikit-learn where twenty show 0.7%
(test/bench/rff_seeds.py compares the two draws seed by seed).
Accuracy does not depend on the machine's load; no timing here.

gamma and lambda: 0.05 and 0.1, the best pair of a small grid for exact
kernel ridge on a separate Friedman #1 sample (8,000 rows; gamma in 0.02 ...
0.1, lambda in 0.01 ... 10; the minimum is flat around it).  At 20,000 rows
(random_state 1, 5,000 validation rows) exact kernel ridge at gamma 0.05
scores lambda 0.01 / 0.03 / 0.1 / 0.3 / 1: 1.0656 / 1.0559 / 1.0653 /
1.0942 / 1.1637, so 0.1 is not a lambda that flatters the approximations
(a smaller one widens their gap to exact); test/bench/exact_grid.py gives
these numbers (the best pair there: gamma 0.03, lambda 0.01, 1.0492).  Override with
KM_BENCH_ACC_GAMMA / KM_BENCH_ACC_LAMBDA.  KM_BENCH_QUICK=1: 4,000 / 1,000
rows, m and D up to 1000, one seed.

Targets (issue 12): nystrom m = 1000 within 1.01x of exact; rff D = 4000
within 1.03x; never worse than scikit-learn at the same m by more than 1%.
"""

import os
import statistics
import sys
import time

import numpy as np
import psycopg2
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from kmbench import copy_table

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
N_TRAIN, N_TEST = (4000, 1000) if QUICK else (20000, 5000)
GAMMA = float(os.environ.get("KM_BENCH_ACC_GAMMA", "0.05"))
LAMBDA = float(os.environ.get("KM_BENCH_ACC_LAMBDA", "0.1"))
SEEDS = list(range(1 if QUICK else int(os.environ.get("KM_BENCH_SEEDS", "20"))))
NYSTROM_M = [250, 500, 1000] if QUICK else [250, 500, 1000, 2000]
RFF_D = [1000] if QUICK else [1000, 4000]


def km_rmse(cur, opts):
    """Held-out RMSE of a model trained in one statement over kmb_acc_train."""
    cur.execute("SELECT kernel_train(f, y, %s::jsonb) FROM kmb_acc_train", (opts,))
    model = cur.fetchone()[0]
    cur.execute("SELECT sqrt(avg((kernel_predict(%s::bytea, f) - y) ^ 2)) FROM kmb_acc_test",
                (psycopg2.Binary(model),))
    return float(cur.fetchone()[0])


def sk_rmse(mapper, Xtr, ytr, Xte, yte):
    with threadpool_limits(2):
        p = make_pipeline(StandardScaler(), mapper, Ridge(alpha=LAMBDA)).fit(Xtr, ytr)
        return float(np.sqrt(np.mean((p.predict(Xte) - yte) ** 2)))


def main():
    X, y = make_friedman1(n_samples=N_TRAIN + N_TEST, n_features=10, noise=1.0, random_state=0)
    Xtr, ytr, Xte, yte = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    cur.execute("SET kernel_ml.max_memory = '8GB'")
    copy_table(cur, "kmb_acc_train", Xtr, ytr)
    copy_table(cur, "kmb_acc_test", Xte, yte)
    base = '"kernel": "rbf", "gamma": %r, "lambda": %r' % (GAMMA, LAMBDA)

    print("1. accuracy, Friedman #1: d = 10, %d training rows, %d held out, rbf gamma = %g, lambda = %g, "
          "standardized; approximate rows: mean over %d seed(s) (min-max)"
          % (N_TRAIN, N_TEST, GAMMA, LAMBDA, len(SEEDS)))
    t = time.time()
    exact = km_rmse(cur, "{%s}" % base)
    print("  kernel_ml exact kernel ridge: held-out RMSE %.5f (%.0f s; the noise alone gives 1.0)"
          % (exact, time.time() - t))

    rows = []
    for kind, sizes in (("nystrom", NYSTROM_M), ("rff", RFF_D)):
        for m in sizes:
            km = [km_rmse(cur, '{%s, "approximation": "%s", "components": %d, "seed": %d}'
                          % (base, kind, m, s)) for s in SEEDS]
            if kind == "nystrom":
                sk = [sk_rmse(Nystroem(kernel="rbf", gamma=GAMMA, n_components=m, random_state=s),
                              Xtr, ytr, Xte, yte) for s in SEEDS]
            else:
                sk = [sk_rmse(RBFSampler(gamma=GAMMA, n_components=m, random_state=s),
                              Xtr, ytr, Xte, yte) for s in SEEDS]
            rows.append((kind, m, km, sk))

    print("  %-8s %6s %22s %10s %22s %10s" % ("", "m / D", "kernel_ml RMSE", "/ exact",
                                              "scikit-learn RMSE", "km / sk"))
    verdict = []
    for kind, m, km, sk in rows:
        a, b = statistics.mean(km), statistics.mean(sk)
        print("  %-8s %6d %9.5f (%.4f-%.4f) %10.4f %9.5f (%.4f-%.4f) %10.4f"
              % (kind, m, a, min(km), max(km), a / exact, b, min(sk), max(sk), a / b))
        if kind == "nystrom" and m == 1000:
            verdict.append("nystrom m = 1000 / exact %.4f (target <= 1.01): %s"
                           % (a / exact, "PASS" if a / exact <= 1.01 else "FAIL"))
        if kind == "rff" and m == 4000:
            verdict.append("rff D = 4000 / exact %.4f (target <= 1.03): %s"
                           % (a / exact, "PASS" if a / exact <= 1.03 else "FAIL"))
    worst = max(statistics.mean(km) / statistics.mean(sk) for _, _, km, sk in rows)
    verdict.append("worst kernel_ml / scikit-learn at the same m %.4f (target <= 1.01): %s"
                   % (worst, "PASS" if worst <= 1.01 else "FAIL"))
    for v in verdict:
        print("  " + v)
    cur.execute("DROP TABLE kmb_acc_train, kmb_acc_test")
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
