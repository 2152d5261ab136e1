/*
 * Unit tests for nbd-request and nbd-proto: a table of requests against
 * a few exports with the NBD error each must get (doc/nbd-frontend.md,
 * "Transmission"), header and reply encodings, names and the errno map.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nbd-proto.h"
#include "nbd-request.h"

#define MiB (1u << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define F_ALL                                                                                \
	(NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_TRIM |  \
	 NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_SEND_FAST_ZERO)

/* The exports the table refers to. */
enum { FULL, PLAIN, RO, SMALLMAX, HUGE, STRUCT, META };
static const struct nbd_export_limits limits[] = {
	/* everything advertised, 512-byte blocks, 32 MiB maximum */
	[FULL] = {64 * MiB, F_ALL, 512, 32 * MiB},
	/* nothing advertised, no block sizes */
	[PLAIN] = {MiB, NBD_FLAG_HAS_FLAGS, 0, 0},
	/* read-only with everything else but FAST_ZERO advertised */
	[RO] = {MiB, (F_ALL & ~NBD_FLAG_SEND_FAST_ZERO) | NBD_FLAG_READ_ONLY, 0, 0},
	/* 4 KiB blocks, 1 MiB maximum, no FUA */
	[SMALLMAX] = {64 * MiB, NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_TRIM |
			 NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_SEND_FAST_ZERO,
		      4096, MiB},
	/* as large as 64 bits allow, to test wrap-around */
	[HUGE] = {UINT64_MAX - 1, F_ALL, 1, 0},
	/* structured replies negotiated: the handshake added SEND_DF */
	[STRUCT] = {64 * MiB, F_ALL | NBD_FLAG_SEND_DF, 512, 32 * MiB, .structured = true},
	/* and base:allocation selected, CACHE advertised */
	[META] = {64 * MiB, F_ALL | NBD_FLAG_SEND_DF | NBD_FLAG_SEND_CACHE, 512, 32 * MiB,
		  .structured = true, .meta_alloc = 1},
};

struct req_case {
	const char *what;
	int export;
	uint16_t type, flags;
	uint64_t offset;
	uint32_t length;
	uint32_t error;
	const char *why; /* substring of *why, NULL for success */
};

