#!/usr/bin/python3
"""
Diagnostic (not part of make bench): rff D = 1000 on Friedman #1 (the
accuracy bench's data, gamma 0.05, lambda 0.1), seed by seed.  For each
seed, kernel_ml's random frequencies W and offsets b (from
kernel_model_export) and scikit-learn's RBFSampler's go through the same
NumPy features and the same scikit-learn Ridge, so only the draws differ.
Prints W's mean and variance (2 gamma expected), b's mean (pi expected),
both held-out RMSEs, and the means and standard deviations over seeds.
Usage: python3 test/bench/rff_seeds.py [seeds, default 20], in a cluster
with kernel_ml available (libpq environment).
"""
import statistics
import sys

import numpy as np
import psycopg2
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from kmbench import copy_table

N, NT, G, LAM, D = 20000, 5000, 0.05, 0.1, 1000


def main():
    seeds = range(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
    X, y = make_friedman1(n_samples=N + NT, n_features=10, noise=1.0, random_state=0)
    Xtr, ytr, Xte, yte = X[:N], y[:N], X[N:], y[N:]
    sc = StandardScaler().fit(Xtr)
    Str, Ste = sc.transform(Xtr), sc.transform(Xte)
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    copy_table(cur, "kmb_rff_seeds", Xtr, ytr)

    def ridge_rmse(W, b):
        Z = np.sqrt(2.0 / D) * np.cos(Str @ W + b)
        Zt = np.sqrt(2.0 / D) * np.cos(Ste @ W + b)
        r = Ridge(alpha=LAM).fit(Z, ytr)
        return float(np.sqrt(np.mean((r.predict(Zt) - yte) ** 2)))

    ours, sk = [], []
    for s in seeds:
        cur.execute("SELECT kernel_model_export(kernel_train(f, y, %s::jsonb)) FROM kmb_rff_seeds",
                    ('{"gamma": %r, "lambda": %r, "approximation": "rff", "components": %d, "seed": %d}'
                     % (G, LAM, D, s),))
        ex = cur.fetchone()[0]
        W, b = np.array(ex["weights"]), np.array(ex["offsets"])
        ours.append(ridge_rmse(W, b))
        rs = RBFSampler(gamma=G, n_components=D, random_state=s).fit(Str)
        sk.append(ridge_rmse(rs.random_weights_, rs.random_offset_))
        print("seed %2d: W mean %+.4f var %.5f (2 gamma %.3f), b mean %.3f | kernel_ml %.5f, scikit-learn %.5f"
              % (s, W.mean(), W.var(), 2 * G, b.mean(), ours[-1], sk[-1]), flush=True)
    print("mean kernel_ml %.5f, scikit-learn %.5f, ratio %.4f; standard deviation %.5f, %.5f"
          % (statistics.mean(ours), statistics.mean(sk), statistics.mean(ours) / statistics.mean(sk),
             statistics.stdev(ours), statistics.stdev(sk)))
    cur.execute("DROP TABLE kmb_rff_seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
