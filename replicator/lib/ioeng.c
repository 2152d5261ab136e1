/*
 * ioeng: asynchronous block I/O on one file descriptor, with io_uring or a
 * pool of threads.
 *
 * io_uring: one thread owns the ring. It creates it (so that the kernel
 * may treat it as single-issuer and defer its task work to that thread),
 * prepares every SQE, waits on the CQ and runs the callbacks. Submitters
 * put requests on a mutex-guarded queue and wake the ring thread through
 * an eventfd that the ring polls. The ring is never entered from the
 * submitters' threads, so their exit cannot cancel queued I/O (the kernel
 * cancels the io-wq work of an exiting task) and task work never
 * interrupts them.
 *
 * threads: up to IOENG_POOL_THREADS workers take requests from the same
 * queue and make the system calls themselves.
 *
 * Both run a request as attempts: ioeng_io_begin() asks the fault hook
 * and bounds the attempt, ioeng_io_end() accounts for its result and
 * says whether to go on with the rest of a short transfer.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "ioeng.h"

#define IOENG_DEPTH_DEFAULT 128
#define IOENG_DEPTH_MAX 4096
#define IOENG_POOL_THREADS 4
#define IOENG_RETRIES 16 /* -EAGAIN or -EINTR in a row before giving up */
#define IOENG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A request in flight. */
struct ioeng_io {
	struct ioeng_io *next;
	enum ioeng_op op;
	void (*done)(void *arg, int res);
	void *arg;
	uint64_t off;	    /* of the next byte to transfer */
	uint64_t left;	    /* bytes still to transfer (or the range to fallocate) */
	uint64_t len;	    /* READ/WRITE: the result */
	struct iovec *cur;  /* first unfinished buffer in iov[] */
	unsigned int ncur;  /* buffers from cur on */
	unsigned int nsent; /* buffers in the current attempt */
	size_t cut_len;	    /* cur[nsent - 1].iov_len before a fault cut it, or 0 */
	int fault_err;	    /* to fail with after the current attempt */
	unsigned int retries;
	bool fua_by_flush; /* threads: no RWF_DSYNC, fdatasync at the end */
	struct iovec iov[];
};

struct ioeng {
	int fd;
	bool uring;
	int uring_err;
	const struct ioeng_faults *faults;

	pthread_mutex_t lock;
	pthread_cond_t cond;	      /* threads: work queued; io_uring: setup done */
	struct ioeng_io *head, *tail; /* queued for the ring or a worker */
	bool stopping;
	bool kicked; /* io_uring: eventfd written since the ring thread looked */
	bool setup_done;
	int setup_rc;
	pthread_t threads[IOENG_POOL_THREADS]; /* io_uring: [0] is the ring thread */
	unsigned int nthreads;

	/* io_uring, ring thread only */
	struct io_uring ring;
	unsigned int depth; /* what the caller asked for */
	unsigned int cap;   /* requests with an SQE at once (one more SQE: the poll) */
	unsigned int busy;  /* requests with an SQE whose CQE is not reaped yet */
	bool fixed;	    /* fd is registered as fixed file 0 */
	bool poll_armed;
	int efd;

	atomic_uint_fast64_t submitted, completed, errors, resubmits;
};

static bool ioeng_op_rw(enum ioeng_op op)
{
	return op == IOENG_READ || op == IOENG_WRITE || op == IOENG_WRITE_FUA;
}

static int ioeng_falloc_mode(enum ioeng_op op)
{
	assert(op == IOENG_PUNCH_HOLE || op == IOENG_ZERO_RANGE);
	return (op == IOENG_PUNCH_HOLE ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE) |
	       FALLOC_FL_KEEP_SIZE;
}

static bool ioeng_on_engine_thread(const struct ioeng *e)
{
	pthread_t self = pthread_self();
	unsigned int i;

	for (i = 0; i < e->nthreads; i++)
		if (pthread_equal(self, e->threads[i]))
			return true;
	return false;
}

/* ---------------------------------------------------------------- requests */

