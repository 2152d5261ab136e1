/*
 * md-dump: `drbdmeta dump-md` text for v08 metadata, written byte for byte
 * as drbdmeta 9.22 prints it (except the real flags word), and parsed the
 * way `drbdmeta restore-md` reads it (doc/ondisk-format.pod, APPENDIX:
 * DRBDMETA OUTPUT FORMATS, dump-md).
 *
 * The parser works on a length-delimited buffer (no NUL needed) and never
 * looks past text + len; every error is reported as "line N: ..." and
 * leaves *out empty.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "md-dump.h"

/* drbdmeta reads and prints the bitmap in 32 MiB windows of 32-bit words. */
#define MD_DUMP_WINDOW_WORDS ((32u << 20) / 4)
/* One bitmap sector covers 32768 data sectors (one bit per 4 KiB). */
#define MD_DUMP_SECT_PER_BM_SECT 32768u

#define MD_DUMP_UNCLEAN_LINE "This_is_an_unclean_meta_data_dump._Don't_trust_the_bitmap."

/* ---------------------------------------------------------------- writing */

/* 32-bit word i of the little-endian bitmap. */
static uint32_t md_dump_le32(const uint8_t *bm, uint64_t i)
{
	const uint8_t *p = bm + 4 * i;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The largest la_size_sect the bitmap area can describe, as drbdmeta's
 * max_usable_sectors(): internal metadata ends where its first part
 * starts; external is limited by the bitmap sectors behind bm_offset.
 */
static uint64_t md_dump_max_usable(const struct md_sb *sb, uint64_t md_offset, uint64_t al_offset,
				   uint64_t bm_offset)
{
	uint64_t m = md_offset;

	if (sb->bm_offset < 0) {
		if (al_offset < m)
			m = al_offset;
		if (bm_offset < m)
			m = bm_offset;
		return m >> 9;
	}
	if ((uint32_t)sb->bm_offset >= sb->md_size_sect)
		return 0;
	return (uint64_t)(sb->md_size_sect - (uint32_t)sb->bm_offset) * MD_DUMP_SECT_PER_BM_SECT;
}

static void md_dump_eol(FILE *f, uint64_t i)
{
	if (i % 64 == 0)
		fprintf(f, "\n   # at %" PRIu64 "kB\n   ", 128 * i);
	else
		fputs("\n   ", f);
}

/*
 * The bitmap body, drbdmeta's fprintf_bm() for one peer: n 32-bit words,
 * printed as 64-bit words, four per line; at every line start, a run of
 * more than 8 equal 32-bit words (rounded down to 8) becomes "N times".
 * A run that reaches the end of a 32 MiB window continues into the next
 * one only if it goes on there for more than 8 words. Returns the number
 * of bits set.
 */
static uint64_t md_dump_write_bm(FILE *f, const uint8_t *bm, uint64_t n)
{
	uint64_t i = 0, j, k, wend, run = 0, bits = 0;
	uint32_t cw = 0, lo = 0, w;

	fputc('{', f);
	while (i < n) {
		if (run == 0)
			cw = md_dump_le32(bm, i);
		if (i % 8 == 0) {
			if (run == 0)
				md_dump_eol(f, i);
			wend = (i / MD_DUMP_WINDOW_WORDS + 1) * MD_DUMP_WINDOW_WORDS;
			if (wend > n)
				wend = n;
			for (j = i; j < wend && md_dump_le32(bm, j) == cw; j++)
				;
			k = (j - i) / 8 * 8;
			if (k > 8) {
				run += k;
				i += k;
				if (j >= wend && i < n)
					continue; /* the run may go on in the next window */
			}
			if (run) {
				fprintf(f, " %" PRIu64 " times 0x%08" PRIX32 "%08" PRIX32 ";", run / 2, cw,
					cw);
				bits += run * (uint64_t)__builtin_popcount(cw);
				run = 0;
				continue;
			}
		}
		w = md_dump_le32(bm, i);
		if (i % 2 == 0)
			lo = w;
		else
			fprintf(f, " 0x%08" PRIX32 "%08" PRIX32 ";", w, lo);
		bits += (uint64_t)__builtin_popcount(w);
		i++;
	}
	fputs("\n}\n", f);
	return bits;
}

static void md_dump_write_header(FILE *f, const struct md_dump_header *h)
{
	char when[64] = "";
	struct tm tm;

	if (localtime_r(&h->now, &tm))
		strftime(when, sizeof(when), "%F %T %z [%s]", &tm);
	fprintf(f, "# DRBD meta data dump\n# %s\n# %s> %s\n#\n\n", when,
		h->hostname ? h->hostname : "", h->command ? h->command : "");
	fputs("version \"v08\";\n\n", f);
	if (h->unclean)
		fputs(MD_DUMP_UNCLEAN_LINE "\n"
		      "# You should \"apply-al\" first, if you plan to restore this.\n\n", f);
}

int md_dump_write(FILE *f, const struct md_dump_header *h, const struct md_sb *sb,
		  uint64_t md_offset, uint64_t al_offset, uint64_t bm_offset, const void *bm)
{
	uint64_t la = sb->la_size_sect;
	uint64_t max = md_dump_max_usable(sb, md_offset, al_offset, bm_offset);
	uint64_t bm_bytes, bits;

	/* like drbdmeta: clip first, and say so before the header */
	if (la > max) {
		fprintf(f, "# la-size-sect was too big (%" PRIu64 "), truncated (%" PRIu64 ")!\n",
			la, max);
		la = max;
	}
	bm_bytes = md_layout_bm_bytes(la);
	md_dump_write_header(f, h);
	fprintf(f, "# md_size_sect %" PRIu32 "\n", sb->md_size_sect);
	fprintf(f, "# md_offset %" PRIu64 "\n# al_offset %" PRIu64 "\n# bm_offset %" PRIu64 "\n\n",
		md_offset, al_offset, bm_offset);
	fprintf(f, "uuid {\n    0x%016" PRIX64 "; 0x%016" PRIX64 "; 0x%016" PRIX64 "; 0x%016" PRIX64
		   ";\n    flags 0x%08" PRIX32 ";\n}\n",
		sb->uuid[MD_UI_CURRENT], sb->uuid[MD_UI_BITMAP], sb->uuid[MD_UI_HISTORY0],
		sb->uuid[MD_UI_HISTORY1], sb->flags);
	fprintf(f, "# al-extents %" PRIu32 ";\nla-size-sect %" PRIu64 ";\n", sb->al_nr_extents, la);
	fprintf(f, "bm-byte-per-bit %" PRIu32 ";\ndevice-uuid 0x%016" PRIX64 ";\n",
		sb->bm_bytes_per_bit, sb->device_uuid);
	fprintf(f, "la-peer-max-bio-size %" PRIu32 ";\nal-stripes %" PRIu32 ";\n",
		sb->la_peer_max_bio_size, sb->al_stripes);
	fprintf(f, "al-stripe-size-4k %" PRIu32 ";\n# bm-bytes %" PRIu64 ";\nbm ",
		sb->al_stripe_size_4k, bm_bytes);
	bits = md_dump_write_bm(f, bm, bm_bytes / 4);
	fprintf(f, "# bits-set %" PRIu64 ";\n", bits);
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return 0;
}

/* ---------------------------------------------------------------- parsing */

enum md_dump_tok_kind {
	MD_DUMP_TOK_EOF,
	MD_DUMP_TOK_PUNCT,  /* ; { } */
	MD_DUMP_TOK_WORD,   /* [-_a-zA-Z0-9]+: keywords and numbers */
	MD_DUMP_TOK_STRING, /* "..." on one line, quotes included */
	MD_DUMP_TOK_BAD,    /* any other character, or an unterminated string */
};

struct md_dump_tok {
	enum md_dump_tok_kind kind;
	const char *s;
	size_t len;
	unsigned int line;
};

struct md_dump_lex {
	const char *p, *end;
	unsigned int line;
	struct md_dump_tok t; /* the current token */
	char *err;
	size_t errlen;
};

static bool md_dump_is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

static int md_dump_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Advance to the next token: whitespace and # comments are skipped. */
static void md_dump_next(struct md_dump_lex *lx)
{
	struct md_dump_tok *t = &lx->t;

	while (lx->p < lx->end) {
		char c = *lx->p;

		if (c == '\n') {
			lx->line++;
			lx->p++;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			lx->p++;
		} else if (c == '#') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
		} else {
			break;
		}
	}
	t->s = lx->p;
	t->line = lx->line;
	t->len = 1;
	if (lx->p >= lx->end) {
		t->kind = MD_DUMP_TOK_EOF;
		t->len = 0;
	} else if (*lx->p == ';' || *lx->p == '{' || *lx->p == '}') {
		t->kind = MD_DUMP_TOK_PUNCT;
	} else if (md_dump_is_word_char(*lx->p)) {
		t->kind = MD_DUMP_TOK_WORD;
		while (t->s + t->len < lx->end && md_dump_is_word_char(t->s[t->len]))
			t->len++;
	} else if (*lx->p == '"') {
		t->kind = MD_DUMP_TOK_BAD;
		while (t->s + t->len < lx->end && t->s[t->len] != '\n' && t->s[t->len] != '"')
			t->len++;
		if (t->s + t->len < lx->end && t->s[t->len] == '"') {
			t->kind = MD_DUMP_TOK_STRING;
			t->len++;
		}
	} else {
		t->kind = MD_DUMP_TOK_BAD;
	}
	lx->p = t->s + t->len;
}

