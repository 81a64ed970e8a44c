# kernel_ml.progress (issue 22, point 3): every long training reports its
# phase and how far it is as NOTICEs, at most once per
# kernel_ml.progress_interval and the first one interval into the
# statement, so that short trainings stay silent.  NOTICE lines carry
# timings, so they are matched here by regular expressions rather than held
# in pg_regress's expected output.
#
# 1. With the interval 0 every report is a line: each method names its
#    phases (exact ridge and LMS: kernel matrix, factorization, LMS
#    iterations, each grid candidate and fold; svm: kernel matrix, class
#    pairs, SMO iterations; logistic: Newton steps; sgd: epochs; approximate
#    models: basis, statistics, solve; named training: split, fit, score,
#    deploy).
# 2. kernel_ml.progress off, or an interval longer than the training: no line.
# 3. The rate: a training of a few seconds with an interval of 200 ms gives
#    at least one line and no more than its duration allows; the times the
#    lines give grow by at least the interval (to the 0.1 s they print).
# 4. A training that fails leaves nothing behind: the next statement's
#    lines name its own training.
# 5. No line is the same as the one before it (issue 30, friction 6), and
#    long single steps say how far they are (1b: Cholesky panel k of K,
#    kernel rows done of n, leverages, tridiagonal panels, reflector
#    groups, SMO iterations of at most N with the KKT violation and tol).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION kernel_ml;
	CREATE TABLE reg AS
	SELECT ARRAY[sin(i), cos(0.7 * i), (i % 13) / 13.0]::float8[] AS f,
	       sin(i) + cos(0.7 * i) AS y
	FROM generate_series(1, 60) i;
	-- three overlapping classes: SMO needs thousands of iterations
	CREATE TABLE cls AS
	SELECT ARRAY[sin(i), cos(1.3 * i)]::float8[] AS f,
	       (ARRAY['a', 'b', 'c'])[1 + (i * 7919) % 3] AS l
	FROM generate_series(1, 300) i;
	CREATE TABLE big_cls AS
	SELECT ARRAY[sin(i), cos(1.3 * i)]::float8[] AS f,
	       (ARRAY['a', 'b'])[1 + (i * 7919) % 2] AS l
	FROM generate_series(1, 8000) i;
	CREATE TABLE big AS
	SELECT ARRAY[sin(i), cos(0.7 * i), (i % 13) / 13.0]::float8[] AS f,
	       sin(i) + cos(0.7 * i) AS y
	FROM generate_series(1, 3000) i;
});

# the NOTICE lines of a statement run with the given settings
my @repeats;					# a line the same as the one before it (its time aside)

