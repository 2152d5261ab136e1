/*
 * test-ioeng: the asynchronous I/O engine, each test run for both
 * back ends (io_uring, and the thread pool forced with
 * IOENG_FORCE_THREADS) on an unlinked sparse temporary file.
 *
 * Random writes and reads against a reference buffer, four threads
 * submitting at once, FSYNC and WRITE_FUA durability (with cachestat(2)
 * where the kernel has it: no dirty or writeback pages left in the range),
 * PUNCH_HOLE/ZERO_RANGE, errors (read-only fd, fault hook, torn and short
 * transfers, reads past the end), ioeng_free() with requests in flight and
 * callbacks that submit more, statistics, and a throughput sanity check of
 * io_uring against the pool. Randomized cases print their seed
 * (IOENG_TEST_SEED=n repeats a run).
 */
#include "unit.h"

#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "ioeng.h"

#define MIB (1024u * 1024u)
#define FILE_SIZE (64ull * MIB)

static const unsigned int backend_uring = 0;
static const unsigned int backend_threads = IOENG_FORCE_THREADS;

/* ---------------------------------------------------------------- random */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

static void rng_fill(struct rng *r, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)rng_next(r);
}

static struct rng rng_seeded(const char *test)
{
	static unsigned int calls;
	const char *env = getenv("IOENG_TEST_SEED");
	uint64_t seed;

	if (env && *env)
		seed = strtoull(env, NULL, 0);
	else
		seed = ((uint64_t)time(NULL) << 20) ^ ((uint64_t)getpid() << 8) ^ calls++;
	print_message("%s: seed %" PRIu64 " (repeat with IOENG_TEST_SEED=%" PRIu64 ")\n", test,
		      seed, seed);
	return (struct rng){seed};
}

/* ---------------------------------------------------------------- fixtures */

static void close_fd_box(void *p)
{
	close(*(int *)p);
	free(p);
}

/* An unlinked sparse file of size bytes, read-write; *ro (if non-NULL)
 * gets a read-only descriptor of the same file. Closed at teardown. */
static int tmp_file(uint64_t size, int *ro)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	int *box = malloc(sizeof(int));
	int fd;

	assert_non_null(box);
	snprintf(path, sizeof(path), "%s/tandem-ioeng-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkostemp(path, O_CLOEXEC);
	assert_true(fd >= 0);
	box[0] = fd;
	unit_defer(close_fd_box, box);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	if (ro) {
		*ro = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(*ro >= 0);
		box = malloc(sizeof(int));
		assert_non_null(box);
		box[0] = *ro;
		unit_defer(close_fd_box, box);
	}
	assert_int_equal(unlink(path), 0);
	return fd;
}

static void free_engine(void *p)
{
	ioeng_free(p);
}

/* The engine of the test's back end; skips when io_uring is wanted and
 * unavailable. Open it after the buffers it uses (teardown frees it first). */
static struct ioeng *engine(void **state, int fd, unsigned int depth)
{
	unsigned int flags = *(const unsigned int *)*state;
	struct ioeng *e = NULL;

	assert_int_equal(ioeng_new(fd, depth, flags, &e), 0);
	unit_defer(free_engine, e);
	if (flags & IOENG_FORCE_THREADS) {
		assert_string_equal(ioeng_kind(e), "threads");
		assert_int_equal(ioeng_uring_error(e), 0);
	} else if (strcmp(ioeng_kind(e), "io_uring") != 0) {
		print_message("io_uring unavailable (%s): skipped\n",
			      strerror(-ioeng_uring_error(e)));
		unit_release(e);
		skip();
	}
	return e;
}

static void *xmalloc(size_t len)
{
	return unit_defer(free, calloc(1, len ? len : 1));
}

/* ---------------------------------------------------------------- tracking */

/* Counts requests in flight; tests wait on it. */
struct tracker {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned int pending, done;
};

struct slot {
	struct tracker *t;
	int res;
	bool done;
	unsigned int order; /* completion rank */
};

static void tracker_free(void *p)
{
	struct tracker *t = p;

	pthread_cond_destroy(&t->c);
	pthread_mutex_destroy(&t->m);
	free(t);
}

static struct tracker *tracker_new(void)
{
	struct tracker *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	pthread_mutex_init(&t->m, NULL);
	pthread_cond_init(&t->c, NULL);
	return unit_defer(tracker_free, t);
}

static void slot_done(void *arg, int res)
{
	struct slot *s = arg;
	struct tracker *t = s->t;

	pthread_mutex_lock(&t->m);
	s->res = res;
	s->done = true;
	s->order = t->done++;
	t->pending--;
	pthread_cond_broadcast(&t->c);
	pthread_mutex_unlock(&t->m);
}

/* Wait until at most n requests are pending. */
static void tracker_wait(struct tracker *t, unsigned int n)
{
	pthread_mutex_lock(&t->m);
	while (t->pending > n)
		pthread_cond_wait(&t->c, &t->m);
	pthread_mutex_unlock(&t->m);
}

