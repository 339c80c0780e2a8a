const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>' };
const unescape = (text: string) => text.replace(/&(amp|lt|gt);/g, (entity) => ENTITIES[entity]);

/**
 * The parts of a search snippet: the API sends HTML-escaped text with each searched word in
 * `<mark>…</mark>`; it is split here into plain strings and marked strings, so the page renders
 * text nodes and never sets HTML from an answer.
 */
export function snippetParts(snippet: string): { text: string; marked: boolean }[] {
  const parts: { text: string; marked: boolean }[] = [];
  const pattern = /<mark>(.*?)<\/mark>/gs;
  let last = 0;
  for (const hit of snippet.matchAll(pattern)) {
    if (hit.index > last) parts.push({ text: unescape(snippet.slice(last, hit.index)), marked: false });
    parts.push({ text: unescape(hit[1]), marked: true });
    last = hit.index + hit[0].length;
  }
  if (last < snippet.length) parts.push({ text: unescape(snippet.slice(last)), marked: false });
  return parts;
}
