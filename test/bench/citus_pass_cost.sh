#!/usr/bin/env bash
# Per-row cost of the pass aggregate on a Citus shard, on Citus's real task
# shape (issue 33 point 3): a coordinator and two workers on loopback (as
# test/t/030_citus.pl starts them, with pg_ctl in a temporary folder), a
# distributed table of 2 shards (one per worker) of d = 20 features; for
# each m, a named nystrom ridge and a named rff svr are trained with
# citus.log_remote_commands on, and the shard statement of the statistics
# pass (nystrom, pass kind 2) and of the last Newton pass (rff svr, kind 3)
# is taken verbatim from the log and replayed on
# worker 1, against the plain local aggregate over the same shard: the same
# pass aggregate with the same full descriptor as one constant,
# SELECT _kernel_ml_pass(f, y, '\x...'::bytea) FROM <shard> (and, for
# nystrom, the 4-argument kernel_train(f, y, opts, basis) over the shard).
# Worker CPU time of the statement's backend (/proc/self/schedstat), best of
# KM_BENCH_REPS runs of each in turn, per row in microseconds.
#
#   eval "$(/work/pgenv/start.sh h27 55670)"   # any PostgreSQL 15 with Citus and kernel_ml installed
#   bash test/bench/citus_pass_cost.sh [m ...]   # default: 200 1000 4000
#
# Rows per m: KM_BENCH_ROWS_<m> (defaults 200000, 40000, 8000); ports from
# KM_BENCH_PORT (default 55675, then +1, +2).  Not part of the test suite.
set -euo pipefail
# PostgreSQL refuses to run as root: run as postgres then (env kept)
if [ "$(id -u)" = 0 ]; then
	script=$(mktemp /tmp/km_citus_cost.XXXXXX.sh)
	cp "$0" "$script" && chmod a+rx "$script"
	trap 'rm -f "$script"' EXIT
	# the KM_BENCH_ settings as they are (KM_BENCH_SHARDS="4 32" has a space)
	mapfile -t settings < <(env | grep '^KM_BENCH_[A-Z0-9_]*=')
	runuser -u postgres -- env PATH="$PATH" "${settings[@]}" bash "$script" "$@"
	exit $?
fi
ms=("$@")
[ ${#ms[@]} -gt 0 ] || ms=(200 1000 4000)
reps=${KM_BENCH_REPS:-3}
port0=${KM_BENCH_PORT:-55675}
d=20
dir=$(mktemp -d /tmp/km_citus_cost.XXXXXX)
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
	cat >>"$dir/n$i/postgresql.conf" <<EOF
port = ${ports[$i]}
unix_socket_directories = '$dir'
listen_addresses = '127.0.0.1'
shared_preload_libraries = '$([ $i = 0 ] && echo citus,kernel_ml || echo citus)'
max_worker_processes = 16
max_connections = 50
max_parallel_workers_per_gather = 0
citus.shard_replication_factor = 1
shared_buffers = 256MB
work_mem = 64MB
EOF
	echo "host all all 127.0.0.1/32 trust" >>"$dir/n$i/pg_hba.conf"
	pg_ctl -D "$dir/n$i" -l "$dir/n$i.log" -w start >/dev/null
	psql -X -q -h "$dir" -p "${ports[$i]}" -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c 'CREATE EXTENSION citus' -c 'CREATE EXTENSION kernel_ml'
done
on() { local n=$1; shift; psql -X -q -h "$dir" -p "${ports[$n]}" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
on 0 -c "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null
on 0 -c "SELECT citus_add_node('127.0.0.1', ${ports[1]})" -c "SELECT citus_add_node('127.0.0.1', ${ports[2]})" >/dev/null

# CPU seconds of one statement in a worker backend: file holds the
# statement; a short descriptor's intermediate result ($2, full bytes in
# $3) is made first in the same transaction, as the broadcast does
cpu_of() {
	local file=$1 name=${2:-} full=${3:-}
	{
		if [ -n "$name" ]; then
			echo "BEGIN;"
			echo "SELECT pg_catalog.create_intermediate_result('$name', 'SELECT E''\\$(cat "$full")''::pg_catalog.bytea') \\gset"
		fi
		echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS t0 \\gset"
		echo '\o /dev/null'
		cat "$file"
		echo ';'
		echo '\o'
		echo "SELECT (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :t0) / 1e9;"
		[ -z "$name" ] || echo "COMMIT;"
	} | on 1 -At
}
min() { awk "BEGIN{print ($1 < $2) ? $1 : $2}"; }

printf '%-8s %6s %8s %9s %9s %11s %11s %11s %7s\n' kind m rows "desc kB" "arg B" "plain us" "citus us" "train4 us" ratio
for m in "${ms[@]}"; do
	var=KM_BENCH_ROWS_$m
	case $m in 200) def=200000 ;; 1000) def=40000 ;; *) def=8000 ;; esac
	rows=${!var:-$def}
	t=data_$m
	on 0 >/dev/null <<SQL
SET citus.shard_count = 2;
CREATE TABLE $t (id int, f float8[], y float8);
SELECT create_distributed_table('$t', 'id');
INSERT INTO $t
SELECT i, ARRAY(SELECT sin(i * 0.37 + j) + cos(i * 0.011 * j) FROM generate_series(1, $d) j)::float8[],
       sin(i * 0.37) + 0.1 * cos(i * 1.3)
