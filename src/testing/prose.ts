/**
 * Deterministic filler prose for tests and benchmarks: a conversation that grows by known amounts,
 * made of words (not base64) so token counters treat it as text. Pure, no dependencies.
 */
const WORDS = [
  'amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord', 'granite', 'harbor', 'island', 'juniper', 'kelp',
  'lagoon', 'meadow', 'nectar', 'orchid', 'prairie', 'quartz', 'river', 'saffron', 'tundra', 'umber',
  'valley', 'willow', 'xylem', 'yarrow', 'zephyr', 'the', 'and', 'of', 'a', 'in', 'over', 'under',
  'beside', 'quietly', 'slowly', 'bright', 'distant', 'ancient', 'morning', 'evening', 'winter',
];

/** Exactly `chars` ASCII characters (so also bytes) of prose for `step`, the same on every run. */
export function deterministicProse(step: number, chars: number): string {
  let x = Math.imul(step + 1, 2654435761) >>> 0 || 1;
  let text = `Step ${step}.`;
  while (text.length < chars) {
    // xorshift32: cheap, deterministic, spreads consecutive steps apart
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    text += ` ${WORDS[x % WORDS.length]}`;
  }
  return `${text.slice(0, chars - 1)}.`;
}
