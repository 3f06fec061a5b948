/**
 * fh session enhance / fh session share: the prompt enhancer and a session as a shareable page. Kept
 * apart from session.ts (which holds the session lifecycle commands).
 */
import { promises as fs } from 'node:fs';
import { str, JSON_OPTION, type Options, type Parsed } from '../args';
import { asCliError, connect, printJson, STORE_OPTION, type Command, type Io } from '../context';
import { usage } from '../errors';

/* eslint-disable @typescript-eslint/no-require-imports */
// Loaded when a command runs (help stays instant).
const share = () => require('../../client/share') as typeof import('../../client/share');
const enhance = () => require('../../client/enhance') as typeof import('../../client/enhance');
const sessions = () => require('../../client/sessions') as typeof import('../../client/sessions');
/* eslint-enable @typescript-eslint/no-require-imports */

const COMMON: Options = { ...JSON_OPTION, ...STORE_OPTION };

export const enhanceCommand: Command = {
  name: 'session enhance',
  summary: 'rewrite a draft prompt with the repository as context (files, symbols, a repo intro)',
  usage: ['session enhance [--cwd <dir> | --session <id>] <draft…>'],
  description:
    'Identifiers in the draft are looked up with one ripgrep call (1.5 s at most), the repository is introduced from\n' +
    'package.json and README, and a small model (ANTHROPIC_API_KEY here) rewrites the draft. A failed step still\n' +
    'prints a prompt; --json shows what was attached and what failed.',
  options: {
    cwd: { type: 'string', value: '<dir>', help: 'the working directory the draft is about (default: here)' },
    session: { type: 'string', value: '<id>', help: "use this session's working directory (connects to Temporal)" },
    model: { type: 'string', value: '<model>', help: 'the rewriting model (default claude-haiku-4-5)' },
    ...COMMON,
  },
  connects: true,
  examples: ["fh session enhance 'fix the retry in fetchOrders'", "fh session enhance --session 261122-amber-forest 'add tests for CartStore'"],
  run: async (p: Parsed, io: Io) => {
    const draft = p.positionals.join(' ').trim();
    if (!draft) throw usage("fh session enhance needs a draft: fh session enhance '<draft>'");
    let cwd = str(p, 'cwd') ?? process.cwd();
    const id = str(p, 'session');
    if (id) {
      const conn = await connect(p);
      try {
        cwd = (await sessions().getSession(conn.client, id).info()).settings.workingDirectory ?? cwd;
      } catch (err) {
        throw asCliError(err);
      } finally {
        await conn.close().catch(() => undefined);
      }
    }
    const model = str(p, 'model');
    const result = await enhance().enhancePrompt(draft, { cwd, ...(model ? { model } : {}) }).catch((err: unknown) => {
      throw asCliError(err);
    });
    if (p.values.json) printJson(io, result);
    else {
      io.out(result.prompt);
      const attached = [result.attached.intro ? 'repo intro' : undefined, `${result.attached.files.length} files`, `${result.attached.symbols.length} symbols`].filter(Boolean).join(', ');
      io.err(`attached: ${attached}${result.problems.length ? `; ${result.problems.map((x) => `${x.step}: ${x.message}`).join('; ')}` : ''}`);
    }
    return 0;
  },
};

export const shareCommand: Command = {
  name: 'session share',
  summary: 'write a session as one self-contained, read-only HTML page (secrets and sandbox paths redacted)',
  usage: ['session share <id> --out <file.html>'],
  options: { out: { type: 'string', value: '<file>', help: 'where to write the page' }, ...COMMON },
  connects: true,
  examples: ['fh session share 261122-amber-forest --out notes.html'],
  run: async (p: Parsed, io: Io) => {
    const id = p.positionals[0];
    if (!id || p.positionals.length > 1) throw usage('fh session share needs one <id>: fh session share <id> --out <file.html>');
    const out = str(p, 'out');
    if (!out) throw usage('fh session share needs --out <file.html>');
    if (await fs.stat(out).then((s) => s.isDirectory(), () => false)) throw usage(`--out ${out} is a directory; name the file`);
    const conn = await connect(p);
    try {
      const written = await share().shareSession(conn.client, id, { out });
      if (p.values.json) printJson(io, { id, path: written.path, bytes: Buffer.byteLength(written.html) });
      else io.out(`${id}: wrote ${written.path}`);
      return 0;
    } catch (err) {
      throw asCliError(err);
    } finally {
      await conn.close().catch(() => undefined);
    }
  },
};
