#!/usr/bin/env bash
# make bench-phases: one kernel_train, an earlier kernel_ml (KM_COMPARE_REF,
# default ca363a1: 0.2.0) against this tree, alternately in one cluster,
# with the phases kernel_train logs at DEBUG1 (prepare and select, allocate,
# fit + encode + free), so that a difference in the ratio of make
# bench-compare can be traced to a phase.  Builds the earlier version in a
# temporary git worktree and loads its script by hand (as compare_010.sh);
# this tree's build must be installed.  Run it as
#     make install && pg_virtualenv make bench-phases
# Environment: KM_COMPARE_REF, KM_PHASES_N (rows, default 8000),
# KM_PHASES_D (features, default 8), KM_PHASES_ROUNDS (default 5),
# KM_PHASES_OPTIONS (default {"kernel": "rbf", "lambda": 1}).
set -euo pipefail
cd "$(dirname "$0")/../.."

ref=${KM_COMPARE_REF:-ca363a1}
n=${KM_PHASES_N:-8000}
d=${KM_PHASES_D:-8}
rounds=${KM_PHASES_ROUNDS:-5}
opts=${KM_PHASES_OPTIONS:-'{"kernel": "rbf", "lambda": 1}'}
for v in $(compgen -e | grep -E '^(OPENBLAS_|GOTO_|OMP_NUM_THREADS$|MKL_NUM_THREADS$)'); do
	unset "$v"
done

tmp=$(mktemp -d /tmp/km_phases.XXXXXX)
chmod 755 "$tmp"
cleanup() {
	git worktree remove --force "$tmp/ref" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git worktree add --detach "$tmp/ref" "$ref" >/dev/null 2>&1
make -s -C "$tmp/ref" >/dev/null
chmod -R a+rX "$tmp"

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS km_ref" -c "DROP DATABASE IF EXISTS km_head" \
	-c "CREATE DATABASE km_ref" -c "CREATE DATABASE km_head"
sed -e '/^\\echo/d' -e '/pg_extension_config_dump/d' -e "s|MODULE_PATHNAME|$tmp/ref/kernel_ml.so|g" \
	"$tmp/ref/sql/kernel_ml.sql" | psql -X -q -v ON_ERROR_STOP=1 -d km_ref >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d km_head -c "CREATE EXTENSION kernel_ml"
for db in km_ref km_head; do
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "SELECT setseed(0.5)" \
		-c "CREATE TABLE t AS SELECT ARRAY(SELECT random() FROM generate_series(1, $d) WHERE g > 0) f, random() y FROM generate_series(1, $n) g" >/dev/null
done
echo "kernel_train over $n rows x $d, options $opts; $ref vs HEAD $(git rev-parse --short HEAD) (installed); $rounds rounds, order alternating"
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then order="km_ref km_head"; else order="km_head km_ref"; fi
	for db in $order; do
		psql -X -q -d "$db" -c "SET client_min_messages = debug1" -c '\timing on' \
			-c "SELECT length(kernel_train(f, y, '$opts')) FROM t" 2>&1 |
			sed -nE "s/^DEBUG: +kernel_train: [^:]*: (.*)/$db round $r: \1/p; s/^Time: ([0-9.]+) ms.*/$db round $r: total \1 ms/p"
	done
done | tee "$tmp/log"
python3 - "$tmp/log" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    db = line.split()[0]
    for key, v in re.findall(r"(prepare and select|allocate|fit, encode and free) ([0-9.]+) s", line):
        runs.setdefault((db, key), []).append(float(v))
    m = re.search(r"total ([0-9.]+) ms", line)
    if m:
        runs.setdefault((db, "total"), []).append(float(m.group(1)) / 1000)
print("| phase | ref median s | HEAD median s | HEAD / ref |")
print("|---|---|---|---|")
for key in ("prepare and select", "allocate", "fit, encode and free", "total"):
    a, b = runs.get(("km_ref", key)), runs.get(("km_head", key))
    if a and b:
        ma, mb = statistics.median(a), statistics.median(b)
        print("| %s | %.3f | %.3f | %s |" % (key, ma, mb, "%.3f" % (mb / ma) if ma > 0 else "-"))
PY
