/*
 * train_table.c - kernel_train(row record, target text, options jsonb):
 * training from whole rows of a table (issue 30).
 *
 * Every column but the target is a feature (or those "features" lists):
 * numbers as they are, booleans as 0 / 1, text and enums one-hot over the
 * categories of the training rows (encoder.h).  The state keeps the raw
 * values; the final function learns the imputation values ("impute":
 * "mean", "median" or "most_frequent", over the rows whose target is not
 * NULL: the rows the model is fitted on) and the categories, encodes every
 * row, and hands the encoded rows to kernel_train's own final function, so
 * that the model is exactly kernel_train's on those float8[] rows.  The
 * encoder is then stored in the model (its ENCODER section), and
 * kernel_predict(model, row) encodes a row by its column names.
 *
 * Statistics are order-free (values sorted first, categories in byte
 * order, ties of the most frequent value to the smallest), so the model
 * does not depend on the order rows arrive in any more than kernel_train's.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "encoder.h"
#include "model.h"
#include "model_bytea.h"
#include "options.h"
#include "pgutil.h"
#include "rowset.h"
#include "table_rows.h"
#include "train_rows.h"

PG_FUNCTION_INFO_V1(kernel_train_row_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_row_final);

/* kernel_train's final function (train.c), given the encoded rows */
extern Datum kernel_train_final(PG_FUNCTION_ARGS);

/* ------------------------------------------------------------------ */
/* The state: raw values of every training row                        */
/* ------------------------------------------------------------------ */

static const char *const table_keys[] = {"impute", "unknown", "features", "categorical"};

/* A string option of optjson, or NULL. */
static const char *
string_option(Jsonb *opts, const char *key, const char *const *valid, int nvalid)
{
	JsonbValue *v;

	if (opts == NULL || !JB_ROOT_IS_OBJECT(opts))
		return NULL;
	v = getKeyJsonValueFromContainer(&opts->root, key, strlen(key), NULL);
	if (v == NULL)
		return NULL;
	if (v->type == jbvString)
	{
		char	   *s = pnstrdup(v->val.string.val, v->val.string.len);

		for (int i = 0; i < nvalid; i++)
			if (strcmp(s, valid[i]) == 0)
				return valid[i];
	}
	{
		StringInfoData list;

		initStringInfo(&list);
		for (int i = 0; i < nvalid; i++)
			appendStringInfo(&list, "%s\"%s\"", i ? ", " : "", valid[i]);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\"", key),
				 errdetail("Option \"%s\" must be one of %s.", key, list.data)));
	}
	return NULL;
}

/* The columns "features" lists (NULL: every column but the target). */
static List *
feature_names(Jsonb *opts)
{
	JsonbValue *v;
	List	   *names = NIL;
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;

	if (opts == NULL || !JB_ROOT_IS_OBJECT(opts))
		return NIL;
	v = getKeyJsonValueFromContainer(&opts->root, "features", 8, NULL);
	if (v == NULL)
		return NIL;
	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data) ||
		JsonContainerSize(v->val.binary.data) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"features\""),
				 errdetail("Option \"features\" must be a non-empty array of column names.")));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (e.type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for option \"features\""),
					 errdetail("Option \"features\" must be a non-empty array of column names.")));
		names = lappend(names, pnstrdup(e.val.string.val, e.val.string.len));
	}
	return names;
}

/* The options without this file's keys, for km_options_parse. */
Jsonb *
km_table_training_options(Jsonb *opts)
{
	Datum		d;

	if (opts == NULL || !JB_ROOT_IS_OBJECT(opts))
		return opts;
	d = JsonbPGetDatum(opts);
	for (int i = 0; i < lengthof(table_keys); i++)
		d = DirectFunctionCall2(jsonb_delete, d, CStringGetTextDatum(table_keys[i]));
	return DatumGetJsonbP(d);
}

static int
find_attribute(TupleDesc desc, const char *name)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return i;
	}
	return -1;
}

