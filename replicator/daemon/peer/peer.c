/*
 * peer: the connection of a resource to its peer (doc/wire-protocol.md
 * §5): listening on our address and connecting to the peer's, the
 * deterministic choice between simultaneous attempts, P_HELLO
 * negotiation, CRAM-HMAC authentication on both sockets, and reconnecting
 * every connect-int after a network failure. Before authentication
 * (§5.5) only the peer's address gets in, every phase has a deadline, and
 * a failure closes that attempt and changes no state.
 *
 * One thread per resource runs the connection: it establishes it, runs
 * the handshake (sync.c) and then receives the data stream (repl.c);
 * a second thread receives the meta stream (acks, pings) while connected.
 * State changes go through state_change(), which may be called from
 * any thread.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "epoch.h"
#include "gi.h"
#include "log.h"
#include "peer/peer-int.h"

int64_t peer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t random_id(void)
{
	uint64_t v = 0;

	while (v == 0)
		v = gi_entropy();
	return v;
}

void peer_set_conn(struct peer *p, enum state_conn c, const char *why)
{
	struct state s = resource_state(p->r);

	state_change_conn(p->r, c, s.peer, s.pdsk, why);
}

/* ---------------------------------------------------------------- sockets */

static int sockaddr_of(const struct conf_addr *a, struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (a->af && !strcmp(a->af, "ipv6")) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)a->port);
		if (inet_pton(AF_INET6, a->ip, &s6->sin6_addr) != 1)
			return -EINVAL;
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)a->port);
		if (inet_pton(AF_INET, a->ip, &s4->sin_addr) != 1)
			return -EINVAL;
		*len = sizeof(*s4);
	}
	return 0;
}

static void tune(int fd, const struct peer *p)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (p->sndbuf)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &p->sndbuf, sizeof(p->sndbuf));
}

static int listen_on(struct peer *p)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	if (sockaddr_of(&resource_cr(p->r)->me->addr, &ss, &len) < 0)
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 8) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

/* Start a non-blocking connect to the peer (from our own address). */
static int connect_start(struct peer *p)
{
	struct sockaddr_storage ss, me;
	socklen_t len, mlen;
	int fd;

	if (sockaddr_of(&resource_cr(p->r)->peer->addr, &ss, &len) < 0)
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (sockaddr_of(&resource_cr(p->r)->me->addr, &me, &mlen) == 0) {
		if (me.ss_family == AF_INET)
			((struct sockaddr_in *)&me)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&me)->sin6_port = 0;
		bind(fd, (struct sockaddr *)&me, mlen); /* best effort: the source address */
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	tune(fd, p);
	return fd;
}

/* ---------------------------------------------------------------- hello */

static void own_hello(const struct peer *p, enum wire_stream stream, uint64_t conn_id,
		      uint8_t flags, struct wire_pkt *pkt)
{
	struct wire_hello *h = &pkt->u.hello;

	memset(pkt, 0, sizeof(*pkt));
	pkt->type = WIRE_P_HELLO;
	pkt->volume = WIRE_VOL_NONE;
	h->proto_min = WIRE_PROTO_MIN;
	h->proto_max = WIRE_PROTO_MAX;
	h->stream = (uint8_t)stream;
	if (p->alg[0])
		flags |= WIRE_HELLO_AUTH | (p->auth_v1 ? 0 : WIRE_HELLO_AUTH_V2);
	h->flags = flags;
	h->features = WIRE_F_TRIM | WIRE_F_WRITE_ZEROES | WIRE_F_RLE_BITMAP | WIRE_F_REMOTE_READ |
		      WIRE_F_BARRIER_FLUSH | WIRE_F_VERIFY | WIRE_F_CSUMS;
	h->conn_id = conn_id;
	snprintf(h->node, sizeof(h->node), "%s", p->me);
	snprintf(h->res, sizeof(h->res), "%s", p->r->name);
}

/* The peer's P_HELLO is from the configured peer for this resource? */
static int check_hello(struct peer *p, struct pktio *io, const struct wire_hello *h)
{
	if (strcmp(h->res, p->r->name)) {
		peer_preauth_log(p, pktio_fd(io), "it is for resource '%.64s'", h->res);
		return -EPROTO;
	}
	if (!conf_host_has_name(resource_cr(p->r)->peer, h->node)) {
		peer_preauth_log(p, pktio_fd(io), "it claims node '%.64s', the configured peer is '%s'",
			    h->node, p->peer_name);
		return -EPROTO;
	}
	return 0;
}

