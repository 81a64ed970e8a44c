/*
 * encoder.c - the row encoder of a model trained from a table (core, no
 * PostgreSQL headers): its payload codec, its validation, the imputation
 * statistics and the encoding of one row (encoder.h).
 *
 * A payload arrives inside a model anyone can craft: km_encoder_check
 * proves every length against the bytes present before reading them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "le_bytes.h"

#define ENC_HEAD 16				/* version, columns, d, impute, unknown, 0 */
#define ENC_MAX ((uint64_t) 0x3FFFFFFF)

const char *
km_impute_name(km_impute i)
{
	switch (i)
	{
		case KM_IMPUTE_MEAN:
			return "mean";
		case KM_IMPUTE_MEDIAN:
			return "median";
		case KM_IMPUTE_MOST_FREQUENT:
			return "most_frequent";
		default:
			return "none";
	}
}

const char *
km_column_kind_name(km_column_kind k)
{
	switch (k)
	{
		case KM_COLUMN_BOOL:
			return "boolean";
		case KM_COLUMN_CATEGORY:
			return "onehot";
		default:
			return "number";
	}
}

int
km_category_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

double
km_impute_number(double *vals, size_t n, km_impute how)
{
	qsort(vals, n, sizeof(double), cmp_double);
	if (how == KM_IMPUTE_MEDIAN)
		return n % 2 ? vals[n / 2] : vals[n / 2 - 1] / 2 + vals[n / 2] / 2;
	if (how == KM_IMPUTE_MOST_FREQUENT)
	{
		double		best = vals[0];
		size_t		best_run = 0;

		/* runs of equal values in ascending order: the first longest wins */
		for (size_t i = 0; i < n;)
		{
			size_t		j = i;

			while (j < n && vals[j] == vals[i])
				j++;
			if (j - i > best_run)
			{
				best_run = j - i;
				best = vals[i];
			}
			i = j;
		}
		return best == 0.0 ? 0.0 : best;
	}
	/* the mean: a running mean, which cannot overflow from finite values */
	{
		double		mean = 0.0;

		for (size_t i = 0; i < n; i++)
			mean += (vals[i] - mean) / (double) (i + 1);
		return mean;
	}
}

static uint64_t
string_bytes(const char *s)
{
	return 4 + (uint64_t) strlen(s) + 1;
}

uint64_t
km_encoder_size(const km_encoder *e)
{
	uint64_t	size = ENC_HEAD;

	for (uint32_t i = 0; i < e->n_columns; i++)
	{
		const km_encoder_column *c = &e->columns[i];

		size += string_bytes(c->name) + string_bytes(c->type_name) + 4;
		if (c->kind == KM_COLUMN_CATEGORY)
		{
			size += 8;
			for (uint32_t k = 0; k < c->n_categories; k++)
				size += string_bytes(c->categories[k]);
		}
		else
			size += 8;
		if (size > ENC_MAX)
			return 0;
	}
	if (e->target != NULL)
		size += string_bytes(e->target) + string_bytes(e->target_type) + 4;
	return size > ENC_MAX ? 0 : size;
}

static uint8_t *
put_string(uint8_t *p, const char *s)
{
	size_t		n = strlen(s);

	km_le_put_u32(p, (uint32_t) n);
	memcpy(p + 4, s, n + 1);
	return p + 4 + n + 1;
}

void
km_encoder_write(const km_encoder *e, uint8_t *p)
{
	km_le_put_u32(p, e->target != NULL ? 2 : 1);
	km_le_put_u32(p + 4, e->n_columns);
	km_le_put_u32(p + 8, e->d);
	p[12] = (uint8_t) e->impute;
	p[13] = (uint8_t) e->unknown;
	p[14] = p[15] = 0;
	p += ENC_HEAD;
	for (uint32_t i = 0; i < e->n_columns; i++)
	{
		const km_encoder_column *c = &e->columns[i];

		p = put_string(p, c->name);
		p = put_string(p, c->type_name);
		p[0] = (uint8_t) c->kind;
		p[1] = c->has_impute ? 1 : 0;
		p[2] = p[3] = 0;
		p += 4;
		if (c->kind == KM_COLUMN_CATEGORY)
		{
			km_le_put_u32(p, c->n_categories);
			km_le_put_u32(p + 4, c->has_impute ? c->impute_category : KM_ENCODER_NO_CATEGORY);
			p += 8;
			for (uint32_t k = 0; k < c->n_categories; k++)
				p = put_string(p, c->categories[k]);
		}
		else
		{
			km_le_put_f64(p, c->has_impute ? c->impute : 0.0);
			p += 8;
		}
	}
	if (e->target != NULL)
	{
		p = put_string(p, e->target);
		p = put_string(p, e->target_type);
		p[0] = (uint8_t) e->target_kind;
		p[1] = p[2] = p[3] = 0;
	}
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

static km_status
bad(km_error *err, const char *detail, unsigned col)
{
	return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
				   "The encoder section is malformed: %s (column %u).", detail, col);
}

