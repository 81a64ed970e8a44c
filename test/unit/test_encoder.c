/*
 * The row encoder of table models (src/core/base/encoder.c): its payload round
 * trip, encoding (imputation, one-hot, unseen categories), the imputation
 * statistics against values worked out by hand (NumPy's median,
 * scikit-learn's most-frequent tie rule), and a crafted payload: every
 * truncation and every byte changed is refused or reads within bounds
 * (run under ASan by make unittest-asan), with and without the target
 * column (versions 2 and 1).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "model.h"
#include "unit.h"

void		test_encoder_round_trip(void);
void		test_encoder_statistics(void);
void		test_encoder_crafted(void);
void		test_encoder_target(void);

static const char *const colours[] = {"blue", "green", "red"};

static km_encoder_column cols_fixture[3];

static km_encoder
fixture(void)
{
	km_encoder	e;

	memset(cols_fixture, 0, sizeof(cols_fixture));
	cols_fixture[0] = (km_encoder_column) {"area", "numeric", KM_COLUMN_NUMBER, true, 99.5,
		KM_ENCODER_NO_CATEGORY, 0, NULL, 0};
	cols_fixture[1] = (km_encoder_column) {"colour", "text", KM_COLUMN_CATEGORY, true, 0.0,
		1, 3, colours, 1};
	cols_fixture[2] = (km_encoder_column) {"garden", "boolean", KM_COLUMN_BOOL, false, 0.0,
		KM_ENCODER_NO_CATEGORY, 0, NULL, 4};
	e.n_columns = 3;
	e.d = 5;
	e.impute = KM_IMPUTE_MEAN;
	e.unknown = KM_UNKNOWN_IGNORE;
	e.columns = cols_fixture;
	e.target = NULL;
	e.target_type = NULL;
	e.target_kind = KM_COLUMN_NUMBER;
	return e;
}

static uint8_t *
payload(const km_encoder *e, size_t *len)
{
	uint64_t	n = km_encoder_size(e);
	uint8_t    *p = malloc(n);

	km_encoder_write(e, p);
	*len = (size_t) n;
	return p;
}

void
test_encoder_round_trip(void)
{
	km_encoder	e = fixture();
	size_t		len;
	uint8_t    *p = payload(&e, &len);
	km_encoder_counts c;
	km_error	err;
	km_encoder	r;
	km_encoder_column cols[3];
	const char *cats[3];
	km_encoder_value v[3];
	double		x[5];
	uint32_t	bad;

	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_OK, "%s", err.detail);
	CHECK(c.n_columns == 3 && c.n_categories == 3, "%u %llu", c.n_columns,
		  (unsigned long long) c.n_categories);
	CHECK(km_encoder_check(p, len, 6, &c, &err) != KM_OK, "d 6 accepted");
	km_encoder_read(p, len, &r, cols, cats);
	CHECK(r.d == 5 && strcmp(cols[1].name, "colour") == 0 && cols[1].offset == 1 &&
		  cols[2].offset == 4 && strcmp(cols[1].categories[2], "red") == 0, "read back");

	/* area NULL (imputed 99.5), colour "red", garden true */
	memset(v, 0, sizeof(v));
	v[0].isnull = true;
	v[1].str = "red";
	v[1].len = 3;
	v[2].number = 1.0;
	CHECK(km_encoder_encode(&r, v, x, &bad) == KM_ENCODE_OK, "encode");
	CHECK(x[0] == 99.5 && x[1] == 0 && x[2] == 0 && x[3] == 1 && x[4] == 1,
		  "%g %g %g %g %g", x[0], x[1], x[2], x[3], x[4]);
	/* an unseen category: all zeros; a NULL category: the most frequent (green) */
	v[1].str = "reddish";
	v[1].len = 7;
	CHECK(km_encoder_encode(&r, v, x, &bad) == KM_ENCODE_OK && x[1] + x[2] + x[3] == 0,
		  "unseen");
	v[1].isnull = true;
	CHECK(km_encoder_encode(&r, v, x, &bad) == KM_ENCODE_OK && x[2] == 1 && x[1] + x[3] == 0,
		  "null category");
	/* garden has no imputation: a NULL is a fault naming column 2 */
	v[2].isnull = true;
	CHECK(km_encoder_encode(&r, v, x, &bad) == KM_ENCODE_NULL && bad == 2, "null");
	v[2].isnull = false;
	v[0].isnull = false;
	v[0].number = NAN;
	CHECK(km_encoder_encode(&r, v, x, &bad) == KM_ENCODE_NOT_FINITE && bad == 0, "nan");
	v[0].number = 1;
	r.unknown = KM_UNKNOWN_ERROR;
	v[1].isnull = false;
	CHECK(km_encoder_encode(&r, v, x, &bad) == KM_ENCODE_UNKNOWN && bad == 1, "unknown");
	free(p);
}

