/*
 * bmx: bitmap exchange. At connect time, after the sync handshake, each
 * node sends its quick-sync bitmap to the peer, which ORs it into its own
 * (ref/drbd-semantics.md 5.2 step 10), so that both resync the union of
 * the blocks either side changed. The sender cuts the bitmap into chunks
 * of at most a given size; each chunk is either plain (64-bit words) or
 * run-length encoded, whichever is denser for that chunk, the way DRBD
 * chooses between P_BITMAP and P_COMPRESSED_BITMAP (net { use-rle; }).
 *
 * Chunk payloads (the kind travels beside them, e.g. as the packet type):
 *
 *   BMX_PLAIN  u64 LE word offset, then 1 or more u64 LE bitmap words
 *              (bit n of the bitmap is bit n % 64 of word n / 64, the
 *              on-disk word layout of bitmap.h). The word offset must be
 *              the word that holds the receiver's cursor; the bits of that
 *              word below the cursor are sent again (OR makes it harmless).
 *              Bits at or beyond the end of the bitmap must be zero.
 *   BMX_RLE    one flags byte (bit 0: the first run is of set bits; the
 *              other bits are zero), then 1 or more run lengths, each an
 *              unsigned LEB128 VLI (7 bits per byte, least significant
 *              group first, high bit = more bytes follow; canonical: at
 *              most 10 bytes, no trailing zero groups, value < 2^64). Runs
 *              alternate between clear and set, start at the cursor, are
 *              at least 1 bit long and end at or before the end of the
 *              bitmap.
 *
 * Unlike DRBD, whose run lengths are a bit-level prefix code (2 bits for
 * a run of 1 or 2, up to 64 bits), the VLI here is byte-aligned: one byte
 * for runs below 128, two below 16384. That costs more for runs of 1..16
 * and 128..304 bits and less for the other lengths; noisy areas go plain
 * either way. It is our own wire format, not DRBD's.
 *
 * Each chunk covers the bits from the receiver's cursor (`pos`) on, so the
 * chunks must be applied in the order they were produced; the transfer is
 * complete when the cursor reaches the number of bits. Both sides must
 * have bitmaps of the same size.
 *
 * Errors: -EBADMSG for a malformed chunk (length, flags, truncated or
 * overlong VLI, zero-length run, unknown kind), -ERANGE for one that does
 * not fit the bitmap or the cursor (runs past the end, word offset other
 * than the cursor's, words past the end, bits set past the end, a chunk
 * after the end). bmx_dec_apply() validates the whole chunk before it
 * changes anything: a chunk that is rejected has changed neither the
 * bitmap nor the cursor.
 */
#ifndef TANDEM_BMX_H
#define TANDEM_BMX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bitmap;

enum bmx_kind {
	BMX_PLAIN = 1,
	BMX_RLE = 2,
};

#define BMX_PLAIN_HDR 8u  /* the word offset */
#define BMX_RLE_HDR 1u	  /* the flags byte */
#define BMX_RLE_SET 0x01u /* flags: the first run is of set bits */
#define BMX_VLI_MAX 10u	  /* bytes of the longest run length */
#define BMX_CHUNK_MIN 16u /* smallest chunk capacity the encoder takes */

/* Bytes and chunks of each kind, as DRBD logs them after the transfer. */
struct bmx_stats {
	uint64_t plain_bytes;
	uint64_t plain_chunks;
	uint64_t rle_bytes;
	uint64_t rle_chunks;
	uint64_t raw_bytes; /* the whole bitmap as words: ceil(bits / 64) * 8 */
};

/* ---- sender ---- */

struct bmx_enc;

/*
 * An encoder over bm, starting at bit 0. With use_rle false every chunk
 * is plain. bm must outlive the encoder and should not change while it is
 * in use (a change is sent only if it lies beyond the encoder's position).
 * -ENOMEM, or -EINVAL for a NULL bitmap.
 */
int bmx_enc_new(const struct bitmap *bm, bool use_rle, struct bmx_enc **out);
void bmx_enc_free(struct bmx_enc *enc);

/*
 * Write the next chunk into buf (cap bytes, at least BMX_CHUNK_MIN): sets
 * *len and *kind and returns 1; returns 0 once the whole bitmap has been
 * sent (an all-clear bitmap still takes one chunk), -EINVAL for a cap
 * below BMX_CHUNK_MIN. The encoder tries RLE first and keeps it when it
 * covers at least as many bits per byte as a plain chunk from the same
 * position would.
 */
int bmx_enc_next(struct bmx_enc *enc, void *buf, size_t cap, size_t *len, enum bmx_kind *kind);
bool bmx_enc_done(const struct bmx_enc *enc);
/* The first bit the next chunk covers (bitmap_bits() when done). */
uint64_t bmx_enc_pos(const struct bmx_enc *enc);
/* What has been produced so far. */
void bmx_enc_stats(const struct bmx_enc *enc, struct bmx_stats *st);

/* ---- receiver ---- */

/*
 * Validate the chunk (kind, buf, len) against dst and the cursor *pos
 * (0 for the first chunk), then OR its set bits into dst: bits the peer
 * has set become set, nothing is cleared. Advances *pos to the end of what
 * the chunk covers. 0, or -EBADMSG / -ERANGE (see above) with dst and *pos
 * unchanged; -EINVAL if *pos is beyond the end of dst.
 */
int bmx_dec_apply(struct bitmap *dst, uint64_t *pos, enum bmx_kind kind, const void *buf,
		  size_t len);

/* ---- statistics ---- */

/* Zero st for a bitmap of nbits bits (the receiver's counters). */
void bmx_stats_init(struct bmx_stats *st, uint64_t nbits);
/* Count one chunk of len bytes (the receiver, after a successful apply). */
void bmx_stats_add(struct bmx_stats *st, enum bmx_kind kind, size_t len);
/* Saving against sending the raw words, in tenths of a percent: 0 when
 * nothing was saved (DRBD does not log the line then). */
unsigned int bmx_stats_permille(const struct bmx_stats *st);
/*
 * DRBD's log line after "send bitmap stats [Bytes(packets)]: " (or
 * "receive ..."): "plain X(Y), RLE X(Y), total X; compression: P.P%".
 * snprintf semantics: returns the length the full text needs.
 */
int bmx_stats_format(const struct bmx_stats *st, char *buf, size_t size);

#endif
