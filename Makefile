# kernel_ml - PGXS build.  The version lives only in kernel_ml.control.
EXTENSION = kernel_ml
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = kernel_ml
# The numerical core includes no PostgreSQL header; the glue does.
CORE_OBJS = src/core.o src/kernels.o src/kernel_maps.o src/eigen.o src/solve.o src/select.o \
	src/model.o
GLUE_OBJS = src/crc32c.o src/kernel_ml.o src/json.o src/options.o src/pgutil.o \
	src/rowset.o src/split.o src/train.o src/matrix.o src/predict.o src/catalog.o \
	src/catalog_train.o src/catalog_predict.o src/catalog_query.o \
	src/catalog_sql.o src/accum_state.o
# The table of options and their checks (the glue in src/options.c reads jsonb).
CORE_OBJS += src/options_core.o src/metrics.o src/accum.o
OBJS = $(CORE_OBJS) $(GLUE_OBJS) $(KM_ASAN_OBJS)

DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(wildcard sql/$(EXTENSION)--*--*.sql)

TESTS = $(wildcard test/sql/*.sql)
REGRESS = $(patsubst test/sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=test --load-extension=$(EXTENSION)

KM_VERSION_DEFS = -DKM_VERSION_STRING=\"$(EXTVERSION)\"
PG_CPPFLAGS = -Isrc $(KM_VERSION_DEFS)
PG_CFLAGS = $(KM_EXTRA_CFLAGS)
SHLIB_LINK = -lopenblas -llapacke -lmvec -lm

EXTRA_CLEAN = test/bench/loo test/bench/kernel_maps.o test/unit/run_unit test/unit/run_unit_asan test/unit/*.o test/fuzz/fuzz_model test/fuzz/fuzz_options test/fuzz/make_seed test/fuzz/*.o test/fuzz/*.bc

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies here: rebuild on any header change.
$(OBJS): $(wildcard src/*.h)

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control
	cp $< $@

# The element-wise kernel loops alone are built for glibc's vector math
# (libmvec): exp and tanh vectorise only under -ffast-math.
MAPS_CFLAGS = -O3 -ffast-math
src/kernel_maps.o: CFLAGS += $(MAPS_CFLAGS)

# The core includes no PostgreSQL header, so it keeps -Wsign-compare even
# when the glue cannot (PostgreSQL's array macros trip it).
$(CORE_OBJS): CFLAGS += -Wsign-compare

# Core unit tests: the core sources plus PostgreSQL's CRC-32C from libpgport,
# no server.  Ends with "N passed, N failed".
UNIT_SRCS = $(wildcard test/unit/*.c) $(filter-out src/kernel_maps.c,$(CORE_OBJS:.o=.c)) src/crc32c.c
UNIT_CFLAGS = -std=gnu99 -O2 -g -Wall -Wextra $(KM_EXTRA_CFLAGS) -Wsign-compare -Isrc
test/unit/run_unit: $(UNIT_SRCS) src/kernel_maps.c $(wildcard src/*.h) test/unit/unit.h
	$(CC) $(UNIT_CFLAGS) $(MAPS_CFLAGS) -c src/kernel_maps.c -o test/unit/kernel_maps.o
	$(CC) $(UNIT_CFLAGS) -I$(shell $(PG_CONFIG) --includedir-server) \
		$(KM_VERSION_DEFS) -o $@ $(UNIT_SRCS) test/unit/kernel_maps.o \
		-L$(shell $(PG_CONFIG) --pkglibdir) -lpgport \
		-lopenblas -llapacke -lmvec -lm

.PHONY: unittest
unittest: test/unit/run_unit
	test/unit/run_unit

# Benchmarks against scikit-learn, a PL/Python peer and bare LAPACK, in a
# throwaway cluster; prints ratios measured side by side (test/bench/).
.PHONY: bench
bench:
	bash test/bench/run.sh

# The core unit tests under AddressSanitizer and UBSan.
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
.PHONY: unittest-asan
unittest-asan:
	$(CC) $(UNIT_CFLAGS) $(MAPS_CFLAGS) $(SAN_FLAGS) -c src/kernel_maps.c -o test/unit/kernel_maps_asan.o
	$(CC) $(UNIT_CFLAGS) $(SAN_FLAGS) -I$(shell $(PG_CONFIG) --includedir-server) \
		$(KM_VERSION_DEFS) -o test/unit/run_unit_asan $(UNIT_SRCS) test/unit/kernel_maps_asan.o \
		-L$(shell $(PG_CONFIG) --pkglibdir) -lpgport \
		-lopenblas -llapacke -lmvec -lm
	test/unit/run_unit_asan

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
# FUZZ_SECONDS: the model decoder from a corpus seeded with valid models, and
# the options validator on JSON parsed by libpgcommon's frontend parser.
FUZZ_SECONDS ?= 60
FUZZ_SRCS = src/model.c src/crc32c.c src/core.c src/kernels.c
FUZZ_LIBS = test/fuzz/kernel_maps.o -L$(shell $(PG_CONFIG) --pkglibdir) -lpgport \
	-lopenblas -llapacke -lmvec -lm
FUZZ_CC = clang -O1 -g -Wno-ignored-attributes -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Isrc -I$(shell $(PG_CONFIG) --includedir-server)
.PHONY: fuzz fuzz-model fuzz-options
fuzz: fuzz-model fuzz-options

test/fuzz/kernel_maps.o: src/kernel_maps.c $(wildcard src/*.h)
	$(CC) -O2 $(MAPS_CFLAGS) -Isrc -c src/kernel_maps.c -o $@

fuzz-model: test/fuzz/kernel_maps.o
	mkdir -p test/fuzz/corpus
	$(CC) -O1 -g -Isrc -I$(shell $(PG_CONFIG) --includedir-server) -o test/fuzz/make_seed \
		test/fuzz/make_seed.c $(FUZZ_SRCS) $(FUZZ_LIBS)
	test/fuzz/make_seed test/fuzz/corpus
	$(FUZZ_CC) -o test/fuzz/fuzz_model test/fuzz/fuzz_model.c $(FUZZ_SRCS) $(FUZZ_LIBS)
	test/fuzz/fuzz_model -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 test/fuzz/corpus

# The options validator needs the kernel, method and cv name tables, so it
# links the core files that hold them; libpgcommon brings the JSON parser,
# whose frontend build leaks a member name or token when the JSON is
# malformed (the server frees them with their memory context): no leak check.
FUZZ_OPTIONS_SRCS = src/options_core.c src/core.c src/kernels.c src/eigen.c src/solve.c src/select.c \
	src/metrics.c
fuzz-options: test/fuzz/kernel_maps.o
	mkdir -p test/fuzz/corpus_options
	cp test/fuzz/options_seeds/*.json test/fuzz/corpus_options/
	$(FUZZ_CC) -o test/fuzz/fuzz_options test/fuzz/fuzz_options.c $(FUZZ_OPTIONS_SRCS) \
		test/fuzz/kernel_maps.o -L$(shell $(PG_CONFIG) --pkglibdir) -lpgcommon -lpgport \
		-lopenblas -llapacke -lmvec -lm
	ASAN_OPTIONS=detect_leaks=0 test/fuzz/fuzz_options -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -detect_leaks=0 \
		-dict=test/fuzz/options.dict -print_final_stats=1 test/fuzz/corpus_options

# Closed-form LOO: 0.1.0's dsyevd route against the interruptible one,
# side by side (test/bench/loo.c).
BENCH_SRCS = src/core.c src/kernels.c src/eigen.c src/solve.c src/select.c src/metrics.c
test/bench/loo: test/bench/loo.c $(BENCH_SRCS) src/kernel_maps.c $(wildcard src/*.h)
	$(CC) -O2 $(MAPS_CFLAGS) -Isrc -c src/kernel_maps.c -o test/bench/kernel_maps.o
	$(CC) -O2 -g -no-pie -Wall -Isrc -o $@ test/bench/loo.c $(BENCH_SRCS) test/bench/kernel_maps.o \
		-lopenblas -llapacke -lmvec -lm
