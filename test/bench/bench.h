/*
 * bench.h - what the C benchmarks share: wall and CPU clocks, the longest
 * gap between two interrupt checks (gap_check is the core's interrupt
 * callback), and an allocation that exits when memory runs out.  Each
 * benchmark is one translation unit, so the state is static here.
 */
#ifndef KM_BENCH_H
#define KM_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double gap_last;
static double gap_max;
static void *gap_where;			/* the check that ended the longest gap */
static double gap_cpu_last;
static double gap_cpu_max;		/* the same in process CPU time: free of the machine's load */

static inline double
clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static inline double
now(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

static inline double
cpu_now(void)
{
	return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/* Start measuring gaps between interrupt checks. */
static inline void
gap_start(void)
{
	gap_last = now();
	gap_max = 0.0;
	gap_where = NULL;
	gap_cpu_last = cpu_now();
	gap_cpu_max = 0.0;
}

/* The interrupt callback handed to the core. */
static void __attribute__((unused, noinline))
gap_check(void)
{
	double		t = now();
	double		c = cpu_now();

	if (c - gap_cpu_last > gap_cpu_max)
		gap_cpu_max = c - gap_cpu_last;
	gap_cpu_last = c;
	if (t - gap_last > gap_max)
	{
		gap_max = t - gap_last;
		gap_where = __builtin_return_address(0);
	}
	gap_last = t;
}

static inline void *
xmalloc(size_t bytes)
{
	void	   *p = malloc(bytes ? bytes : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
		exit(1);
	}
	return p;
}

/*
 * The rows a Python driver wrote for a benchmark: tot x d doubles of X, then
 * tot doubles of y (training rows first, then held-out ones); exits on a
 * short file.
 */
static inline void
read_rows(const char *path, size_t tot, int d, double **X, double **y)
{
	FILE	   *f = fopen(path, "rb");

	*X = xmalloc(tot * d * sizeof(double));
	*y = xmalloc(tot * sizeof(double));
	if (!f || fread(*X, sizeof(double), tot * d, f) != tot * d ||
		fread(*y, sizeof(double), tot, f) != tot)
	{
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
}

#endif							/* KM_BENCH_H */
