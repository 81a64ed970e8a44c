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

int
km_cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}
