/**
 * One registry of error codes (src/core/error-codes.ts): every code src/ gives a FabricError is in it,
 * and every code in it is thrown somewhere (the model-error codes: one per ModelErrorKind). The `fh`
 * exit status of a code comes from the registry.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES, errorCodeInfo } from '../../src/core/error-codes';
import { ModelCallError, RETRYABLE_MODEL_ERRORS } from '../../src/core/errors';
import { EXIT, fabricErrorExit } from '../../src/cli/errors';

const SRC = path.resolve(__dirname, '../../src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Codes given as the first argument of `super(...)` in a FabricError subclass, or of `new FabricError(...)`. */
function thrownCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of sources(SRC)) {
    if (file.endsWith('error-codes.ts')) continue;
    const text = fs.readFileSync(file, 'utf8');
    // The first argument: a code, or a ternary of two codes.
    for (const m of text.matchAll(/(?:super|new FabricError)\(\s*(?:'([A-Z][A-Z0-9_]+)'|[\w.]+ \? '([A-Z][A-Z0-9_]+)' : '([A-Z][A-Z0-9_]+)')/g)) {
      for (const code of m.slice(1)) if (code) codes.add(code);
    }
  }
  return codes;
}

const MODEL_KINDS = ['context_overflow', 'invalid_request', 'authentication', 'permission', 'not_found', ...RETRYABLE_MODEL_ERRORS] as const;
const modelCodes = MODEL_KINDS.map((k) => new ModelCallError(k, 'x').code);

describe('the registry of error codes', () => {
  it('holds exactly the codes src/ throws', () => {
    const thrown = thrownCodes();
    const registered = Object.keys(ERROR_CODES).filter((c) => !modelCodes.includes(c));
    expect([...thrown].filter((c) => !(c in ERROR_CODES)).sort()).toEqual([]);
    expect(registered.filter((c) => !thrown.has(c)).sort()).toEqual([]);
  });

  it('has one code per model-error kind, as ModelCallError makes them', () => {
    expect(modelCodes.filter((c) => errorCodeInfo(c) === undefined)).toEqual([]);
    // MODEL_REFUSAL is ModelRefusalError's (a reply, not a failed call).
    expect(Object.keys(ERROR_CODES).filter((c) => c.startsWith('MODEL_') && c !== 'MODEL_REFUSAL').sort()).toEqual([...modelCodes].sort());
  });

  it('decides how `fh` exits on a code', () => {
    expect(fabricErrorExit('INVALID_INPUT')).toEqual({ exitCode: EXIT.USAGE });
    expect(fabricErrorExit('SESSION_NOT_FOUND')).toEqual({ exitCode: EXIT.NOT_FOUND, hint: 'list sessions with `fh session list --all`' });
    expect(fabricErrorExit('SESSION_CLOSED')).toEqual({ exitCode: EXIT.FAILURE });
    expect(fabricErrorExit('NOT_A_CODE_OF_OURS')).toEqual({ exitCode: EXIT.FAILURE });
  });
});
