/** "1 tool call", "3 tool calls": a count and its noun, for every message that states one. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
