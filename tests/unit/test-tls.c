/*
 * test-tls: TLS 1.3 with mutual certificates on one socket (lib/tls.c,
 * doc/wire-protocol.md §5.6). Two sessions over a non-blocking socketpair,
 * pumped until both finish, with certificates made by
 * tests/integration/tls-certs.sh: the right pair connects and carries
 * 1 MiB both ways; a certificate of the same CA for another host name,
 * one of another CA, or none fails the handshake on the side that checks
 * it, with the reason the log shows; a peer without TLS is named as such;
 * files that do not load are named with what is wrong with them.
 */
#include "unit.h"

#include <poll.h>
#include <sys/socket.h>

#include "tls.h"

static char *certs; /* directory of the certificates */

static char *path(const char *name)
{
	return unit_fmt("%s/%s", certs, name);
}

static struct tls_ctx *ctx_of(const char *ca, const char *node)
{
	char why[512];
	char *c = path(ca), *crt = unit_fmt("%s/%s.pem", certs, node),
	     *key = unit_fmt("%s/%s.key", certs, node);
	struct tls_files f = {c, crt, key};
	struct tls_ctx *t = NULL;
	int rc = tls_ctx_new(&f, why, sizeof(why), &t);

	if (rc < 0)
		fail_msg("tls_ctx_new(%s): %s", node, why);
	return t;
}

/* One session per end of a socketpair. */
struct duo {
	int fd[2];
	struct tls *t[2];
	int rc[2]; /* handshake: 1 running, 0 done, <0 failed */
};

static void duo_open(struct duo *d, struct tls_ctx *client, const char *server_name,
		     struct tls_ctx *server, const char *client_name)
{
	const char *cn[] = {server_name}, *sn[] = {client_name};

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, d->fd), 0);
	assert_int_equal(tls_new(client, d->fd[0], TLS_CLIENT, cn, 1, &d->t[0]), 0);
	assert_int_equal(tls_new(server, d->fd[1], TLS_SERVER, sn, 1, &d->t[1]), 0);
	d->rc[0] = d->rc[1] = 1;
}

static void duo_close(struct duo *d)
{
	for (int i = 0; i < 2; i++) {
		tls_free(d->t[i]);
		if (d->fd[i] >= 0)
			close(d->fd[i]);
	}
}

/* Pump both handshakes until neither waits any more; a failed side closes
 * its socket, as the daemon does, so the other learns it. */
static void duo_handshake(struct duo *d)
{
	for (int round = 0; round < 1000 && (d->rc[0] == 1 || d->rc[1] == 1); round++) {
		struct pollfd p[2];
		int np = 0;

		for (int i = 0; i < 2; i++) {
			short ev = 0;
			int rc;

			if (d->rc[i] != 1)
				continue;
			rc = tls_handshake(d->t[i], &ev);
			if (rc == -EAGAIN) {
				p[np++] = (struct pollfd){d->fd[i], ev, 0};
				continue;
			}
			d->rc[i] = rc;
			if (rc < 0) {
				shutdown(d->fd[i], SHUT_RDWR);
			}
		}
		if (np)
			assert_true(poll(p, (nfds_t)np, 5000) > 0);
	}
	assert_true(d->rc[0] != 1 || d->rc[1] != 1);
}

static void pass_bytes(struct duo *d, int from, size_t len)
{
	uint8_t *out = malloc(len), *in = malloc(len);
	size_t sent = 0, got = 0;

	assert_non_null(out);
	assert_non_null(in);
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(i * 7 + 3);
	while (got < len) {
		short ev = 0, ev2 = 0;
		ssize_t n;

		if (sent < len) {
			n = tls_write(d->t[from], out + sent, len - sent, &ev);
			if (n > 0)
				sent += (size_t)n;
			else
				assert_int_equal(n, -EAGAIN);
		}
		n = tls_read(d->t[!from], in + got, len - got, &ev2);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		assert_int_equal(n, -EAGAIN);
		if (sent == len) {
			struct pollfd p = {d->fd[!from], ev2, 0};

			assert_true(tls_pending(d->t[!from]) || poll(&p, 1, 5000) == 1);
		}
	}
	assert_memory_equal(in, out, len);
	free(in);
	free(out);
}

