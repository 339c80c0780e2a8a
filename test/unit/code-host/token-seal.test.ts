import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenSeal } from '../../../src/workspace/code-host/token-seal.js';
import { SecretBox } from '../../../src/platform/secret-box.js';

const dirs: string[] = [];
const dir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-seal-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('code-host token seal and $DATA_DIR/secret.key', () => {
  // Regression: SecretBox (started by the webhooks module) wrote the shared file first, in hex, and
  // the token seal decoded it as base64 into a 48-byte key: connecting a code host answered 500.
  it('works when SecretBox created secret.key first', () => {
    const dataDir = dir();
    SecretBox.fromConfig({ secretKey: null, dataDir });
    const seal = TokenSeal.fromConfig(null, dataDir);
    expect(seal.open(seal.seal('ghp_token'))).toBe('ghp_token');
    expect(TokenSeal.fromConfig(null, dataDir).open(seal.seal('again'))).toBe('again');
  });

  it('keeps the key of a file it wrote itself (base64 of 32 bytes), so stored tokens still open', () => {
    const dataDir = dir();
    const raw = crypto.randomBytes(32);
    fs.writeFileSync(path.join(dataDir, 'secret.key'), raw.toString('base64'));
    const sealed = TokenSeal.fromConfig(null, dataDir).seal('ghp_kept');
    const [, iv, tag, body] = sealed.split('.');
    const decipher = crypto.createDecipheriv('aes-256-gcm', raw, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    expect(Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString()).toBe('ghp_kept');
  });
});
