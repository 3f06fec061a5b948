/* eslint-disable @typescript-eslint/no-require-imports */
/** fh audit export | verify | show | search: sealed bundles of a run, checked and read offline (docs/audit.md). */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FabricError } from '../../core/errors';
import { flag, JSON_OPTION, str, strs, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, type Command, type Io } from '../context';
import { CliError, EXIT, notFound, usage, type ExitCode } from '../errors';
import { S3_OPTIONS, gcStoreFrom } from './store';
import { searchCommand } from './audit-search';
import { plural } from '../../core/plural';

/** How `fh audit verify` (and the others) exit on each bundle error code. */
const BUNDLE_EXIT: Record<string, ExitCode> = {
  BUNDLE_TAMPERED: EXIT.BUNDLE_TAMPERED,
  BUNDLE_INCOMPLETE: EXIT.BUNDLE_TAMPERED,
  BUNDLE_INVALID: EXIT.BUNDLE_TAMPERED,
  BUNDLE_SIGNATURE_INVALID: EXIT.BUNDLE_SIGNATURE,
  BUNDLE_REPLAY_DIVERGED: EXIT.BUNDLE_REPLAY,
  BUNDLE_EXPORT_FAILED: EXIT.FAILURE,
};

function bundleError(err: unknown): unknown {
  if (err instanceof FabricError && err.code in BUNDLE_EXIT) return new CliError(BUNDLE_EXIT[err.code]!, `${err.code}: ${err.message}`);
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return notFound((err as Error).message);
  if ((err as { name?: string }).name === 'HistoryFormatError') return new CliError(EXIT.BUNDLE_TAMPERED, `BUNDLE_TAMPERED: ${(err as Error).message}`);
  return err;
}

async function open(file: string) {
  const { readBundleFile } = (require('../../audit/bundle/read') as typeof import('../../audit/bundle/read'));
  return readBundleFile(file);
}

const exportCommand: Command = {
  name: 'audit export',
  summary: 'save every run of a workflow or session, and every store blob they refer to, as one sealed bundle',
  usage: ['audit export <workflow-id|session-id> <bundle> [--sign key.pem] [--store-dir <dir> | --s3-bucket <bucket>]'],
  description:
    'Writes a deterministic tar: each run (the continue-as-new chain, child workflows: sub-agents and flow branches)\n' +
    'as Temporal proto-JSON with a hash chain over its events, every store blob the histories refer to (transcript\n' +
    'segments, tool results, artifacts, preludes, offloaded payloads), and a manifest with each part\'s SHA-256.\n' +
    '--sign adds an Ed25519 signature over the manifest. The same closed runs always give the same bytes.',
  connects: true,
  options: {
    sign: { type: 'string', value: '<key.pem>', help: 'an Ed25519 private key (PEM): sign the manifest' },
    ...STORE_OPTION,
    ...S3_OPTIONS,
    ...JSON_OPTION,
  },
  examples: ['fh audit export research-42 research-42.fhaudit', 'fh audit export sess-7 sess-7.fhaudit --sign signing-key.pem --s3-bucket acme-agents'],
  run: async (p, io) => {
    const [id, file, ...extra] = p.positionals;
    if (!id || !file) throw usage('fh audit export needs a workflow or session id and a bundle file: fh audit export <id> <bundle>');
    if (extra.length) throw usage(`unexpected argument '${extra[0]}'`);
    const keyFile = str(p, 'sign');
    let signingKey: Buffer | undefined;
    if (keyFile) {
      signingKey = await fs.readFile(keyFile).catch(() => {
        throw notFound(`signing key ${keyFile} not found`);
      });
    }
    const store = gcStoreFrom(p);
    const conn = await connect(p);
    const { exportBundle } = (require('../../audit/bundle/export') as typeof import('../../audit/bundle/export'));
    let result;
    try {
      result = await exportBundle(id, { client: conn.client, namespace: conn.settings.namespace, store, ...(signingKey ? { signingKey } : {}) });
    } catch (err) {
      const mapped = bundleError(err);
      throw mapped instanceof CliError ? mapped : asCliError(err, { settings: conn.settings, workflowId: id });
    } finally {
      await conn.close();
    }
    const target = path.resolve(file);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, result.bytes);
    const m = result.manifest;
    const summary = { file: target, bytes: result.bytes.length, runs: m.runs.length, blobs: m.blobs.length, missing: m.missing, signed: signingKey !== undefined };
    if (flag(p, 'json')) printJson(io, summary);
    else {
      io.out(`wrote ${plural(m.runs.length, 'run', 'runs')} and ${plural(m.blobs.length, 'blob', 'blobs')} of ${id} to ${file} (${result.bytes.length} bytes${signingKey ? ', signed' : ''})`);
      for (const x of m.missing) io.err(`warning: the store no longer has ${x.key} (${x.referencedBy}); the bundle lists it as missing`);
    }
    return EXIT.OK;
  },
};

