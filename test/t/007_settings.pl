# Settings that protect the server (issue 10, point 7): a role that is not a
# superuser cannot raise kernel_ml.max_memory above the superuser-only
# ceiling kernel_ml.max_memory_limit, nor kernel_ml.blas_threads above the
# online cores or kernel_ml.blas_threads_limit; work is capped at the
# ceiling whatever the setting says, and the errors name the limit in force
# and the setting that sets it, without telling an ordinary role to raise a
# setting it cannot raise.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
chomp(my $cores = `getconf _NPROCESSORS_ONLN`);

my $node = PostgreSQL::Test::Cluster->new('settings');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION kernel_ml;
	CREATE ROLE alice LOGIN;
	CREATE TABLE data AS
	SELECT i AS id, ARRAY[sin(i), cos(i), (i % 7) / 7.0]::float8[] AS f, sin(i) AS y
	FROM generate_series(1, 5000) i;
	GRANT SELECT ON data TO alice;
});

# Load kernel_ml in the session first: before that its settings are
# placeholders that accept any value (see 0. below).
my $load = q{DO $$BEGIN PERFORM kernel_eval('{1}', '{1}', '{}'); END$$;};

# psql as the given role, kernel_ml loaded; returns (exit code, stdout, stderr)
sub as_role
{
	my ($role, $sql, $noload) = @_;
	my ($out, $err);
	my $ret = $node->psql('postgres', ($noload ? '' : "$load\n") . $sql,
		stdout => \$out, stderr => \$err, extra_params => ['-U', $role]);
	return ($ret, $out, $err);
}

my ($ret, $out, $err);

# 0. set before kernel_ml is loaded: PostgreSQL keeps a placeholder, and
# the value is refused with a warning when the library loads
($ret, $out, $err) = as_role('alice',
	"SET kernel_ml.max_memory = '1TB'; SET kernel_ml.blas_threads = 64; $load SHOW kernel_ml.max_memory; SHOW kernel_ml.blas_threads", 1);
is($out, "4GB\n1", 'values set before kernel_ml loads are dropped when it loads');
like($err, qr/WARNING:  invalid value for parameter "kernel_ml.max_memory": 1073741824/,
	'... with a warning');
($ret, $out, $err) = as_role('alice',
	"SET kernel_ml.max_memory_limit = '1TB'; $load SHOW kernel_ml.max_memory_limit", 1);
is($out, "4GB", '... the ceiling too');

# 1. kernel_ml.max_memory above the ceiling (4 GB by default)
($ret, $out, $err) = as_role('alice', "SET kernel_ml.max_memory = '1TB'");
isnt($ret, 0, 'an ordinary role cannot SET kernel_ml.max_memory = 1TB');
like($err, qr/invalid value for parameter "kernel_ml.max_memory"/, '... as an invalid value');
like($err, qr/cannot exceed kernel_ml.max_memory_limit \(4096 MB\), which only a superuser can change/,
	'... naming the ceiling');
($ret, $out, $err) = as_role('alice', "SET kernel_ml.max_memory = '1GB'; SHOW kernel_ml.max_memory");
is($ret, 0, 'below the ceiling it can');
is($out, '1GB', '... and the value is set');
($ret, $out, $err) = as_role('alice', "ALTER ROLE alice SET kernel_ml.max_memory = '1TB'");
isnt($ret, 0, 'nor store 1TB for itself with ALTER ROLE');
($ret, $out, $err) = as_role('alice', "SET kernel_ml.max_memory_limit = '8GB'");
like($err, qr/permission denied to set parameter "kernel_ml.max_memory_limit"/,
	'an ordinary role cannot change the ceiling');
($ret, $out, $err) = as_role('postgres', "SET kernel_ml.max_memory = '1TB'; SHOW kernel_ml.max_memory");
is($ret, 0, 'a superuser can SET 1TB (the ceiling still applies to the work)');

# 2. kernel_ml.blas_threads: at most the online cores
($ret, $out, $err) = as_role('alice', "SET kernel_ml.blas_threads = 64");
isnt($ret, 0, 'an ordinary role cannot SET kernel_ml.blas_threads = 64');
like($err, qr/cannot exceed the $cores cores this server has online/, '... naming the cores');
($ret, $out, $err) = as_role('alice', "SET kernel_ml.blas_threads = $cores");
is($ret, 0, 'as many threads as cores is allowed');

