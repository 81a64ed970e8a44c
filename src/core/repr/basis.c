/*
 * basis.c - the basis pass of approximate models (basis.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"
#include "crc32c.h"

/* The final basis: this header, mean[d], scale[d], centres[m][d], trailer. */
typedef struct basis_header
{
	int32_t		vl_len_;
	uint32_t	magic;			/* KM_BASIS_MAGIC */
	uint16_t	version;
	uint8_t		kind;
	uint8_t		standardize;
	uint32_t	d;
	uint32_t	m;				/* centres (nystrom) or random features (rff) */
	uint32_t	components;		/* asked for */
	uint32_t	kernel_type;
	int32_t		degree;
	uint32_t	reserved;
	double		gamma;
	double		coef0;
	uint64_t	seed;
	uint64_t	rows;
	double		data[];
} basis_header;

/* After the doubles: the CRC-32C of every byte from magic to here. */
typedef struct basis_trailer
{
	uint32_t	crc;
	uint32_t	zero;
} basis_trailer;

#define HUGE_FEATURES_HINT "Rescale the features: their mean or spread is beyond the range of double precision."

/* KM_ERR_OVERFLOW for features too large for the scaler, with its hint. */
static km_status
huge_features(km_error *err)
{
	snprintf(err->hint, sizeof(err->hint), "%s", HUGE_FEATURES_HINT);
	return KM_ERR_OVERFLOW;
}

/* a * b + c in size_t, or 0 on overflow */
static size_t
mul_add(size_t a, size_t b, size_t c)
{
	if (b != 0 && a > (SIZE_MAX - c) / b)
		return 0;
	return a * b + c;
}

static uint32_t
capacity_of(km_approx kind, uint32_t components)
{
	return km_repr_lookup(kind)->centres ? components : 0;
}

size_t
km_basis_state_bytes(km_approx kind, uint32_t d, uint32_t components)
{
	size_t		cap = capacity_of(kind, components);
	size_t		per;			/* doubles per centre: key + row */
	size_t		nd;

	if (d == 0 || km_repr_get(kind) == NULL || !km_repr_get(kind)->approximate ||
		components == 0)
		return 0;
	per = (size_t) d + 1;
	nd = mul_add(cap, per, 2 * (size_t) d);
	if (nd == 0)
		return 0;
	return mul_add(nd, sizeof(double), sizeof(km_basis_state));
}

static double *
state_mean(km_basis_state *st)
{
	return st->data;
}

static double *
state_m2(km_basis_state *st)
{
	return st->data + st->d;
}

static uint64_t *
state_keys(km_basis_state *st)
{
	return (uint64_t *) (st->data + 2 * (size_t) st->d);
}

static double *
state_rows(km_basis_state *st)
{
	return st->data + 2 * (size_t) st->d + st->capacity;
}

/* const forms, for states that came from elsewhere */
#define CSTATE(st) ((km_basis_state *) (st))

void
km_basis_state_init(km_basis_state *st, km_approx kind, const km_kernel *kernel,
					bool standardize, uint32_t d, uint32_t components,
					uint64_t seed)
{
	size_t		bytes = km_basis_state_bytes(kind, d, components);

	memset((char *) st + sizeof(int32_t), 0, bytes - sizeof(int32_t));
	km_basis_state_init_zeroed(st, kind, kernel, standardize, d, components, seed);
}

void
km_basis_state_init_zeroed(km_basis_state *st, km_approx kind, const km_kernel *kernel,
						   bool standardize, uint32_t d, uint32_t components,
						   uint64_t seed)
{
	st->magic = KM_BASIS_STATE_MAGIC;
	st->version = KM_BASIS_VERSION;
	st->kind = (uint8_t) kind;
	st->standardize = standardize ? 1 : 0;
	st->d = d;
	st->components = components;
	st->capacity = capacity_of(kind, components);
	st->kernel_type = (uint32_t) kernel->type;
	st->degree = kernel->degree;
	st->gamma = kernel->gamma;
	st->coef0 = kernel->coef0;
	st->seed = seed;
}

static bool
all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

