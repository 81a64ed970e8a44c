/*
 * model.c - encoding and validation of the binary model format (core, no
 * PostgreSQL headers).  The layout is documented in model.h.
 *
 * A model arrives as a bytea that anyone can craft, so decoding never
 * reads a byte it has not first proved to lie within [buf, buf + len), and
 * every size is computed with overflow checks before it is trusted.
 */
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "crc32c.h"
#include "model.h"

/*
 * PostgreSQL cannot store a varlena of 1 GB or more (MaxAllocSize is
 * 0x3FFFFFFF), so a larger model could never be written or read back;
 * km_model_size treats it like an overflow.
 */
#define KM_MODEL_MAX_SIZE ((uint64_t) 0x3FFFFFFF)

#define PAYLOAD_CRC_SIZE 4
#define V1_HEADER_CRC_OFFSET (KM_MODEL_V1_HEADER_SIZE - 4)

/*
 * Little-endian loads and stores through <endian.h>, one pair per width;
 * memcpy avoids unaligned access.
 */
#define LE_ACCESSORS(bits) \
static inline uint##bits##_t \
load_u##bits(const uint8_t *p) \
{ \
	uint##bits##_t v; \
	memcpy(&v, p, sizeof(v)); \
	return le##bits##toh(v); \
} \
static inline void \
store_u##bits(uint8_t *p, uint##bits##_t v) \
{ \
	v = htole##bits(v); \
	memcpy(p, &v, sizeof(v)); \
}

LE_ACCESSORS(16)
LE_ACCESSORS(32)
LE_ACCESSORS(64)

/*
 * A signed integer or a double as the bits of the unsigned type of its
 * width (int32_t is two's complement by definition, so the copy is exact).
 */
#define BITS_ACCESSORS(type, name, bits) \
static inline type \
load_##name(const uint8_t *p) \
{ \
	uint##bits##_t u = load_u##bits(p); \
	type		v; \
	memcpy(&v, &u, sizeof(v)); \
	return v; \
} \
static inline void \
store_##name(uint8_t *p, type v) \
{ \
	uint##bits##_t u; \
	memcpy(&u, &v, sizeof(u)); \
	store_u##bits(p, u); \
}

BITS_ACCESSORS(int32_t, i32, 32)
BITS_ACCESSORS(double, f64, 64)

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
 * Magic and version, shared by both formats: the version is read before
 * anything else, so a newer format is never "corrupt".
 */
