/*
 * predict_literal.h - the text forms of the scoring verbs (predict_literal.c):
 * fn called with argument 1, an untyped literal, read as float8[].  The
 * by-name forms are in src/catalog/catalog_score.c.
 */
#ifndef KM_PREDICT_LITERAL_H
#define KM_PREDICT_LITERAL_H

#include "postgres.h"

#include "fmgr.h"

Datum		km_with_array(FunctionCallInfo fcinfo, PGFunction fn);

#endif							/* KM_PREDICT_LITERAL_H */
