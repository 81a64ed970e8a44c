#!/usr/bin/env bash
# The pg_regress files and the TAP tests against an assert-enabled
# PostgreSQL 15 (--enable-cassert, -O0: freed memory is clobbered, memory
# contexts are checked, assertions are on), built once and cached by
# tools/build-debug-postgres.sh:
#   bash test/debug_server.sh [--regress-only | --tap-only [test/t/NNN_x.pl ...]]
#
# kernel_ml is built for that server in a folder of its own (a copy of the
# tree kept between runs in test/build/server-debug, test/build_copy.sh: PGXS
# objects of the two servers never share one, and a second run rebuilds only
# what changed), at -O2 like the stock build, and installed into the cached
# server.  Every postmaster of
# the stage runs with glibc's mmap threshold at 4 KB, so a freed block is
# unmapped and a read of it faults even where the compiler dropped the
# clobbering.  Fails on a test failure and on any "TRAP:" (a failed
# assertion) or a backend "terminated by signal" in any server log.
# Prints "N passed, N failed" lines for test/run.sh to count:
#   debug pg_regress: ...   debug TAP: ...   debug server logs: ...
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
mode=${1:-all}
[ $# -gt 0 ] && shift
tap_files=("$@")

pg_config=$(bash tools/build-debug-postgres.sh) || { echo "debug server: build failed"; exit 1; }
bindir=$("$pg_config" --bindir)
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4096
# The cancellation tests' latency bounds, times 3: this stage checks memory,
# and an -O0 assert-enabled server's own work (checked frees, error cleanup)
# made one of them miss its bound by 0.8 s once in four runs.
export KM_TAP_TIME_SCALE=3
crash='TRAP:|terminated by signal|was terminated by|PANIC:'
start=$(date +%s)

work=$(mktemp -d /tmp/kernel_ml_debug.XXXXXX)
chmod 755 "$work"
cleanup() {
	[ -n "${data:-}" ] && runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
	[ "${KM_DEBUG_KEEP:-}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

echo "=== kernel_ml for the assert-enabled server ($("$pg_config" --version), $(dirname "$bindir"))"
build=$(bash test/build_copy.sh debug "-O2 ${KM_EXTRA_CFLAGS:-}|$(gcc --version | head -1)|$pg_config") ||
	{ echo "debug server: copying the tree failed"; exit 1; }
(cd "$build" &&
	make -s PG_CONFIG="$pg_config" COPT=-O2 KM_EXTRA_CFLAGS="${KM_EXTRA_CFLAGS:-}" &&
	make -s PG_CONFIG="$pg_config" install >/dev/null) || { echo "debug server: extension build failed"; exit 1; }
chown -R postgres: "$work"

regress_rc=0
tap_rc=0
if [ "$mode" != --tap-only ]; then
	echo "=== pg_regress on the assert-enabled server"
	data=$work/data
	port=$((20000 + $$ % 10000))
	runuser -u postgres -- "$bindir/initdb" -D "$data" -A trust -U postgres >/dev/null || exit 1
	cat >> "$data/postgresql.conf" <<-CONF
		port = $port
		listen_addresses = ''
		unix_socket_directories = '$work'
		max_worker_processes = 16
		max_parallel_workers = 8
	CONF
	runuser -u postgres -- env GLIBC_TUNABLES="$GLIBC_TUNABLES" \
		"$bindir/pg_ctl" -D "$data" -l "$work/regress-server.log" -w start >/dev/null || exit 1
	(cd "$build" && PGHOST=$work PGPORT=$port PGUSER=postgres \
		make -s PG_CONFIG="$pg_config" installcheck) > "$work/regress.out" 2>&1
	regress_rc=$?
	grep -E '^(test |ok |not ok |.*tests (passed|failed))|^#' "$work/regress.out" | grep -v ' ok ' | tail -20
	[ "$regress_rc" -eq 0 ] || head -200 "$build/regression.diffs" 2>/dev/null
	runuser -u postgres -- "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null
	data=""
	r=$(sed -n 's/.*All \([0-9]\+\) tests passed.*/\1 0/p; s/.* \([0-9]\+\) of \([0-9]\+\) tests failed.*/\2 \1/p' \
		"$work/regress.out" | tail -1)
	set -- $r
	if [ $# -eq 2 ]; then
		echo "debug pg_regress: $(($1 - $2)) passed, $2 failed"
	else
		echo "debug pg_regress: 0 passed, 1 failed"
	fi
fi

if [ "$mode" != --regress-only ]; then
	echo "=== TAP tests on the assert-enabled server"
	PATH="$bindir:$PATH" KM_TAP_LOGS="$work/tap-logs" bash test/tap.sh "${tap_files[@]}" > "$work/tap.out" 2>&1
	tap_rc=$?
	grep -E '^((\[[0-9:]+\] )?t/|Files=|Result:|not ok|# +Failed)' "$work/tap.out" | tail -40
	total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]\+\),.*/\1/p' "$work/tap.out" | tail -1)
	failed=$(sed -n 's/.*Failed \([0-9]\+\)\/[0-9]\+ subtests.*/\1/p' "$work/tap.out" | awk '{s += $1} END {print s + 0}')
	if [ -z "$total" ] || [ "$total" -eq 0 ]; then
		echo "debug TAP: 0 passed, 1 failed"
	elif [ "$tap_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		echo "debug TAP: $total passed, 1 failed"
	else
		echo "debug TAP: $((total - failed)) passed, $failed failed"
	fi
fi

# Any failed assertion or crashed backend, in any server log of the stage.
logs=$(ls "$work"/regress-server.log 2>/dev/null; find "$work/tap-logs" -name '*.log' 2>/dev/null)
crashes=0
for f in $logs; do
	if grep -E -q "$crash" "$f"; then
		echo "=== $f"
		grep -E -B5 -A20 "$crash" "$f" | head -80
		crashes=$((crashes + 1))
	fi
done
nlogs=$(echo "$logs" | grep -c . || true)
if [ "$nlogs" -eq 0 ]; then
	echo "debug server logs: 0 passed, 1 failed"
	crashes=1
else
	echo "debug server logs: $((nlogs - crashes)) passed, $crashes failed"
fi
echo "debug server stage: $(( $(date +%s) - start )) s"
[ "$regress_rc" -eq 0 ] && [ "$tap_rc" -eq 0 ] && [ "$crashes" -eq 0 ]