/* Whose attempt survives a simultaneous connect: true if ours (§5.2). */
static bool ours_wins(const struct peer *p)
{
	int c = strcmp(p->me, p->peer_name);

	if (c == 0)
		c = strcmp(resource_cr(p->r)->me->addr.ip, resource_cr(p->r)->peer->addr.ip);
	return c > 0;
}

static int negotiate(struct peer *p, struct pktio *io, const struct wire_pkt *own,
		     const struct wire_hello *peer, struct wire_agreed *ag)
{
	char why[WIRE_REASON_MAX];
	int rc = wire_negotiate(&own->u.hello, peer, ag, why, sizeof(why));

	if (rc == -EALREADY)
		return rc;
	if (rc < 0) {
		peer_preauth_log(p, pktio_fd(io), "%s", why);
		return rc == -EACCES || rc == -EPROTONOSUPPORT ? -EACCES : rc;
	}
	pktio_set_features(io, ag->features);
	return 0;
}

/* ---------------------------------------------------------------- attempts */

/* Receive a P_HELLO on a fresh socket. */
static int recv_hello(struct peer *p, struct pktio *io, struct wire_hello *h)
{
	char why[WIRE_REASON_MAX];
	struct wire_pkt pkt;
	int rc = pktio_recv(io, p->ping_timeout_ms * 4, &pkt, why, sizeof(why));

	if (rc < 0) {
		if (rc == -ETIMEDOUT)
			peer_preauth_log(p, pktio_fd(io), "no P_HELLO in time");
		else if (rc == -ECONNRESET)
			peer_preauth_log(p, pktio_fd(io), "closed before its P_HELLO");
		else
			peer_preauth_log(p, pktio_fd(io), "bad first packet: %s", why);
		return rc;
	}
	if (pkt.type != WIRE_P_HELLO) {
		peer_preauth_log(p, pktio_fd(io), "first packet is %s, not P_HELLO",
			    wire_type_name(pkt.type));
		return -EPROTO;
	}
	*h = pkt.u.hello;
	return 0;
}

