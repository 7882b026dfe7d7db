/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config.c: libFuzzer target for config parsing and ${VAR} expansion.
 *
 * Input: the first byte picks the dialect (native, Claude Code, VS Code,
 * Gemini, Cursor, Windsurf); the rest is a config file's text.  Every parsed definition is
 * checked for the invariants the manager relies on, copied, serialised and
 * turned into client options (setters only: nothing connects).  The same bytes also go through
 * mcp__config_expand() as one string.  Secrets are never resolved here: that
 * would run shell commands taken from the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_config.h"
#include "mcp_server_options.h"

/* A fixed environment, so runs are reproducible. */
static const char *fuzz_getenv(void *user, const char *name) {
  static const char *const env[] = {"A",       "1",   "B",    "two", "EMPTY",  "",  "HOME",
                                    "/home/f", "REF", "${A}", "NL",  "x\r\ny", NULL};
  (void)user;
  for (size_t i = 0; env[i]; i += 2)
    if (strcmp(env[i], name) == 0) return env[i + 1];
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether |s| holds a complete "${input:...}" reference. */
static int has_input_ref(const char *s) {
  const char *p = strstr(s, "${input:");
  return p && strchr(p, '}') != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  /* The first byte also says whether the file is a project file (with a
   * base directory). */
  mcp_config_parse_opts o = {.dialect = (mcp_config_dialect)(data[0] % MCP_CONFIG_DIALECTS),
                             .getenv = fuzz_getenv,
                             .base_dir = (data[0] / MCP_CONFIG_DIALECTS) % 2 ? "/fuzz" : NULL};
  const char *text = (const char *)data + 1;
  size_t len = size - 1;

  mcp_config_set *set = NULL;
  if (mcp__config_parse_text(text, len, "/fuzz/.mcp.json", &o, &set) == MCP_OK) {
    for (size_t i = 0; i < set->ndefs; i++) {
      const mcp_server_def *d = set->defs[i];
      if (!mcp__config_name_is_valid(d->name) || strlen(d->hash) != 64) abort();
      if (i && strcmp(set->defs[i - 1]->name, d->name) >= 0) abort();
      if (mcp__config_find(set, d->name) != d) abort();
      if (d->type == MCP_SERVER_STDIO && (!d->s.argv || !d->s.argc || d->s.url)) abort();
      if (d->type != MCP_SERVER_STDIO && (!d->s.url || d->s.argv)) abort();
      for (size_t k = 0; k < d->s.nheaders; k++)
        if (d->s.headers[k].value[0] != '!' && strpbrk(d->s.headers[k].value, "\r\n")) abort();
      /* No input has a value here, so no reference may be sent as text. */
      if (o.dialect == MCP_CONFIG_VSCODE) {
        for (size_t k = 0; k < d->s.nheaders; k++)
          if (has_input_ref(d->s.headers[k].value)) abort();
        for (size_t k = 0; k < d->s.argc; k++)
          if (has_input_ref(d->s.argv[k])) abort();
        if (d->s.url && has_input_ref(d->s.url)) abort();
      }
      if (d->display_name && mcp__config_name_is_valid(d->display_name)) abort();
      if (o.base_dir && d->type == MCP_SERVER_STDIO && (!d->s.cwd || d->s.cwd[0] != '/')) abort();
      mcp_client_options *co = NULL;
      if (mcp__config_client_options(d, &co, NULL) == MCP_OK && !co) abort();
      mcp_client_options_free(co);
      mcp_server_def *c = mcp__server_def_dup(d);
      char *canon = NULL;
      if (c && mcp__config_canonical_json(c, &canon) == MCP_OK) {
        if (strcmp(c->hash, d->hash) != 0) abort();
        mcp__free(canon);
      }
      mcp__server_def_free(c);
    }
    for (size_t i = 0; i < set->ndiags; i++)
      if (!set->diags[i].message) abort();
    mcp__config_free(set);
  }

  char *s = malloc(len + 1);
  if (!s) return 0;
  memcpy(s, text, len);
  s[len] = '\0';
  char *out = NULL;
  if (mcp__config_expand(s, fuzz_getenv, NULL, &out) == MCP_OK) {
    /* Without any "$" the text comes back unchanged. */
    if (!strchr(s, '$') && strcmp(s, out) != 0) abort();
    mcp__free(out);
  }
  free(s);
  return 0;
}
