/*
 * md-dump: the text format of `drbdmeta dump-md` (v08), written and parsed
 * (doc/ondisk-format.pod, APPENDIX: DRBDMETA OUTPUT FORMATS, dump-md), so
 * that `tandemadm dump-md` output and operators' saved dumps round-trip
 * through `restore-md` with drbdmeta and tandem alike.
 */
#ifndef TANDEM_MD_DUMP_H
#define TANDEM_MD_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "md.h"

struct md_dump_header {
	const char *hostname; /* "# <hostname>> <command>" line */
	const char *command;  /* the command line, argv[0] without directory */
	time_t now;
	bool unclean;         /* --force on in-use metadata: add the warning lines */
};

/*
 * Print the dump: header, offsets (bytes) of superblock, AL and bitmap,
 * the superblock fields (the real flags word) and the bitmap body, given as
 * its on-disk bytes: md_layout_bm_bytes(sb->la_size_sect) bytes of
 * little-endian 64-bit words. Returns 0 or -EIO.
 */
int md_dump_write(FILE *f, const struct md_dump_header *h, const struct md_sb *sb,
		  uint64_t md_offset, uint64_t al_offset, uint64_t bm_offset, const void *bm);

struct md_dump {
	struct md_sb sb;   /* fields from the dump; magic, offsets not set */
	bool have_flags;
	uint8_t *bm;       /* bitmap bytes in on-disk form (malloc'ed) */
	uint64_t bm_bytes; /* md_layout_bm_bytes(sb.la_size_sect) */
};

/* Parse a dump. Errors give "line N: what was expected". */
int md_dump_parse(const char *text, size_t len, struct md_dump *out, char *err, size_t errlen);
void md_dump_free(struct md_dump *d);

#endif
