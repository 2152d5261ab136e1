/*
 * wire-int.h: what wire.c (the packet table, header, negotiation) and
 * wire-pkt.c (the table-driven decoder and encoder) share. Not for other
 * modules: they use wire.h.
 */
#ifndef TANDEM_WIRE_INT_H
#define TANDEM_WIRE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

enum wire_fkind {
	FK_NUM,	  /* unsigned, a..b, multiple of align */
	FK_SNUM,  /* signed 32 bits, (int64_t)a..(int64_t)b */
	FK_SET,	  /* value v < 64 with bit v of a set */
	FK_FLAGS, /* no bit outside a */
	FK_STR,	  /* str[width], at least a characters */
	FK_BYTES, /* width opaque bytes */
	FK_ZERO,  /* width reserved bytes */
	FK_DLEN,  /* u8 digest length, into wire_pkt.digest_len, 0..b */
};

struct wire_field {
	const char *name;
	uint8_t kind;
	uint8_t width; /* bytes on the wire */
	uint16_t off;  /* in wire_pkt.u */
	uint64_t a, b;
	uint32_t align;
};

/* What follows the fields. */
enum wire_tail {
	TAIL_NONE,
	TAIL_DATA,   /* digest (digest_len) then data: 512..WIRE_MAX_DATA, sectors */
	TAIL_DIGEST, /* the rest is a digest, 1..WIRE_MAX_DIGEST */
	TAIL_CHUNK,  /* the rest is a bmx.h chunk, min..max of the row */
};

enum wire_scope {
	SCOPE_CONN, /* volume must be WIRE_VOL_NONE */
	SCOPE_VOL,  /* volume must not be WIRE_VOL_NONE */
	SCOPE_ANY,
};

struct why {
	char *s;
	size_t n;
};

struct wire_row {
	uint16_t type;
	const char *name;
	uint8_t stream; /* enum wire_stream, 0: either */
	uint8_t scope;	/* enum wire_scope */
	uint32_t fixed; /* bytes of the fields */
	uint32_t min, max;
	uint64_t feature; /* WIRE_F_*, 0: always allowed */
	const struct wire_field *fields;
	size_t n_fields;
	uint8_t tail;
	int (*check)(const struct wire_row *r, const struct wire_pkt *pkt, struct why *w);
};

/* The row of a known type, else NULL. */
const struct wire_row *wire_row_of(uint16_t type);
/* Format the reason into w (if any) and return err. */
int wire_fail(struct why *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "TRIM" for WIRE_F_TRIM; "data", "meta" or "setup" (0). */
const char *wire_feature_name(uint64_t f);
const char *wire_stream_name(int s);

#endif
