#!/usr/bin/env bash
# make bench-compare: the training benchmark (test/bench/core.py sections
# 1-3) against an earlier kernel_ml (0.1.0 by default; KM_COMPARE_REF=ca363a1
# KM_COMPARE_LABEL=0.2.0 for 0.2.0) and against this tree, alternately, in one
# run and one cluster, printing each measure's ratio for both side by side.
#
# 0.1.0 is built from git history (KM_COMPARE_REF, default 9b7ebe7: the
# commit whose build wrote test/fixtures) in a temporary git worktree; its
# install script is loaded by hand into its own database with
# MODULE_PATHNAME pointing at that build's kernel_ml.so, so that each
# backend loads one of the two libraries.  This tree's build must be
# installed (it is CREATE EXTENSION'd into a second database).  Installs
# nothing itself, but needs a cluster: run it as
#     /work/tools/kmtest make bench-compare            (shared machine)
#     make install && pg_virtualenv make bench-compare
#
# Environment: KM_COMPARE_REF, KM_COMPARE_ROUNDS (default 3: rounds of one
# run per version, the order of the two versions alternating by round),
# KM_BENCH_TRAIN_N (default 10000).  Prints per-round ratios and medians.
set -euo pipefail
cd "$(dirname "$0")/../.."

ref=${KM_COMPARE_REF:-9b7ebe7}
rounds=${KM_COMPARE_ROUNDS:-3}
export KM_BENCH_TRAIN_N=${KM_BENCH_TRAIN_N:-10000}
export KM_BENCH_TRAIN_ONLY=1 KM_BENCH_RUNS=1 KM_BENCH_SKIP_30K=1
for v in $(compgen -e | grep -E '^(OPENBLAS_|GOTO_|OMP_NUM_THREADS$|MKL_NUM_THREADS$)'); do
	unset "$v"
done

tmp=$(mktemp -d /tmp/km_compare.XXXXXX)
chmod 755 "$tmp"
cleanup() {
	git worktree remove --force "$tmp/v010" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "building kernel_ml at $ref in $tmp/v010"
git worktree add --detach "$tmp/v010" "$ref" >/dev/null
make -s -C "$tmp/v010" >/dev/null
so="$tmp/v010/kernel_ml.so"
[ -f "$so" ] || { echo "no $so" >&2; exit 1; }
chmod -R a+rX "$tmp"

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS km_010" -c "DROP DATABASE IF EXISTS km_head" \
	-c "CREATE DATABASE km_010" -c "CREATE DATABASE km_head"
# 0.1.0's script outside CREATE EXTENSION: no \echo guard, no config dump
sed -e '/^\\echo/d' -e '/pg_extension_config_dump/d' -e "s|MODULE_PATHNAME|$so|g" \
	"$tmp/v010/sql/kernel_ml.sql" | psql -X -q -v ON_ERROR_STOP=1 -d km_010 >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d km_head -c "CREATE EXTENSION kernel_ml"
label=${KM_COMPARE_LABEL:-$(git rev-parse --short "$ref")}
echo "$label: $(git rev-parse --short "$ref") ($so); HEAD: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' with uncommitted changes') (installed)"

for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then order="010 head"; else order="head 010"; fi
	for v in $order; do
		echo "round $r: $v"
		extra=()
		[ "$v" = 010 ] && extra=(KM_BENCH_NO_CREATE=1)
		env "${extra[@]}" PGDATABASE="km_$v" KM_BENCH_JSON="$tmp/$v.$r.json" \
			/usr/bin/python3 test/bench/core.py > "$tmp/$v.$r.log" 2>&1 ||
			{ echo "core.py failed for $v (round $r):"; tail -20 "$tmp/$v.$r.log"; exit 1; }
	done
done

python3 - "$tmp" "$rounds" "$label" <<'PY'
import json, statistics, sys
tmp, rounds, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def rows(v, r):
    return {x["measure"]: x for x in json.load(open("%s/%s.%d.json" % (tmp, v, r)))}
data = {v: [rows(v, r) for r in range(1, rounds + 1)] for v in ("010", "head")}
def num(s):
    try:
        return float(s.rstrip("x"))
    except ValueError:
        return None
print()
print("| measure | %s ratio (runs) | HEAD ratio (runs) | HEAD / %s |" % (label, label))
print("|---|---|---|---|")
for m in data["head"][0]:
    a = [num(d[m]["ratio"]) for d in data["010"] if m in d]
    b = [num(d[m]["ratio"]) for d in data["head"] if m in d]
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    print("| %s | %.2fx (%s) | %.2fx (%s) | %.3f |" % (
        m, ma, ", ".join("%.2f" % x for x in a), mb, ", ".join("%.2f" % x for x in b), mb / ma))
PY
