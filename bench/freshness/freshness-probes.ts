import net from 'node:net';

/** What the freshness benchmark reads from outside the service: gauges from its metrics endpoint, percentiles, a free port. */

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
