/*
 * pgutil.c - PostgreSQL glue shared by the SQL entry points.
 */
#include "postgres.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cblas.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "pgutil.h"
#include "approx.h"
#include "method.h"
#include "model.h"
#include "progress.h"

/* The settings (GUCs defined by kernel_ml.c's _PG_init) */
int			km_max_memory_kb = KM_DEFAULT_MAX_MEMORY_KB;
int			km_max_memory_limit_kb = KM_DEFAULT_MAX_MEMORY_KB;

/*
 * One BLAS thread by default: a database server shares its cores between
 * backends, and parallel query already adds processes.  A session that
 * trains a large model alone can raise it.
 */
int			km_blas_threads = 1;

/* 0: as many as the online cores */
int			km_blas_threads_limit = 0;

void
km_raise(const km_error *err)
{
	int			code = 0;
	/* generic hints; a method's own (err->hint, method.h) takes precedence */
	const char *hint = NULL;

	switch (err->status)
	{
		case KM_ERR_FORMAT:
		case KM_ERR_VERSION:
			code = ERRCODE_INVALID_BINARY_REPRESENTATION;
			if (err->status == KM_ERR_VERSION)
				hint = "Upgrade kernel_ml to read this model.";
			break;
		case KM_ERR_CHECKSUM:
			code = ERRCODE_DATA_CORRUPTED;
			break;
		case KM_ERR_NOT_PD:
			code = ERRCODE_DATA_EXCEPTION;
			hint = "Use a larger lambda, or a kernel that is positive definite on this data.";
			break;
		case KM_ERR_DIVERGED:
			code = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
			break;
		case KM_ERR_INVALID:
			code = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case KM_ERR_OVERFLOW:
			code = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
			hint = "Standardize the features (\"standardize\": true), or use a smaller gamma or degree.";
			break;
		case KM_ERR_INACCURATE:
			code = ERRCODE_DATA_EXCEPTION;
			break;
		case KM_OK:
			break;
	}
	if (code == 0)
		elog(ERROR, "unexpected kernel_ml status %d: %s", (int) err->status,
			 err->message);
	/* the method's hint, when the failure is one it knows (method.h) */
	if (err->hint[0] != '\0')
		hint = err->hint;
	ereport(ERROR,
			(errcode(code),
			 errmsg("%s", err->message),
			 errdetail("%s", err->detail),
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

void
km_interrupt(void)
{
	CHECK_FOR_INTERRUPTS();
	/* the core calls this between blocks of work: a kernel_ml.progress line if due */
	km_progress_heartbeat();
}

/* OpenBLAS thread count last set in this process (-1: never set here). */
static int	blas_threads_current = -1;

static void
blas_set_threads(int threads)
{
	if (blas_threads_current != threads)
	{
		openblas_set_num_threads(threads);
		blas_threads_current = threads;
	}
}

int
km_online_cores(void)
{
	long		cores = sysconf(_SC_NPROCESSORS_ONLN);

	return cores < 1 ? 1 : (int) Min(cores, INT_MAX);
}

int
km_blas_threads_ceiling(void)
{
	int			cores = km_online_cores();

	return km_blas_threads_limit > 0 ? Min(km_blas_threads_limit, cores) : cores;
}

int
km_blas_threads_effective(void)
{
	return Min(km_blas_threads, km_blas_threads_ceiling());
}

/*
 * Before training or a Gram matrix: kernel_ml.blas_threads threads, but
 * never more than the ceiling (a superuser may SET more; it is capped).
 */
void
km_blas_setup(void)
{
	blas_set_threads(km_blas_threads_effective());
}

/*
 * Before per-row scoring: one thread.  A kernel row is one GEMV of a few
 * thousand by d; splitting it between threads costs more in
 * synchronisation than it saves (100,000 rows, n = 2,000, d = 20: 6.8 us
 * a row on one thread, 11.4 us on two), and parallel query already runs
 * one scoring process per worker.
 */
void
km_blas_setup_scoring(void)
{
	blas_set_threads(1);
}

/*
 * Before a chunk of a pass aggregate's rows or a combine of its states
 * (pass_state.c): in a parallel plan the leader and each worker are one of
 * several processes sharing the cores, one BLAS thread each (OpenBLAS's
 * default in a worker is a thread per core: two workers' DGEMMs on a
 * 2-core machine ran four threads, each spinning while it waits); else
 * kernel_ml.blas_threads.
 */
void
km_blas_setup_chunk(void)
{
	if (IsInParallelMode())
		km_blas_setup_scoring();
	else
		km_blas_setup();
}

int
km_array_length(ArrayType *arr, const char *what)
{
	if (ARR_ELEMTYPE(arr) != FLOAT8OID)
		elog(ERROR, "feature array has element type %u, expected float8",
			 ARR_ELEMTYPE(arr));
	if (ARR_NDIM(arr) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("feature array must not be empty"),
				 errdetail("The feature array of %s is empty.", what)));
	if (ARR_NDIM(arr) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("feature array must be one-dimensional"),
				 errdetail("The feature array of %s has %d dimensions.", what,
						   ARR_NDIM(arr))));
	if (array_contains_nulls(arr))
	{
		bits8	   *bitmap = ARR_NULLBITMAP(arr);
		int			n = ARR_DIMS(arr)[0];
		int			i;

		for (i = 0; i < n; i++)
			if (!(bitmap[i / 8] & (1 << (i % 8))))
				break;
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("feature array must not contain nulls"),
				 errdetail("Element %d of the feature array of %s is null.",
						   i + 1, what)));
	}
	return ARR_DIMS(arr)[0];
}

