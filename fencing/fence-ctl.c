/*
 * fence-ctl: one "status" request to tandemd's control socket
 * (doc/control-protocol.md: newline-delimited JSON, one request, one
 * answer), reduced to what the fence rules need. Handlers run while a
 * resource may be frozen, so every wait has a deadline.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fence-ctl.h"

#define ANSWER_MAX 65536

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int fence_ctl_from_json(json_object *r, struct fence_ctl_res *out)
{
	json_object *vols, *v, *up;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(r, json_type_object) || !jstr(r, "name"))
		return -EPROTO;
	copy(out->role, sizeof(out->role), jstr(r, "role"));
	copy(out->conn, sizeof(out->conn), jstr(r, "connection"));
	out->up = json_object_object_get_ex(r, "up", &up) ? json_object_get_boolean(up)
							   : strcmp(out->conn, "Unconfigured") != 0;
	out->disk = FENCE_DISK_NONE;
	out->pdisk = FENCE_DISK_NONE;
	if (!json_object_object_get_ex(r, "volumes", &vols) ||
	    !json_object_is_type(vols, json_type_array))
		return 0;
	n = json_object_array_length(vols);
	for (i = 0; i < n; i++) {
		enum fence_disk d, pd;

		v = json_object_array_get_idx(vols, i);
		d = fence_policy_disk(jstr(v, "disk"));
		pd = fence_policy_disk(jstr(v, "peer_disk"));
		out->disk = i ? fence_policy_worse(out->disk, d) : d;
		out->pdisk = i ? fence_policy_worse(out->pdisk, pd) : pd;
	}
	out->n_vols = (unsigned int)n;
	return 0;
}

int fence_ctl_parse(const char *line, const char *res, struct fence_ctl_res *out)
{
	json_object *resp = json_tokener_parse(line), *ok, *list, *r;
	int rc = -ENOENT;
	size_t i;

	if (!resp || !json_object_is_type(resp, json_type_object) ||
	    !json_object_object_get_ex(resp, "ok", &ok)) {
		json_object_put(resp);
		return -EPROTO;
	}
	if (!json_object_get_boolean(ok)) {
		json_object *ex;

		/* exit 10: "'r9' is not a resource of this node" */
		rc = json_object_object_get_ex(resp, "exit", &ex) && json_object_get_int(ex) == 10
			     ? -ENOENT
			     : -EPROTO;
		json_object_put(resp);
		return rc;
	}
	if (!json_object_object_get_ex(resp, "resources", &list) ||
	    !json_object_is_type(list, json_type_array)) {
		json_object_put(resp);
		return -EPROTO;
	}
	for (i = 0; i < json_object_array_length(list); i++) {
		r = json_object_array_get_idx(list, i);
		if (jstr(r, "name") && !strcmp(jstr(r, "name"), res)) {
			rc = fence_ctl_from_json(r, out);
			break;
		}
	}
	json_object_put(resp);
	return rc;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for fd to become ready for `events` until the deadline. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	long long left;
	int n;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int exchange(int fd, const char *req, char *buf, size_t cap, long long deadline)
{
	size_t len = strlen(req), off = 0;
	ssize_t n;
	int rc;

	while (off < len) {
		rc = wait_fd(fd, POLLOUT, deadline);
		if (rc)
			return rc;
		n = send(fd, req + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		off += n > 0 ? (size_t)n : 0;
	}
	off = 0;
	while (!memchr(buf, '\n', off)) {
		if (off >= cap - 1)
			return -EPROTO;
		rc = wait_fd(fd, POLLIN, deadline);
		if (rc)
			return rc;
		n = recv(fd, buf + off, cap - 1 - off, MSG_DONTWAIT);
		if (n == 0)
			return -EPROTO; /* closed without an answer */
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		off += n > 0 ? (size_t)n : 0;
	}
	buf[off] = '\0';
	return 0;
}

const char *fence_ctl_error(int rc)
{
	switch (rc) {
	case -ENOTCONN:
		return "not running (cannot connect)";
	case -ETIMEDOUT:
		return "no answer in time";
	case -EPROTO:
		return "bad answer";
	default:
		return strerror(-rc);
	}
}

int fence_ctl_status(const char *run_dir, const char *res, int timeout_ms,
		     struct fence_ctl_res *out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	json_object *req;
	char *buf;
	int fd, rc;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/tandemd.sock", run_dir) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -ENOTCONN;
	}
	buf = malloc(ANSWER_MAX);
	req = json_object_new_object();
	if (!buf || !req) {
		free(buf);
		json_object_put(req);
		close(fd);
		return -ENOMEM;
	}
	json_object_object_add(req, "v", json_object_new_int(1));
	json_object_object_add(req, "cmd", json_object_new_string("status"));
	json_object_object_add(req, "res", json_object_new_string(res));
	{
		char line[1024];

		snprintf(line, sizeof(line), "%s\n",
			 json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
		rc = exchange(fd, line, buf, ANSWER_MAX, now_ms() + timeout_ms);
	}
	json_object_put(req);
	close(fd);
	if (rc == 0)
		rc = fence_ctl_parse(buf, res, out);
	free(buf);
	return rc;
}

int fence_ctl_from_env(struct fence_ctl_res *out)
{
	const char *disk = getenv("TANDEM_DISK");

	const char *pdisk = getenv("TANDEM_PEER_DISK");

	memset(out, 0, sizeof(*out));
	if (!disk || !*disk)
		return -ENOENT;
	copy(out->role, sizeof(out->role), getenv("TANDEM_ROLE"));
	copy(out->conn, sizeof(out->conn), getenv("TANDEM_CONNECTION"));
	out->up = true;
	out->disk = fence_policy_disk(disk);
	out->pdisk = pdisk && *pdisk ? fence_policy_disk(pdisk) : FENCE_DISK_DUNKNOWN;
	out->n_vols = 1;
	if (out->disk == FENCE_DISK_NONE || (pdisk && *pdisk && out->pdisk == FENCE_DISK_NONE)) {
		out->disk = out->pdisk = FENCE_DISK_NONE;
		return -EINVAL;
	}
	return 0;
}
