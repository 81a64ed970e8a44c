/*
 * model_format.c - encoding and validation of the binary model format
 * (core, no PostgreSQL headers): the section table, format 2, and the
 * entry points that read either format.  The layout is documented in
 * model.h; the shape and storage are model.c, the field codec
 * model_fields.c, format 1 model_v1.c (model_internal.h lists what they
 * share).
 *
 * A model arrives as a bytea that anyone can craft, so decoding never
 * reads a byte it has not first proved to lie within [buf, buf + len), and
 * every size is computed with overflow checks before it is trusted.
 */
#include <math.h>
#include <string.h>

#include "classify.h"
#include "crc32c.h"
#include "model.h"
#include "model_internal.h"
#include "task.h"

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

/* The APPROXIMATION section (32 bytes). */
static const km_field approx_fields[] = {
	{"approximation", KM_FIELD_ENUM, offsetof(km_model, approximation), KM_RULE_APPROX, 0},
	{NULL, KM_FIELD_U8, 0, KM_RULE_ZERO, 0},
	{NULL, KM_FIELD_U16, 0, KM_RULE_ZERO, 0},
	{"components", KM_FIELD_U32, offsetof(km_model, components), KM_RULE_ANY, 0},
	{"rank", KM_FIELD_U32, offsetof(km_model, rank), KM_RULE_POSITIVE, 0},
	{NULL, KM_FIELD_U32, 0, KM_RULE_ZERO, 0},
	{"approximation_eps", KM_FIELD_F64, offsetof(km_model, approx_eps), KM_RULE_NONNEG, 0},
	{"approximation_seed", KM_FIELD_U64, offsetof(km_model, approx_seed), KM_RULE_ANY, 0},
};

/* The CLASSES section's fixed part (8 bytes); counts and labels follow. */
static const km_field class_fields[] = {
	{"n_classes", KM_FIELD_U32, offsetof(km_model, n_classes), KM_RULE_POSITIVE, 0},
	{"label_type", KM_FIELD_ENUM, offsetof(km_model, label_type), KM_RULE_LABEL_TYPE, 0},
	{"multiclass", KM_FIELD_ENUM, offsetof(km_model, multiclass), KM_RULE_MULTICLASS, 0},
	{NULL, KM_FIELD_U16, 0, KM_RULE_ZERO, 0},
};

/* The METRICS section (16 bytes): a classifier's training metrics. */
static const km_field metrics_fields[] = {
	{"train_accuracy", KM_FIELD_F64, offsetof(km_model, train_accuracy), KM_RULE_NONNEG, 0},
	{"train_log_loss", KM_FIELD_F64, offsetof(km_model, train_log_loss), KM_RULE_NONNEG, 0},
};

#define N_FIELDS(t) ((int) (sizeof(t) / sizeof((t)[0])))


/* ------------------------------------------------------------------ */
/* Format 2 sections: sizes and writers                               */
/* ------------------------------------------------------------------ */

/*
 * Payload bytes of each section of a shape; 0 on overflow (no section is
 * empty).  layout_of has proved n * q and n * d small when they matter.
 */
static uint64_t
scaler_bytes(const km_model_shape *s)
{
	return 16 * (uint64_t) s->d;
}

static uint64_t
expansion_bytes(const km_model_shape *s)
{
	uint64_t	nq = (uint64_t) s->n_train * s->q;
	uint64_t	nd = km_repr_lookup(s->approximation)->keeps_rows ?
		(uint64_t) s->n_train * s->d : 0;
	const uint64_t big = KM_MODEL_MAX_SIZE / sizeof(double);

	if (s->q == 0 || nq > big || nd > big)
		return 0;
	return 8 + 8 * (nq + nd + (s->q > 1 ? s->q : 0));
}

static uint64_t
method_bytes(const km_model_shape *s)
{
	const km_method_ops *ops = km_method_get(s->method);

	return ops ? fields_size(ops->fields, ops->n_fields) : 0;
}

static uint64_t
training_bytes(const km_model_shape *s)
{
	(void) s;
	return fields_size(training_fields, N_FIELDS(training_fields));
}

static uint64_t
selection_bytes(const km_model_shape *s)
{
	return 16 + 32 * (uint64_t) s->c;
}

static uint64_t
approx_bytes(const km_model_shape *s)
{
	(void) s;
	return fields_size(approx_fields, N_FIELDS(approx_fields));
}