static const struct req_case cases[] = {
	/* valid */
	{"read", FULL, NBD_CMD_READ, 0, 0, 4096, 0, NULL},
	{"read last block", FULL, NBD_CMD_READ, 0, 64 * MiB - 512, 512, 0, NULL},
	{"read whole max", FULL, NBD_CMD_READ, 0, 0, 32 * MiB, 0, NULL},
	{"read with FUA (ignored, allowed)", FULL, NBD_CMD_READ, NBD_CMD_FLAG_FUA, 0, 512, 0, NULL},
	{"write", FULL, NBD_CMD_WRITE, 0, 512, 4096, 0, NULL},
	{"write FUA", FULL, NBD_CMD_WRITE, NBD_CMD_FLAG_FUA, 0, 512, 0, NULL},
	{"write up to the end", FULL, NBD_CMD_WRITE, 0, 32 * MiB, 32 * MiB, 0, NULL},
	{"flush", FULL, NBD_CMD_FLUSH, 0, 0, 0, 0, NULL},
	{"flush FUA", FULL, NBD_CMD_FLUSH, NBD_CMD_FLAG_FUA, 0, 0, 0, NULL},
	{"trim", FULL, NBD_CMD_TRIM, 0, 0, 64 * MiB, 0, NULL},
	{"trim FUA", FULL, NBD_CMD_TRIM, NBD_CMD_FLAG_FUA, 512, 512, 0, NULL},
	{"write zeroes", FULL, NBD_CMD_WRITE_ZEROES, 0, 0, 32 * MiB, 0, NULL},
	{"write zeroes NO_HOLE|FUA", FULL, NBD_CMD_WRITE_ZEROES,
	 NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FUA, 0, 512, 0, NULL},
	{"write zeroes FAST_ZERO above max", FULL, NBD_CMD_WRITE_ZEROES, NBD_CMD_FLAG_FAST_ZERO, 0,
	 64 * MiB, 0, NULL},
	/* no payload, no maximum: clients send these (nbdcopy) */
	{"write zeroes above max", FULL, NBD_CMD_WRITE_ZEROES, 0, 0, 32 * MiB + 512, 0, NULL},
	{"write zeroes above small max", SMALLMAX, NBD_CMD_WRITE_ZEROES, 0, 0, 2 * MiB, 0, NULL},
	{"write zeroes 4 GiB - 1", HUGE, NBD_CMD_WRITE_ZEROES, NBD_CMD_FLAG_NO_HOLE, 0,
	 UINT32_MAX, 0, NULL},
	{"disc", FULL, NBD_CMD_DISC, 0, 0, 0, 0, NULL},
	{"read unaligned, no block sizes", PLAIN, NBD_CMD_READ, 0, 1, 3, 0, NULL},
	{"write 1 byte, no block sizes", PLAIN, NBD_CMD_WRITE, 0, MiB - 1, 1, 0, NULL},
	{"read 32 MiB, no maximum", HUGE, NBD_CMD_READ, 0, 12345, 32 * MiB, 0, NULL},
	{"trim 4 GiB - 1, no maximum", HUGE, NBD_CMD_TRIM, 0, 0, UINT32_MAX, 0, NULL},
	{"read near 2^64", HUGE, NBD_CMD_READ, 0, UINT64_MAX - 101, 100, 0, NULL},
	{"read on read-only", RO, NBD_CMD_READ, 0, 0, 512, 0, NULL},
	{"flush on read-only", RO, NBD_CMD_FLUSH, 0, 0, 0, 0, NULL},
	{"trim above max (no payload)", SMALLMAX, NBD_CMD_TRIM, 0, 0, 8 * MiB, 0, NULL},
	{"cache", META, NBD_CMD_CACHE, 0, 4096, 32 * MiB, 0, NULL},
	{"cache FUA (ignored, allowed)", META, NBD_CMD_CACHE, NBD_CMD_FLAG_FUA, 0, 512, 0, NULL},
	{"block status", META, NBD_CMD_BLOCK_STATUS, 0, 0, 64 * MiB, 0, NULL},
	{"block status REQ_ONE", META, NBD_CMD_BLOCK_STATUS, NBD_CMD_FLAG_REQ_ONE, 512, 512, 0,
	 NULL},
	{"block status REQ_ONE|FUA", META, NBD_CMD_BLOCK_STATUS,
	 NBD_CMD_FLAG_REQ_ONE | NBD_CMD_FLAG_FUA, 0, 512, 0, NULL},
	{"block status above max (no payload)", META, NBD_CMD_BLOCK_STATUS, 0, 0,
	 32 * MiB + 512, 0, NULL},

	/* unknown or not advertised commands */
	{"cache not advertised", FULL, NBD_CMD_CACHE, 0, 0, 512, NBD_EINVAL, "not advertised"},
	{"block status, no structured replies", FULL, NBD_CMD_BLOCK_STATUS, 0, 0, 512,
	 NBD_EINVAL, "no metadata context"},
	{"block status, no context selected", STRUCT, NBD_CMD_BLOCK_STATUS, 0, 0, 512,
	 NBD_EINVAL, "no metadata context"},
	{"block status, no context, bad flag", STRUCT, NBD_CMD_BLOCK_STATUS, NBD_CMD_FLAG_DF, 0,
	 512, NBD_EINVAL, "no metadata context"},
	{"resize", FULL, NBD_CMD_RESIZE, 0, 0, 0, NBD_EINVAL, "unknown"},
	{"command 9", FULL, 9, 0, 0, 512, NBD_EINVAL, "unknown"},
	{"command 0xffff", FULL, 0xffff, 0, 0, 512, NBD_EINVAL, "unknown"},
	{"flush not advertised", PLAIN, NBD_CMD_FLUSH, 0, 0, 0, NBD_EINVAL, "not advertised"},
	{"trim not advertised", PLAIN, NBD_CMD_TRIM, 0, 0, 512, NBD_EINVAL, "not advertised"},
	{"zeroes not advertised", PLAIN, NBD_CMD_WRITE_ZEROES, 0, 0, 512, NBD_EINVAL,
	 "not advertised"},

	/* flags */
	{"FUA not advertised", PLAIN, NBD_CMD_WRITE, NBD_CMD_FLAG_FUA, 0, 512, NBD_EINVAL,
	 "not advertised"},
	{"FUA not advertised on read", SMALLMAX, NBD_CMD_READ, NBD_CMD_FLAG_FUA, 0, 4096,
	 NBD_EINVAL, "not advertised"},
	{"NO_HOLE on write", FULL, NBD_CMD_WRITE, NBD_CMD_FLAG_NO_HOLE, 0, 512, NBD_EINVAL,
	 "not valid"},
	{"NO_HOLE on trim", FULL, NBD_CMD_TRIM, NBD_CMD_FLAG_NO_HOLE, 0, 512, NBD_EINVAL,
	 "not valid"},
	{"FAST_ZERO on write", FULL, NBD_CMD_WRITE, NBD_CMD_FLAG_FAST_ZERO, 0, 512, NBD_EINVAL,
	 "not valid"},
	{"FAST_ZERO not advertised", RO, NBD_CMD_WRITE_ZEROES, NBD_CMD_FLAG_FAST_ZERO, 0, 512,
	 NBD_EINVAL, "not advertised"},
	{"DF on read, no structured replies", FULL, NBD_CMD_READ, NBD_CMD_FLAG_DF, 0, 512,
	 NBD_EINVAL, "not advertised"},
	{"DF on read", STRUCT, NBD_CMD_READ, NBD_CMD_FLAG_DF, 0, 512, 0, NULL},
	{"DF|FUA on read", STRUCT, NBD_CMD_READ, NBD_CMD_FLAG_DF | NBD_CMD_FLAG_FUA, 0, 512, 0,
	 NULL},
	{"DF on write", STRUCT, NBD_CMD_WRITE, NBD_CMD_FLAG_DF, 0, 512, NBD_EINVAL, "not valid"},
	{"DF on trim", STRUCT, NBD_CMD_TRIM, NBD_CMD_FLAG_DF, 0, 512, NBD_EINVAL, "not valid"},
	{"REQ_ONE on read", FULL, NBD_CMD_READ, NBD_CMD_FLAG_REQ_ONE, 0, 512, NBD_EINVAL,
	 "not valid"},
	{"REQ_ONE on cache", META, NBD_CMD_CACHE, NBD_CMD_FLAG_REQ_ONE, 0, 512, NBD_EINVAL,
	 "not valid"},
	{"DF on block status", META, NBD_CMD_BLOCK_STATUS, NBD_CMD_FLAG_DF, 0, 512, NBD_EINVAL,
	 "not valid"},
	{"NO_HOLE on block status", META, NBD_CMD_BLOCK_STATUS, NBD_CMD_FLAG_NO_HOLE, 0, 512,
	 NBD_EINVAL, "not valid"},
	{"PAYLOAD_LEN on write", FULL, NBD_CMD_WRITE, NBD_CMD_FLAG_PAYLOAD_LEN, 0, 512,
	 NBD_EINVAL, "not valid"},
	{"unknown flag bit 6", FULL, NBD_CMD_READ, 1u << 6, 0, 512, NBD_EINVAL, "not valid"},
	{"unknown flag bit 15", FULL, NBD_CMD_WRITE, 1u << 15, 0, 512, NBD_EINVAL, "not valid"},
	{"NO_HOLE on flush", FULL, NBD_CMD_FLUSH, NBD_CMD_FLAG_NO_HOLE, 0, 0, NBD_EINVAL,
	 "not valid"},
	{"DF on disc", FULL, NBD_CMD_DISC, NBD_CMD_FLAG_DF, 0, 0, NBD_EINVAL, "not valid"},

	/* read-only */
	{"write on read-only", RO, NBD_CMD_WRITE, 0, 0, 512, NBD_EPERM, "read-only"},
	{"trim on read-only", RO, NBD_CMD_TRIM, 0, 0, 512, NBD_EPERM, "read-only"},
	{"zeroes on read-only", RO, NBD_CMD_WRITE_ZEROES, 0, 0, 512, NBD_EPERM, "read-only"},
	{"read-only wins over range", RO, NBD_CMD_WRITE, 0, 2 * MiB, 512, NBD_EPERM,
	 "read-only"},
	{"flags win over read-only", RO, NBD_CMD_WRITE, NBD_CMD_FLAG_DF, 0, 512, NBD_EINVAL,
	 "not valid"},

	/* FLUSH and DISC take no range */
	{"flush with offset", FULL, NBD_CMD_FLUSH, 0, 512, 0, NBD_EINVAL, "must be 0"},
	{"flush with length", FULL, NBD_CMD_FLUSH, 0, 0, 512, NBD_EINVAL, "must be 0"},
	{"disc with offset", FULL, NBD_CMD_DISC, 0, 1, 0, NBD_EINVAL, "must be 0"},
	{"disc with length", FULL, NBD_CMD_DISC, 0, 0, 1, NBD_EINVAL, "must be 0"},

	/* length 0 */
	{"read 0", FULL, NBD_CMD_READ, 0, 0, 0, NBD_EINVAL, "length is 0"},
	{"write 0", FULL, NBD_CMD_WRITE, 0, 0, 0, NBD_EINVAL, "length is 0"},
	{"trim 0", FULL, NBD_CMD_TRIM, 0, 0, 0, NBD_EINVAL, "length is 0"},
	{"zeroes 0", FULL, NBD_CMD_WRITE_ZEROES, 0, 0, 0, NBD_EINVAL, "length is 0"},
	{"cache 0", META, NBD_CMD_CACHE, 0, 0, 0, NBD_EINVAL, "length is 0"},
	{"block status 0", META, NBD_CMD_BLOCK_STATUS, 0, 0, 0, NBD_EINVAL, "length is 0"},
	{"write 0 beyond the end", FULL, NBD_CMD_WRITE, 0, UINT64_MAX, 0, NBD_EINVAL,
	 "length is 0"},

	/* maximum */
	{"read above max", FULL, NBD_CMD_READ, 0, 0, 32 * MiB + 512, NBD_EINVAL, "maximum"},
	{"write above max", FULL, NBD_CMD_WRITE, 0, 0, 32 * MiB + 512, NBD_EINVAL, "maximum"},
	{"read above default max", PLAIN, NBD_CMD_READ, 0, 0, 32 * MiB + 1, NBD_EINVAL,
	 "maximum"},
	{"write 4 GiB - 1, default max", HUGE, NBD_CMD_WRITE, 0, 0, UINT32_MAX, NBD_EINVAL,
	 "maximum"},
	{"cache above max", META, NBD_CMD_CACHE, 0, 0, 32 * MiB + 512, NBD_EINVAL, "maximum"},
	{"read above small max", SMALLMAX, NBD_CMD_READ, 0, 0, MiB + 4096, NBD_EINVAL, "maximum"},
	{"max wins over range", FULL, NBD_CMD_READ, 0, UINT64_MAX, 64 * MiB, NBD_EINVAL,
	 "maximum"},

	/* range */
	{"read past the end", FULL, NBD_CMD_READ, 0, 64 * MiB - 512, 1024, NBD_EINVAL, "beyond"},
	{"read at the end", FULL, NBD_CMD_READ, 0, 64 * MiB, 512, NBD_EINVAL, "beyond"},
	{"write past the end", FULL, NBD_CMD_WRITE, 0, 64 * MiB - 512, 1024, NBD_ENOSPC,
	 "beyond"},
	{"write far past the end", PLAIN, NBD_CMD_WRITE, 0, UINT64_MAX - 1, 1, NBD_ENOSPC,
	 "beyond"},
	{"zeroes past the end", FULL, NBD_CMD_WRITE_ZEROES, 0, 64 * MiB, 512, NBD_ENOSPC,
	 "beyond"},
	{"trim past the end", FULL, NBD_CMD_TRIM, 0, 512, 64 * MiB, NBD_EINVAL, "beyond"},
	{"cache past the end", META, NBD_CMD_CACHE, 0, 64 * MiB - 512, 1024, NBD_EINVAL,
	 "beyond"},
	{"block status past the end", META, NBD_CMD_BLOCK_STATUS, 0, 512, 64 * MiB, NBD_EINVAL,
	 "beyond"},
	{"block status 4 GiB - 1 past the end", META, NBD_CMD_BLOCK_STATUS, NBD_CMD_FLAG_REQ_ONE,
	 0, UINT32_MAX, NBD_EINVAL, "beyond"},
	{"read wrapping 2^64", HUGE, NBD_CMD_READ, 0, UINT64_MAX - 10, 100, NBD_EINVAL, "beyond"},
	{"write wrapping 2^64", HUGE, NBD_CMD_WRITE, 0, UINT64_MAX, 1, NBD_ENOSPC, "beyond"},
	{"trim wrapping 2^64", HUGE, NBD_CMD_TRIM, 0, UINT64_MAX - 1, UINT32_MAX, NBD_EINVAL,
	 "beyond"},
	{"range wins over alignment", FULL, NBD_CMD_WRITE, 0, 64 * MiB + 1, 3, NBD_ENOSPC,
	 "beyond"},

	/* alignment */
	{"read unaligned offset", FULL, NBD_CMD_READ, 0, 100, 512, NBD_EINVAL, "multiple"},
	{"read unaligned length", FULL, NBD_CMD_READ, 0, 0, 100, NBD_EINVAL, "multiple"},
	{"write unaligned", FULL, NBD_CMD_WRITE, 0, 256, 512, NBD_EINVAL, "multiple"},
	{"trim unaligned", FULL, NBD_CMD_TRIM, 0, 0, 513, NBD_EINVAL, "multiple"},
	{"zeroes unaligned to 4 KiB", SMALLMAX, NBD_CMD_WRITE_ZEROES, 0, 512, 4096, NBD_EINVAL,
	 "multiple"},
	{"block status unaligned", META, NBD_CMD_BLOCK_STATUS, 0, 100, 512, NBD_EINVAL,
	 "multiple"},
	{"cache unaligned", META, NBD_CMD_CACHE, 0, 0, 100, NBD_EINVAL, "multiple"},
	{"read aligned to 512 not 4 KiB", SMALLMAX, NBD_CMD_READ, 0, 4096, 512, NBD_EINVAL,
	 "multiple"},
};

