#!/usr/bin/python3
"""
Diagnostic (not part of make bench): which (gamma, lambda) does exact kernel
ridge prefer at 20,000 training rows of Friedman #1?  A separate sample
(random_state 1, not the accuracy bench's 0): 20,000 rows train, 5,000
validate; prints the validation RMSE of each pair.
Usage: python3 test/bench/exact_grid.py 0.05:0.1 0.03:0.01 ...  (gamma:lambda;
default the grid behind test/bench/approx_accuracy.py's note), in a cluster
with kernel_ml available (libpq environment).  About a minute per pair.
"""
import sys
import time

import psycopg2
from sklearn.datasets import make_friedman1

from kmbench import copy_table

DEFAULT = ["0.05:0.01", "0.05:0.03", "0.05:0.1", "0.05:0.3", "0.05:1", "0.03:0.01", "0.03:0.03",
           "0.02:0.01", "0.1:0.03"]


def main():
    pairs = [tuple(float(v) for v in p.split(":")) for p in (sys.argv[1:] or DEFAULT)]
    X, y = make_friedman1(n_samples=25000, n_features=10, noise=1.0, random_state=1)
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    cur.execute("SET kernel_ml.max_memory = '8GB'")
    copy_table(cur, "kmb_grid_train", X[:20000], y[:20000])
    copy_table(cur, "kmb_grid_valid", X[20000:], y[20000:])
    for g, lam in pairs:
        t = time.time()
        cur.execute("SELECT sqrt(avg((kernel_predict(m, f) - y) ^ 2)) FROM "
                    "(SELECT kernel_train(f, y, %s::jsonb) AS m FROM kmb_grid_train) t, kmb_grid_valid",
                    ('{"gamma": %r, "lambda": %r}' % (g, lam),))
        print("gamma %g, lambda %g: validation RMSE %.5f (%.0f s)" % (g, lam, cur.fetchone()[0], time.time() - t),
              flush=True)
    cur.execute("DROP TABLE kmb_grid_train, kmb_grid_valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
