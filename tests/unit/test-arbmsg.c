/*
 * Unit tests for arbmsg, the CPG arbiter's message codec, against
 * doc/arbiter.md §3-§5: the body sizes of §4, a round trip of one sample
 * per type (decoded from an exactly sized heap copy, so that ASan sees
 * any read past the message), golden bytes of the header, HELLO, FACTS
 * and SB_VERDICT written out from the doc, every field's offset in every
 * type, each header and body check broken once, the clamping of state
 * enums, the version rules, and the encoder's refusals.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arbmsg.h"
#include "state.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define NODE 7u
#define INC  0x0102030405060708ULL
#define MAXBUF (ARBMSG_MAX_LEN + 64)

#define NAME128                                                                              \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.abcdefghijklmnopq" \
	"rstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789~"
_Static_assert(sizeof(NAME128) == ARBMSG_NAME_MAX + 1, "a name of 128 bytes");

/* One sample per type, non-trivial values in every field. */
static const struct arbmsg samples[] = {
	{.type = ARBMSG_HELLO, .major = 1, .nodeid = NODE, .incarnation = INC, .seq = 1,
	 .u.hello = {0x0000000100000abcULL, 1000, ARBMSG_HELLO_QUORATE}},
	{.type = ARBMSG_FACTS, .major = 1, .nodeid = NODE, .incarnation = INC, .seq = 42,
	 .u.facts = {"r0", "beta", ROLE_PRIMARY, DISK_UPTODATE, CONN_CONNECTED, DISK_OUTDATED,
		     ARBMSG_SUSP_USER | ARBMSG_SUSP_FEN, 2, 1, 1, 0x1122334455667788ULL,
		     0x99aabbccddeeff00ULL, 0x0000000200000004ULL, 1700000000, 1,
		     0x123456789aULL}},
	{.type = ARBMSG_GONE, .major = 1, .nodeid = NODE, .incarnation = INC, .seq = 3,
	 .u.gone = {NAME128}},
	{.type = ARBMSG_OUTDATE_REQ, .major = 1, .nodeid = NODE, .incarnation = INC, .seq = 4,
	 .u.outdate_req = {0xfeedface00000001ULL, "data-1", 3, 15000, 0xdeadbeef12345678ULL,
			   "alpha.example.com"}},
	{.type = ARBMSG_OUTDATE_ACK, .major = 1, .nodeid = NODE, .incarnation = INC, .seq = 5,
	 .u.outdate_ack = {0xfeedface00000001ULL, 2, 4, DISK_OUTDATED, "data-1",
			   0x0badc0de0badc0deULL}},
	{.type = ARBMSG_FENCED, .major = 1, .nodeid = NODE, .incarnation = INC, .seq = 6,
	 .u.fenced = {3, ARBMSG_HOW_CONSTRAINT, 1700000000123ULL, "r0"}},
	{.type = ARBMSG_SB_VERDICT, .major = 1, .nodeid = NODE, .incarnation = INC,
	 .seq = 0x1000000007ULL,
	 .u.sb_verdict = {NODE, 0x1000000007ULL, "r0", 3, 4, 1, 0x1111222233334444ULL,
			  0x5555666677778888ULL, "discard-least-changes:3<5"}},
};

static const struct arbmsg *sample_of(uint16_t type)
{
	size_t i;

	for (i = 0; i < N_ELEMS(samples); i++)
		if (samples[i].type == type)
			return &samples[i];
	fail_msg("no sample for type %u", type);
	return NULL;
}

static uint64_t get_le(const uint8_t *p, unsigned int width)
{
	uint64_t v = 0;

	while (width-- > 0)
		v = v << 8 | p[width];
	return v;
}

static void put_le(uint8_t *p, unsigned int width, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < width; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Encode a sample into buf (MAXBUF bytes); its length. */
static size_t encode(const struct arbmsg *m, uint8_t *buf)
{
	size_t len = 0;

	assert_int_equal(arbmsg_encode(m, buf, MAXBUF, &len), 0);
	assert_int_equal(len, ARBMSG_HDR_SIZE + arbmsg_body_size(m->type));
	return len;
}

/* Decode len bytes of buf from an exactly sized heap copy. */
static int decode(const uint8_t *buf, size_t len, uint32_t from, struct arbmsg *m, char *err)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	rc = arbmsg_decode(copy, len, from, m, err, ARBMSG_ERR_MAX);
	free(copy);
	return rc;
}

