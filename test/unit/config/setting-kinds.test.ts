import { describe, expect, it } from 'vitest';
import { choice, decimal, httpUrl, identifier, integer, list, onOff, url } from '../../../src/platform/settings/setting-kinds.js';
import { ConfigError, readSettings, setting } from '../../../src/platform/settings/setting.js';

describe('setting kinds', () => {
  it('integer: digits only, within its bounds', () => {
    const port = integer({ max: 65535 });
    expect(port.parse('0')).toBe(0);
    expect(port.parse('65535')).toBe(65535);
    for (const bad of ['65536', '-1', '1.5', '1e3', '0x10', 'eighty', '']) expect(port.parse(bad), bad).toBeUndefined();
    expect(port.accepts).toBe('a whole number from 0 to 65535');
    const atLeast = integer({ min: 100, unit: 'milliseconds' });
    expect(atLeast.parse('99')).toBeUndefined();
    expect(atLeast.parse('100')).toBe(100);
    expect(atLeast.accepts).toBe('a whole number of milliseconds, at least 100');
  });

  it('decimal: fractions allowed, at least its minimum', () => {
    const hours = decimal({ min: 1, unit: 'hours' });
    expect(hours.parse('1.5')).toBe(1.5);
    expect(hours.parse('1')).toBe(1);
    for (const bad of ['0.5', '-2', '.5', '1,5', 'a day']) expect(hours.parse(bad), bad).toBeUndefined();
    expect(hours.accepts).toBe('a number of hours, at least 1');
    expect(decimal().parse('0.001')).toBe(0.001);
  });

  it('onOff: the same eight words in any case, nothing else', () => {
    for (const word of ['on', 'true', 'yes', '1', 'ON', 'True', 'YES']) expect(onOff.parse(word), word).toBe(true);
    for (const word of ['off', 'false', 'no', '0', 'OFF', 'False', 'No']) expect(onOff.parse(word), word).toBe(false);
    for (const word of ['y', 'n', 'enabled', '2', 'sometimes', 'tru']) expect(onOff.parse(word), word).toBeUndefined();
    expect(onOff.accepts).toBe('on or off (on/off, true/false, yes/no, 1/0, any case)');
  });

  it('choice: exactly one of its words', () => {
    const binding = choice(['literal', 'server']);
    expect(binding.parse('server')).toBe('server');
    expect(binding.parse('Server')).toBeUndefined();
    expect(binding.accepts).toBe('one of literal, server');
  });

  it('list: comma-separated items of its kind, at least one, blanks ignored', () => {
    const roles = list(choice(['api', 'ingest', 'worker']), 'api, ingest, worker');
    expect(roles.parse('api, ingest')).toEqual(['api', 'ingest']);
    expect(roles.parse('worker,')).toEqual(['worker']);
    expect(roles.parse(' , ')).toBeUndefined();
    expect(roles.parse('api,settler')).toBeUndefined();
    expect(roles.show(['api', 'worker'])).toBe('api,worker');
  });

  it('url and identifier: shape checked, text kept as written', () => {
    expect(httpUrl.parse('https://lookout.example.com/')).toBe('https://lookout.example.com/');
    expect(httpUrl.parse('ftp://example.com')).toBeUndefined();
    expect(httpUrl.parse('example.com')).toBeUndefined();
    const postgres = url(['postgres:', 'postgresql:'], 'a postgres:// URL');
    expect(postgres.parse('postgresql://u:p@db:5432/x')).toBe('postgresql://u:p@db:5432/x');
    expect(postgres.parse('mysql://db')).toBeUndefined();
    expect(identifier.parse('lookout_2')).toBe('lookout_2');
    for (const bad of ['2lookout', 'look-out', 'a; DROP']) expect(identifier.parse(bad), bad).toBeUndefined();
  });
});

describe('readSettings', () => {
  const schema = {
    A_PORT: setting(integer({ max: 65535 }), { default: 8080, doc: 'a port' }),
    A_SWITCH: setting(onOff, { default: false, doc: 'a switch' }),
    A_URL: setting(httpUrl, { doc: 'optional' }),
    A_TOKEN: setting(url(['http:'], 'an http URL'), { secret: true, doc: 'a URL that may hold a credential' }),
  };

  it('gives defaults for unset and empty variables, null where there is none', () => {
    expect(readSettings(schema, {})).toEqual({ A_PORT: 8080, A_SWITCH: false, A_URL: null, A_TOKEN: null });
    expect(readSettings(schema, { A_PORT: '', A_SWITCH: '  ', A_URL: '' })).toEqual({ A_PORT: 8080, A_SWITCH: false, A_URL: null, A_TOKEN: null });
  });

  it('reads values with blanks around them', () => {
    expect(readSettings(schema, { A_PORT: ' 9000 ', A_SWITCH: 'Yes', A_URL: 'http://x/' })).toMatchObject({ A_PORT: 9000, A_SWITCH: true, A_URL: 'http://x/' });
  });

  it('refuses with one error naming every variable at fault, without repeating a secret', () => {
    let error: unknown;
    try {
      readSettings(schema, { A_PORT: '70000', A_SWITCH: 'maybe', A_TOKEN: 'https://user:hunter2@host/' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems, message } = error as ConfigError;
    expect(problems).toEqual([
      'A_PORT must be a whole number from 0 to 65535, got "70000"',
      'A_SWITCH must be on or off (on/off, true/false, yes/no, 1/0, any case), got "maybe"',
      'A_TOKEN must be an http URL',
    ]);
    expect(message).toContain('A_PORT must be');
    expect(message).not.toContain('hunter2');
  });
});
