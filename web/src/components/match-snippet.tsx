import type { TraceListItem } from '../api/types.js';

type Match = NonNullable<TraceListItem['match']>;

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

const FIELD_LABEL: Record<Match['field'], string> = { input: 'input', output: 'output', tool: 'tool', error: 'error', name: 'span name', attribute: 'attribute' };

/** Where a trace matched the search: the field and the snippet with the words highlighted. */
export function MatchSnippet({ match }: { match: Match }) {
  return (
    <div class="match-snippet" data-testid="match-snippet" data-field={match.field}>
      <span class="match-field">{FIELD_LABEL[match.field]}</span>{' '}
      {snippetParts(match.snippet).map((part, i) => (part.marked ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>))}
    </div>
  );
}