/* Order of two candidate centres: key, then the values. */
static int
key_cmp(uint64_t ka, const double *a, uint64_t kb, const double *b, uint32_t d)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	for (uint32_t j = 0; j < d; j++)
		if (a[j] != b[j])
			return a[j] < b[j] ? -1 : 1;
	return 0;
}

static uint32_t
find_max_slot(km_basis_state *st)
{
	uint64_t   *keys = state_keys(st);
	double	   *rows = state_rows(st);
	uint32_t	best = 0;

	for (uint32_t i = 1; i < st->n_centres; i++)
		if (key_cmp(keys[i], rows + (size_t) i * st->d,
					keys[best], rows + (size_t) best * st->d, st->d) > 0)
			best = i;
	return best;
}

km_status
km_basis_state_check_header(const km_basis_state *st, size_t len, km_error *err)
{
	size_t		want;

	if (len < sizeof(km_basis_state))
		return km_fail(err, KM_ERR_FORMAT, "basis state is truncated",
					   "The state has %zu bytes; its header alone has %zu.",
					   len, sizeof(km_basis_state));
	if (st->magic != KM_BASIS_STATE_MAGIC)
		return km_fail(err, KM_ERR_FORMAT, "basis state is not a kernel_ml basis state",
					   "Its first bytes are not the kernel_ml basis state magic number.");
	if (st->version != KM_BASIS_VERSION)
		return km_fail(err, KM_ERR_VERSION, "basis state has an unknown version",
					   "The state has version %u; this build reads version %d.",
					   (unsigned) st->version, KM_BASIS_VERSION);
	want = km_basis_state_bytes((km_approx) st->kind, st->d, st->components);
	if (want == 0 || want != len ||
		st->capacity != capacity_of((km_approx) st->kind, st->components))
		return km_fail(err, KM_ERR_FORMAT, "basis state has an invalid shape",
					   "The state has %zu bytes, kind %u, %u features, %u components and capacity %u.",
					   len, (unsigned) st->kind, (unsigned) st->d, (unsigned) st->components,
					   (unsigned) st->capacity);
	if (st->rows < 0 || st->rows == INT64_MAX || st->n_centres > st->capacity ||
		(uint64_t) st->n_centres > (uint64_t) st->rows ||
		(st->n_centres > 0 && st->max_slot >= st->n_centres) ||
		st->kernel_type < KM_KERNEL_FIRST || st->kernel_type > KM_KERNEL_LAST ||
		st->reserved != 0 || st->standardize > 1)
		return km_fail(err, KM_ERR_FORMAT, "basis state has invalid fields",
					   "The state counts %lld rows and %u of %u centres.",
					   (long long) st->rows, (unsigned) st->n_centres,
					   (unsigned) st->capacity);
	/* what km_basis_decode refuses of the basis it finishes into */
	if (!km_repr_serves(km_repr_get(st->kind), (int) st->kernel_type))
		return km_fail(err, KM_ERR_FORMAT, "basis state has invalid fields",
					   "The state has approximation \"%s\" over the %s kernel, which it does not serve.",
					   km_approx_name((km_approx) st->kind),
					   km_kernel_name((km_kernel_type) st->kernel_type));
	return KM_OK;
}

km_status
km_basis_state_validate(const km_basis_state *st, size_t len, km_error *err)
{
	if (km_basis_state_check_header(st, len, err) != KM_OK)
		return err->status;
	/* rows of huge features overflow the moments: not a format error */
	if (!all_finite(st->data, 2 * (size_t) st->d))
	{
		km_fail(err, KM_ERR_OVERFLOW, "feature moments are out of range",
				"A mean or sum of squares of the features overflowed over %lld rows.",
				(long long) st->rows);
		return huge_features(err);
	}
	if (!all_finite(state_rows(CSTATE(st)), (size_t) st->n_centres * st->d) ||
		!isfinite(st->gamma) || !isfinite(st->coef0))
		return km_fail(err, KM_ERR_FORMAT, "basis state is not finite",
					   "A centre or kernel parameter of the state is not a finite number.");
	if (st->n_centres > 0 && find_max_slot(CSTATE(st)) != st->max_slot)
		return km_fail(err, KM_ERR_FORMAT, "basis state has invalid fields",
					   "Its largest centre key is not where the state says.");
	return KM_OK;
}

