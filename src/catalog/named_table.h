/*
 * named_table.h - named models trained from a table (named_table.c): the
 * hook named training calls once it has fitted a model.
 */
#ifndef KM_NAMED_TABLE_H
#define KM_NAMED_TABLE_H

#include "postgres.h"

/*
 * The model fitted on the rows of query, with the columns of the table it
 * came from put in (in ctx) when query reads a table (kernel_table_rows);
 * any other model as it is.
 */
#include "utils/jsonb.h"

bytea	   *km_named_table_model(const char *query, bytea *model, MemoryContext ctx);

char	   *km_named_table_query(Oid nsp, Oid relid, const char *target, Jsonb *opts,
								 Jsonb **train_opts);

#endif							/* KM_NAMED_TABLE_H */
