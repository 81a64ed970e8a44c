/*
 * model_format.c - encoding and validation of the binary model format
 * (core, no PostgreSQL headers): the frame of format 2 (header, section
 * walk, checksums), its common sections (SCALER, EXPANSION, METHOD,
 * TRAINING, SELECTION), and the entry points that read either format.
 * The other sections are declared by the tables that own them (a task's
 * or a representation's row lists km_section_ops, model_section.h) and are
 * walked here generically, in tag order, by no task's or representation's
 * name.  The layout is documented in model.h; the shape and storage are
 * model.c, the field codec model_fields.c, format 1 model_v1.c
 * (model_internal.h lists what they share).
 *
 * A model arrives as a bytea that anyone can craft, so decoding never
 * reads a byte it has not first proved to lie within [buf, buf + len), and
 * every size is computed with overflow checks before it is trusted.
 */
#include <math.h>
#include <string.h>

#include "crc32c.h"
#include "model.h"
#include "model_section.h"
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

#define N_FIELDS(t) ((int) (sizeof(t) / sizeof((t)[0])))


/* ------------------------------------------------------------------ */
/* The common sections: every model has them (SELECTION when selected) */
/* ------------------------------------------------------------------ */

/*
 * Payload bytes of each section of a shape; 0 on overflow.  layout_of has
 * proved n * q and n * d small when they matter.
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
	uint64_t	nd = km_repr_kept_doubles(km_repr_lookup(s->approximation),
										  s->n_train, s->d);
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
	/* the rows the representation keeps: none for rff */
	p = store_doubles(p, m->X, (size_t) km_repr_kept_doubles(km_repr_lookup(s->approximation),
															  s->n_train, s->d));
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

/* n and q from the expansion (one output is stored as 0). */
static void
expansion_shape(const km_section *self, km_model_shape *s)
{
	if (self->length < 8)
		return;
	s->n_train = load_u32(self->payload);
	/* one output is stored as 0 (the reserved field of 0.2.0's writer) */
	s->q = load_u32(self->payload + 4);
	if (s->q == 0)
		s->q = 1;
	else if (s->q == 1)
		s->q = 0;				/* not how one output is written: no shape */
}

static void
selection_shape(const km_section *self, km_model_shape *s)
{
	if (self->length >= 16)
		s->c = load_u32(self->payload + 8);
}

static km_status
read_method(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *sec = &in->found[KM_SECTION_METHOD];
	const km_method_ops *ops = km_method_get(r->method);

	return get_fields(sec->payload, sec->length, ops->fields, ops->n_fields, r,
					  "method section", err);
}

static km_status
read_training(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *sec = &in->found[KM_SECTION_TRAINING];

	return get_fields(sec->payload, sec->length, training_fields,
					  N_FIELDS(training_fields), r, "training section", err);
}

static km_status
read_scaler_section(const km_section_in *in, km_model *r, km_error *err)
{
	const uint8_t *p = in->found[KM_SECTION_SCALER].payload;

	(void) r;
	return read_scaler(&p, in->s->d, in->storage, in->l, err);
}

static km_status
read_expansion_section(const km_section_in *in, km_model *r, km_error *err)
{
	const uint8_t *p = in->found[KM_SECTION_EXPANSION].payload + 8;

	return read_expansion(&p, in->s, r, in->storage, in->l, err);
}

