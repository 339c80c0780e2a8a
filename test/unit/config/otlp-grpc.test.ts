import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/app/config.js';

describe('OTLP_GRPC_PORT and OTLP_GRPC_HOST', () => {
  it('listen on 4317 on the HTTP host by default', () => {
    expect(loadConfig({}).otlpGrpc).toEqual({ port: 4317, host: '0.0.0.0' });
    expect(loadConfig({ HOST: '127.0.0.1' }).otlpGrpc).toEqual({ port: 4317, host: '127.0.0.1' });
    expect(loadConfig({ OTLP_GRPC_PORT: '' }).otlpGrpc).toEqual({ port: 4317, host: '0.0.0.0' });
  });

  it('take a port and a host of their own', () => {
    expect(loadConfig({ HOST: '127.0.0.1', OTLP_GRPC_PORT: '14317', OTLP_GRPC_HOST: '::' }).otlpGrpc).toEqual({ port: 14317, host: '::' });
  });

  it('turn OTLP/gRPC off with port 0', () => {
    expect(loadConfig({ OTLP_GRPC_PORT: '0' }).otlpGrpc).toBeNull();
  });

  it('refuse what is not a TCP port', () => {
    for (const bad of ['65536', '43.17', '-1', 'grpc']) {
      expect(() => loadConfig({ OTLP_GRPC_PORT: bad }), bad).toThrow(/OTLP_GRPC_PORT must be/);
    }
  });
});
