/*
 * Unit tests for nbd-handshake: nbd_handshake() runs in a server thread
 * on one end of a socketpair, as in the daemon; the test itself is the
 * client on the other end (so that cmocka's assertions stay in the main
 * thread) and speaks the protocol byte by byte, one send() per byte,
 * then checks every reply and the handshake's result.
 *
 * Nothing can hang: the client's socket has SO_RCVTIMEO/SO_SNDTIMEO, and
 * the server's handshake has a deadline. The teardown shuts the client
 * socket down, so a server still waiting for input returns and is joined
 * even after a failed assertion.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nbd-handshake.h"

#define MiB (1u << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SERVER_TIMEOUT_MS 5000
#define CLIENT_TIMEOUT_S 3
#define R0_FLAGS                                                                        \
	(NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_TRIM |                 \
	 NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_CAN_MULTI_CONN)

struct srv {
	int sfd, cfd;
	pthread_t thread;
	bool running;
	int timeout_ms;
	const struct nbd_handshake_ops *ops;
	struct nbd_handshake_result res;
	int rc;
	int traces;
	bool bad_trace;
	uint8_t buf[2 * NBD_MAX_STRING + 64]; /* the last reply's payload */
};

/* ---------------------------------------------------------------- the daemon side */

static char long_name[NBD_MAX_STRING + 2];

static const struct nbd_export_info exports[] = {
	{"r0", "volume r0", 64 * MiB, R0_FLAGS, 512, 4096, 32 * MiB, false, true},
	{"ro", NULL, MiB, NBD_FLAG_READ_ONLY, 0, 0, 0, false, false},
	{"bs", "needs block sizes", 8 * MiB, NBD_FLAG_SEND_FLUSH, 4096, 4096, MiB, true, false},
	{"bad", NULL, MiB, 0, 3, 4096, MiB, false, false}, /* min_block 3 */
};

/* "" is r0; "sec", "pol" and "down" are refused. */
static int test_find(void *ctx, const char *name, struct nbd_export_info *out, char *msg,
		     size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exports); i++) {
		if (strcmp(name, exports[i].name) == 0 || (!*name && i == 0)) {
			*out = exports[i];
			return 0;
		}
	}
	if (strcmp(name, "sec") == 0) {
		snprintf(msg, len, "sec is Secondary");
		return -EAGAIN;
	}
	if (strcmp(name, "pol") == 0)
		return -EPERM;
	return strcmp(name, "down") == 0 ? -ESHUTDOWN : -ENOENT;
}

static int test_list(void *ctx, int (*emit)(void *h, const char *name, const char *desc), void *h)
{
	int r;

	if ((r = emit(h, "r0", "volume r0")) || (r = emit(h, "ro", NULL)) ||
	    (r = emit(h, long_name, "skipped: name too long")) || (r = emit(h, NULL, "skipped")))
		return r;
	return emit(h, "bs", "needs block sizes");
}

static void test_trace(void *ctx, const char *line)
{
	struct srv *s = ctx;

	s->traces++;
	if (line[0] == '\0' || strlen(line) >= 256)
		s->bad_trace = true;
}

static const struct nbd_handshake_ops ops = {test_find, test_list, test_trace};
static const struct nbd_handshake_ops ops_no_list = {test_find, NULL, NULL};

static void *srv_main(void *arg)
{
	struct srv *s = arg;

	s->rc = nbd_handshake(s->sfd, s->timeout_ms, s->ops, s, &s->res);
	if (s->rc < 0)
		shutdown(s->sfd, SHUT_RDWR); /* what the daemon does: close */
	return NULL;
}

static void srv_start(struct srv *s)
{
	assert_int_equal(pthread_create(&s->thread, NULL, srv_main, s), 0);
	s->running = true;
}

/* Wait for the handshake to return; it has a deadline, so this ends. */
static int srv_wait(struct srv *s)
{
	if (s->running) {
		assert_int_equal(pthread_join(s->thread, NULL), 0);
		s->running = false;
	}
	assert_false(s->bad_trace);
	return s->rc;
}

