/**
 * When a trace's raw content has expired under its project's retention (docs/data-lifecycle.md
 * "Retention"): span attributes and events, agent input and output, the tool call list with its
 * messages, log records, search text. The engine removes such content at its next TTL merge; reads
 * treat it as absent from the moment it expires, by the setting in force now, so a shortened setting
 * shows at once. Plain data, so it travels to the compute pool with a trace read.
 */

const DAY_MS = 86_400_000;

/** Content that started before these instants (ms since the epoch) has expired: per project, else the tenant's default. */
export interface ContentCutoff {
  defaultMs: number;
  projects: Record<string, number>;
}

/** The cutoff of content kept `days` days, at `nowMs`. */
export const cutoffMs = (days: number, nowMs: number): number => nowMs - days * DAY_MS;

/** Whether content of `projectId` that started at `startMs` has expired. No cutoff: nothing has. */
export function contentExpired(cutoff: ContentCutoff | null | undefined, projectId: string, startMs: number): boolean {
  if (!cutoff) return false;
  return startMs < (cutoff.projects[projectId] ?? cutoff.defaultMs);
}