static void test_validate_table(void **state)
{
	size_t i;
	int failures = 0;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct req_case *c = &cases[i];
		struct nbd_request req = {
			.flags = c->flags,
			.type = c->type,
			.cookie = 0x1122334455667788ULL + i,
			.offset = c->offset,
			.length = c->length,
		};
		const char *why = "unset";
		uint32_t err = nbd_request_validate(&req, &limits[c->export], &why);
		bool ok = err == c->error;

		if (c->why)
			ok = ok && why && strstr(why, c->why);
		else
			ok = ok && why == NULL;
		if (!ok) {
			print_error("case %zu \"%s\": got %s (%u) \"%s\", want %s (%u) \"%s\"\n", i,
				    c->what, nbd_proto_err_name(err), err, why ? why : "(null)",
				    nbd_proto_err_name(c->error), c->error,
				    c->why ? c->why : "(null)");
			failures++;
		}
		/* why may be NULL */
		assert_int_equal(nbd_request_validate(&req, &limits[c->export], NULL), err);
	}
	assert_int_equal(failures, 0);
}

static void test_decode_encode(void **state)
{
	static const uint8_t wire[NBD_REQUEST_SIZE] = {
		0x25, 0x60, 0x95, 0x13,                         /* magic */
		0x00, 0x03,                                     /* flags FUA|NO_HOLE */
		0x00, 0x06,                                     /* WRITE_ZEROES */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* cookie */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x02, 0x00, /* offset */
		0x00, 0x10, 0x00, 0x00,                         /* length */
	};
	struct nbd_request req;
	uint8_t again[NBD_REQUEST_SIZE];

	memset(&req, 0xa5, sizeof(req));
	assert_int_equal(nbd_request_decode(wire, &req), 0);
	assert_int_equal(req.flags, NBD_CMD_FLAG_FUA | NBD_CMD_FLAG_NO_HOLE);
	assert_int_equal(req.type, NBD_CMD_WRITE_ZEROES);
	assert_int_equal(req.cookie, 0x0102030405060708ULL);
	assert_int_equal(req.offset, 0x100000200ULL);
	assert_int_equal(req.length, 0x100000);
	nbd_request_encode(again, &req);
	assert_memory_equal(again, wire, sizeof(wire));
}

