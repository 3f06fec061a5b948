/**
 * `compaction.memory`: the memory flush's settings. The key names the memory file; it is where
 * separation goes (per agent by default, per user with e.g. `key: 'user-42'`).
 */
import { z } from 'zod';
import { lazySchema } from '../lazy-schema';

export const MEMORY_DEFAULT_MAX_TOKENS = 2000;
/** Keys become store paths (`memory/<key>.json`): nothing that could climb out of that folder. */
const MEMORY_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const memorySettingsSchema = lazySchema(() => z
  .object({
    enabled: z.boolean().optional(),
    /** The memory file's budget in tokens (default 2000); a file that grows past it is compacted. */
    maxTokens: z.number().int().min(100).optional(),
    /** Which memory file (default: the agent's name). */
    key: z.string().regex(MEMORY_KEY, 'must be 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit').optional(),
  })
  .strict());

export type MemorySettings = z.infer<typeof memorySettingsSchema>;

export interface ResolvedMemorySettings {
  key: string;
  maxTokens: number;
}

/** The memory flush's settings when it is on (undefined: off). */
export function resolveMemorySettings(settings: MemorySettings | undefined, agentName: string): ResolvedMemorySettings | undefined {
  if (!settings?.enabled) return undefined;
  return { key: settings.key ?? agentName, maxTokens: settings.maxTokens ?? MEMORY_DEFAULT_MAX_TOKENS };
}