static uint64_t
rff_bytes(const km_model_shape *s)
{
	uint64_t	dD = (uint64_t) s->d * s->n_train;

	if (dD > KM_MODEL_MAX_SIZE / sizeof(double))
		return 0;
	return 8 * (dD + s->n_train);
}

static uint64_t
classes_bytes(const km_model_shape *s)
{
	return fields_size(class_fields, N_FIELDS(class_fields)) +
		8 * (uint64_t) s->n_classes + s->labels_bytes;
}

static uint64_t
probability_bytes(const km_model_shape *s)
{
	return 16 * (uint64_t) s->q;
}

static uint64_t
metrics_bytes(const km_model_shape *s)
{
	(void) s;
	return fields_size(metrics_fields, N_FIELDS(metrics_fields));
}

static bool
always(const km_model_shape *s)
{
	(void) s;
	return true;
}

static bool
has_selection(const km_model_shape *s)
{
	return s->c > 0;
}

static bool
is_approximate(const km_model_shape *s)
{
	return km_repr_lookup(s->approximation)->approximate;
}

static bool
is_rff(const km_model_shape *s)
{
	return km_repr_lookup(s->approximation)->drawn;
}

static bool
is_classifier(const km_model_shape *s)
{
	return s->n_classes > 0;
}

static bool
has_probability(const km_model_shape *s)
{
	return s->has_probability;
}


static uint8_t *
write_scaler(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = store_doubles(p, m->mean, s->d);
	return store_doubles(p, m->scale, s->d);
}

static uint8_t *
write_expansion(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	store_u32(p, s->n_train);
	/* one output is stored as 0, as 0.2.0 wrote it: one encoding per model */
	store_u32(p + 4, s->q > 1 ? s->q : 0);
	p = store_doubles(p + 8, m->alpha, (size_t) s->n_train * s->q);
	if (km_repr_lookup(s->approximation)->keeps_rows)
		p = store_doubles(p, m->X, (size_t) s->n_train * s->d);
	if (s->q > 1)
		p = store_doubles(p, m->intercepts, s->q);
	return p;
}

static uint8_t *
write_method(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	const km_method_ops *ops = km_method_get(s->method);

	return put_fields(p, ops->fields, ops->n_fields, m);
}

static uint8_t *
write_training(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	return put_fields(p, training_fields, N_FIELDS(training_fields), m);
}

static uint8_t *
write_selection(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	p[0] = (uint8_t) m->cv;
	p[1] = 0;
	store_u16(p + 2, (uint16_t) m->folds);
	store_u32(p + 4, m->best);
	store_u32(p + 8, m->n_candidates);
	store_u32(p + 12, 0);
	return store_doubles(p + 16, (const double *) m->candidates,
						 4 * (size_t) m->n_candidates);
}

static uint8_t *
write_approx(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	return put_fields(p, approx_fields, N_FIELDS(approx_fields), m);
}

static uint8_t *
write_rff(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = store_doubles(p, m->rff_W, (size_t) s->d * s->n_train);
	return store_doubles(p, m->rff_b, s->n_train);
}

static uint8_t *
write_classes(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = put_fields(p, class_fields, N_FIELDS(class_fields), m);
	for (uint32_t i = 0; i < s->n_classes; i++, p += 8)
		store_u64(p, m->class_counts[i]);
	memcpy(p, m->labels, s->labels_bytes);
	return p + s->labels_bytes;
}

static uint8_t *
write_probability(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = store_doubles(p, m->prob_A, s->q);
	return store_doubles(p, m->prob_B, s->q);
}

static uint8_t *
write_metrics(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	return put_fields(p, metrics_fields, N_FIELDS(metrics_fields), m);
}

/*
 * The sections of format 2, in tag order: when a model has each, its
 * payload size, its writer.  km_model_size and km_model_encode walk it.
 */
typedef struct section_kind
{
	uint16_t	tag;
	uint16_t	flags;
	bool		(*present) (const km_model_shape *s);
	uint64_t	(*bytes) (const km_model_shape *s);
	uint8_t    *(*write) (uint8_t *p, const km_model *m, const km_model_shape *s);
} section_kind;

