/*
 * fuzz-mddump: libFuzzer target for the dump-md text (replicator/lib/
 * md-dump.c; doc/ondisk-format.pod, APPENDIX: DRBDMETA OUTPUT FORMATS,
 * dump-md), which `tandemadm dump-md` writes and `restore-md` reads, as
 * drbdmeta's do.
 *
 * The input is a dump, parsed from an exactly sized copy. md_dump_parse()
 * either fails, with -EINVAL and "line N: ..." (N a line of the input) or
 * -ENOMEM and "out of memory ...", leaving the result empty, the same
 * without an error buffer; or gives the fields and bm_bytes(la-size-sect)
 * bytes of bitmap. What parses is written again with md_dump_write(), as
 * for internal metadata that starts right after la-size-sect, and:
 *  - that dump parses to the same fields and bitmap, and writing those
 *    gives the same text again (a fixed point); its "# bm-bytes" and
 *    "# bits-set" comments are bm_bytes and the bitmap's weight;
 *  - written for a device of half the size, it starts with drbdmeta's
 *    "la-size-sect was too big" line and parses to half the size and the
 *    first bm_bytes of the bitmap;
 *  - written as an unclean dump (--force on in-use metadata), it is
 *    refused, with the hint to run apply-al.
 * Allocations above MAX_ALLOC_MB fail here (__asan_default_options), so a
 * dump of a device above 1.25 TiB must fail with -ENOMEM; 1 TiB .. 1.25
 * TiB still has two of drbdmeta's 32 MiB windows. The dumps are not
 * written for large bitmaps whose text would exceed a few MB.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md-dump.h"

#define MAX_ALLOC_MB 40
#define STR(x) #x
#define XSTR(x) STR(x)
#define NOW 1796220997 /* as in test-md-dump.c */
#define SMALL_BM (1u << 20)
#define MAX_BUSY 65536 /* 32-byte groups of a large bitmap that print as more than a run */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=" XSTR(MAX_ALLOC_MB);
}

static void __attribute__((noreturn)) fail(const char *what, int rc, const char *text)
{
	fprintf(stderr, "fuzz-mddump: %s (rc %d)\n", what, rc);
	if (text)
		fprintf(stderr, "---- dump\n%.4000s\n", text);
	abort();
}

/* The dump md_dump_write() gives for d, the device clipped to la sectors. */
static char *write_dump(const struct md_dump *d, uint64_t la, bool unclean, size_t *len)
{
	struct md_dump_header h = {
	    .hostname = "fuzz", .command = "tandemadm dump-md r0", .now = NOW, .unclean = unclean};
	struct md_sb sb = d->sb;
	uint64_t bm_off = la * 512;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int rc;

	if (!f)
		fail("open_memstream", -ENOMEM, NULL);
	/* internal metadata (negative offsets) right after the data */
	sb.magic = MD_MAGIC_CLEAN;
	sb.md_size_sect = 8 + 64 + (uint32_t)((d->bm_bytes + 4095) / 512);
	sb.al_offset = -64;
	sb.bm_offset = -(int32_t)(sb.md_size_sect - 8);
	sb.al_nr_extents = 1237;
	rc = md_dump_write(f, &h, &sb, bm_off + d->bm_bytes + 32768, bm_off + d->bm_bytes, bm_off,
			   d->bm);
	if (fclose(f) != 0 || rc != 0 || !buf)
		fail("md_dump_write failed", rc, NULL);
	return buf;
}

static void parse_ok(const char *text, size_t len, struct md_dump *d)
{
	char err[256];
	int rc = md_dump_parse(text, len, d, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "fuzz-mddump: %s\n", err);
		fail("a written dump does not parse", rc, text);
	}
}

static bool same(const struct md_dump *a, const struct md_dump *b)
{
	return !memcmp(&a->sb, &b->sb, sizeof(a->sb)) && a->have_flags == b->have_flags &&
	       a->bm_bytes == b->bm_bytes && !memcmp(a->bm, b->bm, (size_t)a->bm_bytes);
}

static uint64_t comment(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	uint64_t v;

	if (!p || sscanf(p + strlen(key), " %" SCNu64 ";", &v) != 1)
		fail("a comment is missing from the dump", 0, text);
	return v;
}

static uint64_t weight(const uint8_t *bm, uint64_t n)
{
	uint64_t w = 0, i;

	for (i = 0; i < n; i++)
		w += (uint64_t)__builtin_popcount(bm[i]);
	return w;
}

/* Would the dump of bm be small? Count the 32-byte groups that do not
 * print as part of a run of the previous group's word. */
