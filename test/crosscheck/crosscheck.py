#!/usr/bin/python3
"""
Cross-check kernel_ml against scikit-learn and NumPy.

Run with Debian's Python (it has numpy, scipy, scikit-learn and psycopg2)
against a database where CREATE EXTENSION kernel_ml has been done; the
connection comes from the libpq environment (PGHOST, PGPORT, ...):

    pg_virtualenv sh -c 'psql -c "create extension kernel_ml" &&
                         /usr/bin/python3 test/crosscheck/crosscheck.py'

All data go through tables and SQL (COPY in, kernel_train / kernel_predict /
kernel_matrix / kernel_eval out); nothing of our model is evaluated in
Python.  Prints one "ok - ..." / "not ok - ..." line per check, then
"N passed, N failed"; exits 1 if any check failed.

Checks:
  a. ridge (standardize and fit_intercept false) vs sklearn KernelRidge, six
     kernels, on diabetes and on a synthetic n = 2000, d = 10 set; the
     default options (leave-one-out among gamma 1/(4d), 1/d, sigest and
     lambda 0.01, 0.1, 1) vs NumPy's closed-form leave-one-out scores and
     winner, then Pipeline(StandardScaler, KernelRidge) + mean(y) at the
     winner; the sigest candidate equals kernlab's sigest over every pair of
     standardized rows computed in NumPy (diabetes, 342 rows; within 5 % on
     the 2000 rows, where 1000 rows chosen by row hash give the pairs).
  b. kernel_matrix vs sklearn pairwise_kernels (and NumPy for min and
     polysum), kernel_eval on a few pairs.
  c. polysum degree 3 vs the explicit cubic feature map.
  d. lms, lambda 0, fixed learning_rate, 5 iterations vs the NumPy
     recurrence; kernel_model_info iterations.
  e. lms, lambda 1, automatic learning_rate, to convergence vs ridge.
  f. int[], real[] and numeric[] features vs float8[].
  g. kernel_model_export: an exact model of every kernel (and an lms one),
     scored in NumPy from the exported numbers alone, vs kernel_predict.
  h. approximate models (issue 12): nystrom vs NumPy normal equations and
     scikit-learn's Nystroem + Ridge; two passes vs one statement.
  i. classification (issue 13): binary svm on breast cancer (standardize
     off, rbf) vs SVC(C = 1/(n lambda), tol 1e-6): decision values within
     1e-4 relative to the largest, the same number of support vectors;
     kernel logistic regression probabilities vs a direct SciPy
     minimisation of the same objective (1e-6); wine (3 classes) and digits
     (10) held-out accuracy at most 1 point below SVC with the same kernel
     and C, and probabilities summing to 1 within 1e-12.
  j. approximate classifiers: nystrom (m = 100) and rff logistic, nystrom
     L2-SVM (squared hinge) on breast cancer (standardize on): probabilities
     / decision values within 1e-6 of a SciPy trust-exact minimisation of
     the same objective on the features rebuilt from kernel_model_export
     (nystrom: L^-1 k(C, x), L = chol(K_mm + eps I)); held-out accuracy within
     2 points of StandardScaler + Nystroem(m) + LogisticRegression / LinearSVC
     at C = 1/(n lambda) (LinearSVC penalizes its intercept; ours is not);
     wine and digits one-vs-rest: probabilities sum to 1 within 1e-12 and
     equal per-class SciPy fits normalized (1e-6); every model scored in NumPy
     from kernel_model_export equals kernel_predict(_proba) within 1e-10.
  k. default classifiers (issue 22): kernel_train(f, label) with only "method"
     given, on breast cancer, wine and digits (one fixed permutation, 70 %
     train), vs Pipeline(StandardScaler, SVC()) with scikit-learn's defaults
     (C = 1, gamma "scale"): held-out accuracy within 0.03 for svm; logistic
     vs StandardScaler + Nystroem(n_components = every training row, the
     model's own gamma) + LogisticRegression(C = 1), which is exact kernel
     logistic regression at C = 1, within 0.03; kernel_model_info's lambda
     is 1 / n_train (C = 1) and its gamma the resolved default.
  l. epsilon-SVR (issue 23 point 8): "method": "svr", epsilon 0.1, tol 1e-6
     at a fixed gamma (1 / d, scikit-learn's "scale" on standardized rows)
     on diabetes and on the synthetic set vs StandardScaler + SVR(C = 1,
     epsilon = 0.1, tol = 1e-6, same gamma) (kernel_ml standardizes by the
     population standard deviation, as StandardScaler): held-out predictions
     within 1e-4 relative to the largest |prediction|, the same number of
     support vectors; the default options (C = 1, epsilon 0.1, tol 1e-3,
     gamma sigest) vs SVR() at the model's gamma within 1e-3, lambda
     1 / n_train; held-out RMSE of the defaults vs StandardScaler + SVR()
     (gamma "scale") reported, within 25 %; epsilon 0.1 sd, lambda
     1 / (n sd), tol 1e-6 sd (the README's recipe for a target of any
     spread) vs TransformedTargetRegressor(SVR(tol = 1e-6), StandardScaler())
     within 1e-4, the same support set, held-out RMSEs reported.
  m. approximate epsilon-SVR: nystrom (m = 100) and rff (m = 200), "tol"
     1e-10, on the data sets of l (epsilon 30 and 0.4, tubes that hold about
     a third of the rows): held-out predictions within 1e-6 (relative
     to the largest |prediction|) of a SciPy trust-exact minimisation of the
     same objective, LIBLINEAR's L2-loss epsilon-SVR
     (1/n) sum max(0, |y - z w - b| - eps)^2 + (lambda/2) ||w||^2 (b not
     penalized), on the features rebuilt from kernel_model_export.
  n. kernel_evaluate (issue 30): on held-out rows of diabetes (ridge),
     breast cancer (logistic; svm without probabilities) and wine (svm with
     Platt probabilities, 3 classes), every measure vs sklearn.metrics on
     the per-row kernel_predict / kernel_predict_class / kernel_predict_proba
     values within 1e-9: mean_squared_error (root), mean_absolute_error,
     r2_score, accuracy_score, balanced_accuracy_score, log_loss (labels =
     the model's classes), roc_auc_score (p(classes[1]), or the decision
     value), confusion_matrix, precision_recall_fscore_support (zero_division
     0); GROUP BY per group; kernel_predict_matrix fed a 2-D list by psycopg2
     vs kernel_predict within 1e-12 relative.
  o. training from a table (issue 30): diabetes as a table with NULLs
     injected (about 10 % of bmi, bp, s5, a boolean and two text columns),
     sex as text, a text band of s1 (with a category the training rows never
     have in the held-out rows) and a boolean; kernel_train(row, 'y', {"impute":
     mean | median | most_frequent, gamma, lambda}) on 300 rows and
     kernel_predict(model, row) of the other 142 (columns in another order,
     an extra one) vs ColumnTransformer(SimpleImputer(strategy) on the
     numbers and booleans, SimpleImputer(most_frequent) + OneHotEncoder(
     handle_unknown="ignore") on the text) + StandardScaler +
     KernelRidge(rbf, same gamma, alpha = lambda) + mean(y): within 1e-9.
  p. nystrom centres (issue 31): on a clustered mixture (12 Gaussian clusters
     of unequal size and spread, d = 6, 3000 training rows, m = 200, gamma
     0.5, lambda 0.1), "centers": "kmeans" vs NumPy's Lloyd iterations
     (centres.h's rules) from the uniform model's centres (the same seed):
     within 1e-10; "leverage" centres are distinct training rows, the first
     k the uniform model's and the rest with NumPy ridge leverage scores
     (from the uniform sketch) above the rows' average, k and the scores'
     lambda from the rule computed in NumPy (centres.h: lambda_s the first
     lambda 2^(g/2) whose scores sum to at most m, k = floor(m ess));
     held-out RMSE over exact for uniform, kmeans and leverage reported; the
     better of kmeans / leverage at most half uniform's excess; on Friedman #1
     (gamma 0.05, lambda 1e-3) neither worse than uniform by 0.5 %.  (The
     leverage scores themselves: test/unit/test_centres.c vs NumPy.)
  q. the Gaussian-process reading of ridge (issue 32): kernel_predict_std on
     held-out and training rows, kernel_model_info's amplitude and
     log_marginal_likelihood vs GaussianProcessRegressor(ConstantKernel(s2) *
     RBF(l) + WhiteKernel(s2 lambda), optimizer=None, alpha=0) on the
     standardized rows and centred target (s2 from NumPy), diabetes (200
     rows) and a synthetic set (250 rows, d = 4): within 1e-8 relative;
     "cv": "evidence": every candidate's score is minus that likelihood at
     its gamma and lambda (3 x 3 and 3 x 10 grids: both closed-form routes),
     and the winner is its largest.  Approximate ridge (360 rows, d = 5):
     nystrom (m = 60) vs NumPy's DTC sparse GP and rff (D = 120) vs NumPy's
     Bayesian linear regression on the exported features: std, amplitude and
     likelihood within 1e-8 (check_gp_approx); kernel_predict_std_matrix
     the same within 1e-8, exact and approximate; their "cv": "evidence" over 5
     lambdas: every candidate's score is minus NumPy's likelihood (1e-8) and
     the winner is the brute force over refits with "uncertainty": true.
  r. the drift test (issue 32, item 4): kernel_model_drift on named exact
     (rbf on diabetes, linear on d = 3: dof 3), nystrom and rff models vs a
     NumPy reimplementation from kernel_model_export (drift_numpy): statistic
     and p-value within 1e-8 relative; the test's size at alpha 0.01 in
     NumPy over 1000 seeds within [0.005, 0.02].
  s. kernel PCA (issue 32): kernel_fit(features, {"method": "pca"}) and
     kernel_transform vs KernelPCA(kernel, n_components = k,
     eigen_solver = "dense") on StandardScaler'd rows (kernel_ml's
     standardize: population scale), iris (rbf, k = 3; 120 rows fitted, 30
     held out) and wine (rbf and poly, k = 5; 140 + 38), and iris with the defaults (rbf, gamma
     1 / d, k = 2), and digits (rbf, k = 2 and 16; 1,600 + 197: from 1,500
     rows the block Lanczos solver, not dsyevr): coordinates of the
     held-out and training rows within 1e-8 relative after aligning each
     component's sign, kernel_model_info's eigenvalues vs eigenvalues_
     within 1e-8, explained_variance_ratio vs NumPy's eigenvalues over the
     trace of the centred Gram matrix; nystrom with components >= n equals
     the exact model's coordinates within 1e-6 (signs aligned).
  t. one-class SVM (issue 32): kernel_fit(features, {"method": "oneclass"}),
     kernel_predict and kernel_predict_class vs OneClassSVM(nu, gamma,
     tol = 1e-6) on StandardScaler'd rows: breast_cancer (defaults: nu 0.5,
     gamma 1 / d, scikit-learn's 'scale' on standardized rows), wine (nu 0.1,
     gamma 0.05) and 2-d blobs with 5 % uniform outliers (nu 0.05, gamma
     0.5), held-out and training rows: decision values within 1e-3 relative,
     labels equal, n_support; nystrom with components >= n vs exact within
     1e-4; nystrom (m = 20) and rff (m = 30) vs SciPy's SLSQP solve of the
     primal 1/2 ||w||^2 - rho + 1/(nu n) sum max(0, rho - w'z_i) on the
     exported features within 1e-3.
  Run only o with: crosscheck.py tables; only p: crosscheck.py centres
  Run only i and j with: crosscheck.py classify; only j: crosscheck.py approx_classify;
  only k: crosscheck.py defaults; only l and m: crosscheck.py svr;
  only n: crosscheck.py evaluate; only q: crosscheck.py gp; only r: crosscheck.py drift;
  only s: crosscheck.py kpca; only t: crosscheck.py oneclass
"""

import io
import json
import sys
import time

import numpy as np
import psycopg2
from sklearn.datasets import load_diabetes
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

SEED = 20240611
TABLES = ("kmcc_train", "kmcc_test", "kmcc_models", "kmcc_types", "kmcc_cls", "kmcc_ev", "kmcc_table")

passed = 0
failed = 0


def report(ok, name, detail):
    global passed, failed
    if ok:
        passed += 1
        print("ok - %s: %s" % (name, detail), flush=True)
    else:
        failed += 1
        print("not ok - %s: %s" % (name, detail), flush=True)


