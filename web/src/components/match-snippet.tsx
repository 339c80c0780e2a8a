import type { TraceListItem } from '../api/types.js';
import { snippetParts } from '../snippet-parts.js';

type Match = NonNullable<TraceListItem['match']>;

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
