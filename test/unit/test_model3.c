/*
 * test_model3.c - the sections of model format 2 added for approximate,
 * multi-output and classification models (src/core/model/model.c): exact round
 * trips of nystrom, rff, multi-output and classifier models; a clean
 * error for every truncation and every flipped bit of each; rejection of
 * shapes that do not fit together (q against k and the multi-class
 * scheme, labels without their NUL, rff without W, unknown enumerations);
 * a 0.2.0 model (outputs field 0) still read, 1 stored there refused.
 *
 * The classifier shapes need a registered classification method (the
 * header's task is the method's): until one is, their round trips are
 * skipped, and the CLASSES checks are exercised through the errors a
 * regression method's model with a CLASSES section gets first.
 * Every buffer is malloc'd at exactly its length (ASan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "crc32c.h"
#include "model.h"
#include "model_section.h"
#include "task.h"
#include "unit.h"

void		test_model3_roundtrip(void);
void		test_model3_truncation(void);
void		test_model3_bitflips(void);
void		test_model3_invalid(void);
void		test_model3_old_outputs(void);
void		test_model3_sections(void);

#define N3 4					/* rows of the expansion (rff: D) */
#define D3 3					/* features */
#define Q3 3					/* outputs of the ovo classifier */
#define K3 3					/* its classes */

typedef enum shape3
{
	S_NYSTROM,
	S_RFF,
	S_OVO,						/* 3 classes, 3 outputs, probability */
	S_BINARY_F8,				/* 2 float8 classes, 1 output, nystrom */
	N_SHAPES
} shape3;

static const char *const shape_names[N_SHAPES] = {"nystrom", "rff", "ovo", "binary"};

typedef struct t3
{
	km_model	m;
	double		mean[D3];
	double		scale[D3];
	double		alpha[N3 * Q3];
	double		intercepts[Q3];
	double		X[N3 * D3];
	double		W[D3 * N3];
	double		b[N3];
	double		A[Q3];
	double		B[Q3];
	uint64_t	counts[K3];
	char		labels[32];
} t3;

/* The first registered classification method, if any. */
static bool
classification_method(km_method *method)
{
	for (int i = KM_METHOD_FIRST; i <= KM_METHOD_LAST; i++)
		if (km_method_get((km_method) i) &&
			km_method_task((km_method) i) == KM_TASK_CLASSIFICATION)
		{
			*method = (km_method) i;
			return true;
		}
	return false;
}

