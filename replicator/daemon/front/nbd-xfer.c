/*
 * nbd-xfer: the transmission phase of one NBD connection, after the
 * handshake (nbd-srv.c): requests read and validated in order, started
 * without waiting (reads and writes on the volume, writes also to the
 * peer), answered as they complete.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log.h"
#include "nbd-proto.h"
#include "nbd-request.h"
#include "quorum.h"
#include "ratelimit.h"
#include "front/nbd-extents.h"
#include "front/nbd-xfer.h"
#include "peer/peer.h"
#include "state/state-change.h"
#include "volume/volume.h"
#include "wire.h"

/*
 * The requests of one connection, read through a buffer: one read() takes
 * a request's header and, for a small WRITE, its payload too. Payloads
 * larger than the buffer are read in place.
 */
#define RBUF_SIZE (64 * 1024)

struct rbuf {
	int fd;
	char *b;
	size_t pos, end;
};

static int read_full(struct rbuf *rb, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r;

		if (rb->pos < rb->end) {
			size_t n = rb->end - rb->pos < len ? rb->end - rb->pos : len;

			memcpy(p, rb->b + rb->pos, n);
			rb->pos += n;
			p += n;
			len -= n;
			continue;
		}
		r = read(rb->fd, len >= RBUF_SIZE ? p : rb->b, len >= RBUF_SIZE ? len : RBUF_SIZE);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		if (len >= RBUF_SIZE) {
			p += r;
			len -= (size_t)r;
		} else {
			rb->pos = 0;
			rb->end = (size_t)r;
		}
	}
	return 0;
}

/* Read and drop the payload of a refused WRITE. */
static int drain_payload(struct rbuf *rb, uint32_t len)
{
	char buf[65536];
	int rc = 0;

	while (len && rc == 0) {
		uint32_t n = len < sizeof(buf) ? len : (uint32_t)sizeof(buf);

		rc = read_full(rb, buf, n);
		len -= n;
	}
	return rc;
}

/* A wire error code back to an errno, so that nbd_proto_errno() gives it
 * again when the reply is sent. */
static int wire_to_errno(uint32_t err)
{
	switch (err) {
	case NBD_EPERM:
		return -EPERM;
	case NBD_ENOSPC:
		return -ENOSPC;
	case NBD_ENOTSUP:
		return -ENOTSUP;
	case NBD_EOVERFLOW:
		return -EOVERFLOW;
	default:
		return -EINVAL;
	}
}

/*
 * The transmission phase. The connection thread reads and validates
 * requests and submits reads and writes to the I/O engine without waiting,
 * so several requests are in flight per connection; their completions are
 * queued to a writer thread that sends the replies (a client that stops
 * reading then stalls only its own connection). At queue depth 1 no thread
 * switch is needed: the thread that completes a request answers it when no
 * other reply waits (op_queue). FLUSH, TRIM and WRITE_ZEROES wait for the
 * requests before them; a FLUSH is answered when the local flush and the
 * peer's barrier ack are both in, the ack's thread answering if it is last.
 */
#define MAX_INFLIGHT       32
#define MAX_INFLIGHT_BYTES (64u << 20)

struct nbd_op {
	struct nbd_xfer *x;
	uint64_t cookie;
	uint16_t type;
	uint64_t off;  /* the request's offset and length */
	uint32_t rlen;
	uint32_t len;  /* bytes of buf (READ, WRITE, BLOCK_STATUS) */
	uint32_t extents; /* BLOCK_STATUS: descriptors in buf */
	int res;
	bool refused; /* by validation, already logged */
	int legs;     /* writes: local, and the peer's while connected */
	bool diskless; /* written to the peer only */
	int local_rc;
	bool net_bad;  /* a piece did not reach the peer (or none was sent) */
	bool aborted;  /* the payload could not be read */
	char *buf;
	struct inflight range; /* writes: the range held in the volume */
	struct peer_flushw fw; /* FLUSH: waiting for the peer's barrier ack */
	uint8_t hdr[32];       /* the reply's fixed part, once answered (hlen > 0) */
	size_t hlen;
	const void *pay;       /* and what follows it: READ data, an error message */
	size_t plen;
	size_t sent;           /* bytes of the reply already sent */
	char msg[NBD_REQUEST_MSG_MAX + 1]; /* why it failed (structured replies) */
	struct nbd_op *next;
};

