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
// DPoP (RFC 9449): POST /control/dpop?nonce=N makes the metadata list
// ES256 in dpop_signing_alg_values_supported, /token verify the proof (its
// own check: node:crypto, the jwk, htm/htu/iat/jti) and issue DPoP tokens
// bound to the key's thumbprint, and /mcp demand "DPoP" with a proof whose
// ath and key match.  N: none, as, rs, both (ask once for a nonce, then
// accept it), as-always, rs-always (refuse every proof with a new nonce).
// stats: dpopTokenProofs, dpopMcpProofs, badProofs (+ lastBadProof),
// asNonceChallenges, rsNonceChallenges.  /token also takes the RFC 7523
// jwt-bearer grant (stats.jwtBearer; the assertion is not checked).
// Step-up: the tool "admin" needs scope mcp:write and answers 403
// insufficient_scope otherwise; stats.scopes lists each /authorize scope.  Tokens contain "SECRET" so tests can look for
// leaks.  Prints MCPCONN_TEST_PORT=<port> first; exits when stdin closes.
import http from 'node:http';
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';

let port = 0;
const base = () => `http://127.0.0.1:${port}`;
const stats = {
  prm: 0, asMetadata: 0, register: 0, authorize: 0, tokenCode: 0, tokenRefresh: 0,
  unauthorized: 0, mcpPosts: 0, tokenInQuery: 0, badPkce: 0, missingResource: 0,
  oidcMetadata: 0, forbidden: 0, scopes: [],
  dpopTokenProofs: 0, dpopMcpProofs: 0, badProofs: 0, lastBadProof: '', asNonceChallenges: 0,
  rsNonceChallenges: 0, jwtBearer: 0,
};
let dpopMode = null; // null: DPoP off; else the nonce mode
let asNonce = null, rsNonce = null;
const jtis = new Set();
const bound = new Map(); // DPoP access token -> key thumbprint
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

function issue(res, scope, jkt) {
  const at = newToken('at'), rt = newToken('rt');
  access.set(at, scope || 'mcp:read');
  refresh.set(rt, scope || 'mcp:read');
  if (jkt) bound.set(at, jkt);
  json(res, 200, { access_token: at, token_type: jkt ? 'DPoP' : 'Bearer', expires_in: 3600, refresh_token: rt, scope: scope || 'mcp:read' });
}

