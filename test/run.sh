#!/usr/bin/env bash
# The whole kernel_ml test suite on a fresh Debian 12 machine, as root:
# dependencies, build, the core's include check, core unit tests, fuzzers,
# install, then in one throwaway PostgreSQL 15 cluster the pg_regress
# suite, the scikit-learn cross-check and the SQL fuzzer; then the TAP
# tests, each starting clusters of its own (test/tap.sh), pg_regress
# and the cross-check again against a sanitized build, and pg_regress and
# the TAP tests again on an assert-enabled server (test/debug_server.sh).  Ends with "N
# passed, N failed" counting single tests (unit tests, pg_regress files,
# cross-check checks, TAP assertions; a fuzzing run is one test, failed per
# finding).
set -uo pipefail
cd "$(dirname "$0")/.."

# Seconds each stage took, printed at the end (test/run.sh's own timing).
suite_start=$(date +%s)
stage_start=$suite_start
stage_times=""
stage_time() {
	local now
	now=$(date +%s)
	stage_times="$stage_times$(printf '%-34s %5d s' "$1" $((now - stage_start)))
"
	stage_start=$now
}
bash tools/install-deps.sh || exit 1

# CI builds with warnings as errors.  PostgreSQL's own array macros trip
# -Wsign-compare, so the glue is built without it; the Makefile turns it
# back on for the core, which includes no PostgreSQL header.
extra=""
if [ "${CI:-}" = "true" ]; then
	extra="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare -Werror"
fi
# Built from clean only when the configuration changed (flags, compilers,
# server) or something else built in this tree since the last run (a plain
# "make" without the CI flags): otherwise make rebuilds what changed, and
# the unit-test, ASan and fuzzing objects of test/build/ are kept too.
config="$extra|$(gcc --version | head -1)|$(clang --version 2>/dev/null | head -1)|$(pg_config --version)"
stamp=test/build/.suite-config
if [ "$(cat "$stamp" 2>/dev/null)" != "$config" ] ||
	[ -n "$(find . \( -path ./.git -o -path './test/build/server-*' \) -prune -o \( -name '*.o' -o -name '*.so' \) -newer "$stamp" -print 2>/dev/null | head -1)" ]; then
	make -s clean >/dev/null
fi
make -s -j2 KM_EXTRA_CFLAGS="$extra" || exit 1
make -s install >/dev/null || exit 1

log=$(mktemp -d /tmp/kernel_ml_tests.XXXXXX)
chmod 755 "$log"

stage_time "dependencies and build"

echo "=== the core includes no PostgreSQL header"
make -s check-core 2>&1 | tee "$log/check_core.out"
check_core_rc=${PIPESTATUS[0]}
stage_time "core include check"

# Each method is its file and one methods.def line: the tree builds
# without them (test/check_seam.sh; KM_SEAM_METHODS="SVR ..." for some).
echo "=== the method seam: the tree builds without each method's file and registry line"
bash test/check_seam.sh ${KM_SEAM_METHODS:-} 2>&1 | tee "$log/seam.out"
seam_rc=${PIPESTATUS[0]}
stage_time "method seam"

echo "=== core unit tests"
make -s -j2 unittest KM_EXTRA_CFLAGS="$extra" 2>&1 | tee "$log/unit.out"
unit_rc=${PIPESTATUS[0]}

echo "=== core unit tests under AddressSanitizer and UBSan"
make -s -j2 unittest-asan KM_EXTRA_CFLAGS="$extra" 2>&1 | tee "$log/asan.out"
asan_rc=${PIPESTATUS[0]}
stage_time "core unit tests (plain, ASan)"

