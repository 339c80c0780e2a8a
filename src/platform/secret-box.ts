import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encrypts secrets Lookout must send on at rest — ticket-tracker API keys (docs/issues.md "Tracker
 * credentials"), webhook signing secrets: AES-256-GCM with a random 96-bit nonce and what the secret
 * belongs to as associated data (the tenant; for webhooks tenant and endpoint), so a ciphertext cannot
 * be moved to another owner. The HKDF label keeps its first user's name: ciphertexts already stored
 * must still open. The key is derived with HKDF-SHA256 from LOOKOUT_SECRET_KEY; without it, from a
 * random 32-byte secret kept in `$DATA_DIR/secret.key` (mode 0600), created on first use. Several
 * processes sharing one database must share LOOKOUT_SECRET_KEY. The ciphertext names its key by a
 * short id, so a key change is reported as such instead of as garbage.
 */
export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;

  constructor(secret: Buffer | string) {
    this.key = Buffer.from(crypto.hkdfSync('sha256', Buffer.from(secret), Buffer.from('lookout-secret-box'), Buffer.from('ticket-tracker-api-key v1'), 32));
    this.keyId = crypto.createHash('sha256').update(this.key).digest('hex').slice(0, 8);
  }

  static fromConfig(config: { secretKey: string | null; dataDir: string }): SecretBox {
    if (config.secretKey) return new SecretBox(config.secretKey);
    const file = path.join(config.dataDir, 'secret.key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(config.dataDir, { recursive: true });
      try {
        fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
      } catch (error) {
        // Another process created it first: use theirs.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    return new SecretBox(fs.readFileSync(file, 'utf8').trim());
  }

  seal(plaintext: string, associated: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associated));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', this.keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /** Returns null when the value was sealed with another key or for another tenant, or was tampered with. */
  open(sealed: string, associated: string): string | null {
    const [version, keyId, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || keyId !== this.keyId || !iv || !tag || body === undefined) return null;
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(associated));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
