/*
 * test_gp_approx.c - the Gaussian-process reading of approximate ridge
 * (gp.h, gp.c) against NumPy (fixtures/gp_approx_fixtures.h, from
 * gen_gp_approx_fixtures.py): nystrom's DTC and rff's Bayesian linear
 * regression, the amplitude, the log marginal likelihood and the
 * predictive standard deviation after km_approx_solve; the GP_APPROX
 * section survives encoding bit for bit and crafted ones are refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "approx.h"
#include "crc32c.h"
#include "gp.h"
#include "model.h"
#include "unit.h"

#include "fixtures/gp_approx_fixtures.h"

void		test_gp_approx_nystrom(void);
void		test_gp_approx_rff(void);
void		test_gp_approx_crafted(void);
void		test_gp_approx_clip(void);

typedef struct gpa_fit
{
	km_basis	b;
	km_accum   *acc;
	double		coef[GPA_R > GPA_M ? GPA_R : GPA_M];
	double	   *work;			/* the solve's; R at its start */
	double		mean[GPA_D];
	double		scale[GPA_D];
	km_approx_result res;
	km_model	m;
} gpa_fit;

/* Solve the fixture's rows on basis kind (the first GPA_M rows, or W, b). */
static void
fit(gpa_fit *f, km_approx kind)
{
	uint32_t	m = kind == KM_APPROX_NYSTROM ? GPA_M : GPA_R;
	size_t		bytes = km_accum_bytes(KM_ACCUM_GRAM, m);
	void	   *mem = NULL;
	double		Z[GPA_N * GPA_R];
	double	   *fwork;
	double	   *scratch = malloc(km_accum_gram_scratch_doubles(m) * sizeof(double));
	double		lambda = gpa_param[1];
	double		s2;
	double		ld;
	km_error	err;

	memset(f, 0, sizeof(*f));
	for (int j = 0; j < GPA_D; j++)
		f->scale[j] = 1.0;
	f->b.kind = kind;
	f->b.kernel.type = KM_KERNEL_RBF;
	f->b.kernel.gamma = gpa_param[0];
	f->b.d = GPA_D;
	f->b.m = m;
	f->b.mean = f->mean;
	f->b.scale = f->scale;
	if (kind == KM_APPROX_NYSTROM)
		f->b.centres = gpa_x;
	else
	{
		f->b.W = gpa_rff_w;
		f->b.b = gpa_rff_b;
	}
	if (posix_memalign(&mem, 8, bytes) != 0)
		abort();
	f->acc = mem;
	f->acc->vl_len_ = 0;
	km_accum_init(f->acc, KM_ACCUM_GRAM, m);
	fwork = malloc(km_approx_features_doubles(&f->b, GPA_N) * sizeof(double));
	CHECK(km_approx_features(&f->b, gpa_x, GPA_N, Z, fwork, &err) == KM_OK, "features");
	km_accum_gram_add(f->acc, Z, gpa_y, GPA_N, scratch, NULL);
	free(fwork);
	free(scratch);

	f->work = malloc(km_approx_solve_doubles(m) * sizeof(double));
	CHECK(km_approx_solve(&f->b, f->acc, &lambda, 1, true, false, f->coef, &f->res,
						  f->work, &err, NULL) == KM_OK, "solve: %s", err.detail);
	CHECK(km_gp_approx_fit(&f->b, f->acc, &f->res, f->coef, f->work, &s2, &ld,
						   &err, NULL) == KM_OK, "gp fit: %s", err.detail);
	km_approx_model_fill(&f->b, 0, &lambda, 1, true, f->coef, &f->res, NULL, &f->m);
	f->m.format_version = 2;
	f->m.method = km_method_approx_sums()->id;
	f->m.task = km_method_approx_sums()->task;
	f->m.gp_factor = f->work;
	f->m.gp_amplitude = s2;
	f->m.gp_logdet_half = ld;
}

static void
release(gpa_fit *f)
{
	free(f->acc);
	free(f->work);
}

/*
 * The block form (km_gp_std_block) of rows rows of X against the row
 * form's values want, within tol relative.
 */