static void test_connects(void **state)
{
	struct tls_ctx *a = ctx_of("ca.pem", "alice"), *b = ctx_of("ca.pem", "bob");
	struct duo d;
	char desc[256];

	(void)state;
	duo_open(&d, a, "bob", b, "alice");
	tls_ctx_free(a); /* the sessions keep what they need */
	tls_ctx_free(b);
	duo_handshake(&d);
	assert_int_equal(d.rc[0], 0);
	assert_int_equal(d.rc[1], 0);
	tls_describe(d.t[1], desc, sizeof(desc));
	assert_non_null(strstr(desc, "TLSv1.3"));
	assert_non_null(strstr(desc, "CN=alice"));
	pass_bytes(&d, 0, 1 << 20);
	pass_bytes(&d, 1, 1 << 20);
	pass_bytes(&d, 0, 1);
	assert_false(tls_pending(d.t[1]));
	duo_close(&d);
}

/* The end of the stream: a TCP close without close_notify is its end. */
static void test_eof(void **state)
{
	struct tls_ctx *a = ctx_of("ca.pem", "alice"), *b = ctx_of("ca.pem", "bob");
	struct duo d;
	uint8_t buf[16];
	short ev;
	ssize_t n;

	(void)state;
	duo_open(&d, a, "bob", b, "alice");
	duo_handshake(&d);
	assert_int_equal(d.rc[0] | d.rc[1], 0);
	close(d.fd[0]);
	d.fd[0] = -1;
	n = tls_read(d.t[1], buf, sizeof(buf), &ev);
	/* the end (no close_notify: not a TLS error), or the kernel's reset
	 * when the closed end left bytes unread; pktio says -ECONNRESET */
	assert_true(n == 0 || n == -ECONNRESET);
	duo_close(&d);
	tls_ctx_free(a);
	tls_ctx_free(b);
}

/* A failed side's reason contains want. */
static void expect_fail(struct duo *d, int side, const char *want)
{
	duo_handshake(d);
	assert_true(d->rc[side] < 0);
	if (!strstr(tls_reason(d->t[side]), want))
		fail_msg("reason \"%s\" lacks \"%s\"", tls_reason(d->t[side]), want);
}

/* mallory has a certificate of the same CA, for another name. */
static void test_wrong_name(void **state)
{
	struct tls_ctx *a = ctx_of("ca.pem", "alice"), *m = ctx_of("ca.pem", "mallory");
	struct duo d;

	(void)state;
	/* mallory connects to alice, who expects bob */
	duo_open(&d, m, "alice", a, "bob");
	expect_fail(&d, 1, "hostname mismatch");
	expect_fail(&d, 1, "'on' section");
	/* a TLS 1.3 client is done before the server has checked it: mallory
	 * learns the refusal at its first read, and nothing else */
	if (d.rc[0] == 0) {
		uint8_t b[16];
		short ev = 0;
		ssize_t n = tls_read(d.t[0], b, sizeof(b), &ev);

		assert_true(n == -EPROTO || n == -ECONNRESET);
	}
	duo_close(&d);
	/* alice connects to mallory's address, expecting bob */
	duo_open(&d, a, "bob", m, "alice");
	expect_fail(&d, 0, "hostname mismatch");
	duo_close(&d);
	tls_ctx_free(a);
	tls_ctx_free(m);
}

static void test_other_ca(void **state)
{
	struct tls_ctx *a = ctx_of("ca.pem", "alice"), *o = ctx_of("ca.pem", "other-bob");
	struct duo d;

	(void)state;
	duo_open(&d, o, "alice", a, "bob");
	expect_fail(&d, 1, "certificate verify failed");
	expect_fail(&d, 1, "local issuer");
	duo_close(&d);
	tls_ctx_free(a);
	tls_ctx_free(o);
}

