/* SPDX-License-Identifier: MIT */
/*
 * fuzz_toml.c: libFuzzer target for the TOML-subset reader (mcp_toml.c).
 *
 * Input: a config.toml's text.  A parse either fails with a reason that
 * names a line (or says "out of memory") or gives an object whose JSON
 * form can be printed; the same bytes with a trailing newline parse the
 * same way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[200];
  json_object *o = mcp__toml_parse((const char *)data, size, why, sizeof(why));
  if (!o) {
    if (strncmp(why, "line ", 5) != 0 && strcmp(why, "out of memory") != 0) abort();
    return 0;
  }
  if (!json_object_is_type(o, json_type_object)) abort();
  const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
  /* A trailing newline changes nothing. */
  char *more = malloc(size + 1);
  if (more && s) {
    memcpy(more, data, size);
    more[size] = '\n';
    json_object *o2 = mcp__toml_parse(more, size + 1, why, sizeof(why));
    if (o2) {
      const char *s2 = json_object_to_json_string_ext(o2, JSON_C_TO_STRING_PLAIN);
      if (!s2 || strcmp(s, s2) != 0) abort();
      json_object_put(o2);
    } else if (strcmp(why, "out of memory") != 0) {
      abort();
    }
  }
  free(more);
  json_object_put(o);
  return 0;
}
