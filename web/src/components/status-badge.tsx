import type { IssueStatus } from '../api/types.js';

const LABELS: Record<IssueStatus, string> = { open: 'Open', in_progress: 'In review', resolved: 'Resolved', dismissed: 'Dismissed' };

export function StatusBadge({ status }: { status: IssueStatus }) {
  return (
    <span class={`badge status-${status}`} data-status={status} data-testid="issue-status">
      {LABELS[status] ?? status}
    </span>
  );
}

export function TagChip({ name, color }: { name: string; color: string }) {
  return (
    <span class="tag-chip">
      <span class="tag-dot" style={{ background: /^#[0-9a-f]{3,8}$/i.test(color) ? color : '#888' }} aria-hidden="true" />
      {name}
    </span>
  );
}