void
km_array_copy(ArrayType *arr, int d, double *out, const char *what)
{
	const double *v = (const double *) ARR_DATA_PTR(arr);

	for (int i = 0; i < d; i++)
	{
		if (!isfinite(v[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("feature values must be finite"),
					 errdetail("Element %d of the feature array of %s is %s.",
							   i + 1, what, float8out_internal(v[i]))));
		out[i] = v[i];
	}
}

typedef struct PrefaultedChunk
{
	void	   *base;			/* the mapping, NULL once unmapped */
	Size		len;
	MemoryContextCallback cb;
} PrefaultedChunk;

/*
 * What this backend's kernel_ml memory grants (pgutil.h) and kernel
 * matrices (km_alloc_reserved) hold: the sum of their bytes.
 */
static double mem_held = 0.0;

/*
 * The mapping's first page holds a pointer back to its chunk (a whole page,
 * so that the payload starts on one).
 */
#define PREFAULT_HEADER km_page_size()

static void
unmap_chunk(void *arg)
{
	PrefaultedChunk *chunk = (PrefaultedChunk *) arg;

	if (chunk->base != NULL)
	{
		munmap(chunk->base, chunk->len);
		/* the caller checked the need (km_check_memory); here it is counted */
		mem_held = Max(mem_held - (double) chunk->len, 0.0);
	}
	chunk->base = NULL;
}

/*
 * Page faults are the hidden cost of a fresh n x n matrix: touching 800 MB
 * page by page took 2.3 s on the virtual machines we measured, mapping it
 * with MAP_POPULATE 0.11 s.  So the Gram matrix gets its own mapping, tied
 * to a memory context so that it is released like palloc'd memory.
 *
 * One MAP_POPULATE call cannot be interrupted, and a fresh backend's first
 * 3.2 GB took up to 2.7 s there (the hypervisor backing new memory), so the
 * mapping is reserved first and populated in PREFAULT_STEP pieces with an
 * interrupt check between them.
 *
 * Pieces are populated with MADV_POPULATE_WRITE (Linux 5.14); older kernels
 * fall back to replacing the piece with a MAP_POPULATE mapping.
 *
 * Transparent huge pages were measured and left out.  With MADV_HUGEPAGE the
 * factorisation of n = 10,000 ran 0.3-0.5 s faster, but on this project's VM
 * the 2 MB blocks the guest hands back to the hypervisor cost about 1 s a GB
 * to populate again, so a training that follows another after a pause of a
 * few seconds took 3.1-3.6 s with huge pages against 2.8-3.0 s without.
 */
#define PREFAULT_STEP ((Size) 128 * 1024 * 1024)
#define PREFAULT_PARALLEL_MIN ((Size) 64 * 1024 * 1024)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * The virtual memory page size: 4 kB on x86-64, 64 kB on some arm64 and
 * ppc64le kernels.  Pages are what mapping and populating work in.
 */
Size
km_page_size(void)
{
	static Size page = 0;

	if (page == 0)
	{
		long		v = sysconf(_SC_PAGESIZE);

		page = v > 0 ? (Size) v : 4096;
	}
	return page;
}

static void pg_attribute_noreturn()
prefault_failed(Size bytes)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory"),
			 errdetail("Failed on a request of size %zu for the kernel matrix.",
					   bytes),
			 errhint("Lower kernel_ml.max_memory below the memory the server can spare, or train on fewer rows.")));
}

