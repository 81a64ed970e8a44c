#!/usr/bin/env bash
# The README's SQL is a test: every ```sql block of README.md runs, in order,
# in one psql session on a fresh database, as a reader would paste them.
#
#   bash test/readme.sh [README.md]
#
# The connection comes from the libpq environment (PGHOST, PGPORT, PGUSER; a
# superuser, with kernel_ml installed in the server).  The script creates the
# database kernel_ml_readme (KM_README_DB), runs the blocks, and drops it again
# with the roles the README creates (CREATE ROLE).  It prints one line per block
# and ends with "N passed, N failed".
#
# How blocks are read:
# - A block passes when it raises as many errors as it has SQL comments
#   containing the word ERROR (usually none): a block that shows an error
#   quotes it in a comment, and then must fail that many times, no more.
# - <!-- readme-test: skip (reason) --> right before a fence skips the block
#   (printed, with the reason); <!-- readme-test: needs EXT --> runs it only
#   where "CREATE EXTENSION EXT" would work in the test database (checked in a
#   transaction that is rolled back), and skips it elsewhere.
# - Every block must end its last statement with a semicolon (or be a psql
#   meta-command), so that no statement runs into the next block.
# - A fence tagged ```SQL, ```psql, ```postgresql and the like, or an untagged
#   (or other-language) block that starts like SQL, fails the test: such a
#   block would not be run.  So does a readme-test comment that no ```sql
#   fence follows, or a count of ```sql fences that differs from the number
#   of blocks extracted.
set -uo pipefail
cd "$(dirname "$0")/.."

readme=${1:-README.md}
db=${KM_README_DB:-kernel_ml_readme}
admin_db=${PGDATABASE:-postgres}
[ "$admin_db" = "$db" ] && admin_db=postgres
[ -r "$readme" ] || { echo "cannot read $readme"; echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d /tmp/kernel_ml_readme.XXXXXX)
chmod 755 "$work"
failed=0
passed=0
skipped=0
problems=0

psql_admin() { psql -X -q -v ON_ERROR_STOP=1 -d "$admin_db" "$@"; }

