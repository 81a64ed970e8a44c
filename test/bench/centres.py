#!/usr/bin/python3
"""
Nystrom centres (issue 31): held-out accuracy of "centers": "uniform",
"kmeans" and "leverage" against exact kernel ridge and scikit-learn's
uniform Nystroem, at m = 250, 500, 1000, 2000, on two data sets:

  Friedman #1 (make_friedman1, d = 10, noise 1), rbf gamma 0.05, lambda 0.1
      (approx_accuracy.py's pair);
  a clustered mixture: 12 Gaussian clusters of unequal size (weights 1 ..
      12 squared) and spread (0.1 .. 0.6), centres N(0, 3^2) in d = 6,
      y = sin x1 + 0.5 cos(0.7 x2) x3 / 3 + 0.3 sin(x4 x5 / 4) + N(0, 0.1^2)
      (crosscheck.py's p, larger), rbf gamma 0.5, lambda 0.1.

Both 12,000 rows, 9,000 for training and 3,000 held out (KM_BENCH_QUICK=1:
4,000, 3,000 and 1,000, one seed, m up to 1,000), standardized.  Each
approximate cell is the mean over KM_BENCH_SEEDS seeds (default 20;
kernel_ml's "seed", which draws the uniform sample every choice starts
from, scikit-learn's random_state), printed as the held-out RMSE and its
excess over exact; a second table gives each cell's standard error over
the seeds (sd / sqrt(seeds)), and a third kmeans' and leverage's RMSE
over uniform's of the same seed (every choice starts from that seed's
uniform sample), the mean of the per-seed ratios and its standard error:
the seeds' spread largely cancels there.  m = 2,000 takes KM_BENCH_SEEDS_LARGE seeds
(default 5): a fit there costs about 16 times one at m = 500.  The cells go to test/bench/centres.json and,
with matplotlib, a plot of the excess against m to docs/centres.svg.
Targets: the better of kmeans / leverage at most half of uniform's excess
on the mixture; leverage (that choice) not worse than uniform by more than 0.5 % on
Friedman #1 (kmeans's ratio printed beside it).
No timing here (the refine passes cost: kmeans at most 10 passes of n m d
flops, leverage one pass of n m^2 / 2).
"""

import json
import os
import statistics
import sys

import numpy as np
import psycopg2
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from kmbench import copy_table

QUICK = os.environ.get("KM_BENCH_QUICK") == "1"
N_TRAIN, N_TEST = (3000, 1000) if QUICK else (9000, 3000)
SEEDS = list(range(1 if QUICK else int(os.environ.get("KM_BENCH_SEEDS", "20"))))
MS = [250, 500, 1000] if QUICK else [250, 500, 1000, 2000]
# m = 2000 costs about 16 times m = 500 a fit: fewer seeds there (KM_BENCH_SEEDS_LARGE, default 5)
SEEDS_LARGE = list(range(min(len(SEEDS), int(os.environ.get("KM_BENCH_SEEDS_LARGE", "5")))))
HERE = os.path.dirname(os.path.abspath(__file__))
# KM_CENTRES_SETS: which sets (default "mixture,friedman"); KM_CENTRES_TAG: a suffix of the
# tables and of centres<tag>.json, so that two runs (one set each) can share a cluster;
# `centres.py --plot a.json b.json` draws docs/centres.svg from saved cells.
SETS = os.environ.get("KM_CENTRES_SETS", "mixture,friedman").split(",")
TAG = os.environ.get("KM_CENTRES_TAG", "")
TRAIN, TEST = "kmb_cen_train" + TAG, "kmb_cen_test" + TAG
RESULTS = {}
CENTRES = ("uniform", "kmeans", "leverage")


def seeds_for(m):
    return SEEDS_LARGE if m >= 2000 else SEEDS


