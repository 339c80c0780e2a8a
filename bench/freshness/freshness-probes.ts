import net from 'node:net';

/** What the freshness benchmark reads from outside the service: gauges and histograms from its metrics endpoint, percentiles, a free port. */

/** The named unlabelled gauges of one scrape (Prometheus text format). */
export async function scrapeGauges(url: string, names: string[]): Promise<Record<string, number>> {
  const text = await (await fetch(url)).text();
  const wanted = new Set(names);
  const values: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [name, value] = line.split(' ');
    if (wanted.has(name)) values[name] = Number(value);
  }
  return values;
}

/** One sample of a scrape: its name (a histogram's _bucket/_sum/_count included), labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of one scrape (Prometheus text format; label values without escapes, as Lookout's are). */
export async function scrapeSamples(url: string): Promise<Sample[]> {
  const text = await (await fetch(url)).text();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return samples;
}

const matches = (s: Sample, name: string, labels: Record<string, string>) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);

/** The value of the first sample named `name` with these labels (undefined when absent). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => matches(s, name, labels))?.value;
}

/** A histogram's series with these labels: its cumulative buckets (by `le`), sum and count. */
export interface HistogramState {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

export function histogramOf(samples: Sample[], name: string, labels: Record<string, string> = {}): HistogramState {
  const buckets = new Map<number, number>();
  for (const s of samples) {
    if (matches(s, `${name}_bucket`, labels)) buckets.set(s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value);
  }
  return { buckets, sum: valueOf(samples, `${name}_sum`, labels) ?? 0, count: valueOf(samples, `${name}_count`, labels) ?? 0 };
}

/**
 * What a histogram observed between two scrapes: how many, their total, and the upper bound of the
 * bucket holding the longest of them (Infinity: past the last bound; null: none observed).
 */
export function histogramDelta(before: HistogramState | undefined, after: HistogramState): { count: number; sum: number; longest: number | null } {
  const count = after.count - (before?.count ?? 0);
  const sum = after.sum - (before?.sum ?? 0);
  if (count <= 0) return { count: 0, sum: Math.max(0, sum), longest: null };
  let longest = Infinity;
  for (const le of [...after.buckets.keys()].sort((a, b) => a - b)) {
    if ((after.buckets.get(le) ?? 0) - (before?.buckets.get(le) ?? 0) >= count) {
      longest = le;
      break;
    }
  }
  return { count, sum, longest };
}

/** The q-quantile (0..1) of `values` by nearest rank. */
export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export async function freePortNumber(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
