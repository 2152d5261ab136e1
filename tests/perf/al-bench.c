/*
 * al-bench: what the activity log costs the Primary's write path
 * (doc/perf-al.md).
 *
 *   al-bench run DATA META WORKLOAD AL-EXTENTS SECONDS SEED [OPTS]
 *   al-bench cpu SCENARIO AL-EXTENTS WRITES
 *   al-bench flush DATA
 *
 * run: 4 KiB O_DIRECT writes to DATA for SECONDS, each one behind the
 * activity log as DESIGN.md section 4 asks: al_begin_io, al_commit if that
 * left changes pending (one transaction block per 64 changes, written to
 * the ring by md_write_al_block: pwrite + fdatasync), the data write,
 * al_complete_io. META is "internal" (v08 metadata at the end of DATA), the
 * path of external flexible metadata, or "none": the anchor, the same data
 * writes with no activity log. Both kinds were made by tandemadm create-md.
 *
 * WORKLOAD is seq or rand (one write at a time), or seq-bN / rand-bN:
 * batches of N concurrent writes (io_uring), all begun before one
 * al_commit covers the batch. Every workload writes the same range: the
 * data area of internal metadata, in whole 4 MiB extents. seq starts at
 * block 0 with an empty log. rand first runs the same random stream
 * (another seed) through the log with I/O switched off, so the hot set is
 * in its steady state when the clock starts. A write's latency runs from
 * its arrival (for a batch: the batch's) to its completion.
 *
 * OPTS (comma-separated, for side experiments): "buffered" writes the data
 * through the page cache instead of O_DIRECT; "al-dsync" writes each
 * transaction block with O_DIRECT and RWF_DSYNC on a descriptor of its own
 * instead of md_write_al_block.
 *
 * Prints one line of key=value pairs.
 *
 * cpu: the bookkeeping alone for callgrind (run it with
 * --collect-atstart=no): write_block is a no-op, the log is full, and only
 * the measured loop is collected. SCENARIO: hot (every extent hot: begin +
 * complete), cold (every write brings in a new extent and evicts one:
 * begin + commit + complete), cold-bN (cold, N writes per commit).
 *
 * flush: what fdatasync costs on DATA after 0 KiB to 4 MiB of O_DIRECT
 * writes (the data an AL transaction's flush finds in the disk's cache).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include "al.h"
#include "md.h"

#define BENCH_BLOCK 4096u
#define BENCH_BLOCK_SECT 8u
#define BENCH_BATCH_MAX 64u
#define BENCH_WARM_PASSES 16u /* warm-up writes per extent of the device */