sub notices
{
	my ($settings, $sql) = @_;
	my ($out, $err);
	$node->psql('postgres', "$settings\n$sql", stdout => \$out, stderr => \$err,
		on_error_stop => 0);
	my @lines = grep { /NOTICE:/ } split /\n/, $err;
	my @text = map { (my $t = $_) =~ s/ \(\d+\.\d s\)$//; $t } @lines;
	push @repeats, map { $text[$_] } grep { $text[$_] eq $text[$_ - 1] } 1 .. $#text;
	return join("\n", @lines);
}

my $all = "SET kernel_ml.progress = on; SET kernel_ml.progress_interval = 0;";
my $n;

# 1. every method and phase
$n = notices($all, q{SELECT kernel_train(f, y) IS NOT NULL FROM reg;});
like($n, qr/NOTICE:  kernel_train: ridge: kernel matrix of 60 rows \(\d+\.\d s\)$/m,
	'ridge: the kernel matrix, with the statement\'s time');
like($n, qr/kernel_train: ridge: Cholesky factorization of 60 x 60 /, 'ridge: the factorization');

$n = notices($all, q{SELECT kernel_train(f, y, '{"lambda": [0.1, 1], "cv": 3}') IS NOT NULL FROM reg;});
like($n, qr/kernel_train: candidate 1 of 2 \(gamma [0-9.]+, lambda 0\.1\), fold 1 of 3; ridge: kernel matrix of 40 rows/,
	'k-fold selection: each candidate and fold, then the fit\'s phase');
like($n, qr/candidate 2 of 2 \(gamma [0-9.]+, lambda 1\), fold 3 of 3/, '... up to the last');

$n = notices($all, q{SELECT kernel_train(f, y, '{"lambda": [0.1, 1]}') IS NOT NULL FROM reg;});
like($n, qr/kernel_train: gamma 1 of 1 \([0-9.]+\): 2 lambdas by loo; lambda 1 of 2 \(0\.1\)/,
	'closed-form selection: each gamma and lambda');
like($n, qr/2 lambdas by loo; lambda 2 of 2 \(1\)/, '... up to the last');

$n = notices($all, q{SELECT kernel_train(f, y, '{"method": "lms", "max_iter": 5}') IS NOT NULL FROM reg;});
like($n, qr/kernel_train: lms: largest eigenvalue of 60 x 60/, 'lms: the learning rate');
like($n, qr/kernel_train: lms: iterations on 60 rows: iteration 5 of at most 5, relative change /,
	'lms: each iteration');

$n = notices($all, q{SELECT kernel_train(f, l, '{"lambda": 0.0001}') IS NOT NULL FROM cls;});
like($n, qr/kernel_train: svm: class pair 1 of 3, 200 rows/, 'svm: the class pairs');
like($n, qr/svm: class pair 3 of 3, 200 rows: SMO iteration 1024 of at most \d+, KKT violation [0-9.e+-]+ \(tol 0\.001\)/,
	'svm: SMO iterations, of at most how many, and the KKT violation against tol');

$n = notices($all, q{SELECT kernel_train(f, l, '{"probability": true}') IS NOT NULL FROM cls;});
like($n, qr/kernel_train: svm: kernel matrix of 300 rows/, 'svm with the full matrix: its build');

$n = notices($all, q{SELECT kernel_train(f, l, '{"method": "logistic"}') IS NOT NULL FROM cls;});
like($n, qr/kernel_train: logistic: Newton step 1 of at most \d+, gradient /, 'logistic: Newton steps');
like($n, qr/logistic: Newton step 2 of at most/, '... each');

$n = notices($all, q{SELECT kernel_train(f, (l = 'a')::text, '{"solver": "sgd", "max_iter": 3}') IS NOT NULL FROM cls;});
like($n, qr/kernel_train: sgd: hinge loss on 300 rows: epoch 3 of 3/, 'sgd: epochs');

$n = notices($all, q{SELECT kernel_train(f, l, '{"lambda": [0.001, 0.01], "cv": 2}') IS NOT NULL FROM cls;});
like($n, qr/kernel_train: candidate 2 of 2 \(gamma [0-9.]+, lambda 0\.01\), fold 2 of 2; svm: class pair/,
	'classifier selection: each candidate and fold');

$n = notices($all, q{SELECT kernel_train(f, y, '{"approximation": "nystrom", "components": 10}') IS NOT NULL FROM reg;});
like($n, qr/kernel_train: basis: 60 rows/, 'approximate: the basis');
like($n, qr/kernel_train: statistics: m = 10, 60 rows: 60 of 60 rows/, '... the statistics');
like($n, qr/kernel_train: solve: m = 10, 60 rows/, '... the solve');

# one lambda: a default ridge selects (its notices are the candidates')
$n = notices($all, q{SELECT version FROM kernel_model_train('m', 'SELECT f, y FROM reg', '{"lambda": 1}');});
like($n, qr/kernel_model_train: split: /, 'named training: split');
like($n, qr/kernel_model_train: fit: 48 training rows; ridge: kernel matrix of 48 rows/, '... fit');
like($n, qr/kernel_model_train: score: 48 training and 12 held-out rows/, '... score');
like($n, qr/kernel_model_train: deploy: /, '... deploy');

$n = notices($all, q{SELECT version FROM kernel_model_train('ma', 'SELECT f, y FROM reg', '{"approximation": "nystrom", "components": 10}');});
like($n, qr/kernel_model_train: fit: passes over the training rows; basis: \d+ rows: \d+ of \d+ rows/,
	'named approximate training: the basis pass, how far');
like($n, qr/kernel_model_train: fit: passes over the training rows; statistics: m = 10, \d+ rows: \d+ of \d+ rows/,
	'... the statistics pass, how far');
like($n, qr/kernel_model_train: fit: passes over the training rows; solve: m = 10/, '... and its solve');
like($n, qr/kernel_model_train: score: pass over the usable rows/, '... the scoring pass');

# 1b. how far each long step is (issue 30, friction 6): the blocked
#     Cholesky by panel k of K, the kernel matrix by rows done of n, the
#     leave-one-out leverages by columns, the tridiagonal reduction and its
#     back-transformation by panels and groups, each counting up.
sub counts
{
	my ($text, $re) = @_;
	return map { [ $_ =~ $re ] } grep { $_ =~ $re } split /\n/, $text;
}

sub counts_up
{
	my ($name, @c) = @_;
	my @bad = grep { $c[$_][0] <= $c[$_ - 1][0] || $c[$_][1] != $c[0][1] } 1 .. $#c;
	ok(@c >= 2 && !@bad && $c[-1][0] <= $c[-1][1],
		"$name: " . join(', ', map { "$_->[0] of $_->[1]" } @c[0 .. ($#c < 3 ? $#c : 3)]) . ', ...');
}

$n = notices($all, q{SELECT kernel_train(f, y) IS NOT NULL FROM big;});
my @panels = counts($n, qr/ridge: Cholesky factorization of 3000 x 3000: Cholesky panel (\d+) of (\d+)/);
counts_up('ridge on 3000 rows: Cholesky panel k of K, in order', @panels);
is(scalar(@panels), 11, '... each of the 12 panels of 256 but the last, which leaves nothing');
my @rows = counts($n, qr/ridge: kernel matrix of 3000 rows: kernel rows (\d+) of (\d+)/);
counts_up('... the kernel matrix: rows done of 3000', @rows);
is($rows[-1][0], 3000, '... up to the last row') if @rows;

$n = notices($all, q{SELECT kernel_train(f, y, '{"lambda": [0.1, 1]}') IS NOT NULL FROM big;});
counts_up('loo by Cholesky: the leverages, columns done of 3000',
	counts($n, qr/lambda 1 of 2 \(0\.1\): leverages: columns (\d+) of (\d+)/));

$n = notices($all, q{SELECT kernel_train(f, y, '{"lambda": [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10]}') IS NOT NULL
	FROM (SELECT * FROM big LIMIT 1000) s;});
counts_up('loo by the tridiagonal form: its panels',
	counts($n, qr/tridiagonal reduction of 1000 x 1000: tridiagonal panel (\d+) of (\d+)/));
counts_up('... and the back-transformation, group by group',
	counts($n, qr/back-transformation of 1000 x 1000: reflector group (\d+) of (\d+)/));

# A large svm (columns of 8000 rows) reports SMO iterations as they come,
# not only every 1024th: its first 1024 can take long.
$n = notices("SET kernel_ml.progress = on; SET kernel_ml.progress_interval = 50;",
	q{SELECT kernel_train(f, l, '{"lambda": 0.00001}') IS NOT NULL FROM big_cls;});
my @iters = counts($n, qr/svm: 8000 rows: SMO iteration (\d+) of at most (\d+), KKT violation [0-9.e+-]+ \(tol 0\.001\)/);
ok(scalar(grep { $_->[0] % 1024 != 0 } @iters) >= 1,
	'svm on 8000 rows: SMO iterations between the 1024ths (' . join(', ', map { $_->[0] } @iters) . ')');

# 2. silence
is(notices('SET kernel_ml.progress = off; SET kernel_ml.progress_interval = 0;',
		q{SELECT kernel_train(f, y) IS NOT NULL FROM reg;}),
	'', 'kernel_ml.progress off: no line');
is(notices("SET kernel_ml.progress = on; SET kernel_ml.progress_interval = '1h';",
		q{SELECT kernel_train(f, y) IS NOT NULL FROM big;}),
	'', 'a training shorter than the interval: no line');

# 3. the rate
my $t0 = time;
$n = notices("SET kernel_ml.progress = on; SET kernel_ml.progress_interval = 200;",
	q{SELECT kernel_train(f, y, '{"lambda": [0.01, 0.1]}') IS NOT NULL FROM big;});
my $elapsed = time - $t0;
my @lines = split /\n/, $n;
my @times = map { /\((\d+\.\d) s\)$/ ? $1 : () } @lines;
cmp_ok(scalar(@lines), '>=', 1, "a training of ${elapsed}s with an interval of 200 ms reports");
is(scalar(@times), scalar(@lines), '... every line with its time');
cmp_ok(scalar(@lines), '<=', int($elapsed / 0.2) + 1, '... at most once per interval');
cmp_ok($times[0], '>=', 0.2, '... the first one interval into the statement') if @times;
my $close = grep { $times[$_] - $times[$_ - 1] < 0.1 } 1 .. $#times;
is($close, 0, '... and each at least an interval after the one before');

# 4. after an error
$n = notices($all, q{SELECT kernel_train(f, y, '{"lambda": 0, "kernel": "linear"}') FROM (SELECT ARRAY[1.0, 1.0]::float8[] AS f, 1.0::float8 AS y FROM generate_series(1, 5)) s;});
like($n, qr/kernel_train: ridge: /, 'a failing training reports before it fails');
$n = notices($all, q{SELECT kernel_model_info(kernel_train(f, y, '{"method": "lms", "max_iter": 1}'))->>'iterations' FROM reg;});
unlike($n, qr/ridge/, 'the next statement shows nothing of it');

# 5. no line says the same as the one before it: a heartbeat that has no
#    news (a long BLAS call) stays silent
is(scalar(@repeats), 0, 'no line repeats the one before it')
  or diag(join("\n", @repeats[0 .. ($#repeats < 5 ? $#repeats : 5)]));

$node->stop;
done_testing();