static void
make3(t3 *t, shape3 shape, km_method method)
{
	memset(t, 0, sizeof(*t));
	for (int j = 0; j < D3; j++)
	{
		t->mean[j] = 0.5 * j - 1.0;
		t->scale[j] = 2.0 + j;
	}
	for (int i = 0; i < N3 * Q3; i++)
		t->alpha[i] = sin(i + 0.25) * 3.0;
	for (int i = 0; i < N3 * D3; i++)
	{
		t->X[i] = cos(i * 0.7) * 10.0;
		t->W[i] = sin(i * 1.9) * 2.0;
	}
	for (int i = 0; i < N3; i++)
		t->b[i] = 0.75 * i;
	for (int i = 0; i < Q3; i++)
	{
		t->intercepts[i] = 0.5 - i;
		t->A[i] = -1.0 - i;
		t->B[i] = 0.125 * i;
	}
	t->m.writer_version[1] = 2;
	t->m.kernel.type = KM_KERNEL_RBF;
	t->m.kernel.gamma = 0.25;
	t->m.kernel.degree = 3;
	t->m.method = method;
	t->m.task = km_method_task(method);
	t->m.standardize = true;
	t->m.fit_intercept = true;
	t->m.n_train = N3;
	t->m.n_features = D3;
	t->m.n_outputs = 1;
	t->m.rows_seen = 1000;
	t->m.lambda = 1e-2;
	t->m.intercept = t->intercepts[0];
	t->m.train_rmse = 0.5;
	t->m.mean = t->mean;
	t->m.scale = t->scale;
	t->m.alpha = t->alpha;
	t->m.intercepts = t->intercepts;
	t->m.X = t->X;
	if (shape == S_NYSTROM || shape == S_BINARY_F8)
	{
		t->m.approximation = KM_APPROX_NYSTROM;
		t->m.components = 6;
		t->m.rank = 3;
		t->m.approx_eps = 1e-10;
		t->m.approx_seed = 0xFEEDFACECAFEBEEFULL;
	}
	if (shape == S_RFF)
	{
		t->m.approximation = KM_APPROX_RFF;
		t->m.components = N3;
		t->m.rank = N3;
		t->m.approx_seed = 7;
		t->m.X = NULL;
		t->m.rff_W = t->W;
		t->m.rff_b = t->b;
	}
	if (shape == S_OVO)
	{
		static const char labels[] = "ant\0bee\0cat";

		t->m.n_outputs = Q3;
		t->m.n_classes = K3;
		t->m.label_type = KM_LABEL_TEXT;
		t->m.multiclass = KM_MULTICLASS_OVO;
		memcpy(t->labels, labels, sizeof(labels));
		t->m.labels_bytes = sizeof(labels);
		t->m.has_probability = true;
		t->m.prob_A = t->A;
		t->m.prob_B = t->B;
		t->m.train_accuracy = 0.875;
		t->m.train_log_loss = 0.3125;
	}
	if (shape == S_BINARY_F8)
	{
		static const char labels[] = "-1\0" "2.5";

		t->m.n_classes = 2;
		t->m.label_type = KM_LABEL_FLOAT8;
		t->m.multiclass = KM_MULTICLASS_BINARY;
		memcpy(t->labels, labels, sizeof(labels));
		t->m.labels_bytes = sizeof(labels);
		t->m.train_accuracy = 1.0;
	}
	if (t->m.n_classes > 0)
	{
		for (uint32_t i = 0; i < t->m.n_classes; i++)
			t->counts[i] = 10 + i;
		t->m.labels = t->labels;
		t->m.class_counts = t->counts;
		t->m.solver = KM_SOLVER_SMO;
	}
}

static uint8_t *
encode3(const km_model *m, size_t *size)
{
	km_model_shape sh = km_model_shape_of(m);
	uint8_t    *buf;

	*size = km_model_size(&sh);
	buf = malloc(*size ? *size : 1);
	if (*size)
		km_model_encode(m, buf);
	return buf;
}

/* The shapes this build can encode validly, with their method. */
static bool
usable(shape3 shape, km_method *method)
{
	*method = KM_METHOD_RIDGE;
	if (shape == S_OVO || shape == S_BINARY_F8)
		return classification_method(method);
	return true;
}

static bool
same_doubles(const double *a, const double *b, size_t n)
{
	return (a == NULL && b == NULL) ||
		(a != NULL && b != NULL && memcmp(a, b, n * sizeof(double)) == 0);
}