/* A printable description of the current token for error messages. */
static void md_dump_describe(const struct md_dump_tok *t, char *buf, size_t size)
{
	size_t i, o = 0;

	if (t->kind == MD_DUMP_TOK_EOF) {
		snprintf(buf, size, "end of input");
		return;
	}
	if (t->kind == MD_DUMP_TOK_BAD && t->len == 1 && (t->s[0] < 0x20 || t->s[0] > 0x7e)) {
		snprintf(buf, size, "character '\\x%02x'", (unsigned char)t->s[0]);
		return;
	}
	buf[o++] = '\'';
	for (i = 0; i < t->len && o + 5 < size; i++) {
		if (i == 40) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		buf[o++] = t->s[i] >= 0x20 && t->s[i] <= 0x7e ? t->s[i] : '?';
	}
	buf[o++] = '\'';
	buf[o] = '\0';
}

static int md_dump_fail(struct md_dump_lex *lx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int md_dump_fail(struct md_dump_lex *lx, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	if (!lx->err || lx->errlen == 0)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(lx->err, lx->errlen, "line %u: %s", lx->t.line, what);
	return -EINVAL;
}

static int md_dump_expected(struct md_dump_lex *lx, const char *what)
{
	char found[64];

	md_dump_describe(&lx->t, found, sizeof(found));
	if (lx->t.kind == MD_DUMP_TOK_WORD && lx->t.len >= 18 &&
	    !memcmp(lx->t.s, "This_is_an_unclean", 18))
		return md_dump_fail(lx, "expected %s, found %s (an unclean dump; run apply-al, "
				    "then dump again)", what, found);
	return md_dump_fail(lx, "expected %s, found %s", what, found);
}

static bool md_dump_is(const struct md_dump_tok *t, enum md_dump_tok_kind kind, const char *s)
{
	size_t len = strlen(s);

	return t->kind == kind && t->len == len && !memcmp(t->s, s, len);
}

/* The current token must be exactly `s`; consume it. */
static int md_dump_expect(struct md_dump_lex *lx, enum md_dump_tok_kind kind, const char *s,
			  const char *what)
{
	if (!md_dump_is(&lx->t, kind, s))
		return md_dump_expected(lx, what);
	md_dump_next(lx);
	return 0;
}

static int md_dump_semicolon(struct md_dump_lex *lx)
{
	return md_dump_expect(lx, MD_DUMP_TOK_PUNCT, ";", "';'");
}

/* Is the current token "0x" and exactly `digits` hex digits? */
static bool md_dump_is_hex(const struct md_dump_tok *t, unsigned int digits, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (t->kind != MD_DUMP_TOK_WORD || t->len != 2 + digits || t->s[0] != '0' || t->s[1] != 'x')
		return false;
	for (i = 2; i < t->len; i++) {
		int d = md_dump_hexval(t->s[i]);

		if (d < 0)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return true;
}

/* A decimal number of 1 to 19 digits (no sign, like drbdmeta's NUM). */
static bool md_dump_is_num(const struct md_dump_tok *t, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (t->kind != MD_DUMP_TOK_WORD || t->len > 19)
		return false;
	for (i = 0; i < t->len; i++) {
		if (t->s[i] < '0' || t->s[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(t->s[i] - '0');
	}
	*v = x;
	return true;
}

/* "0x<digits hex>", consumed. */
static int md_dump_hex(struct md_dump_lex *lx, unsigned int digits, uint64_t *v)
{
	if (!md_dump_is_hex(&lx->t, digits, v))
		return md_dump_expected(lx, digits == 16 ? "a 16-digit hex number (0x + 16 digits)"
							 : "an 8-digit hex number (0x + 8 digits)");
	md_dump_next(lx);
	return 0;
}

/* A decimal number up to max, consumed. */
static int md_dump_num(struct md_dump_lex *lx, uint64_t max, uint64_t *v)
{
	char what[64];

	if (!md_dump_is_num(&lx->t, v) || *v > max) {
		snprintf(what, sizeof(what), "a decimal number up to %" PRIu64, max);
		return md_dump_expected(lx, what);
	}
	md_dump_next(lx);
	return 0;
}

/* <keyword> <decimal up to max> ; */
static int md_dump_num_stmt(struct md_dump_lex *lx, const char *kw, uint64_t max, uint64_t *v)
{
	char what[64];
	int rc;

	snprintf(what, sizeof(what), "'%s'", kw);
	rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, kw, what);
	if (rc == 0)
		rc = md_dump_num(lx, max, v);
	return rc ? rc : md_dump_semicolon(lx);
}

/* uuid { U64; U64; U64; U64; flags U32; } */
static int md_dump_parse_uuid(struct md_dump_lex *lx, struct md_dump *d)
{
	uint64_t flags = 0;
	int i, rc;

	rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "uuid", "'uuid'");
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_PUNCT, "{", "'{'");
	for (i = 0; rc == 0 && i < MD_UI_COUNT; i++) {
		rc = md_dump_hex(lx, 16, &d->sb.uuid[i]);
		if (rc == 0)
			rc = md_dump_semicolon(lx);
	}
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "flags", "'flags'");
	if (rc == 0)
		rc = md_dump_hex(lx, 8, &flags);
	if (rc == 0)
		rc = md_dump_semicolon(lx);
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_PUNCT, "}", "'}'");
	d->sb.flags = (uint32_t)flags;
	d->have_flags = rc == 0;
	return rc;
}