static void
setup_column(TableState *st, TableColumn *c, int att)
{
	Form_pg_attribute a = TupleDescAttr(st->desc, att);
	int			kind = km_table_kind(a->atttypid, &c->by_output);

	c->att = att;
	c->name = pstrdup(NameStr(a->attname));
	c->typid = getBaseType(a->atttypid);
	c->type_name = format_type_be(a->atttypid);
	if (kind < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" has type %s, which a model cannot take", c->name,
						c->type_name),
				 errdetail("Feature columns must be numbers (integer, real, numeric), booleans, text or enums."),
				 errhint("Leave it out with \"features\": [...], or cast it in a view or subquery.")));
	c->kind = (km_column_kind) kind;
	if (c->by_output)
	{
		Oid			fn;
		bool		varlena;

		getTypeOutputInfo(a->atttypid, &fn, &varlena);
		fmgr_info_cxt(fn, &c->out, st->ctx);
	}
}

/* The layout of the first row: target, feature columns, their kinds. */
void
km_table_setup(TableState *st, TupleDesc desc, const char *target, Jsonb *opts)
{
	MemoryContext old = MemoryContextSwitchTo(st->ctx);
	List	   *names;
	ListCell   *lc;
	bool		target_by_output;
	int			tkind;
	static const char *const impute_names[] = {"mean", "median", "most_frequent"};
	static const char *const unknown_names[] = {"ignore", "error"};
	static const char *const categorical_names[] = {"onehot"};
	const char *s;

	if (opts != NULL)
	{
		st->optjson = palloc(VARSIZE(opts));
		memcpy(st->optjson, opts, VARSIZE(opts));
	}
	s = string_option(opts, "impute", impute_names, 3);
	st->impute = s == NULL ? KM_IMPUTE_NONE :
		strcmp(s, "mean") == 0 ? KM_IMPUTE_MEAN :
		strcmp(s, "median") == 0 ? KM_IMPUTE_MEDIAN : KM_IMPUTE_MOST_FREQUENT;
	s = string_option(opts, "unknown", unknown_names, 2);
	st->unknown = s != NULL && strcmp(s, "error") == 0 ? KM_UNKNOWN_ERROR : KM_UNKNOWN_IGNORE;
	(void) string_option(opts, "categorical", categorical_names, 1);
	st->train_opts = km_table_training_options(st->optjson);
	/* the other options are checked now, not after every row is read */
	{
		km_options o;

		km_options_parse(st->train_opts, &o);
	}

	st->desc = CreateTupleDescCopy(desc);

	st->target = pstrdup(target);
	st->target_att = find_attribute(st->desc, target);
	if (st->target_att < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("target column \"%s\" is not a column of the row", target),
				 errhint("Name the target as it is spelled in the table, e.g. kernel_train(t, 'price', '{}').")));
	tkind = km_table_kind(TupleDescAttr(st->desc, st->target_att)->atttypid,
						  &target_by_output);
	if (tkind < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("target column \"%s\" has type %s, which a model cannot take", target,
						format_type_be(TupleDescAttr(st->desc, st->target_att)->atttypid)),
				 errdetail("A target is a number (regression) or a text, enum or boolean label (classification).")));
	st->target_label = tkind != KM_COLUMN_NUMBER;
	st->target_kind = (km_column_kind) tkind;
	st->target_base = getBaseType(TupleDescAttr(st->desc, st->target_att)->atttypid);
	st->target_by_output = target_by_output;
	if (target_by_output)
	{
		Oid			fn;
		bool		varlena;

		getTypeOutputInfo(TupleDescAttr(st->desc, st->target_att)->atttypid, &fn, &varlena);
		fmgr_info_cxt(fn, &st->target_out, st->ctx);
	}

	names = feature_names(opts);
	if (names != NIL)
	{
		st->cols = palloc0(sizeof(TableColumn) * list_length(names));
		foreach(lc, names)
		{
			const char *name = lfirst(lc);
			int			att = find_attribute(st->desc, name);

			if (att < 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("feature column \"%s\" is not a column of the row", name),
						 errdetail("Option \"features\" lists it.")));
			if (att == st->target_att)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("column \"%s\" is both the target and a feature", name)));
			for (int i = 0; i < st->ncols; i++)
				if (st->cols[i].att == att)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("option \"features\" lists column \"%s\" twice", name)));
			setup_column(st, &st->cols[st->ncols++], att);
		}
	}
	else
	{
		st->cols = palloc0(sizeof(TableColumn) * Max(1, st->desc->natts));
		for (int i = 0; i < st->desc->natts; i++)
			if (!TupleDescAttr(st->desc, i)->attisdropped && i != st->target_att)
				setup_column(st, &st->cols[st->ncols++], i);
	}
	if (st->ncols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the row has no feature columns"),
				 errdetail("Every column but the target \"%s\" is a feature; there is none.", target)));
	MemoryContextSwitchTo(old);
}