static int submit_req(struct ioeng *e, struct slot *s, struct ioeng_req *r)
{
	int rc;

	r->done = slot_done;
	r->arg = s;
	s->done = false;
	pthread_mutex_lock(&s->t->m);
	s->t->pending++;
	pthread_mutex_unlock(&s->t->m);
	rc = ioeng_submit(e, r);
	if (rc < 0) {
		pthread_mutex_lock(&s->t->m);
		s->t->pending--;
		pthread_mutex_unlock(&s->t->m);
	}
	return rc;
}

static void submit(struct ioeng *e, struct slot *s, enum ioeng_op op, void *buf, uint64_t len,
		   uint64_t off)
{
	struct ioeng_req r = {.op = op, .buf = buf, .len = len, .off = off};

	assert_int_equal(submit_req(e, s, &r), 0);
}

static int run(struct ioeng *e, enum ioeng_op op, void *buf, uint64_t len, uint64_t off)
{
	struct ioeng_req r = {.op = op, .buf = buf, .len = len, .off = off};

	return ioeng_run(e, &r);
}

/* Read [off, off + len) and compare with ref. */
static void assert_file_equals(struct ioeng *e, const unsigned char *ref, uint64_t off,
			       uint64_t len)
{
	const size_t chunk = 4 * MIB;
	unsigned char *buf = xmalloc(chunk);
	uint64_t at;

	for (at = off; at < off + len; at += chunk) {
		size_t n = off + len - at < chunk ? (size_t)(off + len - at) : chunk;

		assert_int_equal(run(e, IOENG_READ, buf, n, at), (int)n);
		if (memcmp(buf, ref + at, n) != 0) {
			size_t i = 0;

			while (buf[i] == ref[at + i])
				i++;
			fail_msg("file differs from the reference at byte %" PRIu64, at + i);
		}
	}
	unit_release(buf);
}

/* cachestat(2) (Linux 6.5): dirty and writeback pages in a range. */
struct cs_range {
	uint64_t off, len;
};

struct cs_stat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

static int unclean_pages(int fd, uint64_t off, uint64_t len, uint64_t *n)
{
	struct cs_range r = {off, len};
	struct cs_stat s;

	if (syscall(__NR_cachestat, fd, &r, &s, 0) < 0)
		return -errno;
	*n = s.nr_dirty + s.nr_writeback;
	return 0;
}

/* ---------------------------------------------------------------- faults */

struct fault_ctx {
	atomic_uint calls;
	unsigned int mask;	/* ops (1 << op) the fault applies to */
	size_t len;		/* struct bdev_fault.len */
	int err;		/* struct bdev_fault.err */
	unsigned int sleep_us;	/* per call */
	pthread_mutex_t gate_m; /* with gate: block until gate_open */
	pthread_cond_t gate_c;
	bool gate, gate_open;
};

static struct bdev_fault fault_on_io(void *ctx, enum ioeng_op op, uint64_t off, uint64_t len)
{
	struct fault_ctx *f = ctx;

	atomic_fetch_add(&f->calls, 1);
	if (f->sleep_us)
		usleep(f->sleep_us);
	if (f->gate) {
		pthread_mutex_lock(&f->gate_m);
		while (!f->gate_open)
			pthread_cond_wait(&f->gate_c, &f->gate_m);
		pthread_mutex_unlock(&f->gate_m);
	}
	if (!(f->mask & (1u << op)))
		return (struct bdev_fault){0, 0};
	return (struct bdev_fault){f->len, f->err};
}

static void fault_free(void *p)
{
	struct fault_ctx *f = p;

	pthread_cond_destroy(&f->gate_c);
	pthread_mutex_destroy(&f->gate_m);
	free(f);
}

static struct fault_ctx *fault_new(void)
{
	struct fault_ctx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pthread_mutex_init(&f->gate_m, NULL);
	pthread_cond_init(&f->gate_c, NULL);
	return unit_defer(fault_free, f);
}

static void fault_open_gate(struct fault_ctx *f)
{
	pthread_mutex_lock(&f->gate_m);
	f->gate_open = true;
	pthread_cond_broadcast(&f->gate_c);
	pthread_mutex_unlock(&f->gate_m);
}

#define OPS_RW ((1u << IOENG_READ) | (1u << IOENG_WRITE) | (1u << IOENG_WRITE_FUA))

/* ---------------------------------------------------------------- tests */

static void test_kind(void **state)
{
	unsigned int flags = *(const unsigned int *)*state;
	int fd = tmp_file(MIB, NULL);
	struct ioeng *e = engine(state, fd, 8);
	struct ioeng_stats st;

	print_message("backend: %s\n", ioeng_kind(e));
	assert_string_equal(ioeng_kind(e), flags ? "threads" : "io_uring");
	ioeng_get_stats(e, &st);
	assert_int_equal(st.submitted, 0);
	assert_int_equal(st.in_flight, 0);
	unit_release(e);
}

static void never_done(void *arg, int res)
{
	fail_msg("callback of a rejected request");
}

