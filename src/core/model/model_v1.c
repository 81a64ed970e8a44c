/*
 * model_v1.c - format 1, kernel_ml 0.1.0's model format (core, no
 * PostgreSQL headers): read only, into the same km_model as format 2, and
 * predicting bit for bit as before; km_model_encode_v1 writes it for the
 * tests and the fuzzers' seeds.  The layout is documented in model.h.
 *
 * A model arrives as a bytea that anyone can craft: as in model.c, no byte
 * is read before it is proved to lie within [buf, buf + len).
 */
#include <math.h>
#include <string.h>

#include "crc32c.h"
#include "model.h"
#include "model_internal.h"

#define PAYLOAD_CRC_SIZE 4
#define V1_HEADER_CRC_OFFSET (KM_MODEL_V1_HEADER_SIZE - 4)

/*
 * Doubles in the payload, or 0 if that many bytes could not be a model.
 * (uint64_t) n * d cannot overflow; bounding it first keeps the sums exact.
 */
static uint64_t
payload_doubles(uint32_t n, uint32_t d, uint32_t c)
{
	uint64_t	nd = (uint64_t) n * d;

	if (nd > KM_MODEL_MAX_SIZE / sizeof(double) || c > KM_MODEL_MAX_CANDIDATES)
		return 0;
	return nd + n + 2 * (uint64_t) d + 4 * (uint64_t) c;
}

size_t
km_model_v1_size(uint32_t n, uint32_t d, uint32_t c)
{
	uint64_t	doubles = payload_doubles(n, d, c);
	uint64_t	size;

	if (doubles == 0 && (n != 0 || d != 0 || c != 0))
		return 0;
	size = KM_MODEL_V1_HEADER_SIZE + doubles * sizeof(double) + PAYLOAD_CRC_SIZE;
	if (size > KM_MODEL_MAX_SIZE)
		return 0;
	return (size_t) size;
}

void
km_model_encode_v1(const km_model *m, uint8_t *buf)
{
	size_t		n = m->n_train;
	size_t		d = m->n_features;
	size_t		total = km_model_v1_size(m->n_train, m->n_features, m->n_candidates);
	uint32_t	flags = 0;
	uint8_t    *p;

	if (m->standardize)
		flags |= KM_FLAG_STANDARDIZE;
	if (m->fit_intercept)
		flags |= KM_FLAG_FIT_INTERCEPT;
	if (m->converged)
		flags |= KM_FLAG_CONVERGED;

	/* Zeroing first leaves every reserved byte 0. */
	memset(buf, 0, KM_MODEL_V1_HEADER_SIZE);
	memcpy(buf, KM_MODEL_MAGIC, 4);
	store_u16(buf + 4, 1);
	store_u16(buf + 6, KM_MODEL_V1_HEADER_SIZE);
	store_u64(buf + 8, (uint64_t) total);
	store_u32(buf + 16, flags);
	buf[20] = (uint8_t) m->kernel.type;
	buf[21] = (uint8_t) m->method;
	store_i32(buf + 24, (int32_t) m->kernel.degree);
	store_i32(buf + 28, m->max_iter);
	store_i32(buf + 32, m->iterations);
	store_u32(buf + 36, m->n_train);
	store_u32(buf + 40, m->n_features);
	memcpy(buf + 44, m->writer_version, 3);
	store_u64(buf + 48, m->rows_skipped);
	store_f64(buf + 56, m->kernel.gamma);
	store_f64(buf + 64, m->kernel.coef0);
	store_f64(buf + 72, m->lambda);
	store_f64(buf + 80, m->learning_rate);
	store_f64(buf + 88, m->tol);
	store_f64(buf + 96, m->final_change);
	store_f64(buf + 104, m->jitter);
	store_f64(buf + 112, m->intercept);
	store_f64(buf + 120, m->train_rmse);
	store_u32(buf + 128, m->n_candidates);
	buf[132] = (uint8_t) m->cv;
	store_u16(buf + 134, (uint16_t) m->folds);
	store_u32(buf + 136, m->best);
	store_u32(buf + V1_HEADER_CRC_OFFSET, km_crc32c(buf, V1_HEADER_CRC_OFFSET));

	p = buf + KM_MODEL_V1_HEADER_SIZE;
	p = store_doubles(p, m->mean, d);
	p = store_doubles(p, m->scale, d);
	p = store_doubles(p, m->alpha, n);
	p = store_doubles(p, m->X, n * d);
	p = store_doubles(p, (const double *) m->candidates, 4 * (size_t) m->n_candidates);
	store_u32(p, km_crc32c(buf + KM_MODEL_V1_HEADER_SIZE,
						   total - KM_MODEL_V1_HEADER_SIZE - PAYLOAD_CRC_SIZE));
}