static km_status
check_version(const uint8_t *buf, size_t len, uint16_t *version, km_error *err)
{
	if (len < 4 || memcmp(buf, KM_MODEL_MAGIC, 4) != 0)
		return km_fail(err, KM_ERR_FORMAT, "not a kernel_ml model",
					   "The value does not begin with the kernel_ml model signature.");
	if (len < 8)
		return km_fail(err, KM_ERR_FORMAT, "truncated kernel_ml model",
					   "The model has %zu bytes, too few to hold its format version.",
					   len);
	*version = load_u16(buf + 4);
	if (*version == 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model has format version 0, which does not exist.");
	if (*version > KM_FORMAT_VERSION)
		return km_fail(err, KM_ERR_VERSION,
					   "kernel_ml model format is newer than this library supports",
					   "The model has format version %u; this build of kernel_ml reads versions up to %d.",
					   (unsigned) *version, KM_FORMAT_VERSION);
	return KM_OK;
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

static km_status
peek_v1(const uint8_t *buf, size_t len, uint32_t *n, uint32_t *d,
		uint32_t *c, km_error *err)
{
	uint32_t	hn;
	uint32_t	hd;
	uint32_t	hc;
	km_status	st = check_header_v1(buf, len, &hn, &hd, &hc, err);

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

/* The selection fields of r fit together (cv as stored: raw). */
static km_status
check_selection(const km_model *r, unsigned raw_cv, km_error *err)
{
	uint32_t	c = r->n_candidates;

	if (c == 0 ? (raw_cv != KM_CV_NONE || r->folds != 0 || r->best != 0) :
		(raw_cv < KM_CV_LOO || raw_cv > KM_CV_KFOLD || r->best >= c ||
		 (raw_cv == KM_CV_KFOLD) != (r->folds >= 2) ||
		 (raw_cv != KM_CV_KFOLD && r->folds != 0)))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The selection fields (cv %u, folds %d, best %u of %u candidates) do not fit together.",
					   raw_cv, r->folds, (unsigned) r->best, (unsigned) c);
	return KM_OK;
}

/* c candidates at p: gamma > 0, lambda >= 0, score >= 0 or NaN, std >= 0. */
static km_status
read_candidates(const uint8_t *p, uint32_t c, double *out, km_error *err)
{
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
		if (out)
			memcpy(out + 4 * (size_t) i, v, sizeof(v));
	}
	return KM_OK;
}

/*
 * Both formats decode into storage laid out as km_model_storage_doubles
 * counts it: mean (d), scale (d), alpha (n), X (n * d), candidates (4c).
 * A NULL storage validates without keeping anything.
 */
static double *
storage_at(double *storage, size_t offset)
{
	return storage ? storage + offset : NULL;
}

/* The scaler: mean and scale, d doubles each. */
static km_status
read_scaler(const uint8_t **pp, uint32_t d, double *storage, km_error *err)
{
	km_status	st;

	if ((st = read_array(pp, d, "mean", false, storage, err)) != KM_OK)
		return st;
	return read_array(pp, d, "scale", true, storage_at(storage, d), err);
}

/* The expansion: alpha (n doubles), then X (n * d). */
static km_status
read_expansion(const uint8_t **pp, uint32_t n, uint32_t d, double *storage,
			   km_error *err)
{
	km_status	st;

	if ((st = read_array(pp, n, "alpha", false,
						 storage_at(storage, 2 * (size_t) d), err)) != KM_OK)
		return st;
	return read_array(pp, (size_t) n * d, "X", false,
					  storage_at(storage, 2 * (size_t) d + n), err);
}

/* The c candidates, stored after X. */
static km_status
read_selection(const uint8_t *p, uint32_t n, uint32_t d, uint32_t c,
			   double *storage, km_error *err)
{
	return read_candidates(p, c,
						   storage_at(storage, 2 * (size_t) d + n + (size_t) n * d),
						   err);
}

/* Point r's arrays into storage as the readers above filled it. */
static void
attach_storage(km_model *r, double *storage, uint32_t n, uint32_t d)
{
	if (storage == NULL)
		return;
	r->mean = storage;
	r->scale = storage + d;
	r->alpha = storage + 2 * (size_t) d;
	r->X = storage + 2 * (size_t) d + n;
	r->candidates = (const km_candidate *) (r->X + (size_t) n * d);
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

static km_status
decode_v1(const uint8_t *buf, size_t len, km_model *m,
		  double *storage, km_error *err)
{
	uint32_t	n;
	uint32_t	d;
	uint32_t	c;
	km_status	st;
	km_model	r;
	const uint8_t *p = buf + KM_MODEL_V1_HEADER_SIZE;

	if ((st = check_header_v1(buf, len, &n, &d, &c, err)) != KM_OK ||
		(st = check_payload_v1(buf, len, err)) != KM_OK)
		return st;

	memset(&r, 0, sizeof(r));
	r.format_version = load_u16(buf + 4);
	memcpy(r.writer_version, buf + 44, 3);
	r.n_train = n;
	r.n_features = d;
	r.rows_seen = n;
	if ((st = kernel_v1(buf, &r, err)) != KM_OK ||
		(st = scalars_v1(buf, &r, err)) != KM_OK)
		return st;

	r.n_candidates = c;
	r.cv = (km_cv) buf[132];
	r.folds = load_u16(buf + 134);
	r.best = load_u32(buf + 136);
	/* km_model_size(n, d, c) succeeded, so no offset into the payload overflows. */
	if ((st = check_selection(&r, buf[132], err)) != KM_OK ||
		(st = read_scaler(&p, d, storage, err)) != KM_OK ||
		(st = read_expansion(&p, n, d, storage, err)) != KM_OK ||
		(st = read_selection(p, n, d, c, storage, err)) != KM_OK)
		return st;

	attach_storage(&r, storage, n, d);
	*m = r;
	return KM_OK;
}

/* The name of an enumeration's value, for kernel_model_info. */
static const char *
enum_name(km_field_rule rule, int v)
{
	switch (rule)
	{
		case KM_RULE_TASK:
			return km_task_name((km_task) v);
		case KM_RULE_METHOD:
			return km_method_name((km_method) v);
		case KM_RULE_KERNEL:
			return km_kernel_name((km_kernel_type) v);
		case KM_RULE_ANY:
		case KM_RULE_FINITE:
		case KM_RULE_NONNEG:
		case KM_RULE_POSITIVE:
		case KM_RULE_DEGREE:
		case KM_RULE_ZERO:
			break;
	}
	return "unknown";
}

/*
 * An integer field of a km_model (not F64 or VERSION), read as the C type
 * that holds it.
 */
static long long
model_integer(const char *v, km_field_type type)
{
	switch (type)
	{
		case KM_FIELD_U8:
			return *(const uint8_t *) v;
		case KM_FIELD_BOOL:
			return *(const bool *) v ? 1 : 0;
		case KM_FIELD_ENUM:
			return *(const int *) v;
		case KM_FIELD_U16:
			return *(const uint16_t *) v;
		case KM_FIELD_U32:
			return *(const uint32_t *) v;
		case KM_FIELD_I32:
			return *(const int32_t *) v;
		case KM_FIELD_U64:
			return (long long) *(const uint64_t *) v;
		case KM_FIELD_F64:
		case KM_FIELD_VERSION:
			break;
	}
	return 0;
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
			case KM_FIELD_U16:
			case KM_FIELD_U32:
			case KM_FIELD_I32:
			case KM_FIELD_U64:
				out->integer(out->ctx, f->name, model_integer(p, f->type));
				break;
			case KM_FIELD_F64:
				out->number(out->ctx, f->name, *(const double *) p);
				break;
			case KM_FIELD_BOOL:
				out->boolean(out->ctx, f->name, *(const bool *) p);
				break;
			case KM_FIELD_ENUM:
				out->string(out->ctx, f->name, enum_name(f->rule, *(const int *) p));
				break;
			case KM_FIELD_VERSION:
				{
					char		v[16];
					const uint8_t *b = (const uint8_t *) p;

					snprintf(v, sizeof(v), "%u.%u.%u", b[0], b[1], b[2]);
					out->string(out->ctx, f->name, v);
					break;
				}
		}
	}
}

