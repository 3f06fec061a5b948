import type { z } from 'zod';
import { InvalidInputError } from './errors';

/** Parses `value` with a zod schema; on failure throws InvalidInputError naming the first bad field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  throw new InvalidInputError(what, issues[0]?.path ?? '', issues);
}
