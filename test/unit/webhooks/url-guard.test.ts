import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isNonPublicAddress } from '../../../src/workspace/webhooks/url-guard.js';

describe('webhook SSRF guard', () => {
  it('classifies non-public addresses, IPv4-mapped and NAT64/6to4-embedded ones included', () => {
    const nonPublic = [
      '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '198.18.0.1', '::', '::1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1',
      '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::7f00:1', '64:ff9b::10.1.1.1', '2002:c0a8:0101::1', 'not an address',
      '::127.0.0.1', '::7f00:1', '::a9fe:a9fe', '::8.8.8.8', '64:ff9b:1::808:808', '64:ff9b:1:ffff::1',
    ];
    const isPublic = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:0808:0808::1'];
    for (const address of nonPublic) expect(isNonPublicAddress(address), address).toBe(true);
    for (const address of isPublic) expect(isNonPublicAddress(address), address).toBe(false);
  });

  it('normalizes accepted URLs and allows private hosts only when told to', async () => {
    expect(await checkWebhookUrl('HTTPS://Hooks.Example.invalid:443/path?q=1', false)).toBe('https://hooks.example.invalid/path?q=1');
    await expect(checkWebhookUrl('http://127.0.0.1:9000/x', false)).rejects.toMatchObject({ status: 400, code: 'validation_error' });
    expect(await checkWebhookUrl('http://127.0.0.1:9000/x', true)).toBe('http://127.0.0.1:9000/x');
    // The scheme and credential rules hold even with private hosts allowed.
    await expect(checkWebhookUrl('file:///etc/passwd', true)).rejects.toMatchObject({ detail: 'url: must be an http or https URL' });
    await expect(checkWebhookUrl('http://a:b@127.0.0.1/', true)).rejects.toMatchObject({ detail: 'url: must not contain credentials (user:password@)' });
  });
});
