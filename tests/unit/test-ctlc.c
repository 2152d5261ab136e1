/*
 * test-ctlc: the control-socket client against a tiny server thread on a
 * Unix socket in a temporary directory, one script per test: a normal
 * exchange, an answer that arrives a byte at a time, lines that arrive
 * together (the event stream), the longest line and a longer one, bad
 * answers, a daemon that closes or never answers (deadline), no daemon,
 * a full backlog, and sends that the socket takes a few bytes at a time
 * (send() is wrapped: -Wl,--wrap=send).
 */
#include "unit.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "ctlc.h"

/* ---------------------------------------------------------------- short sends */

/* While set, the client's send()s take at most 7 bytes and every other
 * one fails with EAGAIN, then one with EINTR. The server writes with
 * write(), which is not wrapped. */
static volatile int short_sends;
static unsigned int n_sends;

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	if (!short_sends)
		return __real_send(fd, buf, len, flags);
	n_sends++;
	if (n_sends % 2 == 0) {
		errno = n_sends % 6 == 0 ? EINTR : EAGAIN;
		return -1;
	}
	return __real_send(fd, buf, len < 7 ? len : 7, flags);
}

/* ---------------------------------------------------------------- the server */

struct srv;
typedef void (*srv_script)(struct srv *s, int fd);

struct srv {
	char *dir;
	int lfd;
	pthread_t th;
	bool running; /* th runs script */
	srv_script script;
	char got[CTLC_LINE_MAX + 1]; /* the request line, without its newline */
	size_t got_len;
	int bad; /* set off the main thread (no cmocka assertions there) */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static void put(struct srv *s, int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n <= 0) {
			s->bad = 1;
			return;
		}
		p += n;
		len -= (size_t)n;
	}
}

static void puts_fd(struct srv *s, int fd, const char *p)
{
	put(s, fd, p, strlen(p));
}

/* The request line, read `chunk` bytes at a time. */
static void get_line(struct srv *s, int fd, size_t chunk)
{
	ssize_t n;

	s->got_len = 0;
	while (s->got_len < sizeof(s->got) - 1) {
		size_t room = sizeof(s->got) - 1 - s->got_len;

		n = read(fd, s->got + s->got_len, room < chunk ? room : chunk);
		if (n <= 0) {
			s->bad = 2;
			break;
		}
		s->got_len += (size_t)n;
		if (s->got[s->got_len - 1] == '\n') {
			s->got_len--;
			break;
		}
	}
	s->got[s->got_len] = '\0';
}

/* Until the client closes its end. */
static void wait_eof(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void *srv_run(void *p)
{
	struct srv *s = p;
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL; /* shut down before a client came */
	s->script(s, fd);
	close(fd);
	return NULL;
}

/* Wait for the script to end; it must not have failed. */
static void srv_join(struct srv *s)
{
	if (s->running) {
		pthread_join(s->th, NULL);
		s->running = false;
	}
	assert_int_equal(s->bad, 0);
}

static void srv_free(void *p)
{
	struct srv *s = p;

	if (s->running) {
		shutdown(s->lfd, SHUT_RDWR); /* wakes an accept() that waits */
		pthread_join(s->th, NULL);
	}
	if (s->lfd >= 0)
		close(s->lfd);
	free(s);
}

/* A server at DIR/tandemd.sock that runs script on its first client
 * (none: nobody accepts). */
static struct srv *srv_new(srv_script script, int backlog)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct srv *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->dir = unit_tmpdir();
	s->script = script;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", s->dir, CTLC_SOCK_NAME);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s->lfd, backlog), 0);
	if (script) {
		assert_int_equal(pthread_create(&s->th, NULL, srv_run, s), 0);
		s->running = true;
	}
	return unit_defer(srv_free, s);
}

/* The daemon is gone: its socket file stays, nobody listens. */
static void srv_gone(struct srv *s)
{
	close(s->lfd);
	s->lfd = -1;
}

