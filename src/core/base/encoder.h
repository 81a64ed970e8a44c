/*
 * encoder.h - the row encoder of a model trained from a table (core, no
 * PostgreSQL headers): the columns a model takes by name, how each becomes
 * features (a number, a boolean as 0 / 1, a category one-hot), and the
 * values that stand in for NULLs, learned from the training rows.  Encoding
 * a row gives the d features the model was fitted on; the model's own
 * standardisation follows, as for any float8[] row.
 *
 * Stored in the model as the ENCODER section (model_sections_encoder.c):
 * its payload is the bytes km_encoder_write gives, validated by
 * km_encoder_check on every read.  Payload, little-endian:
 *
 *   u32 version (1 or 2), u32 columns, u32 d, u8 impute, u8 unknown, u16 0
 *   each column:
 *     u32 name bytes, the name, NUL
 *     u32 type bytes, the SQL type's name, NUL
 *     u8 kind, u8 has_impute, u16 0
 *     number / boolean: f64 the imputed value (0 without), finite
 *     category: u32 categories (>= 1), u32 the imputed one (its index, or
 *               0xFFFFFFFF without), then each category as u32 bytes,
 *               the bytes, NUL, in strictly ascending byte order
 *   version 2 only, the target column the model was trained on:
 *     u32 name bytes, the name, NUL
 *     u32 type bytes, the SQL type's name, NUL
 *     u8 kind (number: a regression target or a number label; boolean,
 *     category: a label), u8 0, u16 0
 *
 * Names and categories are UTF-8 without NUL; column names (the target's
 * too) are distinct; the columns' widths (1, or the categories) add up to
 * d.  A version 1 payload (written before models kept their target) reads
 * as an encoder without a target; one without a target is still written
 * as version 1.
 */
#ifndef KM_ENCODER_H
#define KM_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

#define KM_ENCODER_VERSION 2		/* the newest this build reads */
#define KM_ENCODER_NO_CATEGORY UINT32_MAX

typedef enum km_column_kind
{
	KM_COLUMN_NUMBER = 0,		/* integer, float, numeric */
	KM_COLUMN_BOOL = 1,			/* false 0, true 1 */
	KM_COLUMN_CATEGORY = 2		/* text, varchar, enum: one-hot */
} km_column_kind;

typedef enum km_impute
{
	KM_IMPUTE_NONE = 0,			/* a NULL is an error */
	KM_IMPUTE_MEAN = 1,
	KM_IMPUTE_MEDIAN = 2,
	KM_IMPUTE_MOST_FREQUENT = 3
} km_impute;

typedef enum km_unknown
{
	KM_UNKNOWN_IGNORE = 0,		/* an unseen category: all zeros */
	KM_UNKNOWN_ERROR = 1
} km_unknown;

typedef struct km_encoder_column
{
	const char *name;			/* NUL-terminated */
	const char *type_name;
	km_column_kind kind;
	bool		has_impute;
	double		impute;			/* number / boolean */
	uint32_t	impute_category;	/* category: index, or KM_ENCODER_NO_CATEGORY */
	uint32_t	n_categories;
	const char *const *categories;	/* n_categories, ascending */
	uint32_t	offset;			/* its first feature */
} km_encoder_column;

typedef struct km_encoder
{
	uint32_t	n_columns;
	uint32_t	d;
	km_impute	impute;
	km_unknown	unknown;
	const km_encoder_column *columns;
	/* the target column, or NULL (a version 1 payload) */
	const char *target;
	const char *target_type;
	km_column_kind target_kind;
} km_encoder;

/* What a payload holds, as km_encoder_check counts it. */
typedef struct km_encoder_counts
{
	uint32_t	n_columns;
	uint64_t	n_categories;	/* over all columns */
} km_encoder_counts;

/* Names of the enums as options and kernel_model_info write them. */
const char *km_impute_name(km_impute i);
const char *km_column_kind_name(km_column_kind k);

/* Byte order of two strings of given lengths (memcmp, then length). */
int			km_category_cmp(const char *a, size_t alen, const char *b, size_t blen);

/*
 * The statistic a numeric column's NULLs take: vals (n >= 1 finite values)
 * are sorted in place first, so that the mean is summed in one order
 * whatever order the rows came in; median: the middle value, or the mean of
 * the two middle ones (NumPy's); most frequent: the smallest of the most
 * frequent values (scikit-learn's tie rule).
 */
double		km_impute_number(double *vals, size_t n, km_impute how);

/* Payload bytes of e (its strings' lengths included); 0 beyond 1 GB. */
uint64_t	km_encoder_size(const km_encoder *e);

/* Write e's payload (km_encoder_size bytes) at buf. */
void		km_encoder_write(const km_encoder *e, uint8_t *buf);

/*
 * Validate a payload of len bytes for a model of d features (d 0: any),
 * reading no byte outside it; counts what km_encoder_read needs.
 */
km_status	km_encoder_check(const uint8_t *p, size_t len, uint32_t d,
							 km_encoder_counts *c, km_error *err);

/*
 * Point e at a payload km_encoder_check accepted: columns has
 * c->n_columns entries, categories c->n_categories; strings point into p.
 */
void		km_encoder_read(const uint8_t *p, size_t len, km_encoder *e,
							km_encoder_column *columns,
							const char **categories);

/* One raw value of a row, for km_encoder_encode. */
typedef struct km_encoder_value
{
	bool		isnull;
	double		number;			/* number / boolean */
	const char *str;			/* category: its bytes (not NUL-terminated) */
	size_t		len;
} km_encoder_value;

/* The index of a category in column c, or KM_ENCODER_NO_CATEGORY. */
uint32_t	km_encoder_find_category(const km_encoder_column *c,
									 const char *s, size_t len);

/* Why a row could not be encoded. */
typedef enum km_encode_fault
{
	KM_ENCODE_OK = 0,
	KM_ENCODE_NULL,				/* a NULL and no imputation */
	KM_ENCODE_UNKNOWN,			/* an unseen category under "unknown": "error" */
	KM_ENCODE_NOT_FINITE		/* NaN or infinity */
} km_encode_fault;

/*
 * Encode one row (vals[i]: column i of e) into x (e->d features).  On a
 * fault, *bad is the column.
 */
km_encode_fault km_encoder_encode(const km_encoder *e,
								  const km_encoder_value *vals, double *x,
								  uint32_t *bad);

#endif							/* KM_ENCODER_H */
