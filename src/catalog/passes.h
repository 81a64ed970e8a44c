/*
 * passes.h - named approximate regression models by SQL passes
 * over the stored query (passes.c).
 */
#ifndef KM_PASSES_H
#define KM_PASSES_H

#include "postgres.h"

#include "named_common.h"

/* passes.c */
bool		use_passes(NamedRun *run, const Catalog *cat, const char *query, Oid run_as,
					   const char *search_path);
void		passes_fit_and_score(NamedRun *run, MemoryContext work);

/* The model of every usable row of the opened query (kernel_train_query), in work. */
bytea	   *passes_train_every_row(NamedRun *run, MemoryContext work);

#endif							/* KM_PASSES_H */