def rel_err(a, b):
    """max |a - b| / max |b|; inf on a shape mismatch, nan on NULL."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def abs_err(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)))


def compare(name, got, want, tol, kind="rel"):
    """One check: kind "rel" (max|a-b|/max|b|) or "abs" (max|a-b|) <= tol."""
    err = rel_err(got, want) if kind == "rel" else abs_err(got, want)
    ok = err <= tol                     # False for nan
    word = "relative" if kind == "rel" else "absolute"
    if ok:
        report(True, name, "max %s error %.3g (tol %g)" % (word, err, tol))
    else:
        detail = "worst %s error %.6g > tol %g" % (word, err, tol)
        g = np.asarray(got, dtype=float)
        w = np.asarray(want, dtype=float)
        if g.shape == w.shape and g.size and np.all(np.isfinite(g)):
            i = np.unravel_index(np.argmax(np.abs(g - w)), g.shape)
            detail += " (at %s: got %r, expected %r)" % (
                tuple(int(k) for k in i), float(g[i]), float(w[i]))
        elif g.shape != w.shape:
            detail += " (shape %s, expected %s)" % (g.shape, w.shape)
        report(False, name, detail)
    return ok


def sql_failed(name, exc):
    msg = (getattr(exc, "pgerror", None) or str(exc)).strip().replace("\n", " | ")
    report(False, name, "SQL error: %s" % msg)


def check(name):
    """Decorator-ish runner: a SQL error inside fn is one failed check."""
    def run(fn):
        try:
            fn()
        except psycopg2.Error as exc:
            sql_failed(name, exc)
        except Exception as exc:        # e.g. no row where one was expected
            report(False, name, "%s: %s" % (type(exc).__name__, exc))
    return run


# ---------------------------------------------------------------- SQL I/O

def arr_text(row):
    return "{" + ",".join(repr(float(v)) for v in row) + "}"


def copy_rows(cur, ds, table, X, y=None):
    buf = io.StringIO()
    for i, row in enumerate(X):
        if table == "kmcc_train":
            buf.write("%s\t%d\t%s\t%r\n" % (ds, i, arr_text(row), float(y[i])))
        else:
            buf.write("%s\t%d\t%s\n" % (ds, i, arr_text(row)))
    buf.seek(0)
    cols = "(ds, id, f, y)" if table == "kmcc_train" else "(ds, id, f)"
    cur.copy_expert("COPY %s %s FROM STDIN" % (table, cols), buf)


def load(cur, ds, Xtr, ytr, Xte=None):
    copy_rows(cur, ds, "kmcc_train", Xtr, ytr)
    if Xte is not None:
        copy_rows(cur, ds, "kmcc_test", Xte)


def train(cur, name, ds, opts):
    """Train a model on dataset ds into kmcc_models; opts None = 2-arg form."""
    cur.execute("DELETE FROM kmcc_models WHERE name = %s", (name,))
    if opts is None:
        cur.execute("INSERT INTO kmcc_models (name, model) "
                    "SELECT %s, kernel_train(f, y) FROM kmcc_train WHERE ds = %s",
                    (name, ds))
    else:
        cur.execute("INSERT INTO kmcc_models (name, model) "
                    "SELECT %s, kernel_train(f, y, %s::jsonb) FROM kmcc_train "
                    "WHERE ds = %s", (name, json.dumps(opts), ds))


def predict(cur, name, ds):
    cur.execute("SELECT kernel_predict(m.model, t.f) "
                "FROM kmcc_test t, kmcc_models m "
                "WHERE m.name = %s AND t.ds = %s ORDER BY t.id", (name, ds))
    return np.array([np.nan if r[0] is None else r[0] for r in cur.fetchall()])


def model_info(cur, name):
    cur.execute("SELECT kernel_model_info(model) FROM kmcc_models WHERE name = %s",
                (name,))
    info = cur.fetchone()[0]
    return info if isinstance(info, dict) else json.loads(info)


def gram(cur, ds, opts, nrows):
    cur.execute("SELECT kernel_matrix(f, %s::jsonb ORDER BY id) FROM kmcc_train "
                "WHERE ds = %s AND id < %s", (json.dumps(opts), ds, nrows))
    return np.array(cur.fetchone()[0], dtype=float)


# ---------------------------------------------------------------- data

def datasets():
    Xd, yd = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(SEED)
    perm = rng.permutation(len(yd))
    dia = (Xd[perm[:342]], yd[perm[:342]], Xd[perm[342:]])

    X = rng.standard_normal((2500, 10))
    y = (np.sin(2.0 * X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] - 0.3 * X[:, 3]
         + 0.1 * rng.standard_normal(2500) + 3.0)
    syn = (X[:2000], y[:2000], X[2000:])

    # cubic feature map check (c): small, N(0, 1) so all orders matter
    cub = rng.standard_normal((40, 6))

    # lms recurrence (d)
    Xl = rng.uniform(-1.0, 1.0, (400, 5))
    yl = np.cos(3.0 * Xl[:, 0]) + Xl[:, 1] ** 2 + 0.05 * rng.standard_normal(400)
    lms = (Xl[:300], yl[:300], Xl[300:])

    # lms convergence (e): K + I well enough conditioned for 5000 steps
    Xe = rng.standard_normal((500, 5)) * np.array([1.0, 2.0, 0.5, 10.0, 1.0]) + 5.0
    ye = np.tanh(Xe[:, 0] - 5.0) + 0.1 * Xe[:, 3] + 0.05 * rng.standard_normal(500)
    conv = (Xe[:400], ye[:400], Xe[400:])

    # implicit casts (f): small integers, exact in int, real, numeric, float8
    Xt = rng.integers(-5, 6, (240, 4)).astype(float)
    yt = Xt[:, 0] - 0.5 * Xt[:, 1] * Xt[:, 2] + 0.25 * rng.standard_normal(240)
    types = (Xt, yt)
    return dia, syn, cub, lms, conv, types


# Kernel parameters per data set: the raw diabetes features are ~0.05 in
# size, the synthetic ones ~1.  All keep K + lambda I comfortably positive
# definite with lambda = 1 (checked below before comparing).
RIDGE_KERNELS = {
    "dia": [
        {"kernel": "linear"},
        {"kernel": "poly", "gamma": 10.0, "degree": 3, "coef0": 1.0},
        {"kernel": "rbf", "gamma": 10.0},
        {"kernel": "laplacian", "gamma": 2.0},
        {"kernel": "sigmoid", "gamma": 10.0, "coef0": 0.1},
        {"kernel": "cosine"},
    ],
    "syn": [
        {"kernel": "linear"},
        {"kernel": "poly", "gamma": 0.1, "degree": 3, "coef0": 1.0},
        {"kernel": "rbf", "gamma": 0.1},
        {"kernel": "laplacian", "gamma": 0.1},
        {"kernel": "sigmoid", "gamma": 0.01, "coef0": 0.5},
        {"kernel": "cosine"},
    ],
}


def sk_params(opts):
    """pairwise_kernels / KernelRidge keyword arguments of our options."""
    return {k: opts[k] for k in ("gamma", "degree", "coef0") if k in opts}


def kname(opts):
    params = ",".join("%s=%s" % (k, v) for k, v in opts.items() if k != "kernel")
    return "%s(%s)" % (opts["kernel"], params) if params else opts["kernel"]


# NumPy references for the two kernels sklearn does not have.
def min_kernel(X, Z):
    return np.minimum(X[:, None, :], Z[None, :, :]).sum(axis=2)


def polysum_kernel(X, Z, degree=3):
    G = X @ Z.T
    out = np.zeros_like(G)
    for k in range(degree + 1):
        out += G ** k
    return out


def reference_kernel(opts, X, Z):
    k = opts["kernel"]
    if k == "min":
        return min_kernel(X, Z)
    if k == "polysum":
        return polysum_kernel(X, Z, opts.get("degree", 3))
    return pairwise_kernels(X, Z, metric=k, **sk_params(opts))


def cubic_features(X):
    n, d = X.shape
    x2 = np.einsum("ni,nj->nij", X, X).reshape(n, d * d)
    x3 = np.einsum("ni,nj,nk->nijk", X, X, X).reshape(n, d * d * d)
    return np.hstack([np.ones((n, 1)), X, x2, x3])


# ---------------------------------------------------------------- checks

def check_ridge(cur, data):
    """(a) ridge vs sklearn KernelRidge."""
    for ds, (Xtr, ytr, Xte) in data.items():
        for kopts in RIDGE_KERNELS[ds]:
            opts = dict(kopts, method="ridge", **{"lambda": 1.0},
                        standardize=False, fit_intercept=False)
            name = "a ridge %s on %s (n=%d, d=%d, %d held out)" % (
                kname(kopts), ds, len(ytr), Xtr.shape[1], len(Xte))
            K = pairwise_kernels(Xtr, metric=kopts["kernel"], **sk_params(kopts))
            mineig = np.linalg.eigvalsh(K)[0] + 1.0
            assert mineig > 0.1, "test setup: K + I not PD for %s" % name
            want = KernelRidge(alpha=1.0, kernel=kopts["kernel"],
                               **sk_params(kopts)).fit(Xtr, ytr).predict(Xte)

            @check(name)
            def _():
                train(cur, "ridge", ds, opts)
                compare(name, predict(cur, "ridge", ds), want, 1e-8)

        # default options: standardize, fit_intercept, rbf, and gamma and lambda
        # chosen by exact leave-one-out among gamma 1/(4d), 1/d and kernlab's
        # sigest of the standardized rows (every pair up to 1000 rows) and
        # lambda 0.01, 0.1, 1 (issue 30)
        d = Xtr.shape[1]
        ym = ytr.mean()
        Xs = StandardScaler().fit_transform(Xtr)
        g_np = sigest_all_pairs(Xs)
        form = "kernel_train(f, y)" if ds == "dia" else "kernel_train(f, y, '{}')"
        name = "a ridge default options %s on %s vs StandardScaler+KernelRidge(rbf) at NumPy's leave-one-out winner+mean(y)" % (
            form, ds)

        def run(ds=ds, form=form, name=name, g_np=g_np, ym=ym, Xs=Xs, Xtr=Xtr, ytr=ytr, Xte=Xte, d=d):
            train(cur, "default", ds, None if ds == "dia" else {})
            info = model_info(cur, "default")
            cands = info["selection"]["candidates"]
            gamma = float(cands[-1]["gamma"])        # the grid's last gamma: sigest
            if len(ytr) <= 1000:
                compare("%s: sigest candidate vs NumPy sigest over every pair" % name, [gamma], [g_np], 1e-12)
            else:
                # beyond 1000 rows the pairs are those of 1000 rows chosen by row hash
                report(abs(gamma / g_np - 1.0) <= 0.05, "%s: sigest candidate near NumPy sigest over every pair" % name,
                       "gamma %.6g, all %d rows %.6g, 1/d %.6g (within 5%%)" % (gamma, len(ytr), g_np, 1.0 / d))
            grid = [(g, lam) for g in (0.25 / d, 1.0 / d, gamma) for lam in (0.01, 0.1, 1.0)]
            got = [(float(c["gamma"]), float(c["lambda"])) for c in cands]
            compare("%s: candidates" % name, np.array(got).ravel(), np.array(grid).ravel(), 1e-15)
            yc = ytr - ym
            scores = []
            for g, lam in grid:
                A = np.linalg.inv(rbf(Xs, Xs, g) + lam * np.eye(len(yc)))
                scores.append(float(np.mean(((A @ yc) / np.diag(A)) ** 2)))
            compare("%s: leave-one-out MSE vs NumPy" % name, [float(c["score"]) for c in cands], scores, 1e-10)
            best = min(range(len(grid)), key=lambda i: (scores[i], -grid[i][1], grid[i][0]))
            report(info["selection"]["best"] == best and float(info["gamma"]) == grid[best][0]
                   and float(info["lambda"]) == grid[best][1], "%s: winner" % name,
                   "best %d (gamma %.6g, lambda %g), NumPy's %d" % (info["selection"]["best"], float(info["gamma"]),
                                                                   float(info["lambda"]), best))
            g, lam = grid[best]
            pipe = make_pipeline(StandardScaler(), KernelRidge(alpha=lam, kernel="rbf", gamma=g))
            want = pipe.fit(Xtr, ytr - ym).predict(Xte) + ym
            compare(name, predict(cur, "default", ds), want, 1e-8)

        check(name)(run)


def sigest_all_pairs(Xs):
    """kernlab's sigest over every pair of rows: the mean of 1 / the 0.9 and 0.1
    quantiles (np.quantile's default, R's type 7) of the nonzero squared distances."""
    D = np.concatenate([((Xs[i + 1:] - Xs[i]) ** 2).sum(axis=1) for i in range(len(Xs) - 1)])
    D = D[D > 0]
    q = np.quantile(D, [0.9, 0.1])
    return 0.5 * (1.0 / q[0] + 1.0 / q[1])


def check_extra_kernels_ridge(cur, data):
    """(a, extra) ridge with min and polysum vs KernelRidge(precomputed)."""
    for ds, (Xtr, ytr, Xte) in data.items():
        for kopts in ({"kernel": "polysum", "degree": 2}, {"kernel": "min"}):
            if kopts["kernel"] == "min":
                # min is positive semi-definite on non-negative data only
                shift = -min(Xtr.min(), Xte.min())
                Xtr_, Xte_ = Xtr + shift, Xte + shift
                dsx = ds + "+"
            else:
                Xtr_, Xte_, dsx = Xtr, Xte, ds
            opts = dict(kopts, method="ridge", **{"lambda": 1.0},
                        standardize=False, fit_intercept=False)
            name = "a ridge %s on %s vs KernelRidge(kernel='precomputed')" % (
                kname(kopts), dsx)
            K = reference_kernel(kopts, Xtr_, Xtr_)
            want = KernelRidge(alpha=1.0, kernel="precomputed").fit(K, ytr).predict(
                reference_kernel(kopts, Xte_, Xtr_))

            @check(name)
            def _():
                if dsx != ds:
                    load(cur, dsx, Xtr_, ytr, Xte_)
                train(cur, "extra", dsx, opts)
                compare(name, predict(cur, "extra", dsx), want, 1e-8)


def check_gram(cur, Xd):
    """(b) kernel_matrix and kernel_eval vs pairwise_kernels / NumPy."""
    X = Xd[:300]
    cases = [
        {"kernel": "linear"},
        {"kernel": "poly", "gamma": 10.0, "degree": 3, "coef0": 1.0},
        {"kernel": "poly", "gamma": 0.5, "degree": 5, "coef0": -0.25},
        {"kernel": "poly"},
        {"kernel": "rbf", "gamma": 10.0},
        {"kernel": "rbf"},
        {"kernel": "laplacian", "gamma": 2.0},
        {"kernel": "laplacian"},
        {"kernel": "sigmoid", "gamma": 10.0, "coef0": 0.1},
        {"kernel": "sigmoid"},
        {"kernel": "cosine"},
        {"kernel": "min"},
        {"kernel": "polysum", "degree": 2},
        {"kernel": "polysum"},
    ]
    for opts in cases:
        ref = "NumPy" if opts["kernel"] in ("min", "polysum") else "pairwise_kernels"
        name = "b kernel_matrix %s on 300 diabetes rows vs %s" % (kname(opts), ref)
        want = reference_kernel(opts, X, X)

        @check(name)
        def _():
            compare(name, gram(cur, "dia", opts, 300), want, 1e-12, kind="abs")

    # kernel_matrix with empty options is rbf with gamma 1/d
    name = "b kernel_matrix with options '{}' vs pairwise_kernels(rbf, gamma=1/d)"

    @check(name)
    def _():
        compare(name, gram(cur, "dia", {}, 300),
                pairwise_kernels(X, metric="rbf", gamma=0.1), 1e-12, kind="abs")

    # kernel_eval on a few pairs, every kernel, including x = z
    pairs = [(0, 0), (0, 1), (5, 17), (42, 299), (123, 7), (250, 250)]
    for opts in cases + [{}]:
        ref_opts = opts if opts else {"kernel": "rbf"}
        want = [reference_kernel(ref_opts, X[i:i + 1], X[j:j + 1])[0, 0]
                for i, j in pairs]
        name = "b kernel_eval %s on %d pairs" % (
            kname(opts) if opts else "options '{}'", len(pairs))

        @check(name)
        def _():
            got = []
            for i, j in pairs:
                cur.execute("SELECT kernel_eval(%s::float8[], %s::float8[], %s::jsonb)",
                            (list(map(float, X[i])), list(map(float, X[j])),
                             json.dumps(opts)))
                got.append(cur.fetchone()[0])
            compare(name, np.array(got, dtype=float), want, 1e-12, kind="abs")

    name = "b kernel_eval(x, z) two-argument form (rbf, gamma=1/d)"
    want = [pairwise_kernels(X[i:i + 1], X[j:j + 1], metric="rbf")[0, 0]
            for i, j in pairs]

    @check(name)
    def _():
        got = []
        for i, j in pairs:
            cur.execute("SELECT kernel_eval(%s::float8[], %s::float8[])",
                        (list(map(float, X[i])), list(map(float, X[j]))))
            got.append(cur.fetchone()[0])
        compare(name, np.array(got, dtype=float), want, 1e-12, kind="abs")


def check_cubic(cur, C):
    """(c) polysum degree 3 = <phi(x), phi(z)> for the explicit cubic map."""
    Phi = cubic_features(C)
    assert Phi.shape[1] == 1 + 6 + 36 + 216
    want = Phi @ Phi.T
    opts = {"kernel": "polysum", "degree": 3}
    name = "c kernel_matrix polysum(degree=3) vs explicit cubic feature map (n=%d, d=%d, %d coordinates)" % (
        C.shape[0], C.shape[1], Phi.shape[1])

    @check(name)
    def _():
        compare(name, gram(cur, "cubic", opts, len(C)), want, 1e-10)

    pairs = [(0, 0), (0, 1), (3, 9), (17, 39), (25, 25)]
    name = "c kernel_eval polysum(degree=3) vs explicit cubic feature map on %d pairs" % len(pairs)

    @check(name)
    def _():
        got = []
        for i, j in pairs:
            cur.execute("SELECT kernel_eval(%s::float8[], %s::float8[], %s::jsonb)",
                        (list(map(float, C[i])), list(map(float, C[j])), json.dumps(opts)))
            got.append(cur.fetchone()[0])
        compare(name, np.array(got, dtype=float),
                np.array([Phi[i] @ Phi[j] for i, j in pairs]), 1e-10)


def lms_recurrence(K, y, a, lam, steps):
    beta = np.zeros(len(y))
    for _ in range(steps):
        beta = beta + a * (y - (K @ beta + lam * beta))
    return beta


def check_lms_steps(cur, Xtr, ytr, Xte):
    """(d) lms, lambda 0, fixed learning rate, exactly 5 steps."""
    a = 0.01
    kopts = {"kernel": "rbf", "gamma": 0.5}
    for std in (False, True):
        opts = dict(kopts, method="lms", **{"lambda": 0.0}, learning_rate=a,
                    max_iter=5, tol=0.0, standardize=std, fit_intercept=std)
        if std:
            sc = StandardScaler().fit(Xtr)
            A, B, ym = sc.transform(Xtr), sc.transform(Xte), ytr.mean()
        else:
            A, B, ym = Xtr, Xte, 0.0
        K = pairwise_kernels(A, metric="rbf", gamma=0.5)
        beta = lms_recurrence(K, ytr - ym, a, 0.0, 5)
        want = pairwise_kernels(B, A, metric="rbf", gamma=0.5) @ beta + ym
        tag = "standardize/fit_intercept %s" % ("true" if std else "false")
        name = "d lms lambda=0 learning_rate=%g max_iter=5 tol=0 (%s) vs NumPy recurrence" % (a, tag)
        mname = "lms5" + ("s" if std else "")

        @check(name)
        def _():
            train(cur, mname, "lms", opts)
            compare(name, predict(cur, mname, "lms"), want, 1e-10)

        name = "d kernel_model_info of that lms model (%s): iterations = 5" % tag

        @check(name)
        def _():
            info = model_info(cur, mname)
            it = info.get("iterations")
            lr = info.get("learning_rate")
            ok = it == 5 and lr is not None and abs(float(lr) - a) <= 1e-15
            report(ok, name, "iterations %r, learning_rate %r, converged %r" % (
                it, lr, info.get("converged")))


def check_lms_converges(cur, Xtr, ytr, Xte):
    """(e) lms with lambda 1 and the automatic rate converges to ridge."""
    kopts = {"kernel": "rbf", "gamma": 0.3}
    sc = StandardScaler().fit(Xtr)
    w = np.linalg.eigvalsh(pairwise_kernels(sc.transform(Xtr), metric="rbf", gamma=0.3))
    kappa = (w[-1] + 1.0) / (w[0] + 1.0)
    lms_opts = dict(kopts, method="lms", **{"lambda": 1.0}, max_iter=5000, tol=1e-12)
    ridge_opts = dict(kopts, method="ridge", **{"lambda": 1.0})
    name = "e lms lambda=1 automatic learning_rate max_iter=5000 tol=1e-12 vs ridge (cond(K+I)=%.0f)" % kappa

    @check(name)
    def _():
        train(cur, "lmsconv", "conv", lms_opts)
        train(cur, "ridgeconv", "conv", ridge_opts)
        compare(name, predict(cur, "lmsconv", "conv"),
                predict(cur, "ridgeconv", "conv"), 1e-6)

    name = "e kernel_model_info of that lms model: converged within max_iter"

    @check(name)
    def _():
        info = model_info(cur, "lmsconv")
        it = info.get("iterations")
        ok = info.get("converged") is True and isinstance(it, int) and 0 < it < 5000
        report(ok, name, "iterations %r, converged %r, learning_rate %r (1/lambda_max(K+I) = %.6g)"
               % (it, info.get("converged"), info.get("learning_rate"),
                  1.0 / (w[-1] + 1.0)))


def check_casts(cur, Xt, yt):
    """(f) int[], real[], numeric[] features give the float8[] predictions."""
    buf = io.StringIO()
    for i, row in enumerate(Xt):
        ints = "{" + ",".join(str(int(v)) for v in row) + "}"
        buf.write("%d\t%s\t%s\t%s\t%s\t%r\n" % (i, ints, ints, ints, arr_text(row),
                                               float(yt[i])))
    buf.seek(0)
    cur.copy_expert("COPY kmcc_types (id, fi, fr, fn, ff, y) FROM STDIN", buf)
    opts = json.dumps({"kernel": "rbf", "gamma": 0.2, "lambda": 0.5})
    q = ("SELECT kernel_predict(m, t.{c}) FROM kmcc_types t, "
         "(SELECT kernel_train({c}, y, %s::jsonb) AS m FROM kmcc_types WHERE id < 200) s "
         "WHERE t.id >= 200 ORDER BY t.id")
    name = "f float8[] features train and predict"
    base = None
    try:
        cur.execute(q.format(c="ff"), (opts,))
        base = np.array([r[0] for r in cur.fetchall()], dtype=float)
        ok = len(base) == 40 and np.all(np.isfinite(base))
        report(ok, name, "%d finite predictions" % len(base))
    except psycopg2.Error as exc:
        sql_failed(name, exc)
        return
    for col, typ in (("fi", "int[]"), ("fr", "real[]"), ("fn", "numeric[]")):
        name = "f %s features (implicit cast) give the float8[] predictions" % typ

        @check(name)
        def _():
            cur.execute(q.format(c=col), (opts,))
            got = np.array([r[0] for r in cur.fetchall()], dtype=float)
            compare(name, got, base, 1e-12)


# ---------------------------------------------------------------- main

EXPORT_KERNELS = [
    {"kernel": "linear"},
    {"kernel": "poly", "gamma": 0.1, "degree": 3, "coef0": 1.0},
    {"kernel": "rbf", "gamma": 0.1},
    {"kernel": "laplacian", "gamma": 0.1},
    {"kernel": "sigmoid", "gamma": 0.01, "coef0": 0.5},
    {"kernel": "cosine"},
    {"kernel": "polysum", "degree": 2},
    {"kernel": "min"},
]


def export_score(e, X):
    """Score raw rows X from kernel_model_export's numbers alone (NumPy)."""
    x = (X - np.array(e["mean"])) / np.array(e["scale"])
    params = {k: e[k] for k in ("gamma", "degree", "coef0") if k in e}
    if e["approximation"] == "rff":
        Z = np.sqrt(2.0 / len(e["offsets"])) * np.cos(x @ np.array(e["weights"]) + e["offsets"])
    else:
        Z = reference_kernel(dict(params, kernel=e["kernel"]), x, np.array(e["centers"]))
    coef = np.array(e["coef"])
    if coef.ndim == 1:
        return e["intercept"] + Z @ coef
    return np.array(e["intercepts"]) + Z @ coef.T