# a superuser's 64 is capped at the cores: count the backend's threads after
# a training (OpenBLAS starts its threads when their number is set; 0.1.0
# left 64 in the backend)
my $bg = $node->background_psql('postgres');
$bg->query_safe('SET kernel_ml.blas_threads = 64');
$bg->query_safe('SELECT length(kernel_train(f, y)) FROM data WHERE id <= 500');
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
chomp $pid;
opendir(my $dh, "/proc/$pid/task") or die "cannot read /proc/$pid/task: $!";
my $threads = grep { /^\d+$/ } readdir($dh);
closedir($dh);
ok($threads <= $cores, "the backend runs $threads threads, at most the $cores cores");
$bg->quit;

# a superuser ceiling below the cores, for one role
$node->safe_psql('postgres', 'ALTER ROLE alice SET kernel_ml.blas_threads_limit = 1');
($ret, $out, $err) = as_role('alice', "SET kernel_ml.blas_threads = 2");
if ($cores >= 2)
{
	isnt($ret, 0, 'with blas_threads_limit = 1, alice cannot SET 2 threads');
	like($err, qr/cannot exceed kernel_ml.blas_threads_limit \(1\), which only a superuser can change/,
		'... naming the ceiling');
}
$node->safe_psql('postgres', 'ALTER ROLE alice RESET kernel_ml.blas_threads_limit');

# 3. a lower ceiling set by the administrator
$node->safe_psql('postgres', "$load ALTER SYSTEM SET kernel_ml.max_memory_limit = '64MB'");
$node->reload;
($ret, $out, $err) = as_role('alice', "SET kernel_ml.max_memory = '128MB'");
isnt($ret, 0, 'above a 64MB ceiling, alice cannot SET 128MB');
like($err, qr/cannot exceed kernel_ml.max_memory_limit \(64 MB\)/, '... naming the 64 MB ceiling');

# training 5,000 rows needs about 200 MB for the kernel matrix: the rows
# past the limit are counted, not kept, and the message gives the whole
# need of the 5,000 rows, before the matrix is allocated
($ret, $out, $err) = as_role('alice', 'SELECT kernel_train(f, y) FROM data');
isnt($ret, 0, 'training over the ceiling is refused');
like($err, qr/ERROR:  kernel_train needs more memory than kernel_ml.max_memory_limit allows/,
	'... naming the ceiling in the message');
like($err, qr/DETAIL:  An exact model of 5000 rows needs about \d+ MB for its n x n kernel matrix and its rows; the limit is 64 MB, set by kernel_ml.max_memory_limit \(kernel_ml.max_memory is 4096 MB\)\./,
	'... the whole need, the limit in force and the setting that caps it');
like($err, qr/HINT:  Use "approximation": "nystrom" \(for example '\{"approximation": "nystrom", "components": 1000\}'\), whose memory does not grow with the rows: an exact model of this size is beyond kernel_ml.max_memory_limit \(64 MB\), which only a superuser can raise\./,
	'... and a hint the role can follow, leading with the approximation');
unlike($err, qr/SET kernel_ml/, '... which does not tell it to SET anything');

# below the ceiling, kernel_ml.max_memory binds and may be raised
($ret, $out, $err) = as_role('alice',
	"SET kernel_ml.max_memory = '8MB'; SELECT kernel_train(f, y) FROM data WHERE id <= 1500");
like($err, qr/more memory than kernel_ml.max_memory allows/, 'a lower kernel_ml.max_memory binds');
like($err, qr/the limit is 8192 kB, set by kernel_ml.max_memory\./, '... and is named');
like($err, qr/HINT:  Raise kernel_ml.max_memory \(SET kernel_ml.max_memory = '\d+MB'\)/,
	'... with a hint to raise it, which the role can');

# the superuser gets the hint it can follow
($ret, $out, $err) = as_role('postgres', "SET kernel_ml.max_memory = '1GB'; SELECT kernel_train(f, y) FROM data");
like($err, qr/HINT:  Raise kernel_ml.max_memory_limit and kernel_ml.max_memory to at least \d+MB/,
	'a superuser is told to raise the ceiling');

# within the ceiling, training works for alice
($ret, $out, $err) = as_role('alice', 'SELECT length(kernel_train(f, y)) > 0 FROM data WHERE id <= 1000');
is($out, 't', 'training within the ceiling works');

$node->stop;
done_testing();
