/*
 * unit.h - a minimal harness for the core unit tests (no server needed).
 *
 * Each test is a void function; CHECK records a failure with its location
 * and goes on.  unit_main.c runs every test listed in UNIT_TESTS and ends
 * with the line "N passed, N failed".
 */
#ifndef KM_UNIT_H
#define KM_UNIT_H

#include <stddef.h>
#include <stdio.h>

extern int	unit_failures;		/* failed CHECKs in the current test */

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			unit_failures++; \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol) \
	do { \
		double ca_ = (a), cb_ = (b); \
		double sc_ = fabs(cb_) > 1.0 ? fabs(cb_) : 1.0; \
		CHECK(fabs(ca_ - cb_) <= (tol) * sc_, "%.17g vs %.17g (tol %g)", ca_, cb_, (double) (tol)); \
	} while (0)

/*
 * Reproducible test data: xorshift64 values uniform in [-0.5, 0.5), one at
 * a time from a state, or a malloc'd vector of len from a seed.
 */
double		unit_urand(unsigned long long *state);
double	   *unit_rand_vec(size_t len, unsigned long long seed);

/*
 * A malloc'd copy of exactly len bytes, so that AddressSanitizer reports a
 * decoder that reads one byte past what it was given.
 */
unsigned char *unit_copy_bytes(const unsigned char *src, size_t len);

struct km_kernel;

/* A malloc'd full symmetric Gram matrix (column-major) of n rows of X (n x d). */
double	   *unit_full_gram(const struct km_kernel *k, const double *X, size_t n, int d);

/* max |a - b| / max |b| over n values. */
double		unit_rel_diff(const double *a, const double *b, size_t n);

#endif