static void test_decode_bad_magic(void **state)
{
	uint8_t wire[NBD_REQUEST_SIZE] = {0};
	struct nbd_request req = {.type = 77};
	size_t i;

	assert_int_equal(nbd_request_decode(wire, &req), -EPROTO);
	assert_int_equal(req.type, 77); /* untouched */
	/* every single-bit error in the magic is caught */
	for (i = 0; i < 32; i++) {
		nbd_proto_put32(wire, NBD_REQUEST_MAGIC ^ (1u << i));
		assert_int_equal(nbd_request_decode(wire, &req), -EPROTO);
	}
	/* the old reply magic and the historic request magic are not requests */
	nbd_proto_put32(wire, NBD_SIMPLE_REPLY_MAGIC);
	assert_int_equal(nbd_request_decode(wire, &req), -EPROTO);
	nbd_proto_put32(wire, 0x12560953u);
	assert_int_equal(nbd_request_decode(wire, &req), -EPROTO);
}

static void test_reply(void **state)
{
	static const uint8_t want[NBD_REPLY_SIZE] = {
		0x67, 0x44, 0x66, 0x98, 0x00, 0x00, 0x00, 0x1c,
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x2a,
	};
	uint8_t buf[NBD_REPLY_SIZE + 1];

	buf[NBD_REPLY_SIZE] = 0x5a;
	nbd_request_encode_reply(buf, NBD_ENOSPC, 0xdeadbeef0000002aULL);
	assert_memory_equal(buf, want, NBD_REPLY_SIZE);
	assert_int_equal(buf[NBD_REPLY_SIZE], 0x5a); /* no overrun */
}

