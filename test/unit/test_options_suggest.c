/*
 * test_options_suggest.c - the hints of mistaken options (issue 30): the
 * edit distance against hand-counted values, the closest name and its
 * limits, and scikit-learn's names translated.
 */
#include <string.h>

#include "options_suggest.h"
#include "unit.h"

void		test_options_suggest_distance(void);
void		test_options_suggest_hints(void);

void
test_options_suggest_distance(void)
{
	static const char *const keys[] = {"kernel", "gamma", "lambda", "cv", "components"};

	CHECK(km_edit_distance("lambda", "lambda", 3) == 0, "equal");
	CHECK(km_edit_distance("lamda", "lambda", 3) == 1, "a deletion");
	CHECK(km_edit_distance("lmabda", "lambda", 3) == 1, "a transposition");
	CHECK(km_edit_distance("RBF", "rbf", 3) == 0, "case ignored");
	CHECK(km_edit_distance("kitten", "sitting", 5) == 3, "kitten/sitting");
	CHECK(km_edit_distance("kitten", "sitting", 2) == 3, "above the limit: limit + 1");
	CHECK(km_closest_name("lamda", keys, 5) == keys[2], "lamda -> lambda");
	CHECK(km_closest_name("Gamma", keys, 5) == keys[1], "Gamma -> gamma");
	CHECK(km_closest_name("componets", keys, 5) == keys[4], "componets -> components");
	CHECK(km_closest_name("c", keys, 5) == NULL, "one letter is close to nothing but by case");
	CHECK(km_closest_name("CV", keys, 5) == keys[3], "CV -> cv");
	CHECK(km_closest_name("xyz", keys, 5) == NULL, "nothing close");
}

void
test_options_suggest_hints(void)
{
	static const char *const keys[] = {"lambda", "components", "seed"};
	static const char *const kernels[] = {"linear", "poly", "rbf"};
	km_value	ten = {.type = KM_VALUE_NUMBER, .number = 10.0, .text = "10"};
	char		hint[512];

	CHECK(km_suggest_key("C", &ten, keys, 3, hint, sizeof(hint)) &&
		  strstr(hint, "\"lambda\": 0.0001 for \"C\": 10 and 1000 rows") != NULL,
		  "C = 10 on 1000 rows is lambda 1e-4: %s", hint);
	CHECK(km_suggest_key("alpha", &ten, keys, 3, hint, sizeof(hint)) &&
		  strstr(hint, "write \"lambda\": 10.") != NULL, "alpha is lambda: %s", hint);
	CHECK(km_suggest_key("n_components", &ten, keys, 3, hint, sizeof(hint)) &&
		  strstr(hint, "\"components\": 10 with \"approximation\"") != NULL,
		  "n_components: %s", hint);
	CHECK(km_suggest_key("lamda", &ten, keys, 3, hint, sizeof(hint)) &&
		  strcmp(hint, "Perhaps you meant \"lambda\": 10.") == 0, "lamda: %s", hint);
	CHECK(!km_suggest_key("xyz", &ten, keys, 3, hint, sizeof(hint)) && hint[0] == '\0',
		  "no hint for xyz");
	CHECK(km_suggest_value("kernel", "RBF", kernels, 3, hint, sizeof(hint)) &&
		  strcmp(hint, "Perhaps you meant \"kernel\": \"rbf\".") == 0, "RBF: %s", hint);
	CHECK(km_suggest_value("kernel", "polynomial", kernels, 3, hint, sizeof(hint)) &&
		  strstr(hint, "Write \"kernel\": \"poly\"") == hint, "polynomial: %s", hint);
}