/* ------------------------------------------------------------------ */
/* Format 2                                                           */
/* ------------------------------------------------------------------ */

#define HEADER_CRC_OFFSET (KM_MODEL_HEADER_SIZE - 4)
#define SECTION_HEAD 12			/* tag, flags, length */
#define NO_MEMORY ((size_t) -1)

/*
 * The header of format 2 from byte 16 on, in wire order: the one
 * description of its fields (model.h shows the same table for readers).
 */
typedef struct header_field
{
	size_t		at;				/* wire offset */
	km_field	f;
} header_field;

static const header_field header_fields[] = {
	{16, {"task", KM_FIELD_ENUM, offsetof(km_model, task), KM_RULE_TASK, 0}},
	{17, {"method", KM_FIELD_ENUM, offsetof(km_model, method), KM_RULE_METHOD, 0}},
	{18, {"kernel", KM_FIELD_ENUM, offsetof(km_model, kernel.type), KM_RULE_KERNEL, 0}},
	{19, {"standardize", KM_FIELD_BOOL, offsetof(km_model, standardize), KM_RULE_ANY, 0}},
	{20, {"fit_intercept", KM_FIELD_BOOL, offsetof(km_model, fit_intercept), KM_RULE_ANY, 0}},
	{21, {"kernel_ml_version", KM_FIELD_VERSION, offsetof(km_model, writer_version), KM_RULE_ANY, 0}},
	{24, {"degree", KM_FIELD_I32, offsetof(km_model, kernel.degree), KM_RULE_DEGREE, KM_PARAM_DEGREE}},
	{28, {"n_features", KM_FIELD_U32, offsetof(km_model, n_features), KM_RULE_POSITIVE, 0}},
	{32, {"gamma", KM_FIELD_F64, offsetof(km_model, kernel.gamma), KM_RULE_POSITIVE, KM_PARAM_GAMMA}},
	{40, {"coef0", KM_FIELD_F64, offsetof(km_model, kernel.coef0), KM_RULE_FINITE, KM_PARAM_COEF0}},
	{48, {"rows_seen", KM_FIELD_U64, offsetof(km_model, rows_seen), KM_RULE_ANY, 0}},
	{56, {"rows_skipped", KM_FIELD_U64, offsetof(km_model, rows_skipped), KM_RULE_ANY, 0}},
	{64, {"intercept", KM_FIELD_F64, offsetof(km_model, intercept), KM_RULE_FINITE, 0}},
};

#define N_HEADER_FIELDS (sizeof(header_fields) / sizeof(header_fields[0]))

/* The TRAINING section. */
static const km_field training_fields[] = {
	{"train_rmse", KM_FIELD_F64, offsetof(km_model, train_rmse), KM_RULE_FINITE, 0},
};

static size_t
field_size(km_field_type type)
{
	switch (type)
	{
		case KM_FIELD_U8:
		case KM_FIELD_BOOL:
		case KM_FIELD_ENUM:
			return 1;
		case KM_FIELD_U16:
			return 2;
		case KM_FIELD_U32:
		case KM_FIELD_I32:
			return 4;
		case KM_FIELD_U64:
		case KM_FIELD_F64:
			return 8;
		case KM_FIELD_VERSION:
			return 3;
	}
	return 0;
}

static size_t
fields_size(const km_field *fields, int n)
{
	size_t		size = 0;

	for (int i = 0; i < n; i++)
		size += field_size(fields[i].type);
	return size;
}