def check_export(cur, Xtr, ytr, Xte):
    """(g) kernel_model_export scored in NumPy vs kernel_predict."""
    # min is positive semi-definite on non-negative data: raw, shifted rows
    shift = -min(Xtr.min(), Xte.min())
    load(cur, "exp+", Xtr + shift, ytr, Xte + shift)
    cases = [(kopts, "ridge") for kopts in EXPORT_KERNELS] + [({"kernel": "rbf", "gamma": 0.1}, "lms")]
    for kopts, method in cases:
        is_min = kopts["kernel"] == "min"
        ds = "exp+" if is_min else "dia"
        opts = dict(kopts, method=method)
        if is_min:
            opts["standardize"] = False
        if method == "lms":
            opts.update({"lambda": 1.0, "max_iter": 50})
        name = "g export %s %s on %s scored in NumPy vs kernel_predict" % (method, kname(kopts), ds)

        @check(name)
        def _():
            train(cur, "export", ds, opts)
            cur.execute("SELECT kernel_model_export(model) FROM kmcc_models WHERE name = 'export'")
            e = cur.fetchone()[0]
            e = e if isinstance(e, dict) else json.loads(e)
            X = Xte + shift if is_min else Xte
            compare(name, export_score(e, X), predict(cur, "export", ds), 1e-10)



# ---------------------------------------------------------------- approximate models (issue 12)

