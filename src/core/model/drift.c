/*
 * drift.c - the kernel two-sample test of drift.h: a model's basis cut to
 * J features, the sums of a side's rows, the reference bytes, the
 * statistic and its chi-square p-value.
 */
#include "drift.h"

#include <math.h>
#include <string.h>

#include "crc32c.h"
#include "kernels.h"
#include "le_bytes.h"

size_t
km_drift_doubles(uint32_t d, uint32_t J)
{
	return 2 * (size_t) d + (size_t) J * d + 2 * (size_t) J + (size_t) J * J;
}

size_t
km_drift_scratch_doubles(uint32_t d, uint32_t J)
{
	return (size_t) d + J;
}

static void
point_storage(km_drift *r, double *storage)
{
	size_t		d = r->d;
	size_t		J = r->J;

	r->mean = storage;
	r->scale = r->mean + d;
	r->V = r->scale + d;
	r->b = r->V + J * d;
	r->sum = r->b + J;
	r->cross = r->sum + J;
}

uint32_t
km_drift_features_of(const km_model *m)
{
	uint32_t	rows = m->n_train;

	return rows < KM_DRIFT_MAX_J ? rows : KM_DRIFT_MAX_J;
}

km_status
km_drift_from_model(const km_model *m, km_drift *r, double *storage, km_error *err)
{
	uint32_t	J = km_drift_features_of(m);
	uint32_t	d = m->n_features;
	uint32_t	rows = m->n_train;

	if (J == 0 || (m->X == NULL && m->rff_W == NULL))
		return km_fail(err, KM_ERR_INVALID, "model has no basis for a drift test",
					   "The model keeps neither training rows, centres nor random features.");
	memset(r, 0, sizeof(*r));
	r->kind = m->X != NULL ? KM_DRIFT_LOCATIONS : KM_DRIFT_FOURIER;
	r->kernel = m->kernel;
	r->J = J;
	r->d = d;
	point_storage(r, storage);
	memset(storage, 0, sizeof(double) * km_drift_doubles(d, J));
	for (uint32_t i = 0; i < d; i++)
	{
		r->mean[i] = m->mean[i];
		r->scale[i] = m->scale[i];
	}
	for (uint32_t j = 0; j < J; j++)
	{
		/* every (rows / J)-th row or feature: spread over the whole basis */
		size_t		at = (size_t) (((uint64_t) j * rows) / J);

		for (uint32_t i = 0; i < d; i++)
			r->V[(size_t) j * d + i] = r->kind == KM_DRIFT_LOCATIONS ?
				m->X[at * d + i] : m->rff_W[(size_t) i * rows + at];
		r->b[j] = r->kind == KM_DRIFT_LOCATIONS ? 0.0 : m->rff_b[at];
	}
	return KM_OK;
}

void
km_drift_copy_basis(const km_drift *src, km_drift *dst, double *storage)
{
	size_t		basis = 2 * (size_t) src->d + (size_t) src->J * src->d + src->J;

	*dst = *src;
	point_storage(dst, storage);
	memcpy(storage, src->mean, sizeof(double) * basis);
	memset(storage + basis, 0,
		   sizeof(double) * (km_drift_doubles(src->d, src->J) - basis));
	dst->n = 0;
	dst->skipped = 0;
}

void
km_drift_add(km_drift *r, const double *X, size_t n, double *scratch)
{
	size_t		d = r->d;
	size_t		J = r->J;
	double	   *x = scratch;
	double	   *z = scratch + d;

	for (size_t row = 0; row < n; row++)
	{
		const double *raw = X + row * d;

		for (size_t i = 0; i < d; i++)
			x[i] = (raw[i] - r->mean[i]) / r->scale[i];
		for (size_t j = 0; j < J; j++)
		{
			const double *v = r->V + j * d;

			if (r->kind == KM_DRIFT_LOCATIONS)
				z[j] = km_kernel_eval(&r->kernel, x, v, (int) d);
			else
			{
				double		t = r->b[j];

				for (size_t i = 0; i < d; i++)
					t += v[i] * x[i];
				z[j] = cos(t);
			}
		}
		for (size_t j = 0; j < J; j++)
		{
			r->sum[j] += z[j];
			for (size_t k = 0; k <= j; k++)
				r->cross[j * J + k] += z[j] * z[k];
		}
	}
	/* the upper triangle mirrors the lower */
	for (size_t j = 0; j < J; j++)
		for (size_t k = j + 1; k < J; k++)
			r->cross[j * J + k] = r->cross[k * J + j];
	r->n += n;
}

