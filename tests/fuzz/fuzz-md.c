/*
 * fuzz-md: libFuzzer target for the v08 superblock and crash replay
 * (replicator/lib/md.c, md-layout.c, md-replay.c; doc/ondisk-format.pod,
 * LAYOUTS, SUPERBLOCK, Crash replay), on sparse in-memory files (memfd).
 *
 * Input: byte 0 picks the device (bits 0..2: internal, flexible or indexed
 * metadata of a few sizes) and the AL geometry (bits 3..5) for bit 6,
 * which fixes up the superblock's layout fields (geometry, md_size_sect,
 * al_offset, bm_offset, bm_bytes_per_bit 4096, la_size_sect modulo the
 * layout's maximum + 1), so that inputs get past them to the other
 * checks; bit 7 fills the ring blocks the input does not give with
 * "initialized" blocks instead of zeros. Byte 1: which AL blocks get their
 * crc32c recomputed (bit i: blocks i, i + 8, ...); byte 2: how many AL
 * blocks the input gives. Then 128 bytes of superblock (the rest of its
 * 4096 bytes zero), the AL blocks (4096 bytes each) and the bitmap.
 *
 *  - md_sb_decode/encode: the 96 bytes of fields encode back byte for
 *    byte, the rest as zeros, and decode to the same fields;
 *  - md_open() takes the geometry of a v08 superblock, else 1 x 8, and
 *    fails exactly when md_layout_compute() does; the layout keeps the
 *    superblock, AL and bitmap inside the metadata device and apart, the
 *    data apart from the metadata, and has the bitmap cover the largest
 *    data size;
 *  - md_load_sb() reads what was written and answers as md_sb_check():
 *    0, -ENOMSG (exactly for a magic other than v08's), -EUCLEAN (in use:
 *    clean magic and AL_CLEAN make it 0) or -EINVAL (they do not), with
 *    a one-line reason; 0 only when every field matches the layout;
 *  - md_replay() (after 0 or -EUCLEAN, as attach and apply-al do) follows
 *    drbdmeta: it refuses an unusable log of a Primary and writes nothing
 *    then; otherwise the AL is re-initialised unless it held no update;
 *    with PRIMARY_IND every active extent is set in the bitmap (bits past
 *    the device end left zero), newly_marked counts what changed and
 *    beyond_end what lay past the bitmap; AL_CLEAN and the clean magic are
 *    written when anything was missing; `wrote` is exactly whether a byte
 *    changed; then md_load_sb() gives 0 and a second replay writes nothing.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "al.h"
#include "crc32c.h"
#include "md-replay.h"
#include "md.h"

#define SB_IN 128
#define MIB (1ULL << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct dev {
	enum md_kind kind;
	int index;
	uint64_t md_bytes; /* the metadata device; for internal also the data */
	uint64_t data_bytes;
};

static const struct dev devs[8] = {
    {MD_INTERNAL, -1, MIB, MIB},
    {MD_INTERNAL, -1, 64 * MIB + 4608, 64 * MIB + 4608},
    {MD_INTERNAL, -1, 1024 * MIB, 1024 * MIB},
    {MD_INTERNAL, -1, 3072 * MIB + 3584, 3072 * MIB + 3584},
    {MD_FLEXIBLE, -1, 4 * MIB, 128 * MIB},    /* the data device limits */
    {MD_FLEXIBLE, -1, MIB, 200 * 1024 * MIB}, /* the bitmap area limits */
    {MD_INDEXED, 0, 128 * MIB, 1024 * MIB},
    {MD_INDEXED, 2, 385 * MIB, 64 * MIB},
};

static const uint32_t geoms[8][2] = {
    {0, 0}, {1, 8}, {2, 8}, {4, 4}, {3, 5}, {1, 32}, {8, 1}, {16, 2},
};

static int meta_fd = -1, data_fd = -1;

static void __attribute__((noreturn)) fail(const char *what, long v, const char *why)
{
	fprintf(stderr, "fuzz-md: %s (%ld: %s)\n", what, v, why ? why : "");
	abort();
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fail("malloc", (long)n, NULL);
	return p;
}