/*
 * A string at *at of the len bytes at p: u32 n, n bytes without NUL, NUL.
 * Sets *s and *n and advances *at.
 */
static bool
take_string(const uint8_t *p, size_t len, size_t *at, const char **s, size_t *n)
{
	uint32_t	k;

	if (len - *at < 4)
		return false;
	k = km_le_get_u32(p + *at);
	if ((uint64_t) k + 1 > len - *at - 4)
		return false;
	*s = (const char *) p + *at + 4;
	if ((*s)[k] != '\0' || memchr(*s, '\0', k) != NULL)
		return false;
	*n = k;
	*at += 4 + (size_t) k + 1;
	return true;
}

/* The offset of the column after the one at at (a payload already checked). */
static size_t
skip_column(const uint8_t *p, size_t len, size_t at)
{
	const char *s;
	size_t		n;

	(void) take_string(p, len, &at, &s, &n);
	(void) take_string(p, len, &at, &s, &n);
	at += 4;
	if (p[at - 4] == KM_COLUMN_CATEGORY)
	{
		uint32_t	k = km_le_get_u32(p + at);

		at += 8;
		for (uint32_t q = 0; q < k; q++)
			(void) take_string(p, len, &at, &s, &n);
	}
	else
		at += 8;
	return at;
}

km_status
km_encoder_check(const uint8_t *p, size_t len, uint32_t d,
				 km_encoder_counts *c, km_error *err)
{
	size_t		at = ENC_HEAD;
	uint32_t	ncol;
	uint32_t	version;
	uint64_t	width = 0;
	uint64_t	ncat = 0;
	const char *target = NULL;

	if (len < ENC_HEAD)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The encoder section has %zu bytes, fewer than its %d-byte head.",
					   len, ENC_HEAD);
	version = km_le_get_u32(p);
	if (version == 0 || version > KM_ENCODER_VERSION)
		return km_fail(err, KM_ERR_VERSION, "kernel_ml model needs a newer library",
					   "The model's encoder has version %u; this build reads versions 1 to %d.",
					   (unsigned) version, KM_ENCODER_VERSION);
	ncol = km_le_get_u32(p + 4);
	if (ncol == 0 || p[12] > KM_IMPUTE_MOST_FREQUENT || p[13] > KM_UNKNOWN_ERROR ||
		p[14] != 0 || p[15] != 0 || (d != 0 && km_le_get_u32(p + 8) != d))
		return bad(err, "its head is not valid for this model", 0);
	for (uint32_t i = 0; i < ncol; i++)
	{
		const char *name;
		const char *type;
		size_t		nlen;
		size_t		tlen;
		uint8_t		kind;
		uint8_t		has;

		if (!take_string(p, len, &at, &name, &nlen) || nlen == 0 ||
			!take_string(p, len, &at, &type, &tlen) || len - at < 12)
			return bad(err, "a name runs past its end", i + 1);
		kind = p[at];
		has = p[at + 1];
		if (kind > KM_COLUMN_CATEGORY || has > 1 || p[at + 2] != 0 || p[at + 3] != 0)
			return bad(err, "a kind or flag is unknown", i + 1);
		at += 4;
		if (kind != KM_COLUMN_CATEGORY)
		{
			double		v = km_le_get_f64(p + at);

			if (!isfinite(v) || (!has && v != 0.0))
				return bad(err, "an imputed value is not finite", i + 1);
			at += 8;
			width++;
		}
		else
		{
			uint32_t	k = km_le_get_u32(p + at);
			uint32_t	imp = km_le_get_u32(p + at + 4);
			const char *prev = NULL;
			size_t		prev_len = 0;

			at += 8;
			if (k == 0 || (has ? imp >= k : imp != KM_ENCODER_NO_CATEGORY))
				return bad(err, "its categories do not fit together", i + 1);
			for (uint32_t j = 0; j < k; j++)
			{
				const char *s;
				size_t		slen;

				if (!take_string(p, len, &at, &s, &slen))
					return bad(err, "a category runs past its end", i + 1);
				if (prev != NULL && km_category_cmp(prev, prev_len, s, slen) >= 0)
					return bad(err, "its categories are not in ascending order", i + 1);
				prev = s;
				prev_len = slen;
			}
			width += k;
			ncat += k;
		}
		if (width > UINT32_MAX)
			return bad(err, "the columns are too wide", i + 1);
	}
	if (version >= 2)
	{
		const char *type;
		size_t		nlen;
		size_t		tlen;

		if (!take_string(p, len, &at, &target, &nlen) || nlen == 0 ||
			!take_string(p, len, &at, &type, &tlen) || len - at < 4)
			return bad(err, "the target's name runs past its end", ncol);
		if (p[at] > KM_COLUMN_CATEGORY || p[at + 1] != 0 || p[at + 2] != 0 || p[at + 3] != 0)
			return bad(err, "the target's kind is unknown", ncol);
		at += 4;
	}
	if (at != len)
		return bad(err, "bytes follow its last column", ncol);
	if (width != km_le_get_u32(p + 8))
		return bad(err, "the columns' widths do not add up to the features", ncol);
	/* distinct names: every column proven above, so the walk cannot fail */
	for (size_t i = 0, a = ENC_HEAD; i < ncol; i++, a = skip_column(p, len, a))
		for (size_t j = i + 1, b = skip_column(p, len, a); j < ncol;
			 j++, b = skip_column(p, len, b))
			if (strcmp((const char *) p + a + 4, (const char *) p + b + 4) == 0)
				return bad(err, "two columns have one name", (unsigned) j + 1);
	for (size_t i = 0, a = ENC_HEAD; target != NULL && i < ncol; i++, a = skip_column(p, len, a))
		if (strcmp((const char *) p + a + 4, target) == 0)
			return bad(err, "the target is one of its columns", (unsigned) i + 1);
	c->n_columns = ncol;
	c->n_categories = ncat;
	return KM_OK;
}