static void test_chunks(void **state)
{
	static const uint8_t read_want[28] = {
		0x66, 0x8e, 0x33, 0xef, /* structured reply magic */
		0x00, 0x01,             /* flags: DONE */
		0x00, 0x01,             /* NBD_REPLY_TYPE_OFFSET_DATA */
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x2a, /* cookie */
		0x00, 0x00, 0x10, 0x08, /* length: 8 + 4096 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x02, 0x00, /* offset */
	};
	static const uint8_t err_want[26] = {
		0x66, 0x8e, 0x33, 0xef, 0x00, 0x01,
		0x80, 0x01,             /* NBD_REPLY_TYPE_ERROR */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x0b, /* length: 6 + 5 */
		0x00, 0x00, 0x00, 0x16, /* NBD_EINVAL */
		0x00, 0x05,             /* message length */
	};
	uint8_t buf[33];

	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(nbd_request_encode_read_chunk(buf, 0xdeadbeef0000002aULL, 0x100000200ULL,
						       4096),
			 sizeof(read_want));
	assert_memory_equal(buf, read_want, sizeof(read_want));
	assert_int_equal(buf[sizeof(read_want)], 0x5a); /* no overrun */
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(nbd_request_encode_error_chunk(buf, NBD_EINVAL, 7, 5), sizeof(err_want));
	assert_memory_equal(buf, err_want, sizeof(err_want));
	assert_int_equal(buf[sizeof(err_want)], 0x5a);
	/* block status: context id, then the descriptors */
	{
		static const uint8_t bs_want[24 + 16] = {
			0x66, 0x8e, 0x33, 0xef, 0x00, 0x01,
			0x00, 0x05,             /* NBD_REPLY_TYPE_BLOCK_STATUS */
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,
			0x00, 0x00, 0x00, 0x14, /* length: 4 + 2 * 8 */
			0x00, 0x00, 0x00, 0x01, /* context id */
			0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1 MiB data */
			0xff, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x03, /* hole, zero */
		};
		static const struct nbd_extent ext[2] = {
			{MiB, 0},
			{0xfffff000u, NBD_STATE_HOLE | NBD_STATE_ZERO},
		};
		uint8_t bs[sizeof(bs_want) + 1];

		memset(bs, 0x5a, sizeof(bs));
		assert_int_equal(nbd_request_encode_block_status_chunk(bs, 9, 1, 2), 24);
		assert_int_equal(nbd_request_encode_extents(bs + 24, ext, 2), 16);
		assert_memory_equal(bs, bs_want, sizeof(bs_want));
		assert_int_equal(bs[sizeof(bs_want)], 0x5a);
		/* the most descriptors of one chunk */
		nbd_request_encode_block_status_chunk(bs, 0, 1, NBD_REQUEST_MAX_EXTENTS);
		assert_int_equal(nbd_proto_get32(bs + 16), 4 + 8 * NBD_REQUEST_MAX_EXTENTS);
	}
	/* the largest read of one chunk: 32 MiB + 8 bytes of payload */
	nbd_request_encode_read_chunk(buf, 0, 0, 32 * MiB);
	assert_int_equal(nbd_proto_get32(buf + 16), 32 * MiB + 8);
}

