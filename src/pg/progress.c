/*
 * progress.c - kernel_ml.progress as NOTICEs, rate-limited by
 * kernel_ml.progress_interval (see pgprogress.h).
 *
 * Why NOTICEs and not pg_stat_progress_*: PostgreSQL 15's progress
 * reporting (pgstat_progress_start_command) takes a ProgressCommandType,
 * a closed enum of its own commands (VACUUM, ANALYZE, CLUSTER, CREATE
 * INDEX, BASEBACKUP, COPY) with no value for extensions, and
 * pg_stat_get_progress_info() returns only the backends running the
 * command named.  PROGRESS_COMMAND_INVALID is what every idle backend
 * reports, so nothing can select it; borrowing another command's value
 * would show a training as a COPY or an index build in that command's view
 * and overwrite the counters of a real one the training runs inside.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/timestamp.h"

#include "pgprogress.h"
#include "pgutil.h"

bool		km_progress = false;
int			km_progress_interval_ms = 1000;

static int	depth;				/* trainings begun and not ended */
static const char *what_name = "kernel_ml";	/* the outermost's name */
static TimestampTz statement_start;	/* of the statement last reported in */
static TimestampTz last_time;	/* the last line, or the statement's start */

/*
 * The clock runs from the start of the statement (the top-level one: SPI
 * and parallel workers share it), so that the first line comes one interval
 * into the statement, whatever part of it trains.
 */
static TimestampTz
progress_now(void)
{
	TimestampTz stmt = GetCurrentStatementStartTimestamp();

	if (stmt != statement_start)
	{
		statement_start = stmt;
		last_time = stmt;
		if (depth == 0)
			km_progress_reset();
	}
	return GetCurrentTimestamp();
}

static bool
progress_due(void)
{
	if (!km_progress)
		return false;
	return progress_now() - last_time >= (TimestampTz) km_progress_interval_ms * 1000;
}

static void
progress_emit(const char *line)
{
	last_time = progress_now();
	ereport(NOTICE,
			(errmsg("%s: %s (%.1f s)", what_name, line,
					(double) (last_time - statement_start) / 1e6)));
}

/* Seconds, for the core's estimates of the time left. */
static double
progress_clock(void)
{
	return (double) GetCurrentTimestamp() / 1e6;
}

void
km_progress_begin(const char *what)
{
	if (depth++ > 0)
		return;
	what_name = what;
	km_progress_reset();
}

void
km_progress_end(void)
{
	if (depth > 0 && --depth == 0)
	{
		what_name = "kernel_ml";
		km_progress_reset();
	}
}

/* An error leaves begin without its end: forget every training then. */
static void
progress_xact_callback(XactEvent event, void *arg)
{
	if (depth > 0)
	{
		depth = 0;
		what_name = "kernel_ml";
		km_progress_reset();
	}
}

static void
progress_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		progress_xact_callback(XACT_EVENT_ABORT, arg);
}

void
km_progress_init(void)
{
	km_progress_set_hooks(progress_due, progress_emit);
	km_progress_set_clock(progress_clock);
	RegisterXactCallback(progress_xact_callback, NULL);
	RegisterSubXactCallback(progress_subxact_callback, NULL);
}
