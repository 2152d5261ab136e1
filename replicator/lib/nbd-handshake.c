/*
 * nbd-handshake: the server side of the fixed newstyle handshake.
 *
 * Every option is read whole (its length checked first) into the
 * handshake's buffer, then handled by its row of the option table.
 * Handlers return 0 to read the next option, 1 when the transmission
 * phase starts, or a negative errno to end the connection. Problems the
 * protocol can express become error replies; only what it cannot
 * (bad magic, unknown client flags, a failed NBD_OPT_EXPORT_NAME) ends
 * the connection. doc/nbd-frontend.md is the contract.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "nbd-handshake.h"

/* Option data read and parsed; longer is skipped (up to DRAIN_MAX). */
#define OPT_DATA_MAX  8192u
#define OPT_DRAIN_MAX (1u << 20)
/* Options per connection before the server gives up on the client. */
#define OPT_COUNT_MAX 128
/* Error messages sent to the client, and trace lines. */
#define MSG_MAX       256
/* An export name as shown in messages: escaped, shortened. */
#define SHOWN_MAX     128

#define CLIENT_FLAGS  (NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES)
#define EXPORT_FLAGS                                                                      \
	(NBD_FLAG_HAS_FLAGS | NBD_FLAG_READ_ONLY | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | \
	 NBD_FLAG_ROTATIONAL | NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_WRITE_ZEROES |            \
	 NBD_FLAG_CAN_MULTI_CONN | NBD_FLAG_SEND_CACHE | NBD_FLAG_SEND_FAST_ZERO)
/* The context id of base:allocation, the only context: any nonzero value. */
#define META_ALLOC_ID 1u

struct nbd_handshake {
	int fd;
	int64_t deadline_ms; /* CLOCK_MONOTONIC; 0: none */
	const struct nbd_handshake_ops *ops;
	void *ctx;
	struct nbd_handshake_result *res;
	uint32_t opt;   /* the option being handled */
	uint32_t len;   /* its data length (<= OPT_DATA_MAX once read) */
	int emit_err;   /* sticky error of list_emit() */
	bool structured; /* NBD_OPT_STRUCTURED_REPLY acknowledged */
	bool meta_alloc; /* the last NBD_OPT_SET_META_CONTEXT selected base:allocation */
	char meta_name[NBD_MAX_STRING + 1]; /* for this export */
	char shown[SHOWN_MAX]; /* res->name for messages and logs */
	uint8_t data[OPT_DATA_MAX];
};

/* ---------------------------------------------------------------- messages */

/* Cut a UTF-8 sequence that truncation left incomplete at the end of s. */
static void trim_utf8_tail(char *s)
{
	size_t len = strlen(s), i = len, need;
	unsigned char c;

	while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80 && len - i < 3)
		i--;
	if (i == 0)
		return;
	c = (unsigned char)s[i - 1];
	if (c < 0xc0)
		return;
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (len - (i - 1) < need)
		s[i - 1] = '\0';
}

/*
 * name for messages and logs: control bytes, '"' and '\\' as \xNN, cut
 * with "..." (never inside a UTF-8 character) to fit out (len >= 16).
 * A client's export name cannot forge lines in the daemon's log.
 */
static void show_name(const char *name, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t o = 0;

	for (; *p; p++) {
		if (o + 4 + sizeof("...") > len) {
			out[o] = '\0';
			trim_utf8_tail(out);
			strcat(out, "...");
			return;
		}
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", *p);
		else
			out[o++] = (char)*p;
	}
	out[o] = '\0';
}

/* res->name := the len bytes at p (NUL-free, <= NBD_MAX_STRING). */
static void set_name(struct nbd_handshake *h, const uint8_t *p, uint32_t len)
{
	memcpy(h->res->name, p, len);
	h->res->name[len] = '\0';
	show_name(h->res->name, h->shown, sizeof(h->shown));
}

static void vformat(char *buf, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, len, fmt, ap);

	if (n < 0)
		buf[0] = '\0';
	else if ((size_t)n >= len)
		trim_utf8_tail(buf);
}

