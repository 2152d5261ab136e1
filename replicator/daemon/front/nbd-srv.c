/*
 * nbd-srv: the NBD export of a Primary resource: a Unix socket
 * RUNDIR/<res>.nbd (mode 0600, or 0660 and the group of options {
 * nbd-allow-group }), one thread accepting, one thread per connection
 * (the handshake here, then the requests in nbd-xfer.c). Export names:
 * "<res>" for volume 0 (also the default export ""), "<res>/<vnr>" for
 * others. Who may connect, how many, and how often a client's mistakes
 * are logged: doc/nbd-frontend.md, "Local clients".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "nbd-handshake.h"
#include "nbdkdev.h"
#include "peercred.h"
#include "ratelimit.h"
#include "front/nbd-srv.h"
#include "front/nbd-xfer.h"
#include "state/state-change.h"
#include "volume/volume.h"

/* A client has this long from connecting to the end of its handshake;
 * then it is closed (its idle timeout: a connection in the transmission
 * phase may rest as long as it likes). */
#define HANDSHAKE_TIMEOUT_MS 10000
#define HANDSHAKE_TIMEOUT_TEXT "10 s"
/* Connections per export, the kernel's and those in their handshake
 * included; one more is closed at once. */
#define MAX_CONNS 64
/* Clients that connect at the same instant wait in the listen queue until
 * the accept thread takes them: room for as many as may be served, so
 * that none of them is refused with EAGAIN. */
#define LISTEN_BACKLOG MAX_CONNS
/* Out of file descriptors: the listener rests this long before it tries
 * again (the waiting clients stay queued), and says so at most every
 * ACCEPT_LOG_EVERY_MS. */
#define ACCEPT_REST_MS 200
#define ACCEPT_LOG_EVERY_MS 30000
/* What a client can make us log: the first line of a kind at once, then
 * one every LOG_EVERY_MS with the count of the others (handshakes the
 * client aborted, as nbdinfo --list does: a burst, then one a second). */
#define LOG_EVERY_MS 10000
#define LOG_CONN_BURST 32
#define LOG_CONN_EVERY_MS 1000

enum nbd_log {
	NBD_LOG_REFUSED, /* credentials, too many connections */
	NBD_LOG_IDLE,    /* no handshake in time */
	NBD_LOG_PROTO,   /* handshakes that failed */
	NBD_LOG_CONN,    /* handshakes the client aborted */
	NBD_LOG_BAD,     /* bad requests (nbd-xfer.c) */
	NBD_LOG_FAILED,  /* requests that failed here (nbd-xfer.c) */
	NBD_LOG_KINDS,
};

struct nbd_conn {
	struct nbd_srv *srv;
	int fd;
	pthread_t thread;
	bool done;
	struct volume *kernel; /* served for the kernel's /dev/nbdN: no handshake */
	struct ucred cred;     /* the client's, for the log */
	struct nbd_conn *next;
};

/* A kernel nbd device attached to a volume while Primary. */
struct nbd_kdev {
	struct nbdkdev *k;
	char dev[64];
	char link[300];
};

struct nbd_srv {
	struct resource *res;
	char path[108];
	int lfd;
	int stop_pipe[2];
	pthread_t thread;
	pthread_mutex_t lock;
	struct nbd_conn *conns;
	atomic_uint clients;
	bool stopping;
	/* accept thread: out of file descriptors since (ms, 0: not), when
	 * that was last logged (ms), failures since (rate-limited: a shortage
	 * that comes and goes is logged at most every ACCEPT_LOG_EVERY_MS) */
	uint64_t starved_since, starved_said;
	unsigned int starved_count;
	struct nbd_kdev *kdevs; /* res->n_vols */
	/* options { nbd-allow-group }: its members may connect too */
	bool has_group;
	gid_t group;
	char group_name[64];
	/* a connection thread that ends says so here: the accept thread
	 * joins it and frees its slot at once */
	int reap_pipe[2];
	struct ratelimit *rl[NBD_LOG_KINDS];
};

static struct volume *volume_by_export(struct resource *r, const char *name)
{
	size_t n = strlen(r->name);
	unsigned long vnr = 0;
	unsigned int i;
	char *end;

