/*
 * predict_row.c - kernel_predict(model, row), kernel_predict_class and
 * kernel_predict_proba of a row (a composite value), by bytea or by name:
 * a model trained from a table (train_table.c) encodes the row by its
 * column names (extra columns ignored, order free), then scores the
 * encoded features as kernel_predict(model, features) does.
 *
 * Per call site (fn_extra): the model cache of predict.c (or the by-name
 * cache of catalog_predict.c), a copy of the model's encoder, and the
 * mapping of its columns to the attributes of the row type last seen, so
 * that a row costs a few attribute fetches and a binary search per text
 * column.  The encoder is compared with the decoded model's byte for byte
 * (a few hundred bytes) to notice another model.  kernel_evaluate(model,
 * row) (evaluate.c) keeps a mapping of its own (KmRowMap), the target
 * column mapped too.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "classify.h"
#include "encoder.h"
#include "json.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "predict_row.h"
#include "table_rows.h"

PG_FUNCTION_INFO_V1(kernel_predict_row);
PG_FUNCTION_INFO_V1(kernel_predict_class_row);
PG_FUNCTION_INFO_V1(kernel_predict_proba_row);

/* catalog_predict.c: the deployed model of the name in argument 0 */

/*
 * The mapping of a model's encoder to the row type last seen (predict_row.h):
 * kernel_predict's call sites and kernel_evaluate's (with the target).
 */
struct KmRowMap
{
	MemoryContext ctx;
	bool		with_target;
	/* the encoder last parsed: a copy of its payload */
	uint8	   *enc_bytes;
	uint32		enc_len;
	km_encoder	enc;
	km_encoder_value *vals;
	double	   *x;
	/* the row type the mapping is for, and its descriptor's identity */
	Oid			typid;
	int32		typmod;
	uint64		desc_id;
	TupleDesc	desc;
	int		   *att;			/* per encoder column */
	bool	   *by_output;
	km_column_kind *kind;		/* as the row's column is read */
	Oid		   *base;			/* its base type */
	FmgrInfo   *out;
	/* with_target: the target column, as its attribute is read */
	int			t_att;
	bool		t_by_output;
	km_column_kind t_kind;
	Oid			t_base;
	FmgrInfo	t_out;
};

typedef struct RowCall
{
	ModelCache *mc;				/* bytea forms */
	FmgrInfo	named_flinfo;	/* by-name forms: catalog_predict.c's cache */
	KmRowMap   *map;
	KmProbBuffers pb;
} RowCall;

KmRowMap *
km_row_map_create(MemoryContext ctx, bool with_target)
{
	KmRowMap   *rm = MemoryContextAllocZero(ctx, sizeof(KmRowMap));

	rm->ctx = ctx;
	rm->with_target = with_target;
	return rm;
}

static RowCall *
row_call(FunctionCallInfo fcinfo)
{
	RowCall    *rc = (RowCall *) fcinfo->flinfo->fn_extra;

	if (rc == NULL)
	{
		rc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(RowCall));
		rc->map = km_row_map_create(fcinfo->flinfo->fn_mcxt, false);
		rc->mc = km_model_cache_for_call(fcinfo->flinfo);
		rc->named_flinfo = *fcinfo->flinfo;
		rc->named_flinfo.fn_extra = NULL;
		fcinfo->flinfo->fn_extra = rc;
	}
	return rc;
}

/* The model datum: argument 0 itself, or the deployed version of its name. */
static Datum
call_model(FunctionCallInfo fcinfo, RowCall *rc, KmNamedModel named, ModelCache **mc)
{
	if (named == NULL)
	{
		*mc = rc->mc;
		return PG_GETARG_DATUM(0);
	}
	/* the by-name lookup's cache in a slot of its own */
	return named(fcinfo, PG_GETARG_TEXT_PP(0), &rc->named_flinfo.fn_extra, mc);
}