static void assert_same(const struct arbmsg *a, const struct arbmsg *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->major, b->major);
	assert_int_equal(a->minor, b->minor);
	assert_int_equal(a->nodeid, b->nodeid);
	assert_int_equal(a->incarnation, b->incarnation);
	assert_int_equal(a->seq, b->seq);
	assert_memory_equal(&a->u, &b->u, sizeof(a->u));
}

/* Decode buf with byte off set to v (or a width-byte field); rc, err in err. */
static int decode_with(const struct arbmsg *s, size_t off, unsigned int width, uint64_t v,
		       struct arbmsg *m, char *err)
{
	uint8_t buf[MAXBUF];
	size_t len = encode(s, buf);

	assert_true(off + width <= len);
	put_le(buf + off, width, v);
	return decode(buf, len, s->nodeid, m, err);
}

static void expect_fail(const struct arbmsg *s, size_t off, unsigned int width, uint64_t v,
			int rc, const char *sub)
{
	char err[ARBMSG_ERR_MAX] = "";
	struct arbmsg m;

	assert_int_equal(decode_with(s, off, width, v, &m, err), rc);
	if (!strstr(err, sub))
		fail_msg("offset %zu = %#llx: reason '%s' lacks '%s'", off, (unsigned long long)v,
			 err, sub);
	assert_null(strchr(err, '\n'));
}

/* ---------------------------------------------------------------- tests */

static void test_table(void **state)
{
	(void)state;
	assert_int_equal(ARBMSG_HELLO, 1);
	assert_int_equal(ARBMSG_SB_VERDICT, 7);
	assert_int_equal(N_ELEMS(samples), ARBMSG_TYPE_COUNT - 1);
	/* doc §4, the table's last column */
	assert_int_equal(arbmsg_body_size(ARBMSG_HELLO), 16);
	assert_int_equal(arbmsg_body_size(ARBMSG_FACTS), 304);
	assert_int_equal(arbmsg_body_size(ARBMSG_GONE), 128);
	assert_int_equal(arbmsg_body_size(ARBMSG_OUTDATE_REQ), 280);
	assert_int_equal(arbmsg_body_size(ARBMSG_OUTDATE_ACK), 152);
	assert_int_equal(arbmsg_body_size(ARBMSG_FENCED), 144);
	assert_int_equal(arbmsg_body_size(ARBMSG_SB_VERDICT), 312);
	assert_int_equal(arbmsg_body_size(0), 0);
	assert_int_equal(arbmsg_body_size(8), 0);
	assert_string_equal(arbmsg_type_name(ARBMSG_HELLO), "HELLO");
	assert_string_equal(arbmsg_type_name(ARBMSG_FACTS), "FACTS");
	assert_string_equal(arbmsg_type_name(ARBMSG_GONE), "GONE");
	assert_string_equal(arbmsg_type_name(ARBMSG_OUTDATE_REQ), "OUTDATE_REQ");
	assert_string_equal(arbmsg_type_name(ARBMSG_OUTDATE_ACK), "OUTDATE_ACK");
	assert_string_equal(arbmsg_type_name(ARBMSG_FENCED), "FENCED");
	assert_string_equal(arbmsg_type_name(ARBMSG_SB_VERDICT), "SB_VERDICT");
	assert_string_equal(arbmsg_type_name(0), "UNKNOWN");
	assert_string_equal(arbmsg_type_name(ARBMSG_TYPE_COUNT), "UNKNOWN");
	assert_string_equal(arbmsg_type_name(0xffff), "UNKNOWN");
}

static void test_roundtrip(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(samples); i++) {
		const struct arbmsg *s = &samples[i];
		char err[ARBMSG_ERR_MAX] = "x";
		uint8_t buf[MAXBUF], again[MAXBUF];
		struct arbmsg out;
		size_t len = encode(s, buf), len2 = 0;
		int rc;

		assert_int_equal(get_le(buf, 4), ARBMSG_MAGIC);
		assert_int_equal(get_le(buf + 8, 4), len);
		rc = decode(buf, len, s->nodeid, &out, err);
		if (rc)
			fail_msg("%s: %d %s", arbmsg_type_name(s->type), rc, err);
		assert_string_equal(err, "");
		assert_false(out.clamped);
		assert_same(s, &out);
		/* the decoded message encodes to the same bytes */
		assert_int_equal(arbmsg_encode(&out, again, len, &len2), 0);
		assert_int_equal(len2, len);
		assert_memory_equal(buf, again, len);
		/* one byte short of room */
		len2 = 99;
		assert_int_equal(arbmsg_encode(s, again, len - 1, &len2), -ENOSPC);
		assert_int_equal(len2, 99);
		assert_int_equal(arbmsg_encode(s, again, 0, &len2), -ENOSPC);
	}
}