static const section_kind section_kinds[] = {
	{KM_SECTION_SCALER, KM_SECTION_REQUIRED, always, scaler_bytes, write_scaler},
	{KM_SECTION_EXPANSION, KM_SECTION_REQUIRED, always, expansion_bytes, write_expansion},
	{KM_SECTION_METHOD, KM_SECTION_REQUIRED, always, method_bytes, write_method},
	{KM_SECTION_TRAINING, KM_SECTION_REQUIRED, always, training_bytes, write_training},
	{KM_SECTION_SELECTION, 0, has_selection, selection_bytes, write_selection},
	{KM_SECTION_APPROXIMATION, KM_SECTION_REQUIRED, is_approximate, approx_bytes, write_approx},
	{KM_SECTION_RFF, KM_SECTION_REQUIRED, is_rff, rff_bytes, write_rff},
	{KM_SECTION_CLASSES, KM_SECTION_REQUIRED, is_classifier, classes_bytes, write_classes},
	{KM_SECTION_PROBABILITY, KM_SECTION_REQUIRED, has_probability, probability_bytes,
	write_probability},
	{KM_SECTION_METRICS, KM_SECTION_REQUIRED, is_classifier, metrics_bytes, write_metrics},
};

#define N_SECTION_KINDS N_FIELDS(section_kinds)
#define MAX_KNOWN_TAG KM_SECTION_METRICS

/* Tags are 1..MAX_KNOWN_TAG in order: section_kinds[tag - 1]. */
typedef char section_kinds_in_tag_order[N_SECTION_KINDS == MAX_KNOWN_TAG ? 1 : -1];

size_t
km_model_size(const km_model_shape *s)
{
	layout		l;
	uint64_t	size = KM_MODEL_HEADER_SIZE;

	if (km_method_get(s->method) == NULL || s->n_train == 0 || s->d == 0 ||
		km_repr_get(s->approximation) == NULL ||
		!layout_of(s, &l))
		return 0;
	for (int i = 0; i < N_SECTION_KINDS; i++)
	{
		const section_kind *k = &section_kinds[i];
		uint64_t	bytes;

		if (!k->present(s))
			continue;
		bytes = k->bytes(s);
		if (bytes == 0 && k->tag != KM_SECTION_METHOD)
			return 0;
		size += KM_SECTION_OVERHEAD + bytes;
		if (size > KM_MODEL_MAX_SIZE)
			return 0;
	}
	return (size_t) size;
}

/* One section at p: head, payload, CRC; returns the next section. */
static uint8_t *
write_section(uint8_t *p, const section_kind *k, const km_model *m,
			  const km_model_shape *s)
{
	uint8_t    *end;

	store_u16(p, k->tag);
	store_u16(p + 2, k->flags);
	store_u64(p + 4, k->bytes(s));
	end = k->write(p + SECTION_HEAD, m, s);
	store_u32(end, km_crc32c(p, (size_t) (end - p)));
	return end + 4;
}

/* The header: fixed fields by the table, the section count, the CRC. */
static void
write_header(uint8_t *buf, const km_model *m, const km_model_shape *s,
			 size_t total)
{
	km_model	h = *m;
	uint32_t	count = 0;

	/* the header's task is the method's, whatever m says */
	h.task = km_method_get(m->method)->task;
	for (int i = 0; i < N_SECTION_KINDS; i++)
		count += section_kinds[i].present(s) ? 1 : 0;
	memset(buf, 0, KM_MODEL_HEADER_SIZE);
	memcpy(buf, KM_MODEL_MAGIC, 4);
	store_u16(buf + 4, KM_FORMAT_VERSION);
	store_u16(buf + 6, KM_MODEL_HEADER_SIZE);
	store_u64(buf + 8, (uint64_t) total);
	for (size_t i = 0; i < N_HEADER_FIELDS; i++)
		put_field(buf + header_fields[i].at, &header_fields[i].f, &h);
	store_u32(buf + 72, count);
	store_u32(buf + HEADER_CRC_OFFSET, km_crc32c(buf, HEADER_CRC_OFFSET));
}

void
km_model_encode(const km_model *m, uint8_t *buf)
{
	km_model_shape s = km_model_shape_of(m);
	uint8_t    *p = buf + KM_MODEL_HEADER_SIZE;

	write_header(buf, m, &s, km_model_size(&s));
	for (int i = 0; i < N_SECTION_KINDS; i++)
		if (section_kinds[i].present(&s))
			p = write_section(p, &section_kinds[i], m, &s);
}

/* ------------------------------------------------------------------ */
/* Format 2: reading                                                  */
/* ------------------------------------------------------------------ */

/* One section as found by walk_sections. */
typedef struct section
{
	uint16_t	tag;
	uint16_t	flags;
	uint64_t	length;
	const uint8_t *payload;
} section;

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
		uint16_t	want = section_kinds[s->tag - 1].flags;

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