static void
roundtrip3(shape3 shape)
{
	t3			t;
	km_method	method;
	size_t		size;
	uint8_t    *buf;
	uint8_t    *again;
	km_model_shape sh;
	km_model_shape want;
	double	   *storage;
	km_model	out;
	km_error	err;
	km_status	st;
	const char *name = shape_names[shape];
	size_t		n = N3;
	size_t		q;

	if (!usable(shape, &method))
	{
		fprintf(stderr, "# %s round trip skipped: no classification method registered\n", name);
		return;
	}
	make3(&t, shape, method);
	q = t.m.n_outputs;
	want = km_model_shape_of(&t.m);
	buf = encode3(&t.m, &size);
	CHECK(size > 0, "%s: size", name);
	st = km_model_peek(buf, size, &sh, &err);
	/* field by field: the struct's padding is not part of the shape */
	CHECK(st == KM_OK && sh.method == want.method &&
		  sh.approximation == want.approximation && sh.n_train == want.n_train &&
		  sh.d == want.d && sh.q == want.q && sh.c == want.c &&
		  sh.n_classes == want.n_classes && sh.labels_bytes == want.labels_bytes &&
		  sh.has_probability == want.has_probability,
		  "%s: peek %d %s (n %u d %u q %u k %u labels %u)", name, (int) st, err.detail,
		  sh.n_train, sh.d, sh.q, sh.n_classes, sh.labels_bytes);
	storage = malloc(km_model_storage_doubles(&want) * sizeof(double));
	st = km_model_decode(buf, size, &out, storage, &err);
	CHECK(st == KM_OK, "%s: decode %d: %s", name, (int) st, err.detail);
	if (st == KM_OK)
	{
		CHECK(out.approximation == t.m.approximation && out.components == t.m.components &&
			  out.rank == t.m.rank && out.approx_eps == t.m.approx_eps &&
			  out.approx_seed == t.m.approx_seed, "%s: approximation fields", name);
		CHECK(out.n_outputs == q && out.n_train == N3 && out.n_features == D3,
			  "%s: shape", name);
		CHECK(same_doubles(out.alpha, t.alpha, n * q) &&
			  same_doubles(out.intercepts, t.intercepts, q) &&
			  out.intercept == t.intercepts[0], "%s: alpha, intercepts", name);
		CHECK(same_doubles(out.X, t.m.X, t.m.X ? n * D3 : 0), "%s: X", name);
		CHECK(same_doubles(out.rff_W, t.m.rff_W, t.m.rff_W ? n * D3 : 0) &&
			  same_doubles(out.rff_b, t.m.rff_b, t.m.rff_b ? n : 0), "%s: rff", name);
		CHECK(out.n_classes == t.m.n_classes && out.label_type == t.m.label_type &&
			  out.multiclass == t.m.multiclass && out.labels_bytes == t.m.labels_bytes,
			  "%s: class fields", name);
		CHECK(out.train_accuracy == t.m.train_accuracy &&
			  out.train_log_loss == t.m.train_log_loss, "%s: metrics", name);
		if (t.m.n_classes)
			CHECK(memcmp(out.labels, t.labels, t.m.labels_bytes) == 0 &&
				  memcmp(out.class_counts, t.counts, t.m.n_classes * sizeof(uint64_t)) == 0,
				  "%s: labels, counts", name);
		CHECK(out.has_probability == t.m.has_probability &&
			  same_doubles(out.prob_A, t.m.prob_A, t.m.prob_A ? q : 0) &&
			  same_doubles(out.prob_B, t.m.prob_B, t.m.prob_B ? q : 0), "%s: probability", name);
		again = malloc(size);
		km_model_encode(&out, again);
		CHECK(memcmp(again, buf, size) == 0, "%s: re-encoding differs", name);
		free(again);
	}
	CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_OK, "%s: without storage", name);
	free(storage);
	free(buf);
}

void
test_model3_roundtrip(void)
{
	for (int s = 0; s < N_SHAPES; s++)
		roundtrip3((shape3) s);
}

void
test_model3_truncation(void)
{
	for (int s = 0; s < N_SHAPES; s++)
	{
		t3			t;
		km_method	method;
		size_t		size;
		uint8_t    *full;

		if (!usable((shape3) s, &method))
			continue;
		make3(&t, (shape3) s, method);
		full = encode3(&t.m, &size);
		for (size_t len = 0; len < size; len++)
		{
			uint8_t    *p = unit_copy_bytes(full, len);
			km_model	out;
			km_error	err;
			km_model_shape sh;
			km_status	sp = km_model_peek(p, len, &sh, &err);
			km_status	sd = km_model_decode(p, len, &out, NULL, &err);

			CHECK(sp == KM_ERR_FORMAT && sd == KM_ERR_FORMAT,
				  "%s: %zu of %zu bytes: peek %d decode %d (%s)", shape_names[s],
				  len, size, (int) sp, (int) sd, err.detail);
			free(p);
		}
		free(full);
	}
}