/* Store `count` copies of the 64-bit word v at word index *pos. */
static void md_dump_fill(uint8_t *bm, uint64_t *pos, uint64_t count, uint64_t v)
{
	uint8_t *p = bm + 8 * *pos;
	uint64_t c;
	int b;

	*pos += count;
	if (v == 0)
		return; /* the buffer starts zeroed */
	for (c = 0; c < count; c++, p += 8)
		for (b = 0; b < 8; b++)
			p[b] = (uint8_t)(v >> (8 * b));
}

/*
 * bm { ( 0x<16 hex>; | <N> times 0x<16 hex>; )* }
 * The words may not go past bm_bytes; a shorter bitmap leaves the rest of
 * d->bm zero, as drbdmeta's restore-md zero-fills the rest of its window.
 */
static int md_dump_parse_bm(struct md_dump_lex *lx, struct md_dump *d)
{
	uint64_t words = d->bm_bytes / 8, pos = 0, count, v;
	int rc;

	rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "bm", "'bm'");
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_PUNCT, "{", "'{'");
	while (rc == 0 && !md_dump_is(&lx->t, MD_DUMP_TOK_PUNCT, "}")) {
		bool run;

		count = 1;
		run = md_dump_is_num(&lx->t, &count);
		if (run && count == 0)
			return md_dump_expected(lx, "a repeat count of at least 1");
		if (!run && !md_dump_is_hex(&lx->t, 16, &v))
			return md_dump_expected(lx, "'0x<16 hex digits>;', "
						"'<N> times 0x<16 hex digits>;' or '}'");
		if (count > words - pos)
			return md_dump_fail(lx, "the bitmap is longer than bm-bytes %" PRIu64
					    " for la-size-sect %" PRIu64, d->bm_bytes,
					    d->sb.la_size_sect);
		md_dump_next(lx);
		if (run) {
			rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "times", "'times'");
			if (rc == 0)
				rc = md_dump_hex(lx, 16, &v);
		}
		if (rc == 0)
			rc = md_dump_semicolon(lx);
		if (rc == 0)
			md_dump_fill(d->bm, &pos, count, v);
	}
	if (rc == 0)
		md_dump_next(lx); /* the '}' */
	return rc;
}

