/*
 * peer-conn: establishing the connection to the peer (doc/wire-protocol.md
 * §5.1-§5.5): our own attempt every connect-int, the peer's attempts on
 * the listener, the choice between simultaneous ones, and the data socket
 * followed by its meta socket.
 *
 * Every socket in setup is driven by its own lib/setup machine, all of
 * them from one poll loop on the resource's connection thread, each with
 * its own deadline of PEER_PREAUTH_MS. So a socket that stalls, or sends
 * garbage, holds up nothing but itself. At most PEER_SETUP_MAX incoming
 * sockets are in setup at once; a new one evicts the one that got least
 * far, oldest first, so a flood of stalled connections from the peer's
 * address cannot keep the real peer out (doc/security.md §3). Our own
 * attempt is dropped only when an incoming one has authenticated, or when
 * the peer says it keeps its own (§5.2). Nothing here changes any state
 * of the resource before a socket is authenticated (§5.5).
 *
 * With TLS (§5.6) each socket first runs its TLS handshake, from the same
 * loop and within the same deadline; the setup machine's bytes then go
 * through the session, which the socket's pktio takes over.
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
#include <unistd.h>

#include "gi.h"
#include "log.h"
#include "peer/peer-int.h"
#include "setup.h"

#define PEER_SETUP_MAX 8 /* incoming sockets in setup at once */
#define PEER_BACKLOG 64	 /* so a burst does not drop the peer's SYN */

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

int peer_listen(struct peer *p)
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
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, PEER_BACKLOG) < 0) {
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

/* ---------------------------------------------------------------- attempts */

struct attempt {
	int fd;		 /* -1: a free slot */
	struct setup *s;
	int64_t start, deadline;
	bool ours;	 /* we connect */
	bool connecting; /* ours: connect() not finished */
	bool got;	 /* some bytes of the setup machine came */
	struct tls *tls; /* with TLS: the session */
	bool tls_done;	 /* its handshake is complete */
	short tls_ev;	 /* the poll events the session waits for */
	char *fail;	 /* a failure of the socket itself, to log (malloc'd) */
	char addr[PEER_ADDR_MAX];
};

/* One call of establish(): the socket it looks for and the sockets in setup. */
struct est {
	struct peer *p;
	enum wire_stream stream;
	struct setup_conf sc;
	struct attempt at[1 + PEER_SETUP_MAX]; /* [0]: ours */
	int64_t next; /* our next attempt */
};

static void at_close(struct attempt *a)
{
	setup_free(a->s);
	tls_free(a->tls);
	free(a->fail);
	if (a->fd >= 0)
		close(a->fd);
	a->s = NULL;
	a->tls = NULL;
	a->fail = NULL;
	a->fd = -1;
}

/* The socket failed below the setup machine (TLS): settle() logs why. */
static void at_fail(struct attempt *a, const char *why)
{
	if (!a->fail)
		a->fail = strdup(why);
	setup_eof(a->s);
}

/* A send or receive failed: the session's reason with TLS, else the
 * machine's. */
static void at_tls_fail(struct attempt *a)
{
	char why[TLS_REASON_MAX + 8];

	if (!a->tls) {
		setup_eof(a->s);
		return;
	}
	snprintf(why, sizeof(why), "TLS: %s", tls_reason(a->tls));
	at_fail(a, why);
}

/* Bytes out and in, through the TLS session once there is one. */
static ssize_t at_send(struct attempt *a, const void *o, size_t n)
{
	ssize_t w;

	if (a->tls)
		return tls_write(a->tls, o, n, &a->tls_ev);
	w = send(a->fd, o, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return w < 0 ? -errno : w;
}

static ssize_t at_recv(struct attempt *a, void *buf, size_t n)
{
	ssize_t r;

	if (a->tls)
		return tls_read(a->tls, buf, n, &a->tls_ev);
	r = recv(a->fd, buf, n, MSG_DONTWAIT);
	return r < 0 ? -errno : r;
}

/*
 * A send failed. With TLS 1.3 the client's handshake ends before the
 * server has checked its certificate: a server that refuses it sends an
 * alert and closes, and our next send (the P_HELLO) meets the reset while
 * the alert, which says why, waits unread. Read it, so that the refusal
 * names the peer's reason rather than "Connection reset by peer".
 */
static void at_send_fail(struct attempt *a)
{
	char buf[64];

	if (a->tls)
		(void)at_recv(a, buf, sizeof(buf)); /* tls_reason(): the alert, if any */
	at_tls_fail(a);
}

/* Send what the machine holds, without waiting: 0 when all went out,
 * -EAGAIN when some is left, or the socket's error. */
static int at_flush(struct attempt *a)
{
	for (;;) {
		size_t n;
		const void *o = setup_output(a->s, &n);
		ssize_t w;

		if (!n)
			return 0;
		w = at_send(a, o, n);
		if (w == -EINTR)
			continue;
		if (w < 0)
			return (int)w;
		setup_sent(a->s, (size_t)w);
	}
}

/* Send the rest by a's deadline: 0 or a negative errno. */
static int at_flush_all(struct attempt *a)
{
	int rc;

	while ((rc = at_flush(a)) == -EAGAIN) {
		struct pollfd f = {a->fd, a->tls ? a->tls_ev : POLLOUT, 0};
		int64_t left = a->deadline - peer_now_ms();

		if (left <= 0 || poll(&f, 1, (int)left) == 0)
			return -ETIMEDOUT;
	}
	return rc;
}

/* Move a's bytes both ways as far as the socket allows, without waiting. */
static void at_io(struct attempt *a)
{
	uint8_t buf[SETUP_PKT_MAX];
	int rc;

	if (a->connecting) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err) {
			setup_eof(a->s); /* ours did not get through: no log */
			return;
		}
		a->connecting = false;
	}
	if (a->tls && !a->tls_done) {
		char why[TLS_REASON_MAX + 32];

		rc = tls_handshake(a->tls, &a->tls_ev);
		if (rc == -EAGAIN)
			return;
		if (rc < 0) {
			snprintf(why, sizeof(why), "TLS handshake failed: %s", tls_reason(a->tls));
			at_fail(a, why);
			return;
		}
		a->tls_done = true;
	}
	for (;;) {
		size_t want = setup_want(a->s);
		ssize_t r;

		rc = at_flush(a);
		if (rc < 0 && rc != -EAGAIN) {
			at_send_fail(a);
			return;
		}
		if (!want)
			return;
		r = at_recv(a, buf, want < sizeof(buf) ? want : sizeof(buf));
		if (r == -EINTR)
			continue;
		if (r == -EAGAIN)
			return;
		if (r < 0) {
			at_tls_fail(a);
			return;
		}
		if (r == 0) {
			setup_eof(a->s);
			return;
		}
		if (!a->got && !a->tls && tls_looks_like_hello(buf, (size_t)r)) {
			at_fail(a, "the peer speaks TLS: set net { tls yes; } on both nodes, or on "
				   "neither");
			return;
		}
		a->got = true;
		setup_input(a->s, buf, (size_t)r);
	}
}

