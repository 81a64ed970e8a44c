/*
 * json.c - jsonb results built as JsonbValues with pushJsonbValue.
 */
#include "postgres.h"

#include <math.h>

#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "json.h"

static void
push_key(KmJson *j, const char *key)
{
	JsonbValue	k;

	if (key == NULL)
		return;
	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = (int) strlen(key);
	j->result = pushJsonbValue(&j->state, WJB_KEY, &k);
}

/* A scalar: WJB_VALUE after a key, WJB_ELEM inside an array. */
static void
push_scalar(KmJson *j, const char *key, JsonbValue *v)
{
	push_key(j, key);
	j->result = pushJsonbValue(&j->state, key ? WJB_VALUE : WJB_ELEM, v);
}

void
km_json_begin(KmJson *j)
{
	j->state = NULL;
	j->result = pushJsonbValue(&j->state, WJB_BEGIN_OBJECT, NULL);
}

void
km_json_num(KmJson *j, const char *key, double v)
{
	JsonbValue	jv;

	if (!isfinite(v))
	{
		km_json_null(j, key);
		return;
	}
	/*
	 * Through float8out's shortest round-trip text, as jsonb_in would read
	 * it: float8_numeric keeps only DBL_DIG (15) digits on PostgreSQL 15, so
	 * 0.1 + 0.2 would print as 0.3.
	 */
	jv.type = jbvNumeric;
	jv.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														 CStringGetDatum(float8out_internal(v)),
														 ObjectIdGetDatum(InvalidOid),
														 Int32GetDatum(-1)));
	push_scalar(j, key, &jv);
}

void
km_json_int(KmJson *j, const char *key, int64 v)
{
	JsonbValue	jv;

	jv.type = jbvNumeric;
	jv.val.numeric = int64_to_numeric(v);
	push_scalar(j, key, &jv);
}

void
km_json_bool(KmJson *j, const char *key, bool v)
{
	JsonbValue	jv;

	jv.type = jbvBool;
	jv.val.boolean = v;
	push_scalar(j, key, &jv);
}

void
km_json_str(KmJson *j, const char *key, const char *v)
{
	JsonbValue	jv;

	if (v == NULL)
	{
		km_json_null(j, key);
		return;
	}
	jv.type = jbvString;
	jv.val.string.val = (char *) v;
	jv.val.string.len = (int) strlen(v);
	push_scalar(j, key, &jv);
}

void
km_json_null(KmJson *j, const char *key)
{
	JsonbValue	jv;

	jv.type = jbvNull;
	push_scalar(j, key, &jv);
}

void
km_json_jsonb(KmJson *j, const char *key, Jsonb *v)
{
	JsonbIterator *it = JsonbIteratorInit(&v->root);
	JsonbValue	jv;
	JsonbIteratorToken tok;

	push_key(j, key);
	if (JB_ROOT_IS_SCALAR(v))
	{
		/* a raw scalar is stored as a one-element array */
		(void) JsonbIteratorNext(&it, &jv, true);
		(void) JsonbIteratorNext(&it, &jv, true);
		j->result = pushJsonbValue(&j->state, key ? WJB_VALUE : WJB_ELEM, &jv);
		return;
	}
	while ((tok = JsonbIteratorNext(&it, &jv, false)) != WJB_DONE)
		j->result = pushJsonbValue(&j->state, tok,
								   tok < WJB_BEGIN_ARRAY ? &jv : NULL);
}

void
km_json_begin_object(KmJson *j, const char *key)
{
	push_key(j, key);
	j->result = pushJsonbValue(&j->state, WJB_BEGIN_OBJECT, NULL);
}

void
km_json_begin_array(KmJson *j, const char *key)
{
	push_key(j, key);
	j->result = pushJsonbValue(&j->state, WJB_BEGIN_ARRAY, NULL);
}

void
km_json_end(KmJson *j)
{
	JsonbIteratorToken tok = j->state->contVal.type == jbvArray ?
		WJB_END_ARRAY : WJB_END_OBJECT;

	j->result = pushJsonbValue(&j->state, tok, NULL);
}

Jsonb *
km_json_finish(KmJson *j)
{
	km_json_end(j);
	return JsonbValueToJsonb(j->result);
}