/* The SELECTION section with its c candidates. */
static km_status
read_selection_section(const km_section_in *in, km_model *r, km_error *err)
{
	const uint8_t *p = in->found[KM_SECTION_SELECTION].payload;
	km_status	st;

	if (in->s->c == 0)
		return KM_OK;
	r->n_candidates = in->s->c;
	r->cv = (km_cv) p[0];
	r->folds = load_u16(p + 2);
	r->best = load_u32(p + 4);
	if (p[1] != 0 || load_u32(p + 12) != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A reserved field of the selection is not zero.");
	if ((st = check_selection(r, p[0], err)) != KM_OK)
		return st;
	return read_selection(p + 16, in->s->c, r->cv, in->storage, in->l, err);
}

/*
 * The common sections, in tag order.  Stage 0 holds the scalar sections
 * (read first, after the header), stage 1 the arrays: the order in which
 * 0.2.0 checked a model.
 */
static const km_section_ops common_sections[] = {
	{.tag = KM_SECTION_SCALER, .flags = KM_SECTION_REQUIRED, .name = "scaler",
		.stage = 1, .sized = true, .present = always, .bytes = scaler_bytes,
	.write = write_scaler, .read = read_scaler_section},
	{.tag = KM_SECTION_EXPANSION, .flags = KM_SECTION_REQUIRED, .name = "expansion",
		.stage = 1, .sized = true, .present = always, .bytes = expansion_bytes,
		.write = write_expansion, .shape = expansion_shape,
	.read = read_expansion_section},
	{.tag = KM_SECTION_METHOD, .flags = KM_SECTION_REQUIRED, .name = "method",
		.stage = 0, .may_be_empty = true, .present = always, .bytes = method_bytes,
	.write = write_method, .read = read_method},
	{.tag = KM_SECTION_TRAINING, .flags = KM_SECTION_REQUIRED, .name = "training",
		.stage = 0, .present = always, .bytes = training_bytes,
	.write = write_training, .read = read_training},
	{.tag = KM_SECTION_SELECTION, .flags = 0, .name = "selection",
		.stage = 1, .sized = true, .present = has_selection, .bytes = selection_bytes,
	.write = write_selection, .shape = selection_shape, .read = read_selection_section},
};

#define N_COMMON N_FIELDS(common_sections)

/* A table's columns: common, optional (model_sections_encoder.c) */
extern const km_section_ops km_encoder_section;
/* Exact ridge's GP values: common, optional (model_sections_gp.c) */
extern const km_section_ops km_gp_section;

/* ------------------------------------------------------------------ */
/* The sections known to this build                                   */
/* ------------------------------------------------------------------ */

/* Who declares a known section. */
typedef enum owner
{
	OWNER_NONE = 0,
	OWNER_COMMON,
	OWNER_TASK,
	OWNER_REPR
} owner;

typedef struct known
{
	const km_section_ops *by_tag[KM_SECTION_TAGS];
	owner		owner[KM_SECTION_TAGS];
} known;

static void
add_list(known *k, const km_section_ops *const *list, owner o)
{
	for (; list && *list; list++)
		if ((*list)->tag < KM_SECTION_TAGS && k->by_tag[(*list)->tag] == NULL)
		{
			k->by_tag[(*list)->tag] = *list;
			k->owner[(*list)->tag] = o;
		}
}

/*
 * The common sections, then those every task and every representation
 * declares (ids are one byte in a model), by tag.
 */
static void
known_sections(known *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < N_COMMON; i++)
	{
		k->by_tag[common_sections[i].tag] = &common_sections[i];
		k->owner[common_sections[i].tag] = OWNER_COMMON;
	}
	k->by_tag[KM_SECTION_ENCODER] = &km_encoder_section;
	k->owner[KM_SECTION_ENCODER] = OWNER_COMMON;
	k->by_tag[KM_SECTION_GP] = &km_gp_section;
	k->owner[KM_SECTION_GP] = OWNER_COMMON;
	for (long long id = 0; id <= UINT8_MAX; id++)
	{
		const km_task_ops *t = km_task_get(id);
		const km_repr_ops *r = km_repr_get(id);

		if (t)
			add_list(k, km_task_sections(t), OWNER_TASK);
		if (r)
			add_list(k, km_repr_sections(r), OWNER_REPR);
	}
}

/* The known sections a model of shape s has, in tag order; their count. */
static int
sections_of(const known *k, const km_model_shape *s,
			const km_section_ops *out[KM_SECTION_TAGS])
{
	int			n = 0;

	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		if (k->by_tag[tag] && k->by_tag[tag]->present(s))
			out[n++] = k->by_tag[tag];
	return n;
}

/*
 * Where each section the shape has keeps its arrays in a decoded model's
 * storage: after the common arrays (layout l), in tag order.  at[tag] is
 * its first double (of those with a storage hook); *total all doubles.
 * False on overflow.
 */