static bool small_text(const uint8_t *bm, uint64_t n)
{
	uint64_t g, busy = 0;

	if (n <= SMALL_BM)
		return true;
	for (g = 0; g < n / 32 && busy <= MAX_BUSY; g++) {
		const uint8_t *p = bm + 32 * g;
		bool uniform = !memcmp(p, p + 4, 28);

		busy += !uniform || (g && memcmp(p, p - 4, 4));
	}
	return busy <= MAX_BUSY;
}

static void check_failure(int rc, const char *err, const struct md_dump *d, const uint8_t *text,
			  size_t len)
{
	unsigned int line, lines = 1;
	struct md_dump d2;
	uint64_t bytes;
	size_t i;

	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (d->bm || d->bm_bytes || d->have_flags || d->sb.la_size_sect)
		fail("a failed parse left a result", rc, NULL);
	if (strnlen(err, 256) >= 255 || strchr(err, '\n') || sscanf(err, "line %u: ", &line) != 1 ||
	    line < 1 || line > lines)
		fail("the reason has no line of the input, or is truncated", rc, err);
	if (rc == -ENOMEM) {
		if (!strstr(err, "out of memory for a ") ||
		    sscanf(strstr(err, "for a ") + 6, "%" SCNu64, &bytes) != 1 ||
		    bytes <= (uint64_t)MAX_ALLOC_MB << 20)
			fail("-ENOMEM for a bitmap that fits", rc, err);
	} else if (rc != -EINVAL) {
		fail("unexpected error code", rc, err);
	}
	if (md_dump_parse((const char *)text, len, &d2, NULL, 0) != rc)
		fail("without an error buffer the result differs", rc, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "", want[128], *t1, *t2, *t3;
	struct md_dump d, d2, d3;
	size_t n1, n2, n3;
	uint64_t la, half;
	char *text = malloc(size ? size : 1);
	int rc;

	if (!text)
		fail("malloc", -ENOMEM, NULL);
	memcpy(text, data, size);
	rc = md_dump_parse(text, size, &d, err, sizeof(err));
	if (rc) {
		check_failure(rc, err, &d, data, size);
		free(text);
		return 0;
	}
	free(text);
	la = d.sb.la_size_sect;
	if (la > MD_MAX_FLEX_SECT || d.bm_bytes != md_layout_bm_bytes(la) || !d.have_flags ||
	    d.sb.bm_bytes_per_bit != MD_BM_BYTES_PER_BIT || (d.bm_bytes && !d.bm))
		fail("the parsed dump is inconsistent", 0, NULL);
	if (!small_text(d.bm, d.bm_bytes)) {
		md_dump_free(&d);
		return 0;
	}

	/* parse -> write -> parse -> write */
	t1 = write_dump(&d, la, false, &n1);
	if (comment(t1, "# bm-bytes") != d.bm_bytes ||
	    comment(t1, "# bits-set") != weight(d.bm, d.bm_bytes))
		fail("bm-bytes or bits-set is wrong", 0, t1);
	parse_ok(t1, n1, &d2);
	if (!same(&d, &d2))
		fail("the written dump parses to something else", 0, t1);
	t2 = write_dump(&d2, la, false, &n2);
	if (n1 != n2 || memcmp(t1, t2, n1))
		fail("writing the parsed dump again gives another text", 0, t2);

	/* a device half the size: clipped */
	if (la) {
		half = la / 2;
		t3 = write_dump(&d, half, false, &n3);
		snprintf(want, sizeof(want),
			 "# la-size-sect was too big (%" PRIu64 "), truncated (%" PRIu64 ")!\n", la,
			 half);
		if (strncmp(t3, want, strlen(want)))
			fail("a clipped dump does not say so first", 0, t3);
		parse_ok(t3, n3, &d3);
		d2.sb.la_size_sect = half;
		if (memcmp(&d3.sb, &d2.sb, sizeof(d3.sb)) ||
		    d3.bm_bytes != md_layout_bm_bytes(half) ||
		    memcmp(d3.bm, d.bm, (size_t)d3.bm_bytes))
			fail("a clipped dump is not the first part", 0, t3);
		md_dump_free(&d3);
		free(t3);
	}

	/* an unclean dump is refused */
	t3 = write_dump(&d, la, true, &n3);
	rc = md_dump_parse(t3, n3, &d3, err, sizeof(err));
	if (rc != -EINVAL || !strstr(err, "apply-al"))
		fail("an unclean dump was not refused with the hint to apply-al", rc, err);
	free(t3);

	md_dump_free(&d);
	md_dump_free(&d2);
	free(t1);
	free(t2);
	return 0;
}
