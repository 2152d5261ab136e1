/*
 * ioeng: asynchronous block I/O on one backing file descriptor.
 *
 * io_uring where the kernel allows it, else a small pool of threads doing
 * preadv/pwritev2/fdatasync/fallocate. Requests may be submitted from any
 * thread; completions are delivered on one of the engine's own threads.
 * Short transfers are finished internally: a callback sees the full length
 * or a negative errno.
 */
#ifndef TANDEM_IOENG_H
#define TANDEM_IOENG_H

#include <stdint.h>
#include <sys/uio.h>

#include "bdev.h" /* struct bdev_fault */

struct ioeng;

enum ioeng_op {
	IOENG_READ,
	IOENG_WRITE,
	IOENG_WRITE_FUA,  /* durable on completion (RWF_DSYNC) */
	IOENG_FSYNC,	  /* fdatasync: every write completed before submission is durable */
	IOENG_PUNCH_HOLE, /* deallocate; reads as zeros; the size is kept */
	IOENG_ZERO_RANGE, /* reads as zeros, may stay allocated; the size is kept */
};

/*
 * One request. It is copied by ioeng_submit(), so it may live on the
 * stack; the buffers (and the iov array) must stay valid until done()
 * has been called. READ and WRITE take either iov/iovcnt (whose lengths
 * add up to len) or, when iov is NULL, the single buffer buf; len is at
 * most INT_MAX. FSYNC ignores off and len.
 *
 * done(arg, res) is called exactly once, on an engine thread (never the
 * submitter's; callbacks may run concurrently on the thread pool), with
 * res = len for a READ or WRITE, 0 for the other ops, or a negative
 * errno (-ENODATA: a read past the end of the file). It may submit new
 * requests; it must not call ioeng_run() or ioeng_free().
 */
struct ioeng_req {
	enum ioeng_op op;
	const struct iovec *iov;
	unsigned int iovcnt;
	void *buf;
	uint64_t off;
	uint64_t len;
	void (*done)(void *arg, int res);
	void *arg;
};

/*
 * Fault injection for tests. on_io() is called before each system call
 * or io_uring submission of a request, with the range still to transfer
 * (from an engine thread, possibly several at once). As in bdev.h, that
 * attempt transfers at most f.len bytes, then fails with f.err (0 = goes
 * on): {0, 0} is no fault, {0, -EIO} fails the request without I/O,
 * {512, 0} makes a short transfer that is resubmitted, {512, -EIO} a torn
 * write. Only f.err matters for FSYNC, PUNCH_HOLE and ZERO_RANGE.
 */
struct ioeng_faults {
	struct bdev_fault (*on_io)(void *ctx, enum ioeng_op op, uint64_t off, uint64_t len);
	void *ctx;
};

struct ioeng_stats {
	uint64_t submitted;
	uint64_t completed; /* callbacks started */
	uint64_t in_flight; /* submitted - completed (DRBD's "lo") */
	uint64_t errors;    /* completed with res < 0 */
	uint64_t resubmits; /* short transfers continued internally */
};

/* ioeng_new() flags */
#define IOENG_FORCE_THREADS (1u << 0) /* do not try io_uring */

/*
 * An engine for fd (not owned: close it after ioeng_free()). depth bounds
 * the requests in the kernel at once (0 = 128); more wait in a queue.
 * Falls back to threads when io_uring cannot be set up; the reason is
 * kept for ioeng_uring_error(). The engine's threads inherit the caller's
 * signal mask (block the daemon's signals first).
 */
int ioeng_new(int fd, unsigned int depth, unsigned int flags, struct ioeng **out);
/* Waits for every request in flight (and their callbacks), then frees. */
void ioeng_free(struct ioeng *e);
/* "io_uring" or "threads", for logs. */
const char *ioeng_kind(const struct ioeng *e);
/* Why io_uring is not in use: a negative errno, or 0 (in use, or forced off). */
int ioeng_uring_error(const struct ioeng *e);

/* 0 when done() will be called, else a negative errno (and it won't be). */
int ioeng_submit(struct ioeng *e, const struct ioeng_req *r);
/* Submit and wait: the callback's res (r->done and r->arg are ignored);
 * -EDEADLK from an engine thread. */
int ioeng_run(struct ioeng *e, const struct ioeng_req *r);

/* Set while no request is in flight; NULL turns faults off. */
void ioeng_set_faults(struct ioeng *e, const struct ioeng_faults *f);
void ioeng_get_stats(const struct ioeng *e, struct ioeng_stats *out);

#endif
