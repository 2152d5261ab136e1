/*
 * fuzz-wire: libFuzzer target for the replication packet codec
 * (replicator/lib/wire.c, wire-pkt.c; doc/wire-protocol.md).
 *
 * The input is read as a stream of packets: a 16-byte header, then its
 * payload, until the input ends or a header is refused. Each payload is
 * decoded from an exactly sized copy (so that ASan sees any read past
 * it). Then:
 *  - every failure has a known error code and a one-line reason;
 *  - wire_pkt_check() and wire_pkt_decode() agree: a header that the
 *    check accepts on some stream is not refused by the decoder for its
 *    type, scope or length;
 *  - what decodes re-encodes to the same bytes, header included, needs
 *    exactly that much room (-ENOSPC with one byte less), and its head
 *    (wire_pkt_encode_head) is a prefix of it;
 *  - two decoded P_HELLO packets negotiate the same result both ways
 *    (unless one of them carries WIRE_HELLO_DUPLICATE), and an agreed
 *    version lies in both ranges.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void __attribute__((noreturn)) fail(const char *what, int rc, const char *why)
{
	fprintf(stderr, "fuzz-wire: %s (rc %d: %s)\n", what, rc, why ? why : "");
	abort();
}

static void check_reason(int rc, const char *why)
{
	size_t n = strnlen(why, WIRE_REASON_MAX);

	if (rc != -EPROTO && rc != -EBADMSG && rc != -E2BIG && rc != -ENOMSG)
		fail("unexpected error code", rc, why);
	if (n == 0 || n >= WIRE_REASON_MAX - 1 || strchr(why, '\n'))
		fail("reason empty, truncated or multi-line", rc, why);
}

/* The decoded packet must encode back to hdr_bytes + payload. */
static void check_reencode(const struct wire_pkt *pkt, const uint8_t *hdr_bytes,
			   const uint8_t *payload, uint32_t len)
{
	size_t total = WIRE_HDR_SIZE + (size_t)len;
	uint8_t *out = malloc(total);
	int n, h;

	if (!out)
		abort();
	if (wire_pkt_len(pkt) != len)
		fail("wire_pkt_len differs from the payload", (int)wire_pkt_len(pkt),
		     wire_type_name(pkt->type));
	n = wire_pkt_encode(pkt, out, total);
	if (n != (int)total)
		fail("a decoded packet does not encode", n, wire_type_name(pkt->type));
	if (memcmp(out, hdr_bytes, WIRE_HDR_SIZE) != 0 ||
	    memcmp(out + WIRE_HDR_SIZE, payload, len) != 0)
		fail("re-encoding changed the bytes", 0, wire_type_name(pkt->type));
	if (wire_pkt_encode(pkt, out, total - 1) != -ENOSPC)
		fail("encoding into one byte less than needed did not fail", 0,
		     wire_type_name(pkt->type));
	h = wire_pkt_encode_head(pkt, out, total);
	if (h < (int)WIRE_HDR_SIZE || h > (int)total)
		fail("wire_pkt_encode_head failed", h, wire_type_name(pkt->type));
	if (memcmp(out, hdr_bytes, WIRE_HDR_SIZE) != 0 ||
	    memcmp(out + WIRE_HDR_SIZE, payload, (size_t)h - WIRE_HDR_SIZE) != 0)
		fail("the head is not a prefix of the packet", h, wire_type_name(pkt->type));
	if (h != (int)total && (size_t)h + pkt->data_len != total)
		fail("head + data is not the packet", h, wire_type_name(pkt->type));
	free(out);
}

static void check_negotiation(const struct wire_hello *a, const struct wire_hello *b)
{
	char why[WIRE_REASON_MAX] = "";
	struct wire_agreed ab, ba;
	int r1 = wire_negotiate(a, b, &ab, why, sizeof(why));
	int r2 = wire_negotiate(b, a, &ba, NULL, 0);

	if (r1 && !why[0])
		fail("negotiation failed without a reason", r1, NULL);
	if ((a->flags | b->flags) & WIRE_HELLO_DUPLICATE)
		return;
	if (r1 != r2)
		fail("negotiation is not symmetric", r1, why);
	if (r1 == 0) {
		if (ab.proto != ba.proto || ab.features != ba.features || ab.auth != ba.auth)
			fail("the two sides agree on different things", 0, NULL);
		if (ab.proto < a->proto_min || ab.proto > a->proto_max ||
		    ab.proto < b->proto_min || ab.proto > b->proto_max)
			fail("agreed version outside a range", ab.proto, NULL);
		if (ab.features & ~(a->features & b->features))
			fail("agreed a feature one side lacks", 0, NULL);
	}
}

/* One packet: returns false when the stream cannot go on. */
static bool one(const uint8_t *p, size_t avail, size_t *used, struct wire_hello *hellos,
		unsigned int *n_hellos)
{
	char why[WIRE_REASON_MAX] = "";
	struct wire_hdr hdr;
	struct wire_pkt pkt;
	uint8_t *payload;
	bool any_stream_ok = false;
	int rc, s;

	if (avail < WIRE_HDR_SIZE)
		return false;
	rc = wire_hdr_decode(p, &hdr, why, sizeof(why));
	if (rc) {
		check_reason(rc, why);
		return false;
	}
	if (hdr.len > avail - WIRE_HDR_SIZE)
		return false;
	*used = WIRE_HDR_SIZE + hdr.len;

	for (s = WIRE_STREAM_DATA; s <= WIRE_STREAM_META; s++) {
		why[0] = '\0';
		rc = wire_pkt_check(&hdr, s, WIRE_F_ALL, why, sizeof(why));
		if (rc)
			check_reason(rc, why);
		else
			any_stream_ok = true;
	}

	payload = malloc(hdr.len ? hdr.len : 1);
	if (!payload)
		abort();
	memcpy(payload, p + WIRE_HDR_SIZE, hdr.len);
	why[0] = '\0';
	rc = wire_pkt_decode(&hdr, payload, hdr.len, &pkt, why, sizeof(why));
	if (rc) {
		check_reason(rc, why);
		if (any_stream_ok && rc != -EBADMSG)
			fail("decoder refused what the check accepted", rc, why);
	} else {
		if (!any_stream_ok)
			fail("decoder accepted what the check refused on every stream", 0,
			     wire_type_name(hdr.type));
		if (pkt.type != hdr.type || pkt.volume != hdr.volume || pkt.hflags != hdr.flags)
			fail("decoded header fields differ", 0, wire_type_name(hdr.type));
		check_reencode(&pkt, p, payload, hdr.len);
		if (pkt.type == WIRE_P_HELLO && *n_hellos < 4) {
			unsigned int i;

			for (i = 0; i < *n_hellos; i++)
				check_negotiation(&hellos[i], &pkt.u.hello);
			hellos[(*n_hellos)++] = pkt.u.hello;
		}
	}
	free(payload);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_hello hellos[4];
	unsigned int n_hellos = 0;
	size_t off = 0, used = 0;

	while (one(data + off, size - off, &used, hellos, &n_hellos))
		off += used;
	return 0;
}
