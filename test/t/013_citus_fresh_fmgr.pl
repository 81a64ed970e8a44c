# The backend cache of parsed options and bases (issue 20, F7): Citus's
# worker_partial_agg calls a transition function through a fresh FmgrInfo
# for every row, so fn_extra is always empty.  test/bench/citus_fresh_fmgr.c
# (a test-only module, built here with PGXS and loaded by its path) calls
# kernel_train(f, y, options, basis)'s and kernel_basis's transition
# functions that way.  Checked: the states equal those of the plain
# aggregates bit for bit, for nystrom and rff; two bases of one shape (or
# two options) used in turn, row by row, in one scan and in consecutive
# statements, are never confused; a basis that changes between rows is
# refused (22023).
#
# Uses PostgreSQL::Test::Cluster and the installed extension; run it with
# test/tap.sh.
use strict;
use warnings;

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

# the module, built on its own
my $build = PostgreSQL::Test::Utils::tempdir;
copy("test/bench/citus_fresh_fmgr.c", $build) or die "copy: $!";
copy("test/bench/citus_fresh_fmgr.mk", $build) or die "copy: $!";
my ($out, $err);
my $ok = IPC::Run::run([ 'make', '-s', '-C', $build, '-f', 'citus_fresh_fmgr.mk', 'PG_CONFIG=pg_config' ],
	'>', \$out, '2>', \$err);
ok($ok, 'the fresh-FmgrInfo module builds') or diag($err);
my $so = "$build/citus_fresh_fmgr.so";

my $node = PostgreSQL::Test::Cluster->new('citus_fresh_fmgr', install_path => $install);
$node->init;
$node->start;

$node->safe_psql('postgres', qq{
CREATE EXTENSION kernel_ml;
CREATE FUNCTION fresh_fmgr_sfunc(internal, regprocedure, float8[], float8, jsonb, bytea) RETURNS internal
  AS '$so', 'fresh_fmgr_sfunc' LANGUAGE C;
CREATE FUNCTION fresh_fmgr_sfunc(internal, regprocedure, float8[], jsonb) RETURNS internal
  AS '$so', 'fresh_fmgr_sfunc' LANGUAGE C;
CREATE FUNCTION fresh_fmgr_final(internal) RETURNS bytea AS '$so', 'fresh_fmgr_final' LANGUAGE C;
CREATE AGGREGATE fresh_fmgr(regprocedure, float8[], float8, jsonb, bytea)
  (SFUNC = fresh_fmgr_sfunc, STYPE = internal, FINALFUNC = fresh_fmgr_final);
CREATE AGGREGATE fresh_fmgr(regprocedure, float8[], jsonb)
  (SFUNC = fresh_fmgr_sfunc, STYPE = internal, FINALFUNC = fresh_fmgr_final);
CREATE AGGREGATE plain_state(float8[], float8, jsonb, bytea) (SFUNC = kernel_train_basis_sfunc, STYPE = bytea);
CREATE AGGREGATE plain_state(float8[], jsonb) (SFUNC = kernel_basis_sfunc, STYPE = bytea);
CREATE TABLE data AS
SELECT i AS id, ARRAY[sin(i), cos(0.3 * i), (i % 11) / 11.0]::float8[] AS f, sin(i) * cos(0.3 * i) AS y
FROM generate_series(1, 3000) i;
CREATE TABLE opts(name text, o jsonb);
INSERT INTO opts VALUES
  ('n', '{"approximation": "nystrom", "components": 40, "seed": 1}'),
  ('n2', '{"approximation": "nystrom", "components": 40, "seed": 2}'),
  ('r', '{"approximation": "rff", "components": 40, "seed": 1}'),
  ('r2', '{"approximation": "rff", "components": 40, "seed": 2}'),
  ('rl', '{"approximation": "rff", "components": 40, "seed": 1, "lambda": 0.5}');
CREATE TABLE bases AS SELECT name, (SELECT kernel_basis(f, o) FROM data) AS b FROM opts;
UPDATE bases SET b = (SELECT b FROM bases WHERE name = 'r') WHERE name = 'rl';
CREATE FUNCTION o(text) RETURNS jsonb LANGUAGE sql STABLE AS \$\$ SELECT o FROM opts WHERE name = \$1 \$\$;
CREATE FUNCTION b(text) RETURNS bytea LANGUAGE sql STABLE AS \$\$ SELECT b FROM bases WHERE name = \$1 \$\$;
});

