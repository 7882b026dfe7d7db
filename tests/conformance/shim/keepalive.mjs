// SPDX-License-Identifier: MIT
// keepalive.mjs: the suite's mock servers keep idle connections open for
// 60 s instead of Node's 5 s.
//
// A --requirements run starts every scenario of a set at once in this one
// Node process; on 2 cores its event loop has been measured to stall for
// 5-14 s at the start.  A keep-alive timer that expires during such a
// stall runs before the request already waiting on that connection is
// read, and Node then destroys the socket with the request unread: the
// client sees "connection reset by peer" for a request it sent within
// milliseconds of the previous response.  mcpconn does not resend a POST
// the server may have run (RFC 9110 9.2.2), so such a reset fails the
// scenario.  The race is the harness's own (a stalled server timing out a
// connection that was idle only on its side), so the mock servers get a
// keep-alive long enough to outlast the stall.
import http from 'node:http';

const KEEPALIVE_MS = 60000;
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  if (this.keepAliveTimeout < KEEPALIVE_MS) this.keepAliveTimeout = KEEPALIVE_MS;
  return listen.apply(this, args);
};
