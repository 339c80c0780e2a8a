import type { ComponentChildren } from 'preact';

/**
 * One figure with its label. `note` is a short visible qualifier under the label (what exactly is
 * counted, e.g. "model calls, not runs"), `hint` a longer explanation on hover.
 */
export function Stat({ label, children, testId, hint, note }: { label: string; children: ComponentChildren; testId: string; hint?: string; note?: string }) {
  return (
    <div class="stat" data-testid={testId} title={hint}>
      <dt>
        {label}
        {note && (
          <span class="stat-note" data-testid={`${testId}-note`}>
            {note}
          </span>
        )}
      </dt>
      <dd data-testid={`${testId}-value`}>{children}</dd>
    </div>
  );
}
