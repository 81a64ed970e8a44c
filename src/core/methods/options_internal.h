/*
 * options_internal.h - what options_core.c (parsing, one key at a time)
 * shares with options_check.c (the checks across keys that
 * km_options_finish runs): message helpers, the methods' own option rows,
 * and the checks (core, no PostgreSQL headers).  Not for other modules.
 */
#ifndef KM_OPTIONS_INTERNAL_H
#define KM_OPTIONS_INTERNAL_H

#include <stddef.h>

#include "options_core.h"

/* printf-append to buf (len bytes), cut short when full. */
void		km_opt_append(char *buf, size_t len, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Fill err (hint may be NULL) and return false. */
bool		km_opt_fail(km_option_error *err, const char *hint, const char *message,
						const char *detailfmt,...)
			__attribute__((format(printf, 4, 5)));

/* "a, b and c" (or "or") of the words a caller lists, into buf. */
void		km_opt_join_words(char *buf, size_t len, const char *const *words,
							  int n, const char *last);

/*
 * The first row of a method's own options with that key, in the order of
 * methods.def (its method in *owner unless NULL), or NULL.
 */
const km_option_def *km_opt_find_own(const char *key, const km_method_ops **owner);

/* The row of ops's own options with that key, or NULL. */
const km_method_option *km_opt_method_own(const km_method_ops *ops, const char *key);

/*
 * The checks of km_options_finish, in its order (options_check.c); each
 * false with err filled.  The task check may change *ops (the default
 * method of a text label).
 */
bool		km_options_check_task(km_options_parser *p, const km_method_ops **ops,
								  km_option_error *err);
bool		km_options_check_kernel(const km_options_parser *p, km_option_error *err);
bool		km_options_check_method(const km_options_parser *p, const km_method_ops *ops,
									km_option_error *err);
bool		km_options_check_route(const km_options *out, const km_method_ops *ops,
								   km_option_error *err);
bool		km_options_check_approx(const km_options_parser *p, const km_method_ops *ops,
									km_option_error *err);
bool		km_options_check_bias(const km_options_parser *p, const km_method_ops *ops,
								  km_option_error *err);

#endif							/* KM_OPTIONS_INTERNAL_H */