/* Bytes a row takes in the state (strings counted as they come). */
static double
row_bytes(const TableState *st)
{
	return 9.0 * st->ncols + 8.0 * st->ncols + 8.0;
}

static void
grow(TableState *st)
{
	int64		cap = Max(64, st->cap * 2);
	MemoryContext old = MemoryContextSwitchTo(st->ctx);

	st->grant = km_mem_resize(st->grant, st->ctx,
							  (double) cap * row_bytes(st) + st->str_granted,
							  "kernel_train", true);
	for (int i = 0; i < st->ncols; i++)
	{
		TableColumn *c = &st->cols[i];

		if (c->kind == KM_COLUMN_CATEGORY)
			c->str = st->cap ? repalloc_huge(c->str, cap * sizeof(char *)) :
				palloc_extended(cap * sizeof(char *), MCXT_ALLOC_HUGE);
		else
			c->num = st->cap ? repalloc_huge(c->num, cap * sizeof(double)) :
				palloc_extended(cap * sizeof(double), MCXT_ALLOC_HUGE);
		c->null = st->cap ? repalloc_huge(c->null, cap * sizeof(bool)) :
			palloc_extended(cap * sizeof(bool), MCXT_ALLOC_HUGE);
	}
	if (st->target_label)
		st->label = st->cap ? repalloc_huge(st->label, cap * sizeof(char *)) :
			palloc_extended(cap * sizeof(char *), MCXT_ALLOC_HUGE);
	else
		st->y = st->cap ? repalloc_huge(st->y, cap * sizeof(double)) :
			palloc_extended(cap * sizeof(double), MCXT_ALLOC_HUGE);
	st->cap = cap;
	MemoryContextSwitchTo(old);
}

/*
 * A copy of a label or category of len bytes, counted against
 * kernel_ml.max_memory with the rows (the grant grows by at least 1 MB at
 * a time, so a row's strings rarely ask again).
 */
static char *
keep_string(TableState *st, const char *v, size_t len)
{
	st->str_bytes += (double) len + 1.0 + 16.0;	/* and the chunk header */
	if (st->str_bytes > st->str_granted)
	{
		st->str_granted = Max(st->str_bytes * 1.25, st->str_bytes + 1024.0 * 1024.0);
		st->grant = km_mem_resize(st->grant, st->ctx,
								  (double) st->cap * row_bytes(st) + st->str_granted,
								  "kernel_train", true);
	}
	return pnstrdup(v, len);
}

static bool
same_jsonb(Jsonb *a, Jsonb *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0;
}

