# Scheduled retraining with pg_cron: a job runs kernel_model_retrain for
# three models (deploy "always", "if_better", "never") after the training
# table changed; each gets a new version, deployed as its policy says.
#
# Uses PostgreSQL::Test::Cluster (its own cluster, started with
# shared_preload_libraries = 'pg_cron' and cron.database_name = 'postgres')
# and the installed extension; run it with test/tap.sh.  pg_cron 1.4
# schedules by the minute (no "N seconds" schedules before 1.5), so instead
# of waiting up to a minute for the next boundary the job is scheduled
# '@reboot' and the server restarted: pg_cron's launcher runs it at once, in
# a background worker as the job's owner, as it runs a '0 3 * * *' job.  The
# test polls cron.job_run_details every 0.1 s for at most 150 seconds.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $table = "kml_cron_data_$$";
my $job = "kml_cron_job_$$";
my %models = map { $_ => "kml_cron_${_}_$$" } qw(always if_better never);

my $bindir = `pg_config --bindir`;
chomp $bindir;
(my $install = $bindir) =~ s{/bin$}{};

# The assert-enabled debug server (test/debug_server.sh) has no pg_cron:
# Debian's pg-cron source package could not be downloaded to build one.
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
plan skip_all => "pg_cron is not installed for this server ($pkglibdir)"
  unless -e "$pkglibdir/pg_cron.so";

my $node = PostgreSQL::Test::Cluster->new('pg_cron', install_path => $install);
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
});
$node->start;

# One query's result in database postgres; dies on error.
sub value
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

is(value('SHOW shared_preload_libraries') . '|' . value(q{SELECT current_setting('cron.database_name', true)}),
	'pg_cron|postgres', 'pg_cron is preloaded in database postgres');
my $had_cron = value(q{SELECT count(*) FROM pg_extension WHERE extname = 'pg_cron'});
value('CREATE EXTENSION IF NOT EXISTS pg_cron');
value('CREATE EXTENSION IF NOT EXISTS kernel_ml');
diag('pg_cron ' . value(q{SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'}));

value("DROP TABLE IF EXISTS $table");
value("CREATE TABLE $table AS SELECT i AS id, ARRAY[sin(i), cos(0.7 * i)]::float8[] AS f, "
	  . "sin(i) + cos(0.7 * i) AS y FROM generate_series(1, 300) i");
for my $policy (sort keys %models)
{
	my $out = value("SELECT version, deployed FROM kernel_model_train('$models{$policy}', "
		  . "'SELECT f, y FROM $table', '{\"lambda\": 0.01, \"seed\": 5, \"deploy\": \"$policy\"}')");
	# "never" does not deploy even the first version; deploy it by hand
	if ($policy eq 'never')
	{
		is($out, '1|f', "model with deploy \"never\": version 1 not deployed");
		value("SELECT kernel_model_deploy('$models{never}', 1)");
	}
	else
	{
		is($out, '1|t', "model with deploy \"$policy\": version 1 deployed");
	}
}

# The relation changes: version 1 no longer fits, so a retrained version is
# better on the new hold-out rows.
value("UPDATE $table SET y = 3 * sin(2 * id) - f[2]");

my $names = join(', ', map { "'$_'" } sort values %models);
my $command = "SELECT kernel_model_retrain(n) FROM unnest(ARRAY[$names]) AS n";
my $jobid = value("SELECT cron.schedule('$job', '\@reboot', \$\$$command\$\$)");
like($jobid, qr/^\d+$/, "scheduled job $jobid: $command");
$node->restart;

my $start = time();
my $status = '';
while (time() - $start < 150)
{
	$status = value("SELECT coalesce(string_agg(status || ': ' || coalesce(return_message, ''), '; '), '') "
		  . "FROM cron.job_run_details WHERE jobid = $jobid AND status IN ('succeeded', 'failed')");
	last if $status ne '';
	sleep(0.1);
}
diag(sprintf('the job finished after %.0f s: %s', time() - $start, $status));
like($status, qr/^succeeded/, 'the cron job ran and succeeded');
value("SELECT cron.unschedule($jobid)");

for my $policy (sort keys %models)
{
	my $name = $models{$policy};
	is(value("SELECT max(version) FROM kernel_models WHERE name = '$name'"), '2',
		"\"$policy\": the job trained version 2");
}
is(value("SELECT version FROM kernel_models WHERE name = '$models{always}' AND deployed"), '2',
	'"always": version 2 is deployed');
is(value("SELECT version FROM kernel_models WHERE name = '$models{never}' AND deployed"), '1',
	'"never": version 1 stays deployed');
my $cmp = value("SELECT ((metrics->'deploy'->>'new_holdout_rmse')::float8 < (metrics->'deploy'->>'previous_holdout_rmse')::float8) "
	  . "|| '|' || deployed || '|' || (metrics->'deploy'->>'previous_version') "
	  . "FROM kernel_models WHERE name = '$models{if_better}' AND version = 2");
is($cmp, 'true|true|1', '"if_better": version 2 scored better than version 1 on the new hold-out rows and was deployed');
is(value("SELECT version FROM kernel_models WHERE name = '$models{if_better}' AND deployed"), '2',
	'"if_better": version 2 is deployed');

# rollback, as the README shows it
value("SELECT kernel_model_deploy('$models{if_better}', 1)");
is(value("SELECT deployed_version FROM kernel_models_overview WHERE name = '$models{if_better}'"), '1',
	'kernel_model_deploy rolls back to version 1');

for my $name (values %models)
{
	value("SELECT kernel_model_drop('$name')");
}
value("DROP TABLE $table");
value('DROP EXTENSION pg_cron') if $had_cron eq '0';
pass('cleaned up');

$node->stop;
done_testing();
