/*
 * fuzz-nbd: libFuzzer target for the NBD protocol layer
 * (replicator/lib/nbd-*.c, doc/nbd-frontend.md).
 *
 * 1. Handshake: a client thread writes the input into one end of a
 *    socketpair (reading and keeping whatever the server sends), then
 *    shuts its side down; nbd_handshake() serves the other end (with no
 *    list() and trace() callbacks for inputs of odd length). It must
 *    return (never time out: the input always ends), with a result that
 *    is consistent, and everything it sent must parse as a greeting,
 *    option replies and at most one final NBD_OPT_EXPORT_NAME answer.
 *    "r0" has base:allocation, so that meta context options (LIST, SET)
 *    reach every branch; the selection may count only for the export it
 *    named, with structured replies.
 * 2. Transmission: every 28-byte window of the input is decoded and
 *    validated against a few exports; an accepted request must really
 *    be within the export's rules, and decode/encode must round-trip.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "nbd-handshake.h"
#include "nbd-proto.h"
#include "nbd-request.h"

#define MiB (1u << 20)
#define HANDSHAKE_TIMEOUT_MS 2000
#define OUT_MAX (4u * MiB) /* server output kept for checking */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void __attribute__((noreturn)) fail(const char *what, int rc, const char *err)
{
	fprintf(stderr, "fuzz-nbd: %s (rc %d: %s)\n", what, rc, err ? err : "");
	abort();
}

/* ---------------------------------------------------------------- exports */

static int fuzz_find(void *ctx, const char *name, struct nbd_export_info *out, char *msg,
		     size_t len)
{
	if (!*name || strcmp(name, "r0") == 0) {
		*out = (struct nbd_export_info){
			"r0", "volume 0", 64 * MiB,
			NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_TRIM |
				NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_CAN_MULTI_CONN |
				NBD_FLAG_SEND_CACHE | NBD_FLAG_SEND_FAST_ZERO,
			512, 4096, 32 * MiB, false, true};
		return 0;
	}
	if (strcmp(name, "ro") == 0) {
		*out = (struct nbd_export_info){NULL, NULL, 12345, NBD_FLAG_READ_ONLY, 0, 0, 0, false,
						false};
		return 0;
	}
	if (strcmp(name, "bs") == 0) {
		*out = (struct nbd_export_info){"bs", NULL, MiB, 0, 4096, 4096, MiB, true, false};
		return 0;
	}
	if (strcmp(name, "bad") == 0) {
		*out = (struct nbd_export_info){"bad", NULL, MiB, NBD_FLAG_SEND_DF, 0, 0, 0, false,
						true};
		return 0;
	}
	if (strcmp(name, "sec") == 0) {
		snprintf(msg, len, "%s is Secondary", name);
		return -EAGAIN;
	}
	if (strcmp(name, "pol") == 0)
		return -EACCES;
	if (strcmp(name, "down") == 0)
		return -ESHUTDOWN;
	return -ENOENT;
}

static int fuzz_list(void *ctx, int (*emit)(void *h, const char *name, const char *desc), void *h)
{
	static const char *const names[] = {"r0", "ro", "bs", "sec"};
	size_t i;
	int r;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((r = emit(h, names[i], i % 2 ? NULL : "an export")) != 0)
			return r;
	return 0;
}

static void fuzz_trace(void *ctx, const char *line)
{
	if (!line[0] || strlen(line) >= 256)
		fail("bad trace line", 0, line);
}

static const struct nbd_handshake_ops ops = {fuzz_find, fuzz_list, fuzz_trace};
/* Inputs of odd length: no listing (policy), no trace. */
static const struct nbd_handshake_ops ops_quiet = {fuzz_find, NULL, NULL};

/* ---------------------------------------------------------------- the client thread */

struct client {
	int fd;
	const uint8_t *data;
	size_t size;
	uint8_t *out; /* what the server sent (up to OUT_MAX) */
	size_t out_len;
};

