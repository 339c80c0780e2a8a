import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/app/project-root.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { buildWebOnce } from './built-web.js';

/**
 * What goes over the wire to a browser: the bundle, the page and the API's JSON compressed when the
 * client asks for it (gzip or brotli), no source map published, and the bundle within its budget.
 */
let svc: TestService;
let assets: string[];
const webDir = path.join(projectRoot, 'dist', 'web');
/** The dashboard's JavaScript budget, compressed as served (bench/README.md records the size). */
const JS_BUDGET_GZIP_BYTES = 80 * 1024;

beforeAll(async () => {
  buildWebOnce();
  assets = fs.readdirSync(path.join(webDir, 'assets'));
  svc = await startTestService();
}, 240_000);

afterAll(async () => {
  await svc?.stop();
});

/** A raw GET (no automatic decompression), so the test sees the bytes and headers as sent. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === 'gzip') return zlib.gunzipSync(body);
  if (encoding === 'br') return zlib.brotliDecompressSync(body);
  return body;
}

describe('compression and published assets', () => {
  it('sends the bundle, the stylesheet and the page compressed, gzip or brotli as asked', async () => {
    const script = assets.find((f) => f.endsWith('.js'))!;
    const style = assets.find((f) => f.endsWith('.css'))!;
    for (const file of [script, style]) {
      const plain = fs.readFileSync(path.join(webDir, 'assets', file));
      for (const encoding of ['gzip', 'br']) {
        const res = await rawGet(`${svc.url}/assets/${file}`, { 'accept-encoding': encoding });
        expect(res.status, file).toBe(200);
        expect(res.headers['content-encoding'], `${file} ${encoding}`).toBe(encoding);
        expect(res.headers.vary).toMatch(/accept-encoding/i);
        expect(res.body.length).toBeLessThan(plain.length);
        expect(decode(res.body, encoding).equals(plain)).toBe(true);
      }
      // A client that does not ask gets the bytes as they are.
      const identity = await rawGet(`${svc.url}/assets/${file}`, {});
      expect(identity.headers['content-encoding']).toBeUndefined();
      expect(identity.body.equals(plain)).toBe(true);
    }
    const page = await rawGet(`${svc.url}/p/x/traces`, { accept: 'text/html', 'accept-encoding': 'gzip, deflate, br' });
    expect(page.status).toBe(200);
    // index.html is small; whether it clears the 1 KiB threshold decides, and when it does it is compressed.
    if (Number(page.headers['content-length'] ?? page.body.length) >= 1024) expect(page.headers['content-encoding']).toBeDefined();
  });

  it('sends API JSON compressed', async () => {
    const plain = await rawGet(`${svc.url}/api/openapi.json`, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    for (const encoding of ['gzip', 'br']) {
      const res = await rawGet(`${svc.url}/api/openapi.json`, { 'accept-encoding': encoding });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(JSON.parse(decode(res.body, encoding).toString('utf8'))).toEqual(JSON.parse(plain.body.toString('utf8')));
    }
    // A page of traces: a project with enough runs for more than a kilobyte of JSON.
    const project = await svc.newProject('compression');
    const list = await rawGet(`${svc.url}/api/projects/${project.id}/traces`, { 'accept-encoding': 'gzip', authorization: `Bearer ${svc.adminKey}` });
    expect(list.status).toBe(200);
    expect(JSON.parse(decode(list.body, list.headers['content-encoding']).toString('utf8')).traces).toEqual([]);
  });

  it('publishes no source map and keeps the JavaScript under its compressed budget', async () => {
    expect(assets.filter((f) => f.endsWith('.map'))).toEqual([]);
    const script = assets.find((f) => f.endsWith('.js'))!;
    expect(fs.readFileSync(path.join(webDir, 'assets', script), 'utf8')).not.toMatch(/sourceMappingURL/);
    const map = await rawGet(`${svc.url}/assets/${script}.map`, {});
    expect(map.status).toBe(404);
    const gzipped = zlib.gzipSync(fs.readFileSync(path.join(webDir, 'assets', script))).length;
    expect(gzipped).toBeLessThan(JS_BUDGET_GZIP_BYTES);
  });
});
