import type { ComponentChildren } from 'preact';

export function Stat({ label, children, testId, hint }: { label: string; children: ComponentChildren; testId: string; hint?: string }) {
  return (
    <div class="stat" data-testid={testId} title={hint}>
      <dt>{label}</dt>
      <dd data-testid={`${testId}-value`}>{children}</dd>
    </div>
  );
}