static bool
section_storage(const known *k, const km_model_shape *s, const layout *l,
				size_t at[KM_SECTION_TAGS], size_t *total)
{
	const km_section_ops *has[KM_SECTION_TAGS];
	int			n = sections_of(k, s, has);
	uint64_t	end = l->total;

	for (int i = 0; i < n; i++)
	{
		if (has[i]->storage == NULL)
			continue;
		at[has[i]->tag] = (size_t) end;
		/* each part is below 2^34 doubles: the sum cannot wrap */
		end += has[i]->storage(s);
		if (end > SIZE_MAX / sizeof(double))
			return false;
	}
	*total = (size_t) end;
	return true;
}

size_t
km_model_storage_doubles(const km_model_shape *s)
{
	layout		l;
	known		k;
	size_t		at[KM_SECTION_TAGS];
	size_t		total;

	if (!layout_of(s, &l))
		return 0;
	known_sections(&k);
	if (!section_storage(&k, s, &l, at, &total))
		return 0;
	return total;
}

size_t
km_model_size(const km_model_shape *s)
{
	layout		l;
	known		k;
	const km_section_ops *has[KM_SECTION_TAGS];
	int			n;
	uint64_t	size = KM_MODEL_HEADER_SIZE;

	if (km_method_get(s->method) == NULL || s->n_train == 0 || s->d == 0 ||
		km_repr_get(s->approximation) == NULL ||
		!layout_of(s, &l))
		return 0;
	known_sections(&k);
	n = sections_of(&k, s, has);
	for (int i = 0; i < n; i++)
	{
		uint64_t	bytes = has[i]->bytes(s);

		if (bytes == 0 && !has[i]->may_be_empty)
			return 0;
		size += KM_SECTION_OVERHEAD + bytes;
		if (size > KM_MODEL_MAX_SIZE)
			return 0;
	}
	return (size_t) size;
}

/* One section at p: head, payload, CRC; returns the next section. */
static uint8_t *
write_section(uint8_t *p, const km_section_ops *k, const km_model *m,
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
write_header(uint8_t *buf, const km_model *m, uint32_t count, size_t total)
{
	km_model	h = *m;

	/* the header's task is the method's, whatever m says */
	h.task = km_method_get(m->method)->task;
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
	known		k;
	const km_section_ops *has[KM_SECTION_TAGS];
	int			n;

	known_sections(&k);
	n = sections_of(&k, &s, has);
	write_header(buf, m, (uint32_t) n, km_model_size(&s));
	for (int i = 0; i < n; i++)
		p = write_section(p, has[i], m, &s);
}

/* ------------------------------------------------------------------ */
/* Format 2: reading                                                  */
/* ------------------------------------------------------------------ */

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
			 uint32_t count, bool check_crc, km_section *s, km_error *err)
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
place_section(const km_section *s, uint32_t i, unsigned *last_tag,
			  const known *k, km_section found[KM_SECTION_TAGS], km_error *err)
{
	if (s->tag <= *last_tag)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "Section %u has tag %u after tag %u; tags ascend.",
					   i + 1, (unsigned) s->tag, *last_tag);
	*last_tag = s->tag;
	if (s->tag < KM_SECTION_TAGS && k->by_tag[s->tag] != NULL)
	{
		/* a known section is required or not as the writer marks it */
		uint16_t	want = k->by_tag[s->tag]->flags;

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
walk_sections(const uint8_t *buf, size_t len, bool check_crc, const known *k,
			  km_section found[KM_SECTION_TAGS], km_error *err)
{
	uint32_t	count;
	size_t		at = KM_MODEL_HEADER_SIZE;
	unsigned	last_tag = 0;
	km_status	st;

	if ((st = check_frame_v2(buf, len, err)) != KM_OK)
		return st;

	memset(found, 0, sizeof(km_section) * KM_SECTION_TAGS);
	count = load_u32(buf + 72);
	for (uint32_t i = 0; i < count; i++)
	{
		km_section	s;

		if ((st = read_section(buf, len, at, i, count, check_crc, &s, err)) != KM_OK ||
			(st = place_section(&s, i, &last_tag, k, found, err)) != KM_OK)
			return st;
		at += KM_SECTION_OVERHEAD + (size_t) s.length;
	}
	if (at != len)
		return km_fail(err, KM_ERR_FORMAT, "trailing bytes after kernel_ml model",
					   "The %u sections end at byte %zu of %zu.", count, at, len);
	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		if (k->owner[tag] == OWNER_COMMON &&
			(k->by_tag[tag]->flags & KM_SECTION_REQUIRED) && found[tag].payload == NULL)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "The model has no section with tag %u.", (unsigned) tag);
	return KM_OK;
}

