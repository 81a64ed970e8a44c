# kernel_ml - PGXS build.  The version lives only in kernel_ml.control.
EXTENSION = kernel_ml
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = kernel_ml
# The numerical core (src/core) includes no PostgreSQL header; the glue does.
# Its files sit in one folder per layer, from the bottom: base (errors,
# metrics, linear algebra, grids), kernels, repr (exact / nystrom / rff),
# tasks, methods (one file per method beside the registry and the solvers
# they share), fit, model (the bytea format, scoring), learn (the learner,
# its passes and the roads it composes).  tools/include_graph.py holds each
# folder to the ones below it.  Every .c file of a layer folder is core.
KM_CORE_LAYERS = base kernels repr tasks methods fit model learn
CORE_OBJS = $(patsubst %.c,%.o,$(sort $(foreach l,$(KM_CORE_LAYERS),$(wildcard src/core/$(l)/*.c))))
GLUE_OBJS = $(addprefix src/pg/,kernel_ml.o pgutil.o json.o options.o split.o \
	rowset.o accum_state.o progress.o model_bytea.o train_rows.o host_memory.o memory_train.o table_columns.o call_cache.o model_cache.o) \
	$(addprefix src/sql/,train.o predict.o matrix.o export.o approx.o approx_basis.o classify.o) \
	$(addprefix src/sql/,predict_matrix.o evaluate.o train_table.o predict_row.o predict_literal.o predict_std.o gp_info.o kernel_fit.o transform.o pca_info.o) \
	$(addprefix src/catalog/,catalog.o catalog_owner.o catalog_table.o catalog_query.o named_common.o named_train.o named_tasks.o named_regression.o named_classification.o passes.o deploy.o catalog_sql.o \
	catalog_predict.o predict_citus.o passes_classify.o host_cursor.o catalog_score.o named_table.o module.o drift_named.o)
# the pass aggregate and its host (issue 28, DESIGN-0.4.md step 5)
GLUE_OBJS += src/pg/pass_desc.o src/pg/pass_state.o src/sql/pass_agg.o src/catalog/host_agg.o
OBJS = $(CORE_OBJS) $(GLUE_OBJS) $(KM_ASAN_OBJS)

DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(wildcard sql/$(EXTENSION)--*--*.sql)

TESTS = $(wildcard test/sql/*.sql)
REGRESS = $(patsubst test/sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=test --load-extension=$(EXTENSION)

KM_VERSION_DEFS = -DKM_VERSION_STRING=\"$(EXTVERSION)\"
# src/core: the numerical core, plain C99 without PostgreSQL; src/pg:
# PostgreSQL services (errors, arrays, memory, options, JSON, aggregate
# states); src/sql: the SQL-callable functions; src/catalog: named models.
KM_SRC_DIRS = src/core src/pg src/sql src/catalog
# a core file includes another layer's header by its name (kernels.h), or by
# its folder (learn/pass.h)
KM_CORE_INC = -Isrc/core $(addprefix -Isrc/core/,$(KM_CORE_LAYERS))
PG_CPPFLAGS = $(KM_CORE_INC) $(addprefix -I,$(filter-out src/core,$(KM_SRC_DIRS))) $(KM_VERSION_DEFS)
PG_CFLAGS = $(KM_EXTRA_CFLAGS)
# Libraries of the extension and of every stand-alone program.
KM_LIBS = -lisal -lopenblas -llapacke -lmvec -lm
SHLIB_LINK = $(KM_LIBS)

EXTRA_CLEAN = test/build test/bench/loo test/bench/approx test/bench/kmap32 test/bench/fit test/unit/run_unit test/unit/run_unit_asan \
	test/bench/sgd_epochs test/bench/logistic_bench test/bench/svm_core test/bench/svr_core test/bench/oneclass_core \
	test/fuzz/fuzz_model test/fuzz/fuzz_options test/fuzz/fuzz_pass test/fuzz/make_seed \
	test/fuzz/make_pass_seeds test/fuzz/*.o test/fuzz/*.bc

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies here: rebuild on any header change.
$(OBJS): $(wildcard src/*/*.h src/core/*/*.h) src/core/methods/methods.def

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control
	cp $< $@

# The element-wise kernel loops alone are built for glibc's vector math
# (libmvec): exp and tanh vectorise only under -ffast-math.
MAPS_CFLAGS = -O3 -ffast-math
src/core/kernels/kernel_maps.o: CFLAGS += $(MAPS_CFLAGS)

# The core includes no PostgreSQL header, so it keeps -Wsign-compare even
# when the glue cannot (PostgreSQL's array macros trip it).
$(CORE_OBJS): CFLAGS += -Wsign-compare

# The stand-alone programs: core unit tests (plain and under ASan and
# UBSan), the libFuzzer targets and the C benchmarks link the core and
# nothing from PostgreSQL (no libpgport, no server include path); the core
# links its CRC-32C from ISA-L itself (src/core/base/crc32c.c).  Their objects go
# to test/build/<flavour>/, one flavour per set of compiler flags, built by
# the one pattern rule below.
KM_STANDALONE_OBJS = $(CORE_OBJS)
KM_STANDALONE_LIBS = $(KM_LIBS)
KM_BUILD = test/build

KM_unit_CC = $(CC)
KM_unit_CFLAGS = -std=gnu99 -O2 -g -Wall -Wextra $(KM_EXTRA_CFLAGS) -Wsign-compare
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
KM_asan_CC = $(CC)
KM_asan_CFLAGS = $(KM_unit_CFLAGS) $(SAN_FLAGS)
KM_fuzz_CC = clang
KM_fuzz_CFLAGS = -O1 -g -Wno-ignored-attributes -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all
KM_bench_CC = $(CC)
KM_bench_CFLAGS = -O2 -g -Wall
KM_FLAVOURS = unit asan fuzz bench

# $(KM_BUILD)/<flavour>/<dir>/<name>.o from <dir>/<name>.c
define KM_OBJECT_RULE
$(KM_BUILD)/$(1)/%.o: %.c $(wildcard src/core/*/*.h) src/core/methods/methods.def $(wildcard test/*/*.h)
	@mkdir -p $$(@D)
	$$(KM_$(1)_CC) $$(KM_$(1)_CFLAGS) $$(KM_OBJ_CFLAGS) $(KM_CORE_INC) -c $$< -o $$@
endef
$(foreach f,$(KM_FLAVOURS),$(eval $(call KM_OBJECT_RULE,$(f))))
$(KM_BUILD)/%/src/core/kernels/kernel_maps.o: KM_OBJ_CFLAGS = $(MAPS_CFLAGS)
# Built by clang 14, kernel_maps.c's target_clones functions come out
# undefined at link time (km_accumulate_l1, km_exp_dot, ...): the fuzzers
# link it built by gcc, uninstrumented, as before.
$(KM_BUILD)/fuzz/src/core/kernels/kernel_maps.o: KM_fuzz_CC = $(CC)
$(KM_BUILD)/fuzz/src/core/kernels/kernel_maps.o: KM_fuzz_CFLAGS = -O2 -g
km_objs = $(addprefix $(KM_BUILD)/$(1)/,$(2))

# Core unit tests.  Ends with "N passed, N failed".
UNIT_OBJS = $(patsubst %.c,%.o,$(wildcard test/unit/*.c)) $(KM_STANDALONE_OBJS)
test/unit/run_unit: $(call km_objs,unit,$(UNIT_OBJS))
	$(KM_unit_CC) $(KM_unit_CFLAGS) -o $@ $^ $(KM_STANDALONE_LIBS)
test/unit/run_unit_asan: $(call km_objs,asan,$(UNIT_OBJS))
	$(KM_asan_CC) $(KM_asan_CFLAGS) -o $@ $^ $(KM_STANDALONE_LIBS)

.PHONY: unittest unittest-asan
unittest: test/unit/run_unit
	test/unit/run_unit
# The core unit tests under AddressSanitizer and UBSan.
unittest-asan: test/unit/run_unit_asan
	test/unit/run_unit_asan

# Fails if a core file includes a PostgreSQL header: each is compiled
# (syntax only) with the core's include path and the system include path alone, and searched
# for PostgreSQL's includes (test/check_core.sh); and if a method, task or
# representation constant appears under src/ outside its registry.  Ends
# with "N passed, N failed".
.PHONY: check-core
check-core:
	bash test/check_core.sh $(CORE_OBJS:.o=.c)

# Benchmarks against scikit-learn, a PL/Python peer and bare LAPACK, in a
# throwaway cluster; prints ratios measured side by side (test/bench/).
.PHONY: bench
bench:
	bash test/bench/run.sh

# The training benchmark against 0.1.0 (built from git history) and this
# tree, alternately in one run and one cluster (test/bench/compare_010.sh).
.PHONY: bench-compare
bench-compare:
	bash test/bench/compare_010.sh

# One kernel_train, 0.2.0 against this tree, alternately in one cluster, with
# the phases it logs at DEBUG1 (test/bench/compare_phases.sh).
.PHONY: bench-phases
bench-phases:
	bash test/bench/compare_phases.sh

# pg_regress and the scikit-learn cross-check (KM_ASAN_SQL_FUZZ=N: and N
# statements of the SQL fuzzer) against the extension built with ASan and
# UBSan, in a throwaway cluster; fails on any sanitizer report (details in
# test/fuzz/installcheck_asan.sh).  It installs the sanitized build over the
# installed one and re-installs the normal build when done: on a shared
# machine run "flock /tmp/kernel_ml_install.lock make installcheck-asan".
.PHONY: installcheck-asan
installcheck-asan:
	bash test/fuzz/installcheck_asan.sh

# Coverage-guided fuzzing (clang's libFuzzer, ASan, UBSan), each target for
# FUZZ_SECONDS or FUZZ_RUNS executions (the replay of the corpus included),
# whichever ends first, linking the whole core: the model decoder from a
# corpus seeded with valid models, and the options validator on JSON parsed
# by json-c.  The corpora (test/fuzz/corpus*) stay between runs, so each run
# replays what earlier ones found; test/fuzz/model_seeds is the decoder's
# corpus after 1.2 million runs, merged (-merge=1: 546 edges, where 300,000
# runs from the valid models alone reach 484).  test/run.sh bounds them by runs, so that
# a loaded machine takes longer rather than fuzzing less.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_OBJS = $(call km_objs,fuzz,$(KM_STANDALONE_OBJS))
FUZZ_LINK = $(KM_fuzz_CC) $(KM_fuzz_CFLAGS) -fsanitize=fuzzer
.PHONY: fuzz fuzz-model fuzz-options fuzz-pass
fuzz: fuzz-model fuzz-options fuzz-pass

test/fuzz/make_seed: $(call km_objs,unit,test/fuzz/make_seed.o $(KM_STANDALONE_OBJS))
	$(KM_unit_CC) $(KM_unit_CFLAGS) -o $@ $^ $(KM_STANDALONE_LIBS)
test/fuzz/fuzz_model: $(call km_objs,fuzz,test/fuzz/fuzz_model.o) $(FUZZ_OBJS)
	$(FUZZ_LINK) -o $@ $^ $(KM_STANDALONE_LIBS)
test/fuzz/fuzz_options: $(call km_objs,fuzz,test/fuzz/fuzz_options.o) $(FUZZ_OBJS)
	$(FUZZ_LINK) -o $@ $^ -ljson-c $(KM_STANDALONE_LIBS)
test/fuzz/fuzz_pass: $(call km_objs,fuzz,test/fuzz/fuzz_pass.o) $(FUZZ_OBJS)
	$(FUZZ_LINK) -o $@ $^ $(KM_STANDALONE_LIBS)
# Real pass points of every kind (test/fuzz/pass_seeds holds a copy: its
# output when the points' format changes).
test/fuzz/make_pass_seeds: $(call km_objs,unit,test/fuzz/make_pass_seeds.o $(KM_STANDALONE_OBJS))
	$(KM_unit_CC) $(KM_unit_CFLAGS) -o $@ $^ $(KM_STANDALONE_LIBS)

fuzz-model: test/fuzz/make_seed test/fuzz/fuzz_model
	mkdir -p test/fuzz/corpus
	test/fuzz/make_seed test/fuzz/corpus
	cp test/fuzz/model_seeds/* test/fuzz/corpus/
	test/fuzz/fuzz_model -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -print_final_stats=1 test/fuzz/corpus

fuzz-options: test/fuzz/fuzz_options
	mkdir -p test/fuzz/corpus_options
	cp test/fuzz/options_seeds/*.json test/fuzz/corpus_options/
	test/fuzz/fuzz_options -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -max_len=4096 -len_control=0 \
		-dict=test/fuzz/options.dict -print_final_stats=1 test/fuzz/corpus_options

# The pass points the aggregate host's descriptors carry (learner.h
# km_pass_rebuild), their adds over small blocks and their combines; an
# input that runs over a minute is a finding (a hang).
fuzz-pass: test/fuzz/make_pass_seeds test/fuzz/fuzz_pass
	mkdir -p test/fuzz/corpus_pass
	test/fuzz/make_pass_seeds test/fuzz/corpus_pass > /dev/null
	cp test/fuzz/pass_seeds/* test/fuzz/pass_findings/* test/fuzz/corpus_pass/
	test/fuzz/fuzz_pass -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -max_len=65536 -timeout=60 \
		-rss_limit_mb=4096 -print_final_stats=1 test/fuzz/corpus_pass

# A float32 rbf map with float64 sums against the float64 one (issue 31,
# test/bench/kmap32.c; its maps built as kernel_maps.c).
$(KM_BUILD)/bench/test/bench/kmap32_maps.o: KM_OBJ_CFLAGS = $(MAPS_CFLAGS)
test/bench/kmap32: $(call km_objs,bench,test/bench/kmap32.o test/bench/kmap32_maps.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)
.PHONY: bench-kmap32
bench-kmap32: test/bench/kmap32
	for s in "friedman 9000 3000 1000" "mixture 9000 3000 1000" "smooth20 1000000 20000 500 1"; do test/bench/kmap32 $$s || exit 1; done
bench: bench-kmap32

# Approximate models: features, accumulation and the solve timed piece by
# piece (test/bench/approx.c).
test/bench/approx: $(call km_objs,bench,test/bench/approx.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)

# Closed-form LOO: 0.1.0's dsyevd route against the interruptible one,
# side by side (test/bench/loo.c).
test/bench/loo: $(call km_objs,bench,test/bench/loo.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)

# Kernelized SGD's distance to the optimum by epochs: the table in
# src/core/methods/sgd.h (test/bench/sgd_epochs.c).
test/bench/sgd_epochs: $(call km_objs,bench,test/bench/sgd_epochs.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)
# Time and interrupt gaps of exact logistic Newton, SGD and a primal pass
# (test/bench/logistic_bench.c).
test/bench/logistic_bench: $(call km_objs,bench,test/bench/logistic_bench.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)

# The exact SVM core against scikit-learn's SVC (test/bench/svm_core.py).
test/bench/svm_core: $(call km_objs,bench,test/bench/svm_core.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)
.PHONY: bench-svm
bench-svm: test/bench/svm_core
	/usr/bin/python3 test/bench/svm_core.py
bench: bench-svm

# The exact epsilon-SVR core against scikit-learn's SVR (test/bench/svr_core.py).
test/bench/svr_core: $(call km_objs,bench,test/bench/svr_core.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)

# The exact one-class SVM core against scikit-learn's OneClassSVM (test/bench/oneclass_core.py).
test/bench/oneclass_core: $(call km_objs,bench,test/bench/oneclass_core.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)

# Ridge training in the core beside bare dpotrf, with its stages timed
# (test/bench/fit.c).
test/bench/fit: $(call km_objs,bench,test/bench/fit.o $(KM_STANDALONE_OBJS))
	$(KM_bench_CC) $(KM_bench_CFLAGS) -no-pie -o $@ $^ $(KM_STANDALONE_LIBS)