static int ioeng_io_new(const struct ioeng_req *r, struct ioeng_io **out)
{
	const struct iovec *iov = r->iov;
	struct iovec one;
	struct ioeng_io *io;
	unsigned int n = 0, i;
	uint64_t sum = 0;

	if (!r->done)
		return -EINVAL;
	switch (r->op) {
	case IOENG_READ:
	case IOENG_WRITE:
	case IOENG_WRITE_FUA:
		if (iov) {
			n = r->iovcnt;
			if (n == 0 || n > IOV_MAX)
				return -EINVAL;
			for (i = 0; i < n && sum <= INT_MAX; i++) {
				if ((!iov[i].iov_base && iov[i].iov_len) || iov[i].iov_len > INT_MAX)
					return -EINVAL;
				sum += iov[i].iov_len;
			}
		} else {
			if (!r->buf)
				return -EINVAL;
			one = (struct iovec){r->buf, r->len};
			iov = &one;
			n = 1;
			sum = r->len;
		}
		if (sum != r->len || sum == 0 || sum > INT_MAX)
			return -EINVAL;
		break;
	case IOENG_FSYNC:
		break;
	case IOENG_PUNCH_HOLE:
	case IOENG_ZERO_RANGE:
		if (r->len == 0)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (r->op != IOENG_FSYNC && (r->off > INT64_MAX || r->len > INT64_MAX - r->off))
		return -EINVAL;
	io = calloc(1, sizeof(*io) + n * sizeof(*iov));
	if (!io)
		return -ENOMEM;
	if (n)
		memcpy(io->iov, iov, n * sizeof(*iov));
	io->op = r->op;
	io->done = r->done;
	io->arg = r->arg;
	io->off = r->off;
	io->len = r->op == IOENG_FSYNC ? 0 : r->len;
	io->left = io->len;
	io->cur = io->iov;
	io->ncur = n;
	*out = io;
	return 0;
}

/*
 * Start an attempt at io: ask the fault hook, and cut the buffers down to
 * what it allows. false: the hook fails the request now (io->fault_err).
 */
static bool ioeng_io_begin(const struct ioeng *e, struct ioeng_io *io)
{
	uint64_t lim = io->left, acc = 0;
	unsigned int i;

	io->fault_err = 0;
	io->nsent = io->ncur;
	io->cut_len = 0;
	if (e->faults) {
		struct bdev_fault f = e->faults->on_io(e->faults->ctx, io->op, io->off, io->left);

		io->fault_err = f.err;
		if (f.err && (f.len == 0 || !ioeng_op_rw(io->op)))
			return false;
		if (f.len && f.len < lim)
			lim = f.len;
	}
	if (!ioeng_op_rw(io->op) || lim == io->left)
		return true;
	for (i = 0; i < io->ncur; i++) {
		if (io->cur[i].iov_len >= lim - acc) {
			io->nsent = i + 1;
			io->cut_len = io->cur[i].iov_len;
			io->cur[i].iov_len = lim - acc;
			break;
		}
		acc += io->cur[i].iov_len;
	}
	assert(io->cut_len > 0);
	return true;
}

/* Skip n transferred bytes. */
static void ioeng_io_advance(struct ioeng_io *io, size_t n)
{
	io->off += n;
	io->left -= n;
	while (io->ncur && n >= io->cur->iov_len) {
		n -= io->cur->iov_len;
		io->cur++;
		io->ncur--;
	}
	if (n) {
		assert(io->ncur > 0);
		io->cur->iov_base = (char *)io->cur->iov_base + n;
		io->cur->iov_len -= n;
	}
}

/*
 * Account for the result r of an attempt (bytes, or a negative errno).
 * true: io is finished with *res; false: go on with the rest.
 */
static bool ioeng_io_end(struct ioeng *e, struct ioeng_io *io, int r, int *res)
{
	if (io->cut_len)
		io->cur[io->nsent - 1].iov_len = io->cut_len;
	if ((r == -EAGAIN || r == -EINTR) && io->retries++ < IOENG_RETRIES)
		return false;
	if (r < 0 || !ioeng_op_rw(io->op)) {
		*res = r;
		return true;
	}
	if (r == 0) {
		*res = io->fault_err ? io->fault_err : io->op == IOENG_READ ? -ENODATA : -EIO;
		return true;
	}
	assert((uint64_t)r <= io->left);
	io->retries = 0;
	ioeng_io_advance(io, (size_t)r);
	if (io->fault_err || io->left == 0) {
		*res = io->fault_err ? io->fault_err : (int)io->len;
		return true;
	}
	atomic_fetch_add(&e->resubmits, 1);
	return false;
}

/* Free io and run its callback. */
static void ioeng_complete(struct ioeng *e, struct ioeng_io *io, int res)
{
	void (*done)(void *arg, int res) = io->done;
	void *arg = io->arg;

	free(io);
	if (res < 0)
		atomic_fetch_add(&e->errors, 1);
	atomic_fetch_add(&e->completed, 1);
	done(arg, res);
}

/* With e->lock held. */
static struct ioeng_io *ioeng_dequeue(struct ioeng *e)
{
	struct ioeng_io *io = e->head;

	if (io) {
		e->head = io->next;
		if (!e->head)
			e->tail = NULL;
		io->next = NULL;
	}
	return io;
}

static void ioeng_kick(struct ioeng *e)
{
	while (eventfd_write(e->efd, 1) < 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------------- threads */

/* One system call for the current attempt: bytes, 0, or a negative errno. */
static int ioeng_pool_call(struct ioeng *e, struct ioeng_io *io)
{
	int fd = e->fd, flags = 0;
	ssize_t r;

	switch (io->op) {
	case IOENG_READ:
		r = preadv(fd, io->cur, (int)io->nsent, (off_t)io->off);
		break;
	case IOENG_WRITE_FUA:
		if (!io->fua_by_flush)
			flags = RWF_DSYNC;
		/* fall through */
	case IOENG_WRITE:
		r = pwritev2(fd, io->cur, (int)io->nsent, (off_t)io->off, flags);
		if (r < 0 && flags && (errno == EOPNOTSUPP || errno == EINVAL)) {
			io->fua_by_flush = true; /* kernel < 4.7 */
			return ioeng_pool_call(e, io);
		}
		break;
	case IOENG_FSYNC:
		r = fdatasync(fd);
		break;
	case IOENG_PUNCH_HOLE:
	case IOENG_ZERO_RANGE:
		r = fallocate(fd, ioeng_falloc_mode(io->op), (off_t)io->off, (off_t)io->left);
		break;
	default:
		assert(!"bad op");
		errno = EINVAL;
		r = -1;
	}
	return r < 0 ? -errno : (int)r;
}

static void *ioeng_pool_main(void *p)
{
	struct ioeng *e = p;
	struct ioeng_io *io;
	int res;

	for (;;) {
		pthread_mutex_lock(&e->lock);
		while (!e->head && !e->stopping)
			pthread_cond_wait(&e->cond, &e->lock);
		io = ioeng_dequeue(e);
		pthread_mutex_unlock(&e->lock);
		if (!io)
			return NULL;
		for (;;) {
			if (!ioeng_io_begin(e, io)) {
				res = io->fault_err;
				break;
			}
			if (ioeng_io_end(e, io, ioeng_pool_call(e, io), &res))
				break;
		}
		if (res >= 0 && io->fua_by_flush && fdatasync(e->fd) < 0)
			res = -errno;
		ioeng_complete(e, io, res);
	}
}

/* ---------------------------------------------------------------- io_uring */

/* Ring setups to try, best first: a ring owned by one thread that runs its
 * task work only when it waits (6.1), then a plain ring (5.6). */
static const unsigned int ioeng_ring_setups[] = {
	IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
		IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_CLAMP,
};

static const int ioeng_ring_ops[] = {
	IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_FALLOCATE, IORING_OP_POLL_ADD,
};

static int ioeng_ring_setup(struct ioeng *e)
{
	struct io_uring_probe *probe;
	struct io_uring_params p;
	size_t i;
	int rc = -EINVAL;

	for (i = 0; i < IOENG_ARRAY_SIZE(ioeng_ring_setups) && rc == -EINVAL; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = ioeng_ring_setups[i];
		rc = io_uring_queue_init_params(e->depth + 1, &e->ring, &p);
	}
	if (rc < 0)
		return rc;
	probe = io_uring_get_probe_ring(&e->ring);
	for (i = 0; probe && i < IOENG_ARRAY_SIZE(ioeng_ring_ops); i++)
		if (!io_uring_opcode_supported(probe, ioeng_ring_ops[i]))
			break;
	if (probe)
		io_uring_free_probe(probe);
	if (!probe || i < IOENG_ARRAY_SIZE(ioeng_ring_ops)) {
		io_uring_queue_exit(&e->ring);
		return -EOPNOTSUPP;
	}
	e->fixed = io_uring_register_files(&e->ring, &e->fd, 1) == 0;
	e->cap = e->ring.sq.ring_entries - 1;
	if (e->cap > e->depth)
		e->cap = e->depth;
	assert(e->cap > 0 && e->ring.cq.ring_entries > e->cap); /* the CQ never overflows */
	return 0;
}

/* user_data 0 is the poll on the eventfd. */
static void ioeng_ring_arm(struct ioeng *e)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);

	assert(sqe);
	io_uring_prep_poll_add(sqe, e->efd, POLLIN);
	io_uring_sqe_set_data(sqe, NULL);
	e->poll_armed = true;
}

/* Prepare an SQE for the next attempt at io, or complete io if a fault
 * fails it. */
static void ioeng_ring_issue(struct ioeng *e, struct ioeng_io *io)
{
	int fd = e->fixed ? 0 : e->fd;
	struct io_uring_sqe *sqe;

	if (!ioeng_io_begin(e, io)) {
		ioeng_complete(e, io, io->fault_err);
		return;
	}
	/* The SQ has room for cap requests and the poll, submitted or not. */
	assert(e->busy < e->cap);
	sqe = io_uring_get_sqe(&e->ring);
	assert(sqe);
	switch (io->op) {
	case IOENG_READ:
		io_uring_prep_readv(sqe, fd, io->cur, io->nsent, io->off);
		break;
	case IOENG_WRITE:
	case IOENG_WRITE_FUA:
		io_uring_prep_writev2(sqe, fd, io->cur, io->nsent, io->off,
				      io->op == IOENG_WRITE_FUA ? RWF_DSYNC : 0);
		break;
	case IOENG_FSYNC:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		break;
	default:
		io_uring_prep_fallocate(sqe, fd, ioeng_falloc_mode(io->op), (off_t)io->off,
					(off_t)io->left);
		break;
	}
	if (e->fixed)
		io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
	io_uring_sqe_set_data(sqe, io);
	e->busy++;
}

/* Handle every CQE there is; a short transfer goes on at once. */
static void ioeng_ring_reap(struct ioeng *e)
{
	struct io_uring_cqe *cqe;
	struct ioeng_io *io;
	eventfd_t v;
	int r, res;

	while (io_uring_peek_cqe(&e->ring, &cqe) == 0) {
		io = io_uring_cqe_get_data(cqe);
		r = cqe->res;
		io_uring_cqe_seen(&e->ring, cqe);
		if (!io) {
			e->poll_armed = false;
			(void)eventfd_read(e->efd, &v);
			continue;
		}
		assert(e->busy > 0);
		e->busy--;
		if (ioeng_io_end(e, io, r, &res))
			ioeng_complete(e, io, res);
		else
			ioeng_ring_issue(e, io);
	}
}

static void *ioeng_ring_main(void *p)
{
	struct ioeng *e = p;
	struct ioeng_io *batch, **link, *io;
	unsigned int room;
	bool stop, more;
	int rc;

	rc = ioeng_ring_setup(e);
	pthread_mutex_lock(&e->lock);
	e->setup_rc = rc;
	e->setup_done = true;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (rc < 0)
		return NULL;
	for (;;) {
		if (!e->poll_armed)
			ioeng_ring_arm(e);
		/* Take what fits from the queue. */
		batch = NULL;
		link = &batch;
		pthread_mutex_lock(&e->lock);
		e->kicked = false;
		for (room = e->cap - e->busy; room > 0 && e->head; room--) {
			*link = ioeng_dequeue(e);
			link = &(*link)->next;
		}
		stop = e->stopping && !batch && e->busy == 0;
		pthread_mutex_unlock(&e->lock);
		if (stop)
			break;
		while ((io = batch)) {
			batch = io->next;
			io->next = NULL;
			ioeng_ring_issue(e, io);
		}
		/* A callback run by a fault above may have queued more,
		 * without a kick: then do not sleep. */
		pthread_mutex_lock(&e->lock);
		more = e->head && e->busy < e->cap;
		pthread_mutex_unlock(&e->lock);
		rc = io_uring_submit_and_wait(&e->ring, more ? 0 : 1);
		/* -EAGAIN/-EBUSY: out of resources or CQ overflow: reap, retry */
		assert(rc >= 0 || rc == -EINTR || rc == -EAGAIN || rc == -EBUSY);
		ioeng_ring_reap(e);
	}
	io_uring_queue_exit(&e->ring);
	return NULL;
}

/* ---------------------------------------------------------------- engine */

static int ioeng_start(struct ioeng *e, unsigned int n, void *(*fn)(void *))
{
	int rc = 0;

	assert(n <= IOENG_POOL_THREADS && e->nthreads == 0);
	while (e->nthreads < n) {
		rc = -pthread_create(&e->threads[e->nthreads], NULL, fn, e);
		if (rc < 0)
			break;
		e->nthreads++;
	}
	return rc;
}

/* Let the threads finish what is queued, and join them. */
static void ioeng_stop(struct ioeng *e)
{
	unsigned int i;

	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (e->uring)
		ioeng_kick(e);
	for (i = 0; i < e->nthreads; i++)
		pthread_join(e->threads[i], NULL);
	e->nthreads = 0;
}

static int ioeng_ring_start(struct ioeng *e)
{
	int rc;

	e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (e->efd < 0)
		return -errno;
	e->uring = true;
	rc = ioeng_start(e, 1, ioeng_ring_main);
	if (rc == 0) {
		pthread_mutex_lock(&e->lock);
		while (!e->setup_done)
			pthread_cond_wait(&e->cond, &e->lock);
		rc = e->setup_rc;
		pthread_mutex_unlock(&e->lock);
		if (rc == 0)
			return 0;
	}
	ioeng_stop(e);
	e->uring = false;
	e->stopping = false;
	close(e->efd);
	e->efd = -1;
	return rc;
}

int ioeng_new(int fd, unsigned int depth, unsigned int flags, struct ioeng **out)
{
	struct ioeng *e;
	int rc = 0;

	if (fd < 0 || (flags & ~IOENG_FORCE_THREADS))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = fd;
	e->efd = -1;
	e->depth = depth ? depth : IOENG_DEPTH_DEFAULT;
	if (e->depth > IOENG_DEPTH_MAX)
		e->depth = IOENG_DEPTH_MAX;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (!(flags & IOENG_FORCE_THREADS)) {
		e->uring_err = ioeng_ring_start(e);
		rc = e->uring_err;
	}
	if (!e->uring) {
		rc = ioeng_start(e, e->depth < IOENG_POOL_THREADS ? e->depth : IOENG_POOL_THREADS,
				 ioeng_pool_main);
		if (rc < 0)
			ioeng_stop(e);
	}
	if (rc < 0) {
		pthread_cond_destroy(&e->cond);
		pthread_mutex_destroy(&e->lock);
		free(e);
		return rc;
	}
	*out = e;
	return 0;
}

void ioeng_free(struct ioeng *e)
{
	if (!e)
		return;
	assert(!ioeng_on_engine_thread(e));
	ioeng_stop(e);
	assert(!e->head);
	assert(atomic_load(&e->submitted) == atomic_load(&e->completed));
	if (e->efd >= 0)
		close(e->efd);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

const char *ioeng_kind(const struct ioeng *e)
{
	return e->uring ? "io_uring" : "threads";
}

int ioeng_uring_error(const struct ioeng *e)
{
	return e->uring_err;
}

int ioeng_submit(struct ioeng *e, const struct ioeng_req *r)
{
	struct ioeng_io *io;
	bool kick = false;
	int rc;

	rc = ioeng_io_new(r, &io);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&e->lock);
	assert(!e->stopping || ioeng_on_engine_thread(e));
	if (e->tail)
		e->tail->next = io;
	else
		e->head = io;
	e->tail = io;
	atomic_fetch_add(&e->submitted, 1);
	if (!e->uring)
		pthread_cond_signal(&e->cond);
	else if (!e->kicked && !pthread_equal(pthread_self(), e->threads[0]))
		kick = e->kicked = true;
	pthread_mutex_unlock(&e->lock);
	if (kick)
		ioeng_kick(e);
	return 0;
}

struct ioeng_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int res;
};