static int setup(void **state)
{
	struct timeval tv = {.tv_sec = CLIENT_TIMEOUT_S};
	struct srv *s = calloc(1, sizeof(*s));
	int sv[2];

	if (!s || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	s->sfd = sv[0];
	s->cfd = sv[1];
	s->timeout_ms = SERVER_TIMEOUT_MS;
	s->ops = &ops;
	if (setsockopt(s->cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(s->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -1;
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct srv *s = *state;

	if (!s)
		return 0;
	shutdown(s->cfd, SHUT_RDWR);
	if (s->running)
		pthread_join(s->thread, NULL);
	close(s->cfd);
	close(s->sfd);
	free(s);
	return 0;
}

/* A fresh socketpair and server for the next round of a test. */
static struct srv *restart(void **state)
{
	teardown(state);
	*state = NULL;
	assert_int_equal(setup(state), 0);
	return *state;
}

/* ---------------------------------------------------------------- the client side */

/* Byte by byte: one send() per byte. */
static void c_write(struct srv *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		assert_int_equal(send(s->cfd, p + i, 1, MSG_NOSIGNAL), 1);
}

static void c_write_bulk(struct srv *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	for (; len > 0; p += n, len -= (size_t)n) {
		n = send(s->cfd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			fail_msg("send: %s", strerror(errno));
	}
}

static void c_read(struct srv *s, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	for (; len > 0; p += n, len -= (size_t)n) {
		n = recv(s->cfd, p, len, 0);
		if (n <= 0)
			fail_msg("recv: %s", n == 0 ? "EOF" : strerror(errno));
	}
}

/* The server closed the connection (and sent nothing more). */
static void c_expect_eof(struct srv *s)
{
	uint8_t b;
	ssize_t n = recv(s->cfd, &b, 1, 0);

	if (n != 0 && !(n < 0 && errno == ECONNRESET))
		fail_msg("expected EOF, got %zd (%s)", n, n < 0 ? strerror(errno) : "data");
}

/* Nothing more is waiting to be read. */
static void c_expect_nothing(struct srv *s)
{
	uint8_t b;

	assert_int_equal(recv(s->cfd, &b, 1, MSG_DONTWAIT), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static void c_greet(struct srv *s, uint32_t cflags)
{
	uint8_t in[18], out[4];

	c_read(s, in, sizeof(in));
	assert_int_equal(nbd_proto_get64(in), NBD_MAGIC);
	assert_int_equal(nbd_proto_get64(in + 8), NBD_OPTS_MAGIC);
	assert_int_equal(nbd_proto_get16(in + 16), NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	nbd_proto_put32(out, cflags);
	c_write(s, out, sizeof(out));
}

static void c_opt_hdr(struct srv *s, uint32_t opt, uint32_t len)
{
	uint8_t hdr[NBD_OPT_HDR_SIZE];

	nbd_proto_put64(hdr, NBD_OPTS_MAGIC);
	nbd_proto_put32(hdr + 8, opt);
	nbd_proto_put32(hdr + 12, len);
	c_write(s, hdr, sizeof(hdr));
}

static void c_opt(struct srv *s, uint32_t opt, const void *data, uint32_t len)
{
	c_opt_hdr(s, opt, len);
	c_write(s, data, len);
}

/* Read one reply to opt; its payload goes to s->buf; returns its type. */
static uint32_t c_reply(struct srv *s, uint32_t opt, uint32_t *len)
{
	uint8_t hdr[NBD_REP_HDR_SIZE];

	c_read(s, hdr, sizeof(hdr));
	assert_int_equal(nbd_proto_get64(hdr), NBD_REP_MAGIC);
	assert_int_equal(nbd_proto_get32(hdr + 8), opt);
	*len = nbd_proto_get32(hdr + 16);
	assert_in_range(*len, 0, sizeof(s->buf) - 1);
	c_read(s, s->buf, *len);
	s->buf[*len] = '\0';
	return nbd_proto_get32(hdr + 12);
}

/* A reply of the given type; returns its payload length. */
static uint32_t c_expect(struct srv *s, uint32_t opt, uint32_t type)
{
	uint32_t len, got = c_reply(s, opt, &len);

	if (got != type)
		fail_msg("reply to %s: got %s, want %s (payload \"%s\")", nbd_proto_opt_name(opt),
			 nbd_proto_rep_name(got), nbd_proto_rep_name(type), (char *)s->buf);
	return len;
}

/* An error reply whose message contains sub. */
static void c_expect_err(struct srv *s, uint32_t opt, uint32_t type, const char *sub)
{
	c_expect(s, opt, type);
	if (!strstr((char *)s->buf, sub))
		fail_msg("message \"%s\" lacks \"%s\"", (char *)s->buf, sub);
}

/* An NBD_REP_INFO of the given type; returns the length after the type. */
static uint32_t c_expect_info(struct srv *s, uint32_t opt, uint16_t type)
{
	uint32_t len = c_expect(s, opt, NBD_REP_INFO);

	assert_true(len >= 2);
	assert_int_equal(nbd_proto_get16(s->buf), type);
	return len - 2;
}

/* INFO/GO data for name with the information requests reqs[0..n). */
static uint32_t info_data(uint8_t *buf, const char *name, const uint16_t *reqs, uint16_t n)
{
	uint32_t len = (uint32_t)strlen(name), i;

	nbd_proto_put32(buf, len);
	memcpy(buf + 4, name, len);
	nbd_proto_put16(buf + 4 + len, n);
	for (i = 0; i < n; i++)
		nbd_proto_put16(buf + 6 + len + 2 * i, reqs[i]);
	return 6 + len + 2u * n;
}

static void c_info_go(struct srv *s, uint32_t opt, const char *name, const uint16_t *reqs,
		      uint16_t n)
{
	uint8_t data[128];

	assert_true(strlen(name) + 6 + 2u * n <= sizeof(data));
	c_opt(s, opt, data, info_data(data, name, reqs, n));
}

static void c_expect_export(struct srv *s, uint32_t opt, uint64_t size, uint16_t flags)
{
	assert_int_equal(c_expect_info(s, opt, NBD_INFO_EXPORT), 10);
	assert_int_equal(nbd_proto_get64(s->buf + 2), size);
	assert_int_equal(nbd_proto_get16(s->buf + 10), flags | NBD_FLAG_HAS_FLAGS);
}

static void c_expect_block_size(struct srv *s, uint32_t opt, uint32_t min, uint32_t pref,
				uint32_t max)
{
	assert_int_equal(c_expect_info(s, opt, NBD_INFO_BLOCK_SIZE), 12);
	assert_int_equal(nbd_proto_get32(s->buf + 2), min);
	assert_int_equal(nbd_proto_get32(s->buf + 6), pref);
	assert_int_equal(nbd_proto_get32(s->buf + 10), max);
}

static void c_abort(struct srv *s)
{
	c_opt(s, NBD_OPT_ABORT, NULL, 0);
	c_expect(s, NBD_OPT_ABORT, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), -ECONNABORTED);
	c_expect_eof(s);
}

#define CF_ALL (NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES)

/* ---------------------------------------------------------------- GO and INFO */

static void test_go_default(void **state)
{
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_info_go(s, NBD_OPT_GO, "", NULL, 0);
	c_expect_export(s, NBD_OPT_GO, 64 * MiB, R0_FLAGS);
	/* block sizes are advertised even when not requested */
	c_expect_block_size(s, NBD_OPT_GO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
	c_expect_nothing(s); /* no padding after GO */
	assert_string_equal(s->res.name, "");
	assert_string_equal(s->res.info.name, "r0");
	assert_int_equal(s->res.opt, NBD_OPT_GO);
	assert_int_equal(s->res.client_flags, CF_ALL);
	assert_false(s->res.block_size_agreed);
	assert_int_equal(s->res.info.flags, R0_FLAGS | NBD_FLAG_HAS_FLAGS);
	assert_int_equal(s->res.limits.size, 64 * MiB);
	assert_int_equal(s->res.limits.eflags, R0_FLAGS | NBD_FLAG_HAS_FLAGS);
	assert_false(s->res.limits.structured);
	assert_int_equal(s->res.limits.min_block, 512);
	assert_int_equal(s->res.limits.max_block, 32 * MiB);
	assert_string_equal(s->res.err, "");
	assert_true(s->traces > 0);
}

static void test_go_with_infos(void **state)
{
	static const uint16_t reqs[] = {NBD_INFO_NAME, NBD_INFO_DESCRIPTION, 0x1234,
					NBD_INFO_BLOCK_SIZE, NBD_INFO_EXPORT, NBD_INFO_NAME};
	struct srv *s = *state;
	uint32_t len;

	srv_start(s);
	c_greet(s, NBD_FLAG_C_FIXED_NEWSTYLE);
	c_info_go(s, NBD_OPT_GO, "r0", reqs, ARRAY_SIZE(reqs));
	c_expect_export(s, NBD_OPT_GO, 64 * MiB, R0_FLAGS);
	len = c_expect_info(s, NBD_OPT_GO, NBD_INFO_NAME);
	assert_int_equal(len, 2);
	assert_memory_equal(s->buf + 2, "r0", 2);
	len = c_expect_info(s, NBD_OPT_GO, NBD_INFO_DESCRIPTION);
	assert_int_equal(len, 9);
	assert_memory_equal(s->buf + 2, "volume r0", 9);
	c_expect_block_size(s, NBD_OPT_GO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
	assert_string_equal(s->res.name, "r0");
	assert_true(s->res.block_size_agreed);
	assert_int_equal(s->res.client_flags, NBD_FLAG_C_FIXED_NEWSTYLE);
}

static void test_info_then_go(void **state)
{
	static const uint16_t bs[] = {NBD_INFO_BLOCK_SIZE};
	static const uint16_t desc[] = {NBD_INFO_DESCRIPTION, NBD_INFO_NAME};
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	/* INFO does not end the handshake; an export without block sizes */
	c_info_go(s, NBD_OPT_INFO, "ro", bs, 1);
	c_expect_export(s, NBD_OPT_INFO, MiB, NBD_FLAG_READ_ONLY);
	c_expect(s, NBD_OPT_INFO, NBD_REP_ACK);
	/* no description to send: NAME only */
	c_info_go(s, NBD_OPT_INFO, "ro", desc, 2);
	c_expect_export(s, NBD_OPT_INFO, MiB, NBD_FLAG_READ_ONLY);
	c_expect_info(s, NBD_OPT_INFO, NBD_INFO_NAME);
	c_expect(s, NBD_OPT_INFO, NBD_REP_ACK);
	c_info_go(s, NBD_OPT_GO, "ro", bs, 1);
	c_expect_export(s, NBD_OPT_GO, MiB, NBD_FLAG_READ_ONLY);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
	assert_string_equal(s->res.name, "ro");
	assert_int_equal(s->res.limits.eflags, NBD_FLAG_READ_ONLY | NBD_FLAG_HAS_FLAGS);
	assert_int_equal(s->res.limits.min_block, 0);
	assert_int_equal(s->res.limits.max_block, 0);
}

static void test_info_refused(void **state)
{
	static const struct {
		const char *name;
		uint32_t type;
		const char *msg;
	} refused[] = {
		{"nope", NBD_REP_ERR_UNKNOWN, "no export named \"nope\""},
		{"sec", NBD_REP_ERR_UNKNOWN, "sec is Secondary"},
		{"pol", NBD_REP_ERR_POLICY, "\"pol\" is not available"},
		{"down", NBD_REP_ERR_SHUTDOWN, "\"down\""},
		{"bad", NBD_REP_ERR_UNKNOWN, "misconfigured: minimum block size"},
	};
	struct srv *s = *state;
	size_t i;

	srv_start(s);
	c_greet(s, CF_ALL);
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		c_info_go(s, NBD_OPT_INFO, refused[i].name, NULL, 0);
		c_expect_err(s, NBD_OPT_INFO, refused[i].type, refused[i].msg);
		c_info_go(s, NBD_OPT_GO, refused[i].name, NULL, 0);
		c_expect_err(s, NBD_OPT_GO, refused[i].type, refused[i].msg);
	}
	c_abort(s);
}

static void test_block_size_required(void **state)
{
	static const uint16_t bs[] = {NBD_INFO_BLOCK_SIZE};
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	/* without the request: the sizes, then the error, for INFO and GO */
	c_info_go(s, NBD_OPT_INFO, "bs", NULL, 0);
	c_expect_export(s, NBD_OPT_INFO, 8 * MiB, NBD_FLAG_SEND_FLUSH);
	c_expect_block_size(s, NBD_OPT_INFO, 4096, 4096, MiB);
	c_expect_err(s, NBD_OPT_INFO, NBD_REP_ERR_BLOCK_SIZE_REQD, "NBD_INFO_BLOCK_SIZE");
	c_info_go(s, NBD_OPT_GO, "bs", NULL, 0);
	c_expect_export(s, NBD_OPT_GO, 8 * MiB, NBD_FLAG_SEND_FLUSH);
	c_expect_block_size(s, NBD_OPT_GO, 4096, 4096, MiB);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_BLOCK_SIZE_REQD, "requires");
	/* with it */
	c_info_go(s, NBD_OPT_GO, "bs", bs, 1);
	c_expect_export(s, NBD_OPT_GO, 8 * MiB, NBD_FLAG_SEND_FLUSH);
	c_expect_block_size(s, NBD_OPT_GO, 4096, 4096, MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
	assert_true(s->res.block_size_agreed);
	assert_int_equal(s->res.limits.min_block, 4096);
	assert_int_equal(s->res.limits.max_block, MiB);
}

static void test_malformed_info(void **state)
{
	struct srv *s = *state;
	uint8_t d[NBD_MAX_STRING + 64] = {0};
	uint32_t len;

	srv_start(s);
	c_greet(s, CF_ALL);
	/* shorter than 6 bytes */
	c_opt(s, NBD_OPT_GO, "\0\0\0\0\0", 5);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_INVALID, "shorter");
	/* name length past the data */
	len = info_data(d, "r0", NULL, 0);
	nbd_proto_put32(d, 3);
	c_opt(s, NBD_OPT_GO, d, len);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_INVALID, "past");
	nbd_proto_put32(d, UINT32_MAX);
	c_opt(s, NBD_OPT_INFO, d, len);
	c_expect_err(s, NBD_OPT_INFO, NBD_REP_ERR_INVALID, "past");
	/* request count does not match the length (too many, too few) */
	len = info_data(d, "r0", NULL, 0);
	nbd_proto_put16(d + 6, 1);
	c_opt(s, NBD_OPT_GO, d, len);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_INVALID, "does not match");
	c_opt(s, NBD_OPT_GO, d, len + 3);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_INVALID, "does not match");
	/* NUL in the name */
	len = info_data(d, "r0\x01x", NULL, 0);
	d[6] = '\0';
	c_opt(s, NBD_OPT_GO, d, len);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_INVALID, "NUL");
	/* a name of 4097 bytes */
	memset(d + 4, 'n', NBD_MAX_STRING + 1);
	nbd_proto_put32(d, NBD_MAX_STRING + 1);
	nbd_proto_put16(d + 4 + NBD_MAX_STRING + 1, 0);
	c_opt_hdr(s, NBD_OPT_INFO, NBD_MAX_STRING + 7);
	c_write_bulk(s, d, NBD_MAX_STRING + 7);
	c_expect_err(s, NBD_OPT_INFO, NBD_REP_ERR_INVALID, "longer than 4096");
	/* after all that, the handshake still works */
	c_info_go(s, NBD_OPT_GO, "r0", NULL, 0);
	c_expect_export(s, NBD_OPT_GO, 64 * MiB, R0_FLAGS);
	c_expect_block_size(s, NBD_OPT_GO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
}

/* Is s (len bytes) well-formed UTF-8 (structure only)? */
static bool utf8_complete(const uint8_t *p, size_t len)
{
	size_t i = 0, n, k;

	while (i < len) {
		n = p[i] < 0x80 ? 1 : p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : p[i] >= 0xc0 ? 2 : 0;
		if (n == 0 || i + n > len)
			return false;
		for (k = 1; k < n; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		i += n;
	}
	return true;
}

/*
 * A long name is shortened in messages, never inside a UTF-8 character:
 * names of 2-byte characters, once at an even and once at an odd offset.
 * Control characters, quotes and backslashes are escaped.
 */
static void test_long_name_in_message(void **state)
{
	struct srv *s = *state;
	char name[1 + 150 * 2 + 1];
	uint8_t d[sizeof(name) + 8];
	uint32_t len;
	int i, shift;

	srv_start(s);
	c_greet(s, CF_ALL);
	for (shift = 0; shift < 2; shift++) {
		strcpy(name, shift ? "x" : "");
		for (i = 0; i < 150; i++)
			strcat(name, "\xc3\xa9");
		c_opt(s, NBD_OPT_INFO, d, info_data(d, name, NULL, 0));
		len = c_expect(s, NBD_OPT_INFO, NBD_REP_ERR_UNKNOWN);
		assert_in_range(len, 100, 160);
		assert_true(utf8_complete(s->buf, len));
		assert_non_null(strstr((char *)s->buf, "...\""));
	}
	c_info_go(s, NBD_OPT_GO, "a\nb\"c\\\x7f", NULL, 0);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_UNKNOWN,
		     "no export named \"a\\x0ab\\x22c\\x5c\\x7f\"");
	c_abort(s);
}

/* ---------------------------------------------------------------- LIST */

static void test_list_exports(void **state)
{
	static const char *const want[][2] = {
		{"r0", "volume r0"}, {"ro", ""}, {"bs", "needs block sizes"}};
	struct srv *s = *state;
	uint32_t len, n;
	size_t i;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_opt(s, NBD_OPT_LIST, NULL, 0);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		len = c_expect(s, NBD_OPT_LIST, NBD_REP_SERVER);
		n = nbd_proto_get32(s->buf);
		assert_int_equal(n, strlen(want[i][0]));
		assert_int_equal(len, 4 + n + strlen(want[i][1]));
		assert_memory_equal(s->buf + 4, want[i][0], n);
		assert_memory_equal(s->buf + 4 + n, want[i][1], strlen(want[i][1]));
	}
	c_expect(s, NBD_OPT_LIST, NBD_REP_ACK);
	/* LIST takes no data */
	c_opt(s, NBD_OPT_LIST, "x", 1);
	c_expect_err(s, NBD_OPT_LIST, NBD_REP_ERR_INVALID, "no data");
	c_abort(s);
	/* without a list() callback */
	s = restart(state);
	s->ops = &ops_no_list;
	srv_start(s);
	c_greet(s, CF_ALL);
	c_opt(s, NBD_OPT_LIST, NULL, 0);
	c_expect_err(s, NBD_OPT_LIST, NBD_REP_ERR_POLICY, "disabled");
	c_abort(s);
}

/* ---------------------------------------------------------------- EXPORT_NAME */

static void test_export_name(void **state)
{
	static const struct {
		uint32_t cflags;
		const char *name;
		uint64_t size;
		uint16_t flags;
	} runs[] = {
		{NBD_FLAG_C_FIXED_NEWSTYLE, "ro", MiB, NBD_FLAG_READ_ONLY}, /* with zeroes */
		{CF_ALL, "", 64 * MiB, R0_FLAGS},                          /* without */
		{0, "r0", 64 * MiB, R0_FLAGS}, /* no fixed newstyle: still fine */
	};
	uint8_t out[10 + NBD_EXPORT_NAME_PAD], zero[NBD_EXPORT_NAME_PAD] = {0};
	struct srv *s = *state;
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		if (i > 0)
			s = restart(state);
		len = runs[i].cflags & NBD_FLAG_C_NO_ZEROES ? 10 : sizeof(out);
		srv_start(s);
		c_greet(s, runs[i].cflags);
		c_opt(s, NBD_OPT_EXPORT_NAME, runs[i].name, (uint32_t)strlen(runs[i].name));
		c_read(s, out, len);
		assert_int_equal(nbd_proto_get64(out), runs[i].size);
		assert_int_equal(nbd_proto_get16(out + 8), runs[i].flags | NBD_FLAG_HAS_FLAGS);
		assert_memory_equal(out + 10, zero, len - 10);
		assert_int_equal(srv_wait(s), 0);
		c_expect_nothing(s);
		assert_int_equal(s->res.opt, NBD_OPT_EXPORT_NAME);
		assert_string_equal(s->res.name, runs[i].name);
		assert_int_equal(s->res.limits.size, runs[i].size);
		assert_false(s->res.block_size_agreed);
	}
}

/* What the protocol cannot answer with an error reply: a disconnect. */
static void test_disconnects(void **state)
{
	static const struct {
		const char *what;
		uint32_t cflags;
		uint64_t magic; /* 0: no option is sent */
		uint32_t opt, len;
		const char *data; /* the option data; NULL: none sent, or 'n's if send */
		bool send;
		int rc;
		const char *err;
	} cases[] = {
		{"unknown client flag", CF_ALL | 4, 0, 0, 0, NULL, false, -EPROTO,
		 "client flags 0x00000007"},
		{"bad option magic", CF_ALL, 0x4948415645f4f053ULL, NBD_OPT_GO, 0, NULL, false,
		 -EPROTO, "bad option magic"},
		{"GO without fixed newstyle", 0, NBD_OPTS_MAGIC, NBD_OPT_GO, 0, NULL, false, -EPROTO,
		 "without fixed newstyle"},
		{"unknown export", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, 4, "nope", true,
		 -ENOENT, "no export named \"nope\""},
		{"Secondary", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, 3, "sec", true, -EAGAIN,
		 "sec is Secondary"},
		{"block sizes required", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, 2, "bs", true,
		 -EINVAL, "requires NBD_OPT_GO"},
		{"misconfigured export", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, 3, "bad", true,
		 -EINVAL, "misconfigured"},
		{"NUL in the name", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, 4, "r0\0x", true,
		 -EPROTO, "NUL"},
		{"name of 4097 bytes", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME,
		 NBD_MAX_STRING + 1, NULL, true, -EPROTO, "longer than 4096"},
		{"name of 4 GiB", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_EXPORT_NAME, UINT32_MAX, NULL,
		 false, -EPROTO, "longer than 4096"},
		{"option data above 1 MiB", CF_ALL, NBD_OPTS_MAGIC, NBD_OPT_LIST, MiB + 1, NULL,
		 false, -EMSGSIZE, "more than 1048576"},
	};
	uint8_t hdr[NBD_OPT_HDR_SIZE];
	struct srv *s = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (i > 0)
			s = restart(state);
		srv_start(s);
		c_greet(s, cases[i].cflags);
		if (cases[i].magic) {
			nbd_proto_put64(hdr, cases[i].magic);
			nbd_proto_put32(hdr + 8, cases[i].opt);
			nbd_proto_put32(hdr + 12, cases[i].len);
			c_write(s, hdr, sizeof(hdr));
		}
		if (cases[i].send)
			c_write_bulk(s, cases[i].data ? cases[i].data : long_name, cases[i].len);
		c_expect_eof(s);
		if (srv_wait(s) != cases[i].rc || !strstr(s->res.err, cases[i].err))
			fail_msg("%s: rc %d \"%s\", want %d \"%s\"", cases[i].what, s->rc,
				 s->res.err, cases[i].rc, cases[i].err);
	}
}

/* ---------------------------------------------------------------- other options */

static void test_abort(void **state)
{
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_opt(s, NBD_OPT_ABORT, "ignored", 7); /* data is ignored, not refused */
	c_expect(s, NBD_OPT_ABORT, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), -ECONNABORTED);
	assert_non_null(strstr(s->res.err, "NBD_OPT_ABORT"));
	c_expect_eof(s);
}