static void free_ctlc(void *p)
{
	ctlc_close(p);
}

static struct ctlc *open_ok(const struct srv *s, int timeout_ms)
{
	struct ctlc *c = NULL;

	assert_int_equal(ctlc_open(s->dir, ctlc_deadline(timeout_ms), &c), 0);
	assert_non_null(c);
	return unit_defer(free_ctlc, c);
}

static void put_json(void *p)
{
	json_object_put(p);
}

static json_object *new_req(const char *cmd)
{
	json_object *req = json_object_new_object();

	assert_non_null(req);
	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	json_object_object_add(req, "res", json_object_new_string("r0"));
	return unit_defer(put_json, req);
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* ---------------------------------------------------------------- scripts */

static void answer_ok(struct srv *s, int fd)
{
	get_line(s, fd, 4096);
	puts_fd(s, fd, "{\"ok\":true,\"resources\":[]}\n");
}

static void answer_bytewise(struct srv *s, int fd)
{
	const char *a = "{\"ok\":false,\"exit\":11,\"error\":\"State change failed\"}\n";

	get_line(s, fd, 4096);
	for (; *a; a++) {
		put(s, fd, a, 1);
		pause_ms(1);
	}
}

/* The answer to "events", two events in the same write and one split
 * over two writes, then the daemon closes. */
static void answer_events(struct srv *s, int fd)
{
	get_line(s, fd, 4096);
	puts_fd(s, fd, "{\"ok\":true}\n{\"event\":\"exists\",\"end\":true}\n{\"event\":\"change\"");
	pause_ms(20);
	puts_fd(s, fd, ",\"what\":\"role\",\"new\":\"Primary\"}\n");
}

/* The longest line: {"ok":true,"pad":"xxx...xxx"} and its newline. */
#define LONGEST_HEAD "{\"ok\":true,\"pad\":\""
#define LONGEST_TAIL "\"}\n"
#define LONGEST_PAD (CTLC_LINE_MAX - strlen(LONGEST_HEAD) - strlen(LONGEST_TAIL))

static void answer_longest(struct srv *s, int fd)
{
	const char *head = LONGEST_HEAD, *tail = LONGEST_TAIL;
	size_t pad = LONGEST_PAD;
	char *line = malloc(CTLC_LINE_MAX + 1);

	get_line(s, fd, 4096);
	if (!line) {
		s->bad = 3;
		return;
	}
	strcpy(line, head);
	memset(line + strlen(head), 'x', pad);
	strcpy(line + strlen(head) + pad, tail);
	put(s, fd, line, CTLC_LINE_MAX); /* the newline is the last byte */
	free(line);
	wait_eof(fd);
}

static void answer_too_long(struct srv *s, int fd)
{
	char *junk = malloc(CTLC_LINE_MAX + 100);

	get_line(s, fd, 4096);
	if (!junk) {
		s->bad = 3;
		return;
	}
	memset(junk, ' ', CTLC_LINE_MAX + 100);
	junk[0] = '{';
	/* the client may close before it has all: no put() */
	if (write(fd, junk, CTLC_LINE_MAX + 100) < 0)
		junk[0] = '\0';
	free(junk);
	wait_eof(fd);
}

static void answer_bad(struct srv *s, int fd)
{
	get_line(s, fd, 4096);
	puts_fd(s, fd, "not json\n[1,2]\n{\"ok\":true} x\n\n{\"ok\":true,\"n\":1}\n");
	wait_eof(fd);
}

static void answer_silence(struct srv *s, int fd)
{
	get_line(s, fd, 4096);
	wait_eof(fd);
}

static void answer_nothing(struct srv *s, int fd)
{
	wait_eof(fd);
}

static void answer_close(struct srv *s, int fd)
{
	get_line(s, fd, 4096);
}

static void answer_cut(struct srv *s, int fd)
{
	get_line(s, fd, 4096);
	puts_fd(s, fd, "{\"ok\":tr");
}

/* Reads slowly, in pieces of 100 bytes, and says how much came. */
static void answer_len(struct srv *s, int fd)
{
	char out[64];

	get_line(s, fd, 100);
	snprintf(out, sizeof(out), "{\"ok\":true,\"len\":%zu}\n", s->got_len);
	puts_fd(s, fd, out);
}

/* ---------------------------------------------------------------- tests */

static void test_exchange(void **state)
{
	struct srv *s = srv_new(answer_ok, 4);
	json_object *req = new_req("status"), *resp, *v;

	assert_int_equal(ctlc_request(s->dir, req, ctlc_deadline(5000), &resp), 0);
	assert_non_null(resp);
	assert_true(json_object_object_get_ex(resp, "ok", &v) && json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(resp, "resources", &v) &&
		    json_object_is_type(v, json_type_array));
	json_object_put(resp);
	srv_join(s);
	unit_release(s);
}

/* The request as the daemon sees it: one line, "v" added. */
static void test_request_line(void **state)
{
	struct srv *s = srv_new(answer_ok, 4);
	json_object *req = new_req("status"), *resp, *got;

	assert_int_equal(ctlc_request(s->dir, req, CTLC_FOREVER, &resp), 0);
	json_object_put(resp);
	srv_join(s);
	assert_null(memchr(s->got, '\n', s->got_len));
	got = unit_defer(put_json, json_tokener_parse(s->got));
	assert_non_null(got);
	assert_string_equal(field(got, "cmd"), "status");
	assert_string_equal(field(got, "res"), "r0");
	assert_string_equal(field(got, "v"), "1");
	unit_release(got);
	unit_release(s);
}

/* A "v" of the caller's stays. */
static void test_version_kept(void **state)
{
	struct srv *s = srv_new(answer_ok, 4);
	json_object *req = new_req("status"), *resp;

	json_object_object_add(req, "v", json_object_new_int(2));
	assert_int_equal(ctlc_request(s->dir, req, ctlc_deadline(5000), &resp), 0);
	json_object_put(resp);
	srv_join(s);
	assert_non_null(strstr(s->got, "\"v\":2"));
	unit_release(s);
}

static void test_partial_reply(void **state)
{
	struct srv *s = srv_new(answer_bytewise, 4);
	struct ctlc *c = open_ok(s, 5000);
	json_object *resp;

	assert_int_equal(ctlc_call(c, new_req("primary"), ctlc_deadline(5000), &resp), 0);
	assert_string_equal(field(resp, "error"), "State change failed");
	assert_string_equal(field(resp, "exit"), "11");
	json_object_put(resp);
	assert_int_equal(ctlc_recv(c, ctlc_deadline(5000), &resp), -ECONNRESET);
	assert_null(resp);
	unit_release(c);
	srv_join(s);
	unit_release(s);
}

static void test_event_stream(void **state)
{
	struct srv *s = srv_new(answer_events, 4);
	struct ctlc *c = open_ok(s, 5000);
	json_object *req = new_req("events"), *o, *v;

	json_object_object_add(req, "now", json_object_new_boolean(true));
	assert_int_equal(ctlc_call(c, req, ctlc_deadline(5000), &o), 0);
	assert_true(json_object_object_get_ex(o, "ok", &v) && json_object_get_boolean(v));
	json_object_put(o);
	assert_int_equal(ctlc_recv(c, CTLC_FOREVER, &o), 0);
	assert_string_equal(field(o, "event"), "exists");
	assert_true(json_object_object_get_ex(o, "end", NULL));
	json_object_put(o);
	assert_int_equal(ctlc_recv(c, CTLC_FOREVER, &o), 0);
	assert_string_equal(field(o, "what"), "role");
	assert_string_equal(field(o, "new"), "Primary");
	json_object_put(o);
	assert_int_equal(ctlc_recv(c, CTLC_FOREVER, &o), -ECONNRESET);
	unit_release(c);
	srv_join(s);
	unit_release(s);
}

static void test_longest_line(void **state)
{
	struct srv *s = srv_new(answer_longest, 4);
	json_object *resp;

	assert_int_equal(ctlc_request(s->dir, new_req("status"), ctlc_deadline(5000), &resp), 0);
	assert_int_equal(strlen(field(resp, "pad")), LONGEST_PAD);
	json_object_put(resp);
	srv_join(s);
	unit_release(s);
}

static void test_oversized_line(void **state)
{
	struct srv *s = srv_new(answer_too_long, 4);
	json_object *resp;

	assert_int_equal(ctlc_request(s->dir, new_req("status"), ctlc_deadline(5000), &resp),
			 -EMSGSIZE);
	assert_null(resp);
	srv_join(s);
	unit_release(s);
}

static void test_oversized_request(void **state)
{
	struct srv *s = srv_new(answer_nothing, 4);
	struct ctlc *c = open_ok(s, 5000);
	json_object *req = new_req("status");
	char *big = unit_defer(free, malloc(CTLC_LINE_MAX));

	assert_non_null(big);
	memset(big, 'a', CTLC_LINE_MAX - 1);
	big[CTLC_LINE_MAX - 1] = '\0';
	json_object_object_add(req, "pad", json_object_new_string(big));
	assert_int_equal(ctlc_send(c, req, ctlc_deadline(5000)), -EMSGSIZE);
	unit_release(c);
	srv_join(s);
	unit_release(s);
}

static void test_bad_answers(void **state)
{
	struct srv *s = srv_new(answer_bad, 4);
	struct ctlc *c = open_ok(s, 5000);
	json_object *resp;
	int i;

	assert_int_equal(ctlc_call(c, new_req("status"), ctlc_deadline(5000), &resp), -EPROTO);
	assert_null(resp);
	/* each bad line is consumed: "[1,2]", trailing junk, an empty line */
	for (i = 0; i < 3; i++) {
		assert_int_equal(ctlc_recv(c, ctlc_deadline(5000), &resp), -EPROTO);
		assert_null(resp);
	}
	assert_int_equal(ctlc_recv(c, ctlc_deadline(5000), &resp), 0);
	assert_string_equal(field(resp, "n"), "1");
	json_object_put(resp);
	unit_release(c);
	srv_join(s);
	unit_release(s);
}

static void test_deadline(void **state)
{
	struct srv *s = srv_new(answer_silence, 4);
	json_object *resp;
	int64_t t0 = mono_ms(), spent;

	assert_int_equal(ctlc_request(s->dir, new_req("status"), ctlc_deadline(150), &resp),
			 -ETIMEDOUT);
	spent = mono_ms() - t0;
	assert_null(resp);
	assert_true(spent >= 140);
	assert_true(spent < 3000);
	srv_join(s);
	unit_release(s);
}

static void test_closed(void **state)
{
	struct srv *s = srv_new(answer_close, 4);
	json_object *resp;

	assert_int_equal(ctlc_request(s->dir, new_req("down"), ctlc_deadline(5000), &resp),
			 -ECONNRESET);
	srv_join(s);
	unit_release(s);
	s = srv_new(answer_cut, 4);
	assert_int_equal(ctlc_request(s->dir, new_req("down"), ctlc_deadline(5000), &resp),
			 -ECONNRESET);
	assert_null(resp);
	srv_join(s);
	unit_release(s);
}

static void test_no_daemon(void **state)
{
	char *dir = unit_tmpdir();
	struct srv *s;
	struct ctlc *c = NULL;
	json_object *resp;
	char longdir[200];
	int rc;

	/* no socket */
	rc = ctlc_open(dir, ctlc_deadline(1000), &c);
	assert_int_equal(rc, -ENOENT);
	assert_null(c);
	assert_true(ctlc_no_daemon(rc));
	/* the socket of a daemon that is gone */
	s = srv_new(NULL, 4);
	srv_gone(s);
	rc = ctlc_request(s->dir, new_req("status"), ctlc_deadline(1000), &resp);
	assert_int_equal(rc, -ECONNREFUSED);
	assert_null(resp);
	assert_true(ctlc_no_daemon(rc));
	assert_string_equal(ctlc_strerror(rc), "not running (cannot connect)");
	/* a directory too long for a socket address */
	memset(longdir, 'd', sizeof(longdir) - 1);
	longdir[sizeof(longdir) - 1] = '\0';
	longdir[0] = '/';
	assert_int_equal(ctlc_open(longdir, CTLC_FOREVER, &c), -ENAMETOOLONG);
	assert_false(ctlc_no_daemon(-ENAMETOOLONG));
	srv_join(s);
	unit_release(s);
	unit_release(dir);
}

/* A full backlog: connecting waits until the deadline, or until the
 * daemon accepts. */
static void test_full_backlog(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct srv *s = srv_new(NULL, 0);
	struct ctlc *c = NULL;
	int held[8], n = 0, fd, acc;
	int64_t t0;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", s->dir, CTLC_SOCK_NAME);
	/* fill it (with a backlog of 0, Linux queues one connection) */
	for (;;) {
		assert_true(n < 8);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fd >= 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			assert_int_equal(errno, EAGAIN);
			close(fd);
			break;
		}
		held[n++] = fd;
	}
	t0 = mono_ms();
	assert_int_equal(ctlc_open(s->dir, ctlc_deadline(100), &c), -ETIMEDOUT);
	assert_true(mono_ms() - t0 >= 90);
	assert_null(c);
	/* the daemon accepts one: the next try gets in */
	acc = accept(s->lfd, NULL, NULL);
	assert_true(acc >= 0);
	close(acc);
	c = open_ok(s, 1000);
	unit_release(c);
	while (n > 0)
		close(held[--n]);
	srv_join(s);
	unit_release(s);
}

