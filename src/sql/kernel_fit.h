/*
 * kernel_fit.h - the kernel_fit aggregate (kernel_fit.c): methods without a target
 * (kernel PCA), fitted by the learner over the memory host.
 */
#ifndef KM_KERNEL_FIT_H
#define KM_KERNEL_FIT_H

#include "postgres.h"

#include "rowset.h"

/*
 * The model of rs's rows (their target ignored), or an error when its
 * options name a method with a target (what: the caller, for messages).
 */
bytea	   *km_fit_rowset(RowSet *rs, const char *what);

/*
 * Raise unless the options name a method whose task has no target
 * (kernel_fit, a one-column query); what: the caller.
 */
void		km_fit_check_method(const km_options *opts, const char *what);

/* The names of the methods without a target, "pca" or "oneclass", into buf. */
void		km_fit_method_names(char *buf, size_t size);

#endif							/* KM_KERNEL_FIT_H */
