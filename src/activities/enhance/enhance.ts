import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { extractIdentifiers } from '../../core/enhance/identifiers';
import { parseWith } from '../../core/validate';
import { callMessages, createAnthropicClient, type ModelConnection } from '../models/anthropic/messages';
import { introText, repoIntro } from './repo-intro';
import type { EnhanceResult, RepoIntro } from '../../core/enhance/types';

export type { EnhanceResult, RepoIntro } from '../../core/enhance/types';
import { MAX_FILES, searchSymbols } from './search';

/**
 * The prompt enhancer: rewrites a draft into a clearer, more specific prompt using the repository it is
 * about — identifiers from the draft looked up with one ripgrep call, a short intro of the repository —
 * and a small model. It always returns a prompt: a step that fails (no ripgrep, a timeout, no
 * package.json, the model) is reported in `problems`, and the rest goes on; without the model the
 * draft comes back with the context appended.
 */
export const enhanceOptionsSchema = z
  .object({
    cwd: z.string().min(1),
    /** Default claude-haiku-4-5 (a small, fast model). */
    model: z.string().min(1).optional(),
    apiKey: z.string().optional(),
    baseURL: z.string().optional(),
    /** The ripgrep binary (default `rg` on PATH). */
    rgPath: z.string().optional(),
    /** The search's hard timeout (default 1,500 ms). */
    searchTimeoutMs: z.number().int().positive().optional(),
    signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal).optional(),
  })
  .strict();

export type EnhanceOptions = z.infer<typeof enhanceOptionsSchema>;


export const DEFAULT_ENHANCER_MODEL = 'claude-haiku-4-5';
const MAX_DRAFT = 20_000;

const SYSTEM = [
  "You rewrite a developer's draft prompt for a coding agent into a clearer, more specific prompt.",
  'Keep the intent and every requirement of the draft. Mention the relevant files and symbols listed in the context by their exact paths and names; never invent files.',
  'Be concise. Answer with the rewritten prompt only: no preamble, no quotes, no explanation.',
].join(' ');

export async function enhancePrompt(draft: string, options: EnhanceOptions): Promise<EnhanceResult> {
  parseWith(z.object({ draft: z.string().trim().min(1).max(MAX_DRAFT) }), { draft }, 'enhancePrompt');
  const opts = parseWith(enhanceOptionsSchema, options, 'enhancePrompt options') as EnhanceOptions;
  const cwd = path.resolve(opts.cwd);
  const problems: EnhanceResult['problems'] = [];
  const symbols = extractIdentifiers(draft);

  const [intro, search] = await Promise.all([
    repoIntro(cwd).catch((err: Error) => {
      problems.push({ step: 'intro', message: err.message });
      return undefined;
    }),
    searchSymbols(symbols, cwd, { rgPath: opts.rgPath, timeoutMs: opts.searchTimeoutMs }),
  ]);
  if (search.status !== 'ok') problems.push({ step: 'search', message: search.message });
  const files = [...new Set([...(await existingPaths(symbols, cwd)), ...search.files])].slice(0, MAX_FILES);
  const attached = { ...(intro ? { intro } : {}), files, symbols };

  const context = contextText(intro, files, symbols);
  try {
    const client = createAnthropicClient(opts as ModelConnection);
    const res = await callMessages(
      client,
      { model: opts.model ?? DEFAULT_ENHANCER_MODEL, maxTokens: 1024, system: SYSTEM, tools: [], entries: [{ type: 'user', text: `${context}\n\n<draft>\n${draft}\n</draft>` }] },
      opts.signal,
    );
    const text = res.entry.content.map((b) => (b.type === 'text' ? b.text : '')).join('').trim();
    if (text) return { prompt: text, rewritten: true, attached, problems };
    problems.push({ step: 'model', message: 'the model answered with no text' });
  } catch (err) {
    problems.push({ step: 'model', message: err instanceof Error ? err.message : String(err) });
  }
  return { prompt: fallbackPrompt(draft, files, symbols), rewritten: false, attached, problems };
}

/** Paths in the draft that exist (relative to cwd, inside it): attached first, whatever ripgrep finds. */
async function existingPaths(symbols: string[], cwd: string): Promise<string[]> {
  const found: string[] = [];
  for (const s of symbols.filter((x) => x.includes('/') || x.includes('.'))) {
    const full = path.resolve(cwd, s);
    if (!full.startsWith(cwd + path.sep)) continue;
    if (await fs.stat(full).then((st) => st.isFile(), () => false)) found.push(path.relative(cwd, full));
  }
  return found;
}

function contextText(intro: RepoIntro | undefined, files: string[], symbols: string[]): string {
  const parts = [
    intro ? `<repository>\n${introText(intro)}\n</repository>` : undefined,
    files.length ? `<files>\n${files.join('\n')}\n</files>` : undefined,
    symbols.length ? `<symbols>\n${symbols.join('\n')}\n</symbols>` : undefined,
  ];
  return parts.filter(Boolean).join('\n\n') || '<repository>(nothing known)</repository>';
}

function fallbackPrompt(draft: string, files: string[], symbols: string[]): string {
  const extra = [files.length ? `Relevant files: ${files.join(', ')}` : undefined, symbols.length ? `Symbols: ${symbols.join(', ')}` : undefined].filter(Boolean);
  return extra.length ? `${draft.trim()}\n\n${extra.join('\n')}` : draft.trim();
}