static void test_invalid(void **state)
{
	int fd = tmp_file(MIB, NULL);
	char buf[16];
	struct iovec iov[2] = {{buf, 8}, {buf + 8, 8}};
	struct ioeng *e = engine(state, fd, 8), *e2 = NULL;
	struct ioeng_req r = {.op = IOENG_READ, .buf = buf, .len = 16};

	assert_int_equal(ioeng_new(-1, 8, 0, &e2), -EINVAL);
	assert_int_equal(ioeng_new(fd, 8, 0x80, &e2), -EINVAL);
	assert_null(e2);
	assert_int_equal(ioeng_submit(e, &r), -EINVAL); /* no callback */
	r.done = never_done;
	r.len = 0;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	r.len = (uint64_t)INT_MAX + 1;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	r.len = 16;
	r.buf = NULL;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	r.iov = iov;
	r.iovcnt = 2;
	r.len = 15; /* not the sum */
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	iov[1].iov_len = SIZE_MAX - 3; /* the sum wraps to 4 */
	r.len = 4;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	iov[1].iov_len = 8;
	r.iovcnt = 0;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	r.op = (enum ioeng_op)42;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	r.op = IOENG_PUNCH_HOLE;
	r.len = 0;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	r.op = IOENG_WRITE;
	r.iov = NULL;
	r.buf = buf;
	r.len = 16;
	r.off = UINT64_MAX - 8;
	assert_int_equal(ioeng_submit(e, &r), -EINVAL);
	/* a valid iov request, synchronously */
	memset(buf, 'x', sizeof(buf));
	r = (struct ioeng_req){.op = IOENG_WRITE, .iov = iov, .iovcnt = 2, .len = 16};
	assert_int_equal(ioeng_run(e, &r), 16);
	unit_release(e);
}

struct range {
	uint64_t off, len;
};

static bool overlaps(const struct range *a, const struct range *b)
{
	return a->off < b->off + b->len && b->off < a->off + a->len;
}

/* Rounds of concurrent writes to disjoint random ranges (single buffers and
 * iovecs, some FUA), then concurrent random reads, all checked against a
 * reference copy of the file. */
static void test_random_rw(void **state)
{
	enum { ROUNDS = 24, PER_ROUND = 24, READS = 256, MAX_LEN = 256 * 1024 };
	struct rng rng = rng_seeded("random_rw");
	int fd = tmp_file(FILE_SIZE, NULL);
	unsigned char *ref = xmalloc(FILE_SIZE);
	unsigned char *bufs = xmalloc((size_t)PER_ROUND * MAX_LEN);
	struct iovec *iovs = xmalloc(PER_ROUND * 3 * sizeof(*iovs));
	struct slot *slots = xmalloc(READS * sizeof(*slots));
	struct range *rg = xmalloc(READS * sizeof(*rg));
	struct tracker *t = tracker_new();
	struct ioeng *e = engine(state, fd, 16);
	struct ioeng_stats st;
	unsigned int round, i, j;

	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < PER_ROUND; i++) {
			unsigned char *b = bufs + (size_t)i * MAX_LEN;
			struct ioeng_req r = {.op = rng_below(&rng, 4) ? IOENG_WRITE
								       : IOENG_WRITE_FUA};

			do {
				rg[i].len = 1 + rng_below(&rng, MAX_LEN);
				if (rng_below(&rng, 2))
					rg[i].len = (rg[i].len + 511) & ~511ull;
				rg[i].off = rng_below(&rng, FILE_SIZE - rg[i].len + 1);
				for (j = 0; j < i && !overlaps(&rg[i], &rg[j]); j++)
					;
			} while (j < i);
			rng_fill(&rng, b, rg[i].len);
			r.off = rg[i].off;
			r.len = rg[i].len;
			if (rg[i].len >= 3 && rng_below(&rng, 2)) {
				struct iovec *v = iovs + 3 * i;
				size_t a = 1 + rng_below(&rng, rg[i].len - 2);
				size_t c = 1 + rng_below(&rng, rg[i].len - a - 1);

				v[0] = (struct iovec){b, a};
				v[1] = (struct iovec){b + a, c};
				v[2] = (struct iovec){b + a + c, rg[i].len - a - c};
				r.iov = v;
				r.iovcnt = 3;
			} else {
				r.buf = b;
			}
			slots[i].t = t;
			assert_int_equal(submit_req(e, &slots[i], &r), 0);
		}
		tracker_wait(t, 0);
		for (i = 0; i < PER_ROUND; i++) {
			assert_int_equal(slots[i].res, (int)rg[i].len);
			memcpy(ref + rg[i].off, bufs + (size_t)i * MAX_LEN, rg[i].len);
		}
	}
	/* Concurrent reads; each into its own buffer. */
	for (i = 0; i < READS; i++) {
		rg[i].len = 1 + rng_below(&rng, 64 * 1024);
		rg[i].off = rng_below(&rng, FILE_SIZE - rg[i].len + 1);
	}
	{
		unsigned char *rb = xmalloc((size_t)READS * 64 * 1024);

		for (i = 0; i < READS; i++) {
			slots[i].t = t;
			submit(e, &slots[i], IOENG_READ, rb + (size_t)i * 64 * 1024, rg[i].len,
			       rg[i].off);
		}
		tracker_wait(t, 0);
		for (i = 0; i < READS; i++) {
			assert_int_equal(slots[i].res, (int)rg[i].len);
			assert_memory_equal(rb + (size_t)i * 64 * 1024, ref + rg[i].off, rg[i].len);
		}
	}
	assert_file_equals(e, ref, 0, FILE_SIZE);
	ioeng_get_stats(e, &st);
	assert_int_equal(st.submitted, st.completed);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.errors, 0);
	unit_release(e);
	unit_release(ref);
}

