/*
 * wire-pkt: decode, validate and encode replication packets from the
 * rows of the packet table (wire.c, doc/wire-protocol.md §3, §7).
 *
 * The decoder checks the payload length against the row before reading
 * a byte, then every field in wire order, then the variable tail and the
 * row's cross-field check. The encoder writes the same fields and runs
 * the decoder over its own output, so it never produces a packet the
 * peer would refuse. Data, digests and bitmap words are referenced in the
 * caller's buffer, never copied.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "memfield.h"
#include "wire-int.h"
#include "wire.h"

static uint64_t get_be(const uint8_t *p, unsigned int width)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < width; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, unsigned int width, uint64_t v)
{
	unsigned int i;

	for (i = width; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---------------------------------------------------------------- fields */

static int check_num(const struct wire_row *r, const struct wire_field *f, uint64_t v,
		     struct why *w)
{
	int64_t s;

	switch (f->kind) {
	case FK_NUM:
	case FK_DLEN:
		if (v < f->a || v > f->b)
			return wire_fail(w, -EBADMSG,
					 "%s: %s %" PRIu64 " out of range %" PRIu64 "..%" PRIu64,
					 r->name, f->name, v, f->a, f->b);
		if (f->align && v % f->align)
			return wire_fail(w, -EBADMSG, "%s: %s %" PRIu64 " is not a multiple of %u",
					 r->name, f->name, v, f->align);
		return 0;
	case FK_SNUM:
		s = (int32_t)(uint32_t)v;
		if (s < (int64_t)f->a || s > (int64_t)f->b)
			return wire_fail(w, -EBADMSG,
					 "%s: %s %" PRId64 " out of range %" PRId64 "..%" PRId64,
					 r->name, f->name, s, (int64_t)f->a, (int64_t)f->b);
		return 0;
	case FK_SET:
		if (v >= 64 || !(f->a & (1ULL << v)))
			return wire_fail(w, -EBADMSG, "%s: %s %" PRIu64 " is not a valid value",
					 r->name, f->name, v);
		return 0;
	default: /* FK_FLAGS */
		if (v & ~f->a)
			return wire_fail(w, -EBADMSG,
					 "%s: %s 0x%" PRIx64 " has unknown bits 0x%" PRIx64,
					 r->name, f->name, v, v & ~f->a);
		return 0;
	}
}

/* str[width]: printable, no space, then zero padding; at least f->a long. */
static int decode_str(const struct wire_row *r, const struct wire_field *f, const uint8_t *p,
		      char *out, struct why *w)
{
	unsigned int k, i;

	for (k = 0; k < f->width && p[k]; k++)
		if (p[k] < 0x21 || p[k] > 0x7e)
			return wire_fail(w, -EBADMSG, "%s: %s: byte 0x%02x at %u is not printable",
					 r->name, f->name, p[k], k);
	for (i = k; i < f->width; i++)
		if (p[i])
			return wire_fail(w, -EBADMSG, "%s: %s: byte 0x%02x at %u after the end",
					 r->name, f->name, p[i], i);
	if (k < f->a)
		return wire_fail(w, -EBADMSG, "%s: %s is empty", r->name, f->name);
	memcpy(out, p, k);
	out[k] = '\0';
	return 0;
}

static int decode_fields(const struct wire_row *r, const uint8_t *p, struct wire_pkt *pkt,
			 struct why *w)
{
	uint8_t *base = (uint8_t *)&pkt->u;
	const struct wire_field *f;
	uint32_t pos = 0, i;
	size_t j;
	uint64_t v;
	int rc;

	for (j = 0; j < r->n_fields; pos += f->width, j++) {
		f = &r->fields[j];
		switch (f->kind) {
		case FK_STR:
			rc = decode_str(r, f, p + pos, (char *)base + f->off, w);
			if (rc)
				return rc;
			break;
		case FK_BYTES:
			memcpy(base + f->off, p + pos, f->width);
			break;
		case FK_ZERO:
			for (i = 0; i < f->width; i++)
				if (p[pos + i])
					return wire_fail(w, -EBADMSG,
							 "%s: reserved byte at offset %u is 0x%02x",
							 r->name, pos + i, p[pos + i]);
			break;
		default:
			v = get_be(p + pos, f->width);
			rc = check_num(r, f, v, w);
			if (rc)
				return rc;
			if (f->kind == FK_DLEN)
				pkt->digest_len = (uint32_t)v;
			else
				memfield_store(base + f->off, f->width, v);
			break;
		}
	}
	return 0;
}