/* A TLS session for a's socket, if the resource has TLS. */
static int at_tls(struct est *e, struct attempt *a, enum tls_role role)
{
	const struct conf_host *peer = resource_cr(e->p->r)->peer;

	a->tls = NULL;
	a->tls_done = false;
	a->tls_ev = role == TLS_CLIENT ? POLLOUT : POLLIN;
	a->fail = NULL;
	if (!e->p->tls)
		return 0;
	return tls_new(e->p->tls, a->fd, role, (const char *const *)peer->names, peer->n_names,
		       &a->tls);
}

static int start_ours(struct est *e, uint64_t conn_id)
{
	struct attempt *a = &e->at[0];
	int fd = connect_start(e->p);

	if (fd < 0)
		return fd;
	if (setup_new(&e->sc, SETUP_INITIATOR, e->stream, conn_id, &a->s) < 0) {
		close(fd);
		return -ENOMEM;
	}
	a->fd = fd;
	if (at_tls(e, a, TLS_CLIENT) < 0) {
		at_close(a);
		return -ENOMEM;
	}
	a->ours = true;
	a->connecting = true;
	a->got = false;
	a->start = peer_now_ms();
	a->deadline = a->start + PEER_PREAUTH_MS;
	snprintf(a->addr, sizeof(a->addr), "%s:%u", resource_cr(e->p->r)->peer->addr.ip,
		 resource_cr(e->p->r)->peer->addr.port);
	return 0;
}

/* How far an incoming attempt got (nothing, some bytes, its P_HELLO): the
 * one to evict got least far. */
static int progress(const struct attempt *a)
{
	return setup_peer_hello(a->s) ? 2 : a->got ? 1 : 0;
}

/* Accept one socket into a slot, evicting one if all are taken: 0, or
 * -EAGAIN when none waits. */
