/**
 * workerConnectionOptions resolves like `fh`: a config file profile (TOML) with an API key and TLS, the
 * environment over the file, explicit settings over both; bad settings are typed errors.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { workerConnectionOptions, ConnectionSettingsError } from '../../src/worker';

describe('workerConnectionOptions', () => {
  let dir: string;
  let configFile: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-worker-conn-'));
    configFile = path.join(dir, 'temporal.toml');
    await fs.writeFile(
      configFile,
      [
        '[profile.cloud]',
        'address = "acme-prod.a1b2c.tmprl.cloud:7233"',
        'namespace = "acme-prod.a1b2c"',
        'api_key = "key-from-file"',
        '',
        '[profile.mtls]',
        'address = "temporal.internal:7233"',
        'namespace = "agents"',
        '[profile.mtls.tls]',
        'server_name = "temporal.internal"',
        'server_ca_cert_data = "CA-PEM"',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('Temporal Cloud profile: address, namespace, API key, and TLS on', () => {
    const c = workerConnectionOptions({}, { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cloud' });
    expect(c.namespace).toBe('acme-prod.a1b2c');
    expect(c.connectionOptions).toMatchObject({ address: 'acme-prod.a1b2c.tmprl.cloud:7233', apiKey: 'key-from-file' });
    expect(c.connectionOptions.tls).toBeTruthy();
    expect(c.settings.sources).toEqual({ address: 'config file', namespace: 'config file' });
  });

  it('a TLS table in the profile gives the server name and CA; the environment and explicit settings win', () => {
    const env = { TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'mtls', TEMPORAL_NAMESPACE: 'from-env' };
    const c = workerConnectionOptions({}, env);
    expect(c.namespace).toBe('from-env');
    const tls = c.connectionOptions.tls as { serverNameOverride?: string; serverRootCACertificate?: Uint8Array };
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(tls.serverRootCACertificate!).toString()).toBe('CA-PEM');
    expect(workerConnectionOptions({ namespace: 'explicit', address: 'other:7233' }, env)).toMatchObject({ namespace: 'explicit', connectionOptions: { address: 'other:7233' } });
  });

  it('without a config file: TEMPORAL_* variables, then localhost:7233 / default', () => {
    expect(workerConnectionOptions({}, {})).toMatchObject({ namespace: 'default', connectionOptions: { address: 'localhost:7233' } });
    const c = workerConnectionOptions({}, { TEMPORAL_ADDRESS: 'tmp:7233', TEMPORAL_API_KEY: 'k' });
    expect(c.connectionOptions).toMatchObject({ address: 'tmp:7233', apiKey: 'k', tls: true });
  });

  it('a missing config file or profile is a ConnectionSettingsError', () => {
    expect(() => workerConnectionOptions({}, { TEMPORAL_CONFIG_FILE: path.join(dir, 'absent.toml') })).toThrow(ConnectionSettingsError);
    expect(() => workerConnectionOptions({ profile: 'nope' }, { TEMPORAL_CONFIG_FILE: configFile })).toThrow(ConnectionSettingsError);
  });
});
