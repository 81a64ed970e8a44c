/*
 * test_gp_section.c - the GP section (model_sections_gp.c): a ridge fit
 * keeps the amplitude and half log determinant km_gp_prepare computes from
 * the model's rows, bit for bit; they survive encoding; a model without
 * them (as 0.3.0 wrote) decodes as before, byte for byte the same minus
 * the section; crafted sections are refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "fit.h"
#include "gp.h"
#include "model.h"
#include "unit.h"

void		test_gp_section_fit_keeps(void);
void		test_gp_section_crafted(void);

#define N 40
#define D 2

typedef struct fitted
{
	double		X[N * D];
	double		y[N];
	double		alpha[N];
	double		mean[D];
	double		scale[D];
	km_model	m;
} fitted;

/* An exact ridge model of N rows fitted by km_fit and stored by ridge's op. */
static void
fit_model(fitted *f)
{
	unsigned long long st = 42;
	km_fit_params p;
	km_fit_result res;
	km_error	err;
	double	   *work;

	for (int i = 0; i < N * D; i++)
		f->X[i] = 2.0 * unit_urand(&st);
	for (int i = 0; i < N; i++)
		f->y[i] = sin(3.0 * f->X[i * D]) + f->X[i * D + 1] + 0.1 * unit_urand(&st);
	for (int j = 0; j < D; j++)
	{
		f->mean[j] = 0.0;
		f->scale[j] = 1.0;
	}
	memset(&p, 0, sizeof(p));
	p.method = km_method_by_name("ridge")->id;
	p.kernel.type = KM_KERNEL_RBF;
	p.kernel.gamma = 0.5;
	p.lambda = 0.1;
	work = malloc(sizeof(double) * km_fit_workspace_doubles(p.method, N));
	CHECK(km_fit(&p, f->X, N, D, f->y, f->alpha, work, &res, &err, NULL) == KM_OK,
		  "fit: %s", err.detail);
	free(work);

	memset(&f->m, 0, sizeof(f->m));
	f->m.format_version = 2;
	f->m.kernel = p.kernel;
	f->m.method = p.method;
	f->m.task = KM_TASK_REGRESSION;
	f->m.n_train = N;
	f->m.n_features = D;
	f->m.n_outputs = 1;
	f->m.rows_seen = N;
	f->m.train_rmse = res.train_rmse;
	km_method_get(p.method)->store(&p, &res, &f->m);
	f->m.mean = f->mean;
	f->m.scale = f->scale;
	f->m.alpha = f->alpha;
	f->m.X = f->X;
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

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
put_f64(uint8_t *p, double v)
{
	uint64_t	u;

	memcpy(&u, &v, sizeof(u));
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (u >> (8 * i));
}

/* The last section (GP, 16 bytes of payload) of buf: its CRC again. */
static void
reseal_last(uint8_t *buf, size_t len)
{
	put_u32(buf + len - 4, km_crc32c(buf + len - 32, 28));
}

static km_status
decode(const uint8_t *buf, size_t len, km_model *out, km_error *err)
{
	return km_model_decode(buf, len, out, NULL, err);
}

void
test_gp_section_fit_keeps(void)
{
	fitted	   *f = malloc(sizeof(fitted));
	km_model	plain;
	km_model	back;
	km_gp		g;
	km_error	err;
	double	   *mem;
	uint8_t    *with;
	uint8_t    *without;
	size_t		len_with;
	size_t		len_without;

	fit_model(f);
	CHECK(f->m.has_gp, "the fit keeps its GP values");

	/* the same bits as km_gp_prepare from the rows (a model without them) */
	plain = f->m;
	plain.has_gp = false;
	mem = malloc(sizeof(double) * km_gp_doubles(&plain));
	CHECK(km_gp_prepare(&g, &plain, mem, &err, NULL) == KM_OK, "prepare");
	CHECK(g.s2 == f->m.gp_amplitude, "amplitude %.17g vs %.17g", f->m.gp_amplitude, g.s2);
	CHECK(g.logdet_half == f->m.gp_logdet_half, "half log det %.17g vs %.17g",
		  f->m.gp_logdet_half, g.logdet_half);
	CHECK(g.s2 > 0.0, "s2 %g", g.s2);
	/* and km_gp_prepare of a model with them takes them */
	f->m.gp_amplitude = 2.0;
	CHECK(km_gp_prepare(&g, &f->m, mem, &err, NULL) == KM_OK && g.s2 == 2.0,
		  "prepare takes the stored s2: %g", g.s2);
	f->m.gp_amplitude = plain.gp_amplitude;
	free(mem);

	/* encoded: 32 bytes more; the values come back; the rest unchanged */
	with = encode(&f->m, &len_with);
	without = encode(&plain, &len_without);
	CHECK(len_with == len_without + 32, "%zu vs %zu", len_with, len_without);
	CHECK(decode(with, len_with, &back, &err) == KM_OK, "decode: %s", err.detail);
	CHECK(back.has_gp && back.gp_amplitude == f->m.gp_amplitude &&
		  back.gp_logdet_half == f->m.gp_logdet_half, "values back");
	CHECK(km_gp_stored(&g, &back) && g.s2 == f->m.gp_amplitude &&
		  g.logdet_half == f->m.gp_logdet_half, "km_gp_stored");
	CHECK(decode(without, len_without, &back, &err) == KM_OK && !back.has_gp,
		  "a model without the section: none stored");
	CHECK(!km_gp_stored(&g, &back), "km_gp_stored: none");
	/* sections before GP are the same bytes (header: size, count, CRC differ) */
	CHECK(memcmp(with + 80, without + 80, len_without - 80) == 0, "same sections");
	CHECK(memcmp(with + 16, without + 16, 56) == 0, "same header fields");
	free(with);
	free(without);
	free(f);
}

void
test_gp_section_crafted(void)
{
	fitted	   *f = malloc(sizeof(fitted));
	km_model	back;
	km_error	err;
	uint8_t    *buf;
	uint8_t    *copy;
	size_t		len;
	const double bad[] = {NAN, INFINITY, -INFINITY, -1.0, -1e-300};

	fit_model(f);
	buf = encode(&f->m, &len);
	copy = malloc(len);
	CHECK(decode(buf, len, &back, &err) == KM_OK && back.has_gp, "valid");

	/* not finite, or a negative amplitude: refused */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		memcpy(copy, buf, len);
		put_f64(copy + len - 20, bad[i]);
		reseal_last(copy, len);
		CHECK(decode(copy, len, &back, &err) == KM_ERR_FORMAT,
			  "amplitude %g accepted", bad[i]);
		if (!isnan(bad[i]) && bad[i] < 0.0 && isfinite(bad[i]))
			continue;
		memcpy(copy, buf, len);
		put_f64(copy + len - 12, bad[i]);
		reseal_last(copy, len);
		CHECK(decode(copy, len, &back, &err) == KM_ERR_FORMAT,
			  "half log det %g accepted", bad[i]);
	}
	/* a negative half log determinant is a value (K + lambda I below 1) */
	memcpy(copy, buf, len);
	put_f64(copy + len - 12, -3.5);
	reseal_last(copy, len);
	CHECK(decode(copy, len, &back, &err) == KM_OK && back.gp_logdet_half == -3.5,
		  "negative half log det: %s", err.detail);

	/* a flipped bit without a new CRC: corrupted */
	memcpy(copy, buf, len);
	copy[len - 15] ^= 1;
	CHECK(decode(copy, len, &back, &err) == KM_ERR_CHECKSUM, "checksum");

	/* every truncation fails, reading nothing past the end */
	for (size_t cut = len - 40; cut < len; cut++)
	{
		uint8_t    *t = malloc(cut);

		memcpy(t, buf, cut);
		CHECK(decode(t, cut, &back, &err) != KM_OK, "truncated at %zu", cut);
		free(t);
	}

	/* in a model of a method without a GP reading: refused */
	{
		km_model	svr = f->m;
		uint8_t    *sbuf;
		size_t		slen;

		svr.method = km_method_by_name("svr")->id;
		svr.tol = 1e-3;
		sbuf = encode(&svr, &slen);
		CHECK(decode(sbuf, slen, &back, &err) == KM_ERR_FORMAT &&
			  strstr(err.detail, "gp section") != NULL, "svr with a GP section: %s",
			  err.detail);
		svr.has_gp = false;
		free(sbuf);
		sbuf = encode(&svr, &slen);
		CHECK(decode(sbuf, slen, &back, &err) == KM_OK, "svr without: %s", err.detail);
		free(sbuf);
	}
	free(copy);
	free(buf);
	free(f);
}