void
test_encoder_statistics(void)
{
	double		a[] = {3, 1, 2, 10};
	double		b[] = {3, 1, 2, 10};
	double		c[] = {5, 2, 2, 5, 7};
	double		d[] = {4, 4, 1, 9, 9};

	CHECK_CLOSE(km_impute_number(a, 4, KM_IMPUTE_MEAN), 4.0, 1e-15);
	CHECK(km_impute_number(b, 4, KM_IMPUTE_MEDIAN) == 2.5, "even median");
	CHECK(km_impute_number(c, 5, KM_IMPUTE_MEDIAN) == 5, "odd median");
	/* ties of the most frequent go to the smallest: 2 and 5 twice each */
	CHECK(km_impute_number(c, 5, KM_IMPUTE_MOST_FREQUENT) == 2, "mode");
	CHECK(km_impute_number(d, 5, KM_IMPUTE_MOST_FREQUENT) == 4, "mode 4");
	CHECK(km_category_cmp("ab", 2, "abc", 3) < 0 && km_category_cmp("b", 1, "abc", 3) > 0,
		  "byte order");
}

static void crafted(km_encoder e);

void
test_encoder_crafted(void)
{
	km_encoder	e = fixture();

	crafted(e);
	e.target = "price";
	e.target_type = "numeric";
	crafted(e);
}

static void
crafted(km_encoder e)
{
	size_t		len;
	uint8_t    *p = payload(&e, &len);
	km_encoder_counts c;
	km_error	err;
	int			accepted = 0;

	/* every truncation refused, reading nothing beyond it */
	for (size_t n = 0; n < len; n++)
	{
		unsigned char *q = unit_copy_bytes(p, n);

		CHECK(km_encoder_check(q, n, 5, &c, &err) != KM_OK, "truncated at %zu accepted", n);
		free(q);
	}
	/* every byte changed: refused, or valid and read within bounds */
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++)
		{
			unsigned char *q = unit_copy_bytes(p, len);

			q[i] ^= (unsigned char) (1u << bit);
			if (km_encoder_check(q, len, 5, &c, &err) == KM_OK)
			{
				km_encoder	r;
				km_encoder_column *cols = calloc(c.n_columns, sizeof(*cols));
				const char **cats = calloc(c.n_categories + 1, sizeof(char *));

				km_encoder_read(q, len, &r, cols, cats);
				accepted++;
				free(cols);
				free(cats);
			}
			free(q);
		}
	/* a category flip that keeps the order is fine; most are not */
	CHECK(accepted < (int) len * 8 / 2, "%d of %zu flips accepted", accepted, len * 8);
	/* categories out of order, two columns of one name */
	{
		static const char *const unsorted[] = {"green", "blue", "red"};
		uint8_t    *q;
		size_t		qlen;

		cols_fixture[1].categories = unsorted;
		q = payload(&e, &qlen);
		CHECK(km_encoder_check(q, qlen, 5, &c, &err) != KM_OK, "unsorted accepted");
		free(q);
		cols_fixture[1].categories = colours;
		cols_fixture[2].name = "area";
		q = payload(&e, &qlen);
		CHECK(km_encoder_check(q, qlen, 5, &c, &err) != KM_OK, "duplicate name accepted");
		free(q);
		cols_fixture[2].name = "garden";
	}
	free(p);
}

/*
 * The target column (version 2): read back; a version 1 payload (no
 * target) still read, as an encoder without one; a target named as a
 * column, a version beyond this build's, refused.
 */
void
test_encoder_target(void)
{
	km_encoder	e = fixture();
	size_t		len;
	size_t		len1;
	uint8_t    *p1 = payload(&e, &len1);
	uint8_t    *p;
	km_encoder_counts c;
	km_error	err;
	km_encoder	r;
	km_encoder_column cols[3];
	const char *cats[3];

	CHECK(p1[0] == 1 && p1[1] == 0, "no target: version 1");
	CHECK(km_encoder_check(p1, len1, 5, &c, &err) == KM_OK, "%s", err.detail);
	km_encoder_read(p1, len1, &r, cols, cats);
	CHECK(r.target == NULL && r.target_type == NULL, "version 1: no target");

	e.target = "label";
	e.target_type = "kind_enum";
	e.target_kind = KM_COLUMN_CATEGORY;
	p = payload(&e, &len);
	CHECK(p[0] == 2 && len == len1 + 4 + 5 + 1 + 4 + 9 + 1 + 4, "version 2, %zu bytes", len);
	/* the columns are written as in version 1 */
	CHECK(memcmp(p + 4, p1 + 4, len1 - 4) == 0, "columns unchanged");
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_OK, "%s", err.detail);
	CHECK(c.n_columns == 3 && c.n_categories == 3, "counts");
	km_encoder_read(p, len, &r, cols, cats);
	CHECK(r.target != NULL && strcmp(r.target, "label") == 0 &&
		  strcmp(r.target_type, "kind_enum") == 0 && r.target_kind == KM_COLUMN_CATEGORY &&
		  strcmp(cols[2].name, "garden") == 0 && cols[2].offset == 4, "read back");
	/* version 1 bytes followed by a target are refused */
	p[0] = 1;
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_ERR_FORMAT, "v1 with a target");
	p[0] = 3;
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_ERR_VERSION, "version 3");
	p[0] = 0;
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_ERR_VERSION, "version 0");
	free(p);
	/* an unknown kind, a target that is a feature column, an empty name */
	e.target_kind = (km_column_kind) 3;
	p = payload(&e, &len);
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_ERR_FORMAT, "kind 3");
	free(p);
	e.target_kind = KM_COLUMN_NUMBER;
	e.target = "colour";
	p = payload(&e, &len);
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_ERR_FORMAT, "target a column");
	free(p);
	e.target = "";
	p = payload(&e, &len);
	CHECK(km_encoder_check(p, len, 5, &c, &err) == KM_ERR_FORMAT, "empty target");
	free(p);
	free(p1);
}

