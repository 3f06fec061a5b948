/**
 * Server-side compaction (`compact_20260112`) as the fake Anthropic server reproduces it: the edit in a
 * request, the signed `compaction` blocks sent back, and the prompt the model sees after one.
 *
 * Shapes from the SDK's types (@anthropic-ai/sdk 1.12), behaviour from the docs page build-with-
 * claude/compaction, error wording from real 400s quoted in public issues (cited per message); "guessed"
 * or "wording is ours" where we had neither.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { blocksOf } from './fake-anthropic-blocks';
import { signCompaction } from './fake-anthropic-signatures';

/** The compaction edit of a request, if any. */
export function compactEditOf(body: Record<string, any>): Anthropic.Beta.BetaCompact20260112Edit | undefined {
  const edits: any[] = Array.isArray(body.context_management?.edits) ? body.context_management.edits : [];
  return edits.find((e) => e?.type === 'compact_20260112');
}

/**
 * `compaction` blocks sent back: each must carry the signature the fake issued for its content (the
 * SDK's CompactionContentMismatchError / CompactionSignatureInvalidError; error codes from the SDK,
 * message wording ours), at most one may have content (CompactionBlockAmbiguousError). Returns the
 * error, or undefined.
 */
export function checkCompactionBlocks(body: Record<string, any>): { message: string; errorCode: string } | undefined {
  let withContent = 0;
  const msgs = body.messages as any[];
  for (let i = 0; i < msgs.length; i++) {
    const c = blocksOf(msgs[i]);
    for (let j = 0; j < c.length; j++) {
      const b = c[j];
      if (b?.type !== 'compaction') continue;
      const at = `messages.${i}.content.${j}`;
      if (b.content === null || b.content === undefined) continue; // a failed compaction: a no-op (SDK doc)
      if (typeof b.content !== 'string' || b.content.length === 0) return { message: `${at}.compaction.content: String should have at least 1 character`, errorCode: 'invalid_request' };
      withContent++;
      if (typeof b.signature !== 'string' || !b.signature.startsWith('fake_csig_')) {
        return { message: `${at}: Invalid \`signature\` in \`compaction\` block`, errorCode: 'compaction_signature_invalid' };
      }
      if (b.signature !== signCompaction(b.content)) {
        return { message: `${at}: \`compaction\` block content does not match its signature`, errorCode: 'compaction_content_mismatch' };
      }
    }
  }
  if (withContent > 1) return { message: 'messages: more than one `compaction` block with content; send only the last one returned', errorCode: 'compaction_block_ambiguous' };
  return undefined;
}

/**
 * The prompt the model sees after a compaction block: everything before the block is dropped and the
 * block's summary stands in for it (SDK BetaCompactionBlockParam / BetaCompactionConfig docs; where the
 * block may sit is not enforced: guessed).
 */
export function dropBeforeCompaction(body: Record<string, any>): Record<string, any> {
  const msgs = body.messages as any[];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const c = blocksOf(msgs[i]);
    const j = c.findIndex((b) => b?.type === 'compaction' && typeof b.content === 'string');
    if (j >= 0) {
      const summary = { role: 'user', content: [{ type: 'text', text: c[j].content }] };
      const rest = c.slice(j + 1);
      return { ...body, messages: [summary, ...(rest.length > 0 ? [{ ...msgs[i], content: rest }] : []), ...msgs.slice(i + 1)] };
    }
  }
  return body;
}
