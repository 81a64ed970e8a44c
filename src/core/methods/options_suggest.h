/*
 * options_suggest.h - what to write instead of a mistaken option: the
 * closest valid spelling of a key or a value (edit distance, case
 * ignored), and the translation of scikit-learn's names (C, alpha,
 * n_components, ...).  Hints of options_core.c's errors (core, no
 * PostgreSQL headers).
 */
#ifndef KM_OPTIONS_SUGGEST_H
#define KM_OPTIONS_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "options_core.h"

/*
 * Damerau-Levenshtein distance (optimal string alignment: an adjacent
 * transposition costs 1) between a and b, ASCII case ignored; stops
 * counting above limit (returns limit + 1).
 */
int			km_edit_distance(const char *a, const char *b, int limit);

/*
 * The name among names[0..n) closest to got, or NULL when none is close:
 * within 1 edit for up to 4 characters, 2 up to 8, else 3 (ties: the
 * first); a name equal but for case is always close, and the only close
 * one when either has at most 2 characters.
 */
const char *km_closest_name(const char *got, const char *const *names, int n);

/*
 * The hint for an unknown key into hint (len bytes): the translation of a
 * scikit-learn parameter (with its value v), else the closest key of
 * keys[0..n).  False (hint empty) when there is nothing to suggest.
 */
bool		km_suggest_key(const char *key, const km_value *v,
						   const char *const *keys, int n,
						   char *hint, size_t len);

/*
 * The hint for an unknown value got of option key (a kernel, method,
 * approximation, ... name), one of names[0..n): a scikit-learn spelling's
 * translation, else the closest name.  False (hint empty) when none.
 */
bool		km_suggest_value(const char *key, const char *got,
							 const char *const *names, int n,
							 char *hint, size_t len);

#endif							/* KM_OPTIONS_SUGGEST_H */
