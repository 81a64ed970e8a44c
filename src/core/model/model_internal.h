/*
 * model_internal.h - what the pieces of the model codec share (core, no
 * PostgreSQL headers; private to src/core/model*.c).
 *
 *   model.c         the shape, the storage layout and the array readers
 *                   both formats use
 *   model_fields.c  the field codec (km_field tables to and from bytes)
 *                   and kernel_model_info's field walk
 *   model_v1.c      format 1 (0.1.0): its reader, and its writer for tests
 *   model_sections_task.c, model_sections_repr.c
 *                   the sections the task and representation rows declare
 *                   (model_section.h)
 *   model_format.c  format 2's frame and common sections, the walk over
 *                   every known section, and the entry points
 *                   (km_model_size, _encode, _peek, _decode)
 *
 * Each calls only those listed above it (no import circle; model_format.c
 * reaches the sections through the rows' pointers, never by name).  This header
 * does not include model.h, which model.c implements: every file that
 * includes it includes model.h first.
 *
 * The shared functions keep the short names they had as statics in one
 * file; the macros below give them the km_model_ prefix as link-time
 * symbols, as every other function the core exports has (the extension's
 * symbols share one namespace with the server's).
 */
#ifndef KM_MODEL_INTERNAL_H
#define KM_MODEL_INTERNAL_H

#include <endian.h>
#include <string.h>

#include "method.h"

struct km_model;
struct km_model_shape;

/*
 * PostgreSQL cannot store a varlena of 1 GB or more (MaxAllocSize is
 * 0x3FFFFFFF), so a larger model could never be written or read back;
 * km_model_size treats it like an overflow.
 */
#define KM_MODEL_MAX_SIZE ((uint64_t) 0x3FFFFFFF)

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
 * Where each array of the common sections of a decoded model lies in its
 * storage, in doubles, as both decoders fill it.  Arrays a shape does not
 * have take no room.  The arrays of the other sections follow, each
 * section's in a part of its own (km_section_ops.storage, model_format.c),
 * and km_model_storage_doubles counts them all.
 */
typedef struct layout
{
	size_t		mean,
				scale,
				alpha,
				intercepts,
				X,
				candidates,
				total;
} layout;

#define layout_of		km_model_layout_of
#define store_doubles	km_model_store_doubles
#define bad_field		km_model_bad_field
#define check_selection	km_model_check_selection
#define read_scaler		km_model_read_scaler
#define read_expansion	km_model_read_expansion
#define read_selection	km_model_read_selection
#define attach_storage	km_model_attach_storage
#define read_array		km_model_read_array
#define storage_at		km_model_storage_at
#define field_size		km_model_field_size
#define fields_size		km_model_fields_size
#define put_field		km_model_put_field
#define put_fields		km_model_put_fields
#define get_field		km_model_get_field
#define get_fields		km_model_get_fields
#define rule_applies	km_model_rule_applies
#define peek_v1			km_model_peek_v1
#define decode_v1		km_model_decode_v1

/* model.c */
bool		layout_of(const struct km_model_shape *s, layout *l);
uint8_t    *store_doubles(uint8_t *p, const double *v, size_t count);
km_status	bad_field(km_error *err, const char *field, double value,
					  const char *rule);
km_status	check_selection(const struct km_model *r, unsigned raw_cv,
							km_error *err);
km_status	read_scaler(const uint8_t **pp, uint32_t d, double *storage,
						const layout *l, km_error *err);
km_status	read_expansion(const uint8_t **pp, const struct km_model_shape *s,
						   const struct km_model *r, double *storage,
						   const layout *l, km_error *err);
km_status	read_selection(const uint8_t *p, uint32_t c, km_cv cv,
						   double *storage, const layout *l, km_error *err);
void		attach_storage(struct km_model *r, double *storage,
						   const struct km_model_shape *s, const layout *l);
km_status	read_array(const uint8_t **pp, size_t count, const char *name,
					   bool positive, double *out, km_error *err);
double	   *storage_at(double *storage, size_t offset);

/* model_fields.c */
size_t		field_size(km_field_type type);
size_t		fields_size(const km_field *fields, int n);
void		put_field(uint8_t *p, const km_field *f,
					  const struct km_model *m);
uint8_t    *put_fields(uint8_t *p, const km_field *fields, int n,
					   const struct km_model *m);
km_status	get_field(const uint8_t *p, const km_field *f, struct km_model *m,
					  const char *section, km_error *err);
km_status	get_fields(const uint8_t *p, uint64_t length,
					   const km_field *fields, int nf, struct km_model *m,
					   const char *section_name, km_error *err);
bool		rule_applies(const km_field *f, const struct km_model *m);

/* model_v1.c */
km_status	peek_v1(const uint8_t *buf, size_t len,
					struct km_model_shape *shape, km_error *err);
km_status	decode_v1(const uint8_t *buf, size_t len, struct km_model *m,
					  double *storage, km_error *err);

#endif							/* KM_MODEL_INTERNAL_H */