// A DPoP proof checked as RFC 9449 section 4.3 says; returns the key's
// RFC 7638 thumbprint and the claims, or throws the reason.
function checkProof(proof, htm, htu, token) {
  if (!proof || proof.includes(',')) throw new Error('missing or multiple DPoP headers');
  const [h64, c64, s64] = proof.split('.');
  const hdr = JSON.parse(Buffer.from(h64, 'base64url'));
  const cl = JSON.parse(Buffer.from(c64, 'base64url'));
  if (hdr.typ !== 'dpop+jwt' || hdr.alg !== 'ES256') throw new Error(`typ ${hdr.typ} alg ${hdr.alg}`);
  if (!hdr.jwk || hdr.jwk.d !== undefined || hdr.jwk.kty !== 'EC' || hdr.jwk.crv !== 'P-256') throw new Error('bad jwk');
  const key = createPublicKey({ key: hdr.jwk, format: 'jwk' });
  if (!verify('sha256', Buffer.from(`${h64}.${c64}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s64, 'base64url')))
    throw new Error('signature');
  if (cl.htm !== htm) throw new Error(`htm ${cl.htm}`);
  if (cl.htu !== htu) throw new Error(`htu ${cl.htu} != ${htu}`);
  if (typeof cl.iat !== 'number' || Math.abs(cl.iat - Date.now() / 1000) > 60) throw new Error('iat');
  if (typeof cl.jti !== 'string' || jtis.has(cl.jti)) throw new Error('jti missing or reused');
  jtis.add(cl.jti);
  if (token !== undefined && cl.ath !== b64url(createHash('sha256').update(token).digest())) throw new Error('ath');
  if (token === undefined && cl.ath !== undefined) throw new Error('ath on a token request');
  const { crv, kty, x, y } = hdr.jwk;
  const jkt = b64url(createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest());
  return { jkt, cl };
}
const badProof = (res, status, why, hdrs = {}) => {
  stats.badProofs++;
  stats.lastBadProof = why;
  return json(res, status, { error: 'invalid_dpop_proof', error_description: why }, hdrs);
};
// true when the nonce in |cl| is refused (the answer is sent).
function nonceRefused(res, cl, which) {
  const always = dpopMode === `${which}-always`;
  if (!always && dpopMode !== which && dpopMode !== 'both') return false;
  const cur = which === 'as' ? asNonce : rsNonce;
  if (!always && cur && cl.nonce === cur) return false;
  const n = b64url(randomBytes(9));
  if (which === 'as') { asNonce = n; stats.asNonceChallenges++; return json(res, 400, { error: 'use_dpop_nonce' }, { 'DPoP-Nonce': n }), true; }
  rsNonce = n;
  stats.rsNonceChallenges++;
  json(res, 401, { error: 'use_dpop_nonce' }, { 'DPoP-Nonce': n, 'WWW-Authenticate': 'DPoP error="use_dpop_nonce", algs="ES256"' });
  return true;
}

const asMetadata = (issuer) => ({
  issuer, authorization_endpoint: `${base()}/authorize`, token_endpoint: `${base()}/token`,
  registration_endpoint: `${base()}/register`, response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token'], code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none'],
  ...(dpopMode !== null ? { dpop_signing_alg_values_supported: ['ES256'] } : {}),
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
    if (req.method === 'POST' && path === '/control/dpop') {
      dpopMode = url.searchParams.get('nonce') || 'none';
      return json(res, 200, {});
    }
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
      let jkt;
      if (dpopMode !== null) {
        let r;
        try { r = checkProof(req.headers.dpop, 'POST', `${base()}/token`); } catch (e) { return badProof(res, 400, e.message); }
        stats.dpopTokenProofs++;
        if (nonceRefused(res, r.cl, 'as')) return;
        jkt = r.jkt;
      }
      if (p.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
        stats.jwtBearer++;
        if (!p.get('assertion')) return json(res, 400, { error: 'invalid_request' });
        return issue(res, p.get('scope'), jkt);
      }
      if (p.get('grant_type') === 'authorization_code') {
        stats.tokenCode++;
        const c = codes.get(p.get('code'));
        codes.delete(p.get('code'));
        const v = p.get('code_verifier') || '';
        if (!c || c.method !== 'S256' || b64url(createHash('sha256').update(v).digest()) !== c.challenge) {
          stats.badPkce++;
          return json(res, 400, { error: 'invalid_grant', error_description: 'bad code or verifier' });
        }
        return issue(res, c.scope, jkt);
      }
      if (p.get('grant_type') === 'refresh_token') {
        stats.tokenRefresh++;
        const rt = p.get('refresh_token');
        if (!refresh.has(rt)) return json(res, 400, { error: 'invalid_grant' });
        const sc = refresh.get(rt);
        refresh.delete(rt);
        return issue(res, sc, jkt);
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (path !== '/mcp') return json(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') return res.writeHead(405, { Allow: 'POST' }).end();
    stats.mcpPosts++;
    let auth = req.headers.authorization || '';
    if (auth.startsWith('DPoP ') && bound.has(auth.slice(5))) {
      let r;
      try { r = checkProof(req.headers.dpop, 'POST', `${base()}/mcp`, auth.slice(5)); } catch (e) { return badProof(res, 401, e.message); }
      if (r.jkt !== bound.get(auth.slice(5))) return badProof(res, 401, 'key is not the token\'s');
      stats.dpopMcpProofs++;
      if (nonceRefused(res, r.cl, 'rs')) return;
      auth = `Bearer ${auth.slice(5)}`; // checked: on as a bearer would be
    } else if (bound.has(auth.slice(7))) {
      return badProof(res, 401, 'a DPoP token sent as Bearer');
    }
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