/* Four threads submit 1000 requests each (two asynchronously, two with
 * ioeng_run), to their own 4 KiB blocks; then everything is read back. */
enum { SUBMITTERS = 4, PER_THREAD = 1000, BLK = 4096 };

struct submitter {
	struct ioeng *e;
	unsigned int id;
	bool sync;
	unsigned char *buf; /* PER_THREAD blocks */
	struct slot *slots;
	struct tracker *t;
	int rc; /* first failure */
};

static void *submitter_main(void *p)
{
	struct submitter *s = p;
	unsigned int i;

	for (i = 0; i < PER_THREAD; i++) {
		unsigned char *b = s->buf + (size_t)i * BLK;
		uint64_t off = ((uint64_t)i * SUBMITTERS + s->id) * BLK;
		struct ioeng_req r = {.op = IOENG_WRITE, .buf = b, .len = BLK, .off = off};
		int rc;

		memset(b, (int)(s->id * 31 + i), BLK);
		b[0] = (unsigned char)s->id;
		if (s->sync) {
			rc = ioeng_run(s->e, &r);
			rc = rc == BLK ? 0 : rc < 0 ? rc : -EIO;
		} else {
			s->slots[i].t = s->t;
			rc = submit_req(s->e, &s->slots[i], &r);
		}
		if (rc && !s->rc)
			s->rc = rc;
	}
	return NULL;
}

static void test_concurrent_submitters(void **state)
{
	int fd = tmp_file(FILE_SIZE, NULL);
	struct submitter *s = xmalloc(SUBMITTERS * sizeof(*s));
	unsigned char *rb = xmalloc(BLK);
	struct tracker *t = tracker_new();
	pthread_t th[SUBMITTERS];
	struct ioeng_stats st;
	struct ioeng *e;
	unsigned int i, k;

	for (k = 0; k < SUBMITTERS; k++) {
		s[k].buf = xmalloc((size_t)PER_THREAD * BLK);
		s[k].slots = xmalloc(PER_THREAD * sizeof(struct slot));
	}
	e = engine(state, fd, 32);
	for (k = 0; k < SUBMITTERS; k++) {
		s[k].e = e;
		s[k].id = k;
		s[k].sync = k >= 2;
		s[k].t = t;
		assert_int_equal(pthread_create(&th[k], NULL, submitter_main, &s[k]), 0);
	}
	for (k = 0; k < SUBMITTERS; k++)
		assert_int_equal(pthread_join(th[k], NULL), 0);
	tracker_wait(t, 0);
	for (k = 0; k < SUBMITTERS; k++) {
		assert_int_equal(s[k].rc, 0);
		for (i = 0; !s[k].sync && i < PER_THREAD; i++)
			assert_int_equal(s[k].slots[i].res, BLK);
	}
	for (k = 0; k < SUBMITTERS; k++) {
		for (i = 0; i < PER_THREAD; i++) {
			uint64_t off = ((uint64_t)i * SUBMITTERS + k) * BLK;

			assert_int_equal(run(e, IOENG_READ, rb, BLK, off), BLK);
			assert_memory_equal(rb, s[k].buf + (size_t)i * BLK, BLK);
		}
	}
	ioeng_get_stats(e, &st);
	assert_int_equal(st.submitted, 2 * SUBMITTERS * PER_THREAD);
	assert_int_equal(st.completed, st.submitted);
	assert_int_equal(st.in_flight, 0);
	unit_release(e);
}

/*
 * A FSYNC submitted once k writes have completed completes after them,
 * and leaves no dirty or writeback page in their range (checked with
 * cachestat where available). Writes still in flight at that moment go
 * to a separate range. WRITE_FUA leaves its own range clean.
 */