static int encode_fields(const struct wire_row *r, const struct wire_pkt *pkt, uint8_t *p)
{
	const uint8_t *base = (const uint8_t *)&pkt->u;
	const struct wire_field *f;
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
		case FK_BYTES:
			memcpy(p + pos, base + f->off, f->width);
			break;
		case FK_ZERO:
			memset(p + pos, 0, f->width);
			break;
		case FK_DLEN:
			p[pos] = (uint8_t)pkt->digest_len;
			break;
		default:
			put_be(p + pos, f->width, memfield_load(base + f->off, f->width));
			break;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- decoding */

static int unknown(const struct wire_hdr *hdr, struct why *w)
{
	if (hdr->flags & WIRE_HF_IGNORABLE)
		return wire_fail(w, -ENOMSG, "unknown packet type %u (ignorable), skipped",
				 hdr->type);
	return wire_fail(w, -EPROTO, "unknown packet type %u", hdr->type);
}

/* Volume scope and payload length: the checks both entry points make. */
static int check_envelope(const struct wire_row *r, const struct wire_hdr *hdr, struct why *w)
{
	if (r->scope == SCOPE_CONN && hdr->volume != WIRE_VOL_NONE)
		return wire_fail(w, -EPROTO, "%s: volume %u on a connection-wide packet", r->name,
				 hdr->volume);
	if (r->scope == SCOPE_VOL && hdr->volume == WIRE_VOL_NONE)
		return wire_fail(w, -EPROTO, "%s: no volume number", r->name);
	if (hdr->len < r->min || hdr->len > r->max) {
		int err = hdr->len > r->max ? -E2BIG : -EBADMSG;

		if (r->min == r->max)
			return wire_fail(w, err, "%s: payload %u bytes, expected %u", r->name,
					 hdr->len, r->min);
		return wire_fail(w, err, "%s: payload %u bytes, expected %u..%u", r->name, hdr->len,
				 r->min, r->max);
	}
	return 0;
}

int wire_pkt_check(const struct wire_hdr *hdr, enum wire_stream stream, uint64_t features,
		   char *reason, size_t n)
{
	const struct wire_row *r = wire_row_of(hdr->type);
	struct why w = {reason, n};

	if (!r)
		return unknown(hdr, &w);
	if (r->feature && !(features & r->feature)) {
		if (hdr->flags & WIRE_HF_IGNORABLE)
			return wire_fail(&w, -ENOMSG,
					 "%s: feature %s not agreed (ignorable), skipped", r->name,
					 wire_feature_name(r->feature));
		return wire_fail(&w, -EPROTO, "%s: feature %s was not agreed", r->name,
				 wire_feature_name(r->feature));
	}
	if (r->stream && r->stream != stream)
		return wire_fail(&w, -EPROTO, "%s on the %s stream, belongs on %s", r->name,
				 wire_stream_name(stream), wire_stream_name(r->stream));
	return check_envelope(r, hdr, &w);
}

/*
 * avail: bytes present at p; less than hdr->len only when the encoder
 * validates a head without its data (the data pointer is then NULL).
 */
static int decode(const struct wire_row *r, const struct wire_hdr *hdr, const uint8_t *p,
		  uint32_t avail, struct wire_pkt *pkt, struct why *w)
{
	uint32_t rest;
	int rc;

	memset(pkt, 0, sizeof(*pkt));
	pkt->type = hdr->type;
	pkt->volume = hdr->volume;
	pkt->hflags = hdr->flags;
	rc = check_envelope(r, hdr, w);
	if (rc)
		return rc;
	rc = decode_fields(r, p, pkt, w);
	if (rc)
		return rc;
	rest = hdr->len - r->fixed;
	p += r->fixed;
	switch (r->tail) {
	case TAIL_DATA:
		if (rest < pkt->digest_len)
			return wire_fail(w, -EBADMSG, "%s: digest_len %u is beyond the payload",
					 r->name, pkt->digest_len);
		if (rest - pkt->digest_len < 512 || (rest - pkt->digest_len) % 512)
			return wire_fail(w, -EBADMSG,
					 "%s: %u bytes of data, expected a multiple of "
					 "512 from 512",
					 r->name, rest - pkt->digest_len);
		if (rest - pkt->digest_len > WIRE_MAX_DATA)
			return wire_fail(w, -E2BIG, "%s: %u bytes of data, above %u", r->name,
					 rest - pkt->digest_len, WIRE_MAX_DATA);
		if (pkt->digest_len)
			pkt->digest = p;
		pkt->data_len = rest - pkt->digest_len;
		if (avail == hdr->len)
			pkt->data = p + pkt->digest_len;
		break;
	case TAIL_DIGEST:
		pkt->digest = p;
		pkt->digest_len = rest;
		break;
	case TAIL_CHUNK:
		pkt->data = p;
		pkt->data_len = rest;
		break;
	default:
		break;
	}
	return r->check ? r->check(r, pkt, w) : 0;
}

int wire_pkt_decode(const struct wire_hdr *hdr, const void *payload, size_t len,
		    struct wire_pkt *pkt, char *reason, size_t n)
{
	const struct wire_row *r = wire_row_of(hdr->type);
	struct why w = {reason, n};

	if (len != hdr->len)
		return wire_fail(&w, -EBADMSG, "%s: %zu bytes of payload, the header says %u",
				 wire_type_name(hdr->type), len, hdr->len);
	if (!r)
		return unknown(hdr, &w);
	return decode(r, hdr, payload, hdr->len, pkt, &w);
}

/* ---------------------------------------------------------------- encoding */

/* Bytes after the fields, or -EINVAL if the tail members do not fit the type. */
static int64_t tail_len(const struct wire_row *r, const struct wire_pkt *pkt)
{
	bool digest = r->tail == TAIL_DATA || r->tail == TAIL_DIGEST;
	bool data = r->tail == TAIL_DATA || r->tail == TAIL_CHUNK;

	if ((!digest && pkt->digest_len) || (!data && pkt->data_len) ||
	    pkt->digest_len > WIRE_MAX_DIGEST || (pkt->digest_len && !pkt->digest))
		return -EINVAL;
	return (int64_t)pkt->digest_len + pkt->data_len;
}

uint32_t wire_pkt_len(const struct wire_pkt *pkt)
{
	const struct wire_row *r = wire_row_of(pkt->type);
	int64_t t;

	if (!r || (t = tail_len(r, pkt)) < 0 || r->fixed + t > UINT32_MAX)
		return 0;
	return (uint32_t)(r->fixed + t);
}

static int encode(const struct wire_pkt *pkt, void *buf, size_t cap, bool head_only)
{
	const struct wire_row *r = wire_row_of(pkt->type);
	struct wire_hdr hdr;
	struct wire_pkt check;
	uint8_t *p = buf;
	uint32_t skip = 0;
	int64_t t;
	int rc;

	if (!r || (pkt->hflags & ~WIRE_HF_ALL) || (t = tail_len(r, pkt)) < 0)
		return -EINVAL;
	if (r->fixed + t < r->min || r->fixed + t > r->max)
		return -EINVAL;
	if (r->tail == TAIL_DATA && head_only)
		skip = pkt->data_len;
	else if (pkt->data_len && !pkt->data)
		return -EINVAL;
	hdr = (struct wire_hdr){pkt->type, pkt->volume, (uint32_t)(r->fixed + t), pkt->hflags};
	if (WIRE_HDR_SIZE + hdr.len - skip > cap)
		return -ENOSPC;
	wire_hdr_encode(&hdr, p);
	p += WIRE_HDR_SIZE;
	rc = encode_fields(r, pkt, p);
	if (rc)
		return rc;
	if (pkt->digest_len)
		memcpy(p + r->fixed, pkt->digest, pkt->digest_len);
	if (pkt->data_len > skip)
		memcpy(p + r->fixed + pkt->digest_len, pkt->data, pkt->data_len);
	if (decode(r, &hdr, p, hdr.len - skip, &check, NULL))
		return -EINVAL;
	return (int)(WIRE_HDR_SIZE + hdr.len - skip);
}

int wire_pkt_encode(const struct wire_pkt *pkt, void *buf, size_t cap)
{
	return encode(pkt, buf, cap, false);
}

int wire_pkt_encode_head(const struct wire_pkt *pkt, void *buf, size_t cap)
{
	return encode(pkt, buf, cap, true);
}