/* Enums are stored in memory as their enum type: all have int's size. */
typedef char enums_are_ints[sizeof(km_task) == sizeof(int) &&
							sizeof(km_method) == sizeof(int) &&
							sizeof(km_kernel_type) == sizeof(int) ? 1 : -1];

static void
put_field(uint8_t *p, const km_field *f, const km_model *m)
{
	const char *v = (const char *) m + f->model_offset;
	long long	i;

	if (f->rule == KM_RULE_ZERO)
	{
		memset(p, 0, field_size(f->type));
		return;
	}
	if (f->type == KM_FIELD_F64)
	{
		store_f64(p, *(const double *) v);
		return;
	}
	if (f->type == KM_FIELD_VERSION)
	{
		memcpy(p, v, 3);
		return;
	}
	/* an integer: its wire width is all that matters (I32 as two's complement) */
	i = model_integer(v, f->type);
	switch (field_size(f->type))
	{
		case 1:
			*p = (uint8_t) i;
			break;
		case 2:
			store_u16(p, (uint16_t) i);
			break;
		case 4:
			store_u32(p, (uint32_t) i);
			break;
		case 8:
			store_u64(p, (uint64_t) i);
			break;
	}
}

/* Whether the rule of f applies: always, unless the kernel ignores the parameter. */
static bool
rule_applies(const km_field *f, const km_model *m)
{
	return f->kernel_param == 0 ||
		(km_kernel_params(m->kernel.type) & f->kernel_param) != 0;
}

static km_status
bad_integer(km_error *err, const char *section, const char *field,
			long long value, const char *rule)
{
	return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
				   "Field %s of the %s is %lld; it must be %s.", field, section,
				   value, rule);
}

/* A double field: finite always, and its rule when the rule applies. */
static km_status
get_double(const uint8_t *p, const km_field *f, km_model *m,
		   const char *section, const char *name, km_error *err)
{
	double		x = load_f64(p);
	bool		applies = rule_applies(f, m);
	bool		ok = isfinite(x);
	const char *rule = "finite";

	if (f->rule == KM_RULE_ZERO)
	{
		ok = x == 0.0 && !signbit(x);
		rule = "0";
	}
	else if (applies && f->rule == KM_RULE_NONNEG)
	{
		ok = ok && x >= 0.0;
		rule = "finite and at least 0";
	}
	else if (applies && f->rule == KM_RULE_POSITIVE)
	{
		ok = ok && x > 0.0;
		rule = "finite and greater than 0";
	}
	if (!ok)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Field %s of the %s is %g; it must be %s.", name, section, x, rule);
	if (f->rule != KM_RULE_ZERO)
		memcpy((char *) m + f->model_offset, &x, sizeof(x));
	return KM_OK;
}

/* The rule an integer field breaks, or NULL. */
static const char *
integer_rule_broken(const km_field *f, long long i)
{
	if (f->type == KM_FIELD_BOOL && i > 1)
		return "0 or 1";
	switch (f->rule)
	{
		case KM_RULE_ANY:
		case KM_RULE_FINITE:
			return NULL;
		case KM_RULE_NONNEG:
			return i < 0 ? "at least 0" : NULL;
		case KM_RULE_POSITIVE:
			return i < 1 ? "at least 1" : NULL;
		case KM_RULE_DEGREE:
			return i < 1 || i > 100 ? "between 1 and 100" : NULL;
		case KM_RULE_ZERO:
			return i != 0 ? "0" : NULL;
		case KM_RULE_TASK:
			return i < KM_TASK_FIRST || i > KM_TASK_LAST ? "a known task" : NULL;
		case KM_RULE_METHOD:
			return km_method_get((km_method) i) == NULL ? "a known method" : NULL;
		case KM_RULE_KERNEL:
			return i < KM_KERNEL_FIRST || i > KM_KERNEL_LAST ? "a known kernel" : NULL;
	}
	return NULL;
}

static void
store_integer(char *v, km_field_type type, long long i)
{
	switch (type)
	{
		case KM_FIELD_U8:
			*(uint8_t *) v = (uint8_t) i;
			break;
		case KM_FIELD_BOOL:
			*(bool *) v = i != 0;
			break;
		case KM_FIELD_ENUM:
			*(int *) v = (int) i;
			break;
		case KM_FIELD_U16:
			*(uint16_t *) v = (uint16_t) i;
			break;
		case KM_FIELD_U32:
			*(uint32_t *) v = (uint32_t) i;
			break;
		case KM_FIELD_I32:
			*(int32_t *) v = (int32_t) i;
			break;
		case KM_FIELD_U64:
		case KM_FIELD_F64:
		case KM_FIELD_VERSION:
			break;
	}
}

/*
 * Read, validate and store one field.  A rule of a kernel parameter
 * applies only when m's kernel (decoded before it) uses the parameter.
 */