struct nbd_xfer {
	int fd;          /* the client's socket */
	const char *res; /* the resource's name, for the log */
	const struct nbd_xfer_log *log; /* and how often */
	const struct nbd_export_limits *lim; /* what the handshake negotiated */
	struct volume *v;
	pthread_mutex_t lock;
	pthread_cond_t work;        /* the writer waits for replies to send */
	pthread_cond_t room;        /* the reader waits for fewer in flight */
	struct nbd_op *head, *tail; /* completed, to be answered */
	unsigned int inflight;      /* submitted or queued, not yet answered */
	unsigned int undone;        /* submitted, their I/O not yet done */
	uint64_t bytes;             /* their buffers */
	bool reading;               /* the connection thread still reads */
	bool sending;               /* a reply is being sent */
	pthread_t reader;           /* the connection thread */
	struct rbuf in;             /* what it reads through */
	bool broken;                /* a reply could not be sent */
};

/*
 * op's reply (doc/nbd-frontend.md, "Replies"): a simple reply, with a
 * READ's data after it; with structured replies, a READ's data as one
 * NBD_REPLY_TYPE_OFFSET_DATA chunk and every error as an
 * NBD_REPLY_TYPE_ERROR chunk with a message naming the request and why.
 */
static void reply_encode(const struct nbd_xfer *x, struct nbd_op *op)
{
	uint32_t err = op->res < 0 ? nbd_proto_errno(op->res) : 0;
	bool data = err == 0 && op->type == NBD_CMD_READ;

	if (x->lim->structured && err) {
		if (!op->msg[0])
			snprintf(op->msg, sizeof(op->msg), "%s offset %llu length %u failed: %s",
				 nbd_proto_cmd_name(op->type), (unsigned long long)op->off,
				 op->rlen, strerror(-op->res));
		op->pay = op->msg;
		op->plen = strlen(op->msg);
		op->hlen = nbd_request_encode_error_chunk(op->hdr, err, op->cookie, op->plen);
		return;
	}
	if (x->lim->structured && op->type == NBD_CMD_BLOCK_STATUS) {
		op->hlen = nbd_request_encode_block_status_chunk(op->hdr, op->cookie,
								 x->lim->meta_alloc, op->extents);
		op->pay = op->buf;
		op->plen = (size_t)NBD_EXTENT_SIZE * op->extents;
		return;
	}
	if (x->lim->structured && data)
		op->hlen = nbd_request_encode_read_chunk(op->hdr, op->cookie, op->off, op->len);
	else {
		nbd_request_encode_reply(op->hdr, err, op->cookie);
		op->hlen = NBD_REPLY_SIZE;
	}
	op->pay = data ? op->buf : NULL;
	op->plen = data ? op->len : 0;
}

/*
 * Send what is left of op's reply, its fixed part and what follows, in as
 * few system calls as the socket allows: 0 once sent, -EAGAIN
 * (MSG_DONTWAIT) with op->sent moved on, or another negative errno.
 */
static int reply_send(int fd, struct nbd_op *op, int flags)
{
	size_t total = op->hlen + op->plen;

	while (op->sent < total) {
		struct iovec iov[2];
		struct msghdr m = {.msg_iov = iov};
		ssize_t r;

		if (op->sent < op->hlen)
			iov[m.msg_iovlen++] = (struct iovec){op->hdr + op->sent,
							     op->hlen - op->sent};
		if (op->plen) {
			size_t d = op->sent > op->hlen ? op->sent - op->hlen : 0;

			iov[m.msg_iovlen++] = (struct iovec){(char *)op->pay + d, op->plen - d};
		}
		r = sendmsg(fd, &m, MSG_NOSIGNAL | flags);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		op->sent += (size_t)r;
	}
	return 0;
}

/*
 * Send op's reply unless the connection broke, then forget op; the caller
 * set x->sending. Without blocking (another thread's completion), a reply
 * the socket cannot take at once goes back to the head of the queue, where
 * the writer thread finishes it: false. Lock not held.
 */
