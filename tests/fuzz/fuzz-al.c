/*
 * fuzz-al: libFuzzer target for the activity log's on-disk ring
 * (replicator/lib/al.c; doc/ondisk-format.pod, ACTIVITY LOG).
 *
 * Byte 0 picks the ring geometry (bits 0..2) and the mode (bit 7).
 *
 * Ring mode (bit 7 clear): the rest is the ring, 4096-byte blocks in
 * on-disk order; byte 1 says which blocks get their crc32c recomputed
 * (bit i: blocks i, i + 8, ...), so that fuzzed blocks get past the
 * checksum; byte 2 bit 0 fills the blocks the input does not reach with
 * "initialized" blocks instead of zeros. al_replay() must then:
 *  - return 0 and count as corrupt exactly the blocks whose magic or crc
 *    is wrong, as updates the other valid ones that are not "initialized";
 *  - be usable or give one of drbdmeta's two messages, by its rules;
 *  - give ascending, distinct extents;
 *  - when the writer can hold that many extents: written into a fresh ring
 *    by al.c's own writer (one al_begin_io() per extent, al_commit()),
 *    they replay to the same set.
 *
 * Writer mode (bit 7 set): bits 3..5 pick al-extents, bit 6 starts the
 * transaction numbers 16 before the 32-bit wrap; byte 1 the universe of
 * extents (bits 0..6: al-extents + 1 + N of them; bit 7: just below
 * AL_FREE). Then up to 128 operations of 3 bytes (OP, a 16-bit value V)
 * on an al whose blocks go into an initialised ring: OP & 15 is 0..9:
 * begin a write of 1 + (OP >> 4) extents from extent V mod universe;
 * 10, 11: complete write V mod n; 12: commit; 13: commit, the first block
 * write failing (EIO, nothing written); 14: the same, torn (its first
 * sector written); 15: complete all. At the end what is pending is committed.
 *  - each block is a sealed update of this al (context_size al-extents)
 *    at the ring position after the last one, with a newer tr_number;
 *  - al_begin_io() counts its hits and misses, -EINVAL comes only for a
 *    range that reaches AL_FREE, -EAGAIN changes nothing; a failed commit
 *    keeps what is pending;
 *  - after each commit every extent al.c calls hot is in the replay of
 *    the ring, and with nothing pending the replay is exactly the hot
 *    set; an extent that left the replay was flushed (flush_extent)
 *    during the commit.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "al.h"
#include "crc32c.h"
#include "md-layout.h"

#define MAX_OPS 128
#define MAX_IOS 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t geoms[8][2] = {
    {0, 0}, {1, 8}, {2, 4}, {4, 2}, {8, 1}, {3, 5}, {1, 16}, {2, 8},
};
static const uint32_t nrs[8] = {67, 128, 919, 920, 1237, 6433, 13785, 65534};

static const char msg_no_log[] = "No usable activity log found. Do you need to create-md?";
static const char msg_no_update[] = "No valid AL update transaction found.";

static void __attribute__((noreturn)) fail(const char *what, long v)
{
	fprintf(stderr, "fuzz-al: %s (%ld)\n", what, v);
	abort();
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* crc32c(0, block) with the crc field (bytes 8..11) read as zero. */
static uint32_t block_crc(const uint8_t *b)
{
	static const uint8_t zero[4];
	uint32_t crc = crc32c(0, b, 8);

	crc = crc32c(crc, zero, 4);
	return crc32c(crc, b + 12, AL_BLOCK_BYTES - 12);
}

static bool block_valid(const uint8_t *b)
{
	return get32(b) == AL_MAGIC && get32(b + 8) == block_crc(b);
}

static uint8_t *ring_alloc(uint32_t mx, bool init)
{
	uint8_t *ring = malloc((size_t)mx * AL_BLOCK_BYTES);
	uint32_t i;

	if (!ring)
		fail("malloc", mx);
	for (i = 0; i < mx; i++) {
		if (init)
			al_block_init(ring + (size_t)i * AL_BLOCK_BYTES);
		else
			memset(ring + (size_t)i * AL_BLOCK_BYTES, 0, AL_BLOCK_BYTES);
	}
	return ring;
}

static void replay(const uint8_t *ring, uint32_t mx, uint32_t stripes, uint32_t size,
		   struct al_replay *r)
{
	int rc = al_replay(ring, mx, stripes, size, r);
	uint32_t i;