# Three libFuzzer targets on two cores (the model decoder on one, the
# options validator then the pass points on the other), built first, so
# the makes find nothing left to build.  Each replays its corpus (kept
# between runs in test/fuzz/corpus*: what earlier runs found) and then runs
# a fixed number of inputs, KM_FUZZ_MODEL_RUNS, KM_FUZZ_OPTIONS_RUNS and
# KM_FUZZ_PASS_RUNS (about 8, 8 and 30 s of one core on a quiet machine; the
# corpus replay is counted), so a loaded machine takes longer instead of
# fuzzing less; KM_FUZZ_SECONDS bounds each in time all the same.
fuzz_model_runs=${KM_FUZZ_MODEL_RUNS:-300000}
fuzz_options_runs=${KM_FUZZ_OPTIONS_RUNS:-150000}
fuzz_pass_runs=${KM_FUZZ_PASS_RUNS:-100000}
echo "=== fuzzing the model decoder, the options validator and the pass points (libFuzzer, $fuzz_model_runs, $fuzz_options_runs and $fuzz_pass_runs runs, on two cores)"
make -s test/fuzz/make_seed test/fuzz/fuzz_model test/fuzz/fuzz_options \
	test/fuzz/make_pass_seeds test/fuzz/fuzz_pass > "$log/fuzz_build.out" 2>&1
# every object of this configuration is built: later runs start from here
mkdir -p test/build && echo "$config" > "$stamp"
make -s fuzz-model FUZZ_RUNS="$fuzz_model_runs" FUZZ_SECONDS="${KM_FUZZ_SECONDS:-300}" > "$log/fuzz.out" 2>&1 &
fuzz_pid=$!
make -s fuzz-options FUZZ_RUNS="$fuzz_options_runs" FUZZ_SECONDS="${KM_FUZZ_SECONDS:-300}" > "$log/fuzz_options.out" 2>&1
fuzz_options_rc=$?
make -s fuzz-pass FUZZ_RUNS="$fuzz_pass_runs" FUZZ_SECONDS="${KM_FUZZ_SECONDS:-300}" > "$log/fuzz_pass.out" 2>&1
fuzz_pass_rc=$?
wait "$fuzz_pid"
fuzz_rc=$?
grep -h -E '^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' "$log/fuzz.out" "$log/fuzz_options.out" \
	"$log/fuzz_pass.out"
stage_time "fuzzing"

# One throwaway cluster for the server-side suites.
cat > "$log/server.sh" <<'INNER'
log=$1
echo "=== pg_regress"
make -s installcheck 2>&1 | tee "$log/regress.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || head -300 regression.diffs 2>/dev/null
echo "=== the README's SQL blocks, in order, in a fresh database"
bash test/readme.sh 2>&1 | tee "$log/readme.out"
echo "=== scikit-learn cross-check"
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS kernel_ml" >/dev/null
/usr/bin/python3 test/crosscheck/crosscheck.py 2>&1 | tee "$log/crosscheck.out"
echo "=== SQL fuzzing (${KM_SQL_FUZZ_STATEMENTS:-5000} statements or ${KM_SQL_FUZZ_SECONDS:-60} s)"
/usr/bin/python3 test/fuzz/sql_fuzz.py --seed "${KM_SQL_FUZZ_SEED:-1}" \
	--statements "${KM_SQL_FUZZ_STATEMENTS:-5000}" --seconds "${KM_SQL_FUZZ_SECONDS:-60}" \
	2>&1 | tee "$log/sql_fuzz.out"
INNER
pg_virtualenv -t -o 'max_worker_processes=16' -o 'max_parallel_workers=8' \
	-o "shared_preload_libraries=pg_cron" -o "cron.database_name=kernel_ml_readme" \
	-o "cron.use_background_workers=on" \
	bash "$log/server.sh" "$log"
cluster_rc=$?
stage_time "pg_regress, cross-check, SQL fuzz"

