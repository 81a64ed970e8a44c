#!/usr/bin/python3
"""
The default rbf gamma of exact models: 1 / d (scikit-learn's "scale" on
standardized features, kernel_ml 0.2.0) against kernlab's sigest (the mean
of 1 / the 0.9 and 0.1 quantiles of ||x - x'||^2 over pairs of standardized
rows; kernel_ml's default from 0.3.0), everything else at its default
(lambda 1 for ridge, C = 1 for svm).

Both columns are kernel_ml trained through SQL: "sigest" with no gamma (the
default), "1/d" with "gamma": 1/d given.  The reference columns are
scikit-learn's defaults on StandardScaler features: SVC() for classification,
KernelRidge(alpha = 1, gamma = 1/d) + mean(y) for regression (the same
model as kernel_ml's 1/d column).  Held-out accuracy (higher is better) or
RMSE (lower is better) on one fixed split per data set (a NumPy permutation,
70 % train).

    source /work/dev/devpg.sh NAME PORT
    psql -c "CREATE EXTENSION IF NOT EXISTS kernel_ml"
    /usr/bin/python3 test/bench/default_gamma.py
"""

import io
import json
import sys

import numpy as np
import psycopg2
from sklearn.datasets import (load_breast_cancer, load_diabetes, load_digits,
                              load_wine, make_friedman1)
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

SEED = 22


def sinc(lo, hi, step, noise, seed):
    x = np.arange(lo, hi + step / 2, step)
    y = np.sinc(x / np.pi) + noise * np.random.default_rng(seed).standard_normal(len(x))
    return x[:, None], y


def two_moons(n, seed):
    r = np.random.default_rng(seed)
    t = r.uniform(0, np.pi, n)
    c = r.integers(0, 2, n)
    X = np.column_stack([np.cos(t) + c, np.sin(t) * (1 - 2 * c) + 0.5 * c])
    return X + 0.15 * r.standard_normal((n, 2)), c


def datasets():
    out = []
    for name, loader in (("breast_cancer", load_breast_cancer), ("wine", load_wine),
                         ("digits", load_digits)):
        X, y = loader(return_X_y=True)
        out.append((name, "classification", X, y))
    X, y = two_moons(600, SEED)
    out.append(("two moons d=2", "classification", X, y))
    X, y = load_diabetes(return_X_y=True)
    out.append(("diabetes", "regression", X, y))
    X, y = make_friedman1(n_samples=1500, noise=1.0, random_state=SEED)
    out.append(("friedman1 d=10", "regression", X, y))
    X, y = sinc(-20.0, 20.0, 0.1, 0.03, SEED)   # kernlab's ksvm example
    out.append(("sinc [-20,20] d=1", "regression", X, y))
    X, y = sinc(-5.0, 5.0, 0.025, 0.03, SEED)
    out.append(("sinc [-5,5] d=1", "regression", X, y))
    return out


def copy_rows(cur, table, X, labels):
    buf = io.StringIO()
    for i, (row, t) in enumerate(zip(X.tolist(), labels)):
        buf.write("%d\t{%s}\t%s\n" % (i, ",".join(map(repr, row)), t))
    buf.seek(0)
    cur.copy_expert("COPY %s FROM STDIN" % table, buf)


def held_out(cur, task, opts):
    """kernel_ml's held-out accuracy or RMSE, and the model's gamma."""
    if task == "classification":
        cur.execute("SELECT kernel_train(f, t, %s::jsonb) FROM kmdg_train", (json.dumps(opts),))
    else:
        cur.execute("SELECT kernel_train(f, t::float8, %s::jsonb) FROM kmdg_train", (json.dumps(opts),))
    model = cur.fetchone()[0]
    cur.execute("SELECT kernel_model_info(%s)->>'gamma'", (model,))
    gamma = float(cur.fetchone()[0])
    if task == "classification":
        cur.execute("SELECT avg((kernel_predict_class(%s, f) = t)::int) FROM kmdg_test", (model,))
    else:
        cur.execute("SELECT sqrt(avg((kernel_predict(%s, f) - t::float8) ^ 2)) FROM kmdg_test", (model,))
    return float(cur.fetchone()[0]), gamma


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    rows = []
    for name, task, X, y in datasets():
        idx = np.random.RandomState(SEED).permutation(len(y))
        ntr = int(0.7 * len(y))
        tr, te = idx[:ntr], idx[ntr:]
        d = X.shape[1]
        for t in ("kmdg_train", "kmdg_test"):
            cur.execute("DROP TABLE IF EXISTS %s" % t)
            cur.execute("CREATE TABLE %s (id int, f float8[], t text)" % t)
        labels = ["c%d" % v for v in y] if task == "classification" else [repr(float(v)) for v in y]
        copy_rows(cur, "kmdg_train", X[tr], [labels[i] for i in tr])
        copy_rows(cur, "kmdg_test", X[te], [labels[i] for i in te])
        base = {"method": "svm"} if task == "classification" else {}
        new, g_new = held_out(cur, task, base)
        old, _ = held_out(cur, task, dict(base, gamma=1.0 / d))
        if task == "classification":
            ref = make_pipeline(StandardScaler(), SVC()).fit(X[tr], y[tr]).score(X[te], y[te])
            refname = "SVC()"
        else:
            ym = y[tr].mean()
            kr = make_pipeline(StandardScaler(), KernelRidge(alpha=1.0, kernel="rbf", gamma=1.0 / d))
            pred = kr.fit(X[tr], y[tr] - ym).predict(X[te]) + ym
            ref = float(np.sqrt(np.mean((pred - y[te]) ** 2)))
            refname = "KernelRidge(1/d)"
        rows.append((name, task, len(tr), d, 1.0 / d, g_new, old, new, ref, refname))
    for t in ("kmdg_train", "kmdg_test"):
        cur.execute("DROP TABLE IF EXISTS %s" % t)
    conn.close()

    print("| data set | task | n train | d | gamma 1/d | gamma sigest | 1/d | sigest | scikit-learn |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, task, n, d, g_old, g_new, old, new, ref, refname in rows:
        metric = "accuracy" if task == "classification" else "RMSE"
        print("| %s | %s (%s) | %d | %d | %.4g | %.4g | %.4f | %.4f | %s %.4f |"
              % (name, task, metric, n, d, g_old, g_new, old, new, refname, ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
