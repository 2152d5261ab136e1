/*
 * conf: a parsed and checked drbd.conf / tandem.conf.
 *
 * conf_load() reads a file with its includes, applies the legacy
 * mappings, expands resource-level volumes into the host sections (as
 * drbdadm does), picks this node's host section and runs the semantic
 * checks. Every problem goes to the diag; loading fails if any is an
 * error. The returned object is read-only; the view structs below are
 * owned by it.
 */
#ifndef TANDEM_CONF_H
#define TANDEM_CONF_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "conf-opt.h"
#include "diag.h"

struct conf;

/* One option as set in a section. */
struct conf_val {
	const struct conf_opt *opt;
	const char *text; /* as written, after legacy mapping; "yes" for a bare flag */
	struct conf_value v;
	struct diag_loc loc;
	struct conf_val *next;
};

struct conf_optlist {
	struct conf_val *head;
	struct conf_val *tail;
};

enum conf_md_kind {
	CONF_MD_UNSET,
	CONF_MD_INTERNAL,
	CONF_MD_FLEXIBLE, /* meta-disk DEV: the whole device */
	CONF_MD_INDEXED,  /* meta-disk DEV[N]: 128 MiB slot N */
};

struct conf_vol {
	unsigned int vnr;
	bool implicit;      /* written without `volume N {}` */
	const char *device; /* NULL when given only as `minor N` */
	int minor;          /* -1 = unset */
	const char *disk;   /* backing device; "none" = diskless; NULL = unset */
	enum conf_md_kind md;
	const char *md_dev; /* external meta-data device */
	int md_index;
	struct conf_optlist disk_opts; /* volume-level disk { } */
	struct diag_loc loc;
	struct conf_vol *next;
};

struct conf_addr {
	const char *af; /* "ipv4" or "ipv6"; NULL = unset */
	const char *ip; /* without brackets */
	unsigned int port;
	struct diag_loc loc;
};

struct conf_host {
	const char **names; /* `on` names; empty for floating */
	unsigned int n_names;
	bool floating;
	struct conf_addr addr;
	struct conf_vol *vols;
	struct diag_loc loc;
	bool damaged; /* had syntax errors: skip "missing ..." checks */
	struct conf_host *next;
};

struct conf_res {
	const char *name;
	struct diag_loc loc;
	struct conf_host *hosts;
	struct conf_optlist opts[CONF_SECT_COUNT]; /* [CONF_SECT_GLOBAL] unused */
	const struct conf_host *me;   /* this node's section; NULL = not on this node */
	const struct conf_host *peer; /* the other section */
	bool damaged;                 /* had syntax errors */
	struct conf_res *next;
};

/*
 * The filesystem that conf_load() and the includes read: the real one,
 * unless conf_load_opts.fs names another (in memory, for a fuzzer or a
 * test). Each function returns 0 or a negative errno; ctx is
 * conf_load_opts.fs_ctx.
 */
struct conf_fs {
	/* For the expansion of include patterns (glob(3)): as opendir(3),
	 * readdir(3) (*ent NULL at the end, valid until the next call on
	 * dir), closedir(3) and stat(2), which also stands for lstat(2):
	 * such a filesystem has no symbolic links. */
	int (*fs_opendir)(void *ctx, const char *path, void **dir);
	int (*fs_readdir)(void *ctx, void *dir, struct dirent **ent);
	void (*fs_closedir)(void *ctx, void *dir);
	int (*fs_stat)(void *ctx, const char *path, struct stat *st);
	/* The canonical name of an existing file, as realpath(3): each file
	 * is read once, whatever it is called, and a cycle ends there. */
	int (*fs_realpath)(void *ctx, const char *path, char *real, size_t size);
	/* The content of a regular file, -EISDIR for a directory, -EFBIG if
	 * longer than max; *buf is malloc()ed, the caller frees it. */
	int (*fs_read)(void *ctx, const char *path, size_t max, char **buf, size_t *len);
};

struct conf_load_opts {
	const char *hostname; /* NULL: TANDEM_HOSTNAME, then uname -n */
	bool no_ip_check;     /* do not match floating sections against local addresses */
	/* warn about each resource of this node whose peer would not be
	 * authenticated (conf_res_unauthenticated): for tandemadm and tandemd */
	bool warn_unauthenticated;
	const struct conf_fs *fs; /* NULL: the real filesystem */
	void *fs_ctx;
};

int conf_load(const char *path, const struct conf_load_opts *opts, struct diag *d,
	      struct conf **out);
/* Same from memory; `name` is used in positions and to resolve includes. */
int conf_load_buf(const char *name, const char *buf, size_t len, const struct conf_load_opts *opts,
		  struct diag *d, struct conf **out);
void conf_free(struct conf *c);

const char *conf_file(const struct conf *c);
const char *conf_hostname(const struct conf *c);
const struct conf_optlist *conf_global(const struct conf *c);
const struct conf_optlist *conf_common(const struct conf *c, enum conf_sect sect);
const struct conf_res *conf_resources(const struct conf *c);
const struct conf_res *conf_find_res(const struct conf *c, const char *name);

/* Effective value: the resource's, else common's; NULL = default applies. */
const struct conf_val *conf_res_get(const struct conf *c, const struct conf_res *r,
				    enum conf_sect sect, const char *name);
/* Effective number (default applied) of a CONF_T_NUM option. */
uint64_t conf_res_num(const struct conf *c, const struct conf_res *r, enum conf_sect sect,
		      const char *name);
/* Effective text (default applied; NULL if unset without default). */
const char *conf_res_text(const struct conf *c, const struct conf_res *r, enum conf_sect sect,
			  const char *name);
bool conf_res_bool(const struct conf *c, const struct conf_res *r, enum conf_sect sect,
		   const char *name);
const struct conf_val *conf_list_find(const struct conf_optlist *l, const char *name);
bool conf_host_has_name(const struct conf_host *h, const char *name);
/* A resource of this node with a peer, without cram-hmac-alg and without
 * net { allow-unauthenticated yes; }: tandemd refuses to bring it up. */
bool conf_res_unauthenticated(const struct conf *c, const struct conf_res *r);

/* conf-dump.c: canonical 8.4 text as `drbdadm dump` prints it, and JSON. */
int conf_dump(const struct conf *c, const char *const *res, unsigned int n_res, FILE *f);
int conf_dump_json(const struct conf *c, const char *const *res, unsigned int n_res, FILE *f);

#endif