# Citus for the distributed stage (test/t/030_citus.pl), built from
# ../shared/citus/ once per machine and cached (tools/build-citus.sh); where
# the archive is missing the stage is skipped, and said so here and at the end.
echo "=== Citus (tools/build-citus.sh)"
bash tools/build-citus.sh > "$log/citus_build.out" 2>&1
citus_rc=$?
case $citus_rc in
0) echo "Citus $(basename "$(tail -1 "$log/citus_build.out")") installed: test/t/030_citus.pl runs the distributed stage" ;;
3) echo "!!! Citus stage SKIPPED: $(head -1 "$log/citus_build.out")" ;;
*) echo "Citus build FAILED:"; tail -20 "$log/citus_build.out" ;;
esac
stage_time "Citus build"

# TAP tests (PostgreSQL::Test::Cluster: each starts clusters of its own).
echo "=== TAP tests"
bash test/tap.sh 2>&1 | tee "$log/tap.out"
echo "tap exit ${PIPESTATUS[0]}" >> "$log/tap.out"
stage_time "TAP"

# The same pg_regress suite and cross-check against an ASan+UBSan build in a
# cluster of its own (about 2 minutes), with a short SQL fuzzing run whose
# findings are counted above: here only sanitizer reports fail.  It puts
# this build back when done.
echo "=== pg_regress, cross-check and SQL fuzzing under ASan and UBSan"
KM_EXTRA_CFLAGS="$extra" KM_ASAN_SQL_FUZZ="${KM_ASAN_SQL_FUZZ:-2000}" \
	make -s installcheck-asan > "$log/installcheck_asan.out" 2>&1
asan_server_rc=$?
grep -E '^(test |ok|not ok|[0-9]+ passed|installcheck-asan:|==[0-9]+==ERROR|SUMMARY)' "$log/installcheck_asan.out" | grep -v '^ok'
stage_time "server suites under ASan/UBSan"

# pg_regress and the TAP tests again on an assert-enabled PostgreSQL 15
# (--enable-cassert at -O0, freed memory clobbered and unmapped), built once
# from Debian's source package and cached outside the clone
# (tools/build-debug-postgres.sh; about 5 minutes the first time on a
# machine).  Fails on a test failure, a TRAP or a crashed backend.
echo "=== pg_regress and TAP on an assert-enabled PostgreSQL (test/debug_server.sh)"
KM_EXTRA_CFLAGS="$extra" bash test/debug_server.sh > "$log/debug.out" 2>&1
debug_rc=$?
grep -v -E '^(ok|(\[[0-9:]+\] )?t/.* ok)' "$log/debug.out" | tail -40
stage_time "assert-enabled server"

