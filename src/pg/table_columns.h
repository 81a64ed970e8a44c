/*
 * table_columns.h - a table's columns as kernel_ml reads them (table_columns.c).
 */
#ifndef KM_TABLE_COLUMNS_H
#define KM_TABLE_COLUMNS_H

#include "postgres.h"

#include "fmgr.h"

#include "encoder.h"

/*
 * The kind of a column of type typid (domains by their base type), or -1
 * for a type a model cannot take.  *by_output: a category read through the
 * type's output function (enum, char(n), name), not as text.
 */
int			km_table_kind(Oid typid, bool *by_output);

/*
 * One value as km_encoder_encode reads it (base: the column's base type);
 * out: the type's output function when by_output.  Strings point into the
 * datum or a palloc'd copy.
 */
void		km_table_value(Datum d, bool isnull, km_column_kind kind, Oid base,
						   bool by_output, FmgrInfo *out, km_encoder_value *v);

/* Raise the error of a row that cannot be encoded; where: "The row", ... */
void		km_table_encode_error(const km_encoder *e, km_encode_fault f, uint32 bad,
								  const km_encoder_value *vals, const char *where);

/* kernel_model_info's "columns" of a model bytea, if it has an encoder. */
struct KmJson;
void		km_table_describe(bytea *model, struct KmJson *j);

#endif							/* KM_TABLE_COLUMNS_H */