static bool stopping(struct peer *p)
{
	return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* Sleep up to ms, or until told to stop; accepted sockets are refused. */
void peer_sleep(struct peer *p, int ms)
{
	int64_t end = peer_now_ms() + ms;
	struct pollfd f[2] = {{p->wake[0], POLLIN, 0}, {p->lfd, POLLIN, 0}};

	while (!stopping(p) && peer_now_ms() < end) {
		int n = poll(f, p->lfd >= 0 ? 2 : 1, (int)(end - peer_now_ms()));

		if (n > 0 && (f[1].revents & POLLIN)) {
			int fd = peer_accept(p);

			if (fd >= 0) { /* the peer retries within connect-int */
				char addr[INET6_ADDRSTRLEN + 16];

				peer_addr_of_fd(fd, addr, sizeof(addr));
				log_res(LOG_DEBUG, p->r->name,
					"connection from %s closed: between two attempts of ours", addr);
				close(fd);
			}
		}
	}
}

/* Accept one incoming socket and read its P_HELLO. */
static int accept_one(struct peer *p, struct pktio **out, struct wire_hello *h)
{
	int fd = peer_accept(p), rc;
	struct pktio *io;

	if (fd < 0)
		return fd;
	tune(fd, p);
	rc = pktio_new(fd, WIRE_STREAM_DATA, &io);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	pktio_set_deadline(io, PEER_PREAUTH_MS);
	rc = recv_hello(p, io, h);
	if (rc == 0)
		rc = check_hello(p, io, h);
	if (rc < 0) {
		pktio_free(io);
		return rc;
	}
	if (h->stream == WIRE_STREAM_META)
		pktio_set_stream(io, WIRE_STREAM_META);
	*out = io;
	return 0;
}

/* Answer an incoming attempt as a duplicate and close it. */
static void refuse_duplicate(struct peer *p, struct pktio *io, const struct wire_hello *h)
{
	struct wire_pkt own;

	own_hello(p, h->stream, h->conn_id, WIRE_HELLO_DUPLICATE, &own);
	pktio_send(io, &own, 1000);
	pktio_free(io);
}

/*
 * Establish the data socket: our own attempt every connect-int, the
 * peer's attempts on the listener, one survivor (§5.2). 0 with
 * p->data, p->conn_id, p->initiator set; -ECANCELED when told to stop;
 * -EACCES for a refusal that needs the operator (StandAlone).
 */
static int establish_data(struct peer *p)
{
	struct pktio *out = NULL, *in;
	enum { IDLE, CONNECTING, HELLO_WAIT } st = IDLE;
	int64_t next = peer_now_ms(), deadline = 0;
	struct wire_hello h;
	struct wire_pkt own;
	struct wire_agreed ag;
	uint64_t my_id = 0;
	int rc;

	for (;;) {
		struct pollfd f[3] = {{p->wake[0], POLLIN, 0}, {p->lfd, POLLIN, 0}, {-1, 0, 0}};
		int64_t t = peer_now_ms(), wait;

		if (stopping(p)) {
			pktio_free(out);
			return -ECANCELED;
		}
		if (p->lfd < 0 && t >= next) {
			p->lfd = listen_on(p);
			if (p->lfd >= 0)
				log_res(LOG_INFO, p->r->name, "listening on %s:%u now",
					resource_cr(p->r)->me->addr.ip, resource_cr(p->r)->me->addr.port);
		}
		if (st == IDLE && t >= next) {
			int fd = connect_start(p);

			if (fd >= 0 && pktio_new(fd, WIRE_STREAM_DATA, &out) == 0) {
				pktio_set_deadline(out, PEER_PREAUTH_MS);
				st = CONNECTING;
				deadline = t + p->connect_int_ms;
				my_id = random_id();
			} else if (fd >= 0) {
				close(fd);
			}
			next = t + p->connect_int_ms;
		}
		if (st != IDLE && t >= deadline) {
			pktio_free(out);
			out = NULL;
			st = IDLE;
		}
		if (st != IDLE) {
			f[2].fd = pktio_fd(out);
			f[2].events = st == CONNECTING ? POLLOUT : POLLIN;
		}
		wait = (st != IDLE ? deadline : next) - t;
		if (poll(f, 3, wait < 0 ? 0 : (int)wait) < 0 && errno != EINTR)
			return -errno;

		if (st == CONNECTING && f[2].revents) {
			int err = 0;
			socklen_t l = sizeof(err);

			getsockopt(pktio_fd(out), SOL_SOCKET, SO_ERROR, &err, &l);
			if (err || (f[2].revents & (POLLERR | POLLHUP))) {
				pktio_free(out);
				out = NULL;
				st = IDLE;
			} else {
				own_hello(p, WIRE_STREAM_DATA, my_id, 0, &own);
				if (pktio_send(out, &own, p->ping_timeout_ms * 4) == 0) {
					st = HELLO_WAIT;
				} else {
					pktio_free(out);
					out = NULL;
					st = IDLE;
				}
			}
		} else if (st == HELLO_WAIT && f[2].revents) {
			rc = recv_hello(p, out, &h);
			if (rc == 0)
				rc = check_hello(p, out, &h);
			if (rc == 0) {
				own_hello(p, WIRE_STREAM_DATA, my_id, 0, &own);
				rc = negotiate(p, out, &own, &h, &ag);
			}
			if (rc == 0) {
				pthread_mutex_lock(&p->lock);
				p->data = out;
				pthread_mutex_unlock(&p->lock);
				p->conn_id = my_id;
				p->initiator = true;
				p->agreed = ag;
				snprintf(p->peer_node, sizeof(p->peer_node), "%s", h.node);
				return 0;
			}
			pktio_free(out); /* before authentication: no state changes (§5.5) */
			out = NULL;
			st = IDLE;
		}
		if (f[1].revents & POLLIN) {
			rc = accept_one(p, &in, &h);
			if (rc < 0)
				continue;
			if (h.stream != WIRE_STREAM_DATA) {
				refuse_duplicate(p, in, &h); /* a meta socket of a dead attempt */
				continue;
			}
			if (st != IDLE && ours_wins(p)) {
				refuse_duplicate(p, in, &h);
				continue;
			}
			/* the incoming attempt survives; ours (if any) is dropped */
			pktio_free(out);
			out = NULL;
			st = IDLE;
			own_hello(p, WIRE_STREAM_DATA, h.conn_id, 0, &own);
			rc = pktio_send(in, &own, p->ping_timeout_ms * 4);
			if (rc == 0)
				rc = negotiate(p, in, &own, &h, &ag);
			if (rc == 0) {
				pthread_mutex_lock(&p->lock);
				p->data = in;
				pthread_mutex_unlock(&p->lock);
				p->conn_id = h.conn_id;
				p->initiator = false;
				p->agreed = ag;
				snprintf(p->peer_node, sizeof(p->peer_node), "%s", h.node);
				return 0;
			}
			pktio_free(in);
		}
	}
}

/* The meta socket of the established attempt (§5.1 step 5). */
static int establish_meta(struct peer *p)
{
	int64_t deadline = peer_now_ms() + p->ping_timeout_ms * 4 + p->connect_int_ms;
	struct wire_pkt own;
	struct wire_hello h;
	struct wire_agreed ag;
	struct pktio *io;
	int rc, fd;

	if (p->initiator) {
		struct pollfd f;

		fd = connect_start(p);
		if (fd < 0)
			return fd;
		rc = pktio_new(fd, WIRE_STREAM_META, &io);
		if (rc < 0) {
			close(fd);
			return rc;
		}
		pktio_set_deadline(io, PEER_PREAUTH_MS);
		f = (struct pollfd){fd, POLLOUT, 0};
		if (poll(&f, 1, p->connect_int_ms) <= 0 || (f.revents & (POLLERR | POLLHUP))) {
			pktio_free(io);
			return -ETIMEDOUT;
		}
		own_hello(p, WIRE_STREAM_META, p->conn_id, 0, &own);
		rc = pktio_send(io, &own, p->ping_timeout_ms * 4);
		if (rc == 0)
			rc = recv_hello(p, io, &h);
		if (rc == 0)
			rc = check_hello(p, io, &h);
		if (rc == 0)
			rc = negotiate(p, io, &own, &h, &ag);
	} else {
		for (;;) {
			struct pollfd f = {p->lfd, POLLIN, 0};
			int64_t left = deadline - peer_now_ms();

			if (left <= 0 && !stopping(p))
				peer_preauth_log(p, pktio_fd(p->data),
						 "no meta socket within %d ms of the data socket",
						 p->ping_timeout_ms * 4 + p->connect_int_ms);
			if (left <= 0 || stopping(p))
				return -ETIMEDOUT;
			if (poll(&f, 1, (int)left) <= 0)
				continue;
			rc = accept_one(p, &io, &h);
			if (rc < 0)
				continue;
			if (h.stream != WIRE_STREAM_META || h.conn_id != p->conn_id) {
				refuse_duplicate(p, io, &h);
				continue;
			}
			break;
		}
		own_hello(p, WIRE_STREAM_META, p->conn_id, 0, &own);
		rc = pktio_send(io, &own, p->ping_timeout_ms * 4);
		if (rc == 0)
			rc = negotiate(p, io, &own, &h, &ag);
	}
	if (rc == 0 && (ag.features != p->agreed.features || strcmp(h.node, p->peer_node))) {
		peer_preauth_log(p, pktio_fd(io), "its meta socket does not match its data socket");
		rc = -EPROTO;
	}
	if (rc == 0)
		rc = peer_authenticate(p, io, AUTH_META);
	if (rc < 0) {
		pktio_free(io);
		return rc;
	}
	pktio_set_deadline(io, 0);
	/* the meta socket is read by its own thread: no data packets on it */
	pthread_mutex_lock(&p->lock);
	p->meta = io;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* ---------------------------------------------------------------- the thread */

static void close_sockets(struct peer *p)
{
	struct pktio *d, *m;

	pthread_mutex_lock(&p->lock);
	d = p->data;
	m = p->meta;
	p->data = p->meta = NULL;
	pthread_mutex_unlock(&p->lock);
	pktio_free(d);
	pktio_free(m);
}

static const char *conn_error_name(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return "Timeout";
	case -ECONNRESET:
	case -EPIPE:
		return "BrokenPipe";
	case -EPROTO:
	case -EBADMSG:
	case -E2BIG:
		return "ProtocolError";
	default:
		return "NetworkFailure";
	}
}

static enum state_conn conn_error_state(int rc)
{
	switch (rc) {
	case -ETIMEDOUT:
		return CONN_TIMEOUT;
	case -ECONNRESET:
	case -EPIPE:
		return CONN_BROKENPIPE;
	case -EPROTO:
	case -EBADMSG:
	case -E2BIG:
		return CONN_PROTOCOLERROR;
	default:
		return CONN_NETWORKFAILURE;
	}
}

static void *peer_thread(void *arg)
{
	char addr[INET6_ADDRSTRLEN + 16];
	struct peer *p = arg;
	int rc;

	while (!stopping(p)) {
		peer_set_conn(p, CONN_WFCONNECTION, NULL);
		rc = establish_data(p);
		if (rc == -ECANCELED)
			break;
		if (rc == 0)
			rc = peer_authenticate(p, p->data, AUTH_DATA);
		if (rc == 0) {
			pktio_set_deadline(p->data, 0);
			rc = establish_meta(p);
		}
		if (rc < 0) { /* before authentication: logged, nothing else changes (§5.5) */
			close_sockets(p);
			if (!stopping(p))
				peer_sleep(p, rc == -EACCES ? p->connect_int_ms : 500);
			continue;
		}
		peer_addr_of_fd(pktio_fd(p->data), addr, sizeof(addr));
		log_res(LOG_INFO, p->r->name, "connected to %s (%s), %s%s", p->peer_node, addr,
			p->initiator ? "as initiator" : "as acceptor",
			!p->alg[0]		? ", not authenticated"
			: p->agreed.auth_v2 ? ", authenticated (cram-hmac-version 2)"
					    : ", authenticated (cram-hmac-version 1)");
		if (p->pre_suppressed) {
			pthread_mutex_lock(&p->lock);
			log_res(LOG_WARNING, p->r->name,
				"%u refusals before this connection were not logged; the latest: %s",
				p->pre_suppressed, p->pre_last);
			pthread_mutex_unlock(&p->lock);
		}
		p->pre_logged_ms = 0;
		p->pre_suppressed = 0;
		peer_set_conn(p, CONN_WFREPORTPARAMS, NULL);
		rc = peer_session(p); /* handshake, then replication until an error */
		close_sockets(p);
		if (stopping(p))
			break;
		if (rc == -EACCES) {
			peer_set_conn(p, CONN_STANDALONE, "after the handshake");
			break;
		}
		if (rc == -ERESTART) { /* a fresh handshake was asked for */
			peer_set_conn(p, CONN_UNCONNECTED, "renegotiating");
			continue;
		}
		log_res(LOG_WARNING, p->r->name, "connection lost: %s (%s)",
			rc < 0 ? strerror(-rc) : "closed", conn_error_name(rc));
		peer_set_conn(p, conn_error_state(rc), NULL);
		peer_set_conn(p, CONN_UNCONNECTED, NULL);
		peer_sleep(p, 200);
	}
	__atomic_store_n(&p->exited, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The thread gave up by itself (StandAlone after a refusal)? */
bool peer_exited(const struct resource *r)
{
	return r->peer && __atomic_load_n(&r->peer->exited, __ATOMIC_ACQUIRE);
}

static void load_conf(struct peer *p)
{
	const struct conf *c = tandemd_conf(p->r->d);
	const struct conf_res *cr = resource_cr(p->r);
	const char *s;

	p->connect_int_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "connect-int") * 1000;
	p->ping_int_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "ping-int") * 1000;
	p->ping_timeout_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "ping-timeout") * 100;
	p->timeout_ms = (int)conf_res_num(c, cr, CONF_SECT_NET, "timeout") * 100;
	p->ko_count = (int)conf_res_num(c, cr, CONF_SECT_NET, "ko-count");
	p->sndbuf = (int)conf_res_num(c, cr, CONF_SECT_NET, "sndbuf-size");
	s = conf_res_text(c, cr, CONF_SECT_NET, "protocol");
	p->protocol = s && s[0] == 'A' ? WIRE_PROTO_A : s && s[0] == 'B' ? WIRE_PROTO_B
									   : WIRE_PROTO_C;
	s = conf_res_text(c, cr, CONF_SECT_NET, "cram-hmac-alg");
	snprintf(p->alg, sizeof(p->alg), "%s", s ? s : "");
	s = conf_res_text(c, cr, CONF_SECT_NET, "shared-secret");
	snprintf(p->secret, sizeof(p->secret), "%s", s ? s : "");
	s = conf_res_text(c, cr, CONF_SECT_NET, "cram-hmac-version");
	p->auth_v1 = s && !strcmp(s, "1");
	snprintf(p->me, sizeof(p->me), "%s", conf_hostname(c));
	snprintf(p->peer_name, sizeof(p->peer_name), "%s",
		 cr->peer && cr->peer->n_names ? cr->peer->names[0] : "(peer)");
}

