// SPDX-License-Identifier: MIT
// tests/interop/fetch-bridge.mjs: node:http (HTTP/1.1) or node:http2 (h2c)
// in front of a fetch-style handler (the SDK v2's createMcpHandler: a
// Request in, a Response out), shared by tests/interop/v2-dual-http.mjs and
// tests/interop/v2-tasks-server.mjs so both abort the same way:
//   readBody(req)                the request body, as a Buffer
//   toRequest(req, body)         the fetch Request for it
//   pipeResponse(req, res, out, h2)
//                                writes the handler's Response out (its head,
//                                less the fields HTTP/2 forbids; its body as
//                                it streams) and cancels it if the client
//                                goes away first, which aborts the handler's
//                                request (ctx.mcpReq.signal)
//   listenAndReport(srv)         listens on 127.0.0.1 and a free port, prints
//                                "MCPCONN_TEST_PORT=<port>"; exits when stdin
//                                closes

// Connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2).
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade',
                          'proxy-connection']);

export const readBody = async (req) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
};

export const toRequest = (req, body) => {
  const url = `http://${req.headers.host ?? req.headers[':authority']}${req.url}`;
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !k.startsWith(':')));
  const init = { method: req.method, headers };
  if (req.method !== 'GET' && req.method !== 'HEAD') init.body = body;
  return new Request(url, init);
};

export const pipeResponse = async (req, res, out, h2) => {
  res.writeHead(out.status, Object.fromEntries([...out.headers.entries()]
    .filter(([k]) => !h2 || !hopByHop.has(k.toLowerCase()))));
  if (!out.body) { res.end(); return; }
  const reader = out.body.getReader();
  // The client went away (HTTP/1.1: its connection closed, seen on res: an
  // HTTP/1.1 request "closes" as soon as its body is read; HTTP/2: the
  // stream was reset, seen on req): the handler's response is cancelled,
  // which aborts its request.
  let finished = false;
  const gone = () => { if (!finished) reader.cancel().catch(() => {}); };
  res.on('close', gone);
  if (h2) req.on('close', gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch { /* the client went away */ }
  finished = true;
  res.end();
};

export const listenAndReport = (srv) => {
  srv.listen(0, '127.0.0.1', () => {
    process.stdout.write(`MCPCONN_TEST_PORT=${srv.address().port}\n`);
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
};
