// SPDX-License-Identifier: MIT
// oauth-http.mjs: an MCP server that requires OAuth, with its own
// authorization server on the same origin (plain node:http), for
// tests/check_oauth.c.  Serves RFC 9728 metadata, RFC 8414 metadata,
// dynamic registration, /authorize (redirects at once, as a browser that
// is already logged in would see), /token (authorization_code with PKCE
// S256 checked, refresh_token) and a stateless MCP endpoint at /mcp that
// answers 401 + WWW-Authenticate without a valid Bearer token.
// GET /stats returns counters; POST /control/expire invalidates every access
// token (refresh tokens stay good); POST /control/revoke invalidates both;
// POST /control/deny makes /authorize answer error=access_denied; POST
// /control/stall-token makes /token never answer.
// RFC 9207: POST /control/iss?mode=M&advertise=0|1 makes /authorize put iss in
// its redirect (M: correct, omit, wrong, slash (a trailing '/'), case
// (upper-case scheme and host), pct (a percent-encoded digit)) and the
// metadata advertise authorization_response_iss_parameter_supported.  POST
// /control/metadata-issuer?value=V[&oidc=1] makes the RFC 8414 document
// name issuer V (and /.well-known/openid-configuration serve good metadata).
// Step-up: the tool "admin" needs scope mcp:write and answers 403
// insufficient_scope otherwise; stats.scopes lists each /authorize scope.  Tokens contain "SECRET" so tests can look for
// leaks.  Prints MCPCONN_TEST_PORT=<port> first; exits when stdin closes.
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';

let port = 0;
const base = () => `http://127.0.0.1:${port}`;
const stats = {
  prm: 0, asMetadata: 0, register: 0, authorize: 0, tokenCode: 0, tokenRefresh: 0,
  unauthorized: 0, mcpPosts: 0, tokenInQuery: 0, badPkce: 0, missingResource: 0,
  oidcMetadata: 0, forbidden: 0, scopes: [],
};
const codes = new Map();      // code -> { challenge, clientId, redirect }
const access = new Map();     // valid access tokens -> granted scope
const refresh = new Map();    // valid refresh tokens -> scope
let deny = false;
let stallToken = false; // /token never answers
let issMode = 'omit', issAdvertise = false;
let metadataIssuer = null, oidcGood = false;
const b64url = (b) => b.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const newToken = (kind) => `${kind}-SECRET-${b64url(randomBytes(12))}`;

const json = (res, status, obj, headers = {}) => {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
};

function issue(res, scope) {
  const at = newToken('at'), rt = newToken('rt');
  access.set(at, scope || 'mcp:read');
  refresh.set(rt, scope || 'mcp:read');
  json(res, 200, { access_token: at, token_type: 'Bearer', expires_in: 3600, refresh_token: rt, scope: scope || 'mcp:read' });
}

const asMetadata = (issuer) => ({
  issuer, authorization_endpoint: `${base()}/authorize`, token_endpoint: `${base()}/token`,
  registration_endpoint: `${base()}/register`, response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token'], code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none'],
  ...(issAdvertise ? { authorization_response_iss_parameter_supported: true } : {}),
});