	if (name[0] != '\0' && strcmp(name, r->name) != 0) {
		if (strncmp(name, r->name, n) || name[n] != '/' || !name[n + 1])
			return NULL;
		vnr = strtoul(name + n + 1, &end, 10);
		if (*end)
			return NULL;
	}
	for (i = 0; i < r->n_vols; i++)
		if (r->vols[i].vnr == vnr)
			return &r->vols[i];
	return NULL;
}

static int export_info(struct volume *v, struct nbd_export_info *out)
{
	memset(out, 0, sizeof(*out));
	out->size = v->size_sect * 512;
	out->flags = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA |
		     NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_WRITE_ZEROES |
		     /* a FLUSH syncs the whole backing device: every completed write of
		      * every connection is durable after it */
		     NBD_FLAG_CAN_MULTI_CONN | NBD_FLAG_SEND_CACHE | NBD_FLAG_SEND_FAST_ZERO;
	out->base_allocation = true; /* block status from the backing file's holes */
	out->min_block = 1;
	out->pref_block = 4096;
	out->max_block = NBD_REQUEST_MAX_PAYLOAD;
	return 0;
}

static int find_export(void *ctx, const char *name, struct nbd_export_info *out, char *msg,
		       size_t msglen)
{
	struct nbd_srv *s = ctx;
	struct volume *v = volume_by_export(s->res, name);

	if (!v) {
		/* the client's name is not echoed: it could carry anything */
		snprintf(msg, msglen, "no such export here (try '%s')", s->res->name);
		return -ENOENT;
	}
	if (s->stopping) {
		snprintf(msg, msglen, "%s is being demoted", s->res->name);
		return -ESHUTDOWN;
	}
	export_info(v, out);
	out->name = NULL;
	out->description = s->res->name;
	return 0;
}

static int list_exports(void *ctx, int (*emit)(void *h, const char *name, const char *desc),
			void *h)
{
	struct nbd_srv *s = ctx;
	char name[300];
	unsigned int i;
	int rc;

	for (i = 0; i < s->res->n_vols; i++) {
		if (s->res->vols[i].vnr == 0)
			snprintf(name, sizeof(name), "%s", s->res->name);
		else
			snprintf(name, sizeof(name), "%s/%u", s->res->name, s->res->vols[i].vnr);
		rc = emit(h, name, "tandem volume");
		if (rc)
			return rc;
	}
	return 0;
}

static const struct nbd_handshake_ops hs_ops = {
	.find = find_export,
	.list = list_exports,
};

/* The connection is over: the accept thread joins its thread and frees
 * its slot now (reap_now), not at the next accept. */
static void conn_end(struct nbd_conn *c)
{
	struct nbd_srv *s = c->srv;

	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&s->lock);
	c->done = true;
	pthread_mutex_unlock(&s->lock);
	/* s outlives this thread: nbd_srv_stop() joins it first; a full pipe
	 * has a wake-up in it already */
	if (write(s->reap_pipe[1], "x", 1) < 0 && errno != EAGAIN)
		log_res(LOG_WARNING, s->res->name, "cannot wake the NBD listener: %s",
			strerror(errno));
}

