/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-text.h: the one way the command-line programs print text that a
 * server chose.
 *
 * Whatever a server chooses (tool names and descriptions, error messages
 * and the stderr they quote, log lines, results) reaches a person's
 * terminal only through safe_write(), so a server cannot clear the screen,
 * set the window title, move the cursor or reorder what is shown:
 * C0 and C1 controls (ESC, BEL, CSI ...), DEL, the bidirectional embeddings,
 * overrides and isolates (U+202A-202E, U+2066-2069), and the other
 * invisible format characters (zero-width spaces and joiners, marks, the
 * BOM, tag characters, ...) never go out raw, nor do bytes that are not
 * UTF-8 (some terminals read a lone 0x9b as CSI).  Pure: no state; safe on
 * any thread (the caller serialises writes to one FILE).
 */
#ifndef MCPCONN_TEXT_H
#define MCPCONN_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum safe_mode {
  SAFE_CELL,  /* a table cell: every one shown as '?' */
  SAFE_LINE,  /* one line: tab, CR and LF as a space, the rest as '?' */
  SAFE_BLOCK, /* several lines: tab and LF kept, the rest as '?' */
  SAFE_JSON   /* JSON text: each as \uXXXX (valid JSON, same value); bytes
               * that are not UTF-8 as \ufffd; LF, tab kept (layout) */
};

/* Decodes the strict UTF-8 sequence at |s| (|n| > 0 bytes left) into *cp;
 * returns its length, or 0 when it is not one. */
size_t text_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* True for a code point that must not reach a terminal raw. */
bool text_unsafe_cp(uint32_t cp);

/* Writes the |len| bytes at |s| (NULs included) to |f| made safe as |mode|
 * says; safe_puts() the string |s|. */
void safe_write(FILE *f, const char *s, size_t len, enum safe_mode mode);
void safe_puts(FILE *f, const char *s, enum safe_mode mode);

/* The characters safe_write() shows for |s|, for lining up columns. */
size_t safe_width(const char *s);

#endif /* MCPCONN_TEXT_H */
