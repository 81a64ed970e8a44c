#!/usr/bin/env bash
# What crosses the network in a named approximate training on Citus (issue 33
# point 5): a coordinator and two workers on loopback (the setup of
# test/bench/citus_pass_cost.sh), a table of d = 20 features distributed over
# S shards (default 4 and 32), and a named nystrom ridge trained with
# citus.log_remote_commands on and auto_explain logging every nested pass
# statement's duration on the coordinator.  For every pass, the statement
# Citus sent to one shard of worker 1 is taken verbatim from the log and
# replayed there as SELECT octet_length(w::text) FROM (<statement>) q(w): the
# partial state as Citus ships it (worker_partial_agg returns the state's text
# output, a cstring: '\x' and two hex digits a byte).  Bytes per pass = that
# x S.  Combine: the largest (and the last) pass's shipped text, S copies in a coordinator
# table, folded by Citus's own coord_combine_agg (hex parse, combine, final).
# Wall: the whole kernel_model_train on the distributed table, and on a local
# copy of the same rows with 2 parallel workers.
#
#   eval "$(/work/pgenv/start.sh h29 55690)"   # PostgreSQL 15 with Citus and kernel_ml installed
#   bash test/bench/citus_pass_bytes.sh [m ...]  # default 1000; shard counts KM_BENCH_SHARDS="4 32"
#
# Rows: KM_BENCH_ROWS (default 200000); solvers KM_BENCH_SOLVERS (default
# "direct cg"); ports from KM_BENCH_PORT (default 55695, then +1, +2).
# Not part of the test suite.
set -euo pipefail
if [ "$(id -u)" = 0 ]; then
	script=$(mktemp /tmp/km_citus_bytes.XXXXXX.sh)
	cp "$0" "$script" && chmod a+rx "$script"
	trap 'rm -f "$script"' EXIT
	# the KM_BENCH_ settings as they are (KM_BENCH_SHARDS="4 32" has a space)
	mapfile -t settings < <(env | grep '^KM_BENCH_[A-Z0-9_]*=')
	runuser -u postgres -- env PATH="$PATH" "${settings[@]}" bash "$script" "$@"
	exit $?
