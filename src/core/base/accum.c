/*
 * accum.c - fixed-size additive aggregate states (accum.h).
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "accum.h"

size_t
km_accum_payload_doubles(km_accum_kind kind, uint32_t dim)
{
	size_t		m = dim;

	if (dim == 0)
		return 0;
	switch (kind)
	{
		case KM_ACCUM_GRAM:
			/* m (m + 1) / 2 + 2 m + 2; m < 2^32, so no overflow in 64 bits */
			if (SIZE_MAX / 8 / (m + 1) < m)
				return 0;
			return m * (m + 1) / 2 + 2 * m + 2;
	}
	return 0;					/* not a kind: the caller validates */
}

size_t
km_accum_bytes(km_accum_kind kind, uint32_t dim)
{
	size_t		nd = km_accum_payload_doubles(kind, dim);

	if (nd == 0 || nd > (SIZE_MAX - sizeof(km_accum)) / sizeof(double))
		return 0;
	return sizeof(km_accum) + nd * sizeof(double);
}

void
km_accum_init(km_accum *acc, km_accum_kind kind, uint32_t dim)
{
	acc->magic = KM_ACCUM_MAGIC;
	acc->version = KM_ACCUM_VERSION;
	acc->kind = (uint16_t) kind;
	acc->dim = dim;
	acc->rows = 0;
	acc->ndoubles = km_accum_payload_doubles(kind, dim);
	memset(acc->data, 0, acc->ndoubles * sizeof(double));
}

km_status
km_accum_validate(const km_accum *acc, size_t len, km_error *err)
{
	size_t		want;

	if (len < sizeof(km_accum))
		return km_fail(err, KM_ERR_FORMAT, "aggregate state is truncated",
					   "The state has %zu bytes; its header alone has %zu.",
					   len, sizeof(km_accum));
	if (acc->magic != KM_ACCUM_MAGIC)
		return km_fail(err, KM_ERR_FORMAT, "aggregate state is not a kernel_ml state",
					   "Its first bytes are not the kernel_ml state magic number.");
	if (acc->version != KM_ACCUM_VERSION)
		return km_fail(err, KM_ERR_VERSION, "aggregate state has an unknown version",
					   "The state has version %u; this build reads version %d.",
					   (unsigned) acc->version, KM_ACCUM_VERSION);
	want = km_accum_bytes((km_accum_kind) acc->kind, acc->dim);
	if (want == 0 || acc->ndoubles != km_accum_payload_doubles((km_accum_kind) acc->kind, acc->dim))
		return km_fail(err, KM_ERR_FORMAT, "aggregate state has an invalid shape",
					   "The state has kind %u, dimension %u and %llu payload values.",
					   (unsigned) acc->kind, (unsigned) acc->dim,
					   (unsigned long long) acc->ndoubles);
	if (len != want)
		return km_fail(err, KM_ERR_FORMAT, "aggregate state has the wrong length",
					   "A state of dimension %u has %zu bytes; this one has %zu.",
					   (unsigned) acc->dim, want, len);
	if (acc->rows < 0)
		return km_fail(err, KM_ERR_FORMAT, "aggregate state has a negative row count",
					   "The state counts %lld rows.", (long long) acc->rows);
	for (size_t i = 0; i < acc->ndoubles; i++)
		if (!isfinite(acc->data[i]))
			return km_fail(err, KM_ERR_OVERFLOW, "aggregate state is not finite",
						   "Value %zu of the state is not a finite number.", i);
	return KM_OK;
}

km_accum_gram
km_accum_gram_parts(km_accum *acc)
{
	size_t		m = acc->dim;
	km_accum_gram g;

	g.zz = acc->data;
	g.zy = g.zz + m * (m + 1) / 2;
	g.zsum = g.zy + m;
	g.ysum = g.zsum + m;
	g.yss = g.ysum + 1;
	return g;
}

size_t
km_accum_gram_scratch_doubles(uint32_t dim)
{
	size_t		m = dim;

	if (m != 0 && m > SIZE_MAX / sizeof(double) / m)
		return 0;
	return m * m;
}

void
km_packed_syrk_add(double *packed, const double *Z, size_t m, size_t rows,
				   double *scratch, km_interrupt_fn interrupt)
{
	double		per_col = 2.0 * (double) rows * (double) m;

	if (rows == 0)
		return;
	for (size_t j0 = 0; j0 < m;)
	{
		size_t		w = per_col * (double) (m - j0) <= KM_PIECE_FLOPS ? m - j0 :
			(size_t) fmax(1.0, KM_PIECE_FLOPS / per_col);
		size_t		j1 = j0 + w < m ? j0 + w : m;

		/* Z row-major rows x m is column-major m x rows: Z^T Z = A A^T */
		if (j0 == 0 && j1 == m)
			cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, (int) m, (int) rows,
						1.0, Z, (int) m, 0.0, scratch, (int) m);
		else
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) j1, (int) (j1 - j0),
						(int) rows, 1.0, Z, (int) m, Z + j0, (int) m, 0.0,
						scratch + j0 * m, (int) m);
		for (size_t j = j0; j < j1; j++)
		{
			double	   *col = packed + j * (j + 1) / 2;

			for (size_t i = 0; i <= j; i++)
				col[i] += scratch[i + j * m];
		}
		j0 = j1;
		km_check_interrupts(interrupt);
	}
}

void
km_accum_gram_add(km_accum *acc, const double *Z, const double *y,
				  size_t rows, double *scratch, km_interrupt_fn interrupt)
{
	size_t		m = acc->dim;
	km_accum_gram g = km_accum_gram_parts(acc);

	if (rows == 0)
		return;
	km_packed_syrk_add(g.zz, Z, m, rows, scratch, interrupt);
	cblas_dgemv(CblasColMajor, CblasNoTrans, (int) m, (int) rows, 1.0, Z,
				(int) m, y, 1, 1.0, g.zy, 1);
	for (size_t r = 0; r < rows; r++)
	{
		const double *z = Z + r * m;

		for (size_t i = 0; i < m; i++)
			g.zsum[i] += z[i];
		*g.ysum += y[r];
		*g.yss += y[r] * y[r];
	}
	acc->rows += (int64_t) rows;
}

km_status
km_accum_combine(km_accum *a, const km_accum *b, km_error *err)
{
	if (a->kind != b->kind || a->dim != b->dim || a->ndoubles != b->ndoubles)
		return km_fail(err, KM_ERR_INVALID, "aggregate states do not match",
					   "One state has kind %u and dimension %u, the other kind %u and dimension %u.",
					   (unsigned) a->kind, (unsigned) a->dim,
					   (unsigned) b->kind, (unsigned) b->dim);
	for (size_t i = 0; i < a->ndoubles; i++)
		a->data[i] += b->data[i];
	a->rows += b->rows;
	return KM_OK;
}
