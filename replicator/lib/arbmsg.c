/*
 * arbmsg: decode, validate and encode the CPG arbiter's messages
 * (doc/arbiter.md §3 header, §4 bodies, §5 versions).
 *
 * One table row per message type lists its fields in wire order with the
 * rule each one must meet, and names the check of the rules that span
 * fields. The decoder checks the header and the delivered length before
 * it reads a body byte, then every field in wire order. The encoder
 * writes the same fields and runs the decoder over its own output.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arbmsg.h"
#include "memfield.h"
#include "state.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

enum fkind {
	FK_NUM,	  /* unsigned, a..b */
	FK_SET,	  /* value v < 64 with bit v of a set */
	FK_FLAGS, /* no bit outside a */
	FK_STR,	  /* str[width], at least a characters; b: spaces allowed (text) */
	FK_ZERO,  /* width reserved bytes */
	FK_STATE, /* u8 state enum, known up to a; above: taken as b (dflt) */
};

struct field {
	const char *name;
	uint8_t kind;
	uint8_t width; /* bytes on the wire */
	uint16_t off;  /* in arbmsg.u */
	uint64_t a, b;
	const char *dflt; /* FK_STATE: the name of b */
};

struct why {
	char *s;
	size_t n;
};

struct row {
	const char *name;
	uint32_t size; /* body of minor 0 */
	const struct field *fields;
	size_t n_fields;
	int (*check)(const struct row *r, const struct arbmsg *m, struct why *w);
};

/* ---------------------------------------------------------------- the table */

/* The numbers on the wire are state.h's (doc/arbiter.md §4.2). */
_Static_assert(ROLE_UNKNOWN == 0 && ROLE_SECONDARY == 2, "arbmsg role numbers");
_Static_assert(DISK_DUNKNOWN == 6 && DISK_UPTODATE == 8, "arbmsg disk numbers");
_Static_assert(CONN_STANDALONE == 0 && CONN_BEHIND == 23, "arbmsg conn numbers");

/* clang-format off */
#define MEMB(s, m) sizeof(((s *)0)->m), offsetof(s, m)
#define NUM(s, m, lo, hi) {#m, FK_NUM, MEMB(s, m), lo, hi, NULL}
#define ANY(s, m) {#m, FK_NUM, MEMB(s, m), 0, UINT64_MAX, NULL}
#define SET(s, m, set) {#m, FK_SET, MEMB(s, m), set, 0, NULL}
#define FLAGS(s, m, mask) {#m, FK_FLAGS, MEMB(s, m), mask, 0, NULL}
#define STR(s, m, min) {#m, FK_STR, sizeof(((s *)0)->m) - 1, offsetof(s, m), min, 0, NULL}
#define TEXT(s, m) {#m, FK_STR, sizeof(((s *)0)->m) - 1, offsetof(s, m), 0, 1, NULL}
#define ZERO(n) {"reserved", FK_ZERO, n, 0, 0, 0, NULL}
#define ROLE(s, m) {#m, FK_STATE, MEMB(s, m), ROLE_SECONDARY, ROLE_UNKNOWN, "Unknown"}
#define DISK(s, m) {#m, FK_STATE, MEMB(s, m), DISK_UPTODATE, DISK_DUNKNOWN, "DUnknown"}
#define CONN(s, m) {#m, FK_STATE, MEMB(s, m), CONN_BEHIND, CONN_STANDALONE, "StandAlone"}
#define BIT(v) (1ULL << (v))

static const struct field f_hello[] = {
	ANY(struct arbmsg_hello, ring),
	ANY(struct arbmsg_hello, token_ms),
	FLAGS(struct arbmsg_hello, flags, ARBMSG_HELLO_QUORATE),
};

static const struct field f_facts[] = {
	STR(struct arbmsg_facts, resource, 1),
	STR(struct arbmsg_facts, peer, 1),
	ROLE(struct arbmsg_facts, role),
	DISK(struct arbmsg_facts, disk),
	CONN(struct arbmsg_facts, conn),
	DISK(struct arbmsg_facts, pdsk),
	FLAGS(struct arbmsg_facts, susp, ARBMSG_SUSP_USER | ARBMSG_SUSP_NOD | ARBMSG_SUSP_FEN |
		  ARBMSG_SUSP_QUORUM),
	NUM(struct arbmsg_facts, fencing, 0, 2),
	NUM(struct arbmsg_facts, quorum, 0, 1),
	NUM(struct arbmsg_facts, on_no_quorum, 0, 1),
	ANY(struct arbmsg_facts, current),
	ANY(struct arbmsg_facts, bitmap),
	ANY(struct arbmsg_facts, since_ring),
	ANY(struct arbmsg_facts, since_s),
	NUM(struct arbmsg_facts, up, 0, 1),
	ANY(struct arbmsg_facts, changes),
};