static void trace(struct nbd_handshake *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void trace(struct nbd_handshake *h, const char *fmt, ...)
{
	char line[MSG_MAX];
	va_list ap;

	if (!h->ops->trace)
		return;
	va_start(ap, fmt);
	vformat(line, sizeof(line), fmt, ap);
	va_end(ap);
	h->ops->trace(h->ctx, line);
}

/* Record why the handshake fails (the first reason wins) and return err. */
static int fail(struct nbd_handshake *h, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct nbd_handshake *h, int err, const char *fmt, ...)
{
	va_list ap;

	if (h->res->err[0] == '\0') {
		va_start(ap, fmt);
		vformat(h->res->err, sizeof(h->res->err), fmt, ap);
		va_end(ap);
		trace(h, "handshake failed: %s", h->res->err);
	}
	return err;
}

/* ---------------------------------------------------------------- I/O */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for events, or the deadline passes. */
static int wait_fd(struct nbd_handshake *h, short events)
{
	struct pollfd p = {.fd = h->fd, .events = events};
	int64_t left;
	int n;

	do {
		left = INT_MAX;
		if (h->deadline_ms) {
			left = h->deadline_ms - now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
		}
		n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

static int recv_all(struct nbd_handshake *h, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;
	int r;

	while (len > 0) {
		if (h->deadline_ms && now_ms() >= h->deadline_ms)
			return -ETIMEDOUT;
		n = recv(h->fd, p, len, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			r = wait_fd(h, POLLIN);
			if (r < 0)
				return r;
			continue;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Send iov[0..n) whole; the iovecs are consumed. */
static int send_iov(struct nbd_handshake *h, struct iovec *iov, int n)
{
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
	ssize_t sent;
	int r;

	while (m.msg_iovlen > 0) {
		if (m.msg_iov->iov_len == 0) {
			m.msg_iov++;
			m.msg_iovlen--;
			continue;
		}
		sent = sendmsg(h->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			r = wait_fd(h, POLLOUT);
			if (r < 0)
				return r;
			continue;
		}
		while (sent > 0) {
			size_t k = (size_t)sent < m.msg_iov->iov_len ? (size_t)sent
								     : m.msg_iov->iov_len;

			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + k;
			m.msg_iov->iov_len -= k;
			sent -= (ssize_t)k;
			if (m.msg_iov->iov_len == 0) {
				m.msg_iov++;
				m.msg_iovlen--;
			}
		}
	}
	return 0;
}

static int send_buf(struct nbd_handshake *h, const void *buf, size_t len)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return send_iov(h, &iov, 1);
}

/* Read and discard len bytes. */
static int drain(struct nbd_handshake *h, uint32_t len)
{
	uint32_t k;
	int r;

	for (; len > 0; len -= k) {
		k = len < sizeof(h->data) ? len : (uint32_t)sizeof(h->data);
		r = recv_all(h, h->data, k);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---------------------------------------------------------------- replies */

/* An option reply: header, then the payload in iov[0..n) (n <= 3). */
static int send_rep(struct nbd_handshake *h, uint32_t type, const struct iovec *payload, int n)
{
	uint8_t hdr[NBD_REP_HDR_SIZE];
	struct iovec iov[4];
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++) {
		iov[i + 1] = payload[i];
		len += payload[i].iov_len;
	}
	nbd_proto_put64(hdr, NBD_REP_MAGIC);
	nbd_proto_put32(hdr + 8, h->opt);
	nbd_proto_put32(hdr + 12, type);
	nbd_proto_put32(hdr + 16, (uint32_t)len);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	return send_iov(h, iov, n + 1);
}

static int send_ack(struct nbd_handshake *h)
{
	trace(h, "reply %s", nbd_proto_rep_name(NBD_REP_ACK));
	return send_rep(h, NBD_REP_ACK, NULL, 0);
}

/* An error reply with a message for the user; 0 (next option) or -errno. */
static int send_err(struct nbd_handshake *h, uint32_t type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int send_err(struct nbd_handshake *h, uint32_t type, const char *fmt, ...)
{
	char msg[MSG_MAX];
	struct iovec iov;
	va_list ap;

	va_start(ap, fmt);
	vformat(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	trace(h, "reply %s: %s", nbd_proto_rep_name(type), msg);
	iov.iov_base = msg;
	iov.iov_len = strlen(msg);
	return send_rep(h, type, &iov, 1);
}

/* NBD_REP_INFO with a 16-bit type and a payload. */
static int send_info(struct nbd_handshake *h, uint16_t type, const void *data, size_t len)
{
	uint8_t t[2];
	struct iovec iov[2] = {
		{.iov_base = t, .iov_len = sizeof(t)},
		{.iov_base = (void *)data, .iov_len = len},
	};

	nbd_proto_put16(t, type);
	trace(h, "reply %s %s", nbd_proto_rep_name(NBD_REP_INFO), nbd_proto_info_name(type));
	return send_rep(h, NBD_REP_INFO, iov, 2);
}

/* ---------------------------------------------------------------- exports */

static bool is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static int check_blocks(const struct nbd_export_info *e, const char **why)
{
	uint64_t floor = e->pref_block < e->size ? e->pref_block : e->size;

	*why = NULL;
	if (e->min_block == 0 && e->pref_block == 0 && e->max_block == 0) {
		if (e->block_size_required)
			*why = "block sizes are required but not set";
	} else if (!is_pow2(e->min_block) || e->min_block > 65536) {
		*why = "minimum block size is not a power of 2 of at most 64 KiB";
	} else if (!is_pow2(e->pref_block) || e->pref_block < e->min_block ||
		   e->pref_block < 512) {
		*why = "preferred block size is not a power of 2 of at least max(minimum, 512)";
	} else if (e->max_block != UINT32_MAX &&
		   (e->max_block == 0 || e->max_block % e->min_block != 0 ||
		    e->max_block < floor)) {
		*why = "maximum block size is not a multiple of the minimum of at least "
		       "min(preferred, size)";
	} else if (e->size % e->min_block != 0) {
		*why = "size is not a multiple of the minimum block size";
	}
	return *why ? -EINVAL : 0;
}

int nbd_handshake_check_export(const struct nbd_export_info *e, const char **why)
{
	*why = NULL;
	if (e->name && strnlen(e->name, NBD_MAX_STRING + 1) > NBD_MAX_STRING)
		*why = "name is longer than 4096 bytes";
	else if (e->description && strnlen(e->description, NBD_MAX_STRING + 1) > NBD_MAX_STRING)
		*why = "description is longer than 4096 bytes";
	else if (e->size > (uint64_t)INT64_MAX)
		*why = "size is above 2^63 - 1";
	else if (e->flags & ~EXPORT_FLAGS)
		*why = "a transmission flag is not supported by the NBD front end";
	else if ((e->flags & NBD_FLAG_SEND_FAST_ZERO) && !(e->flags & NBD_FLAG_SEND_WRITE_ZEROES))
		*why = "SEND_FAST_ZERO without SEND_WRITE_ZEROES";
	else
		return check_blocks(e, why);
	return -EINVAL;
}

/* find()'s errors as option replies. */
static uint32_t rep_error(int err)
{
	switch (err) {
	case -ENOENT:
		return NBD_REP_ERR_UNKNOWN;
	case -EPERM:
	case -EACCES:
		return NBD_REP_ERR_POLICY;
	case -ESHUTDOWN:
		return NBD_REP_ERR_SHUTDOWN;
	default:
		return NBD_REP_ERR_UNKNOWN;
	}
}

/*
 * Look up res->name. 0, or a negative errno with the message for the
 * client in msg: find()'s own if it wrote one, else one made up here.
 */
static int find_export(struct nbd_handshake *h, struct nbd_export_info *e, char *msg, size_t len)
{
	const char *name = h->shown, *why;
	char own[MSG_MAX];
	int r;

	memset(e, 0, sizeof(*e));
	own[0] = '\0';
	r = h->ops->find(h->ctx, h->res->name, e, own, sizeof(own));
	own[sizeof(own) - 1] = '\0';
	if (r > 0)
		r = -EINVAL;
	if (r == 0 && nbd_handshake_check_export(e, &why) < 0) {
		snprintf(msg, len, "export \"%s\" is misconfigured: %s", name, why);
		trim_utf8_tail(msg);
		return -EINVAL;
	}
	if (r == 0)
		return 0;
	if (own[0])
		snprintf(msg, len, "%s", own);
	else if (r == -ENOENT)
		snprintf(msg, len, "no export named \"%s\"", name);
	else
		snprintf(msg, len, "export \"%s\" is not available", name);
	trim_utf8_tail(msg);
	return r;
}

/* The transmission flags the client sees: find()'s, HAS_FLAGS, and DF
 * with structured replies (every READ is answered in one chunk). */
static uint16_t eflags(const struct nbd_handshake *h, const struct nbd_export_info *e)
{
	return e->flags | NBD_FLAG_HAS_FLAGS | (h->structured ? NBD_FLAG_SEND_DF : 0);
}

static void set_result(struct nbd_handshake *h, const struct nbd_export_info *e, bool agreed)
{
	struct nbd_handshake_result *res = h->res;

	res->info = *e;
	res->info.flags = eflags(h, e);
	res->limits.structured = h->structured;
	res->limits.size = e->size;
	res->limits.eflags = res->info.flags;
	res->limits.min_block = e->min_block;
	res->limits.max_block = e->max_block == UINT32_MAX ? 0 : e->max_block;
	/* block status only for the export the contexts were selected for */
	res->limits.meta_alloc = h->structured && h->meta_alloc && e->base_allocation &&
					 strcmp(h->meta_name, res->name) == 0
				 ? META_ALLOC_ID
				 : 0;
	res->opt = h->opt;
	res->block_size_agreed = agreed;
}

/* ---------------------------------------------------------------- options */

static int opt_export_name(struct nbd_handshake *h)
{
	static const uint8_t zeroes[NBD_EXPORT_NAME_PAD];
	struct nbd_export_info e;
	char msg[MSG_MAX];
	uint8_t out[10];
	bool pad = !(h->res->client_flags & NBD_FLAG_C_NO_ZEROES);
	struct iovec iov[2] = {
		{.iov_base = out, .iov_len = sizeof(out)},
		{.iov_base = (void *)zeroes, .iov_len = pad ? sizeof(zeroes) : 0},
	};
	int r;

	if (h->len > NBD_MAX_STRING)
		return fail(h, -EPROTO, "NBD_OPT_EXPORT_NAME: name longer than %u bytes",
			    NBD_MAX_STRING);
	if (memchr(h->data, '\0', h->len))
		return fail(h, -EPROTO, "NBD_OPT_EXPORT_NAME: name contains a NUL byte");
	set_name(h, h->data, h->len);
	r = find_export(h, &e, msg, sizeof(msg));
	if (r < 0)
		return fail(h, r, "NBD_OPT_EXPORT_NAME: %s", msg);
	if (e.block_size_required)
		return fail(h, -EINVAL,
			    "NBD_OPT_EXPORT_NAME: export \"%s\" requires NBD_OPT_GO with "
			    "block sizes",
			    h->shown);
	set_result(h, &e, false);
	nbd_proto_put64(out, e.size);
	nbd_proto_put16(out + 8, h->res->info.flags);
	trace(h, "export \"%s\": size %llu, transmission flags 0x%x%s", h->shown,
	      (unsigned long long)e.size, h->res->info.flags, pad ? "" : ", no zeroes");
	r = send_iov(h, iov, 2);
	return r < 0 ? fail(h, r, "sending the export: %s", strerror(-r)) : 1;
}

static int opt_abort(struct nbd_handshake *h)
{
	/* The client may already be gone: the spec says not to mind. */
	send_ack(h);
	return fail(h, -ECONNABORTED, "the client aborted the handshake (NBD_OPT_ABORT)");
}

/* NBD_OPT_LIST: one NBD_REP_SERVER per export. */
static int list_emit(void *arg, const char *name, const char *description)
{
	struct nbd_handshake *h = arg;
	char shown[SHOWN_MAX];
	uint8_t len[4];
	size_t nlen, dlen;
	struct iovec iov[3];

	if (h->emit_err < 0)
		return h->emit_err;
	nlen = name ? strnlen(name, NBD_MAX_STRING + 1) : NBD_MAX_STRING + 1;
	if (nlen > NBD_MAX_STRING)
		return 0; /* not a valid NBD string: skipped */
	dlen = description ? strnlen(description, NBD_MAX_STRING + 1) : 0;
	if (dlen > NBD_MAX_STRING)
		dlen = 0;
	nbd_proto_put32(len, (uint32_t)nlen);
	iov[0] = (struct iovec){.iov_base = len, .iov_len = sizeof(len)};
	iov[1] = (struct iovec){.iov_base = (void *)name, .iov_len = nlen};
	iov[2] = (struct iovec){.iov_base = (void *)description, .iov_len = dlen};
	show_name(name, shown, sizeof(shown));
	trace(h, "reply %s \"%s\"", nbd_proto_rep_name(NBD_REP_SERVER), shown);
	h->emit_err = send_rep(h, NBD_REP_SERVER, iov, 3);
	return h->emit_err;
}

static int opt_list(struct nbd_handshake *h)
{
	int r;

	if (h->len != 0)
		return send_err(h, NBD_REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
	if (!h->ops->list)
		return send_err(h, NBD_REP_ERR_POLICY, "listing exports is disabled");
	h->emit_err = 0;
	r = h->ops->list(h->ctx, list_emit, h);
	if (h->emit_err < 0)
		return h->emit_err;
	if (r < 0)
		return send_err(h, rep_error(r), "cannot list exports: %s", strerror(-r));
	return send_ack(h);
}

/* NBD_INFO_* requests of an NBD_OPT_INFO or NBD_OPT_GO. */
struct info_want {
	bool name, description, block_size;
};

/* Parse INFO/GO data into res->name and *want; 0, or an error reply's type. */
static uint32_t parse_info(struct nbd_handshake *h, struct info_want *want, const char **why)
{
	uint32_t namelen, i;
	uint16_t n;

	*why = "option data is shorter than 6 bytes";
	if (h->len < 6)
		return NBD_REP_ERR_INVALID;
	namelen = nbd_proto_get32(h->data);
	*why = "name length runs past the option data";
	if (namelen > h->len - 6)
		return NBD_REP_ERR_INVALID;
	*why = "name is longer than 4096 bytes";
	if (namelen > NBD_MAX_STRING)
		return NBD_REP_ERR_INVALID;
	n = nbd_proto_get16(h->data + 4 + namelen);
	*why = "option length does not match the number of information requests";
	if (h->len != 6 + namelen + 2u * n)
		return NBD_REP_ERR_INVALID;
	*why = "name contains a NUL byte";
	if (memchr(h->data + 4, '\0', namelen))
		return NBD_REP_ERR_INVALID;
	set_name(h, h->data + 4, namelen);
	for (i = 0; i < n; i++) {
		switch (nbd_proto_get16(h->data + 6 + namelen + 2 * i)) {
		case NBD_INFO_NAME:
			want->name = true;
			break;
		case NBD_INFO_DESCRIPTION:
			want->description = true;
			break;
		case NBD_INFO_BLOCK_SIZE:
			want->block_size = true;
			break;
		default: /* NBD_INFO_EXPORT is always sent; unknown ones are ignored */
			break;
		}
	}
	*why = NULL;
	return 0;
}

static int send_infos(struct nbd_handshake *h, const struct nbd_export_info *e,
		      const struct info_want *want)
{
	uint8_t buf[12];
	int r;

	nbd_proto_put64(buf, e->size);
	nbd_proto_put16(buf + 8, eflags(h, e));
	r = send_info(h, NBD_INFO_EXPORT, buf, 10);
	if (r == 0 && want->name && e->name)
		r = send_info(h, NBD_INFO_NAME, e->name, strlen(e->name));
	if (r == 0 && want->description && e->description)
		r = send_info(h, NBD_INFO_DESCRIPTION, e->description, strlen(e->description));
	if (r == 0 && e->min_block) {
		nbd_proto_put32(buf, e->min_block);
		nbd_proto_put32(buf + 4, e->pref_block);
		nbd_proto_put32(buf + 8, e->max_block);
		r = send_info(h, NBD_INFO_BLOCK_SIZE, buf, 12);
	}
	return r;
}

static int opt_info_go(struct nbd_handshake *h)
{
	struct info_want want = {false, false, false};
	struct nbd_export_info e;
	char msg[MSG_MAX];
	const char *why;
	uint32_t type;
	int r;

	type = parse_info(h, &want, &why);
	if (type)
		return send_err(h, type, "%s: %s", nbd_proto_opt_name(h->opt), why);
	r = find_export(h, &e, msg, sizeof(msg));
	if (r < 0)
		return send_err(h, rep_error(r), "%s", msg);
	r = send_infos(h, &e, &want);
	if (r < 0)
		return r;
	if (e.block_size_required && !want.block_size)
		return send_err(h, NBD_REP_ERR_BLOCK_SIZE_REQD,
				"export \"%s\" requires the client to request block sizes "
				"(NBD_INFO_BLOCK_SIZE)",
				h->shown);
	r = send_ack(h);
	if (r < 0 || h->opt != NBD_OPT_GO)
		return r;
	set_result(h, &e, want.block_size);
	trace(h, "export \"%s\": size %llu, transmission flags 0x%x", h->shown,
	      (unsigned long long)e.size, h->res->info.flags);
	return 1;
}

static int opt_structured_reply(struct nbd_handshake *h)
{
	if (h->len != 0)
		return send_err(h, NBD_REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
	h->structured = true;
	return send_ack(h);
}

/* ---------------------------------------------------------------- meta contexts */

/*
 * Does query q (qlen bytes) name base:allocation? "base:" is the
 * namespace's wildcard when listing, and selects nothing when setting;
 * other leaves and namespaces are ignored, as the spec requires.
 */
static bool meta_matches(const uint8_t *q, uint32_t qlen, bool list)
{
	size_t n = strlen(NBD_META_BASE_ALLOCATION);

	if (qlen == 5 && memcmp(q, "base:", 5) == 0)
		return list;
	return qlen == n && memcmp(q, NBD_META_BASE_ALLOCATION, n) == 0;
}

/*
 * Parse LIST/SET_META_CONTEXT data: name length (32 bits), name, number
 * of queries (32 bits), each query as length (32 bits) and string. The
 * lengths must add up to the option length. 0 with the name in res->name
 * and *match (a query, or for LIST no query, asks for base:allocation),
 * or an error reply's type and *why.
 */
static uint32_t parse_meta(struct nbd_handshake *h, bool list, bool *match, const char **why)
{
	uint32_t namelen, n, i, pos, qlen;
	const uint8_t *q, *colon;

	*match = false;
	*why = "option data is shorter than 8 bytes";
	if (h->len < 8)
		return NBD_REP_ERR_INVALID;
	namelen = nbd_proto_get32(h->data);
	*why = "name length runs past the option data";
	if (namelen > h->len - 8)
		return NBD_REP_ERR_INVALID;
	*why = "name is longer than 4096 bytes";
	if (namelen > NBD_MAX_STRING)
		return NBD_REP_ERR_INVALID;
	*why = "name contains a NUL byte";
	if (memchr(h->data + 4, '\0', namelen))
		return NBD_REP_ERR_INVALID;
	n = nbd_proto_get32(h->data + 4 + namelen);
	pos = 8 + namelen;
	for (i = 0; i < n; i++) { /* each query takes 4 bytes at least: bounded by len */
		*why = "a query runs past the option data";
		if (h->len - pos < 4)
			return NBD_REP_ERR_INVALID;
		qlen = nbd_proto_get32(h->data + pos);
		pos += 4;
		if (qlen > h->len - pos)
			return NBD_REP_ERR_INVALID;
		q = h->data + pos;
		pos += qlen;
		*why = "a query is longer than 4096 bytes";
		if (qlen > NBD_MAX_STRING)
			return NBD_REP_ERR_INVALID;
		*why = "a query contains a NUL byte";
		if (memchr(q, '\0', qlen))
			return NBD_REP_ERR_INVALID;
		colon = memchr(q, ':', qlen);
		*why = "a query does not start with a namespace and a colon";
		if (!colon || colon == q)
			return NBD_REP_ERR_INVALID;
		*match = *match || meta_matches(q, qlen, list);
	}
	*why = "option length does not match the queries";
	if (pos != h->len)
		return NBD_REP_ERR_INVALID;
	if (n == 0 && list) /* all the contexts of the export */
		*match = true;
	set_name(h, h->data + 4, namelen);
	*why = NULL;
	return 0;
}

/*
 * NBD_OPT_LIST_META_CONTEXT and NBD_OPT_SET_META_CONTEXT: one
 * NBD_REP_META_CONTEXT for base:allocation if the export has it and the
 * queries ask for it (id 0 when listing, as the spec asks), then
 * NBD_REP_ACK. A SET replaces the selection even when it fails.
 */
static int opt_meta_context(struct nbd_handshake *h)
{
	bool list = h->opt == NBD_OPT_LIST_META_CONTEXT, match;
	const char *ctx = NBD_META_BASE_ALLOCATION, *why;
	struct nbd_export_info e;
	char msg[MSG_MAX];
	uint8_t id[4];
	struct iovec iov[2] = {
		{.iov_base = id, .iov_len = sizeof(id)},
		{.iov_base = (void *)ctx, .iov_len = strlen(ctx)},
	};
	uint32_t type;
	int r;

	if (!list)
		h->meta_alloc = false;
	if (!h->structured)
		return send_err(h, NBD_REP_ERR_INVALID,
				"%s needs structured replies (NBD_OPT_STRUCTURED_REPLY) first",
				nbd_proto_opt_name(h->opt));
	type = parse_meta(h, list, &match, &why);
	if (type)
		return send_err(h, type, "%s: %s", nbd_proto_opt_name(h->opt), why);
	r = find_export(h, &e, msg, sizeof(msg));
	if (r < 0)
		return send_err(h, rep_error(r), "%s", msg);
	if (match && e.base_allocation) {
		nbd_proto_put32(id, list ? 0 : META_ALLOC_ID);
		trace(h, "reply %s %s", nbd_proto_rep_name(NBD_REP_META_CONTEXT), ctx);
		r = send_rep(h, NBD_REP_META_CONTEXT, iov, 2);
		if (r < 0)
			return r;
		if (!list) {
			h->meta_alloc = true;
			memcpy(h->meta_name, h->res->name, sizeof(h->meta_name));
		}
	}
	return send_ack(h);
}

static const struct nbd_handshake_opt {
	uint32_t opt;
	int (*handle)(struct nbd_handshake *h);
	const char *unsupported; /* handle == NULL: NBD_REP_ERR_UNSUP with this */
} options[] = {
	{NBD_OPT_EXPORT_NAME, opt_export_name, NULL},
	{NBD_OPT_ABORT, opt_abort, NULL},
	{NBD_OPT_LIST, opt_list, NULL},
	{NBD_OPT_INFO, opt_info_go, NULL},
	{NBD_OPT_GO, opt_info_go, NULL},
	{NBD_OPT_STARTTLS, NULL, "TLS is not supported"},
	{NBD_OPT_STRUCTURED_REPLY, opt_structured_reply, NULL},
	{NBD_OPT_LIST_META_CONTEXT, opt_meta_context, NULL},
	{NBD_OPT_SET_META_CONTEXT, opt_meta_context, NULL},
};

/* Read the next option; 0 with its data in h->data, 1 if it was skipped. */
static int read_option(struct nbd_handshake *h)
{
	uint8_t hdr[NBD_OPT_HDR_SIZE];
	uint64_t magic;
	int r;

	r = recv_all(h, hdr, sizeof(hdr));
	if (r < 0)
		return fail(h, r, "reading an option: %s", strerror(-r));
	magic = nbd_proto_get64(hdr);
	if (magic != NBD_OPTS_MAGIC)
		return fail(h, -EPROTO, "bad option magic 0x%016llx", (unsigned long long)magic);
	h->opt = nbd_proto_get32(hdr + 8);
	h->len = nbd_proto_get32(hdr + 12);
	trace(h, "option %s (%u) len %u", nbd_proto_opt_name(h->opt), h->opt, h->len);
	if (!(h->res->client_flags & NBD_FLAG_C_FIXED_NEWSTYLE) && h->opt != NBD_OPT_EXPORT_NAME)
		return fail(h, -EPROTO, "option %u from a client without fixed newstyle", h->opt);
	if (h->len <= OPT_DATA_MAX) {
		r = recv_all(h, h->data, h->len);
		return r < 0 ? fail(h, r, "reading option data: %s", strerror(-r)) : 0;
	}
	if (h->opt == NBD_OPT_EXPORT_NAME)
		return fail(h, -EPROTO, "NBD_OPT_EXPORT_NAME: name longer than %u bytes",
			    NBD_MAX_STRING);
	if (h->len > OPT_DRAIN_MAX)
		return fail(h, -EMSGSIZE, "option %u: %u bytes of data, more than %u", h->opt,
			    h->len, OPT_DRAIN_MAX);
	r = drain(h, h->len);
	if (r < 0)
		return fail(h, r, "skipping option data: %s", strerror(-r));
	r = send_err(h, NBD_REP_ERR_TOO_BIG, "%u bytes of option data, more than %u", h->len,
		     OPT_DATA_MAX);
	return r < 0 ? r : 1;
}

static int handle_option(struct nbd_handshake *h)
{
	size_t i;

	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (options[i].opt != h->opt)
			continue;
		if (options[i].handle)
			return options[i].handle(h);
		return send_err(h, NBD_REP_ERR_UNSUP, "%s", options[i].unsupported);
	}
	return send_err(h, NBD_REP_ERR_UNSUP, "option %u is not supported", h->opt);
}

static int greet(struct nbd_handshake *h)
{
	uint8_t out[18], in[4];
	uint32_t cflags;
	int r;

	nbd_proto_put64(out, NBD_MAGIC);
	nbd_proto_put64(out + 8, NBD_OPTS_MAGIC);
	nbd_proto_put16(out + 16, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	r = send_buf(h, out, sizeof(out));
	if (r < 0)
		return fail(h, r, "sending the greeting: %s", strerror(-r));
	r = recv_all(h, in, sizeof(in));
	if (r < 0)
		return fail(h, r, "reading the client flags: %s", strerror(-r));
	cflags = nbd_proto_get32(in);
	if (cflags & ~CLIENT_FLAGS)
		return fail(h, -EPROTO, "unknown client flags 0x%08x", cflags);
	h->res->client_flags = cflags;
	trace(h, "client flags 0x%x", cflags);
	return 0;
}

int nbd_handshake(int fd, int timeout_ms, const struct nbd_handshake_ops *ops, void *ctx,
		  struct nbd_handshake_result *res)
{
	struct nbd_handshake h = {
		.fd = fd,
		.deadline_ms = timeout_ms > 0 ? now_ms() + timeout_ms : 0,
		.ops = ops,
		.ctx = ctx,
		.res = res,
	};
	int n, r;

	memset(res, 0, sizeof(*res));
	r = greet(&h);
	for (n = 0; r == 0; n++) {
		if (n == OPT_COUNT_MAX)
			return fail(&h, -EPROTO, "more than %d options", OPT_COUNT_MAX);
		r = read_option(&h);
		if (r == 0)
			r = handle_option(&h);
		else if (r == 1)
			r = 0;
		if (r < 0)
			fail(&h, r, "%s: %s", nbd_proto_opt_name(h.opt), strerror(-r));
	}
	return r < 0 ? r : 0;
}
