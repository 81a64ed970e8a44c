#!/usr/bin/env bash
# check_core.sh FILE.c...: the core includes no PostgreSQL header (make
# check-core, with the core sources of the Makefile's CORE_OBJS).  Each file
# passes if it compiles, syntax only, as C99 with the core's include path (src/core and its layer folders) and the system
# include path alone (no server include directory), and names none of
# PostgreSQL's headers in an #include (which the first check could miss
# for headers that libpq-dev puts in the system path).  One more check:
# no method, task or representation constant outside its registry (issue
# 23; see registry_check below), and the architecture map (docs/ARCHITECTURE.md) names
# every file under src/ (map_check), the layers (tools/include_graph.py),
# one training loop (tools/check_loops.py) and the field rule
# (tools/check_fields.py).  Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

pg='(postgres|postgres_fe|c|fmgr|funcapi|miscadmin|pgstat|pg_config[a-z_]*|postgres_ext|libpq-fe)\.h|(access|catalog|commands|common|executor|lib|libpq|mb|nodes|optimizer|parser|port|postmaster|replication|storage|tcop|utils|jit|partitioning|rewrite|statistics|tsearch|postgresql|server)/'
# the core's include path: src/core and each layer folder (the Makefile's KM_CORE_INC)
core_inc="-Isrc/core $(for d in src/core/*/; do printf -- '-I%s ' "${d%/}"; done)"
passed=0
failed=0
for f in "$@"; do
	ok=1
	if ! out=$(${CC:-gcc} -std=c99 -D_DEFAULT_SOURCE -fsyntax-only -Wall $core_inc "$f" 2>&1); then
		echo "not ok - $f does not compile without PostgreSQL's headers:"
		echo "$out" | head -5
		ok=0
	fi
	# the file and the src/ headers it includes, directly or not
	hdrs=$(${CC:-gcc} -std=c99 -D_DEFAULT_SOURCE -MM -MG $core_inc "$f" 2>/dev/null | tr -d '\\' | tr ' ' '\n' | grep -E '^src/.*\.h$' | sort -u)
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

# The enum constants of methods (methods.def's KM_METHOD_<NAME>), tasks
# (method.h's km_task) and representations (approx.h's km_approx) appear
# under src/ only in their registries and the enums' owners (methods.def,
# method.h, methods.c, task.h, tasks.c, approx.h, repr.c), in the legacy
# format-1 reader (model_v1.c), in each method file's own ".id = KM_METHOD_X,"
# and ".task = KM_TASK_X," lines and each task file's ".id = KM_TASK_X,".
# Elsewhere, ask the method's ops, the task table or the representation table.
registry_check() {
	local names allowed own bad
	names=$({ sed -nE 's/^KM_METHOD\([0-9]+, *([A-Z0-9_]+),.*/KM_METHOD_\1/p' src/core/methods/methods.def
		sed -n '/^typedef enum km_task$/,/^} km_task;/p' src/core/tasks/task.h |
			sed -nE 's/^[[:space:]]*(KM_TASK_[A-Z0-9_]+).*/\1/p'
		sed -n '/^typedef enum km_approx$/,/^} km_approx;/p' src/core/repr/approx.h |
			sed -nE 's/^[[:space:]]*(KM_APPROX_[A-Z0-9_]+).*/\1/p'; } | sort -u)
	if [ "$(echo "$names" | grep -c '^KM_METHOD_')" -lt 1 ] ||
		[ "$(echo "$names" | grep -c '^KM_TASK_')" -lt 2 ] ||
		[ "$(echo "$names" | grep -c '^KM_APPROX_')" -lt 2 ]; then
		echo "not ok - registry constants: cannot read the enums (methods.def, method.h, approx.h):"
		echo "$names"
		return 1
	fi
	allowed='^src/core/(methods/methods\.def|methods/method\.h|repr/approx\.h|tasks/task\.h|tasks/tasks\.c|repr/repr\.c|methods/methods\.c|model/model_v1\.c):'
	own='^src/core/(methods/[^/:]+\.c:[0-9]+:[[:space:]]*\.(id = KM_METHOD_|task = KM_TASK_)|tasks/[^/:]+\.c:[0-9]+:[[:space:]]*\.id = KM_TASK_)[A-Z0-9_]+,[[:space:]]*$'
	bad=$(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | LC_ALL=C sort |
		xargs grep -nHE "\\b($(echo "$names" | paste -sd'|'))\\b" | grep -vE "$allowed" | grep -vE "$own")
	if [ -n "$bad" ]; then
		echo "not ok - method, task or representation constants outside their registries (ask the ops or the tables instead):"
		echo "$bad"
		return 1
	fi
	echo "ok - no method, task or representation constant outside its registry ($(echo "$names" | wc -l) constants)"
}
if registry_check; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

# The architecture map (docs/ARCHITECTURE.md) names every source file under
# src/ (by its stem: foo for foo.c and foo.h), so that it matches the tree
# (issue 23).
map_check() {
	local block missing
	block=$(awk '/^## The source tree/,/^\*\*A row through exact/' docs/ARCHITECTURE.md)
	[ -n "$block" ] || { echo "not ok - docs/ARCHITECTURE.md has no source tree map"; return 1; }
	missing=$(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sed 's#.*/##; s#\.[a-z]*$##' |
		LC_ALL=C sort -u | while read -r f; do grep -q "\b$f\b" <<<"$block" || echo "$f"; done)
	if [ -n "$missing" ]; then
		echo "not ok - the architecture map (docs/ARCHITECTURE.md) does not name: $(echo $missing)"
		return 1
	fi
	echo "ok - the architecture map (docs/ARCHITECTURE.md) names every file under src/"
}
if map_check; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

# The layers (tools/include_graph.py): no import circle, no import back up
# a layer, and a host (src/pg/host_*) imports from the core only its base
# layer, the pass and the learner's entry (issue 28).
graph_check() {
	local out last
	out=$(python3 tools/include_graph.py 2>&1)
	last=$(tail -1 <<<"$out")
	if [[ "$last" =~ ^0\ circles.*\ 0\ back-up\ imports,\ 0\ host\ imports$ ]]; then
		echo "ok - layers: $last"
		return 0
	fi
	echo "not ok - layers (tools/include_graph.py --verbose tells why):"
	echo "$out" | tail -15
	return 1
}
if graph_check; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

# One loop and the field rule (issue 28): tools/check_loops.py (only the
# learner asks for passes, only the hosts run and feed them, the Newton step
# only in src/core/learn/, no new loop over SPI results in the glue) and
# tools/check_fields.py (task and representation fields read only by their
# own modules, today's other readers a ratchet).  Each prints ok / not ok
# lines, counted here.
for tool in tools/check_loops.py tools/check_fields.py; do
	out=$(python3 "$tool" 2>&1)
	rc=$?
	echo "$out"
	passed=$((passed + $(grep -c '^ok - ' <<<"$out")))
	nf=$(grep -c '^not ok - ' <<<"$out")
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then
		echo "not ok - $tool failed (status $rc)"
		nf=1
	fi
	failed=$((failed + nf))
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
