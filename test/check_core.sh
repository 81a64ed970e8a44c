#!/usr/bin/env bash
# check_core.sh FILE.c...: the core includes no PostgreSQL header (make
# check-core, with the core sources of the Makefile's CORE_OBJS).  Each file
# passes if it compiles, syntax only, as C99 with -Isrc/core and the system
# include path alone (no server include directory), and names none of
# PostgreSQL's headers in an #include (which the first check could miss
# for headers that libpq-dev puts in the system path).  Ends with
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

pg='(postgres|postgres_fe|c|fmgr|funcapi|miscadmin|pgstat|pg_config[a-z_]*|postgres_ext|libpq-fe)\.h|(access|catalog|commands|common|executor|lib|libpq|mb|nodes|optimizer|parser|port|postmaster|replication|storage|tcop|utils|jit|partitioning|rewrite|statistics|tsearch|postgresql|server)/'
passed=0
failed=0
for f in "$@"; do
	ok=1
	if ! out=$(${CC:-gcc} -std=c99 -D_DEFAULT_SOURCE -fsyntax-only -Wall -Isrc/core "$f" 2>&1); then
		echo "not ok - $f does not compile without PostgreSQL's headers:"
		echo "$out" | head -5
		ok=0
	fi
	# the file and the src/ headers it includes, directly or not
	hdrs=$(${CC:-gcc} -std=c99 -D_DEFAULT_SOURCE -MM -MG -Isrc/core "$f" 2>/dev/null | tr -d '\\' | tr ' ' '\n' | grep -E '^src/.*\.h$' | sort -u)
	if bad=$(grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pg)" "$f" $hdrs); then
		echo "not ok - $f includes a PostgreSQL header:"
		echo "$bad"
		ok=0
	fi
	if [ "$ok" -eq 1 ]; then
		echo "ok - $f"
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