static void *conn_thread(void *arg)
{
	struct nbd_conn *c = arg;
	struct nbd_srv *s = c->srv;
	struct nbd_handshake_result *hs;
	struct volume *v;
	char note[96];
	bool served = false;
	pid_t pid = c->cred.pid;
	int rc;

	if (c->kernel) { /* the ioctl interface skips the handshake */
		struct nbd_export_info info;
		struct nbd_export_limits lim;
		const struct nbd_xfer_log xlog = {s->rl[NBD_LOG_BAD], s->rl[NBD_LOG_FAILED]};

		export_info(c->kernel, &info);
		/* the kernel's client: simple replies only */
		lim = (struct nbd_export_limits){.size = info.size, .eflags = info.flags,
						 .min_block = 512,
						 .max_block = NBD_REQUEST_MAX_PAYLOAD};
		nbd_xfer_serve(c->fd, c->kernel, s->res->name, &lim, &xlog);
		conn_end(c);
		return NULL;
	}
	hs = calloc(1, sizeof(*hs));
	rc = hs ? nbd_handshake(c->fd, HANDSHAKE_TIMEOUT_MS, &hs_ops, s, hs) : -ENOMEM;
	if (rc == 0 && (v = volume_by_export(s->res, hs->name))) {
		struct timeval tv = {0, 0};
		const struct nbd_xfer_log xlog = {s->rl[NBD_LOG_BAD], s->rl[NBD_LOG_FAILED]};

		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		atomic_fetch_add(&s->clients, 1);
		/* not rate-limited: one each per client that was let in, at
		 * most MAX_CONNS at a time, each after a whole handshake */
		log_res(LOG_INFO, s->res->name, "NBD client connected to export '%s' (pid %d, uid %u)",
			hs->name[0] ? hs->name : s->res->name, (int)c->cred.pid,
			(unsigned int)c->cred.uid);
		nbd_xfer_serve(c->fd, v, s->res->name, &hs->limits, &xlog);
		atomic_fetch_sub(&s->clients, 1);
		served = true;
	} else if (rc == -ETIMEDOUT) {
		if (ratelimit_ok(s->rl[NBD_LOG_IDLE], note, sizeof(note)))
			log_res(LOG_WARNING, s->res->name,
				"NBD client (pid %d, uid %u, gid %u) closed: no handshake within "
				HANDSHAKE_TIMEOUT_TEXT "%s",
				(int)c->cred.pid, (unsigned int)c->cred.uid,
				(unsigned int)c->cred.gid, note);
	} else if (hs && hs->err[0]) {
		enum nbd_log kind = rc == -ECONNABORTED ? NBD_LOG_CONN : NBD_LOG_PROTO;

		if (ratelimit_ok(s->rl[kind], note, sizeof(note)))
			log_res(LOG_INFO, s->res->name, "NBD handshake (pid %d) ended: %s%s",
				(int)c->cred.pid, hs->err, note);
	}
	free(hs);
	conn_end(c); /* the listener may join this thread from here on */
	/* after its slot is free: a client that saw this line may connect
	 * again and find room */
	if (served)
		log_res(LOG_INFO, s->res->name, "NBD client disconnected (pid %d)", (int)pid);
	return NULL;
}

