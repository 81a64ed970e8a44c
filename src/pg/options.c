/*
 * options.c - read the jsonb options object into the core's validator
 * (options_core.c), which holds the table of keys and every check; this
 * file converts jsonb values to km_value and raises the errors it reports.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "options.h"

static void pg_attribute_noreturn()
report(const km_option_error *err)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", err->message),
			 errdetail("%s", err->detail),
			 err->hint[0] ? errhint("%s", err->hint) : 0));
}

/* A scalar, or a nested container (its elements are not read). */
static void
scalar_value(JsonbValue *v, km_value *out)
{
	memset(out, 0, sizeof(*out));
	switch (v->type)
	{
		case jbvNull:
			out->type = KM_VALUE_NULL;
			out->text = "null";
			break;
		case jbvString:
			out->type = KM_VALUE_STRING;
			out->string = pnstrdup(v->val.string.val, v->val.string.len);
			out->text = psprintf("\"%s\"", out->string);
			break;
		case jbvNumeric:
			out->type = KM_VALUE_NUMBER;
			out->number = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
															 NumericGetDatum(v->val.numeric)));
			out->text = DatumGetCString(DirectFunctionCall1(numeric_out,
															NumericGetDatum(v->val.numeric)));
			break;
		case jbvBool:
			out->type = KM_VALUE_BOOL;
			out->boolean = v->val.boolean;
			out->text = v->val.boolean ? "true" : "false";
			break;
		default:
			out->type = v->type == jbvBinary &&
				JsonContainerIsArray(v->val.binary.data) ?
				KM_VALUE_ARRAY : KM_VALUE_OBJECT;
			out->text = "an array or object";
			break;
	}
}

/* The value of a key: a scalar, an object, or an array and its elements. */
static void
jsonb_value(JsonbValue *v, km_value *out)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	e;
	km_value   *elems;
	int			n = 0;

	const char **keys = NULL;

	scalar_value(v, out);
	if (out->type != KM_VALUE_ARRAY && out->type != KM_VALUE_OBJECT)
		return;
	elems = palloc(sizeof(km_value) *
				   Max(1, JsonContainerSize((JsonbContainer *) v->val.binary.data)));
	if (out->type == KM_VALUE_OBJECT)
		keys = palloc(sizeof(char *) *
					  Max(1, JsonContainerSize((JsonbContainer *) v->val.binary.data)));
	it = JsonbIteratorInit((JsonbContainer *) v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok == WJB_ELEM)
			scalar_value(&e, &elems[n++]);
		else if (tok == WJB_KEY && keys != NULL)
			keys[n] = pnstrdup(e.val.string.val, e.val.string.len);
		else if (tok == WJB_VALUE && keys != NULL)
			scalar_value(&e, &elems[n++]);
	}
	out->elems = elems;
	out->n_elems = n;
	out->keys = keys;
	if (keys != NULL)
		out->text = "an object";
}

/*
 * Defaults, then the keys of opts (NULL for none) into out; false (err
 * filled) for invalid options.
 */
static bool
parse_options(Jsonb *opts, km_options *out, bool text_label, km_option_error *err)
{
	km_options_parser parser;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;

	km_options_begin(&parser, out);
	if (text_label)
		km_options_text_label(&parser);
	if (opts == NULL)
		return !text_label || km_options_finish(&parser, err);
	if (!JB_ROOT_IS_OBJECT(opts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be a jsonb object"),
				 errdetail("%s", km_options_valid_keys())));

	it = JsonbIteratorInit(&opts->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		km_value	value;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		tok = JsonbIteratorNext(&it, &v, true);
		Assert(tok == WJB_VALUE);
		jsonb_value(&v, &value);
		if (!km_options_set(&parser, key, &value, err))
			return false;
	}
	return km_options_finish(&parser, err);
}

void
km_options_parse(Jsonb *opts, km_options *out)
{
	km_options_parse_labels(opts, out, false);
}

void
km_options_parse_labels(Jsonb *opts, km_options *out, bool text_label)
{
	km_option_error err;

	if (!parse_options(opts, out, text_label, &err))
		report(&err);
}

KmLabelKind
km_label_kind_of_type(Oid typid)
{
	char		category;
	bool		preferred;

	get_type_category_preferred(getBaseType(typid), &category, &preferred);
	return category == TYPCATEGORY_STRING || category == TYPCATEGORY_BOOLEAN ?
		KM_LABELS_CLASSES : KM_LABELS_NUMERIC;
}

void
km_options_parse_for_label(Jsonb *opts, km_options *out, KmLabelKind kind)
{
	km_options_parse_labels(opts, out, kind == KM_LABELS_CLASSES);
}

void
km_options_require_single(const km_options *opts, const char *fname)
{
	km_option_error err;

	if (!km_options_check_single(opts, fname, &err))
		report(&err);
}
