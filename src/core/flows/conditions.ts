/**
 * Edge conditions: clauses `key op value` joined by `&&` and `||` (`&&` binds tighter), with the
 * operators `=`, `!=`, `>=`, `<=`, `>`, `<`. A key may carry the optional `context.` prefix
 * (`tests_passed` and `context.tests_passed` are the same key); `outcome` is the last stage's status.
 * Both sides numeric: compared as numbers; else as text (`true` matches the boolean true).
 */
import { FlowConditionError } from './errors';

export type Operator = '=' | '!=' | '>=' | '<=' | '>' | '<';

export interface Clause {
  key: string;
  op: Operator;
  value: string;
}

/** Disjunction of conjunctions: `[[a, b], [c]]` is `a && b || c`. */
export type Condition = Clause[][];

const CLAUSE = /^\s*([A-Za-z_][\w.\-]*)\s*(!=|>=|<=|=|>|<)\s*(.*?)\s*$/;

export function parseCondition(text: string): Condition {
  if (text.trim() === '') throw new FlowConditionError(text, 'it is empty');
  return text.split('||').map((alt) =>
    alt.split('&&').map((part) => {
      const m = CLAUSE.exec(part);
      if (!m) throw new FlowConditionError(text, `'${part.trim()}' is not 'key op value' (op one of = != >= <= > <)`);
      const value = unquote(m[3]!);
      if (value === '' && m[3]!.trim() === '') throw new FlowConditionError(text, `'${part.trim()}' has no value`);
      if (/[=<>!]/.test(value) && !/^["']/.test(m[3]!)) throw new FlowConditionError(text, `'${part.trim()}' has more than one operator`);
      return { key: normalizeKey(m[1]!), op: m[2] as Operator, value };
    }),
  );
}

/** `context.x` and `x` are the same key. */
export function normalizeKey(key: string): string {
  return key.startsWith('context.') ? key.slice('context.'.length) : key;
}

/** The keys a condition reads (after normalising), for validation. */
export function conditionKeys(cond: Condition): Clause[] {
  return cond.flat();
}

export function evaluateCondition(cond: Condition, lookup: (key: string) => unknown): boolean {
  return cond.some((all) => all.every((c) => compare(lookup(c.key), c.op, c.value)));
}

function compare(actual: unknown, op: Operator, expected: string): boolean {
  const a = asText(actual);
  const an = Number(a);
  const en = Number(expected);
  const numeric = a !== '' && expected !== '' && Number.isFinite(an) && Number.isFinite(en);
  switch (op) {
    case '=':
      return numeric ? an === en : a === expected;
    case '!=':
      return numeric ? an !== en : a !== expected;
    case '>=':
      return numeric ? an >= en : a >= expected;
    case '<=':
      return numeric ? an <= en : a <= expected;
    case '>':
      return numeric ? an > en : a > expected;
    case '<':
      return numeric ? an < en : a < expected;
  }
}

function asText(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function unquote(s: string): string {
  const t = s.trim();
  return (t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")) ? t.slice(1, -1) : t;
}
