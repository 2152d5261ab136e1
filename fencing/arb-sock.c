/*
 * arb-sock: the arbiter's local socket (see arb-sock.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "arb-sock.h"
#include "ctlc.h"
#include "log.h"

#define OUT_MAX (4 * 1024 * 1024)

struct client {
	struct arb_sock *s;
	uint64_t id;
	int fd;
	char in[ARB_SOCK_REQ_MAX];
	size_t in_len;
	char *out;
	size_t out_len, out_off;
};

struct arb_sock {
	qb_loop_t *loop;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	arb_sock_request_fn *fn;
	void *ctx;
	uint64_t next_id;
	struct client *clients[ARB_SOCK_CLIENTS_MAX];
};

static void drop(struct client *c)
{
	struct arb_sock *s = c->s;
	size_t i;

	for (i = 0; i < ARB_SOCK_CLIENTS_MAX; i++)
		if (s->clients[i] == c)
			s->clients[i] = NULL;
	qb_loop_poll_del(s->loop, c->fd);
	close(c->fd);
	free(c->out);
	free(c);
}

static struct client *client_of(struct arb_sock *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < ARB_SOCK_CLIENTS_MAX; i++)
		if (s->clients[i] && s->clients[i]->id == id)
			return s->clients[i];
	return NULL;
}

static int32_t on_client(int32_t fd, int32_t revents, void *data);

/* Write what waits; 0, or -1 when the client is gone (dropped). */
static int flush(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			qb_loop_poll_mod(c->s->loop, QB_LOOP_MED, c->fd, POLLIN | POLLOUT, c,
					 on_client);
			return 0;
		}
		drop(c);
		return -1;
	}
	c->out_len = c->out_off = 0;
	qb_loop_poll_mod(c->s->loop, QB_LOOP_MED, c->fd, POLLIN, c, on_client);
	return 0;
}

int arb_sock_reply(struct arb_sock *s, uint64_t client, json_object *ans)
{
	struct client *c = client_of(s, client);
	const char *line;
	size_t len;
	char *grown;

	if (!c) {
		json_object_put(ans);
		return -ENOENT;
	}
	line = json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN);
	len = strlen(line);
	if (c->out_len + len + 1 > OUT_MAX) {
		json_object_put(ans);
		log_warn("arbiter: a client of %s reads nothing: dropped", s->path);
		drop(c);
		return -ENOBUFS;
	}
	grown = realloc(c->out, c->out_len + len + 1);
	if (!grown) {
		json_object_put(ans);
		return -ENOMEM;
	}
	c->out = grown;
	memcpy(c->out + c->out_len, line, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	json_object_put(ans);
	return flush(c) ? -ENOENT : 0;
}

int arb_sock_error(struct arb_sock *s, uint64_t client, int code, const char *msg,
		   const char *hint)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(false));
	json_object_object_add(o, "exit", json_object_new_int(code));
	json_object_object_add(o, "error", json_object_new_string(msg));
	if (hint)
		json_object_object_add(o, "hint", json_object_new_string(hint));
	return arb_sock_reply(s, client, o);
}

/* Hand every whole line to the handler. 0, or -1 when the client is gone. */
static int take_lines(struct client *c)
{
	struct arb_sock *s = c->s;
	uint64_t id = c->id;
	char *nl;

	while ((nl = memchr(c->in, '\n', c->in_len))) {
		size_t end = (size_t)(nl - c->in);
		json_object *req;
		enum json_tokener_error jerr;

		*nl = '\0';
		req = json_tokener_parse_verbose(c->in, &jerr);
		c->in_len -= end + 1;
		memmove(c->in, nl + 1, c->in_len);
		if (!req || !json_object_is_type(req, json_type_object)) {
			json_object_put(req);
			if (arb_sock_error(s, id, 10, "the request is not one JSON object", NULL))
				return -1;
			continue;
		}
		s->fn(s->ctx, id, req);
		if (!client_of(s, id))
			return -1;
	}
	return 0;
}

static int32_t on_client(int32_t fd, int32_t revents, void *data)
{
	struct client *c = data;
	ssize_t n;

	(void)fd;
	if ((revents & POLLOUT) && flush(c))
		return 0;
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		drop(c);
		return 0;
	}
	if (n < 0)
		return 0;
	c->in_len += (size_t)n;
	if (take_lines(c))
		return 0;
	if (c->in_len == sizeof(c->in)) {
		arb_sock_error(c->s, c->id, 10, "request longer than 64 KiB", NULL);
		if (client_of(c->s, c->id))
			drop(c);
	}
	return 0;
}

static int32_t on_accept(int32_t fd, int32_t revents, void *data)
{
	struct arb_sock *s = data;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	size_t i;
	int cfd;

	(void)fd;
	(void)revents;
	cfd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0)
		return 0;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		log_warn("arbiter: connection from uid %d to %s refused: only root", (int)cred.uid,
			 s->path);
		close(cfd);
		return 0;
	}
	for (i = 0; i < ARB_SOCK_CLIENTS_MAX && s->clients[i]; i++)
		;
	c = i < ARB_SOCK_CLIENTS_MAX ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		log_warn("arbiter: %d clients on %s already: one more refused",
			 ARB_SOCK_CLIENTS_MAX, s->path);
		close(cfd);
		return 0;
	}
	c->s = s;
	c->fd = cfd;
	c->id = ++s->next_id;
	if (qb_loop_poll_add(s->loop, QB_LOOP_MED, cfd, POLLIN, c, on_client)) {
		close(cfd);
		free(c);
		return 0;
	}
	s->clients[i] = c;
	return 0;
}

/* A socket file nobody listens on is left by a dead arbiter: replace it. */
static int claim_path(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		rc = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		unlink(path);
	close(fd);
	return rc;
}

int arb_sock_new(qb_loop_t *loop, const char *run_dir, arb_sock_request_fn *fn, void *ctx,
		 struct arb_sock **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct arb_sock *s;
	int n, rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	n = snprintf(s->path, sizeof(s->path), "%s/%s", run_dir, CTLC_ARBITER_SOCK_NAME);
	if (n < 0 || (size_t)n >= sizeof(s->path)) {
		free(s);
		return -ENAMETOOLONG;
	}
	s->loop = loop;
	s->fn = fn;
	s->ctx = ctx;
	rc = claim_path(s->path);
	if (rc) {
		free(s);
		return rc;
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0) {
		rc = -errno;
		free(s);
		return rc;
	}
	strcpy(sa.sun_path, s->path);
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(s->path, 0600) < 0 ||
	    listen(s->fd, 16) < 0 ||
	    qb_loop_poll_add(loop, QB_LOOP_MED, s->fd, POLLIN, s, on_accept)) {
		rc = errno ? -errno : -EIO;
		close(s->fd);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void arb_sock_free(struct arb_sock *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < ARB_SOCK_CLIENTS_MAX; i++)
		if (s->clients[i])
			drop(s->clients[i]);
	qb_loop_poll_del(s->loop, s->fd);
	close(s->fd);
	unlink(s->path);
	free(s);
}
