/*
 * model_sections_encoder.c - the ENCODER section (core, no PostgreSQL
 * headers): the columns of a model trained from a table (encoder.h), kept
 * as its payload bytes.  Optional (an older build skips it and still reads
 * the model, which scores float8[] rows of the encoded features), common to
 * every task and representation, and validated whenever a model is read.
 */
#include <string.h>

#include "encoder.h"
#include "model.h"
#include "model_section.h"

static bool
has_encoder(const km_model_shape *s)
{
	return s->encoder_bytes > 0;
}

static uint64_t
encoder_bytes(const km_model_shape *s)
{
	return s->encoder_bytes;
}

static uint8_t *
write_encoder(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	memcpy(p, m->encoder, s->encoder_bytes);
	return p + s->encoder_bytes;
}

/* The length, as the shape's (a payload of 1 GB or more is no shape). */
static void
encoder_shape(const km_section *self, km_model_shape *s)
{
	s->encoder_bytes = self->length <= UINT32_MAX ? (uint32_t) self->length : 0;
}

/* Validated on every read: its columns make the model's d features. */
static km_status
read_encoder(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *sec = &in->found[KM_SECTION_ENCODER];
	km_encoder_counts c;
	km_status	st;

	(void) r;
	if (in->s->encoder_bytes == 0 || sec->length != in->s->encoder_bytes)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The encoder section has %llu bytes.",
					   (unsigned long long) sec->length);
	if ((st = km_encoder_check(sec->payload, (size_t) sec->length, in->s->d,
							   &c, err)) != KM_OK)
		return st;
	if (in->mine)
		memcpy(in->mine, sec->payload, (size_t) sec->length);
	return KM_OK;
}

/* Its bytes, in doubles of the decoded model's storage. */
static uint64_t
encoder_storage(const km_model_shape *s)
{
	return ((uint64_t) s->encoder_bytes + sizeof(double) - 1) / sizeof(double);
}

static void
attach_encoder(km_model *r, double *mine, const km_model_shape *s)
{
	r->encoder = (const uint8_t *) mine;
	r->encoder_bytes = s->encoder_bytes;
}

const km_section_ops km_encoder_section = {
	.tag = KM_SECTION_ENCODER, .flags = 0, .name = "encoder",
	.stage = 2, .present = has_encoder, .bytes = encoder_bytes,
	.write = write_encoder, .shape = encoder_shape, .read = read_encoder,
	.storage = encoder_storage, .attach = attach_encoder,
};
