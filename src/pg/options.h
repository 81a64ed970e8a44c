/*
 * options.h - the jsonb options object shared by every kernel_ml function.
 *
 * The keys, their types, ranges and the checks between them are in the
 * core (options_core.h); this is the glue that reads them from jsonb and
 * reports errors with ereport.
 */
#ifndef KM_OPTIONS_H
#define KM_OPTIONS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "options_core.h"

/* Defaults, then the keys of opts (NULL for none), validated strictly. */
void		km_options_parse(Jsonb *opts, km_options *out);

/*
 * The same, for a training call whose label column is text (text_label):
 * the default method is then svm, and a regression method an error.
 */
void		km_options_parse_labels(Jsonb *opts, km_options *out, bool text_label);

/*
 * What a label (target) column is, for the task its type implies: one
 * inference for kernel_train and kernel_model_train (issue 30).
 */
typedef enum KmLabelKind
{
	KM_LABELS_NUMERIC,			/* a number: regression unless "method" classifies */
	KM_LABELS_CLASSES			/* text or boolean: class labels, svm by default */
} KmLabelKind;

/*
 * The kind of a label column of type typid: the string and boolean
 * categories are class labels (a boolean as the text 'false' and 'true',
 * as kernel_train(features, label boolean) takes it), any other type a
 * numeric target.
 */
KmLabelKind km_label_kind_of_type(Oid typid);

/* km_options_parse_labels for a label of that kind (text labels: classes). */
void		km_options_parse_for_label(Jsonb *opts, km_options *out, KmLabelKind kind);

/* Error unless gamma and lambda are single values; fname names the caller. */
void		km_options_require_single(const km_options *opts, const char *fname);

#endif							/* KM_OPTIONS_H */