static void ioeng_wait_done(void *arg, int res)
{
	struct ioeng_wait *w = arg;

	pthread_mutex_lock(&w->lock);
	w->res = res;
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int ioeng_run(struct ioeng *e, const struct ioeng_req *r)
{
	struct ioeng_wait w = {.done = false};
	struct ioeng_req q = *r;
	int rc;

	if (ioeng_on_engine_thread(e))
		return -EDEADLK;
	q.done = ioeng_wait_done;
	q.arg = &w;
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	rc = ioeng_submit(e, &q);
	if (rc == 0) {
		pthread_mutex_lock(&w.lock);
		while (!w.done)
			pthread_cond_wait(&w.cond, &w.lock);
		rc = w.res;
		pthread_mutex_unlock(&w.lock);
	}
	pthread_cond_destroy(&w.cond);
	pthread_mutex_destroy(&w.lock);
	return rc;
}

void ioeng_set_faults(struct ioeng *e, const struct ioeng_faults *f)
{
	pthread_mutex_lock(&e->lock);
	e->faults = f && f->on_io ? f : NULL;
	pthread_mutex_unlock(&e->lock);
}

void ioeng_get_stats(const struct ioeng *e, struct ioeng_stats *out)
{
	/* completed first: never more than submitted */
	out->completed = atomic_load(&e->completed);
	out->errors = atomic_load(&e->errors);
	out->resubmits = atomic_load(&e->resubmits);
	out->submitted = atomic_load(&e->submitted);
	out->in_flight = out->submitted - out->completed;
}
