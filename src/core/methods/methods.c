/*
 * methods.c - the registry of training methods (core, no PostgreSQL
 * headers): km_method_get and the lookups by name, generated from the one
 * list in methods.def.  Its switch has no default, so a km_method value
 * that is not registered is a compiler warning (an error in CI).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "method.h"
#include "model_types.h"
#include "task.h"

/* methods.def's ids run 1, 2, ... in its order, so FIRST..LAST loops see every method. */
enum
{
	KM_METHOD_ORDER_0_ = 0,
#define KM_METHOD(id, NAME, ops) KM_METHOD_ORDER_##NAME##_,
#include "methods.def"
#undef KM_METHOD
};
#define KM_METHOD(id, NAME, ops) \
	typedef char km_method_id_in_order_##NAME[(id) == KM_METHOD_ORDER_##NAME##_ ? 1 : -1];
#include "methods.def"
#undef KM_METHOD

const km_method_ops *
km_method_get(km_method method)
{
	switch (method)
	{
#define KM_METHOD(id, NAME, ops) \
		case KM_METHOD_##NAME: \
			return &ops;
#include "methods.def"
#undef KM_METHOD
	}
	return NULL;
}

const km_method_ops *
km_method_by_name(const char *name)
{
	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
	{
		const km_method_ops *ops = km_method_get((km_method) m);

		if (ops && strcmp(ops->name, name) == 0)
			return ops;
	}
	return NULL;
}

const char *
km_method_name(km_method method)
{
	const km_method_ops *ops = km_method_get(method);

	return ops ? ops->name : "unknown";
}

bool
km_method_from_name(const char *name, km_method *method)
{
	const km_method_ops *ops = km_method_by_name(name);

	if (ops == NULL)
		return false;
	*method = ops->id;
	return true;
}

km_task
km_method_task(km_method method)
{
	const km_method_ops *ops = km_method_get(method);

	return ops ? ops->task : km_task_default()->id;
}

const km_method_ops *
km_method_default(km_task task)
{
	const km_method_ops *ops;

	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
		if ((ops = km_method_get((km_method) m)) && ops->task == task && ops->task_default)
			return ops;
	return NULL;
}

const km_method_ops *
km_method_approx_sums(void)
{
	const km_method_ops *ops;

	for (int m = KM_METHOD_FIRST; m <= KM_METHOD_LAST; m++)
		if ((ops = km_method_get((km_method) m)) && ops->approx_sums)
			return ops;
	return NULL;
}

void
km_method_fill_hint(km_method method, km_error *err)
{
	const km_method_ops *ops = km_method_get(method);
	const char *hint;

	if (ops == NULL || ops->hint == NULL || err->hint[0] != '\0')
		return;
	hint = ops->hint(err->status);
	if (hint)
		snprintf(err->hint, sizeof(err->hint), "%s", hint);
}

const char *
km_method_hint(km_status status, const char *diverged, const char *inaccurate)
{
	switch (status)
	{
		case KM_ERR_NOT_PD:
			return "Use a larger lambda, or a kernel that is positive definite on this data.";
		case KM_ERR_DIVERGED:
			return diverged;
		case KM_ERR_INACCURATE:
			return inaccurate;
		case KM_OK:
		case KM_ERR_INVALID:
		case KM_ERR_FORMAT:
		case KM_ERR_VERSION:
		case KM_ERR_CHECKSUM:
		case KM_ERR_OVERFLOW:
			break;
	}
	return NULL;
}

/* The one name table of km_solver. */
static const char *const solver_names[] = {
	[KM_SOLVER_DEFAULT] = "default",
	[KM_SOLVER_SMO] = "smo",
	[KM_SOLVER_NEWTON] = "newton",
	[KM_SOLVER_SGD] = "sgd",
	[KM_SOLVER_PRIMAL_NEWTON] = "primal-newton",
	[KM_SOLVER_CG] = "cg",
};

const char *
km_solver_name(km_solver solver)
{
	switch (solver)
	{
		case KM_SOLVER_DEFAULT:
		case KM_SOLVER_SMO:
		case KM_SOLVER_NEWTON:
		case KM_SOLVER_SGD:
		case KM_SOLVER_PRIMAL_NEWTON:
		case KM_SOLVER_CG:
			return solver_names[solver];
	}
	return "unknown";
}

bool
km_solver_from_name(const char *name, km_solver *solver)
{
	for (int s = KM_SOLVER_FIRST; s <= KM_SOLVER_LAST; s++)
		if (strcmp(name, solver_names[s]) == 0)
		{
			*solver = (km_solver) s;
			return true;
		}
	return false;
}

km_solver
km_method_solver(const km_method_ops *ops, km_solver solver)
{
	return solver == KM_SOLVER_DEFAULT ? ops->default_solver : solver;
}

/*
 * What the classification methods share: they fit class labels through
 * fit_classes, so their regression entries refuse a numeric target, and
 * they keep the same fields in their METHOD section.
 */
size_t
km_classifier_no_workspace(size_t n)
{
	return 0;
}

km_status
km_classifier_no_fit(const km_fit_params *p, const double *X, size_t n, int d,
					 const double *y, double *alpha, double *K,
					 const double *norms, double *work, km_fit_result *res,
					 km_error *err, km_interrupt_fn interrupt)
{
	const char *name = km_method_name(p->method);

	return km_fail(err, KM_ERR_INVALID, "method \"%s\" classifies",
				   "Method \"%s\" fits class labels, not a numeric target.", name);
}

void
km_classifier_no_store(const km_fit_params *p, const km_fit_result *res,
					   struct km_model *m)
{
}

void
km_classifier_store(const km_fit_params *p, const km_class_fit_result *res,
					struct km_model *m)
{
	m->lambda = p->lambda;
	m->jitter = 0.0;
	m->tol = p->tol;
	m->max_iter = p->max_iter;
	m->iterations = res->iterations;
	m->converged = res->converged;
	m->learning_rate = 0.0;
	m->final_change = 0.0;
}

const km_field km_classifier_fields[KM_CLASSIFIER_N_FIELDS] = {
	{"solver", KM_FIELD_ENUM, offsetof(km_model, solver), KM_RULE_SOLVER, 0},
	{"lambda", KM_FIELD_F64, offsetof(km_model, lambda), KM_RULE_POSITIVE, 0},
	{"tol", KM_FIELD_F64, offsetof(km_model, tol), KM_RULE_NONNEG, 0},
	{"max_iter", KM_FIELD_I32, offsetof(km_model, max_iter), KM_RULE_NONNEG, 0},
	{"iterations", KM_FIELD_I32, offsetof(km_model, iterations), KM_RULE_NONNEG, 0},
	{"converged", KM_FIELD_BOOL, offsetof(km_model, converged), KM_RULE_ANY, 0},
};