/* The header and FACTS, byte by byte from the tables of doc §3 and §4.2. */
static void test_golden_facts(void **state)
{
	static const uint8_t golden[32 + 304] = {
		0x54, 0x41, 0x52, 0x42,				/* magic: "TARB" */
		1, 0,						/* major 1, minor 0 */
		2, 0,						/* type 2: FACTS */
		0x50, 0x01, 0, 0,				/* length 336 */
		7, 0, 0, 0,					/* nodeid 7 */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* incarnation */
		42, 0, 0, 0, 0, 0, 0, 0,			/* seq 42 */
		[32 + 0] = 'r', '0',				/* resource */
		[32 + 128] = 'b', 'e', 't', 'a',		/* peer */
		[32 + 256] = 1, 8, 10, 5, /* role Primary, UpToDate, Connected, Outdated */
		[32 + 260] = 0x05, 2, 1, 1, /* susp, fencing, quorum, on_no_quorum */
		[32 + 264] = 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, /* current */
		[32 + 272] = 0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, /* bitmap */
		[32 + 280] = 4, 0, 0, 0, 2, 0, 0, 0,			     /* since_ring */
		[32 + 288] = 0x00, 0xf1, 0x53, 0x65,			     /* since_s */
		[32 + 292] = 1, 0, 0, 0,				     /* up */
		[32 + 296] = 0x9a, 0x78, 0x56, 0x34, 0x12, 0, 0, 0,	     /* changes */
	};
	const struct arbmsg *s = sample_of(ARBMSG_FACTS);
	char err[ARBMSG_ERR_MAX];
	uint8_t buf[MAXBUF];
	struct arbmsg out;

	(void)state;
	assert_int_equal(encode(s, buf), sizeof(golden));
	assert_memory_equal(buf, golden, sizeof(golden));
	assert_int_equal(decode(golden, sizeof(golden), NODE, &out, err), 0);
	assert_same(s, &out);
}

/* HELLO and SB_VERDICT written out from doc §4.1 and §4.7. */
static void test_golden_hello_verdict(void **state)
{
	static const uint8_t hello[32 + 16] = {
		0x54, 0x41, 0x52, 0x42, 1, 0, 1, 0, 48, 0, 0, 0, 7, 0, 0, 0,
		8, 7, 6, 5, 4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0,
		0xbc, 0x0a, 0, 0, 1, 0, 0, 0, /* ring */
		0xe8, 0x03, 0, 0,	      /* token_ms 1000 */
		1, 0, 0, 0,		      /* flags: quorate */
	};
	static const uint8_t verdict[32 + 312] = {
		0x54, 0x41, 0x52, 0x42, 1, 0, 7, 0, 0x58, 0x01, 0, 0, 7, 0, 0, 0,
		8, 7, 6, 5, 4, 3, 2, 1, 7, 0, 0, 0, 0x10, 0, 0, 0,
		[32 + 0] = 7, 0, 0, 0,				   /* decider */
		[32 + 8] = 7, 0, 0, 0, 0x10, 0, 0, 0,		   /* id */
		[32 + 16] = 'r', '0',				   /* resource */
		[32 + 144] = 3, 0, 0, 0,			   /* loser */
		[32 + 148] = 4, 1,				   /* policy, primaries */
		[32 + 152] = 0x44, 0x44, 0x33, 0x33, 0x22, 0x22, 0x11, 0x11, /* uuid_a */
		[32 + 160] = 0x88, 0x88, 0x77, 0x77, 0x66, 0x66, 0x55, 0x55, /* uuid_b */
		[32 + 168] = 'd', 'i', 's', 'c', 'a', 'r', 'd', '-', 'l', 'e', 'a', 's', 't',
		'-', 'c', 'h', 'a', 'n', 'g', 'e', 's', ':', '3', '<', '5', /* reason */
	};
	char err[ARBMSG_ERR_MAX];
	uint8_t buf[MAXBUF];
	struct arbmsg out;

	(void)state;
	assert_int_equal(encode(sample_of(ARBMSG_HELLO), buf), sizeof(hello));
	assert_memory_equal(buf, hello, sizeof(hello));
	assert_int_equal(decode(hello, sizeof(hello), NODE, &out, err), 0);
	assert_same(sample_of(ARBMSG_HELLO), &out);
	assert_int_equal(encode(sample_of(ARBMSG_SB_VERDICT), buf), sizeof(verdict));
	assert_memory_equal(buf, verdict, sizeof(verdict));
	assert_int_equal(decode(verdict, sizeof(verdict), NODE, &out, err), 0);
	assert_same(sample_of(ARBMSG_SB_VERDICT), &out);
}

