import { ValidationError } from '../../platform/http/errors.js';
import { GuidanceError, parseClauses, type MonitorDefinition } from './monitor-signal.js';
import type { IssueCriteriaInput, MonitorKind } from './monitor-schemas.js';

/**
 * issue_criteria of a tool monitor (how a call is recognized as an issue):
 * - an object `{error?: boolean (default true), output_patterns?: string[]}`: a call matches when it
 *   failed (error true) or its output contains one of the patterns (case-insensitive);
 * - or a string of phrases (separated by new lines, `;` or `,`), read as output patterns, with error true.
 * At least one criterion must be able to match.
 */
export type { IssueCriteriaInput };

function outputPatterns(criteria: IssueCriteriaInput): string[] {
  if (typeof criteria === 'string') {
    const parts = criteria.split(/[\n;,]/).map((p) => p.trim().replace(/^"(.*)"$|^'(.*)'$/, '$1$2').toLowerCase()).filter(Boolean);
    if (parts.length > 50) throw new GuidanceError('issue_criteria: at most 50 patterns');
    return parts;
  }
  return (criteria.output_patterns ?? []).map((p, i) => {
    const text = p.trim().toLowerCase();
    if (!text) throw new GuidanceError(`issue_criteria.output_patterns.${i}: must not be blank`);
    return text;
  });
}

export interface DefinitionInput {
  kind: MonitorKind;
  seed_hint?: string | null;
  expected_behavior?: string | null;
  tool_name?: string | null;
  issue_criteria?: IssueCriteriaInput | null;
}

/** Compiles creation guidance into what the evaluator runs; every refusal is a 400 naming the field. */
export function compileDefinition(input: DefinitionInput): MonitorDefinition {
  try {
    if (input.kind === 'tool') {
      const toolName = input.tool_name?.trim();
      if (!toolName) throw new GuidanceError('tool_name is required for a tool monitor');
      if (input.issue_criteria === undefined || input.issue_criteria === null) throw new GuidanceError('issue_criteria is required for a tool monitor');
      const criteria = input.issue_criteria;
      const error = typeof criteria === 'string' ? true : (criteria.error ?? true);
      const patterns = outputPatterns(criteria);
      if (!error && patterns.length === 0) throw new GuidanceError('issue_criteria: give output_patterns or leave error true, or no call can match');
      // Guidance of a tool monitor is still parsed, so a malformed hint is refused the same way.
      parseClauses(input.seed_hint, 'seed_hint');
      parseClauses(input.expected_behavior, 'expected_behavior');
      return { kind: 'tool', tool_name: toolName, error, output_patterns: patterns };
    }
    if (input.tool_name !== undefined && input.tool_name !== null) throw new GuidanceError('tool_name: only tool monitors take a tool name');
    if (input.issue_criteria !== undefined && input.issue_criteria !== null) throw new GuidanceError('issue_criteria: only tool monitors take issue criteria');
    return { kind: 'signal', seed: parseClauses(input.seed_hint, 'seed_hint'), expected: parseClauses(input.expected_behavior, 'expected_behavior') };
  } catch (error) {
    if (error instanceof GuidanceError) throw new ValidationError(error.message);
    throw error;
  }
}