static km_status
get_field(const uint8_t *p, const km_field *f, km_model *m,
		  const char *section, km_error *err)
{
	char	   *v = (char *) m + f->model_offset;
	const char *name = f->name ? f->name : "reserved";
	const char *broken;
	long long	i = 0;

	switch (f->type)
	{
		case KM_FIELD_F64:
			return get_double(p, f, m, section, name, err);
		case KM_FIELD_VERSION:
			memcpy(v, p, 3);
			return KM_OK;
		case KM_FIELD_U64:
			{
				uint64_t	u = load_u64(p);

				/* 64-bit counts: any value; reserved ones 0 */
				if (f->rule == KM_RULE_ZERO && u != 0)
					return bad_integer(err, section, name, (long long) (u & INT64_MAX), "0");
				if (f->rule != KM_RULE_ZERO)
					memcpy(v, &u, sizeof(u));
				return KM_OK;
			}
		case KM_FIELD_U8:
		case KM_FIELD_BOOL:
		case KM_FIELD_ENUM:
			i = *p;
			break;
		case KM_FIELD_U16:
			i = load_u16(p);
			break;
		case KM_FIELD_U32:
			i = load_u32(p);
			break;
		case KM_FIELD_I32:
			i = load_i32(p);
			break;
	}
	broken = rule_applies(f, m) || f->type == KM_FIELD_BOOL ? integer_rule_broken(f, i) : NULL;
	if (broken)
		return bad_integer(err, section, name, i, broken);
	if (f->rule != KM_RULE_ZERO)
		store_integer(v, f->type, i);
	return KM_OK;
}

/* Payload bytes of each known section; 0 on overflow. */
static uint64_t
expansion_bytes(uint32_t n, uint32_t d)
{
	uint64_t	nd = (uint64_t) n * d;

	if (nd > KM_MODEL_MAX_SIZE / sizeof(double))
		return 0;
	return 8 + 8 * ((uint64_t) n + nd);
}

static uint64_t
selection_bytes(uint32_t c)
{
	return 16 + 32 * (uint64_t) c;
}

size_t
km_model_size(km_method method, uint32_t n, uint32_t d, uint32_t c)
{
	const km_method_ops *ops = km_method_get(method);
	uint64_t	exp = expansion_bytes(n, d);
	uint64_t	size;

	if (ops == NULL || n == 0 || d == 0 || exp == 0 || c > KM_MODEL_MAX_CANDIDATES)
		return 0;
	size = KM_MODEL_HEADER_SIZE +
		4 * (uint64_t) KM_SECTION_OVERHEAD +
		16 * (uint64_t) d + exp +
		fields_size(ops->fields, ops->n_fields) +
		fields_size(training_fields, 1);
	if (c > 0)
		size += KM_SECTION_OVERHEAD + selection_bytes(c);
	if (size > KM_MODEL_MAX_SIZE)
		return 0;
	return (size_t) size;
}

/* Section head at p; returns where its payload starts. */
static uint8_t *
begin_section(uint8_t *p, uint16_t tag, uint16_t flags, uint64_t length)
{
	store_u16(p, tag);
	store_u16(p + 2, flags);
	store_u64(p + 4, length);
	return p + SECTION_HEAD;
}

/* CRC after the payload that ends at end; returns the next section. */
static uint8_t *
end_section(uint8_t *start, uint8_t *end)
{
	store_u32(end, km_crc32c(start, (size_t) (end - start)));
	return end + 4;
}

static uint8_t *
put_fields(uint8_t *p, const km_field *fields, int n, const km_model *m)
{
	for (int i = 0; i < n; i++)
	{
		put_field(p, &fields[i], m);
		p += field_size(fields[i].type);
	}
	return p;
}

