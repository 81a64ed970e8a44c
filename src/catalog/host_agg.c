/*
 * host_agg.c - the aggregate host (host_agg.h).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/memutils.h"

#include "host_agg.h"
#include "named_common.h"

/* The pass's state from the aggregate's result (NULL: no row), its rows. */
static km_status
take_result(AggHost *a, km_pass *pass, void *state, int64 *rows, km_error *err)
{
	bool		isnull;
	Datum		v;
	PassStateHeader *st;

	*rows = 0;
	if (SPI_processed != 1)
		elog(ERROR, "pass statement returned " UINT64_FORMAT " rows", (uint64) SPI_processed);
	v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return KM_OK;			/* no row of the side: the state as init left it */
	st = (PassStateHeader *) PG_DETOAST_DATUM(v);
	if (VARSIZE(st) < MAXALIGN(sizeof(PassStateHeader)) + pass->state_bytes ||
		st->magic != KM_PASS_STATE_MAGIC || st->state_bytes != pass->state_bytes)
		elog(ERROR, "pass aggregate returned a state of another pass");
	*rows = st->rows;
	if (st->err.status != KM_OK)
	{
		*err = st->err;
		return err->status;
	}
	memcpy(state, pass_state_data(st), pass->state_bytes);
	return KM_OK;
}

static km_status
agg_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	AggHost    *a = ctx;
	CursorHost *h = a->cursor;
	MemoryContext tmp;
	MemoryContext old;
	bytea	   *desc;
	Oid			types[1] = {BYTEAOID};
	Datum		values[1];
	int64		rows = 0;
	km_status	st;

	if (pass->kind == 0 || pass->ordered || pass->point_bytes == NULL)
	{
		a->scans++;
		return a->cursor_host.run(a->cursor_host.ctx, pass, state, err);
	}
	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml pass statement",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	desc = pass_desc_build(pass, &a->rules);
	values[0] = PointerGetDatum(desc);
	pass_desc_live_begin(desc, &a->rules, pass);
	PG_TRY();
	{
		catalog_query_run(h->query,
						  psprintf("SELECT %s._kernel_ml_pass(s.f, s.y, $1) FROM %s",
								   a->schema, h->query->source),
						  1, types, values);
	}
	PG_FINALLY();
	{
		pass_desc_live_end();
	}
	PG_END_TRY();
	st = take_result(a, pass, state, &rows, err);
	SPI_freetuptable(SPI_tuptable);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	a->statements++;
	pass->rows_done = (size_t) rows;
	if (st != KM_OK)
		return st;
	/* every pass reads the rows the counting scan read; the pass by name */
	if (rows != h->rows)
		check_pass_rows("counting", h->rows,
						pnstrdup(pass->what, strcspn(pass->what, ":")), rows,
						h->all_rows ? "usable" : "training");
	return KM_OK;
}

km_host
agg_host(AggHost *a, CursorHost *h, const char *schema)
{
	km_host		host;
	PassRules  *r = &a->rules;
	MemoryContext old = MemoryContextSwitchTo(h->cxt);

	memset(a, 0, sizeof(*a));
	a->cursor = h;
	a->cursor_host = cursor_host(h);
	a->schema = schema;
	r->d = h->d;
	r->target = (PassTarget) h->target;
	r->all_rows = h->all_rows;
	r->seed = h->seed;
	r->test_fraction = h->test_fraction;
	r->folds = h->folds;
	r->nlabels = h->target == CURSOR_VALUES ? 0 : h->nlab;
	if (r->nlabels > 0)
	{
		r->lab_text = palloc0(sizeof(char *) * r->nlabels);
		r->lab_len = palloc0(sizeof(int) * r->nlabels);
		r->lab_value = palloc0(sizeof(double) * r->nlabels);
		r->lab_class = palloc0(sizeof(uint32) * r->nlabels);
		for (int l = 0; l < r->nlabels; l++)
		{
			r->lab_class[l] = h->class_of[l];
			if (h->target == CURSOR_TEXT_LABELS)
			{
				r->lab_text[l] = h->lab_text[l];
				r->lab_len[l] = (int) strlen(h->lab_text[l]);
			}
			else
				r->lab_value[l] = h->lab_value[l];
		}
	}
	MemoryContextSwitchTo(old);
	host = a->cursor_host;
	host.ctx = a;
	host.run = agg_run;
	return host;
}