/*
 * The shape from the framing: d from the header, n and q from the
 * expansion, the approximation, c, k and the labels' bytes from their
 * sections.  What the size checks need is read here; the values are
 * validated by decode_v2.
 */
static void
read_shape_v2(const uint8_t *buf, const section *found, km_model_shape *s)
{
	const section *exp = &found[KM_SECTION_EXPANSION];
	const section *sel = &found[KM_SECTION_SELECTION];
	const section *apx = &found[KM_SECTION_APPROXIMATION];
	const section *cls = &found[KM_SECTION_CLASSES];
	uint64_t	fixed = fields_size(class_fields, N_FIELDS(class_fields));

	memset(s, 0, sizeof(*s));
	s->method = (km_method) buf[17];
	s->d = load_u32(buf + 28);
	s->n_train = exp->length >= 8 ? load_u32(exp->payload) : 0;
	/* one output is stored as 0 (the reserved field of 0.2.0's writer) */
	s->q = exp->length >= 8 ? load_u32(exp->payload + 4) : 0;
	if (s->q == 0)
		s->q = 1;
	else if (s->q == 1)
		s->q = 0;				/* not how one output is written: no shape */
	s->c = sel->payload && sel->length >= 16 ? load_u32(sel->payload + 8) : 0;
	s->approximation = apx->payload && apx->length >= 1 ?
		(km_approx) apx->payload[0] : (km_approx) km_repr_default()->id;
	if (cls->payload && cls->length >= fixed)
	{
		s->n_classes = load_u32(cls->payload);
		if (cls->length - fixed >= 8 * (uint64_t) s->n_classes &&
			cls->length - fixed - 8 * (uint64_t) s->n_classes <= UINT32_MAX)
			s->labels_bytes = (uint32_t) (cls->length - fixed - 8 * (uint64_t) s->n_classes);
	}
	s->has_probability = found[KM_SECTION_PROBABILITY].payload != NULL;
}

/* Section tag of found has the length shape s gives it. */
static km_status
check_length(const section *found, unsigned tag, const km_model_shape *s,
			 km_error *err)
{
	const section_kind *k = &section_kinds[tag - 1];
	uint64_t	want = k->bytes(s);

	if (found[tag].length != want || want == 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Section %u has %llu bytes; a model of %u rows, %u features, %u outputs, %u candidates and %u classes has %llu there.",
					   tag, (unsigned long long) found[tag].length,
					   (unsigned) s->n_train, (unsigned) s->d, (unsigned) s->q,
					   (unsigned) s->c, (unsigned) s->n_classes,
					   (unsigned long long) want);
	return KM_OK;
}

/*
 * The shape of a format 2 model, with each section present exactly when
 * the shape has it and of the length it gives (METHOD, TRAINING and
 * APPROXIMATION are checked field by field by decode_v2).
 */
static km_status
shape_v2(const uint8_t *buf, const section *found, km_model_shape *s,
		 km_error *err)
{
	static const unsigned sized[] = {KM_SECTION_SCALER, KM_SECTION_EXPANSION,
		KM_SECTION_SELECTION, KM_SECTION_RFF, KM_SECTION_CLASSES,
	KM_SECTION_PROBABILITY};
	layout		l;
	km_status	st;

	read_shape_v2(buf, found, s);
	if (found[KM_SECTION_APPROXIMATION].payload &&
		(km_repr_get(s->approximation) == NULL ||
		 !km_repr_get(s->approximation)->approximate))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The approximation section names approximation %u; it must be nystrom (1) or rff (2).",
					   (unsigned) s->approximation);
	if (s->d < 1 || s->n_train < 1 || !layout_of(s, &l) ||
		(found[KM_SECTION_SELECTION].payload && s->c < 1))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model says %u rows of %u features, %u outputs and %u candidates, which do not fit together.",
					   (unsigned) s->n_train, (unsigned) s->d, (unsigned) s->q,
					   (unsigned) s->c);
	if ((found[KM_SECTION_RFF].payload != NULL) != is_rff(s))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   is_rff(s) ? "The model uses random Fourier features but has no RFF section." :
					   "The model has an RFF section but does not use random Fourier features.");
	if (s->has_probability && s->n_classes == 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model has probability calibration but no classes.");
	for (size_t i = 0; i < sizeof(sized) / sizeof(sized[0]); i++)
		if (found[sized[i]].payload &&
			(st = check_length(found, sized[i], s, err)) != KM_OK)
			return st;
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
					  found[KM_SECTION_TRAINING].length, training_fields,
					  N_FIELDS(training_fields), r, "training section", err);
}

