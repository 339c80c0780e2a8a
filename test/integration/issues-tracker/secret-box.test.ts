import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../src/platform/secret-box.js';
import { tempDataDir } from '../../helpers/temp-dir.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('SecretBox (tracker credentials at rest)', () => {
  it('round-trips, and refuses another tenant, another key or a tampered value', () => {
    const box = new SecretBox('server secret');
    const sealed = box.seal('lin_api_123', 'tenant-a');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(sealed).not.toContain('lin_api_123');
    expect(box.seal('lin_api_123', 'tenant-a')).not.toBe(sealed);
    expect(box.open(sealed, 'tenant-a')).toBe('lin_api_123');
    expect(box.open(sealed, 'tenant-b')).toBeNull();
    expect(new SecretBox('other secret').open(sealed, 'tenant-a')).toBeNull();
    const parts = sealed.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(box.open(parts.join('.'), 'tenant-a')).toBeNull();
    expect(box.open('garbage', 'tenant-a')).toBeNull();
  });

  it('without LOOKOUT_SECRET_KEY keeps one random key file in DATA_DIR', () => {
    const dataDir = tempDataDir('lookout-secret-');
    dirs.push(dataDir);
    const first = SecretBox.fromConfig({ secretKey: null, dataDir });
    const file = path.join(dataDir, 'secret.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const sealed = first.seal('k', 't');
    expect(SecretBox.fromConfig({ secretKey: null, dataDir }).open(sealed, 't')).toBe('k');
    expect(SecretBox.fromConfig({ secretKey: 'configured', dataDir }).open(sealed, 't')).toBeNull();
  });
});
