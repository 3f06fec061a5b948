import { z } from 'zod';
import { InvalidInputError } from './errors';

/** One problem with an input, by its dotted path. */
export interface InputIssue {
  path: string;
  message: string;
}

/** Parses `value` with a zod schema; on failure throws InvalidInputError naming the first bad field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.flatMap((i) => readableIssues(i as ZodIssueLike));
  throw new InvalidInputError(what, issues[0]?.path ?? '', issues);
}

/**
 * Options whose values are checked where they are used: here only that every key is one of `keys`, so a
 * misspelt key (`timeout` for `timeoutMs`) is named at once instead of being ignored.
 */
export function checkKnownKeys(value: unknown, keys: Readonly<Record<string, true>>, what: string): void {
  if (value === undefined) return;
  parseWith(z.object(anyValueOf(keys)).strict(), value, what);
}

/** A zod shape taking each of `keys` with any value, or none: a strict object's known keys, before its own checks. */
export function anyValueOf(keys: Readonly<Record<string, true>>): Record<string, z.ZodOptional<z.ZodUnknown>> {
  return Object.fromEntries(Object.keys(keys).map((k) => [k, z.unknown().optional()]));
}

/** The parts of a zod 4 issue we read (its union branches among them). */
interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  values?: unknown[];
  errors?: ZodIssueLike[][];
  keys?: string[];
}

/**
 * A union's own message is "Invalid input", which names no allowed value (`sandbox: { type: 'locl' }` said
 * only that). The branch the value's shape matched (its issues lie deeper than the union) says what is wrong
 * inside it; when no branch matched, the message lists what each branch expects.
 */
function readableIssues(issue: ZodIssueLike, prefix: PropertyKey[] = []): InputIssue[] {
  const path = [...prefix, ...issue.path];
  // A misspelt key names itself as the field (`{ timeout: 5 }` is field `timeout`), not the object holding it.
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) return issue.keys.map((k) => ({ path: [...path, k].map(String).join('.'), message: issue.message }));
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return [{ path: path.map(String).join('.'), message: issue.message }];
  const depth = (branch: ZodIssueLike[]) => Math.min(...branch.map((i) => (i.code === 'invalid_union' ? 1 : i.path.length)));
  const matched = issue.errors.filter((b) => b.length > 0 && depth(b) > 0);
  if (matched.length > 0) {
    const best = matched.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    return best.flatMap((i) => readableIssues(i, path));
  }
  const expected = [...new Set(issue.errors.flatMap((b) => b.map(expectation)))].join(' or ');
  const received = issue.errors.flat().map((i) => /received (\w+)/.exec(i.message)?.[1]).find(Boolean);
  return [{ path: path.map(String).join('.'), message: `Invalid input: expected ${expected}${received ? `, received ${received}` : ''}` }];
}

function expectation(issue: ZodIssueLike): string {
  if (issue.values?.length) return issue.values.map((v) => JSON.stringify(v)).join(' or ');
  if (issue.expected) return issue.expected === 'object' ? 'an object' : issue.expected;
  return issue.message.replace(/^Invalid input: expected /, '');
}