int peer_start(struct resource *r, bool discard_my_data, struct reply_err *e)
{
	struct peer *p;
	int rc;

	if (r->peer)
		return 0;
	if (!resource_cr(r)->peer || !resource_cr(r)->peer->addr.ip || !resource_cr(r)->me->addr.ip) {
		ERRF(e, 10, "%s has no peer address configured", r->name);
		return -EINVAL;
	}
	if (peer_refuse_unauthenticated(r, e) < 0)
		return -EACCES;
	p = calloc(1, sizeof(*p));
	if (!p) {
		ERRF(e, 20, "out of memory");
		return -ENOMEM;
	}
	p->r = r;
	p->discard_my_data = discard_my_data;
	load_conf(p);
	pthread_mutex_init(&p->send_lock, NULL);
	pthread_mutex_init(&p->meta_lock, NULL);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->fl_cond, NULL);
	if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	p->lfd = listen_on(p);
	if (p->lfd < 0) /* retried every connect-int (a floating address may come later) */
		log_res(LOG_WARNING, r->name,
			"cannot listen on %s:%u yet: %s (is the address on this node, the port "
			"free?); retrying every connect-int",
			resource_cr(r)->me->addr.ip, resource_cr(r)->me->addr.port, strerror(-p->lfd));
	if (!p->alg[0])
		log_res(LOG_WARNING, r->name,
			"allow-unauthenticated: the peer is not authenticated; anything that "
			"connects from %s is taken for it",
			resource_cr(r)->peer->addr.ip);
	r->peer = p;
	/* StandAlone -> Unconnected -> WFConnection, as the state table says */
	if (resource_state(r).conn == CONN_STANDALONE)
		state_change_conn(r, CONN_UNCONNECTED, ROLE_UNKNOWN, DISK_DUNKNOWN, "connect");
	state_change_conn(r, CONN_WFCONNECTION, ROLE_UNKNOWN, DISK_DUNKNOWN, NULL);
	if (pthread_create(&p->thread, NULL, peer_thread, p) != 0) {
		r->peer = NULL;
		if (p->lfd >= 0)
			close(p->lfd);
		close(p->wake[0]);
		close(p->wake[1]);
		rc = -EAGAIN;
		goto fail;
	}
	return 0;