void
km_model_encode(const km_model *m, uint8_t *buf)
{
	const km_method_ops *ops = km_method_get(m->method);
	size_t		n = m->n_train;
	size_t		d = m->n_features;
	size_t		total = km_model_size(m->method, m->n_train, m->n_features,
									  m->n_candidates);
	km_model	h = *m;
	uint8_t    *p;
	uint8_t    *s;

	/* the header's task is the method's, whatever m says */
	h.task = ops->task;
	memset(buf, 0, KM_MODEL_HEADER_SIZE);
	memcpy(buf, KM_MODEL_MAGIC, 4);
	store_u16(buf + 4, KM_FORMAT_VERSION);
	store_u16(buf + 6, KM_MODEL_HEADER_SIZE);
	store_u64(buf + 8, (uint64_t) total);
	for (size_t i = 0; i < N_HEADER_FIELDS; i++)
		put_field(buf + header_fields[i].at, &header_fields[i].f, &h);
	store_u32(buf + 72, m->n_candidates > 0 ? 5 : 4);
	store_u32(buf + HEADER_CRC_OFFSET, km_crc32c(buf, HEADER_CRC_OFFSET));

	p = buf + KM_MODEL_HEADER_SIZE;
	s = p;
	p = begin_section(p, KM_SECTION_SCALER, KM_SECTION_REQUIRED, 16 * (uint64_t) d);
	p = store_doubles(p, m->mean, d);
	p = store_doubles(p, m->scale, d);
	p = end_section(s, p);

	s = p;
	p = begin_section(p, KM_SECTION_EXPANSION, KM_SECTION_REQUIRED,
					  expansion_bytes(m->n_train, m->n_features));
	store_u32(p, m->n_train);
	store_u32(p + 4, 0);
	p = store_doubles(p + 8, m->alpha, n);
	p = store_doubles(p, m->X, n * d);
	p = end_section(s, p);

	s = p;
	p = begin_section(p, KM_SECTION_METHOD, KM_SECTION_REQUIRED,
					  fields_size(ops->fields, ops->n_fields));
	p = put_fields(p, ops->fields, ops->n_fields, m);
	p = end_section(s, p);

	s = p;
	p = begin_section(p, KM_SECTION_TRAINING, KM_SECTION_REQUIRED,
					  fields_size(training_fields, 1));
	p = put_fields(p, training_fields, 1, m);
	p = end_section(s, p);

	if (m->n_candidates > 0)
	{
		s = p;
		p = begin_section(p, KM_SECTION_SELECTION, 0, selection_bytes(m->n_candidates));
		p[0] = (uint8_t) m->cv;
		p[1] = 0;
		store_u16(p + 2, (uint16_t) m->folds);
		store_u32(p + 4, m->best);
		store_u32(p + 8, m->n_candidates);
		store_u32(p + 12, 0);
		p = store_doubles(p + 16, (const double *) m->candidates,
						  4 * (size_t) m->n_candidates);
		p = end_section(s, p);
	}
}

/* One section as found by walk_sections. */
typedef struct section
{
	uint16_t	tag;
	uint16_t	flags;
	uint64_t	length;
	const uint8_t *payload;
} section;

#define MAX_KNOWN_TAG KM_SECTION_SELECTION

/* Format 2: header size, header checksum and total size. */
static km_status
check_frame_v2(const uint8_t *buf, size_t len, km_error *err)
{
	uint64_t	total;

	if (load_u16(buf + 6) != KM_MODEL_HEADER_SIZE)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The header size is %u bytes; format version 2 has %d.",
					   (unsigned) load_u16(buf + 6), KM_MODEL_HEADER_SIZE);
	if (len < KM_MODEL_HEADER_SIZE)
		return km_fail(err, KM_ERR_FORMAT, "truncated kernel_ml model",
					   "The model has %zu bytes, fewer than the %d of its header.",
					   len, KM_MODEL_HEADER_SIZE);
	if (load_u32(buf + HEADER_CRC_OFFSET) != km_crc32c(buf, HEADER_CRC_OFFSET))
		return km_fail(err, KM_ERR_CHECKSUM, "kernel_ml model is corrupted",
					   "The header checksum does not match the header.");
	total = load_u64(buf + 8);
	if (total != (uint64_t) len)
		return km_fail(err, KM_ERR_FORMAT,
					   (uint64_t) len < total ? "truncated kernel_ml model" :
					   "trailing bytes after kernel_ml model",
					   "The model has %zu bytes but its header says %llu.",
					   len, (unsigned long long) total);
	return KM_OK;
}

/*
 * Section i (0-based) of count, at byte at: its bounds, its checksum if
 * check_crc, and no unknown flags.
 */
static km_status
read_section(const uint8_t *buf, size_t len, size_t at, uint32_t i,
			 uint32_t count, bool check_crc, section *s, km_error *err)
{
	if (len - at < KM_SECTION_OVERHEAD)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Section %u of %u starts at byte %zu, too near the end of the %zu bytes.",
					   i + 1, count, at, len);
	s->tag = load_u16(buf + at);
	s->flags = load_u16(buf + at + 2);
	s->length = load_u64(buf + at + 4);
	if (s->length > len - at - KM_SECTION_OVERHEAD)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Section %u (tag %u) says %llu bytes; only %zu remain.",
					   i + 1, (unsigned) s->tag, (unsigned long long) s->length,
					   len - at - KM_SECTION_OVERHEAD);
	s->payload = buf + at + SECTION_HEAD;
	if (check_crc &&
		load_u32(s->payload + s->length) != km_crc32c(buf + at, SECTION_HEAD + (size_t) s->length))
		return km_fail(err, KM_ERR_CHECKSUM, "kernel_ml model is corrupted",
					   "The checksum of section %u (tag %u) does not match it.",
					   i + 1, (unsigned) s->tag);
	if (s->flags & ~(uint16_t) KM_SECTION_REQUIRED)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Section %u (tag %u) has unknown flags 0x%x.",
					   i + 1, (unsigned) s->tag, (unsigned) s->flags);
	return KM_OK;
}