static void test_payload_and_drain(void **state)
{
	struct nbd_request w = {.type = NBD_CMD_WRITE, .length = 4096};
	struct nbd_request z = {.type = NBD_CMD_WRITE_ZEROES, .length = UINT32_MAX};
	struct nbd_request r = {.type = NBD_CMD_READ, .length = UINT32_MAX};

	assert_int_equal(nbd_request_payload(&w), 4096);
	assert_true(nbd_request_drainable(&w));
	w.length = NBD_REQUEST_MAX_PAYLOAD;
	assert_true(nbd_request_drainable(&w));
	w.length = NBD_REQUEST_MAX_PAYLOAD + 1;
	assert_false(nbd_request_drainable(&w));
	assert_int_equal(nbd_request_payload(&z), 0);
	assert_true(nbd_request_drainable(&z));
	assert_int_equal(nbd_request_payload(&r), 0);
	assert_true(nbd_request_drainable(&r));
}

static void test_errno_map(void **state)
{
	static const struct {
		int err;
		uint32_t wire;
	} map[] = {
		{0, NBD_SUCCESS},        {-EPERM, NBD_EPERM},       {-EACCES, NBD_EPERM},
		{-EROFS, NBD_EPERM},     {-EIO, NBD_EIO},           {-ENOMEM, NBD_ENOMEM},
		{-EINVAL, NBD_EINVAL},   {-ENOSPC, NBD_ENOSPC},     {-EDQUOT, NBD_ENOSPC},
		{-EFBIG, NBD_ENOSPC},    {-EOVERFLOW, NBD_EOVERFLOW}, {-ENOTSUP, NBD_ENOTSUP},
		{-EOPNOTSUPP, NBD_ENOTSUP}, {-ESHUTDOWN, NBD_ESHUTDOWN}, {-ETIMEDOUT, NBD_EIO},
		{-ENOTCONN, NBD_EIO},    {-EAGAIN, NBD_EIO},        {-12345, NBD_EIO},
		{INT32_MIN, NBD_EIO},    {EPERM, NBD_EPERM},        {ENOSPC, NBD_ENOSPC},
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(map); i++)
		if (nbd_proto_errno(map[i].err) != map[i].wire)
			fail_msg("nbd_proto_errno(%d) = %u, want %u", map[i].err,
				 nbd_proto_errno(map[i].err), map[i].wire);
}

