/*
 * compat.h - differences between the PostgreSQL versions kernel_ml builds
 * against, in one place.
 */
#ifndef KM_COMPAT_H
#define KM_COMPAT_H

#include "postgres.h"

/* PostgreSQL 16 moved the varlena macros out of postgres.h. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#endif							/* KM_COMPAT_H */
