/* SPDX-License-Identifier: MIT */
/*
 * mcp_task_parse.h: reading a task's state from a server's result, in both
 * eras (mcp_tasks.h drives the tasks; this only reads).
 *
 *   legacy (2025-11-25 task utility): a task-augmented tools/call answers
 *     {"task":{Task}}; tasks/get and tasks/cancel answer the Task's members
 *     flat.  Task: taskId, status, statusMessage?, pollInterval? (ms).
 *   modern (io.modelcontextprotocol/tasks, SEP-2663): a tools/call answers
 *     {"resultType":"task", Task members flat}; tasks/get answers the Task
 *     flat with resultType "complete".  Task: taskId, status,
 *     statusMessage?, pollIntervalMs?, and by status: inputRequests
 *     (input_required), result (completed), error (failed).
 *
 * Pure: no I/O, no threads, no shared state.  Layer: pure (fuzzed by
 * fuzz/fuzz_task.c).
 */
#ifndef MCP_TASK_PARSE_H
#define MCP_TASK_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp_int.h"

/* A task's state as read; every string own (mcp__free). */
typedef struct mcp_task_state {
  char *id; /* taskId: a non-empty string */
  mcp_task_status status;
  char *message;       /* statusMessage, or NULL */
  int64_t poll_ms;     /* pollInterval(Ms), or -1 when absent */
  char *result;        /* modern completed: the result's compact JSON text, or NULL */
  char *inputs;        /* modern input_required: inputRequests' compact text, or NULL */
  bool has_error;      /* modern failed: an error object was given */
  int64_t error_code;  /* its code (0 when absent or not an integer) */
  char *error_message; /* its message, or NULL */
} mcp_task_state;

void mcp__task_state_clear(mcp_task_state *s);

/* Which answer |text| is. */
typedef enum mcp_task_shape {
  MCP_TASK_SHAPE_CREATED, /* the tools/call that made the task */
  MCP_TASK_SHAPE_STATE    /* tasks/get (or the legacy tasks/cancel) */
} mcp_task_shape;

/*
 * mcp__task_parse() reads |len| bytes of |text| (a result object's JSON),
 * as |modern| or legacy, in |shape|.  MCP_OK fills |out| (cleared first);
 * MCP_EPROTO says in |err| what is wrong (not an object, no taskId, an
 * unknown status, a member of the wrong type); MCP_ENOMEM.  |out| is left
 * empty on error.
 */
mcp_status mcp__task_parse(const char *text, size_t len, bool modern, mcp_task_shape shape,
                           mcp_task_state *out, mcp_error *err);

/* The wire word of |st| ("working", ...), or "unknown". */
const char *mcp__task_status_word(mcp_task_status st);

#endif /* MCP_TASK_PARSE_H */