/* Section tag of found has the length shape s gives it. */
static km_status
check_length(const km_section *found, const km_section_ops *k,
			 const km_model_shape *s, km_error *err)
{
	uint64_t	want = k->bytes(s);
	unsigned	tag = k->tag;

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
 * The shape of a format 2 model: d and the method from the header, the
 * rest from the sections found (each known one's shape hook: n and q from
 * the expansion, c, the representation, the classes...); then each known
 * section's presence rule, and the length of each sized one.  The fields
 * are validated by decode_v2.
 */
static km_status
shape_v2(const uint8_t *buf, const known *k, const km_section *found,
		 km_model_shape *s, km_error *err)
{
	layout		l;
	km_status	st;

	memset(s, 0, sizeof(*s));
	s->method = (km_method) buf[17];
	s->d = load_u32(buf + 28);
	s->approximation = (km_approx) km_repr_default()->id;
	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		if (k->by_tag[tag] && k->by_tag[tag]->shape && found[tag].payload)
			k->by_tag[tag]->shape(&found[tag], s);

	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		if (k->by_tag[tag] && k->by_tag[tag]->check_shape &&
			(st = k->by_tag[tag]->check_shape(found, s, err)) != KM_OK)
			return st;
	if (s->d < 1 || s->n_train < 1 || !layout_of(s, &l) ||
		(found[KM_SECTION_SELECTION].payload && s->c < 1))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model says %u rows of %u features, %u outputs and %u candidates, which do not fit together.",
					   (unsigned) s->n_train, (unsigned) s->d, (unsigned) s->q,
					   (unsigned) s->c);
	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		if (k->by_tag[tag] && k->by_tag[tag]->check_presence &&
			(st = k->by_tag[tag]->check_presence(found, s, err)) != KM_OK)
			return st;
	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		if (k->by_tag[tag] && k->by_tag[tag]->sized && found[tag].payload &&
			(st = check_length(found, k->by_tag[tag], s, err)) != KM_OK)
			return st;
	return KM_OK;
}

/* Format 2: the header's fields into r; its task is the method's. */
static km_status
header_v2(const uint8_t *buf, km_model *r, km_error *err)
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
	return KM_OK;
}

/*
 * Every known section, by (stage, tag): read if found, judged by its
 * absent hook if not.  A section the shape has reads its arrays into its
 * part of storage (at[tag]); one it does not have only validates.
 */
static km_status
read_sections(const known *k, km_section_in *in, const size_t at[KM_SECTION_TAGS],
			  km_model *r, km_error *err)
{
	km_status	st;

	for (int stage = 0; stage < KM_SECTION_STAGES; stage++)
		for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
		{
			const km_section_ops *sec = k->by_tag[tag];
			km_status	(*hook) (const km_section_in *, km_model *, km_error *);

			if (sec == NULL || sec->stage != stage)
				continue;
			in->mine = in->storage && sec->storage && sec->present(in->s) ?
				in->storage + at[tag] : NULL;
			hook = in->found[tag].payload ? sec->read : sec->absent;
			if (hook && (st = hook(in, r, err)) != KM_OK)
				return st;
		}
	return KM_OK;
}

