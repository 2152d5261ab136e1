/*
 * conf-opt: the one option table of tandem.conf. The parser, the
 * validator, `tandemadm dump` and the tandem.conf(5) man page all read it.
 */
#ifndef TANDEM_CONF_OPT_H
#define TANDEM_CONF_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Option sections, in the order `dump` prints them inside a resource. */
enum conf_sect {
	CONF_SECT_GLOBAL,
	CONF_SECT_OPTIONS,
	CONF_SECT_NET,
	CONF_SECT_DISK,
	CONF_SECT_STARTUP,
	CONF_SECT_HANDLERS,
	CONF_SECT_COUNT,
};

enum conf_type {
	CONF_T_NUM,      /* unsigned number, optional K/M/G/s suffix */
	CONF_T_BOOL,     /* `opt;`, `opt yes;`, `opt no;` */
	CONF_T_ENUM,     /* one of enums[] */
	CONF_T_STRING,   /* free text (shared-secret) */
	CONF_T_HANDLER,  /* shell command run with /bin/sh -c */
	CONF_T_HASH,     /* a kernel crypto hash name */
	CONF_T_RESOURCE, /* the name of another resource */
	CONF_T_HOST,     /* a host name of this resource, or `both` */
	CONF_T_HEX,      /* hexadecimal CPU mask */
	CONF_T_FLAG,     /* one-shot flag without value (discard-my-data) */
};

/* The default unit a bare number is taken in. */
enum conf_unit {
	CONF_U_NONE,     /* a count */
	CONF_U_BYTES,
	CONF_U_SECTORS,  /* 512 bytes */
	CONF_U_KIB,
	CONF_U_SECONDS,
	CONF_U_DECISEC,  /* 0.1 seconds */
	CONF_U_KIB_S,    /* KiB per second */
};

#define CONF_OPT_ASB          0x01 /* an after-sb policy: also discard-node-NAME */
#define CONF_OPT_NOT_IN_COMMON 0x02
/* CONF_T_NUM: out of range is a warning and the value is moved to the
 * nearest end, as the DRBD 8.4 kernel does (drbdadm-84 does not check) */
#define CONF_OPT_CLAMP        0x04

/* conf_value.idx of an after-sb-0pri `discard-node-NAME` value. */
#define CONF_ASB_DISCARD_NODE 100

struct conf_opt {
	const char *name;
	enum conf_sect sect;
	enum conf_type type;
	enum conf_unit unit;
	const char *def;          /* default as written in a config; NULL = unset */
	uint64_t min, max;        /* CONF_T_NUM only, in the default unit */
	const char *const *enums; /* CONF_T_ENUM: NULL-terminated */
	unsigned int flags;
	const char *help;
};

/* A checked value: num in the default unit, idx for enums. */
struct conf_value {
	uint64_t num;
	int idx;
	bool yes;
};

extern const struct conf_opt conf_opts[];
extern const size_t conf_opts_count;

const struct conf_opt *conf_opt_find(enum conf_sect sect, const char *name);
const char *conf_sect_name(enum conf_sect sect);
const char *conf_unit_name(enum conf_unit unit);
const char *conf_type_name(enum conf_type type);
/* Names of the kernel crypto hashes tandem accepts (NULL-terminated). */
extern const char *const conf_hash_names[];

/*
 * Check and convert one value. On error returns -EINVAL or -ERANGE and
 * writes a reason (without keyword or position) into err. On -ERANGE of a
 * CONF_T_NUM, out->num holds the number as written (in the default unit).
 */
int conf_opt_parse(const struct conf_opt *o, const char *text, struct conf_value *out, char *err,
		   size_t errlen);

/* A value as drbdadm writes it: bare if it is made of [a-zA-Z0-9/._-] and
 * at most 80 long, else double-quoted with \ and " escaped. */
void conf_opt_format_value(const char *v, char *buf, size_t len);

/* Convert "10M", "4000s", "512k" into `unit` the way DRBD does (round up). */
int conf_opt_parse_num(const char *text, enum conf_unit unit, uint64_t *out, char *err,
		       size_t errlen);

/*
 * Legacy spellings. Looked up by the section they are written in; the
 * parser applies them and warns with `advice`.
 */
enum conf_legacy_kind {
	CONF_LEGACY_MOVE,     /* same value, new section and/or name */
	CONF_LEGACY_NEGATE,   /* `no-X;` becomes `X no;` */
	CONF_LEGACY_IGNORED,  /* accepted, has no effect since 8.4 */
	CONF_LEGACY_OBSOLETE, /* pre-8.0 keyword: warn, name the replacement, ignore */
};

/* Pseudo-sections the legacy table also covers. */
#define CONF_LSECT_SYNCER   100
#define CONF_LSECT_RESOURCE 101

struct conf_legacy {
	int sect;                 /* enum conf_sect or CONF_LSECT_* */
	const char *name;
	enum conf_legacy_kind kind;
	enum conf_sect new_sect;
	const char *new_name;
	const char *advice;
};

extern const struct conf_legacy conf_legacies[];
extern const size_t conf_legacies_count;

const struct conf_legacy *conf_legacy_find(int sect, const char *name);

#endif