static void test_names(void **state)
{
	char buf[128];

	assert_string_equal(nbd_proto_opt_name(NBD_OPT_GO), "NBD_OPT_GO");
	assert_string_equal(nbd_proto_opt_name(NBD_OPT_EXTENDED_HEADERS),
			    "NBD_OPT_EXTENDED_HEADERS");
	assert_string_equal(nbd_proto_opt_name(0), "unknown");
	assert_string_equal(nbd_proto_rep_name(NBD_REP_ERR_BLOCK_SIZE_REQD),
			    "NBD_REP_ERR_BLOCK_SIZE_REQD");
	assert_string_equal(nbd_proto_rep_name(NBD_REP_ACK), "NBD_REP_ACK");
	assert_string_equal(nbd_proto_rep_name(0x80000063u), "unknown");
	assert_string_equal(nbd_proto_info_name(NBD_INFO_BLOCK_SIZE), "NBD_INFO_BLOCK_SIZE");
	assert_string_equal(nbd_proto_cmd_name(NBD_CMD_WRITE_ZEROES), "NBD_CMD_WRITE_ZEROES");
	assert_string_equal(nbd_proto_cmd_name(99), "unknown");
	assert_string_equal(nbd_proto_err_name(NBD_ESHUTDOWN), "NBD_ESHUTDOWN");
	assert_string_equal(nbd_proto_err_name(0), "NBD_SUCCESS");

	assert_string_equal(nbd_proto_cmd_flags_str(0, buf, sizeof(buf)), "0");
	assert_string_equal(nbd_proto_cmd_flags_str(NBD_CMD_FLAG_FUA | NBD_CMD_FLAG_NO_HOLE, buf,
						    sizeof(buf)),
			    "FUA|NO_HOLE");
	assert_string_equal(nbd_proto_cmd_flags_str(NBD_CMD_FLAG_DF | 0x8000, buf, sizeof(buf)),
			    "DF|0x8000");
	assert_string_equal(nbd_proto_cmd_flags_str(0x4000, buf, sizeof(buf)), "0x4000");
	assert_string_equal(nbd_proto_eflags_str(NBD_FLAG_HAS_FLAGS | NBD_FLAG_CAN_MULTI_CONN, buf,
						 sizeof(buf)),
			    "HAS_FLAGS|CAN_MULTI_CONN");
	/* truncation keeps a terminated string */
	assert_string_equal(nbd_proto_eflags_str(0xffff, buf, 12), "HAS_FLAGS");
	assert_string_equal(nbd_proto_eflags_str(0xffff, buf, 4), "");
	assert_ptr_equal(nbd_proto_eflags_str(0xffff, buf, 0), buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_table),
		cmocka_unit_test(test_decode_encode),
		cmocka_unit_test(test_decode_bad_magic),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_payload_and_drain),
		cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