/*
 * Format 1: everything that can be checked from the header alone, after
 * check_version.  On success the header is intact and len == total_size ==
 * km_model_v1_size(n, d, c), so the payload may be read without further
 * bounds checks.
 */
static km_status
check_header_v1(const uint8_t *buf, size_t len, uint32_t *n, uint32_t *d,
				uint32_t *c, km_error *err)
{
	uint16_t	version = 1;
	uint16_t	header_size;
	uint64_t	total;

	header_size = load_u16(buf + 6);
	if (header_size != KM_MODEL_V1_HEADER_SIZE)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The header size is %u bytes; format version %u has %d.",
					   (unsigned) header_size, (unsigned) version,
					   KM_MODEL_V1_HEADER_SIZE);
	if (len < KM_MODEL_V1_HEADER_SIZE + PAYLOAD_CRC_SIZE)
		return km_fail(err, KM_ERR_FORMAT, "truncated kernel_ml model",
					   "The model has %zu bytes, fewer than the %d of an empty model.",
					   len, KM_MODEL_V1_HEADER_SIZE + PAYLOAD_CRC_SIZE);

	if (load_u32(buf + V1_HEADER_CRC_OFFSET) != km_crc32c(buf, V1_HEADER_CRC_OFFSET))
		return km_fail(err, KM_ERR_CHECKSUM, "kernel_ml model is corrupted",
					   "The header checksum does not match the header.");

	total = load_u64(buf + 8);
	if (total != (uint64_t) len)
	{
		if ((uint64_t) len < total)
			return km_fail(err, KM_ERR_FORMAT, "truncated kernel_ml model",
						   "The model has %zu bytes but its header says %llu.",
						   len, (unsigned long long) total);
		return km_fail(err, KM_ERR_FORMAT, "trailing bytes after kernel_ml model",
					   "The model has %zu bytes but its header says %llu.",
					   len, (unsigned long long) total);
	}

	*n = load_u32(buf + 36);
	*d = load_u32(buf + 40);
	*c = load_u32(buf + 128);
	if (*n < 1 || *d < 1 || km_model_v1_size(*n, *d, *c) != total)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The header gives %u training rows of %u features and %u candidates in %llu bytes, which do not fit together.",
					   (unsigned) *n, (unsigned) *d, (unsigned) *c,
					   (unsigned long long) total);
	return KM_OK;
}

km_status
peek_v1(const uint8_t *buf, size_t len, km_model_shape *shape, km_error *err)
{
	uint32_t	hn;
	uint32_t	hd;
	uint32_t	hc;
	km_status	st = check_header_v1(buf, len, &hn, &hd, &hc, err);

	if (st == KM_OK)
		*shape = km_model_shape_simple((km_method) buf[21], hn, hd, hc);
	return st;
}