/*
 * Section i after one with tag *last_tag: a known one lands in found[tag];
 * an unknown one is skipped unless it is required.
 */
static km_status
place_section(const section *s, uint32_t i, unsigned *last_tag,
			  section found[MAX_KNOWN_TAG + 1], km_error *err)
{
	if (s->tag <= *last_tag)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Section %u has tag %u after tag %u; tags ascend.",
					   i + 1, (unsigned) s->tag, *last_tag);
	*last_tag = s->tag;
	if (s->tag >= 1 && s->tag <= MAX_KNOWN_TAG)
	{
		/* a known section is required or not as the writer marks it */
		uint16_t	want = s->tag == KM_SECTION_SELECTION ? 0 : KM_SECTION_REQUIRED;

		if (s->flags != want)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Section %u (tag %u) has flags 0x%x; that section has 0x%x.",
						   i + 1, (unsigned) s->tag, (unsigned) s->flags, (unsigned) want);
		found[s->tag] = *s;
	}
	else if (s->flags & KM_SECTION_REQUIRED)
		return km_fail(err, KM_ERR_VERSION,
					   "kernel_ml model needs a newer library",
					   "The model has a required section with tag %u, which this build of kernel_ml does not know.",
					   (unsigned) s->tag);
	return KM_OK;
}

/*
 * Format 2 framing: header size and checksum, total size, and every
 * section's bounds (and, if check_crc, its checksum), in ascending tag
 * order.  Known sections land in found[tag]; an unknown required one is
 * KM_ERR_VERSION.  Afterwards every byte of buf is accounted for.
 */
static km_status
walk_sections(const uint8_t *buf, size_t len, bool check_crc,
			  section found[MAX_KNOWN_TAG + 1], km_error *err)
{
	uint32_t	count;
	size_t		at = KM_MODEL_HEADER_SIZE;
	unsigned	last_tag = 0;
	km_status	st;

	if ((st = check_frame_v2(buf, len, err)) != KM_OK)
		return st;

	memset(found, 0, sizeof(section) * (MAX_KNOWN_TAG + 1));
	count = load_u32(buf + 72);
	for (uint32_t i = 0; i < count; i++)
	{
		section		s;

		if ((st = read_section(buf, len, at, i, count, check_crc, &s, err)) != KM_OK ||
			(st = place_section(&s, i, &last_tag, found, err)) != KM_OK)
			return st;
		at += KM_SECTION_OVERHEAD + (size_t) s.length;
	}
	if (at != len)
		return km_fail(err, KM_ERR_FORMAT, "trailing bytes after kernel_ml model",
					   "The %u sections end at byte %zu of %zu.", count, at, len);
	for (unsigned tag = KM_SECTION_SCALER; tag <= KM_SECTION_TRAINING; tag++)
		if (found[tag].payload == NULL)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "The model has no section with tag %u.", tag);
	return KM_OK;
}

/* n, d and c from the framing, checked against the section lengths. */
static km_status
sizes_v2(const uint8_t *buf, const section *found, uint32_t *n, uint32_t *d,
		 uint32_t *c, km_error *err)
{
	const section *exp = &found[KM_SECTION_EXPANSION];
	const section *sel = &found[KM_SECTION_SELECTION];

	*d = load_u32(buf + 28);
	*n = exp->length >= 8 ? load_u32(exp->payload) : 0;
	*c = sel->payload && sel->length >= 16 ? load_u32(sel->payload + 8) : 0;
	if (*d < 1 || found[KM_SECTION_SCALER].length != 16 * (uint64_t) *d)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The scaler has %llu bytes for %u features.",
					   (unsigned long long) found[KM_SECTION_SCALER].length,
					   (unsigned) *d);
	if (*n < 1 || expansion_bytes(*n, *d) != exp->length)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The expansion has %llu bytes for %u rows of %u features.",
					   (unsigned long long) exp->length, (unsigned) *n, (unsigned) *d);
	if (sel->payload &&
		(*c < 1 || *c > KM_MODEL_MAX_CANDIDATES || selection_bytes(*c) != sel->length))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The selection has %llu bytes for %u candidates.",
					   (unsigned long long) sel->length, (unsigned) *c);
	return KM_OK;
}

static km_status
get_fields(const uint8_t *p, uint64_t length, const km_field *fields, int nf,
		   km_model *m, const char *section_name, km_error *err)
{
	km_status	st;

	if (length != fields_size(fields, nf))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The %s has %llu bytes; it must have %zu.", section_name,
					   (unsigned long long) length, fields_size(fields, nf));
	for (int i = 0; i < nf; i++)
	{
		if ((st = get_field(p, &fields[i], m, section_name, err)) != KM_OK)
			return st;
		p += field_size(fields[i].type);
	}
	return KM_OK;
}