/* Whether (key, x) is one of the centres kept. */
static bool
kept(km_basis_state *st, const double *x, uint64_t key)
{
	uint64_t   *keys = state_keys(st);
	double	   *rows = state_rows(st);

	for (uint32_t i = 0; i < st->n_centres; i++)
		if (keys[i] == key &&
			key_cmp(key, x, keys[i], rows + (size_t) i * st->d, st->d) == 0)
			return true;
	return false;
}

/* Keep (key, x) if it is among the capacity smallest. */
static void
offer_centre(km_basis_state *st, const double *x, uint64_t key)
{
	uint64_t   *keys = state_keys(st);
	double	   *rows = state_rows(st);
	uint32_t	d = st->d;
	uint32_t	slot;

	if (st->capacity == 0)
		return;
	if (st->n_centres == st->capacity &&
		key_cmp(key, x, keys[st->max_slot], rows + (size_t) st->max_slot * d, d) >= 0)
		return;					/* the common case: not among the smallest */
	if (kept(st, x, key))
		return;
	slot = st->n_centres < st->capacity ? st->n_centres++ : st->max_slot;
	keys[slot] = key;
	memcpy(rows + (size_t) slot * d, x, sizeof(double) * d);
	st->max_slot = find_max_slot(st);
}

void
km_basis_state_add(km_basis_state *st, const double *x, uint64_t hash)
{
	double	   *mean = state_mean(st);
	double	   *m2 = state_m2(st);
	uint32_t	d = st->d;
	const double *row = x;
	double		n;

	st->rows++;
	n = (double) st->rows;
	/* Welford's update */
	for (uint32_t j = 0; j < d; j++)
	{
		double		delta = row[j] - mean[j];

		mean[j] += delta / n;
		m2[j] += delta * (row[j] - mean[j]);
	}
	offer_centre(st, row, hash);
}

km_status
km_basis_state_combine(km_basis_state *a, const km_basis_state *b,
					   km_error *err)
{
	double	   *ma = state_mean(a);
	double	   *qa = state_m2(a);
	const double *mb = state_mean(CSTATE(b));
	const double *qb = state_m2(CSTATE(b));
	double		na = (double) a->rows;
	double		nb = (double) b->rows;
	const uint64_t *kb = state_keys(CSTATE(b));
	const double *rb = state_rows(CSTATE(b));

	if (a->kind != b->kind || a->d != b->d || a->components != b->components ||
		a->seed != b->seed || a->kernel_type != b->kernel_type ||
		a->degree != b->degree || a->gamma != b->gamma || a->coef0 != b->coef0 ||
		a->standardize != b->standardize)
		return km_fail(err, KM_ERR_INVALID, "basis states do not match",
					   "One state has kind %u, %u features and %u components, the other kind %u, %u features and %u components (or their kernels or seeds differ).",
					   (unsigned) a->kind, (unsigned) a->d, (unsigned) a->components,
					   (unsigned) b->kind, (unsigned) b->d, (unsigned) b->components);
	if (b->rows == 0)
		return KM_OK;
	/* Chan, Golub and LeVeque: the moments of the union */
	for (uint32_t j = 0; j < a->d; j++)
	{
		double		delta = mb[j] - ma[j];
		double		n = na + nb;

		ma[j] += delta * (nb / n);
		qa[j] += qb[j] + delta * delta * (na * nb / n);
	}
	a->rows += b->rows;
	for (uint32_t i = 0; i < b->n_centres; i++)
		offer_centre(a, rb + (size_t) i * b->d, kb[i]);
	return KM_OK;
}

static size_t
final_bytes(km_approx kind, uint32_t d, uint32_t m)
{
	size_t		nd = mul_add(km_repr_lookup(kind)->centres ? m : 0, d, 2 * (size_t) d);

	if (nd == 0)
		return 0;
	return mul_add(nd, sizeof(double), sizeof(basis_header) + sizeof(basis_trailer));
}

/* m of the final basis: the centres kept, or the random features asked for */
static uint32_t
final_m(const km_basis_state *st)
{
	return km_repr_lookup(st->kind)->centres ? st->n_centres : st->components;
}

