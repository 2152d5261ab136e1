/*
 * pktio: framed replication packets over a socket (see pktio.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "pktio.h"
#include "tls.h"

struct pktio {
	int fd;
	enum wire_stream stream;
	uint64_t features;
	uint8_t *buf;
	size_t cap;
	uint8_t *sbuf; /* the encoded head of the packet being sent */
	uint8_t *in;   /* received, not yet taken: in[in_pos..in_end) */
	size_t in_pos, in_end;
	int shut; /* atomic: pktio_shutdown() may come from any thread */
	int64_t hard; /* CLOCK_MONOTONIC ms no call may wait past; 0: none */
	struct tls *tls; /* NULL: plain TCP */
	pthread_mutex_t tls_lock; /* one call into tls at a time */
	char rwhy[TLS_REASON_MAX]; /* why the last TLS receive failed */
};

#define PKTIO_SBUF (WIRE_HDR_SIZE + WIRE_BM_MAX_CHUNK + 4096)
/* One recv() takes whatever has arrived, up to this: a burst of small
 * packets (acks, 4 KiB writes) costs one system call, not two each. */
#define PKTIO_IBUF (64 * 1024)

int pktio_new(int fd, enum wire_stream stream, struct pktio **out)
{
	struct pktio *io = calloc(1, sizeof(*io));

	if (!io || !(io->sbuf = malloc(PKTIO_SBUF)) || !(io->in = malloc(PKTIO_IBUF))) {
		if (io)
			free(io->sbuf);
		free(io);
		return -ENOMEM;
	}
	io->fd = fd;
	io->stream = stream;
	io->features = WIRE_F_ALL; /* until negotiated: only P_HELLO is expected */
	pthread_mutex_init(&io->tls_lock, NULL);
	*out = io;
	return 0;
}

void pktio_free(struct pktio *io)
{
	if (!io)
		return;
	tls_free(io->tls);
	pthread_mutex_destroy(&io->tls_lock);
	if (io->fd >= 0)
		close(io->fd);
	free(io->buf);
	free(io->sbuf);
	free(io->in);
	free(io);
}

int pktio_fd(const struct pktio *io)
{
	return io->fd;
}

void pktio_set_stream(struct pktio *io, enum wire_stream stream)
{
	io->stream = stream;
}

void pktio_set_features(struct pktio *io, uint64_t features)
{
	io->features = features;
}

void pktio_set_tls(struct pktio *io, struct tls *t)
{
	io->tls = t;
}

