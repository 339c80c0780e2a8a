import crypto from 'node:crypto';

/** A new endpoint secret: `whsec_` + 32 random bytes. The HMAC key is this whole string as UTF-8. */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64url')}`;
}

/** What the sealed secret is bound to: a ciphertext moved to another endpoint or tenant does not open. */
export function secretAssociation(tenantId: string, endpointId: string): string {
  return `webhook:${tenantId}:${endpointId}`;
}

/**
 * `Lookout-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` — the signed
 * timestamp lets receivers refuse replays older than their tolerance (docs/webhooks.md: 5 minutes).
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = crypto.createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** The receiver's check, as docs/webhooks.md shows it: signature matches and the timestamp is within tolerance. */
export function verifySignature(secret: string, body: string, header: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !parts.v1) return false;
  const expected = Buffer.from(signatureHeader(secret, body, t).split('v1=')[1], 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