FROM generate_series(1, $rows) i;
VACUUM ANALYZE $t;
SQL
	# the shard of worker 1 and its rows
	shard=$(on 0 -At -c "SELECT pg_catalog.shard_name('$t'::regclass, s.shardid) FROM pg_dist_shard s
		JOIN pg_dist_placement p USING (shardid) JOIN pg_dist_node n USING (groupid)
		WHERE s.logicalrelid = '$t'::regclass AND n.nodeport = ${ports[1]} ORDER BY 1 LIMIT 1")
	shard=${shard#public.}
	srows=$(on 1 -At -c "SELECT count(*) FROM public.$shard")
	for kind in nystrom rff_svr; do
		if [ $kind = nystrom ]; then
			opts="{\"approximation\": \"nystrom\", \"components\": $m, \"seed\": 3, \"lambda\": 0.01}"
		else
			opts="{\"method\": \"svr\", \"approximation\": \"rff\", \"components\": $m, \"seed\": 3, \"lambda\": 0.001}"
		fi
		# in one transaction: the training, then the descriptors it sent to
		# the workers as intermediate results (also kept on this node until
		# the transaction ends), for the replay
		on 0 -At >"$dir/out" 2>"$dir/log" <<SQL
BEGIN;
SET citus.log_remote_commands = on;
SET citus.coordinator_aggregation_strategy = 'disabled';
SET client_min_messages = notice;
SELECT version FROM kernel_model_train('${kind}_$m', 'SELECT f, y FROM $t', '$opts');
SET client_min_messages = warning;
SELECT pg_catalog.format('SELECT %L, pg_catalog.encode(r.d, ''hex'') FROM pg_catalog.read_intermediate_result(%L, ''binary'') r(d bytea)', x.n, x.n)
FROM pg_ls_dir('base/pgsql_job_cache') j,
     LATERAL (SELECT pg_catalog.replace(f, '.data', '') n FROM pg_ls_dir('base/pgsql_job_cache/' || j) f) x
WHERE x.n ~ '^kernel_ml_pass_' \\gexec
COMMIT;
SQL
		# the shard statements of worker 1's shard: nystrom's largest (the
		# statistics pass), svr's last (a Newton pass)
		perl -e '
			my ($kind, $shard, $out, $outf) = @ARGV;
			local $/; my $log = <STDIN>;
			my @s = grep { /worker_partial_agg\(.public\._kernel_ml_pass/ && /public\.\Q$shard\E\b/ }
				map { s/^NOTICE:  issuing //r } split /\n(?=NOTICE:)/, $log;
			s/\nDETAIL:.*//s for @s;
			# the pass kind (pipeline_approx_job.h): 2 statistics, 3 a Newton step
			my $want = $kind eq "nystrom" ? 2 : 3;
			@s = grep { /\x27\\x[0-9a-f]{12}([0-9a-f]{2})00/ && hex($1) == $want } @s;
			die "no pass statement of kind $want on $shard\n" unless @s;
			my $pick = $s[-1];
			open my $f, ">", $out or die; print $f $pick; close $f;
			my ($hex) = $pick =~ /\x27\\x([0-9a-f]+)\x27::bytea/ or die "no descriptor literal\n";
			my $name = "";
			if (substr($hex, 0, 8) eq "4b4d5052")
			{
				# a short descriptor (pass_desc.h PassDescRef): its name, and
				# the full bytes of the same key from the logged broadcast
				$name = pack("H*", substr($hex, 56, 128)) =~ s/\0.*//sr;
				open my $o, "<", $outf or die;
				my ($full) = <$o> =~ /^\Q$name\E\|([0-9a-f]+)$/m or die "no broadcast of $name\n";
				$hex = $full;
			}
			open $f, ">", "$out.desc" or die; print $f "\\x$hex"; close $f;
			open $f, ">", "$out.name" or die; print $f $name; close $f;
		' "$kind" "$shard" "$dir/stmt" "$dir/out" <"$dir/log"
		desc_kb=$(awk '{print (length($0) - 2) / 2 / 1024}' "$dir/stmt.desc")
		echo "SELECT public._kernel_ml_pass(f, y, '$(cat "$dir/stmt.desc")'::bytea) FROM public.$shard" >"$dir/plain"
		if [ $kind = nystrom ]; then
			# the basis of the same options over the shard, kept in a table
			on 1 -c "DROP TABLE IF EXISTS b; CREATE TABLE b AS SELECT kernel_basis(f, '$opts'::jsonb) AS b FROM public.$shard"
			echo "SELECT kernel_train(f, y, '$opts'::jsonb, (SELECT b FROM b)) FROM public.$shard" >"$dir/train4"
		fi
		p=1e99 c=1e99 k=1e99
		for _ in $(seq "$reps"); do
			p=$(min "$(cpu_of "$dir/plain")" "$p")
			c=$(min "$(cpu_of "$dir/stmt" "$(cat "$dir/stmt.name")" "$dir/stmt.desc")" "$c")
			[ $kind = nystrom ] && k=$(min "$(cpu_of "$dir/train4")" "$k")
		done
		printf '%-8s %6d %8d %9.1f %9d %11.2f %11.2f %11s %7.2f\n' "$kind" "$m" "$srows" "$desc_kb" \
			"$(perl -ne 'print((length($1) - 1) / 2) if /\x27\\(x[0-9a-f]+)\x27::bytea/' "$dir/stmt")" \
			"$(awk "BEGIN{print $p * 1e6 / $srows}")" "$(awk "BEGIN{print $c * 1e6 / $srows}")" \
			"$([ $kind = nystrom ] && awk "BEGIN{printf \"%.2f\", $k * 1e6 / $srows}" || echo -)" \
			"$(awk "BEGIN{print $c / $p}")"
		[ -z "${KM_BENCH_SHOW:-}" ] || head -c 400 "$dir/stmt" >&2
	done
done