size_t
km_basis_bytes(km_approx kind, uint32_t d, uint32_t m)
{
	const km_repr_ops *r = km_repr_get(kind);

	if (r == NULL || !r->approximate || d == 0 || m == 0)
		return 0;
	return final_bytes(kind, d, m);
}

size_t
km_basis_final_bytes(const km_basis_state *st)
{
	return final_bytes((km_approx) st->kind, st->d, final_m(st));
}

int
km_row_ref_cmp(const void *pa, const void *pb)
{
	const km_row_ref *a = pa;
	const km_row_ref *b = pb;

	return key_cmp(a->key, a->row, b->key, b->row, a->d);
}

size_t
km_basis_finish_scratch_bytes(const km_basis_state *st)
{
	return mul_add(st->n_centres, sizeof(km_row_ref), 0);
}

km_status
km_basis_finish(const km_basis_state *st, void *out, void *scratch, km_error *err)
{
	basis_header *h = out;
	uint32_t	d = st->d;
	uint32_t	m = final_m(st);
	size_t		len = km_basis_final_bytes(st);
	double	   *mean = h->data;
	double	   *scale = mean + d;
	double	   *centres = scale + d;
	const double *smean = state_mean(CSTATE(st));
	const double *sm2 = state_m2(CSTATE(st));
	km_row_ref *refs = scratch;
	basis_trailer *t;

	if (st->rows == 0 || m == 0)
		return km_fail(err, KM_ERR_INVALID, "basis has no rows",
					   "Every row had a NULL feature array.");
	memset((char *) out + sizeof(int32_t), 0, len - sizeof(int32_t));
	h->magic = KM_BASIS_MAGIC;
	h->version = KM_BASIS_VERSION;
	h->kind = st->kind;
	h->standardize = st->standardize;
	h->d = d;
	h->m = m;
	h->components = st->components;
	h->kernel_type = st->kernel_type;
	h->degree = st->degree;
	h->gamma = st->gamma;
	h->coef0 = st->coef0;
	h->seed = st->seed;
	h->rows = (uint64_t) st->rows;
	for (uint32_t j = 0; j < d; j++)
	{
		if (st->standardize)
		{
			double		s = sqrt(sm2[j] / (double) st->rows);

			mean[j] = smean[j];
			scale[j] = isfinite(s) && s > 0.0 ? s : 1.0;
		}
		else
		{
			mean[j] = 0.0;
			scale[j] = 1.0;
		}
		/* what km_basis_decode refuses is refused here, as an overflow */
		if (!isfinite(mean[j]))
		{
			km_fail(err, KM_ERR_OVERFLOW, "feature mean is out of range",
					"The mean of feature %u overflowed over %lld rows.",
					(unsigned) j + 1, (long long) st->rows);
			return huge_features(err);
		}
	}
	if (km_repr_lookup(st->kind)->centres)
	{
		const uint64_t *keys = state_keys(CSTATE(st));
		const double *rows = state_rows(CSTATE(st));

		for (uint32_t i = 0; i < m; i++)
		{
			refs[i].key = keys[i];
			refs[i].row = rows + (size_t) i * d;
			refs[i].d = d;
		}
		qsort(refs, m, sizeof(km_row_ref), km_row_ref_cmp);
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t j = 0; j < d; j++)
			{
				double		z = (refs[i].row[j] - mean[j]) / scale[j];

				if (!isfinite(z))
					return km_fail(err, KM_ERR_OVERFLOW, "standardized centre is not finite",
								   "Feature %u of centre %u overflowed when standardized.",
								   (unsigned) j + 1, (unsigned) i + 1);
				centres[(size_t) i * d + j] = z;
			}
	}
	t = (basis_trailer *) ((char *) out + len - sizeof(basis_trailer));
	t->crc = km_crc32c((const char *) out + sizeof(int32_t),
					   len - sizeof(int32_t) - sizeof(basis_trailer));
	t->zero = 0;
	return KM_OK;
}

