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
#include "utils/jsonb.h"

#include "encoder.h"

/*
 * The kind of a column of type typid (domains by their base type), or -1
 * for a type a model cannot take.  *by_output: a category read through the
 * type's output function (enum, char(n), name), not as text.
 */
int			km_table_kind(Oid typid, bool *by_output);

/*
 * One value as km_encoder_encode reads it (base: the column's base type);
 * out: the type's output function when by_output.  Strings point into the datum or a palloc'd copy.
 */
void		km_table_value(Datum d, bool isnull, km_column_kind kind, Oid base,
						   bool by_output, FmgrInfo *out, km_encoder_value *v);

/* kernel_model_info's "columns" of a model bytea, if it has an encoder. */
struct KmJson;
void		km_table_describe(bytea *model, struct KmJson *j);

#endif							/* KM_TABLE_ROWS_H */