const verifyCommand: Command = {
  name: 'audit verify',
  summary: 'check a bundle offline: signature, every hash, each event chain, references, and replay with --agents',
  usage: ['audit verify <bundle> [--public-key key.pem] [--agents <module>…] [--json]'],
  description:
    'Needs no Temporal server and no store. Checks, in order: the signature (required with --public-key, which\n' +
    'must be the signer\'s), every part against its SHA-256, each history\'s event hash chain, that every blob a\n' +
    'history refers to is in the bundle, and with --agents that each history replays against that code. Names the\n' +
    'first part or event that does not match. Exit 0: intact; 10: altered or incomplete; 11: signature; 12: replay.',
  connects: false,
  options: {
    'public-key': { type: 'string', value: '<key.pem>', help: "the signer's Ed25519 public key (PEM): the bundle must be signed with it" },
    agents: { type: 'string', multiple: true, value: '<module>', help: 'agent module(s): each history must replay against them' },
    ...JSON_OPTION,
  },
  examples: ['fh audit verify research-42.fhaudit', 'fh audit verify research-42.fhaudit --public-key signer.pub.pem --agents ./dist/agents.js'],
  run: async (p, io) => {
    const [file, ...extra] = p.positionals;
    if (!file) throw usage('fh audit verify needs a bundle: fh audit verify <bundle>');
    if (extra.length) throw usage(`unexpected argument '${extra[0]}'`);
    const { verifyBundle } = (require('../../audit/bundle/verify') as typeof import('../../audit/bundle/verify'));
    const { publicKeyFrom } = (require('../../audit/bundle/sign') as typeof import('../../audit/bundle/sign'));
    const agents = strs(p, 'agents').map((a) => path.resolve(a));
    for (const m of agents) {
      try {
        require.resolve(m);
      } catch {
        throw notFound(`agents module ${m} not found; check the --agents path`);
      }
    }
    const keyFile = str(p, 'public-key');
    let report;
    try {
      const publicKey = keyFile ? publicKeyFrom(await fs.readFile(keyFile).catch(() => Promise.reject(notFound(`public key ${keyFile} not found`)))) : undefined;
      const bytes = await fs.readFile(file).catch((err: NodeJS.ErrnoException) => Promise.reject(err.code === 'ENOENT' ? notFound(`bundle ${file} not found`) : err));
      if (agents.length) ((require('../context') as typeof import('../context'))).installRuntime('ERROR');
      report = await verifyBundle(bytes, { ...(publicKey ? { publicKey } : {}), ...(agents.length ? { agents } : {}) });
    } catch (err) {
      const mapped = bundleError(err);
      if (flag(p, 'json') && mapped instanceof CliError) {
        const e = err as FabricError & { part?: string; eventId?: number; key?: string };
        printJson(io, { ok: false, code: e.code, message: e.message, ...(e.part ? { part: e.part } : {}), ...(e.eventId !== undefined ? { eventId: e.eventId } : {}), ...(e.key ? { key: e.key } : {}) });
        return mapped.exitCode;
      }
      throw mapped;
    }
    if (flag(p, 'json')) printJson(io, report);
    else {
      const signed = report.signed ? `; signed by ${report.signed.keyFingerprint} at ${report.signed.signedAt}${report.signed.trustedKey ? ' (the given key)' : ' (key not checked against one you trust: pass --public-key)'}` : '; not signed';
      io.out(
        `ok: ${report.root}: ${plural(report.runs, 'run', 'runs')}, ${report.events} events, ${report.parts} parts, ${report.blobs} blobs match the manifest${signed}` +
          (report.replayed !== undefined ? `; every history replays against ${agents.map((a) => path.relative(process.cwd(), a) || a).join(', ')}` : ''),
      );
      for (const x of report.missing) io.err(`note: ${x.key} (${x.referencedBy}) was already gone from the store at export`);
    }
    return EXIT.OK;
  },
};

const showCommand: Command = {
  name: 'audit show',
  summary: "print a bundle's audit transcripts, every tool result and reply in full, from the bundle alone",
  usage: ['audit show <bundle> [--json] [--no-redact]'],
  description:
    'One transcript per run (as `fh history` prints it), with offloaded payloads and artifact outputs read from\n' +
    'the bundle. Secrets are hidden as the share page hides them; --no-redact shows the recorded text as is.\n' +
    'Run `fh audit verify` first: show reads the bundle as it is.',
  connects: false,
  options: { ...JSON_OPTION, 'no-redact': { type: 'boolean', help: 'show secrets as recorded (the share-page redaction is on by default)' } },
  examples: ['fh audit show research-42.fhaudit > research-42.md', 'fh audit show research-42.fhaudit --json'],
  run: async (p, io) => {
    const [file, ...extra] = p.positionals;
    if (!file) throw usage('fh audit show needs a bundle: fh audit show <bundle>');
    if (extra.length) throw usage(`unexpected argument '${extra[0]}'`);
    const { auditBundle } = (require('../../audit/bundle/show') as typeof import('../../audit/bundle/show'));
    let audits;
    try {
      audits = await auditBundle(await open(file), { redact: !flag(p, 'no-redact') });
    } catch (err) {
      throw bundleError(err);
    }
    if (flag(p, 'json')) printJson(io, audits.map((a) => ({ run: a.run, audit: a.audit })));
    else io.out(audits.map((a) => a.markdown).join('\n\n'));
    return EXIT.OK;
  },
};

const SUBCOMMANDS = [exportCommand, verifyCommand, showCommand, searchCommand];

export const auditCommand: Command = {
  name: 'audit',
  summary: 'sealed audit bundles: export a run with its store blobs, verify it offline, show it, search many',
  usage: SUBCOMMANDS.flatMap((c) => c.usage),
  connects: false,
  options: {},
  examples: [...exportCommand.examples.slice(0, 1), ...verifyCommand.examples.slice(0, 1), ...showCommand.examples.slice(0, 1)],
  subcommands: Object.fromEntries(SUBCOMMANDS.map((c) => [c.name.slice('audit '.length), c])),
  run: async () => {
    throw usage(`say which: fh audit <command>, one of ${SUBCOMMANDS.map((c) => c.name.slice('audit '.length)).join(', ')} (fh audit --help)`);
  },
};

export type { Parsed, Io };
