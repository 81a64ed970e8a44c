/*
 * grid.c - the names of the cross-validation routes (core, no PostgreSQL
 * headers; grid.h).
 */
#include "grid.h"

const char *
km_cv_name(km_cv cv)
{
	switch (cv)
	{
		case KM_CV_NONE:
			return "none";
		case KM_CV_LOO:
			return "loo";
		case KM_CV_GCV:
			return "gcv";
		case KM_CV_KFOLD:
			return "kfold";
	}
	return "unknown";
}