static const struct field f_gone[] = {
	STR(struct arbmsg_gone, resource, 1),
};

static const struct field f_outdate_req[] = {
	ANY(struct arbmsg_outdate_req, req),
	STR(struct arbmsg_outdate_req, resource, 1),
	ANY(struct arbmsg_outdate_req, target),
	ANY(struct arbmsg_outdate_req, deadline_ms),
	ANY(struct arbmsg_outdate_req, current),
	STR(struct arbmsg_outdate_req, requester, 0),
};

static const struct field f_outdate_ack[] = {
	ANY(struct arbmsg_outdate_ack, req),
	ANY(struct arbmsg_outdate_ack, requester),
	SET(struct arbmsg_outdate_ack, result, BIT(3) | BIT(4) | BIT(6)),
	DISK(struct arbmsg_outdate_ack, disk),
	ZERO(2),
	STR(struct arbmsg_outdate_ack, resource, 1),
	ANY(struct arbmsg_outdate_ack, current),
};

static const struct field f_fenced[] = {
	ANY(struct arbmsg_fenced, node),
	NUM(struct arbmsg_fenced, how, ARBMSG_HOW_STONITH, ARBMSG_HOW_CONSTRAINT),
	ZERO(3),
	ANY(struct arbmsg_fenced, when),
	STR(struct arbmsg_fenced, resource, 0),
};

static const struct field f_sb_verdict[] = {
	ANY(struct arbmsg_sb_verdict, decider),
	ZERO(4),
	ANY(struct arbmsg_sb_verdict, id),
	STR(struct arbmsg_sb_verdict, resource, 1),
	ANY(struct arbmsg_sb_verdict, loser),
	ANY(struct arbmsg_sb_verdict, policy),
	NUM(struct arbmsg_sb_verdict, primaries, 0, 2),
	ZERO(2),
	ANY(struct arbmsg_sb_verdict, uuid_a),
	ANY(struct arbmsg_sb_verdict, uuid_b),
	TEXT(struct arbmsg_sb_verdict, reason),
};
/* clang-format on */