/* Parse the decoded model's encoder into rc, unless rc has it already. */
static void
load_encoder(KmRowMap *rc, const km_model *m, const char *fname)
{
	km_encoder_counts c;
	km_error	err;
	km_encoder_column *cols;
	const char **cats;

	if (m->encoder == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s of a row needs a model trained from a table", fname),
				 errdetail("The model was trained on float8[] feature arrays; it has no column names."),
				 rc->with_target ?
				 errhint("Evaluate it with %s(model, features float8[], target), or train it with kernel_train(row, target, options) or kernel_model_train(name, table, target, options).",
						 fname) :
				 errhint("Score it with %s(model, features float8[]), or train it with kernel_train(row, target, options) or kernel_model_train(name, table, target, options).",
						 fname)));
	if (rc->enc_bytes != NULL && rc->enc_len == m->encoder_bytes &&
		memcmp(rc->enc_bytes, m->encoder, rc->enc_len) == 0)
		return;
	if (rc->enc_bytes != NULL)
		pfree(rc->enc_bytes);
	rc->enc_bytes = NULL;
	rc->typid = InvalidOid;
	/* validated when the model was decoded; counted again here */
	if (km_encoder_check(m->encoder, m->encoder_bytes, m->n_features, &c, &err) != KM_OK)
		km_raise(&err);
	cols = MemoryContextAllocZero(rc->ctx, sizeof(km_encoder_column) * c.n_columns);
	cats = MemoryContextAllocZero(rc->ctx, sizeof(char *) * Max(1, c.n_categories));
	rc->vals = MemoryContextAllocZero(rc->ctx, sizeof(km_encoder_value) * c.n_columns);
	rc->x = MemoryContextAllocZero(rc->ctx, sizeof(double) * m->n_features);
	rc->att = MemoryContextAllocZero(rc->ctx, sizeof(int) * c.n_columns);
	rc->by_output = MemoryContextAllocZero(rc->ctx, sizeof(bool) * c.n_columns);
	rc->kind = MemoryContextAllocZero(rc->ctx, sizeof(km_column_kind) * c.n_columns);
	rc->base = MemoryContextAllocZero(rc->ctx, sizeof(Oid) * c.n_columns);
	rc->out = MemoryContextAllocZero(rc->ctx, sizeof(FmgrInfo) * c.n_columns);
	rc->enc_bytes = MemoryContextAlloc(rc->ctx, m->encoder_bytes);
	memcpy(rc->enc_bytes, m->encoder, m->encoder_bytes);
	rc->enc_len = m->encoder_bytes;
	km_encoder_read(rc->enc_bytes, rc->enc_len, &rc->enc, cols, cats);
	if (rc->with_target && rc->enc.target == NULL)
	{
		/* the next model is parsed afresh */
		pfree(rc->enc_bytes);
		rc->enc_bytes = NULL;
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s of a row needs a model that records its target column", fname),
				 errdetail("The model was trained from a table by an earlier build of kernel_ml 0.4, which did not store the target column's name."),
				 errhint("Evaluate it with %s(model, features float8[], target), or train it again.",
						 fname)));
	}
}

static const char *
column_list(const km_encoder *e)
{
	StringInfoData s;

	initStringInfo(&s);
	for (uint32 i = 0; i < e->n_columns; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", quote_identifier(e->columns[i].name));
	return s.data;
}

/* The attribute of desc named name, or -1. */
static int
find_att(TupleDesc desc, const char *name)
{
	for (int a = 0; a < desc->natts; a++)
		if (!TupleDescAttr(desc, a)->attisdropped &&
			strcmp(NameStr(TupleDescAttr(desc, a)->attname), name) == 0)
			return a;
	return -1;
}

/* with_target: map the target column of the encoder to rc->desc. */
static void
map_target(KmRowMap *rc)
{
	const km_encoder *e = &rc->enc;
	Oid			typid;
	int			kind;

	rc->t_att = find_att(rc->desc, e->target);
	if (rc->t_att < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("target column \"%s\" of the model is missing from the row", e->target),
				 errdetail("The model was trained to predict the column %s (%s) from the columns %s.",
						   quote_identifier(e->target), e->target_type, column_list(e)),
				 errhint("Evaluate rows that have the target column under its name (extra columns are ignored).")));
	typid = TupleDescAttr(rc->desc, rc->t_att)->atttypid;
	kind = km_table_kind(typid, &rc->t_by_output);
	if (kind < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("target column \"%s\" has type %s, which a model cannot take", e->target,
						format_type_be(typid)),
				 errdetail("The model was trained on a target of type %s.", e->target_type)));
	rc->t_kind = (km_column_kind) kind;
	rc->t_base = getBaseType(typid);
	if (rc->t_by_output)
	{
		Oid			fn;
		bool		varlena;

		getTypeOutputInfo(typid, &fn, &varlena);
		fmgr_info_cxt(fn, &rc->t_out, rc->ctx);
	}
}

