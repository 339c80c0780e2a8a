import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAccount, checkRepository } from '../../../src/workspace/code-host/code-host-client.js';
import { commitUrlBase } from '../../../src/workspace/code-host/code-host-store.js';
import { TokenSeal } from '../../../src/workspace/code-host/token-seal.js';

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/user' && req.headers.authorization === 'Bearer limited') {
      res.writeHead(403, { 'x-ratelimit-remaining': '0' }).end('{}');
    } else if (req.url === '/user' && req.headers.authorization === 'Bearer nologin') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": 1}');
    } else if (req.url === '/user' && req.headers.authorization === 'Bearer html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    } else if (req.url === '/repos/a%2Fb/c') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"c"}');
    } else {
      res.writeHead(418).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('code-host health check', () => {
  it('maps each failure to a stable code', async () => {
    expect(await checkAccount(base, 'limited')).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(await checkAccount(base, 'nologin')).toMatchObject({ ok: false, code: 'invalid_response' });
    expect(await checkAccount(base, 'html')).toMatchObject({ ok: false, code: 'invalid_response' });
    expect(await checkAccount(base, 'other')).toMatchObject({ ok: false, code: 'unexpected_status' });
    expect(await checkAccount(`http://127.0.0.1:${await closedPort()}`, 'x')).toMatchObject({ ok: false, code: 'unreachable' });
  });

  it('escapes path parts and falls back to the requested names', async () => {
    expect(await checkRepository(base, 't', 'a/b', 'c')).toEqual({ ok: true, value: { owner: 'a/b', name: 'c', html_url: null } });
  });

  it('derives commit_url_base from the repository, the account or the API base', () => {
    const repo = { repository_owner: 'o', repository_name: 'r' };
    expect(commitUrlBase({ ...repo, repository_html_url: 'https://gh.example/o/r/', account_html_url: null }, 'https://api.github.com')).toBe('https://gh.example/o/r/commit');
    expect(commitUrlBase({ ...repo, repository_html_url: null, account_html_url: 'https://git.corp/me' }, 'https://api.github.com')).toBe('https://git.corp/o/r/commit');
    expect(commitUrlBase({ ...repo, repository_html_url: null, account_html_url: null }, 'https://api.github.com')).toBe('https://github.com/o/r/commit');
    expect(commitUrlBase({ repository_owner: null, repository_name: null, repository_html_url: null, account_html_url: null }, 'https://api.github.com')).toBeNull();
  });
});

describe('token seal', () => {
  it('round-trips under one key and refuses another key', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seal-'));
    const a = TokenSeal.fromConfig('secret-a', dir);
    const sealed = a.seal('ghp_token');
    expect(sealed).not.toContain('ghp_token');
    expect(a.open(sealed)).toBe('ghp_token');
    expect(TokenSeal.fromConfig('secret-b', dir).open(sealed)).toBeNull();
    // Without a configured secret a key is generated once in the data directory and reused.
    const generated = TokenSeal.fromConfig(null, dir).seal('x');
    expect(TokenSeal.fromConfig(null, dir).open(generated)).toBe('x');
    expect(fs.statSync(path.join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(a.open('garbage')).toBeNull();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
