#!/usr/bin/env bash
# The extension built with AddressSanitizer and UBSan, loaded into a real
# server: pg_regress and the scikit-learn cross-check in a throwaway cluster
# whose postmaster preloads the sanitizer runtimes.  Fails if a test fails
# or a sanitizer reports anything.  Run as "make installcheck-asan";
# KM_ASAN_SQL_FUZZ=N also runs N statements of test/fuzz/sql_fuzz.py.
#
# It INSTALLS the sanitized kernel_ml.so over the system-wide one and puts
# the normal build back when it ends (also on failure or interrupt), so on a
# shared machine run it under the install lock:
#   flock /tmp/kernel_ml_install.lock make installcheck-asan
set -uo pipefail
cd "$(dirname "$0")/../.."

san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
work=$(mktemp -d /tmp/kernel_ml_asan.XXXXXX)
chmod 755 "$work"
mkdir -m 777 "$work/reports"

# The sanitized build is made in a copy of the tree, so the normal build's
# objects stay as they are and putting it back is an install, not a rebuild.
# The copy is kept between runs (test/build_copy.sh): a second run rebuilds
# only what changed.
reinstall_normal() {
	echo "=== re-installing the normal build"
	if [ -e kernel_ml.so ]; then
		make -s install >/dev/null
	else
		make -s KM_EXTRA_CFLAGS="${KM_EXTRA_CFLAGS:-}" >/dev/null && make -s install >/dev/null
	fi
}
trap reinstall_normal EXIT

echo "=== building and installing kernel_ml with ASan and UBSan"
build=$(bash test/build_copy.sh asan "$san_flags|$(gcc --version | head -1)|$(command -v pg_config)") || exit 1
(cd "$build" &&
	make -s KM_EXTRA_CFLAGS="$san_flags" KM_ASAN_OBJS=test/fuzz/asan_options.o &&
	make -s install >/dev/null) || exit 1

# PostgreSQL is not built with ASan, so the runtimes should come first in
# the postmaster's library list (LD_PRELOAD).  On this Debian 12 machine a
# preloaded ASan runtime (gcc's or clang's) hangs every PostgreSQL binary in
# bindtextdomain() at startup, so by default the runtimes are loaded with
# the extension when a backend loads it (verify_asan_link_order=0, set in
# test/fuzz/asan_options.c with the other options, since a backend's
# original environment is overwritten by its process title by then): every
# stack and global access in kernel_ml's code is checked and UBSan checks
# everything, but heap blocks (malloc still resolves to libc's, and palloc
# is not instrumented) are not poisoned.  KM_ASAN_PRELOAD=1 preloads instead,
# where that works.  Memory contexts free in bulk and the postmaster exits
# without freeing: no leak detection.
asan_options="detect_leaks=0:abort_on_error=0:log_path=$work/reports/asan"
if [ "${KM_ASAN_PRELOAD:-0}" = 1 ]; then
	echo "LD_PRELOAD = '$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)'" > "$work/environment"
else
	asan_options="$asan_options:verify_asan_link_order=0"
	: > "$work/environment"
fi
echo "ASAN_OPTIONS = '$asan_options'" >> "$work/environment"
echo "UBSAN_OPTIONS = 'print_stacktrace=1:halt_on_error=1:log_path=$work/reports/ubsan'" >> "$work/environment"

cat > "$work/inner.sh" <<'INNER'
work=$1
rc=0
echo "=== pg_regress (sanitized build)"
# every file, format1 too: it compares predictions within a tolerance
# (instrumented code rounds the kernel sums in another order)
make -s installcheck || { rc=1; head -200 regression.diffs 2>/dev/null; }
echo "=== scikit-learn cross-check (sanitized build)"
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS kernel_ml" >/dev/null
/usr/bin/python3 test/crosscheck/crosscheck.py > "$work/crosscheck.out" 2>&1 || rc=1
tail -3 "$work/crosscheck.out"
# Optionally the SQL fuzzer too: its findings are reported, only sanitizer
# reports fail the target.
if [ "${KM_ASAN_SQL_FUZZ:-0}" -gt 0 ]; then
	echo "=== SQL fuzzing (sanitized build, $KM_ASAN_SQL_FUZZ statements)"
	/usr/bin/python3 test/fuzz/sql_fuzz.py --statements "$KM_ASAN_SQL_FUZZ" \
		--seconds 120 > "$work/sql_fuzz.out" 2>&1
	grep -E '^(FINDING|[0-9]+ (passed|statements))' "$work/sql_fuzz.out"
fi
# the server log of this pg_virtualenv cluster
cp "$(dirname "$PG_CLUSTER_CONF_ROOT")"/log/postgresql-*-regress.log "$work/server.log" 2>/dev/null
exit $rc
INNER

start=$(date +%s)
timeout 1800 pg_virtualenv -t -c "--environment=$work/environment" \
	-o 'max_worker_processes=16' -o 'max_parallel_workers=8' \
	bash "$work/inner.sh" "$work"
rc=$?

# A sanitizer report, or a backend that died, anywhere in the run.
pattern='ERROR: AddressSanitizer|runtime error:|SUMMARY: [A-Za-z]*Sanitizer|terminated by signal|server process .* exited with exit code'
reports=$(ls "$work"/reports 2>/dev/null | wc -l)
if [ "$reports" -gt 0 ]; then
	echo "=== sanitizer reports"
	head -c 20000 "$work"/reports/*
	rc=1
fi
if [ ! -s "$work/server.log" ]; then
	echo "installcheck-asan: no server log found"
	rc=1
elif grep -E -q "$pattern" "$work/server.log"; then
	echo "=== sanitizer findings in the server log"
	grep -E -B2 -A30 "$pattern" "$work/server.log" | head -200
	rc=1
fi
echo "installcheck-asan: $(( $(date +%s) - start )) s in the cluster, exit $rc (logs in $work)"
exit $rc
