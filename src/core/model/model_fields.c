/*
 * model_fields.c - the field codec of the model format (core, no
 * PostgreSQL headers): a km_field table (method.h) drives the encoding,
 * decoding and validation of the header's fixed fields and of the
 * sections made of scalars, and kernel_model_info's walk over them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "model.h"
#include "model_internal.h"
#include "task.h"

/* The name of an enumeration's value, for kernel_model_info. */
static const char *
enum_name(km_field_rule rule, int v)
{
	switch (rule)
	{
		case KM_RULE_APPROX:
			return km_approx_name((km_approx) v);
		case KM_RULE_CENTRES:
			return km_centres_name((km_centres) v);
		case KM_RULE_LABEL_TYPE:
			return km_label_type_name((km_label_type) v);
		case KM_RULE_MULTICLASS:
			return km_multiclass_name((km_multiclass) v);
		case KM_RULE_SOLVER:
			return km_solver_name((km_solver) v);
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
		case KM_RULE_FRACTION:
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

size_t
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

size_t
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
							sizeof(km_kernel_type) == sizeof(int) &&
							sizeof(km_approx) == sizeof(int) &&
							sizeof(km_label_type) == sizeof(int) &&
							sizeof(km_multiclass) == sizeof(int) ? 1 : -1];

void
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
bool
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
	else if (applies && f->rule == KM_RULE_FRACTION)
	{
		ok = ok && x > 0.0 && x <= 1.0;
		rule = "greater than 0 and at most 1";
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
		case KM_RULE_APPROX:
			return km_repr_get(i) == NULL ? "a known approximation" : NULL;
		case KM_RULE_CENTRES:
			return i < KM_CENTRES_FIRST || i > KM_CENTRES_LAST ? "a known choice of centres" : NULL;
		case KM_RULE_LABEL_TYPE:
			return i < KM_LABEL_FIRST || i > KM_LABEL_LAST ? "a known label type" : NULL;
		case KM_RULE_MULTICLASS:
			return i < KM_MULTICLASS_FIRST || i > KM_MULTICLASS_LAST ? "a known multi-class scheme" : NULL;
		case KM_RULE_SOLVER:
			return i < KM_SOLVER_FIRST || i > KM_SOLVER_LAST ? "a known solver" : NULL;
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
		case KM_RULE_FRACTION:
			return i < 0 || i > 1 ? "0 or 1" : NULL;
		case KM_RULE_TASK:
			return km_task_get(i) == NULL ? "a known task" : NULL;
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
km_status
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

uint8_t *
put_fields(uint8_t *p, const km_field *fields, int n, const km_model *m)
{
	for (int i = 0; i < n; i++)
	{
		put_field(p, &fields[i], m);
		p += field_size(fields[i].type);
	}
	return p;
}

km_status
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