void *
km_alloc_reserved(Size bytes)
{
	PrefaultedChunk *chunk = palloc(sizeof(PrefaultedChunk));
	char	   *payload;

	chunk->len = add_size(bytes, PREFAULT_HEADER);
	chunk->base = mmap(NULL, chunk->len, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (chunk->base == MAP_FAILED)
	{
		chunk->base = NULL;
		prefault_failed(bytes);
	}
	mem_held += (double) chunk->len;
	chunk->cb.func = unmap_chunk;
	chunk->cb.arg = chunk;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &chunk->cb);

	payload = (char *) chunk->base + PREFAULT_HEADER;
	*(PrefaultedChunk **) chunk->base = chunk;
	return payload;
}

/* Populate [start, end) in pieces; errno of the first failure, or 0. */
static int
populate_range(char *start, char *end, volatile sig_atomic_t *stop,
			   bool interruptible)
{
	for (char *piece = start; piece < end; piece += PREFAULT_STEP)
	{
		Size		step = Min(PREFAULT_STEP, (Size) (end - piece));

		if (interruptible)
			CHECK_FOR_INTERRUPTS();
		if (stop != NULL && *stop)
			return 0;
		if (madvise(piece, step, MADV_POPULATE_WRITE) != 0)
			return errno;
	}
	return 0;
}

typedef struct PopulateJob
{
	KmRange    *ranges;
	int			count;
	volatile sig_atomic_t stop;
	int			err;
} PopulateJob;

/*
 * The helper thread: only madvise(2) on its own ranges, with every signal
 * blocked, so it never runs PostgreSQL code.
 */
static void *
populate_thread(void *arg)
{
	PopulateJob *job = (PopulateJob *) arg;

	for (int i = 0; i < job->count && !job->stop && job->err == 0; i++)
		job->err = populate_range(job->ranges[i].start, job->ranges[i].end,
								  &job->stop, false);
	return NULL;
}