/* Every field of the other types at its offset in the body (doc §4.3-§4.6). */
static void test_layout(void **state)
{
	static const struct {
		uint16_t type;
		uint16_t off, width; /* width 0: a string */
		uint64_t v;
		const char *s;
	} f[] = {
		{ARBMSG_GONE, 0, 0, 0, NAME128},
		{ARBMSG_OUTDATE_REQ, 0, 8, 0xfeedface00000001ULL, NULL},
		{ARBMSG_OUTDATE_REQ, 8, 0, 0, "data-1"},
		{ARBMSG_OUTDATE_REQ, 136, 4, 3, NULL},
		{ARBMSG_OUTDATE_REQ, 140, 4, 15000, NULL},
		{ARBMSG_OUTDATE_REQ, 144, 8, 0xdeadbeef12345678ULL, NULL},
		{ARBMSG_OUTDATE_REQ, 152, 0, 0, "alpha.example.com"},
		{ARBMSG_OUTDATE_ACK, 0, 8, 0xfeedface00000001ULL, NULL},
		{ARBMSG_OUTDATE_ACK, 8, 4, 2, NULL},
		{ARBMSG_OUTDATE_ACK, 12, 1, 4, NULL},
		{ARBMSG_OUTDATE_ACK, 13, 1, DISK_OUTDATED, NULL},
		{ARBMSG_OUTDATE_ACK, 14, 2, 0, NULL},
		{ARBMSG_OUTDATE_ACK, 16, 0, 0, "data-1"},
		{ARBMSG_OUTDATE_ACK, 144, 8, 0x0badc0de0badc0deULL, NULL},
		{ARBMSG_FENCED, 0, 4, 3, NULL},
		{ARBMSG_FENCED, 4, 1, ARBMSG_HOW_CONSTRAINT, NULL},
		{ARBMSG_FENCED, 5, 3, 0, NULL},
		{ARBMSG_FENCED, 8, 8, 1700000000123ULL, NULL},
		{ARBMSG_FENCED, 16, 0, 0, "r0"},
	};
	uint8_t buf[MAXBUF];
	size_t i;

	(void)state;
	for (i = 0; i < N_ELEMS(f); i++) {
		const uint8_t *p;

		encode(sample_of(f[i].type), buf);
		p = buf + ARBMSG_HDR_SIZE + f[i].off;
		if (f[i].width) {
			assert_int_equal(get_le(p, f[i].width), f[i].v);
			continue;
		}
		assert_memory_equal(p, f[i].s, strlen(f[i].s));
		if (strlen(f[i].s) < ARBMSG_NAME_MAX)
			assert_int_equal(p[strlen(f[i].s)], 0);
	}
}

static void test_header(void **state)
{
	const struct arbmsg *s = sample_of(ARBMSG_HELLO);
	char err[ARBMSG_ERR_MAX];
	uint8_t buf[MAXBUF];
	struct arbmsg m;
	size_t len;

	(void)state;
	memset(buf, 0, sizeof(buf));
	len = encode(s, buf);
	/* shorter than a header: nothing is read */
	assert_int_equal(decode(buf, 0, NODE, &m, err), -EBADMSG);
	assert_int_equal(decode(buf, 31, NODE, &m, err), -EBADMSG);
	assert_non_null(strstr(err, "header"));
	expect_fail(s, 0, 4, 0x42524155, -EBADMSG, "magic 0x42524155");
	expect_fail(s, 0, 4, 0x54415242, -EBADMSG, "magic"); /* big-endian "TARB" */
	/* length: the delivered length, at least the header and the body */
	expect_fail(s, 8, 4, len + 1, -EBADMSG, "length 49, but 48 bytes");
	expect_fail(s, 8, 4, len - 1, -EBADMSG, "length 47, but 48");
	expect_fail(s, 8, 4, 0, -EBADMSG, "length 0");
	assert_int_equal(decode(buf, len - 1, NODE, &m, err), -EBADMSG);
	/* the sender is the node CPG delivered it from */
	assert_int_equal(decode(buf, len, NODE + 1, &m, err), -EBADMSG);
	assert_string_equal(err, "header: nodeid 7, but CPG delivered it from 8");
	expect_fail(s, 24, 8, 0, -EBADMSG, "seq 0");
	/* the seq order is the caller's: any nonzero seq decodes */
	assert_int_equal(decode_with(s, 24, 8, UINT64_MAX, &m, err), 0);
	assert_int_equal(m.seq, UINT64_MAX);
	/* at most 4096 bytes, even when they all arrived */
	buf[8] = 0x01;
	buf[9] = 0x10; /* 4097 */
	assert_int_equal(decode(buf, 4097, NODE, &m, err), -EBADMSG);
	assert_non_null(strstr(err, "maximum 4096"));
}