/*
 * The ENCODER section in a model: written and read back, an older model
 * without it unchanged, and a payload that is well framed (its checksum
 * right) but wrong inside refused by the model decoder.
 */
void		test_encoder_model_section(void);

static size_t
encode_model(const km_model *m, uint8_t **buf)
{
	km_model_shape s = km_model_shape_of(m);
	size_t		size = km_model_size(&s);

	*buf = malloc(size);
	km_model_encode(m, *buf);
	return size;
}

void
test_encoder_model_section(void)
{
	double		mean[2] = {0.5, -1.0},
				scale[2] = {1.0, 2.0},
				alpha[3] = {0.25, -0.5, 1.0},
				X[6] = {1, 2, 3, 4, 5, 6};
	static const char *const ab[] = {"a", "b"};
	static const char *const ba[] = {"b", "a"};
	km_encoder_column ec = {"c", "text", KM_COLUMN_CATEGORY, true, 0.0, 1, 2, ab, 0};
	km_encoder	e = {1, 2, KM_IMPUTE_MOST_FREQUENT, KM_UNKNOWN_IGNORE, &ec, NULL, NULL, KM_COLUMN_NUMBER};
	uint8_t		payload[256];
	km_model	m;
	km_model	r;
	km_model_shape s;
	km_error	err;
	uint8_t    *plain;
	uint8_t    *buf;
	size_t		plain_len;
	size_t		len;
	double	   *storage;

	memset(&m, 0, sizeof(m));
	m.kernel.type = KM_KERNEL_RBF;
	m.kernel.gamma = 0.5;
	m.kernel.degree = 3;
	m.kernel.coef0 = 1.0;
	m.method = KM_METHOD_RIDGE;
	m.task = KM_TASK_REGRESSION;
	m.standardize = true;
	m.fit_intercept = true;
	m.n_train = 3;
	m.n_features = 2;
	m.rows_seen = 3;
	m.lambda = 1.0;
	m.mean = mean;
	m.scale = scale;
	m.alpha = alpha;
	m.X = X;
	plain_len = encode_model(&m, &plain);

	km_encoder_write(&e, payload);
	m.encoder = payload;
	m.encoder_bytes = (uint32_t) km_encoder_size(&e);
	len = encode_model(&m, &buf);
	CHECK(len == plain_len + 16 + m.encoder_bytes, "%zu vs %zu", len, plain_len);
	/* the model without it is the prefix but for the header's count, size, CRC */
	CHECK(memcmp(buf + KM_MODEL_HEADER_SIZE, plain + KM_MODEL_HEADER_SIZE,
				 plain_len - KM_MODEL_HEADER_SIZE) == 0, "sections before it unchanged");
	CHECK(km_model_peek(buf, len, &s, &err) == KM_OK && s.encoder_bytes == m.encoder_bytes,
		  "peek");
	storage = malloc(km_model_storage_doubles(&s) * sizeof(double));
	CHECK(km_model_decode(buf, len, &r, storage, &err) == KM_OK, "%s", err.detail);
	CHECK(r.encoder != NULL && r.encoder_bytes == m.encoder_bytes &&
		  memcmp(r.encoder, payload, r.encoder_bytes) == 0, "read back");
	CHECK(km_model_decode(plain, plain_len, &r, storage, &err) == KM_OK && r.encoder == NULL,
		  "a model without it has none");
	free(buf);

	/* categories out of order: framed right, refused inside */
	ec.categories = ba;
	km_encoder_write(&e, payload);
	len = encode_model(&m, &buf);
	CHECK(km_model_decode(buf, len, &r, storage, &err) == KM_ERR_FORMAT, "unsorted read");
	CHECK(km_model_decode(buf, len, &r, NULL, &err) == KM_ERR_FORMAT, "unsorted validated");
	free(buf);
	/* an encoder of 3 features in a model of 2 */
	ec.categories = ab;
	e.d = 3;
	km_encoder_write(&e, payload);
	len = encode_model(&m, &buf);
	CHECK(km_model_decode(buf, len, &r, storage, &err) == KM_ERR_FORMAT, "d mismatch");
	free(buf);
	free(storage);
	free(plain);
}