static bool answer(struct nbd_xfer *x, struct nbd_op *op, bool nonblock)
{
	bool failed;
	int rc = 0;

	pthread_mutex_lock(&x->lock);
	failed = x->broken;
	pthread_mutex_unlock(&x->lock);
	if (op->res < 0 && !op->refused && op->sent == 0) {
		char note[96];

		if (ratelimit_ok(x->log->failed, note, sizeof(note)))
			log_res(LOG_ERR, x->res, "NBD %s of %u bytes failed: %s%s",
				nbd_proto_cmd_name(op->type), op->rlen, strerror(-op->res), note);
	}
	if (!failed) {
		if (!op->hlen)
			reply_encode(x, op);
		rc = reply_send(x->fd, op, nonblock ? MSG_DONTWAIT : 0);
	}
	pthread_mutex_lock(&x->lock);
	if (rc == -EAGAIN) {
		op->next = x->head;
		x->head = op;
		if (!x->tail)
			x->tail = op;
		x->sending = false;
		pthread_cond_signal(&x->work);
		pthread_mutex_unlock(&x->lock);
		return false;
	}
	if (rc < 0) {
		failed = true;
		shutdown(x->fd, SHUT_RDWR); /* the reader stops too */
	}
	x->broken |= failed;
	x->inflight--;
	x->bytes -= op->len;
	x->sending = false;
	pthread_cond_signal(&x->room);
	if (x->head || !x->reading)
		pthread_cond_signal(&x->work);
	pthread_mutex_unlock(&x->lock);
	free(op->buf);
	free(op);
	return true;
}

/*
 * op is done. When no reply is queued or being sent, the thread that
 * completed it answers at once: the connection thread when nothing else is
 * in flight (a request at queue depth 1 then costs no thread switch), any
 * other thread (the peer's acks, the I/O engine) without blocking and only
 * for replies without data. Everything else goes to the writer thread.
 */
static void op_queue(struct nbd_op *op, int res)
{
	struct nbd_xfer *x = op->x;
	bool reader = pthread_equal(pthread_self(), x->reader);

	op->res = res < 0 ? res : 0;
	op->next = NULL;
	pthread_mutex_lock(&x->lock);
	/* done: a FLUSH behind it need not wait for its reply to be sent */
	if (--x->undone == 0)
		pthread_cond_signal(&x->room);
	if (!x->head && !x->sending &&
	    (reader ? x->inflight == 1 : op->type != NBD_CMD_READ || op->res < 0)) {
		x->sending = true;
		pthread_mutex_unlock(&x->lock);
		answer(x, op, !reader);
		return;
	}
	if (x->tail)
		x->tail->next = op;
	else
		x->head = op;
	x->tail = op;
	pthread_cond_signal(&x->work);
	pthread_mutex_unlock(&x->lock);
}

static void read_done(void *arg, int res)
{
	op_queue(arg, res);
}

/* A write has legs: the local one and, while connected, one per piece
 * sent to the peer; it completes when all are done, successfully if the
 * local write or every piece succeeded (DRBD). */