# 1. Extract the blocks: $work/block_N.sql and one manifest line per block,
#    "N<TAB>line<TAB>directive<TAB>expected_errors<TAB>ends_ok".  Problems
#    (fences that would not be run, stray directives) go to $work/problems.
awk -v work="$work" '
function flush_directive_check() {
	if (directive != "") {
		printf "line %d: readme-test comment \"%s\" is not followed by a ```sql fence\n", directive_line, directive >> (work "/problems")
		directive = ""
	}
}
function looks_like_sql(s) {
	s = toupper(s)
	return s ~ /^(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|WITH|GRANT|REVOKE|BEGIN|COMMIT|ROLLBACK|VACUUM|ANALYZE|EXPLAIN|TRUNCATE|COPY|SET|RESET|TABLE|VALUES|CALL|DO)([ \t(;]|$)/
}
BEGIN { n = 0; infence = 0; directive = "" }
{
	line = $0
	if (!infence) {
		if (match(line, /^[ \t]*<!--[ \t]*readme-test:[ \t]*/)) {
			flush_directive_check()
			d = substr(line, RLENGTH + 1)
			sub(/[ \t]*-->[ \t]*$/, "", d)
			directive = d
			directive_line = NR
			next
		}
		if (match(line, /^[ \t]*(```+|~~~+)/)) {
			indent = line; sub(/[^ \t].*$/, "", indent)
			fence = substr(line, length(indent) + 1)
			fchar = substr(fence, 1, 1)
			flen = match(fence, fchar == "`" ? "[^`]" : "[^~]") ? RSTART - 1 : length(fence)
			info = substr(fence, flen + 1)
			sub(/^[ \t]+/, "", info); sub(/[ \t].*$/, "", info)
			infence = 1; fence_start = NR; first = ""
			if (info == "sql") {
				n++
				kind = "sql"
				file = work "/block_" n ".sql"
				printf "" > file
				errs = 0; last = ""
				dir = (directive == "" ? "run" : directive)
				directive = ""
			} else {
				kind = "other"
				if (tolower(info) ~ /^(sql|psql|pgsql|plpgsql|postgres|postgresql|sql-.*|.*sql)$/) {
					printf "line %d: fence tagged \"%s\" (only ```sql blocks are run)\n", NR, info >> (work "/problems")
					kind = "reported"
				}
				flush_directive_check()
			}
			next
		}
		if (line !~ /^[ \t]*$/)
			flush_directive_check()
		next
	}
	# inside a fence: a closing fence of the same character, at least as long
	if (match(line, /^[ \t]*(```+|~~~+)[ \t]*$/)) {
		c = line; gsub(/[ \t]/, "", c)
		if (substr(c, 1, 1) == fchar && length(c) >= flen) {
			infence = 0
			if (kind == "sql") {
				close(file)
				ends = (last ~ /;[ \t]*$/ || last ~ /^[ \t]*\\/) ? "yes" : "no"
				printf "%d\t%d\t%s\t%d\t%s\n", n, fence_start, dir, errs, ends >> (work "/manifest")
			} else if (kind == "other" && looks_like_sql(first)) {
				printf "line %d: a block that starts like SQL (\"%s\") is not tagged ```sql\n", fence_start, first >> (work "/problems")
			}
			next
		}
	}
	body = line
	if (indent != "" && index(body, indent) == 1)
		body = substr(body, length(indent) + 1)
	if (kind == "sql") {
		print body >> file
		if (body ~ /--.*ERROR/)
			errs++
		code = body; sub(/--.*$/, "", code)
		if (code !~ /^[ \t]*$/)
			last = code
	} else if (first == "" && body !~ /^[ \t]*(--.*)?$/) {
		first = body; sub(/^[ \t]+/, "", first)
	}
}
END {
	if (infence)
		printf "line %d: fence never closed\n", fence_start >> (work "/problems")
	flush_directive_check()
}' "$readme"

touch "$work/manifest" "$work/problems"
nblocks=$(wc -l < "$work/manifest")
nfences=$(grep -cE '^[[:space:]]*```sql[[:space:]]*$' "$readme")
if [ "$nblocks" -ne "$nfences" ]; then
	echo "line ?: $nfences \`\`\`sql fences in $readme but $nblocks blocks extracted" >> "$work/problems"
fi
while IFS= read -r p; do
	echo "not ok - $readme $p"
	problems=$((problems + 1))
done < "$work/problems"

# Roles the README creates: they must not exist before, and are dropped after.
readme_roles=$(cat "$work"/block_*.sql 2>/dev/null |
	grep -oiE 'CREATE[[:space:]]+(ROLE|USER)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' |
	awk '{ print tolower($3) }' | sort -u)
created_roles=""

cleanup() {
	psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
	for r in $created_roles; do
		psql_admin -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1 || echo "could not drop role $r"
	done
	if [ $((failed + problems)) -eq 0 ]; then
		rm -rf "$work"
	else
		echo "blocks, psql output and errors kept in $work"
	fi
}
trap cleanup EXIT

for r in $readme_roles; do
	if [ "$(psql_admin -tAc "SELECT count(*) FROM pg_roles WHERE rolname = '$r'")" != "0" ]; then
		echo "not ok - role $r exists already; the README creates it (drop it, or run on a server without it)"
		problems=$((problems + 1))
	else
		created_roles="$created_roles $r"
	fi
done

start=$(date +%s.%N)
psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
if ! psql_admin -c "CREATE DATABASE $db" >/dev/null; then
	echo "cannot create database $db"
	echo "0 passed, $((nblocks + 1)) failed"
	exit 1
fi

# 2. Which "needs EXT" directives this server meets.
declare -A have
for ext in $(cut -f3 "$work/manifest" | sed -n 's/^needs[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/\1/p' | sort -u); do
	if psql -X -q -d "$db" -c "BEGIN" -c "CREATE EXTENSION $ext" -c "ROLLBACK" >/dev/null 2>"$work/needs_$ext.err" &&
		! grep -q ERROR "$work/needs_$ext.err"; then
		have[$ext]=1
	else
		have[$ext]=0
	fi
done

# 3. One psql script, the blocks in order, each between two markers on
#    stderr (where psql writes errors too, in the order they happen).
script="$work/readme.sql"
{
	echo '\set ON_ERROR_STOP 0'
	while IFS=$'\t' read -r n line dir errs ends; do
		case "$dir" in
		run) ;;
		needs\ *)
			ext=$(echo "$dir" | awk '{ print $2 }')
			[ "${have[$ext]:-0}" = 1 ] || continue ;;
		*) continue ;;
		esac
		[ "$ends" = yes ] || continue
		echo "\\! printf '@@begin $n %s\\n' \"\$(date +%s.%N)\" >&2"
		cat "$work/block_$n.sql"
		echo "\\! printf '@@end $n %s\\n' \"\$(date +%s.%N)\" >&2"
	done < "$work/manifest"
} > "$script"