/* kernel_train_row_sfunc(state, row record, target text [, options jsonb]) */
Datum
kernel_train_row_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train");
	TableState *st = PG_ARGISNULL(0) ? NULL : (TableState *) PG_GETARG_POINTER(0);
	Jsonb	   *opts = PG_NARGS() > 3 && !PG_ARGISNULL(3) ? PG_GETARG_JSONB_P(3) : NULL;
	HeapTupleHeader rec;
	HeapTupleData tup;
	Datum	   *values;
	bool	   *nulls;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("target column name must not be null")));
	if (st == NULL)
	{
		TupleDesc	desc;

		if (PG_ARGISNULL(1))
			PG_RETURN_NULL();	/* a NULL row before any: no layout yet */
		rec = PG_GETARG_HEAPTUPLEHEADER(1);
		st = MemoryContextAllocZero(aggctx, sizeof(TableState));
		st->ctx = aggctx;
		st->typid = HeapTupleHeaderGetTypeId(rec);
		st->typmod = HeapTupleHeaderGetTypMod(rec);
		desc = lookup_rowtype_tupdesc(st->typid, st->typmod);
		km_table_setup(st, desc, text_to_cstring(PG_GETARG_TEXT_PP(2)), opts);
		ReleaseTupleDesc(desc);
	}
	else if (!same_jsonb(st->optjson, opts) ||
			 strcmp(st->target, text_to_cstring(PG_GETARG_TEXT_PP(2))) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("Row " INT64_FORMAT " has another target column or other options than the rows before it.",
						   st->seen + 1),
				 errhint("Pass the target and the options as constants or query parameters.")));
	if (PG_ARGISNULL(1))
	{
		st->seen++;
		st->skipped++;
		PG_RETURN_POINTER(st);
	}
	rec = PG_GETARG_HEAPTUPLEHEADER(1);
	if (HeapTupleHeaderGetTypeId(rec) != st->typid ||
		HeapTupleHeaderGetTypMod(rec) != st->typmod)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("rows of one kernel_train call must all have the same row type"),
				 errdetail("Row " INT64_FORMAT " has another type than the first row.", st->seen + 1)));
	tup.t_len = HeapTupleHeaderGetDatumLength(rec);
	ItemPointerSetInvalid(&tup.t_self);
	tup.t_tableOid = InvalidOid;
	tup.t_data = rec;
	values = palloc(sizeof(Datum) * st->desc->natts);
	nulls = palloc(sizeof(bool) * st->desc->natts);
	heap_deform_tuple(&tup, st->desc, values, nulls);
	km_table_add(st, values, nulls);
	PG_RETURN_POINTER(st);
}

void
km_table_add(TableState *st, Datum *values, bool *nulls)
{
	MemoryContext old;
	km_encoder_value v;

	st->seen++;
	if (nulls[st->target_att])
	{
		st->skipped++;
		return;
	}
	if (st->n == st->cap)
		grow(st);
	old = MemoryContextSwitchTo(st->ctx);
	km_table_value(values[st->target_att], false, st->target_kind, st->target_base,
				   st->target_by_output, &st->target_out, &v);
	if (!st->target_label)
	{
		if (!isfinite(v.number))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("target values must be finite"),
					 errdetail("Row " INT64_FORMAT " has target %s.", st->seen,
							   float8out_internal(v.number))));
		st->y[st->n] = v.number;
	}
	else if (st->target_kind == KM_COLUMN_BOOL)
		st->label[st->n] = keep_string(st, v.number != 0.0 ? "true" : "false",
									   v.number != 0.0 ? 4 : 5);
	else
		st->label[st->n] = keep_string(st, v.str, v.len);
	for (int i = 0; i < st->ncols; i++)
	{
		TableColumn *c = &st->cols[i];

		km_table_value(values[c->att], nulls[c->att], c->kind, c->typid, c->by_output,
					   &c->out, &v);
		c->null[st->n] = v.isnull;
		if (c->kind == KM_COLUMN_CATEGORY)
			c->str[st->n] = v.isnull ? NULL : keep_string(st, v.str, v.len);
		else
		{
			if (!v.isnull && !isfinite(v.number))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_EXCEPTION),
						 errmsg("feature values must be finite"),
						 errdetail("Row " INT64_FORMAT ", column \"%s\", has %s.", st->seen,
								   c->name, float8out_internal(v.number))));
			c->num[st->n] = v.number;
		}
	}
	MemoryContextSwitchTo(old);
	st->n++;
}

/* ------------------------------------------------------------------ */
/* The final function: statistics, encoding, training                 */
/* ------------------------------------------------------------------ */