/* Format 2: the APPROXIMATION section's fields, if any, and their rules. */
static km_status
approx_v2(const section *apx, km_model *r, km_error *err)
{
	km_status	st;

	if (apx->payload == NULL)
		return KM_OK;
	if ((st = get_fields(apx->payload, apx->length, approx_fields,
						 N_FIELDS(approx_fields), r, "approximation section",
						 err)) != KM_OK)
		return st;
	if (r->rank > r->n_train ||
		(km_repr_lookup(r->approximation)->drawn &&
		 (r->rank != r->n_train || r->approx_eps != 0.0)))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The %s approximation has rank %u and eps %g for %u components.",
					   km_approx_name(r->approximation), (unsigned) r->rank,
					   r->approx_eps, (unsigned) r->n_train);
	if (!km_repr_serves(km_repr_lookup(r->approximation), r->kernel.type))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model uses random Fourier features with the %s kernel; they exist for rbf only.",
					   km_kernel_name(r->kernel.type));
	return KM_OK;
}

/*
 * The labels: exactly k NUL-terminated strings filling the bytes (their
 * encoding and order are the writer's and the glue's business).
 */
static km_status
check_labels(const uint8_t *p, uint32_t bytes, uint32_t k, km_error *err)
{
	uint32_t	nuls = 0;

	for (uint32_t i = 0; i < bytes; i++)
		nuls += p[i] == 0;
	if (nuls != k || bytes == 0 || p[bytes - 1] != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The %u bytes of labels hold %u NUL-terminated strings%s; the model has %u classes.",
					   (unsigned) bytes, (unsigned) nuls,
					   bytes > 0 && p[bytes - 1] != 0 ? " and an unterminated one" : "",
					   (unsigned) k);
	return KM_OK;
}

/*
 * Format 2: the CLASSES section (fields, counts, labels) and the
 * PROBABILITY section; the task and the number of outputs must fit them.
 */
static km_status
classes_v2(const section *found, const km_model_shape *s, km_model *r,
		   double *storage, const layout *l, km_error *err)
{
	const section *cls = &found[KM_SECTION_CLASSES];
	const uint8_t *p;
	size_t		fixed = fields_size(class_fields, N_FIELDS(class_fields));
	km_status	st;

	if ((found[KM_SECTION_METRICS].payload != NULL) != (cls->payload != NULL))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   cls->payload ? "The model has classes but no metrics section." :
					   "The model has a metrics section but no classes.");
	if (cls->payload == NULL)
	{
		if (km_task_lookup(r->task)->classes)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "The model's task is classification but it has no classes section.");
		if (s->q != 1)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "A regression model has %u outputs; it must have 1.",
						   (unsigned) s->q);
		return KM_OK;
	}
	if ((st = get_fields(cls->payload, fixed, class_fields, N_FIELDS(class_fields),
						 r, "classes section", err)) != KM_OK)
		return st;
	if (r->n_classes < 2 || km_multiclass_outputs(r->multiclass, r->n_classes) != s->q)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A %s classifier of %u classes has %u outputs, which do not fit together.",
					   km_multiclass_name(r->multiclass), (unsigned) r->n_classes,
					   (unsigned) s->q);
	p = cls->payload + fixed + 8 * (size_t) r->n_classes;
	if ((st = check_labels(p, s->labels_bytes, r->n_classes, err)) != KM_OK)
		return st;
	r->labels_bytes = s->labels_bytes;
	if ((st = get_fields(found[KM_SECTION_METRICS].payload,
						 found[KM_SECTION_METRICS].length, metrics_fields,
						 N_FIELDS(metrics_fields), r, "metrics section", err)) != KM_OK)
		return st;
	if (r->train_accuracy > 1.0)
		return bad_field(err, "train_accuracy", r->train_accuracy, "between 0 and 1");
	if (storage)
	{
		uint64_t   *counts = (uint64_t *) (storage + l->counts);

		for (uint32_t i = 0; i < r->n_classes; i++)
			counts[i] = load_u64(cls->payload + fixed + 8 * (size_t) i);
		memcpy(storage + l->labels, p, s->labels_bytes);
	}
	if (s->has_probability)
	{
		r->has_probability = true;
		p = found[KM_SECTION_PROBABILITY].payload;
		if ((st = read_array(&p, s->q, "probability A", false,
							 storage_at(storage, l->prob_A), err)) != KM_OK ||
			(st = read_array(&p, s->q, "probability B", false,
							 storage_at(storage, l->prob_B), err)) != KM_OK)
			return st;
	}
	/* last, so that the checks above hold whatever the method */
	if (!km_task_lookup(r->task)->classes)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model's task is %s but it has a classes section.",
					   km_task_name(r->task));
	return KM_OK;
}

