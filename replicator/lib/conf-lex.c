/* conf-lex: hand-written tokenizer for drbd.conf syntax. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conf-lex.h"

struct conf_lex {
	struct arena *arena;
	struct diag *diag;
	const char *file;
	const char *buf;
	size_t len;
	size_t pos;
	int line;
	int col;
	bool peeked;
	struct conf_tok peek;
};

int conf_lex_new(struct arena *a, struct diag *d, const char *file, const char *buf, size_t len,
		 struct conf_lex **out)
{
	struct conf_lex *lx = calloc(1, sizeof(*lx));

	if (!lx)
		return -ENOMEM;
	lx->arena = a;
	lx->diag = d;
	lx->file = file;
	lx->buf = buf;
	lx->len = len;
	lx->line = 1;
	lx->col = 1;
	*out = lx;
	return 0;
}

void conf_lex_free(struct conf_lex *lx)
{
	free(lx);
}

const char *conf_tok_type_name(enum conf_tok_type t)
{
	switch (t) {
	case CONF_TOK_EOF:
		return "end of file";
	case CONF_TOK_WORD:
		return "word";
	case CONF_TOK_STRING:
		return "string";
	case CONF_TOK_LBRACE:
		return "'{'";
	case CONF_TOK_RBRACE:
		return "'}'";
	case CONF_TOK_SEMI:
		return "';'";
	}
	return "?";
}

static int cur(const struct conf_lex *lx)
{
	return lx->pos < lx->len ? (unsigned char)lx->buf[lx->pos] : -1;
}

static void advance(struct conf_lex *lx)
{
	if (lx->pos >= lx->len)
		return;
	if (lx->buf[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->pos++;
}

static bool is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_word(int c)
{
	return c > 0 && !is_blank(c) && c != '{' && c != '}' && c != ';' && c != '"' && c != '#';
}

static void lex_string(struct conf_lex *lx, struct conf_tok *tok)
{
	char text[CONF_LEX_STRING_MAX + 1];
	size_t n = 0;
	bool too_long = false;
	int c;

	advance(lx); /* opening quote */
	for (;;) {
		c = cur(lx);
		if (c < 0 || c == '\n') {
			diag_add(lx->diag, DIAG_ERR, &tok->loc, NULL,
				 "unterminated string: add the closing '\"' on the same line");
			break;
		}
		advance(lx);
		if (c == '"')
			break;
		if (c == 0) {
			struct diag_loc at = {lx->file, lx->line, lx->col - 1};

			diag_add(lx->diag, DIAG_ERR, &at, NULL, "NUL byte inside a string");
			continue;
		}
		if (c == '\\') {
			c = cur(lx);
			if (c < 0 || c == '\n')
				continue;
			advance(lx);
		}
		if (n < CONF_LEX_STRING_MAX)
			text[n++] = (char)c;
		else
			too_long = true;
	}
	if (too_long)
		diag_add(lx->diag, DIAG_ERR, &tok->loc, NULL,
			 "string longer than %d characters", CONF_LEX_STRING_MAX);
	text[n] = '\0';
	tok->type = CONF_TOK_STRING;
	tok->text = arena_strndup(lx->arena, text, n);
}

static void lex_word(struct conf_lex *lx, struct conf_tok *tok)
{
	size_t start = lx->pos;

	while (is_word(cur(lx)))
		advance(lx);
	if (lx->pos - start > CONF_LEX_WORD_MAX)
		diag_add(lx->diag, DIAG_ERR, &tok->loc, NULL,
			 "word longer than %d characters; quote it if it is a string",
			 CONF_LEX_WORD_MAX);
	tok->type = CONF_TOK_WORD;
	tok->text = arena_strndup(lx->arena, lx->buf + start, lx->pos - start);
}

static void lex_scan(struct conf_lex *lx, struct conf_tok *tok)
{
	int c;

	for (;;) {
		c = cur(lx);
		if (is_blank(c)) {
			advance(lx);
		} else if (c == '#') {
			while (cur(lx) >= 0 && cur(lx) != '\n')
				advance(lx);
		} else if (c == 0) {
			struct diag_loc loc = {lx->file, lx->line, lx->col};

			diag_add(lx->diag, DIAG_ERR, &loc, NULL, "NUL byte in configuration text");
			advance(lx);
		} else {
			break;
		}
	}
	tok->loc.file = lx->file;
	tok->loc.line = lx->line;
	tok->loc.col = lx->col;
	tok->text = "";
	switch (c) {
	case -1:
		tok->type = CONF_TOK_EOF;
		return;
	case '{':
		tok->type = CONF_TOK_LBRACE;
		tok->text = "{";
		advance(lx);
		return;
	case '}':
		tok->type = CONF_TOK_RBRACE;
		tok->text = "}";
		advance(lx);
		return;
	case ';':
		tok->type = CONF_TOK_SEMI;
		tok->text = ";";
		advance(lx);
		return;
	case '"':
		lex_string(lx, tok);
		break;
	default:
		lex_word(lx, tok);
		break;
	}
	if (!tok->text) {
		/* Allocation failure: report and end the input. */
		diag_add(lx->diag, DIAG_ERR, &tok->loc, NULL, "out of memory");
		tok->type = CONF_TOK_EOF;
		tok->text = "";
		lx->pos = lx->len;
	}
}

void conf_lex_next(struct conf_lex *lx, struct conf_tok *tok)
{
	if (lx->peeked) {
		*tok = lx->peek;
		lx->peeked = false;
		return;
	}
	lex_scan(lx, tok);
}

void conf_lex_peek(struct conf_lex *lx, struct conf_tok *tok)
{
	if (!lx->peeked) {
		lex_scan(lx, &lx->peek);
		lx->peeked = true;
	}
	*tok = lx->peek;
}
