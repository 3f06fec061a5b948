/**
 * Session ids: human-friendly slugs `YYMMDD-adjective-noun` (UTC date), or an id the caller chose.
 * Pure and deterministic: the time and the random source are parameters (in workflow code, pass
 * Temporal's replay-safe Date.now and Math.random; elsewhere the real ones).
 */
import { InvalidInputError } from '../errors';
import { describeValue } from './errors';

/** What a session id may look like; it is also the workflow id, so it stays short and plain. */
export const SESSION_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,99}$/;

/** Words for slugs: short, friendly, lowercase a-z only. */
export const SLUG_ADJECTIVES: readonly string[] = [
  'able', 'agile', 'amber', 'ample', 'azure', 'balmy', 'bold', 'brave', 'breezy', 'bright', 'brisk', 'bubbly', 'calm',
  'candid', 'cheery', 'civic', 'clean', 'clear', 'clever', 'cobalt', 'comfy', 'cool', 'cosmic', 'cozy', 'crisp',
  'curious', 'dainty', 'dandy', 'dapper', 'daring', 'deft', 'dewy', 'eager', 'early', 'earnest', 'easy', 'elated',
  'epic', 'fair', 'fancy', 'fast', 'fearless', 'festive', 'fine', 'fluffy', 'fond', 'frank', 'free', 'fresh',
  'friendly', 'frosty', 'gentle', 'giddy', 'gifted', 'glad', 'gleaming', 'glossy', 'golden', 'grand', 'green', 'happy',
  'hardy', 'hearty', 'honest', 'humble', 'ivory', 'jade', 'jazzy', 'jolly', 'jovial', 'joyful', 'keen', 'kind',
  'lively', 'lucky', 'lunar', 'mellow', 'merry', 'mighty', 'mint', 'misty', 'modest', 'neat', 'nimble', 'noble',
  'olive', 'open', 'peachy', 'plucky', 'polite', 'proud', 'quick', 'quiet', 'rapid', 'ready', 'regal', 'rosy', 'royal',
  'ruby', 'rustic', 'sandy', 'sharp', 'shiny', 'silky', 'silver', 'sleek', 'smart', 'snappy', 'snowy', 'solar',
  'sparkly', 'spry', 'steady', 'sturdy', 'sunny', 'super', 'swift', 'tidy', 'tranquil', 'trusty', 'upbeat', 'valiant',
  'vivid', 'warm', 'wise', 'witty', 'zesty', 'zippy',
];

export const SLUG_NOUNS: readonly string[] = [
  'acorn', 'anchor', 'apple', 'arrow', 'aspen', 'aurora', 'badger', 'bamboo', 'beacon', 'bear', 'beaver', 'birch',
  'bison', 'bloom', 'breeze', 'brook', 'cactus', 'canyon', 'cedar', 'cherry', 'cliff', 'cloud', 'clover', 'comet',
  'cove', 'crane', 'creek', 'crystal', 'daisy', 'delta', 'dolphin', 'dove', 'dune', 'eagle', 'echo', 'ember', 'falcon',
  'fern', 'finch', 'fjord', 'flame', 'forest', 'fox', 'galaxy', 'garden', 'gecko', 'glacier', 'glade', 'grove',
  'harbor', 'hawk', 'hazel', 'heron', 'hill', 'island', 'jasmine', 'kite', 'koala', 'lagoon', 'lake', 'lark', 'leaf',
  'lemon', 'lily', 'lotus', 'lynx', 'maple', 'meadow', 'meteor', 'mesa', 'moon', 'moss', 'nebula', 'nova', 'oak',
  'oasis', 'ocean', 'orbit', 'orchid', 'otter', 'owl', 'panda', 'pebble', 'pine', 'planet', 'plum', 'pond', 'poppy',
  'prairie', 'puffin', 'quartz', 'rabbit', 'rain', 'raven', 'reef', 'ridge', 'river', 'robin', 'rocket', 'sage',
  'sparrow', 'spruce', 'star', 'stone', 'stream', 'summit', 'sun', 'swan', 'thistle', 'tiger', 'trail', 'tulip',
  'valley', 'violet', 'wave', 'willow', 'wind', 'wolf', 'wren', 'zephyr',
];

/**
 * A fresh slug such as `260111-swift-river`. `random` returns numbers in [0, 1), like Math.random; a
 * collision is the caller's to resolve by asking again (another draw), never an error.
 */
export function sessionSlug(nowMs: number, random: () => number): string {
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) {
    throw new InvalidInputError('session slug time', 'nowMs', [{ path: 'nowMs', message: `expected epoch milliseconds, got ${describeValue(nowMs)}` }]);
  }
  if (typeof random !== 'function') {
    throw new InvalidInputError('session slug random source', 'random', [{ path: 'random', message: 'expected a function like Math.random' }]);
  }
  return `${slugDate(nowMs)}-${pick(SLUG_ADJECTIVES, random)}-${pick(SLUG_NOUNS, random)}`;
}

/** `YYMMDD` of an instant, in UTC (so every worker and client agrees on the date). */
export function slugDate(nowMs: number): string {
  const d = new Date(nowMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}`;
}

// A source that strays outside [0, 1) (or returns NaN) is clamped rather than trusted to index the list.
function pick(words: readonly string[], random: () => number): string {
  const r = random();
  const i = Number.isFinite(r) ? Math.floor(r * words.length) : 0;
  return words[Math.min(words.length - 1, Math.max(0, i))]!;
}

/** A session id given by a caller: a string matching SESSION_ID_PATTERN, else INVALID_INPUT naming `id`. */
export function parseSessionId(id: unknown): string {
  if (typeof id === 'string' && SESSION_ID_PATTERN.test(id)) return id;
  const message =
    typeof id !== 'string'
      ? `expected a string, got ${describeValue(id)}`
      : `'${id.length > 40 ? `${id.slice(0, 40)}…` : id}' must be 1-100 characters of a-z, 0-9 and '-', starting with a letter or digit`;
  throw new InvalidInputError('session id', 'id', [{ path: 'id', message }]);
}
