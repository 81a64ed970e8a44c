/*
 * core.c - error reporting for the numerical core.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

km_status
km_fail(km_error *err, km_status status, const char *message,
		const char *detailfmt,...)
{
	va_list		ap;

	err->status = status;
	err->hint[0] = '\0';
	snprintf(err->message, sizeof(err->message), "%s", message);
	va_start(ap, detailfmt);
	vsnprintf(err->detail, sizeof(err->detail), detailfmt, ap);
	va_end(ap);
	return status;
}

void
km_zero_pieces(void *p, size_t bytes, km_interrupt_fn fn)
{
	const size_t piece = (size_t) 64 << 20;

	for (size_t at = 0; at < bytes; at += piece)
	{
		km_check_interrupts(fn);
		memset((char *) p + at, 0, bytes - at < piece ? bytes - at : piece);
	}
}

int
km_cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

bool
km_all_finite(const double *v, size_t count)
{
	/*
	 * A double is not finite when its exponent bits are all ones.  An
	 * integer test vectorises without -ffast-math and cannot be optimised
	 * away, unlike isfinite() under it.
	 */
	const uint64_t exponent = UINT64_C(0x7ff0000000000000);
	uint64_t	bad = 0;

	for (size_t i = 0; i < count; i++)
	{
		uint64_t	bits;

		memcpy(&bits, &v[i], sizeof(bits));
		bad |= (uint64_t) ((bits & exponent) == exponent);
	}
	return bad == 0;
}

size_t
km_first_nonfinite_row(const double *Z, size_t rows, size_t m)
{
	for (size_t i = 0; i < rows; i++)
		if (!km_all_finite(Z + i * m, m))
			return i;
	return rows;
}