size_t
km_drift_encoded_size(uint32_t d, uint32_t J)
{
	return KM_DRIFT_HEADER_SIZE + sizeof(double) * km_drift_doubles(d, J) + 4;
}

void
km_drift_encode(const km_drift *r, uint8_t *buf)
{
	size_t		count = km_drift_doubles(r->d, r->J);
	size_t		size = km_drift_encoded_size(r->d, r->J);

	memset(buf, 0, KM_DRIFT_HEADER_SIZE);
	memcpy(buf, "KMDR", 4);
	buf[4] = 1;
	buf[5] = 0;
	buf[6] = (uint8_t) r->kind;
	buf[7] = (uint8_t) r->kernel.type;
	km_le_put_u32(buf + 8, r->J);
	km_le_put_u32(buf + 12, r->d);
	km_le_put_u32(buf + 16, (uint32_t) r->kernel.degree);
	km_le_put_f64(buf + 24, r->kernel.gamma);
	km_le_put_f64(buf + 32, r->kernel.coef0);
	km_le_put_u64(buf + 40, r->n);
	km_le_put_u64(buf + 48, r->skipped);
	/* the arrays are contiguous from mean on (point_storage) */
	for (size_t i = 0; i < count; i++)
		km_le_put_f64(buf + KM_DRIFT_HEADER_SIZE + 8 * i, r->mean[i]);
	km_le_put_u32(buf + size - 4, km_crc32c(buf, size - 4));
}

km_status
km_drift_peek(const uint8_t *buf, size_t len, uint32_t *d, uint32_t *J, km_error *err)
{
	if (len < KM_DRIFT_HEADER_SIZE + 4)
		return km_fail(err, KM_ERR_FORMAT, "drift reference is malformed",
					   "It has %zu bytes, fewer than the %d of a drift reference's header and checksum.",
					   len, KM_DRIFT_HEADER_SIZE + 4);
	if (memcmp(buf, "KMDR", 4) != 0)
		return km_fail(err, KM_ERR_FORMAT, "drift reference is malformed",
					   "It does not start with the drift reference's magic \"KMDR\".");
	if (buf[4] != 1 || buf[5] != 0)
		return km_fail(err, KM_ERR_VERSION, "drift reference has an unknown format",
					   "Its format version is %u.", (unsigned) buf[4] | (unsigned) buf[5] << 8);
	*J = km_le_get_u32(buf + 8);
	*d = km_le_get_u32(buf + 12);
	if (*J < 1 || *J > KM_DRIFT_MAX_J || *d < 1 || *d > (1u << 24) ||
		km_drift_encoded_size(*d, *J) != len)
		return km_fail(err, KM_ERR_FORMAT, "drift reference is malformed",
					   "It has %zu bytes, not those of %u features of %u values.",
					   len, *J, *d);
	if (km_crc32c(buf, len - 4) != km_le_get_u32(buf + len - 4))
		return km_fail(err, KM_ERR_CHECKSUM, "drift reference is corrupted",
					   "Its checksum does not match its %zu bytes.", len);
	return KM_OK;
}

