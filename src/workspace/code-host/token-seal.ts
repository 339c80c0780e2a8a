import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Code-host access tokens are kept only sealed (AES-256-GCM). The key is LOOKOUT_SECRET_KEY when set
 * (every process of a scaled-out deployment must share it); otherwise a random key generated once in
 * DATA_DIR, which is enough for the single embedded process.
 */
export class TokenSeal {
  private constructor(private readonly key: Buffer) {}

  static fromConfig(secretKey: string | null, dataDir: string): TokenSeal {
    if (secretKey) return new TokenSeal(crypto.createHash('sha256').update(secretKey).digest());
    const file = path.join(dataDir, 'secret.key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(dataDir, { recursive: true });
      try {
        fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
      } catch (error) {
        // Another process created it first: use theirs.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    const text = fs.readFileSync(file, 'utf8').trim();
    const key = Buffer.from(text, 'base64');
    // The file is shared with SecretBox (tickets, webhooks), which writes 64 hex characters when it
    // comes first; those do not decode to a 32-byte key, so derive one from the text instead.
    return new TokenSeal(key.length === 32 ? key : crypto.createHash('sha256').update(text).digest());
  }

  seal(plain: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
  }

  /** null when the value was sealed under another key (the token must then be supplied again). */
  open(sealed: string): string | null {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) return null;
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
