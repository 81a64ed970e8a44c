/*
 * test_drift.c - the drift test's core (drift.c): the chi-square upper
 * tail vs SciPy's stats.chi2.sf, the statistic vs a direct solve of
 * delta' C^-1 delta, the rank rule (a linear kernel on d = 2: dof 2), and
 * the reference bytes: round trip, every truncation and a flipped byte
 * refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "kernels.h"
#include "unit.h"

void		test_drift_chi2(void);
void		test_drift_statistic(void);
void		test_drift_reference_bytes(void);

void
test_drift_chi2(void)
{
	/* scipy.stats.chi2.sf(x, k), SciPy 1.10 */
	static const struct
	{
		double		x;
		int			k;
		double		sf;
	}			cases[] = {
		{0.5, 1, 0.47950012218695337},
		{3.0, 2, 0.22313016014842982},
		{10.0, 10, 0.44049328506521257},
		{23.2093, 10, 0.009999831639612145},
		{50.0, 3, 7.989179244951495e-11},
		{200.0, 10, 1.6139305336977317e-37},
		{0.001, 10, 1.0},
		{9.0, 9, 0.43727418891386693},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		double		got = km_chi2_sf(cases[i].x, cases[i].k);

		CHECK(fabs(got - cases[i].sf) <= 1e-12 * cases[i].sf,
			  "chi2 sf(%g, %d) = %.17g, SciPy %.17g", cases[i].x, cases[i].k, got, cases[i].sf);
	}
	CHECK(km_chi2_sf(0.0, 5) == 1.0, "sf(0) is 1");
	CHECK(km_chi2_sf(3.0, 0) == 1.0, "no degrees of freedom: 1");
}

/* A km_drift of an rbf basis at 3 locations in d = 2, mean 0, scale 1. */
static void
make_basis(km_drift *r, double *storage, km_kernel_type type)
{
	memset(r, 0, sizeof(*r));
	r->kind = KM_DRIFT_LOCATIONS;
	r->kernel.type = type;
	r->kernel.gamma = 0.5;
	r->J = 3;
	r->d = 2;
	r->mean = storage;
	r->scale = storage + 2;
	r->V = storage + 4;
	r->b = r->V + 6;
	r->sum = r->b + 3;
	r->cross = r->sum + 3;
	memset(storage, 0, sizeof(double) * km_drift_doubles(2, 3));
	r->scale[0] = r->scale[1] = 1.0;
	r->V[0] = 0.0;
	r->V[1] = 0.0;
	r->V[2] = 1.0;
	r->V[3] = -0.5;
	r->V[4] = -1.0;
	r->V[5] = 0.7;
}

/* Solve the 3 x 3 system A x = b by Gaussian elimination with pivoting. */
static void
solve3(double A[9], double b[3])
{
	for (int c = 0; c < 3; c++)
	{
		int			p = c;

		for (int r = c + 1; r < 3; r++)
			if (fabs(A[r * 3 + c]) > fabs(A[p * 3 + c]))
				p = r;
		for (int k = 0; k < 3; k++)
		{
			double		t = A[c * 3 + k];

			A[c * 3 + k] = A[p * 3 + k];
			A[p * 3 + k] = t;
		}
		{
			double		t = b[c];

			b[c] = b[p];
			b[p] = t;
		}
		for (int r = c + 1; r < 3; r++)
		{
			double		f = A[r * 3 + c] / A[c * 3 + c];

			for (int k = c; k < 3; k++)
				A[r * 3 + k] -= f * A[c * 3 + k];
			b[r] -= f * b[c];
		}
	}
	for (int c = 2; c >= 0; c--)
	{
		for (int k = c + 1; k < 3; k++)
			b[c] -= A[c * 3 + k] * b[k];
		b[c] /= A[c * 3 + c];
	}
}