/* Serial fallback: MAP_POPULATE where MADV_POPULATE_WRITE is missing. */
static void
populate_serial(KmRange *ranges, int count, Size what)
{
	for (int i = 0; i < count; i++)
		for (char *piece = ranges[i].start; piece < ranges[i].end;
			 piece += PREFAULT_STEP)
		{
			Size		step = Min(PREFAULT_STEP, (Size) (ranges[i].end - piece));
			int			err;

			CHECK_FOR_INTERRUPTS();
			err = madvise(piece, step, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
			if (err == 0)
				continue;
			if (err != EINVAL)
				prefault_failed(what);
			/* nothing is written yet, so a fresh mapping loses nothing */
			if (mmap(piece, step, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE,
					 -1, 0) == MAP_FAILED)
				prefault_failed(what);
		}
}

/*
 * Populates ranges[0 .. split) on this thread while the helper thread works
 * on the rest, and joins the helper however this ends (an error or a
 * cancel stops it first).  Apart from km_populate_ranges so that no local of
 * that function lives across the longjmp.
 */
static int
populate_beside(KmRange *ranges, int split, PopulateJob *job, pthread_t thread)
{
	volatile int err = 0;

	PG_TRY();
	{
		for (int i = 0; i < split && err == 0; i++)
			err = populate_range(ranges[i].start, ranges[i].end, NULL, true);
	}
	PG_CATCH();
	{
		job->stop = 1;
		pthread_join(thread, NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* the helper finishes its half unless this one has already failed */
	if (err != 0)
		job->stop = 1;
	pthread_join(thread, NULL);
	return err;
}

/*
 * Populating is the hypervisor's work on this kind of VM (about 1.4 s a GB
 * once the guest has handed free memory back), and it goes about twice as
 * fast from two threads.  So with kernel_ml.blas_threads >= 2 a helper
 * thread populates the second half of the bytes while this one populates
 * the first, checking for interrupts between pieces.
 */
void
km_populate_ranges(KmRange *ranges, int count)
{
	Size		page = km_page_size();
	Size		total = 0;
	Size		half = 0;
	int			split = 0;
	PopulateJob job;
	pthread_t	thread;
	sigset_t	all;
	sigset_t	old;
	bool		started;
	int			err;

	for (int i = 0; i < count; i++)
	{
		ranges[i].start = (char *) TYPEALIGN_DOWN(page, ranges[i].start);
		ranges[i].end = (char *) TYPEALIGN(page, ranges[i].end);
		total += ranges[i].end - ranges[i].start;
	}
	while (split < count && half < total / 2)
	{
		half += ranges[split].end - ranges[split].start;
		split++;
	}

	if (km_blas_threads_effective() < 2 || total < PREFAULT_PARALLEL_MIN ||
		split >= count)
	{
		populate_serial(ranges, count, total);
		return;
	}

	job.ranges = ranges + split;
	job.count = count - split;
	job.stop = 0;
	job.err = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	started = pthread_create(&thread, NULL, populate_thread, &job) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!started)
	{
		populate_serial(ranges, count, total);
		return;
	}

	err = populate_beside(ranges, split, &job, thread);
	if (err == EINVAL || job.err == EINVAL)
		populate_serial(ranges, count, total);	/* an old kernel */
	else if (err != 0 || job.err != 0)
		prefault_failed(total);
}

void
km_populate(void *addr, Size len)
{
	KmRange		r;

	r.start = (char *) addr;
	r.end = (char *) addr + len;
	km_populate_ranges(&r, 1);
}

void *
km_alloc_prefaulted(Size bytes)
{
	void	   *p = km_alloc_reserved(bytes);

	km_populate(p, bytes);
	return p;
}

void
km_free_prefaulted(void *addr)
{
	unmap_chunk(*(PrefaultedChunk **) ((char *) addr - PREFAULT_HEADER));
}

/* Bytes zeroed between two interrupt checks: milliseconds of page faults. */
#define ZERO_PIECE ((Size) 16 * 1024 * 1024)

void
km_zero_interruptible(void *p, Size len)
{
	char	   *c = p;

	while (len > 0)
	{
		Size		n = Min(len, ZERO_PIECE);

		CHECK_FOR_INTERRUPTS();
		memset(c, 0, n);
		c += n;
		len -= n;
	}
}

void *
km_alloc0_interruptible(MemoryContext ctx, Size bytes)
{
	void	   *p = MemoryContextAllocExtended(ctx, bytes, MCXT_ALLOC_HUGE);

	km_zero_interruptible(p, bytes);
	return p;
}

char *
km_size_pretty(double bytes)
{
	return text_to_cstring(DatumGetTextPP(DirectFunctionCall1(pg_size_pretty,
															  Int64GetDatum((int64) Min(bytes, (double) PG_INT64_MAX)))));
}

/* ---- per-backend memory accounting (pgutil.h) ---- */

struct KmMemGrant
{
	double		bytes;			/* counted in mem_held; 0 once released */
	MemoryContextCallback cb;
};

double
km_memory_held(void)
{
	return mem_held;
}

static double
memory_limit(void)
{
	return Min((double) km_max_memory_kb * 1024.0,
			   (double) km_max_memory_limit_kb * 1024.0);
}

double
km_memory_room(void)
{
	return memory_limit() - mem_held;
}

bool
km_memory_fits(double bytes)
{
	return mem_held + bytes <= memory_limit();
}

/*
 * The approximate model to suggest when exact training does not fit: it
 * keeps m x m sums instead of the n x n kernel matrix.
 */
#define KM_APPROX_SUGGESTION \
	"train an approximate model, which keeps no n x n matrix: " \
	"'{\"approximation\": \"nystrom\", \"components\": 500}'"

/*
 * The refusal: bytes more are needed while held are already held (by
 * grants other than the one growing).  exact: exact training, whose
 * hint also names an approximate model; fewer: what else would need less
 * (NULL: fewer rows).
 */
static void pg_attribute_noreturn()
refuse_memory(double bytes, double held, const char *what, bool at_least, bool exact,
			  const char *fewer_than)
{
	double		user = (double) km_max_memory_kb * 1024.0;
	double		ceiling = (double) km_max_memory_limit_kb * 1024.0;
	double		limit = Min(user, ceiling);
	bool		capped = ceiling < user;
	double		total = bytes + held;
	double		need_mb = ceil(total / (1024.0 * 1024.0));
	const char *setting = capped ? "kernel_ml.max_memory_limit" : "kernel_ml.max_memory";
	const char *rows = fewer_than ? fewer_than : "fewer rows";
	const char *fewer = held >= 1.0 ?
		psprintf("use %s or fewer kernel_ml calls in one statement", rows) :
		psprintf("use %s", rows);
	char	   *hint;
	char	   *needs;

	if (exact)
		fewer = psprintf("%s, or " KM_APPROX_SUGGESTION, fewer);
	/* what the caller can do about it: never a setting it cannot raise */
	if (total <= ceiling)
		hint = psprintf("Raise kernel_ml.max_memory (SET kernel_ml.max_memory = '%.0fMB'), or %s.",
						need_mb, fewer);
	else if (superuser())
		hint = psprintf("Raise kernel_ml.max_memory_limit and kernel_ml.max_memory to at least %.0fMB, or %s.",
						need_mb, fewer);
	else
		hint = psprintf("%c%s; only a superuser can raise kernel_ml.max_memory_limit.",
						pg_toupper((unsigned char) fewer[0]), fewer + 1);

	needs = psprintf("It needs %s %s", at_least ? "at least" : "about",
					 km_size_pretty(bytes));
	if (held >= 1.0)
		needs = psprintf("%s more; the rows and states of kernel_ml calls under way in this session hold %s",
						 needs, km_size_pretty(held));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s needs more memory than %s allows", what, setting),
			 capped ?
			 errdetail("%s; the limit is %s, set by kernel_ml.max_memory_limit (kernel_ml.max_memory is %s).",
					   needs, km_size_pretty(limit), km_size_pretty(user)) :
			 errdetail("%s; the limit is %s, set by kernel_ml.max_memory.",
					   needs, km_size_pretty(limit)),
			 errhint("%s", hint)));
	pg_unreachable();
}