	if (rc)
		fail("al_replay failed", rc);
	for (i = 1; i < r->n_extents; i++)
		if (r->extents[i - 1] >= r->extents[i])
			fail("replayed extents not ascending and distinct", i);
	for (i = 0; i < r->n_extents; i++)
		if (r->extents[i] == AL_FREE)
			fail("AL_FREE among the replayed extents", i);
	if (r->usable ? r->problem != NULL
		      : !r->problem ||
			    (strcmp(r->problem, msg_no_log) && strcmp(r->problem, msg_no_update)))
		fail("usable and problem disagree", r->usable);
}

static bool has(const struct al_replay *r, uint32_t e)
{
	uint32_t lo = 0, hi = r->n_extents;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->extents[mid] == e)
			return true;
		if (r->extents[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* ---------------------------------------------------------------- the writer */

enum fault { FAULT_NONE, FAULT_EIO, FAULT_TORN };

struct io {
	uint64_t sector;
	uint32_t nsect;
};

struct run {
	uint8_t *ring;
	uint32_t mx, stripes, size, nr;
	bool check;	      /* check every block (writer mode) */
	struct al_replay cur; /* the replay of ring as it is */
	uint32_t last_tr;     /* of the last block written whole */
	uint32_t next_pos;    /* the ring position (in transaction order) it wants */
	enum fault fault;     /* for the next block write */
	uint32_t *flushed;    /* nr entries */
	uint32_t n_flushed;   /* during this commit */
	uint32_t writes;      /* blocks written whole */
	bool touched;	      /* the ring changed during this commit */
};

static bool was_flushed(const struct run *w, uint32_t e)
{
	uint32_t i;

	for (i = 0; i < w->n_flushed; i++)
		if (w->flushed[i] == e)
			return true;
	return false;
}

static int flush_extent(void *ctx, uint32_t extent)
{
	struct run *w = ctx;

	if (!was_flushed(w, extent)) {
		if (w->n_flushed == w->nr)
			fail("more extents flushed than the log holds", w->n_flushed);
		w->flushed[w->n_flushed++] = extent;
	}
	return 0;
}

/* A block al.c wants written: check it, then apply the fault. */
static int write_block(void *ctx, uint32_t block, const void *buf)
{
	struct run *w = ctx;
	const uint8_t *b = buf;
	uint8_t *dst = w->ring + (size_t)block * AL_BLOCK_BYTES;
	enum fault f = w->fault;
	uint32_t tr = get32(b + 4);

	w->fault = FAULT_NONE;
	if (block >= w->mx || block != al_ring_block(tr, w->stripes, w->size))
		fail("block written outside its transaction's ring position", block);
	/* the ring is written in order: the next position, a newer number */
	if (w->check && (tr % w->mx != w->next_pos || (int32_t)(tr - w->last_tr) <= 0))
		fail("a transaction is not at the ring position after the last one", tr);
	if (w->check && (!block_valid(b) || get16(b + 12) != AL_TR_UPDATE ||
			 get16(b + 16) != w->nr || get16(b + 14) > AL_UPDATES_PER_TR))
		fail("a written block is not a sealed update of this al", block);
	if (f == FAULT_EIO)
		return -EIO;
	memcpy(dst, b, f == FAULT_TORN ? 512 : AL_BLOCK_BYTES);
	w->touched = true;
	if (f == FAULT_TORN)
		return -EIO;
	w->last_tr = tr;
	w->next_pos = (tr % w->mx + 1) % w->mx;
	w->writes++;
	return 0;
}

static const struct al_ops ops = {.write_block = write_block, .flush_extent = flush_extent};

/* The hot set of al, sorted (malloc'ed, *n entries). */
static uint32_t *hot_set(const struct al *al, uint32_t *n)
{
	uint32_t nr = al_nr_extents(al), *out = malloc((size_t)nr * sizeof(*out));

	if (!out)
		fail("malloc", nr);
	*n = al_active(al, out, nr);
	qsort(out, *n, sizeof(*out), cmp_u32);
	return out;
}

/* Every hot extent is in the log; with nothing pending, nothing else is. */
static void check_hot(const struct run *w, const struct al *al)
{
	uint32_t n, i, *hot = hot_set(al, &n);

	for (i = 0; i < n; i++)
		if (!has(&w->cur, hot[i]))
			fail("a hot extent is not in the log on disk", hot[i]);
	if (!al_pending(al) && n != w->cur.n_extents)
		fail("nothing pending, but the log holds extents that are not hot",
		     (long)w->cur.n_extents - n);
	free(hot);
}

/* Commit with a fault for the first block write; then replay the ring. */
static void commit(struct run *w, struct al *al, enum fault f)
{
	unsigned int pending = al_pending(al);
	uint32_t writes = w->writes, i;
	struct al_replay after;
	int rc;

	w->fault = f;
	w->n_flushed = 0;
	w->touched = false;
	rc = al_commit(al);
	if (f != FAULT_NONE && pending) {
		if (rc != -EIO)
			fail("a failed block write was not reported", rc);
		if (w->writes != writes || al_pending(al) != pending)
			fail("a failed transaction changed what is pending", al_pending(al));
	} else if (rc != 0 || al_pending(al)) {
		fail("commit failed or left changes pending", rc);
	}
	w->fault = FAULT_NONE;
	if (w->touched) {
		replay(w->ring, w->mx, w->stripes, w->size, &after);
		if (!after.usable)
			fail("the ring became unusable", (long)after.n_corrupt);
		for (i = 0; i < w->cur.n_extents; i++)
			if (!has(&after, w->cur.extents[i]) && !was_flushed(w, w->cur.extents[i]))
				fail("an extent left the log before its bitmap was flushed",
				     w->cur.extents[i]);
		al_replay_free(&w->cur);
		w->cur = after;
	}
	check_hot(w, al);
}

static void begin(struct al *al, struct io *ios, uint32_t *n_ios, uint64_t first, uint32_t n)
{
	uint64_t sector = first << AL_EXTENT_SHIFT_SECT;
	uint32_t nsect = n << AL_EXTENT_SHIFT_SECT;
	unsigned int pending = al_pending(al);
	struct al_stats s0, s1;
	int rc;

	if (*n_ios == MAX_IOS)
		return;
	/* start and end inside the extents, so that they are the range */
	sector += 5;
	nsect -= 9;
	al_get_stats(al, &s0);
	rc = al_begin_io(al, sector, nsect);
	al_get_stats(al, &s1);
	if (rc == -EINVAL) {
		if (first + n - 1 < AL_FREE)
			fail("-EINVAL for a valid range", (long)first);
	} else if (rc == -EAGAIN) {
		/* every change counts a hit, a miss or an eviction */
		if (al_pending(al) != pending || memcmp(&s0, &s1, sizeof(s0)))
			fail("-EAGAIN changed something", rc);
	} else if (rc < 0 || (uint32_t)rc > n || al_pending(al) != pending + (unsigned int)rc ||
		   s1.hits + s1.misses != s0.hits + s0.misses + n ||
		   s1.misses != s0.misses + (uint64_t)rc) {
		fail("al_begin_io: bad result", rc);
	} else {
		if (first + n - 1 >= AL_FREE)
			fail("a range reaching AL_FREE was accepted", (long)first);
		if (!al_pending(al) && !al_range_hot(al, sector, nsect))
			fail("nothing pending, but the range is not hot", rc);
		ios[(*n_ios)++] = (struct io){sector, nsect};
	}
}

static void writer(const uint8_t *data, size_t size)
{
	const uint32_t *g = geoms[data[0] & 7];
	uint32_t n_ios = 0, universe, k;
	uint64_t base = data[1] & 0x80 ? AL_FREE - 0x60 : 0;
	struct io ios[MAX_IOS];
	struct run w = {.check = true};
	struct al *al = NULL;
	size_t i;

	if (al_new(nrs[data[0] >> 3 & 7], g[0], g[1], &ops, &w, &al) < 0)
		fail("al_new", nrs[data[0] >> 3 & 7]);
	w.stripes = g[0];
	w.size = g[1];
	w.mx = al_ring_blocks(al);
	w.nr = al_nr_extents(al);
	w.ring = ring_alloc(w.mx, true);
	w.flushed = malloc((size_t)w.nr * sizeof(*w.flushed));
	if (!w.flushed)
		fail("malloc", w.nr);
	replay(w.ring, w.mx, w.stripes, w.size, &w.cur);
	w.last_tr = (data[0] & 0x40 ? 0xfffffff0u : 0) - 1;
	w.next_pos = (w.last_tr + 1) % w.mx;
	al_set_next_tr(al, w.last_tr + 1);
	universe = w.nr + (data[1] & 0x7f) + 1;

	for (i = 2; i + 3 <= size && i < 2 + 3 * MAX_OPS; i += 3) {
		uint8_t op = data[i];
		uint32_t v = (uint32_t)data[i + 1] << 8 | data[i + 2];

		switch (op & 15) {
		default:
			begin(al, ios, &n_ios, base + v % universe, 1 + (op >> 4));
			break;
		case 10:
		case 11:
			if (n_ios) {
				k = v % n_ios;
				al_complete_io(al, ios[k].sector, ios[k].nsect);
				ios[k] = ios[--n_ios];
			}
			break;
		case 12:
			commit(&w, al, FAULT_NONE);
			break;
		case 13:
			commit(&w, al, FAULT_EIO);
			break;
		case 14:
			commit(&w, al, FAULT_TORN);
			break;
		case 15:
			while (n_ios) {
				n_ios--;
				al_complete_io(al, ios[n_ios].sector, ios[n_ios].nsect);
			}
		}
	}
	commit(&w, al, FAULT_NONE);
	al_free(al);
	al_replay_free(&w.cur);
	free(w.flushed);
	free(w.ring);
}

/* ---------------------------------------------------------------- the ring */

/* r's extents, written into a fresh ring by al.c, must replay the same. */
static void check_rewrite(const struct al_replay *r, uint32_t stripes, uint32_t size, uint32_t mx)
{
	struct run w = {.stripes = stripes, .size = size, .mx = mx};
	struct al_replay again;
	struct al *al = NULL;
	uint32_t i;
	int rc;

	if (mx < 8 || r->n_extents > md_layout_al_extents_max(mx))
		return;
	if (al_new(r->n_extents, stripes, size, &ops, &w, &al) < 0)
		fail("al_new", r->n_extents);
	w.ring = ring_alloc(mx, true);
	al_set_next_tr(al, r->newest_tr + 1);
	for (i = 0; i < r->n_extents; i++) {
		rc = al_begin_io(al, (uint64_t)r->extents[i] << AL_EXTENT_SHIFT_SECT, 1);
		if (rc != 1)
			fail("a replayed extent could not be brought in", rc);
	}
	rc = al_commit(al);
	if (rc != 0 || al_pending(al))
		fail("al_commit of the replayed extents", rc);
	replay(w.ring, mx, stripes, size, &again);
	if (!again.usable || again.n_extents != r->n_extents ||
	    (r->n_extents && memcmp(again.extents, r->extents, r->n_extents * sizeof(*r->extents))))
		fail("the rewritten log replays to other extents", (long)again.n_extents);
	al_replay_free(&again);
	al_free(al);
	free(w.ring);
}

static void ring_mode(const uint8_t *data, size_t size)
{
	const uint32_t *g = geoms[data[0] & 7];
	uint32_t stripes = g[0] ? g[0] : 1, sz = g[1] ? g[1] : 8, mx = stripes * sz, i, pos;
	uint32_t n_valid = 0, n_updates = 0;
	size_t off = 3;
	struct al_replay r;
	uint8_t *ring;
	bool usable;

	if (size < 3)
		return;
	ring = ring_alloc(mx, data[2] & 1);
	for (i = 0; i < mx && off < size; i++, off += AL_BLOCK_BYTES) {
		uint8_t *b = ring + (size_t)i * AL_BLOCK_BYTES;
		size_t n = size - off < AL_BLOCK_BYTES ? size - off : AL_BLOCK_BYTES;

		memset(b, 0, AL_BLOCK_BYTES);
		memcpy(b, data + off, n);
		if (data[1] & (1u << (i % 8)))
			put32(b + 8, block_crc(b));
	}
	for (i = 0; i < mx; i++) {
		const uint8_t *b = ring + (size_t)i * AL_BLOCK_BYTES;

		if (block_valid(b)) {
			n_valid++;
			n_updates += get16(b + 12) != AL_TR_INITIALIZED;
		}
	}
	replay(ring, mx, g[0], g[1], &r);
	if (r.n_corrupt != mx - n_valid || r.n_updates != n_updates)
		fail("corrupt or update blocks miscounted", (long)r.n_corrupt);
	/* drbdmeta: no valid block; or no update, fine when at most the first
	 * position (ring block 0) is invalid */
	usable =
	    n_updates || (n_valid && (n_valid == mx || (n_valid == mx - 1 && !block_valid(ring))));
	if (r.usable != usable ||
	    (!usable && strcmp(r.problem, n_valid ? msg_no_update : msg_no_log)))
		fail("usable, or the message, is not drbdmeta's", r.usable);
	if (!n_updates && r.n_extents)
		fail("extents without an update transaction", (long)r.n_extents);
	if (n_updates) {
		for (i = 0, pos = mx; i < mx && pos == mx; i++) {
			const uint8_t *b = ring + (size_t)i * AL_BLOCK_BYTES;

			if (block_valid(b) && get16(b + 12) != AL_TR_INITIALIZED &&
			    get32(b + 4) == r.newest_tr)
				pos = i;
		}
		if (pos == mx)
			fail("newest_tr is no valid update's", r.newest_tr);
		check_rewrite(&r, g[0], g[1], mx);
	}
	al_replay_free(&r);
	free(ring);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	if (data[0] & 0x80)
		writer(data, size);
	else
		ring_mode(data, size);
	return 0;
}
