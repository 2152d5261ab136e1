/*
 * conf-int.h: private to the conf-*.c modules (parser, checks, dump).
 */
#ifndef TANDEM_CONF_INT_H
#define TANDEM_CONF_INT_H

#include <glob.h>

#include "arena.h"
#include "conf.h"

#define CONF_INCLUDE_DEPTH_MAX 10
#define CONF_FILE_SIZE_MAX     (16u << 20)
#define CONF_FILES_MAX         1024
/* directory entries the includes of one configuration may read (conf-glob.c) */
#define CONF_GLOB_ENTRIES_MAX  65536

struct conf {
	struct arena *arena;
	struct diag *diag;
	const char *file;
	const char *hostname;
	bool no_ip_check;
	bool warn_unauthenticated;
	const struct conf_fs *fs; /* NULL: the real filesystem */
	void *fs_ctx;
	struct conf_optlist global;
	struct diag_loc global_seen;
	struct conf_optlist common[CONF_SECT_COUNT];
	struct conf_res *res_head;
	struct conf_res *res_tail;
	/* includes: files read so far (real paths) and the current chain */
	const char **seen;
	unsigned int n_seen;
	unsigned int cap_seen;
	const char *stack[CONF_INCLUDE_DEPTH_MAX + 2];
	unsigned int depth;
	size_t glob_left; /* of CONF_GLOB_ENTRIES_MAX */
};

/* conf-parse.c: the parser of one file (conf-parse-vol.c: host and volume sections) */
struct conf_lex;
struct conf_tok;

struct conf_parser {
	struct conf *c;
	struct conf_lex *lx;
	const char *file;
};

/* A container of volumes: a resource or a host section. */
struct conf_volset {
	struct conf_vol **head;
	const char *what; /* for messages */
};

#define CONF_ERR(p, loc, kw, ...) diag_add((p)->c->diag, DIAG_ERR, loc, kw, __VA_ARGS__)
#define CONF_WARN(p, loc, kw, ...) diag_add((p)->c->diag, DIAG_WARN, loc, kw, __VA_ARGS__)

void *conf_parse_alloc(struct conf_parser *p, size_t size);
void conf_parse_skip(struct conf_parser *p);
bool conf_parse_expect(struct conf_parser *p, int type, const char *ctx);
int conf_parse_values(struct conf_parser *p, const struct conf_tok *kw, struct conf_tok *vals,
		      int max);
void conf_parse_option_block(struct conf_parser *p, int lsect, struct conf_optlist *const *lists,
			     const struct conf_tok *sect_kw);
bool conf_parse_uint(const char *s, unsigned long max, unsigned long *out);

struct conf_vol *conf_parse_vol_new(struct conf_parser *p, unsigned int vnr, bool implicit,
				    const struct diag_loc *loc);
struct conf_vol *conf_parse_vol_find(struct conf_vol *head, unsigned int vnr);
void conf_parse_vol_append(struct conf_vol **head, struct conf_vol *v);
struct conf_vol *conf_parse_vol_implicit(struct conf_parser *p, struct conf_volset *vs,
					 const struct conf_tok *kw);
void conf_parse_vol_volume(struct conf_parser *p, struct conf_volset *vs,
			   const struct conf_tok *kw);
bool conf_parse_vol_stmt(struct conf_parser *p, struct conf_vol *v, const struct conf_tok *kw);
void conf_parse_vol_disk_path(struct conf_parser *p, struct conf_vol *v,
			      const struct conf_tok *kw);
void conf_parse_vol_on(struct conf_parser *p, struct conf_res *r, const struct conf_tok *kw);
void conf_parse_vol_floating(struct conf_parser *p, struct conf_res *r,
			     const struct conf_tok *kw);

/* conf-parse.c: loading */
int conf_parse_file(struct conf *c, const char *path, const struct diag_loc *from);

/* glob(pattern) in c's filesystem, reading at most c->glob_left directory
 * entries, less what it reads: 0 (globfree() it), -ENOENT (no match),
 * -E2BIG (c->glob_left exhausted), -ENOMEM or -EIO. */
int conf_glob(struct conf *c, const char *pattern, glob_t *out);
int conf_parse_buf(struct conf *c, const char *name, const char *buf, size_t len);
void conf_list_append(struct conf_optlist *l, struct conf_val *v);

/* conf.c */
void conf_resolve(struct conf *c);

/* conf-check.c: semantic rules; errors go to c->diag. */
void conf_check(struct conf *c);

#endif