/* Format 2: the header, method and training fields into r. */
static km_status
fields_v2(const uint8_t *buf, const section *found, km_model *r, km_error *err)
{
	const km_method_ops *ops;
	km_status	st;

	for (size_t i = 0; i < N_HEADER_FIELDS; i++)
		if ((st = get_field(buf + header_fields[i].at, &header_fields[i].f, r,
							"header", err)) != KM_OK)
			return st;
	ops = km_method_get(r->method);
	if (r->task != ops->task)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The header says task %u, but method \"%s\" does %s.",
					   (unsigned) r->task, ops->name, km_task_name(ops->task));
	if ((st = get_fields(found[KM_SECTION_METHOD].payload, found[KM_SECTION_METHOD].length,
						 ops->fields, ops->n_fields, r, "method section", err)) != KM_OK)
		return st;
	return get_fields(found[KM_SECTION_TRAINING].payload,
					  found[KM_SECTION_TRAINING].length, training_fields, 1,
					  r, "training section", err);
}

/* Format 2: the SELECTION section, if there is one, with its c candidates. */
static km_status
selection_v2(const section *sel, uint32_t n, uint32_t d, uint32_t c,
			 km_model *r, double *storage, km_error *err)
{
	const uint8_t *p = sel->payload;
	km_status	st;

	if (c == 0)
		return KM_OK;
	r->n_candidates = c;
	r->cv = (km_cv) p[0];
	r->folds = load_u16(p + 2);
	r->best = load_u32(p + 4);
	if (p[1] != 0 || load_u32(p + 12) != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A reserved field of the selection is not zero.");
	if ((st = check_selection(r, p[0], err)) != KM_OK)
		return st;
	return read_selection(p + 16, n, d, c, storage, err);
}

static km_status
decode_v2(const uint8_t *buf, size_t len, km_model *m, double *storage,
		  km_error *err)
{
	section		found[MAX_KNOWN_TAG + 1];
	km_model	r;
	uint32_t	n,
				d,
				c;
	const uint8_t *p;
	km_status	st;

	if ((st = walk_sections(buf, len, true, found, err)) != KM_OK ||
		(st = sizes_v2(buf, found, &n, &d, &c, err)) != KM_OK)
		return st;

	memset(&r, 0, sizeof(r));
	r.format_version = 2;
	r.n_train = n;
	if ((st = fields_v2(buf, found, &r, err)) != KM_OK)
		return st;

	p = found[KM_SECTION_SCALER].payload;
	if ((st = read_scaler(&p, d, storage, err)) != KM_OK)
		return st;
	p = found[KM_SECTION_EXPANSION].payload;
	if (load_u32(p + 4) != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A reserved field of the expansion is not zero.");
	p += 8;
	if ((st = read_expansion(&p, n, d, storage, err)) != KM_OK ||
		(st = selection_v2(&found[KM_SECTION_SELECTION], n, d, c, &r, storage,
						   err)) != KM_OK)
		return st;

	attach_storage(&r, storage, n, d);
	*m = r;
	return KM_OK;
}

km_status
km_model_peek(const uint8_t *buf, size_t len, uint32_t *n, uint32_t *d,
			  uint32_t *c, km_error *err)
{
	uint16_t	version;
	km_status	st;
	section		found[MAX_KNOWN_TAG + 1];
	uint32_t	hn,
				hd,
				hc;

	if ((st = check_version(buf, len, &version, err)) != KM_OK)
		return st;
	if (version == 1)
		return peek_v1(buf, len, n, d, c, err);
	if ((st = walk_sections(buf, len, false, found, err)) != KM_OK ||
		(st = sizes_v2(buf, found, &hn, &hd, &hc, err)) != KM_OK)
		return st;
	*n = hn;
	*d = hd;
	*c = hc;
	return KM_OK;
}

km_status
km_model_decode(const uint8_t *buf, size_t len, km_model *m,
				double *storage, km_error *err)
{
	uint16_t	version;
	km_status	st;

	if ((st = check_version(buf, len, &version, err)) != KM_OK)
		return st;
	if (version == 1)
		return decode_v1(buf, len, m, storage, err);
	return decode_v2(buf, len, m, storage, err);
}

void
km_model_describe_header(const km_model *m, const km_describer *out)
{
	for (size_t i = 0; i < N_HEADER_FIELDS; i++)
	{
		const km_field *f = &header_fields[i].f;

		if (!rule_applies(f, m))
			continue;
		km_model_describe_fields(m, f, 1, out);
	}
}