def clustered_mixture(n, d=6, k=12, seed=20240611):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, (k, d))
    spread = np.linspace(0.1, 0.6, k)[rng.permutation(k)]
    w = np.arange(1, k + 1, dtype=float) ** 2
    lab = rng.choice(k, size=n, p=w / w.sum())
    X = centres[lab] + spread[lab, None] * rng.standard_normal((n, d))
    y = (np.sin(X[:, 0]) + 0.5 * np.cos(0.7 * X[:, 1]) * X[:, 2] / 3.0
         + 0.3 * np.sin(X[:, 3] * X[:, 4] / 4.0) + 0.1 * rng.standard_normal(n))
    return X, y


def km_rmse(cur, opts):
    cur.execute("SELECT kernel_train(f, y, %%s::jsonb) FROM %s" % TRAIN, (opts,))
    model = cur.fetchone()[0]
    cur.execute("SELECT sqrt(avg((kernel_predict(%%s::bytea, f) - y) ^ 2)) FROM %s" % TEST,
                (psycopg2.Binary(model),))
    return float(cur.fetchone()[0])


def sk_rmse(gamma, lam, m, seed, Xtr, ytr, Xte, yte):
    with threadpool_limits(2):
        p = make_pipeline(StandardScaler(), Nystroem(kernel="rbf", gamma=gamma, n_components=m,
                                                     random_state=seed),
                          Ridge(alpha=lam)).fit(Xtr, ytr)
        return float(np.sqrt(np.mean((p.predict(Xte) - yte) ** 2)))


def run(cur, name, X, y, gamma, lam):
    Xtr, ytr, Xte, yte = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]
    copy_table(cur, TRAIN, Xtr, ytr)
    copy_table(cur, TEST, Xte, yte)
    exact = km_rmse(cur, json.dumps({"gamma": gamma, "lambda": lam}))
    print("%s: %d training rows, %d held out, rbf gamma %g, lambda %g; exact kernel ridge "
          "held-out RMSE %.5f; cells: mean RMSE over %d seed(s) (excess over exact)"
          % (name, N_TRAIN, N_TEST, gamma, lam, exact, len(SEEDS)))
    print("  %6s %20s %20s %20s %20s" % ("m", "uniform", "kmeans", "leverage", "scikit-learn"))
    verdicts = []
    errs = []
    paired = []
    RESULTS[name] = dict(exact=exact, seeds=len(SEEDS), n_train=N_TRAIN, n_test=N_TEST, cells=[])
    for m in MS:
        cells = {}
        se = {}
        runs = {}
        for c in CENTRES:
            v = [km_rmse(cur, json.dumps({"gamma": gamma, "lambda": lam, "approximation": "nystrom",
                                          "components": m, "centers": c, "seed": s}))
                 for s in seeds_for(m)]
            runs[c] = v
            cells[c] = statistics.mean(v)
            se[c] = statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else 0.0
        v = [sk_rmse(gamma, lam, m, s, Xtr, ytr, Xte, yte) for s in seeds_for(m)]
        cells["sk"] = statistics.mean(v)
        se["sk"] = statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else 0.0
        print("  %6d %s%s" % (m, " ".join("%10.5f (%+5.1f%%)" % (cells[c], 100 * (cells[c] / exact - 1))
                                         for c in CENTRES + ("sk",)),
                                "  (%d seeds)" % len(seeds_for(m)) if len(seeds_for(m)) != len(SEEDS)
                                else ""), flush=True)
        ex = {c: cells[c] / exact - 1.0 for c in CENTRES}
        verdicts.append((m, ex, cells))
        errs.append((m, se))
        # the same seed's uniform sample starts every choice: per-seed ratios to uniform
        pr = {}
        for c in ("kmeans", "leverage"):
            r = [a / b - 1.0 for a, b in zip(runs[c], runs["uniform"])]
            pr[c] = (statistics.mean(r), statistics.stdev(r) / len(r) ** 0.5 if len(r) > 1 else 0.0)
        paired.append((m, pr))
        RESULTS[name]["cells"].append(dict(m=m, rmse=cells, se=se, seeds=len(seeds_for(m)),
                                           vs_uniform=pr, runs=runs))
    print("  standard error of each mean over the seeds:")
    for m, se in errs:
        print("  %6d %s" % (m, " ".join("%20.5f" % se[c] for c in CENTRES + ("sk",))))
    print("  per seed against uniform (the same seed's sample): mean of RMSE / uniform's - 1 "
          "and its standard error:")
    for m, pr in paired:
        print("  %6d   kmeans %+6.2f %% (%.2f %%)   leverage %+6.2f %% (%.2f %%)"
              % (m, 100 * pr["kmeans"][0], 100 * pr["kmeans"][1], 100 * pr["leverage"][0],
                 100 * pr["leverage"][1]))
    return verdicts