/* Join finished connection threads (lock held). */
static void reap(struct nbd_srv *s)
{
	struct nbd_conn **pp = &s->conns, *c;

	while ((c = *pp)) {
		if (c->done) {
			*pp = c->next;
			pthread_join(c->thread, NULL);
			close(c->fd);
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

/* The wake-ups of ended connections: drained, then they are joined. */
static void reap_now(struct nbd_srv *s)
{
	char buf[64];

	while (read(s->reap_pipe[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&s->lock);
	reap(s);
	pthread_mutex_unlock(&s->lock);
}

/*
 * May this client use the export? Root, the daemon's own user (tests run
 * it unprivileged), and with nbd-allow-group the group's members: the
 * client's gid, or its user's groups. No: why, for the log.
 */
static bool client_allowed(const struct nbd_srv *s, const struct ucred *cr, const char **why)
{
	if (cr->uid == 0 || cr->uid == geteuid())
		return true;
	*why = s->has_group ? "neither root nor a member of nbd-allow-group" : "not root";
	return s->has_group && (cr->gid == s->group || peercred_in_group(cr->uid, s->group));
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * accept4 failed for lack of file descriptors or memory: the connection
 * stays queued, and the listener would be readable again at once. Rather
 * than spin on it, close what finished connections still hold and rest
 * ACCEPT_REST_MS (or until stopped); the connections being served go on.
 * False when stopped.
 */
static bool accept_rest(struct nbd_srv *s, int err, struct pollfd *stop)
{
	uint64_t now = now_ms();

	s->starved_count++;
	if (!s->starved_since)
		s->starved_since = now;
	if (!s->starved_said || now - s->starved_said >= ACCEPT_LOG_EVERY_MS) {
		char more[64] = "";

		if (s->starved_count > 1)
			snprintf(more, sizeof(more), " (%u failures since the last message)",
				 s->starved_count);
		log_res(LOG_WARNING, s->res->name,
			"NBD: cannot accept a connection: %s%s; new clients wait, connected ones "
			"go on; trying again every %d ms",
			strerror(err), more, ACCEPT_REST_MS);
		s->starved_said = now;
		s->starved_count = 0;
	}
	reap_now(s);
	return poll(stop, 1, ACCEPT_REST_MS) == 0 || !(stop->revents & POLLIN);
}

/* Accepting again: say so if the shortage was said. */
static void accept_back(struct nbd_srv *s)
{
	if (s->starved_said >= s->starved_since)
		log_res(LOG_NOTICE, s->res->name, "NBD: accepting connections again after %llu ms",
			(unsigned long long)(now_ms() - s->starved_since));
	s->starved_since = 0;
}

/* A connection not served: closed at once, before its handshake. */
static void refuse(struct nbd_srv *s, int fd, const struct ucred *cr, const char *why)
{
	char note[96];

	if (ratelimit_ok(s->rl[NBD_LOG_REFUSED], note, sizeof(note)))
		log_res(LOG_WARNING, s->res->name,
			"NBD connection from pid %d (uid %u, gid %u) refused: %s%s", (int)cr->pid,
			(unsigned int)cr->uid, (unsigned int)cr->gid, why, note);
	close(fd);
}

/* Serve a new connection on a thread of its own. */
static void conn_add(struct nbd_srv *s, int fd)
{
	struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
	struct nbd_conn *c;
	const char *why = "";
	char more[64];
	unsigned int n = 0;

	if (peercred_of(fd, &cred) < 0) {
		refuse(s, fd, &cred, "its credentials are unknown (SO_PEERCRED)");
		return;
	}
	if (!client_allowed(s, &cred, &why)) {
		refuse(s, fd, &cred, why);
		return;
	}
	pthread_mutex_lock(&s->lock);
	reap(s);
	for (c = s->conns; c; c = c->next)
		n++;
	c = n < MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
	if (c) {
		c->srv = s;
		c->fd = fd;
		c->cred = cred;
		if (pthread_create(&c->thread, NULL, conn_thread, c) == 0) {
			c->next = s->conns;
			s->conns = c;
		} else {
			free(c);
			c = NULL;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (c)
		return;
	if (n >= MAX_CONNS)
		snprintf(more, sizeof(more), "%u connections already, the most an export serves",
			 n);
	else
		snprintf(more, sizeof(more), "no memory or thread for it");
	refuse(s, fd, &cred, more);
}

static void *accept_thread(void *arg)
{
	struct nbd_srv *s = arg;
	struct pollfd p[3] = {{s->lfd, POLLIN, 0},
			      {s->stop_pipe[0], POLLIN, 0},
			      {s->reap_pipe[0], POLLIN, 0}};

	for (;;) {
		int fd;

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		/* out of descriptors with clients waiting, accept_rest frees the
		 * ended connections' and then rests: the control socket's
		 * listener, which rests as long, gets its turn at them */
		if (p[2].revents && (!s->starved_since || !(p[0].revents & POLLIN)))
			reap_now(s);
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC); /* blocking, for the threads */
		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			     errno == ENOMEM) &&
			    !accept_rest(s, errno, &p[1]))
				break;
			continue;
		}
		if (s->starved_since)
			accept_back(s);
		conn_add(s, fd);
	}
	return NULL;
}

/*
 * A configured `device /dev/nbdN` is attached to the volume on promotion
 * where the kernel has the nbd module (a socketpair: the kernel's end and
 * a connection served like any other, without the handshake), with the
 * stable name /dev/tandem/RES (RES/VOL for volumes other than 0). Without
 * the module, or for another device name (/dev/drbd0 in a DRBD config),
 * the socket is the interface: say so once.
 */
static void attach_kernel(struct nbd_srv *s)
{
	static bool said;
	struct resource *r = s->res;
	unsigned int i;

	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct nbd_kdev *kd = &s->kdevs[i];
		const char *dev = v->cv->device;
		struct nbd_export_info info;
		struct nbd_conn *c;
		char why[256];
		int sv[2], rc;

		if (!dev || !nbdkdev_is_nbd_path(dev)) {
			if (dev && !said)
				log_res(LOG_NOTICE, r->name,
					"device %s is not an nbd device: serving the NBD socket only "
					"(see tandemd(8))", dev);
			said = true;
			continue;
		}
		rc = nbdkdev_probe(dev, why, sizeof(why));
		if (rc < 0) {
			if (rc != -ENODEV || !said)
				log_res(LOG_NOTICE, r->name, "%s; serving the NBD socket only", why);
			said = true;
			continue;
		}
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			continue;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(sv[0]);
			close(sv[1]);
			continue;
		}
		c->srv = s;
		c->fd = sv[1];
		c->kernel = v;
		export_info(v, &info);
		pthread_mutex_lock(&s->lock);
		if (pthread_create(&c->thread, NULL, conn_thread, c) != 0) {
			pthread_mutex_unlock(&s->lock);
			free(c);
			close(sv[0]);
			close(sv[1]);
			continue;
		}
		c->next = s->conns;
		s->conns = c;
		pthread_mutex_unlock(&s->lock);
		rc = nbdkdev_attach(dev, sv[0], info.size & ~511ULL, 512,
				    info.flags & ~NBD_FLAG_CAN_MULTI_CONN, 0, &kd->k, why, sizeof(why));
		close(sv[0]); /* the kernel holds its own reference */
		if (rc < 0) {
			log_res(LOG_ERR, r->name, "%s; serving the NBD socket only", why);
			shutdown(sv[1], SHUT_RDWR);
			continue;
		}
		snprintf(kd->dev, sizeof(kd->dev), "%s", dev);
		if (v->vnr == 0)
			snprintf(kd->link, sizeof(kd->link), "/dev/tandem/%s", r->name);
		else
			snprintf(kd->link, sizeof(kd->link), "/dev/tandem/%s/%u", r->name, v->vnr);
		if (nbdkdev_link(dev, kd->link) < 0)
			kd->link[0] = '\0';
		log_res(LOG_INFO, r->name, "volume %u: %s attached%s%s", v->vnr, dev,
			kd->link[0] ? ", also as " : "", kd->link);
	}
}

static void detach_kernel(struct nbd_srv *s)
{
	unsigned int i;

	for (i = 0; i < s->res->n_vols; i++) {
		struct nbd_kdev *kd = &s->kdevs[i];

		if (!kd->k)
			continue;
		if (kd->link[0])
			nbdkdev_unlink(kd->link, kd->dev);
		if (nbdkdev_detach(kd->k) < 0)
			log_res(LOG_WARNING, s->res->name, "%s: the kernel did not let go in time",
				kd->dev);
		kd->k = NULL;
		log_res(LOG_INFO, s->res->name, "%s detached", kd->dev);
	}
}

/* Is a kernel device of this export held open (mounted, LVM, md)? */
bool nbd_srv_kernel_in_use(const struct nbd_srv *s)
{
	unsigned int i;

	for (i = 0; i < s->res->n_vols; i++)
		if (s->kdevs[i].k && nbdkdev_in_use(s->kdevs[i].dev) == 1)
			return true;
	return false;
}

/*
 * options { nbd-allow-group }: its gid, looked up now (tandem.conf was
 * checked when it was loaded; a group removed since lets only root in).
 */
static void find_group(struct nbd_srv *s)
{
	const char *name = conf_res_text(tandemd_conf(s->res->d), resource_cr(s->res),
					 CONF_SECT_OPTIONS, "nbd-allow-group");
	int rc;

	if (!name)
		return;
	snprintf(s->group_name, sizeof(s->group_name), "%s", name);
	rc = peercred_group(name, &s->group);
	if (rc < 0) {
		log_res(LOG_ERR, s->res->name,
			"nbd-allow-group %s: %s; only root may use the NBD export", name,
			rc == -ENOENT ? "no such group" : strerror(-rc));
		return;
	}
	s->has_group = true;
}

/*
 * The socket's group and mode: 0600, or 0660 and the group for
 * nbd-allow-group (chown needs CAP_CHOWN; without it, only root gets in).
 * The group's members must also be able to search the run directory.
 */
static int socket_mode(struct nbd_srv *s)
{
	struct stat st;

	if (!s->has_group)
		return chmod(s->path, 0600);
	if (chown(s->path, (uid_t)-1, s->group) < 0) {
		log_res(LOG_ERR, s->res->name,
			"cannot give %s to group %s: %s (tandemd needs CAP_CHOWN, tandemd(8)); "
			"only root may use the NBD export",
			s->path, s->group_name, strerror(errno));
		return chmod(s->path, 0600);
	}
	if (chmod(s->path, 0660) < 0)
		return -1;
	if (stat(s->res->d->run_dir, &st) == 0 && !(st.st_mode & S_IXOTH) &&
	    !((st.st_mode & S_IXGRP) && st.st_gid == s->group))
		log_res(LOG_WARNING, s->res->name,
			"nbd-allow-group %s: the group cannot reach %s, because %s is mode %04o; "
			"make it searchable (chmod 0711 %s, or RuntimeDirectoryMode=0711 for "
			"tandemd.service; doc/nbd-frontend.md)",
			s->group_name, s->path, s->res->d->run_dir, (unsigned int)(st.st_mode & 07777),
			s->res->d->run_dir);
	return 0;
}

static void srv_free(struct nbd_srv *s)
{
	unsigned int i;

	if (s->lfd >= 0)
		close(s->lfd);
	for (i = 0; i < 2; i++) {
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
		if (s->reap_pipe[i] >= 0)
			close(s->reap_pipe[i]);
	}
	for (i = 0; i < NBD_LOG_KINDS; i++)
		ratelimit_free(s->rl[i]);
	pthread_mutex_destroy(&s->lock);
	free(s->kdevs);
	free(s);
}

int nbd_srv_start(struct resource *r, struct reply_err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct nbd_srv *s = calloc(1, sizeof(*s));
	unsigned int i;
	int rc = 0;

	if (!s) {
		e->exit = 20;
		snprintf(e->msg, sizeof(e->msg), "out of memory");
		return -ENOMEM;
	}
	s->res = r;
	s->lfd = s->stop_pipe[0] = s->stop_pipe[1] = s->reap_pipe[0] = s->reap_pipe[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->kdevs = calloc(r->n_vols, sizeof(*s->kdevs));
	for (i = 0; i < NBD_LOG_KINDS && rc == 0; i++)
		rc = i == NBD_LOG_CONN ? ratelimit_new(LOG_CONN_BURST, LOG_CONN_EVERY_MS, &s->rl[i])
				       : ratelimit_new(1, LOG_EVERY_MS, &s->rl[i]);
	if (!s->kdevs || rc < 0) {
		srv_free(s);
		e->exit = 20;
		snprintf(e->msg, sizeof(e->msg), "out of memory");
		return -ENOMEM;
	}
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%s.nbd", r->d->run_dir, r->name) >=
	    sizeof(s->path)) {
		e->exit = 10;
		snprintf(e->msg, sizeof(e->msg), "the NBD socket path for %s is too long", r->name);
		goto fail;
	}
	find_group(s);
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	unlink(s->path);
	/* non-blocking: accept4 never waits, should a queued client leave
	 * between poll and accept4 */
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    socket_mode(s) < 0 || listen(s->lfd, LISTEN_BACKLOG) < 0 ||
	    pipe2(s->stop_pipe, O_CLOEXEC) < 0 || pipe2(s->reap_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		e->exit = 20;
		snprintf(e->msg, sizeof(e->msg), "cannot listen on %s: %s", s->path,
			 strerror(errno));
		goto fail;
	}
	if (pthread_create(&s->thread, NULL, accept_thread, s) != 0) {
		e->exit = 20;
		snprintf(e->msg, sizeof(e->msg), "cannot start the NBD listener thread");
		goto fail;
	}
	r->nbd = s;
	log_res(LOG_INFO, r->name, "NBD export on %s (for root%s%s)", s->path,
		s->has_group ? " and group " : " only", s->has_group ? s->group_name : "");
	attach_kernel(s);
	return 0;
fail:
	if (s->lfd >= 0)
		unlink(s->path);
	srv_free(s);
	return -EIO;
}

void nbd_srv_stop(struct nbd_srv *s)
{
	struct pollfd p = {.events = POLLIN};
	struct nbd_conn *c;

	s->stopping = true;
	detach_kernel(s); /* the kernel disconnects its connection first */
	if (write(s->stop_pipe[1], "x", 1) < 0)
		log_res(LOG_WARNING, s->res->name, "cannot wake the NBD listener");
	pthread_join(s->thread, NULL);
	unlink(s->path);
	pthread_mutex_lock(&s->lock);
	for (c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR); /* forced demotion: drop the clients */
	pthread_mutex_unlock(&s->lock);
	p.fd = s->reap_pipe[0];
	for (;;) {
		reap_now(s);
		pthread_mutex_lock(&s->lock);
		c = s->conns;
		pthread_mutex_unlock(&s->lock);
		if (!c)
			break;
		poll(&p, 1, 100); /* until a connection ends */
	}
	srv_free(s);
}

unsigned int nbd_srv_clients(const struct nbd_srv *s)
{
	return atomic_load(&((struct nbd_srv *)s)->clients);
}

const char *nbd_srv_path(const struct nbd_srv *s)
{
	return s->path;
}
