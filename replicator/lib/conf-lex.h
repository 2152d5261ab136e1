/*
 * conf-lex: tokenizer for drbd.conf / tandem.conf text.
 *
 * Words are runs of anything but blanks, braces, ';', '"' and '#';
 * strings are double-quoted with backslash escapes; '#' starts a comment.
 */
#ifndef TANDEM_CONF_LEX_H
#define TANDEM_CONF_LEX_H

#include <stddef.h>

#include "arena.h"
#include "diag.h"

struct conf_lex;

enum conf_tok_type {
	CONF_TOK_EOF,
	CONF_TOK_WORD,
	CONF_TOK_STRING,
	CONF_TOK_LBRACE,
	CONF_TOK_RBRACE,
	CONF_TOK_SEMI,
};

struct conf_tok {
	enum conf_tok_type type;
	const char *text; /* arena-owned; unescaped for strings */
	struct diag_loc loc;
};

#define CONF_LEX_WORD_MAX   128
#define CONF_LEX_STRING_MAX 255

/* file must stay valid as long as the tokens are used (arena-owned). */
int conf_lex_new(struct arena *a, struct diag *d, const char *file, const char *buf, size_t len,
		 struct conf_lex **out);
void conf_lex_free(struct conf_lex *lx);
/* Lexical errors are reported to the diag and skipped. */
void conf_lex_next(struct conf_lex *lx, struct conf_tok *tok);
void conf_lex_peek(struct conf_lex *lx, struct conf_tok *tok);
const char *conf_tok_type_name(enum conf_tok_type t);

#endif
