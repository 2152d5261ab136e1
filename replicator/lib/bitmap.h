/*
 * bitmap: the quick-sync bitmap, one bit per 4 KiB block ("this block may
 * differ from the peer"), held in memory with per-page dirty tracking.
 *
 * A page is 4096 bytes of bitmap (32768 bits, 128 MiB of data), the unit
 * of write-back. The module does no I/O: pages are converted to and from
 * their on-disk form (64-bit little-endian words) and handed to a write
 * callback. The weight (number of set bits) is kept up to date by every
 * change, so nothing ever scans the bitmap per write (find_next_* walk
 * word by word: use them for resync, not per write). 1 TiB of data takes
 * 32 MiB of bitmap.
 *
 * Not thread-safe: the owner serializes the write path and write-back.
 * Page numbers out of range are ignored by the void functions (encode
 * writes zeros).
 */
#ifndef TANDEM_BITMAP_H
#define TANDEM_BITMAP_H

#include <stdbool.h>
#include <stdint.h>

#define BITMAP_PAGE_BYTES 4096u
#define BITMAP_PAGE_BITS  (BITMAP_PAGE_BYTES * 8u)

struct bitmap;

/* A bitmap of nbits bits, all clear and clean. -ENOMEM, or -EINVAL for 0. */
int bitmap_new(uint64_t nbits, struct bitmap **out);
void bitmap_free(struct bitmap *bm);

uint64_t bitmap_bits(const struct bitmap *bm);
uint64_t bitmap_pages(const struct bitmap *bm);
/* Number of set bits; O(1). */
uint64_t bitmap_weight(const struct bitmap *bm);

bool bitmap_test(const struct bitmap *bm, uint64_t bit);
/* Set/clear [first, first + count), clamped to the bitmap; mark the pages
 * that changed dirty; return how many bits changed. */
uint64_t bitmap_set_range(struct bitmap *bm, uint64_t first, uint64_t count);
uint64_t bitmap_clear_range(struct bitmap *bm, uint64_t first, uint64_t count);
uint64_t bitmap_set_all(struct bitmap *bm);
uint64_t bitmap_clear_all(struct bitmap *bm);
/* Number of set bits in [first, first + count). */
uint64_t bitmap_count_range(const struct bitmap *bm, uint64_t first, uint64_t count);
/* First set (clear) bit at or after `from`, or bitmap_bits() if none. */
uint64_t bitmap_find_next_set(const struct bitmap *bm, uint64_t from);
uint64_t bitmap_find_next_clear(const struct bitmap *bm, uint64_t from);

/* ---- persistence (page = 4096 bytes of on-disk bitmap) ---- */

bool bitmap_page_dirty(const struct bitmap *bm, uint64_t page);
uint64_t bitmap_dirty_pages(const struct bitmap *bm);
/* Mark a page dirty (e.g. to force it out) or clean. */
void bitmap_page_mark(struct bitmap *bm, uint64_t page, bool dirty);
/* On-disk form of a page: little-endian 64-bit words; bits at or beyond
 * bitmap_bits() are written as zero. */
void bitmap_page_encode(const struct bitmap *bm, uint64_t page, void *buf);
/* Load a page from its on-disk form; bits beyond bitmap_bits() are
 * ignored. The page becomes clean; the weight is updated. */
void bitmap_page_decode(struct bitmap *bm, uint64_t page, const void *buf);

/* Writes one page (already encoded) durably; 0 or a negative errno. */
typedef int (*bitmap_write_fn)(void *ctx, uint64_t page, const void *buf);

/* Write the dirty pages among [first_page, last_page], in page order. Each
 * page is marked clean before its write and dirty again if the write fails,
 * so a change made meanwhile is not lost. Stops at the first error (a
 * positive return of the callback counts as -EIO). Returns the number of
 * pages written, or a negative errno. */
int64_t bitmap_writeback(struct bitmap *bm, uint64_t first_page, uint64_t last_page,
			 bitmap_write_fn write, void *ctx);
/* Pages that hold the bits of [first, first + count); for count 0 an
 * empty range (first_page > last_page). */
void bitmap_bits_to_pages(uint64_t first, uint64_t count, uint64_t *first_page,
			  uint64_t *last_page);

#endif
