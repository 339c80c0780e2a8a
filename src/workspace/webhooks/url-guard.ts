import dns from 'node:dns';
import net from 'node:net';
import { ValidationError } from '../../platform/http/errors.js';

/**
 * The SSRF guard (docs/webhooks.md "Where webhooks may point"): a webhook never reaches loopback,
 * private, link-local or other non-public addresses unless LOOKOUT_WEBHOOK_ALLOW_PRIVATE=1. The URL
 * is checked when an endpoint is saved, and again on every connection, through a DNS lookup that
 * refuses such addresses: a name that resolved publicly when saved and privately later (DNS
 * rebinding) is still refused, because the connection uses the very address that was checked.
 */

// Special-purpose ranges of the IANA IPv4 and IPv6 registries (RFC 6890 and its updates) that are not globally reachable.
const NON_PUBLIC = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of [
  // ::/96 holds the deprecated IPv4-compatible addresses (::127.0.0.1 is ::7f00:1), the unspecified and loopback
  // addresses among them; 64:ff9b:1::/48 is local-use NAT64 (RFC 8215), which a site may route to its own hosts.
  ['::', 96], ['100::', 64], ['64:ff9b:1::', 48], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NON_PUBLIC.addSubnet(address, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries in its low 32 bits for NAT64 (64:ff9b::/96) and 6to4 (2002::/16). */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) return v4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

function expandIpv6(address: string): number[] | null {
  if (!net.isIPv6(address)) return null;
  let text = address;
  // A dotted tail (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const middle = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const groups = [...left, ...middle, ...right];
  return groups.length === 8 ? groups : null;
}

/** True for an address no webhook may reach by default. BlockList also matches IPv4-mapped IPv6 (::ffff:a.b.c.d). */
export function isNonPublicAddress(address: string): boolean {
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : null;
  if (!family) return true;
  if (NON_PUBLIC.check(address, family)) return true;
  const inner = family === 'ipv6' ? embeddedIpv4(address) : null;
  return inner !== null && NON_PUBLIC.check(inner, 'ipv4');
}

const LOOKUP_TIMEOUT_MS = 3_000;

const PRIVATE_ADDRESS_DETAIL = 'resolves to a loopback, private or link-local address (allowed only with LOOKOUT_WEBHOOK_ALLOW_PRIVATE=1)';

/** The thrown error when a connection would reach a refused address. */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
  constructor(readonly address: string) {
    super(`refused: the host ${PRIVATE_ADDRESS_DETAIL}`);
  }
}

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks a URL an endpoint is saved with and returns it normalized. Not http(s), credentials in
 * it, or a host that is (or resolves to) a non-public address: 400. A name that does not resolve
 * from here is accepted (it may be public DNS this server cannot see yet); every delivery re-checks.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('url: must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError('url: must be an http or https URL');
  if (url.username || url.password) throw new ValidationError('url: must not contain credentials (user:password@)');
  if (!url.hostname) throw new ValidationError('url: must name a host');
  if (allowPrivate) return url.href;
  const host = hostOf(url);
  if (net.isIP(host)) {
    if (isNonPublicAddress(host)) throw new ValidationError(`url: ${PRIVATE_ADDRESS_DETAIL}`);
    return url.href;
  }
  let addresses: dns.LookupAddress[];
  try {
    // A resolver that hangs must not hold the request: after 3 s the name counts as not resolving.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_TIMEOUT_MS)));
    addresses = await Promise.race([dns.promises.lookup(host, { all: true, verbatim: true }), timeout]).finally(() => clearTimeout(timer));
  } catch {
    return url.href;
  }
  if (addresses.some((a) => isNonPublicAddress(a.address))) throw new ValidationError(`url: ${PRIVATE_ADDRESS_DETAIL}`);
  return url.href;
}

/** Refuses a literal-IP URL host before connecting (Node does not call `lookup` for literals). */
export function assertConnectable(url: URL, allowPrivate: boolean): void {
  const host = hostOf(url);
  if (!allowPrivate && net.isIP(host) && isNonPublicAddress(host)) throw new RefusedAddressError(host);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for http.request: resolves like dns.lookup and fails when any answer is non-public. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses;
      const refused = allowPrivate ? undefined : list.find((a) => isNonPublicAddress(a.address));
      if (refused) return callback(new RefusedAddressError(refused.address), []);
      if (list.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
