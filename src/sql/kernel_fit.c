/*
 * kernel_fit.c - the kernel_fit(features, options) aggregate: a method without a
 * target (a task row with target false, task.h: kernel PCA's transform),
 * fitted on the rows by the learner over the memory host (exact: one
 * gather pass and the method's fit_rows; nystrom / rff: the basis pass and
 * one pass of the features' sums, the method's fit_sums).  Its state is
 * kernel_train's RowSet (rowset.c, a target of 0 per row), so that it
 * combines, serializes and deserializes as kernel_train's does.  The rows
 * are put in row-hash order first, as kernel_train's: the model does not
 * depend on the order they came in.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "kernel_fit.h"
#include "host_memory.h"
#include "model.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "repr.h"
#include "task.h"
#include "train_paths.h"

PG_FUNCTION_INFO_V1(kernel_fit_sfunc);
PG_FUNCTION_INFO_V1(kernel_fit_final);

/* kernel_fit_sfunc(state, features, options) */
Datum
kernel_fit_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get(fcinfo, 2, true, "kernel_fit_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1))
		rs->skipped++;
	else
		rowset_add(rs, PG_GETARG_ARRAYTYPE_P(1), 0.0, "kernel_fit");
	PG_RETURN_POINTER(rs);
}

void
km_fit_method_names(char *buf, size_t size)
{
	size_t		used = 0;

	buf[0] = '\0';
	for (int id = KM_METHOD_FIRST; id <= KM_METHOD_LAST; id++)
	{
		const km_method_ops *ops = km_method_get((km_method) id);

		km_error	err;

		/* the methods whose task's training is kernel_fit's, on the features alone */
		if (ops == NULL ||
			km_task_check_training(km_task_lookup(ops->task), false, ops->name,
								   "kernel_fit", "", &err) != KM_OK)
			continue;
		used += snprintf(buf + used, used < size ? size - used : 0, "%s\"%s\"",
						 used > 0 ? " or " : "", ops->name);
		if (used >= size)
			break;
	}
}

void
km_fit_check_method(const km_options *opts, const char *what)
{
	char		names[128];
	km_error	err;

	km_fit_method_names(names, sizeof(names));
	if (opts->method_default)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s needs a \"method\" without a target", what),
				 errdetail("The options name no \"method\"; the methods fitted on rows without a target are %s.",
						   names),
				 errhint("Add \"method\": \"pca\" to the options, e.g. '{\"method\": \"pca\", \"dimensions\": 2}'.")));
	if (km_task_check_training(km_task_lookup(km_method_task(opts->fit.method)), false,
							   km_method_name(opts->fit.method), what, names, &err) != KM_OK)
		km_raise(&err);
}

/* Exact: the Gram matrix and the rows' copies; the model's size. */
static void
check_exact(const km_train_plan *plan, int64 n, int d, const char *what)
{
	double		bytes = 8.0 * (double) plan->nwork + 24.0 * (double) n * d +
		16.0 * (double) n * (plan->q + 2);

	if (plan->nwork == 0 || n > (int64) UINT32_MAX ||
		(double) n * n > (double) (MaxAllocHugeSize / sizeof(double)))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for an exact %s", what),
				 errdetail("The Gram matrix of " INT64_FORMAT " rows does not fit in memory.", n),
				 errhint("Add \"approximation\": \"nystrom\" (one pass of m x m sums, any table size).")));
	km_check_exact_memory(bytes, what, false);
}

bytea *
km_fit_rowset(RowSet *rs, const char *what)
{
	km_train_plan plan;
	bytea	   *out;

	km_fit_check_method(&rs->opts, what);
	km_progress_begin(what);
	km_memory_order_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, what);
	/* the plan's road follows its representation's basis list (learn/pipeline.c) */
	km_train_plan_make(&rs->opts, (size_t) rs->n, rs->d, 0, &plan);
	if (plan.approximate)
		km_approx_plan(&rs->opts, rs->n, rs->d, what, &plan);
	else
		check_exact(&plan, rs->n, rs->d, what);
	out = km_memory_fit(rs, &plan);
	km_progress_end();
	return out;
}

/* kernel_train's NOTICE for rows skipped, without a target */
static void
notice_skipped(int64 skipped, int64 used)
{
	if (skipped > 0)
		ereport(NOTICE,
				(errmsg_plural("kernel_fit skipped " INT64_FORMAT " row with a null feature array",
							   "kernel_fit skipped " INT64_FORMAT " rows with a null feature array",
							   skipped, skipped),
				 errdetail("The model was fitted on the other " INT64_FORMAT " of " INT64_FORMAT " rows.",
						   used, used + skipped),
				 errhint("Filter them out (WHERE features IS NOT NULL), or fill them in, to silence this.")));
}

Datum
kernel_fit_final(PG_FUNCTION_ARGS)
{
	RowSet	   *rs;
	bytea	   *model;

	agg_context(fcinfo, "kernel_fit_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	rs = (RowSet *) PG_GETARG_POINTER(0);
	rowset_check_kept(rs, "kernel_fit");
	if (rs->n == 0)
	{
		notice_skipped(rs->skipped, 0);
		PG_RETURN_NULL();
	}
	model = km_fit_rowset(rs, "kernel_fit");
	/* after the fit, so that no NOTICE comes before its error */
	notice_skipped(rs->skipped, rs->n);
	PG_RETURN_BYTEA_P(model);
}