void
test_model3_bitflips(void)
{
	for (int s = 0; s < N_SHAPES; s++)
	{
		t3			t;
		km_method	method;
		size_t		size;
		uint8_t    *full;
		double	   *storage;
		km_model_shape want;

		if (!usable((shape3) s, &method))
			continue;
		make3(&t, (shape3) s, method);
		want = km_model_shape_of(&t.m);
		full = encode3(&t.m, &size);
		storage = malloc(km_model_storage_doubles(&want) * sizeof(double));
		for (size_t i = KM_MODEL_HEADER_SIZE; i < size; i++)
			for (int b = 0; b < 8; b++)
			{
				uint8_t    *p = unit_copy_bytes(full, size);
				km_model	out;
				km_error	err;
				km_status	st;

				p[i] ^= (uint8_t) (1u << b);
				st = km_model_decode(p, size, &out, storage, &err);
				/* a section: its length may now overrun (format), else its CRC fails */
				CHECK(st == KM_ERR_CHECKSUM || st == KM_ERR_FORMAT,
					  "%s: byte %zu bit %d: %d", shape_names[s], i, b, (int) st);
				free(p);
			}
		free(storage);
		free(full);
	}
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t) p[i] << (8 * i);
	return v;
}

/* Offset of the section with that tag (its head), or 0. */
static size_t
find_section(const uint8_t *buf, size_t size, unsigned tag)
{
	size_t		at = KM_MODEL_HEADER_SIZE;

	while (at + KM_SECTION_OVERHEAD <= size)
	{
		if ((unsigned) (buf[at] | buf[at + 1] << 8) == tag)
			return at;
		at += KM_SECTION_OVERHEAD + (size_t) get_u64(buf + at + 4);
	}
	return 0;
}

/* Recompute the CRC of the section at at. */
static void
fix_section(uint8_t *buf, size_t at)
{
	size_t		len = (size_t) get_u64(buf + at + 4);

	put_u32(buf + at + 12 + len, km_crc32c(buf + at, 12 + len));
}

/* buf without the section with that tag, framing fixed; *newsize its size. */
static uint8_t *
drop_section(const uint8_t *buf, size_t size, unsigned tag, size_t *newsize)
{
	size_t		at = find_section(buf, size, tag);
	size_t		cut = KM_SECTION_OVERHEAD + (size_t) get_u64(buf + at + 4);
	uint8_t    *p = malloc(size - cut);

	memcpy(p, buf, at);
	memcpy(p + at, buf + at + cut, size - at - cut);
	*newsize = size - cut;
	put_u64(p + 8, *newsize);
	put_u32(p + 72, (uint32_t) (buf[72] - 1));
	put_u32(p + 76, km_crc32c(p, 76));
	return p;
}

/* Encode m, decode: the status, and err's detail in detail. */
static km_status
status3(const km_model *m, km_error *err)
{
	size_t		size;
	uint8_t    *buf = encode3(m, &size);
	km_model	out;
	km_status	st = size ? km_model_decode(buf, size, &out, NULL, err) : KM_ERR_FORMAT;

	if (size == 0)
		snprintf(err->detail, sizeof(err->detail), "no size");
	free(buf);
	return st;
}

#define EXPECT3(shape, method, what, stmt, want_detail) \
	do { \
		make3(&t, shape, method); \
		stmt; \
		CHECK(status3(&t.m, &err) == KM_ERR_FORMAT && \
			  strstr(err.detail, want_detail) != NULL, \
			  "%s: %d %s", what, (int) err.status, err.detail); \
	} while (0)

