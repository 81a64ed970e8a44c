/*
 * progress.c - progress reports of long training (core, no PostgreSQL
 * headers): the three levels of the current line and the glue's hooks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "progress.h"

#define LEVEL_BYTES 160

#define LINE_BYTES (3 * LEVEL_BYTES + 8)

static km_progress_due_fn hook_due;
static km_progress_emit_fn hook_emit;
static km_progress_clock_fn hook_clock;

/* the levels: stage, phase, step ("" when unset) */
static char levels[3][LEVEL_BYTES];

/* the last line emitted ("" after a reset), and when the work began */
static char last_line[LINE_BYTES];
static double work_start;

void
km_progress_set_hooks(km_progress_due_fn due, km_progress_emit_fn emit)
{
	hook_due = due;
	hook_emit = emit;
}

void
km_progress_set_clock(km_progress_clock_fn now)
{
	hook_clock = now;
}

void
km_progress_reset(void)
{
	for (int i = 0; i < 3; i++)
		levels[i][0] = '\0';
	last_line[0] = '\0';
}

void
km_progress_line(char *buf, int size)
{
	const char *sep = "";
	int			len = 0;

	if (size <= 0)
		return;
	buf[0] = '\0';
	for (int i = 0; i < 3 && len < size; i++)
	{
		if (levels[i][0] == '\0')
			continue;
		len += snprintf(buf + len, (size_t) (size - len), "%s%s", sep, levels[i]);
		sep = i == 0 ? "; " : ": ";
	}
}

/* Emit the current line, unless it is empty or the one emitted last. */
static void
report(void)
{
	char		line[LINE_BYTES];

	km_progress_line(line, (int) sizeof(line));
	if (line[0] == '\0' || strcmp(line, last_line) == 0)
		return;
	memcpy(last_line, line, sizeof(line));
	hook_emit(line);
}

/* Set level (clearing those below) from fmt. */
static void set_level(int level, const char *fmt, va_list ap)
			__attribute__((format(printf, 2, 0)));

static void
set_level(int level, const char *fmt, va_list ap)
{
	if (fmt == NULL)
		levels[level][0] = '\0';
	else
		vsnprintf(levels[level], LEVEL_BYTES, fmt, ap);
	for (int i = level + 1; i < 3; i++)
		levels[i][0] = '\0';
	if (level <= 1 && hook_clock != NULL)
		work_start = hook_clock();
}

/* Set a stage or a phase, and report it if a line is due. */
static void set_and_report(int level, const char *fmt, va_list ap)
			__attribute__((format(printf, 2, 0)));

static void
set_and_report(int level, const char *fmt, va_list ap)
{
	set_level(level, fmt, ap);
	if (fmt != NULL && hook_due())
		report();
}

void
km_progress_stage(const char *fmt,...)
{
	va_list		ap;

	if (hook_due == NULL)
		return;
	va_start(ap, fmt);
	set_and_report(0, fmt, ap);
	va_end(ap);
}

void
km_progress_phase(const char *fmt,...)
{
	va_list		ap;

	if (hook_due == NULL)
		return;
	va_start(ap, fmt);
	set_and_report(1, fmt, ap);
	va_end(ap);
}

void
km_progress_step(const char *fmt,...)
{
	va_list		ap;

	/* a step is formatted only when it will be reported: it may be frequent */
	if (hook_due == NULL || !hook_due())
		return;
	va_start(ap, fmt);
	set_level(2, fmt, ap);
	va_end(ap);
	report();
}

/* ", about N s left" (or min, h) after the step, when it can be told. */
static void
append_estimate(char *step, double done)
{
	double		spent;
	double		left;
	size_t		len = strlen(step);

	if (hook_clock == NULL || !(done > 0.0 && done < 1.0))
		return;
	spent = hook_clock() - work_start;
	/* too early to tell: under a second into the work, or 1 % of it */
	if (!(spent >= 1.0) || done < 0.01)
		return;
	left = spent * (1.0 - done) / done;
	if (left < 1.0)
		snprintf(step + len, LEVEL_BYTES - len, ", under 1 s left");
	else if (left < 90.0)
		snprintf(step + len, LEVEL_BYTES - len, ", about %.0f s left", left);
	else if (left < 5400.0)
		snprintf(step + len, LEVEL_BYTES - len, ", about %.0f min left", left / 60.0);
	else
		snprintf(step + len, LEVEL_BYTES - len, ", about %.1f h left", left / 3600.0);
}

void
km_progress_work_begin(void)
{
	if (hook_due != NULL && hook_clock != NULL)
		work_start = hook_clock();
}

void
km_progress_fraction(double done, const char *fmt,...)
{
	va_list		ap;

	if (hook_due == NULL || !hook_due())
		return;
	va_start(ap, fmt);
	vsnprintf(levels[2], LEVEL_BYTES, fmt, ap);
	va_end(ap);
	append_estimate(levels[2], done);
	report();
}

void
km_progress_heartbeat(void)
{
	if (hook_due == NULL || levels[1][0] == '\0' || !hook_due())
		return;
	report();
}