# Tally single tests.  A suite that produced no count at all counts as one
# failure, so a runner that silently ran nothing cannot pass.
passed=0
failed=0
count() {		# count <name> <passed> <failed>
	printf '%-28s %5s passed, %s failed\n' "$1" "$2" "$3"
	passed=$((passed + $2))
	failed=$((failed + $3))
}
pf() {			# "N passed, N failed" line of a runner's output
	sed -n 's/^\([0-9]\+\) passed, \([0-9]\+\) failed$/\1 \2/p' "$1" 2>/dev/null | tail -1
}
echo "=== summary"
set -- $(pf "$log/check_core.out")
if [ $# -eq 2 ] && [ "$check_core_rc" -eq 0 ]; then count "core without PostgreSQL" "$1" "$2"; else count "core without PostgreSQL" "${1:-0}" "$(( ${2:-0} + 1 ))"; fi
set -- $(pf "$log/seam.out")
if [ $# -eq 2 ] && [ "$seam_rc" -eq 0 ]; then count "method seam" "$1" "$2"; else count "method seam" "${1:-0}" "$(( ${2:-0} + 1 ))"; fi
set -- $(pf "$log/unit.out")
if [ $# -eq 2 ] && [ "$unit_rc" -eq 0 ]; then count "core unit tests" "$1" "$2"; else count "core unit tests" "${1:-0}" "$(( ${2:-0} + 1 ))"; fi

set -- $(pf "$log/asan.out")
if [ $# -eq 2 ] && [ "$asan_rc" -eq 0 ]; then count "unit tests, ASan and UBSan" "$1" "$2"; else count "unit tests, ASan and UBSan" "${1:-0}" "$(( ${2:-0} + 1 ))"; fi
if [ "$fuzz_rc" -eq 0 ]; then count "model decoder fuzzing" 1 0; else count "model decoder fuzzing" 0 1; fi
if [ "$fuzz_options_rc" -eq 0 ]; then count "options fuzzing" 1 0; else count "options fuzzing" 0 1; fi
if [ "$fuzz_pass_rc" -eq 0 ]; then count "pass point fuzzing" 1 0; else count "pass point fuzzing" 0 1; fi
if [ "$asan_server_rc" -eq 0 ]; then count "server suites, ASan and UBSan" 1 0; else count "server suites, ASan and UBSan" 0 1; fi

r=$(sed -n 's/.*All \([0-9]\+\) tests passed.*/\1 0/p; s/.* \([0-9]\+\) of \([0-9]\+\) tests failed.*/\2 \1/p' "$log/regress.out" 2>/dev/null | tail -1)
set -- $r
if [ $# -eq 2 ]; then count "pg_regress" "$(($1 - $2))" "$2"; else count "pg_regress" 0 1; fi

set -- $(pf "$log/readme.out")
if [ $# -eq 2 ]; then count "README SQL blocks" "$1" "$2"; else count "README SQL blocks" 0 1; fi

set -- $(pf "$log/crosscheck.out")
if [ $# -eq 2 ]; then count "scikit-learn cross-check" "$1" "$2"; else count "scikit-learn cross-check" 0 1; fi

# the fuzzer counts statements; here the run is one test, failed per finding
set -- $(pf "$log/sql_fuzz.out")
if [ $# -eq 2 ] && [ "$2" -eq 0 ]; then count "SQL fuzzing" 1 0; else count "SQL fuzzing" 0 "${2:-1}"; fi

tap() {			# tap <name> <prove output>
	local total failed rc
	total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]\+\),.*/\1/p' "$2" 2>/dev/null | tail -1)
	failed=$(sed -n 's/.*Failed \([0-9]\+\)\/[0-9]\+ subtests.*/\1/p' "$2" 2>/dev/null | awk '{s += $1} END {print s + 0}')
	rc=$(sed -n 's/^tap exit \([0-9]\+\)$/\1/p' "$2" 2>/dev/null)
	if [ -z "$total" ] || [ "$total" -eq 0 ]; then
		count "$1" 0 1
	elif [ "${rc:-1}" -ne 0 ] && [ "$failed" -eq 0 ]; then
		count "$1" "$total" 1		# a script died without a subtest count
	else
		count "$1" "$((total - failed))" "$failed"
	fi
}
tap "TAP" "$log/tap.out"
case $citus_rc in
0) ;;
3) echo "!!! Citus stage SKIPPED (no ../shared/citus archive): test/t/030_citus.pl did not run" ;;
*) count "Citus build" 0 1 ;;
esac

debug_counted=0
for stage in "debug pg_regress" "debug TAP" "debug server logs"; do
	set -- $(sed -n "s/^$stage: \([0-9]\+\) passed, \([0-9]\+\) failed\$/\1 \2/p" "$log/debug.out" 2>/dev/null | tail -1)
	if [ $# -eq 2 ]; then
		count "$stage (cassert)" "$1" "$2"
		debug_counted=$((debug_counted + $2))
	else
		count "$stage (cassert)" 0 1
		debug_counted=$((debug_counted + 1))
	fi
done
# the stage failed in a way none of its counts shows (a build failure)
[ "$debug_rc" -eq 0 ] || [ "$debug_counted" -gt 0 ] || count "debug server stage" 0 1
[ "$cluster_rc" -eq 0 ] || echo "(pg_virtualenv exited with $cluster_rc)"

echo "=== time by stage"
printf '%s' "$stage_times"
printf '%-34s %5d s\n' "whole suite" $(( $(date +%s) - suite_start ))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$cluster_rc" -eq 0 ]