static void test_fsync_order(void **state)
{
	enum { EARLY = 64, LATE = 64, SZ = 64 * 1024 };
	struct rng rng = rng_seeded("fsync_order");
	int fd = tmp_file(FILE_SIZE, NULL);
	unsigned char *buf = xmalloc((size_t)(EARLY + LATE) * SZ);
	struct slot *slots = xmalloc((EARLY + LATE + 1) * sizeof(*slots));
	struct tracker *t = tracker_new();
	struct ioeng *e = engine(state, fd, 32);
	struct slot *flush = &slots[EARLY + LATE];
	uint64_t unclean = 0;
	unsigned int i;
	int cs;

	rng_fill(&rng, buf, (size_t)(EARLY + LATE) * SZ);
	for (i = 0; i < EARLY + LATE; i++)
		slots[i].t = t;
	flush->t = t;
	/* Is there cachestat, and does fdatasync clean pages here (not on tmpfs)? */
	assert_int_equal(pwrite(fd, buf, 4096, 60 * MIB), 4096);
	assert_int_equal(fdatasync(fd), 0);
	cs = unclean_pages(fd, 60 * MIB, 4096, &unclean);
	if (cs == 0 && unclean != 0)
		cs = -EOPNOTSUPP;
	for (i = 0; i < EARLY; i++)
		submit(e, &slots[i], IOENG_WRITE, buf + (size_t)i * SZ, SZ, (uint64_t)i * SZ);
	tracker_wait(t, 0);
	if (cs == 0) {
		assert_int_equal(unclean_pages(fd, 0, (uint64_t)EARLY * SZ, &unclean), 0);
		print_message("before FSYNC: %" PRIu64 " dirty/writeback pages\n", unclean);
	} else {
		print_message("cachestat: %s: durability not observed\n", strerror(-cs));
	}
	/* the late writes race with the flush */
	for (i = EARLY; i < EARLY + LATE; i++)
		submit(e, &slots[i], IOENG_WRITE, buf + (size_t)i * SZ, SZ,
		       32 * MIB + (uint64_t)i * SZ);
	submit(e, flush, IOENG_FSYNC, NULL, 0, 0);
	tracker_wait(t, 0);
	assert_int_equal(flush->res, 0);
	for (i = 0; i < EARLY; i++) {
		assert_int_equal(slots[i].res, SZ);
		assert_true(slots[i].order < flush->order);
	}
	for (i = EARLY; i < EARLY + LATE; i++)
		assert_int_equal(slots[i].res, SZ);
	if (cs == 0) {
		assert_int_equal(unclean_pages(fd, 0, (uint64_t)EARLY * SZ, &unclean), 0);
		assert_int_equal(unclean, 0);
	}
	/* FUA: clean on completion */
	assert_int_equal(run(e, IOENG_WRITE_FUA, buf, 3 * SZ, 16 * MIB), 3 * SZ);
	if (cs == 0) {
		assert_int_equal(unclean_pages(fd, 16 * MIB, 3 * SZ, &unclean), 0);
		assert_int_equal(unclean, 0);
	}
	assert_int_equal(run(e, IOENG_FSYNC, NULL, 0, 0), 0);
	unit_release(e);
}

static void test_punch_zero(void **state)
{
	struct rng rng = rng_seeded("punch_zero");
	const uint64_t base = 8 * MIB, len = 4 * MIB;
	int fd = tmp_file(FILE_SIZE, NULL);
	unsigned char *ref = xmalloc(FILE_SIZE);
	struct ioeng *e = engine(state, fd, 8);
	bool zero_range = true;
	struct stat st;
	int rc;

	rng_fill(&rng, ref + base, len);
	assert_int_equal(run(e, IOENG_WRITE, ref + base, len, base), (int)len);
	assert_int_equal(run(e, IOENG_FSYNC, NULL, 0, 0), 0);
	/* aligned punch: becomes a hole */
	assert_int_equal(run(e, IOENG_PUNCH_HOLE, NULL, MIB, base + MIB), 0);
	memset(ref + base + MIB, 0, MIB);
	assert_int_equal(lseek(fd, (off_t)(base + MIB), SEEK_HOLE), (off_t)(base + MIB));
	/* unaligned punch */
	assert_int_equal(run(e, IOENG_PUNCH_HOLE, NULL, 10000, base + 100), 0);
	memset(ref + base + 100, 0, 10000);
	/* unaligned zero range */
	rc = run(e, IOENG_ZERO_RANGE, NULL, 123457, base + 2 * MIB + 77);
	if (rc == -EOPNOTSUPP) {
		zero_range = false; /* the rest runs; the test reports a skip */
	} else {
		assert_int_equal(rc, 0);
		memset(ref + base + 2 * MIB + 77, 0, 123457);
	}
	assert_file_equals(e, ref, base - MIB, len + 2 * MIB);
	/* KEEP_SIZE, also at the end of the file */
	assert_int_equal(run(e, IOENG_PUNCH_HOLE, NULL, MIB, FILE_SIZE - MIB / 2), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, FILE_SIZE);
	unit_release(e);
	unit_release(ref);
	if (!zero_range) {
		print_message("SKIP: ZERO_RANGE is unsupported by this file system (the rest passed)\n");
		skip();
	}
}

static void test_errors_badfd(void **state)
{
	int ro;
	int fd = tmp_file(MIB, &ro);
	unsigned char *buf = xmalloc(8192);
	struct ioeng *e = engine(state, ro, 8);
	struct ioeng_stats st;

	(void)fd;
	assert_int_equal(run(e, IOENG_WRITE, buf, 8192, 0), -EBADF);
	assert_int_equal(run(e, IOENG_WRITE_FUA, buf, 8192, 0), -EBADF);
	assert_int_equal(run(e, IOENG_PUNCH_HOLE, NULL, 4096, 0), -EBADF);
	assert_int_equal(run(e, IOENG_READ, buf, 8192, 0), 8192);
	/* past the end: -ENODATA, also when the request straddles it */
	assert_int_equal(run(e, IOENG_READ, buf, 512, MIB), -ENODATA);
	assert_int_equal(run(e, IOENG_READ, buf, 8192, MIB - 4096), -ENODATA);
	ioeng_get_stats(e, &st);
	assert_int_equal(st.errors, 5);
	assert_int_equal(st.in_flight, 0);
	unit_release(e);
}