static void test_unsupported_options(void **state)
{
	static const struct {
		uint32_t opt;
		const char *msg;
	} unsup[] = {
		{NBD_OPT_STARTTLS, "TLS"},
		{NBD_OPT_PEEK_EXPORT, "option 4"},
		{NBD_OPT_EXTENDED_HEADERS, "option 11"},
		{0, "option 0"},
		{99, "option 99"},
		{UINT32_MAX, "option 4294967295"},
	};
	struct srv *s = *state;
	size_t i;

	srv_start(s);
	c_greet(s, CF_ALL);
	for (i = 0; i < ARRAY_SIZE(unsup); i++) {
		c_opt(s, unsup[i].opt, "some data", 9);
		c_expect_err(s, unsup[i].opt, NBD_REP_ERR_UNSUP, unsup[i].msg);
	}
	c_info_go(s, NBD_OPT_GO, "ro", NULL, 0);
	c_expect_export(s, NBD_OPT_GO, MiB, NBD_FLAG_READ_ONLY);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
}

/* ---------------------------------------------------------------- structured replies */

static void test_structured_reply(void **state)
{
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	/* no data allowed; the refusal does not negotiate anything */
	c_opt(s, NBD_OPT_STRUCTURED_REPLY, "x", 1);
	c_expect_err(s, NBD_OPT_STRUCTURED_REPLY, NBD_REP_ERR_INVALID, "takes no data");
	c_info_go(s, NBD_OPT_INFO, "r0", NULL, 0);
	c_expect_export(s, NBD_OPT_INFO, 64 * MiB, R0_FLAGS);
	c_expect_block_size(s, NBD_OPT_INFO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_INFO, NBD_REP_ACK);
	/* acknowledged (twice is fine): DF is advertised from now on */
	c_opt(s, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	c_expect(s, NBD_OPT_STRUCTURED_REPLY, NBD_REP_ACK);
	c_opt(s, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	c_expect(s, NBD_OPT_STRUCTURED_REPLY, NBD_REP_ACK);
	c_info_go(s, NBD_OPT_GO, "r0", NULL, 0);
	c_expect_export(s, NBD_OPT_GO, 64 * MiB, R0_FLAGS | NBD_FLAG_SEND_DF);
	c_expect_block_size(s, NBD_OPT_GO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
	assert_true(s->res.limits.structured);
	assert_int_equal(s->res.limits.eflags, R0_FLAGS | NBD_FLAG_SEND_DF | NBD_FLAG_HAS_FLAGS);
	assert_int_equal(s->res.info.flags, R0_FLAGS | NBD_FLAG_SEND_DF | NBD_FLAG_HAS_FLAGS);
}

static void test_structured_export_name(void **state)
{
	struct srv *s = *state;
	uint8_t out[10];

	srv_start(s);
	c_greet(s, CF_ALL);
	c_opt(s, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	c_expect(s, NBD_OPT_STRUCTURED_REPLY, NBD_REP_ACK);
	c_opt(s, NBD_OPT_EXPORT_NAME, "ro", 2);
	c_read(s, out, sizeof(out));
	assert_int_equal(nbd_proto_get64(out), MiB);
	assert_int_equal(nbd_proto_get16(out + 8),
			 NBD_FLAG_READ_ONLY | NBD_FLAG_SEND_DF | NBD_FLAG_HAS_FLAGS);
	assert_int_equal(srv_wait(s), 0);
	assert_true(s->res.limits.structured);
}

/* ---------------------------------------------------------------- meta contexts */

/* LIST/SET_META_CONTEXT data for name and the queries q[0..n). */
static uint32_t meta_data(uint8_t *buf, const char *name, const char *const *q, uint32_t n)
{
	uint32_t len = (uint32_t)strlen(name), pos, i;

	nbd_proto_put32(buf, len);
	memcpy(buf + 4, name, len);
	nbd_proto_put32(buf + 4 + len, n);
	pos = 8 + len;
	for (i = 0; i < n; i++) {
		uint32_t ql = (uint32_t)strlen(q[i]);

		nbd_proto_put32(buf + pos, ql);
		memcpy(buf + pos + 4, q[i], ql);
		pos += 4 + ql;
	}
	return pos;
}

static void c_meta(struct srv *s, uint32_t opt, const char *name, const char *const *q,
		   uint32_t n)
{
	uint8_t data[512];

	c_opt(s, opt, data, meta_data(data, name, q, n));
}

/* An NBD_REP_META_CONTEXT for base:allocation with this id. */
static void c_expect_alloc(struct srv *s, uint32_t opt, uint32_t id)
{
	uint32_t len = c_expect(s, opt, NBD_REP_META_CONTEXT);

	assert_int_equal(len, 4 + strlen("base:allocation"));
	assert_int_equal(nbd_proto_get32(s->buf), id);
	assert_memory_equal(s->buf + 4, "base:allocation", len - 4);
}

static void c_structured(struct srv *s)
{
	c_opt(s, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	c_expect(s, NBD_OPT_STRUCTURED_REPLY, NBD_REP_ACK);
}

static void c_go_r0(struct srv *s, const char *name)
{
	c_info_go(s, NBD_OPT_GO, name, NULL, 0);
	c_expect_export(s, NBD_OPT_GO, 64 * MiB, R0_FLAGS | NBD_FLAG_SEND_DF);
	c_expect_block_size(s, NBD_OPT_GO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
}

static void test_meta_context(void **state)
{
	static const char *const wild[] = {"base:"};
	static const char *const alloc[] = {"qemu:dirty-bitmap:b", "base:allocation", "x-a:b"};
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_structured(s);
	/* listing: everything (no query), the base: wildcard, the name */
	c_meta(s, NBD_OPT_LIST_META_CONTEXT, "r0", NULL, 0);
	c_expect_alloc(s, NBD_OPT_LIST_META_CONTEXT, 0);
	c_expect(s, NBD_OPT_LIST_META_CONTEXT, NBD_REP_ACK);
	c_meta(s, NBD_OPT_LIST_META_CONTEXT, "r0", wild, 1);
	c_expect_alloc(s, NBD_OPT_LIST_META_CONTEXT, 0);
	c_expect(s, NBD_OPT_LIST_META_CONTEXT, NBD_REP_ACK);
	c_meta(s, NBD_OPT_LIST_META_CONTEXT, "r0", alloc, 3);
	c_expect_alloc(s, NBD_OPT_LIST_META_CONTEXT, 0);
	c_expect(s, NBD_OPT_LIST_META_CONTEXT, NBD_REP_ACK);
	/* the wildcard selects nothing; the name does, among unknown ones */
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r0", wild, 1);
	c_expect(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ACK);
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r0", alloc, 3);
	c_expect_alloc(s, NBD_OPT_SET_META_CONTEXT, 1);
	c_expect(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ACK);
	c_go_r0(s, "r0");
	assert_int_equal(s->res.limits.meta_alloc, 1);
	assert_true(s->res.limits.structured);
}

/* Contexts that are not selected, or not for the export of GO. */
static void test_meta_context_unselected(void **state)
{
	static const char *const unknown[] = {"base:dirty", "qemu:allocation-depth", "base:x:y"};
	static const char *const alloc[] = {"base:allocation"};
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_structured(s);
	c_meta(s, NBD_OPT_LIST_META_CONTEXT, "r0", unknown, 3);
	c_expect(s, NBD_OPT_LIST_META_CONTEXT, NBD_REP_ACK);
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r0", unknown, 3);
	c_expect(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ACK);
	/* an export without block status offers nothing */
	c_meta(s, NBD_OPT_LIST_META_CONTEXT, "ro", NULL, 0);
	c_expect(s, NBD_OPT_LIST_META_CONTEXT, NBD_REP_ACK);
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "ro", alloc, 1);
	c_expect(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ACK);
	/* an unknown export is an error */
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r9", alloc, 1);
	c_expect_err(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ERR_UNKNOWN, "no export named");
	/* selected for r0, then GO to "" (the same export by another name) */
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r0", alloc, 1);
	c_expect_alloc(s, NBD_OPT_SET_META_CONTEXT, 1);
	c_expect(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ACK);
	c_go_r0(s, "");
	assert_int_equal(s->res.limits.meta_alloc, 0);
}

/* A later SET replaces the selection, even when it fails. */
static void test_meta_context_replaced(void **state)
{
	static const char *const alloc[] = {"base:allocation"};
	struct srv *s = *state;
	uint8_t data[64];
	uint32_t len;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_structured(s);
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r0", alloc, 1);
	c_expect_alloc(s, NBD_OPT_SET_META_CONTEXT, 1);
	c_expect(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ACK);
	len = meta_data(data, "r0", alloc, 1);
	c_opt(s, NBD_OPT_SET_META_CONTEXT, data, len - 1); /* the query is cut */
	c_expect_err(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ERR_INVALID, "runs past");
	c_go_r0(s, "r0");
	assert_int_equal(s->res.limits.meta_alloc, 0);
}

static void test_meta_context_no_structured(void **state)
{
	static const char *const alloc[] = {"base:allocation"};
	struct srv *s = *state;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_meta(s, NBD_OPT_LIST_META_CONTEXT, "r0", NULL, 0);
	c_expect_err(s, NBD_OPT_LIST_META_CONTEXT, NBD_REP_ERR_INVALID, "structured replies");
	c_meta(s, NBD_OPT_SET_META_CONTEXT, "r0", alloc, 1);
	c_expect_err(s, NBD_OPT_SET_META_CONTEXT, NBD_REP_ERR_INVALID, "structured replies");
	c_info_go(s, NBD_OPT_GO, "r0", NULL, 0);
	c_expect_export(s, NBD_OPT_GO, 64 * MiB, R0_FLAGS);
	c_expect_block_size(s, NBD_OPT_GO, 512, 4096, 32 * MiB);
	c_expect(s, NBD_OPT_GO, NBD_REP_ACK);
	assert_int_equal(srv_wait(s), 0);
	assert_int_equal(s->res.limits.meta_alloc, 0);
}

static void test_meta_context_malformed(void **state)
{
	static const struct {
		uint8_t data[40];
		uint32_t len;
		const char *why;
	} bad[] = {
		{{0, 0, 0, 2, 'r', '0', 0}, 7, "shorter than 8"},
		{{0, 0, 0, 9, 'r', '0', 0, 0, 0, 0}, 10, "name length runs past"},
		{{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, 8, "name length runs past"},
		{{0, 0, 0, 2, 'r', 0, 0, 0, 0, 0}, 10, "NUL"},
		/* one query announced, none there; two announced, one there */
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 1}, 10, "query runs past"},
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 2, 0, 0, 0, 5, 'b', 'a', 's', 'e', ':'}, 19,
		 "query runs past"},
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf0, 'b'}, 15,
		 "query runs past"},
		/* a byte too many after the queries */
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 0, 'x'}, 11, "does not match"},
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 1, 0, 0, 0, 4, 'b', 'a', 's', 'e'}, 18,
		 "namespace"},
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 1, 0, 0, 0, 2, ':', 'a'}, 16, "namespace"},
		{{0, 0, 0, 2, 'r', '0', 0, 0, 0, 1, 0, 0, 0, 3, 'b', ':', 0}, 17, "NUL"},
	};
	struct srv *s = *state;
	size_t i;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_structured(s);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		uint32_t opt = i % 2 ? NBD_OPT_LIST_META_CONTEXT : NBD_OPT_SET_META_CONTEXT;

		c_opt(s, opt, bad[i].data, bad[i].len);
		c_expect_err(s, opt, NBD_REP_ERR_INVALID, bad[i].why);
	}
	c_go_r0(s, "r0");
	assert_int_equal(s->res.limits.meta_alloc, 0);
}

