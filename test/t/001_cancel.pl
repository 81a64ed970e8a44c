# kernel_train on 20,000 rows must honour statement_timeout (the Gram matrix
# and the Cholesky factorisation check for interrupts well under a second
# apart) and must refuse early, naming kernel_ml.max_memory, when the n x n
# kernel matrix would not fit in it; with kernel_ml.blas_threads = 2 (pages
# populated from two threads) a cancel is as prompt and the model the same.
#
# Uses PostgreSQL::Test::Cluster (its own cluster) and the installed
# extension; run it with test/tap.sh.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $table = 'kernel_ml_cancel_t';

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

my $node = PostgreSQL::Test::Cluster->new('cancel', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 16\nmax_parallel_workers = 8\n");
$node->start;

# Run the SQL statements in one psql session (-X -At, stopping at the first
# error only with ON_ERROR_STOP => 1); return its stdout and stderr joined,
# its exit code and its wall time in seconds.
sub psql
{
	my ($sql, %opt) = @_;
	my $start = time();
	my ($rc, $stdout, $stderr) = $node->psql(
		'postgres', join(";\n", @$sql) . ";\n",
		on_error_stop => $opt{ON_ERROR_STOP} // 0);
	my $out = join("\n", grep { $_ ne '' } ($stdout, $stderr));
	return ($out, $rc, time() - $start);
}

# Baseline: the cost of starting psql and connecting.
my ($out, $rc, $base) = psql(['select 1']);
is($rc, 0, 'psql reaches the cluster') or diag($out);
diag(sprintf('psql with select 1 takes %.3f s', $base));

# Load the data in its own psql call, so that the timed call only trains.
($out, $rc) = psql([
	'CREATE EXTENSION IF NOT EXISTS kernel_ml',
	"DROP TABLE IF EXISTS $table",
	'SELECT setseed(0.42)',
	# the subquery refers to i, so it runs once per row
	"CREATE TABLE $table AS SELECT i AS id, "
	  . "ARRAY(SELECT random() FROM generate_series(1, 20) WHERE i > 0) AS f, "
	  . "random() AS y FROM generate_series(1, 20000) AS i",
	"ANALYZE $table" ], ON_ERROR_STOP => 1);
is($rc, 0, 'created the extension and a table of 20,000 rows') or diag($out);

($out, $rc) = psql([
	"SELECT count(*), min(cardinality(f)), max(cardinality(f)), "
	  . "count(DISTINCT f) FROM $table" ]);
like($out, qr/^20000\|20\|20\|20000$/m, '20,000 distinct rows of 20 features')
  or diag($out);

# Seconds a cancelled statement may take past its timeout, besides psql's
# own start-up; KM_TAP_TIME_SCALE (test/debug_server.sh sets it) widens it on
# an -O0 assert-enabled server, whose own work stretches every latency.
my $slack = 2 * ($ENV{KM_TAP_TIME_SCALE} // 1);

# 1. statement_timeout cancels training promptly.
my $elapsed;
($out, $rc, $elapsed) = psql([
	"SET statement_timeout = '1s'",
	"SELECT length(kernel_train(f, y)) FROM $table" ]);
like(
	$out,
	qr/canceling statement due to statement timeout/,
	'kernel_train on 20,000 rows is cancelled by statement_timeout')
  or diag($out);
cmp_ok($elapsed, '<', $slack + $base,
	sprintf('the cancelled psql call took %.3f s (< %.0f s + %.3f s)', $elapsed, $slack, $base));

# 2. kernel_ml.max_memory: a 20,000 x 20,000 kernel matrix is 3.2 GB.
($out, $rc, $elapsed) = psql([
	"SET kernel_ml.max_memory = '64MB'",
	"SELECT length(kernel_train(f, y)) FROM $table" ]);
like($out, qr/ERROR/, 'training over kernel_ml.max_memory is an error')
  or diag($out);
like($out, qr/kernel_ml\.max_memory/, 'the error mentions kernel_ml.max_memory')
  or diag($out);
unlike($out, qr/statement timeout/, 'and is not a timeout') or diag($out);
cmp_ok($elapsed, '<', $slack + $base,
	sprintf('it fails quickly: %.3f s (< %.0f s + %.3f s)', $elapsed, $slack, $base));

# 3. kernel_ml.blas_threads = 2: the matrix pages are populated from two
# threads (src/pg/pgutil.c, from 64 MB of pages on), and BLAS runs on two.
# A cancel must still stop training promptly and leave a working server...
($out, $rc, $elapsed) = psql([
	'SET kernel_ml.blas_threads = 2',
	"SET statement_timeout = '300ms'",
	"SELECT length(kernel_train(f, y)) FROM $table" ]);
like(
	$out,
	qr/canceling statement due to statement timeout/,
	'with blas_threads 2, kernel_train on 20,000 rows is cancelled too')
  or diag($out);
cmp_ok($elapsed, '<', $slack + $base,
	sprintf('the cancelled psql call took %.3f s (< %.0f s + %.3f s)', $elapsed, $slack, $base));

# ... and a model trained on two threads (5,000 rows: 100 MB of pages)
# predicts like one trained on one thread.
($out, $rc) = psql([
	'SET kernel_ml.blas_threads = 2',
	"CREATE TEMP TABLE m2 AS SELECT kernel_train(f, y ORDER BY id) AS m "
	  . "FROM $table WHERE id <= 5000",
	'SET kernel_ml.blas_threads = 1',
	"CREATE TEMP TABLE m1 AS SELECT kernel_train(f, y ORDER BY id) AS m "
	  . "FROM $table WHERE id <= 5000",
	"SELECT (kernel_model_info(m1.m)->>'n_train')::int, "
	  . "max(abs(kernel_predict(m2.m, t.f) - kernel_predict(m1.m, t.f))) "
	  . "/ max(abs(kernel_predict(m1.m, t.f))) "
	  . "FROM $table t, m1, m2 WHERE t.id > 19000 GROUP BY 1" ], ON_ERROR_STOP => 1);
is($rc, 0, 'trained the same 5,000 rows with blas_threads 2 and 1') or diag($out);
my ($n_train, $rel) = $out =~ /^(\d+)\|(\S+)$/m;
is($n_train, 5000, 'on 5,000 rows') or diag($out);
cmp_ok($rel // 1, '<', 1e-9,
	'their predictions on 1,000 other rows agree within 1e-9 (relative)')
  or diag($out);

($out, $rc) = psql([ "DROP TABLE $table" ], ON_ERROR_STOP => 1);
is($rc, 0, 'dropped the table') or diag($out);

$node->stop;
done_testing();
