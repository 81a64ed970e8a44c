#!/usr/bin/env bash
# kernel_ml benchmarks (`make bench`), as root from the repository root, with
# the extension built and installed (make && make install).
#
# Starts one throwaway PostgreSQL 15 cluster (pg_virtualenv) and runs in it
#   test/bench/core.py       training, scoring, memory, parallel query vs
#                            scikit-learn, a PL/Python peer and bare dpotrf
#   test/bench/selection.py  (if present) model selection
#   test/bench/by_name.py    (if present) named models
#   test/bench/group_scoring.py  (if present) per-group models, sorted vs interleaved rows
#   test/bench/approx_accuracy.py  Nystrom/RFF accuracy vs exact and scikit-learn (Friedman #1)
#   test/bench/centres.py    nystrom "centers" uniform / kmeans / leverage vs exact and
#                            scikit-learn (Friedman #1, a clustered mixture)
#   test/bench/scale_1m.py   held-out RMSE against time at 1M rows, d = 20: one-pass and cg
#                            nystrom, scikit-learn Nystroem + Ridge, Falkon in NumPy
#   test/bench/cg_10m.py     10M rows, d = 20: cg m = 4,000 with 2 workers vs one-pass m = 1,000
#   test/bench/approx.py     (if present) Nystrom/RFF: two passes, parallel workers, scoring
#   test/bench/classify.py   (if present) exact SVM vs SVC; class/probability scoring
#   test/bench/approx_classify.py  (if present) approximate logistic / L2-SVM at 1M rows vs
#                            scikit-learn's Nystroem pipelines
#   test/bench/defaults_datasets.py  (if present) default options vs SVC(), SVR(),
#                            KernelRidge() and R kernlab's ksvm() on 27 real data sets
#                            (needs Rscript with r-cran-mlbench, r-cran-kernlab for the R sets)
#   test/bench/matrix_scoring.py  (if present) kernel_predict_matrix vs per-row, scikit-learn
#                            and the arithmetic limit
#   test/bench/drift.py      (if present) kernel_model_drift at 1M rows a side; the test's
#                            size and power (NumPy, 200 seeds of 100k rows)
#   test/bench/kpca_bench.py (if present) kernel_fit "pca" (nystrom m = 1000 and exact) vs
#                            scikit-learn's Nystroem + PCA and KernelPCA: time, peak memory
#   test/bench/gp_std_bench.py  (if present) kernel_predict_std rows/s vs the dtrsv/dtrsm
#                            limit and GaussianProcessRegressor.predict(return_std=True)
# Each prints its own table; everything printed is also saved to
# test/bench/results-latest.txt.
#
# Environment: KM_BENCH_QUICK=1 (small sizes, one run each, ~2 minutes),
# KM_BENCH_SKIP_30K=1 (skip the n = 30,000 training), KM_BENCH_RUNS=k.
set -uo pipefail
cd "$(dirname "$0")/../.."

need=()
for p in postgresql-plpython3-15 python3-sklearn python3-psycopg2 python3-threadpoolctl; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" ||
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"; } || exit 1
fi

sharedir=$(/usr/lib/postgresql/15/bin/pg_config --sharedir)
if [ ! -f "$sharedir/extension/kernel_ml.control" ]; then
	echo "kernel_ml is not installed: run make && make install first" >&2
	exit 1
fi

# The scripts set the same BLAS thread count everywhere themselves.  The
# server's backends do not inherit this shell's environment (pg_ctlcluster
# starts PostgreSQL with a clean one), so OpenBLAS picks its kernels there
# by CPU detection; drop any OPENBLAS_* settings (OPENBLAS_CORETYPE in
# particular) so that Python, scikit-learn and the dpotrf program use the
# same kernels as the backend.  core.py checks that they match.
for v in $(compgen -e | grep -E '^(OPENBLAS_|GOTO_|OMP_NUM_THREADS$|MKL_NUM_THREADS$)'); do
	unset "$v"
done

out=test/bench/results-latest.txt
inner='set -u
rc=0
/usr/bin/python3 test/bench/core.py || rc=1
for s in selection by_name group_scoring approx_accuracy centres scale_1m cg_10m approx classify approx_classify defaults_datasets matrix_scoring drift kpca_bench gp_std_bench; do
	if [ -f "test/bench/$s.py" ]; then
		echo
		/usr/bin/python3 "test/bench/$s.py" || rc=1
	fi
done
exit $rc'

echo "kernel_ml benchmark: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)'); command: ${KM_BENCH_QUICK:+KM_BENCH_QUICK=1 }${KM_BENCH_SKIP_30K:+KM_BENCH_SKIP_30K=1 }make bench" | tee "$out"
pg_virtualenv -t -o max_parallel_workers=8 -o max_worker_processes=16 \
	-o shared_buffers=1GB -o work_mem=64MB -o max_wal_size=4GB \
	bash -c "$inner" 2>&1 | tee -a "$out"
exit "${PIPESTATUS[0]}"