km_status
km_basis_decode(const void *bytes, size_t len, km_basis *b, km_error *err)
{
	const basis_header *h = bytes;
	const basis_trailer *t;
	const km_repr_ops *r;
	km_kernel	kernel;
	size_t		want;
	size_t		nd;

	if (len < sizeof(basis_header) + sizeof(basis_trailer))
		return km_fail(err, KM_ERR_FORMAT, "basis is truncated",
					   "The basis has %zu bytes; its header alone has %zu.",
					   len, sizeof(basis_header) + sizeof(basis_trailer));
	if (h->magic != KM_BASIS_MAGIC)
		return km_fail(err, KM_ERR_FORMAT, "value is not a kernel_ml basis",
					   "Its first bytes are not the kernel_ml basis magic number.");
	if (h->version != KM_BASIS_VERSION)
		return km_fail(err, KM_ERR_VERSION, "basis has an unknown version",
					   "The basis has version %u; this build reads version %d.",
					   (unsigned) h->version, KM_BASIS_VERSION);
	r = km_repr_get(h->kind);
	want = r != NULL && r->approximate && h->m > 0 ?
		final_bytes((km_approx) h->kind, h->d, h->m) : 0;
	if (want == 0 || want != len)
		return km_fail(err, KM_ERR_FORMAT, "basis has an invalid shape",
					   "The basis has %zu bytes, kind %u, %u features and %u components.",
					   len, (unsigned) h->kind, (unsigned) h->d, (unsigned) h->m);
	t = (const basis_trailer *) ((const char *) bytes + len - sizeof(basis_trailer));
	if (t->zero != 0 ||
		t->crc != km_crc32c((const char *) bytes + sizeof(int32_t),
							len - sizeof(int32_t) - sizeof(basis_trailer)))
		return km_fail(err, KM_ERR_CHECKSUM, "basis fails its checksum",
					   "The basis bytes were changed after kernel_basis wrote them.");
	nd = (len - sizeof(basis_header) - sizeof(basis_trailer)) / sizeof(double);
	kernel.type = (km_kernel_type) h->kernel_type;
	kernel.degree = h->degree;
	kernel.gamma = h->gamma;
	kernel.coef0 = h->coef0;
	if (km_kernel_invalid(&kernel) != NULL ||
		h->standardize > 1 || h->reserved != 0 || h->components == 0 ||
		(r->centres && (h->m > h->components || h->m > h->rows)) ||
		(r->drawn && h->m != h->components) ||
		!km_repr_serves(r, h->kernel_type) || !all_finite(h->data, nd))
		return km_fail(err, KM_ERR_FORMAT, "basis has invalid fields",
					   "The basis has kernel %u (its %s), %u of %u components over %llu rows, or a value that is not finite.",
					   (unsigned) h->kernel_type,
					   km_kernel_invalid(&kernel) ? km_kernel_invalid(&kernel) : "parameters in range",
					   (unsigned) h->m,
					   (unsigned) h->components, (unsigned long long) h->rows);
	for (uint32_t j = 0; j < h->d; j++)
		if (!(h->data[h->d + j] > 0.0))
			return km_fail(err, KM_ERR_FORMAT, "basis has invalid fields",
						   "The scale of feature %u is not positive.", (unsigned) j + 1);
	memset(b, 0, sizeof(*b));
	b->kind = (km_approx) h->kind;
	b->kernel.type = (km_kernel_type) h->kernel_type;
	b->kernel.degree = h->degree;
	b->kernel.gamma = h->gamma;
	b->kernel.coef0 = h->coef0;
	b->d = h->d;
	b->m = h->m;
	b->seed = h->seed;
	b->rows = h->rows;
	b->standardize = h->standardize != 0;
	b->mean = h->data;
	b->scale = h->data + h->d;
	b->centres = r->centres ? h->data + 2 * (size_t) h->d : NULL;
	b->W = NULL;
	b->b = NULL;
	return KM_OK;
}

void
km_basis_reseal(void *bytes, size_t len)
{
	basis_trailer *t;

	if (len < sizeof(basis_header) + sizeof(basis_trailer))
		return;
	t = (basis_trailer *) ((char *) bytes + len - sizeof(basis_trailer));
	t->crc = km_crc32c((const char *) bytes + sizeof(int32_t),
					   len - sizeof(int32_t) - sizeof(basis_trailer));
	t->zero = 0;
}

uint32_t
km_basis_components(const void *bytes)
{
	return ((const basis_header *) bytes)->components;
}
