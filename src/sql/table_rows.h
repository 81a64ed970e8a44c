/*
 * table_rows.h - the columns of a row (a composite value) as a table model
 * takes them: which SQL types are numbers, booleans or categories, and one
 * value as the row encoder reads it (train_table.c; predict_row.c scores
 * with the same conversions).
 */
#ifndef KM_TABLE_ROWS_H
#define KM_TABLE_ROWS_H

#include "postgres.h"

#include "fmgr.h"
#include "access/tupdesc.h"
#include "utils/jsonb.h"

#include "encoder.h"
#include "pgutil.h"
#include "table_columns.h"

/* ------------------------------------------------------------------ */
/* Training rows: raw values of every row, then the encoder (train_table.c) */
/* ------------------------------------------------------------------ */

typedef struct TableColumn
{
	int			att;			/* 0-based attribute of the row type */
	char	   *name;
	char	   *type_name;
	Oid			typid;
	km_column_kind kind;
	bool		by_output;
	FmgrInfo	out;
	double	   *num;			/* capacity rows: numbers, booleans */
	char	  **str;			/* capacity rows: categories, NUL-terminated */
	bool	   *null;
} TableColumn;

typedef struct TableState
{
	MemoryContext ctx;
	Jsonb	   *optjson;		/* as given, NULL for none */
	Jsonb	   *train_opts;		/* without this file's keys */
	km_impute	impute;
	km_unknown	unknown;
	Oid			typid;			/* of the first row */
	int32		typmod;
	TupleDesc	desc;			/* a copy, in ctx */
	char	   *target;
	int			target_att;
	km_column_kind target_kind;
	Oid			target_base;
	bool		target_label;	/* text, enum or boolean: a classifier's labels */
	bool		target_by_output;
	FmgrInfo	target_out;
	int			ncols;
	TableColumn *cols;
	int		   *enc_src;		/* after km_table_learn: encoder column -> cols */
	int64		n;
	int64		cap;
	int64		seen;
	int64		skipped;		/* NULL target (or NULL row) */
	double	   *y;
	char	  **label;
	KmMemGrant *grant;			/* cap rows of row_bytes, and str_granted */
	double		str_bytes;		/* the labels' and categories' copies so far */
	double		str_granted;	/* what the grant holds for them */
} TableState;


/*
 * Set up st (ctx set, the rest zero) for rows of desc: the target column,
 * the feature columns ("features" or every other column) and their kinds,
 * the options (checked).
 */
void		km_table_setup(TableState *st, TupleDesc desc, const char *target,
						   Jsonb *opts);

/* Keep one row's values (a NULL target: counted as skipped). */
void		km_table_add(TableState *st, Datum *values, bool *nulls);

/*
 * The encoder of the rows kept: statistics, categories (a column without
 * values left out when imputing, with a NOTICE); its payload.
 */
void		km_table_learn(TableState *st, km_encoder *e, uint8 **payload,
						   uint64 *bytes);

/* Encode kept row r into x (e->d), or raise naming its column. */
void		km_table_encode(const TableState *st, const km_encoder *e, int64 r,
							km_encoder_value *vals, double *x);

/* The options without the table keys ("impute", "features", ...). */
Jsonb	   *km_table_training_options(Jsonb *opts);

/* A trained model with the encoder's section added. */
bytea	   *km_table_add_encoder(bytea *model, const uint8 *payload, uint64 bytes);

#endif							/* KM_TABLE_ROWS_H */