/* Map the encoder's columns to the attributes of the row's type, by name. */
static void
map_columns(KmRowMap *rc, HeapTupleHeader rec)
{
	Oid			typid = HeapTupleHeaderGetTypeId(rec);
	int32		typmod = HeapTupleHeaderGetTypMod(rec);
	/* changes when the type does (ALTER TABLE under a long-lived call site) */
	uint64		desc_id = assign_record_type_identifier(typid, typmod);
	TupleDesc	desc;
	MemoryContext old;

	if (rc->typid == typid && rc->typmod == typmod && rc->desc_id == desc_id &&
		OidIsValid(typid))
		return;
	rc->typid = InvalidOid;		/* until the mapping is complete */
	desc = lookup_rowtype_tupdesc(typid, typmod);
	old = MemoryContextSwitchTo(rc->ctx);
	if (rc->desc != NULL)
		FreeTupleDesc(rc->desc);
	rc->desc = CreateTupleDescCopy(desc);
	MemoryContextSwitchTo(old);
	ReleaseTupleDesc(desc);
	for (uint32 i = 0; i < rc->enc.n_columns; i++)
	{
		const km_encoder_column *c = &rc->enc.columns[i];
		int			att = find_att(rc->desc, c->name);
		int			kind;

		if (att < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of the model is missing from the row", c->name),
					 errdetail("The model takes the columns %s.", column_list(&rc->enc)),
					 errhint("Score rows that have every column the model was trained on (extra columns are ignored).")));
		kind = km_table_kind(TupleDescAttr(rc->desc, att)->atttypid, &rc->by_output[i]);
		if (kind != (int) c->kind &&
			!(kind == KM_COLUMN_BOOL && c->kind == KM_COLUMN_NUMBER))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" has type %s; the model was trained on %s", c->name,
							format_type_be(TupleDescAttr(rc->desc, att)->atttypid), c->type_name),
					 errdetail("The model takes it as %s.", km_column_kind_name(c->kind))));
		rc->att[i] = att;
		rc->kind[i] = (km_column_kind) kind;
		rc->base[i] = getBaseType(TupleDescAttr(rc->desc, att)->atttypid);
		if (rc->by_output[i])
		{
			Oid			fn;
			bool		varlena;

			getTypeOutputInfo(TupleDescAttr(rc->desc, att)->atttypid, &fn, &varlena);
			fmgr_info_cxt(fn, &rc->out[i], rc->ctx);
		}
	}
	if (rc->with_target)
		map_target(rc);
	rc->typid = typid;
	rc->typmod = typmod;
	rc->desc_id = desc_id;
}

void
km_row_map_prepare(KmRowMap *rm, const km_model *m, HeapTupleHeader rec, const char *fname)
{
	load_encoder(rm, m, fname);
	map_columns(rm, rec);
}

static void
row_tuple(HeapTupleHeader rec, HeapTupleData *tup)
{
	tup->t_len = HeapTupleHeaderGetDatumLength(rec);
	ItemPointerSetInvalid(&tup->t_self);
	tup->t_tableOid = InvalidOid;
	tup->t_data = rec;
}

const char *
km_row_map_target(KmRowMap *rm, HeapTupleHeader rec, km_encoder_value *v,
				  km_column_kind *kind)
{
	HeapTupleData tup;
	bool		isnull;
	Datum		d;

	Assert(rm->with_target && rm->enc.target != NULL);
	row_tuple(rec, &tup);
	d = heap_getattr(&tup, rm->t_att + 1, rm->desc, &isnull);
	km_table_value(d, isnull, rm->t_kind, rm->t_base, rm->t_by_output, &rm->t_out, v);
	*kind = rm->t_kind;
	return rm->enc.target;
}

