#!/usr/bin/env bash
# The whole kernel_ml test suite on a fresh Debian 12 machine, as root:
# dependencies, build, core unit tests, install, then in a throwaway
# PostgreSQL 15 cluster the pg_regress suite, the scikit-learn cross-check
# and the TAP tests.  Ends with a line "N passed, N failed" (test suites).
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/install-deps.sh || exit 1

# CI builds with warnings as errors.
extra=""
if [ "${CI:-}" = "true" ]; then
	# PostgreSQL's own array macros trip -Wsign-compare, so the glue is
	# built without it; the Makefile turns it back on for the core.
	extra="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare -Werror"
fi
make -s clean >/dev/null
make -s KM_EXTRA_CFLAGS="$extra" || exit 1
make -s install >/dev/null || exit 1

passed=0
failed=0
suite() {
	local name=$1
	shift
	echo "=== $name"
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "=== $name FAILED"
	fi
}

suite "core unit tests" make -s unittest KM_EXTRA_CFLAGS="$extra"

# One throwaway cluster for the server-side suites.
cat > /tmp/kernel_ml_server_tests.sh <<'INNER'
set -u
status=0
echo "=== pg_regress"
if ! make -s installcheck; then
	cat regression.diffs 2>/dev/null | head -200
	status=1
fi
echo "=== scikit-learn cross-check"
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS kernel_ml" >/dev/null || status=1
/usr/bin/python3 test/crosscheck/crosscheck.py || status=1
echo "=== TAP tests"
prove test/t/*.pl || status=1
exit $status
INNER
suite "server tests (pg_regress, cross-check, TAP)" \
	pg_virtualenv -t -o 'max_worker_processes=16' -o 'max_parallel_workers=8' \
	-o "shared_preload_libraries=pg_cron" -o "cron.database_name=postgres" \
	-o "cron.use_background_workers=on" \
	bash /tmp/kernel_ml_server_tests.sh

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