static void test_errors_fault(void **state)
{
	int fd = tmp_file(MIB, NULL);
	unsigned char *buf = xmalloc(65536), *rb = xmalloc(65536);
	struct fault_ctx *f = fault_new();
	struct ioeng_faults hook = {fault_on_io, f};
	struct ioeng *e = engine(state, fd, 8);
	struct ioeng_stats st;

	memset(buf, 0xaa, 65536);
	ioeng_set_faults(e, &hook);
	/* I/O error without I/O */
	f->mask = (1u << IOENG_WRITE) | (1u << IOENG_FSYNC) | (1u << IOENG_ZERO_RANGE);
	f->err = -EIO;
	assert_int_equal(run(e, IOENG_WRITE, buf, 4096, 0), -EIO);
	assert_int_equal(run(e, IOENG_FSYNC, NULL, 0, 0), -EIO);
	assert_int_equal(run(e, IOENG_ZERO_RANGE, NULL, 4096, 0), -EIO);
	assert_int_equal(run(e, IOENG_READ, rb, 4096, 0), 4096);
	assert_true(rb[0] == 0 && rb[4095] == 0);
	/* torn write: 1000 bytes land, then -EIO */
	f->mask = 1u << IOENG_WRITE;
	f->len = 1000;
	assert_int_equal(run(e, IOENG_WRITE, buf, 4096, 0), -EIO);
	ioeng_set_faults(e, NULL);
	assert_int_equal(run(e, IOENG_READ, rb, 4096, 0), 4096);
	assert_true(rb[0] == 0xaa && rb[999] == 0xaa && rb[1000] == 0 && rb[4095] == 0);
	ioeng_get_stats(e, &st);
	assert_int_equal(st.errors, 4);
	unit_release(e);
}

/* Short transfers of every size are continued up to the full length, over
 * the boundaries of several buffers. */
static void test_short(void **state)
{
	static const size_t chunks[] = {1, 511, 512, 1000, 4096, 20000};
	struct rng rng = rng_seeded("short");
	int fd = tmp_file(MIB, NULL);
	unsigned char *buf = xmalloc(65536), *rb = xmalloc(65536);
	struct fault_ctx *f = fault_new();
	struct ioeng_faults hook = {fault_on_io, f};
	struct ioeng *e = engine(state, fd, 8);
	struct ioeng_stats st0, st;
	size_t i;

	f->mask = OPS_RW;
	ioeng_set_faults(e, &hook);
	for (i = 0; i < UNIT_ARRAY_SIZE(chunks); i++) {
		const size_t len = 30000, cuts[3] = {7, 20000, len - 20007};
		struct iovec wv[3], rv[3];
		size_t k, at = 0;
		unsigned int calls;
		struct ioeng_req r = {.op = chunks[i] >= 4096 ? IOENG_WRITE_FUA : IOENG_WRITE,
				      .iov = wv,
				      .iovcnt = 3,
				      .len = len,
				      .off = 4096 * i + i};

		for (k = 0; k < 3; k++) {
			wv[k] = (struct iovec){buf + at, cuts[k]};
			rv[k] = (struct iovec){rb + at, cuts[k]};
			at += cuts[k];
		}
		rng_fill(&rng, buf, len);
		memset(rb, 0, len);
		f->len = chunks[i];
		ioeng_get_stats(e, &st0);
		atomic_store(&f->calls, 0);
		assert_int_equal(ioeng_run(e, &r), (int)len);
		calls = atomic_load(&f->calls);
		assert_int_equal(calls, (len + chunks[i] - 1) / chunks[i]);
		ioeng_get_stats(e, &st);
		assert_int_equal(st.resubmits - st0.resubmits, calls - 1);
		r.op = IOENG_READ;
		r.iov = rv;
		assert_int_equal(ioeng_run(e, &r), (int)len);
		assert_memory_equal(rb, buf, len);
	}
	ioeng_set_faults(e, NULL);
	ioeng_get_stats(e, &st);
	assert_int_equal(st.errors, 0);
	unit_release(e);
}

/* ioeng_free() with requests queued and in flight runs every callback,
 * including those of requests submitted by callbacks while it waits. */
struct chain {
	struct ioeng *e;
	struct slot *slots; /* N followers */
	unsigned char *buf;
	atomic_uint next, ran;
	int submit_rc;
};

enum { FREE_N = 200, FREE_FOLLOW = 20 };

