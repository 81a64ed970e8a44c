/*
 * model_section.h - one section of format 2 as a descriptor (core, no
 * PostgreSQL headers; private to the model codec, src/core/model*.c).
 *
 * model_format.c keeps the frame (header, section walk, checksums) and the
 * common sections every model has (SCALER, EXPANSION, METHOD, TRAINING,
 * SELECTION).  Every other section is a task's (regression none,
 * classification CLASSES, PROBABILITY, METRICS) or a representation's
 * (nystrom APPROXIMATION, rff APPROXIMATION and RFF): lists of descriptors
 * defined beside their codec in model_sections_task.c and
 * model_sections_repr.c, a task's found by its row's id, a
 * representation's chosen from its row's steps (km_task_sections,
 * km_repr_sections below).  model_format.c walks "common + every task's +
 * every representation's" in tag order and never names one of them.
 *
 * Decoding runs in phases, each over the known sections in tag order:
 *   shape        what the sizes need, from the framing alone (no error);
 *   check_shape  what a section says of the shape (the representation it
 *                names), before the sizes that depend on it;
 *   (the sizes of the shape fit together: model_format.c)
 *   check_presence  found or not, as the shape decides;
 *   length       sections marked sized: length == bytes(shape);
 *   read / absent, by (stage, tag): a found section is read and
 *                validated, a missing one may be judged by absent;
 *   ownership    a found section must be common or declared by the
 *                model's task or representation.
 * The stages keep the order in which 0.2.0 checked a model, so that a
 * crafted model fails with the message it always did.
 */
#ifndef KM_MODEL_SECTION_H
#define KM_MODEL_SECTION_H

#include "model_internal.h"

/*
 * Tags are below this (found[] is indexed by tag); a section with a
 * larger tag is unknown to this build.
 */
#define KM_SECTION_TAGS 32

/* Read stages are 0 .. KM_SECTION_STAGES - 1. */
#define KM_SECTION_STAGES 5

/* One section as found by the walk; payload NULL: not in the model. */
typedef struct km_section
{
	uint16_t	tag;
	uint16_t	flags;
	uint64_t	length;
	const uint8_t *payload;
} km_section;

/* What a reader gets: every section found, the shape, the storage. */
typedef struct km_section_in
{
	const km_section *found;	/* KM_SECTION_TAGS entries, by tag */
	const struct km_model_shape *s;
	/* the sections of the model's representation (km_repr_sections), or NULL */
	const struct km_section_ops *const *repr_sections;
	double	   *storage;		/* NULL: validate only */
	const layout *l;			/* the common sections' arrays in storage */
	double	   *mine;			/* this section's part (storage hook), or NULL */
} km_section_in;

typedef struct km_section_ops
{
	uint16_t	tag;			/* KM_SECTION_* (model.h) */
	uint16_t	flags;			/* as written, and as a reader requires */
	const char *name;			/* in messages: "classes" */
	int			stage;			/* read order: (stage, tag); < KM_SECTION_STAGES */
	bool		sized;			/* length checked against bytes(shape) early */
	bool		may_be_empty;	/* 0 bytes is a size, not an overflow */

	/* whether a model of shape s has it */
	bool		(*present) (const struct km_model_shape *s);
	/* its payload bytes; 0 on overflow */
	uint64_t	(*bytes) (const struct km_model_shape *s);
	uint8_t    *(*write) (uint8_t *p, const struct km_model *m,
						  const struct km_model_shape *s);

	/* the rest optional (NULL) */
	void		(*shape) (const km_section *self, struct km_model_shape *s);
	/* what it says of the shape holds, before the sizes that depend on it */
	km_status	(*check_shape) (const km_section *found,
								const struct km_model_shape *s, km_error *err);
	/* found (or not) as the shape says, once the sizes fit */
	km_status	(*check_presence) (const km_section *found,
								   const struct km_model_shape *s, km_error *err);
	km_status	(*read) (const km_section_in *in, struct km_model *r,
						 km_error *err);
	km_status	(*absent) (const km_section_in *in, struct km_model *r,
						   km_error *err);
	/*
	 * Doubles of a decoded model's storage its arrays take (labels and u64
	 * counts in double-sized slots), and how r points into that part,
	 * mine, once its reader has filled it; NULL: none.
	 */
	uint64_t	(*storage) (const struct km_model_shape *s);
	void		(*attach) (struct km_model *r, double *mine,
						   const struct km_model_shape *s);
	/* its scalar fields for kernel_model_info, when present */
	void		(*describe) (const struct km_model *m, const km_describer *out);
} km_section_ops;

/* Whether list (NULL-terminated, or NULL: empty) holds k. */
static inline bool
km_section_list_has(const km_section_ops *const *list, const km_section_ops *k)
{
	for (; list && *list; list++)
		if (*list == k)
			return true;
	return false;
}

/*
 * The sections a model of task t / representation r has besides the
 * common ones, NULL-terminated, or NULL for none.  Each list lives with its
 * codec (model_sections_task.c, model_sections_repr.c): a task's in a table
 * that finds the row it extends by the row's id, a representation's
 * chosen from the steps its row lists; so that the task and representation
 * tables, a layer down, point at nothing above them.
 */
struct km_task_ops;
struct km_repr_ops;
const km_section_ops *const *km_task_sections(const struct km_task_ops *t);
const km_section_ops *const *km_repr_sections(const struct km_repr_ops *r);

/* The transform task's PCA section (model_sections_pca.c). */
extern const km_section_ops km_pca_section;

/* Approximate ridge's GP factor (model_sections_gp.c): nystrom's and rff's. */
extern const km_section_ops km_gp_approx_section;

#endif							/* KM_MODEL_SECTION_H */