def rbf(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def check_approx(cur):
    """Nystrom: kernel_predict vs a NumPy solve of (Z^T Z + lambda K_mm) a =
    Z^T (y - mean y) over the centres of the basis pass (kernel_basis with
    the same options over the same rows), and held-out RMSE on Friedman #1
    vs scikit-learn's StandardScaler + Nystroem + Ridge at the same m."""
    from sklearn.datasets import make_friedman1
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge

    X, y = make_friedman1(n_samples=4000, n_features=10, noise=1.0, random_state=SEED % 1000)
    Xtr, ytr, Xte, yte = X[:3000], y[:3000], X[3000:], y[3000:]
    load(cur, "fried", Xtr, ytr, Xte)
    cur.execute("ANALYZE kmcc_train")
    m, gamma, lam = 300, 0.05, 0.1
    opts = {"approximation": "nystrom", "components": m, "gamma": gamma,
            "lambda": lam, "seed": 11}

    @check("nystrom predictions vs NumPy normal equations")
    def _():
        train(cur, "nys", "fried", opts)
        got = predict(cur, "nys", "fried")
        cur.execute("SELECT kernel_basis_info(kernel_basis(f, %s::jsonb)) FROM kmcc_train "
                    "WHERE ds = 'fried'", (json.dumps(opts),))
        info = cur.fetchone()[0]
        info = info if isinstance(info, dict) else json.loads(info)
        mean = np.array(info["mean"], dtype=float)
        scale = np.array(info["scale"], dtype=float)
        C = np.array(info["centers"], dtype=float)
        Zs = (Xtr - mean) / scale
        Z = rbf(Zs, C, gamma)
        Kmm = rbf(C, C, gamma)
        ybar = ytr.mean()
        a = np.linalg.solve(Z.T @ Z + lam * Kmm, Z.T @ (ytr - ybar))
        want = ybar + rbf((Xte - mean) / scale, C, gamma) @ a
        compare("nystrom m=%d vs NumPy (centres from kernel_basis)" % len(C), got, want, 1e-8)

    @check("nystrom RMSE vs scikit-learn Nystroem + Ridge")
    def _():
        got = predict(cur, "nys", "fried")
        ours = float(np.sqrt(np.mean((got - yte) ** 2)))
        sk = []
        for rs in range(3):
            pipe = make_pipeline(StandardScaler(),
                                 Nystroem(gamma=gamma, n_components=m, random_state=rs),
                                 Ridge(alpha=lam))
            pipe.fit(Xtr, ytr)
            sk.append(float(np.sqrt(np.mean((pipe.predict(Xte) - yte) ** 2))))
        ratio = ours / float(np.median(sk))
        report(ratio <= 1.05, "nystrom Friedman #1 held-out RMSE vs scikit-learn",
               "kernel_ml %.4f, scikit-learn median of 3 seeds %.4f, ratio %.4f (tol 1.05)"
               % (ours, float(np.median(sk)), ratio))

    @check("two-pass nystrom equals the one-statement model")
    def _():
        cur.execute("DELETE FROM kmcc_models WHERE name = 'nys2'")
        cur.execute("INSERT INTO kmcc_models (name, model) SELECT 'nys2', "
                    "kernel_train(f, y, %s::jsonb, (SELECT kernel_basis(f, %s::jsonb) "
                    "FROM kmcc_train WHERE ds = 'fried')) FROM kmcc_train WHERE ds = 'fried'",
                    (json.dumps(opts), json.dumps(opts)))
        # the one statement adds its rows in row-hash order, the two passes in
        # the scan's: equal up to rounding
        compare("two passes vs one statement", predict(cur, "nys2", "fried"),
                predict(cur, "nys", "fried"), 1e-9)

def check_cg(cur):
    """solver cg (issue 31): a named nystrom ridge model trained by conjugate
    gradient over the stored query (the cursor host) vs a NumPy solve of
    (Z^T Z + lambda (K_mm + eps I)) a = Z^T (y - mean y) over its own centres,
    scaler and eps (kernel_model_export, kernel_model_info)."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=3500, n_features=10, noise=1.0, random_state=(SEED + 7) % 1000)
    Xtr, ytr, Xte = X[:3000], y[:3000], X[3000:]
    load(cur, "cg", Xtr, ytr, Xte)
    gamma, lam = 0.05, 0.1
    opts = {"approximation": "nystrom", "components": 400, "gamma": gamma, "lambda": lam,
            "solver": "cg", "test_fraction": 0, "deploy": "always"}

    @check("cg predictions vs NumPy normal equations")
    def _():
        cur.execute("SELECT kernel_model_drop(name) FROM kernel_models "
                    "WHERE name = 'kmcc_cg' AND deployed")
        cur.execute("SELECT kernel_model_train('kmcc_cg', "
                    "'SELECT f, y FROM kmcc_train WHERE ds = ''cg''', %s::jsonb)",
                    (json.dumps(opts),))
        cur.execute("SELECT kernel_predict('kmcc_cg', f) FROM kmcc_test WHERE ds = 'cg' ORDER BY id")
        got = np.array([r[0] for r in cur.fetchall()])
        cur.execute("SELECT kernel_model_export('kmcc_cg'), kernel_model_info('kmcc_cg')")
        e, info = cur.fetchone()
        e = e if isinstance(e, dict) else json.loads(e)
        info = info if isinstance(info, dict) else json.loads(info)
        mean, scale = np.array(e["mean"]), np.array(e["scale"])
        C = np.array(e["centers"], dtype=float)
        Z = rbf((Xtr - mean) / scale, C, gamma)
        K = rbf(C, C, gamma) + float(info["approximation_eps"]) * np.eye(len(C))
        ybar = ytr.mean()
        a = np.linalg.solve(Z.T @ Z + lam * K, Z.T @ (ytr - ybar))
        want = ybar + rbf((Xte - mean) / scale, C, gamma) @ a
        compare("cg m=%d vs NumPy (its centres and eps)" % len(C), got, want, 1e-6)
        cur.execute("SELECT kernel_model_drop('kmcc_cg')")


# ---------------------------------------------------------------- classification

def load_labels(cur, ds, Xtr, ytr, Xte):
    """Training rows with text labels into kmcc_cls, test rows into kmcc_test."""
    buf = io.StringIO()
    for i, row in enumerate(Xtr):
        buf.write("%s\t%d\t%s\t%s\n" % (ds, i, arr_text(row), ytr[i]))
    buf.seek(0)
    cur.copy_expert("COPY kmcc_cls (ds, id, f, label) FROM STDIN", buf)
    copy_rows(cur, ds, "kmcc_test", Xte)


def train_labels(cur, name, ds, opts):
    cur.execute("DELETE FROM kmcc_models WHERE name = %s", (name,))
    cur.execute("INSERT INTO kmcc_models (name, model) "
                "SELECT %s, kernel_train(f, label, %s::jsonb) FROM kmcc_cls "
                "WHERE ds = %s", (name, json.dumps(opts), ds))


def predict_class(cur, name, ds):
    cur.execute("SELECT kernel_predict_class(m.model, t.f) "
                "FROM kmcc_test t, kmcc_models m "
                "WHERE m.name = %s AND t.ds = %s ORDER BY t.id", (name, ds))
    return [r[0] for r in cur.fetchall()]


def check_svm_breast_cancer(cur):
    from sklearn.datasets import load_breast_cancer
    from sklearn.svm import SVC
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.RandomState(SEED)
    idx = rng.permutation(len(y))
    tr, te = idx[:450], idx[450:]
    gamma = 1.0 / (X.shape[1] * X[tr].var())
    lam = 1e-3
    C = 1.0 / (len(tr) * lam)
    load_labels(cur, "bc", X[tr], [str(v) for v in y[tr]], X[te])
    opts = {"method": "svm", "standardize": False, "gamma": gamma,
            "lambda": lam, "tol": 1e-6}

    @check("g. svm breast cancer decision values")
    def _():
        train_labels(cur, "bc_svm", "bc", opts)
        got = predict(cur, "bc_svm", "bc")
        svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-6).fit(X[tr], y[tr])
        compare("g. svm breast cancer decision values vs SVC", got,
                svc.decision_function(X[te]), 1e-4)
        info = model_info(cur, "bc_svm")
        n_sv = int(info.get("n_support", -1))
        report(n_sv == len(svc.support_), "g. svm breast cancer support set",
               "%d support vectors, SVC %d" % (n_sv, len(svc.support_)))
        cls = predict_class(cur, "bc_svm", "bc")
        want = [str(v) for v in svc.predict(X[te])]
        report(cls == want, "g. svm breast cancer classes",
               "%d of %d agree with SVC" % (sum(a == b for a, b in zip(cls, want)), len(want)))


def check_logistic_scipy(cur):
    from scipy.optimize import minimize
    from sklearn.datasets import load_breast_cancer
    from sklearn.metrics.pairwise import rbf_kernel
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.RandomState(SEED + 1)
    idx = rng.permutation(len(y))
    tr, te = idx[:200], idx[200:260]
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    Xs, Xt = (X[tr] - mu) / sd, (X[te] - mu) / sd
    gamma, lam, n = 1.0 / X.shape[1], 1e-2, len(tr)
    K = rbf_kernel(Xs, Xs, gamma=gamma)
    t = np.where(y[tr] == 1, 1.0, -1.0)

    def J(v):
        a, b = v[:n], v[n]
        f = K @ a + b
        return np.mean(np.logaddexp(0.0, -t * f)) + 0.5 * lam * a @ K @ a

    def grad(v):
        a, b = v[:n], v[n]
        f = K @ a + b
        g = -t / (1.0 + np.exp(t * f)) / n
        return np.concatenate([K @ g + lam * (K @ a), [g.sum()]])

    def hess(v):
        a, b = v[:n], v[n]
        f = K @ a + b
        p = 1.0 / (1.0 + np.exp(-f))
        d = p * (1 - p) / n
        H = np.empty((n + 1, n + 1))
        H[:n, :n] = K @ (d[:, None] * K) + lam * K
        H[:n, n] = H[n, :n] = K @ d
        H[n, n] = d.sum()
        return H

    res = minimize(J, np.zeros(n + 1), jac=grad, hess=hess, method="trust-exact",
                   options={"gtol": 1e-12})
    a, b = res.x[:n], res.x[n]
    want = 1.0 / (1.0 + np.exp(-(rbf_kernel(Xt, Xs, gamma=gamma) @ a + b)))
    load_labels(cur, "lr", Xs, [str(v) for v in y[tr]], Xt)

    @check("g. logistic probabilities vs scipy")
    def _():
        train_labels(cur, "lr", "lr", {"method": "logistic", "standardize": False,
                                       "gamma": gamma, "lambda": lam})
        cur.execute("SELECT kernel_predict_proba(m.model, t.f, '1') "
                    "FROM kmcc_test t, kmcc_models m "
                    "WHERE m.name = 'lr' AND t.ds = 'lr' ORDER BY t.id")
        got = np.array([r[0] for r in cur.fetchall()])
        compare("g. logistic probabilities vs scipy trust-exact", got, want, 1e-6, "abs")


def check_multiclass(cur):
    from sklearn.datasets import load_digits, load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC
    for ds, loader, std, lam_c in (("wine", load_wine, True, 10.0),
                                   ("digits", load_digits, False, 10.0)):
        X, y = loader(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3,
                                              random_state=SEED % 1000, stratify=y)
        if std:
            mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
            sd[sd == 0] = 1.0
            Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
        gamma = 1.0 / X.shape[1] if std else 1.0 / (X.shape[1] * Xtr.var())
        C = lam_c
        lam = 1.0 / (len(ytr) * C)
        load_labels(cur, ds, Xtr, ["c%02d" % v for v in ytr], Xte)

        @check("g. %s accuracy vs SVC" % ds)
        def _():
            train_labels(cur, ds, ds, {"method": "svm", "standardize": False,
                                       "gamma": gamma, "lambda": lam})
            got = predict_class(cur, ds, ds)
            acc = np.mean([g == "c%02d" % v for g, v in zip(got, yte)])
            svc = SVC(C=C, kernel="rbf", gamma=gamma).fit(Xtr, ytr)
            ref = svc.score(Xte, yte)
            report(acc >= ref - 0.01, "g. %s held-out accuracy" % ds,
                   "%.4f, SVC %.4f (%d classes)" % (acc, ref, len(set(y))))

        @check("g. %s probabilities sum to 1" % ds)
        def _():
            train_labels(cur, ds + "_p", ds, {"method": "svm", "standardize": False,
                                              "gamma": gamma, "lambda": lam,
                                              "probability": True})
            cur.execute("SELECT kernel_predict_proba(m.model, t.f) "
                        "FROM kmcc_test t, kmcc_models m "
                        "WHERE m.name = %s AND t.ds = %s ORDER BY t.id", (ds + "_p", ds))
            sums = [sum(json.loads(r[0]).values() if isinstance(r[0], str) else r[0].values())
                    for r in cur.fetchall()]
            compare("g. %s svm probabilities sum to 1" % ds, sums, np.ones(len(sums)),
                    1e-12, "abs")


# ---------------------------------------------------------------- approximate classifiers (j)

def primal_scipy(Z, t, lam, loss, sw=None):
    """argmin over (w, b) of (1/W) sum sw_i L(z_i w + b, t_i) + (lam/2) ||w||^2
    (b unpenalized), L logistic or squared hinge, by SciPy's trust-exact with
    the exact (generalized, for the squared hinge) Hessian."""
    from scipy.optimize import minimize
    n, m = Z.shape
    sw = np.ones(n) if sw is None else np.asarray(sw, dtype=float)
    W = sw.sum()
    Z1 = np.hstack([Z, np.ones((n, 1))])
    P = np.diag(np.r_[np.full(m, lam), 0.0])

    def parts(v):
        f = Z1 @ v
        if loss == "logistic":
            L = np.logaddexp(0.0, -t * f)
            g = -t / (1.0 + np.exp(t * f))
            p = 1.0 / (1.0 + np.exp(-f))
            h = p * (1.0 - p)
        else:
            s = np.maximum(0.0, 1.0 - t * f)
            L, g, h = s * s, -2.0 * t * s, np.where(s > 0, 2.0, 0.0)
        return L, g, h

    def J(v):
        return (sw @ parts(v)[0]) / W + 0.5 * v @ P @ v

    def grad(v):
        return Z1.T @ (sw * parts(v)[1]) / W + P @ v

    def hess(v):
        h = sw * parts(v)[2] / W
        return Z1.T @ (h[:, None] * Z1) + P

    res = minimize(J, np.zeros(m + 1), jac=grad, hess=hess, method="trust-exact",
                   options={"gtol": 1e-13, "maxiter": 1000})
    return res.x[:m], res.x[m]


def svr_primal_scipy_w(Z, y, lam, eps, minimize):
    """The same objective over w alone (b = 0)."""
    n, m = Z.shape

    def parts(w):
        r = y - Z @ w
        a = np.maximum(0.0, np.abs(r) - eps)
        return a * a, -2.0 * np.sign(r) * a, np.where(a > 0, 2.0, 0.0)

    res = minimize(lambda w: np.mean(parts(w)[0]) + 0.5 * lam * w @ w, np.zeros(m),
                   jac=lambda w: Z.T @ parts(w)[1] / n + lam * w,
                   hess=lambda w: Z.T @ ((parts(w)[2] / n)[:, None] * Z) + lam * np.eye(m),
                   method="trust-exact", options={"gtol": 1e-13, "maxiter": 1000})
    return res.x, res


def export_of(cur, name):
    cur.execute("SELECT kernel_model_export(model) FROM kmcc_models WHERE name = %s", (name,))
    e = cur.fetchone()[0]
    return e if isinstance(e, dict) else json.loads(e)


def whitened_features(e, info, X):
    """The model's features of raw rows X from its export: nystrom
    z = L^-1 k(C, x) with L = chol(K_mm + eps I) (eps from kernel_model_info),
    rff RBFSampler's z from the exported weights and offsets."""
    x = (X - np.array(e["mean"])) / np.array(e["scale"])
    if e["approximation"] == "rff":
        Wr, br = np.array(e["weights"]), np.array(e["offsets"])
        return np.sqrt(2.0 / len(br)) * np.cos(x @ Wr + br)
    C = np.array(e["centers"])
    eps = float(info["approximation_eps"])
    L = np.linalg.cholesky(rbf(C, C, e["gamma"]) + eps * np.eye(len(C)))
    from scipy.linalg import solve_triangular
    return solve_triangular(L, rbf(x, C, e["gamma"]).T, lower=True).T


def check_approx_classification(cur):
    """(j) approximate classifiers: nystrom / rff + primal Newton vs SciPy
    minimizations of the same objective on the exported features, and held-out
    accuracy vs scikit-learn's Nystroem pipelines at the same m and C."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.svm import LinearSVC
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.RandomState(SEED + 2)
    idx = rng.permutation(len(y))
    tr, te = idx[:450], idx[450:]
    Xtr, Xte = X[tr], X[te]
    t = np.where(y[tr] == 1, 1.0, -1.0)
    m, gamma, lam = 100, 1.0 / X.shape[1], 1e-3
    C = 1.0 / (len(tr) * lam)
    load_labels(cur, "abc", Xtr, [str(v) for v in y[tr]], Xte)
    for method, loss in (("logistic", "logistic"), ("svm", "sqhinge")):
        for approx in ("nystrom", "rff"):
            if approx == "rff" and method == "svm":
                continue
            name = "j. %s %s breast cancer" % (approx, method)
            opts = {"method": method, "approximation": approx, "components": m,
                    "gamma": gamma, "lambda": lam, "seed": 5, "tol": 1e-10}

            @check(name)
            def _():
                mname = "a_%s_%s" % (approx, method)
                train_labels(cur, mname, "abc", opts)
                e, info = export_of(cur, mname), model_info(cur, mname)
                w, b = primal_scipy(whitened_features(e, info, Xtr), t, lam, loss)
                f = whitened_features(e, info, Xte) @ w + b
                if method == "logistic":
                    cur.execute("SELECT kernel_predict_proba(m.model, t.f, '1') "
                                "FROM kmcc_test t, kmcc_models m "
                                "WHERE m.name = %s AND t.ds = 'abc' ORDER BY t.id", (mname,))
                    got = np.array([r[0] for r in cur.fetchall()])
                    compare("%s probabilities vs SciPy on the exported features (m = %d, %d Newton steps)"
                            % (name, m, int(info["iterations"])), got, 1.0 / (1.0 + np.exp(-f)), 1e-6, "abs")
                else:
                    compare("%s decision values vs SciPy on the exported features (m = %d, %d Newton steps)"
                            % (name, m, int(info["iterations"])), predict(cur, mname, "abc"), f, 1e-6)
                compare("%s kernel_model_export scored in NumPy vs kernel_predict" % name,
                        export_score(e, Xte), predict(cur, mname, "abc"), 1e-10)
                if approx != "nystrom":
                    return
                acc = np.mean([g == str(v) for g, v in zip(predict_class(cur, mname, "abc"), y[te])])
                sk = []
                for rs in range(3):
                    lin = (LogisticRegression(C=C, tol=1e-10, max_iter=10000) if method == "logistic"
                           else LinearSVC(loss="squared_hinge", C=C, tol=1e-8, max_iter=100000))
                    pipe = make_pipeline(StandardScaler(),
                                         Nystroem(gamma=gamma, n_components=m, random_state=rs), lin)
                    sk.append(pipe.fit(Xtr, y[tr]).score(Xte, y[te]))
                ref = float(np.median(sk))
                report(abs(acc - ref) <= 0.02, "%s held-out accuracy vs scikit-learn" % name,
                       "kernel_ml %.4f, StandardScaler + Nystroem(%d) + %s median of 3 seeds %.4f (within 0.02)"
                       % (acc, m, type(lin).__name__, ref))

    for ds, loader, mm in (("awine", load_wine, 60), ("adigits", load_digits, 300)):
        Xa, ya = loader(return_X_y=True)
        Xa_tr, Xa_te, ya_tr, ya_te = train_test_split(Xa, ya, test_size=0.3,
                                                      random_state=SEED % 1000, stratify=ya)
        lam_m = 1.0 / (len(ya_tr) * 10.0)
        g_m = 1.0 / Xa.shape[1]
        load_labels(cur, ds, Xa_tr, ["c%02d" % v for v in ya_tr], Xa_te)

        @check("j. %s one-vs-rest" % ds)
        def _():
            opts = {"method": "logistic", "approximation": "nystrom", "components": mm,
                    "gamma": g_m, "lambda": lam_m}
            train_labels(cur, ds, ds, opts)
            cur.execute("SELECT kernel_predict_proba(m.model, t.f) "
                        "FROM kmcc_test t, kmcc_models m "
                        "WHERE m.name = %s AND t.ds = %s ORDER BY t.id", (ds, ds))
            probs = [r[0] if isinstance(r[0], dict) else json.loads(r[0]) for r in cur.fetchall()]
            compare("j. %s ovr probabilities sum to 1" % ds, [sum(p.values()) for p in probs],
                    np.ones(len(probs)), 1e-12, "abs")
            e, info = export_of(cur, ds), model_info(cur, ds)
            report(e.get("multiclass") == "ovr", "j. %s scheme" % ds, "multiclass %s" % e.get("multiclass"))
            Ztr, Zte = whitened_features(e, info, Xa_tr), whitened_features(e, info, Xa_te)
            labels = e["classes"]
            F = np.column_stack([Zte @ w + b for w, b in
                                 (primal_scipy(Ztr, np.where(np.array(["c%02d" % v for v in ya_tr]) == c, 1.0, -1.0),
                                               lam_m, "logistic") for c in labels)])
            S = 1.0 / (1.0 + np.exp(-F))
            S /= S.sum(axis=1, keepdims=True)
            got = np.array([[p[c] for c in labels] for p in probs])
            compare("j. %s ovr probabilities vs SciPy per class on the exported features" % ds, got, S, 1e-6, "abs")
            Fe = 1.0 / (1.0 + np.exp(-export_score(e, Xa_te)))
            compare("j. %s ovr probabilities from kernel_model_export (NumPy) vs kernel_predict_proba" % ds,
                    Fe / Fe.sum(axis=1, keepdims=True), got, 1e-10, "abs")
            acc = np.mean([g == "c%02d" % v for g, v in zip(predict_class(cur, ds, ds), ya_te)])
            sk = []
            for rs in range(3):
                from sklearn.multiclass import OneVsRestClassifier
                pipe = make_pipeline(StandardScaler(), Nystroem(gamma=g_m, n_components=mm, random_state=rs),
                                     OneVsRestClassifier(LogisticRegression(C=10.0, tol=1e-10, max_iter=10000)))
                sk.append(pipe.fit(Xa_tr, ya_tr).score(Xa_te, ya_te))
            ref = float(np.median(sk))
            report(acc >= ref - 0.02, "j. %s held-out accuracy vs scikit-learn" % ds,
                   "kernel_ml %.4f, StandardScaler + Nystroem(%d) + OvR LogisticRegression median of 3 seeds %.4f (at most 0.02 below)"
                   % (acc, mm, ref))

    # rows far from the data (issue 29): 1e3 standard deviations from the mean
    # in 2,000 directions, quadratic one-vs-rest outputs; the rows where every
    # sigmoid underflows (0 / 0 before) and 40 others are scored, against
    # SciPy's log_expit and logsumexp on the export's decision values
    Xw, yw = load_wine(return_X_y=True)
    load_labels(cur, "afar", Xw, ["c%02d" % v for v in yw], np.zeros((0, Xw.shape[1])))

    @check("j. afar one-vs-rest far rows")
    def _():
        from scipy.special import log_expit, logsumexp
        train_labels(cur, "afar", "afar", {"method": "logistic", "approximation": "nystrom",
                                           "components": 40, "kernel": "poly", "degree": 2,
                                           "lambda": 1e-3})
        e = export_of(cur, "afar")
        dirs = np.random.RandomState(SEED + 29).randn(2000, Xw.shape[1])
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        far = Xw.mean(axis=0) + Xw.std(axis=0) * 1e3 * dirs
        F_all = export_score(e, far)
        under = np.flatnonzero(F_all.max(axis=1) < -745)
        report(len(under) > 0, "j. afar rows where every sigmoid underflows (the 0 / 0 before)",
               "%d of %d rows" % (len(under), len(far)))
        rows = np.concatenate([under, np.arange(40)])
        copy_rows(cur, "afar", "kmcc_test", far[rows])
        cur.execute("SELECT kernel_predict_proba(m.model, t.f) FROM kmcc_test t, kmcc_models m "
                    "WHERE m.name = 'afar' AND t.ds = 'afar' ORDER BY t.id")
        probs = [r[0] if isinstance(r[0], dict) else json.loads(r[0]) for r in cur.fetchall()]
        L = log_expit(F_all[rows])
        want = np.exp(L - logsumexp(L, axis=1, keepdims=True))
        got = np.array([[np.nan if p[c] is None else p[c] for c in e["classes"]] for p in probs])
        compare("j. afar far-row probabilities vs SciPy log_expit / logsumexp on the export",
                got, want, 1e-9, "abs")
        compare("j. afar far-row probabilities sum to 1", got.sum(axis=1), np.ones(len(got)), 1e-12, "abs")


# ---------------------------------------------------------------- default classifiers (k)

def check_default_classifiers(cur):
    """(k) the defaults of svm and logistic against scikit-learn's defaults."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_wine
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC
    for ds, loader in (("dbc", load_breast_cancer), ("dwine", load_wine),
                       ("ddigits", load_digits)):
        X, y = loader(return_X_y=True)
        idx = np.random.RandomState(SEED + 3).permutation(len(y))
        ntr = int(0.7 * len(y))
        tr, te = idx[:ntr], idx[ntr:]
        load_labels(cur, ds, X[tr], ["c%02d" % v for v in y[tr]], X[te])
        svc = make_pipeline(StandardScaler(), SVC()).fit(X[tr], y[tr])
        ref = svc.score(X[te], y[te])
        for method in ("svm", "logistic"):
            name = "k. default %s %s" % (method, ds[1:])

            @check(name)
            def _():
                mname = "%s_%s" % (ds, method)
                train_labels(cur, mname, ds, {"method": method})
                got = predict_class(cur, mname, ds)
                acc = float(np.mean([g == "c%02d" % v for g, v in zip(got, y[te])]))
                info = model_info(cur, mname)
                lam, gamma = float(info["lambda"]), float(info["gamma"])
                report(abs(lam * ntr - 1.0) <= 1e-12, "%s lambda" % name,
                       "kernel_model_info lambda %.6g, 1 / n_train %.6g (C = 1)" % (lam, 1.0 / ntr))
                if method == "svm":
                    report(abs(acc - ref) <= 0.03, "%s accuracy vs SVC()" % name,
                           "kernel_ml %.4f (gamma %.4g), StandardScaler + SVC() %.4f (within 0.03)"
                           % (acc, gamma, ref))
                    return
                lr = make_pipeline(StandardScaler(),
                                   Nystroem(gamma=gamma, n_components=ntr, random_state=0),
                                   LogisticRegression(C=1.0, tol=1e-8, max_iter=10000))
                lref = lr.fit(X[tr], y[tr]).score(X[te], y[te])
                report(abs(acc - lref) <= 0.03, "%s accuracy vs kernel LogisticRegression(C = 1)" % name,
                       "kernel_ml %.4f, StandardScaler + Nystroem(all %d rows, gamma %.4g) + "
                       "LogisticRegression(C = 1) %.4f (within 0.03); SVC() %.4f"
                       % (acc, ntr, gamma, lref, ref))


# ---------------------------------------------------------------- epsilon-SVR (l)

def svr_datasets():
    """Diabetes (342 / 100 rows) and a synthetic set (800 / 200 rows, d = 8), with held-out targets."""
    Xd, yd = load_diabetes(return_X_y=True)
    perm = np.random.default_rng(SEED + 8).permutation(len(yd))
    tr, te = perm[:342], perm[342:]
    rng = np.random.default_rng(SEED + 9)
    X = rng.standard_normal((1000, 8)) * np.array([1.0, 2.0, 0.5, 3.0, 1.0, 1.0, 1.0, 1.0])
    y = (np.sin(2.0 * X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] - 0.3 * X[:, 3]
         + 0.1 * rng.standard_normal(1000) + 3.0)
    return (("svr_dia", Xd[tr], yd[tr], Xd[te], yd[te]),
            ("svr_syn", X[:800], y[:800], X[800:], y[800:]))


def check_svr(cur):
    """(l) epsilon-SVR vs scikit-learn's SVR on the rows kernel_ml standardizes."""
    from sklearn.svm import SVR
    for ds, Xtr, ytr, Xte, yte in svr_datasets():
        load(cur, ds, Xtr, ytr, Xte)
        sc = StandardScaler().fit(Xtr)          # population std, as km_standardize
        Ztr, Zte = sc.transform(Xtr), sc.transform(Xte)
        n, d = Xtr.shape
        gamma = 1.0 / d                         # "scale": standardized rows have variance 1
        name = "l. svr %s" % ds[4:]

        @check(name)
        def _():
            train(cur, ds + "_fixed", ds, {"method": "svr", "epsilon": 0.1,
                                           "tol": 1e-6, "gamma": gamma})
            got = predict(cur, ds + "_fixed", ds)
            svr = SVR(C=1.0, epsilon=0.1, tol=1e-6, gamma=gamma).fit(Ztr, ytr)
            compare("%s predictions vs SVR(C=1, epsilon=0.1, tol=1e-6, gamma=%g)"
                    % (name, gamma), got, svr.predict(Zte), 1e-4)
            info = model_info(cur, ds + "_fixed")
            n_sv = int(info.get("n_support", -1))
            report(n_sv == len(svr.support_), "%s support set" % name,
                   "%d support vectors, SVR %d" % (n_sv, len(svr.support_)))

        @check(name + " defaults")
        def _():
            train(cur, ds + "_default", ds, {"method": "svr"})
            got = predict(cur, ds + "_default", ds)
            info = model_info(cur, ds + "_default")
            lam, g = float(info["lambda"]), float(info["gamma"])
            report(abs(lam * n - 1.0) <= 1e-12 and float(info["epsilon"]) == 0.1
                   and float(info["tol"]) == 1e-3,
                   "%s defaults lambda, epsilon, tol" % name,
                   "lambda %.6g, 1 / n_train %.6g (C = 1), epsilon %g, tol %g"
                   % (lam, 1.0 / n, float(info["epsilon"]), float(info["tol"])))
            same = SVR(gamma=g).fit(Ztr, ytr).predict(Zte)
            compare("%s defaults vs SVR() at the model's gamma %.4g" % (name, g),
                    got, same, 1e-3)
            ref = make_pipeline(StandardScaler(), SVR()).fit(Xtr, ytr).predict(Xte)
            rmse = float(np.sqrt(np.mean((got - yte) ** 2)))
            rref = float(np.sqrt(np.mean((ref - yte) ** 2)))
            report(rmse <= 1.25 * rref, "%s defaults held-out RMSE vs SVR()" % name,
                   "kernel_ml %.4f (gamma sigest %.4g), StandardScaler + SVR() %.4f "
                   "(gamma \"scale\" %.4g; within 25 %%)" % (rmse, g, rref, 1.0 / d))

        @check(name + " target in standard deviations")
        def _():
            # The README's recipe for a target of any spread: epsilon 0.1 and
            # C = 1 in standard deviations of the target are epsilon = 0.1 sd,
            # lambda = 1 / (n sd) (tol, a KKT violation in target units, tol sd),
            # which is SVR() on the standardized target, predictions scaled back.
            from sklearn.compose import TransformedTargetRegressor
            sd = float(ytr.std())
            train(cur, ds + "_scaled", ds, {"method": "svr", "epsilon": 0.1 * sd,
                                            "lambda": 1.0 / (n * sd), "tol": 1e-6 * sd,
                                            "gamma": gamma})
            got = predict(cur, ds + "_scaled", ds)
            ttr = TransformedTargetRegressor(SVR(tol=1e-6, gamma=gamma),
                                             transformer=StandardScaler()).fit(Ztr, ytr)
            compare("%s epsilon 0.1 sd, lambda 1 / (n sd) vs TransformedTargetRegressor("
                    "SVR(tol=1e-6, gamma=%g), StandardScaler())" % (name, gamma),
                    got, ttr.predict(Zte), 1e-4)
            n_sv = int(model_info(cur, ds + "_scaled").get("n_support", -1))
            plain = SVR(tol=1e-6, gamma=gamma).fit(Ztr, ytr)
            rmse = float(np.sqrt(np.mean((got - yte) ** 2)))
            rplain = float(np.sqrt(np.mean((plain.predict(Zte) - yte) ** 2)))
            rmean = float(np.sqrt(np.mean((ytr.mean() - yte) ** 2)))
            report(n_sv == len(ttr.regressor_.support_), "%s scaled support set" % name,
                   "%d support vectors, TransformedTargetRegressor %d; SVR() on the raw "
                   "target (sd %.4g) %d of %d; held-out RMSE %.4f, SVR() %.4f, the mean %.4f"
                   % (n_sv, len(ttr.regressor_.support_), sd, len(plain.support_), n,
                      rmse, rplain, rmean))


def svr_primal_scipy(Z, y, lam, eps, intercept=True):
    """argmin over (w, b) of (1/n) sum max(0, |y - z w - b| - eps)^2 + (lam/2) ||w||^2
    (b unpenalized; b = 0 without intercept) by SciPy's trust-exact with the
    generalized Hessian."""
    from scipy.optimize import minimize
    n, m = Z.shape
    if not intercept:
        w, _ = svr_primal_scipy_w(Z, y, lam, eps, minimize)
        return w, 0.0
    Z1 = np.hstack([Z, np.ones((n, 1))])
    P = np.diag(np.r_[np.full(m, lam), 0.0])

    def parts(v):
        r = y - Z1 @ v
        a = np.maximum(0.0, np.abs(r) - eps)
        return a * a, -2.0 * np.sign(r) * a, np.where(a > 0, 2.0, 0.0)

    def J(v):
        return np.mean(parts(v)[0]) + 0.5 * v @ P @ v

    def grad(v):
        return Z1.T @ parts(v)[1] / n + P @ v

    def hess(v):
        return Z1.T @ ((parts(v)[2] / n)[:, None] * Z1) + P

    res = minimize(J, np.zeros(m + 1), jac=grad, hess=hess, method="trust-exact",
                   options={"gtol": 1e-13, "maxiter": 1000})
    return res.x[:m], res.x[m]


def check_approx_svr(cur):
    """(m) approximate epsilon-SVR vs SciPy on the exported features."""
    for ds, Xtr, ytr, Xte, yte in svr_datasets():
        for approx, m in (("nystrom", 100), ("rff", 200)):
            name = "m. svr %s %s" % (approx, ds[4:])

            @check(name)
            def _():
                mname = "%s_%s" % (ds, approx)
                # a tube that holds about a third of the training rows
                opts = {"method": "svr", "approximation": approx, "components": m,
                        "epsilon": 30.0 if ds == "svr_dia" else 0.4,
                        "tol": 1e-10, "max_iter": 100, "seed": 3}
                train(cur, mname, ds, opts)
                got = predict(cur, mname, ds)
                info = model_info(cur, mname)
                e = export_of(cur, mname)
                lam, eps = float(info["lambda"]), float(info["epsilon"])
                w, b = svr_primal_scipy(whitened_features(e, info, Xtr), ytr, lam, eps)
                want = whitened_features(e, info, Xte) @ w + b
                compare("%s predictions vs SciPy (lambda %.4g, epsilon %g, %s Newton steps, "
                        "%s rows outside the tube)" % (name, lam, eps, info.get("iterations"),
                                                       info.get("n_support")), got, want, 1e-6)

    @check("m. svr rff syn without intercept")
    def _():
        # "fit_intercept": false: b = 0, the same objective over w alone
        ds, Xtr, ytr, Xte, _ = svr_datasets()[1]
        opts = {"method": "svr", "approximation": "rff", "components": 200, "epsilon": 0.4,
                "tol": 1e-10, "max_iter": 100, "seed": 3, "fit_intercept": False}
        train(cur, "svr_syn_noint", ds, opts)
        got = predict(cur, "svr_syn_noint", ds)
        info = model_info(cur, "svr_syn_noint")
        e = export_of(cur, "svr_syn_noint")
        lam, eps = float(info["lambda"]), float(info["epsilon"])
        w, b = svr_primal_scipy(whitened_features(e, info, Xtr), ytr, lam, eps, intercept=False)
        want = whitened_features(e, info, Xte) @ w
        report(b == 0.0 and float(info["intercept"]) == 0.0, "m. svr without intercept: b = 0",
               "model intercept %s" % info["intercept"])
        compare("m. svr rff syn without intercept predictions vs SciPy (lambda %.4g, epsilon %g)"
                % (lam, eps), got, want, 1e-6)

    @check("m. svr rff k-fold selection")
    def _():
        # k-fold over a lambda grid with as many folds as rows: every fold
        # holds one row whatever the row hashes, so each candidate's score is
        # the mean (and its standard deviation) over rows of the squared error
        # of SciPy's solve without that row, on the model's exported features
        # (one gamma: the basis is the winner's and every candidate's)
        _, X, y, _, _ = svr_datasets()[1]
        n = 40
        X, y = X[:n], y[:n]
        load(cur, "svr_loo", X, y, X)
        lams = [1e-4, 1e-2, 1.0]
        opts = {"method": "svr", "approximation": "rff", "components": 20, "epsilon": 0.4,
                "gamma": 0.1, "lambda": lams, "cv": n, "tol": 1e-10, "max_iter": 100,
                "seed": 3}
        train(cur, "svr_loo", "svr_loo", opts)
        info = model_info(cur, "svr_loo")
        sel = info["selection"]
        Z = whitened_features(export_of(cur, "svr_loo"), info, X)
        scores, stds = [], []
        for lam in lams:
            err = np.empty(n)
            for i in range(n):
                keep = np.arange(n) != i
                w, b = svr_primal_scipy(Z[keep], y[keep], lam, 0.4)
                err[i] = (Z[i] @ w + b - y[i]) ** 2
            scores.append(err.mean())
            stds.append(err.std())
        got = [c["score"] for c in sel["candidates"]]
        got_std = [c["score_std"] for c in sel["candidates"]]
        report(sel["cv"] == "kfold" and sel["folds"] == n and len(got) == len(lams),
               "m. svr k-fold selection table", "cv %s, %s folds, %d candidates"
               % (sel["cv"], sel["folds"], len(got)))
        compare("m. svr rff k-fold scores vs SciPy (%d folds of one row, lambdas %s)"
                % (n, lams), np.array(got), np.array(scores), 1e-6)
        compare("m. svr rff k-fold score_std vs SciPy", np.array(got_std), np.array(stds), 1e-6)
        report(sel["best"] == int(np.argmin(scores)) and
               float(info["lambda"]) == lams[int(np.argmin(scores))],
               "m. svr k-fold winner", "best %s, SciPy's %d, lambda %s"
               % (sel["best"], int(np.argmin(scores)), info["lambda"]))


def table_data():
    """Diabetes as rows of a table: numbers, text, booleans, NULLs."""
    X, y = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(SEED + 30)
    perm = rng.permutation(len(y))
    X, y = X[perm], y[perm]
    n = len(y)
    cols = {"age": X[:, 0], "bmi": X[:, 2], "bp": X[:, 3], "s1": X[:, 4],
            "s2": X[:, 5], "s3": X[:, 6], "s4": X[:, 7], "s5": X[:, 8], "s6": X[:, 9]}
    sex = np.where(X[:, 1] > 0, "M", "F").astype(object)
    band = np.array(["low", "mid", "high", "top"], dtype=object)[
        np.searchsorted(np.quantile(X[:, 4], [0.25, 0.5, 0.75]), X[:, 4])]
    band[300:][X[300:, 4] > np.quantile(X[:, 4], 0.9)] = "extreme"   # unseen
    flag = (X[:, 3] > 0).astype(float)
    frame = {k: v.astype(object) for k, v in cols.items()}
    frame["sex"] = sex
    frame["band"] = band
    frame["flag"] = flag.astype(object)
    for k in ("bmi", "bp", "s5", "flag", "sex", "band"):
        frame[k][rng.random(n) < 0.1] = None
    return frame, y


def check_tables(cur):
    """(o) training from a table vs ColumnTransformer + StandardScaler + KernelRidge."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder

    frame, y = table_data()
    n = len(y)
    num = ["age", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    buf = io.StringIO()
    for i in range(n):
        vals = []
        for k in num:
            v = frame[k][i]
            vals.append("\\N" if v is None else repr(float(v)))
        for k in ("sex", "band"):
            vals.append("\\N" if frame[k][i] is None else frame[k][i])
        f = frame["flag"][i]
        vals.append("\\N" if f is None else ("t" if f else "f"))
        buf.write("%d\t%s\t%s\t%r\n" % (i, "train" if i < 300 else "test",
                                        "\t".join(vals), float(y[i])))
    buf.seek(0)
    cur.execute("CREATE TABLE kmcc_table (id int, part text, age float8, bmi numeric, "
                "bp float8, s1 float8, s2 float8, s3 float8, s4 float8, s5 float8, "
                "s6 float8, sex text, band text, flag boolean, y float8)")
    cur.copy_expert("COPY kmcc_table FROM STDIN", buf)

    def matrix(rows):
        cols = num + ["flag", "sex", "band"]
        out = np.empty((len(rows), len(cols)), dtype=object)
        for j, k in enumerate(cols):
            for r, i in enumerate(rows):
                v = frame[k][i]
                out[r, j] = np.nan if v is None else v
        return out

    tr, te = list(range(300)), list(range(300, n))
    Xtr, Xte = matrix(tr), matrix(te)
    gamma, lam = 0.05, 1.0
    for strategy in ("mean", "median", "most_frequent"):
        name = "o table model, impute %s, vs ColumnTransformer+StandardScaler+KernelRidge" % strategy
        numeric = list(range(10))
        ct = ColumnTransformer([
            ("num", SimpleImputer(strategy=strategy), numeric),
            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                  OneHotEncoder(handle_unknown="ignore")), [10, 11])],
            sparse_threshold=0)
        ym = y[tr].mean()
        pipe = make_pipeline(ct, StandardScaler(),
                             KernelRidge(alpha=lam, kernel="rbf", gamma=gamma))
        want = pipe.fit(Xtr, y[tr] - ym).predict(Xte) + ym
        opts = {"impute": strategy, "gamma": gamma, "lambda": lam}

        @check(name)
        def _():
            cur.execute("DELETE FROM kmcc_models WHERE name = 'table'")
            cur.execute("INSERT INTO kmcc_models (name, model) "
                        "SELECT 'table', kernel_train(t, 'y', %s::jsonb) FROM "
                        "(SELECT age, bmi, bp, s1, s2, s3, s4, s5, s6, flag, sex, band, y "
                        " FROM kmcc_table WHERE part = 'train') t", (json.dumps(opts),))
            cur.execute("SELECT kernel_predict(m.model, t) FROM kmcc_models m, "
                        "(SELECT id, band, sex, flag, s6, s5, s4, s3, s2, s1, bp, bmi, age, "
                        " 'extra' AS note FROM kmcc_table WHERE part = 'test') t "
                        "WHERE m.name = 'table' ORDER BY t.id")
            got = np.array([r[0] for r in cur.fetchall()])
            compare(name, got, want, 1e-9, kind="abs")
            if strategy != "mean":
                return
            # kernel_evaluate(model, row): the target read from column y
            # (a NULL target added, skipped), vs sklearn.metrics on the
            # pipeline's own predictions
            from sklearn import metrics
            cur.execute("SELECT kernel_evaluate(m.model, t) FROM kmcc_models m, "
                        "(SELECT id, band, sex, flag, s6, s5, s4, s3, s2, s1, bp, bmi, age, y "
                        " FROM kmcc_table WHERE part = 'test' "
                        " UNION ALL SELECT -1, 'low', 'M', true, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL) t "
                        "WHERE m.name = 'table'")
            ev = cur.fetchone()[0]
            tag = "o kernel_evaluate(model, row), impute mean"
            report(ev["n"] == len(te) and ev["skipped"] == 1, tag + " n, skipped",
                   "%d rows, %d skipped" % (ev["n"], ev["skipped"]))
            compare(tag + " rmse vs sqrt(mean_squared_error)", ev["rmse"],
                    np.sqrt(metrics.mean_squared_error(y[te], want)), 1e-9)
            compare(tag + " mae vs mean_absolute_error", ev["mae"],
                    metrics.mean_absolute_error(y[te], want), 1e-9)
            compare(tag + " r2 vs r2_score", ev["r2"], metrics.r2_score(y[te], want), 1e-9, "abs")

    @check("o kernel_evaluate(model, row) of a classifier of a text column")
    def _():
        # sex from the other columns; its NULLs skipped by training and evaluation
        from sklearn import metrics
        cur.execute("DELETE FROM kmcc_models WHERE name = 'table_sex'")
        cur.execute("INSERT INTO kmcc_models (name, model) "
                    "SELECT 'table_sex', kernel_train(t, 'sex', "
                    "'{\"impute\": \"median\", \"method\": \"logistic\", \"lambda\": 0.01, \"gamma\": 0.05}') "
                    "FROM (SELECT age, bmi, bp, s1, s2, s3, s4, s5, s6, flag, band, sex "
                    " FROM kmcc_table WHERE part = 'train') t")
        cur.execute("SELECT kernel_evaluate(m.model, t) FROM kmcc_models m, kmcc_table t "
                    "WHERE m.name = 'table_sex' AND t.part = 'test'")
        ev = cur.fetchone()[0]
        cur.execute("SELECT t.sex, kernel_predict_class(m.model, t), "
                    "(kernel_predict_proba(m.model, t)->>'F')::float8, "
                    "(kernel_predict_proba(m.model, t)->>'M')::float8 "
                    "FROM kmcc_models m, kmcc_table t "
                    "WHERE m.name = 'table_sex' AND t.part = 'test' AND t.sex IS NOT NULL ORDER BY t.id")
        r = cur.fetchall()
        yl = [a for a, _, _, _ in r]
        c = [b for _, b, _, _ in r]
        P = np.array([[p0, p1] for _, _, p0, p1 in r])
        tag = "o kernel_evaluate(model, row) logistic on sex"
        nulls = sum(1 for i in te if frame["sex"][i] is None)
        report(ev["n"] == len(yl) and ev["skipped"] == nulls, tag + " n, skipped",
               "%d rows, %d skipped, expected %d, %d" % (ev["n"], ev["skipped"], len(yl), nulls))
        compare(tag + " accuracy vs accuracy_score", ev["accuracy"],
                metrics.accuracy_score(yl, c), 1e-9, "abs")
        compare(tag + " balanced_accuracy vs balanced_accuracy_score", ev["balanced_accuracy"],
                metrics.balanced_accuracy_score(yl, c), 1e-9, "abs")
        report(np.array_equal(np.array(ev["confusion"]["matrix"]),
                              metrics.confusion_matrix(yl, c, labels=["F", "M"])),
               tag + " confusion vs confusion_matrix", "%s" % ev["confusion"]["matrix"])
        compare(tag + " log_loss vs log_loss", ev["log_loss"],
                metrics.log_loss(yl, P, labels=["F", "M"]), 1e-9, "abs")
        compare(tag + " auc vs roc_auc_score", ev["auc"],
                metrics.roc_auc_score([v == "M" for v in yl], P[:, 1]), 1e-9, "abs")


def check_classification(cur):
    check_svm_breast_cancer(cur)
    check_logistic_scipy(cur)
    check_multiclass(cur)


def check_evaluate(cur):
    """n. kernel_evaluate vs sklearn.metrics on the per-row predictions."""
    from sklearn import metrics
    from sklearn.datasets import load_breast_cancer, load_wine
    cur.execute("DROP TABLE IF EXISTS kmcc_ev")
    cur.execute("CREATE TABLE kmcc_ev (ds text, id int, f float8[], y float8, label text, grp int)")
    rng = np.random.RandomState(SEED + 30)
    sets = {}
    Xd, yd = load_diabetes(return_X_y=True)
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    for ds, X, y, labels in (("dia", Xd, yd, None), ("bc", Xb, yb, ["benign" if v else "malignant" for v in yb]),
                             ("wine", Xw, yw, ["c%d" % v for v in yw])):
        idx = rng.permutation(len(y))
        buf = io.StringIO()
        for i, j in enumerate(idx):
            buf.write("%s\t%d\t%s\t%r\t%s\t%d\n" % (ds, i, arr_text(X[j]), float(y[j]),
                                                  labels[j] if labels else "\\N", i % 3))
        buf.seek(0)
        cur.copy_expert("COPY kmcc_ev (ds, id, f, y, label, grp) FROM STDIN", buf)
        sets[ds] = int(0.7 * len(y))
    cur.execute("ANALYZE kmcc_ev")

    def train_ev(name, ds, target, opts):
        cur.execute("DELETE FROM kmcc_models WHERE name = %s", (name,))
        cur.execute("INSERT INTO kmcc_models (name, model) SELECT %%s, kernel_train(f, %s, %%s::jsonb) "
                    "FROM kmcc_ev WHERE ds = %%s AND id < %%s" % target,
                    (name, json.dumps(opts), ds, sets[ds]))

    def evaluate(name, ds, target, group=None):
        where = "" if group is None else " AND e.grp = %d" % group
        cur.execute("SELECT kernel_evaluate(m.model, e.f, e.%s) FROM kmcc_ev e, kmcc_models m "
                    "WHERE m.name = %%s AND e.ds = %%s AND e.id >= %%s%s" % (target, where),
                    (name, ds, sets[ds]))
        r = cur.fetchone()[0]
        return r if isinstance(r, dict) else json.loads(r)

    def rows(name, ds, select, group=None):
        where = "" if group is None else " AND e.grp = %d" % group
        cur.execute("SELECT %s FROM kmcc_ev e, kmcc_models m WHERE m.name = %%s AND e.ds = %%s "
                    "AND e.id >= %%s%s ORDER BY e.id" % (select, where), (name, ds, sets[ds]))
        return cur.fetchall()

    def num(v):
        return float("nan") if v is None else float(v)

    @check("n. kernel_evaluate regression")
    def _():
        train_ev("ev_dia", "dia", "y", {"lambda": 0.1, "gamma": 0.5})
        for group in (None, 1):
            got = evaluate("ev_dia", "dia", "y", group)
            r = rows("ev_dia", "dia", "e.y, kernel_predict(m.model, e.f)", group)
            y = np.array([a for a, _ in r])
            p = np.array([b for _, b in r])
            tag = "n. kernel_evaluate regression%s" % ("" if group is None else " (GROUP BY, group 1)")
            report(got["n"] == len(y), tag + " n", "%d rows, expected %d" % (got["n"], len(y)))
            compare(tag + " rmse vs sqrt(mean_squared_error)", got["rmse"],
                    np.sqrt(metrics.mean_squared_error(y, p)), 1e-9)
            compare(tag + " mae vs mean_absolute_error", got["mae"],
                    metrics.mean_absolute_error(y, p), 1e-9)
            compare(tag + " r2 vs r2_score", got["r2"], metrics.r2_score(y, p), 1e-9, "abs")

    def class_checks(name, ds, proba):
        got = evaluate(name, ds, "label")
        classes = got["confusion"]["labels"]
        pred = rows(name, ds, "e.label, kernel_predict_class(m.model, e.f), kernel_predict(m.model, e.f)"
                    if len(classes) == 2 else "e.label, kernel_predict_class(m.model, e.f), 0::float8")
        y = [a for a, _, _ in pred]
        c = [b for _, b, _ in pred]
        tag = "n. kernel_evaluate %s" % name
        report(got["n"] == len(y), tag + " n", "%d rows, expected %d" % (got["n"], len(y)))
        compare(tag + " accuracy vs accuracy_score", got["accuracy"],
                metrics.accuracy_score(y, c), 1e-9, "abs")
        compare(tag + " balanced_accuracy vs balanced_accuracy_score", got["balanced_accuracy"],
                metrics.balanced_accuracy_score(y, c), 1e-9, "abs")
        cm = metrics.confusion_matrix(y, c, labels=classes)
        report(np.array_equal(np.array(got["confusion"]["matrix"]), cm),
               tag + " confusion vs confusion_matrix", "%s" % got["confusion"]["matrix"])
        prec, rec, f1, sup = metrics.precision_recall_fscore_support(
            y, c, labels=classes, zero_division=0)
        compare(tag + " per-class precision, recall, F1 vs precision_recall_fscore_support",
                [[got["classes"][k][m] for k in classes] for m in ("precision", "recall", "f1")],
                [prec, rec, f1], 1e-9, "abs")
        report([got["classes"][k]["support"] for k in classes] == list(sup),
               tag + " per-class support", "%s" % list(sup))
        P = None
        if proba:
            P = np.array([[num(r[0][k]) for k in classes]
                          for r in rows(name, ds, "kernel_predict_proba(m.model, e.f)")])
            compare(tag + " log_loss vs log_loss", got["log_loss"],
                    metrics.log_loss(y, P, labels=classes), 1e-9, "abs")
        else:
            report(got["log_loss"] is None, tag + " log_loss null without probabilities",
                   "%r" % got["log_loss"])
        if len(classes) == 2:
            score = P[:, 1] if proba else np.array([f for _, _, f in pred])
            compare(tag + " auc vs roc_auc_score", got["auc"],
                    metrics.roc_auc_score([v == classes[1] for v in y], score), 1e-9, "abs")

    @check("n. kernel_evaluate binary logistic")
    def _():
        train_ev("ev_bc_log", "bc", "label", {"method": "logistic", "lambda": 1e-3})
        class_checks("ev_bc_log", "bc", True)

    @check("n. kernel_evaluate binary svm")
    def _():
        train_ev("ev_bc_svm", "bc", "label", {"method": "svm", "lambda": 1e-3})
        class_checks("ev_bc_svm", "bc", False)

    @check("n. kernel_evaluate 3-class svm with probabilities")
    def _():
        train_ev("ev_wine", "wine", "label", {"method": "svm", "probability": True})
        class_checks("ev_wine", "wine", True)

    @check("n. kernel_predict_matrix from a psycopg2 2-D list")
    def _():
        X = [list(map(float, r[0])) for r in rows("ev_dia", "dia", "e.f")]
        cur.execute("SELECT kernel_predict_matrix(model, %s::float8[]) FROM kmcc_models WHERE name = 'ev_dia'", (X,))
        got = cur.fetchone()[0]
        want = [r[0] for r in rows("ev_dia", "dia", "kernel_predict(m.model, e.f)")]
        compare("n. kernel_predict_matrix from a psycopg2 2-D list vs kernel_predict", got, want, 1e-12)
        cur.execute("SELECT kernel_predict_proba_matrix(model, %s::float8[]) FROM kmcc_models "
                    "WHERE name = 'ev_wine'", ([list(map(float, r[0])) for r in rows("ev_wine", "wine", "e.f")],))
        got = np.array(cur.fetchone()[0])
        cls = sorted(set(r[0] for r in rows("ev_wine", "wine", "e.label")))
        want = [[r[0][k] for k in cls] for r in rows("ev_wine", "wine", "kernel_predict_proba(m.model, e.f)")]
        compare("n. kernel_predict_proba_matrix (rows x classes) vs kernel_predict_proba", got, want, 1e-12)


# ---------------------------------------------------------------- nystrom centres (issue 31)

def clustered_mixture(n, d=6, k=12, seed=SEED):
    """k Gaussian clusters of unequal size (weights 1..k squared) and spread
    (0.1 .. 0.6) in d features; y a smooth function of the position plus
    noise 0.1."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, (k, d))
    spread = np.linspace(0.1, 0.6, k)[rng.permutation(k)]
    w = np.arange(1, k + 1, dtype=float) ** 2
    lab = rng.choice(k, size=n, p=w / w.sum())
    X = centres[lab] + spread[lab, None] * rng.standard_normal((n, d))
    y = (np.sin(X[:, 0]) + 0.5 * np.cos(0.7 * X[:, 1]) * X[:, 2] / 3.0
         + 0.3 * np.sin(X[:, 3] * X[:, 4] / 4.0) + 0.1 * rng.standard_normal(n))
    return X, y


def lloyd(Xs, C, max_iter=10, tol=1e-4):
    """Lloyd's iterations as kernel_ml runs them (centres.h): nearest centre
    (the first on a tie), empty clusters keep their centre, stop after the
    iteration whose inertia fell by at most tol of itself."""
    C = C.copy()
    prev = -1.0
    iters = 0
    for _ in range(max_iter):
        d2 = ((Xs[:, None, :] - C[None, :, :]) ** 2).sum(2)
        a = np.argmin(d2, axis=1)
        inertia = float(d2[np.arange(len(Xs)), a].sum())
        counts = np.bincount(a, minlength=len(C))
        for c in np.nonzero(counts)[0]:
            C[c] = Xs[a == c].mean(0)
        iters += 1
        if prev >= 0.0 and prev - inertia <= tol * inertia:
            break
        prev = inertia
    return C, iters


def leverage_scores(Xs, S, gamma, lam):
    """Nystrom ridge leverage scores of rows Xs from the sketch S (centres.h):
    (k(x, x) - k_x' (K_SS + lam m / n I)^-1 k_x) / lam, rbf."""
    n, m = len(Xs), len(S)
    K = rbf(S, S, gamma) + lam * m / n * np.eye(m)
    Kx = rbf(Xs, S, gamma)
    return np.maximum((1.0 - np.einsum("ij,ji->i", Kx, np.linalg.solve(K, Kx.T))) / lam, 1e-300)


def leverage_rule(Xs, S, gamma, lam, grid=40):
    """centres.h's sample rule: lambda_s, the first lam 2^(g/2) (g < grid)
    whose scores sum to at most m, its scores, and the uniform share
    floor(m ess), ess = (sum l)^2 / (n sum l^2) at lambda_s."""
    n, m = len(Xs), len(S)
    for g in range(grid):
        lam_s = lam * 2.0 ** (g / 2.0)
        lev = leverage_scores(Xs, S, gamma, lam_s)
        if lev.sum() <= m:
            break
    k = int(np.floor(m * lev.sum() ** 2 / (n * (lev * lev).sum())))
    return lam_s, lev, k


def check_centres(cur):
    """(p) "centers": kmeans centres vs NumPy's Lloyd from the uniform
    sample (the uniform model's centres) within 1e-10; leverage centres are
    rows whose NumPy leverage scores (from the same sketch) are above the
    rows' mean; held-out RMSE over exact on a clustered mixture (12
    clusters, d = 6) and Friedman #1 for uniform, kmeans and leverage."""
    from sklearn.datasets import make_friedman1

    X, y = clustered_mixture(4000)
    Xtr, ytr, Xte, yte = X[:3000], y[:3000], X[3000:], y[3000:]
    load(cur, "mix", Xtr, ytr, Xte)
    Xf, yf = make_friedman1(n_samples=4000, n_features=10, noise=1.0, random_state=SEED % 1000)
    load(cur, "cfried", Xf[:3000], yf[:3000], Xf[3000:])
    cur.execute("ANALYZE kmcc_train")
    m = 200
    gamma = {"mix": 0.5, "cfried": 0.05}
    lams = {"mix": 0.1, "cfried": 1e-3}
    lam = lams["mix"]
    base = {"approximation": "nystrom", "components": m, "seed": 5}
    fits = {}
    for ds in ("mix", "cfried"):
        for c in ("uniform", "kmeans", "leverage"):
            train(cur, "c_%s_%s" % (ds, c), ds, dict(base, gamma=gamma[ds], centers=c, **{"lambda": lams[ds]}))
        train(cur, "c_%s_exact" % ds, ds, {"gamma": gamma[ds], "lambda": lams[ds]})

    @check("kmeans centres vs NumPy Lloyd")
    def _():
        u = export_of(cur, "c_mix_uniform")
        k = export_of(cur, "c_mix_kmeans")
        Xs = (Xtr - np.array(u["mean"])) / np.array(u["scale"])
        want, iters = lloyd(Xs, np.array(u["centers"]))
        compare("p kmeans m=%d: centres after %d Lloyd iterations vs NumPy from the uniform sample"
                % (m, iters), np.array(k["centers"]), want, 1e-10, "abs")

    @check("leverage centres")
    def _():
        u = export_of(cur, "c_mix_uniform")
        v = export_of(cur, "c_mix_leverage")
        Xs = (Xtr - np.array(u["mean"])) / np.array(u["scale"])
        C = np.array(v["centers"])
        # every centre is a training row, distinct
        d2 = ((C[:, None, :] - Xs[None, :, :]) ** 2).sum(2)
        rows = np.argmin(d2, axis=1)
        is_row = bool(np.all(d2[np.arange(len(C)), rows] < 1e-20)) and len(set(rows)) == len(C)
        U = np.array(u["centers"])
        lam_s, lev, k = leverage_rule(Xs, U, gamma["mix"], lam)
        first = abs_err(C[:k], U[:k]) if k > 0 else 0.0
        # the (m - k)-th row is not the uniform sample's (k + 1)-th: the share is exactly k
        nextu = k >= m or abs_err(C[k:k + 1], U[k:k + 1]) > 0.0
        ratio = float(lev[rows[k:]].mean() / lev.mean()) if k < m else 2.0
        report(is_row and first <= 1e-12 and nextu and ratio > 1.0,
               "p leverage m=%d: centres are distinct training rows, the first k the uniform "
               "sample's, the rest sampled by their NumPy leverage scores at lambda_s (k, "
               "lambda_s from NumPy)" % m,
               "rows %s, k = %d, lambda_s = %g, first k vs uniform %.3g (tol 1e-12), row k + 1 "
               "not uniform's %s, mean score of the rest / of every row %.3f (> 1)"
               % (is_row, k, lam_s, first, nextu, ratio))

    @check("centres accuracy")
    def _():
        for ds, yt in (("mix", yte), ("cfried", yf[3000:])):
            rmse = {c: float(np.sqrt(np.mean((predict(cur, "c_%s_%s" % (ds, c), ds) - yt) ** 2)))
                    for c in ("exact", "uniform", "kmeans", "leverage")}
            fits[ds] = rmse
            ex = {c: rmse[c] / rmse["exact"] - 1.0 for c in ("uniform", "kmeans", "leverage")}
            print("# %s m=%d held-out RMSE: exact %.5f, excess over exact: uniform %.2f %%, "
                  "kmeans %.2f %%, leverage %.2f %%" % (ds, m, rmse["exact"], 100 * ex["uniform"],
                                                       100 * ex["kmeans"], 100 * ex["leverage"]))
        r = fits["mix"]
        exu = r["uniform"] / r["exact"] - 1.0
        exb = min(r["kmeans"], r["leverage"]) / r["exact"] - 1.0
        report(exb <= 0.5 * exu, "p clustered mixture: the better of kmeans / leverage halves "
               "uniform's excess RMSE over exact", "%.2f %% vs uniform %.2f %%" % (100 * exb, 100 * exu))
        f = fits["cfried"]
        worst = max(f["kmeans"], f["leverage"]) / f["uniform"]
        report(worst <= 1.005, "p Friedman #1: kmeans and leverage within 0.5 % of uniform",
               "worst ratio %.4f (tol 1.005)" % worst)


def check_gp(cur):
    """(q) kernel_predict_std and kernel_model_info's amplitude and
    log_marginal_likelihood vs GaussianProcessRegressor(ConstantKernel(s2) *
    RBF(l) + WhiteKernel(s2 lambda), optimizer=None, alpha=0) on the
    standardized rows (StandardScaler) and the centred target, gamma =
    1 / (2 l^2), s2 = yc'(K + lambda I)^-1 yc / n from NumPy."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    Xd, yd = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(SEED + 32)
    perm = rng.permutation(len(yd))
    Xs_ = rng.standard_normal((300, 4))
    ys_ = np.sin(Xs_[:, 0]) + 0.5 * Xs_[:, 1] * Xs_[:, 2] + 0.1 * rng.standard_normal(300) + 2.0
    sets = {
        "gp_dia": (Xd[perm[:200]], yd[perm[:200]], Xd[perm[200:240]], 0.1, 0.05),
        "gp_syn": (Xs_[:250], ys_[:250], Xs_[250:], 0.5, 0.01),
    }
    for ds, (Xtr, ytr, Xte, gamma, lam) in sets.items():
        # held-out rows, then the first 10 training rows (where std is smallest)
        Xq = np.vstack([Xte, Xtr[:10]])
        load(cur, ds, Xtr, ytr, Xq)
        name = "q GP reading of ridge on %s (n=%d, d=%d, gamma %g, lambda %g)" % (
            ds, len(ytr), Xtr.shape[1], gamma, lam)

        @check(name)
        def _(ds=ds, Xtr=Xtr, ytr=ytr, Xq=Xq, gamma=gamma, lam=lam, name=name):
            train(cur, "gp", ds, {"gamma": gamma, "lambda": lam})
            sc = StandardScaler().fit(Xtr)
            Xs = sc.transform(Xtr)
            yc = ytr - ytr.mean()
            n = len(yc)
            K = rbf(Xs, Xs, gamma)
            s2 = float(yc @ np.linalg.solve(K + lam * np.eye(n), yc)) / n
            ell = np.sqrt(1.0 / (2.0 * gamma))
            kern = (ConstantKernel(s2, "fixed") * RBF(ell, "fixed")
                    + WhiteKernel(s2 * lam, "fixed"))
            gp = GaussianProcessRegressor(kern, optimizer=None, alpha=0.0).fit(Xs, yc)
            _, want = gp.predict(sc.transform(Xq), return_std=True)
            cur.execute("SELECT kernel_predict_std(m.model, t.f) FROM kmcc_test t, kmcc_models m "
                        "WHERE m.name = 'gp' AND t.ds = %s ORDER BY t.id", (ds,))
            got = np.array([r[0] for r in cur.fetchall()], dtype=float)
            compare(name + ": kernel_predict_std vs predict(return_std=True)", got, want, 1e-8)
            cur.execute("SELECT kernel_predict_std_matrix(m.model, (SELECT array_agg(t.f ORDER BY t.id) "
                        "FROM kmcc_test t WHERE t.ds = %s)) FROM kmcc_models m WHERE m.name = 'gp'", (ds,))
            compare(name + ": kernel_predict_std_matrix vs predict(return_std=True)",
                    np.array(cur.fetchone()[0], dtype=float), want, 1e-8)
            info = model_info(cur, "gp")
            compare(name + ": amplitude vs NumPy s2", [float(info["amplitude"])], [s2], 1e-8)
            compare(name + ": log_marginal_likelihood vs log_marginal_likelihood_value_",
                    [float(info["log_marginal_likelihood"])], [gp.log_marginal_likelihood_value_], 1e-8)

            # "cv": "evidence": every candidate's score is minus sklearn's log
            # marginal likelihood at its (gamma, lambda); a short lambda grid
            # (a Cholesky per candidate) and a long one (the tridiagonal form)
            sc_x = Xs
            for lams in ([0.003, 0.03, 0.3], list(np.geomspace(1e-3, 3.0, 10))):
                gammas = [gamma / 3.0, gamma, gamma * 3.0]
                train(cur, "gp_ev", ds, {"cv": "evidence", "gamma": gammas, "lambda": lams})
                sel = model_info(cur, "gp_ev")["selection"]
                want_s = []
                for g in gammas:
                    for lm in lams:
                        Kg = rbf(sc_x, sc_x, g)
                        s2g = float(yc @ np.linalg.solve(Kg + lm * np.eye(n), yc)) / n
                        kg = (ConstantKernel(s2g, "fixed") * RBF(np.sqrt(1.0 / (2.0 * g)), "fixed")
                              + WhiteKernel(s2g * lm, "fixed"))
                        want_s.append(-GaussianProcessRegressor(kg, optimizer=None, alpha=0.0)
                                      .fit(sc_x, yc).log_marginal_likelihood_value_)
                tag = "%s: cv evidence, %d lambdas" % (name, len(lams))
                compare(tag + ": candidate scores vs -log_marginal_likelihood_value_",
                        [float(c["score"]) for c in sel["candidates"]], want_s, 1e-8)
                report(sel["cv"] == "evidence" and sel["best"] == int(np.argmin(want_s)),
                       tag + ": winner", "best %d, sklearn's %d" % (sel["best"], int(np.argmin(want_s))))
    check_gp_approx(cur)


def check_gp_approx(cur):
    """(q) The GP reading of approximate ridge vs NumPy on the features of
    kernel_model_export (its scaler, centres or random weights and offsets):
    nystrom's DTC sparse GP (prior s2 k, noise s2 lambda, Q = K_nm K_mm^-1
    K_mn, predictive variance s2 (k(x,x) - q(x) + lambda) + k_m' Sigma k_m,
    Sigma = s2 lambda (K_mn K_nm + lambda K_mm)^-1) and rff's Bayesian linear
    regression on z(x) (Q = Z Z'): kernel_predict_std, the amplitude
    s2 = yc'(Q + lambda I)^-1 yc / n and the log marginal likelihood of
    N(0, s2 (Q + lambda I)), within 1e-8 relative."""
    rng = np.random.default_rng(SEED + 33)
    X = rng.standard_normal((400, 5))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(400) + 2.0
    Xtr, ytr, Xq = X[:360], y[:360], X[360:]
    load(cur, "gpa", Xtr, ytr, Xq)
    yc = ytr - ytr.mean()
    n = len(yc)
    for kind, m, gamma, lam in (("nystrom", 60, 0.2, 0.05), ("rff", 120, 0.2, 0.05)):
        name = "q GP reading of %s ridge (n=%d, d=5, m=%d, gamma %g, lambda %g)" % (kind, n, m, gamma, lam)

        @check(name)
        def _(kind=kind, m=m, gamma=gamma, lam=lam, name=name):
            train(cur, "gpa", "gpa", {"approximation": kind, "uncertainty": True, "components": m,
                                      "gamma": gamma, "lambda": lam})
            cur.execute("SELECT kernel_model_export(model) FROM kmcc_models WHERE name = 'gpa'")
            e = cur.fetchone()[0]
            e = json.loads(e) if isinstance(e, str) else e
            mean, scale = np.array(e["mean"]), np.array(e["scale"])
            Xs, Xqs = (Xtr - mean) / scale, (Xq - mean) / scale
            if kind == "nystrom":
                C = np.array(e["centers"])
                Kmm, Knm, ks = rbf(C, C, gamma), rbf(Xs, C, gamma), rbf(Xqs, C, gamma)
                Q = Knm @ np.linalg.solve(Kmm, Knm.T)
                s2 = float(yc @ np.linalg.solve(Q + lam * np.eye(n), yc)) / n
                Sig = s2 * lam * np.linalg.inv(Knm.T @ Knm + lam * Kmm)
                q = np.einsum("ij,ij->i", ks, np.linalg.solve(Kmm, ks.T).T)
                var = s2 * (1.0 - q + lam) + np.einsum("ij,jk,ik->i", ks, Sig, ks)
            else:
                W, b = np.array(e["weights"]), np.array(e["offsets"])
                D = len(b)
                Z = np.sqrt(2.0 / D) * np.cos(Xs @ W + b)
                Zq = np.sqrt(2.0 / D) * np.cos(Xqs @ W + b)
                Q = Z @ Z.T
                s2 = float(yc @ np.linalg.solve(Q + lam * np.eye(n), yc)) / n
                Sw = s2 * lam * np.linalg.inv(Z.T @ Z + lam * np.eye(D))
                var = s2 * lam + np.einsum("ij,jk,ik->i", Zq, Sw, Zq)
            C = s2 * (Q + lam * np.eye(n))
            lml = float(-0.5 * yc @ np.linalg.solve(C, yc) - 0.5 * np.linalg.slogdet(C)[1]
                        - 0.5 * n * np.log(2 * np.pi))
            cur.execute("SELECT kernel_predict_std(m.model, t.f) FROM kmcc_test t, kmcc_models m "
                        "WHERE m.name = 'gpa' AND t.ds = 'gpa' ORDER BY t.id")
            got = np.array([r[0] for r in cur.fetchall()], dtype=float)
            compare(name + ": kernel_predict_std vs NumPy", got, np.sqrt(var), 1e-8)
            cur.execute("SELECT kernel_predict_std_matrix(m.model, (SELECT array_agg(t.f ORDER BY t.id) "
                        "FROM kmcc_test t WHERE t.ds = 'gpa')) FROM kmcc_models m WHERE m.name = 'gpa'")
            compare(name + ": kernel_predict_std_matrix vs NumPy",
                    np.array(cur.fetchone()[0], dtype=float), np.sqrt(var), 1e-8)
            info = model_info(cur, "gpa")
            compare(name + ": amplitude vs NumPy s2", [float(info["amplitude"])], [s2], 1e-8)
            compare(name + ": log_marginal_likelihood vs NumPy", [float(info["log_marginal_likelihood"])],
                    [lml], 1e-8)

            # "cv": "evidence" over a lambda grid (the same basis: it depends
            # on the rows and gamma only): every candidate's score is minus
            # NumPy's log marginal likelihood at its lambda, and the winner
            # is the brute force over refits at each lambda with
            # "uncertainty": true (kernel_model_info's log_marginal_likelihood)
            lams = [1e-3, 1e-2, 0.05, 0.2, 1.0]

            def lml_at(lm):
                Cl = Q + lm * np.eye(n)
                s2l = float(yc @ np.linalg.solve(Cl, yc)) / n
                return float(-0.5 * n - 0.5 * (np.linalg.slogdet(Cl)[1] + n * np.log(s2l))
                             - 0.5 * n * np.log(2 * np.pi))
            train(cur, "gpa_ev", "gpa", {"approximation": kind, "components": m, "gamma": gamma,
                                         "lambda": lams, "cv": "evidence"})
            sel = model_info(cur, "gpa_ev")["selection"]
            want_s = [-lml_at(lm) for lm in lams]
            compare(name + ": cv evidence candidate scores vs NumPy -log marginal likelihood",
                    [float(c["score"]) for c in sel["candidates"]], want_s, 1e-8)
            refits = []
            for lm in lams:
                train(cur, "gpa_one", "gpa", {"approximation": kind, "uncertainty": True,
                                              "components": m, "gamma": gamma, "lambda": lm})
                refits.append(float(model_info(cur, "gpa_one")["log_marginal_likelihood"]))
            compare(name + ": cv evidence candidate scores vs refits' log_marginal_likelihood",
                    [float(c["score"]) for c in sel["candidates"]], [-v for v in refits], 1e-8)
            report(sel["cv"] == "evidence" and sel["score"] == "neg_log_marginal_likelihood"
                   and sel["best"] == int(np.argmax(refits)) == int(np.argmin(want_s)),
                   name + ": cv evidence winner = brute force over refits",
                   "best %d, refits' %d, NumPy's %d" % (sel["best"], int(np.argmax(refits)),
                                                        int(np.argmin(want_s))))



def drift_numpy(e, Xtr, Xnew):
    """The drift statistic of kernel_model_drift, from kernel_model_export's
    numbers and the raw rows alone (README "Drift"): the rows standardized by
    the model's scaler; J = min(rows of the basis, 10) features, the
    floor(j n / J)-th of the model's rows or centres (k(x, v_j)) or of its
    random features (cos(w_j' x + b_j)); delta = mean_train - mean_new,
    C = cov_train / n_train + cov_new / n_new (np.cov, denominator n - 1),
    statistic delta' C^+ delta over the eigenvalues above 1e-10 times the
    largest, dof their count, p = scipy.stats.chi2.sf."""
    from scipy import stats
    mean, scale = np.array(e["mean"]), np.array(e["scale"])

    def feats(X):
        x = (X - mean) / scale
        if e.get("approximation") == "rff":
            W, b = np.array(e["weights"]), np.array(e["offsets"])
            D = W.shape[1]
            idx = [j * D // min(D, 10) for j in range(min(D, 10))]
            return np.cos(x @ W[:, idx] + b[idx])
        C = np.array(e["centers"])
        n = len(C)
        idx = [j * n // min(n, 10) for j in range(min(n, 10))]
        params = {k: e[k] for k in ("gamma", "degree", "coef0") if k in e}
        return reference_kernel(dict(params, kernel=e["kernel"]), x, C[idx])
    Z1, Z2 = feats(Xtr), feats(Xnew)
    delta = Z1.mean(0) - Z2.mean(0)
    C = (np.atleast_2d(np.cov(Z1, rowvar=False)) / len(Z1)
         + np.atleast_2d(np.cov(Z2, rowvar=False)) / len(Z2))
    w, U = np.linalg.eigh(C)
    keep = w > 1e-10 * w.max()
    t = float(((U[:, keep].T @ delta) ** 2 / w[keep]).sum())
    return t, float(stats.chi2.sf(t, int(keep.sum()))), int(keep.sum())


def check_drift(cur):
    """(r) kernel_model_drift (issue 32, item 4) vs drift_numpy on the
    training rows and new rows: exact rbf on diabetes (300 rows against the
    other 142), nystrom (m = 100) and rff (D = 200) on a synthetic d = 20 set
    against rows with a 0.05 sd mean shift, exact linear on d = 3 (rank 3:
    dof 3): statistic and p-value within 1e-8 relative, dof and row counts
    equal; then the size of the test in NumPy: 1000 seeds of 2000 rows a side
    from one distribution (d = 5, rbf, 10 locations from the training rows),
    rejection rate at alpha 0.01 within [0.005, 0.02]."""
    Xd, yd = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(SEED + 324)
    perm = rng.permutation(len(yd))
    Xs = rng.standard_normal((3000, 20))
    Xn = rng.standard_normal((2500, 20)) + 0.05
    Xl = rng.standard_normal((800, 3)) * [1.0, 2.0, 0.5]
    Xln = rng.standard_normal((700, 3)) * [1.0, 2.0, 0.5]
    sets = [
        ("dr_dia", Xd[perm[:300]], yd[perm[:300]], Xd[perm[300:]], {"gamma": 0.1, "lambda": 0.1}),
        ("dr_nys", Xs, Xs[:, 0], Xn, {"approximation": "nystrom", "components": 100, "lambda": 0.1}),
        ("dr_rff", Xs, Xs[:, 0], Xn, {"approximation": "rff", "components": 200, "lambda": 0.1}),
        ("dr_lin", Xl, Xl[:, 0], Xln, {"kernel": "linear", "lambda": 0.1}),
    ]
    cur.execute("SELECT kernel_model_drop(name) FROM kernel_model_names WHERE name LIKE 'dr\\_%%'")
    for ds, Xtr, ytr, Xnew, opts in sets:
        load(cur, ds, Xtr, ytr, Xnew)
        name = "r drift of %s (%d training rows, %d new, d=%d, %s)" % (
            ds, len(Xtr), len(Xnew), Xtr.shape[1], json.dumps(opts))

        @check(name)
        def _(ds=ds, Xtr=Xtr, Xnew=Xnew, opts=opts, name=name):
            cur.execute("SELECT version FROM kernel_model_train(%s, %s, %s)",
                        (ds, "SELECT f, y FROM kmcc_train WHERE ds = '%s'" % ds,
                         json.dumps(dict(opts, test_fraction=0))))
            cur.execute("SELECT kernel_model_export(model) FROM kernel_models "
                        "WHERE name = %s AND deployed", (ds,))
            e = cur.fetchone()[0]
            e = e if isinstance(e, dict) else json.loads(e)
            cur.execute("SELECT kernel_model_drift(%s, %s)",
                        (ds, "SELECT f FROM kmcc_test WHERE ds = '%s'" % ds))
            got = cur.fetchone()[0]
            got = got if isinstance(got, dict) else json.loads(got)
            t, p, dof = drift_numpy(e, Xtr, Xnew)
            compare(name + ": statistic vs NumPy", [got["statistic"]], [t], 1e-8)
            compare(name + ": p_value vs scipy.stats.chi2.sf", [got["p_value"]], [p], 1e-8)
            report(got["dof"] == dof and got["n_train"] == len(Xtr) and got["n_new"] == len(Xnew),
                   name + ": dof and rows", "dof %d (NumPy %d), n_train %d, n_new %d, statistic %.6g, p %.3g"
                   % (got["dof"], dof, got["n_train"], got["n_new"], t, p))
            cur.execute("SELECT kernel_model_drop(%s)", (ds,))

    # the size of the test (the definition, in NumPy): no shift, 1000 seeds
    from scipy import stats
    srng = np.random.default_rng(SEED + 3240)
    rejected = 0
    seeds = 1000
    for _ in range(seeds):
        A = srng.standard_normal((2000, 5))
        B = srng.standard_normal((2000, 5))
        V = A[:10]
        fa, fb = rbf(A, V, 0.2), rbf(B, V, 0.2)
        delta = fa.mean(0) - fb.mean(0)
        C = np.cov(fa, rowvar=False) / 2000 + np.cov(fb, rowvar=False) / 2000
        t = float(delta @ np.linalg.solve(C, delta))
        rejected += stats.chi2.sf(t, 10) < 0.01
    rate = rejected / seeds
    report(0.005 <= rate <= 0.02, "r drift test size in NumPy (1000 seeds, 2000 rows a side, alpha 0.01)",
           "rejection rate %.4f (want within [0.005, 0.02])" % rate)
def align_signs(got, want):
    """got with each column's sign flipped to agree with want's (their dot product)."""
    got = np.array(got, dtype=float)
    for j in range(got.shape[1]):
        if float(np.dot(got[:, j], want[:, j])) < 0:
            got[:, j] = -got[:, j]
    return got


def check_kpca(cur):
    from sklearn.datasets import load_digits, load_iris, load_wine
    from sklearn.decomposition import KernelPCA

    rng = np.random.RandomState(SEED)
    # iris_default: no kernel options and no "dimensions" (rbf, gamma 1 / d, k = 2: KernelPCA's)
    cases = (("iris_default", load_iris, 120, 2, {"kernel": "rbf"}),
             ("iris", load_iris, 120, 3, {"kernel": "rbf", "gamma": 0.2}),
             ("wine", load_wine, 140, 5, {"kernel": "rbf", "gamma": 1.0 / 13}),
             ("wine_poly", load_wine, 140, 5,
              {"kernel": "poly", "gamma": 0.05, "degree": 2, "coef0": 1.0}),
             # from 1,500 rows, k <= 32: the block Lanczos solver, not dsyevr (kpca.c)
             ("digits", load_digits, 1600, 2, {"kernel": "rbf", "gamma": 1.0 / 64}),
             ("digits16", load_digits, 1600, 16, {"kernel": "rbf", "gamma": 1.0 / 64}))
    for name, loader, ntr, k, kopts in cases:
        X = loader().data.astype(float)
        order = rng.permutation(len(X))
        Xtr, Xte = X[order[:ntr]], X[order[ntr:]]
        ds = "kpca_" + name
        load(cur, ds, Xtr, np.zeros(len(Xtr)), np.vstack([Xte, Xtr]))
        sc = StandardScaler().fit(Xtr)
        ref = KernelPCA(n_components=k, eigen_solver="dense", **kopts,
                        ).fit(sc.transform(Xtr))
        want = ref.transform(sc.transform(np.vstack([Xte, Xtr])))
        Kc = pairwise_kernels(sc.transform(Xtr), metric=kopts["kernel"],
                              **(sk_params(kopts) or {"gamma": 1.0 / X.shape[1]}))
        H = np.eye(ntr) - 1.0 / ntr
        trace = float(np.trace(H @ Kc @ H))
        tag = "kpca %s (%s, k = %d)" % (name, kname(kopts), k)

        def fit_and_transform(mname, opts):
            cur.execute("DELETE FROM kmcc_models WHERE name = %s", (mname,))
            cur.execute("INSERT INTO kmcc_models (name, model) "
                        "SELECT %s, kernel_fit(f, %s::jsonb) FROM kmcc_train WHERE ds = %s",
                        (mname, json.dumps(opts), ds))
            cur.execute("SELECT kernel_transform(m.model, t.f) FROM kmcc_test t, kmcc_models m "
                        "WHERE m.name = %s AND t.ds = %s ORDER BY t.id", (mname, ds))
            return np.array([r[0] for r in cur.fetchall()], dtype=float)

        @check(tag)
        def _():
            opts = dict(kopts, method="pca", dimensions=k) if len(kopts) > 1 else {"method": "pca"}
            got = fit_and_transform(ds, opts)
            compare(tag + ": kernel_transform vs KernelPCA.transform (signs aligned)",
                    align_signs(got, want), want, 1e-8)
            info = model_info(cur, ds)
            compare(tag + ": eigenvalues vs eigenvalues_", info["eigenvalues"],
                    ref.eigenvalues_, 1e-8)
            compare(tag + ": explained_variance_ratio vs eigenvalues / trace(Kc)",
                    info["explained_variance_ratio"], ref.eigenvalues_ / trace, 1e-8)
            nys = fit_and_transform(ds + "_nys", dict(opts, approximation="nystrom",
                                                      components=max(1000, ntr)))
            compare(tag + ": nystrom (components >= n) vs exact (signs aligned)",
                    align_signs(nys, got), got, 1e-6)


def oneclass_primal_scipy(Z, nu):
    """The one-class objective on features Z by SciPy (SLSQP on w, rho and
    the slacks): min 1/2 ||w||^2 - rho + 1/(nu n) sum xi, w'z_i >= rho - xi,
    xi >= 0; returns (nu n w, -nu n rho), libsvm's scale."""
    import scipy.optimize
    n, m = Z.shape
    c = 1.0 / (nu * n)
    v0 = np.zeros(m + 1 + n)
    v0[m + 1:] = 1.0
    r = scipy.optimize.minimize(
        lambda v: 0.5 * v[:m] @ v[:m] - v[m] + c * v[m + 1:].sum(), v0,
        jac=lambda v: np.concatenate([v[:m], [-1.0], np.full(n, c)]),
        constraints=[{"type": "ineq", "fun": lambda v: Z @ v[:m] - v[m] + v[m + 1:],
                      "jac": lambda v: np.hstack([Z, -np.ones((n, 1)), np.eye(n)])}],
        bounds=[(None, None)] * (m + 1) + [(0, None)] * n, method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 3000})
    # status 8 (a line search that cannot descend) at a feasible point is the optimum to rounding
    viol = max(0.0, float(-np.min(Z @ r.x[:m] - r.x[m] + r.x[m + 1:])), float(-np.min(r.x[m + 1:])))
    if not (r.success or (r.status == 8 and viol <= 1e-9)):
        raise RuntimeError("SLSQP: %s (constraint violation %g)" % (r.message, viol))
    return nu * n * r.x[:m], -nu * n * r.x[m]


def check_oneclass(cur):
    """(s) one-class SVM (issue 32): kernel_fit(f, {"method": "oneclass"}) vs
    scikit-learn's OneClassSVM(nu, gamma, tol = 1e-6) on StandardScaler'd rows
    (kernel_ml's standardize), decision values of held-out and training rows
    within 1e-3 relative and the inlier / outlier labels equal, on
    breast_cancer (defaults: nu 0.5, gamma 1 / d = 'scale'), wine (nu 0.1,
    gamma 0.05) and blobs with uniform outliers (nu 0.05, gamma 0.5);
    nystrom with components >= n equals exact within 1e-4; nystrom (m = 20)
    and rff (m = 30) on blobs vs SciPy's primal solve of the same objective on
    the exported features within 1e-3."""
    from sklearn.datasets import load_breast_cancer, load_wine
    from sklearn.svm import OneClassSVM

    rng = np.random.RandomState(SEED)
    B = np.vstack([rng.randn(285, 2) * [1.0, 0.6] + [1, -1],
                   rng.uniform(-5, 5, (15, 2))])
    cases = (("breast_cancer", load_breast_cancer().data, 450, {}, 0.5, None),
             ("wine", load_wine().data, 140, {"gamma": 0.05}, 0.1, 0.05),
             ("blobs", B, 240, {"gamma": 0.5, "nu": 0.05}, 0.05, 0.5))
    for name, X, ntr, extra, nu, gamma in cases:
        X = X.astype(float)
        order = rng.permutation(len(X))
        Xtr, Xte = X[order[:ntr]], X[order[ntr:]]
        Xall = np.vstack([Xte, Xtr])
        ds = "oneclass_" + name
        load(cur, ds, Xtr, np.zeros(len(Xtr)), Xall)
        sc = StandardScaler().fit(Xtr)
        opts = dict(extra, method="oneclass", tol=1e-6)
        if name == "wine":
            opts["nu"] = nu
        ref = OneClassSVM(nu=nu, gamma=gamma if gamma else "scale", tol=1e-6,
                          cache_size=200).fit(sc.transform(Xtr))
        want = ref.decision_function(sc.transform(Xall))
        tag = "oneclass %s (nu %g, gamma %s)" % (name, nu, gamma or "1 / d")

        def fit_and_score(mname, o):
            cur.execute("DELETE FROM kmcc_models WHERE name = %s", (mname,))
            cur.execute("INSERT INTO kmcc_models (name, model) "
                        "SELECT %s, kernel_fit(f, %s::jsonb) FROM kmcc_train WHERE ds = %s",
                        (mname, json.dumps(o), ds))
            cur.execute("SELECT kernel_predict(m.model, t.f), kernel_predict_class(m.model, t.f) "
                        "FROM kmcc_test t, kmcc_models m WHERE m.name = %s AND t.ds = %s "
                        "ORDER BY t.id", (mname, ds))
            rows = cur.fetchall()
            return np.array([r[0] for r in rows], dtype=float), [r[1] for r in rows]

        @check(tag)
        def _():
            got, labels = fit_and_score(ds, opts)
            compare(tag + ": kernel_predict vs OneClassSVM.decision_function", got, want, 1e-3)
            sk = ["inlier" if p == 1 else "outlier" for p in ref.predict(sc.transform(Xall))]
            near = np.abs(want) <= 1e-6 * np.max(np.abs(want))
            bad = sum(1 for a, b, z in zip(labels, sk, near) if a != b and not z)
            report(bad == 0, tag + ": kernel_predict_class vs OneClassSVM.predict",
                   "%d of %d labels differ (%d outliers)" % (bad, len(sk), sk.count("outlier")))
            info = model_info(cur, ds)
            report(info["task"] == "novelty" and info["n_support"] == len(ref.support_),
                   tag + ": n_support vs support_",
                   "%s vs %d" % (info["n_support"], len(ref.support_)))
            nys, _l = fit_and_score(ds + "_nys", dict(opts, approximation="nystrom",
                                                      components=1000))
            compare(tag + ": nystrom (components >= n) vs exact", nys, got, 1e-4)

    ds = "oneclass_blobs"
    for approx, m in (("nystrom", 20), ("rff", 30)):
        tag = "oneclass blobs %s m = %d vs SciPy's primal on its features" % (approx, m)

        @check(tag)
        def _():
            mname = ds + "_" + approx
            o = {"method": "oneclass", "nu": 0.05, "gamma": 0.5, "tol": 1e-9,
                 "approximation": approx, "components": m}
            cur.execute("DELETE FROM kmcc_models WHERE name = %s", (mname,))
            cur.execute("INSERT INTO kmcc_models (name, model) "
                        "SELECT %s, kernel_fit(f, %s::jsonb) FROM kmcc_train WHERE ds = %s",
                        (mname, json.dumps(o), ds))
            cur.execute("SELECT f FROM kmcc_train WHERE ds = %s ORDER BY id", (ds,))
            Xtr = np.array([r[0] for r in cur.fetchall()], dtype=float)
            cur.execute("SELECT t.f, kernel_predict(m.model, t.f) FROM kmcc_test t, kmcc_models m "
                        "WHERE m.name = %s AND t.ds = %s ORDER BY t.id", (mname, ds))
            rows = cur.fetchall()
            Xall = np.array([r[0] for r in rows], dtype=float)
            got = np.array([r[1] for r in rows], dtype=float)
            e, info = export_of(cur, mname), model_info(cur, mname)
            w, b = oneclass_primal_scipy(whitened_features(e, info, Xtr), 0.05)
            want = whitened_features(e, info, Xall) @ w + b
            compare(tag, got, want, 1e-3)


def main():
    t0 = time.time()
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("SET extra_float_digits = 3")      # exact float8 text output
    for t in TABLES:
        cur.execute("DROP TABLE IF EXISTS %s" % t)
    cur.execute("CREATE TABLE kmcc_train (ds text, id int, f float8[], y float8)")
    cur.execute("CREATE TABLE kmcc_test (ds text, id int, f float8[])")
    cur.execute("CREATE TABLE kmcc_models (name text PRIMARY KEY, model bytea)")
    cur.execute("CREATE TABLE kmcc_types (id int, fi int[], fr real[], "
                "fn numeric[], ff float8[], y float8)")
    cur.execute("CREATE TABLE kmcc_cls (ds text, id int, f float8[], label text)")
    only = {"classify": lambda c: (check_classification(c), check_approx_classification(c)),
            "approx_classify": check_approx_classification,
            "defaults": check_default_classifiers,
            "svr": lambda c: (check_svr(c), check_approx_svr(c)),
            "evaluate": check_evaluate,
            "tables": check_tables,
            "centres": check_centres,
            "cg": check_cg,
            "gp": check_gp,
            "drift": check_drift,
            "kpca": check_kpca,
            "oneclass": check_oneclass}
    if len(sys.argv) == 2 and sys.argv[1] in only:
        try:
            only[sys.argv[1]](cur)
        finally:
            for t in TABLES:
                cur.execute("DROP TABLE IF EXISTS %s" % t)
            conn.close()
        print("# %.1f s" % (time.time() - t0))
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0

    dia, syn, cub, lms, conv, types = datasets()
    load(cur, "dia", *dia)
    load(cur, "syn", *syn)
    load(cur, "cubic", cub, np.zeros(len(cub)))
    load(cur, "lms", *lms)
    load(cur, "conv", *conv)
    cur.execute("ANALYZE kmcc_train")
    cur.execute("ANALYZE kmcc_test")

    try:
        check_ridge(cur, {"dia": dia, "syn": syn})
        check_extra_kernels_ridge(cur, {"dia": dia})
        check_gram(cur, dia[0])
        check_cubic(cur, cub)
        check_lms_steps(cur, *lms)
        check_lms_converges(cur, *conv)
        check_casts(cur, *types)
        check_export(cur, *dia)
        check_approx(cur)
        check_cg(cur)
        check_classification(cur)
        check_approx_classification(cur)
        check_default_classifiers(cur)
        check_svr(cur)
        check_approx_svr(cur)
        check_evaluate(cur)
        check_tables(cur)
        check_centres(cur)
        check_gp(cur)
        check_drift(cur)
        check_kpca(cur)
        check_oneclass(cur)
    finally:
        for t in TABLES:
            cur.execute("DROP TABLE IF EXISTS %s" % t)
        conn.close()

    print("# %.1f s" % (time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