static int md_dump_parse_all(struct md_dump_lex *lx, struct md_dump *d)
{
	uint64_t v = 0;
	int rc;

	rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "version", "'version'");
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_STRING, "\"v08\"", "\"v08\"");
	if (rc == 0)
		rc = md_dump_semicolon(lx);
	if (rc == 0)
		rc = md_dump_parse_uuid(lx, d);
	if (rc == 0)
		rc = md_dump_num_stmt(lx, "la-size-sect", MD_MAX_FLEX_SECT, &d->sb.la_size_sect);
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "bm-byte-per-bit", "'bm-byte-per-bit'");
	if (rc == 0 && md_dump_is_num(&lx->t, &v) && v != MD_BM_BYTES_PER_BIT)
		return md_dump_fail(lx, "bm-byte-per-bit %" PRIu64 " is not supported (only 4096)",
				    v);
	if (rc == 0)
		rc = md_dump_num(lx, MD_BM_BYTES_PER_BIT, &v);
	if (rc == 0)
		rc = md_dump_semicolon(lx);
	d->sb.bm_bytes_per_bit = (uint32_t)v;
	if (rc == 0)
		rc = md_dump_expect(lx, MD_DUMP_TOK_WORD, "device-uuid", "'device-uuid'");
	if (rc == 0)
		rc = md_dump_hex(lx, 16, &d->sb.device_uuid);
	if (rc == 0)
		rc = md_dump_semicolon(lx);
	if (rc == 0)
		rc = md_dump_num_stmt(lx, "la-peer-max-bio-size", UINT32_MAX, &v);
	d->sb.la_peer_max_bio_size = (uint32_t)v;
	if (rc == 0)
		rc = md_dump_num_stmt(lx, "al-stripes", UINT32_MAX, &v);
	d->sb.al_stripes = (uint32_t)v;
	if (rc == 0)
		rc = md_dump_num_stmt(lx, "al-stripe-size-4k", UINT32_MAX, &v);
	d->sb.al_stripe_size_4k = (uint32_t)v;
	if (rc)
		return rc;

	d->bm_bytes = md_layout_bm_bytes(d->sb.la_size_sect);
	if (d->bm_bytes < SIZE_MAX)
		d->bm = calloc(1, d->bm_bytes ? (size_t)d->bm_bytes : 1);
	if (!d->bm) {
		md_dump_fail(lx, "out of memory for a %" PRIu64 "-byte bitmap", d->bm_bytes);
		return -ENOMEM;
	}
	rc = md_dump_parse_bm(lx, d);
	if (rc == 0 && lx->t.kind != MD_DUMP_TOK_EOF)
		rc = md_dump_expected(lx, "end of input");
	return rc;
}

int md_dump_parse(const char *text, size_t len, struct md_dump *out, char *err, size_t errlen)
{
	struct md_dump_lex lx = {.line = 1, .err = err, .errlen = errlen};
	int rc;

	if (!text) {
		text = "";
		len = 0;
	}
	lx.p = text;
	lx.end = text + len;
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	md_dump_next(&lx);
	rc = md_dump_parse_all(&lx, out);
	if (rc < 0)
		md_dump_free(out);
	return rc;
}

void md_dump_free(struct md_dump *d)
{
	if (!d)
		return;
	free(d->bm);
	memset(d, 0, sizeof(*d));
}