function issFor(mode) {
  const u = new URL(base());
  switch (mode) {
    case 'correct': return base();
    case 'wrong': return 'https://evil.example.com';
    case 'slash': return `${base()}/`;
    case 'case': return `HTTP://127.0.0.1:${u.port}`;
    case 'pct': return `http://%3127.0.0.1:${u.port}`; // %31 is '1'
    default: return null;
  }
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, base());
  const path = url.pathname;
  if (url.searchParams.has('access_token')) stats.tokenInQuery++;
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (req.method === 'GET' && path === '/stats') return json(res, 200, stats);
    if (req.method === 'POST' && path === '/control/expire') { access.clear(); return json(res, 200, {}); }
    if (req.method === 'POST' && path === '/control/revoke') { access.clear(); refresh.clear(); return json(res, 200, {}); }
    if (req.method === 'POST' && path === '/control/deny') { deny = true; return json(res, 200, {}); }
    if (req.method === 'POST' && path === '/control/stall-token') { stallToken = true; return json(res, 200, {}); }
    if (req.method === 'POST' && path === '/control/iss') {
      issMode = url.searchParams.get('mode') || 'omit';
      issAdvertise = url.searchParams.get('advertise') === '1';
      return json(res, 200, {});
    }
    if (req.method === 'POST' && path === '/control/metadata-issuer') {
      metadataIssuer = url.searchParams.get('value');
      oidcGood = url.searchParams.get('oidc') === '1';
      return json(res, 200, {});
    }
    if (req.method === 'GET' && path === '/.well-known/openid-configuration' && oidcGood) {
      stats.oidcMetadata++;
      return json(res, 200, asMetadata(base()));
    }
    if (req.method === 'GET' && path === '/.well-known/oauth-protected-resource/mcp') {
      stats.prm++;
      return json(res, 200, { resource: `${base()}/mcp`, authorization_servers: [base()], scopes_supported: ['mcp:read'] });
    }
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      stats.asMetadata++;
      return json(res, 200, asMetadata(metadataIssuer ?? base()));
    }
    if (req.method === 'POST' && path === '/register') {
      stats.register++;
      const m = JSON.parse(body || '{}');
      // As an OIDC server enforces SEP-837: a loopback redirect is a native
      // application's, and omitting application_type means "web".
      const loopback = (m.redirect_uris || []).every((u) => /^http:\/\/(127\.|localhost|\[::1\])/.test(u));
      if (loopback && m.application_type !== 'native')
        return json(res, 400, { error: 'invalid_redirect_uri',
                                error_description: `application_type ${m.application_type ?? '(omitted: web)'} with a loopback redirect` });
      return json(res, 201, { client_id: `client-${stats.register}`, redirect_uris: m.redirect_uris || [], token_endpoint_auth_method: 'none' });
    }
    if (req.method === 'GET' && path === '/authorize') {
      stats.authorize++;
      const q = url.searchParams;
      const redirect = new URL(q.get('redirect_uri'));
      stats.scopes.push(q.get('scope') || '');
      if (deny) {
        redirect.searchParams.set('error', 'access_denied');
      } else {
        if (!q.get('resource')) stats.missingResource++;
        const code = b64url(randomBytes(9));
        codes.set(code, { challenge: q.get('code_challenge'), method: q.get('code_challenge_method'), scope: q.get('scope') });
        redirect.searchParams.set('code', code);
      }
      if (q.get('state')) redirect.searchParams.set('state', q.get('state'));
      const iss = issFor(issMode);
      if (iss !== null) redirect.searchParams.set('iss', iss);
      res.writeHead(302, { Location: redirect.toString() });
      return res.end();
    }
    if (req.method === 'POST' && path === '/token') {
      const p = new URLSearchParams(body);
      if (!p.get('resource')) stats.missingResource++;
      if (stallToken) { stats.stalled = (stats.stalled || 0) + 1; return; } // never answered
      if (p.get('grant_type') === 'authorization_code') {
        stats.tokenCode++;
        const c = codes.get(p.get('code'));
        codes.delete(p.get('code'));
        const v = p.get('code_verifier') || '';
        if (!c || c.method !== 'S256' || b64url(createHash('sha256').update(v).digest()) !== c.challenge) {
          stats.badPkce++;
          return json(res, 400, { error: 'invalid_grant', error_description: 'bad code or verifier' });
        }
        return issue(res, c.scope);
      }
      if (p.get('grant_type') === 'refresh_token') {
        stats.tokenRefresh++;
        const rt = p.get('refresh_token');
        if (!refresh.has(rt)) return json(res, 400, { error: 'invalid_grant' });
        const sc = refresh.get(rt);
        refresh.delete(rt);
        return issue(res, sc);
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (path !== '/mcp') return json(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') return res.writeHead(405, { Allow: 'POST' }).end();
    stats.mcpPosts++;
    const auth = req.headers.authorization || '';
    if (!auth.startsWith('Bearer ') || !access.has(auth.slice(7))) {
      stats.unauthorized++;
      return json(res, 401, { error: 'invalid_token' }, {
        'WWW-Authenticate': `Bearer error="invalid_token", resource_metadata="${base()}/.well-known/oauth-protected-resource/mcp"`,
      });
    }
    let msg;
    try { msg = JSON.parse(body); } catch { return json(res, 400, { error: 'bad json' }); }
    if (msg.method === 'tools/call' && msg.params?.name === 'admin' &&
        !(access.get(auth.slice(7)) || '').split(' ').includes('mcp:write')) {
      stats.forbidden++;
      return json(res, 403, { error: 'insufficient_scope' }, {
        'WWW-Authenticate': `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="${base()}/.well-known/oauth-protected-resource/mcp"`,
      });
    }
    if (msg.id === undefined) return res.writeHead(202).end();
    if (msg.method === 'initialize') {
      return json(res, 200, { jsonrpc: '2.0', id: msg.id, result: {
        protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'oauth-http', version: '1.0.0' } } });
    }
    if (msg.method === 'tools/list') {
      return json(res, 200, { jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] } });
    }
    return json(res, 200, { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'ok' }] } });
  });
});

server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  process.stdout.write(`MCPCONN_TEST_PORT=${port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
