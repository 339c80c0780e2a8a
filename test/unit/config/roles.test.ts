import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';

describe('LOOKOUT_ROLES', () => {
  it('defaults to every role, so one process does everything', () => {
    expect([...loadConfig({}).roles].sort()).toEqual(['api', 'ingest', 'worker']);
    expect([...loadConfig({ LOOKOUT_ROLES: '' }).roles].sort()).toEqual(['api', 'ingest', 'worker']);
  });

  it('takes a comma-separated subset, spaces allowed', () => {
    expect([...loadConfig({ LOOKOUT_ROLES: 'api, ingest' }).roles].sort()).toEqual(['api', 'ingest']);
    expect([...loadConfig({ LOOKOUT_ROLES: 'worker' }).roles]).toEqual(['worker']);
  });

  it('refuses unknown roles and an empty list at start-up', () => {
    expect(() => loadConfig({ LOOKOUT_ROLES: 'api,settler' })).toThrow(/LOOKOUT_ROLES must be a comma-separated list of api, ingest, worker/);
    expect(() => loadConfig({ LOOKOUT_ROLES: ' , ' })).toThrow(/LOOKOUT_ROLES/);
  });
});
