/*
 * bdev: a backing or metadata device (block device or regular file):
 * size, full-length positioned I/O, flush, and fault-injection hooks for
 * tests (the production path only checks one NULL pointer).
 */
#ifndef TANDEM_BDEV_H
#define TANDEM_BDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bdev;

/* What a fault hook tells one write or read system call to do: transfer at
 * most `len` bytes, then fail with `err` (0 = go on). {len 0, err -EIO} is
 * an I/O error; {len 512, err 0} a short transfer that is retried; {len
 * 512, err -EIO} a torn write. */
struct bdev_fault {
	size_t len;
	int err;
};

struct bdev_faults {
	struct bdev_fault (*on_write)(void *ctx, uint64_t off, size_t len);
	struct bdev_fault (*on_read)(void *ctx, uint64_t off, size_t len);
	int (*on_flush)(void *ctx);  /* a flush, and the sync part of a sync write */
	int (*on_fsync)(void *ctx);  /* a flush only (bdev_flush); may be NULL */
	void *ctx;
};

int bdev_open(const char *path, bool writable, struct bdev **out);
void bdev_close(struct bdev *b);
const char *bdev_path(const struct bdev *b);
uint64_t bdev_size(const struct bdev *b); /* bytes */
bool bdev_is_blockdev(const struct bdev *b);
int bdev_fd(const struct bdev *b);
/* 0, or a negative errno; a read past the end is -ENODATA. */
int bdev_pread(struct bdev *b, void *buf, size_t len, uint64_t off);
int bdev_pwrite(struct bdev *b, const void *buf, size_t len, uint64_t off);
/* A write that is durable when it returns (RWF_DSYNC: syncs this range
 * only, not the other dirty data of the file, unlike bdev_flush()). */
int bdev_pwrite_sync(struct bdev *b, const void *buf, size_t len, uint64_t off);
int bdev_flush(struct bdev *b);
/* Zero a range (BLKZEROOUT / fallocate, else writes of zeros). */
int bdev_zero(struct bdev *b, uint64_t off, uint64_t len);
void bdev_set_faults(struct bdev *b, const struct bdev_faults *f);

#endif