km_status
km_drift_decode(const uint8_t *buf, size_t len, km_drift *r, double *storage,
				km_error *err)
{
	uint32_t	d;
	uint32_t	J;
	size_t		count;
	km_status	st = km_drift_peek(buf, len, &d, &J, err);

	if (st != KM_OK)
		return st;
	memset(r, 0, sizeof(*r));
	r->kind = (km_drift_kind) buf[6];
	r->kernel.type = (km_kernel_type) buf[7];
	r->J = J;
	r->d = d;
	r->kernel.degree = (int) km_le_get_u32(buf + 16);
	r->kernel.gamma = km_le_get_f64(buf + 24);
	r->kernel.coef0 = km_le_get_f64(buf + 32);
	r->n = km_le_get_u64(buf + 40);
	r->skipped = km_le_get_u64(buf + 48);
	if ((r->kind != KM_DRIFT_LOCATIONS && r->kind != KM_DRIFT_FOURIER) ||
		km_kernel_invalid(&r->kernel) != NULL || km_le_get_u32(buf + 20) != 0)
		return km_fail(err, KM_ERR_FORMAT, "drift reference is malformed",
					   "Its kind, kernel or reserved field is out of range.");
	point_storage(r, storage);
	count = km_drift_doubles(d, J);
	for (size_t i = 0; i < count; i++)
		storage[i] = km_le_get_f64(buf + KM_DRIFT_HEADER_SIZE + 8 * i);
	if (!km_all_finite(storage, count))
		return km_fail(err, KM_ERR_FORMAT, "drift reference is malformed",
					   "It holds a value that is not finite.");
	for (uint32_t i = 0; i < d; i++)
		if (!(r->scale[i] > 0.0))
			return km_fail(err, KM_ERR_FORMAT, "drift reference is malformed",
						   "The scale of feature %u is not positive.", i + 1);
	return KM_OK;
}

/*
 * Eigenvalues w and eigenvectors (columns of U, column-major) of the
 * symmetric J x J matrix A (destroyed), by cyclic Jacobi rotations: J is at
 * most KM_DRIFT_MAX_J, and the result does not depend on a LAPACK build.
 */
static void
jacobi_eigen(double *A, int J, double *w, double *U)
{
	for (int i = 0; i < J * J; i++)
		U[i] = 0.0;
	for (int i = 0; i < J; i++)
		U[i * J + i] = 1.0;
	for (int sweep = 0; sweep < 100; sweep++)
	{
		double		off = 0.0;
		double		diag = 0.0;

		for (int p = 0; p < J; p++)
		{
			diag += A[p * J + p] * A[p * J + p];
			for (int q = p + 1; q < J; q++)
				off += A[q * J + p] * A[q * J + p];
		}
		if (off <= 1e-32 * diag || off == 0.0)
			break;
		for (int p = 0; p < J; p++)
			for (int q = p + 1; q < J; q++)
			{
				double		apq = A[q * J + p];
				double		theta,
							t,
							c,
							s;

				if (apq == 0.0)
					continue;
				theta = (A[q * J + q] - A[p * J + p]) / (2.0 * apq);
				t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
				c = 1.0 / sqrt(t * t + 1.0);
				s = t * c;
				for (int k = 0; k < J; k++)
				{
					double		akp = A[p * J + k];
					double		akq = A[q * J + k];

					A[p * J + k] = c * akp - s * akq;
					A[q * J + k] = s * akp + c * akq;
				}
				for (int k = 0; k < J; k++)
				{
					double		apk = A[k * J + p];
					double		aqk = A[k * J + q];

					A[k * J + p] = c * apk - s * aqk;
					A[k * J + q] = s * apk + c * aqk;
				}
				for (int k = 0; k < J; k++)
				{
					double		ukp = U[p * J + k];
					double		ukq = U[q * J + k];

					U[p * J + k] = c * ukp - s * ukq;
					U[q * J + k] = s * ukp + c * ukq;
				}
			}
	}
	for (int i = 0; i < J; i++)
		w[i] = A[i * J + i];
}

/* The sample covariance of a side, over its count, added into C. */
static void
add_cov_over_n(const km_drift *r, double *C)
{
	size_t		J = r->J;
	double		n = (double) r->n;

	for (size_t j = 0; j < J; j++)
		for (size_t k = 0; k < J; k++)
		{
			double		cjk = (r->cross[j * J + k] - r->sum[j] * r->sum[k] / n) / (n - 1.0);

			C[j * J + k] += cjk / n;
		}
}

