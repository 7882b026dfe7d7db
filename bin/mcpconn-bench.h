/* SPDX-License-Identifier: MIT */
/*
 * mcpconn-bench.h: the `mcpconn bench` subcommand, the library's own load
 * generator (bin/mcpconn-bench.c).  It uses the public API only.
 */
#ifndef MCPCONN_BENCH_H
#define MCPCONN_BENCH_H

/*
 * mcpconn_bench_main() runs `mcpconn bench` with |argv|[0] being the
 * subcommand's name ("bench") and the options after it; a caller passing
 * the whole command line with argv[1] == "bench" works too.
 * Prints one JSON object on one line on stdout, logs on stderr.
 * Threads: call from the main thread, once per process (it starts threads
 *   of its own and joins them all before returning).
 * Returns: the exit code: 0 when every call succeeded, 1 when some failed,
 *   2 on a usage error, 3 when the server could not be connected.
 */
int mcpconn_bench_main(int argc, char **argv);

#endif /* MCPCONN_BENCH_H */