/* Write the input, keep reading the server's output, then EOF both ways. */
static void *client_main(void *arg)
{
	struct client *c = arg;
	size_t off = 0;
	bool shut = false;
	ssize_t n;

	for (;;) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};

		if (off < c->size)
			p.events |= POLLOUT;
		if (poll(&p, 1, 10000) <= 0)
			fail("client: poll timed out", 0, NULL);
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			uint8_t sink[4096];
			uint8_t *to = c->out_len < OUT_MAX ? c->out + c->out_len : sink;
			size_t room = c->out_len < OUT_MAX ? OUT_MAX - c->out_len : sizeof(sink);

			n = recv(c->fd, to, room, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
			if (n > 0 && to != sink)
				c->out_len += (size_t)n;
		}
		if (off < c->size && (p.revents & POLLOUT)) {
			n = send(c->fd, c->data + off, c->size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				off = c->size; /* the server is gone */
		}
		if (off == c->size && !shut) {
			shutdown(c->fd, SHUT_WR);
			shut = true;
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------- checks */

static bool known_rep(uint32_t type)
{
	return strcmp(nbd_proto_rep_name(type), "unknown") != 0;
}

/* The server's output: greeting, option replies, maybe the EXPORT_NAME answer. */
static void check_output(const struct client *c, int rc, const struct nbd_handshake_result *res)
{
	const uint8_t *p = c->out, *end = c->out + c->out_len;
	bool export_name = rc == 0 && res->opt == NBD_OPT_EXPORT_NAME;
	size_t tail;

	if (c->out_len >= OUT_MAX)
		return; /* too much to check; cannot happen with -max_len below 1 MiB */
	if (c->out_len < 18 || nbd_proto_get64(p) != NBD_MAGIC ||
	    nbd_proto_get64(p + 8) != NBD_OPTS_MAGIC)
		fail("no greeting", rc, res->err);
	for (p += 18; end - p >= 8 && nbd_proto_get64(p) == NBD_REP_MAGIC;) {
		uint32_t type, len;

		if (end - p < NBD_REP_HDR_SIZE)
			fail("truncated reply header", rc, res->err);
		type = nbd_proto_get32(p + 12);
		len = nbd_proto_get32(p + 16);
		if (!known_rep(type) || len > (size_t)(end - p) - NBD_REP_HDR_SIZE)
			fail("bad reply", rc, res->err);
		if (type == NBD_REP_ACK && len != 0)
			fail("ACK with data", rc, res->err);
		if (type == NBD_REP_INFO && (len < 2 || len - 2 > NBD_MAX_STRING))
			fail("bad NBD_REP_INFO length", rc, res->err);
		/* the one context: id 0 (LIST) or 1 (SET), its name */
		if (type == NBD_REP_META_CONTEXT &&
		    (len != 4 + strlen(NBD_META_BASE_ALLOCATION) || nbd_proto_get32(p + 20) > 1 ||
		     memcmp(p + 24, NBD_META_BASE_ALLOCATION, len - 4) != 0))
			fail("bad NBD_REP_META_CONTEXT", rc, res->err);
		if ((type & NBD_REP_FLAG_ERROR) && (len == 0 || len >= 256))
			fail("error reply without a message, or a long one", rc, res->err);
		p += NBD_REP_HDR_SIZE + len;
	}
	tail = (size_t)(end - p);
	if (export_name ? (tail != 10 && tail != 10 + NBD_EXPORT_NAME_PAD) : tail != 0)
		fail("unexpected bytes after the last reply", rc, res->err);
	if (export_name && tail == 10 + NBD_EXPORT_NAME_PAD) {
		size_t i;

		for (i = 10; i < tail; i++)
			if (p[i])
				fail("nonzero padding", rc, res->err);
	}
}

static void check_result(int rc, const struct nbd_handshake_result *res)
{
	const char *why;

	if (rc == 0) {
		if (res->err[0])
			fail("success with an error message", rc, res->err);
		if (res->opt != NBD_OPT_GO && res->opt != NBD_OPT_EXPORT_NAME)
			fail("success without GO or EXPORT_NAME", rc, NULL);
		if (memchr(res->name, '\0', sizeof(res->name)) == NULL)
			fail("name not terminated", rc, NULL);
		/* the layer adds SEND_DF itself once structured replies are
		 * on (find() may not set it): check the export without it */
		struct nbd_export_info e = res->info;

		e.flags &= (uint16_t)~NBD_FLAG_SEND_DF;
		if (nbd_handshake_check_export(&e, &why) < 0 ||
		    !(res->limits.eflags & NBD_FLAG_HAS_FLAGS) || res->limits.size != res->info.size)
			fail("success with a bad export", rc, why);
		if (res->limits.meta_alloc &&
		    (res->limits.meta_alloc != 1 || !res->limits.structured ||
		     !res->info.base_allocation))
			fail("a meta context without structured replies or for another export", rc,
			     NULL);
		return;
	}
	switch (rc) {
	case -ECONNABORTED:
	case -ECONNRESET:
	case -EPIPE:
	case -EPROTO:
	case -EMSGSIZE:
	case -ENOENT: /* EXPORT_NAME refused by find() */
	case -EAGAIN:
	case -EACCES:
	case -ESHUTDOWN:
	case -EINVAL:
		break;
	default:
		fail("unexpected return value (a hang?)", rc, res->err);
	}
	if (!res->err[0] || memchr(res->err, '\0', sizeof(res->err)) == NULL)
		fail("failure without a message", rc, NULL);
}

static void fuzz_handshake(const uint8_t *data, size_t size)
{
	static struct nbd_handshake_result res;
	static uint8_t *out;
	struct timeval tv = {.tv_sec = 5};
	struct client c = {.data = data, .size = size};
	pthread_t t;
	int sv[2], rc;

	if (!out && !(out = malloc(OUT_MAX)))
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		abort();
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c.fd = sv[1];
	c.out = out;
	if (pthread_create(&t, NULL, client_main, &c) != 0)
		abort();
	rc = nbd_handshake(sv[0], HANDSHAKE_TIMEOUT_MS, size % 2 ? &ops_quiet : &ops, NULL, &res);
	shutdown(sv[0], SHUT_RDWR);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
	check_result(rc, &res);
	check_output(&c, rc, &res);
}

/* ---------------------------------------------------------------- requests */

static const struct nbd_export_limits limits[] = {
	{64 * MiB, 0x9ed, 512, 32 * MiB, false, 0},
	{12345, NBD_FLAG_HAS_FLAGS | NBD_FLAG_READ_ONLY, 0, 0, false, 0},
	{UINT64_MAX, 0xfff, 1, 0, true, 1},
	{0, 0xfff, 4096, 4096, true, 0},
	{64 * MiB, 0xfff, 512, 32 * MiB, false, 1}, /* a context without structured replies */
};

static void check_accepted(const struct nbd_request *r, const struct nbd_export_limits *l)
{
	uint32_t min = l->min_block > 1 ? l->min_block : 1;

	if (r->type == NBD_CMD_FLUSH || r->type == NBD_CMD_DISC) {
		if (r->offset || r->length)
			fail("accepted FLUSH/DISC with a range", r->type, NULL);
		return;
	}
	bool reads = r->type == NBD_CMD_READ || r->type == NBD_CMD_CACHE ||
		     r->type == NBD_CMD_BLOCK_STATUS;

	if (!reads && r->type != NBD_CMD_WRITE && r->type != NBD_CMD_TRIM &&
	    r->type != NBD_CMD_WRITE_ZEROES)
		fail("accepted an unsupported command", r->type, NULL);
	if (r->type == NBD_CMD_CACHE && !(l->eflags & NBD_FLAG_SEND_CACHE))
		fail("accepted CACHE without SEND_CACHE", r->type, NULL);
	if (r->type == NBD_CMD_BLOCK_STATUS && (!l->structured || !l->meta_alloc))
		fail("accepted BLOCK_STATUS without a context and structured replies", r->type,
		     NULL);
	if (!reads && (l->eflags & NBD_FLAG_READ_ONLY))
		fail("accepted a write on a read-only export", r->type, NULL);
	if (r->length == 0 || r->offset > l->size || r->length > l->size - r->offset)
		fail("accepted a bad range", r->type, NULL);
	if (r->offset % min || r->length % min)
		fail("accepted an unaligned request", r->type, NULL);
	if ((r->type == NBD_CMD_READ || r->type == NBD_CMD_WRITE || r->type == NBD_CMD_CACHE) &&
	    r->length > (l->max_block ? l->max_block : NBD_REQUEST_MAX_PAYLOAD))
		fail("accepted a request above the maximum", r->type, NULL);
	if ((r->flags & NBD_CMD_FLAG_FUA) && !(l->eflags & NBD_FLAG_SEND_FUA))
		fail("accepted FUA without SEND_FUA", r->type, NULL);
	if (r->flags & ~(NBD_CMD_FLAG_FUA | NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FAST_ZERO |
			 NBD_CMD_FLAG_DF | NBD_CMD_FLAG_REQ_ONE))
		fail("accepted an unsupported flag", r->flags, NULL);
	if ((r->flags & NBD_CMD_FLAG_REQ_ONE) && r->type != NBD_CMD_BLOCK_STATUS)
		fail("accepted REQ_ONE on another command", r->flags, NULL);
	if ((r->flags & NBD_CMD_FLAG_DF) &&
	    (r->type != NBD_CMD_READ || !(l->eflags & NBD_FLAG_SEND_DF)))
		fail("accepted DF on another command or without SEND_DF", r->flags, NULL);
	if ((r->flags & (NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FAST_ZERO)) &&
	    r->type != NBD_CMD_WRITE_ZEROES)
		fail("accepted a WRITE_ZEROES flag on another command", r->flags, NULL);
	if ((r->flags & NBD_CMD_FLAG_FAST_ZERO) && !(l->eflags & NBD_FLAG_SEND_FAST_ZERO))
		fail("accepted FAST_ZERO without SEND_FAST_ZERO", r->type, NULL);
}

static void fuzz_requests(const uint8_t *data, size_t size)
{
	size_t off, i;

	for (off = 0; off + NBD_REQUEST_SIZE <= size; off++) {
		uint8_t again[NBD_REQUEST_SIZE];
		struct nbd_request r;

		if (nbd_request_decode(data + off, &r) < 0)
			continue;
		nbd_request_encode(again, &r);
		if (memcmp(again, data + off, NBD_REQUEST_SIZE) != 0)
			fail("decode/encode does not round-trip", 0, NULL);
		for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
			const char *why = NULL;
			uint32_t err = nbd_request_validate(&r, &limits[i], &why);

			if (err == 0 && why == NULL)
				check_accepted(&r, &limits[i]);
			else if ((err != NBD_EINVAL && err != NBD_EPERM && err != NBD_ENOSPC) || !why)
				fail("bad validation result", (int)err, why);
		}
	}
	/* the same bytes as plain numbers: names and the errno map never fail */
	for (off = 0; off + 4 <= size; off += 4) {
		uint32_t v = nbd_proto_get32(data + off);
		char buf[64];

		if (!nbd_proto_opt_name(v) || !nbd_proto_rep_name(v) ||
		    !nbd_proto_cmd_name((uint16_t)v) || !nbd_proto_err_name(v) ||
		    !nbd_proto_cmd_flags_str((uint16_t)v, buf, sizeof(buf)) ||
		    (nbd_proto_errno((int)v) == 0) != (v == 0))
			fail("name or errno helper", (int)v, NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_handshake(data, size);
	fuzz_requests(data, size);
	return 0;
}