static void leg_done(struct nbd_op *op)
{
	int rc;

	if (__atomic_sub_fetch(&op->legs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (op->diskless) {
		op_queue(op, op->net_bad ? -EIO : 0);
		return;
	}
	if (op->aborted) { /* the payload never arrived: no I/O error */
		volume_write_end(op->x->v, &op->range, 0);
		op_queue(op, -ECONNRESET);
		return;
	}
	rc = op->local_rc < 0 && op->net_bad ? op->local_rc : 0;
	volume_write_end(op->x->v, &op->range, op->local_rc);
	op_queue(op, rc);
}

static void write_done(void *arg, int res)
{
	struct nbd_op *op = arg;

	op->local_rc = res < 0 ? res : 0;
	leg_done(op);
}

static void flush_done(void *arg)
{
	struct nbd_op *op = arg;

	op_queue(op, op->local_rc);
}

static void net_done(void *arg, int rc)
{
	struct nbd_op *op = arg;

	if (rc != 0)
		__atomic_store_n(&op->net_bad, true, __ATOMIC_RELEASE);
	leg_done(op);
}

static void *writer_thread(void *arg)
{
	struct nbd_xfer *x = arg;

	pthread_mutex_lock(&x->lock);
	for (;;) {
		struct nbd_op *op;

		while ((!x->head || x->sending) && (x->reading || x->inflight))
			pthread_cond_wait(&x->work, &x->lock);
		op = x->head;
		if (!op)
			break;
		x->head = op->next;
		if (!x->head)
			x->tail = NULL;
		x->sending = true;
		pthread_mutex_unlock(&x->lock);
		answer(x, op, false);
		pthread_mutex_lock(&x->lock);
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

/*
 * Wait until at most `max` requests are unanswered and their buffers leave
 * room for `bytes` (lock held). A request that must come after everything
 * before it (FLUSH, TRIM, WRITE_ZEROES, CACHE: max 0) waits until their I/O
 * is done, not until their replies are sent: the replies may still be on
 * their way to the client, which is not told of the FLUSH's completion
 * before it is done either (issue 20: a FLUSH slept on `room` while the
 * write before it was being answered).
 */
static void wait_inflight(struct nbd_xfer *x, unsigned int max, uint64_t bytes)
{
	if (!max) {
		while (x->undone || x->inflight > MAX_INFLIGHT - 1)
			pthread_cond_wait(&x->room, &x->lock);
		return;
	}
	while (x->inflight > max || (x->inflight && x->bytes + bytes > MAX_INFLIGHT_BYTES))
		pthread_cond_wait(&x->room, &x->lock);
}

/*
 * A WRITE while connected with a local disk: the payload is read from the
 * client in pieces of WRITE_PIECE bytes, and each piece goes to the peer as
 * its own P_DATA as soon as it is read (as DRBD splits bios at its
 * max-bio-size), so the link is busy while the rest arrives and the peer
 * writes the first pieces while the last ones travel. The local write,
 * of the whole payload, runs last. -1: the payload could not be read (the
 * pieces sent are marked out of sync, nothing is written here).
 */
#define WRITE_PIECE (256u << 10)

static int start_write_pieces(struct nbd_xfer *x, const struct nbd_request *req,
			      struct nbd_op *op, uint32_t dp)
{
	uint32_t off = 0;
	int rc;

	op->legs = 1; /* the local one, which ends the reading too */
	while (off < req->length) {
		uint32_t n = req->length - off < WRITE_PIECE ? req->length - off : WRITE_PIECE;

		if (read_full(&x->in, op->buf + off, n) < 0) {
			op->aborted = true;
			volume_mark_oos(x->v, req->offset, req->length);
			write_done(op, -ECONNRESET);
			return -1;
		}
		__atomic_add_fetch(&op->legs, 1, __ATOMIC_ACQ_REL);
		rc = peer_submit(x->v->res, x->v, WIRE_P_DATA, req->offset + off, n, op->buf + off,
				 dp, net_done, op);
		if (rc <= 0) { /* not connected (the bitmap is marked) or not sent */
			__atomic_store_n(&op->net_bad, true, __ATOMIC_RELEASE);
			__atomic_sub_fetch(&op->legs, 1, __ATOMIC_ACQ_REL);
		}
		off += n;
	}
	rc = volume_submit(x->v, (req->flags & NBD_CMD_FLAG_FUA) ? IOENG_WRITE_FUA : IOENG_WRITE,
			   op->buf, req->offset, req->length, write_done, op);
	if (rc < 0)
		write_done(op, rc);
	return 0;
}

static int start_write(struct nbd_xfer *x, const struct nbd_request *req, struct nbd_op *op)
{
	uint32_t dp = (req->flags & NBD_CMD_FLAG_FUA) ? WIRE_DP_FUA : 0;
	int rc;

	op->range.off = req->offset;
	op->range.len = req->length;
	if (req->length > WRITE_PIECE && peer_live(x->v->res) && !volume_diskless(x->v)) {
		rc = volume_write_begin(x->v, &op->range);
		if (rc == 0)
			return start_write_pieces(x, req, op, dp);
		/* the local disk failed just now: the peer only, below */
	}
	if (read_full(&x->in, op->buf, req->length) < 0) {
		op_queue(op, -ECONNRESET);
		return -1;
	}
	rc = volume_diskless(x->v) ? -EIO : volume_write_begin(x->v, &op->range);
	if (rc < 0 && peer_live(x->v->res)) {
		/* no local disk (or it just failed): to the peer only, which
		 * marks the blocks as missing here (P_OUT_OF_SYNC first) */
		op->diskless = true;
		op->legs = 2; /* the peer's, and ours until peer_submit returns: its
			       * ack may come (and free op) before the send returns */
		peer_mark_missing(x->v->res, x->v, req->offset, req->length);
		rc = peer_submit(x->v->res, x->v, WIRE_P_DATA, req->offset, req->length, op->buf,
				 dp, net_done, op);
		if (rc <= 0) /* not sent: no ack will come */
			net_done(op, -EIO);
		leg_done(op);
		return 0;
	}
	if (rc < 0) {
		op_queue(op, rc);
		return 0;
	}
	/* the peer's leg first: it runs while the local write does */
	op->legs = 2;
	rc = peer_submit(x->v->res, x->v, WIRE_P_DATA, req->offset, req->length, op->buf, dp,
			 net_done, op);
	if (rc <= 0) { /* not connected (the bitmap is marked) or not sent */
		__atomic_store_n(&op->net_bad, true, __ATOMIC_RELEASE);
		__atomic_sub_fetch(&op->legs, 1, __ATOMIC_ACQ_REL);
	}
	rc = volume_submit(x->v, (req->flags & NBD_CMD_FLAG_FUA) ? IOENG_WRITE_FUA : IOENG_WRITE,
			   op->buf, req->offset, req->length, write_done, op);
	if (rc < 0)
		write_done(op, rc);
	return 0;
}

/*
 * No quorum under on-no-quorum io-error (control/quorum.c, which logs it
 * once): a request that would change data fails with EIO, its payload read
 * and dropped; reads and flushes go on. -1 ends the connection.
 */
static bool refuse_no_quorum(struct nbd_xfer *x, const struct nbd_request *req,
			     struct nbd_op *op, int *rc)
{
	if (req->type == NBD_CMD_READ || req->type == NBD_CMD_FLUSH ||
	    __atomic_load_n(&x->v->res->quorum_io, __ATOMIC_ACQUIRE) != QUORUM_IO_ERROR)
		return false;
	*rc = 0;
	if (req->type == NBD_CMD_WRITE && read_full(&x->in, op->buf, req->length) < 0) {
		op_queue(op, -ECONNRESET);
		*rc = -1;
		return true;
	}
	op->refused = true;
	snprintf(op->msg, sizeof(op->msg), "%s refused: no quorum (on-no-quorum io-error)",
		 nbd_proto_cmd_name(req->type));
	op_queue(op, -EIO);
	return true;
}

/* Start one valid request; -1 ends the connection. */
static int start_request(struct nbd_xfer *x, const struct nbd_request *req)
{
	struct nbd_op *op = calloc(1, sizeof(*op));
	uint32_t buflen = nbd_extents_buflen(req);
	int rc = 0;

	if (!op)
		return -1;
	op->x = x;
	op->cookie = req->cookie;
	op->type = req->type;
	op->off = req->offset;
	op->rlen = req->length;
	op->len = buflen;
	pthread_mutex_lock(&x->lock);
	/* FLUSH, TRIM, WRITE_ZEROES, CACHE: after everything before them */
	wait_inflight(x, buflen ? MAX_INFLIGHT - 1 : 0, buflen);
	x->inflight++;
	x->undone++;
	x->bytes += buflen;
	pthread_mutex_unlock(&x->lock);
	if (buflen && !(op->buf = malloc(buflen))) {
		op_queue(op, -ENOMEM);
		return req->type == NBD_CMD_WRITE ? -1 : 0; /* the payload cannot be read */
	}
	if (refuse_no_quorum(x, req, op, &rc))
		return rc;
	switch (req->type) {
	case NBD_CMD_READ:
		if (peer_reads_remote(x->v->res, x->v)) { /* diskless, or not UpToDate */
			rc = peer_read(x->v->res, x->v, req->offset, req->length, op->buf,
				       read_done, op);
			if (rc < 0)
				op_queue(op, rc);
			return 0;
		}
		rc = volume_submit(x->v, IOENG_READ, op->buf, req->offset, req->length, read_done, op);
		if (rc < 0)
			op_queue(op, rc);
		return 0;
	case NBD_CMD_WRITE:
		return start_write(x, req, op);
	case NBD_CMD_FLUSH: /* the peer flushes while we do */
		peer_flush_start(x->v->res, &op->fw.nr);
		rc = volume_diskless(x->v) && peer_live(x->v->res) ? 0 : volume_flush(x->v);
		op->local_rc = rc;
		op->fw.done = flush_done;
		op->fw.arg = op;
		if (peer_flush_async(x->v->res, &op->fw))
			return 0; /* answered when the peer's ack arrives */
		break;
	case NBD_CMD_BLOCK_STATUS:
		rc = nbd_extents_block_status(x->v, req, op->buf, op->len / NBD_EXTENT_SIZE,
					      &op->extents);
		break;
	case NBD_CMD_CACHE:
		rc = nbd_extents_cache(x->v, req);
		break;
	case NBD_CMD_WRITE_ZEROES:
		if (req->flags & NBD_CMD_FLAG_FAST_ZERO) {
			rc = nbd_extents_fast_zero(x->v, req, op->msg, sizeof(op->msg));
			op->refused = rc == -ENOTSUP; /* an answer, not a failure: not logged */
			break;
		}
		/* fall through */
	case NBD_CMD_TRIM:
		rc = volume_diskless(x->v) && peer_live(x->v->res)
			     ? 0
			     : volume_trim(x->v, req->offset, req->length,
					   req->type == NBD_CMD_WRITE_ZEROES,
					   !(req->flags & NBD_CMD_FLAG_NO_HOLE));
		if (rc == 0)
			rc = peer_trim_wait(x->v->res, x->v, req->type == NBD_CMD_WRITE_ZEROES,
					    req->offset, req->length);
		if (rc == 0 && (req->flags & NBD_CMD_FLAG_FUA))
			rc = volume_flush(x->v);
		break;
	default:
		rc = -ENOTSUP;
	}
	op_queue(op, rc);
	return 0;
}

/* Serve requests until the client disconnects or asks to. */
void nbd_xfer_serve(int fd, struct volume *v, const char *res,
		    const struct nbd_export_limits *lim, const struct nbd_xfer_log *log)
{
	struct nbd_xfer x = {.fd = fd, .res = res, .log = log, .lim = lim, .v = v,
			     .reading = true, .reader = pthread_self(), .in = {.fd = fd}};
	struct nbd_request req;
	pthread_t writer;
	uint8_t hdr[28];
	const char *why;
	char note[96];
	uint32_t err;

	pthread_mutex_init(&x.lock, NULL);
	pthread_cond_init(&x.work, NULL);
	pthread_cond_init(&x.room, NULL);
	x.in.b = malloc(RBUF_SIZE);
	if (!x.in.b || pthread_create(&writer, NULL, writer_thread, &x) != 0) {
		log_res(LOG_ERR, res, "cannot start an NBD writer thread");
		goto out;
	}
	for (;;) {
		if (read_full(&x.in, hdr, sizeof(hdr)) < 0)
			break;
		if (nbd_request_decode(hdr, &req) < 0) {
			if (ratelimit_ok(log->bad, note, sizeof(note)))
				log_res(LOG_WARNING, res,
					"NBD client sent a bad request magic; closing it%s", note);
			break;
		}
		if (req.type == NBD_CMD_DISC)
			break; /* never answered, whatever its fields */
		err = nbd_request_validate(&req, lim, &why);
		if (err) {
			uint32_t drain = nbd_request_payload(&req);
			struct nbd_op *op;

			if (ratelimit_ok(log->bad, note, sizeof(note)))
				log_res(LOG_WARNING, res,
					"NBD request %s offset %llu length %u refused: %s%s",
					nbd_proto_cmd_name(req.type), (unsigned long long)req.offset,
					req.length, why, note);
			if (drain && (!nbd_request_drainable(&req) || drain_payload(&x.in, drain) < 0))
				break;
			op = calloc(1, sizeof(*op));
			if (!op)
				break;
			op->x = &x;
			op->cookie = req.cookie;
			op->type = req.type;
			op->off = req.offset;
			op->rlen = req.length;
			op->refused = true;
			snprintf(op->msg, sizeof(op->msg), "%s offset %llu length %u refused: %s",
				 nbd_proto_cmd_name(req.type), (unsigned long long)req.offset,
				 req.length, why);
			pthread_mutex_lock(&x.lock);
			x.inflight++;
			x.undone++;
			pthread_mutex_unlock(&x.lock);
			op_queue(op, wire_to_errno(err));
			continue;
		}
		if (start_request(&x, &req) < 0)
			break;
	}
	pthread_mutex_lock(&x.lock);
	x.reading = false;
	pthread_cond_signal(&x.work);
	pthread_mutex_unlock(&x.lock);
	pthread_join(writer, NULL);
out:
	free(x.in.b);
	pthread_mutex_destroy(&x.lock);
	pthread_cond_destroy(&x.work);
	pthread_cond_destroy(&x.room);
}