/* Point r's arrays into storage: the common ones, then each section's. */
static void
attach_sections(const known *k, km_model *r, double *storage,
				const km_model_shape *s, const layout *l,
				const size_t at[KM_SECTION_TAGS])
{
	const km_section_ops *has[KM_SECTION_TAGS];
	int			n = sections_of(k, s, has);

	if (storage == NULL)
		return;
	attach_storage(r, storage, s, l);
	for (int i = 0; i < n; i++)
		if (has[i]->attach)
			has[i]->attach(r, storage + at[has[i]->tag], s);
}

/*
 * Every section found is common or declared by the model's task or
 * representation.
 */
static km_status
check_owners(const known *k, const km_section *found, const km_model *r,
			 km_error *err)
{
	const km_task_ops *t = km_task_lookup(r->task);
	const km_repr_ops *rep = km_repr_lookup(r->approximation);

	for (int tag = 0; tag < KM_SECTION_TAGS; tag++)
	{
		const km_section_ops *sec = k->by_tag[tag];

		if (sec == NULL || found[tag].payload == NULL || k->owner[tag] == OWNER_COMMON ||
			km_section_list_has(km_task_sections(t), sec) ||
			km_section_list_has(km_repr_sections(rep), sec))
			continue;
		if (k->owner[tag] == OWNER_TASK)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "The model's task is %s but it has a %s section.",
						   t->name, sec->name);
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model's representation is %s but it has a %s section.",
					   rep->name, sec->name);
	}
	return KM_OK;
}

static km_status
decode_v2(const uint8_t *buf, size_t len, km_model *m, double *storage,
		  km_error *err)
{
	known		k;
	km_section	found[KM_SECTION_TAGS];
	km_model	r;
	km_model_shape s;
	layout		l;
	km_section_in in;
	size_t		at[KM_SECTION_TAGS];
	size_t		total;
	km_status	st;

	known_sections(&k);
	if ((st = walk_sections(buf, len, true, &k, found, err)) != KM_OK ||
		(st = shape_v2(buf, &k, found, &s, err)) != KM_OK)
		return st;
	/* shape_v2 proved the layout; storage holds km_model_storage_doubles */
	layout_of(&s, &l);
	if (!section_storage(&k, &s, &l, at, &total))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model's arrays do not fit in memory.");

	memset(&r, 0, sizeof(r));
	r.format_version = 2;
	r.n_train = s.n_train;
	r.n_outputs = s.q;
	in.found = found;
	in.s = &s;
	in.repr_sections = km_repr_sections(km_repr_lookup(s.approximation));
	in.storage = storage;
	in.l = &l;
	in.mine = NULL;
	if ((st = header_v2(buf, &r, err)) != KM_OK ||
		(st = read_sections(&k, &in, at, &r, err)) != KM_OK ||
		(st = check_owners(&k, found, &r, err)) != KM_OK)
		return st;

	attach_sections(&k, &r, storage, &s, &l, at);
	*m = r;
	return KM_OK;
}

km_status
km_model_peek(const uint8_t *buf, size_t len, km_model_shape *shape,
			  km_error *err)
{
	uint16_t	version;
	km_status	st;
	known		k;
	km_section	found[KM_SECTION_TAGS];
	km_model_shape s;

	if ((st = check_version(buf, len, &version, err)) != KM_OK)
		return st;
	if (version == 1)
		return peek_v1(buf, len, shape, err);
	known_sections(&k);
	if ((st = walk_sections(buf, len, false, &k, found, err)) != KM_OK ||
		(st = shape_v2(buf, &k, found, &s, err)) != KM_OK)
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
	km_model_shape s = km_model_shape_of(m);
	known		k;
	const km_section_ops *has[KM_SECTION_TAGS];
	int			n;

	for (size_t i = 0; i < N_HEADER_FIELDS; i++)
	{
		const km_field *f = &header_fields[i].f;

		if (!rule_applies(f, m))
			continue;
		km_model_describe_fields(m, f, 1, out);
	}
	if (m->n_outputs > 1)
		out->integer(out->ctx, "outputs", m->n_outputs);
	/* then the scalar fields of each section it has, in tag order */
	known_sections(&k);
	n = sections_of(&k, &s, has);
	for (int i = 0; i < n; i++)
		if (has[i]->describe)
			has[i]->describe(m, out);
}