static void
check_block(km_gp *g, const double *X, int rows, const double *want,
			double tol, const char *what)
{
	double	   *pmem = malloc(sizeof(double) * km_gp_block_prepare_doubles(g));
	double	   *work = malloc(sizeof(double) * km_gp_block_doubles(g, (size_t) rows));
	double	   *std = malloc(sizeof(double) * rows);
	km_error	err;

	km_gp_block_prepare(g, pmem);
	CHECK(km_gp_std_block(g, X, (size_t) rows, std, work, &err) == KM_OK,
		  "%s: block: %s", what, err.detail);
	for (int i = 0; i < rows; i++)
		CHECK(fabs(std[i] - want[i]) <= tol * fabs(want[i]),
			  "%s: block row %d: %.17g, row form %.17g", what, i, std[i], want[i]);
	free(pmem);
	free(work);
	free(std);
}

/* s2, the likelihood and the std at the new rows against NumPy's. */
static void
check_against(const km_model *m, double want_s2, double want_lml,
			  const double *want_std, const double *want_mean, const char *what)
{
	km_gp		g;
	km_error	err;
	double	   *mem = malloc(sizeof(double) * km_gp_doubles(m));
	double		lml;

	CHECK(km_gp_applies(m, NULL), "%s: has a GP reading", what);
	CHECK(km_gp_prepare(&g, m, mem, &err, NULL) == KM_OK, "%s: prepare: %s", what, err.detail);
	CHECK_CLOSE(g.s2, want_s2, 1e-10);
	CHECK(km_gp_log_marginal_likelihood(&g, &lml), "%s: likelihood", what);
	CHECK_CLOSE(lml, want_lml, 1e-10);
	for (int i = 0; i < GPA_NEW; i++)
	{
		const double *x = gpa_new + i * GPA_D;
		double		std;
		double		f = m->intercept;

		CHECK(km_gp_std(&g, x, &std, &err) == KM_OK, "%s: std %d", what, i);
		CHECK_CLOSE(std, want_std[i], 1e-10);
		/* the mean too: the same solve is the posterior mean */
		if (m->X != NULL)
			for (uint32_t j = 0; j < m->n_train; j++)
			{
				double		k;

				(void) km_kernel_eval_finite(&m->kernel, x, m->X + j * GPA_D, GPA_D, &k);
				f += m->alpha[j] * k;
			}
		else
		{
			double		z[GPA_R];

			km_rff_map(m->rff_W, m->rff_b, GPA_D, GPA_R, x, 1, z);
			for (int j = 0; j < GPA_R; j++)
				f += m->alpha[j] * z[j];
		}
		CHECK_CLOSE(f, want_mean[i], 1e-10);
	}
	/* the block form: NumPy's values too, and the row form's within 1e-12 */
	{
		double		rowf[GPA_NEW];

		for (int i = 0; i < GPA_NEW; i++)
			CHECK(km_gp_std(&g, gpa_new + i * GPA_D, &rowf[i], &err) == KM_OK, "%s: std", what);
		check_block(&g, gpa_new, GPA_NEW, want_std, 1e-10, what);
		check_block(&g, gpa_new, GPA_NEW, rowf, 1e-12, what);
	}
	free(mem);
}

static uint8_t *
encode(const km_model *m, size_t *len)
{
	km_model_shape s = km_model_shape_of(m);
	uint8_t    *buf;

	*len = km_model_size(&s);
	buf = malloc(*len);
	km_model_encode(m, buf);
	return buf;
}

/* Decode buf with its arrays (into *storage, to free). */
static km_status
decode(const uint8_t *buf, size_t len, km_model *out, double **storage,
	   km_error *err)
{
	km_model_shape s;
	km_status	st = km_model_peek(buf, len, &s, err);

	*storage = NULL;
	if (st != KM_OK)
		return st;
	*storage = malloc(sizeof(double) * (km_model_storage_doubles(&s) + 1));
	return km_model_decode(buf, len, out, *storage, err);
}