void
test_model3_invalid(void)
{
	t3			t;
	km_error	err;
	km_method	cm;
	bool		have_cm = classification_method(&cm);
	km_method	m = have_cm ? cm : KM_METHOD_RIDGE;

	/* approximation fields */
	EXPECT3(S_NYSTROM, KM_METHOD_RIDGE, "rank 0", t.m.rank = 0, "rank");
	EXPECT3(S_NYSTROM, KM_METHOD_RIDGE, "rank > n", t.m.rank = N3 + 1, "rank");
	EXPECT3(S_NYSTROM, KM_METHOD_RIDGE, "eps -1", t.m.approx_eps = -1.0, "approximation_eps");
	EXPECT3(S_RFF, KM_METHOD_RIDGE, "rff rank < D", t.m.rank = N3 - 1, "rank");
	EXPECT3(S_RFF, KM_METHOD_RIDGE, "rff with eps", t.m.approx_eps = 1e-3, "eps");
	EXPECT3(S_RFF, KM_METHOD_RIDGE, "rff laplacian", t.m.kernel.type = KM_KERNEL_LAPLACIAN,
			"rbf only");
	EXPECT3(S_RFF, KM_METHOD_RIDGE, "rff W nan", t.W[3] = NAN, "rff W");
	EXPECT3(S_RFF, KM_METHOD_RIDGE, "rff b inf", t.b[0] = INFINITY, "rff b");
	/* regression: one output, no classes */
	EXPECT3(S_NYSTROM, KM_METHOD_RIDGE, "regression with 2 outputs", t.m.n_outputs = 2,
			"regression model has 2 outputs");

	/*
	 * classes: checked before the task, so a regression method's model
	 * reaches these too
	 */
	EXPECT3(S_OVO, m, "ovo q 2 for k 3", t.m.n_outputs = 2, "do not fit together");
	EXPECT3(S_OVO, m, "ovr q 3 for k 4",
			(t.m.multiclass = KM_MULTICLASS_OVR, t.m.n_classes = 4,
			 memcpy(t.labels, "a\0b\0c\0d", 8), t.m.labels_bytes = 8), "do not fit together");
	EXPECT3(S_OVO, m, "binary with 3 classes", t.m.multiclass = KM_MULTICLASS_BINARY,
			"do not fit together");
	EXPECT3(S_OVO, m, "one class",
			(t.m.n_classes = 1, t.m.n_outputs = 1, t.m.multiclass = KM_MULTICLASS_BINARY,
			 t.m.labels_bytes = 4), "do not fit together");
	EXPECT3(S_OVO, m, "multiclass 7", t.m.multiclass = (km_multiclass) 7, "multiclass");
	EXPECT3(S_OVO, m, "multiclass 0", t.m.multiclass = (km_multiclass) 0, "multiclass");
	EXPECT3(S_OVO, m, "label type 3", t.m.label_type = (km_label_type) 3, "label_type");
	EXPECT3(S_OVO, m, "last label without NUL", t.m.labels_bytes -= 1, "NUL");
	EXPECT3(S_OVO, m, "a NUL too many", (t.labels[1] = 0), "NUL");
	EXPECT3(S_OVO, m, "intercepts[0] differs", t.intercepts[0] = 9.0, "intercepts");
	EXPECT3(S_OVO, m, "probability A nan", t.A[2] = NAN, "probability A");
	EXPECT3(S_OVO, m, "probability B inf", t.B[0] = -INFINITY, "probability B");
	if (!have_cm)
		EXPECT3(S_OVO, KM_METHOD_RIDGE, "a regression method's classifier", (void) 0,
				"task is regression");

	/* probability without classes; rff without its section; nystrom with it */
	{
		size_t		size,
					size2;
		uint8_t    *buf;
		uint8_t    *p;
		km_model	out;
		size_t		at;

		make3(&t, S_RFF, KM_METHOD_RIDGE);
		buf = encode3(&t.m, &size);
		p = drop_section(buf, size, KM_SECTION_RFF, &size2);
		CHECK(km_model_decode(p, size2, &out, NULL, &err) == KM_ERR_FORMAT &&
			  strstr(err.detail, "no RFF section"), "rff without W: %s", err.detail);
		free(p);
		p = drop_section(buf, size, KM_SECTION_APPROXIMATION, &size2);
		CHECK(km_model_decode(p, size2, &out, NULL, &err) == KM_ERR_FORMAT,
			  "rff section in an exact model: %s", err.detail);
		free(p);
		/* the approximation byte: nystrom with an rff section, exact, 3 */
		for (int v = 0; v < 4; v++)
		{
			if (v == KM_APPROX_RFF)
				continue;
			p = unit_copy_bytes(buf, size);
			at = find_section(p, size, KM_SECTION_APPROXIMATION);
			p[at + 12] = (uint8_t) v;
			fix_section(p, at);
			CHECK(km_model_decode(p, size, &out, NULL, &err) == KM_ERR_FORMAT,
				  "approximation byte %d: %s", v, err.detail);
			free(p);
		}
		free(buf);
	}
}

