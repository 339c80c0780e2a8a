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