static void chain_done(void *arg, int res)
{
	struct chain *c = arg;
	unsigned int k = atomic_fetch_add(&c->next, 1);

	atomic_fetch_add(&c->ran, 1);
	if (k < FREE_FOLLOW) {
		struct ioeng_req r = {.op = IOENG_WRITE,
				      .buf = c->buf,
				      .len = 4096,
				      .off = 4096 * (uint64_t)k,
				      .done = slot_done,
				      .arg = &c->slots[k]};

		pthread_mutex_lock(&c->slots[k].t->m);
		c->slots[k].t->pending++;
		pthread_mutex_unlock(&c->slots[k].t->m);
		if (ioeng_submit(c->e, &r) != 0)
			c->submit_rc = -1;
	}
}

static void test_free_in_flight(void **state)
{
	int fd = tmp_file(FILE_SIZE, NULL);
	unsigned char *buf = xmalloc(FREE_N * 4096); /* a block per request */
	struct slot *slots = xmalloc(FREE_FOLLOW * sizeof(*slots));
	struct chain *c = xmalloc(sizeof(*c));
	struct tracker *t = tracker_new();
	struct fault_ctx *f = fault_new();
	struct ioeng_faults hook = {fault_on_io, f};
	struct ioeng *e = engine(state, fd, 8);
	unsigned int i;

	f->sleep_us = 300;
	ioeng_set_faults(e, &hook);
	c->e = e;
	c->slots = slots;
	c->buf = buf;
	for (i = 0; i < FREE_FOLLOW; i++)
		slots[i].t = t;
	for (i = 0; i < FREE_N; i++) {
		static const enum ioeng_op ops[] = {IOENG_WRITE, IOENG_READ, IOENG_FSYNC,
						    IOENG_WRITE_FUA, IOENG_ZERO_RANGE};
		struct ioeng_req r = {.op = ops[i % 5],
				      .buf = buf + 4096 * i,
				      .len = 4096,
				      .off = 65536 * (uint64_t)i,
				      .done = chain_done,
				      .arg = c};

		assert_int_equal(ioeng_submit(e, &r), 0);
	}
	assert_true(atomic_load(&c->ran) < FREE_N);
	unit_release(e);
	assert_int_equal(atomic_load(&c->ran), FREE_N);
	assert_int_equal(c->submit_rc, 0);
	pthread_mutex_lock(&t->m);
	assert_int_equal(t->pending, 0);
	assert_int_equal(t->done, FREE_FOLLOW);
	pthread_mutex_unlock(&t->m);
	for (i = 0; i < FREE_FOLLOW; i++)
		assert_int_equal(slots[i].res, 4096);
}

/* in_flight counts requests held up inside the engine. */
static void test_stats_in_flight(void **state)
{
	enum { N = 40 };
	int fd = tmp_file(MIB, NULL);
	unsigned char *buf = xmalloc(N * 4096);
	struct slot *slots = xmalloc(N * sizeof(*slots));
	struct tracker *t = tracker_new();
	struct fault_ctx *f = fault_new();
	struct ioeng_faults hook = {fault_on_io, f};
	struct ioeng *e = engine(state, fd, 8);
	struct ioeng_stats st;
	unsigned int i;

	f->gate = true;
	ioeng_set_faults(e, &hook);
	for (i = 0; i < N; i++) {
		slots[i].t = t;
		submit(e, &slots[i], i % 2 ? IOENG_READ : IOENG_WRITE, buf + 4096 * i, 4096,
		       4096 * i);
	}
	ioeng_get_stats(e, &st);
	assert_int_equal(st.submitted, N);
	assert_int_equal(st.in_flight, N);
	assert_int_equal(st.completed, 0);
	fault_open_gate(f);
	tracker_wait(t, 0);
	ioeng_get_stats(e, &st);
	assert_int_equal(st.completed, N);
	assert_int_equal(st.in_flight, 0);
	ioeng_set_faults(e, NULL);
	unit_release(e);
}

/* ioeng_run() from a callback would wait for its own thread. */
struct deadlock {
	struct ioeng *e;
	struct tracker *t;
	int rc;
};

static void deadlock_done(void *arg, int res)
{
	struct deadlock *d = arg;
	char b[8];

	d->rc = run(d->e, IOENG_READ, b, sizeof(b), 0);
	pthread_mutex_lock(&d->t->m);
	d->t->pending--;
	pthread_cond_broadcast(&d->t->c);
	pthread_mutex_unlock(&d->t->m);
}

static void test_run_from_callback(void **state)
{
	int fd = tmp_file(MIB, NULL);
	struct deadlock *d = xmalloc(sizeof(*d));
	struct tracker *t = tracker_new();
	struct ioeng *e = engine(state, fd, 8);
	struct ioeng_req r = {.op = IOENG_FSYNC, .done = deadlock_done, .arg = d};

	d->e = e;
	d->t = t;
	t->pending = 1;
	assert_int_equal(ioeng_submit(e, &r), 0);
	tracker_wait(t, 0);
	assert_int_equal(d->rc, -EDEADLK);
	unit_release(e);
}

/* Where io_uring_setup fails (seccomp here, as in some containers, or
 * kernel.io_uring_disabled), the engine falls back to threads and says why.
 * Runs in a child: the filter cannot be removed. */
struct fallback {
	int fd, err;
};