void
km_check_memory(double bytes, const char *what, bool at_least)
{
	if (!km_memory_fits(bytes))
		refuse_memory(bytes, mem_held, what, at_least, false, NULL);
}

void
km_check_memory_fewer(double bytes, const char *what, bool at_least, const char *fewer)
{
	if (!km_memory_fits(bytes))
		refuse_memory(bytes, mem_held, what, at_least, false, fewer);
}

void
km_check_exact_memory(double bytes, const char *what, bool at_least)
{
	if (!km_memory_fits(bytes))
		refuse_memory(bytes, mem_held, what, at_least, true, NULL);
}

void
km_refuse_exact_rows(double bytes, double n, const char *what)
{
	double		user = (double) km_max_memory_kb * 1024.0;
	double		ceiling = (double) km_max_memory_limit_kb * 1024.0;
	double		limit = Min(user, ceiling);
	const char *setting = ceiling < user ? "kernel_ml.max_memory_limit" : "kernel_ml.max_memory";
	double		need_mb = ceil(bytes / (1024.0 * 1024.0));
	long		pages = sysconf(_SC_PHYS_PAGES);
	long		page_size = sysconf(_SC_PAGESIZE);
	double		ram = pages > 0 && page_size > 0 ? (double) pages * (double) page_size : 0.0;
	char	   *hint;

	if (ram > 0.0 && bytes > ram)
		hint = psprintf("Use \"approximation\": \"nystrom\" (for example '{\"approximation\": \"nystrom\", \"components\": 1000}'), whose memory does not grow with the rows: an exact model of this size needs more than the %s of this server's memory.",
						km_size_pretty(ram));
	else if (bytes > ceiling && !superuser())
		hint = psprintf("Use \"approximation\": \"nystrom\" (for example '{\"approximation\": \"nystrom\", \"components\": 1000}'), whose memory does not grow with the rows: an exact model of this size is beyond kernel_ml.max_memory_limit (%s), which only a superuser can raise.",
						km_size_pretty(ceiling));
	else if (bytes > ceiling)
		hint = psprintf("Raise kernel_ml.max_memory_limit and kernel_ml.max_memory to at least %.0fMB, or " KM_APPROX_SUGGESTION ".",
						need_mb);
	else
		hint = psprintf("Raise kernel_ml.max_memory (SET kernel_ml.max_memory = '%.0fMB'), or " KM_APPROX_SUGGESTION ".",
						need_mb);
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s needs more memory than %s allows", what, setting),
			 ceiling < user ?
			 errdetail("An exact model of %.0f rows needs about %s for its n x n kernel matrix and its rows; the limit is %s, set by kernel_ml.max_memory_limit (kernel_ml.max_memory is %s).",
					   n, km_size_pretty(bytes), km_size_pretty(limit), km_size_pretty(user)) :
			 errdetail("An exact model of %.0f rows needs about %s for its n x n kernel matrix and its rows; the limit is %s, set by kernel_ml.max_memory.",
					   n, km_size_pretty(bytes), km_size_pretty(limit)),
			 errhint("%s", hint)));
}

