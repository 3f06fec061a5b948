/**
 * Session labels: a name with an optional typed value (`urgent`, `priority=2`, `area=billing`,
 * `done=true`). In search they are the FhLabels keyword list: each label as `name`, and valued ones also
 * as `name=value`, so a query can ask for a label with or without its value.
 */
import { InvalidLabelError, describeValue } from './errors';

export type LabelValue = string | number | boolean;
/** A session's labels by name; null is a label without a value. */
export type Labels = Record<string, LabelValue | null>;

export interface Label {
  name: string;
  value: LabelValue | null;
}

export const LABEL_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/i;
export const LABEL_VALUE_MAX_CHARS = 200;

/**
 * A label from its parts: the name matches LABEL_NAME_PATTERN; the value is a non-empty one-line string
 * of at most 200 characters, a finite number, a boolean, or absent (undefined or null). Else
 * INVALID_LABEL, with field `label` (the name) or `label.value`.
 */
export function parseLabel(name: unknown, value?: unknown): Label {
  if (typeof name !== 'string') throw new InvalidLabelError('label', `expected a label name (a string), got ${describeValue(name)}`);
  if (!LABEL_NAME_PATTERN.test(name)) {
    throw new InvalidLabelError(
      'label',
      `'${name.length > 70 ? `${name.slice(0, 70)}…` : name}' must be 1-64 characters of letters, digits, '_', '.' and '-', starting with a letter or digit`,
      name,
    );
  }
  return { name, value: parseLabelValue(name, value) };
}

function parseLabelValue(name: string, value: unknown): LabelValue | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidLabelError('label.value', `a number value must be finite, got ${value}`, name);
    return value;
  }
  if (typeof value !== 'string') {
    throw new InvalidLabelError('label.value', `expected a string, number or boolean, got ${describeValue(value)}`, name);
  }
  if (value === '') throw new InvalidLabelError('label.value', 'a string value must not be empty (leave the value out for a plain label)', name);
  if (value.length > LABEL_VALUE_MAX_CHARS) {
    throw new InvalidLabelError('label.value', `a string value is at most ${LABEL_VALUE_MAX_CHARS} characters, got ${value.length}`, name);
  }
  if (/[\p{Cc}]/u.test(value)) throw new InvalidLabelError('label.value', 'a string value is one line, without control characters', name);
  return value;
}

// Text that reads back as a number: plain decimal notation only ('0x10', ' 2', '' and 'Infinity' stay text).
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:e[+-]?\d+)?$/i;

/** A value written as text (CLI argument, search keyword): `true`/`false` and numbers are typed. */
function typedValue(text: string): LabelValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (NUMBER_TEXT.test(text) && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/** A label from the CLI: `urgent`, `priority=2` (number), `done=true` (boolean), `area=billing` (string). */
export function parseLabelArg(arg: string): Label {
  if (typeof arg !== 'string') throw new InvalidLabelError('label', `expected 'name' or 'name=value', got ${describeValue(arg)}`);
  const eq = arg.indexOf('=');
  if (eq < 0) return parseLabel(arg.trim());
  return parseLabel(arg.slice(0, eq).trim(), typedValue(arg.slice(eq + 1)));
}

/** The FhLabels search attribute: every label as `name`, valued ones also as `name=value`; sorted. */
export function labelKeywords(labels: Labels): string[] {
  const keywords: string[] = [];
  for (const [rawName, rawValue] of Object.entries(labels)) {
    const { name, value } = parseLabel(rawName, rawValue);
    keywords.push(name);
    if (value !== null) keywords.push(`${name}=${String(value)}`);
  }
  return keywords.sort();
}

/**
 * Labels back from their keywords (the inverse of labelKeywords). Values come back typed as text
 * reads: a string value that looks like a number or boolean ('2', 'true') returns as one.
 */
export function labelsFromKeywords(list: readonly string[]): Labels {
  const labels: Labels = {};
  for (const keyword of list) {
    if (typeof keyword !== 'string') continue;
    const eq = keyword.indexOf('=');
    const name = eq < 0 ? keyword : keyword.slice(0, eq);
    // Not ours (another writer of the attribute): skipped rather than failing a listing.
    if (!LABEL_NAME_PATTERN.test(name)) continue;
    if (eq >= 0) labels[name] = typedValue(keyword.slice(eq + 1));
    else if (!Object.hasOwn(labels, name)) labels[name] = null;
  }
  return labels;
}

/** The labels with one added or replaced (a new object). */
export function withLabel(labels: Labels, label: Label): Labels {
  const { name, value } = parseLabel(label?.name, label?.value);
  return { ...labels, [name]: value };
}

/** The labels without `name` (a new object; unchanged content when it was not there). */
export function withoutLabel(labels: Labels, name: string): Labels {
  const { [name]: _removed, ...rest } = labels;
  return rest;
}
