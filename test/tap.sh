#!/usr/bin/env bash
# Run the TAP tests (all of test/t/*.pl, or the files given; KM_TAP_JOBS at
# a time, 2 by default; prove --timer prints each file's seconds), each of which
# builds its own clusters with PostgreSQL's PostgreSQL::Test::Cluster,
# against the installed kernel_ml:
#   bash test/tap.sh [test/t/005_security.pl ...]
# It supplies what PGXS's prove_installcheck would: the Perl modules, the
# server binaries on PATH and PG_REGRESS.  PostgreSQL refuses to run as
# root, so as root the tests run as the postgres user, from a copy of
# test/ that it can read, with TESTDIR (logs, clusters) in a directory it
# owns.  The install scripts of released versions that the upgrade test
# starts from (test/upgrade/) are put into the share directory for the run
# and removed afterwards.
set -uo pipefail
cd "$(dirname "$0")/.."

pgxs=$(dirname "$(dirname "$(dirname "$(pg_config --pgxs)")")")
bindir=$(pg_config --bindir)
share=$(pg_config --sharedir)/extension
if [ $# -eq 0 ]; then
	set -- test/t/*.pl
fi

installed_fixtures=()
cleanup() {
	for f in "${installed_fixtures[@]}"; do rm -f "$f"; done
	[ -n "${work:-}" ] && [ "${KM_TAP_KEEP:-}" != 1 ] && rm -rf "$work"
}
trap cleanup EXIT
for src in test/upgrade/kernel_ml--*.sql; do
	fixture=$share/$(basename "$src")
	if [ ! -e "$fixture" ]; then
		cp "$src" "$fixture" && installed_fixtures+=("$fixture")
	fi
done

work=$(mktemp -d /tmp/kernel_ml_tap.XXXXXX)
cp -r test "$work/test"
# The real-build upgrade test (015) builds a released version from git
# history: it gets a bare copy of this clone's history in the work folder,
# which the test's user can read wherever the clone lives (a shallow or
# missing history makes it skip, saying why).
source_env=()
if git rev-parse --git-dir >/dev/null 2>&1 &&
	git clone -q --bare --no-local . "$work/kernel_ml.git" 2>/dev/null; then
	source_env=(KM_SOURCE_DIR="$work/kernel_ml.git")
fi
tests=()
for t in "$@"; do tests+=("test/t/$(basename "$t")"); done
runas=()
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$work"
	runas=(runuser -u postgres --)
fi
(cd "$work" && "${runas[@]}" env PATH="$bindir:$PATH" TESTDIR="$work" \
	"${source_env[@]}" \
	${GLIBC_TUNABLES:+GLIBC_TUNABLES="$GLIBC_TUNABLES"} \
	${KM_TAP_TIME_SCALE:+KM_TAP_TIME_SCALE="$KM_TAP_TIME_SCALE"} \
	PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
	prove --timer -j "${KM_TAP_JOBS:-2}" -I "$pgxs/src/test/perl" "${tests[@]}")
rc=$?

# A failed assertion or a crashed backend in any server log fails the run,
# even where every assertion of the test passed (a crash in a statement
# whose error the test expected, or after its last check).
if [ -n "${KM_TAP_LOGS:-}" ]; then
	mkdir -p "$KM_TAP_LOGS"
	cp -r "$work/tmp_check/log/." "$KM_TAP_LOGS/" 2>/dev/null
fi
crashed=$(grep -l -E 'TRAP:|terminated by signal|was terminated by|PANIC:' \
	$(find "$work/tmp_check" -name '*.log' 2>/dev/null) /dev/null 2>/dev/null)
if [ -n "$crashed" ]; then
	for f in $crashed; do
		echo "=== a server crashed or failed an assertion: $f"
		grep -E -B5 -A20 'TRAP:|terminated by signal|was terminated by|PANIC:' "$f" | head -60
	done
	[ "$rc" -ne 0 ] || rc=1
fi
exit $rc
