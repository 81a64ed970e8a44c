/*
 * table_columns.c - a table's columns as kernel_ml reads them (issue 30):
 * which column types it encodes and how (km_table_kind), one value as the
 * encoder takes it (km_table_value), the error for a value it cannot encode
 * (km_table_encode_error) and a model's encoder for kernel_model_info
 * (km_table_describe).  Shared by training over whole rows
 * (src/sql/train_table.c), scoring a row by column names (predict_row.c),
 * kernel_model_info (predict.c) and named table models.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "encoder.h"
#include "json.h"
#include "model.h"
#include "model_bytea.h"
#include "pgutil.h"
#include "table_columns.h"

/* ------------------------------------------------------------------ */
/* Column types                                                       */
/* ------------------------------------------------------------------ */

int
km_table_kind(Oid typid, bool *by_output)
{
	Oid			base = getBaseType(typid);

	*by_output = false;
	switch (base)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
			return KM_COLUMN_NUMBER;
		case BOOLOID:
			return KM_COLUMN_BOOL;
		case TEXTOID:
		case VARCHAROID:
			return KM_COLUMN_CATEGORY;
		case BPCHAROID:
		case NAMEOID:
			*by_output = true;
			return KM_COLUMN_CATEGORY;
		default:
			if (type_is_enum(base))
			{
				*by_output = true;
				return KM_COLUMN_CATEGORY;
			}
			return -1;
	}
}

void
km_table_value(Datum d, bool isnull, km_column_kind kind, Oid typid,
			   bool by_output, FmgrInfo *out, km_encoder_value *v)
{
	v->isnull = isnull;
	v->number = 0.0;
	v->str = NULL;
	v->len = 0;
	if (isnull)
		return;
	if (kind == KM_COLUMN_CATEGORY)
	{
		if (by_output)
		{
			v->str = OutputFunctionCall(out, d);
			v->len = strlen(v->str);
		}
		else
		{
			text	   *t = DatumGetTextPP(d);

			v->str = VARDATA_ANY(t);
			v->len = VARSIZE_ANY_EXHDR(t);
		}
		return;
	}
	if (kind == KM_COLUMN_BOOL)
	{
		v->number = DatumGetBool(d) ? 1.0 : 0.0;
		return;
	}
	switch (typid)
	{
		case INT2OID:
			v->number = (double) DatumGetInt16(d);
			break;
		case INT4OID:
			v->number = (double) DatumGetInt32(d);
			break;
		case INT8OID:
			v->number = (double) DatumGetInt64(d);
			break;
		case FLOAT4OID:
			v->number = (double) DatumGetFloat4(d);
			break;
		case FLOAT8OID:
			v->number = DatumGetFloat8(d);
			break;
		default:
			v->number = DatumGetFloat8(DirectFunctionCall1(numeric_float8, d));
			break;
	}
}

void
km_table_encode_error(const km_encoder *e, km_encode_fault f, uint32 bad,
					  const km_encoder_value *vals, const char *where)
{
	const km_encoder_column *c = &e->columns[bad];

	if (f == KM_ENCODE_NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("null value in column \"%s\"", c->name),
				 errdetail("%s has NULL in column \"%s\", and the model imputes nothing.", where,
						   c->name),
				 errhint("Train with \"impute\": \"mean\", \"median\" or \"most_frequent\", or leave out the rows with NULLs.")));
	if (f == KM_ENCODE_UNKNOWN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown category \"%s\" in column \"%s\"",
						pnstrdup(vals[bad].str, vals[bad].len), c->name),
				 errdetail("%s has a value of column \"%s\" that no training row had; the model was trained with \"unknown\": \"error\".",
						   where, c->name),
				 errhint("Train with \"unknown\": \"ignore\" (the default) to score unseen categories as all zeros.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("feature values must be finite"),
			 errdetail("%s has %s in column \"%s\".", where,
					   float8out_internal(vals[bad].number), c->name)));
}

/* kernel_model_info: "columns", one object per column, and "target", when it has them. */
void
km_table_describe(bytea *model, KmJson *j)
{
	const uint8 *buf = (const uint8 *) VARDATA_ANY(model);
	Size		len = VARSIZE_ANY_EXHDR(model);
	km_model_shape shape;
	km_model	m;
	km_error	err;
	km_encoder_counts c;
	km_encoder	e;
	km_encoder_column *cols;
	const char **cats;

	if (km_model_peek(buf, len, &shape, &err) != KM_OK)
		km_raise(&err);
	if (shape.encoder_bytes == 0)
		return;
	(void) km_model_decode_bytea(model, &m);
	if (km_encoder_check(m.encoder, m.encoder_bytes, m.n_features, &c, &err) != KM_OK)
		km_raise(&err);
	cols = palloc0(sizeof(km_encoder_column) * c.n_columns);
	cats = palloc0(sizeof(char *) * Max(1, c.n_categories));
	km_encoder_read(m.encoder, m.encoder_bytes, &e, cols, cats);
	km_json_str(j, "impute", km_impute_name(e.impute));
	km_json_str(j, "unknown", e.unknown == KM_UNKNOWN_ERROR ? "error" : "ignore");
	/* the target column (kernel_evaluate(model, row) reads it); older models: null */
	if (e.target != NULL)
	{
		km_json_begin_object(j, "target");
		km_json_str(j, "name", e.target);
		km_json_str(j, "type", e.target_type);
		km_json_end(j);
	}
	else
		km_json_null(j, "target");
	km_json_begin_array(j, "columns");
	for (uint32 i = 0; i < e.n_columns; i++)
	{
		const km_encoder_column *col = &cols[i];

		km_json_begin_object(j, NULL);
		km_json_str(j, "name", col->name);
		km_json_str(j, "type", col->type_name);
		km_json_str(j, "encoding", km_column_kind_name(col->kind));
		km_json_int(j, "first_feature", col->offset + 1);
		if (col->kind == KM_COLUMN_CATEGORY)
		{
			km_json_begin_array(j, "categories");
			for (uint32 k = 0; k < col->n_categories; k++)
				km_json_str(j, NULL, col->categories[k]);
			km_json_end(j);
			if (col->has_impute)
				km_json_str(j, "impute", col->categories[col->impute_category]);
			else
				km_json_null(j, "impute");
		}
		else if (col->has_impute)
			km_json_num(j, "impute", col->impute);
		else
			km_json_null(j, "impute");
		km_json_end(j);
	}
	km_json_end(j);
	/*
	 * The decoded arrays stay: the names and categories in j point into them
	 * until the caller builds the jsonb (the caller's context frees them).
	 */
}