static int
cmp_cstring(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * Column c's entry of the encoder: its categories and imputed value.
 * False for a column without values when imputing: left out, as
 * scikit-learn's SimpleImputer drops a column it has nothing to learn from.
 */
static bool
learn_column(const TableState *st, TableColumn *c, km_encoder_column *ec)
{
	int64		nn = 0;

	ec->name = c->name;
	ec->type_name = c->type_name;
	ec->kind = c->kind;
	ec->has_impute = false;
	ec->impute = 0.0;
	ec->impute_category = KM_ENCODER_NO_CATEGORY;
	ec->n_categories = 0;
	ec->categories = NULL;
	for (int64 r = 0; r < st->n; r++)
		nn += c->null[r] ? 0 : 1;
	if (nn == 0 && st->impute != KM_IMPUTE_NONE)
	{
		ereport(NOTICE,
				(errmsg("column \"%s\" has no values in the training rows: the model leaves it out",
						c->name),
				 errdetail("Every one of the " INT64_FORMAT " rows with a target has NULL there; there is nothing to impute from.",
						   st->n),
				 errhint("Leave it out with \"features\": [...] to silence this.")));
		return false;
	}
	if (nn == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("column \"%s\" has no values in the training rows", c->name),
				 errdetail("Every one of the " INT64_FORMAT " rows with a target has NULL there.", st->n),
				 errhint("Leave it out with \"features\": [...].")));
	if (c->kind == KM_COLUMN_CATEGORY)
	{
		char	  **sorted = palloc_extended(sizeof(char *) * nn, MCXT_ALLOC_HUGE);
		const char **cats;
		int64		k = 0;
		int64		best_run = 0;
		uint32		ncat = 0;

		for (int64 r = 0; r < st->n; r++)
			if (!c->null[r])
				sorted[k++] = c->str[r];
		qsort(sorted, nn, sizeof(char *), cmp_cstring);
		cats = palloc_extended(sizeof(char *) * nn, MCXT_ALLOC_HUGE);
		for (int64 i = 0; i < nn;)
		{
			int64		j = i;

			while (j < nn && strcmp(sorted[j], sorted[i]) == 0)
				j++;
			/* the first (smallest) of the most frequent */
			if (j - i > best_run)
			{
				best_run = j - i;
				ec->impute_category = ncat;
			}
			cats[ncat++] = sorted[i];
			i = j;
			CHECK_FOR_INTERRUPTS();
		}
		ec->n_categories = ncat;
		ec->categories = cats;
		ec->has_impute = st->impute != KM_IMPUTE_NONE;
		if (!ec->has_impute)
			ec->impute_category = KM_ENCODER_NO_CATEGORY;
		pfree(sorted);
	}
	else if (st->impute != KM_IMPUTE_NONE)
	{
		double	   *vals = palloc_extended(sizeof(double) * nn, MCXT_ALLOC_HUGE);
		int64		k = 0;

		for (int64 r = 0; r < st->n; r++)
			if (!c->null[r])
				vals[k++] = c->num[r];
		ec->has_impute = true;
		ec->impute = km_impute_number(vals, (size_t) nn, st->impute);
		pfree(vals);
	}
	return true;
}

/* The encoder of the training rows, and its payload in *payload. */
void
km_table_learn(TableState *st, km_encoder *e, uint8 **payload, uint64 *bytes)
{
	km_encoder_column *cols = palloc0(sizeof(km_encoder_column) * st->ncols);
	uint64		d = 0;
	int			n = 0;

	st->enc_src = MemoryContextAlloc(st->ctx, sizeof(int) * st->ncols);
	for (int i = 0; i < st->ncols; i++)
	{
		if (!learn_column(st, &st->cols[i], &cols[n]))
			continue;
		cols[n].offset = (uint32) d;
		d += cols[n].kind == KM_COLUMN_CATEGORY ? cols[n].n_categories : 1;
		st->enc_src[n++] = i;
	}
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("no feature column has values in the training rows")));
	e->n_columns = n;
	e->columns = cols;
	e->impute = st->impute;
	e->unknown = st->unknown;
	/* the target column, for kernel_evaluate(model, row) */
	e->target = st->target;
	e->target_type = format_type_be(TupleDescAttr(st->desc, st->target_att)->atttypid);
	e->target_kind = st->target_kind;
	if (d > 100000)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the encoded rows would have " UINT64_FORMAT " features", d),
				 errdetail("One-hot columns give a feature per category."),
				 errhint("Leave out text columns with many distinct values with \"features\": [...].")));
	e->d = (uint32) d;
	*bytes = km_encoder_size(e);
	if (*bytes == 0 || *bytes > UINT32_MAX / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the columns and categories of the training rows are too large to store")));
	*payload = palloc(*bytes);
	km_encoder_write(e, *payload);
}


