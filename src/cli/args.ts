/**
 * Argument parsing for `fh` on node:util parseArgs (no dependencies): each command declares its
 * options with help text, and the connection options are shared by every command that talks to
 * Temporal. Help is generated from the same declarations, so it cannot drift from the parser.
 */
import { parseArgs } from 'node:util';
import type { ConnectionFlags } from '../client/connection';
import { nearest } from '../core/nearest';
import { usage } from './errors';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /**
   * Takes the words after it up to the next option too (`--agents a.js b.js`, as `<module>…` in help
   * reads), for commands without positionals of their own. Implies `multiple`.
   */
  variadic?: boolean;
  /** Shown in help after the flag, e.g. `<module>`. */
  value?: string;
  help: string;
  /** The environment variable that sets it (for help). */
  env?: string;
  default?: string;
}

export type Options = Record<string, OptionSpec>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export const CONNECTION_OPTIONS: Options = {
  address: { type: 'string', value: '<host:port>', help: 'Temporal frontend address', env: 'TEMPORAL_ADDRESS', default: 'localhost:7233' },
  namespace: { type: 'string', short: 'n', value: '<name>', help: 'namespace', env: 'TEMPORAL_NAMESPACE', default: 'default' },
  'api-key': { type: 'string', value: '<key>', help: 'API key (Temporal Cloud); turns TLS on', env: 'TEMPORAL_API_KEY' },
  tls: { type: 'boolean', help: 'connect with TLS', env: 'TEMPORAL_TLS' },
  'tls-cert-path': { type: 'string', value: '<file>', help: 'client certificate for mTLS', env: 'TEMPORAL_TLS_CLIENT_CERT_PATH' },
  'tls-key-path': { type: 'string', value: '<file>', help: 'client private key for mTLS', env: 'TEMPORAL_TLS_CLIENT_KEY_PATH' },
  'tls-ca-path': { type: 'string', value: '<file>', help: 'server CA certificate', env: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH' },
  'tls-server-name': { type: 'string', value: '<name>', help: 'override the TLS server name (SNI)', env: 'TEMPORAL_TLS_SERVER_NAME' },
  profile: { type: 'string', value: '<name>', help: 'profile of the Temporal config file (needs @temporalio/envconfig)', env: 'TEMPORAL_PROFILE' },
  'config-file': { type: 'string', value: '<file>', help: 'Temporal config file (TOML)', env: 'TEMPORAL_CONFIG_FILE' },
};

export const HELP_OPTION: Options = { help: { type: 'boolean', short: 'h', help: 'show this help' } };
export const JSON_OPTION: Options = { json: { type: 'boolean', help: 'print JSON instead of text' } };

/** Parses argv against the options; unknown options and missing values are usage errors naming the command. */
export function parse(argv: string[], options: Options, command: string): Parsed {
  const config = Object.fromEntries(
    Object.entries(options).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple || o.variadic ? { multiple: true } : {}) }]),
  );
  try {
    const { values, positionals } = parseArgs({ args: spreadVariadic(argv, options), options: config as never, allowPositionals: true, strict: true });
    return { values: values as Parsed['values'], positionals };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const msg = (e.message ?? String(err)).replace(/\. To specify a positional argument.*$/s, '').replace(/\.$/, '');
    const unknown = e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'--([^'=]+)/.exec(msg)?.[1] : undefined;
    const near = unknown ? nearest(unknown, Object.keys(options)) : undefined;
    const hint = near ? `did you mean --${near}? ` : '';
    throw usage(`${msg.charAt(0).toLowerCase()}${msg.slice(1)} (fh ${command}); ${hint}run \`fh ${command} --help\` for its options`);
  }
}

/** `--agents a b --tools t` → `--agents a --agents b --tools t` for the variadic options. */
function spreadVariadic(argv: string[], options: Options): string[] {
  const out: string[] = [];
  let current: string | undefined;
  for (const arg of argv) {
    if (arg === '--') return [...out, ...argv.slice(argv.indexOf(arg))];
    if (arg.startsWith('-')) {
      const name = /^--([^=]+)$/.exec(arg)?.[1];
      current = name && options[name]?.variadic ? name : undefined;
      out.push(arg);
      continue;
    }
    const previous = out[out.length - 1];
    // The option's own first value follows it directly; each later word becomes `--name word`.
    if (current && previous !== `--${current}`) out.push(`--${current}`);
    out.push(arg);
  }
  return out;
}

export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

export function strs(p: Parsed, name: string): string[] {
  const v = p.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

export function flag(p: Parsed, name: string): boolean {
  return p.values[name] === true;
}

export function int(p: Parsed, name: string, def: number, min = 1): number {
  const v = str(p, name);
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw usage(`--${name} must be an integer >= ${min}, got '${v}'`);
  return n;
}

export function connectionFlags(p: Parsed): ConnectionFlags {
  return {
    address: str(p, 'address'),
    namespace: str(p, 'namespace'),
    apiKey: str(p, 'api-key'),
    tls: p.values.tls === true ? true : undefined,
    tlsCertPath: str(p, 'tls-cert-path'),
    tlsKeyPath: str(p, 'tls-key-path'),
    tlsCaPath: str(p, 'tls-ca-path'),
    tlsServerName: str(p, 'tls-server-name'),
    profile: str(p, 'profile'),
    configFile: str(p, 'config-file'),
  };
}

/** Help lines for options: `  --name <value>   help (ENV, default x)`. */
export function optionsHelp(options: Options): string {
  const left = (name: string, o: OptionSpec) => `${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}`;
  const entries = Object.entries(options);
  const width = Math.max(...entries.map(([n, o]) => left(n, o).length));
  return entries
    .map(([name, o]) => {
      const extra = [o.env, o.default !== undefined ? `default ${o.default}` : undefined].filter(Boolean).join(', ');
      return `  ${left(name, o).padEnd(width)}  ${o.help}${o.multiple || o.variadic ? ' (repeatable)' : ''}${extra ? ` [${extra}]` : ''}`;
    })
    .join('\n');
}