void pktio_shutdown(struct pktio *io)
{
	__atomic_store_n(&io->shut, 1, __ATOMIC_RELEASE);
	shutdown(io->fd, SHUT_RDWR);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left(int64_t deadline)
{
	int64_t l;

	if (deadline < 0)
		return -1;
	l = deadline - now_ms();
	return l < 0 ? 0 : (int)l;
}

/* Decrypted bytes wait in the TLS session, where poll cannot see them. */
static bool tls_has(struct pktio *io)
{
	bool has;

	if (!io->tls)
		return false;
	pthread_mutex_lock(&io->tls_lock);
	has = tls_pending(io->tls);
	pthread_mutex_unlock(&io->tls_lock);
	return has;
}

/* Wait for events on the socket: 1, 0 on timeout, negative errno. */
static int wait_fd(struct pktio *io, short events, int timeout_ms)
{
	struct pollfd p = {io->fd, events, 0};
	int rc;

	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc > 0;
}

int pktio_wait(struct pktio *io, int timeout_ms)
{
	if (__atomic_load_n(&io->shut, __ATOMIC_ACQUIRE))
		return -ECONNABORTED;
	if (io->in_pos < io->in_end || tls_has(io))
		return 1;
	return wait_fd(io, POLLIN, timeout_ms);
}

int pktio_wait_or(struct pktio *io, int other_fd, int timeout_ms)
{
	struct pollfd p[2] = {{io->fd, POLLIN, 0}, {other_fd, POLLIN, 0}};
	int rc;

	if (__atomic_load_n(&io->shut, __ATOMIC_ACQUIRE))
		return -ECONNABORTED;
	if (io->in_pos < io->in_end || tls_has(io))
		return 1;
	do
		rc = poll(p, 2, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return 0;
	return p[0].revents ? 1 : 2;
}

bool pktio_pending(struct pktio *io)
{
	int n = 0;

	return io->in_pos < io->in_end || tls_has(io) ||
	       (ioctl(io->fd, FIONREAD, &n) == 0 && n > 0);
}

/* One non-blocking read from the stream: bytes, 0 at its end, -EAGAIN
 * (wait for *ev), or a negative errno. */
static ssize_t rd(struct pktio *io, void *buf, size_t n, short *ev)
{
	ssize_t r;

	if (io->tls) {
		pthread_mutex_lock(&io->tls_lock);
		r = tls_read(io->tls, buf, n, ev);
		if (r < 0 && r != -EAGAIN)
			snprintf(io->rwhy, sizeof(io->rwhy), "%s", tls_reason(io->tls));
		pthread_mutex_unlock(&io->tls_lock);
		return r;
	}
	*ev = POLLIN;
	do
		r = recv(io->fd, buf, n, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/*
 * Busy-poll for up to us µs for bytes to read, taking what arrives into the
 * input buffer: 1 when something can be received (or the stream ended or
 * failed: the receive says so), 0 when nothing came, -ECONNABORTED after
 * pktio_shutdown(). Each poll is one non-blocking recv.
 */
int pktio_spin(struct pktio *io, unsigned int us)
{
	struct timespec ts;
	int64_t end;

	if (io->in_pos < io->in_end)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)us * 1000;
	for (;;) {
		ssize_t r;
		short ev;

		if (__atomic_load_n(&io->shut, __ATOMIC_ACQUIRE))
			return -ECONNABORTED;
		r = rd(io, io->in, PKTIO_IBUF, &ev);
		if (r > 0) {
			io->in_pos = 0;
			io->in_end = (size_t)r;
			return 1;
		}
		if (r != -EAGAIN)
			return 1;
		if (ev != POLLIN) /* TLS needs to write first: not a wait to spin */
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec >= end)
			return 0;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

/* One non-blocking write: bytes taken, -EAGAIN (wait for *ev), or a
 * negative errno. */
static ssize_t wr(struct pktio *io, struct iovec *iov, int niov, short *ev)
{
	ssize_t w;

	if (io->tls) {
		pthread_mutex_lock(&io->tls_lock);
		w = tls_write(io->tls, iov[0].iov_base, iov[0].iov_len, ev);
		pthread_mutex_unlock(&io->tls_lock);
		return w;
	}
	*ev = POLLOUT;
	do {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)niov};

		w = sendmsg(io->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (w < 0 && errno == EINTR);
	return w < 0 ? -errno : w;
}

/*
 * Read exactly len bytes before the deadline: first what is buffered, then
 * from the socket, waiting only when it has nothing. Short reads go through
 * the buffer; a long remainder is received in place.
 */
static int read_full(struct pktio *io, void *buf, size_t len, int64_t deadline)
{
	uint8_t *p = buf;
	ssize_t r;
	short ev;
	int rc;

	while (len) {
		if (io->in_pos < io->in_end) {
			size_t n = io->in_end - io->in_pos;

			if (n > len)
				n = len;
			memcpy(p, io->in + io->in_pos, n);
			io->in_pos += n;
			p += n;
			len -= n;
			continue;
		}
		if (__atomic_load_n(&io->shut, __ATOMIC_ACQUIRE))
			return -ECONNABORTED;
		if (len >= PKTIO_IBUF) {
			r = rd(io, p, len, &ev);
		} else {
			r = rd(io, io->in, PKTIO_IBUF, &ev);
			if (r > 0) {
				io->in_pos = 0;
				io->in_end = (size_t)r;
				continue;
			}
		}
		if (r == -EAGAIN) {
			rc = wait_fd(io, ev, left(deadline));
			if (rc < 0)
				return rc;
			if (rc == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (r < 0)
			return (int)r;
		if (r == 0)
			return -ECONNRESET;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int grow(struct pktio *io, size_t need)
{
	uint8_t *b;
	size_t cap = io->cap ? io->cap : 4096;

	if (need <= io->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	b = realloc(io->buf, cap);
	if (!b)
		return -ENOMEM;
	io->buf = b;
	io->cap = cap;
	return 0;
}

/* The earlier of a call's deadline (-1: none) and the hard one. */
static int64_t bounded(const struct pktio *io, int64_t deadline)
{
	if (!io->hard)
		return deadline;
	return deadline < 0 || deadline > io->hard ? io->hard : deadline;
}

void pktio_set_deadline(struct pktio *io, int ms)
{
	io->hard = ms > 0 ? now_ms() + ms : 0;
}

int pktio_recv(struct pktio *io, int timeout_ms, struct wire_pkt *pkt, char *reason, size_t n)
{
	int64_t deadline = bounded(io, timeout_ms < 0 ? -1 : now_ms() + timeout_ms);
	uint8_t h[WIRE_HDR_SIZE];
	struct wire_hdr hdr;
	int rc;

	for (;;) {
		rc = read_full(io, h, sizeof(h), deadline);
		if (rc == -EPROTO && io->tls) /* what TLS refused */
			snprintf(reason, n, "TLS: %s", io->rwhy);
		if (rc < 0)
			return rc;
		rc = wire_hdr_decode(h, &hdr, reason, n);
		if (rc < 0)
			return rc;
		rc = wire_pkt_check(&hdr, io->stream, io->features, reason, n);
		if (rc < 0 && rc != -ENOMSG)
			return rc;
		if (grow(io, hdr.len ? hdr.len : 1) < 0)
			return -ENOMEM;
		/* the rest of a packet whose header arrived is not subject to
		 * the caller's idle timeout, only to a generous one */
		rc = read_full(io, io->buf, hdr.len, bounded(io, now_ms() + 60000));
		if (rc == -EPROTO && io->tls)
			snprintf(reason, n, "TLS: %s", io->rwhy);
		if (rc < 0)
			return rc;
		if (rc == 0 && wire_pkt_check(&hdr, io->stream, io->features, NULL, 0) == -ENOMSG)
			continue; /* ignorable, not understood: skipped */
		return wire_pkt_decode(&hdr, io->buf, hdr.len, pkt, reason, n);
	}
}

int pktio_send(struct pktio *io, const struct wire_pkt *pkt, int timeout_ms)
{
	return pktio_sendv(io, pkt, 1, timeout_ms);
}

/*
 * The heads are encoded one after the other into sbuf; a packet without
 * data (a barrier) is all head, so the heads of a barrier and the P_DATA
 * after it form one buffer, and the whole goes out in one sendmsg (one
 * TLS record up to the data): the peer wakes once for both.
 */
int pktio_sendv(struct pktio *io, const struct wire_pkt *pkts, int n, int timeout_ms)
{
	int64_t deadline = bounded(io, timeout_ms < 0 ? -1 : now_ms() + timeout_ms);
	struct iovec iov[2 * PKTIO_MAXV];
	struct iovec *cur = iov;
	int niov = 0;
	size_t total = 0, used = 0;
	bool in_sbuf = false; /* the last iovec is the sbuf's, to extend */
	ssize_t w;

	if (n < 1 || n > PKTIO_MAXV)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		const struct wire_pkt *pkt = &pkts[i];
		size_t whole, rest;
		int len;

		len = wire_pkt_encode_head(pkt, io->sbuf + used, PKTIO_SBUF - used);
		if (len < 0)
			return len;
		whole = WIRE_HDR_SIZE + (size_t)wire_pkt_len(pkt);
		rest = whole - (size_t)len; /* the data, not copied */
		if (io->tls && rest && rest <= PKTIO_SBUF - used - (size_t)len) {
			/* TLS writes one buffer at a time: one record, not two,
			 * for a small packet */
			memcpy(io->sbuf + used + len, pkt->data + pkt->data_len - rest, rest);
			len += (int)rest;
			rest = 0;
		}
		if (in_sbuf)
			iov[niov - 1].iov_len += (size_t)len;
		else
			iov[niov++] = (struct iovec){io->sbuf + used, (size_t)len};
		used += (size_t)len;
		in_sbuf = true;
		if (rest) {
			iov[niov++] = (struct iovec){(void *)(pkt->data + pkt->data_len - rest), rest};
			in_sbuf = false;
		}
		total += whole;
	}
	while (total) {
		short ev;
		int rc;

		if (__atomic_load_n(&io->shut, __ATOMIC_ACQUIRE))
			return -ECONNABORTED;
		w = wr(io, cur, niov, &ev);
		if (w == -EAGAIN) {
			rc = wait_fd(io, ev, left(deadline));
			if (rc < 0)
				return rc;
			if (rc == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (w < 0)
			return (int)w;
		total -= (size_t)w;
		while (w > 0 && niov) {
			if ((size_t)w >= cur->iov_len) {
				w -= (ssize_t)cur->iov_len;
				cur++;
				niov--;
			} else {
				cur->iov_base = (uint8_t *)cur->iov_base + w;
				cur->iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	return 0;
}