static void test_oversized_option(void **state)
{
	struct srv *s = *state;
	uint32_t len = (1u << 20); /* the largest that is skipped */
	uint8_t *junk = calloc(1, len);

	assert_non_null(junk);
	srv_start(s);
	c_greet(s, CF_ALL);
	c_opt_hdr(s, NBD_OPT_GO, 8193);
	c_write_bulk(s, junk, 8193);
	c_expect_err(s, NBD_OPT_GO, NBD_REP_ERR_TOO_BIG, "8193 bytes");
	c_opt_hdr(s, 1234, len);
	c_write_bulk(s, junk, len);
	free(junk);
	c_expect_err(s, 1234, NBD_REP_ERR_TOO_BIG, "more than 8192");
	c_abort(s);
}

/* ---------------------------------------------------------------- broken clients */

/* Every prefix of a valid conversation, then EOF: a clean -ECONNRESET. */
static void test_truncated(void **state)
{
	static const uint16_t reqs[] = {NBD_INFO_BLOCK_SIZE};
	uint8_t script[256], *p = script, greeting[18];
	struct srv *s;
	size_t len, cut;

	nbd_proto_put32(p, CF_ALL);
	p += 4;
	nbd_proto_put64(p, NBD_OPTS_MAGIC);
	nbd_proto_put32(p + 8, NBD_OPT_INFO);
	nbd_proto_put32(p + 12, info_data(p + 16, "r0", reqs, 1));
	p += 16 + nbd_proto_get32(p + 12);
	nbd_proto_put64(p, NBD_OPTS_MAGIC);
	nbd_proto_put32(p + 8, NBD_OPT_GO);
	nbd_proto_put32(p + 12, info_data(p + 16, "r0", reqs, 1));
	p += 16 + nbd_proto_get32(p + 12);
	len = (size_t)(p - script);

	for (cut = 0; cut < len; cut++) {
		s = restart(state);
		srv_start(s);
		c_read(s, greeting, sizeof(greeting));
		c_write(s, script, cut);
		shutdown(s->cfd, SHUT_WR);
		if (srv_wait(s) != -ECONNRESET)
			fail_msg("cut at %zu of %zu: rc %d (%s)", cut, len, s->rc, s->res.err);
	}
	/* the whole script works */
	s = restart(state);
	srv_start(s);
	c_read(s, greeting, sizeof(greeting));
	c_write(s, script, len);
	assert_int_equal(srv_wait(s), 0);
}

