/*
 * test_progress.c - the progress module (src/core/base/progress.c) with a fake
 * clock and hooks that keep every line: no line twice in a row, steps that
 * say how far, and the estimate of the time left.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "solve.h"
#include "unit.h"

#define MAX_LINES 64

static char lines[MAX_LINES][512];
static int	n_lines;
static double fake_now;

static bool
always_due(void)
{
	return true;
}

static void
keep_line(const char *line)
{
	if (n_lines < MAX_LINES)
		snprintf(lines[n_lines], sizeof(lines[0]), "%s", line);
	n_lines++;
}

static double
fake_clock(void)
{
	return fake_now;
}

static void
hooks_on(void)
{
	n_lines = 0;
	fake_now = 100.0;
	km_progress_set_hooks(always_due, keep_line);
	km_progress_set_clock(fake_clock);
	km_progress_reset();
}

static void
hooks_off(void)
{
	km_progress_set_hooks(NULL, NULL);
	km_progress_set_clock(NULL);
	km_progress_reset();
}

/* The heartbeat of a long BLAS step no longer repeats its phase's line. */
void
test_progress_no_repeated_line(void)
{
	hooks_on();
	km_progress_phase("ridge: Cholesky factorization of %d x %d", 12000, 12000);
	for (int i = 0; i < 30; i++)
		km_progress_heartbeat();
	CHECK(n_lines == 1, "%d lines for one phase and 30 heartbeats", n_lines);
	km_progress_step("iteration %d", 1);
	km_progress_heartbeat();
	km_progress_step("iteration %d", 1);
	km_progress_step("iteration %d", 2);
	CHECK(n_lines == 3, "%d lines, want 3", n_lines);
	CHECK(strcmp(lines[1], "ridge: Cholesky factorization of 12000 x 12000: iteration 1") == 0,
		  "\"%s\"", lines[1]);
	for (int i = 1; i < n_lines && i < MAX_LINES; i++)
		CHECK(strcmp(lines[i], lines[i - 1]) != 0, "line %d repeats \"%s\"", i, lines[i]);
	/* a new training may say the same again */
	km_progress_reset();
	km_progress_phase("ridge: Cholesky factorization of %d x %d", 12000, 12000);
	CHECK(n_lines == 4, "%d lines after a reset, want 4", n_lines);
	hooks_off();
}

/* The time left: spent * (1 - done) / done, once a second and 1 % are past. */
void
test_progress_estimate(void)
{
	hooks_on();
	km_progress_phase("phase");
	km_progress_work_begin();
	fake_now += 0.5;
	km_progress_fraction(0.5, "half");
	CHECK(strcmp(lines[n_lines - 1], "phase: half") == 0, "under a second: \"%s\"",
		  lines[n_lines - 1]);
	fake_now += 9.5;			/* 10 s into the work */
	km_progress_fraction(0.25, "a quarter");
	CHECK(strcmp(lines[n_lines - 1], "phase: a quarter, about 30 s left") == 0, "\"%s\"",
		  lines[n_lines - 1]);
	km_progress_fraction(0.005, "hardly begun");
	CHECK(strcmp(lines[n_lines - 1], "phase: hardly begun") == 0, "\"%s\"", lines[n_lines - 1]);
	km_progress_fraction(0.05, "5 %%");
	CHECK(strcmp(lines[n_lines - 1], "phase: 5 %, about 3 min left") == 0, "\"%s\"",
		  lines[n_lines - 1]);
	km_progress_fraction(0.95, "nearly");
	CHECK(strcmp(lines[n_lines - 1], "phase: nearly, under 1 s left") == 0, "\"%s\"",
		  lines[n_lines - 1]);
	km_progress_fraction(1.0, "done");
	CHECK(strcmp(lines[n_lines - 1], "phase: done") == 0, "\"%s\"", lines[n_lines - 1]);
	/* the work begins again: the time is counted from there */
	fake_now += 100.0;
	km_progress_work_begin();
	fake_now += 2.0;
	km_progress_fraction(0.5, "again");
	CHECK(strcmp(lines[n_lines - 1], "phase: again, about 2 s left") == 0, "\"%s\"",
		  lines[n_lines - 1]);
	/* without a clock, no estimate */
	km_progress_set_clock(NULL);
	km_progress_fraction(0.5, "no clock");
	CHECK(strcmp(lines[n_lines - 1], "phase: no clock") == 0, "\"%s\"", lines[n_lines - 1]);
	hooks_off();
}

/* The blocked Cholesky says which panel it is at: 1, 2, ... of K. */
void
test_progress_cholesky_panels(void)
{
	size_t		n = 1000;
	double	   *A = calloc(n * n, sizeof(double));
	int			next = 1;

	for (size_t i = 0; i < n; i++)
		A[i + i * n] = 2.0;
	for (size_t i = 1; i < n; i++)
		A[i + (i - 1) * n] = -0.5;
	hooks_on();
	km_progress_phase("chol");
	CHECK(km_cholesky(A, n, n, NULL) == 0, "not positive definite");
	/* 1000 rows in panels of 256: 4, the last one not reported (nothing left) */
	CHECK(n_lines == 4, "%d lines, want the phase and panels 1 to 3", n_lines);
	for (int i = 1; i < n_lines && i < MAX_LINES; i++)
	{
		int			k = 0,
					of = 0;

		CHECK(sscanf(lines[i], "chol: Cholesky panel %d of %d", &k, &of) == 2 &&
			  k == next && of == 4, "line %d: \"%s\"", i, lines[i]);
		next++;
	}
	hooks_off();
	free(A);
}