void
test_drift_statistic(void)
{
	double		s1[64];
	double		s2[64];
	double		scratch[16];
	km_drift	a;
	km_drift	b;
	km_drift_result res;
	km_error	err;
	unsigned long long st = 7;
	enum
	{
		NA = 500, NB = 400
	};
	double	   *XA = malloc(sizeof(double) * NA * 2);
	double	   *XB = malloc(sizeof(double) * NB * 2);
	double		za[NA][3];
	double		zb[NB][3];
	double		ma[3] = {0, 0, 0};
	double		mb[3] = {0, 0, 0};
	double		C[9] = {0};
	double		delta[3];
	double		want = 0.0;

	make_basis(&a, s1, KM_KERNEL_RBF);
	km_drift_copy_basis(&a, &b, s2);
	for (int i = 0; i < NA * 2; i++)
		XA[i] = 2.0 * unit_urand(&st);
	for (int i = 0; i < NB * 2; i++)
		XB[i] = 2.0 * unit_urand(&st) + 0.1;
	km_drift_add(&a, XA, 200, scratch);
	km_drift_add(&a, XA + 400, NA - 200, scratch);	/* two blocks: sums add */
	km_drift_add(&b, XB, NB, scratch);
	CHECK(km_drift_test(&a, &b, &res, &err) == KM_OK, "test: %s", err.detail);

	/* directly: features, means, covariances, a solve */
	for (int i = 0; i < NA; i++)
		for (int j = 0; j < 3; j++)
			ma[j] += (za[i][j] = km_kernel_eval(&a.kernel, XA + 2 * i, a.V + 2 * j, 2)) / NA;
	for (int i = 0; i < NB; i++)
		for (int j = 0; j < 3; j++)
			mb[j] += (zb[i][j] = km_kernel_eval(&a.kernel, XB + 2 * i, a.V + 2 * j, 2)) / NB;
	for (int j = 0; j < 3; j++)
		for (int k = 0; k < 3; k++)
		{
			double		ca = 0.0;
			double		cb = 0.0;

			for (int i = 0; i < NA; i++)
				ca += (za[i][j] - ma[j]) * (za[i][k] - ma[k]);
			for (int i = 0; i < NB; i++)
				cb += (zb[i][j] - mb[j]) * (zb[i][k] - mb[k]);
			C[j * 3 + k] = ca / (NA - 1) / NA + cb / (NB - 1) / NB;
		}
	for (int j = 0; j < 3; j++)
		delta[j] = ma[j] - mb[j];
	{
		double		x[3] = {delta[0], delta[1], delta[2]};

		solve3(C, x);
		for (int j = 0; j < 3; j++)
			want += delta[j] * x[j];
	}
	CHECK_CLOSE(res.statistic, want, 1e-9);
	CHECK(res.dof == 3 && res.n_train == NA && res.n_new == NB, "dof %d, n %llu %llu",
		  res.dof, (unsigned long long) res.n_train, (unsigned long long) res.n_new);
	CHECK_CLOSE(res.p_value, km_chi2_sf(want, 3), 1e-9);

	/* one row a side is refused */
	km_drift_copy_basis(&a, &b, s2);
	km_drift_add(&b, XB, 1, scratch);
	CHECK(km_drift_test(&a, &b, &res, &err) == KM_ERR_INVALID, "one new row");

	/* a linear kernel on d = 2: three features of rank 2 */
	make_basis(&a, s1, KM_KERNEL_LINEAR);
	km_drift_copy_basis(&a, &b, s2);
	km_drift_add(&a, XA, NA, scratch);
	km_drift_add(&b, XB, NB, scratch);
	CHECK(km_drift_test(&a, &b, &res, &err) == KM_OK, "linear: %s", err.detail);
	CHECK(res.dof == 2, "linear kernel, d = 2: dof %d", res.dof);
	CHECK(isfinite(res.statistic) && res.statistic > 0.0, "statistic %g", res.statistic);
	free(XA);
	free(XB);
}

void
test_drift_reference_bytes(void)
{
	double		s1[64];
	double		s2[64];
	double		scratch[16];
	km_drift	a;
	km_drift	b;
	km_error	err;
	uint32_t	d;
	uint32_t	J;
	size_t		size = km_drift_encoded_size(2, 3);
	uint8_t    *buf = malloc(size);
	double		X[6] = {0.1, 0.2, -0.3, 0.4, 0.5, -0.6};

	make_basis(&a, s1, KM_KERNEL_RBF);
	km_drift_add(&a, X, 3, scratch);
	a.skipped = 4;
	km_drift_encode(&a, buf);
	CHECK(km_drift_peek(buf, size, &d, &J, &err) == KM_OK && d == 2 && J == 3, "peek");
	CHECK(km_drift_decode(buf, size, &b, s2, &err) == KM_OK, "decode: %s", err.detail);
	CHECK(b.n == 3 && b.skipped == 4 && b.kind == KM_DRIFT_LOCATIONS &&
		  b.kernel.type == KM_KERNEL_RBF && b.kernel.gamma == 0.5, "header fields");
	CHECK(memcmp(s1, s2, sizeof(double) * km_drift_doubles(2, 3)) == 0, "arrays bit for bit");
	for (size_t len = 0; len < size; len++)
	{
		uint8_t    *cut = unit_copy_bytes(buf, len);

		CHECK(km_drift_decode(cut, len, &b, s2, &err) != KM_OK, "truncated to %zu decodes", len);
		free(cut);
	}
	for (size_t at = 0; at < size; at++)
	{
		buf[at] ^= 0x10;
		CHECK(km_drift_decode(buf, size, &b, s2, &err) != KM_OK, "flipped byte %zu decodes", at);
		buf[at] ^= 0x10;
	}
	free(buf);
}