/* A 0.2.0 model stores 0 where the outputs go; 1 is never written there. */
void
test_model3_old_outputs(void)
{
	t3			t;
	size_t		size;
	uint8_t    *buf;
	size_t		at;
	km_model	out;
	km_error	err;
	km_model_shape sh;

	make3(&t, S_NYSTROM, KM_METHOD_RIDGE);
	buf = encode3(&t.m, &size);
	at = find_section(buf, size, KM_SECTION_EXPANSION);
	CHECK(buf[at + 16] == 0 && buf[at + 17] == 0 && buf[at + 18] == 0 && buf[at + 19] == 0,
		  "one output is stored as 0");
	CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_OK && out.n_outputs == 1,
		  "read as 1: %s", err.detail);
	buf[at + 16] = 1;
	fix_section(buf, at);
	CHECK(km_model_peek(buf, size, &sh, &err) == KM_ERR_FORMAT, "1 stored: peek");
	CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_ERR_FORMAT, "1 stored: decode");
	free(buf);
}

/*
 * The sections the task and representation tables declare: well formed,
 * above the common tags, in tag order in each list, and one descriptor per
 * tag across every row (a representation may share one, as nystrom and rff
 * share APPROXIMATION).
 */
static void
check_section_list(const km_section_ops *const *list, const char *owner,
				   const km_section_ops *by_tag[KM_SECTION_TAGS])
{
	unsigned	last = KM_SECTION_SELECTION;

	for (; list && *list; list++)
	{
		const km_section_ops *k = *list;

		CHECK(k->tag > last && k->tag < KM_SECTION_TAGS,
			  "%s: tag %u after %u", owner, (unsigned) k->tag, last);
		CHECK((k->flags & ~KM_SECTION_REQUIRED) == 0 && k->name &&
			  k->present && k->bytes && k->write &&
			  k->stage >= 0 && k->stage < KM_SECTION_STAGES,
			  "%s: section %u incomplete", owner, (unsigned) k->tag);
		if (k->tag < KM_SECTION_TAGS)
		{
			CHECK(by_tag[k->tag] == NULL || by_tag[k->tag] == k,
				  "%s: tag %u declared twice", owner, (unsigned) k->tag);
			by_tag[k->tag] = k;
		}
		last = k->tag;
	}
}

/* The tags of a list, as "6,7". */
static void
list_tags(const km_section_ops *const *list, char *out, size_t size)
{
	size_t		at = 0;

	out[0] = 0;
	for (; list && *list && at < size; list++)
		at += snprintf(out + at, size - at, "%s%u", at ? "," : "", (unsigned) (*list)->tag);
}

void
test_model3_sections(void)
{
	const km_section_ops *by_tag[KM_SECTION_TAGS] = {0};
	char		tags[64];

	for (long long id = 0; id <= 255; id++)
	{
		if (km_task_get(id))
			check_section_list(km_task_sections(km_task_get(id)), km_task_get(id)->name, by_tag);
		if (km_repr_get(id))
			check_section_list(km_repr_sections(km_repr_get(id)), km_repr_get(id)->name, by_tag);
	}
	list_tags(km_task_sections(km_task_get(KM_TASK_REGRESSION)), tags, sizeof(tags));
	CHECK(strcmp(tags, "") == 0, "regression: %s", tags);
	list_tags(km_task_sections(km_task_get(KM_TASK_CLASSIFICATION)), tags, sizeof(tags));
	CHECK(strcmp(tags, "8,9,10") == 0, "classification: %s", tags);
	list_tags(km_repr_sections(km_repr_get(KM_APPROX_EXACT)), tags, sizeof(tags));
	CHECK(strcmp(tags, "") == 0, "exact: %s", tags);
	list_tags(km_repr_sections(km_repr_get(KM_APPROX_NYSTROM)), tags, sizeof(tags));
	CHECK(strcmp(tags, "6,12") == 0, "nystrom: %s", tags);
	list_tags(km_repr_sections(km_repr_get(KM_APPROX_RFF)), tags, sizeof(tags));
	CHECK(strcmp(tags, "6,7,12") == 0, "rff: %s", tags);
}