struct bench {
	int fd;		  /* DATA, O_DIRECT */
	uint64_t nblocks; /* 4 KiB blocks in the range written */
	struct md *md;	  /* NULL: the anchor */
	struct al *al;
	bool al_io; /* false while the hot set warms up */
	bool random;
	int al_fd;	    /* al-dsync: the metadata device, O_DIRECT */
	void *al_buf;	    /* al-dsync: an aligned copy of the block */
	unsigned int batch; /* 1: pwrite; more: io_uring */
	struct io_uring ring;
	bool ring_ok;
	void *buf;
	uint64_t rng;
	uint64_t seq_next;
	uint32_t *lat_ns; /* one per write */
	size_t n_lat;
	size_t cap_lat;
	uint64_t tr_ns; /* time in write_block */
	uint64_t tr_n;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int bench_write_block(void *ctx, uint32_t block, const void *buf)
{
	struct bench *b = ctx;
	uint64_t t0;
	int rc;

	if (!b->al_io)
		return 0;
	t0 = now_ns();
	if (b->al_fd >= 0) {
		struct iovec iov = {.iov_base = b->al_buf, .iov_len = AL_BLOCK_BYTES};
		ssize_t n;

		memcpy(b->al_buf, buf, AL_BLOCK_BYTES);
		n = pwritev2(b->al_fd, &iov, 1,
			     (off_t)(md_al_offset(b->md) + (uint64_t)block * AL_BLOCK_BYTES),
			     RWF_DSYNC);
		rc = n == AL_BLOCK_BYTES ? 0 : n < 0 ? -errno : -EIO;
	} else {
		rc = md_write_al_block(b->md, block, buf);
	}
	b->tr_ns += now_ns() - t0;
	b->tr_n++;
	return rc;
}

static const struct al_ops bench_ops = {.write_block = bench_write_block};

static uint64_t bench_next(struct bench *b)
{
	uint64_t blk;

	if (b->random) {
		blk = rnd(&b->rng) % b->nblocks;
	} else {
		blk = b->seq_next;
		b->seq_next = (blk + 1) % b->nblocks;
	}
	return blk * BENCH_BLOCK_SECT;
}

static int bench_lat(struct bench *b, uint64_t ns)
{
	if (b->n_lat == b->cap_lat) {
		size_t cap = b->cap_lat ? 2 * b->cap_lat : 65536;
		uint32_t *p = realloc(b->lat_ns, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->lat_ns = p;
		b->cap_lat = cap;
	}
	b->lat_ns[b->n_lat++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	return 0;
}

/* al_begin_io for one write, and al_commit when `commit` says so. */
static int bench_al_begin(struct bench *b, uint64_t sector, bool commit)
{
	int rc;

	if (!b->al)
		return 0;
	rc = al_begin_io(b->al, sector, BENCH_BLOCK_SECT);
	if (rc >= 0 && commit && al_pending(b->al))
		rc = al_commit(b->al);
	return rc < 0 ? rc : 0;
}

static int bench_write_qd1(struct bench *b)
{
	uint64_t sector = bench_next(b), t0 = now_ns();
	ssize_t n;
	int rc;

	rc = bench_al_begin(b, sector, true);
	if (rc < 0)
		return rc;
	n = pwrite(b->fd, b->buf, BENCH_BLOCK, (off_t)(sector * 512));
	if (n != BENCH_BLOCK)
		return n < 0 ? -errno : -EIO;
	if (b->al)
		al_complete_io(b->al, sector, BENCH_BLOCK_SECT);
	return bench_lat(b, now_ns() - t0);
}

static int bench_write_batch(struct bench *b)
{
	uint64_t sect[BENCH_BATCH_MAX], t0 = now_ns();
	struct io_uring_cqe *cqe;
	unsigned int i, done;
	int rc, res;

	for (i = 0; i < b->batch; i++) {
		sect[i] = bench_next(b);
		rc = bench_al_begin(b, sect[i], false);
		if (rc < 0)
			return rc;
	}
	if (b->al && al_pending(b->al) && (rc = al_commit(b->al)) < 0)
		return rc;
	for (i = 0; i < b->batch; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);

		io_uring_prep_write(sqe, b->fd, b->buf, BENCH_BLOCK, sect[i] * 512);
		io_uring_sqe_set_data64(sqe, i);
	}
	rc = io_uring_submit(&b->ring);
	if (rc != (int)b->batch)
		return rc < 0 ? rc : -EIO;
	for (done = 0; done < b->batch; done++) {
		rc = io_uring_wait_cqe(&b->ring, &cqe);
		if (rc < 0)
			return rc;
		res = cqe->res;
		i = (unsigned int)io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(&b->ring, cqe);
		if (res != BENCH_BLOCK)
			return res < 0 ? res : -EIO;
		if (b->al)
			al_complete_io(b->al, sect[i], BENCH_BLOCK_SECT);
		rc = bench_lat(b, now_ns() - t0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The hot set of a random workload in its steady state, without I/O. */
static int bench_warm(struct bench *b, uint64_t seed)
{
	uint64_t i, n = BENCH_WARM_PASSES * (b->nblocks / 1024), keep = b->rng, sector;
	int rc;

	b->rng = seed;
	for (i = 0; i < n; i++) {
		sector = bench_next(b);
		rc = bench_al_begin(b, sector, true);
		if (rc < 0)
			return rc;
		al_complete_io(b->al, sector, BENCH_BLOCK_SECT);
	}
	b->rng = keep;
	return 0;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	return a < c ? -1 : a > c;
}

static void bench_print(struct bench *b, const char *wl, const char *meta, uint32_t ext,
			double secs, const struct al_stats *d, const char *opts)
{
	double sum = 0;
	size_t i, n = b->n_lat;

	for (i = 0; i < n; i++)
		sum += b->lat_ns[i];
	qsort(b->lat_ns, n, sizeof(*b->lat_ns), cmp_u32);
	printf(
	    "al-bench workload=%s md=%s al=%" PRIu32 " writes=%zu secs=%.3f wps=%.0f "
	    "mean_us=%.1f p50_us=%.1f p99_us=%.1f tr=%" PRIu64 " tr_per_write=%.5f "
	    "tr_mean_us=%.1f hits=%" PRIu64 " misses=%" PRIu64 " evictions=%" PRIu64 " opts=%s\n",
	    wl, meta, ext, n, secs, n / secs, n ? sum / n / 1e3 : 0, n ? b->lat_ns[n / 2] / 1e3 : 0,
	    n ? b->lat_ns[n * 99 / 100] / 1e3 : 0, d->transactions,
	    n ? (double)d->transactions / n : 0, b->tr_n ? b->tr_ns / 1e3 / b->tr_n : 0, d->hits,
	    d->misses, d->evictions, *opts ? opts : "-");
}

/* The range every workload writes: the data area of internal metadata on
 * DATA, in whole extents. */
static int bench_range(const char *data, uint64_t *nblocks)
{
	struct md_layout l;
	struct stat st;
	int rc;

	if (stat(data, &st) < 0)
		return -errno;
	rc = md_layout_compute(MD_INTERNAL, -1, (uint64_t)st.st_size / 512,
			       (uint64_t)st.st_size / 512, 0, 0, &l);
	if (rc < 0)
		return rc;
	*nblocks = (l.max_data_sect & ~(uint64_t)(MD_AL_EXTENT_SECT - 1)) / BENCH_BLOCK_SECT;
	return *nblocks ? 0 : -ENOSPC;
}

static int bench_open_md(struct bench *b, const char *data, const char *meta, uint32_t ext,
			 bool al_dsync)
{
	struct md_open_opts o = {.data_path = data, .kind = MD_INTERNAL, .writable = true};
	const struct md_layout *l;
	struct md_sb sb;
	char err[256];
	int rc;

	if (strcmp(meta, "internal") != 0) {
		o.kind = MD_FLEXIBLE;
		o.md_path = meta;
	}
	rc = md_open(&o, &b->md, err, sizeof(err));
	if (rc == 0)
		rc = md_load_sb(b->md, &sb, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "al-bench: %s: %s\n", meta, err);
		return rc;
	}
	l = md_layout(b->md);
	if (l->max_data_sect < b->nblocks * BENCH_BLOCK_SECT) {
		fprintf(stderr, "al-bench: %s: metadata covers too little of %s\n", meta, data);
		return -ENOSPC;
	}
	if (al_dsync) {
		b->al_fd = open(o.md_path ? o.md_path : data, O_RDWR | O_DIRECT | O_CLOEXEC);
		if (b->al_fd < 0)
			return -errno;
		if (posix_memalign(&b->al_buf, AL_BLOCK_BYTES, AL_BLOCK_BYTES) != 0)
			return -ENOMEM;
	}
	return al_new(ext, l->al_stripes, l->al_stripe_size_4k, &bench_ops, b, &b->al);
}

static int bench_setup(struct bench *b, const char *data, const char *meta, const char *wl,
		       uint32_t ext, const char *opts)
{
	bool buffered = strstr(opts, "buffered") != NULL;
	char *end;
	int rc;

	b->random = strncmp(wl, "rand", 4) == 0;
	if (!b->random && strncmp(wl, "seq", 3) != 0)
		return -EINVAL;
	end = strstr(wl, "-b");
	b->batch = end ? (unsigned int)strtoul(end + 2, NULL, 10) : 1;
	if (b->batch < 1 || b->batch > BENCH_BATCH_MAX)
		return -EINVAL;
	rc = bench_range(data, &b->nblocks);
	if (rc < 0)
		return rc;
	if (strcmp(meta, "none") != 0 &&
	    (rc = bench_open_md(b, data, meta, ext, strstr(opts, "al-dsync") != NULL)) < 0)
		return rc;
	b->fd = open(data, O_RDWR | O_CLOEXEC | (buffered ? 0 : O_DIRECT));
	if (b->fd < 0)
		return -errno;
	if (posix_memalign(&b->buf, BENCH_BLOCK, BENCH_BLOCK) != 0)
		return -ENOMEM;
	/* Not zeros: no layer below may take a shortcut. */
	for (size_t i = 0; i < BENCH_BLOCK; i++)
		((unsigned char *)b->buf)[i] = (unsigned char)(i * 131 + 7);
	if (b->batch > 1) {
		rc = io_uring_queue_init(b->batch, &b->ring, 0);
		if (rc < 0)
			return rc;
		b->ring_ok = true;
	}
	return 0;
}

static void bench_teardown(struct bench *b)
{
	if (b->ring_ok)
		io_uring_queue_exit(&b->ring);
	if (b->fd >= 0)
		close(b->fd);
	if (b->al_fd >= 0)
		close(b->al_fd);
	free(b->al_buf);
	al_free(b->al);
	md_close(b->md);
	free(b->buf);
	free(b->lat_ns);
}

static int cmd_run(char **argv, const char *opts)
{
	const char *data = argv[0], *meta = argv[1], *wl = argv[2];
	uint32_t ext = (uint32_t)strtoul(argv[3], NULL, 10);
	double secs = strtod(argv[4], NULL);
	uint64_t seed = strtoull(argv[5], NULL, 0) | 1, t0, limit;
	struct al_stats s0 = {0}, s1 = {0};
	struct bench b = {.fd = -1, .al_fd = -1, .al_io = true, .rng = seed};
	int rc;

	rc = bench_setup(&b, data, meta, wl, ext, opts);
	if (rc == 0 && b.al && b.random) {
		b.al_io = false;
		rc = bench_warm(&b, seed * 0x9e3779b97f4a7c15ULL | 1);
		b.al_io = true;
		al_get_stats(b.al, &s0);
	}
	t0 = now_ns();
	limit = t0 + (uint64_t)(secs * 1e9);
	while (rc == 0 && now_ns() < limit)
		rc = b.batch > 1 ? bench_write_batch(&b) : bench_write_qd1(&b);
	secs = (now_ns() - t0) / 1e9;
	if (rc < 0) {
		fprintf(stderr, "al-bench: %s %s %s: %s\n", wl, meta, argv[3], strerror(-rc));
		bench_teardown(&b);
		return 1;
	}
	if (b.al) {
		al_get_stats(b.al, &s1);
		s1.transactions -= s0.transactions;
		s1.hits -= s0.hits;
		s1.misses -= s0.misses;
		s1.evictions -= s0.evictions;
		ext = al_nr_extents(b.al);
	}
	if (!b.md)
		meta = "none";
	else if (strcmp(meta, "internal") != 0)
		meta = "external";
	bench_print(&b, wl, meta, b.al ? ext : 0, secs, &s1, opts);
	bench_teardown(&b);
	return 0;
}

/* ---------------------------------------------------------------- cpu */

static int cpu_write_block(void *ctx, uint32_t block, const void *buf)
{
	return 0;
}

static const struct al_ops cpu_ops = {.write_block = cpu_write_block};

/* The only code callgrind collects. Returns the number of failed calls. */
static __attribute__((noinline)) unsigned int cpu_loop(struct al *al, const uint64_t *sect,
						       uint32_t n, unsigned int batch)
{
	unsigned int bad = 0;
	uint32_t i, j, e;

	CALLGRIND_TOGGLE_COLLECT;
	for (i = 0; i < n; i = e) {
		e = i + batch < n ? i + batch : n;
		for (j = i; j < e; j++)
			bad += al_begin_io(al, sect[j], BENCH_BLOCK_SECT) < 0;
		if (al_pending(al))
			bad += al_commit(al) < 0;
		for (j = i; j < e; j++)
			al_complete_io(al, sect[j], BENCH_BLOCK_SECT);
	}
	CALLGRIND_TOGGLE_COLLECT;
	return bad;
}

/* A full log: extents 0..nr-1 committed and idle. */
static int cpu_fill(struct al *al, uint32_t nr)
{
	uint32_t e;
	int rc;

	for (e = 0; e < nr; e++)
		if ((rc = al_begin_io(al, (uint64_t)e << AL_EXTENT_SHIFT_SECT, 8)) < 0)
			return rc;
	if ((rc = al_commit(al)) < 0)
		return rc;
	for (e = 0; e < nr; e++)
		al_complete_io(al, (uint64_t)e << AL_EXTENT_SHIFT_SECT, 8);
	return 0;
}

static int cmd_cpu(char **argv)
{
	const char *sc = argv[0];
	uint32_t ext = (uint32_t)strtoul(argv[1], NULL, 10),
		 n = (uint32_t)strtoul(argv[2], NULL, 10);
	unsigned int batch = 1, bad;
	uint64_t *sect, rng = 0x2545f4914f6cdd1dULL, t0, t1, e;
	bool hot = strcmp(sc, "hot") == 0;
	struct al_stats s0, s1;
	struct al *al;
	uint32_t i, nr;

	if (!hot && strncmp(sc, "cold", 4) != 0)
		return 2;
	if (strncmp(sc, "cold-b", 6) == 0)
		batch = (unsigned int)strtoul(sc + 6, NULL, 10);
	if (batch < 1 || batch > BENCH_BATCH_MAX || !n)
		return 2;
	sect = malloc((size_t)n * sizeof(*sect));
	if (!sect || al_new(ext, 0, 0, &cpu_ops, NULL, &al) < 0 ||
	    cpu_fill(al, al_nr_extents(al)) < 0)
		return 1;
	nr = al_nr_extents(al);
	for (i = 0; i < n; i++) {
		/* hot: anywhere in the hot set; cold: a new extent each time */
		e = hot ? rnd(&rng) % nr : (uint64_t)nr + i;
		sect[i] = (e << AL_EXTENT_SHIFT_SECT) + (rnd(&rng) % 1024) * BENCH_BLOCK_SECT;
	}
	al_get_stats(al, &s0);
	t0 = now_ns();
	bad = cpu_loop(al, sect, n, batch);
	t1 = now_ns();
	al_get_stats(al, &s1);
	printf("al-bench-cpu scenario=%s al=%" PRIu32 " writes=%" PRIu32 " hits=%" PRIu64
	       " misses=%" PRIu64 " transactions=%" PRIu64 " failed=%u ns_per_write=%.1f\n",
	       sc, nr, n, s1.hits - s0.hits, s1.misses - s0.misses,
	       s1.transactions - s0.transactions, bad, (double)(t1 - t0) / n);
	al_free(al);
	free(sect);
	return bad ? 1 : 0;
}

/* ---------------------------------------------------------------- flush */

#define FLUSH_REPS 15

static int cmd_flush(const char *data)
{
	static const uint32_t kib[] = {0, 4, 128, 1024, 4096};
	enum { NK = sizeof(kib) / sizeof(kib[0]) };
	uint32_t us[NK][FLUSH_REPS], r, k, w;
	uint64_t nblocks, off = 0, t0;
	struct bench b = {.fd = -1, .al_fd = -1};
	int rc;

	rc = bench_setup(&b, data, "none", "seq", 0, "");
	if (rc < 0) {
		fprintf(stderr, "al-bench: flush %s: %s\n", data, strerror(-rc));
		return 1;
	}
	nblocks = b.nblocks < 262144 ? b.nblocks : 262144; /* the first GiB */
	/* The sizes take turns, so that drift hits all of them alike. */
	for (r = 0; r < FLUSH_REPS; r++) {
		for (k = 0; k < NK; k++) {
			for (w = 0; w < kib[k] / 4; w++) {
				if (pwrite(b.fd, b.buf, BENCH_BLOCK, (off_t)(off * BENCH_BLOCK)) !=
				    BENCH_BLOCK)
					return 1;
				off = (off + 1) % nblocks;
			}
			t0 = now_ns();
			if (fdatasync(b.fd) < 0)
				return 1;
			us[k][r] = (uint32_t)((now_ns() - t0) / 1000);
		}
	}
	for (k = 0; k < NK; k++) {
		qsort(us[k], FLUSH_REPS, sizeof(us[k][0]), cmp_u32);
		printf("flush kib=%" PRIu32 " reps=%d median_us=%" PRIu32 " min_us=%" PRIu32
		       " max_us=%" PRIu32 "\n",
		       kib[k], FLUSH_REPS, us[k][FLUSH_REPS / 2], us[k][0], us[k][FLUSH_REPS - 1]);
	}
	bench_teardown(&b);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 8 || argc == 9) && strcmp(argv[1], "run") == 0)
		return cmd_run(argv + 2, argc == 9 ? argv[8] : "");
	if (argc == 5 && strcmp(argv[1], "cpu") == 0)
		return cmd_cpu(argv + 2);
	if (argc == 3 && strcmp(argv[1], "flush") == 0)
		return cmd_flush(argv[2]);
	fprintf(stderr,
		"usage: al-bench run DATA internal|META|none WORKLOAD AL-EXTENTS SECONDS SEED "
		"[buffered,al-dsync]\n"
		"       al-bench cpu hot|cold|cold-bN AL-EXTENTS WRITES\n"
		"       al-bench flush DATA\n");
	return 2;
}