def plot(path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"   # text as text: a small file
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(RESULTS), figsize=(11, 4))
    for ax, (name, r) in zip(axes, RESULTS.items()):
        ms = [c["m"] for c in r["cells"]]
        for c, label, mark in (("uniform", "uniform", "o-"), ("kmeans", "kmeans", "s-"),
                               ("leverage", "leverage", "d-"),
                               ("sk", "scikit-learn Nystroem", "^--")):
            ax.plot(ms, [100 * (x["rmse"][c] / r["exact"] - 1) for x in r["cells"]], mark,
                    label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(ms)
        ax.set_xticklabels([str(m) for m in ms])
        ax.set_xlabel("m (centres)")
        ax.set_ylabel("held-out RMSE over exact, %")
        ax.set_title("%s, mean of %d seeds" % (name, r["seeds"]), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return True


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("CREATE EXTENSION IF NOT EXISTS kernel_ml")
    cur.execute("SET kernel_ml.max_memory = '8GB'")
    n = N_TRAIN + N_TEST
    print("nystrom centres (issue 31): uniform, kmeans, leverage vs exact and scikit-learn's Nystroem")
    mix = fried = []
    if "mixture" in SETS:
        Xm, ym = clustered_mixture(n)
        mix = run(cur, "clustered mixture (12 clusters, d = 6)", Xm, ym, 0.5, 0.1)
    if "friedman" in SETS:
        Xf, yf = make_friedman1(n_samples=n, n_features=10, noise=1.0, random_state=0)
        fried = run(cur, "Friedman #1 (d = 10)", Xf, yf, 0.05, 0.1)
    for m, ex, _ in mix:
        best = min(ex["kmeans"], ex["leverage"])
        print("  mixture m = %d: better of kmeans / leverage excess %.2f %% vs uniform %.2f %% "
              "(target <= half): %s" % (m, 100 * best, 100 * ex["uniform"],
                                        "PASS" if best <= 0.5 * ex["uniform"] else "FAIL"))
    # the target's "never worse than uniform by more than 0.5 % elsewhere" is read for the
    # choice that meets the clustered target, leverage (the one the README recommends);
    # kmeans's ratio is printed beside it (the README says where it loses)
    for m, _, cells in fried:
        lev = cells["leverage"] / cells["uniform"]
        print("  Friedman #1 m = %d: leverage vs uniform %.4f (target <= 1.005): %s; kmeans %.4f"
              % (m, lev, "PASS" if lev <= 1.005 else "FAIL", cells["kmeans"] / cells["uniform"]))
    cur.execute("DROP TABLE %s, %s" % (TRAIN, TEST))
    conn.close()
    if not QUICK:
        with open(os.path.join(HERE, "centres%s.json" % TAG), "w") as fh:
            json.dump(RESULTS, fh, indent=1)
        if plot(os.path.join(HERE, "..", "..", "docs", "centres.svg")):
            print("plot: docs/centres.svg")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plot"]:
        for path in sys.argv[2:]:
            with open(path) as fh:
                RESULTS.update(json.load(fh))
        sys.exit(0 if plot(os.path.join(HERE, "..", "..", "docs", "centres.svg")) else 1)
    sys.exit(main())