static void test_not_tls(void **state)
{
	struct tls_ctx *a = ctx_of("ca.pem", "alice");
	const char *names[] = {"bob"};
	/* a P_HELLO header: what a node without TLS sends first */
	static const uint8_t hello[16] = {0x54, 0x4e, 0x44, 0x4d, 0, 1, 0, 1, 0xff, 0xff, 0, 0, 1, 24};
	struct tls *t;
	int fd[2], rc;
	short ev = 0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0);
	assert_int_equal(write(fd[0], hello, sizeof(hello)), (ssize_t)sizeof(hello));
	assert_int_equal(tls_new(a, fd[1], TLS_SERVER, names, 1, &t), 0);
	rc = tls_handshake(t, &ev);
	assert_int_equal(rc, -EPROTO);
	assert_non_null(strstr(tls_reason(t), "does not speak TLS"));
	tls_free(t);
	close(fd[0]);
	close(fd[1]);
	tls_ctx_free(a);
	assert_false(tls_looks_like_hello(hello, sizeof(hello)));
}

/* What a client's first bytes look like to a node without TLS. */
static void test_looks_like_hello(void **state)
{
	struct tls_ctx *a = ctx_of("ca.pem", "alice");
	const char *names[] = {"bob"};
	uint8_t buf[512];
	struct tls *t;
	int fd[2];
	short ev = 0;
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0);
	assert_int_equal(tls_new(a, fd[0], TLS_CLIENT, names, 1, &t), 0);
	assert_int_equal(tls_handshake(t, &ev), -EAGAIN);
	assert_int_equal(ev, POLLIN);
	n = read(fd[1], buf, sizeof(buf));
	assert_true(n > 5);
	assert_true(tls_looks_like_hello(buf, (size_t)n));
	assert_false(tls_looks_like_hello(buf, 2));
	tls_free(t);
	close(fd[0]);
	close(fd[1]);
	tls_ctx_free(a);
}

static void expect_ctx_error(const char *ca, const char *cert, const char *key, const char *want)
{
	char why[512] = "";
	struct tls_files f = {ca, cert, key};
	struct tls_ctx *c = NULL;

	assert_true(tls_ctx_new(&f, why, sizeof(why), &c) < 0);
	assert_null(c);
	if (!strstr(why, want))
		fail_msg("\"%s\" lacks \"%s\"", why, want);
}

static void test_bad_files(void **state)
{
	char *ca = path("ca.pem"), *crt = path("alice.pem"), *key = path("alice.key"),
	     *bkey = path("bob.key"), *none = path("none.pem"), *junk = path("junk.pem");

	(void)state;
	unit_write(certs, "junk.pem", "not a certificate\n");
	expect_ctx_error(none, crt, key, "tls-ca ");
	expect_ctx_error(none, crt, key, "No such file");
	expect_ctx_error(ca, none, key, "tls-certificate ");
	expect_ctx_error(ca, crt, none, "tls-key ");
	expect_ctx_error(NULL, crt, key, "tls-ca is not set");
	expect_ctx_error(junk, crt, key, "tls-ca ");
	expect_ctx_error(ca, junk, key, "tls-certificate ");
	expect_ctx_error(ca, crt, junk, "tls-key ");
	expect_ctx_error(ca, crt, bkey, "is not the key of tls-certificate");
}

static int make_certs(void **state)
{
	const char *src = getenv("srcdir");
	char *cmd;
	int rc;

	(void)state;
	certs = unit_tmpdir();
	cmd = unit_fmt("sh %s/../integration/tls-certs.sh %s alice bob mallory other/bob",
		       src ? src : ".", certs);
	rc = system(cmd);
	return rc == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connects),     cmocka_unit_test(test_eof),
		cmocka_unit_test(test_wrong_name),   cmocka_unit_test(test_other_ca),
		cmocka_unit_test(test_not_tls),	     cmocka_unit_test(test_looks_like_hello),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, make_certs, unit_teardown);
}