fi
ms=("$@")
[ ${#ms[@]} -gt 0 ] || ms=(1000)
shards=(${KM_BENCH_SHARDS:-4 32})
solvers=(${KM_BENCH_SOLVERS:-direct cg})
rows=${KM_BENCH_ROWS:-200000}
port0=${KM_BENCH_PORT:-55695}
d=20
dir=$(mktemp -d /tmp/km_citus_bytes.XXXXXX)
ports=($port0 $((port0 + 1)) $((port0 + 2)))
stop() {
	for i in 0 1 2; do
		[ -e "$dir/n$i/postmaster.pid" ] && pg_ctl -D "$dir/n$i" -m immediate stop >/dev/null 2>&1 || true
	done
	[ -n "${KM_BENCH_KEEP:-}" ] || rm -rf "$dir"
}
trap stop EXIT
for i in 0 1 2; do
	initdb -D "$dir/n$i" -A trust -U postgres >/dev/null
	cat >>"$dir/n$i/postgresql.conf" <<CONF
port = ${ports[$i]}
unix_socket_directories = '$dir'
listen_addresses = '127.0.0.1'
shared_preload_libraries = '$([ $i = 0 ] && echo citus,kernel_ml || echo citus)'
max_worker_processes = 16
max_connections = 80
max_parallel_workers_per_gather = 0
citus.shard_replication_factor = 1
shared_buffers = 256MB
work_mem = 64MB
CONF
	echo "host all all 127.0.0.1/32 trust" >>"$dir/n$i/pg_hba.conf"
	pg_ctl -D "$dir/n$i" -l "$dir/n$i.log" -w start >/dev/null
	psql -X -q -h "$dir" -p "${ports[$i]}" -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c 'CREATE EXTENSION citus' -c 'CREATE EXTENSION kernel_ml'
done
on() { local n=$1; shift; psql -X -q -h "$dir" -p "${ports[$n]}" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
on 0 -c "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null
on 0 -c "SELECT citus_add_node('127.0.0.1', ${ports[1]})" -c "SELECT citus_add_node('127.0.0.1', ${ports[2]})" >/dev/null
now() { date +%s.%N; }

# the local copy (2 parallel workers) and one distributed copy per shard count
on 0 >/dev/null <<SQL
CREATE TABLE loc (id int, f float8[], y float8) WITH (parallel_workers = 2);
INSERT INTO loc
SELECT i, ARRAY(SELECT sin(i * 0.37 + j) + cos(i * 0.011 * j) FROM generate_series(1, $d) j)::float8[],
       sin(i * 0.37) + 0.1 * cos(i * 1.3)
FROM generate_series(1, $rows) i;
VACUUM ANALYZE loc;
SQL
for s in "${shards[@]}"; do
	on 0 >/dev/null <<SQL
SET citus.shard_count = $s;
CREATE TABLE dist_$s (id int, f float8[], y float8);
SELECT create_distributed_table('dist_$s', 'id');
INSERT INTO dist_$s SELECT * FROM loc;
VACUUM ANALYZE dist_$s;
SQL
done

printf '%-6s %-6s %6s %8s %6s %7s %12s %12s %10s %10s %10s %9s %9s\n' m solver shards rows passes \
	"big/sh" "big B/sh" "big B/pass" "all MB" "combine ms" "coord ms" "shard ms" "wall s"
for m in "${ms[@]}"; do
	for solver in "${solvers[@]}"; do
		opts="{\"approximation\": \"nystrom\", \"components\": $m, \"seed\": 3, \"lambda\": 0.01$([ "$solver" != cg ] || echo ', "solver": "cg"')}"
		t0=$(now)
		on 0 -At >/dev/null <<SQL
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SELECT version FROM kernel_model_train('loc_${solver}_$m', 'SELECT f, y FROM loc', '$opts');
SQL
		lwall=$(awk "BEGIN{printf \"%.1f\", $(now) - $t0}")
		printf '%-6s %-6s %6s %8d %6s %7s %12s %12s %10s %10s %10s %9s %9s\n' "$m" "$solver" local "$rows" - - - - - - - - "$lwall"
		for s in "${shards[@]}"; do
			t=dist_$s
			# training alone (wall), then again with the logs for the replay
			t0=$(now)
			on 0 -At -c "SELECT version FROM kernel_model_train('d${s}_${solver}_$m', 'SELECT f, y FROM $t', '$opts')" >/dev/null
			wall=$(awk "BEGIN{printf \"%.1f\", $(now) - $t0}")
			on 0 -At >"$dir/out" 2>"$dir/log" <<SQL
BEGIN;
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = notice;
SET citus.log_remote_commands = on;
SET client_min_messages = notice;
SELECT version FROM kernel_model_train('l${s}_${solver}_$m', 'SELECT f, y FROM $t', '$opts');
SET client_min_messages = warning;
SET auto_explain.log_min_duration = -1;
SELECT pg_catalog.format('SELECT %L, pg_catalog.encode(r.d, ''hex'') FROM pg_catalog.read_intermediate_result(%L, ''binary'') r(d bytea)', x.n, x.n)
FROM pg_ls_dir('base/pgsql_job_cache') j,
     LATERAL (SELECT pg_catalog.replace(f, '.data', '') n FROM pg_ls_dir('base/pgsql_job_cache/' || j) f) x
WHERE x.n ~ '^kernel_ml_pass_' \\gexec
COMMIT;
SQL
			shard=$(on 0 -At -c "SELECT pg_catalog.shard_name('$t'::regclass, s.shardid) FROM pg_dist_shard s
				JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
				WHERE s.logicalrelid = '$t'::regclass AND n.nodeport = ${ports[1]} ORDER BY 1 LIMIT 1")
			shard=${shard#public.}
			rm -f "$dir"/p.*
			# one file per pass: the statement on that shard with a full
			# descriptor in place of a short one; and the coordinator's
			# duration of each pass statement (auto_explain)
			perl -e '
				my ($shard, $outf, $dir) = @ARGV;
				local $/; my $log = <STDIN>;
				open my $o, "<", $outf or die; my $out = <$o>;
				my @s = grep { !/^\s*EXPLAIN/ && /worker_partial_agg\(.public\._kernel_ml_pass/ && /public\.\Q$shard\E\b/ }
					map { s/^NOTICE:  issuing //r } split /\n(?=NOTICE:)/, $log;
				s/\nDETAIL:.*//s for @s;
				my @dur = $log =~ /duration: ([0-9.]+) ms\s+plan:\s*\n\s*Query Text: SELECT \S*_kernel_ml_pass\(/g;
				my $i = 0;
				for my $st (@s) {
					my ($hex) = $st =~ /\x27\\x([0-9a-f]+)\x27::bytea/ or die "no descriptor literal\n";
					if (substr($hex, 0, 8) eq "4b4d5052") {
						my $name = pack("H*", substr($hex, 56, 128)) =~ s/\0.*//sr;
						my ($full) = $out =~ /^\Q$name\E\|([0-9a-f]+)$/m or die "no broadcast of $name\n";
						$st =~ s/\x27\\x$hex\x27::bytea/\x27\\x$full\x27::bytea/;
					}
					$st =~ s/;\s*$//;
					my ($fullhex) = $st =~ /\x27\\x([0-9a-f]+)\x27::bytea/;
					open my $g, ">", sprintf("%s/p.%04d.desc", $dir, $i) or die;
					print $g "\\x$fullhex"; close $g;
					open my $f, ">", sprintf("%s/p.%04d", $dir, $i) or die;
					print $f $st; close $f;
					open $f, ">", sprintf("%s/p.%04d.coord", $dir, $i) or die;
					print $f ($dur[$i] // "nan"); close $f;
					$i++;
				}
				print STDERR "passes $i, coordinator durations ", scalar(@dur), "\n";
			' "$shard" "$dir/out" "$dir" <"$dir/log" 2>"$dir/perl.err"
			passes=0 all=0 big=0 bigi=0
			for p in "$dir"/p.[0-9][0-9][0-9][0-9]; do
				r=$( { echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS t0, extract(epoch from clock_timestamp()) AS w0 \\gset"
					echo "CREATE TEMP TABLE st AS SELECT w::text AS w FROM ("; cat "$p"; echo ") q(w);"
					echo "SELECT max(octet_length(w)) || ' ' || round((extract(epoch from clock_timestamp()) - :w0)::numeric * 1000, 1) FROM st;"
					echo "COPY st TO '$p.state';"; } | on 1 -At)
				set -- $r
				echo "$1 $2" >"$p.res"
				passes=$((passes + 1)); all=$((all + $1))
				if [ "$1" -gt "$big" ]; then big=$1 bigi=$p; fi
			done
			# the shipped state of the largest pass and of the last one, S
			# copies in a coordinator table, folded by coord_combine_agg;
			# best of 3
			last=$(ls "$dir"/p.[0-9][0-9][0-9][0-9] | tail -1)
			combine() {
				on 0 -c "DROP TABLE IF EXISTS states; CREATE TABLE states (w text)" \
					-c "COPY states FROM '$1.state'" \
					-c "INSERT INTO states SELECT w FROM states, generate_series(2, $s)" 2>/dev/null
				local best=1e99 c
				for _ in 1 2 3; do
					# in one transaction: the pass rebuilt in this process from
					# its descriptor (one row through the aggregate), then the fold
					c=$(on 0 -At <<SQL
BEGIN;
SELECT octet_length(public._kernel_ml_pass(f, y, '$(cat "$1.desc")'::bytea)) FROM (SELECT f, y FROM loc LIMIT 1) s \\gset
SELECT extract(epoch from clock_timestamp()) AS w0 \\gset
SELECT octet_length(coord_combine_agg('public._kernel_ml_pass(float8[],float8,bytea)'::regprocedure::oid, w::cstring, NULL::bytea)) FROM states \\gset
SELECT round((extract(epoch from clock_timestamp()) - :w0)::numeric * 1000, 1);
COMMIT;
SQL
)
					best=$(awk "BEGIN{print ($c < $best) ? $c : $best}")
				done
				echo "$best"
			}
			comb=$(combine "$bigi")
			lastcomb=$(combine "$last")
			[ -z "${KM_BENCH_SHOW:-}" ] || echo "last pass: $(cut -d' ' -f1 "$last.res") B/shard shipped, combine of $s: $lastcomb ms, coordinator $(cat "$last.coord") ms, shard $(cut -d' ' -f2 "$last.res") ms" >&2
			bigsh=$(cut -d' ' -f2 "$bigi.res")
			printf '%-6s %-6s %6s %8d %6d %7s %12d %12d %10.1f %10s %10s %9s %9s\n' "$m" "$solver" "$s" "$rows" "$passes" \
				"$(basename "$bigi" | sed 's/p\.0*//;s/^$/0/')" "$big" "$((big * s))" "$(awk "BEGIN{print $all * $s / 1e6}")" \
				"$comb" "$(cat "$bigi.coord")" "$bigsh" "$wall"
			[ -z "${KM_BENCH_SHOW:-}" ] || { cat "$dir/perl.err" >&2; cat "$dir"/p.*.res | tr '\n' ';' >&2; echo >&2; }
		done
	done
done