/* doc §5: majors, minors, unknown types. */
static void test_versions(void **state)
{
	const struct arbmsg *s = sample_of(ARBMSG_FACTS);
	char err[ARBMSG_ERR_MAX];
	uint8_t buf[MAXBUF];
	struct arbmsg m;
	size_t len, i;

	(void)state;
	/* another major: a distinct error, whatever follows */
	assert_int_equal(decode_with(s, 4, 1, 2, &m, err), -EPROTONOSUPPORT);
	assert_int_equal(m.major, 2);
	assert_non_null(strstr(err, "major version 2"));
	assert_int_equal(decode_with(s, 4, 1, 0, &m, err), -EPROTONOSUPPORT);
	len = encode(s, buf);
	buf[4] = 2;
	buf[8] = 0xff; /* a length that would be wrong in major 1 */
	assert_int_equal(decode(buf, len, NODE, &m, err), -EPROTONOSUPPORT);

	/* an unknown type: ignored from a newer minor, malformed in minor 0 */
	len = encode(s, buf);
	put_le(buf + 6, 2, 8);
	assert_int_equal(decode(buf, len, NODE, &m, err), -EBADMSG);
	assert_non_null(strstr(err, "unknown type 8"));
	buf[5] = 1;
	assert_int_equal(decode(buf, len, NODE, &m, err), -ENOMSG);
	assert_int_equal(m.type, 8);
	assert_int_equal(m.minor, 1);
	assert_int_equal(m.nodeid, NODE);
	assert_int_equal(m.seq, 42);
	put_le(buf + 6, 2, 0);
	assert_int_equal(decode(buf, len, NODE, &m, err), -ENOMSG);
	buf[5] = 0;
	assert_int_equal(decode(buf, len, NODE, &m, err), -EBADMSG);
	/* ... but it still comes from the node it names */
	put_le(buf + 6, 2, 0xffff);
	buf[5] = 3;
	assert_int_equal(decode(buf, len, NODE + 1, &m, err), -EBADMSG);

	/* a newer minor's appended fields are ignored */
	len = encode(s, buf);
	memset(buf + len, 0xa5, 40);
	put_le(buf + 8, 4, len + 40);
	assert_int_equal(decode(buf, len + 40, NODE, &m, err), -EBADMSG); /* minor 0 */
	assert_non_null(strstr(err, "FACTS: body 344 bytes, minor 0 has 304"));
	buf[5] = 1;
	assert_int_equal(decode(buf, len + 40, NODE, &m, err), 0);
	assert_int_equal(m.minor, 1);
	m.minor = 0;
	assert_same(s, &m);
	/* ... and it re-encodes as this version's body */
	{
		uint8_t again[MAXBUF];
		size_t n = 0;

		assert_int_equal(arbmsg_encode(&m, again, sizeof(again), &n), 0);
		assert_int_equal(n, len);
		assert_int_equal(again[5], 0);
	}
	/* a newer minor MUST NOT be shorter than minor 0 */
	put_le(buf + 8, 4, len - 1);
	assert_int_equal(decode(buf, len - 1, NODE, &m, err), -EBADMSG);
	assert_non_null(strstr(err, "FACTS: body 303 bytes, shorter than 304"));
	/* the shortest message of each type: its minor-0 body */
	for (i = 0; i < N_ELEMS(samples); i++) {
		size_t n = encode(&samples[i], buf);

		put_le(buf + 8, 4, n - 1);
		assert_int_equal(decode(buf, n - 1, NODE, &m, err), -EBADMSG);
		assert_non_null(strstr(err, "shorter than"));
	}
}

