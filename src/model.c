/*
 * model.c - encoding and validation of the binary model format (core, no
 * PostgreSQL headers).  The layout is documented in model.h.
 *
 * A model arrives as a bytea that anyone can craft, so decoding never
 * reads a byte it has not first proved to lie within [buf, buf + len), and
 * every size is computed with overflow checks before it is trusted.
 */
#include <math.h>
#include <string.h>

#include "model.h"

/*
 * PostgreSQL cannot store a varlena of 1 GB or more (MaxAllocSize is
 * 0x3FFFFFFF), so a larger model could never be written or read back;
 * km_model_size treats it like an overflow.
 */
#define KM_MODEL_MAX_SIZE ((uint64_t) 0x3FFFFFFF)

#define PAYLOAD_CRC_SIZE 4
#define HEADER_CRC_OFFSET (KM_MODEL_HEADER_SIZE - 4)

/* Little-endian loads and stores: memcpy avoids unaligned access. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define KM_BIG_ENDIAN 1
#endif

static inline uint16_t
swap16(uint16_t v)
{
#ifdef KM_BIG_ENDIAN
	v = (uint16_t) ((v >> 8) | (v << 8));
#endif
	return v;
}

static inline uint32_t
swap32(uint32_t v)
{
#ifdef KM_BIG_ENDIAN
	v = ((v & 0x000000FFu) << 24) | ((v & 0x0000FF00u) << 8) |
		((v & 0x00FF0000u) >> 8) | ((v & 0xFF000000u) >> 24);
#endif
	return v;
}

static inline uint64_t
swap64(uint64_t v)
{
#ifdef KM_BIG_ENDIAN
	v = ((uint64_t) swap32((uint32_t) v) << 32) | swap32((uint32_t) (v >> 32));
#endif
	return v;
}

static inline uint16_t
load_u16(const uint8_t *p)
{
	uint16_t	v;

	memcpy(&v, p, sizeof(v));
	return swap16(v);
}

static inline uint32_t
load_u32(const uint8_t *p)
{
	uint32_t	v;

	memcpy(&v, p, sizeof(v));
	return swap32(v);
}

static inline uint64_t
load_u64(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, sizeof(v));
	return swap64(v);
}

/* int32_t is two's complement by definition, so copying the bits is exact. */
static inline int32_t
load_i32(const uint8_t *p)
{
	uint32_t	u = load_u32(p);
	int32_t		v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

static inline double
load_f64(const uint8_t *p)
{
	uint64_t	u = load_u64(p);
	double		v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

static inline void
store_u16(uint8_t *p, uint16_t v)
{
	v = swap16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
store_u32(uint8_t *p, uint32_t v)
{
	v = swap32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
store_u64(uint8_t *p, uint64_t v)
{
	v = swap64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
store_i32(uint8_t *p, int32_t v)
{
	uint32_t	u;

	memcpy(&u, &v, sizeof(u));
	store_u32(p, u);
}

static inline void
store_f64(uint8_t *p, double v)
{
	uint64_t	u;

	memcpy(&u, &v, sizeof(u));
	store_u64(p, u);
}

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

/* A candidate is stored and held in memory as four doubles. */
typedef char candidate_is_four_doubles[sizeof(km_candidate) == 4 * sizeof(double) ? 1 : -1];

size_t
km_model_size(uint32_t n, uint32_t d, uint32_t c)
{
	uint64_t	doubles = payload_doubles(n, d, c);
	uint64_t	size;

	if (doubles == 0 && (n != 0 || d != 0 || c != 0))
		return 0;
	size = KM_MODEL_HEADER_SIZE + doubles * sizeof(double) + PAYLOAD_CRC_SIZE;
	if (size > KM_MODEL_MAX_SIZE)
		return 0;
	return (size_t) size;
}

size_t
km_model_storage_doubles(uint32_t n, uint32_t d, uint32_t c)
{
	uint64_t	doubles = payload_doubles(n, d, c);

	/* The caller multiplies by sizeof(double); that must not wrap either. */
	if (doubles > SIZE_MAX / sizeof(double))
		return 0;
	return (size_t) doubles;
}

static uint8_t *
store_doubles(uint8_t *p, const double *v, size_t count)
{
	for (size_t i = 0; i < count; i++, p += sizeof(double))
		store_f64(p, v[i]);
	return p;
}

void
km_model_encode(const km_model *m, uint8_t *buf)
{
	size_t		n = m->n_train;
	size_t		d = m->n_features;
	size_t		total = km_model_size(m->n_train, m->n_features, m->n_candidates);
	uint32_t	flags = 0;
	uint8_t    *p;

	if (m->standardize)
		flags |= KM_FLAG_STANDARDIZE;
	if (m->fit_intercept)
		flags |= KM_FLAG_FIT_INTERCEPT;
	if (m->converged)
		flags |= KM_FLAG_CONVERGED;

	/* Zeroing first leaves every reserved byte 0. */
	memset(buf, 0, KM_MODEL_HEADER_SIZE);
	memcpy(buf, KM_MODEL_MAGIC, 4);
	store_u16(buf + 4, KM_FORMAT_VERSION);
	store_u16(buf + 6, KM_MODEL_HEADER_SIZE);
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
	store_u32(buf + HEADER_CRC_OFFSET, km_crc32c(buf, HEADER_CRC_OFFSET));

	p = buf + KM_MODEL_HEADER_SIZE;
	p = store_doubles(p, m->mean, d);
	p = store_doubles(p, m->scale, d);
	p = store_doubles(p, m->alpha, n);
	p = store_doubles(p, m->X, n * d);
	p = store_doubles(p, (const double *) m->candidates, 4 * (size_t) m->n_candidates);
	store_u32(p, km_crc32c(buf + KM_MODEL_HEADER_SIZE,
						   total - KM_MODEL_HEADER_SIZE - PAYLOAD_CRC_SIZE));
}

/*
 * Steps shared by peek and decode: everything that can be checked from the
 * header alone.  On success the header is intact and len == total_size ==
 * km_model_size(n, d), so the payload may be read without further bounds
 * checks.
 */
static km_status
check_header(const uint8_t *buf, size_t len, uint32_t *n, uint32_t *d,
			 uint32_t *c, km_error *err)
{
	uint16_t	version;
	uint16_t	header_size;
	uint64_t	total;

	if (len < 4 || memcmp(buf, KM_MODEL_MAGIC, 4) != 0)
		return km_fail(err, KM_ERR_FORMAT, "not a kernel_ml model",
					   "The value does not begin with the kernel_ml model signature.");
	if (len < 8)
		return km_fail(err, KM_ERR_FORMAT, "truncated kernel_ml model",
					   "The model has %zu bytes, too few to hold its format version.",
					   len);

	/* Version before anything else, so a newer format is never "corrupt". */
	version = load_u16(buf + 4);
	if (version == 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model has format version 0, which does not exist.");
	if (version > KM_FORMAT_VERSION)
		return km_fail(err, KM_ERR_VERSION,
					   "kernel_ml model format is newer than this library supports",
					   "The model has format version %u; this build of kernel_ml reads versions up to %d.",
					   (unsigned) version, KM_FORMAT_VERSION);

	header_size = load_u16(buf + 6);
	if (header_size != KM_MODEL_HEADER_SIZE)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The header size is %u bytes; format version %u has %d.",
					   (unsigned) header_size, (unsigned) version,
					   KM_MODEL_HEADER_SIZE);
	if (len < KM_MODEL_HEADER_SIZE + PAYLOAD_CRC_SIZE)
		return km_fail(err, KM_ERR_FORMAT, "truncated kernel_ml model",
					   "The model has %zu bytes, fewer than the %d of an empty model.",
					   len, KM_MODEL_HEADER_SIZE + PAYLOAD_CRC_SIZE);

	if (load_u32(buf + HEADER_CRC_OFFSET) != km_crc32c(buf, HEADER_CRC_OFFSET))
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
	if (*n < 1 || *d < 1 || km_model_size(*n, *d, *c) != total)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The header gives %u training rows of %u features and %u candidates in %llu bytes, which do not fit together.",
					   (unsigned) *n, (unsigned) *d, (unsigned) *c,
					   (unsigned long long) total);
	return KM_OK;
}

km_status
km_model_peek(const uint8_t *buf, size_t len, uint32_t *n, uint32_t *d,
			  uint32_t *c, km_error *err)
{
	uint32_t	hn;
	uint32_t	hd;
	uint32_t	hc;
	km_status	st = check_header(buf, len, &hn, &hd, &hc, err);

	if (st == KM_OK)
	{
		*n = hn;
		*d = hd;
		*c = hc;
	}
	return st;
}

static km_status
bad_field(km_error *err, const char *field, double value, const char *rule)
{
	return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
				   "Field %s is %g; it must be %s.", field, value, rule);
}

/*
 * Read count doubles of one payload array, each of which must be finite
 * (and > 0 if positive), into out unless out is NULL.
 */
static km_status
read_array(const uint8_t **pp, size_t count, const char *name, bool positive,
		   double *out, km_error *err)
{
	const uint8_t *p = *pp;

	for (size_t i = 0; i < count; i++, p += sizeof(double))
	{
		double		v = load_f64(p);

		if (!isfinite(v))
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Element %zu of %s is not finite.", i, name);
		if (positive && !(v > 0.0))
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Element %zu of %s is %g; it must be greater than 0.",
						   i, name, v);
		if (out)
			out[i] = v;
	}
	*pp = p;
	return KM_OK;
}

km_status
km_model_decode(const uint8_t *buf, size_t len, km_model *m,
				double *storage, km_error *err)
{
	uint32_t	n;
	uint32_t	d;
	uint32_t	c;
	km_status	st;
	uint32_t	flags;
	unsigned	kernel;
	unsigned	method;
	unsigned	params;
	int32_t		degree;
	double		gamma;
	double		coef0;
	km_model	r;
	const uint8_t *p;
	size_t		nd;

	if ((st = check_header(buf, len, &n, &d, &c, err)) != KM_OK)
		return st;

	/* check_header proved len == km_model_size(n, d, c) >= 148. */
	if (load_u32(buf + len - PAYLOAD_CRC_SIZE) !=
		km_crc32c(buf + KM_MODEL_HEADER_SIZE,
				  len - KM_MODEL_HEADER_SIZE - PAYLOAD_CRC_SIZE))
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

	flags = load_u32(buf + 16);
	if (flags & ~(uint32_t) KM_FLAGS_KNOWN)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Field flags is 0x%x, which has unknown bits set.",
					   (unsigned) flags);
	kernel = buf[20];
	if (kernel < KM_KERNEL_FIRST || kernel > KM_KERNEL_LAST)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Field kernel is %u, which is not a known kernel.", kernel);
	method = buf[21];
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

	memset(&r, 0, sizeof(r));
	r.format_version = load_u16(buf + 4);
	memcpy(r.writer_version, buf + 44, 3);
	r.kernel.type = (km_kernel_type) kernel;
	r.kernel.degree = degree;
	r.kernel.gamma = gamma;
	r.kernel.coef0 = coef0;
	r.method = (km_method) method;
	r.task = km_method_task(r.method);
	r.standardize = (flags & KM_FLAG_STANDARDIZE) != 0;
	r.fit_intercept = (flags & KM_FLAG_FIT_INTERCEPT) != 0;
	r.converged = (flags & KM_FLAG_CONVERGED) != 0;
	r.max_iter = load_i32(buf + 28);
	r.iterations = load_i32(buf + 32);
	r.n_train = n;
	r.n_features = d;
	r.rows_skipped = load_u64(buf + 48);
	r.lambda = load_f64(buf + 72);
	r.learning_rate = load_f64(buf + 80);
	r.tol = load_f64(buf + 88);
	r.final_change = load_f64(buf + 96);
	r.jitter = load_f64(buf + 104);
	r.intercept = load_f64(buf + 112);
	r.train_rmse = load_f64(buf + 120);

	if (!(isfinite(r.lambda) && r.lambda >= 0.0))
		return bad_field(err, "lambda", r.lambda, "finite and at least 0");
	if (!(isfinite(r.learning_rate) && r.learning_rate >= 0.0))
		return bad_field(err, "learning_rate", r.learning_rate, "finite and at least 0");
	if (!(isfinite(r.tol) && r.tol >= 0.0))
		return bad_field(err, "tol", r.tol, "finite and at least 0");
	if (!(isfinite(r.final_change) && r.final_change >= 0.0))
		return bad_field(err, "final_change", r.final_change, "finite and at least 0");
	if (!(isfinite(r.jitter) && r.jitter >= 0.0))
		return bad_field(err, "jitter", r.jitter, "finite and at least 0");
	if (!isfinite(r.intercept))
		return bad_field(err, "intercept", r.intercept, "finite");
	if (!isfinite(r.train_rmse))
		return bad_field(err, "train_rmse", r.train_rmse, "finite");
	if (r.max_iter < 0)
		return bad_field(err, "max_iter", r.max_iter, "at least 0");
	if (r.iterations < 0)
		return bad_field(err, "iterations", r.iterations, "at least 0");

	r.n_candidates = c;
	r.cv = (km_cv) buf[132];
	r.folds = load_u16(buf + 134);
	r.best = load_u32(buf + 136);
	if (c == 0 ? (r.cv != KM_CV_NONE || r.folds != 0 || r.best != 0) :
		(r.cv < KM_CV_LOO || r.cv > KM_CV_KFOLD || r.best >= c ||
		 (r.cv == KM_CV_KFOLD) != (r.folds >= 2) ||
		 (r.cv != KM_CV_KFOLD && r.folds != 0)))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The selection fields (cv %u, folds %d, best %u of %u candidates) do not fit together.",
					   (unsigned) buf[132], r.folds, (unsigned) r.best, (unsigned) c);

	/* km_model_size(n, d, c) succeeded, so none of these products overflow. */
	nd = (size_t) n * d;
	p = buf + KM_MODEL_HEADER_SIZE;
	if ((st = read_array(&p, d, "mean", false, storage, err)) != KM_OK ||
		(st = read_array(&p, d, "scale", true,
						 storage ? storage + d : NULL, err)) != KM_OK ||
		(st = read_array(&p, n, "alpha", false,
						 storage ? storage + 2 * (size_t) d : NULL, err)) != KM_OK ||
		(st = read_array(&p, nd, "X", false,
						 storage ? storage + 2 * (size_t) d + n : NULL, err)) != KM_OK)
		return st;

	/* candidates: gamma > 0, lambda >= 0, score >= 0 or NaN, std >= 0 */
	for (uint32_t i = 0; i < c; i++, p += 4 * sizeof(double))
	{
		double		v[4];

		for (int j = 0; j < 4; j++)
			v[j] = load_f64(p + j * sizeof(double));
		if (!(isfinite(v[0]) && v[0] > 0.0) || !(isfinite(v[1]) && v[1] >= 0.0) ||
			!(isnan(v[2]) || (isfinite(v[2]) && v[2] >= 0.0)) ||
			!(isfinite(v[3]) && v[3] >= 0.0))
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Selection candidate %u has gamma %g, lambda %g, score %g, std %g.",
						   (unsigned) i, v[0], v[1], v[2], v[3]);
		if (storage)
			memcpy(storage + 2 * (size_t) d + n + nd + 4 * (size_t) i, v, sizeof(v));
	}

	if (storage)
	{
		r.mean = storage;
		r.scale = storage + d;
		r.alpha = storage + 2 * (size_t) d;
		r.X = storage + 2 * (size_t) d + n;
		r.candidates = (const km_candidate *) (r.X + nd);
	}
	*m = r;
	return KM_OK;
}

void
km_model_describe_fields(const km_model *m, const km_field *fields,
						 int n_fields, const km_describer *out)
{
	const char *base = (const char *) m;

	for (int i = 0; i < n_fields; i++)
	{
		const km_field *f = &fields[i];
		const char *p = base + f->model_offset;

		if (f->name == NULL)
			continue;
		switch (f->type)
		{
			case KM_FIELD_U8:
				out->integer(out->ctx, f->name, *(const uint8_t *) p);
				break;
			case KM_FIELD_U16:
				out->integer(out->ctx, f->name, *(const uint16_t *) p);
				break;
			case KM_FIELD_U32:
				out->integer(out->ctx, f->name, *(const uint32_t *) p);
				break;
			case KM_FIELD_I32:
				out->integer(out->ctx, f->name, *(const int32_t *) p);
				break;
			case KM_FIELD_U64:
				out->integer(out->ctx, f->name, (int64_t) *(const uint64_t *) p);
				break;
			case KM_FIELD_F64:
				out->number(out->ctx, f->name, *(const double *) p);
				break;
			case KM_FIELD_BOOL:
				out->boolean(out->ctx, f->name, *(const bool *) p);
				break;
		}
	}
}