static int fail(struct why *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int check_fenced(const struct row *r, const struct arbmsg *m, struct why *w)
{
	const struct arbmsg_fenced *f = &m->u.fenced;

	if (f->how == ARBMSG_HOW_STONITH && f->resource[0])
		return fail(w, -EBADMSG, "%s: resource not empty with how %u (the whole node)",
			    r->name, f->how);
	return 0;
}

static int check_sb_verdict(const struct row *r, const struct arbmsg *m, struct why *w)
{
	const struct arbmsg_sb_verdict *v = &m->u.sb_verdict;

	if (v->decider != m->nodeid)
		return fail(w, -EBADMSG, "%s: decider %" PRIu32 " is not the sender %" PRIu32,
			    r->name, v->decider, m->nodeid);
	if (v->id != m->seq)
		return fail(w, -EBADMSG, "%s: id %" PRIu64 " is not the message's seq %" PRIu64,
			    r->name, v->id, m->seq);
	return 0;
}

/* clang-format off */
#define ROW(n, f, c) [ARBMSG_##n] = {#n, ARBMSG_##n##_SIZE, f, N_ELEMS(f), c}

static const struct row rows[ARBMSG_TYPE_COUNT] = {
	ROW(HELLO, f_hello, NULL),
	ROW(FACTS, f_facts, NULL),
	ROW(GONE, f_gone, NULL),
	ROW(OUTDATE_REQ, f_outdate_req, NULL),
	ROW(OUTDATE_ACK, f_outdate_ack, NULL),
	ROW(FENCED, f_fenced, check_fenced),
	ROW(SB_VERDICT, f_sb_verdict, check_sb_verdict),
};
/* clang-format on */

/* ---------------------------------------------------------------- helpers */

static int fail(struct why *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w && w->s && w->n) {
		va_start(ap, fmt);
		vsnprintf(w->s, w->n, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const struct row *row_of(uint16_t type)
{
	if (type == 0 || type >= ARBMSG_TYPE_COUNT)
		return NULL;
	return &rows[type];
}

const char *arbmsg_type_name(uint16_t type)
{
	const struct row *r = row_of(type);

	return r ? r->name : "UNKNOWN";
}

size_t arbmsg_body_size(uint16_t type)
{
	const struct row *r = row_of(type);

	return r ? r->size : 0;
}

/* Little-endian, byte by byte: the host's order does not matter. */
static uint64_t get_le(const uint8_t *p, unsigned int width)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put_le(uint8_t *p, unsigned int width, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < width; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---------------------------------------------------------------- decoding */

/* str[width]: printable ASCII without space (with space: text), then zero
 * padding; at least f->a long. */
static int decode_str(const struct row *r, const struct field *f, const uint8_t *p, char *out,
		      struct why *w)
{
	unsigned int k, i;

	for (k = 0; k < f->width && p[k]; k++)
		if (p[k] < (f->b ? 0x20 : 0x21) || p[k] > 0x7e)
			return fail(w, -EBADMSG, "%s: %s: not printable ASCII at byte %u (0x%02x)",
				    r->name, f->name, k, p[k]);
	for (i = k; i < f->width; i++)
		if (p[i])
			return fail(w, -EBADMSG, "%s: %s: nonzero byte 0x%02x at %u after the end",
				    r->name, f->name, p[i], i);
	if (k < f->a)
		return fail(w, -EBADMSG, "%s: %s: empty", r->name, f->name);
	memcpy(out, p, k);
	out[k] = '\0';
	return 0;
}

static int decode_num(const struct row *r, const struct field *f, uint64_t v, uint8_t *out,
		      struct arbmsg *m, struct why *w)
{
	switch (f->kind) {
	case FK_NUM:
		if (v < f->a || v > f->b)
			return fail(w, -EBADMSG,
				    "%s: %s %" PRIu64 " out of range %" PRIu64 "..%" PRIu64,
				    r->name, f->name, v, f->a, f->b);
		break;
	case FK_SET:
		if (v >= 64 || !(f->a & (1ULL << v)))
			return fail(w, -EBADMSG, "%s: %s %" PRIu64 " is not a valid value", r->name,
				    f->name, v);
		break;
	case FK_FLAGS:
		if (v & ~f->a)
			return fail(w, -EBADMSG, "%s: %s 0x%" PRIx64 " has unknown bits 0x%" PRIx64,
				    r->name, f->name, v, v & ~f->a);
		break;
	default: /* FK_STATE */
		if (v > f->a) {
			/* the first one is reported; the decode goes on */
			if (!m->clamped)
				fail(w, 0,
				     "%s: %s %" PRIu64 " unknown to this version, taken as %s",
				     r->name, f->name, v, f->dflt);
			m->clamped = true;
			v = f->b;
		}
		break;
	}
	memfield_store(out, f->width, v);
	return 0;
}

/* The body: r->size bytes at p, all present. */
static int decode_body(const struct row *r, const uint8_t *p, struct arbmsg *m, struct why *w)
{
	uint8_t *base = (uint8_t *)&m->u;
	const struct field *f;
	uint32_t pos = 0, i;
	size_t j;
	int rc;

	for (j = 0; j < r->n_fields; pos += f->width, j++) {
		f = &r->fields[j];
		if (f->kind == FK_STR) {
			rc = decode_str(r, f, p + pos, (char *)base + f->off, w);
		} else if (f->kind == FK_ZERO) {
			rc = 0;
			for (i = 0; i < f->width; i++)
				if (p[pos + i])
					return fail(w, -EBADMSG,
						    "%s: reserved byte at offset %u is 0x%02x",
						    r->name, pos + i, p[pos + i]);
		} else {
			rc = decode_num(r, f, get_le(p + pos, f->width), base + f->off, m, w);
		}
		if (rc)
			return rc;
	}
	return r->check ? r->check(r, m, w) : 0;
}

int arbmsg_decode(const void *buf, size_t len, uint32_t from_nodeid, struct arbmsg *m, char *err,
		  size_t errlen)
{
	struct why w = {err, errlen};
	const uint8_t *p = buf;
	const struct row *r;
	uint32_t magic, length, body;

	memset(m, 0, sizeof(*m));
	if (err && errlen)
		err[0] = '\0';
	if (len < ARBMSG_HDR_SIZE)
		return fail(&w, -EBADMSG, "header: %zu bytes delivered, the header alone is %u",
			    len, ARBMSG_HDR_SIZE);
	magic = (uint32_t)get_le(p, 4);
	if (magic != ARBMSG_MAGIC)
		return fail(&w, -EBADMSG, "header: magic 0x%08" PRIx32 ", expected 0x%08x", magic,
			    ARBMSG_MAGIC);
	m->major = p[4];
	m->minor = p[5];
	m->type = (uint16_t)get_le(p + 6, 2);
	length = (uint32_t)get_le(p + 8, 4);
	m->nodeid = (uint32_t)get_le(p + 12, 4);
	m->incarnation = get_le(p + 16, 8);
	m->seq = get_le(p + 24, 8);
	if (m->major != ARBMSG_MAJOR)
		return fail(&w, -EPROTONOSUPPORT,
			    "header: major version %u (minor %u), this arbiter speaks %u", m->major,
			    m->minor, ARBMSG_MAJOR);
	if (length != len)
		return fail(&w, -EBADMSG,
			    "header: length %" PRIu32 ", but %zu bytes were delivered", length,
			    len);
	if (length > ARBMSG_MAX_LEN)
		return fail(&w, -EBADMSG, "header: length %" PRIu32 " above the maximum %u", length,
			    ARBMSG_MAX_LEN);
	if (m->nodeid != from_nodeid)
		return fail(&w, -EBADMSG,
			    "header: nodeid %" PRIu32 ", but CPG delivered it from %" PRIu32,
			    m->nodeid, from_nodeid);
	if (m->seq == 0)
		return fail(&w, -EBADMSG, "header: seq 0 (it counts from 1)");
	r = row_of(m->type);
	if (!r && m->minor > ARBMSG_MINOR)
		return fail(&w, -ENOMSG, "header: type %u unknown to minor %u (sent as minor %u)",
			    m->type, ARBMSG_MINOR, m->minor);
	if (!r)
		return fail(&w, -EBADMSG, "header: unknown type %u in minor %u", m->type, m->minor);
	body = length - ARBMSG_HDR_SIZE;
	if (body < r->size)
		return fail(&w, -EBADMSG, "%s: body %" PRIu32 " bytes, shorter than %" PRIu32,
			    r->name, body, r->size);
	if (body > r->size && m->minor <= ARBMSG_MINOR)
		return fail(&w, -EBADMSG, "%s: body %" PRIu32 " bytes, minor %u has %" PRIu32,
			    r->name, body, m->minor, r->size);
	/* A newer minor's appended fields (body > r->size) are ignored. */
	return decode_body(r, p + ARBMSG_HDR_SIZE, m, &w);
}

/* ---------------------------------------------------------------- encoding */

static int encode_body(const struct row *r, const struct arbmsg *m, uint8_t *p)
{
	const uint8_t *base = (const uint8_t *)&m->u;
	const struct field *f;
	uint32_t pos = 0;
	size_t j, k;

	for (j = 0; j < r->n_fields; pos += f->width, j++) {
		f = &r->fields[j];
		switch (f->kind) {
		case FK_STR:
			k = strnlen((const char *)base + f->off, (size_t)f->width + 1);
			if (k > f->width)
				return -EINVAL;
			memcpy(p + pos, base + f->off, k);
			memset(p + pos + k, 0, f->width - k);
			break;
		case FK_ZERO:
			memset(p + pos, 0, f->width);
			break;
		default:
			put_le(p + pos, f->width, memfield_load(base + f->off, f->width));
			break;
		}
	}
	return pos == r->size ? 0 : -EINVAL;
}

int arbmsg_encode(const struct arbmsg *m, void *buf, size_t buflen, size_t *len)
{
	const struct row *r = row_of(m->type);
	struct arbmsg check;
	uint8_t *p = buf;
	uint32_t total;
	int rc;

	if (!r)
		return -EINVAL;
	total = ARBMSG_HDR_SIZE + r->size;
	if (buflen < total)
		return -ENOSPC;
	put_le(p, 4, ARBMSG_MAGIC);
	p[4] = ARBMSG_MAJOR;
	p[5] = ARBMSG_MINOR;
	put_le(p + 6, 2, m->type);
	put_le(p + 8, 4, total);
	put_le(p + 12, 4, m->nodeid);
	put_le(p + 16, 8, m->incarnation);
	put_le(p + 24, 8, m->seq);
	rc = encode_body(r, m, p + ARBMSG_HDR_SIZE);
	if (rc)
		return rc;
	/* never send what a receiver refuses, nor an enum it would clamp */
	if (arbmsg_decode(p, total, m->nodeid, &check, NULL, 0) || check.clamped)
		return -EINVAL;
	*len = total;
	return 0;
}