km_status
km_drift_test(const km_drift *train, const km_drift *fresh, km_drift_result *out,
			  km_error *err)
{
	int			J = (int) train->J;
	double		C[KM_DRIFT_MAX_J * KM_DRIFT_MAX_J];
	double		U[KM_DRIFT_MAX_J * KM_DRIFT_MAX_J];
	double		w[KM_DRIFT_MAX_J];
	double		delta[KM_DRIFT_MAX_J];
	double		top = 0.0;
	double		stat = 0.0;
	int			dof = 0;

	memset(out, 0, sizeof(*out));
	out->n_train = train->n;
	out->n_new = fresh->n;
	if (train->n < 2 || fresh->n < 2)
		return km_fail(err, KM_ERR_INVALID, "too few rows for a drift test",
					   "The test needs at least 2 rows a side; the training side has %llu, the new side %llu.",
					   (unsigned long long) train->n, (unsigned long long) fresh->n);
	for (int i = 0; i < J * J; i++)
		C[i] = 0.0;
	add_cov_over_n(train, C);
	add_cov_over_n(fresh, C);
	for (int j = 0; j < J; j++)
		delta[j] = train->sum[j] / (double) train->n - fresh->sum[j] / (double) fresh->n;
	jacobi_eigen(C, J, w, U);
	for (int j = 0; j < J; j++)
		if (w[j] > top)
			top = w[j];
	for (int j = 0; j < J; j++)
	{
		double		proj = 0.0;

		if (!(w[j] > KM_DRIFT_RANK_TOL * top) || top <= 0.0)
			continue;
		for (int k = 0; k < J; k++)
			proj += U[j * J + k] * delta[k];
		stat += proj * proj / w[j];
		dof++;
	}
	if (!isfinite(stat))
		return km_fail(err, KM_ERR_OVERFLOW, "drift statistic is not finite",
					   "The covariance of the features is too close to singular.");
	out->statistic = stat;
	out->dof = dof;
	out->p_value = km_chi2_sf(stat, dof);
	return KM_OK;
}

/*
 * The regularised upper incomplete gamma function Q(a, x): the series of
 * P for x < a + 1, else the continued fraction of Q (modified Lentz), as in
 * Numerical Recipes 6.2; within a few ulps of SciPy's gammaincc here.
 */
static double
gamma_q(double a, double x)
{
	double		lead;

	if (x <= 0.0)
		return 1.0;
	lead = exp(-x + a * log(x) - lgamma(a));
	if (x < a + 1.0)
	{
		double		ap = a;
		double		del = 1.0 / a;
		double		sum = del;

		for (int n = 0; n < 1000; n++)
		{
			ap += 1.0;
			del *= x / ap;
			sum += del;
			if (fabs(del) < fabs(sum) * 1e-17)
				break;
		}
		return 1.0 - sum * lead;
	}
	else
	{
		double		tiny = 1e-300;
		double		b = x + 1.0 - a;
		double		c = 1.0 / tiny;
		double		d = 1.0 / b;
		double		h = d;

		for (int i = 1; i < 1000; i++)
		{
			double		an = -i * (i - a);
			double		del;

			b += 2.0;
			d = an * d + b;
			if (fabs(d) < tiny)
				d = tiny;
			c = b + an / c;
			if (fabs(c) < tiny)
				c = tiny;
			d = 1.0 / d;
			del = d * c;
			h *= del;
			if (fabs(del - 1.0) < 1e-17)
				break;
		}
		return lead * h;
	}
}

double
km_chi2_sf(double x, int k)
{
	double		q;

	if (k <= 0)
		return 1.0;
	q = gamma_q(0.5 * k, 0.5 * x);
	return q < 0.0 ? 0.0 : (q > 1.0 ? 1.0 : q);
}