const double *
km_row_map_encode(KmRowMap *rm, HeapTupleHeader rec, const char *where)
{
	HeapTupleData tup;
	uint32		bad;
	km_encode_fault f;

	row_tuple(rec, &tup);
	for (uint32 i = 0; i < rm->enc.n_columns; i++)
	{
		bool		isnull;
		Datum		d = heap_getattr(&tup, rm->att[i] + 1, rm->desc, &isnull);

		km_table_value(d, isnull, rm->kind[i], rm->base[i], rm->by_output[i],
					   &rm->out[i], &rm->vals[i]);
	}
	f = km_encoder_encode(&rm->enc, rm->vals, rm->x, &bad);
	if (f != KM_ENCODE_OK)
		km_table_encode_error(&rm->enc, f, bad, rm->vals, where);
	return rm->x;
}

/* The encoded features of the row in argument 1 (rc->map->x), the model decoded. */
static const km_model *
encode_row(FunctionCallInfo fcinfo, RowCall *rc, KmNamedModel named, const char *fname,
		   ModelCache **mc, Datum *model)
{
	HeapTupleHeader rec;
	const km_model *m;

	*model = call_model(fcinfo, rc, named, mc);
	m = km_model_cache_model(*mc, *model);
	rec = PG_GETARG_HEAPTUPLEHEADER(1);
	km_row_map_prepare(rc->map, m, rec, fname);
	(void) km_row_map_encode(rc->map, rec, "The row");
	return m;
}

Datum
km_predict_row(FunctionCallInfo fcinfo, KmNamedModel named)
{
	RowCall    *rc = row_call(fcinfo);
	ModelCache *mc;
	Datum		model;
	const km_model *m = encode_row(fcinfo, rc, named, "kernel_predict", &mc, &model);

	PG_RETURN_FLOAT8(km_model_cache_predict_row(mc, model, rc->map->x, m->n_features));
}

Datum
kernel_predict_row(PG_FUNCTION_ARGS)
{
	return km_predict_row(fcinfo, NULL);
}


Datum
km_predict_class_row(FunctionCallInfo fcinfo, KmNamedModel named)
{
	RowCall    *rc = row_call(fcinfo);
	ModelCache *mc;
	Datum		model;
	const km_model *m = encode_row(fcinfo, rc, named, "kernel_predict_class", &mc, &model);
	const double *f;
	uint32		c;

	km_classifier_prepare(m, "kernel_predict_class", rc->map->ctx, &rc->pb);
	f = km_model_cache_decision(mc, model, rc->map->x, m->n_features);
	c = km_classify_decide(m->multiclass, m->n_classes, f);
	PG_RETURN_TEXT_P(cstring_to_text(km_classes_label(m->labels, m->labels_bytes,
													  m->n_classes, c)));
}

Datum
kernel_predict_class_row(PG_FUNCTION_ARGS)
{
	return km_predict_class_row(fcinfo, NULL);
}


Datum
km_predict_proba_row(FunctionCallInfo fcinfo, KmNamedModel named)
{
	RowCall    *rc = row_call(fcinfo);
	ModelCache *mc;
	Datum		model;
	const km_model *m = encode_row(fcinfo, rc, named, "kernel_predict_proba", &mc, &model);
	km_prob_link link;
	const double *f;
	km_error	err;
	KmJson		j;

	km_classifier_prepare(m, "kernel_predict_proba", rc->map->ctx, &rc->pb);
	link = (km_prob_link) km_model_prob_link_or_raise(m);
	f = km_model_cache_decision(mc, model, rc->map->x, m->n_features);
	if (km_classify_proba(link, m->multiclass, m->n_classes, f, m->prob_A,
						  m->prob_B, rc->pb.p, rc->pb.pwork, &err) != KM_OK)
		km_raise(&err);
	km_json_begin(&j);
	for (uint32 c = 0; c < m->n_classes; c++)
		km_json_num(&j, km_classes_label(m->labels, m->labels_bytes, m->n_classes, c),
					rc->pb.p[c]);
	PG_RETURN_JSONB_P(km_json_finish(&j));
}

Datum
kernel_predict_proba_row(PG_FUNCTION_ARGS)
{
	return km_predict_proba_row(fcinfo, NULL);
}