static void fallback_child(void *p)
{
	const struct fallback *a = p;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned int)a->err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = UNIT_ARRAY_SIZE(f), .filter = f};
	char buf[4096], rb[4096];
	struct ioeng *e;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		_exit(2);
	if (ioeng_new(a->fd, 8, 0, &e) < 0)
		_exit(3);
	if (strcmp(ioeng_kind(e), "threads") != 0 || ioeng_uring_error(e) != -a->err)
		_exit(4);
	memset(buf, 7, sizeof(buf));
	if (run(e, IOENG_WRITE, buf, sizeof(buf), 0) != sizeof(buf) ||
	    run(e, IOENG_READ, rb, sizeof(rb), 0) != sizeof(rb) || memcmp(buf, rb, sizeof(rb)))
		_exit(5);
	ioeng_free(e);
}

static void test_fallback(void **state)
{
	struct fallback a = {.fd = tmp_file(MIB, NULL), .err = EPERM};

	assert_child_ok(unit_in_child(fallback_child, &a));
	a.err = ENOSYS;
	assert_child_ok(unit_in_child(fallback_child, &a));
}

/* ---------------------------------------------------------------- throughput */

/* LANES chains of 4 KiB random reads and writes, each submitting its next
 * request from its callback, until OPS have completed. */
enum { LANES = 32, OPS = 20000, TP_SPAN = 16 * MIB };

struct lane {
	struct tp *tp;
	struct rng rng;
	unsigned char buf[4096];
};

struct tp {
	struct ioeng *e;
	atomic_uint issued;
	atomic_int errors;
	struct tracker *t;
	struct lane lanes[LANES];
};

static void lane_next(struct lane *l);

static void lane_done(void *arg, int res)
{
	struct lane *l = arg;

	if (res != 4096)
		atomic_fetch_add(&l->tp->errors, 1);
	lane_next(l);
}

static void lane_next(struct lane *l)
{
	struct tp *tp = l->tp;
	struct ioeng_req r = {.buf = l->buf, .len = 4096, .done = lane_done, .arg = l};

	if (atomic_fetch_add(&tp->issued, 1) >= OPS) {
		pthread_mutex_lock(&tp->t->m);
		tp->t->pending--;
		pthread_cond_broadcast(&tp->t->c);
		pthread_mutex_unlock(&tp->t->m);
		return;
	}
	r.op = rng_below(&l->rng, 2) ? IOENG_READ : IOENG_WRITE;
	r.off = 4096 * rng_below(&l->rng, TP_SPAN / 4096);
	if (ioeng_submit(tp->e, &r) != 0) {
		atomic_fetch_add(&tp->errors, 1);
		lane_done(l, 4096);
	}
}

static double tp_run(int fd, unsigned int flags, const char **kind)
{
	struct tp *tp = xmalloc(sizeof(*tp));
	struct timespec a, b;
	struct ioeng *e;
	unsigned int i;

	tp->t = tracker_new();
	assert_int_equal(ioeng_new(fd, LANES, flags, &e), 0);
	unit_defer(free_engine, e);
	*kind = ioeng_kind(e);
	tp->e = e;
	tp->t->pending = LANES;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < LANES; i++) {
		tp->lanes[i].tp = tp;
		tp->lanes[i].rng.s = i + 1;
		lane_next(&tp->lanes[i]);
	}
	tracker_wait(tp->t, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	unit_release(e);
	assert_int_equal(atomic_load(&tp->errors), 0);
	unit_release(tp->t);
	unit_release(tp);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static void test_throughput(void **state)
{
	int fd = tmp_file(TP_SPAN, NULL);
	unsigned char *fill = xmalloc(TP_SPAN);
	const char *kind;
	double tu, tt;

	assert_int_equal(pwrite(fd, fill, TP_SPAN, 0), (ssize_t)TP_SPAN);
	unit_release(fill);
	tt = tp_run(fd, IOENG_FORCE_THREADS, &kind);
	tu = tp_run(fd, 0, &kind);
	if (strcmp(kind, "io_uring") != 0)
		skip();
	print_message("%d x 4 KiB at depth %d: io_uring %.0f ops/s, threads %.0f ops/s\n", OPS,
		      LANES, OPS / tu, OPS / tt);
	/* a sanity check, not a benchmark: generous for loaded CI machines */
	assert_true(tu < 5 * tt + 0.5);
}

/* ---------------------------------------------------------------- main */

/* Each test twice, named after its back end. */
#define BOTH(f)                                                                              \
	{#f "/io_uring", f, NULL, NULL, (void *)&backend_uring},                              \
	{#f "/threads", f, NULL, NULL, (void *)&backend_threads}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_kind),
		BOTH(test_invalid),
		BOTH(test_random_rw),
		BOTH(test_concurrent_submitters),
		BOTH(test_fsync_order),
		BOTH(test_punch_zero),
		BOTH(test_errors_badfd),
		BOTH(test_errors_fault),
		BOTH(test_short),
		BOTH(test_free_in_flight),
		BOTH(test_stats_in_flight),
		BOTH(test_run_from_callback),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_throughput),
	};

	return cmocka_run_group_tests_name("ioeng", tests, NULL, unit_teardown);
}
