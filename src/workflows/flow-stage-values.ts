/**
 * What the stage handlers make of tool results, replies and attributes: small pure helpers (workflow-safe).
 */
import type { ContextValue, FlowContext } from '../core/flows/context';
import { artifactPointer } from '../core/flows/context';
import type { Entry } from '../core/entries';
import type { ToolCallResult } from '../core/ports';
import type { ToolDefinition } from '../core/tools';

/** A built-in tool as the ports need it: its name (the worker's tool runner has its code). */
export function builtIn(name: string): ToolDefinition {
  return { kind: 'tool', name } as ToolDefinition;
}

/** What a branch produced, without the engine's bookkeeping keys. */
export function visibleUpdates(updates: FlowContext): FlowContext {
  return Object.fromEntries(Object.entries(updates).filter(([k]) => !k.startsWith('internal.') && k !== 'current_node'));
}

export function exitCodeOf(bashResult: string): number | null {
  const m = /^exit code (-?\d+)/.exec(bashResult);
  return m ? Number(m[1]) : null;
}

/** A read_file result as a context value: the text, or the pointer to where it was stored. */
export function valueOf(r: ToolCallResult): ContextValue {
  if (r.artifact) return artifactPointer(r.artifact.ref, r.artifact.bytes);
  return r.isError ? '' : r.content;
}

export function stringOr(v: ContextValue | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Files the prompt's tool calls wrote or edited (after the last time `sent` was the user's message). */
export function filesTouched(entries: readonly Entry[], sent: string): string[] {
  let from = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type === 'user' && e.text === sent) {
      from = i;
      break;
    }
  }
  const files: string[] = [];
  for (const e of entries.slice(from)) {
    if (e.type !== 'assistant') continue;
    for (const b of e.content) {
      if (b.type === 'tool_use' && (b.name === 'write_file' || b.name === 'edit_file')) {
        const p = (b.input as { path?: unknown }).path;
        if (typeof p === 'string' && !files.includes(p)) files.push(p);
      }
    }
  }
  return files;
}

/** An agent node's `input` attribute with every "$prompt" string replaced by the prompt. */
export function substitute(v: unknown, prompt: string): unknown {
  if (v === '$prompt') return prompt;
  if (Array.isArray(v)) return v.map((x) => substitute(x, prompt));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, prompt)]));
  return v;
}
