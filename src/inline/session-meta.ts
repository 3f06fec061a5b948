/**
 * What an inline session derives on its own: a fresh id, a title from the first message, and the
 * automatic status transitions. (The Temporal session host derives the same things; the title here is
 * the no-model fallback.)
 */
import { randomInt } from 'node:crypto';

export type StatusEvent = 'user-message' | 'turn-done';

/** new → todo; a user message → in-progress (from todo or needs-review); turn done → needs-review (from in-progress). */
export function statusAfter(status: string, event: StatusEvent): string {
  if (event === 'user-message' && (status === 'todo' || status === 'needs-review')) return 'in-progress';
  if (event === 'turn-done' && status === 'in-progress') return 'needs-review';
  return status; // done, cancelled and custom statuses do not move by themselves
}

const MAX_TITLE_WORDS = 5;
const MAX_TITLE_CHARS = 60;

/** The first words of the first message, with nothing a file name or a terminal would trip on. */
export function fallbackTitle(firstMessage: string): string {
  const words = firstMessage
    .replace(/[^\p{L}\p{N}'\- ]+/gu, ' ')
    .split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, MAX_TITLE_WORDS);
  let title = '';
  for (const w of words) {
    const next = title ? `${title} ${w}` : w;
    if (next.length > MAX_TITLE_CHARS) break;
    title = next;
  }
  return title || 'Untitled session';
}

const ADJECTIVES = [
  'amber', 'bold', 'brave', 'bright', 'calm', 'clever', 'cosy', 'crisp', 'daring', 'eager', 'fair', 'fancy', 'gentle', 'glad',
  'golden', 'happy', 'honest', 'humble', 'jolly', 'keen', 'kind', 'lively', 'lucky', 'merry', 'mighty', 'nimble', 'noble',
  'patient', 'polite', 'proud', 'quick', 'quiet', 'rapid', 'ready', 'silver', 'smart', 'steady', 'sunny', 'swift', 'tidy',
  'vivid', 'warm', 'wise', 'witty', 'young', 'zesty',
];
const NOUNS = [
  'badger', 'beacon', 'birch', 'brook', 'canyon', 'cedar', 'comet', 'coral', 'crane', 'delta', 'dune', 'falcon', 'fern',
  'fjord', 'glacier', 'harbor', 'heron', 'island', 'lagoon', 'lantern', 'maple', 'meadow', 'mesa', 'nebula', 'orchid',
  'otter', 'pebble', 'pine', 'prairie', 'quartz', 'raven', 'reef', 'ridge', 'river', 'sparrow', 'spruce', 'summit',
  'thicket', 'tundra', 'valley', 'willow', 'wren',
];

/** `YYMMDD-adjective-noun` (UTC date); callers retry on a collision. */
export function sessionSlug(now: number, pick: (n: number) => number = randomInt): string {
  const d = new Date(now);
  const date = [d.getUTCFullYear() % 100, d.getUTCMonth() + 1, d.getUTCDate()].map((n) => String(n).padStart(2, '0')).join('');
  return `${date}-${ADJECTIVES[pick(ADJECTIVES.length)]}-${NOUNS[pick(NOUNS.length)]}`;
}