fail:
	ERRF(e, 20, "cannot start the connection: %s", strerror(-rc));
	pthread_mutex_destroy(&p->send_lock);
	pthread_mutex_destroy(&p->meta_lock);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->fl_cond);
	free(p);
	return rc;
}

/* Disconnect: stop the thread and close everything; StandAlone. */
void peer_stop(struct resource *r)
{
	struct peer *p = r->peer;

	if (!p)
		return;
	if (peer_live(r))
		peer_drain(r, p->timeout_ms > 0 ? p->timeout_ms : 6000);
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	if (write(p->wake[1], "x", 1) < 0)
		log_res(LOG_WARNING, r->name, "cannot wake the connection thread");
	pthread_mutex_lock(&p->lock);
	if (p->data)
		pktio_shutdown(p->data);
	if (p->meta)
		pktio_shutdown(p->meta);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (p->lfd >= 0)
		close(p->lfd);
	close(p->wake[0]);
	close(p->wake[1]);
	r->peer = NULL;
	pthread_mutex_destroy(&p->send_lock);
	pthread_mutex_destroy(&p->meta_lock);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->fl_cond);
	epoch_free(p->ep);
	free(p);
	state_change_conn(r, CONN_STANDALONE, ROLE_UNKNOWN, DISK_DUNKNOWN, "disconnect");
}
