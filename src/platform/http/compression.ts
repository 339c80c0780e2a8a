import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

/**
 * gzip / brotli for what a browser downloads: the dashboard's assets and pages and the REST API's
 * JSON (a 50-trace list is tens of kilobytes). Left alone: OTLP ingestion and MCP (their clients
 * negotiate on their own terms, and MCP streams server-sent events, which a compressor would hold
 * back until its buffer fills), event streams anywhere, and bodies under 1 KiB.
 */
const UNCOMPRESSED_PREFIXES = ['/v1/', '/mcp'];

function shouldCompress(req: Request, res: Response): boolean {
  const path = req.originalUrl.split('?')[0];
  if (UNCOMPRESSED_PREFIXES.some((prefix) => path.startsWith(prefix))) return false;
  if (/^text\/event-stream/i.test(String(res.getHeader('Content-Type') ?? ''))) return false;
  return compression.filter(req, res);
}

export function responseCompression(): RequestHandler {
  return compression({ filter: shouldCompress, threshold: 1024 });
}
