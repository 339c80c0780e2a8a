import net from 'node:net';

/**
 * A strict reader of the Prometheus text exposition format (0.0.4) for tests: every sample must
 * belong to a family declared with `# HELP` and `# TYPE` before it (histogram samples by their
 * _bucket/_sum/_count names), label values are unescaped, and every value must be a number.
 * Anything else throws, naming the line.
 */
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m || m.index !== at) throw new Error(`bad labels in: ${line}`);
    labels[m[1]] = m[2].replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    if (m[3] === '') break;
  }
  return labels;
}

function parseValue(raw: string, line: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (raw === 'NaN') return NaN;
  const value = Number(raw);
  if (raw === '' || Number.isNaN(value)) throw new Error(`bad value in: ${line}`);
  return value;
}

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('# HELP ')) {
      const [, name, ...rest] = line.split(' ').slice(1);
      help.set(name ?? line.split(' ')[2], rest.join(' '));
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (!NAME.test(name)) throw new Error(`bad family name: ${line}`);
      if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type)) throw new Error(`bad type: ${line}`);
      if (families.has(name)) throw new Error(`family declared twice: ${name}`);
      if (!help.has(name)) throw new Error(`no HELP before TYPE: ${name}`);
      families.set(name, { name, help: help.get(name)!, type: type as Family['type'], samples: [] });
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, sampleName, , labelText, rawValue] = m;
    const family =
      families.get(sampleName) ??
      families.get(sampleName.replace(/_(bucket|sum|count)$/, '')) ??
      families.get(sampleName.replace(/_total$/, ''));
    if (!family) throw new Error(`sample of an undeclared family: ${line}`);
    family.samples.push({ name: sampleName, labels: labelText ? parseLabels(labelText, line) : {}, value: parseValue(rawValue, line) });
  }
  return families;
}

/** The sum of a family's samples named `sample` whose labels include `labels`. */
export function sampleSum(families: Map<string, Family>, family: string, labels: Record<string, string> = {}, sample = family): number {
  const f = families.get(family);
  if (!f) return 0;
  return f.samples.filter((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

export async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? '')) throw new Error(`unexpected content type ${res.headers.get('content-type')}`);
  return parseExposition(await res.text());
}

/** A port free right now on loopback (the metrics listener's port in tests; 0 turns it off). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
