import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Response } from 'express';

export interface ExportMeta {
  contentType: string;
  /** Plain ASCII from exportFilename (event-export.ts): no quoting needed. */
  filename: string;
}

/**
 * Sends an export that already produced its first bytes: a download (Content-Disposition) that is
 * never cached, streamed through `pipeline`, so the engine is read only as fast as the client
 * takes the bytes, and a client that goes away cancels the statement. A failure after the first
 * byte cannot become an error body any more (the status is sent): the response is aborted instead,
 * which the client sees as a cut connection (an unterminated chunked body), never as a complete
 * file (docs/data-lifecycle.md "Getting your data out").
 */
export async function sendExport(res: Response, body: Readable, meta: ExportMeta): Promise<void> {
  if (res.headersSent) {
    // The request deadline answered while the engine prepared its first rows: nobody reads this one.
    body.destroy();
    return;
  }
  res.status(200).set({
    'Content-Type': meta.contentType,
    'Content-Disposition': `attachment; filename="${meta.filename}"`,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  try {
    await pipeline(body, res);
  } catch (error) {
    // pipeline has destroyed both ends already; the reader sees the cut.
    res.req.log?.warn({ err: error, client_gone: res.req.destroyed }, 'export ended before its last row; the response was aborted');
  }
}