void
km_check_components_memory(uint32 m, const char *what)
{
	double		need = km_approx_work_bytes(m);
	uint32		lo = 0,
				hi = m;

	if (km_memory_fits(need))
		return;
	/* the most components that would fit now */
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo + 1) / 2;

		if (km_memory_fits(km_approx_work_bytes(mid)))
			lo = mid;
		else
			hi = mid - 1;
	}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s needs more memory than kernel_ml.max_memory allows", what),
			 errdetail("An approximate model of %u components needs at least %s for its m x m sums and solve, whatever the rows; %s are free under the limit of %s.",
					   m, km_size_pretty(need), km_size_pretty(Max(km_memory_room(), 0.0)),
					   km_size_pretty(memory_limit())),
			 lo > 0 ?
			 errhint("Use at most %u components, or raise kernel_ml.max_memory.", lo) :
			 errhint("Raise kernel_ml.max_memory.")));
}

static void
grant_release_cb(void *arg)
{
	km_mem_release((KmMemGrant *) arg);
}

void
km_mem_release(KmMemGrant *g)
{
	if (g == NULL)
		return;
	mem_held -= g->bytes;
	g->bytes = 0.0;
	/* no drift from rounding: nothing held is exactly 0 */
	if (mem_held < 1.0)
		mem_held = 0.0;
}

KmMemGrant *
km_mem_resize(KmMemGrant *g, MemoryContext ctx, double bytes, const char *what,
			  bool at_least)
{
	double		before = g != NULL ? g->bytes : 0.0;

	if (bytes > before && mem_held - before + bytes > memory_limit())
		refuse_memory(bytes, mem_held - before, what, at_least, false, NULL);
	if (g == NULL)
	{
		g = MemoryContextAllocZero(ctx, sizeof(KmMemGrant));
		g->cb.func = grant_release_cb;
		g->cb.arg = g;
		MemoryContextRegisterResetCallback(ctx, &g->cb);
	}
	mem_held += bytes - g->bytes;
	g->bytes = bytes;
	if (mem_held < 1.0)
		mem_held = 0.0;
	return g;
}

KmMemGrant *
km_mem_reserve(MemoryContext ctx, double bytes, const char *what, bool at_least)
{
	return km_mem_resize(NULL, ctx, bytes, what, at_least);
}

int
km_model_prob_link_or_raise(const km_model *m)
{
	const km_method_ops *ops = km_method_get(m->method);
	const char *hint = NULL;
	km_prob_link link = ops->prob_link(m->has_probability, m->multiclass, &hint);

	if (link == KM_PROB_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("model gives no probabilities"),
				 errdetail("This %s model was trained without probability estimates.",
						   ops->name),
				 hint ? errhint("%s", hint) : 0));
	return (int) link;
}