/* The model encoded and decoded scores the same bits. */
static void
check_round_trip(const km_model *m, const char *what)
{
	km_model	back;
	km_gp		g1;
	km_gp		g2;
	km_error	err;
	double	   *storage;
	size_t		len;
	uint8_t    *buf = encode(m, &len);
	double	   *mem1 = malloc(sizeof(double) * km_gp_doubles(m));
	double	   *mem2 = malloc(sizeof(double) * km_gp_doubles(m));

	CHECK(decode(buf, len, &back, &storage, &err) == KM_OK, "%s: decode: %s", what, err.detail);
	CHECK(back.gp_factor != NULL && back.gp_amplitude == m->gp_amplitude &&
		  back.gp_logdet_half == m->gp_logdet_half, "%s: values back", what);
	CHECK(km_gp_prepare(&g1, m, mem1, &err, NULL) == KM_OK &&
		  km_gp_prepare(&g2, &back, mem2, &err, NULL) == KM_OK, "%s: prepare", what);
	for (int i = 0; i < GPA_NEW; i++)
	{
		double		s1;
		double		s2;

		CHECK(km_gp_std(&g1, gpa_new + i * GPA_D, &s1, &err) == KM_OK &&
			  km_gp_std(&g2, gpa_new + i * GPA_D, &s2, &err) == KM_OK &&
			  s1 == s2, "%s: row %d the same bits", what, i);
	}
	/* without the section: no reading, the rest decodes */
	{
		km_model	plain = *m;
		double	   *st2;
		uint8_t    *pbuf;
		size_t		plen;

		plain.gp_factor = NULL;
		pbuf = encode(&plain, &plen);
		CHECK(plen + 16 + 16 + 8 * (size_t) m->n_train * (m->n_train + 1) / 2 == len,
			  "%s: %zu bytes more", what, len - plen);
		CHECK(decode(pbuf, plen, &back, &st2, &err) == KM_OK && back.gp_factor == NULL &&
			  !km_gp_applies(&back, NULL), "%s: without: %s", what, err.detail);
		free(st2);
		free(pbuf);
	}
	free(storage);
	free(buf);
	free(mem1);
	free(mem2);
}

void
test_gp_approx_nystrom(void)
{
	gpa_fit    *f = malloc(sizeof(gpa_fit));

	fit(f, KM_APPROX_NYSTROM);
	check_against(&f->m, gpa_nys_s2[0], gpa_nys_lml[0], gpa_nys_std, gpa_nys_mean, "nystrom");
	check_round_trip(&f->m, "nystrom");
	release(f);
	free(f);
}

void
test_gp_approx_rff(void)
{
	gpa_fit    *f = malloc(sizeof(gpa_fit));

	fit(f, KM_APPROX_RFF);
	check_against(&f->m, gpa_rff_s2[0], gpa_rff_lml[0], gpa_rff_std, gpa_rff_mean, "rff");
	check_round_trip(&f->m, "rff");
	release(f);
	free(f);
}

static void
put_f64(uint8_t *p, double v)
{
	uint64_t	u;

	memcpy(&u, &v, sizeof(u));
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (u >> (8 * i));
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

void
test_gp_approx_crafted(void)
{
	gpa_fit    *f = malloc(sizeof(gpa_fit));
	size_t		packed = (size_t) GPA_M * (GPA_M + 1) / 2;
	size_t		payload = 16 + 8 * packed;
	size_t		len;
	uint8_t    *buf;
	uint8_t    *copy;
	size_t		sec;			/* the section's first byte (the last one) */
	km_model	back;
	km_error	err;
	double	   *storage;
	const double bad[] = {NAN, INFINITY, -1.0, 0.0};

	fit(f, KM_APPROX_NYSTROM);
	buf = encode(&f->m, &len);
	copy = malloc(len);
	sec = len - 4 - payload - 12;
	CHECK(buf[sec] == KM_SECTION_GP_APPROX && buf[sec + 1] == 0, "the last section is GP_APPROX");
	CHECK(decode(buf, len, &back, &storage, &err) == KM_OK, "valid");
	free(storage);

#define RESEAL() put_u32(copy + len - 4, km_crc32c(copy + sec, 12 + payload))
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		/* the amplitude (not 0: a constant target's), the first diagonal, the last, an off-diagonal */
		size_t		at[] = {sec + 12, sec + 12 + 16, sec + 12 + 16 + 8 * (packed - 1),
		sec + 12 + 16 + 8};

		for (size_t k = 0; k < 4; k++)
		{
			bool		value = (k == 0 && bad[i] == 0.0) || (k == 3 && isfinite(bad[i]));

			memcpy(copy, buf, len);
			put_f64(copy + at[k], bad[i]);
			RESEAL();
			CHECK((decode(copy, len, &back, &storage, &err) == KM_OK) == value,
				  "element %zu = %g: %s", k, bad[i], err.detail);
			free(storage);
		}
	}
	/* a flipped bit without a new CRC; every truncation */
	memcpy(copy, buf, len);
	copy[len - 30] ^= 1;
	CHECK(decode(copy, len, &back, &storage, &err) == KM_ERR_CHECKSUM, "checksum");
	free(storage);
	for (size_t cut = sec; cut < len; cut += 7)
	{
		CHECK(decode(buf, cut, &back, &storage, &err) != KM_OK, "truncated at %zu", cut);
		free(storage);
	}
	/* in an exact model (same n): refused */
	{
		km_model	exact = f->m;
		uint8_t    *ebuf;
		size_t		elen;

		exact.approximation = KM_APPROX_EXACT;
		exact.approx_eps = 0.0;
		exact.components = 0;
		exact.rank = 0;
		exact.approx_seed = 0;
		ebuf = encode(&exact, &elen);
		CHECK(decode(ebuf, elen, &back, &storage, &err) == KM_ERR_FORMAT &&
			  strstr(err.detail, "gp_approx") != NULL, "exact with gp_approx: %s", err.detail);
		free(storage);
		free(ebuf);
	}
	/* in a model of a method without a GP reading: refused */
	{
		km_model	svr = f->m;
		uint8_t    *sbuf;
		size_t		slen;

		svr.method = km_method_by_name("svr")->id;
		svr.tol = 1e-3;
		sbuf = encode(&svr, &slen);
		CHECK(decode(sbuf, slen, &back, &storage, &err) == KM_ERR_FORMAT &&
			  strstr(err.detail, "gp_approx") != NULL, "svr with gp_approx: %s", err.detail);
		free(storage);
		free(sbuf);
	}
	free(copy);
	free(buf);
	release(f);
	free(f);
}