psql -X -q -d "$db" -f "$script" > "$work/stdout.txt" 2> "$work/stderr.txt"
psql_rc=$?

# 4. Errors per block, from the stderr stream.
awk -v work="$work" '
/^@@begin / { cur = $2; t0[cur] = $3; begun[cur] = 1; next }
/^@@end / { t1[$2] = $3; ended[$2] = 1; cur = ""; next }
{
	if (cur != "") print > (work "/stderr_" cur ".txt")
	else print > (work "/stderr_outside.txt")
	if ($0 ~ /^psql:.*:[0-9]+: (ERROR|FATAL|PANIC):/ && cur != "") nerr[cur]++
}
END {
	for (b in begun)
		printf "%s\t%d\t%s\t%.2f\n", b, nerr[b] + 0, (b in ended) ? "yes" : "no", (b in ended) ? t1[b] - t0[b] : 0
}' "$work/stderr.txt" | sort -n > "$work/results"

declare -A got_errs got_ended got_secs
while IFS=$'\t' read -r n e ended secs; do
	got_errs[$n]=$e; got_ended[$n]=$ended; got_secs[$n]=$secs
done < "$work/results"

skip_reasons=""
while IFS=$'\t' read -r n line dir errs ends; do
	where="block $n ($readme:$line)"
	case "$dir" in
	run) ;;
	needs\ *)
		ext=$(echo "$dir" | awk '{ print $2 }')
		if [ "${have[$ext]:-0}" != 1 ]; then
			echo "skip - $where: needs $ext, which this server cannot create here ($(grep -m1 ERROR "$work/needs_$ext.err" | sed 's/^.*ERROR: *//'))"
			skipped=$((skipped + 1)); skip_reasons="$skip_reasons $n"
			continue
		fi ;;
	skip*)
		echo "skip - $where: $dir"
		skipped=$((skipped + 1)); skip_reasons="$skip_reasons $n"
		continue ;;
	*)
		echo "not ok - $where: unknown readme-test directive \"$dir\""
		failed=$((failed + 1))
		continue ;;
	esac
	if [ "$ends" != yes ]; then
		echo "not ok - $where: the last statement does not end with a semicolon"
		failed=$((failed + 1))
		continue
	fi
	if [ "${got_ended[$n]:-no}" != yes ]; then
		echo "not ok - $where: did not finish (psql stopped, exit code $psql_rc)"
		[ -f "$work/stderr_$n.txt" ] && sed 's/^/    /' "$work/stderr_$n.txt" | tail -20
		failed=$((failed + 1))
		continue
	fi
	e=${got_errs[$n]}
	if [ "$e" -eq "$errs" ]; then
		if [ "$errs" -gt 0 ]; then
			echo "ok - $where (${got_secs[$n]} s; $e error(s), as its comments say)"
			# The quoted messages are documentation, not checked: a note says
			# where one no longer matches what the server says.
			paste -d '\t' \
				<(sed -n 's/^.*--[[:space:]]*ERROR:[[:space:]]*//p' "$work/block_$n.sql") \
				<(sed -n 's/^psql:.*:[0-9]*: ERROR:[[:space:]]*//p' "$work/stderr_$n.txt") |
				while IFS=$'\t' read -r quoted said; do
					q=${quoted%...}; q=${q%% }
					[ -z "$quoted" ] || [ "${said#"$q"}" != "$said" ] ||
						echo "# note: $where quotes \"ERROR:  $quoted\"; the server said \"ERROR:  $said\""
				done
		else
			echo "ok - $where (${got_secs[$n]} s)"
		fi
		passed=$((passed + 1))
	else
		echo "not ok - $where: $e error(s), but its comments show $errs"
		[ -f "$work/stderr_$n.txt" ] && grep -v '^@@' "$work/stderr_$n.txt" | sed 's/^/    /' | head -20
		failed=$((failed + 1))
	fi
done < "$work/manifest"

if [ -s "$work/stderr_outside.txt" ] && grep -qE '(ERROR|FATAL|PANIC):' "$work/stderr_outside.txt"; then
	echo "not ok - errors outside any block:"
	sed 's/^/    /' "$work/stderr_outside.txt" | head -20
	problems=$((problems + 1))
fi

end=$(date +%s.%N)
printf '%d blocks from %s (%d ```sql fences), %d skipped (blocks:%s), %s s\n' \
	"$nblocks" "$readme" "$nfences" "$skipped" "${skip_reasons:- none}" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
trap - EXIT
cleanup
failed=$((failed + problems))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
