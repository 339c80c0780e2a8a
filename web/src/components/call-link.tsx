import { callTracesHref } from '../drill-down.js';
import { Link } from './link.js';

/**
 * A model's or tool's name in an analytics table, linked to the runs that called it in the window
 * the view answered for (`window`, its echo): the trace list filtered by `model` or `tool`, with
 * that window as its start and end.
 */
export function CallLink({ projectId, window, filter, name }: { projectId: string; window: { start: string; end_exclusive: string }; filter: 'model' | 'tool'; name: string }) {
  const href = callTracesHref(projectId, window, filter, name);
  const text = <code>{name || '(unknown)'}</code>;
  return href ? (
    <Link href={href} title={`Runs that started in this window and called ${name}`}>
      {text}
    </Link>
  ) : (
    text
  );
}

/**
 * What a click on a name opens, said beside the links: the runs that started in the window, which
 * is not how every column of the table counts (docs/dashboard.md "What a drill-down lists").
 */
export function DrillDownNote({ what, counted }: { what: 'model' | 'tool'; counted: string }) {
  return (
    <p class="muted" data-testid="drill-down-note">
      A {what}&apos;s name opens the runs that <em>started</em> in this window and called it. {counted} count the calls made in the window, so a
      run that started just before it (or went on past its end) can make the two differ.
    </p>
  );
}
