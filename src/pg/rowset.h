/*
 * rowset.h - training rows collected by an aggregate: one contiguous,
 * growing row-major buffer in the aggregate context, shared by kernel_train,
 * kernel_matrix and kernel_check.
 */
#ifndef KM_ROWSET_H
#define KM_ROWSET_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"

#include "options.h"

typedef struct RowSet
{
	MemoryContext ctx;			/* where X and y live: the aggregate context */
	km_options	opts;			/* parsed from optjson */
	Jsonb	   *optjson;		/* the options of every row, NULL for none */
	int			d;				/* features per row, -1 before the first */
	int64		n;				/* rows kept */
	int64		capacity;		/* rows X and y have room for */
	int64		seen;			/* rows seen, kept or skipped */
	int64		skipped;		/* rows with a NULL feature array or target */
	/*
	 * Rows counted but not kept: an exact model of the rows kept would not
	 * fit the memory limit, so the rest are only counted, for the whole
	 * need at the end (rowset_check_kept).
	 */
	int64		unkept;
	bool		has_target;		/* kernel_train; kernel_matrix has none */
	double	   *X;				/* n x d, row-major */
	double	   *y;				/* n targets (float8 targets, also as labels) */
	/*
	 * Text labels (kernel_train(features, label text ...)): each distinct
	 * label once in a dictionary, each row its dictionary id.  label_type
	 * is 0 for a float8 target (y), whose distinct values a classification
	 * method takes as labels at the end.
	 */
	int			label_type;		/* 0 or KM_LABEL_TEXT */
	uint32	   *label_id;		/* n dictionary ids */
	char	   *dict;			/* labels back to back, NUL-terminated */
	Size		dict_bytes;
	Size		dict_capacity;
	uint32	   *dict_off;		/* n_dict offsets into dict */
	uint32		n_dict;
	uint32		dict_slots_cap;	/* capacity of dict_off */
	uint32	   *dict_hash;		/* open addressing: id + 1, 0 empty */
	uint32		hash_size;		/* a power of 2, > 2 n_dict */
	/* the buffers' bytes, counted against the backend's ceiling (pgutil.h) */
	struct KmMemGrant *grant;
} RowSet;

/*
 * Bytes training on n rows of d features needs at its peak: the n x n
 * matrix (factored in place), the standardized rows, the model and vectors.
 */
double		km_train_memory(double n, double d);

/*
 * Bytes exact training with opts needs at its peak on n rows of d features
 * (k classes seen so far, for a classifier): what the chosen path
 * allocates.  The svm's SMO without probabilities, selection or another
 * kernel computes K's columns into a cache (km_fit_classes_doubles):
 * O(n) besides the rows, not the n x n matrix of km_train_memory.
 */
double		km_exact_train_memory(const km_options *opts, double n, double d,
								  uint32 k);

RowSet	   *rowset_create(MemoryContext ctx, bool with_target);

/* Make room for `more` rows, enforcing kernel_ml.max_memory as rows arrive. */
void		rowset_reserve(RowSet *rs, int64 more, const char *what);

/*
 * Before training: when rows were only counted (unkept), refuse with the
 * memory the exact model of every row needs.
 */
void		rowset_check_kept(const RowSet *rs, const char *what);

/* Append one row (features and, for training, a target), checking it. */
void		rowset_add(RowSet *rs, ArrayType *features, double target,
					   const char *what);

/* The same for a row with a text label (rs->label_type KM_LABEL_TEXT). */
void		rowset_add_label(RowSet *rs, ArrayType *features, text *label,
							 const char *what);

/* The same as rowset_get, for an aggregate whose label column is text. */
RowSet	   *rowset_get_labels(FunctionCallInfo fcinfo, int optarg,
							  const char *fname);

/* The aggregate context, or an error naming fname outside an aggregate. */
MemoryContext agg_context(FunctionCallInfo fcinfo, const char *fname);

/*
 * The state of this aggregate call (argument 0), created on the first row
 * with the options in argument optarg, if the call has it.  Every row must
 * bring the same options (under parallel query there is no "first row"):
 * a row whose options differ is an error naming it.
 */
RowSet	   *rowset_get(FunctionCallInfo fcinfo, int optarg, bool with_target,
					   const char *fname);

/* Set rs's options (NULL: none) to a copy of opts, parsed. */
void		rowset_set_options(RowSet *rs, Jsonb *opts);

/*
 * Combine (parallel workers): b's rows appended to a's, a created in
 * aggctx when NULL; an error unless both had the same options (fname names
 * the aggregate) and feature count.
 */
RowSet	   *rowset_combine(MemoryContext aggctx, RowSet *a, const RowSet *b,
						   const char *fname);

/*
 * The state as bytea (the options as their jsonb), and back into aggctx;
 * between processes of one build only.
 */
bytea	   *rowset_serialize(const RowSet *rs);
RowSet	   *rowset_deserialize(MemoryContext aggctx, bytea *b,
								   const char *fname);

#endif							/* KM_ROWSET_H */