static int accept_in(struct est *e)
{
	struct peer *p = e->p;
	struct attempt *a = NULL, *victim = NULL;
	char addr[PEER_ADDR_MAX];
	int fd = peer_accept(p, addr, sizeof(addr));

	if (fd < 0)
		return fd == -EPERM ? 0 : fd;
	for (int i = 1; i <= PEER_SETUP_MAX && !a; i++)
		if (e->at[i].fd < 0)
			a = &e->at[i];
	for (int i = 1; i <= PEER_SETUP_MAX && !a; i++) {
		struct attempt *c = &e->at[i];

		if (!victim || progress(c) < progress(victim) ||
		    (progress(c) == progress(victim) && c->start < victim->start))
			victim = c;
	}
	if (!a) {
		peer_preauth_log(p, victim->addr,
				 "%d connections from the peer's address are in setup; this one "
				 "got least far (%s) and is closed for a new one",
				 PEER_SETUP_MAX, setup_phase_name(victim->s));
		at_close(victim);
		a = victim;
	}
	tune(fd, p);
	if (setup_new(&e->sc, SETUP_ACCEPTOR, 0, 0, &a->s) < 0) {
		close(fd);
		return -ENOMEM;
	}
	a->fd = fd;
	if (at_tls(e, a, TLS_SERVER) < 0) {
		at_close(a);
		return -ENOMEM;
	}
	a->ours = false;
	a->connecting = false;
	a->got = false;
	a->start = peer_now_ms();
	a->deadline = a->start + PEER_PREAUTH_MS;
	snprintf(a->addr, sizeof(a->addr), "%s", addr);
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

/* An incoming P_HELLO is in: keep the attempt, or answer "duplicate". */
static void decide(struct est *e, struct attempt *a)
{
	const struct wire_hello *h = setup_peer_hello(a->s);
	bool keep;

	if (e->stream == WIRE_STREAM_DATA)
		/* a meta socket of a dead attempt, or the loser of a simultaneous one */
		keep = h->stream == WIRE_STREAM_DATA && !(e->at[0].fd >= 0 && ours_wins(e->p));
	else
		keep = h->stream == WIRE_STREAM_META && !e->p->initiator &&
		       h->conn_id == e->p->conn_id;
	if (keep)
		setup_accept(a->s);
	else
		setup_refuse(a->s);
	at_io(a);
}

static void close_all(struct est *e, const struct attempt *except)
{
	for (int i = 0; i <= PEER_SETUP_MAX; i++)
		if (&e->at[i] != except && e->at[i].fd >= 0)
			at_close(&e->at[i]);
}

/*
 * Act on where a's machine stands. 1 when it is the socket looked for
 * (authenticated, its output sent), else 0; a failed or refused one is
 * closed, and a failure logged.
 */
static int settle(struct est *e, struct attempt *a)
{
	switch (setup_status(a->s)) {
	case SETUP_RUNNING:
		return 0;
	case SETUP_HELLO:
		decide(e, a);
		return a->fd >= 0 && setup_status(a->s) != SETUP_HELLO ? settle(e, a) : 0;
	case SETUP_DONE:
		if (at_flush_all(a) < 0) {
			peer_preauth_log(e->p, a->addr, "it does not read our last packet");
			at_close(a);
			return 0;
		}
		return 1;
	case SETUP_DUPLICATE:
		log_res(LOG_DEBUG, e->p->r->name, "connection to %s closed: the peer keeps its own",
			a->addr);
		at_close(a);
		return 0;
	case SETUP_REFUSED:
		at_flush(a); /* "duplicate": best effort, a fresh socket has room */
		log_res(LOG_DEBUG, e->p->r->name, "connection from %s answered as a duplicate",
			a->addr);
		at_close(a);
		return 0;
	case SETUP_FAILED:
		if (!a->fail)
			at_flush(a); /* our P_HELLO, if negotiation failed: the peer learns why */
		if (!a->ours || !a->connecting)
			peer_preauth_log(e->p, a->addr, "%s", a->fail ? a->fail : setup_reason(a->s));
		at_close(a);
		return 0;
	}
	return 0;
}

/* The attempt a won: its socket becomes p->data or p->meta. */
static int take(struct est *e, struct attempt *a)
{
	struct peer *p = e->p;
	const struct wire_agreed *ag = setup_agreed(a->s);
	const struct wire_hello *h = setup_peer_hello(a->s);
	struct pktio *io;
	int rc;

	if (e->stream == WIRE_STREAM_META &&
	    (ag->features != p->agreed.features || strcmp(h->node, p->peer_node))) {
		peer_preauth_log(p, a->addr, "its meta socket does not match its data socket");
		at_close(a);
		return -EPROTO;
	}
	rc = pktio_new(a->fd, e->stream, &io);
	if (rc < 0) {
		at_close(a);
		return rc;
	}
	a->fd = -1; /* pktio owns it now, and the TLS session */
	if (a->tls) {
		if (e->stream == WIRE_STREAM_DATA)
			tls_describe(a->tls, p->tls_desc, sizeof(p->tls_desc));
		pktio_set_tls(io, a->tls);
		a->tls = NULL;
	}
	pktio_set_features(io, ag->features);
	if (e->stream == WIRE_STREAM_DATA) {
		p->conn_id = ag->conn_id;
		p->initiator = a->ours;
		p->agreed = *ag;
		snprintf(p->peer_node, sizeof(p->peer_node), "%s", h->node);
		snprintf(p->peer_addr, sizeof(p->peer_addr), "%s", a->addr);
	}
	pthread_mutex_lock(&p->lock);
	if (e->stream == WIRE_STREAM_DATA)
		p->data = io;
	else
		p->meta = io;
	pthread_mutex_unlock(&p->lock);
	at_close(a);
	return 0;
}

/* The authentication as configured now, for the attempts from now on:
 * the secret (adjust may have changed it) and new TLS files, if they
 * changed; a set that does not load is logged once and the loaded one
 * kept. Setups in flight may fail on the change; they are retried. */
static void auth_reload(struct est *e)
{
	struct peer *p = e->p;
	char why[TLS_REASON_MAX + 256];
	int rc;

	peer_load_auth(p);
	e->sc.alg = p->alg;
	e->sc.secret = p->secret;
	e->sc.secret_len = strlen(p->secret);
	e->sc.auth_v1 = p->auth_v1;
	rc = peer_tls_load(p, why, sizeof(why));

	if (rc < 0 && rc != -EALREADY)
		log_res(LOG_ERR, p->r->name, "TLS: %s; %s", why,
			p->tls ? "connecting with the files loaded before until it is fixed"
			       : "cannot connect until it is fixed");
}

static bool stopping(struct peer *p)
{
	return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* The poll loop of one socket's establishment; until: 0 for none. */
static int establish(struct est *e, int64_t until)
{
	struct peer *p = e->p;
	struct pollfd f[2 + 1 + PEER_SETUP_MAX];
	int idx[1 + PEER_SETUP_MAX];

	for (;;) {
		int64_t t = peer_now_ms(), wake = until ? until : t + 60000;
		int nf = 2, rc;

		if (stopping(p))
			return -ECANCELED;
		if (p->lfd < 0 && t >= e->next) {
			p->lfd = peer_listen(p);
			if (p->lfd >= 0)
				log_res(LOG_INFO, p->r->name, "listening on %s:%u now",
					resource_cr(p->r)->me->addr.ip,
					resource_cr(p->r)->me->addr.port);
		}
		if (e->at[0].fd < 0 && e->next && t >= e->next) {
			/* data: every connect-int; meta: the initiator's one try */
			uint64_t id = e->stream == WIRE_STREAM_DATA ? 0 : p->conn_id;

			while (!id)
				id = gi_entropy();
			auth_reload(e);
			if (start_ours(e, id) < 0)
				log_res(LOG_DEBUG, p->r->name, "cannot connect to the peer yet");
			e->next = e->stream == WIRE_STREAM_DATA ? t + p->connect_int_ms : 0;
		}
		for (int i = 0; i <= PEER_SETUP_MAX; i++) {
			struct attempt *a = &e->at[i];

			if (a->fd < 0)
				continue;
			if (t >= a->deadline) {
				setup_expire(a->s);
				settle(e, a);
				continue;
			}
			if (a->deadline < wake)
				wake = a->deadline;
		}
		if (until && t >= until)
			return -ETIMEDOUT;
		if (e->stream == WIRE_STREAM_META && p->initiator && e->at[0].fd < 0 && !e->next)
			return -ETIMEDOUT; /* our meta socket failed (logged) */
		if (e->next && e->next < wake)
			wake = e->next;

		f[0] = (struct pollfd){p->wake[0], POLLIN, 0};
		f[1] = (struct pollfd){p->lfd, POLLIN, 0};
		for (int i = 0; i <= PEER_SETUP_MAX; i++) {
			struct attempt *a = &e->at[i];
			size_t n;

			if (a->fd < 0)
				continue;
			setup_output(a->s, &n);
			idx[nf - 2] = i;
			f[nf++] = (struct pollfd){a->fd, (short)((a->connecting || n ? POLLOUT : 0) |
								(setup_want(a->s) ? POLLIN : 0) |
								(a->tls ? a->tls_ev : 0)),
						  0};
			if (a->tls && tls_pending(a->tls) && setup_want(a->s))
				wake = t; /* bytes wait in the session: no poll needed */
		}
		rc = poll(f, (nfds_t)nf, (int)(wake > t ? wake - t : 0));
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc <= 0)
			continue;
		for (int k = 2; k < nf; k++) {
			struct attempt *a = &e->at[idx[k - 2]];

			if (a->fd < 0 || (!f[k].revents && !(a->tls && tls_pending(a->tls))))
				continue;
			at_io(a);
			if (settle(e, a) == 1) {
				close_all(e, a); /* our own attempt too: this one proved itself */
				return take(e, a);
			}
		}
		if (p->lfd >= 0 && (f[1].revents & POLLIN))
			for (int n = 0; n < PEER_SETUP_MAX; n++) /* a burst: a few at a time */
				if (accept_in(e) < 0)
					break;
	}
}

/*
 * Establish and authenticate the data socket, then its meta socket: 0
 * with p->data, p->meta, p->conn_id, p->initiator and p->agreed set;
 * -ECANCELED when told to stop; another negative errno when the meta
 * socket did not come (logged).
 */
int peer_establish(struct peer *p)
{
	const struct conf_host *peer = resource_cr(p->r)->peer;
	struct est *e = calloc(1, sizeof(*e));
	int rc;

	if (!e)
		return -ENOMEM;
	e->p = p;
	e->sc = (struct setup_conf){
		.res = p->r->name,
		.me = p->me,
		.peer_names = (const char *const *)peer->names,
		.n_peer_names = peer->n_names,
		.alg = p->alg,
		.secret = p->secret,
		.secret_len = strlen(p->secret),
		.auth_v1 = p->auth_v1,
		.features = WIRE_F_TRIM | WIRE_F_WRITE_ZEROES | WIRE_F_RLE_BITMAP |
			    WIRE_F_REMOTE_READ | WIRE_F_BARRIER_FLUSH | WIRE_F_VERIFY | WIRE_F_CSUMS,
	};
	for (int i = 0; i <= PEER_SETUP_MAX; i++)
		e->at[i].fd = -1;

	e->stream = WIRE_STREAM_DATA;
	e->next = peer_now_ms();
	rc = establish(e, 0);
	close_all(e, NULL);
	if (rc == 0) {
		int64_t t = peer_now_ms();

		e->stream = WIRE_STREAM_META;
		e->next = p->initiator ? t : 0;
		rc = establish(e, t + p->ping_timeout_ms * 4 + p->connect_int_ms);
		close_all(e, NULL);
		if (rc == -ETIMEDOUT && !p->initiator && !stopping(p))
			peer_preauth_log(p, p->peer_addr, "no meta socket within %d ms of the data socket",
					 p->ping_timeout_ms * 4 + p->connect_int_ms);
	}
	free(e);
	return rc;
}

/* ---------------------------------------------------------------- while connected */

/*
 * While the connection is up nothing else is accepted (§5.3), but the
 * listener is still served, so that attempts do not queue unread and fill
 * its backlog: a stranger is closed and logged by peer_accept(), one from
 * the peer's address is closed unread and logged too.
 */
static void *guard_thread(void *arg)
{
	struct peer *p = arg;
	struct pollfd f[2] = {{p->guard[0], POLLIN, 0}, {p->lfd, POLLIN, 0}};

	for (;;) {
		char addr[PEER_ADDR_MAX];
		int fd;

		if (poll(f, 2, -1) < 0 && errno != EINTR)
			break;
		if (f[0].revents)
			break;
		if (!(f[1].revents & POLLIN))
			continue;
		fd = peer_accept(p, addr, sizeof(addr));
		if (fd >= 0) {
			peer_preauth_log(p, addr,
					 "already connected to the peer, so it is closed unread (a "
					 "new attempt is accepted once the connection is lost)");
			close(fd);
		}
	}
	return NULL;
}

int peer_guard_start(struct peer *p)
{
	p->guard[0] = p->guard[1] = -1;
	if (p->lfd < 0)
		return 0;
	if (pipe2(p->guard, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	if (pthread_create(&p->guard_thread, NULL, guard_thread, p) != 0) {
		close(p->guard[0]);
		close(p->guard[1]);
		p->guard[0] = p->guard[1] = -1;
		return -EAGAIN;
	}
	return 0;
}

void peer_guard_stop(struct peer *p)
{
	if (p->guard[1] < 0)
		return;
	if (write(p->guard[1], "x", 1) < 0)
		log_res(LOG_WARNING, p->r->name, "cannot stop the listener's guard");
	pthread_join(p->guard_thread, NULL);
	close(p->guard[0]);
	close(p->guard[1]);
	p->guard[0] = p->guard[1] = -1;
}
