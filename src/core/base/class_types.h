/*
 * class_types.h - what a classifier's classes are, apart from the code that
 * sorts, weighs and decides them (classify.h): how labels are typed, the
 * multi-class schemes, the class_weight table (core, no PostgreSQL
 * headers).  A leaf of the core: it includes nothing, so that the methods,
 * the options and the model record take these types without importing the
 * classification task's code above them.
 */
#ifndef KM_CLASS_TYPES_H
#define KM_CLASS_TYPES_H

/* How a classifier's labels were typed (CLASSES section, one byte). */
typedef enum km_label_type
{
	KM_LABEL_TEXT = 1,
	KM_LABEL_FLOAT8 = 2
} km_label_type;

#define KM_LABEL_FIRST KM_LABEL_TEXT
#define KM_LABEL_LAST KM_LABEL_FLOAT8

/*
 * How a classifier's q decision values map to its k classes (CLASSES
 * section, one byte):
 *   BINARY       q = 1, k = 2: f > 0 means classes[1];
 *   OVO          q = k(k-1)/2, pairs (0,1), (0,2) .. (0,k-1), (1,2) .. as
 *                libsvm orders them; output > 0 votes for the pair's first;
 *   OVR          q = k, one output per class;
 *   MULTINOMIAL  q = k, softmax over the outputs.
 */
typedef enum km_multiclass
{
	KM_MULTICLASS_BINARY = 1,
	KM_MULTICLASS_OVO = 2,
	KM_MULTICLASS_OVR = 3,
	KM_MULTICLASS_MULTINOMIAL = 4
} km_multiclass;

#define KM_MULTICLASS_FIRST KM_MULTICLASS_BINARY
#define KM_MULTICLASS_LAST KM_MULTICLASS_MULTINOMIAL

/* Largest number of classes a model may have (q = k(k-1)/2 stays small). */
#define KM_MAX_CLASSES 1024

/*
 * class_weight: none (every weight 1), "balanced" (n / (k n_c), as
 * scikit-learn), or a table of label -> weight (> 0; classes not named get
 * 1; a label that is not a class is KM_ERR_INVALID, as scikit-learn).
 * Pointer-free and bounded so that km_options can hold it.
 */
#define KM_MAX_CLASS_WEIGHTS 32
#define KM_CLASS_LABEL_MAX 64	/* bytes of a label in the table, NUL included */

typedef enum km_class_weight_mode
{
	KM_CLASS_WEIGHT_NONE = 0,
	KM_CLASS_WEIGHT_BALANCED,
	KM_CLASS_WEIGHT_TABLE
} km_class_weight_mode;

typedef struct km_class_weights
{
	km_class_weight_mode mode;
	int			n;
	char		label[KM_MAX_CLASS_WEIGHTS][KM_CLASS_LABEL_MAX];
	double		weight[KM_MAX_CLASS_WEIGHTS];
} km_class_weights;

/*
 * How a classifier turns decision values into probabilities (classify.h
 * lists the rules): none (an svm without "probability"), the logistic
 * link (sigmoid / softmax), or Platt's sigmoids (with coupling for OVO).
 */
typedef enum km_prob_link
{
	KM_PROB_NONE = 0,
	KM_PROB_LOGISTIC,
	KM_PROB_PLATT
} km_prob_link;

#endif							/* KM_CLASS_TYPES_H */