static void pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	if (pread(fd, buf, len, (off_t)off) != (ssize_t)len)
		fail("pread", (long)off, NULL);
}

static void pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	if (len && pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
		fail("pwrite", (long)off, NULL);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The AL checksum: crc32c(0, block) with its crc field read as zero. */
static void seal(uint8_t *b)
{
	static const uint8_t zero[4];
	uint32_t crc = crc32c(0, b, 8);

	crc = crc32c(crc, zero, 4);
	put32(b + 8, crc32c(crc, b + 12, AL_BLOCK_BYTES - 12));
}

/* The superblock's AL geometry, 0 x 0 meaning 1 x 8; false if invalid. */
static bool sb_geometry(const struct md_sb *sb, uint32_t *stripes, uint32_t *size)
{
	uint64_t blocks;

	*stripes = sb->al_stripes;
	*size = sb->al_stripe_size_4k;
	if (!*stripes && !*size) {
		*stripes = 1;
		*size = 8;
	}
	blocks = (uint64_t)*stripes * *size;
	return *stripes && *size && blocks >= 8 && blocks <= 8192;
}

static bool v08_magic(uint32_t magic)
{
	return magic == MD_MAGIC_CLEAN || magic == MD_MAGIC_INUSE;
}

/* ---------------------------------------------------------------- superblock */

static void check_codec(const uint8_t *block, struct md_sb *sb)
{
	uint8_t enc[MD_SB_BYTES];
	struct md_sb again;
	size_t i;

	md_sb_decode(block, sb);
	md_sb_encode(sb, enc);
	if (memcmp(enc, block, 96) != 0)
		fail("the superblock fields do not encode back", 0, NULL);
	for (i = 96; i < sizeof(enc); i++)
		if (enc[i])
			fail("the superblock's reserved bytes are not encoded as zero", (long)i,
			     NULL);
	md_sb_decode(enc, &again);
	if (memcmp(&again, sb, sizeof(again)) != 0)
		fail("the encoded superblock decodes to other fields", 0, NULL);
}

/* Where the layout puts things, against the devices it was computed for. */
static void check_layout(const struct md_layout *l, const struct dev *d, uint32_t stripes,
			 uint32_t size)
{
	uint64_t md_sect = d->md_bytes / 512, data_sect = d->data_bytes / 512;
	int64_t sb = (int64_t)l->sb_sect, al = sb + l->al_offset, bm = sb + l->bm_offset;
	int64_t bm_end = bm + (int64_t)l->bm_size_sect, al_end = al + (int64_t)l->al_size_sect;
	int64_t md_end;

	if (l->kind != d->kind || l->index != (d->kind == MD_INDEXED ? d->index : -1) ||
	    l->al_stripes != stripes || l->al_stripe_size_4k != size ||
	    l->al_size_sect != stripes * size * 8)
		fail("the layout has other parameters than asked for", l->al_size_sect, NULL);
	if (l->sb_sect % 8 || l->bm_offset % 8 || l->bm_size_sect % 8)
		fail("the layout is not 4 KiB aligned", (long)l->sb_sect, NULL);
	if (md_layout_bm_bytes(l->max_data_sect) > l->bm_size_sect * 512)
		fail("the bitmap area does not cover the largest data size", (long)l->max_data_sect,
		     NULL);
	if (d->kind == MD_INTERNAL) {
		/* bitmap, AL, superblock, in this order, at the end of the device */
		md_end = sb + MD_SB_SECT;
		if (l->sb_sect != (md_sect & ~7ULL) - MD_SB_SECT || bm_end > al || al_end != sb ||
		    (int64_t)l->max_data_sect > bm || (int64_t)l->md_size_sect != md_end - bm)
			fail("internal layout out of place", (long)l->sb_sect, NULL);
	} else {
		/* superblock, AL, bitmap, in this order, within md_size_sect */
		md_end = sb + l->md_size_sect;
		if (l->al_offset != MD_SB_SECT || bm < al_end || bm_end > md_end ||
		    (uint64_t)md_end > md_sect || l->max_data_sect > data_sect)
			fail("external layout out of place", (long)l->sb_sect, NULL);
		if (d->kind == MD_INDEXED && (l->sb_sect != (uint64_t)d->index * MD_INDEXED_SECT ||
					      l->md_size_sect != MD_INDEXED_SECT))
			fail("indexed layout not in its slot", (long)l->sb_sect, NULL);
	}
	if ((uint64_t)md_end > md_sect || l->max_data_sect > data_sect)
		fail("the layout does not fit the devices", (long)md_end, NULL);
}

static void check_reason(int rc, const char *err, size_t errlen)
{
	size_t n = strnlen(err, errlen);

	if (n == 0 || n >= errlen - 1 || strchr(err, '\n'))
		fail("reason empty, truncated or multi-line", rc, err);
}

/* What md_sb_check() said about sb, against what it must have said. */
static void check_verdict(const struct md_sb *sb, const struct md_layout *l, int rc,
			  const char *err)
{
	struct md_sb t = *sb;
	uint32_t stripes, size;
	char why[256];
	int rc2;

	if (rc != 0 && rc != -ENOMSG && rc != -EUCLEAN && rc != -EINVAL)
		fail("md_sb_check: unexpected error code", rc, err);
	if (rc)
		check_reason(rc, err, 256);
	if ((rc == -ENOMSG) != !v08_magic(sb->magic))
		fail("-ENOMSG is not exactly 'no v08 magic'", rc, err);
	if (rc == 0 &&
	    (sb->magic != MD_MAGIC_CLEAN || !(sb->flags & MDF_AL_CLEAN) ||
	     sb->bm_bytes_per_bit != MD_BM_BYTES_PER_BIT || !sb_geometry(sb, &stripes, &size) ||
	     stripes != l->al_stripes || size != l->al_stripe_size_4k ||
	     sb->md_size_sect != l->md_size_sect || sb->al_offset != l->al_offset ||
	     sb->bm_offset != l->bm_offset || sb->la_size_sect > l->max_data_sect ||
	     md_layout_bm_bytes(sb->la_size_sect) > l->bm_size_sect * 512))
		fail("md_sb_check accepted a superblock that does not match", 0, NULL);
	if (rc == 0) {
		t.magic = MD_MAGIC_INUSE;
		if (md_sb_check(&t, l, why, sizeof(why)) != -EUCLEAN)
			fail("in-use magic on a good superblock is not -EUCLEAN", 0, why);
		t.magic = MD_MAGIC_CLEAN;
		t.flags &= ~MDF_AL_CLEAN;
		if (md_sb_check(&t, l, why, sizeof(why)) != -EUCLEAN)
			fail("AL_CLEAN cleared on a good superblock is not -EUCLEAN", 0, why);
	}
	if (rc == -EUCLEAN || rc == -EINVAL) {
		t.magic = MD_MAGIC_CLEAN;
		t.flags |= MDF_AL_CLEAN;
		rc2 = md_sb_check(&t, l, why, sizeof(why));
		if (rc2 != (rc == -EUCLEAN ? 0 : -EINVAL) || (rc == -EINVAL && strcmp(why, err)))
			fail("-EUCLEAN and -EINVAL are not told apart by magic and AL_CLEAN", rc2,
			     why);
	}
}

/* ---------------------------------------------------------------- replay */

struct area {
	uint8_t sb[MD_SB_BYTES];
	uint8_t *ring;
	uint8_t *bm;
};

static void area_read(const struct md_layout *l, uint64_t bm_bytes, struct area *a)
{
	int64_t sb = (int64_t)l->sb_sect;

	a->ring = xmalloc((size_t)l->al_size_sect * 512);
	a->bm = xmalloc(bm_bytes);
	pread_all(meta_fd, a->sb, MD_SB_BYTES, l->sb_sect * 512);
	pread_all(meta_fd, a->ring, (size_t)l->al_size_sect * 512,
		  (uint64_t)(sb + l->al_offset) * 512);
	pread_all(meta_fd, a->bm, bm_bytes, (uint64_t)(sb + l->bm_offset) * 512);
}

static void area_free(struct area *a)
{
	free(a->ring);
	free(a->bm);
}

/* Bits of byte b that lie below bit `bits` (the device end). */
static uint8_t in_range(uint64_t b, uint64_t bits)
{
	if ((b + 1) * 8 <= bits)
		return 0xff;
	if (b * 8 >= bits)
		return 0;
	return (uint8_t)((1u << (bits - b * 8)) - 1);
}

/* The bitmap md_replay must leave; returns the newly set bits. */
static uint64_t expect_bitmap(const struct area *a, const struct al_replay *r, uint64_t bm_bytes,
			      uint64_t bits, uint8_t *want, uint32_t *beyond, uint32_t *first)
{
	uint64_t newly = 0, b;
	uint32_t i;

	memcpy(want, a->bm, bm_bytes);
	*beyond = 0;
	for (i = 0; i < r->n_extents; i++) {
		uint64_t off = (uint64_t)r->extents[i] * 128;

		if (off >= bm_bytes) {
			if (!(*beyond)++)
				*first = r->extents[i];
			continue;
		}
		for (b = off; b < off + 128 && b < bm_bytes; b++)
			want[b] |= in_range(b, bits);
	}
	for (b = 0; b < bm_bytes; b++) {
		newly += (uint64_t)__builtin_popcount((uint8_t)(want[b] & ~a->bm[b]));
		want[b] &= in_range(b, bits); /* written back: past the end zero */
	}
	return newly;
}

static void check_replay(struct md *m, const struct md_sb *sb, const struct md_layout *l)
{
	uint64_t bm_bytes = md_layout_bm_bytes(sb->la_size_sect), newly = 0;
	uint32_t mx = l->al_size_sect / 8, beyond = 0, first = 0, i;
	bool primary = sb->flags & MDF_PRIMARY_IND, mark, changed;
	struct md_sb s = *sb, want_sb = *sb, s2;
	struct md_replay_result res, res2;
	uint8_t init[AL_BLOCK_BYTES], enc[MD_SB_BYTES], *want_bm = xmalloc(bm_bytes);
	struct area before, after;
	struct al_replay r;
	char err[256];
	int rc;

	area_read(l, bm_bytes, &before);
	if (al_replay(before.ring, mx, l->al_stripes, l->al_stripe_size_4k, &r) < 0)
		fail("al_replay of the ring", mx, NULL);
	rc = md_replay(m, &s, &res);
	if (rc)
		fail("md_replay failed", rc, NULL);
	area_read(l, bm_bytes, &after);
	changed = memcmp(before.sb, after.sb, MD_SB_BYTES) ||
		  memcmp(before.ring, after.ring, (size_t)mx * AL_BLOCK_BYTES) ||
		  memcmp(before.bm, after.bm, bm_bytes);
	if (res.n_corrupt != r.n_corrupt || res.usable != r.usable ||
	    res.n_extents != r.n_extents ||
	    (!r.usable && (!res.problem || strcmp(res.problem, r.problem))))
		fail("md_replay and al_replay read the ring differently", res.n_extents, NULL);
	if (res.wrote != changed)
		fail("'wrote' is not whether the metadata changed", res.wrote, NULL);
	if (res.refused != (!r.usable && primary))
		fail("refused is not 'unusable log of a Primary'", res.refused, res.problem);
	if (res.refused) {
		if (changed || memcmp(&s, sb, sizeof(s)))
			fail("a refused replay changed something", 0, res.problem);
		goto out;
	}

	/* the ring */
	al_block_init(init);
	for (i = 0; i < mx && !(r.usable && !r.n_updates); i++)
		if (memcmp(after.ring + (size_t)i * AL_BLOCK_BYTES, init, AL_BLOCK_BYTES))
			fail("the AL was not re-initialised", i, NULL);
	if (r.usable && !r.n_updates &&
	    memcmp(before.ring, after.ring, (size_t)mx * AL_BLOCK_BYTES))
		fail("an AL without updates was rewritten", 0, NULL);

	/* the bitmap */
	mark = r.usable && r.n_extents && primary && bm_bytes;
	if (mark)
		newly = expect_bitmap(&before, &r, bm_bytes, md_layout_bm_bits(sb->la_size_sect),
				      want_bm, &beyond, &first);
	if (res.newly_marked != newly || res.beyond_end != beyond ||
	    (beyond && res.first_beyond != first))
		fail("newly_marked or beyond_end miscounted", (long)res.newly_marked,
		     primary ? "Primary" : "not Primary");
	if (memcmp(after.bm, newly ? want_bm : before.bm, bm_bytes))
		fail("the bitmap is not the old one with the active extents set", (long)newly,
		     NULL);

	/* the superblock */
	if (newly || !(sb->flags & MDF_AL_CLEAN) || sb->magic != MD_MAGIC_CLEAN) {
		want_sb.flags |= MDF_AL_CLEAN;
		want_sb.magic = MD_MAGIC_CLEAN;
		md_sb_encode(&want_sb, enc);
	} else {
		memcpy(enc, before.sb, MD_SB_BYTES);
	}
	if (memcmp(&s, &want_sb, sizeof(s)) || memcmp(after.sb, enc, MD_SB_BYTES))
		fail("the superblock was not marked clean as drbdmeta does", (long)s.flags, NULL);

	/* now it is clean, and a second replay has nothing to do */
	rc = md_load_sb(m, &s2, err, sizeof(err));
	if (rc)
		fail("the replayed metadata does not load", rc, err);
	rc = md_replay(m, &s2, &res2);
	if (rc || res2.refused || !res2.usable || res2.newly_marked || res2.wrote)
		fail("a second replay did something", rc, res2.problem);
out:
	al_replay_free(&r);
	area_free(&before);
	area_free(&after);
	free(want_bm);
}

/* ---------------------------------------------------------------- one input */

static void reset(int fd, uint64_t bytes)
{
	if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)bytes) < 0)
		fail("ftruncate", (long)bytes, NULL);
}