/* Format 2: the SELECTION section, if there is one, with its c candidates. */
static km_status
selection_v2(const section *sel, const km_model_shape *s, km_model *r,
			 double *storage, const layout *l, km_error *err)
{
	const uint8_t *p = sel->payload;
	km_status	st;

	if (s->c == 0)
		return KM_OK;
	r->n_candidates = s->c;
	r->cv = (km_cv) p[0];
	r->folds = load_u16(p + 2);
	r->best = load_u32(p + 4);
	if (p[1] != 0 || load_u32(p + 12) != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A reserved field of the selection is not zero.");
	if ((st = check_selection(r, p[0], err)) != KM_OK)
		return st;
	return read_selection(p + 16, s->c, storage, l, err);
}

/* Format 2: the RFF section, W and b, finite. */
static km_status
rff_v2(const section *rff, const km_model_shape *s, double *storage,
	   const layout *l, km_error *err)
{
	const uint8_t *p = rff->payload;
	km_status	st;

	if (p == NULL)
		return KM_OK;
	if ((st = read_array(&p, (size_t) s->d * s->n_train, "rff W", false,
						 storage_at(storage, l->W), err)) != KM_OK)
		return st;
	return read_array(&p, s->n_train, "rff b", false, storage_at(storage, l->b), err);
}

static km_status
decode_v2(const uint8_t *buf, size_t len, km_model *m, double *storage,
		  km_error *err)
{
	section		found[MAX_KNOWN_TAG + 1];
	km_model	r;
	km_model_shape s;
	layout		l;
	const uint8_t *p;
	km_status	st;

	if ((st = walk_sections(buf, len, true, found, err)) != KM_OK ||
		(st = shape_v2(buf, found, &s, err)) != KM_OK)
		return st;
	layout_of(&s, &l);

	memset(&r, 0, sizeof(r));
	r.format_version = 2;
	r.n_train = s.n_train;
	r.n_outputs = s.q;
	if ((st = fields_v2(buf, found, &r, err)) != KM_OK ||
		(st = approx_v2(&found[KM_SECTION_APPROXIMATION], &r, err)) != KM_OK)
		return st;

	p = found[KM_SECTION_SCALER].payload;
	if ((st = read_scaler(&p, s.d, storage, &l, err)) != KM_OK)
		return st;
	p = found[KM_SECTION_EXPANSION].payload + 8;
	if ((st = read_expansion(&p, &s, &r, storage, &l, err)) != KM_OK ||
		(st = selection_v2(&found[KM_SECTION_SELECTION], &s, &r, storage, &l,
						   err)) != KM_OK ||
		(st = rff_v2(&found[KM_SECTION_RFF], &s, storage, &l, err)) != KM_OK ||
		(st = classes_v2(found, &s, &r, storage, &l, err)) != KM_OK)
		return st;

	attach_storage(&r, storage, &s, &l);
	*m = r;
	return KM_OK;
}

km_status
km_model_peek(const uint8_t *buf, size_t len, km_model_shape *shape,
			  km_error *err)
{
	uint16_t	version;
	km_status	st;
	section		found[MAX_KNOWN_TAG + 1];
	km_model_shape s;

	if ((st = check_version(buf, len, &version, err)) != KM_OK)
		return st;
	if (version == 1)
		return peek_v1(buf, len, shape, err);
	if ((st = walk_sections(buf, len, false, found, err)) != KM_OK ||
		(st = shape_v2(buf, found, &s, err)) != KM_OK)
		return st;
	*shape = s;
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
	if (m->n_outputs > 1)
		out->integer(out->ctx, "outputs", m->n_outputs);
	if (km_repr_lookup(m->approximation)->approximate)
		km_model_describe_fields(m, approx_fields, N_FIELDS(approx_fields), out);
	if (m->n_classes > 0)
	{
		const km_method_ops *ops = km_method_get(m->method);
		const char *hint = NULL;

		km_model_describe_fields(m, class_fields, N_FIELDS(class_fields), out);
		km_model_describe_fields(m, metrics_fields, 1, out);
		if (ops && ops->prob_link &&
			ops->prob_link(m->has_probability, m->multiclass, &hint) != KM_PROB_NONE)
			km_model_describe_fields(m, metrics_fields + 1, 1, out);
	}
}