/* The trained model with the encoder's section added (decoded, re-encoded). */
bytea *
km_table_add_encoder(bytea *model, const uint8 *payload, uint64 bytes)
{
	km_model	m;
	double	   *storage = km_model_decode_bytea(model, &m);
	km_model_shape shape;
	size_t		size;
	bytea	   *result;

	m.encoder = payload;
	m.encoder_bytes = (uint32) bytes;
	shape = km_model_shape_of(&m);
	size = km_model_size(&shape);
	if (size == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model with its columns would exceed 1 GB")));
	result = km_model_encode_bytea(&m, size);
	km_model_check_bytea(result, size);
	pfree(storage);
	return result;
}

void
km_table_encode(const TableState *st, const km_encoder *e, int64 r,
				km_encoder_value *vals, double *x)
{
	uint32		bad;
	km_encode_fault f;
	char		where[64];

	for (uint32 i = 0; i < e->n_columns; i++)
	{
		const TableColumn *c = &st->cols[st->enc_src[i]];

		vals[i].isnull = c->null[r];
		vals[i].number = c->kind == KM_COLUMN_CATEGORY ? 0.0 : c->num[r];
		vals[i].str = c->kind == KM_COLUMN_CATEGORY ? c->str[r] : NULL;
		vals[i].len = vals[i].str ? strlen(vals[i].str) : 0;
	}
	f = km_encoder_encode(e, vals, x, &bad);
	if (f != KM_ENCODE_OK)
	{
		snprintf(where, sizeof(where), "Training row " INT64_FORMAT, r + 1);
		km_table_encode_error(e, f, bad, vals, where);
	}
}

Datum
kernel_train_row_final(PG_FUNCTION_ARGS)
{
	TableState *st;
	km_encoder	e;
	uint8	   *payload;
	uint64		bytes;
	RowSet	   *rs;
	ArrayType  *row;
	km_encoder_value *vals;
	Datum		model;

	agg_context(fcinfo, "kernel_train");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (TableState *) PG_GETARG_POINTER(0);
	if (st->n == 0)
	{
		km_notice_skipped(st->skipped, 0);
		PG_RETURN_NULL();
	}
	km_table_learn(st, &e, &payload, &bytes);

	/* the encoded rows, as kernel_train's float8[] aggregate keeps them */
	rs = rowset_create(CurrentMemoryContext, true);
	rs->label_type = st->target_label ? KM_LABEL_TEXT : 0;
	rowset_set_options(rs, st->train_opts);
	rs->d = (int) e.d;
	rowset_reserve(rs, st->n, "kernel_train");
	row = construct_array(palloc0(sizeof(Datum) * e.d), e.d, FLOAT8OID, 8,
						  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	vals = palloc(sizeof(km_encoder_value) * st->ncols);
	for (int64 r = 0; r < st->n; r++)
	{
		km_table_encode(st, &e, r, vals, (double *) ARR_DATA_PTR(row));
		rs->seen = r + 1;
		if (st->target_label)
			rowset_add_label(rs, row, cstring_to_text(st->label[r]), "kernel_train");
		else
			rowset_add(rs, row, st->y[r], "kernel_train");
		CHECK_FOR_INTERRUPTS();
	}
	rs->seen = st->seen;
	rs->skipped = st->skipped;

	/* kernel_train's final function, on the encoded rows, in this aggregate */
	{
		LOCAL_FCINFO(call, 1);

		InitFunctionCallInfoData(*call, fcinfo->flinfo, 1, fcinfo->fncollation,
								 fcinfo->context, NULL);
		call->args[0].value = PointerGetDatum(rs);
		call->args[0].isnull = false;
		model = kernel_train_final(call);
		if (call->isnull)
			PG_RETURN_NULL();
	}
	PG_RETURN_BYTEA_P(km_table_add_encoder(DatumGetByteaPP(model), payload, bytes));
}