static void test_client_gone(void **state)
{
	struct srv *s = *state;
	int rc;

	srv_start(s);
	c_greet(s, CF_ALL);
	c_opt(s, NBD_OPT_LIST, NULL, 0);
	c_opt(s, NBD_OPT_LIST, NULL, 0);
	close(s->cfd); /* without reading: the server must not get SIGPIPE */
	s->cfd = -1;
	rc = srv_wait(s);
	assert_true(rc == -EPIPE || rc == -ECONNRESET);
}

/* A silent client, then one that trickles a byte every 20 ms: both time out. */
static void test_timeout(void **state)
{
	struct srv *s = *state;
	struct timespec t0, t1, pause = {.tv_nsec = 20 * 1000 * 1000};
	uint8_t hdr[NBD_OPT_HDR_SIZE];
	long ms;
	size_t i;

	s->timeout_ms = 200;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	srv_start(s);
	c_greet(s, CF_ALL);
	assert_int_equal(srv_wait(s), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_in_range(ms, 190, 2000);
	c_expect_eof(s);

	s = restart(state);
	s->timeout_ms = 150;
	srv_start(s);
	c_greet(s, CF_ALL);
	nbd_proto_put64(hdr, NBD_OPTS_MAGIC);
	nbd_proto_put32(hdr + 8, 99);
	nbd_proto_put32(hdr + 12, 1000);
	for (i = 0; i < sizeof(hdr); i++) {
		if (send(s->cfd, hdr + i, 1, MSG_NOSIGNAL) != 1)
			break;
		nanosleep(&pause, NULL);
	}
	assert_int_equal(srv_wait(s), -ETIMEDOUT);
}

static void test_too_many_options(void **state)
{
	struct srv *s = *state;
	int i;

	srv_start(s);
	c_greet(s, CF_ALL);
	for (i = 0; i < 128; i++) {
		c_opt(s, 77, NULL, 0);
		c_expect(s, 77, NBD_REP_ERR_UNSUP);
	}
	/* the server does not wait for a 129th option: it closes at once */
	c_expect_eof(s);
	assert_int_equal(srv_wait(s), -EPROTO);
	assert_non_null(strstr(s->res.err, "more than 128 options"));
}

/* ---------------------------------------------------------------- export checks */

static void test_check_export(void **state)
{
	static char long_desc[NBD_MAX_STRING + 2];
	static const struct {
		struct nbd_export_info e;
		const char *why; /* NULL: valid */
	} cases[] = {
		{{"r0", "d", 64 * MiB, R0_FLAGS, 512, 4096, 32 * MiB, true, false}, NULL},
		{{NULL, NULL, 0, 0, 0, 0, 0, false, false}, NULL},
		{{NULL, NULL, 100, 0, 1, 512, 0xffffffff, false, false}, NULL},
		{{NULL, NULL, 64 * MiB, 0, 65536, 65536, 65536, false, false}, NULL},
		{{NULL, NULL, 4096, 0, 4096, 1 << 20, 4096, false, false}, NULL}, /* max >= size */
		{{NULL, NULL, 1ULL << 62, NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_SEND_FAST_ZERO |
						  NBD_FLAG_ROTATIONAL | NBD_FLAG_READ_ONLY,
		  0, 0, 0, false, false},
		 NULL},
		{{long_name, NULL, 0, 0, 0, 0, 0, false, false}, "name"},
		{{NULL, long_desc, 0, 0, 0, 0, 0, false, false}, "description"},
		{{NULL, NULL, 1ULL << 63, 0, 0, 0, 0, false, false}, "2^63"},
		{{NULL, NULL, 0, NBD_FLAG_SEND_DF, 0, 0, 0, false, false}, "flag"},
		{{NULL, NULL, 0, NBD_FLAG_SEND_CACHE, 0, 0, 0, false, false}, NULL},
		{{NULL, NULL, 0, NBD_FLAG_SEND_RESIZE, 0, 0, 0, false, false}, "flag"},
		{{NULL, NULL, 0, 1u << 15, 0, 0, 0, false, false}, "flag"},
		{{NULL, NULL, 0, NBD_FLAG_SEND_FAST_ZERO, 0, 0, 0, false, false}, "FAST_ZERO"},
		{{NULL, NULL, 0, 0, 0, 0, 0, true, false}, "required"},
		{{NULL, NULL, MiB, 0, 0, 4096, MiB, false, false}, "minimum"},
		{{NULL, NULL, MiB, 0, 3, 4096, MiB, false, false}, "minimum"},
		{{NULL, NULL, MiB, 0, 131072, 131072, MiB, false, false}, "minimum"},
		{{NULL, NULL, MiB, 0, 512, 256, MiB, false, false}, "preferred"},
		{{NULL, NULL, MiB, 0, 4096, 2048, MiB, false, false}, "preferred"},
		{{NULL, NULL, MiB, 0, 512, 4095, MiB, false, false}, "preferred"},
		{{NULL, NULL, MiB, 0, 512, 4096, 0, false, false}, "maximum"},
		{{NULL, NULL, MiB, 0, 512, 4096, 1000, false, false}, "maximum"},
		{{NULL, NULL, MiB, 0, 512, 4096, 2048, false, false}, "maximum"},
		{{NULL, NULL, MiB + 1, 0, 512, 4096, MiB, false, false}, "size"},
	};
	size_t i;

	memset(long_desc, 'd', NBD_MAX_STRING + 1);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *why = "unset";
		int rc = nbd_handshake_check_export(&cases[i].e, &why);

		if (!cases[i].why) {
			if (rc != 0 || why)
				fail_msg("case %zu: refused: %s", i, why);
		} else if (rc != -EINVAL || !why || !strstr(why, cases[i].why)) {
			fail_msg("case %zu: rc %d \"%s\", want \"%s\"", i, rc, why ? why : "",
				 cases[i].why);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_go_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_go_with_infos, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_then_go, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_size_required, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_name_in_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_exports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsupported_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_structured_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_structured_export_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_context_unselected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_context_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_context_no_structured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_context_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_options, setup, teardown),
		cmocka_unit_test(test_check_export),
	};

	memset(long_name, 'n', NBD_MAX_STRING + 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
