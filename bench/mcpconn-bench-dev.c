/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-bench-dev: `mcpconn bench` as a program of its own, for working on
 * bin/mcpconn-bench.c before (or without) the CLI's dispatch.
 */
#include "mcpconn-bench.h"

int main(int argc, char **argv) { return mcpconn_bench_main(argc, argv); }