static void test_strings(void **state)
{
	const struct arbmsg *f = sample_of(ARBMSG_FACTS), *g = sample_of(ARBMSG_GONE);
	const struct arbmsg *v = sample_of(ARBMSG_SB_VERDICT);
	char err[ARBMSG_ERR_MAX];
	struct arbmsg m;
	const size_t res = 32, peer = 32 + 128;

	(void)state;
	expect_fail(f, peer + 3, 1, ' ', -EBADMSG,
		    "FACTS: peer: not printable ASCII at byte 3 (0x20)");
	expect_fail(f, res + 1, 1, 0x7f, -EBADMSG, "resource: not printable ASCII at byte 1");
	expect_fail(f, res, 1, 0x80, -EBADMSG, "resource: not printable ASCII at byte 0");
	expect_fail(f, res + 1, 1, '\t', -EBADMSG, "resource");
	expect_fail(f, peer + 2, 1, 0x01, -EBADMSG, "FACTS: peer: not printable");
	/* after the terminator only zero bytes */
	expect_fail(f, res + 3, 1, 'x', -EBADMSG, "FACTS: resource: nonzero byte 0x78 at 3");
	expect_fail(f, peer + 127, 1, 'x', -EBADMSG, "FACTS: peer: nonzero byte 0x78 at 127");
	/* non-empty where marked: every resource name but FENCED's */
	expect_fail(f, res, 2, 0, -EBADMSG, "FACTS: resource: empty");
	expect_fail(f, peer, 4, 0, -EBADMSG, "FACTS: peer: empty");
	expect_fail(sample_of(ARBMSG_OUTDATE_REQ), 32 + 8, 6, 0, -EBADMSG,
		    "OUTDATE_REQ: resource: empty");
	/* a string of exactly 128 bytes has no terminator */
	assert_int_equal(decode_with(g, 32 + 127, 1, '!', &m, err), 0);
	assert_int_equal(strlen(m.u.gone.resource), 128);
	expect_fail(g, 32 + 127, 1, ' ', -EBADMSG,
		    "GONE: resource: not printable ASCII at byte 127");
	/* SB_VERDICT.reason is text[144]: spaces allowed, control bytes not */
	expect_fail(v, 32 + 168 + 143, 1, 'x', -EBADMSG, "SB_VERDICT: reason: nonzero byte");
	expect_fail(v, 32 + 168 + 2, 1, '\t', -EBADMSG, "SB_VERDICT: reason: not printable");
	assert_int_equal(decode_with(v, 32 + 168 + 2, 1, ' ', &m, err), 0);
}