/*
 * The clipping rule (gp.h): the prior part k(x, x) - k_m'K^-1 k_m is
 * clipped at 0, the rest kept.  A kernel that is not positive
 * semi-definite (sigmoid: K_mm has negative eigenvalues, factored with a
 * large eps) takes that part below 0 at some centres; the std there is
 * sqrt(s2 (lambda + lambda ||R^-1 L^-1 k_m||^2)), never below the noise's.
 */
void
test_gp_approx_clip(void)
{
	gpa_fit    *f = malloc(sizeof(gpa_fit));
	km_model	m;
	km_gp		g;
	km_error	err;
	double	   *mem;
	int			clipped = 0;
	int			rows = 0;

	fit(f, KM_APPROX_NYSTROM);
	m = f->m;
	m.kernel.type = KM_KERNEL_SIGMOID;
	m.kernel.gamma = 1.0;
	m.kernel.coef0 = 0.0;
	m.approx_eps = 1.0;
	mem = malloc(sizeof(double) * km_gp_doubles(&m));
	CHECK(km_gp_prepare(&g, &m, mem, &err, NULL) == KM_OK, "prepare: %s", err.detail);
	for (int i = 0; i < GPA_N; i++, rows++)
	{
		const double *x = gpa_x + i * GPA_D;
		double		std;
		double		kxx;
		double		raw;
		double		t = 0.0;

		CHECK(km_gp_std(&g, x, &std, &err) == KM_OK, "std %d", i);
		(void) km_kernel_eval_finite(&m.kernel, x, x, GPA_D, &kxx);
		raw = kxx;
		for (int j = 0; j < GPA_M; j++)
		{
			raw -= g.kx[j] * g.kx[j];
			t += g.v[j] * g.v[j];
		}
		CHECK(isfinite(std) && std >= sqrt(g.s2 * g.shift) * (1.0 - 1e-15), "row %d below the noise", i);
		if (raw < 0.0)
		{
			clipped++;
			CHECK_CLOSE(std * std, g.s2 * (g.shift + g.shift * t), 1e-13);
		}
		else
			CHECK_CLOSE(std * std, g.s2 * (raw + g.shift + g.shift * t), 1e-13);
	}
	CHECK(clipped > 0 && clipped < rows, "%d of %d rows clipped", clipped, rows);
	/* the block form clips the same rows the same way */
	{
		double	   *rowf = malloc(sizeof(double) * GPA_N);

		for (int i = 0; i < GPA_N; i++)
			CHECK(km_gp_std(&g, gpa_x + i * GPA_D, &rowf[i], &err) == KM_OK, "std %d", i);
		check_block(&g, gpa_x, GPA_N, rowf, 1e-12, "sigmoid nystrom");
		free(rowf);
	}
	free(mem);
	release(f);
	free(f);
}
