import { ApiError, withQuery } from './client.js';
import { getApiKey } from '../session.js';

/**
 * Downloads a streamed export with the key of this tab: the API wants the key as a bearer header,
 * which a plain link cannot send, so the file is fetched, gathered as a Blob (Chromium keeps a large
 * one on disk, not in memory) and handed to the browser as a download. The key never goes into a
 * URL (history, logs, a shared link). `onProgress` hears the bytes received so far.
 *
 * An export that fails before its first byte answers `{detail, code}` (thrown as ApiError); one cut
 * off later ends the body early, which the read below throws, so a partial file is never saved.
 */
export async function downloadExport(path: string, query: Record<string, string>, onProgress: (bytes: number) => void): Promise<string> {
  const key = getApiKey();
  let response: Response;
  try {
    response = await fetch(`/api${withQuery(path, query)}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  } catch (error) {
    throw new ApiError(0, `The service did not answer (${(error as Error).message})`, 'network_error');
  }
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => ({}))) as { detail?: unknown; code?: unknown };
    throw new ApiError(response.status, typeof body.detail === 'string' ? body.detail : `HTTP ${response.status}`, typeof body.code === 'string' ? body.code : null);
  }
  const parts: Uint8Array[] = [];
  let bytes = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      bytes += value.byteLength;
      onProgress(bytes);
    }
  } catch (error) {
    throw new ApiError(0, `The export was cut off after ${bytes} bytes (${(error as Error).message}); nothing was saved`, 'export_aborted');
  }
  const filename = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'lookout-export';
  const url = URL.createObjectURL(new Blob(parts as BlobPart[], { type: response.headers.get('content-type') ?? 'application/octet-stream' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  // The browser starts the download from the URL on click; a minute is ample before it is released.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return filename;
}
