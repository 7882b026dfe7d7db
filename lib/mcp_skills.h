/* SPDX-License-Identifier: MIT */
/*
 * mcp_skills.h: internal view of the skills extension's client side
 * (mcp_skills.c): the skill list object and the calls the manager makes on
 * a server's client.
 */
#ifndef MCP_SKILLS_H
#define MCP_SKILLS_H

#include "mcp_int.h"
#include "mcp_skills_parse.h"

typedef struct mcp_skill_item {
  char *server; /* the manager's name of the server; NULL from a client */
  char *label;  /* how errors name the server: the manager's name, or serverInfo.name */
  mcp_skill_entry e;
} mcp_skill_item;

struct mcp_skill_list {
  mcp_skill_item *items;
  size_t n, cap;
};

/* An empty list, or NULL when out of memory. */
mcp_skill_list *mcp__skill_list_new(void);

/*
 * mcp__skills_list_into() runs skills/list on |c| (every page) and appends
 * its valid entries to |l|, tagged with |server| (NULL for a client's own
 * list); an invalid entry is left out with a warning naming the server,
 * the entry and the rule.  MCP_ENOTFOUND when the server does not declare
 * the extension (then nothing is sent); the errors of a list call.
 */
mcp_status mcp__skills_list_into(mcp_client *c, const char *server, const mcp_call_options *opts,
                                 mcp_skill_list *l, mcp_error *err);

/* mcp_client_load_skill() without the argument checks. */
mcp_status mcp__skill_load(mcp_client *c, const mcp_skill_item *it, const mcp_call_options *opts,
                           char **text, size_t *len, mcp_error *err);

/* mcp_client_read_skill_file() without the argument checks. */
mcp_status mcp__skill_read_file(mcp_client *c, const mcp_skill_item *it, const char *file,
                                const mcp_call_options *opts, char **data, size_t *len,
                                mcp_error *err);

#endif /* MCP_SKILLS_H */