static void test_fields(void **state)
{
	const struct arbmsg *h = sample_of(ARBMSG_HELLO), *f = sample_of(ARBMSG_FACTS);
	const struct arbmsg *a = sample_of(ARBMSG_OUTDATE_ACK), *d = sample_of(ARBMSG_FENCED);
	const struct arbmsg *v = sample_of(ARBMSG_SB_VERDICT);
	struct arbmsg fenced = *d;
	char err[ARBMSG_ERR_MAX];
	uint8_t buf[MAXBUF];
	struct arbmsg m;
	size_t len;
	unsigned int i;

	(void)state;
	expect_fail(h, 32 + 12, 4, 2, -EBADMSG, "HELLO: flags 0x2 has unknown bits 0x2");
	expect_fail(h, 32 + 12, 4, 0x80000001u, -EBADMSG, "HELLO: flags");
	expect_fail(f, 32 + 260, 1, 0x10, -EBADMSG, "FACTS: susp 0x10 has unknown bits");
	assert_int_equal(decode_with(f, 32 + 260, 1, 0x0f, &m, err), 0);
	expect_fail(f, 32 + 261, 1, 3, -EBADMSG, "FACTS: fencing 3 out of range 0..2");
	expect_fail(f, 32 + 262, 1, 2, -EBADMSG, "FACTS: quorum 2");
	expect_fail(f, 32 + 263, 1, 2, -EBADMSG, "FACTS: on_no_quorum 2");
	expect_fail(f, 32 + 292, 4, 2, -EBADMSG, "FACTS: up 2 out of range 0..1");
	expect_fail(f, 32 + 292, 4, 0x100, -EBADMSG, "FACTS: up 256");
	expect_fail(a, 32 + 12, 1, 5, -EBADMSG, "OUTDATE_ACK: result 5 is not a valid value");
	expect_fail(a, 32 + 12, 1, 0, -EBADMSG, "OUTDATE_ACK: result 0");
	for (i = 3; i <= 6; i += (i == 4) ? 2 : 1)
		assert_int_equal(decode_with(a, 32 + 12, 1, i, &m, err), 0);
	expect_fail(d, 32 + 4, 1, 0, -EBADMSG, "FENCED: how 0 out of range 1..2");
	expect_fail(d, 32 + 4, 1, 3, -EBADMSG, "FENCED: how 3");
	expect_fail(v, 32 + 149, 1, 3, -EBADMSG, "SB_VERDICT: primaries 3 out of range 0..2");
	/* reserved bytes, at their offsets in the body */
	expect_fail(a, 32 + 14, 1, 1, -EBADMSG, "OUTDATE_ACK: reserved byte at offset 14 is 0x01");
	expect_fail(a, 32 + 15, 1, 0x80, -EBADMSG, "reserved byte at offset 15");
	expect_fail(d, 32 + 5, 1, 1, -EBADMSG, "FENCED: reserved byte at offset 5");
	expect_fail(d, 32 + 7, 1, 1, -EBADMSG, "FENCED: reserved byte at offset 7");
	expect_fail(v, 32 + 4, 1, 1, -EBADMSG, "SB_VERDICT: reserved byte at offset 4");
	expect_fail(v, 32 + 7, 1, 1, -EBADMSG, "SB_VERDICT: reserved byte at offset 7");
	expect_fail(v, 32 + 150, 1, 1, -EBADMSG, "SB_VERDICT: reserved byte at offset 150");
	expect_fail(v, 32 + 151, 1, 1, -EBADMSG, "SB_VERDICT: reserved byte at offset 151");
	/* FENCED how 1 is the whole node: no resource */
	fenced.u.fenced.how = ARBMSG_HOW_STONITH;
	fenced.u.fenced.resource[0] = '\0';
	len = encode(&fenced, buf);
	buf[32 + 4] = 1;
	buf[32 + 16] = 'r';
	assert_int_equal(decode(buf, len, NODE, &m, err), -EBADMSG);
	assert_non_null(strstr(err, "FENCED: resource not empty with how 1"));
	/* SB_VERDICT: the decider sent it, its id is the message's seq */
	expect_fail(v, 32 + 0, 4, NODE + 1, -EBADMSG, "SB_VERDICT: decider 8 is not the sender 7");
	expect_fail(v, 32 + 8, 8, 1, -EBADMSG, "SB_VERDICT: id 1 is not the message's seq");
}

/* The state enum decoded from body offset off. */
static uint8_t enum_at(const struct arbmsg *m, uint16_t off)
{
	if (m->type == ARBMSG_OUTDATE_ACK)
		return m->u.outdate_ack.disk;
	switch (off) {
	case 256:
		return m->u.facts.role;
	case 257:
		return m->u.facts.disk;
	case 258:
		return m->u.facts.conn;
	default:
		return m->u.facts.pdsk;
	}
}