/* Format 1: the payload checksum, then the reserved header bytes. */
static km_status
check_payload_v1(const uint8_t *buf, size_t len, km_error *err)
{
	/* check_header proved len == km_model_size(n, d, c) >= 148. */
	if (load_u32(buf + len - PAYLOAD_CRC_SIZE) !=
		km_crc32c(buf + KM_MODEL_V1_HEADER_SIZE,
				  len - KM_MODEL_V1_HEADER_SIZE - PAYLOAD_CRC_SIZE))
		return km_fail(err, KM_ERR_CHECKSUM, "kernel_ml model is corrupted",
					   "The payload checksum does not match the payload.");

	/*
	 * The checksums pass, so what follows catches a writer's bug or a
	 * forgery: values that would make predictions meaningless or unsafe.
	 */
	if (load_u16(buf + 22) != 0 || buf[47] != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A reserved header field is not zero.");
	if (buf[133] != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A reserved header field is not zero.");
	return KM_OK;
}

/* Format 1: flags, kernel, method and the kernel's parameters into r. */
static km_status
kernel_v1(const uint8_t *buf, km_model *r, km_error *err)
{
	uint32_t	flags = load_u32(buf + 16);
	unsigned	kernel = buf[20];
	unsigned	method = buf[21];
	unsigned	params;
	int32_t		degree;
	double		gamma;
	double		coef0;

	if (flags & ~(uint32_t) KM_FLAGS_KNOWN)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Field flags is 0x%x, which has unknown bits set.",
					   (unsigned) flags);
	if (kernel < KM_KERNEL_FIRST || kernel > KM_KERNEL_LAST)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Field kernel is %u, which is not a known kernel.", kernel);
	if (km_method_get((km_method) method) == NULL)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Field method is %u, which is not a known method.", method);

	params = km_kernel_params((km_kernel_type) kernel);
	degree = load_i32(buf + 24);
	gamma = load_f64(buf + 56);
	coef0 = load_f64(buf + 64);
	if ((params & KM_PARAM_DEGREE) && (degree < 1 || degree > 100))
		return bad_field(err, "degree", degree, "between 1 and 100");
	if ((params & KM_PARAM_GAMMA) && !(isfinite(gamma) && gamma > 0.0))
		return bad_field(err, "gamma", gamma, "finite and greater than 0");
	if (!isfinite(coef0))
		return bad_field(err, "coef0", coef0, "finite");

	r->kernel.type = (km_kernel_type) kernel;
	r->kernel.degree = degree;
	r->kernel.gamma = gamma;
	r->kernel.coef0 = coef0;
	r->method = (km_method) method;
	r->task = km_method_task(r->method);
	r->standardize = (flags & KM_FLAG_STANDARDIZE) != 0;
	r->fit_intercept = (flags & KM_FLAG_FIT_INTERCEPT) != 0;
	r->converged = (flags & KM_FLAG_CONVERGED) != 0;
	return KM_OK;
}

/* Format 1: the fitted and training scalars into r, each within its rule. */
static km_status
scalars_v1(const uint8_t *buf, km_model *r, km_error *err)
{
	r->max_iter = load_i32(buf + 28);
	r->iterations = load_i32(buf + 32);
	r->rows_skipped = load_u64(buf + 48);
	r->lambda = load_f64(buf + 72);
	r->learning_rate = load_f64(buf + 80);
	r->tol = load_f64(buf + 88);
	r->final_change = load_f64(buf + 96);
	r->jitter = load_f64(buf + 104);
	r->intercept = load_f64(buf + 112);
	r->train_rmse = load_f64(buf + 120);

	if (!(isfinite(r->lambda) && r->lambda >= 0.0))
		return bad_field(err, "lambda", r->lambda, "finite and at least 0");
	if (!(isfinite(r->learning_rate) && r->learning_rate >= 0.0))
		return bad_field(err, "learning_rate", r->learning_rate, "finite and at least 0");
	if (!(isfinite(r->tol) && r->tol >= 0.0))
		return bad_field(err, "tol", r->tol, "finite and at least 0");
	if (!(isfinite(r->final_change) && r->final_change >= 0.0))
		return bad_field(err, "final_change", r->final_change, "finite and at least 0");
	if (!(isfinite(r->jitter) && r->jitter >= 0.0))
		return bad_field(err, "jitter", r->jitter, "finite and at least 0");
	if (!isfinite(r->intercept))
		return bad_field(err, "intercept", r->intercept, "finite");
	if (!isfinite(r->train_rmse))
		return bad_field(err, "train_rmse", r->train_rmse, "finite");
	if (r->max_iter < 0)
		return bad_field(err, "max_iter", r->max_iter, "at least 0");
	if (r->iterations < 0)
		return bad_field(err, "iterations", r->iterations, "at least 0");
	return KM_OK;
}

km_status
decode_v1(const uint8_t *buf, size_t len, km_model *m,
		  double *storage, km_error *err)
{
	uint32_t	n;
	uint32_t	d;
	uint32_t	c;
	km_status	st;
	km_model	r;
	km_model_shape shape;
	layout		l;
	const uint8_t *p = buf + KM_MODEL_V1_HEADER_SIZE;

	if ((st = check_header_v1(buf, len, &n, &d, &c, err)) != KM_OK ||
		(st = check_payload_v1(buf, len, err)) != KM_OK)
		return st;

	memset(&r, 0, sizeof(r));
	r.format_version = load_u16(buf + 4);
	memcpy(r.writer_version, buf + 44, 3);
	r.n_train = n;
	r.n_features = d;
	r.n_outputs = 1;
	r.rows_seen = n;
	if ((st = kernel_v1(buf, &r, err)) != KM_OK ||
		(st = scalars_v1(buf, &r, err)) != KM_OK)
		return st;

	r.n_candidates = c;
	r.cv = (km_cv) buf[132];
	r.folds = load_u16(buf + 134);
	r.best = load_u32(buf + 136);
	/* km_model_v1_size(n, d, c) succeeded, so no offset into the payload overflows. */
	shape = km_model_shape_simple(r.method, n, d, c);
	if (!layout_of(&shape, &l))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model's arrays do not fit in memory.");
	/* format 1 (0.1.0 .. 0.3.0) knew loo, gcv and k-fold only */
	if (c > 0 && buf[132] > KM_CV_KFOLD)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The selection's cv is %u; format 1 has 1 (loo), 2 (gcv) or 3 (k-fold).",
					   (unsigned) buf[132]);
	if ((st = check_selection(&r, buf[132], err)) != KM_OK ||
		(st = read_scaler(&p, d, storage, &l, err)) != KM_OK ||
		(st = read_expansion(&p, &shape, &r, storage, &l, err)) != KM_OK ||
		(st = read_selection(p, c, r.cv, storage, &l, err)) != KM_OK)
		return st;

	attach_storage(&r, storage, &shape, &l);
	*m = r;
	return KM_OK;
}
