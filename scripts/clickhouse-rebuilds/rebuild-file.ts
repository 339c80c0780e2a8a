import { tableRebuildText, type TableRebuild } from './table-rebuild.js';

/** Where the generated statements start: the first table's heading after the file's header. */
export function rebuildBodyStart(text: string, rebuild: TableRebuild): number {
  const marker = `\n-- ${rebuild.tables[0].table}\n`;
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`no "-- ${rebuild.tables[0].table}" heading after the header`);
  return at + 1;
}

/** The migration file with its statements written by the rebuild recipe, its header kept. */
export function withRebuildStatements(text: string, rebuild: TableRebuild): string {
  return text.slice(0, rebuildBodyStart(text, rebuild)) + tableRebuildText(rebuild);
}