/* bit 6: make the layout fields match a layout of geometry g (of the
 * default one where the device cannot have g) */
static void fixup(uint8_t *block, const struct dev *d, const uint32_t *g)
{
	uint32_t stripes = g[0], size = g[1];
	uint8_t enc[MD_SB_BYTES];
	struct md_layout lg;
	struct md_sb sb;

	if (md_layout_compute(d->kind, d->index, d->md_bytes / 512, d->data_bytes / 512, stripes,
			      size, &lg) < 0) {
		stripes = size = 0;
		if (md_layout_compute(d->kind, d->index, d->md_bytes / 512, d->data_bytes / 512, 0,
				      0, &lg) < 0)
			return;
	}
	md_sb_decode(block, &sb);
	sb.al_stripes = stripes;
	sb.al_stripe_size_4k = size;
	sb.md_size_sect = lg.md_size_sect;
	sb.al_offset = lg.al_offset;
	sb.bm_offset = lg.bm_offset;
	sb.bm_bytes_per_bit = MD_BM_BYTES_PER_BIT;
	sb.la_size_sect %= lg.max_data_sect + 1;
	md_sb_encode(&sb, enc);
	memcpy(block, enc, 96);
}

/* The AL and bitmap of layout l from the input, written to the device. */
static void write_areas(const struct md_layout *l, const uint8_t *data, size_t size)
{
	uint32_t mx = l->al_size_sect / 8, n = data[2] < mx ? data[2] : mx, i;
	uint8_t *ring = xmalloc((size_t)mx * AL_BLOCK_BYTES);
	size_t off = 3 + SB_IN, len;
	int64_t sb = (int64_t)l->sb_sect;

	for (i = 0; i < mx; i++) {
		uint8_t *b = ring + (size_t)i * AL_BLOCK_BYTES;

		memset(b, 0, AL_BLOCK_BYTES);
		if (i < n && off < size) {
			len = size - off < AL_BLOCK_BYTES ? size - off : AL_BLOCK_BYTES;
			memcpy(b, data + off, len);
			off += len;
			if (data[1] & (1u << (i % 8)))
				seal(b);
		} else if (data[0] & 0x80) {
			al_block_init(b);
		}
	}
	pwrite_all(meta_fd, ring, (size_t)mx * AL_BLOCK_BYTES, (uint64_t)(sb + l->al_offset) * 512);
	free(ring);
	if (off < size) {
		len = size - off;
		if (len > l->bm_size_sect * 512)
			len = (size_t)(l->bm_size_sect * 512);
		pwrite_all(meta_fd, data + off, len, (uint64_t)(sb + l->bm_offset) * 512);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct dev *d;
	const uint32_t *g;
	char path_md[64], path_data[64], err[256], err2[256];
	struct md_open_opts o = {.writable = true};
	uint8_t block[MD_SB_BYTES] = {0};
	struct md_layout l0, lx;
	struct md_sb sb, back;
	uint32_t stripes = 0, sz = 0;
	struct md *m = NULL;
	int rc, rc2;

	if (size < 3)
		return 0;
	if (meta_fd < 0) {
		meta_fd = memfd_create("fuzz-md-meta", MFD_CLOEXEC);
		data_fd = memfd_create("fuzz-md-data", MFD_CLOEXEC);
		if (meta_fd < 0 || data_fd < 0)
			fail("memfd_create", -errno, NULL);
	}
	d = &devs[data[0] & 7];
	g = geoms[data[0] >> 3 & 7];
	reset(meta_fd, d->md_bytes);
	reset(data_fd, d->kind == MD_INTERNAL ? 0 : d->data_bytes);
	if (md_layout_compute(d->kind, d->index, d->md_bytes / 512, d->data_bytes / 512, 0, 0, &l0))
		fail("the default layout of a table device", data[0] & 7, NULL);
	check_layout(&l0, d, 1, 8);

	memcpy(block, data + 3, size - 3 < SB_IN ? size - 3 : SB_IN);
	if (data[0] & 0x40)
		fixup(block, d, g);
	check_codec(block, &sb);
	pwrite_all(meta_fd, block, sizeof(block), l0.sb_sect * 512);

	/* md_open: the superblock's geometry if it has v08 magic, else 1 x 8 */
	if (!v08_magic(sb.magic) || !sb_geometry(&sb, &stripes, &sz))
		stripes = sz = 0;
	rc2 = md_layout_compute(d->kind, d->index, d->md_bytes / 512, d->data_bytes / 512, stripes,
				sz, &lx);
	if (rc2 == 0) {
		check_layout(&lx, d, stripes ? stripes : 1, sz ? sz : 8);
		write_areas(&lx, data, size);
	}
	snprintf(path_md, sizeof(path_md), "/proc/self/fd/%d", meta_fd);
	snprintf(path_data, sizeof(path_data), "/proc/self/fd/%d", data_fd);
	o.kind = d->kind;
	o.index = d->index;
	o.data_path = d->kind == MD_INTERNAL ? path_md : path_data;
	o.md_path = d->kind == MD_INTERNAL ? NULL : path_md;
	err[0] = '\0';
	rc = md_open(&o, &m, err, sizeof(err));
	if (rc != rc2)
		fail("md_open and md_layout_compute disagree", rc, err);
	if (rc) {
		check_reason(rc, err, sizeof(err));
		return 0;
	}
	if (memcmp(md_layout(m), &lx, sizeof(lx)) || md_sb_offset(m) != lx.sb_sect * 512 ||
	    md_al_offset(m) != (uint64_t)((int64_t)lx.sb_sect + lx.al_offset) * 512 ||
	    md_bm_offset(m) != (uint64_t)((int64_t)lx.sb_sect + lx.bm_offset) * 512)
		fail("md_open chose another layout", 0, NULL);

	if (md_read_sb(m, &back) || memcmp(&back, &sb, sizeof(sb)))
		fail("md_read_sb does not give what was written", 0, NULL);
	err[0] = err2[0] = '\0';
	rc = md_load_sb(m, &back, err, sizeof(err));
	rc2 = md_sb_check(&sb, &lx, err2, sizeof(err2));
	if (rc != rc2 || strcmp(err, err2))
		fail("md_load_sb and md_sb_check disagree", rc, err);
	check_verdict(&sb, &lx, rc, err);
	if (rc == 0 || rc == -EUCLEAN)
		check_replay(m, &sb, &lx);
	md_close(m);
	return 0;
}