/* doc §4.2: state enums above the known values are clamped and flagged. */
static void test_clamp(void **state)
{
	static const struct {
		uint16_t type, off;
		uint8_t v, want;
		const char *name;
	} rows[] = {
		{ARBMSG_FACTS, 256, 3, ROLE_UNKNOWN,
		 "FACTS: role 3 unknown to this version, taken as Unknown"},
		{ARBMSG_FACTS, 256, 255, ROLE_UNKNOWN, "FACTS: role 255"},
		{ARBMSG_FACTS, 257, 9, DISK_DUNKNOWN,
		 "FACTS: disk 9 unknown to this version, taken as DUnknown"},
		{ARBMSG_FACTS, 258, 24, CONN_STANDALONE,
		 "FACTS: conn 24 unknown to this version, taken as StandAlone"},
		{ARBMSG_FACTS, 259, 200, DISK_DUNKNOWN, "FACTS: pdsk 200"},
		{ARBMSG_OUTDATE_ACK, 13, 9, DISK_DUNKNOWN, "OUTDATE_ACK: disk 9"},
		/* the highest known values pass as they are */
		{ARBMSG_FACTS, 256, ROLE_SECONDARY, ROLE_SECONDARY, NULL},
		{ARBMSG_FACTS, 257, DISK_UPTODATE, DISK_UPTODATE, NULL},
		{ARBMSG_FACTS, 258, CONN_BEHIND, CONN_BEHIND, NULL},
		{ARBMSG_FACTS, 259, DISK_DISKLESS, DISK_DISKLESS, NULL},
	};
	char err[ARBMSG_ERR_MAX];
	uint8_t buf[MAXBUF];
	struct arbmsg m;
	size_t i, len;

	(void)state;
	for (i = 0; i < N_ELEMS(rows); i++) {
		const struct arbmsg *s = sample_of(rows[i].type);

		assert_int_equal(decode_with(s, 32 + rows[i].off, 1, rows[i].v, &m, err), 0);
		assert_int_equal(enum_at(&m, rows[i].off), rows[i].want);
		assert_int_equal(m.clamped, rows[i].name != NULL);
		if (rows[i].name && !strstr(err, rows[i].name))
			fail_msg("clamp: '%s' lacks '%s'", err, rows[i].name);
		if (!rows[i].name)
			assert_string_equal(err, "");
	}
	/* several: the first is named; a later malformed field still fails */
	len = encode(sample_of(ARBMSG_FACTS), buf);
	buf[32 + 256] = 9;
	buf[32 + 258] = 99;
	assert_int_equal(decode(buf, len, NODE, &m, err), 0);
	assert_true(m.clamped);
	assert_non_null(strstr(err, "role 9"));
	assert_int_equal(m.u.facts.conn, CONN_STANDALONE);
	buf[32 + 292] = 7;
	assert_int_equal(decode(buf, len, NODE, &m, err), -EBADMSG);
	assert_non_null(strstr(err, "up 7"));
}

static void test_encode_errors(void **state)
{
	char name129[ARBMSG_NAME_MAX + 2];
	uint8_t buf[MAXBUF];
	struct arbmsg m;
	size_t len = 1234;

	(void)state;
#define REFUSED(what, rc)                                                                   \
	do {                                                                                \
		m = *sample_of(ARBMSG_FACTS);                                               \
		what;                                                                       \
		assert_int_equal(arbmsg_encode(&m, buf, sizeof(buf), &len), rc);           \
		assert_int_equal(len, 1234);                                                \
	} while (0)
	REFUSED(m.type = 0, -EINVAL);
	REFUSED(m.type = ARBMSG_TYPE_COUNT, -EINVAL);
	REFUSED(strcpy(m.u.facts.resource, "r 0"), -EINVAL);
	REFUSED(strcpy(m.u.facts.peer, "b\x7f"), -EINVAL);
	REFUSED(m.u.facts.resource[0] = '\0', -EINVAL);
	REFUSED(m.u.facts.peer[0] = '\0', -EINVAL);
	REFUSED(m.u.facts.role = 3, -EINVAL); /* would be clamped */
	REFUSED(m.u.facts.conn = 24, -EINVAL);
	REFUSED(m.u.facts.fencing = 3, -EINVAL);
	REFUSED(m.u.facts.up = 2, -EINVAL);
	REFUSED(m.u.facts.susp = 0x10, -EINVAL);
	REFUSED(m.seq = 0, -EINVAL);
	/* a string filling its array without a terminator */
	memset(name129, 'a', sizeof(name129));
	REFUSED(memcpy(m.u.facts.resource, name129, sizeof(m.u.facts.resource)), -EINVAL);
	REFUSED(m = *sample_of(ARBMSG_SB_VERDICT); m.u.sb_verdict.id++, -EINVAL);
	REFUSED(m = *sample_of(ARBMSG_SB_VERDICT); m.u.sb_verdict.decider = 1, -EINVAL);
	REFUSED(m = *sample_of(ARBMSG_FENCED); m.u.fenced.how = ARBMSG_HOW_STONITH, -EINVAL);
	REFUSED(m = *sample_of(ARBMSG_OUTDATE_ACK); m.u.outdate_ack.result = 5, -EINVAL);
#undef REFUSED
	/* an unknown type is refused before the room is looked at */
	m.type = 0;
	assert_int_equal(arbmsg_encode(&m, buf, 1, &len), -EINVAL);
	assert_int_equal(len, 1234);
	/* major, minor and clamped of m are not sent: this version is */
	m = *sample_of(ARBMSG_GONE);
	m.major = 9;
	m.minor = 3;
	m.clamped = true;
	assert_int_equal(arbmsg_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(buf[4], 1);
	assert_int_equal(buf[5], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_golden_facts),
		cmocka_unit_test(test_golden_hello_verdict),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_encode_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