static void test_short_sends(void **state)
{
	struct srv *s = srv_new(answer_len, 4);
	json_object *req = new_req("status"), *resp;
	char pad[3000];
	size_t want;

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	json_object_object_add(req, "pad", json_object_new_string(pad));
	json_object_object_add(req, "v", json_object_new_int(1));
	want = strlen(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	n_sends = 0;
	short_sends = 1;
	assert_int_equal(ctlc_request(s->dir, req, ctlc_deadline(10000), &resp), 0);
	short_sends = 0;
	assert_true(n_sends > want / 7);
	assert_int_equal(json_object_get_int64(json_object_object_get(resp, "len")), (int64_t)want);
	json_object_put(resp);
	srv_join(s);
	unit_release(s);
}

static void test_strerror(void **state)
{
	assert_string_equal(ctlc_strerror(-ENOENT), "not running (cannot connect)");
	assert_string_equal(ctlc_strerror(-ETIMEDOUT), "no answer in time");
	assert_string_equal(ctlc_strerror(-EPROTO), "bad answer");
	assert_string_equal(ctlc_strerror(-EPIPE), strerror(EPIPE));
	assert_int_equal(ctlc_deadline(-1), CTLC_FOREVER);
	assert_true(ctlc_deadline(0) >= mono_ms() - 1);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* a server write() to a client that left: EPIPE */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),	   cmocka_unit_test(test_request_line),
	    cmocka_unit_test(test_version_kept),   cmocka_unit_test(test_partial_reply),
	    cmocka_unit_test(test_event_stream),   cmocka_unit_test(test_longest_line),
	    cmocka_unit_test(test_oversized_line), cmocka_unit_test(test_oversized_request),
	    cmocka_unit_test(test_bad_answers),	   cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_closed),	   cmocka_unit_test(test_no_daemon),
	    cmocka_unit_test(test_full_backlog),   cmocka_unit_test(test_short_sends),
	    cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
