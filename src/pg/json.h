/*
 * json.h - building jsonb results directly as JsonbValues (no text round
 * trip through jsonb_in), for every kernel_ml function that returns jsonb.
 *
 *	KmJson		j;
 *	km_json_begin(&j);
 *	km_json_int(&j, "n", n);
 *	km_json_begin_object(&j, "selection");
 *	...
 *	km_json_end(&j);
 *	PG_RETURN_JSONB_P(km_json_finish(&j));
 *
 * Keys are given with each value; inside an array pass NULL.  A number that
 * is not finite is written as null: jsonb cannot hold NaN or infinity.
 */
#ifndef KM_JSON_H
#define KM_JSON_H

#include "postgres.h"

#include "utils/jsonb.h"

typedef struct KmJson
{
	JsonbParseState *state;
	JsonbValue *result;
} KmJson;

/* Open the root object. */
void		km_json_begin(KmJson *j);

void		km_json_num(KmJson *j, const char *key, double v);
void		km_json_int(KmJson *j, const char *key, int64 v);
void		km_json_bool(KmJson *j, const char *key, bool v);
/* v NULL writes null */
void		km_json_str(KmJson *j, const char *key, const char *v);
void		km_json_null(KmJson *j, const char *key);
/* a jsonb value (object, array or scalar) as it is */
void		km_json_jsonb(KmJson *j, const char *key, Jsonb *v);

void		km_json_begin_object(KmJson *j, const char *key);
void		km_json_begin_array(KmJson *j, const char *key);
/* Close the innermost open object or array. */
void		km_json_end(KmJson *j);

/* Close the root object and return it. */
Jsonb	   *km_json_finish(KmJson *j);

#endif							/* KM_JSON_H */