void
km_encoder_read(const uint8_t *p, size_t len, km_encoder *e,
				km_encoder_column *columns, const char **categories)
{
	size_t		at = ENC_HEAD;
	uint32_t	offset = 0;

	e->n_columns = km_le_get_u32(p + 4);
	e->d = km_le_get_u32(p + 8);
	e->impute = (km_impute) p[12];
	e->unknown = (km_unknown) p[13];
	e->columns = columns;
	e->target = NULL;
	e->target_type = NULL;
	e->target_kind = KM_COLUMN_NUMBER;
	for (uint32_t i = 0; i < e->n_columns; i++)
	{
		km_encoder_column *c = &columns[i];
		size_t		n;

		(void) take_string(p, len, &at, &c->name, &n);
		(void) take_string(p, len, &at, &c->type_name, &n);
		c->kind = (km_column_kind) p[at];
		c->has_impute = p[at + 1] != 0;
		at += 4;
		c->offset = offset;
		c->impute = 0.0;
		c->impute_category = KM_ENCODER_NO_CATEGORY;
		c->n_categories = 0;
		c->categories = NULL;
		if (c->kind == KM_COLUMN_CATEGORY)
		{
			c->n_categories = km_le_get_u32(p + at);
			c->impute_category = km_le_get_u32(p + at + 4);
			at += 8;
			c->categories = categories;
			for (uint32_t k = 0; k < c->n_categories; k++)
				(void) take_string(p, len, &at, &categories[k], &n);
			categories += c->n_categories;
			offset += c->n_categories;
		}
		else
		{
			c->impute = km_le_get_f64(p + at);
			at += 8;
			offset++;
		}
	}
	if (km_le_get_u32(p) >= 2)
	{
		size_t		n;

		(void) take_string(p, len, &at, &e->target, &n);
		(void) take_string(p, len, &at, &e->target_type, &n);
		e->target_kind = (km_column_kind) p[at];
	}
}

uint32_t
km_encoder_find_category(const km_encoder_column *c, const char *s, size_t len)
{
	uint32_t	lo = 0;
	uint32_t	hi = c->n_categories;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;
		const char *m = c->categories[mid];
		int			cmp = km_category_cmp(m, strlen(m), s, len);

		if (cmp == 0)
			return mid;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return KM_ENCODER_NO_CATEGORY;
}

km_encode_fault
km_encoder_encode(const km_encoder *e, const km_encoder_value *vals, double *x,
				  uint32_t *bad_col)
{
	for (uint32_t i = 0; i < e->n_columns; i++)
	{
		const km_encoder_column *c = &e->columns[i];
		const km_encoder_value *v = &vals[i];

		*bad_col = i;
		if (c->kind == KM_COLUMN_CATEGORY)
		{
			uint32_t	k;

			memset(x + c->offset, 0, sizeof(double) * c->n_categories);
			if (v->isnull)
			{
				if (!c->has_impute)
					return KM_ENCODE_NULL;
				k = c->impute_category;
			}
			else
			{
				k = km_encoder_find_category(c, v->str, v->len);
				if (k == KM_ENCODER_NO_CATEGORY && e->unknown == KM_UNKNOWN_ERROR)
					return KM_ENCODE_UNKNOWN;
			}
			if (k != KM_ENCODER_NO_CATEGORY)
				x[c->offset + k] = 1.0;
		}
		else if (v->isnull)
		{
			if (!c->has_impute)
				return KM_ENCODE_NULL;
			x[c->offset] = c->impute;
		}
		else
		{
			if (!isfinite(v->number))
				return KM_ENCODE_NOT_FINITE;
			x[c->offset] = v->number;
		}
	}
	return KM_ENCODE_OK;
}