my $train = q{'kernel_train_basis_sfunc(bytea,float8[],float8,jsonb,bytea)'::regprocedure};
my $basis = q{'kernel_basis_sfunc(bytea,float8[],jsonb)'::regprocedure};
my $serial = 'SET max_parallel_workers_per_gather = 0;';

for my $k (qw(n n2 r r2 rl))
{
	is($node->safe_psql('postgres', qq{$serial
		SELECT (SELECT plain_state(f, y, o('$k'), b('$k')) FROM data) =
		       (SELECT fresh_fmgr($train, f, y, o('$k'), b('$k')) FROM data)}),
		't', "kernel_train $k: the state through a fresh FmgrInfo per row is the plain one, bit for bit");
}
for my $k (qw(n r))
{
	is($node->safe_psql('postgres', qq{$serial
		SELECT (SELECT plain_state(f, o('$k')) FROM data) = (SELECT fresh_fmgr($basis, f, o('$k')) FROM data)}),
		't', "kernel_basis $k: the same state through a fresh FmgrInfo per row");
}

# two bases of one shape, and two options over one basis, in turn row by row
for my $pair ([qw(r r2)], [qw(n n2)], [qw(r rl)])
{
	my ($a, $b) = @$pair;
	is($node->safe_psql('postgres', qq{$serial
		SELECT (SELECT plain_state(f, y, o('$a'), b('$a')) FROM data) = w.s1 AND
		       (SELECT plain_state(f, y, o('$b'), b('$b')) FROM data) = w.s2 AND w.s1 <> w.s2
		FROM (SELECT fresh_fmgr($train, f, y, o('$a'), b('$a')) AS s1,
		             fresh_fmgr($train, f, y, o('$b'), b('$b')) AS s2 FROM data) w}),
		't', "$a and $b in turn in one scan are kept apart");
}

# consecutive statements of one session, alternating bases
is($node->safe_psql('postgres', qq{$serial
	CREATE TEMP TABLE s AS SELECT name, (SELECT plain_state(f, y, o(name), b(name)) FROM data) AS s
	  FROM opts WHERE name IN ('r', 'r2');
	SELECT (SELECT fresh_fmgr($train, f, y, o('r'), b('r')) FROM data) = (SELECT s FROM s WHERE name = 'r');
	SELECT (SELECT fresh_fmgr($train, f, y, o('r2'), b('r2')) FROM data) = (SELECT s FROM s WHERE name = 'r2');
	SELECT (SELECT fresh_fmgr($train, f, y, o('r'), b('r')) FROM data) = (SELECT s FROM s WHERE name = 'r');}),
	"t\nt\nt", 'consecutive statements with alternating bases');

# a basis that changes between rows
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{$serial
	SELECT fresh_fmgr($train, f, y, o('r'), CASE WHEN id < 2000 THEN b('r') ELSE b('r2') END ORDER BY id) FROM data});
like($stderr, qr/the basis must be the same for every row/, 'a basis that changes between rows: refused');
($ret, $stdout, $stderr) = $node->psql('postgres', qq{$serial
	SELECT fresh_fmgr($train, f, y, o('r'), b('r')) FROM data WHERE false});
is($stdout, '', 'no rows: NULL');

ok(!grep(/terminated by signal|TRAP:/, slurp_file($node->logfile)), 'no crash in the server log');
$node->stop;
done_testing();
