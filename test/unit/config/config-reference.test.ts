/**
 * docs/configuration.md lists the variables the schema declares, as the schema says them:
 * `npm run generate:config-docs` rewrites the tables between the page's markers, and this test
 * fails when the committed page differs from what the schema generates.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_GROUPS, CONFIG_SCHEMA } from '../../../src/app/config-schema.js';
import { integer } from '../../../src/platform/settings/setting-kinds.js';
import { setting } from '../../../src/platform/settings/setting.js';
import { BEGIN_MARKER, END_MARKER, configReference, withConfigReference } from '../../../scripts/config-docs/config-reference.js';

const page = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'docs', 'configuration.md'), 'utf8');

describe('docs/configuration.md', () => {
  it('holds the tables the configuration schema generates (npm run generate:config-docs)', () => {
    expect(withConfigReference(page, configReference(CONFIG_GROUPS))).toBe(page);
  });

  it('differs when the schema does: the comparison above can fail', () => {
    const [first, ...rest] = CONFIG_GROUPS;
    const changedDefault = [{ ...first, settings: { ...first.settings, PORT: setting(integer({ max: 65535 }), { default: 9090, doc: first.settings.PORT.doc }) } }, ...rest];
    expect(withConfigReference(page, configReference(changedDefault))).not.toBe(page);
    const added = [{ ...first, settings: { ...first.settings, NEW_VARIABLE: setting(integer(), { default: 1, doc: 'new' }) } }, ...rest];
    expect(withConfigReference(page, configReference(added))).not.toBe(page);
  });

  it('names every variable once, with its default and what it accepts', () => {
    const generated = page.slice(page.indexOf(BEGIN_MARKER), page.indexOf(END_MARKER));
    for (const name of Object.keys(CONFIG_SCHEMA)) {
      expect(generated.match(new RegExp(`^\\| \`${name}\` \\|`, 'gm')), name).toHaveLength(1);
    }
    expect(generated).toContain('| `PORT` | `8080` | whole number from 0 to 65535 |');
    expect(generated).toContain('| `LOOKOUT_MIGRATE` | `on` | on or off |');
    expect(generated).toContain('| `SETTLE_CACHE_MAX_BYTES` | twice `INGEST_MAX_INFLIGHT_BYTES`, 4–256 MiB | whole number of bytes |');
  });

  it('keeps the hand-written text outside the markers', () => {
    expect(() => withConfigReference('# Configuration\n\nno markers here\n', 'x')).toThrow(/markers are missing/);
    expect(withConfigReference(`intro\n${BEGIN_MARKER}\nold\n${END_MARKER}\noutro\n`, 'new')).toBe('intro\nnew\noutro\n');
  });
});
